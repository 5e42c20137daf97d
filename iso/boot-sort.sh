#!/bin/bash
# What packs a root tree's files in a boot's order, for mksquashfs, and what the boot
# then reads first.
# usage: boot-sort.sh ROOT SORT_FILE OUT_PREFIX
#        boot-sort.sh --extent IMAGE OUT_PREFIX.sort
# SORT_FILE is an mksquashfs -sort file ("PATH PRIORITY" lines, PATH relative to
# ROOT; iso/boot-order.sh makes one from a boot). The first form writes
# OUT_PREFIX.sort, its lines for the paths ROOT has, and OUT_PREFIX.actions, an
# mksquashfs -action-file with a no-fragments action for each of those paths; it
# prints how many paths there are. Why the actions: -sort orders data blocks, but a
# file smaller than a block lives in a fragment block, and fragment blocks are not
# ordered: a boot that reads ~300 small files in order then seeks to wherever their
# fragments landed (a DVD: ~100 ms a seek). Without fragments those files are data
# blocks too, in the boot's order.
# The second form prints the extent of those files' data in IMAGE (packed with them):
# the byte offset where the last of them ends, so that the boot can read the image's
# start up to there in one pass (IMAGE.prefetch, read by dracut-module/90livesquash).
# Used by iso/mkimage.sh (make iso, with a profile) and iso/remaster --sort.
set -euo pipefail

if [[ ${1:-} == --extent ]]; then
	img=${2:?usage: boot-sort.sh --extent IMAGE SORTED}
	sorted=${3:?usage: boot-sort.sh --extent IMAGE SORTED}
	end=0
	while read -r p _; do
		e=$(rdsquashfs -s "/$p" "$img" 2> /dev/null | awk '
			/^Blocks start:/ { s = $3 } /^\tBlock #[0-9]+ size:/ { n += $4 }
			END { if (s != "") printf "%d\n", s + n }')
		[[ -n $e ]] && ((e > end)) && end=$e
	done < "$sorted"
	echo "$end"
	exit 0
fi

root=${1:?usage: boot-sort.sh ROOT SORT_FILE OUT_PREFIX}
sortfile=${2:?usage: boot-sort.sh ROOT SORT_FILE OUT_PREFIX}
out=${3:?usage: boot-sort.sh ROOT SORT_FILE OUT_PREFIX}

while read -r p prio; do
	[[ -e $root/$p || -L $root/$p ]] && echo "$p $prio"
done < "$sortfile" > "$out.sort"
# the action parser takes one level of backslashes and pathname() a glob: a glob
# character is written \\\C (the parser leaves \C), a backslash \\\\, a quote \"
cut -d' ' -f1 "$out.sort" |
	sed -e 's/[][\\*?]/\\\\\\&/g' -e 's/"/\\"/g' -e 's/.*/no-fragments@pathname("&")/' > "$out.actions"
wc -l < "$out.sort"
