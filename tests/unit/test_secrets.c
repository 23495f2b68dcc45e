/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for orchestrator/secrets.c and the request fields it feeds:
 * the key store's layout and permission rules (a missing, malformed,
 * loosely permitted, foreign or linked file is refused by name, never by
 * content), `llmnet keys` making only what is missing, the exact dhchap
 * fields of the agent's requests, their redaction in kept copies, and
 * that every secret in a request is a field of common/secret_fields.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"

#include "agents/agent/core/request.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/secret_fields.h"
#include "common/util.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/run.h"
#include "orchestrator/secrets.h"

#define KEY_A "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2n:"
#define HNQN(n) "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-00000000000" #n

/* the store, and the state folder (LLMNET_STATE_DIR: ln_run_init keeps its
 * run log there) */
static char dir[256], state_dir[256];

static const char spec_fmt[] =
	"version: 1\n"
	"cluster: sec\n"
	"nodes:\n"
	"  - { name: t1, address: 127.0.0.1, rdma: [ { device: rxe0, ip: 10.0.0.1 } ] }\n"
	"  - { name: h2, address: 127.0.0.2 }\n"
	"  - { name: h3, address: 127.0.0.3 }\n"
	"storage:\n"
	"  targets:\n"
	"    - nqn: nqn.2024-04.io.llmnet:t1.a\n"
	"      node: t1\n"
	"      transport: tcp\n"
	"      dhchap: { key_dir: %s/keys, hash: sha384, dhgroup: null, bidirectional: %s }\n"
	"      namespaces: [ { nsid: 1, file: /srv/a.img, size: 1GiB } ]\n"
	"  initiators:\n"
	"    - { node: h2, target: nqn.2024-04.io.llmnet:t1.a }\n"
	"    - { node: h3, target: nqn.2024-04.io.llmnet:t1.a }\n";

/* The spec, its target bidirectional or not, with tls: required or not. */
static struct ln_spec *load_tls(int bidirectional, int tls)
{
	static const char line[] = "      tls: required\n";
	char yaml[2048], *at;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;

	snprintf(yaml, sizeof(yaml), spec_fmt, dir, bidirectional ? "true" : "false");
	if (tls) {
		at = strstr(yaml, "transport: tcp\n") + strlen("transport: tcp\n");
		memmove(at + strlen(line), at, strlen(at) + 1);
		memcpy(at, line, strlen(line));
	}
	if (ln_spec_load_buf(tls ? "tls.yaml" : "sec.yaml", yaml, strlen(yaml), &spec, &err) < 0)
		fail_msg("%s", err.buf);
	ln_buf_release(&err);
	return spec;
}

static struct ln_spec *load(int bidirectional)
{
	return load_tls(bidirectional, 0);
}

static void path_of(char *p, size_t n, const char *rel)
{
	snprintf(p, n, "%s/keys/%s", dir, rel);
}

static void put(const char *rel, const char *content, mode_t mode)
{
	char p[512];
	FILE *f;

	path_of(p, sizeof(p), rel);
	unlink(p);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

/* A good store for the spec: t1/h2.key, t1/h3.key (and .ctrl.key). */
static int store_setup(void **state)
{
	char p[512];

	(void)state;
	snprintf(state_dir, sizeof(state_dir), "/tmp/llmnet-secrets-state-XXXXXX");
	assert_non_null(mkdtemp(state_dir));
	setenv("LLMNET_STATE_DIR", state_dir, 1);
	setenv("LLMNET_AGENT", BUILD_DIR "/llmnet-agent", 1);
	snprintf(dir, sizeof(dir), "/tmp/llmnet-secrets-XXXXXX");
	assert_non_null(mkdtemp(dir));
	path_of(p, sizeof(p), "t1");
	assert_int_equal(ln_mkdir_p(p, 0700, NULL), 0);
	path_of(p, sizeof(p), "");
	assert_int_equal(chmod(p, 0700), 0);
	put("t1/h2.key", KEY_A "\n", 0600);
	put("t1/h3.key", KEY_A, 0400);
	return 0;
}

static int store_teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dir, state_dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Load and expect a refusal naming rel (and never quoting a secret). */
static void expect_refused(struct ln_spec *spec, const char *rel, const char *why)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_secrets *s = NULL;
	char p[512];

	path_of(p, sizeof(p), rel);
	assert_int_equal(ln_secrets_load(spec, &s, &err), -LN_ESPEC);
	assert_null(s);
	if (!strstr(err.buf, p) || !strstr(err.buf, why))
		fail_msg("want '%s' and '%s' in: %s", p, why, err.buf);
	/* neither file content written below is quoted */
	assert_null(strstr(err.buf, "ia6zGod"));
	assert_null(strstr(err.buf, "not a secret"));
	ln_buf_release(&err);
}

static void test_secrets__load_finds_each_pair(void **state)
{
	struct ln_spec *spec = load(0);
	struct ln_buf err = LN_BUF_INIT;
	struct ln_secrets *s = NULL;

	(void)state;
	assert_int_equal(ln_secrets_load(spec, &s, &err), 0);
	assert_non_null(s);
	assert_int_equal(s->n, 2);
	assert_string_equal(ln_secrets_find(s, 0, 1)->key, KEY_A);
	assert_string_equal(ln_secrets_find(s, 0, 2)->key, KEY_A);
	assert_string_equal(ln_secrets_find(s, 0, 1)->ctrl_key, "");
	assert_null(ln_secrets_find(s, 1, 0));
	ln_secrets_free(s);
	ln_spec_free(spec);
	ln_buf_release(&err);
}

static void test_secrets__bad_files_refused_by_name(void **state)
{
	struct ln_spec *spec = load(0), *bi = load(1);
	char p[512], q[512];

	(void)state;
	/* bidirectional needs the .ctrl.key files */
	expect_refused(bi, "t1/h2.ctrl.key", "is missing ('llmnet keys SPEC' makes it)");
	put("t1/h2.key", "DHHC-1:00:ia6zGodOr4SEG0Zzaw398rpY0wqipUWj4jWjUh4HWUz6aQ2m:\n", 0600);
	expect_refused(spec, "t1/h2.key", "is malformed: secret's CRC-32 does not match");
	put("t1/h2.key", "not a secret", 0600);
	expect_refused(spec, "t1/h2.key", "is malformed");
	put("t1/h2.key", KEY_A, 0640);
	expect_refused(spec, "t1/h2.key", "is open to others (mode 0640): chmod 600 it");
	put("t1/h2.key", KEY_A, 0600);
	path_of(p, sizeof(p), "t1/h2.key");
	assert_int_equal(chown(p, 4242, 4242), 0);
	expect_refused(spec, "t1/h2.key", "is owned by uid 4242");
	/* a link is not followed, even to a good secret */
	path_of(q, sizeof(q), "t1/h3.key");
	unlink(p);
	assert_int_equal(symlink(q, p), 0);
	expect_refused(spec, "t1/h2.key", "cannot open secret");
	unlink(p);
	expect_refused(spec, "t1/h2.key", "is missing");
	put("t1/h2.key", KEY_A "\n", 0600);
	path_of(p, sizeof(p), "t1");
	assert_int_equal(chmod(p, 0750), 0);
	expect_refused(spec, "t1", "is open to others (mode 0750): chmod 700 it");
	assert_int_equal(chmod(p, 0700), 0);
	ln_spec_free(spec);
	ln_spec_free(bi);
}

static void test_secrets__make_fills_only_the_gaps(void **state)
{
	struct ln_spec *bi = load(1);
	struct ln_buf made = LN_BUF_INIT, err = LN_BUF_INIT, got = LN_BUF_INIT;
	struct ln_secrets *s = NULL;
	struct stat st;
	char p[512];

	(void)state;
	assert_int_equal(ln_secrets_make(bi, &made, &err), 0);
	path_of(p, sizeof(p), "t1/h2.ctrl.key");
	assert_non_null(strstr(made.buf, p));
	path_of(p, sizeof(p), "t1/h3.ctrl.key");
	assert_non_null(strstr(made.buf, p));
	/* the existing secrets were not touched or listed */
	assert_null(strstr(made.buf, "h2.key"));
	path_of(p, sizeof(p), "t1/h2.key");
	assert_int_equal(ln_file_read(p, &got, &err), 0);
	assert_string_equal(got.buf, KEY_A "\n");
	path_of(p, sizeof(p), "t1/h3.ctrl.key");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* and they load: format and CRC right */
	assert_int_equal(ln_secrets_load(bi, &s, &err), 0);
	assert_memory_equal(ln_secrets_find(s, 0, 2)->ctrl_key, "DHHC-1:00:", 10);
	assert_string_not_equal(ln_secrets_find(s, 0, 1)->ctrl_key,
				ln_secrets_find(s, 0, 2)->ctrl_key);
	ln_secrets_free(s);
	/* a second run makes nothing */
	ln_buf_reset(&made);
	assert_int_equal(ln_secrets_make(bi, &made, &err), 0);
	assert_string_equal(made.buf, "");
	ln_spec_free(bi);
	ln_test_release(&made, &err, &got);
}

static struct json_object *facts_of(int n)
{
	char js[256];
	struct json_object *o = NULL;
	struct ln_buf err = LN_BUF_INIT;

	snprintf(js, sizeof(js),
		 "{\"protocol\":1,\"host_nqn\":\"" HNQN(0) "\",\"nvme\":[],"
		 "\"nvmet\":{\"subsystems\":[]}}");
	/* the NQN's last digit is the node's number */
	*strstr(js, "0\",\"nvme") = (char)('0' + n);
	assert_int_equal(ln_json_parse(js, strlen(js), &o, &err), 0);
	ln_buf_release(&err);
	return o;
}

/* Node i stops answering and its facts are gone. */
static void go_silent(struct ln_run *r, size_t i)
{
	r->nodes[i].state = LN_NODE_UNREACHABLE;
	json_object_put(r->nodes[i].facts);
	r->nodes[i].facts = NULL;
}

static struct json_object *first_target_dhchap(struct json_object *req)
{
	return ln_json_at(json_object_array_get_idx(ln_json_at(req, "targets"), 0), "dhchap");
}

static void test_secrets__request_fields_and_redaction(void **state)
{
	struct ln_spec *bi = load(1);
	struct ln_buf err = LN_BUF_INIT, b = LN_BUF_INIT, notes = LN_BUF_INIT;
	struct json_object *req, *d;
	const struct ln_secret *s2;
	struct ln_run r;
	size_t i;

	(void)state;
	assert_int_equal(ln_run_init(&r, bi, 0, NULL, 0, NULL, 0, "test", &err), 0);
	assert_int_equal(ln_secrets_load(bi, &r.secrets, &err), 0);
	for (i = 0; i < r.n; i++) {
		r.nodes[i].state = LN_NODE_OK;
		r.nodes[i].facts = facts_of((int)i + 1);
	}
	s2 = ln_secrets_find(r.secrets, 0, 1);
	/* the target node's request: hash, group, one key per host NQN */
	req = ln_plan_request(&r, 0, LN_PHASE_FULL, NULL);
	assert_non_null(req);
	d = first_target_dhchap(req);
	assert_string_equal(ln_json_str_at(d, "hash"), "sha384");
	assert_string_equal(ln_json_str_at(d, "dhgroup"), "null");
	assert_int_equal(json_object_array_length(ln_json_at(d, "keys")), 2);
	assert_string_equal(ln_json_str_at(json_object_array_get_idx(ln_json_at(d, "keys"), 0),
					   "host"), HNQN(2));
	assert_string_equal(ln_json_str_at(json_object_array_get_idx(ln_json_at(d, "keys"), 0),
					   "key"), s2->key);
	assert_string_equal(ln_json_str_at(json_object_array_get_idx(ln_json_at(d, "keys"), 0),
					   "ctrl_key"), s2->ctrl_key);
	assert_null(ln_json_at(d, "key_dir"));
	/* redacted: no secret left, a fingerprint in its place */
	ln_secrets_redact(req);
	assert_int_equal(ln_json_write(req, 0, &b), 0);
	assert_null(strstr(b.buf, "DHHC-1"));
	assert_non_null(strstr(b.buf, "\"key\":\"redacted:"));
	assert_non_null(strstr(b.buf, "\"ctrl_key\":\"redacted:"));
	json_object_put(req);
	/* the initiator's request: its secret for that target node */
	req = ln_plan_request(&r, 1, LN_PHASE_FULL, NULL);
	d = ln_json_at(json_object_array_get_idx(ln_json_at(req, "initiators"), 0), "dhchap");
	assert_string_equal(ln_json_str_at(d, "secret"), s2->key);
	assert_string_equal(ln_json_str_at(d, "ctrl_secret"), s2->ctrl_key);
	json_object_put(req);
	/* a silent host: the NQN the target has on record keeps the key of
	 * the one silent host; with its facts gone as well, the same */
	json_object_put(r.nodes[0].facts);
	r.nodes[0].facts = json_tokener_parse(
		"{\"protocol\":1,\"host_nqn\":\"" HNQN(1) "\",\"nvme\":[],\"nvmet\":"
		"{\"subsystems\":[{\"nqn\":\"nqn.2024-04.io.llmnet:t1.a\",\"allowed_hosts\":"
		"[\"" HNQN(3) "\"]}]}}");
	assert_non_null(r.nodes[0].facts);
	go_silent(&r, 2);
	req = ln_plan_request(&r, 0, LN_PHASE_FULL, &notes);
	d = first_target_dhchap(req);
	assert_int_equal(json_object_array_length(ln_json_at(d, "keys")), 2);
	assert_string_equal(ln_json_str_at(json_object_array_get_idx(ln_json_at(d, "keys"), 1),
					   "host"), HNQN(3));
	assert_string_equal(ln_json_str_at(json_object_array_get_idx(ln_json_at(d, "keys"), 1),
					   "key"), ln_secrets_find(r.secrets, 0, 2)->key);
	json_object_put(req);
	/* two silent hosts: a recorded NQN no node can be told to own is
	 * left out (no secret to give it), with a note */
	go_silent(&r, 1);
	req = ln_plan_request(&r, 0, LN_PHASE_FULL, &notes);
	d = first_target_dhchap(req);
	assert_int_equal(json_object_array_length(ln_json_at(d, "keys")), 0);
	assert_int_equal(json_object_array_length(ln_json_at(
		json_object_array_get_idx(ln_json_at(req, "targets"), 0), "hosts")), 0);
	assert_non_null(strstr(notes.buf, "= nvmet_host_key nqn.2024-04.io.llmnet:t1.a/" HNQN(3)
				  "  blocked: unreachable"));
	json_object_put(req);
	/* without its secrets loaded, no request is built at all */
	for (i = 1; i < r.n; i++) {
		r.nodes[i].state = LN_NODE_OK;
		r.nodes[i].facts = facts_of((int)i + 1);
	}
	ln_secrets_free(r.secrets);
	r.secrets = NULL;
	assert_null(ln_plan_request(&r, 0, LN_PHASE_FULL, NULL));
	assert_null(ln_plan_request(&r, 1, LN_PHASE_FULL, NULL));
	ln_run_release(&r);
	ln_spec_free(bi);
	ln_test_release(&err, &b, &notes);
}

/* After a tls test: the run and the spec released, the PSKs removed (the
 * tests before it expect none). */
static void end_tls_run(struct ln_run *r, struct ln_spec *spec)
{
	char p[512];

	ln_run_release(r);
	path_of(p, sizeof(p), "t1/h2.psk");
	unlink(p);
	path_of(p, sizeof(p), "t1/h3.psk");
	unlink(p);
	ln_spec_free(spec);
}

/* tls: required: one PSK per (target node, host) next to the secrets,
 * NVMeTLSkey-1 checked as the DHHC-1 ones are (missing, malformed, loose:
 * refused by name), made by `llmnet keys`, carried in the request with
 * tls "required" on both sides, and redacted. */
static void test_secrets__tls_psk(void **state)
{
	char p[512];
	struct ln_buf err = LN_BUF_INIT, made = LN_BUF_INIT, b = LN_BUF_INIT;
	struct ln_spec *spec = load_tls(0, 1);
	struct ln_secrets *sec = NULL;
	struct json_object *req, *d, *t;
	const struct ln_secret *s2;
	struct ln_run r;
	size_t i;

	(void)state;
	expect_refused(spec, "t1/h2.psk", "is missing ('llmnet keys SPEC' makes it)");
	put("t1/h2.psk", KEY_A "\n", 0600);
	expect_refused(spec, "t1/h2.psk", "is malformed: PSK does not start with 'NVMeTLSkey-1:'");
	/* made by keys: only the missing ones, 0600, in the interchange format */
	path_of(p, sizeof(p), "t1/h2.psk");
	unlink(p);
	assert_int_equal(ln_secrets_make(spec, &made, &err), 0);
	assert_non_null(strstr(made.buf, p));
	assert_null(strstr(made.buf, "h2.key"));
	put("t1/h3.psk", "NVMeTLSkey-1:01:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyN:\n", 0644);
	expect_refused(spec, "t1/h3.psk", "is open to others (mode 0644): chmod 600 it");
	put("t1/h3.psk", "NVMeTLSkey-1:01:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyN:\n", 0600);
	assert_int_equal(ln_secrets_load(spec, &sec, &err), 0);
	s2 = ln_secrets_find(sec, 0, 1);
	assert_memory_equal(s2->psk, "NVMeTLSkey-1:01:", 16);
	assert_string_equal(ln_secrets_find(sec, 0, 2)->psk,
			    "NVMeTLSkey-1:01:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyN:");
	/* the request: tls and each host's psk on the target, its own on the
	 * initiator; redacted copies keep none */
	assert_int_equal(ln_run_init(&r, spec, 0, NULL, 0, NULL, 0, "test", &err), 0);
	r.secrets = sec;
	for (i = 0; i < r.n; i++) {
		r.nodes[i].state = LN_NODE_OK;
		r.nodes[i].facts = facts_of((int)i + 1);
	}
	req = ln_plan_request(&r, 0, LN_PHASE_FULL, NULL);
	assert_non_null(req);
	t = json_object_array_get_idx(ln_json_at(req, "targets"), 0);
	assert_string_equal(ln_json_str_at(t, "tls"), "required");
	d = first_target_dhchap(req);
	assert_string_equal(ln_json_str_at(json_object_array_get_idx(ln_json_at(d, "keys"), 0),
					   "psk"), s2->psk);
	ln_secrets_redact(req);
	assert_int_equal(ln_json_write(req, 0, &b), 0);
	assert_null(strstr(b.buf, "NVMeTLSkey"));
	assert_non_null(strstr(b.buf, "\"psk\":\"redacted:"));
	json_object_put(req);
	req = ln_plan_request(&r, 1, LN_PHASE_FULL, NULL);
	t = json_object_array_get_idx(ln_json_at(req, "initiators"), 0);
	assert_string_equal(ln_json_str_at(t, "tls"), "required");
	assert_string_equal(ln_json_str_at(ln_json_at(t, "dhchap"), "psk"), s2->psk);
	json_object_put(req);
	end_tls_run(&r, spec);
	ln_test_release(&err, &made, &b);
}

/* The fields of common/secret_fields.h that hold something in a request,
 * and how often each (holder, slot) was seen. */
struct listed {
	struct json_object *v[16];
	size_t n;
	int seen[LN_SECRET_HOLDERS][LN_SECRET_SLOTS];
};

static int collect(struct json_object *holder, const struct ln_secret_holder *h, size_t item,
		   const char *name, void *arg)
{
	struct listed *l = arg;
	int k;

	(void)item;
	assert_non_null(name);
	for (k = 0; k < LN_SECRET_SLOTS; k++) {
		struct json_object *v = ln_json_at(holder, h->field[k]);

		if (!v)
			continue;
		assert_true(l->n < ARRAY_SIZE(l->v));
		l->v[l->n++] = v;
		l->seen[h - ln_secret_holders][k]++;
	}
	return 0;
}

/* The strings in o (under key) that hold a secret, DHHC-1 or NVMeTLSkey-1;
 * each must sit at a listed field. */
static size_t count_secrets(struct json_object *o, const char *key, const struct listed *l)
{
	const char *s;
	size_t n = 0, i;

	switch (json_object_get_type(o)) {
	case json_type_string:
		s = json_object_get_string(o);
		if (!strstr(s, "DHHC-1") && !strstr(s, "NVMeTLSkey-1"))
			return 0;
		for (i = 0; i < l->n && l->v[i] != o; i++)
			;
		if (i == l->n)
			fail_msg("'%s' holds a secret but is not a field of common/secret_fields.h, "
				 "so it is neither redacted nor stripped", key);
		return 1;
	case json_type_array:
		for (i = 0; i < json_object_array_length(o); i++)
			n += count_secrets(json_object_array_get_idx(o, i), key, l);
		return n;
	case json_type_object: {
		json_object_object_foreach(o, k, v)
			n += count_secrets(v, k, l);
		return n;
	}
	default:
		return 0;
	}
}

/* Every secret the controller puts in a request (a target's and an
 * initiator's, bidirectional and with tls: every field there is) sits at
 * a field of the one list, so redaction, the agent's persist strip and its
 * key store, all driven by it, cover it; the agent reads each back, and a
 * redacted copy holds none. A secret field added to the request without
 * adding it to common/secret_fields.h fails here. */
static void test_secrets__every_secret_at_a_listed_field(void **state)
{
	struct ln_buf err = LN_BUF_INIT, made = LN_BUF_INIT, text = LN_BUF_INIT;
	struct ln_spec *spec = load_tls(1, 1);
	struct listed all = { { NULL }, 0, { { 0 } } };
	struct ln_request rq;
	struct ln_run r;
	size_t i, node;
	int h, k;

	(void)state;
	assert_int_equal(ln_secrets_make(spec, &made, &err), 0);
	assert_int_equal(ln_run_init(&r, spec, 0, NULL, 0, NULL, 0, "test", &err), 0);
	assert_int_equal(ln_secrets_load(spec, &r.secrets, &err), 0);
	for (i = 0; i < r.n; i++) {
		r.nodes[i].state = LN_NODE_OK;
		r.nodes[i].facts = facts_of((int)i + 1);
	}
	for (node = 0; node < 2; node++) {
		struct json_object *req = ln_plan_request(&r, node, LN_PHASE_FULL, NULL);
		struct listed l = { { NULL }, 0, { { 0 } } };

		assert_non_null(req);
		assert_int_equal(ln_secret_fields_walk(req, collect, &l), 0);
		assert_int_equal(count_secrets(req, "request", &l), l.n);
		for (h = 0; h < LN_SECRET_HOLDERS; h++)
			for (k = 0; k < LN_SECRET_SLOTS; k++)
				all.seen[h][k] += l.seen[h][k];
		/* the agent takes the request, and every listed secret with it */
		ln_buf_reset(&text);
		assert_int_equal(ln_json_write(req, 0, &text), 0);
		if (ln_request_parse(text.buf, text.len, &rq, &err) < 0)
			fail_msg("%s", err.buf);
		for (i = 0; i < rq.ntargets; i++)
			for (k = 0; k < LN_SECRET_SLOTS; k++)
				assert_non_null(rq.targets[i].keys[0].v[k]);
		for (i = 0; i < rq.ninits; i++)
			for (k = 0; k < LN_SECRET_SLOTS; k++)
				assert_non_null(rq.inits[i].secrets[k]);
		ln_request_release(&rq);
		/* redacted: a fingerprint at each listed field, no secret anywhere */
		ln_secrets_redact(req);
		l.n = 0;
		assert_int_equal(ln_secret_fields_walk(req, collect, &l), 0);
		assert_int_equal(count_secrets(req, "request", &l), 0);
		for (i = 0; i < l.n; i++)
			assert_memory_equal(json_object_get_string(l.v[i]), "redacted:", 9);
		json_object_put(req);
	}
	/* the fixture is full: each holder had each of its slots */
	for (h = 0; h < LN_SECRET_HOLDERS; h++)
		for (k = 0; k < LN_SECRET_SLOTS; k++)
			assert_true(all.seen[h][k] > 0);
	end_tls_run(&r, spec);
	ln_test_release(&err, &made, &text);
}

LN_TEST_MAIN(store_setup, store_teardown,
	cmocka_unit_test(test_secrets__load_finds_each_pair),
	cmocka_unit_test(test_secrets__bad_files_refused_by_name),
	cmocka_unit_test(test_secrets__make_fills_only_the_gaps),
	cmocka_unit_test(test_secrets__request_fields_and_redaction),
	cmocka_unit_test(test_secrets__tls_psk),
	cmocka_unit_test(test_secrets__every_secret_at_a_listed_field),
)
