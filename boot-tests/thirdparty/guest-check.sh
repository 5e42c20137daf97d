#!/bin/sh
# boot-tests/thirdparty/guest-check.sh: runs inside the remastered live-build ISO
# (installed by `iso/remaster --add` as /usr/local/sbin/livesquash-remaster-check and
# started at the end of boot by livesquash-remaster-check.service), writes TAP
# lines to the second serial port (QEMU's results.log), then powers off.
# Lines: "# livesquash guest checks begin", "ok - ..." / "not ok - ...", "# ..."
# (the host checks some of these: "# marker: ...", "# medium: ..."), and
# "# livesquash guest checks end".
PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec >/dev/ttyS1 2>&1
out=/run/livesquash-remaster-check.out

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
# t DESCRIPTION COMMAND...: ok if COMMAND succeeds, else its output as "#" lines
t() {
	desc=$1
	shift
	if "$@" >"$out" 2>&1; then
		ok "$desc"
	else
		notok "$desc"
		sed -n '1,8s/^/#   /p' "$out"
	fi
}
cmdline=$(cat /proc/cmdline)
# word W: W is a word of the kernel command line
word() {
	for w in $cmdline; do
		[ "$w" = "$1" ] && return 0
	done
	echo "/proc/cmdline: $(cat /proc/cmdline)"
	return 1
}
# no_word W: neither W nor W=... is
no_word() {
	for w in $cmdline; do
		case $w in "$1" | "$1"=*)
			echo "/proc/cmdline: $(cat /proc/cmdline)"
			return 1
			;;
		esac
	done
	return 0
}
root_is_live_boot() {
	r=$(findmnt -n -o FSTYPE,OPTIONS /) || return 1
	echo "/: $r"
	case $r in overlay*lowerdir=/run/live/rootfs/filesystem.squashfs*) ;; *) return 1 ;; esac
	case $r in *upperdir=/run/live/overlay/*) ;; *) return 1 ;; esac
}
squashfs_on_loop() {
	m=/run/live/rootfs/filesystem.squashfs
	fstype=$(findmnt -n -o FSTYPE "$m") || return 1
	src=$(findmnt -n -o SOURCE "$m") || return 1
	echo "$m: $fstype on $src"
	[ "$fstype" = squashfs ] || return 1
	case $src in /dev/loop*) ;; *) return 1 ;; esac
	back=$(cat "/sys/block/${src#/dev/}/loop/backing_file") || return 1
	echo "backing file: $back"
	[ "$back" = /run/live/medium/live/filesystem.squashfs ]
}
medium_ro_iso9660() {
	fstype=$(findmnt -n -o FSTYPE /run/live/medium) || return 1
	opts=$(findmnt -n -o OPTIONS /run/live/medium) || return 1
	echo "/run/live/medium: $fstype $opts"
	[ "$fstype" = iso9660 ] || return 1
	case ,$opts, in *,ro,*) ;; *) return 1 ;; esac
}
installed() {
	s=$(dpkg-query -W -f '${Status} ${Version}' livesquash-remaster-test) || return 1
	echo "$s"
	[ "$s" = "install ok installed 1.0" ]
}

echo "# livesquash guest checks begin"
echo "# kernel: $(uname -r); /proc/cmdline: $(cat /proc/cmdline)"
echo "# marker: $(cat /etc/livesquash-remaster-marker 2>/dev/null)"
echo "# medium: $(findmnt -n -o SOURCE,FSTYPE /run/live/medium 2>/dev/null)"
t "the --add marker /etc/livesquash-remaster-marker is there" test -s /etc/livesquash-remaster-marker
t "dpkg -s livesquash-remaster-test: installed by --run (dpkg -i)" installed
t "/usr/share/livesquash-remaster-test/ok is there (the package's file)" test -f /usr/share/livesquash-remaster-test/ok
t "the .deb --add put in /var/tmp was removed by --run" sh -c '! ls /var/tmp/*.deb 2>/dev/null'
t "/proc/cmdline has livesquash.remastered=1 (--cmdline-add)" word livesquash.remastered=1
t "/proc/cmdline has console=ttyS0,115200 (--cmdline-add)" word console=ttyS0,115200
t "/proc/cmdline has boot=live (live-build's own words kept)" word boot=live
t "/proc/cmdline has no quiet (--cmdline-remove)" no_word quiet
t "/proc/cmdline has no splash (--cmdline-remove)" no_word splash
t "/proc/cmdline has no verify-checksums (removed again for this boot)" no_word verify-checksums
t "/ is live-boot's overlay over /run/live/rootfs/filesystem.squashfs" root_is_live_boot
t "/run/live/rootfs/filesystem.squashfs is squashfs on a loop device backed by /run/live/medium/live/filesystem.squashfs" squashfs_on_loop
t "/run/live/medium is the ISO 9660 medium, read-only" medium_ro_iso9660
t "a file written to / lands in the overlay's upper dir" sh -c 'echo x >/livesquash-write && test -f /run/live/overlay/rw/livesquash-write'
echo "# systemd (this check is the job it waits for): $(systemctl is-system-running 2>&1); failed units: $(systemctl list-units --failed --no-legend --plain 2>&1 | awk '{ printf "%s ", $1 }')"
echo "# livesquash guest checks end"
sync
# (without dbus, as here, systemctl first fails to ask logind and says "Failed to
# connect to bus", then starts poweroff.target itself)
systemctl --no-block poweroff 2>/dev/null || poweroff -f
