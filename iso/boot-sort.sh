#!/bin/bash
# Options that pack a root tree's files in a boot's order, for mksquashfs.
# usage: boot-sort.sh ROOT SORT_FILE OUT_PREFIX
# SORT_FILE is an mksquashfs -sort file ("PATH PRIORITY" lines, PATH relative to
# ROOT; iso/boot-order.sh makes one from a boot). Writes OUT_PREFIX.sort, its lines
# for the paths ROOT has, and OUT_PREFIX.actions, an mksquashfs -action-file with a
# no-fragments action for each of those paths; prints how many paths there are.
# Why the actions: -sort orders data blocks, but a file smaller than a block lives
# in a fragment block, and fragment blocks are not ordered: a boot that reads ~300
# small files in order then seeks to wherever their fragments landed (a DVD: ~100 ms
# a seek). Without fragments those files are data blocks too, in the boot's order.
# Used by iso/mkimage.sh (make iso BOOT_ORDER=1) and iso/remaster --sort.
set -euo pipefail

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
