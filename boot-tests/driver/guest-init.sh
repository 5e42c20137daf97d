#!/bin/sh
# boot-tests/driver/guest-init.sh: /init of the driver-test initramfs (busybox, POSIX sh).
#
# Kernel command line:
#   lsq.mode=good|bad|stress
#                          good: manifest, statfs, readdir, listing, export, re-read,
#                          remount, options
#                          bad: mount and walk corrupted images, report what failed
#                          stress: lsqx -s against /expected-ID.man (the host's
#                          expected manifest of that image)
#   lsq.drv=D[,D...]       builtin (the kernel's own squashfs), stock or ours
#                          (insmod /lib/modules/drv/{stock,ours}/squashfs.ko first)
#   lsq.ndisks=N           how many virtio disks to wait for
# /skip (appended to the initramfs by run.sh for a restarted boot): "DRV:ID,..." pairs
# already done by an earlier boot, or the one it hung on
#   lsq.sendall=1          send every manifest, not only those that differ
#   lsq.stresssecs=S       the length of the stress pass in seconds (default 8)
#   lsq.reread=0           good: no second manifest after drop_caches (the full
#                          matrix leaves it to the quick one, to halve its time)
# Every image: the listing of readdir order, inode numbers, d_type, file handles and
# lseek SEEK_DATA/SEEK_HOLE (lsqx -l; its sha256, and the listing itself gzip+base64
# so that the host can compare drivers line by line), the export round trip of
# every inode with forged handles (lsqx -e).
# Each disk's virtio serial is its test id; /expected holds "ID SHA256" lines (the
# host's manifest hash per image): a manifest that differs is sent in full.
# Results go to /dev/ttyS1 as "@@ ..." lines; markers also go to /dev/kmsg so the
# host can cut the console log (ttyS0) per image.
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /mnt /tmp

arg() {
	read -r cmdline </proc/cmdline
	for w in $cmdline; do
		case $w in "lsq.$1="*) echo "${w#*=}" ;; esac
	done
}
mode=$(arg mode)
drvs=$(arg drv | tr , ' ')
ndisks=$(arg ndisks)
skip=","
[ -f /skip ] && skip=",$(cat /skip),"
sendall=$(arg sendall)
stresssecs=$(arg stresssecs)
reread=$(arg reread)

stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
say() { echo "@@ $*" >&3; }
kmsg() { echo "lsqtest: $*" >/dev/kmsg; }
first() { head -n "$1" "$2" | tr '\n\t' '| ' | cut -c1-400; }
# t0; ...; secs: seconds since t0 (a step's duration, shown in the results)
t0() { read -r t0 _ </proc/uptime; }
secs() {
	read -r t1 _ </proc/uptime
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}

say "START mode=$mode drv=$drvs kernel=$(uname -r)"
if [ -d /lib/modules/deps ]; then
	for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk; do
		insmod "/lib/modules/deps/$m.ko" || say "INSMOD-FAIL $m"
	done
fi
i=0
nvd() {
	c=0
	for b in /sys/block/vd*; do [ -e "$b" ] && c=$((c + 1)); done
	echo $c
}
while [ "$(nvd)" -lt "${ndisks:-0}" ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
for b in /sys/block/vd*; do
	[ -e "$b" ] && echo "$(cat "$b/serial") ${b##*/}"
done | sort >/tmp/disks
say "DISKS $(wc -l </tmp/disks) of ${ndisks:-?}"

# kernel errors in dmesg so far; after a step, a higher count aborts the image (its
# remaining steps would hang on pages locked by the task that died)
kerr() { dmesg | grep -c 'BUG:\|kernel BUG\|Oops\|list_add corruption\|general protection'; }
aborted() { # STEP
	if [ "$(kerr)" -gt "$kerr0" ]; then
		say "ABORT kernel error during $1: $(dmesg | grep -m 1 'BUG:\|kernel BUG\|Oops\|list_add corruption\|general protection' | cut -c1-200)"
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
		say "MOUNT fail $(first 3 /tmp/err)"
		return 1
	fi
	say "MOUNT ok"
}

# bytes read from disk DEV so far (sectors read: field 3 of /sys/block/DEV/stat)
rbytes() { echo $(($(awk '{ print $3 }' "/sys/block/$1/stat") * 512)); }

# cold_lookup DEV NAME: remount DEV with cold caches, look up bigdir, then print the
# bytes a lookup of bigdir/NAME reads from the disk
cold_lookup() {
	umount /mnt || return 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount -t squashfs -o ro "/dev/$1" /mnt 2>/tmp/err || return 1
	stat /mnt/bigdir >/dev/null || return 1
	b0=$(rbytes "$1")
	stat "/mnt/bigdir/$2" >/dev/null || return 1
	echo $(($(rbytes "$1") - b0))
}

# LOOKUP: through the directory index, a lookup of the last name of bigdir reads about
# as much as one of its first name (one or two metadata blocks and the inode's);
# without it, it would read the whole directory (scan: what a readdir of it reads)
lookup_cost() { # DEV
	find /mnt/bigdir -mindepth 1 -maxdepth 1 | sort | sed -n '1p;$p' >/tmp/names
	first=$(sed -n 1p /tmp/names)
	last=$(sed -n 2p /tmp/names)
	if f=$(cold_lookup "$1" "${first##*/}") && l=$(cold_lookup "$1" "${last##*/}"); then
		b1=$(rbytes "$1")
		lsqx -r 300 /mnt/bigdir >/tmp/rd 2>&1
		say "LOOKUP first=$f last=$l scan=$(($(rbytes "$1") - b1)) name=${last##*/} $(first 1 /tmp/rd)"
	else
		say "LOOKUP failed $(first 1 /tmp/err)"
	fi
	grep -q ' /mnt ' /proc/mounts || mount -t squashfs -o ro "/dev/$1" /mnt
}

good() { # DRV ID DEV
	mount_ro "$3" || return
	say "STATFS $(stat -f -c '%t %s %S %b %f %a %c %d %l' /mnt)"
	say "XATTR-ROOT $(LSQX_ENOTSUP=1 lsqx /mnt 2>&1 | cut -f 3 | cut -c1-60)"
	say "DF $(df -k /mnt | tail -n 1 | tr -s ' ' | cut -d ' ' -f 2-4)"
	rc=0
	t0
	sh /bin/manifest.sh -X /mnt >/tmp/m1 2>/tmp/err || rc=$?
	sha=$(sha256sum </tmp/m1 | cut -c1-64)
	say "MANIFEST secs=$(secs) rc=$rc lines=$(wc -l </tmp/m1) sha=$sha stderr=$(wc -l </tmp/err) $(first 3 /tmp/err)"
	want=$(grep "^$2 " /expected | cut -d ' ' -f 2)
	if [ "$sha" != "$want" ] || [ -n "$sendall" ]; then
		say "B64-BEGIN"
		gzip -c /tmp/m1 | base64 >&3
		say "B64-END"
	fi
	rc=0
	t0
	find /mnt -type d -exec lsqx -r 300 {} + >/tmp/rd 2>&1 || rc=$?
	say "READDIR secs=$(secs) rc=$rc dirs=$(grep -c '^readdir-ok' /tmp/rd) fail=$(grep -vc '^readdir-ok' /tmp/rd) $(grep -v '^readdir-ok' /tmp/rd | head -n 3 | tr '\n\t' '| ' | cut -c1-400)"
	rc=0
	t0
	lsqx -l /mnt >/tmp/ls 2>/tmp/err || rc=$?
	grep -v '^list ' /tmp/err >/tmp/err2
	say "LISTING secs=$(secs) rc=$rc lines=$(wc -l </tmp/ls) sha=$(sha256sum </tmp/ls | cut -c1-64) $(grep '^list ' /tmp/err) $(first 3 /tmp/err2)"
	t0
	say "B64-BEGIN listing"
	gzip -c /tmp/ls | base64 >&3
	say "B64-END"
	say "SENT listing secs=$(secs)"
	rc=0
	t0
	lsqx -e /mnt /tmp/m1 >/tmp/ex 2>&1 || rc=$?
	grep '^export-FAIL' /tmp/ex >/tmp/err2
	say "FORGED $(grep '^forged ' /tmp/ex)"
	say "EXPORT secs=$(secs) rc=$rc $(grep '^export ' /tmp/ex) $(first 3 /tmp/err2)"
	aborted export && return
	if [ "$reread" != 0 ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
		rc=0
		t0
		sh /bin/manifest.sh -X /mnt >/tmp/m2 2>/tmp/err || rc=$?
		say "REREAD secs=$(secs) rc=$rc sha=$(sha256sum </tmp/m2 | cut -c1-64)"
	fi
	lookup_cost "$3"
	rc=0
	mount -o remount,rw /mnt 2>/tmp/err || rc=$?
	opts=$(grep ' /mnt ' /proc/mounts | cut -d ' ' -f 4)
	wrc=0
	touch /mnt/newfile 2>/tmp/err2 || wrc=$?
	say "REMOUNT-RW rc=$rc opts=$opts touch=$wrc $(first 1 /tmp/err) $(first 1 /tmp/err2)"
	rc=0
	umount /mnt || rc=$?
	say "UMOUNT rc=$rc"
	rc=0
	mount -t squashfs "/dev/$3" /mnt 2>/tmp/err || rc=$?
	say "MOUNT-NO-RO rc=$rc $(grep ' /mnt ' /proc/mounts | cut -d ' ' -f 3-4) $(first 1 /tmp/err)"
	[ $rc -eq 0 ] && umount /mnt
	rc=0
	mount -t squashfs -o ro,errors=continue "/dev/$3" /mnt 2>/tmp/err || rc=$?
	say "ERRORS-CONTINUE rc=$rc $(grep ' /mnt ' /proc/mounts | cut -d ' ' -f 3-4) $(first 1 /tmp/err)"
	umount /mnt 2>/dev/null
	rc=0
	mount -t squashfs -o ro,nosuchoption "/dev/$3" /mnt 2>/tmp/err || rc=$?
	say "BADOPTION rc=$rc $(first 1 /tmp/err)"
	[ $rc -eq 0 ] && umount /mnt
}

stress() { # DRV ID DEV
	mount_ro "$3" || return
	rc=0
	t0
	lsqx -s /mnt "/expected-$2.man" 4 "${stresssecs:-8}" >/tmp/st 2>&1 || rc=$?
	grep -v '^stress' /tmp/st >/tmp/err2
	grep 'stress-FAIL' /tmp/st >>/tmp/err2
	say "STRESS secs=$(secs) rc=$rc workers-ok=$(grep -c '^stress-worker .* fails=0$' /tmp/st) $(grep '^stress ' /tmp/st) $(grep '^stress-worker' /tmp/st | grep -o ' ops=[0-9]*' | tr -d '\n') $(first 3 /tmp/err2)"
	aborted stress && return
	rc=0
	umount /mnt || rc=$?
	say "UMOUNT rc=$rc"
}

bad() { # DRV ID DEV
	if ! timeout 30 mount -t squashfs -o ro "/dev/$3" /mnt 2>/tmp/err; then
		say "MOUNT fail $(first 2 /tmp/err)"
		return
	fi
	say "MOUNT ok"
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
	say "INVALID $(grep -c 'invalid kernel return' /tmp/err) $(grep -m 1 'invalid kernel return' /tmp/err)"
	say "WALK ls=$lrc cat=$crc xattr=$xrc readdir=$drc errors=$(wc -l </tmp/err) $(first 2 /tmp/err)"
	rc=0
	umount /mnt || rc=$?
	say "UMOUNT rc=$rc"
}

for drv in $drvs; do
	case $drv in
	stock | ours)
		if insmod "/lib/modules/drv/$drv/squashfs.ko" 2>/tmp/err; then
			say "INSMOD $drv ok"
		else
			say "INSMOD $drv fail $(first 2 /tmp/err)"
		fi
		;;
	esac
	say "DRIVER $drv banner=$(dmesg | grep -c 'livesquash: squashfs 4.0 driver') fs=$(grep -c squashfs /proc/filesystems)"
	while read -r id dev; do
		case $skip in *",$drv:$id,"*) continue ;; esac
		say "BEGIN $drv $id $dev"
		kmsg "BEGIN $drv $id"
		[ "$drv:$id" = "$(arg hang)" ] && sleep 100000 # run.sh DRIVER_TEST_HANG
		"$mode" "$drv" "$id" "$dev"
		kmsg "END $drv $id"
		say "END $drv $id"
	done </tmp/disks
	case $drv in
	stock | ours)
		rc=0
		rmmod squashfs 2>/tmp/err || rc=$?
		say "RMMOD $drv rc=$rc $(first 1 /tmp/err)"
		;;
	esac
done
say "DONE"
sync
poweroff -f
