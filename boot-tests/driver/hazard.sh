# shellcheck shell=bash disable=SC2154 # here, R, D, IMG, ok, not_ok, note: run.sh
# boot-tests/driver/hazard.sh: the hazard tests (sourced by run.sh, which has ok,
# not_ok, note, build dirs D, R, IMG and ls_qemu): hazards the fuzzer cannot reach,
# because they need nesting, a slow medium, memory cgroups, allocation failure or
# an inode whose fields lie.
#   hazard_prepare   the trees and images (cached in IMG by a key of what makes
#                    them) and the sums the guest checks against, in R/hz/
#   hazard_boots     boot our kernel (and DRIVER_HAZARD's others) twice: hz1 with
#                    1 vCPU (a slow medium beside a fast one; a squashfs image inside
#                    a squashfs image), hz2 with 2 vCPUs (a one-byte read and a page
#                    fault, a crafted image, a 500 MiB tree in a memory cgroup, the
#                    nested image again, SEEK_DATA over 2^22 holes, -Xbcj images, 24
#                    readers of a 4 KiB-block image nested); then check what they said
# The guest side: hazard-guest.sh. Environment: DRIVER_HAZARD (default "ours"; also
# "debian.ours" and "debian.stock": Debian's kernel with that module), LSQ_SLOW_BPS
# (the slow disk's bytes a second, default 131072), DRIVER_HAZARD_TIMEOUT (seconds a
# hazard boot may take, default 900; the 6.12 debug kernel's hazard2 took 451 s, 7.3's
# 1193 s: give a debug kernel 2700),
# DRIVER_HAZARD_BOOTS (which of the two boots, default "1 2").

HZ=$R/hz

# hz_gen KIND OUT: a deterministic tree (python3, seeded)
hz_gen() {
	rm -rf "$2" && mkdir -p "$2"
	python3 - "$1" "$2" <<'EOF'
import os, random, sys

kind, out = sys.argv[1], sys.argv[2]
rng = random.Random("livesquash-hazard-" + kind)
WORDS = ("squashfs inode block fragment table directory xattr compressor kernel page "
         "cache metadata superblock lookup export live medium overlay loop device "
         "the a of and to in is that for it with as was on be by this are").split()
pool = (" ".join(rng.choices(WORDS, k=700000)) + "\n").encode()

def text(n):
    off = rng.randrange(len(pool) - n)
    return pool[off:off + n]

def put(rel, data):
    p = os.path.join(out, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)

if kind in ("slow", "fast"):          # 64 x 128 KiB of text
    for i in range(64):
        put("f%03d" % i, text(128 << 10))
elif kind == "big":                   # 16 MiB that does not compress
    put("big", rng.randbytes(16 << 20))
elif kind == "inner":                 # 96 x 128 KiB of text
    for i in range(96):
        put("d%d/f%03d" % (i % 4, i), text(128 << 10))
elif kind == "inner4k":               # 48 x 2 MiB of text (4 KiB blocks: 512 each)
    for i in range(48):
        put("d%d/f%03d" % (i % 4, i), text(2 << 20))
elif kind in ("nest", "nest4k"):      # the outer tree (inner*.img is added by hz_image)
    for i in range(32):
        put("other/f%03d" % i, text(256 << 10))
elif kind == "holes":                 # 16 GiB of holes, then 4 bytes
    with open(os.path.join(out, "holes"), "wb") as f:
        f.truncate(16 << 30)
        f.seek(16 << 30)
        f.write(b"tail")
elif kind == "bcj":                   # text and bytes, for -Xbcj images
    for i in range(8):
        put("t%d" % i, text(96 << 10))
        put("b%d" % i, rng.randbytes(32 << 10))
elif kind == "crafted":               # patched by corrupt.py crafted
    put("a", b"a\n")
    with open(os.path.join(out, "huge"), "wb") as f:
        f.truncate(8 << 20)
    os.symlink("x" * 4000, os.path.join(out, "s0"))
elif kind == "tree":                  # ~500 MiB in 40,000 files of 1-24 KiB
    total = 0
    i = 0
    while total < 500 << 20:
        n = rng.randrange(1 << 10, 24 << 10)
        put("d%03d/f%05d" % (i % 200, i), text(n))
        total += n
        i += 1
else:
    sys.exit("hz_gen: unknown kind " + kind)
EOF
}

# hz_image KIND COMP BS OPTS...: the image of tree KIND, cached in IMG; prints its path.
# Beside it KEY.sums: sha256sum lines of (a sample of) its files, paths from the root.
hz_image() {
	local kind=$1 comp=$2 bs=$3 key img t
	shift 3
	key=$( {
		declare -f hz_gen hz_image
		echo "$kind|$comp|$bs|$*"
		mksquashfs -version | head -n 1
		sha256sum <"$here/corrupt.py"
	} | sha256sum | cut -c1-24)
	img=$IMG/hz-$kind-$key.img
	if [[ ! -s $img || ! -e $img.sums ]]; then
		t=$HZ/tree-$kind
		# mksquashfs reads every hole of a sparse file: tmpfs gives 16 GiB of
		# them in 7 s, ext4 in 60
		[[ $kind != holes || ! -d /dev/shm ]] || t=/dev/shm/livesquash-hz-holes.$$
		hz_gen "$kind" "$t"
		case $kind in
		nest) cp "$(hz_image inner zstd 128K)" "$t/inner.img" ;;
		nest4k) cp "$(hz_image inner4k zstd 4K)" "$t/inner4k.img" ;;
		esac
		mksquashfs "$t" "$img.tmp" -noappend -comp "$comp" -b "$bs" -no-progress -quiet "$@" \
			>"$HZ/mk-$kind.log" 2>&1
		if [[ $kind == crafted ]]; then
			python3 "$here/corrupt.py" crafted "$img.tmp" "$img.tmp2" >>"$HZ/mk-$kind.log"
			mv "$img.tmp2" "$img.tmp"
		fi
		(cd "$t" && find . -type f ! -name 'inner*.img' ! -name holes | LC_ALL=C sort | awk 'NR % 200 == 1 || NR < 200' |
			xargs -r sha256sum) >"$img.sums"
		mv "$img.tmp" "$img"
		rm -rf "$t"
	fi
	echo "$img"
}

hazard_prepare() {
	local t0 k
	t0=$(date +%s)
	mkdir -p "$HZ"
	# lines: id, image (the list ls_qemu reads)
	{
		printf 'h-slow\t%s\n' "$(hz_image slow zstd 128K)"
		printf 'h-fast\t%s\n' "$(hz_image fast zstd 128K)"
		printf 'h-nest\t%s\n' "$(hz_image nest zstd 128K)"
	} >"$HZ/hz1.list"
	{
		printf 'h-big\t%s\n' "$(hz_image big zstd 128K)"
		printf 'h-crafted\t%s\n' "$(hz_image crafted gzip 4K -noI -noD -noF -noX)"
		printf 'h-tree\t%s\n' "$(hz_image tree zstd 128K -Xcompression-level 3 -processors 2)"
		printf 'h-seek\t%s\n' "$(hz_image holes gzip 4K)"
		printf 'h-bcj-ia64\t%s\n' "$(hz_image bcj xz 128K -Xbcj ia64)"
		printf 'h-bcj-powerpc\t%s\n' "$(hz_image bcj xz 128K -Xbcj powerpc)"
		printf 'h-nest\t%s\n' "$(hz_image nest zstd 128K)"
		printf 'h-nest4k\t%s\n' "$(hz_image nest4k zstd 128K)"
	} >"$HZ/hz2.list"
	cp "$(hz_image tree zstd 128K -Xcompression-level 3 -processors 2).sums" "$HZ/hz-tree.sums"
	cp "$(hz_image inner zstd 128K).sums" "$HZ/hz-inner.sums"
	cp "$(hz_image inner4k zstd 4K).sums" "$HZ/hz-inner4k.sums"
	cp "$(hz_image bcj xz 128K -Xbcj powerpc).sums" "$HZ/hz-bcj.sums"
	for k in tree inner inner4k bcj; do
		[[ -s $HZ/hz-$k.sums ]] || not_ok "hazard: the sums of the $k tree are there"
	done
	note "hazard: images in $(($(date +%s) - t0)) s ($(cut -f 1 "$HZ/hz2.list" | tr '\n' ' '))"
}

# hz_get OUT KEY WORD: the value of WORD=... on the guest's "@@ KEY" line
hz_get() { awk -v k="$2" -v w="$3" '$1 == "@@" && $2 == k { for (i = 3; i <= NF; i++) if (index($i, w "=") == 1) { print substr($i, length(w) + 2); exit } }' "$1"; }
hz_line() { grep -m1 "^@@ $2 " "$1" | cut -c1-300 || true; }
# hz_true DESC EXPR LINE: ok when the awk expression EXPR holds
hz_true() {
	if awk "BEGIN { exit !($2) }" 2>/dev/null; then
		ok "$1"
	else
		not_ok "$1 (${3:-no line})"
	fi
}

# hz_boot NAME KERNEL INITRD DRV LIST SMP MEM [QEMU ARGS...]
hz_boot() {
	local name=$1 kernel=$2 initrd=$3 drv=$4 list=$5 smp=$6 mem=$7 base
	shift 7
	base=$R/$name
	ls_qemu "$name" "${DRIVER_HAZARD_TIMEOUT:-900}" --files "$base" --results-raw --mem "$mem" --smp "$smp" --nodefaults \
		--kernel "$kernel" --initrd "$initrd" \
		--append "console=ttyS0,115200 panic=-1 tsc=unstable sysrq_always_enabled lsq.mode=hazard lsq.drv=$drv lsq.ndisks=$(grep -c . "$list") ${DRIVER_APPEND:-}" \
		--virtio-disks "$list" readonly --stall 300 -- "$@"
	note "boot $name: qemu rc=$LS_QEMU_RC in $LS_QEMU_SECONDS s"
	local out=$base.out.txt con=$base.console.txt
	if grep -q '^@@ DONE' "$out"; then
		ok "$name: the guest ran every hazard test to its end"
	else
		not_ok "$name: the guest ran every hazard test to its end (rc=$LS_QEMU_RC, $(tail -n 1 "$out" | cut -c1-120))"
	fi
	if ls_console_problems "$con" >"$base.problems" && [[ -s $base.problems ]]; then
		not_ok "$name: console clean: $(head -n 3 "$base.problems" | tr '\n' '|' | cut -c1-300)"
	else
		ok "$name: console clean (no BUG/WARNING/Oops/Call Trace/KASAN/UBSAN/panic, no hung task)"
	fi
}

# the checks of boot NAME (1 or 2: which tests it ran)
hz_check() {
	local name=$1 which=$2 out=$R/$1.out.txt l
	if [[ $which == 1 ]]; then
		l=$(hz_line "$out" SLOW)
		hz_true "$name: a read of a fast disk beside a reader of a disk slowed to ${LSQ_SLOW_BPS:-131072} B/s (same compressor, 1 vCPU) takes at most twice its time alone + 1 s" \
			"$(hz_get "$out" SLOW beside) + 0 <= 2 * $(hz_get "$out" SLOW alone) + 1 && $(hz_get "$out" SLOW slow_read_during) + 0 > 0" "$l"
	else
		l=$(hz_line "$out" ONEBYTE)
		local bs ra
		bs=$(hz_get "$out" ONEBYTE bs) ra=$(hz_get "$out" ONEBYTE ra_kb)
		hz_true "$name: a cold 1-byte read of a 16 MiB file (2 vCPUs) reads at most one block (${bs:-?} bytes) + 8 KiB from the disk" \
			"$(hz_get "$out" ONEBYTE read) + 0 > 0 && $(hz_get "$out" ONEBYTE read) + 0 <= ${bs:-0} + 8192" "$l"
		# each read of a run of blocks also fetches the rest of the device's logical
		# blocks at its ends: at most 1 KiB per block of the window (7.3's virtio
		# disks have an 8 MiB window: 65 blocks in 22 runs)
		hz_true "$name: a cold page fault in its middle reads at most the readahead window (${ra:-?} KiB) + one block + 8 KiB + 1 KiB a block, and the right byte" \
			"$(hz_get "$out" ONEBYTE fault) + 0 > 0 && $(hz_get "$out" ONEBYTE fault) + 0 <= ${ra:-0} * 1024 + ${bs:-0} + 8192 + (${ra:-0} * 1024 / (${bs:-1} + 0) + 1) * 1024 && $(hz_get "$out" ONEBYTE byte_ok) == 1" "$l"
		l=$(hz_line "$out" SYMLEAK)
		hz_true "$name: 10,000 lookups of a symlink with link count 0 each fail with EUCLEAN and leave < 4 MiB more unreclaimable slab" \
			"$(hz_get "$out" SYMLEAK ok) == 0 && $(hz_get "$out" SYMLEAK EUCLEAN) == 10000 && $(hz_get "$out" SYMLEAK sunreclaim_kb) + 0 < 4096" "$l"
		l=$(hz_line "$out" SPARSE)
		hz_true "$name: a read 2040 blocks into a file claiming 2^46 bytes gives zeros and costs < 1 MiB of slab and vmalloc" \
			"$(hz_get "$out" SPARSE size) == 70368744177664 && $(hz_get "$out" SPARSE nonzero) == 0 && $(hz_get "$out" SPARSE mem_kb) + 0 < 1024" "$l"
		l=$(hz_line "$out" CAP)
		# a block is counted as it is added, the oldest go right after: for that moment a
		# cache may hold one more per adder (the tar and the fragment read-ahead: 2)
		hz_true "$name: while a tar reads a 500 MiB tree, the meta and fragment caches stay within their caps (mountstats; + 2 blocks being added)" \
			"$(hz_get "$out" CAP samples) + 0 > 2 && $(hz_get "$out" CAP fragmax) + 0 > 0 && $(hz_get "$out" CAP frag_seen) <= $(hz_get "$out" CAP fragmax) + 2 && $(hz_get "$out" CAP meta_seen) <= $(hz_get "$out" CAP metamax) + 2 && $(hz_get "$out" CAP names_seen) <= $(hz_get "$out" CAP namesmax)" "$l"
		l=$(hz_line "$out" MEMCG)
		local sha1 sha2
		sha1=$(hz_get "$out" CAP sha) sha2=$(hz_get "$out" MEMCG sha)
		if [[ -n $sha1 && $sha1 == "$sha2" && $(hz_get "$out" MEMCG oom_kill) == 0 ]]; then
			ok "$name: the same tar inside a 64 MiB memory cgroup gives the same bytes, with no OOM kill"
		else
			not_ok "$name: the same tar inside a 64 MiB memory cgroup gives the same bytes, with no OOM kill ($l)"
		fi
		hz_true "$name: the cgroup's own reclaim (memory.reclaim) frees the cached blocks charged to it (after the tar, 1,000 files read again in the cgroup)" \
			"$(hz_get "$out" MEMCG blocks_before) + 0 > 16 && $(hz_get "$out" MEMCG blocks_after) + 0 < $(hz_get "$out" MEMCG blocks_before) / 4" "$l"
		l=$(hz_line "$out" FAILWORK)
		if [[ $l == *" skip "* ]]; then
			note "$name: $l"
		else
			hz_true "$name: readers while a fifth of their slab allocations fail (failslab) all end, and then read right" \
				"$(hz_get "$out" FAILWORK ended) == 1 && $(hz_get "$out" FAILWORK sums_ok) + 0 > 0 && $(hz_get "$out" FAILWORK sums_bad) == 0" "$l"
		fi
	fi
	l=$(hz_line "$out" NEST)
	hz_true "$name: cold reads of a squashfs image inside a squashfs image (same compressor), beside a reader of the outer one, end with the right bytes" \
		"$(hz_get "$out" NEST ended) == 1 && $(hz_get "$out" NEST sums_ok) == 1 && $(hz_get "$out" NEST hung) == 0" "$l"
	[[ $which != 2 ]] || hz_check2 "$name"
}

# the checks of hazard2's later tests: SEEK_DATA over 2^22 holes, xz filters the
# kernel may lack, the many-reader nested mount with 4 KiB blocks
hz_check2() {
	local name=$1 out=$R/$1.out.txt l f
	l=$(hz_line "$out" SEEK)
	hz_true "$name: SEEK_DATA from 0 over a file of 2^22 sparse 4 KiB blocks returns within 1 s (or dies within 1 s of SIGKILL), no soft lockup" \
		"(($(hz_get "$out" SEEK killed) == 0 && $(hz_get "$out" SEEK secs) + 0 <= 1) || ($(hz_get "$out" SEEK killed) == 1 && $(hz_get "$out" SEEK gone_secs) + 0 <= 1)) && $(hz_get "$out" SEEK softlockup) == 0" "$l"
	if [[ $name != *stock* ]]; then
		hz_true "$name: ... and its answers are right: data at 16 GiB (the tail), a hole at 0" \
			"$(hz_get "$out" SEEK killed) == 1 || ($(hz_get "$out" SEEK result) == 17179869184 && $(hz_get "$out" SEEK hole) == 0)" "$l"
	fi
	for f in ia64 powerpc; do
		l=$(hz_line "$out" "BCJ-$f")
		# refused (EOPNOTSUPP, one line naming the filter, with errors=panic too), or
		# mounted and read right where the kernel's xz decoder has the filter; no
		# kernel here has ia64's (gone from 6.12's lib/xz, off in Debian's 6.1)
		hz_true "$name: an xz image made with -Xbcj $f is refused at mount with EOPNOTSUPP and one line naming the filter (also with errors=panic), or reads right where the decoder has it" \
			"($(hz_get "$out" "BCJ-$f" mounted) == 0 && $(hz_get "$out" "BCJ-$f" eopnotsupp) == 2 && $(hz_get "$out" "BCJ-$f" lines) == 2 && $(hz_get "$out" "BCJ-$f" corrupt) == 0) || ($(hz_get "$out" "BCJ-$f" mounted) == 2 && $(hz_get "$out" "BCJ-$f" sums_ok) + 0 == 16 && $(hz_get "$out" "BCJ-$f" corrupt) == 0 && \"$f\" != \"ia64\")" "$l"
	done
	l=$(hz_line "$out" NEST4K)
	hz_true "$name: 24 parallel cold readers of a 4 KiB-block image inside a squashfs image (+1 of the outer) all end within 240 s with the right bytes, no hung task" \
		"$(hz_get "$out" NEST4K ended) == 1 && $(hz_get "$out" NEST4K sums_ok) == 24 && $(hz_get "$out" NEST4K hung) == 0" "$l"
}

hazard_boots() {
	local drv kernel initrd d bps=${LSQ_SLOW_BPS:-131072}
	# guest MiB: DRIVER_MEM (the debug kernel wants ~1536), hazard2 at least 1536
	local mem1=${DRIVER_MEM:-512} mem2=$((${DRIVER_MEM:-512} > 1536 ? ${DRIVER_MEM:-512} : 1536))
	local boots=${DRIVER_HAZARD_BOOTS:-1 2}
	for d in ${DRIVER_HAZARD:-ours}; do
		case $d in
		ours) kernel=$R/bzImage-ours initrd=$R/initrd-ours.gz drv=builtin ;;
		debian.ours | debian.stock) kernel=$R/vmlinuz-debian initrd=$R/initrd-debian.gz drv=${d#debian.} ;;
		*)
			not_ok "hazard: DRIVER_HAZARD has '$d' (ours, debian.ours or debian.stock)"
			continue
			;;
		esac
		# h-slow is the first disk (d0): QEMU throttles its reads
		if [[ " $boots " == *" 1 "* ]]; then
			hz_boot "$d-hazard1" "$kernel" "$initrd" "$drv" "$HZ/hz1.list" 1 "$mem1" \
				-set "drive.d0.throttling.bps-read=$bps"
			hz_check "$d-hazard1" 1
		fi
		if [[ " $boots " == *" 2 "* ]]; then
			hz_boot "$d-hazard2" "$kernel" "$initrd" "$drv" "$HZ/hz2.list" 2 "$mem2"
			hz_check "$d-hazard2" 2
		fi
	done
}
