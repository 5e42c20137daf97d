#!/bin/bash
# boot-tests/run.sh: boot the live ISOs in QEMU and check them; TAP on stdout,
# numbered across every boot, ending with "N passed, N failed".
#
# usage: run.sh [all | quick | SUITE ...]
#   suites: busybox-bios busybox-uefi debian-bios debian-uefi remaster missing-medium
#   all   = every suite (debian-uefi only with CHECK_DEBIAN_UEFI=yes)
#   quick = busybox-bios
# Environment (make passes these): BUILD TOP ACCEL MEM KERNEL; CHECK_BUILD=no skips
# the `make iso`/`make initramfs` steps and tests what is already in build/;
# BOOT_TIMEOUT, DEBIAN_TIMEOUT (seconds per boot). Logs: $BUILD/tests/SUITE/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TOP=${TOP:-$(dirname "$here")}
export BUILD=${BUILD:-$TOP/build}
# shellcheck disable=SC1091 # lib.sh, beside this script
source "$here/lib.sh"

CHECK_BUILD=${CHECK_BUILD:-yes}
CHECK_DEBIAN_UEFI=${CHECK_DEBIAN_UEFI:-no}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-240}
DEBIAN_TIMEOUT=${DEBIAN_TIMEOUT:-500}
MAKE=${MAKE:-make}
# what is tested; the defaults are what `make iso` and `make initramfs` make
LS_KERNEL=${LS_KERNEL:-${KERNEL:-$BUILD/kobj/arch/x86/boot/bzImage}}
LS_INITRD=${LS_INITRD:-$BUILD/initramfs/initrd.img}

iso_of() { # ROOTFS
	local v="LS_ISO_${1^^}"
	echo "${!v:-$BUILD/livesquash-$1.iso}"
}
tree_of() { # ROOTFS
	local v="LS_TREE_${1^^}"
	echo "${!v:-$BUILD/rootfs/$1}"
}

suites=()
for a in "${@:-all}"; do
	case $a in
	all)
		suites+=(busybox-bios busybox-uefi debian-bios)
		[[ $CHECK_DEBIAN_UEFI == yes ]] && suites+=(debian-uefi)
		suites+=(remaster missing-medium)
		;;
	quick) suites+=(busybox-bios) ;;
	busybox-bios | busybox-uefi | debian-bios | debian-uefi | remaster | missing-medium) suites+=("$a") ;;
	*)
		echo "run.sh: unknown suite '$a'" >&2
		exit 2
		;;
	esac
done

mkdir -p "$LS_LOGDIR"
run_start=$SECONDS
tap_diag "livesquash boot tests: ${suites[*]}"
tap_diag "accelerator: $(ls_accel) (ACCEL=${ACCEL:-auto}), memory ${MEM} MiB, logs in $LS_LOGDIR"

# a live boot that shows one of these will not get to the guest checks: stop it
LS_STOP_REGEX='Dropping to debug shell|Entering emergency mode|Kernel panic - not syncing|end Kernel panic|-- System halted'

# ---- building ----------------------------------------------------------------
declare -A built=()
# make_target NAME ARGS...: run make once per run (CHECK_BUILD=yes) as a test
make_target() {
	local name=$1
	shift
	[[ -n ${built[$name]:-} ]] && return "${built[$name]}"
	if [[ $CHECK_BUILD != yes ]]; then
		built[$name]=0
		return 0
	fi
	local log=$LS_LOGDIR/make-$name.log start=$SECONDS rc=0
	"$MAKE" -C "$TOP" --no-print-directory "$@" >"$log" 2>&1 || rc=$?
	if ((rc == 0)); then
		tap_ok "build: make $* ($((SECONDS - start)) s)"
	else
		local -a tail_lines=()
		mapfile -t tail_lines < <(tail -n 15 "$log")
		tap_notok "build: make $* (exit $rc, log $log)" "${tail_lines[@]}"
	fi
	built[$name]=$rc
	return "$rc"
}

# ---- host-side oracles ---------------------------------------------------------
# unsquashfs -lln IMG -> "path type mode uid gid size data", data: symlink target or
# major:minor; the same columns are cut from a manifest by manifest_columns
unsquashfs_columns() {
	unsquashfs -lln "$1" | awk '
	function perm(s,   m, i, c) {
		m = 0
		for (i = 2; i <= 10; i++) {
			c = substr(s, i, 1)
			m = m * 2 + (c != "-" && c != "S" && c != "T")
		}
		c = substr(s, 4, 1); if (c == "s" || c == "S") m += 2048
		c = substr(s, 7, 1); if (c == "s" || c == "S") m += 1024
		c = substr(s, 10, 1); if (c == "t" || c == "T") m += 512
		return sprintf("%04o", m)
	}
	{
		i = index($0, " squashfs-root")
		if (i == 0) next
		rest = substr($0, i + 14)
		split(substr($0, 1, i - 1), f, " ")
		c = substr(f[1], 1, 1)
		t = (c == "-") ? "f" : c
		split(f[2], ug, "/")
		size = "-"; data = "-"
		if (t == "f") size = f[3]
		if (t == "c" || t == "b") { sub(/,$/, "", f[3]); data = f[3] ":" f[4] }
		if (t == "l") {
			j = index(rest, " -> ")
			data = substr(rest, j + 4)
			rest = substr(rest, 1, j - 1)
		}
		print "." rest "\t" t "\t" perm(f[1]) "\t" ug[1] "\t" ug[2] "\t" size "\t" data
	}' | LC_ALL=C sort
}
manifest_columns() {
	awk -F '\t' -v OFS='\t' '{ print $1, $2, $3, $4, $5, $7, (($2 == "l" || $2 == "c" || $2 == "b") ? $9 : "-") }' "$1"
}

# first lines of a diff, for TAP diagnostics
diff_head() {
	diff "$1" "$2" | head -n 12 || true
}

# extract LiveOS/squashfs.img from an ISO
iso_extract_image() { # ISO OUT
	rm -f "$2"
	xorriso -osirrox on -indev "$1" -extract /LiveOS/squashfs.img "$2" >"$2.log" 2>&1 && [[ -s $2 ]]
}

# host checks for one ISO: its image matches the tree it was packed from.
# Sets HOST_MANIFEST. Returns non-zero if nothing can be booted.
declare -A host_manifest_done=()
host_checks() { # ROOTFS ISO TAG
	local rootfs=$1 iso=$2 tag=$3 tree
	tree=$(tree_of "$rootfs")
	HOST_MANIFEST=$LS_LOGDIR/host-$rootfs.manifest
	if [[ ! -f $iso ]]; then
		tap_notok "[$tag] ISO $iso exists"
		return 1
	fi
	if [[ -z ${host_manifest_done[$rootfs]:-} ]]; then
		local start=$SECONDS rc=0
		bash "$here/manifest.sh" "$tree" >"$HOST_MANIFEST" 2>"$HOST_MANIFEST.err" || rc=$?
		local n
		n=$(wc -l <"$HOST_MANIFEST")
		if ((rc == 0 && n >= 10)) && [[ ! -s $HOST_MANIFEST.err ]]; then
			tap_ok "[$rootfs] host manifest of the packed tree $tree: $n paths ($((SECONDS - start)) s)"
		else
			local -a err=()
			mapfile -t err < <(head -n 10 "$HOST_MANIFEST.err")
			tap_notok "[$rootfs] host manifest of the packed tree $tree (exit $rc, $n paths)" "${err[@]}"
			return 1
		fi
		host_manifest_done[$rootfs]=1
	fi
	local img=$LS_LOGDIR/$tag/squashfs.img
	mkdir -p "$LS_LOGDIR/$tag"
	if ! iso_extract_image "$iso" "$img"; then
		tap_notok "[$tag] the ISO holds LiveOS/squashfs.img" "$(tail -n 3 "$img.log")"
		return 1
	fi
	unsquashfs_columns "$img" >"$LS_LOGDIR/$tag/unsquashfs.columns"
	manifest_columns "$HOST_MANIFEST" >"$LS_LOGDIR/$tag/manifest.columns"
	tap_test "[$tag] unsquashfs -lln of the ISO's image agrees with the tree (paths, types, modes, owners, sizes, targets, devices)" \
		diff_cmp "$LS_LOGDIR/$tag/manifest.columns" "$LS_LOGDIR/$tag/unsquashfs.columns"
	return 0
}
diff_cmp() { # WANT GOT: silent if equal, else the first differences
	cmp -s "$1" "$2" && return 0
	echo "want ($1) vs got ($2):"
	diff_head "$1" "$2"
	return 1
}

# ---- one live boot with the guest checks -------------------------------------
# live_boot TAG ISO FIRMWARE TIMEOUT MANIFEST [MARKERS]
live_boot() {
	local tag=$1 iso=$2 firmware=$3 tmo=$4 manifest=$5 markers=${6:-}
	local dir=$LS_LOGDIR/$tag data
	data=$dir/data
	rm -rf "$data"
	mkdir -p "$data"
	cp "$here/guest.sh" "$here/manifest.sh" "$data/"
	cp "$manifest" "$data/manifest"
	if [[ -n $markers ]]; then cp "$markers" "$data/markers"; else : >"$data/markers"; fi
	# a file to append to (copy-up): /etc/hostname, else the first plain file in /etc
	local copyup
	copyup=$(awk -F '\t' '$2 == "f" && $6 == 1 && $1 ~ /^\.\/etc\/[^\/]+$/ { print $1 }' "$manifest" |
		awk '$0 == "./etc/hostname" { h = $0 } NR == 1 { f = $0 } END { print (h != "" ? h : f) }')
	{
		printf 'LS_NAME=%q\n' "$tag"
		printf 'LS_COPYUP=%q\n' "$copyup"
	} >"$data/config"
	tar --format=ustar -cf "$dir/data.tar" -C "$data" .
	local -a fw=()
	[[ $firmware == uefi ]] && fw=(--uefi)
	ls_qemu "$tag" "$tmo" --iso "$iso" "${fw[@]}" --autorun "$here/autorun.sh" --data "$dir/data.tar" \
		--stop-on "$LS_STOP_REGEX"
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), $firmware firmware, QEMU exit $LS_QEMU_RC"
	if [[ -n $LS_QEMU_STOPPED ]]; then
		local -a last=()
		mapfile -t last < <(grep -v '^\s*$' "$dir/console.txt" | tail -n 12)
		tap_notok "[$tag] booted and powered off by itself (stopped after $LS_QEMU_SECONDS s: the console says '$LS_QEMU_STOPPED'; $dir/console.txt ends:)" "${last[@]}"
	elif ((LS_QEMU_RC == 0)); then
		tap_ok "[$tag] booted and powered off by itself within $tmo s ($LS_QEMU_SECONDS s)"
	else
		local -a last=()
		mapfile -t last < <(grep -v '^\s*$' "$dir/console.txt" | tail -n 8)
		tap_notok "[$tag] booted and powered off by itself within $tmo s (QEMU exit $LS_QEMU_RC after $LS_QEMU_SECONDS s; console $dir/console.txt ends:)" "${last[@]}"
	fi
	tap_guest "$dir/results.txt" "[$tag]"
	if grep -qx '# livesquash guest checks done' "$dir/results.txt" && ((LS_GUEST_SEEN >= 10)); then
		tap_ok "[$tag] the guest checks ran to the end ($LS_GUEST_SEEN results)"
	else
		tap_notok "[$tag] the guest checks ran to the end ($LS_GUEST_SEEN results, results in $dir/results.txt)"
	fi
	console_test "$tag"
}

console_test() { # TAG
	local dir=$LS_LOGDIR/$1 problems
	problems=$(ls_console_problems "$dir/console.txt")
	if [[ -z $problems ]] && [[ -s $dir/console.txt ]]; then
		tap_ok "[$1] console has no BUG:/WARNING:/Oops/Call Trace/KASAN/Kernel panic"
	else
		local -a lines=()
		mapfile -t lines < <(printf '%s\n' "${problems:-the console log is empty}")
		tap_notok "[$1] console has no BUG:/WARNING:/Oops/Call Trace/KASAN/Kernel panic ($dir/console.txt)" "${lines[@]}"
	fi
}

suite_live() { # ROOTFS FIRMWARE
	local rootfs=$1 firmware=$2 tag=$1-$2 iso tmo=$BOOT_TIMEOUT
	[[ $rootfs == debian ]] && tmo=$DEBIAN_TIMEOUT
	make_target "iso-$rootfs" iso ROOTFS="$rootfs" || true
	iso=$(iso_of "$rootfs")
	host_checks "$rootfs" "$iso" "$tag" || return 0
	# boot a copy: the ISO may be rebuilt while we run
	mkdir -p "$LS_LOGDIR/$tag"
	ls_stable_copy "$iso" "$LS_LOGDIR/$tag/boot.iso"
	live_boot "$tag" "$LS_LOGDIR/$tag/boot.iso" "$firmware" "$tmo" "$HOST_MANIFEST"
}

# ---- remaster ------------------------------------------------------------------
suite_remaster() {
	local tag=remaster dir=$LS_LOGDIR/remaster iso
	make_target iso-busybox iso ROOTFS=busybox || true
	iso=$(iso_of busybox)
	host_checks busybox "$iso" "$tag" || return 0
	rm -rf "$dir/add" "$dir/extracted" "$dir/remastered.iso"
	mkdir -p "$dir/add"
	local add_text run_text
	add_text="added by boot-tests at $(date -u +%FT%TZ)"
	run_text="created by --run"
	echo "$add_text" >"$dir/add/livesquash-marker-add.txt"
	local rc=0
	bash "$TOP/iso/remaster" --add "$dir/add" \
		--run "echo '$run_text' > /livesquash-marker-run.txt" \
		"$iso" "$dir/remastered.iso" >"$dir/remaster.log" 2>&1 || rc=$?
	if ((rc == 0)) && [[ -s $dir/remastered.iso ]]; then
		tap_ok "[$tag] iso/remaster --add DIR --run CMD IN OUT"
	else
		local -a lines=()
		mapfile -t lines < <(tail -n 10 "$dir/remaster.log")
		tap_notok "[$tag] iso/remaster --add DIR --run CMD IN OUT (exit $rc, log $dir/remaster.log)" "${lines[@]}"
		return 0
	fi
	# what the new image holds, read back with unsquashfs (squashfs-tools, not ours)
	if ! iso_extract_image "$dir/remastered.iso" "$dir/squashfs-new.img" ||
		! unsquashfs -d "$dir/extracted" -no-progress "$dir/squashfs-new.img" >"$dir/unsquashfs.log" 2>&1; then
		tap_notok "[$tag] unpack the remastered ISO's LiveOS/squashfs.img" "$(tail -n 3 "$dir/unsquashfs.log" 2>/dev/null)"
		return 0
	fi
	local expected=$dir/expected.manifest markers=$dir/markers
	bash "$here/manifest.sh" "$dir/extracted" >"$expected"
	: >"$markers"
	: >"$dir/markers.exclude"
	local name want p
	for name in livesquash-marker-add.txt livesquash-marker-run.txt; do
		if [[ $name == *add* ]]; then want=$add_text; else want=$run_text; fi
		p=$(awk -F '\t' -v n="$name" '$2 == "f" && ($1 ~ ("/" n "$")) { print $1; exit }' "$expected")
		if [[ -n $p ]] && [[ $(cat "$dir/extracted/$p") == "$want" ]]; then
			tap_ok "[$tag] the remastered image has $p with the expected content"
			printf '%s %s\n' "$p" "$(sha256sum <"$dir/extracted/$p" | cut -d' ' -f1)" >>"$markers"
			printf '/ %s\n' "$p" >>"$dir/markers.exclude"
			# its folder changed too (and any folder that is new)
			while [[ $p == */* ]]; do
				p=${p%/*}
				printf '= %s\n' "$p" >>"$dir/markers.exclude"
			done
		else
			tap_notok "[$tag] the remastered image has $name with the expected content" "found: '${p:-nothing}'"
		fi
	done
	# everything else is what it was
	bash "$here/manifest.sh" -x "$dir/markers.exclude" -F "$expected" >"$dir/rest.new"
	bash "$here/manifest.sh" -x "$dir/markers.exclude" -F "$HOST_MANIFEST" >"$dir/rest.old"
	tap_test "[$tag] apart from the markers the remastered image equals the original tree" \
		diff_cmp "$dir/rest.old" "$dir/rest.new"
	live_boot "$tag" "$dir/remastered.iso" bios "$BOOT_TIMEOUT" "$expected" "$markers"
}

# ---- missing medium ----------------------------------------------------------
# waited_for CONSOLE REGEX: kernel timestamps "[ t]" of the first line saying the
# wait began ("waiting ..." from the dracut module, else the kernel's start at 0)
# and of the first REGEX line are 9-40 s apart (10 s, less up to 1 s of a
# whole-second deadline)
waited_for() {
	awk -v re="$2" '
	function ts(l) { sub(/^[^\[]*\[ */, "", l); sub(/\].*/, "", l); return l + 0 }
	/^\[ *[0-9.]+\].*livesquash: waiting/ && t0 == "" { t0 = ts($0) }
	/^\[ *[0-9.]+\]/ && $0 ~ re && t1 == "" { t1 = ts($0) }
	END {
		if (t1 == "") { print "no timestamped line matches: " re; exit 1 }
		if (t0 == "") t0 = 0
		d = t1 - t0
		printf "wait began at %.1f s, message at %.1f s: waited %.1f s\n", t0, t1, d
		exit !(d >= 9 && d <= 40)
	}' "$1"
}

suite_missing_medium() {
	local tag=missing-medium dir=$LS_LOGDIR/missing-medium tmo=180
	make_target initramfs initramfs || true
	mkdir -p "$dir"
	if [[ ! -f $LS_KERNEL || ! -f $LS_INITRD ]]; then
		tap_notok "[$tag] kernel $LS_KERNEL and initrd $LS_INITRD exist"
		return 0
	fi
	ls_stable_copy "$LS_KERNEL" "$dir/bzImage"
	ls_stable_copy "$LS_INITRD" "$dir/initrd.img"
	local msg="livesquash: live medium CDLABEL=NOSUCH not found after [0-9]+ s"
	ls_qemu "$tag" "$tmo" --kernel "$dir/bzImage" --initrd "$dir/initrd.img" \
		--append "root=live:CDLABEL=NOSUCH rd.live.image rd.live.timeout=10 console=ttyS0,115200 earlyprintk=serial,ttyS0,115200" \
		--wait-for "$msg" --stop-on "$LS_STOP_REGEX"
	tap_diag "boot $tag: $LS_QEMU_SECONDS s with $(ls_accel), -kernel/-initrd, no CD, QEMU exit $LS_QEMU_RC"
	local line
	line=$(grep -oE "$msg" "$dir/console.txt" | head -n 1 || true)
	if ((LS_QEMU_FOUND)); then
		tap_ok "[$tag] the console says '$line' ($LS_QEMU_SECONDS s after start, limit $tmo s)"
	else
		local -a last=()
		mapfile -t last < <(grep -v '^\s*$' "$dir/console.txt" | tail -n 8)
		tap_notok "[$tag] the console says 'livesquash: live medium CDLABEL=NOSUCH not found after 10 s' within $tmo s" "${last[@]}"
	fi
	tap_test "[$tag] the message names rd.live.timeout=10 as the time waited" \
		grep -qF 'livesquash: live medium CDLABEL=NOSUCH not found after 10 s' "$dir/console.txt"
	tap_test "[$tag] the kernel clock shows 9-40 s between the start of the wait and the message (rd.live.timeout=10, whole-second clock)" \
		waited_for "$dir/console.txt" "$msg"
	console_test "$tag"
}

for s in "${suites[@]}"; do
	case $s in
	busybox-bios) suite_live busybox bios ;;
	busybox-uefi) suite_live busybox uefi ;;
	debian-bios) suite_live debian bios ;;
	debian-uefi) suite_live debian uefi ;;
	remaster) suite_remaster ;;
	missing-medium) suite_missing_medium ;;
	esac
done

tap_diag "total time $((SECONDS - run_start)) s"
echo "1..$LS_N"
tap_summary
((LS_FAIL == 0))
