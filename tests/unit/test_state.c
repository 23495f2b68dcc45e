/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the controller's state folder (orchestrator/run/state.c):
 * facts and applied state recorded per node (private files, merged across
 * runs, a failed node's entry dropped), the cached run facts --cached
 * prints, and a silent node's plan against its last apply (lastknown.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"

#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "orchestrator/run/apply.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/hostident.h"
#include "orchestrator/run/lastknown.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/secrets.h"
#include "orchestrator/run/state.h"

#define T1 "nqn.2024-04.io.llmnet:n1.t1"
#define OLD "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000002"
#define NEW "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000022"

static const char spec_yaml[] =
	"version: 1\n"
	"cluster: st\n"
	"ssh: { user: root }\n"
	"nodes:\n"
	"  - { name: \"n[1-3]\", address: \"10.0.0.[1-3]\" }\n"
	"storage:\n"
	"  targets:\n"
	"    - nqn: " T1 "\n"
	"      node: n1\n"
	"      transport: tcp\n"
	"      address: 10.0.0.1\n"
	"      namespaces:\n"
	"        - { nsid: 1, file: /var/lib/nvmet/disk1.img, size: 1MiB }\n"
	"  initiators:\n"
	"    - { node: \"n[2-3]\", target: " T1 " }\n";

struct fx {
	char dir[64];
	struct ln_spec *spec;
	struct ln_run run;
};

static struct json_object *facts_of(const char *host_nqn)
{
	char buf[256];
	struct json_object *o = NULL;
	struct ln_buf err = LN_BUF_INIT;

	snprintf(buf, sizeof(buf), "{\"protocol\":1,\"host_nqn\":\"%s\",\"nvme\":[]}", host_nqn);
	assert_int_equal(ln_json_parse(buf, strlen(buf), &o, &err), 0);
	ln_buf_release(&err);
	return o;
}

/* A run of three converged nodes: n2 and n3 report host NQNs. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ln_buf err = LN_BUF_INIT;
	size_t i;

	assert_non_null(f);
	strcpy(f->dir, "/tmp/ln-state-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	strcat(f->dir, "/state");
	setenv("LLMNET_STATE_DIR", f->dir, 1);
	assert_int_equal(ln_spec_load_buf("st.yaml", spec_yaml, strlen(spec_yaml), &f->spec, &err), 0);
	f->run.spec = f->spec;
	f->run.n = f->spec->n_nodes;
	f->run.nodes = calloc(f->run.n, sizeof(*f->run.nodes));
	assert_non_null(f->run.nodes);
	for (i = 0; i < f->run.n; i++) {
		struct ln_node_run *nr = &f->run.nodes[i];

		nr->idx = i;
		nr->spec = &f->spec->nodes[i];
		nr->state = LN_NODE_OK;
		nr->limited = 1;
		nr->applied = 1;
		ln_buf_init(&nr->reason, 4096);
		ln_buf_init(&nr->skip, 4096);
	}
	f->run.nodes[0].facts = facts_of("nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000001");
	f->run.nodes[1].facts = facts_of(OLD);
	f->run.nodes[2].facts = facts_of("nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000003");
	pthread_mutex_init(&f->run.log_lock, NULL);
	ln_buf_release(&err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	ln_run_release(&f->run);
	ln_spec_free(f->spec);
	f->dir[strlen(f->dir) - strlen("/state")] = '\0';
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	unsetenv("LLMNET_STATE_DIR");
	free(f);
	return 0;
}

static struct json_object *load(const struct fx *f, const char *name)
{
	struct ln_buf text = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *o = NULL;
	char path[128];

	snprintf(path, sizeof(path), "%s/st.%s", f->dir, name);
	assert_int_equal(ln_file_read(path, &text, &err), 0);
	assert_int_equal(ln_json_parse(text.buf, text.len, &o, &err), 0);
	ln_test_release(&text, &err);
	return o;
}

static int mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (int)(st.st_mode & 07777);
}

static void test_state__records_are_private_and_merged(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *o;
	char path[128];

	assert_int_equal(ln_state_save_facts(&f->run, &err), 0);
	assert_int_equal(mode_of(f->dir), 0700);
	snprintf(path, sizeof(path), "%s/st.facts.json", f->dir);
	assert_int_equal(mode_of(path), 0600);
	/* n3 goes silent: the next save keeps its last entry */
	f->run.nodes[2].state = LN_NODE_UNREACHABLE;
	json_object_put(f->run.nodes[1].facts);
	f->run.nodes[1].facts = facts_of(NEW);
	assert_int_equal(ln_state_save_facts(&f->run, &err), 0);
	o = load(f, "facts.json");
	assert_string_equal(ln_json_str_at(ln_json_at(ln_json_at(o, "nodes"), "n2"), "address"), "10.0.0.2");
	assert_string_equal(ln_json_str_at(ln_json_at(ln_json_at(ln_json_at(o, "nodes"), "n2"), "facts"), "host_nqn"), NEW);
	assert_non_null(ln_json_at(ln_json_at(o, "nodes"), "n3"));
	json_object_put(o);

	/* applied: every converged node; then n2's apply fails: its entry
	 * goes (what it holds is unknown), n1's stays */
	f->run.nodes[2].state = LN_NODE_OK;
	assert_int_equal(ln_apply_save_applied(&f->run, &err), 0);
	f->run.nodes[1].n_failed = 1;
	assert_int_equal(ln_apply_save_applied(&f->run, &err), 0);
	o = load(f, "applied.json");
	assert_null(ln_json_at(ln_json_at(o, "nodes"), "n2"));
	assert_non_null(ln_json_at(ln_json_at(ln_json_at(o, "nodes"), "n1"), "request"));
	json_object_put(o);
	ln_buf_release(&err);
}

static void test_state__cached_run_contacts_nothing(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_run cached;

	f->run.nodes[2].state = LN_NODE_UNREACHABLE;	/* n3 never answered */
	assert_int_equal(ln_state_save_facts(&f->run, &err), 0);
	assert_int_equal(ln_state_run_cached(&cached, f->spec, &err), 0);
	assert_int_equal(cached.nodes[0].state, LN_NODE_OK);
	assert_true(cached.nodes[0].cached_at > 0);
	assert_string_equal(ln_facts_host_nqn(&cached.nodes[1]), OLD);
	assert_int_equal(cached.nodes[2].state, LN_NODE_PENDING);
	assert_non_null(strstr(cached.nodes[2].reason.buf, "no facts on record in '"));
	assert_null(cached.nodes[2].facts);
	ln_run_release(&cached);
	ln_buf_release(&err);
}

/* A cached facts file written before the answer limits, or tampered
 * with: n2's entry of 9000 empty objects is over a live facts answer's
 * 8192 containers, so n2 alone has no cached facts, with a reason; n1's
 * entry (the control) is read, less its unknown field. */
static void test_state__cached_entry_bounded(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT, b = LN_BUF_INIT;
	struct ln_run cached;
	char path[128];
	FILE *fp;
	int i;

	ln_buf_addstr(&b, "{\"nodes\":{\"n1\":{\"read_at\":1,\"facts\":{\"hostname\":\"n1\","
			  "\"implant\":[1]}},\"n2\":{\"read_at\":1,\"facts\":{\"rdma\":[");
	for (i = 0; i < 9000; i++)
		ln_buf_addstr(&b, i ? ",{}" : "{}");
	ln_buf_addstr(&b, "]}}}}");
	assert_int_equal(ln_state_save_facts(&f->run, &err), 0);	/* makes the folder */
	snprintf(path, sizeof(path), "%s/st.facts.json", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(b.buf, 1, b.len, fp), b.len);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(ln_state_run_cached(&cached, f->spec, &err), 0);
	assert_int_equal(cached.nodes[0].state, LN_NODE_OK);
	assert_string_equal(ln_json_str_at(cached.nodes[0].facts, "hostname"), "n1");
	assert_null(ln_json_at(cached.nodes[0].facts, "implant"));
	assert_int_equal(cached.nodes[1].state, LN_NODE_PENDING);
	assert_null(cached.nodes[1].facts);
	assert_non_null(strstr(cached.nodes[1].reason.buf, "no cached facts: the entry in '"));
	assert_non_null(strstr(cached.nodes[1].reason.buf, "8192"));
	ln_run_release(&cached);
	ln_buf_release(&err);
	ln_buf_release(&b);
}

/* Write the cached facts file whole: n1's entry, then a top-level "junk"
 * array of k empty objects, then spaces to pad bytes in all (0: none). */
static void write_facts_file(const struct fx *f, size_t k, size_t bytes)
{
	struct ln_buf b = LN_BUF_INIT;
	char path[128];
	FILE *fp;
	size_t i;

	ln_buf_init(&b, 64u << 20);
	ln_buf_addstr(&b, "{\"nodes\":{\"n1\":{\"read_at\":1,\"facts\":{\"hostname\":\"n1\"}}},"
			  "\"junk\":[");
	for (i = 0; i < k; i++)
		ln_buf_addstr(&b, i ? ",{}" : "{}");
	ln_buf_addstr(&b, "]}");
	while (b.len < bytes)
		assert_int_equal(ln_buf_addstr(&b, " "), 0);
	snprintf(path, sizeof(path), "%s/st.facts.json", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(b.buf, 1, b.len, fp), b.len);
	assert_int_equal(fclose(fp), 0);
	ln_buf_release(&b);
}

/* facts --cached of that file: 1 when n1's facts were read; *why gets the
 * warning about the file, if any. */
static int cached_n1(const struct fx *f, char *why, size_t size)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_notes notes;
	struct ln_run cached;
	int ok;

	assert_int_equal(ln_state_run_cached(&cached, f->spec, &err), 0);
	ok = cached.nodes[0].state == LN_NODE_OK &&
	     !strcmp(ln_json_str_at(cached.nodes[0].facts, "hostname"), "n1");
	notes = ln_run_notes_take(&cached);
	snprintf(why, size, "%s", notes.n ? notes.v[0].text : "");
	ln_notes_release(&notes);
	ln_run_release(&cached);
	ln_buf_release(&err);
	return ok;
}

/* The cached facts file as a whole is held to what its 3 nodes' live
 * facts answers may be: 3 x 4 MiB, and 3 x 8192 + 12 objects and arrays.
 * At each limit it is read (the controls); one byte or one object over,
 * it is ignored with a warning that names the file and the limit, and no
 * node has cached facts. */
static void test_state__cached_file_bounded(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT;
	char why[512];

	assert_int_equal(ln_state_save_facts(&f->run, &err), 0);	/* makes the folder */
	write_facts_file(f, 0, 12u << 20);
	assert_true(cached_n1(f, why, sizeof(why)));
	assert_string_equal(why, "");
	write_facts_file(f, 0, (12u << 20) + 1);
	assert_false(cached_n1(f, why, sizeof(why)));
	assert_non_null(strstr(why, "/st.facts.json': over 12582912 bytes (the facts limit for 3 "
				    "nodes)"));
	/* the envelope, nodes, n1, its facts and junk: 5 containers of 24588 */
	write_facts_file(f, 24583, 0);
	assert_true(cached_n1(f, why, sizeof(why)));
	assert_string_equal(why, "");
	write_facts_file(f, 24584, 0);
	assert_false(cached_n1(f, why, sizeof(why)));
	assert_non_null(strstr(why, "over the facts limit of 24588 objects and arrays"));
	ln_buf_release(&err);
}

/* The change list's entries as "ACTION KIND ID" lines. */
static void changes_text(struct json_object *answer, char *out, size_t size)
{
	struct json_object *chs = ln_json_at(answer, "changes");
	size_t i;

	out[0] = '\0';
	for (i = 0; chs && i < json_object_array_length(chs); i++) {
		struct json_object *c = json_object_array_get_idx(chs, i);

		snprintf(out + strlen(out), size - strlen(out), "%s %s %s\n",
			 ln_json_str_at(c, "action"), ln_json_str_at(c, "kind"), ln_json_str_at(c, "id"));
	}
}

static void test_state__silent_node_is_planned_against_its_last_apply(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT;
	char text[1024];

	assert_int_equal(ln_state_save_facts(&f->run, &err), 0);
	assert_int_equal(ln_apply_save_applied(&f->run, &err), 0);
	/* n1 (the target) goes silent; n2 was reinstalled with a new host
	 * NQN: n1 would allow the new one and drop the old one */
	f->run.nodes[0].state = LN_NODE_UNREACHABLE;
	json_object_put(f->run.nodes[0].facts);
	f->run.nodes[0].facts = NULL;
	json_object_put(f->run.nodes[1].facts);
	f->run.nodes[1].facts = facts_of(NEW);
	assert_int_equal(ln_lastknown_plan(&f->run, &err), 0);
	assert_true(f->run.nodes[0].cached_at > 0);
	changes_text(f->run.nodes[0].answer, text, sizeof(text));
	assert_string_equal(text, "create nvmet_allowed_host " T1 "/" NEW "\n"
				  "remove nvmet_allowed_host " T1 "/" OLD "\n");
	/* a reachable node is not touched */
	assert_null(f->run.nodes[1].answer);

	/* nothing new for it: an empty list, still marked as last-known */
	json_object_put(f->run.nodes[1].facts);
	f->run.nodes[1].facts = facts_of(OLD);
	assert_int_equal(ln_lastknown_plan(&f->run, &err), 0);
	changes_text(f->run.nodes[0].answer, text, sizeof(text));
	assert_string_equal(text, "");

	/* after a teardown, the silent node would get everything again */
	f->run.nodes[0].state = LN_NODE_OK;
	assert_int_equal(ln_state_save_applied(&f->run, NULL, &err), 0);
	f->run.nodes[0].state = LN_NODE_REFUSED;
	assert_int_equal(ln_lastknown_plan(&f->run, &err), 0);
	changes_text(f->run.nodes[0].answer, text, sizeof(text));
	assert_non_null(strstr(text, "create nvmet_subsystem " T1 "\n"));
	assert_non_null(strstr(text, "create hostfile /etc/llmnet/hostfile\n"));
	ln_buf_release(&err);
}

/* The state folder keeps a DH-HMAC-CHAP secret only as a fingerprint, and
 * a silent target node's plan still shows a rotated secret, by host NQN. */
static void test_state__secrets_kept_as_fingerprints(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT, made = LN_BUF_INIT, text = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	char yaml[sizeof(spec_yaml) + 128], key[256], changes[1024];
	char *at = strstr(spec_yaml, "      namespaces:");
	size_t i;

	/* the same spec, with dhchap on T1 and its secrets under HOME */
	snprintf(yaml, sizeof(yaml), "%.*s      dhchap: { key_dir: ~/k }\n%s",
		 (int)(at - spec_yaml), spec_yaml, at);
	setenv("HOME", f->dir, 1);
	assert_int_equal(ln_spec_load_buf("st.yaml", yaml, strlen(yaml), &spec, &err), 0);
	ln_spec_free(f->spec);
	f->spec = spec;
	f->run.spec = spec;
	for (i = 0; i < f->run.n; i++)
		f->run.nodes[i].spec = &spec->nodes[i];
	assert_int_equal(ln_mkdir_p(f->dir, 0700, &err), 0);
	assert_int_equal(ln_secrets_make(spec, &made, &err), 0);
	assert_int_equal(ln_secrets_load(spec, &f->run.secrets, &err), 0);
	snprintf(key, sizeof(key), "%s", ln_secrets_find(f->run.secrets, 0, 1)->key);
	assert_int_equal(ln_apply_save_applied(&f->run, &err), 0);
	snprintf(changes, sizeof(changes), "%s/st.applied.json", f->dir);
	assert_int_equal(ln_file_read(changes, &text, &err), 0);
	assert_null(strstr(text.buf, key));
	assert_null(strstr(text.buf, "DHHC-1"));
	assert_non_null(strstr(text.buf, "\"key\":\"redacted:"));
	/* n1 goes silent: the same secrets, no change */
	f->run.nodes[0].state = LN_NODE_UNREACHABLE;
	assert_int_equal(ln_lastknown_plan(&f->run, &err), 0);
	changes_text(f->run.nodes[0].answer, changes, sizeof(changes));
	assert_string_equal(changes, "");
	/* n2's secret is rotated: its host entry changes, named by its NQN */
	snprintf(changes, sizeof(changes), "%s/k/n1/n2.key", f->dir);
	assert_int_equal(unlink(changes), 0);
	assert_int_equal(ln_secrets_make(spec, &made, &err), 0);
	ln_secrets_free(f->run.secrets);
	assert_int_equal(ln_secrets_load(spec, &f->run.secrets, &err), 0);
	assert_string_not_equal(ln_secrets_find(f->run.secrets, 0, 1)->key, key);
	assert_int_equal(ln_lastknown_plan(&f->run, &err), 0);
	changes_text(f->run.nodes[0].answer, changes, sizeof(changes));
	assert_string_equal(changes, "change nvmet_host_key " OLD "\n");
	ln_test_release(&err, &made, &text);
}

/* What an apply leaves: the applied state, and when it did not converge
 * the retry file, whose path comes back as a note, not printed. */
static void test_state__apply_record_says_the_retry_file(void **state)
{
	struct fx *f = *state;
	struct ln_notes notes = LN_NOTES_INIT;
	struct json_object *o;
	char want[256];

	ln_apply_record(&f->run, LN_EXIT_OK, &notes);
	assert_int_equal(notes.n, 0);
	f->run.nodes[1].n_failed = 1;
	ln_apply_record(&f->run, LN_EXIT_FAILED, &notes);
	assert_int_equal(notes.n, 1);
	assert_int_equal(notes.v[0].level, LN_LOG_INFO);
	snprintf(want, sizeof(want), "to retry the nodes that did not converge: llmnet apply "
		 "st.yaml --limit @%s/st.retry", f->dir);
	assert_string_equal(notes.v[0].text, want);
	o = load(f, "applied.json");
	assert_null(ln_json_at(ln_json_at(o, "nodes"), "n2"));
	assert_non_null(ln_json_at(ln_json_at(o, "nodes"), "n3"));
	json_object_put(o);
	ln_notes_release(&notes);
}

static void test_state__silent_node_without_record_has_no_plan(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT;

	f->run.nodes[2].state = LN_NODE_UNREACHABLE;
	assert_int_equal(ln_lastknown_plan(&f->run, &err), 0);
	assert_null(f->run.nodes[2].answer);
	assert_int_equal(f->run.nodes[2].cached_at, 0);
	ln_buf_release(&err);
}

static void test_state__retry_file_names_failed_nodes_and_their_targets(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT, text = LN_BUF_INIT;
	char *path = NULL;

	f->run.nodes[1].state = LN_NODE_UNREACHABLE;
	ln_buf_addstr(&f->run.nodes[2].skip, "not run: the rollout stopped after wave 1 of 2");
	assert_int_equal(ln_state_write_retry(&f->run, &path, &err), 0);
	assert_int_equal(ln_file_read(path, &text, &err), 0);
	assert_non_null(strstr(text.buf, "\nn[2-3]\n# the target nodes they connect to\nn1\n"));
	assert_int_equal(mode_of(path), 0600);
	free(path);
	ln_test_release(&text, &err);
}

/* Host identity pinning (hostident.c, issue 32): the first contact pins
 * each node; a claim of another node's pin excludes the claimant alone
 * (its own pin stands for it, as for a silent node: nothing is keyed or
 * allowed for the NQN it claims) while the owner is silent; a changed identity needs --accept-replaced, which re-pins it. */
static void test_state__host_identity_is_pinned(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT;
	struct stat st;
	char path[128];

	assert_int_equal(ln_hostident_check(&f->run, &err), 0);	/* control: honest */
	snprintf(path, sizeof(path), "%s/st.hostident.json", f->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* n2 silent, n3 reports n2's NQN */
	f->run.nodes[1].state = LN_NODE_UNREACHABLE;
	json_object_put(f->run.nodes[2].facts);
	f->run.nodes[2].facts = facts_of(OLD);
	assert_int_equal(ln_hostident_check(&f->run, &err), 1);
	assert_int_equal(f->run.nodes[2].state, LN_NODE_REFUSED);
	assert_string_equal(ln_facts_host_nqn(&f->run.nodes[2]),
			    "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000003");
	assert_int_equal(f->run.nodes[0].state, LN_NODE_OK);
	/* n2 back with a new NQN: refused, then re-pinned by --accept-replaced */
	f->run.nodes[1].state = LN_NODE_OK;
	json_object_put(f->run.nodes[1].facts);
	f->run.nodes[1].facts = facts_of(NEW);
	assert_int_equal(ln_hostident_check(&f->run, &err), 1);
	assert_int_equal(f->run.nodes[1].state, LN_NODE_REFUSED);
	f->run.nodes[1].state = LN_NODE_OK;
	json_object_put(f->run.nodes[1].facts);
	f->run.nodes[1].facts = facts_of(NEW);
	f->run.nodes[1].accept_replaced = 1;
	assert_int_equal(ln_hostident_check(&f->run, &err), 0);
	f->run.nodes[1].accept_replaced = 0;
	assert_int_equal(ln_hostident_check(&f->run, &err), 0);
	assert_string_equal(ln_facts_host_nqn(&f->run.nodes[1]), NEW);
	ln_buf_release(&err);
}

/* A state folder open to others is refused with the command that fixes
 * it, and no record is written into it; the same folder at 0700 is used. */
static void test_state__open_folder_refused_with_fix(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT, want = LN_BUF_INIT;
	char *path = NULL, retry[128];

	assert_int_equal(mkdir(f->dir, 0700), 0);
	assert_int_equal(chmod(f->dir, 0777), 0);
	assert_int_equal(ln_state_dir_check(f->dir, &err), -EPERM);
	ln_buf_addf(&want, "fix: chmod 700 '%s'", f->dir);
	assert_non_null(strstr(err.buf, want.buf));
	ln_buf_reset(&err);
	assert_int_not_equal(ln_state_write_retry(&f->run, &path, &err), 0);
	assert_non_null(strstr(err.buf, want.buf));
	free(path);
	path = NULL;
	snprintf(retry, sizeof(retry), "%s/st.retry", f->dir);
	assert_int_equal(access(retry, F_OK), -1);
	/* the control: the fix given, the folder is used */
	assert_int_equal(chmod(f->dir, 0700), 0);
	ln_buf_reset(&err);
	assert_int_equal(ln_state_dir_check(f->dir, &err), 0);
	assert_int_equal(ln_state_write_retry(&f->run, &path, &err), 0);
	assert_int_equal(mode_of(path), 0600);
	free(path);
	ln_test_release(&err, &want);
}

/* A symbolic link planted as a state file (the run log) is refused, and
 * its target is left as it was; a new file is created 0600 whatever the
 * umask. */
static void test_state__planted_link_not_followed(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT, text = LN_BUF_INIT;
	char log[128], target[128];
	mode_t old = umask(0);
	int fd;

	assert_int_equal(mkdir(f->dir, 0700), 0);
	snprintf(target, sizeof(target), "%s/../victim", f->dir);
	snprintf(log, sizeof(log), "%s/st.log", f->dir);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "kept\n", 5), 5);
	close(fd);
	assert_int_equal(symlink(target, log), 0);
	fd = ln_state_open(log, O_WRONLY | O_APPEND | O_CREAT, &err);
	assert_int_equal(fd, -ELOOP);
	assert_non_null(strstr(err.buf, "does not follow links"));
	assert_int_equal(ln_file_read(target, &text, &err), 0);
	assert_string_equal(text.buf, "kept\n");
	/* the control: a plain new file is made, 0600 under umask 0 */
	assert_int_equal(unlink(log), 0);
	fd = ln_state_open(log, O_WRONLY | O_APPEND | O_CREAT, &err);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mode_of(log), 0600);
	umask(old);
	ln_test_release(&err, &text);
}

/* Each test on a fresh run of its own (setup). */
#define STATE_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

LN_TEST_MAIN(NULL, NULL,
	STATE_TEST(test_state__records_are_private_and_merged),
	STATE_TEST(test_state__cached_run_contacts_nothing),
	STATE_TEST(test_state__cached_entry_bounded),
	STATE_TEST(test_state__cached_file_bounded),
	STATE_TEST(test_state__silent_node_is_planned_against_its_last_apply),
	STATE_TEST(test_state__secrets_kept_as_fingerprints),
	STATE_TEST(test_state__apply_record_says_the_retry_file),
	STATE_TEST(test_state__silent_node_without_record_has_no_plan),
	STATE_TEST(test_state__retry_file_names_failed_nodes_and_their_targets),
	STATE_TEST(test_state__host_identity_is_pinned),
	STATE_TEST(test_state__open_folder_refused_with_fix),
	STATE_TEST(test_state__planted_link_not_followed),
)
