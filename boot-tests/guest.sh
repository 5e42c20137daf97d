#!/bin/sh
# boot-tests/guest.sh: the checks that run inside a booted live system, as root,
# from the test data run.sh passes through QEMU fw_cfg (opt/livesquash/data, a tar
# unpacked into /run/livesquash-tests by the autorun bootstrap). POSIX sh for busybox
# and for Debian (dash + coreutils).
#
# Prints unnumbered TAP ("ok - ...", "not ok - ...", "# ...") on /dev/ttyS1, the
# second serial port, which QEMU writes to results.log; run.sh numbers the lines.
# Data: config (shell variables), manifest (the host's manifest of the packed tree),
# manifest.sh, guest-lib.sh (gl_open, gl_check, ...), markers (optional: "PATH SHA256"
# lines that must exist).

D=/run/livesquash-tests
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
TMPDIR=$D/tmp
export TMPDIR
mkdir -p "$TMPDIR"
cd "$D" || exit 1
LS_NAME=guest
LS_IMG_REL=LiveOS/squashfs.img
LS_COPYUP=""
# the medium tests (run.sh suite_media): LS_IMG the image the root runs from (default
# the medium's), LS_RELEASED=DEV: the medium DEV (sr0, sda) must be released,
# LS_SWITCH_WAIT=N: rd.live.ram=background must switch to LS_IMG within N s,
# LS_PERSIST=write|verify|readonly|reset with LS_PDEL, LS_PMODE (image files to
# delete and to chmod 0600), LS_ISOSCAN=/PATH: the medium is that ISO file,
# LS_EJECT=1: after the RELEASED line the host ejects the CD, LS_OVLSIZE=MiB:
# rd.live.overlay.size=, LS_PERSIST=image with LS_PIMAGE=/FILE: the overlay in an ext4
# image file on a vfat device, LS_SECUREBOOT=1: booted with UEFI Secure Boot enforced;
# LS_NET=download|stream (run.sh suite_netboot): the image came over the network
LS_NET=""
LS_PIMAGE=""
LS_SECUREBOOT=""
LS_EJECT=""
LS_OVLSIZE=""
LS_IMG=""
LS_ISOSCAN=""
LS_RELEASED=""
LS_SWITCH_WAIT=""
LS_PERSIST=""
LS_PDEL=""
LS_PMODE=""
# shellcheck disable=SC1091
. ./config
# shellcheck disable=SC1091 # the shared guest functions (gl_*), in the test data too
. ./guest-lib.sh

LIVE=/run/initramfs/live
BASE=/run/rootfsbase
IMG=${LS_IMG:-$LIVE/$LS_IMG_REL}

gl_open
echo "# livesquash guest checks begin" >&3

# field N (1-based) of the last /proc/mounts line whose mount point is $1
mount_field() {
	awk -v mp="$1" -v n="$2" '$2 == mp { v = $n } END { if (v != "") print v }' /proc/mounts
}

has_opt() { # OPTIONS OPT
	case ",$1," in *",$2,"*) return 0 ;; esac
	return 1
}

# same_manifest WANT GOT: explain the first differences
same_manifest() {
	if cmp -s "$1" "$2"; then
		return 0
	fi
	echo "manifests differ: want $(wc -l <"$1") lines, got $(wc -l <"$2")"
	awk -F '\t' 'NR == FNR { want[FNR] = $0; n = FNR; next }
		want[FNR] != $0 { print "first difference, line " FNR ":"; print "want: " want[FNR]; print "got:  " $0; found = 1; exit }
		END { if (!found && FNR < n) print "got ends at line " FNR ", want goes on: " want[FNR + 1] }' "$1" "$2"
	if command -v diff >/dev/null 2>&1; then
		diff "$1" "$2" | head -n 8
	fi
	return 1
}

# manifest_of DIR OUT [EXCLUDES]: runs manifest.sh, reports its time
manifest_of() {
	gl_t0
	if [ -n "${3:-}" ]; then
		sh "$D/manifest.sh" -x "$3" "$1" >"$2" 2>"$2.err"
	else
		sh "$D/manifest.sh" "$1" >"$2" 2>"$2.err"
	fi
	_rc=$?
	_secs=$(gl_secs)
	gl_diag "manifest of $1: $(wc -l <"$2") paths in $_secs s"
	if [ "$_rc" -ne 0 ] || [ -s "$2.err" ]; then
		gl_diag "manifest.sh exit $_rc; its errors:"
		gl_diagfile "$2.err"
		return 1
	fi
	return 0
}

check_manifest() { # DESCRIPTION DIR [EXCLUDES]
	if manifest_of "$2" "$TMPDIR/got" "${3:-}"; then
		if [ -n "${3:-}" ]; then
			sh "$D/manifest.sh" -x "$3" -F "$D/manifest" >"$TMPDIR/want"
		else
			cp "$D/manifest" "$TMPDIR/want"
		fi
		gl_check "$1" same_manifest "$TMPDIR/want" "$TMPDIR/got"
	else
		gl_notok "$1"
	fi
}

gl_diag "$LS_NAME: guest checks start at uptime $(gl_uptime) s, kernel $(uname -r)"
# what the initramfs said (the host's tests look for some of these lines)
dmesg | grep -E 'livesquash: |Warning: livesquash' | sed 's/^\[ *[0-9.]*\] //; s/^/@@ KMSG /' >&3

# 1. our driver is the one in this kernel
gl_check "kernel log has our driver's init line 'livesquash: squashfs 4.0 driver'" \
	sh -c "dmesg | grep -F 'livesquash: squashfs 4.0 driver'"

# 2. / is an overlay on /run/rootfsbase
root_type=$(mount_field / 3)
root_opts=$(mount_field / 4)
root_source=$(mount_field / 1)
# dracut's overlayfs module mounts it as dmsquash-live does: upperdir=/run/overlayfs,
# workdir=/run/ovlwork, lowerdir=[/run/overlayfs-r:]/run/rootfsbase, the first
# two (and the third) links to where they are (upper: the folder they lead to)
root_upper=$(echo "$root_opts" | tr ',' '\n' | sed -n 's/^upperdir=//p')
root_lower=$(echo "$root_opts" | tr ',' '\n' | sed -n 's/^lowerdir=//p')
upper=$(readlink -f "$root_upper")
root_is_overlay() {
	echo "/ is $root_type $root_source ($root_opts); /run/overlayfs -> $upper, /run/ovlwork -> $(readlink /run/ovlwork)"
	# (a read-only persistent upper is a layer above it: lowerdir=/run/overlayfs-r:$BASE)
	[ "$root_type" = overlay ] && [ "${root_lower##*:}" = "$BASE" ] && [ "$root_source" = LiveOS_rootfs ] &&
		[ "$root_upper" = /run/overlayfs ] && [ -L /run/overlayfs ] && [ -L /run/ovlwork ]
}
gl_check "/ is overlayfs LiveOS_rootfs whose lowest layer is $BASE, upper /run/overlayfs (dracut's overlayfs module)" root_is_overlay

# 3. /run/rootfsbase is our squashfs on a loop device backed by the image
base_dev=$(mount_field $BASE 1)
base_type=$(mount_field $BASE 3)
base_opts=$(mount_field $BASE 4)
base_is_squashfs() {
	echo "$BASE: $base_dev $base_type $base_opts"
	[ "$base_type" = squashfs ] && has_opt "$base_opts" ro
}
gl_check "$BASE is mounted read-only with fs type squashfs" base_is_squashfs
loop_backing() { # /dev/loopN -> its backing file
	cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null
}
# rd.live.ram=background: the loop device under $BASE switches to the RAM copy
if [ -n "$LS_SWITCH_WAIT" ]; then
	b0=$(loop_backing "$base_dev")
	gl_diag "backing file of $base_dev at uptime $(gl_uptime) s: $b0"
	if [ "$b0" != "$IMG" ]; then
		check_manifest "manifest of $BASE while the background copy runs equals the host's" $BASE
	fi
	switched() {
		t=0
		while [ "$(loop_backing "$base_dev")" != "$IMG" ] && [ "$t" -lt "$LS_SWITCH_WAIT" ]; do
			sleep 1
			t=$((t + 1))
		done
		echo "backing file of $base_dev: $(loop_backing "$base_dev") at uptime $(gl_uptime) s"
		dmesg | grep 'livesquash: background copy' | tail -n 1
		[ "$(loop_backing "$base_dev")" = "$IMG" ]
	}
	gl_check "the loop device under $BASE switches to the RAM copy $IMG within $LS_SWITCH_WAIT s" switched
fi
base_on_image() {
	echo "$BASE: device $base_dev, backing file '$(loop_backing "$base_dev")'"
	case $base_dev in /dev/loop*) ;; *) return 1 ;; esac
	[ "$(loop_backing "$base_dev")" = "$IMG" ]
}
gl_check "$BASE is a loop device backed by $IMG" base_on_image

live_is_ro() {
	echo "$LIVE: $(mount_field $LIVE 1) $(mount_field $LIVE 3) $(mount_field $LIVE 4)"
	has_opt "$(mount_field $LIVE 4)" ro && [ -f "$IMG" ]
}
if [ -n "$LS_RELEASED" ]; then
	# after a copy to RAM nothing may hold the medium: not mounted, not a loop's
	# backing store, no holders (the host then ejects it)
	released_medium() {
		echo "mounts of /dev/$LS_RELEASED or at $LIVE:"
		grep -E "^/dev/${LS_RELEASED}[0-9]* | $LIVE " /proc/mounts && return 1
		for l in /sys/block/loop*/loop/backing_file; do
			[ -r "$l" ] || continue
			echo "$l: $(cat "$l")"
			case $(cat "$l") in "$LIVE"/* | /dev/"$LS_RELEASED"*) return 1 ;; esac
		done
		echo "holders of $LS_RELEASED: $(ls /sys/block/"$LS_RELEASED"/holders)"
		[ -z "$(ls /sys/block/"$LS_RELEASED"/holders)" ]
	}
	gl_check "the medium /dev/$LS_RELEASED is released: not mounted, no loop device on it, no holders" released_medium
	gl_say "RELEASED $LS_RELEASED"
	if [ -n "${LS_EJECT:-}" ]; then
		# the host ejects the CD when it sees RELEASED (QEMU refuses if the guest
		# holds it locked); from then on it cannot be read
		ejected() {
			t=0
			while dd if="/dev/$LS_RELEASED" of=/dev/null bs=2048 count=1 2>/dev/null && [ "$t" -lt 30 ]; do
				sleep 1
				t=$((t + 1))
			done
			echo "/dev/$LS_RELEASED after ${t} s: $(dd if="/dev/$LS_RELEASED" of=/dev/null bs=2048 count=1 2>&1 | head -n 1)"
			! dd if="/dev/$LS_RELEASED" of=/dev/null bs=2048 count=1 2>/dev/null
		}
		gl_check "the host ejected /dev/$LS_RELEASED: it cannot be read any more (the checks below read the RAM copy)" ejected
	fi
elif [ -n "$LS_NET" ]; then
	net_root() {
		echo "kernel command line: $(cat /proc/cmdline)"
		echo "mounted at $LIVE: '$(mount_field $LIVE 1)'"
		grep -q 'root=live:http' /proc/cmdline && [ -z "$(mount_field $LIVE 1)" ]
	}
	gl_check "the root image came over the network (root=live:http://...); no medium is mounted at $LIVE" net_root
	if [ "$LS_NET" = stream ]; then
		# after the switch to the RAM copy: the NBD device disconnected, nbdkit gone
		nbdkit_runs() {
			for c in /proc/[0-9]*/comm; do
				[ "$(cat "$c" 2>/dev/null)" = nbdkit ] && echo "${c%/comm}" && return 0
			done
			return 1
		}
		nbd_released() {
			t=0
			while nbdkit_runs >/dev/null && [ "$t" -lt 15 ]; do
				sleep 1
				t=$((t + 1))
			done
			echo "nbd0: size $(cat /sys/block/nbd0/size) sectors, holders '$(ls /sys/block/nbd0/holders)'"
			p=$(nbdkit_runs) && echo "nbdkit still runs ($p) after 15 s" && return 1
			[ "$(cat /sys/block/nbd0/size)" = 0 ] && [ -z "$(ls /sys/block/nbd0/holders)" ]
		}
		gl_check "the network image is let go: /dev/nbd0 disconnected, nbdkit stopped (within 15 s)" nbd_released
	fi
else
	gl_check "the medium is mounted read-only at $LIVE and holds $LS_IMG_REL" live_is_ro
fi

# 3b. iso-scan/filename=: the medium is a loop device on that ISO file
if [ -n "${LS_ISOSCAN:-}" ]; then
	medium_is_isofile() {
		ldev=$(mount_field $LIVE 1)
		echo "$LIVE: $ldev, backing file '$(loop_backing "$ldev")'"
		[ "$(loop_backing "$ldev")" = "/run/initramfs/isoscan/${LS_ISOSCAN#/}" ]
	}
	gl_check "the medium at $LIVE is a loop device of the ISO file $LS_ISOSCAN (iso-scan/filename)" medium_is_isofile
fi

# 3c. Secure Boot (run.sh suite_secureboot): the firmware says it is on, and the
# kernel saw it and locked itself down
if [ -n "${LS_SECUREBOOT:-}" ]; then
	sb_enforced() {
		ev=/sys/firmware/efi/efivars
		[ -e $ev/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c ] || mount -t efivarfs efivarfs $ev
		[ -e /sys/kernel/security/lockdown ] || mount -t securityfs securityfs /sys/kernel/security
		# the variable: 4 bytes of attributes, then 1 (on) or 0 (read whole: efivarfs
		# files do not seek)
		sb=$(od -An -tu1 $ev/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c | awk '{ print $5 }')
		ld=$(cat /sys/kernel/security/lockdown)
		echo "EFI SecureBoot=$sb, lockdown: $ld"
		[ "$sb" = 1 ] && case $ld in *"[integrity]"* | *"[confidentiality]"*) ;; *) false ;; esac
	}
	gl_check "UEFI Secure Boot is on (the SecureBoot variable) and the kernel locked itself down" sb_enforced
fi

# 4. markers that must be in the image (remastered ISOs)
if [ -s "$D/markers" ]; then
	while read -r mpath msha; do
		has_marker() {
			for r in "$BASE" ""; do
				got=$(sha256sum "$r/${mpath#./}" | cut -d' ' -f1)
				echo "$r/${mpath#./}: sha256 '$got', want '$msha'"
				[ "$got" = "$msha" ] || return 1
			done
		}
		gl_check "marker ${mpath#.} is in $BASE and in / with the expected content" has_marker
	done <"$D/markers"
fi

# 5. the image as mounted at boot equals the host's manifest of the packed tree
check_manifest "manifest of $BASE equals the host's manifest of the packed tree" $BASE

# 6. / equals it too, except what changed at runtime: mount points and their
# subtrees, paths in the overlay's upper dir (a directory there: itself only)
: >"$TMPDIR/root.exclude"
echo "= ." >>"$TMPDIR/root.exclude"
awk '$2 != "/" { print "/ ." $2 }' /proc/mounts >>"$TMPDIR/root.exclude"
# (and the layers between them and $BASE: a read-only persistent upper)
for layer in $upper $(echo "$root_lower" | tr ':' '\n'); do
	if [ "$layer" = "$BASE" ] || [ ! -d "$layer" ]; then continue; fi
	(cd "$layer" && find . -xdev -type d) | sed 's/^/= /' >>"$TMPDIR/root.exclude"
	(cd "$layer" && find . -xdev ! -type d) | sed 's/^/\/ /' >>"$TMPDIR/root.exclude"
done
gl_diag "/: $(grep -c . "$TMPDIR/root.exclude") paths excluded as changed at runtime"
check_manifest "manifest of / equals the host's, except mount points and runtime changes" / "$TMPDIR/root.exclude"

# 7. writes land in the tmpfs upper, the lower layer stays as it was
write_lands_in_upper() {
	f=livesquash-write-test
	echo "written at runtime" >"/$f" || return 1
	echo "upper: $upper"
	[ "$(cat "/$f")" = "written at runtime" ] || return 1
	[ -f "$upper/$f" ] && [ "$(cat "$upper/$f")" = "written at runtime" ] || return 1
	[ ! -e "$BASE/$f" ] || { echo "$BASE/$f exists"; return 1; }
	echo "upper is on $(df -P "$upper" | awk 'NR == 2 { print $1 }')"
	rm "/$f" && [ ! -e "/$f" ]
}
gl_check "a new file in / lands in the overlay's upper dir, not in $BASE" write_lands_in_upper

if [ -n "$LS_COPYUP" ]; then
	copy_up() {
		p=${LS_COPYUP#./}
		want=$(awk -F '\t' -v p="$LS_COPYUP" '$1 == p { print $9 }' "$D/manifest")
		echo "appended by guest.sh" >>"/$p" || return 1
		lower=$(sha256sum "$BASE/$p" | cut -d' ' -f1)
		echo "lower $BASE/$p: sha256 $lower, want $want"
		[ -n "$want" ] && [ "$lower" = "$want" ] || return 1
		tail -n 1 "$upper/$p" | grep -qx "appended by guest.sh" || { echo "not copied up to $upper/$p"; return 1; }
		cmp "/$p" "$upper/$p"
	}
	gl_check "appending to ${LS_COPYUP#.} copies it up; the lower file is unchanged" copy_up
fi

# 7a. rd.live.overlay.size=MiB: the tmpfs upper's size
if [ -n "${LS_OVLSIZE:-}" ]; then
	ovl_size() {
		echo "/run/initramfs/overlay: $(mount_field /run/initramfs/overlay 3) $(mount_field /run/initramfs/overlay 4); upper $upper"
		has_opt "$(mount_field /run/initramfs/overlay 4)" "size=$((LS_OVLSIZE * 1024))k" &&
			[ "$upper" = /run/initramfs/overlay/upper ]
	}
	gl_check "rd.live.overlay.size=$LS_OVLSIZE: the tmpfs under the overlay's upper is $LS_OVLSIZE MiB" ovl_size
fi
# a copy to RAM: what it takes
if [ -d /run/initramfs/ram ] && grep -q ' /run/initramfs/ram ' /proc/mounts; then
	gl_diag "RAM copy: $(df -k /run/initramfs/ram | awk 'NR == 2 { print $3 " KiB used of " $2 }'), MemAvailable now $(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo) MiB"
fi

# 7b. persistence (rd.live.overlay=): what one boot changes, the next one sees
PERSIST=/run/initramfs/persist
PFILE=/livesquash-persist.txt
mode_of() { stat -c %a "$1" 2>/dev/null; }
want_mode() { # the manifest's mode of image path ./X, as stat -c %a prints it
	awk -F '\t' -v p="$1" '$1 == p { sub(/^0+/, "", $3); print $3 }' "$D/manifest"
}
persist_on_device() { # rw|ro
	echo "$PERSIST: $(mount_field $PERSIST 1) $(mount_field $PERSIST 3) $(mount_field $PERSIST 4); upper $upper"
	has_opt "$(mount_field $PERSIST 4)" "$1" || return 1
	if [ "$1" = rw ]; then
		case $upper in "$PERSIST"/*) return 0 ;; esac
		return 1
	fi
	# read-only: the kept upper is a lower layer, the new upper is the tmpfs
	echo "lowerdir=$root_lower; /run/overlayfs-r -> $(readlink -f /run/overlayfs-r)"
	case $root_lower in /run/overlayfs-r:*) ;; *) return 1 ;; esac
	case $(readlink -f /run/overlayfs-r) in "$PERSIST"/*) ;; *) return 1 ;; esac
	[ "$upper" = /run/initramfs/overlay/upper ]
}
changes_seen() {
	echo "$PFILE: '$(cat $PFILE 2>&1)'; /${LS_PDEL#./} $(ls -d "/${LS_PDEL#./}" 2>&1); /${LS_PMODE#./} mode $(mode_of "/${LS_PMODE#./}")"
	grep -q '^written by persist-write$' $PFILE && [ ! -e "/${LS_PDEL#./}" ] &&
		[ "$(mode_of "/${LS_PMODE#./}")" = 600 ]
}
changes_gone() {
	echo "$PFILE: $(ls -d $PFILE 2>&1); /${LS_PDEL#./}: $(ls -d "/${LS_PDEL#./}" 2>&1); /${LS_PMODE#./} mode $(mode_of "/${LS_PMODE#./}"), image's $(want_mode "$LS_PMODE")"
	[ ! -e $PFILE ] && [ -e "/${LS_PDEL#./}" ] && [ "$(mode_of "/${LS_PMODE#./}")" = "$(want_mode "$LS_PMODE")" ]
}
case $LS_PERSIST in
write)
	gl_check "the overlay's upper is on the persistence device, mounted rw at $PERSIST" persist_on_device rw
	gl_check "write $PFILE" sh -c "echo 'written by persist-write' > $PFILE"
	gl_check "delete the image's file /${LS_PDEL#./}" rm "/${LS_PDEL#./}"
	gl_check "chmod 0600 the image's file /${LS_PMODE#./}" chmod 0600 "/${LS_PMODE#./}"
	gl_check "sync" sync
	gl_check "the changes are in place before power-off" changes_seen
	;;
verify)
	gl_check "the overlay's upper is on the persistence device, mounted rw at $PERSIST" persist_on_device rw
	gl_check "the last boot's changes are here: $PFILE written, /${LS_PDEL#./} deleted, /${LS_PMODE#./} mode 600" changes_seen
	;;
readonly)
	gl_check "rd.live.overlay.readonly: the persistence device is mounted ro at $PERSIST, its upper a lower layer under a tmpfs upper" persist_on_device ro
	gl_check "the kept changes are here: $PFILE written, /${LS_PDEL#./} deleted, /${LS_PMODE#./} mode 600" changes_seen
	ro_write() {
		echo new >/livesquash-ro-new.txt && [ -f "$upper/livesquash-ro-new.txt" ] &&
			[ ! -e "$PERSIST/LiveOS/overlayfs/upper/livesquash-ro-new.txt" ]
	}
	gl_check "a new file lands in the tmpfs upper, not on the persistence device" ro_write
	;;
image)
	# an ext4 image file on a vfat partition, loop-mounted at $PERSIST-img
	on_image() {
		echo "$PERSIST: $(mount_field $PERSIST 1) $(mount_field $PERSIST 3) $(mount_field $PERSIST 4)"
		echo "$PERSIST-img: $(mount_field $PERSIST-img 1) $(mount_field $PERSIST-img 3) $(mount_field $PERSIST-img 4), backing '$(loop_backing "$(mount_field $PERSIST-img 1)")'; upper $upper"
		[ "$(mount_field $PERSIST 3)" = vfat ] && [ "$(mount_field $PERSIST-img 3)" = ext4 ] &&
			[ "$(loop_backing "$(mount_field $PERSIST-img 1)")" = "$PERSIST/${LS_PIMAGE#/}" ] &&
			[ "$upper" = "$PERSIST-img/upper" ]
	}
	gl_check "the overlay's upper is in the ext4 image $LS_PIMAGE on the vfat persistence device" on_image
	gl_check "a new file lands in the image's upper" sh -c "echo image > $PFILE && sync && [ -f $PERSIST-img/upper$PFILE ]"
	;;
reset)
	gl_check "the overlay's upper is on the persistence device, mounted rw at $PERSIST" persist_on_device rw
	gl_check "rd.live.overlay.reset: the kept changes are gone ($PFILE, /${LS_PDEL#./} back, /${LS_PMODE#./} its image's mode)" changes_gone
	;;
esac

# 8. the image mounts a second time, read-only, elsewhere, as a user would
# (util-linux may reuse the loop device, and so the superblock, of $BASE)
MNT=$D/mnt
mkdir -p "$MNT"
gl_check "the image loop-mounts a second time: mount -t squashfs -o ro,loop $IMG $MNT" \
	mount -t squashfs -o ro,loop "$IMG" "$MNT"
mnt_dev=$(mount_field "$MNT" 1)
second_mount() {
	echo "$MNT: $mnt_dev $(mount_field "$MNT" 3) $(mount_field "$MNT" 4), backing '$(loop_backing "$mnt_dev")'"
	[ "$(mount_field "$MNT" 3)" = squashfs ] && has_opt "$(mount_field "$MNT" 4)" ro &&
		[ "$(loop_backing "$mnt_dev")" = "$IMG" ]
}
gl_check "the second mount is squashfs, read-only, on a loop device backed by the image" second_mount
check_manifest "manifest of the second mount equals the host's" "$MNT"
gl_check "umount $MNT" umount "$MNT"
gl_check "$MNT is gone from /proc/mounts" sh -c "! grep -q ' $MNT ' /proc/mounts"

# 9. a superblock of its own: a fresh read-only loop device, mounted; then every
# cache dropped and everything read again from the device
MNT2=$D/mnt2
mkdir -p "$MNT2"
loopdev=$(losetup -f 2>/dev/null)
own_sb() {
	echo "free loop device: '$loopdev' (in use by $BASE: $base_dev)"
	[ -n "$loopdev" ] && [ "$loopdev" != "$base_dev" ] || return 1
	losetup -r "$loopdev" "$IMG" || return 1
	mount -t squashfs -o ro "$loopdev" "$MNT2" || return 1
	echo "$MNT2: $(mount_field "$MNT2" 1) $(mount_field "$MNT2" 3) $(mount_field "$MNT2" 4)"
	[ "$(mount_field "$MNT2" 3)" = squashfs ]
}
gl_check "the image mounts with a superblock of its own: losetup -r on a free loop device, mount -t squashfs -o ro" own_sb
check_manifest "manifest of that mount (cold caches) equals the host's" "$MNT2"
sync
gl_check "echo 3 > /proc/sys/vm/drop_caches" sh -c 'echo 3 > /proc/sys/vm/drop_caches'
check_manifest "manifest of that mount after drop_caches equals the host's" "$MNT2"
check_manifest "manifest of $BASE after drop_caches equals the host's" $BASE

# 10. umount works and the loop device can be released
gl_check "umount $MNT2" umount "$MNT2"
released() {
	grep -q " $MNT2 " /proc/mounts && { echo "$MNT2 still in /proc/mounts"; return 1; }
	losetup -d "$loopdev" || return 1
	b=$(loop_backing "$loopdev")
	echo "$loopdev backing file after losetup -d: '$b'"
	[ -z "$b" ]
}
gl_check "after umount $MNT2 is gone from /proc/mounts and losetup -d frees $loopdev" released

gl_diag "$LS_NAME: guest checks end at uptime $(gl_uptime) s"
echo "# livesquash guest checks done" >&3
exec 3>&-
