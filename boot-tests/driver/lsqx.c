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
 */
#define _GNU_SOURCE
#include <dirent.h>
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

int main(int argc, char **argv)
{
	int rc = 0, i;

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
