#!/bin/bash
# boot-tests/bench/table.sh (make bench-table): the bench against the stock
# drivers users run today, in one run and one table: bench.sh full on Debian 13's
# kernel (stock 6.12 squashfs.ko, ours as module-6.12, 6.12's EROFS), bench.sh aa
# on it (the A/A noise band), bench.sh full on Debian 12's kernel (stock 6.1 and
# ours as its module), then table.py puts them side by side and says which of
# issue 24's targets are met. Debian 13's stock squashfs.ko has one decompressor
# mode (per-CPU: Debian builds it without CONFIG_SQUASHFS_CHOICE_DECOMP_BY_MOUNT,
# so there is no threads= to choose), hence one stock 6.12 column.
# Results in build/bench/table/{612,612-aa,61}/ and table.txt, table.json there.
# Environment: bench.sh's (BENCH_*); DEB_ROOT6_12 Debian 13's kernel root
# (make kernel-tree-6.12 extracts it); TABLE_AA=no skips the A/A run.
set -euo pipefail
# the tree also packed with lz4 (make passes BENCH_TREE_COMPS, zstd:128K by
# default): the same compressor family as EROFS's lz4hc, for issue 24's
# walk/stat/cat/tar target against EROFS
case " ${BENCH_TREE_COMPS-} " in
*" lz4:"*) ;;
*) export BENCH_TREE_COMPS="${BENCH_TREE_COMPS:+$BENCH_TREE_COMPS }lz4:128K" ;;
esac

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
BUILD=${BUILD:-$TOP/build}
T=$BUILD/bench/table
root612=${DEB_ROOT6_12:-$BUILD/trixie/debkernel/root}
die() { echo "bench-table: $*" >&2; exit 1; }
[[ -d $root612/boot ]] || die "no Debian 13 kernel in $root612 (make kernel-tree-6.12)"

rm -rf "$T"
mkdir -p "$T"
t0=$SECONDS
# run NAME MODE DEB_ROOT: one bench.sh run, its folder kept as $T/NAME
run() {
	local name=$1 mode=$2 root=$3 s=$SECONDS what="Debian 12's kernel, the host's"
	[[ -z $root ]] || what="Debian 13's kernel in $root"
	echo "# bench-table: $name (bench.sh $mode, $what)"
	DEB_ROOT=$root bash "$here/bench.sh" "$mode" | tee "$T/$name.out" | grep -E '^# guest: ' || true
	[[ -f $BUILD/bench/run-$mode/results.json ]] || die "bench.sh $mode left no results.json (see $T/$name.out)"
	mv "$BUILD/bench/run-$mode" "$T/$name"
	echo "# bench-table: $name took $((SECONDS - s)) s"
}
run 612 full "$root612"
[[ ${TABLE_AA:-yes} == no ]] || run 612-aa aa "$root612"
run 61 full ""
python3 "$here/table.py" "$T"
echo "# bench-table: $((SECONDS - t0)) s in all; $T/table.txt"
