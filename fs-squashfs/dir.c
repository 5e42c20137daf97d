// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: directories (readdir and lookup).
 *
 * A directory position is "." (0), ".." (1), or 3 + the byte offset of an
 * entry in the listing, so a reader can stop and resume anywhere. Both
 * readdir and lookup start from the directory index, when there is one, to
 * skip the listing blocks before the one they need. Lookups in a listing of
 * SQFS_DNAMES_MIN bytes or more read the whole listing once into a table of
 * its names, kept with the inode, and bisect that: a scan goes through half
 * a listing block (~150 entries) for every name. A listing with an index
 * (a block or more) gets its table at its SQFS_DNAMES_AFTER-th lookup, so
 * that one cold lookup still reads one block of it, not all. The tables
 * of a mount share a budget (sbi->names_max), so that an image whose
 * directories all point at one huge listing cannot pin memory without end;
 * past it, lookups scan.
 */
#include <linux/slab.h>
#include <linux/sizes.h>
#include "internal.h"

struct sqfs_dir_iter {
	struct sqfs_mcur cur;
	struct sqfs_cblk *pin;	/* the listing block read last, or NULL */
	u32 pos;		/* listing offset of the next byte */
	u32 len;		/* listing length */
	u32 left;		/* entries left in the current run */
	u32 start;		/* inode table block of the current run */
	u32 base;		/* inode number base of the current run */
};

struct sqfs_dirent {
	u32 pos;		/* listing offset of this entry */
	u32 ino;
	u64 ref;
	unsigned int type;
	unsigned int len;
	char name[SQFS_NAME_MAX + 1];
};

/* compare as the writer sorted: by bytes, a prefix first */
static int sqfs_namecmp(const char *a, unsigned int alen,
			const unsigned char *b, unsigned int blen)
{
	int c = memcmp(a, b, min(alen, blen));

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

/* place @it at listing offset @pos, which must start a run */
static void sqfs_dir_iter_at(struct inode *dir, struct sqfs_dir_iter *it,
			     u32 pos, u32 block)
{
	struct sqfs_sb *sbi = SQFS_SB(dir->i_sb);
	struct sqfs_inode *si = SQFS_I(dir);

	it->cur.blk = sbi->dir_table + block;
	it->cur.off = (si->dir_off + pos) % SQFS_META_SIZE;
	it->cur.end = sbi->dir_end;
	it->pos = pos;
	it->len = dir->i_size - 3;
	it->left = 0;
	it->pin = NULL;
}

/*
 * Start at the last indexed run at or before the listing offset @pos, or,
 * with @name, at the last whose first name sorts before or equal to @name.
 */
static int sqfs_dir_seek(struct inode *dir, struct sqfs_dir_iter *it,
			 u32 pos, const struct qstr *name)
{
	struct sqfs_inode *si = SQFS_I(dir);
	struct sqfs_mcur c = si->list;
	struct sqfs_cblk *pin = NULL;
	u32 best_pos = 0, best_blk = si->start;
	char buf[SQFS_NAME_MAX];
	unsigned int i;
	int err = 0;

	for (i = 0; i < si->idx_count; i++) {
		struct sqfs_dir_index ix;
		u32 ipos, iblk, ilen;

		err = sqfs_meta_read_pin(dir->i_sb, &c, &pin, &ix, sizeof(ix));
		if (err)
			goto out;
		ipos = le32_to_cpu(ix.index);
		iblk = le32_to_cpu(ix.start);
		ilen = le32_to_cpu(ix.name_len) + 1;
		if (ilen > SQFS_NAME_MAX || ipos < best_pos ||
		    ipos >= dir->i_size - 3 || iblk < best_blk) {
			err = sqfs_corrupt(dir->i_sb, "directory %llu: bad index entry %u",
					   (u64)dir->i_ino, i);
			goto out;
		}
		if (!name) {
			if (ipos > pos)
				break;
			err = sqfs_meta_read_pin(dir->i_sb, &c, &pin, NULL, ilen);
		} else {
			err = sqfs_meta_read_pin(dir->i_sb, &c, &pin, buf, ilen);
			if (!err && sqfs_namecmp(buf, ilen, name->name,
						 name->len) > 0)
				break;
		}
		if (err)
			goto out;
		best_pos = ipos;
		best_blk = iblk;
	}
	sqfs_dir_iter_at(dir, it, best_pos, best_blk);
out:
	sqfs_meta_unpin(&pin);
	return err;
}

static bool sqfs_name_ok(const char *name, unsigned int len)
{
	return !memchr(name, '/', len) && !memchr(name, 0, len) &&
	       !(len == 1 && name[0] == '.') &&
	       !(len == 2 && name[0] == '.' && name[1] == '.');
}

/* the next entry: 1, or 0 at the end of the listing, or an error */
static int sqfs_dir_next(struct inode *dir, struct sqfs_dir_iter *it,
			 struct sqfs_dirent *de)
{
	struct super_block *sb = dir->i_sb;
	struct sqfs_dir_entry e;
	int err;

	if (!it->left) {
		struct sqfs_dir_header h;

		if (it->pos >= it->len)
			return 0;
		if (it->len - it->pos < sizeof(h) + sizeof(e))
			goto bad;
		err = sqfs_meta_read_pin(sb, &it->cur, &it->pin, &h, sizeof(h));
		if (err)
			return err;
		it->pos += sizeof(h);
		it->left = le32_to_cpu(h.count) + 1;
		it->start = le32_to_cpu(h.start);
		it->base = le32_to_cpu(h.ino_base);
		if (it->left > SQFS_DIR_RUN_MAX)
			goto bad;
	}
	if (it->len - it->pos < sizeof(e))
		goto bad;
	de->pos = it->pos;
	err = sqfs_meta_read_pin(sb, &it->cur, &it->pin, &e, sizeof(e));
	if (err)
		return err;
	de->len = le16_to_cpu(e.name_len) + 1;
	it->pos += sizeof(e);
	if (de->len > SQFS_NAME_MAX || de->len > it->len - it->pos)
		goto bad;
	err = sqfs_meta_read_pin(sb, &it->cur, &it->pin, de->name, de->len);
	if (err)
		return err;
	it->pos += de->len;
	it->left--;
	de->name[de->len] = 0;
	de->ino = it->base + (s16)le16_to_cpu(e.ino_delta);
	de->ref = ((u64)it->start << 16) | le16_to_cpu(e.offset);
	de->type = le16_to_cpu(e.type);
	if (!de->type || de->type > SQFS_T_LSOCKET ||
	    !sqfs_name_ok(de->name, de->len))
		goto bad;
	if (de->type > SQFS_T_SOCKET)
		de->type -= SQFS_T_EXT_DELTA;
	return 1;
bad:
	return sqfs_corrupt(sb, "directory %llu: bad listing at offset %u",
			    (u64)dir->i_ino, it->pos);
}

/* the listing lengths whose lookups use a table of names */
#define SQFS_DNAMES_MIN		1024
#define SQFS_DNAMES_MAX		SZ_1M
#define SQFS_DNAMES_AFTER	8
/* a listing found corrupt while building its table: scanned from then on */
#define SQFS_DNAMES_NONE	((struct sqfs_dnames *)1)

struct sqfs_dname {
	u64 ref;
	u32 ino;
	u32 name;		/* offset in the table's names */
	u16 len;
};

struct sqfs_dnames {
	u32 count;
	size_t size;		/* bytes allocated, counted in names_bytes */
	char *names;
	struct sqfs_dname ent[];
};

/*
 * The most bytes a table of a listing of @len bytes can take: an entry is
 * at least 9 bytes of listing (8 and a 1-byte name) and takes 24 in the
 * table, its name one byte each.
 */
static size_t sqfs_dnames_bound(u32 len)
{
	return sizeof(struct sqfs_dnames) +
	       (len / 9 + 1) * sizeof(struct sqfs_dname) + len;
}

/* the listing's entries in its order, the names after them */
static struct sqfs_dnames *sqfs_dnames_build(struct inode *dir)
{
	struct sqfs_dnames *t = NULL;
	struct sqfs_dir_iter it;
	struct sqfs_dirent *de;
	u32 n = 0, bytes = 0, i = 0, off = 0;
	int ret;

	de = sqfs_kmalloc_obj(*de, GFP_KERNEL);
	if (!de)
		return ERR_PTR(-ENOMEM);
	/* first count, then fill (the blocks are cached by then) */
	while (true) {
		sqfs_dir_iter_at(dir, &it, 0, SQFS_I(dir)->start);
		while ((ret = sqfs_dir_next(dir, &it, de)) > 0) {
			if (!t) {
				n++;
				bytes += de->len;
				continue;
			}
			/* a device that answers differently the second time */
			if (i == t->count || de->len > bytes - off)
				break;
			t->ent[i].ref = de->ref;
			t->ent[i].ino = de->ino;
			t->ent[i].name = off;
			t->ent[i].len = de->len;
			memcpy(t->names + off, de->name, de->len);
			off += de->len;
			i++;
		}
		sqfs_meta_unpin(&it.pin);
		if (ret < 0 || t)
			break;
		t = kvmalloc(struct_size(t, ent, n) + bytes,
			     GFP_KERNEL_ACCOUNT);
		if (!t) {
			ret = -ENOMEM;
			break;
		}
		t->names = (char *)&t->ent[n];
		t->count = n;
		t->size = struct_size(t, ent, n) + bytes;
	}
	kfree(de);
	if (ret < 0) {
		kvfree(t);
		return ERR_PTR(ret);
	}
	t->count = i;
	return t;
}

/*
 * The directory's table of names, built by the first lookup that wants it;
 * NULL (or SQFS_DNAMES_NONE) when lookups scan the listing instead.
 * Lookups run in parallel: the first table published is the one kept.
 */
static void sqfs_dnames_free(struct super_block *sb, struct sqfs_dnames *t)
{
	if (!t || t == SQFS_DNAMES_NONE)
		return;
	atomic_long_sub(t->size, &SQFS_SB(sb)->names_bytes);
	kvfree(t);
}

/*
 * Build the table of @dir within the mount's budget: as much as the largest
 * table its listing could need is set aside first, the rest given back once
 * it is built. NULL where the budget has no room for it.
 */
static struct sqfs_dnames *sqfs_dnames_budget(struct inode *dir)
{
	struct sqfs_sb *sbi = SQFS_SB(dir->i_sb);
	size_t most = sqfs_dnames_bound(dir->i_size - 3);
	struct sqfs_dnames *t;

	if (atomic_long_add_return(most, &sbi->names_bytes) > sbi->names_max) {
		atomic_long_sub(most, &sbi->names_bytes);
		return NULL;
	}
	t = sqfs_dnames_build(dir);
	atomic_long_sub(most - (IS_ERR(t) ? 0 : t->size), &sbi->names_bytes);
	return t;
}

static struct sqfs_dnames *sqfs_dnames_get(struct inode *dir)
{
	struct sqfs_inode *si = SQFS_I(dir);
	/* pairs with cmpxchg_release below: a table is seen whole */
	struct sqfs_dnames *t = smp_load_acquire(&si->names), *old;

	if (t || dir->i_size - 3 < SQFS_DNAMES_MIN ||
	    dir->i_size - 3 > SQFS_DNAMES_MAX)
		return t;
	if (dir->i_size - 3 >= SQFS_META_SIZE &&
	    atomic_inc_return(&si->lookups) < SQFS_DNAMES_AFTER)
		return NULL;
	t = sqfs_dnames_budget(dir);
	if (IS_ERR_OR_NULL(t)) {
		/* memory or I/O: the scan says what is wrong, and next time */
		if (PTR_ERR(t) != -EUCLEAN)
			return NULL;
		t = SQFS_DNAMES_NONE;
	}
	old = cmpxchg_release(&si->names, NULL, t);
	if (old) {
		sqfs_dnames_free(dir->i_sb, t);
		return old;
	}
	return t;
}

void sqfs_dir_evict(struct inode *dir)
{
	sqfs_dnames_free(dir->i_sb, SQFS_I(dir)->names);
}

static const struct sqfs_dname *sqfs_dnames_find(const struct sqfs_dnames *t,
						 const struct qstr *name)
{
	u32 lo = 0, hi = t->count, mid;
	const struct sqfs_dname *e;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		e = &t->ent[mid];
		c = sqfs_namecmp(t->names + e->name, e->len, name->name,
				 name->len);
		if (!c)
			return e;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const unsigned char sqfs_dtype[] = {
	[SQFS_T_DIR] = DT_DIR,
	[SQFS_T_REG] = DT_REG,
	[SQFS_T_SYMLINK] = DT_LNK,
	[SQFS_T_BLKDEV] = DT_BLK,
	[SQFS_T_CHRDEV] = DT_CHR,
	[SQFS_T_FIFO] = DT_FIFO,
	[SQFS_T_SOCKET] = DT_SOCK,
};

static int sqfs_readdir(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	struct sqfs_inode *si = SQFS_I(dir);
	struct sqfs_dir_iter it = { .pin = NULL };
	struct sqfs_dirent *de;
	int ret;

	if (ctx->pos == 0) {
		if (!dir_emit(ctx, ".", 1, dir->i_ino, DT_DIR))
			return 0;
		ctx->pos = 1;
	}
	if (ctx->pos == 1) {
		u32 parent = si->parent;

		/*
		 * The root has no parent in the image; writers store one past
		 * the last inode, or 0. Report it as stored, as Linux's own
		 * driver does. A bad parent of another directory is not used.
		 */
		if (dir != dir->i_sb->s_root->d_inode &&
		    (!parent || parent > SQFS_SB(dir->i_sb)->inode_count))
			parent = sqfs_parent_ino(file->f_path.dentry);
		if (!dir_emit(ctx, "..", 2, parent, DT_DIR))
			return 0;
		ctx->pos = 3;
	}
	if (ctx->pos < 3)
		ctx->pos = 3;
	if (ctx->pos - 3 >= dir->i_size - 3)
		return 0;

	de = sqfs_kmalloc_obj(*de, GFP_KERNEL);
	if (!de)
		return -ENOMEM;
	ret = sqfs_dir_seek(dir, &it, ctx->pos - 3, NULL);
	if (ret)
		goto out;
	while ((ret = sqfs_dir_next(dir, &it, de)) > 0) {
		if (de->pos < ctx->pos - 3)
			continue;
		if (!dir_emit(ctx, de->name, de->len, de->ino,
			      sqfs_dtype[de->type])) {
			ret = 0;
			break;
		}
		ctx->pos = 3 + it.pos;
	}
out:
	sqfs_meta_unpin(&it.pin);
	kfree(de);
	return ret < 0 ? ret : 0;
}

static struct dentry *sqfs_lookup(struct inode *dir, struct dentry *dentry,
				  unsigned int flags)
{
	const struct qstr *name = &dentry->d_name;
	struct inode *inode = NULL;
	struct sqfs_dir_iter it = { .pin = NULL };
	const struct sqfs_dname *e;
	struct sqfs_dnames *t;
	struct sqfs_dirent *de;
	int ret, c;

	if (name->len > SQFS_NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	t = sqfs_dnames_get(dir);
	if (t && t != SQFS_DNAMES_NONE) {
		e = sqfs_dnames_find(t, name);
		if (e)
			inode = sqfs_iget(dir->i_sb, e->ref, e->ino);
		return d_splice_alias(inode, dentry);
	}
	de = sqfs_kmalloc_obj(*de, GFP_KERNEL);
	if (!de)
		return ERR_PTR(-ENOMEM);
	ret = sqfs_dir_seek(dir, &it, 0, name);
	if (ret)
		goto out;
	while ((ret = sqfs_dir_next(dir, &it, de)) > 0) {
		c = sqfs_namecmp(de->name, de->len, name->name, name->len);
		if (c < 0)
			continue;
		if (c == 0)
			inode = sqfs_iget(dir->i_sb, de->ref, de->ino);
		break;
	}
out:
	sqfs_meta_unpin(&it.pin);
	kfree(de);
	if (ret < 0)
		return ERR_PTR(ret);
	return d_splice_alias(inode, dentry);
}

const struct inode_operations sqfs_dir_iops = {
	.lookup = sqfs_lookup,
	.listxattr = sqfs_listxattr,
};

const struct file_operations sqfs_dir_fops = {
	.read = generic_read_dir,
	.iterate_shared = sqfs_readdir,
	.llseek = generic_file_llseek,
	.setlease = generic_setlease,
};
