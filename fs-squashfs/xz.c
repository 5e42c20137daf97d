// SPDX-License-Identifier: GPL-2.0-only
/*
 * livesquash: xz blocks, through the kernel's xz_dec in single-call mode.
 *
 * Each block is a whole .xz stream and the output buffer holds the whole
 * block, so no dictionary has to be allocated: the dictionary size in the
 * options block is only checked.
 */
#include <linux/types.h>
#include <linux/xz.h>
#include "internal.h"

static int sqfs_xz_check_opts(struct super_block *sb, const void *opts,
			      unsigned int len)
{
	const struct sqfs_xz_opts *o = opts;
	u32 dict, top;

	if (len < sizeof(*o))
		return sqfs_corrupt(sb, "xz options block too short (%u bytes)", len);
	dict = le32_to_cpu(o->dict_size);
	/* 4 KiB is the least LZMA2 knows (mksquashfs -b 4K writes that) */
	if (dict < 4096)
		goto bad;
	/* a power of two, or a power of two and a half */
	top = 1U << __fls(dict);
	if (dict != top && dict != top + (top >> 1))
		goto bad;
	return 0;
bad:
	sqfs_err(sb, "xz dictionary size %u is not supported", dict);
	return -EOPNOTSUPP;
}

static void *sqfs_xz_create(void)
{
	struct xz_dec *s = xz_dec_init(XZ_SINGLE, 0);

	return s ?: ERR_PTR(-ENOMEM);
}

static void sqfs_xz_destroy(void *stream)
{
	xz_dec_end(stream);
}

static int sqfs_xz_decompress(void *stream, const void *in,
			      unsigned int inlen, void *out,
			      unsigned int outlen)
{
	struct xz_buf b = {
		.in = in,
		.in_size = inlen,
		.out = out,
		.out_size = outlen,
	};
	enum xz_ret xret;

	xz_dec_reset(stream);
	xret = xz_dec_run(stream, &b);
	if (xret != XZ_STREAM_END)
		return xret == XZ_MEM_ERROR ? -ENOMEM : -EUCLEAN;
	return b.out_pos;
}

const struct sqfs_decomp_ops sqfs_xz_ops = {
	.id = SQFS_COMP_XZ,
	.name = "xz",
	.opts_size = 8,
	.check_opts = sqfs_xz_check_opts,
	.create = sqfs_xz_create,
	.destroy = sqfs_xz_destroy,
	.decompress = sqfs_xz_decompress,
};
