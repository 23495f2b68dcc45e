/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA bandwidth and perftest_dir (orchestrator/validate/
 * perftest_mem.c, perftest_argv.c): two HGX H100 nodes (the hand-made
 * facts of tests/fixtures/topo/facts-hand/hgx-healthy.json) whose
 * perftest answers --help with or without its CUDA options. memory cuda
 * puts each end's buffers on the GPU its port serves, by bus id (the
 * declared one, NVML's where the node has NVML, else the nearest);
 * dmabuf adds --use_cuda_dmabuf; a perftest built without them makes
 * the pair "not run", naming the node, and nothing runs from host memory
 * instead. The controls: host memory asks nothing and passes no CUDA
 * option; perftest_dir names the program by its path on both stages.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/fileio.h"
#include "common/json.h"
#include "orchestrator/validate/stages.h"

#define HEALTHY FIXTURES_DIR "/topo/facts-hand/hgx-healthy.json"

static const char help_host[] = "Usage:\n  ib_write_bw            start a server\n"
				"  -d, --ib-dev=<dev> Use IB device <dev>\n";
static const char help_cuda[] = "      --use_cuda=<cuda device id> Use CUDA specific device\n"
				"      --use_cuda_bus_id=<cuda full BUS id> Use CUDA specific device\n";
static const char help_dmabuf[] = "      --use_cuda_dmabuf Use CUDA DMA-BUF for GPUDirect\n";

struct gdr {
	struct json_object *facts[2];
	const char *help[2];		/* what each node's perftest --help adds */
	int dmabuf_help[2];
	char log[8192];			/* every run's argv, one a line */
	pthread_mutex_t lock;
};

static int facts_of(void *ctx, size_t node, struct json_object **out, struct ln_buf *err)
{
	struct gdr *g = ctx;

	(void)err;
	*out = g->facts[node];
	return 0;
}

/* perftest: --help as built; a server (no address) and a client print
 * the same row, 350 Gb/s. */
static int run_of(void *ctx, size_t node, unsigned lane, const char *const *argv,
		  const char *sha256, int timeout_s, struct ln_probe_result *out,
		  struct ln_buf *err)
{
	struct gdr *g = ctx;
	size_t n = strlen(g->log);
	int i;

	(void)lane, (void)sha256, (void)err;
	pthread_mutex_lock(&g->lock);
	n += (size_t)snprintf(g->log + n, sizeof(g->log) - n, "n%zu (%ds):", node + 1, timeout_s);
	for (i = 0; argv[i] && n < sizeof(g->log); i++)
		n += (size_t)snprintf(g->log + n, sizeof(g->log) - n, " %s", argv[i]);
	if (n < sizeof(g->log))
		snprintf(g->log + n, sizeof(g->log) - n, "\n");
	pthread_mutex_unlock(&g->lock);
	out->exit_status = 0;
	out->timed_out = 0;
	if (argv[1] && !strcmp(argv[1], "--help")) {
		ln_buf_addstr(&out->output, help_host);
		if (g->help[node])
			ln_buf_addstr(&out->output, g->help[node]);
		if (g->dmabuf_help[node])
			ln_buf_addstr(&out->output, help_dmabuf);
		out->exit_status = 1;	/* perftest's usage exits non-zero */
		return 0;
	}
	ln_buf_addstr(&out->output, "---------------------------------------------------------"
		      "------------------------------\n #bytes     #iterations    BW peak[Gb/sec]"
		      "    BW average[Gb/sec]   MsgRate[Mpps]\n");
	if (strstr(argv[0], "_lat"))
		ln_buf_addstr(&out->output, " 2       1000 2.00 9.00 3.00 3.20 0.30 6.00 8.00\n");
	else
		ln_buf_addstr(&out->output, " 1048576    1000           351.00            350.00"
			      "\t\t   0.041000\n");
	return 0;
}

static const struct ln_probe_ops ops = { facts_of, run_of, NULL, NULL, NULL, NULL, NULL, NULL };

static void load_facts(struct gdr *g)
{
	struct ln_buf js = LN_BUF_INIT, err = LN_BUF_INIT;
	int k;

	for (k = 0; k < 2; k++) {
		ln_buf_reset(&js);
		if (ln_file_read(HEALTHY, &js, &err) < 0 ||
		    ln_json_parse(js.buf, js.len, &g->facts[k], &err) < 0)
			fail_msg("%s: %s", HEALTHY, err.buf);
	}
	ln_buf_release_all(&js, &err);
}

/* Validate two nodes, each with mlx5_0 (port_extra in its entry) and
 * stage; the check of the one pair into *status and reason. */
static void run_gdr(struct gdr *g, const char *port_extra, const char *stage,
		    enum ln_status *status, struct ln_buf *reason)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_validate_opts o;
	struct ln_spec *spec = NULL;
	struct ln_results res;
	size_t i;
	int k, found = 0;

	ln_buf_addstr(&y, "version: 1\ncluster: gdr\nnodes:\n");
	for (k = 1; k <= 2; k++)
		ln_buf_addf(&y, "  - name: n%d\n    address: 127.0.65.%d\n    gpus: 8\n    rdma:\n"
			    "      - { device: mlx5_0, ip: 10.0.0.%d%s }\n", k, k, k, port_extra);
	ln_buf_addf(&y, "validation:\n  - %s\n", stage);
	if (ln_spec_load_buf("gdr.yaml", y.buf, y.len, &spec, &err) < 0)
		fail_msg("%s", err.buf);
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	assert_int_equal(ln_validate_run(spec, &ops, g, &o, &res, &err), 0);
	for (i = 0; i < res.nchecks; i++)
		if (res.checks[i].stage == LN_STAGE_BANDWIDTH ||
		    res.checks[i].stage == LN_STAGE_LATENCY) {
			*status = res.checks[i].status;
			ln_buf_addstr(reason, res.checks[i].reason ? res.checks[i].reason : "");
			found++;
		}
	assert_int_equal(found, 1);
	ln_results_release(&res);
	ln_spec_free(spec);
	ln_buf_release_all(&y, &err);
}

static int setup(void **state)
{
	struct gdr *g = calloc(1, sizeof(*g));

	if (!g)
		return -1;
	pthread_mutex_init(&g->lock, NULL);
	load_facts(g);
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct gdr *g = *state;

	json_object_put(g->facts[0]);
	json_object_put(g->facts[1]);
	free(g);
	return 0;
}

#define BW_CUDA "{ stage: bandwidth, memory: cuda, perftest_dir: /opt/perftest/bin }"

/* The control: host memory passes no CUDA option (perftest's --help is
 * still read, for the binding: perftest_argv.c). */
static void test_gdr__host_memory_control(void **state)
{
	struct gdr *g = *state;
	struct ln_buf why = LN_BUF_INIT;
	enum ln_status st;

	run_gdr(g, "", "{ stage: bandwidth }", &st, &why);
	assert_int_equal(st, LN_ST_PASS);
	assert_null(strstr(g->log, "cuda"));
	assert_non_null(strstr(g->log, "n1 (60s): ib_write_bw -d mlx5_0"));
	ln_buf_release(&why);
}

/* Undeclared: each end on the GPU nearest mlx5_0 (GPU 0, 0000:18:00.0,
 * below its switch), by bus id, from the perftest in perftest_dir. */
static void test_gdr__cuda_nearest_gpu(void **state)
{
	struct gdr *g = *state;
	struct ln_buf why = LN_BUF_INIT;
	enum ln_status st;

	g->help[0] = g->help[1] = help_cuda;
	run_gdr(g, "", BW_CUDA, &st, &why);
	assert_int_equal(st, LN_ST_PASS);
	assert_non_null(strstr(g->log, "n1 (10s): /opt/perftest/bin/ib_write_bw --help\n"));
	assert_non_null(strstr(g->log, "n2 (10s): /opt/perftest/bin/ib_write_bw --help\n"));
	assert_non_null(strstr(g->log, "-F --use_cuda_bus_id 0000:18:00.0 --report_gbits\n"));
	assert_non_null(strstr(g->log, "-F --use_cuda_bus_id 0000:18:00.0 --report_gbits "
			       "10.0.0.1\n"));
	assert_null(strstr(g->log, "dmabuf"));
	ln_buf_release(&why);
}

/* Declared GPU 1: its bus id from the topology, then from NVML's facts
 * where the node has them (NVML's bus id wins). */
static void test_gdr__cuda_declared_gpu(void **state)
{
	struct gdr *g = *state;
	struct ln_buf why = LN_BUF_INIT;
	struct json_object *dev = NULL;
	enum ln_status st;

	g->help[0] = g->help[1] = help_cuda;
	run_gdr(g, ", gpus: [1]", BW_CUDA, &st, &why);
	assert_int_equal(st, LN_ST_PASS);
	assert_non_null(strstr(g->log, "--use_cuda_bus_id 0000:3a:00.0"));
	assert_null(strstr(g->log, "0000:18:00.0"));
	g->log[0] = '\0';
	assert_int_equal(ln_json_parse("[{\"index\":1,\"bus_id\":\"0000:4b:00.0\"}]", 38, &dev,
				       &why), 0);
	json_object_object_add(ln_json_at(g->facts[1], "gpus"), "devices", dev);
	run_gdr(g, ", gpus: [1]", BW_CUDA, &st, &why);
	assert_non_null(strstr(g->log, "n1 (60s): /opt/perftest/bin/ib_write_bw -d mlx5_0 -i 1 "
			       "-s 1048576 -n 1000 -p 18515 -F --use_cuda_bus_id 0000:3a:00.0"));
	assert_non_null(strstr(g->log, "-F --use_cuda_bus_id 0000:4b:00.0 --report_gbits "
			       "10.0.0.1\n"));
	ln_buf_release(&why);
}

/* n2's perftest was built without CUDA: the pair is not run, naming n2
 * and what its perftest lacks; no bandwidth probe runs at all. */
static void test_gdr__perftest_without_cuda_not_run(void **state)
{
	struct gdr *g = *state;
	struct ln_buf why = LN_BUF_INIT;
	enum ln_status st;

	g->help[0] = help_cuda;
	run_gdr(g, "", BW_CUDA, &st, &why);
	assert_int_equal(st, LN_ST_NOT_RUN);
	assert_non_null(strstr(why.buf, "'/opt/perftest/bin/ib_write_bw' on 'n2' lists no "
			       "--use_cuda_bus_id in its --help: it was built without CUDA"));
	assert_non_null(strstr(why.buf, "does not measure host memory instead"));
	assert_null(strstr(g->log, "-d mlx5_0"));
	ln_buf_release(&why);
}

/* dmabuf: needs --use_cuda_dmabuf in --help as well, and passes it after
 * the bus id (perftest takes it only once the memory is CUDA's). */
static void test_gdr__dmabuf(void **state)
{
	struct gdr *g = *state;
	struct ln_buf why = LN_BUF_INIT;
	enum ln_status st;

	g->help[0] = g->help[1] = help_cuda;
	g->dmabuf_help[0] = 1;
	run_gdr(g, "", "{ stage: bandwidth, memory: dmabuf }", &st, &why);
	assert_int_equal(st, LN_ST_NOT_RUN);
	assert_non_null(strstr(why.buf, "'ib_write_bw' on 'n2' lists no --use_cuda_dmabuf"));
	assert_non_null(strstr(why.buf, "built without CUDA dma-buf support"));
	assert_null(strstr(g->log, "-d mlx5_0"));
	ln_buf_reset(&why);
	g->log[0] = '\0';
	g->dmabuf_help[1] = 1;
	run_gdr(g, "", "{ stage: bandwidth, memory: dmabuf }", &st, &why);
	assert_int_equal(st, LN_ST_PASS);
	assert_non_null(strstr(g->log, "n1 (10s): ib_write_bw --help\n"));
	assert_non_null(strstr(g->log, "-F --use_cuda_bus_id 0000:18:00.0 --use_cuda_dmabuf "
			       "--report_gbits 10.0.0.1\n"));
	ln_buf_release(&why);
}

/* A port with no GPU to serve (the node's topology has none): not run. */
static void test_gdr__port_without_gpu_not_run(void **state)
{
	struct gdr *g = *state;
	struct ln_buf why = LN_BUF_INIT;
	enum ln_status st;

	g->help[0] = g->help[1] = help_cuda;
	json_object_object_add(ln_json_at(g->facts[0], "topology"), "gpus",
			       json_object_new_array());
	run_gdr(g, "", BW_CUDA, &st, &why);
	assert_int_equal(st, LN_ST_NOT_RUN);
	assert_non_null(strstr(why.buf, "'n1' port mlx5_0/1 has no GPU for perftest's buffers: "
			       "it declares no GPU (rdma[].gpus) and no GPU of the node's PCIe "
			       "topology has a distance to it"));
	assert_null(strstr(g->log, "-d mlx5_0"));
	ln_buf_release(&why);
}

/* latency's perftest_dir: its tool by path (its --help read by that path,
 * for the binding), host memory. */
static void test_gdr__latency_perftest_dir(void **state)
{
	struct gdr *g = *state;
	struct ln_buf why = LN_BUF_INIT;
	enum ln_status st;

	run_gdr(g, "", "{ stage: latency, perftest_dir: /opt/perftest/bin }", &st, &why);
	assert_non_null(strstr(g->log, "n1 (60s): /opt/perftest/bin/ib_write_lat -d mlx5_0"));
	assert_null(strstr(g->log, ": ib_write_lat --help"));
	assert_null(strstr(g->log, "cuda"));
	ln_buf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gdr__host_memory_control, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gdr__cuda_nearest_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gdr__cuda_declared_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gdr__perftest_without_cuda_not_run, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gdr__dmabuf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gdr__port_without_gpu_not_run, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gdr__latency_perftest_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
