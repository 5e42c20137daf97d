#!/bin/bash
# iso/accel.sh: print the QEMU accelerator to use, `kvm` or `tcg` (for `make run`,
# iso/qemu-lib.sh's ls_qemu and so iso/check-iso and every boot test).
#
# ACCEL=kvm|tcg forces the answer. ACCEL=auto (the default) probes once: it boots a
# kernel with -accel kvm under `timeout 20` and answers kvm only if a kernel console
# line ("Linux version") reaches the serial console. The answer is cached in
# $BUILD/accel (delete it to probe again). On nested "PVM" /dev/kvm a Linux kernel
# hangs right after decompression, so the probe answers tcg there.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(dirname "$here")}
BUILD=${BUILD:-$TOP/build}
ACCEL=${ACCEL:-auto}

case $ACCEL in
kvm | tcg)
	echo "$ACCEL"
	exit 0
	;;
auto) ;;
*)
	echo "accel.sh: ACCEL must be auto, kvm or tcg (got '$ACCEL')" >&2
	exit 2
	;;
esac

cache=$BUILD/accel
if [[ -s $cache ]]; then
	answer=$(<"$cache")
	if [[ $answer == kvm || $answer == tcg ]]; then
		echo "$answer"
		exit 0
	fi
fi

probe() {
	if [[ ! -c /dev/kvm || ! -w /dev/kvm ]]; then
		echo "accel.sh: /dev/kvm is not usable" >&2
		return 1
	fi
	# any Linux kernel will do: ours if built, else the host's stock one
	local kernel=""
	local k
	for k in "${LS_KERNEL:-}" "${KERNEL:-}" "$BUILD/kobj/arch/x86/boot/bzImage" /boot/vmlinuz-*; do
		if [[ -n $k && -f $k && -r $k ]]; then
			kernel=$k
			break
		fi
	done
	if [[ -z $kernel ]]; then
		echo "accel.sh: no kernel to probe KVM with" >&2
		return 1
	fi
	local tmp
	tmp=$(mktemp -d)
	# a copy: the lead may be relinking bzImage right now
	cp "$kernel" "$tmp/kernel"
	timeout 20 qemu-system-x86_64 -accel kvm -m 256 -smp 1 -no-reboot \
		-display none -monitor none -serial "file:$tmp/console.log" \
		-kernel "$tmp/kernel" -append "console=ttyS0,115200 panic=-1" \
		</dev/null >"$tmp/qemu.log" 2>&1 || true
	local rc=1
	if grep -q 'Linux version' "$tmp/console.log" 2>/dev/null; then
		rc=0
	else
		echo "accel.sh: no kernel console line within 20 s under KVM (see qemu: $(head -c 200 "$tmp/qemu.log" | tr '\n' ' '))" >&2
	fi
	rm -rf "$tmp"
	return "$rc"
}

if probe; then
	answer=kvm
else
	answer=tcg
fi
mkdir -p "$BUILD"
echo "$answer" >"$cache"
echo "accel.sh: probed: $answer (cached in $cache)" >&2
echo "$answer"
