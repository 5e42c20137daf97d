// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: file handles (NFS export, open_by_handle_at).
 *
 * A handle holds the inode number; the export table maps it back to the
 * inode's reference. Images made without that table are not exportable.
 */
#include <linux/exportfs.h>
#include "internal.h"

static struct inode *sqfs_nfs_get_inode(struct super_block *sb, u64 ino,
					u32 generation)
{
	struct inode *inode;
	u64 ref;
	int err;

	if (!ino || ino > SQFS_SB(sb)->inode_count)
		return ERR_PTR(-ESTALE);
	err = sqfs_export_lookup(sb, ino, &ref);
	if (err)
		return ERR_PTR(err == -EOPNOTSUPP ? -ESTALE : err);
	inode = sqfs_iget(sb, ref, ino);
	/* a handle that leads nowhere is stale; a failed read is not */
	if (IS_ERR(inode) && PTR_ERR(inode) != -ENOMEM && PTR_ERR(inode) != -EIO)
		return ERR_PTR(-ESTALE);
	if (IS_ERR(inode))
		return inode;
	if (inode->i_generation != generation) {
		iput(inode);
		return ERR_PTR(-ESTALE);
	}
	return inode;
}

static struct dentry *sqfs_fh_to_dentry(struct super_block *sb,
					struct fid *fid, int len, int type)
{
	return generic_fh_to_dentry(sb, fid, len, type, sqfs_nfs_get_inode);
}

static struct dentry *sqfs_fh_to_parent(struct super_block *sb,
					struct fid *fid, int len, int type)
{
	return generic_fh_to_parent(sb, fid, len, type, sqfs_nfs_get_inode);
}

static struct dentry *sqfs_get_parent(struct dentry *child)
{
	struct inode *dir = d_inode(child);
	u32 parent = SQFS_I(dir)->parent;

	return d_obtain_alias(sqfs_nfs_get_inode(dir->i_sb, parent, 0));
}

const struct export_operations sqfs_export_ops = {
	.encode_fh = sqfs_encode_fh,
	.fh_to_dentry = sqfs_fh_to_dentry,
	.fh_to_parent = sqfs_fh_to_parent,
	.get_parent = sqfs_get_parent,
};
