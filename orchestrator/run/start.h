/* SPDX-License-Identifier: MIT */
/*
 * The start every controller command shares, as one library call: what a
 * command needs before its body is a set of flags its row in the command
 * table declares (cmd/main.c), the way git's builtins declare RUN_SETUP,
 * so no command picks its setup by its own name.
 */
#ifndef LN_START_H
#define LN_START_H

#include <stddef.h>

#include "orchestrator/run/notes.h"
#include "orchestrator/run/run.h"

/* What a command needs set up before its body. */
#define LN_NEED_SECRETS (1u << 0)	/* the DH-HMAC-CHAP secrets its requests carry */
#define LN_NEED_SESSIONS (1u << 1)	/* libssh, the sign-in key, the run over the nodes */
#define LN_NEED_FACTS (1u << 2)		/* every node reached, its agent current, its facts
					 * read and recorded; implies LN_NEED_SESSIONS */

/* The command line's say in a run. */
struct ln_run_opts {
	const char *command;		/* the command's name, for the run log */
	unsigned parallel;		/* --parallel; 0: the spec's ssh.parallel */
	char *const *accept;		/* --accept-replaced: node names */
	size_t n_accept;
	char *const *limit;		/* --limit: node names (NULL: every node) */
	size_t n_limit;
	int purge;			/* teardown --purge */
};

/*
 * Set up run over spec (loaded and checked; the caller's, and it outlives
 * the run) for a command that needs what needs says, in this order, each
 * before any node is contacted but the facts: the secrets, libssh and the
 * sign-in key, the run record (ln_run_init()), then the facts, recorded
 * in the state folder. run is zeroed by the caller and released with
 * ln_run_release() whatever this returns. Returns LN_EXIT_OK to go on
 * (notes may hold a warning: the facts could not be recorded), else the
 * exit code the command ends with, and why in notes: a secrets file's
 * problems (LN_NOTE_PLAIN) and the error. With needs 0 it does nothing.
 */
int ln_run_start(struct ln_run *run, const struct ln_spec *spec, unsigned needs,
		 const struct ln_run_opts *o, struct ln_notes *notes);

#endif
