/* SPDX-License-Identifier: MIT */
/*
 * What the pairwise stages (stage_pair.c) share with the rules that judge
 * both ends of a pair (pair_ends.c): one attempt as a tool sees it, and
 * those rules.
 */
#ifndef LN_VALIDATE_STAGE_PAIR_H
#define LN_VALIDATE_STAGE_PAIR_H

#include "orchestrator/validate/stage_common.h"

struct server_job {
	struct vctx *c;
	size_t node;
	unsigned lane;
	struct argv *argv;
	int timeout_s;
	struct ln_probe_result res;
	struct ln_buf err;
	int rc;
};

/* One pair's attempt as a tool sees it: the pair, its port slot, the
 * bound, the client's result and the server's job. */
struct pair_try {
	struct vctx *c;
	enum ln_stage st;
	size_t a, b;		/* server, client */
	unsigned pa, pb;	/* their ports */
	unsigned slot;
	int timeout_s;
	const struct ln_probe_result *cres;
	const struct server_job *job;
};

/* Both ends are judged (issue 32): a node that could not run its end
 * must not pass on its peer's word. perftest's server prints the same
 * report row as its client (ib_write_bw's server the client's figures,
 * ib_send_bw's its own receive rate, the latency tools the round trips
 * both ends timed; tests/fixtures/probes/ib_*.server.txt), so the two
 * values must agree within these fractions of the larger: they agree
 * to a few per cent in the lab, a wider gap is one end lying or a
 * broken run. */
#define BW_AGREE 0.25
#define LAT_AGREE 0.5

/* Whether the server's end ran: started, in time, exit status 0; the
 * reason into why when not. Judged only after its client measured, so a
 * failure here is the server node's own. */
int vs_server_ran(const struct pair_try *t, struct ln_buf *why);
/* A client report that could not be parsed: the client end is marked when
 * it says the tool did not run on its own node. */
void vs_client_not_run(const struct pair_try *t, struct ln_attempt *at);
/* Whether the server's value sv agrees with the client's cv within the
 * fraction tol; the reason into why when not. */
int vs_ends_agree(const struct pair_try *t, double cv, double sv, double tol, const char *unit,
		  struct ln_buf *why);
/* No server report to check the client's against (ran: it exited 0): its
 * end is marked, and a report lost by a server that ran is tried again. */
void vs_server_unread(const struct pair_try *t, struct ln_attempt *at, int ran,
		      const struct ln_buf *perr, struct ln_buf *why);

#endif
