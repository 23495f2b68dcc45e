/* SPDX-License-Identifier: MIT */
/*
 * Every key of the storage section (targets with their DH-HMAC-CHAP,
 * TLS, namespaces and hosts; initiators with their discovery and mount)
 * has an effect: what lint accepts, the agent and the controller do
 * (agree.h, part 2).
 */
#include "tests/unit/agree.h"

#define NQN1 "nqn.2024-04.io.llmnet:keys.t1"

static const struct key_case key_cases[] = {
	KC("storage", SECTION, NULL, NULL),
	KC("storage.targets", SECTION, NULL, NULL),
	KC("storage.targets.nqn", CHANGES, "keys.t1", "keys.t7"),
	KC("storage.targets.node", CHANGES, "node: alpha\n      transport: tcp",
	  "node: b4\n      transport: tcp"),
	KC("storage.targets.transport", CHANGES, "transport: tcp", "transport: rdma"),
	KC("storage.targets.address", CHANGES, "address: 10.0.0.1\n", "address: 10.0.0.8\n"),
	KC("storage.targets.service", CHANGES, "service: 4420", "service: 4422"),
	/* hosts: any leaves no host to key: t1 without dhchap on both sides */
	{ "storage.targets.hosts", CHANGES, "hosts: [b2, b3, b4]", "hosts: any", DHCHAP_T1, "" },
	KC("storage.targets.dhchap", CHANGES, DHCHAP_T1, ""),
	KC("storage.targets.dhchap.key_dir", CHANGES, "~/llmnet-keys", "~/other-keys"),
	KC("storage.targets.dhchap.hash", CHANGES, "hash: sha384", "hash: sha512"),
	KC("storage.targets.dhchap.dhgroup", CHANGES, "dhgroup: ffdhe3072", "dhgroup: null"),
	KC("storage.targets.dhchap.bidirectional", CHANGES, "bidirectional: true",
	   "bidirectional: false"),
	KC("storage.targets.tls", CHANGES, "      service: 4420\n",
	   "      service: 4420\n      tls: required\n"),
	KC("storage.targets.namespaces", SECTION, NULL, NULL),
	KC("storage.targets.namespaces.nsid", CHANGES, "nsid: 2,", "nsid: 3,"),
	KC("storage.targets.namespaces.file", CHANGES, "keys.img", "other.img"),
	KC("storage.targets.namespaces.size", CHANGES, "size: 1GiB }", "size: 2GiB }"),
	KC("storage.targets.namespaces.adopt", CHANGES, "keys.img, size: 1GiB }",
	   "keys.img, size: 1GiB, adopt: true }"),
	KC("storage.targets.namespaces.device", CHANGES, "/dev/nvme9n1", "/dev/nvme8n1"),
	KC("storage.initiators", SECTION, NULL, NULL),
	KC("storage.initiators.node", CHANGES, "- node: b3", "- node: b4"),
	KC("storage.initiators.target", CHANGES, NQN1 " # b3's", "nqn.2024-04.io.llmnet:keys.t2"),
	KC("storage.initiators.nr_io_queues", CHANGES, "nr_io_queues: 4", "nr_io_queues: 8"),
	KC("storage.initiators.queue_size", CHANGES, "queue_size: 128", "queue_size: 256"),
	KC("storage.initiators.ctrl_loss_tmo", CHANGES, "ctrl_loss_tmo: 600s", "ctrl_loss_tmo: 60s"),
	KC("storage.initiators.reconnect_delay", CHANGES, "delay: 10s", "delay: 5s"),
	/* discovery is for a target without dhchap: t1's taken off both sides */
	{ "storage.initiators.discovery", CHANGES, "      nr_io_queues: 4\n",
	  "      nr_io_queues: 4\n      discovery: true\n", DHCHAP_T1, "" },
	KC("storage.initiators.mount", CHANGES,
	  "      mount: { path: /mnt/keys, fs: ext4, format: never }\n", ""),
	KC("storage.initiators.mount.path", CHANGES, "/mnt/keys", "/mnt/other"),
	KC("storage.initiators.mount.fs", CHANGES, "fs: ext4", "fs: xfs"),
	KC("storage.initiators.mount.format", CHANGES, "format: never", "format: if-blank"),
};

static void test_agree_storage__every_key_has_an_effect(void **state)
{
	static const char *const sections[] = { "storage", NULL };
	const struct agree_cases cs = { "test_agree_storage.c", key_cases,
					 ARRAY_SIZE(key_cases) };

	(void)state;
	agree_every_key(&cs, sections);
}

LN_TEST_MAIN(agree_setup, agree_teardown,
	cmocka_unit_test(test_agree_storage__every_key_has_an_effect),
)
