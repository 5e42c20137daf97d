#!/bin/bash
# boot-tests/thirdparty/livebuild.sh: a minimal Debian bookworm live ISO made with
# Debian's live-build (a third-party ISO for iso/remaster and the boot tests), built
# from the package mirror the host's apt uses, and cached.
#
# usage: livebuild.sh [OUT.iso]      build or reuse the ISO; copy it to OUT.iso if given
#        livebuild.sh --path         print the cached ISO's path (exit 1 if not built)
# Run as root (live-build runs debootstrap and chroots).
#
# The cache: $LIVEBUILD_CACHE (/var/cache/livesquash/live-build)/KEY/, KEY = sha256 of
# the `lb config` arguments, this script's text, the extra package list and
# live-build's version. An entry holds live-image-amd64.hybrid.iso, build.log,
# lb-config.args and packages.list (what the live system holds); it appears only
# when a build succeeded (built beside it, renamed into place), so a second run
# reuses it in seconds. Downloaded .debs are kept in CACHE/debs/ for later builds
# (a changed key rebuilds, but downloads only what is new). The build log goes to
# CACHE/logs/KEY.log, and also to the terminal if stdout is one.
# Environment: LIVEBUILD_CACHE; LIVEBUILD_MIRROR (default: the host's first apt
# source for bookworm); LIVEBUILD_PACKAGES (extra packages, default none).
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
cache=${LIVEBUILD_CACHE:-/var/cache/livesquash/live-build}
iso_name=live-image-amd64.hybrid.iso
# live-build adds live-boot, live-config, live-config-systemd and systemd-sysv by
# itself (and linux-image-amd64); the test needs nothing more than the base system
packages=${LIVEBUILD_PACKAGES:-}

die() {
	echo "livebuild: $*" >&2
	exit 1
}

usage() {
	sed -n '/^# usage:/,/^# Run as root/p' "$self" | sed 's/^# \{0,1\}//'
}

want_path=0
out=""
while (($#)); do
	case $1 in
	--path) want_path=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	-*)
		usage >&2
		exit 2
		;;
	*)
		[[ -z $out ]] || {
			usage >&2
			exit 2
		}
		out=$1
		;;
	esac
	shift
done

# the first "deb" source of the host's apt for bookworm (one-line or deb822 format)
host_mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -f $f ]] || continue
		awk '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) == "bookworm") { print $i; exit }
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		awk 'function flush() {
			if (types ~ /(^| )deb( |$)/ && suites ~ /(^| )bookworm( |$)/ && enabled != "no" && uri != "") {
				split(uri, u, " "); print u[1]; found = 1; exit
			}
			types = suites = uri = enabled = ""
		}
		/^[ \t]*$/ { flush(); next }
		/^#/ { next }
		{ k = tolower($1); sub(/:$/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v) }
		k == "types" { types = v } k == "suites" { suites = v } k == "uris" { uri = v } k == "enabled" { enabled = tolower(v) }
		END { if (!found) flush() }' "$f"
	done
}

mirror=${LIVEBUILD_MIRROR:-$(host_mirror | head -n 1)}
[[ -n $mirror ]] || die "no bookworm source in /etc/apt/sources.list*: set LIVEBUILD_MIRROR"

lb_args=(
	--distribution bookworm
	--architectures amd64
	--binary-images iso-hybrid
	--debian-installer none
	--archive-areas main
	--apt-recommends false
	--apt-indices false
	--debootstrap-options "--variant=minbase"
	--mirror-bootstrap "$mirror"
	--mirror-chroot "$mirror"
	--mirror-binary "$mirror"
	--security false
	--updates false
	--firmware-binary false
	--firmware-chroot false
	--memtest none
	--zsync false
	--checksums "md5 sha256"
	--bootappend-live "boot=live components quiet splash"
)

lb_version=$(lb --version 2>/dev/null || dpkg-query -W -f '${Version}' live-build 2>/dev/null || echo unknown)
key=$({
	printf 'lb config'
	printf ' %q' "${lb_args[@]}"
	printf '\n--- script\n'
	cat "$self"
	printf '\n--- packages\n%s\n--- live-build %s\n' "$packages" "$lb_version"
} | sha256sum | cut -d' ' -f1)
entry=$cache/$key
iso=$entry/$iso_name

give() { # WHAT: report, copy to OUT if asked
	echo "livebuild: $1: $iso"
	if [[ -n $out ]]; then
		cp --reflink=auto "$iso" "$out.tmp.$$"
		mv -f "$out.tmp.$$" "$out"
		echo "livebuild: copied to $out"
	fi
}

if ((want_path)); then
	[[ -f $iso ]] || die "not built yet (key $key): run livebuild.sh as root"
	echo "$iso"
	exit 0
fi
if [[ -f $iso ]]; then
	give "cached (key ${key:0:16})"
	exit 0
fi

((EUID == 0)) || die "must run as root (live-build runs debootstrap and chroot); try: sudo $0"
command -v lb >/dev/null || die "live-build is not installed (apt-get install live-build)"
mkdir -p "$cache/logs" "$cache/debs"

# one build per key at a time: a second run waits, then finds the entry
exec 9>"$cache/.lock.$key"
if ! flock -n 9; then
	echo "livebuild: another build of this key is running; waiting for it"
	flock 9
fi
if [[ -f $iso ]]; then
	give "cached (key ${key:0:16}, built by another run)"
	exit 0
fi

work=$(mktemp -d "$cache/.work.$key.XXXXXX")
staging=""
log=$cache/logs/$key.log

# unmount whatever the build left mounted under the work folder, deepest first,
# then delete it (never crossing into another filesystem)
cleanup() {
	local rc=$?
	local m
	if [[ -n $work && -d $work ]]; then
		while read -r m; do
			umount -l "$m" 2>/dev/null || true
		done < <(awk -v w="$work/" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
		rm -rf --one-file-system "$work"
	fi
	[[ -z $staging ]] || rm -rf --one-file-system "$staging"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "livebuild: interrupted" >&2; exit 130' INT TERM

start=$SECONDS
: >"$log"
echo "livebuild: building key ${key:0:16} from $mirror in $work (log $log)"
# lb config + lb build in the work folder (its output is the log); runs where set -e
# does not apply (a pipeline's left side, `|| rc=$?`), hence the explicit returns
lb_build() {
	cd "$work" || return
	{
		printf 'lb config'
		printf ' %q' "${lb_args[@]}"
		echo
	} >lb-config.args || return
	lb config "${lb_args[@]}" || return
	if [[ -n $packages ]]; then
		tr ' ' '\n' <<<"$packages" >config/package-lists/livesquash.list.chroot || return
	fi
	# keep downloaded .debs across builds (lb copies them in and moves new ones to cache/)
	mkdir -p cache || return
	local stage
	for stage in bootstrap chroot binary; do
		mkdir -p "$cache/debs/$stage" || return
		ln -sfn "$cache/debs/$stage" "cache/packages.$stage" || return
	done
	lb build
}

rc=0
if [[ -t 1 ]]; then
	(lb_build) 2>&1 | tee -a "$log" || rc=$?
else
	(lb_build) >>"$log" 2>&1 || rc=$?
fi
if ((rc != 0)); then
	echo "livebuild: build failed (exit $rc) after $((SECONDS - start)) s; last lines of $log:" >&2
	tail -n 15 "$log" >&2
	exit 1
fi
[[ -s $work/$iso_name ]] || {
	echo "livebuild: lb build made no $iso_name; last lines of $log:" >&2
	tail -n 15 "$log" >&2
	exit 1
}

staging=$(mktemp -d "$cache/.new.$key.XXXXXX")
mv "$work/$iso_name" "$staging/$iso_name"
cp "$work/lb-config.args" "$staging/"
cp "$work/chroot.packages.live" "$staging/packages.list" 2>/dev/null || true
cp "$log" "$staging/build.log"
chmod 755 "$staging"
mv -T "$staging" "$entry"
staging=""
give "built in $((SECONDS - start)) s (key ${key:0:16})"
