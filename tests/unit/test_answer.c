/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for orchestrator/transport/answer.c: an agent's answer is
 * untrusted input. Real answers (the agent's, on the fixture nodes:
 * tests/fuzz/answers/, also the fuzzer's seeds) pass every limit and keep
 * every field; hostile ones are refused on their bytes, before json-c
 * builds them (memory measured), and unknown or mistyped facts are
 * dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/proto.h"
#include "orchestrator/transport/answer.h"

#define SEEDS FIXTURES_DIR "/../fuzz/answers/"

/* A seed file: its first line names the limits row, the rest is the
 * answer frame's payload (the fuzzer's input format). */
static void load_seed(const char *name, struct ln_buf *payload, const struct ln_answer_limits **l)
{
	struct ln_buf b = LN_BUF_INIT, err = LN_BUF_INIT;
	const char *nl;
	size_t i, n;
	const struct ln_answer_limits *t = ln_answer_limits_table(&n);
	char path[512];

	snprintf(path, sizeof(path), SEEDS "%s", name);
	assert_int_equal(ln_file_read(path, &b, &err), 0);
	nl = strchr(b.buf, '\n');
	assert_non_null(nl);
	*l = NULL;
	for (i = 0; i < n; i++)
		if (strlen(t[i].name) == (size_t)(nl - b.buf) && !strncmp(t[i].name, b.buf, nl - b.buf))
			*l = &t[i];
	assert_non_null(*l);
	ln_buf_reset(payload);
	ln_buf_add(payload, nl + 1, b.len - (size_t)(nl + 1 - b.buf));
	ln_buf_release_all(&b, &err);
}

static struct json_object *answer_of(struct json_object *env)
{
	struct json_object *a = NULL;

	assert_true(json_object_object_get_ex(env, "answer", &a));
	return a;
}

static void test_answer__real_answers_pass(void **state)
{
	static const char *const seeds[] = { "version", "facts-target", "facts-initiator",
					     "plan-target", "apply-initiator", "counters",
					     "teardown", "run-refused", "run-ok", NULL };
	struct ln_buf p = LN_BUF_INIT, err = LN_BUF_INIT;
	const struct ln_answer_limits *l;
	struct json_object *env = NULL;
	size_t i;

	(void)state;
	for (i = 0; seeds[i]; i++) {
		load_seed(seeds[i], &p, &l);
		assert_int_equal(ln_answer_parse(l, p.buf, p.len, &env, &err), 0);
		assert_int_equal(err.len, 0);
		/* the margin the table promises: 16 times the real answer */
		assert_true(p.len * 16 < l->bytes);
		json_object_put(env);
	}
	ln_buf_release_all(&p, &err);
}

/* The schema keeps every field the agent sends: the filter of a real
 * facts answer is the answer, member for member. */
static void test_answer__real_facts_kept_whole(void **state)
{
	static const char *const seeds[] = { "facts-target", "facts-initiator", NULL };
	struct ln_buf p = LN_BUF_INIT, err = LN_BUF_INIT;
	const struct ln_answer_limits *l;
	struct json_object *env = NULL, *k;
	size_t i;

	(void)state;
	for (i = 0; seeds[i]; i++) {
		load_seed(seeds[i], &p, &l);
		assert_int_equal(ln_answer_parse(l, p.buf, p.len, &env, &err), 0);
		k = ln_answer_known_facts(answer_of(env));
		assert_non_null(k);
		assert_true(json_object_equal(k, answer_of(env)));
		assert_non_null(ln_json_at(k, "nvmet"));
		json_object_put(k);
		json_object_put(env);
	}
	ln_buf_release_all(&p, &err);
}

static void test_answer__unknown_and_mistyped_facts_dropped(void **state)
{
	struct ln_buf p = LN_BUF_INIT, err = LN_BUF_INIT;
	const struct ln_answer_limits *l;
	struct json_object *env = NULL, *k, *rdma;
	const char *s;

	(void)state;
	load_seed("facts-hostile", &p, &l);
	assert_int_equal(ln_answer_parse(l, p.buf, p.len, &env, &err), 0);
	k = ln_answer_known_facts(answer_of(env));
	s = json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN);
	/* known and well typed: kept */
	assert_string_equal(ln_json_str_at(k, "hostname"), "n2");
	rdma = ln_json_at(k, "rdma");
	assert_int_equal(json_object_array_length(rdma), 3);
	assert_string_equal(ln_json_str_at(json_object_array_get_idx(rdma, 2), "device"), "x");
	/* unknown members, at the top and nested: gone */
	assert_null(strstr(s, "junk"));
	assert_null(strstr(s, "extra"));
	/* ports' elements must be objects: the arrays in it are dropped */
	assert_int_equal(json_object_array_length(ln_json_at(json_object_array_get_idx(rdma, 2),
							     "ports")), 0);
	/* a wrong type becomes null, the key stays */
	assert_true(json_object_object_get_ex(ln_json_at(ln_json_at(k, "owned"), "c"), "objects",
					      NULL));
	assert_null(ln_json_at(ln_json_at(ln_json_at(k, "owned"), "c"), "objects"));
	/* not an object at all: nothing */
	assert_null(ln_answer_known_facts(rdma));
	json_object_put(k);
	json_object_put(env);
	ln_buf_release_all(&p, &err);
}

/* facts.topology (the agent's answer on tests/fixtures/topo/hgx-h100.tree,
 * kept as a seed): kept whole, within the limits with their margin; its
 * unknown members are dropped and a mistyped one becomes null. */
static void test_answer__topology_kept_and_filtered(void **state)
{
	struct ln_buf p = LN_BUF_INIT, err = LN_BUF_INIT;
	const struct ln_answer_limits *l;
	struct json_object *env = NULL, *k, *t, *hop, *gpu;

	(void)state;
	load_seed("facts-hgx", &p, &l);
	assert_true(p.len * 16 < l->bytes);
	assert_int_equal(ln_answer_parse(l, p.buf, p.len, &env, &err), 0);
	k = ln_answer_known_facts(answer_of(env));
	assert_true(json_object_equal(k, answer_of(env)));
	t = ln_json_at(k, "topology");
	assert_int_equal(json_object_array_length(ln_json_at(t, "gpus")), 8);
	assert_int_equal(json_object_array_length(ln_json_at(t, "nics")), 10);
	hop = json_object_array_get_idx(ln_json_at(json_object_array_get_idx(
		ln_json_at(t, "nics"), 3), "path"), 2);
	assert_string_equal(ln_json_str_at(hop, "bus_id"), "0000:60:01.0");
	assert_non_null(ln_json_at(ln_json_at(hop, "acs"), "cmplt_redir"));
	json_object_put(k);
	/* hostile: an unknown member in a hop, a string for acs, a number for
	 * a bus id, a path of strings, an unknown dmabuf member */
	gpu = json_object_array_get_idx(ln_json_at(ln_json_at(answer_of(env), "topology"), "gpus"),
					0);
	hop = json_object_array_get_idx(ln_json_at(gpu, "path"), 0);
	json_object_object_add(hop, "secret_sauce", json_object_new_string("x"));
	json_object_object_add(hop, "acs", json_object_new_string("on"));
	json_object_object_add(gpu, "bus_id", json_object_new_int(7));
	json_object_array_put_idx(ln_json_at(gpu, "path"), 1, json_object_new_string("junk"));
	json_object_object_add(ln_json_at(ln_json_at(ln_json_at(answer_of(env), "topology"),
						     "peer_memory"), "dmabuf"),
			       "extra", json_object_new_int(1));
	k = ln_answer_known_facts(answer_of(env));
	gpu = json_object_array_get_idx(ln_json_at(ln_json_at(k, "topology"), "gpus"), 0);
	hop = json_object_array_get_idx(ln_json_at(gpu, "path"), 0);
	assert_false(json_object_object_get_ex(hop, "secret_sauce", NULL));
	assert_true(json_object_object_get_ex(hop, "acs", NULL));
	assert_null(ln_json_at(hop, "acs"));
	assert_string_equal(ln_json_str_at(hop, "type"), "root_port");
	assert_null(ln_json_at(gpu, "bus_id"));
	/* the string element is dropped: the path keeps its 2 objects */
	assert_int_equal(json_object_array_length(ln_json_at(gpu, "path")), 2);
	assert_false(json_object_object_get_ex(
		ln_json_at(ln_json_at(ln_json_at(k, "topology"), "peer_memory"), "dmabuf"), "extra",
		NULL));
	/* the control: the second GPU is as the agent sent it */
	assert_true(json_object_equal(
		json_object_array_get_idx(ln_json_at(ln_json_at(k, "topology"), "gpus"), 1),
		json_object_array_get_idx(ln_json_at(ln_json_at(answer_of(env), "topology"),
						     "gpus"), 1)));
	json_object_put(k);
	json_object_put(env);
	ln_buf_release_all(&p, &err);
}

/* topology's lists at the agent's own caps (256 devices, 32 bridges a
 * path): a node sending more cannot have the controller build a matrix
 * of millions of cells; the first ones are kept (the control). */
static void test_answer__topology_lists_bounded(void **state)
{
	struct json_object *o = json_object_new_object(), *t = json_object_new_object();
	struct json_object *gpus = json_object_new_array(), *k, *path;
	int i;

	(void)state;
	for (i = 0; i < 300; i++) {
		struct json_object *g = json_object_new_object();

		json_object_object_add(g, "index", json_object_new_int(i));
		if (i == 0) {
			int j;

			path = json_object_new_array();
			for (j = 0; j < 40; j++)
				json_object_array_add(path, json_object_new_object());
			json_object_object_add(g, "path", path);
		}
		json_object_array_add(gpus, g);
	}
	json_object_object_add(t, "gpus", gpus);
	json_object_object_add(o, "topology", t);
	k = ln_answer_known_facts(o);
	gpus = ln_json_at(ln_json_at(k, "topology"), "gpus");
	assert_int_equal(json_object_array_length(gpus), 256);
	assert_int_equal(json_object_get_int(ln_json_at(json_object_array_get_idx(gpus, 255),
							"index")), 255);
	assert_int_equal(json_object_array_length(ln_json_at(json_object_array_get_idx(gpus, 0),
							     "path")), 32);
	json_object_put(k);
	json_object_put(o);
}

/* plan, apply and teardown answers: real ones kept whole; unknown
 * members, at the top and inside changes, summary and kept, dropped. */
static void test_answer__changes_filtered(void **state)
{
	static const char *const seeds[] = { "plan-target", "apply-initiator", "teardown", NULL };
	static const char hostile[] =
		"{\"protocol\":3,\"mode\":\"plan\",\"junk\":{\"a\":1},"
		"\"changes\":[{\"action\":\"create\",\"kind\":\"nvmet_host\",\"id\":\"x\","
		"\"extra\":\"evil\"},7],\"summary\":{\"create\":1,\"bogus\":2},"
		"\"kept\":[{\"nqn\":\"q\",\"reason\":\"r\",\"more\":1}],\"converged\":false}";
	struct ln_buf p = LN_BUF_INIT, err = LN_BUF_INIT;
	const struct ln_answer_limits *l;
	struct json_object *env = NULL, *k, *h;
	const char *s;
	size_t i;

	(void)state;
	for (i = 0; seeds[i]; i++) {
		load_seed(seeds[i], &p, &l);
		assert_int_equal(ln_answer_parse(l, p.buf, p.len, &env, &err), 0);
		k = ln_answer_known_changes(answer_of(env));
		assert_non_null(k);
		assert_true(json_object_equal(k, answer_of(env)));
		json_object_put(k);
		json_object_put(env);
	}
	h = json_tokener_parse(hostile);
	assert_non_null(h);
	k = ln_answer_known_changes(h);
	s = json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN);
	assert_null(strstr(s, "junk"));
	assert_null(strstr(s, "extra"));
	assert_null(strstr(s, "evil"));
	assert_null(strstr(s, "bogus"));
	assert_null(strstr(s, "more"));
	/* the known ones stay (the control) */
	assert_int_equal(json_object_array_length(ln_json_at(k, "changes")), 1);
	assert_string_equal(ln_json_str_at(json_object_array_get_idx(ln_json_at(k, "changes"), 0),
					   "kind"), "nvmet_host");
	assert_non_null(strstr(s, "\"reason\":\"r\""));
	assert_non_null(strstr(s, "\"create\":1"));
	assert_null(ln_answer_known_changes(ln_json_at(k, "changes")));
	json_object_put(k);
	json_object_put(h);
	ln_buf_release_all(&p, &err);
}

/* A run answer whose output is n bytes of 'x'. */
static void run_with_output(struct ln_buf *b, size_t n)
{
	char *x = malloc(n);

	assert_non_null(x);
	memset(x, 'x', n);
	ln_buf_reset(b);
	ln_buf_addstr(b, "{\"exit_status\":0,\"output\":\"");
	assert_int_equal(ln_buf_add(b, x, n), 0);
	ln_buf_addstr(b, "\"}");
	free(x);
}

/* validate's run answer: a healthy one keeps every field the controller
 * reads, exactly; a hostile one keeps none of its own fields, no value
 * out of its range, no control byte in its output and no output over
 * what validate asked for. */
static void test_answer__run_filtered(void **state)
{
	static const char healthy[] =
		"{\"protocol\":3,\"probe\":\"rping\",\"path\":\"/usr/bin/rping\",\"argv\":[\"rping\","
		"\"-c\"],\"exit_status\":0,\"signal\":null,\"timed_out\":false,\"duration_ms\":4521,"
		"\"output\":\"client DISCONNECT EVENT...\\n\\tok\\r\\n\",\"output_bytes\":33,"
		"\"truncated\":false}";
	static const char hostile[] =
		"{\"protocol\":3,\"verdict\":\"pass\",\"status\":\"PASS\",\"path\":\"/evil\","
		"\"exit_status\":4294967296,\"signal\":\"SIG\\u001b]0;owned\\u0007\","
		"\"timed_out\":\"no\",\"duration_ms\":-5,\"output_bytes\":-1,\"truncated\":0,"
		"\"output\":\"PASS\\u0000\\r\\u001b[2K\\u001b[32mPASS\\u007f\\n\"}";
	struct json_object *h, *k, *v;
	struct ln_buf big = LN_BUF_INIT;
	const char *s;

	(void)state;
	h = json_tokener_parse(healthy);
	assert_non_null(h);
	k = ln_answer_known_run(h);
	assert_non_null(k);
	s = json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN);
	assert_int_equal(json_object_get_int(ln_json_at(k, "exit_status")), 0);
	assert_int_equal(json_object_get_int(ln_json_at(k, "duration_ms")), 4521);
	assert_int_equal(json_object_get_int(ln_json_at(k, "output_bytes")), 33);
	assert_false(json_object_get_boolean(ln_json_at(k, "timed_out")));
	assert_string_equal(ln_json_str_at(k, "output"), "client DISCONNECT EVENT...\n\tok\r\n");
	assert_null(strstr(s, "argv"));	/* the request's words: not taken back */
	json_object_put(k);
	json_object_put(h);
	/* a signal's name, the control */
	h = json_tokener_parse("{\"exit_status\":null,\"signal\":\"SIGRTMIN+15\",\"timed_out\":true}");
	k = ln_answer_known_run(h);
	assert_string_equal(ln_json_str_at(k, "signal"), "SIGRTMIN+15");
	assert_true(json_object_get_boolean(ln_json_at(k, "timed_out")));
	json_object_put(k);
	json_object_put(h);

	h = json_tokener_parse(hostile);
	assert_non_null(h);
	k = ln_answer_known_run(h);
	assert_non_null(k);
	s = json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN);
	assert_null(strstr(s, "verdict"));
	assert_null(strstr(s, "status\":\"PASS"));
	assert_null(strstr(s, "/evil"));
	assert_true(json_object_object_get_ex(k, "exit_status", &v) && !v);
	assert_true(json_object_object_get_ex(k, "signal", &v) && !v);
	assert_true(json_object_object_get_ex(k, "timed_out", &v) && !v);
	assert_true(json_object_object_get_ex(k, "duration_ms", &v) && !v);
	assert_true(json_object_object_get_ex(k, "output_bytes", &v) && !v);
	assert_true(json_object_object_get_ex(k, "truncated", &v) && !v);
	/* same length, NUL, ESC and DEL gone, CR and LF kept */
	v = ln_json_at(k, "output");
	assert_int_equal(json_object_get_string_len(v), 21);
	assert_memory_equal(json_object_get_string(v), "PASS?\r?[2K?[32mPASS?\n", 21);
	json_object_put(k);
	json_object_put(h);

	/* output: at most what validate asks for, the limit itself kept */
	run_with_output(&big, LN_ANSWER_RUN_OUTPUT_MAX);
	h = json_tokener_parse(big.buf);
	k = ln_answer_known_run(h);
	assert_int_equal(json_object_get_string_len(ln_json_at(k, "output")),
			 LN_ANSWER_RUN_OUTPUT_MAX);
	json_object_put(k);
	json_object_put(h);
	run_with_output(&big, LN_ANSWER_RUN_OUTPUT_MAX + 1);
	h = json_tokener_parse(big.buf);
	k = ln_answer_known_run(h);
	assert_true(json_object_object_get_ex(k, "output", &v) && !v);
	assert_int_equal(json_object_get_int(ln_json_at(k, "exit_status")), 0);
	json_object_put(k);
	json_object_put(h);
	assert_null(ln_answer_known_run(NULL));
	ln_buf_release(&big);
}

/* facts.gpus from NVML: every field kept, and the limits (64 GPUs, 8
 * errors a GPU, names under 96 bytes) enforced; a wrong type is null. */
static void test_answer__gpu_devices_bounded(void **state)
{
	struct ln_buf in = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *o = NULL, *k, *devs, *d;
	int i;

	(void)state;
	ln_buf_addstr(&in, "{\"gpus\": {\"count\": 70, \"models\": [], \"source\": \"nvml\", "
		      "\"driver_version\": \"570.86.15\", \"cuda_version\": \"12.8\", \"nvml\": "
		      "null, \"program\": \"installed\", \"junk\": 1, \"devices\": [");
	for (i = 0; i < 70; i++)
		ln_buf_addf(&in, "%s{\"index\": %d, \"uuid\": \"GPU-%d\", \"model\": \"%s\", "
			    "\"bus_id\": \"0000:%02x:00.0\", \"numa_node\": 1, \"memory_bytes\": "
			    "85520809984, \"persistence\": true, \"nvlink_up\": 17, \"nvlink_total\": "
			    "18, \"ecc_volatile_uncorrected\": null, \"row_remap_pending\": %s, "
			    "\"row_remap_failed\": false, \"errors\": [\"a\", \"b\", \"c\", \"d\", "
			    "\"e\", \"f\", \"g\", \"h\", \"i\"], \"extra\": 1}", i ? ", " : "", i, i,
			    i == 1 ? "0123456789012345678901234567890123456789012345678901234567890"
				     "12345678901234567890123456789012345" : "NVIDIA H100",
			    i + 16, i == 2 ? "\"yes\"" : "true");
	ln_buf_addstr(&in, "]}}");
	assert_int_equal(ln_json_parse(in.buf, in.len, &o, &err), 0);
	k = ln_answer_known_facts(o);
	assert_non_null(k);
	assert_null(ln_json_at(ln_json_at(k, "gpus"), "junk"));
	assert_string_equal(ln_json_str_at(ln_json_at(k, "gpus"), "driver_version"), "570.86.15");
	assert_string_equal(ln_json_str_at(ln_json_at(k, "gpus"), "program"), "installed");
	devs = ln_json_at(ln_json_at(k, "gpus"), "devices");
	assert_int_equal(json_object_array_length(devs), 64);
	d = json_object_array_get_idx(devs, 0);
	assert_string_equal(ln_json_str_at(d, "bus_id"), "0000:10:00.0");
	assert_string_equal(ln_json_str_at(d, "uuid"), "GPU-0");
	assert_int_equal(json_object_get_int(ln_json_at(d, "nvlink_up")), 17);
	assert_int_equal(json_object_get_int(ln_json_at(d, "nvlink_total")), 18);
	assert_int_equal(json_object_get_int(ln_json_at(d, "numa_node")), 1);
	assert_true(json_object_get_boolean(ln_json_at(d, "row_remap_pending")));
	assert_true(json_object_object_get_ex(d, "ecc_volatile_uncorrected", NULL));
	assert_int_equal(json_object_array_length(ln_json_at(d, "errors")), 8);
	assert_null(ln_json_at(d, "extra"));
	/* a 96-byte model and a string for a boolean: null */
	assert_string_equal(ln_json_str_at(d, "model"), "NVIDIA H100");
	assert_true(json_object_object_get_ex(json_object_array_get_idx(devs, 1), "model", NULL));
	assert_null(ln_json_at(json_object_array_get_idx(devs, 1), "model"));
	assert_null(ln_json_at(json_object_array_get_idx(devs, 2), "row_remap_pending"));
	json_object_put(k);
	json_object_put(o);
	ln_buf_release_all(&in, &err);
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* The reproduction: 6 MiB of [{},{},...] as the facts answer. It
 * is over the facts size limit (the frame reader's bound); under a size
 * limit as large as the frame cap it is still refused on its structure,
 * with no more memory than the bytes themselves. */
static void test_answer__empty_objects_refused_bounded(void **state)
{
	const struct ln_answer_limits *facts = ln_answer_limits_for((const char *[]){ "facts", NULL });
	struct ln_answer_limits wide = *facts;
	struct ln_buf p = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *env = NULL;
	static const char head[] = "{\"exit\":0,\"answer\":{\"protocol\":3,\"rdma\":[";
	size_t n = 6u << 20, pre = sizeof(head) - 1, i;
	long before, after;
	char *s = malloc(n + 64);

	(void)state;
	assert_non_null(s);
	memcpy(s, head, pre);
	for (i = pre; i + 3 + 5 <= n; i += 3)
		memcpy(s + i, "{},", 3);
	memset(s + i, ' ', n - 5 - i);
	memcpy(s + n - 5, "{}]}}", 6);
	before = maxrss_kb();
	assert_int_equal(ln_answer_parse(facts, s, n, &env, &err), -EMSGSIZE);
	assert_string_equal(err.buf, "answer of 6291456 bytes over the facts limit of 4194304");
	ln_buf_reset(&err);
	wide.bytes = LN_FRAME_ANSWER_MAX;
	assert_int_equal(ln_answer_parse(&wide, s, n, &env, &err), -EMSGSIZE);
	assert_string_equal(err.buf, "answer over the facts limit of 8192 objects and arrays");
	assert_null(env);
	after = maxrss_kb();
	/* json-c would have taken 1.6 GB; nothing was built */
	assert_true(after - before < 16 * 1024);
	/* the control: the same shape within the limits parses */
	ln_buf_reset(&err);
	memcpy(s + pre + 3 * 100, "{}]}}", 6);
	assert_int_equal(ln_answer_parse(facts, s, strlen(s), &env, &err), 0);
	assert_int_equal(json_object_array_length(ln_json_at(answer_of(env), "rdma")), 101);
	json_object_put(env);
	free(s);
	ln_buf_release_all(&p, &err);
}

/* Each structure limit refuses one past it and accepts it exactly. */
static void test_answer__structure_limits_exact(void **state)
{
	struct ln_answer_limits l = { "test", 1024, 3, 8, 3, 5 };
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *o = NULL;
	static const struct {
		const char *json;
		int rc;
		const char *msg;
	} cases[] = {
		{ "{\"a\":[[1]]}", 0, NULL },
		{ "{\"a\":[[[1]]]}", -EMSGSIZE, "answer over the test limit of 3 objects and arrays" },
		{ "[[[]]]", -LN_EPROTO, NULL },	/* within limits; not an object */
		{ "{\"abcde\":1}", 0, NULL },
		{ "{\"abcdef\":1}", -EMSGSIZE, "answer over the test limit of 5 bytes in a string" },
		{ "{\"a\":12345}", 0, NULL },
		{ "{\"a\":123456}", -EMSGSIZE,
		  "answer over the test limit of 5 bytes in a number or literal" },
		{ "{\"a\":1,\"b\":2,\"c\":3}", 0, NULL },
		{ "{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", -EMSGSIZE,
		  "answer over the test limit of 8 elements" },
		/* escapes and brackets inside strings are not structure */
		{ "{\"a\":\"[\\\"{\"}", 0, NULL },
		{ NULL, 0, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; cases[i].json; i++) {
		ln_buf_reset(&err);
		assert_int_equal(ln_answer_parse(&l, cases[i].json, strlen(cases[i].json), &o, &err),
				 cases[i].rc);
		if (cases[i].msg)
			assert_string_equal(err.buf, cases[i].msg);
		json_object_put(o);
	}
	l.containers = 100;
	ln_buf_reset(&err);
	assert_int_equal(ln_answer_parse(&l, "{\"a\":[[[]]]}", 12, &o, &err), -EMSGSIZE);
	assert_string_equal(err.buf, "answer over the test limit of 3 levels of nesting");
	ln_buf_release(&err);
}

static void test_answer__limits_by_verb(void **state)
{
	const char *const facts[] = { "facts", NULL }, *const counters[] = { "facts", "--counters",
									      "rxe0/1", NULL };
	const char *const disc[] = { "facts", "--discovery", "x", NULL };
	const char *const run[] = { "run", "--timeout", "5", NULL }, *const seal[] = { "seal", NULL };
	const char *const apply[] = { "apply", NULL };
	size_t i, n;
	const struct ln_answer_limits *t = ln_answer_limits_table(&n);

	(void)state;
	assert_string_equal(ln_answer_limits_for(facts)->name, "facts");
	assert_string_equal(ln_answer_limits_for(counters)->name, "facts --counters");
	assert_string_equal(ln_answer_limits_for(disc)->name, "facts --discovery");
	assert_string_equal(ln_answer_limits_for(run)->name, "run");
	assert_string_equal(ln_answer_limits_for(apply)->name, "apply");
	assert_string_equal(ln_answer_limits_for(seal)->name, "other");
	/* facts far below the frame cap; no row above it */
	assert_true(ln_answer_limits_for(facts)->bytes * 16 <= LN_FRAME_ANSWER_MAX);
	for (i = 0; i < n; i++)
		assert_true(t[i].bytes <= LN_FRAME_ANSWER_MAX);
	/* run: the 4 MiB of output validate asks for, escaped at worst */
	assert_true(ln_answer_limits_for(run)->string >= 6 * (4u << 20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer__real_answers_pass),
		cmocka_unit_test(test_answer__real_facts_kept_whole),
		cmocka_unit_test(test_answer__unknown_and_mistyped_facts_dropped),
		cmocka_unit_test(test_answer__topology_kept_and_filtered),
		cmocka_unit_test(test_answer__changes_filtered),
		cmocka_unit_test(test_answer__run_filtered),
		cmocka_unit_test(test_answer__topology_lists_bounded),
		cmocka_unit_test(test_answer__empty_objects_refused_bounded),
		cmocka_unit_test(test_answer__structure_limits_exact),
		cmocka_unit_test(test_answer__limits_by_verb),
		cmocka_unit_test(test_answer__gpu_devices_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
