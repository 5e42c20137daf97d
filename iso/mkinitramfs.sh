#!/bin/bash
# Build the initramfs with dracut from our dracut-module/90livesquash, not
# host-only, without systemd, slim, zstd.  DRACUT=106 (the default) is Debian
# 13's dracut-ng, run in its own trixie tree build/trixie/dracut
# (dracut-chroot.sh; never installed on the host); DRACUT=112 is forky's
# dracut-ng in build/forky/dracut; DRACUT=059 is the host's, Debian 12's.  dracut has no option for an extra modules folder, so it runs
# with a private dracutbasedir: a tree of symlinks to its /usr/lib/dracut plus
# our module.  dracut.conf is ignored.
# With KVER empty the image carries no kernel modules (dracut --no-kernel):
# our kernel has everything built in.  MODULE_DIR - and MODULES="base
# udev-rules dmsquash-live": dracut's own live module instead of ours (the
# tests' distribution-logic boots).
# usage: mkinitramfs.sh OUT MODULE_DIR|- [KVER]
set -euo pipefail

out=$(realpath -m "${1:?usage: mkinitramfs.sh OUT MODULE_DIR [KVER]}")
module=${2:?usage: mkinitramfs.sh OUT MODULE_DIR [KVER]}
kver=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
DRACUT=${DRACUT:-106}
MODULES=${MODULES:-base udev-rules livesquash}
OMIT="systemd systemd-initrd dracut-systemd"

die() { echo "initramfs: $*" >&2; exit 1; }
[[ $module == - || -f $module/module-setup.sh ]] || die "$module/module-setup.sh missing"
if [[ -n $kver && ! -d /lib/modules/$kver ]]; then
    die "KVER=$kver but /lib/modules/$kver does not exist (apt-get install linux-image-$kver?)"
fi

# root: the tree dracut runs in ("" = the host); inner: paths as dracut sees them
case $DRACUT in
    059)
        command -v dracut > /dev/null || die "dracut missing: run 'make deps'"
        root=
        version=$(dracut --version 2> /dev/null || :) # (059 exits 1 after printing it)
        [[ $version == *" 059"* ]] || die "DRACUT=059 but the host's dracut is '$version'"
        ;;
    106 | 112)
        # 106: trixie's; 112: forky's (the newest dracut-ng Debian has)
        suite=trixie
        [[ $DRACUT == 106 ]] || suite=forky
        root=${BUILD:-$(dirname "$here")/build}/$suite/dracut
        bash "$here/dracut-chroot.sh" "$root" "$(dirname "$root")/../cache" "$suite"
        version=$(chroot "$root" dracut --version 2> /dev/null || :)
        [[ $version == *" $DRACUT"* ]] || die "DRACUT=$DRACUT but $suite's dracut is '$version'"
        ;;
    *) die "unknown DRACUT '$DRACUT' (want 106, Debian 13's, 112, forky's, or 059, the host's)" ;;
esac
SYSDRACUT=/usr/lib/dracut

# dracut works in $root$inner (the host: next to OUT), and writes its image there
# (one folder per OUT in the trixie tree: two builds may run at once)
if [[ -n $root ]]; then
    inner=/var/tmp/livesquash-initramfs/$(echo "$out" | sha256sum | cut -c1-12)
else
    inner=$(dirname "$out")
fi
work=$root$inner
base=$work/dracut-base
params=$out.params
sde=${SOURCE_DATE_EPOCH:?SOURCE_DATE_EPOCH must be set (make sets it)}
want="$version${root:+ in $suite tree $(cat "$root.stamp" 2> /dev/null)} kver=${kver:-none} sde=$sde $MODULES $( (cat "$here/mkinitramfs.sh"; [[ $module == - ]] || cat "$module"/*) | sha256sum | cut -c1-16)"

if [[ -f $out && $(cat "$params" 2> /dev/null) == "$want" ]]; then
    echo "initramfs: $out is up to date"
    exit 0
fi

plus=
[[ $module == - ]] || plus=" + $(basename "$module")"
echo "initramfs: $version${root:+ (in $root)}, private dracut base $inner/dracut-base (links to $SYSDRACUT$plus)"
rm -rf "$base"
mkdir -p "$base/modules.d" "$work/empty-confdir" "$(dirname "$out")"
for f in "$root$SYSDRACUT"/*; do
    [[ $(basename "$f") == modules.d ]] && continue
    ln -s "$SYSDRACUT/$(basename "$f")" "$base/"
done
for m in "$root$SYSDRACUT"/modules.d/*; do
    ln -s "$SYSDRACUT/modules.d/$(basename "$m")" "$base/modules.d/"
done
# our module as a copy, with its helper for rd.live.ram=background compiled
# into it (no debug info, no build path: reproducible)
if [[ $module != - ]]; then
    mod=$base/modules.d/$(basename "$module")
    cp -r "$module" "$mod"
    command -v cc > /dev/null || die "cc missing: run 'make deps' (build-essential)"
    cc -O2 -Wall -Wextra -Werror -g0 -o "$mod/livesquash-loopswap" "$mod/livesquash-loopswap.c" \
        || die "cannot compile $module/livesquash-loopswap.c"
fi
# dracut --reproducible sets every file time newer than its dracut-functions.sh to
# that file's time: a copy dated SOURCE_DATE_EPOCH (through a symlink dracut would
# compare with the link's own time, the build's)
rm -f "$base/dracut-functions.sh"
cp "$root$SYSDRACUT/dracut-functions.sh" "$base/dracut-functions.sh"
touch -d "@$sde" "$base/dracut-functions.sh"

args=(--force --no-hostonly --no-hostonly-cmdline --no-early-microcode
    --conf /dev/null --confdir empty-confdir
    # Debian's binaries come stripped (and trixie's tree has no strip)
    -m "$MODULES" -o "$OMIT" --zstd --reproducible --nostrip)
if [[ -n $kver ]]; then
    args+=(--kver "$kver")
    what="kernel $kver modules"
else
    args+=(--no-kernel)
    what="no kernel modules"
fi

echo "initramfs: dracut -m \"$MODULES\" ($what) -> $out"
start=$SECONDS
rm -f "$params" "$work/dracut-out.img"
# --reproducible with SOURCE_DATE_EPOCH: sorted cpio, every time clamped to it
# (run in $inner: dracut records its options in the image, and a relative
# --confdir keeps the build's folder out of it)
run=(env SOURCE_DATE_EPOCH="$sde" dracutbasedir="$inner/dracut-base" dracut "${args[@]}" "$inner/dracut-out.img")
if [[ -n $root ]]; then
    # in the trixie tree, in a mount namespace of its own: /proc, and the
    # host's modules of KVER read-only; nothing stays mounted afterwards
    mkdir -p "$root/usr/lib/modules/$kver"
    # shellcheck disable=SC2016 # expanded by that sh
    run=(unshare --mount --propagation private -- sh -c '
        root=$1 kver=$2; shift 2
        mount -t proc proc "$root/proc" || exit
        if [ -n "$kver" ]; then mount --bind -o ro "/lib/modules/$kver" "$root/usr/lib/modules/$kver" || exit; fi
        exec chroot "$root" sh -c "cd \"\$0\" && exec \"\$@\"" "$@"' sh "$root" "$kver" "$inner" "${run[@]}")
else
    # shellcheck disable=SC2016 # expanded by that sh
    run=(sh -c 'cd "$0" && exec "$@"' "$inner" "${run[@]}")
fi
if ! "${run[@]}" > "$work/dracut.log" 2>&1; then
    tail -n 20 "$work/dracut.log" >&2
    die "dracut failed, full log in $work/dracut.log"
fi
mv "$work/dracut-out.img" "$out.tmp"
# dracut writes images mode 0600
chmod 0644 "$out.tmp"
mv "$out.tmp" "$out"
echo "$want" > "$params"
echo "initramfs: $(du -h "$out" | cut -f1) in $((SECONDS - start)) s"
