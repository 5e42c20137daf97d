#!/bin/bash
# Boot a live ISO in QEMU, headless, console on this terminal.
# usage: run.sh ISO FIRMWARE(bios|uefi) MEM ACCEL(auto|kvm|tcg) BUILD_DIR [extra qemu args...]
set -euo pipefail

usage="usage: run.sh ISO bios|uefi MEM auto|kvm|tcg BUILD_DIR [qemu args...]"
iso=${1:?$usage}
firmware=${2:?$usage}
mem=${3:?$usage}
accel=${4:?$usage}
build=${5:?$usage}
shift 5
top=$(cd "$(dirname "$0")/.." && pwd)

die() { echo "run: $*" >&2; exit 1; }
[[ -f $iso ]] || die "$iso missing: run 'make iso'"
command -v qemu-system-x86_64 > /dev/null || die "qemu-system-x86_64 missing: run 'make deps'"

case $accel in
    kvm | tcg) ;;
    auto)
        if [[ -f $top/iso/accel.sh ]]; then
            accel=$(bash "$top/iso/accel.sh") || accel=tcg
        else
            accel=tcg
        fi
        ;;
    *) die "ACCEL must be auto, kvm or tcg, not '$accel'" ;;
esac
[[ $accel == kvm || $accel == tcg ]] || die "iso/accel.sh printed '$accel', not kvm or tcg"

fw=()
case $firmware in
    bios) ;;
    uefi)
        code=/usr/share/OVMF/OVMF_CODE_4M.fd
        vars=/usr/share/OVMF/OVMF_VARS_4M.fd
        [[ -f $code && -f $vars ]] || die "OVMF missing: run 'make deps' (package ovmf)"
        # a fresh writable copy of the variable store for each run
        myvars=$build/OVMF_VARS_4M-$(basename "$iso" .iso).fd
        mkdir -p "$build"
        cp "$vars" "$myvars"
        fw=(-drive "if=pflash,format=raw,unit=0,readonly=on,file=$code"
            -drive "if=pflash,format=raw,unit=1,file=$myvars")
        ;;
    *) die "FIRMWARE must be bios or uefi, not '$firmware'" ;;
esac

echo "run: $iso, $firmware, ${mem} MiB, $accel (quit: Ctrl-A X)"
exec qemu-system-x86_64 -machine pc -accel "$accel" -m "$mem" -smp 2 \
    "${fw[@]}" \
    -drive "file=$iso,media=cdrom,if=ide,index=2,readonly=on" \
    -boot d -nographic -no-reboot "$@"
