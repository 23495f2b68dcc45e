/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for apply's rollouts and node selection: --batch and
 * --max-fail counts (N and N%, rounding, bounds), waves (targets' nodes
 * first, spec order otherwise, sizes), and the --limit words (names,
 * ranges, @FILE, unknown names) with the retry file's ranges read back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"
#include "common/util.h"

#include "orchestrator/run/nodeset.h"
#include "orchestrator/run/rollout.h"
#include "orchestrator/spec/spec.h"

/* gpu005 exports the target every other gpu connects to; login has none. */
static const char spec_yaml[] =
	"version: 1\n"
	"cluster: waves\n"
	"ssh: { user: root }\n"
	"nodes:\n"
	"  - { name: \"gpu[001-004]\", address: \"10.0.0.[1-4]\" }\n"
	"  - { name: gpu005, address: 10.0.0.5 }\n"
	"  - { name: gpu006, address: 10.0.0.6 }\n"
	"  - { name: login, address: 10.0.0.7 }\n"
	"storage:\n"
	"  targets:\n"
	"    - nqn: nqn.2024-04.io.llmnet:gpu005.t1\n"
	"      node: gpu005\n"
	"      transport: tcp\n"
	"      address: 10.0.0.5\n"
	"      namespaces:\n"
	"        - { nsid: 1, file: /var/lib/nvmet/disk1.img, size: 1MiB }\n"
	"  initiators:\n"
	"    - { node: \"gpu[001-004]\", target: nqn.2024-04.io.llmnet:gpu005.t1 }\n"
	"    - { node: gpu006, target: nqn.2024-04.io.llmnet:gpu005.t1 }\n";

static struct ln_spec *load_spec(const char *name, const char *yaml)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;

	assert_int_equal(ln_spec_load_buf(name, yaml, strlen(yaml), &spec, &err), 0);
	ln_buf_release(&err);
	return spec;
}

static int load(void **state)
{
	*state = load_spec("waves.yaml", spec_yaml);
	return 0;
}

static int unload(void **state)
{
	ln_spec_free(*state);
	return 0;
}

static void test_rollout__count_parses_numbers_and_percentages(void **state)
{
	struct ln_count c = { 0 };

	(void)state;
	assert_int_equal(ln_count_parse("8", 1000, &c), 0);
	assert_true(c.set);
	assert_false(c.percent);
	assert_int_equal(c.n, 8);
	assert_int_equal(ln_count_parse("25%", 1000, &c), 0);
	assert_true(c.percent);
	assert_int_equal(c.n, 25);
	assert_int_equal(ln_count_parse("0", 1000, &c), 0);
	assert_int_equal(ln_count_parse("100%", 1000, &c), 0);
	/* refused: nothing, signs, junk, over the bounds */
	assert_int_equal(ln_count_parse("", 1000, &c), -EINVAL);
	assert_int_equal(ln_count_parse("-1", 1000, &c), -EINVAL);
	assert_int_equal(ln_count_parse("+1", 1000, &c), -EINVAL);
	assert_int_equal(ln_count_parse("5x", 1000, &c), -EINVAL);
	assert_int_equal(ln_count_parse("5%%", 1000, &c), -EINVAL);
	assert_int_equal(ln_count_parse("%", 1000, &c), -EINVAL);
	assert_int_equal(ln_count_parse("101%", 1000, &c), -EINVAL);
	assert_int_equal(ln_count_parse("1001", 1000, &c), -EINVAL);
	assert_int_equal(ln_count_parse(" 5", 1000, &c), -EINVAL);
}

static void parse_count(const char *count, struct ln_count *c)
{
	if (ln_count_parse(count, 1000, c) < 0)
		fail_msg("'%s' is refused", count);
}

static void test_rollout__batch_rounds_down_at_least_one(void **state)
{
	/* --batch COUNT over total nodes: waves of batch nodes */
	static const struct {
		const char *count;
		size_t total, batch;
	} cases[] = {
		{ "3", 7, 3 },
		{ "50", 7, 7 },
		{ "0", 7, 1 },
		/* 30% of 7 is 2.1: 2 (Ansible's serial rounds down) */
		{ "30%", 7, 2 },
		/* 10% of 7 is 0.7: at least one */
		{ "10%", 7, 1 },
		{ "100%", 1000, 1000 },
		{ "25%", 1000, 250 },
	};
	struct ln_count c = { 0 };
	size_t i, got;

	(void)state;
	/* unset: one wave of everything */
	assert_int_equal(ln_count_batch(&c, 7), 7);
	assert_int_equal(ln_count_batch(NULL, 7), 7);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		parse_count(cases[i].count, &c);
		got = ln_count_batch(&c, cases[i].total);
		if (got != cases[i].batch)
			fail_msg("--batch %s of %zu: %zu, not %zu", cases[i].count, cases[i].total,
				 got, cases[i].batch);
	}
}

static void test_rollout__max_fail_is_more_than(void **state)
{
	/* --max-fail COUNT, failed of a wave of size: exceeded or not */
	static const struct {
		const char *count;
		size_t failed, size;
		int exceeded;
	} cases[] = {
		{ "0", 0, 10, 0 },
		{ "0", 1, 10, 1 },
		{ "2", 2, 10, 0 },
		{ "2", 3, 10, 1 },
		/* 20% of a wave of 10 is 2: 2 is allowed, 3 is not */
		{ "20%", 2, 10, 0 },
		{ "20%", 3, 10, 1 },
		/* exact, no rounding: 25% of 3 is 0.75, so one failure exceeds it */
		{ "25%", 0, 3, 0 },
		{ "25%", 1, 3, 1 },
		/* 50% of 4 is 2 */
		{ "50%", 2, 4, 0 },
		{ "50%", 3, 4, 1 },
		{ "100%", 4, 4, 0 },
	};
	struct ln_count c = { 0 };
	size_t i;

	(void)state;
	/* unset: never stops */
	assert_false(ln_count_exceeded(&c, 10, 10));
	assert_false(ln_count_exceeded(NULL, 10, 10));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		parse_count(cases[i].count, &c);
		if (!ln_count_exceeded(&c, cases[i].failed, cases[i].size) != !cases[i].exceeded)
			fail_msg("--max-fail %s, %zu of %zu failed: exceeded should be %d",
				 cases[i].count, cases[i].failed, cases[i].size, cases[i].exceeded);
	}
}

/* The waves' nodes in order, by name, separated by spaces. */
static void assert_order(const struct ln_spec *spec, const struct ln_waves *w, const char *want)
{
	struct ln_buf got = LN_BUF_INIT;
	size_t j;

	for (j = 0; j < w->n; j++)
		ln_buf_addf(&got, "%s%s", j ? " " : "", spec->nodes[w->nodes[j]].name);
	assert_string_equal(got.buf, want);
	ln_buf_release(&got);
}

static void test_rollout__waves_put_targets_first(void **state)
{
	const struct ln_spec *spec = *state;
	struct ln_waves w;

	assert_int_equal(ln_waves_build(spec, NULL, 3, &w), 0);
	assert_int_equal(w.n, 7);
	assert_int_equal(w.n_waves, 3);
	/* gpu005 exports the target: first, though fifth in the spec; login
	 * (no storage) and the initiators keep spec order */
	assert_order(spec, &w, "gpu005 login gpu001 gpu002 gpu003 gpu004 gpu006");
	assert_int_equal(w.start[0], 0);
	assert_int_equal(w.start[1], 3);
	assert_int_equal(w.start[2], 6);
	assert_int_equal(w.start[3], 7);
	ln_waves_release(&w);
}

static void test_rollout__waves_cover_only_the_selection(void **state)
{
	const struct ln_spec *spec = *state;
	unsigned char sel[7] = { 1, 0, 1, 0, 1, 0, 0 };	/* gpu001, gpu003, gpu005 */
	struct ln_waves w;

	assert_int_equal(ln_waves_build(spec, sel, 2, &w), 0);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.n_waves, 2);
	assert_order(spec, &w, "gpu005 gpu001 gpu003");
	ln_waves_release(&w);
	/* one wave of all when the batch is the whole selection */
	assert_int_equal(ln_waves_build(spec, sel, 3, &w), 0);
	assert_int_equal(w.n_waves, 1);
	ln_waves_release(&w);
	/* nothing selected: no wave */
	memset(sel, 0, sizeof(sel));
	assert_int_equal(ln_waves_build(spec, sel, 3, &w), 0);
	assert_int_equal(w.n_waves, 0);
	ln_waves_release(&w);
}

/* c connects to b's target, b to a's: a chain written backwards; x and y
 * serve each other (a cycle) and keep spec order, after the chain. */
static const char chain_yaml[] =
	"version: 1\n"
	"cluster: chain\n"
	"ssh: { user: root }\n"
	"nodes:\n"
	"  - { name: c, address: 10.0.0.3 }\n"
	"  - { name: b, address: 10.0.0.2 }\n"
	"  - { name: a, address: 10.0.0.1 }\n"
	"  - { name: y, address: 10.0.0.5 }\n"
	"  - { name: x, address: 10.0.0.4 }\n"
	"storage:\n"
	"  targets:\n"
	"    - { nqn: \"nqn.2024-04.io.llmnet:a.t\", node: a, transport: tcp, address: 10.0.0.1,\n"
	"        namespaces: [ { nsid: 1, file: /var/lib/nvmet/a.img, size: 1MiB } ] }\n"
	"    - { nqn: \"nqn.2024-04.io.llmnet:b.t\", node: b, transport: tcp, address: 10.0.0.2,\n"
	"        namespaces: [ { nsid: 1, file: /var/lib/nvmet/b.img, size: 1MiB } ] }\n"
	"    - { nqn: \"nqn.2024-04.io.llmnet:x.t\", node: x, transport: tcp, address: 10.0.0.4,\n"
	"        namespaces: [ { nsid: 1, file: /var/lib/nvmet/x.img, size: 1MiB } ] }\n"
	"    - { nqn: \"nqn.2024-04.io.llmnet:y.t\", node: y, transport: tcp, address: 10.0.0.5,\n"
	"        namespaces: [ { nsid: 1, file: /var/lib/nvmet/y.img, size: 1MiB } ] }\n"
	"  initiators:\n"
	"    - { node: b, target: \"nqn.2024-04.io.llmnet:a.t\" }\n"
	"    - { node: c, target: \"nqn.2024-04.io.llmnet:b.t\" }\n"
	"    - { node: x, target: \"nqn.2024-04.io.llmnet:y.t\" }\n"
	"    - { node: y, target: \"nqn.2024-04.io.llmnet:x.t\" }\n";

static void test_rollout__waves_follow_chains_and_keep_cycles_in_order(void **state)
{
	struct ln_spec *spec = load_spec("chain.yaml", chain_yaml);
	struct ln_waves w;

	(void)state;
	assert_int_equal(ln_waves_build(spec, NULL, 1, &w), 0);
	assert_int_equal(w.n_waves, 5);
	assert_order(spec, &w, "a b c y x");
	ln_waves_release(&w);
	ln_spec_free(spec);
}

/* Mark words; returns the rc, the marked nodes' names in *got. */
static int mark(const struct ln_spec *spec, const char *const *words, size_t n, char *got,
		size_t size, struct ln_buf *err)
{
	unsigned char m[7] = { 0 };
	size_t i;
	int r = ln_nodeset_mark(spec, "--limit", (char *const *)words, n, m, err);

	got[0] = '\0';
	for (i = 0; i < spec->n_nodes; i++)
		if (m[i])
			snprintf(got + strlen(got), size - strlen(got), "%s%s", *got ? "," : "",
				 spec->nodes[i].name);
	return r;
}

/* words are refused (-EINVAL) with a message that holds part. */
static void mark_refused(const struct ln_spec *spec, const char *const *words, size_t n,
			 const char *part)
{
	struct ln_buf err = LN_BUF_INIT;
	char got[128];

	assert_int_equal(mark(spec, words, n, got, sizeof(got), &err), -EINVAL);
	if (!strstr(err.buf, part))
		fail_msg("'%s' not in: %s", part, err.buf);
	ln_buf_release(&err);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_rollout__limit_takes_names_ranges_and_files(void **state)
{
	const struct ln_spec *spec = *state;
	struct ln_buf err = LN_BUF_INIT;
	const char *w1[] = { "login", "gpu[002-003,006]" };
	char path[] = "/tmp/ln-limit-XXXXXX", at[64], got[128];
	const char *w2[] = { at };
	int fd;

	assert_int_equal(mark(spec, w1, 2, got, sizeof(got), &err), 0);
	assert_string_equal(got, "gpu002,gpu003,gpu006,login");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	put_file(path, "# a retry file\ngpu[001,004]  gpu005 # the target\n\nlogin,gpu006\n");
	snprintf(at, sizeof(at), "@%s", path);
	assert_int_equal(mark(spec, w2, 1, got, sizeof(got), &err), 0);
	assert_string_equal(got, "gpu001,gpu004,gpu005,gpu006,login");

	/* an unknown name, also inside a range or a file, is refused by name */
	w1[1] = "gpu[005-007]";
	mark_refused(spec, w1, 2, "--limit names 'gpu007', which is not a node of 'waves.yaml'");
	put_file(path, "gpu001 gpu099\n");
	mark_refused(spec, w2, 1, "'gpu099' in /tmp/ln-limit-");
	/* a file naming nothing, a missing file, a bad range */
	put_file(path, "# nothing\n\n");
	mark_refused(spec, w2, 1, "names no node");
	unlink(path);
	mark_refused(spec, w2, 1, "--limit @/tmp/ln-limit-");
	w1[1] = "gpu[3-1]";
	mark_refused(spec, w1, 2, "runs backwards");
	ln_buf_release(&err);
}

static void test_rollout__retry_words_are_ranges_that_read_back(void **state)
{
	const struct ln_spec *spec = *state;
	unsigned char m[7] = { 1, 1, 0, 1, 1, 0, 1 }, back[7] = { 0 };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	char *word, *save = NULL;
	const char *words[4];
	size_t n = 0;

	assert_int_equal(ln_nodeset_format(spec, m, &out), 0);
	assert_string_equal(out.buf, "gpu[001-002,004-005] login");
	for (word = strtok_r(out.buf, " ", &save); word && n < 4; word = strtok_r(NULL, " ", &save))
		words[n++] = word;
	assert_int_equal(ln_nodeset_mark(spec, "--limit", (char *const *)words, n, back, &err), 0);
	assert_memory_equal(m, back, sizeof(m));
	/* one node of a prefix stays a plain name */
	memset(m, 0, sizeof(m));
	m[5] = 1;
	ln_buf_reset(&out);
	assert_int_equal(ln_nodeset_format(spec, m, &out), 0);
	assert_string_equal(out.buf, "gpu006");
	ln_test_release(&out, &err);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_rollout__count_parses_numbers_and_percentages),
	cmocka_unit_test(test_rollout__batch_rounds_down_at_least_one),
	cmocka_unit_test(test_rollout__max_fail_is_more_than),
	cmocka_unit_test_setup_teardown(test_rollout__waves_put_targets_first, load, unload),
	cmocka_unit_test_setup_teardown(test_rollout__waves_cover_only_the_selection, load, unload),
	cmocka_unit_test(test_rollout__waves_follow_chains_and_keep_cycles_in_order),
	cmocka_unit_test_setup_teardown(test_rollout__limit_takes_names_ranges_and_files, load, unload),
	cmocka_unit_test_setup_teardown(test_rollout__retry_words_are_ranges_that_read_back, load, unload),
)
