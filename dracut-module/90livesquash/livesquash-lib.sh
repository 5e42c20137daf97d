#!/bin/sh
# livesquash-lib.sh: functions shared by the livesquash hooks.  Sourced by
# dracut's init (POSIX sh), after /lib/dracut-lib.sh.
#
# State lives in /tmp/livesquash/ of the initramfs (one value per file, so
# labels with spaces or quotes need no escaping):
#   spec      what root=live: asked for (CDLABEL=X, LABEL=X, UUID=X, PARTUUID=X, ...)
#   dev       the device node of the medium (/dev/disk/by-label/X, ..., or the
#             loop device of an iso-scan/filename= ISO once it is found)
#   dir img   rd.live.dir and rd.live.squashimg
#   timeout   rd.live.timeout in seconds (0: wait forever)
#   deadline  /proc/uptime second after which the medium counts as missing
#   isoscan   iso-scan/filename=, isoloop the loop device of that file
#   check ram ovlsize  rd.live.check (1), rd.live.ram (1 or background),
#             rd.live.overlay.size= (MiB)
#   ovl ovlreset ovlro  rd.live.overlay= and its .reset/.readonly (1)
#   imgpath   the image the root is mounted from (on the medium, or its RAM copy)
#   url net sha256 roothash  root=live:http(s)://URL, rd.live.net= (download or
#             stream), rd.live.sha256=, rd.live.roothash=; netif the interface
#             dracut's network brought up

LIVESQUASH_STATE=/tmp/livesquash
LIVESQUASH_LIVE=/run/initramfs/live
LIVESQUASH_ISOSCAN=/run/initramfs/isoscan
LIVESQUASH_RAM=/run/initramfs/ram
LIVESQUASH_PERSIST=/run/initramfs/persist
LIVESQUASH_BASE=/run/rootfsbase
# the tmpfs holding the overlay's upper/ and work/ (unless persistent); dracut's
# overlayfs module mounts $NEWROOT with upperdir=/run/overlayfs,
# workdir=/run/ovlwork (and /run/overlayfs-r read-only), links to them here
LIVESQUASH_OVERLAY=/run/initramfs/overlay
# MiB of MemAvailable that rd.live.ram leaves free besides the image's copy
LIVESQUASH_RAM_RESERVE=256
# rd.live.net=stream: the network image as a block device (nbdkit's curl
# plugin on a local socket), checked block by block by dm-verity (its hash
# tree in a file of /run, looped)
LIVESQUASH_NBD=/dev/nbd0
LIVESQUASH_VERITY=livesquash-net
LIVESQUASH_TREE=/run/initramfs/livesquash-net.verity

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

# the whole second of livesquash_uptime by which at least $1 seconds will have
# passed: one more than a sum with the truncated clock, which could come up to a
# second short of what was asked
livesquash_deadline() {
    echo $(($(livesquash_uptime) + $1 + 1))
}

# hundredths of a second since the kernel started
livesquash_uptime_cs() {
    read -r _ls_up _ < /proc/uptime
    _ls_cs=${_ls_up#*.}
    echo "${_ls_up%%.*}${_ls_cs%"${_ls_cs#??}"}" | sed 's/^0*\([0-9]\)/\1/'
}

# spec -> device path, through dracut's label_uuid_to_dev (CDLABEL= is
# dmsquash-live's name for LABEL=); fails for a form it does not know
livesquash_spec_to_dev() {
    case "$1" in
        CDLABEL=?*) label_uuid_to_dev "LABEL=${1#CDLABEL=}" ;;
        LABEL=?* | UUID=?* | PARTUUID=?* | PARTLABEL=?* | /dev/?*) label_uuid_to_dev "$1" ;;
        *) return 1 ;;
    esac
}

# MiB, rounded up, of a file
livesquash_mib() {
    echo $((($(livesquash_size "$1") + 1048575) / 1048576))
}

# size in bytes of a file, 0 when missing
livesquash_size() {
    stat -L -c %s "$1" 2> /dev/null || echo 0
}

# the filesystem type of device $1 as udev's blkid found it (its database, as
# dracut's det_fs reads it): no new probe, which on a CD reads its first MiBs
# again, seeking; blkid itself where udev has none (a loop device just made)
livesquash_fstype() {
    _ls_ft=$(udevadm info --query=property --name="$1" 2> /dev/null | sed -n 's/^ID_FS_TYPE=//p')
    [ -n "$_ls_ft" ] || _ls_ft=$(blkid -o value -s TYPE "$1" 2> /dev/null)
    echo "$_ls_ft"
}

# true when the medium is there and carries a filesystem
livesquash_medium_ready() {
    if [ -n "$(livesquash_get isoscan)" ] && [ -z "$(livesquash_get isoloop)" ]; then
        livesquash_isoscan || return 1
    fi
    _ls_dev=$(livesquash_get dev)
    [ -b "$_ls_dev" ] || return 1
    case "$_ls_dev" in
        /dev/disk/by-*) return 0 ;; # udev made the link: blkid saw it
    esac
    [ -n "$(livesquash_fstype "$_ls_dev")" ]
}

# iso-scan/filename=: look for the file on every filesystem not tried yet;
# when found, keep that filesystem mounted read-only, loop the file read-only
# and make the loop device the medium
livesquash_isoscan() {
    _ls_file=$(livesquash_get isoscan)
    mkdir -p "$LIVESQUASH_ISOSCAN" "$LIVESQUASH_STATE/isoscan-tried"
    for _ls_d in $(blkid -c /dev/null -o device 2> /dev/null); do
        case "$_ls_d" in /dev/loop*) continue ;; esac
        _ls_key=$(echo "$_ls_d" | tr / _)
        [ -e "$LIVESQUASH_STATE/isoscan-tried/$_ls_key" ] && continue
        : > "$LIVESQUASH_STATE/isoscan-tried/$_ls_key"
        _ls_t=$(blkid -o value -s TYPE "$_ls_d" 2> /dev/null)
        case "$_ls_t" in '' | swap | LVM2_member | crypto_LUKS | linux_raid_member | squashfs) continue ;; esac
        mount -n -t "$_ls_t" -o ro "$_ls_d" "$LIVESQUASH_ISOSCAN" 2> /dev/null || continue
        if [ -f "$LIVESQUASH_ISOSCAN/${_ls_file#/}" ] \
            && _ls_loop=$(losetup -r -f --show "$LIVESQUASH_ISOSCAN/${_ls_file#/}"); then
            info "livesquash: found $_ls_file on $_ls_d ($_ls_t), looped on $_ls_loop"
            ln -sf "$_ls_d" /run/initramfs/isoscandev
            livesquash_set isoloop "$_ls_loop"
            livesquash_set dev "$_ls_loop"
            return 0
        fi
        umount -n "$LIVESQUASH_ISOSCAN"
    done
    return 1
}

# Report one clear failure and go to dracut's emergency shell.  With
# rd.shell=0 dracut then runs rd.emergency= (default: halt).  If the user
# leaves the shell, the caller retries (or, for a failed check, goes on).
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
    if [ -n "$(livesquash_get isoscan)" ]; then
        livesquash_fail "ISO file $(livesquash_get isoscan) (iso-scan/filename) not found on any disk after $_ls_timeout s"
        rm -rf "$LIVESQUASH_STATE/isoscan-tried"
    else
        livesquash_fail "live medium $(livesquash_get spec) not found after $_ls_timeout s"
    fi
    # back from the shell: wait once more
    livesquash_set deadline "$(livesquash_deadline "$_ls_timeout")"
}

# initqueue finished job for rd.live.overlay=: its device is there, or the
# medium's wait (at most 15 s of it) is over; the mount hook says which
livesquash_persist_ready() {
    [ -z "$(livesquash_get ovl)" ] && return 0
    [ -b "$(livesquash_get ovldev)" ] && return 0
    [ "$(livesquash_uptime)" -ge "$(livesquash_get ovldeadline)" ]
}

# run mount "$@", report "cannot mount WHAT: REASON" on failure
livesquash_mount() {
    _ls_what=$1
    shift
    if ! livesquash_try_mount "$@"; then
        livesquash_fail "cannot mount $_ls_what: $LIVESQUASH_WHY"
        return 1
    fi
    return 0
}

# mount "$@"; on failure LIVESQUASH_WHY is mount(8)'s reason in one line
livesquash_try_mount() {
    mkdir -p "$LIVESQUASH_STATE"
    mount -n "$@" 2> "$LIVESQUASH_STATE/mount.err" && return 0
    # util-linux: "mount: /mnt/point: reason.\n   dmesg(1) may have ..."
    LIVESQUASH_WHY=$(sed -n '1p' "$LIVESQUASH_STATE/mount.err")
    LIVESQUASH_WHY=${LIVESQUASH_WHY#mount: }
    case "$LIVESQUASH_WHY" in
        /*:\ *) LIVESQUASH_WHY=${LIVESQUASH_WHY#*: } ;;
    esac
    LIVESQUASH_WHY=${LIVESQUASH_WHY%.}
    LIVESQUASH_WHY=${LIVESQUASH_WHY:-mount failed}
    return 1
}

# medium -> /run/initramfs/live, [check], [copy to RAM], image ->
# /run/rootfsbase, overlay (tmpfs or persistent) -> $NEWROOT.  Each step is
# skipped when already done, so the mount hook may run any number of times.
livesquash_mount_root() {
    # (all built into our kernel; modules of a stock kernel)
    modprobe -q loop 2> /dev/null
    load_fstype squashfs 2> /dev/null
    load_fstype overlay 2> /dev/null
    if [ -n "$(livesquash_get url)" ]; then
        livesquash_net_image || return 1
    else
        livesquash_mount_medium || return 1
        livesquash_check_image || return 1
        livesquash_to_ram
    fi
    livesquash_mount_image || return 1
    livesquash_release_medium
    livesquash_ram_background
    livesquash_net_background
    livesquash_prepare_overlay
}

livesquash_rel() {
    _ls_rel="$(livesquash_get dir)/$(livesquash_get img)"
    echo "${_ls_rel#/}"
}

livesquash_mount_medium() {
    ismounted "$LIVESQUASH_LIVE" && return 0
    ismounted "$LIVESQUASH_BASE" && return 0 # the medium is already released
    _ls_spec=$(livesquash_get spec)
    _ls_dev=$(readlink -f "$(livesquash_get dev)")
    _ls_type=$(livesquash_fstype "$_ls_dev")
    if [ -z "$_ls_type" ]; then
        livesquash_fail "cannot mount $_ls_spec ($_ls_dev): no filesystem found"
        return 1
    fi
    mkdir -p "$LIVESQUASH_LIVE"
    info "livesquash: mounting $_ls_dev ($_ls_type) on $LIVESQUASH_LIVE"
    # a filesystem on a whole disk claims the disk, and then no partition of
    # it can be mounted (EBUSY): with persistence (a partition on the same
    # stick) the medium is mounted through a read-only loop device instead
    _ls_opt=ro
    case "$_ls_dev" in
        /dev/sr* | /dev/loop*) ;;
        *) [ -n "$(livesquash_get ovl)" ] && _ls_opt=ro,loop ;;
    esac
    livesquash_mount "$_ls_dev" -t "$_ls_type" -o "$_ls_opt" "$_ls_dev" "$LIVESQUASH_LIVE" || return 1
    _ls_rel=$(livesquash_rel)
    if ! [ -f "$LIVESQUASH_LIVE/$_ls_rel" ]; then
        livesquash_fail "root image $_ls_rel not found on $_ls_dev"
        umount -n "$LIVESQUASH_LIVE"
        return 1
    fi
    livesquash_set imgpath "$LIVESQUASH_LIVE/$_ls_rel"
    # where dmsquash-live leaves it, for the tools that look there
    ln -sf "$_ls_dev" /run/initramfs/livedev
    return 0
}

# rd.live.check: the image against its .sha256, then the medium against the
# MD5 implanted in the ISO (checkisomd5), each within rd.live.check.timeout
# seconds.  A failure is one message and the emergency shell; leaving the
# shell boots anyway.
livesquash_check_image() {
    [ "$(livesquash_get check)" = 1 ] || return 0
    [ -n "$(livesquash_get checked)" ] && return 0
    livesquash_set checked started
    _ls_rel=$(livesquash_rel)
    _ls_img=$LIVESQUASH_LIVE/$_ls_rel
    _ls_t=$(livesquash_get checktimeout)
    if ! [ -f "$_ls_img.sha256" ]; then
        warn "livesquash: rd.live.check: no $_ls_rel.sha256 on the medium, the image is not checked"
    else
        read -r _ls_want _ < "$_ls_img.sha256"
        info "livesquash: checking $_ls_rel ($(livesquash_mib "$_ls_img") MiB) against $_ls_rel.sha256"
        # dd shows the progress on the console; timeout stops the whole pipe
        # shellcheck disable=SC2016 # $1 and $2 are sh -c's
        timeout "$_ls_t" sh -c 'dd if="$1" bs=1M status=progress 2> /dev/console | sha256sum > "$2"' \
            _ "$_ls_img" "$LIVESQUASH_STATE/sha256"
        _ls_rc=$?
        read -r _ls_got _ < "$LIVESQUASH_STATE/sha256"
        if [ "$_ls_rc" -eq 124 ]; then
            livesquash_fail "check of $_ls_rel did not finish within $_ls_t s (rd.live.check.timeout)"
            return 0
        elif [ "$_ls_got" != "$_ls_want" ]; then
            livesquash_fail "root image $_ls_rel is corrupt: its sha256 is ${_ls_got:-unreadable}, $_ls_rel.sha256 says $_ls_want"
            return 0
        fi
        info "livesquash: $_ls_rel: sha256 OK"
    fi
    _ls_dev=$(readlink -f "$(livesquash_get dev)")
    if command -v checkisomd5 > /dev/null && [ "$(livesquash_fstype "$_ls_dev")" = iso9660 ]; then
        info "livesquash: checking the medium $_ls_dev against its implanted MD5 (checkisomd5)"
        timeout "$_ls_t" checkisomd5 --verbose "$_ls_dev" > /dev/console 2>&1
        case $? in
            0) info "livesquash: medium $_ls_dev: implanted MD5 OK" ;;
            124) livesquash_fail "check of the medium $_ls_dev did not finish within $_ls_t s (rd.live.check.timeout)" ;;
            2) info "livesquash: medium $_ls_dev has no implanted MD5" ;;
            *) livesquash_fail "medium $_ls_dev is corrupt: checkisomd5 finds its MD5 wrong" ;;
        esac
    fi
    livesquash_set checked ok
    return 0
}

# livesquash_ram_tmpfs [MIB [CONSEQUENCE [OPTION]]]: for rd.live.ram, a tmpfs
# of the image's size (MIB, default the size of the image on the medium) on
# /run/initramfs/ram when MemAvailable leaves LIVESQUASH_RAM_RESERVE MiB
# besides; else one warning (naming OPTION, default rd.live.ram, and ending in
# CONSEQUENCE, default: booting from the medium) and a return 1
livesquash_ram_tmpfs() {
    _ls_rel=$(livesquash_rel)
    _ls_need=${1:-$(livesquash_mib "$LIVESQUASH_LIVE/$_ls_rel")}
    _ls_avail=0
    while read -r _ls_k _ls_n _; do
        [ "$_ls_k" = MemAvailable: ] && _ls_avail=$((_ls_n / 1024))
    done < /proc/meminfo
    if [ "$_ls_avail" -lt $((_ls_need + LIVESQUASH_RAM_RESERVE)) ]; then
        warn "livesquash: ${3:-rd.live.ram}: not copying $_ls_rel ($_ls_need MiB) to RAM: MemAvailable is $_ls_avail MiB, it needs $_ls_need + $LIVESQUASH_RAM_RESERVE MiB; ${2:-booting from the medium}"
        return 1
    fi
    mkdir -p "$LIVESQUASH_RAM"
    if ! livesquash_try_mount -t tmpfs -o "size=$((_ls_need + 1))m,mode=0755" tmpfs "$LIVESQUASH_RAM"; then
        warn "livesquash: rd.live.ram: cannot mount a tmpfs for the copy: $LIVESQUASH_WHY; booting from the medium"
        return 1
    fi
}

# rd.live.ram=1: copy the image to RAM before it is mounted
livesquash_to_ram() {
    [ "$(livesquash_get ram)" = 1 ] || return 0
    ismounted "$LIVESQUASH_BASE" && return 0
    ismounted "$LIVESQUASH_RAM" && return 0
    livesquash_ram_tmpfs || return 0
    _ls_img=$LIVESQUASH_LIVE/$_ls_rel
    info "livesquash: copying $_ls_rel ($_ls_need MiB) to RAM"
    _ls_t0=$(livesquash_uptime_cs)
    if ! dd if="$_ls_img" of="$LIVESQUASH_RAM/${_ls_rel##*/}" bs=1M status=progress 2> /dev/console; then
        warn "livesquash: rd.live.ram: copying $_ls_rel to RAM failed; booting from the medium"
        umount -n "$LIVESQUASH_RAM"
        return 0
    fi
    _ls_t=$(($(livesquash_uptime_cs) - _ls_t0))
    livesquash_set imgpath "$LIVESQUASH_RAM/${_ls_rel##*/}"
    info "livesquash: $_ls_rel is in RAM ($_ls_need MiB, copied in $((_ls_t / 100)).$((_ls_t / 10 % 10)) s; MemAvailable was $_ls_avail MiB)"
}

# rd.live.ram=background: the root is mounted from the medium; a background
# process (livesquash-loopswap) copies the image to RAM, switches the loop
# device under /run/rootfsbase to the copy and then unmounts the medium
livesquash_ram_background() {
    [ "$(livesquash_get ram)" = background ] || return 0
    [ -n "$(livesquash_get bgstarted)" ] && return 0
    livesquash_set bgstarted 1
    _ls_swap=/usr/lib/livesquash/loopswap
    if ! [ -x "$_ls_swap" ]; then
        warn "livesquash: rd.live.ram=background: this initramfs has no $_ls_swap; booting from the medium"
        return 0
    fi
    _ls_loop=
    while read -r _ls_d _ls_m _; do
        [ "$_ls_m" = "$LIVESQUASH_BASE" ] && _ls_loop=$_ls_d
    done < /proc/mounts
    case "$_ls_loop" in /dev/loop*) ;; *) return 0 ;; esac
    livesquash_ram_tmpfs || return 0
    set -- "$LIVESQUASH_LIVE"
    [ -n "$(livesquash_get isoloop)" ] && set -- "$@" "$(livesquash_get isoloop)" "$LIVESQUASH_ISOSCAN"
    _ls_dev=$(readlink -f "$(livesquash_get dev)")
    case "$_ls_dev" in /dev/sr*) set -- "$@" "$_ls_dev" ;; esac
    info "livesquash: copying $_ls_rel ($_ls_need MiB) to RAM in the background"
    setsid "$_ls_swap" "$_ls_loop" "$LIVESQUASH_LIVE/$_ls_rel" "$LIVESQUASH_RAM/${_ls_rel##*/}" "$@" \
        < /dev/null > /dev/null 2>&1 &
}

# An image packed in boot order (make iso with a profile, iso/remaster --sort) has
# IMAGE.prefetch beside it: how many bytes at its start hold the files a boot reads.
# On a CD or DVD they are read here in one sequential pass, into the page cache,
# before the boot asks for them file by file: one seek instead of one or more per
# file. Elsewhere (a USB stick, a disk) the boot's reads cost no seek, and a pass
# first would only make the boot wait for it. Not for a copy in RAM;
# rd.live.prefetch (ours): 0 never, 1 on any medium.
livesquash_prefetch() {
    _ls_pf=$1.prefetch
    [ -r "$_ls_pf" ] || return 0
    case "$(livesquash_get prefetch)" in
        never) return 0 ;;
        always) ;;
        *) case "$(readlink -f "$(livesquash_get dev)")" in /dev/sr*) ;; *) return 0 ;; esac ;;
    esac
    read -r _ls_n < "$_ls_pf" || _ls_n=
    if ! isdigit "$_ls_n"; then
        warn "livesquash: $_ls_pf holds no byte count ('$_ls_n'): not read ahead"
        return 0
    fi
    [ "$_ls_n" -gt 0 ] || return 0
    _ls_t0=$(livesquash_uptime_cs)
    if ! dd if="$1" of=/dev/null bs=1M count=$(((_ls_n + 1048575) / 1048576)) 2> /dev/null; then
        warn "livesquash: cannot read the start of $1"
        return 0
    fi
    _ls_t=$(($(livesquash_uptime_cs) - _ls_t0))
    info "livesquash: read the first $((_ls_n / 1024)) KiB of $(livesquash_rel), its files in boot order, in $((_ls_t / 100)).$((_ls_t / 10 % 10)) s"
}

livesquash_mount_image() {
    ismounted "$LIVESQUASH_BASE" && return 0
    _ls_path=$(livesquash_get imgpath)
    mkdir -p "$LIVESQUASH_BASE"
    livesquash_prefetch "$_ls_path"
    info "livesquash: mounting $_ls_path on $LIVESQUASH_BASE"
    livesquash_mount "$(livesquash_rel)" -t squashfs -o ro,loop "$_ls_path" "$LIVESQUASH_BASE" || return 1
    # (dracut 059 applies the same test to $NEWROOT later, 106 no more): a
    # clear message instead of a failed switch_root
    for _ls_d in proc sys dev; do
        if ! [ -d "$LIVESQUASH_BASE/$_ls_d" ]; then
            livesquash_fail "cannot mount $(livesquash_rel): no /$_ls_d in it, not a root filesystem"
            umount -n "$LIVESQUASH_BASE"
            return 1
        fi
    done
    return 0
}

# after a copy to RAM: unmount the medium (and the disk an ISO file was on)
# so that nothing holds it any more
livesquash_release_medium() {
    case "$(livesquash_get imgpath)" in "$LIVESQUASH_RAM"/*) ;; *) return 0 ;; esac
    ismounted "$LIVESQUASH_LIVE" || return 0
    _ls_dev=$(readlink -f "$(livesquash_get dev)")
    umount -n "$LIVESQUASH_LIVE" || return 0
    _ls_loop=$(livesquash_get isoloop)
    if [ -n "$_ls_loop" ]; then
        losetup -d "$_ls_loop"
        umount -n "$LIVESQUASH_ISOSCAN"
    fi
    # a CD's tray: unlocked, so that its button ejects it
    case "$_ls_dev" in
        /dev/sr*) [ -x /usr/lib/livesquash/loopswap ] && /usr/lib/livesquash/loopswap --release "$_ls_dev" ;;
    esac
    info "livesquash: the root image runs from RAM; the medium $_ls_dev is released"
}

# rd.live.overlay=: mount the persistence device on /run/initramfs/persist
# and set LIVESQUASH_PDIR to the folder holding upper/ and work/ (on it, or
# in the filesystem image file the path names, loop-mounted on
# /run/initramfs/persist-img); LIVESQUASH_PRO=1 when it is to be used
# read-only (rd.live.overlay.readonly, or the device is full).  Any problem is
# one warning and a return 1: the caller boots without persistence.
livesquash_persist() {
    _ls_ovl=$(livesquash_get ovl)
    _ls_pdev=$(livesquash_get ovldev)
    _ls_path=$(livesquash_get ovlpath)
    LIVESQUASH_PRO=$(livesquash_get ovlro)
    _ls_nop="booting without persistence (changes last until power-off)"
    if ! [ -b "$_ls_pdev" ]; then
        warn "livesquash: persistence device $_ls_ovl not found; $_ls_nop"
        return 1
    fi
    _ls_pdev=$(readlink -f "$_ls_pdev")
    _ls_opt=rw
    [ "$LIVESQUASH_PRO" = 1 ] && _ls_opt=ro
    _ls_type=$(blkid -o value -s TYPE "$_ls_pdev" 2> /dev/null)
    mkdir -p "$LIVESQUASH_PERSIST"
    if ! ismounted "$LIVESQUASH_PERSIST"; then
        if [ -z "$_ls_type" ]; then
            warn "livesquash: persistence device $_ls_ovl ($_ls_pdev) has no filesystem; $_ls_nop"
            return 1
        fi
        if ! livesquash_try_mount -t "$_ls_type" -o "$_ls_opt" "$_ls_pdev" "$LIVESQUASH_PERSIST"; then
            warn "livesquash: cannot mount persistence device $_ls_ovl ($_ls_pdev): $LIVESQUASH_WHY; $_ls_nop"
            return 1
        fi
    fi
    LIVESQUASH_PDIR=$LIVESQUASH_PERSIST/${_ls_path#/}
    if [ -f "$LIVESQUASH_PDIR" ]; then
        livesquash_persist_image "$LIVESQUASH_PDIR" "$_ls_opt" || return 1
        _ls_type=$(blkid -o value -s TYPE "$LIVESQUASH_PDIR" 2> /dev/null)
        LIVESQUASH_PDIR=$LIVESQUASH_PERSIST-img
    fi
    case "$_ls_type" in
        vfat | exfat | ntfs | ntfs3 | iso9660 | udf)
            warn "livesquash: persistence device $_ls_ovl is $_ls_type, which cannot hold an overlay; give rd.live.overlay= the path of an ext4 image file on it (DEV:/persist.img, made with mkfs.ext4); $_ls_nop"
            umount -n "$LIVESQUASH_PERSIST"
            return 1
            ;;
    esac
    livesquash_persist_dirs "$_ls_ovl" || return 1
    info "livesquash: persistence on $_ls_ovl ($_ls_pdev $_ls_type, $LIVESQUASH_PDIR)$([ "$LIVESQUASH_PRO" = 1 ] && echo ', read-only')"
}

# the ext4 (or other) image file $1 on the persistence device, mounted $2
livesquash_persist_image() {
    ismounted "$LIVESQUASH_PERSIST-img" && return 0
    mkdir -p "$LIVESQUASH_PERSIST-img"
    if ! livesquash_try_mount -o "loop,$2" "$1" "$LIVESQUASH_PERSIST-img"; then
        warn "livesquash: cannot mount persistence image $(livesquash_get ovl):$(livesquash_get ovlpath): $LIVESQUASH_WHY; $_ls_nop"
        umount -n "$LIVESQUASH_PERSIST"
        return 1
    fi
}

# reset, full, create: upper/ and work/ in LIVESQUASH_PDIR
livesquash_persist_dirs() {
    _ls_name=$1
    if [ "$LIVESQUASH_PRO" != 1 ] && [ "$(livesquash_get ovlreset)" = 1 ] \
        && [ -z "$(livesquash_get ovlwasreset)" ]; then
        info "livesquash: rd.live.overlay.reset: removing the changes kept on $_ls_name"
        rm -rf "$LIVESQUASH_PDIR/upper" "$LIVESQUASH_PDIR/work"
        livesquash_set ovlwasreset 1
    fi
    # less than 4 MiB free: what is kept stays visible, new changes go to RAM
    [ "$LIVESQUASH_PRO" = 1 ] || mkdir -p "$LIVESQUASH_PDIR" 2> /dev/null
    _ls_free=0
    _ls_fs=$LIVESQUASH_PDIR
    [ -d "$_ls_fs" ] || _ls_fs=$LIVESQUASH_PERSIST
    # shellcheck disable=SC2046 # two numbers
    set -- $(stat -f -c '%a %S' "$_ls_fs" 2> /dev/null)
    [ $# -eq 2 ] && _ls_free=$(($1 * $2 / 1024))
    if [ "$LIVESQUASH_PRO" != 1 ] && [ "$_ls_free" -lt 4096 ]; then
        warn "livesquash: persistence device $_ls_name is full ($_ls_free KiB free): its changes are used read-only, new ones last until power-off"
        LIVESQUASH_PRO=1
    fi
    [ "$LIVESQUASH_PRO" = 1 ] && return 0
    if ! mkdir -p "$LIVESQUASH_PDIR/upper" "$LIVESQUASH_PDIR/work" 2> /dev/null; then
        warn "livesquash: cannot make upper/ and work/ in $LIVESQUASH_PDIR on persistence device $_ls_name; $_ls_nop"
        return 1
    fi
}

# the tmpfs for the overlay's upper (rd.live.overlay.size= MiB, else tmpfs's
# default: half the RAM), holding upper/ and work/
livesquash_mount_tmpfs() {
    if ! ismounted "$LIVESQUASH_OVERLAY"; then
        _ls_opt=mode=0755
        _ls_size=$(livesquash_get ovlsize)
        [ -n "$_ls_size" ] && _ls_opt="$_ls_opt,size=${_ls_size}m"
        mkdir -p "$LIVESQUASH_OVERLAY"
        livesquash_mount "tmpfs on $LIVESQUASH_OVERLAY" -t tmpfs -o "$_ls_opt" tmpfs "$LIVESQUASH_OVERLAY" || return 1
    fi
    mkdir -p "$LIVESQUASH_OVERLAY/upper" "$LIVESQUASH_OVERLAY/work"
}

# livesquash_link LINK TARGET: LINK (absent, a link, or the empty folder that
# dracut 106's pre-mount hook made) becomes a link to TARGET
livesquash_link() {
    [ -d "$1" ] && ! [ -L "$1" ] && rmdir "$1" 2> /dev/null
    ln -sfn "$2" "$1"
}

# The overlay on $NEWROOT is mounted by dracut's own overlayfs module (mount
# hook 01, after this one: as dmsquash-live has it, source LiveOS_rootfs,
# lowerdir=[/run/overlayfs-r:]/run/rootfsbase, upperdir=/run/overlayfs,
# workdir=/run/ovlwork). Here: its upper and work on the persistence device,
# or in the tmpfs with the persistent upper as /run/overlayfs-r (read-only),
# or in the tmpfs alone (also when the persistence device cannot be used);
# the links, and rd.live.overlay.overlayfs (and .readonly) in /etc/cmdline.d.
livesquash_prepare_overlay() {
    ismounted "$NEWROOT" && return 0
    _ls_upper='' _ls_ro=''
    if [ -n "$(livesquash_get ovl)" ] && livesquash_persist; then
        if [ "$LIVESQUASH_PRO" != 1 ]; then
            _ls_upper=$LIVESQUASH_PDIR
        elif [ -d "$LIVESQUASH_PDIR/upper" ]; then
            _ls_ro=$LIVESQUASH_PDIR/upper
        fi
    fi
    if [ -z "$_ls_upper" ]; then
        livesquash_mount_tmpfs || return 1
        _ls_upper=$LIVESQUASH_OVERLAY
    fi
    livesquash_link /run/overlayfs "$_ls_upper/upper"
    livesquash_link /run/ovlwork "$_ls_upper/work"
    rm -f /run/overlayfs-r
    mkdir -p /etc/cmdline.d
    echo rd.live.overlay.overlayfs=1 > /etc/cmdline.d/90-livesquash-overlay.conf
    if [ -n "$_ls_ro" ]; then
        ln -s "$_ls_ro" /run/overlayfs-r
        echo rd.live.overlay.readonly=1 >> /etc/cmdline.d/90-livesquash-overlay.conf
    fi
    info "livesquash: overlay for $NEWROOT (dracut's overlayfs module): lower ${_ls_ro:+$_ls_ro:}$LIVESQUASH_BASE, upper $_ls_upper/upper"
}

# mount hook 99: dracut's overlayfs module mounts silently; if it did not,
# the same overlay by hand, else the tmpfs alone, each failure named
livesquash_mount_overlay() {
    ismounted "$NEWROOT" && return 0
    ismounted "$LIVESQUASH_BASE" || return 0
    [ -L /run/overlayfs ] && [ -L /run/ovlwork ] || return 0
    _ls_lower=$LIVESQUASH_BASE
    [ -L /run/overlayfs-r ] && _ls_lower=/run/overlayfs-r:$_ls_lower
    _ls_opts="lowerdir=$_ls_lower,upperdir=/run/overlayfs,workdir=/run/ovlwork"
    if livesquash_try_mount -t overlay -o "$_ls_opts" LiveOS_rootfs "$NEWROOT"; then
        warn "livesquash: dracut's overlayfs module left $NEWROOT unmounted; mounted the overlay ($_ls_opts)"
        return 0
    fi
    case "$(readlink -f /run/overlayfs)" in
        "$LIVESQUASH_OVERLAY"/*)
            livesquash_fail "cannot mount the overlay on $NEWROOT ($_ls_opts): $LIVESQUASH_WHY"
            return 1
            ;;
    esac
    warn "livesquash: cannot mount the overlay on persistence device $(livesquash_get ovl): $LIVESQUASH_WHY; booting without persistence (changes last until power-off)"
    livesquash_mount_tmpfs || return 1
    livesquash_link /run/overlayfs "$LIVESQUASH_OVERLAY/upper"
    livesquash_link /run/ovlwork "$LIVESQUASH_OVERLAY/work"
    livesquash_mount "overlay on $NEWROOT" -t overlay -o "lowerdir=$_ls_lower,upperdir=/run/overlayfs,workdir=/run/ovlwork" \
        LiveOS_rootfs "$NEWROOT"
}

# ---- a network image: root=live:http(s)://HOST/PATH/squashfs.img ----------

# initqueue finished job: dracut's network has brought an interface up
livesquash_net_ready() {
    [ -n "$(livesquash_get netif)" ]
}

# initqueue job: give up waiting for the network once rd.live.timeout has passed
livesquash_net_deadline() {
    livesquash_net_ready && return 0
    _ls_timeout=$(livesquash_get timeout)
    [ "${_ls_timeout:-0}" -gt 0 ] || return 0
    [ "$(livesquash_uptime)" -ge "$(livesquash_get deadline)" ] || return 0
    livesquash_fail "no network for $(livesquash_get url): no interface got an address (DHCP) within $_ls_timeout s"
    livesquash_set deadline "$(livesquash_deadline "$_ls_timeout")"
}

# livesquash_curl ARGS...: one curl run (its errors and progress meter on the
# console); _ls_crc its exit status, _ls_code the HTTP status, _ls_msg its error
livesquash_curl() {
    mkdir -p "$LIVESQUASH_STATE"
    curl --globoff --location --connect-timeout 10 --speed-limit 1024 --speed-time 30 \
        --write-out '%{http_code} %{errormsg}\n' "$@" > "$LIVESQUASH_STATE/curl.out" 2> /dev/console
    _ls_crc=$?
    _ls_code='' _ls_msg=''
    read -r _ls_code _ls_msg < "$LIVESQUASH_STATE/curl.out"
    return $_ls_crc
}


# livesquash_net_retry WHAT FILE ARGS...: livesquash_curl ARGS until it
# succeeds. An HTTP 4xx answer ends it at once; anything else (no route,
# refused, a 5xx answer, a dropped connection) is tried again after 1, 2, 4 ...
# 16 s, until rd.live.timeout seconds passed without FILE growing (a download
# resumes where it stopped). On failure LIVESQUASH_WHY says why.
livesquash_net_retry() {
    _ls_what=$1 _ls_file=$2
    shift 2
    _ls_t=$(livesquash_get timeout)
    _ls_wait=1
    _ls_since=$(livesquash_uptime)
    _ls_had=$(livesquash_size "$_ls_file")
    while ! livesquash_curl "$@"; do
        case "$_ls_crc:$_ls_code" in
            22:4*)
                LIVESQUASH_WHY="$_ls_what: the server answers HTTP $_ls_code"
                return 1
                ;;
            22:*) _ls_why="the server answers HTTP $_ls_code" ;;
            *) _ls_why=${_ls_msg:-curl exit status $_ls_crc} ;;
        esac
        _ls_has=$(livesquash_size "$_ls_file")
        if [ "$_ls_has" -gt "$_ls_had" ]; then
            _ls_since=$(livesquash_uptime)
            _ls_had=$_ls_has
            _ls_wait=1
        fi
        if [ "$_ls_t" -gt 0 ] && [ $(($(livesquash_uptime) - _ls_since)) -ge "$_ls_t" ]; then
            LIVESQUASH_WHY="$_ls_what: $_ls_why (no progress for $_ls_t s, rd.live.timeout)"
            return 1
        fi
        warn "livesquash: $_ls_what: $_ls_why; trying again in $_ls_wait s"
        sleep "$_ls_wait"
        _ls_wait=$((_ls_wait * 2))
        [ "$_ls_wait" -le 16 ] || _ls_wait=16
    done
    return 0
}

# livesquash_net_hash WANT: WANT is 64 hex digits (or empty)
livesquash_net_hash() {
    case "$1" in
        '') return 0 ;;
        *[!0-9a-fA-F]*) ;;
        *) [ ${#1} -eq 64 ] && return 0 ;;
    esac
    LIVESQUASH_WHY="the sha256 for $(livesquash_get url) is not 64 hex digits: '$1'"
    return 1
}

# the image's size (HEAD: its last Content-Length after redirects) into
# state netsize (empty: the server does not say), and its expected sha256 into
# state netsha (rd.live.sha256=, else URL.sha256; empty: not checked)
livesquash_net_probe() {
    _ls_url=$(livesquash_get url)
    _ls_hdr=$LIVESQUASH_STATE/headers
    livesquash_net_retry "$_ls_url" "" --fail --silent --show-error --head \
        --dump-header "$_ls_hdr" --output /dev/null "$_ls_url" || return 1
    livesquash_set netsize "$(tr -d '\r' < "$_ls_hdr" | sed -n 's/^[Cc]ontent-[Ll]ength: *\([0-9][0-9]*\)$/\1/p' | sed -n '$p')"
    _ls_want=$(livesquash_get sha256)
    if [ -z "$_ls_want" ]; then
        rm -f "$LIVESQUASH_STATE/net.sha256"
        if livesquash_net_retry "$_ls_url.sha256" "" --fail --silent --show-error \
            --output "$LIVESQUASH_STATE/net.sha256" "$_ls_url.sha256"; then
            read -r _ls_want _ < "$LIVESQUASH_STATE/net.sha256"
        elif [ "$_ls_code" = 404 ] && [ "$(livesquash_get check)" != 1 ]; then
            warn "livesquash: no $_ls_url.sha256 on the server: the image is not checked"
        elif [ "$_ls_code" = 404 ]; then
            LIVESQUASH_WHY="rd.live.check: no $_ls_url.sha256 on the server to check the image with"
            return 1
        else
            return 1
        fi
    fi
    livesquash_net_hash "$_ls_want" || return 1
    livesquash_set netsha "$_ls_want"
}

# the network image, downloaded (rd.live.net=download, into RAM and checked) or
# streamed (rd.live.net=stream): state imgpath names it
livesquash_net_image() {
    ismounted "$LIVESQUASH_BASE" && return 0
    if [ -z "$(livesquash_get netprobed)" ]; then
        if ! livesquash_net_probe; then
            livesquash_fail "cannot fetch the root image: $LIVESQUASH_WHY"
            return 1
        fi
        livesquash_set netprobed 1
    fi
    if [ "$(livesquash_get net)" = stream ]; then
        livesquash_net_stream
    else
        livesquash_net_download
    fi
}

# rd.live.net=download: the image into a tmpfs of its size, then its sha256
livesquash_net_download() {
    _ls_url=$(livesquash_get url)
    _ls_size=$(livesquash_get netsize)
    _ls_out=$LIVESQUASH_RAM/$(livesquash_get img)
    if ! ismounted "$LIVESQUASH_RAM"; then
        if [ -n "$_ls_size" ]; then
            if ! livesquash_ram_tmpfs $(((_ls_size + 1048575) / 1048576)) "it cannot be downloaded (rd.live.net=stream reads it from the server instead)" root=live:http; then
                livesquash_fail "not enough memory to download the root image $_ls_url"
                return 1
            fi
        else
            mkdir -p "$LIVESQUASH_RAM"
            livesquash_mount "a tmpfs on $LIVESQUASH_RAM" -t tmpfs -o mode=0755 tmpfs "$LIVESQUASH_RAM" || return 1
        fi
    fi
    info "livesquash: downloading $_ls_url${_ls_size:+ ($((_ls_size / 1048576)) MiB)} to RAM"
    _ls_t0=$(livesquash_uptime_cs)
    if ! livesquash_net_retry "$_ls_url" "$_ls_out" --fail --continue-at - --output "$_ls_out" "$_ls_url"; then
        livesquash_net_discard "cannot fetch the root image: $LIVESQUASH_WHY"
        return 1
    fi
    _ls_t=$(($(livesquash_uptime_cs) - _ls_t0))
    _ls_got=$(livesquash_size "$_ls_out")
    if [ -n "$_ls_size" ] && [ "$_ls_got" != "$_ls_size" ]; then
        livesquash_net_discard "root image $_ls_url is truncated: $_ls_got bytes arrived, the server announced $_ls_size; nothing is mounted"
        return 1
    fi
    info "livesquash: downloaded $_ls_url ($((_ls_got / 1048576)).$((_ls_got * 10 / 1048576 % 10)) MiB in $((_ls_t / 100)).$((_ls_t / 10 % 10)) s)"
    _ls_want=$(livesquash_get netsha)
    if [ -n "$_ls_want" ]; then
        _ls_have=$(sha256sum "$_ls_out")
        _ls_have=${_ls_have%% *}
        if [ "$_ls_have" != "$(echo "$_ls_want" | tr 'A-F' 'a-f')" ]; then
            _ls_src=$_ls_url.sha256
            [ -n "$(livesquash_get sha256)" ] && _ls_src=rd.live.sha256
            livesquash_net_discard "root image $_ls_url is corrupt: its sha256 is $_ls_have, $_ls_src says $_ls_want; nothing is mounted"
            return 1
        fi
        info "livesquash: $_ls_url: sha256 OK"
    fi
    livesquash_set imgpath "$_ls_out"
}

# a failed download: its partial copy freed, one message, the emergency shell
livesquash_net_discard() {
    rm -f "$LIVESQUASH_RAM/$(livesquash_get img)"
    umount -n "$LIVESQUASH_RAM" 2> /dev/null
    livesquash_fail "$1"
}

# rd.live.net=stream: the image as $LIVESQUASH_NBD, its blocks fetched with
# HTTP range requests when read (nbdkit's curl plugin; a failed request is
# tried again, a read never returns other bytes than the server's)
livesquash_net_stream() {
    _ls_url=$(livesquash_get url)
    _ls_sock=$LIVESQUASH_STATE/nbd.sock
    if [ -z "$(livesquash_get nbdpid)" ]; then
        rm -f "$_ls_sock"
        if ! nbdkit --unix "$_ls_sock" --pidfile "$LIVESQUASH_STATE/nbdkit.pid" --readonly \
            --filter=retry-request curl "url=$_ls_url" timeout=60 \
            retry-request-retries=10 retry-request-delay=2 2> /dev/console; then
            livesquash_fail "cannot stream $_ls_url: nbdkit did not start"
            return 1
        fi
        # (its background process writes the file once it listens)
        _ls_i=0
        while ! [ -s "$LIVESQUASH_STATE/nbdkit.pid" ] && [ "$_ls_i" -lt 100 ]; do
            sleep 0.1
            _ls_i=$((_ls_i + 1))
        done
        _ls_pid=
        [ -s "$LIVESQUASH_STATE/nbdkit.pid" ] && read -r _ls_pid < "$LIVESQUASH_STATE/nbdkit.pid"
        if [ -z "$_ls_pid" ]; then
            livesquash_fail "cannot stream $_ls_url: nbdkit wrote no pid file within 10 s"
            return 1
        fi
        livesquash_set nbdpid "$_ls_pid"
    fi
    if ! [ -s "/sys/block/${LIVESQUASH_NBD#/dev/}/pid" ]; then
        if ! nbd-client -unix "$_ls_sock" "$LIVESQUASH_NBD" -readonly -block-size 4096 -timeout 120 \
            > "$LIVESQUASH_STATE/nbd-client.out" 2>&1; then
            livesquash_fail "cannot stream $_ls_url: nbd-client: $(sed -n '$p' "$LIVESQUASH_STATE/nbd-client.out")"
            return 1
        fi
    fi
    livesquash_net_verity || return 1
    info "livesquash: streaming $_ls_url through $LIVESQUASH_NBD (nbdkit's curl plugin, pid $(livesquash_get nbdpid))$(livesquash_get verityinfo)"
}

# livesquash_net_fetch URL FILE: a small file of the server's into FILE
livesquash_net_fetch() {
    rm -f "$2"
    livesquash_net_retry "$1" "" --fail --silent --show-error --output "$2" "$1"
}

# rd.live.net=stream with the image's hash tree on the server (URL.verity, made
# by veritysetup format: iso/mknetboot) and its root hash (rd.live.roothash=,
# else URL.roothash): dm-verity over the NBD device, so that a block whose hash
# is wrong reads as an I/O error, never as other bytes. Without URL.verity
# (and with neither rd.live.roothash nor rd.live.check) the reads are not
# checked until the copy in RAM is whole, after one warning. Sets imgpath.
livesquash_net_verity() {
    _ls_url=$(livesquash_get url)
    _ls_vdev=/dev/mapper/$LIVESQUASH_VERITY
    if [ -b "$_ls_vdev" ]; then
        livesquash_set imgpath "$_ls_vdev"
        return 0
    fi
    _ls_root=$(livesquash_get roothash)
    mkdir -p "${LIVESQUASH_TREE%/*}"
    if ! livesquash_net_fetch "$_ls_url.verity" "$LIVESQUASH_TREE"; then
        if [ "$_ls_code" = 404 ] && [ -z "$_ls_root" ] && [ "$(livesquash_get check)" != 1 ]; then
            warn "livesquash: no $_ls_url.verity on the server: the streamed blocks are not checked until the copy in RAM is whole"
            livesquash_set imgpath "$LIVESQUASH_NBD"
            return 0
        fi
        [ "$_ls_code" = 404 ] && LIVESQUASH_WHY="no $_ls_url.verity on the server ($([ -n "$_ls_root" ] && echo rd.live.roothash || echo rd.live.check) asks for checked reads)"
        livesquash_fail "cannot stream $_ls_url: $LIVESQUASH_WHY"
        return 1
    fi
    _ls_rsrc=rd.live.roothash
    if [ -z "$_ls_root" ]; then
        _ls_rsrc=$_ls_url.roothash
        if ! livesquash_net_fetch "$_ls_url.roothash" "$LIVESQUASH_STATE/roothash"; then
            livesquash_fail "cannot stream $_ls_url: $LIVESQUASH_WHY"
            return 1
        fi
        read -r _ls_root _ < "$LIVESQUASH_STATE/roothash"
    fi
    case "$_ls_root" in
        *[!0-9a-fA-F]* | '')
            livesquash_fail "cannot stream $_ls_url: the root hash from $_ls_rsrc is not hex digits: '$_ls_root'"
            return 1
            ;;
    esac
    if ! _ls_hloop=$(losetup -r -f --show "$LIVESQUASH_TREE"); then
        livesquash_fail "cannot stream $_ls_url: no loop device for its hash tree"
        return 1
    fi
    livesquash_set hashloop "$_ls_hloop"
    # (no udev rules for device-mapper here: libdevmapper makes the node itself)
    mkdir -p /run/cryptsetup
    if ! DM_DISABLE_UDEV=1 veritysetup open "$LIVESQUASH_NBD" "$LIVESQUASH_VERITY" "$_ls_hloop" "$_ls_root" \
        > "$LIVESQUASH_STATE/verity.err" 2>&1; then
        losetup -d "$_ls_hloop"
        livesquash_fail "cannot stream $_ls_url: veritysetup refuses its hash tree ($_ls_url.verity) with the root hash from $_ls_rsrc: $(sed -n '$p' "$LIVESQUASH_STATE/verity.err"); nothing is mounted"
        return 1
    fi
    # the first block (the superblock): dm-verity checks it against the root hash
    if ! dd if="$_ls_vdev" of=/dev/null bs=4096 count=1 2> /dev/null; then
        DM_DISABLE_UDEV=1 veritysetup close "$LIVESQUASH_VERITY" 2> /dev/null
        losetup -d "$_ls_hloop"
        livesquash_fail "cannot stream $_ls_url: dm-verity finds its first block wrong (the image or its hash tree is not what the root hash from $_ls_rsrc says); nothing is mounted"
        return 1
    fi
    livesquash_set verityinfo ", checked by dm-verity (root hash from $_ls_rsrc)"
    livesquash_set imgpath "$_ls_vdev"
}

# rd.live.net=stream, once the root is mounted: the image copied to RAM in
# the background and checked against its sha256 (the kernel's, in
# livesquash-loopswap); then the loop device under /run/rootfsbase reads the
# copy and the NBD device and nbdkit are let go
livesquash_net_background() {
    [ "$(livesquash_get net)" = stream ] || return 0
    [ -n "$(livesquash_get bgstarted)" ] && return 0
    livesquash_set bgstarted 1
    _ls_swap=/usr/lib/livesquash/loopswap
    _ls_loop=
    while read -r _ls_d _ls_m _; do
        [ "$_ls_m" = "$LIVESQUASH_BASE" ] && _ls_loop=$_ls_d
    done < /proc/mounts
    case "$_ls_loop" in /dev/loop*) ;; *) return 0 ;; esac
    _ls_size=$(livesquash_get netsize)
    if [ -z "$_ls_size" ]; then
        warn "livesquash: rd.live.net=stream: the server gives no size: the image stays on the network (no copy to RAM)"
        return 0
    fi
    livesquash_ram_tmpfs $(((_ls_size + 1048575) / 1048576)) "the root stays on the network" rd.live.net=stream || return 0
    set --
    [ -n "$(livesquash_get netsha)" ] && set -- --sha256 "$(livesquash_get netsha)"
    _ls_src=$(livesquash_get imgpath)
    set -- "$@" "$_ls_loop" "$_ls_src" "$LIVESQUASH_RAM/$(livesquash_get img)"
    # let go, in this order: the verity device, its hash tree, the NBD device, nbdkit
    [ "$_ls_src" = "$LIVESQUASH_NBD" ] \
        || set -- "$@" "dm:$LIVESQUASH_VERITY" "$(livesquash_get hashloop)" "rm:$LIVESQUASH_TREE"
    info "livesquash: copying $(livesquash_get url) ($_ls_need MiB) to RAM in the background"
    setsid /usr/lib/livesquash/loopswap "$@" "$LIVESQUASH_NBD" "pid:$(livesquash_get nbdpid)" \
        < /dev/null > /dev/null 2>&1 &
}
