#!/bin/bash
# Build a small busybox live root in DIR: busybox init + inittab + rcS, a root
# shell on ttyS0 and tty1, the livesquash test hook, and a few files of every
# kind (symlinks, device nodes, fifo, hard links) so the image is a fair test.
# usage: rootfs-busybox.sh DIR
set -euo pipefail

dir=${1:?usage: rootfs-busybox.sh DIR}
BUSYBOX=${BUSYBOX:-/bin/busybox}

die() { echo "rootfs-busybox: $*" >&2; exit 1; }
[[ -x $BUSYBOX ]] || die "$BUSYBOX missing: run 'make deps' (package busybox-static)"
file -L "$BUSYBOX" 2> /dev/null | grep -q 'statically linked' \
    || ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic executable' \
    || die "$BUSYBOX is not statically linked (install busybox-static)"

umask 022
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"

echo "rootfs-busybox: directories"
mkdir -p bin sbin usr/bin usr/sbin etc/init.d proc sys dev run tmp root \
    var/log mnt home
chmod 1777 tmp
chmod 0700 root
ln -s ../run var/run

echo "rootfs-busybox: busybox and its $("$BUSYBOX" --list | wc -l) applets"
install -m 0755 "$BUSYBOX" bin/busybox
"$BUSYBOX" --list-full | while read -r applet; do
    [[ -e $applet || -L $applet ]] && continue
    mkdir -p "$(dirname "$applet")"
    ln -s /bin/busybox "$applet"
done
[[ -L sbin/init ]] || die "busybox has no init applet"

echo "rootfs-busybox: /etc"
cat > etc/inittab <<'EOT'
# busybox init: rcS once, then a root shell on the serial console and tty1
::sysinit:/etc/init.d/rcS
ttyS0::respawn:-/bin/sh
tty1::respawn:-/bin/sh
::ctrlaltdel:/sbin/reboot
::shutdown:/bin/sync
::shutdown:/bin/umount -a -r
EOT

cat > etc/init.d/rcS <<'EOT'
#!/bin/sh
# livesquash busybox live system: mount the API filesystems (those the
# initramfs moved here stay as they are), set the hostname, run the test hook.
PATH=/sbin:/bin:/usr/sbin:/usr/bin
export PATH

mounted() { grep -q "^[^ ]* $1 " /proc/mounts; }

[ -e /proc/mounts ] || mount -t proc -o nosuid,nodev,noexec proc /proc
mounted /sys || mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mounted /dev || mount -t devtmpfs -o mode=0755,nosuid devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mounted /dev/pts || mount -t devpts -o gid=5,mode=620 devpts /dev/pts
mounted /dev/shm || mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
mounted /run || mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
mounted /tmp || mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp

hostname -F /etc/hostname
ip link set lo up 2>/dev/null

# shellcheck disable=SC1091
. /etc/os-release
echo "$PRETTY_NAME: root is $(awk '$2 == "/" { print $3 }' /proc/mounts), up $(cut -d' ' -f1 /proc/uptime) s"
EOT
chmod 0755 etc/init.d/rcS

echo livesquash > etc/hostname
cat > etc/hosts <<'EOT'
127.0.0.1	localhost
127.0.1.1	livesquash
EOT
cat > etc/os-release <<'EOT'
NAME="livesquash"
ID=livesquash
VERSION_ID=1
PRETTY_NAME="livesquash busybox live system"
HOME_URL="https://example.invalid/livesquash"
EOT
cat > etc/passwd <<'EOT'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
user:x:1000:1000:live user:/home/user:/bin/sh
EOT
cat > etc/group <<'EOT'
root:x:0:
daemon:x:1:
tty:x:5:
disk:x:6:
users:x:100:
user:x:1000:
nogroup:x:65534:
EOT
printf 'root::19000:0:99999:7:::\nuser:!:19000:0:99999:7:::\n' > etc/shadow
chmod 0640 etc/shadow
cat > etc/profile <<'EOT'
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
export PS1='\u@\h:\w\$ '
[ "$(id -u)" = 0 ] && PS1='\u@\h:\w# '
EOT
echo "Welcome to livesquash (busybox). Root shell, no password." > etc/motd
: > etc/fstab

# device nodes a console needs before devtmpfs, and a user's home
mkdir -p home/user && chown 1000:1000 home/user && chmod 0750 home/user
mknod -m 0600 dev/console c 5 1
mknod -m 0666 dev/null c 1 3

echo "rootfs-busybox: $(du -sh . | cut -f1) in $dir"
