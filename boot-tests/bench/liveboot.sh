#!/bin/bash
# boot-tests/bench/liveboot.sh: workload 8 of the benchmark: live boot time, QEMU start to
# a root shell, of our live ISO with our dracut module (its own initrd) versus the very
# same ISO, kernel and root image booted through dracut's own dmsquash-live.
#
# usage: bash boot-tests/bench/liveboot.sh
# Both boots take the kernel (our bzImage, squashfs built in: the driver is ours in both)
# and the command line from the ISO, and boot it with -kernel/-initrd with the ISO as a
# CD-ROM (no GRUB: its 7-15 s under TCG would be the same for both). The two initrds
# differ only in the live module: ours is the ISO's /boot/initrd.img (dracut -m "base
# udev-rules livesquash"); the peer is dracut -m "base udev-rules dmsquash-live", also
# without systemd and kernel modules, zstd, booted with rd.live.overlay.overlayfs=1.
# "Root shell" = the test ISO's hook (boot-tests/testiso.sh: a unit at the end
# of boot) runs our fw_cfg script, which writes a line to the second serial port; the
# host stamps the moment that line appears. Boots alternate (ours, dracut, ours, ...).
# BENCH_LIVE_MODES=yes adds our module's boot modes, each with the same CD and initrd:
# ram (rd.live.ram: the image copied to RAM before the root is mounted), ram-bg
# (rd.live.ram=background: copied behind the boot; its copy time from the kernel log is
# printed too) and persist (rd.live.overlay=LABEL=LSPERSIST on an empty ext4 virtio disk).
# Output: a table, build/bench/run-live/live.{tsv,json}, logs per boot.
# Environment: LIVE_ISO (default build/livesquash-debian.iso), BENCH_LIVE_ROUNDS (3),
# BENCH_LIVE_MEM (1024), BENCH_LIVE_SMP (2), BENCH_LIVE_TIMEOUT (seconds per boot, 600),
# ACCEL. QEMU runs through ls_qemu (iso/qemu-lib.sh; --mark stamps the line).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
BUILD=${BUILD:-$TOP/build}
# shellcheck source=SCRIPTDIR/../../iso/qemu-lib.sh disable=SC1091 # (followed with -x)
source "$TOP/iso/qemu-lib.sh"
ISO=${LIVE_ISO:-$BUILD/livesquash-debian.iso}
ROUNDS=${BENCH_LIVE_ROUNDS:-3}
MEM=${BENCH_LIVE_MEM:-1024}
SMP=${BENCH_LIVE_SMP:-2}
TMO=${BENCH_LIVE_TIMEOUT:-600}
R=$BUILD/bench/run-live
C=$BUILD/bench/live-cache
rm -rf "$R"
mkdir -p "$R" "$C"
die() {
	echo "liveboot: $*" >&2
	exit 1
}
[[ -f $ISO ]] || die "no $ISO: run 'make iso ROOTFS=debian'"
accel=$(ls_accel)

# the ISO with the test hook (the product has none), its kernel, initrd and command line
bash "$TOP/boot-tests/testiso.sh" "$ISO" "$C/test-$(basename "$ISO")" >"$R/testiso.log" 2>&1 ||
	die "cannot add the test hook to $ISO: $(tail -n 1 "$R/testiso.log")"
cp "$C/test-$(basename "$ISO")" "$R/live.iso"
xorriso -osirrox on -indev "$R/live.iso" -extract /boot/vmlinuz "$R/vmlinuz" \
	-extract /boot/initrd.img "$R/initrd-ours.img" -extract /boot/grub/grub.cfg "$R/grub.cfg" \
	>"$R/xorriso.log" 2>&1 || die "xorriso could not extract /boot from $ISO"
cmdline=$(awk '$1 == "linux" { $1 = ""; $2 = ""; print; exit }' "$R/grub.cfg" | sed 's/^ *//')
[[ $cmdline == *root=live:* ]] || die "no root=live: in $R/grub.cfg"
# the serial console is ttyS0 for both; drop the VGA console (there is none)
cmdline=${cmdline//console=tty0 /}

# the dmsquash-live initrd, cached
peer=$(bash "$TOP/boot-tests/dmsquash-initrd.sh" "$C") || die "no dmsquash-live initrd"
cp "$peer" "$R/initrd-dracut.img"

cat >"$R/autorun" <<'EOF'
#!/bin/sh
# benchmark hook: report that a root shell runs, and how the root was mounted
{
	echo "@@ READY uptime=$(cut -d ' ' -f 1 /proc/uptime) uid=$(id -u)"
	echo "@@ ROOT $(grep -E ' / | /run/' /proc/mounts | grep -E 'overlay|squashfs|iso9660' | tr '\n' '|')"
	echo "@@ CMDLINE $(cat /proc/cmdline)"
	echo "@@ DMESG-LIVESQUASH $(dmesg | grep -c livesquash)"
} >/dev/ttyS1
sync
echo o >/proc/sysrq-trigger
sleep 20
poweroff -f
EOF

# boot VARIANT ROUND: prints "seconds-to-ready guest-uptime-at-ready" or fails; the
# seconds are from QEMU's start to the moment the @@ READY line showed up on the second
# serial port (ls_qemu --mark looks every 0.2 s). Files: VARIANT-ROUND.{console,out,qemu}
boot() {
	local v=$1 r=$2 base=$R/$1-$2 append=$cmdline initrd=$R/initrd-ours.img
	local -a disk=()
	case $v in
	dracut) append="$cmdline rd.live.overlay.overlayfs=1" initrd=$R/initrd-dracut.img ;;
	ram) append="$cmdline rd.live.ram" ;;
	ram-bg) append="$cmdline rd.live.ram=background" ;;
	persist)
		append="$cmdline rd.live.overlay=LABEL=LSPERSIST"
		rm -f "$R/persist.img"
		truncate -s 256M "$R/persist.img"
		mkfs.ext4 -q -L LSPERSIST "$R/persist.img" >&2
		disk=(-- -drive "if=none,id=persist,format=raw,file=$R/persist.img" -device "virtio-blk-pci,drive=persist")
		;;
	esac
	ls_qemu "$v-$r" "$TMO" --files "$base" --mem "$MEM" --smp "$SMP" \
		--kernel "$R/vmlinuz" --initrd "$initrd" --append "$append panic=-1" \
		--iso "$R/live.iso" --autorun "$R/autorun" --mark '^@@ READY' "${disk[@]}" >&2
	[[ -n $LS_QEMU_MARK ]] || return 1
	echo "$LS_QEMU_MARK $(grep -a -m1 '^@@ READY' "$base.out" | sed 's/.*uptime=\([0-9.]*\).*/\1/')"
}

echo "# live boot: $ISO, accel=$accel, -smp $SMP (host $(nproc) CPUs), ${MEM} MiB, $ROUNDS rounds"
echo "# cmdline (ours):   $cmdline"
echo "# cmdline (dracut): $cmdline rd.live.overlay.overlayfs=1"
printf 'variant\tround\tseconds\tguest_uptime\troot\n' >"$R/live.tsv"
fails=0
variants=(ours dracut)
[[ ${BENCH_LIVE_MODES:-no} == yes ]] && variants+=(ram ram-bg persist)
for r in $(seq 1 "$ROUNDS"); do
	for v in "${variants[@]}"; do
		if res=$(boot "$v" "$r"); then
			root=$(grep -m1 '^@@ ROOT' "$R/$v-$r.out" | cut -c9- | tr -d '\r\t')
			printf '%s\t%s\t%s\t%s\t%s\n' "$v" "$r" "${res% *}" "${res#* }" "$root" >>"$R/live.tsv"
			echo "# round $r $v: ${res% *} s to a root shell (guest uptime ${res#* } s)"
			grep -a -ohE 'livesquash: (LiveOS/squashfs.img is in RAM|background copy to RAM done).*' "$R/$v-$r.console" |
				tr -d '\r' | head -n 1 | sed 's/^/#   /' || true
		else
			fails=$((fails + 1))
			echo "# round $r $v: no root shell within $TMO s (see $R/$v-$r.console)"
		fi
	done
done
python3 - "$R" "$accel" "${variants[@]}" <<'EOF'
import json, statistics, sys
rundir, accel, variants = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = [l.rstrip("\n").split("\t") for l in open(rundir + "/live.tsv")][1:]
res = {}
for v in variants:
    s = [float(r[2]) for r in rows if r[0] == v]
    u = [float(r[3]) for r in rows if r[0] == v]
    res[v] = {"seconds": s, "uptime": u,
              "median": statistics.median(s) if s else None, "min": min(s) if s else None,
              "max": max(s) if s else None,
              "uptime_median": statistics.median(u) if u else None,
              "root": sorted({r[4] for r in rows if r[0] == v})}
o, d = res["ours"]["median"], res["dracut"]["median"]
res["ratio_ours_dracut"] = o / d if o and d else None
res["accel"] = accel
json.dump(res, open(rundir + "/live.json", "w"), indent=1)
print("workload   unit  better  ours(livesquash)  dracut(dmsquash-live)  ours/dracut")
def cell(x):
    if not x["seconds"]:
        return "-"
    return "%.1f [%.1f-%.1f]" % (x["median"], x["min"], x["max"])
print("live-boot  s     lower   %-16s  %-21s  %s" % (cell(res["ours"]), cell(res["dracut"]),
      "%.2f" % res["ratio_ours_dracut"] if res["ratio_ours_dracut"] else "-"))
print("# guest uptime at the root shell (kernel start to shell), medians: ours %s s, dracut %s s"
      % (res["ours"]["uptime_median"], res["dracut"]["uptime_median"]))
for v in variants[2:]:
    if res[v]["seconds"] and o:
        print("live-boot-%-7s s  lower   %-16s  (ours, plain: %.1f)  %.2f of plain" % (v, cell(res[v]), o, res[v]["median"] / o))
for v in variants:
    print("# %s root: %s" % (v, " / ".join(res[v]["root"])[:300]))
EOF
echo "# files: $R/live.tsv live.json, per boot: VARIANT-ROUND.{console,out}"
[[ $fails -eq 0 ]]
