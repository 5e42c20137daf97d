#!/usr/bin/env bash
# Debian's own kernel of a suite (linux-image-amd64 of trixie, trixie-backports or
# forky: its vmlinuz and its modules, the stock squashfs.ko among them) and a tree
# to build modules that load into it: fetched into DEST with trixie.sh (never
# installed), then OBJ is prepared from that release's linux-source (SRC) with the
# exact .config and Module.symvers of Debian's linux-headers package and its
# release string, so that fs-squashfs/ built against OBJ is a module of that very
# kernel. --headers-only fetches no kernel image (a tree to compile against).
#
# The host's compiler is not Debian 13's (gcc 12, not 14): olddefconfig then
# changes the symbols that describe the toolchain, and no other. Any other
# difference (a struct laid out differently) fails here, naming the symbols,
# rather than in a guest. Needs pahole (dwarves): Debian's kernel has BTF,
# which puts fields into struct module.
#
# usage: debian-kernel.sh [--headers-only] SUITE DEST SRC OBJ
# Writes DEST/kver (e.g. 6.12.117+deb13-amd64) and DEST/root/{boot,usr/lib/modules}.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image=1
if [[ ${1:-} == --headers-only ]]; then
	image=
	shift
fi
(($# == 4)) || { echo "usage: debian-kernel.sh [--headers-only] SUITE DEST SRC OBJ" >&2; exit 2; }
suite=$1 dest=$(realpath -m "$2") src=$(realpath "$3") obj=$(realpath -m "$4")
die() { echo "debian-kernel ($suite): $*" >&2; exit 1; }
fetch() { bash "$here/trixie.sh" --suite "$suite" "$@"; }

deps=$(fetch --depends "$dest" linux-image-amd64)
img=$(grep -m1 -E '^linux-image-[0-9]' <<<"$deps") ||
	die "linux-image-amd64 of $suite depends on no kernel image ($(echo "$deps" | tr '\n' ' '))"
kver=${img#linux-image-}
pkgs=("linux-headers-$kver")
if [[ -n $image ]]; then
	# 6.12: one package; 7.x: linux-image-KVER is a meta package of
	# linux-binary-KVER (vmlinuz) and linux-modules-KVER
	mapfile -t parts < <(fetch --depends "$dest" "$img" |
		grep -xF -e "linux-binary-$kver" -e "linux-modules-$kver" || true)
	pkgs+=("$img" "${parts[@]}")
fi
fetch "$dest" "${pkgs[@]}"
# 7.x ships the kernel as /usr/lib/modules/KVER/vmlinuz (linux-binary-KVER):
# /boot/vmlinuz-KVER, where 6.12's is, becomes a link to it
if [[ -n $image && ! -e $dest/root/boot/vmlinuz-$kver && -f $dest/root/usr/lib/modules/$kver/vmlinuz ]]; then
	mkdir -p "$dest/root/boot"
	ln -s "../usr/lib/modules/$kver/vmlinuz" "$dest/root/boot/vmlinuz-$kver"
fi
[[ -z $image || ( -f $dest/root/boot/vmlinuz-$kver && -d $dest/root/usr/lib/modules/$kver/kernel ) ]] ||
	die "$img of $suite gave no /boot/vmlinuz-$kver and modules (packages: ${pkgs[*]})"
hdr=$dest/root/usr/src/linux-headers-$kver
[[ -f $hdr/.config && -f $hdr/Module.symvers ]] || die "linux-headers-$kver has no .config or Module.symvers"

srcver=$(make -s -C "$src" kernelversion)
[[ ${kver%%+*} == "$srcver" ]] ||
	die "the linux-source is $srcver but Debian's kernel is $kver: the $suite suite is between two updates, try again later"
command -v pahole >/dev/null || die "pahole is missing (make deps installs dwarves): Debian's kernel has BTF"

rm -rf "$obj" && mkdir -p "$obj"
cp "$hdr/.config" "$obj/.config"
# the certificates are built into Debian's vmlinux, not needed for modules
"$src/scripts/config" --file "$obj/.config" --set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS ""
echo "debian-kernel: modules_prepare for $kver in $obj"
env -u BLOCK_SIZE -u BLOCKSIZE make -s -C "$src" O="$obj" KERNELRELEASE="$kver" olddefconfig modules_prepare
cp "$hdr/Module.symvers" "$obj/Module.symvers"

# what olddefconfig changed besides the toolchain's own symbols, stock
# squashfs's options (our fs-squashfs/Kconfig stands in its place in SRC) and
# options that were off and are now absent. 7.x: the host has no rustc and an
# older OpenSSL, so Rust and the drivers written in it (two PHYs, the DRM panic
# QR code) and OpenSSL's ML-DSA go; none of them is in a struct a filesystem
# module touches, and the symbols' CRCs come from Debian's Module.symvers.
toolchain='^[-+ ](CC_|GCC_|AS_|LD_|PAHOLE_|RUSTC_|RUST_|RUST |BINDGEN_|OPENSSL_SUPPORTS_|X86_NATIVE_CPU |BUILD_SALT|MODULE_SIG_KEY |SYSTEM_TRUSTED_KEYS |SYSTEM_REVOCATION_KEYS |TOOLS_SUPPORT_|SQUASHFS_)|^-(AMCC_QT2025_PHY|AX88796B_RUST_PHY|DRM_PANIC_SCREEN_QR_[A-Z_]+) |^-[A-Z0-9_]+ n$'
other=$("$src/scripts/diffconfig" "$hdr/.config" "$obj/.config" | grep -Ev "$toolchain" || true)
[[ -z $other ]] || die "the module tree's config differs from Debian's beyond the toolchain: $(echo "$other" | tr '\n' ' ')"
[[ $(cat "$obj/include/config/kernel.release") == "$kver" ]] || die "the module tree's release is not $kver"
echo "$kver" >"$dest/kver"
echo "debian-kernel: Debian's $suite kernel $kver in $dest/root, modules built against $obj load into it"
