/* SPDX-License-Identifier: MIT */
/*
 * llmnet's Slurm drains (slurm.h): the reason grammar, made and read
 * back, scontrol's node line parsed, and the two ownership rules: never
 * drain a node someone already drained or took down, and lift only this
 * cluster's own drain, only when every stage it lists ran and passed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/slurm.h"

#define PREFIX "llmnet:"
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
#define STAGE_CHARS "abcdefghijklmnopqrstuvwxyz0123456789_-"

int ln_slurm_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n && n <= 63 && strspn(name, NAME_CHARS) == n && name[0] != '-' &&
	       name[0] != '.';
}

static int stage_ok(const char *s, size_t n)
{
	return n && n < LN_SLURM_STAGE_LEN && strspn(s, STAGE_CHARS) >= n;
}

int ln_slurm_reason_make(struct ln_buf *out, const char *cluster, const char *const *stages,
			 size_t n, const char *why)
{
	size_t i;

	ln_buf_reset(out);
	if (!n || n > LN_SLURM_STAGES_MAX || !ln_slurm_name_ok(cluster))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!stage_ok(stages[i], strlen(stages[i])))
			return -EINVAL;
	if (ln_buf_addf(out, PREFIX "%s: ", cluster) < 0)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (ln_buf_addf(out, "%s%s", i ? "," : "", stages[i]) < 0)
			return -ENOMEM;
	if (ln_buf_addstr(out, ": ") < 0 || ln_buf_addstr(out, why ? why : "failed") < 0)
		return -ENOMEM;
	/* Slurm-safe: every other byte a '_', the whole bounded */
	for (i = strlen(PREFIX) + strlen(cluster) + 2; i < out->len; i++)
		if (!strchr(LN_SLURM_REASON_CHARS, out->buf[i]))
			out->buf[i] = '_';
	if (out->len > LN_SLURM_REASON_MAX) {
		out->len = LN_SLURM_REASON_MAX;
		out->buf[out->len] = '\0';
	}
	while (out->len && out->buf[out->len - 1] == ' ')
		out->buf[--out->len] = '\0';
	return 0;
}

/* Into o: the stage words of a reason's "STAGE[,STAGE]: WHY" part; 0
 * when it keeps the grammar. */
static int parse_stages(const char *p, struct ln_slurm_owned *o)
{
	const char *end = strstr(p, ": ");

	if (!end)
		return -1;
	while (p < end) {
		size_t n = strcspn(p, ",:");

		if (o->nstages == LN_SLURM_STAGES_MAX || !stage_ok(p, n))
			return -1;
		memcpy(o->stages[o->nstages], p, n);
		o->stages[o->nstages++][n] = '\0';
		p += n;
		if (*p == ',')
			p++;
	}
	return o->nstages ? 0 : -1;
}

int ln_slurm_reason_ok(const char *reason)
{
	struct ln_slurm_owned o;
	const char *c;
	size_t n = reason ? strlen(reason) : 0;

	if (!n || n > LN_SLURM_REASON_MAX || strspn(reason, LN_SLURM_REASON_CHARS) != n ||
	    strncmp(reason, PREFIX, strlen(PREFIX)))
		return 0;
	c = reason + strlen(PREFIX);
	n = strcspn(c, ":");
	if (!n || n > 63 || strncmp(c + n, ": ", 2))
		return 0;
	memset(&o, 0, sizeof(o));
	return parse_stages(c + n + 2, &o) == 0;
}

void ln_slurm_reason_parse(const char *reason, const char *cluster, struct ln_slurm_owned *o)
{
	size_t pl = strlen(PREFIX), cl = strlen(cluster);

	memset(o, 0, sizeof(o[0]));
	/* the prefix with its colon: "llmnet:lab:" is not "llmnet:lab2:" */
	if (!reason || !ln_slurm_reason_ok(reason) || strncmp(reason + pl, cluster, cl) ||
	    strncmp(reason + pl + cl, ": ", 2))
		return;
	if (parse_stages(reason + pl + cl + 2, o) < 0) {
		memset(o, 0, sizeof(o[0]));
		return;
	}
	o->ours = 1;
}

/* The value of " KEY=" in line (or at its start), up to the next space,
 * into out (cap bytes); -1 when line has no such field. */
static int field(const char *line, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) && p != line && p[-1] != ' ')
		p += kl;
	if (!p)
		return -1;
	p += kl;
	snprintf(out, cap, "%.*s", (int)strcspn(p, " \n"), p);
	return 0;
}

/* The state's words: base and '+' flags. */
static void state_flags(struct ln_slurm_node *n)
{
	char s[sizeof(n->state)], *w, *save = NULL;

	snprintf(s, sizeof(s), "%s", n->state);
	for (w = strtok_r(s, "+", &save); w; w = strtok_r(NULL, "+", &save)) {
		w[strcspn(w, "*~#!%$@^-")] = '\0';	/* sinfo-style suffixes */
		if (!strcmp(w, "DRAIN") || !strcmp(w, "DRAINED") || !strcmp(w, "DRAINING") ||
		    !strcmp(w, "FAIL") || !strcmp(w, "FAILING"))
			n->drained = 1;
		else if (!strcmp(w, "DOWN"))
			n->down = 1;
	}
}

int ln_slurm_show_parse(const char *out, const char *name, struct ln_slurm_node *n,
			struct ln_buf *err)
{
	char got[80];
	const char *r;
	size_t len;

	memset(n, 0, sizeof(*n));
	if (!out || strncmp(out, "NodeName=", 9) || field(out, "NodeName=", got, sizeof(got)) ||
	    strcmp(got, name)) {
		ln_buf_addf(err, "scontrol states no node '%s': '%.120s'", name, out ? out : "");
		return -EINVAL;
	}
	if (field(out, "State=", n->state, sizeof(n->state)) || !n->state[0]) {
		ln_buf_addf(err, "scontrol states no State= for node '%s'", name);
		return -EINVAL;
	}
	state_flags(n);
	/* Reason= runs to the end of the line (it holds spaces), less the
	 * " [user@time]" Slurm adds */
	r = strstr(out, " Reason=");
	if (r) {
		r += 8;
		len = strcspn(r, "\n");
		if (len && r[len - 1] == ']') {
			const char *b = r + len;

			while (b > r && *b != '[')
				b--;
			if (b > r && b[-1] == ' ')
				len = (size_t)(b - 1 - r);
		}
		snprintf(n->reason, sizeof(n->reason), "%.*s", (int)len, r);
	}
	return 0;
}

enum ln_slurm_drain_rule ln_slurm_may_drain(const struct ln_slurm_node *n, const char *cluster)
{
	struct ln_slurm_owned o;

	if (n->down)
		return LN_SLURM_IS_DOWN;
	if (!n->drained)
		return LN_SLURM_MAY_DRAIN;
	ln_slurm_reason_parse(n->reason, cluster, &o);
	return o.ours ? LN_SLURM_DRAINED_BY_US : LN_SLURM_DRAINED_BY_OTHER;
}

enum ln_slurm_lift_rule ln_slurm_may_lift(const struct ln_slurm_node *n, const char *cluster,
					  const struct ln_slurm_lift_judge *j,
					  struct ln_slurm_owned *o, const char **stage)
{
	size_t i;

	*stage = NULL;
	memset(o, 0, sizeof(*o));
	if (!n->drained)
		return LN_SLURM_NOT_DRAINED;
	ln_slurm_reason_parse(n->reason, cluster, o);
	if (!o->ours)
		return LN_SLURM_NOT_OURS;
	for (i = 0; i < o->nstages; i++)
		if (!j->ran(j->ctx, o->stages[i])) {
			*stage = o->stages[i];
			return LN_SLURM_STAGE_NOT_RUN;
		}
	for (i = 0; i < o->nstages; i++)
		if (!j->passed(j->ctx, o->stages[i])) {
			*stage = o->stages[i];
			return LN_SLURM_STAGE_FAILED;
		}
	return LN_SLURM_LIFT;
}

void ln_slurm_argv_show(const char *name, const char *argv[6])
{
	argv[0] = "scontrol";
	argv[1] = "-o";
	argv[2] = "show";
	argv[3] = "node";
	argv[4] = name;
	argv[5] = NULL;
}

void ln_slurm_argv_drain(const char *name, const char *reason, char arg1[80],
			 char arg2[LN_SLURM_REASON_MAX + 8], const char *argv[6])
{
	snprintf(arg1, 80, "NodeName=%s", name);
	snprintf(arg2, LN_SLURM_REASON_MAX + 8, "Reason=%s", reason);
	argv[0] = "scontrol";
	argv[1] = "update";
	argv[2] = arg1;
	argv[3] = "State=DRAIN";
	argv[4] = arg2;
	argv[5] = NULL;
}

void ln_slurm_argv_undrain(const char *name, char arg1[80], const char *argv[6])
{
	snprintf(arg1, 80, "NodeName=%s", name);
	argv[0] = "scontrol";
	argv[1] = "update";
	argv[2] = arg1;
	argv[3] = "State=UNDRAIN";
	argv[4] = NULL;
}
