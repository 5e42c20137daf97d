#!/bin/bash
# iso/tool-lib.sh: where the user-facing tools (remaster, check-iso, mkpersist,
# mknetboot, signiso, sbkeys) find their helpers and keep their caches, in one place.
# Each tool sources it from the folder it really lives in (readlink -f "$0"): iso/ of a
# checkout, or /usr/lib/livesquash once installed (make install; /usr/bin/livesquash-X
# is a link to /usr/lib/livesquash/X), so one lookup works from both and nothing
# installed names a checkout.
#
#   LS_LIBDIR        that folder: the helpers (qemu-lib.sh, accel.sh, sb-files.sh,
#                    boot-sort.sh) and the other tools are beside the tool
#   LS_CHECKOUT      the livesquash checkout the tool runs from (LS_LIBDIR/..), empty
#                    when the tool is installed
#   ls_cache_dir     prints the folder a tool keeps what it fetches, probes or logs
#                    in: LIVESQUASH_CACHE if set; in a checkout run by its Makefile,
#                    BUILD (make exports it: build/); else $XDG_CACHE_HOME/livesquash,
#                    /var/cache/livesquash for root, ~/.cache/livesquash for others.
#                    Never the checkout unless its own make asked for it.
#   ls_get PACKAGE   prints how to get a missing PACKAGE: "run 'make deps' (PACKAGE)"
#                    in a checkout, "install the package PACKAGE" otherwise
# shellcheck disable=SC2034 # LS_LIBDIR and LS_CHECKOUT are for the tool that sources this

LS_LIBDIR=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
LS_CHECKOUT=
if [[ -f $LS_LIBDIR/iso.mk && -f $LS_LIBDIR/../Makefile ]]; then
	LS_CHECKOUT=$(cd "$LS_LIBDIR/.." && pwd)
fi

ls_cache_dir() {
	if [[ -n ${LIVESQUASH_CACHE:-} ]]; then
		echo "$LIVESQUASH_CACHE"
	elif [[ -n $LS_CHECKOUT && -n ${BUILD:-} ]]; then
		echo "$BUILD"
	elif [[ -n ${XDG_CACHE_HOME:-} ]]; then
		echo "$XDG_CACHE_HOME/livesquash"
	elif [[ $(id -u) -eq 0 ]]; then
		echo /var/cache/livesquash
	else
		echo "${HOME:?HOME is not set}/.cache/livesquash"
	fi
}

ls_get() {
	if [[ -n $LS_CHECKOUT ]]; then
		echo "run 'make deps' ($1)"
	else
		echo "install the package $1"
	fi
}

# the Debian package of each command a tool needs (a command not named here is its
# own package's name)
declare -A LS_PACKAGE_OF=([blkid]=util-linux [findmnt]=util-linux [sha256sum]=coreutils
	[md5sum]=coreutils [unsquashfs]=squashfs-tools [mksquashfs]=squashfs-tools [getfattr]=attr
	[setfattr]=attr [systemd-nspawn]=systemd-container [sfdisk]=fdisk [mkfs.ext4]=e2fsprogs
	[implantisomd5]=isomd5sum [grub-mknetdir]=grub-common [grub-mkimage]=grub-common
	[veritysetup]=cryptsetup-bin [sbsign]=sbsigntool [sbverify]=sbsigntool [mformat]=mtools
	[mcopy]=mtools [objcopy]=binutils)

# ls_need COMMAND...: dies (the tool's die) naming the first missing command and
# how to get its package
ls_need() {
	local t
	for t in "$@"; do
		command -v "$t" > /dev/null || die "$t missing: $(ls_get "${LS_PACKAGE_OF[$t]:-$t}")"
	done
}

# ls_help TOOL-FILE: the tool's --help: its header comment (from line 2 up to `set
# -euo pipefail`, without shellcheck directives); installed, the checkout's names
# iso/NAME of the tools read livesquash-NAME, the commands on the PATH
ls_help() {
	local names='remaster|check-iso|mkpersist|mknetboot|signiso|sbkeys' s=''
	[[ -n $LS_CHECKOUT ]] || s="s#(^|[^[:alnum:]/._-])iso/($names)([^[:alnum:]_.-]|\$)#\\1livesquash-\\2\\3#g;"
	sed -nE "2,/^set -euo/{/^set -euo/d;/^# shellcheck /d;s/^# ?//;${s}p}" "$1"
}
