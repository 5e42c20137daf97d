#!/bin/bash
# Install the Debian packages that livesquash's build and tests need.
# Only missing packages are installed; `apt-get update` runs only when apt
# does not know one of them.  Noninteractive; prints what it installs.
set -euo pipefail

PACKAGES=(
    linux-source-6.1 linux-config-6.1
    dracut dracut-core dracut-live
    grub-pc-bin grub-efi-amd64-bin grub-common xorriso mtools
    qemu-system-x86 ovmf
    squashfs-tools squashfs-tools-ng
    busybox-static debootstrap
    flex bison bc libssl-dev libelf-dev cpio ccache build-essential dwarves
    xz-utils zstd kmod rsync python3 attr shellcheck
    linux-image-amd64 linux-headers-amd64
    erofs-utils gnuplot-nox
    isomd5sum isolinux syslinux-common live-build sparse libcap2-bin diffoscope-minimal
    systemd-container policycoreutils
    fdisk e2fsprogs afl++ sbsigntool python3-importlib-resources cryptsetup-bin
    zlib1g-dev liblzma-dev liblzo2-dev liblz4-dev libzstd-dev
    scdoc debhelper dh-dkms lintian
)

if [[ $(id -u) -ne 0 ]]; then
    echo "deps: must run as root (apt-get install)" >&2
    exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
    if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2> /dev/null) != installed ]]; then
        missing+=("$p")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "deps: all ${#PACKAGES[@]} packages already installed"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
echo "deps: installing ${missing[*]}"

# Does apt know every missing package?  If not, refresh the lists once.
for p in "${missing[@]}"; do
    if ! apt-cache show "$p" > /dev/null 2>&1; then
        echo "deps: apt does not know $p: running apt-get update"
        apt-get update -q
        break
    fi
done

if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    echo "deps: apt-get install failed for: ${missing[*]}" >&2
    exit 1
fi
echo "deps: installed ${missing[*]}"
