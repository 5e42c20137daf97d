#!/bin/bash
# shellcheck disable=SC2034 # LS_QEMU_* and LS_GUEST_SEEN are results for run.sh
# boot-tests/lib.sh: the QEMU runner and TAP helpers, sourced by run.sh.
#
#   ls_qemu NAME TIMEOUT [--iso F] [--uefi] [--kernel K --initrd I --append A]
#           [--autorun F] [--data F] [--wait-for REGEX] [--stop-on REGEX]
# boots headless (-display none, -no-reboot, -m $MEM -smp 2), console on the first
# serial port (console.log), guest results on the second (results.log, /dev/ttyS1
# in the guest), fw_cfg entries opt/livesquash/autorun (F) and opt/livesquash/data
# (F, a tar). Everything runs under `timeout`. With --wait-for, QEMU is stopped as
# soon as REGEX shows up on the (escape-stripped) console, plus 3 s to catch a crash;
# --stop-on REGEX stops it the same way but counts as a failure (a boot that went to
# an emergency shell would otherwise sit there until the timeout).
# Leaves in $LS_LOGDIR/NAME/: console.log (raw), console.txt (escape codes stripped),
# results.txt, qemu.log (QEMU's own output), cmdline; sets LS_QEMU_RC (124: timed
# out), LS_QEMU_SECONDS, LS_QEMU_FOUND (1 if --wait-for matched) and LS_QEMU_STOPPED
# (the console line that matched --stop-on, else empty).

LS_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(dirname "$LS_HERE")}
BUILD=${BUILD:-$TOP/build}
MEM=${MEM:-1024}
LS_LOGDIR=${LS_LOGDIR:-$BUILD/tests}
LS_OVMF_CODE=${LS_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
LS_OVMF_VARS=${LS_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
# what a console must never show
LS_CRASH_REGEX='BUG:|WARNING:|Oops|Call Trace|KASAN|Kernel panic'

LS_ACCEL=""
ls_accel() {
	if [[ -z $LS_ACCEL ]]; then
		LS_ACCEL=$(TOP=$TOP BUILD=$BUILD bash "$LS_HERE/accel.sh")
	fi
	echo "$LS_ACCEL"
}

# strip terminal escape codes and carriage returns (GRUB draws its menu with them)
ls_strip() {
	LC_ALL=C sed -E $'s/\x1b\\[[0-9;?=]*[A-Za-z]//g; s/\x1b[()][A-Za-z0-9]//g; s/\x1b[=>78cDEHM]//g; s/\r//g' "$1" |
		LC_ALL=C tr -d '\000-\010\013\014\016-\037\177'
}

ls_now() { date +%s.%N; }
ls_elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

ls_qemu() {
	local name=$1 tmo=$2
	shift 2
	local iso="" uefi=0 kernel="" initrd="" append="" autorun="" data="" waitfor="" stopon=""
	while (($#)); do
		case $1 in
		--iso) iso=$2 && shift ;;
		--uefi) uefi=1 ;;
		--kernel) kernel=$2 && shift ;;
		--initrd) initrd=$2 && shift ;;
		--append) append=$2 && shift ;;
		--autorun) autorun=$2 && shift ;;
		--data) data=$2 && shift ;;
		--wait-for) waitfor=$2 && shift ;;
		--stop-on) stopon=$2 && shift ;;
		*)
			echo "ls_qemu: unknown option $1" >&2
			return 2
			;;
		esac
		shift
	done
	local dir=$LS_LOGDIR/$name
	mkdir -p "$dir"
	rm -f "$dir"/console.clock-jump.txt
	local accel
	accel=$(ls_accel)
	local -a cmd=(qemu-system-x86_64 -machine pc -accel "$accel" -m "$MEM" -smp 2
		-display none -monitor none -no-reboot
		-serial "file:$dir/console.log" -serial "file:$dir/results.log")
	if ((uefi)); then
		cmd+=(-drive "if=pflash,format=raw,readonly=on,file=$LS_OVMF_CODE"
			-drive "if=pflash,format=raw,file=$dir/OVMF_VARS.fd")
	fi
	[[ -n $iso ]] && cmd+=(-cdrom "$iso" -boot d)
	[[ -n $kernel ]] && cmd+=(-kernel "$kernel")
	[[ -n $initrd ]] && cmd+=(-initrd "$initrd")
	[[ -n $append ]] && cmd+=(-append "$append")
	[[ -n $autorun ]] && cmd+=(-fw_cfg "name=opt/livesquash/autorun,file=$autorun")
	[[ -n $data ]] && cmd+=(-fw_cfg "name=opt/livesquash/data,file=$data")
	printf '%q ' timeout --kill-after=10 "$tmo" "${cmd[@]}" >"$dir/cmdline"
	echo >>"$dir/cmdline"

	local start end rc attempt jump
	for attempt in 1 2; do
		rc=0
		rm -f "$dir"/console.log "$dir"/console.txt "$dir"/results.log "$dir"/results.txt "$dir"/qemu.log
		((uefi)) && cp "$LS_OVMF_VARS" "$dir/OVMF_VARS.fd"
		ls_qemu_run
		# a guest's clock may jump, not the guest: with TCG the guest reads the host's
		# TSC as is, and that TSC jumps by days when the host (a microVM, itself
		# booted with tsc=unstable) is restored from a snapshot; the guest's soft-lockup
		# watchdog then says "stuck for 461078s" in a boot QEMU may run for $tmo s.
		# Such a boot is run again, once, its console kept; any other hit still fails.
		jump=$(ls_clock_jump "$dir/console.txt" "$tmo")
		[[ -n $jump && $attempt == 1 ]] || break
		cp "$dir/console.txt" "$dir/console.clock-jump.txt"
		echo "# $name: the guest's clock jumped (its console says '$jump' in a boot limited to $tmo s): a host clock jump, not a lockup; booting again (first console: $dir/console.clock-jump.txt)"
	done
	return 0
}

# ls_clock_jump CONSOLE SECONDS: the first soft-lockup report that says a CPU was
# stuck for longer than SECONDS (a time no guest of a boot that long can see)
ls_clock_jump() {
	{ grep -m1 -oE 'soft lockup - CPU#[0-9]+ stuck for [0-9]+s' "$1" || true; } |
		awk -v max="$2" '{ s = $NF; sub(/s$/, "", s) } s + 0 > max + 0 { print }'
}

# ls_qemu_run: one run of ls_qemu's command (its variables are in scope)
ls_qemu_run() {
	LS_QEMU_FOUND=0
	LS_QEMU_STOPPED=""
	start=$(ls_now)
	if [[ -z $waitfor && -z $stopon ]]; then
		timeout --kill-after=10 "$tmo" "${cmd[@]}" </dev/null >"$dir/qemu.log" 2>&1 || rc=$?
	else
		timeout --kill-after=10 "$tmo" "${cmd[@]}" </dev/null >"$dir/qemu.log" 2>&1 &
		local pid=$! text
		while kill -0 "$pid" 2>/dev/null; do
			sleep 1
			[[ -f $dir/console.log ]] || continue
			text=$(ls_strip "$dir/console.log")
			if [[ -n $waitfor ]] && grep -qE "$waitfor" <<<"$text"; then
				LS_QEMU_FOUND=1
			elif [[ -n $stopon ]] && grep -qE "$stopon" <<<"$text"; then
				LS_QEMU_STOPPED=$(grep -m1 -E "$stopon" <<<"$text")
			else
				continue
			fi
			sleep 3 # a crash right after the line must still be seen
			kill "$pid" 2>/dev/null || true
			break
		done
		wait "$pid" || rc=$?
		if [[ -n $waitfor ]] && ((!LS_QEMU_FOUND)) && [[ -f $dir/console.log ]] &&
			ls_strip "$dir/console.log" | grep -qE "$waitfor"; then
			LS_QEMU_FOUND=1
		fi
	fi
	end=$(ls_now)
	LS_QEMU_RC=$rc
	LS_QEMU_SECONDS=$(ls_elapsed "$start" "$end")
	[[ -f $dir/console.log ]] || : >"$dir/console.log"
	[[ -f $dir/results.log ]] || : >"$dir/results.log"
	ls_strip "$dir/console.log" >"$dir/console.txt"
	ls_strip "$dir/results.log" >"$dir/results.txt"
}

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

# print the lines of a stripped console that show a kernel problem
ls_console_problems() {
	grep -nE "$LS_CRASH_REGEX" "$1" | head -n 20 || true
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

tap_summary() {
	if ((LS_SKIP)); then
		echo "$LS_PASS passed, $LS_FAIL failed, $LS_SKIP skipped"
	else
		echo "$LS_PASS passed, $LS_FAIL failed"
	fi
}
