#!/bin/bash
# boot-tests/dmsquash-initrd.sh [--dracut106|--livenet] CACHE-DIR [KVER]: print the path of an initrd whose
# live module is dracut's own dmsquash-live (Fedora's live boot logic: root=live:,
# rd.live.check with checkisomd5, rd.live.overlay.overlayfs=1), without systemd, zstd.
# Without KVER it has no kernel modules (our kernel has everything built in): the
# peer of our module in `make bench-live` and the distribution-logic boot of the
# remaster tests. With KVER (a Debian kernel here, /lib/modules/KVER) it is what a
# user of that kernel gets from `dracut --no-hostonly`: every block, CD and USB
# storage driver (dracut's kernel-modules), squashfs, overlay, loop and isofs
# (dmsquash-live's), and qemu_fw_cfg (the benchmark's hook reads its script from it;
# boot with rd.driver.pre=qemu_fw_cfg): bench-live's peer (b), Debian's kernel with
# its stock squashfs.ko. Built once with dracut and cached in CACHE-DIR under a key
# of dracut's version, the module's files, checkisomd5's presence and KVER.
# --dracut106 (no KVER): Debian 13's dracut-ng instead of the host's 059, made by
# iso/mkinitramfs.sh in its trixie tree; its dmsquash-live also boots EROFS roots.
# --livenet (implies --dracut106): also dracut's livenet and network modules, for
# root=live:http://... (bench-live's network peer).
set -euo pipefail

d106='' mods106="base udev-rules dmsquash-live" name106=initrd-dmsquash
case ${1:-} in
--dracut106) d106=1 && shift ;;
--livenet) d106=1 mods106="$mods106 livenet network" name106=initrd-livenet && shift ;;
esac
cache=${1:?usage: dmsquash-initrd.sh [--dracut106|--livenet] CACHE-DIR [KVER]}
kver=${2:-}
if [[ -n $d106 ]]; then
	[[ -z $kver ]] || { echo "dmsquash-initrd: --dracut106 is for our kernel only (no KVER)" >&2; exit 1; }
	out=$cache/dracut106/$name106.img
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	mkdir -p "$cache/dracut106"
	DRACUT=106 SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600} MODULES="$mods106" \
		bash "$here/../iso/mkinitramfs.sh" "$out" - >"$cache/dracut106/$name106.log" 2>&1 || {
		echo "dmsquash-initrd: dracut 106 failed: $(tail -n 5 "$cache/dracut106/$name106.log" | tr '\n' '|')" >&2
		exit 1
	}
	echo "$out"
	exit 0
fi
mod=/usr/lib/dracut/modules.d/90dmsquash-live
[[ -d $mod ]] || {
	echo "dmsquash-initrd: $mod missing: run 'make deps' (dracut-live)" >&2
	exit 1
}
key=$( {
	dracut --version 2>/dev/null
	cat "$mod"/*
	command -v checkisomd5 || true
	echo "v2 $kver"
} | sha256sum | cut -c1-16)
out=$cache/initrd-dmsquash-$key.img
kopt=(--no-kernel)
mods="base udev-rules dmsquash-live"
if [[ -n $kver ]]; then
	[[ -d /lib/modules/$kver ]] || {
		echo "dmsquash-initrd: no /lib/modules/$kver" >&2
		exit 1
	}
	out=$cache/initrd-dmsquash-$kver-$key.img
	kopt=(--kver "$kver" --add-drivers qemu_fw_cfg)
	mods="$mods kernel-modules"
fi
if [[ ! -s $out ]]; then
	mkdir -p "$cache/empty-confdir"
	echo "# building the dmsquash-live initrd (dracut)" >&2
	if ! dracut --force --no-hostonly --no-hostonly-cmdline --no-early-microcode \
		--conf /dev/null --confdir "$cache/empty-confdir" \
		-m "$mods" -o "systemd systemd-initrd dracut-systemd" \
		"${kopt[@]}" --zstd "$out.tmp" >"$cache/dracut.log" 2>&1; then
		rm -f "$out.tmp"
		echo "dmsquash-initrd: dracut failed: $(tail -n 5 "$cache/dracut.log" | tr '\n' '|')" >&2
		exit 1
	fi
	chmod 0644 "$out.tmp"
	mv "$out.tmp" "$out"
fi
echo "$out"
