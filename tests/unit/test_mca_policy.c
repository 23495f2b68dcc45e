/* SPDX-License-Identifier: MIT */
/*
 * The MCA policy (common/mca_policy.c) that lint and the agent share:
 * names by Open MPI major version, the deny patterns over them, values,
 * and the version read from `mpirun --version`. Table-driven: each row is
 * a name, the versions asked about and the verdict with a piece of its
 * message.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/mca_policy.h"

struct mca_case {
	const char *name;
	unsigned majors;
	int ok;
	const char *msg;	/* in the refusal; NULL when ok */
};

static const struct mca_case cases[] = {
	/* ordinary tuning, both versions */
	{ "pml", LN_OMPI_ANY, 1, NULL },
	{ "btl", LN_OMPI_4, 1, NULL },
	{ "btl", LN_OMPI_5, 1, NULL },
	{ "btl_tcp_if_include", LN_OMPI_5, 1, NULL },
	{ "oob_tcp_if_include", LN_OMPI_4, 1, NULL },
	{ "oob_tcp_if_include", LN_OMPI_5, 1, NULL },
	{ "coll_hcoll_enable", LN_OMPI_ANY, 1, NULL },
	/* renamed in 5: vader -> sm/smsc, orte_* gone, mapping defaults */
	{ "btl_vader_single_copy_mechanism", LN_OMPI_4, 1, NULL },
	{ "btl_vader_single_copy_mechanism", LN_OMPI_5, 0,
	  "is an Open MPI 4.1 name, not on llmnet's allow-list for Open MPI 5" },
	{ "btl_vader_single_copy_mechanism", LN_OMPI_ANY, 1, NULL },
	{ "smsc", LN_OMPI_5, 1, NULL },
	{ "smsc", LN_OMPI_4, 0, "is an Open MPI 5 name, not on llmnet's allow-list for Open MPI 4.1" },
	{ "orte_base_help_aggregate", LN_OMPI_5, 0, "is an Open MPI 4.1 name" },
	{ "rmaps_base_mapping_policy", LN_OMPI_4, 1, NULL },
	{ "rmaps_default_mapping_policy", LN_OMPI_4, 0, "is an Open MPI 5 name" },
	{ "btl_openib_allow_ib", LN_OMPI_5, 0, "is an Open MPI 4.1 name" },
	/* on no list */
	{ "btl_tcp_sndbuf", LN_OMPI_ANY, 0,
	  "mca 'btl_tcp_sndbuf' is not on llmnet's allow-list for Open MPI 4.1 or 5" },
	{ "opal_cuda_support", LN_OMPI_4, 0, "not on llmnet's allow-list for Open MPI 4.1 (" },
	{ "", LN_OMPI_ANY, 0, "not on llmnet's allow-list" },
	{ "pml;x", LN_OMPI_ANY, 0, "not on llmnet's allow-list" },
	{ "PML", LN_OMPI_ANY, 0, "not on llmnet's allow-list" },
	/* denied: launches, loads code, touches files (issue 12) */
	{ "plm_rsh_agent", LN_OMPI_ANY, 0,
	  "mca 'plm_rsh_agent' is refused: it sets how the rsh launcher starts programs on "
	  "the nodes ('plm_rsh_*'); llmnet passes no parameter that launches or loads code or "
	  "touches files" },
	{ "plm_rsh_args", LN_OMPI_4, 0, "('plm_rsh_*')" },
	{ "orte_launch_agent", LN_OMPI_4, 0, "('orte_launch_agent')" },
	{ "prte_launch_agent", LN_OMPI_5, 0, "('prte_*launch*')" },
	{ "mca_base_param_files", LN_OMPI_ANY, 0, "reads more parameters from files" },
	{ "mca_base_component_path", LN_OMPI_ANY, 0, "loads components (code) from a path" },
	{ "btl_sm_backing_directory", LN_OMPI_5, 0, "('btl_*_backing_directory')" },
	{ "btl_vader_backing_directory", LN_OMPI_4, 0, "('btl_*_backing_directory')" },
	{ "mca_base_env_list", LN_OMPI_ANY, 0, "LD_PRELOAD and the like) ('*env*')" },
	{ "orte_default_hostfile", LN_OMPI_4, 0, "('*hostfile*')" },
	{ "pmix_exec_fix", LN_OMPI_ANY, 0, "('*exec*')" },
	{ "hwloc_base_preload", LN_OMPI_ANY, 0, "('*preload*')" },
	{ "opal_plugin_x", LN_OMPI_ANY, 0, "('*plugin*')" },
	{ "orte_fork_agent", LN_OMPI_4, 0, "('*_agent')" },
	{ "pml_ucx_args", LN_OMPI_ANY, 0, "('*_args')" },
	{ "opal_prefix", LN_OMPI_ANY, 0, "('*_prefix')" },
	{ "pmix_base_path", LN_OMPI_ANY, 0, "('*_path')" },
	{ "prte_tmpdir_base", LN_OMPI_5, 0, "('*tmpdir*')" },
	{ "orte_tmpdir_base", LN_OMPI_4, 0, "('*tmpdir*')" },
	{ "prte_output_dir", LN_OMPI_5, 0, "names a directory on the node ('*_dir*')" },
	{ "opal_cuda_support_file", LN_OMPI_ANY, 0, "('*_file*')" },
	{ "coll_tuned_dynamic_rules_filename", LN_OMPI_4, 0, "('*_file*')" },
};

static void test_mca_policy__names_by_version(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mca_case *c = &cases[i];
		struct ln_buf why = LN_BUF_INIT;
		int r = ln_mca_check(c->name, c->majors, &why);

		if (c->ok && (r != 0 || why.len))
			fail_msg("'%s' (versions %u) refused: %s", c->name, c->majors, why.buf);
		if (!c->ok && (r == 0 || !strstr(why.buf, c->msg)))
			fail_msg("'%s' (versions %u): got %d '%s', want a refusal with '%s'",
				 c->name, c->majors, r, why.buf, c->msg);
		ln_buf_release(&why);
	}
}

/* The lists and the patterns never disagree: no allowed name matches a
 * deny pattern, every entry holds for a known version, none twice. */
static void test_mca_policy__lists_are_consistent(void **state)
{
	const char *name, *pat, *why, *other;
	struct ln_buf w = LN_BUF_INIT;
	unsigned majors;
	size_t i, j, n4 = 0, n5 = 0;

	(void)state;
	for (i = 0; (name = ln_mca_allowed(i, &majors)); i++) {
		assert_true(majors && !(majors & ~LN_OMPI_ANY));
		n4 += !!(majors & LN_OMPI_4);
		n5 += !!(majors & LN_OMPI_5);
		for (j = 0; (pat = ln_mca_denied(j, &why)); j++)
			if (!fnmatch(pat, name, 0))
				fail_msg("allowed '%s' matches deny pattern '%s'", name, pat);
		for (j = 0; (other = ln_mca_allowed(j, NULL)); j++)
			if (j != i && !strcmp(other, name))
				fail_msg("'%s' listed twice", name);
		assert_int_equal(ln_mca_check(name, majors, &w), 0);
	}
	ln_buf_release(&w);
	assert_true(n4 >= 10 && n5 >= 10);
	for (j = 0; (pat = ln_mca_denied(j, &why)); j++)
		assert_true(why && *why);
	assert_true(j >= 18);
}

static void test_mca_policy__values(void **state)
{
	static const struct {
		const char *v;
		int ok;
	} vals[] = {
		{ "ob1", 1 }, { "self,vader,tcp", 1 }, { "^openib,tcp", 1 }, { "10.0.0.0/8", 1 },
		{ "0", 1 }, { "", 0 }, { "eth0 eth1", 0 }, { "a;b", 0 }, { "$(x)", 0 },
		{ "x'y", 0 }, { "a\nb", 0 },
	};
	char big[300];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		if (ln_mca_value_ok(vals[i].v) != vals[i].ok)
			fail_msg("value '%s': want %d", vals[i].v, vals[i].ok);
	memset(big, 'a', sizeof(big));
	big[255] = '\0';
	assert_int_equal(ln_mca_value_ok(big), 1);
	big[255] = 'a';
	big[256] = '\0';
	assert_int_equal(ln_mca_value_ok(big), 0);
}

static void test_mca_policy__version_from_mpirun(void **state)
{
	static const struct {
		const char *out;
		unsigned bit;
		int major;
	} vs[] = {
		{ "mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n",
		  LN_OMPI_4, 4 },
		{ "mpirun (Open MPI) 5.0.7\n\nReport bugs to https://www.open-mpi.org/community/help/\n",
		  LN_OMPI_5, 5 },
		{ "prterun (Open MPI) 5.0.2\n", LN_OMPI_5, 5 },
		{ "mpirun (Open MPI) 3.1.3\n", 0, 3 },
		{ "HYDRA build details:\n    Version:                                 4.0.2\n", 0, 0 },
		{ "mpirun (Open MPI) x.1\n", 0, 0 },
		{ "", 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		int major = -1;

		assert_int_equal(ln_mca_ompi_version(vs[i].out, &major), vs[i].bit);
		assert_int_equal(major, vs[i].major);
	}
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_mca_policy__names_by_version),
	cmocka_unit_test(test_mca_policy__lists_are_consistent),
	cmocka_unit_test(test_mca_policy__values),
	cmocka_unit_test(test_mca_policy__version_from_mpirun),
)
