// SPDX-License-Identifier: MIT
/* llmnet-agent `version` and `facts` on fixture trees shaped like 6.1's sysfs. */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <json-c/json.h>

#include "common/json.h"
#include "common/util.h"

#include <sys/stat.h>
#include <unistd.h>

static struct json_object *run_json(const char *root, const char *const *args, int want_rc)
{
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, perr = LN_BUF_INIT;
	struct json_object *o = NULL;
	int rc = fx_agent(root, args, NULL, &out, &err, NULL);

	if (rc != want_rc)
		fprintf(stderr, "rc %d, stderr: %s\nstdout: %s\n", rc, err.buf, out.buf);
	assert_int_equal(rc, want_rc);
	assert_int_equal(ln_json_parse(out.buf, out.len, &o, &perr), 0);
	ln_test_release(&out, &err, &perr);
	return o;
}

static const char *path_str(struct json_object *o, const char *path)
{
	char key[128];
	const char *p = path;

	while (o && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)atoi(key));
		else if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		p += n;
		if (*p == '.')
			p++;
	}
	return o ? json_object_get_string(o) : NULL;
}

/* A fact at a path and what it must read; NULL: absent. */
struct want {
	const char *path, *value;
};

static void assert_facts(struct json_object *o, const struct want *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *got = path_str(o, w[i].path);

		if (!w[i].value != !got || (got && strcmp(got, w[i].value)))
			fprintf(stderr, "fact '%s'\n", w[i].path);
		if (w[i].value)
			assert_string_equal(got, w[i].value);
		else
			assert_null(got);
	}
}

static void test_agent_facts__version(void **st)
{
	const char *args[] = { "version", NULL };
	struct json_object *o = run_json(NULL, args, 0);

	(void)st;
	assert_string_equal(path_str(o, "protocol"), "3");
	assert_string_equal(path_str(o, "agent"), "llmnet-agent");
	assert_string_equal(path_str(o, "verbs.0.name"), "version");
	assert_string_equal(path_str(o, "verbs.0.mutating"), "false");
	json_object_put(o);
}

static void test_agent_facts__target_node(void **st)
{
	static const struct want want[] = {
		{ "hostname", "te1" },
		{ "kernel", "6.1.0-27-amd64" },
		{ "product_uuid", "1f0f7b8a-0000-4000-8000-000000000001" },
		{ "host_nqn", NULL },
		/* RDMA: state names, RoCE MTU from the netdev MTU, zero GID left out */
		{ "rdma.0.device", "rxe0" },
		{ "rdma.0.ports.0.state", "ACTIVE" },
		{ "rdma.0.ports.0.phys_state", "LINK_UP" },
		{ "rdma.0.ports.0.rate_gbps", "100.0" },
		{ "rdma.0.ports.0.active_mtu", "1024" },
		{ "rdma.0.ports.0.gids.1.type", "RoCE v2" },
		{ "rdma.0.ports.0.gids.1.netdev", "eth1" },
		{ "rdma.0.ports.0.gids.2", NULL },
		{ "netdevs.0.name", "eth1" },
		{ "netdevs.0.addresses.0", "10.77.0.11/24" },
		/* NVMe: the local PCIe drive with its namespace */
		{ "nvme.0.transport", "pcie" },
		{ "nvme.0.namespaces.0.block", "nvme0n1" },
		{ "nvme.0.namespaces.0.size_bytes", "134217728" },
		/* nvmet: the foreign objects as they are, no auth in 6.1 */
		{ "nvmet.auth", "false" },
		{ "nvmet.subsystems.0.nqn", "nqn.2014-08.org.example:foreign.target" },
		{ "nvmet.subsystems.0.namespaces.0.device_path", "/srv/foreign.img" },
		{ "nvmet.ports.0.service", "4421" },
		{ "nvmet.ports.0.subsystems.0", "nqn.2014-08.org.example:foreign.target" },
		{ "modules.0", "configfs" },
		{ "gpus.count", "0" },
	};
	const char *args[] = { "facts", NULL };
	char *root = fx_build("node-target");
	struct json_object *o;

	(void)st;
	assert_non_null(root);
	o = run_json(root, args, 0);
	assert_string_equal(path_str(o, "root"), root);
	assert_facts(o, want, ARRAY_SIZE(want));
	json_object_put(o);
	fx_remove(root);
}

/* Real sysfs reaches devices through the kernel's links
 * (/sys/class/infiniband/rxe0 -> ../../devices/virtual/infiniband/rxe0):
 * facts follow them in sysfs, while llmnet's own paths never follow one. */
static void test_agent_facts__sysfs_class_links_are_followed(void **st)
{
	const char *args[] = { "facts", NULL };
	char *root = fx_build("node-target"), cmd[1024];
	struct json_object *o;

	(void)st;
	assert_non_null(root);
	snprintf(cmd, sizeof(cmd), "cd '%s/sys' && mkdir -p devices/virtual/infiniband && "
		 "mv class/infiniband/rxe0 devices/virtual/infiniband/ && "
		 "ln -s ../../devices/virtual/infiniband/rxe0 class/infiniband/rxe0", root);
	assert_int_equal(system(cmd), 0);
	o = run_json(root, args, 0);
	assert_string_equal(path_str(o, "rdma.0.device"), "rxe0");
	assert_string_equal(path_str(o, "rdma.0.ports.0.state"), "ACTIVE");
	assert_string_equal(path_str(o, "rdma.0.ports.0.gids.1.type"), "RoCE v2");
	json_object_put(o);
	fx_remove(root);
}

static void test_agent_facts__initiator_node_skips_hidden_paths(void **st)
{
	const char *args[] = { "facts", NULL };
	char *root = fx_build("node-initiator");
	struct json_object *o, *ns;

	(void)st;
	o = run_json(root, args, 0);
	assert_string_equal(path_str(o, "nvme.0.address"), "10.77.0.13");
	assert_string_equal(path_str(o, "nvme.0.service"), "4420");
	assert_string_equal(path_str(o, "nvme.0.subsysnqn"), "nqn.2014-08.org.example:other.target");
	assert_true(json_object_object_get_ex(json_object_array_get_idx(
		json_object_object_get(o, "nvme"), 0), "namespaces", &ns));
	assert_int_equal(json_object_array_length(ns), 1);
	assert_string_equal(path_str(o, "nvme.0.namespaces.0.block"), "nvme0n1");
	assert_string_equal(path_str(o, "rdma"), "[ ]");
	assert_string_equal(path_str(o, "netdevs.0.mtu"), "9000");
	assert_string_equal(path_str(o, "nvmet.configfs"), "false");
	json_object_put(o);
	fx_remove(root);
}

/* A host identity file that is not valid is no host identity: host_nqn
 * and host_id null, a warning naming the file; a valid pair as it is. */
static void test_agent_facts__host_identity_checked(void **st)
{
	const char *args[] = { "facts", NULL };
	char *root = fx_build("node-initiator"), p[4096];
	struct json_object *o;

	(void)st;
	snprintf(p, sizeof(p), "%s/etc/nvme", root);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(fx_put(root, "/etc/nvme/hostnqn", "nqn.2014-08.org.example:h1\n"), 0);
	assert_int_equal(fx_put(root, "/etc/nvme/hostid",
				"1f0f7b8a-0000-4000-8000-000000000002\n"), 0);
	o = run_json(root, args, 0);
	assert_string_equal(path_str(o, "host_nqn"), "nqn.2014-08.org.example:h1");
	assert_string_equal(path_str(o, "host_id"), "1f0f7b8a-0000-4000-8000-000000000002");
	json_object_put(o);
	assert_int_equal(fx_put(root, "/etc/nvme/hostnqn",
				"nqn.2014-08.org.example:h1,dhchap_secret=x\n"), 0);
	o = run_json(root, args, 0);
	assert_null(path_str(o, "host_nqn"));
	assert_null(path_str(o, "host_id"));
	assert_non_null(strstr(path_str(o, "warnings.0"),
			       "/etc/nvme/hostnqn is not a valid host NQN: ',' at offset 26"));
	json_object_put(o);
	fx_remove(root);
}

static void test_agent_facts__gpus_from_proc(void **st)
{
	const char *args[] = { "facts", NULL };
	char *root = fx_build("node-initiator"), p[4096];
	struct ln_buf e = LN_BUF_INIT;
	struct json_object *o;
	const char *info = "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 42\n";
	int i;

	(void)st;
	for (i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/proc/driver/nvidia/gpus/0000:0%d:00.0", root, i + 1);
		assert_int_equal(ln_mkdir_p(p, 0755, &e), 0);
		strcat(p, "/information");
		assert_int_equal(ln_file_write_atomic(p, info, strlen(info), 0644, &e), 0);
	}
	o = run_json(root, args, 0);
	assert_string_equal(path_str(o, "gpus.count"), "2");
	assert_string_equal(path_str(o, "gpus.source"), "proc");
	assert_string_equal(path_str(o, "gpus.models.1"), "NVIDIA H100 80GB HBM3");
	json_object_put(o);
	ln_buf_release(&e);
	fx_remove(root);
}

/* facts --counters: rxe's hw_counters through the rdma_rxe table; a
 * counter the port lacks is null, never 0; nothing but the counters. */
static void test_agent_facts__counters_rxe(void **st)
{
	const char *args[] = { "facts", "--counters", "rxe0/1", "--counters", "rxe0/2", NULL };
	char *root = fx_build("node-target"), p[4096];
	struct json_object *o;
	static const struct want w[] = {
		{ "counters.0.port", "rxe0/1" },
		{ "counters.0.driver", "rdma_rxe" },
		{ "counters.0.errors.rcvd_seq_err", "3" },
		{ "counters.0.errors.completer_retry_err", "2" },
		{ "counters.0.errors.out_of_seq_request", "0" },
		{ "counters.0.errors.send_err", NULL },
		{ "counters.0.other.sent_pkts", "48211" },
		{ "counters.0.other.ack_deferred", NULL },
		{ "counters.0.reason", NULL },
		{ "counters.1.port", "rxe0/2" },
		{ "counters.1.reason", "no such RDMA port" },
		{ "counters.1.errors", NULL },
		{ "rdma", NULL },
		{ "nvmet", NULL },
	};
	struct json_object *v;

	(void)st;
	snprintf(p, sizeof(p), "%s/sys/class/infiniband/rxe0/ports/1/hw_counters/send_err", root);
	assert_int_equal(unlink(p), 0);
	o = run_json(root, args, 0);
	assert_facts(o, w, ARRAY_SIZE(w));
	/* present, and null: not available */
	v = json_object_object_get(json_object_array_get_idx(json_object_object_get(o, "counters"), 0),
				   "errors");
	assert_true(json_object_object_get_ex(v, "send_err", &v));
	assert_null(v);
	json_object_put(o);
	fx_remove(root);
}

/* mlx5: the driver from device/driver, the PMA's counters/ and the
 * driver's hw_counters/; another driver has no table. */
static void test_agent_facts__counters_mlx5_and_unknown(void **st)
{
	const char *args[] = { "facts", "--counters", "mlx5_0/1", "--counters", "hfi1_0/1", NULL };
	char *root = fx_build("node-initiator"), cmd[2048];
	struct json_object *o;
	static const struct want w[] = {
		{ "counters.0.driver", "mlx5_core" },
		{ "counters.0.errors.port_rcv_errors", "7" },
		{ "counters.0.errors.packet_seq_err", "41" },
		{ "counters.0.errors.local_ack_timeout_err", NULL },
		{ "counters.0.other.np_cnp_sent", "5" },
		{ "counters.1.driver", "hfi1" },
		{ "counters.1.reason", "no counter table for this driver" },
	};

	(void)st;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/sys' && mkdir -p bus/pci/drivers/mlx5_core bus/pci/drivers/hfi1 "
		 "devices/pci0000:00/0000:00:03.0 devices/pci0000:00/0000:00:04.0 && "
		 "for d in mlx5_0,mlx5_core,03 hfi1_0,hfi1,04; do n=${d%%%%,*}; s=${d##*,}; "
		 "drv=${d#*,}; drv=${drv%%,*}; b=class/infiniband/$n; "
		 "mkdir -p $b/ports/1/counters $b/ports/1/hw_counters && "
		 "ln -s ../../../devices/pci0000:00/0000:00:$s.0 $b/device && "
		 "ln -s ../../../bus/pci/drivers/$drv devices/pci0000:00/0000:00:$s.0/driver "
		 "|| exit 1; done && "
		 "echo 7 > class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors && "
		 "echo 41 > class/infiniband/mlx5_0/ports/1/hw_counters/packet_seq_err && "
		 "echo 5 > class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent", root);
	assert_int_equal(system(cmd), 0);
	o = run_json(root, args, 0);
	assert_facts(o, w, ARRAY_SIZE(w));
	json_object_put(o);
	fx_remove(root);
}

static void test_agent_facts__counters_usage(void **st)
{
	const char *bad[][4] = {
		{ "facts", "--counters", "rxe0", NULL },
		{ "facts", "--counters", "../x/1", NULL },
		{ "facts", "--counters", "rxe0/0", NULL },
		{ "facts", "--counters", NULL, NULL },
		{ "facts", "--verbose", "rxe0/1", NULL },
	};
	size_t i;

	(void)st;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct json_object *o = run_json(NULL, bad[i], 64);

		assert_string_equal(path_str(o, "error.code"), "usage");
		json_object_put(o);
	}
}

static void test_agent_facts__bad_root_and_verb(void **st)
{
	const char *facts[] = { "facts", NULL }, *nope[] = { "frobnicate", NULL };
	struct json_object *o;

	(void)st;
	o = run_json("relative/root", facts, 64);
	assert_string_equal(path_str(o, "error.code"), "usage");
	json_object_put(o);
	o = run_json("/nonexistent-llmnet-root", facts, 64);
	assert_non_null(strstr(path_str(o, "error.message"), "not a directory"));
	json_object_put(o);
	o = run_json(NULL, nope, 64);
	assert_string_equal(path_str(o, "error.code"), "usage");
	json_object_put(o);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_facts__version),
	cmocka_unit_test(test_agent_facts__target_node),
	cmocka_unit_test(test_agent_facts__sysfs_class_links_are_followed),
	cmocka_unit_test(test_agent_facts__initiator_node_skips_hidden_paths),
	cmocka_unit_test(test_agent_facts__gpus_from_proc),
	cmocka_unit_test(test_agent_facts__host_identity_checked),
	cmocka_unit_test(test_agent_facts__bad_root_and_verb),
	cmocka_unit_test(test_agent_facts__counters_rxe),
	cmocka_unit_test(test_agent_facts__counters_mlx5_and_unknown),
	cmocka_unit_test(test_agent_facts__counters_usage),
)
