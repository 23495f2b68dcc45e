// SPDX-License-Identifier: MIT
/*
 * nvmet hosts and their authentication: the host entries the targets
 * allow (each once), their DH-HMAC-CHAP keys, and each subsystem's
 * allowed_hosts links.
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

/* Whether subsystem nqn is one the request converges (its own target). */
static int in_request(const struct ln_converge *cv, const char *nqn)
{
	size_t i;

	for (i = 0; i < cv->rq->ntargets; i++)
		if (!strcmp(cv->rq->targets[i].nqn, nqn))
			return 1;
	return 0;
}

/* Whether host entry dir holds exactly these settings: the secret (""
 * for none), and for a keyed entry the hash, group and controller secret. */
static int entry_is(struct ln_converge *cv, const char *dir, const char *key, const char *hash,
		    const char *group, const char *ctrl)
{
	char p[PATH_MAX];
	const char *attr[] = { "dhchap_key", "dhchap_hash", "dhchap_dhgroup", "dhchap_ctrl_key" };
	const char *want[] = { key, hash, group, ctrl ? ctrl : "" };
	size_t i, n = *key ? 4 : 1;

	if (!*key) {
		snprintf(p, sizeof(p), "%s/dhchap_key", dir);
		if (!ln_path_exists(cv->a, p))
			return 1;	/* no authentication in this kernel: unkeyed */
	}
	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, attr[i]);
		if (!ln_nvmet_read_eq(cv->a, p, want[i]))
			return 0;
	}
	return 1;
}

/*
 * nvmet authenticates per host entry, shared by every subsystem of the
 * node: an entry another cluster's subsystem (or one llmnet did not make)
 * allows is used only when it already holds the settings this target
 * wants, so neither side's initiators are locked out or let in unkeyed.
 * 0, or -EEXIST naming that subsystem and who made it (never a secret).
 */
static int shared_entry_check(struct ln_converge *cv, const char *h, const char *key,
			      const char *hash, const char *group, const char *ctrl,
			      struct ln_buf *err)
{
	char dir[PATH_MAX], p[PATH_MAX], who[200];
	char **subs = NULL;
	const char *other;
	size_t n = 0, i;
	int rc = 0;

	snprintf(dir, sizeof(dir), P_HOST "%s", h);
	if (!ln_is_dir(cv->a, dir) || entry_is(cv, dir, key, hash, group, ctrl))
		return 0;
	ln_list_dir(cv->a, P_SUB, &subs, &n);
	for (i = 0; rc == 0 && i < n; i++) {
		snprintf(p, sizeof(p), P_SUB "%s/allowed_hosts/%s", subs[i], h);
		if (in_request(cv, subs[i]) || ln_cv_owned(cv, "nvmet_subsystem", subs[i]) ||
		    !ln_is_link(cv->a, p))
			continue;
		other = ln_state_other_owner(&cv->st, cv->cluster, "nvmet_subsystem", subs[i]);
		if (other)
			snprintf(who, sizeof(who), "cluster '%s'", other);
		else
			snprintf(who, sizeof(who), "a subsystem llmnet did not make");
		ln_buf_addf(err, "host entry '%s' is allowed by %s ('%s') with other DH-HMAC-CHAP "
			    "settings (%s there); nvmet keeps one entry per host and node, shared "
			    "by every subsystem: give both the same settings or use another host",
			    h, who, subs[i], entry_is(cv, dir, "", NULL, NULL, NULL) ? "unkeyed" :
			    "keyed");
		rc = -EEXIST;
	}
	ln_names_free(subs, n);
	return rc;
}

/* Set one attribute of a host entry when it differs; *changed is set. */
static int set_host_attr(struct ln_converge *cv, const char *dir, const char *attr,
			 const char *want, int *changed, struct ln_buf *err)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, attr);
	if (ln_nvmet_read_eq(cv->a, p, want))
		return 0;
	*changed = 1;
	return cv->plan ? 0 : ln_fs_write_attr(cv->a, p, want, err);
}

/* 0 when host j of target t may be used as t wants it, else negative with
 * err: its existing entry is keyed by another cluster with another secret,
 * or shared with a subsystem under other DH-HMAC-CHAP settings. Reads only. */
static int host_refused(struct ln_converge *cv, const struct ln_req_target *t, size_t j,
			struct ln_buf *err)
{
	const char *h = t->hosts[j], *other;
	char p[PATH_MAX];

	if (!t->dh_hash)
		return shared_entry_check(cv, h, "", NULL, NULL, NULL, err);
	snprintf(p, sizeof(p), P_HOST "%s/dhchap_key", h);
	other = ln_state_other_owner(&cv->st, cv->cluster, "nvmet_host_key", h);
	if (other && ln_path_exists(cv->a, p) && !ln_nvmet_read_eq(cv->a, p, t->keys[j].key)) {
		ln_buf_addf(err, "host entry '%s' is keyed by cluster '%s' with another secret; "
			    "nvmet keeps one per host and node", h, other);
		return -EEXIST;
	}
	return shared_entry_check(cv, h, t->keys[j].key, t->dh_hash, t->dh_group,
				  t->keys[j].ctrl_key, err);
}

/*
 * Key host entry h for target t (its keys[j]): hash, group, then the
 * secrets. The entry is shared by every subsystem of the node, so one that
 * another cluster keyed is used only with the same secret. The kernel
 * shows the secret it holds; it is compared, never reported: details and
 * errors name the attribute only. 0 or negative with err.
 */
static int key_host(struct ln_converge *cv, const struct ln_req_target *t, size_t j,
		    struct ln_buf *err)
{
	const struct ln_req_key *k = &t->keys[j];
	const char *h = t->hosts[j];
	char dir[PATH_MAX], p[PATH_MAX], det[160];
	int rc = 0, changed = 0, fresh;

	snprintf(dir, sizeof(dir), P_HOST "%s", h);
	snprintf(det, sizeof(det), "%s, dhgroup %s%s", t->dh_hash, t->dh_group,
		 k->ctrl_key ? ", bidirectional" : "");
	if (!ln_is_dir(cv->a, dir)) {
		/* plan: the host is still to be created; checked at apply */
		ln_cv_report(cv, "create", "nvmet_host_key", h, det, NULL);
		return 0;
	}
	snprintf(p, sizeof(p), "%s/dhchap_key", dir);
	if (!ln_path_exists(cv->a, p)) {
		ln_buf_addf(err, "cannot export '%s' with DH-HMAC-CHAP: this kernel's nvmet has no "
			    "authentication (no 'dhchap_key' on host entries; Debian's 6.1 is built "
			    "without NVME_TARGET_AUTH); the target is not exported", t->nqn);
		return -EOPNOTSUPP;
	}
	fresh = ln_nvmet_read_eq(cv->a, p, "");
	rc = host_refused(cv, t, j, err);
	if (rc < 0) {
		ln_cv_report(cv, "create", "nvmet_host_key", h, NULL, err->buf);
		return rc;
	}
	if (!cv->plan && !ln_cv_owned(cv, "nvmet_host_key", h))
		rc = ln_cv_own(cv, "nvmet_host_key", h);
	if (rc == 0)
		rc = set_host_attr(cv, dir, "dhchap_hash", t->dh_hash, &changed, err);
	if (rc == 0)
		rc = set_host_attr(cv, dir, "dhchap_dhgroup", t->dh_group, &changed, err);
	if (rc == 0)
		rc = set_host_attr(cv, dir, "dhchap_key", k->key, &changed, err);
	/* one-way: the kernel cannot clear a controller secret once set */
	if (rc == 0 && k->ctrl_key)
		rc = set_host_attr(cv, dir, "dhchap_ctrl_key", k->ctrl_key, &changed, err);
	else if (rc == 0 && (snprintf(p, sizeof(p), "%s/dhchap_ctrl_key", dir),
			     !ln_nvmet_read_eq(cv->a, p, ""))) {
		ln_buf_addf(err, "host entry '%s' holds a controller secret (bidirectional) the "
			    "request no longer wants, and nvmet cannot clear one in place: "
			    "tear the target down and apply again", h);
		rc = -EBUSY;
	}
	ln_cv_report(cv, !changed ? "ok" : fresh ? "create" : "change", "nvmet_host_key", h,
		     changed ? det : NULL, rc < 0 ? err->buf : NULL);
	return rc;
}

/* Before any host entry is created or keyed: a target one of whose hosts
 * is refused (host_refused) fails now, so that its refusal leaves no new
 * entry, and no key, of its other hosts behind. */
void ln_nvmet_check_hosts(struct ln_converge *cv)
{
	struct ln_buf err = LN_BUF_INIT;
	size_t i, j;

	for (i = 0; i < cv->rq->ntargets; i++) {
		struct ln_req_target *t = &cv->rq->targets[i];

		for (j = 0; !t->failed && j < t->nhosts; j++) {
			ln_buf_reset(&err);
			if (host_refused(cv, t, j, &err) < 0) {
				ln_cv_report(cv, "create", t->dh_hash ? "nvmet_host_key" : "nvmet_host",
					     t->hosts[j], NULL, err.buf);
				t->failed = 1;
			}
		}
	}
	ln_buf_release(&err);
}

/* Key the hosts of target t, or check that an unkeyed one's shared entries
 * are unkeyed; marks t failed when that is impossible. */
void ln_nvmet_apply_dhchap(struct ln_converge *cv, struct ln_req_target *t)
{
	struct ln_buf err = LN_BUF_INIT;
	size_t j;
	int rc = 0;

	if (t->failed)
		return;
	for (j = 0; rc == 0 && j < t->nhosts; j++) {
		if (t->dh_hash)
			rc = key_host(cv, t, j, &err);
		else if ((rc = shared_entry_check(cv, t->hosts[j], "", NULL, NULL, NULL, &err)) < 0)
			ln_cv_report(cv, "create", "nvmet_host", t->hosts[j], NULL, err.buf);
	}
	if (rc < 0) {
		t->failed = 1;
		if (rc == -EOPNOTSUPP)
			ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, "not exported",
				     err.buf);
	}
	ln_buf_release(&err);
}

/* The nvmet hosts the targets allow, each once. */
void ln_nvmet_apply_hosts(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	struct json_object *seen = json_object_new_object();
	char p[PATH_MAX];
	size_t i, j;

	for (i = 0; i < rq->ntargets; i++) {
		for (j = 0; !rq->targets[i].failed && j < rq->targets[i].nhosts; j++) {
			const char *h = rq->targets[i].hosts[j];

			if (json_object_object_get_ex(seen, h, NULL))
				continue;
			json_object_object_add(seen, h, NULL);
			snprintf(p, sizeof(p), P_HOST "%s", h);
			if (ln_is_dir(cv->a, p))
				ln_cv_report(cv, "ok", "nvmet_host", h, NULL, NULL);
			else
				ln_nvmet_create_dir(cv, "nvmet_host", h, p, NULL);
		}
	}
	json_object_put(seen);
}

/* Each subsystem's allowed_hosts links; a failed link fails its target. */
void ln_nvmet_apply_allowed_hosts(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	char p[PATH_MAX], t2[PATH_MAX], id[1024];
	size_t i, j;

	for (i = 0; i < rq->ntargets; i++) {
		struct ln_req_target *t = &rq->targets[i];

		for (j = 0; !t->failed && j < t->nhosts; j++) {
			snprintf(id, sizeof(id), "%s/%s", t->nqn, t->hosts[j]);
			snprintf(p, sizeof(p), P_SUB "%s/allowed_hosts/%s", t->nqn, t->hosts[j]);
			snprintf(t2, sizeof(t2), P_HOST "%s", t->hosts[j]);
			if (ln_is_link(cv->a, p))
				ln_cv_report(cv, "ok", "nvmet_allowed_host", id, NULL, NULL);
			else if (ln_nvmet_create_link(cv, "nvmet_allowed_host", id, t2, p, NULL) < 0)
				t->failed = 1;
		}
	}
}
