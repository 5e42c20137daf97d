#!/usr/bin/env bash
# Debian 13's own kernel (linux-image-amd64 of the trixie suite: its vmlinuz and
# its modules, the stock squashfs.ko among them) and a tree to build modules
# that load into it: fetched into DEST with trixie.sh (never installed), then
# OBJ is prepared from linux-source-6.12 (SRC) with the exact .config and
# Module.symvers of Debian's linux-headers package and its release string, so
# that fs-squashfs/ built against OBJ is a module of that very kernel.
#
# The host's compiler is not Debian 13's (gcc 12, not 14): olddefconfig then
# changes the symbols that describe the toolchain, and no other. Any other
# difference (a struct laid out differently) fails here, naming the symbols,
# rather than in a guest. Needs pahole (dwarves): Debian's kernel has BTF,
# which puts fields into struct module.
#
# usage: debian-6.12.sh DEST SRC OBJ
# Writes DEST/kver (e.g. 6.12.117+deb13-amd64) and DEST/root/{boot,usr/lib/modules}.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
(($# == 3)) || { echo "usage: debian-6.12.sh DEST SRC OBJ" >&2; exit 2; }
dest=$(realpath -m "$1") src=$(realpath "$2") obj=$(realpath -m "$3")
die() { echo "debian-6.12: $*" >&2; exit 1; }

img=$(bash "$here/trixie.sh" --depends "$dest" linux-image-amd64)
[[ $img =~ ^linux-image-[0-9][^[:space:]]*$ ]] || die "linux-image-amd64 of trixie depends on '$img', not a kernel image"
kver=${img#linux-image-}
bash "$here/trixie.sh" "$dest" "$img" "linux-headers-$kver"
hdr=$dest/root/usr/src/linux-headers-$kver
[[ -f $hdr/.config && -f $hdr/Module.symvers ]] || die "linux-headers-$kver has no .config or Module.symvers"

srcver=$(make -s -C "$src" kernelversion)
[[ ${kver%%+*} == "$srcver" ]] ||
	die "linux-source-6.12 is $srcver but Debian's kernel is $kver: the trixie suite is between two updates, try again later"
command -v pahole >/dev/null || die "pahole is missing (make deps installs dwarves): Debian's kernel has BTF"

rm -rf "$obj" && mkdir -p "$obj"
cp "$hdr/.config" "$obj/.config"
# the certificates are built into Debian's vmlinux, not needed for modules
"$src/scripts/config" --file "$obj/.config" --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS ""
echo "debian-6.12: modules_prepare for $kver in $obj"
env -u BLOCK_SIZE -u BLOCKSIZE make -s -C "$src" O="$obj" KERNELRELEASE="$kver" olddefconfig modules_prepare
cp "$hdr/Module.symvers" "$obj/Module.symvers"

# what olddefconfig changed besides the toolchain's own symbols, stock
# squashfs's options (our fs-squashfs/Kconfig stands in its place in SRC) and
# options that were off and are now absent
toolchain='^[-+ ](CC_|GCC_|AS_|LD_|PAHOLE_|RUSTC_|RUST_|BUILD_SALT|MODULE_SIG_KEY |SYSTEM_TRUSTED_KEYS |SYSTEM_REVOCATION_KEYS |TOOLS_SUPPORT_|SQUASHFS_)|^-[A-Z0-9_]+ n$'
other=$("$src/scripts/diffconfig" "$hdr/.config" "$obj/.config" | grep -Ev "$toolchain" || true)
[[ -z $other ]] || die "the module tree's config differs from Debian's beyond the toolchain: $(echo "$other" | tr '\n' ' ')"
[[ $(cat "$obj/include/config/kernel.release") == "$kver" ]] || die "the module tree's release is not $kver"
echo "$kver" >"$dest/kver"
echo "debian-6.12: Debian's kernel $kver in $dest/root, modules built against $obj load into it"
