/* SPDX-License-Identifier: MIT */
/*
 * `llmnet facts --topo`: each node's GPU x (GPU + NIC) PCIe distance
 * matrix from its topology facts, in nvidia-smi topo -m's layout, or as
 * JSON (per node its "matrix": columns, and a row of cells per GPU).
 */
#include <errno.h>

#include "common/escape.h"
#include "common/json.h"
#include "orchestrator/report/recap.h"
#include "orchestrator/validate/pcidist.h"

/* Why node nr has no matrix, or NULL when it has one (*m, the caller's). */
static const char *matrix_of(const struct ln_node_run *nr, struct json_object **m)
{
	struct json_object *topo = ln_json_at(nr->facts, "topology");

	*m = NULL;
	if (nr->state != LN_NODE_OK)
		return nr->reason.len ? nr->reason.buf : ln_node_state_name(nr->state);
	if (!topo || !json_object_is_type(topo, json_type_object))
		return "no PCIe topology in its facts (an agent older than protocol 3)";
	*m = ln_pci_matrix(topo);
	return *m ? NULL : "out of memory";
}

static int topo_text(const struct ln_run *r, struct ln_buf *b)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < r->n && rc == 0; i++) {
		const struct ln_node_run *nr = &r->nodes[i];
		struct json_object *m;
		const char *why = matrix_of(nr, &m);
		int head = ln_buf_addf(b, "%s (%s)\n", nr->spec->name, nr->spec->address);

		if (why) {
			ln_buf_addstr(b, "  ");
			ln_escape_str(b, why);
			ln_buf_addch(b, '\n');
		} else if (!json_object_array_length(ln_json_at(m, "rows"))) {
			ln_buf_addstr(b, "  no GPU in its PCIe topology\n");
		} else {
			ln_pci_matrix_text(m, b);
		}
		/* a full buffer refuses the last line too: said, never cut */
		rc = head < 0 ? head : ln_buf_addch(b, '\n');
		json_object_put(m);
	}
	return rc;
}

int ln_recap_topo(const struct ln_run *r, int json, struct ln_buf *b)
{
	struct json_object *all, *nodes;
	size_t i;
	int rc = 0;

	if (!json)
		return topo_text(r, b);
	all = json_object_new_object();
	nodes = json_object_new_object();
	if (!all || !nodes || ln_json_add_str(all, "cluster", r->spec->cluster) < 0) {
		json_object_put(all);
		json_object_put(nodes);
		return -ENOMEM;
	}
	for (i = 0; i < r->n && rc == 0; i++) {
		const struct ln_node_run *nr = &r->nodes[i];
		struct json_object *o = json_object_new_object(), *m;
		const char *why = matrix_of(nr, &m);

		if (!o) {
			json_object_put(m);
			rc = -ENOMEM;
			break;
		}
		if (ln_json_add_str(o, "state", ln_node_state_name(nr->state)) < 0 ||
		    ln_json_add(o, "matrix", m) < 0 || ln_json_add_str(o, "error", why) < 0)
			rc = -ENOMEM;
		if (ln_json_add(nodes, nr->spec->name, o) < 0)
			rc = -ENOMEM;
	}
	if (ln_json_add(all, "nodes", nodes) < 0 || rc < 0 ||
	    ln_json_write(all, 1, b) < 0)
		rc = -ENOMEM;
	json_object_put(all);
	return rc;
}
