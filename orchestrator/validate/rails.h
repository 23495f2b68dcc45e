/* SPDX-License-Identifier: MIT */
/*
 * Rails: which RDMA port of each node is on which rail, and the pair
 * schedule of a pairwise stage over every rail.
 *
 * A rail is named by the ports' `rail:` keys (in order of first
 * appearance); when no port names one, port k of every node is on rail
 * "rail<k>" (lint allows that only when every node with ports has as
 * many). A node may lack a rail: it takes no part in that rail's pairs.
 *
 * The schedule (rails "aligned"): per rail, the ring or circle-method
 * schedule of the nodes on that rail (pairing.h), so each rail's rounds
 * are optimal. With concurrent rails, round k of every rail runs as one
 * round (a node tests each of its rails at once: as many rounds as the
 * busiest rail); without, the rails' rounds follow one another (a node
 * serves one test per round: the rails' rounds summed, which is the
 * least when every node has every rail).
 * Rails "all" adds the cross-rail pairs: over the node schedule of every
 * node with ports, for each shift d in 1..R-1, port on rail i of the
 * server with the client's port on rail (i + d) mod R: each (shift,
 * round) is one round with concurrent rails (every port is in one test),
 * one round per rail without.
 */
#ifndef LN_VALIDATE_RAILS_H
#define LN_VALIDATE_RAILS_H

#include "orchestrator/spec/spec.h"
#include "orchestrator/validate/pairing.h"

struct ln_railmap {
	size_t nnodes, nrails;
	size_t stride;		/* the most ports a node declares */
	char **names;		/* nrails rail names */
	int *port;		/* port[node * nrails + rail]: the node's port index, -1 none */
};

#define LN_RAILMAP_INIT { 0, 0, 0, NULL, NULL }

/* The rails of spec's nodes. 0 or -ENOMEM (lint has refused the rest). */
int ln_railmap_from_spec(const struct ln_spec *spec, struct ln_railmap *m, struct ln_buf *err);
void ln_railmap_release(struct ln_railmap *m);
/* The rail index of port `port` of node, -1 when none. */
int ln_railmap_rail_of(const struct ln_railmap *m, size_t node, unsigned port);

struct ln_rail_opts {
	enum ln_pairing kind;
	enum ln_rail_pairs rails;
	int concurrent;
	/* Under --limit: subject[i] nodes are each tested against per_subject
	 * peer[i] nodes, per rail (ln_pairing_against); NULL: every pair. */
	const unsigned char *subject, *peer;
	size_t per_subject;
};

/* The options of pairwise stage st as the spec sets them (every pair). */
void ln_rails_stage_opts(const struct ln_spec *spec, enum ln_stage st, struct ln_rail_opts *o);

/* The stage's schedule into out (released first): pairs carry their
 * ports. Returns 0, -EINVAL (a rail's subjects have no peer) or -ENOMEM,
 * with a message. */
int ln_rails_schedule(const struct ln_railmap *m, const struct ln_rail_opts *o,
		      struct ln_schedule *out, struct ln_buf *err);

/* The schedule as text for --dry-run, one line per round: "  round 3:
 * lab1/rxe0-lab2/rxe0 (rail0) ...", node and device names from spec. */
void ln_rails_schedule_text(const struct ln_railmap *m, const struct ln_schedule *s,
			    const struct ln_spec *spec, struct ln_buf *out);

#endif
