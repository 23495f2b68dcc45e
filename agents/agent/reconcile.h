/* SPDX-License-Identifier: MIT */
/*
 * plan / apply / teardown: converge the node to a desired state by delta.
 * request.c parses and validates the request; the parts (parts.h) each
 * reconcile their kind of object through struct ln_converge (converge.h).
 */
#ifndef LN_AGENT_RECONCILE_H
#define LN_AGENT_RECONCILE_H

struct ln_agent;

int ln_reconcile_plan_verb(struct ln_agent *a, int argc, char **argv);
int ln_reconcile_apply_verb(struct ln_agent *a, int argc, char **argv);
int ln_reconcile_teardown_verb(struct ln_agent *a, int argc, char **argv);
/* restore --cluster NAME: the boot unit's converge (persist.c). */
int ln_reconcile_restore_verb(struct ln_agent *a, int argc, char **argv);

#endif
