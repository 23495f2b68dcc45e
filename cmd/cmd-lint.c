/* SPDX-License-Identifier: MIT */
/*
 * llmnet lint SPEC: parse and check a spec without contacting anything.
 * Text mode prints a one-line summary (stdout) or every problem as
 * "file:line:col: message" (stderr). With -o json it prints the
 * normalized model, or {"errors": [...]} for an invalid spec, on stdout.
 * Exit 0 when valid, 3 when invalid, 64 on a usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "orchestrator/spec/spec.h"

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

static int print_json(struct json_object *o)
{
	struct ln_buf b = LN_BUF_INIT;
	int r;

	r = ln_json_write(o, 1, &b);
	if (r == 0 && fwrite(b.buf, 1, b.len, stdout) != b.len)
		r = -EIO;
	ln_buf_release(&b);
	return r;
}

static int dump_schema(void)
{
	struct json_object *o = NULL;
	int r;

	r = ln_spec_schema(&o);
	if (r == 0)
		r = print_json(o);
	json_object_put(o);
	if (r < 0) {
		ln_error("cannot print the schema: %s", strerror(-r));
		return LN_EXIT_FAILED;
	}
	return LN_EXIT_OK;
}

static void summary(const struct ln_spec *s)
{
	size_t i, gpus = 0, ports = 0, ns = 0;

	for (i = 0; i < s->n_nodes; i++) {
		gpus += s->nodes[i].gpus;
		ports += s->nodes[i].n_rdma;
	}
	for (i = 0; i < s->n_targets; i++)
		ns += s->targets[i].n_namespaces;
	printf("%s: ok: cluster '%s', %zu node%s, %zu GPU%s, %zu RDMA port%s, %zu target%s, "
	       "%zu namespace%s, %zu initiator%s, %zu stage%s\n",
	       s->path, s->cluster, s->n_nodes, s->n_nodes == 1 ? "" : "s", gpus,
	       gpus == 1 ? "" : "s", ports, ports == 1 ? "" : "s", s->n_targets,
	       s->n_targets == 1 ? "" : "s", ns, ns == 1 ? "" : "s", s->n_initiators,
	       s->n_initiators == 1 ? "" : "s", s->validation.n_order,
	       s->validation.n_order == 1 ? "" : "s");
}

int cmd_lint(int argc, char **argv)
{
	int dump = 0;
	/* --dump-schema is hidden: the JSON Schema generated from the key
	 * tables, which is what specs/llmnet.schema.json holds. */
	const struct ln_option options[] = {
		LN_OPT_HIDDEN_BOOL("dump-schema", &dump),
		LN_OPT_END(),
	};
	const struct ln_opt_cmd c = {
		"llmnet lint [-o text|json] SPEC",
		"Parse and check SPEC without contacting any node. Every problem is\n"
		"reported as FILE:LINE:COL: MESSAGE, all of them in one run.\n"
		"With -o json, print the normalized spec (ranges expanded, defaults\n"
		"filled; keys in docs/spec.md), or {\"errors\": [...]} when invalid.\n"
		"\n"
		"exit status: 0 valid, 3 invalid, 64 usage",
		options,
	};
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *o = NULL;
	struct ln_spec *spec = NULL;
	const char *path;
	int n, r, rc;

	n = ln_cmd_parse(&c, argc, argv, &rc);
	if (n < 0)
		return rc;
	if (dump)
		return argc == 2 ? dump_schema() : ln_cmd_usage(&c);
	if (n != 2)
		return ln_cmd_usage(&c);
	path = argv[1];

	r = ln_spec_load(path, &spec, &err);
	if (r == -LN_ESPEC) {
		rc = LN_EXIT_SPEC;
		if (ln_cli.output == LN_OUT_JSON) {
			if (errors_json(path, err.buf, &o) < 0 || print_json(o) < 0)
				fputs(err.buf, stderr);
		} else {
			fputs(err.buf, stderr);
		}
		goto out;
	}
	if (r < 0) {
		/* Unreadable: the spec cannot be judged valid either; -o json
		 * still prints its {"errors": [...]}, at line 0. */
		ln_buf_rtrim(&err);
		ln_error("%s", err.buf);
		rc = LN_EXIT_SPEC;
		if (ln_cli.output == LN_OUT_JSON && (errors_json(path, err.buf, &o) < 0 ||
						     print_json(o) < 0))
			ln_error("cannot print the error as JSON: out of memory");
		goto out;
	}
	rc = LN_EXIT_OK;
	if (ln_cli.output == LN_OUT_JSON) {
		if (ln_spec_to_json(spec, &o) < 0 || print_json(o) < 0) {
			ln_error("cannot print the spec as JSON: out of memory");
			rc = LN_EXIT_FAILED;
		}
	} else if (ln_cli.verbosity >= 0) {
		summary(spec);
	}
out:
	json_object_put(o);
	ln_spec_free(spec);
	ln_buf_release(&err);
	return rc;
}
