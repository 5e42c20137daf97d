#!/bin/sh
# shellcheck disable=SC1091,SC2154 # dracut provides the libs, $root and $hookdir
# cmdline hook: root=live:CDLABEL=X | live:LABEL=X | live:UUID=X | live:PARTUUID=X
# | live:PARTLABEL=X | live:/dev/... | live:http(s)://HOST/PATH/squashfs.img
# dracut's options: rd.live.dir= rd.live.squashimg= rd.live.check rd.live.ram
# rd.live.overlay=DEV[:PATH] rd.live.overlay.reset rd.live.overlay.readonly
# rd.live.overlay.size= iso-scan/filename= (rd.live.image: accepted)
# ours: rd.live.timeout= rd.live.check.timeout= rd.live.ram=background
# rd.live.net=download|stream rd.live.sha256= rd.live.roothash= (a network image)

type getarg > /dev/null 2>&1 || . /lib/dracut-lib.sh
type livesquash_get > /dev/null 2>&1 || . /lib/livesquash-lib.sh

# livesquash_parse_overlay: rd.live.overlay=DEV[:PATH] (DEV in any root=live:
# form; PATH default /<rd.live.dir>/overlayfs) and its options
livesquash_parse_overlay() {
    _ls_ovl=$(getarg rd.live.overlay=)
    [ -n "$_ls_ovl" ] || return 0
    _ls_odev=${_ls_ovl%%:*}
    _ls_opath=
    [ "$_ls_odev" != "$_ls_ovl" ] && _ls_opath=${_ls_ovl#*:}
    if ! _ls_odevp=$(livesquash_spec_to_dev "$_ls_odev"); then
        warn "livesquash: cannot use rd.live.overlay=$_ls_ovl (want LABEL=, UUID=, PARTUUID=, PARTLABEL= or /dev/..., then :PATH); booting without persistence"
        return 0
    fi
    livesquash_set ovl "$_ls_odev"
    livesquash_set ovldev "$_ls_odevp"
    livesquash_set ovlpath "${_ls_opath:-/$1/overlayfs}"
    getargbool 0 rd.live.overlay.reset && livesquash_set ovlreset 1
    getargbool 0 rd.live.overlay.readonly && livesquash_set ovlro 1
    # wait for it as long as for the medium, but at most 15 s
    _ls_w=$2
    [ "$_ls_w" -eq 0 ] || [ "$_ls_w" -gt 15 ] && _ls_w=15
    livesquash_set ovldeadline "$(livesquash_deadline "$_ls_w")"
    echo '. /lib/livesquash-lib.sh; livesquash_persist_ready' \
        > "$hookdir/initqueue/finished/livesquash-persist.sh"
}

# livesquash_parse_net URL: root=live:http(s)://...: dracut's network module
# brings the network up and runs /sbin/livesquashroot (netroot=livesquash:URL);
# the mount hook then fetches the image
livesquash_parse_net() {
    if ! [ -x /sbin/livesquashroot ]; then
        warn "livesquash: cannot use root=live:$1: this initramfs has no network support (make netboot builds one with dracut's network module)"
        return 1
    fi
    _ls_timeout=$(getargnum 60 0 86400 rd.live.timeout=)
    livesquash_set url "$1"
    livesquash_set dir ''
    livesquash_set img "${1##*/}"
    livesquash_set timeout "$_ls_timeout"
    livesquash_set deadline "$(livesquash_deadline "$_ls_timeout")"
    _ls_mode=$(getarg rd.live.net=)
    case "$_ls_mode" in
        '' | download) livesquash_set net download ;;
        stream) livesquash_set net stream ;;
        *)
            warn "livesquash: rd.live.net=$_ls_mode: want download or stream; downloading"
            livesquash_set net download
            ;;
    esac
    livesquash_set sha256 "$(getarg rd.live.sha256=)"
    livesquash_set roothash "$(getarg rd.live.roothash=)"
    getargbool 0 rd.live.check && livesquash_set check 1
    livesquash_set ovlsize "$(getargnum '' 1 1048576 rd.live.overlay.size=)"
    livesquash_parse_overlay LiveOS "$_ls_timeout"
    livesquash_retry "$_ls_timeout"
    echo '. /lib/livesquash-lib.sh; livesquash_net_ready' \
        > "$hookdir/initqueue/finished/livesquash-net.sh"
    echo '. /lib/livesquash-lib.sh; livesquash_net_deadline' \
        > "$hookdir/initqueue/livesquash-deadline.sh"
    info "livesquash: root image at $1; waiting up to $_ls_timeout s for the network"
    # shellcheck disable=SC2034 # read by dracut's init and its netroot
    netroot="livesquash:$1"
    root="livesquash:$1"
    # shellcheck disable=SC2034 # read by dracut's init
    rootok=1
}

# dracut's own main loop gives up after rd.retry (180) seconds:
# keep it out of the way of a longer (or endless) rd.live.timeout.
livesquash_retry() {
    getarg rd.retry= > /dev/null && return 0
    if [ "$1" -eq 0 ]; then
        echo "rd.retry=1000000" > /etc/cmdline.d/90-livesquash-retry.conf
    elif [ "$1" -gt 150 ]; then
        echo "rd.retry=$(($1 + 60))" > /etc/cmdline.d/90-livesquash-retry.conf
    fi
}

[ -z "$root" ] && root=$(getarg root=)

case "$root" in
    live:http://?* | live:https://?*)
        livesquash_parse_net "${root#live:}"
        unset _ls_timeout _ls_mode
        ;;
    live:*)
        _ls_spec=${root#live:}
        if _ls_dev=$(livesquash_spec_to_dev "$_ls_spec"); then
            _ls_dir=$(getarg rd.live.dir=)
            _ls_dir=${_ls_dir:-LiveOS}
            _ls_dir=${_ls_dir#/}
            _ls_dir=${_ls_dir%/}
            _ls_img=$(getarg rd.live.squashimg=)
            _ls_timeout=$(getargnum 30 0 86400 rd.live.timeout=)
            livesquash_set spec "$_ls_spec"
            livesquash_set dev "$_ls_dev"
            livesquash_set dir "$_ls_dir"
            livesquash_set img "${_ls_img:-squashfs.img}"
            livesquash_set timeout "$_ls_timeout"
            livesquash_set deadline "$(livesquash_deadline "$_ls_timeout")"
            livesquash_set isoscan "$(getarg iso-scan/filename=)"
            getargbool 0 rd.live.check && livesquash_set check 1
            livesquash_set checktimeout "$(getargnum 900 1 86400 rd.live.check.timeout=)"
            if [ "$(getarg rd.live.ram=)" = background ]; then
                livesquash_set ram background
            elif getargbool 0 rd.live.ram; then
                livesquash_set ram 1
            fi
            livesquash_set ovlsize "$(getargnum '' 1 1048576 rd.live.overlay.size=)"
            # rd.live.prefetch (ours): unset, on a CD/DVD only; 0 never; 1 always
            if getarg rd.live.prefetch > /dev/null; then
                if getargbool 1 rd.live.prefetch; then
                    livesquash_set prefetch always
                else
                    livesquash_set prefetch never
                fi
            fi
            livesquash_parse_overlay "$_ls_dir" "$_ls_timeout"

            livesquash_retry "$_ls_timeout"

            # the main loop ends when the medium is there (dracut's
            # wait_for_dev; for iso-scan the loop device of the file) ...
            if [ -z "$(livesquash_get isoscan)" ]; then
                wait_for_dev "$_ls_dev"
                # (its emergency hook would repeat our message)
                rm -f "$hookdir/emergency/80-$(str_replace "$_ls_dev" '/' '\x2f').sh"
            fi
            echo '. /lib/livesquash-lib.sh; livesquash_medium_ready' \
                > "$hookdir/initqueue/finished/livesquash-medium.sh"
            # ... or we stop waiting for it
            echo '. /lib/livesquash-lib.sh; livesquash_check_deadline' \
                > "$hookdir/initqueue/livesquash-deadline.sh"

            info "livesquash: waiting up to ${_ls_timeout} s for $_ls_spec ($_ls_dev)"
            root="livesquash:$_ls_spec"
            # shellcheck disable=SC2034 # read by dracut's init
            rootok=1
        else
            warn "livesquash: cannot use root=$root (want live:CDLABEL=, live:LABEL=, live:UUID=, live:PARTUUID=, live:PARTLABEL=, live:/dev/... or live:http(s)://...)"
        fi
        unset _ls_spec _ls_dev _ls_dir _ls_img _ls_timeout
        ;;
esac
