# Kernel: Debian's linux-source-6.1 with fs/squashfs replaced by our fs-squashfs/,
# configured from Debian's distro config (kernel-config/make-config.sh), built out
# of tree with ccache. An edit in fs-squashfs/ recompiles the driver and relinks.

KSRC_TAR ?= /usr/src/linux-source-6.1.tar.xz
KSRC := $(BUILD)/linux-source-6.1
KOBJ := $(BUILD)/kobj
DEBIAN_KCONFIG ?= /usr/src/linux-config-6.1/config.amd64_none_amd64.xz
KFRAGMENTS := $(sort $(wildcard $(TOP)/kernel-config/*.config))
BZIMAGE := $(KOBJ)/arch/x86/boot/bzImage
KRELEASE = $(shell cat $(KOBJ)/include/config/kernel.release 2>/dev/null)
DRIVER_SRC := $(shell find $(TOP)/fs-squashfs -name '*.[ch]' -o -name Kconfig -o -name Makefile 2>/dev/null)

export CCACHE_BASEDIR := $(TOP)
export CCACHE_MAXSIZE ?= 5G
export KBUILD_BUILD_USER := livesquash
export KBUILD_BUILD_HOST := livesquash
export KBUILD_BUILD_TIMESTAMP := 2026-01-01
# GNU ls and du read BLOCK_SIZE/BLOCKSIZE from the environment, and the
# kernel's build measures file sizes with ls: never let them leak in.
KMAKE = env -u BLOCK_SIZE -u BLOCKSIZE $(MAKE) -C $(KSRC) O=$(KOBJ) CC="ccache gcc" -j$(JOBS)

.PHONY: kernel kernel-tree kernel-config
kernel: $(BZIMAGE) ## build our kernel (bzImage) with fs-squashfs/ built in

kernel-tree: $(KSRC)/.livesquash-tree ## extract linux-source-6.1 and link fs/squashfs to fs-squashfs/

$(KSRC)/.livesquash-tree: | $(KSRC_TAR)
	@echo "kernel: extracting $(KSRC_TAR)"
	rm -rf $(KSRC) && mkdir -p $(BUILD)
	tar -xJf $(KSRC_TAR) -C $(BUILD)
	rm -rf $(KSRC)/fs/squashfs
	ln -s $(TOP)/fs-squashfs $(KSRC)/fs/squashfs
	touch $@

$(KSRC_TAR):
	@echo "kernel: $@ is missing: run 'make deps' (package linux-source-6.1)" >&2; exit 1

kernel-config: $(KOBJ)/.config ## derive build/kobj/.config from Debian's config plus kernel-config/*.config

$(KOBJ)/.config: $(KSRC)/.livesquash-tree $(KFRAGMENTS) $(TOP)/kernel-config/make-config.sh fs-squashfs/Kconfig
	$(TOP)/kernel-config/make-config.sh $(KSRC) $(KOBJ) $(DEBIAN_KCONFIG) $(KFRAGMENTS)

$(BZIMAGE): $(KOBJ)/.config $(DRIVER_SRC)
	@echo "kernel: building bzImage in $(KOBJ) (a fresh build takes ~25 min on 2 cores; ccache makes rebuilds fast)"
	@start=$$(date +%s); $(KMAKE) bzImage 2>&1 | tee $(BUILD)/kernel-build.log | \
		grep -E --line-buffered '^(  (CC|LD|AR|AS)  .*(fs/squashfs|vmlinux)|.*(error|warning):)' || true; \
		[ "$${PIPESTATUS[0]}" = 0 ] || { echo "kernel: build failed, see $(BUILD)/kernel-build.log" >&2; exit 1; }; \
		echo "kernel: $$(cat $(KOBJ)/include/config/kernel.release) built in $$(( $$(date +%s) - start )) s"
	@touch $@

# Debian 13's Linux 6.12, the driver's second kernel: trixie's linux-source-6.12
# and linux-config-6.12, fetched with apt from the trixie suite of the mirror apt
# already uses into build/trixie/ (kernel-config/trixie.sh; never installed), the
# tree extracted there and prepared for building modules from trixie's own amd64
# config (module signing keys off). The lint builds fs-squashfs/ against it (W=1,
# sparse). Our kernel, the ISOs and the boot tests are still 6.1.
TRIXIE := $(BUILD)/trixie
KSRC_612 := $(TRIXIE)/linux-source-6.12
KOBJ_612_MOD := $(BUILD)/kobj-6.12-mod

.PHONY: kernel-tree-6.12
kernel-tree-6.12: $(KOBJ_612_MOD)/.prepared ## fetch trixie's linux-source-6.12 and linux-config-6.12 into build/trixie/ (apt-get download, never installed) and prepare the tree for building fs-squashfs/ against 6.12

$(KSRC_612)/.livesquash-tree: $(TOP)/kernel-config/trixie.sh
	@bash $(TOP)/kernel-config/trixie.sh $(TRIXIE)/pkgs linux-source-6.12 linux-config-6.12
	@echo "kernel-tree-6.12: extracting linux-source-6.12.tar.xz"
	@rm -rf $(KSRC_612) $(KSRC_612).tmp && mkdir -p $(KSRC_612).tmp
	@tar -xJf $(TRIXIE)/pkgs/root/usr/src/linux-source-6.12.tar.xz -C $(KSRC_612).tmp --strip-components=1
	@mv $(KSRC_612).tmp $(KSRC_612) && touch $@

$(KOBJ_612_MOD)/.prepared: $(KSRC_612)/.livesquash-tree
	@rm -rf $(KOBJ_612_MOD) && mkdir -p $(KOBJ_612_MOD)
	@xzcat $(TRIXIE)/pkgs/root/usr/src/linux-config-6.12/config.amd64_none_amd64.xz >$(KOBJ_612_MOD)/.config
	@$(KSRC_612)/scripts/config --file $(KOBJ_612_MOD)/.config --set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS "" --disable MODULE_SIG --disable DEBUG_INFO_BTF
	@echo "kernel-tree-6.12: modules_prepare in $(KOBJ_612_MOD)"
	@env -u BLOCK_SIZE -u BLOCKSIZE $(MAKE) -s -C $(KSRC_612) O=$(KOBJ_612_MOD) olddefconfig modules_prepare
	@touch $@

# The debug kernel: the same config plus kernel-config/debug/*.config (KASAN, UBSAN,
# lockdep, kmemleak, KCOV, fault injection), in its own object folder. For make fuzz
# and the fault tests; never on an ISO.
KOBJ_DEBUG := $(BUILD)/kobj-debug
BZIMAGE_DEBUG := $(KOBJ_DEBUG)/arch/x86/boot/bzImage
KFRAGMENTS_DEBUG := $(sort $(wildcard $(TOP)/kernel-config/debug/*.config))

.PHONY: kernel-debug
kernel-debug: $(BZIMAGE_DEBUG) ## build the debug kernel (KASAN, UBSAN, lockdep, KCOV) in build/kobj-debug (~40 min fresh)

$(KOBJ_DEBUG)/.config: $(KSRC)/.livesquash-tree $(KFRAGMENTS) $(KFRAGMENTS_DEBUG) $(TOP)/kernel-config/make-config.sh fs-squashfs/Kconfig
	$(TOP)/kernel-config/make-config.sh $(KSRC) $(KOBJ_DEBUG) $(DEBIAN_KCONFIG) $(KFRAGMENTS) $(KFRAGMENTS_DEBUG)

$(BZIMAGE_DEBUG): $(KOBJ_DEBUG)/.config $(DRIVER_SRC)
	@echo "kernel-debug: building bzImage in $(KOBJ_DEBUG)"
	@start=$$(date +%s); $(subst O=$(KOBJ),O=$(KOBJ_DEBUG),$(KMAKE)) bzImage 2>&1 | tee $(BUILD)/kernel-debug-build.log | \
		grep -E --line-buffered '^(  (CC|LD|AR|AS)  .*(fs/squashfs|vmlinux)|.*(error|warning):)' || true; \
		[ "$${PIPESTATUS[0]}" = 0 ] || { echo "kernel-debug: build failed, see $(BUILD)/kernel-debug-build.log" >&2; exit 1; }; \
		echo "kernel-debug: $$(cat $(KOBJ_DEBUG)/include/config/kernel.release) built in $$(( $$(date +%s) - start )) s"
	@touch $@

# The same driver as a module for Debian's own kernel (linux-image-amd64), so
# that it can be compared with the stock squashfs.ko on the very same kernel.
DEB_KHEADERS ?= $(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64)))## Debian kernel headers that `make module` builds against
MODULE_KO := $(BUILD)/module/squashfs.ko

.PHONY: module
module: $(MODULE_KO) ## build fs-squashfs/ as squashfs.ko against Debian's linux-headers-amd64 (W=1)

$(MODULE_KO): $(DRIVER_SRC)
	@[ -d "$(DEB_KHEADERS)" ] || { echo "module: no /usr/src/linux-headers-*-amd64: run 'make deps'" >&2; exit 1; }
	@mkdir -p $(BUILD)/module/src
	@rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' $(TOP)/fs-squashfs/ $(BUILD)/module/src/
	env -u BLOCK_SIZE -u BLOCKSIZE $(MAKE) -s -C $(DEB_KHEADERS) M=$(BUILD)/module/src W=1 modules
	@cp $(BUILD)/module/src/squashfs.ko $@
	@echo "module: $@ for $$(modinfo -F vermagic $@)"

.PHONY: patches
patches: $(KOBJ)/.config ## write build/patches/: a series replacing fs/squashfs in linux-source-6.1 with ours; applied to a fresh tree and built
	@bash $(TOP)/kernel-config/mkpatches.sh $(KSRC_TAR) $(BUILD)/patches --test $(BUILD)/patch-test $(KOBJ)/.config
