// SPDX-License-Identifier: GPL-2.0
/*
 * boot-tests/fuzz/harness.c: the target afl-fuzz runs on the host for `make fuzz`.
 *
 * usage: lsqfuzz-harness IMAGE   (environment: LSQFUZZ_SOCK, vm.py serve's socket)
 *
 * Sends IMAGE to vm.py, which has the guest mount and walk it; the guest's KCOV
 * edges in our driver go into AFL's coverage map (__AFL_SHM_ID). A kernel problem
 * (vm.py's 'C') or a guest that stopped answering ('H') becomes an abort(), which
 * afl-fuzz files as a crash; vm.py keeps the console and a reproducer of it.
 *
 * The harness speaks AFL's fork server protocol itself (fds 198/199: hello, then per
 * run: go, child pid, wait status), in its old form, which afl-fuzz 4.x still
 * accepts: it is not built with afl-cc, the coverage being the guest kernel's (the
 * "__AFL_SHM_ID" string below is what afl-fuzz looks for in a target it accepts).
 * Run without afl-fuzz, it sends the image once and prints the answer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKSRV_FD 198
#define MAP_SIZE (1u << 16)
#define MAX_IMAGE (8u << 20)

static unsigned char *afl_map;

static int connect_vm(void)
{
	const char *path = getenv("LSQFUZZ_SOCK");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, tries;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "lsqfuzz-harness: LSQFUZZ_SOCK is not set (or too long)\n");
		exit(2);
	}
	strcpy(sa.sun_path, path);
	/* vm.py may be booting its guest again after a crash: wait for it */
	for (tries = 0; tries < 1200; tries++) {
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			break;
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		close(fd);
		sleep(1);
	}
	fprintf(stderr, "lsqfuzz-harness: cannot reach %s: %s\n", path, strerror(errno));
	exit(2);
}

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t r = write(fd, p, len);

		if (r <= 0) {
			perror("lsqfuzz-harness: send");
			exit(2);
		}
		p += r;
		len -= r;
	}
}

static size_t recv_some(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r <= 0)
			break;
		got += r;
	}
	return got;
}

static int run_once(const char *path, int verbose)
{
	static unsigned char img[MAX_IMAGE + 5], ans[17 + 3 * MAP_SIZE];
	FILE *f = fopen(path, "rb");
	size_t len, got, i;
	uint32_t nedges;
	int fd;

	if (!f) {
		perror(path);
		return 2;
	}
	len = fread(img + 5, 1, MAX_IMAGE, f);
	fclose(f);
	img[0] = 'I';
	img[1] = len;
	img[2] = len >> 8;
	img[3] = len >> 16;
	img[4] = len >> 24;
	fd = connect_vm();
	send_all(fd, img, len + 5);
	got = recv_some(fd, ans, 17);
	if (got >= 1 && (ans[0] == 'C' || ans[0] == 'H')) {
		if (verbose)
			printf("%s: %s\n", path, ans[0] == 'C' ? "crash" : "hang");
		abort();
	}
	if (got != 17 || ans[0] != 'R') {
		fprintf(stderr, "lsqfuzz-harness: short answer (%zu bytes)\n", got);
		return 2;
	}
	memcpy(&nedges, ans + 13, 4);
	if (nedges > MAP_SIZE || recv_some(fd, ans + 17, 3 * nedges) != 3 * nedges) {
		fprintf(stderr, "lsqfuzz-harness: short edge list\n");
		return 2;
	}
	close(fd);
	if (afl_map)
		for (i = 0; i < nedges; i++) {
			unsigned char *e = ans + 17 + 3 * i;

			afl_map[e[0] | e[1] << 8] = e[2];
		}
	if (verbose) {
		int32_t rc;
		uint32_t entries, errors;

		memcpy(&rc, ans + 1, 4);
		memcpy(&entries, ans + 5, 4);
		memcpy(&errors, ans + 9, 4);
		printf("%s: mount_errno=%d entries=%u errors=%u edges=%u\n", path, rc, entries,
		       errors, nedges);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *shm = getenv("__AFL_SHM_ID");
	uint32_t word = 0;
	int status;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: lsqfuzz-harness IMAGE\n");
		return 2;
	}
	if (shm) {
		afl_map = shmat(atoi(shm), NULL, 0);
		if (afl_map == (void *)-1) {
			perror("lsqfuzz-harness: shmat");
			return 2;
		}
	}
	/* no fork server pipe: one run */
	if (write(FORKSRV_FD + 1, &word, 4) != 4)
		return run_once(argv[1], 1);
	for (;;) {
		if (read(FORKSRV_FD, &word, 4) != 4)
			return 0;
		pid = fork();
		if (pid < 0)
			return 2;
		if (!pid) {
			close(FORKSRV_FD);
			close(FORKSRV_FD + 1);
			_exit(run_once(argv[1], 0));
		}
		if (write(FORKSRV_FD + 1, &pid, 4) != 4 || waitpid(pid, &status, 0) < 0)
			return 2;
		if (write(FORKSRV_FD + 1, &status, 4) != 4)
			return 2;
	}
}
