// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: superblock, mount options and registration.
 */
#include <linux/module.h>
#include <linux/init.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/blkdev.h>
#include <linux/statfs.h>
#include <linux/seq_file.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/magic.h>
#include <linux/workqueue.h>
#include <linux/memcontrol.h>
#include "internal.h"

static struct kmem_cache *sqfs_inode_cachep;

/* the fragment read-ahead leaves failures to the reader that meets them */
static bool sqfs_quiet(const struct super_block *sb)
{
	return sb->s_fs_info && current_work() == &SQFS_SB(sb)->frag_ra;
}

/* an image's messages are limited per image (sqfs_get_tree sets the limit) */
static bool sqfs_say(const struct super_block *sb)
{
	if (sqfs_quiet(sb))
		return false;
	return !sb->s_fs_info || __ratelimit(&SQFS_SB(sb)->ratelimit);
}

void sqfs_err(const struct super_block *sb, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (!sqfs_say(sb))
		return;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("livesquash (%s): %pV\n", sb->s_id, &vaf);
	va_end(args);
}

/* report a corrupt image: log it, honour errors=panic, return -EUCLEAN */
int sqfs_corrupt(const struct super_block *sb, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (sqfs_say(sb)) {
		va_start(args, fmt);
		vaf.fmt = fmt;
		vaf.va = &args;
		pr_err("livesquash (%s): corrupt image: %pV\n", sb->s_id, &vaf);
		va_end(args);
	}
	if (sb->s_fs_info && SQFS_SB(sb)->errors == SQFS_ERRORS_PANIC &&
	    !sqfs_quiet(sb))
		panic("livesquash (%s): corrupt image and errors=panic\n",
		      sb->s_id);
	return -EUCLEAN;
}

static struct inode *sqfs_alloc_inode(struct super_block *sb)
{
	struct sqfs_inode *si = alloc_inode_sb(sb, sqfs_inode_cachep,
					       GFP_KERNEL);

	if (!si)
		return NULL;
	si->seek = NULL;
	si->names = NULL;
	return &si->vfs_inode;
}

/*
 * A directory's table of names counts against its mount's budget: it goes
 * here, while the mount is still there (free_inode may run after it).
 */
static void sqfs_evict_inode(struct inode *inode)
{
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (S_ISDIR(inode->i_mode))
		sqfs_dir_evict(inode);
}

static void sqfs_free_inode(struct inode *inode)
{
	if (S_ISLNK(inode->i_mode))
		kfree(inode->i_link);
	else if (S_ISREG(inode->i_mode))
		sqfs_file_evict(inode);
	kmem_cache_free(sqfs_inode_cachep, SQFS_I(inode));
}

static int sqfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct super_block *sb = dentry->d_sb;
	struct sqfs_sb *sbi = SQFS_SB(sb);

	buf->f_type = SQUASHFS_MAGIC;
	buf->f_bsize = sbi->block_size;
	buf->f_blocks = DIV_ROUND_UP_ULL(sbi->bytes_used, sbi->block_size);
	buf->f_bfree = 0;
	buf->f_bavail = 0;
	buf->f_files = sbi->inode_count;
	buf->f_ffree = 0;
	buf->f_namelen = SQFS_NAME_MAX;
	buf->f_fsid = u64_to_fsid(huge_encode_dev(sb->s_bdev->bd_dev));
	return 0;
}

static int sqfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct sqfs_sb *sbi = SQFS_SB(root->d_sb);

	if (sbi->errors == SQFS_ERRORS_PANIC)
		seq_puts(m, ",errors=panic");
	else
		seq_puts(m, ",errors=continue");
	if (sbi->meta_ra_kib != SQFS_META_RA_KIB)
		seq_printf(m, ",meta_readahead=%u", sbi->meta_ra_kib);
	return 0;
}

/* the memory the mount holds, in /proc/self/mountstats */
static int sqfs_show_stats(struct seq_file *m, struct dentry *root)
{
	struct sqfs_sb *sbi = SQFS_SB(root->d_sb);

	seq_puts(m, "livesquash");
	sqfs_caches_show(m, sbi);
	seq_printf(m, "\n\tname tables: %ld bytes (at most %lu)",
		   atomic_long_read(&sbi->names_bytes), sbi->names_max);
	return 0;
}

static const struct super_operations sqfs_super_ops = {
	.alloc_inode = sqfs_alloc_inode,
	.evict_inode = sqfs_evict_inode,
	.free_inode = sqfs_free_inode,
	.statfs = sqfs_statfs,
	.show_options = sqfs_show_options,
	.show_stats = sqfs_show_stats,
};

/* mount options */
enum { OPT_ERRORS, OPT_META_RA };

static const struct constant_table sqfs_param_errors[] = {
	{ "continue", SQFS_ERRORS_CONTINUE },
	{ "panic", SQFS_ERRORS_PANIC },
	{}
};

static const struct fs_parameter_spec sqfs_fs_parameters[] = {
	fsparam_enum("errors", OPT_ERRORS, sqfs_param_errors),
	fsparam_u32("meta_readahead", OPT_META_RA),
	{}
};

struct sqfs_opts {
	unsigned int errors;
	bool errors_set;
	u32 meta_ra_kib;
};

static int sqfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct sqfs_opts *opts = fc->fs_private;
	struct fs_parse_result res;
	int opt = fs_parse(fc, sqfs_fs_parameters, param, &res);

	switch (opt) {
	case OPT_ERRORS:
		opts->errors = res.uint_32;
		opts->errors_set = true;
		return 0;
	case OPT_META_RA:
		opts->meta_ra_kib = res.uint_32;
		return 0;
	}
	/* -ENOPARAM lets the VFS take "source"; other errors are reported */
	return opt < 0 ? opt : -EINVAL;
}

/* convert and check the superblock; the tables are checked as they load */
static int sqfs_parse_super(struct super_block *sb, const struct sqfs_super *d)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	u64 next[4], devsize = bdev_nr_bytes(sb->s_bdev);
	unsigned int i, comp = le16_to_cpu(d->compressor);

	if (le32_to_cpu(d->magic) != SQFS_MAGIC) {
		if (!(sb->s_flags & SB_SILENT))
			sqfs_err(sb, "not a squashfs image (magic %#x)",
				 le32_to_cpu(d->magic));
		return -EINVAL;
	}
	if (le16_to_cpu(d->major) != SQFS_MAJOR ||
	    le16_to_cpu(d->minor) != SQFS_MINOR) {
		sqfs_err(sb, "squashfs version %u.%u is not supported (only 4.0)",
			 le16_to_cpu(d->major), le16_to_cpu(d->minor));
		return -EOPNOTSUPP;
	}
	sbi->dops = sqfs_find_decomp(comp);
	if (!sbi->dops) {
		sqfs_err(sb, "compressor %u is not supported by this kernel", comp);
		return -EOPNOTSUPP;
	}

	sbi->block_size = le32_to_cpu(d->block_size);
	sbi->block_log = le16_to_cpu(d->block_log);
	sbi->flags = le16_to_cpu(d->flags);
	sbi->inode_count = le32_to_cpu(d->inode_count);
	sbi->frag_count = le32_to_cpu(d->frag_count);
	sbi->id_count = le16_to_cpu(d->id_count);
	sbi->root_ref = le64_to_cpu(d->root_inode);
	sbi->bytes_used = le64_to_cpu(d->bytes_used);
	sbi->inode_table = le64_to_cpu(d->inode_table);
	sbi->dir_table = le64_to_cpu(d->dir_table);
	sbi->frag_table = le64_to_cpu(d->frag_table);
	sbi->export_table = le64_to_cpu(d->export_table);
	sbi->id_table = le64_to_cpu(d->id_table);
	sbi->xattr_table = le64_to_cpu(d->xattr_table);

	if (sbi->block_log < SQFS_MIN_BLOCK_LOG ||
	    sbi->block_log > SQFS_MAX_BLOCK_LOG ||
	    sbi->block_size != 1U << sbi->block_log)
		return sqfs_corrupt(sb, "block size %u (log %u) is invalid",
				    sbi->block_size, sbi->block_log);
	/*
	 * file.c maps a block onto whole pages (block_log - PAGE_SHIFT): a
	 * block smaller than a page (4 KiB blocks with 16 or 64 KiB pages)
	 * is not supported. It cannot happen with 4 KiB pages, the least
	 * the format has.
	 */
	if (sbi->block_log < PAGE_SHIFT) {
		sqfs_err(sb, "block size %u is smaller than the page size %lu: not supported",
			 sbi->block_size, PAGE_SIZE);
		return -EOPNOTSUPP;
	}
	if (sbi->bytes_used < sizeof(*d) || sbi->bytes_used > devsize)
		return sqfs_corrupt(sb, "image size %llu does not fit the device (%llu bytes)",
				    sbi->bytes_used, devsize);
	if (!sbi->inode_count)
		return sqfs_corrupt(sb, "no inodes");

	/* inode table, directory table, then the others in any order */
	if (sbi->inode_table < sizeof(*d) ||
	    sbi->dir_table <= sbi->inode_table ||
	    sbi->id_table <= sbi->dir_table ||
	    sbi->id_table >= sbi->bytes_used)
		return sqfs_corrupt(sb, "table positions are out of order");
	if (sbi->frag_count &&
	    (sbi->frag_table <= sbi->dir_table ||
	     sbi->frag_table >= sbi->bytes_used))
		return sqfs_corrupt(sb, "fragment table at %llu is out of place",
				    sbi->frag_table);
	if (sbi->export_table != SQFS_NO_TABLE &&
	    (sbi->export_table <= sbi->dir_table ||
	     sbi->export_table >= sbi->bytes_used))
		return sqfs_corrupt(sb, "export table at %llu is out of place",
				    sbi->export_table);
	if (sbi->xattr_table != SQFS_NO_TABLE &&
	    (sbi->xattr_table <= sbi->dir_table ||
	     sbi->xattr_table >= sbi->bytes_used))
		return sqfs_corrupt(sb, "xattr table at %llu is out of place",
				    sbi->xattr_table);
	if (sqfs_ref_block(sbi->root_ref) >= sbi->dir_table - sbi->inode_table)
		return sqfs_corrupt(sb, "root inode reference %#llx is out of place",
				    sbi->root_ref);

	/* the directory table ends where the first table after it begins */
	next[0] = sbi->frag_count ? sbi->frag_table : SQFS_NO_TABLE;
	next[1] = sbi->export_table;
	next[2] = sbi->id_table;
	next[3] = sbi->xattr_table;
	sbi->dir_end = SQFS_NO_TABLE;
	for (i = 0; i < ARRAY_SIZE(next); i++)
		sbi->dir_end = min(sbi->dir_end, next[i]);
	return 0;
}

/* the options block, if any, right after the superblock */
static int sqfs_check_comp_opts(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	struct sqfs_mcur c = {
		.blk = sizeof(struct sqfs_super),
		.end = sbi->inode_table,
	};
	u8 opts[16];
	int err;

	if (!(sbi->flags & SQFS_FLAG_COMP_OPTS))
		return 0;
	BUILD_BUG_ON(sizeof(opts) < sizeof(struct sqfs_gzip_opts));
	err = sqfs_meta_read(sb, &c, opts, sbi->dops->opts_size);
	if (err)
		return err;
	if (!sbi->dops->check_opts)
		return 0;
	return sbi->dops->check_opts(sb, opts, sbi->dops->opts_size);
}

static int sqfs_setup(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	int err;

	sbi->bufsize = max_t(u32, sbi->block_size, SQFS_META_SIZE);
	sqfs_pool_join(sbi);
	err = sqfs_caches_init(sb);
	if (!err)
		err = sqfs_check_comp_opts(sb);
	if (!err)
		err = sqfs_tables_load(sb);
	return err;
}

/*
 * Start reading the inode and directory tables, up to meta_readahead KiB:
 * every lookup and inode of a cold tree needs a block of them, and on a
 * medium that seeks (a DVD: ~100 ms) one sequential read of the tables is
 * cheaper than going back to them between the data blocks of each file.
 * The pages are the block device's, reclaimable like any page cache.
 */
static void sqfs_meta_readahead(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	u64 max = (u64)sbi->meta_ra_kib << 10;

	/* (sqfs_raw_readahead stops at the image's end) */
	if (max && sbi->dir_end > sbi->inode_table)
		sqfs_raw_readahead(sb, sbi->inode_table, sbi->inode_table +
				   min(sbi->dir_end - sbi->inode_table, max));
}

static int sqfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	struct sqfs_super *d;
	struct inode *root;
	u32 ino;
	int err;

	sb->s_flags |= SB_RDONLY | SB_NOATIME;
	sb->s_magic = SQUASHFS_MAGIC;
	sb->s_op = &sqfs_super_ops;
	sb->s_xattr = sqfs_xattr_handlers;
	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_time_min = 0;
	sb->s_time_max = U32_MAX;
	sbi->sb = sb;

	d = sqfs_kmalloc_obj(*d, GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	sbi->bytes_used = sizeof(*d);	/* until the real size is known */
	err = sqfs_read_raw(sb, 0, d, sizeof(*d));
	if (!err)
		err = sqfs_parse_super(sb, d);
	kfree(d);
	if (!err)
		err = sqfs_setup(sb);
	if (err)
		return err;
	sqfs_meta_readahead(sb);
	err = sqfs_ref_ino(sb, sbi->root_ref, &ino);
	if (err)
		return err;
	if (sbi->export_blocks)
		sb->s_export_op = &sqfs_export_ops;

	root = sqfs_iget(sb, sbi->root_ref, ino);
	if (IS_ERR(root))
		return PTR_ERR(root);
	if (!S_ISDIR(root->i_mode)) {
		iput(root);
		return sqfs_corrupt(sb, "the root inode is not a directory");
	}
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;
	return 0;
}

static int sqfs_get_tree(struct fs_context *fc)
{
	struct sqfs_opts *opts = fc->fs_private;
	struct sqfs_sb *sbi = kzalloc(sizeof(*sbi), GFP_KERNEL);

	if (!sbi)
		return -ENOMEM;
	sbi->errors = opts->errors;
	sbi->meta_ra_kib = opts->meta_ra_kib;
	INIT_WORK(&sbi->frag_ra, sqfs_frag_ra_work);
	ratelimit_state_init(&sbi->ratelimit, DEFAULT_RATELIMIT_INTERVAL,
			     DEFAULT_RATELIMIT_BURST);
	/* sget hands it to the new superblock, or leaves it for sqfs_free_fc */
	fc->s_fs_info = sbi;
	return get_tree_bdev(fc, sqfs_fill_super);
}

static int sqfs_reconfigure(struct fs_context *fc)
{
	struct sqfs_opts *opts = fc->fs_private;

	sync_filesystem(fc->root->d_sb);
	if (!(fc->sb_flags & SB_RDONLY))
		return -EROFS;
	if (opts->errors_set)
		SQFS_SB(fc->root->d_sb)->errors = opts->errors;
	return 0;
}

static void sqfs_free_fc(struct fs_context *fc)
{
	kfree(fc->s_fs_info);
	kfree(fc->fs_private);
}

static const struct fs_context_operations sqfs_context_ops = {
	.parse_param = sqfs_parse_param,
	.get_tree = sqfs_get_tree,
	.reconfigure = sqfs_reconfigure,
	.free = sqfs_free_fc,
};

static int sqfs_init_fs_context(struct fs_context *fc)
{
	struct sqfs_opts *opts = kzalloc(sizeof(*opts), GFP_KERNEL);

	if (!opts)
		return -ENOMEM;
	opts->errors = SQFS_ERRORS_CONTINUE;
	opts->meta_ra_kib = SQFS_META_RA_KIB;
	fc->fs_private = opts;
	fc->ops = &sqfs_context_ops;
	return 0;
}

static void sqfs_kill_sb(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);

	/* no reader is left to queue it again; it reads the device */
	if (sbi) {
		cancel_work_sync(&sbi->frag_ra);
		mem_cgroup_put(xchg(&sbi->frag_memcg, NULL));
	}
	kill_block_super(sb);
	if (!sbi)
		return;
	sqfs_tables_free(sbi);
	sqfs_caches_free(sbi);
	sqfs_pool_leave(sbi);
	kfree(sbi);
}

static struct file_system_type sqfs_fs_type = {
	.owner = THIS_MODULE,
	.name = "squashfs",
	.init_fs_context = sqfs_init_fs_context,
	.parameters = sqfs_fs_parameters,
	.kill_sb = sqfs_kill_sb,
	.fs_flags = FS_REQUIRES_DEV,
};
MODULE_ALIAS_FS("squashfs");

static void sqfs_inode_init_once(void *p)
{
	struct sqfs_inode *si = p;

	inode_init_once(&si->vfs_inode);
}

static int __init sqfs_init(void)
{
	int err;

	sqfs_inode_cachep = kmem_cache_create("livesquash_inode",
					      sizeof(struct sqfs_inode), 0,
					      SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					      sqfs_inode_init_once);
	if (!sqfs_inode_cachep)
		return -ENOMEM;
	sqfs_pools_init();
	err = sqfs_cblk_cache_init();
	if (err)
		goto out_cache;
	err = sqfs_jobs_init();
	if (err)
		goto out_cblk;
	err = sqfs_idle_init();
	if (err)
		goto out_jobs;
	err = register_filesystem(&sqfs_fs_type);
	if (err)
		goto out_idle;
	pr_info("livesquash: squashfs 4.0 driver %s\n", LIVESQUASH_VERSION);
	return 0;
out_idle:
	sqfs_idle_exit();
out_jobs:
	sqfs_jobs_exit();
out_cblk:
	sqfs_cblk_cache_exit();
out_cache:
	kmem_cache_destroy(sqfs_inode_cachep);
	return err;
}

static void __exit sqfs_exit(void)
{
	unregister_filesystem(&sqfs_fs_type);
	sqfs_jobs_exit();
	sqfs_idle_exit();
	rcu_barrier();	/* inodes freed by RCU must be gone first */
	sqfs_cblk_cache_exit();
	kmem_cache_destroy(sqfs_inode_cachep);
}

module_init(sqfs_init);
module_exit(sqfs_exit);
MODULE_DESCRIPTION("livesquash: read-only squashfs 4.0 filesystem");
MODULE_AUTHOR("the livesquash developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(LIVESQUASH_VERSION);
