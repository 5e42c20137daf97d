#!/bin/sh
# livesquash-dkms: dkms's MAKE for livesquash's squashfs driver: checks that the
# kernel can take a squashfs module at all, saying in one line why not, then
# builds squashfs.ko in the current folder (dkms's build copy of the source).
# usage: dkms-make.sh KERNELVER KERNEL_BUILD_DIR
set -eu

kver=${1:?usage: dkms-make.sh KERNELVER KERNEL_BUILD_DIR}
ksrc=${2:?usage: dkms-make.sh KERNELVER KERNEL_BUILD_DIR}
cannot() {
	echo "livesquash-dkms: cannot build squashfs.ko for $kver: $*" >&2
	exit 1
}
if [ ! -f "$ksrc/.config" ] || [ ! -f "$ksrc/Makefile" ]; then
	cannot "no kernel headers in $ksrc (install linux-headers-$kver)"
fi
if grep -q '^CONFIG_SQUASHFS=y' "$ksrc/.config"; then
	cannot "this kernel has squashfs built in (CONFIG_SQUASHFS=y), which a module cannot take the place of"
fi
grep -q '^CONFIG_SQUASHFS=m' "$ksrc/.config" ||
	cannot "this kernel is configured without squashfs (CONFIG_SQUASHFS is not m)"
# BLOCK_SIZE in the environment changes what GNU ls prints to the kernel build
unset BLOCK_SIZE BLOCKSIZE
if ! make -C "$ksrc" M="$PWD" modules; then
	cannot "the driver does not compile against these headers (the compiler's messages are above)"
fi
