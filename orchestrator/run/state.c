/* SPDX-License-Identifier: MIT */
/*
 * The controller's memory between runs (state.h): last facts, last applied
 * desired state, the retry file; and what is built from them without a
 * node: facts --cached, and a silent node's plan against its last apply.
 * Each file is one JSON object read whole and written whole (one fsync per
 * run, not one per node: a 1,000-node run pays once).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "orchestrator/run/nodeset.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/state.h"

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
	char *dir = ln_state_dir(), *p = NULL;

	if (!dir || (create && ln_mkdir_p(dir, 0700, err) < 0) ||
	    asprintf(&p, "%s/%s.%s", dir, cluster, what) < 0)
		p = NULL;
	if (!p && !err->len)
		ln_buf_addstr(err, "out of memory");
	free(dir);
	return p;
}

/* The file's "nodes" object (a new empty one when there is no file). A
 * file that cannot be parsed is a warning in r's notes, and treated as
 * empty. */
static struct json_object *load_nodes(struct ln_run *r, const char *path)
{
	struct ln_buf text = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *all = NULL, *nodes = NULL;

	if (ln_file_read(path, &text, &err) == 0 &&
	    ln_json_parse(text.buf, text.len, &all, &err) == 0) {
		nodes = ln_json_at(all, "nodes");
		if (nodes && json_object_is_type(nodes, json_type_object))
			json_object_get(nodes);
		else
			nodes = NULL;
		if (!nodes)
			ln_notes_add(r, LN_LOG_WARN, "ignoring '%s': not a state file", path);
	} else if (text.len) {
		ln_notes_add(r, LN_LOG_WARN, "ignoring '%s': %s", path, err.buf);
	}
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
		  void (*fill)(const struct ln_run *r, struct json_object *nodes, int arg), int arg,
		  struct ln_buf *err)
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

static void fill_facts(const struct ln_run *r, struct json_object *nodes, int arg)
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
		ln_json_add(e, "facts", json_object_get(nr->facts));
		ln_json_add(nodes, nr->spec->name, e);
	}
}

int ln_state_save_facts(struct ln_run *r, struct ln_buf *err)
{
	return update(r, "facts.json", fill_facts, 0, err);
}

static int converged(const struct ln_node_run *nr)
{
	struct json_object *c = nr->answer ? ln_json_at(nr->answer, "converged") : NULL;

	/* a teardown that kept a target did not converge either */
	return nr->state == LN_NODE_OK && nr->applied && !nr->n_failed && !nr->skip.len &&
	       (!c || json_object_get_boolean(c));
}

static void fill_applied(const struct ln_run *r, struct json_object *nodes, int torn_down)
{
	time_t now = time(NULL);
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
			req = ln_plan_request(r, i, LN_PHASE_FULL, NULL);
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

int ln_state_save_applied(struct ln_run *r, int torn_down, struct ln_buf *err)
{
	return update(r, "applied.json", fill_applied, torn_down, err);
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
		if (e && ln_json_at(e, "facts") && ln_json_i64_at(e, "read_at", &at) == 0) {
			nr->state = LN_NODE_OK;
			nr->facts = json_object_get(ln_json_at(e, "facts"));
			nr->cached_at = (time_t)at;
		} else {
			nr->state = LN_NODE_PENDING;
			ln_buf_addf(&nr->reason, "no facts on record in '%s'", path);
		}
	}
	json_object_put(nodes);
	free(path);
	return 0;
}

/* --- a silent node's plan: the desired state now against its last apply --- */

static void change(struct json_object *chs, const char *action, const char *kind,
		   const char *id, const char *detail)
{
	struct json_object *c = json_object_new_object();

	ln_json_add_str(c, "action", action);
	ln_json_add_str(c, "kind", kind);
	ln_json_add_str(c, "id", id);
	if (detail)
		ln_json_add_str(c, "detail", detail);
	json_object_array_add(chs, c);
}

/* The element of array arr equal to v. */
static struct json_object *find_by_value(struct json_object *arr, struct json_object *v)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++)
		if (json_object_equal(json_object_array_get_idx(arr, i), v))
			return json_object_array_get_idx(arr, i);
	return NULL;
}

/* The element of array arr whose key member is val (a string or number). */
static struct json_object *find_by(struct json_object *arr, const char *key, struct json_object *val)
{
	size_t i;

	for (i = 0; arr && json_object_is_type(arr, json_type_array) &&
		    i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		if (json_object_equal(ln_json_at(e, key), val))
			return e;
	}
	return NULL;
}

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/* Does any member other than those in skip differ between a and b? */
static int differs_but(struct json_object *a, struct json_object *b, const char *const *skip)
{
	struct json_object *x = json_object_new_object(), *y = json_object_new_object();
	int d;

	json_object_object_foreach(a, ka, va) {
		if (!in_list(ka, skip))
			json_object_object_add(x, ka, json_object_get(va));
	}
	json_object_object_foreach(b, kb, vb) {
		if (!in_list(kb, skip))
			json_object_object_add(y, kb, json_object_get(vb));
	}
	d = !json_object_equal(x, y);
	json_object_put(x);
	json_object_put(y);
	return d;
}

/* The strings of array a that array b lacks, each as one change. */
static void strings_gone(struct json_object *chs, struct json_object *a, struct json_object *b,
			 const char *action, const char *kind, const char *prefix)
{
	struct ln_buf id = LN_BUF_INIT;
	size_t i;

	for (i = 0; a && json_object_is_type(a, json_type_array) && i < json_object_array_length(a); i++) {
		struct json_object *v = json_object_array_get_idx(a, i);

		if (b && json_object_is_type(b, json_type_array) && find_by_value(b, v))
			continue;
		ln_buf_reset(&id);
		ln_buf_addf(&id, "%s/%s", prefix, json_object_get_string(v));
		change(chs, action, kind, id.buf, NULL);
	}
	ln_buf_release(&id);
}

/* A host's key entry that is new or changed (secrets compared by their
 * fingerprints, hash and group with them): "~ nvmet_host_key HOSTNQN",
 * named as the agent names it (the entry is the node's, not the target's). */
static void diff_host_keys(struct json_object *chs, struct json_object *od, struct json_object *nd)
{
	struct json_object *ok = ln_json_at(od, "keys"), *nk = ln_json_at(nd, "keys");
	int same_params = od && json_object_equal(ln_json_at(od, "hash"), ln_json_at(nd, "hash")) &&
			  json_object_equal(ln_json_at(od, "dhgroup"), ln_json_at(nd, "dhgroup"));
	size_t i;

	for (i = 0; nk && json_object_is_type(nk, json_type_array) &&
		    i < json_object_array_length(nk); i++) {
		struct json_object *e = json_object_array_get_idx(nk, i);
		struct json_object *was = find_by(ok, "host", ln_json_at(e, "host"));

		if (was && same_params && json_object_equal(was, e))
			continue;
		change(chs, was ? "change" : "create", "nvmet_host_key", ln_json_str_at(e, "host"),
		       NULL);
	}
}

static void diff_target(struct json_object *chs, struct json_object *o, struct json_object *n)
{
	static const char *const own[] = { "hosts", "namespaces", "dhchap", NULL };
	struct json_object *oh = ln_json_at(o, "hosts"), *nh = ln_json_at(n, "hosts");
	struct json_object *ons = ln_json_at(o, "namespaces"), *nns = ln_json_at(n, "namespaces");
	const char *nqn = ln_json_str_at(n, "nqn");
	struct ln_buf id = LN_BUF_INIT;
	size_t i;

	if (differs_but(o, n, own))
		change(chs, "change", "nvmet_port", nqn, "transport, address or service");
	if (json_object_is_type(oh, json_type_string) != json_object_is_type(nh, json_type_string))
		change(chs, json_object_is_type(nh, json_type_string) ? "create" : "remove",
		       "nvmet_allow_any_host", nqn, NULL);
	strings_gone(chs, nh, oh, "create", "nvmet_allowed_host", nqn);
	strings_gone(chs, oh, nh, "remove", "nvmet_allowed_host", nqn);
	diff_host_keys(chs, ln_json_at(o, "dhchap"), ln_json_at(n, "dhchap"));
	for (i = 0; nns && i < json_object_array_length(nns); i++) {
		struct json_object *ns = json_object_array_get_idx(nns, i);
		struct json_object *was = find_by(ons, "nsid", ln_json_at(ns, "nsid"));

		ln_buf_reset(&id);
		ln_buf_addf(&id, "%s/%s", nqn, json_object_get_string(ln_json_at(ns, "nsid")));
		if (!was)
			change(chs, "create", "nvmet_namespace", id.buf, NULL);
		else if (!json_object_equal(was, ns))
			change(chs, "change", "nvmet_namespace", id.buf, NULL);
	}
	for (i = 0; ons && i < json_object_array_length(ons); i++) {
		struct json_object *ns = json_object_array_get_idx(ons, i);

		if (find_by(nns, "nsid", ln_json_at(ns, "nsid")))
			continue;
		ln_buf_reset(&id);
		ln_buf_addf(&id, "%s/%s", nqn, json_object_get_string(ln_json_at(ns, "nsid")));
		change(chs, "remove", "nvmet_namespace", id.buf, NULL);
	}
	ln_buf_release(&id);
}

/* Entries of a keyed list: + for new keys, - for gone ones, and for kept
 * ones diff (or a ~ of kind when diff is NULL and they differ). */
static void diff_list(struct json_object *chs, struct json_object *old, struct json_object *now,
		      const char *key, const char *kind,
		      void (*diff)(struct json_object *chs, struct json_object *o, struct json_object *n))
{
	size_t i;

	for (i = 0; now && json_object_is_type(now, json_type_array) && i < json_object_array_length(now); i++) {
		struct json_object *n = json_object_array_get_idx(now, i);
		struct json_object *o = find_by(old, key, ln_json_at(n, key));
		const char *id = ln_json_str_at(n, key);

		if (!o)
			change(chs, "create", kind, id, NULL);
		else if (diff)
			diff(chs, o, n);
		else if (!json_object_equal(o, n))
			change(chs, "change", kind, id, NULL);
	}
	for (i = 0; old && json_object_is_type(old, json_type_array) && i < json_object_array_length(old); i++) {
		struct json_object *o = json_object_array_get_idx(old, i);

		if (!find_by(now, key, ln_json_at(o, key)))
			change(chs, "remove", kind, ln_json_str_at(o, key), NULL);
	}
}

/*
 * The change list that takes a node from the desired state recorded at
 * its last apply (old) to the desired state now (now), in the agent's
 * kinds: what apply would do if the node still holds what it was given.
 */
static struct json_object *diff_requests(struct json_object *old, struct json_object *now)
{
	struct json_object *ans = json_object_new_object(), *chs = json_object_new_array();
	struct json_object *ohf = ln_json_at(old, "hostfile"), *nhf = ln_json_at(now, "hostfile");
	const char *op = ln_json_str_at(ohf, "path"), *np = ln_json_str_at(nhf, "path");

	diff_list(chs, ln_json_at(old, "targets"), ln_json_at(now, "targets"), "nqn",
		  "nvmet_subsystem", diff_target);
	diff_list(chs, ln_json_at(old, "initiators"), ln_json_at(now, "initiators"), "target",
		  "nvme_connection", NULL);
	if (op && (!np || strcmp(op, np)))
		change(chs, "remove", "hostfile", op, NULL);
	if (np && (!op || strcmp(op, np)))
		change(chs, "create", "hostfile", np, NULL);
	else if (np && !json_object_equal(ohf, nhf))
		change(chs, "change", "hostfile", np, NULL);
	ln_json_add(ans, "changes", chs);
	return ans;
}

int ln_state_plan_silent(struct ln_run *r, struct ln_buf *err)
{
	struct json_object *applied = NULL, *facts = NULL;
	char *apath = NULL, *fpath = NULL;
	size_t i;
	int any = 0, rc = 0;

	for (i = 0; i < r->n; i++)
		any |= r->nodes[i].state == LN_NODE_UNREACHABLE || r->nodes[i].state == LN_NODE_REFUSED;
	if (!any)
		return 0;
	apath = state_path(r->spec->cluster, "applied.json", 0, err);
	fpath = state_path(r->spec->cluster, "facts.json", 0, err);
	if (!apath || !fpath) {
		rc = -ENOMEM;
		goto out;
	}
	applied = load_nodes(r, apath);
	facts = load_nodes(r, fpath);
	/* A silent target node keeps the hosts its last-known facts allow
	 * (plan.c keeps a silent initiator's access the same way). */
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];

		if ((nr->state == LN_NODE_UNREACHABLE || nr->state == LN_NODE_REFUSED) && !nr->facts)
			nr->facts = json_object_get(ln_json_at(ln_json_at(facts, nr->spec->name), "facts"));
	}
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];
		struct json_object *e = ln_json_at(applied, nr->spec->name), *now;
		int64_t at = 0;

		if (nr->state != LN_NODE_UNREACHABLE && nr->state != LN_NODE_REFUSED)
			continue;
		if (!e || ln_json_i64_at(e, "applied_at", &at) < 0)
			continue;
		now = ln_plan_request(r, i, LN_PHASE_FULL, NULL);
		if (!now) {
			rc = -ENOMEM;
			goto out;
		}
		/* compared with the recorded request, fingerprint to fingerprint */
		ln_secrets_redact(now);
		json_object_put(nr->answer);
		nr->answer = diff_requests(ln_json_at(e, "request"), now);
		nr->cached_at = (time_t)at;
		json_object_put(now);
	}
out:
	json_object_put(applied);
	json_object_put(facts);
	free(apath);
	free(fpath);
	return rc;
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
