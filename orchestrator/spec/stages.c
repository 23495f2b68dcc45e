/* SPDX-License-Identifier: MIT */
/*
 * The validation section: a list of stages, each a mapping with its
 * "stage" key and that stage's options. The stage may be written after
 * its options, so an entry's pairs are collected first, then judged
 * against the stage's table (grammar.c): an option of another stage, or
 * a threshold on a stage that has none, gets a message of its own.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/places.h"
#include "common/util.h"
#include "orchestrator/spec/parser.h"
#include "orchestrator/spec/units.h"

/* bandwidth.min: a rate, or "F of rate" (0 < F <= 1). */
int spec_parse_bw_min(struct parser *p, const struct field *f, void *obj, const char *v,
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


/* nccl.bytes: one size, or a sweep A..B that doubles from A up to B
 * (nccl-tests' -b A -e B -f 2), so B must be A times a power of two and
 * the sweep holds at most LN_NCCL_MAX_SWEEP sizes. */
static int one_size(struct parser *p, const struct field *f, const char *v, uint64_t *u,
		    struct ln_mark m)
{
	char a[32], b[32];

	ln_buf_reset(&p->why);
	if (ln_units_parse_size(v, u, &p->why) < 0) {
		spec_diag(p->spec, m, "'%s': %s", f->key, p->why.buf);
		return -1;
	}
	if (*u < (uint64_t)f->min || *u > (uint64_t)f->max) {
		ln_units_format_size((uint64_t)f->min, a);
		ln_units_format_size((uint64_t)f->max, b);
		spec_diag(p->spec, m, "'%s' must be from %s to %s, not '%.100s'", f->key, a, b, v);
		return -1;
	}
	return 0;
}

int spec_parse_nccl_bytes(struct parser *p, const struct field *f, void *obj, const char *v,
			  struct ln_mark m)
{
	struct ln_validation *val = obj;
	const char *dots = strstr(v, "..");
	uint64_t lo, hi, sz;
	char first[64], a[32], b[32];
	unsigned n = 1;

	if (!dots) {
		if (one_size(p, f, v, &hi, m) == 0)
			val->nccl.bytes = hi;
		return 0;
	}
	if ((size_t)(dots - v) >= sizeof(first) || !dots[2]) {
		spec_diag(p->spec, m, "'%s' takes a size or a sweep 'A..B' (8B..1GiB), not '%.100s'",
			  f->key, v);
		return 0;
	}
	memcpy(first, v, (size_t)(dots - v));
	first[dots - v] = '\0';
	if (one_size(p, f, first, &lo, m) < 0 || one_size(p, f, dots + 2, &hi, m) < 0)
		return 0;
	ln_units_format_size(lo, a);
	ln_units_format_size(hi, b);
	if (lo >= hi) {
		spec_diag(p->spec, m, "'%s: %.100s': a sweep's first size must be below its last "
			  "(%s is not below %s); give one size for one", f->key, v, a, b);
		return 0;
	}
	for (sz = lo; sz < hi; sz *= 2)
		n++;
	if (sz != hi) {
		ln_units_format_size(sz / 2, b);
		ln_units_format_size(sz, first);
		spec_diag(p->spec, m, "'%s: %.100s': a sweep doubles from %s, so its last size "
			  "must be %s times a power of two (%s or %s)", f->key, v, a, a, b, first);
		return 0;
	}
	if (n > LN_NCCL_MAX_SWEEP) {
		spec_diag(p->spec, m, "'%s: %.100s' is a sweep of %u sizes, more than %d: start "
			  "higher or end lower", f->key, v, n, LN_NCCL_MAX_SWEEP);
		return 0;
	}
	val->nccl.min_bytes = lo;
	val->nccl.bytes = hi;
	return 0;
}

/* nccl.scaling: node counts, each 1-4096, ascending; at most
 * LN_NCCL_MAX_SCALING of them (each count is one more mpirun). */
static int scaling_item(struct parser *p, const struct field *f)
{
	struct ln_validation *v = &p->spec->validation;
	const char *s = p->ev.type == YAML_SCALAR_EVENT ? (const char *)p->ev.data.scalar.value : "";
	struct ln_mark m = spec_ev_mark(p);
	unsigned long n;
	char *end;

	if (p->ev.type != YAML_SCALAR_EVENT) {
		spec_diag(p->spec, m, "'%s' lists node counts such as [2, 4, 8], not %s", f->key,
			  spec_kind(p));
		return spec_skip_node(p);
	}
	n = strtoul(s, &end, 10);
	if (!*s || *end || *s == '-' || *s == '+' || n < 1 || n > 4096) {
		spec_diag(p->spec, m, "'%s' takes node counts from 1 to 4096, not '%.100s'", f->key,
			  s);
		return 0;
	}
	if (v->nccl.n_scaling && n <= v->nccl.scaling[v->nccl.n_scaling - 1]) {
		spec_diag(p->spec, m, "'%s' counts must ascend: %lu is not above %u", f->key, n,
			  v->nccl.scaling[v->nccl.n_scaling - 1]);
		return 0;
	}
	if (v->nccl.n_scaling == LN_NCCL_MAX_SCALING) {
		spec_diag(p->spec, m, "'%s' holds at most %d node counts (each is a run)", f->key,
			  LN_NCCL_MAX_SCALING);
		return 0;
	}
	v->nccl.scaling[v->nccl.n_scaling++] = (unsigned)n;
	return 0;
}

int spec_parse_nccl_scaling(struct parser *p, const struct field *f, void *obj)
{
	struct ln_validation *v = obj;

	v->nccl.n_scaling = 0;
	v->nccl.scaling_mark = spec_ev_mark(p);
	return spec_walk_seq(p, f, scaling_item, "list two node counts or more, or leave the "
			     "key out");
}

/* The first len bytes of v as a plain decimal (digits and '.': 1.5, .5),
 * NAN when they are not exactly one. */
static double plain_decimal(const char *v, size_t len)
{
	char *end;
	double x;

	if (!len || strspn(v, "0123456789.") != len)
		return NAN;
	x = strtod(v, &end);
	return end == v + len ? x : NAN;
}

/* nccl.min_efficiency: a fraction 0 < x <= 1 (0.9), or a percentage
 * above 0 and at most 100 (90%). */
int spec_parse_nccl_efficiency(struct parser *p, const struct field *f, void *obj,
			       const char *v, struct ln_mark m)
{
	struct ln_validation *val = obj;
	size_t n = strlen(v);
	int pct = n && v[n - 1] == '%';
	double x = plain_decimal(v, n - (size_t)pct);

	if (pct)
		x /= 100.0;
	if (isnan(x) || !(x > 0.0) || x > 1.0) {
		spec_diag(p->spec, m, "'%s' takes a fraction above 0 and at most 1 (0.9) or a "
			  "percentage (90%%), not '%.100s'", f->key, v);
		return 0;
	}
	val->nccl.min_efficiency = x;
	return 0;
}

/* bandwidth.min_msg_rate: a plain decimal above zero, in Mpps. */
int spec_parse_bw_msg_rate(struct parser *p, const struct field *f, void *obj, const char *v,
			   struct ln_mark m)
{
	struct ln_validation *val = obj;
	double x = plain_decimal(v, strlen(v));

	if (isnan(x) || !(x > 0.0) || !isfinite(x)) {
		spec_diag(p->spec, m, "'%s' takes a message rate in Mpps above 0 (1.5), not "
			  "'%.100s'", f->key, v);
		return 0;
	}
	val->bandwidth.min_msg_rate = x;
	return 0;
}

/* A pair of a validation entry, collected before its stage is known:
 * k and v are the caller's to free; v is NULL when not a usable value. */
struct kv {
	const char *k, *v;
	struct ln_mark km, vm;
	int plain;
	long env_from;		/* a mapping read into nccl.env from this entry; -1 none */
	int scaling_read;	/* a list read into nccl.scaling */
};

/* Report an option that stage s does not take: a threshold on a stage
 * without one, another stage's option, or an unknown key. tables: the
 * stage tables by enum ln_stage (the validation field's sub). */
static void stage_option_error(struct parser *p, const struct table *tables, enum ln_stage s,
			       const struct kv *kv)
{
	const struct table *t = &tables[s];
	const struct field *f = NULL;
	const struct refused_key *rk;
	size_t i, own = 0;

	for (rk = t->refused; rk && rk->key; rk++)
		if (!strcmp(rk->key, kv->k)) {
			spec_diag(p->spec, kv->km, "'%s' in %s is not supported yet: %s", kv->k,
				  t->what, rk->why);
			return;
		}
	for (i = 0; i < LN_STAGE_COUNT && !f; i++)
		f = spec_find_field(&tables[i], kv->k);
	ln_buf_reset(&p->why);
	for (i = 1; i < t->n_fields; i++)
		own += (t->fields[i].flags & F_THRESHOLD) != 0;
	if (f && (f->flags & F_THRESHOLD) && own) {
		/* another stage's threshold on a stage that has its own */
		ln_buf_addf(&p->why, "stage '%s' does not take '%s' (its thresholds:",
			    spec_stage_names[s], kv->k);
		for (i = 1; i < t->n_fields; i++)
			if (t->fields[i].flags & F_THRESHOLD)
				ln_buf_addf(&p->why, " %s%s", t->fields[i].key, --own ? "," : ")");
	} else if (f && (f->flags & F_THRESHOLD)) {
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
		spec_did_you_mean(&p->why, kv->k, &t->fields[0].key, t->n_fields,
				  sizeof(t->fields[0]));
	}
	spec_diag(p->spec, kv->km, "%s", p->why.buf);
}

/* One key and its value of a validation entry, the key's event current,
 * appended to kvs[*n] unless it is a duplicate or not a name. Returns 0,
 * or < 0 when reading must stop. */
static int read_pair(struct parser *p, struct kv *kvs, size_t *n)
{
	struct ln_mark km = spec_ev_mark(p);
	struct kv *kv;
	size_t i;

	if (p->ev.type != YAML_SCALAR_EVENT) {
		spec_diag(p->spec, km, "a key in a validation entry must be a name, not %s",
			  spec_kind(p));
		return spec_skip_pair(p);
	}
	if (*n == MAX_FIELDS) {
		spec_diag(p->spec, km, "too many keys in a validation entry");
		return spec_skip_value(p);
	}
	kv = &kvs[*n];
	kv->k = strndup((const char *)p->ev.data.scalar.value, 128);
	kv->v = NULL;
	kv->km = km;
	kv->plain = 0;
	kv->env_from = -1;
	kv->scaling_read = 0;
	if (!kv->k)
		return -ENOMEM;
	(*n)++;
	for (i = 0; i + 1 < *n; i++) {
		if (!strcmp(kvs[i].k, kv->k)) {
			spec_diag(p->spec, km,
				  "duplicate key '%.100s' in a validation entry (first on line %u)",
				  kv->k, kvs[i].km.line);
			break;
		}
	}
	if (spec_next(p) < 0)
		return -1;
	kv->vm = spec_ev_mark(p);
	if (i + 1 < *n) {
		free((char *)kv->k);
		(*n)--;
		return spec_skip_node(p);
	}
	/* the one mapping a stage takes, nccl's env, is read where it stands
	 * (its entries checked at their own line:col); in another stage,
	 * set_options() refuses the key */
	if (p->ev.type == YAML_MAPPING_START_EVENT && !strcmp(kv->k, "env")) {
		kv->env_from = (long)p->spec->validation.nccl.n_env;
		return spec_parse_nccl_env(p, spec_find_field(&spec_stage_tables[LN_STAGE_NCCL],
							      "env"), &p->spec->validation);
	}
	/* the one list, nccl's scaling, likewise */
	if (p->ev.type == YAML_SEQUENCE_START_EVENT && !strcmp(kv->k, "scaling")) {
		kv->scaling_read = 1;
		return spec_parse_nccl_scaling(p, spec_find_field(&spec_stage_tables[LN_STAGE_NCCL],
								  "scaling"), &p->spec->validation);
	}
	if (p->ev.type != YAML_SCALAR_EVENT) {
		if (p->ev.type != YAML_ALIAS_EVENT)
			spec_diag(p->spec, kv->vm, "'%.100s' takes a single value, not %s", kv->k,
				  spec_kind(p));
		return spec_skip_node(p);
	}
	kv->v = malloc(p->ev.data.scalar.length + 1);
	if (!kv->v)
		return -ENOMEM;
	memcpy((char *)kv->v, p->ev.data.scalar.value, p->ev.data.scalar.length + 1);
	kv->plain = p->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (strlen(kv->v) != p->ev.data.scalar.length) {
		spec_diag(p->spec, kv->vm, "'%.100s' holds a NUL byte", kv->k);
		free((char *)kv->v);
		kv->v = NULL;
	}
	return 0;
}

/* The stage an entry names, recorded as present; -1 when it names none,
 * an unknown one or one already listed (reported). */
static int pick_stage(struct parser *p, const struct kv *kvs, size_t n, struct ln_mark start)
{
	struct ln_validation *val = &p->spec->validation;
	const struct kv *kv;
	size_t i;
	int stage = -1;

	for (i = 0; i < n && strcmp(kvs[i].k, "stage"); i++)
		;
	if (i == n) {
		spec_diag(p->spec, start, "missing required key 'stage' in a validation entry");
		return -1;
	}
	kv = &kvs[i];
	if (!kv->v)
		return -1;
	for (i = 0; spec_stage_names[i]; i++)
		if (!strcmp(spec_stage_names[i], kv->v))
			stage = (int)i;
	if (stage < 0) {
		ln_buf_reset(&p->why);
		ln_buf_addf(&p->why, "unknown validation stage '%.100s'", kv->v);
		if (spec_closest(kv->v, spec_stage_names, LN_STAGE_COUNT,
				 sizeof(spec_stage_names[0])))
			spec_did_you_mean(&p->why, kv->v, spec_stage_names, LN_STAGE_COUNT,
					  sizeof(spec_stage_names[0]));
		else
			ln_buf_addstr(&p->why, " (stages: devices, rping, bandwidth, latency, io, mpi, nccl, "
				      "access)");
		spec_diag(p->spec, kv->vm, "%s", p->why.buf);
		return -1;
	}
	if (p->stage_seen[stage]) {
		spec_diag(p->spec, kv->vm, "stage '%s' is listed twice (first on line %u)",
			  spec_stage_names[stage], p->stage_mark[stage].line);
		return -1;
	}
	p->stage_seen[stage] = 1;
	p->stage_mark[stage] = start;
	val->present[stage] = 1;
	val->mark[stage] = start;
	return stage;
}

/* Set the entry's options (every pair but "stage") by the stage's table. */
static int set_options(struct parser *p, const struct table *tables, enum ln_stage stage,
		       const struct kv *kvs, size_t n)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		const struct field *f;

		if (!strcmp(kvs[i].k, "stage"))
			continue;
		f = spec_find_field(&tables[stage], kvs[i].k);
		if (!f) {
			stage_option_error(p, tables, stage, &kvs[i]);
			if (kvs[i].env_from >= 0)	/* not this stage's: forgotten */
				p->spec->validation.nccl.n_env = (size_t)kvs[i].env_from;
			if (kvs[i].scaling_read)
				p->spec->validation.nccl.n_scaling = 0;
			continue;
		}
		if (!kvs[i].v)
			continue;
		if (f->type == FT_CUSTOM) {
			spec_diag(p->spec, kvs[i].vm, "'%s' takes %s, not a single value", f->key,
				  f->fn == spec_parse_nccl_scaling ? "a list of node counts such as "
				  "[2, 4, 8]" : "a mapping of name: value");
			continue;
		}
		r = spec_set_scalar(p, f, &p->spec->validation, kvs[i].v, strlen(kvs[i].v),
				    kvs[i].plain, kvs[i].vm);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The pair of an entry named key, or NULL. */
static const struct kv *find_kv(const struct kv *kvs, size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(kvs[i].k, key))
			return &kvs[i];
	return NULL;
}

/* What only nccl-tests takes, refused for llmnet's probe. */
static void probe_rules(struct parser *p, const struct kv *kvs, size_t n)
{
	static const char *const tests_only[] = { "tests_dir", "scope", "scaling",
						  "min_efficiency", "launcher", "nccl_lib",
						  "cuda_lib" };
	const struct ln_validation *v = &p->spec->validation;
	const struct kv *kv;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tests_only); i++)
		if ((kv = find_kv(kvs, n, tests_only[i])))
			spec_diag(p->spec, kv->km, "'%s' is for tool 'nccl-tests' and llmnet's "
				  "probe does not use it: remove it, or set tool: nccl-tests",
				  tests_only[i]);
	kv = find_kv(kvs, n, "op");
	if (kv && kv->v && v->nccl.op > LN_NCCL_REDUCE)
		spec_diag(p->spec, kv->vm, "llmnet's probe measures all_reduce, all_gather, "
			  "reduce_scatter, broadcast and reduce, not '%.100s': set tool: nccl-tests "
			  "(its %.100s_perf)", kv->v, kv->v);
}

/* tool all_reduce_perf, the old name: nccl-tests, op all_reduce, scope
 * node, with a warning naming that form. What it never took is refused. */
static void old_name_rules(struct parser *p, const struct kv *kvs, size_t n,
			   const struct kv *tool)
{
	struct ln_validation *v = &p->spec->validation;
	const struct kv *op = find_kv(kvs, n, "op"), *kv;

	spec_warn(p->spec, tool->vm, "tool 'all_reduce_perf' is the old name of 'tool: "
		  "nccl-tests, op: all_reduce, scope: node': write that");
	v->nccl.tool = LN_NCCL_TESTS;
	v->nccl.scope = LN_NCCL_SCOPE_NODE;
	if (op && op->v && v->nccl.op != LN_NCCL_ALL_REDUCE)
		spec_diag(p->spec, op->vm, "tool 'all_reduce_perf' measures all_reduce only, not "
			  "'%.100s': write tool: nccl-tests, op: %.100s", op->v, op->v);
	if ((kv = find_kv(kvs, n, "scope")))
		spec_diag(p->spec, kv->km, "tool 'all_reduce_perf' runs each node alone: write "
			  "tool: nccl-tests with its 'scope'");
}

/* launcher none: the agent starts nccl-tests itself, one process per
 * node, so no sweep over node counts; nccl_lib and cuda_lib (its
 * LD_LIBRARY_PATH, which the agent alone can set) only then, each a
 * directory judged as tests_dir is and without the list separator ':'. */
static void launcher_rules(struct parser *p, const struct kv *kvs, size_t n)
{
	struct ln_validation *v = &p->spec->validation;
	const struct {
		const char *key, *dir;
		struct ln_mark *mark;
	} libs[] = {
		{ "nccl_lib", v->nccl.nccl_lib, &v->nccl.nccl_lib_mark },
		{ "cuda_lib", v->nccl.cuda_lib, &v->nccl.cuda_lib_mark },
	};
	const struct kv *kv;
	size_t i;

	if ((kv = find_kv(kvs, n, "launcher")))
		v->nccl.launcher_mark = kv->vm;
	if (v->nccl.launcher == LN_NCCL_LAUNCHER_NONE && (kv = find_kv(kvs, n, "scaling")))
		spec_diag(p->spec, kv->km, "'scaling' reruns one mpirun on more and more nodes, "
			  "but launcher none starts each node alone: remove it, or set launcher: "
			  "mpirun");
	for (i = 0; i < ARRAY_SIZE(libs); i++) {
		const char *dir = libs[i].dir;
		struct ln_buf why = LN_BUF_INIT;

		if (!(kv = find_kv(kvs, n, libs[i].key)))
			continue;
		*libs[i].mark = kv->vm;
		if (v->nccl.launcher != LN_NCCL_LAUNCHER_NONE)
			spec_diag(p->spec, kv->km, "'%s' is for launcher none: mpirun passes no "
				  "LD_LIBRARY_PATH (it loads code), so set launcher: none or remove "
				  "it", libs[i].key);
		else if (dir && dir[0] == '/' && strchr(dir, ':'))
			spec_diag(p->spec, kv->vm, "'%s' '%s' holds ':', which LD_LIBRARY_PATH "
				  "reads as two directories", libs[i].key, dir);
		else if (dir && dir[0] == '/' && ln_tests_dir_check(dir, &why) < 0)
			spec_diag(p->spec, kv->vm, "'%s' %s", libs[i].key, why.buf);
		ln_buf_release(&why);
	}
}

/* tool nccl-tests: from tests_dir only; at scope node without the NCCL
 * variables unless launcher none (else the agent starts it directly, with
 * no environment), and without a node-count sweep. */
static void tests_rules(struct parser *p, const struct kv *kvs, size_t n, const struct kv *tool)
{
	static const char *const cluster_only[] = { "socket_ifname", "env", "scaling" };
	struct ln_validation *v = &p->spec->validation;
	const struct kv *dir = find_kv(kvs, n, "tests_dir"), *kv;
	struct ln_buf why = LN_BUF_INIT;
	size_t i;

	if (dir)
		v->nccl.tests_dir_mark = dir->vm;
	if (!dir)
		spec_diag(p->spec, tool->vm, "tool '%s' needs 'tests_dir': the absolute directory "
			  "that holds nccl-tests' programs on every node, which llmnet runs from "
			  "there only", tool->v);
	else if (v->nccl.tests_dir && v->nccl.tests_dir[0] == '/' &&
		 ln_tests_dir_check(v->nccl.tests_dir, &why) < 0)
		spec_diag(p->spec, dir->vm, "'tests_dir' %s", why.buf);
	ln_buf_release(&why);
	launcher_rules(p, kvs, n);
	for (i = 0; v->nccl.scope == LN_NCCL_SCOPE_NODE && v->nccl.launcher != LN_NCCL_LAUNCHER_NONE &&
		    i < ARRAY_SIZE(cluster_only); i++)
		if ((kv = find_kv(kvs, n, cluster_only[i])))
			spec_diag(p->spec, kv->km, "'%s' is for scope cluster: at scope node the "
				  "agent starts nccl-tests itself, without the variables mpirun "
				  "passes and on one node, so remove it (or set scope: cluster)",
				  cluster_only[i]);
	if (v->nccl.scope == LN_NCCL_SCOPE_CLUSTER && v->nccl.n_scaling == 1)
		spec_diag(p->spec, v->nccl.scaling_mark, "'scaling' compares node counts: list "
			  "two or more, such as [2, 4]");
	if ((kv = find_kv(kvs, n, "min_efficiency")) && !v->nccl.n_scaling)
		spec_diag(p->spec, kv->km, "'min_efficiency' judges the 'scaling' sweep: list its "
			  "node counts (scaling: [2, 4, 8]), or remove it");
}

/* nccl's tool and the keys that go with it: nccl-tests runs only from a
 * declared directory, which means nothing to llmnet's probe; what a tool
 * cannot be given is refused, not ignored. */
static void nccl_tool_rules(struct parser *p, const struct kv *kvs, size_t n)
{
	const struct kv *tool = find_kv(kvs, n, "tool");

	if (tool && (!tool->v || (strcmp(tool->v, "probe") && strcmp(tool->v, "all_reduce_perf") &&
				  strcmp(tool->v, "nccl-tests"))))
		return;	/* its own error was reported */
	if (p->spec->validation.nccl.tool == LN_NCCL_PROBE) {
		probe_rules(p, kvs, n);
		return;
	}
	if (p->spec->validation.nccl.tool == LN_NCCL_ALL_REDUCE_PERF)
		old_name_rules(p, kvs, n, tool);
	tests_rules(p, kvs, n, tool);
}

/* A pairwise stage's perftest_dir is judged as nccl's tests_dir is: not
 * llmnet's own directory, and short enough for a node path with the
 * program's name. */
static void perftest_dir_rules(struct parser *p, enum ln_stage stage, const struct kv *kvs,
			       size_t n)
{
	struct ln_validation *v = &p->spec->validation;
	const struct kv *dir = find_kv(kvs, n, "perftest_dir");
	const char *d = stage == LN_STAGE_BANDWIDTH ? v->bandwidth.perftest_dir :
			v->latency.perftest_dir;
	struct ln_buf why = LN_BUF_INIT;

	if (!dir)
		return;
	if (stage == LN_STAGE_BANDWIDTH)
		v->bandwidth.perftest_dir_mark = dir->vm;
	else
		v->latency.perftest_dir_mark = dir->vm;
	if (d && d[0] == '/' && ln_tests_dir_check(d, &why) < 0)
		spec_diag(p->spec, dir->vm, "'perftest_dir' %s", why.buf);
	ln_buf_release(&why);
}

static int stage_item(struct parser *p, const struct field *f)
{
	struct ln_mark start = spec_ev_mark(p);
	struct kv kvs[MAX_FIELDS];
	size_t n = 0, i;
	int stage, r = 0;

	if (p->ev.type != YAML_MAPPING_START_EVENT) {
		spec_diag(p->spec, start,
			  "a validation entry takes a mapping such as { stage: rping }, not %s",
			  spec_kind(p));
		return spec_skip_node(p);
	}
	for (;;) {
		r = spec_next(p);
		if (r < 0 || p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		r = read_pair(p, kvs, &n);
		if (r < 0)
			break;
	}
	if (!r) {
		stage = pick_stage(p, kvs, n, start);
		if (stage >= 0)
			r = set_options(p, f->sub, (enum ln_stage)stage, kvs, n);
		if (!r && stage == LN_STAGE_NCCL)
			nccl_tool_rules(p, kvs, n);
		if (!r && (stage == LN_STAGE_BANDWIDTH || stage == LN_STAGE_LATENCY))
			perftest_dir_rules(p, (enum ln_stage)stage, kvs, n);
	}
	for (i = 0; i < n; i++) {
		free((char *)kvs[i].k);
		free((char *)kvs[i].v);
	}
	return r;
}

int spec_parse_validation(struct parser *p, const struct field *f, void *obj)
{
	(void)obj;
	return spec_walk_seq(p, f, stage_item, NULL);
}
