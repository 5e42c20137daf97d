#!/bin/sh
# livesquash-lib.sh: functions shared by the livesquash hooks.  Sourced by
# dracut's init (POSIX sh), after /lib/dracut-lib.sh.
#
# State lives in /tmp/livesquash/ of the initramfs (one value per file, so
# labels with spaces or quotes need no escaping):
#   spec      what root=live: asked for (CDLABEL=X, LABEL=X, UUID=X, /dev/...)
#   dev       the device node that spec names (/dev/disk/by-label/X, ...)
#   dir img   rd.live.dir and rd.live.squashimg
#   timeout   rd.live.timeout in seconds (0: wait forever)
#   deadline  /proc/uptime second after which the medium counts as missing

LIVESQUASH_STATE=/tmp/livesquash
LIVESQUASH_LIVE=/run/initramfs/live
LIVESQUASH_BASE=/run/rootfsbase
LIVESQUASH_OVERLAY=/run/overlayfs

livesquash_get() {
    _ls_v=
    [ -r "$LIVESQUASH_STATE/$1" ] && read -r _ls_v < "$LIVESQUASH_STATE/$1"
    printf '%s' "$_ls_v"
}

livesquash_set() {
    mkdir -p "$LIVESQUASH_STATE"
    printf '%s\n' "$2" > "$LIVESQUASH_STATE/$1"
}

# whole seconds since the kernel started
livesquash_uptime() {
    read -r _ls_up _ < /proc/uptime
    echo "${_ls_up%%.*}"
}

# Escape a label the way udev names /dev/disk/by-label/ links.
livesquash_label_path() {
    printf '%s' "$1" | sed 's,\\,\\x5c,g;s,/,\\x2f,g;s, ,\\x20,g'
}

# spec (CDLABEL=X LABEL=X UUID=X /dev/...) -> device path; fails if unknown
livesquash_spec_to_dev() {
    case "$1" in
        CDLABEL=?* | LABEL=?*)
            echo "/dev/disk/by-label/$(livesquash_label_path "${1#*LABEL=}")"
            ;;
        UUID=?*)
            echo "/dev/disk/by-uuid/${1#UUID=}"
            ;;
        /dev/?*)
            echo "$1"
            ;;
        *)
            return 1
            ;;
    esac
}

# true when the medium is there and carries a filesystem
livesquash_medium_ready() {
    _ls_dev=$(livesquash_get dev)
    [ -b "$_ls_dev" ] || return 1
    case "$_ls_dev" in
        /dev/disk/by-*) return 0 ;; # udev made the link: blkid saw it
    esac
    [ -n "$(blkid -o value -s TYPE "$_ls_dev" 2> /dev/null)" ]
}

# Report one clear failure and go to dracut's emergency shell.  With
# rd.shell=0 dracut then runs rd.emergency= (default: halt).  If the user
# leaves the shell, the caller retries.
livesquash_fail() {
    livesquash_set failure "livesquash: $*"
    emergency_shell -n livesquash "livesquash: $*"
}

# initqueue job: give up waiting once rd.live.timeout has passed
livesquash_check_deadline() {
    livesquash_medium_ready && return 0
    _ls_timeout=$(livesquash_get timeout)
    [ "${_ls_timeout:-0}" -gt 0 ] || return 0
    [ "$(livesquash_uptime)" -ge "$(livesquash_get deadline)" ] || return 0
    livesquash_fail "live medium $(livesquash_get spec) not found after $_ls_timeout s"
    # back from the shell: wait once more
    livesquash_set deadline $(($(livesquash_uptime) + _ls_timeout))
}

# is something mounted exactly at $1?
livesquash_mounted() {
    while read -r _ _ls_mp _ || [ -n "$_ls_mp" ]; do
        [ "$_ls_mp" = "$1" ] && return 0
    done < /proc/mounts
    return 1
}

# run mount "$@", report "cannot mount WHAT: REASON" on failure
livesquash_mount() {
    _ls_what=$1
    shift
    if ! mount -n "$@" 2> "$LIVESQUASH_STATE/mount.err"; then
        # util-linux: "mount: /mnt/point: reason.\n   dmesg(1) may have ..."
        _ls_why=$(sed -n '1p' "$LIVESQUASH_STATE/mount.err")
        _ls_why=${_ls_why#mount: }
        case "$_ls_why" in
            /*:\ *) _ls_why=${_ls_why#*: } ;;
        esac
        _ls_why=${_ls_why%.}
        livesquash_fail "cannot mount $_ls_what: ${_ls_why:-mount failed}"
        return 1
    fi
    return 0
}

# medium -> /run/initramfs/live, image -> /run/rootfsbase,
# tmpfs -> /run/overlayfs, overlay -> $NEWROOT.  Each step is skipped when
# already done, so the mount hook may run any number of times.
livesquash_mount_root() {
    _ls_spec=$(livesquash_get spec)
    _ls_dev=$(readlink -f "$(livesquash_get dev)")
    _ls_rel="$(livesquash_get dir)/$(livesquash_get img)"
    _ls_rel=${_ls_rel#/}

    # (all built into our kernel; modules of a stock kernel)
    for _ls_mod in loop squashfs overlay; do
        modprobe -q "$_ls_mod" 2> /dev/null
    done

    if ! livesquash_mounted "$LIVESQUASH_LIVE"; then
        _ls_type=$(blkid -o value -s TYPE "$_ls_dev" 2> /dev/null)
        if [ -z "$_ls_type" ]; then
            livesquash_fail "cannot mount $_ls_spec ($_ls_dev): no filesystem found"
            return 1
        fi
        mkdir -p "$LIVESQUASH_LIVE"
        info "livesquash: mounting $_ls_dev ($_ls_type) on $LIVESQUASH_LIVE"
        livesquash_mount "$_ls_dev" -t "$_ls_type" -o ro "$_ls_dev" "$LIVESQUASH_LIVE" || return 1
    fi

    if ! livesquash_mounted "$LIVESQUASH_BASE"; then
        if ! [ -f "$LIVESQUASH_LIVE/$_ls_rel" ]; then
            livesquash_fail "root image $_ls_rel not found on $_ls_dev"
            return 1
        fi
        mkdir -p "$LIVESQUASH_BASE"
        info "livesquash: mounting $_ls_rel on $LIVESQUASH_BASE"
        livesquash_mount "$_ls_rel" -t squashfs -o ro,loop \
            "$LIVESQUASH_LIVE/$_ls_rel" "$LIVESQUASH_BASE" || return 1
    fi

    # the same test dracut applies to $NEWROOT later, with a clearer message
    for _ls_d in proc sys dev; do
        if ! [ -d "$LIVESQUASH_BASE/$_ls_d" ]; then
            livesquash_fail "cannot mount $_ls_rel: no /$_ls_d in it, not a root filesystem"
            return 1
        fi
    done

    if ! livesquash_mounted "$LIVESQUASH_OVERLAY"; then
        mkdir -p "$LIVESQUASH_OVERLAY"
        livesquash_mount "tmpfs on $LIVESQUASH_OVERLAY" -t tmpfs -o mode=0755 \
            tmpfs "$LIVESQUASH_OVERLAY" || return 1
    fi
    mkdir -p "$LIVESQUASH_OVERLAY/upper" "$LIVESQUASH_OVERLAY/work"

    if ! livesquash_mounted "$NEWROOT"; then
        info "livesquash: mounting overlay on $NEWROOT"
        livesquash_mount "overlay on $NEWROOT" -t overlay \
            -o "lowerdir=$LIVESQUASH_BASE,upperdir=$LIVESQUASH_OVERLAY/upper,workdir=$LIVESQUASH_OVERLAY/work" \
            overlay "$NEWROOT" || return 1
    fi
    return 0
}
