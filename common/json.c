/* SPDX-License-Identifier: MIT */
/* json-c wrapper: see json.h. */
#include <errno.h>
#include <string.h>

#include "error.h"
#include "json.h"
#include "util.h"

int ln_json_parse(const char *s, size_t n, struct json_object **out, struct ln_buf *err)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error jerr;
	size_t used;
	int r = -LN_EREQUEST;

	*out = NULL;
	if (n > INT32_MAX) {
		ln_buf_addstr(err, "JSON input too large");
		return -E2BIG;
	}
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	obj = json_tokener_parse_ex(tok, s, (int)n);
	jerr = json_tokener_get_error(tok);
	used = (size_t)json_tokener_get_parse_end(tok);
	if (!obj || jerr != json_tokener_success) {
		if (jerr == json_tokener_continue)
			ln_buf_addstr(err, "invalid JSON: unexpected end of input");
		else
			ln_buf_addf(err, "invalid JSON at offset %zu: %s", used,
				    json_tokener_error_desc(jerr));
		json_object_put(obj);
		goto out;
	}
	while (used < n && strchr(" \t\r\n", s[used]))
		used++;
	if (used < n) {
		ln_buf_addf(err, "invalid JSON: trailing data at offset %zu", used);
		json_object_put(obj);
		goto out;
	}
	*out = obj;
	r = 0;
out:
	json_tokener_free(tok);
	return r;
}

int ln_json_write(struct json_object *obj, int pretty, struct ln_buf *out)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
	const char *s;
	int r;

	flags |= pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN;
	s = json_object_to_json_string_ext(obj, flags);
	if (!s)
		return -ENOMEM;
	r = ln_buf_addstr(out, s);
	if (r < 0)
		return r;
	return ln_buf_addch(out, '\n');
}

int ln_json_check_keys(struct json_object *obj, const char *const *allowed, const char *where,
		       struct ln_buf *err)
{
	if (!json_object_is_type(obj, json_type_object)) {
		ln_buf_addf(err, "%s: expected an object", where);
		return -LN_EREQUEST;
	}
	json_object_object_foreach(obj, key, val) {
		const char *const *a;

		(void)val;
		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a) {
			ln_buf_addf(err, "%s: unknown field '%s'", where, key);
			return -LN_EREQUEST;
		}
	}
	return 0;
}

static int get_typed(struct json_object *obj, const char *key, int required, enum json_type type,
		     struct json_object **val, struct ln_buf *err)
{
	if (!json_object_object_get_ex(obj, key, val) || json_object_is_type(*val, json_type_null)) {
		if (!required)
			return -ENOENT;
		ln_buf_addf(err, "missing field '%s'", key);
		return -LN_EREQUEST;
	}
	if (!json_object_is_type(*val, type)) {
		ln_buf_addf(err, "field '%s' must be %s", key, json_type_to_name(type));
		return -LN_EREQUEST;
	}
	return 0;
}

/* The typed getters (json.h): one body; the C type, the JSON type and
 * json-c's reader are what differ. */
#define JSON_GETTER(name, ctype, jtype, read)                                               \
	int name(struct json_object *obj, const char *key, int required, ctype *out,         \
		 struct ln_buf *err)                                                          \
	{                                                                                     \
		struct json_object *v;                                                        \
		int r = get_typed(obj, key, required, jtype, &v, err);                        \
                                                                                              \
		if (r == 0)                                                                   \
			*out = read(v);                                                       \
		return r;                                                                     \
	}

JSON_GETTER(ln_json_get_str, const char *, json_type_string, json_object_get_string)
JSON_GETTER(ln_json_get_i64, int64_t, json_type_int, json_object_get_int64)
JSON_GETTER(ln_json_get_bool, int, json_type_boolean, json_object_get_boolean)

int ln_json_get_obj(struct json_object *obj, const char *key, int required,
		    struct json_object **out, struct ln_buf *err)
{
	return get_typed(obj, key, required, json_type_object, out, err);
}

int ln_json_get_arr(struct json_object *obj, const char *key, int required,
		    struct json_object **out, struct ln_buf *err)
{
	return get_typed(obj, key, required, json_type_array, out, err);
}

struct json_object *ln_json_at(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

const char *ln_json_str_at(struct json_object *o, const char *key)
{
	struct json_object *v = ln_json_at(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int ln_json_i64_at(struct json_object *o, const char *key, int64_t *out)
{
	struct json_object *v = ln_json_at(o, key);

	if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return -ENOENT;
	*out = json_object_get_int64(v);
	return 0;
}

int ln_json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

int ln_json_add_str(struct json_object *obj, const char *key, const char *val)
{
	struct json_object *v = NULL;

	if (val) {
		v = json_object_new_string(val);
		if (!v)
			return -ENOMEM;
	}
	return ln_json_add(obj, key, v);
}

int ln_json_add_i64(struct json_object *obj, const char *key, int64_t val)
{
	struct json_object *v = json_object_new_int64(val);

	return v ? ln_json_add(obj, key, v) : -ENOMEM;
}

int ln_json_add_counts(struct json_object *obj, int create, int change, int remove, int ok,
		       int error)
{
	const struct {
		const char *key;
		int n;
	} counts[] = { { "create", create }, { "change", change }, { "remove", remove },
		       { "ok", ok }, { "error", error } };
	size_t i;
	int r = 0;

	for (i = 0; i < ARRAY_SIZE(counts) && r == 0; i++)
		r = ln_json_add_i64(obj, counts[i].key, counts[i].n);
	return r;
}

int ln_json_add_bool(struct json_object *obj, const char *key, int val)
{
	struct json_object *v = json_object_new_boolean(val);

	return v ? ln_json_add(obj, key, v) : -ENOMEM;
}

int ln_json_add_double(struct json_object *obj, const char *key, double val)
{
	struct json_object *v = json_object_new_double(val);

	return v ? ln_json_add(obj, key, v) : -ENOMEM;
}

int ln_json_disconnect_failed(struct json_object *changes, const char *nqn)
{
	size_t i, n = changes && json_object_is_type(changes, json_type_array) ?
			      json_object_array_length(changes) : 0;

	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(changes, i);
		const char *k = ln_json_str_at(c, "kind"), *id = ln_json_str_at(c, "id");
		const char *last = id ? strrchr(id, '/') : NULL;

		if (k && !strcmp(k, "nvme_connection") && ln_json_at(c, "error") &&
		    (!strcmp(id, "*") || (last && !strcmp(last + 1, nqn))))
			return 1;
	}
	return 0;
}
