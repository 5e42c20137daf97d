#!/bin/sh
# shellcheck disable=SC1091 # the lib is in the initramfs
# /sbin/livesquashroot: dracut's netroot handler for root=live:http(s)://...
# (netroot=livesquash:URL), run by its network module with the interface that
# got its address; the mount hook then fetches the image over it
# usage: livesquashroot NETIF NETROOT NEWROOT

type livesquash_set > /dev/null 2>&1 || . /lib/livesquash-lib.sh

[ -n "$1" ] || exit 1
livesquash_set netif "$1"
exit 0
