/* SPDX-License-Identifier: MIT */
/*
 * The devices stage's GPUDirect Storage readiness (orchestrator/validate/
 * stage_gds.c) on hand-made facts of an initiator g1 that declares
 * `gds: true` for an NVMe-oF/RDMA target on s1: the healthy node passes,
 * with cufile.json reported; each fault (nvidia_fs not loaded, the
 * proprietary driver, a live connection over TCP, no live controller, an
 * agent without gds facts) fails that initiator's check naming what is
 * missing; the control without gds has no such check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/json.h"
#include "orchestrator/validate/stages.h"

#define NQN "nqn.2024-04.io.llmnet:g.t1"

static const char spec_fmt[] =
	"version: 1\ncluster: g\nnodes:\n"
	"  - { name: s1, address: 10.0.0.1, rdma: [ { device: mlx5_0, ip: 10.1.0.1 } ] }\n"
	"  - { name: g1, address: 10.0.0.2 }\n"
	"storage:\n  targets:\n"
	"    - { nqn: \"" NQN "\", node: s1, transport: rdma, address: 10.1.0.1, hosts: [g1], "
	"namespaces: [ { nsid: 1, file: /var/lib/nvmet/g.img, size: 1GiB } ] }\n"
	"  initiators:\n    - { node: g1, target: \"" NQN "\"%s }\n"
	"validation:\n  - { stage: devices }\n";

/* g1's facts: its live controller's transport, nvidia_fs, the driver's
 * open modules (true, false, or "null"), cufile (a JSON value or NULL:
 * no gds object at all). */
struct g1 {
	const char *transport;	/* NULL: no controller */
	int nvidia_fs;
	const char *open;
	const char *cufile;
};

static struct json_object *facts[2];

static struct json_object *g1_facts(const struct g1 *g)
{
	char js[2048];
	struct json_object *o;

	snprintf(js, sizeof(js),
		 "{\"hostname\":\"g1\",\"rdma\":[],\"gpus\":{\"count\":0},\"nvme\":[%s%s%s],"
		 "\"topology\":{\"gpus\":[],\"nics\":[],\"peer_memory\":{\"nvidia_peermem\":false,"
		 "\"nv_peer_mem\":false,\"dmabuf\":{\"kernel\":true,\"gpu_open_modules\":%s,"
		 "\"verbs\":true,\"why\":null}}}%s%s%s%s}",
		 g->transport ? "{\"subsysnqn\":\"" NQN "\",\"state\":\"live\",\"transport\":\"" : "",
		 g->transport ? g->transport : "",
		 g->transport ? "\",\"namespaces\":[{\"nsid\":1,\"block\":\"nvme0n1\"}]}" : "",
		 g->open, g->cufile ? ",\"gds\":{\"nvidia_fs\":" : "",
		 g->cufile ? (g->nvidia_fs ? "true" : "false") : "",
		 g->cufile ? ",\"cufile\":" : "", g->cufile ? g->cufile : "");
	if (g->cufile)
		strcat(js, "}");
	o = json_tokener_parse(js);
	if (!o)
		fail_msg("not JSON: %s", js);
	return o;
}

static int facts_of(void *ctx, size_t node, struct json_object **out, struct ln_buf *err)
{
	(void)ctx, (void)err;
	*out = facts[node];
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

/* The devices stage on g with extra in the initiator's entry; the "gds"
 * checks as "NAME: STATUS: REASON" lines into out. */
static void run_gds(const struct g1 *g, const char *extra, struct ln_buf *out)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_validate_opts o;
	struct ln_spec *spec = NULL;
	struct ln_results res;
	size_t i;

	ln_buf_addf(&y, spec_fmt, extra);
	if (ln_spec_load_buf("gds.yaml", y.buf, y.len, &spec, &err) < 0)
		fail_msg("%s", err.buf);
	facts[0] = json_tokener_parse("{\"hostname\":\"s1\",\"rdma\":[],\"gpus\":{\"count\":0},"
				      "\"nvme\":[]}");
	facts[1] = g1_facts(g);
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	assert_int_equal(ln_validate_run(spec, &ops, NULL, &o, &res, &err), 0);
	for (i = 0; i < res.nchecks; i++)
		if (!strncmp(res.checks[i].name, "gds ", 4))
			ln_buf_addf(out, "%s: %s: %s\n", res.checks[i].name,
				    ln_status_name(res.checks[i].status),
				    res.checks[i].reason ? res.checks[i].reason : "");
	ln_results_release(&res);
	ln_spec_free(spec);
	json_object_put(facts[0]);
	json_object_put(facts[1]);
	ln_buf_release_all(&y, &err);
}

#define CUFILE "{\"path\":\"/etc/cufile.json\",\"allow_compat_mode\":false," \
	"\"rdma_dev_addr_list\":[\"10.1.0.2\",\"10.1.1.2\"],\"error\":null}"

static void test_validate_gds__healthy_passes(void **state)
{
	const struct g1 g = { "rdma", 1, "true", CUFILE };
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	run_gds(&g, ", gds: true", &out);
	assert_string_equal(out.buf, "gds " NQN ": pass: nvidia_fs loaded, open kernel modules, "
			    "rdma; /etc/cufile.json: rdma_dev_addr_list [10.1.0.2,10.1.1.2]\n");
	ln_buf_reset(&out);
	/* the control: without gds, no check */
	run_gds(&g, "", &out);
	assert_string_equal(out.buf, "");
	ln_buf_release(&out);
}

/* cufile.json: absent, unreadable, and compat mode on: reported, the
 * check still passes. */
static void test_validate_gds__cufile_reported(void **state)
{
	struct g1 g = { "rdma", 1, "true", "null" };
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	run_gds(&g, ", gds: true", &out);
	assert_non_null(strstr(out.buf, ": pass: nvidia_fs loaded, open kernel modules, rdma; no "
			       "/etc/cufile.json (libcufile's defaults, unless CUFILE_ENV_PATH_JSON "
			       "names another)\n"));
	ln_buf_reset(&out);
	g.cufile = "{\"path\":\"/etc/cufile.json\",\"allow_compat_mode\":true,"
		   "\"rdma_dev_addr_list\":null,\"error\":null}";
	run_gds(&g, ", gds: true", &out);
	assert_non_null(strstr(out.buf, ": pass: nvidia_fs loaded, open kernel modules, rdma; "
			       "/etc/cufile.json: rdma_dev_addr_list none, allow_compat_mode true "
			       "(cuFile falls back to reads through host memory, silently"));
	ln_buf_reset(&out);
	g.cufile = "{\"path\":\"/etc/cufile.json\",\"allow_compat_mode\":null,"
		   "\"rdma_dev_addr_list\":null,\"error\":\"is not JSON (with // comments) holding "
		   "an object\"}";
	run_gds(&g, ", gds: true", &out);
	assert_non_null(strstr(out.buf, ": pass: nvidia_fs loaded, open kernel modules, rdma; "
			       "/etc/cufile.json is not JSON (with // comments) holding an object\n"));
	ln_buf_release(&out);
}

/* Each fault alone fails the check, naming it and nothing else. */
static void test_validate_gds__each_fault_named(void **state)
{
	static const struct {
		struct g1 g;
		const char *want;
	} cases[] = {
		{ { "rdma", 0, "true", CUFILE }, "'g1': nvidia_fs is not loaded (no /sys/module/"
		  "nvidia_fs or /proc/driver/nvidia-fs): modprobe nvidia-fs (/etc/cufile.json" },
		{ { "rdma", 1, "false", CUFILE }, "'g1': the NVIDIA driver is not the open kernel "
		  "modules, which GDS needs (" },
		{ { "rdma", 1, "null", CUFILE }, "'g1': no NVIDIA driver is loaded, so whether it "
		  "is the open kernel modules GDS needs is unknown (" },
		{ { "tcp", 1, "true", CUFILE }, "'g1': the live connection to '" NQN "' is tcp, "
		  "and GDS reads NVMe-oF over RDMA only (" },
		{ { NULL, 1, "true", CUFILE }, "'g1': no live controller of '" NQN "' (" },
		{ { "rdma", 1, "true", NULL }, "'g1': the agent's facts have no 'gds' (an older "
		  "agent) (cufile.json not known)" },
	};
	struct ln_buf out = LN_BUF_INIT;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ln_buf_reset(&out);
		run_gds(&cases[k].g, ", gds: true", &out);
		if (!strstr(out.buf, "gds " NQN ": fail: GPUDirect Storage cannot read '" NQN
			    "' on ") || !strstr(out.buf, cases[k].want) || strchr(out.buf, ';'))
			fail_msg("case %zu: want '%s' alone in: %s", k, cases[k].want, out.buf);
	}
	ln_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_gds__healthy_passes),
		cmocka_unit_test(test_validate_gds__cufile_reported),
		cmocka_unit_test(test_validate_gds__each_fault_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
