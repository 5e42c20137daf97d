/*
 * boot-tests/driver/lsqx.c: a tiny helper for manifest.sh and the guest checks
 * (busybox has no getfattr). Built static for the guest, dynamic for the host.
 *
 *   lsqx PATH...          one line per path: PATH \t LINK \t XATTRS
 *                         LINK: the symlink target, "-" when not a symlink
 *                         XATTRS: name=hexvalue pairs sorted by name, joined
 *                         with ";", "-" when none (lgetxattr/llistxattr);
 *                         ENOTSUP counts as none unless $LSQX_ENOTSUP is set
 *   lsqx -r BUFSZ DIR...  read each directory with getdents64 into a BUFSZ-byte
 *                         buffer and into a 1 MiB one; check that both give the
 *                         same entries in the same order, that "." and ".." are
 *                         there, and that d_ino and d_type agree with lstat.
 *                         Prints "readdir-ok DIR N" or "readdir-FAIL DIR why";
 *                         exits 1 if any directory failed.
 *   lsqx -l DIR           the listing two drivers must agree on, in readdir order
 *                         (directories depth first, in the order readdir gives
 *                         them): "D path" per directory, then per entry
 *                         "E name d_ino d_type handle" (handle: the
 *                         name_to_handle_at type:hex or its errno), and after a
 *                         regular file's "S path" with lseek SEEK_DATA and
 *                         SEEK_HOLE at 0, size/2 and size (offset or errno; these
 *                         may differ between correct drivers: a driver may report
 *                         sparse blocks as holes). stderr: "seek-FAIL ..." for an inconsistent
 *                         answer (a hole that is not zeros, an offset out of
 *                         range), and a "list ..." summary. Exit 1 on a failure.
 *   lsqx -e MNT MANIFEST  export round trip: name_to_handle_at for every inode,
 *                         drop_caches, open_by_handle_at each (mount fd = MNT):
 *                         same st_dev/st_ino/mode, files the manifest's sha256,
 *                         symlinks the same target; directories one by one with
 *                         drop_caches before each, deepest first, so the kernel
 *                         reconnects them (get_parent): /proc/self/fd names the
 *                         right path and ".." is the parent. Then forged handles.
 *                         Prints "export-FAIL ..." lines, "forged case=ERRNO...",
 *                         and a last "export ..." summary. Exit 1 on a failure.
 *   lsqx -s MNT MANIFEST NPROC SECONDS
 *                         stress: reads every regular file of 4 KiB..16 MiB (and
 *                         a few small ones) and checks it against the manifest;
 *                         sendfile and splice of each to a pipe and to a file;
 *                         then NPROC processes read the same and different files
 *                         at once (pread at random offsets, mmap, sequential
 *                         reads, splice) while the parent drops the caches,
 *                         every byte compared. Last line "stress ...".
 *   lsqx -m FILE OFFSET   map FILE and read the byte at OFFSET through the mapping
 *                         (one page fault); prints it in hex
 *   lsqx -n COUNT PATH    lstat PATH COUNT times; prints "lstat ok=N ERRNO=N ..."
 *   lsqx -S FILE data|hole OFFSET
 *                         one lseek SEEK_DATA or SEEK_HOLE from OFFSET; prints
 *                         "seek result=OFFSET" or "seek errno=NAME"
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int show(const char *path)
{
	static char list[1 << 16];
	static unsigned char val[1 << 16];
	char target[8192];
	char *names[4096];
	ssize_t len, n;
	int count = 0, i, bad = 0;
	struct stat st;

	if (lstat(path, &st) != 0) {
		fprintf(stderr, "lsqx: lstat %s: %s\n", path, strerror(errno));
		return 1;
	}
	fputs(path, stdout);
	putchar('\t');
	if (S_ISLNK(st.st_mode)) {
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0) {
			fprintf(stderr, "lsqx: readlink %s: %s\n", path, strerror(errno));
			fputs("READLINK-ERROR", stdout);
		} else {
			fwrite(target, 1, n, stdout);
			if (n != st.st_size)
				printf("[st_size=%lld]", (long long)st.st_size);
		}
	} else {
		putchar('-');
	}
	putchar('\t');
	errno = 0;
	len = llistxattr(path, list, sizeof(list));
	if (len < -1 || len > (ssize_t)sizeof(list)) {
		fprintf(stderr, "lsqx: llistxattr %s returned %zd: invalid kernel return\n", path, len);
		puts("LISTXATTR-INVALID");
		return 1;
	}
	if (len < 0 && errno == ENOTSUP && !getenv("LSQX_ENOTSUP")) {
		/* no xattrs on this filesystem: the same as none (the stock driver
		 * says ENOTSUP for an image without an xattr table) */
		puts("-");
		return 0;
	}
	if (len < 0) {
		if (errno != ENOTSUP)
			fprintf(stderr, "lsqx: llistxattr %s: %s\n", path, strerror(errno));
		printf("LISTXATTR-%s\n", errno == ENOTSUP ? "ENOTSUP" : "ERROR");
		return errno != ENOTSUP;
	}
	for (char *p = list; p < list + len && count < 4096; p += strlen(p) + 1)
		names[count++] = p;
	qsort(names, count, sizeof(names[0]), cmp);
	if (count == 0)
		putchar('-');
	for (i = 0; i < count; i++) {
		errno = 0;
		n = lgetxattr(path, names[i], val, sizeof(val));
		printf("%s%s=", i ? ";" : "", names[i]);
		if (n < -1 || n > (ssize_t)sizeof(val)) {
			/* not a size, not -1 + errno: the kernel returned garbage */
			fprintf(stderr, "lsqx: lgetxattr %s %s returned %zd: invalid kernel return\n",
				path, names[i], n);
			fputs("GETXATTR-INVALID", stdout);
			bad = 1;
			continue;
		}
		if (n < 0) {
			fprintf(stderr, "lsqx: lgetxattr %s %s: %s\n", path, names[i],
				strerror(errno));
			fputs("GETXATTR-ERROR", stdout);
			continue;
		}
		for (ssize_t j = 0; j < n; j++)
			printf("%02x", val[j]);
	}
	putchar('\n');
	return bad;
}

struct ent {
	unsigned long long ino;
	unsigned char type;
	char *name;
};

static int readall(const char *dir, size_t bufsz, struct ent **out, size_t *count)
{
	char *buf = malloc(bufsz);
	size_t cap = 64, n = 0;
	struct ent *e = malloc(cap * sizeof(*e));
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	long got;

	if (fd < 0 || !buf || !e)
		return -1;
	while ((got = syscall(SYS_getdents64, fd, buf, bufsz)) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			if (n == cap) {
				cap *= 2;
				e = realloc(e, cap * sizeof(*e));
			}
			e[n].ino = d->d_ino;
			e[n].type = d->d_type;
			e[n].name = strdup(d->d_name);
			n++;
			off += d->d_reclen;
		}
	}
	close(fd);
	free(buf);
	if (got < 0)
		return -1;
	*out = e;
	*count = n;
	return 0;
}

static int dtype_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return DT_REG;
	case S_IFDIR: return DT_DIR;
	case S_IFLNK: return DT_LNK;
	case S_IFCHR: return DT_CHR;
	case S_IFBLK: return DT_BLK;
	case S_IFIFO: return DT_FIFO;
	case S_IFSOCK: return DT_SOCK;
	}
	return DT_UNKNOWN;
}

static int checkdir(const char *dir, size_t small)
{
	struct ent *a, *b;
	size_t na, nb, i;
	int dot = 0, dotdot = 0;
	char path[8192];
	struct stat st;

	if (readall(dir, small, &a, &na) != 0) {
		printf("readdir-FAIL %s getdents64(%zu): %s\n", dir, small, strerror(errno));
		return 1;
	}
	if (readall(dir, 1 << 20, &b, &nb) != 0) {
		printf("readdir-FAIL %s getdents64(1M): %s\n", dir, strerror(errno));
		return 1;
	}
	if (na != nb) {
		printf("readdir-FAIL %s %zu entries with %zu-byte buffer, %zu with 1M\n",
		       dir, na, small, nb);
		return 1;
	}
	for (i = 0; i < na; i++) {
		if (strcmp(a[i].name, b[i].name) || a[i].ino != b[i].ino ||
		    a[i].type != b[i].type) {
			printf("readdir-FAIL %s entry %zu differs: %s/%llu/%d vs %s/%llu/%d\n",
			       dir, i, a[i].name, a[i].ino, a[i].type, b[i].name, b[i].ino,
			       b[i].type);
			return 1;
		}
		if (!strcmp(a[i].name, ".")) {
			dot++;
			continue;
		}
		if (!strcmp(a[i].name, "..")) {
			dotdot++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, a[i].name);
		if (lstat(path, &st) != 0) {
			printf("readdir-FAIL %s lstat %s: %s\n", dir, a[i].name, strerror(errno));
			return 1;
		}
		if (st.st_ino != a[i].ino || dtype_of(st.st_mode) != a[i].type) {
			printf("readdir-FAIL %s %s: d_ino %llu d_type %d, lstat ino %llu type %d\n",
			       dir, a[i].name, a[i].ino, a[i].type,
			       (unsigned long long)st.st_ino, dtype_of(st.st_mode));
			return 1;
		}
	}
	if (dot != 1 || dotdot != 1) {
		printf("readdir-FAIL %s: %d '.' and %d '..'\n", dir, dot, dotdot);
		return 1;
	}
	printf("readdir-ok %s %zu\n", dir, na);
	return 0;
}

/* ---- sha256 (FIPS 180-4); the constants are computed, not tabled ---- */

struct sha {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t n;
};

static uint32_t K[64], H0[8];

static uint32_t frac32(long double x)
{
	return (uint32_t)((x - floorl(x)) * 4294967296.0L);
}

static void sha_consts(void)
{
	int n = 0, p, d, prime;

	if (K[0])
		return;
	for (p = 2; n < 64; p++) {
		prime = 1;
		for (d = 2; d * d <= p; d++)
			if (p % d == 0)
				prime = 0;
		if (!prime)
			continue;
		if (n < 8)
			H0[n] = frac32(sqrtl(p));
		K[n++] = frac32(cbrtl(p));
	}
}

#define ROR(x, r) (((x) >> (r)) | ((x) << (32 - (r))))

static void sha_block(struct sha *s, const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) +
		       w[i - 7] + (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
	s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha_init(struct sha *s)
{
	sha_consts();
	memcpy(s->h, H0, sizeof(H0));
	s->len = 0;
	s->n = 0;
}

static void sha_add(struct sha *s, const void *data, size_t len)
{
	const unsigned char *p = data;

	s->len += len;
	while (len) {
		size_t k = 64 - s->n < len ? 64 - s->n : len;

		memcpy(s->buf + s->n, p, k);
		s->n += k, p += k, len -= k;
		if (s->n == 64) {
			sha_block(s, s->buf);
			s->n = 0;
		}
	}
}

static void sha_hex(struct sha *s, char out[65])
{
	uint64_t bits = s->len * 8;
	unsigned char pad[72] = { 0x80 };
	size_t padlen = (s->n < 56 ? 56 : 120) - s->n;
	int i;

	for (i = 0; i < 8; i++)
		pad[padlen + i] = bits >> (56 - 8 * i);
	sha_add(s, pad, padlen + 8);
	for (i = 0; i < 8; i++)
		sprintf(out + 8 * i, "%08x", s->h[i]);
}

/* ---- small helpers ---- */

static const char *ename(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "ok";
	case ESTALE: return "ESTALE";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EIO: return "EIO";
	case EUCLEAN: return "EUCLEAN";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case ELOOP: return "ELOOP";
	case ENXIO: return "ENXIO";
	case EBADF: return "EBADF";
	case ENOMEM: return "ENOMEM";
	case EOVERFLOW: return "EOVERFLOW";
	case E2BIG: return "E2BIG";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static double now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static int drop_caches(void)
{
	int fd, ok;

	if (getenv("LSQX_NODROP")) /* a trial on the host: leave its caches alone */
		return 0;
	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, "3\n", 2) == 2;
	close(fd);
	return ok ? 0 : -1;
}

/* the manifest (boot-tests/manifest.sh): sorted lines
 * "path type mode uid gid nlink size mtime data linkgroup [xattrs]" */
struct mline {
	char *path;
	unsigned mode;
	long long size;
	char *data;
};
static struct mline *man;
static size_t nman;

static int load_manifest(const char *file)
{
	FILE *f = fopen(file, "r");
	char *line = NULL, *fld[11];
	size_t cap = 0, mcap = 0;
	ssize_t len;
	int i;

	if (!f)
		return -1;
	while ((len = getline(&line, &cap, f)) > 0) {
		char *p = line;

		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		for (i = 0; i < 11 && p; i++) {
			fld[i] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = 0;
		}
		if (i < 10)
			continue;
		if (nman == mcap) {
			mcap = mcap ? 2 * mcap : 1024;
			man = realloc(man, mcap * sizeof(*man));
		}
		man[nman].path = strdup(fld[0]);
		man[nman].mode = !strcmp(fld[1], "f") ? S_IFREG : !strcmp(fld[1], "d") ? S_IFDIR : 0;
		man[nman].size = strcmp(fld[6], "-") ? atoll(fld[6]) : -1;
		man[nman].data = strdup(fld[8]);
		nman++;
	}
	free(line);
	fclose(f);
	return 0;
}

static int mcmp(const void *k, const void *e)
{
	return strcmp(k, ((const struct mline *)e)->path);
}

static struct mline *mfind(const char *rel)
{
	return bsearch(rel, man, nman, sizeof(*man), mcmp);
}

/* read a whole fd; its sha256 into hex; returns bytes or -1 */
static long long hash_fd(int fd, char hex[65], unsigned char **keep)
{
	static unsigned char buf[1 << 17];
	struct sha s;
	long long tot = 0;
	ssize_t n;
	size_t cap = 0;

	sha_init(&s);
	if (keep)
		*keep = NULL;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		sha_add(&s, buf, n);
		if (keep) {
			if (tot + n > (long long)cap) {
				cap = 2 * (tot + n);
				*keep = realloc(*keep, cap);
			}
			memcpy(*keep + tot, buf, n);
		}
		tot += n;
	}
	sha_hex(&s, hex);
	return n < 0 ? -1 : tot;
}

/* ---- -l: readdir order, inode numbers, handles, lseek ---- */

static int nfail;
static long long nents, ndirs, nhandles, nseek, nseekgen;

static int zeros(int fd, off_t from, off_t to)
{
	static unsigned char buf[1 << 16];

	while (from < to) {
		size_t k = to - from < (off_t)sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t n = pread(fd, buf, k, from);

		if (n <= 0)
			return 0;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i])
				return 0;
		from += n;
	}
	return 1;
}

static void seekcheck(const char *path, int fd, off_t size)
{
	off_t at[3] = { 0, size / 2, size }, r[6];
	int e[6], i, bad = 0;

	for (i = 0; i < 6; i++) {
		errno = 0;
		r[i] = lseek(fd, at[i / 2], i % 2 ? SEEK_HOLE : SEEK_DATA);
		e[i] = r[i] < 0 ? errno : 0;
		if (r[i] < 0)
			printf("\t%s", ename(e[i]));
		else
			printf("\t%lld", (long long)r[i]);
	}
	nseek++;
	/* at EOF (and anywhere in an empty file) both say ENXIO */
	if (e[4] != ENXIO || e[5] != ENXIO)
		bad = 1;
	for (i = 0; i < 4 && !bad && size > 0; i += 2) {
		off_t off = at[i / 2], d = e[i] ? size : r[i], h = r[i + 1];

		if (e[i] && e[i] != ENXIO)
			bad = 1;
		else if (e[i + 1] || h < off || h > size || d < off || d > size)
			bad = 1;
		else if (d > off && !zeros(fd, off, d))
			bad = 1; /* "no data before d" but there is */
		else if (h < size) {
			off_t nd = lseek(fd, h, SEEK_DATA);

			if (nd < 0)
				nd = size;
			if (!zeros(fd, h, nd))
				bad = 1; /* a hole that is not zeros */
		}
	}
	if (size == 0 && (e[0] != ENXIO || e[1] != ENXIO))
		bad = 1;
	if (bad) {
		nfail++;
		fprintf(stderr, "seek-FAIL %s size %lld: DATA/HOLE at 0: %lld/%lld %s/%s at %lld: %lld/%lld %s/%s at EOF: %s/%s\n",
			path, (long long)size, (long long)r[0], (long long)r[1], ename(e[0]), ename(e[1]),
			(long long)at[1], (long long)r[2], (long long)r[3], ename(e[2]), ename(e[3]),
			ename(e[4]), ename(e[5]));
	} else if (size == 0 || (r[0] == 0 && r[1] == size && r[2] == size / 2 && r[3] == size)) {
		nseekgen++;
	}
}

static void listdir(const char *path)
{
	struct ent *e;
	size_t n, i;
	char sub[8192];

	if (readall(path, 1 << 16, &e, &n) != 0) {
		nfail++;
		fprintf(stderr, "list-FAIL %s: getdents64: %s\n", path, strerror(errno));
		printf("D\t%s\tERROR\n", path);
		return;
	}
	ndirs++;
	printf("D\t%s\n", path);
	for (i = 0; i < n; i++) {
		static struct file_handle *fh;
		int mid, j;
		struct stat st;

		nents++;
		printf("E\t%s\t%llu\t%d", e[i].name, e[i].ino, e[i].type);
		if (!strcmp(e[i].name, ".") || !strcmp(e[i].name, "..")) {
			putchar('\n');
			continue;
		}
		snprintf(sub, sizeof(sub), "%s/%s", path, e[i].name);
		if (!fh)
			fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
		fh->handle_bytes = MAX_HANDLE_SZ;
		if (name_to_handle_at(AT_FDCWD, sub, fh, &mid, 0) == 0) {
			unsigned char *b = (unsigned char *)(fh + 1);

			nhandles++;
			printf("\t%d:", fh->handle_type);
			for (j = 0; j < (int)fh->handle_bytes; j++)
				printf("%02x", b[j]);
		} else {
			printf("\t%s", ename(errno));
		}
		putchar('\n');
		if (e[i].type == DT_REG) {
			int fd = open(sub, O_RDONLY);

			if (fd < 0 || fstat(fd, &st) != 0) {
				nfail++;
				fprintf(stderr, "list-FAIL %s: open: %s\n", sub, strerror(errno));
			} else {
				printf("S\t%s", sub);
				seekcheck(sub, fd, st.st_size);
				putchar('\n');
			}
			if (fd >= 0)
				close(fd);
		}
	}
	for (i = 0; i < n; i++)
		if (e[i].type == DT_DIR && strcmp(e[i].name, ".") && strcmp(e[i].name, "..")) {
			snprintf(sub, sizeof(sub), "%s/%s", path, e[i].name);
			listdir(sub);
		}
	for (i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

static int cmd_list(const char *dir)
{
	listdir(dir);
	fflush(stdout);
	fprintf(stderr, "list dirs=%lld entries=%lld handles=%lld seek=%lld seek-generic=%lld fail=%d\n",
		ndirs, nents, nhandles, nseek, nseekgen, nfail);
	return nfail != 0;
}

/* ---- -e: export round trip ---- */

struct obj {
	char *rel;      /* "./a/b" as in the manifest */
	char *path;     /* MNT/a/b */
	struct stat st;
	ino_t parent;
	int depth, err;
	char *link;
	struct file_handle *fh;
};
static struct obj *objs;
static size_t nobj, objcap;

static void collect(const char *mnt, const char *rel, int depth, ino_t parent)
{
	struct obj *o;
	struct ent *e;
	size_t n, i;
	char sub[8192], path[8192];
	int mid;

	snprintf(path, sizeof(path), "%s%s", mnt, rel + 1);
	if (nobj == objcap) {
		objcap = objcap ? 2 * objcap : 1024;
		objs = realloc(objs, objcap * sizeof(*objs));
	}
	o = &objs[nobj++];
	memset(o, 0, sizeof(*o));
	o->rel = strdup(rel);
	o->path = strdup(path);
	o->depth = depth;
	o->parent = parent;
	if (lstat(path, &o->st) != 0) {
		nfail++;
		printf("export-FAIL %s: lstat: %s\n", rel, strerror(errno));
		o->err = -1;
		return;
	}
	if (S_ISLNK(o->st.st_mode)) {
		char t[8192];
		ssize_t k = readlink(path, t, sizeof(t) - 1);

		t[k < 0 ? 0 : k] = 0;
		o->link = strdup(t);
	}
	o->fh = malloc(sizeof(*o->fh) + MAX_HANDLE_SZ);
	o->fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, o->fh, &mid, 0) != 0) {
		o->err = errno;
		free(o->fh);
		o->fh = NULL;
	}
	if (!S_ISDIR(o->st.st_mode))
		return;
	ino_t me = o->st.st_ino;

	if (readall(path, 1 << 16, &e, &n) != 0) {
		nfail++;
		printf("export-FAIL %s: getdents64: %s\n", rel, strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(e[i].name, ".") && strcmp(e[i].name, "..")) {
			snprintf(sub, sizeof(sub), "%s/%s", rel, e[i].name);
			collect(mnt, sub, depth + 1, me);
		}
		free(e[i].name);
	}
	free(e);
}

static int fails_shown;
#define EFAIL(...) do { nfail++; if (fails_shown++ < 20) printf("export-FAIL " __VA_ARGS__); } while (0)

static long long nfiles_hashed, ndirs_reconnected, nopened;

static void check_open(int mfd, struct obj *o, const char *mnt)
{
	int fl = S_ISREG(o->st.st_mode) ? O_RDONLY :
		 S_ISDIR(o->st.st_mode) ? O_RDONLY | O_DIRECTORY : O_PATH | O_NOFOLLOW;
	int fd = open_by_handle_at(mfd, o->fh, fl);
	struct stat st;

	if (fd < 0) {
		EFAIL("%s: open_by_handle_at: %s\n", o->rel, strerror(errno));
		return;
	}
	nopened++;
	if (fstat(fd, &st) != 0 || st.st_ino != o->st.st_ino || st.st_dev != o->st.st_dev ||
	    st.st_mode != o->st.st_mode) {
		EFAIL("%s: by handle ino %llu dev %llx mode %o, by path ino %llu dev %llx mode %o\n",
		      o->rel, (unsigned long long)st.st_ino, (unsigned long long)st.st_dev, st.st_mode,
		      (unsigned long long)o->st.st_ino, (unsigned long long)o->st.st_dev, o->st.st_mode);
		close(fd);
		return;
	}
	if (S_ISREG(o->st.st_mode)) {
		struct mline *m = mfind(o->rel);
		char hex[65];
		long long got;

		if (o->st.st_size > (64LL << 20)) {
			/* a huge (sparse) file: its first and last MiB, against the path */
			static unsigned char a[1 << 20], b[1 << 20];
			int pfd = open(o->path, O_RDONLY);
			off_t offs[2] = { 0, o->st.st_size - sizeof(a) };

			for (int k = 0; k < 2; k++)
				if (pfd < 0 || pread(fd, a, sizeof(a), offs[k]) != sizeof(a) ||
				    pread(pfd, b, sizeof(b), offs[k]) != sizeof(b) || memcmp(a, b, sizeof(a)))
					EFAIL("%s: by handle, MiB at %lld differs from by path\n", o->rel,
					      (long long)offs[k]);
			if (pfd >= 0)
				close(pfd);
		} else if ((got = hash_fd(fd, hex, NULL)) < 0) {
			EFAIL("%s: read by handle: %s\n", o->rel, strerror(errno));
		} else if (!m || strcmp(m->data, hex) || got != m->size) {
			EFAIL("%s: by handle %lld bytes sha256 %.16s, manifest %lld %.16s\n", o->rel, got,
			      hex, m ? m->size : -1, m ? m->data : "(no such path)");
		} else {
			nfiles_hashed++;
		}
	} else if (S_ISLNK(o->st.st_mode)) {
		char t[8192];
		ssize_t k = readlinkat(fd, "", t, sizeof(t) - 1);

		t[k < 0 ? 0 : k] = 0;
		if (k < 0 || strcmp(t, o->link))
			EFAIL("%s: readlink by handle '%s' (%s), by path '%s'\n", o->rel, t,
			      k < 0 ? strerror(errno) : "ok", o->link);
	} else if (S_ISDIR(o->st.st_mode)) {
		char proc[64], got[8192], want[8192];
		ssize_t k;
		int pfd;

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		k = readlink(proc, got, sizeof(got) - 1);
		got[k < 0 ? 0 : k] = 0;
		snprintf(want, sizeof(want), "%s%s", mnt, strcmp(o->rel, ".") ? o->rel + 1 : "");
		if (strcmp(got, want))
			EFAIL("%s: directory opened by handle is '%s', want '%s'\n", o->rel, got, want);
		else
			ndirs_reconnected++;
		/* ".." of the root leaves the mount: not the driver's business */
		pfd = strcmp(o->rel, ".") ? openat(fd, "..", O_RDONLY | O_DIRECTORY) : -2;
		if (pfd == -2)
			;
		else if (pfd < 0 || fstat(pfd, &st) != 0 || st.st_ino != o->parent)
			EFAIL("%s: '..' of the directory opened by handle: %s ino %llu, want %llu\n", o->rel,
			      pfd < 0 ? strerror(errno) : "ok", (unsigned long long)st.st_ino,
			      (unsigned long long)o->parent);
		if (pfd >= 0)
			close(pfd);
	}
	close(fd);
}

static int bydepth(const void *a, const void *b)
{
	const struct obj *x = *(struct obj *const *)a, *y = *(struct obj *const *)b;

	return y->depth - x->depth ?: strcmp(x->rel, y->rel);
}

static const char *forge(int mfd, const struct file_handle *tmpl, const char *how, unsigned long long files)
{
	static struct file_handle *fh;
	unsigned char *b;
	uint32_t w[2] = { 1, 0 };
	int fd;

	if (!fh)
		fh = calloc(1, sizeof(*fh) + MAX_HANDLE_SZ);
	b = (unsigned char *)(fh + 1);
	if (tmpl) {
		memcpy(fh, tmpl, sizeof(*tmpl) + tmpl->handle_bytes);
		memcpy(w, b, fh->handle_bytes < 8 ? fh->handle_bytes : 8);
	} else { /* no handle to start from (no export table): what one would be */
		fh->handle_type = 1; /* FILEID_INO32_GEN: inode 1, generation 0 */
		fh->handle_bytes = 8;
	}
	if (!strcmp(how, "ino0"))
		w[0] = 0;
	else if (!strcmp(how, "past"))
		w[0] = files + 1;
	else if (!strcmp(how, "max"))
		w[0] = 0xffffffffu;
	else if (!strcmp(how, "gen"))
		w[1] ^= 1;
	else if (!strcmp(how, "type"))
		fh->handle_type = 0xfe;
	else if (!strcmp(how, "type0"))
		fh->handle_type = 0;
	else if (!strcmp(how, "short"))
		fh->handle_bytes = 4;
	else if (!strcmp(how, "empty"))
		fh->handle_bytes = 0;
	memcpy(b, w, fh->handle_bytes < 8 ? fh->handle_bytes : 8);
	fd = open_by_handle_at(mfd, fh, O_PATH);
	if (fd >= 0) {
		close(fd);
		return "ok";
	}
	return ename(errno);
}

static int cmd_export(const char *mnt, const char *manifest)
{
	static const char *cases[] = { "as-is", "ino0", "past", "max", "gen", "type", "type0", "short", "empty" };
	struct obj **order;
	struct file_handle *tmpl = NULL;
	struct statvfs sv;
	size_t i, nd = 0, every;
	long long nfh = 0, nerr = 0;
	int mfd, firsterr = 0;

	if (load_manifest(manifest) != 0) {
		printf("export-FAIL cannot read %s\nexport fail=1\n", manifest);
		return 1;
	}
	collect(mnt, ".", 0, 0);
	for (i = 0; i < nobj; i++) {
		if (objs[i].fh)
			nfh++;
		else if (objs[i].err > 0) {
			nerr++;
			if (!firsterr)
				firsterr = objs[i].err;
		}
		if (objs[i].fh && !tmpl && S_ISREG(objs[i].st.st_mode))
			tmpl = objs[i].fh;
	}
	mfd = open(mnt, O_RDONLY | O_DIRECTORY);
	if (mfd < 0 || statvfs(mnt, &sv) != 0) {
		printf("export-FAIL open/statvfs %s: %s\nexport fail=1\n", mnt, strerror(errno));
		return 1;
	}
	if (nfh && nerr)
		EFAIL("name_to_handle_at worked for %lld inodes and failed for %lld (%s)\n", nfh, nerr,
		      ename(firsterr));
	if (drop_caches() != 0)
		EFAIL("drop_caches: %s\n", strerror(errno));
	for (i = 0; i < nobj; i++)
		if (objs[i].fh && !S_ISDIR(objs[i].st.st_mode))
			check_open(mfd, &objs[i], mnt);
	order = malloc(nobj * sizeof(*order));
	for (i = 0; i < nobj; i++)
		if (objs[i].fh && S_ISDIR(objs[i].st.st_mode))
			order[nd++] = &objs[i];
	qsort(order, nd, sizeof(*order), bydepth);
	every = nd > 200 ? nd / 200 : 1;
	for (i = 0; i < nd; i++) {
		if (i % every == 0 && drop_caches() != 0)
			EFAIL("drop_caches: %s\n", strerror(errno));
		check_open(mfd, order[i], mnt);
	}
	printf("forged");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		printf(" %s=%s", cases[i], forge(mfd, tmpl, cases[i], sv.f_files));
	printf("\n");
	printf("export inodes=%zu handles=%lld handle-errors=%lld(%s) opened=%lld files-hashed=%lld dirs-reconnected=%lld fail=%d\n",
	       nobj, nfh, nerr, ename(firsterr), nopened, nfiles_hashed, ndirs_reconnected, nfail);
	close(mfd);
	return nfail != 0;
}

/* ---- -s: stress ---- */

struct ref {
	char *path;
	unsigned char *data;
	long long size;
};
static struct ref *refs;
static int nrefs;

static unsigned long long rnd(unsigned long long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int same(const char *w, struct ref *r, const unsigned char *got, long long off, long long len)
{
	long long i;

	if (off + len > r->size) {
		printf("stress-FAIL %s %s: %lld bytes at %lld, past the size %lld\n", w, r->path, len, off,
		       r->size);
		return 0;
	}
	if (!memcmp(got, r->data + off, len))
		return 1;
	for (i = 0; got[i] == r->data[off + i]; i++)
		;
	printf("stress-FAIL %s %s: byte %lld is %02x, want %02x (read of %lld at %lld)\n", w, r->path,
	       off + i, got[i], r->data[off + i], len, off);
	return 0;
}

/* sendfile or splice [off, off+len) of r through a pipe; 1 if every byte is right */
static int through_pipe(struct ref *r, int use_splice, long long off, long long len)
{
	static unsigned char buf[1 << 16];
	int fd = open(r->path, O_RDONLY), p[2], ok = 1;
	loff_t o = off;

	if (fd < 0 || pipe(p) != 0) {
		printf("stress-FAIL %s: open/pipe: %s\n", r->path, strerror(errno));
		return 0;
	}
	while (len > 0 && ok) {
		size_t k = len < (long long)sizeof(buf) ? (size_t)len : sizeof(buf);
		long long at = o;
		ssize_t n = use_splice ? splice(fd, &o, p[1], NULL, k, 0) : sendfile(p[1], fd, &o, k);
		ssize_t got = 0, m;

		if (n <= 0) {
			printf("stress-FAIL %s %s at %lld: %s\n", use_splice ? "splice" : "sendfile", r->path,
			       at, n < 0 ? strerror(errno) : "early EOF");
			ok = 0;
			break;
		}
		while (got < n && (m = read(p[0], buf + got, n - got)) > 0)
			got += m;
		ok = got == n && same(use_splice ? "splice" : "sendfile", r, buf, at, n);
		len -= n;
	}
	close(p[0]);
	close(p[1]);
	close(fd);
	return ok;
}

static int sendfile_to_file(struct ref *r)
{
	int fd = open(r->path, O_RDONLY), out = open("/tmp/lsqx-sendfile", O_RDWR | O_CREAT | O_TRUNC, 0600);
	unsigned char *buf = malloc(r->size + 1);
	long long tot = 0;
	ssize_t n;
	int ok;

	while (fd >= 0 && out >= 0 && (n = sendfile(out, fd, NULL, 1 << 20)) > 0)
		tot += n;
	ok = tot == r->size && pread(out, buf, r->size + 1, 0) == r->size && same("sendfile-file", r, buf, 0, r->size);
	if (tot != r->size)
		printf("stress-FAIL sendfile-file %s: %lld bytes of %lld (%s)\n", r->path, tot, r->size,
		       strerror(errno));
	free(buf);
	if (fd >= 0)
		close(fd);
	if (out >= 0)
		close(out);
	unlink("/tmp/lsqx-sendfile");
	return ok;
}

static void worker(int w, double until)
{
	static unsigned char buf[1 << 20];
	unsigned long long fs = 0x9e3779b97f4a7c15ULL * (w / 2 + 1), os = 0xabcdef12345ULL * (w + 3);
	long long ops = 0, bytes = 0, fails = 0;

	do {
		struct ref *r = &refs[rnd(&fs) % nrefs];
		int op = (ops + w) % 4, fd = open(r->path, O_RDONLY);
		long long off, len;

		if (fd < 0) {
			printf("stress-FAIL w%d open %s: %s\n", w, r->path, strerror(errno));
			fails++;
			break;
		}
		if (op == 0) { /* pread at random offsets, some past EOF */
			for (int k = 0; k < 16; k++) {
				off = rnd(&os) % (r->size + 4097);
				len = 1 + rnd(&os) % (k % 4 ? 4096 : sizeof(buf));
				ssize_t n = pread(fd, buf, len, off);
				long long want = off >= r->size ? 0 : (r->size - off < len ? r->size - off : len);

				if (n != want) {
					printf("stress-FAIL w%d pread %s %lld at %lld: got %zd, want %lld\n", w, r->path,
					       len, off, n, want);
					fails++;
				} else if (n > 0 && !same("pread", r, buf, off, n)) {
					fails++;
				}
				bytes += n > 0 ? n : 0;
			}
		} else if (op == 1 && r->size > 0) { /* mmap, pages in random order */
			unsigned char *m = mmap(NULL, r->size, PROT_READ, MAP_SHARED, fd, 0);
			long long pages = (r->size + 4095) / 4096;

			if (m == MAP_FAILED) {
				printf("stress-FAIL w%d mmap %s: %s\n", w, r->path, strerror(errno));
				fails++;
			} else {
				for (long long k = 0; k < pages && k < 64; k++) {
					off = (rnd(&os) % pages) * 4096;
					len = r->size - off < 4096 ? r->size - off : 4096;
					if (!same("mmap", r, m + off, off, len))
						fails++;
					bytes += len;
				}
				munmap(m, r->size);
			}
		} else if (op == 2) { /* sequential, odd buffer sizes */
			size_t bs = (size_t[]){ 4093, 65536, 1 << 20, 131071 }[rnd(&os) % 4];
			ssize_t n;

			off = 0;
			while ((n = read(fd, buf, bs)) > 0) {
				if (!same("read", r, buf, off, n)) {
					fails++;
					break;
				}
				off += n;
			}
			if (n < 0 || (n == 0 && off != r->size)) {
				printf("stress-FAIL w%d read %s: %lld of %lld bytes (%s)\n", w, r->path, off, r->size,
				       n < 0 ? strerror(errno) : "early EOF");
				fails++;
			}
			bytes += off;
		} else if (r->size > 0) { /* splice a random range */
			off = rnd(&os) % r->size;
			len = 1 + rnd(&os) % (r->size - off);
			if (len > 300000)
				len = 300000;
			if (!through_pipe(r, 1, off, len))
				fails++;
			bytes += len;
		}
		close(fd);
		ops++;
	} while (now() < until && fails < 5);
	printf("stress-worker %d ops=%lld bytes=%lld fails=%lld\n", w, ops, bytes, fails);
	fflush(stdout);
	_exit(fails ? 1 : 0);
}

static int cmd_stress(const char *mnt, const char *manifest, int nproc, double secs)
{
	long long refbytes = 0, nsmall = 0;
	int fails = 0, drops = 0, sf = 0, sp = 0, i, st;
	size_t k;
	double until;

	if (load_manifest(manifest) != 0) {
		printf("stress-FAIL cannot read %s\nstress fail=1\n", manifest);
		return 1;
	}
	refs = calloc(nman, sizeof(*refs));
	for (k = 0; k < nman; k++) {
		struct mline *m = &man[k];
		char hex[65], path[8192];
		long long got;
		int fd;

		if ((m->mode & S_IFMT) != S_IFREG || m->size > (16LL << 20) ||
		    (m->size < 4096 && (m->size == 0 || nsmall++ % 300)))
			continue;
		snprintf(path, sizeof(path), "%s%s", mnt, m->path + 1);
		fd = open(path, O_RDONLY);
		if (fd < 0 || (got = hash_fd(fd, hex, &refs[nrefs].data)) != m->size || strcmp(hex, m->data)) {
			printf("stress-FAIL %s: first read does not give the manifest's content\n", m->path);
			fails++;
		} else {
			refs[nrefs].path = strdup(path);
			refs[nrefs++].size = m->size;
			refbytes += m->size;
		}
		if (fd >= 0)
			close(fd);
	}
	if (!nrefs) {
		printf("stress-FAIL no files\nstress fail=1\n");
		return 1;
	}
	for (i = 0; i < nrefs; i++) {
		long long s = refs[i].size, a = s / 3, b = s / 3 + 1 < s ? s / 3 + 1 : s;

		sf += through_pipe(&refs[i], 0, 0, s) && through_pipe(&refs[i], 0, a, s - a) &&
		      sendfile_to_file(&refs[i]);
		sp += through_pipe(&refs[i], 1, 0, s) && through_pipe(&refs[i], 1, b, s - b);
	}
	fails += (nrefs - sf) + (nrefs - sp);
	fflush(stdout);
	until = now() + secs;
	for (i = 0; i < nproc; i++)
		if (fork() == 0)
			worker(i, until);
	while (now() < until) {
		usleep(400000);
		drops += drop_caches() == 0;
	}
	/* a worker stuck in the kernel (a page lock held by a task that oopsed)
	 * never exits: give up on it after 30 s instead of waiting forever */
	for (i = 0; i < nproc;) {
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p < 0)
			break;
		if (p == 0) {
			if (now() > until + 30) {
				printf("stress-FAIL %d workers still running 30 s after the end (stuck in the kernel?)\n",
				       nproc - i);
				fails += nproc - i;
				break;
			}
			usleep(100000);
			continue;
		}
		i++;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fails++;
			if (!WIFEXITED(st))
				printf("stress-FAIL a worker died (status %#x)\n", st);
		}
	}
	printf("stress files=%d refbytes=%lld sendfile-ok=%d splice-ok=%d procs=%d secs=%.0f drops=%d fail=%d\n",
	       nrefs, refbytes, sf, sp, nproc, secs, drops, fails);
	return fails != 0;
}

/* -m: one page fault at @off of @path */
static int cmd_fault(const char *path, long long off)
{
	long pg = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY);
	unsigned char *p;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || off < 0 || off >= st.st_size) {
		fprintf(stderr, "lsqx -m: %s: %s\n", path, fd < 0 ? strerror(errno) : "bad offset");
		return 1;
	}
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, off - off % pg);
	if (p == MAP_FAILED) {
		fprintf(stderr, "lsqx -m: mmap %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("%02x\n", p[off % pg]);
	munmap(p, pg);
	close(fd);
	return 0;
}

/* -n: @count lookups of @path (one that fails is not cached: each looks again) */
static int cmd_lstats(long count, const char *path)
{
	static long by_errno[4096];
	struct stat st;
	long i, ok = 0;
	int e;

	for (i = 0; i < count; i++) {
		if (!lstat(path, &st))
			ok++;
		else if (errno > 0 && errno < 4096)
			by_errno[errno]++;
	}
	printf("lstat ok=%ld", ok);
	for (e = 1; e < 4096; e++)
		if (by_errno[e])
			printf(" %s=%ld", strerrorname_np(e) ?: "?", by_errno[e]);
	printf("\n");
	return 0;
}

static int cmd_seek(const char *path, const char *what, long long at)
{
	int fd = open(path, O_RDONLY);
	off_t r;

	if (fd < 0) {
		printf("seek open-errno=%s\n", strerrorname_np(errno) ?: "?");
		return 1;
	}
	r = lseek(fd, at, strcmp(what, "hole") ? SEEK_DATA : SEEK_HOLE);
	if (r < 0)
		printf("seek errno=%s\n", strerrorname_np(errno) ?: "?");
	else
		printf("seek result=%lld\n", (long long)r);
	close(fd);
	return r < 0;
}

int main(int argc, char **argv)
{
	int rc = 0, i;

	if (argc == 2 && !strcmp(argv[1], "-sha")) { /* self-test: sha256 of stdin */
		char hex[65];

		if (hash_fd(0, hex, NULL) < 0)
			return 1;
		puts(hex);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "-l"))
		return cmd_list(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "-e"))
		return cmd_export(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "-n"))
		return cmd_lstats(atol(argv[2]), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "-m"))
		return cmd_fault(argv[2], atoll(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "-S"))
		return cmd_seek(argv[2], argv[3], atoll(argv[4]));
	if (argc == 6 && !strcmp(argv[1], "-s"))
		return cmd_stress(argv[2], argv[3], atoi(argv[4]), atof(argv[5]));

	if (argc >= 3 && !strcmp(argv[1], "-r")) {
		size_t small = strtoul(argv[2], NULL, 0);

		for (i = 3; i < argc; i++)
			rc |= checkdir(argv[i], small);
		return rc;
	}
	for (i = 1; i < argc; i++)
		rc |= show(argv[i]);
	return rc;
}
