#!/bin/bash
# boot-tests/fuzz/fuzz.sh: coverage-guided fuzzing of our squashfs driver in QEMU guests.
#
# usage: bash boot-tests/fuzz/fuzz.sh run      (make fuzz)
#        bash boot-tests/fuzz/fuzz.sh replay [IMAGE...]
#        bash boot-tests/fuzz/fuzz.sh compare   (make fuzz-compare)
#        bash boot-tests/fuzz/fuzz.sh report
#        bash boot-tests/fuzz/fuzz.sh seeds
#
# The engine is AFL++ (afl-fuzz, Debian's afl++), on the host: its queue, scheduling,
# havoc mutations (bit flips, interesting 8/16/32-bit values, arithmetic, block
# deletion and cloning: truncations and extensions) and splicing of two inputs. The
# target it runs is lsqfuzz-harness (harness.c), which hands each image to a guest
# kept running by vm.py; the guest (init.sh, agent.c) loop-mounts it, walks every
# file, and returns the KCOV edges the work took in our driver's functions (sqfs_*),
# which the harness writes into AFL's coverage map. A kernel report (KASAN, UBSAN,
# lockdep, WARN, BUG, a hung task) or a guest that stops answering is a crash to
# AFL, and vm.py keeps the image, its console and a reproducer (repro.sh) in
# build/fuzz/findings/.
#
#   run     FUZZ_JOBS (default 2) afl-fuzz instances (one main, the others secondary,
#           sharing their finds), each with its own guest, for FUZZ_TIME (seconds, or
#           Nm / Nh; default 30m). A second run resumes the same queue
#           (build/fuzz/afl). At the end one row goes to boot-tests/fuzz/REPORT.md:
#           images, images/s, edges, findings (commit it: it is the running total).
#   replay  mounts and walks each IMAGE (default: every finding, and the regression
#           images of boot-tests/driver/findings/) in one guest; exit 1 if one crashed
#           or hung
#   check   make check's few minutes of fresh fuzzing (see cmd_check), TAP
#           Ctrl-C (or TERM) stops it early; the row is written all the same.
#   report  the row of the last run, from its logs, for a run that could not write it
#   compare the queue and the findings through Debian's kernel, with the stock module
#           and with ours (see cmd_compare)
#   seeds   only (re)make the seed images (build/fuzz/seeds)
#
# Environment: FUZZ_KERNEL (default the debug kernel, build/kobj-debug: make
# kernel-debug; KCOV gives the coverage, KASAN/UBSAN/lockdep the reports), FUZZ_MODULE
# (stock or ours: FUZZ_KERNEL is Debian's /boot/vmlinuz-VERSION, and the guest loads
# Debian's squashfs.ko or ours, build/module/squashfs.ko, for a comparison), FUZZ_TIME,
# FUZZ_JOBS, FUZZ_REPORT (instead of boot-tests/fuzz/REPORT.md), FUZZ_MEM (guest MiB, default 1024), FUZZ_SMP (vCPUs a guest, default 2: with
# one, a readahead is never decompressed on two CPUs), FUZZ_EXEC_TIMEOUT (seconds an image
# may take before it counts as a hang, default 60), FUZZ_NOTE (a word for the report
# row). Without KCOV in the kernel the guests return no edges and afl-fuzz runs
# without coverage (-n).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
BUILD=${BUILD:-$TOP/build}
export TOP BUILD
# shellcheck source=SCRIPTDIR/../../iso/qemu-lib.sh disable=SC1091 # (followed with -x)
source "$TOP/iso/qemu-lib.sh"

F=$BUILD/fuzz
# our own kernel (make passes the ISO's as KERNEL): the fallback of cmd_check
OUR_KERNEL=${KERNEL:-$BUILD/kobj/arch/x86/boot/bzImage}
KERNEL=${FUZZ_KERNEL:-$BUILD/kobj-debug/arch/x86/boot/bzImage}
JOBS=${FUZZ_JOBS:-2}
FMEM=${FUZZ_MEM:-1024}
FSMP=${FUZZ_SMP:-2}
EXEC_TIMEOUT=${FUZZ_EXEC_TIMEOUT:-60}
REPORT=${FUZZ_REPORT:-$here/REPORT.md}
REGRESSION=$TOP/boot-tests/driver/findings

die() {
	echo "fuzz: $*" >&2
	exit 1
}

# seconds FUZZ_TIME: 600, 30m, 2h
seconds() {
	case $1 in
	*[0-9]h) echo $((${1%h} * 3600)) ;;
	*[0-9]m) echo $((${1%m} * 60)) ;;
	*[0-9]s) echo "${1%s}" ;;
	*[0-9]) echo "$1" ;;
	*) die "FUZZ_TIME: a number of seconds, or Nm, Nh (got '$1')" ;;
	esac
}

# the kernel's object folder (bzImage is OBJ/arch/x86/boot/bzImage), its release
kobj() { (cd "$(dirname "$KERNEL")/../../.." 2>/dev/null && pwd); }
krelease() { cat "$(kobj)/include/config/kernel.release" 2>/dev/null || basename "$KERNEL"; }

build_bins() {
	mkdir -p "$F/bin"
	if [[ ! -x $F/bin/lsqfuzz-agent || $here/agent.c -nt $F/bin/lsqfuzz-agent ]]; then
		gcc -O2 -Wall -Wextra -static -o "$F/bin/lsqfuzz-agent" "$here/agent.c"
	fi
	if [[ ! -x $F/bin/lsqfuzz-harness || $here/harness.c -nt $F/bin/lsqfuzz-harness ]]; then
		gcc -O2 -Wall -Wextra -o "$F/bin/lsqfuzz-harness" "$here/harness.c"
	fi
}

# the fuzz initramfs: busybox, the agent, /init, guest-lib.sh
build_initrd() {
	local s=$F/initrd-stage
	ls_busybox_stage "$s" "$here/init.sh"
	mkdir -p "$s/lib/modules"
	cp "$F/bin/lsqfuzz-agent" "$s/bin/"
	if [[ -n ${FUZZ_MODULE:-} ]]; then
		# Debian's kernel: loop and squashfs are modules
		local kver ko
		kver=${KERNEL##*/vmlinuz-}
		cp "$(modinfo -k "$kver" -n loop)" "$s/lib/modules/loop.ko"
		mkdir -p "$s/lib/modules/drv"
		case $FUZZ_MODULE in
		stock) ko=$(modinfo -k "$kver" -n squashfs) ;;
		ours) ko=$BUILD/module/squashfs.ko ;;
		*) die "FUZZ_MODULE: stock or ours (got '$FUZZ_MODULE')" ;;
		esac
		[[ -f $ko ]] || die "no $ko (make module)"
		cp "$ko" "$s/lib/modules/drv/squashfs.ko"
	fi
	(cd "$s" && find . -print0 | sort -z | cpio --null -o -H newc --quiet | gzip -1) >"$F/initrd.gz"
	rm -rf "$s"
}

# the seed tree: every inode type, hard links, a sparse file, xattrs, long and short
# symlinks, fragments and blocks; with BIG a directory of over 8 KiB (a directory
# index) besides. Small on purpose: a guest's walk costs ~6 ms an entry on the debug
# kernel, and only two seeds carry the big directory.
seed_tree() {
	local t=$1 big=${2:-} i
	rm -rf "$t"
	mkdir -p "$t/dir/sub/deeper" "$t/empty-dir"
	: >"$t/empty"
	echo "hello, squashfs" >"$t/small"
	python3 -c 'import random, sys
r = random.Random(7)
sys.stdout.buffer.write(bytes(r.choice(b"abcdefgh \n") for _ in range(9000)))' >"$t/text-9k"
	python3 -c 'import random, sys
r = random.Random(8)
sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(5000)))' >"$t/dir/random-5k"
	truncate -s 12288 "$t/sparse"
	printf 'data' | dd of="$t/sparse" bs=1 seek=8192 conv=notrunc status=none
	ln "$t/small" "$t/dir/hardlink"
	ln -s small "$t/link"
	ln -s "$(printf 'x%.0s' $(seq 1 300))" "$t/dir/long-link"
	mkfifo "$t/fifo"
	mknod "$t/chardev" c 1 3
	mknod "$t/blockdev" b 7 0
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$t/dir/socket"
	echo deep >"$t/dir/sub/deeper/file"
	if [[ -n $big ]]; then
		# 48 names of ~190 bytes: ~9 KiB of directory entries, past one 8 KiB
		# metadata block, so mksquashfs writes a directory index
		mkdir "$t/big"
		for i in $(seq -w 1 48); do
			: >"$t/big/$(printf 'n%.0s' $(seq 1 180))-$i"
		done
	fi
	setfattr -n user.comment -v "a comment" "$t/small"
	setfattr -n user.long -v "$(printf 'v%.0s' $(seq 1 400))" "$t/text-9k"
	setfattr -n user.comment -v "a comment" "$t/dir"
	setfattr -n trusted.x -v 1 "$t/dir/random-5k"
	chown 1000:100 "$t/dir/random-5k"
	chmod 4755 "$t/dir/random-5k"
	find "$t" -exec touch -h -d @1700000000 {} +
}

build_seeds() {
	local tree=$F/seed-tree s=$F/seeds line name c b t
	local -a o
	seed_tree "$tree"
	seed_tree "$tree-big" big
	rm -rf "$s" && mkdir -p "$s"
	# name|compressor|block size|tree|options: every compressor; 4K and 128K blocks;
	# uncompressed metadata (mutations land in inodes, directories, tables as they
	# are); fragments or none; exports, xattrs or none; the big directory twice
	while IFS='|' read -r name c b t line; do
		read -r -a o <<<"$line"
		mksquashfs "$tree$t" "$s/$name.sqfs" -noappend -quiet -no-progress -processors 1 \
			-comp "$c" -b "$b" "${o[@]}" >/dev/null
	done <<-'EOF'
		gzip-4k|gzip|4K||
		gzip-128k|gzip|128K||
		gzip-4k-bigdir|gzip|4K|-big|
		xz-4k|xz|4K||-Xbcj x86
		lzo-4k|lzo|4K||
		lz4-4k-hc|lz4|4K||-Xhc -always-use-fragments
		zstd-128k|zstd|128K||-no-fragments
		plain-4k|gzip|4K||-noI -noD -noF -noX
		plain-4k-bigdir|gzip|4K|-big|-noI -noD -noF -noX
		plain-4k-noexp|gzip|4K||-noI -noD -noF -noX -no-exports -no-xattrs -no-fragments
		plain-128k|lz4|128K||-noI -noD -noF -noX -always-use-fragments
		plain-meta-zstd|zstd|4K||-noI -noX
		plain-data-xz|xz|4K||-noD -noF
	EOF
	# an image inside the image (the agent loop-mounts it too): inside a gzip image
	# as the live root's users have it (the same compressor: the inner mount's reads
	# go through the outer one's decompressors), and inside an uncompressed one,
	# where mutations land in the inner image's bytes as they are
	rm -rf "$tree-nest" && mkdir -p "$tree-nest/sub"
	mksquashfs "$tree" "$tree-nest/sub/inner.img" -noappend -quiet -no-progress -processors 1 \
		-comp gzip -b 4K >/dev/null
	# (two sources: each is a folder of the root, the inner image two levels down)
	mksquashfs "$tree" "$tree-nest" "$s/nest-gzip-4k.sqfs" -noappend -quiet -no-progress \
		-processors 1 -comp gzip -b 4K >/dev/null
	mksquashfs "$tree" "$tree-nest" "$s/nest-plain-4k.sqfs" -noappend -quiet -no-progress \
		-processors 1 -comp gzip -b 4K -noI -noD -noF -noX >/dev/null
	# squashfs-tools-ng writes differently (tables, fragments, directory order)
	gensquashfs -D "$tree" -k -c gzip -b 4096 -q -f "$s/ng-gzip-4k.sqfs" >/dev/null 2>&1 ||
		echo "fuzz: gensquashfs failed, seeds without it" >&2
	echo "fuzz: $(find "$s" -type f | wc -l) seeds, $(du -sk "$s" | cut -f1) KiB in $s"
}

# vm_args: vm.py's options for the kernel, its initramfs and module, one a line
vm_args() {
	printf '%s\n' --kernel "$KERNEL" --initrd "$F/initrd.gz" --mem "$FMEM" --smp "$FSMP" --exec-timeout "$EXEC_TIMEOUT"
	[[ -z ${FUZZ_MODULE:-} ]] ||
		printf '%s\n' --append lsqf.module=/lib/modules/drv/squashfs.ko --prefixes squashfs_
}

# report_row SECS: one row of REPORT.md from the instances' fuzzer_stats and vm.py's stats
report_row() {
	local secs=$1
	python3 - "$F" "$REPORT" "$secs" "$(krelease)" "${FUZZ_NOTE:-}" <<-'EOF'
		import glob, json, os, sys, time
		F, report, secs, kernel, note = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
		execs = edges = corpus = mounted = 0
		# afl/{m1,s2}/ with coverage, afl-nN/default/ without
		for st in glob.glob(os.path.join(F, "afl*", "*", "fuzzer_stats")):
		    d = dict(l.split(":", 1) for l in open(st) if ":" in l)
		    d = {k.strip(): v.strip() for k, v in d.items()}
		    corpus = max(corpus, int(d.get("corpus_count", 0)))
		# coverage over time: the edges one guest had seen at these minutes
		marks = [1, 5, 15, 30, 60, 120, 240, 480]
		at = {}
		for st in glob.glob(os.path.join(F, "run", "vm-*.stats")):
		    lines = [json.loads(l) for l in open(st) if l.strip()]
		    if lines:
		        execs += lines[-1]["execs"]; mounted += lines[-1]["mounted"]
		        edges = max(edges, lines[-1]["edges"])
		    for m in marks:
		        seen = [l["edges"] for l in lines if l["secs"] <= m * 60 + 15]
		        if seen and lines[-1]["secs"] >= m * 60 - 15:
		            at[m] = max(at.get(m, 0), seen[-1])
		over_time = " ".join("%s:%d" % ("%dh" % (m // 60) if m >= 60 else "%dm" % m, at[m])
		                     for m in marks if m in at) or "-"
		found = sorted(os.path.basename(d) for d in glob.glob(os.path.join(F, "findings", "*")))
		crashes = sum(1 for d in found if d.startswith("crash"))
		hangs = sum(1 for d in found if d.startswith("hang"))
		rel = kernel
		new = not os.path.exists(report)
		with open(report, "a") as f:
		    if new:
		        f.write("# make fuzz: running totals\n\n"
		                "One row per `make fuzz` run (boot-tests/fuzz/fuzz.sh). images: images the guests\n"
		                "mounted or tried to (vm.py's count, this run); mounted: of those, mounted;\n"
		                "edges: distinct AFL edges in the driver's functions one guest saw this run;\n"
		                "edges over time: the same after 1, 5, 15 minutes... of the run;\n"
		                "corpus: AFL's queue after the run (it carries over); findings: distinct\n"
		                "crash/hang images in build/fuzz/findings after the run.\n\n"
		                "| date | kernel | minutes | images | images/s | mounted | edges | edges over time | corpus | findings | note |\n"
		                "|---|---|---|---|---|---|---|---|---|---|---|\n")
		    f.write("| %s | %s | %.0f | %d | %.2f | %d | %d | %s | %d | %d crash, %d hang | %s |\n" % (
		        time.strftime("%Y-%m-%d %H:%M", time.gmtime()), rel, secs / 60, execs,
		        execs / secs if secs else 0, mounted, edges, over_time, corpus, crashes, hangs, note))
		print("fuzz: %d images in %d s (%.2f/s), %d mounted, %d edges, corpus %d, findings: %s" % (
		    execs, secs, execs / secs if secs else 0, mounted, edges, corpus, ", ".join(found) or "none"))
	EOF
}

pids=()
cmd_run() {
	local secs i t0 mode=() kcov
	secs=$(seconds "${FUZZ_TIME:-30m}")
	[[ -f $KERNEL ]] || die "no kernel $KERNEL (make kernel-debug, or FUZZ_KERNEL=...)"
	command -v afl-fuzz >/dev/null || die "afl-fuzz is missing (make deps: package afl++)"
	[[ $JOBS =~ ^[1-9]$ ]] || die "FUZZ_JOBS: 1-9 (got '$JOBS')"
	build_bins
	build_initrd
	[[ -d $F/seeds ]] || build_seeds
	rm -rf "$F/run"
	mkdir -p "$F/run" "$F/afl" "$F/findings"
	kcov=0
	grep -qs '^CONFIG_KCOV=y' "$(kobj)/.config" && kcov=1
	((kcov)) || mode=(-n)
	local -a app
	mapfile -t app < <(vm_args)
	echo "fuzz: $JOBS guest(s) on $KERNEL for $secs s$( ((kcov)) || echo ', no KCOV: afl-fuzz -n'); logs in $F/run"
	# Ctrl-C or a TERM ends the run early, with its row in the report
	local stopped=0
	trap 'kill "${pids[@]}" 2>/dev/null; wait' EXIT
	trap 'stopped=1' INT TERM
	t0=$(date +%s)
	for ((i = 1; i <= JOBS; i++)); do
		python3 "$here/vm.py" serve "${app[@]}" --logdir "$F/run" --name "vm-$i" --sock "$F/run/vm-$i.harness.sock" --findings "$F/findings" \
			--stats "$F/run/vm-$i.stats" \
			--duration $((secs + 600)) >"$F/run/vm-$i.log" 2>&1 &
		pids+=($!)
	done
	for ((i = 1; i <= JOBS; i++)); do
		# (without coverage, -n, each instance has a queue of its own)
		local role=(-S "s$i") out=$F/afl
		((i == 1)) && role=(-M m1)
		((kcov)) || role=() out=$F/afl-n$i
		# -t: vm.py times an image itself (FUZZ_EXEC_TIMEOUT); AFL's own limit only has
		# to outlast a guest's boot after a crash
		LSQFUZZ_SOCK=$F/run/vm-$i.harness.sock AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 \
			AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_BIN_CHECK=1 AFL_NO_UI=1 \
			AFL_MAP_SIZE=65536 AFL_AUTORESUME=1 AFL_FAST_CAL=1 AFL_FORKSRV_INIT_TMOUT=60000 \
			timeout --kill-after=30 $((secs + 300)) afl-fuzz -i "$F/seeds" -o "$out" "${role[@]}" \
			-V "$secs" -t 900000+ -m none "${mode[@]}" -- "$F/bin/lsqfuzz-harness" @@ \
			>"$F/run/afl-$i.log" 2>&1 &
		pids+=($!)
	done
	# progress on the terminal every minute, until every afl-fuzz has ended (-V)
	local alive=1 next=$((t0 + 60))
	while ((alive)); do
		sleep 5
		if ((stopped)); then
			echo "fuzz: stopped after $(($(date +%s) - t0)) s; the report gets this run's row" >&2
			kill -INT "${pids[@]:JOBS}" 2>/dev/null || true
			break
		fi
		alive=0
		for ((i = 1; i <= JOBS; i++)); do
			kill -0 "${pids[$((JOBS + i - 1))]}" 2>/dev/null && alive=1
		done
		(($(date +%s) >= next)) || continue
		next=$((next + 60))
		local line=""
		for ((i = 1; i <= JOBS; i++)); do
			line+=" vm-$i: $(tail -n 1 "$F/run/vm-$i.stats" 2>/dev/null | python3 -c 'import json,sys
try: d=json.loads(sys.stdin.read()); print("%d images %d edges %d crash %d hang" % (d["execs"], d["edges"], d["crashes"], d["hangs"]))
except Exception: print("booting")')"
		done
		echo "fuzz: $(($(date +%s) - t0)) s:$line"
	done
	if ((!stopped && $(date +%s) - t0 < secs - 60)); then
		for ((i = 1; i <= JOBS; i++)); do
			echo "fuzz: afl-fuzz $i: $(tail -n 4 "$F/run/afl-$i.log" | tr '\n' '|')" >&2
		done
		die "afl-fuzz ended early (logs: $F/run/afl-*.log)"
	fi
	wait "${pids[@]:JOBS}" 2>/dev/null || true
	kill "${pids[@]:0:JOBS}" 2>/dev/null || true
	wait || true
	trap - EXIT INT TERM
	report_row $(($(date +%s) - t0))
}

# report: the row of the last run (build/fuzz/run) for a run that could not write it
# (killed, or its host went down): its length is the longest guest's
cmd_report() {
	local secs
	secs=$(cat "$F"/run/vm-*.stats 2>/dev/null | python3 -c 'import json, sys
print(max([int(json.loads(l)["secs"]) for l in sys.stdin if l.strip()] or [0]))')
	((secs > 0)) || die "no run to report in $F/run"
	report_row "$secs"
}

cmd_replay() {
	local -a imgs=("$@")
	[[ -f $KERNEL ]] || die "no kernel $KERNEL"
	build_bins
	build_initrd
	if ((${#imgs[@]} == 0)); then
		mapfile -t imgs < <(find "$F/findings" -name image 2>/dev/null | sort;
			find "$REGRESSION" -name '*.img' 2>/dev/null | sort)
	fi
	((${#imgs[@]})) || die "nothing to replay"
	local -a app
	mapfile -t app < <(vm_args)
	python3 "$here/vm.py" replay "${app[@]}" --logdir "$F/replay" --name "replay${FUZZ_MODULE:+-$FUZZ_MODULE}" "${imgs[@]}"
}

# compare: every image of AFL's queues (build/fuzz/afl*/*/queue, once each) and every
# finding through Debian's kernel twice, with its stock squashfs.ko and with ours as a
# module (FUZZ_MODULE=stock, ours): what each mounted, refused (by errno), crashed on
# or hung on. Results in build/fuzz/compare/; a summary on stdout.
cmd_compare() {
	local kver m out=$F/compare
	kver=$(ls_debian_kver)
	KERNEL=${DEB_KERNEL:-/boot/vmlinuz-$kver}
	rm -rf "$out" && mkdir -p "$out/images"
	# the queues share entries (secondary instances copy each other's finds): one copy each
	find "$F"/afl*/*/queue "$F/findings" -maxdepth 2 -type f \( -name 'id:*' -o -name image \) \
		-exec sha256sum {} + 2>/dev/null | sort -u -k1,1 |
		while read -r sum path; do cp "$path" "$out/images/${sum:0:16}.img"; done
	echo "fuzz: $(find "$out/images" -type f | wc -l) distinct images, through $KERNEL"
	for m in stock ours; do
		FUZZ_MODULE=$m cmd_replay "$out"/images/*.img >"$out/$m.txt" 2>"$out/$m.log" || true
	done
	python3 - "$out" <<-'EOF'
		import collections, errno, os, sys
		out = sys.argv[1]
		for m in ("stock", "ours"):
		    c = collections.Counter()
		    for line in open(os.path.join(out, m + ".txt")):
		        w = line.split()
		        if len(w) < 2:
		            continue
		        if w[1] == "ok":
		            e = int(w[2].split("=")[1])
		            c["mounted" if e == 0 else "refused " + errno.errorcode.get(e, str(e))] += 1
		        else:
		            c[w[1]] += 1
		    print("fuzz: %-5s squashfs.ko: %d images: %s" % (m, sum(c.values()),
		          ", ".join("%s %d" % kv for kv in sorted(c.items(), key=lambda kv: -kv[1]))))
	EOF
}

# check: make check's short fresh fuzzing, TAP: FUZZ_CHECK_TIME (default 180 s) of
# one guest on FUZZ_KERNEL if it is built (the debug kernel), else on our kernel,
# whose lack of KCOV makes it afl-fuzz -n; into build/fuzz-check (the running queue
# and report of make fuzz are left alone)
cmd_check() {
	local n=0 failed=0 out rc=0 execs
	tap() {
		n=$((n + 1))
		if [[ $1 == ok ]]; then echo "ok $n - $2"; else failed=$((failed + 1)) && echo "not ok $n - $2"; fi
	}
	[[ -f $KERNEL ]] || KERNEL=$OUR_KERNEL
	JOBS=1
	F=$BUILD/fuzz-check
	REPORT=$F/REPORT.md
	rm -rf "$F" && mkdir -p "$F"
	[[ -d $BUILD/fuzz/seeds ]] || F=$BUILD/fuzz build_seeds >/dev/null
	cp -r "$BUILD/fuzz/seeds" "$F/seeds"
	out=$(FUZZ_TIME=${FUZZ_CHECK_TIME:-180} cmd_run 2>&1) || rc=$?
	printf '# %s\n' "${out//$'\n'/$'\n'# }"
	execs=$(tail -n 1 "$F/run/vm-1.stats" 2>/dev/null | python3 -c 'import json, sys
try: print(json.loads(sys.stdin.read())["execs"])
except Exception: print(0)')
	if [[ $rc == 0 ]]; then
		tap ok "make fuzz's run on $(krelease) ended as asked"
	else
		tap not "make fuzz's run on $(krelease) ended as asked (rc=$rc)"
	fi
	if ((execs > 0)); then
		tap ok "the guest mounted and walked $execs fuzzed images"
	else
		tap not "the guest mounted and walked fuzzed images (none)"
	fi
	local found
	found=$(find "$F/findings" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null)
	if [[ -z $found ]]; then
		tap ok "no kernel report, crash or hang in $execs fuzzed images"
	else
		tap not "no kernel report, crash or hang: $found(build/fuzz-check/findings/*/repro.sh)"
	fi
	echo "$((n - failed)) passed, $failed failed"
	((failed == 0))
}

case ${1:-} in
run) cmd_run ;;
check) cmd_check ;;
replay) shift && cmd_replay "$@" ;;
compare) cmd_compare ;;
report) cmd_report ;;
seeds) build_seeds ;;
*)
	echo "usage: fuzz.sh run|check|replay [IMAGE...]|compare|report|seeds" >&2
	exit 2
	;;
esac
