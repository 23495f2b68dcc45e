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
	(void)state;
	assert_true(ln_nccl_value_ok("Ring,Tree"));
	assert_true(ln_nccl_value_ok("^LL128"));
	assert_false(ln_nccl_value_ok(""));
	assert_false(ln_nccl_value_ok("/tmp/x.so"));
	assert_false(ln_nccl_value_ok("a b"));
	assert_false(ln_nccl_value_ok("$(reboot)"));
	assert_true(ln_nccl_ifname_ok("^docker,lo"));
	assert_true(ln_nccl_ifname_ok("=eth0:1"));
	assert_false(ln_nccl_ifname_ok("eth0;reboot"));
	assert_true(ln_nccl_hca_ok("mlx5_0:1", 0));
	assert_true(ln_nccl_hca_ok("mlx5_0:1,mlx5_1:1,rxe.2:255", 0));
	assert_true(ln_nccl_hca_ok("", 1));
	assert_false(ln_nccl_hca_ok("", 0));
	assert_false(ln_nccl_hca_ok("mlx5_0", 0));
	assert_false(ln_nccl_hca_ok("mlx5_0:", 0));
	assert_false(ln_nccl_hca_ok("mlx5_0:0", 0));
	assert_false(ln_nccl_hca_ok("mlx5_0:1,", 0));
	assert_false(ln_nccl_hca_ok(":1", 0));
	assert_false(ln_nccl_hca_ok("-x:1", 0));
	assert_false(ln_nccl_hca_ok("mlx5_0:1x", 0));
	assert_false(ln_nccl_hca_ok("mlx5 0:1", 0));
	assert_false(ln_nccl_hca_ok("mlx5_0:1234", 0));
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_nccl_env__names),
	cmocka_unit_test(test_nccl_env__syntax),
)
