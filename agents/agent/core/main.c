// SPDX-License-Identifier: MIT
/*
 * llmnet-agent: the static program that converges one node. The verb table
 * marks each verb read-only or mutating: mutating verbs take the node lock,
 * read-only ones run with the change gate closed (ln_agent_change refuses),
 * so `plan` and `validate` can never change a node by mistake. Verbs that
 * change the node or start programs (apply, teardown, run) are refused
 * without a time budget (--budget-ms, budget.h), so no request outlives
 * the controller step that sent it. docs/agent-protocol.md is the contract.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/answer.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/initiator/discovery.h"
#include "agents/agent/initiator/probe_refused.h"
#include "agents/agent/converge/reconcile.h"
#include "agents/agent/run/counters.h"
#include "agents/agent/run/exec.h"
#include "agents/agent/run/facts.h"
#include "agents/agent/core/identity.h"
#include "agents/agent/core/session.h"
#include "agents/agent/converge/state.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/log.h"
#include "common/parse-options.h"
#include "common/util.h"

struct verb {
	const char *name;
	int mutating;
	int budgeted;		/* refused without --budget-ms */
	int own_lock;		/* mutating, takes the node lock itself (restore: per try) */
	int (*fn)(struct ln_agent *a, int argc, char **argv);
};

static int verb_version(struct ln_agent *a, int argc, char **argv);
static int verb_facts(struct ln_agent *a, int argc, char **argv);

static const struct verb verbs[] = {
	{ LN_VERB_VERSION, 0, 0, 0, verb_version },
	{ LN_VERB_FACTS, 0, 0, 0, verb_facts },
	{ LN_VERB_PLAN, 0, 0, 0, ln_reconcile_plan_verb },
	{ LN_VERB_APPLY, 1, 1, 0, ln_reconcile_apply_verb },
	{ LN_VERB_TEARDOWN, 1, 1, 0, ln_reconcile_teardown_verb },
	{ LN_VERB_RUN, 0, 1, 0, ln_exec_verb },
	{ LN_VERB_RESTORE, 1, 1, 1, ln_reconcile_restore_verb },
};

#define N_VERBS (ARRAY_SIZE(verbs))

/* The controller compares this with its own copy's digest and pushes only
 * on difference; the sidecar spares hashing 5 MB on every call. */
static void add_self_sha256(struct json_object *o)
{
	const char *source = NULL;
	char hex[65];

	if (ln_identity_sha256(hex, &source) == 0) {
		ln_json_add_str(o, "sha256", hex);
		ln_json_add_str(o, "sha256_source", source);
	}
}

static int verb_version(struct ln_agent *a, int argc, char **argv)
{
	struct json_object *o = json_object_new_object(), *v = json_object_new_array(), *p;
	const char *const *probe;
	size_t i;
	int rc;

	(void)argv;
	if (argc > 1) {
		json_object_put(o);
		json_object_put(v);
		return ln_agent_fail("usage", "usage: llmnet-agent version", LN_AGENT_EXIT_USAGE);
	}
	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "agent", "llmnet-agent");
	ln_json_add_str(o, "version", LN_VERSION);
	ln_json_add_str(o, "root", a->fixture ? a->root : "/");
	add_self_sha256(o);
	for (i = 0; i < N_VERBS; i++) {
		struct json_object *x = json_object_new_object();

		ln_json_add_str(x, "name", verbs[i].name);
		ln_json_add_bool(x, "mutating", verbs[i].mutating);
		json_object_array_add(v, x);
	}
	ln_json_add(o, "verbs", v);
	p = json_object_new_array();
	for (probe = ln_exec_probes(); *probe; probe++)
		json_object_array_add(p, json_object_new_string(*probe));
	ln_json_add(o, "probes", p);
	rc = ln_agent_emit(o) < 0 ? LN_AGENT_EXIT_INTERNAL : LN_AGENT_EXIT_OK;
	json_object_put(o);
	return rc;
}

/* `facts --refused PLACE... --timeout S`: the attempts the access stage
 * asks for, each bounded (probe_refused.h); argv[1] is "--refused". */
static int facts_refused(struct ln_agent *a, int argc, char **argv)
{
	struct ln_refused_place places[LN_FACTS_REFUSED_MAX];
	char *copies[LN_FACTS_REFUSED_MAX], *end;
	struct json_object *o = NULL;
	size_t n = 0;
	long t = 0;
	int rc = 0, i;

	for (i = 1; !rc && i < argc; i += 2) {
		char *copy = i + 1 < argc ? strdup(argv[i + 1]) : NULL;

		if (copy && !t && !strcmp(argv[i], "--timeout")) {
			errno = 0;
			t = strtol(copy, &end, 10);
			if (errno || *end || t < 1 || t > LN_FACTS_REFUSED_TIMEOUT_MAX)
				rc = -1;
			free(copy);
		} else if (strcmp(argv[i], "--refused") || !copy || n >= LN_FACTS_REFUSED_MAX ||
			   ln_refused_parse_place(copy, &places[n]) < 0) {
			free(copy);
			rc = -1;
		} else {
			copies[n++] = copy;	/* places[] points into it */
		}
	}
	if (rc || !t)
		rc = ln_agent_fail("usage", "usage: llmnet-agent facts --refused TRANSPORT,"
				   "ADDRESS,SERVICE,NQN,self|HOSTNQN,none|wrong... --timeout S "
				   "(at most 16, 1-600 s; never wrong over rdma)",
				   LN_AGENT_EXIT_USAGE);
	/* a connect that the target accepts makes a controller: the bound
	 * and its cancellation must hold, also when the caller goes */
	else if (!ln_budget_active())
		rc = ln_agent_fail("usage", "facts --refused connects and needs a time budget: "
				   "--budget-ms MS", LN_AGENT_EXIT_USAGE);
	else if (ln_refused_facts(a, places, n, (unsigned)t, &o) < 0)
		rc = ln_agent_fail("internal", "facts --refused failed", LN_AGENT_EXIT_INTERNAL);
	else
		rc = ln_agent_emit(o) < 0 ? LN_AGENT_EXIT_INTERNAL : LN_AGENT_EXIT_OK;
	json_object_put(o);
	while (n)
		free(copies[--n]);
	return rc;
}

static int verb_facts(struct ln_agent *a, int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *o = NULL;
	char *ports[LN_FACTS_COUNTER_PORTS_MAX], *copies[LN_FACTS_DISCOVERY_MAX], dev[64];
	struct ln_conn places[LN_FACTS_DISCOVERY_MAX];	/* pointing into copies */
	size_t np = 0, nd = 0;
	unsigned port;
	int rc = 0, i;

	if (argc > 1 && !strcmp(argv[1], "--refused"))
		return facts_refused(a, argc, argv);
	for (i = 1; i < argc && !rc; i += 2) {
		char *copy = i + 1 < argc ? strdup(argv[i + 1]) : NULL;
		int ok = 0;

		/* one kind per request: --counters or --discovery */
		if (!strcmp(argv[i], "--counters") && copy && !nd &&
		    np < LN_FACTS_COUNTER_PORTS_MAX) {
			ok = ln_counters_parse_port(copy, dev, sizeof(dev), &port) == 0;
			if (ok)
				ports[np++] = argv[i + 1];
		} else if (!strcmp(argv[i], "--discovery") && copy && !np &&
			   nd < LN_FACTS_DISCOVERY_MAX &&
			   ln_disc_parse_place(copy, &places[nd]) == 0) {
			copies[nd++] = copy;	/* parsed once: places[] points into it */
			continue;
		}
		free(copy);
		if (!ok)
			rc = ln_agent_fail("usage", "usage: llmnet-agent facts "
					   "[--counters DEVICE/PORT]... | "
					   "[--discovery TRANSPORT,ADDRESS,SERVICE,NQN]... "
					   "(at most 64)", LN_AGENT_EXIT_USAGE);
	}
	/* a discovery controller is connected and must be gone within a bound,
	 * also when the caller goes (the budget's signal handlers) */
	if (!rc && nd && !ln_budget_active())
		rc = ln_agent_fail("usage", "facts --discovery connects a discovery controller "
				   "and needs a time budget: --budget-ms MS",
				   LN_AGENT_EXIT_USAGE);
	if (rc)
		goto out;
	if (np)
		rc = ln_counters_collect(a, ports, np, &o);
	else if (nd)
		rc = ln_disc_facts(a, places, nd, &o);
	else
		rc = ln_facts_collect(a, &o, &err);
	if (rc < 0)
		rc = ln_agent_fail("internal", err.buf, LN_AGENT_EXIT_INTERNAL);
	else
		rc = ln_agent_emit(o) < 0 ? LN_AGENT_EXIT_INTERNAL : LN_AGENT_EXIT_OK;
	json_object_put(o);
out:
	while (nd)
		free(copies[--nd]);
	ln_buf_release(&err);
	return rc;
}

/* The agent's own options, before the verb (parse-options.h: the table
 * cmd/ uses too). A bad --budget-ms is answered by its callback. */
static const char *opt_root;
static int opt_verbose, opt_answered;

static int set_budget(const struct ln_option *opt, const char *v)
{
	char *end;
	long ms;

	(void)opt;
	errno = 0;
	ms = strtol(v, &end, 10);
	if (errno || *end || ms < 1 || ms > LN_BUDGET_MAX_MS) {
		opt_answered = ln_agent_fail("usage", "--budget-ms must be 1-86400000 milliseconds",
					     LN_AGENT_EXIT_USAGE);
		return -1;
	}
	/* the budget is measured from here, before the request is read */
	ln_budget_start(ms);
	return 0;
}

static int set_quiet(const struct ln_option *opt, const char *v)
{
	(void)opt;
	(void)v;
	opt_verbose = 0;
	ln_log_threshold = LN_LOG_ERROR;
	return 0;
}

/* -v: verbose; -vv (or -v -v): debug. */
static int set_verbose(const struct ln_option *opt, const char *v)
{
	(void)opt;
	(void)v;
	ln_log_threshold = opt_verbose++ ? LN_LOG_DEBUG : LN_LOG_VERBOSE;
	return 0;
}

static int set_trace(const struct ln_option *opt, const char *v)
{
	(void)opt;
	return ln_log_set_trace(v) < 0 ? -1 : 0;
}

static const struct ln_option agent_options[] = {
	LN_OPT_STRING("root", &opt_root, "DIR", "the fixture tree to act on, not the node"),
	LN_OPT_CALLBACK(0, "budget-ms", "MS", "the request's time budget", 0, NULL, set_budget),
	LN_OPT_CALLBACK('q', NULL, NULL, "errors only", LN_OPT_NOARG, NULL, set_quiet),
	LN_OPT_CALLBACK('v', NULL, NULL, "more detail (-vv: debug)", LN_OPT_NOARG, NULL,
			set_verbose),
	LN_OPT_CALLBACK(0, "trace", "AREAS", "trace areas", LN_OPT_EQ_ONLY, NULL, set_trace),
	LN_OPT_END(),
};

static const struct ln_opt_cmd agent_cmd = {
	"llmnet-agent [--root DIR] [--budget-ms MS] [-q|-v|-vv] [--trace=AREAS] "
	"session|version|facts|plan|apply|teardown|run|restore ...",
	NULL,
	agent_options,
};

static int usage(void)
{
	struct ln_buf msg = LN_BUF_INIT;
	int rc;

	ln_buf_addf(&msg, "usage: %s", agent_cmd.usage);
	rc = ln_agent_fail("usage", msg.buf, LN_AGENT_EXIT_USAGE);
	ln_buf_release(&msg);
	return rc;
}

/* One verb, one-shot or a session's request: read-only verbs run with the
 * change gate closed, mutating ones under the node lock. */
static int run_verb(struct ln_agent *a, int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	const struct verb *v = NULL;
	int rc, lock = -1;
	size_t k;

	for (k = 0; k < N_VERBS; k++)
		if (!strcmp(verbs[k].name, argv[0]))
			v = &verbs[k];
	if (!v) {
		ln_buf_addf(&err, "unknown verb '%s' (version, facts, plan, apply, teardown, run, restore)",
			    argv[0]);
		rc = ln_agent_fail("usage", err.buf, LN_AGENT_EXIT_USAGE);
		goto out;
	}
	if (v->budgeted && !ln_budget_active()) {
		ln_buf_addf(&err, "%s: refusing a request without a time budget (--budget-ms MS), "
			    "in a session budget_ms: it could outlive the controller that sent it", v->name);
		rc = ln_agent_fail("request", err.buf, LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	a->dry_run = !v->mutating;
	if (v->mutating && !v->own_lock) {
		lock = ln_lock_acquire(a, &err);
		if (lock == -LN_ETIMEOUT) {
			rc = ln_agent_fail("timeout", err.buf, LN_AGENT_EXIT_TIMEOUT);
			goto out;
		}
		if (lock < 0) {
			rc = ln_agent_fail(lock == -LN_ELOCKED ? "locked" : "internal", err.buf,
					   lock == -LN_ELOCKED ? LN_AGENT_EXIT_LOCKED
							       : LN_AGENT_EXIT_INTERNAL);
			goto out;
		}
	}
	rc = v->fn(a, argc, argv);
out:
	ln_lock_release(lock);
	ln_buf_release(&err);
	return rc;
}

/* `seal SHA256`, run by the push right after the rename: see identity.h. */
static int seal(int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	int r;

	if (argc != 2 || strlen(argv[1]) != 64)
		return usage();
	r = ln_identity_seal(argv[1], &err);
	if (r < 0)
		ln_error("cannot seal the agent: %s", err.buf);
	ln_buf_release(&err);
	return r < 0 ? LN_AGENT_EXIT_INTERNAL : LN_AGENT_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_agent a;
	int rc;

	/* the options stop at the verb: what follows is the verb's */
	argc = ln_parse_options(&agent_cmd, argc, argv, LN_PARSE_STOP_AT_ARG);
	if (argc < 0)
		return opt_answered ? opt_answered : usage();
	if (argc < 2 || argv[1][0] == '-')
		return usage();
	/* what a command leaves behind comes back to the agent (exec.c) */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (!strcmp(argv[1], LN_VERB_SEAL))
		return seal(argc - 1, argv + 1);
	if (ln_agent_init(&a, opt_root, &err) < 0) {
		rc = ln_agent_fail("usage", err.buf, LN_AGENT_EXIT_USAGE);
		goto out;
	}
	if (!strcmp(argv[1], LN_VERB_SESSION))
		/* each request carries its own budget (budget_ms), not the session */
		rc = argc == 2 && !ln_budget_active() ? ln_session_serve(&a, run_verb) : usage();
	else
		rc = run_verb(&a, argc - 1, argv + 1);
out:
	ln_buf_release(&err);
	return rc;
}
