/* SPDX-License-Identifier: MIT */
/*
 * The devices stage's GPU placement and GPUDirect RDMA checks
 * (orchestrator/validate/stage_placement.c) on the hand-made facts of
 * tests/fixtures/topo/facts-hand/ (make.py there says what each holds):
 * the healthy HGX H100 node passes every check; each fault fails exactly
 * the pair, port or bridge it is about and nothing else; a node without
 * RDMA skips, never passes; a spec without rdma[].gpus reports and warns,
 * never fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/fileio.h"
#include "common/json.h"
#include "common/util.h"
#include "orchestrator/validate/stages.h"

#define HAND FIXTURES_DIR "/topo/facts-hand/"

static struct json_object *the_facts;

static int facts_of(void *ctx, size_t node, struct json_object **out, struct ln_buf *err)
{
	(void)ctx;
	(void)node;
	(void)err;
	*out = the_facts;
	return 0;
}

static int no_run(void *ctx, size_t node, unsigned lane, const char *const *argv,
		  const char *sha256, int timeout_s, struct ln_probe_result *out,
		  struct ln_buf *err)
{
	(void)ctx, (void)node, (void)lane, (void)argv, (void)sha256, (void)timeout_s, (void)out;
	ln_buf_addstr(err, "the devices stage runs no probe");
	return -EINVAL;
}

static const struct ln_probe_ops ops = { facts_of, no_run, NULL, NULL, NULL, NULL, NULL, NULL };

/* The spec of one node hgx1: 8 GPUs, rail NIC k serving GPU k when
 * declared, the two storage NICs serving none; extra goes into the
 * devices stage's options. */
static void spec_text(struct ln_buf *y, int declared, const char *extra)
{
	int k;

	ln_buf_addstr(y, "version: 1\ncluster: place\nnodes:\n  - name: hgx1\n"
		      "    address: 127.0.64.1\n    gpus: 8\n    rdma:\n");
	for (k = 0; k < 10; k++)
		if (declared && k < 8)
			ln_buf_addf(y, "      - { device: mlx5_%d, gpus: [%d] }\n", k, k);
		else
			ln_buf_addf(y, "      - { device: mlx5_%d }\n", k);
	ln_buf_addf(y, "validation:\n  - { stage: devices%s }\n", extra);
}

/* Validate the node with facts (taken), its devices stage only, and
 * render every placement check as "NAME: STATUS: REASON" lines into
 * out; returns the run's exit code. */
static int run_facts(struct json_object *facts, const char *yaml, struct ln_buf *out)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_validate_opts o;
	struct ln_spec *spec = NULL;
	struct ln_results res;
	size_t i;
	int code;

	if (ln_spec_load_buf("place.yaml", yaml, strlen(yaml), &spec, &err) < 0)
		fail_msg("%s", err.buf);
	the_facts = facts;
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	assert_int_equal(ln_validate_run(spec, &ops, NULL, &o, &res, &err), 0);
	for (i = 0; i < res.nchecks; i++) {
		const struct ln_check *c = &res.checks[i];

		if (!strncmp(c->name, "mlx5_", 5) && !strstr(c->name, "nearest"))
			continue;	/* the port checks of stage_devices.c */
		if (!strcmp(c->name, "gpus") && c->status == LN_ST_PASS)
			continue;
		ln_buf_addf(out, "%s: %s%s: %s\n", c->name, ln_status_name(c->status),
			    c->warning ? " (warning)" : "", c->reason ? c->reason : "");
	}
	if (getenv("LLMNET_PLACE_DUMP"))
		fputs(out->buf, stderr);
	code = ln_results_exit(&res);
	ln_results_release(&res);
	json_object_put(facts);
	ln_spec_free(spec);
	ln_buf_release(&err);
	return code;
}

static struct json_object *load(const char *file)
{
	struct ln_buf err = LN_BUF_INIT, js = LN_BUF_INIT;
	struct json_object *f = NULL;

	if (ln_file_read(file, &js, &err) < 0 || ln_json_parse(js.buf, js.len, &f, &err) < 0)
		fail_msg("%s: %s", file, err.buf);
	ln_test_release(&err, &js);
	return f;
}

static int run(const char *file, const char *yaml, struct ln_buf *out)
{
	return run_facts(load(file), yaml, out);
}

/* How many lines of out hold every one of the words. */
static int lines_with(const struct ln_buf *out, const char *a, const char *b)
{
	const char *p = out->buf, *nl;
	int n = 0;

	for (; *p; p = nl + 1) {
		char line[2048];

		nl = strchr(p, '\n');
		assert_non_null(nl);
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		n += strstr(line, a) && (!b || strstr(line, b));
	}
	return n;
}

static void test_validate_placement__healthy_node_passes(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;

	(void)state;
	spec_text(&y, 1, "");
	assert_int_equal(run(HAND "hgx-healthy.json", y.buf, &out), 0);
	/* 8 pairs of 3 checks, the peer memory, 2 storage ports reported */
	assert_int_equal(lines_with(&out, ": pass", NULL), 8 * 3 + 1 + 2);
	assert_int_equal(lines_with(&out, ": fail", NULL), 0);
	assert_int_equal(lines_with(&out, "(warning)", NULL), 0);
	assert_non_null(strstr(out.buf, "GPU3-mlx5_3/1 distance: pass: PIX: their paths meet at "
				   "bridge 0000:5a:00.0 (1 switch between them)\n"));
	assert_non_null(strstr(out.buf, "GPU3-mlx5_3/1 ACS: pass: no ACS redirect on the 2 root "
				   "and downstream port(s) where GPU 3 (0000:5c:00.0) and "
				   "mlx5_3/1 (0000:5d:00.0) meet (0 without ACS)\n"));
	assert_non_null(strstr(out.buf, "peer memory: pass: dma-buf: "));
	assert_non_null(strstr(out.buf, "GPU7-mlx5_7/1 IOMMU: pass: both ends in passthrough "
				   "(identity) IOMMU groups or in none; kernel command line: "));
	/* a storage NIC on its socket's own root port: its socket's GPUs */
	assert_non_null(strstr(out.buf, "mlx5_9/1 nearest GPUs: pass: nearest: GPU 4, GPU 5, "
				   "GPU 6, GPU 7 (NODE); declare rdma[].gpus to judge them\n"));
	ln_test_release(&y, &out);
}

/* The ACS fault: GPU 3's pair fails naming the downstream port; every
 * other pair, and the root ports above each switch, pass. */
static void test_validate_placement__acs_redirect_names_the_port(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;

	(void)state;
	spec_text(&y, 1, "");
	assert_int_equal(run(HAND "hgx-acs.json", y.buf, &out), 1);
	assert_int_equal(lines_with(&out, ": fail", NULL), 1);
	assert_non_null(strstr(out.buf, "GPU3-mlx5_3/1 ACS: fail: ACS redirects peer-to-peer "
				   "traffic between GPU 3 (0000:5c:00.0) and mlx5_3/1 (0000:5d:00.0) "
				   "up to the root complex at downstream 0000:5b:01.0 (req_redir, "
				   "cmplt_redir): "));
	assert_int_equal(lines_with(&out, "GPU3-mlx5_3/1 distance: pass", NULL), 1);
	ln_test_release(&y, &out);
}

/* The wrong rail: mlx5_3 on the other socket is SYS from GPU 3, farther
 * than PXB; with max_gpu_distance: SYS the same node passes. */
static void test_validate_placement__wrong_rail_is_sys(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;

	(void)state;
	spec_text(&y, 1, "");
	assert_int_equal(run(HAND "hgx-wrong-rail.json", y.buf, &out), 1);
	assert_int_equal(lines_with(&out, ": fail", NULL), 1);
	assert_non_null(strstr(out.buf, "GPU3-mlx5_3/1 distance: fail: GPU 3 (0000:5c:00.0) and "
				   "mlx5_3/1 (0000:e1:00.0) on node 'hgx1' are SYS apart, farther "
				   "than max_gpu_distance PXB: their paths meet only across NUMA "
				   "nodes 0 and 1 (host bridges pci0000:59 and pci0000:e0)\n"));
	/* the root ports' ACS redirect: the pair crosses the root complex anyway */
	assert_int_equal(lines_with(&out, "GPU3-mlx5_3/1 ACS: pass: no port to look at", NULL), 1);
	ln_buf_reset(&out);
	ln_buf_reset(&y);
	spec_text(&y, 1, ", max_gpu_distance: SYS");
	run(HAND "hgx-wrong-rail.json", y.buf, &out);
	assert_int_equal(lines_with(&out, "distance: fail", NULL), 0);
	assert_int_equal(lines_with(&out, "GPU3-mlx5_3/1 distance: pass: SYS", NULL), 1);
	ln_test_release(&y, &out);
}

/* No peer-memory path: the one node check fails with the reason (the
 * proprietary modules, Debian's missing peermem); the pairs pass. */
static void test_validate_placement__no_peer_memory(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;

	(void)state;
	spec_text(&y, 1, "");
	assert_int_equal(run(HAND "hgx-no-peermem.json", y.buf, &out), 1);
	assert_int_equal(lines_with(&out, ": fail", NULL), 1);
	assert_non_null(strstr(out.buf, "peer memory: fail: no peer-memory path: dma-buf is not "
				   "usable (no support in the GPU driver (open kernel modules): the "
				   "NVIDIA driver runs its proprietary kernel modules"));
	assert_non_null(strstr(out.buf, "with Debian's in-kernel RDMA drivers nvidia_peermem is "
				   "not available (it needs MOFED's peer-memory interface), so "
				   "dma-buf is the only path there\n"));
	ln_test_release(&y, &out);
}

/* A translating IOMMU group: GPU 5's pair fails, naming it and the
 * kernel command line; the others pass. */
static void test_validate_placement__iommu_translating(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;

	(void)state;
	spec_text(&y, 1, "");
	assert_int_equal(run(HAND "hgx-iommu-dma.json", y.buf, &out), 1);
	assert_int_equal(lines_with(&out, ": fail", NULL), 1);
	assert_non_null(strstr(out.buf, "GPU5-mlx5_5/1 IOMMU: fail: the IOMMU translates "
				   "peer-to-peer DMA: GPU 5 (0000:ba:00.0) is in IOMMU group 30 of "
				   "type DMA-FQ, want identity (passthrough, iommu=pt) or no IOMMU; "
				   "kernel command line: BOOT_IMAGE=/vmlinuz-6.1.0-27-amd64 "
				   "root=/dev/md0 ro\n"));
	ln_test_release(&y, &out);
}

/* GPUs and no RDMA: skipped with the reason, never passed. */
static void test_validate_placement__gpus_without_rdma_skip(void **state)
{
	static const char y[] = "version: 1\ncluster: place\nnodes:\n  - name: gpu-nordma\n"
		"    address: 127.0.64.2\n    gpus: 8\nvalidation:\n  - { stage: devices }\n";
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	assert_int_equal(run(HAND "gpu-no-rdma.json", y, &out), 0);
	assert_string_equal(out.buf, "gpu placement: skipped: the node declares no RDMA port: no "
			    "GPU-NIC pair to place\ngpudirect rdma: skipped: the node declares no "
			    "RDMA port: no GPU-NIC pair to place\n");
	ln_buf_release(&out);
}

/* Nothing declared: each port's nearest GPUs and the readiness are
 * reported; the wrong rail's NIC is still a pass (the spec says nothing
 * of rails), but not SYS from all GPUs: no warning either; the no
 * peer-memory node warns. Never a failure. */
static void test_validate_placement__undeclared_reports(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;

	(void)state;
	spec_text(&y, 0, "");
	assert_int_equal(run(HAND "hgx-healthy.json", y.buf, &out), 0);
	assert_int_equal(lines_with(&out, "nearest GPUs: pass: nearest: ", NULL), 10);
	assert_non_null(strstr(out.buf, "mlx5_0/1 nearest GPUs: pass: nearest: GPU 0 (PIX); "));
	assert_non_null(strstr(out.buf, "gpudirect rdma (reported): pass: no ACS redirect between "
				   "a GPU and a nearby NIC; the IOMMU passes every GPU and NIC "
				   "through; no rdma[].gpus declared, so not judged\n"));
	assert_int_equal(lines_with(&out, "(warning)", NULL), 0);
	ln_buf_reset(&out);
	assert_int_equal(run(HAND "hgx-no-peermem.json", y.buf, &out), 0);
	assert_int_equal(lines_with(&out, "peer memory (reported): pass (warning): warning: no "
				    "peer-memory path", NULL), 1);
	ln_buf_reset(&out);
	assert_int_equal(run(HAND "hgx-acs.json", y.buf, &out), 0);
	assert_int_equal(lines_with(&out, "gpudirect rdma (reported): pass (warning): warning: "
				    "ACS redirect between a GPU and a nearby NIC at downstream "
				    "0000:5b:01.0", NULL), 1);
	ln_test_release(&y, &out);
}

/* A port SYS-distant from every GPU warns: the healthy node with every
 * GPU moved to NUMA node 1 and mlx5_0 kept on 0. */
static void test_validate_placement__sys_from_every_gpu_warns(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;
	struct json_object *f = load(HAND "hgx-healthy.json"), *gpus;
	size_t k;

	(void)state;
	gpus = ln_json_at(ln_json_at(f, "topology"), "gpus");
	for (k = 0; k < 4; k++)
		json_object_array_del_idx(gpus, 0, 1);
	spec_text(&y, 0, "");
	assert_int_equal(run_facts(f, y.buf, &out), 0);
	assert_non_null(strstr(out.buf, "mlx5_0/1 nearest GPUs: pass (warning): warning: "
				   "SYS-distant from every GPU, so its traffic to any GPU crosses the "
				   "CPU interconnect; nearest: GPU 4, GPU 5, GPU 6, GPU 7 (SYS)\n"));
	/* rail NICs 0-3 and the socket-0 storage NIC */
	assert_int_equal(lines_with(&out, "nearest GPUs: pass (warning)", NULL), 5);
	ln_test_release(&y, &out);
}

/* Declared GPUs, facts without topology (an older agent): not run, so
 * the stage fails; with nothing declared, no placement check at all. */
static void test_validate_placement__no_topology(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;
	struct json_object *f = load(HAND "hgx-healthy.json");

	(void)state;
	json_object_object_del(f, "topology");
	spec_text(&y, 1, "");
	assert_int_equal(run_facts(f, y.buf, &out), 1);
	assert_string_equal(out.buf, "gpu placement: not run: the agent's facts have no PCIe "
			    "topology (an agent older than protocol 3)\n");
	ln_buf_reset(&out);
	ln_buf_reset(&y);
	f = load(HAND "hgx-healthy.json");
	json_object_object_del(f, "topology");
	spec_text(&y, 0, "");
	assert_int_equal(run_facts(f, y.buf, &out), 0);
	assert_string_equal(out.buf, "");
	ln_test_release(&y, &out);
}

/* NVML's facts join GPUs by bus id: NVML index 0 is the GPU the
 * topology lists third, so mlx5_0's pair with GPU 0 is NODE, not PIX. */
static void test_validate_placement__nvml_index_by_bus_id(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;
	struct json_object *f = load(HAND "hgx-healthy.json");

	(void)state;
	json_object_object_add(ln_json_at(f, "gpus"), "devices", json_tokener_parse(
		"[{\"index\":0,\"bus_id\":\"0000:4b:00.0\"},{\"index\":1,\"bus_id\":"
		"\"0000:18:00.0\"}]"));
	ln_buf_addstr(&y, "version: 1\ncluster: place\nnodes:\n  - name: hgx1\n"
		      "    address: 127.0.64.1\n    gpus: 8\n    rdma:\n"
		      "      - { device: mlx5_0, gpus: [0, 1, 2] }\nvalidation:\n"
		      "  - { stage: devices, max_gpu_distance: NODE }\n");
	assert_int_equal(run_facts(f, y.buf, &out), 1);
	assert_non_null(strstr(out.buf, "GPU0-mlx5_0/1 distance: pass: NODE: "));
	assert_non_null(strstr(out.buf, "GPU1-mlx5_0/1 distance: pass: PIX: "));
	assert_non_null(strstr(out.buf, "GPU2-mlx5_0/1 distance: fail: GPU 2 is not on the node: "
				   "NVML lists 2 GPU(s)\n"));
	assert_non_null(strstr(out.buf, "GPU2-mlx5_0/1 ACS: skipped: no PCIe path to judge: "));
	ln_test_release(&y, &out);
}

/* A GPU NVML gave no bus id (its call failed: null): where NVML and the
 * topology count the same GPUs, the topology's index stands in (GPU 0 is
 * the one beside mlx5_0: PIX); where they count differently, it cannot,
 * and the check says why instead of guessing. */
static void test_validate_placement__nvml_without_bus_id(void **state)
{
	static const char *const bus[] = { NULL,	     "0000:3a:00.0", "0000:4b:00.0",
					    "0000:5c:00.0", "0000:9a:00.0", "0000:ba:00.0",
					    "0000:cb:00.0", "0000:dc:00.0" };
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;
	struct json_object *f = load(HAND "hgx-healthy.json"), *dev = json_object_new_array();
	size_t i;

	(void)state;
	for (i = 0; i < 8; i++) {
		struct json_object *g = json_object_new_object();

		json_object_object_add(g, "index", json_object_new_int((int)i));
		json_object_object_add(g, "bus_id", bus[i] ? json_object_new_string(bus[i]) : NULL);
		json_object_array_add(dev, g);
	}
	json_object_object_add(ln_json_at(f, "gpus"), "devices", dev);
	ln_buf_addstr(&y, "version: 1\ncluster: place\nnodes:\n  - name: hgx1\n"
		      "    address: 127.0.64.1\n    gpus: 8\n    rdma:\n"
		      "      - { device: mlx5_0, gpus: [0] }\nvalidation:\n"
		      "  - { stage: devices }\n");
	assert_int_equal(run_facts(json_object_get(f), y.buf, &out), 0);
	assert_non_null(strstr(out.buf, "GPU0-mlx5_0/1 distance: pass: PIX: "));
	/* NVML lists two, the topology eight: no stand-in */
	json_object_array_del_idx(dev, 2, 6);
	ln_buf_reset(&out);
	assert_int_equal(run_facts(f, y.buf, &out), 1);
	assert_non_null(strstr(out.buf, "GPU0-mlx5_0/1 distance: fail: GPU 0 has no bus id from "
				   "NVML, and NVML lists 2 GPU(s) where the PCIe topology lists 8\n"));
	ln_test_release(&y, &out);
}

/* A group whose type the kernel does not say (no `type` file before
 * 5.11): that pair's IOMMU check is skipped, never passed as identity;
 * the other pairs pass. */
static void test_validate_placement__iommu_type_unknown(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;
	struct json_object *f = load(HAND "hgx-healthy.json"), *g;

	(void)state;
	g = json_object_array_get_idx(ln_json_at(ln_json_at(f, "topology"), "gpus"), 5);
	json_object_object_add(g, "iommu_type", NULL);
	spec_text(&y, 1, "");
	assert_int_equal(run_facts(f, y.buf, &out), 1);
	assert_int_equal(lines_with(&out, "GPU5-mlx5_5/1 IOMMU: skipped: cannot tell", "unknown type"),
			 1);
	assert_int_equal(lines_with(&out, "IOMMU: pass", NULL), 7);
	assert_int_equal(lines_with(&out, ": fail", NULL), 0);
	ln_test_release(&y, &out);
}

/* The wrong rail with mlx5_3's NUMA node unknown: NODE or SYS, which
 * cannot be told. Past PXB either way (a failure that says so), within
 * SYS either way (a pass), and against NODE not judged. */
static void test_validate_placement__unknown_numa_is_node_or_sys(void **state)
{
	static const char *const max[] = { "", ", max_gpu_distance: SYS",
					   ", max_gpu_distance: NODE" };
	static const char *const want[] = {
		"GPU3-mlx5_3/1 distance: fail: GPU 3 (0000:5c:00.0) and mlx5_3/1 (0000:e1:00.0) on "
		"node 'hgx1' are NODE or SYS (a NUMA node unknown) apart, farther than "
		"max_gpu_distance PXB",
		"GPU3-mlx5_3/1 distance: pass: GPU 3 (0000:5c:00.0) and mlx5_3/1 (0000:e1:00.0) on "
		"node 'hgx1' are NODE or SYS apart (host bridges pci0000:59 and pci0000:e0; the NUMA "
		"node of the NIC is unknown)\n",
		"GPU3-mlx5_3/1 distance: not run: GPU 3 (0000:5c:00.0) and mlx5_3/1 (0000:e1:00.0) "
		"on node 'hgx1' are NODE or SYS apart (host bridges pci0000:59 and pci0000:e0; the "
		"NUMA node of the NIC is unknown): cannot tell against max_gpu_distance NODE\n",
	};
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;
	size_t k;

	(void)state;
	for (k = 0; k < ARRAY_SIZE(max); k++) {
		struct json_object *f = load(HAND "hgx-wrong-rail.json");

		json_object_object_add(json_object_array_get_idx(ln_json_at(ln_json_at(f, "topology"),
									   "nics"), 3),
				       "numa_node", NULL);
		ln_buf_reset(&y);
		ln_buf_reset(&out);
		spec_text(&y, 1, max[k]);
		run_facts(f, y.buf, &out);
		if (!strstr(out.buf, want[k]))
			fail_msg("want '%s' in:\n%s", want[k], out.buf);
		assert_int_equal(lines_with(&out, "distance: fail", NULL), k == 0);
	}
	ln_test_release(&y, &out);
}

/* The agent's own answers on the fixture trees (tests/fixtures/topo/NAME.tree,
 * facts/ regenerated by `make topo-facts`): the two halves agree on the
 * facts' shape, and each fault is named as on the hand-made facts. */
#define AGENT FIXTURES_DIR "/topo/facts/"
static void test_validate_placement__agent_facts_end_to_end(void **state)
{
	struct ln_buf y = LN_BUF_INIT, out = LN_BUF_INIT;

	(void)state;
	spec_text(&y, 1, "");
	run(AGENT "hgx-h100.json", y.buf, &out);
	assert_int_equal(lines_with(&out, ": fail", NULL), 0);
	assert_int_equal(lines_with(&out, "distance: pass: PIX", NULL), 8);
	assert_int_equal(lines_with(&out, "peer memory: pass", NULL), 1);
	ln_buf_reset(&out);
	run(AGENT "hgx-h100-acs.json", y.buf, &out);
	assert_int_equal(lines_with(&out, ": fail", NULL), 1);
	assert_int_equal(lines_with(&out, "GPU3-mlx5_3/1 ACS: fail", "downstream 0000:60:01.0"), 1);
	ln_buf_reset(&out);
	run(AGENT "hgx-h100-wrongrail.json", y.buf, &out);
	assert_int_equal(lines_with(&out, ": fail", NULL), 1);
	assert_int_equal(lines_with(&out, "GPU2-mlx5_2/1 distance: fail", "SYS apart"), 1);
	ln_buf_reset(&out);
	run(AGENT "hgx-h100-nopeer.json", y.buf, &out);
	assert_int_equal(lines_with(&out, ": fail", NULL), 1);
	assert_int_equal(lines_with(&out, "peer memory: fail", NULL), 1);
	ln_test_release(&y, &out);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_validate_placement__healthy_node_passes),
	cmocka_unit_test(test_validate_placement__acs_redirect_names_the_port),
	cmocka_unit_test(test_validate_placement__wrong_rail_is_sys),
	cmocka_unit_test(test_validate_placement__unknown_numa_is_node_or_sys),
	cmocka_unit_test(test_validate_placement__no_peer_memory),
	cmocka_unit_test(test_validate_placement__iommu_translating),
	cmocka_unit_test(test_validate_placement__gpus_without_rdma_skip),
	cmocka_unit_test(test_validate_placement__undeclared_reports),
	cmocka_unit_test(test_validate_placement__sys_from_every_gpu_warns),
	cmocka_unit_test(test_validate_placement__no_topology),
	cmocka_unit_test(test_validate_placement__nvml_index_by_bus_id),
	cmocka_unit_test(test_validate_placement__nvml_without_bus_id),
	cmocka_unit_test(test_validate_placement__agent_facts_end_to_end),
	cmocka_unit_test(test_validate_placement__iommu_type_unknown),
)
