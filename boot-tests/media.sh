#!/bin/bash
# shellcheck disable=SC2154,SC2034 # TEST_ISO, TEST_MANIFEST, TOP ... come from run.sh; LB_* go to its live_boot
# boot-tests/media.sh: the live system on its media (sourced by run.sh: suite_media).
# The busybox test ISO booted through GRUB's menu entries (picked with the arrow keys
# through QEMU's monitor) or, for options no entry has, with the ISO's own kernel,
# initrd and an entry's command line (-kernel/-initrd, the ISO still the medium):
#   virtio-check    the ISO as a virtio disk, entry "check the medium first"
#   virtio-uefi     the same through OVMF, default entry
#   persist-write   a stick with iso/mkpersist's partition, UEFI, entry "persistent":
#                   writes a file, deletes one of the image, chmods another
#   persist-verify  the same stick again, BIOS: every change is there
#   persist-readonly  + rd.live.overlay.readonly, the partition named by PARTLABEL=:
#                   changes seen, new writes go to RAM
#   persist-reset   + rd.live.overlay.reset, the partition named by PARTUUID=: the
#                   changes are gone
#   persist-vfat    rd.live.overlay=LABEL=VFATP:/persist.img: the overlay in an ext4
#                   image file on a vfat disk; persist-full: a full one, its message
#   ovl-fallback    rootflags= with an option overlayfs refuses: dracut's overlayfs
#                   module fails, our mount hook 99 mounts the overlay, one message
#   ram             CD, entry "copy to RAM": the medium released, ejected by the host
#                   (QEMU refuses while the guest holds it), every file read after
#   ram-lowmem      -m 200 with rd.live.ram and rd.live.overlay= on a CD: both refused
#                   with their message, the boot goes on from the medium
#   ram-background  USB stick, rd.live.ram=background: the loop device switches to
#                   the RAM copy, the medium is released; rd.live.overlay.size=64
#   isofile         a GRUB "multiboot" CD loops the ISO file on an ext4 disk through
#                   our loopback.cfg, whose entry boots it with iso-scan/filename=
#   check-bad       one flipped byte in the image, entry "check the medium first":
#                   the message and dracut's emergency shell
#   missing-image, missing-isofile, corrupt-image  their messages (rd.shell=0
#                   rd.emergency=poweroff)
# and a table of the boot times (uptime when the guest checks start).



# flip_byte FILE OFFSET: invert one byte in place
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	# shellcheck disable=SC2059 # the format is the byte, as an octal escape
	printf "$(printf '\\%03o' $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# image_extent ISO: "LBA SIZE" of LiveOS/squashfs.img in the ISO
image_extent() {
	xorriso -indev "$1" -find /LiveOS/squashfs.img -exec report_lba 2>/dev/null |
		awk -F ',' '/squashfs.img/ { gsub(/ /, ""); print $2, $4 }' | tail -n 1
}

# media_inputs DIR: the files the boots use, made from the test ISO
media_inputs() {
	local d=$1 p=$2 ext lba size
	rm -rf "$d/in" && mkdir -p "$d/in"
	xorriso -osirrox on -indev "$TEST_ISO" -extract /boot/vmlinuz "$d/in/vmlinuz" \
		-extract /boot/initrd.img "$d/in/initrd.img" -extract /boot/grub/grub.cfg "$d/in/grub.cfg" \
		-extract /boot/grub/loopback.cfg "$d/in/loopback.cfg" >"$d/in/extract.log" 2>&1
	tap_test "[$p] the test ISO has /boot/vmlinuz, initrd.img, grub.cfg with 5 entries and loopback.cfg" \
		media_have_boot "$d/in"
	tap_test "[$p] iso/mkpersist --size 64M adds partition LSPERSIST (ext4) to a stick image of the ISO; checkisomd5 still passes" \
		media_stick "$d/in"
	ext=$(image_extent "$TEST_ISO")
	read -r lba size <<<"$ext"
	cp "$TEST_ISO" "$d/in/bad.iso" && cp "$TEST_ISO" "$d/in/badsb.iso"
	# a byte in the middle of the image's data; and the superblock's inode table
	# start (bytes 64-71) pointing past the image's end
	flip_byte "$d/in/bad.iso" $((lba * 2048 + size / 2))
	printf '\377\377\377\177\000\000\000\000' | dd of="$d/in/badsb.iso" bs=1 seek=$((lba * 2048 + 64)) conv=notrunc status=none
	tap_test "[$p] a copy of the ISO with one byte of its image flipped, one with a broken superblock (extent LBA ${lba:-?}, ${size:-?} bytes)" \
		test -n "$lba" -a -n "$size"
	rm -rf "$d/in/isodisk" && mkdir -p "$d/in/isodisk/isos"
	cp "$TEST_ISO" "$d/in/isodisk/isos/live.iso"
	tap_test "[$p] an ext4 disk image holding the ISO as /isos/live.iso (mkfs.ext4 -d)" \
		mkfs.ext4 -q -F -L ISODISK -d "$d/in/isodisk" "$d/in/isodisk.img" "$(($(stat -c %s "$TEST_ISO") / 1048576 + 48))M"
	rm -rf "$d/in/isodisk"
	tap_test "[$p] a GRUB CD (grub-mkrescue) whose entry loops /isos/live.iso and reads its loopback.cfg" \
		media_multiboot "$d/in"
	tap_test "[$p] a vfat disk image (mformat) holding an ext4 image persist.img and a full one, full.img (mkfs.ext4, mcopy)" \
		media_vfat "$d/in"
}
media_vfat() {
	rm -rf "$1/vfat.img" "$1/persist.img" "$1/full.img" "$1/fill" && mkdir "$1/fill"
	head -c 13M /dev/urandom >"$1/fill/filler"
	truncate -s 64M "$1/vfat.img" && mformat -i "$1/vfat.img" -T 131072 -v VFATP :: &&
		mkfs.ext4 -q -F "$1/persist.img" 32M && mkfs.ext4 -q -F -d "$1/fill" "$1/full.img" 16M &&
		mcopy -i "$1/vfat.img" "$1/persist.img" "$1/full.img" :: || return 1
	rm -rf "$1/fill" "$1/persist.img" "$1/full.img"
	mdir -i "$1/vfat.img" ::
}
media_have_boot() {
	[[ -s $1/vmlinuz && -s $1/initrd.img && -s $1/loopback.cfg ]] || return 1
	grep -c '^menuentry' "$1/grub.cfg"
	[[ $(grep -c '^menuentry' "$1/grub.cfg") == 5 ]]
}
media_stick() {
	rm -f "$1/stick.img"
	bash "$TOP/iso/mkpersist" --size 64M "$TEST_ISO" "$1/stick.img" || return 1
	sfdisk -d "$1/stick.img" | grep 'name="LSPERSIST"'
	checkisomd5 "$1/stick.img" | tail -n 1
	checkisomd5 "$1/stick.img" >/dev/null
}
media_multiboot() {
	rm -rf "$1/mb" && mkdir -p "$1/mb/boot/grub"
	cat >"$1/mb/boot/grub/grub.cfg" <<'EOT'
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
insmod part_gpt
insmod part_msdos
insmod ext2
insmod iso9660
insmod loopback
set timeout=1
menuentry "ISO file /isos/live.iso through its loopback.cfg" {
	search --no-floppy --file --set=isodisk /isos/live.iso
	loopback loop ($isodisk)/isos/live.iso
	set iso_path=/isos/live.iso
	export iso_path
	set timeout=2
	export timeout
	set root=(loop)
	configfile /boot/grub/loopback.cfg
}
EOT
	grub-mkrescue -o "$1/multiboot.iso" "$1/mb" -- -volid MULTIBOOT >"$1/mb.log" 2>&1 || {
		tail -n 3 "$1/mb.log"
		return 1
	}
}

# media_kmsg TAG REGEX: the guest's kernel log (its @@ KMSG lines) has REGEX
media_kmsg() {
	grep -E "^@@ KMSG .*$2" "$LS_LOGDIR/$1/results.txt" || {
		echo "no KMSG line matches: $2"
		grep '^@@ KMSG' "$LS_LOGDIR/$1/results.txt" | tail -n 5
		return 1
	}
}

# media_up TAG: uptime (s) when the guest checks started
media_up() {
	sed -n 's/^# .*guest checks start at uptime \([0-9.]*\) s.*/\1/p' "$LS_LOGDIR/$1/results.txt" | head -n 1
}

# media_stop TAG REGEX...: a boot that must end in a message: the console has each
# REGEX; no crash
media_console_has() {
	local f=$LS_LOGDIR/$1/console.txt re
	shift
	for re in "$@"; do
		grep -m1 -E "$re" "$f" || {
			echo "console has no line matching: $re"
			grep -v '^\s*$' "$f" | tail -n 6
			return 1
		}
	done
}

# suite_media ROOTFS: the boots for the busybox ISO (tags media-*, in `make check`) or
# the debian one (media-debian-*, in `make check-full`)
suite_media() {
	local rootfs=$1 p=media iso in tmo=$BOOT_TIMEOUT lowmem=200
	if [[ $rootfs == debian ]]; then
		p=media-debian tmo=$DEBIAN_TIMEOUT lowmem=320
	fi
	local dir=$LS_LOGDIR/$p
	make_target "iso-$rootfs" iso ROOTFS="$rootfs" || true
	iso=$(iso_of "$rootfs")
	host_checks "$rootfs" "$iso" "$p" || return 0
	test_iso "$rootfs" "$p" || return 0
	mkdir -p "$dir"
	media_inputs "$dir" "$p"
	in=$dir/in
	local persist plain
	persist=$(ls_grub_entry 2 "$in/grub.cfg")
	plain=$(ls_grub_entry 0 "$in/grub.cfg")
	# a file of the image to delete and one to chmod: plain files in /etc, not
	# hostname and no dot file (Debian makes /etc/.pwd.lock again at every boot)
	local pdel pmode
	{ read -r pdel && read -r pmode; } < <(awk -F '\t' '$2 == "f" && $1 ~ /^\.\/etc\/[^\/.][^\/]*$/ && $1 != "./etc/hostname" { print $1 }' "$TEST_MANIFEST")
	local pconf
	pconf=$(printf 'LS_PDEL=%q\nLS_PMODE=%q' "$pdel" "$pmode")

	# the ISO as a virtio disk, GRUB entry 3: rd.live.check
	LB_ARGS=(--menu-entry 3)
	live_boot "$p-virtio-check" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" virtio
	tap_test "[$p-virtio-check] rd.live.check: the image's sha256 is right (kernel log)" \
		media_kmsg "$p-virtio-check" 'livesquash: LiveOS/squashfs.img: sha256 OK'
	tap_test "[$p-virtio-check] rd.live.check: checkisomd5 passes on the virtio disk (console)" \
		media_console_has "$p-virtio-check" 'the result is: PASS'

	# the ISO as a virtio disk through UEFI, default entry
	live_boot "$p-virtio-uefi" "$TEST_ISO" uefi "$tmo" "$TEST_MANIFEST" "" virtio

	# persistence on a stick: write (UEFI), verify (BIOS), read-only, reset
	if [[ -s $in/stick.img ]]; then
		LB_ARGS=(--menu-entry 2)
		LB_CONF="LS_PERSIST=write"$'\n'"$pconf"
		live_boot "$p-persist-write" "$TEST_ISO" uefi "$tmo" "$TEST_MANIFEST" "" "stick:$in/stick.img"
		LB_ARGS=(--menu-entry 2)
		LB_CONF="LS_PERSIST=verify"$'\n'"$pconf"
		live_boot "$p-persist-verify" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" "stick:$in/stick.img"
		# the same partition by its GPT name and by its GPT UUID (dracut's label_uuid_to_dev)
		local partuuid
		partuuid=$(sfdisk --part-uuid "$in/stick.img" 4 | tr 'A-F' 'a-f')
		LB_ARGS=(--kernel "$in/vmlinuz" --initrd "$in/initrd.img" --append "${persist/=LABEL=LSPERSIST/=PARTLABEL=LSPERSIST} rd.live.overlay.readonly")
		LB_CONF="LS_PERSIST=readonly"$'\n'"$pconf"
		live_boot "$p-persist-readonly" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" "stick:$in/stick.img"
		LB_ARGS=(--kernel "$in/vmlinuz" --initrd "$in/initrd.img" --append "${persist/LABEL=LSPERSIST/PARTUUID=$partuuid} rd.live.overlay.reset")
		LB_CONF="LS_PERSIST=reset"$'\n'"$pconf"
		live_boot "$p-persist-reset" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" "stick:$in/stick.img"
	fi

	# persistence in an ext4 image file on a vfat disk; a full one
	LB_ARGS=(--kernel "$in/vmlinuz" --initrd "$in/initrd.img" --append "$plain rd.live.overlay=LABEL=VFATP:/persist.img"
		-- -drive "if=none,id=vfat,format=raw,snapshot=on,file=$in/vfat.img" -device "virtio-blk-pci,drive=vfat")
	LB_CONF=$'LS_PERSIST=image\nLS_PIMAGE=/persist.img'
	live_boot "$p-persist-vfat" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" cd
	LB_ARGS=(--kernel "$in/vmlinuz" --initrd "$in/initrd.img" --append "$plain rd.live.overlay=LABEL=VFATP:/full.img"
		-- -drive "if=none,id=vfat,format=raw,snapshot=on,file=$in/vfat.img" -device "virtio-blk-pci,drive=vfat")
	live_boot "$p-persist-full" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" cd
	tap_test "[$p-persist-full] a full persistence image: one message, its changes used read-only, the boot goes on" \
		media_console_has "$p-persist-full" 'livesquash: persistence device LABEL=VFATP is full \([0-9]+ KiB free\): its changes are used read-only, new ones last until power-off'

	# dracut's overlayfs module fails (a mount option overlayfs does not know, given
	# with rootflags=, which it passes on): mount hook 99 mounts the overlay itself
	LB_ARGS=(--kernel "$in/vmlinuz" --initrd "$in/initrd.img" --append "$plain rootflags=livesquash_no_such_option")
	live_boot "$p-ovl-fallback" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" cd
	tap_test "[$p-ovl-fallback] dracut's overlay mount refused (rootflags=livesquash_no_such_option): one message, ours mounts it, the boot goes on" \
		media_console_has "$p-ovl-fallback" "livesquash: dracut's overlayfs module left /sysroot unmounted; mounted the overlay \\(lowerdir=/run/rootfsbase,upperdir=/run/overlayfs,workdir=/run/ovlwork\\)"

	# copy to RAM from a CD (entry 1); the host ejects the CD once the guest says
	# it is released. Debian's udev locks the tray again for the eject button
	# (60-cdrom_id.rules, at every change event), so there the eject is forced: the
	# guest's own checks (not mounted, no loop on it, no holders) say it is not held
	local eject='eject ide1-cd0'
	[[ $rootfs == debian ]] && eject='eject -f ide1-cd0'
	LB_ARGS=(--menu-entry 1 --on-result '^@@ RELEASED' "$eject")
	LB_CONF=$'LS_IMG=/run/initramfs/ram/squashfs.img\nLS_RELEASED=sr0\nLS_EJECT=1'
	live_boot "$p-ram" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" cd
	tap_test "[$p-ram] QEMU's monitor ejected the CD ('$eject'; without -f it refuses a CD whose tray the guest holds locked)" \
		media_ejected "$p-ram"
	tap_test "[$p-ram] the kernel log says the image is in RAM" \
		media_kmsg "$p-ram" 'livesquash: LiveOS/squashfs.img is in RAM'

	# too little memory for the copy, and no persistence device: both said, boot goes on
	LB_ARGS=(--mem "$lowmem" --kernel "$in/vmlinuz" --initrd "$in/initrd.img" --append "$persist rd.live.ram")
	live_boot "$p-ram-lowmem" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" cd
	tap_test "[$p-ram-lowmem] -m $lowmem: one message, rd.live.ram refused for lack of memory, the boot goes on from the medium" \
		media_console_has "$p-ram-lowmem" 'livesquash: rd.live.ram: not copying LiveOS/squashfs.img \([0-9]+ MiB\) to RAM: MemAvailable is [0-9]+ MiB, it needs [0-9]+ \+ [0-9]+ MiB; booting from the medium'
	tap_test "[$p-ram-lowmem] a CD without LSPERSIST: one message, the boot goes on without persistence" \
		media_console_has "$p-ram-lowmem" 'livesquash: persistence device LABEL=LSPERSIST not found; booting without persistence'

	# copy to RAM in the background from a USB stick
	LB_ARGS=(--kernel "$in/vmlinuz" --initrd "$in/initrd.img" --append "$plain rd.live.ram=background rd.live.overlay.size=64")
	LB_CONF=$'LS_IMG=/run/initramfs/ram/squashfs.img\nLS_RELEASED=sda\nLS_SWITCH_WAIT=60\nLS_OVLSIZE=64'
	live_boot "$p-ram-background" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" usb
	tap_test "[$p-ram-background] the kernel log says the copy is done and the medium released" \
		media_kmsg "$p-ram-background" 'livesquash: background copy to RAM done: .* reads the copy, the medium is released'

	# an ISO file on an ext4 disk, through GRUB's loopback and our loopback.cfg
	LB_CONF="LS_ISOSCAN=/isos/live.iso"
	LB_ARGS=(--iso "$in/multiboot.iso" -- -drive "if=none,id=isodisk,format=raw,snapshot=on,file=$in/isodisk.img"
		-device "virtio-blk-pci,drive=isodisk")
	live_boot "$p-isofile" "$TEST_ISO" bios "$tmo" "$TEST_MANIFEST" "" none
	tap_test "[$p-isofile] the kernel ran with iso-scan/filename=/isos/live.iso from loopback.cfg" \
		media_console_has "$p-isofile" 'Command line:.* iso-scan/filename=/isos/live.iso'

	media_failures "$in" "$p"
	media_times "$p"
}

# media_ejected TAG: QEMU's monitor ejected the CD when the guest said RELEASED; its
# answer shows no refusal (a locked tray without -f, an unknown device)
media_ejected() {
	local log=$LS_LOGDIR/$1/monitor.log
	[[ -n $LS_QEMU_ONRESULT_SENT ]] || {
		echo "the guest never said RELEASED, nothing was ejected"
		return 1
	}
	echo "monitor: $(tr -d '\r' <"$log" | grep -iE 'results match|is locked|error' | tail -n 2 | tr '\n' ' ')"
	! tr -d '\r' <"$log" | grep -iE 'is locked|error|not found'
}

# a failed check, a missing image, a broken image: each one message, then the
# emergency shell (or, with rd.shell=0 rd.emergency=poweroff, power-off)
media_failures() {
	local in=$1 p=$2 plain re tmo=180
	[[ $p == media ]] || tmo=$DEBIAN_TIMEOUT
	plain=$(ls_grub_entry 0 "$in/grub.cfg")
	ls_qemu "$p-check-bad" "$tmo" --iso "$in/bad.iso" --menu-entry 3 --wait-for 'Dropping to debug shell|livesquash:/#'
	tap_diag "boot $p-check-bad: $LS_QEMU_SECONDS s, QEMU exit $LS_QEMU_RC"
	re='livesquash: root image LiveOS/squashfs.img is corrupt: its sha256 is [0-9a-f]{64}, LiveOS/squashfs.img.sha256 says [0-9a-f]{64}'
	tap_test "[$p-check-bad] entry 'check the medium first' on a flipped byte: one message naming the file, then the emergency shell, within $tmo s" \
		media_console_has "$p-check-bad" "$re" 'Dropping to debug shell|livesquash:/#'
	console_test "$p-check-bad"
	media_message "$p-missing-image" --iso "$in/bad.iso" -- "rd.live.squashimg=nosuch.img" \
		"rd.live.squashimg=nosuch.img: 'root image LiveOS/nosuch.img not found on /dev/sr0', then power-off" \
		'livesquash: root image LiveOS/nosuch.img not found on /dev/sr0'
	media_message "$p-missing-isofile" -- -drive "if=none,id=isodisk,format=raw,snapshot=on,file=$in/isodisk.img" \
		-device "virtio-blk-pci,drive=isodisk" -- "iso-scan/filename=/isos/nosuch.iso rd.live.timeout=10" \
		"iso-scan/filename=/isos/nosuch.iso on a disk without it: one message after rd.live.timeout=10, then power-off" \
		'livesquash: ISO file /isos/nosuch.iso \(iso-scan/filename\) not found on any disk after 10 s'
	media_message "$p-corrupt-image" --iso "$in/badsb.iso" -- "" \
		"a broken superblock: our driver names the device ('livesquash (loopN): corrupt image'), then one 'cannot mount LiveOS/squashfs.img: ... Structure needs cleaning' line (EUCLEAN), then power-off" \
		'livesquash \(loop[0-9]+\): corrupt image' 'livesquash: cannot mount LiveOS/squashfs.img: .*Structure needs cleaning'
}

# media_message TAG LS_QEMU-ARGS... -- APPEND DESCRIPTION REGEX...: (in media_failures)
# the ISO's kernel and initrd with the plain entry's command line, APPEND and
# rd.shell=0 rd.emergency=poweroff; the console must show each REGEX, then power-off.
# LS_QEMU-ARGS may hold a `--` of their own (QEMU arguments): the last `--` ends them.
media_message() {
	local tag=$1 a
	shift
	local -a args=()
	while (($#)); do
		a=$1
		shift
		if [[ $a == -- ]] && { (($# == 0)) || [[ " $* " != *" -- "* ]]; }; then
			break
		fi
		args+=("$a")
	done
	local append=$1 desc=$2
	shift 2
	ls_qemu "$tag" "$tmo" --kernel "$in/vmlinuz" --initrd "$in/initrd.img" \
		--append "$plain${append:+ $append} rd.shell=0 rd.emergency=poweroff" --stop-on 'Kernel panic' "${args[@]}"
	tap_test "[$tag] $desc" media_console_has "$tag" "$@" 'reboot: Power down'
	console_test "$tag"
}

# the boot-time table: uptime when the guest checks began, per boot
media_times() {
	local t b p=$1
	tap_diag "$p boot times (uptime when the guest checks began; $(ls_accel)):"
	for b in virtio-check virtio-uefi persist-write persist-verify persist-readonly persist-reset \
		persist-vfat persist-full ram ram-lowmem ram-background isofile; do
		b=$p-$b
		t=$(media_up "$b" 2>/dev/null)
		tap_diag "  $(printf '%-24s %8s s' "$b" "${t:-?}")"
	done
}
