#!/bin/sh
# boot-tests/autorun.sh: the payload QEMU passes as fw_cfg opt/livesquash/autorun.
# The live system's test hook copies it to /run/livesquash-autorun and runs it as
# root at the end of boot. It unpacks the test data (fw_cfg opt/livesquash/data, a
# tar), runs guest.sh (TAP on /dev/ttyS1), then powers the machine off.
D=/run/livesquash-tests
FW=/sys/firmware/qemu_fw_cfg/by_name/opt/livesquash/data/raw
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mkdir -p "$D"
if tar -xf "$FW" -C "$D" 2>"$D/tar.err" && [ -f "$D/guest.sh" ]; then
	sh "$D/guest.sh"
else
	{
		echo "# livesquash guest checks begin"
		echo "not ok - guest: unpack the test data from fw_cfg $FW"
		sed 's/^/#   /' "$D/tar.err"
	} >/dev/ttyS1
fi
sync
sleep 1
echo o >/proc/sysrq-trigger
sleep 20
poweroff -f
