// SPDX-License-Identifier: GPL-2.0
/*
 * livesquash-loopswap: copy a read-only loop device's backing file into RAM
 * while the system runs on it, switch the loop device to the copy
 * (LOOP_CHANGE_FD: same size, read-only loop) and release the medium.
 *
 * usage: livesquash-loopswap [--sha256 HEX] LOOPDEV SRC DST [MOUNTPOINT|/dev/loopN...]
 *   SRC is the loop's backing file (or block device: the NBD device of a
 *   network image), DST a new file in a tmpfs. With --sha256 the copy must
 *   have that SHA-256 (the kernel's, through AF_ALG), else the loop is left
 *   as it is. Once the loop reads DST, each MOUNTPOINT (the medium, the disk an
 *   ISO file is on) is lazily unmounted (MNT_DETACH), at its path or, after
 *   switch_root, under PID 1's root, in the order given; a /dev/loopN (an ISO
 *   file's loop) is detached (by the kernel once its last user is gone); a
 *   /dev/srN gets its tray unlocked (udev's cdrom_id locks it; without udev
 *   running the eject button would do nothing); a /dev/nbdN is disconnected;
 *   dm:NAME (the verity device over it) is removed; pid:N (the NBD server) is
 *   sent SIGTERM; rm:PATH is deleted (the hash tree). Reports to the kernel log
 *   (/dev/kmsg). Exit status 0 when the loop runs from DST.
 *   The copy may outlast switch_root, after which this process's root is the
 *   emptied initramfs: every file and device is opened at the start, and paths
 *   (mount points, DST) are reached through /proc/1/root of the /proc opened
 *   then.
 * usage: livesquash-loopswap --release MOUNTPOINT|/dev/loopN|/dev/srN...
 *   only the release, for a copy to RAM made before the root was mounted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/cdrom.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <linux/if_alg.h>
#include <linux/loop.h>
#include <linux/nbd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static int kmsg_fd = -1;	/* /dev/kmsg, opened at the start */
static int proc_fd = -1;	/* /proc, opened at the start */
static int dm_fd = -1;		/* /dev/mapper/control, when there is a dm: item */

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "<5>livesquash: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	if (kmsg_fd < 0 || write(kmsg_fd, buf, n) < 0)
		fprintf(stderr, "%s\n", buf + 3);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * path as this process can reach it: itself while it exists here (before
 * switch_root), else the same path under PID 1's root, relative to /proc
 * (the working directory is then /proc)
 */
static const char *reach(const char *path, char *buf, size_t len)
{
	struct stat st;

	if (!lstat(path, &st) || proc_fd < 0 || fchdir(proc_fd))
		return path;
	snprintf(buf, len, "1/root%s", path);
	return buf;
}

/* the kernel's sha256 through AF_ALG: an operation socket, or -1 */
static int sha256_open(void)
{
	struct sockaddr_alg sa = {
		.salg_family = AF_ALG,
		.salg_type = "hash",
		.salg_name = "sha256",
	};
	int tfm, op;

	tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (tfm < 0)
		return -1;
	if (bind(tfm, (struct sockaddr *)&sa, sizeof(sa))) {
		close(tfm);
		return -1;
	}
	op = accept4(tfm, NULL, NULL, SOCK_CLOEXEC);
	close(tfm);
	return op;
}

/* the digest of what went into op, as 64 hex digits in hex[65]; 0 or an errno */
static int sha256_hex(int op, char *hex)
{
	unsigned char md[32];
	int i;

	if (send(op, NULL, 0, 0) < 0 || read(op, md, sizeof(md)) != sizeof(md))
		return errno ? errno : EIO;
	for (i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	return 0;
}

/* the size of a file or block device; -1 when unknown */
static off_t size_of(int fd)
{
	struct stat st;
	unsigned long long b;

	if (fstat(fd, &st))
		return -1;
	if (S_ISBLK(st.st_mode))
		return ioctl(fd, BLKGETSIZE64, &b) ? -1 : (off_t)b;
	return st.st_size;
}

/* copy in to out, also into the hash operation op unless -1; 0 or an errno */
static int copy(int in, int out, off_t *size, int op)
{
	char *buf = malloc(CHUNK);
	ssize_t n, w;

	if (!buf)
		return ENOMEM;
	*size = 0;
	while ((n = read(in, buf, CHUNK)) > 0) {
		for (w = 0; w < n;) {
			ssize_t k = write(out, buf + w, n - w);

			if (k < 0)
				goto fail;
			w += k;
		}
		if (op >= 0 && send(op, buf, n, MSG_MORE) != n)
			goto fail;
		*size += n;
	}
	if (n < 0)
		goto fail;
	free(buf);
	return 0;
fail:
	free(buf);
	return errno ? errno : EIO;
}

/* what is let go once the loop reads the copy; devices opened at the start */
struct item {
	const char *arg;
	int fd;
};

static void item_open(struct item *it, const char *arg)
{
	it->arg = arg;
	it->fd = -1;
	if (!strncmp(arg, "dm:", 3)) {
		if (dm_fd < 0)
			dm_fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
		if (dm_fd < 0)
			say("cannot open /dev/mapper/control: %s\n", strerror(errno));
		return;
	}
	if (!strncmp(arg, "/dev/sr", 7))
		it->fd = open(arg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	else if (!strncmp(arg, "/dev/", 5))
		it->fd = open(arg, O_RDONLY | O_CLOEXEC);
	else
		return;
	if (it->fd < 0)
		say("cannot open %s: %s\n", arg, strerror(errno));
}

/* remove the device-mapper device name; 0 or -1 */
static int dm_remove(const char *name)
{
	struct dm_ioctl io = {
		.version = { DM_VERSION_MAJOR, 0, 0 },
		.data_size = sizeof(io),
		.data_start = sizeof(io),
	};

	snprintf(io.name, sizeof(io.name), "%s", name);
	return ioctl(dm_fd, DM_DEV_REMOVE, &io);
}

static void release(struct item *it)
{
	const char *a = it->arg;
	char alt[4096], node[160];

	if (!strncmp(a, "dm:", 3)) {
		if (dm_fd < 0)
			return;
		if (dm_remove(a + 3)) {
			say("cannot remove %s: %s\n", a, strerror(errno));
			return;
		}
		/* the node libdevmapper made (there was no udev rule to) */
		snprintf(node, sizeof(node), "/dev/mapper/%s", a + 3);
		unlink(reach(node, alt, sizeof(alt)));
		return;
	}
	if (!strncmp(a, "rm:", 3)) {
		if (unlink(reach(a + 3, alt, sizeof(alt))))
			say("cannot remove %s: %s\n", a + 3, strerror(errno));
		return;
	}
	if (!strncmp(a, "pid:", 4)) {
		pid_t pid = atoi(a + 4);

		if (pid <= 1)
			say("not stopping process '%s'\n", a + 4);
		else if (kill(pid, SIGTERM))
			say("cannot stop process %s: %s\n", a + 4, strerror(errno));
		return;
	}
	if (strncmp(a, "/dev/", 5)) {
		if (umount2(reach(a, alt, sizeof(alt)), MNT_DETACH))
			say("cannot unmount %s: %s\n", a, strerror(errno));
		return;
	}
	if (it->fd < 0)
		return;
	if (!strncmp(a, "/dev/loop", 9) && ioctl(it->fd, LOOP_CLR_FD, 0))
		say("cannot detach %s: %s\n", a, strerror(errno));
	else if (!strncmp(a, "/dev/nbd", 8) &&
		 (ioctl(it->fd, NBD_DISCONNECT, 0) || ioctl(it->fd, NBD_CLEAR_SOCK, 0)))
		say("cannot disconnect %s: %s\n", a, strerror(errno));
	else if (!strncmp(a, "/dev/sr", 7) && ioctl(it->fd, CDROM_LOCKDOOR, 0))
		say("cannot unlock the tray of %s: %s\n", a, strerror(errno));
	close(it->fd);
	it->fd = -1;
}

/* the copy's sha256 is want; else say so; 0 or -1 */
static int check_sha256(int op, const char *src, const char *want)
{
	char got[65];
	int err = sha256_hex(op, got);

	if (err) {
		say("cannot compute the sha256 of the copy of %s: %s; the root stays on %s\n",
		    src, strerror(err), src);
		return -1;
	}
	if (strcasecmp(got, want)) {
		say("the copy of %s is corrupt: its sha256 is %s, not %s; the root stays on %s\n",
		    src, got, want, src);
		return -1;
	}
	return 0;
}

/* the loop reads out (a copy of in) from now on; 0 or -1 */
static int switch_loop(int loop, int in, int out, const char *loopdev, const char *src)
{
	off_t want = size_of(in), have = size_of(out);
	int err = 0;

	if (want < 0 || have < 0)
		err = errno;
	else if (have != want)
		err = EFBIG;
	else if (ioctl(loop, LOOP_CHANGE_FD, out))
		err = errno;
	if (err)
		say("cannot switch %s to the RAM copy of %s: %s; the root stays on %s\n",
		    loopdev, src, strerror(err), src);
	return err ? -1 : 0;
}

/* a failed copy: its RAM freed, the file removed */
static void discard(int out, const char *dst)
{
	char alt[4096];

	if (ftruncate(out, 0) || unlink(reach(dst, alt, sizeof(alt))))
		say("cannot remove %s: %s\n", dst, strerror(errno));
}

static int usage(void)
{
	fprintf(stderr, "usage: livesquash-loopswap [--sha256 HEX] LOOPDEV SRC DST [MOUNTPOINT|/dev/loopN|/dev/srN|/dev/nbdN|dm:NAME|pid:N|rm:PATH...]\n"
		"       livesquash-loopswap --release MOUNTPOINT|/dev/loopN|/dev/srN|/dev/nbdN|dm:NAME|pid:N|rm:PATH...\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *want = NULL;
	struct item *items;
	double t0 = now();
	off_t size = 0;
	int loop, in, out, op = -1, err, first, i;

	kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	first = 4;
	if (argc >= 2 && !strcmp(argv[1], "--release")) {
		first = 2;
	} else if (argc >= 3 && !strcmp(argv[1], "--sha256")) {
		want = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < first || (want && strlen(want) != 64))
		return usage();
	items = calloc(argc, sizeof(*items));
	if (!items)
		return 1;
	for (i = first; i < argc; i++)
		item_open(&items[i], argv[i]);
	if (first == 2) {
		for (i = first; i < argc; i++)
			release(&items[i]);
		return 0;
	}

	loop = open(argv[1], O_RDONLY | O_CLOEXEC);
	in = open(argv[2], O_RDONLY | O_CLOEXEC);
	out = open(argv[3], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (loop < 0 || in < 0 || out < 0) {
		say("cannot open %s: %s; the root stays on %s\n",
		    loop < 0 ? argv[1] : in < 0 ? argv[2] : argv[3], strerror(errno), argv[2]);
		return 1;
	}
	if (want) {
		op = sha256_open();
		if (op < 0) {
			say("cannot use the kernel's sha256 (AF_ALG): %s; the root stays on %s\n",
			    strerror(errno), argv[2]);
			discard(out, argv[3]);
			return 1;
		}
	}
	err = copy(in, out, &size, op);
	if (err) {
		say("copy of %s to RAM failed: %s; the root stays on %s\n",
		    argv[2], strerror(err), argv[2]);
		discard(out, argv[3]);
		return 1;
	}
	if ((want && check_sha256(op, argv[2], want)) ||
	    switch_loop(loop, in, out, argv[1], argv[2])) {
		discard(out, argv[3]);
		return 1;
	}
	close(loop);
	close(in);
	close(out);
	for (i = first; i < argc; i++)
		release(&items[i]);
	say("background copy to RAM done: %s (%.1f MiB%s) in %.1f s; %s reads the copy, the medium is released\n",
	    argv[2], size / 1048576.0, want ? ", sha256 OK" : "", now() - t0, argv[1]);
	return 0;
}
