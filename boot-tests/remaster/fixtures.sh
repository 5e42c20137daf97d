#!/usr/bin/env bash
# boot-tests/remaster/fixtures.sh OUTDIR: small ISOs laid out like the live
# media of each distribution, for the host-side tests of iso/remaster (host.sh).
# Needs root (device nodes, owners, security.capability, trusted.* xattrs).
#
#   fedora.iso          /LiveOS/squashfs.img (squashfs xz -Xbcj x86) + .sha256, isolinux +
#                       images/efiboot.img (El Torito EFI, a FAT with EFI/BOOT/grub.cfg),
#                       EFI/BOOT/grub.cfg, boot/grub2/grub.cfg, implanted ISO MD5
#   fedora41.iso        lorax 41: GRUB only, images/eltorito.img (BIOS), efiboot.img appended as GPT partition 2
#   fedora-erofs.iso    the same, /LiveOS/squashfs.img an EROFS image (lz4hc, 1 MiB pclusters)
#   fedora-erofs-selinux.iso  the same with security.selinux on every inode, as Fedora's
#   debian.iso          live-build: /live/filesystem.squashfs (xz) + .size + .packages,
#                       isolinux (live.cfg), boot/grub/grub.cfg, boot/grub/efi.img,
#                       /md5sum.txt and /sha256sum.txt
#   ubuntu.iso          casper: /casper/filesystem.squashfs (xz) + .size + .manifest + .gpg,
#                       boot/grub/grub.cfg + loopback.cfg, GRUB El Torito for BIOS, the EFI
#                       image as an appended GPT partition (22.04's xorriso options), /md5sum.txt
#   ubuntu-layered.iso  casper layers: minimal, minimal.standard, minimal.standard.live
#                       (.squashfs + .size + .manifest), no filesystem.squashfs; the live layer
#                       has no /bin/sh (it is a delta), an opaque folder and a whiteout below it
#   arch.iso            archiso: /arch/x86_64/airootfs.sfs (zstd, 1 MiB blocks) + .sha512 +
#                       .sfs.sig, syslinux, loader/entries, boot/grub/grub.cfg, the EFI image
#                       (systemd-boot entries inside) as an appended partition
#   arch-erofs.iso      the same with airootfs.erofs (lz4hc, ztailpacking, no xattrs) and .erofs.cms.sig
#   arch2025.iso        archiso 2025: boot/syslinux/, airootfs.sfs xz -Xbcj x86 -b 1M -Xdict-size 1M
#   nosh.iso            the LiveOS layout around a root without /bin/sh
#   space.iso           the LiveOS layout around a ~42 MB root that packs to ~1 MB (gzip)
#   two-images.iso      both /LiveOS/squashfs.img and /live/filesystem.squashfs
#   no-image.iso        a bootable ISO without any root image
#   not-an-iso.iso      1 MiB of random bytes
# Every ISO has a BIOS and an EFI El Torito boot image and volume label FIXTURE.
# Kernels and initrds are dummy bytes; GRUB images are real (grub-mkimage), isolinux
# is the host's; systemd-boot's binary is a dummy. Nothing is cached outside OUTDIR.
# shellcheck disable=SC2016 # GRUB's $prefix, ${iso_path} ... are literal text of the configs
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: fixtures.sh OUTDIR" >&2
	exit 2
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "fixtures.sh: must run as root (device nodes, owners, capabilities)" >&2
	exit 1
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
work=$out/.work
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
export LC_ALL=C

LABEL=FIXTURE
EPOCH=1700000000 # every file of the root trees gets this mtime
ISOLINUX=/usr/lib/ISOLINUX
SYSLINUX_BIOS=/usr/lib/syslinux/modules/bios
for t in mksquashfs mkfs.erofs xorriso mformat mmd mcopy grub-mkimage implantisomd5 setcap setfattr busybox; do
	command -v "$t" >/dev/null || {
		echo "fixtures.sh: $t missing" >&2
		exit 1
	}
done
BUSYBOX=$(command -v busybox)

log=$work/log
run() { # quiet unless it fails
	if ! "$@" >"$log" 2>&1; then
		echo "fixtures.sh: failed: $*" >&2
		tail -n 20 "$log" >&2
		exit 1
	fi
}

# ---- root trees ------------------------------------------------------------------
# mk_root DIR FLAVOR: a chroot-able busybox root with every kind of inode
mk_root() {
	local r=$1 flavor=$2 f=$1/usr/share/fixture a
	mkdir -p "$r"/{bin,etc,proc,sys,dev,run,tmp,root,home/user,usr/lib,usr/share/fixture/empty-dir}
	chmod 1777 "$r/tmp"
	chmod 0700 "$r/root"
	cp "$BUSYBOX" "$r/bin/busybox"
	for a in sh awk cat chmod cut echo false grep id ls mkdir rm sha256sum sleep test touch true wc; do
		ln -s busybox "$r/bin/$a"
	done
	case $flavor in
	fedora)
		printf '%s\n' 'NAME="Fedora Linux"' 'VERSION="39 (Workstation Edition)"' 'ID=fedora' 'VERSION_ID=39' \
			'PRETTY_NAME="Fedora Linux 39 (Workstation Edition)"' 'VARIANT_ID=workstation' >"$r/usr/lib/os-release"
		ln -s ../usr/lib/os-release "$r/etc/os-release"
		ln -s ../run/systemd/resolve/stub-resolv.conf "$r/etc/resolv.conf"
		;;
	debian)
		printf '%s\n' 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"' 'NAME="Debian GNU/Linux"' 'VERSION_ID="12"' \
			'VERSION="12 (bookworm)"' 'VERSION_CODENAME=bookworm' 'ID=debian' >"$r/etc/os-release"
		: >"$r/etc/resolv.conf"
		;;
	ubuntu)
		printf '%s\n' 'PRETTY_NAME="Ubuntu 22.04.4 LTS"' 'NAME="Ubuntu"' 'VERSION_ID="22.04"' \
			'VERSION="22.04.4 LTS (Jammy Jellyfish)"' 'ID=ubuntu' 'ID_LIKE=debian' >"$r/usr/lib/os-release"
		ln -s ../usr/lib/os-release "$r/etc/os-release"
		ln -s ../run/systemd/resolve/stub-resolv.conf "$r/etc/resolv.conf"
		;;
	arch)
		printf '%s\n' 'NAME="Arch Linux"' 'PRETTY_NAME="Arch Linux"' 'ID=arch' 'BUILD_ID=rolling' >"$r/usr/lib/os-release"
		ln -s ../usr/lib/os-release "$r/etc/os-release"
		ln -s /run/systemd/resolve/stub-resolv.conf "$r/etc/resolv.conf" # archiso's is absolute
		;;
	esac
	echo livesquash-fixture >"$r/etc/hostname"
	printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\nuser:x:1000:\n' >"$r/etc/group"
	chown 1000:1000 "$r/home/user"
	# a few hundred KB of data: text and random bytes
	seq -f 'line %06g of the livesquash remaster fixture' 1 5000 >"$f/text.txt"
	head -c 262144 /dev/urandom >"$f/random.bin"
	ln "$f/text.txt" "$f/text-link.txt"                       # hard link
	ln -s text.txt "$f/rel-link"                              # relative symlinks
	ln -s ../../../etc/hostname "$f/up-link"
	mkfifo "$f/fifo"
	mknod "$f/null-dev" c 1 3                                 # char device
	printf '#!/bin/sh\necho suid\n' >"$f/suid-file"
	chmod 4755 "$f/suid-file"
	echo "owned by 1000:1000" >"$f/user-file"
	chown 1000:1000 "$f/user-file"
	: >"$f/empty-file"
	echo "file with user xattrs" >"$f/xattr-file"
	setfattr -n user.livesquash.note -v "fixture note" "$f/xattr-file"
	setfattr -n user.livesquash.bin -v 0x00ff10e2 "$f/xattr-file"
	setfattr -n user.livesquash.dir -v folder "$f/empty-dir"
	printf '#!/bin/sh\necho ping\n' >"$f/ping"
	chmod 0755 "$f/ping"
	setcap cap_net_raw+ep "$f/ping"
	echo "hello from the fixture" >"$r/usr/share/fixture/README"
}

# mk_delta DIR KIND: a casper-like layer with no /bin at all
mk_delta() {
	local r=$1
	mkdir -p "$r/etc" "$r/usr/share/$2/opaque"
	echo "layer $2" >"$r/usr/share/$2/info"
	echo "only in the $2 layer" >"$r/usr/share/$2/opaque/file"
	setfattr -n trusted.overlay.opaque -v y "$r/usr/share/$2/opaque"
	setfattr -n user.livesquash.layer -v "$2" "$r/usr/share/$2/info"
	case $2 in
	standard) mknod "$r/usr/share/fixture-removed" c 0 0 ;; # an overlayfs whiteout
	live) printf 'export USERNAME="ubuntu"\nexport HOST="ubuntu"\n' >"$r/etc/casper.conf" ;;
	esac
}

pin_times() { find "$1" -exec touch -h -d "@$EPOCH" {} +; }

squash() { # DIR IMG MKSQUASHFS-OPTIONS...
	local d=$1 img=$2
	shift 2
	run mksquashfs "$d" "$img" -noappend -quiet -no-progress "$@"
}
erofs() { # DIR IMG MKFS.EROFS-OPTIONS...
	local d=$1 img=$2
	shift 2
	run mkfs.erofs --quiet "$@" "$img" "$d"
}
# dusize DIR: the unpacked size the way casper and live-build write filesystem.size
dusize() { du -sx --block-size=1 "$1" | cut -f1; }

# ---- boot pieces ------------------------------------------------------------------
dummy() { # FILE BYTES: a stand-in kernel or initrd
	mkdir -p "$(dirname "$1")"
	head -c "$2" /dev/urandom >"$1"
}
grub_efi=$work/grubx64.efi
grub_eltorito=$work/eltorito.img
run grub-mkimage -O x86_64-efi -p /EFI/BOOT -o "$grub_efi" part_gpt part_msdos fat iso9660 normal configfile search linux echo
run grub-mkimage -O i386-pc-eltorito -p /boot/grub -o "$grub_eltorito" biosdisk iso9660 normal configfile search linux
run grub-mkimage -O i386-pc -p /boot/grub -o "$work/core.img" biosdisk iso9660 normal configfile search linux

isolinux_files() { # DIR [extra .c32 ...]
	local d=$1 m
	shift
	mkdir -p "$d"
	cp "$ISOLINUX/isolinux.bin" "$d/"
	for m in ldlinux.c32 libcom32.c32 libutil.c32 vesamenu.c32 "$@"; do
		cp "$SYSLINUX_BIOS/$m" "$d/"
	done
}

# fat IMG KIB SRC:DEST...: a FAT image holding the given files (mtools; no mkfs.vfat here)
fat() {
	local img=$1 kib=$2 pair src dest dir
	shift 2
	rm -f "$img"
	truncate -s "${kib}K" "$img"
	run mformat -i "$img" -T $((kib * 2)) -h 64 -s 32 -v EFIBOOT ::
	for pair in "$@"; do
		src=${pair%%:*}
		dest=${pair#*:}
		dir=$(dirname "$dest")
		local p="" part
		IFS=/ read -r -a parts <<<"${dir#/}"
		for part in "${parts[@]}"; do
			[[ -n $part ]] || continue
			p=$p/$part
			mmd -D s -i "$img" "::$p" >/dev/null 2>&1 || true
		done
		run mcopy -o -i "$img" "$src" "::$dest"
	done
}

# sums DIR TOOL FILE EXCLUDE...: "HASH  ./path" for every file but FILE and EXCLUDEs
sums() {
	local d=$1 tool=$2 file=$3 x
	shift 3
	local -a notpaths=(! -path "./$file")
	for x in "$@"; do
		notpaths+=(! -path "./$x")
	done
	(cd "$d" && find . -type f "${notpaths[@]}" | sort | xargs "$tool") >"$work/sums"
	mv "$work/sums" "$d/$file"
}

# mkiso_isolinux OUT TREE BIOSDIR EFIIMG: live-build's and lorax's xorriso call
mkiso_isolinux() {
	local o=$1 t=$2 bios=$3 efi=$4
	run xorriso -as mkisofs -o "$o" -R -J -joliet-long -l -V "$LABEL" \
		-isohybrid-mbr "$ISOLINUX/isohdpfx.bin" \
		-b "$bios/isolinux.bin" -c "$bios/boot.cat" -no-emul-boot -boot-load-size 4 -boot-info-table \
		-eltorito-alt-boot -e "$efi" -no-emul-boot -isohybrid-gpt-basdat \
		"$t"
}

# ---- LiveOS (livesquash, Fedora) ----------------------------------------------------
fedora_tree() { # TREE IMG: the ISO tree around a root image made beforehand
	local t=$1
	mkdir -p "$t/LiveOS" "$t/EFI/BOOT" "$t/boot/grub2" "$t/images/pxeboot" "$t/isolinux"
	cp "$2" "$t/LiveOS/squashfs.img"
	(cd "$t/LiveOS" && sha256sum squashfs.img >squashfs.img.sha256)
	dummy "$t/images/pxeboot/vmlinuz" 65536
	dummy "$t/images/pxeboot/initrd.img" 131072
	cp "$t/images/pxeboot/vmlinuz" "$t/images/pxeboot/initrd.img" "$t/isolinux/"
	cp "$grub_efi" "$t/EFI/BOOT/BOOTX64.EFI"
	cp "$grub_efi" "$t/EFI/BOOT/grubx64.efi"
	cat >"$t/EFI/BOOT/grub.cfg" <<'EOF'
set default="0"

function load_video {
  insmod efi_gop
  insmod efi_uga
  insmod all_video
}

load_video
set gfxpayload=keep
insmod gzio
insmod part_gpt
insmod ext2

set timeout=60
### END /etc/grub.d/00_header ###

search --no-floppy --set=root -l 'FIXTURE'

### BEGIN /etc/grub.d/10_linux ###
# quiet and splash in a comment stay as they are
menuentry 'Start Fedora-Workstation-Live 39' --class fedora --class gnu-linux --class gnu --class os {
	linux /images/pxeboot/vmlinuz root=live:CDLABEL=FIXTURE  rd.live.image quiet rhgb
	initrd /images/pxeboot/initrd.img
}
menuentry 'Test this media & start Fedora-Workstation-Live 39' --class fedora --class gnu-linux --class gnu --class os {
	linux /images/pxeboot/vmlinuz root=live:CDLABEL=FIXTURE  rd.live.image rd.live.check quiet
	initrd /images/pxeboot/initrd.img
}
submenu 'Troubleshooting -->' {
	menuentry 'Start Fedora-Workstation-Live 39 in basic graphics mode' --class fedora --class gnu-linux --class gnu --class os {
		linuxefi /images/pxeboot/vmlinuz root=live:CDLABEL=FIXTURE  rd.live.image nomodeset quiet rhgb
		initrdefi /images/pxeboot/initrd.img
	}
	menuentry 'Boot first drive' --class fedora --class gnu-linux --class gnu --class os {
		chainloader (hd0)+1
	}
}
EOF
	sed -e 's/insmod efi_gop/insmod vbe/; s/insmod efi_uga/insmod vga/; s/linuxefi/linux/; s/initrdefi/initrd/' \
		"$t/EFI/BOOT/grub.cfg" >"$t/boot/grub2/grub.cfg"
	cat >"$t/isolinux/isolinux.cfg" <<'EOF'
default vesamenu.c32
timeout 600

display boot.msg

# Clear the screen when exiting the menu, instead of leaving the menu displayed.
menu clear
menu title Fedora-Workstation-Live 39

label linux
  menu label ^Start Fedora-Workstation-Live 39
  kernel vmlinuz
  append initrd=initrd.img root=live:CDLABEL=FIXTURE  rd.live.image quiet rhgb
  menu default

label check
  menu label Test this ^media & start Fedora-Workstation-Live 39
  kernel vmlinuz
  append initrd=initrd.img root=live:CDLABEL=FIXTURE  rd.live.image rd.live.check quiet

menu separator # insert an empty line
menu begin ^Troubleshooting
  menu title Troubleshooting Fedora-Workstation-Live 39

label basic
  menu indent count 5
  menu label Start Fedora-Workstation-Live 39 in ^basic graphics mode
  kernel vmlinuz
  append initrd=initrd.img root=live:CDLABEL=FIXTURE  rd.live.image nomodeset quiet rhgb

label local
  menu label Boot from ^local drive
  localboot 0xffff

menu end
EOF
	echo "Fedora-Workstation-Live 39 (fixture)" >"$t/isolinux/boot.msg"
	isolinux_files "$t/isolinux"
	fat "$t/images/efiboot.img" 2048 "$grub_efi:/EFI/BOOT/BOOTX64.EFI" "$grub_efi:/EFI/BOOT/grubx64.efi" \
		"$t/EFI/BOOT/grub.cfg:/EFI/BOOT/grub.cfg"
}
fedora41_iso() { # OUT IMG: lorax 41: GRUB only (no isolinux): images/eltorito.img for BIOS,
	# efiboot.img appended as GPT partition 2 for UEFI (lorax's x86 template's xorrisofs call)
	local t=$work/iso-fedora41
	fedora_tree "$t" "$2"
	rm -rf "$t/isolinux"
	mkdir -p "$t/boot/grub2/i386-pc"
	cp "$grub_eltorito" "$t/images/eltorito.img"
	cp /usr/lib/grub/i386-pc/{normal,linux,search,iso9660}.mod "$t/boot/grub2/i386-pc/"
	mv "$t/images/efiboot.img" "$work/fedora41-efiboot.img"
	run xorriso -as mkisofs -o "$1" -R -J -V "$LABEL" --grub2-mbr /usr/lib/grub/i386-pc/boot_hybrid.img \
		-partition_offset 16 -appended_part_as_gpt \
		-append_partition 2 C12A7328-F81F-11D2-BA4B-00A0C93EC93B "$work/fedora41-efiboot.img" \
		-iso_mbr_part_type EBD0A0A2-B9E5-4433-87C0-68B6B72699C7 -c boot.cat --boot-catalog-hide \
		-b images/eltorito.img -no-emul-boot -boot-load-size 4 -boot-info-table --grub2-boot-info \
		-eltorito-alt-boot -e --interval:appended_partition_2:all:: -no-emul-boot "$t"
	run implantisomd5 --force "$1"
}
fedora_iso() { # OUT IMG
	local t
	t=$work/iso-$(basename "$1" .iso)
	fedora_tree "$t" "$2"
	mkiso_isolinux "$1" "$t" isolinux images/efiboot.img
	run implantisomd5 --force "$1"
}

# ---- Debian live-build -------------------------------------------------------------
debian_iso() { # OUT ROOT
	local o=$1 r=$2 t=$work/iso-debian
	mkdir -p "$t/live" "$t/isolinux" "$t/boot/grub/x86_64-efi" "$t/EFI/boot" "$t/.disk"
	squash "$r" "$t/live/filesystem.squashfs" -comp xz
	dusize "$r" >"$t/live/filesystem.size"
	printf 'base-files\t12.4+deb12u5\nbusybox-static\t1:1.35.0-4+b3\n' >"$t/live/filesystem.packages"
	dummy "$t/live/vmlinuz" 65536
	dummy "$t/live/initrd.img" 131072
	dummy "$t/live/memtest" 8192
	echo "Debian GNU/Linux 12 \"Bookworm\" - Official Snapshot amd64 LIVE/INSTALL Binary 20240101-00:00" >"$t/.disk/info"
	isolinux_files "$t/isolinux" menu.c32
	cat >"$t/isolinux/isolinux.cfg" <<'EOF'
include menu.cfg
default vesamenu.c32
prompt 0
timeout 0
EOF
	cat >"$t/isolinux/menu.cfg" <<'EOF'
menu hshift 0
menu width 82

menu title Boot menu
include stdmenu.cfg
include live.cfg
menu clear
EOF
	cat >"$t/isolinux/stdmenu.cfg" <<'EOF'
menu color title	* #FFFFFFFF *
menu color sel		* #ffffffff #55555555 *
menu vshift 12
menu rows 10
menu tabmsgrow 15
EOF
	cat >"$t/isolinux/live.cfg" <<'EOF'
label live-amd64
	menu label ^Live system (amd64)
	menu default
	linux /live/vmlinuz
	initrd /live/initrd.img
	append boot=live components quiet splash

label live-amd64-failsafe
	menu label Live system (amd64 fail-safe mode)
	linux /live/vmlinuz
	initrd /live/initrd.img
	append boot=live components memtest noapic noapm nodma nomce nolapic nosmp nosplash vga=788

label memtest
	menu label ^Memory Diagnostic Tool (memtest86+)
	linux /live/memtest
EOF
	cat >"$t/boot/grub/config.cfg" <<'EOF'
set default=0
set timeout=5
loadfont $prefix/font.pf2
insmod all_video
EOF
	cat >"$t/boot/grub/grub.cfg" <<'EOF'
source /boot/grub/config.cfg

# Live boot
menuentry "Live system (amd64)" --hotkey=l {
	linux	/live/vmlinuz boot=live components quiet splash findiso=${iso_path}
	initrd	/live/initrd.img
}
menuentry "Live system (amd64 fail-safe mode)" {
	linux	/live/vmlinuz boot=live components memtest noapic noapm nodma nomce nolapic nosmp nosplash vga=788
	initrd	/live/initrd.img
}

submenu 'Utilities...' --hotkey=u {
	source /boot/grub/theme.cfg

	# Memtest (if any)
	menuentry "Memory Diagnostic Tool (memtest86+)" --hotkey=m {
		linux16 /live/memtest
	}
}
EOF
	echo 'set menu_color_normal=cyan/blue' >"$t/boot/grub/theme.cfg"
	echo 'source /boot/grub/grub.cfg' >"$t/boot/grub/loopback.cfg"
	cp "$grub_efi" "$t/EFI/boot/bootx64.efi"
	cp "$grub_efi" "$t/EFI/boot/grubx64.efi"
	printf 'search --set=root --file /.disk/info\nset prefix=($root)/boot/grub\nsource $prefix/x86_64-efi/grub.cfg\n' >"$work/efi-stub.cfg"
	cp "$work/efi-stub.cfg" "$t/EFI/boot/grub.cfg"
	printf 'insmod part_acorn\ninsmod part_amiga\nsource /boot/grub/grub.cfg\n' >"$t/boot/grub/x86_64-efi/grub.cfg"
	fat "$t/boot/grub/efi.img" 1440 "$grub_efi:/EFI/boot/bootx64.efi" "$work/efi-stub.cfg:/boot/grub/grub.cfg"
	# live-build's binary_checksums: every file but the sums and the patched isolinux.bin
	sums "$t" md5sum md5sum.txt sha256sum.txt isolinux/isolinux.bin
	sums "$t" sha256sum sha256sum.txt md5sum.txt isolinux/isolinux.bin
	mkiso_isolinux "$o" "$t" isolinux boot/grub/efi.img
}

# ---- Ubuntu casper -------------------------------------------------------------------
ubuntu_boot() { # TREE GRUBCFG LOOPBACKCFG
	local t=$1
	mkdir -p "$t/boot/grub/i386-pc" "$t/EFI/boot" "$t/.disk"
	cp "$grub_eltorito" "$t/boot/grub/i386-pc/eltorito.img"
	cp /usr/lib/grub/i386-pc/{normal,linux,search,iso9660}.mod "$t/boot/grub/i386-pc/"
	cp "$grub_efi" "$t/EFI/boot/bootx64.efi"
	cp "$grub_efi" "$t/EFI/boot/grubx64.efi"
	dummy "$t/EFI/boot/mmx64.efi" 8192
	dummy "$t/casper/vmlinuz" 65536
	dummy "$t/casper/initrd" 131072
	dummy "$t/boot/memtest86+.bin" 8192
	printf '%s' "$2" >"$t/boot/grub/grub.cfg"
	printf '%s' "$3" >"$t/boot/grub/loopback.cfg"
	echo "Ubuntu 22.04.4 LTS \"Jammy Jellyfish\" - Release amd64 (20240220)" >"$t/.disk/info"
	echo "full_cd/single" >"$t/.disk/cd_type"
	: >"$t/.disk/base_installable"
	echo 0b1cbd1a-1a1b-4e2c-9f4e-2a9d4f3c6a11 >"$t/.disk/casper-uuid-generic"
	printf 'search --set=root --file /.disk/info\nset prefix=($root)/boot/grub\nconfigfile $prefix/grub.cfg\n' >"$work/ubuntu-efi.cfg"
	fat "$work/ubuntu-efi.img" 4096 "$grub_efi:/EFI/boot/bootx64.efi" "$grub_efi:/EFI/boot/grubx64.efi" \
		"$work/ubuntu-efi.cfg:/boot/grub/grub.cfg"
	sums "$t" md5sum md5sum.txt boot/grub/i386-pc/eltorito.img
}
ubuntu_mkiso() { # OUT TREE: 22.04's xorriso call (from -report_el_torito as_mkisofs)
	run xorriso -as mkisofs -r -V "$LABEL" -o "$1" -J -joliet-long -l \
		--modification-date=2024022016394200 \
		--grub2-mbr /usr/lib/grub/i386-pc/boot_hybrid.img \
		--protective-msdos-label -partition_cyl_align off -partition_offset 16 --mbr-force-bootable \
		-append_partition 2 28732ac11ff8d211ba4b00a0c93ec93b "$work/ubuntu-efi.img" \
		-appended_part_as_gpt -iso_mbr_part_type a2a0d0ebe5b9334487c068b6b72699c7 \
		-c /boot.catalog -b /boot/grub/i386-pc/eltorito.img -no-emul-boot -boot-load-size 4 \
		-boot-info-table --grub2-boot-info \
		-eltorito-alt-boot -e --interval:appended_partition_2:all:: -no-emul-boot \
		"$2"
}
ubuntu_iso() { # OUT ROOT
	local r=$2 t=$work/iso-ubuntu
	mkdir -p "$t/casper"
	squash "$r" "$t/casper/filesystem.squashfs" -comp xz
	dusize "$r" >"$t/casper/filesystem.size"
	printf 'base-files\t12ubuntu4.6\nbusybox-static\t1:1.30.1-7ubuntu3\n' >"$t/casper/filesystem.manifest"
	printf 'casper\nubiquity\n' >"$t/casper/filesystem.manifest-remove"
	dummy "$t/casper/filesystem.squashfs.gpg" 833 # a detached signature nobody can remake
	ubuntu_boot "$t" 'set timeout=30

loadfont unicode

set menu_color_normal=white/black
set menu_color_highlight=black/light-gray

menuentry "Try or Install Ubuntu" {
	set gfxpayload=keep
	linux	/casper/vmlinuz boot=casper file=/cdrom/preseed/ubuntu.seed maybe-ubiquity quiet splash ---
	initrd	/casper/initrd
}
menuentry "Ubuntu (safe graphics)" {
	set gfxpayload=keep
	linux	/casper/vmlinuz boot=casper nomodeset file=/cdrom/preseed/ubuntu.seed maybe-ubiquity quiet splash ---
	initrd	/casper/initrd
}
grub_platform
if [ "$grub_platform" = "efi" ]; then
menuentry '"'"'Boot from next volume'"'"' {
	exit 1
}
menuentry '"'"'UEFI Firmware Settings'"'"' {
	fwsetup
}
else
menuentry '"'"'Test memory'"'"' {
	linux16 /boot/memtest86+.bin
}
fi
' 'menuentry "Try or Install Ubuntu" {
	set gfxpayload=keep
	linux	/casper/vmlinuz boot=casper file=/cdrom/preseed/ubuntu.seed maybe-ubiquity iso-scan/filename=${iso_path} quiet splash ---
	initrd	/casper/initrd
}
menuentry "Ubuntu (safe graphics)" {
	set gfxpayload=keep
	linux	/casper/vmlinuz boot=casper nomodeset file=/cdrom/preseed/ubuntu.seed maybe-ubiquity iso-scan/filename=${iso_path} quiet splash ---
	initrd	/casper/initrd
}
'
	ubuntu_mkiso "$1" "$t"
}
ubuntu_layered_iso() { # OUT ROOT
	local r=$2 t=$work/iso-ubuntu-layered l
	mkdir -p "$t/casper"
	mk_delta "$work/layer-standard" standard
	mk_delta "$work/layer-live" live
	pin_times "$work/layer-standard"
	pin_times "$work/layer-live"
	squash "$r" "$t/casper/minimal.squashfs" -comp xz
	squash "$work/layer-standard" "$t/casper/minimal.standard.squashfs" -comp xz
	squash "$work/layer-live" "$t/casper/minimal.standard.live.squashfs" -comp xz
	dusize "$r" >"$t/casper/minimal.size"
	dusize "$work/layer-standard" >"$t/casper/minimal.standard.size"
	dusize "$work/layer-live" >"$t/casper/minimal.standard.live.size"
	for l in minimal minimal.standard minimal.standard.live; do
		printf 'base-files\t13ubuntu10\n' >"$t/casper/$l.manifest"
	done
	printf 'sources:\n- description: Ubuntu Desktop\n  id: ubuntu-desktop-minimal\n  path: minimal.standard.squashfs\n' \
		>"$t/casper/install-sources.yaml"
	ubuntu_boot "$t" 'set timeout=30

loadfont unicode

menuentry "Try or Install Ubuntu" {
	set gfxpayload=keep
	linux	/casper/vmlinuz  --- quiet splash
	initrd	/casper/initrd
}
menuentry "Ubuntu (safe graphics)" {
	set gfxpayload=keep
	linux	/casper/vmlinuz  nomodeset --- quiet splash
	initrd	/casper/initrd
}
' 'menuentry "Try or Install Ubuntu" {
	set gfxpayload=keep
	linux	/casper/vmlinuz  iso-scan/filename=${iso_path} --- quiet splash
	initrd	/casper/initrd
}
'
	ubuntu_mkiso "$1" "$t"
}

# ---- Arch archiso ----------------------------------------------------------------------
arch_iso() { # OUT IMG NAME SIGNAME [SYSLINUX-FOLDER: syslinux; boot/syslinux since archiso 2024]
	local o=$1 img=$2 name=$3 sig=$4 sl=${5:-syslinux} t x
	t=$work/iso-$(basename "$1" .iso)
	x=$t/arch/x86_64
	mkdir -p "$x" "$t/arch/boot/x86_64" "$t/loader/entries" "$t/EFI/BOOT" "$t/boot/grub" "$t/$sl"
	cp "$img" "$x/$name"
	(cd "$x" && sha512sum "$name" >airootfs.sha512)
	dummy "$x/$sig" 566
	dummy "$t/arch/boot/x86_64/vmlinuz-linux" 65536
	dummy "$t/arch/boot/x86_64/initramfs-linux.img" 131072
	dummy "$t/arch/boot/amd-ucode.img" 4096
	dummy "$t/arch/boot/intel-ucode.img" 4096
	echo 2024.01.01 >"$t/arch/version"
	printf 'base 3-2\nbusybox 1.36.1-2\n' >"$t/arch/pkglist.x86_64.txt"
	dummy "$t/EFI/BOOT/BOOTx64.EFI" 110000 # systemd-boot (dummy bytes)
	printf 'timeout 15\ndefault 01-archiso-x86_64-linux.conf\nbeep on\n' >"$t/loader/loader.conf"
	cat >"$t/loader/entries/01-archiso-x86_64-linux.conf" <<'EOF'
title    Arch Linux install medium (x86_64, UEFI)
sort-key 01
linux    /arch/boot/x86_64/vmlinuz-linux
initrd   /arch/boot/intel-ucode.img
initrd   /arch/boot/amd-ucode.img
initrd   /arch/boot/x86_64/initramfs-linux.img
options  archisobasedir=arch archisolabel=FIXTURE quiet
EOF
	cat >"$t/loader/entries/02-archiso-x86_64-speech-linux.conf" <<'EOF'
title    Arch Linux install medium (x86_64, UEFI) with speech
sort-key 02
linux    /arch/boot/x86_64/vmlinuz-linux
initrd   /arch/boot/x86_64/initramfs-linux.img
options  archisobasedir=arch archisolabel=FIXTURE accessibility=on
EOF
	cat >"$t/boot/grub/grub.cfg" <<'EOF'
insmod part_gpt
insmod part_msdos
insmod fat
insmod iso9660

if loadfont "${prefix}/fonts/unicode.pf2" ; then
    insmod all_video
    set gfxmode="auto"
fi

default=archlinux
timeout=15

menuentry "Arch Linux install medium (x86_64, UEFI)" --class arch --class gnu-linux --class gnu --class os --id 'archlinux' {
    set gfxpayload=keep
    linux /arch/boot/x86_64/vmlinuz-linux archisobasedir=arch archisosearchuuid=2024-01-01-00-00-00-00 quiet
    initrd /arch/boot/intel-ucode.img /arch/boot/amd-ucode.img /arch/boot/x86_64/initramfs-linux.img
}

menuentry "Arch Linux install medium with speakup screen reader (x86_64, UEFI)" --hotkey s --class arch --class gnu-linux --class gnu --class os --id 'archlinux-accessibility' {
    set gfxpayload=keep
    linux /arch/boot/x86_64/vmlinuz-linux archisobasedir=arch archisosearchuuid=2024-01-01-00-00-00-00 accessibility=on
    initrd /arch/boot/intel-ucode.img /arch/boot/amd-ucode.img /arch/boot/x86_64/initramfs-linux.img
}

menuentry 'System shutdown' --class shutdown --class poweroff {
    echo 'System is shutting down...'
    halt
}
EOF
	sed 's/archisosearchuuid=[^ ]*/img_dev=UUID=${archiso_img_dev_uuid} img_loop="${iso_path}"/' \
		"$t/boot/grub/grub.cfg" >"$t/boot/grub/loopback.cfg"
	isolinux_files "$t/$sl" chain.c32 menu.c32
	cp "$ISOLINUX/isohdpfx.bin" "$t/$sl/"
	cat >"$t/$sl/syslinux.cfg" <<'EOF'
DEFAULT select

LABEL select
COM32 whichsys.c32
APPEND -pxe- pxe -sys- sys -iso- sys

LABEL pxe
CONFIG archiso_pxe.cfg

LABEL sys
CONFIG archiso_sys.cfg
EOF
	cp "$SYSLINUX_BIOS/whichsys.c32" "$t/$sl/"
	cat >"$t/$sl/archiso_sys.cfg" <<'EOF'
INCLUDE archiso_head.cfg

DEFAULT arch64
TIMEOUT 150

INCLUDE archiso_sys-linux.cfg

INCLUDE archiso_tail.cfg
EOF
	cat >"$t/$sl/archiso_head.cfg" <<'EOF'
SERIAL 0 115200
UI vesamenu.c32
MENU TITLE Arch Linux
MENU CLEAR
EOF
	cat >"$t/$sl/archiso_sys-linux.cfg" <<'EOF'
LABEL arch64
TEXT HELP
Boot the Arch Linux install medium on BIOS.
It allows you to install Arch Linux or perform system maintenance.
ENDTEXT
MENU LABEL Arch Linux install medium (x86_64, BIOS)
LINUX /arch/boot/x86_64/vmlinuz-linux
INITRD /arch/boot/intel-ucode.img,/arch/boot/amd-ucode.img,/arch/boot/x86_64/initramfs-linux.img
APPEND archisobasedir=arch archisolabel=FIXTURE

# Accessibility boot option
LABEL arch64speech
TEXT HELP
Boot the Arch Linux install medium on BIOS with speakup screen reader.
It allows you to install Arch Linux or perform system maintenance with speech feedback.
ENDTEXT
MENU LABEL Arch Linux install medium (x86_64, BIOS) with ^speech
LINUX /arch/boot/x86_64/vmlinuz-linux
INITRD /arch/boot/intel-ucode.img,/arch/boot/amd-ucode.img,/arch/boot/x86_64/initramfs-linux.img
APPEND archisobasedir=arch archisolabel=FIXTURE accessibility=on
EOF
	cat >"$t/$sl/archiso_pxe.cfg" <<'EOF'
INCLUDE archiso_head.cfg

LABEL arch64_nbd
MENU LABEL Arch Linux install medium (x86_64, NBD)
LINUX ::/arch/boot/x86_64/vmlinuz-linux
INITRD ::/arch/boot/x86_64/initramfs-linux.img
APPEND archisobasedir=arch archisolabel=FIXTURE archiso_nbd_srv=${pxeserver} cms_verify=y
SYSAPPEND 3

INCLUDE archiso_tail.cfg
EOF
	cat >"$t/$sl/archiso_tail.cfg" <<'EOF'
LABEL existing
TEXT HELP
Boot an existing operating system.
Press TAB to edit the disk and partition number to boot.
ENDTEXT
MENU LABEL Boot existing OS
COM32 chain.c32
APPEND hd0 0

LABEL reboot
TEXT HELP
Reboot computer.
The computer's firmware must support APM.
ENDTEXT
MENU LABEL Reboot
COM32 reboot.c32

LABEL poweroff
MENU LABEL Power Off
COM32 poweroff.c32
EOF
	cp "$SYSLINUX_BIOS/reboot.c32" "$SYSLINUX_BIOS/poweroff.c32" "$t/$sl/"
	# the ESP: systemd-boot, its entries and the kernel (archiso's uefi-x64.systemd-boot.esp)
	fat "$work/arch-efiboot.img" 2048 "$t/EFI/BOOT/BOOTx64.EFI:/EFI/BOOT/BOOTx64.EFI" \
		"$t/loader/loader.conf:/loader/loader.conf" \
		"$t/loader/entries/01-archiso-x86_64-linux.conf:/loader/entries/01-archiso-x86_64-linux.conf" \
		"$t/loader/entries/02-archiso-x86_64-speech-linux.conf:/loader/entries/02-archiso-x86_64-speech-linux.conf" \
		"$t/arch/boot/x86_64/vmlinuz-linux:/arch/boot/x86_64/vmlinuz-linux" \
		"$t/arch/boot/x86_64/initramfs-linux.img:/arch/boot/x86_64/initramfs-linux.img" \
		"$t/arch/boot/intel-ucode.img:/arch/boot/intel-ucode.img" \
		"$t/arch/boot/amd-ucode.img:/arch/boot/amd-ucode.img"
	# mkarchiso's xorriso call for bios.syslinux.mbr, bios.syslinux.eltorito, uefi-x64.systemd-boot.esp
	# and .eltorito: no -appended_part_as_gpt (BIOS booting wants its "invalid" GPT), -isohybrid-gpt-basdat
	# after -e
	run xorriso -as mkisofs -iso-level 3 -full-iso9660-filenames -joliet -joliet-long -rational-rock \
		-volid "$LABEL" -appid "Arch Linux baseline" -publisher "Arch Linux <https://archlinux.org>" \
		-preparer "prepared by mkarchiso" --modification-date=2024010100000000 \
		-eltorito-boot "$sl/isolinux.bin" -eltorito-catalog "$sl/boot.cat" -no-emul-boot \
		-boot-load-size 4 -boot-info-table -isohybrid-mbr "$t/$sl/isohdpfx.bin" \
		-partition_offset 16 \
		-append_partition 2 C12A7328-F81F-11D2-BA4B-00A0C93EC93B "$work/arch-efiboot.img" \
		-eltorito-alt-boot -e --interval:appended_partition_2:all:: -no-emul-boot -isohybrid-gpt-basdat \
		-output "$o" "$t"
}

# ---- small ISOs for the error cases -----------------------------------------------------
plain_iso() { # OUT TREE: isolinux + an efi.img, whatever else TREE holds
	local o=$1 t=$2
	mkdir -p "$t/isolinux" "$t/EFI/BOOT"
	isolinux_files "$t/isolinux"
	printf 'default linux\nlabel linux\n  kernel vmlinuz\n  append root=live:CDLABEL=FIXTURE quiet\n' >"$t/isolinux/isolinux.cfg"
	dummy "$t/isolinux/vmlinuz" 4096
	printf 'menuentry x {\n\tlinux /isolinux/vmlinuz root=live:CDLABEL=FIXTURE quiet\n}\n' >"$t/EFI/BOOT/grub.cfg"
	fat "$t/efi.img" 1440 "$grub_efi:/EFI/BOOT/BOOTX64.EFI" "$t/EFI/BOOT/grub.cfg:/EFI/BOOT/grub.cfg"
	mkiso_isolinux "$o" "$t" isolinux efi.img
}

# ---- build them ------------------------------------------------------------------------------
start=$(date +%s.%N)
for flavor in fedora debian ubuntu arch; do
	mk_root "$work/root-$flavor" "$flavor"
	pin_times "$work/root-$flavor"
done
mk_delta "$work/root-nosh" nosh
pin_times "$work/root-nosh"

squash "$work/root-fedora" "$work/fedora.sqfs" -comp xz -Xbcj x86
fedora_iso "$out/fedora.iso" "$work/fedora.sqfs"
fedora41_iso "$out/fedora41.iso" "$work/fedora.sqfs"
# EROFS: fsck.erofs 1.5 cannot extract xattrs, so iso/remaster takes only images
# without any (-x-1) and refuses the others (fedora-erofs-xattrs, -selinux)
erofs "$work/root-fedora" "$work/fedora.erofs" -zlz4hc,12 -C1048576 -x-1
fedora_iso "$out/fedora-erofs.iso" "$work/fedora.erofs"
erofs "$work/root-fedora" "$work/fedora-xattrs.erofs" -zlz4hc,12 -C1048576
fedora_iso "$out/fedora-erofs-xattrs.iso" "$work/fedora-xattrs.erofs"
# Fedora's own: an SELinux label on every inode
cp -a "$work/root-fedora" "$work/root-selinux"
find "$work/root-selinux" -exec setfattr -h -n security.selinux -v system_u:object_r:default_t:s0 {} +
erofs "$work/root-selinux" "$work/selinux.erofs" -zlz4hc,12 -C1048576
fedora_iso "$out/fedora-erofs-selinux.iso" "$work/selinux.erofs"
debian_iso "$out/debian.iso" "$work/root-debian"
ubuntu_iso "$out/ubuntu.iso" "$work/root-ubuntu"
ubuntu_layered_iso "$out/ubuntu-layered.iso" "$work/root-ubuntu"
squash "$work/root-arch" "$work/arch.sfs" -comp zstd -Xcompression-level 19 -b 1M
arch_iso "$out/arch.iso" "$work/arch.sfs" airootfs.sfs airootfs.sfs.sig
erofs "$work/root-arch" "$work/arch.erofs" -zlz4hc -Eztailpacking -x-1
arch_iso "$out/arch-erofs.iso" "$work/arch.erofs" airootfs.erofs airootfs.erofs.cms.sig
# archiso 2025 (releng): the syslinux files under boot/syslinux, the root xz with the x86 BCJ
# filter, 1 MiB blocks and dictionary
squash "$work/root-arch" "$work/arch2025.sfs" -comp xz -Xbcj x86 -b 1M -Xdict-size 1M
arch_iso "$out/arch2025.iso" "$work/arch2025.sfs" airootfs.sfs airootfs.sfs.sig boot/syslinux
squash "$work/root-nosh" "$work/nosh.sqfs" -comp xz
fedora_iso "$out/nosh.iso" "$work/nosh.sqfs"

# space: ~42 MB unpacked, ~1 MB packed
mk_root "$work/root-space" fedora
yes 'livesquash space fixture: a line of text that packs very well' | head -c 41943040 >"$work/root-space/usr/share/fixture/big.txt" || true
pin_times "$work/root-space"
squash "$work/root-space" "$work/space.sqfs" -comp gzip
fedora_iso "$out/space.iso" "$work/space.sqfs"

mkdir -p "$work/iso-two/LiveOS" "$work/iso-two/live"
cp "$work/nosh.sqfs" "$work/iso-two/LiveOS/squashfs.img"
cp "$work/nosh.sqfs" "$work/iso-two/live/filesystem.squashfs"
plain_iso "$out/two-images.iso" "$work/iso-two"
mkdir -p "$work/iso-none/LiveOS"
echo "no root image here" >"$work/iso-none/LiveOS/README"
plain_iso "$out/no-image.iso" "$work/iso-none"
head -c 1048576 /dev/urandom >"$out/not-an-iso.iso"

chmod 0644 "$out"/*.iso
echo "fixtures.sh: $(cd "$out" && find . -maxdepth 1 -name '*.iso' | wc -l) ISOs in $out ($(du -sh --exclude=.work "$out" | cut -f1)) in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
