// SPDX-License-Identifier: MIT
/*
 * The TLS PSKs a converge puts in the kernel's .nvme keyring: one per
 * (host NQN, subsystem NQN), on a target for each host of a target with
 * tls, on an initiator for each connect with tls. The kernel's key cannot
 * be read back (only its possessor reads a "psk" key), so the state keeps
 * a fingerprint of it (16 hex digits of SHA-256, as the controller's
 * applied.json does for secrets): the same fingerprint and the identity
 * still in /proc/keys is "ok", anything else re-inserts it. A key this
 * cluster inserted and no longer wants is removed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agents/agent/converge/converge.h"
#include "agents/agent/converge/parts.h"
#include "agents/agent/core/digest.h"
#include "agents/agent/initiator/hostid.h"
#include "agents/agent/kernel/tlspsk.h"
#include "common/json.h"

#define KIND "tls_psk"

/* 1 when /proc/keys lists a psk key with this identity. */
static int keyring_has(const struct ln_agent *a, const char *identity)
{
	return ln_proc_key_serial(a, "psk", identity) != 0;
}

static void fingerprint(const unsigned char *key, size_t len, char out[17])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[LN_SHA256_LEN];
	size_t i;

	ln_sha256(key, len, md);
	for (i = 0; i < 8; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[16] = '\0';
	explicit_bzero(md, sizeof(md));
}

int ln_tls_psk_apply(struct ln_converge *cv, const char *hostnqn, const char *subnqn,
		     const char *psk)
{
	char identity[LN_TLS_IDENTITY_MAX], fp[17];
	unsigned char key[LN_TLS_KEY_MAX];
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *rec;
	const char *have, *other;
	size_t len = 0;
	int rc, present;

	rc = ln_tls_psk_derive(psk, hostnqn, subnqn, identity, sizeof(identity), key, &len, &err);
	if (rc < 0) {
		ln_cv_report(cv, "create", KIND, subnqn, NULL, err.buf);
		goto out;
	}
	fingerprint(key, len, fp);
	rec = ln_state_find(&cv->st, cv->cluster, KIND, identity);
	have = rec ? ln_json_str_at(rec, "fp") : NULL;
	present = keyring_has(cv->a, identity);
	other = ln_state_other_owner(&cv->st, cv->cluster, KIND, identity);
	if (other) {
		/* the kernel keeps one key per identity: two clusters cannot
		 * both own it */
		ln_buf_addf(&err, "the TLS PSK '%s' belongs to cluster '%s' on this node; "
			    "tear that cluster down first", identity, other);
		rc = -EEXIST;
		ln_cv_report(cv, "create", KIND, identity, NULL, err.buf);
		goto out;
	}
	if (present && have && !strcmp(have, fp)) {
		ln_cv_report(cv, "ok", KIND, identity, ".nvme", NULL);
		goto out;
	}
	if (present && !have) {
		/* someone else's key under this identity (a record without a
		 * fingerprint is an insert that never happened): not ours */
		ln_buf_addf(&err, "the .nvme keyring already holds a TLS PSK '%s' that llmnet did "
			    "not insert; remove it (keyctl) or give this host another key", identity);
		rc = -EEXIST;
		ln_cv_report(cv, "create", KIND, identity, NULL, err.buf);
		goto out;
	}
	if (!cv->plan) {
		rc = ln_cv_own(cv, KIND, identity);
		if (rc == 0)
			rc = ln_agent_change(cv->a, "tls psk") ?:
				cv->a->fs->add_psk(cv->a, identity, key, len, &err);
		if (rc == 0) {
			rec = ln_state_find(&cv->st, cv->cluster, KIND, identity);
			ln_json_add_str(rec, "fp", fp);
			cv->st.dirty = 1;
			rc = ln_state_save(cv->a, &cv->st, &err);
		}
	}
	ln_cv_report(cv, present ? "change" : "create", KIND, identity, ".nvme",
		     rc < 0 ? err.buf : NULL);
out:
	explicit_bzero(key, sizeof(key));
	ln_buf_release(&err);
	return rc;
}

/* "NVMe0R0H HOST SUB" of a configured PSK's hash H. */
static void want_identity(struct json_object *set, const char *psk, const char *hostnqn,
			  const char *subnqn)
{
	char id[LN_TLS_IDENTITY_MAX];

	if (!psk || !hostnqn || strlen(psk) < 15)
		return;
	if (snprintf(id, sizeof(id), "NVMe0R0%c %s %s", psk[14], hostnqn, subnqn) <
	    (int)sizeof(id))
		json_object_object_add(set, id, NULL);
}

/* The keys wanted: a target's hosts', and this node's own for each tls
 * connect, under its host NQN as ln_host_identity reads it (what apply
 * connects with). Without a valid host identity (apply refuses it), the
 * own keys cannot be named: every key for a wanted connect's subsystem is
 * kept (in keep_sub), none removed. */
static void wanted(struct ln_converge *cv, struct json_object *want, struct json_object *keep_sub)
{
	struct ln_buf nqn = LN_BUF_INIT, id = LN_BUF_INIT, bad = LN_BUF_INIT;
	int invalid = ln_host_identity(cv->a, &nqn, &id, &bad) < 0;
	size_t i, j;

	for (i = 0; cv->rq && i < cv->rq->ntargets; i++) {
		const struct ln_req_target *t = &cv->rq->targets[i];

		for (j = 0; t->tls && t->keys && j < t->nhosts; j++)
			want_identity(want, t->keys[j].psk, t->hosts[j], t->nqn);
	}
	for (i = 0; cv->rq && i < cv->rq->ninits; i++) {
		if (!cv->rq->inits[i].tls)
			continue;
		if (invalid)
			json_object_object_add(keep_sub, cv->rq->inits[i].target, NULL);
		else if (nqn.len)
			want_identity(want, cv->rq->inits[i].psk, nqn.buf, cv->rq->inits[i].target);
	}
	ln_buf_release_all(&nqn, &id, &bad);
}

void ln_tls_psk_remove(struct ln_converge *cv)
{
	struct json_object *want = json_object_new_object(), *objs, *gone = json_object_new_array();
	struct json_object *forget = json_object_new_array(), *keep_sub = json_object_new_object();
	size_t i, n;

	wanted(cv, want, keep_sub);
	objs = ln_state_objects(&cv->st, cv->cluster);
	n = objs ? json_object_array_length(objs) : 0;
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);
		const char *k = ln_json_str_at(o, "kind"), *id = ln_json_str_at(o, "id");
		const char *sub = id ? strrchr(id, ' ') : NULL;

		if (!k || !id || strcmp(k, KIND) || json_object_object_get_ex(want, id, NULL))
			continue;
		if (!ln_json_str_at(o, "fp")) {
			/* its insert never happened: a key under this identity
			 * now is someone else's */
			if (!cv->plan)
				json_object_array_add(forget, json_object_new_string(id));
			continue;
		}
		/* a kept subsystem (teardown) keeps its hosts' keys */
		if (sub && cv->kept && json_object_object_get_ex(cv->kept, sub + 1, NULL))
			continue;
		if (sub && json_object_object_get_ex(keep_sub, sub + 1, NULL))
			continue;
		json_object_array_add(gone, json_object_new_string(id));
	}
	for (i = 0; i < json_object_array_length(gone); i++) {
		const char *id = json_object_get_string(json_object_array_get_idx(gone, i));
		struct ln_buf err = LN_BUF_INIT;
		int rc = 0;

		if (!cv->plan)
			rc = ln_agent_change(cv->a, "remove tls psk") ?:
				cv->a->fs->drop_psk(cv->a, id, &err);
		if (rc == 0 && !cv->plan)
			ln_cv_disown(cv, KIND, id);
		ln_cv_report(cv, "remove", KIND, id, ".nvme", rc < 0 ? err.buf : NULL);
		ln_buf_release(&err);
	}
	for (i = 0; i < json_object_array_length(forget); i++)
		ln_cv_disown(cv, KIND, json_object_get_string(json_object_array_get_idx(forget, i)));
	json_object_put(forget);
	json_object_put(gone);
	json_object_put(want);
	json_object_put(keep_sub);
}
