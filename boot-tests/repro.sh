#!/bin/bash
# boot-tests/repro.sh: is the ISO reproducible? Two clean clones of this
# repository's HEAD, in two different folders, each build `make iso` from
# scratch (kernel, root tree, image, initramfs, ISO) with the same
# SOURCE_DATE_EPOCH (the commit's time); their ISOs must be the same bytes. On a
# difference, diffoscope (if installed) or a file-by-file comparison says where.
# TAP, last line "N passed, N failed". Takes two kernel builds (ccache makes the
# second fast: CCACHE_BASEDIR is each clone). Environment: BUILD, ROOTFS (busybox).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TOP=${TOP:-$(dirname "$here")}
export BUILD=${BUILD:-$TOP/build}
# shellcheck disable=SC1091 # lib.sh, beside this script
source "$here/lib.sh"
rootfs=${ROOTFS:-busybox}
dir=$BUILD/repro
rm -rf "$dir"
mkdir -p "$dir"
commit=$(git -C "$TOP" rev-parse HEAD)
tap_diag "reproducibility of make iso ROOTFS=$rootfs at $commit (SOURCE_DATE_EPOCH $(git -C "$TOP" log -1 --format=%ct))"
[[ -z $(git -C "$TOP" status --porcelain --untracked-files=no) ]] ||
	tap_diag "the work tree has uncommitted changes: the clones build HEAD without them"

for c in a b; do
	start=$SECONDS
	rc=0
	# a clean environment: nothing of this run's (BUILD, TOP, make's variables) leaks in
	git clone -q --no-hardlinks "$TOP" "$dir/$c" >"$dir/$c.log" 2>&1 &&
		env -i PATH="$PATH" HOME="$HOME" LANG=C.UTF-8 \
			make -C "$dir/$c" --no-print-directory iso ROOTFS="$rootfs" >>"$dir/$c.log" 2>&1 || rc=$?
	if ((rc == 0)); then
		tap_ok "clone $c ($dir/$c): make iso ROOTFS=$rootfs from scratch ($((SECONDS - start)) s)"
	else
		mapfile -t lines < <(tail -n 8 "$dir/$c.log")
		tap_notok "clone $c ($dir/$c): make iso ROOTFS=$rootfs from scratch (exit $rc, log $dir/$c.log)" "${lines[@]}"
	fi
done

a=$dir/a/build/livesquash-$rootfs.iso
b=$dir/b/build/livesquash-$rootfs.iso
same() { cmp -s "$a" "$b"; }
if [[ -f $a && -f $b ]] && same; then
	tap_ok "the two ISOs are the same bytes: sha256 $(sha256sum <"$a" | cut -d' ' -f1)"
else
	# where they differ: diffoscope if there, else each file of the ISOs and the
	# pieces of the build
	if command -v diffoscope >/dev/null && [[ -f $a && -f $b ]]; then
		diffoscope --text "$dir/diffoscope.txt" "$a" "$b" >/dev/null 2>&1 || true
	else
		for p in kobj-6.12/arch/x86/boot/bzImage initramfs/initrd.img "iso/$rootfs/tree/LiveOS/squashfs.img"; do
			cmp -s "$dir/a/build/$p" "$dir/b/build/$p" || echo "differs: build/$p"
		done >"$dir/diffoscope.txt"
	fi
	mapfile -t lines < <(head -n 30 "$dir/diffoscope.txt" 2>/dev/null)
	tap_notok "the two ISOs are the same bytes ($dir/diffoscope.txt)" "${lines[@]}"
fi
tap_summary
((LS_FAIL == 0))
