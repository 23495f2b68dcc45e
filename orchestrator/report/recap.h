/* SPDX-License-Identifier: MIT */
/*
 * What facts, plan, apply and teardown show of a run, rendered into a
 * caller's buffer (the library never prints; cmd/ writes it to stdout):
 * the facts as a table per node; the plan the way Terraform shows one
 * (+ create, ~ change, - remove) with a closing count; the recap of apply
 * and teardown, a line per node and the totals. Each is a JSON document
 * instead for -o json. A renderer appends to the buffers it is handed and
 * returns 0, or the negative code of an append that failed (-ENOMEM,
 * -E2BIG at the buffer's cap), the output then incomplete.
 */
#ifndef LN_RECAP_H
#define LN_RECAP_H

#include "common/buf.h"
#include "orchestrator/run/run.h"

struct ln_plan_summary {
	int create, change, remove, ok, error;
	int nodes_changing, nodes_pending_limit, nodes_unreachable, nodes_failed;
	int nodes_last_known;	/* silent nodes with changes against their last-known state */
};

/* The facts of every node of r: a table per node, or the whole JSON
 * document (json), into out. */
int ln_recap_facts(const struct ln_run *r, int json, struct ln_buf *out);
/* facts --topo (topo.c): each node's GPU x (GPU + NIC) PCIe matrix in
 * nvidia-smi's layout, or as JSON ({"cluster", "nodes": {NAME: {"state",
 * "matrix" (null: none), "error" (why none, or null)}}}), into out. */
int ln_recap_topo(const struct ln_run *r, int json, struct ln_buf *out);

/*
 * The plan of a run whose agents answered ln_plan_run() (and whose silent
 * nodes ln_lastknown_plan() planned). In text: a section per node into
 * out and the closing "Plan: ..." line into tail, the warnings the user
 * must see (an allowed host removed, the agents' own) kept as r's notes
 * (notes.h), for the command to print between the two. In JSON (json): the
 * whole document into out, the warnings inside it, tail left as it was.
 * sum receives the counts.
 */
int ln_recap_plan(struct ln_run *r, int json, struct ln_buf *out, struct ln_buf *tail,
		  struct ln_plan_summary *sum);

/*
 * The recap of apply or teardown (verb, named in it): a line per node and
 * the totals, or JSON, into out; *code receives the exit code it implies
 * (docs/exit-codes.md). A node an interrupt kept from starting is marked
 * skipped, and the run log gets the closing line.
 */
int ln_recap_apply(struct ln_run *r, const char *verb, int json, struct ln_buf *out, int *code);

#endif
