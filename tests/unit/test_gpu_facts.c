// SPDX-License-Identifier: MIT
/*
 * llmnet-gpu-facts on the stand-in NVML libraries (tests/unit/standin/
 * nvml_standin.c, NOT NVML: one folder per variant), and the agent's facts
 * verb running it under --root: the program's JSON for a healthy node, a
 * faulty one, NOT_SUPPORTED answers and a library missing calls, its exit
 * codes when NVML is not usable, and what the agent makes of each
 * (source nvml, or proc with gpus.nvml saying why).
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"
#include "tests/unit/gpu_fixture.h"

#include <json-c/json.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/proto.h"
#include "common/util.h"
#include "orchestrator/transport/answer.h"

#define PROGRAM GPU_FACTS_PROGRAM
#define STANDIN(v) BUILD_DIR "/standin/nvml/" v "/libnvidia-ml.so.1"

/* The program's answer with --lib lib (NULL: no option); its exit code in *rc. */
static struct json_object *program(const char *lib, int *rc)
{
	struct ln_buf out = LN_BUF_INIT, e = LN_BUF_INIT;
	struct json_object *o = NULL;
	char cmd[1024], path[] = "/tmp/llmnet-gpu-facts.XXXXXX";
	int fd = mkstemp(path), st;

	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "env -i %s%s%s > %s", PROGRAM, lib ? " --lib " : "",
		 lib ? lib : "", path);
	st = system(cmd);
	*rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	assert_int_equal(ln_file_read(path, &out, &e), 0);
	unlink(path);
	if (ln_json_parse(out.buf, out.len, &o, &e) < 0)
		fprintf(stderr, "not JSON: %s\n%s\n", e.buf, out.buf);
	assert_non_null(o);
	ln_buf_release_all(&out, &e);
	return o;
}

/* The value at a dotted path ("devices.1.bus_id") as text; "null" for
 * null, NULL when absent. */
static const char *at(struct json_object *o, const char *path)
{
	char key[128];
	const char *p = path;

	while (*p) {
		size_t n = strcspn(p, ".");
		struct json_object *next = NULL;

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (json_object_is_type(o, json_type_array)) {
			if ((size_t)atoi(key) >= json_object_array_length(o))
				return NULL;
			next = json_object_array_get_idx(o, (size_t)atoi(key));
		} else if (!json_object_object_get_ex(o, key, &next)) {
			return NULL;
		}
		o = next;
		p += n;
		if (*p == '.')
			p++;
		if (!o)
			return *p ? NULL : "null";
	}
	return json_object_get_string(o);
}

#define assert_at(o, path, want) assert_string_equal(at(o, path) ? at(o, path) : "(absent)", want)

static void test_gpu_facts__healthy(void **st)
{
	struct json_object *o;
	int rc;

	(void)st;
	o = program(STANDIN("healthy"), &rc);
	assert_int_equal(rc, 0);
	assert_at(o, "nvml", "true");
	assert_at(o, "driver_version", "570.86.15");
	assert_at(o, "cuda_version", "12.8");
	assert_at(o, "count", "2");
	assert_at(o, "devices.0.index", "0");
	assert_at(o, "devices.0.uuid", "GPU-standin-0000-0000-0000-000000000000");
	assert_at(o, "devices.0.model", "NVIDIA H100 80GB HBM3");
	/* NVML's 00000000:1B:00.0 in sysfs's form */
	assert_at(o, "devices.0.bus_id", "0000:1b:00.0");
	assert_at(o, "devices.1.bus_id", "0000:43:00.0");
	assert_at(o, "devices.1.numa_node", "0");
	assert_at(o, "devices.1.memory_bytes", "85520809984");
	assert_at(o, "devices.1.persistence", "true");
	assert_at(o, "devices.1.nvlink_up", "18");
	assert_at(o, "devices.1.nvlink_total", "18");
	assert_at(o, "devices.1.ecc_volatile_uncorrected", "0");
	assert_at(o, "devices.1.row_remap_pending", "false");
	assert_at(o, "devices.1.row_remap_failed", "false");
	assert_at(o, "devices.1.errors", "[ ]");
	json_object_put(o);
}

static void test_gpu_facts__faulty(void **st)
{
	struct json_object *o;
	int rc;

	(void)st;
	o = program(STANDIN("faulty"), &rc);
	assert_int_equal(rc, 0);
	assert_at(o, "count", "5");
	assert_at(o, "devices.0.row_remap_pending", "false");
	assert_at(o, "devices.1.row_remap_pending", "true");
	assert_at(o, "devices.1.row_remap_failed", "false");
	assert_at(o, "devices.2.row_remap_failed", "true");
	assert_at(o, "devices.3.ecc_volatile_uncorrected", "2");
	assert_at(o, "devices.4.nvlink_up", "17");
	assert_at(o, "devices.4.nvlink_total", "18");
	assert_at(o, "devices.4.bus_id", "0000:9d:00.0");
	assert_at(o, "devices.4.numa_node", "1");
	json_object_put(o);
}

/* NOT_SUPPORTED is null, never 0 or false, and no error */
static void test_gpu_facts__not_supported(void **st)
{
	static const char *const nulls[] = {
		"numa_node", "persistence", "nvlink_up", "nvlink_total",
		"ecc_volatile_uncorrected", "row_remap_pending", "row_remap_failed",
	};
	struct json_object *o;
	char p[128];
	size_t k;
	int rc;

	(void)st;
	o = program(STANDIN("notsup"), &rc);
	assert_int_equal(rc, 0);
	assert_at(o, "count", "1");
	assert_at(o, "devices.0.bus_id", "0000:00:05.0");
	assert_at(o, "devices.0.memory_bytes", "85520809984");
	for (k = 0; k < ARRAY_SIZE(nulls); k++) {
		snprintf(p, sizeof(p), "devices.0.%s", nulls[k]);
		assert_at(o, p, "null");
	}
	assert_at(o, "devices.0.errors", "[ ]");
	json_object_put(o);
}

/* a call the library lacks is null; the rest are read */
static void test_gpu_facts__missing_symbols(void **st)
{
	struct json_object *o;
	int rc;

	(void)st;
	o = program(STANDIN("nosym"), &rc);
	assert_int_equal(rc, 0);
	assert_at(o, "devices.0.numa_node", "null");
	assert_at(o, "devices.0.row_remap_pending", "null");
	assert_at(o, "devices.0.row_remap_failed", "null");
	assert_at(o, "devices.0.nvlink_up", "18");
	assert_at(o, "devices.0.ecc_volatile_uncorrected", "0");
	assert_at(o, "devices.1.bus_id", "0000:43:00.0");
	json_object_put(o);
}

/* NVML not usable: exit 2, and the reason; the healthy control above exits 0 */
static void test_gpu_facts__nvml_not_usable(void **st)
{
	struct json_object *o;
	int rc;

	(void)st;
	o = program(STANDIN("noinit"), &rc);
	assert_int_equal(rc, 2);
	assert_at(o, "nvml", "false");
	assert_at(o, "error", "nvmlInit_v2 failed: Driver Not Loaded (9)");
	assert_null(at(o, "devices"));
	json_object_put(o);
	o = program(STANDIN("noentry"), &rc);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(at(o, "error"), "has no nvmlInit_v2"));
	json_object_put(o);
	o = program("/nonexistent/libnvidia-ml.so.1", &rc);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(at(o, "error"), "cannot load /nonexistent/libnvidia-ml.so.1"));
	json_object_put(o);
}

static void test_gpu_facts__usage(void **st)
{
	(void)st;
	assert_int_equal(WEXITSTATUS(system(PROGRAM " --lib relative.so 2>/dev/null")), 1);
	assert_int_equal(WEXITSTATUS(system(PROGRAM " --bogus 2>/dev/null")), 1);
}

/* ---- the agent's facts verb ---- */

static void test_gpu_facts__agent_reads_nvml(void **st)
{
	char *root = fx_gpu_root(1, 1, "faulty");
	struct json_object *g = fx_agent_gpus(root);

	(void)st;
	/* NVML's count (5) over /proc's (1), and its devices */
	assert_at(g, "source", "nvml");
	assert_at(g, "count", "5");
	assert_at(g, "program", "installed");
	assert_at(g, "nvml", "null");
	assert_at(g, "driver_version", "570.86.15");
	assert_at(g, "cuda_version", "12.8");
	assert_at(g, "models.4", "NVIDIA H100 80GB HBM3");
	assert_at(g, "devices.0.bus_id", "0000:1b:00.0");
	assert_at(g, "devices.1.row_remap_pending", "true");
	assert_at(g, "devices.2.row_remap_failed", "true");
	assert_at(g, "devices.3.ecc_volatile_uncorrected", "2");
	assert_at(g, "devices.4.nvlink_up", "17");
	json_object_put(g);
	g = fx_agent_facts(root);
	{
		/* the controller keeps all of it (its known-facts filter) */
		struct json_object *k = ln_answer_known_facts(g);

		assert_non_null(k);
		assert_true(json_object_equal(ln_json_at(k, "gpus"), ln_json_at(g, "gpus")));
		json_object_put(k);
	}
	json_object_put(g);
	fx_remove(root);
}

static void test_gpu_facts__agent_not_supported_stays_null(void **st)
{
	char *root = fx_gpu_root(1, 1, "notsup");
	struct json_object *g = fx_agent_gpus(root);

	(void)st;
	assert_at(g, "source", "nvml");
	assert_at(g, "devices.0.ecc_volatile_uncorrected", "null");
	assert_at(g, "devices.0.row_remap_pending", "null");
	assert_at(g, "devices.0.nvlink_total", "null");
	json_object_put(g);
	fx_remove(root);
}

/* One field out of its bounds (NUMA 0xFFFFFFFF, an ECC count past any
 * real one) is null, named in the GPU's "dropped", and every other fact
 * of the node's GPUs stays; an NVML error string with a terminal escape
 * still fails its GPU, printable. The control: the healthy stand-in has
 * nothing dropped. */
static void test_gpu_facts__agent_drops_only_the_odd_field(void **st)
{
	char *root = fx_gpu_root(2, 1, "odd");
	struct json_object *g = fx_agent_gpus(root);

	(void)st;
	assert_at(g, "source", "nvml");
	assert_at(g, "nvml", "null");
	assert_at(g, "devices.0.numa_node", "null");
	assert_at(g, "devices.0.ecc_volatile_uncorrected", "null");
	assert_at(g, "devices.0.dropped.0", "its 'numa_node' is not a number in range");
	assert_at(g, "devices.0.dropped.1", "its 'ecc_volatile_uncorrected' is not a number in "
		  "range");
	assert_at(g, "devices.0.bus_id", "0000:1b:00.0");
	assert_at(g, "devices.0.nvlink_up", "18");
	assert_at(g, "devices.1.numa_node", "0");
	assert_null(at(g, "devices.1.dropped"));
	assert_non_null(strstr(at(g, "devices.1.errors.0"), "Odd?[2J Error?"));
	json_object_put(g);
	fx_remove(root);
	root = fx_gpu_root(2, 1, "healthy");
	g = fx_agent_gpus(root);
	assert_null(at(g, "devices.0.dropped"));
	assert_at(g, "devices.0.numa_node", "0");
	json_object_put(g);
	fx_remove(root);
}

/* The GPU facts program runs from its hashed file only when root owns it
 * and no one else may write to it (else its bytes could change between
 * the hash and the exec); the control is the test above. */
static void test_gpu_facts__agent_program_root_owned(void **st)
{
	char *root = fx_gpu_root(2, 1, "healthy"), cmd[8192];
	struct json_object *g;

	(void)st;
	snprintf(cmd, sizeof(cmd), "chmod 0775 %s%s/%s", root, LN_PROTO_REMOTE_DIR,
		 LN_PROBE_GPU_FACTS);
	assert_int_equal(system(cmd), 0);
	g = fx_agent_gpus(root);
	assert_at(g, "source", "proc");
	assert_at(g, "program", "mismatch");
	assert_non_null(strstr(at(g, "nvml"), "is writable by group or others (owner uid 0, mode "
			       "0775): llmnet runs its own programs only when root owns them"));
	json_object_put(g);
	snprintf(cmd, sizeof(cmd), "chmod 0755 %s%s/%s && chown 4321 %s%s/%s", root,
		 LN_PROTO_REMOTE_DIR, LN_PROBE_GPU_FACTS, root, LN_PROTO_REMOTE_DIR,
		 LN_PROBE_GPU_FACTS);
	assert_int_equal(system(cmd), 0);
	g = fx_agent_gpus(root);
	assert_at(g, "source", "proc");
	assert_non_null(strstr(at(g, "nvml"), "is not root's (owner uid 4321, mode 0755)"));
	json_object_put(g);
	fx_remove(root);
}

/* without the program, without NVML, with another build of the program,
 * or without GPUs: source stays proc and nvml says why */
static void test_gpu_facts__agent_without_nvml(void **st)
{
	char *root = fx_gpu_root(2, 0, "healthy"), p[4096];
	struct json_object *g = fx_agent_gpus(root);
	FILE *f;

	(void)st;
	assert_at(g, "source", "proc");
	assert_at(g, "count", "2");
	assert_at(g, "program", "absent");
	assert_null(at(g, "devices"));
	assert_non_null(strstr(at(g, "nvml"), "is not installed"));
	json_object_put(g);
	fx_remove(root);

	root = fx_gpu_root(2, 1, NULL);
	g = fx_agent_gpus(root);
	assert_at(g, "source", "proc");
	assert_at(g, "program", "installed");
	assert_non_null(strstr(at(g, "nvml"), "NVML is not usable: cannot load"));
	json_object_put(g);
	fx_remove(root);

	root = fx_gpu_root(2, 1, "noinit");
	g = fx_agent_gpus(root);
	assert_at(g, "source", "proc");
	assert_at(g, "nvml", "NVML is not usable: nvmlInit_v2 failed: Driver Not Loaded (9)");
	json_object_put(g);
	fx_remove(root);

	root = fx_gpu_root(2, 1, "healthy");
	snprintf(p, sizeof(p), "%s%s/%s", root, LN_PROTO_REMOTE_DIR, LN_PROBE_GPU_FACTS);
	f = fopen(p, "a");
	assert_non_null(f);
	fputs("another build", f);
	fclose(f);
	g = fx_agent_gpus(root);
	assert_at(g, "source", "proc");
	assert_at(g, "program", "mismatch");
	assert_non_null(strstr(at(g, "nvml"), "llmnet runs only its own probes"));
	json_object_put(g);
	fx_remove(root);

	root = fx_gpu_root(0, 1, "healthy");
	g = fx_agent_gpus(root);
	assert_at(g, "count", "0");
	assert_at(g, "source", "null");
	assert_at(g, "program", "null");
	assert_non_null(strstr(at(g, "nvml"), "NVML not asked"));
	json_object_put(g);
	fx_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_facts__healthy),
		cmocka_unit_test(test_gpu_facts__faulty),
		cmocka_unit_test(test_gpu_facts__not_supported),
		cmocka_unit_test(test_gpu_facts__missing_symbols),
		cmocka_unit_test(test_gpu_facts__nvml_not_usable),
		cmocka_unit_test(test_gpu_facts__usage),
		cmocka_unit_test(test_gpu_facts__agent_reads_nvml),
		cmocka_unit_test(test_gpu_facts__agent_not_supported_stays_null),
		cmocka_unit_test(test_gpu_facts__agent_without_nvml),
		cmocka_unit_test(test_gpu_facts__agent_drops_only_the_odd_field),
		cmocka_unit_test(test_gpu_facts__agent_program_root_owned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
