/* SPDX-License-Identifier: MIT */
/*
 * The nccl stage, by one of two tools: llmnet's NCCL probe, launched like
 * the MPI probe (one rank per GPU across every node, one communicator),
 * or nccl-tests' all_reduce_perf on each node under test alone. Both are
 * judged alike: a correct sum, and busbw (or, with one rank, algbw)
 * against the threshold.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/validate/parse/parse.h"
#include "orchestrator/validate/stage_common.h"

static const char check_name[] = "nccl all_reduce";

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
			ln_buf_addf(why, "the all_reduce result is wrong%s%s",
				    n.reason[0] ? ": " : "", n.reason);
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

/* Run av on node and record it as node's check (LN_NO_NODE: the
 * cluster's); a probe that reports it could not run is "not run". */
static int nccl_run(struct vctx *c, struct stage_run *sr, size_t node, size_t subject,
		    struct argv *av)
{
	int r;

	if (vs_run_probe(c, LN_STAGE_NCCL, node, av, sr->timeout_s, &sr->pr, &sr->at,
			 &sr->why) == 0 &&
	    nccl_judge(&sr->pr, sr->want, &sr->at, &sr->why)) {
		r = vs_not_run_check(c, LN_STAGE_NCCL, subject, check_name, "%s", sr->why.buf);
		vs_stage_drop_attempt(sr);
		return r;
	}
	return vs_record(c, LN_STAGE_NCCL, subject, LN_NO_NODE, check_name, &sr->at, &sr->why,
			 "GB/s", sr->want);
}

/* One rank per GPU: ppr:G:node when every node has G GPUs (*uniform);
 * else the hostfile's slots place the ranks, so each node's slots must
 * equal its GPUs (the default). *np: the ranks; "not run" when the
 * placement cannot work (returns 1, or < 0). */
static int nccl_placement(struct vctx *c, size_t first, unsigned *np, int *uniform)
{
	const struct ln_spec *sp = c->spec;
	unsigned gpus = sp->nodes[first].gpus;
	size_t i, odd = LN_NO_NODE;
	int r;

	*np = 0;
	*uniform = 1;
	for (i = 0; i < c->n; i++) {
		if (sp->nodes[i].gpus != gpus)
			*uniform = 0;
		if (sp->nodes[i].slots != sp->nodes[i].gpus && odd == LN_NO_NODE)
			odd = i;
		*np += sp->nodes[i].gpus;
	}
	if (*uniform || odd == LN_NO_NODE)
		return 0;
	r = vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, check_name,
			     "one rank per GPU: the nodes "
			     "declare different GPU counts and '%s' has %u MPI slots for %u GPUs "
			     "(make its slots equal its gpus)",
			     vs_nname(c, odd), sp->nodes[odd].slots, sp->nodes[odd].gpus);
	return r < 0 ? r : 1;
}

static void nccl_mpi_argv(struct vctx *c, unsigned np, int uniform, unsigned gpus,
			  const char *bin, const char *sha256, struct argv *av)
{
	const struct ln_spec *sp = c->spec;

	vs_arg(av, "mpirun");
	if (c->o->run_as_root)
		vs_arg(av, "--allow-run-as-root");
	vs_arg(av, "--hostfile");
	vs_arg(av, "%s", sp->mpi.hostfile);
	vs_arg(av, "-np");
	vs_arg(av, "%u", np);
	if (uniform) {
		vs_arg(av, "--map-by");
		vs_arg(av, "ppr:%u:node", gpus);
	}
	vs_arg_mca(av, sp);
	vs_arg(av, "%s", bin);
	snprintf(av->sha256, sizeof(av->sha256), "%s", sha256);
	vs_arg(av, "--bytes");
	vs_arg(av, "%llu", (unsigned long long)sp->validation.nccl.bytes);
	vs_arg(av, "--expect-ranks");
	vs_arg(av, "%u", np);
}

/* llmnet's NCCL probe, launched like the MPI probe: built once on the
 * launcher with its mpicc, copied to every node, then started by mpirun
 * over the hostfile with one rank per GPU, one communicator across all
 * of them. */
static int nccl_mpi_stage(struct vctx *c, struct stage_run *sr)
{
	const struct ln_spec *sp = c->spec;
	struct argv av = { .n = 0 };
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
		return vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, check_name,
					"the NCCL probe's "
					"source was not found");
	r = nccl_placement(c, first, &np, &uniform);
	if (r)
		return r < 0 ? r : 0;
	launcher = vs_pick_launcher(c);
	if (launcher == LN_NO_NODE)
		return vs_not_run_check(c, LN_STAGE_NCCL, LN_NO_NODE, check_name,
					"no node answered");
	r = vs_mpi_install(c, LN_STAGE_NCCL, launcher, c->o->nccl_probe_source, src, bin, sha256,
			   &blocked);
	if (r < 0 || blocked)
		return r;
	nccl_mpi_argv(c, np, uniform, sp->nodes[first].gpus, bin, sha256, &av);
	r = nccl_run(c, sr, launcher, LN_NO_NODE, &av);
	vs_argv_free(&av);
	return r;
}

/* nccl-tests' all_reduce_perf on each node under test, its GPUs only. */
static int nccl_tests_stage(struct vctx *c, struct stage_run *sr)
{
	const struct ln_validation *v = &c->spec->validation;
	size_t i;
	int r = 0, any = 0;

	for (i = 0; i < c->n && r >= 0; i++) {
		struct argv av = { .n = 0 };
		const struct ln_node *node = &c->spec->nodes[i];

		if (!vs_under_test(c, i) || !node->gpus)
			continue;
		any = 1;
		vs_arg(&av, "all_reduce_perf");
		vs_arg(&av, "-b");
		vs_arg(&av, "%llu", (unsigned long long)v->nccl.bytes);
		vs_arg(&av, "-e");
		vs_arg(&av, "%llu", (unsigned long long)v->nccl.bytes);
		vs_arg(&av, "-g");
		vs_arg(&av, "%u", node->gpus);
		vs_arg(&av, "-c");
		vs_arg(&av, "1");
		r = nccl_run(c, sr, i, i, &av);
		vs_argv_free(&av);
	}
	vs_stage_ran(c, LN_STAGE_NCCL, any, r, "no node under test declares GPUs");
	return r;
}

int vs_nccl_stage(struct vctx *c)
{
	const struct ln_validation *v = &c->spec->validation;
	struct stage_run sr;
	int r;

	vs_stage_open(&sr, v->nccl.timeout_ms, 4u << 20,
		      v->nccl.min_busbw_bps ? (double)v->nccl.min_busbw_bps / 8e9 : NAN);
	if (v->nccl.tool == LN_NCCL_ALL_REDUCE_PERF)
		r = nccl_tests_stage(c, &sr);
	else
		r = nccl_mpi_stage(c, &sr);
	return vs_stage_close(&sr, r);
}
