/* SPDX-License-Identifier: MIT */
/*
 * Slurm drains that llmnet owns (slurm.c), shared by the controller's
 * after-validate action (orchestrator/validate/slurm.c), the node's
 * health check (agents/agent/run/healthcheck.c) and the agent's
 * allow-list, which runs scontrol in exactly three forms:
 *
 *   scontrol -o show node NAME
 *   scontrol update NodeName=NAME State=DRAIN Reason=REASON
 *   scontrol update NodeName=NAME State=UNDRAIN
 *
 * A drain's reason says whose it is and why:
 *
 *   llmnet:CLUSTER: STAGE[,STAGE]: WHY
 *
 * at most LN_SLURM_REASON_MAX bytes of LN_SLURM_REASON_CHARS (no '=',
 * quote, '[' or ']': scontrol's one-line output stays parseable). A drain
 * is lifted only when its reason starts with this cluster's prefix, and
 * only by the party that ran every stage it lists (ln_slurm_may_lift).
 */
#ifndef LN_COMMON_SLURM_H
#define LN_COMMON_SLURM_H

#include <stddef.h>

#include "common/buf.h"

#define LN_SLURM_REASON_MAX 160
#define LN_SLURM_REASON_CHARS                                                    \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._:,/@+()#%-"
#define LN_SLURM_STAGES_MAX 16	/* stages one reason may list */
#define LN_SLURM_STAGE_LEN 24	/* a stage word's room, its NUL included */
#define LN_SLURM_PATH "/usr/bin/scontrol"
/* The health check's own stage word in a reason it makes. */
#define LN_SLURM_HEALTH_STAGE "health"

/* 1 for a Slurm node name llmnet passes: 1-63 of [A-Za-z0-9._-], not
 * starting with '-' or '.'. */
int ln_slurm_name_ok(const char *name);

/*
 * The reason for a drain of cluster's, listing n stage words and why
 * (any bytes: each one outside LN_SLURM_REASON_CHARS becomes '_', and the
 * whole is cut to LN_SLURM_REASON_MAX) into out (reset first). 0, or
 * -EINVAL for no stage or a bad stage word, -ENOMEM.
 */
int ln_slurm_reason_make(struct ln_buf *out, const char *cluster, const char *const *stages,
			 size_t n, const char *why);

/* 1 when reason keeps the grammar (an llmnet reason of any cluster). */
int ln_slurm_reason_ok(const char *reason);

/* A reason read back: whether it is cluster's, and its stage words. */
struct ln_slurm_owned {
	int ours;		/* starts with "llmnet:CLUSTER:" and keeps the grammar */
	size_t nstages;
	char stages[LN_SLURM_STAGES_MAX][LN_SLURM_STAGE_LEN];
};

/* Parse reason (NULL or "": none) for cluster into *o. */
void ln_slurm_reason_parse(const char *reason, const char *cluster, struct ln_slurm_owned *o);

/* A node as `scontrol -o show node NAME` states it. */
struct ln_slurm_node {
	char state[64];		/* State=, as written ("IDLE+DRAIN") */
	char reason[512];	/* Reason=, without its " [user@time]"; "" none */
	int drained;		/* a DRAIN, DRAINED, DRAINING, FAIL or FAILING part */
	int down;		/* a DOWN part */
};

/* Parse the one-line output of `scontrol -o show node name`. 0, or
 * -EINVAL with why in err (not that node's line, no State=). */
int ln_slurm_show_parse(const char *out, const char *name, struct ln_slurm_node *n,
			struct ln_buf *err);

/* What may be done to a node before a drain. */
enum ln_slurm_drain_rule {
	LN_SLURM_MAY_DRAIN = 0,
	LN_SLURM_DRAINED_BY_US,		/* already drained by this cluster */
	LN_SLURM_DRAINED_BY_OTHER,	/* drained (or failed) by someone else: left as it is */
	LN_SLURM_IS_DOWN,		/* down: left as it is */
};
enum ln_slurm_drain_rule ln_slurm_may_drain(const struct ln_slurm_node *n, const char *cluster);

/* What a lift may do: LIFT only for this cluster's drain whose every
 * listed stage ran (ran()) and passed (passed()) in the lifter's run;
 * o holds the reason's stages, *stage points into it. */
enum ln_slurm_lift_rule {
	LN_SLURM_LIFT = 0,
	LN_SLURM_NOT_DRAINED,
	LN_SLURM_NOT_OURS,	/* someone else's drain (another cluster's, a person's) */
	LN_SLURM_STAGE_NOT_RUN,	/* *stage names the first stage not run */
	LN_SLURM_STAGE_FAILED,	/* *stage names the first stage the node did not pass */
};
struct ln_slurm_lift_judge {
	int (*ran)(void *ctx, const char *stage);
	int (*passed)(void *ctx, const char *stage);
	void *ctx;
};
enum ln_slurm_lift_rule ln_slurm_may_lift(const struct ln_slurm_node *n, const char *cluster,
					  const struct ln_slurm_lift_judge *j,
					  struct ln_slurm_owned *o, const char **stage);

/* The three argv forms (NULL-terminated into argv[6]); arg1 and arg2 hold
 * the NodeName= and Reason= words (64 and LN_SLURM_REASON_MAX + 8). */
void ln_slurm_argv_show(const char *name, const char *argv[6]);
void ln_slurm_argv_drain(const char *name, const char *reason, char arg1[80],
			 char arg2[LN_SLURM_REASON_MAX + 8], const char *argv[6]);
void ln_slurm_argv_undrain(const char *name, char arg1[80], const char *argv[6]);

#endif
