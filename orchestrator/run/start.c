/* SPDX-License-Identifier: MIT */
/*
 * A controller command's start (start.h): the secrets and the sign-in key
 * are read before any node is contacted, like the spec, so a wrong one
 * stops the run while nothing has been touched; then the run record and
 * the facts. The exit codes are docs/exit-codes.md's.
 */
#include <errno.h>

#include "common/error.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/start.h"
#include "orchestrator/run/state.h"
#include "orchestrator/secrets.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/transport/ssh.h"

/* The secrets the requests carry, before any node. */
static int load_secrets(const struct ln_spec *spec, struct ln_secrets **secrets,
			struct ln_notes *notes)
{
	struct ln_buf err = LN_BUF_INIT;
	int r = ln_secrets_load(spec, secrets, &err);

	if (r < 0) {
		ln_buf_rtrim(&err);
		if (err.len)
			ln_notes_add(notes, LN_NOTE_PLAIN, "%s", err.buf);
		ln_notes_add(notes, LN_LOG_ERROR, "the DH-HMAC-CHAP secrets of spec '%s' are not "
			     "usable; no node was contacted", spec->path);
	}
	ln_buf_release(&err);
	return r < 0 ? (r == -LN_ESPEC ? LN_EXIT_SPEC : LN_EXIT_FAILED) : LN_EXIT_OK;
}

/* libssh, the key every sign-in uses (read once, before any node), and
 * the run record. */
static int open_run(struct ln_run *run, const struct ln_spec *spec, const struct ln_run_opts *o,
		    struct ln_notes *notes)
{
	struct ln_buf err = LN_BUF_INIT;
	int code = LN_EXIT_OK, r;

	if (ln_ssh_global_init() < 0) {
		ln_notes_add(notes, LN_LOG_ERROR, "cannot initialise libssh");
		code = LN_EXIT_FAILED;
		goto out;
	}
	if (ln_ssh_identity_check(spec->ssh.identity, &err) < 0) {
		ln_notes_add(notes, LN_LOG_ERROR, "%s; no node was contacted", err.buf);
		code = LN_EXIT_SPEC;
		goto out;
	}
	ln_fanout_signals();
	r = ln_run_init(run, spec, o->parallel, o->accept, o->n_accept, o->limit, o->n_limit,
			o->command, &err);
	if (r < 0) {
		/* an unknown name in --limit or --accept-replaced is -EINVAL */
		ln_notes_add(notes, LN_LOG_ERROR, "%s", err.buf);
		code = r == -EINVAL ? LN_EXIT_USAGE : LN_EXIT_FAILED;
		goto out;
	}
	run->purge = o->purge;
out:
	ln_buf_release(&err);
	return code;
}

int ln_run_start(struct ln_run *run, const struct ln_spec *spec, unsigned needs,
		 const struct ln_run_opts *o, struct ln_notes *notes)
{
	struct ln_secrets *secrets = NULL;
	struct ln_buf err = LN_BUF_INIT;
	int code = LN_EXIT_OK, r;

	if (needs & LN_NEED_FACTS)
		needs |= LN_NEED_SESSIONS;
	if (needs & LN_NEED_SECRETS)
		code = load_secrets(spec, &secrets, notes);
	if (code == LN_EXIT_OK && (needs & LN_NEED_SESSIONS))
		code = open_run(run, spec, o, notes);
	if (code != LN_EXIT_OK)
		goto out;
	run->secrets = secrets;
	secrets = NULL;
	if (!(needs & LN_NEED_FACTS))
		goto out;
	r = ln_facts_gather(run);
	if (r < 0) {
		ln_notes_add(notes, LN_LOG_ERROR, "cannot start workers: %s", ln_strerror(r));
		code = LN_EXIT_FAILED;
		goto out;
	}
	/* the last-known facts (facts --cached, a silent node's plan) */
	if (ln_state_save_facts(run, &err) < 0)
		ln_notes_add(notes, LN_LOG_WARN, "cannot record the facts: %s", err.buf);
out:
	ln_secrets_free(secrets);
	ln_buf_release(&err);
	return code;
}
