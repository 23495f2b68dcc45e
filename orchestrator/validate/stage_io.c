/* SPDX-License-Identifier: MIT */
/*
 * The io stage: llmnet's io probe on every initiator under test, on its
 * mount or (after the devices stage found it) its block device, judged
 * on the slower of its read and write rates.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/transport/fanout.h"
#include "orchestrator/validate/parse/parse.h"
#include "orchestrator/validate/stage_common.h"
#include "orchestrator/validate/storage_path.h"

/* The figure of "key V" on a line of the io probe's output into *v: 1,
 * 0 when no line has the key, -1 when V is not a finite number >= 0. The
 * node writes that output, and "inf" would pass any threshold (and is not
 * JSON in the report). */
static int kv(const char *text, const char *key, double *v)
{
	const char *p = text;
	size_t kl = strlen(key);

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			char *end;

			errno = 0;
			*v = strtod(p + kl + 1, &end);
			return end == p + kl + 1 || errno || !isfinite(*v) || *v < 0 ||
					       (*end && *end != '\n') ? -1 : 1;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/* The devices stage's check of namespace nsid of nqn on node, or NULL. */
static const struct ln_check *namespace_check(struct vctx *c, size_t node, const char *nqn,
					      uint32_t nsid)
{
	const struct ln_check *dk = NULL;
	char name[320];
	size_t i;

	snprintf(name, sizeof(name), "namespace %u of %s", nsid, nqn);
	for (i = 0; i < c->res->nchecks; i++) {
		const struct ln_check *d = &c->res->checks[i];

		if (d->stage == LN_STAGE_DEVICES && d->a == node && d->name && !strcmp(d->name, name))
			dk = d;
	}
	return dk;
}

/* The io probe's argv for initiator in: through its mount when block is
 * NULL, else on the raw device block. A raw device is named with its subsystem's NQN,
 * which the probe checks before it opens the device, so it can only ever
 * touch a namespace of this spec's target. */
static void io_argv(const struct ln_validation *v, const struct ln_initiator *in,
		   const char *nqn, const char *block, struct argv *av)
{
	vs_arg(av, LN_PROTO_REMOTE_DIR "/" LN_PROBE_IO);
	if (!block) {
		vs_arg(av, "--mount");
		vs_arg(av, "%s", in->mount.path);
	} else {
		vs_arg(av, "--device");
		vs_arg(av, "%s", block);
		vs_arg(av, "--nqn");
		vs_arg(av, "%s", nqn);
		if (v->io.destructive)
			vs_arg(av, "--write");
	}
	vs_arg(av, "--size");
	vs_arg(av, "%llu", (unsigned long long)v->io.size);
}

static void io_judge(struct stage_run *sr)
{
	const char *out = sr->pr.output.buf;
	double w = NAN, rd = NAN, judged = NAN;
	int has_w = kv(out, "write_mbps", &w), has_rd = kv(out, "read_mbps", &rd);
	char line[256];

	/* the lower of the two when the probe wrote, else the read figure;
	 * one figure that is not a number makes none (fmin would drop it) */
	if (has_rd == 1 && has_w >= 0)
		judged = has_w ? fmin(w, rd) : rd;

	sr->at.value = judged;
	if (!strstr(out, "result pass")) {
		if (ln_parse_error_line(out, sr->pr.output.len, line, sizeof(line)))
			ln_buf_addf(&sr->why, "%s", line);
		else
			ln_buf_addf(&sr->why, "the io probe failed (exit status %d)",
				    sr->pr.exit_status);
	} else if (isnan(judged)) {
		ln_buf_addstr(&sr->why, "the io probe gave no figure");
	} else if (!isnan(sr->want) && judged < sr->want) {
		ln_buf_addf(&sr->why, "%.1f MB/s is below %.1f MB/s", judged, sr->want);
	} else {
		sr->at.ok = 1;
	}
}

/* The io probe's copy to each node that probes, all nodes at once: what
 * went wrong on node i is in why[i] (empty when it was installed). */
struct io_push {
	struct vctx *c;
	struct ln_buf *why;
};

static int push_probe(void *ctx, size_t i, struct ln_buf *line)
{
	struct io_push *ip = ctx;

	(void)line;
	vs_push_file(ip->c, i, ip->c->o->io_probe_path, LN_PROTO_REMOTE_DIR "/" LN_PROBE_IO,
		     &ip->why[i]);
	return 0;
}

/* Whether the devices stage left initiator in something to probe: it did
 * not run, or it found one of the target's namespaces. */
static int io_has_namespace(struct vctx *c, const struct ln_initiator *in)
{
	const struct ln_target *t = &c->spec->targets[in->target];
	size_t j;

	if (!c->res->stages[LN_STAGE_DEVICES].ran)
		return 1;
	for (j = 0; j < t->n_namespaces; j++) {
		const struct ln_check *dk = namespace_check(c, in->node, t->nqn,
							    t->namespaces[j].nsid);

		if (!dk || dk->status == LN_ST_PASS)
			return 1;
	}
	return 0;
}

/* The rail io check k of initiator in went over, for storage_path.c. */
static void io_path(struct vctx *c, const struct ln_initiator *in, struct ln_check *k)
{
	int ip, tp;

	if (k->stage != LN_STAGE_IO || k->a != in->node ||
	    ln_storage_path(c->spec, &c->rails, in, &ip, &tp) < 0)
		return;
	k->from_port = ip;
	k->via = c->spec->targets[in->target].node;
	k->via_port = tp;
}

/* One probe of initiator in, named name: through its mount (block NULL)
 * or on a raw namespace; not run when its copy failed. */
static int io_probe(struct vctx *c, struct stage_run *sr, const struct ln_initiator *in,
		    const char *block, const char *name, const struct ln_buf *pushed)
{
	const char *nqn = c->spec->targets[in->target].nqn;
	struct argv av = { .n = 0 };
	int r;

	if (!c->o->io_probe_path)
		return vs_not_run_check(c, LN_STAGE_IO, in->node, name,
					"the io probe was not built");
	if (pushed->len)
		return vs_not_run_check(c, LN_STAGE_IO, in->node, name, "%s", pushed->buf);
	io_argv(&c->spec->validation, in, nqn, block, &av);
	if (vs_run_probe(c, LN_STAGE_IO, in->node, &av, sr->timeout_s, &sr->pr, &sr->at,
			 &sr->why) == 0)
		io_judge(sr);
	r = vs_record(c, LN_STAGE_IO, in->node, LN_NO_NODE, name, &sr->at, &sr->why, "MB/s",
		      sr->want);
	if (r >= 0 && c->res->nchecks)
		io_path(c, in, &c->res->checks[c->res->nchecks - 1]);
	vs_argv_free(&av);
	return r;
}

/* One initiator: through its mount (when it mounts), and on every
 * declared namespace raw (read-only unless destructive) unless the mount
 * already is its target's one namespace; a namespace devices did not
 * find is skipped, one it did not check is not run. */
static int io_initiator(struct vctx *c, struct stage_run *sr, const struct ln_initiator *in,
			const struct ln_buf *pushed)
{
	const struct ln_target *t = &c->spec->targets[in->target];
	char name[320];
	size_t j;
	int r = 0;

	if (in->mount.present) {
		snprintf(name, sizeof(name), "io on %s", t->nqn);
		if (!io_has_namespace(c, in)) {
			long idx = vs_add_check(c, LN_STAGE_IO, in->node, LN_NO_NODE, name);

			r = idx < 0 ? -ENOMEM : ln_check_set(&c->res->checks[idx], LN_ST_SKIPPED,
							     "devices found no namespace of '%s'",
							     t->nqn);
		} else {
			r = io_probe(c, sr, in, NULL, name, pushed);
		}
		if (t->n_namespaces < 2)
			return r;
	}
	for (j = 0; j < t->n_namespaces && r >= 0; j++) {
		uint32_t nsid = t->namespaces[j].nsid;
		const struct ln_check *dk = namespace_check(c, in->node, t->nqn, nsid);

		snprintf(name, sizeof(name), "io on %s namespace %u", t->nqn, nsid);
		if (dk && dk->status != LN_ST_PASS) {
			long idx = vs_add_check(c, LN_STAGE_IO, in->node, LN_NO_NODE, name);

			r = idx < 0 ? -ENOMEM : ln_check_set(&c->res->checks[idx], LN_ST_SKIPPED,
							     "devices found no namespace %u of '%s'",
							     nsid, t->nqn);
		} else if (!dk || !dk->reason || strncmp(dk->reason, "block device /dev/", 18)) {
			r = vs_not_run_check(c, LN_STAGE_IO, in->node, name, "no block device known "
					     "for namespace %u of '%s' (run the devices stage)",
					     nsid, t->nqn);
		} else {
			r = io_probe(c, sr, in, dk->reason + 13, name, pushed);
		}
	}
	return r;
}

int vs_io_stage(struct vctx *c)
{
	const struct ln_validation *v = &c->spec->validation;
	struct stage_run sr;
	struct io_push ip = { c, NULL };
	struct ln_fanout f = { "install the io probe", c->n, NULL, c->parallel, push_probe, &ip, 1 };
	struct ln_fanout_result fr;
	unsigned char *sel = NULL;
	size_t k, i;
	int r = 0, any = 0;

	vs_stage_open(&sr, v->io.timeout_ms, 1u << 20,
		      v->io.min_bps ? (double)v->io.min_bps / 8e6 : NAN);
	ip.why = calloc(c->n ? c->n : 1, sizeof(*ip.why));
	sel = calloc(c->n ? c->n : 1, 1);
	if (!ip.why || !sel) {
		r = -ENOMEM;
		goto out;
	}
	/* the probe goes to every node that will run it, all at once; the
	 * runs themselves stay one after another (they share targets, and a
	 * bandwidth figure must not be another node's contention) */
	for (k = 0; k < c->spec->n_initiators; k++) {
		const struct ln_initiator *in = &c->spec->initiators[k];

		if (vs_under_test(c, in->node) && c->o->io_probe_path && io_has_namespace(c, in))
			sel[in->node] = 1;
	}
	f.select = sel;
	r = ln_fanout_run(&f, &fr);
	if (r < 0)
		goto out;
	for (i = 0; i < c->n; i++)
		if (sel[i] && !fr.started[i])
			ln_buf_addstr(&ip.why[i], "the io probe was not installed: interrupted");
	ln_fanout_result_release(&fr);
	for (k = 0; k < c->spec->n_initiators && r >= 0; k++) {
		const struct ln_initiator *in = &c->spec->initiators[k];

		if (!vs_under_test(c, in->node))
			continue;
		any = 1;
		r = io_initiator(c, &sr, in, &ip.why[in->node]);
	}
	vs_stage_ran(c, LN_STAGE_IO, any, r, "no initiator under test");
out:
	for (i = 0; ip.why && i < c->n; i++)
		ln_buf_release(&ip.why[i]);
	free(ip.why);
	free(sel);
	return vs_stage_close(&sr, r);
}
