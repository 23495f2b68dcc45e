/* SPDX-License-Identifier: MIT */
/*
 * The JSON report, format "llmnet-validation/1" (docs/validation.md): run
 * header, stages, every check with every attempt, verdicts, and a culprit
 * summary (bad nodes, bad links) for scripts that only want the answer.
 * A value that does not exist is null, never 0.
 */
#include <errno.h>
#include <math.h>

#include "common/json.h"
#include "orchestrator/report/report.h"

static struct json_object *num(double v)
{
	/* NaN, inf: not JSON; written as null */
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* ["x", "y"] */
static struct json_object *two(const char *x, const char *y)
{
	struct json_object *a = json_object_new_array();

	if (a) {
		json_object_array_add(a, json_object_new_string(x));
		json_object_array_add(a, json_object_new_string(y));
	}
	return a;
}

/* "node": name, or "pair": [a, b], or nothing for a cluster check; with
 * the RDMA ports where known: "port" and "rail", or "ports": [pa, pb]
 * and "rails": [ra, rb]. */
static int add_subject(struct json_object *o, const struct ln_results *r, size_t a, int pa,
		       size_t b, int pb)
{
	const char *da = ln_results_port(r, a, pa), *db = ln_results_port(r, b, pb);

	if (a == LN_NO_NODE || a >= r->nnodes)
		return ln_json_add_str(o, "scope", "cluster");
	if (b == LN_NO_NODE || b >= r->nnodes) {
		if (ln_json_add_str(o, "scope", "node") < 0 ||
		    ln_json_add_str(o, "node", r->nodes[a]) < 0)
			return -ENOMEM;
		if (da && (ln_json_add_str(o, "port", da) < 0 ||
			   ln_json_add_str(o, "rail", ln_results_rail(r, a, pa)) < 0))
			return -ENOMEM;
		return 0;
	}
	if (ln_json_add_str(o, "scope", "pair") < 0 ||
	    ln_json_add(o, "pair", two(r->nodes[a], r->nodes[b])) < 0)
		return -ENOMEM;
	if (da && db && (ln_json_add(o, "ports", two(da, db)) < 0 ||
			 ln_json_add(o, "rails", two(ln_results_rail(r, a, pa),
						     ln_results_rail(r, b, pb))) < 0))
		return -ENOMEM;
	return 0;
}

/* A latency check's figures, microseconds as the keys say; thresholds
 * too when th (a check's, not an attempt's). */
static struct json_object *latency_json(const struct ln_latency *l, int th)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "typical_us", num(l->typical));
	json_object_object_add(o, "avg_us", num(l->avg));
	json_object_object_add(o, "p99_us", num(l->p99));
	if (th) {
		json_object_object_add(o, "max_typical_us", num(l->max_typical));
		json_object_object_add(o, "max_p99_us", num(l->max_p99));
	}
	return o;
}

static struct json_object *ll_or_null(long long v)
{
	return v < 0 ? NULL : json_object_new_int64(v);
}

/* A port's error counters over the stage: the judged sum, the limit, its
 * partners, and every counter's rise as the agent's name table splits
 * them (null: not available). */
static struct json_object *counters_json(const struct ln_port_counters *pc)
{
	struct json_object *o = json_object_new_object(), *d = json_object_new_object();
	struct json_object *e = json_object_new_object(), *x = json_object_new_object();
	size_t i;

	if (!o || !d || !e || !x) {
		json_object_put(o);
		json_object_put(d);
		json_object_put(e);
		json_object_put(x);
		return NULL;
	}
	json_object_object_add(o, "driver", str_or_null(pc->driver));
	json_object_object_add(o, "errors", ll_or_null(pc->errors));
	json_object_object_add(o, "max_errors", ll_or_null(pc->max_errors));
	json_object_object_add(o, "partners", json_object_new_int64((int64_t)pc->partners));
	json_object_object_add(o, "partners_over",
			       json_object_new_int64((int64_t)pc->partners_over));
	for (i = 0; i < pc->n; i++)
		json_object_object_add(pc->v[i].error ? e : x, pc->v[i].name,
				       ll_or_null(pc->v[i].delta));
	json_object_object_add(d, "errors", e);
	json_object_object_add(d, "other", x);
	json_object_object_add(o, "deltas", d);
	return o;
}

static struct json_object *attempt_json(const struct ln_check *c, const struct ln_attempt *at)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "ok", json_object_new_boolean(at->ok));
	json_object_object_add(o, "value", num(at->value));
	if (c->stage == LN_STAGE_LATENCY)
		json_object_object_add(o, "latency", latency_json(&at->lat, 0));
	json_object_object_add(o, "seconds", num(at->seconds));
	json_object_object_add(o, "timed_out", json_object_new_boolean(at->timed_out));
	json_object_object_add(o, "retest", json_object_new_boolean(at->retest));
	json_object_object_add(o, "detail", str_or_null(at->detail));
	json_object_object_add(o, "command", str_or_null(at->command));
	return o;
}

/* A size sweep's figures, smallest first (the last is judged). */
static struct json_object *sizes_json(const struct ln_check *c)
{
	struct json_object *a = json_object_new_array();
	size_t k;

	for (k = 0; a && k < c->nsizes; k++) {
		struct json_object *o = json_object_new_object();

		if (!o)
			break;
		json_object_object_add(o, "bytes", json_object_new_int64((int64_t)c->sizes[k].bytes));
		json_object_object_add(o, "algbw_gbs", num(c->sizes[k].algbw));
		json_object_object_add(o, "busbw_gbs", num(c->sizes[k].busbw));
		json_object_object_add(o, "wrong", c->sizes[k].wrong < 0 ? NULL :
				       json_object_new_int64(c->sizes[k].wrong));
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *check_json(const struct ln_results *r, const struct ln_check *c)
{
	struct json_object *o = json_object_new_object(), *ats;
	size_t i;

	if (!o || add_subject(o, r, c->a, c->pa, c->b, c->pb) < 0)
		goto fail;
	json_object_object_add(o, "stage", json_object_new_string(ln_stage_name(c->stage)));
	json_object_object_add(o, "name", json_object_new_string(c->name));
	json_object_object_add(o, "status", json_object_new_string(ln_status_name(c->status)));
	json_object_object_add(o, "reason", str_or_null(c->reason));
	json_object_object_add(o, "value", num(c->value));
	json_object_object_add(o, "threshold", num(c->threshold));
	json_object_object_add(o, "line_rate_gbps", num(c->line_rate));
	json_object_object_add(o, "unit", json_object_new_string(c->unit));
	if (c->stage == LN_STAGE_LATENCY && !c->ctr)
		json_object_object_add(o, "latency", latency_json(&c->lat, 1));
	if (!isnan(c->msg_rate_min)) {
		/* the message-rate run (issue 27 pt 3), only where it ran */
		json_object_object_add(o, "msg_rate_mpps", num(c->msg_rate));
		json_object_object_add(o, "min_msg_rate_mpps", num(c->msg_rate_min));
	}
	if (c->ctr)
		json_object_object_add(o, "counters", counters_json(c->ctr));
	if (c->nsizes)
		json_object_object_add(o, "sizes", sizes_json(c));
	json_object_object_add(o, "retest", json_object_new_boolean(c->retest));
	json_object_object_add(o, "warning", json_object_new_boolean(c->warning));
	ats = json_object_new_array();
	if (!ats)
		goto fail;
	for (i = 0; i < c->nattempts; i++)
		json_object_array_add(ats, attempt_json(c, &c->attempts[i]));
	json_object_object_add(o, "attempts", ats);
	return o;
fail:
	json_object_put(o);
	return NULL;
}

/* The listed stages' summaries, in run order. */
static struct json_object *stages_json(const struct ln_results *r)
{
	struct json_object *arr = json_object_new_array();
	enum ln_stage s;

	for (s = LN_STAGE_DEVICES; arr && s < LN_STAGE_COUNT; s++) {
		const struct ln_stage_summary *st = &r->stages[s];
		struct json_object *o;

		if (!st->listed)
			continue;
		o = json_object_new_object();
		if (!o) {
			json_object_put(arr);
			return NULL;
		}
		ln_json_add_str(o, "stage", ln_stage_name(s));
		ln_json_add_str(o, "status", ln_status_name(st->status));
		json_object_object_add(o, "reason", str_or_null(st->reason));
		ln_json_add_i64(o, "passed", (int64_t)st->passed);
		ln_json_add_i64(o, "failed", (int64_t)st->failed);
		ln_json_add_i64(o, "skipped", (int64_t)st->skipped);
		ln_json_add_i64(o, "not_run", (int64_t)st->not_run);
		ln_json_add_i64(o, "rounds", (int64_t)st->rounds);
		ln_json_add_double(o, "seconds", st->seconds);
		json_object_array_add(arr, o);
	}
	return arr;
}

/* Whether a verdict before i has v's kind and nodes (and, with ports,
 * its ports). */
static int seen_before(const struct ln_results *r, size_t i, int ports)
{
	const struct ln_verdict *v = &r->verdicts[i];
	size_t j;

	for (j = 0; j < i; j++) {
		const struct ln_verdict *w = &r->verdicts[j];

		if (w->kind == v->kind && w->a == v->a && w->b == v->b &&
		    (!ports || (w->pa == v->pa && w->pb == v->pb)))
			return 1;
	}
	return 0;
}

/* "verdicts", then "culprits": each bad node, bad port ("node/port") and
 * bad link (as a node pair, and as a port pair in "link_ports") once,
 * across stages. */
static int add_verdicts(struct json_object *root, const struct ln_results *r)
{
	struct json_object *arr = json_object_new_array(), *culprits = json_object_new_object();
	struct json_object *cn = json_object_new_array(), *cl = json_object_new_array();
	struct json_object *cp = json_object_new_array(), *clp = json_object_new_array();
	struct ln_buf a = LN_BUF_INIT, b = LN_BUF_INIT;
	size_t i;

	if (!arr || !culprits || !cn || !cl || !cp || !clp) {
		json_object_put(arr);
		json_object_put(culprits);
		json_object_put(cn);
		json_object_put(cl);
		json_object_put(cp);
		json_object_put(clp);
		return -ENOMEM;
	}
	json_object_object_add(root, "verdicts", arr);
	json_object_object_add(culprits, "nodes", cn);
	json_object_object_add(culprits, "ports", cp);
	json_object_object_add(culprits, "links", cl);
	json_object_object_add(culprits, "link_ports", clp);
	json_object_object_add(root, "culprits", culprits);
	for (i = 0; i < r->nverdicts; i++) {
		const struct ln_verdict *v = &r->verdicts[i];
		struct json_object *o = json_object_new_object();

		if (!o || add_subject(o, r, v->a, v->pa, v->b, v->pb) < 0) {
			json_object_put(o);
			return -ENOMEM;
		}
		ln_json_add_str(o, "kind", ln_verdict_kind_name(v->kind));
		ln_json_add_str(o, "severity", ln_verdict_severity(v));
		ln_json_add_str(o, "stage", ln_stage_name(v->stage));
		json_object_object_add(o, "reason", str_or_null(v->reason));
		json_object_array_add(arr, o);
		ln_buf_reset(&a);
		ln_buf_reset(&b);
		ln_results_subject_ports(r, v->a, v->pa, LN_NO_NODE, -1, &a);
		ln_results_subject_ports(r, v->b, v->pb, LN_NO_NODE, -1, &b);
		if (v->kind == LN_VERDICT_NODE && !seen_before(r, i, 0))
			json_object_array_add(cn, json_object_new_string(r->nodes[v->a]));
		else if (v->kind == LN_VERDICT_PORT && !seen_before(r, i, 1))
			json_object_array_add(cp, json_object_new_string(a.buf));
		if (v->kind == LN_VERDICT_LINK && !seen_before(r, i, 0))
			json_object_array_add(cl, two(r->nodes[v->a], r->nodes[v->b]));
		if (v->kind == LN_VERDICT_LINK && !seen_before(r, i, 1))
			json_object_array_add(clp, two(a.buf, b.buf));
	}
	ln_buf_release(&a);
	ln_buf_release(&b);
	return 0;
}

/* "slurm": what the Slurm action drained, lifted or left (only when it ran). */
static int add_slurm(struct json_object *root, const struct ln_results *r)
{
	struct json_object *arr;
	size_t i;

	if (!r->nslurm)
		return 0;
	arr = json_object_new_array();
	if (!arr)
		return -ENOMEM;
	json_object_object_add(root, "slurm", arr);
	for (i = 0; i < r->nslurm; i++) {
		const struct ln_slurm_change *c = &r->slurm[i];
		struct json_object *o = json_object_new_object();

		if (!o)
			return -ENOMEM;
		ln_json_add_str(o, "action", ln_slurm_act_name(c->act));
		json_object_object_add(o, "node", str_or_null(c->node));
		json_object_object_add(o, "slurm_name", str_or_null(c->slurm_name));
		json_object_object_add(o, "reason", str_or_null(c->reason));
		json_object_object_add(o, "detail", str_or_null(c->detail));
		json_object_array_add(arr, o);
	}
	return 0;
}

int ln_report_json(const struct ln_results *r, int pretty, struct ln_buf *out)
{
	struct json_object *root = json_object_new_object(), *arr;
	size_t i;
	int ret = -ENOMEM, code = ln_results_exit(r);

	if (!root)
		return -ENOMEM;
	ln_json_add_str(root, "format", LN_REPORT_FORMAT);
	ln_json_add_str(root, "cluster", r->cluster);
	ln_json_add_i64(root, "started", r->started);
	ln_json_add_double(root, "seconds", r->seconds);
	ln_json_add_str(root, "result", code ? "fail" : "pass");
	ln_json_add_i64(root, "exit_code", code);
	arr = json_object_new_array();
	if (!arr)
		goto out;
	for (i = 0; i < r->nnodes; i++)
		json_object_array_add(arr, json_object_new_string(r->nodes[i]));
	json_object_object_add(root, "nodes", arr);
	arr = stages_json(r);
	if (!arr)
		goto out;
	json_object_object_add(root, "stages", arr);
	arr = json_object_new_array();
	if (!arr)
		goto out;
	json_object_object_add(root, "checks", arr);
	for (i = 0; i < r->nchecks; i++) {
		struct json_object *o = check_json(r, &r->checks[i]);

		if (!o)
			goto out;
		json_object_array_add(arr, o);
	}
	if (add_verdicts(root, r) < 0 || add_slurm(root, r) < 0)
		goto out;
	ret = ln_json_write(root, pretty, out);
out:
	json_object_put(root);
	return ret;
}
