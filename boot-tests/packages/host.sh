#!/bin/bash
# boot-tests/packages/host.sh (make check-packages): livesquash's Debian packages
# proven by installing them, never on the host: make deb, then a Debian 13 (trixie;
# LS_PACKAGES_SUITE=bookworm: Debian 12) tree made with debootstrap (minbase,
# linux-image-amd64, linux-headers-amd64; from the mirror apt already uses; cached as
# a tarball in build/packages/cache/) in which, through systemd-nspawn:
#   - apt-get install ./*.deb installs the three packages, their dependencies from
#     the mirror;
#   - DKMS builds squashfs.ko for the tree's own kernel (told its version: -k KVER)
#     into updates/dkms, where modinfo finds it before the kernel's own squashfs.ko;
#     a kernel that cannot have it gets one line saying why;
#   - the tree's dracut builds an initramfs with 90livesquash and the DKMS module;
#   - /usr/bin/livesquash-remaster remasters a fixture ISO (Debian live-build's
#     layout, boot-tests/remaster/fixtures.sh);
#   - apt-get remove leaves no file of dpkg -L behind and removes the module from
#     the kernel's tree; after a new install, apt-get purge removes it from DKMS.
# No module is ever loaded into this machine's kernel: the tree has no
# /lib/modules/$(uname -r) (checked before and after), DKMS and dracut are always
# told the tree's kernel version, nothing runs modprobe, and the container runs
# without CAP_SYS_MODULE. TAP on stdout, last line "N passed, N failed"; logs in
# build/packages/logs-SUITE/. Needs root (debootstrap, nspawn). No QEMU.
#   LS_PACKAGES_WORK=build/packages   the trees, caches, logs
#   LS_PACKAGES_SUITE=trixie          the Debian release of the tree (bookworm: Debian 12)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
# shellcheck disable=SC1091 # lib.sh, one folder up
source "$TOP/boot-tests/lib.sh"
W=${LS_PACKAGES_WORK:-$BUILD/packages}
SUITE=${LS_PACKAGES_SUITE:-trixie}
INCLUDE=linux-image-amd64,linux-headers-amd64
CH=$W/chroot-$SUITE
LOG=$W/logs-$SUITE
SHARE=$W/share-$SUITE # the container's /share
APT_ARCHIVES=$W/apt-archives-$SUITE
export LC_ALL=C

if [[ $(id -u) -ne 0 ]]; then
	tap_notok "package tests must run as root (debootstrap, systemd-nspawn)"
	tap_summary
	exit 1
fi
finished=0
on_exit() {
	((finished)) || {
		tap_notok "host.sh stopped early (its stderr says why)"
		tap_summary
	}
}
trap on_exit EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/cache" "$APT_ARCHIVES/partial" "$LOG"
rm -rf "$SHARE" "${LOG:?}"/*
mkdir -p "$SHARE/debs" "$SHARE/out"

# the Debian mirror apt already uses for the host's release (as kernel-config/trixie.sh
# finds it), for debootstrap and the tree's own apt
release=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
# shellcheck disable=SC2016 # apt's own $(FIELD) placeholders
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
	awk -v rel="$release" '$2 == rel { print $1; exit }')
[[ -n $mirror ]] || mirror=$(grep -hoE '^(URIs:|deb) +[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
	awk '{ print $2; exit }')
mirror=${mirror%/}
if [[ -z $mirror ]]; then
	tap_notok "a Debian mirror in apt's sources (/etc/apt/sources.list*)"
	finished=1
	tap_summary
	exit 1
fi

# in_ch CMD...: CMD in a container of the tree: its own /dev (no host disk), /sys
# read-only, the host's network (the mirror), no CAP_SYS_MODULE: nothing it runs can
# load a module into this kernel; apt's downloads kept in build/packages/apt-archives-SUITE
in_ch() {
	systemd-nspawn --quiet --settings=no --register=no --keep-unit --directory="$CH" \
		--machine="livesquash-pkgtest-$$" --drop-capability=CAP_SYS_MODULE \
		--resolv-conf=copy-host --timezone=off --link-journal=no --console=pipe \
		--bind="$APT_ARCHIVES:/var/cache/apt/archives" --bind="$SHARE:/share" \
		--setenv=DEBIAN_FRONTEND=noninteractive --setenv=LC_ALL=C --setenv=PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		-- "$@" </dev/null 2> >(grep -v "$nspawn_noise" >&2)
}
# nspawn's own complaint where /run is not a tmpfs (as iso/remaster filters it)
nspawn_noise='^Attempted to remove disk file system under "/run/systemd/nspawn/propagate/'
# step NAME DESCRIPTION CMD...: CMD's output in logs/NAME.log (lib.sh's tap_logged)
step() {
	local name=$1
	shift
	tap_logged "$LOG/$name.log" "$@"
}
done_now() {
	finished=1
	tap_summary
	((LS_FAIL == 0))
	exit
}

# ---- the packages --------------------------------------------------------------------
step deb "[deb] make deb: livesquash-tools, dracut-livesquash and livesquash-dkms, lintian without errors or warnings" \
	env TOP="$TOP" BUILD="$BUILD" bash "$TOP/debian/make-deb.sh" || done_now
mapfile -t debs < <(find "$BUILD/deb" -maxdepth 1 -name '*.deb' | LC_ALL=C sort)
cp "${debs[@]}" "$SHARE/debs/"
version=$(sed -n 's/^#define LIVESQUASH_VERSION[[:space:]]*"\(.*\)"/\1/p' "$TOP/fs-squashfs/internal.h")
tap_diag "packages: ${debs[*]##*/}"

# ---- the tree: debootstrap's once (cached), unpacked anew each run ------------------------
base=$W/cache/$SUITE-base.tar.zst
key=$( (echo "$SUITE $INCLUDE $mirror"; cat "$TOP/iso/debootstrap.sh") | sha256sum | cut -c1-16)
make_base() {
	[[ -s $base && $(cat "$base.key" 2>/dev/null) == "$key" ]] && { echo "cached: $base"; return 0; }
	rm -f "$base" "$base.key"
	MIRROR=$mirror bash "$TOP/iso/debootstrap.sh" packages "$SUITE" "$INCLUDE" "$W/base" "$W/cache"
	tar -C "$W/base" --numeric-owner --xattrs --acls -I 'zstd -T0 -3' -cf "$base.tmp" .
	mv "$base.tmp" "$base"
	echo "$key" >"$base.key"
	rm -rf --one-file-system "$W/base"
}
step base "[tree] a Debian tree ($SUITE minbase + $INCLUDE, debootstrap from $mirror; cached in ${base#"$BUILD"/})" make_base ||
	done_now
unpack() {
	rm -rf --one-file-system "$CH"
	mkdir -p "$CH"
	tar -C "$CH" --numeric-owner --xattrs --acls -I zstd -xf "$base"
	# no service starts in it
	printf '#!/bin/sh\nexit 101\n' >"$CH/usr/sbin/policy-rc.d"
	chmod 0755 "$CH/usr/sbin/policy-rc.d"
}
step unpack "[tree] unpacked anew in ${CH#"$BUILD"/}" unpack || done_now

# the tree's kernel: the one linux-image-amd64 installed, whose headers are there too
mapfile -t kvers < <(find "$CH/usr/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n')
KVER=${kvers[0]:-}
host_kver=$(uname -r)
no_host_kernel() {
	local d
	for d in "$CH/lib/modules/$host_kver" "$CH/usr/lib/modules/$host_kver"; do
		[[ ! -e $d ]] || { echo "$d exists"; return 1; }
	done
}
if ((${#kvers[@]} == 1)) && [[ -d $CH/usr/src/linux-headers-$KVER ]]; then
	tap_ok "[tree] one kernel, $KVER, with its headers (/usr/src/linux-headers-$KVER)"
else
	tap_notok "[tree] one kernel with its headers" "modules of: ${kvers[*]}"
	done_now
fi
tap_test "[tree] no /lib/modules/$host_kver (this machine's kernel) in the tree" no_host_kernel

# ---- install --------------------------------------------------------------------------------
step apt-update "[install] apt-get update in the tree ($mirror $SUITE)" in_ch apt-get update -q || done_now
install_debs() {
	in_ch sh -c 'cd /share/debs && apt-get install -y -q --no-install-recommends ./*.deb'
}
step install "[install] apt-get install ./*.deb: the three packages and their dependencies from the mirror" install_debs || done_now
pkgs=(livesquash-tools dracut-livesquash livesquash-dkms)
installed() {
	local p s
	for p in "${pkgs[@]}"; do
		# shellcheck disable=SC2016 # dpkg-query's own ${FIELD}s
		s=$(in_ch dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$p" 2>/dev/null) || true
		[[ $s == "ii  $version" ]] || { echo "$p: '$s'"; return 1; }
	done
}
tap_test "[install] dpkg: ${pkgs[*]} $version installed" installed
for p in "${pkgs[@]}"; do
	in_ch dpkg -L "$p" >"$LOG/dpkg-L.$p" 2>&1 || true
done
tools_run() {
	local t
	for t in remaster check-iso mkpersist mknetboot signiso sbkeys; do
		in_ch "livesquash-$t" --help >"$LOG/help.$t" 2>&1 || { echo "livesquash-$t --help: exit $?"; tail -n 3 "$LOG/help.$t"; return 1; }
		grep -q "livesquash-$t" "$LOG/help.$t" || { echo "livesquash-$t --help does not name livesquash-$t"; return 1; }
	done
	in_ch man -w livesquash-remaster livesquash.cmdline >/dev/null 2>&1 ||
		[[ -f $CH/usr/share/man/man1/livesquash-remaster.1.gz && -f $CH/usr/share/man/man7/livesquash.cmdline.7.gz ]] ||
		{ echo "no man pages"; return 1; }
	! grep -rlF "$TOP" "$CH/usr/lib/livesquash" "$CH/usr/bin" "$CH/usr/lib/dracut/modules.d/90livesquash" "$CH/usr/src/livesquash-$version" ||
		{ echo "installed files name the checkout $TOP"; return 1; }
}
tap_test "[install] every livesquash-* command's --help runs from /usr/bin, the man pages are there, no installed file names the checkout" tools_run

# ---- DKMS: the tree's kernel, named --------------------------------------------------------
step dkms "[dkms] dkms autoinstall -k $KVER (the package's postinst built it already, or this does)" \
	in_ch dkms autoinstall -k "$KVER" || true
in_ch dkms status >"$LOG/dkms-status.log" 2>&1 || true
dkms_says_installed() { # dkms status (in logs/dkms-status.log) has livesquash installed for KVER
	grep -F "livesquash/$version, $KVER, " "$LOG/dkms-status.log" | grep -q ': installed'
}
mod_file() { # the DKMS squashfs.ko of KVER in the tree, or nothing
	find "$CH/usr/lib/modules/$KVER/updates/dkms" -name 'squashfs.ko*' 2>/dev/null | head -n 1
}
dkms_installed() {
	dkms_says_installed || { cat "$LOG/dkms-status.log"; return 1; }
	local m
	m=$(mod_file)
	[[ -n $m ]] || { echo "no squashfs.ko* in /lib/modules/$KVER/updates/dkms"; return 1; }
	# the kernel's own module: still in kernel/fs/squashfs, or (dkms 3.2) archived by
	# DKMS to be put back when ours goes; modinfo (depmod's order) finds ours
	local orig
	orig=$(find "$CH/usr/lib/modules/$KVER/kernel/fs/squashfs" "$CH/var/lib/dkms/livesquash/original_module/$KVER" \
		-name 'squashfs.ko*' 2>/dev/null || true)
	[[ -n $orig ]] || { echo "the kernel's own squashfs.ko is neither in the tree nor archived by DKMS"; return 1; }
	local n
	n=$(in_ch modinfo -k "$KVER" -n squashfs) || { echo "modinfo -k $KVER squashfs failed"; return 1; }
	[[ $n == */updates/dkms/squashfs.ko* ]] || { echo "modinfo -k $KVER -n squashfs: $n, not the DKMS module"; return 1; }
	local vm
	vm=$(in_ch modinfo -k "$KVER" -F vermagic squashfs)
	[[ $vm == "$KVER "* ]] || { echo "vermagic '$vm', not $KVER"; return 1; }
	# our driver: its banner is in it (grep -c reads it all: no SIGPIPE for pipefail)
	case $m in
	*.xz) xz -dc "$m" ;;
	*.zst) zstd -dc "$m" ;;
	*.gz) gzip -dc "$m" ;;
	*) cat "$m" ;;
	esac | grep -ac 'livesquash: squashfs 4.0 driver' >/dev/null || { echo "$m has no livesquash banner"; return 1; }
}
tap_test "[dkms] squashfs.ko built for $KVER in updates/dkms (dkms status: installed), vermagic $KVER, our driver's banner in it; modinfo -k $KVER squashfs finds it, not the kernel's own (which DKMS keeps to put back)" dkms_installed
cannot_msg() {
	local out rc=0
	out=$(in_ch sh -c "mkdir -p /tmp/fake && printf 'CONFIG_SQUASHFS=y\n' >/tmp/fake/.config && : >/tmp/fake/Makefile &&
		cd /usr/src/livesquash-$version && ./dkms-make.sh 9.9.9-fake /tmp/fake" 2>&1) || rc=$?
	((rc != 0)) || { echo "dkms-make.sh built for a kernel with squashfs built in"; return 1; }
	grep -q 'cannot build squashfs.ko for 9.9.9-fake: this kernel has squashfs built in' <<<"$out" || { echo "$out"; return 1; }
	out=$(in_ch dkms build -m livesquash -v "$version" -k 5.10.0-fake 2>&1) && { echo "dkms built for 5.10"; return 1; }
	echo "$out" >"$LOG/dkms-5.10.log"
	grep -qiE 'BUILD_EXCLUSIVE|headers.*cannot be found|not be built' <<<"$out" || { echo "$out"; return 1; }
}
tap_test "[dkms] a kernel that cannot have it gets one line why (squashfs built in; a kernel older than 6.1: dkms's BUILD_EXCLUSIVE)" cannot_msg
tap_test "[dkms] still no /lib/modules/$host_kver in the tree" no_host_kernel

# ---- dracut ------------------------------------------------------------------------------------
step dracut "[dracut] the tree's dracut builds an initramfs for $KVER with -m 'base udev-rules livesquash'" \
	in_ch dracut --force --no-hostonly --kver "$KVER" -m "base udev-rules livesquash" \
	-o "systemd systemd-initrd dracut-systemd" /share/out/initrd.img || true
initrd_has() {
	[[ -s $SHARE/out/initrd.img ]] || { echo "no initrd.img"; return 1; }
	in_ch lsinitrd /share/out/initrd.img >"$LOG/lsinitrd.log" 2>&1 || { tail -n 5 "$LOG/lsinitrd.log"; return 1; }
	local want
	for want in 'hooks/cmdline/25-parse-livesquash.sh' 'hooks/mount/00-mount-livesquash.sh' 'usr/lib/livesquash/loopswap' \
		'lib/livesquash-lib.sh' "modules/$KVER/updates/dkms/squashfs.ko"; do
		grep -qF "$want" "$LOG/lsinitrd.log" || { echo "the initramfs has no $want"; return 1; }
	done
	grep -E 'dracut module .livesquash.|livesquash: ' "$LOG/dracut.log" && { echo "dracut complained about livesquash"; return 1; }
	return 0
}
tap_test "[dracut] the initramfs has 90livesquash's hooks, loopswap, and the DKMS squashfs.ko of $KVER" initrd_has

# ---- remaster from /usr/bin ------------------------------------------------------------------
step fixtures "[remaster] fixture ISOs (boot-tests/remaster/fixtures.sh)" bash "$TOP/boot-tests/remaster/fixtures.sh" "$SHARE/fixtures" || true
mkdir -p "$SHARE/add/etc"
echo "added by the package test" >"$SHARE/add/etc/livesquash-pkgtest"
step remaster "[remaster] livesquash-remaster --add --cmdline-add on Debian live-build's layout, in the tree" \
	in_ch livesquash-remaster --add /share/add --cmdline-add livesquash.pkgtest=1 \
	/share/fixtures/debian.iso /share/out/debian-remastered.iso || true
remastered() {
	local o=$SHARE/out/debian-remastered.iso x=$SHARE/out/x
	[[ -s $o ]] || { echo "no $o"; return 1; }
	rm -rf "$x"
	mkdir -p "$x"
	xorriso -osirrox on -indev "$o" -extract /live/filesystem.squashfs "$x/fs.img" -extract /boot/grub/grub.cfg "$x/grub.cfg" >/dev/null 2>&1
	unsquashfs -cat "$x/fs.img" etc/livesquash-pkgtest 2>/dev/null | grep -q 'added by the package test' || { echo "the added file is not in the image"; return 1; }
	grep -q 'livesquash.pkgtest=1' "$x/grub.cfg" || { echo "grub.cfg has no livesquash.pkgtest=1"; return 1; }
	grep -q '^livesquash-remaster: done' "$LOG/remaster.log" || { echo "its messages do not start with livesquash-remaster:"; return 1; }
}
tap_test "[remaster] the copy has the added file in its root image and the word on GRUB's kernel lines" remastered

# ---- remove, reinstall, purge -------------------------------------------------------------------
step remove "[remove] apt-get remove ${pkgs[*]}" in_ch apt-get remove -y -q "${pkgs[@]}" || true
nothing_left() {
	local p f left=()
	for p in "${pkgs[@]}"; do
		while IFS= read -r f; do
			[[ -n $f && $f != /. ]] || continue
			# a folder other packages share (/usr/lib/dracut/modules.d) stays; ours go
			if [[ -d $CH$f && ! -L $CH$f ]]; then
				case $f in /usr/lib/livesquash | /usr/lib/dracut/modules.d/90livesquash | /usr/src/livesquash-*) ;; *) continue ;; esac
			fi
			[[ ! -e $CH$f && ! -L $CH$f ]] || left+=("$f")
		done <"$LOG/dpkg-L.$p"
	done
	((${#left[@]} == 0)) || { printf '%s\n' "${left[@]}" | head -n 10; return 1; }
	[[ -z $(mod_file) ]] || { echo "$(mod_file) is still there"; return 1; }
	local n
	n=$(in_ch modinfo -k "$KVER" -n squashfs) || true
	[[ $n == */kernel/fs/squashfs/squashfs.ko* ]] || { echo "modinfo -k $KVER -n squashfs: '$n', not the kernel's own"; return 1; }
}
tap_test "[remove] no file of dpkg -L is left, our folders are gone, the kernel's own squashfs.ko is $KVER's again" nothing_left
step reinstall "[purge] apt-get install ./livesquash-dkms_*.deb again (its postinst builds for $KVER)" \
	in_ch sh -c 'cd /share/debs && apt-get install -y -q --no-install-recommends ./livesquash-dkms_*.deb' || true
in_ch dkms status >"$LOG/dkms-status.log" 2>&1 || true
tap_test "[purge] installed again: dkms status says installed for $KVER, the module in updates/dkms" dkms_installed
step purge "[purge] apt-get purge livesquash-dkms" in_ch apt-get purge -y -q livesquash-dkms || true
purged() {
	local s
	s=$(in_ch dkms status -m livesquash 2>&1) || true
	[[ -z $s ]] || { echo "dkms status -m livesquash: $s"; return 1; }
	[[ ! -e $CH/var/lib/dkms/livesquash ]] || { echo "/var/lib/dkms/livesquash is still there"; return 1; }
	[[ -z $(mod_file) ]] || { echo "$(mod_file) is still there"; return 1; }
	[[ ! -e $CH/usr/src/livesquash-$version ]] || { echo "/usr/src/livesquash-$version is still there"; return 1; }
	for p in "${pkgs[@]}"; do
		# shellcheck disable=SC2016 # dpkg-query's own ${FIELD}s
		s=$(in_ch dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null) || true
		[[ -z $s || $s == "un " || $s == "pn " ]] || { echo "$p: dpkg status '$s' after purge"; return 1; }
	done
}
tap_test "[purge] DKMS knows no livesquash module (dkms status, /var/lib/dkms), no squashfs.ko in updates/dkms, dpkg knows none of the packages" purged
tap_test "[purge] still no /lib/modules/$host_kver in the tree" no_host_kernel
tap_diag "packages suite: $SECONDS s"
finished=1
tap_summary
((LS_FAIL == 0))
