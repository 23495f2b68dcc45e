/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the renderers of orchestrator/report/recap.c: the plan,
 * the recap and the facts of a hand-made run, byte for byte into a buffer
 * (what cmd/ writes to stdout), the plan's warnings kept as the run's
 * notes in text and inside the document in JSON, and a full buffer said.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/error.h"
#include "common/json.h"
#include "orchestrator/report/recap.h"

#define T1 "nqn.2024-04.io.llmnet:n1.t1"

static const char spec_yaml[] =
	"version: 1\n"
	"cluster: rc\n"
	"ssh: { user: root }\n"
	"nodes:\n"
	"  - { name: \"n[1-2]\", address: \"10.0.0.[1-2]\", gpus: 2 }\n"
	"storage:\n"
	"  targets:\n"
	"    - { nqn: " T1 ", node: n1, transport: tcp, address: 10.0.0.1,\n"
	"        namespaces: [ { nsid: 1, file: /srv/t1.img, size: 1MiB } ] }\n"
	"  initiators: [ { node: n2, target: " T1 " } ]\n";

struct fx {
	struct ln_spec *spec;
	struct ln_run run;
};

static struct json_object *js(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	assert_non_null(o);
	return o;
}

/* n1 answered: a host to create, an allowed host to remove, one failed
 * change, a warning of its own; n2 timed out. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ln_buf err = LN_BUF_INIT;
	struct ln_run *r;
	size_t i;

	assert_non_null(f);
	assert_int_equal(ln_spec_load_buf("rc.yaml", spec_yaml, strlen(spec_yaml), &f->spec, &err), 0);
	ln_buf_release(&err);
	r = &f->run;
	pthread_mutex_init(&r->log_lock, NULL);
	r->spec = f->spec;
	r->n = f->spec->n_nodes;
	r->nodes = calloc(r->n, sizeof(*r->nodes));
	assert_non_null(r->nodes);
	for (i = 0; i < r->n; i++) {
		r->nodes[i] = (struct ln_node_run){ .idx = i, .spec = &f->spec->nodes[i],
						    .state = LN_NODE_OK, .limited = 1 };
		ln_buf_init(&r->nodes[i].reason, 0);
		ln_buf_init(&r->nodes[i].skip, 0);
	}
	r->nodes[0].facts = js("{\"protocol\":1,\"host_nqn\":\"nqn.h1\",\"systemd\":true,"
			       "\"gpus\":{\"count\":2,\"models\":[\"H100\"]},"
			       "\"rdma\":[{\"device\":\"mlx5_0\",\"ports\":[{\"port\":1,"
			       "\"state\":\"ACTIVE\",\"rate_gbps\":400,\"active_mtu\":4096}]}],"
			       "\"nvme\":[{\"name\":\"nvme0\",\"transport\":\"pcie\"}]}");
	r->nodes[0].answer = js("{\"changes\":["
				"{\"action\":\"create\",\"kind\":\"nvmet_host\",\"id\":\"nqn.h3\"},"
				"{\"action\":\"ok\",\"kind\":\"hostfile\",\"id\":\"/etc/llmnet/hostfile\"},"
				"{\"action\":\"remove\",\"kind\":\"nvmet_allowed_host\","
				"\"id\":\"" T1 "/nqn.h9\"},"
				"{\"action\":\"create\",\"kind\":\"nvmet_port\",\"id\":\"p1\","
				"\"error\":\"boom\"}],"
				"\"warnings\":[\"kept backing file '/srv/d.img': adopted\"]}");
	r->nodes[0].n_ok = 1;
	r->nodes[0].n_changed = 2;
	r->nodes[0].n_failed = 1;
	r->nodes[0].applied = 1;
	r->nodes[1].state = LN_NODE_UNREACHABLE;
	ln_buf_addstr(&r->nodes[1].reason, "connect timed out (phase facts)");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	ln_run_release(&f->run);
	ln_spec_free(f->spec);
	free(f);
	return 0;
}

/* The notes the run kept, one "LEVEL:TEXT" line each, taken from it. */
static void take_notes(struct ln_run *r, struct ln_buf *b)
{
	struct ln_notes n = ln_run_notes_take(r);
	size_t i;

	for (i = 0; i < n.n; i++)
		ln_buf_addf(b, "%d:%s\n", n.v[i].level, n.v[i].text);
	ln_notes_release(&n);
}

static void test_recap__plan_text(void **state)
{
	struct fx *f = *state;
	struct ln_buf out = LN_BUF_INIT, tail = LN_BUF_INIT, notes = LN_BUF_INIT;
	struct ln_plan_summary sum;

	assert_int_equal(ln_recap_plan(&f->run, 0, &out, &tail, &sum), 0);
	assert_string_equal(out.buf,
		"n1:\n"
		"  + nvmet_host             nqn.h3\n"
		"  - nvmet_allowed_host     " T1 "/nqn.h9\n"
		"  ! nvmet_port             p1  error: boom\n"
		"n2: unreachable: connect timed out (phase facts)\n"
		"  (no applied state on record: cannot plan it from its last-known state)\n");
	assert_string_equal(tail.buf,
		"\nPlan: 1 to create, 0 to change, 1 to remove on 1 of 2 nodes; 1 unreachable.\n");
	/* the warnings: for the command to print between the two */
	take_notes(&f->run, &notes);
	assert_string_equal(notes.buf,
		"1:'nqn.h9' loses access to '" T1 "' on 'n1'; connections it already has stay "
		"open until that host disconnects\n"
		"1:n1: kept backing file '/srv/d.img': adopted\n");
	assert_int_equal(sum.create, 1);
	assert_int_equal(sum.remove, 1);
	assert_int_equal(sum.error, 1);
	assert_int_equal(sum.ok, 1);
	assert_int_equal(sum.nodes_changing, 1);
	assert_int_equal(sum.nodes_unreachable, 1);
	ln_test_release(&out, &tail, &notes);
}

static void test_recap__plan_json_keeps_warnings_inside(void **state)
{
	struct fx *f = *state;
	struct ln_buf out = LN_BUF_INIT, tail = LN_BUF_INIT, notes = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_plan_summary sum;
	struct json_object *o = NULL, *w;

	assert_int_equal(ln_recap_plan(&f->run, 1, &out, &tail, &sum), 0);
	assert_int_equal(tail.len, 0);
	take_notes(&f->run, &notes);
	assert_int_equal(notes.len, 0);
	assert_int_equal(ln_json_parse(out.buf, out.len, &o, &err), 0);
	w = ln_json_at(o, "warnings");
	assert_int_equal(json_object_array_length(w), 2);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(w, 1)),
			    "n1: kept backing file '/srv/d.img': adopted");
	assert_string_equal(ln_json_str_at(ln_json_at(ln_json_at(o, "nodes"), "n2"), "state"),
			    "unreachable");
	assert_int_equal(json_object_get_int(ln_json_at(ln_json_at(o, "summary"), "create")), 1);
	json_object_put(o);
	ln_test_release(&out, &tail, &notes, &err);
}

static void test_recap__apply_text_and_exit_code(void **state)
{
	struct fx *f = *state;
	struct ln_buf out = LN_BUF_INIT;
	int code = -1;

	assert_int_equal(ln_recap_apply(&f->run, "apply", 0, &out, &code), 0);
	assert_string_equal(out.buf,
		"\nRECAP\n"
		"n1   : ok=1    changed=2    failed=1   skipped=0  unreachable=0\n"
		"       ! p1: boom\n"
		"n2   : ok=0    changed=0    failed=0   skipped=0  unreachable=1  connect timed out "
		"(phase facts)\n"
		"\napply: 2 changed on 2 nodes, 1 failed, 1 unreachable; not converged.\n");
	assert_int_equal(code, LN_EXIT_UNREACHABLE);
	ln_buf_release(&out);
}

static void test_recap__facts_text(void **state)
{
	struct fx *f = *state;
	struct ln_buf out = LN_BUF_INIT;

	assert_int_equal(ln_recap_facts(&f->run, 0, &out), 0);
	assert_string_equal(out.buf,
		"n1 (10.0.0.1)\n"
		"  host nqn   nqn.h1\n"
		"  persistent no\n"
		"  gpus       2 (H100), spec expects 2\n"
		"  rdma       DEVICE       PORT  STATE    RATE       MTU   \n"
		"             mlx5_0       1     ACTIVE   400        4096  \n"
		"  nvme-of    CTRL     TRANS  ADDRESS                STATE    SUBSYSTEM\n"
		"\n"
		"n2 (10.0.0.2)\n"
		"  unreachable: connect timed out (phase facts)\n"
		"\n");
	ln_buf_release(&out);
}

/* GPUs NVML counted say so, with the driver and CUDA versions */
static void test_recap__facts_nvml_gpus(void **state)
{
	struct fx *f = *state;
	struct ln_buf out = LN_BUF_INIT;

	json_object_object_add(f->run.nodes[0].facts, "gpus",
			       js("{\"count\":2,\"models\":[\"H100\"],\"source\":\"nvml\","
				  "\"driver_version\":\"570.86.15\",\"cuda_version\":\"12.8\"}"));
	assert_int_equal(ln_recap_facts(&f->run, 0, &out), 0);
	assert_non_null(strstr(out.buf, "  gpus       2 (H100) by NVML, driver 570.86.15, CUDA 12.8, "
				   "spec expects 2\n"));
	ln_buf_release(&out);
}

/* A buffer too small for the output: said, never a silent cut. */
static void test_recap__full_buffer_is_said(void **state)
{
	struct fx *f = *state;
	struct ln_buf out;
	int code = -1;

	ln_buf_init(&out, 16);
	assert_int_equal(ln_recap_facts(&f->run, 0, &out), -E2BIG);
	ln_buf_reset(&out);
	assert_int_equal(ln_recap_apply(&f->run, "apply", 1, &out, &code), -E2BIG);
	assert_int_equal(code, LN_EXIT_UNREACHABLE);
	ln_buf_release(&out);
}

/* Notes come back in the order they were kept, once. */
static void test_recap__notes_are_taken_once_in_order(void **state)
{
	struct fx *f = *state;
	struct ln_buf notes = LN_BUF_INIT;
	int i;

	for (i = 0; i < 20; i++)
		ln_run_note(&f->run, i % 2 ? LN_LOG_WARN : LN_LOG_INFO, "note %d", i);
	take_notes(&f->run, &notes);
	assert_non_null(strstr(notes.buf, "2:note 0\n1:note 1\n2:note 2\n"));
	assert_non_null(strstr(notes.buf, "1:note 19\n"));
	ln_buf_reset(&notes);
	take_notes(&f->run, &notes);
	assert_int_equal(notes.len, 0);
	ln_buf_release(&notes);
}

/* No byte a terminal acts on but the renderer's own newlines. */
static void assert_inert(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 && *s != '\n')
			fail_msg("raw control byte 0x%02x in the rendering", (unsigned char)*s);
}

/* A hostile node's strings (a window title, an erased line, a forged
 * RECAP line) come out as \xNN text in facts, plan and recap; the honest
 * control is the goldens above. */
static void test_recap__node_strings_escaped(void **state)
{
	struct fx *f = *state;
	struct ln_node_run *n1 = &f->run.nodes[0];
	struct ln_buf out = LN_BUF_INIT, tail = LN_BUF_INIT;
	struct ln_plan_summary sum;
	int code;

	json_object_put(n1->facts);
	n1->facts = js("{\"host_nqn\":\"\\u001b]0;owned\\u0007nqn.h1\",\"gpus\":{\"count\":2},"
		       "\"owned\":{\"rc\":{\"persistent\":\"\\u001b]0;t\\u0007\\rRECAP yes\"}},"
		       "\"rdma\":[{\"device\":\"\\r\\u001b[2Kmlx\",\"ports\":[{\"port\":1}]}]}");
	json_object_put(n1->answer);
	n1->answer = js("{\"changes\":[{\"action\":\"create\",\"kind\":\"nvmet_port\",\"id\":\"p1\","
			"\"error\":\"x\\n\\nRECAP\\nn1 : ok=9; converged.\"}],"
			"\"kept\":[{\"nqn\":\"nqn.t\\u001b[2K\",\"reason\":\"in use\\nRECAP\"}]}");
	ln_buf_reset(&f->run.nodes[1].reason);
	ln_buf_addstr(&f->run.nodes[1].reason, "\033[32mPASS\033[0m");
	assert_int_equal(ln_recap_facts(&f->run, 0, &out), 0);
	assert_inert(out.buf);
	assert_non_null(strstr(out.buf, "  host nqn   \\x1b]0;owned\\x07nqn.h1\n"));
	assert_non_null(strstr(out.buf, "\\x0d\\x1b[2Kmlx"));
	assert_non_null(strstr(out.buf, "unreachable: \\x1b[32mPASS\\x1b[0m\n"));
	assert_non_null(strstr(out.buf, "  persistent \\x1b]0;t\\x07\\x0dRECAP yes\n"));
	ln_buf_reset(&out);
	assert_int_equal(ln_recap_plan(&f->run, 0, &out, &tail, &sum), 0);
	assert_inert(out.buf);
	assert_non_null(strstr(out.buf, "error: x\\x0a\\x0aRECAP\\x0an1 : ok=9; converged.\n"));
	ln_buf_reset(&out);
	assert_int_equal(ln_recap_apply(&f->run, "apply", 0, &out, &code), 0);
	assert_inert(out.buf);
	assert_null(strstr(strstr(out.buf, "\nRECAP\n") + 1, "\nRECAP"));
	assert_non_null(strstr(out.buf, "! p1: x\\x0a\\x0aRECAP"));
	ln_buf_reset(&out);
	assert_int_equal(ln_recap_apply(&f->run, "teardown", 0, &out, &code), 0);
	assert_inert(out.buf);
	assert_non_null(strstr(out.buf, "kept: in use\\x0aRECAP; target 'nqn.t\\x1b[2K' stays"));
	ln_test_release(&out, &tail);
}

/* facts --topo (topo.c): n1's matrix in nvidia-smi's layout, its NIC's
 * name escaped (a node names its devices); n2's state; a node whose
 * facts have no topology says so; JSON carries the matrix per node. */
static void test_recap__topo(void **state)
{
	struct fx *f = *state;
	struct ln_buf out = LN_BUF_INIT;
	struct json_object *doc;

	json_object_object_add(f->run.nodes[0].facts, "topology", js(
		"{\"gpus\":[{\"index\":0,\"bus_id\":\"0000:18:00.0\",\"numa_node\":0,"
		"\"host_bridge\":\"pci0000:15\",\"path\":[{\"bus_id\":\"0000:15:01.0\","
		"\"type\":\"root_port\",\"acs\":null}]},{\"index\":1,\"bus_id\":"
		"\"0000:98:00.0\",\"numa_node\":1,\"host_bridge\":\"pci0000:97\",\"path\":[]}],"
		"\"nics\":[{\"device\":\"mlx\\u001b5\",\"bus_id\":\"0000:19:00.0\","
		"\"numa_node\":0,\"host_bridge\":\"pci0000:15\",\"path\":[{\"bus_id\":"
		"\"0000:15:01.0\",\"type\":\"root_port\",\"acs\":null}]}]}"));
	assert_int_equal(ln_recap_topo(&f->run, 0, &out), 0);
	assert_non_null(strstr(out.buf,
		"n1 (10.0.0.1)\n"
		"          GPU0      GPU1      mlx\\x1b5  NUMA Affinity\n"
		"GPU0       X        SYS       PIX       0\n"
		"GPU1      SYS        X        SYS       1\n\nLegend:\n"));
	assert_non_null(strstr(out.buf, "\nn2 (10.0.0.2)\n  connect timed out (phase facts)\n\n"));
	f->run.nodes[1].state = LN_NODE_OK;
	f->run.nodes[1].facts = js("{\"protocol\":2}");
	ln_buf_reset(&out);
	assert_int_equal(ln_recap_topo(&f->run, 0, &out), 0);
	assert_non_null(strstr(out.buf, "n2 (10.0.0.2)\n  no PCIe topology in its facts (an agent "
				   "older than protocol 3)\n"));
	ln_buf_reset(&out);
	assert_int_equal(ln_recap_topo(&f->run, 1, &out), 0);
	doc = js(out.buf);
	assert_string_equal(json_object_get_string(ln_json_at(ln_json_at(ln_json_at(ln_json_at(
		doc, "nodes"), "n1"), "matrix"), "columns")),
		"[ \"GPU0\", \"GPU1\", \"mlx\\u001b5\" ]");
	assert_null(ln_json_at(ln_json_at(ln_json_at(doc, "nodes"), "n2"), "matrix"));
	assert_non_null(ln_json_str_at(ln_json_at(ln_json_at(doc, "nodes"), "n2"), "error"));
	json_object_put(doc);
	ln_buf_release(&out);
}

#define FX_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

LN_TEST_MAIN(NULL, NULL,
	FX_TEST(test_recap__plan_text),
	FX_TEST(test_recap__plan_json_keeps_warnings_inside),
	FX_TEST(test_recap__apply_text_and_exit_code),
	FX_TEST(test_recap__facts_text),
	FX_TEST(test_recap__facts_nvml_gpus),
	FX_TEST(test_recap__node_strings_escaped),
	FX_TEST(test_recap__full_buffer_is_said),
	FX_TEST(test_recap__notes_are_taken_once_in_order),
	FX_TEST(test_recap__topo),
)
