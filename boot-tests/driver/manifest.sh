#!/bin/sh
# boot-tests/driver/manifest.sh: a sorted manifest of every path under DIR.
# POSIX sh; runs on the host (coreutils) and in the guest (busybox) and prints the
# same bytes for the same tree. Needs the lsqx helper (lsqx.c) in $LSQX or PATH for
# symlink targets and xattrs.
#
# usage: manifest.sh DIR
# One line per path, sorted with LC_ALL=C, fields separated by a tab:
#   path      ./relative/path ("." is DIR itself)
#   mode      st_mode in hex as `stat %f` prints it (type and permission bits)
#   uid gid   numeric
#   mtime     seconds since the epoch
#   nlink     link count; "-" for directories (it differs between filesystems)
#   size      bytes, regular files only ("-" else)
#   data      file: sha256 of the content; symlink: target; device: major:minor
#   xattrs    name=hexvalue;... sorted by name, "-" when none
#   linkgroup non-directories with nlink > 1: the lowest path sharing the inode
set -eu

LC_ALL=C
export LC_ALL
LSQX=${LSQX:-lsqx}

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: manifest.sh DIR" >&2
	exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/manifest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
T=$(printf '\t')

cd "$1"
if ! find . -exec stat -c "%f$T%u$T%g$T%h$T%s$T%Y$T%i$T%t$T%T$T%n" {} + >"$tmp/stat"; then
	echo "manifest.sh: find/stat failed under $1" >&2
	exit 1
fi
if ! find . -type f -exec sha256sum {} + >"$tmp/sha"; then
	echo "manifest.sh: find/sha256sum failed under $1" >&2
	exit 1
fi
if ! find . -exec "$LSQX" {} + >"$tmp/x"; then
	echo "manifest.sh: find/lsqx failed under $1" >&2
	exit 1
fi

awk -F "$T" -v shafile="$tmp/sha" -v xfile="$tmp/x" '
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
}
{
	p = $10
	raw = hex($1)
	t = int(raw / 4096)
	nlink = $4
	size = "-"
	data = "-"
	key = ""
	if (t == 4)
		nlink = "-"
	else if ($4 > 1)
		key = $7
	if (t == 8) {
		size = $5
		data = (p in sha) ? sha[p] : "NO-SHA256"
	} else if (t == 10) {
		data = (p in link) ? link[p] : "NO-LINK"
	} else if (t == 2 || t == 6) {
		data = hex($8) ":" hex($9)
	}
	if (key != "" && (!(key in lowest) || p < lowest[key]))
		lowest[key] = p
	n++
	out[n] = p "\t" $1 "\t" $2 "\t" $3 "\t" $6 "\t" nlink "\t" size "\t" data "\t" ((p in xattr) ? xattr[p] : "NO-XATTR")
	keys[n] = key
}
END {
	for (i = 1; i <= n; i++)
		print out[i] "\t" (keys[i] != "" ? lowest[keys[i]] : "-")
}' "$tmp/stat" | sort
