/* SPDX-License-Identifier: MIT */
/*
 * A failed io check blamed on its path (orchestrator/validate/storage_path.c):
 * the rail of the connection found from the spec, and the verdict taken
 * from the pairwise verdicts of the same run on that rail: the target's
 * port, the link, the target's node, or (none named, or only another
 * rail) the initiator's node, as for any node check.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "orchestrator/validate/diagnose.h"
#include "orchestrator/validate/storage_path.h"

/* Two nodes on two rails, n2's initiator of n1's target at n1's second
 * address (rail1). */
static const char two_rails[] =
	"version: 1\ncluster: sp\nnodes:\n"
	"  - name: n1\n    address: 127.0.1.1\n    rdma:\n"
	"      - { device: mlx5_0, ip: 10.0.0.1, rail: rail0 }\n"
	"      - { device: mlx5_1, ip: 10.1.0.1, rail: rail1 }\n"
	"  - name: n2\n    address: 127.0.1.2\n    rdma:\n"
	"      - { device: mlx5_0, ip: 10.0.0.2, rail: rail0 }\n"
	"      - { device: mlx5_1, ip: 10.1.0.2, rail: rail1 }\n"
	"storage:\n  targets:\n    - nqn: nqn.2024-04.io.llmnet:n1.t1\n      node: n1\n"
	"      transport: rdma\n      address: 10.1.0.1\n      namespaces:\n"
	"        - { nsid: 1, file: /srv/a.img, size: 1GiB }\n"
	"  initiators:\n    - { node: n2, target: nqn.2024-04.io.llmnet:n1.t1 }\n";

struct world {
	struct ln_spec *spec;
	struct ln_railmap m;
	struct ln_results r;
};

static void world_up(struct world *w)
{
	static const char *const names[] = { "n1", "n2" };
	struct ln_buf err = LN_BUF_INIT;
	size_t i, k;

	memset(w, 0, sizeof(*w));
	if (ln_spec_load_buf("sp.yaml", two_rails, strlen(two_rails), &w->spec, &err) < 0)
		fail_msg("%s", err.buf);
	assert_int_equal(ln_railmap_from_spec(w->spec, &w->m, &err), 0);
	assert_int_equal(ln_results_init(&w->r, "sp", names, 2), 0);
	assert_int_equal(ln_results_init_ports(&w->r, 2), 0);
	for (i = 0; i < 2; i++)
		for (k = 0; k < 2; k++)
			assert_int_equal(ln_results_set_port(&w->r, i, k, k ? "mlx5_1" : "mlx5_0",
							     k ? "rail1" : "rail0"), 0);
	ln_buf_release(&err);
}

static void world_down(struct world *w)
{
	ln_results_release(&w->r);
	ln_railmap_release(&w->m);
	ln_spec_free(w->spec);
}

/* n2's failed io check over the rail of the target's address */
static void failed_io(struct world *w)
{
	int ip, tp;
	long k = ln_results_add_check(&w->r, LN_STAGE_IO, 1, LN_NO_NODE,
				      "io on nqn.2024-04.io.llmnet:n1.t1");

	assert_true(k >= 0);
	assert_int_equal(ln_storage_path(w->spec, &w->m, &w->spec->initiators[0], &ip, &tp), 0);
	assert_int_equal(ip, 1);
	assert_int_equal(tp, 1);
	w->r.checks[k].from_port = ip;
	w->r.checks[k].via = 0;
	w->r.checks[k].via_port = tp;
	assert_int_equal(ln_check_set(&w->r.checks[k], LN_ST_FAIL, "write failed: EIO"), 0);
}

/* The verdicts of stage io, as "KIND:A[/PA][-B[/PB]] " words. */
static const char *io_verdicts(const struct world *w, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < w->r.nverdicts && off < len; i++) {
		const struct ln_verdict *v = &w->r.verdicts[i];

		if (v->stage != LN_STAGE_IO)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s:%s", ln_verdict_kind_name(v->kind),
					w->r.nodes[v->a]);
		if (v->pa >= 0 && off < len)
			off += (size_t)snprintf(buf + off, len - off, "/%d", v->pa);
		if (v->b != LN_NO_NODE && off < len)
			off += (size_t)snprintf(buf + off, len - off, "-%s/%d", w->r.nodes[v->b], v->pb);
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, " ");
	}
	return buf;
}

static void judged(enum ln_verdict_kind k, size_t a, int pa, size_t b, int pb, const char *want)
{
	struct world w;
	struct ln_buf err = LN_BUF_INIT;
	char got[512];

	world_up(&w);
	if ((int)k >= 0)
		assert_int_equal(ln_results_add_port_verdict(&w.r, k, LN_STAGE_BANDWIDTH, a, pa, b,
							     pb, "from the pairs"), 0);
	failed_io(&w);
	assert_int_equal(ln_diagnose_nodes(&w.r, &err), 0);
	assert_string_equal(io_verdicts(&w, got, sizeof(got)), want);
	world_down(&w);
	ln_buf_release(&err);
}

/* The target's port on the connection's rail was named bad: the io
 * failure is that port's, not the initiator's. */
static void test_storage_path__target_port(void **state)
{
	(void)state;
	judged(LN_VERDICT_PORT, 0, 1, LN_NO_NODE, -1, "port:n1/1 ");
}

/* The same port bad on the other rail says nothing of this connection:
 * the initiator is named, as before (the control). */
static void test_storage_path__other_rail_port(void **state)
{
	(void)state;
	judged(LN_VERDICT_PORT, 0, 0, LN_NO_NODE, -1, "node:n2 ");
}

/* The link between the two ports on that rail, either way round. */
static void test_storage_path__link(void **state)
{
	(void)state;
	judged(LN_VERDICT_LINK, 0, 1, 1, 1, "link:n2/1-n1/1 ");
	judged(LN_VERDICT_LINK, 1, 1, 0, 1, "link:n2/1-n1/1 ");
	judged(LN_VERDICT_LINK, 1, 0, 0, 0, "node:n2 ");
}

/* The target's node named bad (all its units): its node. */
static void test_storage_path__target_node(void **state)
{
	(void)state;
	judged(LN_VERDICT_NODE, 0, -1, LN_NO_NODE, -1, "node:n1 ");
}

/* No pairwise verdict (the pairs passed, or none ran): the initiator. */
static void test_storage_path__nothing_named(void **state)
{
	(void)state;
	judged((enum ln_verdict_kind)-1, 0, -1, LN_NO_NODE, -1, "node:n2 ");
}

/* A target on an address no declared port holds (a management network):
 * no path is known, the initiator's port stays unknown. */
static void test_storage_path__address_on_no_port(void **state)
{
	struct world w;
	int ip, tp;

	(void)state;
	world_up(&w);
	w.spec->targets[0].address = "192.168.0.1";
	assert_int_equal(ln_storage_path(w.spec, &w.m, &w.spec->initiators[0], &ip, &tp), -1);
	assert_int_equal(ip, -1);
	assert_int_equal(tp, -1);
	world_down(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storage_path__target_port),
		cmocka_unit_test(test_storage_path__other_rail_port),
		cmocka_unit_test(test_storage_path__link),
		cmocka_unit_test(test_storage_path__target_node),
		cmocka_unit_test(test_storage_path__nothing_named),
		cmocka_unit_test(test_storage_path__address_on_no_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
