#!/usr/bin/env bash
# Fetch Debian 13 (trixie) packages, or another suite's (--suite: trixie-backports,
# forky), into build/, never into the host: apt-get download from that suite of
# the mirror apt already uses (its own lists and cache under DEST/apt, not the
# host's), then dpkg-deb -x into DEST/root.
# Already-fetched packages of the same version are kept. A package the suite
# does not have, or a mirror that cannot be reached, gets one line naming the
# package and the suite, and leaves DEST/root as it was.
#
# usage: trixie.sh [--suite SUITE] DEST PACKAGE...
#        trixie.sh [--suite SUITE] --depends DEST PACKAGE   print the packages PACKAGE
#                                  depends on, one a line (linux-image-amd64: the kernel's)
#        trixie.sh [--suite SUITE] --newest DEST REGEX     print the newest package
#                                  whose name matches REGEX (linux-source-7.*)
# One DEST holds one suite's lists: give each suite its own DEST.
set -euo pipefail

depends='' newest='' suite=trixie
while (($#)); do
	case $1 in
	--depends) depends=1 ;;
	--newest) newest=1 ;;
	--suite) suite=${2:?trixie: --suite needs a suite}; shift ;;
	*) break ;;
	esac
	shift
done
(($# > 1)) || { echo "trixie: usage: trixie.sh [--suite SUITE] [--depends|--newest] DEST PACKAGE..." >&2; exit 2; }
[[ $suite =~ ^[a-z]+(-[a-z]+)?$ ]] || { echo "trixie: '$suite' is not a Debian suite name" >&2; exit 2; }
dest=$(realpath -m "$1") # absolute: apt reads relative Dir:: paths from /
shift

# the Debian mirror apt uses for the host's own release
release=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
# shellcheck disable=SC2016 # apt's own $(FIELD) placeholders
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
	awk -v rel="$release" '$2 == rel { print $1; exit }')
if [[ -z $mirror ]]; then
	mirror=$(grep -hoE '^(URIs:|deb) +[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
		awk '{ print $2; exit }')
fi
[[ -n $mirror ]] || { echo "trixie: no Debian mirror in apt's sources (/etc/apt/sources.list*)" >&2; exit 1; }

a=$dest/apt
mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$dest/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} $suite main" >"$a/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$a/sources.list" -o Dir::Etc::sourceparts=/dev/null
	-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache" -o APT::Get::List-Cleanup=0
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root)

# the lists once a day at most
if [[ -z $(find "$a/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null) ]]; then
	# stderr: --depends prints its answer, and only that, on stdout
	echo "trixie: reading the $suite suite of $mirror" >&2
	if ! apt-get -q "${apt_opts[@]}" update >"$a/update.log" 2>&1 ||
		grep -qE '^(E:|Err:)' "$a/update.log"; then
		echo "trixie: cannot read the $suite suite of $mirror ($(grep -m1 -E '^(E:|Err:)' "$a/update.log" || tail -n 1 "$a/update.log"))" >&2
		exit 1
	fi
	# apt-get update can end well and store nothing where we look: without
	# the list, every package would be "not in the suite"
	if [[ -z $(find "$a/lists" -maxdepth 1 -name '*_Packages*' 2>/dev/null) ]]; then
		echo "trixie: apt-get update read no package list from the $suite suite of $mirror (see $a/update.log)" >&2
		exit 1
	fi
fi

if [[ -n $newest ]]; then
	# package names of the suite, newest version number in the name first
	name=$(apt-cache "${apt_opts[@]}" pkgnames 2>/dev/null | grep -E "^($1)\$" | sort -V | tail -n 1) || true
	[[ -n $name ]] || { echo "trixie: no package matching $1 in the $suite suite of $mirror" >&2; exit 1; }
	echo "$name"
	exit 0
fi

if [[ -n $depends ]]; then
	dep=$(apt-cache "${apt_opts[@]}" show --no-all-versions "$1" 2>/dev/null |
		sed -n 's/^Depends: //p' | head -n 1 | tr ',' '\n' | awk '{ print $1 }') || true
	[[ -n $dep ]] || { echo "trixie: package $1 is not in the $suite suite of $mirror, or depends on nothing" >&2; exit 1; }
	echo "$dep"
	exit 0
fi

for p in "$@"; do
	ver=$(apt-cache "${apt_opts[@]}" show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1) || true
	[[ -n $ver ]] || { echo "trixie: package $p is not in the $suite suite of $mirror" >&2; exit 1; }
	deb=$(find "$dest/debs" -maxdepth 1 -name "${p}_${ver//:/%3a}_*.deb" -print -quit)
	if [[ -z $deb ]]; then
		echo "trixie: downloading $p $ver"
		rm -f "$dest/debs/${p}_"*.deb
		if ! (cd "$dest/debs" && apt-get -q "${apt_opts[@]}" download "$p" >"$a/download-$p.log" 2>&1); then
			echo "trixie: cannot download $p $ver from the $suite suite of $mirror ($(grep -m1 -E '^(E:|Err:)' "$a/download-$p.log" || tail -n 1 "$a/download-$p.log"))" >&2
			exit 1
		fi
	fi
done

# extract every package anew into a fresh tree, then put it in place
rm -rf "$dest/root.tmp"
mkdir -p "$dest/root.tmp"
for p in "$@"; do
	dpkg-deb -x "$(find "$dest/debs" -maxdepth 1 -name "${p}_*.deb" -print -quit)" "$dest/root.tmp"
done
rm -rf "$dest/root"
mv "$dest/root.tmp" "$dest/root"
echo "trixie: $* in $dest/root"
