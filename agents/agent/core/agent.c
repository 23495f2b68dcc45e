// SPDX-License-Identifier: MIT
/*
 * The agent's shared plumbing: choosing the root and the implementations,
 * the failpoint every change passes through, reads under the root, value
 * validation, and the change-list answer.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/core/session.h"
#include "agents/agent/kernel/paths.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/places.h"
#include "common/nvme.h"

volatile int ln_agent_stopping;

/* Where ln_agent_emit writes in a session (the request's answer). */
static struct ln_buf *capture;

void ln_agent_capture(struct ln_buf *b)
{
	capture = b;
}

int ln_agent_init(struct ln_agent *a, const char *root, struct ln_buf *err)
{
	const char *fp;
	struct stat st;
	size_t n;

	memset(a, 0, sizeof(*a));
	if (!root || !*root)
		root = getenv("LLMNET_AGENT_ROOT");
	if (root && *root) {
		/* "DIR/" is DIR: sshd's SetEnv lines are written by hand */
		n = strlen(root);
		while (n > 1 && root[n - 1] == '/')
			n--;
		if (n >= sizeof(a->root) - 256) {
			ln_buf_addf(err, "invalid root '%s': too long", root);
			return -ENAMETOOLONG;
		}
		memcpy(a->root, root, n);
		a->root[n] = '\0';
		root = a->root;
	}
	if (root && *root && strcmp(root, "/")) {
		if (!ln_valid_abs_path(root)) {
			ln_buf_addf(err, "invalid root '%s': must be an absolute, normalized path",
				    root);
			return -EINVAL;
		}
		if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
			ln_buf_addf(err, "invalid root '%s': not a directory", root);
			return -ENOTDIR;
		}
		a->fixture = 1;
		a->fs = &ln_fsops_fixture;
		a->ini = &ln_iniops_fixture;
	} else {
		a->root[0] = '\0';
		a->fs = &ln_fsops_real;
		a->ini = &ln_iniops_real;
	}
	fp = getenv("LLMNET_CLOCK_STEP_MS");
	if (fp && *fp) {
		char *end;

		errno = 0;
		a->clock_step_ms = strtol(fp, &end, 10);
		if (errno || *end || a->clock_step_ms < 0 || a->clock_step_ms > LN_BUDGET_MAX_MS) {
			ln_buf_addf(err, "invalid LLMNET_CLOCK_STEP_MS '%s'", fp);
			return -EINVAL;
		}
	}
	fp = getenv("LLMNET_FAILPOINT");
	if (fp && *fp) {
		char *end;

		errno = 0;
		a->failpoint = strtoul(fp, &end, 10);
		if (errno || *end) {
			ln_buf_addf(err, "invalid LLMNET_FAILPOINT '%s'", fp);
			return -EINVAL;
		}
	}
	return 0;
}

int ln_agent_path(const struct ln_agent *a, const char *path, char *out)
{
	if (snprintf(out, PATH_MAX, "%s%s", a->root, path) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int ln_agent_change(struct ln_agent *a, const char *what)
{
	if (a->dry_run) {
		ln_error("refusing change in a read-only verb: %s", what);
		return -EROFS;
	}
	if (ln_budget_left_ms() == 0) {
		struct ln_buf m = LN_BUF_INIT;

		ln_buf_addf(&m, "%s before %s; nothing more was changed", ln_budget_why(), what);
		ln_agent_fail("timeout", m.buf, LN_AGENT_EXIT_TIMEOUT);
		ln_buf_release(&m);
		/* exit, as the failpoint does: no caller can go on changing; a
		 * session first sends the answer captured so far */
		ln_session_abort(LN_AGENT_EXIT_TIMEOUT);
		_exit(LN_AGENT_EXIT_TIMEOUT);
	}
	if (ln_agent_stopping) {
		ln_error("refusing change, the session is closed: %s", what);
		return -ECANCELED;
	}
	a->changes++;
	ln_trace("agent", "change %lu: %s", a->changes, what);
	if (a->clock_step_ms)
		ln_budget_advance(a->clock_step_ms);
	if (a->failpoint && a->changes == a->failpoint) {
		ln_warn("failpoint: stopping before change %lu (%s)", a->changes, what);
		fflush(stdout);
		_exit(LN_AGENT_EXIT_FAILPOINT);
	}
	return 0;
}

static int change2(struct ln_agent *a, const char *verb, const char *path)
{
	char what[PATH_MAX + 32];

	snprintf(what, sizeof(what), "%s %s", verb, path);
	return ln_agent_change(a, what);
}

int ln_fs_mkdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	int r = change2(a, "mkdir", path);

	return r < 0 ? r : a->fs->mkdir(a, path, err);
}

int ln_fs_rmdir(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	int r = change2(a, "rmdir", path);

	return r < 0 ? r : a->fs->rmdir(a, path, err);
}

int ln_fs_symlink(struct ln_agent *a, const char *target, const char *linkpath,
		  struct ln_buf *err)
{
	int r = change2(a, "symlink", linkpath);

	return r < 0 ? r : a->fs->symlink(a, target, linkpath, err);
}

int ln_fs_unlink(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	int r = change2(a, "unlink", path);

	return r < 0 ? r : a->fs->unlink(a, path, err);
}

int ln_fs_write_attr(struct ln_agent *a, const char *path, const char *val, struct ln_buf *err)
{
	int r = change2(a, "write", path);

	return r < 0 ? r : a->fs->write_attr(a, path, val, err);
}

int ln_fs_write_file(struct ln_agent *a, const char *path, const char *data, size_t len,
		     mode_t mode, struct ln_buf *err)
{
	char p[PATH_MAX];
	int r = change2(a, "write file", path);

	if (r < 0)
		return r;
	if (ln_agent_path(a, path, p) < 0) {
		ln_buf_addf(err, "path too long: '%s'", path);
		return -ENAMETOOLONG;
	}
	return ln_file_write_atomic(p, data, len, mode, err);
}

int ln_fs_create_sparse(struct ln_agent *a, const char *path, uint64_t size, struct ln_buf *err)
{
	char p[PATH_MAX];
	int fd, r = change2(a, "create sparse", path);

	if (r < 0)
		return r;
	if (ln_agent_path(a, path, p) < 0) {
		ln_buf_addf(err, "path too long: '%s'", path);
		return -ENAMETOOLONG;
	}
	/* O_EXCL: an existing file is never truncated or resized. */
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot create backing file '%s': %s", path, strerror(errno));
		return r;
	}
	if (ftruncate(fd, (off_t)size) < 0 || fsync(fd) < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot size backing file '%s': %s", path, strerror(errno));
		close(fd);
		unlink(p);
		return r;
	}
	close(fd);
	return 0;
}

int ln_fs_remove_file(struct ln_agent *a, const char *path, struct ln_buf *err)
{
	char p[PATH_MAX];
	int r = change2(a, "remove file", path);

	if (r < 0)
		return r;
	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	if (unlink(p) < 0 && errno != ENOENT) {
		r = -errno;
		ln_buf_addf(err, "cannot remove '%s': %s", path, strerror(errno));
		return r;
	}
	return 0;
}

int ln_read_attr(const struct ln_agent *a, const char *path, struct ln_buf *out)
{
	struct ln_buf ignore = LN_BUF_INIT;
	char p[PATH_MAX];
	int r;

	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	r = ln_file_read(p, out, &ignore);
	ln_buf_release(&ignore);
	if (r < 0)
		return r;
	if (out->len && out->buf[out->len - 1] == '\n')
		ln_buf_setlen(out, out->len - 1);
	return 0;
}

int ln_path_exists(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	return ln_agent_path(a, path, p) == 0 && lstat(p, &st) == 0;
}

int ln_is_dir(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	return ln_agent_path(a, path, p) == 0 && lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int ln_is_link(const struct ln_agent *a, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	return ln_agent_path(a, path, p) == 0 && lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
}

static int cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* sysfs, procfs and devtmpfs are reached through the kernel's own links
 * (/sys/class/infiniband/rxe0 -> ../../devices/...), which only the kernel
 * makes there; facts and device checks must follow them. */
static int kernel_tree(const char *path)
{
	return ln_path_under(path, "/sys") || ln_path_under(path, "/proc") ||
	       ln_path_under(path, "/dev");
}

int ln_list_dir(const struct ln_agent *a, const char *path, char ***names, size_t *n)
{
	struct ln_buf e = LN_BUF_INIT;
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, alloc = 0;
	DIR *d;
	int r = 0, fd;

	*names = NULL;
	*n = 0;
	if (kernel_tree(path)) {
		char p[PATH_MAX];

		if (ln_agent_path(a, path, p) < 0)
			return -ENAMETOOLONG;
		fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	} else {
		/* never through a link (paths.c): a listing decides what is done */
		fd = ln_path_open_dir(a, path, &e);
		ln_buf_release(&e);
		if (fd < 0)
			return fd;
	}
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (cnt + 2 > alloc) {
			char **nv;

			alloc = alloc ? alloc * 2 : 16;
			nv = realloc(v, alloc * sizeof(*v));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[cnt] = strdup(de->d_name);
		if (!v[cnt]) {
			r = -ENOMEM;
			break;
		}
		v[++cnt] = NULL;
	}
	closedir(d);
	if (r < 0) {
		ln_names_free(v, cnt);
		return r;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_names);
	*names = v;
	*n = cnt;
	return 0;
}

int ln_module_loaded(const struct ln_agent *a, const char *module)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/module/%s", module);
	return ln_is_dir(a, p);
}

/* Call fn for each line of ROOT/proc/mounts, split into its fields. */
static int scan_mounts(const struct ln_agent *a,
		       int (*fn)(const char *dev, const char *dir, const char *fs, void *arg),
		       void *arg)
{
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;
	int r;

	r = ln_read_attr(a, "/proc/mounts", &b);
	if (r < 0)
		goto out;
	r = 0;
	for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char dev[PATH_MAX], dir[PATH_MAX], fs[64];

		if (sscanf(line, "%4095s %4095s %63s", dev, dir, fs) != 3)
			continue;
		r = fn(dev, dir, fs, arg);
		if (r)
			break;
	}
out:
	ln_buf_release(&b);
	return r;
}

static int match_configfs(const char *dev, const char *dir, const char *fs, void *arg)
{
	(void)dev;
	(void)arg;
	return !strcmp(fs, "configfs") && !strcmp(dir, "/sys/kernel/config");
}

int ln_configfs_mounted(const struct ln_agent *a)
{
	return scan_mounts(a, match_configfs, NULL) == 1;
}

struct dir_match {
	const char *path;
	char *fs;
	size_t fslen;
};

static int match_dir(const char *dev, const char *dir, const char *fs, void *arg)
{
	struct dir_match *m = arg;

	(void)dev;
	if (strcmp(dir, m->path))
		return 0;
	if (m->fs)
		snprintf(m->fs, m->fslen, "%s", fs);
	return 1;
}

int ln_path_mounted(const struct ln_agent *a, const char *path, char *fs, size_t fslen)
{
	struct dir_match m = { path, fs, fslen };

	return scan_mounts(a, match_dir, &m) == 1;
}

/* The offset of the first byte of s an NQN may not hold (strlen(s) when
 * none): white space, control and non-ASCII bytes, what a configfs name or
 * a quoted argument cannot take; strict: also the ',' and '=' of the
 * kernel's /dev/nvme-fabrics option string ("nqn=..,hostnqn=..") that
 * would add options of their own. */
static size_t nqn_bad_at(const char *s, int strict)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c >= 0x7f || strchr(strict ? "/\"'\\,=" : "/\"'\\", c))
			break;
	}
	return i;
}

static int valid_nqn(const char *s, int strict)
{
	size_t n = strlen(s);

	/* the kernel's option parser takes an NQN shorter than NVMF_NQN_SIZE;
	 * configfs names and the spec allow LN_NQN_MAX */
	return n >= 12 && n <= (strict ? LN_NQN_MAX - 1u : LN_NQN_MAX) && !strncmp(s, "nqn.", 4) &&
	       nqn_bad_at(s, strict) == n;
}

/* An NQN as the kernel and the spec accept it, and safe as a configfs name
 * (a target's hosts[] may list one with ',' or '=': configfs takes it). */
int ln_valid_nqn(const char *s)
{
	return valid_nqn(s, 0);
}

/* This node's own host NQN, which goes into the connect's option string
 * (hostnqn=): a valid NQN without ',' or '='. */
int ln_valid_host_nqn(const char *s)
{
	return valid_nqn(s, 1);
}

/* A UUID as the kernel's hostid= takes it: 8-4-4-4-12 hex digits. */
int ln_valid_uuid(const char *s)
{
	size_t i;

	if (strlen(s) != 36)
		return 0;
	for (i = 0; i < 36; i++)
		if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-'
							     : !isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* What is wrong with the host identity file path, which holds b: the byte
 * at offset bad (escaped unless a plain letter, digit or sign), or why.
 * Nothing else of the file is quoted: it may be anything, a pasted key. */
static void bad_identity(const char *path, const struct ln_buf *b, size_t bad, const char *why,
			 struct ln_buf *err)
{
	unsigned char c = bad < b->len ? (unsigned char)b->buf[bad] : 0;

	ln_buf_addf(err, "%s is not %s: ", path, !strcmp(path, LN_HOSTNQN_FILE) ?
		    "a valid host NQN" : "a host ID (a UUID: 8-4-4-4-12 hex digits)");
	if (bad < b->len && c > ' ' && c < 0x7f && c != '\'' && c != '\\')
		ln_buf_addf(err, "'%c' at offset %zu", c, bad);
	else if (bad < b->len)
		ln_buf_addf(err, "byte 0x%02x at offset %zu", c, bad);
	else
		ln_buf_addstr(err, why);
	ln_buf_addstr(err, "; llmnet never rewrites the node's host identity: correct the "
		      "file, or remove it for apply to make one");
}

int ln_host_identity(const struct ln_agent *a, struct ln_buf *nqn, struct ln_buf *id,
		     struct ln_buf *err)
{
	const char *path[2] = { LN_HOSTNQN_FILE, LN_HOSTID_FILE };
	struct ln_buf *b[2] = { nqn, id };
	int i, r;

	for (i = 0; i < 2; i++) {
		size_t n, bad;

		ln_buf_reset(b[i]);
		r = ln_read_attr(a, path[i], b[i]);
		if (r < 0 && r != -ENOENT) {
			/* not "absent": apply would make one over the node's file */
			ln_buf_addf(err, "%s cannot be read: %s; llmnet never rewrites the node's "
				    "host identity", path[i], strerror(-r));
			ln_buf_reset(nqn);
			ln_buf_reset(id);
			return r;
		}
		if (r < 0 || !b[i]->len) {
			ln_buf_reset(b[i]);
			continue;
		}
		ln_buf_rtrim(b[i]);
		if (!b[i]->len)
			continue;	/* only white space: none, as an empty file */
		n = strlen(b[i]->buf);
		bad = n < b[i]->len ? n : i ? strspn(b[i]->buf, "0123456789abcdefABCDEF-")
					     : nqn_bad_at(b[i]->buf, 1);
		if (bad < b[i]->len ||
		    (i ? !ln_valid_uuid(b[i]->buf) : !ln_valid_host_nqn(b[i]->buf))) {
			bad_identity(path[i], b[i], bad, i ? "not 8-4-4-4-12 hex digits"
				     : "an NQN is 'nqn.' and 8 to 218 more bytes", err);
			ln_buf_reset(nqn);	/* neither is used, nor shown */
			ln_buf_reset(id);
			return -EINVAL;
		}
	}
	return 0;
}

const char *ln_nqn_at(struct json_object *arr, size_t i)
{
	struct json_object *v = json_object_array_get_idx(arr, i);

	if (!json_object_is_type(v, json_type_string) || !ln_valid_nqn(json_object_get_string(v)))
		return NULL;
	return json_object_get_string(v);
}

int ln_valid_abs_path(const char *s)
{
	size_t n = strlen(s);
	const char *p;

	if (n < 2 || n > 4095 || s[0] != '/' || s[n - 1] == '/')
		return 0;
	for (p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < ' ' || c == 0x7f)
			return 0;
	}
	for (p = s; p; p = strchr(p + 1, '/')) {
		const char *q = p + 1;
		size_t len = strcspn(q, "/");

		if (len == 0 || (len == 1 && q[0] == '.') || (len == 2 && q[0] == '.' && q[1] == '.'))
			return 0;
	}
	return 1;
}

int ln_valid_name(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return 0;
	}
	return 1;
}

int ln_valid_addr(const char *s, const char **family)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, s, buf) == 1) {
		if (family)
			*family = "ipv4";
		return 1;
	}
	if (inet_pton(AF_INET6, s, buf) == 1 && !strchr(s, '%')) {
		if (family)
			*family = "ipv6";
		return 1;
	}
	return 0;
}

void ln_changes_init(struct ln_changes *c)
{
	memset(c, 0, sizeof(*c));
	c->list = json_object_new_array();
	c->warnings = json_object_new_array();
}

void ln_changes_release(struct ln_changes *c)
{
	json_object_put(c->list);
	json_object_put(c->warnings);
	c->list = c->warnings = NULL;
}

void ln_changes_add(struct ln_changes *c, const char *action, const char *kind, const char *id,
		    const char *detail, const char *error)
{
	struct json_object *o = json_object_new_object();

	ln_json_add_str(o, "action", action);
	ln_json_add_str(o, "kind", kind);
	ln_json_add_str(o, "id", id);
	if (detail && *detail)
		ln_json_add_str(o, "detail", detail);
	if (error) {
		ln_json_add_str(o, "error", error);
		c->n_error++;
	} else if (!strcmp(action, "create")) {
		c->n_create++;
	} else if (!strcmp(action, "change")) {
		c->n_change++;
	} else if (!strcmp(action, "remove")) {
		c->n_remove++;
	} else {
		c->n_ok++;
	}
	json_object_array_add(c->list, o);
	if (error)
		ln_error("cannot %s %s '%s': %s", action, kind, id, error);
	else if (strcmp(action, "ok"))
		ln_verbose("%s %s '%s'%s%s", action, kind, id, detail ? ": " : "",
			   detail ? detail : "");
}

void ln_changes_warn(struct ln_changes *c, const char *fmt, ...)
{
	struct ln_buf b = LN_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	ln_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	ln_warn("%s", b.buf);
	json_object_array_add(c->warnings, json_object_new_string(b.buf));
	ln_buf_release(&b);
}

struct json_object *ln_changes_answer(struct ln_changes *c, const char *mode,
				      const char *cluster, int plan)
{
	struct json_object *o = json_object_new_object(), *s = json_object_new_object();
	int pending = c->n_create + c->n_change + c->n_remove;

	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "mode", mode);
	ln_json_add_str(o, "cluster", cluster);
	ln_json_add(o, "changes", c->list);
	ln_json_add(o, "warnings", c->warnings);
	c->list = c->warnings = NULL;
	ln_json_add_counts(s, c->n_create, c->n_change, c->n_remove, c->n_ok, c->n_error);
	ln_json_add(o, "summary", s);
	ln_json_add_bool(o, "converged", c->n_error == 0 && (!plan || pending == 0));
	return o;
}

/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 if none. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned int c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

/*
 * The answer as valid JSON whatever bytes the request held: json-c copies
 * bytes of 0x80 and up into strings as they are, so a byte that is not
 * well-formed UTF-8 (which occurs only inside strings) becomes "\ufffd".
 */
static int write_utf8(const struct ln_buf *in, struct ln_buf *out)
{
	const unsigned char *s = (const unsigned char *)in->buf;
	size_t i = 0, k;

	while (i < in->len) {
		for (k = i; k < in->len; k += utf8_seq(s + k, in->len - k))
			if (!utf8_seq(s + k, in->len - k))
				break;
		if (k > i && ln_buf_add(out, s + i, k - i) < 0)
			return -ENOMEM;
		if (k < in->len && ln_buf_addstr(out, "\\ufffd") < 0)
			return -ENOMEM;
		i = k < in->len ? k + 1 : k;
	}
	return 0;
}

int ln_agent_emit(struct json_object *obj)
{
	struct ln_buf out = LN_BUF_INIT, clean = LN_BUF_INIT;
	int r = ln_json_write(obj, !capture, &out);

	if (r == 0)
		r = write_utf8(&out, capture ? capture : &clean);
	if (r == 0 && !capture && fwrite(clean.buf, 1, clean.len, stdout) != clean.len)
		r = -EIO;
	if (!capture && fflush(stdout) != 0)
		r = -EIO;
	ln_buf_release(&out);
	ln_buf_release(&clean);
	return r;
}

int ln_agent_fail(const char *code, const char *message, int exit_code)
{
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();

	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(e, "code", code);
	ln_json_add_str(e, "message", message);
	ln_json_add(o, "error", e);
	ln_error("%s", message);
	ln_agent_emit(o);
	json_object_put(o);
	return exit_code;
}
