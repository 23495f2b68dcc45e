/* SPDX-License-Identifier: MIT */
/*
 * A fixture root with NVIDIA GPUs for the agent's tests of facts.gpus
 * (test_gpu_facts, test_validate_gpu): GPUs in /proc/driver/nvidia, the
 * GPU facts program installed where the controller puts it, and a
 * stand-in NVML (tests/unit/standin/nvml_standin.c, NOT NVML) where the
 * agent points it under --root. Header-only, after agent_fixture.h.
 */
#ifndef LN_TEST_GPU_FIXTURE_H
#define LN_TEST_GPU_FIXTURE_H

#include "common/proto.h"

#define GPU_FACTS_PROGRAM BUILD_DIR "/probes/gpu_facts"

/* A node-initiator root with n GPUs in /proc, the program installed when
 * asked, and the stand-in variant (NULL: no NVML); fx_remove it. */
static inline char *fx_gpu_root(int n, int installed, const char *variant)
{
	struct ln_buf e = LN_BUF_INIT;
	char *root = fx_build("node-initiator"), p[4096], cmd[8192];
	const char *info = "Model: \t\t NVIDIA H100 80GB HBM3\n";
	int i;

	assert_non_null(root);
	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/proc/driver/nvidia/gpus/0000:0%d:00.0", root, i + 1);
		assert_int_equal(ln_mkdir_p(p, 0755, &e), 0);
		strcat(p, "/information");
		assert_int_equal(ln_file_write_atomic(p, info, strlen(info), 0644, &e), 0);
	}
	if (installed) {
		snprintf(cmd, sizeof(cmd), "install -D -m 0755 %s %s%s/%s", GPU_FACTS_PROGRAM, root,
			 LN_PROTO_REMOTE_DIR, LN_PROBE_GPU_FACTS);
		assert_int_equal(system(cmd), 0);
	}
	if (variant) {
		snprintf(cmd, sizeof(cmd), "install -D -m 0644 %s/standin/nvml/%s/libnvidia-ml.so.1 "
			 "%s%s", BUILD_DIR, variant, root, LN_GPU_FACTS_ROOT_LIB);
		assert_int_equal(system(cmd), 0);
	}
	ln_buf_release(&e);
	return root;
}

/* The agent's facts answer on root. */
static inline struct json_object *fx_agent_facts(const char *root)
{
	const char *args[] = { "facts", NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, e = LN_BUF_INIT;
	struct json_object *o = NULL;

	assert_int_equal(fx_agent(root, args, NULL, &out, &err, NULL), 0);
	assert_int_equal(ln_json_parse(out.buf, out.len, &o, &e), 0);
	ln_buf_release_all(&out, &err, &e);
	return o;
}

/* Its gpus object (the caller's). */
static inline struct json_object *fx_agent_gpus(const char *root)
{
	struct json_object *o = fx_agent_facts(root), *g = json_object_get(ln_json_at(o, "gpus"));

	json_object_put(o);
	assert_non_null(g);
	return g;
}

#endif
