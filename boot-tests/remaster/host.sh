#!/usr/bin/env bash
# boot-tests/remaster/host.sh: host-side tests of iso/remaster (no QEMU, nothing
# mounted but small tmpfs folders). Builds the fixture ISOs (fixtures.sh), remasters
# each distribution's layout and checks the result with tools we did not write
# (unsquashfs, fsck.erofs, dump.erofs, xorriso, mtools, getfattr, getcap, md5sum,
# sha*sum, checkisomd5, du), then feeds the remaster bad inputs. TAP on stdout, last
# line "N passed, N failed"; exit status non-zero if anything failed. Needs root.
#
#   LS_REMASTER=iso/remaster      the script under test
#   LS_REMASTER_WORK=build/tests/remaster-host   fixtures, outputs and logs (emptied first)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
# shellcheck disable=SC1091 # lib.sh, one folder up
source "$TOP/boot-tests/lib.sh"
REMASTER=${LS_REMASTER:-$TOP/iso/remaster}
W=${LS_REMASTER_WORK:-$BUILD/tests/remaster-host}
MANIFEST=$TOP/boot-tests/manifest.sh
export LC_ALL=C

suite_start=$(ls_now)
if [[ $(id -u) -ne 0 ]]; then
	tap_notok "remaster host tests must run as root (device nodes, owners, capabilities, tmpfs mounts)"
	tap_summary
	exit 1
fi

# ---- work space and cleanup ------------------------------------------------------------
our_mounts=()
bg_pid=
cleanup() {
	local m
	if [[ -n $bg_pid ]] && kill -0 "$bg_pid" 2>/dev/null; then
		kill -KILL -- "-$bg_pid" 2>/dev/null || true
	fi
	for m in "${our_mounts[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}
finished=0
# a failing command outside a check (set -e) ends the suite: say where, and still sum up
died_said=0
died() {
	((BASH_SUBSHELL == 0)) || return 0 # inside a check's $(...): the check reports it
	trap - ERR
	died_said=1
	tap_notok "host.sh stopped at line $1: $2 (exit $3)"
}
on_exit() {
	cleanup
	if ((!finished)); then
		((died_said)) || tap_notok "host.sh stopped early (its stderr says why)"
		tap_summary
	fi
}
set -E
trap 'died "$LINENO" "$BASH_COMMAND" "$?"' ERR
trap on_exit EXIT
trap 'exit 130' INT TERM

for m in $(findmnt -rn -o TARGET | grep -F "$W/" || true); do
	umount -l "$m" 2>/dev/null || true # a previous run that was killed
done
rm -rf "$W"
mkdir -p "$W"
chmod 0755 "$W"
FX=$W/fixtures
mkdir -p "$W/tmp" "$W/logs"
export TMPDIR=$W/tmp

CMD_ADD='livesquash.test=1 console=ttyS0,115200'
CMD_RM='quiet splash'
HOST_RESOLV=$(sha256sum </etc/resolv.conf 2>/dev/null | cut -c1-64 || true)

# ---- small helpers ------------------------------------------------------------------------
# lines FILE [N]: the first N (20) lines of FILE as tap diagnostics arguments
diag_file() { head -n "${2:-20}" "$1" 2>/dev/null || true; }
nlines() { awk 'END { print NR }' "$1"; } # counts a last line without a newline too
sha() { sha256sum "$1" | cut -c1-64; }

# rm_run NAME ARGS...: run the remaster (TMPDIR=$TMPDIR), stdout/stderr to logs/NAME.out/.err;
# sets RC and SECS
rm_run() {
	local name=$1 t0
	shift
	t0=$(ls_now)
	RC=0
	timeout 600 bash "$REMASTER" "$@" >"$W/logs/$name.out" 2>"$W/logs/$name.err" </dev/null || RC=$?
	SECS=$(ls_elapsed "$t0" "$(ls_now)")
}

# iso_extract ISO DIR: every file of the ISO (Rock Ridge names)
iso_extract() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	xorriso -osirrox on -indev "$1" -extract / "$2" >"$2.log" 2>&1
}

# fs_kind IMG: squashfs | erofs | unknown
fs_kind() {
	if [[ $(head -c 4 "$1" | od -An -tx1 | tr -d ' ') == 68737173 ]]; then
		echo squashfs
	elif [[ $(dd if="$1" bs=1 skip=1024 count=4 2>/dev/null | od -An -tx1 | tr -d ' ') == e2e1f5e0 ]]; then
		echo erofs
	else
		echo unknown
	fi
}

# unpack IMG DIR: the image's tree with owners, modes, times (and xattrs for squashfs)
unpack() {
	rm -rf "$2"
	case $(fs_kind "$1") in
	squashfs) unsquashfs -q -n -d "$2" "$1" >"$2.log" 2>&1 ;;
	erofs) fsck.erofs --extract="$2" "$1" >"$2.log" 2>&1 ;;
	*) echo "not a squashfs or EROFS image: $1" >"$2.log" && return 1 ;;
	esac
}

# superblock IMG: the settings a repack must keep (no sizes, counts or times)
superblock() {
	case $(fs_kind "$1") in
	squashfs)
		unsquashfs -s "$1" | grep -v -e '^Found a valid' -e '^Creation or last append time' \
			-e '^Filesystem size' -e '^Number of'
		;;
	erofs) dump.erofs -s "$1" | grep -e '^Filesystem features' ;;
	esac
}

# xattr_dump ROOT: "path<TAB>name=value" for every xattr under ROOT, sorted
xattr_dump() {
	(cd "$1" && { getfattr -R -P -d -m - -e hex . 2>/dev/null || true; }) | awk '
/^# file: / { f = substr($0, 9); next }
/=/ { print f "\t" $0 }' | sort
}

# erofs_inodes IMG PATHLIST: "path<TAB>hard-link group<TAB>xattr size" from dump.erofs.
# fsck.erofs 1.5 extracts neither hard links nor xattrs; dump.erofs shows each inode's
# NID, link count and xattr size, the closest check erofs-utils 1.5 allows
erofs_inodes() {
	local p q
	while IFS= read -r p; do
		q=/${p#./}
		[[ $p == . ]] && q=/
		printf '%s\t%s\n' "$p" "$(dump.erofs --path="$q" "$1" 2>&1 | tr '\n' ' ')"
	done <"$2" | awk -F'\t' '
{
	path[NR] = $1
	nid = ($2 ~ /NID: [0-9]+/) ? $2 : "?"; sub(/.*NID: /, "", nid); sub(/ .*/, "", nid)
	links = $2; sub(/.*Links: /, "", links); sub(/ .*/, "", links)
	xs = $2; sub(/.*Xattr size: /, "", xs); sub(/ .*/, "", xs)
	dir = ($2 ~ / directory /)
	xattr[NR] = xs; key[NR] = (!dir && links > 1) ? nid : ""
	if (key[NR] != "" && (!(nid in low) || $1 < low[nid])) low[nid] = $1
}
END { for (i = 1; i <= NR; i++) print path[i] "\t" (key[i] != "" ? low[key[i]] : "-") "\t" xattr[i] }'
}

# boot_check OLD NEW MODE: MODE grub|syslinux|sdboot. The kernel command lines (GRUB
# linux/linuxefi lines, syslinux APPEND lines of entries that boot a kernel, systemd-boot
# options lines) must have lost the words of $CMD_RM and gained those of $CMD_ADD (before
# a trailing ---; where --- is followed by more words, as in Ubuntu 24.04's "--- quiet
# splash", the added words may also stand just before it), keeping their indentation;
# every other line must be unchanged.
# Prints the number of command lines seen on success.
boot_check() {
	awk -v mode="$3" -v add="$CMD_ADD" -v rm="$CMD_RM" '
function first(l,   w) { split(l, w, /[ \t]+/); return (w[1] == "") ? tolower(w[2]) : tolower(w[1]) }
function indent(l) { match(l, /^[ \t]*/); return substr(l, 1, RLENGTH) }
function norm(l,   w, n, i, s) {
	n = split(l, w, /[ \t]+/); s = ""
	for (i = 1; i <= n; i++) if (w[i] != "") s = s (s == "" ? "" : " ") w[i]
	return s
}
function removed(word,   i, r) {
	for (i = 1; i <= nrm; i++) {
		r = R[i]
		if (word == r) return 1
		if (r ~ /=$/ && index(word, r) == 1) return 1
	}
	return 0
}
function expect(l, before_sep,   w, n, i, keep, out, k, last) {
	n = split(norm(l), w, " ")
	keep = (mode == "grub") ? 2 : 1
	k = 0
	for (i = 1; i <= n; i++)
		if (i <= keep || !removed(w[i])) o[++k] = w[i]
	last = (k > keep && o[k] == "---") ? k : 0
	if (before_sep && !last)
		for (i = keep + 1; i <= k && !last; i++)
			if (o[i] == "---") last = i
	out = ""
	for (i = 1; i <= k; i++) {
		if (i == last) for (j = 1; j <= nadd; j++) out = out " " A[j]
		out = out (out == "" ? "" : " ") o[i]
	}
	if (!last) for (j = 1; j <= nadd; j++) out = out " " A[j]
	return out
}
function isboot(i,   f) {
	f = first(old[i])
	if (mode == "grub") return f == "linux" || f == "linuxefi"
	if (mode == "sdboot") return f == "options"
	return f == "append" && kernel[block[i]]
}
FNR == NR { old[FNR] = $0; nold = FNR; next }
{ new[FNR] = $0; nnew = FNR }
END {
	nadd = split(add, A, " "); nrm = split(rm, R, " ")
	b = 0
	for (i = 1; i <= nold; i++) { # syslinux: which LABEL blocks boot a kernel
		f = first(old[i])
		if (f == "label" || f == "menu" && first(substr(old[i], index(tolower(old[i]), "menu") + 4)) ~ /^(begin|end)$/) b++
		block[i] = b
		if (f == "linux" || f == "kernel") kernel[b] = 1
	}
	bad = 0; seen = 0
	if (nold != nnew) { print "lines: " nold " before, " nnew " after"; bad = 1 }
	for (i = 1; i <= nold && i <= nnew; i++) {
		if (isboot(i)) {
			seen++
			e = expect(old[i], 0)
			e2 = expect(old[i], 1)
			if (norm(new[i]) != e && norm(new[i]) != e2 || indent(new[i]) != indent(old[i])) {
				print "line " i ": [" old[i] "]"; print "  became   [" new[i] "]"; print "  expected [" indent(old[i]) e "]"; bad = 1
			}
		} else if (old[i] != new[i]) {
			print "line " i " changed: [" old[i] "] -> [" new[i] "]"; bad = 1
		}
	}
	if (bad) exit 1
	print seen
}' "$1" "$2"
}

# cfg_mode PATH: grub | syslinux | sdboot | "" (not a boot configuration)
cfg_mode() {
	case $1 in
	*isolinux/*.cfg | *syslinux/*.cfg) echo syslinux ;;
	*.cfg) echo grub ;;
	*loader/entries/*.conf) echo sdboot ;;
	*) echo "" ;;
	esac
}

# is_fat FILE: mtools reads it
is_fat() { [[ -f $1 ]] && mdir -i "$1" :: >/dev/null 2>&1; }

# fat_extract IMG DIR: every file of a FAT image

# fat_check DESCRIPTION OLD NEW LABEL: the files of two FAT images (mtools) are the
# same but for the kernel command lines the remaster edited (tree_compare); uses $d
fat_check() {
	local out
	local -a l=()
	fat_extract "$2" "$d/fat-old" || true
	fat_extract "$3" "$d/fat-new" || true
	: >"$d/fat-skip"
	if out=$(tree_compare "$d/fat-old" "$d/fat-new" "$4" "$d/fat-skip"); then
		tap_ok "$1: files identical, $(cat "$W/cfg.count") kernel command lines edited (mtools)"
	else
		mapfile -t l < <(printf '%s\n' "$out" | head -n 16)
		tap_notok "$1: files identical, kernel command lines edited (mtools)" "${l[@]}"
	fi
}
fat_extract() {
	rm -rf "$2"
	mkdir -p "$2"
	mcopy -s -n -i "$1" ::/ "$2/" >"$2.log" 2>&1 || mcopy -s -n -i "$1" '::/*' "$2/" >>"$2.log" 2>&1
}

# tree_compare OLD NEW LABEL SKIPFILE: every path of OLD is in NEW and no more; regular
# files byte-identical unless listed in SKIPFILE (paths ./x); boot configurations (cfg_mode)
# checked with boot_check. Prints problems; the number of command lines seen goes to
# $W/cfg.count (it runs in a $(...)).
tree_compare() {
	local o=$1 n=$2 label=$3 skip=$4 p mode out bad=0
	CFG_LINES=0
	if ! diff <(cd "$o" && find . | sort) <(cd "$n" && find . | sort) >"$W/tc.diff"; then
		echo "$label: the file lists differ:"
		head -n 10 "$W/tc.diff"
		bad=1
	fi
	while IFS= read -r p; do
		[[ -f $n/$p ]] || continue
		grep -qxF -- "$p" "$skip" && continue
		mode=$(cfg_mode "$p")
		if [[ -n $mode ]]; then
			if out=$(boot_check "$o/$p" "$n/$p" "$mode"); then
				CFG_LINES=$((CFG_LINES + out))
			else
				echo "$label: ${p#./} ($mode):"
				printf '%s\n' "$out" | head -n 9
				bad=1
			fi
		elif ! cmp -s "$o/$p" "$n/$p"; then
			echo "$label: ${p#./} differs"
			bad=1
		fi
	done < <(cd "$o" && find . -type f | sort)
	echo "$CFG_LINES" >"$W/cfg.count"
	return "$bad"
}

# appended_parts ISO: "N START COUNT" (512-byte blocks) of the partitions appended after
# the ISO 9660 image (-append_partition in xorriso's as_mkisofs report)
appended_parts() {
	xorriso -indev "$1" -report_el_torito as_mkisofs 2>/dev/null |
		sed -n "s/^-append_partition \([0-9]*\) [^ ]* --interval:local_fs:\([0-9]*\)d-\([0-9]*\)d:.*/\1 \2 \3/p" |
		awk '{ print $1, $2, $3 - $2 + 1 }'
}

# eltorito_shape ISO: the El Torito and system-area reports without LBAs, sizes, GUIDs and
# the "Gap" partitions xorriso adds by itself to cover unclaimed space
eltorito_shape() {
	xorriso -indev "$1" -report_el_torito plain -report_system_area plain 2>/dev/null | awk -F' *: *' '
{ line[NR] = $0; split($2, f, / +/); num[NR] = f[1] }
$1 == "GPT partname local" && f[2] ~ /^Gap[0-9]*$/ { gap[f[1]] = 1 }
END { for (i = 1; i <= NR; i++) if (!(line[i] ~ /^GPT / && line[i] !~ /^GPT (disk GUID|entry array|lba range)/ && num[i] in gap)) print line[i] }' |
		awk -F' *: *' '
$1 == "El Torito catalog" || $1 == "ISO image size/512" || $1 ~ /GUID$/ && $1 != "GPT type GUID" || $1 == "GPT lba range" { next }
$1 == "El Torito boot img" { sub(/ +[0-9]+ *$/, ""); print; next }
$1 == "MBR partition" { split($2, f, / +/); print $1 ": " f[1], f[2], f[3]; next }
$1 == "GPT start and size" { split($2, f, / +/); print $1 ": " f[1]; next }
{ print }'
}

# bootinfo_ok OLD NEW: a BIOS boot image may differ only where xorriso patches it
# (boot-info-table: bytes 8-63; --grub2-boot-info: bytes 2548-2555)
bootinfo_ok() {
	[[ $(stat -c %s "$1") == "$(stat -c %s "$2")" ]] || return 1
	{ cmp -l "$1" "$2" || true; } | awk '!(($1 >= 9 && $1 <= 64) || ($1 >= 2549 && $1 <= 2556)) { bad = 1 } END { exit bad }'
}

# ---- the fixtures --------------------------------------------------------------------------
t0=$(ls_now)
if bash "$here/fixtures.sh" "$FX" >"$W/logs/fixtures.log" 2>&1; then
	tap_ok "fixtures.sh built the fixture ISOs ($(ls_elapsed "$t0" "$(ls_now)") s)"
else
	mapfile -t l < <(tail -n 15 "$W/logs/fixtures.log")
	tap_notok "fixtures.sh built the fixture ISOs" "${l[@]}"
	exit 1
fi

# the fixtures are what they claim: their own checksums verify (an honest oracle)
fixture_sums() {
	local d=$W/fx-check f bad=0
	for f in fedora debian ubuntu ubuntu-layered arch; do
		iso_extract "$FX/$f.iso" "$d/$f" || { echo "$f: xorriso -extract failed" && bad=1 && continue; }
	done
	(cd "$d/fedora/LiveOS" && sha256sum --quiet -c squashfs.img.sha256) || bad=1
	(cd "$d/debian" && md5sum --quiet -c md5sum.txt && sha256sum --quiet -c sha256sum.txt) || bad=1
	(cd "$d/ubuntu" && md5sum --quiet -c md5sum.txt) || bad=1
	(cd "$d/ubuntu-layered" && md5sum --quiet -c md5sum.txt) || bad=1
	(cd "$d/arch/arch/x86_64" && sha512sum --quiet -c airootfs.sha512) || bad=1
	checkisomd5 "$FX/fedora.iso" >/dev/null 2>&1 || { echo "checkisomd5 fedora.iso failed" && bad=1; }
	rm -rf "$d"
	return "$bad"
}
tap_test "the fixtures' own checksums (md5sum.txt, sha256sum.txt, .sha256, .sha512, implanted MD5) verify" fixture_sums

# ---- what every layout remaster gets --------------------------------------------------------
ADD=$(mktemp -d "$W/add.XXXXXX") # mode 0700, as a user's folder may be: / must keep its own mode
mkdir -m 0755 "$ADD/livesquash-added" "$ADD/etc"
echo "added by host.sh" >"$ADD/livesquash-added/marker"
chown 1000:1000 "$ADD/livesquash-added/marker"
chmod 0640 "$ADD/livesquash-added/marker"
echo "livesquash.added=1" >"$ADD/etc/livesquash-added.conf"
chmod 0644 "$ADD/etc/livesquash-added.conf"
RUN1='echo ran > /etc/livesquash-run && chmod 0600 /usr/share/fixture/text.txt'
# shellcheck disable=SC2016 # expanded in the chroot
RUN2='{ test -f /livesquash-added/marker && echo added-first; test -r /proc/self/status && echo proc; test -d /sys/kernel && echo sys; test -c /dev/null && echo dev; grep -q " /dev/pts devpts " /proc/mounts && echo pts; grep -q " /run tmpfs " /proc/mounts && echo run-tmpfs; echo "resolv $(sha256sum < /etc/resolv.conf | cut -c1-64)"; } >> /etc/livesquash-run'
RUN_EXPECT=$(printf 'ran\nadded-first\nproc\nsys\ndev\npts\nrun-tmpfs\nresolv %s' "$HOST_RESOLV")

# host_state: what a chroot must never touch on the host
host_state() {
	sha256sum /etc/resolv.conf 2>&1 || true
	ls -la /run/systemd/resolve 2>&1 || true
}

# layout NAME IMAGE DESCRIBE SIG [--image] [--no-run]
#   IMAGE     the root image's path in the ISO (/x/y)
#   DESCRIBE  the file that describes it (.sha256, .sha512, .size; "-" none)
#   SIG       a signature the remaster must warn about ("-" none)
layout() {
	local name=$1 img=$2 describe=$3 sig=$4 with_image=0 with_run=1 a
	shift 4
	for a in "$@"; do
		case $a in
		--image) with_image=1 ;;
		--no-run) with_run=0 ;;
		esac
	done
	local tag="[$name]" in=$FX/$name.iso d=$W/L/$name out
	out=$d/out.iso
	mkdir -p "$d"
	local -a args=(--add "$ADD")
	((with_run)) && args+=(--run "$RUN1" --run "$RUN2")
	args+=(--cmdline-add "$CMD_ADD" --cmdline-remove "$CMD_RM")
	((with_image)) && args+=(--image "$img")
	local host_before
	host_before=$(host_state)
	local in_sha
	in_sha=$(sha "$in")

	# -- the remaster
	rm_run "$name" "${args[@]}" "$in" "$out"
	if ((RC == 0)) && [[ -s $out ]]; then
		tap_ok "$tag remaster $( ((with_image)) && echo '--image ')--add $( ((with_run)) && echo '--run ')--cmdline-add --cmdline-remove"
		tap_diag "$name: remastered in $SECS s"
	else
		mapfile -t l < <(tail -n 8 "$W/logs/$name.err"; tail -n 4 "$W/logs/$name.out")
		tap_notok "$tag remaster --add --run --cmdline-add --cmdline-remove (exit $RC, $SECS s)" "${l[@]}"
		return 0
	fi
	if [[ $(sha "$in") == "$in_sha" ]]; then
		tap_ok "$tag IN unchanged"
	else
		tap_notok "$tag IN unchanged"
	fi

	# -- both ISOs' files
	if ! iso_extract "$in" "$d/old" || ! iso_extract "$out" "$d/new"; then
		tap_notok "$tag xorriso extracts both ISOs" "$(tail -n 3 "$d/new.log")"
		return 0
	fi
	local oimg=$d/old$img nimg=$d/new$img kind
	kind=$(fs_kind "$oimg")
	tap_diag "$name: $img is $kind, $(stat -c %s "$oimg") -> $(stat -c %s "$nimg" 2>/dev/null || echo '?') bytes"

	# -- the new root: the additions, and otherwise the original
	if ! unpack "$oimg" "$d/oroot" || ! unpack "$nimg" "$d/nroot"; then
		tap_notok "$tag both root images unpack" "$(tail -n 3 "$d/oroot.log" "$d/nroot.log" 2>/dev/null)"
		return 0
	fi
	sh "$MANIFEST" "$d/oroot" >"$d/old.manifest"
	sh "$MANIFEST" "$d/nroot" >"$d/new.manifest"
	local -a newp=(./livesquash-added ./livesquash-added/marker ./etc/livesquash-added.conf)
	grep -q $'^\./etc\t' "$d/old.manifest" || newp+=(./etc)
	((with_run)) && newp+=(./etc/livesquash-run)
	printf '%s\n' "${newp[@]}" | sort >"$d/expected-new"
	comm -13 <(cut -f1 "$d/old.manifest") <(cut -f1 "$d/new.manifest") >"$d/actual-new"
	if diff "$d/expected-new" "$d/actual-new" >"$d/new.diff"; then
		tap_ok "$tag the new root has exactly the added paths more"
	else
		mapfile -t l < <(diag_file "$d/new.diff")
		tap_notok "$tag the new root has exactly the added paths more (< missing, > unexpected)" "${l[@]}"
	fi
	local bad=()
	a=$(awk -F'\t' '$1 == "./livesquash-added/marker" { print $2, $3, $4, $5, $9 }' "$d/new.manifest")
	[[ $a == "f 0640 1000 1000 $(sha "$ADD/livesquash-added/marker")" ]] || bad+=("livesquash-added/marker: $a")
	a=$(awk -F'\t' '$1 == "./etc/livesquash-added.conf" { print $2, $3, $4, $5, $9 }' "$d/new.manifest")
	[[ $a == "f 0644 0 0 $(sha "$ADD/etc/livesquash-added.conf")" ]] || bad+=("etc/livesquash-added.conf: $a")
	a=$(awk -F'\t' '$1 == "./livesquash-added" { print $2, $3, $4, $5 }' "$d/new.manifest")
	[[ $a == "d 0755 0 0" ]] || bad+=("livesquash-added/: $a")
	if ((${#bad[@]} == 0)); then
		tap_ok "$tag --add: the added files have DIR's content, mode and owner"
	else
		tap_notok "$tag --add: the added files have DIR's content, mode and owner (type mode uid gid sha256)" "${bad[@]}"
	fi
	if ((with_run)); then
		if [[ $(cat "$d/nroot/etc/livesquash-run" 2>/dev/null) == "$RUN_EXPECT" ]]; then
			tap_ok "$tag --run ran after --add in a chroot with /proc, /sys, /dev, /dev/pts, a tmpfs /run and the host's resolv.conf"
		else
			mapfile -t l < <(diff <(printf '%s\n' "$RUN_EXPECT") "$d/nroot/etc/livesquash-run" 2>&1)
			tap_notok "$tag --run ran after --add in a chroot with /proc, /sys, /dev, /dev/pts, a tmpfs /run and the host's resolv.conf (< expected, > written)" "${l[@]}"
		fi
		if [[ $(host_state) == "$host_before" ]]; then
			tap_ok "$tag the host's /etc/resolv.conf and /run/systemd/resolve are untouched"
		else
			mapfile -t l < <(diff <(printf '%s\n' "$host_before") <(host_state))
			tap_notok "$tag the host's /etc/resolv.conf and /run/systemd/resolve are untouched" "${l[@]}"
		fi
	fi
	# the rest equals the original; the --run chmod changed text.txt (and its hard link);
	# folders that received files may have a new mtime
	local chm=""
	((with_run)) && chm="./usr/share/fixture/text.txt ./usr/share/fixture/text-link.txt"
	awk -F'\t' -v OFS='\t' -v chm="$chm" '
BEGIN { n = split(chm, c, " "); for (i = 1; i <= n; i++) C[c[i]] = 1 }
{ if ($1 in C) $3 = "0600"; if ($1 == "." || $1 == "./etc") $8 = "*"; print }' "$d/old.manifest" >"$d/old.expected"
	awk -F'\t' -v OFS='\t' -v newfile="$d/expected-new" '
BEGIN { while ((getline l < newfile) > 0) N[l] = 1 }
!($1 in N) { if ($1 == "." || $1 == "./etc") $8 = "*"; print }' "$d/new.manifest" >"$d/new.expected"
	if diff "$d/old.expected" "$d/new.expected" >"$d/manifest.diff"; then
		tap_ok "$tag apart from them the new root equals the original (paths, types, modes, owners, sizes, times, targets, devices, hard links, sha256; $(wc -l <"$d/old.manifest") paths)"
	else
		mapfile -t l < <(echo "path type mode uid gid nlink size mtime data linkgroup"; diag_file "$d/manifest.diff" 24)
		tap_notok "$tag apart from them the new root equals the original" "${l[@]}"
	fi
	# xattrs and the capability
	if [[ $kind == squashfs ]]; then
		xattr_dump "$d/oroot" >"$d/old.xattrs"
		xattr_dump "$d/nroot" | grep -v -F -f <(sed 's|$|\t|' "$d/expected-new") >"$d/new.xattrs" || true
		if [[ -s $d/old.xattrs ]] && diff "$d/old.xattrs" "$d/new.xattrs" >"$d/xattrs.diff"; then
			tap_ok "$tag xattrs kept ($(wc -l <"$d/old.xattrs") user./trusted./security. attributes, getfattr)"
		else
			mapfile -t l < <(diag_file "$d/xattrs.diff")
			tap_notok "$tag xattrs kept (getfattr -d -m -; < original, > new)" "${l[@]}" "$(wc -l <"$d/old.xattrs") in the original"
		fi
		if [[ -e $d/oroot/usr/share/fixture/ping ]]; then
			a=$(getcap "$d/nroot/usr/share/fixture/ping" 2>&1 || true)
			if [[ $a == *"cap_net_raw=ep"* ]]; then
				tap_ok "$tag the capability is kept (getcap: cap_net_raw=ep)"
			else
				tap_notok "$tag the capability is kept (getcap: cap_net_raw=ep)" "getcap: ${a:-nothing}"
			fi
		fi
	else
		grep -v -x -F -f "$d/expected-new" <(cut -f1 "$d/old.manifest") >"$d/paths"
		erofs_inodes "$oimg" "$d/paths" >"$d/old.inodes"
		erofs_inodes "$nimg" "$d/paths" >"$d/new.inodes"
		local with_x with_l
		with_x=$(awk -F'\t' '$3 != 0' "$d/old.inodes" | wc -l)
		with_l=$(awk -F'\t' '$2 != "-"' "$d/old.inodes" | wc -l)
		if ((with_l > 0)) && diff <(cut -f1,2 "$d/old.inodes") <(cut -f1,2 "$d/new.inodes") >"$d/links.diff"; then
			tap_ok "$tag hard links kept (dump.erofs: the same NID groups, $with_l paths in them)"
		else
			mapfile -t l < <(echo "path, lowest path of its hard-link group (- = none)"; diag_file "$d/links.diff")
			tap_notok "$tag hard links kept (dump.erofs --path: NID and link count; < original, > new)" "${l[@]}"
		fi
		if diff <(cut -f1,3 "$d/old.inodes") <(cut -f1,3 "$d/new.inodes") >"$d/xattrs.diff"; then
			tap_ok "$tag xattrs as they were (dump.erofs: the same xattr size on all $(wc -l <"$d/paths") inodes, $with_x with xattrs; erofs-utils 1.5 cannot list them)"
		else
			mapfile -t l < <(echo "path, xattr size in bytes"; diag_file "$d/xattrs.diff")
			tap_notok "$tag xattrs kept (dump.erofs --path: per-inode xattr size; < original, > new)" "${l[@]}"
		fi
	fi
	# superblock settings
	if diff <(superblock "$oimg") <(superblock "$nimg") >"$d/super.diff"; then
		tap_ok "$tag the same filesystem settings ($([[ $kind == squashfs ]] && echo 'unsquashfs -s' || echo 'dump.erofs -s features'): $(superblock "$oimg" | head -n 3 | tr '\n\t' '  '))"
	else
		mapfile -t l < <(diag_file "$d/super.diff")
		tap_notok "$tag the same filesystem settings (< original, > new)" "${l[@]}"
	fi

	# -- the rest of the ISO
	iso_rest "$name" "$d" "$img" "$describe" "$with_image"
	describe_check "$name" "$d" "$img" "$describe"
	[[ $sig == - ]] || sig_check "$name" "$sig"
	if [[ $name == fedora* ]]; then
		tap_test "$tag checkisomd5 passes on OUT (the ISO MD5 implanted again)" checkisomd5 "$out"
	fi
	replay_check "$name" "$in" "$out"

	# -- a --cmdline-only remaster leaves the root image as it is
	local -a cargs=(--cmdline-add "$CMD_ADD" --cmdline-remove "$CMD_RM")
	((with_image)) && cargs+=(--image "$img")
	rm_run "$name-cmdline" "${cargs[@]}" "$in" "$d/cmdline.iso"
	if ((RC == 0)) && [[ -s $d/cmdline.iso ]]; then
		tap_ok "$tag --cmdline-add/--cmdline-remove only"
		tap_diag "$name: --cmdline only in $SECS s"
		rm -rf "$d/new"
		iso_extract "$d/cmdline.iso" "$d/new"
		if cmp -s "$oimg" "$d/new$img"; then
			tap_ok "$tag --cmdline only: the root image is byte-identical"
		else
			tap_notok "$tag --cmdline only: the root image is byte-identical" "$(sha "$oimg") before, $(sha "$d/new$img" 2>&1) after"
		fi
		iso_rest "$name (cmdline only)" "$d" "$img" "$describe" "$with_image" cmdline
	else
		mapfile -t l < <(tail -n 8 "$W/logs/$name-cmdline.err")
		tap_notok "$tag --cmdline-add/--cmdline-remove only (exit $RC)" "${l[@]}"
	fi
	rm -rf "$d/old" "$d/new" "$d/oroot" "$d/nroot"
}

# iso_rest NAME DIR IMG DESCRIBE WITH_IMAGE [cmdline]: every other file of the ISO
iso_rest() {
	local name=$1 d=$2 img=$3 describe=$4 cmdonly=${6:-} tag="[$1]" f
	local skip=$d/skip
	{
		echo ".$img" # judged apart
		[[ $describe == - ]] || echo "./${describe#/}"
		for f in md5sum.txt sha256sum.txt SHA256SUMS sha1sum.txt; do echo "./$f"; done
	} >"$skip"
	# the boot catalog and the BIOS boot images (patched by xorriso) are judged apart
	local cat_path bios
	cat_path=$(xorriso -indev "$FX/$(iso_of "$name").iso" -report_el_torito plain 2>/dev/null | awk -F' *: *' '$1 == "El Torito cat path" { print $2 }')
	[[ -n $cat_path ]] && echo ".$cat_path" >>"$skip"
	local -a bios_imgs=()
	while IFS= read -r bios; do
		bios_imgs+=("$bios")
		echo ".$bios" >>"$skip"
	done < <(xorriso -indev "$FX/$(iso_of "$name").iso" -report_el_torito plain 2>/dev/null |
		awk '$1 == "El" && $3 == "img" && $4 == "path" { p[$6] = $7 } $1 == "El" && $3 == "boot" && $4 == "img" && $7 == "BIOS" { b[$6] = 1 } END { for (n in b) if (n in p) print p[n] }')
	# FAT images are compared file by file
	local -a fats=()
	while IFS= read -r f; do
		if is_fat "$d/old/$f"; then
			fats+=("$f")
			echo "$f" >>"$skip"
		fi
	done < <(cd "$d/old" && find . -type f \( -name '*.img' -o -name '*.efi' -o -name '*.bin' \) -size -64M)

	local out
	if out=$(tree_compare "$d/old" "$d/new" ISO "$skip"); then
		tap_ok "$tag every other file of the ISO is byte-identical; $(cat "$W/cfg.count") kernel command lines edited, no other line changed"
	else
		mapfile -t l < <(printf '%s\n' "$out" | head -n 24)
		tap_notok "$tag every other file of the ISO is byte-identical; kernel command lines edited, no other line changed" "${l[@]}"
	fi
	local b bad=()
	for b in "${bios_imgs[@]}"; do
		bootinfo_ok "$d/old$b" "$d/new$b" || bad+=("$b differs beyond the boot info table")
	done
	((${#bios_imgs[@]} == 0)) && bad+=("no BIOS boot image found in the El Torito catalog")
	if ((${#bad[@]} == 0)); then
		tap_ok "$tag the BIOS boot image(s) ${bios_imgs[*]} differ at most in xorriso's boot info table"
	else
		tap_notok "$tag the BIOS boot image(s) differ at most in xorriso's boot info table" "${bad[@]}"
	fi
	# FAT images on the ISO and appended partitions: their files, their configurations
	local -a pieces=() 
	for f in "${fats[@]}"; do
		pieces+=("${f#./}")
		fat_check "$tag FAT image ${f#./}" "$d/old/$f" "$d/new/$f" "${f#./}"
	done
	local n start count
	while read -r n start count; do
		[[ -n $n ]] || continue
		dd if="$FX/$(iso_of "$name").iso" of="$d/part-old.img" bs=512 skip="$start" count="$count" status=none
		read -r _ start count < <(appended_parts "$d/$([[ -n $cmdonly ]] && echo cmdline || echo out).iso" | awk -v n="$n" '$1 == n')
		if [[ -z $start ]]; then
			tap_notok "$tag appended partition $n is still there"
			continue
		fi
		dd if="$d/$([[ -n $cmdonly ]] && echo cmdline || echo out).iso" of="$d/part-new.img" bs=512 skip="$start" count="$count" status=none
		if ! is_fat "$d/part-old.img"; then
			if cmp -s "$d/part-old.img" "$d/part-new.img"; then
				tap_ok "$tag appended partition $n is byte-identical"
			else
				tap_notok "$tag appended partition $n is byte-identical"
			fi
			continue
		fi
		fat_check "$tag appended EFI partition $n (FAT)" "$d/part-old.img" "$d/part-new.img" "partition $n"
	done < <(appended_parts "$FX/$(iso_of "$name").iso")
	rm -rf "$d/fat-old" "$d/fat-new" "$d/part-old.img" "$d/part-new.img"
	# the checksum lists: verify, and only the lines of changed files differ
	for f in md5sum.txt sha256sum.txt SHA256SUMS sha1sum.txt; do
		[[ -f $d/old/$f ]] || continue
		sums_check "$name" "$d" "$f"
	done
}

# iso_of NAME: the fixture a layout name comes from ("fedora (cmdline only)" -> fedora)
iso_of() { echo "${1%% *}"; }

# sums_check NAME DIR FILE: FILE verifies; lines of unchanged files kept as they were
sums_check() {
	local name=$1 d=$2 f=$3 tool
	case $f in
	md5sum.txt) tool=md5sum ;;
	sha256sum.txt | SHA256SUMS) tool=sha256sum ;;
	sha1sum.txt) tool=sha1sum ;;
	esac
	local out rc=0
	out=$(cd "$d/new" && "$tool" --quiet -c "$f" 2>&1) || rc=$?
	if ((rc == 0)); then
		tap_ok "[$name] $tool -c $f"
	else
		mapfile -t l < <(printf '%s\n' "$out" | head -n 10)
		tap_notok "[$name] $tool -c $f" "${l[@]}"
	fi
	local bad=() line p
	while IFS= read -r line; do
		p=${line#*  }
		if [[ -f $d/new/$p ]] && cmp -s "$d/old/$p" "$d/new/$p"; then
			grep -qxF -- "$line" "$d/new/$f" || bad+=("line of unchanged $p rewritten")
		fi
	done <"$d/old/$f"
	[[ $(wc -l <"$d/old/$f") == "$(wc -l <"$d/new/$f")" ]] || bad+=("$(wc -l <"$d/old/$f") lines before, $(wc -l <"$d/new/$f") after")
	diff <(awk '{ print $2 }' "$d/old/$f") <(awk '{ print $2 }' "$d/new/$f") >/dev/null || bad+=("the list of paths changed")
	if ((${#bad[@]} == 0)); then
		tap_ok "[$name] $f: the same paths in the same order, lines of unchanged files as they were"
	else
		tap_notok "[$name] $f: the same paths in the same order, lines of unchanged files as they were" "${bad[@]:0:10}"
	fi
}

# describe_check NAME DIR IMG DESCRIBE: the image's .sha256/.sha512 verifies; .size = du
describe_check() {
	local name=$1 d=$2 img=$3 describe=$4 dir out rc=0
	[[ $describe == - ]] && return 0
	dir=$d/new$(dirname "$describe")
	case $describe in
	*.sha256 | *.sha512)
		local tool=sha256sum
		[[ $describe == *.sha512 ]] && tool=sha512sum
		out=$(cd "$dir" && "$tool" -c "$(basename "$describe")" 2>&1) || rc=$?
		local fmt
		fmt=$(awk '{ print $2 }' "$d/new$describe")
		if ((rc == 0)) && [[ $fmt == "$(basename "$img")" ]]; then
			tap_ok "[$name] $tool -c ${describe#/} (\"HASH  $fmt\")"
		else
			tap_notok "[$name] $tool -c ${describe#/} (\"HASH  $(basename "$img")\")" "$out" "file: $(head -c 200 "$d/new$describe")"
		fi
		;;
	*.size)
		local want got
		want=$(du -sx --block-size=1 "$d/nroot" | cut -f1)
		got=$(tr -d '\n' <"$d/new$describe")
		if [[ $got == "$want" ]]; then
			tap_ok "[$name] ${describe#/} = du -sx --block-size=1 of the new root ($want)"
		else
			tap_notok "[$name] ${describe#/} = du -sx --block-size=1 of the new root" \
				"file: '$got' (was '$(tr -d '\n' <"$d/old$describe")'); du of the new root unpacked in $TMPDIR: $want" \
				"du of the original root unpacked the same way: $(du -sx --block-size=1 "$d/oroot" | cut -f1); apparent size: $(du -sx --apparent-size --block-size=1 "$d/nroot" | cut -f1)"
		fi
		;;
	esac
}

sig_check() {
	local name=$1 sig=$2
	if grep -q -F "$sig" "$W/logs/$name.out" "$W/logs/$name.err"; then
		tap_ok "[$name] warns that $sig no longer matches"
		tap_diag "$name: $(grep -h -F "$sig" "$W/logs/$name.out" "$W/logs/$name.err" | head -n 1)"
	else
		tap_notok "[$name] warns that $sig no longer matches" "nothing about $sig on stdout or stderr"
	fi
}

# replay_check NAME IN OUT: same El Torito entries, MBR and GPT shape, label and UUID
replay_check() {
	local name=$1 in=$2 out=$3
	if diff <(eltorito_shape "$in") <(eltorito_shape "$out") >"$W/L/$name/eltorito.diff" && [[ -n $(eltorito_shape "$in") ]]; then
		tap_ok "[$name] boot setup replayed: $(eltorito_shape "$in" | awk -F' *: *' '$1 == "El Torito boot img" { split($2, f, / +/); printf "%s%s", s, f[2]; s = "+" } $1 == "System area summary" { sa = $2 } END { print " El Torito, " sa }')"
	else
		mapfile -t l < <(diag_file "$W/L/$name/eltorito.diff")
		tap_notok "[$name] boot setup replayed (xorriso -report_el_torito/-report_system_area; < IN, > OUT)" "${l[@]}"
	fi
	local a b
	a=$(blkid -p -o export -s LABEL -s UUID "$in" | grep -E '^(LABEL|UUID)=' | sort | tr '\n' ' ')
	b=$(blkid -p -o export -s LABEL -s UUID "$out" | grep -E '^(LABEL|UUID)=' | sort | tr '\n' ' ')
	if [[ $a == "$b" ]]; then
		tap_ok "[$name] volume label and UUID (date) kept: $a"
	else
		tap_notok "[$name] volume label and UUID (date) kept" "IN:  $a" "OUT: $b"
	fi
}

# ---- each layout --------------------------------------------------------------------------------
layout fedora /LiveOS/squashfs.img /LiveOS/squashfs.img.sha256 -
layout fedora41 /LiveOS/squashfs.img /LiveOS/squashfs.img.sha256 -
layout fedora-erofs /LiveOS/squashfs.img /LiveOS/squashfs.img.sha256 -
layout debian /live/filesystem.squashfs /live/filesystem.size -
layout ubuntu /casper/filesystem.squashfs /casper/filesystem.size filesystem.squashfs.gpg
layout ubuntu-layered /casper/minimal.standard.live.squashfs /casper/minimal.standard.live.size - --image --no-run
layout arch /arch/x86_64/airootfs.sfs /arch/x86_64/airootfs.sha512 airootfs.sfs.sig
layout arch-erofs /arch/x86_64/airootfs.erofs /arch/x86_64/airootfs.sha512 airootfs.erofs.cms.sig
layout arch2025 /arch/x86_64/airootfs.sfs /arch/x86_64/airootfs.sha512 airootfs.sfs.sig

# ---- --sort: the files' data in the sort file's order --------------------------------------------
# The fedora fixture's two files of more than a block: mksquashfs puts random.bin
# (first by name) before text.txt; a sort file giving text.txt priority puts it first.
# Small files named in it leave their fragments for data blocks in that order:
# etc/passwd, and an added odd[1]*.txt whose name is a glob that would also match
# its added neighbour odd1x.txt (which must stay in a fragment, as etc/group does).
sort_check() {
	local d=$W/L/sort img a b c f
	mkdir -p "$d/add/usr/share/fixture"
	echo odd >"$d/add/usr/share/fixture/odd[1]*.txt"
	echo neighbour >"$d/add/usr/share/fixture/odd1x.txt"
	printf '%s\n' 'usr/share/fixture/text.txt 10' 'usr/share/fixture/odd[1]*.txt 9' \
		'etc/passwd 8' 'usr/share/fixture/not-in-the-root 5' >"$d/order.sort"
	rm_run sort --add "$d/add" --sort "$d/order.sort" "$FX/fedora.iso" "$d/out.iso"
	if ((RC != 0)); then
		mapfile -t l < <(tail -n 5 "$W/logs/sort.err")
		tap_notok "[sort] remaster --sort (exit $RC)" "${l[@]}"
		return 0
	fi
	tap_ok "[sort] remaster --sort (a sort file with a path the root lacks)"
	img=$d/img
	xorriso -osirrox on -indev "$d/out.iso" -extract /LiveOS/squashfs.img "$img" >/dev/null 2>&1
	a=$(rdsquashfs -s /usr/share/fixture/text.txt "$img" | awk '/^Blocks start:/ { print $3 }')
	b=$(rdsquashfs -s /usr/share/fixture/random.bin "$img" | awk '/^Blocks start:/ { print $3 }')
	if [[ -n $a && -n $b ]] && ((a < b)); then
		tap_ok "[sort] text.txt's data is now before random.bin's (blocks start at $a and $b)"
	else
		tap_notok "[sort] text.txt's data is now before random.bin's" "text.txt at '$a', random.bin at '$b' (rdsquashfs -s)"
	fi
	c=$(rdsquashfs -s /etc/passwd "$img" | awk '/^Blocks start:/ { print $3 }')
	f=$(for p in /etc/passwd '/usr/share/fixture/odd[1]*.txt' /etc/group /usr/share/fixture/odd1x.txt; do
		rdsquashfs -s "$p" "$img" | awk '/^Fragment index:/ { printf "%s ", ($3 == "0xFFFFFFFF" ? "none" : "yes") }'
	done)
	if [[ $f == "none none yes yes " && -n $c ]] && ((a < c && c < b)); then
		tap_ok "[sort] the small files named leave their fragments, and their data is in order (passwd at $c); the others keep theirs"
	else
		tap_notok "[sort] the small files named leave their fragments, and their data is in order" \
			"fragment? passwd, odd[1]*.txt, group, odd1x.txt: '$f' (want none none yes yes); passwd's data at '$c', want between $a and $b"
	fi
	if grep -q "3 of its 4 paths are in the root" "$W/logs/sort.out"; then
		tap_ok "[sort] the path the root lacks is dropped, and said so"
	else
		tap_notok "[sort] the path the root lacks is dropped, and said so" "$(grep -i sort "$W/logs/sort.out" | head -n 2)"
	fi
	# beside the image: where the sorted files' data ends (passwd's, the last of them)
	local pf end
	pf=$(xorriso -osirrox on -indev "$d/out.iso" -extract /LiveOS/squashfs.img.prefetch "$d/prefetch" >/dev/null 2>&1 && cat "$d/prefetch") || pf=
	end=$(rdsquashfs -s /etc/passwd "$img" | awk '/^Blocks start:/ { s = $3 } /^\tBlock #0 size:/ { n = $4 } END { print s + n }')
	if [[ $pf == "$end" ]] && ((end > c && end <= b)); then
		tap_ok "[sort] LiveOS/squashfs.img.prefetch holds where the sorted files' data ends ($pf, passwd's end)"
	else
		tap_notok "[sort] LiveOS/squashfs.img.prefetch holds where the sorted files' data ends" "it holds '$pf', passwd's data ends at '$end'"
	fi
	# a repack of that ISO not in boot order sets it to 0
	mkdir -p "$d/add2"
	echo later >"$d/add2/later.txt"
	rm_run sort-repack --add "$d/add2" "$d/out.iso" "$d/out2.iso"
	pf=$(xorriso -osirrox on -indev "$d/out2.iso" -extract /LiveOS/squashfs.img.prefetch "$d/prefetch2" >/dev/null 2>&1 && cat "$d/prefetch2") || pf=
	if ((RC == 0)) && [[ $pf == 0 ]]; then
		tap_ok "[sort] a repack without --sort sets LiveOS/squashfs.img.prefetch to 0"
	else
		tap_notok "[sort] a repack without --sort sets LiveOS/squashfs.img.prefetch to 0" "exit $RC, it holds '$pf'"
	fi
}
sort_check

# ---- bad inputs -------------------------------------------------------------------------------------
# bad NAME RC PHRASES IN OUT [OPTIONS] -- REMASTER-ARGS...
#   PHRASES  alternatives separated by "|", one must be on stderr
#   options: --tmp DIR (TMPDIR), --nobody, --out-kept (OUT exists and must stay as it is),
#            --also STRING (must be on stderr too), --not-run FILE (must not exist after)
bad() {
	local name=$1 want_rc=$2 phrases=$3 in=$4 out=$5
	shift 5
	local tmp=$W/bad/$name/tmp nobody=0 out_kept=0 notrun="" t0
	local -a also=() pre=()
	while [[ $1 != -- ]]; do
		case $1 in
		--tmp) tmp=$2 && shift ;;
		--nobody) nobody=1 ;;
		--out-kept) out_kept=1 ;;
		--also) also+=("$2") && shift ;;
		--not-run) notrun=$2 && shift ;;
		esac
		shift
	done
	shift
	mkdir -p "$tmp"
	((nobody)) && pre=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	local outdir in_sha out_sha="" listing
	outdir=$(dirname "$out")
	in_sha=$(sha "$in" 2>/dev/null || echo none)
	[[ -f $out ]] && out_sha=$(sha "$out")
	listing=$(ls -A "$outdir")
	t0=$(ls_now)
	local rc=0
	TMPDIR=$tmp timeout 300 "${pre[@]}" env TMPDIR="$tmp" bash "$REMASTER" "$@" \
		>"$W/logs/bad-$name.out" 2>"$W/logs/bad-$name.err" </dev/null || rc=$?
	bad_verdict "$name" "$want_rc" "$rc" "$phrases" "$in" "$in_sha" "$out" "$out_sha" "$out_kept" "$outdir" "$listing" "$tmp" "$notrun" "$(ls_elapsed "$t0" "$(ls_now)")" "${also[@]}"
}

# bad_verdict: the two TAP lines of a bad input
bad_verdict() {
	local name=$1 want_rc=$2 rc=$3 phrases=$4 in=$5 in_sha=$6 out=$7 out_sha=$8 out_kept=$9
	local outdir=${10} listing=${11} tmp=${12} notrun=${13} secs=${14}
	shift 14
	local err=$W/logs/bad-$name.err p found=0 problems=()
	IFS='|' read -ra alts <<<"$phrases"
	for p in "${alts[@]}"; do
		grep -q -F -- "$p" "$err" && found=1
	done
	((rc == want_rc)) || problems+=("exit status $rc, expected $want_rc")
	((found)) || problems+=("stderr lacks '$phrases'")
	for p in "$@"; do
		grep -q -F -- "$p" "$err" || problems+=("stderr lacks '$p'")
	done
	[[ $(nlines "$err") == 1 ]] || problems+=("stderr has $(nlines "$err") lines")
	if ((${#problems[@]} == 0)); then
		tap_ok "[bad:$name] exit $want_rc, one stderr line with '${alts[0]}'"
		tap_diag "bad:$name ($secs s): $(head -c 300 "$err")"
	else
		mapfile -t l < <(head -n 6 "$err" | sed 's/^/stderr: /'; tail -n 3 "$W/logs/bad-$name.out" | sed 's/^/stdout: /')
		tap_notok "[bad:$name] exit $want_rc, one stderr line with '${alts[0]}'" "${problems[@]}" "${l[@]}"
	fi
	problems=()
	[[ $(sha "$in" 2>/dev/null || echo none) == "$in_sha" ]] || problems+=("IN changed")
	if ((out_kept)); then
		[[ -f $out && $(sha "$out") == "$out_sha" ]] || problems+=("OUT changed")
	else
		[[ ! -e $out ]] || problems+=("OUT exists")
	fi
	[[ $(ls -A "$outdir") == "$listing" ]] ||
		problems+=("OUT's folder changed: $({ diff <(printf '%s\n' "$listing") <(ls -A "$outdir") || true; } | grep '^[<>]' | tr '\n' ' ')")
	local left
	left=$(find "$tmp" -mindepth 1 -maxdepth 1 2>/dev/null | head -n 5 | tr '\n' ' ')
	[[ -z $left ]] || problems+=("left in TMPDIR: $left")
	# (only under our folders: other remasters may be running on this host)
	left=$(findmnt -rn -o TARGET | awk -v t="$tmp/" -v w="$W/" 'index($0, t) == 1 || index($0, w) == 1 && /livesquash-remaster/' | head -n 5 | tr '\n' ' ')
	[[ -z $left ]] || problems+=("mounts left: $left")
	[[ -z $notrun || ! -e $notrun ]] || problems+=("the --run command ran on the host: $notrun exists")
	if ((${#problems[@]} == 0)); then
		tap_ok "[bad:$name] IN unchanged, no OUT, nothing left in OUT's folder or TMPDIR, no mount left"
	else
		tap_notok "[bad:$name] IN unchanged, no OUT, nothing left in OUT's folder or TMPDIR, no mount left" "${problems[@]}"
	fi
}

B=$W/bad
mkdir -p "$B/out"
BO=$B/out/out.iso
rc=0
bash "$REMASTER" --add "$ADD" "$FX/fedora.iso" >"$W/logs/bad-usage.out" 2>"$W/logs/bad-usage.err" </dev/null || rc=$?
if ((rc == 2)) && [[ -s $W/logs/bad-usage.err && -z $(ls -A "$B/out") ]]; then
	tap_ok "[bad:usage] one file argument: exit 2, usage on stderr, nothing written"
else
	mapfile -t l < <(head -n 3 "$W/logs/bad-usage.err")
	tap_notok "[bad:usage] one file argument: exit 2, usage on stderr, nothing written (exit $rc)" "${l[@]}"
fi
bad not-an-iso 1 "not an ISO 9660 image" "$FX/not-an-iso.iso" "$BO" -- --add "$ADD" "$FX/not-an-iso.iso" "$BO"
bad no-image 1 "no root image found" "$FX/no-image.iso" "$BO" --also squashfs.img -- --add "$ADD" "$FX/no-image.iso" "$BO"
bad two-images 1 "several root images" "$FX/two-images.iso" "$BO" --also "use --image" --also LiveOS/squashfs.img \
	--also live/filesystem.squashfs -- --add "$ADD" "$FX/two-images.iso" "$BO"
bad layers-without-image 1 "several root images" "$FX/ubuntu-layered.iso" "$BO" --also "use --image" \
	-- --add "$ADD" "$FX/ubuntu-layered.iso" "$BO"
# without erofs-utils 1.8 (the host's is 1.5, and no build/trixie/erofs): 1.5 cannot
# unpack xattrs, so iso/remaster refuses, and says how to get 1.8
LS_EROFS_UTILS=/nonexistent bad erofs-selinux 1 "xattrs|make erofs-utils" "$FX/fedora-erofs-selinux.iso" "$BO" \
	-- --add "$ADD" "$FX/fedora-erofs-selinux.iso" "$BO"
LS_EROFS_UTILS=/nonexistent bad erofs-xattrs 1 "xattrs" "$FX/fedora-erofs-xattrs.iso" "$BO" \
	-- --add "$ADD" "$FX/fedora-erofs-xattrs.iso" "$BO" # the same for xattrs on a few files only
bad sort-missing 1 "--sort $W/nosuch.sort: no such file" "$FX/fedora.iso" "$BO" \
	-- --sort "$W/nosuch.sort" "$FX/fedora.iso" "$BO"
bad sort-erofs 1 "mkfs.erofs has no file order" "$FX/fedora-erofs.iso" "$BO" \
	-- --sort "$W/L/sort/order.sort" "$FX/fedora-erofs.iso" "$BO"
bad image-missing 1 "no such file in the ISO" "$FX/fedora.iso" "$BO" \
	-- --image /LiveOS/nosuch.img --add "$ADD" "$FX/fedora.iso" "$BO"

# not root: a world-readable copy, folders nobody may write to
mkdir -p "$B/nobody" "$B/nobody-out" "$B/nobody-tmp"
cp "$FX/fedora.iso" "$B/nobody/in.iso"
chmod 0755 "$B" "$B/nobody"
chmod 0644 "$B/nobody/in.iso"
chmod 1777 "$B/nobody-out" "$B/nobody-tmp"
NADD=$B/nobody-add
mkdir -p "$NADD/etc"
echo x >"$NADD/etc/x"
chmod -R a+rX "$NADD"
bad not-root 1 "must run as root" "$B/nobody/in.iso" "$B/nobody-out/out.iso" --nobody --tmp "$B/nobody-tmp" \
	-- --add "$NADD" "$B/nobody/in.iso" "$B/nobody-out/out.iso"
rc=0
setpriv --reuid=nobody --regid=nogroup --clear-groups env TMPDIR="$B/nobody-tmp" timeout 300 bash "$REMASTER" \
	--cmdline-add "$CMD_ADD" "$B/nobody/in.iso" "$B/nobody-out/cmdline.iso" >"$W/logs/nobody-cmdline.out" 2>&1 </dev/null || rc=$?
if ((rc == 0)) && [[ -s $B/nobody-out/cmdline.iso ]]; then
	tap_ok "[nobody] --cmdline-add alone works without root (the image is not unpacked)"
else
	mapfile -t l < <(tail -n 5 "$W/logs/nobody-cmdline.out")
	tap_notok "[nobody] --cmdline-add alone works without root (the image is not unpacked) (exit $rc)" "${l[@]}"
fi

# OUT = IN, OUT exists
mkdir -p "$B/same"
cp "$FX/fedora.iso" "$B/same/in.iso"
bad out-is-in 1 "OUT.iso must not be IN.iso" "$B/same/in.iso" "$B/same/in.iso" --out-kept \
	-- --force --cmdline-add "$CMD_ADD" "$B/same/in.iso" "$B/same/./in.iso"
mkdir -p "$B/exists"
echo "precious" >"$B/exists/out.iso"
bad out-exists 1 "exists (use --force" "$FX/fedora.iso" "$B/exists/out.iso" --out-kept \
	-- --add "$ADD" "$FX/fedora.iso" "$B/exists/out.iso"

# --run failing, --run without a shell (never on the host)
bad run-fails 1 "--run command failed (exit 3)" "$FX/fedora.iso" "$BO" -- --run 'exit 3' "$FX/fedora.iso" "$BO"
bad run-no-shell 1 "has no usable /bin/sh" "$FX/nosh.iso" "$BO" --not-run "$W/host-ran" \
	-- --run "echo ran > $W/host-ran" "$FX/nosh.iso" "$BO"

# full folders: small tmpfs sized from the space fixture (~1.4 MB image, ~42 MB unpacked)
tmpfs() { # DIR MiB-or-KiB-size
	mkdir -p "$1"
	mount -t tmpfs -o "size=$2,mode=1777" tmpfs "$1"
	our_mounts+=("$1")
}
untmpfs() { umount "$1" && rmdir "$1"; }
xorriso -osirrox on -indev "$FX/space.iso" -extract /LiveOS/squashfs.img "$W/space.img" >/dev/null 2>&1
img_kib=$(($(stat -c %s "$W/space.img") / 1024))
tree_kib=$(unsquashfs -lln "$W/space.img" | awk '{ s += $3 } END { printf "%d", s / 1024 }')
rm -f "$W/space.img"
tap_diag "space fixture: image $img_kib KiB, tree $tree_kib KiB"
RANDOM30=$B/random30
mkdir -p "$RANDOM30/usr/share"
head -c $((30 * 1048576)) /dev/urandom >"$RANDOM30/usr/share/random30.bin"

tmpfs "$B/full-extract" "$((img_kib / 2))k"
bad full-tmp-extract 1 "not enough space for extracting the root image in $B/full-extract|is full while extracting the root image" \
	"$FX/space.iso" "$BO" --tmp "$B/full-extract" -- --add "$ADD" "$FX/space.iso" "$BO"
untmpfs "$B/full-extract"
tmpfs "$B/full-unpack" "$((img_kib + 24 * 1024))k" # room for the image and a margin, not for the tree
bad full-tmp-unpack 1 "not enough space for unpacking the root image in $B/full-unpack|is full while unpacking the root image" \
	"$FX/space.iso" "$BO" --tmp "$B/full-unpack" -- --add "$ADD" "$FX/space.iso" "$BO"
untmpfs "$B/full-unpack"
tmpfs "$B/full-repack" "$((img_kib + tree_kib + 30 * 1024 + 16 * 1024))k"
bad full-tmp-repack 1 "not enough space for repacking the root image in $B/full-repack|is full while repacking the root image" \
	"$FX/space.iso" "$BO" --tmp "$B/full-repack" -- --add "$ADD" --add "$RANDOM30" "$FX/space.iso" "$BO"
untmpfs "$B/full-repack"
tmpfs "$B/full-out" 1m
bad full-out 1 "not enough space for writing the ISO in $B/full-out|is full while writing the ISO" \
	"$FX/fedora.iso" "$B/full-out/out.iso" --tmp "$B/full-out-tmp" -- --cmdline-add "$CMD_ADD" "$FX/fedora.iso" "$B/full-out/out.iso"
untmpfs "$B/full-out"
# a --cmdline-only remaster copies the EFI FAT image (2 MiB) to TMPDIR to edit it
tmpfs "$B/full-tmp-cmdline" 1m
bad full-tmp-cmdline 1 "not enough space for |is full while " \
	"$FX/fedora.iso" "$BO" --tmp "$B/full-tmp-cmdline" -- --cmdline-add "$CMD_ADD" "$FX/fedora.iso" "$BO"
untmpfs "$B/full-tmp-cmdline"

# Ctrl-C: SIGINT to the remaster's process group, as a terminal sends it
# interrupt NAME WHEN -- ARGS...: WHEN mksquashfs (a mksquashfs child runs) or run (the --run
# command, which names livesquash-ctrl-c-PID, runs in its container)
interrupt() {
	local name=$1 when=$2 tmp=$B/$1/tmp out=$B/$1/out/out.iso in_sha listing t0 i seen=0 rc=0 pgid
	shift 3
	mkdir -p "$tmp" "$(dirname "$out")"
	in_sha=$(sha "$FX/fedora.iso")
	listing=$(ls -A "$(dirname "$out")")
	t0=$(ls_now)
	# a background job of a script starts with SIGINT ignored, which bash cannot trap:
	# give it the default disposition a terminal's foreground job has
	TMPDIR=$tmp setsid env --default-signal=INT bash "$REMASTER" "$@" "$FX/fedora.iso" "$out" \
		>"$W/logs/bad-$name.out" 2>"$W/logs/bad-$name.err" </dev/null &
	bg_pid=$!
	# signal only a group of its own: wait until setsid has made one
	for ((i = 0; i < 100; i++)); do
		pgid=$(ps -o pgid= -p "$bg_pid" | tr -d ' ')
		[[ $pgid == "$bg_pid" ]] && break
		sleep 0.05
	done
	if [[ $pgid != "$bg_pid" ]]; then
		wait "$bg_pid" || true
		bg_pid=
		tap_notok "[bad:$name] the remaster runs in a process group of its own (setsid)" "pgid '$pgid'"
		return 0
	fi
	for ((i = 0; i < 1200; i++)); do
		case $when in
		mksquashfs) pgrep -g "$pgid" -x mksquashfs >/dev/null && seen=1 ;;
		run) pgrep -f "livesquash-ctrl-c-$$" >/dev/null && seen=1 ;;
		esac
		((seen)) && break
		kill -0 "$bg_pid" 2>/dev/null || break
		sleep 0.1
	done
	if ((seen)); then
		sleep 0.5
		kill -INT -- "-$pgid" 2>/dev/null || true
	fi
	for ((i = 0; i < 600; i++)); do
		kill -0 "$bg_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$bg_pid" 2>/dev/null; then
		kill -KILL -- "-$pgid" 2>/dev/null || true
		echo "(still running 60 s after SIGINT: killed)" >>"$W/logs/bad-$name.err"
	fi
	wait "$bg_pid" || rc=$?
	bg_pid=
	if ((!seen)); then
		tap_notok "[bad:$name] SIGINT while $when runs" "never saw $when (exit $rc)" "$(tail -n 3 "$W/logs/bad-$name.err")"
		return 0
	fi
	bad_verdict "$name" 130 "$rc" "interrupted" "$FX/fedora.iso" "$in_sha" "$out" "" 0 "$(dirname "$out")" "$listing" "$tmp" "" "$(ls_elapsed "$t0" "$(ls_now)")"
	if [[ $when == run ]]; then
		sleep 1
		tap_test "[bad:$name] no process of the --run command is left" not_running "livesquash-ctrl-c-$$"
	fi
}
not_running() { # PATTERN: no process's command line has it
	! pgrep -af "$1"
}
interrupt ctrl-c-repack mksquashfs -- --add "$RANDOM30" --run true
interrupt ctrl-c-run run -- --run "sleep 30 # livesquash-ctrl-c-$$"

# ---- the kernel's own separators and GRUB's quoting (issue 27) ---------------------
# Linux Mint's menu lines end in "quiet splash --": what follows "--" goes to init,
# so added words must go before it (and before Debian's "---"); a word with ";" must
# be quoted on a GRUB line, or GRUB ends the command there and runs the rest
M=$W/mint
rm -rf "$M"
mkdir -p "$M/tree/boot/grub" "$M/tree/isolinux" "$M/tree/casper"
# shellcheck disable=SC2016 # ${iso_path} is GRUB's
printf 'menuentry "Start Linux Mint" {\n\tlinux\t/casper/vmlinuz file=/cdrom/preseed/linuxmint.seed boot=casper iso-scan/filename=${iso_path} quiet splash --\n\tinitrd\t/casper/initrd.lz\n}\nmenuentry "Install" {\n\tlinux /casper/vmlinuz boot=casper quiet --- keep=1\n}\n' >"$M/tree/boot/grub/grub.cfg"
printf 'label live\n  kernel /casper/vmlinuz\n  append boot=casper initrd=/casper/initrd.lz quiet splash --\n' >"$M/tree/isolinux/isolinux.cfg"
echo kernel >"$M/tree/casper/vmlinuz"
xorriso -as mkisofs -V MINT -o "$M/in.iso" "$M/tree" >"$M/mkiso.log" 2>&1
rm_run mint-sep --cmdline-add "console=ttyS0 a;b it's" --cmdline-remove splash "$M/in.iso" "$M/out.iso"
if ((RC == 0)); then
	xorriso -osirrox on -indev "$M/out.iso" -extract /boot/grub/grub.cfg "$M/grub.cfg" \
		-extract /isolinux/isolinux.cfg "$M/isolinux.cfg" >/dev/null 2>&1
	# shellcheck disable=SC2016 # ${iso_path} is GRUB's
	want=$'\tlinux\t/casper/vmlinuz file=/cdrom/preseed/linuxmint.seed boot=casper iso-scan/filename=${iso_path} quiet console=ttyS0 \'a;b\' \'it\'\\\'\'s\' --'
	tap_test "[mint] --cmdline-add on a GRUB line ending in '--': the words go before it, 'a;b' and it's quoted for GRUB" \
		grep -qxF -- "$want" "$M/grub.cfg"
	tap_test "[mint] --cmdline-add before Debian's '---' too, the words after it kept" \
		grep -qxF -- $'\tlinux /casper/vmlinuz boot=casper quiet console=ttyS0 \'a;b\' \'it\'\\\'\'s\' --- keep=1' "$M/grub.cfg"
	tap_test "[mint] the edited grub.cfg is valid GRUB script (grub-script-check)" grub-script-check "$M/grub.cfg"
	tap_test "[mint] isolinux's append line: before '--', unquoted (isolinux takes the line as it is)" \
		grep -qxF -- "  append boot=casper initrd=/casper/initrd.lz quiet console=ttyS0 a;b it's --" "$M/isolinux.cfg"
else
	tap_notok "[mint] remaster --cmdline-add on a menu whose lines end in '--' (exit $RC)" "$(tail -n 3 "$W/logs/mint-sep.err")"
fi

# ---- kiwi's menus (Fedora 42): "$linux ($root)/boot/x86_64/loader/linux ...", the
# command a variable (linux, or linuxefi on UEFI)
K=$W/kiwi
rm -rf "$K"
mkdir -p "$K/tree/boot/grub2" "$K/tree/boot/x86_64/loader"
# shellcheck disable=SC2016 # $linux, ${grub_platform} ... are GRUB's
printf '%s\n' 'set linux=linux' 'set initrd=initrd' 'if [ "${grub_platform}" = "efi" ]; then' '    set linux=linuxefi' '    set initrd=initrdefi' 'fi' \
	'menuentry "Start Fedora-Workstation-Live 42" --class fedora --class gnu-linux {' '    set gfxpayload=keep' \
	'    $linux ($root)/boot/x86_64/loader/linux root=live:CDLABEL=Fedora-WS-Live-42-1-1 rd.live.image rhgb quiet' \
	'    $initrd ($root)/boot/x86_64/loader/initrd' '}' \
	'menuentry "Test this media" {' '    ${linux} ($root)/boot/x86_64/loader/linux root=live:CDLABEL=Fedora-WS-Live-42-1-1 rd.live.check quiet' \
	'    ${initrd} ($root)/boot/x86_64/loader/initrd' '}' >"$K/tree/boot/grub2/grub.cfg"
echo kernel >"$K/tree/boot/x86_64/loader/linux"
xorriso -as mkisofs -V Fedora-WS-Live-42-1-1 -o "$K/in.iso" "$K/tree" >"$K/mkiso.log" 2>&1
rm_run kiwi --cmdline-add "console=ttyS0" --cmdline-remove "rhgb quiet" --volid FEDORA-REMASTERED "$K/in.iso" "$K/out.iso"
kiwi_check() {
	[[ $RC == 0 ]] || { tail -n 3 "$W/logs/kiwi.err"; return 1; }
	xorriso -osirrox on -indev "$K/out.iso" -extract /boot/grub2/grub.cfg "$K/grub.cfg" >/dev/null 2>&1
	# shellcheck disable=SC2016
	if ! { grep -qxF '    $linux ($root)/boot/x86_64/loader/linux root=live:CDLABEL=FEDORA-REMASTERED rd.live.image console=ttyS0' "$K/grub.cfg" &&
		grep -qxF '    ${linux} ($root)/boot/x86_64/loader/linux root=live:CDLABEL=FEDORA-REMASTERED rd.live.check console=ttyS0' "$K/grub.cfg" &&
		grep -qxF '    $initrd ($root)/boot/x86_64/loader/initrd' "$K/grub.cfg" &&
		grep -qxF '    set linux=linuxefi' "$K/grub.cfg" && grub-script-check "$K/grub.cfg"; }; then
		cat "$K/grub.cfg"
		return 1
	fi
}
tap_test "[kiwi] --cmdline-add/-remove and --volid on kiwi's \$linux and \${linux} lines (Fedora 42); \$initrd and the rest as they were, valid GRUB script" kiwi_check

# ---- Fedora's SELinux labels (issue 27): files added or made by --run get the labels
# of the root's own file_contexts (setfiles, as lorax does after changes), not none
SE=$W/selinux
rm -rf "$SE"
mkdir -p "$SE/tree/LiveOS" "$SE/add/opt/livesquash" "$SE/add/etc"
xorriso -osirrox on -indev "$FX/fedora.iso" -extract /LiveOS/squashfs.img "$SE/orig.img" >/dev/null 2>&1
unsquashfs -q -n -d "$SE/root" "$SE/orig.img" >/dev/null
fcdir=$SE/root/etc/selinux/targeted/contexts/files
mkdir -p "$fcdir"
printf 'SELINUX=enforcing\nSELINUXTYPE=targeted\n' >"$SE/root/etc/selinux/config"
printf '%s\t%s\n' '/.*' system_u:object_r:default_t:s0 '/' system_u:object_r:root_t:s0 \
	'/etc(/.*)?' system_u:object_r:etc_t:s0 '/bin(/.*)?' system_u:object_r:bin_t:s0 \
	'/usr(/.*)?' system_u:object_r:usr_t:s0 '/opt/livesquash(/.*)?' system_u:object_r:usr_t:s0 \
	'/etc/livesquash-added' system_u:object_r:etc_runtime_t:s0 >"$fcdir/file_contexts"
echo 'not a compiled file_contexts' >"$fcdir/file_contexts.bin" # a newer format than the host's
setfiles -r "$SE/root" "$fcdir/file_contexts" "$SE/root" >"$SE/label.log" 2>&1
mksquashfs "$SE/root" "$SE/tree/LiveOS/squashfs.img" -comp xz -noappend -quiet >"$SE/mksquashfs.log" 2>&1
xorriso -as mkisofs -R -V SELINUX -o "$SE/in.iso" "$SE/tree" >"$SE/mkiso.log" 2>&1
echo tool >"$SE/add/opt/livesquash/tool"
echo added >"$SE/add/etc/livesquash-added"
rm_run selinux --add "$SE/add" --run 'echo made >/etc/run-made' "$SE/in.iso" "$SE/out.iso"
label_of() { getfattr -h --absolute-names -n security.selinux --only-values -- "$1" 2>/dev/null | tr -d '\0'; }
selinux_check() {
	local r=$SE/new rc=0 p want got
	[[ $RC == 0 ]] || { tail -n 3 "$W/logs/selinux.err"; return 1; }
	xorriso -osirrox on -indev "$SE/out.iso" -extract /LiveOS/squashfs.img "$SE/new.img" >/dev/null 2>&1
	unpack "$SE/new.img" "$r" || { cat "$r.log"; return 1; }
	for p in /opt/livesquash/tool:usr_t /opt/livesquash:usr_t /etc/livesquash-added:etc_runtime_t /etc/run-made:etc_t \
		/bin/busybox:bin_t /:root_t; do
		want=system_u:object_r:${p#*:}:s0
		got=$(label_of "$r${p%%:*}")
		[[ $got == "$want" ]] || { echo "${p%%:*}: '${got:-no label}', not $want"; rc=1; }
	done
	grep -q 'labelling the root for SELinux again' "$W/logs/selinux.out" || { echo "the remaster did not say it relabelled"; rc=1; }
	return "$rc"
}
tap_test "[selinux] a root labelled for SELinux: the files --add put there and --run made get their file_contexts labels (usr_t, etc_runtime_t, etc_t), the others keep theirs" selinux_check

# ---- a root image that is only a nested ext4 image: refused, with the right words
N=$W/nested
rm -rf "$N"
mkdir -p "$N/root/LiveOS" "$N/tree/LiveOS"
head -c 65536 /dev/zero >"$N/root/LiveOS/rootfs.img"
mksquashfs "$N/root" "$N/tree/LiveOS/squashfs.img" -noappend -quiet >/dev/null 2>&1
xorriso -as mkisofs -V NESTED -o "$N/in.iso" "$N/tree" >"$N/mkiso.log" 2>&1
rm_run nested --add "$ADD" "$N/in.iso" "$N/out.iso"
nested_refused() {
	cat "$W/logs/nested.err"
	((RC != 0)) && [[ ! -e $N/out.iso ]] && grep -q 'LiveOS/rootfs.img.*up to Fedora 40' "$W/logs/nested.err"
}
tap_test "[nested] a squashfs holding only LiveOS/rootfs.img is refused, naming the layout (livemedia-creator, Fedora up to 40), no OUT" \
	nested_refused

# ---- --volid and --iso-add (issue 27) -------------------------------------------------
V=$W/volid
rm -rf "$V"
mkdir -p "$V/nocloud/sub" "$V/out"
printf '#cloud-config\nautoinstall:\n  version: 1\n' >"$V/nocloud/user-data"
: >"$V/nocloud/meta-data"
echo nested >"$V/nocloud/sub/file"
printf 'd-i debian-installer/locale string en_US\n' >"$V/preseed.cfg"
rm_run volid --volid NEW_LABEL.2 --iso-add "$V/nocloud:/nocloud" --iso-add "$V/preseed.cfg:/preseed/x.cfg" \
	"$FX/fedora.iso" "$V/out/fedora.iso"
# volid_check: the label, every boot config that named the old one names the new
# one (ISO files and the EFI FAT image's), the added files, the root image as it was
volid_check() {
	local d=$V/x rc=0 f
	[[ $RC == 0 ]] || { cat "$W/logs/volid.err"; return 1; }
	echo "label: $(blkid -o value -s LABEL "$V/out/fedora.iso")"
	[[ $(blkid -o value -s LABEL "$V/out/fedora.iso") == NEW_LABEL.2 ]] || rc=1
	iso_extract "$V/out/fedora.iso" "$d"
	for f in boot/grub2/grub.cfg EFI/BOOT/grub.cfg isolinux/isolinux.cfg; do
		grep -q 'CDLABEL=NEW_LABEL\.2' "$d/$f" || { echo "$f: no CDLABEL=NEW_LABEL.2"; rc=1; }
		! grep -qw FIXTURE "$d/$f" || { echo "$f still names FIXTURE"; rc=1; }
	done
	grep -q "search --no-floppy --set=root -l 'NEW_LABEL.2'" "$d/boot/grub2/grub.cfg" || { echo "no search -l NEW_LABEL.2"; rc=1; }
	MTOOLS_SKIP_CHECK=1 mtype -i "$d/images/efiboot.img" ::/EFI/BOOT/grub.cfg | grep -q 'CDLABEL=NEW_LABEL\.2' ||
		{ echo "efiboot.img's grub.cfg: no CDLABEL=NEW_LABEL.2"; rc=1; }
	cmp "$d/nocloud/user-data" "$V/nocloud/user-data" && cmp "$d/nocloud/sub/file" "$V/nocloud/sub/file" &&
		cmp "$d/preseed/x.cfg" "$V/preseed.cfg" || rc=1
	rm -f "$V/orig.img"
	xorriso -osirrox on -indev "$FX/fedora.iso" -extract /LiveOS/squashfs.img "$V/orig.img" >/dev/null 2>&1
	cmp "$d/LiveOS/squashfs.img" "$V/orig.img" || { echo "the root image changed"; rc=1; }
	checkisomd5 "$V/out/fedora.iso" >/dev/null || { echo "checkisomd5 fails"; rc=1; }
	return "$rc"
}
tap_test "[volid] --volid NEW_LABEL.2 --iso-add (a folder, a file) on the Fedora layout: the label, CDLABEL= and search -l in every GRUB/isolinux config and the EFI image's, the added files, the root image as it was, the MD5 implanted" \
	volid_check
# a replaced file listed in md5sum.txt gets its line made anew
printf 'set timeout=1\n' >"$V/config.cfg"
rm_run isoadd-replace --iso-add "$V/config.cfg:/boot/grub/config.cfg" "$FX/debian.iso" "$V/out/debian.iso"
isoadd_replaced() {
	local d=$V/y
	[[ $RC == 0 ]] || { cat "$W/logs/isoadd-replace.err"; return 1; }
	iso_extract "$V/out/debian.iso" "$d"
	cmp "$d/boot/grub/config.cfg" "$V/config.cfg" &&
		grep -qxF "$(md5sum <"$V/config.cfg" | cut -c1-32)  ./boot/grub/config.cfg" "$d/md5sum.txt" &&
		grep -q 'replaced' "$W/logs/isoadd-replace.out"
}
tap_test "[iso-add] --iso-add over a file of the Debian layout replaces it, and md5sum.txt has its new line" isoadd_replaced
bad volid-blank 1 "--volid 'A B': 1-32 characters" "$FX/fedora.iso" "$V/out/bad.iso" -- --volid 'A B' "$FX/fedora.iso" "$V/out/bad.iso"
bad isoadd-nosrc 1 "is not a readable file or folder" "$FX/fedora.iso" "$V/out/bad.iso" -- --iso-add "$V/nosuch:/x" "$FX/fedora.iso" "$V/out/bad.iso"
bad isoadd-relative 1 "give SRC:DEST, DEST an absolute path" "$FX/fedora.iso" "$V/out/bad.iso" -- --iso-add "$V/preseed.cfg:x.cfg" "$FX/fedora.iso" "$V/out/bad.iso"
bad isoadd-dotdot 1 "is not a plain absolute path" "$FX/fedora.iso" "$V/out/bad.iso" -- --iso-add "$V/preseed.cfg:/a/../x.cfg" "$FX/fedora.iso" "$V/out/bad.iso"

# ---- kernel and initrd refresh (issue 27): a --run/--add that changes the root's kernel
# or initramfs setup gets the initrd made anew in the container by the distribution's
# tool and both copied to the ISO's boot paths. The tools here are stand-ins (shell
# scripts named as Debian's and Fedora's, which these busybox roots lack) that write an
# "initrd" naming their arguments; check-livebuild runs Debian's real update-initramfs
R=$W/refresh
rm -rf "$R"
KV=6.1.0-99-amd64
# refresh_case NAME ISO TOOL-PATH KERNEL-ISO-PATHS INITRD-ISO-PATHS WANT-ARGS
refresh_case() {
	local name=$1 iso=$2 tool=$3 kpaths=$4 ipaths=$5 want=$6 a=$R/$1/add p
	mkdir -p "$a/usr/lib/modules/$KV" "$a/boot" "$a/${tool%/*}" "$a/usr/lib/dracut/modules.d/90dmsquash-live" "$R/$name/x"
	echo "modules of $KV" >"$a/usr/lib/modules/$KV/modules.order"
	echo "the new kernel $KV" >"$a/boot/vmlinuz-$KV"
	# shellcheck disable=SC2016 # the stand-in's own variables
	printf '%s\n' '#!/bin/sh' '# a stand-in for the distribution'"'"'s initramfs tool (remaster host test)' \
		'args="$*" k= out=' 'while [ $# -gt 0 ]; do case $1 in -k|--kver) k=$2; shift ;; -g) out=$2; shift ;; -*) ;; *) out=$1 ;; esac; shift; done' \
		'[ -n "$out" ] || out=/boot/initrd.img-$k' \
		'echo "initrd for $k by ${0##*/} $args; pid 1 is $(cat /proc/1/comm)" >"$out"' \
		'if [ -f /usr/lib/initcpio/pad ]; then cat /usr/lib/initcpio/pad >>"$out"; fi' >"$a/$tool"
	chmod 0755 "$a/$tool"
	rm_run "refresh-$name" --add "$a" "$iso" "$R/$name/out.iso"
	refresh_check() {
		[[ $RC == 0 ]] || { tail -n 3 "$W/logs/refresh-$name.err"; return 1; }
		local rc=0 got
		for p in $kpaths; do
			xorriso -osirrox on -indev "$R/$name/out.iso" -extract "$p" "$R/$name/x/k" >/dev/null 2>&1
			got=$(cat "$R/$name/x/k")
			[[ $got == "the new kernel $KV" ]] || { echo "$p: '$got'"; rc=1; }
		done
		for p in $ipaths; do
			xorriso -osirrox on -indev "$R/$name/out.iso" -extract "$p" "$R/$name/x/i" >/dev/null 2>&1
			got=$(head -n1 "$R/$name/x/i")
			[[ $got == "initrd for $KV by ${tool##*/} $want; pid 1 is (sd-stubinit)" ]] || { echo "$p: '$got'"; rc=1; }
		done
		grep -q "making the initrd for $KV in the container" "$W/logs/refresh-$name.out" || { echo "not said"; rc=1; }
		return "$rc"
	}
	tap_test "[refresh:$name] --add of a kernel and modules: ${tool##*/} ($want) made the initrd in the container; the kernel and initrd at $kpaths $ipaths are the new ones" refresh_check
}
refresh_case debian "$FX/debian.iso" usr/sbin/update-initramfs /live/vmlinuz /live/initrd.img "-k $KV -c"
# archiso: mkinitcpio; its ESP (appended partition 2) holds the kernel and initrd too,
# for systemd-boot: a 3 MiB initrd does not fit in the 2 MiB FAT, which is made bigger
mkdir -p "$R/arch/add/usr/lib/initcpio"
head -c 3145728 /dev/urandom >"$R/arch/add/usr/lib/initcpio/pad"
refresh_case arch "$FX/arch.iso" usr/bin/mkinitcpio /arch/boot/x86_64/vmlinuz-linux /arch/boot/x86_64/initramfs-linux.img \
	"-k $KV -g /run/livesquash-refresh/initrd"
arch_esp_refreshed() {
	local d=$R/arch/x part first last
	[[ $RC == 0 ]] || return 1
	part=$(xorriso -indev "$R/arch/out.iso" -report_system_area cmd 2>/dev/null |
		awk '$1 == "-append_partition" && $2 == 2 { match($4, /[0-9]+d-[0-9]+d/); print substr($4, RSTART, RLENGTH) }')
	first=${part%%d-*} last=${part#*-}
	last=${last%d}
	[[ -n $first && -n $last ]] || { echo "no appended partition 2"; return 1; }
	dd if="$R/arch/out.iso" of="$d/esp.img" bs=512 skip="$first" count=$((last - first + 1)) status=none
	if ! mcopy -n -i "$d/esp.img" ::/arch/boot/x86_64/vmlinuz-linux "$d/esp-k" ||
		! mcopy -n -i "$d/esp.img" ::/arch/boot/x86_64/initramfs-linux.img "$d/esp-i"; then
		echo "mcopy from the ESP failed"
		return 1
	fi
	[[ $(cat "$d/esp-k") == "the new kernel $KV" ]] || { echo "the ESP's kernel is the old one"; return 1; }
	cmp -s "$d/esp-i" "$d/i" || { echo "the ESP's initrd is not the ISO's new one"; return 1; }
	mcopy -n -i "$d/esp.img" ::/loader/entries/01-archiso-x86_64-linux.conf "$d/entry" || { echo "the ESP lost its loader entries"; return 1; }
	grep -q 'made bigger' "$W/logs/refresh-arch.out" || { echo "the FAT was not made bigger"; return 1; }
}
tap_test "[refresh:arch] the ESP (appended partition 2) has the new kernel and initrd too, made bigger for them, its loader entries kept" arch_esp_refreshed
refresh_case fedora "$FX/fedora.iso" usr/bin/dracut "/images/pxeboot/vmlinuz /isolinux/vmlinuz" \
	"/images/pxeboot/initrd.img /isolinux/initrd.img" "--force --no-hostonly --kver $KV --add dmsquash-live /run/livesquash-refresh/initrd"
# an --add that leaves the boot setup alone leaves the ISO's kernel and initrd alone
no_refresh() {
	[[ $RC == 0 ]] || return 1
	! grep -q 'making the initrd' "$W/logs/sealed.out"
}
# ---- Arch's pacman in --run (issue 27): the root a mount point, a keyring populated from
# the root's keyrings for the run and gone afterwards, the sync databases it fetched
# removed. pacman-key is a stand-in here (the busybox root has no gpg)
P=$W/pacman
rm -rf "$P"
mkdir -p "$P/add/usr/bin" "$P/add/usr/share/pacman/keyrings" "$P/add/etc/pacman.d" "$P/add/var/lib/pacman/sync" "$P/out"
# shellcheck disable=SC2016 # pacman's variables
echo 'Server = https://geo.mirror.pkgbuild.com/$repo/os/$arch' >"$P/add/etc/pacman.d/mirrorlist"
echo 'archlinux keys' >"$P/add/usr/share/pacman/keyrings/archlinux.gpg"
# shellcheck disable=SC2016 # the stand-in's own variables
printf '%s\n' '#!/bin/sh' '# a stand-in for pacman-key (remaster host test)' 'mkdir -p /etc/pacman.d/gnupg' \
	'case $1 in --init) echo "master key" >/etc/pacman.d/gnupg/secring ;; --populate) cat /usr/share/pacman/keyrings/*.gpg >/etc/pacman.d/gnupg/pubring.gpg ;; esac' \
	>"$P/add/usr/bin/pacman-key"
chmod 0755 "$P/add/usr/bin/pacman-key"
# shellcheck disable=SC2016 # the container shell's
rm_run pacman --add "$P/add" --run 'awk '"'"'$2 == "/" { f = 1 } END { exit !f }'"'"' /proc/self/mounts && echo "/ is a mount point" >/etc/arch-run
cat /etc/pacman.d/gnupg/pubring.gpg >>/etc/arch-run
echo db >/var/lib/pacman/sync/core.db' "$FX/arch.iso" "$P/out/arch.iso"
pacman_check() {
	local r=$P/root rc=0
	[[ $RC == 0 ]] || { tail -n 3 "$W/logs/pacman.err"; return 1; }
	xorriso -osirrox on -indev "$P/out/arch.iso" -extract /arch/x86_64/airootfs.sfs "$P/img" >/dev/null 2>&1
	unpack "$P/img" "$r" || { cat "$r.log"; return 1; }
	[[ $(cat "$r/etc/arch-run") == $'/ is a mount point\narchlinux keys' ]] || { echo "the command saw: $(cat "$r/etc/arch-run")"; rc=1; }
	[[ ! -e $r/etc/pacman.d/gnupg ]] || { echo "the keyring shipped: $(ls "$r/etc/pacman.d/gnupg")"; rc=1; }
	[[ -f $r/etc/pacman.d/mirrorlist ]] || { echo "the mirrorlist went"; rc=1; }
	[[ ! -e $r/var/lib/pacman/sync/core.db && -d $r/var/lib/pacman/sync ]] || { echo "the sync database shipped"; rc=1; }
	grep -q 'removed the pacman keyring made for the run' "$W/logs/pacman.out" || { echo "not said"; rc=1; }
	return "$rc"
}
tap_test "[pacman] an Arch root in --run: / a mount point, pacman's keyring populated from the root's keyrings for the run, the keyring and the fetched sync database not shipped" pacman_check

# ---- EROFS with xattrs and lzma (issue 27): Fedora 42's root, with erofs-utils 1.8
# (Debian 13's, make erofs-utils): SELinux labels, capabilities and hard links unpacked
# and packed again, the image's compressor kept
E18ROOT=$BUILD/trixie/erofs/root
e18() { # TOOL ARGS...: Debian 13's erofs-utils, run with its own C library
	"$E18ROOT/usr/lib64/ld-linux-x86-64.so.2" --library-path "$E18ROOT/usr/lib/x86_64-linux-gnu" "$E18ROOT/usr/bin/$1" "${@:2}"
}
EF=$W/erofs18
rm -rf "$EF"
mkdir -p "$EF"
# xattrs of every path of an extracted tree, and its hard-link groups, for comparing
tree_xattrs() { (cd "$1" && getfattr -R -h -d -m - -e hex --absolute-names . 2>/dev/null); }
links_of() { (cd "$1" && find . -xdev -type f -links +1 -printf '%i %p\n' | sort -n | awk '{ g[$1] = g[$1] " " $2 } END { for (i in g) print g[i] }' | sort); }
# erofs18_case NAME IN.iso: --add, --run; then the labels/xattrs, links, compressor, features
erofs18_case() {
	local name=$1 in=$2 d=$EF/$1 rc=0
	mkdir -p "$d"
	rm_run "erofs18-$name" --add "$ADD" --run 'echo made >/etc/erofs-run' "$in" "$d/out.iso"
	erofs18_check() {
		[[ $RC == 0 ]] || { tail -n 3 "$W/logs/erofs18-$name.err"; return 1; }
		xorriso -osirrox on -indev "$in" -extract /LiveOS/squashfs.img "$d/old.img" >/dev/null 2>&1
		xorriso -osirrox on -indev "$d/out.iso" -extract /LiveOS/squashfs.img "$d/new.img" >/dev/null 2>&1
		# no owners: fsck.erofs 1.8.6 sets them after the xattrs, and a chown drops capabilities
		e18 fsck.erofs --extract="$d/old" --xattrs --no-preserve-owner --preserve-perms "$d/old.img" >/dev/null 2>&1 ||
			{ echo "fsck.erofs 1.8 cannot extract the original"; return 1; }
		e18 fsck.erofs --extract="$d/new" --xattrs --no-preserve-owner --preserve-perms "$d/new.img" >"$d/fsck.log" 2>&1 ||
			{ echo "fsck.erofs 1.8 on the new image:"; tail -n 3 "$d/fsck.log"; return 1; }
		# every original path's xattrs as they were (the paths that are new aside)
		comm -13 <(cd "$d/old" && find . | sort) <(cd "$d/new" && find . | sort) >"$d/new-paths"
		if ! diff <(tree_xattrs "$d/old") <(tree_xattrs "$d/new" | awk -v RS= -v ORS='\n\n' -v list="$d/new-paths" '
			BEGIN { while ((getline p < list) > 0) skip["# file: " p] = 1 }
			{ split($0, l, "\n"); if (!(l[1] in skip)) print }') >"$d/xattrs.diff"; then
			echo "xattrs differ (< original, > new):"
			head -n 12 "$d/xattrs.diff"
			rc=1
		fi
		[[ $(links_of "$d/old") == "$(links_of "$d/new")" ]] || { echo "hard links: $(links_of "$d/old") -> $(links_of "$d/new")"; rc=1; }
		local o n
		o=$(e18 dump.erofs -s "$d/old.img" | grep -E '^Filesystem (compr_algs|features|UUID)' | sed 's/ xattr_filter//')
		n=$(e18 dump.erofs -s "$d/new.img" | grep -E '^Filesystem (compr_algs|features|UUID)' | sed 's/ xattr_filter//')
		[[ $o == "$n" ]] || { echo "superblock: $o -> $n"; rc=1; }
		[[ -f $d/new/etc/erofs-run ]] || { echo "no /etc/erofs-run"; rc=1; }
		return "$rc"
	}
	tap_test "[erofs18:$name] --add and --run on an EROFS root with xattrs (erofs-utils 1.8): every original inode's xattrs (SELinux labels, capability, user.*), the hard links, the compressor, features and UUID as they were" erofs18_check
}
if [[ -x $E18ROOT/usr/bin/mkfs.erofs ]]; then
	erofs18_case selinux "$FX/fedora-erofs-selinux.iso"
	# Fedora 42 packs its root with lzma: the xattrs fixture repacked so (1 MiB pclusters, ztailpacking)
	xorriso -osirrox on -indev "$FX/fedora-erofs-xattrs.iso" -extract /LiveOS/squashfs.img "$EF/x.img" >/dev/null 2>&1
	e18 fsck.erofs --extract="$EF/xtree" --xattrs --preserve "$EF/x.img" >/dev/null 2>&1
	setcap cap_net_raw+ep "$EF/xtree/usr/share/fixture/ping" # erofs-utils 1.5 left it out
	setfattr -h -n security.selinux -v system_u:object_r:bin_t:s0 "$EF/xtree/bin/busybox"
	e18 mkfs.erofs -zlzma -C1048576 -Eztailpacking --preserve-mtime "$EF/lzma.img" "$EF/xtree" >"$EF/mkfs.log" 2>&1
	xorriso -indev "$FX/fedora-erofs-xattrs.iso" -outdev "$EF/lzma.iso" -boot_image any replay \
		-map "$EF/lzma.img" /LiveOS/squashfs.img >"$EF/lzma-iso.log" 2>&1
	erofs18_case lzma "$EF/lzma.iso"
	lzma_kept() {
		grep -q 'with mkfs.erofs -zlzma ' "$W/logs/erofs18-lzma.out" &&
			e18 dump.erofs -s "$EF/lzma/new.img" | grep -qE '^Filesystem compr_algs: +lzma' &&
			getcap "$EF/lzma/new/usr/share/fixture/ping" | grep -q cap_net_raw
	}
	tap_test "[erofs18:lzma] the repack is lzma again (mkfs.erofs -zlzma; dump.erofs: compr_algs lzma), the capability kept (getcap)" lzma_kept
else
	tap_notok "[erofs18] Debian 13's erofs-utils in $E18ROOT (make erofs-utils)"
fi

# ---- casper's layers (issue 27): Ubuntu 24.04's minimal, minimal.standard,
# minimal.standard.live, a language layer minimal.en and a secure-boot layer
# minimal.standard.enhanced-secureboot, each with the dpkg status of
# its stack, manifests and install-sources.yaml sizes. --run/--add on a layer work on
# the whole stack (overlayfs) and land in that layer as a delta
U=$W/layers
rm -rf "$U"
mkdir -p "$U/x"
xorriso -osirrox on -indev "$FX/ubuntu-layered.iso" -extract /casper "$U/casper" >/dev/null 2>&1
chmod -R u+w "$U/casper"
unsquashfs -q -n -d "$U/minimal" "$U/casper/minimal.squashfs" >/dev/null
stanza() { printf 'Package: %s\nStatus: install ok installed\nPriority: optional\nArchitecture: amd64\nVersion: %s\nDescription: %s\n\n' "$1" "$2" "$1"; }
mkdir -p "$U/minimal/var/lib/dpkg" "$U/standard/var/lib/dpkg" "$U/standard/usr/share/standard" \
	"$U/live/var/lib/dpkg" "$U/en/usr/share/locale/en" "$U/sb/usr/lib/tpm"
{ stanza base-files 13ubuntu10; stanza busybox 1:1.36.1-6; } >"$U/minimal/var/lib/dpkg/status"
{ cat "$U/minimal/var/lib/dpkg/status"; stanza vim 2:9.1.0016-1; } >"$U/standard/var/lib/dpkg/status"
echo standard >"$U/standard/usr/share/standard/file"
{ cat "$U/standard/var/lib/dpkg/status"; stanza casper 1.498; } >"$U/live/var/lib/dpkg/status"
echo en >"$U/en/usr/share/locale/en/file"
echo sb >"$U/sb/usr/lib/tpm/file"
for l in minimal:minimal standard:minimal.standard live:minimal.standard.live en:minimal.en \
	sb:minimal.standard.enhanced-secureboot; do
	mksquashfs "$U/${l%%:*}" "$U/casper/${l#*:}.squashfs" -comp xz -noappend -quiet >/dev/null
done
for l in minimal minimal.standard minimal.standard.live; do
	dpkg-query --admindir="$U/$( case $l in minimal) echo minimal ;; minimal.standard) echo standard ;; *) echo live ;; esac)/var/lib/dpkg" \
		-W -f '${Package}\t${Version}\n' >"$U/casper/$l.manifest"
done
cp "$U/casper/minimal.manifest" "$U/casper/minimal.en.manifest"
printf '%s\n' '- default: false' '  id: ubuntu-desktop-minimal' '  path: minimal.squashfs' '  size: 1000000' '  type: fsimage-layered' \
	'- default: true' '  id: ubuntu-desktop' '  path: minimal.standard.squashfs' '  size: 2000000' '  type: fsimage-layered' \
	>"$U/casper/install-sources.yaml"
maps=()
for f in "$U"/casper/*; do maps+=(-map "$f" "/casper/${f##*/}"); done
xorriso -indev "$FX/ubuntu-layered.iso" -outdev "$U/in.iso" -boot_image any replay "${maps[@]}" >"$U/mkiso.log" 2>&1
mkdir -p "$U/add/usr/share/added"
echo added >"$U/add/usr/share/added/file"
# shellcheck disable=SC2016 # the container shell's
U_RUN='{ grep -c "^Package:" /var/lib/dpkg/status; cat /usr/share/standard/file; test -x /bin/busybox && echo busybox; } >/etc/layer-run
printf "\nPackage: livesquash-test\nStatus: install ok installed\nPriority: optional\nArchitecture: all\nVersion: 1.0\nDescription: test\n" >>/var/lib/dpkg/status
rm /usr/share/fixture/README'
rm_run layers --image /casper/minimal.standard.squashfs --add "$U/add" --run "$U_RUN" "$U/in.iso" "$U/out.iso"
layers_check() {
	local rc=0 d=$U/x l
	[[ $RC == 0 ]] || { tail -n 3 "$W/logs/layers.err"; return 1; }
	xorriso -osirrox on -indev "$U/out.iso" -extract /casper "$d/casper" >/dev/null 2>&1
	unsquashfs -q -n -d "$d/standard" "$d/casper/minimal.standard.squashfs" >/dev/null
	[[ $(cat "$d/standard/etc/layer-run" 2>&1) == $'3\nstandard\nbusybox' ]] ||
		{ echo "the command did not see the stack (minimal's busybox, minimal.standard's status and file): $(cat "$d/standard/etc/layer-run" 2>&1)"; rc=1; }
	[[ $(cat "$d/standard/usr/share/added/file" 2>&1) == added ]] || { echo "the added file is not in the layer"; rc=1; }
	grep -q '^Package: livesquash-test' "$d/standard/var/lib/dpkg/status" || { echo "the layer's dpkg status lacks the new package"; rc=1; }
	[[ -c $d/standard/usr/share/fixture/README && $(stat -c %t:%T "$d/standard/usr/share/fixture/README") == 0:0 ]] ||
		{ echo "the removed file has no whiteout (char 0:0) in the layer"; rc=1; }
	[[ ! -e $d/standard/bin/busybox ]] || { echo "the layer holds minimal's files: not a delta"; rc=1; }
	getfattr -R -h -m '^trusted\.overlay\.(origin|impure|uuid|nlink|upper)$' "$d/standard" 2>/dev/null | grep -q . &&
		{ echo "overlayfs' own xattrs in the layer"; rc=1; }
	# the layers without a dpkg status of their own stay as they were
	for l in minimal minimal.en minimal.standard.enhanced-secureboot; do
		cmp -s "$U/casper/$l.squashfs" "$d/casper/$l.squashfs" || { echo "$l.squashfs changed"; rc=1; }
	done
	if ! grep -qxF "livesquash-test	1.0" "$d/casper/minimal.standard.manifest" || [[ $(wc -l <"$d/casper/minimal.standard.manifest") != 4 ]]; then
		echo "minimal.standard.manifest: $(tr '\n' ' ' <"$d/casper/minimal.standard.manifest")"
		rc=1
	fi
	# the live layer has its own copy of dpkg's status: the new package is registered
	# there too, and the rest of that layer is as it was
	unsquashfs -q -n -d "$d/live" "$d/casper/minimal.standard.live.squashfs" >/dev/null
	unsquashfs -q -n -d "$d/live-old" "$U/casper/minimal.standard.live.squashfs" >/dev/null
	grep -q '^Package: livesquash-test' "$d/live/var/lib/dpkg/status" || { echo "the live layer's dpkg status lacks the new package"; rc=1; }
	grep -q '^Package: casper' "$d/live/var/lib/dpkg/status" || { echo "the live layer's own package (casper) went from its status"; rc=1; }
	[[ $(grep -c '^Package:' "$d/live/var/lib/dpkg/status") == 5 ]] || { echo "the live layer's status: $(grep '^Package:' "$d/live/var/lib/dpkg/status" | tr '\n' ' ')"; rc=1; }
	diff -r --no-dereference -x status "$d/live-old" "$d/live" >/dev/null || { echo "the live layer changed beyond its dpkg status"; rc=1; }
	grep -qxF "livesquash-test	1.0" "$d/casper/minimal.standard.live.manifest" || { echo "the live layer's manifest lacks the new package"; rc=1; }
	local s1 s2
	s1=$(awk '/path: minimal.squashfs/ { f = 1 } f && /size:/ { print $2; exit }' "$d/casper/install-sources.yaml")
	s2=$(awk '/path: minimal.standard.squashfs/ { f = 1 } f && /size:/ { print $2; exit }' "$d/casper/install-sources.yaml")
	# the stack grew by two small files and the status, less README: by a few blocks
	[[ $s1 == 1000000 && $s2 -gt 2000000 && $s2 -lt 2065536 ]] || { echo "install-sources.yaml sizes: minimal $s1 (was 1000000), minimal.standard $s2 (was 2000000)"; rc=1; }
	[[ $(tr -d '\n' <"$d/casper/minimal.standard.size") == "$(du -sx --block-size=1 "$d/standard" | cut -f1)" ]] ||
		{ echo "minimal.standard.size $(cat "$d/casper/minimal.standard.size") is not the layer's du"; rc=1; }
	grep -q 'has its own copy of dpkg.s status: the same changes made there' "$W/logs/layers.out" || { echo "the remaster did not say it changed the live layer's status"; rc=1; }
	return "$rc"
}
tap_test "[layers] --image minimal.standard --add --run on Ubuntu 24.04's layers: the command sees the stack (minimal's /bin/sh and files, the stack's dpkg status); the changes land in minimal.standard as a delta (new files, its status, a whiteout), without overlayfs' own xattrs; the layers without a dpkg status of their own byte-identical; its manifest, .size and install-sources.yaml size made anew; the live layer's own copy of dpkg's status (and its manifest) gets the new package, the rest of it as it was" layers_check
# the live layer has no /bin/sh of its own: --run on it runs the stack's, never the host's
rm_run layers-live --image /casper/minimal.standard.live.squashfs --run "echo ran >/etc/live-run; test -e $W/host-ran || echo not-on-host >>/etc/live-run" "$U/in.iso" "$U/out-live.iso"
live_layer_run() {
	[[ $RC == 0 ]] || { tail -n 3 "$W/logs/layers-live.err"; return 1; }
	[[ ! -e $W/host-ran ]] || { echo "ran on the host"; return 1; }
	xorriso -osirrox on -indev "$U/out-live.iso" -extract /casper/minimal.standard.live.squashfs "$U/x/live.img" >/dev/null 2>&1
	[[ $(unsquashfs -cat "$U/x/live.img" etc/live-run 2>&1) == $'ran\nnot-on-host' ]]
}
tap_test "[layers] --run on the live layer (no /bin/sh of its own) runs in its stack's container" live_layer_run

# ---- the container of --run (issue 27): sealed from the host, tidied after -----------------
# A root laid out as a distribution's (--add: SSH folder, an empty machine ID, a dpkg
# log, apt's cache), then a --run that tries the host's disks, efivars, /sys and
# hostname, starts a daemon, and leaves what a package install leaves
S=$W/sealed
rm -rf "$S"
mkdir -p "$S/add/etc/ssh" "$S/add/var/lib/dbus" "$S/add/var/log" "$S/add/var/cache/apt/archives/partial" "$S/out"
: >"$S/add/etc/machine-id"
echo 'old line' >"$S/add/var/log/dpkg.log"
host_disks=$(lsblk -dn -o NAME 2>/dev/null | tr '\n' ' ')
host_name=$(uname -n)
# shellcheck disable=SC2016 # the command's own $f, $s ... are the container shell's
SEAL_RUN='exec >/etc/livesquash-seal 2>&1
for f in /dev/* /dev/*/*; do test -b "$f" && echo "block device $f"; done
for d in '"$host_disks"'; do test -e "/dev/$d" && echo "host disk /dev/$d"; done
for s in /sys/block/*; do
	test -r "$s/dev" || continue
	IFS=: read -r ma mi <"$s/dev"
	if busybox mknod "/root/disk" b "$ma" "$mi" 2>/dev/null; then
		echo "mknod ${s##*/} done"
		busybox head -c 512 /root/disk >/dev/null 2>&1 && echo "host disk ${s##*/} read"
		rm -f /root/disk
	fi
done
touch /sys/kernel/livesquash 2>/dev/null && echo "/sys writable"
mkdir -p /tmp/efi && busybox mount -t efivarfs efivarfs /tmp/efi 2>/dev/null && echo "efivarfs mounted"
grep -q efivarfs /proc/mounts && echo "efivarfs in /proc/mounts"
ls /sys/firmware/efi/efivars 2>/dev/null | grep -q . && echo "efivars listed"
busybox hostname livesquash-evil 2>/dev/null && echo "hostname changed"
test "$(ls -d /proc/[0-9]* | wc -l)" -lt 20 || echo "host processes visible"
grep -q " /tmp tmpfs " /proc/mounts || echo "/tmp is not a fresh tmpfs"
busybox setsid busybox sleep 613 </dev/null >/dev/null 2>&1 &
echo key >/etc/ssh/ssh_host_ed25519_key && echo pub >/etc/ssh/ssh_host_ed25519_key.pub
echo 0123456789abcdef0123456789abcdef >/etc/machine-id
echo deb >/var/cache/apt/archives/foo_1.0_amd64.deb
echo new >>/var/log/dpkg.log && echo x >/var/log/new.log
echo sealed-done'
pkill -f 'sleep 613' 2>/dev/null || true
rm_run sealed --add "$S/add" --run "$SEAL_RUN" "$FX/fedora.iso" "$S/out/fedora.iso"
tap_diag "sealed: remastered in $SECS s (exit $RC)"
sealed_files() {
	[[ $RC == 0 ]] || { tail -n 5 "$W/logs/sealed.err"; return 1; }
	xorriso -osirrox on -indev "$S/out/fedora.iso" -extract /LiveOS/squashfs.img "$S/img" >/dev/null 2>&1
	unpack "$S/img" "$S/root" || { cat "$S/root.log"; return 1; }
}
seal_said() { # the container's own report: nothing but its last line
	local got
	got=$(cat "$S/root/etc/livesquash-seal" 2>&1)
	[[ $got == sealed-done ]] || { printf '%s\n' "$got"; return 1; }
}
seal_host() {
	local rc=0
	if [[ $(uname -n) != "$host_name" ]]; then
		echo "the host's name is now $(uname -n) (given back its own, $host_name)"
		hostname "$host_name" || true
		rc=1
	fi
	sleep 0.5
	if pgrep -af 'sleep 613'; then
		echo "the daemon the command started outlived it"
		pkill -f 'sleep 613' || true
		rc=1
	fi
	return "$rc"
}
seal_tidy() {
	local r=$S/root rc=0
	ls "$r"/etc/ssh/ssh_host_* 2>/dev/null && { echo "SSH host keys shipped"; rc=1; }
	[[ -f $r/etc/machine-id && ! -s $r/etc/machine-id ]] || { echo "the machine ID is not empty as it was"; rc=1; }
	[[ ! -e $r/var/cache/apt/archives/foo_1.0_amd64.deb ]] || { echo "the cached package shipped"; rc=1; }
	[[ -d $r/var/cache/apt/archives/partial ]] || { echo "the cache folder itself went"; rc=1; }
	[[ ! -e $r/var/log/new.log ]] || { echo "the new log shipped"; rc=1; }
	[[ $(cat "$r/var/log/dpkg.log") == 'old line' ]] || { echo "dpkg.log is not as it was: $(cat "$r/var/log/dpkg.log")"; rc=1; }
	grep -qF 'removed what the --run left behind: 2 SSH host key files, the machine ID it set (put back as it was), 1 cached package files (0 KiB), 1 new log files, what it appended to 1 logs' "$W/logs/sealed.out" ||
		{ echo "the remaster did not say what it removed:"; grep 'removed' "$W/logs/sealed.out"; rc=1; }
	return "$rc"
}
tap_test "[sealed] --add a distribution-like tree, then --run in its container" sealed_files
tap_test "[sealed] from inside: no block device in /dev, the host's disks ($host_disks) neither there nor makeable (mknod), /sys read-only, efivarfs neither mounted nor mountable, no hostname change, no host process visible, /tmp a fresh tmpfs" seal_said
tap_test "[sealed] the host's name is unchanged and the daemon the command started ended with it" seal_host
tap_test "[refresh] a --add/--run that changes no kernel, module or initramfs setting makes no initrd" no_refresh
tap_test "[sealed] what the run left is removed and named: SSH host keys, the machine ID (empty again), the cached .deb, the new log, the line added to dpkg.log" seal_tidy

# ---- Debian's policy-rc.d: a root with invoke-rc.d has /usr/sbin/policy-rc.d (exit
# 101: no service a package installs starts in the container) for the run only, and
# /usr/sbin's time back as it was, also when the run outlasts a second of the clock
Q=$W/policy
rm -rf "$Q"
mkdir -p "$Q/add/usr/sbin" "$Q/out"
printf '#!/bin/sh\nexit 0\n' >"$Q/add/usr/sbin/invoke-rc.d"
chmod 0755 "$Q/add/usr/sbin/invoke-rc.d"
touch -d @1700000000 "$Q/add/usr/sbin"
rm_run policy --add "$Q/add" --run '/usr/sbin/policy-rc.d foo start; echo "policy-rc.d says $?" >/etc/livesquash-policy; sleep 2' \
	"$FX/debian.iso" "$Q/out/debian.iso"
policy_check() {
	local r=$Q/root rc=0 t
	[[ $RC == 0 ]] || { tail -n 3 "$W/logs/policy.err"; return 1; }
	xorriso -osirrox on -indev "$Q/out/debian.iso" -extract /live/filesystem.squashfs "$Q/img" >/dev/null 2>&1
	unpack "$Q/img" "$r" || { cat "$r.log"; return 1; }
	[[ $(cat "$r/etc/livesquash-policy") == 'policy-rc.d says 101' ]] || { echo "the run saw: $(cat "$r/etc/livesquash-policy")"; rc=1; }
	[[ ! -e $r/usr/sbin/policy-rc.d ]] || { echo "policy-rc.d shipped"; rc=1; }
	t=$(stat -c %Y "$r/usr/sbin")
	[[ $t == 1700000000 ]] || { echo "/usr/sbin's time is $t, was 1700000000"; rc=1; }
	return "$rc"
}
tap_test "[policy] a root with invoke-rc.d: policy-rc.d (exit 101) during a 2 s --run, gone after it, /usr/sbin's time as it was" policy_check

# ---- a root of more than 100,000 inodes (issue 27): the remaster's own steps must not
# cost per file (the time is reported, not judged: speed belongs to benchmarks)
BIG=$W/big
rm -rf "$BIG"
mkdir -p "$BIG/tree/LiveOS" "$BIG/add/etc"
xorriso -osirrox on -indev "$FX/fedora.iso" -extract /LiveOS/squashfs.img "$BIG/orig.img" >/dev/null 2>&1
unsquashfs -q -n -d "$BIG/root" "$BIG/orig.img" >/dev/null
python3 - "$BIG/root/usr/share/many" <<'PY'
import os, sys
top = sys.argv[1]
for d in range(200):
    p = os.path.join(top, "d%03d" % d)
    os.makedirs(p)
    for f in range(505):
        # sizes spread as in a real root: mksquashfs compares every pair of
        # same-size files (100,000 of one size took it 2 minutes)
        with open(os.path.join(p, "f%03d" % f), "w") as fh:
            fh.write("%d %d %s\n" % (d, f, "x" * ((d * 505 + f) % 1000)))
PY
big_n=$(find "$BIG/root" | wc -l)
mksquashfs "$BIG/root" "$BIG/big.img" -comp xz -noappend -quiet >/dev/null
xorriso -indev "$FX/fedora.iso" -outdev "$BIG/in.iso" -boot_image any replay -map "$BIG/big.img" /LiveOS/squashfs.img >"$BIG/mkiso.log" 2>&1
rm -rf "$BIG/root" "$BIG/orig.img" "$BIG/big.img"
echo big >"$BIG/add/etc/big-added"
rm_run big --add "$BIG/add" --run 'test -f /usr/share/many/d199/f504' "$BIG/in.iso" "$BIG/out.iso"
tap_diag "big: a root of $big_n inodes remastered (--add, --run) in $SECS s"
big_check() {
	[[ $RC == 0 ]] || { tail -n 3 "$W/logs/big.err"; return 1; }
	xorriso -osirrox on -indev "$BIG/out.iso" -extract /LiveOS/squashfs.img "$BIG/new.img" >/dev/null 2>&1
	local n
	n=$(unsquashfs -lln "$BIG/new.img" 2>/dev/null | grep -c ' squashfs-root')
	[[ $n == $((big_n + 1)) ]] || { echo "$n inodes in the new image, $((big_n + 1)) expected"; return 1; }
}
tap_test "[big] a root of $big_n inodes: --add and --run, every inode kept and the one added ($SECS s)" big_check

secs=$(ls_elapsed "$suite_start" "$(ls_now)")
tap_diag "remaster host suite: $secs s"
finished=1
trap - ERR
tap_summary
if ((LS_FAIL > 0)); then
	exit 1
fi
