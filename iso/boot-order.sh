#!/bin/bash
# iso/boot-order.sh ISO SORTFILE: the order in which a boot of ISO first reads the files
# of its root image, as an `mksquashfs -sort` file (`make boot-order`; `make
# iso` packs the image with it, `iso/remaster --sort` any ISO's image).
#
# A profiling boot, in QEMU, of a copy of ISO with the test hook added
# (boot-tests/testiso.sh: the product has no hook; the hook's own files are left out of
# the result): its kernel, initrd and first GRUB entry booted directly, the CD being the
# copy, with the kernel's trace event filemap:mm_filemap_add_to_page_cache on from the
# kernel command line (trace_event=, in every 6.1 kernel with tracing). That event
# names the device and inode of each page that enters the page cache, so at the end of
# the boot (the hook runs after getty.target, and waits until the serial getty runs) the
# guest lists the inodes of the root
# image's device (the squashfs mounted on /run/rootfsbase) in the order of their first
# page, and their paths. SORTFILE gets one line a file, "PATH PRIORITY", the first read
# with 32767 and each later one a step less; files the boot never read are not listed
# (priority 0: mksquashfs puts them after). A path with blanks in it is left out (the
# sort file's format has no quoting).
# Environment: BOOT_ORDER_MEM (MiB, 1024), BOOT_ORDER_SMP (2), BOOT_ORDER_TIMEOUT (900 s).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(dirname "$here")}
BUILD=${BUILD:-$TOP/build}
# shellcheck source=SCRIPTDIR/qemu-lib.sh disable=SC1091 # (followed with -x)
source "$here/qemu-lib.sh"

die() {
	echo "boot-order: $*" >&2
	exit 1
}
iso=${1:-}
out=${2:-}
[[ -n $iso && -n $out ]] || die "usage: boot-order.sh ISO SORTFILE"
[[ -f $iso ]] || die "no $iso"
w=$BUILD/boot-order/$(basename "$iso" .iso)
mkdir -p "$w" "$(dirname "$out")"

echo "# boot-order: profiling a boot of $iso (files in $w)"
bash "$TOP/boot-tests/testiso.sh" "$iso" "$w/profile.iso" >"$w/testiso.log" 2>&1 ||
	die "cannot add the test hook to $iso: $(tail -n 1 "$w/testiso.log")"
ls_iso_boot_files "$w/profile.iso" "$w" || die "$iso cannot be booted directly"

cat >"$w/autorun" <<'EOF'
#!/bin/sh
# boot-order profile: the root image's inodes in the order of their first page
# the boot ends with the serial getty's prompt: its reads count too
for i in $(seq 60); do
	systemctl -q is-active serial-getty@ttyS0.service && break
	sleep 1
done
sleep 5
t=/sys/kernel/tracing
[ -e $t/trace ] || mount -t tracefs tracefs $t 2> /dev/null
[ -e $t/trace ] || { t=/sys/kernel/debug/tracing; mount -t debugfs debugfs /sys/kernel/debug 2> /dev/null; }
echo 0 > $t/tracing_on
base=/run/rootfsbase
dev=$(mountpoint -d $base 2> /dev/null)
{
	echo "@@ DEV $dev $(awk -v m=$base '$2 == m { print $1, $3 }' /proc/mounts)"
	echo "@@ EVENTS $(grep -c mm_filemap_add_to_page_cache $t/trace) $(grep -m1 -o 'entries-in-buffer/entries-written: [0-9/]*' $t/trace)"
	# ranks of the first page of each inode on $dev (hex inode numbers in the trace)
	awk -v dev="dev $dev " '
		function hex(s,   i, n) { n = 0; for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
		index($0, "mm_filemap_add_to_page_cache: " dev "ino ") {
			s = substr($0, index($0, dev "ino ") + length(dev) + 4); sub(/ .*/, "", s)
			if (!(s in seen)) { seen[s] = 1; print hex(s) }
		}' $t/trace > /run/order.ino
	echo "@@ INODES $(wc -l < /run/order.ino)"
	find $base -xdev -type f -printf '%i %P\n' |
		awk 'NR == FNR { rank[$1] = NR; next } ($1 in rank) { i = $1; sub(/^[0-9]+ /, ""); print rank[i], $0 }' /run/order.ino - |
		sort -n -k1,1 | sed 's/^/@@ FILE /'
	echo "@@ END"
} > /dev/ttyS1
sync
echo o > /proc/sysrq-trigger
EOF

ls_qemu profile "${BOOT_ORDER_TIMEOUT:-900}" --files "$w/profile" --mem "${BOOT_ORDER_MEM:-1024}" \
	--smp "${BOOT_ORDER_SMP:-2}" --kernel "$w/vmlinuz" --initrd "$w/initrd.img" \
	--append "$LS_ISO_CMDLINE trace_event=filemap:mm_filemap_add_to_page_cache trace_buf_size=16M panic=-1" \
	--iso "$w/profile.iso" --autorun "$w/autorun" --stop-on 'Kernel panic|emergency shell|Entering emergency'
[[ -z $LS_QEMU_STOPPED ]] || die "the profiling boot failed: '$LS_QEMU_STOPPED' (see $w/profile.console.txt)"
grep -q '^@@ END' "$w/profile.out.txt" ||
	die "the profiling boot gave no list (rc $LS_QEMU_RC after $LS_QEMU_SECONDS s; see $w/profile.console.txt)"
bad=$(ls_console_problems "$w/profile.console.txt" | head -n 1 || true)
[[ -z $bad ]] || die "the profiling boot's console shows '$bad' (see $w/profile.console.txt)"
grep '^@@ DEV\|^@@ EVENTS\|^@@ INODES' "$w/profile.out.txt" | sed 's/^@@/# boot-order:/'

# "@@ FILE RANK PATH" -> "PATH PRIORITY" in rank order, without the hook's files
awk '/^@@ FILE / { sub(/^@@ FILE [0-9]+ /, ""); print }' "$w/profile.out.txt" |
	grep -v -e 'livesquash-test' -e '[[:space:]]' |
	awk 'NR <= 32767 { print $0, 32768 - NR }' >"$out.tmp"
n=$(wc -l <"$out.tmp")
((n > 0)) || {
	rm -f "$out.tmp"
	die "the profiling boot read no file of the root image (see $w/profile.out.txt)"
}
mv "$out.tmp" "$out"
echo "# boot-order: $out: $n files in the order the boot first read them ($LS_QEMU_SECONDS s boot)"
