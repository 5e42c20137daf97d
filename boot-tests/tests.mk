# boot-tests/tests.mk: QEMU boot tests of the live ISOs, included by the top-level
# Makefile (BUILD TOP ROOTFS CDLABEL ACCEL MEM come from there).
# TAP on stdout, logs under build/tests/; see boot-tests/README.md.

CHECK_BUILD ?= yes## check: yes = `make iso`/`make initramfs` first; no = test what is in build/ as it is
CHECK_DEBIAN_UEFI ?= yes## check: yes = also boot the debian ISO through UEFI (adds ~5 min under TCG)
BOOT_TIMEOUT ?= 240## check: seconds a busybox boot may take, start to power-off
DEBIAN_TIMEOUT ?= 500## check: seconds a debian boot may take, start to power-off (measured 207-316 s under TCG)
LIVE_JOBS ?= 2## check: live boots at once: 2 = the Debian ISO's, Secure Boot's and the network's suites in a second lane beside the others (one QEMU each); 1 = one boot at a time
SUITES ?= ## check-suites: space-separated suites (busybox-bios busybox-bios-dracut059 busybox-bios-dracut112 busybox-uefi linux-6.1 linux-7.3 linux-7.2 busybox-usb busybox-dvd debian-bios debian-uefi media media-debian remaster check-iso missing-medium secureboot netboot fixtures)

DEB_ROOT ?= $(if $(filter 6.12,$(LINUX)),$(DEB612)/root,$(if $(KSUITE),$(KSUITE)/debkernel/root))## driver tests, bench: the Debian kernel booted with its stock squashfs.ko and our module: Debian 13's (kernel-tree-6.12 extracts it here) when LINUX=6.12, the suite's 7.x (kernel-tree-backports|forky SUITE_IMAGE=yes) when LINUX=7.3 or 7.2; empty = the host's own (Debian 12's 6.1)
# our module for that kernel (7.x: with Debian's kernel image fetched)
DEB_MODULE := $(if $(KSUITE),debkernel-$(LINUX) module-$(LINUX),$(if $(DEB_ROOT),module-6.12,module))
export DEB_ROOT

BENCH_ROUNDS ?= 6## bench: rounds (stock and ours interleaved, their order swapped every round: an even number balances it); medians and min-max over them
BENCH_SMP ?= 4## bench: guest vCPUs (parallel readers run N=2 and N=4 up to this; TCG runs them on the host's cores)
BENCH_MEM ?= 1024## bench: guest memory in MiB
BENCH_TREE ?= $(BUILD)/rootfs/debian## bench: the root tree packed into the tree images (`make rootfs ROOTFS=debian` if missing)
BENCH_FILE_MB ?= 8## bench: size in MiB of each of the 4 generated large files (2 text-like, 2 binary-like)
BENCH_COMPS ?= gzip:128K xz:128K zstd:128K lz4:128K lzo:128K zstd:4K zstd:1M## bench: squashfs images of the large files, as COMP:BLOCK
BENCH_TREE_COMPS ?= zstd:128K## bench: squashfs images of the tree (each adds ~4 min per round under TCG; xz ~6 min)
BENCH_EROFS ?= lz4hc none## bench: EROFS images (mkfs.erofs -zlz4hc, uncompressed); empty = no EROFS column
BENCH_WORKLOADS ?= stat cat tar seq rand par mem## bench: workload groups (mount time and a readdir walk always run)
BENCH_RAND_N ?= 2000## bench: 4 KiB random reads per random-read run
BENCH_WARM ?= 20## bench: passes of a warm run (seq-*-warm reads the file, rand-warm the cold run's offsets, this many times) so that it lasts long enough to time
BENCH_MOUNTS ?= 16## bench: mounts of the memory test (one loop device each over the same disk)
BENCH_TIMEOUT ?= 5400## bench: seconds the benchmark boot may take
BENCH_CLOCK ?= tsc## bench: the guest's clock, tsc (as on hardware) or hpet (tsc=unstable: immune to a host TSC jump, but each kernel clock read is an emulated MMIO read)
BENCH_LIVE ?= no## bench: yes = `make bench` also runs bench-live at the end (adds ~10 min under TCG)
BENCH_LIVE_ROUNDS ?= 2## bench-live: boots of each variant on each medium (alternating variants)
BENCH_LIVE_MEDIA ?= dvd usb net100 net1000## bench-live: the media booted from: dvd (10 MB/s, 100 ms seeks), usb (USB 2.0 stick, 30 MB/s), cd (the ISO file as it is), net100 and net1000 (the network image over a 100 Mbit/s or 1 Gbit/s link: download, stream and dmsquash-live's livenet)
BENCH_LIVE_VARIANTS ?= ours plain dracut debian## bench-live: ours (the ISO as make iso makes it), plain (its image repacked in mksquashfs's own order), dracut (our kernel, dmsquash-live), debian (Debian's kernel and stock squashfs.ko, dmsquash-live)
BENCH_LIVE_SCALE ?= 1## bench-live: the medium's costs times this (the guest's CPU slowdown under TCG, which the run prints, restores real proportions)
BENCH_LIVE_MODES ?= no## bench-live: yes = also our boot modes rd.live.ram, rd.live.ram=background and persistence, each against ours from the CD

export CHECK_BUILD CHECK_DEBIAN_UEFI BOOT_TIMEOUT DEBIAN_TIMEOUT LIVE_JOBS
export BENCH_ROUNDS BENCH_SMP BENCH_MEM BENCH_TREE BENCH_FILE_MB BENCH_COMPS BENCH_TREE_COMPS BENCH_EROFS
export BENCH_WORKLOADS BENCH_RAND_N BENCH_WARM BENCH_MOUNTS BENCH_TIMEOUT BENCH_LIVE_ROUNDS BENCH_LIVE_MEDIA BENCH_LIVE_VARIANTS BENCH_LIVE_SCALE BENCH_LIVE_MODES BENCH_CLOCK

FUZZ_TIME ?= 30m## fuzz: how long (seconds, Nm or Nh); check runs 180 s
FUZZ_JOBS ?= 2## fuzz: afl-fuzz instances, each with a QEMU guest of its own
FUZZ_KERNEL ?= $(BZIMAGE_DEBUG)## fuzz: the guests' kernel (make kernel-debug: KASAN, UBSAN, lockdep, KCOV)
export FUZZ_JOBS FUZZ_KERNEL

BOOT_TESTS := bash $(TOP)/boot-tests/run.sh

.PHONY: fuzz fuzz-replay fuzz-compare
fuzz: deps kernel-debug ## coverage-guided fuzzing (AFL++ on the host, KCOV from QEMU guests on the debug kernel) for FUZZ_TIME; findings in build/fuzz/findings (each with repro.sh), a row of totals in boot-tests/fuzz/REPORT.md
	@FUZZ_TIME=$(FUZZ_TIME) bash $(TOP)/boot-tests/fuzz/fuzz.sh run

fuzz-replay: deps kernel-debug ## mount and walk every fuzz finding (build/fuzz/findings, boot-tests/driver/findings) again on FUZZ_KERNEL
	@bash $(TOP)/boot-tests/fuzz/fuzz.sh replay

fuzz-compare: deps module ## the fuzz queue and findings through Debian's kernel with its stock squashfs.ko and with ours (build/fuzz/compare/): mounted, refused, crashed, hung
	@bash $(TOP)/boot-tests/fuzz/fuzz.sh compare

.PHONY: check check-quick check-full check-livebuild check-repro check-remaster check-suites check-accel check-lint bench bench-aa bench-smoke bench-table
check: deps module module-6.12 module-backports kernel-tree kernel-tree-6.12 erofs-utils ## lint, the remaster's host tests, the live-ISO boot tests (both ISOs, BIOS, UEFI, USB; busybox on its media: virtio disk, persistence, copy to RAM, ISO file, image check; remaster, missing medium, Secure Boot, network boot), the driver tests (with I/O errors and the fuzz findings), the bench smoke run and 3 minutes of fresh fuzzing; TAP, logs in build/tests/
	@bash $(TOP)/boot-tests/check.sh

check-live: deps ## only the live-ISO boot tests
	@$(BOOT_TESTS) all

check-driver: deps kernel $(DEB_MODULE) ## only the driver's direct-boot tests: image matrix, stock-driver differential, corrupt images (boot-tests/driver/)
	@bash $(TOP)/boot-tests/driver/run.sh quick

check-full: deps kernel module module-6.12 module-backports module-forky kernel-tree-6.12 erofs-utils ## the driver tests' full matrix: 150 images (every compressor x block size x variant, both squashfs-tools-ng writers, a 5 GiB sparse file, 100,000 entries) x 3 drivers, export, stress; ~1 h 45 min under TCG; with LINUX=6.12 its Debian-kernel boots again on Debian 12's 6.1 (driver-full-6.1); the live ISOs with our kernel built from 6.1 (busybox BIOS/UEFI x CD/USB, debian BIOS CD and UEFI USB); then check-livebuild, the media suite on the Debian ISO (persistence, copy to RAM, ISO file, checks; ~35 min) and the Fedora-layout fixtures booted by dracut 106's dmsquash-live; Linux 7.3 (trixie-backports): the quick driver suite and the hazards on our kernel built from it and on Debian's with its stock module and ours (driver-7.3), the busybox ISO on ours, BIOS CD and UEFI USB (live-7.3); the last line adds them up
	@$(MAKE) --no-print-directory debkernel-7.3
	@$(MAKE) --no-print-directory kernel LINUX=7.3
	@bash $(TOP)/boot-tests/check.sh full

check-livebuild: deps ## a third-party ISO: Debian live-build's (built once, cached in /var/cache/livesquash/live-build/), remastered by iso/remaster, live-boot's verify-checksums, booted BIOS/UEFI x CD/USB stick, checked from inside (boot-tests/thirdparty/)
	@bash $(TOP)/boot-tests/thirdparty/run.sh

check-repro: deps ## reproducible ISO: two clean clones of HEAD build `make iso` from scratch (two kernel builds; ccache helps the second) and must give the same bytes; diffoscope says where not (build/repro/)
	@bash $(TOP)/boot-tests/repro.sh

check-remaster: deps erofs-utils ## host-side tests of iso/remaster (as root, no QEMU, ~1 min): fixture ISOs of each distribution's layout (Fedora squashfs/EROFS, live-build, casper and its layers, archiso) remastered and checked with unsquashfs, xorriso, mtools, checksums; bad inputs, full disks, Ctrl-C (boot-tests/remaster/)
	@bash $(TOP)/boot-tests/remaster/host.sh

check-quick: deps ## build and boot the busybox ISO once (BIOS) with every guest check
	@$(BOOT_TESTS) quick

check-suites: ## run only the boot-test suites named in SUITES=...
	@[ -n "$(SUITES)" ] || { echo "check-suites: set SUITES='busybox-uefi remaster ...'" >&2; exit 2; }
	@$(BOOT_TESTS) $(SUITES)

check-accel: ## print the QEMU accelerator the tests use (kvm or tcg; probed once, cached in build/accel)
	@bash $(TOP)/iso/accel.sh

check-lint: deps kernel-tree kernel-tree-6.12 kernel-tree-backports ## static checks (TAP): shellcheck every shell script, checkpatch --strict and sparse (C=2) + W=1 on fs-squashfs/ against Debian 12's 6.1 headers and Debian 13's 6.12 tree
	@bash $(TOP)/boot-tests/lint.sh

bench: deps $(DEB_MODULE) ## A/B benchmark in QEMU on Debian's kernel: stock squashfs.ko vs ours vs EROFS (table, build/bench/run-full/results.json, ratios.png)
	@[ -d "$(BENCH_TREE)" ] || $(MAKE) --no-print-directory rootfs ROOTFS=debian
	@bash $(TOP)/boot-tests/bench/bench.sh full
	@[ "$(BENCH_LIVE)" != yes ] || bash $(TOP)/boot-tests/bench/liveboot.sh

bench-aa: deps $(DEB_MODULE) ## the bench with our module in both columns (A/A): its ours/stock ratios are the machine's noise band (build/bench/run-aa/)
	@[ -d "$(BENCH_TREE)" ] || $(MAKE) --no-print-directory rootfs ROOTFS=debian
	@bash $(TOP)/boot-tests/bench/bench.sh aa

bench-table: deps module module-6.12 kernel-tree-6.12 ## the bench against today's stock drivers in one table: Debian 13's kernel (stock 6.12 squashfs.ko, ours, 6.12's EROFS; and an A/A run), Debian 12's (stock 6.1, ours), and issue 24's targets met or missed (build/bench/table/table.txt; ~45 min under TCG)
	@[ -d "$(BENCH_TREE)" ] || $(MAKE) --no-print-directory rootfs ROOTFS=debian
	@bash $(TOP)/boot-tests/bench/table.sh

bench-smoke: deps $(DEB_MODULE) ## the benchmark in smoke mode (tiny data, 1 round, ~1 min): TAP checks that every part of it works
	@bash $(TOP)/boot-tests/bench/bench.sh smoke

bench-live: deps $(if $(findstring net,$(BENCH_LIVE_MEDIA)),initramfs-net) ## live boot of the Debian ISO from a DVD and a USB stick as slow as real ones, and over a 100 Mbit/s and 1 Gbit/s network: time to a login prompt, ours (boot-ordered as shipped, and plain; download and stream) vs dmsquash-live (livenet) on our kernel and on Debian's (build/bench/run-live/)
	@[ -f "$(BUILD)/livesquash-debian.iso" ] || $(MAKE) --no-print-directory iso ROOTFS=debian
	@bash $(TOP)/boot-tests/bench/liveboot.sh
