// SPDX-License-Identifier: MIT
/*
 * The state file and the node lock (see state.h). The state is small (one
 * record per created object) and is read whole and written whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/converge/state.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"

/*
 * The state decides what the agent may rewrite and delete, so one that
 * someone but root could have written is not believed: its directories
 * and the file itself must be root's (the agent's own user's under a test
 * --root) and writable by no one else. 0, -ENOENT (no message) or negative
 * with err.
 */
static int check_state_file(struct ln_agent *a, struct ln_buf *err)
{
	struct stat st;
	int r = ln_path_check_dirs(a, LN_STATE_PATH, err);

	if (r < 0)
		return r;
	r = ln_path_lstat(a, LN_STATE_PATH, &st, err);
	if (r < 0)
		return r;
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		ln_buf_addf(err, "state file '%s' is owned by uid %u, not root", LN_STATE_PATH,
			    (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ln_buf_addf(err, "state file '%s' is writable by group or others (mode %04o)",
			    LN_STATE_PATH, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int ln_state_load(struct ln_agent *a, struct ln_state *s, struct ln_buf *err)
{
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *cl;
	int64_t version;
	int r;

	s->root = NULL;
	s->index = NULL;
	s->dirty = 0;
	r = check_state_file(a, err);
	if (r == 0)
		r = ln_path_read(a, LN_STATE_PATH, &b, err);
	if (r == -ENOENT) {
		ln_buf_reset(err);
		s->root = json_object_new_object();
		ln_json_add_i64(s->root, "version", 1);
		ln_json_add(s->root, "clusters", json_object_new_object());
		r = 0;
		goto out;
	}
	if (r < 0)
		goto out;
	r = ln_json_parse(b.buf, b.len, &s->root, err);
	if (r < 0)
		goto bad;
	if (ln_json_get_i64(s->root, "version", 1, &version, err) < 0 || version != 1 ||
	    ln_json_get_obj(s->root, "clusters", 1, &cl, err) < 0) {
		r = -LN_EPROTO;
		goto bad;
	}
	r = 0;
	goto out;
bad:
	ln_buf_addf(err, "%sstate file '%s' is not llmnet state version 1; fix or move it away",
		    err->len ? ": " : "", LN_STATE_PATH);
	json_object_put(s->root);
	s->root = NULL;
	if (r >= 0)
		r = -LN_EPROTO;
out:
	ln_buf_release(&b);
	return r;
}

void ln_state_release(struct ln_state *s)
{
	json_object_put(s->root);
	json_object_put(s->index);
	s->root = NULL;
	s->index = NULL;
}

/* "cluster\x1fkind\x1fid", allocated to its full length (an id is a path
 * of up to 4,095 bytes: a key cut short would let two paths collide, and
 * one pass as owned); NULL when out of memory. */
static char *index_key(const char *cluster, const char *kind, const char *id)
{
	size_t n = strlen(cluster) + strlen(kind) + strlen(id) + 3;
	char *key = malloc(n);

	if (key)
		snprintf(key, n, "%s\x1f%s\x1f%s", cluster, kind, id);
	return key;
}

static const char *rec_field(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static struct json_object *clusters(struct ln_state *s);

/* A hash index over every record, so a converged run over thousands of
 * objects does not scan the record list for each lookup. */
static struct json_object *state_index(struct ln_state *s)
{
	if (s->index)
		return s->index;
	s->index = json_object_new_object();
	json_object_object_foreach(clusters(s), name, c) {
		struct json_object *objs;
		size_t i, n;

		if (!json_object_object_get_ex(c, "objects", &objs))
			continue;
		n = json_object_array_length(objs);
		for (i = 0; i < n; i++) {
			struct json_object *o = json_object_array_get_idx(objs, i);
			char *key = index_key(name, rec_field(o, "kind"), rec_field(o, "id"));

			/* out of memory: the record is not found, so it is refused, never
			 * taken for another */
			if (key)
				json_object_object_add(s->index, key, json_object_get(o));
			free(key);
		}
	}
	return s->index;
}

static struct json_object *clusters(struct ln_state *s)
{
	struct json_object *c = NULL;

	json_object_object_get_ex(s->root, "clusters", &c);
	return c;
}

struct json_object *ln_state_objects(struct ln_state *s, const char *cluster)
{
	struct json_object *c, *objs;

	if (!json_object_object_get_ex(clusters(s), cluster, &c) ||
	    !json_object_object_get_ex(c, "objects", &objs))
		return NULL;
	return objs;
}

static int rec_is(struct json_object *o, const char *kind, const char *id)
{
	struct json_object *k, *i;

	return json_object_object_get_ex(o, "kind", &k) && json_object_object_get_ex(o, "id", &i) &&
	       !strcmp(json_object_get_string(k), kind) && !strcmp(json_object_get_string(i), id);
}

struct json_object *ln_state_find(struct ln_state *s, const char *cluster, const char *kind,
				  const char *id)
{
	struct json_object *o = NULL;
	char *key = index_key(cluster, kind, id);

	if (key && !json_object_object_get_ex(state_index(s), key, &o))
		o = NULL;
	free(key);
	return o;
}

const char *ln_state_other_owner(struct ln_state *s, const char *cluster, const char *kind,
				 const char *id)
{
	json_object_object_foreach(clusters(s), name, val) {
		(void)val;
		if (strcmp(name, cluster) && ln_state_find(s, name, kind, id))
			return name;
	}
	return NULL;
}

struct json_object *ln_state_add(struct ln_state *s, const char *cluster, const char *kind,
				 const char *id)
{
	struct json_object *c, *objs, *o;

	o = ln_state_find(s, cluster, kind, id);
	if (o)
		return o;
	if (!json_object_object_get_ex(clusters(s), cluster, &c)) {
		c = json_object_new_object();
		ln_json_add(clusters(s), cluster, c);
	}
	if (!json_object_object_get_ex(c, "objects", &objs)) {
		objs = json_object_new_array();
		ln_json_add(c, "objects", objs);
	}
	o = json_object_new_object();
	ln_json_add_str(o, "kind", kind);
	ln_json_add_str(o, "id", id);
	json_object_array_add(objs, o);
	{
		char *key = index_key(cluster, kind, id);

		if (key) {
			json_object_object_add(state_index(s), key, json_object_get(o));
		} else {
			json_object_put(s->index);	/* rebuilt whole on the next lookup */
			s->index = NULL;
		}
		free(key);
	}
	s->dirty = 1;
	return o;
}

void ln_state_remove(struct ln_state *s, const char *cluster, const char *kind, const char *id)
{
	struct json_object *objs = ln_state_objects(s, cluster);
	size_t i, n = objs ? json_object_array_length(objs) : 0;

	for (i = 0; i < n; i++) {
		if (rec_is(json_object_array_get_idx(objs, i), kind, id)) {
			char *key = index_key(cluster, kind, id);

			if (key) {
				json_object_object_del(state_index(s), key);
			} else {
				json_object_put(s->index);
				s->index = NULL;
			}
			free(key);
			json_object_array_del_idx(objs, i, 1);
			s->dirty = 1;
			return;
		}
	}
}

void ln_state_prune(struct ln_state *s, const char *cluster)
{
	struct json_object *objs = ln_state_objects(s, cluster), *c;

	if (json_object_object_get_ex(clusters(s), cluster, &c) &&
	    (!objs || json_object_array_length(objs) == 0)) {
		json_object_object_del(clusters(s), cluster);
		s->dirty = 1;
	}
}

struct json_object *ln_state_clusters(struct ln_state *s)
{
	struct json_object *arr = json_object_new_array();

	json_object_object_foreach(clusters(s), name, val) {
		(void)val;
		json_object_array_add(arr, json_object_new_string(name));
	}
	return arr;
}

int ln_state_save(struct ln_agent *a, struct ln_state *s, struct ln_buf *err)
{
	struct ln_buf out = LN_BUF_INIT;
	char stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	int r, dfd;

	if (!s->dirty)
		return 0;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_foreach(clusters(s), name, val) {
		(void)name;
		json_object_object_del(val, "updated");
		ln_json_add_str(val, "updated", stamp);
	}
	r = ln_json_write(s->root, 1, &out);
	if (r < 0)
		goto out;
	dfd = ln_path_open_own_dir(a, "/var/lib/llmnet", 0700, err);
	if (dfd < 0) {
		r = dfd;
		goto out;
	}
	close(dfd);
	r = ln_path_write(a, LN_STATE_PATH, out.buf, out.len, 0600, err);
	if (r == 0)
		s->dirty = 0;
out:
	ln_buf_release(&out);
	return r;
}

int ln_state_owned_summary(struct ln_agent *a, struct json_object **out, struct ln_buf *err)
{
	struct ln_state s;
	struct json_object *o;
	int r;

	*out = NULL;
	r = ln_state_load(a, &s, err);
	if (r < 0)
		return r;
	o = json_object_new_object();
	json_object_object_foreach(clusters(&s), name, val) {
		struct json_object *x = json_object_new_object(), *objs, *up;

		ln_json_add_i64(x, "objects",
				json_object_object_get_ex(val, "objects", &objs)
					? (int64_t)json_object_array_length(objs) : 0);
		ln_json_add_str(x, "updated", json_object_object_get_ex(val, "updated", &up)
						      ? json_object_get_string(up) : NULL);
		ln_json_add(o, name, x);
	}
	ln_state_release(&s);
	*out = o;
	return 0;
}

int ln_lock_acquire(struct ln_agent *a, struct ln_buf *err)
{
	const char *w = getenv("LLMNET_LOCK_WAIT");
	long wait_ms = 30000, waited = 0, left;
	int fd, dfd, r;

	if (w && *w) {
		char *end;
		long v = strtol(w, &end, 10);

		if (*end || v < 0 || v > 600) {
			ln_buf_addf(err, "invalid LLMNET_LOCK_WAIT '%s' (0-600 seconds)", w);
			return -EINVAL;
		}
		wait_ms = v * 1000;
	}
	/* the lock's directory and the lock itself are never reached through a link */
	dfd = ln_path_open_own_dir(a, "/run", 0755, err);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, strrchr(LN_LOCK_PATH, '/') + 1, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	close(dfd);
	if (fd < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot open lock '%s': %s", LN_LOCK_PATH, strerror(-r));
		return r;
	}
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			r = -errno;
			ln_buf_addf(err, "cannot lock '%s': %s", LN_LOCK_PATH, strerror(errno));
			close(fd);
			return r;
		}
		if (waited >= wait_ms || ln_agent_stopping)
			break;
		left = ln_budget_left_ms();
		if (left == 0) {
			close(fd);
			ln_buf_addf(err, "%s while waiting for the node lock '%s' (another llmnet-agent "
				    "run holds it); nothing was changed", ln_budget_why(), LN_LOCK_PATH);
			return -LN_ETIMEOUT;
		}
		poll(NULL, 0, left < 100 ? (int)left : 100);
		waited += 100;
	}
	close(fd);
	if (ln_agent_stopping) {
		ln_buf_addf(err, "gave up waiting for '%s': the session is closed", LN_LOCK_PATH);
		return -ECANCELED;
	}
	ln_buf_addf(err, "node is busy: another llmnet-agent run holds '%s' (waited %ld s)",
		    LN_LOCK_PATH, wait_ms / 1000);
	return -LN_ELOCKED;
}

void ln_lock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}
