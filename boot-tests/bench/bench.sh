#!/bin/bash
# boot-tests/bench/bench.sh: A/B benchmark of the stock squashfs.ko and ours, with EROFS
# as the third column, all on Debian's own kernel in one QEMU boot (issue 4).
#
# usage: bash boot-tests/bench/bench.sh [full|aa|smoke]
#   full   4 large generated files packed with every compressor (BENCH_COMPS) and the
#          Debian root tree (build/rootfs/debian) packed with BENCH_TREE_COMPS (zstd only
#          by default: a cold cat of the tree with xz takes minutes under TCG);
#          BENCH_ROUNDS rounds, stock and ours interleaved in each round
#   aa     the full run with our module in both columns (A/A): the ratios then show
#          what the machine's noise alone does; results in build/bench/run-aa
#   smoke  a tiny generated tree, 2 MiB files, gzip and zstd, 1 round: checks that the
#          whole chain works; TAP on stdout ending with "N passed, N failed"
# Output: a table on stdout; build/bench/run-MODE/results.{json,tsv}, ratios.png,
# guest.out (raw guest lines), console.log (and ls_qemu's console.txt, results.log,
# qemu.log, cmdline). Images are cached in build/bench/img/ by a hash of the tree's
# listing, the writer's version and its options. QEMU runs through ls_qemu
# (iso/qemu-lib.sh).
#
# Environment (make passes these, see boot-tests/tests.mk): BENCH_ROUNDS, BENCH_SMP,
# BENCH_MEM, BENCH_TREE, BENCH_FILE_MB, BENCH_COMPS, BENCH_TREE_COMPS, BENCH_EROFS,
# BENCH_WORKLOADS,
# BENCH_RAND_N, BENCH_WARM, BENCH_MOUNTS, BENCH_TIMEOUT, BENCH_BOOT=no (build data, images and the
# initramfs only), ACCEL, DEB_ROOT (Debian 13's kernel: build/trixie/debkernel/root, with
# our module-6.12; default the host's own), DEB_KERNEL, BENCH_STOCK_KO (the module of the "stock" column;
# default Debian's squashfs.ko; another build of ours compares two versions of our
# driver, and the checks that the stock module is Debian's then fail).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
BUILD=${BUILD:-$TOP/build}
# (before MEM is set below: qemu-lib.sh sets a default MEM)
# shellcheck source=SCRIPTDIR/../../iso/qemu-lib.sh disable=SC1091 # (followed with -x)
source "$TOP/iso/qemu-lib.sh"
mode=${1:-full}
case $mode in full | aa | smoke) ;; *)
	echo "usage: bench.sh [full|aa|smoke]" >&2
	exit 2
	;;
esac

B=$BUILD/bench
R=$B/run-$mode
IMG=$B/img
rm -rf "$R"
mkdir -p "$R" "$IMG" "$B/bin" "$B/data"
t_start=$(date +%s)
note() { echo "# $*"; }
die() {
	echo "bench: $*" >&2
	if [[ $mode == smoke ]]; then
		echo "not ok 1 - $*"
		echo "0 passed, 1 failed"
	fi
	exit 1
}

if [[ $mode == smoke ]]; then
	ROUNDS=1
	SMP=2
	MEM=512
	FILE_MB=2
	COMPS="gzip:128K zstd:128K"
	TREE_COMPS=$COMPS
	EROFS="lz4hc"
	WORKLOADS="stat cat tar seq rand par mem"
	RAND_N=200
	WARM=2
	MOUNTS=4
	TIMEOUT=900
	tree=$B/data/tree-smoke
	if [[ ! -d $tree ]]; then
		rm -rf "$tree.tmp"
		python3 "$here/gendata.py" tree "$tree.tmp" 60
		mv "$tree.tmp" "$tree"
	fi
else
	ROUNDS=${BENCH_ROUNDS:-6}
	SMP=${BENCH_SMP:-4}
	MEM=${BENCH_MEM:-1024}
	FILE_MB=${BENCH_FILE_MB:-8}
	COMPS=${BENCH_COMPS:-gzip:128K xz:128K zstd:128K lz4:128K lzo:128K zstd:4K zstd:1M}
	TREE_COMPS=${BENCH_TREE_COMPS-zstd:128K}
	EROFS=${BENCH_EROFS-lz4hc none}
	WORKLOADS=${BENCH_WORKLOADS:-stat cat tar seq rand par mem}
	RAND_N=${BENCH_RAND_N:-2000}
	WARM=${BENCH_WARM:-20}
	MOUNTS=${BENCH_MOUNTS:-16}
	TIMEOUT=${BENCH_TIMEOUT:-5400}
	tree=${BENCH_TREE:-$BUILD/rootfs/debian}
	[[ -d $tree ]] || die "no tree $tree: run 'make rootfs ROOTFS=debian' (or set BENCH_TREE)"
fi
CLOCK=${BENCH_CLOCK:-tsc}
big=$B/data/big-$FILE_MB
python3 "$here/gendata.py" big "$big" "$FILE_MB"

# --- kernel, modules, helper ---
# Debian's kernel (the host's, or DEB_ROOT's: iso/qemu-lib.sh) and our module for it
ls_debian_kernel || die "no Debian kernel to boot"
kver=$LS_DEB_KVER DEB_KERNEL=$LS_DEB_KERNEL
OUR_KO=$LS_OUR_MODULE
STOCK_KO=${BENCH_STOCK_KO:-$(ls_debian_module squashfs)}
[[ $mode == aa ]] && STOCK_KO=$OUR_KO
for f in "$DEB_KERNEL" "$OUR_KO" "$STOCK_KO"; do
	[[ -f $f ]] || die "missing ${f:-the stock squashfs.ko of $kver} (make module / make module-6.12 / linux-image-amd64)"
done
[[ $(modinfo -F vermagic "$OUR_KO" | cut -d ' ' -f 1) == "$kver" ]] ||
	die "$OUR_KO is not built for $kver"
# copies: a rebuild by someone else does not change them under us
cp "$DEB_KERNEL" "$R/vmlinuz"
cp "$OUR_KO" "$R/squashfs-ours.ko"
accel=$(ls_accel)
if [[ ! -x $B/bin/lsqbench || $here/lsqbench.c -nt $B/bin/lsqbench ]]; then
	gcc -O2 -Wall -Wextra -static -o "$B/bin/lsqbench" "$here/lsqbench.c"
fi
if [[ ! -x $B/bin/lsqceil || $here/lsqceil.c -nt $B/bin/lsqceil ]]; then
	gcc -O2 -Wall -Wextra -static -o "$B/bin/lsqceil" "$here/lsqceil.c" \
		-lz -llzma -llzo2 -llz4 -lzstd -lpthread ||
		die "lsqceil did not build (make deps: liblz4-dev libzstd-dev liblzo2-dev liblzma-dev zlib1g-dev)"
fi

# blocklist IMAGE FILE COMP BLOCKSIZE: lsqceil's list of the data blocks of /FILE in
# IMAGE (from rdsquashfs -s): the compressor, then "OFFSET LENGTH COMPRESSED OUTLEN"
blocklist() {
	rdsquashfs -s "/$2" "$1" | python3 -c '
import re, sys
comp, bs = sys.argv[1], int(sys.argv[2])
t = sys.stdin.read()
pos = int(re.search(r"Blocks start: (\d+)", t).group(1))
size = int(re.search(r"File size: (\d+)", t).group(1))
print(comp)
for i, m in enumerate(re.finditer(r"Block #\d+ size: (\d+) \((\w+)\)", t)):
    n = int(m.group(1))
    if n:  # (0: a sparse block, nothing to decompress)
        print(pos, n, int(m.group(2) == "compressed"), min(bs, size - i * bs))
    pos += n
' "$3" "$4"
}

# --- images, cached by content ---
listing_hash() { # DIR: paths, types, modes, owners, sizes, mtimes, link targets
	(cd "$1" && find . -printf '%P\t%y\t%m\t%U\t%G\t%s\t%T@\t%l\n' | LC_ALL=C sort | sha256sum | cut -c1-32)
}
# image ID DIR KIND ARG: KIND sq (ARG comp:bs) or erofs (ARG lz4hc|none); prints the path
image() {
	local id=$1 dir=$2 kind=$3 arg=$4 key img tmp
	key=$( {
		listing_hash "$dir"
		echo "$kind|$arg"
		if [[ $kind == sq ]]; then mksquashfs -version | head -n 1; else mkfs.erofs --help 2>&1 | head -n 1; fi
	} | sha256sum | cut -c1-24)
	img=$IMG/$key.img
	if [[ ! -s $img ]]; then
		tmp=$img.tmp
		rm -f "$tmp"
		local t0=$SECONDS
		local -a cmd=(mksquashfs "$dir" "$tmp" -noappend -comp "${arg%:*}" -b "${arg#*:}" -no-progress -quiet)
		if [[ $kind == erofs ]]; then
			cmd=(mkfs.erofs --quiet "$tmp" "$dir")
			[[ $arg == none ]] || cmd=(mkfs.erofs --quiet "-z$arg" "$tmp" "$dir")
		fi
		if ! "${cmd[@]}" >"$R/mk-$id.log" 2>&1 || ! mv "$tmp" "$img"; then
			echo "bench: ${cmd[*]} failed: $(tail -n 3 "$R/mk-$id.log" | tr '\n' '|')" >&2
			return 1
		fi
		echo "# built $id in $((SECONDS - t0)) s" >&2
	fi
	echo "$img"
}
: >"$R/disks.tsv"
for ds in t b; do
	dir=$tree
	[[ $ds == b ]] && dir=$big
	list=$COMPS
	[[ $ds == t ]] && list=$TREE_COMPS
	for cb in $list; do
		id=$ds-sq-${cb/:/-}
		img=$(image "$id" "$dir" sq "$cb") || die "image $id did not build"
		printf '%s\t%s\t%s\n' "$id" "$img" "$dir" >>"$R/disks.tsv"
	done
	for e in $EROFS; do
		id=$ds-erofs-$e
		img=$(image "$id" "$dir" erofs "$e") || die "image $id did not build"
		printf '%s\t%s\t%s\n' "$id" "$img" "$dir" >>"$R/disks.tsv"
	done
done
while IFS=$'\t' read -r id img _; do
	note "disk $id $(stat -c %s "$img") bytes $img"
done <"$R/disks.tsv"
DRIVERS="stock ours"
[[ -n $EROFS ]] && DRIVERS+=" erofs"

# --- initramfs ---
s=$R/initrd-stage
ls_busybox_stage "$s" "$here/guest-init.sh"
mkdir -p "$s/lib/modules/deps" "$s/lib/modules/drv/stock" "$s/lib/modules/drv/ours"
cp "$B/bin/lsqbench" "$B/bin/lsqceil" "$s/bin/"
# the ceiling: the data blocks of the sequential files of every big-file squashfs image
mkdir -p "$s/ceil"
while IFS=$'\t' read -r id img _; do
	[[ $id == b-sq-* ]] || continue
	cb=${id#b-sq-}
	sz=${cb#*-}
	case $sz in
	*K) bs=$((${sz%K} << 10)) ;;
	*M) bs=$((${sz%M} << 20)) ;;
	*) die "block size of $id?" ;;
	esac
	for f in text0 bin0; do
		blocklist "$img" "$f" "${cb%%-*}" "$bs" \
			>"$s/ceil/$id.${f%0}" || die "no block list of /$f in $img (rdsquashfs -s)"
	done
done <"$R/disks.tsv"
# (those the kernel has built in are not there: the guest loads what is)
for a in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk \
	crc32c_generic libcrc32c erofs loop; do
	m=$(ls_debian_module "$a")
	[[ -z $m ]] || ls_module_copy "$m" "$s/lib/modules/deps/$a.ko"
done
ls_module_copy "$STOCK_KO" "$s/lib/modules/drv/stock/squashfs.ko"
cp "$R/squashfs-ours.ko" "$s/lib/modules/drv/ours/squashfs.ko"
ndisks=$(wc -l <"$R/disks.tsv")
cat >"$s/bench.conf" <<EOF
ROUNDS=$ROUNDS
DRIVERS="$DRIVERS"
WORKLOADS="$WORKLOADS"
RAND_N=$RAND_N
WARM=$WARM
MEMN=$MOUNTS
NDISKS=$ndisks
EOF
(cd "$s" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$R/initrd.gz"
rm -rf "$s"

if [[ ${BENCH_BOOT:-yes} == no ]]; then
	note "BENCH_BOOT=no: data, images and initramfs ready in $R, no boot"
	exit 0
fi

# --- the boot ---
cat >"$R/params" <<EOF
mode=$mode accel=$accel smp=$SMP mem=$MEM host_cpus=$(nproc) rounds=$ROUNDS
kernel=$DEB_KERNEL kver=$kver
stock=$STOCK_KO sha256=$(sha256sum <"$STOCK_KO" | cut -c1-16)
ours=$OUR_KO sha256=$(sha256sum <"$R/squashfs-ours.ko" | cut -c1-16) built=$(stat -c %y "$OUR_KO" | cut -c1-19 | tr ' ' T) fs-squashfs-commit=$(git -C "$TOP" log -1 --format=%h -- fs-squashfs 2>/dev/null || echo none)
tree=$tree files=$(find "$tree" -type f | wc -l) bytes=$(du -sb "$tree" | cut -f 1)
big=$big file_mb=$FILE_MB
comps=$COMPS
tree_comps=$TREE_COMPS
erofs=$EROFS
workloads=$WORKLOADS rand_n=$RAND_N warm=$WARM mounts=$MOUNTS
EOF
note "mode=$mode accel=$accel smp=$SMP (host has $(nproc) CPUs) mem=${MEM}M rounds=$ROUNDS disks=$ndisks"
note "stock $STOCK_KO, ours $OUR_KO ($(stat -c %y "$OUR_KO" | cut -c1-19))"
# the guest's clock: tsc (what hardware uses; a clock read costs the guest nothing) or
# hpet (tsc=unstable: every clock read of the kernel, one per I/O request at least, is
# an emulated MMIO read). Under TCG the guest reads the host's TSC as is, and on a host
# restored from a snapshot that jumps by days: the soft-lockup watchdog then reports a
# CPU stuck for longer than this boot may last. ls_qemu then keeps that console
# (console.clock-jump.txt) and boots once more.
append="console=ttyS0,115200 panic=-1 quiet loglevel=4"
case $CLOCK in
tsc) ;;
hpet) append+=" tsc=unstable" ;;
*) die "BENCH_CLOCK=$CLOCK: tsc or hpet" ;;
esac
echo "clock=$CLOCK" >>"$R/params"
note "guest clock: $CLOCK"
# progress: one line per round and driver as the guest reports it (ls_qemu calls this
# every 5 s, and once at the end)
seen=0
progress() {
	local n
	n=$(grep -c '^@@ ROUND' "$R/results.log" 2>/dev/null || true)
	((n >= seen)) || seen=0 # a second boot (the clock jumped) starts again
	while ((seen < n)); do
		seen=$((seen + 1))
		note "guest: $(grep '^@@ ROUND' "$R/results.log" | sed -n "${seen}p" | tr -d '\r' | cut -c4-) ($(($(date +%s) - t_boot)) s)"
	done
}
t_boot=$(date +%s)
# in $R: console.log (report.py reads it), results.log (the guest's lines as sent),
# results.txt (the same without carriage returns: --results-raw) = guest.out, qemu.log
ls_qemu bench "$TIMEOUT" --logdir "$R" --mem "$MEM" --smp "$SMP" --nodefaults \
	--kernel "$R/vmlinuz" --initrd "$R/initrd.gz" --append "$append" \
	--virtio-disks "$R/disks.tsv" readonly --progress progress --results-raw
rc=$LS_QEMU_RC
mv "$R/results.txt" "$R/guest.out"
note "qemu rc=$rc, boot took ${LS_QEMU_SECONDS%.*} s; total $(($(date +%s) - t_start)) s"
echo "boot_seconds=${LS_QEMU_SECONDS%.*} qemu_rc=$rc" >>"$R/params"

python3 "$here/report.py" "$R" "$mode"
