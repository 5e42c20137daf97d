#!/bin/bash
# Build the initramfs with dracut from our dracut-module/90livesquash, not
# host-only, without systemd, slim, zstd.  dracut has no option for an extra
# modules folder, so it runs with a private dracutbasedir: a tree of symlinks
# to /usr/lib/dracut plus our module.  The host's dracut.conf is ignored.
# With KVER empty the image carries no kernel modules (dracut --no-kernel):
# our kernel has everything built in.
# usage: mkinitramfs.sh OUT MODULE_DIR [KVER]
set -euo pipefail

out=$(realpath -m "${1:?usage: mkinitramfs.sh OUT MODULE_DIR [KVER]}")
module=${2:?usage: mkinitramfs.sh OUT MODULE_DIR [KVER]}
kver=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
SYSDRACUT=${SYSDRACUT:-/usr/lib/dracut}
MODULES="base udev-rules livesquash"
OMIT="systemd systemd-initrd dracut-systemd"

die() { echo "initramfs: $*" >&2; exit 1; }
command -v dracut > /dev/null || die "dracut missing: run 'make deps'"
[[ -f $module/module-setup.sh ]] || die "$module/module-setup.sh missing"
if [[ -n $kver && ! -d /lib/modules/$kver ]]; then
    die "KVER=$kver but /lib/modules/$kver does not exist (apt-get install linux-image-$kver?)"
fi

work=$(dirname "$out")
base=$work/dracut-base
params=$out.params
sde=${SOURCE_DATE_EPOCH:?SOURCE_DATE_EPOCH must be set (make sets it)}
want="$(dracut --version 2> /dev/null) kver=${kver:-none} sde=$sde $(cat "$here/mkinitramfs.sh" "$module"/* | sha256sum | cut -c1-16)"

if [[ -f $out && $(cat "$params" 2> /dev/null) == "$want" ]]; then
    echo "initramfs: $out is up to date"
    exit 0
fi

echo "initramfs: private dracut base $base (links to $SYSDRACUT + $(basename "$module"))"
rm -rf "$base"
mkdir -p "$base/modules.d" "$work/empty-confdir"
for f in "$SYSDRACUT"/*; do
    [[ $(basename "$f") == modules.d ]] && continue
    ln -s "$f" "$base/"
done
for m in "$SYSDRACUT"/modules.d/*; do
    ln -s "$m" "$base/modules.d/"
done
# our module as a copy, with its helper for rd.live.ram=background compiled
# into it (no debug info, no build path: reproducible)
mod=$base/modules.d/$(basename "$module")
cp -r "$module" "$mod"
command -v cc > /dev/null || die "cc missing: run 'make deps' (build-essential)"
cc -O2 -Wall -Wextra -Werror -g0 -o "$mod/livesquash-loopswap" "$mod/livesquash-loopswap.c" \
    || die "cannot compile $module/livesquash-loopswap.c"
# dracut --reproducible sets every file time newer than its dracut-functions.sh to
# that file's time: a copy dated SOURCE_DATE_EPOCH (through a symlink dracut would
# compare with the link's own time, the build's)
rm -f "$base/dracut-functions.sh"
cp "$SYSDRACUT/dracut-functions.sh" "$base/dracut-functions.sh"
touch -d "@$sde" "$base/dracut-functions.sh"

args=(--force --no-hostonly --no-hostonly-cmdline --no-early-microcode
    --conf /dev/null --confdir empty-confdir
    -m "$MODULES" -o "$OMIT" --zstd --reproducible)
if [[ -n $kver ]]; then
    args+=(--kver "$kver")
    what="kernel $kver modules"
else
    args+=(--no-kernel)
    what="no kernel modules"
fi

echo "initramfs: dracut -m \"$MODULES\" ($what) -> $out"
start=$SECONDS
rm -f "$params"
# --reproducible with SOURCE_DATE_EPOCH: sorted cpio, every time clamped to it
# (run in $work: dracut records its options in the image, and a relative
# --confdir keeps the build's folder out of it)
if ! (cd "$work" && SOURCE_DATE_EPOCH=$sde dracutbasedir=$base dracut "${args[@]}" "$out.tmp") > "$work/dracut.log" 2>&1; then
    rm -f "$out.tmp"
    tail -n 20 "$work/dracut.log" >&2
    die "dracut failed, full log in $work/dracut.log"
fi
# dracut writes images mode 0600
chmod 0644 "$out.tmp"
mv "$out.tmp" "$out"
echo "$want" > "$params"
echo "initramfs: $(du -h "$out" | cut -f1) in $((SECONDS - start)) s"
