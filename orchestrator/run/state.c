/* SPDX-License-Identifier: MIT */
/*
 * The controller's memory between runs (state.h): last facts, last applied
 * desired state, the retry file; and facts --cached, built from them
 * without a node (a silent node's plan against its last apply is
 * lastknown.c's).
 * Each file is one JSON object read whole and written whole (one fsync per
 * run, not one per node: a 1,000-node run pays once).
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "orchestrator/run/nodeset.h"
#include "orchestrator/run/state.h"
#include "orchestrator/transport/answer.h"

#define FORMAT "llmnet-state/1"

char *ln_state_dir(void)
{
	const char *env = getenv("LLMNET_STATE_DIR"), *xdg = getenv("XDG_STATE_HOME"),
		   *home = getenv("HOME");
	char *p = NULL;

	if (env && *env)
		return strdup(env);
	if (xdg && *xdg)
		return asprintf(&p, "%s/llmnet", xdg) < 0 ? NULL : p;
	return asprintf(&p, "%s/.local/state/llmnet", home ? home : "/root") < 0 ? NULL : p;
}

int ln_state_dir_check(const char *dir, struct ln_buf *err)
{
	struct passwd pwd, *pw;
	char pwbuf[1024];
	struct stat st;

	if (lstat(dir, &st) < 0) {
		ln_buf_addf(err, "cannot use state directory '%s': %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		ln_buf_addf(err, "state directory '%s' is not a directory%s; make it one: "
			    "mkdir -m 700 DIR, or set LLMNET_STATE_DIR", dir,
			    S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		if (getpwuid_r(geteuid(), &pwd, pwbuf, sizeof(pwbuf), &pw) != 0)
			pw = NULL;
		ln_buf_addf(err, "state directory '%s' is owned by uid %u, not by this user; fix: "
			    "chown %s '%s'", dir, (unsigned)st.st_uid,
			    pw ? pw->pw_name : "$(id -un)", dir);
		return -EPERM;
	}
	if (st.st_mode & 077) {
		ln_buf_addf(err, "state directory '%s' has mode %04o, open to others; fix: "
			    "chmod 700 '%s'", dir, (unsigned)(st.st_mode & 07777), dir);
		return -EPERM;
	}
	return 0;
}

char *ln_state_open_dir(struct ln_buf *err)
{
	char *dir = ln_state_dir();

	if (!dir) {
		ln_buf_addstr(err, "out of memory");
		return NULL;
	}
	if (ln_mkdir_p(dir, 0700, err) < 0 || ln_state_dir_check(dir, err) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

int ln_state_open(const char *path, int flags, struct ln_buf *err)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600), e = errno;

	if (fd >= 0)
		return fd;
	ln_buf_addf(err, "cannot open '%s': %s%s", path, strerror(e),
		    e == ELOOP ? " (a symbolic link: llmnet does not follow "
				 "links in its state directory)" : "");
	return -e;
}

void ln_state_when(time_t at, char *buf, size_t size)
{
	long age = (long)difftime(time(NULL), at);
	char stamp[32];
	struct tm tm;

	gmtime_r(&at, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (age < 0)
		age = 0;
	if (age < 120)
		snprintf(buf, size, "%s, %lds ago", stamp, age);
	else if (age < 7200)
		snprintf(buf, size, "%s, %ldm ago", stamp, age / 60);
	else if (age < 172800)
		snprintf(buf, size, "%s, %ldh ago", stamp, age / 3600);
	else
		snprintf(buf, size, "%s, %ldd ago", stamp, age / 86400);
}

/* DIR/CLUSTER.what, the folder created (0700) when create is set. */
static char *state_path(const char *cluster, const char *what, int create, struct ln_buf *err)
{
	char *dir = create ? ln_state_open_dir(err) : ln_state_dir(), *p = NULL;

	if (!dir || asprintf(&p, "%s/%s.%s", dir, cluster, what) < 0)
		p = NULL;
	if (!p && !err->len)
		ln_buf_addstr(err, "out of memory");
	free(dir);
	return p;
}

/* The cached facts file as a whole: at most what n nodes' facts answers
 * may be (answer.h), so a file written before the limits, or tampered
 * with, costs no more to read than n live answers. */
static void facts_file_limits(size_t n, struct ln_answer_limits *l)
{
	static const char *const args[] = { "facts", NULL };

	*l = *ln_answer_limits_for(args);
	n = n ? n : 1;
	l->bytes *= n;
	l->elements = l->elements * n + 16 * n;
	l->containers = l->containers * n + 4 * n;
	l->depth += 2;	/* {"nodes":{"NAME":{"facts":...}}} over the envelope */
}

/* Read the facts file on fd into text (its cap set to l's bytes, so no
 * more is ever held) and scan it against l. */
static int facts_file_read(int fd, const char *path, const struct ln_answer_limits *l,
			   size_t n, struct ln_buf *text, struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r;

	ln_buf_init(text, l->bytes);
	r = ln_fd_read(fd, path, text, &e);
	if (r == -E2BIG)
		ln_buf_addf(err, "over %zu bytes (the facts limit for %zu nodes)", l->bytes,
			    n ? n : 1);
	else if (r < 0)
		ln_buf_addstr(err, e.buf);
	ln_buf_release(&e);
	return r < 0 ? r : ln_answer_scan(l, text->buf, text->len, err);
}

/* The file's "nodes" object (a new empty one when there is no file). A
 * file that cannot be parsed is a warning in r's notes, and treated as
 * empty. */
static struct json_object *load_nodes(struct ln_run *r, const char *path)
{
	struct ln_buf text = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *all = NULL, *nodes = NULL;
	struct ln_answer_limits fl;
	int fd = ln_state_open(path, O_RDONLY, &err);
	int facts = strstr(path, "facts.json") != NULL, rd = -1;

	if (fd == -ENOENT)
		ln_buf_reset(&err);
	if (fd >= 0 && facts) {
		facts_file_limits(r->n, &fl);
		rd = facts_file_read(fd, path, &fl, r->n, &text, &err);
	} else if (fd >= 0) {
		rd = ln_fd_read(fd, path, &text, &err);
	}
	if (rd == 0 && ln_json_parse(text.buf, text.len, &all, &err) == 0) {
		nodes = ln_json_at(all, "nodes");
		if (nodes && json_object_is_type(nodes, json_type_object))
			json_object_get(nodes);
		else
			nodes = NULL;
		if (!nodes)
			ln_run_note(r, LN_LOG_WARN, "ignoring '%s': not a state file", path);
	} else if (text.len || err.len) {
		ln_run_note(r, LN_LOG_WARN, "ignoring '%s': %s", path, err.buf);
	}
	if (fd >= 0)
		close(fd);
	json_object_put(all);
	ln_buf_release(&text);
	ln_buf_release(&err);
	return nodes ? nodes : json_object_new_object();
}

static int save_nodes(const char *path, struct json_object *nodes, struct ln_buf *err)
{
	struct json_object *all = json_object_new_object();
	struct ln_buf b = LN_BUF_INIT;
	int r;

	ln_json_add_str(all, "format", FORMAT);
	ln_json_add(all, "nodes", json_object_get(nodes));
	r = ln_json_write(all, 0, &b);
	if (r == 0)
		r = ln_file_write_atomic(path, b.buf, b.len, 0600, err);
	json_object_put(all);
	ln_buf_release(&b);
	return r;
}

/* Load CLUSTER.what, let fill change it, write it back. */
static int update(struct ln_run *r, const char *what,
		  void (*fill)(const struct ln_run *r, struct json_object *nodes, const void *arg),
		  const void *arg, struct ln_buf *err)
{
	char *path = state_path(r->spec->cluster, what, 1, err);
	struct json_object *nodes;
	int rc;

	if (!path)
		return -ENOMEM;
	nodes = load_nodes(r, path);
	fill(r, nodes, arg);
	rc = save_nodes(path, nodes, err);
	json_object_put(nodes);
	free(path);
	return rc;
}

int ln_state_load(struct ln_run *r, const char *what, struct json_object **nodes,
		  struct ln_buf *err)
{
	char *path = state_path(r->spec->cluster, what, 0, err);

	*nodes = NULL;
	if (!path)
		return -ENOMEM;
	*nodes = load_nodes(r, path);
	free(path);
	return 0;
}

static void fill_facts(const struct ln_run *r, struct json_object *nodes, const void *arg)
{
	time_t now = time(NULL);
	size_t i;

	(void)arg;
	for (i = 0; i < r->n; i++) {
		const struct ln_node_run *nr = &r->nodes[i];
		struct json_object *e;

		if (nr->state != LN_NODE_OK || !nr->facts)
			continue;
		e = json_object_new_object();
		ln_json_add_i64(e, "read_at", (int64_t)now);
		ln_json_add_str(e, "address", nr->spec->address);
		/* only the known fields of the facts answer (answer.h) */
		ln_json_add(e, "facts", ln_answer_known_facts(nr->facts));
		ln_json_add(nodes, nr->spec->name, e);
	}
}

int ln_state_save_facts(struct ln_run *r, struct ln_buf *err)
{
	return update(r, "facts.json", fill_facts, NULL, err);
}

static int converged(const struct ln_node_run *nr)
{
	struct json_object *c = nr->answer ? ln_json_at(nr->answer, "converged") : NULL;

	/* a teardown that kept a target did not converge either */
	return nr->state == LN_NODE_OK && nr->applied && !nr->n_failed && !nr->skip.len &&
	       (!c || json_object_get_boolean(c));
}

static void fill_applied(const struct ln_run *r, struct json_object *nodes, const void *arg)
{
	struct json_object *const *requests = arg;
	time_t now = time(NULL);
	int torn_down = !requests;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct ln_node_run *nr = &r->nodes[i];
		struct json_object *e, *req;

		if (!nr->limited)
			continue;
		if (!converged(nr)) {
			/* A node that answered the facts phase and then failed
			 * or went silent may hold anything now; one never
			 * reached (or skipped untouched) holds what it held. */
			if (nr->facts && (nr->applied || nr->n_failed || nr->state != LN_NODE_OK))
				json_object_object_del(nodes, nr->spec->name);
			continue;
		}
		if (torn_down) {
			req = json_object_new_object();
			ln_json_add(req, "targets", json_object_new_array());
			ln_json_add(req, "initiators", json_object_new_array());
		} else {
			/* kept on disk: the secrets only as fingerprints */
			req = requests[i] ? json_object_get(requests[i]) : NULL;
			ln_secrets_redact(req);
		}
		if (!req)
			continue;
		e = json_object_new_object();
		ln_json_add_i64(e, "applied_at", (int64_t)now);
		ln_json_add_str(e, "command", torn_down ? "teardown" : "apply");
		ln_json_add(e, "request", req);
		ln_json_add(nodes, nr->spec->name, e);
	}
}

int ln_state_save_applied(struct ln_run *r, struct json_object *const *requests,
			  struct ln_buf *err)
{
	return update(r, "applied.json", fill_applied, requests, err);
}

/* One node's cached facts within a live facts answer's structure limits
 * and an object; else "no cached facts" for that node alone, said in its
 * reason and as a warning. */
static int cached_entry_ok(struct ln_run *r, struct ln_node_run *nr, struct json_object *facts,
			   const char *path)
{
	static const char *const args[] = { "facts", NULL };
	const struct ln_answer_limits *l = ln_answer_limits_for(args);
	struct ln_buf why = LN_BUF_INIT;
	const char *s = json_object_to_json_string_ext(facts, JSON_C_TO_STRING_PLAIN);
	size_t n = s ? strlen(s) : 0;
	int ok = 0;

	if (!json_object_is_type(facts, json_type_object))
		ln_buf_addstr(&why, "not an object");
	else if (n > l->bytes)
		ln_buf_addf(&why, "%zu bytes, over the facts limit of %zu", n, l->bytes);
	else if (ln_answer_scan(l, s, n, &why) == 0)
		ok = 1;
	if (!ok) {
		ln_buf_addf(&nr->reason, "no cached facts: the entry in '%s' is refused (%s)", path,
			    why.buf);
		ln_run_note(r, LN_LOG_WARN, "%s: %s", nr->spec->name, nr->reason.buf);
	}
	ln_buf_release(&why);
	return ok;
}

int ln_state_run_cached(struct ln_run *r, const struct ln_spec *spec, struct ln_buf *err)
{
	struct json_object *nodes = NULL;
	char *path;
	size_t i;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->log_lock, NULL);
	r->spec = spec;
	r->n = spec->n_nodes;
	r->nodes = calloc(r->n ? r->n : 1, sizeof(*r->nodes));
	path = state_path(spec->cluster, "facts.json", 0, err);
	if (!r->nodes || !path) {
		free(path);
		return -ENOMEM;
	}
	nodes = load_nodes(r, path);
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];
		struct json_object *e = ln_json_at(nodes, spec->nodes[i].name);
		int64_t at = 0;

		nr->idx = i;
		nr->spec = &spec->nodes[i];
		nr->limited = 1;
		ln_buf_init(&nr->reason, 4096);
		ln_buf_init(&nr->skip, 4096);
		if (e && ln_json_at(e, "facts") && ln_json_i64_at(e, "read_at", &at) == 0 &&
		    cached_entry_ok(r, nr, ln_json_at(e, "facts"), path)) {
			nr->state = LN_NODE_OK;
			/* the known fields only, as a live answer's */
			nr->facts = ln_answer_known_facts(ln_json_at(e, "facts"));
			nr->cached_at = (time_t)at;
		} else if (nr->reason.len) {
			nr->state = LN_NODE_PENDING;
		} else {
			nr->state = LN_NODE_PENDING;
			ln_buf_addf(&nr->reason, "no facts on record in '%s'", path);
		}
	}
	json_object_put(nodes);
	free(path);
	return 0;
}

int ln_state_write_retry(const struct ln_run *r, char **path, struct ln_buf *err)
{
	const struct ln_spec *spec = r->spec;
	unsigned char *retry = calloc(r->n ? r->n : 1, 1), *deps = calloc(r->n ? r->n : 1, 1);
	struct ln_buf b = LN_BUF_INIT;
	size_t i, k;
	int rc = -ENOMEM, any = 0;

	*path = state_path(spec->cluster, "retry", 1, err);
	if (!*path || !retry || !deps)
		goto out;
	for (i = 0; i < r->n; i++)
		retry[i] = r->nodes[i].limited && !converged(&r->nodes[i]);
	/* a retried initiator needs its target to allow it (a node silent in
	 * this run had no host NQN to allow): its target node comes along */
	for (k = 0; k < spec->n_initiators; k++) {
		size_t in = spec->initiators[k].node, tn = spec->targets[spec->initiators[k].target].node;

		if (retry[in] && !retry[tn] && r->nodes[tn].limited)
			any |= deps[tn] = 1;
	}
	ln_buf_addf(&b, "# cluster '%s': the nodes to retry, for llmnet apply %s --limit @%s\n",
		    spec->cluster, spec->path, *path);
	rc = ln_nodeset_format(spec, retry, &b);
	if (rc == 0 && any) {
		ln_buf_addstr(&b, "\n# the target nodes they connect to\n");
		rc = ln_nodeset_format(spec, deps, &b);
	}
	if (rc == 0) {
		ln_buf_addch(&b, '\n');
		rc = ln_file_write_atomic(*path, b.buf, b.len, 0600, err);
	}
out:
	free(retry);
	free(deps);
	ln_buf_release(&b);
	return rc;
}
