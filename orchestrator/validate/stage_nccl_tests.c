/* SPDX-License-Identifier: MIT */
/*
 * The nccl stage's driver, and its nccl-tests runs: the spec's op's
 * OP_perf from tests_dir, either on each GPU node alone (scope node, the
 * agent starts it) or as the seeds run it, one mpirun across the GPU
 * nodes with one rank per GPU (scope cluster, nccl-tests built with
 * MPI=1). Across nodes, NCCL's variables reach the ranks by typed
 * `-x NAME=VALUE` (one value for every rank, so nodes whose RDMA port
 * lists differ make the check "not run"), every node's copy of the program
 * is checked by its own agent first (`OP_perf -h`), and a scaling sweep
 * reruns it on the first N GPU nodes for each N, efficiency
 * busbw(N) / busbw(first N). The results are judged by stage_nccl.c's
 * vs_nccl_run, like the probe's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/nccl_env.h"
#include "orchestrator/validate/parse/parse.h"
#include "orchestrator/validate/stage_common.h"

/* ln_nccl_tests_program() takes the spec's op order */
_Static_assert(LN_NCCL_ALL_REDUCE == 0 && LN_NCCL_REDUCE == 4 && LN_NCCL_ALLTOALL == 5 &&
	       LN_NCCL_SENDRECV == 6, "nccl-tests' programs follow enum ln_nccl_op");

static const char *program(const struct ln_spec *sp)
{
	return ln_nccl_tests_program(sp->validation.nccl.op);
}

/* The sweep's sizes doubling from the first (-f 2), gpus GPUs a process
 * (-g), every result checked (-c 1). */
static void tests_args(const struct ln_spec *sp, unsigned gpus, struct argv *av)
{
	const struct ln_validation *v = &sp->validation;

	vs_arg(av, "%s/%s", v->nccl.tests_dir, program(sp));
	vs_arg(av, "-b");
	vs_arg(av, "%llu", (unsigned long long)(v->nccl.min_bytes ? v->nccl.min_bytes :
						  v->nccl.bytes));
	vs_arg(av, "-e");
	vs_arg(av, "%llu", (unsigned long long)v->nccl.bytes);
	vs_arg(av, "-f");
	vs_arg(av, "2");
	vs_arg(av, "-g");
	vs_arg(av, "%u", gpus);
	vs_arg(av, "-c");
	vs_arg(av, "1");
}

/* By its absolute path in tests_dir (the agent runs it from there only,
 * after it checked that root owns it and every directory above it). */
void vs_nccl_tests_argv(const struct ln_spec *sp, size_t i, struct argv *av)
{
	tests_args(sp, sp->nodes[i].gpus, av);
}

void vs_nccl_lib_env(const struct ln_validation *v, struct argv *av)
{
	if (v->nccl.nccl_lib || v->nccl.cuda_lib)
		vs_env(av, "LD_LIBRARY_PATH=%s%s%s", v->nccl.nccl_lib ? v->nccl.nccl_lib : "",
		       v->nccl.nccl_lib && v->nccl.cuda_lib ? ":" : "",
		       v->nccl.cuda_lib ? v->nccl.cuda_lib : "");
}

/* launcher none: what mpirun's -x would pass, given by the agent itself
 * (run --env, typed there again): node i's NCCL_IB_HCA, NCCL_IB_GID_INDEX
 * when every port agrees, NCCL_SOCKET_IFNAME, nccl.env, and the wheel's
 * libraries as LD_LIBRARY_PATH (nccl_lib first: its libnccl.so.2 wins). */
static void direct_env(struct vctx *c, size_t i, struct argv *av)
{
	const struct ln_validation *v = &c->spec->validation;
	struct ln_buf hca = LN_BUF_INIT;
	int gid = vs_nccl_gid_index(c);
	size_t k;

	vs_nccl_hca_list(&c->spec->nodes[i], &hca);
	if (hca.len)
		vs_env(av, "NCCL_IB_HCA==%s", hca.buf);
	ln_buf_release(&hca);
	if (gid >= 0)
		vs_env(av, "NCCL_IB_GID_INDEX=%d", gid);
	if (v->nccl.socket_ifname)
		vs_env(av, "NCCL_SOCKET_IFNAME=%s", v->nccl.socket_ifname);
	for (k = 0; k < v->nccl.n_env; k++)
		vs_env(av, "%s=%s", v->nccl.env[k].key, v->nccl.env[k].value);
	vs_nccl_lib_env(v, av);
}

/* scope node, or launcher none (lint allows it at scope cluster on one
 * GPU node only): OP_perf on each node under test, its GPUs only, started
 * by the node's agent. */
static int node_scope(struct vctx *c, struct stage_run *sr)
{
	size_t i;
	int r = 0, any = 0;

	for (i = 0; i < c->n && r >= 0; i++) {
		struct argv av = { .n = 0 };

		if (!vs_under_test(c, i) || !c->spec->nodes[i].gpus)
			continue;
		any = 1;
		vs_nccl_tests_argv(c->spec, i, &av);
		if (c->spec->validation.nccl.launcher == LN_NCCL_LAUNCHER_NONE)
			direct_env(c, i, &av);
		r = vs_nccl_run(c, sr, i, i, &av, NULL, NULL);
		vs_argv_free(&av);
	}
	vs_stage_ran(c, LN_STAGE_NCCL, any, r, "no node under test declares GPUs");
	return r;
}

/* The GPU nodes under test, the first `want` of them (0: all) into
 * nodes[]; their count. */
static size_t pick_nodes(struct vctx *c, unsigned want, size_t *nodes)
{
	size_t i, n = 0;

	for (i = 0; i < c->n && (!want || n < want); i++)
		if (c->spec->nodes[i].gpus && vs_under_test(c, i))
			nodes[n++] = i;
	return n;
}

/* NCCL_IB_HCA is one value for every rank: the run's nodes must declare
 * the same RDMA ports. 0, or 1 with the reason in why. */
static int same_hcas(struct vctx *c, const size_t *nodes, size_t n, struct ln_buf *hca,
		     struct ln_buf *why)
{
	struct ln_buf other = LN_BUF_INIT;
	size_t k;
	int r = 0;

	vs_nccl_hca_list(&c->spec->nodes[nodes[0]], hca);
	for (k = 1; k < n && !r; k++) {
		ln_buf_reset(&other);
		vs_nccl_hca_list(&c->spec->nodes[nodes[k]], &other);
		if (strcmp(other.buf, hca->buf)) {
			ln_buf_addf(why, "mpirun gives every rank one NCCL_IB_HCA, but '%s' declares "
				    "RDMA ports '%s' and '%s' declares '%s' (declare the same "
				    "device names, or run scope: node)", vs_nname(c, nodes[0]),
				    hca->buf, vs_nname(c, nodes[k]), other.buf);
			r = 1;
		}
	}
	ln_buf_release(&other);
	return r;
}

/* What mpirun passes to every rank: NCCL_IB_HCA (exact names),
 * NCCL_IB_GID_INDEX when every port agrees, NCCL_SOCKET_IFNAME, nccl.env. */
static void x_args(struct vctx *c, const struct ln_buf *hca, struct argv *av)
{
	const struct ln_validation *v = &c->spec->validation;
	int gid = vs_nccl_gid_index(c);
	size_t k;

	if (hca->len) {
		vs_arg(av, "-x");
		vs_arg(av, "NCCL_IB_HCA==%s", hca->buf);
	}
	if (gid >= 0) {
		vs_arg(av, "-x");
		vs_arg(av, "NCCL_IB_GID_INDEX=%d", gid);
	}
	if (v->nccl.socket_ifname) {
		vs_arg(av, "-x");
		vs_arg(av, "NCCL_SOCKET_IFNAME=%s", v->nccl.socket_ifname);
	}
	for (k = 0; k < v->nccl.n_env; k++) {
		vs_arg(av, "-x");
		vs_arg(av, "%s=%s", v->nccl.env[k].key, v->nccl.env[k].value);
	}
}

/* mpirun over the run's nodes, one rank per GPU: by the hostfile when
 * the run is every node and each one's slots are its GPUs, else by
 * --host NODE:GPUS,... (a sweep's first N nodes, nodes without GPUs). */
static void mpirun_argv(struct vctx *c, const size_t *nodes, size_t n,
			const struct ln_buf *hca, struct argv *av)
{
	const struct ln_spec *sp = c->spec;
	struct ln_buf hosts = LN_BUF_INIT;
	unsigned np = 0;
	size_t k;
	int by_file = n == c->n;

	for (k = 0; k < n; k++) {
		np += sp->nodes[nodes[k]].gpus;
		by_file &= sp->nodes[nodes[k]].slots == sp->nodes[nodes[k]].gpus;
		ln_buf_addf(&hosts, "%s%s:%u", k ? "," : "", vs_nname(c, nodes[k]),
			    sp->nodes[nodes[k]].gpus);
	}
	vs_arg(av, "mpirun");
	if (c->o->run_as_root)
		vs_arg(av, "--allow-run-as-root");
	vs_arg(av, by_file ? "--hostfile" : "--host");
	vs_arg(av, "%s", by_file ? sp->mpi.hostfile : hosts.buf);
	vs_arg(av, "-np");
	vs_arg(av, "%u", np);
	vs_arg_mca(av, sp);
	x_args(c, hca, av);
	tests_args(sp, 1, av);
	ln_buf_release(&hosts);
}

/* Every node's agent checks its own copy of the program (root's, from the
 * root down, the run verb's rules) by running it with -h: mpirun starts
 * the copies on the other nodes itself. Each that fails is a check of
 * its node; 1 when any did (mpirun does not start). */
static int check_copies(struct vctx *c, struct stage_run *sr, const size_t *nodes, size_t n)
{
	size_t k;
	int r, bad = 0;

	for (k = 0; k < n; k++) {
		struct argv av = { .n = 0 };

		vs_arg(&av, "%s/%s", c->spec->validation.nccl.tests_dir, program(c->spec));
		vs_arg(&av, "-h");
		r = vs_run_probe(c, LN_STAGE_NCCL, nodes[k], &av, sr->timeout_s, &sr->pr, &sr->at,
				 &sr->why);
		if (r == -LN_EMISSING) {
			ln_buf_reset(&sr->why);
			vs_stage_drop_attempt(sr);
			r = vs_not_run_check(c, LN_STAGE_NCCL, nodes[k], vs_nccl_check_name(c),
					     "'%s' is not installed on '%s' (nccl.tests_dir)",
					     av.v[0], vs_nname(c, nodes[k]));
			bad = 1;
		} else if (r == -ENOMEM) {
			vs_argv_free(&av);
			return r;
		} else if (r != 0) {	/* refused (the agent says why), or timed out */
			sr->at.ok = 0;
			r = vs_record(c, LN_STAGE_NCCL, nodes[k], LN_NO_NODE, vs_nccl_check_name(c),
				      &sr->at, &sr->why, "GB/s", sr->want);
			bad = 1;
		} else {
			vs_stage_drop_attempt(sr);
			ln_buf_reset(&sr->why);
		}
		vs_argv_free(&av);
		if (r < 0)
			return r;
	}
	return bad;
}

/* A scaling run: av on node, parsed, never recorded (the sweep records
 * one check a count): *busbw the judged busbw of a correct result, else
 * NAN with the reason in why. */
static int measure(struct vctx *c, struct stage_run *sr, size_t node, struct argv *av,
		   const struct vs_nccl_expect *ex, double *busbw, struct ln_buf *why)
{
	struct ln_nccl *n = calloc(1, sizeof(*n));
	int r;

	*busbw = NAN;
	if (!n)
		return -ENOMEM;
	r = vs_run_probe(c, LN_STAGE_NCCL, node, av, sr->timeout_s, &sr->pr, &sr->at, why);
	vs_stage_drop_attempt(sr);
	if (r == -ENOMEM)
		goto out;
	r = 0;
	if (why->len)
		goto out;
	if (ln_parse_nccl(sr->pr.output.buf, sr->pr.output.len, n, why) < 0)
		goto out;
	if (n->not_run || !n->correct)
		ln_buf_addf(why, "%s", n->not_run ? n->reason : "the result is wrong");
	else if (n->ranks != ex->ranks || n->nhosts != ex->hosts)
		ln_buf_addf(why, "nccl-tests reported %ld ranks on %zu hosts, not %ld on %zu",
			    n->ranks, n->nhosts, ex->ranks, ex->hosts);
	else
		*busbw = n->ranks > 1 ? n->busbw : n->algbw;
out:
	free(n);
	return r;
}

/* One mpirun across the first `want` GPU nodes (0: all, recorded as the
 * stage's check, every node's copy checked first; else measured only, on
 * copies that run checked): *busbw its judged busbw (NAN when none, why
 * says why when it did not run or gave none). 1 when a copy failed. */
static int cluster_run(struct vctx *c, struct stage_run *sr, unsigned want, double *busbw,
		       struct ln_buf *why)
{
	size_t *nodes = calloc(c->n ? c->n : 1, sizeof(*nodes)), n;
	struct ln_buf hca = LN_BUF_INIT;
	struct argv av = { .n = 0 };
	int r = 0;

	*busbw = NAN;
	if (!nodes)
		return -ENOMEM;
	n = pick_nodes(c, want, nodes);
	if (want && n < want)
		ln_buf_addf(why, "%u nodes asked, but %zu GPU nodes are under test", want, n);
	else if (!same_hcas(c, nodes, n, &hca, why) && !want &&
		 (r = check_copies(c, sr, nodes, n)) > 0)
		ln_buf_addf(why, "mpirun did not start: nccl-tests' %s could not run on every "
			    "node (each is named)", program(c->spec));
	if (!why->len && r >= 0) {
		mpirun_argv(c, nodes, n, &hca, &av);
		struct vs_nccl_expect ex = { 0, n };
		size_t k;

		for (k = 0; k < n; k++)
			ex.ranks += c->spec->nodes[nodes[k]].gpus;
		if (want)
			r = measure(c, sr, nodes[0], &av, &ex, busbw, why);
		else
			r = vs_nccl_run(c, sr, nodes[0], LN_NO_NODE, &av, busbw, &ex);
	} else if (!want && r >= 0) {
		int copy = r;

		r = vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, vs_nccl_check_name(c), "%s",
				     why->buf);
		r = r < 0 ? r : copy;
	}
	vs_argv_free(&av);
	ln_buf_release(&hca);
	free(nodes);
	return r;
}

/* scaling: the run on the first N GPU nodes for each N, each a check
 * "nccl OP scaling N nodes" valued busbw(N) / busbw(first N), judged by
 * min_efficiency (without it, reported). */
static int scaling(struct vctx *c, struct stage_run *sr)
{
	const struct ln_validation *v = &c->spec->validation;
	double base = NAN, bw, want = v->nccl.min_efficiency > 0 ? v->nccl.min_efficiency : NAN;
	size_t k, i, under_test = 0;
	int r = 0;

	for (i = 0; i < c->n; i++)
		under_test += c->spec->nodes[i].gpus && vs_under_test(c, i);

	for (k = 0; k < v->nccl.n_scaling && r >= 0; k++) {
		struct ln_attempt at = { .value = NAN };
		struct ln_buf why = LN_BUF_INIT;
		unsigned cnt = v->nccl.scaling[k];
		char name[80];

		snprintf(name, sizeof(name), "%s scaling %u nodes", vs_nccl_check_name(c), cnt);
		if (cnt > under_test) {	/* --limit left fewer: nothing to judge */
			r = vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, name, "%u nodes asked, but "
					     "%zu GPU nodes are under test", cnt, under_test);
			continue;
		}
		r = cluster_run(c, sr, cnt, &bw, &why);
		if (!k)
			base = bw;
		if (r < 0) {
			ln_buf_release(&why);
			break;
		}
		if (isnan(bw) && why.len) {
			r = vs_record(c, LN_STAGE_NCCL, LN_NO_NODE, LN_NO_NODE, name, &at, &why,
				      "ratio", want);
		} else if (isnan(base) || !(base > 0)) {
			ln_buf_addf(&why, "no busbw on the first %u nodes to compare with",
				    v->nccl.scaling[0]);
			r = vs_record(c, LN_STAGE_NCCL, LN_NO_NODE, LN_NO_NODE, name, &at, &why,
				      "ratio", want);
		} else {
			at.value = bw / base;
			at.ok = isnan(want) || at.value >= want;
			if (!at.ok)
				ln_buf_addf(&why, "efficiency %.3g (busbw %.2f GB/s on %u nodes, "
					    "%.2f GB/s on %u) is below %.3g", at.value, bw, cnt, base,
					    v->nccl.scaling[0], want);
			r = vs_record(c, LN_STAGE_NCCL, LN_NO_NODE, LN_NO_NODE, name, &at, &why,
				      "ratio", want);
		}
		ln_buf_release(&why);
	}
	return r;
}

static int cluster_scope(struct vctx *c, struct stage_run *sr)
{
	struct ln_buf why = LN_BUF_INIT;
	double bw;
	size_t first;
	int r;

	if (!pick_nodes(c, 1, &first)) {
		c->res->stages[LN_STAGE_NCCL].reason = strdup("no node under test declares GPUs");
		return 0;
	}
	c->res->stages[LN_STAGE_NCCL].ran = 1;
	r = cluster_run(c, sr, 0, &bw, &why);
	ln_buf_release(&why);
	if (r == 0 && c->spec->validation.nccl.n_scaling)
		r = scaling(c, sr);
	else if (r == 1 && c->spec->validation.nccl.n_scaling)	/* a copy failed: no sweep */
		r = vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, "nccl scaling", "mpirun did "
				     "not start: a node's nccl-tests could not run");
	return r < 0 ? r : 0;
}

int vs_nccl_stage(struct vctx *c)
{
	const struct ln_validation *v = &c->spec->validation;
	struct stage_run sr;
	int r;

	vs_stage_open(&sr, v->nccl.timeout_ms, 4u << 20,
		      v->nccl.min_busbw_bps ? (double)v->nccl.min_busbw_bps / 8e9 : NAN);
	if (v->nccl.tool == LN_NCCL_PROBE)
		r = vs_nccl_mpi_stage(c, &sr);
	else if (v->nccl.scope == LN_NCCL_SCOPE_NODE || v->nccl.launcher == LN_NCCL_LAUNCHER_NONE)
		r = node_scope(c, &sr);
	else
		r = cluster_scope(c, &sr);
	return vs_stage_close(&sr, r);
}
