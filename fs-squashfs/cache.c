// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: decompressed metadata and fragment blocks, and data blocks
 * that two readaheads read in parts.
 *
 * Both kinds are shared by many inodes and read piecemeal. A block that was
 * decompressed stays in memory until memory runs short, or until its
 * mount's cache reaches its cap; it is charged to the memory cgroup of the
 * reader that decompressed it, and reclaim within that cgroup frees it like
 * the cgroup's own page cache. Blocks wait on a list_lru, oldest first; a
 * block used again since reclaim last looked at it gets one more round. A
 * reader holds a reference to the block it copies from, so no lock is held
 * while copying or decompressing, and readers on several CPUs do not wait
 * for each other, except for a block one of them is decompressing: the
 * others wait for it rather than decompress it again.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/list_lru.h>
#include <linux/memcontrol.h>
#include <linux/seq_file.h>
#include <linux/wait_bit.h>
#include "internal.h"

struct sqfs_cblk {
	struct list_head lru;	/* on the cache's list_lru */
	refcount_t ref;		/* the cache's own, and one per reader */
	bool used;		/* read again since reclaim looked at it */
	int state;		/* SQFS_CBLK_LOADING, _READY or _FAILED */
	u64 pos;
	u64 next;		/* disk position just past the block */
	unsigned int len;	/* bytes of content */
	void *data;
};

static struct kmem_cache *sqfs_cblk_cachep;

int sqfs_cblk_cache_init(void)
{
	sqfs_cblk_cachep = kmem_cache_create("livesquash_cblk",
					     sizeof(struct sqfs_cblk), 0,
					     SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					     NULL);
	return sqfs_cblk_cachep ? 0 : -ENOMEM;
}

void sqfs_cblk_cache_exit(void)
{
	kmem_cache_destroy(sqfs_cblk_cachep);
}

/*
 * The most a mount keeps of each kind, in bytes of decompressed blocks (and
 * of directories' tables of names, dir.c): the cap, or a sixteenth of the
 * machine's memory if that is less (but always a few blocks). Fragment
 * blocks get the larger cap: each holds the tails of many small files, read
 * in any order, and a cache smaller than a tree's fragment blocks makes a
 * reader of the tree in random order decompress most blocks several times
 * (a 157 MB Debian tree has 509 of 128 KiB; with 256 cached, a cold cat in
 * random order ran at 0.87 of an uncapped cache).
 */
#define SQFS_META_CAP	SZ_64M
#define SQFS_FRAG_CAP	SZ_256M
#define SQFS_NAMES_CAP	SZ_32M
#define SQFS_CACHE_MIN	4

static unsigned long sqfs_mem_cap(unsigned long cap)
{
	return min_t(unsigned long, cap, (totalram_pages() << PAGE_SHIFT) / 16);
}

static void sqfs_cache_init(struct sqfs_bcache *c, unsigned int bufsize,
			    unsigned long cap)
{
	cap = sqfs_mem_cap(cap);
	xa_init(&c->blocks);
	atomic_long_set(&c->nr, 0);
	c->bufsize = bufsize;
	c->max = max_t(unsigned long, cap / bufsize, SQFS_CACHE_MIN);
}

void sqfs_cblk_put(struct sqfs_cblk *b)
{
	if (refcount_dec_and_test(&b->ref)) {
		kvfree(b->data);
		kmem_cache_free(sqfs_cblk_cachep, b);
	}
}

const void *sqfs_cblk_data(const struct sqfs_cblk *b)
{
	return b->data;
}

/* reclaim's look at a block: a second chance if used, else it goes */
static enum lru_status sqfs_cblk_isolate(struct list_head *item,
					 struct list_lru_one *list, void *arg)
{
	struct sqfs_cblk *b = container_of(item, struct sqfs_cblk, lru);

	if (READ_ONCE(b->used)) {
		WRITE_ONCE(b->used, false);
		return LRU_ROTATE;
	}
	list_lru_isolate_move(list, item, arg);
	return LRU_REMOVED;
}

/* forget the blocks on @gone (taken off the list_lru) and drop them */
static unsigned long sqfs_cache_dispose(struct sqfs_bcache *c,
					struct list_head *gone)
{
	struct sqfs_cblk *b, *tmp;
	unsigned long n = 0;

	list_for_each_entry_safe(b, tmp, gone, lru) {
		list_del_init(&b->lru);
		xa_cmpxchg(&c->blocks, (unsigned long)b->pos, b, NULL, 0);
		atomic_long_dec(&c->nr);
		sqfs_cblk_put(b);
		n++;
	}
	return n;
}

/* the cache holds more than its cap: drop its oldest blocks */
static void sqfs_cache_trim(struct sqfs_bcache *c)
{
	long excess = atomic_long_read(&c->nr) - (long)c->max;
	unsigned long walk;
	LIST_HEAD(gone);

	if (excess <= 0)
		return;
	/* twice: a first look may only take away second chances */
	walk = 2 * list_lru_count(&c->lru);
	while (excess > 0 && walk) {
		unsigned long nr = min_t(unsigned long, walk, excess);

		walk -= nr;
		sqfs_lru_walk(&c->lru, sqfs_cblk_isolate, &gone, nr);
		excess -= sqfs_cache_dispose(c, &gone);
	}
}

static void sqfs_cache_free(struct sqfs_bcache *c)
{
	struct sqfs_cblk *b;
	unsigned long idx;

	xa_for_each(&c->blocks, idx, b) {
		xa_erase(&c->blocks, idx);
		sqfs_lru_del(&c->lru, &b->lru);
		sqfs_cblk_put(b);
	}
	xa_destroy(&c->blocks);
	list_lru_destroy(&c->lru);
}

static unsigned long sqfs_shrink_count(struct shrinker *s,
				       struct shrink_control *sc)
{
	struct sqfs_sb *sbi = sqfs_shrinker_data(s);

	return list_lru_shrink_count(&sbi->frag.lru, sc) +
	       list_lru_shrink_count(&sbi->meta.lru, sc);
}

/* fragment blocks are bigger and cheaper to lose: they go first */
static unsigned long sqfs_shrink_scan(struct shrinker *s,
				      struct shrink_control *sc)
{
	struct sqfs_sb *sbi = sqfs_shrinker_data(s);
	struct sqfs_bcache *caches[] = { &sbi->frag, &sbi->meta };
	unsigned long freed = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(caches) && sc->nr_to_scan; i++) {
		LIST_HEAD(gone);

		sqfs_lru_shrink_walk(&caches[i]->lru, sc, sqfs_cblk_isolate,
				     &gone);
		freed += sqfs_cache_dispose(caches[i], &gone);
	}
	return freed;
}

int sqfs_caches_init(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	char name[sizeof(sb->s_id) + 16];
	int err;

	sqfs_cache_init(&sbi->meta, SQFS_META_SIZE, SQFS_META_CAP);
	sqfs_cache_init(&sbi->frag, sbi->block_size, SQFS_FRAG_CAP);
	sbi->names_max = sqfs_mem_cap(SQFS_NAMES_CAP);
	snprintf(name, sizeof(name), "livesquash-%s", sb->s_id);
	sbi->shrinker = sqfs_shrinker_new(SHRINKER_NUMA_AWARE |
					  SHRINKER_MEMCG_AWARE, name, sbi,
					  sqfs_shrink_count, sqfs_shrink_scan);
	if (!sbi->shrinker)
		return -ENOMEM;
	/* the lists first: the shrinker looks at them once it is started */
	err = list_lru_init_memcg(&sbi->meta.lru, sbi->shrinker) ?:
	      list_lru_init_memcg(&sbi->frag.lru, sbi->shrinker);
	if (err)
		return err;
	sqfs_shrinker_start(sbi->shrinker);
	return 0;
}

void sqfs_caches_free(struct sqfs_sb *sbi)
{
	if (!sbi->meta.bufsize)		/* the mount failed before */
		return;
	sqfs_shrinker_free(sbi->shrinker);
	sqfs_cache_free(&sbi->meta);
	sqfs_cache_free(&sbi->frag);
}

/* what the caches hold, for /proc/self/mountstats */
void sqfs_caches_show(struct seq_file *m, struct sqfs_sb *sbi)
{
	long meta = atomic_long_read(&sbi->meta.nr);
	long frag = atomic_long_read(&sbi->frag.nr);

	seq_printf(m, "\n\tmeta cache: %ld blocks, %ld bytes (at most %lu blocks)",
		   meta, meta * sbi->meta.bufsize, sbi->meta.max);
	seq_printf(m, "\n\tfragment cache: %ld blocks, %ld bytes (at most %lu blocks)",
		   frag, frag * sbi->frag.bufsize, sbi->frag.max);
}

/*
 * A block being decompressed is in the array already, marked as loading and
 * not yet on the list_lru: a reader that wants the same block meanwhile
 * waits for it rather than decompressing it a second time (two readers of
 * one file, or of files whose tails share a fragment block).
 */
enum { SQFS_CBLK_LOADING, SQFS_CBLK_READY, SQFS_CBLK_FAILED };

/*
 * The state of @b. Acquire: pairs with the release in sqfs_cache_settle, so
 * that a reader that sees it READY also sees the content and length.
 */
static int sqfs_cblk_state(const struct sqfs_cblk *b)
{
	return smp_load_acquire(&b->state);	/* see above */
}

/* wait for a block found loading (@b, referenced): false if that failed */
static bool sqfs_cblk_wait(struct sqfs_cblk *b)
{
	wait_var_event(&b->state, sqfs_cblk_state(b) != SQFS_CBLK_LOADING);
	return sqfs_cblk_state(b) == SQFS_CBLK_READY;
}

/*
 * A cached block, with a reference for the caller, or NULL (also when the
 * one being loaded failed: the caller then loads it, and reports its own
 * error)
 */
static struct sqfs_cblk *sqfs_cache_find(struct sqfs_bcache *c, u64 pos)
{
	struct sqfs_cblk *b;

	/*
	 * A block leaves the array before its cache reference is dropped, so
	 * one found under the array's lock has at least that reference.
	 */
	xa_lock(&c->blocks);
	b = xa_load(&c->blocks, (unsigned long)pos);
	if (b && b->pos == pos)
		refcount_inc(&b->ref);
	else
		b = NULL;
	xa_unlock(&c->blocks);
	if (b && sqfs_cblk_state(b) != SQFS_CBLK_READY &&
	    !sqfs_cblk_wait(b)) {
		sqfs_cblk_put(b);
		return NULL;
	}
	if (b && !READ_ONCE(b->used))
		WRITE_ONCE(b->used, true);
	return b;
}

/*
 * Put @b, about to be loaded, in the array: NULL if it is there now, else
 * the block another reader put there first (referenced; @b is then not
 * cached), or @b itself if there is no room (it is loaded uncached).
 */
static struct sqfs_cblk *sqfs_cache_claim(struct sqfs_bcache *c,
					  struct sqfs_cblk *b)
{
	struct sqfs_cblk *old;

	xa_lock(&c->blocks);
	old = __xa_cmpxchg(&c->blocks, (unsigned long)b->pos, NULL, b,
			   GFP_KERNEL);
	if (old && !xa_is_err(old) && old->pos == b->pos)
		refcount_inc(&old->ref);
	xa_unlock(&c->blocks);
	if (!old)
		return NULL;
	if (xa_is_err(old) || old->pos != b->pos)
		return b;	/* no memory, or another position, same index */
	return old;
}

/* @b, claimed, is loaded (@ok) or failed: let its waiters go on */
static void sqfs_cache_settle(struct sqfs_bcache *c, struct sqfs_cblk *b,
			      bool ok)
{
	if (ok) {
		atomic_long_inc(&c->nr);
		sqfs_lru_add(&c->lru, &b->lru);
	} else {
		xa_cmpxchg(&c->blocks, (unsigned long)b->pos, b, NULL, 0);
	}
	/* release: the content and length before the state (sqfs_cblk_state) */
	smp_store_release(&b->state, ok ? SQFS_CBLK_READY : SQFS_CBLK_FAILED);
	/* the state before wake_up_var's look for waiters (waitqueue_active) */
	smp_mb();
	wake_up_var(&b->state);
	if (ok)
		sqfs_cache_trim(c);
	else
		sqfs_cblk_put(b);	/* the cache's reference */
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
 * How to read a block: @word is the size word of a fragment or data block,
 * or 0 for a metadata block (whose header is on disk and which must end
 * before @end). A file's data block (@data) is read past the device's page
 * cache, as file data is, from run buffer @rb where that holds it.
 */
struct sqfs_cwhere {
	u32 word;
	bool data;
	u64 end;
	struct sqfs_rbuf *rb;
};

/* read and decompress the block at @pos into @b (see sqfs_cache_get) */
static int sqfs_cblk_fill(struct super_block *sb, struct sqfs_cblk *b,
			  unsigned int bufsize, const struct sqfs_cwhere *w)
{
	bool compressed;
	u32 len;
	int ret;

	if (w->word) {
		len = w->word & SQFS_DATA_LEN_MASK;
		compressed = !(w->word & SQFS_DATA_UNCOMPRESSED);
		if (w->data)
			ret = sqfs_decode_data(sb, w->rb, b->pos, len,
					       compressed, SQFS_DATA, b->data,
					       bufsize);
		else
			ret = sqfs_read_block(sb, b->pos, len, compressed,
					      b->data, bufsize);
	} else {
		ret = sqfs_meta_header(sb, b->pos, w->end, &len, &compressed);
		if (!ret)
			ret = sqfs_read_block(sb, b->pos + 2, len, compressed,
					      b->data, bufsize);
		len += 2;
	}
	if (ret < 0)
		return ret;
	b->next = b->pos + len;
	b->len = ret;
	return 0;
}

/*
 * load the block at @pos (see sqfs_cache_get), charged to the reader's
 * memory cgroup; or wait for the reader loading it already (-EAGAIN if
 * that reader's load failed)
 */
static struct sqfs_cblk *sqfs_cache_load(struct super_block *sb,
					 struct sqfs_bcache *c, u64 pos,
					 const struct sqfs_cwhere *w)
{
	struct sqfs_cblk *b, *old;
	int ret = -ENOMEM;

	b = kmem_cache_alloc_lru(sqfs_cblk_cachep, &c->lru, GFP_KERNEL);
	if (!b)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&b->lru);
	b->used = false;
	b->pos = pos;
	b->state = SQFS_CBLK_LOADING;
	refcount_set(&b->ref, 2);	/* ours, and the cache's */
	b->data = kvmalloc(c->bufsize, GFP_KERNEL_ACCOUNT | __GFP_RECLAIMABLE);
	if (!b->data)
		goto out_free;
	old = sqfs_cache_claim(c, b);
	if (old == b) {			/* not cached */
		refcount_set(&b->ref, 1);
		ret = sqfs_cblk_fill(sb, b, c->bufsize, w);
		if (ret)
			goto out_free;
		b->state = SQFS_CBLK_READY;
		return b;
	}
	if (old) {			/* another reader's */
		kvfree(b->data);
		kmem_cache_free(sqfs_cblk_cachep, b);
		if (sqfs_cblk_state(old) == SQFS_CBLK_READY ||
		    sqfs_cblk_wait(old))
			return old;
		sqfs_cblk_put(old);
		return ERR_PTR(-EAGAIN);	/* that load failed */
	}
	ret = sqfs_cblk_fill(sb, b, c->bufsize, w);
	sqfs_cache_settle(c, b, !ret);
	if (!ret)
		return b;
	sqfs_cblk_put(b);
	return ERR_PTR(ret);
out_free:
	kvfree(b->data);
	kmem_cache_free(sqfs_cblk_cachep, b);
	return ERR_PTR(ret);
}

/* the block at @pos, read as @w says, with a reference for the caller */
static struct sqfs_cblk *sqfs_cache_get(struct super_block *sb,
					struct sqfs_bcache *c, u64 pos,
					const struct sqfs_cwhere *w)
{
	struct sqfs_cblk *b;

	do {
		b = sqfs_cache_find(c, pos);
		if (!b)
			b = sqfs_cache_load(sb, c, pos, w);
	} while (b == ERR_PTR(-EAGAIN));
	return b;
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
	struct sqfs_cwhere w = { .end = c->end };
	struct sqfs_cblk *b;
	size_t n;

	while (len) {
		b = *pin;
		if (!b || b->pos != c->blk) {
			sqfs_meta_unpin(pin);
			b = sqfs_cache_get(sb, cache, c->blk, &w);
			if (IS_ERR(b))
				return PTR_ERR(b);
			/*
			 * a block cached for a cursor of another table: the
			 * bound a cold load checks holds for this one too
			 */
			if (b->next > c->end) {
				sqfs_cblk_put(b);
				return sqfs_corrupt(sb, "metadata block at %llu outside its table",
						    c->blk);
			}
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
	struct sqfs_cwhere w = { .word = word };
	struct sqfs_cblk *b;

	if (!(word & SQFS_DATA_LEN_MASK))
		return ERR_PTR(sqfs_corrupt(sb, "fragment block at %llu has length 0",
					    pos));
	b = sqfs_cache_get(sb, &SQFS_SB(sb)->frag, pos, &w);
	if (IS_ERR(b) || (off <= b->len && len <= b->len - off))
		return b;
	sqfs_corrupt(sb, "%u bytes at %u past fragment block at %llu (%u bytes)",
		     len, off, pos, b->len);
	sqfs_cblk_put(b);
	return ERR_PTR(-EUCLEAN);
}

/*
 * Data block @idx of a file at @pos, that a readahead holds only some pages
 * of (another reader has the others, or had them): kept with the fragment
 * blocks, so that the reader of the other pages, on another CPU, waits for
 * it or finds it instead of decompressing it again. It must hold @len bytes;
 * run buffer @rb may hold its bytes.
 */
struct sqfs_cblk *sqfs_data_get(struct super_block *sb, struct sqfs_rbuf *rb,
				u64 pos, u32 word, u32 len)
{
	struct sqfs_cwhere w = { .word = word, .data = true, .rb = rb };
	struct sqfs_cblk *b;

	if (!(word & SQFS_DATA_LEN_MASK))
		return ERR_PTR(sqfs_corrupt(sb, "data block at %llu has length 0",
					    pos));
	b = sqfs_cache_get(sb, &SQFS_SB(sb)->frag, pos, &w);
	if (IS_ERR(b) || b->len == len)
		return b;
	sqfs_corrupt(sb, "data block at %llu holds %u bytes, not %u", pos,
		     b->len, len);
	sqfs_cblk_put(b);
	return ERR_PTR(-EUCLEAN);
}
