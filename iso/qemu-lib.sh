#!/bin/bash
# shellcheck disable=SC2034 # LS_QEMU_* are results for the caller
# iso/qemu-lib.sh: how we start QEMU, in one place: the runner iso/check-iso and every
# boot test (boot-tests/lib.sh, driver/run.sh, bench/bench.sh, bench/liveboot.sh) source.
#
#   ls_qemu NAME TIMEOUT [OPTION...] [-- QEMU-ARG...]
#
# boots headless (-machine pc, -display none, -no-reboot), console on the first serial
# port, guest results on the second (/dev/ttyS1 in the guest). Everything runs under
# `timeout --kill-after=10 TIMEOUT`; the accelerator is ls_accel's (iso/accel.sh).
# What boots:
#   --iso F          the ISO as a read-only drive (QEMU never writes to it): by default
#                    a CD-ROM (`-boot d`); with --usb a USB stick instead (usb-storage
#                    on a qemu-xhci controller, bootindex 0), booted as a disk by
#                    SeaBIOS or OVMF (an isohybrid ISO)
#   --medium MODEL   the ISO (--iso, as CD or with --usb as stick) is not a file QEMU
#                    reads but iso/medium.py serving it over NBD on a unix socket, as
#                    slow as the medium MODEL: dvd (10 MB/s, 100 ms seeks) or usb (a
#                    USB 2.0 stick, 30 MB/s), MODELxN N times slower (see medium.py);
#                    every read and its cost go to medium.log
#                    (PREFIX.medium.log), whose last line has the totals: LS_QEMU_MEDIUM
#   --uefi           OVMF (pflash: LS_OVMF_CODE read-only, a fresh copy of LS_OVMF_VARS)
#   --secure-boot VARS   OVMF built for Secure Boot (LS_OVMF_SB_CODE, SMM: -machine
#                    q35,smm=on) with a fresh copy of VARS, a variable store with the
#                    keys enrolled and Secure Boot on (implies --uefi)
#   --kernel K, --initrd I, --append A   a direct boot
#   --autorun F, --data F   fw_cfg entries opt/livesquash/autorun and opt/livesquash/data
#   --virtio-disks LIST MODE   one virtio-blk-pci disk per line of LIST (tab-separated:
#                    SERIAL, IMAGE, anything else is ignored), the serial the guest sees
#                    in /sys/block/vdX/serial; PCI slot 3 on, 8 functions a slot; the
#                    devices' ids are vdisk0, vdisk1, ... (for a monitor's device_del)
#                    MODE readonly (readonly=on) or snapshot (snapshot=on: the guest may
#                    write, the image stays unchanged). Sets LS_QEMU_NDISKS.
#   -- ARG...        the rest goes to QEMU's command line as is; without a -netdev,
#                    -nic or -net among them the guest has no network card (-nic none)
# The machine:
#   --mem MIB        memory (default $MEM, 1024)
#   --smp N          vCPUs (default 2)
#   --nodefaults     -nodefaults -vga none: no default NIC, CD-ROM, floppy or VGA (their
#                    PCI slots stay free for --virtio-disks)
# Where the files go: $LS_LOGDIR/NAME/ (default $BUILD/qemu; boot-tests/lib.sh makes it
# $BUILD/tests) holds console.log (raw), console.txt (escape codes stripped),
# results.log (raw), results.txt (the same stripped), qemu.log (QEMU's own output),
# cmdline (the command, to paste), with a monitor monitor.log and blockstats.txt, with
# --uefi OVMF_VARS.fd.
#   --logdir DIR     DIR instead of $LS_LOGDIR/NAME (the same file names)
#   --files PREFIX   no folder: PREFIX.console, PREFIX.console.txt, PREFIX.out,
#                    PREFIX.out.txt, PREFIX.qemu, PREFIX.cmdline (PREFIX.monitor.log,
#                    PREFIX.blockstats.txt, PREFIX.OVMF_VARS.fd)
#   --results-socket PATH   the second serial port is a unix socket QEMU listens on
#                    (PATH), not a file, and QEMU starts the guest only once a client
#                    has connected: for a host program that talks with the guest
#                    (boot-tests/fuzz/vm.py); no results files then
#   --results-raw    the results text (results.txt, PREFIX.out.txt) loses only carriage
#                    returns, not escape codes and control characters: for guests whose
#                    results carry raw bytes (file names with \x01 in them)
# Watching the boot (QEMU then runs in the background and is looked at every second):
#   --wait-for REGEX   QEMU is stopped as soon as REGEX shows up on the (escape-stripped)
#                    console, plus 3 s to catch a crash; LS_QEMU_FOUND=1
#   --stop-on REGEX  stops it the same way but counts as a failure (a boot that went to
#                    an emergency shell would otherwise sit there until the timeout):
#                    LS_QEMU_STOPPED is the console line that matched
#   --stall SECONDS  a watchdog: QEMU is stopped when the results file has not grown for
#                    SECONDS (a hung guest, long before TIMEOUT); LS_QEMU_STALLED=1. Before
#                    it is stopped, the monitor asks the guest's kernel for its CPUs'
#                    backtraces and its blocked tasks (SysRq l and w, on the console if
#                    the guest can still answer) and keeps every vCPU's registers (RIP:
#                    where each one spins) in stall-registers.txt / PREFIX.stall-registers.txt
#   --mark REGEX     LS_QEMU_MARK: seconds (0.01 s) from QEMU's start until a line of the
#                    raw results file matches REGEX (looked for every 0.2 s), else empty
#   --mark-console REGEX   LS_QEMU_MARK_CONSOLE: the same for the raw console (e.g. a
#                    getty's 'login:')
#   --progress CMD   runs CMD (a function or command, no arguments) every 5 s while QEMU
#                    runs, and once after it ended (e.g. to print the guest's progress)
#   --menu-entry N   pick GRUB's menu entry N (0-based): once the console shows the menu
#                    ("Use the ... keys to select") and its countdown (or 3 s after the
#                    menu, if it has none), the monitor sends Down N times and Return;
#                    LS_QEMU_MENU=1 when it did
#   --on-result REGEX COMMAND   once a line of the raw results file matches REGEX, send
#                    COMMAND to the monitor (e.g. 'eject ide1-cd0', the CD of --iso);
#                    its answer goes to monitor.log, LS_QEMU_ONRESULT_SENT = the second
#   --press-enter    for boot menus that wait for a key (isolinux `timeout 0`, GRUB
#                    without a timeout). QEMU gets a monitor on a unix socket
#                    (monitor.sock beside the logs) and ls_qemu sends `sendkey ret` every
#                    3 s until the console shows a kernel line (`Linux version N`) or 90 s
#                    have passed (LS_PRESS_ENTER_MAX); the monitor client is socat if
#                    installed, else netcat-openbsd's `nc -U`, else python3. With the
#                    monitor there, `info blockstats` is sampled every 5 s and before QEMU
#                    is stopped (blockstats.txt): LS_QEMU_READ is the bytes the guest read
#                    from its drives.
#   --isolinux-append TEXT   the same monitor; once the drives have been idle for 4 s
#                    (isolinux's menu waits; or after 90 s), press Tab (edit the default
#                    entry's command line), type TEXT (letters, digits, space and
#                    = , . - _ / :) and Return: e.g. ' console=ttyS0,115200' to see the
#                    kernel of an unchanged ISO on the console.
# A guest's clock may jump, not the guest: a console whose soft-lockup report says a CPU
# was stuck for longer than TIMEOUT is kept (console.clock-jump.txt, or
# PREFIX.console.clock-jump.txt), a "# NAME: ..." line says so, and the boot runs once
# more (see ls_qemu's loop).
# Sets LS_QEMU_RC (124: timed out), LS_QEMU_SECONDS, LS_QEMU_FOUND, LS_QEMU_STOPPED,
# LS_QEMU_STALLED, LS_QEMU_MARK, LS_QEMU_MARK_CONSOLE, LS_QEMU_MEDIUM, LS_QEMU_KEYS (keys sent), LS_QEMU_READ (bytes, or
# empty), LS_QEMU_NDISKS, LS_QEMU_CONSOLE and LS_QEMU_RESULTS (the stripped console's
# and the results text's paths). Returns 2 on a usage error, else 0.
#
# Also: ls_accel (kvm or tcg, probed once per shell), ls_strip FILE (escape codes
# out), ls_now/ls_elapsed, ls_clock_jump, ls_console_problems FILE (lines matching
# LS_CRASH_REGEX), ls_monitor SOCKET COMMAND, ls_grub_entry N GRUB_CFG,
# ls_iso_boot_files ISO DIR (a direct boot's kernel, initrd and command line),
# ls_debian_kver, ls_busybox_stage DIR INIT (the tree of a direct boot's busybox
# initramfs).

LS_QEMU_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(dirname "$LS_QEMU_HERE")}
BUILD=${BUILD:-$TOP/build}
MEM=${MEM:-1024}
LS_LOGDIR=${LS_LOGDIR:-$BUILD/qemu}
LS_OVMF_CODE=${LS_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
LS_OVMF_VARS=${LS_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
LS_OVMF_SB_CODE=${LS_OVMF_SB_CODE:-/usr/share/OVMF/OVMF_CODE_4M.secboot.fd}
LS_PRESS_ENTER_MAX=${LS_PRESS_ENTER_MAX:-90}
# what a console must never show
LS_CRASH_REGEX='BUG:|WARNING:|Oops|Call Trace|KASAN|UBSAN|Kernel panic|blocked for more than'

LS_ACCEL=""
ls_accel() {
	if [[ -z $LS_ACCEL ]]; then
		LS_ACCEL=$(TOP=$TOP BUILD=$BUILD bash "$LS_QEMU_HERE/accel.sh")
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
	local iso="" uefi=0 sbvars="" kernel="" initrd="" append="" autorun="" data="" waitfor="" stopon=""
	local usb=0 press=0 monitor="" monwork=0 edit="" mem=$MEM smp=2 nodefaults=0 logdir="" prefix=""
	local raw=0 ressock="" stall="" mark="" cmark="" progress="" medium="" disklist="" diskmode="" menu="" onres_re="" onres_cmd=""
	local -a extra=()
	while (($#)); do
		case $1 in
		--iso) iso=$2 && shift ;;
		--usb) usb=1 ;;
		--medium) medium=$2 && shift ;;
		--press-enter) press=1 ;;
		--menu-entry) menu=$2 && shift ;;
		--on-result)
			(($# >= 3)) || {
				echo "ls_qemu: --on-result needs REGEX and COMMAND" >&2
				return 2
			}
			onres_re=$2 && onres_cmd=$3 && shift 2
			;;
		--isolinux-append) edit=$2 && shift ;;
		--uefi) uefi=1 ;;
		--secure-boot) uefi=1 sbvars=$2 && shift ;;
		--kernel) kernel=$2 && shift ;;
		--initrd) initrd=$2 && shift ;;
		--append) append=$2 && shift ;;
		--autorun) autorun=$2 && shift ;;
		--data) data=$2 && shift ;;
		--wait-for) waitfor=$2 && shift ;;
		--stop-on) stopon=$2 && shift ;;
		--mem) mem=$2 && shift ;;
		--smp) smp=$2 && shift ;;
		--nodefaults) nodefaults=1 ;;
		--logdir) logdir=$2 && shift ;;
		--files) prefix=$2 && shift ;;
		--results-raw) raw=1 ;;
		--results-socket) ressock=$2 && shift ;;
		--stall) stall=$2 && shift ;;
		--mark) mark=$2 && shift ;;
		--mark-console) cmark=$2 && shift ;;
		--progress) progress=$2 && shift ;;
		--virtio-disks)
			disklist=$2 diskmode=${3:-}
			shift 2
			;;
		--)
			shift
			extra=("$@")
			break
			;;
		*)
			echo "ls_qemu: unknown option $1" >&2
			return 2
			;;
		esac
		shift
	done
	if ((usb)) && [[ -z $iso ]]; then
		echo "ls_qemu: --usb needs --iso" >&2
		return 2
	fi
	if [[ -n $medium && ( -z $iso || ! $medium =~ ^(dvd|usb)(x[0-9]+(\.[0-9]+)?)?$ ) ]]; then
		echo "ls_qemu: --medium dvd|usb[xN], with --iso (got '$medium')" >&2
		return 2
	fi
	if [[ -n $logdir && -n $prefix ]]; then
		echo "ls_qemu: --logdir or --files, not both" >&2
		return 2
	fi
	if [[ -n $stall && ! $stall =~ ^[1-9][0-9]*$ ]]; then
		echo "ls_qemu: --stall takes a number of seconds (got '$stall')" >&2
		return 2
	fi
	# the files: f[KEY] for console, console_txt, results, results_txt, qemu, cmdline,
	# monitor_log, blockstats, vars, jump, sock
	local -A f=()
	if [[ -n $prefix ]]; then
		mkdir -p "$(dirname "$prefix")"
		f=([console]=$prefix.console [console_txt]=$prefix.console.txt [results]=$prefix.out
			[results_txt]=$prefix.out.txt [qemu]=$prefix.qemu [cmdline]=$prefix.cmdline
			[monitor_log]=$prefix.monitor.log [blockstats]=$prefix.blockstats.txt
			[vars]=$prefix.OVMF_VARS.fd [jump]=$prefix.console.clock-jump.txt
			[sock]=$prefix.monitor.sock [medium_log]=$prefix.medium.log)
	else
		local dir=${logdir:-$LS_LOGDIR/$name}
		mkdir -p "$dir"
		f=([console]=$dir/console.log [console_txt]=$dir/console.txt [results]=$dir/results.log
			[results_txt]=$dir/results.txt [qemu]=$dir/qemu.log [cmdline]=$dir/cmdline
			[monitor_log]=$dir/monitor.log [blockstats]=$dir/blockstats.txt
			[vars]=$dir/OVMF_VARS.fd [jump]=$dir/console.clock-jump.txt [sock]=$dir/monitor.sock
			[medium_log]=$dir/medium.log)
	fi
	rm -f "${f[jump]}"
	LS_QEMU_CONSOLE=${f[console_txt]}
	LS_QEMU_RESULTS=${f[results_txt]}
	local accel
	accel=$(ls_accel)
	local -a mon=(-monitor none)
	# monwork: the loop uses the monitor while QEMU runs (blockstats, keys, device_del);
	# with --stall alone it is there only for the stall report
	if ((press)) || [[ -n $edit || -n $menu || -n $onres_re ]]; then
		monwork=1
	fi
	if ((monwork)) || [[ -n $stall ]]; then
		monitor=${f[sock]}
		# a unix socket's path is limited to 107 bytes
		((${#monitor} < 100)) || monitor=$(mktemp -u "${TMPDIR:-/tmp}/lsq-monitor.XXXXXX")
		mon=(-monitor "unix:$monitor,server=on,wait=off")
	fi
	local -a cmd=(qemu-system-x86_64 -machine pc -accel "$accel" -m "$mem" -smp "$smp")
	local code=$LS_OVMF_CODE vars=$LS_OVMF_VARS
	if [[ -n $sbvars ]]; then
		# the Secure Boot firmware keeps its variables in SMM: q35 with SMM, its flash
		# writable only from SMM
		[[ -f $sbvars ]] || {
			echo "ls_qemu: --secure-boot: no variable store $sbvars" >&2
			return 2
		}
		code=$LS_OVMF_SB_CODE vars=$sbvars
		cmd=(qemu-system-x86_64 -machine "q35,smm=on" -global "driver=cfi.pflash01,property=secure,value=on"
			-accel "$accel" -m "$mem" -smp "$smp")
	fi
	((nodefaults)) && cmd+=(-nodefaults -vga none)
	cmd+=(-display none "${mon[@]}" -no-reboot
		-serial "file:${f[console]}")
	if [[ -n $ressock ]]; then
		cmd+=(-chardev "socket,id=lsqres,path=${ressock//,/,,},server=on,wait=on" -serial chardev:lsqres)
	else
		cmd+=(-serial "file:${f[results]}")
	fi
	if ((uefi)); then
		cmd+=(-drive "if=pflash,format=raw,readonly=on,file=$code"
			-drive "if=pflash,format=raw,file=${f[vars]}")
	fi
	local msock=""
	if [[ -n $iso ]]; then
		# read-only: a boot never writes to the ISO (commas in -drive values are doubled)
		local src=${iso//,/,,}
		if [[ -n $medium ]]; then
			msock=$(mktemp -u "${TMPDIR:-/tmp}/lsq-medium.XXXXXX")
			src=nbd:unix:${msock//,/,,}
		fi
		if ((usb)); then
			# (with -kernel QEMU's own boot loader has bootindex 0)
			local bootindex=0
			[[ -z $kernel ]] || bootindex=1
			cmd+=(-device "qemu-xhci,id=xhci"
				-drive "if=none,id=stick,format=raw,readonly=on,file=$src"
				-device "usb-storage,bus=xhci.0,drive=stick,bootindex=$bootindex")
		else
			cmd+=(-drive "if=ide,index=2,media=cdrom,format=raw,readonly=on,file=$src" -boot d)
		fi
	fi
	[[ -n $kernel ]] && cmd+=(-kernel "$kernel")
	[[ -n $initrd ]] && cmd+=(-initrd "$initrd")
	[[ -n $append ]] && cmd+=(-append "$append")
	[[ -n $autorun ]] && cmd+=(-fw_cfg "name=opt/livesquash/autorun,file=$autorun")
	[[ -n $data ]] && cmd+=(-fw_cfg "name=opt/livesquash/data,file=$data")
	LS_QEMU_NDISKS=0
	if [[ -n $disklist ]]; then
		local opt serial img i=0 slot fn mf
		case $diskmode in
		readonly) opt=readonly=on ;;
		snapshot) opt=snapshot=on ;;
		*)
			echo "ls_qemu: --virtio-disks LIST readonly|snapshot (got '$diskmode')" >&2
			return 2
			;;
		esac
		while IFS=$'\t' read -r serial img _; do
			slot=$((3 + i / 8)) fn=$((i % 8)) mf=""
			((fn == 0)) && mf=",multifunction=on"
			cmd+=(-drive "file=${img//,/,,},if=none,id=d$i,format=raw,$opt"
				-device "virtio-blk-pci,id=vdisk$i,drive=d$i,serial=$serial,addr=$(printf '0x%x.%d' "$slot" "$fn")$mf")
			i=$((i + 1))
		done <"$disklist"
		LS_QEMU_NDISKS=$i
	fi
	cmd+=("${extra[@]}")
	# no network card unless the caller asks for one: QEMU's default e1000 would
	# otherwise interrupt every boot for nothing (see ls_tcg_int3)
	[[ " ${extra[*]} " == *" -netdev "* || " ${extra[*]} " == *" -nic "* || " ${extra[*]} " == *" -net "* ]] ||
		cmd+=(-nic none)
	printf '%q ' timeout --kill-after=10 "$tmo" "${cmd[@]}" >"${f[cmdline]}"
	echo >>"${f[cmdline]}"

	local start end rc attempt jump int3
	LS_QEMU_MEDIUM=""
	for attempt in 1 2; do
		rc=0
		rm -f "${f[console]}" "${f[console_txt]}" "${f[results]}" "${f[results_txt]}" "${f[qemu]}" \
			"${f[monitor_log]}" "${f[blockstats]}"
		[[ -z $monitor ]] || rm -f "$monitor"
		((uefi)) && cp "$vars" "${f[vars]}"
		if [[ -n $medium ]]; then
			ls_medium_start "$medium" "$iso" "$msock" "${f[medium_log]}" || return 2
		fi
		ls_qemu_run
		if [[ -n $medium ]]; then
			ls_medium_stop
			LS_QEMU_MEDIUM=$(sed -n 's/^# //p' "${f[medium_log]}" | tail -n 1)
		fi
		# a guest's clock may jump, not the guest: with TCG the guest reads the host's
		# TSC as is, and that TSC jumps by days when the host (a microVM, itself
		# booted with tsc=unstable) is restored from a snapshot; the guest's soft-lockup
		# watchdog then says "stuck for 461078s" in a boot QEMU may run for $tmo s.
		# So may TCG's multi-threaded emulation make the kernel trap on its own
		# breakpoint while it patches its code early in the boot (ls_tcg_int3).
		# Such a boot is run again, once, its console kept; any other hit still fails.
		jump=$(ls_clock_jump "${f[console_txt]}" "$tmo")
		int3=""
		[[ -n $jump || $accel != tcg ]] || int3=$(ls_tcg_int3 "${f[console_txt]}")
		[[ (-n $jump || -n $int3) && $attempt == 1 ]] || break
		cp "${f[console_txt]}" "${f[jump]}"
		if [[ -n $jump ]]; then
			echo "# $name: the guest's clock jumped (its console says '$jump' in a boot limited to $tmo s): a host clock jump, not a lockup; booting again (first console: ${f[jump]})"
		else
			echo "# $name: under TCG the guest's kernel hit its own breakpoint while patching its code ('$int3'): QEMU's race, not the guest's; booting again (first console: ${f[jump]})"
		fi
	done
	return 0
}

# ls_netserver_start DIR LOG [ARG...]: boot-tests/netserver.py serving DIR on
# 127.0.0.1 (QEMU's user network: 10.0.2.2), its requests in LOG, ARGs its
# options (--control, --link ...); sets LS_NETSERVER_PORT once it listens;
# ls_netserver_stop ends it
LS_NETSERVER_PID=""
ls_netserver_start() {
	local dir=$1 log=$2 i
	shift 2
	rm -f "$log.port"
	python3 "$LS_QEMU_HERE/../boot-tests/netserver.py" "$dir" "$log.port" "$log" "$@" &
	LS_NETSERVER_PID=$!
	for i in $(seq 50); do
		[[ -s $log.port ]] && break
		sleep 0.1
	done
	LS_NETSERVER_PORT=$(cat "$log.port" 2>/dev/null) || return 1
}
ls_netserver_stop() {
	[[ -n $LS_NETSERVER_PID ]] || return 0
	kill "$LS_NETSERVER_PID" 2>/dev/null || :
	wait "$LS_NETSERVER_PID" 2>/dev/null || :
	LS_NETSERVER_PID=""
}

# ls_medium_start MODEL ISO SOCKET LOG: (for ls_qemu --medium) iso/medium.py serving
# ISO on SOCKET, once the socket is there; ls_medium_stop ends it (its totals go to LOG)
LS_MEDIUM_PID=""
ls_medium_start() {
	local i
	rm -f "$3"
	python3 "$LS_QEMU_HERE/medium.py" "$1" "$2" "$3" "$4" &
	LS_MEDIUM_PID=$!
	LS_MEDIUM_SOCK=$3
	for ((i = 0; i < 100; i++)); do
		[[ -S $3 ]] && return 0
		kill -0 "$LS_MEDIUM_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "ls_qemu: iso/medium.py did not start" >&2
	ls_medium_stop
	return 1
}
ls_medium_stop() {
	[[ -n $LS_MEDIUM_PID ]] || return 0
	kill "$LS_MEDIUM_PID" 2>/dev/null || true
	wait "$LS_MEDIUM_PID" 2>/dev/null || true
	rm -f "$LS_MEDIUM_SOCK"
	LS_MEDIUM_PID=""
}

# ls_clock_jump CONSOLE SECONDS: the first soft-lockup report that says a CPU was
# stuck for longer than SECONDS (a time no guest of a boot that long can see)
ls_clock_jump() {
	{ grep -m1 -oE 'soft lockup - CPU#[0-9]+ stuck for [0-9]+s' "$1" || true; } |
		awk -v max="$2" '{ s = $NF; sub(/s$/, "", s) } s + 0 > max + 0 { print }'
}

# ls_tcg_int3 CONSOLE: the Oops TCG's multi-threaded emulation causes at boot: the
# kernel patches its code with text_poke_bp (a breakpoint byte first, then the rest,
# each step followed by a sync of every CPU), and a vCPU still running the old
# translation of the patched spot traps on the breakpoint after the kernel stopped
# expecting it ("Oops: int3" at a static key's site, before userspace: at
# "sched_clock: Marking stable", in an interrupt). Prints the Oops line or nothing.
ls_tcg_int3() {
	awk '/Run \/init as init process/ { exit } /Oops: int3: / { print; exit }' "$1" | sed 's/^\[ *[0-9.]*\] //'
}

# ls_qemu_run: one run of ls_qemu's command (its variables are in scope)
ls_qemu_run() {
	LS_QEMU_FOUND=0
	LS_QEMU_STOPPED=""
	LS_QEMU_STALLED=0
	LS_QEMU_MARK=""
	LS_QEMU_MARK_CONSOLE=""
	LS_QEMU_KEYS=0
	LS_QEMU_READ=""
	LS_QEMU_MENU=0
	LS_QEMU_ONRESULT_SENT=""
	start=$(ls_now)
	if [[ -z $waitfor && -z $stopon && -z $monitor && -z $stall && -z $mark && -z $cmark && -z $progress ]]; then
		timeout --kill-after=10 "$tmo" "${cmd[@]}" </dev/null >"${f[qemu]}" 2>&1 || rc=$?
	else
		timeout --kill-after=10 "$tmo" "${cmd[@]}" </dev/null >"${f[qemu]}" 2>&1 &
		# t: whole seconds since the start; the work below runs once a second (the loop
		# turns every 0.2 s with --mark). The monitor's work is due at next_stat
		# (blockstats, every 5 s, every second while waiting to type) and next_key
		# (Return every 3 s); --progress at next_progress; --stall counts from the
		# results file's last growth (grown_at)
		local pid=$! text="" t=0 t0=$SECONDS t_prev=-1 pressing=$press typing=0 last=-1 idle=0
		local next_stat=0 next_key=3 next_progress=5 tick=1 size=-1 grown="" grown_at=0 now menu_at=""
		[[ -z $edit ]] || typing=1
		[[ -z $mark && -z $cmark ]] || tick=0.2
		while kill -0 "$pid" 2>/dev/null; do
			sleep "$tick"
			ls_marks
			t=$((SECONDS - t0))
			((t != t_prev)) || continue
			t_prev=$t
			if ((monwork)); then
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
						echo "$t s: drives idle for $idle s after ${LS_QEMU_READ:-?} bytes: Tab, '$edit', Return" >>"${f[monitor_log]}"
						ls_type "$monitor" "$edit" >>"${f[monitor_log]}" 2>&1 || true
					fi
				fi
				# GRUB draws its menu once per terminal (serial, then the screen's) and a
				# key sent before the last drawing is lost (seen with UEFI under load):
				# the keys go once the countdown shows, which follows the last drawing
				# (in a menu without a countdown, 3 s after the menu first showed)
				if [[ -n $menu ]] && ((!LS_QEMU_MENU)) && [[ -f ${f[console]} && -z $menu_at ]] &&
					ls_strip "${f[console]}" | grep -qE 'Use the .* keys to select'; then
					menu_at=$t
				fi
				if [[ -n $menu_at ]] && ((!LS_QEMU_MENU)) && { ((t - menu_at >= 3)) ||
					ls_strip "${f[console]}" | grep -q 'executed automatically in'; }; then
					LS_QEMU_MENU=1
					ls_menu_entry "$monitor" "$menu" >>"${f[monitor_log]}" 2>&1 || LS_QEMU_MENU=0
					echo "$t s: menu entry $menu chosen ($LS_QEMU_MENU)" >>"${f[monitor_log]}"
				fi
				if [[ -n $onres_re && -z $LS_QEMU_ONRESULT_SENT ]] && grep -qaE "$onres_re" "${f[results]}" 2>/dev/null; then
					LS_QEMU_ONRESULT_SENT=$t
					echo "$t s: results match '$onres_re': $onres_cmd" >>"${f[monitor_log]}"
					ls_monitor "$monitor" "$onres_cmd" >>"${f[monitor_log]}" 2>&1 || true
				fi
				if ((pressing)); then
					if ((t > LS_PRESS_ENTER_MAX)) ||
						{ [[ -f ${f[console]} ]] && ls_strip "${f[console]}" | grep -qE 'Linux version [0-9]'; }; then
						pressing=0
						echo "$t s: stopped pressing Return ($LS_QEMU_KEYS sent)" >>"${f[monitor_log]}"
					elif ((t >= next_key)); then
						next_key=$((t + 3))
						if ls_monitor "$monitor" "sendkey ret" >/dev/null 2>&1; then
							LS_QEMU_KEYS=$((LS_QEMU_KEYS + 1))
							echo "$t s: sendkey ret" >>"${f[monitor_log]}"
						else
							echo "$t s: sendkey ret failed (no monitor yet?)" >>"${f[monitor_log]}"
						fi
					fi
				fi
			fi
			if [[ -n $progress ]] && ((t >= next_progress)); then
				next_progress=$((t + 5))
				"$progress"
			fi
			if [[ -n $stall ]]; then
				grown=$(stat -c %s "${f[results]}" 2>/dev/null || echo 0)
				if [[ $grown != "$size" ]]; then
					size=$grown
					grown_at=$t
				elif ((t - grown_at > stall)); then
					LS_QEMU_STALLED=1
					ls_stall_report
					kill "$pid" 2>/dev/null || true
					break
				fi
			fi
			[[ -n $waitfor || -n $stopon ]] || continue
			[[ -f ${f[console]} ]] || continue
			text=$(ls_strip "${f[console]}")
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
		if [[ -n $waitfor ]] && ((!LS_QEMU_FOUND)) && [[ -f ${f[console]} ]] &&
			ls_strip "${f[console]}" | grep -qE "$waitfor"; then
			LS_QEMU_FOUND=1
		fi
		ls_marks
		[[ -z $progress ]] || "$progress"
		[[ -z $monitor ]] || rm -f "$monitor"
	fi
	end=$(ls_now)
	LS_QEMU_RC=$rc
	LS_QEMU_SECONDS=$(ls_elapsed "$start" "$end")
	[[ -f ${f[console]} ]] || : >"${f[console]}"
	[[ -f ${f[results]} ]] || : >"${f[results]}"
	ls_strip "${f[console]}" >"${f[console_txt]}"
	if ((raw)); then
		tr -d '\r' <"${f[results]}" >"${f[results_txt]}"
	else
		ls_strip "${f[results]}" >"${f[results_txt]}"
	fi
}

# ls_marks: (in ls_qemu_run) stamp --mark and --mark-console once their line is there
ls_marks() {
	if [[ -n $mark && -z $LS_QEMU_MARK ]] && grep -qaE "$mark" "${f[results]}" 2>/dev/null; then
		LS_QEMU_MARK=$(awk -v a="$start" -v b="$(ls_now)" 'BEGIN { printf "%.2f", b - a }')
	fi
	if [[ -n $cmark && -z $LS_QEMU_MARK_CONSOLE ]] && grep -qaE "$cmark" "${f[console]}" 2>/dev/null; then
		LS_QEMU_MARK_CONSOLE=$(awk -v a="$start" -v b="$(ls_now)" 'BEGIN { printf "%.2f", b - a }')
	fi
}

# ls_blockstats: (in ls_qemu_run) sample `info blockstats` into blockstats.txt and
# LS_QEMU_READ (the sum of rd_bytes); a failed sample keeps the last one
ls_blockstats() {
	local out
	out=$(ls_monitor "$monitor" "info blockstats" 2>/dev/null) || return 0
	out=$(ls_strip /dev/stdin <<<"$out" | grep -E 'rd_bytes=' || true)
	[[ -n $out ]] || return 0
	printf '%s\n' "$out" >"${f[blockstats]}"
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

# ls_menu_entry SOCKET N: (in ls_qemu_run) GRUB's menu is on screen: Down N times
# (which stops its countdown), then Return
ls_menu_entry() {
	local i
	for ((i = 0; i < $2; i++)); do
		ls_monitor "$1" "sendkey down" || return 1
		LS_QEMU_KEYS=$((LS_QEMU_KEYS + 1))
	done
	ls_monitor "$1" "sendkey ret" || return 1
	LS_QEMU_KEYS=$((LS_QEMU_KEYS + 1))
}

# ls_debian_kver: the newest Debian kernel with modules here (linux-image-amd64), e.g.
# 6.1.0-57-amd64: the driver tests', the bench's and the fuzz comparison's "stock" kernel
ls_debian_kver() {
	find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' -printf '%f\n' | sort -V | tail -n 1
}

# ls_boot_order_sort ROOTFS: the boot-order profile shipped for that root tree
# (iso/iso.mk's BOOT_ORDER_SORT): iso/boot-order/debian.sort is trixie's,
# debian-bookworm.sort bookworm's (DEBIAN_SUITE)
ls_boot_order_sort() {
	local s=$TOP/iso/boot-order/$1
	[[ $1 == debian && ${DEBIAN_SUITE:-trixie} == bookworm ]] && s+=-bookworm
	echo "$s.sort"
}

# ls_debian_kernel: which Debian kernel the driver tests and the bench boot with its
# stock modules: the host's own (Debian 12's), or the one extracted under DEB_ROOT
# (boot/ and usr/lib/modules/; make kernel-tree-6.12 puts Debian 13's in
# build/trixie/debkernel/root). Sets LS_DEB_KVER, LS_DEB_KERNEL (DEB_KERNEL if set),
# LS_DEB_MODDIR and LS_OUR_MODULE (ours for it: make module for 6.1, make module-6.12
# for 6.12); returns 1 (and says why) if there is none.
ls_debian_kernel() {
	if [[ -n ${DEB_ROOT:-} ]]; then
		LS_DEB_KVER=$(find "$DEB_ROOT/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null |
			sort -V | tail -n 1)
		LS_DEB_MODDIR=$DEB_ROOT/usr/lib/modules/$LS_DEB_KVER
		LS_DEB_KERNEL=${DEB_KERNEL:-$DEB_ROOT/boot/vmlinuz-$LS_DEB_KVER}
	else
		LS_DEB_KVER=$(ls_debian_kver)
		LS_DEB_MODDIR=/lib/modules/$LS_DEB_KVER
		LS_DEB_KERNEL=${DEB_KERNEL:-/boot/vmlinuz-$LS_DEB_KVER}
	fi
	local series
	series=$(cut -d. -f1,2 <<<"$LS_DEB_KVER")
	LS_OUR_MODULE=$BUILD/module$([[ $series == 6.1 ]] || echo "-$series")/squashfs.ko
	if [[ -z $LS_DEB_KVER || ! -f $LS_DEB_KERNEL ]]; then
		echo "no Debian kernel${DEB_ROOT:+ in DEB_ROOT=$DEB_ROOT} (linux-image-amd64; make kernel-tree-6.12)" >&2
		return 1
	fi
}

# ls_debian_module NAME: the path of that kernel's module NAME (.ko or .ko.xz as
# Debian 13 ships them); empty if the kernel has it built in
ls_debian_module() {
	find "$LS_DEB_MODDIR/kernel" \( -name "$1.ko" -o -name "$1.ko.xz" \) -print -quit
}

# ls_module_copy SRC DEST: a module's bytes, uncompressed (busybox insmod reads .ko)
ls_module_copy() {
	if [[ $1 == *.xz ]]; then xz -dc "$1" >"$2"; else cp "$1" "$2"; fi
}

# ls_stall_report: what a stalled guest was doing (see --stall; ls_qemu_run's scope)
ls_stall_report() {
	local out=${f[monitor_log]%monitor.log}stall-registers.txt sock=$monitor
	ls_monitor "$sock" "info registers -a" >"$out" 2>&1 || true
	ls_monitor "$sock" "sendkey alt-sysrq-l" >/dev/null 2>&1 || true
	sleep 3
	ls_monitor "$sock" "sendkey alt-sysrq-w" >/dev/null 2>&1 || true
	sleep 5
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

# ls_busybox_stage DIR INIT: a fresh tree for a direct boot's initramfs in DIR:
# busybox-static with a link for each applet in /bin, INIT as /init,
# boot-tests/guest-lib.sh as /guest-lib.sh, /dev/console, and the empty mount
# points /proc /sys /mnt /tmp; the caller adds its own files and packs it
ls_busybox_stage() {
	local s=$1 a
	rm -rf "$s"
	mkdir -p "$s/bin" "$s/dev" "$s/proc" "$s/sys" "$s/mnt" "$s/tmp"
	cp /bin/busybox "$s/bin/busybox"
	for a in $(/bin/busybox --list); do
		[[ $a == busybox ]] || ln -s busybox "$s/bin/$a"
	done
	cp "$2" "$s/init"
	chmod 755 "$s/init"
	cp "$TOP/boot-tests/guest-lib.sh" "$s/guest-lib.sh"
	mknod "$s/dev/console" c 5 1
}

# print the lines of a stripped console that show a kernel problem
ls_console_problems() {
	grep -nE "$LS_CRASH_REGEX" "$1" | head -n 20 || true
}

# ls_grub_entry N GRUB_CFG: the kernel command line of menu entry N (0-based)
ls_grub_entry() {
	awk -v n="$1" '$1 == "linux" { if (i++ == n) { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit } }' "$2"
}

# ls_iso_boot_files ISO DIR: the ISO's kernel, initrd and GRUB menu in DIR (vmlinuz,
# initrd.img, grub.cfg) for a direct boot (--kernel, --initrd); LS_ISO_CMDLINE is the
# first menu entry's kernel command line without 'console=tty0' (these guests have
# only the serial console). Returns 1, with a line on stderr, when one is missing.
ls_iso_boot_files() {
	local iso=$1 dir=$2
	mkdir -p "$dir"
	rm -f "$dir/vmlinuz" "$dir/initrd.img" "$dir/grub.cfg"
	xorriso -osirrox on -indev "$iso" -extract /boot/vmlinuz "$dir/vmlinuz" \
		-extract /boot/initrd.img "$dir/initrd.img" -extract /boot/grub/grub.cfg "$dir/grub.cfg" \
		>"$dir/xorriso.log" 2>&1 || {
		echo "ls_iso_boot_files: xorriso could not extract /boot from $iso: $(tail -n 1 "$dir/xorriso.log")" >&2
		return 1
	}
	LS_ISO_CMDLINE=$(ls_grub_entry 0 "$dir/grub.cfg")
	LS_ISO_CMDLINE=${LS_ISO_CMDLINE//console=tty0 /}
	[[ $LS_ISO_CMDLINE == *root=live:* ]] || {
		echo "ls_iso_boot_files: no root=live: in $iso's /boot/grub/grub.cfg" >&2
		return 1
	}
}
