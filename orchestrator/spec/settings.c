/* SPDX-License-Identifier: MIT */
/*
 * The cluster-wide settings that are not plain scalars: the spec's
 * version (an unknown one silences every other message), ssh.jump
 * ("[user@]host[:port]", split and checked part by part), mpi.mca (a
 * mapping of Open MPI parameters, each name and value checked against
 * its pattern: both reach mpirun's command line, which runs as root on
 * every node, so a name must pass common/mca_policy.c, the policy the
 * agent applies again) and the nccl stage's env (a mapping of NCCL_*
 * variables the NCCL probe sets on every rank: common/nccl_env.c, which
 * the agent applies again). The check pass holds the two mappings' rules
 * across keys (each key once, nccl.env's size), at the end of this file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/mca_policy.h"
#include "common/nccl_env.h"
#include "orchestrator/spec/check.h"
#include "orchestrator/spec/parser.h"

/* ---- version ---------------------------------------------------------- */

int spec_parse_version(struct parser *p, const struct field *f, void *obj, const char *v,
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

/* ---- ssh -------------------------------------------------------------- */

/* "[user@]host[:port]"; an IPv6 host is written in brackets. */
int spec_parse_jump(struct parser *p, const struct field *f, void *obj, const char *v,
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
	if (colon && (spec_parse_int(colon + 1, &port) < 0 || port < 1 || port > 65535)) {
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

/* ---- mpi -------------------------------------------------------------- */

/* Walk f's mapping into its struct, keeping where key's value is in *at. */
static int walk_keeping(struct parser *p, const struct field *f, void *obj, const char *key,
			struct ln_mark *at)
{
	const struct field *kf = spec_find_field(f->sub, key);
	struct ln_mark vm[MAX_FIELDS];
	int r;

	memset(vm, 0, sizeof(vm));
	r = spec_walk_map(p, f->sub, spec_at(obj, f->off), vm, f->key);
	if (kf)
		*at = vm[kf - f->sub->fields];
	return r;
}

int spec_parse_mpi(struct parser *p, const struct field *f, void *obj)
{
	struct ln_mpi_spec *mpi = spec_at(obj, f->off);

	return walk_keeping(p, f, obj, "hostfile", &mpi->hostfile_mark);
}

/* The slurm mapping, keeping where its node's value is (check_slurm.c
 * reports an unknown node there). */
int spec_parse_slurm(struct parser *p, const struct field *f, void *obj)
{
	struct ln_slurm_spec *s = spec_at(obj, f->off);

	return walk_keeping(p, f, obj, "node", &s->node_mark);
}

/* The checks of a mapping of NAME: value (mpi.mca, nccl.env): each
 * failure appends its reason to why. */
struct setting_rules {
	const char *what;	/* in messages: "mca", "nccl.env" */
	int (*key_check)(const char *k, struct ln_buf *why);
	int (*value_check)(const char *k, const char *v, struct ln_buf *why);
};

/* The mapping at p into *arr (n, alloc as GROW keeps them), each name and
 * value checked where it stands (file:line:col). */
static int parse_settings(struct parser *p, const struct field *f,
			  const struct setting_rules *rules, struct ln_setting **arr, size_t *n,
			  size_t *alloc)
{
	struct ln_spec_store *st = p->st;

	if (p->ev.type != YAML_MAPPING_START_EVENT) {
		spec_diag(p->spec, spec_ev_mark(p),
			  "'%s' takes a mapping of name: value, not %s", f->key, spec_kind(p));
		return spec_skip_node(p);
	}
	for (;;) {
		struct ln_setting *set;
		struct ln_mark km;
		const char *k, *v;

		if (spec_next(p) < 0)
			return -1;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		km = spec_ev_mark(p);
		if (p->ev.type != YAML_SCALAR_EVENT) {
			spec_diag(p->spec, km, "an %s key must be a name, not %s", rules->what,
				  spec_kind(p));
			if (spec_skip_pair(p) < 0)
				return -1;
			continue;
		}
		set = GROW(*arr, *n, *alloc);
		if (!set)
			return -ENOMEM;
		k = spec_arena_strndup(&st->arena, (const char *)p->ev.data.scalar.value,
				       p->ev.data.scalar.length);
		if (!k)
			return -ENOMEM;
		set->key = k;
		set->mark = km;
		ln_buf_reset(&p->why);
		if (rules->key_check(k, &p->why) < 0)
			spec_diag(p->spec, km, "%s", p->why.buf);
		if (spec_next(p) < 0)
			return -1;
		if (p->ev.type != YAML_SCALAR_EVENT) {
			spec_diag(p->spec, spec_ev_mark(p), "%s '%.100s' takes a single value, not %s",
				  rules->what, k, spec_kind(p));
			if (spec_skip_node(p) < 0)
				return -1;
			continue;
		}
		v = spec_arena_strndup(&st->arena, (const char *)p->ev.data.scalar.value,
				       p->ev.data.scalar.length);
		if (!v)
			return -ENOMEM;
		set->value = v;
		ln_buf_reset(&p->why);
		if (strlen(v) != p->ev.data.scalar.length || rules->value_check(k, v, &p->why) < 0) {
			if (!p->why.len)
				ln_buf_addf(&p->why, "%s value for '%.100s' holds a NUL byte",
					    rules->what, k);
			spec_diag(p->spec, spec_ev_mark(p), "%s", p->why.buf);
		}
		(*n)++;
	}
}

static int mca_key_check(const char *k, struct ln_buf *why)
{
	if (spec_pattern_check(SP_MCA_KEY, "mca", k, why) < 0)
		return -1;
	return ln_mca_check(k, LN_OMPI_ANY, why);
}

static int mca_value_check(const char *k, const char *v, struct ln_buf *why)
{
	return spec_pattern_check(SP_MCA_VALUE, k, v, why);
}

int spec_parse_mca(struct parser *p, const struct field *f, void *obj)
{
	static const struct setting_rules rules = { "mca", mca_key_check, mca_value_check };
	struct ln_mpi_spec *mpi = obj;

	return parse_settings(p, f, &rules, &p->st->mca, &mpi->n_mca, &p->st->alloc_mca);
}

static int nccl_value_check(const char *k, const char *v, struct ln_buf *why)
{
	return spec_pattern_check(SP_NCCL_VALUE, k, v, why);
}

int spec_parse_nccl_env(struct parser *p, const struct field *f, void *obj)
{
	static const struct setting_rules rules = { "nccl.env", ln_nccl_env_check,
						    nccl_value_check };
	struct ln_validation *v = obj;

	return parse_settings(p, f, &rules, &p->st->nccl_env, &v->nccl.n_env,
			      &p->st->alloc_nccl_env);
}

/* ---- each key once (the check pass) ----------------------------------- */

/* Settings by key. */
static int cmp_setting(const void *c, uint32_t a, uint32_t b)
{
	const struct ln_setting *m = c;

	return strcmp(m[a].key ? m[a].key : "", m[b].key ? m[b].key : "");
}

/* A NAME: value mapping (mpi.mca, nccl.env) names each key once. */
static int check_keys_once(struct ln_spec *spec, const struct ln_setting *set, size_t n,
			   const char *what)
{
	uint32_t *order;
	size_t k;

	if (!n)
		return 0;
	order = malloc(n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	spec_sort_idx(order, n, 0, cmp_setting, set);
	for (k = 1; k < n; k++)
		if (spec_streq(set[order[k - 1]].key, set[order[k]].key))
			spec_diag(spec, set[order[k]].mark, "duplicate %s key '%s' (first on line %u)",
				  what, set[order[k]].key, set[order[k - 1]].mark.line);
	free(order);
	return 0;
}

int spec_check_settings(struct ln_spec *spec)
{
	const struct ln_validation *v = &spec->validation;
	int r = check_keys_once(spec, spec->mpi.mca, spec->mpi.n_mca, "mca");

	if (!r)
		r = check_keys_once(spec, v->nccl.env, v->nccl.n_env, "nccl.env");
	if (!r && v->nccl.n_env > LN_NCCL_ENV_MAX)
		spec_diag(spec, v->nccl.env[LN_NCCL_ENV_MAX].mark,
			  "nccl.env sets more than %d variables", LN_NCCL_ENV_MAX);
	return r;
}
