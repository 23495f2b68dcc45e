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

#include "agents/agent/reconcile.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"

#define MAX_REQUEST (16u << 20)

int ln_rc_own(struct ln_rc *r, const char *kind, const char *id)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc;

	if (ln_state_find(&r->st, r->cluster, kind, id))
		return 0;
	ln_state_add(&r->st, r->cluster, kind, id);
	rc = ln_state_save(r->a, &r->st, &err);
	if (rc < 0)
		ln_error("%s", err.buf);
	ln_buf_release(&err);
	return rc;
}

int ln_rc_owned(struct ln_rc *r, const char *kind, const char *id)
{
	return ln_state_find(&r->st, r->cluster, kind, id) != NULL;
}

void ln_rc_disown(struct ln_rc *r, const char *kind, const char *id)
{
	ln_state_remove(&r->st, r->cluster, kind, id);
}

void ln_rc_report(struct ln_rc *r, const char *action, const char *kind, const char *id,
		  const char *detail, const char *err)
{
	ln_changes_add(&r->ch, action, kind, id, detail, err && *err ? err : (err ? "failed" : NULL));
}

int ln_rc_mkdirs(struct ln_rc *r, const char *dir, struct ln_buf *err)
{
	char p[PATH_MAX];
	size_t i, n = strlen(dir);
	int rc;

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (!ln_path_exists(r->a, p)) {
			rc = ln_rc_own(r, "directory", p);
			if (rc == 0)
				rc = ln_fs_mkdir(r->a, p, err);
			if (rc < 0)
				return rc;
		}
		p[i] = dir[i];
	}
	return 0;
}

static int read_stdin(struct ln_buf *in, struct ln_buf *err)
{
	char chunk[65536];
	ssize_t n;

	ln_buf_init(in, MAX_REQUEST);
	for (;;) {
		n = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ln_buf_addf(err, "cannot read the request: %s", strerror(errno));
			return -errno;
		}
		if (n == 0)
			return 0;
		if (ln_buf_add(in, chunk, (size_t)n) < 0) {
			ln_buf_addf(err, "request: larger than %u bytes", MAX_REQUEST);
			return -E2BIG;
		}
	}
}

static int finish(struct ln_rc *r, const char *mode)
{
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *ans;
	int rc;

	if (!r->plan) {
		ln_state_prune(&r->st, r->cluster);
		if (ln_state_save(r->a, &r->st, &err) < 0)
			ln_rc_report(r, "change", "state", "/var/lib/llmnet/state.json", NULL, err.buf);
	}
	rc = r->ch.n_error ? LN_AGENT_EXIT_PARTIAL : LN_AGENT_EXIT_OK;
	ans = ln_changes_answer(&r->ch, mode, r->cluster, r->plan);
	if (ln_agent_emit(ans) < 0)
		rc = LN_AGENT_EXIT_INTERNAL;
	json_object_put(ans);
	ln_buf_release(&err);
	return rc;
}

static int converge(struct ln_agent *a, int argc, char **argv, int plan)
{
	struct ln_buf in = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_request rq;
	struct ln_rc r;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(&rq, 0, sizeof(rq));
	(void)argv;
	if (argc > 1) {
		rc = ln_agent_fail("usage", plan ? "usage: llmnet-agent plan < REQUEST"
						 : "usage: llmnet-agent apply < REQUEST",
				   LN_AGENT_EXIT_USAGE);
		goto out;
	}
	rc = read_stdin(&in, &err);
	if (rc == 0)
		rc = ln_request_parse(in.buf, in.len, &rq, &err);
	if (rc < 0) {
		rc = ln_agent_fail(rc == -LN_EPROTO ? "protocol" : "request", err.buf,
				   LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	if (ln_state_load(a, &r.st, &err) < 0) {
		rc = ln_agent_fail("internal", err.buf, LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	r.a = a;
	r.rq = &rq;
	r.cluster = rq.cluster;
	r.plan = plan;
	ln_changes_init(&r.ch);
	ln_initiator_remove(&r);
	ln_nvmet_remove(&r);
	ln_modules_remove(&r);
	ln_nvmet_apply(&r);
	ln_initiator_apply(&r);
	ln_hostfile_reconcile(&r);
	rc = finish(&r, plan ? "plan" : "apply");
out:
	ln_changes_release(&r.ch);
	ln_state_release(&r.st);
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

int ln_reconcile_teardown_verb(struct ln_agent *a, int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *names = NULL;
	const char *cluster = NULL;
	struct ln_rc r;
	int i, rc;

	memset(&r, 0, sizeof(r));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--purge")) {
			r.purge = 1;
		} else if (!strcmp(argv[i], "--cluster") && i + 1 < argc) {
			cluster = argv[++i];
			if (!ln_valid_name(cluster, 64))
				return ln_agent_fail("usage", "teardown: invalid cluster name",
						     LN_AGENT_EXIT_USAGE);
		} else {
			return ln_agent_fail("usage",
					     "usage: llmnet-agent teardown [--cluster NAME] [--purge]",
					     LN_AGENT_EXIT_USAGE);
		}
	}
	if (ln_state_load(a, &r.st, &err) < 0) {
		rc = ln_agent_fail("internal", err.buf, LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	names = ln_state_clusters(&r.st);
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
	r.a = a;
	r.cluster = cluster;
	r.teardown = 1;
	ln_changes_init(&r.ch);
	ln_initiator_remove(&r);
	ln_nvmet_remove(&r);
	ln_hostfile_reconcile(&r);
	ln_purge_files(&r);
	ln_modules_remove(&r);
	rc = finish(&r, "teardown");
out:
	json_object_put(names);
	ln_changes_release(&r.ch);
	ln_state_release(&r.st);
	ln_buf_release(&err);
	return rc;
}
