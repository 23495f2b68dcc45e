/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the spec parser and checker: the model built from the
 * examples, ranges expanded in step, defaults, and the semantic rules,
 * each asserted through the exact message and position a user sees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/error.h"
#include "common/json.h"
#include "orchestrator/spec.h"

#define EXAMPLES_DIR FIXTURES_DIR "/spec/../../../examples"

/* Load text; return the code, with the messages in *msgs (caller frees). */
static int load_text(const char *text, struct ln_spec **spec, char **msgs)
{
	struct ln_buf err = LN_BUF_INIT;
	int r;

	r = ln_spec_load_buf("t.yaml", text, strlen(text), spec, &err);
	*msgs = ln_buf_detach(&err, NULL);
	return r;
}

/* Expect the text to be invalid with this exact output. */
static void expect_errors(const char *text, const char *want)
{
	struct ln_spec *spec = NULL;
	char *msgs = NULL;

	assert_int_equal(load_text(text, &spec, &msgs), -LN_ESPEC);
	assert_null(spec);
	assert_string_equal(msgs, want);
	free(msgs);
}

static struct ln_spec *expect_valid(const char *text)
{
	struct ln_spec *spec = NULL;
	char *msgs = NULL;
	int r = load_text(text, &spec, &msgs);

	if (r)
		fprintf(stderr, "unexpected errors:\n%s", msgs);
	assert_int_equal(r, 0);
	assert_non_null(spec);
	free(msgs);
	return spec;
}

#define HEAD "version: 1\ncluster: c1\n"

static void test_spec__te_lab_model(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *s = NULL;
	const struct ln_target *t;
	const struct ln_initiator *in;

	(void)state;
	assert_int_equal(ln_spec_load(EXAMPLES_DIR "/te-lab.yaml", &s, &err), 0);
	assert_string_equal(s->cluster, "te-lab");
	assert_int_equal(s->version, 1);
	assert_string_equal(s->ssh.user, "root");
	assert_int_equal(s->ssh.port, 22);
	assert_int_equal(s->ssh.timeout_ms, 30000);
	assert_int_equal(s->ssh.connect_timeout_ms, 10000);
	assert_int_equal(s->ssh.parallel, 64);
	assert_int_equal(s->ssh.host_key_policy, LN_HOST_KEY_STRICT);
	assert_int_equal(s->n_nodes, 2);
	assert_string_equal(s->nodes[0].name, "te1");
	assert_int_equal(s->nodes[0].gpus, 2);
	assert_int_equal(s->nodes[0].slots, 2);
	assert_int_equal(s->nodes[1].slots, 1);
	assert_int_equal(s->nodes[0].n_rdma, 1);
	assert_string_equal(s->nodes[0].rdma[0].device, "erdma_0");
	assert_int_equal(s->nodes[0].rdma[0].min_rate_bps, 100000000000ull);
	assert_int_equal(s->nodes[0].rdma[0].gid_index, -1);
	assert_int_equal(s->n_targets, 1);
	t = &s->targets[0];
	assert_int_equal(t->node, 0);
	assert_int_equal(t->transport, LN_TRANSPORT_RDMA);
	assert_int_equal(t->service, 4420);
	/* address defaults to the node's first RDMA ip */
	assert_string_equal(t->address, "172.16.40.93");
	assert_int_equal(t->n_hosts, 1);
	assert_int_equal(t->hosts[0], 1);
	assert_int_equal(t->n_namespaces, 1);
	assert_int_equal(t->namespaces[0].size, 1ull << 30);
	assert_int_equal(s->n_initiators, 1);
	in = &s->initiators[0];
	assert_int_equal(in->node, 1);
	assert_int_equal(in->target, 0);
	assert_true(in->mount.present);
	assert_int_equal(in->mount.format, LN_FORMAT_IF_BLANK);
	assert_string_equal(in->mount.fs, "ext4");
	assert_int_equal(s->validation.n_order, 6);
	assert_int_equal(s->validation.bandwidth.min_kind, LN_MIN_FRACTION);
	assert_true(s->validation.bandwidth.min_fraction > 0.899 &&
		    s->validation.bandwidth.min_fraction < 0.901);
	assert_int_equal(s->validation.io.min_bps, 4000000000ull);
	assert_int_equal(s->validation.nccl.min_busbw_bps, 160000000000ull);
	assert_int_equal(ln_spec_node_index(s, "te2"), 1);
	assert_int_equal(ln_spec_node_index(s, "te3"), -1);
	assert_int_equal(ln_spec_target_index(s, "nqn.2024-04.com.example:te1.target1"), 0);
	ln_spec_free(s);
	ln_buf_release(&err);
}

static void test_spec__ranges_expand_in_step(void **state)
{
	struct ln_spec *s;

	(void)state;
	s = expect_valid(HEAD "nodes:\n"
			      "  - name: gpu[001-128]\n"
			      "    address: 10.0.1.[1-128]\n"
			      "    gpus: 8\n"
			      "    rdma:\n"
			      "      - device: mlx5_0\n"
			      "        ip: 10.1.1.[1-128]\n"
			      "      - device: mlx5_1\n"
			      "        ip: 10.1.2.[1-128]\n");
	assert_int_equal(s->n_nodes, 128);
	assert_string_equal(s->nodes[0].name, "gpu001");
	assert_string_equal(s->nodes[0].address, "10.0.1.1");
	assert_string_equal(s->nodes[127].name, "gpu128");
	assert_string_equal(s->nodes[127].address, "10.0.1.128");
	assert_string_equal(s->nodes[41].rdma[1].ip, "10.1.2.42");
	assert_string_equal(s->nodes[41].rdma[1].device, "mlx5_1");
	assert_int_equal(s->nodes[41].slots, 8);
	assert_int_equal(s->nodes[41].port, 22);
	ln_spec_free(s);
}

static void test_spec__range_count_mismatch(void **state)
{
	(void)state;
	expect_errors(HEAD "nodes:\n"
			   "  - name: gpu[01-04]\n"
			   "    address: 10.0.1.[1-3]\n",
		      "t.yaml:5:14: 'address' range '10.0.1.[1-3]' expands to 3 values but 'name' to 4\n");
	expect_errors(HEAD "nodes:\n"
			   "  - name: gpu01\n"
			   "    address: 10.0.1.[1-3]\n",
		      "t.yaml:5:14: 'address' holds a range ('10.0.1.[1-3]') but 'name' is the single 'gpu01'\n");
}

static void test_spec__all_errors_sorted(void **state)
{
	(void)state;
	/* Problems from both passes, reported together, in file order. */
	expect_errors("cluster: c1\n"
		      "nodes:\n"
		      "  - { name: a, address: 10.0.0.1, gpus: -1 }\n"
		      "  - { nmae: b, address: 10.0.0.2 }\n"
		      "  - { name: a, address: 10.0.0.3 }\n"
		      "cluster: c2\n",
		      "t.yaml:1:1: missing required key 'version' in the spec\n"
		      "t.yaml:3:41: 'gpus' takes an integer from 0 to 1024, not '-1'\n"
		      "t.yaml:4:5: missing required key 'name' in node\n"
		      "t.yaml:4:7: unknown key 'nmae' in node (did you mean 'name'?)\n"
		      "t.yaml:5:13: duplicate node name 'a' (first on line 3)\n"
		      "t.yaml:6:1: duplicate key 'cluster' in the spec (first on line 1)\n");
}

static void test_spec__unknown_version_only(void **state)
{
	(void)state;
	expect_errors("version: 2\ncluster: c1\nnodes: []\nfoo: 1\n",
		      "t.yaml:1:10: unsupported spec version '2' (this llmnet reads version 1)\n");
}

static void test_spec__duplicates(void **state)
{
	(void)state;
	expect_errors(HEAD "nodes:\n"
			   "  - { name: a, address: 10.0.0.1 }\n"
			   "  - { name: b, address: 10.0.0.1, port: 2222 }\n"
			   "  - { name: c, address: 10.0.0.1 }\n"
			   "  - { name: a, address: 10.0.0.4 }\n",
		      "t.yaml:6:25: nodes 'a' and 'c' have the same SSH endpoint 10.0.0.1 port 22\n"
		      "t.yaml:7:13: duplicate node name 'a' (first on line 4)\n");
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec__te_lab_model),
		cmocka_unit_test(test_spec__ranges_expand_in_step),
		cmocka_unit_test(test_spec__range_count_mismatch),
		cmocka_unit_test(test_spec__all_errors_sorted),
		cmocka_unit_test(test_spec__unknown_version_only),
		cmocka_unit_test(test_spec__duplicates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
