#!/bin/sh
# reboot for the livesquash initramfs: there is no init daemon to ask, so sync
# and call the kernel directly (busybox reboot -f).
/usr/lib/livesquash/busybox sync
exec /usr/lib/livesquash/busybox reboot -f
