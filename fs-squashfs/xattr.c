// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: extended attributes.
 *
 * An inode's xattr index picks an entry of the xattr id table: where its
 * key/value pairs start in the key/value table, and how many there are. A
 * value may be stored out of line, as a reference to where it really is.
 */
#include <linux/slab.h>
#include <linux/xattr.h>
#include "internal.h"

struct sqfs_xattr_walk {
	struct super_block *sb;
	struct sqfs_mcur cur;
	u32 left;		/* pairs not read yet */
	unsigned int type;	/* of the current key, prefix index only */
	bool ool;		/* its value is stored out of line */
	unsigned int len;	/* name length */
	char name[XATTR_NAME_MAX + 1];
};

int sqfs_xattr_load(struct super_block *sb)
{
	struct sqfs_sb *sbi = SQFS_SB(sb);
	struct sqfs_xattr_id_head h;
	u64 *blocks;
	int err;

	if (sbi->xattr_table == SQFS_NO_TABLE)
		return 0;
	err = sqfs_read_raw(sb, sbi->xattr_table, &h, sizeof(h));
	if (err)
		return err;
	sbi->xattr_ids = le32_to_cpu(h.count);
	sbi->xattr_kv = le64_to_cpu(h.kv_start);
	if (!sbi->xattr_ids)
		return 0;
	if (sbi->xattr_kv < sbi->dir_table || sbi->xattr_kv >= sbi->xattr_table)
		return sqfs_corrupt(sb, "xattr key/value table at %llu is out of place",
				    sbi->xattr_kv);
	blocks = sqfs_table_blocks(sb, sbi->xattr_table + sizeof(h),
				   sbi->xattr_ids, sizeof(struct sqfs_xattr_id),
				   "xattr id");
	if (IS_ERR(blocks))
		return PTR_ERR(blocks);
	sbi->xattr_blocks = blocks;
	return 0;
}

static int sqfs_xattr_start(struct inode *inode, struct sqfs_xattr_walk *w)
{
	struct super_block *sb = inode->i_sb;
	struct sqfs_sb *sbi = SQFS_SB(sb);
	u32 idx = SQFS_I(inode)->xattr;
	struct sqfs_xattr_id id;
	u64 ref;
	int err;

	w->sb = sb;
	w->left = 0;
	if (idx == SQFS_NO_XATTR || !sbi->xattr_blocks)
		return 0;
	if (idx >= sbi->xattr_ids)
		return sqfs_corrupt(sb, "inode %llu: xattr index %u past the table (%u)",
				    (u64)inode->i_ino, idx, sbi->xattr_ids);
	err = sqfs_table_entry(sb, sbi->xattr_blocks, sbi->xattr_table, idx,
			       sizeof(id), &id);
	if (err)
		return err;
	ref = le64_to_cpu(id.ref);
	w->left = le32_to_cpu(id.count);
	w->cur.blk = sbi->xattr_kv + sqfs_ref_block(ref);
	w->cur.off = sqfs_ref_offset(ref);
	w->cur.end = sbi->xattr_table;
	return 0;
}

/* read the next key: 1, 0 when there is none, or an error */
static int sqfs_xattr_next_key(struct sqfs_xattr_walk *w)
{
	struct sqfs_xattr_key k;
	unsigned int type;
	int err;

	if (!w->left)
		return 0;
	err = sqfs_meta_read(w->sb, &w->cur, &k, sizeof(k));
	if (err)
		return err;
	type = le16_to_cpu(k.type);
	w->type = type & SQFS_XATTR_PREFIX_MASK;
	w->ool = type & SQFS_XATTR_OOL;
	w->len = le16_to_cpu(k.name_len);
	if (w->len > XATTR_NAME_MAX || w->type > 2 ||
	    (type & ~(SQFS_XATTR_PREFIX_MASK | SQFS_XATTR_OOL)))
		return sqfs_corrupt(w->sb, "bad xattr key (type %#x, length %u)",
				    type, w->len);
	err = sqfs_meta_read(w->sb, &w->cur, w->name, w->len);
	if (err)
		return err;
	w->name[w->len] = 0;
	w->left--;
	return 1;
}

static const char *const sqfs_xattr_prefix[] = {
	XATTR_USER_PREFIX, XATTR_TRUSTED_PREFIX, XATTR_SECURITY_PREFIX,
};

/* the value of the current key: its size, copied to @buf if it fits */
static int sqfs_xattr_value(struct sqfs_xattr_walk *w, void *buf, size_t size,
			    bool want)
{
	struct sqfs_sb *sbi = SQFS_SB(w->sb);
	struct sqfs_mcur vc;
	__le32 vlen;
	__le64 ref;
	u32 len;
	int err;

	err = sqfs_meta_read(w->sb, &w->cur, &vlen, sizeof(vlen));
	if (err)
		return err;
	len = le32_to_cpu(vlen);
	if (len > XATTR_SIZE_MAX)
		goto bad;
	if (!w->ool) {
		if (!want || len > size || !buf)
			return sqfs_meta_skip(w->sb, &w->cur, len) ?: len;
		return sqfs_meta_read(w->sb, &w->cur, buf, len) ?: len;
	}
	if (len != sizeof(ref))
		goto bad;
	err = sqfs_meta_read(w->sb, &w->cur, &ref, sizeof(ref));
	if (err || !want)
		return err;
	vc.blk = sbi->xattr_kv + sqfs_ref_block(le64_to_cpu(ref));
	vc.off = sqfs_ref_offset(le64_to_cpu(ref));
	vc.end = sbi->xattr_table;
	err = sqfs_meta_read(w->sb, &vc, &vlen, sizeof(vlen));
	if (err)
		return err;
	len = le32_to_cpu(vlen);
	if (len > XATTR_SIZE_MAX)
		goto bad;
	if (len > size || !buf)
		return len;
	return sqfs_meta_read(w->sb, &vc, buf, len) ?: len;
bad:
	return sqfs_corrupt(w->sb, "xattr %s%s: bad value size %u",
			    sqfs_xattr_prefix[w->type], w->name, len);
}

/* an image without an xattr table lists none: -EOPNOTSUPP, as stock says */
ssize_t sqfs_listxattr(struct dentry *dentry, char *buf, size_t size)
{
	struct sqfs_xattr_walk *w;
	size_t total = 0;
	int ret;

	if (SQFS_SB(dentry->d_sb)->xattr_table == SQFS_NO_TABLE)
		return -EOPNOTSUPP;
	w = sqfs_kmalloc_obj(*w, GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	ret = sqfs_xattr_start(d_inode(dentry), w);
	if (ret)
		goto out;
	while ((ret = sqfs_xattr_next_key(w)) > 0) {
		const char *prefix = sqfs_xattr_prefix[w->type];
		size_t plen = strlen(prefix), n = plen + w->len + 1;

		ret = sqfs_xattr_value(w, NULL, 0, false);
		if (ret < 0)
			break;
		if (w->type == 1 && !capable(CAP_SYS_ADMIN))
			continue;
		if (buf) {
			if (total + n > size) {
				ret = -ERANGE;
				break;
			}
			memcpy(buf + total, prefix, plen);
			memcpy(buf + total + plen, w->name, w->len + 1);
		}
		total += n;
	}
out:
	kfree(w);
	return ret < 0 ? ret : total;
}

static int sqfs_xattr_get(const struct xattr_handler *handler,
			  struct dentry *unused, struct inode *inode,
			  const char *name, void *buffer, size_t size)
{
	struct sqfs_xattr_walk *w = kmalloc(sizeof(*w), GFP_KERNEL);
	size_t len = strlen(name);
	bool match = false;
	int ret;

	if (!w)
		return -ENOMEM;
	ret = sqfs_xattr_start(inode, w);
	if (ret)
		goto out;
	while ((ret = sqfs_xattr_next_key(w)) > 0) {
		match = w->type == handler->flags && w->len == len &&
			!memcmp(w->name, name, len);
		ret = sqfs_xattr_value(w, buffer, size, match);
		if (ret < 0 || match)
			break;
	}
out:
	kfree(w);
	if (ret < 0)
		return ret;
	if (!match)
		return -ENODATA;
	if (size && ret > size)
		return -ERANGE;
	return ret;
}

static bool sqfs_xattr_trusted_list(struct dentry *dentry)
{
	return capable(CAP_SYS_ADMIN);
}

/* .flags is the key type of the prefix */
static const struct xattr_handler sqfs_xattr_user = {
	.prefix = XATTR_USER_PREFIX,
	.flags = 0,
	.get = sqfs_xattr_get,
};

static const struct xattr_handler sqfs_xattr_trusted = {
	.prefix = XATTR_TRUSTED_PREFIX,
	.flags = 1,
	.list = sqfs_xattr_trusted_list,
	.get = sqfs_xattr_get,
};

static const struct xattr_handler sqfs_xattr_security = {
	.prefix = XATTR_SECURITY_PREFIX,
	.flags = 2,
	.get = sqfs_xattr_get,
};

const struct xattr_handler *sqfs_xattr_handlers[] = {
	&sqfs_xattr_user,
	&sqfs_xattr_trusted,
	&sqfs_xattr_security,
	NULL,
};
