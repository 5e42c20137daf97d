#!/bin/bash
# Build a Debian live root (systemd) in DIR with debootstrap: DEBIAN_SUITE
# trixie (Debian 13, the default) or bookworm (Debian 12).
# The downloaded packages are cached as a debootstrap tarball in CACHE, so a
# rebuild does not download again (debootstrap.sh).  Live-CD style: empty root
# password, root autologin on the serial console, a getty on tty1, hostname
# livesquash.
# usage: rootfs-debian.sh DIR CACHE_DIR
set -euo pipefail

dir=${1:?usage: rootfs-debian.sh DIR CACHE_DIR}
cache=${2:?usage: rootfs-debian.sh DIR CACHE_DIR}
SUITE=${DEBIAN_SUITE:-trixie}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
INCLUDE=systemd-sysv,udev,kmod,procps,less,util-linux,mount

die() { echo "rootfs-debian: $*" >&2; exit 1; }
case $SUITE in
    trixie | bookworm) ;;
    *) die "unknown DEBIAN_SUITE '$SUITE' (want trixie or bookworm)" ;;
esac

MIRROR=$MIRROR bash "$(dirname "${BASH_SOURCE[0]}")/debootstrap.sh" debian "$SUITE" "$INCLUDE" "$dir" "$cache"

echo "rootfs-debian: configuring (hostname, root login, gettys)"
echo livesquash > "$dir/etc/hostname"
cat > "$dir/etc/hosts" <<'EOT'
127.0.0.1	localhost
127.0.1.1	livesquash
::1		localhost ip6-localhost ip6-loopback
EOT
: > "$dir/etc/fstab"
# systemd makes a transient machine id on every live boot
: > "$dir/etc/machine-id"
rm -f "$dir/var/lib/dbus/machine-id"
chroot "$dir" passwd -d root > /dev/null

# root autologin on the serial console (getty there comes from console=ttyS0)
sg=$dir/etc/systemd/system/serial-getty@ttyS0.service.d
mkdir -p "$sg"
cat > "$sg/autologin.conf" <<'EOT'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 - $TERM
EOT
mkdir -p "$dir/etc/systemd/system/getty.target.wants"
ln -sf /usr/lib/systemd/system/serial-getty@.service \
    "$dir/etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service"
ln -sf /usr/lib/systemd/system/getty@.service \
    "$dir/etc/systemd/system/getty.target.wants/getty@tty1.service"

# a live system has no use for these
echo "Welcome to livesquash (Debian $SUITE live). Log in as root, no password." > "$dir/etc/motd"
rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/cache/apt/*.bin \
    "$dir"/var/lib/apt/lists/* "$dir"/var/log/*.log "$dir"/var/log/apt/* \
    "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/*
mkdir -p "$dir/var/lib/apt/lists/partial"
# ldconfig's aux-cache records the inode numbers and times of the libraries it saw,
# which differ from build to build (the only difference between two clean builds'
# Debian images); ldconfig makes it again when it needs one
rm -f "$dir/var/cache/ldconfig/aux-cache"
echo "deb $MIRROR $SUITE main" > "$dir/etc/apt/sources.list"

# squashfs cannot store POSIX ACLs (systemd's postinst puts one on
# /var/log/journal; systemd-tmpfiles sets it again at boot): drop them so the
# tree and the image agree
if command -v getfattr > /dev/null; then
    getfattr -R -h --absolute-names -m '^system\.posix_acl_' "$dir" 2> /dev/null \
        | sed -n 's/^# file: //p' | while read -r f; do
            setfattr -h -x system.posix_acl_access "$f" 2> /dev/null || :
            setfattr -h -x system.posix_acl_default "$f" 2> /dev/null || :
        done
fi

for d in proc sys dev run tmp; do
    [[ -d $dir/$d ]] || die "$dir/$d missing after debootstrap"
done
[[ -e $dir/etc/os-release || -e $dir/usr/lib/os-release ]] || die "no os-release in $dir"
for u in serial-getty@ getty@; do
    [[ -f $dir/usr/lib/systemd/system/$u.service ]] || die "$dir has no $u.service (systemd-sysv missing?)"
done
echo "rootfs-debian: $(du -sh "$dir" | cut -f1) in $dir"
