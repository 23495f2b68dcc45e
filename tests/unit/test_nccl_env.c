/* SPDX-License-Identifier: MIT */
/*
 * The NCCL environment policy (common/nccl_env.c) that lint and the agent
 * share: allowed names, the refused ones with their reason, and the
 * value, interface and port-list syntaxes the probe's options take.
 */
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/nccl_env.h"

static void refused(const char *name, const char *why)
{
	struct ln_buf b = LN_BUF_INIT;

	assert_int_equal(ln_nccl_env_check(name, &b), -1);
	if (!strstr(b.buf, why))
		fail_msg("'%s': want '%s' in '%s'", name, why, b.buf);
	ln_buf_release(&b);
}

static void test_nccl_env__names(void **state)
{
	struct ln_buf b = LN_BUF_INIT;
	const char *n;
	size_t i;

	(void)state;
	assert_int_equal(ln_nccl_env_check("NCCL_ALGO", &b), 0);
	assert_int_equal(ln_nccl_env_check("NCCL_IB_TC", &b), 0);
	assert_int_equal(b.len, 0);
	refused("NCCL_NET_PLUGIN", "makes NCCL load code");
	refused("NCCL_TUNER_PLUGIN", "makes NCCL load code");
	refused("NCCL_DEBUG_FILE", "makes NCCL write a file");
	refused("NCCL_TOPO_DUMP_FILE", "makes NCCL write a file");
	refused("NCCL_TOPO_FILE", "makes NCCL read a file");
	refused("NCCL_IB_HCA", "set by llmnet on each node");
	refused("NCCL_SOCKET_IFNAME", "socket_ifname");
	refused("LD_PRELOAD", "not on llmnet's allow-list");
	refused("NCCL_algo", "not on llmnet's allow-list");
	refused("NCCL_ALGO ", "not on llmnet's allow-list");
	/* the list: NCCL_* names, none naming a file, a plugin or a path */
	for (i = 0; (n = ln_nccl_env_allowed(i)); i++) {
		assert_int_equal(strncmp(n, "NCCL_", 5), 0);
		assert_null(strstr(n, "FILE"));
		assert_null(strstr(n, "PLUGIN"));
		assert_null(strstr(n, "PATH"));
		assert_int_equal(ln_nccl_env_check(n, &b), 0);
	}
	assert_true(i > 30);
	ln_buf_release(&b);
}

static void test_nccl_env__syntax(void **state)
{
	static const char *const values_ok[] = { "Ring,Tree", "^LL128", NULL };
	static const char *const values_bad[] = { "", "/tmp/x.so", "a b", "$(reboot)", NULL };
	static const char *const hcas_ok[] = { "mlx5_0:1", "mlx5_0:1,mlx5_1:1,rxe.2:255", NULL };
	static const char *const hcas_bad[] = { "", "mlx5_0", "mlx5_0:", "mlx5_0:0", "mlx5_0:1,",
						":1", "-x:1", "mlx5_0:1x", "mlx5 0:1",
						"mlx5_0:1234", NULL };
	size_t i;

	(void)state;
	for (i = 0; values_ok[i]; i++)
		assert_true(ln_nccl_value_ok(values_ok[i]));
	for (i = 0; values_bad[i]; i++)
		assert_false(ln_nccl_value_ok(values_bad[i]));
	assert_true(ln_nccl_ifname_ok("^docker,lo"));
	assert_true(ln_nccl_ifname_ok("=eth0:1"));
	assert_false(ln_nccl_ifname_ok("eth0;reboot"));
	for (i = 0; hcas_ok[i]; i++)
		assert_true(ln_nccl_hca_ok(hcas_ok[i], 0));
	assert_true(ln_nccl_hca_ok("", 1));
	for (i = 0; hcas_bad[i]; i++)
		assert_false(ln_nccl_hca_ok(hcas_bad[i], 0));
}

/* mpirun -x for nccl-tests: an nccl.env pair, or one of llmnet's three
 * with its own type; each refusal beside an accepted form. And the op's
 * nccl-tests program, by the spec's op order. */
static void test_nccl_env__mpirun_x_and_programs(void **state)
{
	static const char *const ok[] = { "NCCL_ALGO=Ring", "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1",
					  "NCCL_IB_GID_INDEX=3", "NCCL_SOCKET_IFNAME=^lo,docker",
					  NULL };
	static const char *const bad[] = { "NCCL_ALGO=", "NCCL_IB_HCA=mlx5_0:1", "NCCL_IB_HCA==",
					   "NCCL_IB_GID_INDEX=1234", "NCCL_IB_GID_INDEX=x",
					   "NCCL_SOCKET_IFNAME=a b", "NCCL_NET_PLUGIN=x",
					   "NCCL_DEBUG_FILE=/tmp/x", "LD_PRELOAD=x.so", "NCCL_ALGO",
					   "=Ring", NULL };
	size_t i;

	(void)state;
	for (i = 0; ok[i]; i++)
		if (!ln_nccl_x_ok(ok[i]))
			fail_msg("'%s' refused", ok[i]);
	for (i = 0; bad[i]; i++)
		if (ln_nccl_x_ok(bad[i]))
			fail_msg("'%s' accepted", bad[i]);
	/* the probe's --env keeps to nccl.env's names: llmnet's three are refused */
	assert_true(ln_nccl_env_pair_ok("NCCL_ALGO=Ring"));
	assert_false(ln_nccl_env_pair_ok("NCCL_IB_GID_INDEX=3"));
	assert_string_equal(ln_nccl_tests_program(0), "all_reduce_perf");
	assert_string_equal(ln_nccl_tests_program(5), "alltoall_perf");
	assert_string_equal(ln_nccl_tests_program(6), "sendrecv_perf");
	assert_null(ln_nccl_tests_program(7));
	assert_true(ln_nccl_tests_named("broadcast_perf"));
	assert_false(ln_nccl_tests_named("hypercube_perf"));
	assert_false(ln_nccl_tests_named("all_reduce_perf.sh"));
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_nccl_env__names),
	cmocka_unit_test(test_nccl_env__syntax),
	cmocka_unit_test(test_nccl_env__mpirun_x_and_programs),
)
