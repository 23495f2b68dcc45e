/* SPDX-License-Identifier: MIT */
/*
 * The devices stage's GPU checks (stage_gpu.c) and its GPU count, on the
 * facts the agent really answers (its facts verb under --root, running
 * llmnet-gpu-facts on the stand-in NVMLs, NOT NVML): a healthy node
 * passes; on the faulty one exactly the GPUs with a pending or failed row
 * remap, uncorrected ECC errors or an NVLink down fail, each named by
 * index and bus id; NOT_SUPPORTED is reported, not failed; without NVML
 * the count is /proc's and says why.
 */
#include "tests/unit/agent_fixture.h"
#include "tests/unit/gpu_fixture.h"
#include "tests/unit/validate_fake.h"

/* The agent's facts.gpus for a root with one GPU in /proc, the program
 * installed when asked, and the stand-in NVML variant (NULL: none). */
static struct json_object *agent_gpus(int installed, const char *variant)
{
	char *root = fx_gpu_root(1, installed, variant);
	struct json_object *g = fx_agent_gpus(root);

	fx_remove(root);
	return g;
}

/* One node declaring gpus GPUs, the devices stage only, its facts' gpus
 * replaced by g (owned). */
static struct world *gpu_world(void **state, unsigned gpus, struct json_object *g)
{
	struct ln_buf y = LN_BUF_INIT;
	struct world *w;

	ln_buf_addf(&y, "version: 1\ncluster: fake\nnodes:\n  - name: n1\n    address: 127.0.1.1\n"
		    "    gpus: %u\n    rdma:\n      - { device: rxe0, port: 1, ip: 10.0.0.1, "
		    "min_rate: 100Gb/s, link_layer: ethernet, mtu: 1024 }\n", gpus);
	w = world_start(state, 1, spec_from(&y, "  - { stage: devices }\n"));
	json_object_object_add(w->f.facts[0], "gpus", g);
	world_run(w);
	return w;
}

static const struct ln_check *check_named(const struct world *w, const char *name)
{
	size_t i;

	for (i = 0; i < w->res.nchecks; i++)
		if (w->res.checks[i].stage == LN_STAGE_DEVICES && !strcmp(w->res.checks[i].name, name))
			return &w->res.checks[i];
	return NULL;
}

static void assert_check(const struct world *w, const char *name, enum ln_status st,
			 const char *reason)
{
	const struct ln_check *c = check_named(w, name);

	if (!c)
		fail_msg("no check '%s'", name);
	if ((int)c->status != (int)st || !reason != !c->reason ||
	    (reason && strcmp(reason, c->reason)))
		fprintf(stderr, "check '%s': status %d, reason '%s'\n", name, c->status,
			c->reason ? c->reason : "(none)");
	assert_int_equal(c->status, st);
	if (reason)
		assert_string_equal(c->reason, reason);
	else
		assert_null(c->reason);
}

static void test_validate_gpu__healthy_passes(void **state)
{
	struct world *w = gpu_world(state, 2, agent_gpus(1, "healthy"));

	assert_check(w, "gpus", LN_ST_PASS, "counted by NVML");
	assert_check(w, "gpu 0 (0000:1b:00.0)", LN_ST_PASS, NULL);
	assert_check(w, "gpu 1 (0000:43:00.0)", LN_ST_PASS, NULL);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_verdicts(w, "");
}

static void test_validate_gpu__faulty_gpus_named(void **state)
{
	struct world *w = gpu_world(state, 5, agent_gpus(1, "faulty"));

	assert_check(w, "gpus", LN_ST_PASS, "counted by NVML");
	assert_check(w, "gpu 0 (0000:1b:00.0)", LN_ST_PASS, NULL);
	assert_check(w, "gpu 1 (0000:43:00.0)", LN_ST_FAIL,
		     "a row remap is pending (the GPU needs a reset to apply it)");
	assert_check(w, "gpu 2 (0000:52:00.0)", LN_ST_FAIL,
		     "row remapping failed (no spare row left: replace the GPU)");
	assert_check(w, "gpu 3 (0000:61:00.0)", LN_ST_FAIL,
		     "2 volatile uncorrected ECC errors since the driver loaded");
	assert_check(w, "gpu 4 (0000:9d:00.0)", LN_ST_FAIL, "17 of 18 NVLinks up");
	assert_int_equal(w->res.stages[LN_STAGE_DEVICES].passed, 3);	/* port, count, gpu 0 */
	assert_int_not_equal(ln_results_exit(&w->res), 0);
	assert_verdicts(w, "devices:node:n1 ");
}

static void test_validate_gpu__not_supported_reported(void **state)
{
	struct world *w = gpu_world(state, 1, agent_gpus(1, "notsup"));

	assert_check(w, "gpu 0 (0000:00:05.0)", LN_ST_PASS,
		     "not judged, NVML does not report it for this GPU: row remapping, "
		     "uncorrected ECC count, NVLink");
	assert_int_equal(ln_results_exit(&w->res), 0);
}

static void test_validate_gpu__missing_symbol_reported(void **state)
{
	struct world *w = gpu_world(state, 2, agent_gpus(1, "nosym"));

	assert_check(w, "gpu 1 (0000:43:00.0)", LN_ST_PASS,
		     "not judged, NVML does not report it for this GPU: row remapping");
	assert_int_equal(ln_results_exit(&w->res), 0);
}

/* none of a GPU's links active (a PCIe card without a bridge) is not a
 * link down: reported, not failed; 17 of 18 beside it still fails */
static void test_validate_gpu__no_nvlink_active_reported(void **state)
{
	struct json_object *g = agent_gpus(1, "healthy"), *d;
	struct world *w;

	d = json_object_array_get_idx(json_object_object_get(g, "devices"), 1);
	json_object_object_add(d, "nvlink_up", json_object_new_int(0));
	json_object_object_add(d, "nvlink_total", json_object_new_int(12));
	d = json_object_array_get_idx(json_object_object_get(g, "devices"), 0);
	json_object_object_add(d, "nvlink_up", json_object_new_int(17));
	w = gpu_world(state, 2, g);
	assert_check(w, "gpu 1 (0000:43:00.0)", LN_ST_PASS,
		     "not judged, NVML does not report it for this GPU: NVLink (none of 12 links "
		     "active: no bridge, or the fabric manager is down)");
	assert_check(w, "gpu 0 (0000:1b:00.0)", LN_ST_FAIL, "17 of 18 NVLinks up");
}

/* an error NVML answered (not NOT_SUPPORTED) fails the GPU, with what is
 * unknown beside it */
static void test_validate_gpu__nvml_error_fails(void **state)
{
	struct json_object *g = agent_gpus(1, "healthy"), *d;
	struct world *w;

	d = json_object_array_get_idx(json_object_object_get(g, "devices"), 1);
	json_object_object_add(d, "errors", json_tokener_parse("[\"nvmlDeviceGetTotalEccErrors: "
							       "GPU is lost (15)\"]"));
	json_object_object_add(d, "ecc_volatile_uncorrected", NULL);
	w = gpu_world(state, 2, g);
	assert_check(w, "gpu 0 (0000:1b:00.0)", LN_ST_PASS, NULL);
	assert_check(w, "gpu 1 (0000:43:00.0)", LN_ST_FAIL,
		     "NVML: nvmlDeviceGetTotalEccErrors: GPU is lost (15) (NVML does not report "
		     "its uncorrected ECC count)");
	assert_verdicts(w, "devices:node:n1 ");
}

/* without the program the count is /proc's, and says why; no GPU checks */
static void test_validate_gpu__proc_count_says_why(void **state)
{
	struct world *w = gpu_world(state, 1, agent_gpus(0, "healthy"));

	assert_check(w, "gpus", LN_ST_PASS, "counted in /proc/driver/nvidia/gpus; NVML not used: "
		     "the GPU facts program " LN_PROTO_REMOTE_DIR "/" LN_PROBE_GPU_FACTS
		     " is not installed");
	assert_null(check_named(w, "gpu 0 (0000:1b:00.0)"));
	assert_int_equal(ln_results_exit(&w->res), 0);
}

/* NVML's count is judged against the declaration, and named as NVML's */
static void test_validate_gpu__nvml_count_judged(void **state)
{
	struct world *w = gpu_world(state, 8, agent_gpus(1, "healthy"));

	assert_check(w, "gpus", LN_ST_FAIL, "2 GPUs found, 8 declared (counted by NVML)");
	assert_check(w, "gpu 0 (0000:1b:00.0)", LN_ST_PASS, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_validate_gpu__healthy_passes, world_setup,
						world_teardown),
		cmocka_unit_test_setup_teardown(test_validate_gpu__faulty_gpus_named, world_setup,
						world_teardown),
		cmocka_unit_test_setup_teardown(test_validate_gpu__not_supported_reported,
						world_setup, world_teardown),
		cmocka_unit_test_setup_teardown(test_validate_gpu__missing_symbol_reported,
						world_setup, world_teardown),
		cmocka_unit_test_setup_teardown(test_validate_gpu__nvml_error_fails, world_setup,
						world_teardown),
		cmocka_unit_test_setup_teardown(test_validate_gpu__proc_count_says_why, world_setup,
						world_teardown),
		cmocka_unit_test_setup_teardown(test_validate_gpu__nvml_count_judged, world_setup,
						world_teardown),
		cmocka_unit_test_setup_teardown(test_validate_gpu__no_nvlink_active_reported,
						world_setup, world_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
