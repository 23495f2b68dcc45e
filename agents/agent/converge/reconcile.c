// SPDX-License-Identifier: MIT
/*
 * The plan, apply and teardown verbs: read the request, load the state,
 * run the parts in order (initiator removals, target removals, targets,
 * initiators, hostfile) and answer the change list. Ownership is recorded
 * before each create and saved at once, so a run stopped anywhere (the
 * failpoint) leaves nothing owned unrecorded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/core/budget.h"
#include "agents/agent/converge/parts.h"
#include "agents/agent/converge/reconcile.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/core/answer.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"

#define MAX_REQUEST (16u << 20)

/* The request: a session request's input, else stdin to its end. It may
 * carry secrets: in is made a secret buffer. */
static int read_request(const struct ln_agent *a, struct ln_buf *in, struct ln_buf *err)
{
	char chunk[65536];
	ssize_t n;
	int r = 0;

	ln_buf_init_secret(in, MAX_REQUEST);
	if (a->has_input) {
		if (ln_buf_add(in, a->input, a->input_len) < 0) {
			ln_buf_addf(err, "request: larger than %u bytes", MAX_REQUEST);
			return -E2BIG;
		}
		return 0;
	}
	for (;;) {
		n = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			ln_buf_addf(err, "cannot read the request: %s", strerror(-r));
			break;
		}
		if (n == 0)
			break;
		if (ln_buf_add(in, chunk, (size_t)n) < 0) {
			ln_buf_addf(err, "request: larger than %u bytes", MAX_REQUEST);
			r = -E2BIG;
			break;
		}
	}
	/* the request passed through the stack too */
	explicit_bzero(chunk, sizeof(chunk));
	return r;
}

static int finish(struct ln_converge *cv, const char *mode)
{
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *ans;
	int rc;

	if (!cv->plan) {
		ln_state_prune(&cv->st, cv->cluster);
		if (ln_state_save(cv->a, &cv->st, &err) < 0)
			ln_cv_report(cv, "change", "state", "/var/lib/llmnet/state.json", NULL, err.buf);
	}
	rc = cv->ch.n_error ? LN_AGENT_EXIT_PARTIAL : LN_AGENT_EXIT_OK;
	ans = ln_changes_answer(&cv->ch, mode, cv->cluster, cv->plan);
	if (cv->kept) {
		/* the subsystems a teardown left in place, and why: not converged */
		struct json_object *l = json_object_new_array();

		json_object_object_foreach(cv->kept, nqn, why) {
			struct json_object *o = json_object_new_object();

			ln_json_add_str(o, "nqn", nqn);
			ln_json_add_str(o, "reason", json_object_get_string(why));
			json_object_array_add(l, o);
		}
		if (json_object_array_length(l)) {
			rc = LN_AGENT_EXIT_PARTIAL;
			json_object_object_del(ans, "converged");
			ln_json_add_bool(ans, "converged", 0);
		}
		ln_json_add(ans, "kept", l);
	}
	if (ln_agent_emit(ans) < 0)
		rc = LN_AGENT_EXIT_INTERNAL;
	json_object_put(ans);
	ln_buf_release(&err);
	return rc;
}

/* One converge of a parsed request: the parts in order, then the answer
 * (mode names it); apply and restore alike. */
int ln_reconcile_converge(struct ln_agent *a, struct ln_request *rq, int plan, const char *mode)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_converge cv;
	int rc;

	memset(&cv, 0, sizeof(cv));
	if (ln_state_load(a, &cv.st, &err) < 0) {
		rc = ln_agent_fail("internal", err.buf, LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	cv.a = a;
	cv.rq = rq;
	cv.cluster = rq->cluster;
	cv.plan = plan;
	ln_changes_init(&cv.ch);
	ln_initiator_remove(&cv);
	ln_nvmet_remove(&cv);
	ln_tls_psk_remove(&cv);
	ln_modules_remove(&cv);
	ln_nvmet_apply(&cv);
	ln_initiator_apply(&cv);
	/* a restore never removes key store files: apply and teardown decide
	 * what the store holds */
	ln_keystore_apply(&cv, strcmp(mode, "restore") != 0);
	ln_hostfile_reconcile(&cv);
	/* a restore converges what its unit keeps, never the unit's own files:
	 * the pushed agent they copy may be gone (another cluster's purge) */
	if (strcmp(mode, "restore"))
		ln_persist_apply(&cv);
	rc = finish(&cv, mode);
out:
	ln_changes_release(&cv.ch);
	ln_state_release(&cv.st);
	ln_buf_release(&err);
	return rc;
}

static int converge(struct ln_agent *a, int argc, char **argv, int plan)
{
	struct ln_buf in = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_request rq;
	int rc;

	memset(&rq, 0, sizeof(rq));
	(void)argv;
	if (argc > 1) {
		rc = ln_agent_fail("usage", plan ? "usage: llmnet-agent plan < REQUEST"
						 : "usage: llmnet-agent apply < REQUEST",
				   LN_AGENT_EXIT_USAGE);
		goto out;
	}
	rc = read_request(a, &in, &err);
	if (rc == 0)
		rc = ln_request_parse(in.buf, in.len, &rq, &err);
	if (rc < 0) {
		rc = ln_agent_fail(rc == -LN_EPROTO ? "protocol" : "request", err.buf,
				   LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	rc = ln_reconcile_converge(a, &rq, plan, plan ? "plan" : "apply");
out:
	ln_request_release(&rq);
	ln_buf_release(&in);
	ln_buf_release(&err);
	return rc;
}

int ln_reconcile_plan_verb(struct ln_agent *a, int argc, char **argv)
{
	return converge(a, argc, argv, 1);
}

int ln_reconcile_apply_verb(struct ln_agent *a, int argc, char **argv)
{
	return converge(a, argc, argv, 0);
}

/*
 * A session's teardown request: { "keep": [NQN...], "force": [NQN...] },
 * the same lists as --keep and --force, with no bound on their length
 * (a node may export hundreds of subsystems). Strict: no other key, every
 * entry a valid NQN.
 */
static int read_keep_force(const struct ln_agent *a, struct json_object *keep,
			   struct json_object *force, struct ln_buf *err)
{
	static const char *const fields[] = { "keep", "force", NULL };
	struct json_object *req = NULL, *list, *into;
	struct ln_buf in = LN_BUF_INIT;
	size_t i, n;
	int rc, k;

	rc = read_request(a, &in, err);
	if (rc == 0)
		rc = ln_json_parse(in.buf, in.len, &req, err);
	if (rc == 0)
		rc = ln_json_check_keys(req, fields, "teardown request", err);
	for (k = 0; rc == 0 && fields[k]; k++) {
		into = k == 0 ? keep : force;
		rc = ln_json_get_arr(req, fields[k], 0, &list, err);
		if (rc == -ENOENT) {
			rc = 0;
			continue;
		}
		n = rc == 0 ? json_object_array_length(list) : 0;
		for (i = 0; i < n; i++) {
			const char *nqn = ln_nqn_at(list, i);

			if (!nqn) {
				ln_buf_addf(err, "teardown request: %s[%zu] is not a valid NQN",
					    fields[k], i);
				rc = -LN_EREQUEST;
				break;
			}
			json_object_object_add(into, nqn, NULL);
		}
	}
	json_object_put(req);
	ln_buf_release(&in);
	return rc < 0 ? -LN_EREQUEST : 0;
}

/* A teardown stopped before anything but the boot unit went: an owned
 * connection is reported as not disconnected (so the controller keeps its
 * target), and every owned subsystem as kept. */
static void stopped(struct ln_converge *cv)
{
	const char *why = "teardown stopped: the boot unit of this cluster could not be "
			  "removed (above), so nothing else was";

	struct json_object *objs = ln_state_objects(&cv->st, cv->cluster);
	size_t i, n = objs ? json_object_array_length(objs) : 0;

	for (i = 0; i < n; i++)
		if (!strcmp(ln_json_str_at(json_object_array_get_idx(objs, i), "kind") ?: "",
			    "nvme_connection")) {
			ln_cv_report(cv, "remove", "nvme_connection", "*", NULL, why);
			break;
		}
	ln_changes_warn(&cv->ch, "%s", why);
}

int ln_reconcile_teardown_verb(struct ln_agent *a, int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *names = NULL, *keep = json_object_new_object();
	struct json_object *force = json_object_new_object();
	const char *cluster = NULL;
	struct ln_converge cv;
	int i, rc;

	memset(&cv, 0, sizeof(cv));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--purge")) {
			cv.purge = 1;
		} else if (!strcmp(argv[i], "--plan")) {
			/* plan --destroy: what this teardown would remove, with
			 * the change gate closed as for the plan verb */
			cv.plan = 1;
			a->dry_run = 1;
		} else if (!strcmp(argv[i], "--cluster") && i + 1 < argc) {
			cluster = argv[++i];
			if (!ln_valid_name(cluster, 64)) {
				rc = ln_agent_fail("usage", "teardown: invalid cluster name",
						   LN_AGENT_EXIT_USAGE);
				goto out;
			}
		} else if ((!strcmp(argv[i], "--keep") || !strcmp(argv[i], "--force")) &&
			   i + 1 < argc) {
			if (!ln_valid_nqn(argv[i + 1])) {
				rc = ln_agent_fail("usage", "teardown: invalid NQN", LN_AGENT_EXIT_USAGE);
				goto out;
			}
			json_object_object_add(!strcmp(argv[i], "--keep") ? keep : force, argv[i + 1],
					       NULL);
			i++;
		} else {
			rc = ln_agent_fail("usage", "usage: llmnet-agent teardown [--cluster NAME] "
					   "[--purge] [--plan] [--keep NQN]... [--force NQN]...",
					   LN_AGENT_EXIT_USAGE);
			goto out;
		}
	}
	if (a->has_input && read_keep_force(a, keep, force, &err) < 0) {
		rc = ln_agent_fail("request", err.buf, LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	if (ln_state_load(a, &cv.st, &err) < 0) {
		rc = ln_agent_fail("internal", err.buf, LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	names = ln_state_clusters(&cv.st);
	if (!cluster) {
		if (json_object_array_length(names) > 1) {
			rc = ln_agent_fail("request",
					   "teardown: the state holds several clusters; name one "
					   "with --cluster", LN_AGENT_EXIT_REQUEST);
			goto out;
		}
		cluster = json_object_array_length(names)
				  ? json_object_get_string(json_object_array_get_idx(names, 0))
				  : "";
	}
	cv.a = a;
	cv.cluster = cluster;
	cv.teardown = 1;
	ln_changes_init(&cv.ch);
	/* the boot unit first: nothing brings back what the rest removes, and
	 * when it cannot go, nothing else does (a reboot would restore it) */
	if (ln_persist_remove(&cv) < 0) {
		stopped(&cv);
	} else {
		ln_initiator_remove(&cv);
		ln_nvmet_keep(&cv, keep, force);
		ln_nvmet_remove(&cv);
		ln_tls_psk_remove(&cv);
		ln_hostfile_reconcile(&cv);
		ln_keystore_wipe(&cv);
		ln_purge_files(&cv);
		ln_modules_remove(&cv);
	}
	rc = finish(&cv, "teardown");
out:
	json_object_put(names);
	json_object_put(keep);
	json_object_put(force);
	json_object_put(cv.kept);
	ln_changes_release(&cv.ch);
	ln_state_release(&cv.st);
	ln_buf_release(&err);
	return rc;
}
