#!/bin/sh
# boot-tests/bench/guest-init.sh: /init of the benchmark initramfs (busybox, POSIX sh).
#
# /bench.conf (written by bench.sh) sets ROUNDS, DRIVERS ("stock ours erofs"),
# WORKLOADS (the workload groups to run: stat cat tar seq rand par mem), RAND_N (4 KiB
# reads per random-read run), WARM (passes of a warm seq or rand run: one pass takes a
# few ms, too short to time) and MEMN (mounts of the memory test, on loop devices).
# Every disk's virtio serial names it: t-sq-COMP-BS / b-sq-COMP-BS (squashfs, tree / big
# files), t-erofs-X / b-erofs-X (EROFS).
# Results go to /dev/ttyS1 as "@@ RES ROUND DRIVER IMAGE WORKLOAD key=value..." lines.
# /guest-lib.sh: the functions the guests share (gl_*).
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /mnt /tmp /m
# shellcheck disable=SC1091 # written by bench.sh into the initramfs
. /bench.conf
# shellcheck disable=SC1091 # bench.sh copies boot-tests/guest-lib.sh there
. /guest-lib.sh
# shellcheck disable=SC2034 # read by gl_first: error texts cut at 300 characters
GL_FIRST_WIDTH=300

gl_open
gl_say "START kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) mem=$(grep MemTotal /proc/meminfo | tr -s ' ' | cut -d ' ' -f 2)"
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk \
	crc32c_generic libcrc32c erofs loop; do
	[ -f "/lib/modules/deps/$m.ko" ] || continue
	a=""
	[ $m = loop ] && a="max_loop=$MEMN"
	# shellcheck disable=SC2086 # $a: no argument or one
	insmod "/lib/modules/deps/$m.ko" $a 2>/tmp/err || gl_say "INSMOD-FAIL $m $(gl_first 2 /tmp/err)"
done
gl_wait_disks "$NDISKS" >/tmp/disks
gl_say "DISKS $(wc -l </tmp/disks) of $NDISKS"
has() { case " $WORKLOADS " in *" $1 "*) return 0 ;; esac; return 1; }

drop() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}
# res ROUND DRV ID WORKLOAD OUTPUTFILE RC
res() {
	if [ "$6" -eq 0 ] && [ -s /tmp/o ]; then
		gl_say "RES $1 $2 $3 $4 $(tail -n 1 /tmp/o)"
	else
		gl_say "FAIL $1 $2 $3 $4 rc=$6 $(gl_first 1 /tmp/o) $(gl_first 2 /tmp/err)"
	fi
}
# fresh ROUND DRV ID FSTYPE DEV: umount, drop caches, mount again (mount time recorded)
fresh() {
	umount /mnt 2>/dev/null
	drop
	rc=0
	lsqbench mount "$4" "/dev/$5" /mnt >/tmp/o 2>/tmp/err || rc=$?
	res "$1" "$2" "$3" mount /tmp/o $rc
	return $rc
}
# rdkb: KiB read so far from the disk of the image in use ($DEV), from its block stat
rdkb() {
	read -r _ _ sect _ <"/sys/block/$DEV/stat"
	echo $((sect / 2))
}
# wl ROUND DRV ID WORKLOAD CMD...: run and report one timed workload; the line gets
# diskkb=N, the KiB the workload read from the image's disk (0 for a warm read that
# the page cache answers)
wl() {
	wr=$1 wd=$2 wi=$3 ww=$4
	shift 4
	rc=0
	k0=$(rdkb)
	"$@" >/tmp/o 2>/tmp/err || rc=$?
	[ $rc -eq 0 ] && [ -s /tmp/o ] && echo "$(tail -n 1 /tmp/o) diskkb=$(($(rdkb) - k0))" >>/tmp/o
	res "$wr" "$wd" "$wi" "$ww" /tmp/o $rc
}

tree_image() { # ROUND DRV ID FSTYPE DEV
	DEV=$5
	fresh "$@" || return
	wl "$1" "$2" "$3" walk lsqbench walk /mnt /tmp/list0
	sort /tmp/list0 >/tmp/list
	if has stat; then
		fresh "$@" && wl "$1" "$2" "$3" stat-cold lsqbench stat /tmp/list "$1"
		wl "$1" "$2" "$3" stat-warm lsqbench stat /tmp/list "$1"
	fi
	if has cat; then
		fresh "$@" && wl "$1" "$2" "$3" cat-cold lsqbench cat /tmp/list "$1"
	fi
	if has tar; then
		fresh "$@" && wl "$1" "$2" "$3" tar-cold lsqbench run tar -cf /dev/null -C /mnt .
	fi
	umount /mnt
}

rep() { # N WORD: WORD N times, a line each
	k=0
	while [ $k -lt "$1" ]; do
		echo "$2"
		k=$((k + 1))
	done
}
big_image() { # ROUND DRV ID FSTYPE DEV
	DEV=$5
	if has seq; then
		for f in text0 bin0; do
			fresh "$@" && wl "$1" "$2" "$3" "seq-${f%0}-cold" lsqbench seq "/mnt/$f"
			# shellcheck disable=SC2046 # WARM times the same path (no spaces in it)
			wl "$1" "$2" "$3" "seq-${f%0}-warm" lsqbench seq $(rep "$WARM" "/mnt/$f")
		done
	fi
	if has rand; then
		fresh "$@" && wl "$1" "$2" "$3" rand-cold lsqbench rand /mnt/bin0 "$RAND_N" "$1"
		wl "$1" "$2" "$3" rand-warm lsqbench rand /mnt/bin0 "$RAND_N" "$1" "$WARM"
	fi
	if has par; then
		for n in 2 4; do
			[ "$n" -le "$(grep -c ^processor /proc/cpuinfo)" ] || continue
			fresh "$@" && wl "$1" "$2" "$3" "par$n-diff" lsqbench par "$n" /mnt/text0 /mnt/bin0 /mnt/text1 /mnt/bin1
			fresh "$@" && wl "$1" "$2" "$3" "par$n-same" lsqbench par "$n" /mnt/text0
		done
	fi
	umount /mnt
}

snap() { # OUT: meminfo fields and slab caches (bytes) to a file, after dropping caches
	drop
	sleep 1
	{
		awk '{ print "mi." $1 " " $2 }' /proc/meminfo | tr -d :
		awk 'NR > 2 { print "slab." $1 " " $3 * $4 }' /proc/slabinfo
	} >"$1"
}
memdelta() { # ROUND DRV ID WORKLOAD BEFORE AFTER
	awk -v r="$1" -v d="$2" -v id="$3" -v w="$4" '
		FNR == NR { b[$1] = $2; next }
		{ a[$1] = $2 }
		END {
			s = 0
			for (k in a) if (k ~ /^slab\./) s += a[k] - b[k]
			printf "@@ RES %s %s %s %s kb=%d slabinfokb=%d slabkb=%d vmallockb=%d percpukb=%d\n", r, d, id, w,
				b["mi.MemFree"] - a["mi.MemFree"], s / 1024, a["mi.Slab"] - b["mi.Slab"],
				a["mi.VmallocUsed"] - b["mi.VmallocUsed"], a["mi.Percpu"] - b["mi.Percpu"]
			top = ""
			for (k in a) if (k ~ /^slab\./ && a[k] - b[k] >= 4096) top = top " " substr(k, 6) "=" int((a[k] - b[k]) / 1024)
			printf "@@ SLABTOP %s %s %s %s%s\n", r, d, id, w, top
		}' "$5" "$6" >&3
}
# mem_test ROUND DRV ID FSTYPE DEV: memory pinned by 1 and by MEMN mounts of the image,
# each on its own loop device over the same disk (one superblock each), measured
# after drop_caches (what the mounts keep, not what the kernel can reclaim)
mem_test() {
	k=0
	while [ $k -lt "$MEMN" ]; do
		k=$((k + 1))
		losetup -r "/dev/loop$((k - 1))" "/dev/$5" 2>/tmp/err || gl_say "FAIL $1 $2 $3 mem rc=1 losetup $(gl_first 1 /tmp/err)"
		mkdir -p "/m/$k"
	done
	snap /tmp/s0
	k=0
	while [ $k -lt "$MEMN" ]; do
		k=$((k + 1))
		mount -t "$4" -o ro "/dev/loop$((k - 1))" "/m/$k" 2>/tmp/err || gl_say "FAIL $1 $2 $3 mem rc=1 $(gl_first 1 /tmp/err)"
		if [ $k -eq 1 ]; then
			snap /tmp/s1
			memdelta "$1" "$2" "$3" mem1 /tmp/s0 /tmp/s1
		fi
	done
	snap /tmp/s2
	memdelta "$1" "$2" "$3" "mem$k" /tmp/s0 /tmp/s2
	k=0
	while [ $k -lt "$MEMN" ]; do
		k=$((k + 1))
		umount "/m/$k"
		losetup -d "/dev/loop$((k - 1))"
	done
}

r=0
while [ "$r" -lt "$ROUNDS" ]; do
	r=$((r + 1))
	# stock and ours swap places every round (A B B A ...): neither is always
	# the one that runs first after a module load, or right after EROFS
	order=$DRIVERS
	[ $((r % 2)) -eq 0 ] && order=$(echo "$DRIVERS" | sed 's/stock ours/ours stock/')
	for drv in $order; do
		case $drv in
		stock | ours)
			dmesg -c >/dev/null
			if insmod "/lib/modules/drv/$drv/squashfs.ko" 2>/tmp/err; then
				gl_say "INSMOD $r $drv ok taint=$(cat /sys/module/squashfs/taint) coresize=$(cat /sys/module/squashfs/coresize) banner=$(dmesg | grep -c 'livesquash: squashfs 4.0 driver')"
			else
				gl_say "INSMOD $r $drv fail $(gl_first 2 /tmp/err)"
				continue
			fi
			fstype=squashfs pre=sq
			;;
		erofs)
			gl_say "INSMOD $r erofs ok fs=$(grep -c erofs /proc/filesystems) coresize=$(cat /sys/module/erofs/coresize)"
			fstype=erofs pre=erofs
			;;
		esac
		gl_say "ROUND $r $drv t=$(gl_uptime)"
		while read -r id vd; do
			case $id in
			t-$pre-*)
				gl_say "BEGIN $r $drv $id t=$(gl_uptime)"
				tree_image "$r" "$drv" "$id" "$fstype" "$vd"
				has mem && mem_test "$r" "$drv" "$id" "$fstype" "$vd"
				;;
			b-$pre-*)
				gl_say "BEGIN $r $drv $id t=$(gl_uptime)"
				big_image "$r" "$drv" "$id" "$fstype" "$vd"
				;;
			esac
		done </tmp/disks
		case $drv in
		stock | ours) gl_rmmod squashfs "$r" "$drv" ;;
		esac
	done
	# the ceiling of each sequential cold read: one vCPU decompressing the same blocks
	# (in memory, read from the disk first, untimed) with lsqceil, for 1 s, each round
	if has seq; then
		while read -r id vd; do
			case $id in b-sq-*) ;; *) continue ;; esac
			for f in text bin; do
				rc=0
				lsqceil "/ceil/$id.$f" "/dev/$vd" 1 >/tmp/o 2>/tmp/err || rc=$?
				if [ $rc -eq 0 ]; then
					gl_say "CEIL $r $id seq-$f-cold $(cat /tmp/o)"
				else
					gl_say "FAIL $r ceiling $id seq-$f-cold rc=$rc $(gl_first 2 /tmp/err)"
				fi
			done
		done </tmp/disks
	fi
done
gl_say "DONE t=$(gl_uptime)"
gl_poweroff
