/* SPDX-License-Identifier: MIT */
/*
 * The spec parser: one walker over libyaml's event stream, driven by the
 * key tables below. It never builds a document tree (that costs several
 * times the event parse on a large spec); each mapping is matched against
 * its table as the events arrive, scalars are converted and checked in
 * place, and every problem is recorded with its line and column so one
 * run reports them all. Node, target and initiator entries may be ranges
 * ("gpu[001-128]"); an entry is collected whole, then expanded in step
 * with its lead field. References between sections, duplicates and the
 * semantic rules are the second pass, in spec_check.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "common/error.h"
#include "common/fileio.h"
#include "orchestrator/spec/hostlist.h"
#include "orchestrator/spec/impl.h"
#include "orchestrator/spec/units.h"

/* ---- entries collected before expansion ------------------------------- */

#define MAX_FIELDS 16

struct rdma_entry {
	struct ln_rdma_port r;
	struct ln_mark m[MAX_FIELDS];
};

struct node_entry {
	struct ln_node n;
	struct ln_mark m[MAX_FIELDS];
	struct rdma_entry *rdma;
	size_t n_rdma, alloc_rdma;
};

struct ns_entry {
	struct ln_namespace ns;
	struct ln_mark m[MAX_FIELDS];
};

struct target_entry {
	struct ln_target t;
	const char *node;
	struct ln_mark m[MAX_FIELDS];
	struct ns_entry *ns;
	size_t n_ns, alloc_ns;
	struct host_raw *hosts;
	size_t n_hosts, alloc_hosts;
};

struct init_entry {
	struct ln_initiator i;
	const char *node, *target;
	struct ln_mark m[MAX_FIELDS];
};

struct parser {
	yaml_parser_t yp;
	yaml_event_t ev;
	int have;		/* ev must be deleted */
	int dead;		/* libyaml failed: stop at once */
	struct ln_spec *spec;
	struct ln_spec_store *st;
	struct ln_buf why;
	struct node_entry ne;	/* reused for every node entry */
	struct target_entry te;
	struct init_entry ie;
	uint64_t seen;		/* keys seen by the last walk_map() */
	const char *last_device[16];	/* see share_device() */
	int stage_seen[LN_STAGE_COUNT];
	struct ln_mark stage_mark[LN_STAGE_COUNT];
};

/* ---- events ----------------------------------------------------------- */

static struct ln_mark to_mark(yaml_mark_t m)
{
	struct ln_mark r = { (uint32_t)m.line + 1, (uint32_t)m.column + 1 };

	return r;
}

static struct ln_mark ev_mark(const struct parser *p)
{
	return to_mark(p->ev.start_mark);
}

static int next(struct parser *p)
{
	if (p->have) {
		yaml_event_delete(&p->ev);
		p->have = 0;
	}
	if (p->dead)
		return -1;
	if (!yaml_parser_parse(&p->yp, &p->ev)) {
		const yaml_parser_t *y = &p->yp;
		struct ln_mark m = to_mark(y->problem_mark);

		if (y->error == YAML_MEMORY_ERROR)
			spec_diag(p->spec, m, "out of memory while reading the spec");
		else if (y->error == YAML_READER_ERROR)
			/* The reader knows the byte offset, not the line. */
			spec_diag(p->spec, m, "cannot read the spec: %s at byte %zu",
				  y->problem ? y->problem : "read error", y->problem_offset);
		else if (y->context)
			spec_diag(p->spec, m, "yaml syntax error: %s %s (line %u)",
				  y->problem ? y->problem : "error", y->context,
				  (unsigned)y->context_mark.line + 1);
		else
			spec_diag(p->spec, m, "yaml syntax error: %s",
				  y->problem ? y->problem : "unreadable input");
		p->dead = 1;
		return -1;
	}
	p->have = 1;
	if (p->ev.type == YAML_ALIAS_EVENT)
		spec_diag(p->spec, ev_mark(p),
			  "aliases ('*%.60s') are not supported: write the value out",
			  (const char *)p->ev.data.alias.anchor);
	return 0;
}

static const char *kind(const struct parser *p)
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

/* Consume the node whose first event is current. */
static int skip_node(struct parser *p)
{
	int depth;

	if (p->ev.type != YAML_MAPPING_START_EVENT && p->ev.type != YAML_SEQUENCE_START_EVENT)
		return 0;
	depth = 1;
	while (depth) {
		if (next(p) < 0)
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

static int is_null(const char *v, size_t len, int plain)
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

/* The closest of names (stride apart in memory) within a small distance. */
static const char *closest(const char *word, const char *const *names, size_t n, size_t stride)
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

static void did_you_mean(struct ln_buf *b, const char *word, const char *const *names, size_t n,
			 size_t stride)
{
	const char *c = closest(word, names, n, stride);

	if (c)
		ln_buf_addf(b, " (did you mean '%s'?)", c);
}

/* ---- scalars ---------------------------------------------------------- */

static void *at(void *obj, size_t off)
{
	return (char *)obj + off;
}

static void enum_list(struct ln_buf *b, const char *const *names)
{
	size_t i;

	for (i = 0; names[i]; i++)
		ln_buf_addf(b, "%s%s", i ? (names[i + 1] ? ", " : " or ") : "", names[i]);
}

static int parse_int(const char *v, long long *out)
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

static int set_scalar(struct parser *p, const struct field *f, void *obj, const char *v, size_t len,
		      int plain, struct ln_mark m)
{
	struct ln_spec *spec = p->spec;
	struct ln_buf *why = &p->why;
	long long n;
	uint64_t u;
	size_t i;

	ln_buf_reset(why);
	if (strlen(v) != len) {
		spec_diag(spec, m, "'%s' holds a NUL byte", f->key);
		return 0;
	}
	for (i = 0; i < len; i++) {
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) {
			spec_diag(spec, m, "'%s' holds a control character (byte 0x%02x)", f->key,
				  (unsigned char)v[i]);
			return 0;
		}
	}
	if (is_null(v, len, plain)) {
		spec_diag(spec, m, "'%s' has no value", f->key);
		return 0;
	}
	if (f->sfn)
		return f->sfn(p, f, obj, v, m);
	switch (f->type) {
	case FT_STR: {
		char *s = spec_arena_strndup(&p->st->arena, v, len);

		if (!s)
			return -ENOMEM;
		*(const char **)at(obj, f->off) = s;
		/* A range is checked value by value when its entry expands. */
		if ((f->flags & F_RANGE) && memchr(v, '[', len))
			return 0;
		if (spec_pattern_check(f->pat, f->key, s, why) < 0)
			spec_diag(spec, m, "%s", why->buf);
		return 0;
	}
	case FT_UINT:
	case FT_U16:
	case FT_INT:
		if (!plain) {
			spec_diag(spec, m, "'%s' takes a number, not the string '%.100s'", f->key, v);
			return 0;
		}
		if (parse_int(v, &n) < 0 || n < f->min || n > f->max) {
			spec_diag(spec, m, "'%s' takes %s from %lld to %lld, not '%.100s'", f->key,
				  f->type == FT_U16 ? "a port number" : "an integer", f->min,
				  f->max, v);
			return 0;
		}
		if (f->type == FT_U16)
			*(uint16_t *)at(obj, f->off) = (uint16_t)n;
		else if (f->type == FT_UINT)
			*(unsigned *)at(obj, f->off) = (unsigned)n;
		else
			*(int *)at(obj, f->off) = (int)n;
		return 0;
	case FT_BOOL:
		if (plain && !strcmp(v, "true"))
			*(int *)at(obj, f->off) = 1;
		else if (plain && !strcmp(v, "false"))
			*(int *)at(obj, f->off) = 0;
		else
			spec_diag(spec, m, "'%s' takes true or false, not '%.100s'", f->key, v);
		return 0;
	case FT_SIZE:
	case FT_RATE:
	case FT_DURATION: {
		int r = f->type == FT_SIZE   ? ln_units_parse_size(v, &u, why) :
			f->type == FT_RATE   ? ln_units_parse_rate(v, &u, why) :
					       ln_units_parse_duration(v, &u, why);

		if (r < 0) {
			spec_diag(spec, m, "'%s': %s", f->key, why->buf);
			return 0;
		}
		if ((long long)u < f->min || (f->max && u > (uint64_t)f->max)) {
			char a[32], b[32];

			if (f->type == FT_DURATION) {
				ln_units_format_duration((uint64_t)f->min, a);
				ln_units_format_duration((uint64_t)f->max, b);
			} else if (f->type == FT_SIZE) {
				ln_units_format_size((uint64_t)f->min, a);
				ln_units_format_size((uint64_t)f->max, b);
			} else {
				ln_units_format_rate((uint64_t)f->min, a);
				ln_units_format_rate((uint64_t)f->max, b);
			}
			spec_diag(spec, m, "'%s' must be from %s to %s, not '%.100s'", f->key, a, b,
				  v);
			return 0;
		}
		if ((f->flags & F_WHOLE_SECONDS) && u % 1000) {
			spec_diag(spec, m, "'%s' must be whole seconds, not '%.100s'", f->key, v);
			return 0;
		}
		*(uint64_t *)at(obj, f->off) = u;
		return 0;
	}
	case FT_ENUM:
		for (i = 0; f->names[i]; i++) {
			if (!strcmp(f->names[i], v)) {
				*(int *)at(obj, f->off) = (int)i;
				return 0;
			}
		}
		ln_buf_addf(why, "'%s' takes ", f->key);
		enum_list(why, f->names);
		ln_buf_addf(why, ", not '%.100s'", v);
		for (i = 0; f->names[i]; i++)
			;
		did_you_mean(why, v, f->names, i, sizeof(f->names[0]));
		spec_diag(spec, m, "%s", why->buf);
		return 0;
	case FT_MAP:
	case FT_CUSTOM:
		break;
	}
	return 0;
}

static int walk_map(struct parser *p, const struct table *t, void *obj, struct ln_mark *vmarks,
		    const char *key);

/* The current event is the first of a value for field f. */
static int set_value(struct parser *p, const struct field *f, void *obj)
{
	const yaml_event_t *e = &p->ev;

	if (e->type == YAML_ALIAS_EVENT)
		return 0;	/* reported by next() */
	if (f->fn)
		return f->fn(p, f, obj);
	if (f->type == FT_MAP)
		return walk_map(p, f->sub, at(obj, f->off), NULL, f->key);
	if (e->type != YAML_SCALAR_EVENT) {
		spec_diag(p->spec, ev_mark(p), "'%s' takes a single value, not %s", f->key,
			  kind(p));
		return skip_node(p);
	}
	return set_scalar(p, f, obj, (const char *)e->data.scalar.value, e->data.scalar.length,
			  e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE, ev_mark(p));
}

static const struct field *find_field(const struct table *t, const char *key)
{
	size_t i;

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
	did_you_mean(&p->why, k, &t->fields[0].key, t->n_fields, sizeof(t->fields[0]));
	spec_diag(p->spec, m, "%s", p->why.buf);
}

/*
 * Walk the mapping whose start event is current, matching keys against t
 * and writing values into obj. vmarks (may be NULL) receives each value's
 * mark by field index. Returns 0, or < 0 when reading must stop.
 */
static int walk_map(struct parser *p, const struct table *t, void *obj, struct ln_mark *vmarks,
		    const char *key)
{
	uint32_t first_line[MAX_FIELDS] = { 0 };
	struct ln_mark start = ev_mark(p);
	uint64_t seen = 0;
	size_t i;
	int r;

	if (p->ev.type != YAML_MAPPING_START_EVENT) {
		if (p->ev.type == YAML_SCALAR_EVENT &&
		    is_null((const char *)p->ev.data.scalar.value, p->ev.data.scalar.length,
			    p->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE))
			spec_diag(p->spec, start, "'%s' is empty: it takes a mapping", key);
		else
			spec_diag(p->spec, start, "'%s' takes a mapping, not %s", key, kind(p));
		p->seen = 0;
		return skip_node(p);
	}
	if (t->mark_off)
		*(struct ln_mark *)at(obj, t->mark_off - 1) = start;
	if (t->present_off)
		*(int *)at(obj, t->present_off - 1) = 1;
	for (;;) {
		const struct field *f;
		struct ln_mark km;

		if (next(p) < 0)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		km = ev_mark(p);
		if (p->ev.type != YAML_SCALAR_EVENT) {
			if (p->ev.type != YAML_ALIAS_EVENT)
				spec_diag(p->spec, km, "a key in %s must be a name, not %s",
					  t->what, kind(p));
			if (skip_node(p) < 0 || next(p) < 0 || skip_node(p) < 0)
				return -1;
			continue;
		}
		f = find_field(t, (const char *)p->ev.data.scalar.value);
		if (!f) {
			unknown_key(p, t, (const char *)p->ev.data.scalar.value, km);
			if (next(p) < 0 || skip_node(p) < 0)
				return -1;
			continue;
		}
		i = (size_t)(f - t->fields);
		if (seen & (1ull << i)) {
			spec_diag(p->spec, km, "duplicate key '%s' in %s (first on line %u)", f->key,
				  t->what, first_line[i]);
			if (next(p) < 0 || skip_node(p) < 0)
				return -1;
			continue;
		}
		seen |= 1ull << i;
		first_line[i] = km.line;
		if (next(p) < 0)
			return -1;
		if (vmarks)
			vmarks[i] = ev_mark(p);
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

/* Iterate a sequence whose start event is current, calling item() with
 * each item's first event current. */
static int walk_seq(struct parser *p, const char *key, int (*item)(struct parser *p, void *arg),
		    void *arg, size_t *count)
{
	size_t n = 0;
	int r;

	if (p->ev.type != YAML_SEQUENCE_START_EVENT) {
		spec_diag(p->spec, ev_mark(p), "'%s' takes a sequence (a list), not %s", key,
			  kind(p));
		if (count)
			*count = 0;
		return skip_node(p);
	}
	for (;;) {
		if (next(p) < 0)
			return -1;
		if (p->ev.type == YAML_SEQUENCE_END_EVENT)
			break;
		n++;
		if (p->ev.type == YAML_ALIAS_EVENT)
			continue;
		r = item(p, arg);
		if (r < 0)
			return r;
	}
	if (count)
		*count = n;
	return 0;
}

/* ---- growing arrays --------------------------------------------------- */

static void *grow(void **arr, size_t *alloc, size_t n, size_t elem)
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

#define GROW(arr, n, alloc) ((__typeof__(arr))grow((void **)&(arr), &(alloc), (n), sizeof(*(arr))))

/* ---- ranges ----------------------------------------------------------- */

/* One field of an entry that may hold a range expanded in step. */
struct rng {
	const char *raw;
	const char *key;
	enum spat pat;
	struct ln_mark mark;
	struct ln_hostlist hl;
	int is_range, bad;
};

static void rng_init(struct parser *p, struct rng *r, const char *raw, const char *key,
		     enum spat pat, struct ln_mark mark, const char *lead_key, const char *lead,
		     size_t n)
{
	memset(r, 0, sizeof(*r));
	r->raw = raw;
	r->key = key;
	r->pat = pat;
	r->mark = mark;
	if (!raw || !ln_hostlist_is_range(raw))
		return;
	r->is_range = 1;
	ln_buf_reset(&p->why);
	if (ln_hostlist_parse(raw, &r->hl, &p->why) < 0) {
		spec_diag(p->spec, mark, "%s", p->why.buf);
		r->bad = 1;
		return;
	}
	if (r->hl.count != n) {
		if (n == 1 && lead && !ln_hostlist_is_range(lead))
			spec_diag(p->spec, mark,
				  "'%s' holds a range ('%.100s') but '%s' is the single '%.100s'",
				  key, raw, lead_key, lead);
		else
			spec_diag(p->spec, mark,
				  "'%s' range '%.100s' expands to %zu values but '%s' to %zu",
				  key, raw, r->hl.count, lead_key, n);
		r->bad = 1;
	}
}

/* The i-th value (NULL when the field is absent or broken). */
static const char *rng_get(struct parser *p, struct rng *r, size_t i)
{
	struct ln_buf *s = &p->st->scratch;
	const char *v;

	if (!r->is_range)
		return r->raw;
	if (r->bad)
		return NULL;
	ln_buf_reset(s);
	if (ln_hostlist_get(&r->hl, i, s) < 0)
		return NULL;
	ln_buf_reset(&p->why);
	if (spec_pattern_check(r->pat, r->key, s->buf, &p->why) < 0) {
		spec_diag(p->spec, r->mark, "%s (from range '%.100s')", p->why.buf, r->raw);
		r->bad = 1;	/* once per field, not once per node */
		return NULL;
	}
	v = spec_arena_strndup(&p->st->arena, s->buf, s->len);
	return v;
}

static void rng_release(struct rng *r)
{
	if (r->is_range)
		ln_hostlist_release(&r->hl);
}

/* A spec of a few lines must not expand into millions of objects: the
 * total of each kind is capped, like a single range. */
#define MAX_OBJECTS LN_HOSTLIST_MAX

static int over_cap(struct parser *p, size_t have, size_t n, const char *what, struct ln_mark m)
{
	if (have + n <= MAX_OBJECTS)
		return 0;
	spec_diag(p->spec, m, "the spec expands to more than %d %s", MAX_OBJECTS, what);
	return 1;
}

/* Count of the lead field (1 when not a range; 0 when it cannot expand). */
static size_t lead_count(struct parser *p, const char *lead, const char *key, struct ln_mark m)
{
	struct ln_hostlist hl;
	size_t n;

	if (!lead || !ln_hostlist_is_range(lead))
		return 1;
	ln_buf_reset(&p->why);
	if (ln_hostlist_parse(lead, &hl, &p->why) < 0) {
		spec_diag(p->spec, m, "'%s': %s", key, p->why.buf);
		return 0;
	}
	n = hl.count;
	ln_hostlist_release(&hl);
	return n;
}

/* ---- tables and handlers ---------------------------------------------- */

static const char *const host_key_policies[] = { "strict", "accept-new", NULL };
static const char *const link_layers[] = { "any", "infiniband", "ethernet", NULL };
static const char *const transports[] = { "tcp", "rdma", NULL };
static const char *const formats[] = { "never", "if-blank", NULL };
static const char *const mpi_formats[] = { "openmpi", "mpich", NULL };
static const char *const pairs_names[] = { "ring", "all", NULL };
static const char *const bw_tools[] = { "ib_write_bw", "ib_send_bw", NULL };
static const char *const nccl_tools[] = { "probe", "all_reduce_perf", NULL };
static const char *const nccl_ops[] = { "all_reduce", "all_gather", "reduce_scatter", "broadcast",
					"reduce", NULL };
/* mkfs.<fs> is run by the agent: only these. */
const char *const spec_fs_names[] = { "ext4", "xfs", "btrfs", NULL };
const char *const spec_stage_names[] = { "devices", "rping", "bandwidth", "io", "mpi", "nccl", NULL };

static int h_version(struct parser *p, const struct field *f, void *obj, const char *v,
		     struct ln_mark m)
{
	struct ln_spec *spec = obj;

	(void)f;
	if (strcmp(v, "1")) {
		spec_diag(spec, m, "unsupported spec version '%.40s' (this llmnet reads version %d)",
			  v, LN_SPEC_VERSION);
		p->st->version_bad = 1;
		return 0;
	}
	spec->version = 1;
	return 0;
}

static int h_mtu(struct parser *p, const struct field *f, void *obj, const char *v,
		 struct ln_mark m)
{
	long long n;

	if (parse_int(v, &n) < 0 || (n != 256 && n != 512 && n != 1024 && n != 2048 && n != 4096)) {
		spec_diag(p->spec, m, "'%s' takes 256, 512, 1024, 2048 or 4096, not '%.100s'",
			  f->key, v);
		return 0;
	}
	*(unsigned *)at(obj, f->off) = (unsigned)n;
	return 0;
}

static int h_fs(struct parser *p, const struct field *f, void *obj, const char *v,
		struct ln_mark m)
{
	size_t i;

	for (i = 0; spec_fs_names[i]; i++) {
		if (!strcmp(spec_fs_names[i], v)) {
			*(const char **)at(obj, f->off) = spec_fs_names[i];
			return 0;
		}
	}
	/* Keep what was written, so the mount does not also read as lacking
	 * a file system. */
	*(const char **)at(obj, f->off) = spec_arena_strndup(&p->st->arena, v, strlen(v));
	ln_buf_reset(&p->why);
	ln_buf_addf(&p->why, "'%s' takes ", f->key);
	enum_list(&p->why, spec_fs_names);
	ln_buf_addf(&p->why, ", not '%.100s'", v);
	did_you_mean(&p->why, v, spec_fs_names, i, sizeof(spec_fs_names[0]));
	spec_diag(p->spec, m, "%s", p->why.buf);
	return 0;
}

/* "[user@]host[:port]"; an IPv6 host is written in brackets. */
static int h_jump(struct parser *p, const struct field *f, void *obj, const char *v,
		  struct ln_mark m)
{
	struct ln_ssh_spec *ssh = obj;
	struct spec_arena *a = &p->st->arena;
	const char *at_sign = strchr(v, '@'), *host = at_sign ? at_sign + 1 : v, *end, *colon;
	long long port = 22;

	(void)f;
	ln_buf_reset(&p->why);
	if (at_sign) {
		char *user = spec_arena_strndup(a, v, (size_t)(at_sign - v));

		if (!user)
			return -ENOMEM;
		if (spec_pattern_check(SP_USER, "jump", user, &p->why) < 0) {
			spec_diag(p->spec, m, "%s", p->why.buf);
			return 0;
		}
		ssh->jump_user = user;
	}
	if (*host == '[') {
		end = strchr(host, ']');
		if (!end) {
			spec_diag(p->spec, m, "'jump' has '[' without ']' in '%.100s'", v);
			return 0;
		}
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] && !colon) {
			spec_diag(p->spec, m, "'jump' takes [user@]host[:port], not '%.100s'", v);
			return 0;
		}
		host++;
	} else {
		colon = strrchr(host, ':');
		/* An unbracketed IPv6 address has several colons: no port then. */
		if (colon && strchr(host, ':') != colon)
			colon = NULL;
		end = colon ? colon : host + strlen(host);
	}
	if (colon && (parse_int(colon + 1, &port) < 0 || port < 1 || port > 65535)) {
		spec_diag(p->spec, m, "'jump' port must be from 1 to 65535, not '%.100s'", colon + 1);
		return 0;
	}
	ssh->jump_host = spec_arena_strndup(a, host, (size_t)(end - host));
	if (!ssh->jump_host)
		return -ENOMEM;
	if (spec_pattern_check(SP_HOST, "jump", ssh->jump_host, &p->why) < 0) {
		spec_diag(p->spec, m, "%s", p->why.buf);
		return 0;
	}
	ssh->jump_port = (uint16_t)port;
	return 0;
}

/* bandwidth.min: a rate, or "F of rate" (0 < F <= 1). */
static int h_bw_min(struct parser *p, const struct field *f, void *obj, const char *v,
		    struct ln_mark m)
{
	struct ln_validation *val = obj;
	const char *of = strstr(v, " of rate");
	uint64_t u;

	(void)f;
	ln_buf_reset(&p->why);
	if (of && !of[8]) {
		char num[32];
		char *end;
		double d;

		if ((size_t)(of - v) >= sizeof(num))
			goto bad;
		memcpy(num, v, (size_t)(of - v));
		num[of - v] = '\0';
		if (strspn(num, "0123456789.") != strlen(num) || !num[0])
			goto bad;
		d = strtod(num, &end);
		if (*end || !(d > 0 && d <= 1))
			goto bad;
		val->bandwidth.min_kind = LN_MIN_FRACTION;
		val->bandwidth.min_fraction = d;
		return 0;
	}
	if (ln_units_parse_rate(v, &u, &p->why) < 0) {
		spec_diag(p->spec, m, "'min': %s, or 'F of rate' with 0 < F <= 1", p->why.buf);
		return 0;
	}
	if (!u) {
		spec_diag(p->spec, m, "'min' must be above zero: leave it out for no threshold");
		return 0;
	}
	val->bandwidth.min_kind = LN_MIN_RATE;
	val->bandwidth.min_bps = u;
	return 0;
bad:
	spec_diag(p->spec, m, "'min' takes a rate or 'F of rate' with 0 < F <= 1, not '%.100s'", v);
	return 0;
}

/* rdma: a list of ports of the current node entry. */
static const struct table rdma_table;

static int rdma_item(struct parser *p, void *arg)
{
	struct node_entry *ne = arg;
	struct rdma_entry *re = GROW(ne->rdma, ne->n_rdma, ne->alloc_rdma);

	if (!re)
		return -ENOMEM;
	ne->n_rdma++;
	re->r.port = 1;
	re->r.gid_index = -1;
	re->r.mark = ev_mark(p);
	return walk_map(p, &rdma_table, &re->r, re->m, "rdma");
}

static int h_rdma(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return walk_seq(p, f->key, rdma_item, &p->ne, NULL);
}

static const struct field rdma_fields[] = {
	{ .key = "device", .type = FT_STR, .off = offsetof(struct ln_rdma_port, device),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_DEVICE,
	  .doc = "RDMA device name as in /sys/class/infiniband (mlx5_0, rxe0)" },
	{ .key = "port", .type = FT_UINT, .off = offsetof(struct ln_rdma_port, port), .min = 1,
	  .max = 255, .def = "1", .doc = "port number on the device, from 1" },
	{ .key = "ip", .type = FT_STR, .off = offsetof(struct ln_rdma_port, ip), .flags = F_RANGE,
	  .pat = SP_IP, .doc = "the port's IP address (numeric); may be a range in a node range" },
	{ .key = "gid_index", .type = FT_INT, .off = offsetof(struct ln_rdma_port, gid_index),
	  .min = 0, .max = 255, .def = "chosen from the GID table",
	  .doc = "GID table index for RoCE" },
	{ .key = "min_rate", .type = FT_RATE, .off = offsetof(struct ln_rdma_port, min_rate_bps),
	  .flags = F_THRESHOLD, .min = 1, .doc = "lowest acceptable active link rate" },
	{ .key = "link_layer", .type = FT_ENUM, .off = offsetof(struct ln_rdma_port, link_layer),
	  .names = link_layers, .def = "any", .doc = "expected link layer" },
	{ .key = "mtu", .type = FT_UINT, .off = offsetof(struct ln_rdma_port, mtu),
	  .sfn = h_mtu, .min = 256, .max = 4096, .doc = "expected active MTU" },
};

static const struct table rdma_table = {
	"rdma port", rdma_fields, sizeof(rdma_fields) / sizeof(rdma_fields[0]),
	0, 0, "An RDMA port of the node.", NULL, NULL,
};

static const struct field node_fields[] = {
	{ .key = "name", .type = FT_STR, .off = offsetof(struct ln_node, name),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NODE,
	  .doc = "unique node name, or a range such as gpu[001-128]" },
	{ .key = "address", .type = FT_STR, .off = offsetof(struct ln_node, address),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_HOST,
	  .doc = "where SSH reaches the node; a range expands in step with the name" },
	{ .key = "port", .type = FT_U16, .off = offsetof(struct ln_node, port), .min = 1,
	  .max = 65535, .def = "ssh.port", .doc = "SSH port" },
	{ .key = "user", .type = FT_STR, .off = offsetof(struct ln_node, user), .flags = F_RANGE,
	  .pat = SP_USER, .def = "ssh.user", .doc = "SSH user" },
	{ .key = "gpus", .type = FT_UINT, .off = offsetof(struct ln_node, gpus), .min = 0,
	  .max = 1024, .def = "0", .doc = "expected CUDA devices" },
	{ .key = "slots", .type = FT_UINT, .off = offsetof(struct ln_node, slots), .min = 1,
	  .max = 4096, .def = "max(gpus, 1)", .doc = "MPI slots in the hostfile" },
	{ .key = "rdma", .type = FT_CUSTOM, .fn = h_rdma, .sub = &rdma_table,
	  .schema_type = "list", .doc = "RDMA ports" },
};

static const struct table node_table = {
	"node", node_fields, sizeof(node_fields) / sizeof(node_fields[0]), 0, 0,
	"A node, or a range of nodes expanded in step.", NULL, NULL,
};

/* Nodes usually repeat the same device names port by port (mlx5_0 ..
 * mlx5_7): keep one copy per port position, compared with the previous
 * node's, so a large cluster stores them once. */
#define SHARED_DEVICES 16

static void share_device(struct parser *p, struct ln_rdma_port *port, size_t k)
{
	const char **last = p->last_device;

	if (k >= SHARED_DEVICES || !port->device)
		return;
	if (last[k] && !strcmp(last[k], port->device))
		port->device = last[k];
	else
		last[k] = port->device;
}

/* Append the entry's nodes (one, or one per name of its range). */
static int finish_node(struct parser *p)
{
	struct ln_spec *spec = p->spec;
	struct ln_spec_store *st = p->st;
	struct node_entry *ne = &p->ne;
	struct ln_hostlist hl = { 0 };
	struct rng addr, user, *pr = NULL;
	size_t n, i, k;
	int r = 0, name_bad = 0;

	if (!ne->n.name)
		return 0;	/* missing name: reported */
	n = lead_count(p, ne->n.name, "name", ne->m[0]);
	if (!n || over_cap(p, spec->n_nodes, n, "nodes", ne->m[0]))
		return 0;
	rng_init(p, &addr, ne->n.address, "address", SP_HOST, ne->m[1], "name", ne->n.name, n);
	rng_init(p, &user, ne->n.user, "user", SP_USER, ne->m[3], "name", ne->n.name, n);
	if (ne->n_rdma) {
		pr = calloc(ne->n_rdma * 2, sizeof(*pr));
		if (!pr) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (k = 0; k < ne->n_rdma; k++) {
		rng_init(p, &pr[2 * k], ne->rdma[k].r.device, "device", SP_DEVICE,
			 ne->rdma[k].m[0], "name", ne->n.name, n);
		rng_init(p, &pr[2 * k + 1], ne->rdma[k].r.ip, "ip", SP_IP, ne->rdma[k].m[2],
			 "name", ne->n.name, n);
	}
	if (n > 1) {
		r = ln_hostlist_parse(ne->n.name, &hl, &p->why);
		if (r < 0)
			goto out;
	}
	for (i = 0; i < n; i++) {
		struct ln_node *node = GROW(spec->nodes, spec->n_nodes, st->alloc_nodes);
		struct node_raw *raw = GROW(st->node_raw, spec->n_nodes, st->alloc_node_raw);

		if (!node || !raw) {
			r = -ENOMEM;
			goto out;
		}
		*node = ne->n;
		if (n > 1) {
			ln_buf_reset(&st->scratch);
			r = ln_hostlist_get(&hl, i, &st->scratch);
			if (r < 0)
				goto out;
			ln_buf_reset(&p->why);
			if (!name_bad &&
			    spec_pattern_check(SP_NODE, "name", st->scratch.buf, &p->why) < 0) {
				spec_diag(spec, ne->m[0], "%s (from range '%.100s')", p->why.buf,
					  ne->n.name);
				name_bad = 1;
			}
			node->name = spec_arena_strndup(&st->arena, st->scratch.buf,
							st->scratch.len);
			if (!node->name) {
				r = -ENOMEM;
				goto out;
			}
		}
		node->address = rng_get(p, &addr, i);
		node->user = rng_get(p, &user, i);
		raw->name = ne->m[0];
		raw->address = ne->m[1];
		for (k = 0; k < ne->n_rdma; k++) {
			struct ln_rdma_port *port = GROW(st->ports, st->n_ports, st->alloc_ports);

			if (!port) {
				r = -ENOMEM;
				goto out;
			}
			*port = ne->rdma[k].r;
			port->device = rng_get(p, &pr[2 * k], i);
			port->ip = rng_get(p, &pr[2 * k + 1], i);
			share_device(p, port, k);
			st->n_ports++;
		}
		spec->n_nodes++;
	}
out:
	if (n > 1)
		ln_hostlist_release(&hl);
	rng_release(&addr);
	rng_release(&user);
	for (k = 0; pr && k < 2 * ne->n_rdma; k++)
		rng_release(&pr[k]);
	free(pr);
	return r;
}

static int node_item(struct parser *p, void *arg)
{
	struct node_entry *ne = &p->ne;
	int r;

	(void)arg;
	memset(&ne->n, 0, sizeof(ne->n));
	memset(ne->m, 0, sizeof(ne->m));
	ne->n_rdma = 0;
	ne->n.mark = ev_mark(p);
	r = walk_map(p, &node_table, &ne->n, ne->m, "nodes");
	if (r < 0)
		return r;
	ne->n.n_rdma = ne->n_rdma;
	return finish_node(p);
}

static int h_nodes(struct parser *p, const struct field *f, void *obj)
{
	struct ln_mark m = ev_mark(p);
	size_t n = 0;
	int r;

	(void)obj;
	r = walk_seq(p, f->key, node_item, NULL, &n);
	if (!r && !n && p->ev.type == YAML_SEQUENCE_END_EVENT)
		spec_diag(p->spec, m, "'nodes' is empty: a cluster has at least one node");
	return r;
}

/* ---- storage ---------------------------------------------------------- */

static const struct field ns_fields[] = {
	{ .key = "nsid", .type = FT_UINT, .off = offsetof(struct ln_namespace, nsid),
	  .flags = F_REQUIRED, .min = 1, .max = 0xfffffffe, .doc = "namespace id, unique in the target" },
	{ .key = "file", .type = FT_STR, .off = offsetof(struct ln_namespace, file),
	  .pat = SP_PATH, .doc = "backing file on the target node (absolute); needs size" },
	{ .key = "size", .type = FT_SIZE, .off = offsetof(struct ln_namespace, size), .min = 512,
	  .doc = "size of the backing file; a multiple of 512 bytes" },
	{ .key = "device", .type = FT_STR, .off = offsetof(struct ln_namespace, device),
	  .pat = SP_DEVPATH, .doc = "block device under /dev/ instead of a file" },
};

static const struct table ns_table = {
	"namespace", ns_fields, sizeof(ns_fields) / sizeof(ns_fields[0]), 0, 0,
	"A namespace: a backing file with a size, or a block device.", "namespace", NULL,
};

/* A namespace is a file with a size, or a device. Judged on the keys
 * written (seen, by ns_fields index), so a size that failed to parse is
 * not also reported missing. */
static void check_namespace(struct parser *p, const struct ln_namespace *ns, uint64_t seen)
{
	int file = !!(seen & 2), size = !!(seen & 4), dev = !!(seen & 8);

	if (file && dev)
		spec_diag(p->spec, ns->mark, "namespace %u has both 'file' and 'device': it takes one",
			  ns->nsid);
	else if (!file && !dev)
		spec_diag(p->spec, ns->mark, "namespace %u needs 'file' (with 'size') or 'device'",
			  ns->nsid);
	else if (file && !size)
		spec_diag(p->spec, ns->mark, "namespace %u: 'file' needs a 'size'", ns->nsid);
	else if (dev && size)
		spec_diag(p->spec, ns->mark,
			  "namespace %u: 'size' goes with 'file'; a device has its own size",
			  ns->nsid);
	else if (file && ns->size % 512)
		spec_diag(p->spec, ns->mark,
			  "namespace %u: size %llu is not a multiple of 512 bytes", ns->nsid,
			  (unsigned long long)ns->size);
}

static int ns_item(struct parser *p, void *arg)
{
	struct target_entry *te = arg;
	struct ns_entry *e = GROW(te->ns, te->n_ns, te->alloc_ns);
	int r;

	if (!e)
		return -ENOMEM;
	te->n_ns++;
	e->ns.mark = ev_mark(p);
	r = walk_map(p, &ns_table, &e->ns, e->m, "namespaces");
	if (r < 0 || p->ev.type != YAML_MAPPING_END_EVENT)
		return r;
	check_namespace(p, &e->ns, p->seen);
	return 0;
}

static int h_namespaces(struct parser *p, const struct field *f, void *obj)
{
	struct ln_mark m = ev_mark(p);
	size_t n = 0;
	int r;

	(void)obj;
	r = walk_seq(p, f->key, ns_item, &p->te, &n);
	if (!r && !n && p->ev.type == YAML_SEQUENCE_END_EVENT)
		spec_diag(p->spec, m, "'namespaces' is empty: a target serves at least one");
	return r;
}

static int host_item(struct parser *p, void *arg)
{
	struct target_entry *te = arg;
	const yaml_event_t *e = &p->ev;
	struct host_raw *h;

	if (e->type != YAML_SCALAR_EVENT) {
		spec_diag(p->spec, ev_mark(p), "'hosts' lists node names, not %s", kind(p));
		return skip_node(p);
	}
	if (strlen((const char *)e->data.scalar.value) != e->data.scalar.length) {
		spec_diag(p->spec, ev_mark(p), "'hosts' holds a NUL byte");
		return 0;
	}
	h = GROW(te->hosts, te->n_hosts, te->alloc_hosts);
	if (!h)
		return -ENOMEM;
	h->name = spec_arena_strndup(&p->st->arena, (const char *)e->data.scalar.value,
				e->data.scalar.length);
	if (!h->name)
		return -ENOMEM;
	h->mark = ev_mark(p);
	te->n_hosts++;
	return 0;
}

static int h_hosts(struct parser *p, const struct field *f, void *obj)
{
	struct target_entry *te = obj;
	const yaml_event_t *e = &p->ev;

	te->t.hosts_given = 1;
	if (e->type == YAML_SCALAR_EVENT) {
		if (!strcmp((const char *)e->data.scalar.value, "any")) {
			te->t.hosts_any = 1;
			return 0;
		}
		spec_diag(p->spec, ev_mark(p),
			  "'hosts' takes a list of node names or 'any', not '%.100s'",
			  (const char *)e->data.scalar.value);
		return 0;
	}
	return walk_seq(p, f->key, host_item, te, NULL);
}

/*
 * Keys a target may one day take that llmnet cannot honour yet. Each is
 * refused by name: an accepted key with no effect would export an open
 * target that the operator believes protected.
 */
static const struct refused_key target_refused[] = {
	{ "dhchap", "llmnet cannot configure NVMe-oF authentication, so the target would be "
		    "exported open; remove 'dhchap' (until then 'hosts' is the target's only "
		    "access control)" },
	{ NULL, NULL },
};

static const struct field target_fields[] = {
	{ .key = "nqn", .type = FT_STR, .off = offsetof(struct target_entry, t.nqn),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NQN, .doc = "subsystem NQN" },
	{ .key = "node", .type = FT_STR, .off = offsetof(struct target_entry, node),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NODE, .doc = "node that serves the target" },
	{ .key = "transport", .type = FT_ENUM, .off = offsetof(struct target_entry, t.transport),
	  .flags = F_REQUIRED, .names = transports, .doc = "NVMe-oF transport" },
	{ .key = "address", .type = FT_STR, .off = offsetof(struct target_entry, t.address),
	  .flags = F_RANGE, .pat = SP_IP, .def = "the node's first RDMA ip",
	  .doc = "address the target listens on (numeric)" },
	{ .key = "service", .type = FT_U16, .off = offsetof(struct target_entry, t.service),
	  .min = 1, .max = 65535, .def = "4420", .doc = "transport service id (port)" },
	{ .key = "hosts", .type = FT_CUSTOM, .fn = h_hosts, .schema_type = "hosts",
	  .def = "every initiator of this target",
	  .doc = "nodes allowed to connect, or 'any' (must be written out)" },
	{ .key = "namespaces", .type = FT_CUSTOM, .fn = h_namespaces, .sub = &ns_table,
	  .flags = F_REQUIRED, .schema_type = "list", .doc = "the target's namespaces" },
};

static const struct table target_table = {
	"target", target_fields, sizeof(target_fields) / sizeof(target_fields[0]), 0, 0,
	"An NVMe-oF target (subsystem) on one node.", NULL, target_refused,
};

static int finish_target(struct parser *p)
{
	struct ln_spec *spec = p->spec;
	struct ln_spec_store *st = p->st;
	struct target_entry *te = &p->te;
	struct ln_hostlist hl = { 0 };
	struct rng node, addr;
	size_t n, i, k;
	int r = 0;

	if (!te->t.nqn)
		return 0;
	n = lead_count(p, te->t.nqn, "nqn", te->m[0]);
	if (!n || over_cap(p, spec->n_targets, n, "targets", te->m[0]))
		return 0;
	rng_init(p, &node, te->node, "node", SP_NODE, te->m[1], "nqn", te->t.nqn, n);
	rng_init(p, &addr, te->t.address, "address", SP_IP, te->m[3], "nqn", te->t.nqn, n);
	if (n > 1) {
		r = ln_hostlist_parse(te->t.nqn, &hl, &p->why);
		if (r < 0)
			goto out;
	}
	for (i = 0; i < n; i++) {
		struct ln_target *t = GROW(spec->targets, spec->n_targets, st->alloc_targets);
		struct target_raw *raw =
			GROW(st->target_raw, spec->n_targets, st->alloc_target_raw);

		if (!t || !raw) {
			r = -ENOMEM;
			goto out;
		}
		*t = te->t;
		if (n > 1) {
			ln_buf_reset(&st->scratch);
			r = ln_hostlist_get(&hl, i, &st->scratch);
			if (r < 0)
				goto out;
			ln_buf_reset(&p->why);
			if (spec_pattern_check(SP_NQN, "nqn", st->scratch.buf, &p->why) < 0) {
				if (i == 0)
					spec_diag(spec, te->m[0], "%s (from range '%.100s')",
						  p->why.buf, te->t.nqn);
			}
			t->nqn = spec_arena_strndup(&st->arena, st->scratch.buf, st->scratch.len);
			if (!t->nqn) {
				r = -ENOMEM;
				goto out;
			}
		}
		t->address = rng_get(p, &addr, i);
		raw->node = rng_get(p, &node, i);
		raw->nqn = te->m[0];
		raw->node_mark = te->m[1];
		raw->address = te->m[3];
		raw->hosts = te->m[5];
		raw->n_hosts = te->n_hosts;
		t->n_namespaces = te->n_ns;
		for (k = 0; k < te->n_ns; k++) {
			struct ln_namespace *ns = GROW(st->nss, st->n_nss, st->alloc_nss);

			if (!ns) {
				r = -ENOMEM;
				goto out;
			}
			*ns = te->ns[k].ns;
			st->n_nss++;
		}
		for (k = 0; k < te->n_hosts; k++) {
			struct host_raw *h =
				GROW(st->hosts_raw, st->n_hosts_raw, st->alloc_hosts_raw);

			if (!h) {
				r = -ENOMEM;
				goto out;
			}
			*h = te->hosts[k];
			st->n_hosts_raw++;
		}
		spec->n_targets++;
	}
out:
	if (n > 1)
		ln_hostlist_release(&hl);
	rng_release(&node);
	rng_release(&addr);
	return r;
}

static int target_item(struct parser *p, void *arg)
{
	struct target_entry *te = &p->te;
	int r;

	(void)arg;
	memset(&te->t, 0, sizeof(te->t));
	memset(te->m, 0, sizeof(te->m));
	te->node = NULL;
	te->n_ns = 0;
	te->n_hosts = 0;
	te->t.service = 4420;
	te->t.mark = ev_mark(p);
	r = walk_map(p, &target_table, te, te->m, "targets");
	if (r < 0)
		return r;
	return finish_target(p);
}

static int h_targets(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return walk_seq(p, f->key, target_item, NULL, NULL);
}

static const struct field mount_fields[] = {
	{ .key = "path", .type = FT_STR, .off = offsetof(struct ln_mount, path),
	  .flags = F_REQUIRED, .pat = SP_PATH, .doc = "mount point (absolute)" },
	{ .key = "fs", .type = FT_STR, .off = offsetof(struct ln_mount, fs), .sfn = h_fs,
	  .pat = SP_FS, .doc = "file system; needed with format: if-blank" },
	{ .key = "format", .type = FT_ENUM, .off = offsetof(struct ln_mount, format),
	  .names = formats, .def = "never",
	  .doc = "never, or if-blank: make the file system only on a device with no signature" },
};

static const struct table mount_table = {
	"mount", mount_fields, sizeof(mount_fields) / sizeof(mount_fields[0]),
	offsetof(struct ln_mount, mark) + 1, offsetof(struct ln_mount, present) + 1,
	"Mount the connected namespace.", "mount", NULL,
};

static const struct field init_fields[] = {
	{ .key = "node", .type = FT_STR, .off = offsetof(struct init_entry, node),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NODE,
	  .doc = "node that connects; a range makes one initiator per node" },
	{ .key = "target", .type = FT_STR, .off = offsetof(struct init_entry, target),
	  .flags = F_REQUIRED | F_RANGE, .pat = SP_NQN, .doc = "NQN of a target in this spec" },
	{ .key = "nr_io_queues", .type = FT_UINT, .off = offsetof(struct init_entry, i.nr_io_queues),
	  .min = 1, .max = 1024, .def = "kernel default", .doc = "I/O queues" },
	{ .key = "queue_size", .type = FT_UINT, .off = offsetof(struct init_entry, i.queue_size),
	  .min = 16, .max = 1024, .def = "kernel default", .doc = "I/O queue depth" },
	{ .key = "ctrl_loss_tmo", .type = FT_DURATION, .flags = F_WHOLE_SECONDS,
	  .off = offsetof(struct init_entry, i.ctrl_loss_tmo_ms), .min = 1000, .max = 86400000,
	  .def = "kernel default", .doc = "give up reconnecting after this long" },
	{ .key = "reconnect_delay", .type = FT_DURATION, .flags = F_WHOLE_SECONDS,
	  .off = offsetof(struct init_entry, i.reconnect_delay_ms), .min = 1000, .max = 3600000,
	  .def = "kernel default", .doc = "delay between reconnect attempts" },
	{ .key = "mount", .type = FT_MAP, .off = offsetof(struct init_entry, i.mount),
	  .sub = &mount_table, .doc = "optional mount of the namespace" },
};

static const struct table init_table = {
	"initiator", init_fields, sizeof(init_fields) / sizeof(init_fields[0]), 0, 0,
	"An NVMe-oF initiator: a node that connects to a target.", NULL, NULL,
};

static int finish_initiator(struct parser *p)
{
	struct ln_spec *spec = p->spec;
	struct ln_spec_store *st = p->st;
	struct init_entry *ie = &p->ie;
	struct ln_hostlist hl = { 0 };
	struct rng target;
	size_t n, i;
	int r = 0;

	if (!ie->node)
		return 0;
	n = lead_count(p, ie->node, "node", ie->m[0]);
	if (!n || over_cap(p, spec->n_initiators, n, "initiators", ie->m[0]))
		return 0;
	rng_init(p, &target, ie->target, "target", SP_NQN, ie->m[1], "node", ie->node, n);
	if (n > 1) {
		r = ln_hostlist_parse(ie->node, &hl, &p->why);
		if (r < 0)
			goto out;
	}
	for (i = 0; i < n; i++) {
		struct ln_initiator *in =
			GROW(spec->initiators, spec->n_initiators, st->alloc_initiators);
		struct init_raw *raw = GROW(st->init_raw, spec->n_initiators, st->alloc_init_raw);

		if (!in || !raw) {
			r = -ENOMEM;
			goto out;
		}
		*in = ie->i;
		raw->node = ie->node;
		if (n > 1) {
			ln_buf_reset(&st->scratch);
			r = ln_hostlist_get(&hl, i, &st->scratch);
			if (r < 0)
				goto out;
			raw->node = spec_arena_strndup(&st->arena, st->scratch.buf,
						       st->scratch.len);
			if (!raw->node) {
				r = -ENOMEM;
				goto out;
			}
		}
		raw->target = rng_get(p, &target, i);
		raw->node_mark = ie->m[0];
		raw->target_mark = ie->m[1];
		spec->n_initiators++;
	}
out:
	if (n > 1)
		ln_hostlist_release(&hl);
	rng_release(&target);
	return r;
}

static int init_item(struct parser *p, void *arg)
{
	struct init_entry *ie = &p->ie;
	int r;

	(void)arg;
	memset(ie, 0, sizeof(*ie));
	ie->i.ctrl_loss_tmo_ms = -1;
	ie->i.reconnect_delay_ms = -1;
	ie->i.mark = ev_mark(p);
	r = walk_map(p, &init_table, ie, ie->m, "initiators");
	if (r < 0)
		return r;
	return finish_initiator(p);
}

static int h_initiators(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return walk_seq(p, f->key, init_item, NULL, NULL);
}

static const struct field storage_fields[] = {
	{ .key = "targets", .type = FT_CUSTOM, .fn = h_targets, .sub = &target_table,
	  .schema_type = "list", .doc = "NVMe-oF targets" },
	{ .key = "initiators", .type = FT_CUSTOM, .fn = h_initiators, .sub = &init_table,
	  .schema_type = "list", .doc = "NVMe-oF initiators" },
};

static const struct table storage_table = {
	"storage", storage_fields, 2, 0, 0, "NVMe-oF targets and the initiators that use them.",
	NULL, NULL,
};

/* ---- mpi -------------------------------------------------------------- */

static int h_mca(struct parser *p, const struct field *f, void *obj)
{
	struct ln_mpi_spec *mpi = obj;
	struct ln_spec_store *st = p->st;

	if (p->ev.type != YAML_MAPPING_START_EVENT) {
		spec_diag(p->spec, ev_mark(p), "'%s' takes a mapping of parameter: value, not %s",
			  f->key, kind(p));
		return skip_node(p);
	}
	for (;;) {
		struct ln_mca *mca;
		struct ln_mark km;
		const char *k, *v;

		if (next(p) < 0)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		km = ev_mark(p);
		if (p->ev.type != YAML_SCALAR_EVENT) {
			spec_diag(p->spec, km, "an mca key must be a name, not %s", kind(p));
			if (skip_node(p) < 0 || next(p) < 0 || skip_node(p) < 0)
				return -1;
			continue;
		}
		mca = GROW(st->mca, mpi->n_mca, st->alloc_mca);
		if (!mca)
			return -ENOMEM;
		k = spec_arena_strndup(&st->arena, (const char *)p->ev.data.scalar.value,
				  p->ev.data.scalar.length);
		if (!k)
			return -ENOMEM;
		mca->key = k;
		mca->mark = km;
		ln_buf_reset(&p->why);
		if (spec_pattern_check(SP_MCA_KEY, "mca", k, &p->why) < 0)
			spec_diag(p->spec, km, "%s", p->why.buf);
		if (next(p) < 0)
			return -1;
		if (p->ev.type != YAML_SCALAR_EVENT) {
			spec_diag(p->spec, ev_mark(p), "mca '%.100s' takes a single value, not %s",
				  k, kind(p));
			if (skip_node(p) < 0)
				return -1;
			continue;
		}
		v = spec_arena_strndup(&st->arena, (const char *)p->ev.data.scalar.value,
				  p->ev.data.scalar.length);
		if (!v)
			return -ENOMEM;
		mca->value = v;
		ln_buf_reset(&p->why);
		if (strlen(v) != p->ev.data.scalar.length ||
		    spec_pattern_check(SP_MCA_VALUE, k, v, &p->why) < 0) {
			if (!p->why.len)
				ln_buf_addf(&p->why, "mca value for '%.100s' holds a NUL byte", k);
			spec_diag(p->spec, ev_mark(p), "%s", p->why.buf);
		}
		mpi->n_mca++;
	}
}

static const struct field mpi_fields[] = {
	{ .key = "hostfile", .type = FT_STR, .off = offsetof(struct ln_mpi_spec, hostfile),
	  .pat = SP_PATH, .def = "/etc/llmnet/hostfile", .doc = "hostfile written on every node" },
	{ .key = "format", .type = FT_ENUM, .off = offsetof(struct ln_mpi_spec, format),
	  .names = mpi_formats, .def = "openmpi", .doc = "hostfile syntax" },
	{ .key = "mca", .type = FT_CUSTOM, .fn = h_mca, .schema_type = "mca",
	  .doc = "Open MPI MCA parameters passed to mpirun" },
};

static const struct table mpi_table = {
	"mpi", mpi_fields, sizeof(mpi_fields) / sizeof(mpi_fields[0]),
	offsetof(struct ln_mpi_spec, mark) + 1, offsetof(struct ln_mpi_spec, present) + 1,
	"The MPI hostfile and mpirun settings.", NULL, NULL,
};

/* ---- validation ------------------------------------------------------- */

#define VOFF(m) offsetof(struct ln_validation, m)

/* Every stage table starts with its "stage" key (index 0). */
#define STAGE_KEY                                                                   \
	{ .key = "stage", .type = FT_ENUM, .flags = F_REQUIRED, .names = spec_stage_names, \
	  .doc = "the stage to run" }

static const struct field devices_fields[] = { STAGE_KEY };

static const struct field rping_fields[] = {
	STAGE_KEY,
	{ .key = "count", .type = FT_UINT, .off = VOFF(rping.count), .min = 1, .max = 100000,
	  .def = "10", .doc = "pings per pair" },
	{ .key = "pairs", .type = FT_ENUM, .off = VOFF(rping.pairs), .names = pairs_names,
	  .def = "ring", .doc = "which pairs: ring neighbours or all" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(rping.timeout_ms), .min = 1000,
	  .max = 3600000, .def = "30s", .doc = "bound on each probe" },
};

static const struct field bandwidth_fields[] = {
	STAGE_KEY,
	{ .key = "tool", .type = FT_ENUM, .off = VOFF(bandwidth.tool), .names = bw_tools,
	  .def = "ib_write_bw", .doc = "perftest program" },
	{ .key = "size", .type = FT_SIZE, .off = VOFF(bandwidth.size), .min = 1,
	  .max = 1ll << 30, .def = "1MiB", .doc = "message size" },
	{ .key = "pairs", .type = FT_ENUM, .off = VOFF(bandwidth.pairs), .names = pairs_names,
	  .def = "ring", .doc = "which pairs" },
	{ .key = "min", .type = FT_STR, .sfn = h_bw_min, .flags = F_THRESHOLD,
	  .schema_type = "bw_min", .doc = "threshold: a rate, or 'F of rate' (of the link's rate)" },
	{ .key = "port_base", .type = FT_U16, .off = VOFF(bandwidth.port_base), .min = 1024,
	  .max = 65535, .def = "18515", .doc = "first TCP port perftest uses" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(bandwidth.timeout_ms), .min = 1000,
	  .max = 3600000, .def = "60s", .doc = "bound on each probe" },
};

static const struct field io_fields[] = {
	STAGE_KEY,
	{ .key = "size", .type = FT_SIZE, .off = VOFF(io.size), .min = 4096,
	  .max = 1ll << 50, .def = "256MiB", .doc = "bytes written and read per initiator" },
	{ .key = "min", .type = FT_RATE, .off = VOFF(io.min_bps), .flags = F_THRESHOLD, .min = 1,
	  .doc = "threshold on throughput" },
	{ .key = "destructive", .type = FT_BOOL, .off = VOFF(io.destructive), .def = "false",
	  .doc = "allow raw writes to the device (destroys its data)" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(io.timeout_ms), .min = 1000,
	  .max = 86400000, .def = "120s", .doc = "bound on each probe" },
};

static const struct field mpi_stage_fields[] = {
	STAGE_KEY,
	{ .key = "np", .type = FT_UINT, .off = VOFF(mpi.np), .min = 1, .max = 1 << 20,
	  .def = "every slot", .doc = "MPI processes" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(mpi.timeout_ms), .min = 1000,
	  .max = 86400000, .def = "120s", .doc = "bound on the run" },
};

static const struct field nccl_fields[] = {
	STAGE_KEY,
	{ .key = "tool", .type = FT_ENUM, .off = VOFF(nccl.tool), .names = nccl_tools,
	  .def = "probe", .doc = "llmnet's probe or nccl-tests' all_reduce_perf" },
	{ .key = "op", .type = FT_ENUM, .off = VOFF(nccl.op), .names = nccl_ops,
	  .def = "all_reduce", .doc = "collective" },
	{ .key = "bytes", .type = FT_SIZE, .off = VOFF(nccl.bytes), .min = 1, .max = 1ll << 40,
	  .def = "1GiB", .doc = "message size" },
	{ .key = "min_busbw", .type = FT_RATE, .off = VOFF(nccl.min_busbw_bps),
	  .flags = F_THRESHOLD, .min = 1, .doc = "threshold on bus bandwidth" },
	{ .key = "timeout", .type = FT_DURATION, .off = VOFF(nccl.timeout_ms), .min = 1000,
	  .max = 86400000, .def = "300s", .doc = "bound on the run" },
};

#define STAGE(name, f, doc) { "stage '" name "'", f, sizeof(f) / sizeof(f[0]), 0, 0, doc, NULL, NULL }

const struct table spec_stage_tables[LN_STAGE_COUNT] = {
	STAGE("devices", devices_fields, "RDMA ports, GPUs and NVMe controllers as declared."),
	STAGE("rping", rping_fields, "rdma_cm reachability between pairs of nodes."),
	STAGE("bandwidth", bandwidth_fields, "RDMA bandwidth between pairs (perftest)."),
	STAGE("io", io_fields, "Storage I/O on every initiator."),
	STAGE("mpi", mpi_stage_fields, "An MPI job across every node's slots."),
	STAGE("nccl", nccl_fields, "An NCCL collective across the GPUs."),
};

struct kv {
	const char *k, *v;
	struct ln_mark km, vm;
	int plain;
};

static void stage_option_error(struct parser *p, enum ln_stage s, const struct kv *kv)
{
	const struct table *t = &spec_stage_tables[s];
	const struct field *f = NULL;
	size_t i;

	for (i = 0; i < LN_STAGE_COUNT && !f; i++)
		f = find_field(&spec_stage_tables[i], kv->k);
	ln_buf_reset(&p->why);
	if (f && (f->flags & F_THRESHOLD)) {
		ln_buf_addf(&p->why, "stage '%s' cannot have a threshold ('%s')",
			    spec_stage_names[s], kv->k);
	} else if (f) {
		ln_buf_addf(&p->why, "stage '%s' does not take '%s'", spec_stage_names[s], kv->k);
		if (t->n_fields > 1) {
			ln_buf_addstr(&p->why, " (it takes");
			for (i = 1; i < t->n_fields; i++)
				ln_buf_addf(&p->why, "%s %s", i > 1 ? "," : "", t->fields[i].key);
			ln_buf_addch(&p->why, ')');
		} else {
			ln_buf_addstr(&p->why, " (it takes no options)");
		}
	} else {
		ln_buf_addf(&p->why, "unknown key '%.100s' in stage '%s'", kv->k,
			    spec_stage_names[s]);
		did_you_mean(&p->why, kv->k, &t->fields[0].key, t->n_fields, sizeof(t->fields[0]));
	}
	spec_diag(p->spec, kv->km, "%s", p->why.buf);
}

static int stage_item(struct parser *p, void *arg)
{
	struct ln_validation *val = &p->spec->validation;
	struct ln_mark start = ev_mark(p);
	struct kv kvs[MAX_FIELDS];
	size_t n = 0, i;
	int stage = -1, r = 0;

	(void)arg;
	if (p->ev.type != YAML_MAPPING_START_EVENT) {
		spec_diag(p->spec, start,
			  "a validation entry takes a mapping such as { stage: rping }, not %s",
			  kind(p));
		return skip_node(p);
	}
	/* The stage may come after its options, so collect the pairs first. */
	for (;;) {
		struct ln_mark km;

		if (next(p) < 0) {
			r = -1;
			goto out;
		}
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		km = ev_mark(p);
		if (p->ev.type != YAML_SCALAR_EVENT) {
			spec_diag(p->spec, km, "a key in a validation entry must be a name, not %s",
				  kind(p));
			if (skip_node(p) < 0 || next(p) < 0 || skip_node(p) < 0) {
				r = -1;
				goto out;
			}
			continue;
		}
		if (n == MAX_FIELDS) {
			spec_diag(p->spec, km, "too many keys in a validation entry");
			if (next(p) < 0 || skip_node(p) < 0) {
				r = -1;
				goto out;
			}
			continue;
		}
		kvs[n].k = strndup((const char *)p->ev.data.scalar.value, 128);
		kvs[n].v = NULL;
		kvs[n].km = km;
		if (!kvs[n].k) {
			r = -ENOMEM;
			goto out;
		}
		n++;
		for (i = 0; i + 1 < n; i++) {
			if (!strcmp(kvs[i].k, kvs[n - 1].k)) {
				spec_diag(p->spec, km,
					  "duplicate key '%.100s' in a validation entry (first on line %u)",
					  kvs[n - 1].k, kvs[i].km.line);
				break;
			}
		}
		if (next(p) < 0) {
			r = -1;
			goto out;
		}
		kvs[n - 1].vm = ev_mark(p);
		if (i + 1 < n) {
			free((char *)kvs[n - 1].k);
			n--;
			if (skip_node(p) < 0) {
				r = -1;
				goto out;
			}
			continue;
		}
		if (p->ev.type != YAML_SCALAR_EVENT) {
			if (p->ev.type != YAML_ALIAS_EVENT)
				spec_diag(p->spec, kvs[n - 1].vm, "'%.100s' takes a single value, not %s",
					  kvs[n - 1].k, kind(p));
			kvs[n - 1].v = NULL;
			if (skip_node(p) < 0) {
				r = -1;
				goto out;
			}
			continue;
		}
		kvs[n - 1].v = malloc(p->ev.data.scalar.length + 1);
		if (!kvs[n - 1].v) {
			r = -ENOMEM;
			goto out;
		}
		memcpy((char *)kvs[n - 1].v, p->ev.data.scalar.value, p->ev.data.scalar.length + 1);
		kvs[n - 1].plain = p->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (strlen(kvs[n - 1].v) != p->ev.data.scalar.length) {
			spec_diag(p->spec, kvs[n - 1].vm, "'%.100s' holds a NUL byte", kvs[n - 1].k);
			free((char *)kvs[n - 1].v);
			kvs[n - 1].v = NULL;
		}
	}
	for (i = 0; i < n; i++) {
		size_t j;

		if (strcmp(kvs[i].k, "stage"))
			continue;
		if (!kvs[i].v)
			goto out;
		for (j = 0; spec_stage_names[j]; j++)
			if (!strcmp(spec_stage_names[j], kvs[i].v))
				stage = (int)j;
		if (stage < 0) {
			ln_buf_reset(&p->why);
			ln_buf_addf(&p->why, "unknown validation stage '%.100s'", kvs[i].v);
			if (closest(kvs[i].v, spec_stage_names, LN_STAGE_COUNT,
				    sizeof(spec_stage_names[0])))
				did_you_mean(&p->why, kvs[i].v, spec_stage_names, LN_STAGE_COUNT,
					     sizeof(spec_stage_names[0]));
			else
				ln_buf_addstr(&p->why,
					      " (stages: devices, rping, bandwidth, io, mpi, nccl)");
			spec_diag(p->spec, kvs[i].vm, "%s", p->why.buf);
			goto out;
		}
		if (p->stage_seen[stage]) {
			spec_diag(p->spec, kvs[i].vm, "stage '%s' is listed twice (first on line %u)",
				  spec_stage_names[stage], p->stage_mark[stage].line);
			goto out;
		}
		p->stage_seen[stage] = 1;
		p->stage_mark[stage] = start;
		val->present[stage] = 1;
		val->mark[stage] = start;
	}
	if (stage < 0) {
		spec_diag(p->spec, start, "missing required key 'stage' in a validation entry");
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct field *f;

		if (!strcmp(kvs[i].k, "stage"))
			continue;
		f = find_field(&spec_stage_tables[stage], kvs[i].k);
		if (!f) {
			stage_option_error(p, (enum ln_stage)stage, &kvs[i]);
			continue;
		}
		if (!kvs[i].v)
			continue;
		r = set_scalar(p, f, val, kvs[i].v, strlen(kvs[i].v), kvs[i].plain, kvs[i].vm);
		if (r < 0)
			goto out;
	}
out:
	for (i = 0; i < n; i++) {
		free((char *)kvs[i].k);
		free((char *)kvs[i].v);
	}
	return r;
}

static int h_validation(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return walk_seq(p, f->key, stage_item, NULL, NULL);
}

/* ---- ssh and the top level -------------------------------------------- */

static const struct field ssh_fields[] = {
	{ .key = "user", .type = FT_STR, .off = offsetof(struct ln_ssh_spec, user),
	  .pat = SP_USER, .def = "root",
	  .doc = "root, or a user with password-less sudo" },
	{ .key = "port", .type = FT_U16, .off = offsetof(struct ln_ssh_spec, port), .min = 1,
	  .max = 65535, .def = "22", .doc = "SSH port" },
	{ .key = "identity", .type = FT_STR, .off = offsetof(struct ln_ssh_spec, identity),
	  .pat = SP_LOCALPATH, .def = "libssh's default keys",
	  .doc = "private key file (absolute or ~/...)" },
	{ .key = "known_hosts", .type = FT_STR, .off = offsetof(struct ln_ssh_spec, known_hosts),
	  .pat = SP_LOCALPATH, .def = "~/.ssh/known_hosts", .doc = "known_hosts file" },
	{ .key = "host_key_policy", .type = FT_ENUM,
	  .off = offsetof(struct ln_ssh_spec, host_key_policy), .names = host_key_policies,
	  .def = "strict", .doc = "strict, or accept-new: record unknown keys, refuse changed ones" },
	{ .key = "jump", .type = FT_STR, .sfn = h_jump, .pat = SP_JUMP,
	  .doc = "jump host, [user@]host[:port]" },
	{ .key = "connect_timeout", .type = FT_DURATION,
	  .off = offsetof(struct ln_ssh_spec, connect_timeout_ms), .min = 100, .max = 600000,
	  .def = "10s", .doc = "bound on connecting and signing in" },
	{ .key = "timeout", .type = FT_DURATION, .off = offsetof(struct ln_ssh_spec, timeout_ms),
	  .min = 1000, .max = 86400000, .def = "120s", .doc = "bound on each remote step" },
	{ .key = "parallel", .type = FT_UINT, .off = offsetof(struct ln_ssh_spec, parallel),
	  .min = 1, .max = 1024, .def = "32", .doc = "nodes worked on at once" },
};

static const struct table ssh_table = {
	"ssh", ssh_fields, sizeof(ssh_fields) / sizeof(ssh_fields[0]),
	offsetof(struct ln_ssh_spec, mark) + 1, 0, "How llmnet reaches the nodes.", NULL, NULL,
};

static const struct field top_fields[] = {
	{ .key = "version", .type = FT_UINT, .sfn = h_version, .flags = F_REQUIRED, .min = 1,
	  .max = 1, .doc = "spec language version: 1" },
	{ .key = "cluster", .type = FT_STR, .off = offsetof(struct ln_spec, cluster),
	  .flags = F_REQUIRED, .pat = SP_CLUSTER,
	  .doc = "cluster name; scopes what llmnet owns on the nodes" },
	{ .key = "ssh", .type = FT_MAP, .off = offsetof(struct ln_spec, ssh), .sub = &ssh_table,
	  .doc = "SSH settings" },
	{ .key = "nodes", .type = FT_CUSTOM, .fn = h_nodes, .sub = &node_table,
	  .flags = F_REQUIRED, .schema_type = "list", .doc = "the nodes" },
	{ .key = "storage", .type = FT_MAP, .off = 0, .sub = &storage_table,
	  .doc = "NVMe-oF targets and initiators" },
	{ .key = "mpi", .type = FT_MAP, .off = offsetof(struct ln_spec, mpi), .sub = &mpi_table,
	  .doc = "MPI hostfile" },
	{ .key = "validation", .type = FT_CUSTOM, .fn = h_validation,
	  .schema_type = "validation", .doc = "validation stages to run" },
};

const struct table spec_top_table = {
	"the spec", top_fields, sizeof(top_fields) / sizeof(top_fields[0]), 0, 0,
	"A llmnet cluster spec, version 1.", NULL, NULL,
};

/* ---- load ------------------------------------------------------------- */

static void set_defaults(struct ln_spec *spec)
{
	struct ln_validation *v = &spec->validation;

	spec->ssh.user = "root";
	spec->ssh.port = 22;
	spec->ssh.known_hosts = "~/.ssh/known_hosts";
	spec->ssh.host_key_policy = LN_HOST_KEY_STRICT;
	spec->ssh.jump_port = 22;
	spec->ssh.connect_timeout_ms = 10000;
	spec->ssh.timeout_ms = 120000;
	spec->ssh.parallel = 32;
	spec->mpi.hostfile = "/etc/llmnet/hostfile";
	spec->mpi.format = LN_MPI_OPENMPI;
	v->rping.count = 10;
	v->rping.pairs = LN_PAIRS_RING;
	v->rping.timeout_ms = 30000;
	v->bandwidth.tool = LN_BW_IB_WRITE_BW;
	v->bandwidth.size = 1 << 20;
	v->bandwidth.pairs = LN_PAIRS_RING;
	v->bandwidth.port_base = 18515;
	v->bandwidth.timeout_ms = 60000;
	v->io.size = 256ull << 20;
	v->io.timeout_ms = 120000;
	v->mpi.timeout_ms = 120000;
	v->nccl.tool = LN_NCCL_PROBE;
	v->nccl.op = LN_NCCL_ALL_REDUCE;
	v->nccl.bytes = 1ull << 30;
	v->nccl.timeout_ms = 300000;
}

static int parse_stream(struct parser *p)
{
	struct ln_mark m;
	int r;

	if (next(p) < 0 || next(p) < 0)	/* stream start, then document start */
		return 0;
	if (p->ev.type == YAML_STREAM_END_EVENT) {
		m.line = m.col = 1;
		spec_diag(p->spec, m, "the spec is empty (it needs at least 'version: 1')");
		return 0;
	}
	if (next(p) < 0)
		return 0;
	if (p->ev.type != YAML_MAPPING_START_EVENT) {
		spec_diag(p->spec, ev_mark(p), "the spec must be a mapping (version, cluster, nodes, ...), not %s",
			  kind(p));
		return 0;
	}
	r = walk_map(p, &spec_top_table, p->spec, NULL, "the spec");
	if (r < 0)
		return r == -1 ? 0 : r;
	/* document end, then stream end or another document */
	if (next(p) < 0 || next(p) < 0)
		return 0;
	if (p->ev.type == YAML_DOCUMENT_START_EVENT)
		spec_diag(p->spec, ev_mark(p), "the spec must be one YAML document, not several");
	return 0;
}

static int cmp_diag(const void *a, const void *b)
{
	const struct diag *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Point each node's rdma, each target's namespaces at their slices of the
 * shared arrays (stable now that parsing is over). */
static void fix_pointers(struct ln_spec *spec)
{
	struct ln_spec_store *st = spec->store;
	size_t i, off = 0;

	for (i = 0; i < spec->n_nodes; i++) {
		spec->nodes[i].rdma = spec->nodes[i].n_rdma ? &st->ports[off] : NULL;
		off += spec->nodes[i].n_rdma;
	}
	off = 0;
	for (i = 0; i < spec->n_targets; i++) {
		spec->targets[i].namespaces = spec->targets[i].n_namespaces ? &st->nss[off] : NULL;
		off += spec->targets[i].n_namespaces;
	}
	spec->mpi.mca = spec->mpi.n_mca ? st->mca : NULL;
}

static void release_parse_state(struct ln_spec_store *st)
{
	free(st->node_raw);
	free(st->target_raw);
	free(st->hosts_raw);
	free(st->init_raw);
	st->node_raw = NULL;
	st->target_raw = NULL;
	st->hosts_raw = NULL;
	st->init_raw = NULL;
	ln_buf_release(&st->scratch);
}

static int load(const char *name, FILE *f, const char *data, size_t len, struct ln_spec **out,
		struct ln_buf *err)
{
	struct ln_spec *spec = NULL;
	struct ln_spec_store *st = NULL;
	struct parser p;
	size_t i, nd;
	int r;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	spec = calloc(1, sizeof(*spec));
	st = calloc(1, sizeof(*st));
	if (!spec || !st) {
		free(spec);
		free(st);
		ln_buf_addstr(err, "cannot load the spec: out of memory");
		return -ENOMEM;
	}
	spec->store = st;
	ln_buf_init(&st->scratch, 1 << 16);
	ln_buf_init(&p.why, 1 << 16);
	spec->path = spec_arena_strndup(&st->arena, name, strlen(name));
	if (!spec->path) {
		r = -ENOMEM;
		goto out;
	}
	set_defaults(spec);
	p.spec = spec;
	p.st = st;
	if (!yaml_parser_initialize(&p.yp)) {
		r = -ENOMEM;
		goto out;
	}
	if (f)
		yaml_parser_set_input_file(&p.yp, f);
	else
		yaml_parser_set_input_string(&p.yp, (const unsigned char *)data, len);
	r = parse_stream(&p);
	if (p.have)
		yaml_event_delete(&p.ev);
	yaml_parser_delete(&p.yp);
	if (r < 0)
		goto out;
	fix_pointers(spec);
	/* Even after syntax errors the cross-reference pass runs, so one run
	 * shows every problem; it tolerates the missing pieces. Only a YAML
	 * error leaves too little to check. */
	if (!p.dead) {
		r = spec_check(spec);
		if (r < 0)
			goto out;
	}
	nd = st->n_diags;
	if (nd) {
		qsort(st->diags, nd, sizeof(*st->diags), cmp_diag);
		for (i = 0; i < nd; i++) {
			const struct diag *d = &st->diags[i];

			/* An unknown version makes every other message a guess. */
			if (st->version_bad && !strstr(d->msg, "spec version") &&
			    !strstr(d->msg, "yaml syntax error"))
				continue;
			ln_buf_addf(err, "%s:%u:%u: %s\n", name, d->line, d->col, d->msg);
		}
		if (st->n_dropped && !st->version_bad)
			ln_buf_addf(err, "%s: %zu more problems not shown\n", name, st->n_dropped);
		r = -LN_ESPEC;
		goto out;
	}
	r = 0;
out:
	if (r == -ENOMEM)
		ln_buf_addf(err, "cannot load '%s': out of memory\n", name);
	release_parse_state(st);
	ln_buf_release(&p.why);
	free(p.ne.rdma);
	free(p.te.ns);
	free(p.te.hosts);
	if (r < 0)
		ln_spec_free(spec);
	else
		*out = spec;
	return r;
}

int ln_spec_load_buf(const char *name, const char *data, size_t len, struct ln_spec **out,
		     struct ln_buf *err)
{
	return load(name, NULL, data, len, out, err);
}

int ln_spec_load(const char *path, struct ln_spec **out, struct ln_buf *err)
{
	struct stat sb;
	FILE *f;
	int r;

	*out = NULL;
	/* libyaml reads the file in chunks: the spec is never held whole. */
	f = fopen(path, "rb");
	if (!f) {
		r = -errno;
		ln_buf_addf(err, "cannot open spec '%s': %s\n", path, strerror(errno));
		return r;
	}
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fclose(f);
		ln_buf_addf(err, "cannot open spec '%s': %s\n", path, strerror(EISDIR));
		return -EISDIR;
	}
	r = load(path, f, NULL, 0, out, err);
	fclose(f);
	return r;
}

void ln_spec_free(struct ln_spec *spec)
{
	struct ln_spec_store *st;
	size_t i;

	if (!spec)
		return;
	st = spec->store;
	if (st) {
		for (i = 0; i < st->n_diags && i < 1000; i++)
			free(st->diags[i].msg);
		free(st->diags);
		free(st->ports);
		free(st->nss);
		free(st->mca);
		free(st->host_idx);
		spec_idxmap_release(&st->node_by_name);
		spec_idxmap_release(&st->target_by_nqn);
		release_parse_state(st);
		spec_arena_release(&st->arena);
		free(st);
	}
	free(spec->nodes);
	free(spec->targets);
	free(spec->initiators);
	free(spec);
}

const char *ln_stage_name(enum ln_stage s)
{
	return s < LN_STAGE_COUNT ? spec_stage_names[s] : "?";
}

const char *ln_transport_name(enum ln_transport t)
{
	return t == LN_TRANSPORT_RDMA ? "rdma" : "tcp";
}

const char *ln_link_layer_name(enum ln_link_layer l)
{
	return link_layers[l <= LN_LINK_ETHERNET ? l : 0];
}
