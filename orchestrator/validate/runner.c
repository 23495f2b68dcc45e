/* SPDX-License-Identifier: MIT */
/*
 * Stage runner (see stages.h): reads every node's facts once, then runs
 * the listed stages in their fixed order through a table, one stage
 * family per file (stage_devices.c, stage_pair.c, stage_io.c,
 * stage_mpi.c, stage_nccl.c), then the node diagnosis and the summary. A
 * stage that cannot run is "not run" with its reason, which fails the
 * run. Checks of one stage that depend on an earlier stage's failure are
 * skipped with the reason.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/json.h"
#include "common/util.h"
#include "orchestrator/validate/diagnose.h"
#include "orchestrator/validate/stage_common.h"

static int rping_stage(struct vctx *c)
{
	return vs_pairwise_stage(c, LN_STAGE_RPING);
}

static int bandwidth_stage(struct vctx *c)
{
	return vs_pairwise_stage(c, LN_STAGE_BANDWIDTH);
}

static int latency_stage(struct vctx *c)
{
	return vs_pairwise_stage(c, LN_STAGE_LATENCY);
}

/* Indexed by enum ln_stage: the run order. */
static int (*const stage_fns[])(struct vctx *c) = {
	[LN_STAGE_DEVICES] = vs_devices_stage,
	[LN_STAGE_RPING] = rping_stage,
	[LN_STAGE_BANDWIDTH] = bandwidth_stage,
	[LN_STAGE_LATENCY] = latency_stage,
	[LN_STAGE_IO] = vs_io_stage,
	[LN_STAGE_MPI] = vs_mpi_stage,
	[LN_STAGE_NCCL] = vs_nccl_stage,
	[LN_STAGE_ACCESS] = vs_access_stage,
};

_Static_assert(ARRAY_SIZE(stage_fns) == LN_STAGE_COUNT, "a runner for every stage");

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
			ln_buf_addf(err, "unknown stage '%s' (stages: devices, rping, bandwidth, "
				    "latency, io, mpi, nccl, access)", tok);
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

int ln_validate_check_stages(const struct ln_spec *spec, unsigned mask, struct ln_buf *err)
{
	const struct ln_validation *v = &spec->validation;
	size_t i;
	int s;

	if (!v->n_order) {
		ln_buf_addf(err, "spec of '%s' lists no validation stage: nothing to validate "
			    "(add a 'validation:' section)", spec->cluster);
		return -EINVAL;
	}
	for (s = 0; s < LN_STAGE_COUNT; s++) {
		if (!(mask & (1u << s)) || v->present[s])
			continue;
		ln_buf_addf(err, "--stages names '%s', which the spec's validation does not list "
			    "(it lists:", ln_stage_name((enum ln_stage)s));
		for (i = 0; i < v->n_order; i++)
			ln_buf_addf(err, "%s %s", i ? "," : "", ln_stage_name(v->order[i]));
		ln_buf_addch(err, ')');
		return -EINVAL;
	}
	return 0;
}

/* Every node's facts, once; a node that cannot be read fails devices
 * and every stage that needs it. */
static int read_facts(struct vctx *c)
{
	size_t i, k;

	for (i = 0; i < c->n; i++) {
		struct ln_buf ferr = LN_BUF_INIT;
		struct node_info *ni = &c->ni[i];
		const struct ln_node *node = &c->spec->nodes[i];
		const char *h;

		ni->rdma_ok = 1;
		pthread_mutex_init(&ni->perftest_lock, NULL);
		if (c->ops->facts(c->octx, i, &ni->facts, &ferr) < 0 || !ni->facts) {
			ni->facts = NULL;
			ni->rdma_ok = 0;
			ni->devices_reason = strdup(ferr.len ? ferr.buf : "no facts");
		}
		ln_buf_release(&ferr);
		ni->ports = calloc(node->n_rdma ? node->n_rdma : 1, sizeof(*ni->ports));
		if (!ni->ports)
			return -ENOMEM;
		ni->nports = node->n_rdma;
		for (k = 0; k < node->n_rdma; k++) {
			struct port_info *pi = &ni->ports[k];

			pi->ip = node->rdma[k].ip;
			pi->dev = node->rdma[k].device;
			pi->port = node->rdma[k].port;
			pi->gid_index = node->rdma[k].gid_index;
			pi->rate_gbps = NAN;
			pi->ok = ni->facts != NULL;
		}
		h = ln_json_str_at(ni->facts, "hostname");
		ni->hostname = h ? strdup(h) : NULL;
	}
	return 0;
}

/* The rails, and every declared port's name and rail in the results. */
static int map_rails(struct vctx *c, struct ln_buf *err)
{
	size_t i, k;
	int r = ln_railmap_from_spec(c->spec, &c->rails, err);

	if (r == 0)
		r = ln_results_init_ports(c->res, c->rails.stride);
	for (i = 0; i < c->n && r == 0; i++)
		for (k = 0; k < c->spec->nodes[i].n_rdma && r == 0; k++) {
			int rail = ln_railmap_rail_of(&c->rails, i, (unsigned)k);

			/* lint allows a rail once per node: every port has one */
			r = ln_results_set_port(c->res, i, k, c->spec->nodes[i].rdma[k].device,
						rail >= 0 ? c->rails.names[rail] : "");
		}
	return r;
}

static void vctx_init(struct vctx *c, const struct ln_spec *spec, const struct ln_probe_ops *ops,
		      void *octx, const struct ln_validate_opts *o, struct ln_results *res)
{
	enum ln_stage s;

	c->spec = spec;
	c->ops = ops;
	c->octx = octx;
	c->o = o;
	c->res = res;
	c->n = spec->n_nodes;
	c->parallel = o->parallel ? o->parallel : 32;
	c->attempts = o->attempts > 0 ? o->attempts : 3;
	c->server_delay_ms = o->server_delay_ms >= 0 ? o->server_delay_ms : 1000;
	c->retry_delay_ms = o->retry_delay_ms >= 0 ? o->retry_delay_ms : 1000;
	c->iters = o->perftest_iters ? o->perftest_iters : 1000;
	for (s = LN_STAGE_DEVICES; s < LN_STAGE_COUNT; s++)
		res->stages[s].listed = spec->validation.present[s] &&
					(!o->stages || (o->stages & (1u << s)));
}

int ln_validate_run(const struct ln_spec *spec, const struct ln_probe_ops *ops, void *octx,
		    const struct ln_validate_opts *o, struct ln_results *res, struct ln_buf *err)
{
	const char **names = NULL;
	struct vctx c;
	struct timespec wall;
	double t0 = ln_now_s();
	enum ln_stage s;
	size_t i;
	int r = -ENOMEM;

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
	vctx_init(&c, spec, ops, octx, o, res);
	r = map_rails(&c, err);
	if (r == 0)
		r = read_facts(&c);
	if (r < 0)
		goto out;
	for (s = LN_STAGE_DEVICES; s < LN_STAGE_COUNT && r == 0; s++) {
		double ts = ln_now_s();

		if (!res->stages[s].listed)
			continue;
		vs_progress(&c, "stage %s", ln_stage_name(s));
		r = stage_fns[s](&c);
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
		size_t k;

		free(c.ni[i].devices_reason);
		free(c.ni[i].hostname);
		vs_perftest_release(&c.ni[i]);
		for (k = 0; c.ni[i].ports && k < c.ni[i].nports; k++) {
			free(c.ni[i].ports[k].reason);
			free(c.ni[i].ports[k].mem.reason);
		}
		free(c.ni[i].ports);
	}
	ln_railmap_release(&c.rails);
	free(c.ni);
	free(names);
	return r;
}
