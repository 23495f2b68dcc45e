/* SPDX-License-Identifier: MIT */
/*
 * llmnet I/O probe (pushed to nodes as llmnet-probe-io, run through the
 * agent's bounded `run`): measures storage I/O on an NVMe-oF namespace
 * with O_DIRECT, so the figure crosses the fabric and not the page cache.
 *
 *   llmnet-probe-io --mount DIR --size BYTES
 *       DIR must be a mount point. A temporary file in it is written,
 *       read back and checked, then removed; a file already there (the
 *       first regular file found) is checksummed before and after and
 *       must be unchanged.
 *   llmnet-probe-io --device /dev/NAME --size BYTES [--nqn NQN [--write]]
 *       Reads BYTES from the start of the device. Only with --write (the
 *       spec's `destructive: true`) is the device written first, and the
 *       data read back and checked. --write needs --nqn: the device must
 *       then be a whole namespace of subsystem NQN, reached through a live
 *       NVMe-oF controller (sysfs), or nothing is opened; a read checks the
 *       same when --nqn is given: sysfs must show the device itself as a
 *       namespace whose controllers (all of them, under multipath) are
 *       NVMe-oF ones connected to NQN. The device is opened first and the
 *       descriptor examined (no stat, then open); a write opens it O_EXCL.
 *
 * Prints "llmnet-io-probe 1", "write_mbps X" (when it wrote), "read_mbps Y",
 * "witness PATH kept|changed|none", "error: ..." lines, then
 * "result pass|fail". MB/s are 10^6 bytes per second. Exit 0 pass, 1 fail.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1u << 20)
#define WITNESS_MAX (64ull << 20)

static int failed;

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void err(const char *fmt, ...)
{
	va_list ap;

	printf("error: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every 8-byte word holds a function of its offset, so a misplaced or
 * stale block is caught, not only a wrong byte. */
static void fill(uint64_t *buf, uint64_t off)
{
	size_t i;

	for (i = 0; i < CHUNK / 8; i++)
		buf[i] = (off + i * 8) ^ 0x9e3779b97f4a7c15ull;
}

static int check(const uint64_t *buf, uint64_t off)
{
	size_t i;

	for (i = 0; i < CHUNK / 8; i++)
		if (buf[i] != ((off + i * 8) ^ 0x9e3779b97f4a7c15ull))
			return -1;
	return 0;
}

/* FNV-1a over the first WITNESS_MAX bytes (buffered: it is a checksum,
 * not a measurement). */
static int checksum(const char *path, uint64_t *out)
{
	unsigned char b[65536];
	uint64_t h = 0xcbf29ce484222325ull, total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return -1;
	while (total < WITNESS_MAX && (n = read(fd, b, sizeof(b))) > 0) {
		for (i = 0; i < n; i++)
			h = (h ^ b[i]) * 0x100000001b3ull;
		total += (uint64_t)n;
	}
	close(fd);
	*out = h;
	return n < 0 ? -1 : 0;
}

static int find_witness(const char *dir, char *out, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lost+found"))
			continue;
		if (snprintf(out, size, "%s/%s", dir, e->d_name) >= (int)size)
			continue;
		if (!lstat(out, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
			closedir(d);
			return 0;
		}
	}
	closedir(d);
	return -1;
}

/* Write (if wr) then read back size bytes of fd with O_DIRECT. */
static void transfer(int fd, uint64_t size, int wr, const char *what)
{
	uint64_t *buf = NULL, off;
	double t0, dt;

	if (posix_memalign((void **)&buf, 4096, CHUNK)) {
		err("cannot allocate an aligned buffer");
		return;
	}
	if (wr) {
		t0 = now();
		for (off = 0; off < size; off += CHUNK) {
			fill(buf, off);
			if (pwrite(fd, buf, CHUNK, (off_t)off) != CHUNK) {
				err("cannot write '%s': %s", what, strerror(errno));
				goto out;
			}
		}
		if (fdatasync(fd) < 0) {
			err("cannot flush '%s': %s", what, strerror(errno));
			goto out;
		}
		dt = now() - t0;
		printf("write_mbps %.1f\n", (double)size / 1e6 / (dt > 0 ? dt : 1e-9));
	}
	t0 = now();
	for (off = 0; off < size; off += CHUNK) {
		if (pread(fd, buf, CHUNK, (off_t)off) != CHUNK) {
			err("cannot read '%s': %s", what, errno ? strerror(errno) : "short read");
			goto out;
		}
		if (wr && check(buf, off) < 0) {
			char at[32];

			snprintf(at, sizeof(at), "%llu", (unsigned long long)off);
			err("data read back from '%s' differs at offset %s", what, at);
			goto out;
		}
	}
	dt = now() - t0;
	printf("read_mbps %.1f\n", (double)size / 1e6 / (dt > 0 ? dt : 1e-9));
out:
	free(buf);
}

/* Is dir (resolved) a mount point in /proc/self/mountinfo? The 5th field
 * is the mount point, with space, tab, newline and backslash as octal
 * escapes. A bind mount has the same device as its parent, so comparing
 * st_dev with ".." would miss it. */
static int is_mount_point(const char *dir)
{
	char real[PATH_MAX], line[8192], mp[PATH_MAX];
	FILE *f;
	int found = 0;

	if (!realpath(dir, real))
		return 0;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = line, *q = mp;
		int field;

		for (field = 0; field < 4 && p; field++) {
			p = strchr(p, ' ');
			if (p)
				p++;
		}
		if (!p)
			continue;
		while (*p && *p != ' ' && q < mp + sizeof(mp) - 1) {
			if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] && p[3]) {
				*q++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
				p += 4;
			} else {
				*q++ = *p++;
			}
		}
		*q = '\0';
		found = !strcmp(mp, real);
	}
	fclose(f);
	return found;
}

static void mount_mode(const char *dir, uint64_t size)
{
	char path[PATH_MAX], witness[PATH_MAX];
	struct stat st;
	uint64_t before = 0, after = 0;
	int have_witness, fd, tmp;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		err("'%s' is not a directory", dir);
		return;
	}
	if (!is_mount_point(dir)) {
		err("'%s' is not a mount point: the namespace is not mounted there", dir);
		return;
	}
	have_witness = find_witness(dir, witness, sizeof(witness)) == 0 &&
		       checksum(witness, &before) == 0;
	snprintf(path, sizeof(path), "%s/.llmnet-io-XXXXXX", dir);
	tmp = mkstemp(path);
	if (tmp < 0) {
		err("cannot create a file in '%s': %s", dir, strerror(errno));
		return;
	}
	close(tmp);
	fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		err("cannot open a file in '%s' with O_DIRECT: %s", dir, strerror(errno));
	} else {
		transfer(fd, size, 1, path);
		close(fd);
	}
	unlink(path);
	if (!have_witness) {
		printf("witness none\n");
	} else if (checksum(witness, &after) < 0 || after != before) {
		printf("witness %s changed\n", witness);
		err("the checksum of '%s' changed during the test", witness);
	} else {
		printf("witness %s kept\n", witness);
	}
}

/* A sysfs attribute, without its newline; "" when unreadable. */
static void read_attr(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "re");

	out[0] = '\0';
	if (!f)
		return;
	if (!fgets(out, (int)size, f))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

static int is_fabric(const char *transport)
{
	static const char *const fabrics[] = { "tcp", "rdma", "fc", "loop", NULL };
	int i;

	for (i = 0; fabrics[i]; i++)
		if (!strcmp(transport, fabrics[i]))
			return 1;
	return 0;
}

/* The controller at sysfs dir ctrl (named name): connected to nqn over a
 * fabric? 1 live, 0 not live (said when say), -1 refused (said). */
static int fabric_ctrl(const char *dev, const char *ctrl, const char *name, const char *nqn,
		       int say)
{
	char p[PATH_MAX + 32], v[512];

	snprintf(p, sizeof(p), "%s/transport", ctrl);
	read_attr(p, v, sizeof(v));
	if (!is_fabric(v)) {
		err("'%s' is a namespace of controller %s over %s, not of an NVMe-oF controller of "
		    "'%s'", dev, name, v[0] ? v : "an unknown transport", nqn);
		return -1;
	}
	snprintf(p, sizeof(p), "%s/subsysnqn", ctrl);
	read_attr(p, v, sizeof(v));
	if (strcmp(v, nqn)) {
		err("'%s' is reached through controller %s of '%s', not of '%s'", dev, name, v, nqn);
		return -1;
	}
	snprintf(p, sizeof(p), "%s/state", ctrl);
	read_attr(p, v, sizeof(v));
	if (strcmp(v, "live")) {
		if (say)
			err("'%s' has no live NVMe-oF controller of '%s' (%s is %s)", dev, nqn, name,
			    v[0] ? v : "in an unknown state");
		return 0;
	}
	return 1;
}

/* Is the block device rdev a whole namespace of subsystem nqn behind live
 * NVMe-oF controllers? Trusted only as sysfs shows the namespace itself:
 * its "device" is its controller (nvmeX: transport, state, subsysnqn) or,
 * with native multipath, its subsystem (nvme-subsysN: subsysnqn; its
 * controllers are its nvmeX entries), and every controller it is reached
 * through must be a fabric one connected to nqn. Another controller of
 * the same NQN elsewhere proves nothing, and a local PCIe drive is refused
 * even under a matching NQN. */
static int is_fabric_namespace(const char *dev, dev_t rdev, const char *nqn)
{
	char base[128], p[PATH_MAX], v[512], ctrl[PATH_MAX], dir[160];
	struct dirent *e;
	int live = 0, r = 0;
	DIR *d;

	snprintf(base, sizeof(base), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	snprintf(p, sizeof(p), "%s/partition", base);
	if (access(p, F_OK) == 0) {
		err("'%s' is a partition, not a namespace of '%s'", dev, nqn);
		return 0;
	}
	snprintf(p, sizeof(p), "%s/device/subsysnqn", base);
	read_attr(p, v, sizeof(v));
	if (strcmp(v, nqn)) {
		err("'%s' is not a namespace of '%s'%s%s", dev, nqn, v[0] ? ": its subsystem is " : "",
		    v);
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/device", base);
	snprintf(p, sizeof(p), "%s/transport", dir);
	if (access(p, F_OK) == 0) {	/* the namespace's own controller */
		const char *name = realpath(dir, ctrl) ? strrchr(ctrl, '/') + 1 : "?";

		return fabric_ctrl(dev, dir, name, nqn, 1) == 1;
	}
	d = opendir(dir);	/* a multipath head: every path's controller */
	while (d && r >= 0 && (e = readdir(d))) {
		if (strncmp(e->d_name, "nvme", 4) || strspn(e->d_name + 4, "0123456789") !=
								 strlen(e->d_name + 4) || !e->d_name[4])
			continue;
		snprintf(ctrl, sizeof(ctrl), "%s/%s", dir, e->d_name);
		r = fabric_ctrl(dev, ctrl, e->d_name, nqn, 0);
		live += r > 0;
	}
	if (d)
		closedir(d);
	if (r >= 0 && !live)
		err("'%s' has no live NVMe-oF controller of '%s'", dev, nqn);
	return r >= 0 && live;
}

/* Open first, then look at what was opened (never stat, then open): an
 * O_PATH descriptor opens no device, and the device is then opened through
 * it, so the checked inode is the one read and written. A write also takes
 * the device exclusively (O_EXCL: EBUSY while it is mounted or held). */
static void device_mode(const char *dev, const char *nqn, uint64_t size, int wr)
{
	struct stat st, st2;
	char self[64];
	int pfd = -1, fd;

	if (!dev || strncmp(dev, "/dev/", 5) || (pfd = open(dev, O_PATH | O_CLOEXEC)) < 0 ||
	    fstat(pfd, &st) < 0 || !S_ISBLK(st.st_mode)) {
		err("'%s' is not a block device", dev ? dev : "");
		goto out;
	}
	if (wr && !nqn) {
		err("--write needs --nqn NQN: only a namespace of that subsystem is written");
		goto out;
	}
	if (nqn && !is_fabric_namespace(dev, st.st_rdev, nqn))
		goto out;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, (wr ? O_RDWR | O_EXCL : O_RDONLY) | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EBUSY)
			err("'%s' is in use (mounted, or held by another program): not written", dev);
		else
			err("cannot open '%s' with O_DIRECT: %s", dev, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st2) < 0 || !S_ISBLK(st2.st_mode) || st2.st_rdev != st.st_rdev)
		err("'%s' changed while it was checked", dev);
	else
		transfer(fd, size, wr, dev);
	close(fd);
out:
	if (pfd >= 0)
		close(pfd);
}

int main(int argc, char **argv)
{
	const char *mount = NULL, *dev = NULL, *nqn = NULL;
	unsigned long long size = 0;
	int wr = 0, a;

	printf("llmnet-io-probe 1\n");
	for (a = 1; a < argc; a++) {
		char *end;

		if (!strcmp(argv[a], "--mount") && a + 1 < argc) {
			mount = argv[++a];
		} else if (!strcmp(argv[a], "--device") && a + 1 < argc) {
			dev = argv[++a];
		} else if (!strcmp(argv[a], "--nqn") && a + 1 < argc) {
			nqn = argv[++a];
		} else if (!strcmp(argv[a], "--size") && a + 1 < argc) {
			errno = 0;
			size = strtoull(argv[++a], &end, 10);
			if (errno || *end || size < CHUNK || size > (64ull << 30))
				size = 0;
		} else if (!strcmp(argv[a], "--write")) {
			wr = 1;
		} else {
			err("unknown argument '%s'", argv[a]);
		}
	}
	if (!size)
		err("--size takes bytes from 1 MiB to 64 GiB");
	else if (!!mount == !!dev)
		err("give --mount DIR or --device /dev/NAME");
	else if (mount && (wr || nqn))
		err("%s is for a raw device only", wr ? "--write" : "--nqn");
	/* whole chunks: O_DIRECT transfers are multiples of the block size */
	size -= size % CHUNK;
	if (!failed) {
		if (mount)
			mount_mode(mount, size);
		else
			device_mode(dev, nqn, size, wr);
	}
	printf("result %s\n", failed ? "fail" : "pass");
	return failed;
}
