// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: regular file data.
 *
 * A file is a run of blocks, each stored compressed, as is, or not at all
 * (sparse), and maybe a tail in a shared fragment block. A block is
 * decompressed once and spread over every page-cache page it covers.
 */
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include "internal.h"

/*
 * A walk of a long block list keeps a checkpoint every SQFS_SEEK_STEP blocks,
 * so that a read far into a huge file starts from the nearest one instead of
 * from the first block.
 */
#define SQFS_SEEK_STEP	1024

struct sqfs_seek {
	u64 pos;
	struct sqfs_mcur cur;
};

/* start the walk for block @idx at the nearest known place before it */
static void sqfs_walk_seek(struct sqfs_inode *si, u64 idx)
{
	u64 k = si->seek ? min_t(u64, idx / SQFS_SEEK_STEP, si->nseek) : 0;

	if (idx >= si->walk_idx && k * SQFS_SEEK_STEP <= si->walk_idx)
		return;
	if (k) {
		si->walk_idx = k * SQFS_SEEK_STEP;
		si->walk_pos = si->seek[k - 1].pos;
		si->walk = si->seek[k - 1].cur;
	} else {
		si->walk_idx = 0;
		si->walk_pos = si->start;
		si->walk = si->list;
	}
}

/* the walk stands at a multiple of SQFS_SEEK_STEP: remember it */
static void sqfs_walk_mark(struct sqfs_inode *si)
{
	u64 k = si->walk_idx / SQFS_SEEK_STEP;

	if (!k || k != si->nseek + 1)
		return;
	if (!si->seek) {
		si->seek = kvmalloc_array(si->nblocks / SQFS_SEEK_STEP,
					  sizeof(*si->seek), GFP_KERNEL);
		if (!si->seek)
			return;
	}
	si->seek[k - 1].pos = si->walk_pos;
	si->seek[k - 1].cur = si->walk;
	si->nseek = k;
}

/* disk position and size word of block @idx; under data_lock */
static int sqfs_block_at(struct inode *inode, u64 idx, u64 *pos, u32 *word)
{
	struct sqfs_inode *si = SQFS_I(inode);
	__le32 words[64];
	unsigned int i, n;
	int err;

	sqfs_walk_seek(si, idx);
	while (si->walk_idx <= idx) {
		if (si->walk_idx % SQFS_SEEK_STEP == 0)
			sqfs_walk_mark(si);
		n = min_t(u64, idx - si->walk_idx + 1,
			  SQFS_SEEK_STEP - si->walk_idx % SQFS_SEEK_STEP);
		n = min_t(unsigned int, n, ARRAY_SIZE(words));
		err = sqfs_meta_read(inode->i_sb, &si->walk, words,
				     n * sizeof(words[0]));
		if (err) {
			si->walk_idx = U64_MAX;	/* restart next time */
			return err;
		}
		for (i = 0; i < n; i++) {
			*word = le32_to_cpu(words[i]);
			*pos = si->walk_pos;
			si->walk_pos += *word & SQFS_DATA_LEN_MASK;
			si->walk_idx++;
		}
	}
	return 0;
}

void sqfs_file_evict(struct inode *inode)
{
	kvfree(SQFS_I(inode)->seek);
}

/*
 * Decompress block @idx of @inode into sbi->databuf (under data_lock).
 * Returns its length: the block size, or less for the file's last block.
 */
static int sqfs_load_block(struct inode *inode, u64 idx)
{
	struct super_block *sb = inode->i_sb;
	struct sqfs_sb *sbi = SQFS_SB(sb);
	struct sqfs_inode *si = SQFS_I(inode);
	u64 off = idx << sbi->block_log;
	u32 want = min_t(u64, sbi->block_size, inode->i_size - off);
	u64 pos, fpos;
	u32 word, fword;
	int ret;

	if (idx >= si->nblocks) {	/* the tail, in a fragment */
		ret = sqfs_frag_lookup(sb, si->frag, &fpos, &fword);
		if (!ret)
			ret = sqfs_frag_read(sb, fpos, fword, si->frag_off,
					     sbi->databuf, want);
		return ret ?: want;
	}
	ret = sqfs_block_at(inode, idx, &pos, &word);
	if (ret)
		return ret;
	if (!word) {			/* sparse */
		memset(sbi->databuf, 0, want);
		return want;
	}
	ret = sqfs_read_block(sb, pos, word & SQFS_DATA_LEN_MASK,
			      !(word & SQFS_DATA_UNCOMPRESSED), sbi->databuf,
			      sbi->block_size);
	if (ret >= 0 && ret != want)
		ret = sqfs_corrupt(sb, "inode %lu block %llu holds %d bytes, not %u",
				   inode->i_ino, idx, ret, want);
	return ret;
}

/* fill @folio from the block in databuf, which starts at file page @first */
static void sqfs_fill_folio(struct folio *folio, const void *data, int len,
			    pgoff_t first)
{
	size_t off = (folio->index - first) << PAGE_SHIFT;
	size_t n = off < len ? min_t(size_t, len - off, folio_size(folio)) : 0;
	void *kaddr = kmap_local_folio(folio, 0);

	memcpy(kaddr, data + off, n);
	memset(kaddr + n, 0, folio_size(folio) - n);
	kunmap_local(kaddr);
	flush_dcache_folio(folio);
	folio_mark_uptodate(folio);
}

static inline pgoff_t sqfs_block_first_page(struct super_block *sb, u64 idx)
{
	return idx << (SQFS_SB(sb)->block_log - PAGE_SHIFT);
}

/* fill the other pages of the block, where that costs no waiting */
static void sqfs_fill_siblings(struct inode *inode, u64 idx, int len,
			       pgoff_t skip)
{
	struct address_space *mapping = inode->i_mapping;
	pgoff_t first = sqfs_block_first_page(inode->i_sb, idx);
	pgoff_t last = first + DIV_ROUND_UP(len, PAGE_SIZE);
	pgoff_t i;

	for (i = first; i < last; i++) {
		struct folio *folio;

		if (i == skip)
			continue;
		folio = __filemap_get_folio(mapping, i,
					    FGP_LOCK | FGP_CREAT | FGP_NOWAIT,
					    readahead_gfp_mask(mapping));
		if (!folio)
			continue;
		if (!folio_test_uptodate(folio))
			sqfs_fill_folio(folio, SQFS_SB(inode->i_sb)->databuf,
					len, first);
		folio_unlock(folio);
		folio_put(folio);
	}
}

static int sqfs_read_folio(struct file *file, struct folio *folio)
{
	struct inode *inode = folio->mapping->host;
	struct sqfs_sb *sbi = SQFS_SB(inode->i_sb);
	u64 idx = (u64)folio->index >> (sbi->block_log - PAGE_SHIFT);
	int len = 0;

	mutex_lock(&sbi->data_lock);
	if (folio_pos(folio) < i_size_read(inode))
		len = sqfs_load_block(inode, idx);
	if (len >= 0) {
		sqfs_fill_folio(folio, sbi->databuf, len,
				sqfs_block_first_page(inode->i_sb, idx));
		if (len)
			sqfs_fill_siblings(inode, idx, len, folio->index);
	}
	mutex_unlock(&sbi->data_lock);
	folio_unlock(folio);
	return len < 0 ? len : 0;
}

static void sqfs_readahead(struct readahead_control *rac)
{
	struct inode *inode = rac->mapping->host;
	struct sqfs_sb *sbi = SQFS_SB(inode->i_sb);
	u64 loaded = U64_MAX;
	struct folio *folio;
	int len = 0;

	mutex_lock(&sbi->data_lock);
	while ((folio = readahead_folio(rac))) {
		u64 idx = (u64)folio->index >> (sbi->block_log - PAGE_SHIFT);

		if (folio_pos(folio) >= i_size_read(inode)) {
			len = 0;
			loaded = U64_MAX;
		} else if (idx != loaded) {
			len = sqfs_load_block(inode, idx);
			loaded = len < 0 ? U64_MAX : idx;
		}
		if (len >= 0)
			sqfs_fill_folio(folio, sbi->databuf, len,
					sqfs_block_first_page(inode->i_sb, idx));
		folio_unlock(folio);
	}
	mutex_unlock(&sbi->data_lock);
}

const struct address_space_operations sqfs_file_aops = {
	.read_folio = sqfs_read_folio,
	.readahead = sqfs_readahead,
};
