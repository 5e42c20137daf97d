#!/usr/bin/env bash
# make check: the static checks (lint.sh: shellcheck, checkpatch, sparse, W=1),
# the host-side tests of iso/remaster (remaster/host.sh), the
# live-ISO boot tests (run.sh all), the driver's direct-boot tests
# (driver/run.sh quick: with the corrupted images, the I/O-error disks and every fuzz
# finding; with LINUX=6.12, Debian 13's kernel is the reference, and the boots of
# Debian 12's kernel with our module and the hazard tests run again as driver-6.1),
# the benchmark's smoke run (bench/bench.sh smoke) and a few minutes of fresh fuzzing
# (fuzz/fuzz.sh check);
# each prints its own TAP and summary, and the last line adds them up:
# "N passed, N failed". Exit status non-zero if any failed. `check.sh full`
# (make check-full) runs the driver tests' full matrix, the live ISOs with our
# kernel built from 6.1 (run.sh linux-6.1), the live-build suite, the
# media suite on the Debian ISO and the Fedora-layout fixtures (squashfs, EROFS)
# booted by dracut 106's dmsquash-live, Linux 7.3 of trixie-backports: the quick
# driver suite on our kernel built from it and on Debian's with its stock
# squashfs.ko and our module (driver-7.3), the busybox ISO on ours (live-7.3).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${BUILD:-$(dirname "$here")/build}
mkdir -p "$BUILD/tests"

passed=0 failed=0 status=0
suite() { # name command...
	local name=$1 log=$BUILD/tests/check-$1.log rc line p f
	shift
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [[ -z $line ]]; then
		echo "not ok - $name printed no summary (exit $rc)"
		failed=$((failed + 1))
		status=1
		return
	fi
	read -r p _ f _ <<< "${line//,/}"
	passed=$((passed + p))
	failed=$((failed + f))
	[[ $rc -eq 0 && $f -eq 0 ]] || status=1
}

case ${1:-check} in
check)
	suite lint bash "$here/lint.sh"
	suite remaster-host bash "$here/remaster/host.sh"
	suite live bash "$here/run.sh" all
	suite driver bash "$here/driver/run.sh" quick
	# our kernel is 6.12 and the reference Debian 13's: the driver on 6.1 too, as
	# the module of Debian 12's kernel (its boots of the quick suite and the hazards)
	if [[ -n ${DEB_ROOT:-} ]]; then
		suite driver-6.1 env DEB_ROOT= DRIVER_ONLY="debian-good debian-bad debian-stress hazard" \
			DRIVER_HAZARD=debian.ours DRIVER_RUNDIR="$BUILD/driver-tests/run-quick-6.1" \
			bash "$here/driver/run.sh" quick
	fi
	suite bench bash "$here/bench/bench.sh" smoke
	suite fuzz bash "$here/fuzz/fuzz.sh" check
	echo "# all suites (lint, remaster host, live, driver, bench smoke, fuzz):"
	;;
full) # make check-full
	suite driver-full bash "$here/driver/run.sh" full
	# and Debian 12's 6.1 kernel with its stock module and ours (as driver-6.1 does)
	if [[ -n ${DEB_ROOT:-} ]]; then
		suite driver-full-6.1 env DEB_ROOT= DRIVER_ONLY="debian-good debian-bad debian-stress" \
			DRIVER_RUNDIR="$BUILD/driver-tests/run-full-6.1" \
			bash "$here/driver/run.sh" full
	fi
	# Linux 7.3 (trixie-backports): the quick suite on our kernel built from it
	# (make kernel LINUX=7.3) and on Debian's 7.3 (its linux-image, fetched by make
	# debkernel-7.3) with its stock module and ours (make module-7.3), the hazards
	# on both
	suite driver-7.3 env LS_KERNEL="$BUILD/kobj-7.3/arch/x86/boot/bzImage" \
		DEB_ROOT="$BUILD/trixie-backports/debkernel/root" \
		DRIVER_MODULE="$BUILD/module-backports/squashfs.ko" DRIVER_HAZARD="ours debian.ours" \
		DRIVER_RUNDIR="$BUILD/driver-tests/run-quick-7.3" bash "$here/driver/run.sh" quick
	# the busybox ISO with our 7.3 kernel (make iso LINUX=7.3), BIOS CD and UEFI USB
	suite live-7.3 bash "$here/run.sh" linux-7.3
	# the live ISOs with our kernel built from Debian 12's 6.1 (make iso LINUX=6.1)
	suite live-6.1 bash "$here/run.sh" linux-6.1
	suite livebuild bash "$here/thirdparty/run.sh"
	suite media-debian bash "$here/run.sh" media-debian
	suite fixtures bash "$here/run.sh" fixtures
	echo "# all suites (driver full matrix on 6.12 and 6.1, quick on our 7.3 kernel and Debian's, the live ISOs on our 6.1 and 7.3 kernels, live-build ISO remastered, the Debian ISO on its media, Fedora's layouts booted by dracut 106's dmsquash-live):"
	;;
*)
	echo "usage: check.sh [check|full]" >&2
	exit 2
	;;
esac
echo "$passed passed, $failed failed"
exit "$status"
