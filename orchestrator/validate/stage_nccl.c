/* SPDX-License-Identifier: MIT */
/*
 * The nccl stage, by one of two tools: llmnet's NCCL probe, launched like
 * the MPI probe (one rank per GPU across every node, one communicator,
 * the spec's collective), or nccl-tests' all_reduce_perf on each node
 * under test alone, from the spec's tests_dir (a node without it is "not
 * run", naming node and path). Both are judged alike: a correct result, and busbw
 * (or, with one rank, algbw) against the threshold. A wrong result names
 * the ranks that received it by node and GPU, and blames their node when
 * they all ran on one.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/validate/parse/parse.h"
#include "orchestrator/validate/stage_common.h"

/* The stage's one check, named after its collective. */
static const char *const check_names[] = {
	[LN_NCCL_ALL_REDUCE] = "nccl all_reduce", [LN_NCCL_ALL_GATHER] = "nccl all_gather",
	[LN_NCCL_REDUCE_SCATTER] = "nccl reduce_scatter", [LN_NCCL_BROADCAST] = "nccl broadcast",
	[LN_NCCL_REDUCE] = "nccl reduce", [LN_NCCL_ALLTOALL] = "nccl alltoall",
	[LN_NCCL_SENDRECV] = "nccl sendrecv",
};

const char *vs_nccl_check_name(const struct vctx *c)
{
	return check_names[c->spec->validation.nccl.op];
}

#define check_name vs_nccl_check_name

/* The node a rank ran on, by the host MPI names: the node's name or the
 * hostname its facts gave; LN_NO_NODE when none is. */
static size_t node_of_host(struct vctx *c, const char *host)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(host, vs_nname(c, i)) ||
		    (c->ni[i].hostname && !strcmp(host, c->ni[i].hostname)))
			return i;
	return LN_NO_NODE;
}

/* Why a result is wrong: every rank that received a wrong element, by
 * node and GPU. Returns the node they all ran on (blamed), LN_NO_NODE
 * when they are on several, on none the spec knows, or unknown. */
static size_t nccl_wrong(struct vctx *c, const struct ln_nccl *n, struct ln_buf *why)
{
	size_t k, j, kept = n->nwrong, node, blame = LN_NO_NODE;
	int one;

	if (kept > LN_NCCL_MAX_WRONG)
		kept = LN_NCCL_MAX_WRONG;
	one = kept > 0 && kept == n->nwrong;

	ln_buf_addf(why, "the %s result is wrong", n->op[0] ? n->op : "collective");
	for (k = 0; k < kept; k++) {
		const struct ln_nccl_wrong *w = &n->wrongs[k];

		for (j = 0; j < k && n->wrongs[j].rank != w->rank; j++)
			;
		if (j < k)
			continue;	/* that rank at another size */
		node = node_of_host(c, w->host);
		if (node == LN_NO_NODE || (k && node != blame))
			one = 0;
		blame = node;
		if (node != LN_NO_NODE)
			ln_buf_addf(why, "%s rank %ld on '%s' (GPU %d)", k ? ";" : ":", w->rank,
				    vs_nname(c, node), w->device);
		else
			ln_buf_addf(why, "%s rank %ld on host '%s' (GPU %d)", k ? ";" : ":",
				    w->rank, w->host, w->device);
		ln_buf_addf(why, " received %ld wrong elements at %llu bytes, the first "
			    "(%ld) %.9g instead of %.9g", w->elements,
			    (unsigned long long)w->size, w->first, w->got, w->want);
	}
	if (n->nwrong > kept)
		ln_buf_addf(why, "; %zu more", n->nwrong - kept);
	if (!kept && n->reason[0])
		ln_buf_addf(why, ": %s", n->reason);
	/* nccl-tests names no rank: its #wrong by size */
	for (k = 0, j = 0; !kept && n->from_nccl_tests && k < n->nsizes; k++)
		if (n->sizes[k].wrong > 0)
			ln_buf_addf(why, "%s %ld wrong elements at %llu bytes", j++ ? "," : ":",
				    n->sizes[k].wrong, (unsigned long long)n->sizes[k].bytes);
	return one ? blame : LN_NO_NODE;
}

/* Judge one parsed NCCL result into at/why, at its largest size (a
 * sweep's every size is checked for a correct result); *blame: the node
 * a wrong result is on (else LN_NO_NODE). 1 when the stage was "not run"
 * (reason in why). */
static int nccl_judge(struct vctx *c, const struct ln_nccl *n, double want,
		      struct ln_attempt *at, struct ln_buf *why, size_t *blame)
{
	char at_size[48] = "";

	*blame = LN_NO_NODE;
	if (n->not_run) {
		ln_buf_addf(why, "%s", n->reason);
		return 1;
	}
	if (n->nsizes > 1)
		snprintf(at_size, sizeof(at_size), " at %llu bytes (the largest size)",
			 (unsigned long long)n->bytes);
	/* one rank: busbw is 0 by definition; judge the sum and algbw */
	at->value = n->ranks > 1 ? n->busbw : n->algbw;
	if (!n->correct)
		*blame = nccl_wrong(c, n, why);
	else if (n->ranks > 1 && !isnan(want) && n->busbw < want)
		ln_buf_addf(why, "busbw %.2f GB/s%s is below %.2f GB/s", n->busbw, at_size, want);
	else if (n->ranks <= 1 && !(n->algbw > 0))
		ln_buf_addf(why, "no algbw measured%s", at_size);
	else
		at->ok = 1;
	return 0;
}

/* The sweep's figures on the check just recorded (the stage's last). */
static int keep_sizes(struct vctx *c, const struct ln_nccl *n)
{
	struct ln_size_bw s[LN_NCCL_MAX_SIZES];
	size_t k;

	if (!c->res->nchecks || !n->nsizes)
		return 0;
	for (k = 0; k < n->nsizes; k++) {
		s[k].bytes = n->sizes[k].bytes;
		s[k].algbw = n->sizes[k].algbw;
		s[k].busbw = n->sizes[k].busbw;
		s[k].wrong = n->sizes[k].wrong;
	}
	return ln_check_set_sizes(&c->res->checks[c->res->nchecks - 1], s, n->nsizes);
}

/* Collective latency: the time at the smallest size, judged by
 * max_latency, as a check of its own beside the bandwidth's. */
static int record_latency(struct vctx *c, size_t subject, const struct ln_nccl *n)
{
	const struct ln_validation *v = &c->spec->validation;
	struct ln_attempt at = { .value = NAN };
	struct ln_buf why = LN_BUF_INIT;
	char name[64];
	double want = (double)v->nccl.max_latency_us;
	int r;

	snprintf(name, sizeof(name), "%s latency", check_name(c));
	if (n->nsizes) {
		at.value = n->sizes[0].time_us;
		at.ok = at.value <= want;
		if (!at.ok)
			ln_buf_addf(&why, "time %.1f us at %llu bytes (the smallest size) is above "
				    "%.0f us", at.value, (unsigned long long)n->sizes[0].bytes, want);
	} else {
		ln_buf_addstr(&why, "no size was measured");
	}
	r = vs_record(c, LN_STAGE_NCCL, subject, LN_NO_NODE, name, &at, &why, "us", want);
	ln_buf_release(&why);
	return r;
}

/* Run av on node and record it as node's check (LN_NO_NODE: the
 * cluster's, or the node a wrong result is on); a probe that reports it
 * could not run is "not run". *busbw (may be NULL): the judged busbw of a
 * correct result, else NAN. */
int vs_nccl_run(struct vctx *c, struct stage_run *sr, size_t node, size_t subject,
		struct argv *av, double *busbw, const struct vs_nccl_expect *ex)
{
	size_t blame = LN_NO_NODE;
	struct ln_nccl *n = calloc(1, sizeof(*n));
	struct ln_buf perr = LN_BUF_INIT;
	int r, parsed = 0;

	if (busbw)
		*busbw = NAN;
	if (!n)
		return -ENOMEM;
	r = vs_run_probe(c, LN_STAGE_NCCL, node, av, sr->timeout_s, &sr->pr, &sr->at, &sr->why);
	if (r == -LN_EMISSING) {
		/* nccl-tests is not installed there: nothing was measured */
		ln_buf_reset(&sr->why);
		r = vs_not_run_check(c, LN_STAGE_NCCL, subject, check_name(c), "'%s' is not "
				     "installed on '%s' (nccl.tests_dir)", av->v[0], vs_nname(c, node));
		vs_stage_drop_attempt(sr);
		goto out;
	}
	if (r == 0) {
		if (ln_parse_nccl(sr->pr.output.buf, sr->pr.output.len, n, &perr) < 0) {
			ln_buf_addf(&sr->why, "%s", perr.buf);
		} else if (ex && !n->not_run && (n->ranks != ex->ranks || n->nhosts != ex->hosts)) {
			/* mpirun placed the ranks otherwise than asked: not the
			 * collective the check names */
			ln_buf_addf(&sr->why, "nccl-tests reported %ld ranks on %zu hosts, not the "
				    "%ld ranks (one a GPU) on %zu nodes mpirun was given", n->ranks,
				    n->nhosts, ex->ranks, ex->hosts);
		} else if (nccl_judge(c, n, sr->want, &sr->at, &sr->why, &blame)) {
			r = vs_not_run_check(c, LN_STAGE_NCCL, subject, check_name(c), "%s",
					     sr->why.buf);
			vs_stage_drop_attempt(sr);
			goto out;
		} else {
			parsed = 1;
		}
	}
	if (subject == LN_NO_NODE)
		subject = blame;
	r = vs_record(c, LN_STAGE_NCCL, subject, LN_NO_NODE, check_name(c), &sr->at, &sr->why,
		      "GB/s", sr->want);
	if (r == 0 && parsed)
		r = keep_sizes(c, n);
	if (parsed && busbw && n->correct)
		*busbw = n->ranks > 1 ? n->busbw : n->algbw;
	if (r == 0 && parsed && c->spec->validation.nccl.max_latency_us)
		r = record_latency(c, subject, n);
out:
	ln_buf_release(&perr);
	free(n);
	return r;
}

/* Some nodes declare no GPUs (storage, login nodes): they hold no rank.
 * The GPU nodes go to mpirun as --host NAME:GPUS,... instead of the
 * hostfile (which lists every node), so their slots are their GPUs.
 * 0, or 1 (not run, reported) when the list passes the agent's 4,096
 * bytes an argument. */
static int gpu_hosts(struct vctx *c, struct ln_buf *hosts)
{
	size_t i;
	int r;

	for (i = 0; i < c->n; i++)
		if (c->spec->nodes[i].gpus)
			ln_buf_addf(hosts, "%s%s:%u", hosts->len ? "," : "", vs_nname(c, i),
				    c->spec->nodes[i].gpus);
	if (hosts->len <= 4096)
		return 0;
	r = vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, check_name(c),
			     "one rank per GPU on the GPU nodes only: their --host list is %zu "
			     "bytes, more than the 4096 one argument may hold (give every node "
			     "GPUs, or shorter node names)", hosts->len);
	return r < 0 ? r : 1;
}

/* One rank per GPU: with a node without GPUs, the GPU nodes by --host
 * (hosts set); else ppr:G:node when every node has G GPUs (*uniform);
 * else the hostfile's slots place the ranks, so each node's slots must
 * equal its GPUs (the default). *np: the ranks; "not run" when the
 * placement cannot work (returns 1, or < 0). */
static int nccl_placement(struct vctx *c, size_t first, unsigned *np, int *uniform,
			  struct ln_buf *hosts)
{
	const struct ln_spec *sp = c->spec;
	unsigned gpus = sp->nodes[first].gpus;
	size_t i, odd = LN_NO_NODE, gpuless = 0;
	int r;

	*np = 0;
	*uniform = 1;
	for (i = 0; i < c->n; i++) {
		if (sp->nodes[i].gpus != gpus)
			*uniform = 0;
		if (sp->nodes[i].slots != sp->nodes[i].gpus && odd == LN_NO_NODE)
			odd = i;
		gpuless += !sp->nodes[i].gpus;
		*np += sp->nodes[i].gpus;
	}
	if (gpuless) {
		*uniform = 0;
		return gpu_hosts(c, hosts);
	}
	if (*uniform || odd == LN_NO_NODE)
		return 0;
	r = vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, check_name(c),
			     "one rank per GPU: the nodes "
			     "declare different GPU counts and '%s' has %u MPI slots for %u GPUs "
			     "(make its slots equal its gpus)",
			     vs_nname(c, odd), sp->nodes[odd].slots, sp->nodes[odd].gpus);
	return r < 0 ? r : 1;
}

/* Node i's declared RDMA ports as NCCL_IB_HCA lists them, without its
 * leading '=' (exact names): "mlx5_0:1,mlx5_1:1"; "" when it has none. */
void vs_nccl_hca_list(const struct ln_node *node, struct ln_buf *out)
{
	size_t k;

	for (k = 0; k < node->n_rdma; k++)
		ln_buf_addf(out, "%s%s:%u", k ? "," : "", node->rdma[k].device,
			    node->rdma[k].port);
}

/* The name a node's ranks see as their host: the hostname its facts
 * gave when it is a plain one (the agent's word is checked), else its
 * name in the spec. */
static const char *rank_host(struct vctx *c, size_t i)
{
	const char *h = c->ni[i].hostname;

	if (h && *h && *h != '-' && strlen(h) < 256 &&
	    strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
		    strlen(h))
		return h;
	return vs_nname(c, i);
}

/* NCCL_IB_HCA per node: the list most GPU nodes share as --hca, and
 * --hca-at HOST=LIST for each node whose ports differ (an empty LIST:
 * none declared, NCCL chooses there). The probe sets it on each rank
 * from its own host before it loads NCCL. */
static void hca_args(struct vctx *c, struct argv *av)
{
	const struct ln_spec *sp = c->spec;
	struct ln_buf *lists = calloc(c->n, sizeof(*lists));
	size_t i, j, best = LN_NO_NODE, best_n = 0;

	if (!lists)
		return;
	for (i = 0; i < c->n; i++) {
		ln_buf_init(&lists[i], 0);
		if (sp->nodes[i].gpus)
			vs_nccl_hca_list(&sp->nodes[i], &lists[i]);
	}
	for (i = 0; i < c->n; i++) {
		size_t same = 0;

		/* a list can win only while enough nodes are left to count */
		for (j = i; sp->nodes[i].gpus && best_n < c->n - i && j < c->n; j++)
			same += sp->nodes[j].gpus && !strcmp(lists[i].buf, lists[j].buf);
		if (same > best_n) {
			best_n = same;
			best = i;
		}
	}
	if (best != LN_NO_NODE && lists[best].len) {
		vs_arg(av, "--hca");
		vs_arg(av, "%s", lists[best].buf);
	}
	for (i = 0; best != LN_NO_NODE && i < c->n; i++)
		if (sp->nodes[i].gpus && strcmp(lists[i].buf, lists[best].buf)) {
			vs_arg(av, "--hca-at");
			vs_arg(av, "%s=%s", rank_host(c, i), lists[i].buf);
		}
	for (i = 0; i < c->n; i++)
		ln_buf_release(&lists[i]);
	free(lists);
}

/* The GID index every port of every GPU node has, or -1 when they do
 * not all agree (or none is known): NCCL_IB_GID_INDEX is one value. */
int vs_nccl_gid_index(struct vctx *c)
{
	size_t i, k;
	int gid = -1;

	for (i = 0; i < c->n; i++) {
		if (!c->spec->nodes[i].gpus)
			continue;
		for (k = 0; k < c->ni[i].nports; k++) {
			int g = c->ni[i].ports[k].gid_index;

			if (g < 0 || (gid >= 0 && g != gid))
				return -1;
			gid = g;
		}
	}
	return gid;
}

/* What the probe sets on every rank before NCCL loads: NCCL_IB_HCA per
 * node, NCCL_IB_GID_INDEX when every port agrees, NCCL_SOCKET_IFNAME and
 * the spec's nccl.env (each name on common/nccl_env.c's allow-list,
 * which the agent checks again). */
static void nccl_env_args(struct vctx *c, struct argv *av)
{
	const struct ln_validation *v = &c->spec->validation;
	int gid = vs_nccl_gid_index(c);
	size_t k;

	hca_args(c, av);
	if (gid >= 0) {
		vs_arg(av, "--gid-index");
		vs_arg(av, "%d", gid);
	}
	if (v->nccl.socket_ifname) {
		vs_arg(av, "--socket-ifname");
		vs_arg(av, "%s", v->nccl.socket_ifname);
	}
	for (k = 0; k < v->nccl.n_env; k++) {
		vs_arg(av, "--env");
		vs_arg(av, "%s=%s", v->nccl.env[k].key, v->nccl.env[k].value);
	}
}

static void nccl_mpi_argv(struct vctx *c, unsigned np, int uniform, unsigned gpus,
			  const struct ln_buf *hosts, const char *bin, const char *sha256,
			  struct argv *av)
{
	const struct ln_spec *sp = c->spec;

	vs_arg(av, "mpirun");
	if (c->o->run_as_root)
		vs_arg(av, "--allow-run-as-root");
	vs_arg(av, hosts->len ? "--host" : "--hostfile");
	vs_arg(av, "%s", hosts->len ? hosts->buf : sp->mpi.hostfile);
	vs_arg(av, "-np");
	vs_arg(av, "%u", np);
	if (uniform) {
		vs_arg(av, "--map-by");
		vs_arg(av, "ppr:%u:node", gpus);
	}
	vs_arg_mca(av, sp);
	vs_arg(av, "%s", bin);
	snprintf(av->sha256, sizeof(av->sha256), "%s", sha256);
	vs_arg(av, "--op");
	vs_arg(av, "%s", ln_nccl_op_name(sp->validation.nccl.op));
	vs_arg(av, "--bytes");
	vs_arg(av, "%llu", (unsigned long long)sp->validation.nccl.bytes);
	if (sp->validation.nccl.min_bytes) {
		vs_arg(av, "--min-bytes");
		vs_arg(av, "%llu", (unsigned long long)sp->validation.nccl.min_bytes);
	}
	vs_arg(av, "--expect-ranks");
	vs_arg(av, "%u", np);
	nccl_env_args(c, av);
}

/* llmnet's NCCL probe, launched like the MPI probe: built once on the
 * launcher with its mpicc, copied to every node, then started by mpirun
 * over the hostfile with one rank per GPU, one communicator across all
 * of them. */
int vs_nccl_mpi_stage(struct vctx *c, struct stage_run *sr)
{
	const struct ln_spec *sp = c->spec;
	struct argv av = { .n = 0 };
	struct ln_buf hosts = LN_BUF_INIT;
	size_t i, launcher, first = LN_NO_NODE;
	unsigned np = 0;
	int uniform = 1, r = 0, blocked = 0;
	char sha256[65];
	const char *bin = LN_PROTO_REMOTE_DIR "/" LN_PROBE_NCCL;
	const char *src = LN_PROBE_SRC_DIR "/nccl_mpi_probe.c";

	for (i = 0; i < c->n && first == LN_NO_NODE; i++)
		if (sp->nodes[i].gpus && vs_under_test(c, i))
			first = i;
	if (first == LN_NO_NODE) {
		c->res->stages[LN_STAGE_NCCL].reason = strdup("no node under test declares GPUs");
		return 0;
	}
	c->res->stages[LN_STAGE_NCCL].ran = 1;
	/* the hostfile is there without an mpi section too (its default) */
	if (!c->o->nccl_probe_source)
		return vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, check_name(c),
					"the NCCL probe's "
					"source was not found");
	r = nccl_placement(c, first, &np, &uniform, &hosts);
	if (r) {
		ln_buf_release(&hosts);
		return r < 0 ? r : 0;
	}
	launcher = vs_pick_launcher(c);
	if (launcher == LN_NO_NODE)
		r = vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, check_name(c),
				     "no node answered");
	else
		r = vs_mpi_install(c, LN_STAGE_NCCL, launcher, c->o->nccl_probe_source, src, bin,
				   sha256, &blocked);
	if (launcher == LN_NO_NODE || r < 0 || blocked) {
		ln_buf_release(&hosts);
		return r;
	}
	nccl_mpi_argv(c, np, uniform, sp->nodes[first].gpus, &hosts, bin, sha256, &av);
	ln_buf_release(&hosts);
	if (av.n >= MAX_ARGS)
		r = vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, check_name(c),
				     "the probe's command line would pass more than %d arguments: each node "
				     "whose RDMA ports differ from most nodes' takes two (declare "
				     "the same device names, or fewer nccl.env variables)", MAX_ARGS);
	else
		r = vs_nccl_run(c, sr, launcher, LN_NO_NODE, &av, NULL, NULL);
	vs_argv_free(&av);
	return r;
}
