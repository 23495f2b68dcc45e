/* SPDX-License-Identifier: MIT */
/*
 * What lint accepts, the agent accepts (agree.h, part 1): every example
 * and every valid spec under tests/ makes agent requests the agent's own
 * validator takes; and every key or value lint refuses by name ("not
 * supported yet") is refused, with its reason.
 */
#include <glob.h>

#include "tests/unit/agree.h"

#include "agents/agent/core/request.h"

/* ---- 1. lint's specs, the agent's requests ------------------------------ */

/* Every request the controller derives from the spec at path passes the
 * agent's validator. Returns 1 when the spec is valid (and checked), 0
 * when lint refuses it. */
static int check_spec_requests(const char *path)
{
	struct ln_spec *spec = NULL;
	struct ln_buf err = LN_BUF_INIT, req = LN_BUF_INIT;
	struct ln_run r;
	size_t i;
	int phase;

	if (ln_spec_load(path, &spec, &err) < 0) {
		ln_buf_release(&err);
		return 0;
	}
	run_start(&r, spec);
	for (i = 0; i < r.n; i++)
		for (phase = LN_PHASE_FULL; phase <= LN_PHASE_TARGETS; phase++) {
			struct ln_request rq;

			ln_buf_reset(&req);
			request_text(&r, i, (enum ln_plan_phase)phase, &req);
			if (ln_request_parse(req.buf, req.len, &rq, &err) < 0)
				fail_msg("%s: node '%s' (%s phase): the agent refuses the request "
					 "lint's spec makes: %s\n%s", path, spec->nodes[i].name,
					 phase == LN_PHASE_FULL ? "full" : "targets", err.buf, req.buf);
			ln_request_release(&rq);
		}
	ln_run_release(&r);
	ln_spec_free(spec);
	ln_test_release(&req, &err);
	return 1;
}

static void test_agree_requests__examples_make_requests_the_agent_accepts(void **state)
{
	glob_t g;
	size_t i;

	(void)state;
	assert_int_equal(glob(ROOT "/examples/*.yaml", 0, NULL, &g), 0);
	assert_true(g.gl_pathc >= 4);
	for (i = 0; i < g.gl_pathc; i++)
		if (!check_spec_requests(g.gl_pathv[i]))
			fail_msg("example '%s' does not lint", g.gl_pathv[i]);
	globfree(&g);
}

/* Every file under dir (recursively) that lint accepts; *n counts them. */
static void check_tree(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4096];

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			check_tree(p, n);
		else if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml"))
			*n += (size_t)check_spec_requests(p);
	}
	closedir(d);
}

static void test_agree_requests__valid_test_specs_make_requests_the_agent_accepts(void **state)
{
	glob_t g;
	size_t i, n = 0;

	(void)state;
	check_tree(ROOT "/tests", &n);
	/* the fuzz corpus holds valid specs under hash names too */
	assert_int_equal(glob(ROOT "/tests/fuzz/corpus/*", 0, NULL, &g), 0);
	for (i = 0; i < g.gl_pathc; i++) {
		size_t len = strlen(g.gl_pathv[i]);

		if (len <= 5 || strcmp(g.gl_pathv[i] + len - 5, ".yaml"))
			n += (size_t)check_spec_requests(g.gl_pathv[i]);
	}
	globfree(&g);
	/* the corpus copies of the examples at least: a walk that finds
	 * nothing must not pass */
	assert_true(n >= 4);
}

/* ---- keys refused by name ---------------------------------------------- */

/* A key refused by name (struct refused_key): where to write it. */
struct refused_case {
	const char *table, *key;
	const char *from, *to;
};

static const struct refused_case refused_cases[] = {
	{ "dhchap", "key_file", "{ key_dir: ~/llmnet-keys,",
	  "{ key_file: /etc/llmnet/key, key_dir: ~/llmnet-keys," },
	{ "dhchap", "ctrl_key_file", "{ key_dir: ~/llmnet-keys,",
	  "{ ctrl_key_file: /etc/llmnet/key, key_dir: ~/llmnet-keys," },
	{ "slurm", "health_check", "  resume: true\n", "  resume: true\n  health_check: true\n" },
	{ "stage 'bandwidth'", "pattern", "min: 50Gb/s,", "min: 50Gb/s, pattern: bisection," },
	{ "stage 'bandwidth'", "halves", "min: 50Gb/s,", "min: 50Gb/s, halves: alpha," },
};

/* Every key refused by name and every value refused as "not supported
 * yet" is refused, with its reason. */
static void check_refused_table(const struct table *t, size_t *n)
{
	const struct refused_key *rk;
	size_t i, k;

	for (rk = t->refused; rk && rk->key; rk++) {
		const struct refused_case *c = NULL;
		struct ln_buf err = LN_BUF_INIT, want = LN_BUF_INIT;
		struct ln_spec *spec = NULL;
		char *yaml;

		for (k = 0; k < ARRAY_SIZE(refused_cases); k++)
			if (!strcmp(refused_cases[k].table, t->what) &&
			    !strcmp(refused_cases[k].key, rk->key))
				c = &refused_cases[k];
		if (!c)
			fail_msg("refused key '%s' in %s has no case in test_agree_requests.c", rk->key,
				 t->what);
		yaml = edit(c->from, c->to);
		assert_int_not_equal(ln_spec_load_buf("keys.yaml", yaml, strlen(yaml), &spec, &err), 0);
		ln_buf_addf(&want, "'%s' in %s is not supported yet: %s", rk->key, t->what, rk->why);
		if (!strstr(err.buf, want.buf))
			fail_msg("'%s' is not refused as it says: %s", rk->key, err.buf);
		free(yaml);
		ln_test_release(&err, &want);
		(*n)++;
	}
	for (i = 0; i < t->n_fields; i++) {
		const struct field *f = &t->fields[i];

		for (rk = f->later; rk && rk->key; rk++) {
			struct ln_buf err = LN_BUF_INIT, from = LN_BUF_INIT, to = LN_BUF_INIT;
			struct ln_spec *spec = NULL;
			char *yaml;

			/* an enum's refused value, or a form of value (a size range) */
			ln_buf_addf(&from, "%s: %s", f->key, f->names ? f->names[0] : f->def);
			ln_buf_addf(&to, "%s: %s", f->key, rk->key);
			yaml = edit(from.buf, to.buf);
			assert_int_not_equal(ln_spec_load_buf("keys.yaml", yaml, strlen(yaml), &spec,
							      &err), 0);
			ln_buf_reset(&from);
			ln_buf_addf(&from, "'%s' is not supported yet: %s", to.buf, rk->why);
			if (!strstr(err.buf, from.buf))
				fail_msg("'%s' is not refused as it says: %s", to.buf, err.buf);
			free(yaml);
			ln_test_release(&err, &from, &to);
			(*n)++;
		}
		if (f->sub && f->sub != spec_stage_tables)
			check_refused_table(f->sub, n);
	}
}

static void test_agree_requests__refused_keys_are_refused(void **state)
{
	size_t s, n = 0;

	(void)state;
	check_refused_table(&spec_top_table, &n);
	for (s = 0; s < LN_STAGE_COUNT; s++)
		check_refused_table(&spec_stage_tables[s], &n);
	/* dhchap's key_file and ctrl_key_file (the rest are honoured now),
	 * slurm's health_check (no health check program yet), and bandwidth's
	 * pattern and halves (bisection is not built yet) */
	assert_int_equal(n, 5);
}

LN_TEST_MAIN(agree_setup, agree_teardown,
	cmocka_unit_test(test_agree_requests__examples_make_requests_the_agent_accepts),
	cmocka_unit_test(test_agree_requests__valid_test_specs_make_requests_the_agent_accepts),
	cmocka_unit_test(test_agree_requests__refused_keys_are_refused),
)
