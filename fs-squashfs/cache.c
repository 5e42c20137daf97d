// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: decompressed metadata and fragment blocks.
 *
 * Both kinds are shared by many inodes and read piecemeal. Every block that
 * was decompressed stays in memory until memory runs short: a shrinker then
 * frees the least recently used ones, down to a few of each kind. A reader
 * holds a reference to the block it copies from, so no lock is held while
 * copying or decompressing, and readers on several CPUs do not wait for
 * each other.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include "internal.h"

struct sqfs_cblk {
	struct list_head lru;	/* on the cache's list, under its lock */
	refcount_t ref;		/* the cache's own, and one per reader */
	u64 pos;
	u64 next;		/* disk position just past the block */
	unsigned int len;	/* bytes of content */
	void *data;
};

/* the shrinker keeps at least this many blocks of each kind */
#define SQFS_META_KEEP	8
#define SQFS_FRAG_KEEP	3

static void sqfs_cache_init(struct sqfs_bcache *c, unsigned int bufsize,
			    unsigned int keep)
{
	mutex_init(&c->lock);
	xa_init(&c->blocks);
	INIT_LIST_HEAD(&c->lru);
	c->nr = 0;
	c->bufsize = bufsize;
	c->keep = keep;
}

void sqfs_cblk_put(struct sqfs_cblk *b)
{
	if (refcount_dec_and_test(&b->ref)) {
		kvfree(b->data);
		kfree(b);
	}
}

const void *sqfs_cblk_data(const struct sqfs_cblk *b)
{
	return b->data;
}

/* drop the least recently used blocks past @keep, at most @max; c->lock held */
static unsigned long sqfs_cache_evict(struct sqfs_bcache *c,
				      unsigned long keep, unsigned long max)
{
	unsigned long freed = 0;
	struct sqfs_cblk *b;

	while (c->nr > keep && freed < max) {
		b = list_last_entry(&c->lru, struct sqfs_cblk, lru);
		list_del(&b->lru);
		xa_erase(&c->blocks, (unsigned long)b->pos);
		c->nr--;
		freed++;
		sqfs_cblk_put(b);
	}
	return freed;
}

static void sqfs_cache_free(struct sqfs_bcache *c)
{
	mutex_lock(&c->lock);
	sqfs_cache_evict(c, 0, ULONG_MAX);
	mutex_unlock(&c->lock);
	xa_destroy(&c->blocks);
}

static unsigned long sqfs_cache_excess(struct sqfs_bcache *c)
{
	unsigned long nr = READ_ONCE(c->nr);

	return nr > c->keep ? nr - c->keep : 0;
}

static unsigned long sqfs_shrink_count(struct shrinker *s,
				       struct shrink_control *sc)
{
	struct sqfs_sb *sbi = container_of(s, struct sqfs_sb, shrinker);

	return sqfs_cache_excess(&sbi->frag) + sqfs_cache_excess(&sbi->meta);
}

/* fragment blocks are bigger and cheaper to lose: they go first */
static unsigned long sqfs_shrink_scan(struct shrinker *s,
				      struct shrink_control *sc)
{
	struct sqfs_sb *sbi = container_of(s, struct sqfs_sb, shrinker);
	struct sqfs_bcache *caches[] = { &sbi->frag, &sbi->meta };
	unsigned long freed = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(caches) && freed < sc->nr_to_scan; i++) {
		if (!mutex_trylock(&caches[i]->lock))
			continue;
		freed += sqfs_cache_evict(caches[i], caches[i]->keep,
					  sc->nr_to_scan - freed);
		mutex_unlock(&caches[i]->lock);
	}
	return freed ?: SHRINK_STOP;
}

int sqfs_caches_init(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	int err;

	sqfs_cache_init(&sbi->meta, SQFS_META_SIZE, SQFS_META_KEEP);
	sqfs_cache_init(&sbi->frag, sbi->block_size, SQFS_FRAG_KEEP);
	sbi->shrinker.count_objects = sqfs_shrink_count;
	sbi->shrinker.scan_objects = sqfs_shrink_scan;
	sbi->shrinker.seeks = DEFAULT_SEEKS;
	err = register_shrinker(&sbi->shrinker, "livesquash-%s", sb->s_id);
	if (!err)
		sbi->shrinker_on = true;
	return err;
}

void sqfs_caches_free(struct sqfs_sb *sbi)
{
	if (!sbi->meta.bufsize)		/* the mount failed before */
		return;
	if (sbi->shrinker_on)
		unregister_shrinker(&sbi->shrinker);
	sqfs_cache_free(&sbi->meta);
	sqfs_cache_free(&sbi->frag);
}

/* a cached block, with a reference for the caller, or NULL */
static struct sqfs_cblk *sqfs_cache_find(struct sqfs_bcache *c, u64 pos)
{
	struct sqfs_cblk *b;

	mutex_lock(&c->lock);
	b = xa_load(&c->blocks, (unsigned long)pos);
	if (b && b->pos == pos) {
		refcount_inc(&b->ref);
		list_move(&b->lru, &c->lru);
	} else {
		b = NULL;
	}
	mutex_unlock(&c->lock);
	return b;
}

/*
 * Keep @b, unless another reader cached the same block meanwhile: then that
 * one is returned and @b dropped. Either way the caller holds a reference.
 */
static struct sqfs_cblk *sqfs_cache_add(struct sqfs_bcache *c,
					struct sqfs_cblk *b)
{
	unsigned long idx = (unsigned long)b->pos;
	struct sqfs_cblk *old;

	mutex_lock(&c->lock);
	old = xa_load(&c->blocks, idx);
	if (old && old->pos == b->pos) {
		refcount_inc(&old->ref);
		list_move(&old->lru, &c->lru);
		mutex_unlock(&c->lock);
		sqfs_cblk_put(b);
		return old;
	}
	if (old) {		/* another position with the same index */
		list_del(&old->lru);
		c->nr--;
		sqfs_cblk_put(old);
	}
	if (xa_err(xa_store(&c->blocks, idx, b, GFP_KERNEL))) {
		if (old)
			xa_erase(&c->blocks, idx);
		mutex_unlock(&c->lock);
		return b;	/* not cached: only the caller's reference */
	}
	refcount_inc(&b->ref);
	list_add(&b->lru, &c->lru);
	c->nr++;
	mutex_unlock(&c->lock);
	return b;
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

/* read and decompress the block at @pos (see sqfs_cache_get) */
static struct sqfs_cblk *sqfs_cache_load(struct super_block *sb,
					 struct sqfs_bcache *c, u64 pos,
					 u32 word, u64 end)
{
	struct sqfs_cblk *b = kmalloc(sizeof(*b), GFP_KERNEL);
	bool compressed;
	u32 len;
	int ret = -ENOMEM;

	if (!b)
		return ERR_PTR(-ENOMEM);
	b->data = kvmalloc(c->bufsize, GFP_KERNEL | __GFP_RECLAIMABLE);
	if (!b->data)
		goto out_free;
	if (word) {
		len = word & SQFS_DATA_LEN_MASK;
		compressed = !(word & SQFS_DATA_UNCOMPRESSED);
		ret = sqfs_read_block(sb, pos, len, compressed, b->data,
				      c->bufsize);
	} else {
		ret = sqfs_meta_header(sb, pos, end, &len, &compressed);
		if (!ret)
			ret = sqfs_read_block(sb, pos + 2, len, compressed,
					      b->data, c->bufsize);
		len += 2;
	}
	if (ret < 0)
		goto out_free;
	refcount_set(&b->ref, 1);
	b->pos = pos;
	b->next = pos + len;
	b->len = ret;
	return sqfs_cache_add(c, b);
out_free:
	kvfree(b->data);
	kfree(b);
	return ERR_PTR(ret);
}

/*
 * The block at @pos, with a reference for the caller. @word is the size
 * word of a fragment block, or 0 for a metadata block (whose header is on
 * disk and which must end before @end).
 */
static struct sqfs_cblk *sqfs_cache_get(struct super_block *sb,
					struct sqfs_bcache *c, u64 pos,
					u32 word, u64 end)
{
	struct sqfs_cblk *b = sqfs_cache_find(c, pos);

	return b ?: sqfs_cache_load(sb, c, pos, word, end);
}

/*
 * Copy @len bytes at cursor @c into @buf (NULL: skip them), moving @c on.
 * *@pin is the block read last (or NULL), with a reference: it is used as
 * long as the cursor stays in it, so that a reader going through a block
 * in small pieces looks it up once, and it is replaced when the cursor
 * moves on. The caller puts it (sqfs_meta_unpin) when done.
 */
int sqfs_meta_read_pin(struct super_block *sb, struct sqfs_mcur *c,
		       struct sqfs_cblk **pin, void *buf, size_t len)
{
	struct sqfs_bcache *cache = &SQFS_SB(sb)->meta;
	struct sqfs_cblk *b;
	size_t n;

	while (len) {
		b = *pin;
		if (!b || b->pos != c->blk) {
			sqfs_meta_unpin(pin);
			b = sqfs_cache_get(sb, cache, c->blk, 0, c->end);
			if (IS_ERR(b))
				return PTR_ERR(b);
			*pin = b;
		}
		if (c->off >= b->len) {
			if (c->off > b->len)
				return sqfs_corrupt(sb, "offset %u past metadata block at %llu",
						    c->off, c->blk);
			c->blk = b->next;
			c->off = 0;
			continue;
		}
		n = min_t(size_t, len, b->len - c->off);
		if (buf) {
			memcpy(buf, b->data + c->off, n);
			buf += n;
		}
		c->off += n;
		len -= n;
	}
	return 0;
}

void sqfs_meta_unpin(struct sqfs_cblk **pin)
{
	if (*pin)
		sqfs_cblk_put(*pin);
	*pin = NULL;
}

int sqfs_meta_read(struct super_block *sb, struct sqfs_mcur *c, void *buf,
		   size_t len)
{
	struct sqfs_cblk *pin = NULL;
	int err = sqfs_meta_read_pin(sb, c, &pin, buf, len);

	sqfs_meta_unpin(&pin);
	return err;
}

int sqfs_meta_skip(struct super_block *sb, struct sqfs_mcur *c, size_t len)
{
	return sqfs_meta_read(sb, c, NULL, len);
}

/*
 * The fragment block (@pos, @word), checked to hold @len bytes at @off;
 * the caller reads them at sqfs_cblk_data() + @off and puts the block.
 */
struct sqfs_cblk *sqfs_frag_get(struct super_block *sb, u64 pos, u32 word,
				u32 off, u32 len)
{
	struct sqfs_cblk *b;

	if (!(word & SQFS_DATA_LEN_MASK))
		return ERR_PTR(sqfs_corrupt(sb, "fragment block at %llu has length 0",
					    pos));
	b = sqfs_cache_get(sb, &SQFS_SB(sb)->frag, pos, word, 0);
	if (IS_ERR(b) || (off <= b->len && len <= b->len - off))
		return b;
	sqfs_corrupt(sb, "%u bytes at %u past fragment block at %llu (%u bytes)",
		     len, off, pos, b->len);
	sqfs_cblk_put(b);
	return ERR_PTR(-EUCLEAN);
}
