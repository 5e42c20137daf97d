# livesquash: a live CD whose root filesystem driver (squashfs 4.0) is our own.
# `make help` lists every target and variable. Everything generated goes to build/.

SHELL := /bin/bash
.DEFAULT_GOAL := help
TOP := $(abspath .)
BUILD ?= $(TOP)/build

## Variables (override on the command line, e.g. `make run ROOTFS=debian`):
ROOTFS ?= busybox## root tree packed into the live image: busybox (small) or debian (systemd; DEBIAN_SUITE)
DEBIAN_SUITE ?= trixie## the Debian release of ROOTFS=debian: trixie (Debian 13) or bookworm (Debian 12)
COMP ?= xz## mksquashfs compressor for the root image: gzip xz lzo lz4 zstd
BLOCK ?= 128K## mksquashfs block size for the root image (4K ... 1M)
CDLABEL ?= LIVESQUASH## ISO volume label, asked for by root=live:CDLABEL=... on the kernel command line
FIRMWARE ?= bios## what `make run` boots with: bios (SeaBIOS) or uefi (OVMF)
ACCEL ?= auto## QEMU accelerator: auto (probe KVM once, cache, else TCG), kvm or tcg
MEM ?= 1024## guest memory in MiB
JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))## parallel jobs of the kernel build
SOURCE_DATE_EPOCH ?= $(shell git -C $(TOP) log -1 --format=%ct 2>/dev/null || echo 1767225600)## every time stamp of the ISO (seconds; default: the last commit's time), for reproducible ISOs

export ROOTFS DEBIAN_SUITE COMP BLOCK CDLABEL FIRMWARE ACCEL MEM BUILD TOP
# passed by name to the ISO's build steps only: mksquashfs 4.5 would set every file
# time of the test images to it, and a manifest compares those times
unexport SOURCE_DATE_EPOCH

include kernel-config/kernel.mk
include iso/iso.mk
include boot-tests/tests.mk
include install.mk

HELP_VARS := $(shell sed -nE 's/^([A-Z_]+) \?=.*## .*/\1/p' $(MAKEFILE_LIST))

.PHONY: help deps clean distclean
help: ## this list of targets and variables
	@echo "livesquash: make TARGET [VARIABLE=value ...]"
	@echo
	@echo "Targets:"
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sort -u | \
		sed -E 's/^([^:]+):.*## (.*)/  \1|\2/' | column -t -s '|'
	@echo
	@echo "Variables (current value):"
	@$(foreach v,$(HELP_VARS),printf '  %-18s %-24s %s\n' '$(v)' '$($(v))' \
		"$$(sed -nE 's/^$(v) \?= ?[^#]*## (.*)/\1/p' $(MAKEFILE_LIST) | head -n 1)";)

deps: ## install the Debian packages the build and the tests need (apt-get)
	@bash $(TOP)/iso/deps.sh

clean: ## remove generated images and ISOs, keep the kernel tree and its objects
	rm -rf $(BUILD)/iso $(BUILD)/rootfs $(BUILD)/initramfs* $(BUILD)/*.iso $(BUILD)/tests

distclean: ## remove all of build/ (kernel tree, objects, caches)
	rm -rf $(BUILD)
