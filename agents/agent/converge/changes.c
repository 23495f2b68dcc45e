/* SPDX-License-Identifier: MIT */
/*
 * The change list and its answer (changes.h): counted per action, logged as
 * it grows, and "converged" when nothing failed (and, for a plan, nothing
 * is pending).
 */
#include <stdarg.h>
#include <string.h>

#include "agents/agent/converge/changes.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/log.h"
#include "common/proto.h"

void ln_changes_init(struct ln_changes *c)
{
	memset(c, 0, sizeof(*c));
	c->list = json_object_new_array();
	c->warnings = json_object_new_array();
}

void ln_changes_release(struct ln_changes *c)
{
	json_object_put(c->list);
	json_object_put(c->warnings);
	c->list = c->warnings = NULL;
}

int ln_changes_removes(const struct ln_changes *c, const char *id)
{
	size_t i, n = c->list ? json_object_array_length(c->list) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(c->list, i);
		const char *a = ln_json_str_at(o, "action"), *oid = ln_json_str_at(o, "id");

		if (a && oid && !strcmp(a, "remove") && !strcmp(oid, id) &&
		    !json_object_object_get_ex(o, "error", NULL))
			return 1;
	}
	return 0;
}

void ln_changes_add(struct ln_changes *c, const char *action, const char *kind, const char *id,
		    const char *detail, const char *error)
{
	struct json_object *o = json_object_new_object();

	ln_json_add_str(o, "action", action);
	ln_json_add_str(o, "kind", kind);
	ln_json_add_str(o, "id", id);
	if (detail && *detail)
		ln_json_add_str(o, "detail", detail);
	if (error) {
		ln_json_add_str(o, "error", error);
		c->n_error++;
	} else if (!strcmp(action, "create")) {
		c->n_create++;
	} else if (!strcmp(action, "change")) {
		c->n_change++;
	} else if (!strcmp(action, "remove")) {
		c->n_remove++;
	} else {
		c->n_ok++;
	}
	json_object_array_add(c->list, o);
	if (error)
		ln_error("cannot %s %s '%s': %s", action, kind, id, error);
	else if (strcmp(action, "ok"))
		ln_verbose("%s %s '%s'%s%s", action, kind, id, detail ? ": " : "",
			   detail ? detail : "");
}

void ln_changes_warn(struct ln_changes *c, const char *fmt, ...)
{
	struct ln_buf b = LN_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	ln_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	ln_warn("%s", b.buf);
	json_object_array_add(c->warnings, json_object_new_string(b.buf));
	ln_buf_release(&b);
}

struct json_object *ln_changes_answer(struct ln_changes *c, const char *mode,
				      const char *cluster, int plan)
{
	struct json_object *o = json_object_new_object(), *s = json_object_new_object();
	int pending = c->n_create + c->n_change + c->n_remove;

	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "mode", mode);
	ln_json_add_str(o, "cluster", cluster);
	ln_json_add(o, "changes", c->list);
	ln_json_add(o, "warnings", c->warnings);
	c->list = c->warnings = NULL;
	ln_json_add_counts(s, c->n_create, c->n_change, c->n_remove, c->n_ok, c->n_error);
	ln_json_add(o, "summary", s);
	ln_json_add_bool(o, "converged", c->n_error == 0 && (!plan || pending == 0));
	return o;
}
