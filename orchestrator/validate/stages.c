/* SPDX-License-Identifier: MIT */
/*
 * Stage runner (see stages.h). Every probe goes through ops->run, i.e. the
 * agent's bounded `run`; a bound that fires is reported with the node, the
 * pair, the stage and the command. A stage that cannot run is "not run"
 * with its reason, which fails the run. Checks of one stage that depend on
 * an earlier stage's failure are skipped with the reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/json.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/transport/push.h"
#include "orchestrator/validate/diagnose.h"
#include "orchestrator/validate/pairing.h"
#include "orchestrator/validate/parse/parse.h"
#include "orchestrator/validate/stages.h"

#define RPING_PORT_BASE 7174
#define MAX_ARGS 64

struct node_info {
	struct json_object *facts;	/* borrowed from ops */
	int rdma_ok;			/* the devices stage found no port problem */
	char *devices_reason;		/* why not, for skips */
	const char *ip;			/* first declared RDMA ip */
	const char *dev;		/* its device and port */
	unsigned port;
	int gid_index;			/* found on the declared ip, -1 unknown */
	double rate_gbps;		/* the port's line rate, NAN unknown */
	char *hostname;			/* from facts, for matching MPI ranks */
};

struct vctx {
	const struct ln_spec *spec;
	const struct ln_probe_ops *ops;
	void *octx;
	const struct ln_validate_opts *o;
	struct ln_results *res;
	struct node_info *ni;
	size_t n;
	unsigned parallel, iters;
	int attempts, server_delay_ms, retry_delay_ms;
};

struct argv {
	char *v[MAX_ARGS + 1];
	int n;
};

static void arg(struct argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void arg(struct argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (a->n >= MAX_ARGS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static void argv_free(struct argv *a)
{
	int i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	a->n = 0;
	a->v[0] = NULL;
}

static char *argv_join(const struct argv *a)
{
	struct ln_buf b = LN_BUF_INIT;
	int i;

	for (i = 0; i < a->n; i++)
		ln_buf_addf(&b, "%s%s", i ? " " : "", a->v[i]);
	return ln_buf_detach(&b, NULL);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

static void progress(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void progress(struct vctx *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->o->progress)
		c->o->progress(c->o->progress_ctx, line);
	else
		ln_verbose("%s", line);
}

static const char *nname(struct vctx *c, size_t i)
{
	return c->spec->nodes[i].name;
}

static int under_test(struct vctx *c, size_t i)
{
	return !c->o->limit || c->o->limit[i];
}

/* ---- facts helpers ---- */

static struct json_object *find_port(struct json_object *facts, const char *dev, unsigned port)
{
	struct json_object *rdma = ln_json_at(facts, "rdma");
	size_t i, j;

	if (!rdma || !json_object_is_type(rdma, json_type_array))
		return NULL;
	for (i = 0; i < json_object_array_length(rdma); i++) {
		struct json_object *d = json_object_array_get_idx(rdma, i), *ports;
		const char *name = ln_json_str_at(d, "device");

		if (!name || strcmp(name, dev))
			continue;
		ports = ln_json_at(d, "ports");
		for (j = 0; ports && j < json_object_array_length(ports); j++) {
			struct json_object *p = json_object_array_get_idx(ports, j);
			int64_t num;

			if (!ln_json_i64_at(p, "port", &num) && num == (int64_t)port)
				return p;
		}
	}
	return NULL;
}

/* The GID index holding ip as a RoCE v2 GID, or -1. An IPv4 address sits
 * in the GID table as ::ffff:a.b.c.d. */
static int roce_gid_index(struct json_object *port, const char *ip)
{
	struct json_object *gids = ln_json_at(port, "gids");
	unsigned char want[16], have[16];
	struct in_addr v4;
	size_t i;

	if (inet_pton(AF_INET, ip, &v4) == 1) {
		memset(want, 0, 10);
		want[10] = want[11] = 0xff;
		memcpy(want + 12, &v4, 4);
	} else if (inet_pton(AF_INET6, ip, want) != 1) {
		return -1;
	}
	for (i = 0; gids && i < json_object_array_length(gids); i++) {
		struct json_object *g = json_object_array_get_idx(gids, i);
		const char *gid = ln_json_str_at(g, "gid"), *type = ln_json_str_at(g, "type");
		int64_t idx;

		if (!gid || !type || strcmp(type, "RoCE v2") || ln_json_i64_at(g, "index", &idx))
			continue;
		if (inet_pton(AF_INET6, gid, have) == 1 && !memcmp(want, have, 16))
			return (int)idx;
	}
	return -1;
}

/* ---- devices ---- */

static long add_check(struct vctx *c, enum ln_stage st, size_t a, size_t b, const char *name)
{
	return ln_results_add_check(c->res, st, a, b, name);
}

static int devices_node(struct vctx *c, size_t i)
{
	const struct ln_node *node = &c->spec->nodes[i];
	struct node_info *ni = &c->ni[i];
	struct ln_buf why = LN_BUF_INIT, name = LN_BUF_INIT;
	struct json_object *gpus;
	size_t p, k;
	int64_t v;
	long idx;

	if (!ni->facts) {
		idx = add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, "facts");
		if (idx < 0)
			return -ENOMEM;
		ni->rdma_ok = 0;
		return ln_check_set(&c->res->checks[idx], LN_ST_FAIL, "%s",
				    ni->devices_reason ? ni->devices_reason : "no facts");
	}
	for (p = 0; p < node->n_rdma; p++) {
		const struct ln_rdma_port *rp = &node->rdma[p];
		struct json_object *port = find_port(ni->facts, rp->device, rp->port);
		const char *state, *phys, *ll;
		double rate = NAN;
		int gid = -1;

		ln_buf_reset(&why);
		ln_buf_reset(&name);
		ln_buf_addf(&name, "%s/%u", rp->device, rp->port);
		idx = add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, name.buf);
		if (idx < 0)
			goto nomem;
		if (!port) {
			ln_buf_addf(&why, "port '%s' is not present", name.buf);
		} else {
			state = ln_json_str_at(port, "state");
			phys = ln_json_str_at(port, "phys_state");
			ll = ln_json_str_at(port, "link_layer");
			if (!ln_json_i64_at(port, "rate_gbps", &v))
				rate = (double)v;
			if (!state || strcmp(state, "ACTIVE"))
				ln_buf_addf(&why, "%sstate %s, want ACTIVE", why.len ? "; " : "",
					    state ? state : "unknown");
			if (!phys || strcmp(phys, "LINK_UP"))
				ln_buf_addf(&why, "%sphysical state %s, want LINK_UP",
					    why.len ? "; " : "", phys ? phys : "unknown");
			if (rp->min_rate_bps && (isnan(rate) || rate * 1e9 < (double)rp->min_rate_bps))
				ln_buf_addf(&why, "%srate %g Gb/s is below %g Gb/s", why.len ? "; " : "",
					    rate, (double)rp->min_rate_bps / 1e9);
			if (rp->link_layer != LN_LINK_ANY &&
			    (!ll || strcmp(ll, rp->link_layer == LN_LINK_ETHERNET ? "Ethernet" :
					   "InfiniBand")))
				ln_buf_addf(&why, "%slink layer %s, want %s", why.len ? "; " : "",
					    ll ? ll : "unknown", ln_link_layer_name(rp->link_layer));
			if (rp->mtu && (ln_json_i64_at(port, "active_mtu", &v) || v != (int64_t)rp->mtu))
				ln_buf_addf(&why, "%sactive MTU %lld, want %u", why.len ? "; " : "",
					    (long long)(ln_json_i64_at(port, "active_mtu", &v) ? -1 : v), rp->mtu);
			if (ll && !strcmp(ll, "Ethernet") && rp->ip) {
				gid = roce_gid_index(port, rp->ip);
				if (gid < 0)
					ln_buf_addf(&why, "%sno RoCE v2 GID on %s", why.len ? "; " : "",
						    rp->ip);
				else if (rp->gid_index >= 0 && gid != rp->gid_index)
					ln_buf_addf(&why, "%sRoCE v2 GID for %s is at index %d, want %d",
						    why.len ? "; " : "", rp->ip, gid, rp->gid_index);
			}
		}
		c->res->checks[idx].value = rate;
		c->res->checks[idx].line_rate = rate;
		c->res->checks[idx].unit = "Gb/s";
		if (rp->min_rate_bps)
			c->res->checks[idx].threshold = (double)rp->min_rate_bps / 1e9;
		if (why.len) {
			ni->rdma_ok = 0;
			if (!ni->devices_reason)
				ni->devices_reason = strdup(why.buf);
			if (ln_check_set(&c->res->checks[idx], LN_ST_FAIL, "%s", why.buf) < 0)
				goto nomem;
		} else if (gid >= 0) {
			if (ln_check_set(&c->res->checks[idx], LN_ST_PASS, "RoCE v2 GID index %d on %s",
					 gid, rp->ip) < 0)
				goto nomem;
		}
		if (p == 0) {
			ni->gid_index = gid >= 0 ? gid : rp->gid_index;
			ni->rate_gbps = rate;
		}
	}
	gpus = ln_json_at(ni->facts, "gpus");
	if (node->gpus || (gpus && !ln_json_i64_at(gpus, "count", &v) && v)) {
		idx = add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, "gpus");
		if (idx < 0)
			goto nomem;
		if (!gpus || ln_json_i64_at(gpus, "count", &v))
			v = -1;
		c->res->checks[idx].value = (double)v;
		c->res->checks[idx].threshold = node->gpus;
		if (v != (int64_t)node->gpus &&
		    ln_check_set(&c->res->checks[idx], LN_ST_FAIL, "%lld GPUs found, %u declared",
				 (long long)v, node->gpus) < 0)
			goto nomem;
	}
	for (k = 0; k < c->spec->n_initiators; k++) {
		const struct ln_initiator *in = &c->spec->initiators[k];
		const char *nqn = c->spec->targets[in->target].nqn;
		struct json_object *nvme = ln_json_at(ni->facts, "nvme");
		const char *block = NULL;
		size_t j;

		if (in->node != i)
			continue;
		for (j = 0; nvme && j < json_object_array_length(nvme) && !block; j++) {
			struct json_object *ctrl = json_object_array_get_idx(nvme, j), *nss;
			const char *sub = ln_json_str_at(ctrl, "subsysnqn"), *st = ln_json_str_at(ctrl, "state");

			if (!sub || strcmp(sub, nqn) || !st || strcmp(st, "live"))
				continue;
			nss = ln_json_at(ctrl, "namespaces");
			if (nss && json_object_array_length(nss))
				block = ln_json_str_at(json_object_array_get_idx(nss, 0), "block");
		}
		ln_buf_reset(&name);
		ln_buf_addf(&name, "namespace of %s", nqn);
		idx = add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, name.buf);
		if (idx < 0)
			goto nomem;
		if (ln_check_set(&c->res->checks[idx], block ? LN_ST_PASS : LN_ST_FAIL,
				 block ? "block device /dev/%s" : "no live controller with a namespace "
				 "for '%s'", block ? block : nqn) < 0)
			goto nomem;
	}
	ln_buf_release(&why);
	ln_buf_release(&name);
	return 0;
nomem:
	ln_buf_release(&why);
	ln_buf_release(&name);
	return -ENOMEM;
}

/* ---- client/server pair probes ---- */

struct server_job {
	struct vctx *c;
	size_t node;
	struct argv *argv;
	int timeout_s;
	struct ln_probe_result res;
	struct ln_buf err;
	int rc;
};

static void *server_thread(void *p)
{
	struct server_job *j = p;

	j->rc = j->c->ops->run(j->c->octx, j->node, (const char *const *)j->argv->v, j->timeout_s,
			       &j->res, &j->err);
	return NULL;
}

struct pair_outcome {
	struct ln_attempt at[8];
	int n;
};

/* One pair: server on a, client on b; up to c->attempts tries, each with
 * a fresh server (a client that raced ahead of its server, or a stale
 * server, then costs one attempt, not the pair). */
static void run_pair(struct vctx *c, enum ln_stage st, size_t a, size_t b, unsigned slot,
		     struct pair_outcome *po)
{
	const struct ln_validation *v = &c->spec->validation;
	int timeout_s, tries = c->attempts < 8 ? c->attempts : 8, t, delay = c->retry_delay_ms;
	const char *tool = v->bandwidth.tool == LN_BW_IB_SEND_BW ? "ib_send_bw" : "ib_write_bw";
	struct ln_probe_result cres;

	memset(po, 0, sizeof(*po));
	ln_buf_init(&cres.output, 16u << 20);
	timeout_s = (int)(((st == LN_STAGE_RPING ? v->rping.timeout_ms : v->bandwidth.timeout_ms) +
			   999) / 1000);
	if (timeout_s < 1)
		timeout_s = 1;
	for (t = 0; t < tries; t++) {
		struct ln_attempt *at = &po->at[po->n++];
		struct argv sv = { .n = 0 }, cv = { .n = 0 };
		struct server_job job;
		struct ln_buf cerr = LN_BUF_INIT, why = LN_BUF_INIT;
		pthread_t th;
		double t0 = ln_now_s();
		int crc, started;

		memset(at, 0, sizeof(*at));
		at->value = NAN;
		if (st == LN_STAGE_RPING) {
			/* server and client differ only in -s / -c: both name
			 * the server's address (rping -S must match too) */
			struct argv *both[2] = { &sv, &cv };
			int k;

			for (k = 0; k < 2; k++) {
				arg(both[k], "rping");
				arg(both[k], k ? "-c" : "-s");
				arg(both[k], "-a");
				arg(both[k], "%s", c->ni[a].ip);
				arg(both[k], "-p");
				arg(both[k], "%u", RPING_PORT_BASE + slot);
				arg(both[k], "-C");
				arg(both[k], "%u", v->rping.count);
				arg(both[k], "-V");
			}
		} else {
			struct argv *both[2] = { &sv, &cv };
			int k;

			for (k = 0; k < 2; k++) {
				size_t node = k ? b : a;

				arg(both[k], "%s", tool);
				arg(both[k], "-d");
				arg(both[k], "%s", c->ni[node].dev);
				arg(both[k], "-i");
				arg(both[k], "%u", c->ni[node].port);
				if (c->ni[node].gid_index >= 0) {
					arg(both[k], "-x");
					arg(both[k], "%d", c->ni[node].gid_index);
				}
				arg(both[k], "-s");
				arg(both[k], "%llu", (unsigned long long)v->bandwidth.size);
				arg(both[k], "-n");
				arg(both[k], "%u", c->iters);
				arg(both[k], "-p");
				arg(both[k], "%u", (unsigned)v->bandwidth.port_base + slot);
				arg(both[k], "-R");
				arg(both[k], "-F");
				arg(both[k], "--report_gbits");
			}
			arg(&cv, "%s", c->ni[a].ip);
		}
		at->command = argv_join(&cv);
		memset(&job, 0, sizeof(job));
		job.c = c;
		job.node = a;
		job.argv = &sv;
		job.timeout_s = timeout_s;
		ln_buf_init(&job.res.output, 16u << 20);
		started = pthread_create(&th, NULL, server_thread, &job) == 0;
		if (!started) {
			ln_buf_addf(&why, "cannot start the %s server thread for '%s'", tool, nname(c, a));
			at->detail = ln_buf_detach(&why, NULL);
			ln_buf_release(&job.res.output);
			argv_free(&sv);
			argv_free(&cv);
			break;
		}
		sleep_ms(c->server_delay_ms);
		ln_buf_reset(&cres.output);
		cres.exit_status = 0;
		cres.timed_out = 0;
		crc = c->ops->run(c->octx, b, (const char *const *)cv.v, timeout_s, &cres, &cerr);
		pthread_join(th, NULL);
		at->seconds = ln_now_s() - t0;
		if (crc < 0) {
			ln_buf_addf(&why, "cannot run '%s' on '%s': %s", cv.v[0], nname(c, b), cerr.buf);
		} else if (cres.timed_out) {
			at->timed_out = 1;
			ln_buf_addf(&why, "%s client on '%s' (stage %s, pair %s-%s) timed out after "
				    "%ds: %s", cv.v[0], nname(c, b), ln_stage_name(st), nname(c, a),
				    nname(c, b), timeout_s, at->command);
		} else if (st == LN_STAGE_RPING) {
			struct ln_rping cr, sr;

			ln_parse_rping(cres.exit_status, cres.output.buf, cres.output.len, &cr);
			ln_parse_rping(job.res.exit_status, job.res.output.buf, job.res.output.len, &sr);
			if (!cr.ok)
				ln_buf_addf(&why, "client on '%s': %s", nname(c, b), cr.reason);
			else if (job.rc < 0)
				ln_buf_addf(&why, "cannot run the rping server on '%s': %s", nname(c, a),
					    job.err.buf);
			else if (job.res.timed_out)
				ln_buf_addf(&why, "rping server on '%s' (stage rping, pair %s-%s) timed "
					    "out after %ds", nname(c, a), nname(c, a), nname(c, b),
					    timeout_s);
			else if (!sr.ok)
				ln_buf_addf(&why, "server on '%s': %s", nname(c, a), sr.reason);
			else
				at->ok = 1;
		} else {
			struct ln_perftest pt = { 0 };
			struct ln_buf perr = LN_BUF_INIT;
			double gbps, want = NAN;

			if (ln_parse_perftest(cres.output.buf, cres.output.len, &pt, &perr) < 0) {
				ln_buf_addf(&why, "client on '%s': %s (exit status %d)", nname(c, b),
					    perr.buf, cres.exit_status);
			} else {
				gbps = ln_perftest_gbps(&pt, ln_perftest_large(&pt));
				at->value = gbps;
				if (v->bandwidth.min_kind == LN_MIN_RATE)
					want = (double)v->bandwidth.min_bps / 1e9;
				else if (v->bandwidth.min_kind == LN_MIN_FRACTION)
					want = v->bandwidth.min_fraction *
					       fmin(c->ni[a].rate_gbps, c->ni[b].rate_gbps);
				if (v->bandwidth.min_kind == LN_MIN_FRACTION && isnan(want))
					ln_buf_addf(&why, "%.3g Gb/s measured, but the line rate of "
						    "'%s' or '%s' is unknown", gbps, nname(c, a),
						    nname(c, b));
				else if (!isnan(want) && gbps < want)
					ln_buf_addf(&why, "%.3g Gb/s is below %.3g Gb/s", gbps, want);
				else
					at->ok = 1;
			}
			ln_perftest_release(&pt);
			ln_buf_release(&perr);
		}
		if (!at->ok)
			at->detail = ln_buf_detach(&why, NULL);
		ln_buf_release(&why);
		ln_buf_release(&cerr);
		ln_buf_release(&job.res.output);
		ln_buf_release(&job.err);
		argv_free(&sv);
		argv_free(&cv);
		/* A refused probe will be refused again, and a measured value
		 * below the threshold is a result, not a race: the diagnosis'
		 * second pass retests it. Only "no result" is retried here. */
		if (at->ok || crc < 0 || !isnan(at->value))
			break;
		sleep_ms(delay);
		delay *= 2;
	}
	ln_buf_release(&cres.output);
}

struct round_job {
	struct vctx *c;
	enum ln_stage st;
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
		run_pair(j->c, j->st, j->pairs[i].a, j->pairs[i].b, (unsigned)i, &j->po[i]);
	}
}

/* All pairs of one round at once (at most c->parallel in flight). */
static int run_round_all(struct vctx *c, enum ln_stage st, const struct ln_pair *pairs,
			 size_t n, struct pair_outcome *po)
{
	struct round_job j = { c, st, pairs, n, po, 0, PTHREAD_MUTEX_INITIALIZER };
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
	r = run_round_all(c, st, pairs, n, po);
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

static const struct ln_check *pair_check(struct vctx *c, enum ln_stage st, size_t a, size_t b)
{
	size_t i;

	for (i = 0; i < c->res->nchecks; i++) {
		const struct ln_check *k = &c->res->checks[i];

		if (k->stage == st && !k->retest &&
		    ((k->a == a && k->b == b) || (k->a == b && k->b == a)))
			return k;
	}
	return NULL;
}

static int bad_node_in(struct vctx *c, enum ln_stage st, size_t node)
{
	size_t i;

	for (i = 0; i < c->res->nverdicts; i++)
		if (c->res->verdicts[i].stage == st && c->res->verdicts[i].kind == LN_VERDICT_NODE &&
		    c->res->verdicts[i].a == node)
			return 1;
	return 0;
}

/* Why pair a-b of stage st cannot run, or NULL. Static storage per call
 * site is avoided: the reason goes into why. */
static int pair_blocked(struct vctx *c, enum ln_stage st, size_t a, size_t b, struct ln_buf *why)
{
	size_t e[2] = { a, b };
	int k;

	for (k = 0; k < 2; k++) {
		if (!c->ni[e[k]].ip || !c->ni[e[k]].dev) {
			ln_buf_addf(why, "'%s' declares no RDMA port with an ip", nname(c, e[k]));
			return 1;
		}
		if (!c->ni[e[k]].rdma_ok) {
			ln_buf_addf(why, "'%s' failed devices: %s", nname(c, e[k]),
				    c->ni[e[k]].devices_reason ? c->ni[e[k]].devices_reason :
				    "no facts");
			return 1;
		}
	}
	if (st == LN_STAGE_BANDWIDTH && c->res->stages[LN_STAGE_RPING].ran) {
		const struct ln_check *rk = pair_check(c, LN_STAGE_RPING, a, b);

		if (rk && rk->status != LN_ST_PASS) {
			ln_buf_addf(why, "'%s'-'%s' cannot rping", nname(c, a), nname(c, b));
			return 1;
		}
		for (k = 0; k < 2; k++)
			if (bad_node_in(c, LN_STAGE_RPING, e[k])) {
				ln_buf_addf(why, "'%s' is a bad node in rping", nname(c, e[k]));
				return 1;
			}
	}
	return 0;
}

static int pairwise_stage(struct vctx *c, enum ln_stage st)
{
	const struct ln_validation *v = &c->spec->validation;
	enum ln_pairing kind = (st == LN_STAGE_RPING ? v->rping.pairs : v->bandwidth.pairs) ==
			       LN_PAIRS_ALL ? LN_PAIRING_ALL : LN_PAIRING_RING;
	struct ln_schedule s = LN_SCHEDULE_INIT;
	struct ln_buf err = LN_BUF_INIT;
	size_t rd, i, *subj = NULL, *peers = NULL, ns = 0, np = 0;
	int r = 0;

	if (c->o->limit) {
		subj = calloc(c->n, sizeof(*subj));
		peers = calloc(c->n, sizeof(*peers));
		if (!subj || !peers) {
			r = -ENOMEM;
			goto out;
		}
		for (i = 0; i < c->n; i++) {
			if (c->o->limit[i])
				subj[ns++] = i;
			else if (c->ni[i].rdma_ok && c->ni[i].ip && !bad_node_in(c, LN_STAGE_RPING, i))
				peers[np++] = i;
		}
		r = ln_pairing_against(subj, ns, peers, np, 2, &s, &err);
	} else {
		r = ln_pairing_build(kind, c->n, &s, &err);
	}
	if (r < 0) {
		c->res->stages[st].reason = strdup(err.buf);
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	c->res->stages[st].ran = 1;
	c->res->stages[st].rounds = s.nrounds;
	for (rd = 0; rd < s.nrounds && r == 0; rd++) {
		struct ln_round *round = &s.rounds[rd];
		struct ln_pair *run = calloc(round->npairs ? round->npairs : 1, sizeof(*run));
		struct pair_outcome *po = calloc(round->npairs ? round->npairs : 1, sizeof(*po));
		size_t nrun = 0, failed = 0;

		if (!run || !po) {
			free(run);
			free(po);
			r = -ENOMEM;
			break;
		}
		for (i = 0; i < round->npairs; i++) {
			struct ln_buf why = LN_BUF_INIT;

			if (pair_blocked(c, st, round->pairs[i].a, round->pairs[i].b, &why)) {
				long idx = add_check(c, st, round->pairs[i].a, round->pairs[i].b,
						     ln_stage_name(st));

				if (idx < 0 || ln_check_set(&c->res->checks[idx], LN_ST_SKIPPED, "%s",
							    why.buf) < 0)
					r = -ENOMEM;
			} else {
				run[nrun++] = round->pairs[i];
			}
			ln_buf_release(&why);
		}
		if (r == 0)
			r = run_round_all(c, st, run, nrun, po);
		for (i = 0; i < nrun; i++) {
			long idx = r ? -1 : add_check(c, st, run[i].a, run[i].b,
						      st == LN_STAGE_RPING ? "rping" :
						      v->bandwidth.tool == LN_BW_IB_SEND_BW ?
						      "ib_send_bw" : "ib_write_bw");
			int k;

			for (k = 0; k < po[i].n; k++) {
				if (idx >= 0 && ln_check_add_attempt(&c->res->checks[idx], &po[i].at[k]))
					r = -ENOMEM;
				free(po[i].at[k].detail);
				free(po[i].at[k].command);
			}
			if (idx < 0)
				continue;
			if (st == LN_STAGE_BANDWIDTH) {
				struct ln_check *k2 = &c->res->checks[idx];

				k2->unit = "Gb/s";
				k2->line_rate = fmin(c->ni[run[i].a].rate_gbps,
						     c->ni[run[i].b].rate_gbps);
				if (v->bandwidth.min_kind == LN_MIN_RATE)
					k2->threshold = (double)v->bandwidth.min_bps / 1e9;
				else if (v->bandwidth.min_kind == LN_MIN_FRACTION)
					k2->threshold = v->bandwidth.min_fraction * k2->line_rate;
			}
			failed += c->res->checks[idx].status != LN_ST_PASS;
		}
		progress(c, "%s round %zu/%zu: %zu pairs, %zu failed, %zu skipped",
			 ln_stage_name(st), rd + 1, s.nrounds, nrun, failed, round->npairs - nrun);
		free(run);
		free(po);
	}
	if (r == 0) {
		struct ln_diag_stats ds;

		r = ln_diagnose_stage(c->res, st, diag_round, c, &ds, &err);
		if (r == 0 && ds.retests)
			progress(c, "%s: %zu suspect nodes, %zu suspect links retested in %zu rounds",
				 ln_stage_name(st), ds.suspect_nodes, ds.suspect_links,
				 ds.retest_rounds);
	}
out:
	ln_schedule_release(&s);
	ln_buf_release(&err);
	free(subj);
	free(peers);
	return r;
}

/* ---- io, mpi, nccl ---- */

/* Run argv on node; a probe that could not run at all is reported in
 * why and returns < 0; a timeout is named with node, stage and command. */
static int run_probe(struct vctx *c, enum ln_stage st, size_t node, struct argv *av,
		     int timeout_s, struct ln_probe_result *pr, struct ln_attempt *at,
		     struct ln_buf *why)
{
	struct ln_buf err = LN_BUF_INIT;
	double t0 = ln_now_s();
	int r;

	ln_buf_reset(&pr->output);
	pr->exit_status = 0;
	pr->timed_out = 0;
	at->command = argv_join(av);
	r = c->ops->run(c->octx, node, (const char *const *)av->v, timeout_s, pr, &err);
	at->seconds = ln_now_s() - t0;
	if (r < 0)
		ln_buf_addf(why, "cannot run '%s' on '%s': %s", av->v[0], nname(c, node), err.buf);
	else if (pr->timed_out) {
		at->timed_out = 1;
		ln_buf_addf(why, "%s on '%s' (stage %s) timed out after %ds: %s", av->v[0],
			    nname(c, node), ln_stage_name(st), timeout_s, at->command);
		r = -LN_ETIMEOUT;
	}
	ln_buf_release(&err);
	return r;
}

static int record(struct vctx *c, enum ln_stage st, size_t a, size_t b, const char *name,
		  struct ln_attempt *at, struct ln_buf *why, const char *unit, double threshold)
{
	long idx = add_check(c, st, a, b, name);
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

static int not_run_check(struct vctx *c, enum ln_stage st, size_t a, const char *name,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int not_run_check(struct vctx *c, enum ln_stage st, size_t a, const char *name,
			 const char *fmt, ...)
{
	long idx = add_check(c, st, a, LN_NO_NODE, name);
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

/* Value of "key V" on a line of the io probe's output, or NAN. */
static double kv(const char *text, const char *key)
{
	const char *p = text;
	size_t kl = strlen(key);

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ' ')
			return strtod(p + kl + 1, NULL);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NAN;
}

static int push_file(struct vctx *c, size_t node, const char *local, const char *remote,
		     struct ln_buf *why);

static int io_stage(struct vctx *c)
{
	const struct ln_validation *v = &c->spec->validation;
	struct ln_probe_result pr;
	struct ln_attempt at;
	struct ln_buf why = LN_BUF_INIT;
	size_t k;
	int r = 0, timeout_s = (int)((v->io.timeout_ms + 999) / 1000), any = 0;
	double want = v->io.min_bps ? (double)v->io.min_bps / 8e6 : NAN;

	memset(&at, 0, sizeof(at));
	at.value = NAN;
	ln_buf_init(&pr.output, 1u << 20);
	for (k = 0; k < c->spec->n_initiators && r >= 0; k++) {
		const struct ln_initiator *in = &c->spec->initiators[k];
		const char *nqn = c->spec->targets[in->target].nqn;
		struct argv av = { .n = 0 };
		const struct ln_check *dk = NULL;
		const char *block = NULL;
		size_t i;
		char name[300];

		if (!under_test(c, in->node))
			continue;
		any = 1;
		snprintf(name, sizeof(name), "io on %s", nqn);
		for (i = 0; i < c->res->nchecks; i++) {
			const struct ln_check *d = &c->res->checks[i];

			if (d->stage == LN_STAGE_DEVICES && d->a == in->node && d->name &&
			    !strncmp(d->name, "namespace of ", 13) && !strcmp(d->name + 13, nqn))
				dk = d;
		}
		if (dk && dk->status != LN_ST_PASS) {
			long idx = add_check(c, LN_STAGE_IO, in->node, LN_NO_NODE, name);

			r = idx < 0 ? -ENOMEM : ln_check_set(&c->res->checks[idx], LN_ST_SKIPPED,
							     "devices found no namespace of '%s'",
							     nqn);
			continue;
		}
		if (dk && dk->reason && !strncmp(dk->reason, "block device /dev/", 18))
			block = dk->reason + 13;
		if (!c->o->io_probe_path) {
			r = not_run_check(c, LN_STAGE_IO, in->node, name, "the io probe was not built");
			continue;
		}
		if (push_file(c, in->node, c->o->io_probe_path, LN_PROTO_REMOTE_DIR "/" LN_PROBE_IO,
			      &why) < 0) {
			r = not_run_check(c, LN_STAGE_IO, in->node, name, "%s", why.buf);
			ln_buf_reset(&why);
			continue;
		}
		arg(&av, LN_PROBE_IO);
		if (in->mount.present) {
			arg(&av, "--mount");
			arg(&av, "%s", in->mount.path);
		} else if (block) {
			arg(&av, "--device");
			arg(&av, "%s", block);
			if (v->io.destructive)
				arg(&av, "--write");
		} else {
			r = not_run_check(c, LN_STAGE_IO, in->node, name, "no block device known for "
					  "'%s' (run the devices stage)", nqn);
			argv_free(&av);
			continue;
		}
		arg(&av, "--size");
		arg(&av, "%llu", (unsigned long long)v->io.size);
		if (run_probe(c, LN_STAGE_IO, in->node, &av, timeout_s, &pr, &at, &why) == 0) {
			double w = kv(pr.output.buf, "write_mbps"), rd = kv(pr.output.buf, "read_mbps");
			double judged = !isnan(w) ? fmin(w, rd) : rd;
			char line[256];

			at.value = judged;
			if (!strstr(pr.output.buf, "result pass")) {
				if (ln_parse_error_line(pr.output.buf, pr.output.len, line, sizeof(line)))
					ln_buf_addf(&why, "%s", line);
				else
					ln_buf_addf(&why, "the io probe failed (exit status %d)",
						    pr.exit_status);
			} else if (isnan(judged)) {
				ln_buf_addstr(&why, "the io probe gave no figure");
			} else if (!isnan(want) && judged < want) {
				ln_buf_addf(&why, "%.1f MB/s is below %.1f MB/s", judged, want);
			} else {
				at.ok = 1;
			}
		}
		r = record(c, LN_STAGE_IO, in->node, LN_NO_NODE, name, &at, &why, "MB/s", want);
		argv_free(&av);
	}
	if (!any && r >= 0)
		c->res->stages[LN_STAGE_IO].reason = strdup("no initiator under test");
	else
		c->res->stages[LN_STAGE_IO].ran = 1;
	ln_buf_release(&pr.output);
	ln_buf_release(&why);
	return r < 0 && r != -LN_ETIMEOUT ? r : 0;
}

static int push_file(struct vctx *c, size_t node, const char *local, const char *remote,
		     struct ln_buf *why)
{
	struct ln_buf data = LN_BUF_INIT, err = LN_BUF_INIT;
	int r = ln_file_read(local, &data, &err);

	if (r == 0)
		r = c->ops->put(c->octx, node, remote, data.buf, data.len, &err);
	if (r < 0)
		ln_buf_addf(why, "cannot install '%s' on '%s': %s", remote, nname(c, node), err.buf);
	ln_buf_release(&data);
	ln_buf_release(&err);
	return r;
}

/* The launcher: the first node of the hostfile that answered and passed
 * devices, else the first that answered; LN_NO_NODE when none did. */
static size_t pick_launcher(struct vctx *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->ni[i].facts && c->ni[i].rdma_ok)
			return i;
	for (i = 0; i < c->n; i++)
		if (c->ni[i].facts)
			return i;
	return LN_NO_NODE;
}

/* The MPI probe is built once, by the launcher's own mpicc, as operators
 * do by hand: mpirun starts the same binary at the same path on every
 * node, so the ranks must agree on the MPI ABI the launcher was built
 * against. image receives the built binary, read back from the launcher.
 * A build that cannot happen is "not run" on the launcher; returns < 0
 * only when results cannot be recorded. */
static int mpi_build(struct vctx *c, enum ln_stage st, size_t l, const char *local,
		     const char *src, const char *bin, struct ln_buf *image, int *blocked)
{
	const char *name = st == LN_STAGE_MPI ? "build the mpi probe" : "build the nccl probe";
	const char *what = st == LN_STAGE_MPI ? "mpi" : "nccl";
	struct ln_probe_result pr;
	struct ln_attempt at;
	struct ln_buf why = LN_BUF_INIT, err = LN_BUF_INIT;
	struct argv av = { .n = 0 };
	int r = 0, rr;

	memset(&at, 0, sizeof(at));
	ln_buf_init(&pr.output, 1u << 20);
	if (push_file(c, l, local, src, &why) < 0) {
		r = not_run_check(c, st, l, name, "%s", why.buf);
		goto fail;
	}
	arg(&av, "mpicc");
	arg(&av, "-O2");
	arg(&av, "-o");
	arg(&av, "%s", bin);
	arg(&av, "%s", src);
	rr = run_probe(c, st, l, &av, 120, &pr, &at, &why);
	if (rr < 0) {
		r = not_run_check(c, st, l, name, "no usable mpicc on '%s': %s", nname(c, l),
				  why.buf);
		goto fail;
	}
	if (pr.exit_status == 127) {
		r = not_run_check(c, st, l, name, "no mpicc on '%s'", nname(c, l));
		goto fail;
	}
	if (pr.exit_status) {
		r = not_run_check(c, st, l, name, "mpicc on '%s' failed (exit status %d): %.300s",
				  nname(c, l), pr.exit_status, pr.output.buf);
		goto fail;
	}
	ln_buf_reset(image);
	if (c->ops->get(c->octx, l, bin, image, &err) < 0 || !image->len) {
		r = not_run_check(c, st, l, name, "cannot read back the %s probe built on '%s': %s",
				  what, nname(c, l), err.len ? err.buf : "empty file");
		goto fail;
	}
	goto out;
fail:
	(*blocked)++;
out:
	free(at.command);
	argv_free(&av);
	ln_buf_release(&pr.output);
	ln_buf_release(&why);
	ln_buf_release(&err);
	return r;
}

/* Copy the launcher's build to every other node at the same path (put
 * installs it by temporary name and rename), then read each copy back and
 * compare its sha256 with the launcher's: a rank must never run a stale
 * or truncated probe. */
static int mpi_copy(struct vctx *c, enum ln_stage st, size_t l, const char *bin,
		    const struct ln_buf *image, int *blocked)
{
	const char *name = st == LN_STAGE_MPI ? "copy the mpi probe" : "copy the nccl probe";
	const char *what = st == LN_STAGE_MPI ? "mpi" : "nccl";
	struct ln_buf back, err = LN_BUF_INIT, why = LN_BUF_INIT;
	struct ln_attempt at;
	char want[65], got[65];
	size_t i;
	int r = 0;

	ln_sha256_hex(image->buf, image->len, want);
	ln_buf_init(&back, 64u << 20);
	for (i = 0; i < c->n && r >= 0; i++) {
		double t0 = ln_now_s();

		if (i == l)
			continue;
		ln_buf_reset(&back);
		ln_buf_reset(&err);
		if (c->ops->put(c->octx, i, bin, image->buf, image->len, &err) < 0) {
			r = not_run_check(c, st, i, name, "cannot copy the %s probe from '%s' to "
					  "'%s': %s", what, nname(c, l), nname(c, i), err.buf);
			(*blocked)++;
			continue;
		}
		if (c->ops->get(c->octx, i, bin, &back, &err) < 0) {
			r = not_run_check(c, st, i, name, "cannot read back the %s probe copied to "
					  "'%s': %s", what, nname(c, i), err.buf);
			(*blocked)++;
			continue;
		}
		ln_sha256_hex(back.buf, back.len, got);
		if (!strcmp(got, want))
			continue;
		memset(&at, 0, sizeof(at));
		at.value = NAN;
		at.seconds = ln_now_s() - t0;
		if (asprintf(&at.command, "sha256 of %s", bin) < 0)
			at.command = NULL;
		ln_buf_addf(&why, "the %s probe copied to '%s' has sha256 %.16s (%zu bytes), "
			    "the one built on '%s' %.16s (%zu bytes)", what, nname(c, i), got,
			    back.len, nname(c, l), want, image->len);
		r = record(c, st, i, LN_NO_NODE, name, &at, &why, "", NAN);
		(*blocked)++;
	}
	ln_buf_release(&back);
	ln_buf_release(&err);
	ln_buf_release(&why);
	return r;
}

static int mpi_stage(struct vctx *c)
{
	const struct ln_spec *sp = c->spec;
	struct ln_probe_result pr;
	struct ln_attempt at;
	struct ln_buf why = LN_BUF_INIT;
	struct argv av = { .n = 0 };
	size_t i, j, launcher = LN_NO_NODE;
	unsigned np = sp->validation.mpi.np, slots = 0;
	int r = 0, timeout_s = (int)((sp->validation.mpi.timeout_ms + 999) / 1000), blocked = 0;
	const char *bin = LN_PROTO_REMOTE_DIR "/" LN_PROBE_MPI;
	const char *src = LN_PROBE_SRC_DIR "/mpi_probe.c";
	struct ln_buf image;

	memset(&at, 0, sizeof(at));
	at.value = NAN;
	ln_buf_init(&pr.output, 4u << 20);
	if (!sp->mpi.present) {
		c->res->stages[LN_STAGE_MPI].reason = strdup("the spec has no mpi section (no hostfile)");
		goto out;
	}
	if (!c->o->mpi_probe_source) {
		c->res->stages[LN_STAGE_MPI].reason = strdup("the MPI probe's source was not found");
		goto out;
	}
	launcher = pick_launcher(c);
	if (launcher == LN_NO_NODE) {
		c->res->stages[LN_STAGE_MPI].reason = strdup("no node answered");
		goto out;
	}
	c->res->stages[LN_STAGE_MPI].ran = 1;
	ln_buf_init(&image, 64u << 20);
	r = mpi_build(c, LN_STAGE_MPI, launcher, c->o->mpi_probe_source, src, bin, &image, &blocked);
	if (r >= 0 && !blocked)
		r = mpi_copy(c, LN_STAGE_MPI, launcher, bin, &image, &blocked);
	ln_buf_release(&image);
	if (r < 0 || blocked)
		goto out;
	/* Preflight: mpirun's launch needs each node to reach the others over
	 * SSH by hostfile name and start a process there; a one-rank mpirun
	 * from i onto j tests exactly that, and a failure names the pair.
	 * Every ordered pair up to 16 nodes; beyond, the launcher to every
	 * node and every node to its ring neighbours. */
	for (i = 0; i < c->n && r >= 0; i++)
		for (j = 0; j < c->n && r >= 0; j++) {
			size_t k;

			if (i == j || (c->n > 16 && i != launcher && j != (i + 1) % c->n &&
				       (j + 1) % c->n != i))
				continue;
			arg(&av, "mpirun");
			if (c->o->run_as_root)
				arg(&av, "--allow-run-as-root");
			arg(&av, "--host");
			arg(&av, "%s:1", nname(c, j));
			arg(&av, "-np");
			arg(&av, "1");
			for (k = 0; k < sp->mpi.n_mca; k++) {
				arg(&av, "--mca");
				arg(&av, "%s", sp->mpi.mca[k].key);
				arg(&av, "%s", sp->mpi.mca[k].value);
			}
			arg(&av, "%s", bin);
			arg(&av, "--elements");
			arg(&av, "1");
			if (run_probe(c, LN_STAGE_MPI, i, &av, 60, &pr, &at, &why) == 0) {
				struct ln_mpi_probe m;
				struct ln_buf perr = LN_BUF_INIT;

				if (ln_parse_mpi(pr.output.buf, pr.output.len, &m, &perr) == 0) {
					at.ok = m.pass && pr.exit_status == 0;
					ln_mpi_probe_release(&m);
				}
				if (!at.ok)
					ln_buf_addf(&why, "'%s' cannot start a rank on '%s' (by SSH and "
						    "name): %s", nname(c, i), nname(c, j),
						    perr.len ? perr.buf : "mpirun failed");
				ln_buf_release(&perr);
			}
			blocked += !at.ok;
			r = record(c, LN_STAGE_MPI, i, j, "mpirun preflight", &at, &why, "", NAN);
			argv_free(&av);
		}
	if (r < 0 || blocked)
		goto out;
	for (i = 0; i < c->n; i++)
		slots += sp->nodes[i].slots;
	if (!np)
		np = slots;
	arg(&av, "mpirun");
	if (c->o->run_as_root)
		arg(&av, "--allow-run-as-root");
	arg(&av, "--hostfile");
	arg(&av, "%s", sp->mpi.hostfile);
	arg(&av, "-np");
	arg(&av, "%u", np);
	for (i = 0; i < sp->mpi.n_mca; i++) {
		arg(&av, "--mca");
		arg(&av, "%s", sp->mpi.mca[i].key);
		arg(&av, "%s", sp->mpi.mca[i].value);
	}
	arg(&av, "%s", bin);
	arg(&av, "--expect-ranks");
	arg(&av, "%u", np);
	if (run_probe(c, LN_STAGE_MPI, launcher, &av, timeout_s, &pr, &at, &why) == 0) {
		struct ln_mpi_probe m;
		struct ln_buf perr = LN_BUF_INIT;

		if (ln_parse_mpi(pr.output.buf, pr.output.len, &m, &perr) < 0) {
			ln_buf_addf(&why, "%s", perr.buf);
		} else {
			size_t missing = 0;

			at.value = m.seconds;
			if (m.ranks != (long)np)
				ln_buf_addf(&why, "%ld ranks started, the hostfile gives %u", m.ranks, np);
			else if (!m.allreduce_ok)
				ln_buf_addstr(&why, "the allreduce result is wrong");
			/* every node of the hostfile must hold a rank */
			for (i = 0; i < c->n && !why.len; i++) {
				long k;
				int found = 0;

				for (k = 0; k < m.ranks && !found; k++)
					found = !strcmp(m.hosts[k], nname(c, i)) ||
						(c->ni[i].hostname && !strcmp(m.hosts[k], c->ni[i].hostname));
				if (!found) {
					ln_buf_addf(&why, "%s'%s'", missing++ ? ", " : "no rank ran on ",
						    nname(c, i));
				}
			}
			if (!why.len)
				at.ok = 1;
			ln_mpi_probe_release(&m);
		}
		ln_buf_release(&perr);
	}
	r = record(c, LN_STAGE_MPI, LN_NO_NODE, LN_NO_NODE, "mpirun allreduce", &at, &why, "s", NAN);
out:
	argv_free(&av);
	ln_buf_release(&pr.output);
	ln_buf_release(&why);
	return r < 0 && r != -LN_ETIMEOUT ? r : 0;
}

/* Judge one parsed NCCL result into at/why; 1 when the stage was "not
 * run" (reason in why). */
static int nccl_judge(const struct ln_probe_result *pr, double want, struct ln_attempt *at,
		      struct ln_buf *why)
{
	struct ln_nccl n;
	struct ln_buf perr = LN_BUF_INIT;
	int notrun = 0;

	if (ln_parse_nccl(pr->output.buf, pr->output.len, &n, &perr) < 0) {
		ln_buf_addf(why, "%s", perr.buf);
	} else if (n.not_run) {
		ln_buf_addf(why, "%s", n.reason);
		notrun = 1;
	} else {
		/* one rank: busbw is 0 by definition; judge the sum and algbw */
		at->value = n.ranks > 1 ? n.busbw : n.algbw;
		if (!n.correct)
			ln_buf_addf(why, "the all_reduce result is wrong%s%s", n.reason[0] ? ": " : "",
				    n.reason);
		else if (n.ranks > 1 && !isnan(want) && n.busbw < want)
			ln_buf_addf(why, "busbw %.2f GB/s is below %.2f GB/s", n.busbw, want);
		else if (n.ranks <= 1 && !(n.algbw > 0))
			ln_buf_addstr(why, "no algbw measured");
		else
			at->ok = 1;
	}
	ln_buf_release(&perr);
	return notrun;
}

/* llmnet's NCCL probe, launched like the MPI probe: built once on the
 * launcher with its mpicc, copied to every node, then started by mpirun
 * over the hostfile with one rank per GPU, one communicator across all
 * of them. */
static int nccl_mpi_stage(struct vctx *c)
{
	const struct ln_spec *sp = c->spec;
	const struct ln_validation *v = &sp->validation;
	static const char name[] = "nccl all_reduce";
	struct ln_probe_result pr;
	struct ln_attempt at;
	struct ln_buf why = LN_BUF_INIT, image;
	struct argv av = { .n = 0 };
	size_t i, launcher, first = LN_NO_NODE, odd = LN_NO_NODE;
	unsigned gpus = 0, np = 0;
	int uniform = 1;
	int r = 0, blocked = 0, timeout_s = (int)((v->nccl.timeout_ms + 999) / 1000);
	double want = v->nccl.min_busbw_bps ? (double)v->nccl.min_busbw_bps / 8e9 : NAN;
	const char *bin = LN_PROTO_REMOTE_DIR "/" LN_PROBE_NCCL;
	const char *src = LN_PROBE_SRC_DIR "/nccl_mpi_probe.c";

	memset(&at, 0, sizeof(at));
	at.value = NAN;
	ln_buf_init(&pr.output, 4u << 20);
	for (i = 0; i < c->n && first == LN_NO_NODE; i++)
		if (sp->nodes[i].gpus && under_test(c, i))
			first = i;
	if (first == LN_NO_NODE) {
		c->res->stages[LN_STAGE_NCCL].reason = strdup("no node under test declares GPUs");
		goto out;
	}
	c->res->stages[LN_STAGE_NCCL].ran = 1;
	if (!sp->mpi.present) {
		r = not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, name, "the NCCL probe runs under "
				  "mpirun: the spec has no mpi section (no hostfile)");
		goto out;
	}
	if (!c->o->nccl_probe_source) {
		r = not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, name, "the NCCL probe's source was not "
				  "found");
		goto out;
	}
	/* One rank per GPU: ppr:G:node when every node has G GPUs; else the
	 * hostfile's slots place the ranks, so each node's slots must equal
	 * its GPUs (the default). */
	gpus = sp->nodes[first].gpus;
	for (i = 0; i < c->n; i++) {
		if (sp->nodes[i].gpus != gpus)
			uniform = 0;
		if (sp->nodes[i].slots != sp->nodes[i].gpus && odd == LN_NO_NODE)
			odd = i;
		np += sp->nodes[i].gpus;
	}
	if (!uniform && odd != LN_NO_NODE) {
		r = not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, name, "one rank per GPU: the nodes "
				  "declare different GPU counts and '%s' has %u MPI slots for %u "
				  "GPUs (make its slots equal its gpus)", nname(c, odd),
				  sp->nodes[odd].slots, sp->nodes[odd].gpus);
		goto out;
	}
	launcher = pick_launcher(c);
	if (launcher == LN_NO_NODE) {
		r = not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, name, "no node answered");
		goto out;
	}
	ln_buf_init(&image, 64u << 20);
	r = mpi_build(c, LN_STAGE_NCCL, launcher, c->o->nccl_probe_source, src, bin, &image,
		      &blocked);
	if (r >= 0 && !blocked)
		r = mpi_copy(c, LN_STAGE_NCCL, launcher, bin, &image, &blocked);
	ln_buf_release(&image);
	if (r < 0 || blocked)
		goto out;
	arg(&av, "mpirun");
	if (c->o->run_as_root)
		arg(&av, "--allow-run-as-root");
	arg(&av, "--hostfile");
	arg(&av, "%s", sp->mpi.hostfile);
	arg(&av, "-np");
	arg(&av, "%u", np);
	if (uniform) {
		arg(&av, "--map-by");
		arg(&av, "ppr:%u:node", gpus);
	}
	for (i = 0; i < sp->mpi.n_mca; i++) {
		arg(&av, "--mca");
		arg(&av, "%s", sp->mpi.mca[i].key);
		arg(&av, "%s", sp->mpi.mca[i].value);
	}
	arg(&av, "%s", bin);
	arg(&av, "--bytes");
	arg(&av, "%llu", (unsigned long long)v->nccl.bytes);
	arg(&av, "--expect-ranks");
	arg(&av, "%u", np);
	if (run_probe(c, LN_STAGE_NCCL, launcher, &av, timeout_s, &pr, &at, &why) == 0 &&
	    nccl_judge(&pr, want, &at, &why)) {
		r = not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, name, "%s", why.buf);
		free(at.command);
		memset(&at, 0, sizeof(at));
		ln_buf_reset(&why);
		goto out;
	}
	r = record(c, LN_STAGE_NCCL, LN_NO_NODE, LN_NO_NODE, name, &at, &why, "GB/s", want);
out:
	argv_free(&av);
	ln_buf_release(&pr.output);
	ln_buf_release(&why);
	return r < 0 && r != -LN_ETIMEOUT ? r : 0;
}

static int nccl_stage(struct vctx *c)
{
	const struct ln_validation *v = &c->spec->validation;
	struct ln_probe_result pr;
	struct ln_attempt at;
	struct ln_buf why = LN_BUF_INIT;
	size_t i;
	int r = 0, timeout_s = (int)((v->nccl.timeout_ms + 999) / 1000), any = 0;
	double want = v->nccl.min_busbw_bps ? (double)v->nccl.min_busbw_bps / 8e9 : NAN;

	if (v->nccl.tool != LN_NCCL_ALL_REDUCE_PERF)
		return nccl_mpi_stage(c);
	memset(&at, 0, sizeof(at));
	at.value = NAN;
	ln_buf_init(&pr.output, 4u << 20);
	for (i = 0; i < c->n && r >= 0; i++) {
		struct argv av = { .n = 0 };
		const struct ln_node *node = &c->spec->nodes[i];

		if (!under_test(c, i) || !node->gpus)
			continue;
		any = 1;
		arg(&av, "all_reduce_perf");
		arg(&av, "-b");
		arg(&av, "%llu", (unsigned long long)v->nccl.bytes);
		arg(&av, "-e");
		arg(&av, "%llu", (unsigned long long)v->nccl.bytes);
		arg(&av, "-g");
		arg(&av, "%u", node->gpus);
		arg(&av, "-c");
		arg(&av, "1");
		if (run_probe(c, LN_STAGE_NCCL, i, &av, timeout_s, &pr, &at, &why) == 0 &&
		    nccl_judge(&pr, want, &at, &why)) {
			r = not_run_check(c, LN_STAGE_NCCL, i, "nccl all_reduce", "%s", why.buf);
			free(at.command);
			memset(&at, 0, sizeof(at));
			at.value = NAN;
			ln_buf_reset(&why);
			argv_free(&av);
			continue;
		}
		r = record(c, LN_STAGE_NCCL, i, LN_NO_NODE, "nccl all_reduce", &at, &why, "GB/s", want);
		argv_free(&av);
	}
	if (!any && r >= 0)
		c->res->stages[LN_STAGE_NCCL].reason = strdup("no node under test declares GPUs");
	else
		c->res->stages[LN_STAGE_NCCL].ran = 1;
	ln_buf_release(&pr.output);
	ln_buf_release(&why);
	return r < 0 && r != -LN_ETIMEOUT ? r : 0;
}

/* ---- the run ---- */

int ln_validate_parse_stages(const char *list, unsigned *mask, struct ln_buf *err)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum ln_stage s;

		if (ln_stage_parse(tok, &s) < 0) {
			ln_buf_addf(err, "unknown stage '%s' (stages: devices, rping, bandwidth, io, "
					 "mpi, nccl)", tok);
			r = -EINVAL;
			break;
		}
		*mask |= 1u << s;
	}
	if (!r && !*mask) {
		ln_buf_addstr(err, "--stages names no stage");
		r = -EINVAL;
	}
	free(copy);
	return r;
}

int ln_validate_run(const struct ln_spec *spec, const struct ln_probe_ops *ops, void *octx,
		    const struct ln_validate_opts *o, struct ln_results *res, struct ln_buf *err)
{
	const char **names = NULL;
	struct vctx c;
	struct timespec wall;
	double t0 = ln_now_s();
	size_t i;
	int s, r = -ENOMEM;

	memset(&c, 0, sizeof(c));
	names = calloc(spec->n_nodes ? spec->n_nodes : 1, sizeof(*names));
	c.ni = calloc(spec->n_nodes ? spec->n_nodes : 1, sizeof(*c.ni));
	if (!names || !c.ni)
		goto out;
	for (i = 0; i < spec->n_nodes; i++)
		names[i] = spec->nodes[i].name;
	r = ln_results_init(res, spec->cluster, names, spec->n_nodes);
	if (r < 0)
		goto out;
	clock_gettime(CLOCK_REALTIME, &wall);
	res->started = wall.tv_sec;
	c.spec = spec;
	c.ops = ops;
	c.octx = octx;
	c.o = o;
	c.res = res;
	c.n = spec->n_nodes;
	c.parallel = o->parallel ? o->parallel : 32;
	c.attempts = o->attempts > 0 ? o->attempts : 3;
	c.server_delay_ms = o->server_delay_ms >= 0 ? o->server_delay_ms : 1000;
	c.retry_delay_ms = o->retry_delay_ms >= 0 ? o->retry_delay_ms : 1000;
	c.iters = o->perftest_iters ? o->perftest_iters : 1000;
	for (s = 0; s < LN_STAGE_COUNT; s++)
		res->stages[s].listed = spec->validation.present[s] &&
					(!o->stages || (o->stages & (1u << s)));
	for (i = 0; i < c.n; i++) {
		struct ln_buf ferr = LN_BUF_INIT;
		struct node_info *ni = &c.ni[i];
		const struct ln_node *node = &spec->nodes[i];
		const char *h;

		ni->gid_index = -1;
		ni->rate_gbps = NAN;
		ni->rdma_ok = 1;
		if (ops->facts(octx, i, &ni->facts, &ferr) < 0 || !ni->facts) {
			ni->facts = NULL;
			ni->rdma_ok = 0;
			ni->devices_reason = strdup(ferr.len ? ferr.buf : "no facts");
		}
		ln_buf_release(&ferr);
		if (node->n_rdma) {
			ni->ip = node->rdma[0].ip;
			ni->dev = node->rdma[0].device;
			ni->port = node->rdma[0].port;
			ni->gid_index = node->rdma[0].gid_index;
		}
		h = ln_json_str_at(ni->facts, "hostname");
		ni->hostname = h ? strdup(h) : NULL;
	}
	r = 0;
	for (s = 0; s < LN_STAGE_COUNT && r == 0; s++) {
		double ts = ln_now_s();

		if (!res->stages[s].listed)
			continue;
		progress(&c, "stage %s", ln_stage_name(s));
		switch ((enum ln_stage)s) {
		case LN_STAGE_DEVICES:
			res->stages[s].ran = 1;
			for (i = 0; i < c.n && r == 0; i++)
				if (under_test(&c, i) || c.o->limit)
					r = devices_node(&c, i);
			break;
		case LN_STAGE_RPING:
		case LN_STAGE_BANDWIDTH:
			if (c.n < 2 && !o->limit) {
				res->stages[s].reason = strdup("a pairwise stage needs two nodes");
				break;
			}
			r = pairwise_stage(&c, (enum ln_stage)s);
			break;
		case LN_STAGE_IO:
			r = io_stage(&c);
			break;
		case LN_STAGE_MPI:
			r = mpi_stage(&c);
			break;
		case LN_STAGE_NCCL:
			r = nccl_stage(&c);
			break;
		case LN_STAGE_COUNT:
			break;
		}
		res->stages[s].seconds = ln_now_s() - ts;
	}
	if (r == 0)
		r = ln_diagnose_nodes(res, err);
	else
		ln_buf_addf(err, "validation stopped: %s", ln_strerror(r));
	ln_results_summarize(res);
	res->seconds = ln_now_s() - t0;
out:
	if (r == -ENOMEM && !err->len)
		ln_buf_addstr(err, "validation stopped: out of memory");
	for (i = 0; c.ni && i < c.n; i++) {
		free(c.ni[i].devices_reason);
		free(c.ni[i].hostname);
	}
	free(c.ni);
	free(names);
	return r;
}
