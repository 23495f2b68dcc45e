/* SPDX-License-Identifier: MIT */
/*
 * The mpi stage, and the MPI launch it shares with the nccl stage: every
 * node builds the probe itself (all at once, through the fan-out window)
 * and the builds' sha256 must agree; a one-rank mpirun preflight
 * between nodes names a pair that cannot launch; then one mpirun over the
 * hostfile runs an allreduce that must place a rank on every node.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/util.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/transport/push.h"
#include "orchestrator/validate/parse/parse.h"
#include "orchestrator/validate/stage_common.h"

/* The launcher: the first node of the hostfile that answered and passed
 * devices, else the first that answered; LN_NO_NODE when none did. */
size_t vs_pick_launcher(struct vctx *c)
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

/* One node's own build of the probe, done in a fan-out worker. */
struct build_one {
	int built;		/* 1: built and hashed; 0: why says what stopped it */
	struct ln_buf why;
	char sha256[65];
};

struct build_ctx {
	struct vctx *c;
	enum ln_stage st;
	const char *local, *src, *bin;
	struct build_one *one;
};

/* Node i builds the probe with its own mpicc from the source shipped
 * with the agent (the agent's run verb builds nothing else); the
 * controller reads that build back only to hash it, and never carries it
 * to another node. */
static int build_on(void *vctx, size_t i, struct ln_buf *line)
{
	struct build_ctx *bc = vctx;
	struct build_one *o = &bc->one[i];
	struct ln_probe_result pr;
	struct ln_attempt at;
	struct ln_buf why = LN_BUF_INIT, image;
	struct argv av = { .n = 0 };
	const char *who = vs_nname(bc->c, i);

	(void)line;
	memset(&at, 0, sizeof(at));
	ln_buf_init(&pr.output, 1u << 20);
	ln_buf_init(&image, 64u << 20);
	vs_arg(&av, "mpicc");
	vs_arg(&av, "-O2");
	vs_arg(&av, "-o");
	vs_arg(&av, "%s", bc->bin);
	vs_arg(&av, "%s", bc->src);
	if (vs_push_file(bc->c, i, bc->local, bc->src, &why) < 0)
		ln_buf_addf(&o->why, "%s", why.buf);
	else if (vs_run_probe(bc->c, bc->st, i, &av, 120, &pr, &at, &why) < 0)
		ln_buf_addf(&o->why, "no usable mpicc on '%s': %s", who, why.buf);
	else if (pr.exit_status == 127)
		ln_buf_addf(&o->why, "no mpicc on '%s'", who);
	else if (pr.exit_status)
		ln_buf_addf(&o->why, "mpicc on '%s' failed (exit status %d): %.300s", who,
			    pr.exit_status, pr.output.buf);
	else if (bc->c->ops->get(bc->c->octx, i, bc->bin, &image, &why) < 0 || !image.len)
		ln_buf_addf(&o->why, "cannot hash the %s probe built on '%s': %s",
			    bc->st == LN_STAGE_MPI ? "mpi" : "nccl", who,
			    why.len ? why.buf : "empty file");
	else {
		ln_sha256_hex(image.buf, image.len, o->sha256);
		o->built = 1;
	}
	free(at.command);
	vs_argv_free(&av);
	ln_buf_release(&pr.output);
	ln_buf_release(&image);
	ln_buf_release(&why);
	return 0;
}

/* The hash more than half of the built nodes agree on; NULL when none. */
static const char *majority_sha256(const struct build_one *one, size_t n)
{
	size_t i, j, built = 0, same;

	for (i = 0; i < n; i++)
		built += one[i].built;
	for (i = 0; i < n; i++) {
		if (!one[i].built)
			continue;
		for (same = 0, j = 0; j < n; j++)
			same += one[j].built && !strcmp(one[j].sha256, one[i].sha256);
		if (2 * same > built)
			return one[i].sha256;
	}
	return NULL;
}

/* Record every node's build in node order: one that could not build is
 * "not run"; one whose hash is not the cluster's majority fails, named,
 * and keeps mpirun from starting (a rank must never run a binary the
 * other nodes did not build); with no majority every build fails. */
static int judge_builds(struct vctx *c, enum ln_stage st, const struct build_one *one,
			const unsigned char *sel, const struct ln_fanout_result *fr,
			char sha256[65], int *blocked)
{
	const char *name = st == LN_STAGE_MPI ? "build the mpi probe" : "build the nccl probe";
	const char *what = st == LN_STAGE_MPI ? "MPI" : "NCCL";
	const char *want = majority_sha256(one, c->n);
	struct ln_buf why = LN_BUF_INIT;
	struct ln_attempt at;
	size_t i;
	int r = 0;

	for (i = 0; i < c->n && r >= 0; i++) {
		if (!sel[i])
			continue;
		if (!fr->started[i] || !one[i].built) {
			r = vs_not_run_check(c, st, i, name, "%s", fr->started[i] ? one[i].why.buf :
								 "not built: interrupted");
			(*blocked)++;
			continue;
		}
		if (want && !strcmp(one[i].sha256, want))
			continue;
		memset(&at, 0, sizeof(at));
		at.value = NAN;
		ln_buf_reset(&why);
		if (want)
			ln_buf_addf(&why, "%s probe built on '%s' differs from the cluster's (sha256 "
				    "%.16s, the cluster's %.16s); mpirun does not start", what,
				    vs_nname(c, i), one[i].sha256, want);
		else
			ln_buf_addf(&why, "%s probe built on '%s' (sha256 %.16s): the nodes' builds "
				    "disagree, no hash is built by a majority", what, vs_nname(c, i),
				    one[i].sha256);
		r = vs_record(c, st, i, LN_NO_NODE, name, &at, &why, "", NAN);
		(*blocked)++;
	}
	if (want)
		snprintf(sha256, 65, "%s", want);
	ln_buf_release(&why);
	return r;
}

/* Every node that answered builds its own probe at the same path, all
 * at once through the fan-out window; the builds' hashes are compared
 * (judge_builds). No node's file is ever installed on another: a node
 * that fakes mpicc can only fail its own build. l, the launcher, has
 * answered; sha256 receives the cluster's hash. */
int vs_mpi_install(struct vctx *c, enum ln_stage st, size_t l, const char *local,
		   const char *src, const char *bin, char sha256[65], int *blocked)
{
	struct build_ctx bc = { c, st, local, src, bin, NULL };
	struct ln_fanout f = { st == LN_STAGE_MPI ? "build the mpi probe" : "build the nccl probe",
			       c->n, NULL, c->parallel, build_on, &bc, 1 };
	struct ln_fanout_result fr;
	unsigned char *sel = calloc(c->n ? c->n : 1, 1);
	size_t i;
	int r;

	sha256[0] = '\0';
	bc.one = calloc(c->n ? c->n : 1, sizeof(*bc.one));
	if (!sel || !bc.one) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c->n; i++) {
		sel[i] = i == l || c->ni[i].facts;
		ln_buf_init(&bc.one[i].why, 0);
	}
	f.select = sel;
	r = ln_fanout_run(&f, &fr);
	if (r < 0)
		goto out;
	r = judge_builds(c, st, bc.one, sel, &fr, sha256, blocked);
	ln_fanout_result_release(&fr);
out:
	for (i = 0; bc.one && i < c->n; i++)
		ln_buf_release(&bc.one[i].why);
	free(bc.one);
	free(sel);
	return r;
}

/* One preflight: a one-rank mpirun from node i onto node j, judged into
 * at and why (recorded later, in order, by the caller). */
struct preflight {
	size_t i, j;
	struct ln_attempt at;
	struct ln_buf why;
};

static void preflight_pair(struct vctx *c, struct preflight *pf, const char *bin,
			   const char *sha256)
{
	struct argv av = { .n = 0 };
	struct ln_probe_result pr;
	struct ln_mpi_probe m;
	struct ln_buf perr = LN_BUF_INIT;

	ln_buf_init(&pr.output, 1u << 20);
	vs_arg(&av, "mpirun");
	if (c->o->run_as_root)
		vs_arg(&av, "--allow-run-as-root");
	vs_arg(&av, "--host");
	vs_arg(&av, "%s:1", vs_nname(c, pf->j));
	vs_arg(&av, "-np");
	vs_arg(&av, "1");
	vs_arg_mca(&av, c->spec);
	vs_arg(&av, "%s", bin);
	snprintf(av.sha256, sizeof(av.sha256), "%s", sha256);
	vs_arg(&av, "--elements");
	vs_arg(&av, "1");
	if (vs_run_probe(c, LN_STAGE_MPI, pf->i, &av, 60, &pr, &pf->at, &pf->why) == 0) {
		if (ln_parse_mpi(pr.output.buf, pr.output.len, &m, &perr) == 0) {
			pf->at.ok = m.pass && pr.exit_status == 0;
			ln_mpi_probe_release(&m);
		}
		if (!pf->at.ok)
			ln_buf_addf(&pf->why, "'%s' cannot start a rank on '%s' (by SSH and "
				    "name): %s", vs_nname(c, pf->i), vs_nname(c, pf->j),
				    perr.len ? perr.buf : "mpirun failed");
	}
	ln_buf_release(&pr.output);
	ln_buf_release(&perr);
	vs_argv_free(&av);
}

struct preflight_ctx {
	struct vctx *c;
	const char *bin, *sha256;
	struct preflight *pf;
	size_t *first;		/* node i's preflights: pf[first[i] .. first[i + 1]) */
};

/* Node i's preflights, one after another: a node's session serves one
 * request at a time, while the nodes run theirs at once. */
static int preflight_node(void *vctx, size_t i, struct ln_buf *line)
{
	struct preflight_ctx *pc = vctx;
	size_t k;

	(void)line;
	for (k = pc->first[i]; k < pc->first[i + 1]; k++)
		preflight_pair(pc->c, &pc->pf[k], pc->bin, pc->sha256);
	return 0;
}

/* Preflight: mpirun's launch needs each node to reach the others over
 * SSH by hostfile name and start a process there; a one-rank mpirun
 * from i onto j tests exactly that, and a failure names the pair.
 * Every ordered pair up to 16 nodes; beyond, the launcher to every
 * node and every node to its ring neighbours. Every node runs its own
 * preflights at the same time (the fan-out window); the results are
 * recorded in pair order. */
static int mpi_preflight(struct vctx *c, size_t launcher, const char *bin, const char *sha256,
			 int *blocked)
{
	struct preflight_ctx pc = { c, bin, sha256, NULL, NULL };
	struct ln_fanout f = { "mpirun preflight", c->n, NULL, c->parallel, preflight_node, &pc,
			       1 };
	struct ln_fanout_result fr;
	size_t i, j, n = 0, most = c->n * c->n;
	int r = 0;

	pc.pf = calloc(most ? most : 1, sizeof(*pc.pf));
	pc.first = calloc(c->n + 1, sizeof(*pc.first));
	if (!pc.pf || !pc.first) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c->n; i++) {
		pc.first[i] = n;
		for (j = 0; j < c->n; j++) {
			if (i == j || (c->n > 16 && i != launcher && j != (i + 1) % c->n &&
				       (j + 1) % c->n != i))
				continue;
			pc.pf[n].i = i;
			pc.pf[n].j = j;
			pc.pf[n].at.value = NAN;
			ln_buf_init(&pc.pf[n].why, 0);
			n++;
		}
	}
	pc.first[c->n] = n;
	r = ln_fanout_run(&f, &fr);
	if (r < 0)
		goto out;
	for (i = 0; i < n && r >= 0; i++) {
		struct preflight *pf = &pc.pf[i];

		if (!fr.started[pf->i]) {
			r = vs_not_run_check(c, LN_STAGE_MPI, pf->i, "mpirun preflight",
					     "not run: interrupted");
			(*blocked)++;
			continue;
		}
		*blocked += !pf->at.ok;
		r = vs_record(c, LN_STAGE_MPI, pf->i, pf->j, "mpirun preflight", &pf->at,
			      &pf->why, "", NAN);
	}
	ln_fanout_result_release(&fr);
out:
	for (i = 0; pc.pf && i < n; i++) {
		free(pc.pf[i].at.command);
		free(pc.pf[i].at.detail);
		ln_buf_release(&pc.pf[i].why);
	}
	free(pc.pf);
	free(pc.first);
	return r;
}

/* Judge the allreduce: every rank started, the sum right, and every node
 * of the hostfile holding a rank. */
static void mpi_judge(struct vctx *c, struct stage_run *sr, unsigned np)
{
	struct ln_mpi_probe m;
	struct ln_buf perr = LN_BUF_INIT, *why = &sr->why;
	size_t i, missing = 0;

	if (ln_parse_mpi(sr->pr.output.buf, sr->pr.output.len, &m, &perr) < 0) {
		ln_buf_addf(why, "%s", perr.buf);
		ln_buf_release(&perr);
		return;
	}
	sr->at.value = m.seconds;
	if (m.ranks != (long)np)
		ln_buf_addf(why, "%ld ranks started, the hostfile gives %u", m.ranks, np);
	else if (!m.allreduce_ok)
		ln_buf_addstr(why, "the allreduce result is wrong");
	for (i = 0; i < c->n && !why->len; i++) {
		long k;
		int found = 0;

		for (k = 0; k < m.ranks && !found; k++)
			found = !strcmp(m.hosts[k], vs_nname(c, i)) ||
				(c->ni[i].hostname && !strcmp(m.hosts[k], c->ni[i].hostname));
		if (!found)
			ln_buf_addf(why, "%s'%s'", missing++ ? ", " : "no rank ran on ",
				    vs_nname(c, i));
	}
	if (!why->len)
		sr->at.ok = 1;
	ln_mpi_probe_release(&m);
	ln_buf_release(&perr);
}

/* The allreduce over the hostfile, np ranks (0: every slot). */
static int mpi_allreduce(struct vctx *c, struct stage_run *sr, size_t launcher, const char *bin,
			 const char *sha256)
{
	const struct ln_spec *sp = c->spec;
	struct argv av = { .n = 0 };
	unsigned np = sp->validation.mpi.np, slots = 0;
	size_t i;
	int r;

	for (i = 0; i < c->n; i++)
		slots += sp->nodes[i].slots;
	if (!np)
		np = slots;
	vs_arg(&av, "mpirun");
	if (c->o->run_as_root)
		vs_arg(&av, "--allow-run-as-root");
	vs_arg(&av, "--hostfile");
	vs_arg(&av, "%s", sp->mpi.hostfile);
	vs_arg(&av, "-np");
	vs_arg(&av, "%u", np);
	vs_arg_mca(&av, sp);
	vs_arg(&av, "%s", bin);
	snprintf(av.sha256, sizeof(av.sha256), "%s", sha256);
	vs_arg(&av, "--expect-ranks");
	vs_arg(&av, "%u", np);
	if (vs_run_probe(c, LN_STAGE_MPI, launcher, &av, sr->timeout_s, &sr->pr, &sr->at,
			 &sr->why) == 0)
		mpi_judge(c, sr, np);
	r = vs_record(c, LN_STAGE_MPI, LN_NO_NODE, LN_NO_NODE, "mpirun allreduce", &sr->at,
		      &sr->why, "s", NAN);
	vs_argv_free(&av);
	return r;
}

int vs_mpi_stage(struct vctx *c)
{
	const struct ln_spec *sp = c->spec;
	struct stage_run sr;
	size_t launcher;
	int r = 0, blocked = 0;
	char sha256[65];
	const char *bin = LN_PROTO_REMOTE_DIR "/" LN_PROBE_MPI;
	const char *src = LN_PROBE_SRC_DIR "/mpi_probe.c";

	vs_stage_open(&sr, sp->validation.mpi.timeout_ms, 4u << 20, NAN);
	/* No mpi section is no reason to skip: apply writes the hostfile at
	 * its default path on every node all the same (plan.c). */
	if (!c->o->mpi_probe_source) {
		c->res->stages[LN_STAGE_MPI].reason =
			strdup("the MPI probe's source was not found");
		goto out;
	}
	launcher = vs_pick_launcher(c);
	if (launcher == LN_NO_NODE) {
		c->res->stages[LN_STAGE_MPI].reason = strdup("no node answered");
		goto out;
	}
	c->res->stages[LN_STAGE_MPI].ran = 1;
	r = vs_mpi_install(c, LN_STAGE_MPI, launcher, c->o->mpi_probe_source, src, bin, sha256,
			   &blocked);
	if (r >= 0 && !blocked)
		r = mpi_preflight(c, launcher, bin, sha256, &blocked);
	if (r >= 0 && !blocked)
		r = mpi_allreduce(c, &sr, launcher, bin, sha256);
out:
	return vs_stage_close(&sr, r);
}
