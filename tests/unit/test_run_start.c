/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for a command's start (orchestrator/run/start.c): what a
 * command's row needs is all that is set up, and whatever stops the start
 * before any node (the secrets, the sign-in key, a name in --limit) comes
 * back as notes and an exit code, never printed; and the exit code a run
 * ends with (ln_run_exit, run.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "common/error.h"
#include "orchestrator/run/start.h"

/* Two nodes, a target with DH-HMAC-CHAP whose key folder does not exist,
 * and a sign-in key that does not either. */
static const char spec_yaml[] =
	"version: 1\n"
	"cluster: rs\n"
	"ssh: { user: root, identity: /nonexistent/llmnet-test-key }\n"
	"nodes: [ { name: \"n[1-2]\", address: \"10.0.0.[1-2]\" } ]\n"
	"storage:\n"
	"  targets:\n"
	"    - { nqn: nqn.2024-04.io.llmnet:n1.t1, node: n1, transport: tcp,\n"
	"        address: 10.0.0.1, dhchap: { key_dir: /nonexistent/llmnet-test-keys },\n"
	"        namespaces: [ { nsid: 1, file: /var/lib/nvmet/disk1.img, size: 1MiB } ] }\n"
	"  initiators: [ { node: n2, target: nqn.2024-04.io.llmnet:n1.t1 } ]\n";

/* Each start test: the spec, a zeroed run, notes, the command's options. */
struct fx {
	struct ln_spec *spec;
	struct ln_run run;
	struct ln_notes notes;
	struct ln_run_opts o;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ln_buf err = LN_BUF_INIT;

	assert_non_null(f);
	assert_int_equal(ln_spec_load_buf("rs.yaml", spec_yaml, strlen(spec_yaml), &f->spec, &err),
			 0);
	f->o.command = "test";
	ln_buf_release(&err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	/* whatever the start did not reach, nothing was set up */
	assert_null(f->run.nodes);
	ln_notes_release(&f->notes);
	ln_run_release(&f->run);
	ln_spec_free(f->spec);
	free(f);
	return 0;
}

static void test_run_start__nothing_needed_sets_up_nothing(void **state)
{
	struct fx *f = *state;

	assert_int_equal(ln_run_start(&f->run, f->spec, 0, &f->o, &f->notes), LN_EXIT_OK);
	assert_int_equal(f->notes.n, 0);
	assert_null(f->run.secrets);
}

/* The secrets are read first: a missing one stops the start with the
 * loader's problems said as they are, then the error, nothing else set
 * up (the sign-in key, also missing, is not even looked at). */
static void test_run_start__missing_secrets_stop_before_any_node(void **state)
{
	struct fx *f = *state;
	const struct ln_note *last;
	int code;

	code = ln_run_start(&f->run, f->spec, LN_NEED_SECRETS | LN_NEED_FACTS, &f->o, &f->notes);
	assert_true(code == LN_EXIT_SPEC || code == LN_EXIT_FAILED);
	assert_true(f->notes.n >= 1);
	last = &f->notes.v[f->notes.n - 1];
	assert_int_equal(last->level, LN_LOG_ERROR);
	assert_string_equal(last->text, "the DH-HMAC-CHAP secrets of spec 'rs.yaml' are not "
					"usable; no node was contacted");
	if (f->notes.n > 1)
		assert_int_equal(f->notes.v[0].level, LN_NOTE_PLAIN);
}

/* Without the secrets among its needs (validate, teardown), the same
 * spec gets as far as the sign-in key, read once before any node. */
static void test_run_start__unreadable_key_is_a_spec_error(void **state)
{
	struct fx *f = *state;

	assert_int_equal(ln_run_start(&f->run, f->spec, LN_NEED_FACTS, &f->o, &f->notes),
			 LN_EXIT_SPEC);
	assert_int_equal(f->notes.n, 1);
	assert_int_equal(f->notes.v[0].level, LN_LOG_ERROR);
	assert_non_null(strstr(f->notes.v[0].text, "/nonexistent/llmnet-test-key"));
	assert_non_null(strstr(f->notes.v[0].text, "; no node was contacted"));
}

/* A run's exit code: the worst of its nodes' states, and of what the
 * command found itself. */
static void test_run_start__run_exit_merges_the_nodes(void **state)
{
	struct ln_node_run nodes[2];
	struct ln_run run;

	(void)state;
	memset(&run, 0, sizeof(run));
	memset(nodes, 0, sizeof(nodes));
	run.nodes = nodes;
	run.n = 2;
	run.nodes[0].state = LN_NODE_OK;
	run.nodes[1].state = LN_NODE_OK;
	assert_int_equal(ln_run_exit(&run, LN_EXIT_OK), LN_EXIT_OK);
	assert_int_equal(ln_run_exit(&run, LN_EXIT_CHANGES), LN_EXIT_CHANGES);
	run.nodes[1].state = LN_NODE_UNREACHABLE;
	assert_int_equal(ln_run_exit(&run, LN_EXIT_FAILED), LN_EXIT_UNREACHABLE);
	run.nodes[0].state = LN_NODE_FAILED;
	assert_int_equal(ln_run_exit(&run, LN_EXIT_OK), LN_EXIT_AGENT);
}

/* Notes keep their order and levels; a multi-line one stays whole. */
static void test_run_start__notes_keep_order(void **state)
{
	struct ln_notes notes = LN_NOTES_INIT;
	size_t i;

	(void)state;
	ln_notes_add(&notes, LN_NOTE_PLAIN, "%s", "a.yaml:1:1: one\na.yaml:2:1: two");
	for (i = 0; i < 20; i++)
		ln_notes_add(&notes, LN_LOG_WARN, "warning %zu", i);
	assert_int_equal(notes.n, 21);
	assert_string_equal(notes.v[0].text, "a.yaml:1:1: one\na.yaml:2:1: two");
	assert_string_equal(notes.v[20].text, "warning 19");
	assert_int_equal(notes.v[20].level, LN_LOG_WARN);
	ln_notes_release(&notes);
	assert_int_equal(notes.n, 0);
	assert_null(notes.v);
}

#define START_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

LN_TEST_MAIN(NULL, NULL,
	START_TEST(test_run_start__nothing_needed_sets_up_nothing),
	START_TEST(test_run_start__missing_secrets_stop_before_any_node),
	START_TEST(test_run_start__unreadable_key_is_a_spec_error),
	cmocka_unit_test(test_run_start__run_exit_merges_the_nodes),
	cmocka_unit_test(test_run_start__notes_keep_order),
)
