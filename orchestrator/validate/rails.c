/* SPDX-License-Identifier: MIT */
/*
 * Rails and the per-rail pair schedule (see rails.h). Deterministic: the
 * same spec gives the same rounds in the same order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "orchestrator/validate/rails.h"

void ln_railmap_release(struct ln_railmap *m)
{
	ln_names_free(m->names, m->nrails);
	free(m->port);
	memset(m, 0, sizeof(*m));
}

static long rail_index(const struct ln_railmap *m, const char *name)
{
	size_t r;

	for (r = 0; r < m->nrails; r++)
		if (!strcmp(m->names[r], name))
			return (long)r;
	return -1;
}

/* Port k's rail: its name, or "rail<k>" by position. */
static const char *rail_name(const struct ln_rdma_port *p, size_t k, char *buf, size_t n)
{
	if (p->rail)
		return p->rail;
	snprintf(buf, n, "rail%zu", k);
	return buf;
}

int ln_railmap_from_spec(const struct ln_spec *spec, struct ln_railmap *out, struct ln_buf *err)
{
	/* built on the stack, where every field starts known, then handed
	 * over (scan-build loses the fields of a memset of the caller's) */
	struct ln_railmap map = LN_RAILMAP_INIT, *m = &map;
	size_t i, k, cap = 0;

	m->nnodes = spec->n_nodes;
	for (i = 0; i < spec->n_nodes; i++) {
		cap += spec->nodes[i].n_rdma;
		if (spec->nodes[i].n_rdma > m->stride)
			m->stride = spec->nodes[i].n_rdma;
	}
	m->names = calloc(cap ? cap : 1, sizeof(*m->names));
	if (!m->names)
		goto nomem;
	/* the rail names, in order of first appearance */
	for (i = 0; i < spec->n_nodes; i++)
		for (k = 0; k < spec->nodes[i].n_rdma; k++) {
			char pos[32];
			const char *name = rail_name(&spec->nodes[i].rdma[k], k, pos, sizeof(pos));

			if (rail_index(m, name) >= 0)
				continue;
			m->names[m->nrails] = strdup(name);
			if (!m->names[m->nrails])
				goto nomem;
			m->nrails++;
		}
	cap = m->nnodes * m->nrails;
	m->port = malloc((cap ? cap : 1) * sizeof(*m->port));
	if (!m->port)
		goto nomem;
	for (i = 0; i < cap; i++)
		m->port[i] = -1;
	for (i = 0; i < spec->n_nodes; i++)
		for (k = 0; k < spec->nodes[i].n_rdma; k++) {
			char pos[32];
			long r = rail_index(m, rail_name(&spec->nodes[i].rdma[k], k, pos, sizeof(pos)));

			if (r >= 0 && m->port[i * m->nrails + (size_t)r] < 0)
				m->port[i * m->nrails + (size_t)r] = (int)k;
		}
	*out = map;
	return 0;
nomem:
	ln_railmap_release(m);
	*out = map;
	ln_buf_addstr(err, "cannot map the rails: out of memory");
	return -ENOMEM;
}

int ln_railmap_rail_of(const struct ln_railmap *m, size_t node, unsigned port)
{
	size_t r;

	for (r = 0; node < m->nnodes && r < m->nrails; r++)
		if (m->port[node * m->nrails + r] == (int)port)
			return (int)r;
	return -1;
}

static int has(const struct ln_railmap *m, size_t node, size_t rail)
{
	return m->port[node * m->nrails + rail] >= 0;
}

static unsigned port_of(const struct ln_railmap *m, size_t node, size_t rail)
{
	return (unsigned)m->port[node * m->nrails + rail];
}

void ln_rails_stage_opts(const struct ln_spec *spec, enum ln_stage st, struct ln_rail_opts *o)
{
	const struct ln_validation *v = &spec->validation;
	enum ln_pairs pairs = st == LN_STAGE_RPING   ? v->rping.pairs :
			      st == LN_STAGE_LATENCY ? v->latency.pairs :
						       v->bandwidth.pairs;

	memset(o, 0, sizeof(*o));
	o->kind = pairs == LN_PAIRS_ALL ? LN_PAIRING_ALL : LN_PAIRING_RING;
	o->rails = st == LN_STAGE_RPING	  ? v->rping.rails :
		   st == LN_STAGE_LATENCY ? v->latency.rails :
					    v->bandwidth.rails;
	o->concurrent = st == LN_STAGE_RPING   ? v->rping.concurrent_rails :
			st == LN_STAGE_LATENCY ? v->latency.concurrent_rails :
						 v->bandwidth.concurrent_rails;
}

/* A schedule that grows round by round. */
struct grow {
	struct ln_schedule *s;
	size_t *cap;		/* per round */
	size_t rounds_cap;
};

static int grow_add(struct grow *g, size_t rd, const struct ln_pair *p)
{
	struct ln_schedule *s = g->s;
	struct ln_round *round;

	if (rd >= g->rounds_cap) {
		size_t nc = rd * 2 + 8, i;
		void *a = realloc(s->rounds, nc * sizeof(*s->rounds));
		void *b;

		if (!a)
			return -ENOMEM;
		s->rounds = a;
		b = realloc(g->cap, nc * sizeof(*g->cap));
		if (!b)
			return -ENOMEM;
		g->cap = b;
		for (i = g->rounds_cap; i < nc; i++) {
			s->rounds[i].pairs = NULL;
			s->rounds[i].npairs = 0;
			g->cap[i] = 0;
		}
		g->rounds_cap = nc;
	}
	round = &s->rounds[rd];
	if (round->npairs == g->cap[rd]) {
		size_t nc = g->cap[rd] ? g->cap[rd] * 2 : 8;
		void *a = realloc(round->pairs, nc * sizeof(*round->pairs));

		if (!a)
			return -ENOMEM;
		round->pairs = a;
		g->cap[rd] = nc;
	}
	round->pairs[round->npairs++] = *p;
	s->npairs++;
	if (rd + 1 > s->nrounds)
		s->nrounds = rd + 1;
	return 0;
}

/* The node schedule of nodes[0..k) (ring/all, or subjects against peers
 * under --limit), in indices into nodes[]. */
static int base_schedule(const struct ln_rail_opts *o, const size_t *nodes, size_t k,
			 struct ln_schedule *bs, struct ln_buf *err)
{
	size_t *subj, *peers, i, ns = 0, np = 0;
	int r;

	if (!o->subject)
		return ln_pairing_build(o->kind, k, bs, err);
	subj = calloc(k ? k : 1, sizeof(*subj));
	peers = calloc(k ? k : 1, sizeof(*peers));
	if (!subj || !peers) {
		free(subj);
		free(peers);
		ln_buf_addstr(err, "cannot pair nodes: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < k; i++) {
		if (o->subject[nodes[i]])
			subj[ns++] = i;
		else if (o->peer[nodes[i]])
			peers[np++] = i;
	}
	r = ln_pairing_against(subj, ns, peers, np, o->per_subject, bs, err);
	free(subj);
	free(peers);
	return r;
}

/* Each rail's own schedule; returns the rounds used from *off on. */
static int aligned_pairs(const struct ln_railmap *m, const struct ln_rail_opts *o,
			 struct grow *g, size_t *off, size_t *nodes, struct ln_buf *err)
{
	size_t r, i, rd, k, most = 0;
	int ret = 0;

	for (r = 0; r < m->nrails && !ret; r++) {
		struct ln_schedule bs = LN_SCHEDULE_INIT;

		for (k = 0, i = 0; i < m->nnodes; i++)
			if (has(m, i, r))
				nodes[k++] = i;
		ret = base_schedule(o, nodes, k, &bs, err);
		for (rd = 0; rd < bs.nrounds && !ret; rd++)
			for (i = 0; i < bs.rounds[rd].npairs && !ret; i++) {
				const struct ln_pair *bp = &bs.rounds[rd].pairs[i];
				struct ln_pair p = { nodes[bp->a], nodes[bp->b], 0, 0 };

				p.pa = port_of(m, p.a, r);
				p.pb = port_of(m, p.b, r);
				ret = grow_add(g, *off + rd, &p);
			}
		if (bs.nrounds > most)
			most = bs.nrounds;
		if (!o->concurrent)
			*off += bs.nrounds;
		ln_schedule_release(&bs);
	}
	if (o->concurrent)
		*off += most;
	return ret;
}

/* The cross-rail pairs: rail i of the server with rail (i + d) mod R of
 * the client, for every shift d > 0. */
static int cross_pairs(const struct ln_railmap *m, const struct ln_rail_opts *o, struct grow *g,
		       size_t *off, size_t *nodes, struct ln_buf *err)
{
	struct ln_schedule bs = LN_SCHEDULE_INIT;
	size_t R = m->nrails, d, rd, i, j, k = 0;
	int ret;

	for (i = 0; i < m->nnodes; i++)
		for (j = 0; j < R; j++)
			if (has(m, i, j)) {
				nodes[k++] = i;
				break;
			}
	ret = base_schedule(o, nodes, k, &bs, err);
	for (d = 1; d < R && !ret; d++)
		for (rd = 0; rd < bs.nrounds && !ret; rd++) {
			int used = 0;

			for (j = 0; j < R && !ret; j++) {
				for (i = 0; i < bs.rounds[rd].npairs && !ret; i++) {
					const struct ln_pair *bp = &bs.rounds[rd].pairs[i];
					struct ln_pair p = { nodes[bp->a], nodes[bp->b], 0, 0 };
					size_t rb = (j + d) % R;

					if (!has(m, p.a, j) || !has(m, p.b, rb))
						continue;
					p.pa = port_of(m, p.a, j);
					p.pb = port_of(m, p.b, rb);
					ret = grow_add(g, *off, &p);
					used = 1;
				}
				if (!o->concurrent && used) {
					(*off)++;
					used = 0;
				}
			}
			if (o->concurrent && used)
				(*off)++;
		}
	ln_schedule_release(&bs);
	return ret;
}

int ln_rails_schedule(const struct ln_railmap *m, const struct ln_rail_opts *o,
		      struct ln_schedule *out, struct ln_buf *err)
{
	struct grow g = { out, NULL, 0 };
	size_t *nodes = calloc(m->nnodes ? m->nnodes : 1, sizeof(*nodes)), off = 0;
	int ret = -ENOMEM;

	ln_schedule_release(out);
	if (!nodes)
		goto out;
	ret = aligned_pairs(m, o, &g, &off, nodes, err);
	if (!ret && o->rails == LN_RAILS_ALL && m->nrails > 1)
		ret = cross_pairs(m, o, &g, &off, nodes, err);
	if (!ret)
		ret = ln_schedule_check_ports(out, m->nnodes, o->concurrent ? m->stride : 0, err);
out:
	if (ret == -ENOMEM && !err->len)
		ln_buf_addstr(err, "cannot build the rail schedule: out of memory");
	if (ret < 0)
		ln_schedule_release(out);
	free(g.cap);
	free(nodes);
	return ret;
}

void ln_rails_schedule_text(const struct ln_railmap *m, const struct ln_schedule *s,
			    const struct ln_spec *spec, struct ln_buf *out)
{
	size_t rd, i;

	for (rd = 0; rd < s->nrounds; rd++) {
		ln_buf_addf(out, "  round %zu:", rd + 1);
		for (i = 0; i < s->rounds[rd].npairs; i++) {
			const struct ln_pair *p = &s->rounds[rd].pairs[i];
			int ra = ln_railmap_rail_of(m, p->a, p->pa);
			int rb = ln_railmap_rail_of(m, p->b, p->pb);

			ln_buf_addf(out, " %s/%s-%s/%s", spec->nodes[p->a].name,
				    spec->nodes[p->a].rdma[p->pa].device, spec->nodes[p->b].name,
				    spec->nodes[p->b].rdma[p->pb].device);
			if (ra == rb)
				ln_buf_addf(out, " (%s)", m->names[ra]);
			else
				ln_buf_addf(out, " (%s-%s)", m->names[ra], m->names[rb]);
		}
		ln_buf_addch(out, '\n');
	}
}
