#!/bin/sh
# shellcheck disable=SC1091,SC2154 # dracut provides $root
# mount hook 00: medium, squashfs image, the overlay's upper for dracut's
# overlayfs module (mount hook 01); a no-op once $NEWROOT is up

type livesquash_mount_root > /dev/null 2>&1 || . /lib/livesquash-lib.sh

if [ "${root%%:*}" = "livesquash" ]; then
    livesquash_mount_root
fi
