// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: reading inodes from the inode table.
 *
 * An inode is found by its reference (metadata block, offset) and named by
 * its number, which becomes i_ino; hard links share both.
 */
#include <linux/slab.h>
#include <linux/kdev_t.h>
#include "internal.h"

const struct inode_operations sqfs_file_iops = {
	.listxattr = sqfs_listxattr,
};

const struct inode_operations sqfs_symlink_iops = {
	.get_link = simple_get_link,
	.listxattr = sqfs_listxattr,
};

const struct inode_operations sqfs_special_iops = {
	.listxattr = sqfs_listxattr,
};

struct sqfs_mcur sqfs_inode_cur(struct super_block *sb, u64 ref)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);

	return (struct sqfs_mcur) {
		.blk = sbi->inode_table + sqfs_ref_block(ref),
		.off = sqfs_ref_offset(ref),
		.end = sbi->dir_table,
	};
}

int sqfs_ref_ino(struct super_block *sb, u64 ref, u32 *ino)
{
	struct sqfs_mcur c = sqfs_inode_cur(sb, ref);
	struct sqfs_inode_head h;
	int err;

	err = sqfs_meta_read(sb, &c, &h, sizeof(h));
	if (err)
		return err;
	*ino = le32_to_cpu(h.ino);
	return 0;
}

static int sqfs_set_nlink(struct inode *inode, u32 nlink)
{
	if (!nlink)
		return sqfs_corrupt(inode->i_sb, "inode %llu has no links",
				    (u64)inode->i_ino);
	set_nlink(inode, nlink);
	return 0;
}

static int sqfs_read_dir(struct inode *inode, struct sqfs_mcur *c, bool ext)
{
	struct sqfs_sb *sbi = SQFS_SB(inode->i_sb);
	struct sqfs_inode *si = SQFS_I(inode);
	u32 nlink, size;
	int err;

	if (ext) {
		struct sqfs_ldir_inode d;

		err = sqfs_meta_read(inode->i_sb, c, &d, sizeof(d));
		if (err)
			return err;
		nlink = le32_to_cpu(d.nlink);
		size = le32_to_cpu(d.size);
		si->start = le32_to_cpu(d.start);
		si->parent = le32_to_cpu(d.parent);
		si->idx_count = le16_to_cpu(d.index_count);
		si->dir_off = le16_to_cpu(d.offset);
		si->xattr = le32_to_cpu(d.xattr);
		si->list = *c;
	} else {
		struct sqfs_dir_inode d;

		err = sqfs_meta_read(inode->i_sb, c, &d, sizeof(d));
		if (err)
			return err;
		nlink = le32_to_cpu(d.nlink);
		size = le16_to_cpu(d.size);
		si->start = le32_to_cpu(d.start);
		si->parent = le32_to_cpu(d.parent);
		si->dir_off = le16_to_cpu(d.offset);
	}
	if (size < 3 || si->dir_off >= SQFS_META_SIZE ||
	    si->start >= sbi->dir_end - sbi->dir_table)
		return sqfs_corrupt(inode->i_sb,
				    "directory inode %llu: bad listing (block %llu offset %u size %u)",
				    (u64)inode->i_ino, si->start, si->dir_off, size);
	inode->i_size = size;
	inode->i_mode |= S_IFDIR;
	inode->i_op = &sqfs_dir_iops;
	inode->i_fop = &sqfs_dir_fops;
	return sqfs_set_nlink(inode, nlink);
}

static int sqfs_read_reg(struct inode *inode, struct sqfs_mcur *c, bool ext)
{
	struct sqfs_sb *sbi = SQFS_SB(inode->i_sb);
	struct sqfs_inode *si = SQFS_I(inode);
	u64 size, sparse = 0;
	u32 nlink = 1;
	int err;

	if (ext) {
		struct sqfs_lreg_inode r;

		err = sqfs_meta_read(inode->i_sb, c, &r, sizeof(r));
		if (err)
			return err;
		si->start = le64_to_cpu(r.start);
		size = le64_to_cpu(r.size);
		sparse = le64_to_cpu(r.sparse);
		nlink = le32_to_cpu(r.nlink);
		si->frag = le32_to_cpu(r.frag);
		si->frag_off = le32_to_cpu(r.frag_offset);
		si->xattr = le32_to_cpu(r.xattr);
	} else {
		struct sqfs_reg_inode r;

		err = sqfs_meta_read(inode->i_sb, c, &r, sizeof(r));
		if (err)
			return err;
		si->start = le32_to_cpu(r.start);
		size = le32_to_cpu(r.size);
		si->frag = le32_to_cpu(r.frag);
		si->frag_off = le32_to_cpu(r.frag_offset);
	}
	if (si->frag == SQFS_NO_FRAGMENT) {
		si->nblocks = DIV_ROUND_UP_ULL(size, sbi->block_size);
	} else {
		si->nblocks = size >> sbi->block_log;
		if (si->frag >= sbi->frag_count ||
		    si->frag_off >= sbi->block_size)
			goto bad;
	}
	if (size > MAX_LFS_FILESIZE || sparse > size ||
	    (si->nblocks && si->start >= sbi->bytes_used))
		goto bad;

	si->list = *c;
	si->walk_idx = 0;
	si->walk_pos = si->start;
	si->walk = *c;
	inode->i_size = size;
	inode->i_blocks = DIV_ROUND_UP_ULL(size - sparse, 512);
	inode->i_mode |= S_IFREG;
	inode->i_op = &sqfs_file_iops;
	inode->i_fop = &sqfs_file_fops;
	inode->i_mapping->a_ops = &sqfs_file_aops;
	return sqfs_set_nlink(inode, nlink);
bad:
	return sqfs_corrupt(inode->i_sb,
			    "file inode %llu: bad layout (size %llu start %llu fragment %u offset %u)",
			    (u64)inode->i_ino, size, si->start, si->frag,
			    si->frag_off);
}

static int sqfs_read_symlink(struct inode *inode, struct sqfs_mcur *c,
			     bool ext)
{
	struct sqfs_symlink_inode s;
	__le32 xattr;
	u32 size;
	char *target;
	int err;

	err = sqfs_meta_read(inode->i_sb, c, &s, sizeof(s));
	if (err)
		return err;
	/* before the target is allocated: a failed inode does not free it */
	err = sqfs_set_nlink(inode, le32_to_cpu(s.nlink));
	if (err)
		return err;
	size = le32_to_cpu(s.target_size);
	if (!size || size >= PATH_MAX)
		return sqfs_corrupt(inode->i_sb, "symlink inode %llu: bad target size %u",
				    (u64)inode->i_ino, size);
	target = kmalloc(size + 1, GFP_KERNEL_ACCOUNT);
	if (!target)
		return -ENOMEM;
	err = sqfs_meta_read(inode->i_sb, c, target, size);
	if (!err && ext)
		err = sqfs_meta_read(inode->i_sb, c, &xattr, sizeof(xattr));
	if (!err && memchr(target, 0, size))
		err = sqfs_corrupt(inode->i_sb, "symlink inode %llu: NUL in target",
				   (u64)inode->i_ino);
	if (err) {
		kfree(target);
		return err;
	}
	target[size] = 0;
	if (ext)
		SQFS_I(inode)->xattr = le32_to_cpu(xattr);
	inode->i_link = target;
	inode->i_size = size;
	inode->i_mode |= S_IFLNK;
	inode->i_op = &sqfs_symlink_iops;
	return 0;
}

static int sqfs_read_special(struct inode *inode, struct sqfs_mcur *c,
			     unsigned int type)
{
	static const umode_t kinds[] = { S_IFBLK, S_IFCHR, S_IFIFO, S_IFSOCK };
	bool ext = type >= SQFS_T_LDIR;
	unsigned int base = ext ? type - SQFS_T_EXT_DELTA : type;
	bool dev = base == SQFS_T_BLKDEV || base == SQFS_T_CHRDEV;
	__le32 w[3];		/* nlink, then rdev (devices), then xattr */
	unsigned int n = 1 + dev + ext;
	u32 rdev = 0;
	int err;

	err = sqfs_meta_read(inode->i_sb, c, w, n * sizeof(w[0]));
	if (err)
		return err;
	if (dev)
		rdev = le32_to_cpu(w[1]);
	if (ext)
		SQFS_I(inode)->xattr = le32_to_cpu(w[n - 1]);
	inode->i_mode |= kinds[base - SQFS_T_BLKDEV];
	inode->i_op = &sqfs_special_iops;
	init_special_inode(inode, inode->i_mode, new_decode_dev(rdev));
	return sqfs_set_nlink(inode, le32_to_cpu(w[0]));
}

static int sqfs_read_inode(struct inode *inode, u64 ref)
{
	struct super_block *sb = inode->i_sb;
	struct sqfs_sb *sbi = SQFS_SB(sb);
	struct sqfs_mcur c = sqfs_inode_cur(sb, ref);
	struct sqfs_inode_head h;
	unsigned int type, uid, gid;
	int err;

	memset(SQFS_I(inode), 0, offsetof(struct sqfs_inode, vfs_inode));
	mutex_init(&SQFS_I(inode)->walk_lock);
	err = sqfs_meta_read(sb, &c, &h, sizeof(h));
	if (err)
		return err;
	type = le16_to_cpu(h.type);
	uid = le16_to_cpu(h.uid_idx);
	gid = le16_to_cpu(h.gid_idx);
	if (le32_to_cpu(h.ino) != inode->i_ino)
		return sqfs_corrupt(sb, "inode at %#llx has number %u, not %llu",
				    ref, le32_to_cpu(h.ino), (u64)inode->i_ino);
	if (uid >= sbi->id_count || gid >= sbi->id_count)
		return sqfs_corrupt(sb, "inode %llu: id index %u/%u past the id table",
				    (u64)inode->i_ino, uid, gid);

	i_uid_write(inode, sbi->ids[uid]);
	i_gid_write(inode, sbi->ids[gid]);
	sqfs_set_times(inode, le32_to_cpu(h.mtime));
	inode->i_mode = le16_to_cpu(h.mode) & S_IALLUGO;
	SQFS_I(inode)->xattr = SQFS_NO_XATTR;

	switch (type) {
	case SQFS_T_DIR:
	case SQFS_T_LDIR:
		return sqfs_read_dir(inode, &c, type == SQFS_T_LDIR);
	case SQFS_T_REG:
	case SQFS_T_LREG:
		return sqfs_read_reg(inode, &c, type == SQFS_T_LREG);
	case SQFS_T_SYMLINK:
	case SQFS_T_LSYMLINK:
		return sqfs_read_symlink(inode, &c, type == SQFS_T_LSYMLINK);
	case SQFS_T_BLKDEV ... SQFS_T_SOCKET:
	case SQFS_T_LBLKDEV ... SQFS_T_LSOCKET:
		return sqfs_read_special(inode, &c, type);
	}
	return sqfs_corrupt(sb, "inode %llu: unknown type %u", (u64)inode->i_ino, type);
}

struct inode *sqfs_iget(struct super_block *sb, u64 ref, u32 ino)
{
	struct inode *inode;
	int err;

	if (!ino || ino > SQFS_SB(sb)->inode_count)
		return ERR_PTR(sqfs_corrupt(sb, "inode number %u out of range", ino));
	inode = iget_locked(sb, ino);
	if (!inode || !sqfs_inode_is_new(inode))
		return inode ?: ERR_PTR(-ENOMEM);	/* or already in memory */

	err = sqfs_read_inode(inode, ref);
	if (!err) {
		unlock_new_inode(inode);
		return inode;
	}
	iget_failed(inode);
	return ERR_PTR(err);
}
