// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: lzo blocks, through the kernel's lzo1x decompressor. Every
 * lzo1x variant a writer may have used decodes with the same function.
 */
#include <linux/types.h>
#include <linux/lzo.h>
#include "internal.h"

static void *sqfs_lzo_create(void)
{
	return NULL;
}

static void sqfs_lzo_destroy(void *stream)
{
}

static int sqfs_lzo_decompress(void *stream, const void *in,
			       unsigned int inlen, void *out,
			       unsigned int outlen)
{
	size_t n = outlen;

	if (lzo1x_decompress_safe(in, inlen, out, &n) != LZO_E_OK)
		return -EUCLEAN;
	return n;
}

const struct sqfs_decomp_ops sqfs_lzo_ops = {
	.id = SQFS_COMP_LZO,
	.name = "lzo",
	.opts_size = 8,
	.create = sqfs_lzo_create,
	.destroy = sqfs_lzo_destroy,
	.decompress = sqfs_lzo_decompress,
};
