/* SPDX-License-Identifier: MIT */
/*
 * validate's course over a run (command.h): the probes the stages need
 * are found beside the binary, the runner goes through the agents' `run`
 * verb, the recap states the exit code the run ends with.
 */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/report/report.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/validate/command.h"
#include "orchestrator/validate/remote.h"
#include "orchestrator/validate/stages.h"

/* The probes the runner installs, found once per run (NULL: the stage
 * that needs one is not run, with that reason). */
struct probes {
	char *mpi_src, *nccl, *io;
};

static void find_probes(struct probes *p)
{
	p->mpi_src = ln_validate_find_probe(LN_PROBE_MPI_SRC);
	p->nccl = ln_validate_find_probe(LN_PROBE_NCCL_SRC);
	p->io = ln_validate_find_probe("io_probe");
}

static void release_probes(struct probes *p)
{
	free(p->mpi_src);
	free(p->nccl);
	free(p->io);
}

/* The runner's options from the command's; limit: per node, 1 when
 * inside --limit (the caller's, run->n entries) when there is a --limit. */
static void runner_opts(const struct ln_run *run, const struct ln_validate_cmd *vc,
			const struct probes *p, const unsigned char *limit,
			struct ln_validate_opts *vo)
{
	memset(vo, 0, sizeof(*vo));
	vo->stages = vc->stages;
	vo->limit = limit;
	vo->io_probe_path = p->io;
	vo->mpi_probe_source = p->mpi_src;
	vo->nccl_probe_source = p->nccl;
	vo->parallel = run->parallel;
	vo->attempts = vc->attempts;
	vo->server_delay_ms = -1;
	vo->retry_delay_ms = -1;
	vo->run_as_root = !run->spec->ssh.user || !strcmp(run->spec->ssh.user, "root");
	vo->progress = vc->progress;
	vo->progress_ctx = vc->progress_ctx;
}

/* Under --limit, the nodes inside it (into *limit, run->n entries);
 * else NULL: every node is under test. */
static int limit_of(const struct ln_run *run, unsigned char **limit)
{
	size_t i;

	*limit = NULL;
	if (!run->has_limit)
		return 0;
	*limit = calloc(run->n ? run->n : 1, 1);
	if (!*limit)
		return -1;
	for (i = 0; i < run->n; i++)
		(*limit)[i] = (unsigned char)run->nodes[i].limited;
	return 0;
}

/* The after-validate actions that act on the results (the Slurm row),
 * before the recap: they reach the nodes through this run's agents. */
static int after_on_results(struct ln_run *run, const struct ln_validate_cmd *vc,
			    struct ln_results *res, struct ln_notes *notes)
{
	struct ln_after_opts ao = vc->after;

	ao.spec = run->spec;
	ao.ops = &ln_validate_remote_ops;
	ao.ops_ctx = run;
	ao.progress = vc->progress;
	ao.progress_ctx = vc->progress_ctx;
	return ln_validate_after_results(res, &ao, notes);
}

int ln_validate_command(struct ln_run *run, const struct ln_validate_cmd *vc,
			struct ln_results *res, struct ln_buf *out, struct ln_notes *notes)
{
	struct ln_validate_opts vo;
	struct ln_buf err = LN_BUF_INIT;
	struct probes p = { NULL, NULL, NULL };
	unsigned char *limit = NULL;
	int code = -1;
	size_t i;

	memset(res, 0, sizeof(*res));
	if (limit_of(run, &limit) < 0)
		goto out;
	find_probes(&p);
	runner_opts(run, vc, &p, limit, &vo);
	if (ln_validate_run(run->spec, &ln_validate_remote_ops, run, &vo, res, &err) < 0) {
		ln_notes_add(notes, LN_LOG_ERROR, "%s", err.buf);
		goto out;
	}
	/* the report states the exit code the run ends with (docs/exit-codes.md) */
	for (i = 0; i < run->n; i++)
		res->node_exit = ln_exit_merge(res->node_exit, ln_node_state_exit(run->nodes[i].state));
	after_on_results(run, vc, res, notes);	/* ln_results_exit counts it */
	if (vc->json)
		ln_report_json(res, 1, out);
	else
		ln_report_text(res, vc->color, out);
	code = ln_results_exit(res);
	if (ln_fanout_interrupted())
		code = ln_exit_merge(code, LN_EXIT_FAILED);
out:
	ln_buf_release(&err);
	release_probes(&p);
	free(limit);
	return code;
}

int ln_validate_finish(struct ln_results *res, const struct ln_validate_cmd *vc,
		       struct ln_notes *notes)
{
	int code = ln_report_dispatch(res, &vc->files, notes) < 0 ? LN_EXIT_FAILED : LN_EXIT_OK;

	return ln_exit_merge(code, ln_validate_after(res, &vc->after, notes));
}

int ln_validate_after_apply(struct ln_run *run, const struct ln_validate_cmd *vc,
			    struct ln_results *res, struct ln_buf *out, struct ln_notes *notes)
{
	int r;

	memset(res, 0, sizeof(*res));
	/* The facts apply started from predate its changes (no controllers,
	 * no mounts yet): validation judges the converged node, so read them
	 * again over the sessions apply kept open. */
	r = ln_facts_gather(run);
	if (r < 0) {
		ln_notes_add(notes, LN_LOG_ERROR, "cannot read facts again after apply: %s",
			     ln_strerror(r));
		return -1;
	}
	return ln_validate_command(run, vc, res, out, notes);
}
