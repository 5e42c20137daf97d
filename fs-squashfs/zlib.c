// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: gzip (zlib stream) blocks, through the kernel's zlib_inflate.
 */
#include <linux/types.h>
#include <linux/zlib.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include "internal.h"

static int sqfs_zlib_check_opts(struct super_block *sb, const void *opts,
				unsigned int len)
{
	const struct sqfs_gzip_opts *o = opts;
	unsigned int window;

	if (len < sizeof(*o))
		return sqfs_corrupt(sb, "gzip options block too short (%u bytes)", len);
	/* inflate with the largest window reads any smaller one */
	window = le16_to_cpu(o->window);
	if (window < 8 || window > 15) {
		sqfs_err(sb, "gzip window size %u is not supported", window);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void *sqfs_zlib_create(void)
{
	struct z_stream_s *z = kzalloc(sizeof(*z), GFP_KERNEL);

	if (!z)
		return ERR_PTR(-ENOMEM);
	z->workspace = vmalloc(zlib_inflate_workspacesize());
	if (!z->workspace) {
		kfree(z);
		return ERR_PTR(-ENOMEM);
	}
	return z;
}

static void sqfs_zlib_destroy(void *stream)
{
	struct z_stream_s *z = stream;

	vfree(z->workspace);
	kfree(z);
}

static int sqfs_zlib_decompress(void *stream, const void *in,
				unsigned int inlen, void *out,
				unsigned int outlen)
{
	struct z_stream_s *z = stream;
	int zret;

	z->next_in = in;
	z->avail_in = inlen;
	z->next_out = out;
	z->avail_out = outlen;
	if (zlib_inflateInit(z) != Z_OK)
		return -EIO;
	zret = zlib_inflate(z, Z_FINISH);
	zlib_inflateEnd(z);
	if (zret != Z_STREAM_END || z->avail_in)
		return -EUCLEAN;
	return z->total_out;
}

const struct sqfs_decomp_ops sqfs_zlib_ops = {
	.id = SQFS_COMP_GZIP,
	.name = "gzip",
	.opts_size = 8,
	.check_opts = sqfs_zlib_check_opts,
	.create = sqfs_zlib_create,
	.destroy = sqfs_zlib_destroy,
	.decompress = sqfs_zlib_decompress,
};
