// SPDX-License-Identifier: GPL-2.0
/*
 * livesquash-loopswap: copy a read-only loop device's backing file into RAM
 * while the system runs on it, switch the loop device to the copy
 * (LOOP_CHANGE_FD: same size, read-only loop) and release the medium.
 *
 * usage: livesquash-loopswap LOOPDEV SRC DST [MOUNTPOINT|/dev/loopN...]
 *   SRC is the loop's backing file, DST a new file in a tmpfs. Once the loop
 *   reads DST, each MOUNTPOINT (the medium, the disk an ISO file is on) is
 *   lazily unmounted (MNT_DETACH), at its path or, after switch_root, under
 *   /proc/1/root, in the order given; a /dev/loopN (an ISO file's loop) is
 *   detached (by the kernel once its last user is gone); a /dev/srN gets its
 *   tray unlocked (udev's cdrom_id locks it; without udev running the eject
 *   button would do nothing). Reports to the kernel log (/dev/kmsg). Exit
 *   status 0 when the loop runs from DST.
 * usage: livesquash-loopswap --release MOUNTPOINT|/dev/loopN|/dev/srN...
 *   only the release, for a copy to RAM made before the root was mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/cdrom.h>
#include <linux/loop.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int fd, n;

	n = snprintf(buf, sizeof(buf), "<5>livesquash: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, n) < 0)
		fprintf(stderr, "%s\n", buf + 3);
	if (fd >= 0)
		close(fd);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* copy src to dst (created); 0 or an errno */
static int copy(const char *src, const char *dst, off_t *size)
{
	char *buf = malloc(CHUNK);
	int in, out, err = 0;
	ssize_t n, w;

	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (!buf || in < 0 || out < 0) {
		err = buf ? errno : ENOMEM;
		goto out;
	}
	*size = 0;
	while ((n = read(in, buf, CHUNK)) > 0) {
		for (w = 0; w < n;) {
			ssize_t k = write(out, buf + w, n - w);

			if (k < 0) {
				err = errno;
				goto out;
			}
			w += k;
		}
		*size += n;
	}
	if (n < 0)
		err = errno;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) && !err)
		err = errno;
	free(buf);
	return err;
}

static void release(const char *mnt)
{
	char alt[4096];
	int fd;

	if (!strncmp(mnt, "/dev/loop", 9)) {
		fd = open(mnt, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, LOOP_CLR_FD, 0))
			say("cannot detach %s: %s\n", mnt, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!strncmp(mnt, "/dev/sr", 7)) {
		fd = open(mnt, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || ioctl(fd, CDROM_LOCKDOOR, 0))
			say("cannot unlock the tray of %s: %s\n", mnt, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}

	if (!umount2(mnt, MNT_DETACH))
		return;
	snprintf(alt, sizeof(alt), "/proc/1/root%s", mnt);
	if (umount2(alt, MNT_DETACH))
		say("cannot unmount %s: %s\n", mnt, strerror(errno));
}

int main(int argc, char **argv)
{
	struct stat a, b;
	double t0 = now();
	off_t size = 0;
	int loop, fd, err, i;

	if (argc >= 2 && !strcmp(argv[1], "--release")) {
		for (i = 2; i < argc; i++)
			release(argv[i]);
		return 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: livesquash-loopswap LOOPDEV SRC DST [MOUNTPOINT|/dev/loopN|/dev/srN...]\n");
		return 2;
	}
	err = copy(argv[2], argv[3], &size);
	if (err) {
		say("copy of %s to RAM failed: %s; the root stays on the medium\n",
		    argv[2], strerror(err));
		unlink(argv[3]);
		return 1;
	}
	fd = open(argv[3], O_RDONLY | O_CLOEXEC);
	loop = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || loop < 0 || fstat(fd, &a) || stat(argv[2], &b) ||
	    a.st_size != b.st_size || ioctl(loop, LOOP_CHANGE_FD, fd)) {
		say("cannot switch %s to the RAM copy of %s: %s; the root stays on the medium\n",
		    argv[1], argv[2], strerror(errno));
		unlink(argv[3]);
		return 1;
	}
	close(fd);
	close(loop);
	for (i = 4; i < argc; i++)
		release(argv[i]);
	say("background copy to RAM done: %s (%.1f MiB) in %.1f s; %s reads the copy, the medium is released\n",
	    argv[2], size / 1048576.0, now() - t0, argv[1]);
	return 0;
}
