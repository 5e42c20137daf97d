#!/bin/bash
# Debian 13's dracut (dracut-ng 106, with its live, squash and network
# modules) in a trixie tree DIR made with debootstrap, never installed on the
# host: its dracut-install and tools need trixie's C library. iso/mkinitramfs.sh
# runs it there (DRACUT=106). SUITE forky: forky's dracut-ng (112 today,
# DRACUT=112), whose dracut-core holds the live and squash modules. The tree is
# made again when this script changes.
# usage: dracut-chroot.sh DIR CACHE_DIR [SUITE]
set -euo pipefail

dir=${1:?usage: dracut-chroot.sh DIR CACHE_DIR [SUITE]}
cache=${2:?usage: dracut-chroot.sh DIR CACHE_DIR [SUITE]}
suite=${3:-trixie}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# dracut and what 90livesquash's install() takes from the tree it runs in
# (blkid losetup stat dd sha256sum timeout: util-linux, mount, coreutils;
# checkisomd5; busybox for the halt wrappers); zstd for --zstd; for a network
# image (make netboot): curl, nbdkit (its curl plugin), nbd-client and veritysetup, the CA
# certificates for https; iproute2, arping, pgrep for its network-legacy module
dracut="dracut-core,dracut-live,dracut-squash,dracut-network"
# (forky: no dracut-network, whose NetworkManager would need a D-Bus system bus
# too, as the network initramfs is 106's; switch_root moved to util-linux-extra)
[[ $suite == trixie ]] || dracut="dracut-core,util-linux-extra"
INCLUDE=$dracut,busybox,isomd5sum,zstd,util-linux,mount,udev,kmod,curl,nbdkit,nbd-client,ca-certificates,iproute2,iputils-arping,procps,cryptsetup-bin

stamp=$dir.stamp
want=$(cat "$here/dracut-chroot.sh" "$here/debootstrap.sh" | sha256sum | cut -c1-16)
if [[ -x $dir/usr/bin/dracut && $(cat "$stamp" 2> /dev/null) == "$want" ]]; then
    exit 0
fi
rm -f "$stamp"
echo "dracut-chroot: $suite's dracut in $dir"
bash "$here/debootstrap.sh" dracut "$suite" "$INCLUDE" "$dir" "$cache"
[[ -x $dir/usr/bin/dracut ]] || { echo "dracut-chroot: no usr/bin/dracut in $dir after debootstrap" >&2; exit 1; }
echo "$want" > "$stamp"
echo "dracut-chroot: $(chroot "$dir" dracut --version 2> /dev/null || echo 'dracut (version unknown)') in $dir"
