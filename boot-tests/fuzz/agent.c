// SPDX-License-Identifier: GPL-2.0
/*
 * boot-tests/fuzz/agent.c: the guest side of `make fuzz` (static, run by the fuzz
 * initramfs's /init on the debug kernel).
 *
 * usage: lsqfuzz-agent PORT [PREFIX,...]
 *
 * Talks to the host's fuzz/vm.py over PORT (/dev/ttyS1, raw). For each image the
 * host sends, it loop-mounts it read-only as squashfs, walks the whole tree the way
 * a user would (getdents with a small buffer, lstat, readlink, read, pread, mmap,
 * SEEK_DATA/SEEK_HOLE, listxattr/getxattr, file handles, statfs), then loop-mounts
 * the first file in it that starts with squashfs's magic (an image inside the
 * image, as a live system's users loop-mount one) and walks that too, unmounts, and
 * answers with the KCOV coverage of that work: AFL-style edges (hash of the previous
 * and this program counter) over the program counters that fall in the kernel
 * functions whose names start with one of the PREFIXes (default "sqfs_": our
 * driver), so the host's AFL++ sees the driver's edges and nothing else.
 * Without KCOV (a kernel built without it) the answer carries no edges.
 *
 * The bytes go through shared memory, an ivshmem-plain PCI device (vendor 0x1af4,
 * device 0x1110) whose BAR 2 the host's vm.py maps from a file: the image at offset
 * 0, the answer at SHM_ANSWER. The serial port (~140 KB/s under TCG, a third of the
 * time of an image) carries only the short frames. Protocol (little endian):
 *   guest: "LSQFUZZ READY kcov=K ranges=N\n" once
 *   host:  'I' u32 len (the image is in shared memory at 0)
 *   guest: 'R' u32 alen (the answer is in shared memory at SHM_ANSWER):
 *          'R' i32 mount_errno, u32 entries, u32 errors, u32 nedges,
 *          nedges x (u16 index, u8 count)
 * Every walk is bounded (entries, bytes a file, depth); a kernel that hangs is the
 * host's to notice (no answer in time).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/kcov.h>
#include <linux/loop.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>

#define MAP_SIZE (1u << 16)
#define COVER_WORDS (4u << 20)
#define MAX_ENTRIES 4096
#define MAX_DEPTH 24
#define MAX_FILE_READ (256u << 10)
#define MAX_IMAGE (8u << 20)
#define SHM_ANSWER MAX_IMAGE
#define SHM_SIZE (16u << 20)
#define IMG_PATH "/tmp/fuzz.img"
#define MNT "/mnt"
#define MNT_INNER "/mnt-inner"
#define INNER_DEPTH 2

struct range {
	uint64_t start, end;
};

static struct range *ranges;
static size_t nranges;
static uint64_t *cover;
static int kcov_fd = -1;
static uint8_t edges[MAP_SIZE];
static unsigned int n_entries, n_errors;
static sigjmp_buf bus_jmp;

static void die(const char *what)
{
	fprintf(stderr, "lsqfuzz-agent: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int has_prefix(const char *name, char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(name, *prefixes, strlen(*prefixes)))
			return 1;
	return 0;
}

/*
 * The address ranges of the kernel's text symbols whose name starts with a prefix:
 * from each such symbol to the next text symbol (/proc/kallsyms, kptr_restrict 0).
 */
static void load_ranges(char *const *prefixes)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	struct range *all = NULL;
	size_t n = 0, cap = 0, i;
	unsigned long long addr;
	char type, name[256];

	if (!f)
		die("/proc/kallsyms");
	while (fscanf(f, "%llx %c %255s%*[^\n]", &addr, &type, name) == 3) {
		if (type != 't' && type != 'T')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			all = realloc(all, cap * sizeof(*all));
			if (!all)
				die("realloc");
		}
		all[n].start = addr;
		all[n].end = has_prefix(name, prefixes); /* a flag until the sort */
		n++;
	}
	fclose(f);
	qsort(all, n, sizeof(*all), cmp_range);
	ranges = calloc(n ? n : 1, sizeof(*ranges));
	if (!ranges)
		die("calloc");
	for (i = 0; i + 1 < n; i++) {
		if (!all[i].end || !all[i].start)
			continue;
		ranges[nranges].start = all[i].start;
		ranges[nranges].end = all[i + 1].start;
		nranges++;
	}
	free(all);
}

static int in_ranges(uint64_t pc)
{
	size_t lo = 0, hi = nranges;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pc < ranges[mid].start)
			hi = mid;
		else if (pc >= ranges[mid].end)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

static void kcov_open(void)
{
	kcov_fd = open("/sys/kernel/debug/kcov", O_RDWR);
	if (kcov_fd < 0)
		return;
	if (ioctl(kcov_fd, KCOV_INIT_TRACE, (unsigned long)COVER_WORDS))
		die("KCOV_INIT_TRACE");
	cover = mmap(NULL, COVER_WORDS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		     MAP_SHARED, kcov_fd, 0);
	if (cover == MAP_FAILED)
		die("mmap kcov");
	if (ioctl(kcov_fd, KCOV_ENABLE, KCOV_TRACE_PC))
		die("KCOV_ENABLE");
}

/* AFL's edge coverage over the traced program counters in our ranges */
static unsigned int collect_edges(void)
{
	uint64_t n, i;
	uint32_t prev = 0, cur;
	unsigned int distinct = 0;

	memset(edges, 0, sizeof(edges));
	if (!cover)
		return 0;
	n = __atomic_load_n(&cover[0], __ATOMIC_RELAXED);
	if (n > COVER_WORDS - 1)
		n = COVER_WORDS - 1;
	for (i = 0; i < n; i++) {
		uint64_t pc = cover[i + 1];
		uint32_t h;

		if (!in_ranges(pc))
			continue;
		h = (uint32_t)(pc ^ (pc >> 32)) * 0x9e3779b1u;
		cur = (h >> 16) & (MAP_SIZE - 1);
		if (edges[cur ^ prev] < 255)
			edges[cur ^ prev]++;
		prev = cur >> 1;
	}
	for (i = 0; i < MAP_SIZE; i++)
		distinct += edges[i] != 0;
	return distinct;
}

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static void note_err(int rc)
{
	if (rc < 0)
		n_errors++;
}

static void walk_file(const char *path, const struct stat *st)
{
	static char buf[65536];
	size_t done = 0;
	off_t size = st->st_size, off;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		n_errors++;
		return;
	}
	while (done < MAX_FILE_READ) {
		r = read(fd, buf, done ? sizeof(buf) : 4096);
		if (r <= 0) {
			note_err(r);
			break;
		}
		done += r;
	}
	/* the last byte, the middle, a block boundary, past the end */
	if (size > 0) {
		note_err(pread(fd, buf, 1, size - 1));
		note_err(pread(fd, buf, 4096, size / 2));
		note_err(pread(fd, buf, 100, size > 131072 ? 131072 - 50 : 0));
	}
	note_err(pread(fd, buf, 16, size + 4096));
	off = lseek(fd, 0, SEEK_DATA);
	if (off >= 0)
		note_err(lseek(fd, off, SEEK_HOLE));
	if (size > 0) {
		size_t len = size < 65536 ? (size_t)size : 65536;
		volatile const char *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		size_t i;

		if (p != MAP_FAILED) {
			/* a page the driver cannot read is a SIGBUS: fine, counted */
			if (!sigsetjmp(bus_jmp, 1)) {
				for (i = 0; i < len; i += 4096)
					(void)p[i];
			} else {
				n_errors++;
			}
			munmap((void *)p, len);
		}
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
	close(fd);
}

static void walk_xattrs(const char *path)
{
	static char names[4096], value[4096];
	ssize_t len = llistxattr(path, names, sizeof(names));
	ssize_t i;

	if (len < 0) {
		note_err(len);
		return;
	}
	for (i = 0; i < len; i += strlen(names + i) + 1) {
		note_err(lgetxattr(path, names + i, value, sizeof(value)));
		note_err(lgetxattr(path, names + i, NULL, 0));
	}
	note_err(lgetxattr(path, "user.nonexistent", value, sizeof(value)));
}

static void walk_handle(const char *path, int mount_fd)
{
	struct {
		struct file_handle fh;
		unsigned char data[128];
	} h;
	int mnt_id, fd;

	h.fh.handle_bytes = sizeof(h.data);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt_id, 0)) {
		n_errors++;
		return;
	}
	fd = open_by_handle_at(mount_fd, &h.fh, O_RDONLY | O_PATH);
	if (fd < 0)
		n_errors++;
	else
		close(fd);
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static void walk(const char *path, int depth, int mount_fd);

static void walk_dir(const char *path, int depth, int mount_fd)
{
	/* room for one entry of the longest name (19 + 255 bytes) */
	char buf[280], child[4096], *names = NULL;
	size_t used = 0, cap = 0, i;
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	long n;

	if (fd < 0) {
		n_errors++;
		return;
	}
	/* a small buffer: one or two entries a call, so the driver resumes often */
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			size_t len = strlen(d->d_name) + 1;

			off += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			if (++n_entries > MAX_ENTRIES)
				goto out;
			if (used + len > cap) {
				cap = 2 * cap + len + 4096;
				names = realloc(names, cap);
				if (!names)
					die("realloc");
			}
			memcpy(names + used, d->d_name, len);
			used += len;
		}
	}
	note_err(n);
	/* seek back and read again from an offset the driver handed out */
	note_err(lseek(fd, 0, SEEK_SET));
	note_err(syscall(SYS_getdents64, fd, buf, sizeof(buf)));
	snprintf(child, sizeof(child), "%s/lsqfuzz-no-such-name", path);
	note_err(access(child, F_OK));
out:
	close(fd);
	for (i = 0; i < used; i += strlen(names + i) + 1) {
		snprintf(child, sizeof(child), "%s/%s", path, names + i);
		walk(child, depth + 1, mount_fd);
	}
	free(names);
}

static void walk(const char *path, int depth, int mount_fd)
{
	struct stat st;
	char target[4096];

	if (depth > MAX_DEPTH || n_entries > MAX_ENTRIES)
		return;
	if (lstat(path, &st)) {
		n_errors++;
		return;
	}
	walk_xattrs(path);
	walk_handle(path, mount_fd);
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		walk_dir(path, depth, mount_fd);
		break;
	case S_IFLNK:
		note_err(readlink(path, target, sizeof(target)));
		break;
	case S_IFREG:
		walk_file(path, &st);
		break;
	default:
		break;
	}
}

/*
 * @path on loop device @dev: the device's open fd, or -1. The device is opened
 * for each image and closed after LOOP_CLR_FD: since 6.x (6.12 here) that ioctl
 * only marks a device that is still open for clearing at its last close, and a
 * LOOP_CONFIGURE on a device held open all along gets EBUSY.
 */
static int loop_attach(const char *dev, const char *path)
{
	struct loop_config cfg = { 0 };
	int fd = open(path, O_RDONLY);
	int loop_fd, rc;

	if (fd < 0)
		return -1;
	loop_fd = open(dev, O_RDWR);
	if (loop_fd < 0) {
		close(fd);
		return -1;
	}
	cfg.fd = fd;
	cfg.info.lo_flags = LO_FLAGS_READ_ONLY;
	rc = ioctl(loop_fd, LOOP_CONFIGURE, &cfg);
	close(fd);
	if (rc) {
		close(loop_fd);
		return -1;
	}
	return loop_fd;
}

/* the loop device of loop_attach() detached and closed */
static void loop_detach(int loop_fd, const char *what)
{
	ioctl(loop_fd, BLKFLSBUF, 0);
	if (ioctl(loop_fd, LOOP_CLR_FD, 0))
		die(what);
	close(loop_fd);
}

/*
 * The first regular file at most INNER_DEPTH levels below @dir that starts
 * with squashfs's magic, into @out; 0 if there is one
 */
static int find_inner(const char *dir, int depth, char *out, size_t outlen)
{
	char child[4096], magic[4];
	struct dirent *d;
	struct stat st;
	int rc = -1, fd;
	DIR *dp = opendir(dir);

	if (!dp)
		return -1;
	while (rc && (d = readdir(dp))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		snprintf(child, sizeof(child), "%s/%s", dir, d->d_name);
		if (lstat(child, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth < INNER_DEPTH) {
			rc = find_inner(child, depth + 1, out, outlen);
		} else if (S_ISREG(st.st_mode) && st.st_size >= 96) {
			fd = open(child, O_RDONLY);
			if (fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, "hsqs", 4)) {
				snprintf(out, outlen, "%s", child);
				rc = 0;
			}
			if (fd >= 0)
				close(fd);
		}
	}
	closedir(dp);
	return rc;
}

/* the image inside the image, if there is one: loop-mounted from MNT and walked */
static void run_inner(void)
{
	char path[4096];
	int mount_fd, inner_fd;

	if (find_inner(MNT, 0, path, sizeof(path)))
		return;
	inner_fd = loop_attach("/dev/loop1", path);
	if (inner_fd < 0)
		return;
	if (!mount("/dev/loop1", MNT_INNER, "squashfs", MS_RDONLY, NULL)) {
		mount_fd = open(MNT_INNER, O_RDONLY | O_DIRECTORY);
		walk(MNT_INNER, 0, mount_fd);
		if (mount_fd >= 0)
			close(mount_fd);
		if (umount2(MNT_INNER, 0) && umount2(MNT_INNER, MNT_DETACH))
			die("umount " MNT_INNER);
	}
	loop_detach(inner_fd, "LOOP_CLR_FD loop1");
}

/* one image: returns the mount's errno (0: mounted and walked) */
static int run_one(void)
{
	struct statfs sf;
	int rc = 0, mount_fd, loop_fd;

	n_entries = 0;
	n_errors = 0;
	loop_fd = loop_attach("/dev/loop0", IMG_PATH);
	if (loop_fd < 0)
		die("LOOP_CONFIGURE");
	if (cover)
		__atomic_store_n(&cover[0], 0, __ATOMIC_RELAXED);
	if (mount("/dev/loop0", MNT, "squashfs", MS_RDONLY, NULL)) {
		rc = errno;
		goto detach;
	}
	mount_fd = open(MNT, O_RDONLY | O_DIRECTORY);
	note_err(statfs(MNT, &sf));
	walk(MNT, 0, mount_fd);
	if (mount_fd >= 0)
		close(mount_fd);
	run_inner();
	if (umount2(MNT, 0)) {
		fprintf(stderr, "lsqfuzz-agent: umount: %s\n", strerror(errno));
		if (umount2(MNT, MNT_DETACH))
			die("umount");
	}
detach:
	/* (the trace goes on past here: only the ranges' edges count, and the next
	 * image starts with a reset) */
	loop_detach(loop_fd, "LOOP_CLR_FD");
	return rc;
}

static void read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			errno = r ? errno : EPIPE;
			die("read from host");
		}
		p += r;
		len -= r;
	}
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t r = write(fd, p, len);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			die("write to host");
		}
		p += r;
		len -= r;
	}
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static void answer(int port, unsigned char *shm, int mount_errno, unsigned int distinct)
{
	unsigned char *out = shm + SHM_ANSWER, frame[5];
	size_t len = 17;
	uint32_t i;

	out[0] = 'R';
	put32(out + 1, (uint32_t)mount_errno);
	put32(out + 5, n_entries);
	put32(out + 9, n_errors);
	put32(out + 13, distinct);
	for (i = 0; i < MAP_SIZE; i++) {
		if (!edges[i])
			continue;
		out[len++] = i & 0xff;
		out[len++] = i >> 8;
		out[len++] = edges[i];
	}
	frame[0] = 'R';
	put32(frame + 1, len);
	write_all(port, frame, sizeof(frame));
}

/* does /sys/bus/pci/devices/@dev/@attr start with @want? */
static int pci_attr_is(const char *dev, const char *attr, const char *want)
{
	char path[300], val[16] = "";
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dev, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (read(fd, val, sizeof(val) - 1) < 0)
		val[0] = 0;
	close(fd);
	return !strncmp(val, want, strlen(want));
}

/*
 * The ivshmem device's BAR 2, mapped through sysfs (/sys/bus/pci/devices/D/resource2,
 * after D/enable): no driver needed.
 */
static unsigned char *map_shm(void)
{
	DIR *dir = opendir("/sys/bus/pci/devices");
	struct dirent *d;
	char path[300];
	void *p;
	int fd;

	if (!dir)
		die("/sys/bus/pci/devices");
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || !pci_attr_is(d->d_name, "vendor", "0x1af4") ||
		    !pci_attr_is(d->d_name, "device", "0x1110"))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/enable", d->d_name);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "1", 1) != 1)
			die(path);
		close(fd);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource2", d->d_name);
		closedir(dir);
		fd = open(path, O_RDWR | O_SYNC);
		if (fd < 0)
			die(path);
		p = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			die("mmap of the shared memory");
		close(fd);
		return p;
	}
	fprintf(stderr, "lsqfuzz-agent: no ivshmem device (1af4:1110)\n");
	exit(1);
}

int main(int argc, char **argv)
{
	char *prefixes[16] = { "sqfs_", NULL };
	unsigned char *shm;
	struct sigaction sa = { .sa_handler = on_sigbus };
	struct termios tio;
	int port, ctl, nr, n = 0;
	char hello[128];

	if (argc < 2) {
		fprintf(stderr, "usage: lsqfuzz-agent PORT [PREFIX,...]\n");
		return 2;
	}
	if (argc > 2) {
		char *tok = strtok(argv[2], ",");

		for (; tok && n < 15; tok = strtok(NULL, ","))
			prefixes[n++] = tok;
		prefixes[n] = NULL;
	}
	sigaction(SIGBUS, &sa, NULL);
	port = open(argv[1], O_RDWR | O_NOCTTY);
	if (port < 0)
		die(argv[1]);
	if (!tcgetattr(port, &tio)) {
		cfmakeraw(&tio);
		tcsetattr(port, TCSANOW, &tio);
	}
	ctl = open("/dev/loop-control", O_RDWR);
	if (ctl < 0)
		die("/dev/loop-control");
	nr = ioctl(ctl, LOOP_CTL_GET_FREE);
	if (nr != 0) {
		fprintf(stderr, "lsqfuzz-agent: loop%d is the free one, want loop0\n", nr);
		return 1;
	}
	if (ioctl(ctl, LOOP_CTL_ADD, 1) < 0 && errno != EEXIST)
		die("LOOP_CTL_ADD 1");
	mkdir(MNT, 0755);
	mkdir(MNT_INNER, 0755);
	shm = map_shm();
	load_ranges(prefixes);
	kcov_open();
	snprintf(hello, sizeof(hello), "LSQFUZZ READY kcov=%d ranges=%zu\n", cover != NULL,
		 nranges);
	write_all(port, hello, strlen(hello));
	for (;;) {
		unsigned char hdr[5];
		uint32_t len;
		int fd, rc;

		read_all(port, hdr, sizeof(hdr));
		if (hdr[0] != 'I') {
			fprintf(stderr, "lsqfuzz-agent: bad frame 0x%02x\n", hdr[0]);
			return 1;
		}
		len = hdr[1] | hdr[2] << 8 | hdr[3] << 16 | (uint32_t)hdr[4] << 24;
		if (len > MAX_IMAGE) {
			fprintf(stderr, "lsqfuzz-agent: image of %u bytes\n", len);
			return 1;
		}
		fd = open(IMG_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			die(IMG_PATH);
		write_all(fd, shm, len);
		close(fd);
		rc = run_one();
		answer(port, shm, rc, collect_edges());
	}
}
