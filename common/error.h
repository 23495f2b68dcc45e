/* SPDX-License-Identifier: MIT */
/*
 * Project error codes and process exit codes. Functions return 0 or a
 * negative code: -errno, or -LN_E* (from 1000 up, so they never collide
 * with errno values). The human detail goes into a caller-owned ln_buf.
 */
#ifndef LN_ERROR_H
#define LN_ERROR_H

enum ln_err {
	LN_ESPEC = 1000,	/* the spec is invalid */
	LN_EUNREACH,		/* a node could not be reached */
	LN_EHOSTKEY,		/* a host key was unknown or changed */
	LN_EAUTH,		/* sign-in was refused */
	LN_ETIMEOUT,		/* a bounded step ran out of time */
	LN_EPROTO,		/* a peer spoke something we do not understand */
	LN_EREQUEST,		/* a request (agent input) is malformed */
	LN_ECONFLICT,		/* the node holds something that forbids the change */
	LN_ELOCKED,		/* another run holds the node's lock */
	LN_EFAILPOINT,		/* a test failpoint stopped the run on purpose */
	LN_EMISSING,		/* the program a run names is not on the node */
};

/* Exit codes: the table in docs/exit-codes.md, the one place they are
 * documented; keep the two in step. */
enum ln_exit {
	LN_EXIT_OK = 0,
	LN_EXIT_FAILED = 1,	/* checks failed, or not converged */
	LN_EXIT_CHANGES = 2,	/* plan --detailed-exitcode: changes pending */
	LN_EXIT_SPEC = 3,	/* the spec is invalid; nothing was contacted */
	LN_EXIT_UNREACHABLE = 4,/* a node was unreachable or refused us */
	LN_EXIT_AGENT = 5,	/* an agent reported an unrecoverable error */
	LN_EXIT_STOPPED = 6,	/* apply --max-fail stopped the rollout: nodes not run */
	LN_EXIT_USAGE = 64,
};

/* Combine two outcomes: the highest of 6, 5, 4, 3, 1 wins; 2 beats only 0. */
int ln_exit_merge(int a, int b);

/* A short text for a negative code (errno or LN_E*). */
const char *ln_strerror(int code);

#endif
