#!/bin/sh
# boot-tests/autorun.sh: the payload QEMU passes as fw_cfg opt/livesquash/autorun.
# The live system's test hook copies it to /run/livesquash-autorun and runs it as
# root at the end of boot. It unpacks the test data (fw_cfg opt/livesquash/data, a
# tar), runs guest.sh (TAP on /dev/ttyS1), then powers the machine off
# (gl_poweroff, from guest-lib.sh in the same tar).
D=/run/livesquash-tests
FW=/sys/firmware/qemu_fw_cfg/by_name/opt/livesquash/data/raw
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mkdir -p "$D"
if tar -xf "$FW" -C "$D" 2>"$D/tar.err" && [ -f "$D/guest.sh" ] && [ -f "$D/guest-lib.sh" ]; then
	# shellcheck disable=SC1091 # guest-lib.sh, unpacked from the test data
	. "$D/guest-lib.sh"
	sh "$D/guest.sh"
	gl_poweroff
	exit
fi
# no test data, so no guest-lib.sh either: say so and power off without it
{
	echo "# livesquash guest checks begin"
	echo "not ok - guest: unpack the test data from fw_cfg $FW"
	sed 's/^/#   /' "$D/tar.err"
} >/dev/ttyS1
sync
echo o >/proc/sysrq-trigger
sleep 20
poweroff -f
