/* SPDX-License-Identifier: MIT */
/*
 * GPU facts from NVML (gpu_nvml.h). The agent is static and cannot dlopen
 * NVML reliably, so it runs llmnet's GPU facts program: opened without
 * following a link, checked against the SHA-256 of the build this agent
 * came with, run from that open file with no environment (no loader
 * variable reaches the library it opens), under a 20 s bound, its output
 * capped. What it prints is untrusted like any answer: every field is
 * checked for its type and bounds and copied, an unknown one dropped, a
 * wrong one refused with the reason in "nvml".
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/run/allow.h"
#include "agents/agent/run/bounded.h"
#include "agents/agent/run/gpu_nvml.h"
#include "common/json.h"
#include "common/proto.h"
#include "common/util.h"
#include "probe_sha256.h"

#define PROGRAM LN_PROTO_REMOTE_DIR "/" LN_PROBE_GPU_FACTS
#define TIMEOUT_S 20	/* said in a message below */
#define OUTPUT_MAX (256u << 10)
#define STR_MAX 95	/* NVML's longest name or UUID, less its NUL */
#define ERRORS_MAX 8

enum kind { K_STR, K_UINT, K_BOOL, K_BUS, K_STRS };

struct field {
	const char *name;
	enum kind kind;
	long long max;	/* K_UINT: the largest value; K_STRS: the most strings */
};

static const struct field device_fields[] = {
	{ "index", K_UINT, LN_GPU_NVML_MAX - 1 }, { "uuid", K_STR, 0 }, { "model", K_STR, 0 },
	{ "bus_id", K_BUS, 0 }, { "numa_node", K_UINT, 4095 },
	{ "memory_bytes", K_UINT, 1ll << 50 }, { "persistence", K_BOOL, 0 },
	{ "nvlink_up", K_UINT, LN_GPU_NVML_NVLINKS_MAX },
	{ "nvlink_total", K_UINT, LN_GPU_NVML_NVLINKS_MAX },
	{ "ecc_volatile_uncorrected", K_UINT, 1ll << 62 }, { "row_remap_pending", K_BOOL, 0 },
	{ "row_remap_failed", K_BOOL, 0 }, { "errors", K_STRS, ERRORS_MAX },
};

/* Printable ASCII, 1 to STR_MAX bytes. */
static int plain(const char *s)
{
	size_t n = strlen(s), i;

	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return 0;
	return n >= 1 && n <= STR_MAX;
}

/* The strings of arr (each a string), each cut at 200 bytes with every
 * byte that is not printable ASCII a '?': an NVML error still fails its
 * GPU, but no terminal escape or control byte reaches a report. */
static struct json_object *printable_copy(struct json_object *arr)
{
	struct json_object *out = json_object_new_array();
	size_t i, k;

	for (i = 0; i < json_object_array_length(arr); i++) {
		char s[201];

		snprintf(s, sizeof(s), "%s",
			 json_object_get_string(json_object_array_get_idx(arr, i)));
		for (k = 0; s[k]; k++)
			if (s[k] < 0x20 || s[k] > 0x7e)
				s[k] = '?';
		json_object_array_add(out, json_object_new_string(s));
	}
	return out;
}

/* sysfs's form: DDDD:BB:DD.F, lowercase hex (a domain may be longer). */
static int bus_id_ok(const char *s)
{
	size_t d = strspn(s, "0123456789abcdef");

	return d >= 4 && d <= 8 && s[d] == ':' && strspn(s + d + 1, "0123456789abcdef") == 2 &&
	       s[d + 3] == ':' && strspn(s + d + 4, "0123456789abcdef") == 2 && s[d + 6] == '.' &&
	       s[d + 7] >= '0' && s[d + 7] <= '7' && !s[d + 8];
}

/* v as f allows it, copied into out; null stays null. 0, or -1 with
 * why (the caller's, 160 bytes). */
static int copy_field(const struct field *f, struct json_object *v, struct json_object *out,
		      char *why, size_t size)
{
	size_t i, n;

	if (!v) {
		ln_json_add(out, f->name, NULL);
		return 0;
	}
	switch (f->kind) {
	case K_STR:
	case K_BUS:
		if (!json_object_is_type(v, json_type_string) || !plain(json_object_get_string(v)) ||
		    (f->kind == K_BUS && !bus_id_ok(json_object_get_string(v))))
			break;
		ln_json_add_str(out, f->name, json_object_get_string(v));
		return 0;
	case K_UINT:
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > f->max)
			break;
		ln_json_add_i64(out, f->name, json_object_get_int64(v));
		return 0;
	case K_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			break;
		ln_json_add_bool(out, f->name, json_object_get_boolean(v));
		return 0;
	case K_STRS:
		if (!json_object_is_type(v, json_type_array) ||
		    (n = json_object_array_length(v)) > (size_t)f->max)
			break;
		for (i = 0; i < n; i++)
			if (!json_object_is_type(json_object_array_get_idx(v, i),
						 json_type_string))
				goto bad;
		ln_json_add(out, f->name, printable_copy(v));
		return 0;
	}
bad:
	snprintf(why, size, "its '%s' is not %s", f->name,
		 f->kind == K_BUS ? "a bus id DDDD:BB:DD.F" : f->kind == K_UINT ?
		 "a number in range" : f->kind == K_BOOL ? "a boolean" : "within bounds");
	return -1;
}

/* One GPU's checked copy, or NULL with why. Its index must be i: NVML
 * counts its devices from 0 in order. Any other field that is not what
 * it should be (a NUMA node NVML left at 0xFFFFFFFF, a count past its
 * bound) is null, unknown, with the reason among the GPU's
 * "dropped"; the rest of the GPU's facts stay. */
static struct json_object *device(struct json_object *d, size_t i, char *why, size_t size)
{
	struct json_object *out, *v, *dropped = NULL;
	int64_t index;
	size_t k;

	if (!json_object_is_type(d, json_type_object) || ln_json_i64_at(d, "index", &index) ||
	    index != (int64_t)i) {
		snprintf(why, size, "GPU %zu has no index %zu", i, i);
		return NULL;
	}
	out = json_object_new_object();
	for (k = 0; k < ARRAY_SIZE(device_fields); k++) {
		char w[120];

		v = NULL;
		json_object_object_get_ex(d, device_fields[k].name, &v);
		if (copy_field(&device_fields[k], v, out, w, sizeof(w)) < 0) {
			if (!dropped)
				dropped = json_object_new_array();
			ln_json_add(out, device_fields[k].name, NULL);
			json_object_array_add(dropped, json_object_new_string(w));
		}
	}
	if (dropped)
		ln_json_add(out, "dropped", dropped);
	return out;
}

/* The program's answer into gpus, or -1 with why. */
static int take(struct json_object *ans, struct json_object *gpus, char *why, size_t size)
{
	static const struct field versions[] = { { "driver_version", K_STR, 0 },
						 { "cuda_version", K_STR, 0 } };
	struct json_object *devs, *out = NULL, *models = NULL, *v;
	int64_t count;
	size_t i, n;

	if (!json_object_is_type(ln_json_at(ans, "nvml"), json_type_boolean) ||
	    !json_object_get_boolean(ln_json_at(ans, "nvml"))) {
		snprintf(why, size, "NVML is not usable: %.300s",
			 ln_json_str_at(ans, "error") ? ln_json_str_at(ans, "error") : "no reason given");
		return -1;
	}
	devs = ln_json_at(ans, "devices");
	if (ln_json_i64_at(ans, "count", &count) || count < 0 || count > 1024 ||
	    !json_object_is_type(devs, json_type_array) ||
	    (n = json_object_array_length(devs)) > LN_GPU_NVML_MAX ||
	    n != (size_t)(count < LN_GPU_NVML_MAX ? count : LN_GPU_NVML_MAX)) {
		snprintf(why, size, "the GPU facts program's count and devices disagree");
		return -1;
	}
	out = json_object_new_array();
	models = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *d = device(json_object_array_get_idx(devs, i), i, why, size);

		if (!d)
			goto bad;
		json_object_array_add(out, d);
		if ((v = ln_json_at(d, "model")))
			json_object_array_add(models, json_object_get(v));
	}
	for (i = 0; i < ARRAY_SIZE(versions); i++) {
		char w[120];

		v = NULL;
		json_object_object_get_ex(ans, versions[i].name, &v);
		if (copy_field(&versions[i], v, gpus, w, sizeof(w)) < 0) {
			snprintf(why, size, "%s", w);
			goto bad;
		}
	}
	ln_json_add_i64(gpus, "count", count);
	ln_json_add(gpus, "models", models);
	ln_json_add_str(gpus, "source", "nvml");
	ln_json_add(gpus, "devices", out);
	return 0;
bad:
	json_object_put(out);
	json_object_put(models);
	json_object_object_del(gpus, "driver_version");
	json_object_object_del(gpus, "cuda_version");
	return -1;
}

/* Run the open program fd; its answer into gpus, or -1 with why. */
static int run(const struct ln_agent *a, int fd, struct json_object *gpus, char *why,
	       size_t size)
{
	static char *const no_env[] = { NULL };
	char lib[PATH_MAX];
	const char *argv[4] = { LN_PROBE_GPU_FACTS, NULL, NULL, NULL };
	struct ln_exec_result res;
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *ans = NULL;
	int r = -1;

	/* under --root, the library below the root (a test's stand-in) */
	if (a->fixture && ln_agent_path(a, LN_GPU_FACTS_ROOT_LIB, lib) == 0) {
		argv[1] = "--lib";
		argv[2] = lib;
	}
	if (ln_exec_bounded_env(fd, argv, no_env, TIMEOUT_S, OUTPUT_MAX, &res, &err) < 0) {
		snprintf(why, size, "%s", err.buf);
		ln_buf_release(&err);
		return -1;
	}
	ln_buf_reset(&err);
	if (res.timed_out || res.signal)
		snprintf(why, size, "the GPU facts program %s", res.timed_out ?
			 "ran past its 20 s bound" : "was killed by a signal");
	else if (res.truncated)
		snprintf(why, size, "the GPU facts program wrote more than %u bytes", OUTPUT_MAX);
	else if (!res.exited || (res.exit_status != 0 && res.exit_status != 2))
		snprintf(why, size, "the GPU facts program exited %d", res.exit_status);
	else if (ln_json_parse(res.output.buf, res.output.len, &ans, &err) < 0 ||
		 !json_object_is_type(ans, json_type_object))
		snprintf(why, size, "the GPU facts program's output is not a JSON object: %.200s",
			 err.buf);
	else
		r = take(ans, gpus, why, size);
	json_object_put(ans);
	ln_exec_result_release(&res);
	ln_buf_release(&err);
	return r;
}

void ln_gpu_nvml_facts(const struct ln_agent *a, int seen, struct json_object *gpus)
{
	struct ln_buf err = LN_BUF_INIT;
	char why[512] = "";
	const char *program = NULL;
	int fd = -1;

	if (!seen) {
		snprintf(why, sizeof(why), "no NVIDIA GPU in /proc/driver/nvidia/gpus or /dev: "
			 "NVML not asked");
	} else if (!ln_path_exists(a, PROGRAM)) {
		program = "absent";
		snprintf(why, sizeof(why), "the GPU facts program %s is not installed", PROGRAM);
	} else if (ln_allow_open_own(a, PROGRAM, LN_SHA256_GPU_FACTS, &fd, &err) < 0) {
		program = "mismatch";
		snprintf(why, sizeof(why), "%s", err.buf);
	} else {
		program = "installed";
		if (run(a, fd, gpus, why, sizeof(why)) == 0)
			why[0] = '\0';
	}
	if (fd >= 0)
		close(fd);
	ln_json_add_str(gpus, "program", program);
	ln_json_add_str(gpus, "nvml", why[0] ? why : NULL);
	ln_buf_release(&err);
}
