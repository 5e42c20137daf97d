// SPDX-License-Identifier: GPL-2.0
/*
 * boot-tests/bench/lsqceil.c: the decompression ceiling of a sequential read (make
 * bench), static, run in the benchmark's guest.
 *
 * usage: lsqceil LIST DEVICE [SECONDS]
 *
 * LIST (written by bench.sh from `rdsquashfs -s`) names the compressor on its first
 * line (gzip, xz, lzo, lz4, zstd) and then one data block of a file a line: "OFFSET
 * LENGTH COMPRESSED OUTLEN" (bytes on DEVICE, 1 or 0, the bytes it holds). lsqceil
 * reads those blocks from DEVICE into memory (untimed), then decompresses all of
 * them, one after the other on one CPU, with the user-space library of that
 * compressor (zlib, liblzma, liblzo2, liblz4, libzstd: the same formats and
 * algorithms as the kernel's decompressors, not the same builds), again and again
 * for at least SECONDS (default 1), and prints one line:
 *   bytes=N ns=N passes=N blocks=N
 * bytes: the decompressed bytes of all passes; every pass must give each block's
 * OUTLEN bytes, else it exits 1. A block stored as is counts as a memcpy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <lzma.h>
#include <lzo/lzo1x.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

struct blk {
	unsigned char *in;
	size_t len, outlen;
	int compressed;
};

static void die(const char *what)
{
	fprintf(stderr, "lsqceil: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static z_stream zs;
static lzma_stream xs = LZMA_STREAM_INIT;
static ZSTD_DCtx *zctx;

/* decompress @b into @out (room for @room bytes): the bytes it gave, or -1 */
static long unpack(const char *comp, const struct blk *b, unsigned char *out, size_t room)
{
	if (!b->compressed) {
		memcpy(out, b->in, b->len);
		return b->len;
	}
	if (!strcmp(comp, "gzip")) {
		if (inflateReset(&zs) != Z_OK)
			return -1;
		zs.next_in = b->in;
		zs.avail_in = b->len;
		zs.next_out = out;
		zs.avail_out = room;
		return inflate(&zs, Z_FINISH) == Z_STREAM_END ? (long)zs.total_out : -1;
	}
	if (!strcmp(comp, "xz")) {
		/* one decoder for all blocks: liblzma keeps its dictionary between them */
		if (lzma_stream_decoder(&xs, UINT64_MAX, 0) != LZMA_OK)
			return -1;
		xs.next_in = b->in;
		xs.avail_in = b->len;
		xs.next_out = out;
		xs.avail_out = room;
		if (lzma_code(&xs, LZMA_FINISH) != LZMA_STREAM_END)
			return -1;
		return room - xs.avail_out;
	}
	if (!strcmp(comp, "lzo")) {
		lzo_uint n = room;

		if (lzo1x_decompress_safe(b->in, b->len, out, &n, NULL) != LZO_E_OK)
			return -1;
		return n;
	}
	if (!strcmp(comp, "lz4"))
		return LZ4_decompress_safe((const char *)b->in, (char *)out, b->len, room);
	if (!strcmp(comp, "zstd")) {
		size_t n = ZSTD_decompressDCtx(zctx, out, room, b->in, b->len);

		return ZSTD_isError(n) ? -1 : (long)n;
	}
	return -1;
}

int main(int argc, char **argv)
{
	char comp[16], line[256];
	struct blk *blks = NULL;
	size_t n = 0, cap = 0, i, room = 0;
	unsigned long long off, len, outlen;
	uint64_t t0, t1, bytes = 0, passes = 0, need;
	unsigned char *out;
	int c, fd;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: lsqceil LIST DEVICE [SECONDS]\n");
		return 2;
	}
	need = (uint64_t)((argc > 3 ? atof(argv[3]) : 1.0) * 1e9);
	/* the decompressors' buffers stay on the heap: no mmap and munmap a block */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
	f = fopen(argv[1], "r");
	if (!f)
		die(argv[1]);
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%15s", comp) != 1)
		die("the list's first line (the compressor)");
	fd = open(argv[2], O_RDONLY);
	if (fd < 0)
		die(argv[2]);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu %llu %d %llu", &off, &len, &c, &outlen) != 4)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			blks = realloc(blks, cap * sizeof(*blks));
			if (!blks)
				die("realloc");
		}
		blks[n].in = malloc(len);
		if (!blks[n].in)
			die("malloc");
		if (pread(fd, blks[n].in, len, off) != (ssize_t)len)
			die("reading a block");
		blks[n].len = len;
		blks[n].outlen = outlen;
		blks[n].compressed = c;
		if (outlen > room)
			room = outlen;
		n++;
	}
	fclose(f);
	close(fd);
	if (!n)
		die("no blocks in the list");
	out = malloc(room + 64);
	if (!out)
		die("malloc");
	if (inflateInit(&zs) != Z_OK)
		die("inflateInit");
	zctx = ZSTD_createDCtx();
	if (!zctx || lzo_init() != LZO_E_OK)
		die("decompressor set-up");
	t0 = now_ns();
	do {
		for (i = 0; i < n; i++) {
			long got = unpack(comp, &blks[i], out, room + 64);

			if (got != (long)blks[i].outlen) {
				fprintf(stderr, "lsqceil: %s block %zu gave %ld bytes, not %zu\n",
					comp, i, got, blks[i].outlen);
				return 1;
			}
			bytes += got;
		}
		passes++;
		t1 = now_ns();
	} while (t1 - t0 < need || passes < 2);
	printf("bytes=%llu ns=%llu passes=%llu blocks=%zu\n", (unsigned long long)bytes,
	       (unsigned long long)(t1 - t0), (unsigned long long)passes, n);
	return 0;
}
