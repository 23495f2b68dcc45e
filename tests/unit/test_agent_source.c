// SPDX-License-Identifier: MIT
/*
 * Every NVMe-oF connection bound to its declared source (issue 27, point
 * 1), on the initiator fixture (node-initiator: eth1 holds 10.77.0.12):
 * the request's host_traddr goes to the connect with host_iface, the
 * netdev holding it, for tcp (the fixture records both in the
 * controller's address attribute, as the kernel shows them); plan says
 * where it will connect from; an address no netdev here holds is
 * refused before anything is made; a live connection bound elsewhere (or
 * not at all) is a change only a new connection makes; a request field
 * of another family, or a name, is refused; without host_traddr the
 * connect is as before.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include "common/fileio.h"

#define ADDR "/sys/class/nvme/nvme1/address"

/* One tcp (or rdma) connect to nqn.2024-04.x:t at 10.77.0.11, with
 * extra at the end of its entry. */
static const char *req(const char *transport, const char *extra)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":3,\"cluster\":\"c\",\"initiators\":[{\"target\":\"nqn.2024-04.x:t\","
		 "\"transport\":\"%s\",\"address\":\"10.77.0.11\",\"service\":4420%s}]}",
		 transport, extra);
	return buf;
}

#define SRC ",\"host_traddr\":\"10.77.0.12\""

static const char *ran(const char *root, const char *verb, const char *in, struct ln_buf *out)
{
	const char *args[] = { verb, NULL };

	ln_buf_reset(out);
	assert_int_equal(fx_run_ini(root, args, in, out), 0);
	return out->buf;
}

/* args refused or failed with exit code rc and want in the answer. */
static void fails(const char *root, const char *verb, const char *in, int rc, const char *want)
{
	const char *args[] = { verb, NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;

	assert_int_equal(fx_agent(root, args, in, &out, &err, "LLMNET_NS_WAIT=2"), rc);
	if (!strstr(out.buf, want) && !strstr(err.buf, want))
		fail_msg("want '%s' in: %s %s", want, out.buf, err.buf);
	ln_test_release(&out, &err);
}

/* The controller's address attribute at p is now text. */
static void put_addr(const char *p, const char *text)
{
	struct ln_buf e = LN_BUF_INIT;

	assert_int_equal(ln_file_write_atomic(p, text, strlen(text), 0644, &e), 0);
	ln_buf_release(&e);
}

/* tcp: plan names the source and its netdev; apply connects with both,
 * and the converged connection is ok. */
static void test_agent_source__tcp_bound_to_address_and_iface(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	assert_non_null(strstr(ran(root, "plan", req("tcp", SRC), &out),
			       "\"detail\": \"from 10.77.0.12 (eth1)\""));
	assert_non_null(strstr(ran(root, "apply", req("tcp", SRC), &out),
			       "nvme1 from 10.77.0.12 (eth1)"));
	assert_string_equal(fx_read(root, ADDR, &v),
			    "traddr=10.77.0.11,trsvcid=4420,host_traddr=10.77.0.12,"
			    "host_iface=eth1\n");
	assert_non_null(strstr(ran(root, "apply", req("tcp", SRC), &out), "\"change\": 0"));
	assert_non_null(strstr(out.buf, "\"action\": \"ok\""));
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* rdma: host_traddr only (the kernel takes host_iface for tcp alone). */
static void test_agent_source__rdma_bound_to_address(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	char cmd[4200];

	(void)st;
	snprintf(cmd, sizeof(cmd), "sed -i 's/^nvme_tcp /nvme_rdma /' %s/proc/modules", root);
	assert_int_equal(system(cmd), 0);
	assert_non_null(strstr(ran(root, "apply", req("rdma", SRC), &out),
			       "nvme1 from 10.77.0.12"));
	assert_string_equal(fx_read(root, ADDR, &v),
			    "traddr=10.77.0.11,trsvcid=4420,host_traddr=10.77.0.12\n");
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* The control: no host_traddr, the connect is as before (the route's). */
static void test_agent_source__absent_is_unbound(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	ran(root, "apply", req("tcp", ""), &out);
	assert_string_equal(fx_read(root, ADDR, &v), "traddr=10.77.0.11,trsvcid=4420\n");
	assert_null(strstr(out.buf, " from "));
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* A source no netdev here holds: plan and apply say so, nothing is
 * connected (the connection would leave by another port). */
static void test_agent_source__address_not_here_refused(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf v = LN_BUF_INIT;
	const char *in = req("tcp", ",\"host_traddr\":\"10.78.0.12\"");
	char p[4200];

	(void)st;
	fails(root, "plan", in, 1, "no interface here holds the source address '10.78.0.12'");
	fails(root, "apply", in, 1, "no interface here holds the source address '10.78.0.12'");
	snprintf(p, sizeof(p), "%s/sys/class/nvme/nvme1", root);
	assert_int_equal(access(p, F_OK), -1);
	ln_buf_release(&v);
	fx_remove(root);
}

/* A live connection bound elsewhere, or left to the route: plan shows
 * the change, apply fails it saying what to do and keeps it live. */
static void test_agent_source__live_source_differs_is_drift(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	char p[4200];

	(void)st;
	ran(root, "apply", req("tcp", ""), &out);
	assert_non_null(strstr(ran(root, "plan", req("tcp", SRC), &out),
			       "nvme1: source the route's -> 10.77.0.12: only a new connection "
			       "takes it"));
	fails(root, "apply", req("tcp", SRC), 1, "'nqn.2024-04.x:t' (nvme1) is not bound to "
	      "10.77.0.12, this node's port on the target's rail: disconnect it (llmnet "
	      "teardown) and apply again");
	assert_string_equal(fx_read(root, "/sys/class/nvme/nvme1/state", &v), "live\n");
	/* the kernel shows where the route sent it: another address */
	snprintf(p, sizeof(p), "%s" ADDR, root);
	put_addr(p, "traddr=10.77.0.11,trsvcid=4420,"
					      "src_addr=10.77.0.99\n");
	assert_non_null(strstr(ran(root, "plan", req("tcp", SRC), &out),
			       "nvme1: source 10.77.0.99 -> 10.77.0.12"));
	/* bound to the address but through another netdev */
	put_addr(p, "traddr=10.77.0.11,trsvcid=4420,host_traddr="
					      "10.77.0.12,host_iface=eth2\n");
	assert_non_null(strstr(ran(root, "plan", req("tcp", SRC), &out),
			       "nvme1: source 10.77.0.12 (eth2) -> 10.77.0.12"));
	/* the control: as asked, ok */
	put_addr(p, "traddr=10.77.0.11,trsvcid=4420,host_traddr="
					      "10.77.0.12,host_iface=eth1\n");
	assert_non_null(strstr(ran(root, "plan", req("tcp", SRC), &out), "\"change\": 0"));
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* host_traddr is a numeric address of the target address's family. */
static void test_agent_source__field_typed(void **st)
{
	char *root = fx_build("node-initiator");

	(void)st;
	fails(root, "plan", req("tcp", ",\"host_traddr\":\"te2\""), 2,
	      "host_traddr 'te2' must be a numeric ipv4 address, as address is");
	fails(root, "plan", req("tcp", ",\"host_traddr\":\"fd00::12\""), 2,
	      "host_traddr 'fd00::12' must be a numeric ipv4 address");
	fails(root, "plan", req("tcp", ",\"host_traddr\":\"10.77.0.12,host_iface=lo\""), 2,
	      "must be a numeric ipv4 address");
	fails(root, "plan", req("tcp", ",\"host_traddr\":12"), 2, "host_traddr");
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_source__tcp_bound_to_address_and_iface),
	cmocka_unit_test(test_agent_source__rdma_bound_to_address),
	cmocka_unit_test(test_agent_source__absent_is_unbound),
	cmocka_unit_test(test_agent_source__address_not_here_refused),
	cmocka_unit_test(test_agent_source__live_source_differs_is_drift),
	cmocka_unit_test(test_agent_source__field_typed),
)
