// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: zstd blocks, through the kernel's zstd decompression context.
 */
#include <linux/types.h>
#include <linux/zstd.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include "internal.h"

struct sqfs_zstd {
	zstd_dctx *dctx;
	void *ws;
};

static void *sqfs_zstd_create(void)
{
	size_t size = zstd_dctx_workspace_bound();
	struct sqfs_zstd *z = kzalloc(sizeof(*z), GFP_KERNEL);

	if (!z)
		return ERR_PTR(-ENOMEM);
	z->ws = vmalloc(size);
	if (z->ws)
		z->dctx = zstd_init_dctx(z->ws, size);
	if (!z->dctx) {
		vfree(z->ws);
		kfree(z);
		return ERR_PTR(-ENOMEM);
	}
	return z;
}

static void sqfs_zstd_destroy(void *stream)
{
	struct sqfs_zstd *z = stream;

	vfree(z->ws);
	kfree(z);
}

static int sqfs_zstd_decompress(void *stream, const void *in,
				unsigned int inlen, void *out,
				unsigned int outlen)
{
	struct sqfs_zstd *z = stream;
	size_t n = zstd_decompress_dctx(z->dctx, out, outlen, in, inlen);

	return zstd_is_error(n) ? -EUCLEAN : n;
}

const struct sqfs_decomp_ops sqfs_zstd_ops = {
	.id = SQFS_COMP_ZSTD,
	.name = "zstd",
	.opts_size = 4,
	.create = sqfs_zstd_create,
	.destroy = sqfs_zstd_destroy,
	.decompress = sqfs_zstd_decompress,
};
