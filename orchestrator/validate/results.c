/* SPDX-License-Identifier: MIT */
/*
 * The validation result model: names, lifecycle, checks, attempts,
 * verdicts and the per-stage summary that decides the exit code.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/util.h"
#include "orchestrator/validate/results.h"

int ln_stage_parse(const char *s, enum ln_stage *out)
{
	enum ln_stage i;

	for (i = LN_STAGE_DEVICES; i < LN_STAGE_COUNT; i++)
		if (!strcmp(s, ln_stage_name(i))) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

void ln_latency_init(struct ln_latency *l)
{
	l->typical = l->avg = l->p99 = l->max_typical = l->max_p99 = NAN;
}

int ln_stage_pairwise(enum ln_stage s)
{
	return s == LN_STAGE_RPING || s == LN_STAGE_BANDWIDTH || s == LN_STAGE_LATENCY;
}

/* Indexed by enum ln_status: the name reports print, and the class word. */
static const struct {
	const char *name, *cls;
} status_names[] = {
	[LN_ST_PASS] = { "pass", "pass" },
	[LN_ST_FAIL] = { "fail", "fail" },
	[LN_ST_SKIPPED] = { "skipped", "skip" },
	[LN_ST_NOT_RUN] = { "not run", "notrun" },
};

const char *ln_status_name(enum ln_status s)
{
	return (unsigned)s < ARRAY_SIZE(status_names) ? status_names[s].name : "?";
}

const char *ln_status_class(enum ln_status s)
{
	return (unsigned)s < ARRAY_SIZE(status_names) ? status_names[s].cls : "none";
}

const char *ln_verdict_kind_name(enum ln_verdict_kind k)
{
	switch (k) {
	case LN_VERDICT_NODE:
		return "node";
	case LN_VERDICT_LINK:
		return "link";
	case LN_VERDICT_UNDETERMINED:
		return "undetermined";
	case LN_VERDICT_CLUSTER:
		return "cluster";
	case LN_VERDICT_PORT:
		return "port";
	case LN_VERDICT_TARGET:
		return "target";
	}
	return "?";
}

const char *ln_verdict_title(const struct ln_verdict *v)
{
	switch (v->kind) {
	case LN_VERDICT_NODE:
		return "bad node";
	case LN_VERDICT_PORT:
		return "bad port";
	case LN_VERDICT_LINK:
		return "bad link";
	case LN_VERDICT_CLUSTER:
		return "failed";
	case LN_VERDICT_UNDETERMINED:
		return "undetermined";
	case LN_VERDICT_TARGET:
		return v->warning ? "target warning" : "target";
	}
	return "?";
}

const char *ln_verdict_severity(const struct ln_verdict *v)
{
	return v->warning ? "warning" : "fail";
}

int ln_results_init(struct ln_results *r, const char *cluster, const char *const *nodes,
		    size_t nnodes)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	r->cluster = strdup(cluster ? cluster : "");
	r->nodes = calloc(nnodes ? nnodes : 1, sizeof(*r->nodes));
	if (!r->cluster || !r->nodes)
		goto nomem;
	r->nnodes = nnodes;
	for (i = 0; i < nnodes; i++) {
		r->nodes[i] = strdup(nodes[i]);
		if (!r->nodes[i])
			goto nomem;
	}
	return 0;
nomem:
	ln_results_release(r);
	return -ENOMEM;
}

void ln_port_counters_free(struct ln_port_counters *pc)
{
	size_t i;

	if (!pc)
		return;
	for (i = 0; i < pc->n; i++)
		free(pc->v[i].name);
	free(pc->v);
	free(pc->driver);
	free(pc);
}

static void check_release(struct ln_check *c)
{
	size_t i;

	ln_port_counters_free(c->ctr);
	free(c->sizes);
	for (i = 0; i < c->nattempts; i++) {
		free(c->attempts[i].detail);
		free(c->attempts[i].command);
	}
	free(c->attempts);
	free(c->name);
	free(c->reason);
}

void ln_results_release(struct ln_results *r)
{
	size_t i;

	ln_names_free(r->nodes, r->nnodes);
	free(r->cluster);
	for (i = 0; i < r->nchecks; i++)
		check_release(&r->checks[i]);
	free(r->checks);
	for (i = 0; i < r->nverdicts; i++)
		free(r->verdicts[i].reason);
	free(r->verdicts);
	for (i = 0; i < LN_STAGE_COUNT; i++)
		free(r->stages[i].reason);
	for (i = 0; r->port_dev && i < r->nnodes * r->port_stride; i++) {
		free(r->port_dev[i]);
		free(r->port_rail[i]);
	}
	free(r->port_dev);
	free(r->port_rail);
	for (i = 0; i < r->nslurm; i++) {
		free(r->slurm[i].node);
		free(r->slurm[i].slurm_name);
		free(r->slurm[i].reason);
		free(r->slurm[i].detail);
	}
	free(r->slurm);
	if (r->topo)
		ln_names_free(r->topo, r->nnodes);
	memset(r, 0, sizeof(*r));
}

int ln_results_set_topo(struct ln_results *r, size_t node, const char *text)
{
	if (node >= r->nnodes)
		return -EINVAL;
	if (!r->topo && !(r->topo = calloc(r->nnodes, sizeof(*r->topo))))
		return -ENOMEM;
	free(r->topo[node]);
	r->topo[node] = strdup(text);
	return r->topo[node] ? 0 : -ENOMEM;
}

int ln_results_init_ports(struct ln_results *r, size_t stride)
{
	size_t n = r->nnodes * stride;

	r->port_dev = calloc(n ? n : 1, sizeof(*r->port_dev));
	r->port_rail = calloc(n ? n : 1, sizeof(*r->port_rail));
	if (!r->port_dev || !r->port_rail) {
		free(r->port_dev);
		free(r->port_rail);
		r->port_dev = r->port_rail = NULL;
		return -ENOMEM;
	}
	r->port_stride = stride;
	return 0;
}

int ln_results_set_port(struct ln_results *r, size_t node, size_t port, const char *dev,
			const char *rail)
{
	size_t i = node * r->port_stride + port;

	if (node >= r->nnodes || port >= r->port_stride)
		return -EINVAL;
	free(r->port_dev[i]);
	free(r->port_rail[i]);
	r->port_dev[i] = strdup(dev);
	r->port_rail[i] = strdup(rail);
	return r->port_dev[i] && r->port_rail[i] ? 0 : -ENOMEM;
}

static const char *port_field(const struct ln_results *r, char **tab, size_t node, int port)
{
	if (!tab || port < 0 || node >= r->nnodes || (size_t)port >= r->port_stride)
		return NULL;
	return tab[node * r->port_stride + (size_t)port];
}

const char *ln_results_port(const struct ln_results *r, size_t node, int port)
{
	return port_field(r, r->port_dev, node, port);
}

const char *ln_results_rail(const struct ln_results *r, size_t node, int port)
{
	return port_field(r, r->port_rail, node, port);
}

long ln_results_add_check(struct ln_results *r, enum ln_stage stage, size_t a, size_t b,
			  const char *name)
{
	struct ln_check *c;

	if (r->nchecks == r->alloc) {
		size_t na = r->alloc ? r->alloc * 2 : 64;
		void *p = realloc(r->checks, na * sizeof(*r->checks));

		if (!p)
			return -ENOMEM;
		r->checks = p;
		r->alloc = na;
	}
	c = &r->checks[r->nchecks];
	memset(c, 0, sizeof(*c));
	c->name = strdup(name ? name : "");
	if (!c->name)
		return -ENOMEM;
	c->stage = stage;
	c->a = a;
	c->b = b;
	c->pa = c->pb = -1;
	c->via = LN_NO_NODE;
	c->via_port = c->from_port = -1;
	c->value = c->threshold = c->line_rate = c->msg_rate = c->msg_rate_min = NAN;
	ln_latency_init(&c->lat);
	c->unit = "";
	c->status = LN_ST_PASS;
	return (long)r->nchecks++;
}

/* Room for element n of *arr, which holds n: the new element, or NULL
 * (out of memory; *arr unchanged). */
static void *grow_one(void **arr, size_t n, size_t elem)
{
	void *p = realloc(*arr, (n + 1) * elem);

	if (!p)
		return NULL;
	*arr = p;
	return (char *)p + n * elem;
}
#define GROW_ONE(arr, n) ((__typeof__(arr))grow_one((void **)&(arr), (n), sizeof(*(arr))))

int ln_check_add_attempt(struct ln_check *c, const struct ln_attempt *at)
{
	struct ln_attempt *n = GROW_ONE(c->attempts, c->nattempts);

	if (!n)
		return -ENOMEM;
	*n = *at;
	n->detail = at->detail ? strdup(at->detail) : NULL;
	n->command = at->command ? strdup(at->command) : NULL;
	if ((at->detail && !n->detail) || (at->command && !n->command)) {
		free(n->detail);
		free(n->command);
		return -ENOMEM;
	}
	c->nattempts++;
	c->own_fault |= at->own_fault;
	c->value = at->value;
	if (c->stage == LN_STAGE_BANDWIDTH)
		c->msg_rate = at->msg_rate;
	if (c->stage == LN_STAGE_LATENCY) {
		c->lat.typical = at->lat.typical;
		c->lat.avg = at->lat.avg;
		c->lat.p99 = at->lat.p99;
	}
	if (at->ok)
		return ln_check_set(c, LN_ST_PASS, NULL);
	return ln_check_set(c, LN_ST_FAIL, "%s", at->detail ? at->detail : "failed");
}

int ln_check_set_sizes(struct ln_check *c, const struct ln_size_bw *sizes, size_t n)
{
	struct ln_size_bw *p = NULL;

	if (n) {
		p = malloc(n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memcpy(p, sizes, n * sizeof(*p));
	}
	free(c->sizes);
	c->sizes = p;
	c->nsizes = n;
	return 0;
}

static char *vformat(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (!fmt)
		return NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

int ln_check_set(struct ln_check *c, enum ln_status st, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vformat(fmt, ap);
	va_end(ap);
	if (fmt && !s)
		return -ENOMEM;
	free(c->reason);
	c->reason = s;
	c->status = st;
	return 0;
}

static int add_verdict(struct ln_results *r, enum ln_verdict_kind kind, enum ln_stage stage,
		       size_t a, int pa, size_t b, int pb, const char *fmt, va_list ap)
{
	struct ln_verdict *v = GROW_ONE(r->verdicts, r->nverdicts);

	if (!v)
		return -ENOMEM;
	v->reason = vformat(fmt, ap);
	if (fmt && !v->reason)
		return -ENOMEM;
	v->kind = kind;
	v->stage = stage;
	v->a = a;
	v->b = b;
	v->pa = pa;
	v->pb = pb;
	v->warning = 0;
	r->nverdicts++;
	return 0;
}

int ln_results_add_verdict(struct ln_results *r, enum ln_verdict_kind kind, enum ln_stage stage,
			   size_t a, size_t b, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = add_verdict(r, kind, stage, a, -1, b, -1, fmt, ap);
	va_end(ap);
	return ret;
}

int ln_results_add_port_verdict(struct ln_results *r, enum ln_verdict_kind kind,
				enum ln_stage stage, size_t a, int pa, size_t b, int pb,
				const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = add_verdict(r, kind, stage, a, pa, b, pb, fmt, ap);
	va_end(ap);
	return ret;
}

int ln_results_add_target_verdict(struct ln_results *r, enum ln_stage st, size_t a, int warning,
				  const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = add_verdict(r, LN_VERDICT_TARGET, st, a, -1, LN_NO_NODE, -1, fmt, ap);
	va_end(ap);
	if (ret == 0)
		r->verdicts[r->nverdicts - 1].warning = warning;
	return ret;
}

const char *ln_slurm_act_name(enum ln_slurm_act a)
{
	static const char *const names[] = {
		[LN_SLURM_ACT_DRAINED] = "drained", [LN_SLURM_ACT_WOULD_DRAIN] = "would drain",
		[LN_SLURM_ACT_LIFTED] = "lifted", [LN_SLURM_ACT_WOULD_LIFT] = "would lift",
		[LN_SLURM_ACT_NOT_DRAINED] = "not drained",
		[LN_SLURM_ACT_NOT_RESUMED] = "not resumed", [LN_SLURM_ACT_FAILED] = "failed",
	};

	return (unsigned)a < ARRAY_SIZE(names) ? names[a] : "?";
}

static char *dup_or_null(const char *s, int *failed)
{
	char *d = s ? strdup(s) : NULL;

	*failed |= s && !d;
	return d;
}

int ln_results_add_slurm(struct ln_results *r, enum ln_slurm_act act, const char *node,
			 const char *slurm_name, const char *reason, const char *fmt, ...)
{
	struct ln_slurm_change *v = realloc(r->slurm, (r->nslurm + 1) * sizeof(*v)), *c;
	va_list ap;
	int failed = 0;

	if (!v)
		return -ENOMEM;
	r->slurm = v;
	c = &v[r->nslurm];
	memset(c, 0, sizeof(*c));
	c->act = act;
	c->node = dup_or_null(node, &failed);
	c->slurm_name = dup_or_null(slurm_name, &failed);
	c->reason = dup_or_null(reason, &failed);
	va_start(ap, fmt);
	if (vasprintf(&c->detail, fmt, ap) < 0) {
		c->detail = NULL;
		failed = 1;
	}
	va_end(ap);
	if (failed) {
		free(c->node);
		free(c->slurm_name);
		free(c->reason);
		free(c->detail);
		return -ENOMEM;
	}
	r->nslurm++;
	return 0;
}

void ln_results_summarize(struct ln_results *r)
{
	size_t i, moot[LN_STAGE_COUNT] = { 0 };
	int s;

	for (s = 0; s < LN_STAGE_COUNT; s++) {
		struct ln_stage_summary *st = &r->stages[s];

		st->passed = st->failed = st->skipped = st->not_run = 0;
	}
	for (i = 0; i < r->nchecks; i++) {
		struct ln_stage_summary *st = &r->stages[r->checks[i].stage];
		size_t *count[] = {
			[LN_ST_PASS] = &st->passed, [LN_ST_FAIL] = &st->failed,
			[LN_ST_SKIPPED] = &st->skipped, [LN_ST_NOT_RUN] = &st->not_run,
		};

		(*count[r->checks[i].status])++;
		moot[r->checks[i].stage] += r->checks[i].status == LN_ST_SKIPPED &&
					    r->checks[i].moot;
	}
	for (s = 0; s < LN_STAGE_COUNT; s++) {
		struct ln_stage_summary *st = &r->stages[s];

		if (!st->listed)
			continue;
		if (!st->ran) {
			if (st->status != LN_ST_SKIPPED)
				st->status = LN_ST_NOT_RUN;
		} else if (st->failed || st->not_run) {
			st->status = LN_ST_FAIL;
		} else if (st->skipped > moot[s] || (st->skipped && !st->passed)) {
			/* every skip comes from a failure elsewhere, or (moot)
			 * from a check that does not apply to its node: those
			 * alone do not keep a stage that passed from passing */
			st->status = LN_ST_SKIPPED;
		} else if (!st->passed) {
			/* a stage that checked nothing proved nothing */
			st->status = LN_ST_NOT_RUN;
			if (!st->reason)
				st->reason = strdup("no check ran");
		} else {
			st->status = LN_ST_PASS;
		}
	}
}

int ln_results_exit(const struct ln_results *r)
{
	int s, listed = 0;

	for (s = 0; s < LN_STAGE_COUNT; s++) {
		listed += r->stages[s].listed;
		if (r->stages[s].listed && r->stages[s].status != LN_ST_PASS)
			return ln_exit_merge(LN_EXIT_FAILED, r->node_exit);
	}
	/* no stage listed: nothing was proven, so never a pass */
	return ln_exit_merge(listed && !r->after_exit ? LN_EXIT_OK : LN_EXIT_FAILED,
			     r->node_exit);
}

void ln_results_subject(const struct ln_results *r, size_t a, size_t b, struct ln_buf *out)
{
	if (a == LN_NO_NODE || a >= r->nnodes)
		ln_buf_addstr(out, "cluster");
	else if (b == LN_NO_NODE || b >= r->nnodes)
		ln_buf_addstr(out, r->nodes[a]);
	else
		ln_buf_addf(out, "%s-%s", r->nodes[a], r->nodes[b]);
}

void ln_results_subject_ports(const struct ln_results *r, size_t a, int pa, size_t b, int pb,
			      struct ln_buf *out)
{
	const char *da = ln_results_port(r, a, pa), *db = ln_results_port(r, b, pb);

	if (a == LN_NO_NODE || a >= r->nnodes) {
		ln_buf_addstr(out, "cluster");
		return;
	}
	ln_buf_addf(out, "%s%s%s", r->nodes[a], da ? "/" : "", da ? da : "");
	if (b != LN_NO_NODE && b < r->nnodes)
		ln_buf_addf(out, "-%s%s%s", r->nodes[b], db ? "/" : "", db ? db : "");
}
