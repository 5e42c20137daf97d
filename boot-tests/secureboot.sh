#!/bin/bash
# shellcheck disable=SC2154,SC2034 # here, TOP, MAKE ... come from run.sh; LB_* go to its live_boot
# boot-tests/secureboot.sh: sourced by run.sh; suite_secureboot (in make check).
#
# The signed ISO (make iso SIGN=1: iso/signiso) booted by OVMF with Secure Boot
# enforced, with the variable stores a test makes with virt-fw-vars (Debian 13's
# python3-virt-firmware, fetched into build/, never installed): Microsoft's keys
# as a PC has them (OVMF_VARS_4M.ms.fd), plus the test's own key
#   (a) in the firmware's db: the signed ISO as a CD;
#   (b) in shim's MOK list (MokList, as mokutil --import and MokManager leave it):
#       the signed ISO as a USB stick;
# both run the guest checks (boot-tests/guest.sh, LS_SECUREBOOT=1: the firmware
# says Secure Boot is on and the kernel locked itself down). Then three tampered
# copies of the signed ISO must be refused, each with the refusal on the console:
# the kernel unsigned, the kernel signed with another key (GRUB asks shim: refused),
# GRUB with one byte flipped (shim refuses it). The keys are made by the test, in
# its log folder; none is committed.

# sb_fw_vars ARGS...: virt-fw-vars
sb_fw_vars() {
	PYTHONPATH=$BUILD/trixie/virt-firmware/root/usr/lib/python3/dist-packages /usr/bin/python3 -m virt.firmware.vars "$@"
}

# sb_from_esp ISO DIR [FILE...]: DIR/efi.img = the ISO's UEFI boot image
# (writable), and each FILE of it (EFI/BOOT/grubx64.efi) copied to DIR/its name
sb_from_esp() {
	local iso=$1 d=$2 f
	shift 2
	xorriso -osirrox on -indev "$iso" -extract /efi.img "$d/efi.img" >/dev/null 2>&1 || return 1
	chmod u+w "$d/efi.img"
	for f; do
		MTOOLS_SKIP_CHECK=1 mcopy -n -i "$d/efi.img" "::/$f" "$d/${f##*/}" || return 1
	done
}

# sb_verify ISO CERT: the signed GRUB (in the UEFI boot image) and the kernel of
# ISO verify with CERT (sbverify)
sb_verify() {
	local iso=$1 cert=$2 t rc=0
	t=$(mktemp -d)
	xorriso -osirrox on -indev "$iso" -extract /boot/vmlinuz "$t/vmlinuz" >/dev/null 2>&1
	sb_from_esp "$iso" "$t" EFI/BOOT/grubx64.efi || rc=1
	sbverify --cert "$cert" "$t/grubx64.efi" || rc=1
	sbverify --cert "$cert" "$t/vmlinuz" || rc=1
	rm -rf -- "$t"
	return "$rc"
}

# sb_same_file PATH A B: PATH is the same in ISOs A and B
sb_same_file() {
	local t rc=0
	t=$(mktemp -d)
	xorriso -osirrox on -indev "$2" -extract "$1" "$t/a" >/dev/null 2>&1 &&
		xorriso -osirrox on -indev "$3" -extract "$1" "$t/b" >/dev/null 2>&1 &&
		cmp "$t/a" "$t/b" || rc=1
	rm -rf -- "$t"
	return "$rc"
}

# sb_esp_files ISO: the UEFI boot image holds shim as BOOTX64.EFI (Microsoft's
# signature), GRUB, MokManager and the certificate
sb_esp_files() {
	local t rc=0
	t=$(mktemp -d)
	sb_from_esp "$1" "$t" EFI/BOOT/BOOTX64.EFI || rc=1
	MTOOLS_SKIP_CHECK=1 mdir -i "$t/efi.img" -b -/ :: | sort | tee "$t/list"
	for f in ::/EFI/BOOT/BOOTX64.EFI ::/EFI/BOOT/grubx64.efi ::/EFI/BOOT/mmx64.efi ::/EFI/livesquash/db.der; do
		grep -qixF "$f" "$t/list" || { echo "missing: $f"; rc=1; }
	done
	sbverify --list "$t/BOOTX64.EFI" | tee "$t/sigs" | grep -i 'subject' || true
	grep -q 'Microsoft' "$t/sigs" || { echo "BOOTX64.EFI is not signed by Microsoft"; rc=1; }
	rm -rf -- "$t"
	return "$rc"
}

# sb_tamper SIGNED OUT WHAT DIR: a copy of SIGNED with WHAT changed: kernel-unsigned
# (DIR/vmlinuz.unsigned), kernel-other (signed with DIR/other's key), grub-flipped
# (one byte of the signed GRUB flipped, in the middle of its code)
sb_tamper() {
	local t rc=0
	t=$(mktemp -d)
	sb_tamper_in "$t" "$@" || rc=1
	rm -rf -- "$t"
	return "$rc"
}
sb_tamper_in() {
	local t=$1 signed=$2 out=$3 what=$4 dir=$5
	local -a map=()
	case $what in
	kernel-unsigned) map=(-map "$dir/vmlinuz.unsigned" /boot/vmlinuz) ;;
	kernel-other)
		sbsign --key "$dir/other/db.key" --cert "$dir/other/db.crt" --output "$t/vmlinuz" "$dir/vmlinuz.unsigned" >/dev/null 2>&1 || return 1
		map=(-map "$t/vmlinuz" /boot/vmlinuz)
		;;
	grub-flipped)
		sb_from_esp "$signed" "$t" EFI/BOOT/grubx64.efi || return 1
		local off b
		off=$(($(stat -c %s "$t/grubx64.efi") / 2))
		b=$(od -An -tu1 -j "$off" -N1 "$t/grubx64.efi" | tr -d ' ')
		# shellcheck disable=SC2059 # the format is the byte, as an octal escape
		printf "\\$(printf '%03o' $((b ^ 0x20)))" | dd of="$t/grubx64.efi" bs=1 seek="$off" conv=notrunc status=none
		echo "flipped byte $off of grubx64.efi: $b -> $((b ^ 0x20))"
		MTOOLS_SKIP_CHECK=1 mcopy -o -i "$t/efi.img" "$t/grubx64.efi" ::/EFI/BOOT/grubx64.efi || return 1
		map=(-map "$t/efi.img" /efi.img)
		;;
	esac
	rm -f "$out"
	xorriso -indev "$signed" -outdev "$out" -boot_image any replay "${map[@]}" -commit >"$t/xorriso.log" 2>&1 ||
		{ tail -n 3 "$t/xorriso.log"; return 1; }
}

suite_secureboot() {
	local dir=$LS_LOGDIR/secureboot tag=secureboot
	make_target iso-busybox iso ROOTFS=busybox || true
	rm -rf "$dir"
	mkdir -p "$dir"

	# the test's tools and keys
	tap_test "[$tag] virt-fw-vars: Debian 13's python3-virt-firmware in build/ (kernel-config/trixie.sh, not installed)" \
		bash "$TOP/kernel-config/trixie.sh" "$BUILD/trixie/virt-firmware" python3-virt-firmware
	tap_test "[$tag] make keys KEYDIR=...: a key pair of the test's own (db.key mode 0600, db.crt, db.der, owner GUID)" \
		sb_made_keys "$dir/keys"
	tap_test "[$tag] make keys again refuses, in one line naming the existing key, and leaves it as it was" \
		sb_keys_kept "$dir/keys"
	tap_test "[$tag] iso/sbkeys refuses a folder inside the repository (a key is never committed)" \
		sb_refused_in_repo "$dir"
	bash "$TOP/iso/sbkeys" "$dir/other" "another key" >"$dir/other.log" 2>&1

	# the signed ISO, as make iso SIGN=1 makes it
	local product
	product=$(iso_of busybox)
	local before
	before=$(sha256sum <"$product")
	if ! $MAKE -s -C "$TOP" iso ROOTFS=busybox SIGN=1 KEYDIR="$dir/keys" ISO_SIGNED="$dir/signed.iso" >"$dir/sign.log" 2>&1; then
		local -a last=()
		mapfile -t last < <(tail -n 5 "$dir/sign.log")
		tap_notok "[$tag] make iso SIGN=1 makes the signed ISO" "${last[@]}"
		return 0
	fi
	tap_ok "[$tag] make iso SIGN=1 makes the signed ISO ($(grep -c '^signiso: signed' "$dir/sign.log") parts signed; $dir/sign.log)"
	tap_test "[$tag] the unsigned product ISO is unchanged by it" test "$before" == "$(sha256sum <"$product")"
	tap_test "[$tag] its signed GRUB and kernel verify with the key's certificate (sbverify)" sb_verify "$dir/signed.iso" "$dir/keys/db.crt"
	tap_test "[$tag] and not with another key's" not sb_verify "$dir/signed.iso" "$dir/other/db.crt"
	tap_test "[$tag] its UEFI boot image: shim (signed by Microsoft) as BOOTX64.EFI, grubx64.efi, mmx64.efi, the certificate" \
		sb_esp_files "$dir/signed.iso"
	tap_test "[$tag] its BIOS boot image and root image are the unsigned ISO's" \
		sb_same_bios_root "$product" "$dir/signed.iso"
	tap_test "[$tag] the signed ISO's embedded MD5 verifies (checkisomd5)" checkisomd5 "$dir/signed.iso"
	tap_test "[$tag] iso/remaster --cmdline-add on the signed ISO without --sign: one warning that the signed GRUB keeps the old menu" \
		sb_remaster_warns "$dir"
	tap_test "[$tag] iso/remaster --cmdline-add --sign KEYDIR: the copy's signed GRUB has the new command line and verifies" \
		sb_remaster_resigns "$dir"
	xorriso -osirrox on -indev "$product" -extract /boot/vmlinuz "$dir/vmlinuz.unsigned" >/dev/null 2>&1
	chmod u+w "$dir/vmlinuz.unsigned"

	# the test ISO: the signed product plus the hook (iso/remaster keeps the boot files)
	if ! bash "$here/testiso.sh" "$dir/signed.iso" "$dir/test.iso" "$(ls_boot_order_sort busybox)" >"$dir/testiso.log" 2>&1; then
		tap_notok "[$tag] test ISO: the signed ISO plus the test hook, by iso/remaster" "$(tail -n 3 "$dir/testiso.log")"
		return 0
	fi
	tap_test "[$tag] the test ISO (the signed ISO plus the hook) keeps its UEFI boot image and signed kernel" \
		sb_same_boot "$dir/signed.iso" "$dir/test.iso"
	if ! unpack_image "$dir/test.iso" "$dir"; then
		tap_notok "[$tag] unpack the test ISO's root image" "$(tail -n 3 "$dir/unsquashfs.log" 2>/dev/null)"
		return 0
	fi

	# the firmware's variables: Microsoft's keys, Secure Boot on, and our key in db or MokList
	local owner ms=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
	owner=$(cat "$dir/keys/owner")
	tap_test "[$tag] variable store (a): OVMF's Microsoft keys, the test's key in db, Secure Boot on (virt-fw-vars)" \
		sb_fw_vars -i "$ms" --add-db "$owner" "$dir/keys/db.crt" --secure-boot -o "$dir/vars-db.fd"
	tap_test "[$tag] variable store (b): OVMF's Microsoft keys, the test's key in shim's MokList, Secure Boot on" \
		sb_fw_vars -i "$ms" --add-mok "$owner" "$dir/keys/db.crt" --secure-boot -o "$dir/vars-mok.fd"

	# the boots: (a) as a CD, (b) as a USB stick, each through shim, GRUB, kernel
	local chain medium name
	for chain in db mok; do
		medium=usb
		[[ $chain == db ]] && medium="cd"
		name=sb-$chain-$medium
		LB_ARGS=(--secure-boot "$dir/vars-$chain.fd")
		LB_CONF="LS_SECUREBOOT=1"
		live_boot "$name" "$dir/test.iso" uefi "$BOOT_TIMEOUT" "$dir/expected.manifest" "" "$medium"
		tap_test "[$name] the kernel says Secure Boot is enabled and locks itself down (console)" \
			sb_console_locked "$LS_LOGDIR/$name/console.txt"
		tap_test "[$name] the kernel's platform keyring has the test's key ($chain: 'integrity: Loaded X.509 cert' with its name)" \
			grep -qF "integrity: Loaded X.509 cert '$(sb_cn "$dir/keys/db.crt")" "$LS_LOGDIR/$name/console.txt"
	done

	# tampered: each refused, the refusal on the console, no kernel started
	local what re
	for what in kernel-unsigned kernel-other grub-flipped; do
		name=sb-$what
		case $what in
		kernel-*) re='bad shim signature' ;;
		grub-*) re='Security Violation|Verification failed' ;;
		esac
		if ! sb_tamper "$dir/signed.iso" "$dir/$what.iso" "$what" "$dir" >"$dir/$what.log" 2>&1; then
			tap_notok "[$name] make the tampered ISO" "$(tail -n 3 "$dir/$what.log")"
			continue
		fi
		ls_qemu "$name" 180 --secure-boot "$dir/vars-mok.fd" --iso "$dir/$what.iso" \
			--wait-for "$re" --stop-on 'Linux version|Run /init'
		tap_diag "boot $name: $LS_QEMU_SECONDS s, QEMU exit $LS_QEMU_RC"
		local line
		line=$(grep -m1 -oE ".{0,40}($re).{0,20}" "$LS_LOGDIR/$name/console.txt" || true)
		tap_waited "$name" "[$name] refused with Secure Boot on: the console says '$line', no kernel started" \
			"[$name] refused with Secure Boot on: the console says /$re/, no kernel started"
		console_test "$name"
	done
}

not() { ! "$@"; }

sb_made_keys() {
	$MAKE -s -C "$TOP" keys KEYDIR="$1" || return 1
	[[ $(stat -c %a "$1/db.key") == 600 ]] || { echo "db.key mode $(stat -c %a "$1/db.key")"; return 1; }
	openssl x509 -in "$1/db.crt" -noout -subject -ext extendedKeyUsage &&
		openssl x509 -inform DER -in "$1/db.der" -noout &&
		grep -qE '^[0-9a-f-]{36}$' "$1/owner"
}

sb_keys_kept() {
	local sum out
	sum=$(cat "$1"/db.* | sha256sum)
	if out=$($MAKE -s -C "$TOP" keys KEYDIR="$1" 2>&1); then
		echo "make keys succeeded"
		return 1
	fi
	echo "$out"
	[[ $(grep -c . <<<"$out") -le 2 ]] && grep -q "db.key exists" <<<"$out" &&
		[[ $(cat "$1"/db.* | sha256sum) == "$sum" ]]
}

sb_refused_in_repo() {
	local out
	if out=$(bash "$TOP/iso/sbkeys" "$TOP/iso/keys-test" 2>&1); then
		rm -rf "$TOP/iso/keys-test"
		echo "made a key inside the repository"
		return 1
	fi
	echo "$out"
	[[ ! -e $TOP/iso/keys-test ]] && grep -q "inside the repository" <<<"$out"
}

# sb_same_bios_root A B: the BIOS boot image (but for the block addresses xorriso
# writes into it: run.sh's eltorito_same), the root image and the initrd are A's
sb_same_bios_root() {
	local t rc=0
	t=$(mktemp -d)
	xorriso -osirrox on -indev "$1" -extract /boot/grub/i386-pc/eltorito.img "$t/a" >/dev/null 2>&1
	xorriso -osirrox on -indev "$2" -extract /boot/grub/i386-pc/eltorito.img "$t/b" >/dev/null 2>&1
	eltorito_same bootinfo "$t/a" "$t/b" || rc=1
	rm -rf -- "$t"
	((rc == 0)) && sb_same_file /LiveOS/squashfs.img "$1" "$2" &&
		sb_same_file /boot/initrd.img "$1" "$2"
}

sb_same_boot() {
	sb_same_file /efi.img "$1" "$2" && sb_same_file /boot/vmlinuz "$1" "$2"
}

# sb_grub_has ISO WORD: the signed GRUB of ISO has WORD in its menu (the memdisk
# tar inside the image is not compressed)
sb_grub_has() {
	local t rc=0
	t=$(mktemp -d)
	sb_from_esp "$1" "$t" EFI/BOOT/grubx64.efi || rc=1
	grep -aq -- "$2" "$t/grubx64.efi" || rc=1
	rm -rf -- "$t"
	return "$rc"
}

sb_remaster_warns() {
	local d=$1 err
	bash "$TOP/iso/remaster" --cmdline-add ls.sbtest=1 "$d/signed.iso" "$d/remaster-nosign.iso" >"$d/remaster-nosign.log" 2>"$d/remaster-nosign.err" || return 1
	err=$(cat "$d/remaster-nosign.err")
	echo "$err"
	[[ $(grep -c 'warning:' <<<"$err") == 1 ]] && grep -q 'give --sign KEYDIR' <<<"$err" &&
		! sb_grub_has "$d/remaster-nosign.iso" ls.sbtest=1
}

sb_remaster_resigns() {
	local d=$1
	bash "$TOP/iso/remaster" --cmdline-add ls.sbtest=1 --sign "$d/keys" "$d/signed.iso" "$d/remaster-sign.iso" >"$d/remaster-sign.log" 2>&1 ||
		{ tail -n 3 "$d/remaster-sign.log"; return 1; }
	! grep -q 'warning:' "$d/remaster-sign.log" && sb_grub_has "$d/remaster-sign.iso" ls.sbtest=1 &&
		sb_verify "$d/remaster-sign.iso" "$d/keys/db.crt" && checkisomd5 "$d/remaster-sign.iso" >/dev/null
}

sb_console_locked() {
	grep -F 'secureboot: Secure boot enabled' "$1" && grep -F 'Kernel is locked down from EFI Secure Boot' "$1"
}

# sb_cn CERT: the certificate's common name
sb_cn() {
	openssl x509 -in "$1" -noout -subject -nameopt multiline | sed -n 's/^ *commonName *= *//p'
}
