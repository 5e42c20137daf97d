#!/bin/bash
# boot-tests/dmsquash-initrd.sh CACHE-DIR: print the path of an initrd whose live
# module is dracut's own dmsquash-live (Fedora's live boot logic: root=live:,
# rd.live.check with checkisomd5, rd.live.overlay.overlayfs=1), without systemd and
# kernel modules (our kernel has everything built in), zstd. Built once with dracut
# and cached in CACHE-DIR under a key of dracut's version, the module's files and
# checkisomd5's presence. The peer of our module in `make bench-live` and the
# distribution-logic boot of the remaster tests.
set -euo pipefail

cache=${1:?usage: dmsquash-initrd.sh CACHE-DIR}
mod=/usr/lib/dracut/modules.d/90dmsquash-live
[[ -d $mod ]] || {
	echo "dmsquash-initrd: $mod missing: run 'make deps' (dracut-live)" >&2
	exit 1
}
key=$( {
	dracut --version 2>/dev/null
	cat "$mod"/*
	command -v checkisomd5 || true
	echo v2
} | sha256sum | cut -c1-16)
out=$cache/initrd-dmsquash-$key.img
if [[ ! -s $out ]]; then
	mkdir -p "$cache/empty-confdir"
	echo "# building the dmsquash-live initrd (dracut)" >&2
	if ! dracut --force --no-hostonly --no-hostonly-cmdline --no-early-microcode \
		--conf /dev/null --confdir "$cache/empty-confdir" \
		-m "base udev-rules dmsquash-live" -o "systemd systemd-initrd dracut-systemd" \
		--no-kernel --zstd "$out.tmp" >"$cache/dracut.log" 2>&1; then
		rm -f "$out.tmp"
		echo "dmsquash-initrd: dracut failed: $(tail -n 5 "$cache/dracut.log" | tr '\n' '|')" >&2
		exit 1
	fi
	chmod 0644 "$out.tmp"
	mv "$out.tmp" "$out"
fi
echo "$out"
