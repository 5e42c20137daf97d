#!/bin/bash
# Pack a root tree into ISO_TREE/LiveOS/squashfs.img (+ .sha256) with
# mksquashfs, unless the image is newer than every file of the tree and was
# made with the same compressor, block size and sort file.  Real owners are kept.
# usage: mkimage.sh ROOT_TREE ISO_TREE COMP BLOCK_SIZE [SORT_FILE]
# SORT_FILE (make iso: the profile iso/boot-order/ROOTFS.sort, where there is one) orders the files'
# data with mksquashfs -sort, and keeps those files out of fragment blocks
# (iso/boot-sort.sh); its lines for paths the tree lacks are dropped. The image then
# comes with squashfs.img.prefetch: how many bytes at its start hold those files,
# which the live initrd reads in one pass (dracut-module/90livesquash).
set -euo pipefail

tree=${1:?usage: mkimage.sh ROOT_TREE ISO_TREE COMP BLOCK_SIZE}
isotree=${2:?usage: mkimage.sh ROOT_TREE ISO_TREE COMP BLOCK_SIZE}
comp=${3:?usage: mkimage.sh ROOT_TREE ISO_TREE COMP BLOCK_SIZE}
bs=${4:?usage: mkimage.sh ROOT_TREE ISO_TREE COMP BLOCK_SIZE}
sortfile=${5:-}

die() { echo "image: $*" >&2; exit 1; }
[[ -d $tree ]] || die "root tree $tree missing: run 'make rootfs'"
command -v mksquashfs > /dev/null || die "mksquashfs missing: run 'make deps'"

img=$isotree/LiveOS/squashfs.img
params=$(dirname "$isotree")/squashfs.params
sde=${SOURCE_DATE_EPOCH:?SOURCE_DATE_EPOCH must be set (make sets it)}
want="mksquashfs -comp $comp -b $bs -mkfs-time $sde"
sortopt=()
if [[ -n $sortfile ]]; then
    [[ -s $sortfile ]] || die "sort file $sortfile missing or empty: run 'make boot-order'"
    want+=" -sort $(basename "$sortfile") $(sha256sum < "$sortfile" | cut -c1-16) no-fragments"
fi

if [[ -f $img && -f $img.sha256 && $(cat "$params" 2> /dev/null) == "$want" ]] \
    && [[ -z $(find "$tree" \( -newer "$img" -o -cnewer "$img" \) -print -quit) ]]; then
    echo "image: $img is up to date"
    exit 0
fi

mkdir -p "$isotree/LiveOS"
rm -f "$img" "$img.sha256" "$img.prefetch" "$params"
echo "image: $want: $tree -> $img"
start=$SECONDS
if [[ -n $sortfile ]]; then
    n=$(bash "$(dirname "${BASH_SOURCE[0]}")/boot-sort.sh" "$tree" "$sortfile" "$img")
    sortopt=(-sort "$img.sort" -action-file "$img.actions")
    echo "image: data in boot order: $n files of $sortfile first, none in a fragment"
fi
# -progress draws a bar on a terminal; -quiet keeps logs small otherwise
if [[ -t 1 ]]; then progress=-progress; else progress=-no-progress; fi
# reproducible: no time in the tree later than SOURCE_DATE_EPOCH, which is also
# the image's own time (files made by the build get it; older ones keep theirs)
find "$tree" -newermt "@$sde" -exec touch -h -d "@$sde" {} +
# (mksquashfs 4.5 would set every file's time to a SOURCE_DATE_EPOCH in the
# environment; the tree's own, clamped times are what the image must hold)
env -u SOURCE_DATE_EPOCH mksquashfs "$tree" "$img.tmp" -comp "$comp" -b "$bs" -mkfs-time "$sde" -noappend -quiet "$progress" \
    "${sortopt[@]}" || { rm -f "$img.tmp" "$img.sort" "$img.actions"; die "mksquashfs failed"; }
if [[ -n $sortfile ]]; then
    # the boot reads the image's start up to the last of those files in one pass
    bash "$(dirname "${BASH_SOURCE[0]}")/boot-sort.sh" --extent "$img.tmp" "$img.sort" > "$img.prefetch"
    echo "image: the boot reads its first $(($(cat "$img.prefetch") / 1024)) KiB at once ($img.prefetch)"
fi
rm -f "$img.sort" "$img.actions"
mv "$img.tmp" "$img"
(cd "$isotree/LiveOS" && sha256sum squashfs.img > squashfs.img.sha256)
echo "$want" > "$params"
echo "image: $(du -h "$img" | cut -f1) in $((SECONDS - start)) s ($(unsquashfs -s "$img" | sed -n 's/^Number of inodes /inodes: /p'))"
