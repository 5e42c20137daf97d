#!/bin/sh
# boot-tests/guest-lib.sh: what the guest sides of the tests share. POSIX sh (busybox
# ash, dash), sourced with `.`: by guest.sh and autorun.sh in a booted live system
# (run.sh puts it in the test data tar), and by the /init of the driver-test and
# benchmark initramfs images (driver/run.sh and bench/bench.sh copy it to
# /guest-lib.sh). Functions are named gl_*, variables GL_* and _gl_*.
#
# Results go to fd 3 (gl_open), which QEMU's second serial port writes to a file on
# the host, apart from the kernel's console: "@@ ..." lines (gl_say; the driver and
# bench guests) or unnumbered TAP (gl_ok, gl_notok, gl_diag, gl_diagfile, gl_check;
# guest.sh), which run.sh numbers.

# gl_open: fd 3 is the results channel: /dev/ttyS1 in raw mode, or /dev/console
# where there is no second serial port
gl_open() {
	if [ -c /dev/ttyS1 ]; then
		stty -F /dev/ttyS1 raw -echo 2>/dev/null
		exec 3>/dev/ttyS1
	else
		exec 3>/dev/console
	fi
}

# gl_say WORDS...: an "@@ WORDS..." result line
gl_say() { echo "@@ $*" >&3; }

# TAP without numbers: gl_ok / gl_notok DESCRIPTION, gl_diag TEXT ("# TEXT"),
# gl_diagfile FILE (its first 20 lines, indented as diagnostics)
gl_ok() { echo "ok - $*" >&3; }
gl_notok() { echo "not ok - $*" >&3; }
gl_diag() { echo "# $*" >&3; }
gl_diagfile() { head -n 20 "$1" | sed 's/^/#   /' >&3; }

# gl_check DESCRIPTION COMMAND...: ok if the command succeeds; else not ok, with its
# output (kept in $TMPDIR/check.out) as diagnostics
gl_check() {
	_gl_desc=$1
	shift
	if "$@" >"${TMPDIR:-/tmp}/check.out" 2>&1; then
		gl_ok "$_gl_desc"
	else
		gl_notok "$_gl_desc"
		gl_diagfile "${TMPDIR:-/tmp}/check.out"
	fi
}

# gl_arg NAME [PREFIX]: the value of each PREFIXNAME=VALUE word of the kernel command
# line, one a line (nothing if there is none)
gl_arg() {
	read -r _gl_cmdline </proc/cmdline
	for _gl_w in $_gl_cmdline; do
		case $_gl_w in "${2:-}$1="*) echo "${_gl_w#*=}" ;; esac
	done
}

# gl_uptime: seconds since boot (/proc/uptime, two decimals)
gl_uptime() {
	read -r _gl_up _ </proc/uptime
	echo "$_gl_up"
}
# gl_t0; ...; gl_secs: seconds since gl_t0, one decimal (a step's duration)
gl_t0() { read -r GL_T0 _ </proc/uptime; }
gl_secs() {
	read -r _gl_t1 _ </proc/uptime
	awk -v a="$GL_T0" -v b="$_gl_t1" 'BEGIN { printf "%.1f", b - a }'
}

# gl_first N FILE: FILE's first N lines as one line (newlines as "|", tabs as
# spaces), cut at GL_FIRST_WIDTH characters (default 400)
gl_first() { head -n "$1" "$2" | tr '\n\t' '| ' | cut -c1-"${GL_FIRST_WIDTH:-400}"; }

# gl_wait_disks N [TIMEOUT]: wait until /sys/block has N virtio disks (vd*), at most
# TIMEOUT seconds (default 60); then print "SERIAL NAME" for each disk there is,
# sorted (the host names each disk by its virtio serial)
gl_wait_disks() {
	_gl_i=0
	while [ "$(_gl_ndisks)" -lt "$1" ] && [ "$_gl_i" -lt $((${2:-60} * 10)) ]; do
		sleep 0.1
		_gl_i=$((_gl_i + 1))
	done
	for _gl_b in /sys/block/vd*; do
		[ -e "$_gl_b" ] && echo "$(cat "$_gl_b/serial") ${_gl_b##*/}"
	done | sort
}
_gl_ndisks() {
	_gl_n=0
	for _gl_b in /sys/block/vd*; do [ -e "$_gl_b" ] && _gl_n=$((_gl_n + 1)); done
	echo "$_gl_n"
}

# gl_rmmod MODULE WORDS...: unload MODULE, then say "RMMOD WORDS rc=N" and the
# first line of rmmod's errors
gl_rmmod() {
	_gl_mod=$1
	shift
	_gl_rc=0
	rmmod "$_gl_mod" 2>/tmp/err || _gl_rc=$?
	gl_say "RMMOD $* rc=$_gl_rc $(gl_first 1 /tmp/err)"
}

# gl_kmsg TEXT: a line in the kernel log (and so on the console), e.g. a marker the
# host cuts the console at
gl_kmsg() { echo "$*" >/dev/kmsg; }

# gl_poweroff: sync, give the serial ports a second, then power off through sysrq o
# (the kernel's own power-off: works as PID 1 and under any init); poweroff -f if
# the machine still runs 20 s later
gl_poweroff() {
	sync
	sleep 1
	echo o >/proc/sysrq-trigger
	sleep 20
	poweroff -f
}
