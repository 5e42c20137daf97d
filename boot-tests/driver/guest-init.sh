#!/bin/sh
# boot-tests/driver/guest-init.sh: /init of the driver-test initramfs (busybox, POSIX sh).
#
# Kernel command line:
#   lsq.mode=good|bad|stress|unplug|hazard
#                          good: manifest, statfs, readdir, listing, export, re-read,
#                          remount, options
#                          bad: mount and walk corrupted images, report what failed
#                          stress: lsqx -s against /expected-ID.man (the host's
#                          expected manifest of that image)
#                          hazard: the tests of hazard-guest.sh (nested mounts, a
#                          slow medium, memory cgroups, crafted inodes)
#   lsq.drv=D[,D...]       builtin (the kernel's own squashfs), stock or ours
#                          (insmod /lib/modules/drv/{stock,ours}/squashfs.ko first)
#   lsq.ndisks=N           how many virtio disks to wait for
# /skip (appended to the initramfs by run.sh for a restarted boot): "DRV:ID,..." pairs
# already done by an earlier boot, or the one it hung on
#   lsq.sendall=1          send every manifest, not only those that differ
#   lsq.stresssecs=S       the length of the stress pass in seconds (default 8); the pass
#                          runs twice: as is, then in a memory cgroup (memcg_stress)
#   lsq.memcgmax=SIZE      that cgroup's memory.max (default 24M)
#   lsq.reread=0           good: no second manifest after drop_caches (the full
#                          matrix leaves it to the quick one, to halve its time)
# Every image: the listing of readdir order, inode numbers, d_type, file handles and
# lseek SEEK_DATA/SEEK_HOLE (lsqx -l; its sha256, and the listing itself gzip+base64
# so that the host can compare drivers line by line), the export round trip of
# every inode with forged handles (lsqx -e).
# Each disk's virtio serial is its test id; /expected holds "ID SHA256" lines (the
# host's manifest hash per image): a manifest that differs is sent in full.
# Results go to /dev/ttyS1 as "@@ ..." lines; markers also go to /dev/kmsg so the
# host can cut the console log (ttyS0) per image. /guest-lib.sh: the functions the
# guests share (gl_*).
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /mnt /tmp
# shellcheck disable=SC1091 # run.sh copies boot-tests/guest-lib.sh there
. /guest-lib.sh
# shellcheck disable=SC1091 # and hazard-guest.sh (lsq.mode=hazard)
. /hazard-guest.sh

mode=$(gl_arg mode lsq.)
drvs=$(gl_arg drv lsq. | tr , ' ')
ndisks=$(gl_arg ndisks lsq.)
skip=","
[ -f /skip ] && skip=",$(cat /skip),"
sendall=$(gl_arg sendall lsq.)
stresssecs=$(gl_arg stresssecs lsq.)
reread=$(gl_arg reread lsq.)
memcgmax=$(gl_arg memcgmax lsq.)

gl_open
gl_say "START mode=$mode drv=$drvs kernel=$(uname -r)"
if [ -d /lib/modules/deps ]; then
	for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk loop; do
		# (a module the kernel has built in is not there)
		[ -f "/lib/modules/deps/$m.ko" ] || continue
		insmod "/lib/modules/deps/$m.ko" || gl_say "INSMOD-FAIL $m"
	done
fi
gl_wait_disks "${ndisks:-0}" >/tmp/disks
gl_say "DISKS $(wc -l </tmp/disks) of ${ndisks:-?}"

# kernel errors in dmesg so far; after a step, a higher count aborts the image (its
# remaining steps would hang on pages locked by the task that died)
kerr() { dmesg | grep -c 'BUG:\|kernel BUG\|Oops\|list_add corruption\|general protection'; }
aborted() { # STEP
	if [ "$(kerr)" -gt "$kerr0" ]; then
		gl_say "ABORT kernel error during $1: $(dmesg | grep -m 1 'BUG:\|kernel BUG\|Oops\|list_add corruption\|general protection' | cut -c1-200)"
		# stuck readers keep it busy: detach it, so that the next image gets /mnt
		umount -l /mnt 2>/dev/null
		return 0
	fi
	return 1
}

# mount_ro DEV: mount it read-only on /mnt and say how that went; remember how many
# kernel errors there were before
mount_ro() {
	kerr0=$(kerr)
	if ! mount -t squashfs -o ro "/dev/$1" /mnt 2>/tmp/err; then
		gl_say "MOUNT fail $(gl_first 3 /tmp/err)"
		return 1
	fi
	gl_say "MOUNT ok"
}

# bytes read from disk DEV so far (sectors read: field 3 of /sys/block/DEV/stat)
rbytes() { echo $(($(awk '{ print $3 }' "/sys/block/$1/stat") * 512)); }

# remount_cold DEV OPTS: /mnt again, DEV mounted with OPTS after dropping the caches
remount_cold() {
	umount /mnt || return 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount -t squashfs -o "$2" "/dev/$1" /mnt 2>/tmp/err
}

# cold_lookup DEV NAME DRV: remount DEV with cold caches, look up bigdir, then print the
# bytes a lookup of bigdir/NAME reads from the disk. Our driver is mounted with
# meta_readahead=0: its read of the tables at mount would hide what a lookup reads.
cold_lookup() {
	o=ro
	[ "$3" = stock ] || o=ro,meta_readahead=0
	remount_cold "$1" "$o" || return 1
	stat /mnt/bigdir >/dev/null || return 1
	b0=$(rbytes "$1")
	stat "/mnt/bigdir/$2" >/dev/null || return 1
	echo $(($(rbytes "$1") - b0))
}

# LOOKUP: through the directory index, a lookup of the last name of bigdir reads about
# as much as one of its first name (one or two metadata blocks and the inode's);
# without it, it would read the whole directory (scan: what a readdir of it reads)
lookup_cost() { # DEV DRV
	find /mnt/bigdir -mindepth 1 -maxdepth 1 | sort | sed -n '1p;$p' >/tmp/names
	first=$(sed -n 1p /tmp/names)
	last=$(sed -n 2p /tmp/names)
	if f=$(cold_lookup "$1" "${first##*/}" "$2") && l=$(cold_lookup "$1" "${last##*/}" "$2"); then
		b1=$(rbytes "$1")
		lsqx -r 300 /mnt/bigdir >/tmp/rd 2>&1
		gl_say "LOOKUP first=$f last=$l scan=$(($(rbytes "$1") - b1)) name=${last##*/} $(gl_first 1 /tmp/rd)"
	else
		gl_say "LOOKUP failed $(gl_first 1 /tmp/err)"
	fi
	grep -q ' /mnt ' /proc/mounts || mount -t squashfs -o ro "/dev/$1" /mnt
}

# frag_cost DEV F...: remount DEV with cold caches, read fragahead/F of each F but the
# last, wait a second, then print the bytes a read of the last reads from the disk
frag_cost() {
	fd=$1
	shift
	remount_cold "$fd" ro || return 1
	(cd /mnt/fragahead && stat f0 f1 f2 f3 >/dev/null) || return 1
	while [ $# -gt 1 ]; do
		cat "/mnt/fragahead/$1" >/dev/null || return 1
		shift
	done
	sleep 1
	b0=$(rbytes "$fd")
	cat "/mnt/fragahead/$1" >/dev/null || return 1
	echo $(($(rbytes "$fd") - b0))
}

# FRAGAHEAD: in a 4K-block image with fragments, fragahead/f0..f3 (gentree.sh) are in
# four fragment blocks in a row. Read f3, f0 (out of order), then f2: the disk gives
# its block then (ctl). Cold again, read f3, f0, f1 (in order), then f2: our driver
# has read that block meanwhile, so f2 reads nothing more from the disk (seq)
frag_ahead() { # DEV
	[ -f /mnt/fragahead/f3 ] && [ "$(stat -f -c %S /mnt)" = 4096 ] || return 0
	if c=$(frag_cost "$1" f3 f0 f2) && s=$(frag_cost "$1" f3 f0 f1 f2); then
		gl_say "FRAGAHEAD ctl=$c seq=$s"
	else
		gl_say "FRAGAHEAD failed $(gl_first 1 /tmp/err)"
	fi
	grep -q ' /mnt ' /proc/mounts || mount -t squashfs -o ro "/dev/$1" /mnt
}

good() { # DRV ID DEV
	mount_ro "$3" || return
	gl_say "STATFS $(stat -f -c '%t %s %S %b %f %a %c %d %l' /mnt)"
	gl_say "XATTR-ROOT $(LSQX_ENOTSUP=1 lsqx /mnt 2>&1 | cut -f 3 | cut -c1-60)"
	gl_say "DF $(df -k /mnt | tail -n 1 | tr -s ' ' | cut -d ' ' -f 2-4)"
	rc=0
	gl_t0
	sh /bin/manifest.sh -X /mnt >/tmp/m1 2>/tmp/err || rc=$?
	sha=$(sha256sum </tmp/m1 | cut -c1-64)
	gl_say "MANIFEST secs=$(gl_secs) rc=$rc lines=$(wc -l </tmp/m1) sha=$sha stderr=$(wc -l </tmp/err) $(gl_first 3 /tmp/err)"
	want=$(grep "^$2 " /expected | cut -d ' ' -f 2)
	if [ "$sha" != "$want" ] || [ -n "$sendall" ]; then
		gl_say "B64-BEGIN"
		gzip -c /tmp/m1 | base64 >&3
		gl_say "B64-END"
	fi
	rc=0
	gl_t0
	find /mnt -type d -exec lsqx -r 300 {} + >/tmp/rd 2>&1 || rc=$?
	gl_say "READDIR secs=$(gl_secs) rc=$rc dirs=$(grep -c '^readdir-ok' /tmp/rd) fail=$(grep -vc '^readdir-ok' /tmp/rd) $(grep -v '^readdir-ok' /tmp/rd | head -n 3 | tr '\n\t' '| ' | cut -c1-400)"
	rc=0
	gl_t0
	lsqx -l /mnt >/tmp/ls 2>/tmp/err || rc=$?
	grep -v '^list ' /tmp/err >/tmp/err2
	gl_say "LISTING secs=$(gl_secs) rc=$rc lines=$(wc -l </tmp/ls) sha=$(sha256sum </tmp/ls | cut -c1-64) $(grep '^list ' /tmp/err) $(gl_first 3 /tmp/err2)"
	gl_t0
	gl_say "B64-BEGIN listing"
	gzip -c /tmp/ls | base64 >&3
	gl_say "B64-END"
	gl_say "SENT listing secs=$(gl_secs)"
	rc=0
	gl_t0
	lsqx -e /mnt /tmp/m1 >/tmp/ex 2>&1 || rc=$?
	grep '^export-FAIL' /tmp/ex >/tmp/err2
	gl_say "FORGED $(grep '^forged ' /tmp/ex)"
	gl_say "EXPORT secs=$(gl_secs) rc=$rc $(grep '^export ' /tmp/ex) $(gl_first 3 /tmp/err2)"
	aborted export && return
	if [ "$reread" != 0 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
		rc=0
		gl_t0
		sh /bin/manifest.sh -X /mnt >/tmp/m2 2>/tmp/err || rc=$?
		gl_say "REREAD secs=$(gl_secs) rc=$rc sha=$(sha256sum </tmp/m2 | cut -c1-64)"
	fi
	lookup_cost "$3" "$1"
	frag_ahead "$3"
	rc=0
	mount -o remount,rw /mnt 2>/tmp/err || rc=$?
	opts=$(grep ' /mnt ' /proc/mounts | cut -d ' ' -f 4)
	wrc=0
	touch /mnt/newfile 2>/tmp/err2 || wrc=$?
	gl_say "REMOUNT-RW rc=$rc opts=$opts touch=$wrc $(gl_first 1 /tmp/err) $(gl_first 1 /tmp/err2)"
	rc=0
	umount /mnt || rc=$?
	gl_say "UMOUNT rc=$rc"
	rc=0
	mount -t squashfs "/dev/$3" /mnt 2>/tmp/err || rc=$?
	gl_say "MOUNT-NO-RO rc=$rc $(grep ' /mnt ' /proc/mounts | cut -d ' ' -f 3-4) $(gl_first 1 /tmp/err)"
	[ $rc -eq 0 ] && umount /mnt
	rc=0
	mount -t squashfs -o ro,errors=continue "/dev/$3" /mnt 2>/tmp/err || rc=$?
	gl_say "ERRORS-CONTINUE rc=$rc $(grep ' /mnt ' /proc/mounts | cut -d ' ' -f 3-4) $(gl_first 1 /tmp/err)"
	umount /mnt 2>/dev/null
	rc=0
	mount -t squashfs -o ro,nosuchoption "/dev/$3" /mnt 2>/tmp/err || rc=$?
	gl_say "BADOPTION rc=$rc $(gl_first 1 /tmp/err)"
	[ $rc -eq 0 ] && umount /mnt
}

stress() { # DRV ID DEV
	mount_ro "$3" || return
	rc=0
	gl_t0
	lsqx -s /mnt "/expected-$2.man" 4 "${stresssecs:-8}" >/tmp/st 2>&1 || rc=$?
	grep -v '^stress' /tmp/st >/tmp/err2
	grep 'stress-FAIL' /tmp/st >>/tmp/err2
	gl_say "STRESS secs=$(gl_secs) rc=$rc workers-ok=$(grep -c '^stress-worker .* fails=0$' /tmp/st) $(grep '^stress ' /tmp/st) $(grep '^stress-worker' /tmp/st | grep -o ' ops=[0-9]*' | tr -d '\n') $(gl_first 3 /tmp/err2)"
	aborted stress && return
	memcg_stress "$2"
	aborted memcg && return
	rc=0
	umount /mnt || rc=$?
	gl_say "UMOUNT rc=$rc"
}

# memcg_stress ID: the same stress pass inside a memory cgroup far smaller than the
# tree (memory.max lsq.memcgmax, default 24M: the page cache, our caches and the
# readers' own memory must fit), from cold caches; "MEMCG ..." says how it went and
# what memory.events counted (max: how often the limit was hit; oom_kill)
memcg_stress() {
	cg=/sys/fs/cgroup
	if [ ! -d $cg/lsq ]; then
		if ! { mount -t cgroup2 none $cg && echo +memory >$cg/cgroup.subtree_control &&
			mkdir $cg/lsq; }; then
			gl_say "MEMCG setup-failed"
			return
		fi
	fi
	echo "${memcgmax:-24M}" >$cg/lsq/memory.max
	sync
	echo 3 >/proc/sys/vm/drop_caches
	rc=0
	gl_t0
	# shellcheck disable=SC2016 # $$ and $1 are the inner shell's
	sh -c 'echo $$ >/sys/fs/cgroup/lsq/cgroup.procs && exec lsqx -s /mnt "$1" 4 "$2"' _ \
		"/expected-$1.man" "${stresssecs:-8}" >/tmp/st 2>&1 || rc=$?
	grep 'stress-FAIL' /tmp/st >/tmp/err2
	gl_say "MEMCG limit=$(cat $cg/lsq/memory.max) peak=$(cat $cg/lsq/memory.peak 2>/dev/null || echo ?) secs=$(gl_secs) rc=$rc workers-ok=$(grep -c '^stress-worker .* fails=0$' /tmp/st) $(grep '^stress ' /tmp/st) $(sed 's/ /=/' $cg/lsq/memory.events | tr '\n' ' ')$(gl_first 3 /tmp/err2)"
}

bad() { # DRV ID DEV
	if ! timeout 30 mount -t squashfs -o ro "/dev/$3" /mnt 2>/tmp/err; then
		gl_say "MOUNT fail $(gl_first 2 /tmp/err)"
		return
	fi
	gl_say "MOUNT ok"
	: >/tmp/err
	lrc=0
	timeout 30 ls -laR /mnt >/dev/null 2>>/tmp/err || lrc=$?
	crc=0
	timeout 60 find /mnt -type f -exec cat {} + >/dev/null 2>>/tmp/err || crc=$?
	xrc=0
	timeout 30 find /mnt -exec lsqx {} + >/dev/null 2>>/tmp/err || xrc=$?
	drc=0
	timeout 30 find /mnt -type d -exec lsqx -r 300 {} + >/tmp/rd 2>>/tmp/err || drc=$?
	grep -v '^readdir-ok' /tmp/rd >>/tmp/err
	gl_say "INVALID $(grep -c 'invalid kernel return' /tmp/err) $(grep -m 1 'invalid kernel return' /tmp/err)"
	gl_say "WALK ls=$lrc cat=$crc xattr=$xrc readdir=$drc errors=$(wc -l </tmp/err) $(gl_first 2 /tmp/err)"
	rc=0
	umount /mnt || rc=$?
	gl_say "UMOUNT rc=$rc"
}

# unplug DRV ID DEV: two readers go over half of the image's files (every other
# one, largest first) until the host pulls the disk out (run.sh sends device_del once
# it reads "@@ READING"); then the other half, never read, is read from cold caches:
# the reader must get errors (EIO or EUCLEAN), nothing may hang, /mnt must unmount
unplug() {
	mount_ro "$3" || return
	find /mnt -type f -size +64k | sort >/tmp/files
	awk 'NR % 2' /tmp/files >/tmp/before
	awk '!(NR % 2)' /tmp/files >/tmp/after
	echo 3 >/proc/sys/vm/drop_caches
	for _ in 1 2; do
		(while [ -e "/sys/block/$3" ]; do xargs cat </tmp/before >/dev/null 2>&1; done) &
	done
	sleep 1
	gl_say "READING $3"
	i=0
	while [ -e "/sys/block/$3" ] && [ $i -lt 60 ]; do
		sleep 1
		i=$((i + 1))
	done
	gone=0
	[ -e "/sys/block/$3" ] || gone=1
	wait
	echo 3 >/proc/sys/vm/drop_caches
	: >/tmp/err
	crc=0
	timeout 60 xargs cat </tmp/after >/dev/null 2>>/tmp/err || crc=$?
	lrc=0
	timeout 30 ls -laR /mnt >/dev/null 2>>/tmp/err || lrc=$?
	gl_say "UNPLUG gone=$gone after=${i}s files=$(wc -l </tmp/after) cat=$crc ls=$lrc errors=$(wc -l </tmp/err) eio=$(grep -c 'Input/output error\|Structure needs cleaning' /tmp/err) $(gl_first 2 /tmp/err)"
	rc=0
	timeout 30 umount /mnt || rc=$?
	gl_say "UMOUNT rc=$rc"
}

# kmemleak (the debug kernel, make kernel-debug): once every image of a driver is
# done and unmounted, and before its module is unloaded (the backtraces keep their
# names), scan, and count the unreferenced objects allocated in a squashfs driver's
# functions (sqfs_*: ours, squashfs_*: stock). A second scan after kmemleak's minimum
# age (5 s) reports what the first one saw.
leak_scan() { # DRV
	k=/sys/kernel/debug/kmemleak
	[ -e $k ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	[ -e $k ] || return 0
	echo scan >$k
	sleep 6
	echo scan >$k
	cat $k >/tmp/leaks
	awk '/^unreferenced object/ { o = 0 } /sqfs_|squashfs_/ { if (!o) n++; o = 1 } END { print n + 0 }' /tmp/leaks >/tmp/ours
	gl_say "KMEMLEAK $1 objects=$(grep -c '^unreferenced object' /tmp/leaks) ours=$(cat /tmp/ours) $(grep -m 3 'sqfs_\|squashfs_' /tmp/leaks | tr -s ' \n' ' ')"
	echo clear >$k
}

for drv in $drvs; do
	case $drv in
	stock | ours)
		if insmod "/lib/modules/drv/$drv/squashfs.ko" 2>/tmp/err; then
			gl_say "INSMOD $drv ok"
		else
			gl_say "INSMOD $drv fail $(gl_first 2 /tmp/err)"
		fi
		;;
	esac
	gl_say "DRIVER $drv banner=$(dmesg | grep -c 'livesquash: squashfs 4.0 driver') fs=$(grep -c squashfs /proc/filesystems)"
	while read -r id dev; do
		case $skip in *",$drv:$id,"*) continue ;; esac
		gl_say "BEGIN $drv $id $dev"
		gl_kmsg "lsqtest: BEGIN $drv $id"
		[ "$drv:$id" = "$(gl_arg hang lsq.)" ] && sleep 100000 # run.sh DRIVER_TEST_HANG
		"$mode" "$drv" "$id" "$dev"
		gl_kmsg "lsqtest: END $drv $id"
		gl_say "END $drv $id"
	done </tmp/disks
	leak_scan "$drv"
	case $drv in
	stock | ours) gl_rmmod squashfs "$drv" ;;
	esac
done
gl_say "DONE"
gl_poweroff
