#!/bin/sh
# shellcheck disable=SC1091,SC2154 # dracut provides the libs, $root and $hookdir
# cmdline hook: root=live:CDLABEL=X | live:LABEL=X | live:UUID=X | live:/dev/...
# Options: rd.live.dir= rd.live.squashimg= rd.live.timeout= (rd.live.image: accepted)

type getarg > /dev/null 2>&1 || . /lib/dracut-lib.sh
type livesquash_get > /dev/null 2>&1 || . /lib/livesquash-lib.sh

[ -z "$root" ] && root=$(getarg root=)

case "$root" in
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
            livesquash_set deadline $(($(livesquash_uptime) + _ls_timeout))

            # dracut's own main loop gives up after rd.retry (180) seconds:
            # keep it out of the way of a longer (or endless) rd.live.timeout.
            if ! getarg rd.retry= > /dev/null; then
                if [ "$_ls_timeout" -eq 0 ]; then
                    echo "rd.retry=1000000" > /etc/cmdline.d/90-livesquash-retry.conf
                elif [ "$_ls_timeout" -gt 150 ]; then
                    echo "rd.retry=$((_ls_timeout + 60))" > /etc/cmdline.d/90-livesquash-retry.conf
                fi
            fi

            # the main loop ends when the medium is there ...
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
            warn "livesquash: cannot use root=$root (want live:CDLABEL=, live:LABEL=, live:UUID= or live:/dev/...)"
        fi
        unset _ls_spec _ls_dev _ls_dir _ls_img _ls_timeout
        ;;
esac
