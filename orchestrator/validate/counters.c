/* SPDX-License-Identifier: MIT */
/*
 * Port error counters around the pairwise stages' pairs: the agent reads
 * both ends' counters (`facts --counters`) before and after each pair,
 * so a rise is known per port and per partner (a round holds one test
 * per node, so nothing else ran on that port meanwhile). Loss raises the
 * counters at both ends of a pair, so one rise names no culprit: a port
 * is blamed when it gained more than the stage's max_errors with at
 * least two partners; over the limit with one partner only, it is a
 * suspect (the link, or either end), unless that partner is blamed.
 * Without max_errors the rises are reported, not judged (an unreadable
 * port is then a pass that says so). With it, a port whose counters could
 * not be read is "not run", never passed on them.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "orchestrator/validate/stage_common.h"

struct port_acc {
	int used;
	char *why;			/* the first read that failed */
	char *driver;
	struct ln_counter_delta *v;	/* rises summed over its pairs */
	size_t n;
	size_t *with, nwith;		/* partners (node << 8 | port), distinct */
	size_t *over, nover;		/* those it gained more than max_errors with */
};

struct vs_ctr {
	pthread_mutex_t lock;
	long long max_errors;
	struct port_acc **acc;		/* [node][port] */
	size_t n;
};

static long long max_errors_of(const struct ln_spec *spec, enum ln_stage st)
{
	const struct ln_validation *v = &spec->validation;

	return st == LN_STAGE_RPING ? v->rping.max_errors :
	       st == LN_STAGE_BANDWIDTH ? v->bandwidth.max_errors :
	       st == LN_STAGE_LATENCY ? v->latency.max_errors : -1;
}

int vs_ctr_open(struct vctx *c, enum ln_stage st)
{
	struct vs_ctr *x;
	size_t i;

	c->ctr = NULL;
	if (!c->ops->counters)
		return 0;
	x = calloc(1, sizeof(*x));
	if (!x || !(x->acc = calloc(c->n ? c->n : 1, sizeof(*x->acc)))) {
		free(x);
		return -ENOMEM;
	}
	x->n = c->n;
	x->max_errors = max_errors_of(c->spec, st);
	pthread_mutex_init(&x->lock, NULL);
	c->ctr = x;
	for (i = 0; i < c->n; i++)
		if (!(x->acc[i] = calloc(c->ni[i].nports ? c->ni[i].nports : 1,
					 sizeof(**x->acc)))) {
			vs_ctr_close(c);
			return -ENOMEM;
		}
	return 0;
}

void vs_ctr_close(struct vctx *c)
{
	struct vs_ctr *x = c->ctr;
	size_t i, p, k;

	if (!x)
		return;
	for (i = 0; i < x->n; i++) {
		for (p = 0; x->acc[i] && p < c->ni[i].nports; p++) {
			struct port_acc *a = &x->acc[i][p];

			for (k = 0; k < a->n; k++)
				free(a->v[k].name);
			ln_free_all(a->v, a->with, a->over, a->why, a->driver);
		}
		free(x->acc[i]);
	}
	free(x->acc);
	pthread_mutex_destroy(&x->lock);
	free(x);
	c->ctr = NULL;
}

/* One read of node's port; the port's entry of the answer, or NULL with
 * the reason in why. *ans holds the answer for the caller to put. */
static struct json_object *read_port(struct vctx *c, size_t node, unsigned port,
				     struct json_object **ans, struct ln_buf *why)
{
	const struct port_info *pi = &c->ni[node].ports[port];
	struct json_object *e, *v;
	char name[96];
	const char *ports[1] = { name };

	*ans = NULL;
	snprintf(name, sizeof(name), "%s/%u", pi->dev, pi->port);
	if (c->ops->counters(c->octx, node, vs_lane(c, port), ports, 1, ans, why) < 0)
		return NULL;
	v = ln_json_at(*ans, "counters");
	e = json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, 0) : NULL;
	if (!e || !ln_json_str_at(e, "port") || strcmp(ln_json_str_at(e, "port"), name)) {
		ln_buf_addf(why, "the agent's answer has no counters of '%s'", name);
		return NULL;
	}
	if (!json_object_is_type(ln_json_at(e, "errors"), json_type_object)) {
		v = ln_json_at(e, "reason");
		ln_buf_addstr(why, v ? json_object_get_string(v) :
				       "no error counters in the answer");
		return NULL;
	}
	return e;
}

void vs_ctr_before(struct vctx *c, const struct ln_pair *p, struct vs_ctr_snap *s)
{
	size_t node[2] = { p->a, p->b };
	unsigned port[2] = { p->pa, p->pb };
	int k;

	memset(s, 0, sizeof(*s));
	if (!c->ctr)
		return;
	for (k = 0; k < 2; k++) {
		struct ln_buf why = LN_BUF_INIT;

		s->before[k] = read_port(c, node[k], port[k], &s->ans[k], &why);
		if (!s->before[k])
			s->why[k] = ln_buf_detach(&why, NULL);
		ln_buf_release(&why);
	}
}

/* Add one counter's rise (-1: not available) to the port's sums. */
static int add_delta(struct port_acc *a, const char *name, long long d, int error)
{
	struct ln_counter_delta *v;
	size_t k;

	for (k = 0; k < a->n; k++)
		if (!strcmp(a->v[k].name, name)) {
			if (d >= 0)
				a->v[k].delta = (a->v[k].delta < 0 ? 0 : a->v[k].delta) + d;
			return 0;
		}
	v = realloc(a->v, (a->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->v = v;
	v[a->n].name = strdup(name);
	if (!v[a->n].name)
		return -ENOMEM;
	v[a->n].delta = d;
	v[a->n++].error = error;
	return 0;
}

/* The rise of every counter from before to after into the port's sums;
 * returns the error counters' rise in this pair, -1 when none was
 * available. A counter that went back (reset) is not available. */
static long long add_rises(struct port_acc *a, struct json_object *before,
			   struct json_object *after)
{
	static const char *const kinds[] = { "errors", "other" };
	long long sum = -1;
	int k;

	for (k = 0; k < 2; k++) {
		struct json_object *b = ln_json_at(before, kinds[k]);
		struct json_object *now = ln_json_at(after, kinds[k]);

		if (!json_object_is_type(now, json_type_object))
			continue;
		json_object_object_foreach(now, name, av) {
			struct json_object *bv = ln_json_at(b, name);
			long long d = -1;

			if (json_object_is_type(av, json_type_int) &&
			    json_object_is_type(bv, json_type_int) &&
			    json_object_get_int64(av) >= json_object_get_int64(bv))
				d = json_object_get_int64(av) - json_object_get_int64(bv);
			if (add_delta(a, name, d, k == 0) < 0)
				return -2;
			if (k == 0 && d >= 0)
				sum = (sum < 0 ? 0 : sum) + d;
		}
	}
	return sum;
}

/* Add key to the set (grown by one); 0 or -ENOMEM. */
static int add_partner(size_t **set, size_t *n, size_t key)
{
	size_t i, *p;

	for (i = 0; i < *n; i++)
		if ((*set)[i] == key)
			return 0;
	p = realloc(*set, (*n + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*set = p;
	p[(*n)++] = key;
	return 0;
}

void vs_ctr_after(struct vctx *c, const struct ln_pair *p, struct vs_ctr_snap *s)
{
	struct vs_ctr *x = c->ctr;
	size_t node[2] = { p->a, p->b };
	unsigned port[2] = { p->pa, p->pb };
	int k;

	if (!x)
		return;
	for (k = 0; k < 2; k++) {
		struct ln_buf why = LN_BUF_INIT;
		struct json_object *ans = NULL, *after = NULL;
		struct port_acc *a = &x->acc[node[k]][port[k]];
		long long rise = -1;

		if (s->before[k])
			after = read_port(c, node[k], port[k], &ans, &why);
		pthread_mutex_lock(&x->lock);
		a->used = 1;
		if (add_partner(&a->with, &a->nwith, node[!k] << 8 | port[!k]) < 0)
			rise = -2;
		if (!after && !a->why)
			a->why = s->why[k] ? strdup(s->why[k]) : ln_buf_detach(&why, NULL);
		if (after && !a->driver && ln_json_at(after, "driver"))
			a->driver = strdup(json_object_get_string(ln_json_at(after, "driver")));
		if (after && rise != -2)
			rise = add_rises(a, s->before[k], after);
		if (x->max_errors >= 0 && rise > x->max_errors &&
		    add_partner(&a->over, &a->nover, node[!k] << 8 | port[!k]) < 0)
			rise = -2;
		if (rise == -2 && !a->why)
			a->why = strdup("out of memory");
		pthread_mutex_unlock(&x->lock);
		json_object_put(ans);
		json_object_put(s->ans[k]);
		free(s->why[k]);
		ln_buf_release(&why);
	}
	memset(s, 0, sizeof(*s));
}

/* The port's summed counters as the check's (a copy). */
static struct ln_port_counters *copy_counters(const struct port_acc *a, long long max_errors)
{
	struct ln_port_counters *pc = calloc(1, sizeof(*pc));
	size_t k;

	if (!pc || (a->n && !(pc->v = calloc(a->n, sizeof(*pc->v))))) {
		free(pc);
		return NULL;
	}
	pc->errors = -1;
	pc->max_errors = max_errors;
	pc->partners = a->nwith;
	pc->partners_over = a->nover;
	pc->driver = a->driver ? strdup(a->driver) : NULL;
	for (k = 0; k < a->n; k++, pc->n++) {
		pc->v[k] = a->v[k];
		pc->v[k].name = strdup(a->v[k].name);
		if (!pc->v[k].name) {
			ln_port_counters_free(pc);
			return NULL;
		}
		if (a->v[k].error && a->v[k].delta >= 0)
			pc->errors = (pc->errors < 0 ? 0 : pc->errors) + a->v[k].delta;
	}
	pc->unread = a->why || pc->errors < 0;
	return pc;
}

/* "rcvd_seq_err +40, out_of_seq_request +12": the error counters that rose. */
static void rises_text(const struct ln_port_counters *pc, struct ln_buf *out)
{
	size_t k;

	for (k = 0; k < pc->n; k++)
		if (pc->v[k].error && pc->v[k].delta > 0)
			ln_buf_addf(out, "%s%s +%lld", out->len ? ", " : "", pc->v[k].name,
				    pc->v[k].delta);
}

/* "lab1/rxe0" for partner key. */
static void partner_text(struct vctx *c, size_t key, struct ln_buf *out)
{
	ln_results_subject_ports(c->res, key >> 8, (int)(key & 0xff), LN_NO_NODE, -1, out);
}

static int blamed(struct vs_ctr *x, size_t key)
{
	return x->acc[key >> 8][key & 0xff].nover >= 2;
}

/* Judge one port's check k: status, reason and, for a culprit or a
 * suspect, a verdict. */
static int judge_port(struct vctx *c, enum ln_stage st, size_t i, size_t p, struct ln_check *k)
{
	struct vs_ctr *x = c->ctr;
	const struct port_acc *a = &x->acc[i][p];
	struct ln_buf subj = LN_BUF_INIT, rises = LN_BUF_INIT, who = LN_BUF_INIT;
	int r = 0;
	size_t j;

	ln_results_subject_ports(c->res, i, (int)p, LN_NO_NODE, -1, &subj);
	rises_text(k->ctr, &rises);
	for (j = 0; j < a->nover; j++) {
		if (j)
			ln_buf_addstr(&who, ", ");
		partner_text(c, a->over[j], &who);
	}
	if ((a->why || k->ctr->errors < 0) && x->max_errors >= 0) {
		r = ln_check_set(k, LN_ST_NOT_RUN, "counters of '%s' could not be read: %s",
				 subj.buf,
				 a->why ? a->why : "the driver has none of its error counters");
	} else if (a->why || k->ctr->errors < 0) {
		/* reported, not judged: a skip would fail the stage (skips come
		 * from failures), and a node whose driver has no counter table
		 * must still pass a stage that asked for no limit */
		r = ln_check_set(k, LN_ST_PASS, "not judged (no max_errors); counters of '%s' "
				 "could not be read: %s", subj.buf,
				 a->why ? a->why : "the driver has none of its error counters");
	} else if (a->nover >= 2) {
		r = ln_check_set(k, LN_ST_FAIL, "%lld errors (%s); over %lld with %zu of its %zu "
				 "partners (%s)", k->ctr->errors, rises.buf, x->max_errors,
				 a->nover, a->nwith, who.buf);
		if (r == 0 && !vs_bad_in(c, st, i, (int)p))
			r = ln_results_add_port_verdict(
				c->res, LN_VERDICT_PORT, st, i, (int)p, LN_NO_NODE, -1,
				"'%s' gained more than %lld errors with %zu partners (%s): %s",
				subj.buf, x->max_errors, a->nover, who.buf, rises.buf);
	} else if (a->nover == 1 && blamed(x, a->over[0])) {
		r = ln_check_set(k, LN_ST_PASS, "%lld errors (%s), over %lld only with '%s', which "
				 "is blamed", k->ctr->errors, rises.buf, x->max_errors, who.buf);
	} else if (a->nover == 1) {
		r = ln_check_set(k, LN_ST_FAIL, "suspect: %lld errors (%s), over %lld with its "
				 "one partner '%s' only", k->ctr->errors, rises.buf,
				 x->max_errors, who.buf);
		if (r == 0)
			r = ln_results_add_port_verdict(
				c->res, LN_VERDICT_UNDETERMINED, st, i, (int)p, LN_NO_NODE, -1,
				"'%s' gained more than %lld errors with one partner only ('%s'): "
				"the link or either end; suspect, not blamed",
				subj.buf, x->max_errors, who.buf);
	}
	ln_buf_release(&subj);
	ln_buf_release(&rises);
	ln_buf_release(&who);
	return r;
}

int vs_ctr_judge(struct vctx *c, enum ln_stage st)
{
	struct vs_ctr *x = c->ctr;
	size_t i, p;
	int r = 0;

	for (i = 0; x && i < c->n && r == 0; i++)
		for (p = 0; p < c->ni[i].nports && r == 0; p++) {
			const struct port_acc *a = &x->acc[i][p];
			struct ln_check *k;
			long idx;

			if (!a->used)
				continue;
			idx = vs_add_check(c, st, i, LN_NO_NODE, "error counters");
			if (idx < 0)
				return -ENOMEM;
			k = &c->res->checks[idx];
			k->pa = (int)p;
			k->unit = "errors";
			k->threshold = x->max_errors >= 0 ? (double)x->max_errors : NAN;
			k->ctr = copy_counters(a, x->max_errors);
			if (!k->ctr)
				return -ENOMEM;
			k->value = k->ctr->errors >= 0 ? (double)k->ctr->errors : NAN;
			r = judge_port(c, st, i, p, k);
		}
	return r;
}
