#!/bin/sh
# shellcheck disable=SC1091,SC2154 # dracut provides $root
# mount hook 99: the overlay on $NEWROOT if dracut's overlayfs module (mount
# hook 01) did not mount it; a no-op once $NEWROOT is up

type livesquash_mount_overlay > /dev/null 2>&1 || . /lib/livesquash-lib.sh

if [ "${root%%:*}" = "livesquash" ]; then
    livesquash_mount_overlay
fi
