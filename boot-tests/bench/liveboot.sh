#!/bin/bash
# boot-tests/bench/liveboot.sh: workload 8 of the benchmark: live boot time of the Debian
# live ISO, QEMU start to a login prompt and to the first `systemctl is-system-running`
# answer, from the medium a user boots: a CD image file (cd), or a DVD or a USB 2.0
# stick as slow as real ones (dvd, usb: ls_qemu --medium, iso/medium.py serves the ISO
# over NBD and answers each read after the time the medium would take, seeks included).
#
# usage: bash boot-tests/bench/liveboot.sh
# Every boot is direct (-kernel/-initrd with the ISO's first GRUB entry's command line;
# GRUB would add the same 7-15 s under TCG to each), the medium holding the test ISO
# (boot-tests/testiso.sh: the product ISO with the test hook, in the product's boot
# order). The variants:
#   ours     our kernel (squashfs built in, ours), the ISO's initrd (dracut with our
#            90livesquash), the image as `make iso` packs it (for debian: its files in
#            the boot order of the shipped profile, iso/boot-order/debian.sort)
#   plain    the same with the image in mksquashfs's own order: the test ISO
#            remastered with its image repacked and no profile (`iso/remaster --run
#            true`), so ours against plain is what the boot order gains
#   dracut   peer (a): our kernel with an initrd of dracut's dmsquash-live instead of
#            ours (boot-tests/dmsquash-initrd.sh; rd.live.overlay.overlayfs=1), the
#            plain image
#   debian   peer (b), what a user boots otherwise: Debian's own kernel (the newest
#            /boot/vmlinuz-*-amd64 here) with its stock squashfs.ko, and dracut's
#            dmsquash-live initrd for it (dracut --no-hostonly: every storage driver as
#            a module); the plain image (packed the usual way: mksquashfs -comp xz, in
#            its own order)
# "login" is the moment the console shows the serial getty's "login: "; "ready" the
# moment the test hook (a unit after getty.target) has its first `systemctl
# is-system-running` answer and writes it to the second serial port (ls_qemu
# --mark-console and --mark, looked for every 0.2 s). Boots alternate variants in
# every round. The kernel and initrd come from QEMU, not from the medium; a real boot
# reads them first, through the boot loader: that time, the medium model's cost of the
# two files (iso/medium.py --load: a seek each, 64 KiB requests; ours 17 MB, peer (b)
# 40 MB with its 31 MB initrd), is the "load" column, and the times and ratios the
# report gives as the boot's are QEMU's time plus it (the table shows both).
# BENCH_LIVE_MODES=yes adds the cd medium and our module's boot modes on it, each with the same
# CD and initrd: ram (rd.live.ram: the image copied to RAM before the root is mounted),
# ram-bg (rd.live.ram=background: copied behind the boot; its copy time from the
# kernel log is printed too) and persist (rd.live.overlay=LABEL=LSPERSIST on an empty
# ext4 virtio disk).
# The network media net100 and net1000 (in BENCH_LIVE_MEDIA by default): the image over
# QEMU's user network from boot-tests/netserver.py on 127.0.0.1, all its connections
# sharing one link of 100 Mbit/s or 1 Gbit/s (--link; divided by BENCH_LIVE_SCALE), the
# image the test ISO's (its network bundle by iso/mknetboot); there the variants are
#   ours     root=live:http://... with our network initramfs (make initramfs-net),
#            download mode: the image into RAM, checked, then mounted
#   stream   the same with rd.live.net=stream: mounted at once over NBD, copied behind
#   dracut   dracut 106's dmsquash-live with its livenet module (downloads it too)
# and "load" is the link's time for the kernel and initrd (a network boot loader
# fetches them over the same link).
# Output: a table, build/bench/run-live/live.{tsv,json}, logs per boot
# (MEDIUM-VARIANT-ROUND.*: console, out, medium.log: every read of the medium and its cost).
# Environment: LIVE_ISO (default build/livesquash-debian.iso), BENCH_LIVE_MEDIA
# ("dvd usb"; also cd), BENCH_LIVE_VARIANTS ("ours plain dracut debian"),
# BENCH_LIVE_ROUNDS (2), BENCH_LIVE_SCALE (1: the medium's costs times this; the run
# prints the guests' CPU slowdown against this host, the factor that restores real
# proportions between CPU and medium), BENCH_LIVE_MEM (1024), BENCH_LIVE_SMP (2),
# BENCH_LIVE_TIMEOUT (seconds per boot, 1200), BENCH_LIVE_APPEND (words added to every
# boot's kernel command line, e.g. init_on_alloc=0, see README.md), ACCEL. QEMU runs
# through ls_qemu (iso/qemu-lib.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
BUILD=${BUILD:-$TOP/build}
# shellcheck source=SCRIPTDIR/../../iso/qemu-lib.sh disable=SC1091 # (followed with -x)
source "$TOP/iso/qemu-lib.sh"
ISO=${LIVE_ISO:-$BUILD/livesquash-debian.iso}
ROUNDS=${BENCH_LIVE_ROUNDS:-2}
MEM=${BENCH_LIVE_MEM:-1024}
SMP=${BENCH_LIVE_SMP:-2}
TMO=${BENCH_LIVE_TIMEOUT:-1200}
read -ra media <<<"${BENCH_LIVE_MEDIA:-dvd usb net100 net1000}"
read -ra variants <<<"${BENCH_LIVE_VARIANTS:-ours plain dracut debian}"
# the medium's costs times BENCH_LIVE_SCALE (see iso/medium.py): 1, or the TCG slowdown
SCALE=${BENCH_LIVE_SCALE:-1}
[[ $SCALE =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "liveboot: BENCH_LIVE_SCALE: a number (got '$SCALE')" >&2; exit 1; }
[[ $SCALE == 1 ]] && SCALE="" || SCALE=x$SCALE
R=$BUILD/bench/run-live
C=$BUILD/bench/live-cache
rm -rf "$R"
mkdir -p "$R" "$C"
die() {
	echo "liveboot: $*" >&2
	exit 1
}
[[ -f $ISO ]] || die "no $ISO: run 'make iso ROOTFS=debian'"
for m in "${media[@]}"; do
	[[ $m =~ ^(cd|dvd|usb|net100|net1000)$ ]] || die "BENCH_LIVE_MEDIA: cd, dvd, usb, net100 or net1000 (got '$m')"
done
for v in "${variants[@]}"; do
	[[ $v =~ ^(ours|plain|dracut|debian)$ ]] || die "BENCH_LIVE_VARIANTS: ours plain dracut debian (got '$v')"
done
if [[ ${BENCH_LIVE_MODES:-no} == yes ]]; then
	variants+=(ram ram-bg persist)
	[[ " ${media[*]} " == *" cd "* ]] || media+=(cd)
fi
has() { [[ " ${variants[*]} " == *" $1 "* ]]; }
net=''
[[ " ${media[*]} " == *" net"* ]] && net=1
if [[ -n $net ]] && has ours; then
	variants+=(stream)
fi
accel=$(ls_accel)

# the ISO with the test hook (the product has none), its kernel, initrd and command line
TEST=$C/test-$(basename "$ISO")
bash "$TOP/boot-tests/testiso.sh" "$ISO" "$TEST" "$(ls_boot_order_sort debian)" >"$R/testiso.log" 2>&1 ||
	die "cannot add the test hook to $ISO: $(tail -n 1 "$R/testiso.log")"
ls_iso_boot_files "$TEST" "$R/boot" || die "cannot boot $TEST directly"
cmdline="$LS_ISO_CMDLINE${BENCH_LIVE_APPEND:+ $BENCH_LIVE_APPEND}"

# plain: the test ISO with its image repacked in mksquashfs's own order, also what the
# peers boot (cached under a key of the test ISO and the remaster)
PLAIN=""
if has plain || has dracut || has debian; then
	key=$(cat "$TEST.key" "$TOP/iso/remaster" | sha256sum | cut -c1-16)
	PLAIN=$C/plain-$(basename "$ISO")
	if [[ ! -f $PLAIN || $(cat "$PLAIN.key" 2>/dev/null) != "$key" ]]; then
		echo "# remastering $TEST with its image repacked in mksquashfs's order"
		rm -f "$PLAIN" "$PLAIN.key"
		bash "$TOP/iso/remaster" --run true "$TEST" "$PLAIN" >"$R/remaster.log" 2>&1 ||
			die "iso/remaster failed: $(tail -n 2 "$R/remaster.log")"
		echo "$key" >"$PLAIN.key"
	fi
fi
# the dmsquash-live initrds: for our kernel (peer a), for Debian's (peer b)
peer="" peerb="" dkver=""
if has dracut; then
	peer=$(bash "$TOP/boot-tests/dmsquash-initrd.sh" "$C") || die "no dmsquash-live initrd"
fi
if has debian; then
	dkver=$(ls_debian_kver)
	[[ -n $dkver && -f /boot/vmlinuz-$dkver ]] || die "no Debian kernel here (linux-image-amd64: make deps)"
	peerb=$(bash "$TOP/boot-tests/dmsquash-initrd.sh" "$C" "$dkver") || die "no dmsquash-live initrd for $dkver"
fi

# the network media: the test ISO's bundle, our network initramfs, dmsquash-live's
# livenet initrd
NETINITRD=$BUILD/initramfs-net/initrd.img livenet=''
if [[ -n $net ]]; then
	[[ -f $NETINITRD ]] || die "no $NETINITRD: run 'make initramfs-net'"
	bash "$TOP/iso/mknetboot" --force "$TEST" "$NETINITRD" "$R/netboot" >"$R/mknetboot.log" 2>&1 ||
		die "iso/mknetboot failed: $(tail -n 2 "$R/mknetboot.log")"
	if has dracut; then
		livenet=$(bash "$TOP/boot-tests/dmsquash-initrd.sh" --livenet "$C") || die "no livenet initrd"
	fi
fi
trap ls_netserver_stop EXIT

cat >"$R/autorun" <<'EOF'
#!/bin/sh
# benchmark hook (a unit after getty.target): the first is-system-running answer, how
# the root was mounted
state=$(systemctl is-system-running 2>&1)
{
	echo "@@ READY uptime=$(cut -d ' ' -f 1 /proc/uptime) state=$state"
	echo "@@ ROOT $(grep -E ' / | /run/' /proc/mounts | grep -E 'overlay|squashfs|iso9660' | tr '\n' '|')"
	echo "@@ KERNEL $(uname -r), squashfs module: $(grep -c '^squashfs ' /proc/modules), livesquash lines: $(dmesg | grep -c livesquash)"
	echo "@@ CMDLINE $(cat /proc/cmdline)"
} >/dev/ttyS1
# the host stamps the getty's prompt on the console: stay up until it is there
for i in $(seq 60); do
	systemctl -q is-active serial-getty@ttyS0.service && break
	sleep 1
done
sleep 5
# the guest's CPU speed, for the TCG slowdown (the host runs the same); a first run
# reads the programs from the medium, the second is timed
seq 1 1000 | gzip -6 | wc -c >/dev/null
t0=$(cut -d ' ' -f 1 /proc/uptime)
seq 1 1000000 | gzip -6 | wc -c >/dev/null
echo "@@ CPU $(awk -v a="$t0" -v b="$(cut -d ' ' -f 1 /proc/uptime)" 'BEGIN { print b - a }')" >/dev/ttyS1
sync
echo o >/proc/sysrq-trigger
sleep 20
poweroff -f
EOF

# boot MEDIUM VARIANT ROUND: prints "login ready guest-uptime-at-ready load" (seconds
# from QEMU's start; login "-" if the console never showed one; load: the medium's time
# for the boot loader's reads of the kernel and initrd, iso/medium.py --load) or fails.
# Files: MEDIUM-VARIANT-ROUND.{console,out,qemu,cmdline,medium.log}
boot() {
	local m=$1 v=$2 r=$3 base=$R/$1-$2-$3 append=$cmdline kernel=$R/boot/vmlinuz
	local initrd=$R/boot/initrd.img iso=$TEST
	local -a disk=()
	case $v in
	plain) iso=$PLAIN ;; # (the remaster changed the image only)
	dracut) append="$cmdline rd.live.overlay.overlayfs=1" initrd=$peer iso=$PLAIN ;;
	debian)
		append="$cmdline rd.live.overlay.overlayfs=1 rd.driver.pre=qemu_fw_cfg"
		kernel=/boot/vmlinuz-$dkver initrd=$peerb iso=$PLAIN
		;;
	ram) append="$cmdline rd.live.ram" ;;
	ram-bg) append="$cmdline rd.live.ram=background" ;;
	persist)
		append="$cmdline rd.live.overlay=LABEL=LSPERSIST"
		rm -f "$R/persist.img"
		truncate -s 256M "$R/persist.img"
		mkfs.ext4 -q -L LSPERSIST "$R/persist.img" >&2
		disk=(-drive "if=none,id=persist,format=raw,file=$R/persist.img" -device "virtio-blk-pci,drive=persist")
		;;
	esac
	local -a medium=(--iso "$iso")
	local load=0
	case $m in
	dvd) medium+=(--medium "dvd$SCALE") ;;
	usb) medium+=(--usb --medium "usb$SCALE") ;;
	net*)
		# the link's bytes a second, the image's URL on it, each variant's initrd
		local rate
		rate=$(awk -v b="${m#net}" -v s="${SCALE#x}" 'BEGIN { if (s == "") s = 1; printf "%d", b * 125000 / s }')
		# the bundle's server, one link of that speed for all its connections
		ls_netserver_start "$R/netboot" "$base.net.log" --link "$rate" || return 1
		append="root=live:http://10.0.2.2:$LS_NETSERVER_PORT/LiveOS/squashfs.img ip=dhcp"
		local w
		for w in $cmdline; do
			[[ $w == root=* ]] || append+=" $w"
		done
		case $v in
		ours) initrd=$NETINITRD ;;
		stream) initrd=$NETINITRD append+=" rd.live.net=stream" ;;
		dracut) initrd=$livenet ;;
		esac
		medium=(-- -netdev "user,id=n0" -device "virtio-net-pci,netdev=n0")
		load=$(awk -v a="$(stat -c %s "$kernel")" -v b="$(stat -c %s "$initrd")" -v r="$rate" 'BEGIN { printf "%.1f", (a + b) / r }')
		;;
	esac
	if [[ $m == dvd || $m == usb ]]; then
		load=$(python3 "$TOP/iso/medium.py" --load "$m$SCALE" "$kernel" "$initrd") || return 1
	fi
	[[ ${#disk[@]} -eq 0 ]] || disk=(-- "${disk[@]}")
	ls_qemu "$m-$v-$r" "$TMO" --files "$base" --mem "$MEM" --smp "$SMP" \
		--kernel "$kernel" --initrd "$initrd" --append "$append panic=-1" \
		--autorun "$R/autorun" --mark '^@@ READY' --mark-console 'login: ' "${medium[@]}" "${disk[@]}" >&2
	ls_netserver_stop
	[[ -n $LS_QEMU_MARK ]] || return 1
	echo "${LS_QEMU_MARK_CONSOLE:--} $LS_QEMU_MARK $(grep -a -m1 '^@@ READY' "$base.out" | sed 's/.*uptime=\([0-9.]*\).*/\1/') $load"
}

# the host's time for the guests' CPU test: the guest's time over it is the slowdown
t0=$(ls_now)
seq 1 1000000 | gzip -6 | wc -c >/dev/null
host_cpu=$(ls_elapsed "$t0" "$(ls_now)")
echo "# live boot: $ISO, accel=$accel, -smp $SMP (host $(nproc) CPUs), ${MEM} MiB, $ROUNDS rounds, media: ${media[*]}${SCALE:+, medium costs $SCALE}"
echo "# cmdline (ours): $cmdline"
[[ -z $peerb ]] || echo "# peer (b): /boot/vmlinuz-$dkver with $(basename "$peerb") ($(du -h "$peerb" | cut -f1))"
printf 'medium\tvariant\tround\tload\tlogin\tready\tguest_uptime\tstate\treads\tseeks\tmedium_s\tcpu_s\troot\n' >"$R/live.tsv"
fails=0
for r in $(seq 1 "$ROUNDS"); do
	for m in "${media[@]}"; do
		for v in "${variants[@]}"; do
			# the boot modes only from the CD image; on the network ours, stream and
			# dracut (livenet), stream nowhere else
			[[ $m == cd || ! $v =~ ^(ram|ram-bg|persist)$ ]] || continue
			if [[ $m == net* ]]; then
				[[ $v =~ ^(ours|stream|dracut)$ ]] || continue
			else
				[[ $v != stream ]] || continue
			fi
			base=$R/$m-$v-$r
			if ! res=$(boot "$m" "$v" "$r"); then
				fails=$((fails + 1))
				echo "# round $r $m $v: no ready line within $TMO s (see $base.console.txt)"
				continue
			fi
			read -r login ready up load <<<"$res"
			root=$(grep -a -m1 '^@@ ROOT' "$base.out" | cut -c9- | tr -d '\r\t')
			state=$(grep -a -m1 '^@@ READY' "$base.out" | sed -n 's/.*state=\([a-z-]*\).*/\1/p')
			reads="" seeks="" ms=""
			if [[ -f $base.medium.log ]]; then
				read -r reads seeks ms < <(sed -n 's/^# reads \([0-9]*\) bytes [0-9]* seeks \([0-9]*\) medium-seconds [0-9.]* busy-seconds \([0-9.]*\)/\1 \2 \3/p' "$base.medium.log") || true
			fi
			cpu=$(grep -a -m1 '^@@ CPU' "$base.out" | cut -d ' ' -f 3 | tr -d '\r')
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$v" "$r" "$load" "$login" "$ready" "$up" \
				"${state:--}" "${reads:--}" "${seeks:--}" "${ms:--}" "${cpu:--}" "$root" >>"$R/live.tsv"
			echo "# round $r $m $v: login $login s, ready $ready s (${state:-?}; guest uptime $up s)${reads:+; medium: $reads reads, $seeks seeks, $ms s busy}; kernel and initrd load $load s"
			grep -a -ohE 'livesquash: (LiveOS/squashfs.img is in RAM|background copy to RAM done|downloaded http).*' "$base.console" |
				tr -d '\r' | head -n 1 | sed 's/^/#   /' || true
			# a kernel report fails the run (Debian's own kernel's too: it is shown)
			bad=$(ls_console_problems "$base.console.txt" | head -n 1)
			if [[ -n $bad ]]; then
				fails=$((fails + 1))
				echo "#   console: $bad"
			fi
		done
	done
done
python3 "$here/livereport.py" "$R" "$accel" "$host_cpu" "${SCALE#x}"
echo "# files: $R/live.tsv live.json, per boot: MEDIUM-VARIANT-ROUND.{console,out,medium.log}"
[[ $fails -eq 0 ]]
