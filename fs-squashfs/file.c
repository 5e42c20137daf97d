// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: regular file data.
 *
 * A file is a run of blocks, each stored compressed, as is, or not at all
 * (sparse), and maybe a tail in a shared fragment block. A block is
 * decompressed once and spread over every page-cache page it covers. No
 * lock is held while decompressing, so readers on several CPUs decompress
 * at once; only the walk of a file's block list is serialised per inode.
 */
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/refcount.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include "internal.h"

/*
 * Helpers: sqfs_wq decompresses readaheads' blocks whose bytes are read
 * already, and waits for no device; sqfs_ra_wq loads fragment blocks ahead,
 * reading them first (see squashfs.rst, "Helpers that never wait for I/O")
 */
static struct workqueue_struct *sqfs_wq;
static struct workqueue_struct *sqfs_ra_wq;

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

/*
 * Make room for checkpoint @k: the array grows with the walk, twice as large
 * each time, so it costs what the walk has read so far (32 bytes for every
 * 4 KiB of block list), never what the inode's size claims.
 */
static bool sqfs_walk_room(struct sqfs_inode *si, u64 k)
{
	struct sqfs_seek *seek;
	u64 cap;

	if (k <= si->seek_cap)
		return true;
	cap = max_t(u64, 2 * si->seek_cap, 16);
	seek = kvmalloc_array(cap, sizeof(*seek), GFP_KERNEL_ACCOUNT);
	if (!seek)
		return false;
	if (si->nseek)
		memcpy(seek, si->seek, si->nseek * sizeof(*seek));
	kvfree(si->seek);
	si->seek = seek;
	si->seek_cap = cap;
	return true;
}

/* the walk stands at a multiple of SQFS_SEEK_STEP: remember it */
static void sqfs_walk_mark(struct sqfs_inode *si)
{
	u64 k = si->walk_idx / SQFS_SEEK_STEP;

	if (!k || k != si->nseek + 1 || !sqfs_walk_room(si, k))
		return;
	si->seek[k - 1].pos = si->walk_pos;
	si->seek[k - 1].cur = si->walk;
	si->nseek = k;
}

/* disk position and size word of block @idx; under walk_lock */
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

/* the same for @n blocks from @first on */
static int sqfs_blocks_at(struct inode *inode, u64 first, unsigned int n,
			  u64 *pos, u32 *word)
{
	struct sqfs_inode *si = SQFS_I(inode);
	unsigned int i;
	int err = 0;

	mutex_lock(&si->walk_lock);
	for (i = 0; i < n && !err; i++)
		err = sqfs_block_at(inode, first + i, &pos[i], &word[i]);
	mutex_unlock(&si->walk_lock);
	return err;
}

/*
 * Where the bytes of one block of a file come from while its pages are
 * filled: a buffer it was decompressed into, a cached fragment block, or
 * nothing (zeros).
 */
struct sqfs_src {
	u64 idx;		/* the block; U64_MAX: none */
	const void *data;	/* NULL: zeros */
	u32 len;
	struct sqfs_rbuf *buf;
	struct sqfs_cblk *frag;
};

#define SQFS_SRC_NONE	((struct sqfs_src){ .idx = U64_MAX })

static void sqfs_src_drop(struct super_block *sb, struct sqfs_src *src)
{
	sqfs_rbuf_put(src->buf);
	if (src->frag)
		sqfs_cblk_put(src->frag);
	*src = SQFS_SRC_NONE;
}

/*
 * The positions of the next blocks of a readahead, walked at once, and the
 * run buffer their bytes are being read into (NULL: each block is read on
 * its own)
 */
#define SQFS_RUN_MAX	32

struct sqfs_run {
	u64 first;
	unsigned int n;
	struct sqfs_rbuf *rb;
	u64 pos[SQFS_RUN_MAX];
	u32 word[SQFS_RUN_MAX];
};

/*
 * A reader going through a tree in order (tar, cp -a, an installer's copy)
 * meets the fragment blocks in the order mksquashfs filled them. When it
 * moves on from one to the next, the one after that is decompressed on
 * another CPU meanwhile, into the fragment cache. A reader in any other
 * order starts nothing, so random reads and lookups cost no more; one
 * block ahead, one work item per mount. A failure there is silent (see
 * sqfs_say): the block is not cached, and the reader that needs it meets
 * the failure and reports it. The block is charged to the memory cgroup of
 * the reader that moved on, as if that reader had read it.
 */
static void sqfs_frag_ahead(struct super_block *sb, u32 idx)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	u32 last = READ_ONCE(sbi->frag_last);

	if (idx == last)
		return;
	WRITE_ONCE(sbi->frag_last, idx);
	if (idx != last + 1 || idx + 1 >= sbi->frag_count ||
	    work_pending(&sbi->frag_ra))
		return;
	WRITE_ONCE(sbi->frag_next, idx + 1);
	mem_cgroup_put(xchg(&sbi->frag_memcg,
			    get_mem_cgroup_from_mm(current->mm)));
	queue_work(sqfs_ra_wq, &sbi->frag_ra);
}

void sqfs_frag_ra_work(struct work_struct *work)
{
	struct sqfs_sb *sbi = container_of(work, struct sqfs_sb, frag_ra);
	struct mem_cgroup *memcg = xchg(&sbi->frag_memcg, NULL), *old;
	struct sqfs_cblk *b;
	u64 pos;
	u32 word;

	old = set_active_memcg(memcg);
	if (!sqfs_frag_lookup(sbi->sb, READ_ONCE(sbi->frag_next), &pos,
			      &word)) {
		b = sqfs_frag_get(sbi->sb, pos, word, 0, 0);
		if (!IS_ERR(b))
			sqfs_cblk_put(b);
	}
	set_active_memcg(old);
	mem_cgroup_put(memcg);
}

/* the tail of the file, in a fragment block */
static int sqfs_src_frag(struct inode *inode, struct sqfs_src *src)
{
	struct sqfs_inode *si = SQFS_I(inode);
	struct sqfs_cblk *b;
	u64 pos;
	u32 word;
	int err;

	err = sqfs_frag_lookup(inode->i_sb, si->frag, &pos, &word);
	if (err)
		return err;
	b = sqfs_frag_get(inode->i_sb, pos, word, si->frag_off, src->len);
	if (IS_ERR(b))
		return PTR_ERR(b);
	src->frag = b;
	src->data = sqfs_cblk_data(b) + si->frag_off;
	sqfs_frag_ahead(inode->i_sb, si->frag);
	return 0;
}

/* the number of bytes block @idx of @inode holds */
static inline u32 sqfs_block_len(struct inode *inode, u64 idx)
{
	struct sqfs_sb *sbi = SQFS_SB(inode->i_sb);

	return min_t(u64, sbi->block_size,
		     i_size_read(inode) - (idx << sbi->block_log));
}

/* where block @idx of @inode lies; @run may know it already */
static int sqfs_block_find(struct inode *inode, u64 idx,
			   const struct sqfs_run *run, u64 *pos, u32 *word)
{
	if (run && idx >= run->first && idx - run->first < run->n) {
		*pos = run->pos[idx - run->first];
		*word = run->word[idx - run->first];
		return 0;
	}
	return sqfs_blocks_at(inode, idx, 1, pos, word);
}

/*
 * make @src hold block @idx of @inode; @run may know where it is. @share:
 * the caller reads only some pages of the block (sqfs_data_get)
 */
static int sqfs_src_load(struct inode *inode, u64 idx, struct sqfs_src *src,
			 const struct sqfs_run *run, bool share)
{
	struct super_block *sb = inode->i_sb;
	struct sqfs_sb *sbi = SQFS_SB(sb);
	u64 pos;
	u32 word;
	int ret;

	src->idx = idx;
	src->len = sqfs_block_len(inode, idx);
	if (idx >= SQFS_I(inode)->nblocks)
		return sqfs_src_frag(inode, src);
	ret = sqfs_block_find(inode, idx, run, &pos, &word);
	if (ret)
		return ret;
	if (!word)			/* sparse */
		return 0;
	if (share) {
		struct sqfs_cblk *b = sqfs_data_get(sb, run ? run->rb : NULL,
						    pos, word, src->len);

		if (IS_ERR(b))
			return PTR_ERR(b);
		src->frag = b;
		src->data = sqfs_cblk_data(b);
		return 0;
	}
	src->buf = sqfs_rbuf_new(sbi->block_size);
	if (!src->buf)
		return -ENOMEM;
	ret = sqfs_decode_data(sb, run ? run->rb : NULL, pos,
			       word & SQFS_DATA_LEN_MASK,
			       !(word & SQFS_DATA_UNCOMPRESSED), SQFS_DATA,
			       sqfs_rbuf_mem(src->buf), sbi->block_size);
	if (ret >= 0 && ret != src->len)
		ret = sqfs_corrupt(sb, "inode %llu block %llu holds %d bytes, not %u",
				   (u64)inode->i_ino, idx, ret, src->len);
	if (ret < 0)
		return ret;
	src->data = sqfs_rbuf_mem(src->buf);
	return 0;
}

/* fill @folio from @src, whose block starts at file page @first */
static void sqfs_fill_folio(struct folio *folio, const struct sqfs_src *src,
			    pgoff_t first)
{
	size_t off = (folio->index - first) << PAGE_SHIFT;
	size_t n = 0;
	void *kaddr = kmap_local_folio(folio, 0);

	if (src->data && off < src->len)
		n = min_t(size_t, src->len - off, folio_size(folio));
	if (n)
		memcpy(kaddr, src->data + off, n);
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
static void sqfs_fill_siblings(struct inode *inode, const struct sqfs_src *src,
			       pgoff_t skip)
{
	struct address_space *mapping = inode->i_mapping;
	pgoff_t first = sqfs_block_first_page(inode->i_sb, src->idx);
	pgoff_t last = first + DIV_ROUND_UP(src->len, PAGE_SIZE);
	pgoff_t i;

	for (i = first; i < last; i++) {
		struct folio *folio;

		if (i == skip)
			continue;
		folio = __filemap_get_folio(mapping, i,
					    FGP_LOCK | FGP_CREAT | FGP_NOWAIT,
					    readahead_gfp_mask(mapping));
		/* none to fill: NULL before 6.3, an ERR_PTR since */
		if (IS_ERR_OR_NULL(folio))
			continue;
		if (!folio_test_uptodate(folio))
			sqfs_fill_folio(folio, src, first);
		folio_unlock(folio);
		folio_put(folio);
	}
}

static int sqfs_read_folio(struct file *file, struct folio *folio)
{
	struct inode *inode = folio->mapping->host;
	struct super_block *sb = inode->i_sb;
	u64 idx = (u64)folio->index >> (SQFS_SB(sb)->block_log - PAGE_SHIFT);
	struct sqfs_src src = SQFS_SRC_NONE;
	int err = 0;

	if (folio_pos(folio) < i_size_read(inode))
		err = sqfs_src_load(inode, idx, &src, NULL, false);
	if (!err) {
		sqfs_fill_folio(folio, &src, sqfs_block_first_page(sb, idx));
		if (src.len)
			sqfs_fill_siblings(inode, &src, folio->index);
	}
	sqfs_src_drop(sb, &src);
	folio_unlock(folio);
	return err;
}

/*
 * Find where the blocks from @idx to @last lie (at most SQFS_RUN_MAX), with
 * one walk of the block list for them all, and start reading their bytes
 * with one request: the blocks of a file lie one after the other. Those
 * that do not fit one run buffer, or a lone block, are read from the disk
 * by whoever decompresses them (see sqfs_fetch).
 */
static void sqfs_run_find(struct inode *inode, u64 idx, u64 last,
			  struct sqfs_run *run)
{
	struct sqfs_inode *si = SQFS_I(inode);
	u64 start = U64_MAX, end = 0;
	unsigned int i, n, k = 0;

	if (idx >= si->nblocks ||
	    (idx >= run->first && idx - run->first < run->n))
		return;
	sqfs_rbuf_put(run->rb);
	run->rb = NULL;
	last = min(last, si->nblocks - 1);
	n = min_t(u64, last - idx + 1, SQFS_RUN_MAX);
	run->n = 0;
	if (sqfs_blocks_at(inode, idx, n, run->pos, run->word))
		return;
	run->first = idx;
	run->n = n;
	for (i = 0; i < n; i++) {
		u32 len = run->word[i] & SQFS_DATA_LEN_MASK;

		if (!run->word[i])
			continue;	/* sparse */
		if (start == U64_MAX)
			start = run->pos[i];
		if (run->pos[i] < start || len > SQFS_RBUF_SIZE ||
		    run->pos[i] - start > SQFS_RBUF_SIZE - len)
			break;
		end = max(end, run->pos[i] + len);
		k++;
	}
	if (k > 1)
		run->rb = sqfs_rbuf_read(inode->i_sb, start, end);
}

/* map @n pages side by side in the kernel's address space */
static void *sqfs_map_pages(struct page **pages, unsigned int n)
{
	void *addr;

	if (n == 1)
		return kmap_local_page(pages[0]);
	addr = vm_map_ram(pages, n, NUMA_NO_NODE);
	if (!addr) {
		/* lazily freed mappings may hold the space: free them, retry */
		vm_unmap_aliases();
		addr = vm_map_ram(pages, n, NUMA_NO_NODE);
	}
	return addr;
}

static void sqfs_unmap_pages(void *addr, unsigned int n)
{
	if (n == 1)
		kunmap_local(addr);
	else
		vm_unmap_ram(addr, n);
}

/*
 * Decompress block @idx of @inode, at @pos with size word @word, straight
 * into @pages, the @n page-cache pages that hold its @len bytes, with no copy
 * through a buffer. @from: see sqfs_decode_data.
 */
static int sqfs_decode_pages(struct inode *inode, struct sqfs_rbuf *rb,
			     enum sqfs_from from, u64 idx, u64 pos, u32 word,
			     struct page **pages, unsigned int n, u32 len)
{
	struct super_block *sb = inode->i_sb;
	size_t size = (size_t)n << PAGE_SHIFT;
	unsigned int i;
	void *addr;
	int ret;

	if (!word) {			/* sparse */
		for (i = 0; i < n; i++)
			clear_highpage(pages[i]);
		return 0;
	}
	addr = sqfs_map_pages(pages, n);
	if (!addr)
		return -ENOMEM;
	ret = sqfs_decode_data(sb, rb, pos, word & SQFS_DATA_LEN_MASK,
			       !(word & SQFS_DATA_UNCOMPRESSED), from, addr,
			       size);
	if (ret >= 0 && ret != len)
		ret = sqfs_corrupt(sb, "inode %llu block %llu holds %d bytes, not %u",
				   (u64)inode->i_ino, idx, ret, len);
	if (ret >= 0) {
		memset(addr + len, 0, size - len);
		ret = 0;
	}
	sqfs_unmap_pages(addr, n);
	return ret;
}

/* the locked pages of a block are read (@err 0) or failed: unlock them */
static void sqfs_pages_done(struct page **pages, unsigned int n, int err)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!err) {
			flush_dcache_page(pages[i]);
			SetPageUptodate(pages[i]);
		}
		unlock_page(pages[i]);
	}
}

/*
 * One block of a readahead, to be decompressed by whichever CPU gets to it
 * first. A readahead that covers several whole blocks starts reading their
 * bytes (one request for a run of them, see sqfs_run_find, or one for a
 * block alone), and each block becomes a job that is queued on sqfs_wq when
 * its bytes are in: a helper never waits for a device (see sqfs_rbuf_then).
 * A reader in a stream returns at once and copies out the pages it has
 * while the helpers fill the next ones; any other reader, once it has
 * started them all, claims the ones nobody has started, newest first, and
 * does them itself (waiting for their bytes if it must).
 * With one CPU nothing is queued; there are never more jobs than blocks
 * the readahead asked for. A job unlocks its pages when done
 * (uptodate or not: a page left not uptodate is read again by read_folio,
 * which reports the error), and touches nothing of the file after that.
 */
struct sqfs_job {
	struct sqfs_rbuf_cb cb;
	atomic_t claimed;	/* 1 once a helper or the reader does it */
	struct list_head node;	/* in the reader's list, newest first */
	refcount_t refs;	/* the reader's, and the queue's */
	struct inode *inode;
	struct sqfs_rbuf *rb;	/* a reference to the buffer its bytes are in */
	u64 idx;
	u64 pos;
	u32 word;
	u32 len;
	unsigned int n;
	struct page *pages[];
};

static void sqfs_job_put(struct sqfs_job *j)
{
	if (refcount_dec_and_test(&j->refs)) {
		sqfs_rbuf_put(j->rb);
		kfree(j);
	}
}

/* do job @j, unless someone else has claimed it */
static void sqfs_job_run(struct sqfs_job *j, enum sqfs_from from)
{
	int err;

	if (atomic_xchg(&j->claimed, 1))
		return;
	err = sqfs_decode_pages(j->inode, j->rb, from, j->idx, j->pos,
				j->word, j->pages, j->n, j->len);
	sqfs_pages_done(j->pages, j->n, err);
}

/* a helper, once the job's bytes are read: never waits for the device */
static void sqfs_job_work(struct work_struct *work)
{
	struct sqfs_job *j = container_of(work, struct sqfs_job, cb.work);

	sqfs_job_run(j, SQFS_READY);
	sqfs_job_put(j);
}

/*
 * The reader is done starting jobs: it claims the ones not started yet and
 * does them itself (@help), or leaves them all to the helpers and goes on.
 */
static void sqfs_jobs_reclaim(struct list_head *jobs, bool help)
{
	struct sqfs_job *j, *tmp;

	list_for_each_entry_safe(j, tmp, jobs, node) {
		list_del(&j->node);
		if (help)
			sqfs_job_run(j, SQFS_DATA);
		sqfs_job_put(j);
	}
}

/*
 * sqfs_wq's jobs only decompress: as many at once as there are CPUs (and a
 * few more: a stream has one more block in flight than there are CPUs);
 * sqfs_ra_wq holds one work item per mount.
 */
int sqfs_jobs_init(void)
{
	unsigned int cpus = num_possible_cpus();

	sqfs_wq = alloc_workqueue("livesquash", WQ_UNBOUND | WQ_HIGHPRI,
				  min(cpus + cpus / 4 + 1, (unsigned int)WQ_MAX_ACTIVE));
	sqfs_ra_wq = alloc_workqueue("livesquash-ra", WQ_UNBOUND, 0);
	if (sqfs_wq && sqfs_ra_wq)
		return 0;
	sqfs_jobs_exit();
	return -ENOMEM;
}

void sqfs_jobs_exit(void)
{
	if (sqfs_wq)
		destroy_workqueue(sqfs_wq);
	if (sqfs_ra_wq)
		destroy_workqueue(sqfs_ra_wq);
	sqfs_wq = NULL;
	sqfs_ra_wq = NULL;
}

/*
 * Read block @idx, whose first page is @folio, the one the readahead
 * @rac stands at, when the readahead holds every page of the block: take
 * them all and decompress into them, or queue them as a job on @jobs
 * (when not NULL) if more blocks follow. Returns false, having taken
 * nothing, where that cannot be done. The mapping holds no large folios
 * (they are not enabled for it), so every folio is one page.
 */
static bool sqfs_ra_direct(struct readahead_control *rac, struct folio *folio,
			   u64 idx, const struct sqfs_run *run,
			   struct page **pages, struct list_head *jobs)
{
	struct inode *inode = rac->mapping->host;
	struct sqfs_job *j = NULL;
	struct page *one;
	unsigned int i, n;
	u64 pos;
	u32 len, word;
	int err;

	if (idx >= SQFS_I(inode)->nblocks || folio_test_large(folio) ||
	    folio->index != sqfs_block_first_page(inode->i_sb, idx))
		return false;
	len = sqfs_block_len(inode, idx);
	n = DIV_ROUND_UP(len, PAGE_SIZE);
	if (readahead_count(rac) < n)
		return false;
	if (jobs && (readahead_count(rac) > n || !list_empty(jobs)))
		j = kmalloc(struct_size(j, pages, n), GFP_NOFS | __GFP_NOWARN);
	if (j)
		pages = j->pages;
	else if (n == 1)
		pages = &one;
	else if (!pages)
		return false;
	pages[0] = &folio->page;
	for (i = 1; i < n; i++)
		pages[i] = &readahead_folio(rac)->page;
	err = sqfs_block_find(inode, idx, run, &pos, &word);
	if (!err && j && word)
		j->rb = sqfs_rbuf_for(inode->i_sb, run->rb, pos,
				      word & SQFS_DATA_LEN_MASK);
	if (!err && j && word && j->rb) {
		INIT_WORK(&j->cb.work, sqfs_job_work);
		j->cb.wq = sqfs_wq;
		atomic_set(&j->claimed, 0);
		refcount_set(&j->refs, 2);
		j->inode = inode;
		j->idx = idx;
		j->pos = pos;
		j->word = word;
		j->len = len;
		j->n = n;
		list_add(&j->node, jobs);
		sqfs_rbuf_then(j->rb, &j->cb);
		return true;
	}
	if (!err)
		err = sqfs_decode_pages(inode, run->rb, SQFS_DATA, idx, pos,
					word, pages, n, len);
	sqfs_pages_done(pages, n, err);
	kfree(j);
	return true;
}

/*
 * This readahead continues a sequential stream: it is the window ahead of
 * the reader that an earlier readahead marked, a first read that asks for
 * at least the readahead window at once, or a miss right where the
 * previous read ended. Not a lone small read or a page fault (the kernel's
 * fault window is not a stream until it moves on).
 */
static bool sqfs_ra_stream(struct readahead_control *rac)
{
	const struct file_ra_state *ra = rac->ra;
	pgoff_t index = readahead_index(rac), prev;

	if (!ra || !ra->async_size || ra->start != index)
		return false;
	if (ra->async_size == ra->size)
		return true;
	/* a first read that asks for a whole window or more at once */
	if (ra->size - ra->async_size >= ra->ra_pages)
		return true;
	if (ra->prev_pos < 0)
		return false;
	prev = ra->prev_pos >> PAGE_SHIFT;
	return index >= prev && index - prev <= 1;
}

/*
 * How far a stream's readahead is widened: a block more than there are
 * CPUs, so that every CPU has one to decompress while the reader copies out
 * the one before, but no further than the device's readahead window or
 * SQFS_RA_WIDE, whichever is larger.
 */
#define SQFS_RA_WIDE	SZ_4M

static loff_t sqfs_ra_wide(struct readahead_control *rac, u32 bs)
{
	u64 want = (u64)bs * (num_online_cpus() + 1);
	u64 most = max_t(u64, (u64)rac->ra->ra_pages << PAGE_SHIFT,
			 SQFS_RA_WIDE);

	return min(want, most);
}

static void sqfs_readahead(struct readahead_control *rac)
{
	struct inode *inode = rac->mapping->host;
	struct super_block *sb = inode->i_sb;
	unsigned int shift = SQFS_SB(sb)->block_log - PAGE_SHIFT;
	u32 bs = SQFS_SB(sb)->block_size;
	loff_t start = round_down(readahead_pos(rac), bs), end;
	struct sqfs_src src = SQFS_SRC_NONE;
	struct sqfs_run run = { .n = 0 };
	struct folio *folio;
	bool ahead = sqfs_ra_stream(rac);
	struct page **pages = NULL;
	LIST_HEAD(jobs);
	/* other CPUs may take blocks of this readahead */
	bool par = num_online_cpus() > 1;
	int err = 0;
	u64 last;

	/* a block is decompressed whole: read all of its pages while at it */
	end = round_up(readahead_pos(rac) + readahead_length(rac), bs);
	/* a stream whose window holds few (large) blocks takes more */
	if (ahead && par)
		end = max_t(loff_t, end, start + sqfs_ra_wide(rac, bs));
	end = min_t(loff_t, end, round_up(i_size_read(inode), PAGE_SIZE));
	if (end > start)
		readahead_expand(rac, start, end - start);
	last = (readahead_pos(rac) + readahead_length(rac) - 1) >>
	       SQFS_SB(sb)->block_log;
	/* without it, blocks are decompressed into a buffer and copied */
	if (shift && !mapping_large_folio_support(rac->mapping))
		pages = kmalloc_array(1U << shift, sizeof(*pages),
				      GFP_NOFS | __GFP_NOWARN);
	while ((folio = readahead_folio(rac))) {
		u64 idx = (u64)folio->index >> shift;

		if (folio_pos(folio) >= i_size_read(inode)) {
			sqfs_src_drop(sb, &src);
			err = 0;
		} else if (idx != src.idx) {
			sqfs_src_drop(sb, &src);
			sqfs_run_find(inode, idx, last, &run);
			if (sqfs_ra_direct(rac, folio, idx, &run, pages,
					   par ? &jobs : NULL))
				continue;
			err = sqfs_src_load(inode, idx, &src, &run, true);
		}
		if (!err)
			sqfs_fill_folio(folio, &src, (pgoff_t)idx << shift);
		folio_unlock(folio);
	}
	sqfs_src_drop(sb, &src);
	sqfs_jobs_reclaim(&jobs, !ahead);
	sqfs_rbuf_put(run.rb);
	kfree(pages);
}

/*
 * The size words of blocks @idx to @idx + @n - 1 into @words; under walk_lock.
 * One read of the block list for them all (see sqfs_block_at).
 */
static int sqfs_words_at(struct inode *inode, u64 idx, unsigned int n,
			 __le32 *words)
{
	struct sqfs_inode *si = SQFS_I(inode);
	unsigned int i;
	u64 pos;
	u32 word;
	int err;

	err = sqfs_block_at(inode, idx, &pos, &word);
	if (err)
		return err;
	words[0] = cpu_to_le32(word);
	if (n > 1)
		err = sqfs_meta_read(inode->i_sb, &si->walk, words + 1,
				     (n - 1) * sizeof(words[0]));
	if (err) {
		si->walk_idx = U64_MAX;	/* restart next time */
		return err;
	}
	for (i = 1; i < n; i++) {
		si->walk_pos += le32_to_cpu(words[i]) & SQFS_DATA_LEN_MASK;
		si->walk_idx++;
	}
	return 0;
}

/*
 * SEEK_DATA and SEEK_HOLE: the first byte at or after @off that is data
 * (@hole false) or in a hole. Sparse blocks are the holes; the tail in a
 * fragment is data; the end of the file counts as a hole. The block list
 * is read a batch at a time, up to a checkpoint of the walk (so later
 * reads find it), with a chance to reschedule and to be killed between
 * batches: a crafted file may claim 2^34 blocks, and the walk ends only
 * where its table does.
 */
#define SQFS_SEEK_BATCH	512

static loff_t sqfs_seek_hole_data(struct inode *inode, loff_t off, bool hole)
{
	struct sqfs_inode *si = SQFS_I(inode);
	unsigned int log = SQFS_SB(inode->i_sb)->block_log;
	loff_t size = i_size_read(inode);
	__le32 *words;
	unsigned int i = 0, n = 0;
	u64 idx;
	int err = 0;

	if (off < 0 || off >= size)
		return -ENXIO;
	words = kmalloc_array(SQFS_SEEK_BATCH, sizeof(*words), GFP_KERNEL);
	if (!words)
		return -ENOMEM;
	for (idx = off >> log; idx < si->nblocks; idx += n) {
		n = min_t(u64, si->nblocks - idx,
			  SQFS_SEEK_STEP - idx % SQFS_SEEK_STEP);
		n = min_t(unsigned int, n, SQFS_SEEK_BATCH);
		mutex_lock(&si->walk_lock);
		err = sqfs_words_at(inode, idx, n, words);
		mutex_unlock(&si->walk_lock);
		if (err)
			break;
		for (i = 0; i < n && !words[i] != hole; i++)
			;
		if (i < n)
			break;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cond_resched();
	}
	kfree(words);
	if (err)
		return err;
	if (idx < si->nblocks) {
		idx += i;
		return max_t(loff_t, off, (loff_t)idx << log);
	}
	if (hole)
		return size;
	if ((loff_t)si->nblocks << log >= size)
		return -ENXIO;		/* no tail: holes to the end */
	return max_t(loff_t, off, (loff_t)si->nblocks << log);
}

static loff_t sqfs_file_llseek(struct file *file, loff_t off, int whence)
{
	struct inode *inode = file->f_mapping->host;

	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return generic_file_llseek(file, off, whence);
	off = sqfs_seek_hole_data(inode, off, whence == SEEK_HOLE);
	if (off < 0)
		return off;
	return vfs_setpos(file, off, inode->i_sb->s_maxbytes);
}

const struct file_operations sqfs_file_fops = {
	.llseek = sqfs_file_llseek,
	.read_iter = generic_file_read_iter,
	SQFS_FOPS_MMAP,
	.setlease = generic_setlease,
	.splice_read = sqfs_splice_read,
};

const struct address_space_operations sqfs_file_aops = {
	.read_folio = sqfs_read_folio,
	.readahead = sqfs_readahead,
};
