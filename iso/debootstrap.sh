#!/bin/bash
# A Debian tree made with debootstrap --variant=minbase, offline after the first
# time: the downloaded packages are kept as a debootstrap tarball in CACHE_DIR
# (NAME-SUITE.tar.gz, valid for one package list), so a rebuild reads no
# mirror. DIR is made anew. Used for the live root (rootfs-debian.sh) and for
# trixie's dracut (dracut-chroot.sh).
# usage: debootstrap.sh NAME SUITE INCLUDE DIR CACHE_DIR
#   INCLUDE: debootstrap --include, comma-separated packages beside minbase
#   MIRROR: the Debian mirror (default http://deb.debian.org/debian)
set -euo pipefail

usage="usage: debootstrap.sh NAME SUITE INCLUDE DIR CACHE_DIR"
(($# == 5)) || { echo "debootstrap: $usage" >&2; exit 2; }
name=$1 suite=$2 include=$3
# absolute: debootstrap wants its tarball so
dir=$(realpath -m "$4") cache=$(realpath -m "$5")
MIRROR=${MIRROR:-http://deb.debian.org/debian}
tarball=$cache/$name-$suite.tar.gz
# the tarball is valid for this package list only
listfile=$tarball.include

die() { echo "debootstrap: $*" >&2; exit 1; }
command -v debootstrap > /dev/null || die "debootstrap missing: run 'make deps'"
script=/usr/share/debootstrap/scripts/$suite
# Debian 12's debootstrap predates forky (testing): its rules are sid's
[[ -f $script || $suite != forky ]] || script=/usr/share/debootstrap/scripts/sid
[[ -f $script ]] || die "this debootstrap does not know the suite '$suite'"

mkdir -p "$cache"
if [[ ! -s $tarball || $(cat "$listfile" 2> /dev/null) != "$include" ]]; then
    echo "debootstrap: downloading $suite (minbase + $include) into $tarball"
    work=$(mktemp -d "$cache/debootstrap.XXXXXX")
    trap 'rm -rf "$work" "$tarball.tmp"' EXIT
    debootstrap --variant=minbase --include="$include" \
        --make-tarball="$tarball.tmp" "$suite" "$work/root" "$MIRROR" "$script" \
        > "$cache/$name-$suite-download.log" 2>&1 \
        || die "debootstrap --make-tarball of $suite from $MIRROR failed, see $cache/$name-$suite-download.log"
    mv "$tarball.tmp" "$tarball"
    echo "$include" > "$listfile"
    rm -rf "$work"
    trap - EXIT
else
    echo "debootstrap: using cached $tarball"
fi

rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
echo "debootstrap: $suite into $dir (offline, from the cached tarball)"
start=$SECONDS
if ! debootstrap --variant=minbase --include="$include" --unpack-tarball="$tarball" \
    "$suite" "$dir" "$MIRROR" "$script" > "$cache/$name-$suite-install.log" 2>&1; then
    die "debootstrap of $suite into $dir failed, see $cache/$name-$suite-install.log"
fi
echo "debootstrap: installed in $((SECONDS - start)) s"
