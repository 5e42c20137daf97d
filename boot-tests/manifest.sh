#!/bin/sh
# boot-tests/manifest.sh: a sorted manifest of every path under a root, for the
# live-ISO tests (boot-tests/) and the driver tests (boot-tests/driver/).
# POSIX sh: runs on the host (coreutils) and in the guest (busybox or coreutils)
# and prints the same bytes for the same tree.
#
# usage: manifest.sh [-X] [-x EXCLUDES] ROOT
#        manifest.sh -x EXCLUDES -F MANIFEST   (filter an existing manifest)
#   -X        symlink targets and xattrs from the lsqx helper (boot-tests/driver/
#             lsqx.c, in $LSQX or PATH), and an xattrs column
#   EXCLUDES: lines "= ./path" (leave out that path) or "/ ./path" (that path and
#   everything under it).
#
# One line per path, sorted with LC_ALL=C, fields separated by a tab:
#   path type mode uid gid nlink size mtime data linkgroup [xattrs]
#   path      ./relative/path ("." is ROOT itself)
#   type      f d l c b p s
#   mode      permission bits incl. setuid/setgid/sticky, 4 octal digits
#   nlink     link count; "-" for directories (it differs between filesystems)
#   size      bytes, regular files only ("-" else)
#   mtime     seconds since the epoch (squashfs stores seconds)
#   data      f: sha256 of the content; l: symlink target; c/b: major:minor; else -
#   linkgroup non-directories with nlink > 1: the lowest path sharing the inode; else -
#   xattrs    (-X) name=hexvalue;... sorted by name, "-" when none
set -eu

LC_ALL=C
QUOTING_STYLE=literal # GNU stat %N: name -> target, without quotes
export LC_ALL QUOTING_STYLE

# awk: excluded(path) after load_excludes(file)
AWK_EXCLUDE='
function load_excludes(file,   line) {
	while ((getline line < file) > 0) {
		if (substr(line, 1, 2) == "= ")
			exact[substr(line, 3)] = 1
		else if (substr(line, 1, 2) == "/ ")
			subtree[substr(line, 3)] = 1
	}
}
function excluded(p) {
	if (p in exact)
		return 1
	while (p != "") {
		if (p in subtree)
			return 1
		if (p !~ /\//)
			break
		sub(/\/[^\/]*$/, "", p)
	}
	return 0
}'

usage() {
	echo "usage: manifest.sh [-X] [-x EXCLUDES] ROOT | manifest.sh -x EXCLUDES -F MANIFEST" >&2
	exit 2
}
excludes=/dev/null
lsqx=
while [ $# -gt 0 ]; do
	case $1 in
	-x)
		[ $# -ge 2 ] || usage
		excludes=$2
		shift 2
		case $excludes in /*) ;; *) excludes=$(pwd)/$excludes ;; esac
		;;
	-X)
		lsqx=${LSQX:-lsqx}
		shift
		;;
	*) break ;;
	esac
done
if [ "${1:-}" = -F ] && [ $# -eq 2 ]; then
	awk -F '\t' -v exfile="$excludes" "$AWK_EXCLUDE"'
BEGIN { load_excludes(exfile) }
!excluded($1)' "$2"
	exit
fi
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	usage
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/manifest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
T=$(printf '\t')

cd "$1"
rc=0
find . -xdev -type f -exec sha256sum {} + >"$tmp/sha" || rc=$?
if [ "$rc" -ne 0 ]; then
	echo "manifest.sh: find/sha256sum failed ($rc) under $1" >&2
	exit 1
fi
find . -xdev -exec stat -c "%f$T%u$T%g$T%h$T%s$T%Y$T%d:%i$T%t$T%T$T%n$T%N" {} + >"$tmp/stat" || rc=$?
if [ "$rc" -ne 0 ]; then
	echo "manifest.sh: find/stat failed ($rc) under $1" >&2
	exit 1
fi
: >"$tmp/x"
if [ -n "$lsqx" ]; then
	find . -xdev -exec "$lsqx" {} + >"$tmp/x" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "manifest.sh: find/lsqx failed ($rc) under $1" >&2
		exit 1
	fi
fi

awk -F "$T" -v shafile="$tmp/sha" -v xfile="$tmp/x" -v withx="${lsqx:+1}" -v exfile="$excludes" "$AWK_EXCLUDE"'
function hex(s,   i, n) {
	n = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return n
}
BEGIN {
	while ((getline line < shafile) > 0)
		sha[substr(line, 67)] = substr(line, 1, 64)
	while ((getline line < xfile) > 0) {
		split(line, x, "\t")
		link[x[1]] = x[2]
		xattr[x[1]] = x[3]
	}
	load_excludes(exfile)
	types[1] = "p"; types[2] = "c"; types[4] = "d"; types[6] = "b"
	types[8] = "f"; types[10] = "l"; types[12] = "s"
}
{
	raw = hex($1)
	t = types[int(raw / 4096)]
	if (t == "")
		t = "?"
	p = $10
	if (excluded(p))
		next
	nlink = $4
	size = "-"
	data = "-"
	if (t == "d")
		nlink = "-"
	else if ($4 > 1 && (!($7 in lowest) || p < lowest[$7]))
		lowest[$7] = p
	if (t == "f") {
		size = $5
		data = (p in sha) ? sha[p] : "NO-SHA256"
	} else if (t == "l" && withx) {
		data = (p in link) ? link[p] : "NO-LINK"
	} else if (t == "l") {
		n = $11
		q = "\047" p "\047 -> \047"
		if (substr(n, 1, length(q)) == q && substr(n, length(n)) == "\047")
			data = substr(n, length(q) + 1, length(n) - length(q) - 1)
		else if (substr(n, 1, length(p) + 4) == p " -> ")
			data = substr(n, length(p) + 5)
		else
			data = "UNPARSED:" n
	} else if (t == "c" || t == "b") {
		data = hex($8) ":" hex($9)
	}
	n_out++
	line_out[n_out] = p "\t" t "\t" sprintf("%04o", raw % 4096) "\t" $2 "\t" $3 "\t" nlink "\t" size "\t" $6 "\t" data
	key_out[n_out] = (t != "d" && $4 > 1) ? $7 : ""
	x_out[n_out] = withx ? "\t" ((p in xattr) ? xattr[p] : "NO-XATTR") : ""
}
END {
	for (i = 1; i <= n_out; i++)
		print line_out[i] "\t" (key_out[i] != "" ? lowest[key_out[i]] : "-") x_out[i]
}' "$tmp/stat" | sort
