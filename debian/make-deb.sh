#!/bin/bash
# debian/make-deb.sh (make deb): the Debian packages livesquash-tools,
# dracut-livesquash and livesquash-dkms, built by dpkg-buildpackage -us -uc -b in a
# copy of the sources (build/deb/livesquash-VERSION: the checkout is never written
# to), then checked with lintian (errors and warnings fail it; overrides in
# debian/*.lintian-overrides say why). The .debs, .buildinfo and .changes land in
# build/deb/; the build's log is build/deb/build.log, lintian's build/deb/lintian.log.
#
# The version is the driver's, the one place it is written (fs-squashfs/internal.h,
# LIVESQUASH_VERSION, which the driver's banner prints): debian/changelog is written
# from it in the copy, dated SOURCE_DATE_EPOCH (default: the last commit's time).
# Environment: TOP, BUILD (make passes them).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(dirname "$here")}
BUILD=${BUILD:-$TOP/build}
out=$BUILD/deb
die() {
	echo "deb: $*" >&2
	exit 1
}
for t in dpkg-buildpackage dh dh_dkms scdoc lintian rsync; do
	command -v "$t" >/dev/null || die "$t missing: run 'make deps' (debhelper, dh-dkms, scdoc, lintian, rsync)"
done

version=$(sed -n 's/^#define LIVESQUASH_VERSION[[:space:]]*"\(.*\)"/\1/p' "$TOP/fs-squashfs/internal.h")
[[ $version =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || die "no usable LIVESQUASH_VERSION in fs-squashfs/internal.h ('$version')"
commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=
[[ -z $(git -C "$TOP" status --porcelain 2>/dev/null) ]] || dirty=", with uncommitted changes"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$TOP" log -1 --format=%ct 2>/dev/null || date +%s)}

src=$out/livesquash-$version
rm -rf "$out"
mkdir -p "$src"
echo "deb: livesquash $version (git $commit$dirty) in $src"
# what the packages are made of, and what their build and test run
rsync -a --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' --exclude '*.mod' --exclude '*.mod.c' \
	--exclude 'modules.order' --exclude 'Module.symvers' --exclude '__pycache__' --exclude '*.tmp' \
	"$TOP/install.mk" "$TOP/README.md" "$TOP/iso" "$TOP/dracut-module" "$TOP/fs-squashfs" "$TOP/debian" "$src/"
mkdir -p "$src/boot-tests/packages"
cp "$TOP/boot-tests/lib.sh" "$src/boot-tests/"
cp "$TOP/boot-tests/packages/man.sh" "$src/boot-tests/packages/"
rm -f "$src/debian/make-deb.sh"
{
	echo "livesquash ($version) unstable; urgency=medium"
	echo
	echo "  * Built from the livesquash sources, git $commit$dirty."
	echo
	echo " -- $(sed -n 's/^Maintainer: //p' "$src/debian/control")  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} >"$src/debian/changelog"

echo "deb: dpkg-buildpackage -us -uc -b (log: $out/build.log)"
# (TOP and BUILD, which make exports, name the checkout: not for the copy's build)
if ! (cd "$src" && env -u TOP -u BUILD dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1; then
	tail -n 20 "$out/build.log" >&2
	die "dpkg-buildpackage failed (see $out/build.log)"
fi
changes=$(find "$out" -maxdepth 1 -name "livesquash_${version}_*.changes" | head -n 1)
[[ -f $changes ]] || die "no .changes file in $out"
mapfile -t debs < <(find "$out" -maxdepth 1 -name '*.deb' | LC_ALL=C sort)
for p in livesquash-tools dracut-livesquash livesquash-dkms; do
	[[ -f $(find "$out" -maxdepth 1 -name "${p}_${version}_*.deb" | head -n 1) ]] || die "no $p package in $out"
done
((${#debs[@]} == 3)) || die "expected 3 packages in $out, found ${#debs[@]}: ${debs[*]##*/}"
for d in "${debs[@]}"; do
	echo "deb: ${d#"$BUILD"/} ($(du -k "$d" | cut -f1) KiB)"
done

echo "deb: lintian (log: $out/lintian.log)"
rc=0
lintian --fail-on error,warning --display-info --info "$changes" >"$out/lintian.log" 2>&1 || rc=$?
if ((rc != 0)) || grep -qE '^[EW]: ' "$out/lintian.log"; then
	grep -E '^[EW]: ' "$out/lintian.log" >&2 || tail -n 20 "$out/lintian.log" >&2
	die "lintian finds errors or warnings (see $out/lintian.log)"
fi
echo "deb: lintian: no errors, no warnings ($(grep -c '^[IPX]: ' "$out/lintian.log" || true) informational tags; overrides in debian/*.lintian-overrides)"
