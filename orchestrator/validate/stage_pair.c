/* SPDX-License-Identifier: MIT */
/*
 * The pairwise stages, rping, bandwidth (ib_write_bw / ib_send_bw) and
 * latency (ib_write_lat / ib_send_lat):
 * rounds of disjoint pairs of ports, every declared rail (rails.h), a
 * server on one end and a client on the other, a fresh server for every
 * attempt, then the diagnosis' second pass; both ends' error counters
 * are read before and after each pair (counters.c). Each tool is one row
 * of a table: how to build its server and client argv, and how to judge
 * an attempt from their results.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "orchestrator/validate/diagnose.h"
#include "orchestrator/validate/parse/parse.h"
#include "orchestrator/validate/stage_common.h"
#include "orchestrator/validate/stage_pair.h"

#define RPING_PORT_BASE 7174

struct pair_tool {
	/* The check's name and the tool's name in messages. */
	const char *(*name)(const struct vctx *c);
	uint64_t (*timeout_ms)(const struct ln_validation *v);
	/* Server argv into sv, client argv into cv. */
	void (*build)(const struct pair_try *t, struct argv *sv, struct argv *cv);
	/* Judge a client that ran and did not time out: at->ok, at->value,
	 * or the reason into why. */
	void (*judge)(const struct pair_try *t, struct ln_attempt *at, struct ln_buf *why);
	/* Set a recorded check's unit, line rate and threshold; may be NULL. */
	void (*annotate)(struct vctx *c, const struct ln_pair *p, struct ln_check *k);
	/* A second run of the same pair after a passing first one, when the
	 * spec asks for it (the bandwidth stage's message rate); may be NULL. */
	int (*second_wanted)(const struct vctx *c);
	void (*second_build)(const struct pair_try *t, struct argv *sv, struct argv *cv);
	void (*second_judge)(const struct pair_try *t, struct ln_attempt *at, struct ln_buf *why);
};

/* ---- rping ---- */

static const char *rping_name(const struct vctx *c)
{
	(void)c;
	return "rping";
}

static uint64_t rping_timeout_ms(const struct ln_validation *v)
{
	return v->rping.timeout_ms;
}

/* Both name the server's address (rping -S must match too); the client
 * is bound to its own port's address (-I, issue 27): left to the route,
 * a client on rails that share a subnet leaves by whichever port the
 * route picks, and a dead port could pass. */
static void rping_build(const struct pair_try *t, struct argv *sv, struct argv *cv)
{
	struct argv *both[2] = { sv, cv };
	int k;

	for (k = 0; k < 2; k++) {
		vs_arg(both[k], "rping");
		vs_arg(both[k], k ? "-c" : "-s");
		vs_arg(both[k], "-a");
		vs_arg(both[k], "%s", t->c->ni[t->a].ports[t->pa].ip);
		vs_arg(both[k], "-p");
		vs_arg(both[k], "%u", RPING_PORT_BASE + t->slot);
		vs_arg(both[k], "-C");
		vs_arg(both[k], "%u", t->c->spec->validation.rping.count);
		vs_arg(both[k], "-V");
	}
	vs_arg(cv, "-I");
	vs_arg(cv, "%s", t->c->ni[t->b].ports[t->pb].ip);
}

static void rping_judge(const struct pair_try *t, struct ln_attempt *at, struct ln_buf *why)
{
	struct vctx *c = t->c;
	const struct server_job *job = t->job;
	struct ln_rping cr, sr;

	ln_parse_rping(t->cres->exit_status, t->cres->output.buf, t->cres->output.len, &cr);
	ln_parse_rping(job->res.exit_status, job->res.output.buf, job->res.output.len, &sr);
	if (!cr.ok)
		ln_buf_addf(why, "client on '%s': %s", vs_nname(c, t->b), cr.reason);
	else if (job->rc < 0)
		ln_buf_addf(why, "cannot run the rping server on '%s': %s", vs_nname(c, t->a),
			    job->err.buf);
	else if (job->res.timed_out)
		ln_buf_addf(why,
			    "rping server on '%s' (stage rping, pair %s-%s) timed out after %ds",
			    vs_nname(c, t->a), vs_nname(c, t->a), vs_nname(c, t->b), t->timeout_s);
	else if (!sr.ok)
		ln_buf_addf(why, "server on '%s': %s", vs_nname(c, t->a), sr.reason);
	else
		at->ok = 1;
}

/* ---- bandwidth: perftest's ib_write_bw / ib_send_bw ---- */

static const char *bw_name(const struct vctx *c)
{
	return c->spec->validation.bandwidth.tool == LN_BW_IB_SEND_BW ? "ib_send_bw" :
									"ib_write_bw";
}

static uint64_t bw_timeout_ms(const struct ln_validation *v)
{
	return v->bandwidth.timeout_ms;
}

static void perftest_build(const struct pair_try *t, const char *tool, uint64_t size,
			   unsigned iters, unsigned port_base, const char *extra, struct argv *sv,
			   struct argv *cv)
{
	/* the program from the stage's perftest_dir, when it has one */
	const char *prog = t->c->perftest[0] ? t->c->perftest : tool;
	int bind = vs_perftest_binds(t->c, prog, t->a, t->pa, t->b, t->pb);

	vs_perftest_argv(&t->c->ni[t->a].ports[t->pa], &t->c->ni[t->b].ports[t->pb], prog, size,
			 iters, port_base + t->slot, extra, bind, sv, cv);
}

static void bw_build(const struct pair_try *t, struct argv *sv, struct argv *cv)
{
	const struct ln_validation *v = &t->c->spec->validation;

	perftest_build(t, bw_name(t->c), v->bandwidth.size, t->c->iters, v->bandwidth.port_base,
		       "--report_gbits", sv, cv);
}

/* The threshold in Gb/s for a pair of line rate line_rate, NAN when none. */
static double bw_threshold(const struct ln_validation *v, double line_rate)
{
	if (v->bandwidth.min_kind == LN_MIN_RATE)
		return (double)v->bandwidth.min_bps / 1e9;
	if (v->bandwidth.min_kind == LN_MIN_FRACTION)
		return v->bandwidth.min_fraction * line_rate;
	return NAN;
}

static double pair_line_rate(const struct vctx *c, size_t a, unsigned pa, size_t b, unsigned pb)
{
	return fmin(c->ni[a].ports[pa].rate_gbps, c->ni[b].ports[pb].rate_gbps);
}

/* The server's report agrees with the client's figure (both ends print
 * it): Gb/s or MsgRate within BW_AGREE, typical latency within LAT_AGREE. */
enum pair_figure { FIG_GBPS, FIG_MPPS, FIG_LAT };
static int perftest_server_ok(const struct pair_try *t, double client, enum pair_figure fig,
			      struct ln_attempt *at, struct ln_buf *why)
{
	static const char *const unit[] = { "Gb/s", "Mpps", "us" };
	const struct ln_buf *o = &t->job->res.output;
	struct ln_perftest pt = { 0 };
	struct ln_perftest_lat sl;
	struct ln_buf perr = LN_BUF_INIT;
	int ok = 0, ran = vs_server_ran(t, why), parsed = 0;
	double sv = 0;

	if (ran && fig == FIG_LAT) {
		parsed = ln_parse_perftest_lat(o->buf, o->len, &sl, &perr) >= 0;
		sv = parsed ? sl.typical : 0;
	} else if (ran) {
		parsed = ln_parse_perftest(o->buf, o->len, &pt, &perr) >= 0;
		if (parsed)
			sv = fig == FIG_MPPS ? ln_perftest_large(&pt)->msg_rate :
					       ln_perftest_gbps(&pt, ln_perftest_large(&pt));
	}
	if (!parsed)
		vs_server_unread(t, at, ran, &perr, why);
	else
		ok = vs_ends_agree(t, client, sv, fig == FIG_LAT ? LAT_AGREE : BW_AGREE, unit[fig],
				   why);
	ln_perftest_release(&pt);
	ln_buf_release(&perr);
	return ok;
}

static void bw_judge(const struct pair_try *t, struct ln_attempt *at, struct ln_buf *why)
{
	struct vctx *c = t->c;
	const struct ln_validation *v = &c->spec->validation;
	struct ln_perftest pt = { 0 };
	struct ln_buf perr = LN_BUF_INIT;
	double gbps, want;

	if (ln_parse_perftest(t->cres->output.buf, t->cres->output.len, &pt, &perr) < 0) {
		ln_buf_addf(why, "client on '%s': %s (exit status %d)", vs_nname(c, t->b), perr.buf,
			    t->cres->exit_status);
		vs_client_not_run(t, at);
	} else {
		gbps = ln_perftest_gbps(&pt, ln_perftest_large(&pt));
		at->value = gbps;
		want = bw_threshold(v, pair_line_rate(c, t->a, t->pa, t->b, t->pb));
		if (!perftest_server_ok(t, gbps, FIG_GBPS, at, why))
			at->ok = 0;	/* why names the end */
		else if (v->bandwidth.min_kind == LN_MIN_FRACTION && isnan(want))
			ln_buf_addf(why, "%.3g Gb/s measured, but the line rate of '%s' or '%s' is "
				    "unknown", gbps, vs_nname(c, t->a), vs_nname(c, t->b));
		else if (!isnan(want) && gbps < want)
			ln_buf_addf(why, "%.3g Gb/s is below %.3g Gb/s", gbps, want);
		else
			at->ok = 1;
	}
	ln_perftest_release(&pt);
	ln_buf_release(&perr);
}

static void bw_annotate(struct vctx *c, const struct ln_pair *p, struct ln_check *k)
{
	const struct ln_validation *v = &c->spec->validation;

	k->unit = "Gb/s";
	k->line_rate = pair_line_rate(c, p->a, p->pa, p->b, p->pb);
	if (v->bandwidth.min_kind != LN_MIN_NONE)
		k->threshold = bw_threshold(v, k->line_rate);
	if (v->bandwidth.min_msg_rate > 0)
		k->msg_rate_min = v->bandwidth.min_msg_rate;
	vs_perftest_note(c, c->perftest[0] ? c->perftest : bw_name(c), k);
}

/* ---- message rate: the bandwidth tool again, at msg_size ---- */

/* Issue 27 pt 3: perftest's MsgRate[Mpps] at a small size, where the
 * rate of work requests, not the line, is the limit. One more run of the
 * same pair on the same TCP port (its first server has exited), so a
 * pair below min_msg_rate is one check of its link, as a slow one is. */
static int msgrate_wanted(const struct vctx *c)
{
	return c->spec->validation.bandwidth.min_msg_rate > 0;
}

static uint64_t msgrate_size(const struct ln_validation *v)
{
	return v->bandwidth.msg_size ? v->bandwidth.msg_size : LN_BW_MSG_SIZE;
}

static void msgrate_build(const struct pair_try *t, struct argv *sv, struct argv *cv)
{
	const struct ln_validation *v = &t->c->spec->validation;

	perftest_build(t, bw_name(t->c), msgrate_size(v), t->c->iters, v->bandwidth.port_base,
		       "--report_gbits", sv, cv);
}

static void msgrate_judge(const struct pair_try *t, struct ln_attempt *at, struct ln_buf *why)
{
	struct vctx *c = t->c;
	const struct ln_validation *v = &c->spec->validation;
	struct ln_perftest pt = { 0 };
	struct ln_buf perr = LN_BUF_INIT;
	double mpps;

	at->ok = 0;
	if (ln_parse_perftest(t->cres->output.buf, t->cres->output.len, &pt, &perr) < 0) {
		ln_buf_addf(why, "message rate at %llu B: client on '%s': %s (exit status %d)",
			    (unsigned long long)msgrate_size(v), vs_nname(c, t->b), perr.buf,
			    t->cres->exit_status);
		vs_client_not_run(t, at);
	} else {
		mpps = ln_perftest_large(&pt)->msg_rate;
		at->msg_rate = mpps;
		if (!perftest_server_ok(t, mpps, FIG_MPPS, at, why))
			at->ok = 0;	/* why names the end */
		else if (mpps < v->bandwidth.min_msg_rate)
			ln_buf_addf(why, "message rate %.3g Mpps at %llu B is below %.3g Mpps", mpps,
				    (unsigned long long)msgrate_size(v), v->bandwidth.min_msg_rate);
		else
			at->ok = 1;
	}
	ln_perftest_release(&pt);
	ln_buf_release(&perr);
}

/* ---- latency: perftest's ib_write_lat / ib_send_lat ---- */

static const char *lat_name(const struct vctx *c)
{
	return c->spec->validation.latency.tool == LN_LAT_IB_SEND_LAT ? "ib_send_lat" :
									 "ib_write_lat";
}

static uint64_t lat_timeout_ms(const struct ln_validation *v)
{
	return v->latency.timeout_ms;
}

static void lat_build(const struct pair_try *t, struct argv *sv, struct argv *cv)
{
	const struct ln_validation *v = &t->c->spec->validation;

	perftest_build(t, lat_name(t->c), v->latency.size, v->latency.iterations,
		       v->latency.port_base, NULL, sv, cv);
}

/* The thresholds in microseconds, NAN when none. */
static void lat_thresholds(const struct ln_validation *v, struct ln_latency *l)
{
	l->max_typical = v->latency.max_typical_us ? (double)v->latency.max_typical_us : NAN;
	l->max_p99 = v->latency.max_p99_us ? (double)v->latency.max_p99_us : NAN;
}

/* Judged on the client's report (the end that timed the round trips):
 * the typical latency against max_typical, the 99th percentile against
 * max_p99; both are named when both are over. The server must have run
 * and agree (perftest_server_ok). */
static void lat_judge(const struct pair_try *t, struct ln_attempt *at, struct ln_buf *why)
{
	struct vctx *c = t->c;
	struct ln_perftest_lat pl;
	struct ln_buf perr = LN_BUF_INIT;
	struct ln_latency th;

	if (ln_parse_perftest_lat(t->cres->output.buf, t->cres->output.len, &pl, &perr) < 0) {
		ln_buf_addf(why, "client on '%s': %s (exit status %d)", vs_nname(c, t->b), perr.buf,
			    t->cres->exit_status);
		vs_client_not_run(t, at);
		ln_buf_release(&perr);
		return;
	}
	at->value = pl.typical;
	at->lat.typical = pl.typical;
	at->lat.avg = pl.avg;
	at->lat.p99 = pl.p99;
	lat_thresholds(&c->spec->validation, &th);
	if (!perftest_server_ok(t, pl.typical, FIG_LAT, at, why)) {
		ln_buf_release(&perr);
		return;
	}
	if (!isnan(th.max_typical) && pl.typical > th.max_typical)
		ln_buf_addf(why, "typical latency %.2f us is above %.0f us", pl.typical,
			    th.max_typical);
	if (!isnan(th.max_p99) && pl.p99 > th.max_p99)
		ln_buf_addf(why, "%s99th percentile %.2f us is above %.0f us", why->len ? ", " : "",
			    pl.p99, th.max_p99);
	at->ok = why->len == 0;
	ln_buf_release(&perr);
}

static void lat_annotate(struct vctx *c, const struct ln_pair *p, struct ln_check *k)
{
	(void)p;
	k->unit = "us";
	lat_thresholds(&c->spec->validation, &k->lat);
	k->threshold = k->lat.max_typical;
	vs_perftest_note(c, c->perftest[0] ? c->perftest : lat_name(c), k);
}

static const struct pair_tool pair_tools[LN_STAGE_COUNT] = {
	[LN_STAGE_RPING] = { rping_name, rping_timeout_ms, rping_build, rping_judge, NULL },
	[LN_STAGE_BANDWIDTH] = { bw_name, bw_timeout_ms, bw_build, bw_judge, bw_annotate,
				 msgrate_wanted, msgrate_build, msgrate_judge },
	[LN_STAGE_LATENCY] = { lat_name, lat_timeout_ms, lat_build, lat_judge, lat_annotate },
};

/* ---- one pair ---- */

static void *server_thread(void *p)
{
	struct server_job *j = p;

	j->rc = j->c->ops->run(j->c->octx, j->node, j->lane, (const char *const *)j->argv->v, NULL,
			       j->timeout_s, &j->res, &j->err);
	return NULL;
}

/* One run of a server in a thread and its client after server_delay_ms,
 * then judge's verdict into at and why. Returns the client's run code;
 * *started is 0 when the server thread could not start (why says so). */
static int probe_run(struct pair_try *t,
		     void (*build)(const struct pair_try *, struct argv *, struct argv *),
		     void (*judge)(const struct pair_try *, struct ln_attempt *, struct ln_buf *),
		     struct ln_probe_result *cres, struct ln_attempt *at, struct ln_buf *why,
		     int *started)
{
	struct vctx *c = t->c;
	struct argv sv = { .n = 0 }, cv = { .n = 0 };
	struct server_job job;
	struct ln_buf cerr = LN_BUF_INIT;
	pthread_t th;
	char *cmd;
	int crc = 0;

	build(t, &sv, &cv);
	cmd = vs_argv_join(&cv);
	if (!at->command) {
		at->command = cmd;
	} else if (cmd) {
		/* both runs of the attempt, in order */
		struct ln_buf both = LN_BUF_INIT;

		ln_buf_addf(&both, "%s; %s", at->command, cmd);
		free(at->command);
		free(cmd);
		at->command = ln_buf_detach(&both, NULL);
		ln_buf_release(&both);
	}
	memset(&job, 0, sizeof(job));
	job.c = c;
	job.node = t->a;
	job.lane = vs_lane(c, t->pa);
	job.argv = &sv;
	job.timeout_s = t->timeout_s;
	ln_buf_init(&job.res.output, 16u << 20);
	*started = pthread_create(&th, NULL, server_thread, &job) == 0;
	if (!*started) {
		/* named by the bandwidth tool even in rping, as always; latency
		 * by its own */
		ln_buf_addf(why, "cannot start the %s server thread for '%s'",
			    t->st == LN_STAGE_LATENCY ? lat_name(c) : bw_name(c), vs_nname(c, t->a));
		goto out;
	}
	vs_sleep_ms(c->server_delay_ms);
	ln_buf_reset(&cres->output);
	cres->exit_status = 0;
	cres->timed_out = 0;
	crc = c->ops->run(c->octx, t->b, vs_lane(c, t->pb), (const char *const *)cv.v, NULL,
			  t->timeout_s, cres, &cerr);
	pthread_join(th, NULL);
	t->cres = cres;
	t->job = &job;
	if (crc < 0) {
		ln_buf_addf(why, "cannot run '%s' on '%s': %s", cv.v[0], vs_nname(c, t->b),
			    cerr.buf);
		at->own_fault |= LN_END_B;	/* the client's tool did not run */
	} else if (cres->timed_out) {
		at->timed_out = 1;
		ln_buf_addf(why,
			    "%s client on '%s' (stage %s, pair %s-%s) timed out after %ds: %s",
			    cv.v[0], vs_nname(c, t->b), ln_stage_name(t->st), vs_nname(c, t->a),
			    vs_nname(c, t->b), t->timeout_s, cmd ? cmd : at->command);
	} else {
		judge(t, at, why);
	}
out:
	/* the job is this frame's: nothing may reach it after the return */
	t->job = NULL;
	t->cres = NULL;
	ln_buf_release(&cerr);
	ln_buf_release(&job.res.output);
	ln_buf_release(&job.err);
	vs_argv_free(&sv);
	vs_argv_free(&cv);
	return crc;
}

/* One attempt: the tool's run, then its second run (message rate) when
 * the first passed and the spec asks for it. Returns the last client's
 * run code; *started as probe_run's. */
static int pair_attempt(const struct pair_tool *tool, struct pair_try *t,
			struct ln_probe_result *cres, struct ln_attempt *at, int *started)
{
	struct ln_buf why = LN_BUF_INIT;
	double t0 = ln_now_s();
	int crc;

	memset(at, 0, sizeof(*at));
	at->value = NAN;
	at->msg_rate = NAN;
	ln_latency_init(&at->lat);
	crc = probe_run(t, tool->build, tool->judge, cres, at, &why, started);
	if (*started && crc >= 0 && at->ok && tool->second_wanted && tool->second_wanted(t->c)) {
		at->ok = 0;	/* the second run's verdict is the attempt's */
		crc = probe_run(t, tool->second_build, tool->second_judge, cres, at, &why, started);
	}
	at->seconds = ln_now_s() - t0;
	if (!at->ok)
		at->detail = ln_buf_detach(&why, NULL);
	ln_buf_release(&why);
	return crc;
}

/* One pair: server on a, client on b; up to c->attempts tries, each with
 * a fresh server (a client that raced ahead of its server, or a stale
 * server, then costs one attempt, not the pair). */
static void run_pair(struct vctx *c, enum ln_stage st, const struct ln_pair *p, unsigned slot,
		     struct pair_outcome *po)
{
	const struct pair_tool *tool = &pair_tools[st];
	int tries = c->attempts < 8 ? c->attempts : 8, t, delay = c->retry_delay_ms;
	struct pair_try pt = { .c = c, .st = st, .a = p->a, .b = p->b, .pa = p->pa, .pb = p->pb,
			       .slot = slot };
	struct ln_probe_result cres;
	struct vs_ctr_snap snap;

	memset(po, 0, sizeof(*po));
	ln_buf_init(&cres.output, 16u << 20);
	vs_ctr_before(c, p, &snap);
	pt.timeout_s = vs_timeout_s(tool->timeout_ms(&c->spec->validation));
	if (pt.timeout_s < 1)
		pt.timeout_s = 1;
	for (t = 0; t < tries; t++) {
		struct ln_attempt *at = &po->at[po->n++];
		int started, crc = pair_attempt(tool, &pt, &cres, at, &started);

		if (!started)
			break;
		/* A refused probe will be refused again, and a measured value
		 * below the threshold is a result, not a race: the diagnosis'
		 * second pass retests it. Only "no result" is retried here:
		 * no figure, or a server that ran and lost its report (one
		 * that failed or timed out is a result of its own). */
		if (at->ok || crc < 0 || (!isnan(at->value) && !at->report_lost))
			break;
		vs_sleep_ms(delay);
		delay *= 2;
	}
	vs_ctr_after(c, p, &snap);
	ln_buf_release(&cres.output);
}

/* The diagnosis' retests: the last attempt counts, earlier failures go
 * into its detail so that nothing is lost. */
static int diag_round(void *ctx, enum ln_stage st, const struct ln_pair *pairs, size_t n,
		      struct ln_attempt *out)
{
	struct vctx *c = ctx;
	struct pair_outcome *po = calloc(n ? n : 1, sizeof(*po));
	size_t i;
	int k, r;

	if (!po)
		return -ENOMEM;
	r = vs_run_round_all(c, st, run_pair, pairs, n, po);
	for (i = 0; i < n && r == 0; i++) {
		struct ln_attempt *last = &po[i].at[po[i].n - 1];
		struct ln_buf d = LN_BUF_INIT;

		out[i] = *last;
		for (k = 0; k < po[i].n - 1; k++)
			ln_buf_addf(&d, "retry %d failed: %s; ", k + 1,
				    po[i].at[k].detail ? po[i].at[k].detail : "failed");
		if (last->detail)
			ln_buf_addstr(&d, last->detail);
		else if (d.len)
			ln_buf_addstr(&d, "then passed");
		free(last->detail);
		out[i].detail = d.len ? ln_buf_detach(&d, NULL) : NULL;
		ln_buf_release(&d);
		last->detail = NULL;
		last->command = NULL;
		for (k = 0; k < po[i].n - 1; k++) {
			free(po[i].at[k].detail);
			free(po[i].at[k].command);
		}
	}
	free(po);
	return r;
}

/* ---- the stage ---- */

static const struct ln_check *pair_check(struct vctx *c, enum ln_stage st,
					 const struct ln_pair *p)
{
	int pa = (int)p->pa, pb = (int)p->pb;
	size_t i;

	for (i = 0; i < c->res->nchecks; i++) {
		const struct ln_check *k = &c->res->checks[i];

		if (k->stage == st && !k->retest &&
		    ((k->a == p->a && k->pa == pa && k->b == p->b && k->pb == pb) ||
		     (k->a == p->b && k->pa == pb && k->b == p->a && k->pb == pa)))
			return k;
	}
	return NULL;
}

/* Whether pair p of stage st cannot run (1 skipped, 2 not run): why. */
static int pair_blocked(struct vctx *c, enum ln_stage st, const struct ln_pair *p,
			struct ln_buf *why)
{
	size_t e[2] = { p->a, p->b };
	unsigned port[2] = { p->pa, p->pb };
	int k;

	for (k = 0; k < 2; k++) {
		const struct port_info *pi = &c->ni[e[k]].ports[port[k]];

		if (!pi->ip) {
			ln_buf_addf(why, "'%s' port %s/%u has no ip", vs_nname(c, e[k]), pi->dev,
				    pi->port);
			return 1;
		}
		if (!pi->ok) {
			ln_buf_addf(why, "'%s' failed devices: %s", vs_nname(c, e[k]),
				    pi->reason ? pi->reason : c->ni[e[k]].devices_reason ?
				    c->ni[e[k]].devices_reason : "no facts");
			return 1;
		}
		if (pi->mem.reason) {
			ln_buf_addstr(why, pi->mem.reason);
			return 2;
		}
	}
	if (st != LN_STAGE_RPING && c->res->stages[LN_STAGE_RPING].ran) {
		const struct ln_check *rk = pair_check(c, LN_STAGE_RPING, p);

		if (rk && rk->status != LN_ST_PASS) {
			ln_buf_addf(why, "'%s/%s'-'%s/%s' cannot rping", vs_nname(c, p->a),
				    c->ni[p->a].ports[p->pa].dev, vs_nname(c, p->b),
				    c->ni[p->b].ports[p->pb].dev);
			return 1;
		}
		for (k = 0; k < 2; k++)
			if (vs_bad_in(c, LN_STAGE_RPING, e[k], (int)port[k])) {
				ln_buf_addf(why, "'%s/%s' is bad in rping", vs_nname(c, e[k]),
					    c->ni[e[k]].ports[port[k]].dev);
				return 1;
			}
	}
	return 0;
}

/* The rounds: every pair of the spec's pairing on every rail, or, under
 * --limit, each node under test against two good peers per rail. */
static int pair_schedule(struct vctx *c, enum ln_stage st, struct ln_schedule *s,
			 struct ln_buf *err)
{
	struct ln_rail_opts ro;
	unsigned char *peer = NULL;
	size_t i;
	int r;

	ln_rails_stage_opts(c->spec, st, &ro);
	/* concurrent rails: a node runs one probe per port at once, each on
	 * its own session lane */
	c->lanes = ro.concurrent;
	if (c->o->limit) {
		peer = calloc(c->n ? c->n : 1, 1);
		if (!peer)
			return -ENOMEM;
		for (i = 0; i < c->n; i++)
			peer[i] = !c->o->limit[i] && c->ni[i].rdma_ok &&
				  !vs_bad_in(c, LN_STAGE_RPING, i, -1);
		ro.subject = c->o->limit;
		ro.peer = peer;
		ro.per_subject = 2;
	}
	r = ln_rails_schedule(&c->rails, &ro, s, err);
	free(peer);
	return r;
}

/* Record the outcomes of the pairs that ran; *failed counts the failed. */
static int record_round(struct vctx *c, enum ln_stage st, const struct ln_pair *run, size_t nrun,
			struct pair_outcome *po, int r, size_t *failed)
{
	const struct pair_tool *tool = &pair_tools[st];
	size_t i;

	for (i = 0; i < nrun; i++) {
		long idx = r ? -1 : vs_add_pair_check(c, st, &run[i], tool->name(c));
		int k;

		for (k = 0; k < po[i].n; k++) {
			if (idx >= 0 && ln_check_add_attempt(&c->res->checks[idx], &po[i].at[k]))
				r = -ENOMEM;
			free(po[i].at[k].detail);
			free(po[i].at[k].command);
		}
		if (idx < 0)
			continue;
		if (tool->annotate)
			tool->annotate(c, &run[i], &c->res->checks[idx]);
		*failed += c->res->checks[idx].status != LN_ST_PASS;
	}
	return r;
}

/* One round: skip the blocked pairs, run the others at once, record. */
static int pair_round(struct vctx *c, enum ln_stage st, const struct ln_round *round, size_t rd,
		      size_t nrounds)
{
	struct ln_pair *run = calloc(round->npairs ? round->npairs : 1, sizeof(*run));
	struct pair_outcome *po = calloc(round->npairs ? round->npairs : 1, sizeof(*po));
	size_t i, nrun = 0, failed = 0;
	int r = 0;

	if (!run || !po) {
		free(run);
		free(po);
		return -ENOMEM;
	}
	for (i = 0; i < round->npairs; i++) {
		struct ln_buf why = LN_BUF_INIT;
		int b = pair_blocked(c, st, &round->pairs[i], &why);

		if (b) {
			long idx = vs_add_pair_check(c, st, &round->pairs[i], ln_stage_name(st));

			if (idx < 0 || ln_check_set(&c->res->checks[idx], b == 2 ? LN_ST_NOT_RUN :
						    LN_ST_SKIPPED, "%s", why.buf) < 0)
				r = -ENOMEM;
		} else {
			run[nrun++] = round->pairs[i];
		}
		ln_buf_release(&why);
	}
	if (r == 0)
		r = vs_run_round_all(c, st, run_pair, run, nrun, po);
	r = record_round(c, st, run, nrun, po, r, &failed);
	vs_progress(c, "%s round %zu/%zu: %zu pairs, %zu failed, %zu skipped", ln_stage_name(st),
		    rd + 1, nrounds, nrun, failed, round->npairs - nrun);
	free(run);
	free(po);
	return r;
}

/* A declared port of a node under test that no pair of the schedule
 * uses (no other node has a port on its rail) is a "not run" check of its
 * own, so the stage cannot pass while that port went untested. */
static int lone_ports(struct vctx *c, enum ln_stage st, const struct ln_schedule *s)
{
	size_t stride = c->rails.stride ? c->rails.stride : 1, rd, i, k;
	unsigned char *used = calloc(c->n * stride + 1, 1);
	int r = 0;

	if (!used)
		return -ENOMEM;
	for (rd = 0; rd < s->nrounds; rd++)
		for (i = 0; i < s->rounds[rd].npairs; i++) {
			const struct ln_pair *p = &s->rounds[rd].pairs[i];

			used[p->a * stride + p->pa] = used[p->b * stride + p->pb] = 1;
		}
	for (i = 0; i < c->n && r == 0; i++)
		for (k = 0; k < c->ni[i].nports && r == 0; k++) {
			int rail = ln_railmap_rail_of(&c->rails, i, (unsigned)k);
			long idx;

			if (used[i * stride + k] || (c->o->limit && !c->o->limit[i]))
				continue;
			idx = vs_add_check(c, st, i, LN_NO_NODE, ln_stage_name(st));
			if (idx < 0) {
				r = -ENOMEM;	/* the loops end on it; used is freed */
				continue;
			}
			c->res->checks[idx].pa = (int)k;
			r = ln_check_set(&c->res->checks[idx], LN_ST_NOT_RUN,
					 "no partner on rail '%s' for '%s/%s'",
					 rail >= 0 ? c->rails.names[rail] : "?", vs_nname(c, i),
					 c->ni[i].ports[k].dev);
		}
	free(used);
	return r;
}

int vs_pairwise_stage(struct vctx *c, enum ln_stage st)
{
	struct ln_schedule s = LN_SCHEDULE_INIT;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_diag_stats ds;
	size_t rd;
	int r;

	if (c->n < 2 && !c->o->limit) {
		c->res->stages[st].reason = strdup("a pairwise stage needs two nodes");
		return 0;
	}
	r = pair_schedule(c, st, &s, &err);
	if (r < 0) {
		c->res->stages[st].reason = strdup(err.buf);
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	c->res->stages[st].ran = 1;
	c->res->stages[st].rounds = s.nrounds;
	r = vs_perftest_memory(c, st, st == LN_STAGE_LATENCY ? lat_name(c) : bw_name(c));
	if (r == 0)
		r = vs_ctr_open(c, st);
	if (r == 0)
		r = lone_ports(c, st, &s);
	for (rd = 0; rd < s.nrounds && r == 0; rd++)
		r = pair_round(c, st, &s.rounds[rd], rd, s.nrounds);
	if (r == 0) {
		r = ln_diagnose_stage(c->res, st, diag_round, c, &ds, &err);
		if (r == 0 && ds.retests)
			vs_progress(
				c,
				"%s: %zu suspect nodes, %zu suspect links retested in %zu rounds",
				ln_stage_name(st), ds.suspect_nodes, ds.suspect_links,
				ds.retest_rounds);
	}
	if (r == 0)
		r = vs_ctr_judge(c, st);
out:
	vs_ctr_close(c);
	c->lanes = 0;
	ln_schedule_release(&s);
	ln_buf_release(&err);
	return r;
}
