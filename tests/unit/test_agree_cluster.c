/* SPDX-License-Identifier: MIT */
/*
 * Every top-level key of the spec without a file of its own (version,
 * cluster, persist, and the ssh section) has an effect: what lint accepts,
 * the agent and the controller do (agree.h, part 2).
 */
#include "tests/unit/agree.h"

static const struct key_case key_cases[] = {
	KC("version", ONLY_VALUE, "version: 1", "version: 2"),
	KC("cluster", CHANGES, "cluster: keys", "cluster: other"),
	KC("persist", CHANGES, "persist: true", "persist: false"),
	KC("ssh", SECTION, NULL, NULL),
	KC("ssh.user", CHANGES, "ssh:\n  user: root", "ssh:\n  user: ops"),
	KC("ssh.port", CHANGES, "  port: 22\n", "  port: 2222\n"),
	KC("ssh.identity", CHANGES, "/keys/id_ed25519", "/keys/id_rsa"),
	KC("ssh.known_hosts", CHANGES, "/keys/known_hosts", "/keys/other_hosts"),
	KC("ssh.host_key_policy", CHANGES, "policy: strict", "policy: accept-new"),
	KC("ssh.jump", CHANGES, "jump: bastion", "jump: ops@bastion:2200"),
	KC("ssh.connect_timeout", CHANGES, "connect_timeout: 10s", "connect_timeout: 20s"),
	KC("ssh.timeout", CHANGES, "timeout: 100s", "timeout: 200s"),
	KC("ssh.parallel", CHANGES, "parallel: 4", "parallel: 2"),
};

static void test_agree_cluster__every_key_has_an_effect(void **state)
{
	const struct agree_cases cs = { "test_agree_cluster.c", key_cases,
					 ARRAY_SIZE(key_cases) };

	(void)state;
	agree_every_key(&cs, NULL);
}

LN_TEST_MAIN(agree_setup, agree_teardown,
	cmocka_unit_test(test_agree_cluster__every_key_has_an_effect),
)
