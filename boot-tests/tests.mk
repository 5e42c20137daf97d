# boot-tests/tests.mk: QEMU boot tests of the live ISOs, included by the top-level
# Makefile (BUILD TOP ROOTFS CDLABEL ACCEL MEM come from there).
# TAP on stdout, logs under build/tests/; see boot-tests/README.md.

CHECK_BUILD ?= yes## check: yes = `make iso`/`make initramfs` first; no = test what is in build/ as it is
CHECK_DEBIAN_UEFI ?= yes## check: yes = also boot the debian ISO through UEFI (adds ~5 min under TCG)
BOOT_TIMEOUT ?= 240## check: seconds a busybox boot may take, start to power-off
DEBIAN_TIMEOUT ?= 500## check: seconds a debian boot may take, start to power-off (measured 207-316 s under TCG)
SUITES ?= ## check-suites: space-separated suites (busybox-bios busybox-uefi debian-bios debian-uefi remaster missing-medium)

export CHECK_BUILD CHECK_DEBIAN_UEFI BOOT_TIMEOUT DEBIAN_TIMEOUT

BOOT_TESTS := bash $(TOP)/boot-tests/run.sh

.PHONY: check check-quick check-suites check-accel check-lint
check: deps module ## the live-ISO boot tests (both ISOs, BIOS, UEFI, remaster, missing medium) and the driver tests; TAP, logs in build/tests/
	@bash $(TOP)/boot-tests/check.sh

check-live: deps ## only the live-ISO boot tests
	@$(BOOT_TESTS) all

check-driver: deps kernel module ## only the driver's direct-boot tests: image matrix, stock-driver differential, corrupt images (boot-tests/driver/)
	@bash $(TOP)/boot-tests/driver/run.sh quick

check-quick: deps ## build and boot the busybox ISO once (BIOS) with every guest check
	@$(BOOT_TESTS) quick

check-suites: ## run only the boot-test suites named in SUITES=...
	@[ -n "$(SUITES)" ] || { echo "check-suites: set SUITES='busybox-uefi remaster ...'" >&2; exit 2; }
	@$(BOOT_TESTS) $(SUITES)

check-accel: ## print the QEMU accelerator the tests use (kvm or tcg; probed once, cached in build/accel)
	@bash $(TOP)/boot-tests/accel.sh

check-lint: ## shellcheck the boot-tests scripts
	shellcheck $(TOP)/boot-tests/*.sh
