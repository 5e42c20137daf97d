// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: lz4 blocks (plain or high-compression, the same format),
 * through the kernel's LZ4 decompressor.
 */
#include <linux/types.h>
#include <linux/lz4.h>
#include "internal.h"

static int sqfs_lz4_check_opts(struct super_block *sb, const void *opts,
			       unsigned int len)
{
	const struct sqfs_lz4_opts *o = opts;

	if (len < sizeof(*o))
		return sqfs_corrupt(sb, "lz4 options block too short (%u bytes)", len);
	if (le32_to_cpu(o->version) != SQFS_LZ4_LEGACY) {
		sqfs_err(sb, "lz4 format version %u is not supported",
			 le32_to_cpu(o->version));
		return -EOPNOTSUPP;
	}
	return 0;
}

static void *sqfs_lz4_create(void)
{
	return NULL;
}

static void sqfs_lz4_destroy(void *stream)
{
}

static int sqfs_lz4_decompress(void *stream, const void *in,
			       unsigned int inlen, void *out,
			       unsigned int outlen)
{
	int n = LZ4_decompress_safe(in, out, inlen, outlen);

	return n < 0 ? -EUCLEAN : n;
}

const struct sqfs_decomp_ops sqfs_lz4_ops = {
	.id = SQFS_COMP_LZ4,
	.name = "lz4",
	.opts_size = 8,
	.check_opts = sqfs_lz4_check_opts,
	.create = sqfs_lz4_create,
	.destroy = sqfs_lz4_destroy,
	.decompress = sqfs_lz4_decompress,
};
