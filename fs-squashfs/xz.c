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

/* the executable filters, and whether this kernel's xz_dec has each */
static const struct {
	u32 bit;
	const char *name;
	bool have;
} sqfs_xz_filters[] = {
	{ SQFS_XZ_X86, "x86", IS_ENABLED(CONFIG_XZ_DEC_X86) },
	{ SQFS_XZ_POWERPC, "powerpc", IS_ENABLED(CONFIG_XZ_DEC_POWERPC) },
	{ SQFS_XZ_IA64, "ia64", IS_ENABLED(CONFIG_XZ_DEC_IA64) },
	{ SQFS_XZ_ARM, "arm", IS_ENABLED(CONFIG_XZ_DEC_ARM) },
	{ SQFS_XZ_ARMTHUMB, "armthumb", IS_ENABLED(CONFIG_XZ_DEC_ARMTHUMB) },
	{ SQFS_XZ_SPARC, "sparc", IS_ENABLED(CONFIG_XZ_DEC_SPARC) },
	{ SQFS_XZ_ARM64, "arm64", IS_ENABLED(CONFIG_XZ_DEC_ARM64) },
	{ SQFS_XZ_RISCV, "riscv", IS_ENABLED(CONFIG_XZ_DEC_RISCV) },
};

/*
 * The image says which filters its blocks may use: a filter this kernel's
 * xz decoder was built without would fail every block that uses it, so such
 * an image is refused at mount, as unsupported (it is not corrupt).
 */
static int sqfs_xz_check_filters(struct super_block *sb, u32 filters)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sqfs_xz_filters); i++) {
		if (!(filters & sqfs_xz_filters[i].bit))
			continue;
		filters &= ~sqfs_xz_filters[i].bit;
		if (sqfs_xz_filters[i].have)
			continue;
		sqfs_err(sb, "xz filter %s (-Xbcj %s) is not in this kernel's xz decoder: not supported",
			 sqfs_xz_filters[i].name, sqfs_xz_filters[i].name);
		return -EOPNOTSUPP;
	}
	if (filters) {
		sqfs_err(sb, "unknown xz filters %#x: not supported", filters);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int sqfs_xz_check_opts(struct super_block *sb, const void *opts,
			      unsigned int len)
{
	const struct sqfs_xz_opts *o = opts;
	u32 dict, top;
	int err;

	if (len < sizeof(*o))
		return sqfs_corrupt(sb, "xz options block too short (%u bytes)", len);
	err = sqfs_xz_check_filters(sb, le32_to_cpu(o->filters));
	if (err)
		return err;
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
	switch (xret) {
	case XZ_STREAM_END:
		return b.out_pos;
	case XZ_MEM_ERROR:
		return -ENOMEM;
	case XZ_OPTIONS_ERROR:	/* a filter or option xz_dec lacks */
		return -EOPNOTSUPP;
	default:
		return -EUCLEAN;
	}
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
