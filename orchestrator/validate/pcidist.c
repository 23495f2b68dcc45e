/* SPDX-License-Identifier: MIT */
/*
 * nvidia-smi's PCIe distance classes from the agent's topology facts
 * (docs/validation.md, "GPU placement"): SYS when the NUMA nodes differ
 * (both known), NODE when the host bridges differ (NODE or SYS, unknown,
 * when a NUMA node is not known), PHB when the paths
 * share no bridge (they meet at the host bridge), PIX when they meet
 * inside one PCIe switch (or both ends sit directly below one root
 * port), PXB when more than one switch lies between them. A path lists
 * the bridges from the root port down to the device's parent.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/escape.h"
#include "common/json.h"
#include "orchestrator/validate/pcidist.h"

static int numa_of(struct json_object *d)
{
	int64_t v;

	return ln_json_i64_at(d, "numa_node", &v) || v < 0 || v > 65535 ? -1 : (int)v;
}

static struct json_object *path_of(struct json_object *d)
{
	struct json_object *p = ln_json_at(d, "path");

	return p && json_object_is_type(p, json_type_array) ? p : NULL;
}

static const char *hop_bus(struct json_object *path, size_t i)
{
	return ln_json_str_at(json_object_array_get_idx(path, i), "bus_id");
}

static const char *hop_type(struct json_object *path, size_t i)
{
	const char *t = ln_json_str_at(json_object_array_get_idx(path, i), "type");

	return t ? t : "other";
}

/* Bridges a path crosses below index from: a switch's upstream port
 * starts a switch (its downstream ports belong to it), and any other
 * bridge that is not a downstream port counts as one of its own. */
static unsigned crossed_below(struct json_object *path, size_t from)
{
	size_t i, n = json_object_array_length(path);
	unsigned k = 0;

	for (i = from; i < n; i++)
		k += strcmp(hop_type(path, i), "downstream") != 0;
	return k;
}

int ln_pci_distance(struct json_object *a, struct json_object *b, struct ln_pci_meet *out,
		    struct ln_buf *why)
{
	struct json_object *pa = path_of(a), *pb = path_of(b);
	const char *ba = ln_json_str_at(a, "bus_id"), *bb = ln_json_str_at(b, "bus_id");
	size_t na, nb, c = 0;
	const char *top;

	memset(out, 0, sizeof(*out));
	out->numa_a = numa_of(a);
	out->numa_b = numa_of(b);
	out->ha = ln_json_str_at(a, "host_bridge");
	out->hb = ln_json_str_at(b, "host_bridge");
	if (!ba || !pa || !out->ha || !bb || !pb || !out->hb) {
		struct json_object *x = !ba || !pa || !out->ha ? a : b;
		const char *name = ln_json_str_at(x, "bus_id");

		ln_buf_addf(why, "%s has no PCIe place in the topology facts (a virtual device "
			    "such as rxe, or no host bridge or path)",
			    name ? name : (name = ln_json_str_at(x, "device")) ? name : "a device");
		return -EINVAL;
	}
	if (out->numa_a >= 0 && out->numa_b >= 0 && out->numa_a != out->numa_b) {
		out->dist = LN_DIST_SYS;
		return 0;
	}
	if (strcmp(out->ha, out->hb)) {
		out->dist = LN_DIST_NODE;
		out->numa_unknown = out->numa_a < 0 || out->numa_b < 0;
		return 0;
	}
	na = json_object_array_length(pa);
	nb = json_object_array_length(pb);
	while (c < na && c < nb && hop_bus(pa, c) && hop_bus(pb, c) &&
	       !strcmp(hop_bus(pa, c), hop_bus(pb, c)))
		c++;
	out->common = c;
	if (!c) {
		out->dist = LN_DIST_PHB;
		out->bridge = out->ha;
		return 0;
	}
	out->bridge = hop_bus(pa, c - 1);
	top = hop_type(pa, c - 1);
	/* the common bridge is a switch's (or another bridge's) unless it is
	 * a root port; then what lies below it on either side */
	out->switches = (strcmp(top, "root_port") != 0) + crossed_below(pa, c) +
			crossed_below(pb, c);
	out->dist = out->switches == 0 || (out->switches == 1 && strcmp(top, "root_port"))
			    ? LN_DIST_PIX : LN_DIST_PXB;
	return 0;
}

/* The redirects of path[i] into bad (1 when it redirects), counting it
 * in *ports and, without an ACS capability, in *no_acs. */
static size_t hop_redirects(struct json_object *path, size_t i, struct ln_buf *bad,
			    size_t *ports, size_t *no_acs)
{
	static const char *const bits[] = { "req_redir", "cmplt_redir", "egress_ctrl" };
	int redirect = 0;
	struct json_object *acs = ln_json_at(json_object_array_get_idx(path, i), "acs");
	const char *t = hop_type(path, i), *bus = hop_bus(path, i);
	size_t k, on = 0;

	(*ports)++;
	if (!acs || !json_object_is_type(acs, json_type_object)) {
		(*no_acs)++;
		return 0;
	}
	for (k = 0; k < 3; k++) {
		struct json_object *v = ln_json_at(acs, bits[k]);

		if (v && json_object_get_boolean(v))
			redirect |= k < 2;
	}
	/* P2P Egress Control alone only blocks requests to the ports its
	 * egress vector names; they are redirected only with ReqRedir (PCIe
	 * Base spec, ACS Control): named beside a redirect, not one itself */
	for (k = 0; redirect && k < 3; k++) {
		struct json_object *v = ln_json_at(acs, bits[k]);

		if (!v || !json_object_get_boolean(v))
			continue;
		if (!on++)
			ln_buf_addf(bad, "%s%s %s (", bad->len ? "; " : "", t, bus ? bus : "?");
		else
			ln_buf_addstr(bad, ", ");
		ln_buf_addstr(bad, bits[k]);
	}
	if (on)
		ln_buf_addch(bad, ')');
	return on ? 1 : 0;
}

/* ACS redirect acts where the pair's peer-to-peer traffic turns round:
 * at the downstream ports of the switch the two paths meet in (each
 * end's port just below the meeting bridge), or at the root port they
 * meet at. A switch lower on one side routes the traffic up past its own
 * ports as any upstream traffic, and a pair that meets at or past the
 * host bridge crosses the root complex anyway: no port is looked at. */
size_t ln_pci_acs_redirects(struct json_object *a, struct json_object *b,
			    const struct ln_pci_meet *m, struct ln_buf *bad, size_t *ports,
			    size_t *no_acs)
{
	struct json_object *pa = path_of(a), *pb = path_of(b);
	size_t n = 0, c = m->common;

	*ports = *no_acs = 0;
	if (c == 0)
		return 0;
	if (!strcmp(hop_type(pa, c - 1), "root_port"))
		n += hop_redirects(pa, c - 1, bad, ports, no_acs);
	if (pa && c < json_object_array_length(pa) && !strcmp(hop_type(pa, c), "downstream"))
		n += hop_redirects(pa, c, bad, ports, no_acs);
	if (pb && c < json_object_array_length(pb) && !strcmp(hop_type(pb, c), "downstream"))
		n += hop_redirects(pb, c, bad, ports, no_acs);
	return n;
}

/* ---- the matrix --------------------------------------------------------- */

static struct json_object *array_at(struct json_object *o, const char *key)
{
	struct json_object *a = ln_json_at(o, key);

	return a && json_object_is_type(a, json_type_array) ? a : NULL;
}

/* Column j's device: GPUs first, then NICs. */
static struct json_object *column(struct json_object *gpus, struct json_object *nics, size_t j)
{
	size_t ng = gpus ? json_object_array_length(gpus) : 0;

	return j < ng ? json_object_array_get_idx(gpus, j) : json_object_array_get_idx(nics, j - ng);
}

static int add_row(struct json_object *rows, struct json_object *gpus, struct json_object *nics,
		   size_t i, size_t ncol)
{
	struct json_object *g = json_object_array_get_idx(gpus, i);
	struct json_object *row = json_object_new_object(), *cells = json_object_new_array();
	struct ln_buf why = LN_BUF_INIT;
	char name[32];
	int64_t idx;
	size_t j;
	int r = -ENOMEM, numa = numa_of(g);

	if (!row || !cells)
		goto out;
	for (j = 0; j < ncol; j++) {
		struct ln_pci_meet m;
		const char *v = "X";

		if (j != i) {
			ln_buf_reset(&why);
			v = ln_pci_distance(g, column(gpus, nics, j), &m, &why) < 0 ||
				    m.numa_unknown ? "?" : ln_pci_distance_name(m.dist);
		}
		if (json_object_array_add(cells, json_object_new_string(v)) < 0)
			goto out;
	}
	snprintf(name, sizeof(name), "GPU%lld",
		 ln_json_i64_at(g, "index", &idx) ? (long long)i : (long long)idx);
	if (ln_json_add_str(row, "gpu", name) < 0 ||
	    ln_json_add_str(row, "bus_id", ln_json_str_at(g, "bus_id")) < 0 ||
	    ln_json_add(row, "numa_node", numa < 0 ? NULL : json_object_new_int(numa)) < 0)
		goto out;
	r = ln_json_add(row, "cells", cells);
	cells = NULL;
	if (r == 0)
		r = json_object_array_add(rows, row) < 0 ? -ENOMEM : 0;
	if (r == 0)
		row = NULL;
out:
	json_object_put(cells);
	json_object_put(row);
	ln_buf_release(&why);
	return r;
}

struct json_object *ln_pci_matrix(struct json_object *topology)
{
	struct json_object *gpus = array_at(topology, "gpus"), *nics = array_at(topology, "nics");
	struct json_object *m, *cols, *rows;
	size_t ng = gpus ? json_object_array_length(gpus) : 0;
	size_t nn = nics ? json_object_array_length(nics) : 0, j;

	if (!topology || !json_object_is_type(topology, json_type_object))
		return NULL;
	m = json_object_new_object();
	cols = json_object_new_array();
	rows = json_object_new_array();
	if (!m || !cols || !rows)
		goto fail;
	for (j = 0; j < ng + nn; j++) {
		struct json_object *d = column(gpus, nics, j);
		char name[32];
		int64_t idx;
		const char *dev = ln_json_str_at(d, "device");

		if (j < ng)
			snprintf(name, sizeof(name), "GPU%lld", ln_json_i64_at(d, "index", &idx) ?
				 (long long)j : (long long)idx);
		else
			snprintf(name, sizeof(name), "%.31s", dev ? dev : "?");
		if (json_object_array_add(cols, json_object_new_string(name)) < 0)
			goto fail;
	}
	for (j = 0; j < ng; j++)
		if (add_row(rows, gpus, nics, j, ng + nn) < 0)
			goto fail;
	if (ln_json_add(m, "columns", cols) < 0) {
		cols = NULL;
		goto fail;
	}
	cols = NULL;
	if (ln_json_add(m, "rows", rows) < 0) {
		rows = NULL;
		goto fail;
	}
	return m;
fail:
	json_object_put(cols);
	json_object_put(rows);
	json_object_put(m);
	return NULL;
}

static const char legend[] =
	"Legend:\n\n"
	"  X    = Self\n"
	"  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
	"  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
	"Bridges within a NUMA node\n"
	"  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
	"  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
	"Bridge)\n"
	"  PIX  = Connection traversing at most a single PCIe bridge\n"
	"  ?    = Not known (a device without a PCIe place, such as rxe)\n";

/* s, escaped (a node names its devices), padded to w columns. */
static void cell(struct ln_buf *out, const char *s, int w)
{
	size_t before = out->len;

	ln_escape_str(out, s ? s : "?");
	while ((int)(out->len - before) < w)
		ln_buf_addch(out, ' ');
}

void ln_pci_matrix_text(struct json_object *matrix, struct ln_buf *out)
{
	struct json_object *cols = array_at(matrix, "columns"), *rows = array_at(matrix, "rows");
	size_t nc = cols ? json_object_array_length(cols) : 0;
	size_t nr = rows ? json_object_array_length(rows) : 0, i, j;
	struct ln_buf e = LN_BUF_INIT;
	int w = 6;

	for (j = 0; j < nc; j++) {
		ln_buf_reset(&e);
		ln_escape_str(&e, json_object_get_string(json_object_array_get_idx(cols, j)));
		w = (int)e.len + 2 > w ? (int)e.len + 2 : w;
	}
	ln_buf_release(&e);
	cell(out, "", w);
	for (j = 0; j < nc; j++)
		cell(out, json_object_get_string(json_object_array_get_idx(cols, j)), w);
	ln_buf_addstr(out, "NUMA Affinity\n");
	for (i = 0; i < nr; i++) {
		struct json_object *row = json_object_array_get_idx(rows, i);
		struct json_object *cells = array_at(row, "cells");
		int64_t numa;

		cell(out, ln_json_str_at(row, "gpu"), w);
		for (j = 0; j < nc; j++) {
			const char *c = json_object_get_string(json_object_array_get_idx(cells, j));

			cell(out, c && !strcmp(c, "X") ? " X" : c, w);
		}
		if (ln_json_i64_at(row, "numa_node", &numa))
			ln_buf_addstr(out, "N/A\n");
		else
			ln_buf_addf(out, "%lld\n", (long long)numa);
	}
	if (nr)
		ln_buf_addf(out, "\n%s", legend);
}
