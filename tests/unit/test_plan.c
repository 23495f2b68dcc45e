/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the desired state the controller derives per node: a
 * target's allowed hosts from its initiators' facts, the unreachable
 * initiator whose access is kept, duplicate host NQNs, the targets-phase
 * request, and counting a change list. The spec is built by hand, the
 * facts are JSON as the agent protocol defines them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/error.h"
#include "common/json.h"
#include "common/util.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/plan.h"

#define T1 "nqn.2024-04.io.llmnet:n1.t1"
#define T3 "nqn.2024-04.io.llmnet:n3.t3"
/* T1's stable identity in cluster "loop" (orchestrator/run/nsident.h), as
 * Python's hashlib and uuid modules compute it from the same text */
#define SERIAL1 "d8b65f4a04376a6b"
#define IDENT1 "\"uuid\":\"6c557595-262a-880b-948b-0fee8df79c18\"," \
	"\"nguid\":\"5e1fccd1-9b21-a1b6-daf2-a9585a81ed26\","
#define H(n) "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-00000000000" #n

struct world {
	struct ln_spec spec;
	struct ln_node nodes[3];
	struct ln_target targets[2];
	size_t hosts1[2];
	size_t hosts3[1];
	struct ln_namespace ns;
	struct ln_initiator inits[3];
	struct ln_node_run nr[3];
	struct ln_run run;
};

static struct json_object *facts(const char *host_nqn, const char *allowed_json, const char *nvme_json)
{
	char buf[2048];
	struct json_object *o = NULL;
	struct ln_buf err = LN_BUF_INIT;

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"host_nqn\":%s%s%s,\"nvme\":%s,\"nvmet\":{\"subsystems\":"
		 "[{\"nqn\":\"" T1 "\",\"allowed_hosts\":%s}]}}",
		 host_nqn ? "\"" : "", host_nqn ? host_nqn : "null", host_nqn ? "\"" : "",
		 nvme_json ? nvme_json : "[]", allowed_json ? allowed_json : "[]");
	assert_int_equal(ln_json_parse(buf, strlen(buf), &o, &err), 0);
	ln_buf_release(&err);
	return o;
}

/* Set-up for each test: n1 exports T1 to n2 and n3; n3 exports T3 to n1
 * (a cycle); hostfile. */
static int world_setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	size_t i;
	static const char *names[] = { "n1", "n2", "n3" };
	static const char *addrs[] = { "127.0.1.1", "127.0.1.2", "127.0.1.3" };

	assert_non_null(w);
	for (i = 0; i < ARRAY_SIZE(w->nodes); i++) {
		w->nodes[i].name = names[i];
		w->nodes[i].address = addrs[i];
		w->nodes[i].slots = (unsigned)i + 1;
		w->nr[i].idx = i;
		w->nr[i].spec = &w->nodes[i];
		w->nr[i].state = LN_NODE_OK;
		w->nr[i].limited = 1;
	}
	w->ns.nsid = 1;
	w->ns.file = "/var/lib/nvmet/disk1.img";
	w->ns.size = 1048576;
	w->hosts1[0] = 1;
	w->hosts1[1] = 2;
	w->targets[0] = (struct ln_target){ .nqn = T1, .node = 0, .transport = LN_TRANSPORT_TCP,
					    .address = "127.0.1.1", .service = 4420,
					    .hosts = w->hosts1, .n_hosts = 2,
					    .namespaces = &w->ns, .n_namespaces = 1 };
	w->hosts3[0] = 0;
	w->targets[1] = (struct ln_target){ .nqn = T3, .node = 2, .transport = LN_TRANSPORT_RDMA,
					    .address = "127.0.1.3", .service = 4421,
					    .hosts = w->hosts3, .n_hosts = 1 };
	w->inits[0] = (struct ln_initiator){ .node = 1, .target = 0, .ctrl_loss_tmo_ms = -1,
					     .reconnect_delay_ms = -1 };
	w->inits[1] = (struct ln_initiator){ .node = 2, .target = 0, .ctrl_loss_tmo_ms = -1,
					     .reconnect_delay_ms = -1 };
	w->inits[2] = (struct ln_initiator){ .node = 0, .target = 1, .ctrl_loss_tmo_ms = 600000,
					     .reconnect_delay_ms = -1 };
	w->spec.path = "test.yaml";
	w->spec.cluster = "loop";
	w->spec.nodes = w->nodes;
	w->spec.n_nodes = ARRAY_SIZE(w->nodes);
	w->spec.targets = w->targets;
	w->spec.n_targets = ARRAY_SIZE(w->targets);
	w->spec.initiators = w->inits;
	w->spec.n_initiators = ARRAY_SIZE(w->inits);
	w->spec.mpi.hostfile = "/etc/llmnet/hostfile";
	w->run.spec = &w->spec;
	w->run.nodes = w->nr;
	w->run.n = ARRAY_SIZE(w->nr);
	w->nr[0].facts = facts(H(1), "[\"" H(2) "\"]", NULL);
	w->nr[1].facts = facts(H(2), NULL, NULL);
	w->nr[2].facts = facts(H(3), NULL, NULL);
	for (i = 0; i < ARRAY_SIZE(w->nr); i++) {
		ln_buf_init(&w->nr[i].reason, 0);
		ln_buf_init(&w->nr[i].skip, 0);
	}
	*state = w;
	return 0;
}

static int world_teardown(void **state)
{
	struct world *w = *state;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(w->nr); i++)
		json_object_put(w->nr[i].facts);
	free(w);
	return 0;
}

static const char *req_str(struct json_object *req, struct ln_buf *b)
{
	ln_buf_reset(b);
	assert_int_equal(ln_json_write(req, 0, b), 0);
	ln_buf_rtrim(b);
	return b->buf;
}

static void test_plan__target_allows_its_initiators(void **state)
{
	struct world *w = *state;
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, NULL);

	assert_non_null(req);
	assert_string_equal(req_str(req, &b),
		"{\"protocol\":3,\"cluster\":\"loop\",\"targets\":[{\"nqn\":\"" T1 "\",\"transport\":\"tcp\","
		"\"address\":\"127.0.1.1\",\"service\":4420,\"serial\":\"" SERIAL1 "\","
		"\"hosts\":[\"" H(2) "\",\"" H(3) "\"],"
		"\"namespaces\":[{\"nsid\":1," IDENT1 "\"file\":\"/var/lib/nvmet/disk1.img\",\"size\":1048576}]}],"
		"\"initiators\":[{\"target\":\"" T3 "\",\"transport\":\"rdma\",\"address\":\"127.0.1.3\","
		"\"service\":4421,\"queues\":{\"ctrl_loss_tmo\":600}}],"
		"\"hostfile\":{\"path\":\"/etc/llmnet/hostfile\",\"format\":\"openmpi\",\"lines\":["
		"{\"name\":\"n1\",\"slots\":1},{\"name\":\"n2\",\"slots\":2},{\"name\":\"n3\",\"slots\":3}]}}");
	json_object_put(req);
	ln_buf_release(&b);
}

/* The namespace's adopt reaches the request; without it the key is absent
 * (and the agent refuses an existing file). */
static void test_plan__adopt_reaches_the_request(void **state)
{
	struct world *w = *state;
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, NULL);

	assert_non_null(req);
	assert_null(strstr(req_str(req, &b), "adopt"));
	json_object_put(req);
	w->ns.adopt = 1;
	req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, NULL);
	assert_non_null(req);
	assert_non_null(strstr(req_str(req, &b), "\"namespaces\":[{\"nsid\":1," IDENT1 "\"file\":"
				"\"/var/lib/nvmet/disk1.img\",\"size\":1048576,\"adopt\":true}]"));
	json_object_put(req);
	ln_buf_release(&b);
}

/* mount.exec reaches the request only as true (an older agent refuses the
 * key); without it the agent mounts noexec. */
static void test_plan__mount_exec_reaches_the_request(void **state)
{
	struct world *w = *state;
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *req;

	w->inits[2].mount = (struct ln_mount){ .present = 1, .path = "/mnt/ckpt", .fs = "ext4" };
	req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, NULL);
	assert_non_null(req);
	assert_non_null(strstr(req_str(req, &b), "\"mount\":{\"path\":\"/mnt/ckpt\",\"fs\":"
				"\"ext4\",\"format\":\"never\"}"));
	json_object_put(req);
	w->inits[2].mount.exec = 1;
	req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, NULL);
	assert_non_null(req);
	assert_non_null(strstr(req_str(req, &b), "\"mount\":{\"path\":\"/mnt/ckpt\",\"fs\":"
				"\"ext4\",\"format\":\"never\",\"exec\":true}"));
	json_object_put(req);
	ln_buf_release(&b);
}

/* Every NVMe-oF connection bound to its source (issue 27): the initiator
 * node's declared port on the rail of the target's address (rails by
 * position here: rxe0 on 10.77.0.N, rxe1 on 10.78.0.N); none (the route's)
 * where the address is on no declared port or the initiator lacks the
 * rail, and none across families. */
static void test_plan__initiator_bound_to_its_port_on_the_rail(void **state)
{
	struct world *w = *state;
	struct ln_rdma_port ports[3][2];
	static const char *ips[3][2] = { { "10.77.0.1", "10.78.0.1" },
					 { "10.77.0.2", "10.78.0.2" },
					 { "10.77.0.3", "10.78.0.3" } };
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *req;
	size_t i, k;

	for (i = 0; i < 3; i++) {
		for (k = 0; k < 2; k++)
			ports[i][k] = (struct ln_rdma_port){ .device = k ? "rxe1" : "rxe0",
							     .ip = ips[i][k], .port = 1,
							     .gid_index = -1 };
		w->nodes[i].rdma = ports[i];
		w->nodes[i].n_rdma = 2;
	}
	w->targets[1].address = "10.78.0.3";
	assert_string_equal(ln_plan_initiator_source(&w->spec, &w->inits[2], &w->targets[1]),
			    "10.78.0.1");
	req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, NULL);
	assert_non_null(req);
	assert_non_null(strstr(req_str(req, &b), "\"address\":\"10.78.0.3\",\"service\":4421,"
				"\"host_traddr\":\"10.78.0.1\""));
	json_object_put(req);
	w->targets[0].address = "10.77.0.1";
	assert_string_equal(ln_plan_initiator_source(&w->spec, &w->inits[0], &w->targets[0]),
			    "10.77.0.2");
	/* the address is on no declared port: the route's */
	w->targets[1].address = "127.0.1.3";
	assert_null(ln_plan_initiator_source(&w->spec, &w->inits[2], &w->targets[1]));
	req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, NULL);
	assert_null(strstr(req_str(req, &b), "host_traddr"));
	json_object_put(req);
	/* the initiator's node lacks that rail */
	w->targets[1].address = "10.78.0.3";
	w->nodes[0].n_rdma = 1;
	assert_null(ln_plan_initiator_source(&w->spec, &w->inits[2], &w->targets[1]));
	/* another family on the initiator's port */
	w->nodes[0].n_rdma = 2;
	w->nodes[0].rdma[1].ip = "fd00::1";
	assert_null(ln_plan_initiator_source(&w->spec, &w->inits[2], &w->targets[1]));
	for (i = 0; i < 3; i++) {
		w->nodes[i].rdma = NULL;
		w->nodes[i].n_rdma = 0;
	}
	ln_buf_release(&b);
}

/* The agent's warnings reach the operator, one line per warning with the
 * node's name (teardown's "kept backing file ... adopted" above all). */
static void test_plan__agent_warnings_are_kept(void **state)
{
	struct world *w = *state;
	struct ln_buf b = LN_BUF_INIT, err = LN_BUF_INIT;
	const char *ans = "{\"changes\":[],\"warnings\":[\"kept backing file '/srv/d.img': "
			  "adopted, llmnet never deletes it\",\"\"]}";

	ln_plan_agent_warnings(&w->nr[0], &b);
	assert_string_equal(b.buf, "");
	assert_int_equal(ln_json_parse(ans, strlen(ans), &w->nr[0].answer, &err), 0);
	ln_plan_agent_warnings(&w->nr[0], &b);
	assert_string_equal(b.buf, "n1: kept backing file '/srv/d.img': adopted, llmnet never "
			    "deletes it\n");
	json_object_put(w->nr[0].answer);
	w->nr[0].answer = NULL;
	ln_test_release(&b, &err);
}

static void test_plan__unreachable_initiator_keeps_access(void **state)
{
	struct world *w = *state;
	struct ln_buf b = LN_BUF_INIT, notes = LN_BUF_INIT;
	struct json_object *req, *t, *hosts;

	/* n2 is silent; n1 has H(2) on record and must keep it */
	w->nr[1].state = LN_NODE_UNREACHABLE;
	req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, &notes);
	t = json_object_array_get_idx(json_object_object_get(req, "targets"), 0);
	hosts = json_object_object_get(t, "hosts");
	assert_string_equal(req_str(hosts, &b), "[\"" H(2) "\",\"" H(3) "\"]");
	assert_non_null(strstr(notes.buf, "blocked: unreachable ('n2' kept)"));
	assert_non_null(strstr(notes.buf, T1 "/" H(2)));
	json_object_put(req);
	ln_test_release(&b, &notes);
}

static void test_plan__reachable_nodes_drop_stale_hosts(void **state)
{
	struct world *w = *state;
	struct ln_buf b = LN_BUF_INIT, notes = LN_BUF_INIT;
	struct json_object *req, *t;

	/* n1 records an NQN nobody reports (a removed or replaced node):
	 * with every initiator reachable it is not carried over */
	json_object_put(w->nr[0].facts);
	w->nr[0].facts = facts(H(1), "[\"" H(9) "\",\"" H(2) "\"]", NULL);
	req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, &notes);
	t = json_object_array_get_idx(json_object_object_get(req, "targets"), 0);
	assert_string_equal(req_str(json_object_object_get(t, "hosts"), &b),
			    "[\"" H(2) "\",\"" H(3) "\"]");
	assert_int_equal(notes.len, 0);
	json_object_put(req);
	ln_test_release(&b, &notes);
}

static void test_plan__targets_phase_defers_new_connections(void **state)
{
	struct world *w = *state;
	struct json_object *req;

	/* n1 is not connected to T3 yet: the targets phase leaves it out */
	req = ln_plan_request(&w->run, 0, LN_PHASE_TARGETS, NULL);
	assert_int_equal(json_object_array_length(json_object_object_get(req, "initiators")), 0);
	assert_int_equal(json_object_array_length(json_object_object_get(req, "targets")), 1);
	json_object_put(req);
	/* once connected it is carried, so the targets phase never disconnects it */
	json_object_put(w->nr[0].facts);
	w->nr[0].facts = facts(H(1), NULL, "[{\"name\":\"nvme1\",\"subsysnqn\":\"" T3 "\"}]");
	req = ln_plan_request(&w->run, 0, LN_PHASE_TARGETS, NULL);
	assert_int_equal(json_object_array_length(json_object_object_get(req, "initiators")), 1);
	json_object_put(req);
}

/* Issue 32, reproduction 4: a host NQN the agent would refuse is no
 * identity for that node alone; the target's request carries the other
 * host, so the target node is not failed for it. */
static void test_plan__invalid_host_nqn_is_no_identity(void **state)
{
	struct world *w = *state;
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *req, *t;

	json_object_put(w->nr[2].facts);
	w->nr[2].facts = facts("nqn.2014-08.org.nvmexpress:uuid:evil/../x", NULL, NULL);
	assert_null(ln_facts_host_nqn(&w->nr[2]));
	assert_string_equal(ln_facts_host_nqn(&w->nr[1]), H(2));	/* control */
	req = ln_plan_request(&w->run, 0, LN_PHASE_FULL, NULL);
	t = json_object_array_get_idx(json_object_object_get(req, "targets"), 0);
	assert_string_equal(req_str(json_object_object_get(t, "hosts"), &b), "[\"" H(2) "\"]");
	json_object_put(req);
	json_object_put(w->nr[2].facts);
	w->nr[2].facts = facts("nqn.2014-08.org.nvmexpress:uuid:a,hostnqn=b", NULL, NULL);
	assert_null(ln_facts_host_nqn(&w->nr[2]));
	ln_buf_release(&b);
}

static void test_plan__duplicate_host_nqn_names_both(void **state)
{
	struct world *w = *state;
	struct ln_buf err = LN_BUF_INIT;

	assert_int_equal(ln_plan_check_duplicates(&w->run, &err), 0);
	json_object_put(w->nr[2].facts);
	w->nr[2].facts = facts(H(2), NULL, NULL);
	assert_int_equal(ln_plan_check_duplicates(&w->run, &err), -LN_ECONFLICT);
	assert_non_null(strstr(err.buf, "nodes 'n2' and 'n3' report the same host NQN '" H(2) "'"));
	ln_buf_release(&err);
}

static void test_plan__count_change_list(void **state)
{
	static const char ans[] =
		"{\"protocol\":1,\"changes\":[{\"action\":\"create\",\"kind\":\"nvmet_host\",\"id\":\"a\"},"
		"{\"action\":\"ok\",\"kind\":\"hostfile\",\"id\":\"b\"},"
		"{\"action\":\"remove\",\"kind\":\"nvmet_allowed_host\",\"id\":\"c\"},"
		"{\"action\":\"change\",\"kind\":\"nvmet_namespace\",\"id\":\"d\"},"
		"{\"action\":\"create\",\"kind\":\"nvmet_port\",\"id\":\"e\",\"error\":\"boom\"}]}";
	struct json_object *o = NULL;
	struct ln_buf err = LN_BUF_INIT;
	int c, ch, rm, ok, e;

	(void)state;
	assert_int_equal(ln_json_parse(ans, strlen(ans), &o, &err), 0);
	ln_plan_count(o, &c, &ch, &rm, &ok, &e);
	assert_int_equal(c, 1);
	assert_int_equal(ch, 1);
	assert_int_equal(rm, 1);
	assert_int_equal(ok, 1);
	assert_int_equal(e, 1);
	json_object_put(o);
	ln_buf_release(&err);
}

/* A test that starts from a fresh world, freed even when it fails. */
/* One mapping from a failed call to a node state, so one exit code, in every
 * phase (docs/exit-codes.md): a timeout exited 5 in apply but 4 in facts. */
static void test_plan__failed_call_exit_is_the_same_in_every_phase(void **state)
{
	(void)state;
	assert_int_equal(ln_node_state_exit(ln_node_state_of(-LN_ETIMEOUT)), LN_EXIT_UNREACHABLE);
	assert_int_equal(ln_node_state_exit(ln_node_state_of(-LN_EUNREACH)), LN_EXIT_UNREACHABLE);
	assert_int_equal(ln_node_state_exit(ln_node_state_of(-LN_EHOSTKEY)), LN_EXIT_UNREACHABLE);
	assert_int_equal(ln_node_state_exit(ln_node_state_of(-LN_EAUTH)), LN_EXIT_UNREACHABLE);
	assert_int_equal(ln_node_state_of(-LN_EHOSTKEY), LN_NODE_REFUSED);
	assert_int_equal(ln_node_state_of(-LN_ETIMEOUT), LN_NODE_UNREACHABLE);
	assert_int_equal(ln_node_state_exit(ln_node_state_of(-LN_EPROTO)), LN_EXIT_AGENT);
	assert_int_equal(ln_node_state_exit(ln_node_state_of(-EIO)), LN_EXIT_AGENT);
}

#define WORLD_TEST(t) cmocka_unit_test_setup_teardown(t, world_setup, world_teardown)

LN_TEST_MAIN(NULL, NULL,
	WORLD_TEST(test_plan__target_allows_its_initiators),
	WORLD_TEST(test_plan__adopt_reaches_the_request),
	WORLD_TEST(test_plan__mount_exec_reaches_the_request),
	WORLD_TEST(test_plan__initiator_bound_to_its_port_on_the_rail),
	WORLD_TEST(test_plan__agent_warnings_are_kept),
	WORLD_TEST(test_plan__unreachable_initiator_keeps_access),
	WORLD_TEST(test_plan__reachable_nodes_drop_stale_hosts),
	WORLD_TEST(test_plan__targets_phase_defers_new_connections),
	WORLD_TEST(test_plan__invalid_host_nqn_is_no_identity),
	WORLD_TEST(test_plan__duplicate_host_nqn_names_both),
	cmocka_unit_test(test_plan__count_change_list),
	cmocka_unit_test(test_plan__failed_call_exit_is_the_same_in_every_phase),
)
