// SPDX-License-Identifier: MIT
/*
 * The agent's identity (see identity.h): the sidecar written by `seal` at
 * push time, checked against fstat of the running binary, and the full
 * hash when it does not match.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/core/digest.h"
#include "agents/agent/core/identity.h"
#include "common/fileio.h"
#include "common/proto.h"

/* The running binary, opened, and the sidecar's path ("" when the binary
 * was replaced or removed while running: no sidecar can describe it). */
static int open_self(struct stat *st, char *sidecar, size_t n)
{
	char self[PATH_MAX];
	ssize_t len;
	int fd;

	sidecar[0] = '\0';
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		close(fd);
		return -errno;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		self[len] = '\0';
		if (!strstr(self, " (deleted)"))
			snprintf(sidecar, n, "%s%s", self, LN_PROTO_AGENT_ID_SUFFIX);
	}
	return fd;
}

static int hash_fd(int fd, char hex[65])
{
	if (lseek(fd, 0, SEEK_SET) < 0 || ln_sha256_fd_hex(fd, hex) < 0)
		return -EIO;
	return 0;
}

/* The sidecar's one line for a file with stat st and digest hex. */
static void describe(const struct stat *st, const char *hex, char *out, size_t n)
{
	snprintf(out, n, "sha256 %s size %llu mtime %lld.%09ld ctime %lld.%09ld inode %llu dev %llu\n",
		 hex, (unsigned long long)st->st_size, (long long)st->st_mtim.tv_sec,
		 st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec,
		 (unsigned long long)st->st_ino, (unsigned long long)st->st_dev);
}

int ln_identity_sha256(char hex[65], const char **source)
{
	struct ln_buf side = LN_BUF_INIT, e = LN_BUF_INIT;
	char path[PATH_MAX + 8], want[256];
	struct stat st;
	int fd, r;

	fd = open_self(&st, path, sizeof(path));
	if (fd < 0)
		return fd;
	ln_buf_init(&side, 4096);
	/* The sidecar describes this very file: take its digest as is. */
	if (path[0] && ln_file_read(path, &side, &e) == 0 && side.len > 71 &&
	    !strncmp(side.buf, "sha256 ", 7)) {
		memcpy(hex, side.buf + 7, 64);
		hex[64] = '\0';
		describe(&st, hex, want, sizeof(want));
		if (!strcmp(side.buf, want)) {
			*source = "sidecar";
			r = 0;
			goto out;
		}
	}
	*source = "hashed";
	r = hash_fd(fd, hex);
out:
	close(fd);
	ln_buf_release_all(&side, &e);
	return r;
}

int ln_identity_seal(const char *want, struct ln_buf *err)
{
	char path[PATH_MAX + 8], hex[65], line[256];
	struct stat st;
	int fd, r;

	fd = open_self(&st, path, sizeof(path));
	if (fd < 0) {
		ln_buf_addf(err, "cannot open the running agent: %s", strerror(-fd));
		return fd;
	}
	r = hash_fd(fd, hex);
	close(fd);
	if (r < 0) {
		ln_buf_addf(err, "cannot hash the running agent");
		return r;
	}
	if (strcmp(hex, want)) {
		ln_buf_addf(err, "the installed agent has sha256 %s, the controller sent %s", hex,
			    want);
		return -EBADMSG;
	}
	if (!path[0]) {
		ln_buf_addf(err, "the agent was replaced while it ran; nothing sealed");
		return -ESTALE;
	}
	describe(&st, hex, line, sizeof(line));
	return ln_file_write_atomic(path, line, strlen(line), 0600, err);
}
