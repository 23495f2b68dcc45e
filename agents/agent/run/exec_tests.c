// SPDX-License-Identifier: MIT
/*
 * nccl-tests' programs for the run verb (allow.c). Unlike the system tools
 * they have no one place: the spec names their directory
 * (validation.nccl.tests_dir) and the request names the program by its
 * absolute path there. So the agent runs one only when no one but root
 * could have put it there or changed it: root owns the file and every
 * directory from the root down, none is writable by group or others and
 * none is a symbolic link. Each component is opened without following a
 * link, from the root's fd, and the file runs from the fd that was checked
 * (fexecve), so what was checked is what runs. Its folder must be on a
 * file system of the node's own disks (the in-use gate, inuse.h). Its last name must be one
 * of the programs llmnet runs, and its arguments are typed by allow.c's
 * table like every other program's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/run/exec_tests.h"
#include "agents/agent/target/inuse.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/nccl_env.h"
#include "common/places.h"
#include "common/proto.h"

int ln_exec_tests_named(const char *path)
{
	const char *base = strrchr(path, '/');

	return path[0] == '/' && base && ln_nccl_tests_named(base + 1);
}

/* What fd (shown: its node path) is may be trusted to run from: root's,
 * writable by no one else, not a link; the file (last) a regular,
 * executable one, each directory above it a directory. */
static int trusted(int fd, const char *shown, int last, const char *path, struct ln_buf *err)
{
	struct statfs fs;
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int e = errno;

		ln_buf_addf(err, "cannot look at '%s': %s", shown, strerror(e));
		return -e;
	}
	/* a FUSE file system reports whatever owner its (maybe unprivileged)
	 * server says */
	if (fstatfs(fd, &fs) == 0 && fs.f_type == FUSE_SUPER_MAGIC) {
		ln_buf_addf(err, "'%s' is on a FUSE file system, whose owners and modes its "
			    "server decides: llmnet runs nccl-tests only from a local file system",
			    shown);
		return -LN_EREQUEST;
	}
	if (S_ISLNK(st.st_mode)) {
		ln_buf_addf(err, "'%s' is a symbolic link: llmnet runs nccl-tests only by a path "
			    "without links", shown);
		return -LN_EREQUEST;
	}
	if (last ? !S_ISREG(st.st_mode) : !S_ISDIR(st.st_mode)) {
		ln_buf_addf(err, "'%s' is not a %s", shown, last ? "regular file" : "directory");
		return -LN_EREQUEST;
	}
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		if (st.st_uid != 0)
			ln_buf_addf(err, "'%s' is owned by uid %u, not root", shown,
				    (unsigned)st.st_uid);
		else
			ln_buf_addf(err, "'%s' (owner uid 0) is writable by group or others "
				    "(mode %04o)", shown, (unsigned)(st.st_mode & 07777));
		ln_buf_addf(err, ": llmnet runs '%s' only when root owns it and every directory "
			    "above it, and no one else may write to them", path);
		return -LN_EREQUEST;
	}
	if (last && !(st.st_mode & S_IXUSR)) {
		ln_buf_addf(err, "'%s' is not executable (mode %04o)", shown,
			    (unsigned)(st.st_mode & 07777));
		return -LN_EREQUEST;
	}
	return 0;
}

/* Walk path from the agent's root, one component at a time without
 * following a link, each trusted(); file: its last one is the program
 * (a regular, executable file on the node's own disks), else every one is
 * a directory. The last one's fd, or negative with why in err. */
static int open_trusted(const struct ln_agent *a, const char *path, int file, struct ln_buf *err)
{
	char shown[PATH_MAX], comp[NAME_MAX + 1];
	const char *s = path, *e;
	int fd, nfd, r, last;
	size_t n;

	fd = open(a->root[0] ? a->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int en = errno;

		ln_buf_addf(err, "cannot open the root: %s", strerror(en));
		return -en;
	}
	r = trusted(fd, "/", 0, path, err);
	while (r == 0) {
		e = strchr(s + 1, '/');
		last = !e;
		n = e ? (size_t)(e - s - 1) : strlen(s + 1);
		if (n > NAME_MAX) {
			ln_buf_addf(err, "'%s' has a name longer than %d bytes", path, NAME_MAX);
			r = -LN_EREQUEST;
			break;
		}
		memcpy(comp, s + 1, n);
		comp[n] = '\0';
		snprintf(shown, sizeof(shown), "%.*s", (int)(s + 1 + n - path), path);
		/* the file's fd is inherited: a script runs from /dev/fd/N */
		nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | (last ? 0 : O_CLOEXEC));
		if (nfd < 0) {
			int en = errno;

			if (en == ENOENT)
				ln_buf_addf(err, "'%s' is not installed ('%s' is missing)", path,
					    shown);
			else
				ln_buf_addf(err, "cannot open '%s': %s", shown, strerror(en));
			r = en == ENOENT ? -LN_EMISSING : -en;
			break;
		}
		close(fd);
		fd = nfd;
		r = trusted(fd, shown, last && file, path, err);
		if (r == 0 && last && file && ln_inuse_program_file(a, path, err) < 0)
			r = -LN_EREQUEST;
		if (r == 0 && last)
			return fd;
		s = e;
	}
	close(fd);
	return r;
}

int ln_exec_tests_open(const struct ln_agent *a, const char *path, struct ln_buf *err)
{
	char dir[PATH_MAX];
	const char *e = strrchr(path, '/');

	/* the directory, as lint judged tests_dir (places.c) */
	snprintf(dir, sizeof(dir), "%.*s", e ? (int)(e - path) : 0, path);
	if (ln_tests_dir_check(dir[0] ? dir : "/", err) < 0)
		return -LN_EREQUEST;
	return open_trusted(a, path, 1, err);
}

int ln_exec_tests_lib_dir(const struct ln_agent *a, const char *dir, struct ln_buf *err)
{
	int fd;

	if (dir[0] != '/') {
		ln_buf_addf(err, "'%.200s' is not an absolute path", dir);
		return -LN_EREQUEST;
	}
	if (ln_tests_dir_check(dir, err) < 0)
		return -LN_EREQUEST;
	fd = open_trusted(a, dir, 0, err);
	if (fd < 0)	/* a missing one is a refusal with its name, not "not installed" */
		return fd == -LN_EMISSING ? -LN_EREQUEST : fd;
	close(fd);
	return 0;
}
