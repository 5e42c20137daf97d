#!/bin/bash
# boot-tests/run.sh: boot the live ISOs in QEMU and check them; TAP on stdout,
# numbered across every boot, ending with "N passed, N failed".
#
# usage: run.sh [all | quick | SUITE ...]
#   suites: busybox-bios busybox-uefi busybox-usb busybox-dvd debian-bios debian-uefi media remaster
#           check-iso missing-medium secureboot netboot (media: boot-tests/media.sh;
#           secureboot: boot-tests/secureboot.sh; netboot: boot-tests/netboot.sh),
#           media-debian, fixtures and linux-6.1 (the ISOs with our kernel
#           from Debian 12's 6.1: busybox BIOS/UEFI x CD/USB, debian BIOS CD
#           and UEFI USB), linux-7.3 and linux-7.2 (the busybox ISO with our kernel
#           from trixie-backports' 7.3 or forky's 7.2: BIOS CD, UEFI USB) (not in
#           all: make check-full runs them)
#   all   = every suite (debian-uefi only with CHECK_DEBIAN_UEFI=yes)
#   quick = busybox-bios
# Environment (make passes these): BUILD TOP ACCEL MEM KERNEL; CHECK_BUILD=no skips
# the `make iso`/`make initramfs` steps and tests what is already in build/;
# BOOT_TIMEOUT, DEBIAN_TIMEOUT (seconds per boot); LIVE_JOBS (2: two lanes of boots at
# once, see below; 1: one boot at a time). Logs: $BUILD/tests/SUITE/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TOP=${TOP:-$(dirname "$here")}
export BUILD=${BUILD:-$TOP/build}
# shellcheck disable=SC1091 # lib.sh, beside this script
source "$here/lib.sh"
# shellcheck disable=SC1091 # media.sh: suite_media
source "$here/media.sh"
# shellcheck disable=SC1091 # secureboot.sh: suite_secureboot
source "$here/secureboot.sh"
# shellcheck disable=SC1091 # netboot.sh: suite_netboot
source "$here/netboot.sh"

CHECK_BUILD=${CHECK_BUILD:-yes}
CHECK_DEBIAN_UEFI=${CHECK_DEBIAN_UEFI:-no}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-240}
DEBIAN_TIMEOUT=${DEBIAN_TIMEOUT:-500}
MAKE=${MAKE:-make}
# what is tested; the defaults are what `make iso` and `make initramfs` make
LS_KERNEL=${LS_KERNEL:-${KERNEL:-$BUILD/kobj/arch/x86/boot/bzImage}}
LS_INITRD=${LS_INITRD:-$BUILD/initramfs/initrd.img}

# VARIANT: the suffix of an ISO made another way (-dracut059: make iso DRACUT=059,
# -dracut112: DRACUT=112),
# VARIANT_MAKE its make arguments; empty for the product as make iso makes it
VARIANT='' VARIANT_MAKE=()
iso_of() { # ROOTFS
	local v="LS_ISO_${1^^}"
	echo "${!v:-$BUILD/livesquash-$1$VARIANT.iso}"
}
tree_of() { # ROOTFS
	local v="LS_TREE_${1^^}"
	echo "${!v:-$BUILD/rootfs/$1}"
}

suites=()
for a in "${@:-all}"; do
	case $a in
	all)
		suites+=(busybox-bios busybox-bios-dracut059 busybox-bios-dracut112 busybox-uefi busybox-usb busybox-dvd debian-bios)
		[[ $CHECK_DEBIAN_UEFI == yes ]] && suites+=(debian-uefi)
		suites+=(media remaster check-iso missing-medium secureboot netboot)
		;;
	quick) suites+=(busybox-bios) ;;
	busybox-bios | busybox-bios-dracut059 | busybox-bios-dracut112 | busybox-uefi | linux-6.1 | linux-7.3 | linux-7.2 | busybox-usb | busybox-dvd | debian-bios | debian-uefi | media | media-debian | remaster | check-iso | missing-medium | fixtures | secureboot | netboot) suites+=("$a") ;;
	*)
		echo "run.sh: unknown suite '$a'" >&2
		exit 2
		;;
	esac
done

mkdir -p "$LS_LOGDIR"
run_start=$SECONDS
tap_diag "livesquash boot tests: ${suites[*]}"
tap_diag "accelerator: $(ls_accel) (ACCEL=${ACCEL:-auto}), memory ${MEM} MiB, logs in $LS_LOGDIR"

# a live boot that shows one of these will not get to the guest checks: stop it
LS_STOP_REGEX='Dropping to debug shell|Entering emergency mode|Kernel panic - not syncing|end Kernel panic|-- System halted'

# ---- building ----------------------------------------------------------------
declare -A built=()
# make_target NAME ARGS...: run make once per run (CHECK_BUILD=yes) as a test
make_target() {
	local name=$1
	shift
	[[ -n ${built[$name]:-} ]] && return "${built[$name]}"
	if [[ $CHECK_BUILD != yes ]]; then
		built[$name]=0
		return 0
	fi
	local rc=0
	# (without the KERNEL make exported here, the child's default follows its own
	# LINUX=; a KERNEL given on make's command line still comes through MAKEFLAGS)
	tap_logged "$LS_LOGDIR/make-$name.log" "build: make $*" \
		env -u KERNEL "$MAKE" -C "$TOP" --no-print-directory "$@" || rc=$?
	built[$name]=$rc
	return "$rc"
}

# ---- host-side oracles ---------------------------------------------------------
# unsquashfs -lln IMG -> "path type mode uid gid size data", data: symlink target or
# major:minor; the same columns are cut from a manifest by manifest_columns
unsquashfs_columns() {
	unsquashfs -lln "$1" | awk '
	function perm(s,   m, i, c) {
		m = 0
		for (i = 2; i <= 10; i++) {
			c = substr(s, i, 1)
			m = m * 2 + (c != "-" && c != "S" && c != "T")
		}
		c = substr(s, 4, 1); if (c == "s" || c == "S") m += 2048
		c = substr(s, 7, 1); if (c == "s" || c == "S") m += 1024
		c = substr(s, 10, 1); if (c == "t" || c == "T") m += 512
		return sprintf("%04o", m)
	}
	{
		i = index($0, " squashfs-root")
		if (i == 0) next
		rest = substr($0, i + 14)
		split(substr($0, 1, i - 1), f, " ")
		c = substr(f[1], 1, 1)
		t = (c == "-") ? "f" : c
		split(f[2], ug, "/")
		size = "-"; data = "-"
		if (t == "f") size = f[3]
		if (t == "c" || t == "b") { sub(/,$/, "", f[3]); data = f[3] ":" f[4] }
		if (t == "l") {
			j = index(rest, " -> ")
			data = substr(rest, j + 4)
			rest = substr(rest, 1, j - 1)
		}
		print "." rest "\t" t "\t" perm(f[1]) "\t" ug[1] "\t" ug[2] "\t" size "\t" data
	}' | LC_ALL=C sort
}
manifest_columns() {
	awk -F '\t' -v OFS='\t' '{ print $1, $2, $3, $4, $5, $7, (($2 == "l" || $2 == "c" || $2 == "b") ? $9 : "-") }' "$1"
}

# first lines of a diff, for TAP diagnostics
diff_head() {
	diff "$1" "$2" | head -n 12 || true
}

# extract LiveOS/squashfs.img from an ISO
iso_extract_image() { # ISO OUT
	rm -f "$2"
	xorriso -osirrox on -indev "$1" -extract /LiveOS/squashfs.img "$2" >"$2.log" 2>&1 && [[ -s $2 ]]
}

# host checks for one ISO: its image matches the tree it was packed from.
# Sets HOST_MANIFEST. Returns non-zero if nothing can be booted.
declare -A host_manifest_done=()
host_checks() { # ROOTFS ISO TAG
	local rootfs=$1 iso=$2 tag=$3 tree
	tree=$(tree_of "$rootfs")
	HOST_MANIFEST=$LS_LOGDIR/host-$rootfs.manifest
	if [[ ! -f $iso ]]; then
		tap_notok "[$tag] ISO $iso exists"
		return 1
	fi
	if [[ -z ${host_manifest_done[$rootfs]:-} ]]; then
		local start=$SECONDS rc=0
		bash "$here/manifest.sh" "$tree" >"$HOST_MANIFEST" 2>"$HOST_MANIFEST.err" || rc=$?
		local n
		n=$(wc -l <"$HOST_MANIFEST")
		if ((rc == 0 && n >= 10)) && [[ ! -s $HOST_MANIFEST.err ]]; then
			tap_ok "[$rootfs] host manifest of the packed tree $tree: $n paths ($((SECONDS - start)) s)"
		else
			local -a err=()
			mapfile -t err < <(head -n 10 "$HOST_MANIFEST.err")
			tap_notok "[$rootfs] host manifest of the packed tree $tree (exit $rc, $n paths)" "${err[@]}"
			return 1
		fi
		host_manifest_done[$rootfs]=1
	fi
	local img=$LS_LOGDIR/$tag/squashfs.img
	mkdir -p "$LS_LOGDIR/$tag"
	if ! iso_extract_image "$iso" "$img"; then
		tap_notok "[$tag] the ISO holds LiveOS/squashfs.img" "$(tail -n 3 "$img.log")"
		return 1
	fi
	unsquashfs_columns "$img" >"$LS_LOGDIR/$tag/unsquashfs.columns"
	manifest_columns "$HOST_MANIFEST" >"$LS_LOGDIR/$tag/manifest.columns"
	tap_test "[$tag] unsquashfs -lln of the ISO's image agrees with the tree (paths, types, modes, owners, sizes, targets, devices)" \
		diff_cmp "$LS_LOGDIR/$tag/manifest.columns" "$LS_LOGDIR/$tag/unsquashfs.columns"
	return 0
}
diff_cmp() { # WANT GOT: silent if equal, else the first differences
	cmp -s "$1" "$2" && return 0
	echo "want ($1) vs got ($2):"
	diff_head "$1" "$2"
	return 1
}

# ---- one live boot with the guest checks -------------------------------------
# live_boot TAG ISO FIRMWARE TIMEOUT MANIFEST [MARKERS] [MEDIUM]: MEDIUM cd (default),
# usb (the ISO as a USB stick, as `dd` writes it, read-only), virtio (the ISO as a
# read-only virtio disk), stick:FILE (FILE as a writable USB stick: a stick image with
# a persistence partition) or none (ISO unused: LB_ARGS brings the drives).
# LB_ARGS: more ls_qemu options; LB_CONF: more lines for the guest's config
# (guest.sh's LS_* variables); both are emptied after the boot.
LB_ARGS=()
LB_CONF=""
live_boot() {
	local tag=$1 iso=$2 firmware=$3 tmo=$4 manifest=$5 markers=${6:-} medium=${7:-cd}
	local dir=$LS_LOGDIR/$tag data
	data=$dir/data
	rm -rf "$data"
	mkdir -p "$data"
	cp "$here/guest.sh" "$here/guest-lib.sh" "$here/manifest.sh" "$data/"
	cp "$manifest" "$data/manifest"
	if [[ -n $markers ]]; then cp "$markers" "$data/markers"; else : >"$data/markers"; fi
	# a file to append to (copy-up): /etc/hostname, else the first plain file in /etc
	local copyup
	copyup=$(awk -F '\t' '$2 == "f" && $6 == 1 && $1 ~ /^\.\/etc\/[^\/]+$/ { print $1 }' "$manifest" |
		awk '$0 == "./etc/hostname" { h = $0 } NR == 1 { f = $0 } END { print (h != "" ? h : f) }')
	{
		printf 'LS_NAME=%q\n' "$tag"
		printf 'LS_COPYUP=%q\n' "$copyup"
		printf '%s\n' "$LB_CONF"
	} >"$data/config"
	tar --format=ustar -cf "$dir/data.tar" -C "$data" .
	local -a fw=()
	[[ $firmware == uefi ]] && fw=(--uefi)
	case $medium in
	cd) fw+=(--iso "$iso") ;;
	usb) fw+=(--iso "$iso" --usb) ;;
	dvd) fw+=(--iso "$iso" --medium dvd) ;;
	virtio) fw+=(-- -drive "if=none,id=medium,format=raw,readonly=on,file=${iso//,/,,}"
		-device "virtio-blk-pci,drive=medium,bootindex=1") ;;
	stick:*)
		local stick=${medium#stick:}
		fw+=(-- -device "qemu-xhci,id=xhci" -drive "if=none,id=stick,format=raw,file=${stick//,/,,}"
			-device "usb-storage,bus=xhci.0,drive=stick,bootindex=1")
		;;
	esac
	# ls_qemu's options first, then after one `--` the QEMU arguments of both lists
	local -a pre=() post=() a
	local seen=0
	for a in "${fw[@]}" "" "${LB_ARGS[@]}"; do
		if [[ -z $a ]]; then
			seen=0
		elif ((seen)); then
			post+=("$a")
		elif [[ $a == -- ]]; then
			seen=1
		else
			pre+=("$a")
		fi
	done
	pre+=(--autorun "$here/autorun.sh" --data "$dir/data.tar" --stop-on "$LS_STOP_REGEX")
	((${#post[@]} == 0)) || pre+=(-- "${post[@]}")
	ls_qemu "$tag" "$tmo" "${pre[@]}"
	LB_ARGS=()
	LB_CONF=""
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), $firmware firmware, as ${medium%%:*}, QEMU exit $LS_QEMU_RC"
	if [[ -n $LS_QEMU_STOPPED ]]; then
		local -a last=()
		mapfile -t last < <(grep -v '^\s*$' "$dir/console.txt" | tail -n 12)
		tap_notok "[$tag] booted and powered off by itself (stopped after $LS_QEMU_SECONDS s: the console says '$LS_QEMU_STOPPED'; $dir/console.txt ends:)" "${last[@]}"
	elif ((LS_QEMU_RC == 0)); then
		tap_ok "[$tag] booted and powered off by itself within $tmo s ($LS_QEMU_SECONDS s)"
	else
		local -a last=()
		mapfile -t last < <(grep -v '^\s*$' "$dir/console.txt" | tail -n 8)
		tap_notok "[$tag] booted and powered off by itself within $tmo s (QEMU exit $LS_QEMU_RC after $LS_QEMU_SECONDS s; console $dir/console.txt ends:)" "${last[@]}"
	fi
	[[ $medium != dvd ]] || tap_test "[$tag] the slow DVD (iso/medium.py) served the boot, with seeks: $LS_QEMU_MEDIUM" \
		medium_used "$dir/medium.log"
	tap_guest "$dir/results.txt" "[$tag]"
	if grep -qx '# livesquash guest checks done' "$dir/results.txt" && ((LS_GUEST_SEEN >= 10)); then
		tap_ok "[$tag] the guest checks ran to the end ($LS_GUEST_SEEN results)"
	else
		tap_notok "[$tag] the guest checks ran to the end ($LS_GUEST_SEEN results, results in $dir/results.txt)"
	fi
	console_test "$tag"
}

# medium_used LOG: iso/medium.py's log of a boot has reads, seeks among them and its
# totals line, and the totals add up to the lines
medium_used() {
	awk '$1 ~ /^[0-9.]+$/ { n++; b += $3; if ($5 == "seek") s++ }
		$1 == "#" && $2 == "reads" { tr = $3; tb = $5; ts = $7 }
		END {
			if (tr == "") { print "no totals line"; exit 1 }
			if (n == 0 || s == 0) { print n " reads, " s " seeks"; exit 1 }
			if (n != tr || b != tb || s != ts) { print "lines: " n " reads " b " bytes " s " seeks; totals: " tr " " tb " " ts; exit 1 }
		}' "$1"
}

console_test() { # TAG
	local dir=$LS_LOGDIR/$1 problems
	problems=$(ls_console_problems "$dir/console.txt")
	if [[ -z $problems ]] && [[ -s $dir/console.txt ]]; then
		tap_ok "[$1] console has no BUG:/WARNING:/Oops/Call Trace/KASAN/Kernel panic"
	else
		local -a lines=()
		mapfile -t lines < <(printf '%s\n' "${problems:-the console log is empty}")
		tap_notok "[$1] console has no BUG:/WARNING:/Oops/Call Trace/KASAN/Kernel panic ($dir/console.txt)" "${lines[@]}"
	fi
}

# initrd_checks TAG ISO: the ISO's initramfs is made by the dracut asked for
# (DRACUT, NNN for a -dracutNNN variant) and holds 90livesquash's hooks
initrd_checks() {
	local tag=$1 iso=$2 d=$LS_LOGDIR/$1 want=${DRACUT:-106}
	[[ $VARIANT == -dracut* ]] && want=${VARIANT#-dracut}
	rm -f "$d/initrd.img"
	xorriso -osirrox on -indev "$iso" -extract /boot/initrd.img "$d/initrd.img" >"$d/initrd.log" 2>&1
	tap_test "[$tag] the ISO's initramfs was made by dracut $want (lsinitrd) and has 90livesquash's mount hooks around dracut's overlayfs module's" \
		initrd_is "$d/initrd.img" "$want"
}
initrd_is() { # INITRD DRACUT-VERSION
	local list v
	[[ -s $1 ]] || { echo "no /boot/initrd.img in the ISO"; return 1; }
	# (the whole listing first: grep -q would stop lsinitrd with SIGPIPE)
	list=$(lsinitrd "$1" 2>/dev/null)
	v=$(sed -n 's/^Version: dracut-//p' <<<"$list" | head -n 1)
	[[ $v == "$2"-* || $v == "$2" ]] || { echo "lsinitrd: made by dracut-$v"; return 1; }
	local h
	for h in 00-mount-livesquash.sh 01-mount-overlayfs.sh 99-mount-livesquash-overlay.sh; do
		grep -q "hooks/mount/$h" <<<"$list" || { echo "lsinitrd: no hooks/mount/$h"; return 1; }
	done
}

suite_live() { # ROOTFS FIRMWARE [MEDIUM]
	local rootfs=$1 firmware=$2 medium=${3:-cd} tag=$1-$2 iso tmo=$BOOT_TIMEOUT
	[[ $medium == cd ]] || tag=$tag-$medium
	tag+=$VARIANT
	[[ $rootfs == debian ]] && tmo=$DEBIAN_TIMEOUT
	make_target "iso-$rootfs$VARIANT" iso ROOTFS="$rootfs" "${VARIANT_MAKE[@]}" || true
	iso=$(iso_of "$rootfs")
	host_checks "$rootfs" "$iso" "$tag" || return 0
	initrd_checks "$tag" "$iso"
	test_iso "$rootfs" "$tag" || return 0
	live_boot "$tag" "$TEST_ISO" "$firmware" "$tmo" "$TEST_MANIFEST" "" "$medium"
	# an image in boot order (make iso with a profile, the test ISO packed the same)
	local liveos=$LS_LOGDIR/$rootfs$VARIANT-test/iso-out/LiveOS
	if [[ $(cat "$liveos/squashfs.img.prefetch" 2>/dev/null) =~ ^[1-9] ]]; then
		local sortf
		sortf=$(ls_boot_order_sort "$rootfs")
		if [[ $medium == cd || $medium == dvd ]]; then
			tap_test "[$tag] the image is in boot order (${sortf#"$TOP"/}): our initrd read its start (squashfs.img.prefetch) in one pass" \
				prefetch_logged "$liveos" "$LS_LOGDIR/$tag/console.txt"
		else
			# (rd.live.prefetch reads ahead on a CD or DVD only, where it saves seeks)
			tap_test "[$tag] the image is in boot order, but from a $medium our initrd does not read its start ahead" \
				no_prefetch "$LS_LOGDIR/$tag/console.txt"
		fi
	fi
}

# ---- the test ISO: the product plus the test hook -------------------------------
# unpack_image ISO DIR: DIR/extracted = the ISO's root image unpacked by unsquashfs
# (squashfs-tools, not ours), DIR/expected.manifest its manifest
unpack_image() {
	rm -rf "$2/extracted"
	iso_extract_image "$1" "$2/squashfs.img" &&
		unsquashfs -d "$2/extracted" -no-progress "$2/squashfs.img" >"$2/unsquashfs.log" 2>&1 &&
		bash "$here/manifest.sh" "$2/extracted" >"$2/expected.manifest"
}

# same_apart_from DESCRIPTION EXCLUDES BASE NEW: the manifests BASE and NEW agree
# but for the paths EXCLUDES names (manifest.sh -x); the paths that differ are
# listed as diagnostics either way
same_apart_from() {
	local desc=$1 excl=$2 base=$3 new=$4 d
	d=$(dirname "$new")
	# paths added, removed or changed (type, mode, owner, size, content, target)
	LC_ALL=C comm -3 <(cut -f1-5,7,9 "$base") <(cut -f1-5,7,9 "$new") |
		awk -F '\t' '{ side = ($1 == "") ? "new" : "base"; p = (side == "new") ? $2 : $1; s[p] = s[p] side }
			END { for (p in s) print "#   " (s[p] == "new" ? "added:   " : s[p] == "base" ? "removed: " : "changed: ") p }' |
		LC_ALL=C sort -k3 >"$d/paths.diff"
	bash "$here/manifest.sh" -x "$excl" -F "$base" >"$d/rest.base"
	bash "$here/manifest.sh" -x "$excl" -F "$new" >"$d/rest.new"
	tap_test "$desc" diff_cmp "$d/rest.base" "$d/rest.new"
	head -n 40 "$d/paths.diff"
}

# no_hook COLUMNS: unsquashfs columns of a product image name no test hook
no_hook() {
	! grep -E 'livesquash-test|autorun|fw_cfg' "$1"
}

# test_iso ROOTFS TAG: the product ISO of ROOTFS with the test hook (testiso.sh),
# checked once per run; sets TEST_ISO and TEST_MANIFEST (what the guest compares
# its files with)
declare -A test_iso_rc=()
test_iso() {
	local rootfs=$1 tag=$2 dir=$LS_LOGDIR/test-$1$VARIANT key=$1$VARIANT
	TEST_ISO=$dir/test.iso
	TEST_MANIFEST=$dir/expected.manifest
	[[ -n ${test_iso_rc[$key]:-} ]] && return "${test_iso_rc[$key]}"
	test_iso_rc[$key]=1
	mkdir -p "$dir"
	tap_test "[$key] the product ISO's root image has no test hook (nothing named livesquash-test, autorun or fw_cfg)" \
		no_hook "$LS_LOGDIR/$tag/unsquashfs.columns"
	local start=$SECONDS rc=0
	ls_stable_copy "$(iso_of "$rootfs")" "$dir/product.iso"
	bash "$here/testiso.sh" "$dir/product.iso" "$TEST_ISO" "$(ls_boot_order_sort "$rootfs")" >"$dir/testiso.log" 2>&1 || rc=$?
	if ((rc != 0)); then
		local -a lines=()
		mapfile -t lines < <(tail -n 5 "$dir/testiso.log")
		tap_notok "[$key] test ISO: the product ISO plus the test hook, by iso/remaster (exit $rc)" "${lines[@]}"
		return 1
	fi
	tap_ok "[$key] test ISO: the product ISO plus the test hook, by iso/remaster ($((SECONDS - start)) s: $(tail -n 1 "$dir/testiso.log"))"
	remaster_iso_checks "$key-test" "$dir/product.iso" "$TEST_ISO" no
	if ! unpack_image "$TEST_ISO" "$dir"; then
		tap_notok "[$key] unpack the test ISO's root image" "$(tail -n 3 "$dir/unsquashfs.log" 2>/dev/null)"
		return 1
	fi
	same_apart_from "[$key] the test ISO's root image is the product's tree plus the hook (boot-tests/hook/hook.exclude)" \
		"$here/hook/hook.exclude" "$HOST_MANIFEST" "$TEST_MANIFEST"
	test_iso_rc[$key]=0
}

# ---- remaster ------------------------------------------------------------------
suite_remaster() {
	local tag=remaster dir=$LS_LOGDIR/remaster iso
	make_target iso-busybox iso ROOTFS=busybox || true
	iso=$(iso_of busybox)
	host_checks busybox "$iso" "$tag" || return 0
	rm -rf "$dir/add" "$dir/extracted" "$dir/remastered.iso"
	mkdir -p "$dir/add"
	bash "$here/hook/mkhook.sh" "$dir/hook"
	local add_text run_text
	add_text="added by boot-tests at $(date -u +%FT%TZ)"
	run_text="created by --run"
	echo "$add_text" >"$dir/add/livesquash-marker-add.txt"
	# a boot order: busybox, then inittab (the image then has a .prefetch beside it)
	printf '%s\n' 'bin/busybox 32767' 'etc/inittab 32766' >"$dir/order.sort"
	local rc=0 start=$SECONDS
	bash "$TOP/iso/remaster" --add "$dir/hook" --run 'sh /usr/lib/livesquash-test/install' \
		--add "$dir/add" --run "echo '$run_text' > /livesquash-marker-run.txt" \
		--cmdline-add 'livesquash.remastered=1' --cmdline-remove 'console=tty0' --volid LSREMASTER \
		--sort "$dir/order.sort" "$iso" "$dir/remastered.iso" >"$dir/remaster.log" 2>&1 || rc=$?
	if ((rc == 0)) && [[ -s $dir/remastered.iso ]]; then
		tap_ok "[$tag] iso/remaster --add DIR --run CMD --cmdline-add --cmdline-remove --volid --sort IN OUT ($((SECONDS - start)) s)"
	else
		local -a lines=()
		mapfile -t lines < <(tail -n 10 "$dir/remaster.log")
		tap_notok "[$tag] iso/remaster --add DIR --run CMD --cmdline-add --cmdline-remove --volid --sort IN OUT (exit $rc, log $dir/remaster.log)" "${lines[@]}"
		return 0
	fi
	remaster_iso_checks "$tag" "$iso" "$dir/remastered.iso" yes
	tap_test "[$tag] --volid: the copy's label is LSREMASTER and its menu's root=live:CDLABEL= names it" \
		volid_changed "$dir/remastered.iso" "$dir/iso-out/boot/grub/grub.cfg"
	# what the new image holds, read back with unsquashfs (squashfs-tools, not ours)
	if ! unpack_image "$dir/remastered.iso" "$dir"; then
		tap_notok "[$tag] unpack the remastered ISO's LiveOS/squashfs.img" "$(tail -n 3 "$dir/unsquashfs.log" 2>/dev/null)"
		return 0
	fi
	local expected=$dir/expected.manifest markers=$dir/markers
	: >"$markers"
	cp "$here/hook/hook.exclude" "$dir/markers.exclude"
	local name want p
	for name in livesquash-marker-add.txt livesquash-marker-run.txt; do
		if [[ $name == *add* ]]; then want=$add_text; else want=$run_text; fi
		p=$(awk -F '\t' -v n="$name" '$2 == "f" && ($1 ~ ("/" n "$")) { print $1; exit }' "$expected")
		if [[ -n $p ]] && [[ $(cat "$dir/extracted/$p") == "$want" ]]; then
			tap_ok "[$tag] the remastered image has $p with the expected content"
			printf '%s %s\n' "$p" "$(sha256sum <"$dir/extracted/$p" | cut -d' ' -f1)" >>"$markers"
			printf '/ %s\n' "$p" >>"$dir/markers.exclude"
			# its folder changed too (and any folder that is new)
			while [[ $p == */* ]]; do
				p=${p%/*}
				printf '= %s\n' "$p" >>"$dir/markers.exclude"
			done
		else
			tap_notok "[$tag] the remastered image has $name with the expected content" "found: '${p:-nothing}'"
		fi
	done
	# everything else is what it was
	same_apart_from "[$tag] apart from the hook and the markers the remastered image equals the original tree" \
		"$dir/markers.exclude" "$HOST_MANIFEST" "$expected"
	live_boot "$tag" "$dir/remastered.iso" bios "$BOOT_TIMEOUT" "$expected" "$markers"
	tap_test "[$tag] the kernel's command line has livesquash.remastered=1 and no console=tty0" \
		cmdline_changed "$dir/console.txt"
	tap_test "[$tag] booted with root=live:CDLABEL=LSREMASTER: the initrd found the medium by its new label" \
		grep -q 'Kernel command line:.* root=live:CDLABEL=LSREMASTER ' "$dir/console.txt"
	tap_test "[$tag] our initrd read the image's boot-ordered start (LiveOS/squashfs.img.prefetch) in one pass" \
		prefetch_read "$dir/iso-out/LiveOS" "$dir/console.txt"
	live_boot "$tag-uefi-usb" "$dir/remastered.iso" uefi "$BOOT_TIMEOUT" "$expected" "$markers" usb
	tap_test "[$tag-uefi-usb] the kernel's command line has livesquash.remastered=1 and no console=tty0" \
		cmdline_changed "$LS_LOGDIR/$tag-uefi-usb/console.txt"
	tap_test "[$tag-uefi-usb] from a USB stick (no seeks) our initrd mounts the image without reading its start first" \
		no_prefetch "$LS_LOGDIR/$tag-uefi-usb/console.txt"
	prefetch_option_boot "$tag-usb-prefetch1" "$dir/remastered.iso" usb rd.live.prefetch=1 yes
	prefetch_option_boot "$tag-cd-prefetch0" "$dir/remastered.iso" cd rd.live.prefetch=0 no
	dmsquash_boot "$tag-dmsquash" "$dir/remastered.iso"
}

# prefetch_option_boot TAG ISO cd|usb WORD yes|no: ISO's first entry booted directly
# from a CD or a USB stick with WORD added to its command line, as far as the root's
# hook; whether our initrd read the boot-ordered image's start first (yes) or not
prefetch_option_boot() {
	local tag=$1 iso=$2 medium=$3 word=$4 want=$5 dir=$LS_LOGDIR/$1
	local -a usb=()
	[[ $medium == usb ]] && usb=(--usb)
	mkdir -p "$dir"
	if ! ls_iso_boot_files "$iso" "$dir" 2>"$dir/extract.log"; then
		tap_notok "[$tag] the ISO's kernel and its root=live: command line" "$(cat "$dir/extract.log")"
		return 0
	fi
	printf '#!/bin/sh\necho "@@ DONE" >/dev/ttyS1\nsync\necho o >/proc/sysrq-trigger\n' >"$dir/autorun"
	ls_qemu "$tag" "$BOOT_TIMEOUT" --iso "$iso" "${usb[@]}" --kernel "$dir/vmlinuz" --initrd "$dir/initrd.img" \
		--append "$LS_ISO_CMDLINE $word panic=-1" --autorun "$dir/autorun" --stop-on "$LS_STOP_REGEX"
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), QEMU exit $LS_QEMU_RC"
	tap_test "[$tag] the root's hook ran" grep -m1 -x '@@ DONE' "$dir/results.txt"
	if [[ $want == yes ]]; then
		tap_test "[$tag] with $word from a $medium our initrd read the image's boot-ordered start first" \
			grep -m1 "livesquash: read the first .* KiB of LiveOS/squashfs.img" "$dir/console.txt"
	else
		tap_test "[$tag] with $word from a $medium our initrd mounts the image without reading its start first" \
			no_prefetch "$dir/console.txt"
	fi
	console_test "$tag"
}

# prefetch_read LIVEOS CONSOLE: LIVEOS/squashfs.img.prefetch (the remastered ISO as
# remaster_iso_checks extracted it) holds the end of busybox's and inittab's data
# (their blocks, read back with rdsquashfs), and the boot says it read that much of
# the image first
prefetch_read() {
	local n e f want=0
	n=$(cat "$1/squashfs.img.prefetch" 2>/dev/null) || n=
	for f in /bin/busybox /etc/inittab; do
		e=$(rdsquashfs -s "$f" "$1/squashfs.img" | awk '/^Blocks start:/ { s = $3 } /^\tBlock #[0-9]+ size:/ { n += $4 } END { if (s != "") print s + n }')
		[[ -n $e ]] && ((e > want)) && want=$e
	done
	if ! [[ $n =~ ^[0-9]+$ ]] || ((n != want || n == 0)); then
		echo "LiveOS/squashfs.img.prefetch holds '$n', the two files' data end at $want"
		return 1
	fi
	prefetch_logged "$1" "$2"
}

# no_prefetch CONSOLE: the boot mounted the image without the pass of prefetch_logged
no_prefetch() {
	grep -q "livesquash: mounting .*LiveOS/squashfs.img on" "$1" || {
		echo "no 'livesquash: mounting ... LiveOS/squashfs.img on' in $1"
		return 1
	}
	! grep -m1 "livesquash: read the first" "$1"
}

# prefetch_logged LIVEOS CONSOLE: the boot says it read as much of the image first as
# LIVEOS/squashfs.img.prefetch holds
prefetch_logged() {
	local n
	n=$(cat "$1/squashfs.img.prefetch")
	grep -q "livesquash: read the first $((n / 1024)) KiB of LiveOS/squashfs.img" "$2" || {
		echo "no 'livesquash: read the first $((n / 1024)) KiB of LiveOS/squashfs.img' in $2"
		return 1
	}
}

# cmdline_changed CONSOLE: the kernel's "Command line:" shows the remaster's edit
cmdline_changed() {
	local line
	line=$(grep -m1 -E '^\[ *[0-9.]+\] Command line:' "$1") || {
		echo "no 'Command line:' in $1"
		return 1
	}
	echo "$line"
	[[ " $line " == *" livesquash.remastered=1 "* && " $line " != *" console=tty0 "* ]]
}

# volid_changed ISO GRUB_CFG: the ISO's label is LSREMASTER, and every linux line
# of its grub.cfg asks for it
volid_changed() {
	blkid -o value -s LABEL "$1"
	[[ $(blkid -o value -s LABEL "$1") == LSREMASTER ]] &&
		awk '$1 == "linux" { n++; if ($0 !~ / root=live:CDLABEL=LSREMASTER /) bad = 1 } END { exit bad || !n }' "$2"
}

# eltorito_same KIND A B: A and B differ only where xorriso writes block addresses:
# a catalog's entries (bytes 8-11 of each 32-byte entry), a boot image's boot info
# table (bytes 8-63) and GRUB's boot info (bytes 2548-2555)
eltorito_same() {
	[[ -f $2 && -f $3 && $(stat -c %s "$2") == "$(stat -c %s "$3")" ]] || {
		echo "missing, or of another size: $2 $3"
		return 1
	}
	{ cmp -l "$2" "$3" || true; } | awk -v kind="$1" '{ o = $1 - 1 }
		kind == "catalog" && o % 32 >= 8 && o % 32 < 12 { next }
		kind == "bootinfo" && ((o >= 8 && o < 64) || (o >= 2548 && o < 2556)) { next }
		{ printf "byte %d differs\n", o; bad = 1 } END { exit bad }'
}

# remaster_iso_checks TAG IN OUT CMDLINE: what the remaster changed in the ISO, and
# only that (CMDLINE=yes: the remaster edited grub.cfg's kernel command lines)
remaster_iso_checks() {
	local tag=$1 in=$2 out=$3 cmdline=$4 dir=$LS_LOGDIR/$1
	rm -rf "$dir/iso-in" "$dir/iso-out"
	mkdir -p "$dir/iso-in" "$dir/iso-out"
	if ! xorriso -osirrox on -indev "$in" -extract / "$dir/iso-in" >"$dir/iso-in.log" 2>&1 ||
		! xorriso -osirrox on -indev "$out" -extract / "$dir/iso-out" >"$dir/iso-out.log" 2>&1; then
		tap_notok "[$tag] extract both ISOs with xorriso" "$(tail -n 2 "$dir/iso-out.log")"
		return 0
	fi
	# the El Torito catalog and the boot images with a boot info table hold their
	# own block addresses, which a new ISO changes: compared apart from those
	local -a eltorito=()
	mapfile -t eltorito < <(xorriso -indev "$in" -report_el_torito plain 2>/dev/null |
		awk '/^El Torito cat path/ { sub(/^[^:]*: */, ""); print "catalog ." $0 }
			/^El Torito img path/ { p[$6] = $7 }
			/^El Torito img opts/ && /boot-info-table|grub2-boot-info/ { print "bootinfo ." p[$6] }')
	local e
	# (.prefetch: made by --sort, checked by prefetch_read)
	printf '%s\n' ./LiveOS/squashfs.img ./LiveOS/squashfs.img.sha256 ./LiveOS/squashfs.img.prefetch >"$dir/changed"
	[[ $cmdline == yes ]] && printf '%s\n' ./boot/grub/grub.cfg ./boot/grub/loopback.cfg >>"$dir/changed"
	for e in "${eltorito[@]}"; do
		echo "${e#* }" >>"$dir/changed"
	done
	(cd "$dir/iso-in" && find . -type f | LC_ALL=C sort | grep -vxF -f "$dir/changed" | xargs -d '\n' sha256sum) >"$dir/rest.in"
	(cd "$dir/iso-out" && find . -type f | LC_ALL=C sort | grep -vxF -f "$dir/changed" | xargs -d '\n' sha256sum) >"$dir/rest.out"
	tap_test "[$tag] every other file of the ISO is byte-identical ($(wc -l <"$dir/rest.in") files)" \
		diff_cmp "$dir/rest.in" "$dir/rest.out"
	for e in "${eltorito[@]}"; do
		tap_test "[$tag] El Torito ${e% *} ${e#* } differs only in its block addresses" \
			eltorito_same "${e% *}" "$dir/iso-in/${e#* }" "$dir/iso-out/${e#* }"
	done
	# shellcheck disable=SC2016 # $1 is bash -c's
	tap_test "[$tag] LiveOS/squashfs.img.sha256 verifies the new image" \
		bash -c 'cd "$1/LiveOS" && sha256sum -c squashfs.img.sha256' _ "$dir/iso-out"
	diff "$dir/iso-in/boot/grub/grub.cfg" "$dir/iso-out/boot/grub/grub.cfg" >"$dir/grub.diff" || true
	# shellcheck disable=SC2016 # an awk program
	[[ $cmdline == yes ]] && tap_test "[$tag] grub.cfg: only the linux lines changed, each with livesquash.remastered=1 and without console=tty0" \
		awk '/^[<>]/ && !/^[<>][ \t]*linux / { print "other line changed: " $0; bad = 1 }
			/^>[ \t]*linux / { n++; if ($0 !~ / livesquash\.remastered=1( |$)/ || $0 ~ / console=tty0( |$)/) { print "wrong: " $0; bad = 1 } }
			END { if (n < 2) { print n + 0 " linux lines changed, want 2"; bad = 1 }; exit bad }' "$dir/grub.diff"
	tap_test "[$tag] checkisomd5 passes on the remastered ISO (its implanted MD5 made anew)" \
		checkisomd5 "$out"
	local el_in el_out
	el_in=$(xorriso -indev "$in" -report_el_torito plain 2>/dev/null | grep -E '^El Torito (boot img|img path)' | awk '{ $NF = ""; print }')
	el_out=$(xorriso -indev "$out" -report_el_torito plain 2>/dev/null | grep -E '^El Torito (boot img|img path)' | awk '{ $NF = ""; print }')
	tap_test "[$tag] the El Torito boot entries (BIOS, UEFI) are replayed" \
		test -n "$el_in" -a "$el_in" == "$el_out"
}

# dmsquash_boot TAG ISO [DRACUT KERNEL CMDLINE]: boot with dracut's own
# dmsquash-live initrd (DRACUT 059, the host's, or 106, Debian 13's) and
# rd.live.check: Fedora's boot logic checks the implanted MD5 with checkisomd5
# before it mounts the root; the root's test hook reports the marker files and
# the mounted filesystem types, and powers off. The ISO's own kernel and first
# menu entry's command line unless KERNEL and CMDLINE are given.
dmsquash_boot() {
	local tag=$1 iso=$2 dracut=${3:-059} kernel=${4:-} cmdline=${5:-} dir=$LS_LOGDIR/$1 initrd
	local -a dopt=()
	[[ $dracut == 106 ]] && dopt=(--dracut106)
	mkdir -p "$dir"
	if ! initrd=$(bash "$here/dmsquash-initrd.sh" "${dopt[@]}" "$BUILD/cache/dmsquash" 2>"$dir/initrd.log"); then
		tap_notok "[$tag] build dracut $dracut's dmsquash-live initrd" "$(tail -n 3 "$dir/initrd.log")"
		return 0
	fi
	if [[ -z $kernel ]]; then
		if ! ls_iso_boot_files "$iso" "$dir" 2>"$dir/extract.log"; then
			tap_notok "[$tag] the ISO's kernel and its root=live: command line" "$(cat "$dir/extract.log")"
			return 0
		fi
		kernel=$dir/vmlinuz
		cmdline=$(ls_grub_entry 0 "$dir/grub.cfg")
	fi
	cat >"$dir/autorun" <<'EOT'
#!/bin/sh
{
	echo "@@ ROOT $(awk '$2 == "/" { print $3 }' /proc/mounts)"
	echo "@@ FSTYPES $(awk '{ t[$3] = 1 } END { for (k in t) printf "%s ", k }' /proc/mounts)"
	for f in /livesquash-marker-run.txt /livesquash-marker-add.txt; do
		[ -f "$f" ] && echo "@@ MARKER $f $(cat "$f")"
	done
	echo "@@ CMDLINE $(cat /proc/cmdline)"
	echo "@@ DONE"
} >/dev/ttyS1
sync
echo o >/proc/sysrq-trigger
EOT
	ls_qemu "$tag" "$BOOT_TIMEOUT" --iso "$iso" --kernel "$kernel" --initrd "$initrd" \
		--append "$cmdline rd.live.check rd.live.overlay.overlayfs=1 panic=-1" \
		--autorun "$dir/autorun" --stop-on "$LS_STOP_REGEX|CD check failed"
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), dracut $dracut's dmsquash-live, QEMU exit $LS_QEMU_RC"
	tap_test "[$tag] dracut $dracut's dmsquash-live: the media check (checkisomd5, rd.live.check) passes on the remastered ISO" \
		grep -m1 -E 'the result is: PASS' "$dir/console.txt"
	tap_test "[$tag] dracut $dracut's dmsquash-live mounts the remastered root as / (overlay) and the root's hook ran" \
		grep -m1 -xE '@@ ROOT overlay' "$dir/results.txt"
	tap_test "[$tag] the root dmsquash-live mounted has the --run marker" \
		grep -m1 -F '@@ MARKER /livesquash-marker-run.txt created by --run' "$dir/results.txt"
	console_test "$tag"
}

# ---- third-party layouts booted by their own logic -------------------------------
# the remaster fixtures of Fedora's layouts (remaster/fixtures.sh: lorax with isolinux
# and lorax 41 GRUB-only), squashfs and EROFS root images (one with SELinux labels), remastered with an init (busybox's), the test hook and the
# markers, booted with our kernel (the fixture's is a placeholder) by dracut 106's
# dmsquash-live as Fedora boots them: the squashfs root read by our driver, the
# EROFS one by the kernel's EROFS
suite_fixtures() {
	local dir=$LS_LOGDIR/fixtures name want cmdline rc start
	mkdir -p "$dir"
	if [[ ! -f $LS_KERNEL ]]; then
		tap_notok "[fixtures] kernel $LS_KERNEL exists"
		return 0
	fi
	start=$SECONDS
	if ! bash "$here/remaster/fixtures.sh" "$dir/fx" >"$dir/fixtures.log" 2>&1; then
		tap_notok "[fixtures] remaster/fixtures.sh built the fixture ISOs" "$(tail -n 5 "$dir/fixtures.log")"
		return 0
	fi
	tap_ok "[fixtures] remaster/fixtures.sh built the fixture ISOs ($((SECONDS - start)) s)"
	bash "$here/hook/mkhook.sh" "$dir/hook"
	rm -rf "$dir/init" "$dir/add"
	mkdir -p "$dir/init/sbin" "$dir/init/etc" "$dir/add"
	ln -s ../bin/busybox "$dir/init/sbin/init"
	echo "# busybox init: the test hook's ::once: line follows" >"$dir/init/etc/inittab"
	echo "added by boot-tests" >"$dir/add/livesquash-marker-add.txt"
	# fedora41: lorax 41's GRUB-only layout; fedora-erofs-selinux: Fedora 42's EROFS root
	# with SELinux labels (erofs-utils 1.8 keeps them)
	for name in fedora fedora41 fedora-erofs fedora-erofs-selinux; do
		want=squashfs
		[[ $name == *erofs* ]] && want=erofs
		rc=0
		rm -f "$dir/$name.iso"
		bash "$TOP/iso/remaster" --add "$dir/init" --add "$dir/hook" --run 'sh /usr/lib/livesquash-test/install' \
			--add "$dir/add" --run "echo 'created by --run' > /livesquash-marker-run.txt" \
			"$dir/fx/$name.iso" "$dir/$name.iso" >"$dir/$name-remaster.log" 2>&1 || rc=$?
		if ((rc != 0)); then
			tap_notok "[fixture-$name] iso/remaster --add init --add hook --run install (exit $rc)" "$(tail -n 5 "$dir/$name-remaster.log")"
			continue
		fi
		tap_ok "[fixture-$name] iso/remaster --add init --add hook --run install"
		# the first entry of the fixture's GRUB menu, on the serial console
		xorriso -osirrox on -indev "$dir/$name.iso" -extract /boot/grub2/grub.cfg "$dir/$name-grub.cfg" >/dev/null 2>&1 || true
		cmdline=$(ls_grub_entry 0 "$dir/$name-grub.cfg" 2>/dev/null || true)
		if [[ $cmdline != *root=live:* ]]; then
			tap_notok "[fixture-$name] its /boot/grub2/grub.cfg has a root=live: entry"
			continue
		fi
		cmdline=$(echo " $cmdline " | sed -e 's/ quiet / /; s/ rhgb / /')
		dmsquash_boot "fixture-$name" "$dir/$name.iso" 106 "$LS_KERNEL" "${cmdline# } console=ttyS0,115200"
		tap_test "[fixture-$name] the live root's lower layer is $want (/proc/mounts)" \
			grep -m1 -E "^@@ FSTYPES .*\b$want\b" "$LS_LOGDIR/fixture-$name/results.txt"
	done
}

# ---- the product ISO as a user checks it: iso/check-iso -------------------------
# the ISO `make iso` built, no hook: booted as a USB stick (BIOS) and as a CD (UEFI)
# by the user's own tool, which must see it reach userspace
suite_check_iso() {
	local tag=check-iso dir=$LS_LOGDIR/check-iso rc=0
	make_target iso-busybox iso ROOTFS=busybox || true
	mkdir -p "$dir"
	ls_stable_copy "$(iso_of busybox)" "$dir/product.iso"
	bash "$TOP/iso/check-iso" --firmware bios --as usb --timeout "$BOOT_TIMEOUT" --logs "$dir/bios" "$dir/product.iso" >"$dir/bios.log" 2>&1 || rc=$?
	bash "$TOP/iso/check-iso" --firmware uefi --as cd --timeout "$BOOT_TIMEOUT" --logs "$dir/uefi" "$dir/product.iso" >"$dir/uefi.log" 2>&1 || rc=$?
	local -a lines=()
	mapfile -t lines < <(grep -h '^check-iso: [a-z]*-[a-z]*: ' "$dir/bios.log" "$dir/uefi.log")
	local l
	for l in "${lines[@]}"; do
		tap_diag "$l"
	done
	if ((rc == 0)) && grep -q 'bios-usb: reached userspace' "$dir/bios.log" && grep -q 'uefi-cd: reached userspace' "$dir/uefi.log"; then
		tap_ok "[$tag] iso/check-iso: the product ISO reaches userspace as a USB stick (BIOS) and as a CD (UEFI)"
	else
		tap_notok "[$tag] iso/check-iso: the product ISO reaches userspace as a USB stick (BIOS) and as a CD (UEFI) (exit $rc)" \
			"${lines[@]}" "$(tail -n 2 "$dir/bios.log" "$dir/uefi.log")"
	fi
	tap_test "[$tag] the product ISO's consoles have no BUG:/WARNING:/Oops/Call Trace/KASAN/Kernel panic" \
		no_crash "$dir"/*/*/console.txt
}
no_crash() { # CONSOLE...
	! grep -nE "$LS_CRASH_REGEX" "$@"
}

# ---- missing medium ----------------------------------------------------------
# waited_for CONSOLE REGEX: kernel timestamps "[ t]" of the first line saying the
# wait began ("waiting ..." from the dracut module, else the kernel's start at 0)
# and of the first REGEX line are 9-40 s apart (the module waits 10-11 s from its
# cmdline hook, a little before the "waiting" line)
waited_for() {
	awk -v re="$2" '
	function ts(l) { sub(/^[^\[]*\[ */, "", l); sub(/\].*/, "", l); return l + 0 }
	/^\[ *[0-9.]+\].*livesquash: waiting/ && t0 == "" { t0 = ts($0) }
	/^\[ *[0-9.]+\]/ && $0 ~ re && t1 == "" { t1 = ts($0) }
	END {
		if (t1 == "") { print "no timestamped line matches: " re; exit 1 }
		if (t0 == "") t0 = 0
		d = t1 - t0
		printf "wait began at %.1f s, message at %.1f s: waited %.1f s\n", t0, t1, d
		exit !(d >= 9 && d <= 40)
	}' "$1"
}

suite_missing_medium() {
	local tag=missing-medium dir=$LS_LOGDIR/missing-medium tmo=180
	make_target initramfs initramfs || true
	mkdir -p "$dir"
	if [[ ! -f $LS_KERNEL || ! -f $LS_INITRD ]]; then
		tap_notok "[$tag] kernel $LS_KERNEL and initrd $LS_INITRD exist"
		return 0
	fi
	ls_stable_copy "$LS_KERNEL" "$dir/bzImage"
	ls_stable_copy "$LS_INITRD" "$dir/initrd.img"
	local msg="livesquash: live medium CDLABEL=NOSUCH not found after [0-9]+ s"
	ls_qemu "$tag" "$tmo" --kernel "$dir/bzImage" --initrd "$dir/initrd.img" \
		--append "root=live:CDLABEL=NOSUCH rd.live.image rd.live.timeout=10 console=ttyS0,115200 earlyprintk=serial,ttyS0,115200" \
		--wait-for "$msg" --stop-on "$LS_STOP_REGEX"
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), -kernel/-initrd, no CD, QEMU exit $LS_QEMU_RC"
	local line
	line=$(grep -oE "$msg" "$dir/console.txt" | head -n 1 || true)
	tap_waited "$tag" "[$tag] the console says '$line' ($LS_QEMU_SECONDS s after start, limit $tmo s)" \
		"[$tag] the console says 'livesquash: live medium CDLABEL=NOSUCH not found after 10 s' within $tmo s"
	tap_test "[$tag] the message names rd.live.timeout=10 as the time waited" \
		grep -qF 'livesquash: live medium CDLABEL=NOSUCH not found after 10 s' "$dir/console.txt"
	tap_test "[$tag] the kernel clock shows 9-40 s between the start of the wait and the message (rd.live.timeout=10, whole-second clock)" \
		waited_for "$dir/console.txt" "$msg"
	console_test "$tag"
}

run_suite() { # SUITE
	case $1 in
	busybox-bios) suite_live busybox bios ;;
	busybox-bios-dracut059 | busybox-bios-dracut112)
		# the initramfs made by the host's dracut 059 or forky's 112
		VARIANT=-${1##*-} VARIANT_MAKE=("DRACUT=${1##*dracut}")
		suite_live busybox bios
		VARIANT='' VARIANT_MAKE=()
		;;
	busybox-uefi) suite_live busybox uefi ;;
	linux-6.1)
		# the ISOs with our kernel built from Debian 12's 6.1 (make iso LINUX=6.1)
		VARIANT=-linux6.1 VARIANT_MAKE=(LINUX=6.1)
		suite_live busybox bios
		suite_live busybox uefi
		suite_live busybox bios usb
		suite_live busybox uefi usb
		suite_live debian bios
		suite_live debian uefi usb
		VARIANT='' VARIANT_MAKE=()
		;;
	linux-7.3 | linux-7.2)
		# the busybox ISO with our kernel built from the suite's 7.x (make iso
		# LINUX=7.3: trixie-backports', 7.2: forky's), as a CD through BIOS and as
		# a USB stick through UEFI
		VARIANT=-linux${1#linux-} VARIANT_MAKE=("LINUX=${1#linux-}")
		suite_live busybox bios
		suite_live busybox uefi usb
		VARIANT='' VARIANT_MAKE=()
		;;
	busybox-usb) suite_live busybox bios usb ;;
	busybox-dvd) suite_live busybox bios dvd ;;
	debian-bios) suite_live debian bios ;;
	debian-uefi) suite_live debian uefi ;;
	media) suite_media busybox ;;
	media-debian) suite_media debian ;;
	remaster) suite_remaster ;;
	check-iso) suite_check_iso ;;
	fixtures) suite_fixtures ;;
	missing-medium) suite_missing_medium ;;
	secureboot) suite_secureboot ;;
	netboot) suite_netboot ;;
	esac
}

# ---- two lanes -------------------------------------------------------------------
# Every boot is one QEMU on one core under TCG; with LIVE_JOBS=2 (the default) the
# suites of the Debian ISO, Secure Boot and the network boot run in a second lane
# beside the others: two QEMUs at once, no more. What both lanes use is made
# before the second starts: the ISOs and initramfs images (make_target, once per
# run) and the busybox test ISO (the first lane's first suite). The second lane's
# TAP goes to a file and follows the first's, numbered on.
# run_lane COUNTS SUITE...: (in the background) the suites, TAP numbered from 1;
# "tests passed failed skipped" to COUNTS at the end
run_lane() {
	local counts=$1 s
	shift
	LS_N=0 LS_PASS=0 LS_FAIL=0 LS_SKIP=0
	for s in "$@"; do run_suite "$s"; done
	echo "$LS_N $LS_PASS $LS_FAIL $LS_SKIP" >"$counts"
}

lane2=() lane1=()
for s in "${suites[@]}"; do
	case $s in
	debian-bios | debian-uefi | secureboot | netboot) lane2+=("$s") ;;
	*) lane1+=("$s") ;;
	esac
done
if [[ ${LIVE_JOBS:-2} == 2 && ${#lane1[@]} -gt 0 && ${#lane2[@]} -gt 0 ]]; then
	if [[ " ${lane2[*]} " == *" debian-"* ]]; then make_target iso-debian iso ROOTFS=debian || true; fi
	if [[ " ${lane2[*]} " == *" netboot "* ]]; then make_target initramfs-net initramfs-net || true; fi
	make_target iso-busybox iso ROOTFS=busybox || true
	make_target initramfs initramfs || true
	run_suite "${lane1[0]}"
	lane1=("${lane1[@]:1}")
	# a test ISO both lanes boot must be made before the fork (test_iso, once per run)
	if [[ (" ${lane2[*]} " == *" netboot "* && -z ${test_iso_rc[busybox]:-}) ||
		" ${lane1[*]} " == *" media-debian "* ]]; then
		lane1+=("${lane2[@]}") lane2=()
	fi
else
	lane1=("${suites[@]}") lane2=()
fi
if ((${#lane2[@]} == 0)); then
	for s in "${lane1[@]}"; do run_suite "$s"; done
else
	lane2_tap=$LS_LOGDIR/lane2.tap
	tap_diag "beside the rest, in a second lane: ${lane2[*]} (its TAP follows at the end; meanwhile in $lane2_tap)"
	rm -f "$lane2_tap.counts"
	run_lane "$lane2_tap.counts" "${lane2[@]}" >"$lane2_tap" 2>&1 </dev/null &
	lane2_pid=$!
	for s in "${lane1[@]}"; do run_suite "$s"; done
	wait "$lane2_pid" || true
	tap_diag "the second lane (${lane2[*]}):"
	awk -v off="$LS_N" '/^(not )?ok [0-9]+( |$)/ {
		i = index($0, "ok ") + 3; rest = substr($0, i); n = rest + 0
		sub(/^[0-9]+/, "", rest); $0 = substr($0, 1, i - 1) (n + off) rest
	} { print }' "$lane2_tap"
	if read -r n p f k <"$lane2_tap.counts" 2>/dev/null; then
		LS_N=$((LS_N + n)) LS_PASS=$((LS_PASS + p)) LS_FAIL=$((LS_FAIL + f)) LS_SKIP=$((LS_SKIP + k))
	else
		tap_notok "the second lane (${lane2[*]}) ended before its last suite did (its output above)"
	fi
fi

tap_diag "total time $((SECONDS - run_start)) s"
echo "1..$LS_N"
tap_summary
((LS_FAIL == 0))
