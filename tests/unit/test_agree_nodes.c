/* SPDX-License-Identifier: MIT */
/*
 * Every key of the nodes section (a node, its RDMA ports and rails) has
 * an effect: what lint accepts, the agent and the controller do (agree.h,
 * part 2).
 */
#include "tests/unit/agree.h"

static const struct key_case key_cases[] = {
	KC("nodes", SECTION, NULL, NULL),
	KC("nodes.name", CHANGES, "alpha", "omega"),
	KC("nodes.address", CHANGES, "address: 127.0.1.1\n", "address: 127.0.1.9\n"),
	KC("nodes.port", CHANGES, "port: 2200", "port: 2201"),
	KC("nodes.user", CHANGES, "    user: root", "    user: ops"),
	KC("nodes.gpus", CHANGES, "gpus: 8\n    slots", "gpus: 4\n    slots"),
	KC("nodes.slots", CHANGES, "slots: 8", "slots: 2"),
	KC("nodes.rdma", SECTION, NULL, NULL),
	KC("nodes.rdma.device", CHANGES, "device: rxe0, port", "device: mlx5_0, port"),
	KC("nodes.rdma.port", CHANGES, "port: 1, ip", "port: 2, ip"),
	KC("nodes.rdma.ip", CHANGES, "ip: 10.0.0.1,", "ip: 10.0.0.9,"),
	KC("nodes.rdma.gid_index", CHANGES, "gid_index: 1", "gid_index: 0"),
	KC("nodes.rdma.min_rate", CHANGES, "min_rate: 100Gb/s", "min_rate: 200Gb/s"),
	KC("nodes.rdma.link_layer", CHANGES, "link_layer: ethernet", "link_layer: infiniband"),
	KC("nodes.rdma.mtu", CHANGES, "mtu: 1024", "mtu: 4096"),
	/* alpha's rxe1 alone on a rail: the other nodes' r1 pairs leave it out */
	/* alpha's two ports swap rails (a rail alone on one port does not lint) */
	KC("nodes.rdma.rail", CHANGES, "rail: r0 }\n      - { device: rxe1, ip: 10.0.1.1, rail: r1",
	   "rail: r1 }\n      - { device: rxe1, ip: 10.0.1.1, rail: r0"),
};

static void test_agree_nodes__every_key_has_an_effect(void **state)
{
	static const char *const sections[] = { "nodes", NULL };
	const struct agree_cases cs = { "test_agree_nodes.c", key_cases,
					 ARRAY_SIZE(key_cases) };

	(void)state;
	agree_every_key(&cs, sections);
}

LN_TEST_MAIN(agree_setup, agree_teardown,
	cmocka_unit_test(test_agree_nodes__every_key_has_an_effect),
)
