/*
 * boot-tests/bench/lsqbench.c: guest-side timing helper of `make bench`.
 *
 * Built static on the host (gcc -static) and put into the busybox initramfs.
 * Every command prints one line of key=value pairs on stdout (ns = wall time in
 * nanoseconds, CLOCK_MONOTONIC), errors on stderr; exit status 0 only if every
 * operation succeeded.
 *
 *   lsqbench seq FILE...              read each file whole, 256 KiB read()s
 *   lsqbench rand FILE COUNT SEED [PASSES]
 *                                     COUNT pread()s of 4 KiB at random 4 KiB offsets,
 *                                     the same COUNT offsets PASSES times (default 1)
 *   lsqbench walk DIR LIST            readdir walk (own recursion), writes "T path" lines
 *   lsqbench stat LIST SEED           lstat() of every path of LIST, shuffled by SEED
 *   lsqbench cat LIST SEED            read every regular file of LIST, shuffled by SEED
 *   lsqbench par N FILE...            N forked readers, reader i reads FILE[i % nfiles]
 *   lsqbench mount TYPE DEV DIR       time one read-only mount(2)
 *   lsqbench run CMD [ARG...]         time a command (fork, exec, wait)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BUFSZ (256 * 1024)

static char buf[BUFSZ];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* splitmix64: a small, fixed, seedable generator (same sequence on every run) */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t n)
{
	return n ? rng_next() % n : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: lsqbench seq|rand|walk|stat|cat|par|mount|run ... (see source)\n");
	return 2;
}

/* read a whole file; returns bytes read or -1 */
static long long read_file(const char *path)
{
	long long total = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_NOFOLLOW);

	if (fd < 0) {
		fprintf(stderr, "lsqbench: open %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		total += r;
	if (r < 0) {
		fprintf(stderr, "lsqbench: read %s: %s\n", path, strerror(errno));
		total = -1;
	}
	close(fd);
	return total;
}

static int cmd_seq(int argc, char **argv)
{
	long long bytes = 0, r;
	int i, err = 0;
	uint64_t t0 = now_ns();

	for (i = 0; i < argc; i++) {
		r = read_file(argv[i]);
		if (r < 0)
			err = 1;
		else
			bytes += r;
	}
	printf("bytes=%lld ns=%llu\n", bytes, (unsigned long long)(now_ns() - t0));
	return err;
}

static int cmd_rand(int argc, char **argv)
{
	struct stat st;
	long count, i, done, pass, passes = argc == 4 ? atol(argv[3]) : 1;
	int fd, err = 0;
	uint64_t t0, blocks, seed;

	if ((argc != 3 && argc != 4) || passes < 1)
		return usage();
	count = atol(argv[1]);
	seed = strtoull(argv[2], NULL, 0);
	fd = open(argv[0], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "lsqbench: %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	blocks = (uint64_t)st.st_size / 4096;
	if (blocks == 0) {
		fprintf(stderr, "lsqbench: %s is smaller than 4 KiB\n", argv[0]);
		return 1;
	}
	t0 = now_ns();
	for (pass = 0, done = 0; pass < passes && !err; pass++) {
		rng_state = seed;
		for (i = 0; i < count; i++, done++) {
			off_t off = (off_t)(rng_below(blocks) * 4096);

			if (pread(fd, buf, 4096, off) != 4096) {
				fprintf(stderr, "lsqbench: pread %s at %lld failed\n", argv[0],
					(long long)off);
				err = 1;
				break;
			}
		}
	}
	printf("ops=%ld bytes=%ld ns=%llu\n", done, done * 4096, (unsigned long long)(now_ns() - t0));
	close(fd);
	return err;
}

/* walk: own recursion over readdir; d_type, lstat only when the fs gives DT_UNKNOWN */
static long walk_count;
static int walk_err;

static void walk(FILE *out, char *path, size_t len)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d) {
		fprintf(stderr, "lsqbench: opendir %s: %s\n", path, strerror(errno));
		walk_err = 1;
		return;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int type = de->d_type;
		char t;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (len + 1 + n >= 4096) {
			walk_err = 1;
			continue;
		}
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		if (type == DT_UNKNOWN) {
			struct stat st;

			if (lstat(path, &st) < 0) {
				walk_err = 1;
				continue;
			}
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
		}
		t = type == DT_DIR ? 'd' : type == DT_REG ? 'f' : 'o';
		/* names with a newline cannot go into the list: counted, not listed */
		if (!strchr(path, '\n'))
			fprintf(out, "%c %s\n", t, path);
		walk_count++;
		if (type == DT_DIR)
			walk(out, path, len + 1 + n);
		path[len] = 0;
	}
	closedir(d);
}

static int cmd_walk(int argc, char **argv)
{
	static char path[4096];
	FILE *out;
	uint64_t t0;

	if (argc != 2)
		return usage();
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	snprintf(path, sizeof(path), "%s", argv[0]);
	t0 = now_ns();
	walk(out, path, strlen(path));
	printf("ops=%ld ns=%llu\n", walk_count, (unsigned long long)(now_ns() - t0));
	return fclose(out) || walk_err;
}

/* list loading and shuffling (Fisher-Yates with the fixed generator) */
struct entry {
	char type;
	char *path;
};

static struct entry *load_list(const char *file, const char *seed, long *n)
{
	FILE *f = fopen(file, "r");
	struct entry *v = NULL;
	long cap = 0, i;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;

	*n = 0;
	if (!f) {
		perror(file);
		return NULL;
	}
	while ((len = getline(&line, &lcap, f)) > 2) {
		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		if (*n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				abort();
		}
		v[*n].type = line[0];
		v[*n].path = strdup(line + 2);
		(*n)++;
	}
	free(line);
	fclose(f);
	rng_state = strtoull(seed, NULL, 0);
	for (i = *n - 1; i > 0; i--) {
		long j = (long)rng_below((uint64_t)i + 1);
		struct entry t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
	return v;
}

static int cmd_stat(int argc, char **argv)
{
	struct entry *v;
	struct stat st;
	long n, i, ok = 0;
	uint64_t t0;

	if (argc != 2)
		return usage();
	v = load_list(argv[0], argv[1], &n);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (lstat(v[i].path, &st) == 0)
			ok++;
		else
			fprintf(stderr, "lsqbench: lstat %s: %s\n", v[i].path, strerror(errno));
	}
	printf("ops=%ld ns=%llu\n", ok, (unsigned long long)(now_ns() - t0));
	return ok != n || n == 0;
}

static int cmd_cat(int argc, char **argv)
{
	struct entry *v;
	long n, i, files = 0;
	long long bytes = 0, r;
	int err = 0;
	uint64_t t0;

	if (argc != 2)
		return usage();
	v = load_list(argv[0], argv[1], &n);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (v[i].type != 'f')
			continue;
		r = read_file(v[i].path);
		if (r < 0) {
			err = 1;
			continue;
		}
		bytes += r;
		files++;
	}
	printf("ops=%ld bytes=%lld ns=%llu\n", files, bytes, (unsigned long long)(now_ns() - t0));
	return err || files == 0;
}

static int cmd_par(int argc, char **argv)
{
	int n, i, go[2], res[2], err = 0, status;
	long long bytes = 0, r;
	uint64_t t0;
	pid_t pid;

	if (argc < 2)
		return usage();
	n = atoi(argv[0]);
	argc--;
	argv++;
	if (n < 1 || pipe(go) < 0 || pipe(res) < 0)
		return usage();
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			char c;

			close(go[1]);
			/* wait until the parent releases every reader at once */
			if (read(go[0], &c, 1) < 0)
				_exit(1);
			r = read_file(argv[i % argc]);
			if (write(res[1], &r, sizeof(r)) != sizeof(r))
				_exit(1);
			_exit(r < 0);
		}
	}
	close(go[0]);
	close(res[1]);
	usleep(100000); /* let every child reach its read() */
	t0 = now_ns();
	close(go[1]); /* EOF releases them all */
	for (i = 0; i < n; i++) {
		if (read(res[0], &r, sizeof(r)) != sizeof(r) || r < 0)
			err = 1;
		else
			bytes += r;
	}
	printf("readers=%d bytes=%lld ns=%llu\n", n, bytes, (unsigned long long)(now_ns() - t0));
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			err = 1;
	return err;
}

static int cmd_mount(int argc, char **argv)
{
	uint64_t t0, t1;

	if (argc != 3)
		return usage();
	t0 = now_ns();
	if (mount(argv[1], argv[2], argv[0], MS_RDONLY, NULL) < 0) {
		fprintf(stderr, "lsqbench: mount %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	t1 = now_ns();
	printf("ns=%llu\n", (unsigned long long)(t1 - t0));
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	int status;
	uint64_t t0;
	pid_t pid;

	if (argc < 1)
		return usage();
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	printf("rc=%d ns=%llu\n", status, (unsigned long long)(now_ns() - t0));
	return status != 0;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {
	{ "seq", cmd_seq },   { "rand", cmd_rand },   { "walk", cmd_walk },
	{ "stat", cmd_stat }, { "cat", cmd_cat },     { "par", cmd_par },
	{ "mount", cmd_mount }, { "run", cmd_run },
};

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 2, argv + 2);
	return usage();
}
