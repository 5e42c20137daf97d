# Kernel: Debian's kernel source with fs/squashfs replaced by our fs-squashfs/,
# configured from Debian's distro config of the same release
# (kernel-config/make-config.sh), built out of tree with ccache. An edit in
# fs-squashfs/ recompiles the driver and relinks.
#
# LINUX picks the release: 6.1 is Debian 12's linux-source-6.1 and
# linux-config-6.1 (installed by make deps); 6.12 is Debian 13's
# linux-source-6.12 and linux-config-6.12, fetched with apt-get download from
# the trixie suite of the mirror apt already uses into build/trixie/
# (kernel-config/trixie.sh; never installed). The fragments merged on Debian's
# config are kernel-config/*.config and kernel-config/LINUX/*.config (options
# that one release names differently or lacks).

LINUX ?= 6.12## our kernel's release: 6.1 (Debian 12's linux-source-6.1 and distro config), 6.12 (Debian 13's, fetched from the trixie suite into build/trixie/), 7.3 (trixie-backports', into build/trixie-backports/) or 7.2 (forky's, into build/forky/)
TRIXIE := $(BUILD)/trixie
# the Debian suite whose newest kernel each 7.x is
SUITE_OF_7.3 := trixie-backports
SUITE_OF_7.2 := forky
KSRC_612 := $(TRIXIE)/linux-source-6.12
KSRC_TAR ?= /usr/src/linux-source-6.1.tar.xz
# our kernel's objects for each release (kernel-config-diff reads both)
KOBJ_6.1 := $(BUILD)/kobj
KOBJ_6.12 := $(BUILD)/kobj-6.12
ifeq ($(LINUX),6.1)
KSRC := $(BUILD)/linux-source-6.1
KOBJ := $(KOBJ_6.1)
KOBJ_DEBUG := $(BUILD)/kobj-debug
DEBIAN_KCONFIG ?= /usr/src/linux-config-6.1/config.amd64_none_amd64.xz
else ifeq ($(LINUX),6.12)
KSRC := $(KSRC_612)
KOBJ := $(KOBJ_6.12)
KOBJ_DEBUG := $(BUILD)/kobj-debug-6.12
DEBIAN_KCONFIG := $(TRIXIE)/pkgs/root/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
else ifneq ($(SUITE_OF_$(LINUX)),)
# Linux 7.x: the suite's tree (suite-tree.sh: its newest linux-source-7.*, which
# must be LINUX) and the same version's linux-config
KSUITE := $(BUILD)/$(SUITE_OF_$(LINUX))
KSRC := $(KSUITE)/linux-source
KOBJ := $(BUILD)/kobj-$(LINUX)
KOBJ_DEBUG := $(BUILD)/kobj-debug-$(LINUX)
DEBIAN_KCONFIG := $(KSUITE)/pkgs/root/usr/src/linux-config-$(LINUX)/config.amd64_none_amd64.xz
else
$(error LINUX=$(LINUX): our kernel is built from Debian's 6.1, 6.12, 7.3 (trixie-backports) or 7.2 (forky))
endif
KFRAGMENTS := $(sort $(wildcard $(TOP)/kernel-config/*.config)) $(sort $(wildcard $(TOP)/kernel-config/$(LINUX)/*.config))
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

kernel-tree: $(KSRC)/.livesquash-tree ## extract Debian's linux-source-LINUX and link fs/squashfs to fs-squashfs/

$(BUILD)/linux-source-6.1/.livesquash-tree: | $(KSRC_TAR)
	@echo "kernel: extracting $(KSRC_TAR)"
	rm -rf $(@D) && mkdir -p $(BUILD)
	tar -xJf $(KSRC_TAR) -C $(BUILD)
	rm -rf $(@D)/fs/squashfs
	ln -s $(TOP)/fs-squashfs $(@D)/fs/squashfs
	touch $@

ifdef KSUITE
$(KSRC)/.livesquash-tree:
	@bash $(TOP)/kernel-config/suite-tree.sh $(notdir $(KSUITE)) $(KSUITE) $(TOP)

# (the tree may be older than linux-config fetching: fetch it on its own)
$(DEBIAN_KCONFIG): | $(KSRC)/.livesquash-tree
	@bash $(TOP)/kernel-config/trixie.sh --suite $(notdir $(KSUITE)) $(KSUITE)/pkgs linux-config-$(LINUX)

$(KOBJ)/.config $(KOBJ_DEBUG)/.config: $(DEBIAN_KCONFIG) $(KSUITE)/.linux-$(LINUX)

# the suite's newest 7.x must be the one asked for
$(KSUITE)/.linux-$(LINUX): $(KSRC)/.livesquash-tree
	@v=$$($(MAKE) -s --no-print-directory -C $(KSRC) kernelversion | cut -d. -f1,2); [ "$$v" = $(LINUX) ] || \
		{ echo "kernel: $(notdir $(KSUITE)) now ships Linux $$v, not $(LINUX): make ... LINUX=$$v" >&2; exit 1; }
	@touch $@
endif

$(KSRC_TAR):
	@echo "kernel: $@ is missing: run 'make deps' (package linux-source-6.1)" >&2; exit 1

kernel-config: $(KOBJ)/.config ## derive build/kobj[-LINUX]/.config from Debian's config plus kernel-config/*.config and kernel-config/LINUX/*.config; its difference from Debian's config (modules off) in config-vs-debian.diff

.PHONY: kernel-config-diff
kernel-config-diff: ## what our config changes of Debian's distro config (modules off), for 6.1 and 6.12 (the kernel's scripts/diffconfig)
	@$(foreach l,6.1 6.12,$(MAKE) -s --no-print-directory kernel-config LINUX=$(l) >/dev/null && \
		echo "== Linux $(l): $$(wc -l <$(KOBJ_$(l))/config-vs-debian.diff) changes ($(KOBJ_$(l))/config-vs-debian.diff)" && \
		cat $(KOBJ_$(l))/config-vs-debian.diff &&) true

$(KOBJ)/.config: $(KSRC)/.livesquash-tree $(KFRAGMENTS) $(TOP)/kernel-config/make-config.sh fs-squashfs/Kconfig
	$(TOP)/kernel-config/make-config.sh $(KSRC) $(KOBJ) $(DEBIAN_KCONFIG) $(KFRAGMENTS)

$(BZIMAGE): $(KOBJ)/.config $(DRIVER_SRC)
	@echo "kernel: building bzImage in $(KOBJ) (a fresh build takes ~17 min on 2 cores; ccache makes rebuilds fast)"
	@start=$$(date +%s); $(KMAKE) bzImage 2>&1 | tee $(KOBJ).log | \
		grep -E --line-buffered '^(  (CC|LD|AR|AS)  .*(fs/squashfs|vmlinux)|.*(error|warning):)' || true; \
		[ "$${PIPESTATUS[0]}" = 0 ] || { echo "kernel: build failed, see $(KOBJ).log" >&2; exit 1; }; \
		echo "kernel: $$(cat $(KOBJ)/include/config/kernel.release) built in $$(( $$(date +%s) - start )) s"
	@touch $@

# Debian 13's own kernel, for the driver built as a module: linux-image-amd64
# and its linux-headers from the trixie suite in build/trixie/debkernel/ (its
# vmlinuz and stock modules: the driver tests' and the bench's 6.12 reference),
# and the tree above prepared in build/kobj-6.12-mod with the headers' exact
# .config, Module.symvers and release (kernel-config/debian-kernel.sh), so that
# a module built there loads into Debian's kernel. The lint builds fs-squashfs/
# against it too (W=1, sparse), whichever LINUX is.
KOBJ_612_MOD := $(BUILD)/kobj-6.12-mod
DEB612 := $(TRIXIE)/debkernel

.PHONY: kernel-tree-6.12
kernel-tree-6.12: $(KOBJ_612_MOD)/.prepared ## fetch trixie's linux-source-6.12, linux-config-6.12 and Debian 13's kernel and headers into build/trixie/ (apt-get download, never installed); prepare build/kobj-6.12-mod for modules of Debian 13's kernel

# (not remade when trixie.sh changes: the tree may be in use by a build)
$(KSRC_612)/.livesquash-tree:
	@bash $(TOP)/kernel-config/trixie.sh $(TRIXIE)/pkgs linux-source-6.12 linux-config-6.12
	@echo "kernel-tree-6.12: extracting linux-source-6.12.tar.xz"
	@rm -rf $(KSRC_612) $(KSRC_612).tmp && mkdir -p $(KSRC_612).tmp
	@tar -xJf $(TRIXIE)/pkgs/root/usr/src/linux-source-6.12.tar.xz -C $(KSRC_612).tmp --strip-components=1
	@rm -rf $(KSRC_612).tmp/fs/squashfs && ln -s $(TOP)/fs-squashfs $(KSRC_612).tmp/fs/squashfs
	@mv $(KSRC_612).tmp $(KSRC_612) && touch $@

$(KOBJ_612_MOD)/.prepared: $(KSRC_612)/.livesquash-tree $(TOP)/kernel-config/debian-kernel.sh
	@bash $(TOP)/kernel-config/debian-kernel.sh trixie $(DEB612) $(KSRC_612) $(KOBJ_612_MOD)
	@touch $@

# The debug kernel: the same config plus kernel-config/debug/*.config (KASAN, UBSAN,
# lockdep, kmemleak, KCOV, fault injection), in its own object folder. For make fuzz
# and the fault tests; never on an ISO.
BZIMAGE_DEBUG := $(KOBJ_DEBUG)/arch/x86/boot/bzImage
KFRAGMENTS_DEBUG := $(sort $(wildcard $(TOP)/kernel-config/debug/*.config)) $(sort $(wildcard $(TOP)/kernel-config/debug/$(LINUX)/*.config))

.PHONY: kernel-debug
kernel-debug: $(BZIMAGE_DEBUG) ## build the debug kernel (KASAN, UBSAN, lockdep, KCOV) in build/kobj-debug[-LINUX] (~40 min fresh)

$(KOBJ_DEBUG)/.config: $(KSRC)/.livesquash-tree $(KFRAGMENTS) $(KFRAGMENTS_DEBUG) $(TOP)/kernel-config/make-config.sh fs-squashfs/Kconfig
	$(TOP)/kernel-config/make-config.sh $(KSRC) $(KOBJ_DEBUG) $(DEBIAN_KCONFIG) $(KFRAGMENTS) $(KFRAGMENTS_DEBUG)

$(BZIMAGE_DEBUG): $(KOBJ_DEBUG)/.config $(DRIVER_SRC)
	@echo "kernel-debug: building bzImage in $(KOBJ_DEBUG)"
	@start=$$(date +%s); $(subst O=$(KOBJ),O=$(KOBJ_DEBUG),$(KMAKE)) bzImage 2>&1 | tee $(KOBJ_DEBUG).log | \
		grep -E --line-buffered '^(  (CC|LD|AR|AS)  .*(fs/squashfs|vmlinux)|.*(error|warning):)' || true; \
		[ "$${PIPESTATUS[0]}" = 0 ] || { echo "kernel-debug: build failed, see $(KOBJ_DEBUG).log" >&2; exit 1; }; \
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

# The same for Debian 13's kernel, built in build/kobj-6.12-mod (kernel-tree-6.12).
MODULE_KO_612 := $(BUILD)/module-6.12/squashfs.ko

.PHONY: module-6.12
module-6.12: $(MODULE_KO_612) ## build fs-squashfs/ as squashfs.ko for Debian 13's kernel (linux-image-amd64 of trixie, fetched into build/trixie/debkernel/; W=1)

$(MODULE_KO_612): $(DRIVER_SRC) $(KOBJ_612_MOD)/.prepared
	@mkdir -p $(BUILD)/module-6.12/src
	@rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' $(TOP)/fs-squashfs/ $(BUILD)/module-6.12/src/
	env -u BLOCK_SIZE -u BLOCKSIZE $(MAKE) -s -C $(KOBJ_612_MOD) M=$(BUILD)/module-6.12/src W=1 modules
	@cp $(BUILD)/module-6.12/src/squashfs.ko $@
	@echo "module-6.12: $@ for $$(modinfo -F vermagic $@)"

.PHONY: patches patches-6.1
patches: ## write build/patches/: a series replacing fs/squashfs in linux-source-6.1 with ours; applied to a fresh tree and built (with the LINUX=6.1 config)
	@$(MAKE) --no-print-directory patches-6.1 LINUX=6.1

patches-6.1: $(KOBJ)/.config
	@bash $(TOP)/kernel-config/mkpatches.sh $(KSRC_TAR) $(BUILD)/patches --test $(BUILD)/patch-test $(KOBJ)/.config

# The newest Linux 7.x of trixie-backports (Debian 13's newer kernel) and of forky
# (testing): their linux-source and linux-headers fetched into build/SUITE/ (never
# installed), the tree prepared for modules of Debian's own kernel of that suite
# (kernel-config/suite-tree.sh; with its kernel image for boots), and our driver
# built there as squashfs.ko (W=1). The version is the newest the suite has.
SUITES_7X := backports forky
SUITE_IMAGE ?= no## kernel-tree-backports, kernel-tree-forky: yes = also fetch Debian's 7.x kernel image and modules (for boots)
suite_dir = $(BUILD)/$(if $(filter backports,$(1)),trixie-backports,$(1))

.PHONY: $(addprefix kernel-tree-,$(SUITES_7X)) $(addprefix module-,$(SUITES_7X))
kernel-tree-backports: ## fetch trixie-backports' newest linux-source-7.* and its kernel's headers into build/trixie-backports/ (never installed); prepare its tree for modules of Debian's 7.x kernel
kernel-tree-forky: ## the same for forky's newest 7.x (build/forky/)
module-backports: ## build fs-squashfs/ as squashfs.ko for trixie-backports' 7.x kernel (W=1), in build/module-backports/
module-forky: ## build fs-squashfs/ as squashfs.ko for forky's 7.x kernel (W=1), in build/module-forky/

$(addprefix kernel-tree-,$(SUITES_7X)): kernel-tree-%:
	@bash $(TOP)/kernel-config/suite-tree.sh $(if $(filter yes,$(SUITE_IMAGE)),--image) \
		$(notdir $(call suite_dir,$*)) $(call suite_dir,$*) $(TOP)

$(addprefix module-,$(SUITES_7X)): module-%: kernel-tree-%
	@mkdir -p $(BUILD)/module-$*/src
	@rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' $(TOP)/fs-squashfs/ $(BUILD)/module-$*/src/
	env -u BLOCK_SIZE -u BLOCKSIZE $(MAKE) -s -C $(call suite_dir,$*)/kobj-mod M=$(BUILD)/module-$*/src W=1 modules
	@cp $(BUILD)/module-$*/src/squashfs.ko $(BUILD)/module-$*/squashfs.ko
	@echo "module-$*: $(BUILD)/module-$*/squashfs.ko for $$(modinfo -F vermagic $(BUILD)/module-$*/squashfs.ko)"
	@# build/module-7.N: where the driver tests look for ours by the kernel's series
	@ln -sfn module-$* $(BUILD)/module-$$(modinfo -F vermagic $(BUILD)/module-$*/squashfs.ko | cut -d. -f1,2)

# the same by release, for LINUX=7.3 and 7.2
.PHONY: module-7.3 module-7.2
module-7.3: module-backports ## build/module-backports (trixie-backports' 7.3), by its release
module-7.2: module-forky ## build/module-forky (forky's 7.2), by its release
.PHONY: debkernel-7.3 debkernel-7.2
debkernel-7.3: ## Debian's own 7.3 kernel image and modules (trixie-backports) in build/trixie-backports/debkernel/ (never installed): the driver tests' reference with LINUX=7.3
	@$(MAKE) --no-print-directory kernel-tree-backports SUITE_IMAGE=yes
debkernel-7.2: ## the same for forky's 7.2 (build/forky/debkernel/)
	@$(MAKE) --no-print-directory kernel-tree-forky SUITE_IMAGE=yes
