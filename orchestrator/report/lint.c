/* SPDX-License-Identifier: MIT */
/*
 * lint's summary and its problems as JSON (lint.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "orchestrator/report/lint.h"

void ln_report_lint_summary(const struct ln_spec *s, struct ln_buf *out)
{
	size_t i, gpus = 0, ports = 0, ns = 0;

	for (i = 0; i < s->n_nodes; i++) {
		gpus += s->nodes[i].gpus;
		ports += s->nodes[i].n_rdma;
	}
	for (i = 0; i < s->n_targets; i++)
		ns += s->targets[i].n_namespaces;
	ln_buf_addf(out, "%s: ok: cluster '%s', %zu node%s, %zu GPU%s, %zu RDMA port%s, "
		    "%zu target%s, %zu namespace%s, %zu initiator%s, %zu stage%s\n",
		    s->path, s->cluster, s->n_nodes, s->n_nodes == 1 ? "" : "s", gpus,
		    gpus == 1 ? "" : "s", ports, ports == 1 ? "" : "s", s->n_targets,
		    s->n_targets == 1 ? "" : "s", ns, ns == 1 ? "" : "s", s->n_initiators,
		    s->n_initiators == 1 ? "" : "s", s->validation.n_order,
		    s->validation.n_order == 1 ? "" : "s");
}

/* Turn "path:line:col: message\n" lines into JSON error objects. */
static int errors_json(const char *path, const char *text, struct json_object **out)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	size_t plen = strlen(path);
	const char *p = text;
	int r = 0;

	if (!o || !a) {
		r = -ENOMEM;
		goto fail;
	}
	while (*p) {
		const char *eol = strchr(p, '\n'), *q;
		struct json_object *e;
		unsigned long line = 0, col = 0;
		char *end;

		if (!eol)
			eol = p + strlen(p);
		q = p;
		if (!strncmp(q, path, plen) && q[plen] == ':') {
			q += plen + 1;
			line = strtoul(q, &end, 10);
			if (*end == ':') {
				col = strtoul(end + 1, &end, 10);
				if (*end == ':' && end[1] == ' ')
					q = end + 2;
			} else {
				line = 0;
			}
		}
		e = json_object_new_object();
		if (!e || json_object_array_add(a, e) < 0) {
			json_object_put(e);
			r = -ENOMEM;
			goto fail;
		}
		if (ln_json_add_str(e, "file", path) < 0 || ln_json_add_i64(e, "line", (int64_t)line) < 0 ||
		    ln_json_add_i64(e, "col", (int64_t)col) < 0 ||
		    ln_json_add(e, "message", json_object_new_string_len(q, (int)(eol - q))) < 0) {
			r = -ENOMEM;
			goto fail;
		}
		p = *eol ? eol + 1 : eol;
	}
	r = ln_json_add(o, "errors", a);
	a = NULL;
	if (r < 0)
		goto fail;
	*out = o;
	return 0;
fail:
	json_object_put(a);
	json_object_put(o);
	return r;
}

int ln_report_lint_errors(const char *path, const char *text, struct ln_buf *out)
{
	struct json_object *o = NULL;
	int r = errors_json(path, text, &o);

	if (r == 0)
		r = ln_json_write(o, 1, out);
	json_object_put(o);
	return r;
}
