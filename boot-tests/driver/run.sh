#!/bin/bash
# boot-tests/driver/run.sh: direct-boot tests of our squashfs driver (no GRUB, no dracut).
#
# usage: bash boot-tests/driver/run.sh [quick|full]
#   quick  17 images (every compressor, block size and variant at least once, plus
#          squashfs-tools-ng images), 73 corrupted images, ~34 read-error disks (blkdebug),
#          the fuzz findings, 2 stress images (also in a memory cgroup); 9 QEMU boots
#   full   the whole matrix (compressors x block sizes x variants, extras, both
#          squashfs-tools-ng writers for each compressor and block size) plus a big
#          tree (5 GiB sparse file, 100,000-entry directory)
# Boots our kernel (a copy of build/kobj/arch/x86/boot/bzImage, squashfs built in) and
# Debian's kernel with the stock squashfs.ko and ours (build/module/squashfs.ko) as
# modules, one boot per module; compares every manifest with the host's, and each
# driver with the others. The boots run as background jobs, DRIVER_JOBS at once
# (default 2), longest first; the good images' boots have two vCPUs (a readahead is
# decompressed on both), the corrupted ones one; the stress boots (two vCPUs) run alone.
# TAP on stdout, ending with "N passed, N failed"; exit 1 on any failure.
# Logs and results: build/driver-tests/run-MODE/. Images cached: build/driver-tests/img/.
#
# Environment: ACCEL (auto|kvm|tcg, see iso/accel.sh), LS_KERNEL (our bzImage; default
# make's KERNEL), DEB_ROOT (the root a Debian kernel was extracted into, boot/ and
# usr/lib/modules/: Debian 13's 6.12 is build/trixie/debkernel/root; default the host's
# own kernel), DEB_KERNEL (default its vmlinuz-<newest with modules>), DRIVER_TIMEOUT (seconds per
# boot, default 1200 quick / 14400 full), DRIVER_STALL (seconds without guest output
# that count as a hang, default 240; 3600 for the big tree), SENDALL=1 (send every
# guest manifest), DRIVER_BOOTS=no (host checks only: trees, images, unsquashfs),
# DRIVER_ONLY="ours-good debian-bad ..." (only these boots; debian-X is both
# debian-X.stock and debian-X.ours), DRIVER_JOBS (QEMU boots at once, default 2; 1: one
# after another), DRIVER_STRESS=ID,... (images of the stress pass; default g02,g10
# quick), DRIVER_STRESS_SECS (its length per image, 8), DRIVER_RUNDIR (instead of
# build/driver-tests/run-MODE), DRIVER_HAZARD (which kernels and drivers boot the
# hazard tests, hazard.sh: default ours; "hazard" in DRIVER_ONLY selects only them, with
# the boots it names), DRIVER_MODULE (our module, default build/module/squashfs.ko),
# DRIVER_TEST_HANG=DRV:ID (the guest stops at that image:
# a test of the hang watchdog and restart), DRIVER_MEM (guest MiB, default 512; the debug
# kernel, LS_KERNEL=build/kobj-debug/..., needs ~1536), DRIVER_APPEND (more kernel
# arguments for every boot; the debug kernel wants acpi=noirq: there ACPI's PCI
# interrupt links take minutes each to set up under TCG; and DRIVER_TIMEOUT=5400: a
# boot whose time runs out while the guest still answers starts again from the image
# it was on, up to 6 attempts), DRIVER_REREAD (1: a second manifest of every
# good image after drop_caches; default 1 quick, 0 full, where it would nearly double
# the time).
# Boots: ours-{good,bad,stress,big} (our kernel), debian-{good,bad,stress,big}.{stock,ours}
# (Debian's kernel with that module); files RUNDIR/BOOT.ATTEMPT.*; RUNDIR/hung: "BOOT DRV
# ID hang-or-crash" for each (driver, image) a boot hung or died on (it is restarted
# without it). Notes ("# ...") of concurrent boots interleave; the TAP comes from check.py
# after all boots. QEMU runs through ls_qemu (iso/qemu-lib.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
BUILD=${BUILD:-$TOP/build}
# shellcheck source=SCRIPTDIR/../../iso/qemu-lib.sh disable=SC1091 # (followed with -x)
source "$TOP/iso/qemu-lib.sh"
mode=${1:-quick}
case $mode in quick | full) ;; *)
	echo "usage: run.sh [quick|full]" >&2
	exit 2
	;;
esac

njobs=${DRIVER_JOBS:-2}
reread=${DRIVER_REREAD:-$([[ $mode == quick ]] && echo 1 || echo 0)}
if [[ ! $njobs =~ ^[1-9][0-9]*$ ]]; then
	echo "run.sh: DRIVER_JOBS must be a positive number (got '$njobs')" >&2
	exit 2
fi

D=$BUILD/driver-tests
R=${DRIVER_RUNDIR:-$D/run-$mode}
IMG=$D/img
rm -rf "$R"
mkdir -p "$R" "$IMG" "$D/bin"
[[ $reread == 1 ]] || touch "$R/no-reread"
t_start=$(date +%s)

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}
note() { echo "# $*"; }
die() {
	not_ok "$*"
	echo "$((n - failed)) passed, $failed failed"
	exit 1
}

# --- kernels: copies, so that a rebuild by the lead does not change them under us ---
LS_KERNEL=${LS_KERNEL:-${KERNEL:-$BUILD/kobj/arch/x86/boot/bzImage}}
ls_debian_kernel || die "no Debian kernel to boot"
kver=$LS_DEB_KVER DEB_KERNEL=$LS_DEB_KERNEL
STOCK_KO=$(ls_debian_module squashfs)
OUR_KO=${DRIVER_MODULE:-$LS_OUR_MODULE}
for f in "$LS_KERNEL" "$DEB_KERNEL" "$OUR_KO" "$STOCK_KO"; do
	[[ -f $f ]] || die "missing ${f:-$LS_DEB_MODDIR/kernel/fs/squashfs/squashfs.ko} (make kernel / make module / linux-image-amd64)"
done
cp "$LS_KERNEL" "$R/bzImage-ours"
cp "$DEB_KERNEL" "$R/vmlinuz-debian"
cp "$OUR_KO" "$R/squashfs-ours.ko"
if [[ $(modinfo -F vermagic "$OUR_KO" | cut -d ' ' -f 1) != "$kver" ]]; then
	die "$OUR_KO is not built for $kver ($(modinfo -F vermagic "$OUR_KO"))"
fi
ls_accel >/dev/null # probed (or read from build/accel) once, here, for every job
accel=$(ls_accel)
note "mode=$mode accel=$accel our kernel=$LS_KERNEL debian kernel=$DEB_KERNEL module=$OUR_KO"

# --- helper, trees, host manifests ---
if [[ ! -x $D/bin/lsqx || $here/lsqx.c -nt $D/bin/lsqx ]]; then
	gcc -O2 -Wall -static -o "$D/bin/lsqx" "$here/lsqx.c" -lm
	gcc -O2 -Wall -o "$D/bin/lsqx-host" "$here/lsqx.c" -lm
fi
# the manifest script is shared with the live-ISO tests; -X: xattrs and link targets by lsqx
manifest() { LSQX=$D/bin/lsqx-host sh "$TOP/boot-tests/manifest.sh" -X "$1"; }

trees=(std small)
[[ $mode == full ]] && trees+=(big)
for t in "${trees[@]}"; do
	bash "$here/gentree.sh" "$D/tree-$t" "$t"
	manifest "$D/tree-$t" >"$R/tree-$t.man"
	note "tree $t: $(wc -l <"$R/tree-$t.man") paths, manifest sha256 $(sha256sum <"$R/tree-$t.man" | cut -c1-16)"
done
# determinism: a second generation of the small tree gives the same manifest
bash "$here/gentree.sh" "$R/tree-again" small
manifest "$R/tree-again" >"$R/tree-again.man"
rm -rf "$R/tree-again"
if cmp -s "$R/tree-again.man" "$R/tree-small.man"; then
	ok "gentree.sh is deterministic (small tree generated twice, same manifest)"
else
	not_ok "gentree.sh is deterministic: $(diff "$R/tree-again.man" "$R/tree-small.man" | head -n 3 | tr '\n' '|')"
fi

# --- the image matrix ---
# lines: id|writer|compressor|block size|options|tree
matrix() {
	if [[ $mode == quick ]]; then
		cat <<-'EOF'
			g01|mk|gzip|128K||std
			g02|mk|xz|4K|-no-fragments|std
			g03|mk|lzo|1M|-always-use-fragments|std
			g04|mk|lz4|128K|-noI -noD -noF -noX|std
			g05|mk|zstd|4K|-no-duplicates|std
			g06|mk|gzip|1M|-no-exports|std
			g07|mk|xz|128K|-no-xattrs|std
			g08|mk|lzo|4K||std
			g09|mk|lz4|1M|-no-fragments|std
			g10|mk|zstd|1M|-always-use-fragments|std
			g11|mk|xz|1M|-Xbcj x86|std
			g12|mk|lz4|4K|-Xhc|std
			g13|mk|gzip|4K|-Xwindow-size 10|std
			g14|mk|zstd|128K|-Xcompression-level 19|std
			g15|gen|xz|128K|-e|std
			g16|tar|lzo|1M||std
			g17|mk|xz|4K|-Xbcj x86|std
		EOF
		return
	fi
	local i=0 c b v
	local variants=("" "-no-fragments" "-always-use-fragments" "-noI -noD -noF -noX"
		"-no-duplicates" "-no-exports" "-no-xattrs")
	for c in gzip xz lzo lz4 zstd; do
		for b in 4K 128K 1M; do
			for v in "${variants[@]}"; do
				i=$((i + 1))
				printf 'm%03d|mk|%s|%s|%s|std\n' "$i" "$c" "$b" "$v"
			done
		done
	done
	for b in 4K 128K 1M; do
		printf 'x%s1|mk|xz|%s|-Xbcj x86|std\n' "$b" "$b"
		printf 'x%s2|mk|lz4|%s|-Xhc|std\n' "$b" "$b"
		printf 'x%s3|mk|gzip|%s|-Xwindow-size 10|std\n' "$b" "$b"
		printf 'x%s4|mk|zstd|%s|-Xcompression-level 19|std\n' "$b" "$b"
		for c in gzip xz lzo lz4 zstd; do
			printf 'n%s%s|gen|%s|%s|-e|std\n' "$b" "$c" "$c" "$b"
			printf 't%s%s|tar|%s|%s||std\n' "$b" "$c" "$c" "$b"
		done
	done
	echo 'big1|mk|gzip|128K||big'
	echo 'big2|mk|zstd|1M|-no-fragments|big'
	echo 'big3|gen|xz|4K||big'
}

bytes() { case $1 in *K) echo $((${1%K} * 1024)) ;; *M) echo $((${1%M} * 1048576)) ;; *) echo "$1" ;; esac }

# build_image ID WRITER COMP BS OPTS TREE -> prints the image path (cached by content)
build_image() {
	local id=$1 w=$2 c=$3 bs=$4 opts=$5 tree=$6 key img tmp
	local -a o=()
	read -r -a o <<<"$opts"
	key=$( {
		sha256sum <"$R/tree-$tree.man"
		echo "$w|$c|$bs|$opts"
		case $w in
		mk) mksquashfs -version | head -n 1 ;;
		gen) gensquashfs --version | head -n 1 ;;
		tar) tar2sqfs --version | head -n 1 ;;
		esac
	} | sha256sum | cut -c1-24)
	img=$IMG/$key.img
	if [[ ! -s $img ]]; then
		tmp=$img.tmp
		rm -f "$tmp"
		case $w in
		mk) mksquashfs "$D/tree-$tree" "$tmp" -noappend -comp "$c" -b "$bs" -processors 1 \
			-no-progress -quiet "${o[@]}" >"$R/mk-$id.log" 2>&1 ;;
		gen) gensquashfs -D "$D/tree-$tree" -k -x -c "$c" -b "$(bytes "$bs")" -j 1 -q -f \
			"${o[@]}" "$tmp" >"$R/mk-$id.log" 2>&1 ;;
		tar) tar --format=pax --xattrs --xattrs-include='*' --sparse --numeric-owner \
			-C "$D/tree-$tree" -cf - . 2>"$R/tar-$id.log" |
			tar2sqfs -c "$c" -b "$(bytes "$bs")" -j 1 -q -f "${o[@]}" "$tmp" >"$R/mk-$id.log" 2>&1 ;;
		esac
		mv "$tmp" "$img"
	fi
	echo "$img"
}

: >"$R/good.tsv"
t0=$(date +%s)
while IFS='|' read -r id w c bs opts tree; do
	if img=$(build_image "$id" "$w" "$c" "$bs" "$opts" "$tree"); then
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$img" "$w" "$c" "$bs" "$opts" "$tree" >>"$R/good.tsv"
	else
		not_ok "image $id ($w $c $bs $opts) builds: $(tail -n 2 "$R/mk-$id.log" | tr '\n' '|')"
	fi
done < <(matrix)
nimg=$(wc -l <"$R/good.tsv")
# the stress pass (several processes reading at once, drop_caches, sendfile, splice)
# runs on a few images (a 4K-block and a 1M-block one of different compressors) in
# boots of their own with two vCPUs (the other boots have one: under TCG on a loaded
# host a second vCPU slows everything else down)
if [[ -n ${DRIVER_STRESS:-} ]]; then
	stress_ids=$DRIVER_STRESS
elif [[ $mode == quick ]]; then
	stress_ids=g02,g10
else
	stress_ids=$(awk -F '\t' '$3 == "mk" && $6 == "" && $7 == "std" && (($4 == "xz" && $5 == "4K") ||
		($4 == "zstd" && $5 == "1M") || ($4 == "lzo" && $5 == "128K")) { printf "%s,", $1 }' "$R/good.tsv")
	stress_ids=${stress_ids%,}
fi
echo "$stress_ids" >"$R/stress"
awk -F '\t' -v ids=",$stress_ids," 'index(ids, "," $1 ",")' "$R/good.tsv" >"$R/good-stress.tsv"
note "stress pass on: $stress_ids (${DRIVER_STRESS_SECS:-8} s each, 4 processes)"
note "image matrix: $nimg images in $(($(date +%s) - t0)) s"

# expected manifests (the tree's, with each writer's known deviations) and host
# cross-check: unsquashfs (squashfs-tools, not ours) extracts each image and must
# give the expected manifest.
python3 "$here/check.py" expect "$R" >"$R/expected"
while IFS= read -r line; do
	# (not IFS=tab: tab is white space to read, an empty field would vanish)
	IFS='|' read -r id img w c bs opts _ <<<"${line//$'\t'/|}"
	mark=$img.unsquashfs-ok
	if [[ -e $mark && $(cat "$mark") == "$(sha256sum <"$R/exp-$id.man")" ]]; then
		ok "host: unsquashfs of $id ($w $c $bs${opts:+ $opts}) gives the expected manifest (cached)"
		continue
	fi
	rm -rf "$R/unsq"
	if ! unsquashfs -d "$R/unsq" -no-progress "$img" >"$R/unsq-$id.log" 2>&1; then
		not_ok "host: unsquashfs of $id ($w $c $bs${opts:+ $opts}): $(tail -n 2 "$R/unsq-$id.log" | tr '\n' '|')"
		continue
	fi
	manifest "$R/unsq" >"$R/unsq-$id.man"
	rm -rf "$R/unsq"
	if cmp -s "$R/unsq-$id.man" "$R/exp-$id.man"; then
		sha256sum <"$R/exp-$id.man" >"$mark"
		ok "host: unsquashfs of $id ($w $c $bs${opts:+ $opts}) gives the expected manifest"
		rm -f "$R/unsq-$id.man"
	else
		not_ok "host: unsquashfs of $id ($w $c $bs${opts:+ $opts}) gives the expected manifest: $(diff "$R/exp-$id.man" "$R/unsq-$id.man" | head -n 3 | cut -c1-200 | tr '\n\t' '| ')"
	fi
done <"$R/good.tsv"

# --- corrupted images, from one small image ---
base=$(build_image base mk gzip 4K "-noI -noF -noX" small)
base2=$(build_image base2 mk gzip 4K "" small)
mkdir -p "$R/bad"
if python3 "$here/corrupt.py" "$base" "$base2" "$R/bad" >"$R/bad.tsv" 2>"$R/corrupt.log"; then
	ok "corrupt.py made $(wc -l <"$R/bad.tsv") corrupted images from two gzip 4K images of the small tree"
else
	not_ok "corrupt.py: $(tail -n 3 "$R/corrupt.log" | tr '\n' '|')"
fi
# I/O errors (QEMU blkdebug): every read of one sector fails with EIO, for each
# table, the superblock and data, on an image of each compressor
fault_specs=()
for c in gzip xz lzo lz4 zstd; do
	fault_specs+=("$c=$(build_image "io-$c" mk "$c" 4K "" small)")
done
if python3 "$here/corrupt.py" faults "$R/faults" "${fault_specs[@]}" >"$R/faults.tsv" 2>"$R/faults.log"; then
	cat "$R/faults.tsv" >>"$R/bad.tsv"
	ok "corrupt.py faults: $(wc -l <"$R/faults.tsv") read-error disks (blkdebug) on images of 5 compressors"
else
	not_ok "corrupt.py faults: $(tail -n 3 "$R/faults.log" | tr '\n' '|')"
fi
# the fuzzer's findings (make fuzz, boot-tests/fuzz): every image that ever crashed or
# hung a kernel joins the corrupted set, so that every run replays it
nf=0
for f in "$TOP"/boot-tests/driver/findings/*.img; do
	[[ -e $f ]] || continue
	nf=$((nf + 1))
	printf 'f%02d\t%s\t%s\tany\t%s\n' "$nf" "$f" "$(basename "$f" .img)" \
		"a fuzz finding (boot-tests/driver/findings/README.md)" >>"$R/bad.tsv"
done
note "$nf fuzz findings in the corrupted set (boot-tests/driver/findings)"

# --- the hazard tests' images (hazard.sh) ---
# shellcheck source=SCRIPTDIR/hazard.sh disable=SC1091 # (followed with -x)
source "$here/hazard.sh"
hazards=no
if [[ ${DRIVER_BOOTS:-yes} != no && (-z ${DRIVER_ONLY:-} || " $DRIVER_ONLY " == *" hazard "*) ]]; then
	hazards=yes
	hazard_prepare
fi

# --- initramfs: busybox, lsqx, manifest.sh, /init, guest-lib.sh (+ Debian's modules) ---
# mkinitrd OUT [debian]
mkinitrd() {
	local out=$1 s=$R/initrd-stage a m
	ls_busybox_stage "$s" "$here/guest-init.sh"
	cp "$D/bin/lsqx" "$s/bin/lsqx"
	cp "$TOP/boot-tests/manifest.sh" "$s/bin/manifest.sh"
	cp "$here/hazard-guest.sh" "$s/hazard-guest.sh"
	cp "$R/expected" "$s/expected"
	[[ $hazards == no ]] || cp "$HZ"/hz-*.sums "$s/"
	while IFS=$'\t' read -r a _; do
		cp "$R/exp-$a.man" "$s/expected-$a.man"
	done <"$R/good-stress.tsv"
	if [[ ${2:-} == debian ]]; then
		mkdir -p "$s/lib/modules/deps" "$s/lib/modules/drv/stock" "$s/lib/modules/drv/ours"
		# (those built into the kernel are not there: the guest loads what is)
		for a in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk loop; do
			m=$(ls_debian_module "$a")
			[[ -z $m ]] || ls_module_copy "$m" "$s/lib/modules/deps/$a.ko"
		done
		ls_module_copy "$STOCK_KO" "$s/lib/modules/drv/stock/squashfs.ko"
		cp "$R/squashfs-ours.ko" "$s/lib/modules/drv/ours/squashfs.ko"
	fi
	(cd "$s" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$out"
	rm -rf "$s"
}
mkinitrd "$R/initrd-ours.gz"
mkinitrd "$R/initrd-debian.gz" debian

# --- QEMU boots ---
# Each boot is a job: a background subshell that boots (and restarts past a hang)
# until its (driver, disk) pairs are done. At most DRIVER_JOBS run at once, the
# longest first (by an estimate); the stress boots (two vCPUs) run alone, after the
# others. Debian's kernel boots once per driver (debian-MODE.stock, debian-MODE.ours),
# so that the work balances. Their files: RUNDIR/NAME.ATTEMPT.{out,out.txt,console,qemu}
# (ls_qemu --files; also .console.txt, .cmdline; check.py finds them by NAME; the
# attempt stays the third field from the end).
# boot NAME KERNEL INITRD MODE DRIVERS LIST STALL: boots until every (driver, disk)
# pair is done; a boot that hangs or dies is restarted without the pair it was on.
boot_timeout=${DRIVER_TIMEOUT:-$([[ $mode == quick ]] && echo 1200 || echo 14400)}
boot() {
	local name=$1 kernel=$2 initrd=$3 gmode=$4 drvs=$5 list=$6 stall=$7
	# good images: snapshot=on, so the guest sees a writable disk (remount,rw then
	# reaches the filesystem, not the block layer) and the image stays unchanged
	local disks=snapshot
	[[ $gmode == bad ]] && disks="readonly"
	local attempt skip="" hungpairs="" t1 cur smp=1 ndisks
	# two vCPUs for the stress pass, and for the good images, where one reader's
	# readahead is decompressed on both CPUs (struct sqfs_job): every byte is compared
	[[ $gmode == stress || $gmode == good ]] && smp=2
	ndisks=$(grep -c . "$list")
	# past ~100 virtio disks the guest runs out of interrupt vectors (MSI-X, two per
	# disk): probes fail with ENOSPC and even ttyS1 cannot get its IRQ. Shared INTx
	# lines instead:
	local nomsi=""
	((ndisks > 80)) && nomsi=pci=nomsi
	for attempt in 1 2 3 4 5 6; do
		local base=$R/$name.$attempt
		t1=$(date +%s)
		# the skip list goes into a second cpio appended to the initramfs (the
		# kernel unpacks both; a command line would be too short in full mode)
		cp "$initrd" "$base.initrd"
		if [[ -n $skip ]]; then
			rm -rf "$base.skip" && mkdir "$base.skip"
			echo "$skip" >"$base.skip/skip"
			(cd "$base.skip" && echo skip | cpio -o -H newc --quiet | gzip -1) >>"$base.initrd"
			rm -rf "$base.skip"
		fi
		# tsc=unstable: under TCG the guest reads the host's TSC as is, and that jumps
		# by days when the host is restored from a snapshot (a CI run saw "soft lockup
		# - CPU#0 stuck for 429422s"); the guest's clocks then follow the HPET, which
		# QEMU runs on the host's monotonic clock, as the host's own kernel does.
		# --stall: no guest output for $stall seconds = a hang; the boot is stopped.
		# --results-raw: out.txt loses only carriage returns (the guest's lines may
		# hold raw file names).
		ls_qemu "$name" "$boot_timeout" --files "$base" --results-raw --mem "${DRIVER_MEM:-512}" --smp "$smp" \
			--nodefaults --kernel "$kernel" --initrd "$base.initrd" \
			--append "console=ttyS0,115200 panic=-1 tsc=unstable sysrq_always_enabled lsq.mode=$gmode lsq.drv=$drvs lsq.ndisks=$ndisks $nomsi lsq.stresssecs=${DRIVER_STRESS_SECS:-8} lsq.reread=$reread ${SENDALL:+lsq.sendall=1} ${DRIVER_TEST_HANG:+lsq.hang=$DRIVER_TEST_HANG} ${DRIVER_APPEND:-}" \
			--virtio-disks "$list" "$disks" --stall "$stall"
		if ((LS_QEMU_STALLED)); then
			note "boot $name attempt $attempt: no guest output for $stall s, stopping it"
		fi
		note "boot $name attempt $attempt: qemu rc=$LS_QEMU_RC in $(($(date +%s) - t1)) s"
		rm -f "$base.initrd"
		if grep -q '^@@ DONE' "$base.out.txt"; then
			return 0
		fi
		# restart without what was done and without the pair it hung or died on
		cur=$(awk '$2 == "BEGIN" { c = $3 ":" $4 } $2 == "END" { c = "" } END { print c }' "$base.out.txt")
		if [[ -z $cur ]]; then
			note "boot $name attempt $attempt ended without DONE and outside any image (see $base.console)"
			echo "$name - - boot-died-outside-image" >>"$R/hung"
			return 1
		fi
		if ((LS_QEMU_RC == 124 && !LS_QEMU_STALLED)); then
			# the boot's time ran out while the guest was still answering: not the
			# image's fault (the debug kernel is that slow); again from that image
			note "boot $name attempt $attempt: DRIVER_TIMEOUT ($boot_timeout s) ran out in ${cur#*:} (${cur%%:*}) with the guest still working: again from there (a slow kernel wants a larger DRIVER_TIMEOUT)"
		else
			echo "$name ${cur%%:*} ${cur#*:} hang-or-crash" >>"$R/hung"
			hungpairs+="$cur,"
		fi
		skip=$(cat "$R"/"$name".*.out.txt | awk '$2 == "END" { printf "%s:%s,", $3, $4 }')$hungpairs
	done
	return 1
}

# job_stop: in a job's subshell, stop its QEMU (timeout passes the signal on to it)
# and wait for it
job_stop() {
	local p
	p=$(jobs -p)
	[[ -n $p ]] || return 0
	local -a pids
	mapfile -t pids <<<"$p"
	kill "${pids[@]}" 2>/dev/null || true
	wait "${pids[@]}" 2>/dev/null || true
}
# the running jobs: slots[PID] = the QEMU slots it takes (DRIVER_JOBS for a job
# that runs alone); a job still running when run.sh ends (interrupted, killed, an
# error) is stopped, and with it its QEMU
declare -A slots=()
used=0
stop_all() {
	local p
	for p in "${!slots[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${!slots[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_all EXIT
trap 'exit 130' INT TERM
# reap: wait for one job to end and free its slots
reap() {
	local p="" q
	wait -n -p p "${!slots[@]}" 2>/dev/null || true
	p=${p:-}
	if [[ -z $p ]]; then # (not expected) forget any job that is gone
		for q in "${!slots[@]}"; do kill -0 "$q" 2>/dev/null || p=$q; done
		if [[ -z $p ]]; then
			sleep 1
			return 0
		fi
	fi
	used=$((used - slots[$p]))
	unset "slots[$p]"
}
# est LIST MODE DRIVER [big]: a boot's estimated length in seconds, only to order the
# jobs (measured under TCG, quick mode: per image, good: stock 28 s, ours 14-16 s;
# corrupted: 0.2-0.4 s; the big tree's images: guessed 50 times a std one)
est() {
	local k per
	k=$(wc -l <"$1")
	case $2:$3 in
	good:stock) per=280 ;;
	good:*) per=150 ;;
	bad:stock) per=4 ;;
	bad:*) per=2 ;;
	*) per=100 ;;
	esac
	[[ ${4:-} == big ]] && per=$((per * 50))
	echo $((k * per / 10 + 10))
}
# add_job ALONE NAME KERNEL INITRD MODE DRIVER LIST STALL [big]
joblist=()
add_job() {
	if [[ -n ${DRIVER_ONLY:-} && " $DRIVER_ONLY " != *" $2 "* && " $DRIVER_ONLY " != *" ${2%%.*} "* ]]; then
		return 0
	fi
	joblist+=("$1"$'\t'"$(est "$7" "$5" "$6" "${9:-}")"$'\t'"$2"$'\t'"$3"$'\t'"$4"$'\t'"$5"$'\t'"$6"$'\t'"$7"$'\t'"$8")
}

if [[ ${DRIVER_BOOTS:-yes} == no ]]; then
	note "DRIVER_BOOTS=no: host checks only, no QEMU boots"
	note "total $(($(date +%s) - t_start)) s; results in $R"
	echo "$((n - failed)) passed, $failed failed"
	[[ $failed -eq 0 ]]
	exit
fi
awk -F '\t' '$7 != "big"' "$R/good.tsv" >"$R/good-small.tsv"
awk -F '\t' '$7 == "big"' "$R/good.tsv" >"$R/good-big.tsv"
: >"$R/hung"
for kind in good bad stress big; do
	list=$R/good-$kind.tsv gmode=$kind alone=0 stall=${DRIVER_STALL:-240} big=""
	case $kind in
	good) list=$R/good-small.tsv ;;
	bad) list=$R/bad.tsv ;;
	stress) alone=1 ;;
	big) gmode=good stall=${DRIVER_STALL:-3600} big=big ;;
	esac
	[[ -s $list ]] || continue
	add_job "$alone" "ours-$kind" "$R/bzImage-ours" "$R/initrd-ours.gz" "$gmode" builtin "$list" "$stall" "$big"
	for drv in stock ours; do
		add_job "$alone" "debian-$kind.$drv" "$R/vmlinuz-debian" "$R/initrd-debian.gz" "$gmode" "$drv" "$list" "$stall" "$big"
	done
done
# the jobs that share the CPUs first, longest first; then those that run alone
mapfile -t joblist < <(((${#joblist[@]})) && printf '%s\n' "${joblist[@]}" | sort -s -t $'\t' -k1,1n -k2,2nr)
t0=$(date +%s)
for j in "${joblist[@]}"; do
	IFS=$'\t' read -r alone estimate name kernel initrd gmode drv list stall <<<"$j"
	need=1 how=""
	if [[ $alone != 0 ]]; then
		need=$njobs how=", alone"
	fi
	while ((used + need > njobs)); do reap; done
	note "job $name started ($gmode, $drv, $(wc -l <"$list") disks, estimated $estimate s$how)"
	(
		trap job_stop EXIT
		trap 'exit 143' TERM
		boot "$name" "$kernel" "$initrd" "$gmode" "$drv" "$list" "$stall" || true
	) </dev/null &
	slots[$!]=$need
	used=$((used + need))
done
while ((used > 0)); do reap; done
note "boots took $(($(date +%s) - t0)) s (DRIVER_JOBS=$njobs)"

# --- compare and report ---
rc=0
python3 "$here/check.py" report "$R" "$n" >"$R/report.tap" || rc=$?
cat "$R/report.tap"
if [[ $rc -gt 1 ]]; then
	die "check.py report crashed (rc=$rc)"
fi
read -r n2 f2 <"$R/report.counts"
n=$n2
failed=$((failed + f2))

# --- a disk pulled out while it is read (our kernel, PCI hot-unplug via the monitor) ---
unplug_boot() {
	local list=$R/unplug.list base=$R/ours-unplug out con u
	awk -F '\t' '$1 == "g01" { print $1 "\t" $2 }' "$R/good.tsv" >"$list"
	[[ -s $list ]] || return 0
	ls_qemu ours-unplug 300 --files "$base" --mem "${DRIVER_MEM:-512}" --smp 1 --nodefaults \
		--kernel "$R/bzImage-ours" --initrd "$R/initrd-ours.gz" \
		--append "console=ttyS0,115200 panic=-1 tsc=unstable lsq.mode=unplug lsq.drv=builtin lsq.ndisks=1 ${DRIVER_APPEND:-}" \
		--virtio-disks "$list" readonly --on-result '^@@ READING' 'device_del vdisk0' --stall 120
	out=$base.out.txt con=$base.console.txt
	u=$(grep -m1 '^@@ UNPLUG' "$out" || true)
	if [[ -n $LS_QEMU_ONRESULT_SENT && $u == *" gone=1 "* ]]; then
		ok "unplug: the disk was pulled out (device_del) while 2 readers read half of its files ($(grep -o 'after=[0-9]*s' <<<"$u"))"
	else
		not_ok "unplug: the disk was pulled out while it was read (sent='$LS_QEMU_ONRESULT_SENT' ${u:-no UNPLUG line})"
	fi
	if [[ $u =~ cat=([0-9]+) && ${BASH_REMATCH[1]} != 0 && $u =~ eio=([0-9]+) && ${BASH_REMATCH[1]} != 0 ]]; then
		ok "unplug: reading files not read before gives the reader EIO or EUCLEAN ($(grep -o 'files=[0-9]*' <<<"$u"), $(grep -o 'eio=[0-9]*' <<<"$u") errors)"
	else
		not_ok "unplug: reading files not read before gives the reader EIO or EUCLEAN (${u:-no UNPLUG line})"
	fi
	if grep -q '^@@ UMOUNT rc=0' "$out" && grep -q '^@@ DONE' "$out"; then
		ok "unplug: /mnt unmounts afterwards and the guest runs to its end (no hang)"
	else
		not_ok "unplug: /mnt unmounts and the guest runs to its end ($(grep -m1 '^@@ UMOUNT' "$out" || echo no UMOUNT), rc=$LS_QEMU_RC)"
	fi
	if grep -q 'livesquash (vda)' "$con"; then
		ok "unplug: the kernel log names the device ($(grep -m1 -o 'livesquash (vda): .*' "$con" | cut -c1-100))"
	else
		not_ok "unplug: the kernel log names the device (no 'livesquash (vda)' line in $con)"
	fi
	if ls_console_problems "$con" >"$base.problems" && [[ -s $base.problems ]]; then
		not_ok "unplug: console clean: $(head -n 3 "$base.problems" | tr '\n' '|')"
	else
		ok "unplug: console clean (no BUG/WARNING/Oops/Call Trace/KASAN/panic)"
	fi
}
if [[ -z ${DRIVER_ONLY:-} || " $DRIVER_ONLY " == *" ours-unplug "* ]]; then
	unplug_boot
fi
[[ $hazards == no ]] || hazard_boots
note "total $(($(date +%s) - t_start)) s; results in $R"
echo "$((n - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
