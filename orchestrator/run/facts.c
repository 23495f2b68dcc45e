/* SPDX-License-Identifier: MIT */
/*
 * The facts phase, the first of every command after the run record is
 * set up: connect to each node, make sure its agent is current, and read
 * its facts, all through the fan-out window. Also the facts' readers
 * (host NQN) and the `llmnet facts` printout.
 */
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/state.h"
#include "orchestrator/transport/fanout.h"

int ln_facts_read(struct ln_run *r, struct ln_node_run *nr, struct ln_buf *err)
{
	static const char *const args[] = { LN_VERB_FACTS, NULL };
	struct json_object *facts = NULL;
	int rc;

	rc = ln_run_session(r, nr, err);
	if (rc == 0)
		rc = ln_agent_call(nr->s, args, NULL, 0, &facts, NULL, err);
	if (rc < 0)
		return rc;
	json_object_put(nr->facts);
	nr->facts = facts;
	return 0;
}

struct reread_ctx {
	struct ln_run *r;
	unsigned char *sel;
};

static int reread_one(void *vctx, size_t i, struct ln_buf *line)
{
	struct reread_ctx *rc = vctx;
	struct ln_buf e = LN_BUF_INIT;

	(void)line;
	if (ln_facts_read(rc->r, &rc->r->nodes[i], &e) < 0) {
		ln_warn("cannot re-read facts of '%s': %s", rc->r->nodes[i].spec->name, e.buf);
		rc->sel[i] = 0;	/* only this worker touches item i */
	}
	ln_buf_release(&e);
	return 0;
}

int ln_facts_reread(struct ln_run *r, unsigned char *sel)
{
	struct reread_ctx rc = { r, sel };
	struct ln_fanout f = { "facts", r->n, sel, r->parallel, reread_one, &rc, 1 };
	struct ln_fanout_result res;
	size_t i;
	int e;

	e = ln_fanout_run(&f, &res);
	if (e < 0)
		return e;
	for (i = 0; i < r->n; i++)
		if (sel[i] && !res.started[i])
			sel[i] = 0;
	ln_fanout_result_release(&res);
	return 0;
}

static int gather_one(void *ctx, size_t i, struct ln_buf *line)
{
	struct ln_run *r = ctx;
	struct ln_node_run *nr = &r->nodes[i];
	struct ln_buf err = LN_BUF_INIT;
	double t0 = ln_now_s();
	int rc;

	rc = ln_run_session(r, nr, &err);
	if (rc == 0)
		rc = ln_agent_ensure(nr->s, &r->img, &nr->pushed, &err);
	if (rc == 0) {
		json_object_put(nr->facts);
		nr->facts = NULL;
		rc = ln_facts_read(r, nr, &err);
	}
	nr->seconds += ln_now_s() - t0;
	if (rc < 0) {
		/* A timeout always comes with a message, so err is empty only
		 * for codes that need no phase named. */
		ln_run_node_failed(nr, ln_node_state_of(rc), rc, err.len ? err.buf : ln_strerror(rc),
				   "facts", line);
		ln_run_log(r, "%s %s: %s", nr->spec->name, ln_node_state_name(nr->state),
			   nr->reason.buf);
		ln_ssh_close(nr->s);
		nr->s = NULL;
	} else {
		nr->state = LN_NODE_OK;
		ln_buf_addf(line, "%-12s %s%s (%.2fs)", "facts", nr->spec->name,
			    nr->pushed ? ", agent pushed" : "", ln_now_s() - t0);
		if (nr->pushed)
			ln_run_log(r, "%s: agent %.12s pushed", nr->spec->name, r->img.sha256);
	}
	ln_buf_release(&err);
	return rc;
}

/* What the agent's facts say of the node's host identity files when they
 * are not valid (host_nqn null then: the node is left out of its targets'
 * hosts, so the reason is said once, on stderr and in the run log). */
static void identity_warnings(struct ln_run *r, const struct ln_node_run *nr)
{
	struct json_object *ws = ln_json_at(nr->facts, "warnings");
	size_t i;

	for (i = 0; ws && json_object_is_type(ws, json_type_array) &&
		    i < json_object_array_length(ws); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(ws, i));

		if (!s || strncmp(s, "/etc/nvme/host", 14))
			continue;
		ln_warn("%s: %s", nr->spec->name, s);
		ln_run_log(r, "warning %s: %s", nr->spec->name, s);
	}
}

int ln_facts_gather(struct ln_run *r)
{
	struct ln_fanout f = { "facts", r->n, NULL, r->parallel, gather_one, r, 0 };
	struct ln_fanout_result res;
	size_t i;
	int rc;

	r->phase = "facts";
	f.quiet = ln_log_threshold < LN_LOG_VERBOSE;
	rc = ln_fanout_run(&f, &res);
	if (rc < 0)
		return rc;
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];

		if (!res.started[i]) {
			nr->state = LN_NODE_INTERRUPTED;
			ln_buf_reset(&nr->reason);
			ln_buf_addstr(&nr->reason, "not contacted: interrupted");
		} else if (nr->state == LN_NODE_OK) {
			identity_warnings(r, nr);
		}
	}
	ln_fanout_result_release(&res);
	return 0;
}

const char *ln_facts_host_nqn(const struct ln_node_run *nr)
{
	struct json_object *v = NULL;

	if (!nr->facts || !json_object_object_get_ex(nr->facts, "host_nqn", &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

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

static void print_node_facts(const struct ln_node_run *nr, const char *cluster, FILE *out)
{
	struct json_object *rdma, *nvme, *gpus, *models;
	size_t i, j;

	fprintf(out, "%s (%s)\n", nr->spec->name, nr->spec->address);
	if (nr->state != LN_NODE_OK) {
		fprintf(out, "  %s: %s\n\n", ln_node_state_name(nr->state), nr->reason.buf);
		return;
	}
	if (nr->cached_at) {
		char when[64];

		ln_state_when(nr->cached_at, when, sizeof(when));
		fprintf(out, "  cached     read %s (not contacted now)\n", when);
	}
	fprintf(out, "  host nqn   %s\n", jstr(nr->facts, "host_nqn") ? jstr(nr->facts, "host_nqn") : "(none)");
	gpus = ln_json_at(nr->facts, "gpus");
	models = ln_json_at(gpus, "models");
	fprintf(out, "  persistent %s\n", persistent(nr, cluster));
	fprintf(out, "  gpus       %s", jstr(gpus, "count") ? jstr(gpus, "count") : "unknown");
	if (models && json_object_array_length(models))
		fprintf(out, " (%s)", json_object_get_string(json_object_array_get_idx(models, 0)));
	fprintf(out, ", spec expects %u\n", nr->spec->gpus);
	rdma = ln_json_at(nr->facts, "rdma");
	fprintf(out, "  rdma       %-12s %-5s %-8s %-10s %-6s\n", "DEVICE", "PORT", "STATE", "RATE", "MTU");
	for (i = 0; rdma && json_object_is_type(rdma, json_type_array) && i < json_object_array_length(rdma); i++) {
		struct json_object *d = json_object_array_get_idx(rdma, i), *ports = ln_json_at(d, "ports");

		for (j = 0; ports && j < json_object_array_length(ports); j++) {
			struct json_object *p = json_object_array_get_idx(ports, j);

			fprintf(out, "             %-12s %-5s %-8s %-10s %-6s\n", jstr(d, "device"),
				jstr(p, "port") ? jstr(p, "port") : "?",
				jstr(p, "state") ? jstr(p, "state") : "?",
				jstr(p, "rate_gbps") ? jstr(p, "rate_gbps") : "?",
				jstr(p, "active_mtu") ? jstr(p, "active_mtu") : "?");
		}
	}
	if (!rdma || !json_object_array_length(rdma))
		fprintf(out, "             (no RDMA devices)\n");
	nvme = ln_json_at(nr->facts, "nvme");
	fprintf(out, "  nvme-of    %-8s %-6s %-22s %-8s %s\n", "CTRL", "TRANS", "ADDRESS", "STATE", "SUBSYSTEM");
	for (i = 0; nvme && json_object_is_type(nvme, json_type_array) && i < json_object_array_length(nvme); i++) {
		struct json_object *c = json_object_array_get_idx(nvme, i);
		char addr[96];
		const char *tr = jstr(c, "transport");

		if (tr && !strcmp(tr, "pcie"))
			continue;
		snprintf(addr, sizeof(addr), "%s:%s", jstr(c, "address") ? jstr(c, "address") : "?",
			 jstr(c, "service") ? jstr(c, "service") : "?");
		fprintf(out, "             %-8s %-6s %-22s %-8s %s\n", jstr(c, "name"), tr ? tr : "?",
			addr, jstr(c, "state") ? jstr(c, "state") : "?",
			jstr(c, "subsysnqn") ? jstr(c, "subsysnqn") : "?");
	}
	fputc('\n', out);
}

void ln_facts_print(struct ln_run *r, int json, FILE *out)
{
	struct json_object *all = NULL, *nodes = NULL;
	struct ln_buf b = LN_BUF_INIT;
	size_t i;

	if (!json) {
		for (i = 0; i < r->n; i++)
			print_node_facts(&r->nodes[i], r->spec->cluster, out);
		return;
	}
	all = json_object_new_object();
	nodes = json_object_new_object();
	ln_json_add_str(all, "cluster", r->spec->cluster);
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];
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
	ln_json_write(all, 1, &b);
	fputs(b.buf, out);
	ln_buf_release(&b);
	json_object_put(all);
}
