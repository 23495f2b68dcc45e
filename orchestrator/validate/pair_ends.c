/* SPDX-License-Identifier: MIT */
/* Both ends of a pair judged (issue 32): see stage_pair.h. */
#include <math.h>
#include <string.h>

#include "orchestrator/validate/stage_pair.h"

/* Whether the server's end ran: started, in time, exit status 0; the
 * reason into why when not. Judged only after its client measured, so a
 * failure here is the server node's own. */
int vs_server_ran(const struct pair_try *t, struct ln_buf *why)
{
	struct vctx *c = t->c;
	const struct server_job *job = t->job;

	if (job->rc < 0)
		ln_buf_addf(why, "cannot run the %s server on '%s': %s", job->argv->v[0],
			    vs_nname(c, t->a), job->err.buf);
	else if (job->res.timed_out)
		ln_buf_addf(why, "%s server on '%s' (stage %s, pair %s-%s) timed out after %ds",
			    job->argv->v[0], vs_nname(c, t->a), ln_stage_name(t->st),
			    vs_nname(c, t->a), vs_nname(c, t->b), t->timeout_s);
	else if (job->res.exit_status != 0)
		ln_buf_addf(why, "%s server on '%s' failed (exit status %d)", job->argv->v[0],
			    vs_nname(c, t->a), job->res.exit_status);
	else
		return 1;
	return 0;
}

/* A client report that could not be parsed: when it says the tool did
 * not run on its own node (not found, not executable, or one of
 * perftest's local start-up failures, which come before any connection),
 * the client end is marked, as a server that did not run is; a failure to
 * reach the peer marks no end (the link may be at fault). */
void vs_client_not_run(const struct pair_try *t, struct ln_attempt *at)
{
	static const char *const local[] = { "Couldn't allocate MR", "Couldn't get context",
					     "No IB devices found", "Unable to find the Infiniband",
					     "Couldn't create", "Failed to create" };
	const struct ln_probe_result *r = t->cres;
	size_t i;

	if (r->exit_status == 126 || r->exit_status == 127) {
		at->own_fault |= LN_END_B;
		return;
	}
	for (i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if (r->output.buf && memmem(r->output.buf, r->output.len, local[i],
					    strlen(local[i]))) {
			at->own_fault |= LN_END_B;
			return;
		}
}

/* Whether the server's value sv agrees with the client's cv within the
 * fraction tol; the reason into why when not. */
int vs_ends_agree(const struct pair_try *t, double cv, double sv, double tol,
		      const char *unit, struct ln_buf *why)
{
	if (fabs(sv - cv) <= tol * fmax(fabs(sv), fabs(cv)))
		return 1;
	ln_buf_addf(why, "the ends disagree: client on '%s' reports %.3g %s, server on '%s' "
		    "%.3g %s (more than %.0f%% apart)", vs_nname(t->c, t->b), cv, unit,
		    vs_nname(t->c, t->a), sv, unit, tol * 100);
	return 0;
}

/* No server report to check the client's against: its end is marked; one
 * that ran (exit 0) and lost its report makes run_pair try again though
 * the client measured (a report lost once under load costs a try; only
 * one never given names the node). */
void vs_server_unread(const struct pair_try *t, struct ln_attempt *at, int ran,
		      const struct ln_buf *perr, struct ln_buf *why)
{
	if (perr->len)
		ln_buf_addf(why, "server on '%s': %s", vs_nname(t->c, t->a), perr->buf);
	at->own_fault |= LN_END_A;
	at->report_lost = ran;
}
