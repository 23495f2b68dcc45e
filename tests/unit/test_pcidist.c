/* SPDX-License-Identifier: MIT */
/*
 * The PCIe distance classes (orchestrator/validate/pcidist.c) on
 * hand-made paths, one test per class and per rule between them: the
 * bridge where two paths meet, the switches counted, unknown NUMA nodes,
 * virtual devices, the ACS ports between a pair, and the matrix `llmnet
 * facts --topo` prints.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/json.h"
#include "orchestrator/validate/pcidist.h"

#define RP(b) "{\"bus_id\":\"" b "\",\"type\":\"root_port\",\"acs\":null}"
#define US(b) "{\"bus_id\":\"" b "\",\"type\":\"upstream\",\"acs\":null}"
#define DS(b) "{\"bus_id\":\"" b "\",\"type\":\"downstream\",\"acs\":null}"
#define DS_REDIR(b) "{\"bus_id\":\"" b "\",\"type\":\"downstream\",\"acs\":{\"ctrl\":13," \
	"\"req_redir\":true,\"cmplt_redir\":true,\"egress_ctrl\":false}}"
#define RP_EGRESS(b) "{\"bus_id\":\"" b "\",\"type\":\"root_port\",\"acs\":{\"ctrl\":32," \
	"\"req_redir\":false,\"cmplt_redir\":false,\"egress_ctrl\":true}}"

#define RP_REDIR_EGRESS(b) "{\"bus_id\":\"" b "\",\"type\":\"root_port\",\"acs\":{\"ctrl\":36," \
	"\"req_redir\":true,\"cmplt_redir\":false,\"egress_ctrl\":true}}"

/* A topology entry: bus id, NUMA node, host bridge and path (hops). */
static struct json_object *dev(const char *bus, int numa, const char *hb, const char *path)
{
	char js[2048];
	struct json_object *o;

	snprintf(js, sizeof(js), "{\"bus_id\":%s%s%s,\"numa_node\":%d,\"host_bridge\":\"%s\","
		 "\"path\":[%s]}", bus ? "\"" : "", bus ? bus : "null", bus ? "\"" : "", numa, hb,
		 path);
	o = json_tokener_parse(js);
	assert_non_null(o);
	return o;
}

/* The class between a and b (both freed), the meeting bridge into bridge. */
static enum ln_pci_distance dist(struct json_object *a, struct json_object *b, char *bridge,
				 size_t len)
{
	struct ln_buf why = LN_BUF_INIT;
	struct ln_pci_meet m;

	assert_int_equal(ln_pci_distance(a, b, &m, &why), 0);
	snprintf(bridge, len, "%s", m.bridge ? m.bridge : "-");
	json_object_put(a);
	json_object_put(b);
	ln_buf_release(&why);
	return m.dist;
}

/* GPU and NIC below two downstream ports of one switch: PIX at its
 * upstream port; the root port above does not count. */
static void test_pcidist__one_switch_is_pix(void **state)
{
	char br[64];

	(void)state;
	assert_int_equal(dist(dev("0000:18:00.0", 0, "pci0000:15", RP("0000:15:01.0") ","
				  US("0000:16:00.0") "," DS("0000:17:00.0")),
			      dev("0000:19:00.0", 0, "pci0000:15", RP("0000:15:01.0") ","
				  US("0000:16:00.0") "," DS("0000:17:01.0")), br, sizeof(br)),
			 LN_DIST_PIX);
	assert_string_equal(br, "0000:16:00.0");
	/* both directly below one root port (functions of one device) */
	assert_int_equal(dist(dev("0000:01:00.0", 0, "pci0000:00", RP("0000:00:01.0")),
			      dev("0000:01:00.1", 0, "pci0000:00", RP("0000:00:01.0")), br,
			      sizeof(br)), LN_DIST_PIX);
	assert_string_equal(br, "0000:00:01.0");
}

/* A second switch below the first, or one end on the root port and the
 * other in a switch below it: PXB, at the deepest common bridge. */
static void test_pcidist__several_switches_are_pxb(void **state)
{
	char br[64];

	(void)state;
	assert_int_equal(dist(dev("0000:1a:00.0", 0, "pci0000:15", RP("0000:15:01.0") ","
				  US("0000:16:00.0") "," DS("0000:17:00.0") "," US("0000:18:00.0")
				  "," DS("0000:19:00.0")),
			      dev("0000:1b:00.0", 0, "pci0000:15", RP("0000:15:01.0") ","
				  US("0000:16:00.0") "," DS("0000:17:01.0")), br, sizeof(br)),
			 LN_DIST_PXB);
	assert_string_equal(br, "0000:16:00.0");
	assert_int_equal(dist(dev("0000:01:00.0", 0, "pci0000:00", RP("0000:00:01.0")),
			      dev("0000:03:00.0", 0, "pci0000:00", RP("0000:00:01.0") ","
				  US("0000:01:00.0") "," DS("0000:02:00.0")), br, sizeof(br)),
			 LN_DIST_PXB);
	assert_string_equal(br, "0000:00:01.0");
}

/* Two root ports of one host bridge: no bridge in common, PHB. */
static void test_pcidist__root_ports_of_one_host_bridge_are_phb(void **state)
{
	char br[64];

	(void)state;
	assert_int_equal(dist(dev("0000:01:00.0", 0, "pci0000:00", RP("0000:00:01.0")),
			      dev("0000:02:00.0", 0, "pci0000:00", RP("0000:00:02.0")), br,
			      sizeof(br)), LN_DIST_PHB);
	assert_string_equal(br, "pci0000:00");
}

/* Two host bridges of one NUMA node: NODE; with a NUMA node unknown,
 * NODE or SYS, which cannot be told (flagged; the matrix shows "?"). */
static void test_pcidist__host_bridges_are_node_unknown_numa_unknown(void **state)
{
	struct json_object *a, *b, *topo, *mx;
	struct ln_buf why = LN_BUF_INIT;
	struct ln_pci_meet m;
	char br[64];

	(void)state;
	assert_int_equal(dist(dev("0000:16:00.0", 0, "pci0000:15", RP("0000:15:01.0")),
			      dev("0000:38:00.0", 0, "pci0000:37", RP("0000:37:01.0")), br,
			      sizeof(br)), LN_DIST_NODE);
	assert_string_equal(br, "-");
	a = dev("0000:16:00.0", 0, "pci0000:15", RP("0000:15:01.0"));
	b = dev("0000:38:00.0", 0, "pci0000:37", RP("0000:37:01.0"));
	assert_int_equal(ln_pci_distance(a, b, &m, &why), 0);
	assert_false(m.numa_unknown);
	json_object_put(a);
	json_object_put(b);
	/* one NUMA node unknown: NODE or SYS */
	a = dev("0000:16:00.0", -1, "pci0000:15", RP("0000:15:01.0"));
	b = dev("0000:98:00.0", 1, "pci0000:97", RP("0000:97:01.0"));
	assert_int_equal(ln_pci_distance(a, b, &m, &why), 0);
	assert_true(m.numa_unknown);
	topo = json_object_new_object();
	json_object_object_add(topo, "gpus", json_object_new_array());
	json_object_object_add(topo, "nics", json_object_new_array());
	json_object_object_add(a, "index", json_object_new_int(0));
	json_object_array_add(ln_json_at(topo, "gpus"), a);
	json_object_object_add(b, "device", json_object_new_string("mlx5_0"));
	json_object_array_add(ln_json_at(topo, "nics"), b);
	mx = ln_pci_matrix(topo);
	assert_non_null(mx);
	assert_string_equal(json_object_to_json_string_ext(ln_json_at(json_object_array_get_idx(
				    ln_json_at(mx, "rows"), 0), "cells"), JSON_C_TO_STRING_PLAIN),
			    "[\"X\",\"?\"]");
	json_object_put(mx);
	json_object_put(topo);
	ln_buf_release(&why);
	/* both unknown, one host bridge: its own class still */
	assert_int_equal(dist(dev("0000:01:00.0", -1, "pci0000:00", RP("0000:00:01.0")),
			      dev("0000:02:00.0", -1, "pci0000:00", RP("0000:00:02.0")), br,
			      sizeof(br)), LN_DIST_PHB);
}

/* Two known NUMA nodes that differ: SYS, whatever the paths. */
static void test_pcidist__numa_nodes_differ_is_sys(void **state)
{
	char br[64];

	(void)state;
	assert_int_equal(dist(dev("0000:16:00.0", 0, "pci0000:15", RP("0000:15:01.0")),
			      dev("0000:98:00.0", 1, "pci0000:97", RP("0000:97:01.0")), br,
			      sizeof(br)), LN_DIST_SYS);
	assert_string_equal(br, "-");
}

/* A virtual device (rxe: bus_id null, no path) has no distance. */
static void test_pcidist__virtual_device_refused(void **state)
{
	struct json_object *a = dev("0000:16:00.0", 0, "pci0000:15", RP("0000:15:01.0"));
	struct json_object *b = json_tokener_parse("{\"device\":\"rxe0\",\"bus_id\":null,"
						   "\"path\":[]}");
	struct ln_buf why = LN_BUF_INIT;
	struct ln_pci_meet m;

	(void)state;
	assert_int_equal(ln_pci_distance(a, b, &m, &why), -EINVAL);
	assert_string_equal(why.buf, "rxe0 has no PCIe place in the topology facts (a virtual "
			    "device such as rxe, or no host bridge or path)");
	json_object_put(a);
	json_object_put(b);
	ln_buf_release(&why);
}

/* ACS: the redirecting downstream port between the pair is named; a
 * root port above the meeting switch is not looked at, nor any port of a
 * pair that meets at the host bridge; a root port the pair meets at is;
 * a redirect on a lower switch's port on one side is not where the
 * traffic turns round. */
static void test_pcidist__acs_between_the_pair_only(void **state)
{
	struct json_object *g = dev("0000:18:00.0", 0, "pci0000:15", RP_EGRESS("0000:15:01.0") ","
				    US("0000:16:00.0") "," DS("0000:17:00.0"));
	struct json_object *n = dev("0000:19:00.0", 0, "pci0000:15", RP_EGRESS("0000:15:01.0") ","
				    US("0000:16:00.0") "," DS_REDIR("0000:17:01.0"));
	struct json_object *far = dev("0000:02:00.0", 0, "pci0000:15", RP("0000:15:02.0"));
	struct ln_buf why = LN_BUF_INIT, bad = LN_BUF_INIT;
	struct ln_pci_meet m;
	size_t ports, no_acs;

	(void)state;
	assert_int_equal(ln_pci_distance(g, n, &m, &why), 0);
	assert_int_equal(ln_pci_acs_redirects(g, n, &m, &bad, &ports, &no_acs), 1);
	assert_string_equal(bad.buf, "downstream 0000:17:01.0 (req_redir, cmplt_redir)");
	assert_int_equal(ports, 2);
	assert_int_equal(no_acs, 1);
	/* the control: the GPU and its own downstream port, no redirect */
	ln_buf_reset(&bad);
	assert_int_equal(ln_pci_distance(g, far, &m, &why), 0);
	assert_int_equal(m.dist, LN_DIST_PHB);
	assert_int_equal(ln_pci_acs_redirects(g, far, &m, &bad, &ports, &no_acs), 0);
	assert_string_equal(bad.buf, "");
	assert_int_equal(ports, 0);
	/* meeting at the root port: its P2P egress control alone blocks, by
	 * its egress vector, and redirects nothing (PCIe's ACS Control) */
	ln_buf_reset(&bad);
	json_object_put(far);
	far = dev("0000:15:00.1", 0, "pci0000:15", RP_EGRESS("0000:15:01.0"));
	assert_int_equal(ln_pci_distance(g, far, &m, &why), 0);
	assert_int_equal(m.dist, LN_DIST_PXB);
	assert_int_equal(ln_pci_acs_redirects(g, far, &m, &bad, &ports, &no_acs), 0);
	assert_string_equal(bad.buf, "");
	assert_int_equal(ports, 1);
	assert_int_equal(no_acs, 0);
	/* with ReqRedir beside it, a redirect, egress control named too */
	json_object_put(g);
	json_object_put(far);
	g = dev("0000:18:00.0", 0, "pci0000:15", RP_REDIR_EGRESS("0000:15:01.0") ","
		US("0000:16:00.0") "," DS("0000:17:00.0"));
	far = dev("0000:15:00.1", 0, "pci0000:15", RP_REDIR_EGRESS("0000:15:01.0"));
	assert_int_equal(ln_pci_distance(g, far, &m, &why), 0);
	assert_int_equal(ln_pci_acs_redirects(g, far, &m, &bad, &ports, &no_acs), 1);
	assert_string_equal(bad.buf, "root_port 0000:15:01.0 (req_redir, egress_ctrl)");
	/* two levels of switch: the lower switch's redirecting port on the
	 * GPU's side is passed by; its port in the meeting switch is named */
	json_object_put(g);
	json_object_put(far);
	ln_buf_reset(&bad);
	g = dev("0000:1b:00.0", 0, "pci0000:15", RP("0000:15:01.0") "," US("0000:16:00.0") ","
		DS("0000:17:00.0") "," US("0000:18:00.0") "," DS_REDIR("0000:19:00.0"));
	far = dev("0000:1c:00.0", 0, "pci0000:15", RP("0000:15:01.0") "," US("0000:16:00.0") ","
		  DS("0000:17:02.0"));
	assert_int_equal(ln_pci_distance(g, far, &m, &why), 0);
	assert_int_equal(ln_pci_acs_redirects(g, far, &m, &bad, &ports, &no_acs), 0);
	assert_string_equal(bad.buf, "");
	assert_int_equal(ports, 2);
	json_object_put(g);
	g = dev("0000:1b:00.0", 0, "pci0000:15", RP("0000:15:01.0") "," US("0000:16:00.0") ","
		DS_REDIR("0000:17:00.0") "," US("0000:18:00.0") "," DS("0000:19:00.0"));
	assert_int_equal(ln_pci_distance(g, far, &m, &why), 0);
	assert_int_equal(ln_pci_acs_redirects(g, far, &m, &bad, &ports, &no_acs), 1);
	assert_string_equal(bad.buf, "downstream 0000:17:00.0 (req_redir, cmplt_redir)");
	json_object_put(g);
	json_object_put(n);
	json_object_put(far);
	ln_test_release(&why, &bad);
}

/* The matrix: GPUs then NICs, X on the diagonal, "?" for a virtual NIC,
 * and nvidia-smi's layout with the NUMA affinity column. */
static void test_pcidist__matrix(void **state)
{
	static const char topo[] =
		"{\"gpus\":[{\"index\":0,\"bus_id\":\"0000:18:00.0\",\"numa_node\":0,"
		"\"host_bridge\":\"pci0000:15\",\"path\":[" RP("0000:15:01.0") "," US("0000:16:00.0")
		"," DS("0000:17:00.0") "]},{\"index\":1,\"bus_id\":\"0000:98:00.0\",\"numa_node\":1,"
		"\"host_bridge\":\"pci0000:97\",\"path\":[" RP("0000:97:01.0") "]}],"
		"\"nics\":[{\"device\":\"mlx5_0\",\"bus_id\":\"0000:19:00.0\",\"numa_node\":0,"
		"\"host_bridge\":\"pci0000:15\",\"path\":[" RP("0000:15:01.0") "," US("0000:16:00.0")
		"," DS("0000:17:01.0") "]},{\"device\":\"rxe0\",\"bus_id\":null,\"numa_node\":-1,"
		"\"host_bridge\":null,\"path\":[]}]}";
	struct json_object *t = json_tokener_parse(topo), *m;
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	assert_non_null(t);
	m = ln_pci_matrix(t);
	assert_non_null(m);
	assert_int_equal(ln_json_write(m, 0, &out), 0);
	assert_string_equal(out.buf, "{\"columns\":[\"GPU0\",\"GPU1\",\"mlx5_0\",\"rxe0\"],"
			    "\"rows\":[{\"gpu\":\"GPU0\",\"bus_id\":\"0000:18:00.0\",\"numa_node\":0,"
			    "\"cells\":[\"X\",\"SYS\",\"PIX\",\"?\"]},{\"gpu\":\"GPU1\",\"bus_id\":"
			    "\"0000:98:00.0\",\"numa_node\":1,\"cells\":[\"SYS\",\"X\",\"SYS\","
			    "\"?\"]}]}\n");
	ln_buf_reset(&out);
	ln_pci_matrix_text(m, &out);
	assert_non_null(strstr(out.buf, "        GPU0    GPU1    mlx5_0  rxe0    NUMA Affinity\n"
				   "GPU0     X      SYS     PIX     ?       0\n"
				   "GPU1    SYS      X      SYS     ?       1\n\nLegend:\n"));
	assert_null(ln_pci_matrix(NULL));
	json_object_put(m);
	json_object_put(t);
	ln_buf_release(&out);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_pcidist__one_switch_is_pix),
	cmocka_unit_test(test_pcidist__several_switches_are_pxb),
	cmocka_unit_test(test_pcidist__root_ports_of_one_host_bridge_are_phb),
	cmocka_unit_test(test_pcidist__host_bridges_are_node_unknown_numa_unknown),
	cmocka_unit_test(test_pcidist__numa_nodes_differ_is_sys),
	cmocka_unit_test(test_pcidist__virtual_device_refused),
	cmocka_unit_test(test_pcidist__acs_between_the_pair_only),
	cmocka_unit_test(test_pcidist__matrix),
)
