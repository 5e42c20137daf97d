# shellcheck shell=sh disable=SC2154 # rbytes, gl_*: guest-init.sh and guest-lib.sh
# boot-tests/driver/hazard-guest.sh: the hazard tests' guest side (lsq.mode=hazard),
# sourced by guest-init.sh (POSIX sh, busybox). The disks' ids say which tests run
# (in this order); the results are "@@ ..." lines that hazard.sh on the host checks:
#   h-fast     (with h-slow, a disk QEMU throttles to LSQ_SLOW_BPS) a cold read of
#              h-fast alone, then again while a reader waits for the slow disk:
#              "SLOW alone=S beside=S ..."; a mount's slow medium must not stall
#              another mount's reads
#   h-big      one byte read at 0, and one page fault in the middle of a large
#              file, cold: the bytes each reads from the disk ("ONEBYTE ...")
#   h-crafted  lookups of a symlink whose link count is 0 ("SYMLEAK ..."), a read
#              far into a file whose size claims 2^46 bytes ("SPARSE ..."): the
#              kernel memory each costs
#   h-tree     a tar of a 500 MiB tree, outside any cgroup ("CAP ...": the most
#              our caches held against their caps) and inside a 64 MiB memory
#              cgroup ("MEMCG ...": no OOM kill, the caches reclaimed from it);
#              on a kernel with failslab, readers while a fifth of their slab
#              allocations fail ("FAILWORK ...")
#   h-seek     SEEK_DATA from 0 over 2^22 sparse blocks: returns, or dies of
#              SIGKILL, within 1 s ("SEEK ...")
#   h-bcj-*    xz images made with -Xbcj ia64 / powerpc: refused with EOPNOTSUPP
#              where the kernel's xz decoder lacks the filter, else read ("BCJ-...")
#   h-nest     (last but one: a deadlock would leave its readers stuck) a squashfs
#              image inside this one (the same compressor) loop-mounted, its files
#              read cold beside a reader of the outer image ("NEST ...")
#   h-nest4k   the same with a 4 KiB-block inner image and 24 readers at once
#              ("NEST4K ...")
# /hz-*.sums (from the host): sha256sum lines of the trees' files.

hz_dev() { awk -v id="$1" '$1 == id { print $2 }' /tmp/disks; }
hz_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
hz_cold() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}
# hz_stat DEV FIELD: one figure of the mount of DEV in /proc/self/mountstats (our
# show_stats): meta, frag (blocks cached), metamax, fragmax (their caps in blocks),
# names, namesmax (bytes); -1 when the driver says nothing of it
hz_stat() {
	awk -v dev="/dev/$1" -v f="$2" '
		$1 == "device" { on = ($2 == dev) }
		on && $1 == "meta" && $2 == "cache:" { v["meta"] = $3; v["metamax"] = $9 }
		on && $1 == "fragment" && $2 == "cache:" { v["frag"] = $3; v["fragmax"] = $9 }
		on && $1 == "name" && $2 == "tables:" { v["names"] = $3; v["namesmax"] = $NF + 0 }
		END { print (f in v) ? v[f] + 0 : -1 }' /proc/self/mountstats
}
# hz_wait SECS PID...: wait for the PIDs at most SECS seconds; 0 if all ended
hz_wait() {
	_n=$1
	shift
	while [ "$_n" -gt 0 ]; do
		_alive=0
		for _p in "$@"; do kill -0 "$_p" 2>/dev/null && _alive=1; done
		[ $_alive = 0 ] && return 0
		sleep 1
		_n=$((_n - 1))
	done
	return 1
}
# seconds (two decimals) a command takes
hz_time() {
	_a=$(gl_uptime)
	"$@"
	_rc=$?
	awk -v a="$_a" -v b="$(gl_uptime)" 'BEGIN { printf "%.2f", b - a }'
	return $_rc
}
hz_cat() { find "$1" -type f | sort | xargs cat >/dev/null; }
# hz_progress DEV: every 30 s, while /tmp/progress is there, one "@@ PROGRESS" line
# if DEV was read since the last one; a stuck guest stays silent, so the host's stall
# watchdog still catches it (a tar of h-tree takes minutes on the debug kernel)
hz_progress() {
	_last=-1
	while [ -e /tmp/progress ]; do
		sleep 30
		_now=$(rbytes "$1")
		[ "$_now" = "$_last" ] || gl_say "PROGRESS $1 read=$_now uptime=$(gl_uptime)"
		_last=$_now
	done
}

hz_slow() { # DEV (the fast one)
	slow=$(hz_dev h-slow)
	mkdir -p /mnt/slow /mnt/fast
	if ! mount -t squashfs -o ro "/dev/$slow" /mnt/slow || ! mount -t squashfs -o ro "/dev/$1" /mnt/fast; then
		gl_say "SLOW mount-failed"
		return
	fi
	hz_cold
	alone=$(hz_time hz_cat /mnt/fast)
	hz_cold
	b0=$(rbytes "$slow")
	cat /mnt/slow/f* >/dev/null &
	sp=$!
	sleep 3
	b1=$(rbytes "$slow")
	beside=$(hz_time hz_cat /mnt/fast)
	b2=$(rbytes "$slow")
	kill "$sp" 2>/dev/null
	hz_wait 120 "$sp"
	gl_say "SLOW alone=$alone beside=$beside slow_read_before=$((b1 - b0)) slow_read_during=$((b2 - b1)) smp=$(grep -c ^processor /proc/cpuinfo)"
	umount /mnt/fast
	umount /mnt/slow
}

hz_onebyte() { # DEV DRV
	mkdir -p /mnt/b
	o=ro,meta_readahead=0
	[ "$2" = stock ] && o=ro
	mount -t squashfs -o "$o" "/dev/$1" /mnt/b || {
		gl_say "ONEBYTE mount-failed"
		return
	}
	f=/mnt/b/big
	hz_cold
	stat "$f" >/dev/null
	b0=$(rbytes "$1")
	dd if="$f" of=/dev/null bs=1 count=1 2>/dev/null
	b1=$(rbytes "$1")
	hz_cold
	stat "$f" >/dev/null
	mid=$(($(stat -c %s "$f") / 2 + 12345))
	b2=$(rbytes "$1")
	byte=$(lsqx -m "$f" "$mid")
	b3=$(rbytes "$1")
	want=$(dd if="$f" bs=1 skip="$mid" count=1 2>/dev/null | od -A n -t x1 | tr -d ' ')
	gl_say "ONEBYTE read=$((b1 - b0)) fault=$((b3 - b2)) byte_ok=$([ "$byte" = "$want" ] && echo 1 || echo 0) bs=$(stat -f -c %S /mnt/b) ra_kb=$(cat "/sys/block/$1/queue/read_ahead_kb") smp=$(grep -c ^processor /proc/cpuinfo)"
	umount /mnt/b
}

hz_crafted() { # DEV
	mkdir -p /mnt/c
	mount -t squashfs -o ro "/dev/$1" /mnt/c || {
		gl_say "SYMLEAK mount-failed"
		return
	}
	# symlink s0: link count 0, a 4000-byte target; each lookup fails
	lsqx -n 100 /mnt/c/s0 >/dev/null
	sync
	s0=$(hz_kb SUnreclaim)
	out=$(lsqx -n 10000 /mnt/c/s0)
	s1=$(hz_kb SUnreclaim)
	gl_say "SYMLEAK n=10000 $out sunreclaim_kb=$((s1 - s0))"
	# huge: 2^46 bytes claimed, 2048 real (sparse) blocks of 4 KiB; block 2040 is a
	# hole past the walk's first checkpoint (1024 blocks)
	dd if=/mnt/c/huge bs=4096 count=1 of=/dev/null 2>/dev/null
	m0=$(($(hz_kb VmallocUsed) + $(hz_kb Slab)))
	z=$(dd if=/mnt/c/huge bs=4096 skip=2040 count=1 2>/tmp/err | tr -d '\000' | wc -c)
	m1=$(($(hz_kb VmallocUsed) + $(hz_kb Slab)))
	gl_say "SPARSE size=$(stat -c %s /mnt/c/huge) nonzero=$z mem_kb=$((m1 - m0)) $(gl_first 1 /tmp/err)"
	umount /mnt/c
}

# hz_sample DEV FILE: every half second, the blocks our caches hold, until /tmp/sampling goes
hz_sample() {
	while [ -e /tmp/sampling ]; do
		echo "$(hz_stat "$1" meta) $(hz_stat "$1" frag) $(hz_stat "$1" names)" >>"$2"
		sleep 0.5
	done
}

hz_tree() { # DEV
	mkdir -p /mnt/t
	mount -t squashfs -o ro "/dev/$1" /mnt/t || {
		gl_say "CAP mount-failed"
		return
	}
	touch /tmp/progress
	hz_progress "$1" &
	hz_cold
	: >/tmp/samples
	touch /tmp/sampling
	hz_sample "$1" /tmp/samples &
	sp=$!
	gl_t0
	sha=$(tar -cf - -C /mnt/t . | sha256sum | cut -c1-64)
	secs=$(gl_secs)
	rm /tmp/sampling
	wait "$sp"
	echo "$(hz_stat "$1" meta) $(hz_stat "$1" frag) $(hz_stat "$1" names)" >>/tmp/samples
	awk '{ for (i = 1; i <= 3; i++) if ($i + 0 > m[i]) m[i] = $i + 0 }
		END { printf "meta_seen=%d frag_seen=%d names_seen=%d samples=%d", m[1], m[2], m[3], NR }' /tmp/samples >/tmp/seen
	gl_say "CAP sha=$sha secs=$secs $(cat /tmp/seen) metamax=$(hz_stat "$1" metamax) fragmax=$(hz_stat "$1" fragmax) namesmax=$(hz_stat "$1" namesmax)"

	# the same inside a 64 MiB memory cgroup, then that cgroup's reclaim
	cg=/sys/fs/cgroup
	grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg
	echo +memory >$cg/cgroup.subtree_control
	mkdir -p $cg/hz
	echo 64M >$cg/hz/memory.max
	hz_cold
	gl_t0
	# shellcheck disable=SC2016 # $$ is the inner shell's
	sha2=$(sh -c 'echo $$ >/sys/fs/cgroup/hz/cgroup.procs && exec tar -cf - -C /mnt/t .' | sha256sum | cut -c1-64)
	secs=$(gl_secs)
	# the first 1,000 files again (~12 MiB, well inside the limit): their blocks
	# cached in the cgroup (6.12's reclaim at the limit leaves few after the tar)
	# shellcheck disable=SC2016 # $$ is the inner shell's
	sh -c 'echo $$ >/sys/fs/cgroup/hz/cgroup.procs && find /mnt/t -type f | head -n 1000 | xargs cat >/dev/null'
	before=$(($(hz_stat "$1" meta) + $(hz_stat "$1" frag)))
	cur=$(cat $cg/hz/memory.current)
	kern=$(awk '$1 == "kernel" || $1 == "slab" { s = s $1 "=" $2 " " } END { print s }' $cg/hz/memory.stat)
	echo 1G >$cg/hz/memory.reclaim 2>/dev/null
	after=$(($(hz_stat "$1" meta) + $(hz_stat "$1" frag)))
	gl_say "MEMCG limit=$(cat $cg/hz/memory.max) sha=$sha2 secs=$secs peak=$(cat $cg/hz/memory.peak 2>/dev/null || echo ?) current=$cur ${kern}blocks_before=$before blocks_after=$after $(sed 's/ /=/' $cg/hz/memory.events | tr '\n' ' ')"
	hz_failwork "$1"
	rm -f /tmp/progress
	umount /mnt/t
}

# FAILWORK: with failslab (the debug kernel), a fifth of the slab allocations of 4
# readers fail (decompression streams, buffers, cache blocks, the page cache's
# own); the readers, with caches dropped every second, must all end, and then,
# with the failures off, every sampled file reads right
hz_failwork() { # DEV
	fs=/sys/kernel/debug/failslab
	[ -d $fs ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	if [ ! -w $fs/probability ]; then
		gl_say "FAILWORK skip (no failslab in this kernel)"
		return
	fi
	echo 20 >$fs/probability
	echo 1 >$fs/interval
	echo -1 >$fs/times
	echo 0 >$fs/verbose
	echo N >$fs/ignore-gfp-wait
	echo Y >$fs/task-filter
	hz_cold
	pids=""
	for i in 0 1 2 3; do
		# shellcheck disable=SC2016 # $1 is the inner shell's
		sh -c 'echo 1 >/proc/self/make-it-fail && find /mnt/t -type f | awk -v i="$1" "NR % 4 == i" | xargs cat' _ "$i" \
			>/dev/null 2>&1 &
		pids="$pids $!"
	done
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		echo 3 >/proc/sys/vm/drop_caches
		sleep 1
	done
	# shellcheck disable=SC2086 # one pid a word
	if hz_wait 240 $pids; then ended=1; else ended=0; fi
	echo 0 >$fs/probability
	hz_cold
	(cd /mnt/t && sha256sum -c /hz-tree.sums >/tmp/sums 2>&1)
	gl_say "FAILWORK ended=$ended sums_ok=$(grep -c ': OK$' /tmp/sums) sums_bad=$(grep -vc ': OK$' /tmp/sums)"
}

# hz_nest_mount TAG DEV IMAGE LOOP OUTER INNER: DEV's image on OUTER, its file IMAGE
# loop-mounted (LOOP) on INNER, hung tasks reported after 10 s; says "TAG
# mount-failed" or "TAG inner-mount-failed" and fails where it cannot
hz_nest_mount() {
	mkdir -p "$5" "$6"
	if ! mount -t squashfs -o ro "/dev/$2" "$5"; then
		gl_say "$1 mount-failed"
		return 1
	fi
	if ! losetup -r "$4" "$5/$3" || ! mount -t squashfs -o ro "$4" "$6"; then
		gl_say "$1 inner-mount-failed"
		return 1
	fi
	echo 10 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
}

hz_nest() { # DEV
	hz_nest_mount NEST "$1" inner.img /dev/loop0 /mnt/outer /mnt/inner || return
	hz_cold
	gl_t0
	(cd /mnt/inner && find . -type f | sort | xargs sha256sum >/tmp/nest.sums) &
	a=$!
	hz_cat /mnt/outer/other &
	b=$!
	if hz_wait 150 "$a" "$b"; then
		ok=$(cmp -s /tmp/nest.sums /hz-inner.sums && echo 1 || echo 0)
		gl_say "NEST ended=1 secs=$(gl_secs) sums_ok=$ok files=$(wc -l </tmp/nest.sums) hung=$(dmesg | grep -c 'blocked for more than') smp=$(grep -c ^processor /proc/cpuinfo)"
		umount /mnt/inner && losetup -d /dev/loop0 && umount /mnt/outer
	else
		# stuck readers: leave them, and the mounts (the guest powers off)
		gl_say "NEST ended=0 secs=$(gl_secs) hung=$(dmesg | grep -c 'blocked for more than') smp=$(grep -c ^processor /proc/cpuinfo)"
	fi
}

# SEEK: SEEK_DATA from 0 over 2^22 sparse blocks, then (if it runs past 1 s) SIGKILL
hz_seek() { # DEV
	mkdir -p /mnt/s
	mount -t squashfs -o ro "/dev/$1" /mnt/s || {
		gl_say "SEEK mount-failed"
		return
	}
	f=/mnt/s/holes
	stat "$f" >/dev/null
	a=$(gl_uptime)
	lsqx -S "$f" data 0 >/tmp/seek.out 2>&1 &
	p=$!
	for _ in 1 2 3 4 5 6 7 8 9 10 11; do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	killed=0 gone=0
	if kill -0 "$p" 2>/dev/null; then
		killed=1
		k=$(gl_uptime)
		kill -9 "$p"
		for _ in $(seq 1 300); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		gone=$(awk -v a="$k" -v b="$(gl_uptime)" 'BEGIN { printf "%.2f", b - a }')
	fi
	secs=$(awk -v a="$a" -v b="$(gl_uptime)" 'BEGIN { printf "%.2f", b - a }')
	wait "$p" 2>/dev/null
	r=$(sed -n 's/^seek result=//p' /tmp/seek.out)
	h=$(lsqx -S "$f" hole 0 | sed -n 's/^seek result=//p')
	gl_say "SEEK killed=$killed secs=$secs gone_secs=$gone result=${r:--1} hole=${h:--1} softlockup=$(dmesg | grep -c 'soft lockup') $(tr ' ' _ </tmp/seek.out)"
	umount /mnt/s
}

# BCJ-FILTER: an xz image made with -Xbcj FILTER, mounted plain and with
# errors=panic: refused with EOPNOTSUPP and a line naming the filter, or read right
hz_bcj() { # DEV FILTER
	mkdir -p /mnt/x
	mounted=0 eop=0 sums=0
	n0=$(dmesg | grep -c "xz filter $2 ")
	c0=$(dmesg | grep -c 'corrupt image')
	for o in ro ro,errors=panic; do
		if mount -t squashfs -o "$o" "/dev/$1" /mnt/x 2>/tmp/bcj.err; then
			mounted=$((mounted + 1))
			sums=$( (cd /mnt/x && sha256sum -c /hz-bcj.sums 2>/dev/null) | grep -c ': OK$')
			umount /mnt/x
		elif grep -q 'not supported' /tmp/bcj.err; then
			eop=$((eop + 1))
		fi
	done
	gl_say "BCJ-$2 mounted=$mounted eopnotsupp=$eop lines=$(($(dmesg | grep -c "xz filter $2 ") - n0)) corrupt=$(($(dmesg | grep -c 'corrupt image') - c0)) sums_ok=$sums $(dmesg | grep "xz filter $2 " | tail -n 1 | tr ' ' _ | cut -c1-160)"
}

# NEST4K: 24 cold readers of different files of a 4 KiB-block image inside this
# one, and one of the outer image, at once (last: a deadlock leaves them stuck)
hz_nest4k() { # DEV
	hz_nest_mount NEST4K "$1" inner4k.img /dev/loop1 /mnt/o4 /mnt/i4 || return
	h0=$(dmesg | grep -c 'blocked for more than')
	hz_cold
	gl_t0
	pids="" i=0
	rm -f /tmp/go
	# every reader starts at once, so that all their readaheads are in flight together
	for f in $(cd /mnt/i4 && find . -type f | sort | head -n 24); do
		(
			while [ ! -e /tmp/go ]; do sleep 0.05; done
			# 1 MiB reads: each reader's readahead is a whole window of blocks at once
			h=$(dd if="/mnt/i4/$f" bs=1M 2>/dev/null | sha256sum | cut -c1-64)
			echo "$h  $f" >"/tmp/n4.$i"
		) &
		pids="$pids $!"
		i=$((i + 1))
	done
	(
		while [ ! -e /tmp/go ]; do sleep 0.05; done
		hz_cat /mnt/o4/other
	) &
	pids="$pids $!"
	sleep 1
	touch /tmp/go
	# shellcheck disable=SC2086 # one pid a word
	if hz_wait 240 $pids; then
		cat /tmp/n4.* >/tmp/n4.sums
		gl_say "NEST4K ended=1 secs=$(gl_secs) readers=$i sums_ok=$(grep -cxFf /hz-inner4k.sums /tmp/n4.sums) hung=$(($(dmesg | grep -c 'blocked for more than') - h0)) smp=$(grep -c ^processor /proc/cpuinfo)"
		umount /mnt/i4 && losetup -d /dev/loop1 && umount /mnt/o4
	else
		gl_say "NEST4K ended=0 secs=$(gl_secs) readers=$i hung=$(($(dmesg | grep -c 'blocked for more than') - h0)) smp=$(grep -c ^processor /proc/cpuinfo)"
	fi
}

# guest-init.sh calls this for every disk: the first call runs every test whose disks
# are there, in this order (the nested image last), the others nothing
hazard() { # DRV ID DEV
	[ -e /tmp/hazard-ran ] && return
	touch /tmp/hazard-ran
	for t in h-fast:hz_slow h-big:hz_onebyte h-crafted:hz_crafted h-tree:hz_tree h-seek:hz_seek \
		h-bcj-ia64:hz_bcj:ia64 h-bcj-powerpc:hz_bcj:powerpc h-nest:hz_nest h-nest4k:hz_nest4k; do
		dev=$(hz_dev "${t%%:*}")
		fn=${t#*:}
		arg=$1
		case $fn in *:*) arg=${fn#*:} fn=${fn%%:*} ;; esac
		[ -n "$dev" ] && "$fn" "$dev" "$arg"
	done
}
