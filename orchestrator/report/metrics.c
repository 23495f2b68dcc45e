/* SPDX-License-Identifier: MIT */
/*
 * Prometheus text exposition (format 0.0.4), for a node_exporter textfile
 * collector or a push gateway: the run's result and duration, each listed
 * stage's status and counts, each pair's outcome and measured value, and
 * a gauge per bad node and bad link so alerts can name them.
 */
#include <math.h>

#include "orchestrator/report/report.h"

/* Label values escape backslash, double quote and newline. */
static void label(struct ln_buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			ln_buf_addch(out, '\\');
		if (*s == '\n') {
			ln_buf_addstr(out, "\\n");
			continue;
		}
		ln_buf_addch(out, *s);
	}
}

static void head(struct ln_buf *out, const char *name, const char *help)
{
	ln_buf_addf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void start(struct ln_buf *out, const char *name, const struct ln_results *r)
{
	ln_buf_addf(out, "%s{cluster=\"", name);
	label(out, r->cluster);
	ln_buf_addch(out, '"');
}

/* A verdict's sample up to its node label: name{cluster=...,stage="S",node="N
 * (the last quote left open). */
static void start_node(struct ln_buf *out, const char *name, const struct ln_results *r,
		       const struct ln_verdict *v)
{
	start(out, name, r);
	ln_buf_addf(out, ",stage=\"%s\",node=\"", ln_stage_name(v->stage));
	label(out, r->nodes[v->a]);
}

/* A pair's sample up to its labels: name{cluster=...,stage="S",a="A",b="B
 * (the last quote left open for more labels). */
static void start_pair(struct ln_buf *out, const char *name, const struct ln_results *r,
		       enum ln_stage stage, size_t a, int pa, size_t b, int pb)
{
	const char *da = ln_results_port(r, a, pa), *db = ln_results_port(r, b, pb);

	start(out, name, r);
	ln_buf_addf(out, ",stage=\"%s\",a=\"", ln_stage_name(stage));
	label(out, r->nodes[a]);
	if (da && db) {
		/* one sample per rail: the ports tell them apart */
		ln_buf_addstr(out, "\",a_port=\"");
		label(out, da);
		ln_buf_addstr(out, "\",b_port=\"");
		label(out, db);
	}
	ln_buf_addstr(out, "\",b=\"");
	label(out, r->nodes[b]);
}

/* A port counters check's sample up to its port label, left open. */
static void start_port(struct ln_buf *out, const char *name, const struct ln_results *r,
		       const struct ln_check *c)
{
	const char *port = ln_results_port(r, c->a, c->pa);

	start(out, name, r);
	ln_buf_addf(out, ",stage=\"%s\",node=\"", ln_stage_name(c->stage));
	label(out, r->nodes[c->a]);
	ln_buf_addstr(out, "\",port=\"");
	label(out, port ? port : "");
}

/* Every port's error counters over each pairwise stage: the judged sum,
 * and each counter's rise (a counter not available has no sample). */
static void port_counters(const struct ln_results *r, struct ln_buf *out)
{
	size_t i, k;

	head(out, "llmnet_validation_port_errors",
	     "errors a port's counters gained over a pairwise stage");
	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (!c->ctr || c->ctr->errors < 0)
			continue;
		start_port(out, "llmnet_validation_port_errors", r, c);
		ln_buf_addf(out, "\"} %lld\n", c->ctr->errors);
	}
	head(out, "llmnet_validation_port_counter_delta",
	     "one counter's rise over a pairwise stage (kind: error or other)");
	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		for (k = 0; c->ctr && k < c->ctr->n; k++) {
			if (c->ctr->v[k].delta < 0)
				continue;
			start_port(out, "llmnet_validation_port_counter_delta", r, c);
			ln_buf_addstr(out, "\",counter=\"");
			label(out, c->ctr->v[k].name);
			ln_buf_addf(out, "\",kind=\"%s\"} %lld\n",
				    c->ctr->v[k].error ? "error" : "other", c->ctr->v[k].delta);
		}
	}
}

/* Each listed stage: passed, and its checks by outcome. */
static void stage_metrics(const struct ln_results *r, struct ln_buf *out)
{
	int s;

	head(out, "llmnet_validation_stage_passed", "1 when the listed stage passed");
	for (s = 0; s < LN_STAGE_COUNT; s++) {
		if (!r->stages[s].listed)
			continue;
		start(out, "llmnet_validation_stage_passed", r);
		ln_buf_addf(out, ",stage=\"%s\",status=\"%s\"} %d\n", ln_stage_name(s),
			    ln_status_name(r->stages[s].status),
			    r->stages[s].status == LN_ST_PASS);
	}
	head(out, "llmnet_validation_stage_checks", "checks of a stage by outcome");
	for (s = 0; s < LN_STAGE_COUNT; s++) {
		static const char *const what[] = { "pass", "fail", "skipped", "not_run" };
		const struct ln_stage_summary *st = &r->stages[s];
		size_t v[4] = { st->passed, st->failed, st->skipped, st->not_run };
		int k;

		if (!st->listed)
			continue;
		for (k = 0; k < 4; k++) {
			start(out, "llmnet_validation_stage_checks", r);
			ln_buf_addf(out, ",stage=\"%s\",outcome=\"%s\"} %zu\n", ln_stage_name(s),
				    what[k], v[k]);
		}
	}
}

/* Each pair test (its last attempt): ok, value, a latency's statistics. */
static void pair_metrics(const struct ln_results *r, struct ln_buf *out)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		const char *name = pass ? "llmnet_validation_pair_value" : "llmnet_validation_pair_ok";

		head(out, name, pass ? "measured value of a pair test (unit label)" :
				       "1 when the pair test passed (last attempt)");
		for (i = 0; i < r->nchecks; i++) {
			const struct ln_check *c = &r->checks[i];

			if (c->retest || c->a >= r->nnodes || c->b >= r->nnodes ||
			    c->status == LN_ST_SKIPPED || c->status == LN_ST_NOT_RUN)
				continue;
			if (pass && isnan(c->value))
				continue;
			start_pair(out, name, r, c->stage, c->a, c->pa, c->b, c->pb);
			if (pass) {
				ln_buf_addstr(out, "\",unit=\"");
				label(out, c->unit);
				ln_buf_addf(out, "\"} %g\n", c->value);
			} else {
				ln_buf_addf(out, "\"} %d\n", c->status == LN_ST_PASS);
			}
		}
	}
	head(out, "llmnet_validation_pair_latency_us",
	     "a latency pair's typical, average and 99th percentile latency (stat label)");
	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];
		const double v[3] = { c->lat.typical, c->lat.avg, c->lat.p99 };
		static const char *const stat[3] = { "typical", "avg", "p99" };
		int k;

		if (c->stage != LN_STAGE_LATENCY || c->retest || c->a >= r->nnodes ||
		    c->b >= r->nnodes || isnan(c->lat.typical))
			continue;
		for (k = 0; k < 3; k++) {
			start_pair(out, "llmnet_validation_pair_latency_us", r, c->stage, c->a, c->pa,
				   c->b, c->pb);
			ln_buf_addf(out, "\",stat=\"%s\"} %g\n", stat[k], v[k]);
		}
	}
}

/* Each size sweep's bus bandwidth, a sample per size (bytes label); node
 * is "" for a check of the whole cluster. */
static void sizes_metrics(const struct ln_results *r, struct ln_buf *out)
{
	static const char name[] = "llmnet_validation_busbw_gbs";
	size_t i, k, n = 0;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		for (k = 0; k < c->nsizes; k++) {
			if (!n++)
				head(out, name, "bus bandwidth at each size of a size sweep "
						"(GB/s; bytes label; the largest is judged)");
			start(out, name, r);
			ln_buf_addf(out, ",stage=\"%s\",check=\"", ln_stage_name(c->stage));
			label(out, c->name);
			ln_buf_addstr(out, "\",node=\"");
			label(out, c->a < r->nnodes ? r->nodes[c->a] : "");
			ln_buf_addf(out, "\",bytes=\"%llu\"} %g\n",
				    (unsigned long long)c->sizes[k].bytes, c->sizes[k].busbw);
		}
	}
}

/* Each nccl check's judged value (bus bandwidth, collective latency,
 * scaling efficiency) and whether it passed; node is "" for a check of
 * the whole cluster. */
static void nccl_metrics(const struct ln_results *r, struct ln_buf *out)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		const char *name = pass ? "llmnet_validation_nccl_value" : "llmnet_validation_nccl_ok";

		head(out, name, pass ? "an nccl check's judged value (unit label: GB/s busbw, us "
				       "latency, ratio scaling efficiency)" :
				       "1 when the nccl check passed (last attempt)");
		for (i = 0; i < r->nchecks; i++) {
			const struct ln_check *c = &r->checks[i];

			if (c->stage != LN_STAGE_NCCL || c->retest || c->status == LN_ST_SKIPPED ||
			    c->status == LN_ST_NOT_RUN || (pass && isnan(c->value)))
				continue;
			start(out, name, r);
			ln_buf_addstr(out, ",stage=\"nccl\",check=\"");
			label(out, c->name);
			ln_buf_addstr(out, "\",node=\"");
			label(out, c->a < r->nnodes ? r->nodes[c->a] : "");
			if (pass) {
				ln_buf_addstr(out, "\",unit=\"");
				label(out, c->unit);
				ln_buf_addf(out, "\"} %g\n", c->value);
			} else {
				ln_buf_addf(out, "\"} %d\n", c->status == LN_ST_PASS);
			}
		}
	}
}

/* The diagnosis: bad nodes, links and ports. */
static void verdict_metrics(const struct ln_results *r, struct ln_buf *out)
{
	const char *port;
	size_t i;

	head(out, "llmnet_validation_bad_node", "a node the diagnosis blames");
	for (i = 0; i < r->nverdicts; i++)
		if (r->verdicts[i].kind == LN_VERDICT_NODE) {
			start_node(out, "llmnet_validation_bad_node", r, &r->verdicts[i]);
			ln_buf_addstr(out, "\"} 1\n");
		}
	head(out, "llmnet_validation_bad_link", "a link the diagnosis blames");
	for (i = 0; i < r->nverdicts; i++)
		if (r->verdicts[i].kind == LN_VERDICT_LINK) {
			start_pair(out, "llmnet_validation_bad_link", r, r->verdicts[i].stage,
				   r->verdicts[i].a, r->verdicts[i].pa, r->verdicts[i].b,
				   r->verdicts[i].pb);
			ln_buf_addstr(out, "\"} 1\n");
		}
	head(out, "llmnet_validation_bad_port", "a port (rail) of a node the diagnosis blames");
	for (i = 0; i < r->nverdicts; i++)
		if (r->verdicts[i].kind == LN_VERDICT_PORT) {
			start_node(out, "llmnet_validation_bad_port", r, &r->verdicts[i]);
			ln_buf_addstr(out, "\",port=\"");
			port = ln_results_port(r, r->verdicts[i].a, r->verdicts[i].pa);
			label(out, port ? port : "");
			ln_buf_addstr(out, "\"} 1\n");
		}
}

/* The access stage's target verdicts: 1 a failure (a refusal did not
 * hold), 0.5 a warning (open to NQN claims); the NQN is in the reason,
 * so the sample names the target's node and the severity. */
static void target_metrics(const struct ln_results *r, struct ln_buf *out)
{
	size_t i;

	head(out, "llmnet_validation_target", "a target whose access control the access stage "
	     "faults (1) or warns of (0.5)");
	for (i = 0; i < r->nverdicts; i++)
		if (r->verdicts[i].kind == LN_VERDICT_TARGET) {
			start_node(out, "llmnet_validation_target", r, &r->verdicts[i]);
			ln_buf_addf(out, "\",severity=\"%s\",reason=\"",
				    ln_verdict_severity(&r->verdicts[i]));
			label(out, r->verdicts[i].reason ? r->verdicts[i].reason : "");
			ln_buf_addf(out, "\"} %s\n", r->verdicts[i].warning ? "0.5" : "1");
		}
}

int ln_report_metrics(const struct ln_results *r, struct ln_buf *out)
{
	head(out, "llmnet_validation_success", "1 when every listed stage passed");
	start(out, "llmnet_validation_success", r);
	ln_buf_addf(out, "} %d\n", ln_results_exit(r) == 0);
	head(out, "llmnet_validation_duration_seconds", "wall time of the validation run");
	start(out, "llmnet_validation_duration_seconds", r);
	ln_buf_addf(out, "} %.3f\n", r->seconds);
	head(out, "llmnet_validation_timestamp_seconds", "when the run started (unix time)");
	start(out, "llmnet_validation_timestamp_seconds", r);
	ln_buf_addf(out, "} %lld\n", (long long)r->started);

	stage_metrics(r, out);
	pair_metrics(r, out);
	port_counters(r, out);
	sizes_metrics(r, out);
	nccl_metrics(r, out);
	verdict_metrics(r, out);
	target_metrics(r, out);
	return 0;
}
