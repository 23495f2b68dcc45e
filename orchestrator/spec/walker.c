/* SPDX-License-Identifier: MIT */
/*
 * The walker: one pass over libyaml's event stream, driven by the key
 * tables of grammar.c. It never builds a document tree (that costs several
 * times the event parse on a large spec); each mapping is matched against
 * its table as the events arrive, scalars are converted and checked in
 * place, and every problem is recorded with its line and column so one
 * run reports them all. Sequences and special scalars go to the handlers
 * the tables name (nodes.c, storage.c, ...).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/spec/parser.h"
#include "orchestrator/spec/units.h"

/* ---- events ----------------------------------------------------------- */

static struct ln_mark to_mark(yaml_mark_t m)
{
	struct ln_mark r = { (uint32_t)m.line + 1, (uint32_t)m.column + 1 };

	return r;
}

struct ln_mark spec_ev_mark(const struct parser *p)
{
	return to_mark(p->ev.start_mark);
}

/* The line and column of byte off, for libyaml's reader, which knows only
 * the offset: counted again from the start (the spec in memory, or the
 * file read anew; a pipe cannot be, and stays at 1:1). */
static struct ln_mark offset_mark(const struct parser *p, size_t off)
{
	struct ln_mark m = { 1, 1 };
	size_t i;
	int c;

	if (p->data) {
		for (i = 0; i < off && i < p->data_len; i++, m.col++)
			if (p->data[i] == '\n') {
				m.line++;
				m.col = 0;
			}
		return m;
	}
	if (!p->in || fseek(p->in, 0, SEEK_SET) < 0)
		return m;
	for (i = 0; i < off && (c = getc(p->in)) != EOF; i++, m.col++)
		if (c == '\n') {
			m.line++;
			m.col = 0;
		}
	return m;
}

static void report_yaml_error(struct parser *p)
{
	const yaml_parser_t *y = &p->yp;
	struct ln_mark m = to_mark(y->problem_mark);

	if (p->too_big)
		spec_diag(p->spec, to_mark(y->mark),
			  "the spec is larger than %u MiB, the most a spec may be (use ranges): "
			  "reading stops here", SPEC_MAX_BYTES >> 20);
	else if (y->error == YAML_MEMORY_ERROR)
		spec_diag(p->spec, m, "out of memory while reading the spec");
	else if (y->error == YAML_READER_ERROR)
		/* The reader knows the byte offset only: the line is counted. */
		spec_diag(p->spec, offset_mark(p, y->problem_offset),
			  "cannot read the spec: %s at byte %zu",
			  y->problem ? y->problem : "read error", y->problem_offset);
	else if (y->context)
		spec_diag(p->spec, m, "yaml syntax error: %s %s (line %u)",
			  y->problem ? y->problem : "error", y->context,
			  (unsigned)y->context_mark.line + 1);
	else
		spec_diag(p->spec, m, "yaml syntax error: %s",
			  y->problem ? y->problem : "unreadable input");
}

/* Tags are refused: a key's type is its table's ('gpus: !!str 3' would
 * read as the integer 3 while saying a string). Values are read by YAML
 * 1.2's rules ('010' is ten), so a %YAML directive for another version,
 * which reads some values otherwise, is refused, and %TAG with tags. */
static void check_tag_and_version(struct parser *p)
{
	const yaml_event_t *e = &p->ev;
	const yaml_char_t *tag = NULL;

	if (e->type == YAML_SCALAR_EVENT)
		tag = e->data.scalar.tag;
	else if (e->type == YAML_MAPPING_START_EVENT)
		tag = e->data.mapping_start.tag;
	else if (e->type == YAML_SEQUENCE_START_EVENT)
		tag = e->data.sequence_start.tag;
	if (tag)
		spec_diag(p->spec, spec_ev_mark(p),
			  "tags ('%.60s') are not supported: a key's type is given by the key",
			  (const char *)tag);
	if (e->type != YAML_DOCUMENT_START_EVENT)
		return;
	if (e->data.document_start.version_directive &&
	    (e->data.document_start.version_directive->major != 1 ||
	     e->data.document_start.version_directive->minor != 2))
		spec_diag(p->spec, spec_ev_mark(p),
			  "'%%YAML %d.%d' is not supported: llmnet reads YAML 1.2 (leave the "
			  "directive out)", e->data.document_start.version_directive->major,
			  e->data.document_start.version_directive->minor);
	if (e->data.document_start.tag_directives.start !=
	    e->data.document_start.tag_directives.end)
		spec_diag(p->spec, spec_ev_mark(p), "'%%TAG' directives are not supported");
}

int spec_next(struct parser *p)
{
	if (p->have) {
		yaml_event_delete(&p->ev);
		p->have = 0;
	}
	if (p->dead)
		return -1;
	if (!yaml_parser_parse(&p->yp, &p->ev)) {
		report_yaml_error(p);
		p->dead = 1;
		return -1;
	}
	p->have = 1;
	check_tag_and_version(p);
	if (p->ev.type == YAML_MAPPING_START_EVENT || p->ev.type == YAML_SEQUENCE_START_EVENT) {
		/* No spec nests this deep; libyaml slows down on each level of
		 * a flow collection, so a deep one stops the reading at once. */
		if (++p->depth > SPEC_MAX_DEPTH) {
			spec_diag(p->spec, spec_ev_mark(p),
				  "the spec nests mappings and sequences deeper than %d levels: "
				  "reading stops here", SPEC_MAX_DEPTH);
			p->dead = 1;
			return -1;
		}
	} else if (p->ev.type == YAML_MAPPING_END_EVENT || p->ev.type == YAML_SEQUENCE_END_EVENT) {
		p->depth--;
	}
	if (p->ev.type == YAML_ALIAS_EVENT)
		spec_diag(p->spec, spec_ev_mark(p),
			  "aliases ('*%.60s') are not supported: write the value out",
			  (const char *)p->ev.data.alias.anchor);
	return 0;
}

const char *spec_kind(const struct parser *p)
{
	switch (p->ev.type) {
	case YAML_MAPPING_START_EVENT:
		return "a mapping";
	case YAML_SEQUENCE_START_EVENT:
		return "a sequence";
	case YAML_ALIAS_EVENT:
		return "an alias";
	default:
		return "a single value";
	}
}

int spec_skip_node(struct parser *p)
{
	int depth;

	if (p->ev.type != YAML_MAPPING_START_EVENT && p->ev.type != YAML_SEQUENCE_START_EVENT)
		return 0;
	depth = 1;
	while (depth) {
		if (spec_next(p) < 0)
			return -1;
		if (p->ev.type == YAML_MAPPING_START_EVENT ||
		    p->ev.type == YAML_SEQUENCE_START_EVENT)
			depth++;
		else if (p->ev.type == YAML_MAPPING_END_EVENT ||
			 p->ev.type == YAML_SEQUENCE_END_EVENT)
			depth--;
	}
	return 0;
}

int spec_skip_value(struct parser *p)
{
	if (spec_next(p) < 0 || spec_skip_node(p) < 0)
		return -1;
	return 0;
}

int spec_skip_pair(struct parser *p)
{
	if (spec_skip_node(p) < 0 || spec_skip_value(p) < 0)
		return -1;
	return 0;
}

int spec_is_null(const char *v, size_t len, int plain)
{
	return plain && (!len || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
			 !strcmp(v, "NULL"));
}

/* ---- did you mean ----------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t prev = row[0], cur;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j] > cur + 1)
				row[j] = cur + 1;
			if (row[j] > row[j - 1] + 1)
				row[j] = row[j - 1] + 1;
			prev = cur;
		}
	}
	return row[lb];
}

const char *spec_closest(const char *word, const char *const *names, size_t n, size_t stride)
{
	const char *best = NULL;
	size_t bestd = 99, i, limit = strlen(word) / 3 + 1;

	if (limit > 3)
		limit = 3;
	for (i = 0; i < n; i++) {
		const char *cand = *(const char *const *)((const char *)names + i * stride);
		size_t d = edit_distance(word, cand);

		if (d < bestd) {
			bestd = d;
			best = cand;
		}
	}
	return bestd <= limit ? best : NULL;
}

void spec_did_you_mean(struct ln_buf *b, const char *word, const char *const *names, size_t n,
		       size_t stride)
{
	const char *c = spec_closest(word, names, n, stride);

	if (c)
		ln_buf_addf(b, " (did you mean '%s'?)", c);
}

/* ---- scalars ---------------------------------------------------------- */

void spec_enum_list(struct ln_buf *b, const char *const *names)
{
	size_t i;

	for (i = 0; names[i]; i++)
		ln_buf_addf(b, "%s%s", i ? (names[i + 1] ? ", " : " or ") : "", names[i]);
}

int spec_parse_int(const char *v, long long *out)
{
	long long n = 0;
	int neg = 0, d = 0;

	if (*v == '-') {
		neg = 1;
		v++;
	}
	for (; *v; v++, d++) {
		if (*v < '0' || *v > '9' || d >= 12)
			return -1;
		n = n * 10 + (*v - '0');
	}
	if (!d)
		return -1;
	*out = neg ? -n : n;
	return 0;
}

/* 0 if v can be a value at all; else the problem is reported. */
static int check_bytes(struct parser *p, const struct field *f, const char *v, size_t len,
		       int plain, struct ln_mark m)
{
	size_t i;

	if (strlen(v) != len) {
		spec_diag(p->spec, m, "'%s' holds a NUL byte", f->key);
		return -1;
	}
	for (i = 0; i < len; i++) {
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) {
			spec_diag(p->spec, m, "'%s' holds a control character (byte 0x%02x)", f->key,
				  (unsigned char)v[i]);
			return -1;
		}
	}
	if (spec_is_null(v, len, plain) && !((f->flags & F_NULL_NAME) && !strcmp(v, "null"))) {
		spec_diag(p->spec, m, "'%s' has no value", f->key);
		return -1;
	}
	return 0;
}

static int set_str(struct parser *p, const struct field *f, void *obj, const char *v, size_t len,
		   struct ln_mark m)
{
	char *s = spec_arena_strndup(&p->st->arena, v, len);

	if (!s)
		return -ENOMEM;
	*(const char **)spec_at(obj, f->off) = s;
	/* A range is checked value by value when its entry expands. */
	if ((f->flags & F_RANGE) && memchr(v, '[', len))
		return 0;
	if (spec_pattern_check(f->pat, f->key, s, &p->why) < 0)
		spec_diag(p->spec, m, "%s", p->why.buf);
	return 0;
}

static void set_number(struct parser *p, const struct field *f, void *obj, const char *v,
		       int plain, struct ln_mark m)
{
	long long n;

	if (!plain) {
		spec_diag(p->spec, m, "'%s' takes a number, not the string '%.100s'", f->key, v);
		return;
	}
	if (spec_parse_int(v, &n) < 0 || n < f->min || n > f->max) {
		spec_diag(p->spec, m, "'%s' takes %s from %lld to %lld, not '%.100s'", f->key,
			  f->type == FT_U16 ? "a port number" : "an integer", f->min, f->max, v);
		return;
	}
	if (f->type == FT_U16)
		*(uint16_t *)spec_at(obj, f->off) = (uint16_t)n;
	else if (f->type == FT_UINT)
		*(unsigned *)spec_at(obj, f->off) = (unsigned)n;
	else
		*(int *)spec_at(obj, f->off) = (int)n;
}

static void set_bool(struct parser *p, const struct field *f, void *obj, const char *v, int plain,
		     struct ln_mark m)
{
	if (plain && !strcmp(v, "true"))
		*(int *)spec_at(obj, f->off) = 1;
	else if (plain && !strcmp(v, "false"))
		*(int *)spec_at(obj, f->off) = 0;
	else
		spec_diag(p->spec, m, "'%s' takes true or false, not '%.100s'", f->key, v);
}

/* A size, rate or duration, in the unit of its field. */
static void format_quantity(const struct field *f, uint64_t u, char *out)
{
	enum ftype type = f->type;

	if (type == FT_DURATION && (f->flags & F_US))
		ln_units_format_duration_us(u, out);
	else if (type == FT_DURATION)
		ln_units_format_duration(u, out);
	else if (type == FT_SIZE)
		ln_units_format_size(u, out);
	else
		ln_units_format_rate(u, out);
}

static void set_quantity(struct parser *p, const struct field *f, void *obj, const char *v,
			 struct ln_mark m)
{
	struct ln_buf *why = &p->why;
	const struct refused_key *k;
	uint64_t u;
	int r;

	/* a form of value not supported yet: the refused key is in it */
	for (k = f->later; k && k->key; k++)
		if (strstr(v, k->key)) {
			spec_diag(p->spec, m, "'%s: %s' is not supported yet: %s", f->key, v, k->why);
			return;
		}
	r = f->type == FT_SIZE ? ln_units_parse_size(v, &u, why) :
	    f->type == FT_RATE ? ln_units_parse_rate(v, &u, why) :
	    (f->flags & F_US)  ? ln_units_parse_duration_us(v, &u, why) :
				 ln_units_parse_duration(v, &u, why);
	if (r < 0) {
		spec_diag(p->spec, m, "'%s': %s", f->key, why->buf);
		return;
	}
	if ((long long)u < f->min || (f->max && u > (uint64_t)f->max)) {
		char a[32], b[32];

		format_quantity(f, (uint64_t)f->min, a);
		format_quantity(f, (uint64_t)f->max, b);
		if (f->max)
			spec_diag(p->spec, m, "'%s' must be from %s to %s, not '%.100s'", f->key, a,
				  b, v);
		else	/* no maximum */
			spec_diag(p->spec, m, "'%s' must be at least %s, not '%.100s'", f->key, a, v);
		return;
	}
	if ((f->flags & F_WHOLE_SECONDS) && u % 1000) {
		spec_diag(p->spec, m, "'%s' must be whole seconds, not '%.100s'", f->key, v);
		return;
	}
	*(uint64_t *)spec_at(obj, f->off) = u;
}

static void set_enum(struct parser *p, const struct field *f, void *obj, const char *v,
		     struct ln_mark m)
{
	struct ln_buf *why = &p->why;
	const struct refused_key *k;
	size_t i;

	for (i = 0; f->names[i]; i++) {
		if (!strcmp(f->names[i], v)) {
			*(int *)spec_at(obj, f->off) = (int)i;
			return;
		}
	}
	for (k = f->later; k && k->key; k++) {
		if (!strcmp(k->key, v)) {
			spec_diag(p->spec, m, "'%s: %s' is not supported yet: %s", f->key, v, k->why);
			return;
		}
	}
	ln_buf_addf(why, "'%s' takes ", f->key);
	spec_enum_list(why, f->names);
	ln_buf_addf(why, ", not '%.100s'", v);
	spec_did_you_mean(why, v, f->names, i, sizeof(f->names[0]));
	spec_diag(p->spec, m, "%s", why->buf);
}

int spec_set_scalar(struct parser *p, const struct field *f, void *obj, const char *v, size_t len,
		    int plain, struct ln_mark m)
{
	ln_buf_reset(&p->why);
	if (check_bytes(p, f, v, len, plain, m) < 0)
		return 0;
	if (f->sfn)
		return f->sfn(p, f, obj, v, m);
	switch (f->type) {
	case FT_STR:
		return set_str(p, f, obj, v, len, m);
	case FT_UINT:
	case FT_U16:
	case FT_INT:
		set_number(p, f, obj, v, plain, m);
		return 0;
	case FT_BOOL:
		set_bool(p, f, obj, v, plain, m);
		return 0;
	case FT_SIZE:
	case FT_RATE:
	case FT_DURATION:
		set_quantity(p, f, obj, v, m);
		return 0;
	case FT_ENUM:
		set_enum(p, f, obj, v, m);
		return 0;
	case FT_MAP:
	case FT_CUSTOM:
		break;
	}
	return 0;
}

/* ---- mappings and sequences ------------------------------------------- */

/* The current event is the first of a value for field f. */
static int set_value(struct parser *p, const struct field *f, void *obj)
{
	const yaml_event_t *e = &p->ev;

	if (e->type == YAML_ALIAS_EVENT)
		return 0;	/* reported by spec_next() */
	if (f->fn)
		return f->fn(p, f, obj);
	if (f->type == FT_MAP)
		return spec_walk_map(p, f->sub, spec_at(obj, f->off), NULL, f->key);
	if (e->type != YAML_SCALAR_EVENT) {
		spec_diag(p->spec, spec_ev_mark(p), "'%s' takes a single value, not %s", f->key,
			  spec_kind(p));
		return spec_skip_node(p);
	}
	return spec_set_scalar(p, f, obj, (const char *)e->data.scalar.value,
			       e->data.scalar.length, e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE,
			       spec_ev_mark(p));
}

/* A key both in the table and refused is refused: a field is built ahead
 * of the commit that lets the spec use it, and until then it stays out. */
const struct field *spec_find_field(const struct table *t, const char *key)
{
	const struct refused_key *rk;
	size_t i;

	for (rk = t->refused; rk && rk->key; rk++)
		if (!strcmp(rk->key, key))
			return NULL;
	for (i = 0; i < t->n_fields; i++)
		if (!strcmp(t->fields[i].key, key))
			return &t->fields[i];
	return NULL;
}

static void unknown_key(struct parser *p, const struct table *t, const char *k, struct ln_mark m)
{
	const struct refused_key *rk;

	for (rk = t->refused; rk && rk->key; rk++)
		if (!strcmp(rk->key, k)) {
			spec_diag(p->spec, m, "'%s' in %s is not supported yet: %s", k, t->what,
				  rk->why);
			return;
		}
	ln_buf_reset(&p->why);
	ln_buf_addf(&p->why, "unknown key '%.100s' in %s", k, t->what);
	spec_did_you_mean(&p->why, k, &t->fields[0].key, t->n_fields, sizeof(t->fields[0]));
	spec_diag(p->spec, m, "%s", p->why.buf);
}

/* Anything but a mapping where t wants one: reported and skipped. */
static int not_a_mapping(struct parser *p, const char *key)
{
	const yaml_event_t *e = &p->ev;
	struct ln_mark start = spec_ev_mark(p);

	if (e->type == YAML_SCALAR_EVENT &&
	    spec_is_null((const char *)e->data.scalar.value, e->data.scalar.length,
			 e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE))
		spec_diag(p->spec, start, "'%s' is empty: it takes a mapping", key);
	else
		spec_diag(p->spec, start, "'%s' takes a mapping, not %s", key, spec_kind(p));
	p->seen = 0;
	return spec_skip_node(p);
}

int spec_walk_map(struct parser *p, const struct table *t, void *obj, struct ln_mark *vmarks,
		  const char *key)
{
	uint32_t first_line[MAX_FIELDS] = { 0 };
	struct ln_mark start = spec_ev_mark(p);
	uint64_t seen = 0;
	size_t i;
	int r;

	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return not_a_mapping(p, key);
	if (t->mark_off)
		*(struct ln_mark *)spec_at(obj, t->mark_off - 1) = start;
	if (t->present_off)
		*(int *)spec_at(obj, t->present_off - 1) = 1;
	for (;;) {
		const struct field *f;
		struct ln_mark km;

		if (spec_next(p) < 0)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		km = spec_ev_mark(p);
		if (p->ev.type != YAML_SCALAR_EVENT) {
			if (p->ev.type != YAML_ALIAS_EVENT)
				spec_diag(p->spec, km, "a key in %s must be a name, not %s",
					  t->what, spec_kind(p));
			if (spec_skip_pair(p) < 0)
				return -1;
			continue;
		}
		f = spec_find_field(t, (const char *)p->ev.data.scalar.value);
		if (!f) {
			unknown_key(p, t, (const char *)p->ev.data.scalar.value, km);
			if (spec_skip_value(p) < 0)
				return -1;
			continue;
		}
		i = (size_t)(f - t->fields);
		if (seen & (1ull << i)) {
			spec_diag(p->spec, km, "duplicate key '%s' in %s (first on line %u)", f->key,
				  t->what, first_line[i]);
			if (spec_skip_value(p) < 0)
				return -1;
			continue;
		}
		seen |= 1ull << i;
		first_line[i] = km.line;
		if (spec_next(p) < 0)
			return -1;
		if (vmarks)
			vmarks[i] = spec_ev_mark(p);
		r = set_value(p, f, obj);
		if (r < 0)
			return r;
	}
	for (i = 0; i < t->n_fields; i++)
		if ((t->fields[i].flags & F_REQUIRED) && !(seen & (1ull << i)))
			spec_diag(p->spec, start, "missing required key '%s' in %s",
				  t->fields[i].key, t->what);
	p->seen = seen;
	return 0;
}

int spec_walk_entry(struct parser *p, const struct field *f, void *obj, struct ln_mark *vmarks,
		    const char *key, int (*finish)(struct parser *p))
{
	int r = spec_walk_map(p, f->sub, obj, vmarks, key);

	return r < 0 ? r : finish(p);
}

int spec_walk_seq(struct parser *p, const struct field *f,
		  int (*item)(struct parser *p, const struct field *f), const char *if_empty)
{
	struct ln_mark m = spec_ev_mark(p);
	size_t n = 0;
	int r;

	if (p->ev.type != YAML_SEQUENCE_START_EVENT) {
		spec_diag(p->spec, m, "'%s' takes a sequence (a list), not %s", f->key, spec_kind(p));
		return spec_skip_node(p);
	}
	for (;;) {
		if (spec_next(p) < 0)
			return -1;
		if (p->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		n++;
		if (p->ev.type == YAML_ALIAS_EVENT)
			continue;
		r = item(p, f);
		if (r < 0)
			return r;
	}
	if (!n && if_empty)
		spec_diag(p->spec, m, "'%s' is empty: %s", f->key, if_empty);
	return 0;
}

void *spec_grow(void **arr, size_t *alloc, size_t n, size_t elem)
{
	if (n == *alloc) {
		size_t na = *alloc ? *alloc * 2 : 8;
		void *a = realloc(*arr, na * elem);

		if (!a)
			return NULL;
		*arr = a;
		*alloc = na;
	}
	memset((char *)*arr + n * elem, 0, elem);
	return (char *)*arr + n * elem;
}

int spec_grow_entry(void **arr, size_t *alloc, size_t elem, const void *tmpl, void **raw_arr,
		    size_t *raw_alloc, size_t raw_elem, size_t n, void **obj, void **raw)
{
	*obj = spec_grow(arr, alloc, n, elem);
	*raw = spec_grow(raw_arr, raw_alloc, n, raw_elem);
	if (!*obj || !*raw)
		return -ENOMEM;
	memcpy(*obj, tmpl, elem);
	return 0;
}

int spec_append(void **arr, size_t *n, size_t *alloc, const void *src, size_t elem)
{
	void *e = spec_grow(arr, alloc, *n, elem);

	if (!e)
		return -ENOMEM;
	memcpy(e, src, elem);
	(*n)++;
	return 0;
}
