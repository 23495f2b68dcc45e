// SPDX-License-Identifier: MIT
/*
 * facts.topology (agents/agent/run/topology.c, peermem.c, kernel/pciconf.c)
 * on the GPU fixture trees (tests/fixtures/topo): PCIe paths, bridge kinds,
 * ACS on exactly the faulty port, NUMA, IOMMU, peer memory and why; the
 * committed facts JSON is current; hostile config spaces end, bounded.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <json-c/json.h>

#include "agents/agent/kernel/pciconf.h"
#include "common/json.h"
#include "orchestrator/transport/answer.h"

#define TOPO_DIR FIXTURES_DIR "/topo"

/* Build a tree file into a new temp dir (fx_remove removes it). */
static char *topo_build(const char *tree)
{
	char tmpl[] = "/tmp/llmnet-agent-test.XXXXXX", cmd[2048];
	char *dir = mkdtemp(tmpl);

	assert_non_null(dir);
	snprintf(cmd, sizeof(cmd), "%s/agent/build-tree.sh %s %s", FIXTURES_DIR, tree, dir);
	assert_int_equal(system(cmd), 0);
	return strdup(dir);
}

/* The facts answer on root. */
static struct json_object *facts_on(const char *root)
{
	const char *args[] = { "facts", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, perr = LN_BUF_INIT;
	struct json_object *o = NULL;
	int rc = fx_agent(root, args, NULL, &out, &err, NULL);

	if (rc)
		fprintf(stderr, "facts rc %d: %s\n", rc, err.buf);
	assert_int_equal(rc, 0);
	assert_int_equal(ln_json_parse(out.buf, out.len, &o, &perr), 0);
	ln_test_release(&out, &err, &perr);
	return o;
}

/* The facts of the named topology fixture. */
static struct json_object *topo_facts(const char *name)
{
	char tree[1024], *root;
	struct json_object *o;

	snprintf(tree, sizeof(tree), "%s/%s.tree", TOPO_DIR, name);
	root = topo_build(tree);
	o = facts_on(root);
	fx_remove(root);
	return o;
}

/* The value at a dotted path ("topology.gpus.3.path.0.type"; a number
 * steps into an array); NULL when absent or null. */
static struct json_object *at(struct json_object *o, const char *path)
{
	char copy[256], *part, *save = NULL;

	snprintf(copy, sizeof(copy), "%s", path);
	for (part = strtok_r(copy, ".", &save); o && part; part = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t)strtoul(part, NULL, 10));
		else
			o = ln_json_at(o, part);
	}
	return o;
}

static const char *s_at(struct json_object *o, const char *path)
{
	struct json_object *v = at(o, path);

	return v ? json_object_get_string(v) : NULL;
}

static int64_t i_at(struct json_object *o, const char *path)
{
	struct json_object *v = at(o, path);

	assert_non_null(v);
	return json_object_get_int64(v);
}

static size_t n_at(struct json_object *o, const char *path)
{
	struct json_object *v = at(o, path);

	assert_true(v && json_object_is_type(v, json_type_array));
	return json_object_array_length(v);
}

/* The NIC entry named dev. */
static struct json_object *nic(struct json_object *facts, const char *dev)
{
	struct json_object *nics = at(facts, "topology.nics");
	size_t i;

	for (i = 0; nics && i < json_object_array_length(nics); i++)
		if (!strcmp(s_at(json_object_array_get_idx(nics, i), "device"), dev))
			return json_object_array_get_idx(nics, i);
	fail_msg("no NIC '%s'", dev);
	return NULL;
}

/* Every bridge with an ACS redirect bit on, over all GPU and NIC paths,
 * as "OWNER@BUS" lines. */
static void redirects(struct json_object *facts, struct ln_buf *out)
{
	static const char *const lists[] = { "topology.gpus", "topology.nics" };
	size_t l, i, h;

	ln_buf_reset(out);
	for (l = 0; l < 2; l++) {
		struct json_object *arr = at(facts, lists[l]);

		for (i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *d = json_object_array_get_idx(arr, i), *p = at(d, "path");

			for (h = 0; h < json_object_array_length(p); h++) {
				struct json_object *hop = json_object_array_get_idx(p, h);

				if (json_object_get_boolean(at(hop, "acs.req_redir")) ||
				    json_object_get_boolean(at(hop, "acs.cmplt_redir")) ||
				    json_object_get_boolean(at(hop, "acs.egress_ctrl")))
					ln_buf_addf(out, "%s@%s\n",
						    l ? s_at(d, "device") : s_at(d, "bus_id"),
						    s_at(hop, "bus_id"));
			}
		}
	}
}

/* The committed tests/fixtures/topo/facts/NAME.json's topology is what
 * the agent answers now (make topo-facts rewrites it). */
static void assert_committed(struct json_object *facts, const char *name)
{
	struct ln_buf b = LN_BUF_INIT, e = LN_BUF_INIT;
	struct json_object *c = NULL;
	char p[1024];

	snprintf(p, sizeof(p), "%s/facts/%s.json", TOPO_DIR, name);
	assert_int_equal(ln_file_read(p, &b, &e), 0);
	assert_int_equal(ln_json_parse(b.buf, b.len, &c, &e), 0);
	if (!json_object_equal(at(c, "topology"), at(facts, "topology")))
		fail_msg("%s is stale: run make topo-facts", p);
	json_object_put(c);
	ln_test_release(&b, &e);
}

static const char *const gpu_bus[] = { "0000:1b:00.0", "0000:43:00.0", "0000:52:00.0",
				       "0000:61:00.0", "0000:9d:00.0", "0000:c3:00.0",
				       "0000:d1:00.0", "0000:df:00.0" };
static const char *const nic_bus[] = { "0000:1c:00.0", "0000:44:00.0", "0000:53:00.0",
				       "0000:62:00.0", "0000:9e:00.0", "0000:c4:00.0",
				       "0000:d2:00.0", "0000:e0:00.0" };

/* GPU k and mlx5_k of the healthy layout: one switch, meeting at its
 * upstream port (PIX), NUMA k / 4, identity groups 20 + 2k and 21 + 2k. */
static void assert_pair(struct json_object *o, int k)
{
	struct json_object *g = at(o, "topology.gpus"), *n;
	char name[16];

	g = json_object_array_get_idx(g, (size_t)k);
	snprintf(name, sizeof(name), "mlx5_%d", k);
	n = nic(o, name);
	assert_int_equal(i_at(g, "index"), k);
	assert_string_equal(s_at(g, "bus_id"), gpu_bus[k]);
	assert_string_equal(s_at(g, "vendor"), "0x10de");
	assert_string_equal(s_at(g, "device"), "0x2330");
	assert_string_equal(s_at(n, "bus_id"), nic_bus[k]);
	assert_string_equal(s_at(n, "vendor"), "0x15b3");
	assert_string_equal(s_at(n, "device_id"), "0x1021");
	assert_int_equal(i_at(g, "numa_node"), k / 4);
	assert_int_equal(i_at(n, "numa_node"), k / 4);
	assert_string_equal(s_at(g, "host_bridge"), s_at(n, "host_bridge"));
	assert_int_equal(n_at(g, "path"), 3);
	assert_int_equal(n_at(n, "path"), 3);
	assert_string_equal(s_at(g, "path.0.type"), "root_port");
	assert_string_equal(s_at(g, "path.1.type"), "upstream");
	assert_string_equal(s_at(g, "path.2.type"), "downstream");
	assert_string_equal(s_at(n, "path.2.type"), "downstream");
	assert_string_equal(s_at(g, "path.0.bus_id"), s_at(n, "path.0.bus_id"));
	assert_string_equal(s_at(g, "path.1.bus_id"), s_at(n, "path.1.bus_id"));
	assert_string_not_equal(s_at(g, "path.2.bus_id"), s_at(n, "path.2.bus_id"));
	assert_null(at(g, "path.1.acs"));	/* an upstream port has none */
	assert_int_equal(i_at(g, "path.0.acs.ctrl"), 0);
	assert_int_equal(i_at(g, "iommu_group"), 20 + 2 * k);
	assert_int_equal(i_at(n, "iommu_group"), 21 + 2 * k);
	assert_string_equal(s_at(g, "iommu_type"), "identity");
	assert_string_equal(s_at(n, "iommu_type"), "identity");
}

static void test_agent_topology__hgx_healthy(void **st)
{
	struct json_object *o = topo_facts("hgx-h100");
	struct ln_buf r = LN_BUF_INIT;
	int k;

	(void)st;
	/* the NVSwitches (NVIDIA, class 0x0680) are no GPUs */
	assert_int_equal(n_at(o, "topology.gpus"), 8);
	assert_int_equal(n_at(o, "topology.nics"), 10);
	for (k = 0; k < 8; k++)
		assert_pair(o, k);
	assert_string_equal(s_at(o, "topology.gpus.0.path.2.bus_id"), "0000:1a:00.0");
	assert_string_equal(s_at(nic(o, "mlx5_0"), "path.2.bus_id"), "0000:1a:01.0");
	/* the storage NICs: a root port of their own, one per socket */
	assert_int_equal(n_at(nic(o, "mlx5_8"), "path"), 1);
	assert_string_equal(s_at(nic(o, "mlx5_8"), "path.0.bus_id"), "0000:2a:01.0");
	assert_string_equal(s_at(nic(o, "mlx5_8"), "path.0.type"), "root_port");
	assert_int_equal(i_at(nic(o, "mlx5_9"), "numa_node"), 1);
	assert_string_equal(s_at(nic(o, "mlx5_9"), "host_bridge"), "pci0000:ab");
	redirects(o, &r);
	assert_string_equal(r.buf, "");
	assert_string_equal(s_at(o, "topology.iommu.present"), "true");
	/* only the IOMMU and PCI parameters: the tree's command line also
	 * holds an iSCSI root's password, which never leaves the node */
	assert_string_equal(s_at(o, "topology.iommu.cmdline"), "intel_iommu=on iommu=pt");
	assert_null(strstr(json_object_to_json_string(o), "s3cret"));
	assert_string_equal(s_at(o, "topology.peer_memory.nvidia_peermem"), "false");
	assert_string_equal(s_at(o, "topology.peer_memory.nv_peer_mem"), "false");
	assert_string_equal(s_at(o, "topology.peer_memory.dmabuf.kernel"), "true");
	assert_string_equal(s_at(o, "topology.peer_memory.dmabuf.gpu_open_modules"), "true");
	assert_string_equal(s_at(o, "topology.peer_memory.dmabuf.verbs"), "true");
	assert_null(at(o, "topology.peer_memory.dmabuf.why"));
	assert_int_equal(n_at(o, "warnings"), 0);
	assert_committed(o, "hgx-h100");
	ln_buf_release(&r);
	json_object_put(o);
}

static void test_agent_topology__acs_redirect_on_one_port(void **st)
{
	struct json_object *o = topo_facts("hgx-h100-acs"), *n;
	struct ln_buf r = LN_BUF_INIT;
	int k;

	(void)st;
	/* exactly the downstream port above mlx5_3, and nothing else */
	redirects(o, &r);
	assert_string_equal(r.buf, "mlx5_3@0000:60:01.0\n");
	n = nic(o, "mlx5_3");
	assert_string_equal(s_at(n, "path.2.type"), "downstream");
	assert_int_equal(i_at(n, "path.2.acs.ctrl"), 0x1d);
	assert_string_equal(s_at(n, "path.2.acs.req_redir"), "true");
	assert_string_equal(s_at(n, "path.2.acs.cmplt_redir"), "true");
	assert_string_equal(s_at(n, "path.2.acs.egress_ctrl"), "false");
	/* GPU 3's own port is clean; the layout is the healthy one */
	assert_int_equal(i_at(o, "topology.gpus.3.path.2.acs.ctrl"), 0);
	for (k = 0; k < 8; k++)
		assert_pair(o, k);
	assert_committed(o, "hgx-h100-acs");
	ln_buf_release(&r);
	json_object_put(o);
}

static void test_agent_topology__wrong_rail_on_other_socket(void **st)
{
	struct json_object *o = topo_facts("hgx-h100-wrongrail"), *n;
	int k;

	(void)st;
	n = nic(o, "mlx5_2");
	assert_string_equal(s_at(n, "bus_id"), "0000:b1:00.0");
	assert_int_equal(i_at(n, "numa_node"), 1);
	assert_string_equal(s_at(n, "host_bridge"), "pci0000:b0");
	assert_int_equal(n_at(n, "path"), 1);
	assert_string_equal(s_at(n, "path.0.bus_id"), "0000:b0:01.0");
	assert_int_equal(i_at(o, "topology.gpus.2.numa_node"), 0);
	assert_string_equal(s_at(o, "topology.gpus.2.host_bridge"), "pci0000:4f");
	for (k = 0; k < 8; k++)
		if (k != 2)
			assert_pair(o, k);
	assert_int_equal(n_at(o, "topology.nics"), 10);
	assert_committed(o, "hgx-h100-wrongrail");
	json_object_put(o);
}

static void test_agent_topology__no_peer_memory_path(void **st)
{
	struct json_object *o = topo_facts("hgx-h100-nopeer");
	const char *why;

	(void)st;
	assert_string_equal(s_at(o, "topology.peer_memory.nvidia_peermem"), "false");
	assert_string_equal(s_at(o, "topology.peer_memory.nv_peer_mem"), "false");
	assert_string_equal(s_at(o, "topology.peer_memory.dmabuf.kernel"), "true");
	assert_string_equal(s_at(o, "topology.peer_memory.dmabuf.gpu_open_modules"), "false");
	assert_string_equal(s_at(o, "topology.peer_memory.dmabuf.verbs"), "false");
	why = s_at(o, "topology.peer_memory.dmabuf.why");
	assert_non_null(why);
	assert_non_null(strstr(why, "not the open kernel modules"));
	assert_non_null(strstr(why, "libibverbs.so.1.11.33.2 has no ibv_reg_dmabuf_mr"));
	assert_non_null(strstr(why, "no MLNX_OFED"));
	assert_non_null(strstr(why, "dma-buf is the only GPUDirect RDMA path"));
	assert_null(strstr(why, "kernel 6.1"));	/* the kernel is not a reason */
	assert_committed(o, "hgx-h100-nopeer");
	json_object_put(o);
}

/* libibverbs is read on every facts call, so only up to 1 MiB: a 2 MiB
 * one (its symbol past the bound) is not looked at, unknown with why,
 * never read whole; the control is the fixture's 4 KiB one above. */
static void test_agent_topology__verbs_read_bounded(void **st)
{
	char tree[1024], cmd[4096], *root;
	struct json_object *o;

	(void)st;
	snprintf(tree, sizeof(tree), "%s/hgx-h100.tree", TOPO_DIR);
	root = topo_build(tree);
	snprintf(cmd, sizeof(cmd), "f=%s/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0 && "
		 "truncate -s 2M $f && printf 'ibv_reg_dmabuf_mr\\000' | dd of=$f bs=1 "
		 "seek=2000000 conv=notrunc status=none", root);
	assert_int_equal(system(cmd), 0);
	o = facts_on(root);
	assert_null(at(o, "topology.peer_memory.dmabuf.verbs"));
	assert_non_null(strstr(s_at(o, "topology.peer_memory.dmabuf.why"), "file too large "
			       "(libibverbs is not looked at past 1024 KiB)"));
	json_object_put(o);
	fx_remove(root);
}

/* facts.gds on the healthy tree with GDS's pieces added by sh (the root
 * in $R), or taken away. */
static struct json_object *gds_facts(const char *sh)
{
	char tree[1024], cmd[8192], *root;
	struct json_object *o;

	snprintf(tree, sizeof(tree), "%s/hgx-h100.tree", TOPO_DIR);
	root = topo_build(tree);
	snprintf(cmd, sizeof(cmd), "R=%s; %s", root, sh);
	assert_int_equal(system(cmd), 0);
	o = facts_on(root);
	fx_remove(root);
	return o;
}

#define CUFILE_OK "mkdir -p $R/etc && printf '%s' '{\n  // cuFile config, with comments\n" \
	"  \"logging\": { \"dir\": \"//var/log\" }, // a // in a string stays\n" \
	"  \"properties\": { \"allow_compat_mode\": false,\n" \
	"    \"rdma_dev_addr_list\": [ \"10.1.0.2\", \"fd00::2\" ] }\n}\n' > $R/etc/cufile.json"

/* nvidia_fs by its module or its proc file; cufile.json parsed through
 * its comments, its flags reported; none of them: false and null. */
static void test_agent_topology__gds_facts(void **st)
{
	struct json_object *o, *k;

	(void)st;
	o = gds_facts("mkdir -p $R/sys/module/nvidia_fs && " CUFILE_OK);
	assert_string_equal(s_at(o, "gds.nvidia_fs"), "true");
	assert_string_equal(s_at(o, "gds.cufile.path"), "/etc/cufile.json");
	assert_string_equal(s_at(o, "gds.cufile.allow_compat_mode"), "false");
	assert_string_equal(s_at(o, "gds.cufile.rdma_dev_addr_list.1"), "fd00::2");
	assert_null(at(o, "gds.cufile.error"));
	/* the controller keeps all of it */
	k = ln_answer_known_facts(o);
	assert_non_null(k);
	assert_true(json_object_equal(ln_json_at(k, "gds"), ln_json_at(o, "gds")));
	json_object_put(k);
	json_object_put(o);
	o = gds_facts("mkdir -p $R/proc/driver && touch $R/proc/driver/nvidia-fs");
	assert_string_equal(s_at(o, "gds.nvidia_fs"), "true");
	assert_null(at(o, "gds.cufile"));
	json_object_put(o);
	o = gds_facts("true");
	assert_string_equal(s_at(o, "gds.nvidia_fs"), "false");
	assert_null(at(o, "gds.cufile"));
	json_object_put(o);
}

/* A cufile.json that is not JSON, a link, too large, or whose address list
 * holds something else: an error or null, never its content. */
static void test_agent_topology__gds_cufile_bad(void **st)
{
	struct json_object *o;

	(void)st;
	o = gds_facts("mkdir -p $R/etc && echo '{ \"properties\": ' > $R/etc/cufile.json");
	assert_string_equal(s_at(o, "gds.cufile.error"), "is not JSON (with // comments) holding "
			    "an object");
	assert_null(at(o, "gds.cufile.allow_compat_mode"));
	json_object_put(o);
	o = gds_facts(CUFILE_OK " && mv $R/etc/cufile.json $R/etc/real.json && "
		      "ln -s real.json $R/etc/cufile.json");
	assert_non_null(strstr(s_at(o, "gds.cufile.error"), "cannot be read"));
	assert_null(at(o, "gds.cufile.rdma_dev_addr_list"));
	json_object_put(o);
	o = gds_facts(CUFILE_OK " && head -c 70000 /dev/zero | tr '\\0' ' ' >> $R/etc/cufile.json");
	assert_non_null(strstr(s_at(o, "gds.cufile.error"), "over 64 KiB"));
	json_object_put(o);
	o = gds_facts("mkdir -p $R/etc && echo '{\"properties\":{\"rdma_dev_addr_list\":"
		      "[\"10.1.0.2\",\"$(id)\"],\"allow_compat_mode\":\"yes\"}}' > "
		      "$R/etc/cufile.json");
	assert_null(at(o, "gds.cufile.error"));
	assert_null(at(o, "gds.cufile.rdma_dev_addr_list"));
	assert_null(at(o, "gds.cufile.allow_compat_mode"));
	json_object_put(o);
}

static void test_agent_topology__gpus_without_rdma(void **st)
{
	struct json_object *o = topo_facts("gpu-no-rdma");
	int k;

	(void)st;
	assert_int_equal(n_at(o, "topology.gpus"), 4);
	assert_int_equal(n_at(o, "topology.nics"), 0);
	for (k = 0; k < 4; k++) {
		char p[64];

		snprintf(p, sizeof(p), "topology.gpus.%d.device", k);
		assert_string_equal(s_at(o, p), "0x2331");
		snprintf(p, sizeof(p), "topology.gpus.%d.numa_node", k);
		assert_int_equal(i_at(o, p), k / 2);
		snprintf(p, sizeof(p), "topology.gpus.%d.path", k);
		assert_int_equal(n_at(o, p), 1);
		/* no IOMMU: no group */
		snprintf(p, sizeof(p), "topology.gpus.%d.iommu_group", k);
		assert_null(at(o, p));
	}
	assert_string_equal(s_at(o, "topology.iommu.present"), "false");
	assert_null(at(o, "topology.peer_memory.dmabuf.verbs"));
	assert_non_null(strstr(s_at(o, "topology.peer_memory.dmabuf.why"), "no libibverbs"));
	assert_committed(o, "gpu-no-rdma");
	json_object_put(o);
}

/* An rxe device has no PCI function: the virtual shape. */
static void test_agent_topology__virtual_rdma_device(void **st)
{
	char *root = fx_build("node-target");
	struct json_object *o = facts_on(root), *n;

	(void)st;
	assert_int_equal(n_at(o, "topology.gpus"), 0);
	n = nic(o, "rxe0");
	assert_null(at(n, "bus_id"));
	assert_null(at(n, "host_bridge"));
	assert_int_equal(i_at(n, "numa_node"), -1);
	assert_int_equal(n_at(n, "path"), 0);
	assert_null(at(n, "iommu_group"));
	assert_string_equal(s_at(o, "topology.iommu.present"), "false");
	/* and the gpus fact is untouched by topology */
	assert_int_equal(i_at(o, "gpus.count"), 0);
	json_object_put(o);
	fx_remove(root);
}

/* ---- config space parsing, in process ---- */

static void put16(unsigned char *c, unsigned off, unsigned v)
{
	c[off] = (unsigned char)v;
	c[off + 1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *c, unsigned off, uint32_t v)
{
	put16(c, off, v & 0xffff);
	put16(c, off + 2, v >> 16);
}

/* A downstream port: type 1 header, PCIe capability at 0x40, AER at
 * 0x100 -> ACS at 0x148 with ctrl. */
static void good_config(unsigned char *c, unsigned ctrl)
{
	memset(c, 0, LN_PCICONF_SIZE);
	put16(c, 0x06, 0x0010);
	c[0x0e] = 0x01;
	c[0x34] = 0x40;
	c[0x40] = 0x10;
	put16(c, 0x42, 0x0062);
	put32(c, 0x100, 0x148u << 20 | 0x00020001);
	put32(c, 0x148, 0x0001000d);
	put16(c, 0x14c, 0x007f);
	put16(c, 0x14e, ctrl);
}

static void test_agent_topology__config_accepted(void **st)
{
	unsigned char c[LN_PCICONF_SIZE];
	struct ln_pciconf p;

	(void)st;
	good_config(c, 0x001d);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_string_equal(ln_pciconf_kind(&p), "downstream");
	assert_int_equal(p.acs, 1);
	assert_int_equal(p.acs_ctrl, 0x1d);
	assert_int_equal(p.acs_cap, 0x7f);
	/* the kinds */
	put16(c, 0x42, 0x0042);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_string_equal(ln_pciconf_kind(&p), "root_port");
	put16(c, 0x42, 0x0052);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_string_equal(ln_pciconf_kind(&p), "upstream");
	put16(c, 0x42, 0x0072);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_string_equal(ln_pciconf_kind(&p), "pci_bridge");
	put16(c, 0x42, 0x0002);	/* an endpoint */
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_string_equal(ln_pciconf_kind(&p), "other");
	/* conventional PCI: no PCIe capability, a type 1 header */
	c[0x40] = 0x01;
	ln_pciconf_parse(c, 256, &p);
	assert_string_equal(ln_pciconf_kind(&p), "pci_bridge");
	assert_int_equal(p.acs, 0);
}

/* The longest chains the bounds allow are still walked to their end. */
static void test_agent_topology__config_longest_chains(void **st)
{
	unsigned char c[LN_PCICONF_SIZE];
	struct ln_pciconf p;
	unsigned off;

	(void)st;
	good_config(c, 0x000c);
	/* 48 capabilities in every slot 0x40-0xfc, the PCIe one last */
	for (off = 0x40; off < 0xfc; off += 4) {
		c[off] = 0x09;	/* vendor-specific */
		c[off + 1] = (unsigned char)(off + 4);
	}
	c[0xfc] = 0x10;
	c[0xfd] = 0;
	put16(c, 0xfe, 0x0062);
	/* 959 extended capabilities 0x100-0xff8, ACS last */
	for (off = 0x100; off < 0xff8; off += 4)
		put32(c, off, (off + 4) << 20 | 0x0001000b);
	put32(c, 0xff8, 0x0001000d);
	put16(c, 0xffe, 0x000c);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_string_equal(ln_pciconf_kind(&p), "downstream");
	assert_int_equal(p.acs, 1);
	assert_int_equal(p.acs_ctrl, 0x000c);
}

static void test_agent_topology__config_hostile_bounded(void **st)
{
	unsigned char c[LN_PCICONF_SIZE];
	struct ln_pciconf p;

	(void)st;
	/* a standard cycle 0x40 -> 0x50 -> 0x40 before the PCIe capability */
	good_config(c, 0x001d);
	c[0x40] = 0x01;
	c[0x41] = 0x50;
	c[0x50] = 0x05;
	c[0x51] = 0x40;
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_int_equal(p.pcie_type, -1);
	assert_int_equal(p.acs, 0);	/* no PCIe capability: no extended list */
	/* a capability pointing at itself */
	c[0x41] = 0x40;
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_int_equal(p.pcie_type, -1);
	/* a pointer into the header (below 0x40), and all ones (a gone device) */
	good_config(c, 0);
	c[0x34] = 0x10;
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_int_equal(p.pcie_type, -1);
	memset(c, 0xff, sizeof(c));
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_int_equal(p.pcie_type, -1);
	assert_int_equal(p.acs, 0);
	/* the capability list bit off: the pointer is not followed */
	good_config(c, 0);
	put16(c, 0x06, 0);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_int_equal(p.pcie_type, -1);
	/* an extended cycle 0x100 -> 0x200 -> 0x100 without ACS */
	good_config(c, 0x001d);
	put32(c, 0x100, 0x200u << 20 | 0x00020001);
	put32(c, 0x200, 0x100u << 20 | 0x0001000b);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_string_equal(ln_pciconf_kind(&p), "downstream");
	assert_int_equal(p.acs, 0);
	/* an extended pointer below 0x100, and one at the very end */
	put32(c, 0x100, 0x0fcu << 20 | 0x00020001);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_int_equal(p.acs, 0);
	put32(c, 0x100, 0xffcu << 20 | 0x00020001);
	put32(c, 0xffc, 0x0001000d);
	ln_pciconf_parse(c, sizeof(c), &p);
	assert_int_equal(p.acs, 0);
	/* short reads: ACS only from a whole 4096-byte space */
	good_config(c, 0x001d);
	ln_pciconf_parse(c, 4095, &p);
	assert_string_equal(ln_pciconf_kind(&p), "downstream");
	assert_int_equal(p.acs, 0);
	ln_pciconf_parse(c, 64, &p);	/* what a non-root read gets */
	assert_int_equal(p.pcie_type, -1);
	assert_string_equal(ln_pciconf_kind(&p), "pci_bridge");
	ln_pciconf_parse(c, 0x43, &p);	/* the PCIe capability cut off */
	assert_int_equal(p.pcie_type, -1);
	ln_pciconf_parse(c, 10, &p);
	assert_int_equal(p.header_type, -1);
	assert_string_equal(ln_pciconf_kind(&p), "other");
}

/* Hostile sysfs through the agent: cyclic and short config spaces on the
 * bridges, a group link that is no number, a non-BDF entry; the answer
 * comes, with warnings, and the good bridge beside them reads right. */
static void test_agent_topology__hostile_tree(void **st)
{
	static const char tree[] =
		"f proc/modules nvidia 1 0 - Live 0x0\n"
		"d sys/kernel/iommu_groups/7\n"
		/* root port: a capability cycle 0x40 <-> 0x50 */
		"x sys/devices/pci0000:00/0000:00:01.0/config 4096 0:86802a3507041000 0x0e:01 "
		"0x34:40 0x40:0150 0x50:0540\n"
		/* switch upstream port: 64 bytes (a non-root read) */
		"x sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/config 64 0:001030c0\n"
		/* downstream port: good, ACS redirect on */
		"x sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/config 4096 "
		"0:001030c007041000 0x0e:01 0x34:40 0x40:10006200 0x100:0d000100 0x104:7f001d00\n"
		"f sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/vendor "
		"0x10de\n"
		"f sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/class "
		"0x030200\n"
		"l sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/"
		"iommu_group ../../../../../kernel/iommu_groups/x7\n"
		"l sys/bus/pci/devices/0000:03:00.0 ../../../devices/pci0000:00/0000:00:01.0/"
		"0000:01:00.0/0000:02:00.0/0000:03:00.0\n"
		"l sys/bus/pci/devices/garbage ../../../devices/pci0000:00\n"
		/* an RDMA device whose link leaves the root */
		"l sys/class/infiniband/evil0/device ../../../../../../../../../../../../..\n";
	char tp[] = "/tmp/llmnet-topo-tree.XXXXXX", *root;
	struct json_object *o;
	const char *w;
	int fd = mkstemp(tp);

	(void)st;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, tree, sizeof(tree) - 1), (ssize_t)(sizeof(tree) - 1));
	close(fd);
	root = topo_build(tp);
	unlink(tp);
	o = facts_on(root);
	fx_remove(root);
	assert_int_equal(n_at(o, "topology.gpus"), 1);
	assert_string_equal(s_at(o, "topology.gpus.0.bus_id"), "0000:03:00.0");
	assert_string_equal(s_at(o, "topology.gpus.0.path.0.type"), "pci_bridge");
	assert_null(at(o, "topology.gpus.0.path.0.acs"));
	assert_string_equal(s_at(o, "topology.gpus.0.path.1.type"), "other");
	assert_null(at(o, "topology.gpus.0.path.1.acs"));
	assert_string_equal(s_at(o, "topology.gpus.0.path.2.type"), "downstream");
	assert_int_equal(i_at(o, "topology.gpus.0.path.2.acs.ctrl"), 0x1d);
	assert_null(at(o, "topology.gpus.0.iommu_group"));
	assert_null(at(o, "topology.gpus.0.iommu_type"));
	assert_string_equal(s_at(o, "topology.nics.0.device"), "evil0");
	assert_null(at(o, "topology.nics.0.bus_id"));
	assert_int_equal(n_at(o, "topology.nics.0.path"), 0);
	assert_string_equal(s_at(o, "topology.iommu.present"), "true");
	assert_int_equal(n_at(o, "warnings"), 1);
	w = s_at(o, "warnings.0");
	assert_non_null(strstr(w, "'0000:01:00.0' reads 64 bytes"));
	json_object_put(o);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_topology__hgx_healthy),
	cmocka_unit_test(test_agent_topology__acs_redirect_on_one_port),
	cmocka_unit_test(test_agent_topology__wrong_rail_on_other_socket),
	cmocka_unit_test(test_agent_topology__no_peer_memory_path),
	cmocka_unit_test(test_agent_topology__gpus_without_rdma),
	cmocka_unit_test(test_agent_topology__verbs_read_bounded),
	cmocka_unit_test(test_agent_topology__gds_facts),
	cmocka_unit_test(test_agent_topology__gds_cufile_bad),
	cmocka_unit_test(test_agent_topology__virtual_rdma_device),
	cmocka_unit_test(test_agent_topology__config_accepted),
	cmocka_unit_test(test_agent_topology__config_longest_chains),
	cmocka_unit_test(test_agent_topology__config_hostile_bounded),
	cmocka_unit_test(test_agent_topology__hostile_tree),
)
