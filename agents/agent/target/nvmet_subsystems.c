// SPDX-License-Identifier: MIT
/*
 * nvmet subsystems: created (serial first) or checked for ownership and
 * drift, and attr_allow_any_host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/kernel/fs.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/target/nvmet.h"
#include "common/json.h"
#include "common/log.h"

/* attr_serial as the kernel shows it: padded with spaces to 20 bytes. */
static void read_serial(struct ln_agent *a, const char *nqn, struct ln_buf *out)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), P_SUB "%s/attr_serial", nqn);
	ln_read_attr(a, p, out);
	while (out->len && out->buf[out->len - 1] == ' ')
		ln_buf_setlen(out, out->len - 1);
}

/*
 * Write t's serial. nvmet takes it until a host first identifies a
 * controller of the subsystem; after that it refuses (EINVAL) and keeps
 * the old one, which only a new subsystem (teardown, apply) replaces.
 */
static int write_serial(struct ln_converge *cv, const struct ln_req_target *t, struct ln_buf *err)
{
	char p[PATH_MAX];
	int rc;

	snprintf(p, sizeof(p), P_SUB "%s/attr_serial", t->nqn);
	rc = ln_fs_write_attr(cv->a, p, t->serial, err);
	if (rc == -EINVAL)
		ln_buf_addf(err, " (nvmet keeps a subsystem's serial once a host has connected to "
			    "it: tear the target down on this node and apply again)");
	if (rc == 0)
		rc = ln_nvmet_record_field(cv, "nvmet_subsystem", t->nqn, "serial", t->serial, err);
	return rc;
}

void ln_nvmet_apply_subsystem(struct ln_converge *cv, struct ln_req_target *t)
{
	struct ln_buf err = LN_BUF_INIT, cur = LN_BUF_INIT, det = LN_BUF_INIT;
	char p[PATH_MAX];
	const char *other;
	int rc = 0;

	snprintf(p, sizeof(p), P_SUB "%s", t->nqn);
	other = ln_state_other_owner(&cv->st, cv->cluster, "nvmet_subsystem", t->nqn);
	if (other) {
		ln_buf_addf(&err, "subsystem '%s' belongs to cluster '%s'", t->nqn, other);
		t->failed = 1;
		ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, NULL, err.buf);
		goto out;
	}
	if (!ln_is_dir(cv->a, p)) {
		/* the serial goes in before anything can link or identify it */
		if (t->serial)
			ln_buf_addf(&det, "serial %s", t->serial);
		if (!cv->plan) {
			rc = ln_cv_own(cv, "nvmet_subsystem", t->nqn);
			if (rc == 0)
				rc = ln_fs_mkdir(cv->a, p, &err);
			if (rc == 0 && t->serial)
				rc = write_serial(cv, t, &err);
		}
		ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, det.len ? det.buf : NULL,
			     rc < 0 ? err.buf : NULL);
		if (rc < 0)
			t->failed = 1;
	} else if (!ln_cv_owned(cv, "nvmet_subsystem", t->nqn)) {
		ln_buf_addf(&err, "subsystem '%s' exists and was not created by llmnet; "
			    "remove it or choose another NQN", t->nqn);
		t->failed = 1;
		ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, NULL, err.buf);
		goto out;
	} else if (t->serial && (read_serial(cv->a, t->nqn, &cur), strcmp(cur.buf, t->serial)) &&
		   ln_nvmet_ident_settable(cv, "nvmet_subsystem", t->nqn, "serial",
				  ln_nvmet_still_linked(cv->a, LN_NVMET "/ports", "subsystems", t->nqn))) {
		/* drift: set by hand, or made by an agent without stable identity */
		ln_buf_addf(&det, "attr_serial '%s' -> '%s'", cur.buf, t->serial);
		if (!cv->plan)
			rc = write_serial(cv, t, &err);
		ln_cv_report(cv, "change", "nvmet_subsystem", t->nqn, det.buf,
			     rc < 0 ? err.buf : NULL);
		rc = 0;	/* exported already: its other objects still converge */
	} else {
		ln_cv_report(cv, "ok", "nvmet_subsystem", t->nqn, NULL, NULL);
	}
	if (t->failed)
		goto out;
	ln_buf_reset(&err);
	/* attr_allow_any_host: 1 only for "any" */
	snprintf(p, sizeof(p), P_SUB "%s/attr_allow_any_host", t->nqn);
	if (!ln_nvmet_read_eq(cv->a, p, t->any ? "1" : "0") &&
	    (ln_path_exists(cv->a, p) || t->any)) {
		if (!cv->plan)
			rc = ln_fs_write_attr(cv->a, p, t->any ? "1" : "0", &err);
		ln_cv_report(cv, "change", "nvmet_allow_any_host", t->nqn,
			     t->any ? "0 -> 1 (hosts: any)" : "1 -> 0", rc < 0 ? err.buf : NULL);
		if (rc < 0)
			t->failed = 1;
	}
out:
	ln_buf_release_all(&err, &cur, &det);
}
