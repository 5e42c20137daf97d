/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * livesquash: the kernel interfaces that differ between the kernels the
 * driver is built for, those Debian ships: 6.1 (Debian 12), 6.12 (Debian 13),
 * 7.3 (trixie-backports) and 7.2 (forky), each behind one helper, so that the
 * rest of the driver has no version tests. The version given for each change
 * is where mainline made it; only those four are built and tested.
 */
#ifndef __LIVESQUASH_COMPAT_H
#define __LIVESQUASH_COMPAT_H

#include <linux/version.h>
#include <linux/fs.h>
#include <linux/blkdev.h>
#include <linux/dcache.h>
#include <linux/exportfs.h>
#include <linux/list_lru.h>
#include <linux/shrinker.h>
#include <linux/slab.h>

#define SQFS_KERNEL_AT_LEAST(a, b) \
	(KERNEL_VERSION((a), (b), 0) <= LINUX_VERSION_CODE)

/* leases (generic_setlease): in their own header since 6.3 */
#if SQFS_KERNEL_AT_LEAST(6, 3)
#include <linux/filelock.h>
#endif

/* the block device's page cache (6.10: bd_mapping instead of bd_inode) */
static inline struct address_space *sqfs_bdev_mapping(struct block_device *bdev)
{
#if SQFS_KERNEL_AT_LEAST(6, 10)
	return bdev->bd_mapping;
#else
	return bdev->bd_inode->i_mapping;
#endif
}

/* the inode number of a dentry's parent (6.10: d_parent_ino) */
static inline ino_t sqfs_parent_ino(struct dentry *dentry)
{
#if SQFS_KERNEL_AT_LEAST(6, 10)
	return d_parent_ino(dentry);
#else
	return parent_ino(dentry);
#endif
}

/* whether iget_locked gave a new inode (6.19: i_state behind accessors) */
static inline bool sqfs_inode_is_new(struct inode *inode)
{
#if SQFS_KERNEL_AT_LEAST(6, 19)
	return inode_state_read_once(inode) & I_NEW;
#else
	return inode->i_state & I_NEW;
#endif
}

/* read-only mappings of a file (6.17: ->mmap_prepare replaces ->mmap) */
#if SQFS_KERNEL_AT_LEAST(6, 17)
#define SQFS_FOPS_MMAP		.mmap_prepare = generic_file_readonly_mmap_prepare
#else
#define SQFS_FOPS_MMAP		.mmap = generic_file_readonly_mmap
#endif

/*
 * list_lru walks with a callback of (item, list, arg) on every kernel (6.13
 * dropped the spinlock_t * that a callback was passed before it)
 */
typedef enum lru_status (*sqfs_lru_cb)(struct list_head *item,
				       struct list_lru_one *list, void *arg);

#if SQFS_KERNEL_AT_LEAST(6, 13)
static inline unsigned long sqfs_lru_walk(struct list_lru *lru, sqfs_lru_cb cb,
					  void *arg, unsigned long nr)
{
	return list_lru_walk(lru, cb, arg, nr);
}

static inline unsigned long sqfs_lru_shrink_walk(struct list_lru *lru,
						 struct shrink_control *sc,
						 sqfs_lru_cb cb, void *arg)
{
	return list_lru_shrink_walk(lru, sc, cb, arg);
}
#else
struct sqfs_lru_call {
	sqfs_lru_cb cb;
	void *arg;
};

static inline enum lru_status sqfs_lru_call(struct list_head *item,
					    struct list_lru_one *list,
					    spinlock_t *lock, void *arg)
{
	struct sqfs_lru_call *call = arg;

	return call->cb(item, list, call->arg);
}

static inline unsigned long sqfs_lru_walk(struct list_lru *lru, sqfs_lru_cb cb,
					  void *arg, unsigned long nr)
{
	struct sqfs_lru_call call = { cb, arg };

	return list_lru_walk(lru, sqfs_lru_call, &call, nr);
}

static inline unsigned long sqfs_lru_shrink_walk(struct list_lru *lru,
						 struct shrink_control *sc,
						 sqfs_lru_cb cb, void *arg)
{
	struct sqfs_lru_call call = { cb, arg };

	return list_lru_shrink_walk(lru, sc, sqfs_lru_call, &call);
}
#endif

/* one object the size of @obj (7.x: the typed kmalloc_obj, kernels before) */
#ifdef kmalloc_obj
#define sqfs_kmalloc_obj(obj, gfp)	kmalloc_obj(obj, gfp)
#else
#define sqfs_kmalloc_obj(obj, gfp)	kmalloc(sizeof(obj), gfp)
#endif

/* one time for all three of an inode's times (6.7: accessors only) */
static inline void sqfs_set_times(struct inode *inode, time64_t sec)
{
	struct timespec64 ts = { .tv_sec = sec };

#if SQFS_KERNEL_AT_LEAST(6, 7)
	inode_set_mtime_to_ts(inode, ts);
	inode_set_atime_to_ts(inode, ts);
	inode_set_ctime_to_ts(inode, ts);
#else
	inode->i_mtime = ts;
	inode->i_atime = ts;
	inode->i_ctime = ts;
#endif
}

/* splice from the page cache (6.5: filemap_splice_read) */
#if SQFS_KERNEL_AT_LEAST(6, 5)
#define sqfs_splice_read	filemap_splice_read
#else
#define sqfs_splice_read	generic_file_splice_read
#endif

/*
 * A file handle of inode number and generation, 32 bits each (6.7: the
 * exportfs core no longer encodes one for a NULL ->encode_fh and calls it
 * unchecked; generic_encode_ino32_fh is that former default)
 */
#if SQFS_KERNEL_AT_LEAST(6, 7)
#define sqfs_encode_fh		generic_encode_ino32_fh
#else
#define sqfs_encode_fh		NULL
#endif

/* a list_lru entry on the list of its node and memory cgroup (6.8: _obj) */
static inline bool sqfs_lru_add(struct list_lru *lru, struct list_head *item)
{
#if SQFS_KERNEL_AT_LEAST(6, 8)
	return list_lru_add_obj(lru, item);
#else
	return list_lru_add(lru, item);
#endif
}

static inline bool sqfs_lru_del(struct list_lru *lru, struct list_head *item)
{
#if SQFS_KERNEL_AT_LEAST(6, 8)
	return list_lru_del_obj(lru, item);
#else
	return list_lru_del(lru, item);
#endif
}

/*
 * Shrinkers. 6.7 allocates them (shrinker_alloc) and gives each a
 * private_data pointer; 6.1 registers one its owner embeds. Both are used
 * here in three steps: made, with a memory cgroup id if it is
 * SHRINKER_MEMCG_AWARE (list_lru_init_memcg needs it); started, after which
 * its functions are called; freed. sqfs_shrinker_data is the @data it was
 * made with.
 */
typedef unsigned long (*sqfs_shrink_fn)(struct shrinker *s,
					struct shrink_control *sc);

#if SQFS_KERNEL_AT_LEAST(6, 7)
static inline struct shrinker *sqfs_shrinker_new(unsigned int flags,
						 const char *name, void *data,
						 sqfs_shrink_fn count,
						 sqfs_shrink_fn scan)
{
	struct shrinker *s = shrinker_alloc(flags, "%s", name);

	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	s->private_data = data;
	return s;
}

static inline void sqfs_shrinker_start(struct shrinker *s)
{
	shrinker_register(s);
}

static inline void sqfs_shrinker_free(struct shrinker *s)
{
	shrinker_free(s);
}

static inline void *sqfs_shrinker_data(struct shrinker *s)
{
	return s->private_data;
}
#else
/*
 * 6.1 exports no way to get the id without registering (prealloc_shrinker
 * is not for modules): the shrinker is registered when made, and its
 * functions are wrapped so that they do nothing until it is started.
 */
struct sqfs_shrinker_box {
	struct shrinker s;
	void *data;
	sqfs_shrink_fn count, scan;
	bool started;
};

#define SQFS_BOX(sh)	container_of(sh, struct sqfs_shrinker_box, s)

static inline unsigned long sqfs_box_count(struct shrinker *s,
					   struct shrink_control *sc)
{
	/* pairs with sqfs_shrinker_start */
	return smp_load_acquire(&SQFS_BOX(s)->started) ?
	       SQFS_BOX(s)->count(s, sc) : 0;
}

static inline unsigned long sqfs_box_scan(struct shrinker *s,
					  struct shrink_control *sc)
{
	/* pairs with sqfs_shrinker_start */
	return smp_load_acquire(&SQFS_BOX(s)->started) ?
	       SQFS_BOX(s)->scan(s, sc) : SHRINK_STOP;
}

static inline struct shrinker *sqfs_shrinker_new(unsigned int flags,
						 const char *name, void *data,
						 sqfs_shrink_fn count,
						 sqfs_shrink_fn scan)
{
	struct sqfs_shrinker_box *b = kzalloc(sizeof(*b), GFP_KERNEL);

	if (!b)
		return NULL;
	b->s.count_objects = sqfs_box_count;
	b->s.scan_objects = sqfs_box_scan;
	b->s.seeks = DEFAULT_SEEKS;
	b->s.flags = flags;
	b->data = data;
	b->count = count;
	b->scan = scan;
	if (register_shrinker(&b->s, "%s", name)) {
		kfree(b);
		return NULL;
	}
	return &b->s;
}

static inline void sqfs_shrinker_start(struct shrinker *s)
{
	/* its lists are set up once this is seen */
	smp_store_release(&SQFS_BOX(s)->started, true);
}

static inline void sqfs_shrinker_free(struct shrinker *s)
{
	if (!s)
		return;
	unregister_shrinker(s);
	kfree(SQFS_BOX(s));
}

static inline void *sqfs_shrinker_data(struct shrinker *s)
{
	return SQFS_BOX(s)->data;
}
#endif

#endif
