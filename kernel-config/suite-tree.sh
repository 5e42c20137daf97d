#!/usr/bin/env bash
# The newest Linux 7.x of a Debian suite (trixie-backports, forky) as a tree that
# modules for Debian's own kernel of that suite are built in: the newest
# linux-source-7.* the suite has (not a version written here), fetched with
# trixie.sh into DEST/pkgs (never installed), extracted into DEST/linux-source
# with fs/squashfs a link to fs-squashfs/, and DEST/kobj-mod prepared with the
# .config and Module.symvers of that kernel's linux-headers
# (debian-kernel.sh --headers-only; with --image, Debian's kernel image and
# modules too, in DEST/debkernel/root, for boots). A tree of the same version is
# kept as it is.
#
# usage: suite-tree.sh [--image] SUITE DEST TOP
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
only=--headers-only
if [[ ${1:-} == --image ]]; then
	only=
	shift
fi
(($# == 3)) || { echo "usage: suite-tree.sh [--image] SUITE DEST TOP" >&2; exit 2; }
suite=$1 dest=$(realpath -m "$2") top=$(realpath "$3")
fetch() { bash "$here/trixie.sh" --suite "$suite" "$@"; }

pkg=$(fetch --newest "$dest/pkgs" 'linux-source-7\.[0-9]+')
fetch "$dest/pkgs" "$pkg"
tar=$(find "$dest/pkgs/root/usr/src" -maxdepth 1 -name "$pkg.tar.xz" -print -quit)
[[ -n $tar ]] || { echo "suite-tree: $pkg of $suite holds no /usr/src/$pkg.tar.xz" >&2; exit 1; }
src=$dest/linux-source
if [[ $(cat "$src/.livesquash-tree" 2>/dev/null) != "$(stat -c '%s %Y' "$tar")" ]]; then
	echo "suite-tree: extracting $pkg ($suite) into $src"
	rm -rf "$src" "$src.tmp" && mkdir -p "$src.tmp"
	tar -xJf "$tar" -C "$src.tmp" --strip-components=1
	rm -rf "$src.tmp/fs/squashfs" && ln -s "$top/fs-squashfs" "$src.tmp/fs/squashfs"
	stat -c '%s %Y' "$tar" >"$src.tmp/.livesquash-tree"
	mv "$src.tmp" "$src"
	rm -f "$dest/kobj-mod/.prepared"
fi
# prepared already (with the kernel image, if asked for)?
if [[ ! -e $dest/kobj-mod/.prepared || ( -z $only && ! -e $dest/debkernel/.image ) ]]; then
	rm -f "$dest/kobj-mod/.prepared" "$dest/debkernel/.image"
	# shellcheck disable=SC2086 # $only: one word or none
	bash "$here/debian-kernel.sh" $only "$suite" "$dest/debkernel" "$src" "$dest/kobj-mod"
	[[ -n $only ]] || touch "$dest/debkernel/.image"
	touch "$dest/kobj-mod/.prepared"
fi
echo "suite-tree: $suite's $(cat "$dest/debkernel/kver") tree in $dest/kobj-mod"
