/* SPDX-License-Identifier: MIT */
/*
 * The one list of an agent request's secret fields (secret_fields.h) and
 * the walk over a request's holders that redaction, the persist strip and
 * the restore's refill share.
 */
#include <json-c/json.h>

#include "common/json.h"
#include "common/secret_fields.h"

const struct ln_secret_holder ln_secret_holders[LN_SECRET_HOLDERS] = {
	[LN_SECRET_HOST] = { "targets", "keys", "host", "host", { "key", "ctrl_key", "psk" } },
	[LN_SECRET_CONNECT] = { "initiators", NULL, "target", "target",
				{ "secret", "ctrl_secret", "psk" } },
};

const char *const ln_secret_ext[LN_SECRET_SLOTS] = { "key", "ctrl.key", "psk" };

static int is_array(struct json_object *o)
{
	return o && json_object_is_type(o, json_type_array);
}

static int is_object(struct json_object *o)
{
	return o && json_object_is_type(o, json_type_object);
}

/* The holders of one list item (its dhchap, or the entries in it). */
static int walk_item(struct json_object *item, const struct ln_secret_holder *h, size_t i,
		     ln_secret_fn *fn, void *arg)
{
	struct json_object *d = ln_json_at(item, "dhchap"), *entries;
	size_t k;
	int r = 0;

	if (!is_object(d))
		return 0;
	if (!h->entries)
		return fn(d, h, i, json_object_get_string(ln_json_at(item, h->name)), arg);
	entries = ln_json_at(d, h->entries);
	for (k = 0; r >= 0 && is_array(entries) && k < json_object_array_length(entries); k++) {
		struct json_object *e = json_object_array_get_idx(entries, k);

		if (is_object(e))
			r = fn(e, h, i, json_object_get_string(ln_json_at(e, h->name)), arg);
	}
	return r;
}

int ln_secret_fields_walk(struct json_object *req, ln_secret_fn *fn, void *arg)
{
	size_t k, i;
	int r = 0;

	for (k = 0; r >= 0 && k < LN_SECRET_HOLDERS; k++) {
		const struct ln_secret_holder *h = &ln_secret_holders[k];
		struct json_object *list = ln_json_at(req, h->list);

		for (i = 0; r >= 0 && is_array(list) && i < json_object_array_length(list); i++)
			r = walk_item(json_object_array_get_idx(list, i), h, i, fn, arg);
	}
	return r < 0 ? r : 0;
}

static int each_field(struct json_object *holder, const struct ln_secret_holder *h, size_t item,
		      const char *name, void *arg)
{
	void (**fn)(struct json_object *, const char *) = arg;
	int k;

	(void)item;
	(void)name;
	for (k = 0; k < LN_SECRET_SLOTS; k++)
		(*fn)(holder, h->field[k]);
	return 0;
}

void ln_secret_fields_each(struct json_object *req,
			   void (*fn)(struct json_object *holder, const char *key))
{
	ln_secret_fields_walk(req, each_field, &fn);
}
