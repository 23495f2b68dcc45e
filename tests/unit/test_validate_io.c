/* SPDX-License-Identifier: MIT */
/*
 * The io stage against the fake cluster (validate_fake.h): the probe
 * copied to the initiators, and the run on mounted, raw and missing
 * namespaces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

static struct world *io_world(void **state, struct ln_buf *y)
{
	static const char io_spec[] =
		"storage:\n  targets:\n    - nqn: nqn.2024-04.io.llmnet:n1.t1\n      node: n1\n"
		"      transport: rdma\n      namespaces:\n        - { nsid: 1, file: /srv/a.img, "
		"size: 1GiB }\n  initiators:\n    - node: n2\n      target: nqn.2024-04.io.llmnet:n1.t1\n"
		"      mount: { path: /mnt/ckpt, fs: ext4 }\n    - node: n3\n"
		"      target: nqn.2024-04.io.llmnet:n1.t1\n    - node: n4\n"
		"      target: nqn.2024-04.io.llmnet:n1.t1\n"
		"validation:\n  - { stage: devices }\n  - { stage: io, size: 16MiB, min: 500MB/s }\n";
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	struct world *w;
	size_t i;

	ln_buf_addstr(y, "version: 1\ncluster: fake\nnodes:\n");
	for (i = 0; i < 4; i++)
		ln_buf_addf(y, "  - name: n%zu\n    address: 127.0.1.%zu\n    gpus: 8\n    rdma:\n"
			    "      - { device: rxe0, port: 1, ip: 10.0.0.%zu }\n", i + 1, i + 1, i + 1);
	ln_buf_addstr(y, io_spec);
	if (ln_spec_load_buf("io.yaml", y->buf, y->len, &spec, &err) < 0)
		fail_msg("%s", err.buf);
	w = world_start(state, 4, spec);
	for (i = 1; i < 4; i += 2)
		json_object_object_add(w->f.facts[i], "nvme", json_tokener_parse(
			"[{\"name\":\"nvme1\",\"transport\":\"rdma\",\"subsysnqn\":"
			"\"nqn.2024-04.io.llmnet:n1.t1\",\"state\":\"live\",\"namespaces\":"
			"[{\"nsid\":1,\"block\":\"nvme1n1\",\"size_bytes\":1073741824}]}]"));
	ln_buf_release(&err);
	return w;
}

/* The io probe is copied once to each node that runs it (not to n3,
 * which has no namespace); a failed copy makes that node's check "not
 * run" with the node named, and the other nodes still probe. */
static void test_validate_io__probe_copies(void **state)
{
	struct ln_buf y = LN_BUF_INIT;
	struct world *w = io_world(state, &y);
	size_t i, seen = 0;

	w->f.put_fails[3] = 1;
	world_run(w);
	assert_int_equal(w->f.io_puts[0], 0);
	assert_int_equal(w->f.io_puts[1], 1);
	assert_int_equal(w->f.io_puts[2], 0);
	assert_int_equal(w->f.io_puts[3], 1);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_IO)
			continue;
		seen++;
		if (c->a == 1)
			assert_int_equal(c->status, LN_ST_PASS);
		if (c->a == 3) {
			assert_int_equal(c->status, LN_ST_NOT_RUN);
			assert_string_equal(c->reason, "cannot install '/var/lib/llmnet/bin/"
						       "llmnet-probe-io' on 'n4': sftp error 4");
		}
	}
	assert_int_equal(seen, 3);
	ln_buf_release(&y);
}

static void test_validate_io__run(void **state)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct world *w = io_world(state, &y);
	size_t i, seen = 0;

	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_IO)
			continue;
		seen++;
		if (c->a == 1) {
			assert_int_equal(c->status, LN_ST_PASS);
			assert_float_equal(c->value, 900.0, 1e-9);	/* the lower of write and read */
			assert_float_equal(c->threshold, 500.0, 1e-9);
			assert_string_equal(c->unit, "MB/s");
			assert_string_equal(c->attempts[0].command, "/var/lib/llmnet/bin/llmnet-probe-io --mount /mnt/ckpt "
								    "--size 16777216");
		} else if (c->a == 3) {	/* a raw device is named with its subsystem */
			assert_string_equal(c->attempts[0].command, "/var/lib/llmnet/bin/llmnet-probe-io --device /dev/"
				"nvme1n1 --nqn nqn.2024-04.io.llmnet:n1.t1 --size 16777216");
		} else {
			assert_int_equal(c->a, 2);
			assert_int_equal(c->status, LN_ST_SKIPPED);
			assert_string_equal(c->reason, "devices found no namespace 1 of "
						       "'nqn.2024-04.io.llmnet:n1.t1'");
		}
	}
	assert_int_equal(seen, 3);
	assert_int_equal(w->res.stages[LN_STAGE_DEVICES].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	ln_test_release(&y, &err);
}

/* The node writes the probe's output: "inf" or "nan" would pass any
 * threshold (NaN compares false), so a non-finite figure is no figure and
 * the check fails; a finite one on the other node is still judged (the
 * control). */
static void test_validate_io__non_finite_is_no_figure(void **state)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct world *w = io_world(state, &y);
	size_t i, seen = 0;

	w->f.io_out[1] = "llmnet-io-probe 1\nwrite_mbps inf\nread_mbps inf\nresult pass\n";
	w->f.io_out[3] = "llmnet-io-probe 1\nwrite_mbps 700.5\nread_mbps nan\nresult pass\n";
	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_IO || c->a == 2)
			continue;
		seen++;
		assert_int_equal(c->status, LN_ST_FAIL);
		assert_string_equal(c->reason, "the io probe gave no figure");
		assert_true(isnan(c->value));
	}
	assert_int_equal(seen, 2);
	ln_test_release(&y, &err);
}

/* An overflowing figure (1e999: strtod's HUGE_VAL) is no figure either;
 * beside it a finite one passes (the control). */
static void test_validate_io__overflow_is_no_figure(void **state)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct world *w = io_world(state, &y);
	size_t i;

	w->f.io_out[1] = "llmnet-io-probe 1\nwrite_mbps 1e999\nread_mbps 600\nresult pass\n";
	w->f.io_out[3] = "llmnet-io-probe 1\nwrite_mbps 650.0\nread_mbps 600\nresult pass\n";
	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage == LN_STAGE_IO && c->a == 1) {
			assert_int_equal(c->status, LN_ST_FAIL);
			assert_string_equal(c->reason, "the io probe gave no figure");
		}
		if (c->stage == LN_STAGE_IO && c->a == 3) {
			assert_int_equal(c->status, LN_ST_PASS);
			assert_float_equal(c->value, 600.0, 1e-9);
		}
	}
	ln_test_release(&y, &err);
}

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_io__probe_copies),
	WORLD_TEST(test_validate_io__run),
	WORLD_TEST(test_validate_io__non_finite_is_no_figure),
	WORLD_TEST(test_validate_io__overflow_is_no_figure),
)
