/* SPDX-License-Identifier: MIT */
/*
 * The access stage (stage_access.h): the connects each target must
 * refuse, tried from its nodes. A refusal passes; a connect the target
 * accepted fails (the agent deleted it at once) with a target verdict,
 * except a claimed NQN on a target with neither dhchap nor TLS, which is
 * a warning ("open to NQN claims"); an attempt that proves nothing (no
 * answer, nothing listening, the prober's own kernel refusing) is not
 * run, with the agent's reason. A check is the target node's, and only
 * the stage's own target verdicts blame (the diagnosis skips it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "orchestrator/validate/stage_access.h"
#include "orchestrator/validate/stage_common.h"

static int in_hosts(const struct ln_target *t, size_t i)
{
	size_t k;

	if (t->hosts_any)
		return 1;
	for (k = 0; k < t->n_hosts; k++)
		if (t->hosts[k] == i)
			return 1;
	return 0;
}

/* Node i is an initiator of target tix (ti == (size_t)-1: of any). */
static int initiator_of(const struct ln_spec *sp, size_t i, size_t ti)
{
	size_t k;

	for (k = 0; k < sp->n_initiators; k++)
		if (sp->initiators[k].node == i && (ti == (size_t)-1 || sp->initiators[k].target == ti))
			return 1;
	return 0;
}

/* The best prober for t: usable, not avoid, in hosts when want_host (or
 * out of them when want_host is 0; either when -1), with no connection
 * first (none at all, then none to t), another node than the target's
 * before its own (whose connect would stay on the node); LN_NO_NODE when
 * none fits. */
static size_t pick(const struct ln_spec *sp, size_t t, const char *const *nqn,
		   const unsigned char *under, int want_host, size_t avoid)
{
	const struct ln_target *tg = &sp->targets[t];
	size_t best = LN_NO_NODE, i;
	int best_rank = 99;

	for (i = 0; i < sp->n_nodes; i++) {
		int rank;

		if (!nqn[i] || (under && !under[i]) || i == avoid ||
		    (want_host >= 0 && in_hosts(tg, i) != want_host))
			continue;
		rank = initiator_of(sp, i, t) ? 3 : initiator_of(sp, i, (size_t)-1) ? 2 : 1;
		if (want_host < 0 && !in_hosts(tg, i))
			rank += 3;	/* plain TCP: an allowed host proves the most */
		rank = 2 * rank + (i == tg->node);
		if (rank < best_rank) {
			best_rank = rank;
			best = i;
		}
	}
	return best;
}

/* The first allowed host whose NQN is known: the one a claim names. */
static size_t claimable(const struct ln_target *tg, const char *const *nqn)
{
	size_t k;

	for (k = 0; k < tg->n_hosts; k++)
		if (nqn[tg->hosts[k]])
			return tg->hosts[k];
	return LN_NO_NODE;
}

size_t vs_access_plan(const struct ln_spec *sp, size_t t, const char *const *host_nqn,
		      const unsigned char *under, struct vs_access_attempt *out)
{
	const struct ln_target *tg = &sp->targets[t];
	struct vs_access_attempt *a = out;
	size_t n = 0, h;

	memset(out, 0, VS_ACCESS_MAX * sizeof(*out));
	a[n].kind = VS_ACCESS_OTHER_HOST;
	a[n].claimed = LN_NO_NODE;
	a[n].must_refuse = 1;
	a[n].prober = tg->hosts_any ? LN_NO_NODE : pick(sp, t, host_nqn, under, 0, LN_NO_NODE);
	if (a[n].prober == LN_NO_NODE)
		a[n].why = tg->hosts_any ? "its hosts are 'any': every node may connect" :
			   "every node under test is in its hosts";
	n++;
	h = tg->hosts_any ? LN_NO_NODE : claimable(tg, host_nqn);
	if (!tg->hosts_any && tg->n_hosts) {
		a[n].kind = VS_ACCESS_CLAIM;
		a[n].claimed = h;
		a[n].must_refuse = tg->dhchap.present || tg->tls;
		a[n].prober = h == LN_NO_NODE ? LN_NO_NODE : pick(sp, t, host_nqn, under, 0, h);
		if (a[n].prober == LN_NO_NODE && h != LN_NO_NODE)
			a[n].prober = pick(sp, t, host_nqn, under, 1, h);
		if (a[n].prober == LN_NO_NODE)
			a[n].why = h == LN_NO_NODE ? "no allowed host's NQN is known (no facts)" :
				   "no other node under test to claim its host's NQN from";
		n++;
	}
	if (!tg->hosts_any && tg->n_hosts && tg->dhchap.present) {
		a[n] = a[n - 1];
		a[n].kind = VS_ACCESS_WRONG_SECRET;
		a[n].must_refuse = 1;
		if (tg->transport == LN_TRANSPORT_RDMA) {
			/* 6.12: a wrong secret over RDMA hangs the host in
			 * nvme_auth_wait, and its later connects with it */
			a[n].moot = 1;
			a[n].why = "not tried over rdma: a wrong DH-HMAC-CHAP secret blocks an "
				   "NVMe/RDMA host in nvme_auth_wait (Linux 6.12), so only the "
				   "attempt without a secret is made";
		} else {
			a[n].wrong_key = 1;
		}
		n++;
	}
	if (tg->tls) {
		a[n].kind = VS_ACCESS_PLAIN_TCP;
		a[n].claimed = LN_NO_NODE;
		a[n].must_refuse = 1;
		a[n].prober = pick(sp, t, host_nqn, under, -1, LN_NO_NODE);
		if (a[n].prober == LN_NO_NODE)
			a[n].why = "no node under test to connect from";
		n++;
	}
	return n;
}

char *vs_access_place(const struct ln_spec *sp, size_t t, const struct vs_access_attempt *at,
		      const char *const *host_nqn)
{
	const struct ln_target *tg = &sp->targets[t];
	char *s = NULL;

	if (at->wrong_key && tg->transport == LN_TRANSPORT_RDMA)
		return NULL;
	if (asprintf(&s, "%s,%s,%u,%s,%s,%s", tg->transport == LN_TRANSPORT_RDMA ? "rdma" : "tcp",
		     tg->address, (unsigned)tg->service, tg->nqn,
		     at->claimed == LN_NO_NODE ? "self" : host_nqn[at->claimed],
		     at->wrong_key ? "wrong" : "none") < 0)
		return NULL;
	return s;
}

/* The check's name: the target, the prober and what it presents. */
static void attempt_name(struct vctx *c, const struct ln_target *tg,
			 const struct vs_access_attempt *at, char *name, size_t size)
{
	const char *p = at->prober == LN_NO_NODE ? "no node" : vs_nname(c, at->prober);

	switch (at->kind) {
	case VS_ACCESS_OTHER_HOST:
		snprintf(name, size, "%s: %s as itself (not in hosts)", tg->nqn, p);
		break;
	case VS_ACCESS_CLAIM:
	case VS_ACCESS_WRONG_SECRET:
		snprintf(name, size, "%s: %s claiming %s's host NQN%s", tg->nqn, p,
			 at->claimed == LN_NO_NODE ? "an allowed host" : vs_nname(c, at->claimed),
			 at->kind == VS_ACCESS_WRONG_SECRET ? " with a wrong secret" : "");
		break;
	case VS_ACCESS_PLAIN_TCP:
		snprintf(name, size, "%s: %s over plain TCP (no TLS)", tg->nqn, p);
		break;
	}
}

static int64_t int_at(struct json_object *x, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(x, key, &v) ? json_object_get_int64(v) : 0;
}

/* The warning of a claim a target without dhchap or TLS let in. */
static int open_to_claims(struct vctx *c, const struct ln_target *tg,
			  const struct vs_access_attempt *at)
{
	return ln_results_add_target_verdict(c->res, LN_STAGE_ACCESS, tg->node, 1,
					     "'%s' is open to NQN claims: '%s' connected as '%s' "
					     "without a secret", tg->nqn, vs_nname(c, at->prober),
					     vs_nname(c, at->claimed));
}

/* Judge the agent's answer x to one attempt into check idx: a connect
 * left behind fails it whatever the outcome, an accepted one that must be
 * refused blames the target. */
static int judge(struct vctx *c, size_t t, const struct vs_access_attempt *at, long idx,
		 struct json_object *x)
{
	const struct ln_target *tg = &c->spec->targets[t];
	struct ln_check *k = &c->res->checks[idx];
	const char *outcome = ln_json_str_at(x, "outcome"), *error = ln_json_str_at(x, "error");
	const char *kept = ln_json_str_at(x, "kept"), *p = vs_nname(c, at->prober);
	const char *how = int_at(x, "deleted_at_once") ? "deleted at once" :
			  "deleted after the attempt";
	int64_t left = int_at(x, "left_behind");
	struct ln_buf lb = LN_BUF_INIT;
	int accepted = outcome && !strcmp(outcome, "accepted"), r;

	if (!outcome)
		return ln_check_set(k, LN_ST_NOT_RUN, "the agent's answer has no outcome");
	if (left > 0)
		ln_buf_addf(&lb, "%lld controller(s) or connect(s) left behind on '%s': %s",
			    (long long)left, p, kept ? kept : "a connect that did not end "
			    "(uninterruptible sleep in the kernel)");
	if (accepted && at->must_refuse) {
		r = ln_check_set(k, LN_ST_FAIL, "accepted (%s): the connect must be refused%s%s",
				 how, lb.len ? "; " : "", lb.buf);
		if (r == 0)
			r = ln_results_add_target_verdict(c->res, LN_STAGE_ACCESS, tg->node, 0,
							  "'%s' accepted what it must refuse: %s",
							  tg->nqn, k->name);
	} else if (lb.len) {
		r = ln_check_set(k, LN_ST_FAIL, "%s", lb.buf);
		if (r == 0 && accepted)
			r = open_to_claims(c, tg, at);
	} else if (!strcmp(outcome, "refused")) {
		r = ln_check_set(k, LN_ST_PASS, "refused: %s", error ? error : "(no message)");
	} else if (accepted) {
		k->warning = 1;
		r = ln_check_set(k, LN_ST_PASS, "warning: open to NQN claims: '%s' let '%s' in as "
				 "'%s' (%s); give it dhchap", tg->nqn, p, vs_nname(c, at->claimed),
				 how);
		if (r == 0)
			r = open_to_claims(c, tg, at);
	} else {
		r = ln_check_set(k, LN_ST_NOT_RUN, "proves nothing (%s): %s", outcome,
				 error ? error : "no message");
	}
	ln_buf_release(&lb);
	return r;
}

/* One attempt: asked of its prober, judged into a new check. */
static int one(struct vctx *c, size_t t, const struct vs_access_attempt *at,
	       const char *const *nqn, int timeout_s)
{
	const struct ln_target *tg = &c->spec->targets[t];
	struct json_object *ans = NULL, *arr;
	struct ln_buf err = LN_BUF_INIT;
	char name[800], *place = NULL;
	long idx;
	int r;

	attempt_name(c, tg, at, name, sizeof(name));
	idx = vs_add_check(c, LN_STAGE_ACCESS, tg->node, LN_NO_NODE, name);
	if (idx < 0)
		return -ENOMEM;
	if (at->moot) {
		c->res->checks[idx].moot = 1;
		return ln_check_set(&c->res->checks[idx], LN_ST_SKIPPED, "%s", at->why);
	}
	if (at->prober == LN_NO_NODE)
		return ln_check_set(&c->res->checks[idx], LN_ST_NOT_RUN, "%s", at->why);
	if (!c->ops->refused)
		return ln_check_set(&c->res->checks[idx], LN_ST_NOT_RUN,
				    "this transport cannot ask a node to connect");
	place = vs_access_place(c->spec, t, at, nqn);
	if (!place)
		return -ENOMEM;
	r = c->ops->refused(c->octx, at->prober, (const char *const *)&place, 1, timeout_s,
			    &ans, &err);
	if (r < 0) {
		r = ln_check_set(&c->res->checks[idx], LN_ST_NOT_RUN, "cannot ask '%s': %s",
				 vs_nname(c, at->prober), err.buf);
	} else if (!json_object_object_get_ex(ans, "refused", &arr) ||
		   !json_object_is_type(arr, json_type_array) ||
		   json_object_array_length(arr) != 1) {
		r = ln_check_set(&c->res->checks[idx], LN_ST_NOT_RUN,
				 "the agent on '%s' answered no attempt", vs_nname(c, at->prober));
	} else {
		r = judge(c, t, at, idx, json_object_array_get_idx(arr, 0));
	}
	vs_progress(c, "access %s: %s", name, ln_status_name(c->res->checks[idx].status));
	json_object_put(ans);
	free(place);
	ln_buf_release(&err);
	return r;
}

int vs_access_stage(struct vctx *c)
{
	const struct ln_spec *sp = c->spec;
	struct vs_access_attempt at[VS_ACCESS_MAX];
	const char **nqn = calloc(c->n ? c->n : 1, sizeof(*nqn));
	unsigned char *under = calloc(c->n ? c->n : 1, 1);
	int timeout_s = vs_timeout_s(sp->validation.access.timeout_ms), r = 0, any = 0;
	size_t i, t, k, n;

	if (!nqn || !under) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c->n; i++) {
		nqn[i] = c->ni[i].facts ? ln_json_str_at(c->ni[i].facts, "host_nqn") : NULL;
		under[i] = (unsigned char)vs_under_test(c, i);
	}
	for (t = 0; t < sp->n_targets && r >= 0; t++) {
		n = vs_access_plan(sp, t, nqn, under, at);
		for (k = 0; k < n && r >= 0; k++) {
			any = 1;
			r = one(c, t, &at[k], nqn, timeout_s);
		}
	}
	vs_stage_ran(c, LN_STAGE_ACCESS, any, r, "no target");
out:
	free(nqn);
	free(under);
	return r < 0 ? r : 0;
}
