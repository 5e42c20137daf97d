#!/bin/bash
# Build build/rootfs/FLAVOUR/ (busybox or debian) unless it is up to date:
# the tree is rebuilt when the scripts or files that make it change.
# usage: mkrootfs.sh FLAVOUR BUILD_DIR
set -euo pipefail

flavour=${1:?usage: mkrootfs.sh busybox|debian BUILD_DIR}
build=${2:?usage: mkrootfs.sh busybox|debian BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)

case $flavour in
    busybox | debian) ;;
    *) echo "rootfs: unknown ROOTFS '$flavour' (want busybox or debian)" >&2; exit 1 ;;
esac

tree=$build/rootfs/$flavour
stamp=$build/rootfs/$flavour.stamp
inputs=$( (cat "$here/mkrootfs.sh" "$here/rootfs-$flavour.sh"
    if [[ $flavour == debian ]]; then
        cat "$here/debootstrap.sh"
        echo "DEBIAN_SUITE=${DEBIAN_SUITE:-trixie}"
    fi) | sha256sum | cut -c1-16)

if [[ -d $tree && -f $stamp && $(cat "$stamp") == "$inputs" ]]; then
    echo "rootfs: $tree is up to date"
    exit 0
fi

echo "rootfs: building the $flavour tree in $tree"
rm -f "$stamp"
mkdir -p "$build/rootfs"
start=$SECONDS
case $flavour in
    busybox) "$here/rootfs-busybox.sh" "$tree" ;;
    debian) "$here/rootfs-debian.sh" "$tree" "$build/cache" ;;
esac
echo "$inputs" > "$stamp"
echo "rootfs: $flavour tree done in $((SECONDS - start)) s"
