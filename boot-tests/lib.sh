#!/bin/bash
# shellcheck disable=SC2034 # LS_GUEST_SEEN is a result for run.sh
# boot-tests/lib.sh: what the boot tests share on the host: the QEMU runner (ls_qemu,
# ls_accel, ls_strip, ls_console_problems, LS_CRASH_REGEX, ...) from iso/qemu-lib.sh,
# whose header documents it, with the logs in $LS_LOGDIR/NAME (default build/tests);
# ls_stable_copy; and the TAP helpers, numbered across every boot of a run. Sourced by
# run.sh, thirdparty/run.sh, remaster/host.sh, repro.sh and lint.sh.

LS_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(dirname "$LS_HERE")}
BUILD=${BUILD:-$TOP/build}
LS_LOGDIR=${LS_LOGDIR:-$BUILD/tests}
# shellcheck source=SCRIPTDIR/../iso/qemu-lib.sh disable=SC1091 # (followed with -x)
source "$TOP/iso/qemu-lib.sh"

# ls_stable_copy SRC DST: copy a file another job may be rewriting (the lead's
# bzImage while it relinks): wait until it is 5 s old, copy, and retry (up to a
# minute) if its size or mtime changed meanwhile
ls_stable_copy() {
	local src=$1 dst=$2 before after i
	for ((i = 0; i < 12; i++)); do
		before=$(stat -c '%s %Y' "$src") || return 1
		if (($(date +%s) - ${before#* } < 5)); then
			sleep 5
			continue
		fi
		cp "$src" "$dst" || return 1
		after=$(stat -c '%s %Y' "$src") || return 1
		[[ $before == "$after" ]] && return 0
		sleep 5
	done
	echo "ls_stable_copy: $src keeps changing" >&2
	return 1
}

# ---- TAP, numbered across every boot of a run --------------------------------
LS_N=0
LS_PASS=0
LS_FAIL=0
LS_SKIP=0

tap_ok() {
	LS_N=$((LS_N + 1))
	LS_PASS=$((LS_PASS + 1))
	echo "ok $LS_N - $*"
}

# tap_notok DESCRIPTION [DIAGNOSTIC LINE...]
tap_notok() {
	LS_N=$((LS_N + 1))
	LS_FAIL=$((LS_FAIL + 1))
	echo "not ok $LS_N - $1"
	shift
	local l
	for l in "$@"; do
		echo "#   $l"
	done
}

tap_skip() {
	LS_N=$((LS_N + 1))
	LS_SKIP=$((LS_SKIP + 1))
	echo "ok $LS_N - $* # SKIP"
}

tap_diag() { echo "# $*"; }

# tap_test DESCRIPTION COMMAND...: ok if COMMAND succeeds, else its output as diagnostics
tap_test() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if ((rc == 0)); then
		tap_ok "$desc"
	else
		local -a lines=()
		mapfile -t lines < <(printf '%s\n' "$out" | head -n 20)
		tap_notok "$desc" "${lines[@]}"
	fi
}

# tap_logged LOG DESCRIPTION COMMAND...: COMMAND's output in LOG; ok with the seconds
# it took, or not ok with its exit status and LOG's last lines; returns its status
tap_logged() {
	local log=$1 desc=$2 rc=0 start=$SECONDS
	shift 2
	"$@" >"$log" 2>&1 || rc=$?
	if ((rc == 0)); then
		tap_ok "$desc ($((SECONDS - start)) s)"
	else
		local -a last=()
		mapfile -t last < <(tail -n 15 "$log")
		tap_notok "$desc (exit $rc, log $log)" "${last[@]}"
	fi
	return "$rc"
}

# tap_guest RESULTS PREFIX: renumber the guest's "ok - x"/"not ok - x" lines into
# this run's TAP; "#" lines pass through. Only lines after the guest's
# "# livesquash guest checks begin" count: firmware (OVMF, GRUB) may write to the
# second serial port too. Sets LS_GUEST_SEEN (test lines read).
tap_guest() {
	local file=$1 prefix=$2 line begun=0
	LS_GUEST_SEEN=0
	while IFS= read -r line || [[ -n $line ]]; do
		if ((!begun)); then
			[[ $line == *"# livesquash guest checks begin" ]] && begun=1
			continue
		fi
		case $line in
		"ok - "*)
			LS_GUEST_SEEN=$((LS_GUEST_SEEN + 1))
			tap_ok "$prefix ${line#ok - }"
			;;
		"not ok - "*)
			LS_GUEST_SEEN=$((LS_GUEST_SEEN + 1))
			tap_notok "$prefix ${line#not ok - }"
			;;
		"#"*) echo "$line" ;;
		*) [[ -n $line ]] && echo "# guest: $line" ;;
		esac
	done <"$file"
}

# tap_waited NAME OK NOTOK: after `ls_qemu NAME ... --wait-for RE`: ok OK when the
# console showed RE (and nothing it was to stop on), else not ok NOTOK with the
# console's last 8 lines
tap_waited() {
	if ((LS_QEMU_FOUND)) && [[ -z $LS_QEMU_STOPPED ]]; then
		tap_ok "$2"
	else
		local -a last=()
		mapfile -t last < <(grep -v '^\s*$' "$LS_LOGDIR/$1/console.txt" | tail -n 8)
		tap_notok "$3${LS_QEMU_STOPPED:+ (stopped on: $LS_QEMU_STOPPED)}" "${last[@]}"
	fi
}

tap_summary() {
	if ((LS_SKIP)); then
		echo "$LS_PASS passed, $LS_FAIL failed, $LS_SKIP skipped"
	else
		echo "$LS_PASS passed, $LS_FAIL failed"
	fi
}
