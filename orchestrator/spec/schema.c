/* SPDX-License-Identifier: MIT */
/*
 * The JSON Schema of the spec language, generated from the same key
 * tables that drive the parser, so an editor's completion and checks can
 * never drift from what `llmnet lint` accepts. specs/llmnet.schema.json is
 * this output, and a test keeps the two equal. The schema cannot express
 * everything lint checks (references, duplicates, NQN dates, addresses);
 * lint remains the authority.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/mca_policy.h"
#include "common/nccl_env.h"
#include "common/util.h"
#include "common/nvme.h"
#include "orchestrator/spec/impl.h"
#include "orchestrator/spec/parser.h"

const char *const spec_size_regex =
	"^[0-9]+(\\.[0-9]{1,9})? ?(B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB)?$";
const char *const spec_rate_regex = "^[0-9]+(\\.[0-9]{1,9})? ?(Kb|Mb|Gb|Tb|KB|MB|GB|TB)/s$";
const char *const spec_duration_regex = "^[0-9]+(\\.[0-9]{1,9})? ?(us|ms|s|m|h)$";
#define SIZE_RE "[0-9]+(\\.[0-9]{1,9})? ?(B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|PB)?"
static const char sweep_regex[] = "^" SIZE_RE "\\.\\." SIZE_RE "$";
static const char bw_min_regex[] =
	"^([0-9]+(\\.[0-9]{1,9})? ?(Kb|Mb|Gb|Tb|KB|MB|GB|TB)/s|(0?\\.[0-9]+|1(\\.0+)?) of rate)$";

static struct json_object *table_schema(const struct table *t, const char *stage);

/* o with v added under key, or NULL when either is missing or the add
 * fails: both are released then. */
static struct json_object *with(struct json_object *o, const char *key, struct json_object *v)
{
	int r = -ENOMEM;

	if (o && v)
		r = ln_json_add(o, key, v);	/* takes v, even when it fails */
	else
		json_object_put(v);
	if (r == 0)
		return o;
	json_object_put(o);
	return NULL;
}

static struct json_object *str_pattern(const char *re)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	if (ln_json_add_str(o, "type", "string") < 0 ||
	    (re && ln_json_add_str(o, "pattern", re) < 0)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* {"type": type (when given), "enum": [at(0), at(1), ... up to NULL]}. */
static struct json_object *names_enum(const char *type,
				      const char *(*at)(size_t i, const void *arg), const void *arg)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	const char *name;
	size_t i;

	if (!o || !a || (type && ln_json_add_str(o, "type", type) < 0))
		goto fail;
	for (i = 0; (name = at(i, arg)); i++)
		if (json_object_array_add(a, json_object_new_string(name)) < 0)
			goto fail;
	return with(o, "enum", a);
fail:
	json_object_put(a);
	json_object_put(o);
	return NULL;
}

/* A NULL-terminated list of names. */
static const char *list_at(size_t i, const void *names)
{
	return ((const char *const *)names)[i];
}

/* mca names: exactly those on an Open MPI version's allow-list
 * (common/mca_policy.c), which already leaves the denied ones out. */
static const char *mca_at(size_t i, const void *unused)
{
	(void)unused;
	return ln_mca_allowed(i, NULL);
}

/* nccl.env names: exactly the allow-list of common/nccl_env.c. */
static const char *nccl_env_at(size_t i, const void *unused)
{
	(void)unused;
	return ln_nccl_env_allowed(i);
}

/* anyOf of two schemas (both taken). */
static struct json_object *any_of(struct json_object *x, struct json_object *y)
{
	struct json_object *a = json_object_new_array();

	if (!a || !x || !y || json_object_array_add(a, x) < 0) {
		json_object_put(x);
		json_object_put(y);
		json_object_put(a);
		return NULL;
	}
	if (json_object_array_add(a, y) < 0) {
		json_object_put(y);
		json_object_put(a);
		return NULL;
	}
	return with(json_object_new_object(), "anyOf", a);
}

static struct json_object *int_range(long long min, long long max)
{
	struct json_object *o = json_object_new_object();

	if (!o || ln_json_add_str(o, "type", "integer") < 0 ||
	    ln_json_add_i64(o, "minimum", min) < 0 || ln_json_add_i64(o, "maximum", max) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *array_of(struct json_object *items)
{
	struct json_object *o = json_object_new_object();

	if (o && ln_json_add_str(o, "type", "array") < 0) {
		json_object_put(o);
		o = NULL;
	}
	return with(o, "items", items);
}

/* A mapping of NAME: value (mpi.mca, nccl.env): the names those of
 * name_at, each value a scalar matching value_regex. */
static struct json_object *settings_schema(const char *(*name_at)(size_t, const void *),
					   const char *value_regex)
{
	struct json_object *o = json_object_new_object(), *names, *vals, *types;

	names = names_enum("string", name_at, NULL);
	vals = json_object_new_object();
	types = json_object_new_array();
	if (!o || !names || !vals || !types)
		goto fail;
	json_object_array_add(types, json_object_new_string("string"));
	json_object_array_add(types, json_object_new_string("integer"));
	json_object_array_add(types, json_object_new_string("boolean"));
	if (ln_json_add(vals, "type", types) < 0 ||
	    ln_json_add_str(vals, "pattern", value_regex) < 0) {
		types = NULL;
		goto fail;
	}
	types = NULL;
	if (ln_json_add_str(o, "type", "object") < 0 ||
	    ln_json_add(o, "propertyNames", names) < 0) {
		names = NULL;
		goto fail;
	}
	names = NULL;
	if (ln_json_add(o, "additionalProperties", vals) < 0) {
		vals = NULL;
		goto fail;
	}
	return o;
fail:
	json_object_put(o);
	json_object_put(names);
	json_object_put(vals);
	json_object_put(types);
	return NULL;
}

static struct json_object *custom_schema(const struct field *f)
{
	const char *st = f->schema_type ? f->schema_type : "";

	if (!strcmp(st, "list")) {
		struct json_object *a = array_of(table_schema(f->sub, NULL));

		/* A required list must also hold something. */
		if (a && (f->flags & F_REQUIRED) && ln_json_add_i64(a, "minItems", 1) < 0) {
			json_object_put(a);
			a = NULL;
		}
		return a;
	}
	if (!strcmp(st, "hosts")) {
		struct json_object *any = json_object_new_object();

		if (any && ln_json_add_str(any, "const", "any") < 0) {
			json_object_put(any);
			any = NULL;
		}
		/* node names, or ranges of them */
		return any_of(any, array_of(any_of(str_pattern(spec_pattern_regex[SP_NODE]),
						   str_pattern("\\[[0-9]"))));
	}
	if (!strcmp(st, "gpu_list")) {
		/* NVML indexes and ranges "lo-hi", at least one */
		struct json_object *a = array_of(any_of(int_range(0, 1023),
						       str_pattern("^[0-9]{1,4}(-[0-9]{1,4})?$")));

		if (a && ln_json_add_i64(a, "minItems", 1) < 0) {
			json_object_put(a);
			a = NULL;
		}
		return a;
	}
	if (!strcmp(st, "node_counts")) {
		struct json_object *a = array_of(int_range(1, 4096));

		if (a && (ln_json_add_i64(a, "minItems", 2) < 0 ||
			  ln_json_add_i64(a, "maxItems", LN_NCCL_MAX_SCALING) < 0)) {
			json_object_put(a);
			a = NULL;
		}
		return a;
	}
	if (!strcmp(st, "mca"))
		return settings_schema(mca_at, spec_pattern_regex[SP_MCA_VALUE]);
	if (!strcmp(st, "nccl_env"))
		return settings_schema(nccl_env_at, spec_pattern_regex[SP_NCCL_VALUE]);
	if (!strcmp(st, "validation")) {
		struct json_object *one = json_object_new_array();
		struct json_object *items = json_object_new_object();
		size_t s;

		if (!one || !items)
			goto vfail;
		for (s = 0; s < LN_STAGE_COUNT; s++)
			if (json_object_array_add(one, table_schema(&spec_stage_tables[s],
								    spec_stage_names[s])) < 0)
				goto vfail;
		return array_of(with(items, "oneOf", one));
vfail:
		json_object_put(one);
		json_object_put(items);
		return NULL;
	}
	return json_object_new_object();
}

/* A scalar with a schema type of its own (typed_schema). */
static int typed(const struct field *f)
{
	static const char *const types[] = { "bw_min", "fraction", "nccl_bytes", "mpps" };
	size_t k;

	for (k = 0; f->schema_type && k < ARRAY_SIZE(types); k++)
		if (!strcmp(f->schema_type, types[k]))
			return 1;
	return 0;
}

static struct json_object *typed_schema(const struct field *f)
{
	if (!strcmp(f->schema_type, "bw_min"))
		return str_pattern(bw_min_regex);
	if (!strcmp(f->schema_type, "mpps"))	/* a decimal above zero: 1.5 */
		return any_of(json_object_new_object(), str_pattern("^([0-9]*\\.?[0-9]+)$"));
	if (!strcmp(f->schema_type, "fraction"))	/* 0.9, or 90% */
		return any_of(json_object_new_object(), str_pattern("^([0-9]*\\.?[0-9]+%?)$"));
	/* nccl_bytes: a size, or a sweep A..B */
	return any_of(any_of(int_range(f->min, f->max), str_pattern(spec_size_regex)),
		      str_pattern(sweep_regex));
}

static struct json_object *field_schema(const struct field *f, const char *stage)
{
	struct json_object *o = NULL;
	struct ln_buf d = LN_BUF_INIT;

	if (stage && !strcmp(f->key, "stage")) {
		o = json_object_new_object();
		if (o && ln_json_add_str(o, "const", stage) < 0) {
			json_object_put(o);
			o = NULL;
		}
	} else if (f->type == FT_MAP) {
		/* before fn: a mapping's handler may walk its table itself */
		o = table_schema(f->sub, NULL);
	} else if (f->fn) {
		o = custom_schema(f);
	} else if (!strcmp(f->key, "version")) {
		o = json_object_new_object();
		if (o && ln_json_add_i64(o, "const", 1) < 0) {
			json_object_put(o);
			o = NULL;
		}
	} else if (!strcmp(f->key, "mtu")) {
		static const char *const mtus[] = { "256", "512", "1024", "2048", "4096" };
		struct json_object *a = json_object_new_array();
		size_t i;

		o = json_object_new_object();
		for (i = 0; a && i < 5; i++)
			json_object_array_add(a, json_object_new_int(atoi(mtus[i])));
		if (o && ln_json_add(o, "enum", a) < 0) {
			json_object_put(o);
			o = NULL;
		}
	} else if (typed(f)) {
		o = typed_schema(f);
	} else if (f->pat == SP_FS) {
		o = names_enum(NULL, list_at, spec_fs_names);
	} else {
		switch (f->type) {
		case FT_STR:
			o = str_pattern(spec_pattern_regex[f->pat]);
			if (o && f->pat == SP_NQN && ln_json_add_i64(o, "maxLength", LN_NQN_MAX) < 0) {
				json_object_put(o);
				o = NULL;
			}
			/* A range entry: the strict pattern, or a bracket range. */
			if (f->flags & F_RANGE)
				o = any_of(o, str_pattern("\\[[0-9]"));
			break;
		case FT_UINT:
		case FT_U16:
		case FT_INT:
			o = int_range(f->min, f->max);
			break;
		case FT_BOOL:
			o = json_object_new_object();
			if (o && ln_json_add_str(o, "type", "boolean") < 0) {
				json_object_put(o);
				o = NULL;
			}
			break;
		case FT_SIZE:
			o = any_of(int_range(f->min, f->max ? f->max : INT64_MAX),
				   str_pattern(spec_size_regex));
			break;
		case FT_RATE:
			o = str_pattern(spec_rate_regex);
			break;
		case FT_DURATION:
			o = str_pattern(spec_duration_regex);
			break;
		case FT_ENUM:
			o = names_enum(NULL, list_at, f->names);
			break;
		case FT_MAP:
		case FT_CUSTOM:
			break;
		}
	}
	if (!o)
		return NULL;
	if (f->doc) {
		ln_buf_addstr(&d, f->doc);
		if (f->def)
			ln_buf_addf(&d, ". Default: %s", f->def);
		if (ln_json_add_str(o, "description", d.buf) < 0) {
			json_object_put(o);
			o = NULL;
		}
	}
	ln_buf_release(&d);
	return o;
}

/* Cross-key rules, written as JSON text: they are fixed, and JSON reads
 * more plainly than a tree of builder calls. One so far: "namespace". */
static int add_rule(struct json_object *o, const char *rule)
{
	static const char namespace_rule[] =
		"{\"oneOf\": [{\"required\": [\"file\", \"size\"], \"not\": {\"required\": [\"device\"]}},"
		" {\"required\": [\"device\"], \"not\": {\"anyOf\": [{\"required\": [\"file\"]},"
		" {\"required\": [\"size\"]}]}}]}";
	struct json_object *r;

	if (strcmp(rule, "namespace"))
		return -EINVAL;
	r = json_tokener_parse(namespace_rule);
	if (!r)
		return -ENOMEM;
	json_object_object_foreach(r, key, val)
	{
		if (ln_json_add(o, key, json_object_get(val)) < 0) {
			json_object_put(r);
			return -ENOMEM;
		}
	}
	json_object_put(r);
	return 0;
}

static struct json_object *table_schema(const struct table *t, const char *stage)
{
	struct json_object *o = json_object_new_object(), *props = json_object_new_object();
	struct json_object *req = json_object_new_array();
	size_t i;

	if (!o || !props || !req)
		goto fail;
	if (ln_json_add_str(o, "type", "object") < 0 ||
	    (t->doc && ln_json_add_str(o, "description", t->doc) < 0))
		goto fail;
	for (i = 0; i < t->n_fields; i++) {
		const struct field *f = &t->fields[i];

		if (!spec_find_field(t, f->key))
			continue;	/* still refused by name: not in the language yet */
		if (ln_json_add(props, f->key, field_schema(f, stage)) < 0 ||
		    !json_object_object_get(props, f->key))
			goto fail;
		if ((f->flags & F_REQUIRED) &&
		    json_object_array_add(req, json_object_new_string(f->key)) < 0)
			goto fail;
	}
	if (ln_json_add(o, "properties", props) < 0) {
		props = NULL;
		goto fail;
	}
	props = NULL;
	if (json_object_array_length(req)) {
		if (ln_json_add(o, "required", req) < 0) {
			req = NULL;
			goto fail;
		}
	} else {
		json_object_put(req);
	}
	req = NULL;
	if (ln_json_add_bool(o, "additionalProperties", 0) < 0)
		goto fail;
	if (t->schema_rule && add_rule(o, t->schema_rule) < 0)
		goto fail;
	return o;
fail:
	json_object_put(req);
	json_object_put(props);
	json_object_put(o);
	return NULL;
}

int ln_spec_schema(struct json_object **out)
{
	struct json_object *o;

	*out = NULL;
	o = table_schema(&spec_top_table, NULL);
	if (!o)
		return -ENOMEM;
	if (ln_json_add_str(o, "$schema", "http://json-schema.org/draft-07/schema#") < 0 ||
	    ln_json_add_str(o, "title", "llmnet cluster spec, version 1") < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	*out = o;
	return 0;
}
