// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: the lookup tables (ids, fragments, export).
 *
 * Each table is a run of metadata blocks followed by an array of their disk
 * positions, to which the superblock points. The arrays are read once at
 * mount; the ids, few and used by every inode, are kept decoded.
 */
#include <linux/slab.h>
#include "internal.h"

/* read and check the block position array of a table of @count entries */
u64 *sqfs_table_blocks(struct super_block *sb, u64 start, u64 count,
		       unsigned int esize, const char *what)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	u64 nblocks = DIV_ROUND_UP(count * esize, SQFS_META_SIZE);
	u64 *blocks;
	u64 i;
	int err;

	if (start >= sbi->bytes_used ||
	    nblocks * sizeof(u64) > sbi->bytes_used - start) {
		sqfs_corrupt(sb, "%s table at %llu is outside the image", what, start);
		return ERR_PTR(-EUCLEAN);
	}
	blocks = kvmalloc_array(nblocks, sizeof(u64), GFP_KERNEL);
	if (!blocks)
		return ERR_PTR(-ENOMEM);
	err = sqfs_read_raw(sb, start, blocks, nblocks * sizeof(u64));
	if (err)
		goto fail;
	for (i = 0; i < nblocks; i++) {
		blocks[i] = le64_to_cpu((__force __le64)blocks[i]);
		if (blocks[i] < sbi->dir_table || blocks[i] >= start ||
		    (i && blocks[i] <= blocks[i - 1])) {
			err = sqfs_corrupt(sb, "%s table block %llu at %llu is out of place",
					   what, i, blocks[i]);
			goto fail;
		}
	}
	return blocks;
fail:
	kvfree(blocks);
	return ERR_PTR(err);
}

int sqfs_table_entry(struct super_block *sb, const u64 *blocks, u64 start,
		     u64 idx, unsigned int esize, void *out)
{
	u64 byte = idx * esize;
	struct sqfs_mcur c = {
		.blk = blocks[byte / SQFS_META_SIZE],
		.off = byte % SQFS_META_SIZE,
		.end = start,
	};

	return sqfs_meta_read(sb, &c, out, esize);
}

static int sqfs_ids_load(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	unsigned int i;
	u64 *blocks;
	int err = 0;

	if (!sbi->id_count)
		return sqfs_corrupt(sb, "the id table is empty");
	blocks = sqfs_table_blocks(sb, sbi->id_table, sbi->id_count,
				   sizeof(__le32), "id");
	if (IS_ERR(blocks))
		return PTR_ERR(blocks);
	sbi->ids = kvmalloc_array(sbi->id_count, sizeof(u32), GFP_KERNEL);
	if (!sbi->ids) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < sbi->id_count && !err; i += SQFS_META_SIZE / 4) {
		struct sqfs_mcur c = {
			.blk = blocks[i / (SQFS_META_SIZE / 4)],
			.end = sbi->id_table,
		};
		unsigned int n = min(sbi->id_count - i, SQFS_META_SIZE / 4);

		err = sqfs_meta_read(sb, &c, &sbi->ids[i], n * sizeof(u32));
	}
	for (i = 0; i < sbi->id_count && !err; i++)
		sbi->ids[i] = le32_to_cpu((__force __le32)sbi->ids[i]);
out:
	kvfree(blocks);
	return err;
}

int sqfs_tables_load(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	u64 *blocks;
	int err;

	err = sqfs_ids_load(sb);
	if (err)
		return err;
	if (sbi->frag_count) {
		blocks = sqfs_table_blocks(sb, sbi->frag_table, sbi->frag_count,
					   sizeof(struct sqfs_frag_entry),
					   "fragment");
		if (IS_ERR(blocks))
			return PTR_ERR(blocks);
		sbi->frag_blocks = blocks;
	}
	if (sbi->export_table != SQFS_NO_TABLE) {
		blocks = sqfs_table_blocks(sb, sbi->export_table,
					   sbi->inode_count, sizeof(__le64),
					   "export");
		if (IS_ERR(blocks))
			return PTR_ERR(blocks);
		sbi->export_blocks = blocks;
	}
	return sqfs_xattr_load(sb);
}

void sqfs_tables_free(struct sqfs_sb *sbi)
{
	kvfree(sbi->ids);
	kvfree(sbi->frag_blocks);
	kvfree(sbi->export_blocks);
	kvfree(sbi->xattr_blocks);
}

int sqfs_frag_lookup(struct super_block *sb, u32 idx, u64 *pos, u32 *word)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	struct sqfs_frag_entry fe;
	int err;

	if (idx >= sbi->frag_count)
		return sqfs_corrupt(sb, "fragment %u does not exist (%u in all)",
				    idx, sbi->frag_count);
	err = sqfs_table_entry(sb, sbi->frag_blocks, sbi->frag_table, idx,
			       sizeof(fe), &fe);
	if (err)
		return err;
	*pos = le64_to_cpu(fe.start);
	*word = le32_to_cpu(fe.size);
	if ((*word & SQFS_DATA_LEN_MASK) > sbi->block_size)
		return sqfs_corrupt(sb, "fragment %u has a bad size word %#x",
				    idx, *word);
	return 0;
}

int sqfs_export_lookup(struct super_block *sb, u32 ino, u64 *ref)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	__le64 r;
	int err;

	if (!ino || ino > sbi->inode_count)
		return -ESTALE;
	if (!sbi->export_blocks)
		return -EOPNOTSUPP;
	err = sqfs_table_entry(sb, sbi->export_blocks, sbi->export_table,
			       ino - 1, sizeof(r), &r);
	if (err)
		return err;
	*ref = le64_to_cpu(r);
	return 0;
}
