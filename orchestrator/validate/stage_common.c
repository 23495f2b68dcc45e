/* SPDX-License-Identifier: MIT */
/*
 * Helpers every stage family uses (see stage_common.h). Every probe goes
 * through ops->run, i.e. the agent's bounded `run`; a bound that fires is
 * reported with the node, the pair, the stage and the command. Pairwise
 * stages run in rounds of disjoint pairs, the pairs of a round in
 * parallel threads.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/validate/stage_common.h"

/* Format one entry onto a NULL-ended list of at most max (n: its count);
 * nothing when it is full or out of memory. */
static __attribute__((format(printf, 4, 0))) void list_push(char **list, int *n, int max,
							     const char *fmt, va_list ap)
{
	char *s = NULL;

	if (*n >= max)
		return;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	if (s)
		list[(*n)++] = s;
	list[*n] = NULL;
}

void vs_arg(struct argv *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	list_push(a->v, &a->n, MAX_ARGS, fmt, ap);
	va_end(ap);
}

void vs_env(struct argv *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	list_push(a->env, &a->n_env, LN_RUN_ENV_MAX, fmt, ap);
	va_end(ap);
}

void vs_argv_free(struct argv *a)
{
	int i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	for (i = 0; i < a->n_env; i++)
		free(a->env[i]);
	a->n = a->n_env = 0;
	a->v[0] = a->env[0] = NULL;
}

char *vs_argv_join(const struct argv *a)
{
	struct ln_buf b = LN_BUF_INIT;
	int i;

	/* the environment first, as a shell would show it */
	for (i = 0; i < a->n_env; i++)
		ln_buf_addf(&b, "%s ", a->env[i]);
	for (i = 0; i < a->n; i++)
		ln_buf_addf(&b, "%s%s", i ? " " : "", a->v[i]);
	return ln_buf_detach(&b, NULL);
}

void vs_arg_mca(struct argv *a, const struct ln_spec *sp)
{
	size_t k;

	for (k = 0; k < sp->mpi.n_mca; k++) {
		vs_arg(a, "--mca");
		vs_arg(a, "%s", sp->mpi.mca[k].key);
		vs_arg(a, "%s", sp->mpi.mca[k].value);
	}
}

void vs_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

void vs_progress(struct vctx *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->o->progress)
		c->o->progress(c->o->progress_ctx, line);
	else
		ln_debug("%s", line);
}

const char *vs_nname(struct vctx *c, size_t i)
{
	return c->spec->nodes[i].name;
}

int vs_under_test(struct vctx *c, size_t i)
{
	return !c->o->limit || c->o->limit[i];
}

int vs_timeout_s(uint64_t timeout_ms)
{
	return (int)((timeout_ms + 999) / 1000);
}

int vs_bad_in(struct vctx *c, enum ln_stage st, size_t node, int port)
{
	size_t i;

	for (i = 0; i < c->res->nverdicts; i++) {
		const struct ln_verdict *v = &c->res->verdicts[i];

		if (v->stage == st && v->a == node &&
		    (v->kind == LN_VERDICT_NODE ||
		     (v->kind == LN_VERDICT_PORT && (port < 0 || v->pa == port))))
			return 1;
	}
	return 0;
}

long vs_add_check(struct vctx *c, enum ln_stage st, size_t a, size_t b, const char *name)
{
	return ln_results_add_check(c->res, st, a, b, name);
}

long vs_add_pair_check(struct vctx *c, enum ln_stage st, const struct ln_pair *p,
		       const char *name)
{
	long idx = ln_results_add_check(c->res, st, p->a, p->b, name);

	if (idx >= 0) {
		c->res->checks[idx].pa = (int)p->pa;
		c->res->checks[idx].pb = (int)p->pb;
	}
	return idx;
}

int vs_run_probe(struct vctx *c, enum ln_stage st, size_t node, struct argv *av, int timeout_s,
		 struct ln_probe_result *pr, struct ln_attempt *at, struct ln_buf *why)
{
	struct ln_buf err = LN_BUF_INIT;
	double t0 = ln_now_s();
	int r;

	ln_buf_reset(&pr->output);
	pr->exit_status = 0;
	pr->timed_out = 0;
	at->command = vs_argv_join(av);
	if (av->n_env && !c->ops->run_env) {
		ln_buf_addstr(&err, "this transport gives programs no environment");
		r = -EINVAL;
	} else if (av->n_env) {
		r = c->ops->run_env(c->octx, node, (const char *const *)av->v,
				    (const char *const *)av->env, timeout_s, pr, &err);
	} else {
		r = c->ops->run(c->octx, node, 0, (const char *const *)av->v,
				av->sha256[0] ? av->sha256 : NULL, timeout_s, pr, &err);
	}
	at->seconds = ln_now_s() - t0;
	if (r < 0)
		ln_buf_addf(why, "cannot run '%s' on '%s': %s", av->v[0], vs_nname(c, node),
			    err.buf);
	else if (pr->timed_out) {
		at->timed_out = 1;
		ln_buf_addf(why, "%s on '%s' (stage %s) timed out after %ds: %s", av->v[0],
			    vs_nname(c, node), ln_stage_name(st), timeout_s, at->command);
		r = -LN_ETIMEOUT;
	}
	ln_buf_release(&err);
	return r;
}

int vs_record(struct vctx *c, enum ln_stage st, size_t a, size_t b, const char *name,
	      struct ln_attempt *at, struct ln_buf *why, const char *unit, double threshold)
{
	long idx = vs_add_check(c, st, a, b, name);
	int r;

	if (!at->ok && !at->detail)
		at->detail = ln_buf_detach(why, NULL);
	if (idx < 0)
		r = -ENOMEM;
	else
		r = ln_check_add_attempt(&c->res->checks[idx], at);
	if (idx >= 0) {
		c->res->checks[idx].unit = unit;
		c->res->checks[idx].threshold = threshold;
	}
	free(at->detail);
	free(at->command);
	memset(at, 0, sizeof(*at));
	at->value = NAN;
	ln_buf_reset(why);
	return r;
}

int vs_not_run_check(struct vctx *c, enum ln_stage st, size_t a, const char *name,
		     const char *fmt, ...)
{
	long idx = vs_add_check(c, st, a, LN_NO_NODE, name);
	char *s = NULL;
	va_list ap;
	int r;

	if (idx < 0)
		return -ENOMEM;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	r = ln_check_set(&c->res->checks[idx], LN_ST_NOT_RUN, "%s", s ? s : "not run");
	free(s);
	return r;
}

int vs_push_file(struct vctx *c, size_t node, const char *local, const char *remote,
		 struct ln_buf *why)
{
	struct ln_buf data = LN_BUF_INIT, err = LN_BUF_INIT;
	int r = ln_file_read(local, &data, &err);

	if (r == 0)
		r = c->ops->put(c->octx, node, remote, data.buf, data.len, &err);
	if (r < 0)
		ln_buf_addf(why, "cannot install '%s' on '%s': %s", remote, vs_nname(c, node),
			    err.buf);
	ln_buf_release(&data);
	ln_buf_release(&err);
	return r;
}

/* ---- the opening and closing of a probe stage ---- */

void vs_stage_open(struct stage_run *sr, uint64_t timeout_ms, size_t output_cap, double want)
{
	memset(&sr->at, 0, sizeof(sr->at));
	sr->at.value = NAN;
	ln_buf_init(&sr->pr.output, output_cap);
	ln_buf_init(&sr->why, 0);
	sr->timeout_s = vs_timeout_s(timeout_ms);
	sr->want = want;
}

void vs_stage_drop_attempt(struct stage_run *sr)
{
	free(sr->at.command);
	memset(&sr->at, 0, sizeof(sr->at));
	sr->at.value = NAN;
	ln_buf_reset(&sr->why);
}

int vs_stage_close(struct stage_run *sr, int r)
{
	ln_buf_release(&sr->pr.output);
	ln_buf_release(&sr->why);
	return r < 0 && r != -LN_ETIMEOUT ? r : 0;
}

void vs_stage_ran(struct vctx *c, enum ln_stage st, int any, int r, const char *reason)
{
	if (!any && r >= 0)
		c->res->stages[st].reason = strdup(reason);
	else
		c->res->stages[st].ran = 1;
}

/* ---- rounds of disjoint pairs ---- */

struct round_job {
	struct vctx *c;
	enum ln_stage st;
	pair_fn fn;
	const struct ln_pair *pairs;
	size_t npairs;
	struct pair_outcome *po;
	size_t next;
	pthread_mutex_t lock;
};

static void *round_worker(void *p)
{
	struct round_job *j = p;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&j->lock);
		i = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->npairs)
			return NULL;
		j->fn(j->c, j->st, &j->pairs[i], (unsigned)i, &j->po[i]);
	}
}

int vs_run_round_all(struct vctx *c, enum ln_stage st, pair_fn fn, const struct ln_pair *pairs,
		     size_t n, struct pair_outcome *po)
{
	struct round_job j = { c, st, fn, pairs, n, po, 0, PTHREAD_MUTEX_INITIALIZER };
	size_t nt = n < c->parallel ? n : c->parallel, i, made = 0;
	pthread_t *th = calloc(nt ? nt : 1, sizeof(*th));

	if (!th)
		return -ENOMEM;
	for (i = 0; i < nt; i++)
		if (pthread_create(&th[i], NULL, round_worker, &j) == 0)
			made++;
		else
			break;
	if (!made)
		round_worker(&j);
	for (i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}
