#!/bin/bash
# boot-tests/lint.sh: the static checks, as TAP ending with "N passed, N failed":
#   ShellCheck  every shell script of the project (*.sh, iso/remaster, iso/check-iso,
#               .ci/run; the dialect from each #! line), one test per script
#   checkpatch  the kernel's scripts/checkpatch.pl --strict on every fs-squashfs/ file
#               (needs the kernel tree: make kernel-tree)
#   sparse, W=1 fs-squashfs/ built as a module against Debian's headers with C=2
#               (sparse on every file) and W=1, in build/lint/: no warning; the same
#               against Debian 13's 6.12 tree (make kernel-tree-6.12) and the 7.x
#               trees of trixie-backports and forky (make kernel-tree-backports, kernel-tree-forky)
# Environment: TOP, BUILD (make passes them).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TOP=${TOP:-$(dirname "$here")}
export BUILD=${BUILD:-$TOP/build}
# shellcheck disable=SC1091 # lib.sh, beside this script
source "$here/lib.sh"
cd "$TOP"

# every *.sh, and every other file whose first line is a sh or bash shebang
# (iso/remaster, iso/check-iso, iso/mkpersist, .ci/run, the hook's scripts ...)
mapfile -t scripts < <({
	find . -path ./build -prune -o -path ./.git -prune -o -type f -name '*.sh' -print
	find . -path ./build -prune -o -path ./.git -prune -o -type f ! -name '*.sh' -print |
		while read -r f; do
			head -n 1 "$f" 2>/dev/null | grep -qE '^#! ?(/usr)?/bin/(env )?(ba)?sh( |$)' && echo "$f"
		done
} | LC_ALL=C sort)
for f in "${scripts[@]}"; do
	tap_test "shellcheck ${f#./}" shellcheck "$f"
done

# checkpatch runs in the kernel tree (fs/squashfs is fs-squashfs/ there), where it
# knows the kernel's own names (zlib_inflateInit is not our CamelCase): the newest
# there is, trixie-backports' 7.x (make kernel-tree-backports, which make check makes
# first), else Debian 13's 6.12, else Debian 12's 6.1
for ksrc in "$BUILD/trixie-backports/linux-source" "$BUILD/trixie/linux-source-6.12" "$BUILD/linux-source-6.1"; do
	[[ ! -x $ksrc/scripts/checkpatch.pl ]] || break
done
mapfile -t csrc < <(cd fs-squashfs && find . -name '*.[ch]' | LC_ALL=C sort)
# compat.h is the driver's one place that tests the kernel's version (6.1 to 7.x
# from one source): checkpatch's LINUX_VERSION_CODE rule, meant for code merged into
# one kernel, is left out there and only there
checkpatch() {
	local ignore=()
	[[ $1 != compat.h ]] || ignore=(--ignore LINUX_VERSION_CODE)
	(cd "$ksrc" && scripts/checkpatch.pl --strict --terse --show-types "${ignore[@]}" -f "fs/squashfs/$1")
}
if [[ -x $ksrc/scripts/checkpatch.pl && -e $ksrc/fs/squashfs ]]; then
	for f in "${csrc[@]}"; do
		tap_test "checkpatch --strict fs-squashfs/${f#./} (${ksrc#"$BUILD"/}'s)" checkpatch "${f#./}"
	done
else
	tap_skip "checkpatch --strict fs-squashfs/ (no kernel tree: make kernel-tree-6.12)"
fi

# sparse_build NAME WHAT CHECKER MAKE-ARGS...: fs-squashfs/ built as a module with W=1
# and sparse (C=2, the CHECKER program) in build/lint/src-NAME; ok when it builds, the
# kernel took the checker (7.x refuses a sparse that lacks __typeof_unqual__, and
# would build without it) and no warning is ours: a path in our folder, or a bare
# file name, as 7.x prints them (the kernel's own headers' are not ours to fix)
sparse_build() {
	local name=$1 what=$2 check=$3 src=$BUILD/lint/src-$1 log=$BUILD/lint/build-$1.log rc=0
	shift 3
	mkdir -p "$src"
	rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' fs-squashfs/ "$src/"
	env -u BLOCK_SIZE -u BLOCKSIZE make -s "$@" M="$src" W=1 C=2 CHECK="$check" modules >"$log" 2>&1 || rc=$?
	grep -E "^($src/)?[^/: ]+:[0-9]+:[0-9]+: (warning|error)|is not available or not up to date" "$log" \
		>"$BUILD/lint/ours-$name.log" || true
	if ((rc == 0)) && [[ -s $src/squashfs.ko && ! -s $BUILD/lint/ours-$name.log ]]; then
		tap_ok "fs-squashfs/ builds against $what with W=1 and sparse (C=2) with no warning ($(wc -l <"$log") lines of log, none ours)"
	else
		mapfile -t lines < <(head -n 20 "$BUILD/lint/ours-$name.log"; ((rc == 0)) || tail -n 5 "$log")
		tap_notok "fs-squashfs/ builds against $what with W=1 and sparse (C=2) with no warning (exit $rc, $log)" "${lines[@]}"
	fi
}

headers=$(find /usr/src -maxdepth 1 -name 'linux-headers-*-amd64' | LC_ALL=C sort | tail -n 1)
if [[ -n $headers ]] && command -v sparse >/dev/null; then
	sparse_build 6.1 "Debian 12's ${headers##*/}" sparse -C "$headers"
else
	tap_skip "sparse and W=1 on fs-squashfs/ (no Debian kernel headers or no sparse: make deps)"
fi
# the same against Debian 13's 6.12 (make kernel-tree-6.12: trixie's source, prepared
# for modules; no Module.symvers there, so modpost only warns of the kernel's symbols)
k612=$BUILD/kobj-6.12-mod
if [[ -e $k612/.prepared ]] && command -v sparse >/dev/null; then
	sparse_build 6.12 "Debian 13's linux-source-6.12 ($(cat "$k612/include/config/kernel.release"))" sparse \
		-C "$BUILD/trixie/linux-source-6.12" O="$k612" KBUILD_MODPOST_WARN=1
else
	tap_skip "fs-squashfs/ against Debian 13's 6.12 (no prepared tree or no sparse: make kernel-tree-6.12)"
fi
# and against the newest 7.x of trixie-backports and of forky (kernel-config/suite-tree.sh),
# with forky's sparse 0.6.5 (7.x wants __typeof_unqual__, which Debian 12's and 13's
# 0.6.4 lack), fetched into build/forky/sparse and run with its own C library
forky_sparse() {
	local r=$BUILD/forky/sparse/root w=$BUILD/forky/sparse/sparse
	[[ -x $r/usr/bin/sparse ]] ||
		bash "$TOP/kernel-config/trixie.sh" --suite forky "$BUILD/forky/sparse" sparse libc6 >&2 || return 1
	printf '#!/bin/sh\nexec %s/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path %s/usr/lib/x86_64-linux-gnu %s/usr/bin/sparse "$@"\n' \
		"$r" "$r" "$r" >"$w"
	chmod +x "$w"
	echo "$w"
}
for suite in trixie-backports forky; do
	kobj=$BUILD/$suite/kobj-mod
	if [[ -e $kobj/.prepared ]] && sparse7=$(forky_sparse); then
		sparse_build "$suite" "$suite's linux-source ($(cat "$kobj/include/config/kernel.release")), forky's sparse" "$sparse7" \
			-C "$BUILD/$suite/linux-source" O="$kobj"
	else
		tap_skip "fs-squashfs/ against $suite's 7.x (no prepared tree, make kernel-tree-${suite#trixie-}; or no sparse from forky)"
	fi
done
tap_summary
((LS_FAIL == 0))
