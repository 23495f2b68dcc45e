/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for teardown's decisions (orchestrator/run/teardown.c): the
 * levels target nodes go in (a node serving another's initiator after it),
 * --force's names, and which targets stay because an initiator of them
 * did not disconnect in this run, with the reason the recap prints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/json.h"
#include "orchestrator/run/rollout.h"
#include "orchestrator/run/run.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/run/teardown.h"

/* n1 exports t1; n2 connects to t1 and exports t2; n3 connects to t2;
 * n4 connects to t1; n5 has nothing. */
static const char spec_yaml[] =
	"version: 1\n"
	"cluster: chain\n"
	"ssh: { user: root }\n"
	"nodes:\n"
	"  - { name: \"n[1-5]\", address: \"10.0.0.[1-5]\" }\n"
	"storage:\n"
	"  targets:\n"
	"    - nqn: nqn.2024-04.io.llmnet:n1.t1\n"
	"      node: n1\n"
	"      transport: tcp\n"
	"      address: 10.0.0.1\n"
	"      namespaces: [ { nsid: 1, file: /var/lib/nvmet/d1.img, size: 1MiB } ]\n"
	"    - nqn: nqn.2024-04.io.llmnet:n2.t2\n"
	"      node: n2\n"
	"      transport: tcp\n"
	"      address: 10.0.0.2\n"
	"      namespaces: [ { nsid: 1, file: /var/lib/nvmet/d2.img, size: 1MiB } ]\n"
	"  initiators:\n"
	"    - { node: n2, target: nqn.2024-04.io.llmnet:n1.t1 }\n"
	"    - { node: n3, target: nqn.2024-04.io.llmnet:n2.t2 }\n"
	"    - { node: n4, target: nqn.2024-04.io.llmnet:n1.t1 }\n";

struct fx {
	struct ln_spec *spec;
	struct ln_run run;
};

static int load(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct fx *f = calloc(1, sizeof(*f));
	size_t i;

	assert_non_null(f);
	assert_int_equal(ln_spec_load_buf("chain.yaml", spec_yaml, strlen(spec_yaml), &f->spec, &err), 0);
	ln_buf_release(&err);
	/* every node reached and torn down in this run, so far */
	f->run.spec = f->spec;
	f->run.n = f->spec->n_nodes;
	f->run.nodes = calloc(f->run.n, sizeof(*f->run.nodes));
	assert_non_null(f->run.nodes);
	for (i = 0; i < f->run.n; i++) {
		f->run.nodes[i].spec = &f->spec->nodes[i];
		f->run.nodes[i].state = LN_NODE_OK;
		f->run.nodes[i].limited = 1;
		f->run.nodes[i].applied = 1;
	}
	*state = f;
	return 0;
}

static int unload(void **state)
{
	struct fx *f = *state;
	size_t i;

	for (i = 0; i < f->run.n; i++)
		json_object_put(f->run.nodes[i].answer);
	free(f->run.nodes);
	ln_spec_free(f->spec);
	free(f);
	return 0;
}

static void test_teardown__levels_put_servers_after_their_initiators(void **state)
{
	struct fx *f = *state;
	unsigned level[5];

	ln_waves_levels(f->spec, level);
	assert_int_equal(level[0], 0);	/* n1: serves n2 and n4 */
	assert_int_equal(level[1], 1);	/* n2: connects to n1, serves n3 */
	assert_int_equal(level[2], 2);	/* n3: connects to n2 */
	assert_int_equal(level[3], 1);
	assert_int_equal(level[4], 0);
}

static void test_teardown__force_takes_nqns_and_nodes(void **state)
{
	struct fx *f = *state;
	struct ln_buf err = LN_BUF_INIT;
	unsigned char force[2] = { 0, 0 };
	const char *nqn[] = { "nqn.2024-04.io.llmnet:n2.t2" }, *node[] = { "n1" };
	const char *none[] = { "n3" }, *bad[] = { "nqn.2024-04.io.llmnet:n9.t9" };

	assert_int_equal(ln_teardown_force(f->spec, nqn, 1, force, &err), 0);
	assert_int_equal(force[0], 0);
	assert_int_equal(force[1], 1);
	assert_int_equal(ln_teardown_force(f->spec, node, 1, force, &err), 0);
	assert_int_equal(force[0], 1);
	assert_int_equal(ln_teardown_force(f->spec, none, 1, force, &err), -EINVAL);
	assert_string_equal(err.buf, "--force: node 'n3' exports no target");
	ln_buf_reset(&err);
	assert_int_equal(ln_teardown_force(f->spec, bad, 1, force, &err), -EINVAL);
	assert_string_equal(err.buf, "--force: 'nqn.2024-04.io.llmnet:n9.t9' is neither a target "
			    "NQN nor a node of the spec");
	/* the check alone, as teardown makes it before any node */
	ln_buf_reset(&err);
	assert_int_equal(ln_teardown_check_force(f->spec, nqn, 1, &err), 0);
	assert_int_equal(ln_teardown_check_force(f->spec, none, 1, &err), -EINVAL);
	assert_string_equal(err.buf, "--force: node 'n3' exports no target");
	ln_buf_release(&err);
}

static void expect_kept(struct fx *f, size_t t, const char *want)
{
	struct ln_buf why = LN_BUF_INIT;

	assert_int_equal(ln_teardown_target_kept(&f->run, t, &why), want != NULL);
	assert_string_equal(why.buf, want ? want : "");
	ln_buf_release(&why);
}

static void test_teardown__target_stays_until_every_initiator_disconnected(void **state)
{
	struct fx *f = *state;
	struct ln_buf e = LN_BUF_INIT;
	static const char failed[] =
		"{\"mode\":\"teardown\",\"changes\":[{\"action\":\"remove\",\"kind\":\"nvme_connection\","
		"\"id\":\"tcp/10.0.0.1/4420/nqn.2024-04.io.llmnet:n1.t1\",\"error\":\"busy\"}]}";

	expect_kept(f, 0, NULL);
	expect_kept(f, 1, NULL);
	/* n4 outside --limit: t1 stays, t2 (n3's) may go */
	f->run.nodes[3].limited = 0;
	expect_kept(f, 0, "initiator 'n4' not disconnected (outside --limit)");
	expect_kept(f, 1, NULL);
	/* and n2 unreachable too: the first named, the rest counted */
	f->run.nodes[1].state = LN_NODE_UNREACHABLE;
	expect_kept(f, 0, "initiator 'n2' not disconnected (unreachable), and 1 more");
	f->run.nodes[1].state = LN_NODE_OK;
	f->run.nodes[3].limited = 1;
	/* n3 not torn down yet (interrupted, or a cycle) */
	f->run.nodes[2].applied = 0;
	expect_kept(f, 1, "initiator 'n3' not disconnected (its node was not torn down before "
		    "this target's)");
	f->run.nodes[2].applied = 1;
	/* n4's agent answered that its disconnect from t1 failed */
	assert_int_equal(ln_json_parse(failed, strlen(failed), &f->run.nodes[3].answer, &e), 0);
	expect_kept(f, 0, "initiator 'n4' not disconnected (its disconnect failed)");
	expect_kept(f, 1, NULL);
	ln_buf_release(&e);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test_setup_teardown(test_teardown__levels_put_servers_after_their_initiators, load, unload),
	cmocka_unit_test_setup_teardown(test_teardown__force_takes_nqns_and_nodes, load, unload),
	cmocka_unit_test_setup_teardown(test_teardown__target_stays_until_every_initiator_disconnected, load, unload),
)
