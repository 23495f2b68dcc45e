/* SPDX-License-Identifier: MIT */
/* A failed io check judged with the pair verdicts of its rail. */
#include <errno.h>
#include <string.h>

#include "orchestrator/validate/storage_path.h"

int ln_storage_path(const struct ln_spec *spec, const struct ln_railmap *m,
		    const struct ln_initiator *in, int *iport, int *tport)
{
	const struct ln_target *t = &spec->targets[in->target];
	const struct ln_node *tn = &spec->nodes[t->node];
	int rail = -1;
	size_t k;

	*iport = *tport = -1;
	for (k = 0; k < tn->n_rdma && *tport < 0; k++)
		/* no address: the node's first RDMA ip, as the target listens */
		if (tn->rdma[k].ip && (!t->address || !strcmp(tn->rdma[k].ip, t->address)))
			*tport = (int)k;
	if (*tport >= 0)
		rail = ln_railmap_rail_of(m, t->node, (unsigned)*tport);
	if (rail >= 0 && in->node < m->nnodes)
		*iport = m->port[in->node * m->nrails + (size_t)rail];
	return *iport >= 0 && *tport >= 0 ? 0 : -1;
}

/* A pairwise verdict of kind k on node n whose port, where it names one,
 * is p. */
static const struct ln_verdict *named(const struct ln_results *r, enum ln_verdict_kind k,
				      size_t n, int p)
{
	size_t i;

	for (i = 0; i < r->nverdicts; i++) {
		const struct ln_verdict *v = &r->verdicts[i];

		if (ln_stage_pairwise(v->stage) && v->kind == k && v->a == n &&
		    (v->pa < 0 || v->pa == p))
			return v;
	}
	return NULL;
}

/* A pairwise link verdict between a/pa and b/pb, either way round. */
static const struct ln_verdict *link_named(const struct ln_results *r, size_t a, int pa,
					   size_t b, int pb)
{
	size_t i;

	for (i = 0; i < r->nverdicts; i++) {
		const struct ln_verdict *v = &r->verdicts[i];

		if (!ln_stage_pairwise(v->stage) || v->kind != LN_VERDICT_LINK)
			continue;
		if ((v->a == a && v->b == b && (v->pa < 0 || v->pa == pa) &&
		     (v->pb < 0 || v->pb == pb)) ||
		    (v->a == b && v->b == a && (v->pa < 0 || v->pa == pb) &&
		     (v->pb < 0 || v->pb == pa)))
			return v;
	}
	return NULL;
}

static const char *pname(const struct ln_results *r, size_t node, int port)
{
	const char *s = ln_results_port(r, node, port);

	return s ? s : "?";
}

/* Already said for this stage (two checks through one bad port). */
static int said(const struct ln_results *r, enum ln_verdict_kind k, size_t a, int pa, size_t b)
{
	size_t i;

	for (i = 0; i < r->nverdicts; i++)
		if (r->verdicts[i].stage == LN_STAGE_IO && r->verdicts[i].kind == k &&
		    r->verdicts[i].a == a && r->verdicts[i].pa == pa && r->verdicts[i].b == b)
			return 1;
	return 0;
}

int ln_storage_path_verdict(struct ln_results *r, const struct ln_check *c)
{
	const char *why = c->reason ? c->reason : ln_status_name(c->status);
	const struct ln_verdict *v;
	size_t a = c->a, t = c->via;
	int rc;

	if (c->stage != LN_STAGE_IO || t == LN_NO_NODE || c->via_port < 0 || c->from_port < 0 ||
	    a >= r->nnodes || t >= r->nnodes)
		return 0;
	if ((v = named(r, LN_VERDICT_PORT, t, c->via_port)))
		rc = said(r, LN_VERDICT_PORT, t, c->via_port, LN_NO_NODE) ? 0 :
		     ln_results_add_port_verdict(r, LN_VERDICT_PORT, LN_STAGE_IO, t, c->via_port,
						 LN_NO_NODE, -1, "%s: %s; its path is the target's "
						 "port %s on '%s' (rail %s), named by %s",
						 c->name, why, pname(r, t, c->via_port),
						 r->nodes[t], ln_results_rail(r, t, c->via_port),
						 ln_stage_name(v->stage));
	else if ((v = link_named(r, a, c->from_port, t, c->via_port)))
		rc = said(r, LN_VERDICT_LINK, a, c->from_port, t) ? 0 :
		     ln_results_add_port_verdict(r, LN_VERDICT_LINK, LN_STAGE_IO, a, c->from_port, t,
						 c->via_port, "%s: %s; its path is the link "
						 "'%s'/%s-'%s'/%s, named by %s", c->name, why,
						 r->nodes[a], pname(r, a, c->from_port), r->nodes[t],
						 pname(r, t, c->via_port),
						 ln_stage_name(v->stage));
	else if (t != a && (v = named(r, LN_VERDICT_NODE, t, c->via_port)))
		rc = said(r, LN_VERDICT_NODE, t, -1, LN_NO_NODE) ? 0 :
		     ln_results_add_verdict(r, LN_VERDICT_NODE, LN_STAGE_IO, t, LN_NO_NODE,
					    "%s: %s; its target's node '%s' was named by %s",
					    c->name, why, r->nodes[t], ln_stage_name(v->stage));
	else
		return 0;
	return rc < 0 ? rc : 1;
}
