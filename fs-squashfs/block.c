// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: reading bytes from the device and decompressing blocks.
 *
 * Compressed bytes come from the block device's own page cache, so a block
 * that is read twice is fetched from the disk once.
 */
#include <linux/blkdev.h>
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include "internal.h"

static const struct sqfs_decomp_ops *const sqfs_decomps[] = {
#ifdef CONFIG_SQUASHFS_ZLIB
	&sqfs_zlib_ops,
#endif
#ifdef CONFIG_SQUASHFS_XZ
	&sqfs_xz_ops,
#endif
#ifdef CONFIG_SQUASHFS_LZO
	&sqfs_lzo_ops,
#endif
#ifdef CONFIG_SQUASHFS_LZ4
	&sqfs_lz4_ops,
#endif
#ifdef CONFIG_SQUASHFS_ZSTD
	&sqfs_zstd_ops,
#endif
};

const struct sqfs_decomp_ops *sqfs_find_decomp(unsigned int id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sqfs_decomps); i++)
		if (sqfs_decomps[i]->id == id)
			return sqfs_decomps[i];
	return NULL;
}

/* start reading every page of [first, last] that is not cached yet */
static void sqfs_raw_readahead(struct address_space *mapping, pgoff_t first,
			       pgoff_t last)
{
	DEFINE_READAHEAD(ractl, NULL, NULL, mapping, first);

	page_cache_ra_unbounded(&ractl, last - first + 1, 0);
}

int sqfs_read_raw(struct super_block *sb, u64 pos, void *buf, size_t len)
{
	struct address_space *mapping = sb->s_bdev->bd_inode->i_mapping;
	pgoff_t idx = pos >> PAGE_SHIFT;
	pgoff_t last;
	size_t done = 0;

	if (!len)
		return 0;
	if (pos > SQFS_SB(sb)->bytes_used ||
	    len > SQFS_SB(sb)->bytes_used - pos)
		return sqfs_corrupt(sb, "read of %zu bytes at %llu past the image end",
				    len, pos);

	last = (pos + len - 1) >> PAGE_SHIFT;
	if (last > idx)
		sqfs_raw_readahead(mapping, idx, last);

	for (; done < len; idx++) {
		unsigned int off = offset_in_page(pos + done);
		size_t n = min_t(size_t, PAGE_SIZE - off, len - done);
		struct page *page = read_mapping_page(mapping, idx, NULL);
		void *kaddr;

		if (IS_ERR(page)) {
			sqfs_err(sb, "I/O error reading the image at %llu",
				 pos + done);
			return PTR_ERR(page);
		}
		kaddr = kmap_local_page(page);
		memcpy(buf + done, kaddr + off, n);
		kunmap_local(kaddr);
		put_page(page);
		done += n;
	}
	return 0;
}

/*
 * Read the block of @len bytes at @pos, decompressing it unless it is stored
 * as is, into @out of @outlen bytes. Returns the length of its content.
 */
int sqfs_read_block(struct super_block *sb, u64 pos, u32 len, bool compressed,
		    void *out, u32 outlen)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	int ret;

	if (!len || len > sbi->inbuf_size ||
	    (!compressed && len > outlen))
		return sqfs_corrupt(sb, "block at %llu has a bad length %u",
				    pos, len);
	if (!compressed) {
		ret = sqfs_read_raw(sb, pos, out, len);
		return ret ?: len;
	}

	mutex_lock(&sbi->stream_lock);
	ret = sqfs_read_raw(sb, pos, sbi->inbuf, len);
	if (!ret)
		ret = sbi->dops->decompress(sbi->stream, sbi->inbuf, len, out,
					    outlen);
	mutex_unlock(&sbi->stream_lock);
	if (ret == -EUCLEAN || ret == 0)
		return sqfs_corrupt(sb, "%s block at %llu (%u bytes) does not decompress",
				    sbi->dops->name, pos, len);
	return ret;
}
