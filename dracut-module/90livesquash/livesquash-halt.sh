#!/bin/sh
# halt for the livesquash initramfs: there is no init daemon to ask, so sync
# and call the kernel directly (busybox halt -f).
/usr/lib/livesquash/busybox sync
exec /usr/lib/livesquash/busybox halt -f
