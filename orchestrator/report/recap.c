/* SPDX-License-Identifier: MIT */
/*
 * The renderers of facts, plan and recap (recap.h). Each writes through a
 * sink, the caller's buffer and the first append that failed, so a long
 * rendering needs no check per line and still says it is incomplete.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/escape.h"
#include "common/json.h"
#include "orchestrator/report/recap.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/state.h"
#include "orchestrator/transport/fanout.h"

struct sink {
	struct ln_buf *b;
	int rc;		/* 0, or the code of the first append that failed */
};

__attribute__((format(printf, 2, 0)))
static void vput(struct sink *out, const char *fmt, va_list ap)
{
	int r = ln_buf_vaddf(out->b, fmt, ap);

	if (r < 0 && !out->rc)
		out->rc = r;
}

__attribute__((format(printf, 2, 3)))
static void put(struct sink *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vput(out, fmt, ap);
	va_end(ap);
}

/* The optional counts of a closing line (plan's, apply's): fmt and its
 * arguments when n is not 0. */
__attribute__((format(printf, 3, 4)))
static void put_count(struct sink *out, int n, const char *fmt, ...)
{
	va_list ap;

	if (!n)
		return;
	va_start(ap, fmt);
	vput(out, fmt, ap);
	va_end(ap);
}

/* A string a node sent, escaped (escape.h), then padded with spaces to
 * width columns (0: none). A node's strings never reach the terminal raw:
 * a forged newline, a window title or an erased line stay text. */
static void put_esc(struct sink *out, const char *s, int width)
{
	size_t start = out->b->len;
	int r = ln_escape_str(out->b, s);

	while (r >= 0 && out->b->len - start < (size_t)width)
		r = ln_buf_addch(out->b, ' ');
	if (r < 0 && !out->rc)
		out->rc = r;
}

/* put_esc() of s[0..n), unpadded. */
static void put_escn(struct sink *out, const char *s, size_t n)
{
	int r = ln_escape(out->b, s, n);

	if (r < 0 && !out->rc)
		out->rc = r;
}

/* A row of facts: lead, then each of n columns escaped and padded to its
 * width (0: none), one space apart, then a newline. */
static void put_row(struct sink *out, const char *lead, const char *const *col, const int *width,
		    size_t n)
{
	size_t k;

	put(out, "%s", lead);
	for (k = 0; k < n; k++) {
		put_esc(out, col[k], width[k]);
		put(out, k + 1 < n ? " " : "\n");
	}
}

/* A whole JSON document, pretty, which is then dropped. */
static void put_json(struct sink *out, struct json_object *all)
{
	int r = ln_json_write(all, 1, out->b);

	if (r < 0 && !out->rc)
		out->rc = r;
	json_object_put(all);
}

/* --- facts ---------------------------------------------------------------- */

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return NULL;
	return json_object_get_string(v);
}

/* The node's "persistent" for cluster (agents/agent/converge/persist.c): its
 * owned record's, else "no", or "unsupported" where systemd does not run. */
static const char *persistent(const struct ln_node_run *nr, const char *cluster)
{
	struct json_object *c = ln_json_at(ln_json_at(nr->facts, "owned"), cluster);
	struct json_object *sd = ln_json_at(nr->facts, "systemd");

	if (c && jstr(c, "persistent"))
		return jstr(c, "persistent");
	if (!sd)
		return "unknown";
	return json_object_get_boolean(sd) ? "no" : "unsupported";
}

static void print_node_facts(const struct ln_node_run *nr, const char *cluster,
			     struct sink *out)
{
	struct json_object *rdma, *nvme, *gpus, *models;
	size_t i, j;

	put(out, "%s (%s)\n", nr->spec->name, nr->spec->address);
	if (nr->state != LN_NODE_OK) {
		put(out, "  %s: ", ln_node_state_name(nr->state));
		put_esc(out, nr->reason.buf, 0);
		put(out, "\n\n");
		return;
	}
	if (nr->cached_at) {
		char when[64];

		ln_state_when(nr->cached_at, when, sizeof(when));
		put(out, "  cached     read %s (not contacted now)\n", when);
	}
	put(out, "  host nqn   ");
	put_esc(out, jstr(nr->facts, "host_nqn") ? jstr(nr->facts, "host_nqn") : "(none)", 0);
	put(out, "\n");
	gpus = ln_json_at(nr->facts, "gpus");
	models = ln_json_at(gpus, "models");
	put(out, "  persistent ");
	put_esc(out, persistent(nr, cluster), 0);
	put(out, "\n");
	put(out, "  gpus       ");
	put_esc(out, jstr(gpus, "count") ? jstr(gpus, "count") : "unknown", 0);
	if (models && json_object_array_length(models)) {
		put(out, " (");
		put_esc(out, json_object_get_string(json_object_array_get_idx(models, 0)), 0);
		put(out, ")");
	}
	if (jstr(gpus, "source") && !strcmp(jstr(gpus, "source"), "nvml")) {
		put(out, " by NVML, driver ");
		put_esc(out, jstr(gpus, "driver_version") ? jstr(gpus, "driver_version") : "unknown", 0);
		put(out, ", CUDA ");
		put_esc(out, jstr(gpus, "cuda_version") ? jstr(gpus, "cuda_version") : "unknown", 0);
	}
	put(out, ", spec expects %u\n", nr->spec->gpus);
	rdma = ln_json_at(nr->facts, "rdma");
	put(out, "  rdma       %-12s %-5s %-8s %-10s %-6s\n", "DEVICE", "PORT", "STATE", "RATE", "MTU");
	for (i = 0; rdma && json_object_is_type(rdma, json_type_array) && i < json_object_array_length(rdma); i++) {
		struct json_object *d = json_object_array_get_idx(rdma, i), *ports = ln_json_at(d, "ports");

		for (j = 0; ports && j < json_object_array_length(ports); j++) {
			struct json_object *p = json_object_array_get_idx(ports, j);
			static const int width[] = { 12, 5, 8, 10, 6 };
			const char *col[] = { jstr(d, "device") ? jstr(d, "device") : "?",
					      jstr(p, "port") ? jstr(p, "port") : "?",
					      jstr(p, "state") ? jstr(p, "state") : "?",
					      jstr(p, "rate_gbps") ? jstr(p, "rate_gbps") : "?",
					      jstr(p, "active_mtu") ? jstr(p, "active_mtu") : "?" };

			put_row(out, "             ", col, width, 5);
		}
	}
	if (!rdma || !json_object_array_length(rdma))
		put(out, "             (no RDMA devices)\n");
	nvme = ln_json_at(nr->facts, "nvme");
	put(out, "  nvme-of    %-8s %-6s %-22s %-8s %s\n", "CTRL", "TRANS", "ADDRESS", "STATE", "SUBSYSTEM");
	for (i = 0; nvme && json_object_is_type(nvme, json_type_array) && i < json_object_array_length(nvme); i++) {
		struct json_object *c = json_object_array_get_idx(nvme, i);
		char addr[96];
		const char *tr = jstr(c, "transport");

		if (tr && !strcmp(tr, "pcie"))
			continue;
		snprintf(addr, sizeof(addr), "%s:%s", jstr(c, "address") ? jstr(c, "address") : "?",
			 jstr(c, "service") ? jstr(c, "service") : "?");
		put_row(out, "             ", (const char *const[]){ jstr(c, "name") ? jstr(c, "name") : "(null)",
			tr ? tr : "?", addr, jstr(c, "state") ? jstr(c, "state") : "?",
			jstr(c, "subsysnqn") ? jstr(c, "subsysnqn") : "?" },
			(const int[]){ 8, 6, 22, 8, 0 }, 5);
	}
	put(out, "\n");
}

int ln_recap_facts(const struct ln_run *r, int json, struct ln_buf *b)
{
	struct json_object *all = NULL, *nodes = NULL;
	struct sink out[1] = { { b, 0 } };
	size_t i;

	if (!json) {
		for (i = 0; i < r->n; i++)
			print_node_facts(&r->nodes[i], r->spec->cluster, out);
		return out->rc;
	}
	all = json_object_new_object();
	nodes = json_object_new_object();
	ln_json_add_str(all, "cluster", r->spec->cluster);
	for (i = 0; i < r->n; i++) {
		const struct ln_node_run *nr = &r->nodes[i];
		struct json_object *o = json_object_new_object();

		ln_json_add_str(o, "state", ln_node_state_name(nr->state));
		ln_json_add_str(o, "address", nr->spec->address);
		if (nr->cached_at) {
			ln_json_add_i64(o, "read_at", (int64_t)nr->cached_at);
			ln_json_add_i64(o, "age_s", (int64_t)difftime(time(NULL), nr->cached_at));
		}
		if (nr->state == LN_NODE_OK)
			ln_json_add(o, "facts", json_object_get(nr->facts));
		else
			ln_json_add_str(o, "error", nr->reason.buf);
		ln_json_add(nodes, nr->spec->name, o);
	}
	ln_json_add(all, "nodes", nodes);
	put_json(out, all);
	return out->rc;
}

/* --- plan ----------------------------------------------------------------- */

static char sign_of(const char *action)
{
	if (!strcmp(action, "create"))
		return '+';
	if (!strcmp(action, "change"))
		return '~';
	if (!strcmp(action, "remove"))
		return '-';
	return ' ';
}

static void print_changes(struct sink *out, struct json_object *answer, const char *indent)
{
	struct json_object *ch = ln_json_at(answer, "changes");
	size_t i;

	for (i = 0; ch && json_object_is_type(ch, json_type_array) && i < json_object_array_length(ch); i++) {
		struct json_object *c = json_object_array_get_idx(ch, i);
		const char *a = ln_json_str_at(c, "action"), *d = ln_json_str_at(c, "detail"), *e = ln_json_str_at(c, "error");

		if (!a || (!strcmp(a, "ok") && !e))
			continue;
		put(out, "%s%c ", indent, e ? '!' : sign_of(a));
		put_esc(out, ln_json_str_at(c, "kind") ? ln_json_str_at(c, "kind") : "(null)", 22);
		put(out, " ");
		put_esc(out, ln_json_str_at(c, "id") ? ln_json_str_at(c, "id") : "(null)", 0);
		if (d) {
			put(out, "  (");
			put_esc(out, d, 0);
			put(out, ")");
		}
		if (e) {
			put(out, "  error: ");
			put_esc(out, e, 0);
		}
		put(out, "\n");
	}
}

/* Allowed hosts a plan removes: connections from them stay until they go. */
static void removed_host_warnings(struct ln_node_run *nr, struct ln_buf *w)
{
	struct json_object *ch = ln_json_at(nr->answer, "changes");
	size_t i;

	for (i = 0; ch && json_object_is_type(ch, json_type_array) && i < json_object_array_length(ch); i++) {
		struct json_object *c = json_object_array_get_idx(ch, i);
		const char *a = ln_json_str_at(c, "action"), *k = ln_json_str_at(c, "kind"), *id = ln_json_str_at(c, "id");
		const char *slash;

		if (!a || !k || !id || strcmp(a, "remove") || strcmp(k, "nvmet_allowed_host"))
			continue;
		slash = strchr(id, '/');
		ln_buf_addf(w, "'%s' loses access to '%.*s' on '%s'; connections it already has stay "
			    "open until that host disconnects\n", slash ? slash + 1 : id,
			    slash ? (int)(slash - id) : (int)strlen(id), id, nr->spec->name);
	}
}

/* Count node i's planned changes into sum; fill blocked (allowed hosts
 * kept for silent initiators) and add its warnings to w. Returns 1 when
 * the node has changes pending. */
static int count_node(struct ln_run *r, size_t i, struct ln_buf *blocked, struct ln_buf *w,
		      struct ln_plan_summary *sum)
{
	struct ln_node_run *nr = &r->nodes[i];
	int c = 0, ch = 0, rm = 0, ok = 0, e = 0, pending;

	ln_buf_reset(blocked);
	if (nr->state == LN_NODE_OK) {
		ln_plan_count(nr->answer, &c, &ch, &rm, &ok, &e);
		/* regenerate the lines of allowed hosts kept for silent initiators */
		json_object_put(ln_plan_request(r, i, LN_PHASE_FULL, blocked));
		removed_host_warnings(nr, w);
		ln_plan_agent_warnings(nr, w);
	}
	pending = c + ch + rm + e > 0;
	if (nr->state == LN_NODE_OK) {
		sum->create += c;
		sum->change += ch;
		sum->remove += rm;
		sum->ok += ok;
		sum->error += e;
		if (pending)
			sum->nodes_changing++;
		if (pending && !nr->limited)
			sum->nodes_pending_limit++;
	} else if (nr->state == LN_NODE_FAILED) {
		sum->nodes_failed++;
	} else {
		sum->nodes_unreachable++;
		ln_plan_count(nr->answer, &c, &ch, &rm, &ok, &e);
		sum->nodes_last_known += nr->cached_at && c + ch + rm > 0;
	}
	return pending;
}

static struct json_object *node_json(const struct ln_node_run *nr, int pending,
				     const struct ln_buf *blocked)
{
	struct json_object *o = json_object_new_object();

	ln_json_add_str(o, "state", ln_node_state_name(nr->state));
	ln_json_add_bool(o, "limited", nr->limited);
	if (nr->state == LN_NODE_OK) {
		struct json_object *chs = ln_json_at(nr->answer, "changes");

		ln_json_add(o, "changes", chs ? json_object_get(chs) : json_object_new_array());
		if (pending && !nr->limited)
			ln_json_add_str(o, "note", "pending (outside --limit)");
		if (blocked->len)
			ln_json_add_str(o, "blocked", blocked->buf);
	} else {
		ln_json_add_str(o, "error", nr->reason.buf);
		if (nr->cached_at && nr->answer) {
			struct json_object *lk = json_object_new_object();

			ln_json_add_i64(lk, "applied_at", (int64_t)nr->cached_at);
			ln_json_add(lk, "changes", json_object_get(ln_json_at(nr->answer, "changes")));
			ln_json_add(o, "last_known", lk);
		}
	}
	return o;
}

/* A silent node: what it would get against its last-known state (from
 * the state folder, state.h), marked as such. */
static void print_last_known(struct sink *out, const struct ln_node_run *nr)
{
	int c, ch, rm, ok, e;
	char when[64];

	if (nr->state != LN_NODE_UNREACHABLE && nr->state != LN_NODE_REFUSED)
		return;
	if (!nr->cached_at || !nr->answer) {
		put(out, "  (no applied state on record: cannot plan it from its last-known state)\n");
		return;
	}
	ln_state_when(nr->cached_at, when, sizeof(when));
	ln_plan_count(nr->answer, &c, &ch, &rm, &ok, &e);
	if (c + ch + rm == 0) {
		put(out, "  last-known state (applied %s): no changes\n", when);
		return;
	}
	put(out, "  last-known state (applied %s), not read now:\n", when);
	print_changes(out, nr->answer, "  ");
}

static void print_node(struct sink *out, const struct ln_node_run *nr, int pending,
		       const struct ln_buf *blocked)
{
	char *p, *nl;

	if (nr->state != LN_NODE_OK) {
		put(out, "%s: %s: ", nr->spec->name, ln_node_state_name(nr->state));
		put_esc(out, nr->reason.buf, 0);
		put(out, "\n");
		print_last_known(out, nr);
		return;
	}
	if (!pending && !blocked->len) {
		put(out, "%s: no changes\n", nr->spec->name);
		return;
	}
	put(out, "%s:%s\n", nr->spec->name,
		pending && !nr->limited ? " pending (outside --limit)" : "");
	print_changes(out, nr->answer, "  ");
	for (p = blocked->buf; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		put(out, "  ");
		put_escn(out, p, (size_t)(nl - p));
		put(out, "\n");
	}
}

static void write_plan_json(struct sink *out, struct json_object *all, struct json_object *nodes,
			    struct json_object *warn, const struct ln_buf *w,
			    const struct ln_plan_summary *sum)
{
	struct json_object *s = json_object_new_object();
	char *p, *nl;

	for (p = w->buf; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		json_object_array_add(warn, json_object_new_string_len(p, (int)(nl - p)));
	}
	ln_json_add_counts(s, sum->create, sum->change, sum->remove, sum->ok, sum->error);
	ln_json_add_i64(s, "nodes_changing", sum->nodes_changing);
	ln_json_add_i64(s, "nodes_pending_outside_limit", sum->nodes_pending_limit);
	ln_json_add_i64(s, "nodes_unreachable", sum->nodes_unreachable);
	ln_json_add_i64(s, "nodes_failed", sum->nodes_failed);
	ln_json_add_i64(s, "nodes_last_known_changing", sum->nodes_last_known);
	ln_json_add(all, "nodes", nodes);
	ln_json_add(all, "warnings", warn);
	ln_json_add(all, "summary", s);
	put_json(out, all);
}

/* The closing line; the warnings w holds go to r's notes, for the
 * command to print between the nodes and this line. */
static void print_summary(struct ln_run *r, struct sink *out, const struct ln_buf *w,
			  const struct ln_plan_summary *sum)
{
	size_t n = r->n;
	char *p, *nl;

	for (p = w->buf; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		ln_run_note(r, LN_LOG_WARN, "%.*s", (int)(nl - p), p);
	}
	put(out, "\nPlan: %d to create, %d to change, %d to remove on %d of %zu nodes",
		sum->create, sum->change, sum->remove, sum->nodes_changing, n);
	put_count(out, sum->nodes_pending_limit, "; %d pending (outside --limit)",
		       sum->nodes_pending_limit);
	put_count(out, sum->nodes_unreachable, "; %d unreachable", sum->nodes_unreachable);
	put_count(out, sum->nodes_last_known, " (%d with changes against their last-known state)",
		       sum->nodes_last_known);
	put_count(out, sum->nodes_failed, "; %d failed", sum->nodes_failed);
	put(out, ".\n");
}

int ln_recap_plan(struct ln_run *r, int json, struct ln_buf *b, struct ln_buf *tail,
		  struct ln_plan_summary *sum)
{
	struct json_object *all = NULL, *nodes = NULL, *warn = NULL;
	struct ln_buf w = LN_BUF_INIT, blocked = LN_BUF_INIT;
	struct sink out[1] = { { b, 0 } }, end[1] = { { tail, 0 } };
	size_t i;

	memset(sum, 0, sizeof(*sum));
	if (json) {
		all = json_object_new_object();
		nodes = json_object_new_object();
		warn = json_object_new_array();
		ln_json_add_str(all, "cluster", r->spec->cluster);
	}
	for (i = 0; i < r->n; i++) {
		int pending = count_node(r, i, &blocked, &w, sum);

		if (json)
			ln_json_add(nodes, r->nodes[i].spec->name, node_json(&r->nodes[i], pending, &blocked));
		else
			print_node(out, &r->nodes[i], pending, &blocked);
	}
	if (json)
		write_plan_json(out, all, nodes, warn, &w, sum);
	else
		print_summary(r, end, &w, sum);
	ln_buf_release(&w);
	ln_buf_release(&blocked);
	return out->rc < 0 ? out->rc : end->rc;
}

/* --- recap ---------------------------------------------------------------- */

/* The recap's totals over all nodes. */
struct recap {
	int code, changed, failed, pending, unreachable, skipped, stopped, kept;
};

/* A node's recap entry in JSON. */
static struct json_object *recap_node_json(const struct ln_node_run *nr, int fl, int sk, int unr,
					   int pend, int kept, const char *why)
{
	struct json_object *o = json_object_new_object();

	ln_json_add_str(o, "state", ln_node_state_name(nr->state));
	ln_json_add_i64(o, "ok", nr->n_ok);
	ln_json_add_i64(o, "changed", nr->n_changed);
	ln_json_add_i64(o, "failed", fl);
	ln_json_add_i64(o, "skipped", sk);
	ln_json_add_i64(o, "unreachable", unr);
	ln_json_add_bool(o, "pending_outside_limit", pend);
	ln_json_add_i64(o, "kept", kept);
	ln_json_add_double(o, "seconds", nr->seconds);
	if (why)
		ln_json_add_str(o, "reason", why);
	if (nr->answer)
		ln_json_add(o, "last_answer", json_object_get(nr->answer));
	return o;
}

/* The changes that failed in a node's last answer, one line each. */
static void print_failed_changes(struct sink *out, const struct ln_node_run *nr, int w)
{
	struct json_object *chs = NULL;
	size_t j;

	json_object_object_get_ex(nr->answer, "changes", &chs);
	for (j = 0; chs && j < json_object_array_length(chs); j++) {
		struct json_object *c = json_object_array_get_idx(chs, j), *e = NULL, *id = NULL;

		if (json_object_object_get_ex(c, "error", &e)) {
			json_object_object_get_ex(c, "id", &id);
			put(out, "%*s   ! ", w, "");
			put_esc(out, json_object_get_string(id), 0);
			put(out, ": ");
			put_esc(out, json_object_get_string(e), 0);
			put(out, "\n");
		}
	}
}

/* The targets a teardown kept on a node (its answer's "kept"): their
 * count, and with out, one line each. */
static int kept_targets(struct sink *out, const struct ln_node_run *nr, int w)
{
	struct json_object *kept = nr->answer ? ln_json_at(nr->answer, "kept") : NULL;
	size_t j, n = kept && json_object_is_type(kept, json_type_array) ?
			      json_object_array_length(kept) : 0;

	for (j = 0; out && j < n; j++) {
		struct json_object *e = json_object_array_get_idx(kept, j);

		put(out, "%*s   kept: ", w, "");
		put_esc(out, ln_json_str_at(e, "reason"), 0);
		put(out, "; target '");
		put_esc(out, ln_json_str_at(e, "nqn"), 0);
		put(out, "' stays (--force removes it)\n");
	}
	return (int)n;
}

static void print_totals(struct sink *out, const char *verb, size_t n, const struct recap *t)
{
	put(out, "\n%s: %d changed on %zu nodes", verb, t->changed, n);
	put_count(out, t->failed, ", %d failed", t->failed);
	put_count(out, t->unreachable, ", %d unreachable", t->unreachable);
	put_count(out, t->skipped, ", %d skipped", t->skipped);
	put_count(out, t->pending, ", %d pending (outside --limit)", t->pending);
	put_count(out, t->kept, ", %d target%s kept", t->kept, t->kept == 1 ? "" : "s");
	if (ln_fanout_interrupted())
		put(out, "; interrupted");
	if (t->stopped)
		put(out, "; rollout stopped");
	put(out, "; %s.\n", t->code == LN_EXIT_OK ? "converged" : "not converged");
}

static void write_totals_json(struct sink *out, struct json_object *all, struct json_object *nodes,
			      const struct recap *t)
{
	ln_json_add(all, "nodes", nodes);
	ln_json_add_i64(all, "changed", t->changed);
	ln_json_add_i64(all, "kept", t->kept);
	ln_json_add_bool(all, "converged", t->code == LN_EXIT_OK);
	ln_json_add_bool(all, "interrupted", ln_fanout_interrupted());
	ln_json_add_bool(all, "rollout_stopped", t->stopped);
	ln_json_add_i64(all, "exit", t->code);
	put_json(out, all);
}

int ln_recap_apply(struct ln_run *r, const char *verb, int json, struct ln_buf *b, int *code)
{
	struct json_object *all = NULL, *nodes = NULL;
	struct recap t = { LN_EXIT_OK, 0, 0, 0, 0, 0, r->rollout_stopped, 0 };
	struct sink out[1] = { { b, 0 } };
	size_t i, w = 4;

	for (i = 0; i < r->n; i++)
		if (strlen(r->nodes[i].spec->name) > w)
			w = strlen(r->nodes[i].spec->name);
	if (json) {
		all = json_object_new_object();
		nodes = json_object_new_object();
		ln_json_add_str(all, "cluster", r->spec->cluster);
		ln_json_add_str(all, "command", verb);
	} else {
		put(out, "\nRECAP\n");
	}
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];
		int unr = nr->state == LN_NODE_UNREACHABLE || nr->state == LN_NODE_REFUSED;
		int sk, fl, pend, kept = kept_targets(NULL, nr, 0);
		const char *why;

		if (ln_fanout_interrupted() && nr->state == LN_NODE_OK && !nr->applied &&
		    !nr->skip.len && nr->limited)
			ln_buf_addstr(&nr->skip, "not started: interrupted");
		sk = nr->skip.len > 0 || nr->state == LN_NODE_INTERRUPTED;
		fl = nr->n_failed + (nr->state == LN_NODE_FAILED);
		pend = nr->state == LN_NODE_OK && !nr->limited && ln_plan_pending(nr);
		why = nr->state != LN_NODE_OK ? nr->reason.buf : sk ? nr->skip.buf :
		      pend ? "pending (outside --limit)" : NULL;

		t.code = ln_exit_merge(t.code, ln_node_state_exit(nr->state));
		if (fl || sk || pend)
			t.code = ln_exit_merge(t.code, LN_EXIT_FAILED);
		/* storage kept under an initiator: as for a node not reached */
		if (kept)
			t.code = ln_exit_merge(t.code, LN_EXIT_UNREACHABLE);
		t.kept += kept;
		t.changed += nr->n_changed;
		t.failed += fl;
		t.pending += pend;
		t.unreachable += unr;
		t.skipped += sk;
		if (json) {
			ln_json_add(nodes, nr->spec->name, recap_node_json(nr, fl, sk, unr, pend, kept, why));
			continue;
		}
		put(out, "%-*s : ok=%-4d changed=%-4d failed=%-3d skipped=%-2d unreachable=%d%s",
			(int)w, nr->spec->name, nr->n_ok, nr->n_changed, fl, sk, unr, why ? "  " : "");
		put_esc(out, why, 0);
		put(out, "\n");
		if (nr->n_failed)
			print_failed_changes(out, nr, (int)w);
		kept_targets(out, nr, (int)w);
	}
	if (ln_fanout_interrupted())
		t.code = ln_exit_merge(t.code, LN_EXIT_FAILED);
	if (t.stopped)
		t.code = ln_exit_merge(t.code, LN_EXIT_STOPPED);
	if (json)
		write_totals_json(out, all, nodes, &t);
	else
		print_totals(out, verb, r->n, &t);
	ln_run_log(r, "%s finished: %d changed, %d failed, %d unreachable, %d skipped, %d pending, "
		   "%d kept, exit %d%s", verb, t.changed, t.failed, t.unreachable, t.skipped, t.pending,
		   t.kept, t.code,
		   ln_fanout_interrupted() ? " (interrupted)" : "");
	*code = t.code;
	return out->rc;
}
