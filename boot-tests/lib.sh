#!/bin/bash
# shellcheck disable=SC2034 # LS_QEMU_* and LS_GUEST_SEEN are results for run.sh
# boot-tests/lib.sh: the QEMU runner and TAP helpers, sourced by run.sh.
#
#   ls_qemu NAME TIMEOUT [--iso F [--usb]] [--uefi] [--kernel K --initrd I --append A]
#           [--autorun F] [--data F] [--wait-for REGEX] [--stop-on REGEX]
#           [--press-enter | --isolinux-append TEXT]
# boots headless (-display none, -no-reboot, -m $MEM -smp 2), console on the first
# serial port (console.log), guest results on the second (results.log, /dev/ttyS1
# in the guest), fw_cfg entries opt/livesquash/autorun (F) and opt/livesquash/data
# (F, a tar). Everything runs under `timeout`. With --wait-for, QEMU is stopped as
# soon as REGEX shows up on the (escape-stripped) console, plus 3 s to catch a crash;
# --stop-on REGEX stops it the same way but counts as a failure (a boot that went to
# an emergency shell would otherwise sit there until the timeout).
# The ISO is a read-only drive (QEMU never writes to it): by default a CD-ROM
# (`-boot d`); with --usb a USB stick instead (usb-storage on a qemu-xhci
# controller, bootindex 0), booted as a disk by SeaBIOS or OVMF (an isohybrid ISO).
# --press-enter: for boot menus that wait for a key (isolinux `timeout 0`, GRUB
# without a timeout). QEMU gets a monitor on a unix socket ($LS_LOGDIR/NAME/monitor.sock)
# and ls_qemu sends `sendkey ret` every 3 s until the console shows a kernel line
# (`Linux version N`) or 90 s have passed (LS_PRESS_ENTER_MAX); the monitor client is
# socat if installed, else netcat-openbsd's `nc -U`, else python3. With the monitor
# there, `info blockstats` is sampled every 5 s and before QEMU is stopped
# (blockstats.txt): LS_QEMU_READ is the bytes the guest read from its drives.
# --isolinux-append TEXT: the same monitor; once the drives have been idle for 4 s
# (isolinux's menu waits; or after 90 s), press Tab (edit the default entry's
# command line), type TEXT (letters, digits, space and = , . - _ / :) and Return:
# e.g. ' console=ttyS0,115200' to see the kernel of an unchanged ISO on the console.
# Leaves in $LS_LOGDIR/NAME/: console.log (raw), console.txt (escape codes stripped),
# results.txt, qemu.log (QEMU's own output), cmdline (monitor.log, blockstats.txt with
# a monitor); sets LS_QEMU_RC (124: timed out), LS_QEMU_SECONDS, LS_QEMU_FOUND (1
# if --wait-for matched), LS_QEMU_STOPPED (the console line that matched --stop-on,
# else empty), LS_QEMU_KEYS (keys sent) and LS_QEMU_READ (bytes, or empty).

LS_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(dirname "$LS_HERE")}
BUILD=${BUILD:-$TOP/build}
MEM=${MEM:-1024}
LS_LOGDIR=${LS_LOGDIR:-$BUILD/tests}
LS_OVMF_CODE=${LS_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
LS_OVMF_VARS=${LS_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
LS_PRESS_ENTER_MAX=${LS_PRESS_ENTER_MAX:-90}
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
	local usb=0 press=0 monitor="" edit=""
	while (($#)); do
		case $1 in
		--iso) iso=$2 && shift ;;
		--usb) usb=1 ;;
		--press-enter) press=1 ;;
		--isolinux-append) edit=$2 && shift ;;
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
	if ((usb)) && [[ -z $iso ]]; then
		echo "ls_qemu: --usb needs --iso" >&2
		return 2
	fi
	local accel
	accel=$(ls_accel)
	local -a mon=(-monitor none)
	if ((press)) || [[ -n $edit ]]; then
		monitor=$dir/monitor.sock
		# a unix socket's path is limited to 107 bytes
		((${#monitor} < 100)) || monitor=$(mktemp -u "${TMPDIR:-/tmp}/lsq-monitor.XXXXXX")
		mon=(-monitor "unix:$monitor,server=on,wait=off")
	fi
	local -a cmd=(qemu-system-x86_64 -machine pc -accel "$accel" -m "$MEM" -smp 2
		-display none "${mon[@]}" -no-reboot
		-serial "file:$dir/console.log" -serial "file:$dir/results.log")
	if ((uefi)); then
		cmd+=(-drive "if=pflash,format=raw,readonly=on,file=$LS_OVMF_CODE"
			-drive "if=pflash,format=raw,file=$dir/OVMF_VARS.fd")
	fi
	if [[ -n $iso ]]; then
		# read-only: a boot never writes to the ISO (commas in -drive values are doubled)
		if ((usb)); then
			cmd+=(-device "qemu-xhci,id=xhci"
				-drive "if=none,id=stick,format=raw,readonly=on,file=${iso//,/,,}"
				-device "usb-storage,bus=xhci.0,drive=stick,bootindex=0")
		else
			cmd+=(-drive "if=ide,index=2,media=cdrom,format=raw,readonly=on,file=${iso//,/,,}" -boot d)
		fi
	fi
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
		rm -f "$dir"/console.log "$dir"/console.txt "$dir"/results.log "$dir"/results.txt "$dir"/qemu.log \
			"$dir"/monitor.log "$dir"/blockstats.txt
		[[ -z $monitor ]] || rm -f "$monitor"
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
	LS_QEMU_KEYS=0
	LS_QEMU_READ=""
	start=$(ls_now)
	if [[ -z $waitfor && -z $stopon && -z $monitor ]]; then
		timeout --kill-after=10 "$tmo" "${cmd[@]}" </dev/null >"$dir/qemu.log" 2>&1 || rc=$?
	else
		timeout --kill-after=10 "$tmo" "${cmd[@]}" </dev/null >"$dir/qemu.log" 2>&1 &
		# t: seconds since the start; the monitor's work is due at next_stat (blockstats,
		# every 5 s, every second while waiting to type) and next_key (Return every 3 s)
		local pid=$! text="" t=0 t0=$SECONDS pressing=$press typing=0 last=-1 idle=0
		local next_stat=0 next_key=3
		[[ -z $edit ]] || typing=1
		while kill -0 "$pid" 2>/dev/null; do
			sleep 1
			t=$((SECONDS - t0))
			if [[ -n $monitor ]]; then
				if ((typing || t >= next_stat)); then
					ls_blockstats
					next_stat=$((t + 5))
				fi
				if ((typing)); then
					if [[ -n $LS_QEMU_READ && $LS_QEMU_READ != 0 && $LS_QEMU_READ == "$last" ]]; then
						idle=$((idle + 1))
					else
						idle=0
					fi
					last=${LS_QEMU_READ:--1}
					if ((idle >= 4 || t > LS_PRESS_ENTER_MAX)); then
						typing=0
						echo "$t s: drives idle for $idle s after ${LS_QEMU_READ:-?} bytes: Tab, '$edit', Return" >>"$dir/monitor.log"
						ls_type "$monitor" "$edit" >>"$dir/monitor.log" 2>&1 || true
					fi
				fi
				if ((pressing)); then
					if ((t > LS_PRESS_ENTER_MAX)) ||
						{ [[ -f $dir/console.log ]] && ls_strip "$dir/console.log" | grep -qE 'Linux version [0-9]'; }; then
						pressing=0
						echo "$t s: stopped pressing Return ($LS_QEMU_KEYS sent)" >>"$dir/monitor.log"
					elif ((t >= next_key)); then
						next_key=$((t + 3))
						if ls_monitor "$monitor" "sendkey ret" >/dev/null 2>&1; then
							LS_QEMU_KEYS=$((LS_QEMU_KEYS + 1))
							echo "$t s: sendkey ret" >>"$dir/monitor.log"
						else
							echo "$t s: sendkey ret failed (no monitor yet?)" >>"$dir/monitor.log"
						fi
					fi
				fi
			fi
			[[ -n $waitfor || -n $stopon ]] || continue
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
			[[ -z $monitor ]] || ls_blockstats
			kill "$pid" 2>/dev/null || true
			break
		done
		wait "$pid" || rc=$?
		if [[ -n $waitfor ]] && ((!LS_QEMU_FOUND)) && [[ -f $dir/console.log ]] &&
			ls_strip "$dir/console.log" | grep -qE "$waitfor"; then
			LS_QEMU_FOUND=1
		fi
		[[ -z $monitor ]] || rm -f "$monitor"
	fi
	end=$(ls_now)
	LS_QEMU_RC=$rc
	LS_QEMU_SECONDS=$(ls_elapsed "$start" "$end")
	[[ -f $dir/console.log ]] || : >"$dir/console.log"
	[[ -f $dir/results.log ]] || : >"$dir/results.log"
	ls_strip "$dir/console.log" >"$dir/console.txt"
	ls_strip "$dir/results.log" >"$dir/results.txt"
}

# ls_blockstats: (in ls_qemu_run) sample `info blockstats` into blockstats.txt and
# LS_QEMU_READ (the sum of rd_bytes); a failed sample keeps the last one
ls_blockstats() {
	local out
	out=$(ls_monitor "$monitor" "info blockstats" 2>/dev/null) || return 0
	out=$(ls_strip /dev/stdin <<<"$out" | grep -E 'rd_bytes=' || true)
	[[ -n $out ]] || return 0
	printf '%s\n' "$out" >"$dir/blockstats.txt"
	LS_QEMU_READ=$(grep -oE 'rd_bytes=[0-9]+' <<<"$out" | awk -F= '{ n += $2 } END { printf "%d", n }')
}

# ls_type SOCKET TEXT: (in ls_qemu_run) Tab, TEXT, Return as key presses; counts
# them in LS_QEMU_KEYS
ls_type() {
	local sock=$1 text=$2 c k i
	local -a keys=(tab)
	for ((i = 0; i < ${#text}; i++)); do
		c=${text:i:1}
		case $c in
		[a-z0-9]) k=$c ;;
		[A-Z]) k=shift-${c,} ;;
		' ') k=spc ;;
		=) k=equal ;;
		,) k=comma ;;
		.) k="dot" ;;
		-) k=minus ;;
		_) k=shift-minus ;;
		/) k=slash ;;
		:) k=shift-semicolon ;;
		*)
			echo "ls_type: no key for '$c'" >&2
			return 1
			;;
		esac
		keys+=("$k")
	done
	keys+=(ret)
	for k in "${keys[@]}"; do
		ls_monitor "$sock" "sendkey $k" >/dev/null || return 1
		LS_QEMU_KEYS=$((LS_QEMU_KEYS + 1))
	done
}

# ls_monitor SOCKET COMMAND: one QEMU human-monitor command over a unix socket; prints
# the answer. socat if installed, else netcat-openbsd (nc -U), else python3.
ls_monitor() {
	local sock=$1 line=$2
	[[ -S $sock ]] || return 1
	if command -v socat >/dev/null; then
		{
			printf '%s\n' "$line"
			sleep 0.3
		} | timeout 5 socat -t 2 - "UNIX-CONNECT:$sock"
	elif command -v nc >/dev/null && grep -q -- '-U' < <(nc -h 2>&1); then
		{
			printf '%s\n' "$line"
			sleep 0.3
		} | timeout 5 nc -N -U "$sock"
	else
		timeout 5 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
s.connect(sys.argv[1])
def prompt():
	buf = b""
	while not buf.endswith(b"(qemu) "):
		d = s.recv(4096)
		if not d:
			break
		buf += d
	return buf
prompt()  # the banner
s.sendall(sys.argv[2].encode() + b"\n")
sys.stdout.write(prompt().decode("utf-8", "replace"))
' "$sock" "$line"
	fi
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
