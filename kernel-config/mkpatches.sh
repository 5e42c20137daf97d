#!/usr/bin/env bash
# Write a patch series against linux-source-6.1 that replaces fs/squashfs with
# our fs-squashfs/, one patch per concern, plus its documentation.
#
# usage: mkpatches.sh KERNEL_SOURCE_TAR OUTDIR [--test OBJDIR CONFIG]
#   --test: apply the series with `patch -p1` to a fresh tree and build the
#           driver in it with CONFIG (a kernel .config).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tar=$(realpath "$1") out=$(realpath -m "$2")
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/livesquash-patches.XXXXXX")
trap 'rm -rf "$work"' EXIT
drv=$top/fs-squashfs
ver=$(sed -n 's/^#define LIVESQUASH_VERSION\t"\(.*\)"/\1/p' "$drv/internal.h")

echo "patches: extracting fs/squashfs and its documentation from $tar"
mkdir -p "$work/tree"
tar -xJf "$tar" -C "$work/tree" --strip-components=1 \
    --wildcards '*/fs/squashfs/*' '*/Documentation/filesystems/squashfs.rst'
cd "$work/tree"
export GIT_AUTHOR_NAME="livesquash" GIT_AUTHOR_EMAIL="livesquash@localhost"
export GIT_COMMITTER_NAME="livesquash" GIT_COMMITTER_EMAIL="livesquash@localhost"
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
git init -q && git add -A && git commit -qm "linux-source-6.1: fs/squashfs as shipped"

commit() { # subject body files...
    local subject=$1 body=$2
    shift 2
    for f in "$@"; do
        mkdir -p "$(dirname "fs/squashfs/$f")"
        cp "$drv/$f" "fs/squashfs/$f"
        git add "fs/squashfs/$f"
    done
    git commit -qm "$subject" -m "$body"
}

git rm -rq fs/squashfs
git commit -qm "squashfs: remove the old reader" -m "The following patches add a new squashfs 4.0 reader, livesquash $ver,
written from the on-disk format. It reads the same images, with the same
mount type and Kconfig symbols (SQUASHFS, SQUASHFS_XATTR and one per
compressor), so existing configs and fstabs keep working."

commit "squashfs: on-disk format" \
"The superblock, inodes, directory runs and indexes, lookup table entries,
xattr records and compressor options, exactly as an image holds them, in
one header with __le types and static_assert sizes." squashfs_fs.h
commit "squashfs: in-memory state" \
"Per-superblock and per-inode state, the interfaces between the files of
the driver, and the kernel interfaces that differ between the kernels it is
built for (6.1 and 6.12), each behind one helper in compat.h." internal.h compat.h
commit "squashfs: block reading and decompressors" \
"Metadata and fragments come through the block device's page cache, data
blocks straight from the disk into read buffers; a decompression stream is
taken only once the bytes are read, never across I/O, so nested loop mounts
and slow media cannot stall each other; idle buffers and streams go to memory
reclaim; each compressor is a small ops table over the kernel's own library
(zlib_inflate, xz_dec, lzo1x, lz4, zstd)." block.c zlib.c xz.c lzo.c lz4.c zstd.c
commit "squashfs: metadata and fragment caches" \
"Decompressed metadata and fragment blocks of a mount, charged to the reader's
memory cgroup, on a memcg-aware list_lru with a shrinker and capped per mount,
and reads that follow a record from one metadata block into the next." cache.c
commit "squashfs: lookup tables" \
"Ids (kept decoded), fragments and export table: the position arrays are
read and checked once at mount." tables.c
commit "squashfs: inodes" \
"All fourteen inode types, checked before use; hard links share inode
numbers." inode.c
commit "squashfs: directories" \
"readdir with resumable positions and lookup, both starting from the
directory index." dir.c
commit "squashfs: regular files" \
"Blocks, fragments and holes; one decompression fills every page a block
covers; a readahead's blocks decompressed on several CPUs; the fragment block
ahead of a reader going through them in order; block-list checkpoints for huge
files." file.c
commit "squashfs: export operations" \
"File handles through the export table." export.c
commit "squashfs: extended attributes" \
"user., trusted. and security. attributes, with out-of-line values." xattr.c
commit "squashfs: superblock and mount" \
"Superblock checks, errors=continue|panic, statfs, the caches' figures in
mountstats, registration." super.c
commit "squashfs: Kconfig and Makefile" \
"Same symbols as before, so existing configs carry over." Kconfig Makefile
cp "$drv/Documentation/squashfs.rst" Documentation/filesystems/squashfs.rst
git add Documentation/filesystems/squashfs.rst
git commit -qm "Documentation: squashfs: describe the format and the new reader" \
    -m "In our own words: the layout we read, the caches and the mount options."

rm -rf "$out"
mkdir -p "$out"
git format-patch -q -o "$out" "$(git rev-list --max-parents=0 HEAD)..HEAD"
echo "patches: $(find "$out" -name '*.patch' | wc -l) patches in $out"

if [ "${1:-}" = "--test" ]; then
    obj=$(realpath -m "$2") config=$(realpath "$3")
    echo "patches: testing on a fresh tree in $obj"
    rm -rf "$obj" && mkdir -p "$obj/src"
    tar -xJf "$tar" -C "$obj/src" --strip-components=1
    for p in "$out"/*.patch; do
        patch -s -p1 -d "$obj/src" < "$p" || { echo "patches: $p does not apply" >&2; exit 1; }
    done
    mkdir -p "$obj/build" && cp "$config" "$obj/build/.config"
    env -u BLOCK_SIZE -u BLOCKSIZE make -s -C "$obj/src" O="$obj/build" olddefconfig
    env -u BLOCK_SIZE -u BLOCKSIZE make -s -C "$obj/src" O="$obj/build" CC="ccache gcc" \
        -j"$(nproc)" W=1 fs/squashfs/
    echo "patches: the series applies to a fresh tree and fs/squashfs builds (W=1)"
fi
