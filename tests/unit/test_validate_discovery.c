/* SPDX-License-Identifier: MIT */
/*
 * The devices stage's discovery checks against the fake cluster
 * (validate_fake.h): for every initiator with `discovery: true`, one
 * `facts --discovery` per node asks the declared place, and the check
 * passes only when the log read there lists the subsystem as an NVM
 * subsystem (subtype 2) at that transport, address and service; what the
 * log lists instead, the agent's read error, or no read at all fails it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"

#define NQN "nqn.2024-04.io.llmnet:n1.t1"
#define OTHER "nqn.2024-04.io.llmnet:n1.t2"
#define H2 "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000002"
#define H3 "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000003"
#define PLACE "\"nqn\":\"" NQN "\",\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":\"4420\""
#define ENTRY(sub, nqn, svc) \
	"{\"subtype\":" #sub ",\"nqn\":\"" nqn "\",\"transport\":\"tcp\",\"address\":\"10.0.0.1\"," \
	"\"service\":\"" svc "\",\"port\":1}"

/* n1 exports NQN over tcp; n2 and n3 connect to it, through discovery
 * when disc is set, n4 always directly. */
static struct ln_spec *spec_disc(int disc)
{
	struct ln_buf y = LN_BUF_INIT;

	fake_nodes(&y, 4, 1);
	ln_buf_addf(&y, "storage:\n  targets:\n    - { nqn: \"" NQN "\", node: n1, transport: tcp, "
		    "namespaces: [ { nsid: 1, file: /var/lib/nvmet/d1.img, size: 1GiB } ] }\n"
		    "  initiators:\n"
		    "    - { node: n2, target: \"" NQN "\"%s }\n"
		    "    - { node: n3, target: \"" NQN "\"%s }\n"
		    "    - { node: n4, target: \"" NQN "\" }\n",
		    disc ? ", discovery: true" : "", disc ? ", discovery: true" : "");
	return spec_from(&y, "  - { stage: devices }\n");
}

/* The discovery check of node (0-based); NULL when it has none. */
static const struct ln_check *disc_check(const struct ln_results *r, size_t node)
{
	size_t i;

	for (i = 0; i < r->nchecks; i++)
		if (r->checks[i].stage == LN_STAGE_DEVICES && r->checks[i].a == node &&
		    !strncmp(r->checks[i].name, "discoverable ", 13))
			return &r->checks[i];
	return NULL;
}

static void test_validate_discovery__listed_where_declared(void **state)
{
	struct world *w = world_start(state, 4, spec_disc(1));
	const struct ln_check *k;

	/* n2's log lists it; n3's lists it only as a referral, as the
	 * discovery subsystem's NQN slot, at another service, and lists
	 * another subsystem at the declared place */
	w->f.disc_answer[1] = "{\"protocol\":3,\"discovery\":[{" PLACE ",\"host_nqn\":\"" H2 "\","
			      "\"log\":[" ENTRY(3, "nqn.2014-08.org.nvmexpress.discovery", "4420") ","
			      ENTRY(2, NQN, "4420") "]}]}";
	w->f.disc_answer[2] = "{\"protocol\":3,\"discovery\":[{" PLACE ",\"host_nqn\":\"" H3 "\","
			      "\"log\":[" ENTRY(1, NQN, "4420") "," ENTRY(3, NQN, "4420") ","
			      ENTRY(2, NQN, "4421") "," ENTRY(2, OTHER, "4420") "]}]}";
	world_run(w);
	assert_string_equal(w->f.disc_asked[1], "tcp,10.0.0.1,4420," NQN);
	assert_int_equal(w->f.disc_calls[1], 1);
	assert_int_equal(w->f.disc_calls[2], 1);
	/* the target's own node and a direct initiator are asked nothing */
	assert_int_equal(w->f.disc_calls[0], 0);
	assert_int_equal(w->f.disc_calls[3], 0);
	assert_null(disc_check(&w->res, 0));
	assert_null(disc_check(&w->res, 3));
	k = disc_check(&w->res, 1);
	assert_non_null(k);
	assert_string_equal(k->name, "discoverable " NQN " at 10.0.0.1:4420/tcp from n2");
	assert_int_equal(k->status, LN_ST_PASS);
	assert_string_equal(k->reason, "listed in the discovery log at tcp 10.0.0.1:4420 for host "
				       "'" H2 "'");
	k = disc_check(&w->res, 2);
	assert_non_null(k);
	assert_string_equal(k->name, "discoverable " NQN " at 10.0.0.1:4420/tcp from n3");
	assert_int_equal(k->status, LN_ST_FAIL);
	assert_string_equal(k->reason, "'" NQN "' is not in the discovery log at tcp "
				       "10.0.0.1:4420 for host '" H3 "': the log lists '" NQN
				       "' at tcp 10.0.0.1:4421, '" OTHER "' at tcp 10.0.0.1:4420");
	assert_int_equal(w->res.stages[LN_STAGE_DEVICES].status, LN_ST_FAIL);
}

/* Never a pass without a read: the agent's error, an unreachable node, an
 * answer without a log, an answer for another place. */
static void test_validate_discovery__no_read_never_passes(void **state)
{
	struct world *w = world_start(state, 4, spec_disc(1));
	const struct ln_check *k;

	w->f.disc_answer[1] = "{\"protocol\":3,\"discovery\":[{" PLACE ",\"host_nqn\":\"" H2 "\","
			      "\"error\":\"cannot connect to the discovery controller at tcp "
			      "10.0.0.1:4420: Connection refused\"}]}";
	world_run(w);
	k = disc_check(&w->res, 1);
	assert_int_equal(k->status, LN_ST_FAIL);
	assert_string_equal(k->reason, "cannot connect to the discovery controller at tcp "
				       "10.0.0.1:4420: Connection refused");
	k = disc_check(&w->res, 2);	/* no answer set: unreachable */
	assert_int_equal(k->status, LN_ST_FAIL);
	assert_string_equal(k->reason, "no discovery log was read: connection refused");
	ln_results_release(&w->res);

	w->f.disc_answer[1] = "{\"protocol\":3,\"discovery\":[{" PLACE ",\"host_nqn\":\"" H2 "\"}]}";
	w->f.disc_answer[2] = "{\"protocol\":3,\"discovery\":[{\"nqn\":\"" OTHER "\",\"transport\":"
			      "\"tcp\",\"address\":\"10.0.0.1\",\"service\":\"4420\",\"log\":["
			      ENTRY(2, NQN, "4420") "]}]}";
	world_run(w);
	k = disc_check(&w->res, 1);
	assert_int_equal(k->status, LN_ST_FAIL);
	assert_string_equal(k->reason, "no discovery log was read: the agent's answer has none "
				       "for tcp 10.0.0.1:4420");
	k = disc_check(&w->res, 2);
	assert_int_equal(k->status, LN_ST_FAIL);
	assert_string_equal(k->reason, "no discovery log was read: the agent answered for other "
				       "places");
}

/* Without discovery: true, no discovery check and no read. */
static void test_validate_discovery__only_when_declared(void **state)
{
	struct world *w = world_start(state, 4, spec_disc(0));
	size_t i;

	world_run(w);
	for (i = 0; i < 4; i++) {
		assert_null(disc_check(&w->res, i));
		assert_int_equal(w->f.disc_calls[i], 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		WORLD_TEST(test_validate_discovery__listed_where_declared),
		WORLD_TEST(test_validate_discovery__no_read_never_passes),
		WORLD_TEST(test_validate_discovery__only_when_declared),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
