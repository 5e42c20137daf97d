# iso/iso.mk: root tree, squashfs image, initramfs, ISO, QEMU run, remaster.
# Included by the top-level Makefile (BUILD TOP ROOTFS COMP BLOCK CDLABEL
# FIRMWARE ACCEL MEM come from there, BZIMAGE from kernel-config/kernel.mk).
# Each step is a script in iso/ that skips work that is already up to date.

KERNEL ?= $(BZIMAGE)## kernel image put on the ISO
KVER ?= ## kernel version whose modules dracut adds (empty: our kernel, no modules, dracut --no-kernel)
DRACUT ?= 106## the dracut that makes the initramfs: 106 (Debian 13's dracut-ng, run in a trixie tree in build/trixie/dracut, never installed), 112 (forky's, in build/forky/dracut) or 059 (the host's, Debian 12's); any but 106 names its initramfs, tree and ISO *-dracutNNN
BOOT_ORDER ?= 1## iso: pack the image's files in the order a boot first reads them, from the profile BOOT_ORDER_SORT where there is one (mksquashfs -sort; those files without fragments, and squashfs.img.prefetch so that the initrd reads them in one pass from a CD/DVD); 0 = mksquashfs's own order
BOOT_ORDER_SORT ?= $(TOP)/iso/boot-order/$(ROOTFS)$(if $(filter debian-bookworm,$(ROOTFS)-$(DEBIAN_SUITE)),-bookworm).sort## iso: the boot-order profile (shipped for debian: debian.sort for trixie, debian-bookworm.sort; `make boot-order` makes it anew)
SIGN ?= ## iso: 1 = also make the Secure Boot ISO (ISO_SIGNED): shim, then GRUB and the kernel signed with the key in KEYDIR (iso/signiso; make keys first)
KEYDIR ?= $(HOME)/.config/livesquash/keys## keys, iso SIGN=1: the folder of your Secure Boot key (db.key, db.crt, db.der); never inside the repository
IN ?= ## remaster: input ISO
OUT ?= ## remaster: output ISO (must not exist unless FORCE=1)
ADD ?= ## remaster: folders merged into the root, space-separated
RUN ?= ## remaster: shell command run inside the unpacked root (chroot)
FORCE ?= ## remaster: 1 to overwrite OUT
IMAGE ?= ## remaster: the root image inside the ISO (default: found by layout)
CMDLINE_ADD ?= ## remaster: words appended to every boot entry's kernel command line
SORT ?= ## remaster: an mksquashfs -sort file ("PATH PRIORITY" lines; make boot-order makes one): the image's files in that order
CMDLINE_REMOVE ?= ## remaster: words removed from it ('quiet'; 'foo=' removes any foo=VALUE)
ISO_ADD ?= ## remaster: SRC:/DEST pairs, space-separated: files or folders put on the ISO itself (autoinstall, kickstart, preseed)
VOLID ?= ## remaster: the copy's volume label (boot configs that name the old one name it)
NETBOOT_DIR ?= $(BUILD)/netboot/$(ROOTFS)## netboot: the bundle's folder (serve it over TFTP and HTTP)
NETBOOT_URL ?= ## netboot: where NETBOOT_DIR is served over HTTP, as the booted machine reaches it (default http://THE-TFTP-SERVER)

# the default dracut's and kernel's paths have no suffix; an ISO with our 6.1
# kernel (make iso LINUX=6.1) is build/livesquash-ROOTFS-linux6.1.iso, its tree
# of its own (the kernel is copied into the tree); the initramfs has no kernel
# modules (dracut --no-kernel), one serves both kernels
DRACUT_SUFFIX := $(if $(filter-out 106,$(DRACUT)),-dracut$(DRACUT))
ISO_SUFFIX := $(DRACUT_SUFFIX)$(if $(and $(filter $(BZIMAGE),$(KERNEL)),$(filter-out 6.12,$(LINUX))),-linux$(LINUX))
ISO_TREE := $(BUILD)/iso/$(ROOTFS)$(ISO_SUFFIX)/tree
SQUASHFS_IMG := $(ISO_TREE)/LiveOS/squashfs.img
INITRD := $(BUILD)/initramfs$(DRACUT_SUFFIX)/initrd.img
ISO := $(BUILD)/livesquash-$(ROOTFS)$(ISO_SUFFIX).iso
INITRD_NET := $(BUILD)/initramfs-net/initrd.img
ISO_SIGNED ?= $(BUILD)/livesquash-$(ROOTFS)$(ISO_SUFFIX)-signed.iso## iso SIGN=1: the signed ISO (the unsigned ISO is made too, unchanged)
# the sort file mkimage.sh packs with: with BOOT_ORDER=1, where there is a profile
IMAGE_SORT = $(if $(filter 1,$(BOOT_ORDER)),$(wildcard $(BOOT_ORDER_SORT)))

export KERNEL KVER DRACUT

.PHONY: rootfs image initramfs initramfs-net iso netboot run remaster check-iso boot-order keys

rootfs: ## build the root tree build/rootfs/ROOTFS/ (busybox, or debian via a cached debootstrap)
	@bash $(TOP)/iso/mkrootfs.sh $(ROOTFS) $(BUILD)

image: rootfs ## pack the root tree into LiveOS/squashfs.img (+ .sha256) with mksquashfs
	@SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) bash $(TOP)/iso/mkimage.sh $(BUILD)/rootfs/$(ROOTFS) $(ISO_TREE) $(COMP) $(BLOCK) $(IMAGE_SORT)

initramfs: ## build build/initramfs/initrd.img with dracut (DRACUT) and dracut-module/90livesquash
	@SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) bash $(TOP)/iso/mkinitramfs.sh $(INITRD) $(TOP)/dracut-module/90livesquash $(KVER)

initramfs-net: ## build build/initramfs-net/initrd.img: the initramfs plus dracut's network module, for root=live:http(s)://... (dracut 106)
	@[ "$(DRACUT)" = 106 ] || { echo "initramfs-net: the network initramfs is made with dracut 106 (DRACUT=$(DRACUT))" >&2; exit 1; }
	@SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) MODULES="base udev-rules livesquash network" bash $(TOP)/iso/mkinitramfs.sh $(INITRD_NET) $(TOP)/dracut-module/90livesquash $(KVER)

netboot: iso initramfs-net ## make the network boot bundle NETBOOT_DIR of build/livesquash-ROOTFS.iso (kernel, network initramfs, image + sha256, GRUB for BIOS/UEFI PXE, boot.ipxe)
	@bash $(TOP)/iso/mknetboot --force $(if $(NETBOOT_URL),--url '$(NETBOOT_URL)') $(ISO) $(INITRD_NET) $(NETBOOT_DIR)

# $(KERNEL) is a prerequisite: with the default KERNEL=$(BZIMAGE) an edited
# driver rebuilds the kernel first; any other KERNEL= is just a file.
iso: image initramfs $(KERNEL) ## make build/livesquash-ROOTFS.iso (hybrid BIOS+UEFI, GRUB menu, volume label CDLABEL)
	@SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) bash $(TOP)/iso/mkiso.sh $(ISO) $(ISO_TREE) $(KERNEL) $(INITRD) $(CDLABEL) $(ROOTFS)
ifeq ($(SIGN),1)
	@SB_FILES=$(BUILD)/secureboot bash $(TOP)/iso/signiso $(ISO) $(ISO_SIGNED) '$(KEYDIR)'
endif

keys: ## make your own Secure Boot key in KEYDIR (never overwritten; enroll db.der in the firmware's db or with mokutil --import) for make iso SIGN=1
	@bash $(TOP)/iso/sbkeys '$(KEYDIR)'

boot-order: deps ## profile a boot of build/livesquash-ROOTFS.iso in QEMU: the order it first reads its files, as an mksquashfs -sort file (BOOT_ORDER_SORT: iso/boot-order/ROOTFS.sort, which the next make iso packs with)
	@[ -f "$(ISO)" ] || $(MAKE) --no-print-directory iso
	@bash $(TOP)/iso/boot-order.sh $(ISO) $(BOOT_ORDER_SORT)

run: deps iso ## boot build/livesquash-ROOTFS.iso in QEMU on this terminal (FIRMWARE, MEM; Ctrl-A X quits)
	@bash $(TOP)/iso/run.sh $(ISO) $(FIRMWARE) $(MEM) $(ACCEL) $(BUILD)

# Debian 13's erofs-utils (1.8: xattrs, hard links, lzma/deflate/zstd) for iso/remaster
# on EROFS roots; fetched into build/, run with its own C library, never installed
EROFS_UTILS := $(BUILD)/trixie/erofs/root/usr/bin/mkfs.erofs
.PHONY: erofs-utils
erofs-utils: $(EROFS_UTILS) ## fetch Debian 13's erofs-utils 1.8 into build/trixie/erofs (apt-get download, never installed): iso/remaster uses it for EROFS roots with xattrs (Fedora 42's SELinux labels) and lzma, deflate, zstd
$(EROFS_UTILS):
	@bash $(TOP)/kernel-config/trixie.sh $(BUILD)/trixie/erofs erofs-utils libc6 libdeflate0 liblz4-1 liblzma5 \
		libselinux1 libpcre2-8-0 libuuid1 libxxhash0 libzstd1 zlib1g
	@test -x $@

remaster: ## copy any distribution's live ISO with changes: make remaster IN=a.iso OUT=b.iso [ADD='dir ...'] [RUN='cmd'] [CMDLINE_ADD=...] [CMDLINE_REMOVE=...] [SORT=file] [IMAGE=...] [ISO_ADD='src:/dest ...'] [VOLID=...] [SIGN=1 KEYDIR=...] [FORCE=1]
	@[ -n "$(IN)" ] && [ -n "$(OUT)" ] || { echo "remaster: set IN=input.iso and OUT=output.iso" >&2; exit 1; }
	@bash $(TOP)/iso/remaster $(if $(FORCE),--force) $(if $(IMAGE),--image '$(IMAGE)') \
		$(foreach d,$(ADD),--add '$(d)') $(if $(RUN),--run '$(subst ','\'',$(RUN))') \
		$(if $(SORT),--sort '$(SORT)') $(if $(filter 1,$(SIGN)),--sign '$(KEYDIR)') $(foreach a,$(ISO_ADD),--iso-add '$(a)') $(if $(VOLID),--volid '$(VOLID)') $(if $(CMDLINE_ADD),--cmdline-add '$(CMDLINE_ADD)') $(if $(CMDLINE_REMOVE),--cmdline-remove '$(CMDLINE_REMOVE)') \
		'$(IN)' '$(OUT)'

check-iso: ## boot an ISO headless (BIOS and UEFI, as CD and as USB stick) and say whether it reaches userspace: make check-iso IN=a.iso
	@[ -n "$(IN)" ] || { echo "check-iso: set IN=the.iso" >&2; exit 1; }
	@bash $(TOP)/iso/check-iso '$(IN)'
