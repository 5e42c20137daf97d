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
 * an idle list between blocks and freed when the last such mount goes. So
 * several CPUs decompress at once, while sixteen mounts cost no more
 * streams than one.
 */
struct sqfs_pool {
	spinlock_t lock;	/* guards idle and total */
	struct list_head idle;
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
	kvfree(w->in);
	kvfree(w->out);
	kfree(w);
}

static struct sqfs_worker *sqfs_worker_new(const struct sqfs_decomp_ops *ops)
{
	struct sqfs_worker *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w)
		return NULL;
	w->stream = ops->create();
	if (IS_ERR(w->stream)) {
		sqfs_worker_free(ops, w);
		return NULL;
	}
	return w;
}

/*
 * A read straight from the disk covers whole logical blocks of the device
 * (at most a page each): the input buffer has room for one more on each side.
 */
#define SQFS_DIRECT_SLACK	(2 * PAGE_SIZE)

/* make the buffers of @w hold @size bytes */
static int sqfs_worker_fit(struct sqfs_worker *w, u32 size)
{
	if (w->size >= size)
		return 0;
	kvfree(w->in);
	kvfree(w->out);
	w->in = kvmalloc(size + SQFS_DIRECT_SLACK, GFP_KERNEL);
	w->out = kvmalloc(size, GFP_KERNEL);
	w->size = w->in && w->out ? size : 0;
	return w->size ? 0 : -ENOMEM;
}

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
	struct sqfs_worker *w, *tmp;
	LIST_HEAD(gone);

	if (!p)
		return;
	mutex_lock(&sqfs_pool_mutex);
	if (!--sqfs_mounts)
		sqfs_rbufs_drain();
	if (!--p->users) {
		spin_lock(&p->lock);
		list_splice_init(&p->idle, &gone);
		p->total = 0;
		spin_unlock(&p->lock);
	}
	mutex_unlock(&sqfs_pool_mutex);
	list_for_each_entry_safe(w, tmp, &gone, node)
		sqfs_worker_free(sbi->dops, w);
}

static bool sqfs_pool_ready(struct sqfs_pool *p)
{
	return !list_empty_careful(&p->idle) ||
	       READ_ONCE(p->total) < num_online_cpus();
}

/* an idle worker of the mount's compressor, or a new one if there is room */
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
			spin_unlock(&p->lock);
			break;
		}
		if (p->total < num_online_cpus()) {
			p->total++;
			spin_unlock(&p->lock);
			w = sqfs_worker_new(sbi->dops);
			if (w)
				break;
			spin_lock(&p->lock);
			p->total--;
			spin_unlock(&p->lock);
			if (!READ_ONCE(p->total))
				return ERR_PTR(-ENOMEM);
		} else {
			spin_unlock(&p->lock);
		}
		wait_event(p->wait, sqfs_pool_ready(p));
	}
	if (sqfs_worker_fit(w, sbi->bufsize)) {
		sqfs_worker_put(sb, w);
		return ERR_PTR(-ENOMEM);
	}
	return w;
}

void sqfs_worker_put(struct super_block *sb, struct sqfs_worker *w)
{
	struct sqfs_pool *p = SQFS_SB(sb)->pool;

	spin_lock(&p->lock);
	list_add(&w->node, &p->idle);
	spin_unlock(&p->lock);
	if (wq_has_sleeper(&p->wait))
		wake_up(&p->wait);
}

/* start reading every page of the image in [pos, end) not cached yet */
void sqfs_raw_readahead(struct super_block *sb, u64 pos, u64 end)
{
	struct address_space *mapping = sb->s_bdev->bd_inode->i_mapping;
	pgoff_t first = pos >> PAGE_SHIFT;
	DEFINE_READAHEAD(ractl, NULL, NULL, mapping, first);

	end = min(end, SQFS_SB(sb)->bytes_used);
	if (end > pos)
		page_cache_ra_unbounded(&ractl,
					((end - 1) >> PAGE_SHIFT) - first + 1,
					0);
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
	struct address_space *mapping = sb->s_bdev->bd_inode->i_mapping;
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

/* read the logical blocks in [@start, @end) into the input buffer of @w */
static int sqfs_bio_read(struct super_block *sb, struct sqfs_worker *w,
			 u64 start, u64 end)
{
	struct bio *bio = sqfs_bio_chain(sb->s_bdev, w->in, start, end);
	int err;

	err = submit_bio_wait(bio);
	bio_put(bio);
	if (is_vmalloc_addr(w->in))
		invalidate_kernel_vmap_range(w->in, end - start);
	if (err)
		sqfs_err(sb, "I/O error reading the image at %llu", start);
	return err;
}

/*
 * A run of data blocks that a readahead asks for is fetched with one
 * request, into a run buffer, while the blocks wait for the CPUs that
 * decompress them: one request, not one per block, and none of the run's
 * bytes in the device's page cache. Run buffers all have the same size and
 * go back to an idle list (at most two per CPU, emptied when the last mount
 * goes), so a stream reuses the same memory instead of having fresh pages
 * allocated, and zeroed, for every read. Whoever takes a reference waits
 * for the read before dropping it, so no read outlives its readahead.
 */
struct sqfs_rbuf {
	struct list_head node;	/* on the idle list */
	refcount_t refs;
	struct completion done;
	int err;
	u64 start;		/* where the read starts (a logical block) */
	u64 end;		/* where the bytes wanted end */
	void *buf;
};

static LIST_HEAD(sqfs_rbuf_idle);
static unsigned int sqfs_rbuf_nidle;
static DEFINE_SPINLOCK(sqfs_rbuf_lock);	/* guards the idle list */

static void sqfs_rbuf_free(struct sqfs_rbuf *rb)
{
	kvfree(rb->buf);
	kfree(rb);
}

/* free the idle run buffers */
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

static struct sqfs_rbuf *sqfs_rbuf_new(void)
{
	struct sqfs_rbuf *rb;

	spin_lock(&sqfs_rbuf_lock);
	rb = list_first_entry_or_null(&sqfs_rbuf_idle, struct sqfs_rbuf, node);
	if (rb) {
		list_del(&rb->node);
		sqfs_rbuf_nidle--;
	}
	spin_unlock(&sqfs_rbuf_lock);
	if (rb)
		return rb;
	rb = kmalloc(sizeof(*rb), GFP_NOFS | __GFP_NOWARN);
	if (!rb)
		return NULL;
	rb->buf = kvmalloc(SQFS_RBUF_SIZE + SQFS_DIRECT_SLACK,
			   GFP_NOFS | __GFP_NOWARN);
	if (!rb->buf) {
		kfree(rb);
		return NULL;
	}
	return rb;
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

static void sqfs_rbuf_end_io(struct bio *bio)
{
	struct sqfs_rbuf *rb = bio->bi_private;

	rb->err = blk_status_to_errno(bio->bi_status);
	bio_put(bio);
	complete_all(&rb->done);
}

/*
 * Start reading [@pos, @end) of the image, the compressed bytes of a run of
 * data blocks, into a run buffer. Returns it with a reference, or NULL
 * where that cannot be done: the blocks are then read one by one.
 */
struct sqfs_rbuf *sqfs_rbuf_read(struct super_block *sb, u64 pos, u64 end)
{
	struct block_device *bdev = sb->s_bdev;
	unsigned int lbs = bdev_logical_block_size(bdev);
	u64 start = round_down(pos, lbs);
	struct sqfs_rbuf *rb;
	struct bio *bio;

	if (end <= pos || end - pos > SQFS_RBUF_SIZE || lbs > PAGE_SIZE ||
	    end > SQFS_SB(sb)->bytes_used ||
	    round_up(end, lbs) > bdev_nr_bytes(bdev))
		return NULL;
	rb = sqfs_rbuf_new();
	if (!rb)
		return NULL;
	refcount_set(&rb->refs, 1);
	init_completion(&rb->done);
	rb->err = 0;
	rb->start = start;
	rb->end = end;
	bio = sqfs_bio_chain(bdev, rb->buf, start, round_up(end, lbs));
	bio->bi_private = rb;
	bio->bi_end_io = sqfs_rbuf_end_io;
	submit_bio(bio);
	return rb;
}

/*
 * Where the @len bytes at @pos are in run buffer @rb, once they are read;
 * NULL if @rb does not hold them (or its read failed: the block is then
 * read on its own, which reports the error).
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

/*
 * The @len bytes at @pos in the input buffer of @w: straight from the disk
 * (@direct) unless the device's page cache holds them or a read of them is
 * under way (someone reads the device itself), else through that cache.
 * Returns where they start.
 */
static void *sqfs_fetch(struct super_block *sb, struct sqfs_worker *w, u64 pos,
			u32 len, bool direct)
{
	struct block_device *bdev = sb->s_bdev;
	unsigned int lbs = bdev_logical_block_size(bdev);
	u64 start = round_down(pos, lbs), end = round_up(pos + len, lbs);
	int err;

	if (direct && lbs <= PAGE_SIZE && end <= bdev_nr_bytes(bdev) &&
	    !((unsigned long)w->in & bdev_dma_alignment(bdev)) &&
	    !filemap_range_has_page(bdev->bd_inode->i_mapping, pos,
				    pos + len - 1)) {
		err = sqfs_raw_check(sb, pos, len) ?:
		      sqfs_bio_read(sb, w, start, end);
		return err ? ERR_PTR(err) : w->in + (pos - start);
	}
	err = sqfs_read_raw(sb, pos, w->in, len);
	return err ? ERR_PTR(err) : w->in;
}

/*
 * Read the block of @len bytes at @pos with worker @w, decompressing it
 * unless it is stored as is, into @out of @outlen bytes. A data block
 * (@data) is read past the device's page cache (see sqfs_fetch). Returns
 * the length of its content.
 */
static int sqfs_decode_block(struct super_block *sb, struct sqfs_worker *w,
			     struct sqfs_rbuf *rb, u64 pos, u32 len,
			     bool compressed, bool data, void *out, u32 outlen)
{
	const struct sqfs_decomp_ops *dops = SQFS_SB(sb)->dops;
	void *in;
	int ret;

	if (!len || len > SQFS_SB(sb)->bufsize ||
	    (!compressed && len > outlen))
		return sqfs_corrupt(sb, "block at %llu has a bad length %u",
				    pos, len);
	if (!compressed && !data) {
		ret = sqfs_read_raw(sb, pos, out, len);
		return ret ?: len;
	}
	in = sqfs_rbuf_data(rb, pos, len) ?: sqfs_fetch(sb, w, pos, len, data);
	if (IS_ERR(in))
		return PTR_ERR(in);
	if (!compressed) {
		memcpy(out, in, len);
		return len;
	}
	ret = dops->decompress(w->stream, in, len, out, outlen);
	if (ret == -EUCLEAN || ret == 0)
		return sqfs_corrupt(sb, "%s block at %llu (%u bytes) does not decompress",
				    dops->name, pos, len);
	return ret;
}

/* the same for a block of file data, which run buffer @rb may hold */
int sqfs_decode_data(struct super_block *sb, struct sqfs_worker *w,
		     struct sqfs_rbuf *rb, u64 pos, u32 len, bool compressed,
		     void *out, u32 outlen)
{
	return sqfs_decode_block(sb, w, rb, pos, len, compressed, true, out,
				 outlen);
}

/* the same with a worker of its own, for a caller that holds none */
int sqfs_read_block(struct super_block *sb, u64 pos, u32 len, bool compressed,
		    void *out, u32 outlen)
{
	struct sqfs_worker *w = sqfs_worker_get(sb);
	int ret;

	if (IS_ERR(w))
		return PTR_ERR(w);
	ret = sqfs_decode_block(sb, w, NULL, pos, len, compressed, false,
				out, outlen);
	sqfs_worker_put(sb, w);
	return ret;
}
