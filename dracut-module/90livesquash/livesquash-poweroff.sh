#!/bin/sh
# poweroff for the livesquash initramfs: there is no init daemon to ask, so sync
# and call the kernel directly (busybox poweroff -f).
/usr/lib/livesquash/busybox sync
exec /usr/lib/livesquash/busybox poweroff -f
