#!/bin/bash
# boot-tests/thirdparty/run.sh: a third-party live ISO (Debian live-build, made and
# cached by livebuild.sh) remastered by iso/remaster and booted in QEMU; TAP on
# stdout, ending with "N passed, N failed". Run as root (live-build, remaster).
#
#  1. the ISO: livebuild.sh (cached under /var/cache/livesquash/live-build/, built
#     if missing, ~7-15 min);
#  2. host checks of the original: its root image is live-build's
#     /live/filesystem.squashfs (the one layout iso/remaster finds), md5sum.txt and
#     sha256sum.txt verify, its boot entries are live-build's;
#  3. the original boots (BIOS, CD): its entries have no serial console, so at
#     isolinux's menu ' console=ttyS0,115200' is typed (QEMU's monitor: Tab, the
#     text, Return); its kernel, live-boot and systemd's login prompt show on ttyS0;
#  4. iso/remaster --add DIR --run CMD --cmdline-add --cmdline-remove: DIR has a
#     marker, a .deb (dpkg-deb --build) in /var/tmp, a systemd service that checks
#     the boot from inside and writes TAP to ttyS1, and an initramfs-tools hook (so
#     the remaster makes the initrd anew with the root's update-initramfs and puts
#     it on the ISO: the boots below use it); CMD installs the .deb and deletes
#     it; the command line gets console=ttyS0,115200 verify-checksums
#     livesquash.remastered=1 and loses quiet splash. Host checks of the result.
#  5. live-boot's verify-checksums is a media check: its initramfs checks the
#     medium's sha256sum.txt (md5sum.txt), then reboots on success ("Verification
#     successfull, rebooting in 10 seconds.") or stops ("Verification failed"). The
#     remastered ISO is booted so (BIOS CD, UEFI USB); then `iso/remaster
#     --cmdline-remove verify-checksums` (boot entries only) makes the ISO whose
#     boots go on to systemd, booted as BIOS CD, UEFI CD, BIOS USB, UEFI USB with the
#     guest checks.
# The cached ISO is never written: its sha256 is compared before and after.
# Environment: BUILD TOP ACCEL MEM (make passes them), THIRDPARTY_TIMEOUT (seconds a
# boot may take, default 900). Logs: $BUILD/tests/thirdparty/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TOP=${TOP:-$(cd "$here/../.." && pwd)}
export BUILD=${BUILD:-$TOP/build}
# shellcheck disable=SC1091 # lib.sh, in boot-tests/
source "$TOP/boot-tests/lib.sh"
LS_CRASH_REGEX="$LS_CRASH_REGEX|UBSAN"

THIRDPARTY_TIMEOUT=${THIRDPARTY_TIMEOUT:-900}
REMASTER=${REMASTER:-$TOP/iso/remaster}
dir=$LS_LOGDIR/thirdparty
# boots that will not reach the guest checks: stop them at once
stop_regex='Verification failed|\(initramfs\) |Kernel panic - not syncing|end Kernel panic|Entering emergency mode|You are in emergency mode|-- System halted'
add_words='console=ttyS0,115200 verify-checksums livesquash.remastered=1'
remove_words='quiet splash'
deb_name=livesquash-remaster-test_1.0_all.deb
run_cmd="dpkg -i /var/tmp/$deb_name && rm /var/tmp/*.deb"

run_start=$SECONDS
mkdir -p "$dir"
tap_diag "livesquash third-party ISO tests: Debian live-build, remastered by iso/remaster"
tap_diag "accelerator: $(ls_accel) (ACCEL=${ACCEL:-auto}), memory $MEM MiB, logs in $dir"

# summary: the last lines; the exit status to end with (1 if anything failed)
summary() {
	tap_diag "total time $((SECONDS - run_start)) s"
	echo "1..$LS_N"
	tap_summary
	((LS_FAIL == 0))
}
if ((EUID != 0)); then
	tap_notok "run as root (live-build and iso/remaster's unpacking need it)"
	summary
	exit
fi

# tail_of FILE [N]: its last N lines (10), nothing if it is missing
tail_of() {
	tail -n "${2:-10}" "$1" 2>/dev/null || true
}

# ---- 1. the ISO -----------------------------------------------------------------
start=$SECONDS rc=0
bash "$here/livebuild.sh" --path >/dev/null 2>&1 ||
	tap_diag "building the live-build ISO (~7-15 min; progress in $dir/livebuild.log)"
nice -n 10 bash "$here/livebuild.sh" >"$dir/livebuild.log" 2>&1 || rc=$?
if ((rc == 0)) && iso=$(bash "$here/livebuild.sh" --path 2>/dev/null); then
	tap_ok "livebuild.sh: $(grep -m1 -oE '(cached|built in [0-9]+ s)' "$dir/livebuild.log") ($((SECONDS - start)) s here): $iso"
else
	mapfile -t lines < <(tail_of "$dir/livebuild.log" 15)
	tap_notok "livebuild.sh (exit $rc, log $dir/livebuild.log)" "${lines[@]}"
	summary
	exit
fi
iso_sum=$(sha256sum "$iso" | cut -d' ' -f1)

# ---- helpers --------------------------------------------------------------------
# iso_files ISO: every file's path in the ISO, sorted
iso_files() {
	xorriso -indev "$1" -find / -type f 2>/dev/null | sed -E "s/^'(.*)'$/\\1/" | LC_ALL=C sort
}
# unpack_iso ISO DIR: every file of the ISO into DIR (made writable, to delete it later)
unpack_iso() {
	if [[ -d $2 ]]; then
		chmod -R u+w "$2"
		rm -rf "$2"
	fi
	mkdir -p "$2"
	xorriso -osirrox on -indev "$1" -extract / "$2" >"$2.log" 2>&1 || return 1
	chmod -R u+w "$2"
}
# sums_verify TREE LIST TOOL: TOOL -c of the ISO's LIST (md5sum.txt, sha256sum.txt)
sums_verify() {
	local tree=$1 list=$2 tool=$3 n
	[[ -s $tree/$list ]] || {
		echo "no $list on the ISO"
		return 1
	}
	n=$(grep -vc '^#' "$tree/$list")
	echo "$n files listed"
	(cd "$tree" && grep -v '^#' "$list" | "$tool" -c --quiet) && ((n >= 5))
}
# layout_is_live_build FILES: live-build's root image is there, and no other layout's
# (the one iso/remaster then finds by itself)
layout_is_live_build() {
	local f=$1 other
	grep -qx /live/filesystem.squashfs "$f" || {
		echo "no /live/filesystem.squashfs"
		return 1
	}
	other=$(grep -E '^/LiveOS/squashfs\.img$|^/casper/[^/]+\.squashfs$|^/arch/[^/]+/airootfs\.(sfs|erofs)$' "$f" || true)
	[[ -z $other ]] || {
		echo "also: $other"
		return 1
	}
	grep -E '^/live/(vmlinuz|initrd)' "$f"
	grep -qE '^/live/vmlinuz' "$f" && grep -qE '^/live/initrd' "$f"
}
# entries TREE: every kernel command line of the ISO's boot entries (isolinux append
# lines, GRUB linux lines) that boots live-boot, one per line: "FILE: LINE"
entries() {
	(cd "$1" && grep -rHE '^[[:space:]]*(append|linux|linuxefi)[[:space:]].*boot=live' --include='*.cfg' . | sed -E 's/[[:space:]]+/ /g')
}
# entries_have TREE "WORDS" "NOT-WORDS": every entry has all WORDS and none of NOT-WORDS
entries_have() {
	local tree=$1 want=$2 not=$3 line w bad=0 n=0
	while IFS= read -r line; do
		n=$((n + 1))
		for w in $want; do
			[[ " ${line#*: } " == *" $w "* ]] || {
				echo "no $w: $line"
				bad=1
			}
		done
		for w in $not; do
			[[ " ${line#*: } " != *" $w "* ]] || {
				echo "has $w: $line"
				bad=1
			}
		done
	done < <(entries "$tree")
	echo "$n boot entries"
	((n >= 2 && !bad))
}
# entries_original TREE: live-build's entries all have boot=live components; two or
# more (isolinux's and GRUB's default entry) quiet splash
entries_original() {
	entries_have "$1" "boot=live components" "" || return 1
	local n
	n=$(entries "$1" | grep -c ' quiet splash' || true)
	echo "$n with quiet splash"
	((n >= 2))
}
# boot_setup ISO: xorriso's report of its El Torito boot images and its system area
# (MBR, GPT, APM partitions), without what moves when files change size: block
# addresses and partition sizes (the first covers the whole ISO), GUIDs made anew
boot_setup() {
	xorriso -indev "$1" -report_el_torito plain -report_system_area plain 2>/dev/null | awk '
	/^(El Torito catalog|ISO image size|GPT lba range|GPT disk GUID|GPT partition GUID)/ { next }
	/^MBR partition      :/ || /^(GPT|APM) start and size :/ { $7 = $8 = ""; print; next }
	/^El Torito boot img :/ { $NF = ""; print; next }
	/^(El Torito|System area|MBR|GPT|APM|Partition offset)/ { print }'
}
same_boot_setup() { # ORIGINAL REMASTERED
	local a b
	a=$(boot_setup "$1")
	b=$(boot_setup "$2")
	echo "$(grep -c . <<<"$a") report lines; $(grep -m1 'System area summary' <<<"$b")"
	[[ -n $a && $a == "$b" ]] && return 0
	diff <(echo "$a") <(echo "$b") | head -n 12
	return 1
}
same_lines() { # WANT GOT: silent if equal, else both
	cmp -s "$1" "$2" && return 0
	echo "original: $(tr '\n' ' ' <"$1")"
	echo "now: $(tr '\n' ' ' <"$2")"
	return 1
}
# squashfs_form IMG: compressor, its options and the block size (unsquashfs -s)
squashfs_form() {
	unsquashfs -s "$1" | grep -E '^(Compression|Block size)|^\s(Dictionary|Filters|compression)' | sort
}

# ---- 2. host checks of the original ------------------------------------------
orig=$dir/original
mkdir -p "$orig"
iso_files "$iso" >"$orig/files"
tap_test "[original] iso/remaster's layout is live-build's: /live/filesystem.squashfs (and no LiveOS, casper, archiso image)" \
	layout_is_live_build "$orig/files"
if unpack_iso "$iso" "$orig/tree"; then
	tap_test "[original] md5sum.txt verifies ($(du -m --apparent-size "$iso" | cut -f1) MiB ISO)" sums_verify "$orig/tree" md5sum.txt md5sum
	tap_test "[original] sha256sum.txt verifies" sums_verify "$orig/tree" sha256sum.txt sha256sum
	tap_test "[original] its boot entries (isolinux, GRUB) boot live-boot ('boot=live components'), the default ones with 'quiet splash'" \
		entries_original "$orig/tree"
	squashfs_form "$orig/tree/live/filesystem.squashfs" >"$orig/squashfs-form" 2>&1 || true
	tap_diag "original root image: $(tr '\n' ' ' <"$orig/squashfs-form")"
else
	tap_notok "[original] unpack the ISO with xorriso" "$(tail_of "$orig/tree.log" 3)"
fi

console_check() { # TAG NAME
	local -a problems=()
	mapfile -t problems < <(ls_console_problems "$LS_LOGDIR/$2/console.txt")
	if ((${#problems[@]} == 0)); then
		tap_ok "[$1] console has no ${LS_CRASH_REGEX//|/\/}"
	else
		tap_notok "[$1] console has no ${LS_CRASH_REGEX//|/\/}" "${problems[@]}"
	fi
}
last_lines() { # NAME
	grep -v '^\s*$' "$LS_LOGDIR/$1/console.txt" | tail -n 8
}

# ---- 3. the original boots (BIOS, CD) -----------------------------------------
# Its entries have no console=ttyS0: at isolinux's menu, Tab and ' console=ttyS0,115200'
# are typed (the ISO is not changed), then its kernel, live-boot and systemd's
# serial getty show on ttyS0.
boot_original() {
	local tag=original-bios-cd name=thirdparty/original-bios-cd typed=' console=ttyS0,115200'
	local kernel_initrd need c=$LS_LOGDIR/thirdparty/original-bios-cd/console.txt
	# what isolinux's default entry loads (the versioned names are the same files)
	kernel_initrd=$(du -cb "$orig"/tree/live/vmlinuz "$orig"/tree/live/initrd.img 2>/dev/null | tail -n1 | cut -f1)
	need=$((kernel_initrd + 16 * 1048576))
	ls_qemu "$name" "$THIRDPARTY_TIMEOUT" --iso "$iso" --isolinux-append "$typed" \
		--wait-for 'login: *$' --stop-on "$stop_regex"
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), QEMU exit $LS_QEMU_RC, $LS_QEMU_KEYS keys sent, read ${LS_QEMU_READ:-?} bytes"
	local -a last=()
	mapfile -t last < <(last_lines "$name")
	if ((LS_QEMU_KEYS == ${#typed} + 2)); then
		tap_ok "[$tag] isolinux's menu got Tab, '$typed', Return through QEMU's monitor ($(grep -m1 -o 'drives idle.*bytes' "$LS_LOGDIR/$name/monitor.log"))"
	else
		tap_notok "[$tag] isolinux's menu got Tab, '$typed', Return through QEMU's monitor ($LS_QEMU_KEYS keys)" "$(tail_of "$LS_LOGDIR/$name/monitor.log" 3)"
	fi
	if ((LS_QEMU_FOUND)) && grep -q 'Debian GNU/Linux 12' "$c"; then
		tap_ok "[$tag] its kernel, live-boot initrd and root image booted to systemd's login prompt on ttyS0 ($LS_QEMU_SECONDS s): '$(grep -m1 -o 'Debian GNU/Linux 12.*' "$c")'"
	else
		tap_notok "[$tag] its kernel, live-boot initrd and root image booted to a login prompt on ttyS0 within $THIRDPARTY_TIMEOUT s" "${last[@]}"
	fi
	if [[ -n $LS_QEMU_READ ]] && ((LS_QEMU_READ > need)); then
		tap_ok "[$tag] the guest read $((LS_QEMU_READ / 1048576)) MiB from the CD: its kernel and initrd ($((kernel_initrd / 1048576)) MiB) and more than 16 MiB of its root image"
	else
		tap_notok "[$tag] the guest read its kernel and initrd ($((kernel_initrd / 1048576)) MiB) and more than 16 MiB of its root image from the CD" \
			"read: ${LS_QEMU_READ:-nothing sampled} bytes" "$(grep -m1 'cd0:' "$LS_LOGDIR/$name/blockstats.txt" 2>/dev/null)"
	fi
	console_check "$tag" "$name"
}
boot_original

# ---- 4. remaster ------------------------------------------------------------------
if ! grep -q cmdline-add "$REMASTER" 2>/dev/null; then
	tap_skip "[remaster] $REMASTER has no --cmdline-add yet: remaster and its boots skipped"
	summary
	exit
fi
rem=$dir/remaster
rm -rf "$rem"
mkdir -p "$rem"
token="livesquash remaster test $(date -u +%FT%TZ) $RANDOM$RANDOM"

# the .deb: installs /usr/share/livesquash-remaster-test/ok
make_deb() {
	local p=$rem/deb
	mkdir -p "$p/DEBIAN" "$p/usr/share/livesquash-remaster-test"
	cat >"$p/DEBIAN/control" <<-EOF
		Package: livesquash-remaster-test
		Version: 1.0
		Architecture: all
		Maintainer: livesquash boot tests <root@localhost>
		Section: misc
		Priority: optional
		Description: livesquash boot-test package
		 Installed into a remastered live ISO by iso/remaster --run (dpkg -i).
	EOF
	echo "installed by iso/remaster --run" >"$p/usr/share/livesquash-remaster-test/ok"
	chmod -R u=rwX,go=rX "$p"
	dpkg-deb --root-owner-group --build "$p" "$rem/$deb_name"
}
# the folder merged into / by --add
make_add() {
	local a=$rem/add
	install -d -m 0755 "$a/etc/systemd/system/multi-user.target.wants" "$a/usr/local/sbin" "$a/var"
	install -d -m 1777 "$a/var/tmp"
	echo "$token" >"$a/etc/livesquash-remaster-marker"
	# an initramfs-tools hook: the initramfs setup changes, so the remaster must make
	# the initrd anew with the root's own update-initramfs (live-boot's hooks with it)
	# and put it on the ISO, which the boots then use; the hook leaves a mark in it
	install -d -m 0755 "$a/etc/initramfs-tools/hooks"
	# shellcheck disable=SC2016 # the hook's own variables
	printf '%s\n' '#!/bin/sh' 'PREREQ=""' 'prereqs() { echo "$PREREQ"; }' \
		'case $1 in prereqs) prereqs; exit 0 ;; esac' \
		'mkdir -p "${DESTDIR}/etc"' "echo $token >\"\${DESTDIR}/etc/livesquash-remastered\"" >"$a/etc/initramfs-tools/hooks/livesquash-remastered"
	chmod 0755 "$a/etc/initramfs-tools/hooks/livesquash-remastered"
	install -m 0755 "$here/guest-check.sh" "$a/usr/local/sbin/livesquash-remaster-check"
	cat >"$a/etc/systemd/system/livesquash-remaster-check.service" <<-EOF
		# livesquash boot tests: check the remastered live system from inside (TAP on
		# ttyS1), then power off. Ordered after multi-user.target: the end of boot.
		[Unit]
		Description=livesquash remaster checks
		DefaultDependencies=no
		After=multi-user.target

		[Service]
		Type=oneshot
		ExecStart=/usr/local/sbin/livesquash-remaster-check
		StandardOutput=journal+console

		[Install]
		WantedBy=multi-user.target
	EOF
	ln -s /etc/systemd/system/livesquash-remaster-check.service \
		"$a/etc/systemd/system/multi-user.target.wants/livesquash-remaster-check.service"
	cp "$rem/$deb_name" "$a/var/tmp/"
}
# (in a bash of its own: set -e holds there, not in tap_test's `|| rc=$?`)
tap_test "[remaster] a .deb made with dpkg-deb --build and the --add folder (marker, service, checker, the .deb in /var/tmp)" \
	env rem="$rem" deb_name="$deb_name" token="$token" here="$here" \
	bash -euo pipefail -c "$(declare -f make_deb make_add); make_deb; make_add"

remastered=$rem/remastered.iso
start=$(ls_now) rc=0
bash "$REMASTER" --add "$rem/add" --run "$run_cmd" --cmdline-add "$add_words" --cmdline-remove "$remove_words" \
	"$iso" "$remastered" >"$rem/remaster.log" 2>&1 || rc=$?
remaster_seconds=$(ls_elapsed "$start" "$(ls_now)")
remaster_desc="iso/remaster --add DIR --run '$run_cmd' --cmdline-add '$add_words' --cmdline-remove '$remove_words' IN OUT"
if ((rc == 0)) && [[ -s $remastered ]]; then
	tap_ok "[remaster] $remaster_desc ($remaster_seconds s)"
else
	mapfile -t lines < <(tail_of "$rem/remaster.log" 15)
	tap_notok "[remaster] $remaster_desc (exit $rc after $remaster_seconds s, log $rem/remaster.log)" "${lines[@]}"
	summary
	exit
fi
tap_test "[remaster] it found live-build's root image by itself (its log says 'extracting /live/filesystem.squashfs')" \
	grep -F 'extracting /live/filesystem.squashfs' "$rem/remaster.log"

# host checks of the remastered ISO
new=$rem/tree
if unpack_iso "$remastered" "$new"; then
	tap_test "[remaster] md5sum.txt verifies (the changed files' lines rewritten)" sums_verify "$new" md5sum.txt md5sum
	tap_test "[remaster] sha256sum.txt verifies" sums_verify "$new" sha256sum.txt sha256sum
	tap_test "[remaster] every boot entry (isolinux, GRUB) has '$add_words' and neither quiet nor splash" \
		entries_have "$new" "boot=live components $add_words" "$remove_words"
	if [[ -f $orig/tree/live/filesystem.size ]]; then
		size_grew() {
			local a b
			a=$(tr -d '\n' <"$orig/tree/live/filesystem.size") b=$(tr -d '\n' <"$new/live/filesystem.size")
			echo "filesystem.size: $a -> $b"
			[[ $b =~ ^[0-9]+$ && $a =~ ^[0-9]+$ ]] && ((b > a))
		}
		tap_test "[remaster] live/filesystem.size was rewritten (larger: files were added)" size_grew
	else
		tap_test "[remaster] no live/filesystem.size made up (live-build $(lb --version 2>/dev/null) writes none)" \
			test ! -e "$new/live/filesystem.size"
	fi
	squashfs_form "$new/live/filesystem.squashfs" >"$rem/squashfs-form" 2>&1 || true
	tap_test "[remaster] the new root image has the original's compressor, options and block size" \
		same_lines "$orig/squashfs-form" "$rem/squashfs-form"
	image_has() {
		local img=$new/live/filesystem.squashfs f
		unsquashfs -lln "$img" >"$rem/image.list" 2>&1 || return 1
		for f in /etc/livesquash-remaster-marker /usr/share/livesquash-remaster-test/ok \
			/usr/local/sbin/livesquash-remaster-check \
			/etc/systemd/system/multi-user.target.wants/livesquash-remaster-check.service; do
			grep -qE " squashfs-root$f( -> .*)?$" "$rem/image.list" || {
				echo "missing $f"
				return 1
			}
		done
		! grep -E ' squashfs-root/var/tmp/.*\.deb$' "$rem/image.list" || return 1
		[[ $(unsquashfs -cat "$img" /etc/livesquash-remaster-marker) == "$token" ]] || {
			echo "the marker's content differs"
			return 1
		}
		unsquashfs -cat "$img" /var/lib/dpkg/status |
			awk '/^Package: livesquash-remaster-test$/ { p = 1 } p && /^Status:/ { print; exit }' |
			grep -x 'Status: install ok installed'
	}
	tap_test "[remaster] unsquashfs: the image has the marker, the package's file (dpkg status: installed), the service and no .deb in /var/tmp" image_has
	initrd_remade() {
		grep -m1 'making the initrd for' "$rem/remaster.log" || { echo "the remaster made no initrd"; return 1; }
		local f
		for f in "$new"/live/initrd.img*; do
			cmp -s "$f" "$orig/tree/live/${f##*/}" && { echo "${f##*/} is the original's"; return 1; }
			# live-build's root compresses with gzip (its only compressor)
			[[ $(gzip -dc <"$f" 2>/dev/null | cpio -i --to-stdout --quiet etc/livesquash-remastered 2>/dev/null) == "$token" ]] ||
				{ echo "${f##*/} lacks the hook's etc/livesquash-remastered"; return 1; }
		done
		for f in "$new"/live/vmlinuz*; do
			cmp -s "$f" "$orig/tree/live/${f##*/}" || echo "(${f##*/} changed too: the root's newest kernel)"
		done
	}
	tap_test "[remaster] the --add put an initramfs-tools hook in the root: update-initramfs made the initrd anew in the container, and live/initrd.img* on the ISO is it (its etc/livesquash-remastered from the hook)" initrd_remade
else
	tap_notok "[remaster] unpack the remastered ISO with xorriso" "$(tail_of "$new.log" 3)"
fi
tap_test "[remaster] the boot setup is the original's (El Torito BIOS and UEFI images, MBR partitions)" \
	same_boot_setup "$iso" "$remastered"

# the ISO whose boots go on past the initramfs: verify-checksums removed again
booting=$rem/booting.iso
start=$(ls_now) rc=0
bash "$REMASTER" --cmdline-remove verify-checksums "$remastered" "$booting" >"$rem/remaster-cmdline.log" 2>&1 || rc=$?
cmdline_seconds=$(ls_elapsed "$start" "$(ls_now)")
if ((rc == 0)) && [[ -s $booting ]]; then
	tap_ok "[remaster] iso/remaster --cmdline-remove verify-checksums (boot entries only: $cmdline_seconds s)"
else
	mapfile -t lines < <(tail_of "$rem/remaster-cmdline.log" 10)
	tap_notok "[remaster] iso/remaster --cmdline-remove verify-checksums (exit $rc, log $rem/remaster-cmdline.log)" "${lines[@]}"
	booting=""
fi
if [[ -n $booting ]] && unpack_iso "$booting" "$rem/tree2"; then
	tap_test "[remaster] after --cmdline-remove: md5sum.txt verifies" sums_verify "$rem/tree2" md5sum.txt md5sum
	tap_test "[remaster] after --cmdline-remove: sha256sum.txt verifies" sums_verify "$rem/tree2" sha256sum.txt sha256sum
	tap_test "[remaster] after --cmdline-remove: no entry has verify-checksums, the other words stay" \
		entries_have "$rem/tree2" "console=ttyS0,115200 livesquash.remastered=1" "verify-checksums quiet splash"
	cmp_image() { cmp "$new/live/filesystem.squashfs" "$rem/tree2/live/filesystem.squashfs"; }
	tap_test "[remaster] after --cmdline-remove: the root image is the same bytes (not unpacked)" cmp_image
fi
# the unpacked trees are big: keep only their lists
for t in "$orig/tree" "$new" "$rem/tree2"; do
	[[ -d $t ]] && chmod -R u+w "$t" && rm -rf "$t"
done

# ---- 5. boots ---------------------------------------------------------------------
# fw_args FIRMWARE MEDIUM: ls_qemu's options for bios|uefi and cd|usb
fw_args() {
	FW=()
	[[ $1 == uefi ]] && FW+=(--uefi)
	[[ $2 == usb ]] && FW+=(--usb)
	return 0
}
# live-boot's media check on the verify-checksums ISO
boot_verify() { # FIRMWARE MEDIUM
	local tag=verify-$1-$2 name=thirdparty/verify-$1-$2
	fw_args "$1" "$2"
	ls_qemu "$name" "$THIRDPARTY_TIMEOUT" --iso "$remastered" "${FW[@]}" --press-enter --stop-on "$stop_regex"
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), QEMU exit $LS_QEMU_RC, $LS_QEMU_KEYS Returns sent, read ${LS_QEMU_READ:-?} bytes"
	local c=$LS_LOGDIR/$name/console.txt size
	size=$(stat -c %s "$remastered")
	local -a last=()
	mapfile -t last < <(last_lines "$name")
	if grep -q 'Command line:.*verify-checksums' "$c"; then
		tap_ok "[$tag] the kernel's command line has verify-checksums"
	else
		tap_notok "[$tag] the kernel's command line has verify-checksums" "${last[@]}"
	fi
	if grep -q 'Verifying checksums' "$c" && grep -q 'Verification successfull' "$c" &&
		! grep -q 'Verification failed' "$c"; then
		tap_ok "[$tag] live-boot's initramfs checked the medium's checksums: '$(grep -m1 -o 'Verification successfull.*' "$c")'"
	else
		tap_notok "[$tag] live-boot's initramfs says 'Verifying checksums' then 'Verification successfull' (not 'Verification failed')" "${last[@]}"
	fi
	if [[ -n $LS_QEMU_READ ]] && ((LS_QEMU_READ >= size * 9 / 10)); then
		tap_ok "[$tag] the guest read $((LS_QEMU_READ / 1048576)) MiB from the ${2^^}: the whole medium ($((size / 1048576)) MiB) was checked"
	else
		tap_notok "[$tag] the guest read at least 90% of the medium's $((size / 1048576)) MiB" "read: ${LS_QEMU_READ:-nothing sampled} bytes"
	fi
	if [[ $LS_QEMU_RC == 0 && -z $LS_QEMU_STOPPED ]]; then
		tap_ok "[$tag] then the guest reset by itself (sysrq b; QEMU -no-reboot exits)"
	else
		tap_notok "[$tag] then the guest reset by itself (QEMU exit $LS_QEMU_RC${LS_QEMU_STOPPED:+, stopped on: $LS_QEMU_STOPPED})" "${last[@]}"
	fi
	console_check "$tag" "$name"
}

# a boot to systemd with the guest checks
boot_checked() { # FIRMWARE MEDIUM
	local tag=$1-$2 name=thirdparty/$1-$2
	fw_args "$1" "$2"
	ls_qemu "$name" "$THIRDPARTY_TIMEOUT" --iso "$booting" "${FW[@]}" --press-enter --stop-on "$stop_regex"
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), QEMU exit $LS_QEMU_RC, $LS_QEMU_KEYS Returns sent, read ${LS_QEMU_READ:-?} bytes"
	local r=$LS_LOGDIR/$name/results.txt
	local -a last=()
	mapfile -t last < <(last_lines "$name")
	if [[ $LS_QEMU_RC == 0 && -z $LS_QEMU_STOPPED ]]; then
		tap_ok "[$tag] booted and powered off by itself ($LS_QEMU_SECONDS s)"
	else
		tap_notok "[$tag] booted and powered off by itself (QEMU exit $LS_QEMU_RC${LS_QEMU_STOPPED:+, stopped on: $LS_QEMU_STOPPED})" "${last[@]}"
	fi
	tap_guest "$r" "[$tag]"
	if grep -q '^# livesquash guest checks end' "$r" && ((LS_GUEST_SEEN >= 10)); then
		tap_ok "[$tag] the guest checks ran to the end ($LS_GUEST_SEEN results)"
	else
		tap_notok "[$tag] the guest checks ran to the end ($LS_GUEST_SEEN results)" "$(tail_of "$r" 3)"
	fi
	if grep -qxF "# marker: $token" "$r"; then
		tap_ok "[$tag] the marker holds this run's token"
	else
		tap_notok "[$tag] the marker holds this run's token" "$(grep -m1 '^# marker:' "$r" || echo 'no marker line')"
	fi
	local medium want
	medium=$(sed -n 's/^# medium: //p' "$r" | head -n1)
	if [[ $2 == usb ]]; then want='^/dev/sd[a-z]+[0-9]* iso9660$'; else want='^/dev/sr[0-9] iso9660$'; fi
	if [[ $medium =~ $want ]]; then
		tap_ok "[$tag] live-boot found its medium on the $2 drive: $medium"
	else
		tap_notok "[$tag] live-boot found its medium on the $2 drive" "medium: '${medium:-none reported}'"
	fi
	if grep -q 'Command line:.*livesquash.remastered=1' "$LS_LOGDIR/$name/console.txt"; then
		tap_ok "[$tag] the kernel's console is on ttyS0 (console=ttyS0,115200 from the remaster)"
	else
		tap_notok "[$tag] the kernel's console is on ttyS0 (console=ttyS0,115200 from the remaster)" "${last[@]}"
	fi
	console_check "$tag" "$name"
}

boot_verify bios cd
boot_verify uefi usb
if [[ -n $booting ]]; then
	boot_checked bios cd
	boot_checked uefi cd
	boot_checked bios usb
	boot_checked uefi usb
fi

tap_test "the cached ISO is unchanged (sha256 before and after the remaster and the boots)" \
	test "$(sha256sum "$iso" | cut -d' ' -f1)" = "$iso_sum"
summary
