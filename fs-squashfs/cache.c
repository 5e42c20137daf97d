// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: decompressed metadata and fragment blocks.
 *
 * Both kinds are shared by many inodes and read piecemeal, so the last few
 * decompressed blocks of each kind are kept, and the least recently used one
 * is replaced on a miss. Callers copy out what they need under the lock.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "internal.h"

int sqfs_cache_init(struct sqfs_bcache *c, unsigned int nr,
		    unsigned int bufsize)
{
	unsigned int i;

	mutex_init(&c->lock);
	c->nr = nr;
	c->bufsize = bufsize;
	c->clock = 0;
	c->ent = kcalloc(nr, sizeof(*c->ent), GFP_KERNEL);
	if (!c->ent)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		c->ent[i].data = kvmalloc(bufsize, GFP_KERNEL);
		if (!c->ent[i].data)
			return -ENOMEM;
	}
	return 0;
}

void sqfs_cache_free(struct sqfs_bcache *c)
{
	unsigned int i;

	if (!c->ent)
		return;
	for (i = 0; i < c->nr; i++)
		kvfree(c->ent[i].data);
	kfree(c->ent);
	c->ent = NULL;
}

/* the header of the metadata block at @pos: its stored length and kind */
static int sqfs_meta_header(struct super_block *sb, u64 pos, u64 end,
			    u32 *len, bool *compressed)
{
	__le16 hdr;
	int err;

	if (pos >= end || end - pos < sizeof(hdr))
		return sqfs_corrupt(sb, "metadata block at %llu is outside its table",
				    pos);
	err = sqfs_read_raw(sb, pos, &hdr, sizeof(hdr));
	if (err)
		return err;
	*len = le16_to_cpu(hdr) & SQFS_META_LEN_MASK;
	*compressed = !(le16_to_cpu(hdr) & SQFS_META_UNCOMPRESSED);
	if (!*len || *len > SQFS_META_SIZE ||
	    *len > end - pos - sizeof(hdr))
		return sqfs_corrupt(sb, "metadata block at %llu has a bad length %u",
				    pos, *len);
	return 0;
}

/*
 * Find the block at @pos in @c, reading it on a miss. @word is the size word
 * of a fragment block, or 0 for a metadata block (whose header is on disk and
 * which must end before @end). Called with c->lock held.
 */
static struct sqfs_cent *sqfs_cache_get(struct super_block *sb,
					struct sqfs_bcache *c, u64 pos,
					u32 word, u64 end)
{
	struct sqfs_cent *e, *victim = &c->ent[0];
	u32 len;
	bool compressed;
	int ret;
	unsigned int i;

	for (i = 0; i < c->nr; i++) {
		e = &c->ent[i];
		if (e->len && e->pos == pos) {
			e->stamp = ++c->clock;
			return e;
		}
		if (e->stamp < victim->stamp)
			victim = e;
	}

	e = victim;
	e->len = 0;
	if (word) {
		len = word & SQFS_DATA_LEN_MASK;
		compressed = !(word & SQFS_DATA_UNCOMPRESSED);
		ret = sqfs_read_block(sb, pos, len, compressed, e->data,
				      c->bufsize);
	} else {
		ret = sqfs_meta_header(sb, pos, end, &len, &compressed);
		if (!ret)
			ret = sqfs_read_block(sb, pos + 2, len, compressed,
					      e->data, c->bufsize);
		len += 2;
	}
	if (ret < 0)
		return ERR_PTR(ret);
	e->pos = pos;
	e->next = pos + len;
	e->len = ret;
	e->stamp = ++c->clock;
	return e;
}

/* copy @len bytes at cursor @c into @buf (NULL: skip them), moving @c on */
static int sqfs_meta_copy(struct super_block *sb, struct sqfs_mcur *c,
			  void *buf, size_t len)
{
	struct sqfs_bcache *cache = &SQFS_SB(sb)->meta;
	struct sqfs_cent *e;
	size_t n;
	int err = 0;

	mutex_lock(&cache->lock);
	while (len) {
		e = sqfs_cache_get(sb, cache, c->blk, 0, c->end);
		if (IS_ERR(e)) {
			err = PTR_ERR(e);
			break;
		}
		if (c->off >= e->len) {
			if (c->off > e->len) {
				err = sqfs_corrupt(sb, "offset %u past metadata block at %llu",
						   c->off, c->blk);
				break;
			}
			c->blk = e->next;
			c->off = 0;
			continue;
		}
		n = min_t(size_t, len, e->len - c->off);
		if (buf) {
			memcpy(buf, e->data + c->off, n);
			buf += n;
		}
		c->off += n;
		len -= n;
	}
	mutex_unlock(&cache->lock);
	return err;
}

int sqfs_meta_read(struct super_block *sb, struct sqfs_mcur *c, void *buf,
		   size_t len)
{
	return sqfs_meta_copy(sb, c, buf, len);
}

int sqfs_meta_skip(struct super_block *sb, struct sqfs_mcur *c, size_t len)
{
	return sqfs_meta_copy(sb, c, NULL, len);
}

/* copy @len bytes at @off of the fragment block (@pos, @word) into @buf */
int sqfs_frag_read(struct super_block *sb, u64 pos, u32 word, u32 off,
		   void *buf, u32 len)
{
	struct sqfs_bcache *cache = &SQFS_SB(sb)->frag;
	struct sqfs_cent *e;
	int err = 0;

	if (!(word & SQFS_DATA_LEN_MASK))
		return sqfs_corrupt(sb, "fragment block at %llu has length 0", pos);
	mutex_lock(&cache->lock);
	e = sqfs_cache_get(sb, cache, pos, word, 0);
	if (IS_ERR(e))
		err = PTR_ERR(e);
	else if (off > e->len || len > e->len - off)
		err = sqfs_corrupt(sb, "%u bytes at %u past fragment block at %llu (%u bytes)",
				   len, off, pos, e->len);
	else
		memcpy(buf, e->data + off, len);
	mutex_unlock(&cache->lock);
	return err;
}
