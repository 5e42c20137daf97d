#!/bin/sh
# boot-tests/driver/guest-init.sh: /init of the driver-test initramfs (busybox, POSIX sh).
#
# Kernel command line:
#   lsq.mode=good|bad      good: manifest, statfs, readdir, re-read, remount, options
#                          bad: mount and walk corrupted images, report what failed
#   lsq.drv=D[,D...]       builtin (the kernel's own squashfs), stock or ours
#                          (insmod /lib/modules/drv/{stock,ours}/squashfs.ko first)
#   lsq.ndisks=N           how many virtio disks to wait for
# /skip (appended to the initramfs by run.sh for a restarted boot): "DRV:ID,..." pairs
# already done by an earlier boot, or the one it hung on
#   lsq.sendall=1          send every manifest, not only those that differ
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

stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
say() { echo "@@ $*" >&3; }
kmsg() { echo "lsqtest: $*" >/dev/kmsg; }
first() { head -n "$1" "$2" | tr '\n\t' '| ' | cut -c1-400; }

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

good() { # DRV ID DEV
	if ! mount -t squashfs -o ro "/dev/$3" /mnt 2>/tmp/err; then
		say "MOUNT fail $(first 3 /tmp/err)"
		return
	fi
	say "MOUNT ok"
	say "STATFS $(stat -f -c '%t %s %S %b %f %a %c %d %l' /mnt)"
	say "XATTR-ROOT $(LSQX_ENOTSUP=1 lsqx /mnt 2>&1 | cut -f 3 | cut -c1-60)"
	say "DF $(df -k /mnt | tail -n 1 | tr -s ' ' | cut -d ' ' -f 2-4)"
	rc=0
	sh /bin/manifest.sh -X /mnt >/tmp/m1 2>/tmp/err || rc=$?
	sha=$(sha256sum </tmp/m1 | cut -c1-64)
	say "MANIFEST rc=$rc lines=$(wc -l </tmp/m1) sha=$sha stderr=$(wc -l </tmp/err) $(first 3 /tmp/err)"
	want=$(grep "^$2 " /expected | cut -d ' ' -f 2)
	if [ "$sha" != "$want" ] || [ -n "$sendall" ]; then
		say "B64-BEGIN"
		gzip -c /tmp/m1 | base64 >&3
		say "B64-END"
	fi
	rc=0
	find /mnt -type d -exec lsqx -r 300 {} + >/tmp/rd 2>&1 || rc=$?
	say "READDIR rc=$rc dirs=$(grep -c '^readdir-ok' /tmp/rd) fail=$(grep -vc '^readdir-ok' /tmp/rd) $(grep -v '^readdir-ok' /tmp/rd | head -n 3 | tr '\n\t' '| ' | cut -c1-400)"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	rc=0
	sh /bin/manifest.sh -X /mnt >/tmp/m2 2>/tmp/err || rc=$?
	say "REREAD rc=$rc sha=$(sha256sum </tmp/m2 | cut -c1-64)"
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
