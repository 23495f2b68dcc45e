/* SPDX-License-Identifier: MIT */
/*
 * plan / apply / teardown: converge the node to a desired state by delta.
 * request.c parses and validates the request; the parts (parts.h) each
 * reconcile their kind of object through struct ln_converge (converge.h).
 */
#ifndef LN_AGENT_RECONCILE_H
#define LN_AGENT_RECONCILE_H

struct ln_agent;
struct ln_request;

int ln_reconcile_plan_verb(struct ln_agent *a, int argc, char **argv);
int ln_reconcile_apply_verb(struct ln_agent *a, int argc, char **argv);
int ln_reconcile_teardown_verb(struct ln_agent *a, int argc, char **argv);
/* One converge of a parsed request (the parts in order) and its answer,
 * named mode; the agent's exit code. apply, plan and restore alike. */
int ln_reconcile_converge(struct ln_agent *a, struct ln_request *rq, int plan, const char *mode);
/* restore.c. restore --cluster NAME: the boot unit's converge (persist.c);
 * it takes the node lock itself, for each try. */
int ln_reconcile_restore_verb(struct ln_agent *a, int argc, char **argv);

#endif
