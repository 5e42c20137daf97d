// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: reading bytes from the device and decompressing blocks.
 *
 * Metadata and fragment blocks come from the block device's page cache, so
 * a block that is read twice is fetched from the disk once, and a table is
 * fetched with one request. Data blocks bypass it, as in the stock driver
 * and EROFS: their bytes are wanted once (the file's page cache keeps what
 * they decompress to), and caching them would keep a second, compressed
 * copy of everything read, in pages freshly allocated (and zeroed) for each
 * read. A run of data blocks that a readahead asks for is read with one
 * request into a run buffer; a lone block straight into the buffer of the
 * worker that decompresses it. Both kinds of buffer are used again and
 * again.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/wait.h>
#include <linux/cpumask.h>
#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/sched/mm.h>
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

/*
 * Decompression streams are shared by every mount that uses the same
 * compressor: at most one per online CPU, made when first needed, kept on
 * an idle list between blocks, given back to memory reclaim when idle (see
 * sqfs_idle_scan) and freed when the last such mount goes. So several CPUs
 * decompress at once, while sixteen mounts cost no more streams than one.
 * A stream is taken only to decompress bytes already read, and never held
 * across I/O or a lock: a read that waits for its device (a slow medium, a
 * loop device whose file lies on another squashfs mount with the same
 * compressor) holds no stream that another mount's reads could need.
 */
struct sqfs_pool {
	spinlock_t lock;	/* guards idle, nidle and total */
	struct list_head idle;
	unsigned int nidle;
	unsigned int total;	/* workers that exist, idle or busy */
	unsigned int users;	/* mounts; under sqfs_pool_mutex */
	wait_queue_head_t wait;
};

static struct sqfs_pool sqfs_pools[ARRAY_SIZE(sqfs_decomps)];
static DEFINE_MUTEX(sqfs_pool_mutex);
static unsigned int sqfs_mounts;	/* under sqfs_pool_mutex */

void sqfs_pools_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sqfs_pools); i++) {
		spin_lock_init(&sqfs_pools[i].lock);
		INIT_LIST_HEAD(&sqfs_pools[i].idle);
		init_waitqueue_head(&sqfs_pools[i].wait);
	}
}

const struct sqfs_decomp_ops *sqfs_find_decomp(unsigned int id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sqfs_decomps); i++)
		if (sqfs_decomps[i]->id == id)
			return sqfs_decomps[i];
	return NULL;
}

static void sqfs_worker_free(const struct sqfs_decomp_ops *ops,
			     struct sqfs_worker *w)
{
	if (!IS_ERR_OR_NULL(w->stream))
		ops->destroy(w->stream);
	kfree(w);
}

static void sqfs_workers_free(const struct sqfs_decomp_ops *ops,
			      struct list_head *list)
{
	struct sqfs_worker *w, *tmp;

	list_for_each_entry_safe(w, tmp, list, node)
		sqfs_worker_free(ops, w);
}

static struct sqfs_worker *sqfs_worker_new(const struct sqfs_decomp_ops *ops)
{
	struct sqfs_worker *w = kzalloc(sizeof(*w), GFP_NOFS);
	unsigned int nofs;

	if (!w)
		return NULL;
	/* a reader of ours may hold page locks: reclaim must not wait on them */
	nofs = memalloc_nofs_save();
	w->stream = ops->create();
	memalloc_nofs_restore(nofs);
	if (IS_ERR(w->stream)) {
		sqfs_worker_free(ops, w);
		return NULL;
	}
	return w;
}

/*
 * A read straight from the disk covers whole logical blocks of the device
 * (at most a page each): a buffer has room for one more on each side.
 */
#define SQFS_DIRECT_SLACK	(2 * PAGE_SIZE)

void sqfs_pool_join(struct sqfs_sb *sbi)
{
	unsigned int i = 0;

	while (sqfs_decomps[i] != sbi->dops)
		i++;
	sbi->pool = &sqfs_pools[i];
	mutex_lock(&sqfs_pool_mutex);
	sbi->pool->users++;
	sqfs_mounts++;
	mutex_unlock(&sqfs_pool_mutex);
}

void sqfs_pool_leave(struct sqfs_sb *sbi)
{
	struct sqfs_pool *p = sbi->pool;
	LIST_HEAD(gone);

	if (!p)
		return;
	mutex_lock(&sqfs_pool_mutex);
	if (!--sqfs_mounts)
		sqfs_rbufs_drain();
	if (!--p->users) {
		spin_lock(&p->lock);
		list_splice_init(&p->idle, &gone);
		p->nidle = 0;
		p->total = 0;
		spin_unlock(&p->lock);
	}
	mutex_unlock(&sqfs_pool_mutex);
	sqfs_workers_free(sbi->dops, &gone);
}

static bool sqfs_pool_ready(struct sqfs_pool *p)
{
	return !list_empty_careful(&p->idle) ||
	       READ_ONCE(p->total) < num_online_cpus();
}

/*
 * An idle worker of the mount's compressor, or a new one if there is room.
 * The wait is short: whoever holds a worker is decompressing bytes that are
 * already in memory.
 */
struct sqfs_worker *sqfs_worker_get(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	struct sqfs_pool *p = sbi->pool;
	struct sqfs_worker *w;

	for (;;) {
		spin_lock(&p->lock);
		w = list_first_entry_or_null(&p->idle, struct sqfs_worker,
					     node);
		if (w) {
			list_del(&w->node);
			p->nidle--;
			spin_unlock(&p->lock);
			return w;
		}
		if (p->total < num_online_cpus()) {
			p->total++;
			spin_unlock(&p->lock);
			w = sqfs_worker_new(sbi->dops);
			if (w)
				return w;
			spin_lock(&p->lock);
			p->total--;
			spin_unlock(&p->lock);
			/* whoever waited for this one may make its own */
			wake_up(&p->wait);
			if (!READ_ONCE(p->total))
				return ERR_PTR(-ENOMEM);
		} else {
			spin_unlock(&p->lock);
		}
		wait_event(p->wait, sqfs_pool_ready(p));
	}
}

void sqfs_worker_put(struct super_block *sb, struct sqfs_worker *w)
{
	struct sqfs_pool *p = SQFS_SB(sb)->pool;

	spin_lock(&p->lock);
	list_add(&w->node, &p->idle);
	p->nidle++;
	spin_unlock(&p->lock);
	if (wq_has_sleeper(&p->wait))
		wake_up(&p->wait);
}

/* start reading every page of the image in [pos, end) not cached yet */
void sqfs_raw_readahead(struct super_block *sb, u64 pos, u64 end)
{
	struct address_space *mapping = sqfs_bdev_mapping(sb->s_bdev);
	pgoff_t first = pos >> PAGE_SHIFT;
	DEFINE_READAHEAD(ractl, NULL, NULL, mapping, first);

	end = min(end, SQFS_SB(sb)->bytes_used);
	if (end <= pos)
		return;
	/* held shared across it (7.0 asserts that; right on every kernel) */
	filemap_invalidate_lock_shared(mapping);
	page_cache_ra_unbounded(&ractl, ((end - 1) >> PAGE_SHIFT) - first + 1,
				0);
	filemap_invalidate_unlock_shared(mapping);
}

static int sqfs_raw_check(struct super_block *sb, u64 pos, size_t len)
{
	u64 devsize;

	if (pos > SQFS_SB(sb)->bytes_used ||
	    len > SQFS_SB(sb)->bytes_used - pos)
		return sqfs_corrupt(sb, "read of %zu bytes at %llu past the image end",
				    len, pos);
	/*
	 * The mount checked that the image fits the device: a device that no
	 * longer holds it has shrunk or gone (a medium pulled out), and its page
	 * cache would hand out zeroes there. That is an I/O error.
	 */
	devsize = bdev_nr_bytes(sb->s_bdev);
	if (pos + len > devsize) {
		sqfs_err(sb, "read of %zu bytes at %llu past the end of the device (%llu bytes): medium removed?",
			 len, pos, devsize);
		return -EIO;
	}
	return 0;
}

int sqfs_read_raw(struct super_block *sb, u64 pos, void *buf, size_t len)
{
	struct address_space *mapping = sqfs_bdev_mapping(sb->s_bdev);
	pgoff_t idx = pos >> PAGE_SHIFT;
	pgoff_t last;
	size_t done = 0;
	int err;

	if (!len)
		return 0;
	err = sqfs_raw_check(sb, pos, len);
	if (err)
		return err;

	last = (pos + len - 1) >> PAGE_SHIFT;
	if (last > idx)
		sqfs_raw_readahead(sb, pos, pos + len);

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

/* the page of a kvmalloc'd buffer at @addr */
static struct page *sqfs_buf_page(void *addr)
{
	return is_vmalloc_addr(addr) ? vmalloc_to_page(addr) : virt_to_page(addr);
}

/*
 * Start reading the whole logical blocks of the device in [@start, @end)
 * into @buf, with as many chained bios as that takes: all but the last are
 * submitted, and the last, which completes when they all have, is returned
 * for the caller to submit.
 */
static struct bio *sqfs_bio_chain(struct block_device *bdev, void *buf,
				  u64 start, u64 end)
{
	size_t total = end - start, done = 0;
	struct bio *bio = NULL, *prev;

	while (done < total) {
		unsigned int nvec = min_t(size_t, BIO_MAX_VECS,
					  DIV_ROUND_UP(total - done, PAGE_SIZE) + 1);

		prev = bio;
		bio = bio_alloc(bdev, nvec, REQ_OP_READ, GFP_NOIO);
		bio->bi_iter.bi_sector = (start + done) >> SECTOR_SHIFT;
		while (done < total && bio->bi_vcnt < nvec) {
			unsigned int off = offset_in_page(buf + done);
			unsigned int n = min_t(size_t, PAGE_SIZE - off,
					       total - done);

			if (bio_add_page(bio, sqfs_buf_page(buf + done), n,
					 off) != n)
				break;
			done += n;
		}
		if (prev) {
			bio_chain(prev, bio);
			submit_bio(prev);
		}
	}
	return bio;
}

/*
 * Compressed bytes are read into read buffers, never into anything a
 * decompression stream owns. A run of data blocks that a readahead asks
 * for is fetched with one request into one buffer, while the blocks wait
 * for the CPUs that decompress them: one request, not one per block, and
 * none of the run's bytes in the device's page cache. A lone data block is
 * read the same way into a buffer of its own, and a metadata or fragment
 * block is copied into one from the device's page cache. A block that must
 * be decompressed into a buffer (a read of part of it) gets one too.
 * Buffers of up to 16 KiB (a metadata block, a small data block) come from
 * the slab allocator each time; larger ones hold at least 512 KiB, or the
 * mount's largest block, and go back to an idle list (at most two per CPU,
 * given back to memory reclaim while idle, emptied when the last mount
 * goes), so a stream reuses the same memory instead of having fresh pages
 * allocated, and zeroed, for every read. Whoever takes a reference waits
 * for the read before dropping it, so no read outlives its reader.
 */
struct sqfs_rbuf {
	struct list_head node;	/* on the idle list */
	refcount_t refs;
	struct completion done;
	spinlock_t lock;	/* guards then and read */
	struct list_head then;	/* work to queue once the read is done */
	bool read;		/* no read pending: then takes nothing more */
	int err;
	u64 start;		/* where the read starts (a logical block) */
	u64 end;		/* where the bytes wanted end */
	size_t size;		/* of buf */
	void *buf;
};

#define SQFS_RBUF_ALLOC		SZ_512K
#define SQFS_RBUF_SMALL		SZ_16K

static LIST_HEAD(sqfs_rbuf_idle);
static unsigned int sqfs_rbuf_nidle;
static DEFINE_SPINLOCK(sqfs_rbuf_lock);	/* guards the idle list */

static void sqfs_rbuf_free(struct sqfs_rbuf *rb)
{
	kvfree(rb->buf);
	kfree(rb);
}

/* free the idle read buffers */
void sqfs_rbufs_drain(void)
{
	struct sqfs_rbuf *rb, *tmp;
	LIST_HEAD(gone);

	spin_lock(&sqfs_rbuf_lock);
	list_splice_init(&sqfs_rbuf_idle, &gone);
	sqfs_rbuf_nidle = 0;
	spin_unlock(&sqfs_rbuf_lock);
	list_for_each_entry_safe(rb, tmp, &gone, node)
		sqfs_rbuf_free(rb);
}

/* an idle buffer of at least @size bytes, or NULL */
static struct sqfs_rbuf *sqfs_rbuf_idle_take(size_t size)
{
	struct sqfs_rbuf *rb, *found = NULL;

	spin_lock(&sqfs_rbuf_lock);
	list_for_each_entry(rb, &sqfs_rbuf_idle, node) {
		if (rb->size >= size) {
			list_del(&rb->node);
			sqfs_rbuf_nidle--;
			found = rb;
			break;
		}
	}
	spin_unlock(&sqfs_rbuf_lock);
	return found;
}

static struct sqfs_rbuf *sqfs_rbuf_alloc(size_t size)
{
	struct sqfs_rbuf *rb = kmalloc(sizeof(*rb), GFP_NOFS | __GFP_NOWARN);

	if (!rb)
		return NULL;
	rb->size = size;
	rb->buf = kvmalloc(size, GFP_NOFS | __GFP_NOWARN);
	if (!rb->buf) {
		kfree(rb);
		return NULL;
	}
	return rb;
}

/* a buffer of at least @size bytes, with one reference and no read */
struct sqfs_rbuf *sqfs_rbuf_new(size_t size)
{
	struct sqfs_rbuf *rb;

	if (size <= SQFS_RBUF_SMALL)
		rb = sqfs_rbuf_alloc(size);
	else
		rb = sqfs_rbuf_idle_take(size) ?:
		     sqfs_rbuf_alloc(max_t(size_t, size, SQFS_RBUF_ALLOC));
	if (!rb)
		return NULL;
	refcount_set(&rb->refs, 1);
	init_completion(&rb->done);
	complete_all(&rb->done);
	spin_lock_init(&rb->lock);
	INIT_LIST_HEAD(&rb->then);
	rb->read = true;
	rb->err = 0;
	rb->start = 0;
	rb->end = 0;
	return rb;
}

void *sqfs_rbuf_mem(struct sqfs_rbuf *rb)
{
	return rb->buf;
}

struct sqfs_rbuf *sqfs_rbuf_get(struct sqfs_rbuf *rb)
{
	if (rb)
		refcount_inc(&rb->refs);
	return rb;
}

/* drop a reference to @rb (if any), once its read is done */
void sqfs_rbuf_put(struct sqfs_rbuf *rb)
{
	if (!rb)
		return;
	wait_for_completion(&rb->done);
	if (!refcount_dec_and_test(&rb->refs))
		return;
	if (rb->size < SQFS_RBUF_ALLOC) {
		sqfs_rbuf_free(rb);
		return;
	}
	spin_lock(&sqfs_rbuf_lock);
	if (sqfs_rbuf_nidle < 2 * num_online_cpus()) {
		list_add(&rb->node, &sqfs_rbuf_idle);
		sqfs_rbuf_nidle++;
		rb = NULL;
	}
	spin_unlock(&sqfs_rbuf_lock);
	if (rb)
		sqfs_rbuf_free(rb);
}

/*
 * Idle read buffers and idle decompression streams are memory nobody
 * uses until the next read: under memory pressure they go, buffers first
 * (a stream costs more to make again).
 */
static unsigned long sqfs_idle_count(struct shrinker *s,
				     struct shrink_control *sc)
{
	unsigned long n = READ_ONCE(sqfs_rbuf_nidle);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sqfs_pools); i++)
		n += READ_ONCE(sqfs_pools[i].nidle);
	return n;
}

/* take at most @max idle workers of pool @i off its list into @gone */
static unsigned long sqfs_pool_shrink(unsigned int i, unsigned long max,
				      struct list_head *gone)
{
	struct sqfs_pool *p = &sqfs_pools[i];
	unsigned long n = 0;
	struct sqfs_worker *w;

	spin_lock(&p->lock);
	while (n < max && !list_empty(&p->idle)) {
		w = list_last_entry(&p->idle, struct sqfs_worker, node);
		list_move(&w->node, gone);
		p->nidle--;
		p->total--;
		n++;
	}
	spin_unlock(&p->lock);
	if (n)
		wake_up(&p->wait);	/* room for a new one */
	return n;
}

static unsigned long sqfs_idle_scan(struct shrinker *s,
				    struct shrink_control *sc)
{
	unsigned long freed = 0;
	struct sqfs_rbuf *rb;
	unsigned int i;

	while (freed < sc->nr_to_scan) {
		spin_lock(&sqfs_rbuf_lock);
		rb = list_first_entry_or_null(&sqfs_rbuf_idle, struct sqfs_rbuf,
					      node);
		if (rb) {
			list_del(&rb->node);
			sqfs_rbuf_nidle--;
		}
		spin_unlock(&sqfs_rbuf_lock);
		if (!rb)
			break;
		sqfs_rbuf_free(rb);
		freed++;
	}
	for (i = 0; i < ARRAY_SIZE(sqfs_pools) && freed < sc->nr_to_scan; i++) {
		LIST_HEAD(gone);

		freed += sqfs_pool_shrink(i, sc->nr_to_scan - freed, &gone);
		sqfs_workers_free(sqfs_decomps[i], &gone);
	}
	return freed ?: SHRINK_STOP;
}

static struct shrinker *sqfs_idle_shrinker;

int sqfs_idle_init(void)
{
	sqfs_idle_shrinker = sqfs_shrinker_new(0, "livesquash-idle", NULL,
					       sqfs_idle_count,
					       sqfs_idle_scan);
	if (!sqfs_idle_shrinker)
		return -ENOMEM;
	sqfs_shrinker_start(sqfs_idle_shrinker);
	return 0;
}

void sqfs_idle_exit(void)
{
	sqfs_shrinker_free(sqfs_idle_shrinker);
	sqfs_rbufs_drain();
}

static void sqfs_rbuf_end_io(struct bio *bio)
{
	struct sqfs_rbuf *rb = bio->bi_private;
	struct sqfs_rbuf_cb *cb, *tmp;
	unsigned long flags;
	LIST_HEAD(then);

	spin_lock_irqsave(&rb->lock, flags);
	rb->err = blk_status_to_errno(bio->bi_status);
	rb->read = true;
	list_splice_init(&rb->then, &then);
	spin_unlock_irqrestore(&rb->lock, flags);
	bio_put(bio);
	/*
	 * the last touch of @rb: a waiter may free it at once (the work on
	 * @then holds references, so it stays while there is any)
	 */
	complete_all(&rb->done);
	list_for_each_entry_safe(cb, tmp, &then, node)
		queue_work(cb->wq, &cb->work);
}

/*
 * Queue @cb's work on its workqueue once the read into @rb is done (at once
 * if it is): work queued so never waits for the device, and so never holds
 * a worker of its queue that the device's own progress could need (a loop
 * device whose file lies on another squashfs mount).
 */
void sqfs_rbuf_then(struct sqfs_rbuf *rb, struct sqfs_rbuf_cb *cb)
{
	unsigned long flags;
	bool now;

	spin_lock_irqsave(&rb->lock, flags);
	now = rb->read;
	if (!now)
		list_add_tail(&cb->node, &rb->then);
	spin_unlock_irqrestore(&rb->lock, flags);
	if (now)
		queue_work(cb->wq, &cb->work);
}

/* the most bytes one read into a buffer may fetch for this mount */
static u64 sqfs_rbuf_max(struct super_block *sb)
{
	return max_t(u64, SQFS_RBUF_SIZE, SQFS_SB(sb)->bufsize);
}

/*
 * Start reading [@pos, @end) of the image, the compressed bytes of a run of
 * data blocks (or of one), straight from the disk into a read buffer.
 * Returns it with a reference, or NULL where that cannot be done: the
 * blocks are then read through the device's page cache.
 */
struct sqfs_rbuf *sqfs_rbuf_read(struct super_block *sb, u64 pos, u64 end)
{
	struct block_device *bdev = sb->s_bdev;
	unsigned int lbs = bdev_logical_block_size(bdev);
	u64 start = round_down(pos, lbs);
	struct sqfs_rbuf *rb;
	struct bio *bio;

	if (end <= pos || end - pos > sqfs_rbuf_max(sb) || lbs > PAGE_SIZE ||
	    end > SQFS_SB(sb)->bytes_used ||
	    round_up(end, lbs) > bdev_nr_bytes(bdev))
		return NULL;
	rb = sqfs_rbuf_new(end - pos + SQFS_DIRECT_SLACK);
	if (!rb)
		return NULL;
	if ((unsigned long)rb->buf & bdev_dma_alignment(bdev)) {
		sqfs_rbuf_put(rb);
		return NULL;
	}
	reinit_completion(&rb->done);
	rb->read = false;
	rb->start = start;
	rb->end = end;
	bio = sqfs_bio_chain(bdev, rb->buf, start, round_up(end, lbs));
	bio->bi_private = rb;
	bio->bi_end_io = sqfs_rbuf_end_io;
	submit_bio(bio);
	return rb;
}

/*
 * Where the @len bytes at @pos are in read buffer @rb, once they are read;
 * NULL if @rb does not hold them (or its read failed: the block is then
 * read through the device's page cache, which reports the error).
 */
static void *sqfs_rbuf_data(struct sqfs_rbuf *rb, u64 pos, u32 len)
{
	if (!rb || pos < rb->start || pos > rb->end || len > rb->end - pos)
		return NULL;
	wait_for_completion(&rb->done);
	if (rb->err)
		return NULL;
	if (is_vmalloc_addr(rb->buf))
		invalidate_kernel_vmap_range(rb->buf + (pos - rb->start), len);
	return rb->buf + (pos - rb->start);
}

/* whether the device's page cache holds none of [@pos, @pos + @len) */
static bool sqfs_dev_uncached(struct super_block *sb, u64 pos, u32 len)
{
	return !filemap_range_has_page(sqfs_bdev_mapping(sb->s_bdev), pos,
				       pos + len - 1);
}

/*
 * A reference to a read buffer that holds (or is being read with) the @len
 * bytes of the data block at @pos: run buffer @rb if it holds them, else a
 * read of the block alone, started straight from the disk. NULL where that
 * cannot be done (see sqfs_fetch).
 */
struct sqfs_rbuf *sqfs_rbuf_for(struct super_block *sb, struct sqfs_rbuf *rb,
				u64 pos, u32 len)
{
	if (rb && pos >= rb->start && pos <= rb->end && len <= rb->end - pos)
		return sqfs_rbuf_get(rb);
	/* (sqfs_rbuf_read refuses bytes past the image or the device) */
	if (!len || !sqfs_dev_uncached(sb, pos, len))
		return NULL;
	return sqfs_rbuf_read(sb, pos, pos + len);
}

/*
 * The @len bytes at @pos, from run buffer @rb if it holds them (with
 * SQFS_READY, only from there: -EAGAIN if it does not, or its read failed),
 * else read into a buffer of their own (*@own, for the caller to put):
 * straight from the disk for a data block (SQFS_DATA) unless the device's
 * page cache holds some of them (someone reads the device itself), else
 * through that cache.
 */
static const void *sqfs_fetch(struct super_block *sb, struct sqfs_rbuf *rb,
			      u64 pos, u32 len, enum sqfs_from from,
			      struct sqfs_rbuf **own)
{
	const void *in = sqfs_rbuf_data(rb, pos, len);
	int err;

	if (in)
		return in;
	if (from == SQFS_READY)
		return ERR_PTR(-EAGAIN);
	if (from == SQFS_DATA && sqfs_dev_uncached(sb, pos, len)) {
		err = sqfs_raw_check(sb, pos, len);
		if (err)
			return ERR_PTR(err);
		*own = sqfs_rbuf_read(sb, pos, pos + len);
		in = sqfs_rbuf_data(*own, pos, len);
		if (in)
			return in;
		sqfs_rbuf_put(*own);
	}
	*own = sqfs_rbuf_new(len);
	if (!*own)
		return ERR_PTR(-ENOMEM);
	err = sqfs_read_raw(sb, pos, (*own)->buf, len);
	return err ? ERR_PTR(err) : (*own)->buf;
}

/*
 * Read the block of @len bytes at @pos, decompressing it unless it is
 * stored as is, into @out of @outlen bytes. A data block is read past the
 * device's page cache (see sqfs_fetch), or taken from run buffer @rb. The
 * bytes are read first; a decompression stream is taken only then.
 * Returns the length of its content.
 */
static int sqfs_decode_block(struct super_block *sb, struct sqfs_rbuf *rb,
			     u64 pos, u32 len, bool compressed,
			     enum sqfs_from from, void *out, u32 outlen)
{
	const struct sqfs_decomp_ops *dops = SQFS_SB(sb)->dops;
	struct sqfs_rbuf *own = NULL;
	struct sqfs_worker *w;
	const void *in;
	int ret;

	if (!len || len > SQFS_SB(sb)->bufsize ||
	    (!compressed && len > outlen))
		return sqfs_corrupt(sb, "block at %llu has a bad length %u",
				    pos, len);
	if (!compressed && from == SQFS_META) {
		ret = sqfs_read_raw(sb, pos, out, len);
		return ret ?: len;
	}
	in = sqfs_fetch(sb, rb, pos, len, from, &own);
	if (IS_ERR(in)) {
		ret = PTR_ERR(in);
		goto out;
	}
	if (!compressed) {
		memcpy(out, in, len);
		ret = len;
		goto out;
	}
	w = sqfs_worker_get(sb);
	if (IS_ERR(w)) {
		ret = PTR_ERR(w);
		goto out;
	}
	ret = dops->decompress(w->stream, in, len, out, outlen);
	sqfs_worker_put(sb, w);
	if (ret == -EUCLEAN || ret == 0)
		ret = sqfs_corrupt(sb, "%s block at %llu (%u bytes) does not decompress",
				   dops->name, pos, len);
	else if (ret == -EOPNOTSUPP)
		sqfs_err(sb, "%s block at %llu (%u bytes) uses a filter or option this kernel's decoder lacks: not supported",
			 dops->name, pos, len);
out:
	sqfs_rbuf_put(own);
	return ret;
}

/*
 * the same for a block of file data, which run buffer @rb may hold (@from:
 * SQFS_DATA, or SQFS_READY where the caller must not wait for the device)
 */
int sqfs_decode_data(struct super_block *sb, struct sqfs_rbuf *rb, u64 pos,
		     u32 len, bool compressed, enum sqfs_from from, void *out,
		     u32 outlen)
{
	return sqfs_decode_block(sb, rb, pos, len, compressed, from, out,
				 outlen);
}

/* the same for a metadata or fragment block, through the page cache */
int sqfs_read_block(struct super_block *sb, u64 pos, u32 len, bool compressed,
		    void *out, u32 outlen)
{
	return sqfs_decode_block(sb, NULL, pos, len, compressed, SQFS_META,
				 out, outlen);
}
