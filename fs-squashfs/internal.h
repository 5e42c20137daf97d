/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * livesquash: in-memory state of the squashfs 4.0 driver.
 */
#ifndef __LIVESQUASH_INTERNAL_H
#define __LIVESQUASH_INTERNAL_H

#include <linux/fs.h>
#include <linux/ratelimit.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <linux/shrinker.h>
#include <linux/list_lru.h>
#include <linux/xattr.h>
#include <linux/workqueue.h>
#include <linux/sizes.h>
#include "squashfs_fs.h"
#include "compat.h"

#define LIVESQUASH_VERSION	"0.1.0"

struct sqfs_sb;
struct sqfs_seek;

/* one compressor, reached through the kernel's own library for it */
struct sqfs_decomp_ops {
	unsigned int id;
	const char *name;
	unsigned int opts_size;	/* bytes of its options block */
	/* validate the options block, if the image has one */
	int (*check_opts)(struct super_block *sb, const void *opts,
			  unsigned int len);
	void *(*create)(void);
	void (*destroy)(void *stream);
	/* bytes written to @out, or a negative errno */
	int (*decompress)(void *stream, const void *in, unsigned int inlen,
			  void *out, unsigned int outlen);
};

extern const struct sqfs_decomp_ops sqfs_zlib_ops;
extern const struct sqfs_decomp_ops sqfs_xz_ops;
extern const struct sqfs_decomp_ops sqfs_lzo_ops;
extern const struct sqfs_decomp_ops sqfs_lz4_ops;
extern const struct sqfs_decomp_ops sqfs_zstd_ops;

/* decompressed metadata or fragment blocks, keyed by disk position */
struct sqfs_cblk;
struct sqfs_dnames;

struct sqfs_bcache {
	struct xarray blocks;	/* by disk position; its lock guards refs */
	struct list_lru lru;	/* every block cached, oldest first */
	atomic_long_t nr;	/* blocks cached */
	unsigned long max;	/* ... at most */
	unsigned int bufsize;
};

/* a decompression stream, from the compressor's shared pool */
struct sqfs_worker {
	struct list_head node;
	void *stream;
};

struct sqfs_pool;

/* a position in a table of metadata blocks */
struct sqfs_mcur {
	u64 blk;		/* disk position of the current block */
	unsigned int off;	/* offset in its decompressed bytes */
	u64 end;		/* no block of this table starts at or past here */
};

enum sqfs_errors {
	SQFS_ERRORS_CONTINUE,
	SQFS_ERRORS_PANIC,
};

/* meta_readahead= default: the inode and directory tables, up to 16 MiB */
#define SQFS_META_RA_KIB	16384

struct sqfs_sb {
	u64 bytes_used;
	u32 block_size;
	unsigned int block_log;
	unsigned int flags;
	u32 inode_count;
	u32 frag_count;
	u64 root_ref;
	u64 inode_table;
	u64 dir_table;
	u64 dir_end;
	u64 frag_table;
	u64 export_table;
	u64 id_table;
	u64 xattr_table;
	unsigned int errors;
	u32 meta_ra_kib;	/* meta_readahead=: read ahead at mount */
	/*
	 * error messages: each image has its own limit, so that one failing
	 * medium cannot hide the first errors of another
	 */
	struct ratelimit_state ratelimit;

	u32 *ids;
	unsigned int id_count;
	u64 *frag_blocks;	/* disk positions of the fragment table's blocks */
	u64 *export_blocks;	/* ... and of the export table's */
	u64 *xattr_blocks;	/* ... and of the xattr id table's */
	u64 xattr_kv;		/* start of the xattr key/value table */
	u32 xattr_ids;

	const struct sqfs_decomp_ops *dops;
	struct sqfs_pool *pool;	/* streams shared with other mounts */
	u32 bufsize;		/* largest block: data or metadata */

	struct sqfs_bcache meta;
	struct sqfs_bcache frag;
	struct shrinker *shrinker;	/* of meta and frag (cache.c) */
	/* bytes in directories' tables of names, and the most they may take */
	atomic_long_t names_bytes;
	unsigned long names_max;

	struct super_block *sb;
	/* the fragment block after the one a reader moved on to (file.c) */
	struct work_struct frag_ra;
	u32 frag_last;		/* the fragment readers asked for last */
	u32 frag_next;		/* the one frag_ra loads */
	struct mem_cgroup *frag_memcg;	/* ... charged to this one */
};

struct sqfs_inode {
	u64 start;		/* file: first data block; dir: table offset */
	struct sqfs_mcur list;	/* file: block sizes; dir: index entries */
	u32 frag;
	u32 frag_off;
	u32 xattr;
	u32 parent;		/* dir: parent inode number */
	unsigned int dir_off;	/* dir: offset in the first listing block */
	unsigned int idx_count;	/* dir: index entries */
	u64 nblocks;		/* file: full (or last unfragmented) blocks */

	/* file: where the last block walk stopped (under walk_lock) */
	struct mutex walk_lock;
	u64 walk_idx;
	u64 walk_pos;
	struct sqfs_mcur walk;
	struct sqfs_seek *seek;	/* checkpoints of earlier walks */
	u64 nseek;
	u64 seek_cap;		/* room in seek */

	struct sqfs_dnames *names;	/* dir: its names for lookups (dir.c) */
	atomic_t lookups;	/* dir: lookups before it had them */

	struct inode vfs_inode;
};

static inline struct sqfs_sb *SQFS_SB(const struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct sqfs_inode *SQFS_I(const struct inode *inode)
{
	return container_of(inode, struct sqfs_inode, vfs_inode);
}

/* super.c */
__printf(2, 3) __cold void sqfs_err(const struct super_block *sb,
				    const char *fmt, ...);
__printf(2, 3) __cold int sqfs_corrupt(const struct super_block *sb,
				       const char *fmt, ...);

/* block.c */
const struct sqfs_decomp_ops *sqfs_find_decomp(unsigned int id);
void sqfs_pool_join(struct sqfs_sb *sbi);
void sqfs_pool_leave(struct sqfs_sb *sbi);
void sqfs_pools_init(void);
struct sqfs_worker *sqfs_worker_get(struct super_block *sb);
void sqfs_worker_put(struct super_block *sb, struct sqfs_worker *w);
void sqfs_raw_readahead(struct super_block *sb, u64 pos, u64 end);
int sqfs_read_raw(struct super_block *sb, u64 pos, void *buf, size_t len);
/*
 * the most bytes of compressed data one read of a run of blocks fetches
 * (its buffer of 512 KiB also holds a device block of slack on each side)
 */
#define SQFS_RBUF_SIZE		(SZ_512K - 2 * PAGE_SIZE)
struct sqfs_rbuf;
/* work to be queued on @wq once a read buffer's read is done */
struct sqfs_rbuf_cb {
	struct list_head node;
	struct work_struct work;
	struct workqueue_struct *wq;
};

/* where a block's compressed bytes may come from */
enum sqfs_from {
	SQFS_META,	/* the device's page cache */
	SQFS_DATA,	/* a read buffer, else straight from the disk */
	SQFS_READY,	/* the read buffer given, already read; nowhere else */
};

struct sqfs_rbuf *sqfs_rbuf_new(size_t size);
void *sqfs_rbuf_mem(struct sqfs_rbuf *rb);
struct sqfs_rbuf *sqfs_rbuf_read(struct super_block *sb, u64 pos, u64 end);
struct sqfs_rbuf *sqfs_rbuf_get(struct sqfs_rbuf *rb);
struct sqfs_rbuf *sqfs_rbuf_for(struct super_block *sb, struct sqfs_rbuf *rb,
				u64 pos, u32 len);
void sqfs_rbuf_then(struct sqfs_rbuf *rb, struct sqfs_rbuf_cb *cb);
void sqfs_rbuf_put(struct sqfs_rbuf *rb);
void sqfs_rbufs_drain(void);
int sqfs_idle_init(void);
void sqfs_idle_exit(void);
int sqfs_decode_data(struct super_block *sb, struct sqfs_rbuf *rb, u64 pos,
		     u32 len, bool compressed, enum sqfs_from from, void *out,
		     u32 outlen);
int sqfs_read_block(struct super_block *sb, u64 pos, u32 len, bool compressed,
		    void *out, u32 outlen);

/* cache.c */
int sqfs_cblk_cache_init(void);
void sqfs_cblk_cache_exit(void);
int sqfs_caches_init(struct super_block *sb);
void sqfs_caches_free(struct sqfs_sb *sbi);
void sqfs_caches_show(struct seq_file *m, struct sqfs_sb *sbi);
int sqfs_meta_read(struct super_block *sb, struct sqfs_mcur *c, void *buf,
		   size_t len);
int sqfs_meta_skip(struct super_block *sb, struct sqfs_mcur *c, size_t len);
int sqfs_meta_read_pin(struct super_block *sb, struct sqfs_mcur *c,
		       struct sqfs_cblk **pin, void *buf, size_t len);
void sqfs_meta_unpin(struct sqfs_cblk **pin);
struct sqfs_cblk *sqfs_frag_get(struct super_block *sb, u64 pos, u32 word,
				u32 off, u32 len);
struct sqfs_cblk *sqfs_data_get(struct super_block *sb, struct sqfs_rbuf *rb,
				u64 pos, u32 word, u32 len);
const void *sqfs_cblk_data(const struct sqfs_cblk *b);
void sqfs_cblk_put(struct sqfs_cblk *b);

/* tables.c */
u64 *sqfs_table_blocks(struct super_block *sb, u64 start, u64 count,
		       unsigned int esize, const char *what);
int sqfs_table_entry(struct super_block *sb, const u64 *blocks, u64 start,
		     u64 idx, unsigned int esize, void *out);
int sqfs_tables_load(struct super_block *sb);
void sqfs_tables_free(struct sqfs_sb *sbi);
int sqfs_frag_lookup(struct super_block *sb, u32 idx, u64 *pos, u32 *word);
int sqfs_export_lookup(struct super_block *sb, u32 ino, u64 *ref);

/* inode.c */
struct inode *sqfs_iget(struct super_block *sb, u64 ref, u32 ino);
int sqfs_ref_ino(struct super_block *sb, u64 ref, u32 *ino);
struct sqfs_mcur sqfs_inode_cur(struct super_block *sb, u64 ref);
extern const struct inode_operations sqfs_symlink_iops;
extern const struct inode_operations sqfs_special_iops;
extern const struct inode_operations sqfs_file_iops;

/* dir.c */
extern const struct inode_operations sqfs_dir_iops;
extern const struct file_operations sqfs_dir_fops;
void sqfs_dir_evict(struct inode *dir);

/* file.c */
extern const struct address_space_operations sqfs_file_aops;
extern const struct file_operations sqfs_file_fops;
void sqfs_file_evict(struct inode *inode);
void sqfs_frag_ra_work(struct work_struct *work);
int sqfs_jobs_init(void);
void sqfs_jobs_exit(void);

/* export.c */
extern const struct export_operations sqfs_export_ops;

/* xattr.c */
#ifdef CONFIG_SQUASHFS_XATTR
int sqfs_xattr_load(struct super_block *sb);
extern const struct xattr_handler *sqfs_xattr_handlers[];
ssize_t sqfs_listxattr(struct dentry *dentry, char *buf, size_t size);
#else
static inline int sqfs_xattr_load(struct super_block *sb)
{
	return 0;
}

#define sqfs_xattr_handlers	NULL
#define sqfs_listxattr		NULL
#endif

#endif /* __LIVESQUASH_INTERNAL_H */
