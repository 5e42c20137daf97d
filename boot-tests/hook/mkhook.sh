#!/bin/bash
# boot-tests/hook/mkhook.sh DIR: the tree the tests add to a product ISO's root
# image (iso/remaster --add DIR --run 'sh /usr/lib/livesquash-test/install') to
# make the test ISO. The product carries none of it.
#   usr/lib/livesquash-test/autorun   the hook: runs, as root at the end of boot,
#                                     the script QEMU passes as fw_cfg
#                                     opt/livesquash/autorun (inert without one)
#   usr/lib/livesquash-test/install   run once in the chroot: starts the hook at
#                                     the end of boot (a systemd unit, or a
#                                     busybox init ::once: line)
#   usr/share/livesquash-test/        a few of every kind of inode, so that the live
#                                     boot reads them through our driver: hard link,
#                                     symlinks (relative, absolute, dangling), fifo,
#                                     block device, empty file and folder, setuid,
#                                     owned by 1000:100, sparse, seeded data,
#                                     SHA256SUMS
# Everything is made the same way every time (no random bytes, fixed times).
set -euo pipefail

dir=${1:?usage: mkhook.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir"
mkdir -p "$dir/usr/lib/livesquash-test" "$dir/usr/share/livesquash-test"
install -m 0755 "$here/autorun" "$here/install" "$dir/usr/lib/livesquash-test/"
install -m 0644 "$here/livesquash-test.service" "$dir/usr/lib/livesquash-test/"

t=$dir/usr/share/livesquash-test
echo "hello from the livesquash test hook" > "$t/hello.txt"
ln "$t/hello.txt" "$t/hello-hardlink.txt"
ln -s hello.txt "$t/hello-symlink"
ln -s /usr/share/livesquash-test/hello.txt "$t/hello-abs-symlink"
ln -s does-not-exist "$t/dangling-symlink"
mkfifo -m 0644 "$t/fifo"
mknod -m 0660 "$t/sda" b 8 0
: > "$t/empty"
mkdir "$t/empty-dir"
# 300 kB that compress badly, the same every time
python3 -c 'import random, sys; r = random.Random(20261204); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(300000)))' > "$t/random-300k.bin"
truncate -s 8M "$t/sparse-8m.bin"
printf 'x' | dd of="$t/sparse-8m.bin" bs=1 seek=4194304 conv=notrunc status=none
install -m 4755 /dev/null "$t/setuid-file"
install -m 0640 -o 1000 -g 100 /dev/null "$t/owned-by-user"
(cd "$t" && sha256sum hello.txt random-300k.bin sparse-8m.bin > SHA256SUMS)
find "$dir" -exec touch -h -d '2001-02-03 04:05:06 UTC' {} +
