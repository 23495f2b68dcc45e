/* SPDX-License-Identifier: MIT */
/*
 * The validation result model shared by the stage runner, the diagnosis
 * and every report: per stage a summary, per node check and per pair a
 * check with its attempts (each attempt kept, so a pass on retry still
 * shows the first failure), and the verdicts naming bad nodes and links.
 * Nodes are indices into results->nodes.
 */
#ifndef LN_VALIDATE_RESULTS_H
#define LN_VALIDATE_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "orchestrator/spec/spec.h"	/* enum ln_stage: the spec's stages are the ones run */

enum ln_status {
	LN_ST_PASS = 0,
	LN_ST_FAIL,
	LN_ST_SKIPPED,		/* a check it depends on failed; reason says which */
	LN_ST_NOT_RUN,		/* a listed check could not run; counts as a failure */
};

#define LN_NO_NODE ((size_t)-1)

/* A latency check's figures (perftest's t_typical, t_avg and 99%
 * percentile) in microseconds, NAN when not measured; its thresholds
 * likewise, NAN when none. */
struct ln_latency {
	double typical, avg, p99;
	double max_typical, max_p99;
};

/* One counter's rise over a stage, as the agent's name table calls it. */
struct ln_counter_delta {
	char *name;
	long long delta;	/* -1: not available (the port lacks it, or it went back) */
	int error;		/* an error counter (judged), else one that informs */
};

/* A port's error counters over a pairwise stage (its "error counters"
 * check): the rises summed over the pairs it was tested in. */
struct ln_port_counters {
	char *driver;		/* the agent's name for it; NULL unknown */
	struct ln_counter_delta *v;
	size_t n;
	long long errors;	/* the error counters' rises summed; -1: none available */
	int unread;		/* a read failed, or no error counter was available */
	long long max_errors;	/* the stage's limit; -1: reported, not judged */
	size_t partners;	/* ports it was tested with (reads before and after) */
	size_t partners_over;	/* those with which it gained more than max_errors */
};

/* One size of a size sweep (the nccl stage): what was measured there.
 * The sweep's last, largest size is the one judged. */
struct ln_size_bw {
	uint64_t bytes;		/* as nccl-tests counts the size */
	double algbw, busbw;	/* GB/s */
	long wrong;		/* wrong elements at this size; -1 not checked */
};

struct ln_attempt {
	int ok;
	double value;		/* measured value, NAN when there is none */
	double seconds;		/* wall time of the attempt */
	int timed_out;
	int retest;		/* run by the diagnosis' second pass */
	char *detail;		/* why it failed (or a note) */
	char *command;		/* what ran, for the report */
	struct ln_latency lat;	/* latency stage: the figures (value is the typical) */
	int own_fault;		/* pair: whose own tool did not run, LN_END_* bits */
	int report_lost;	/* pair: the server ran but its report was unreadable */
	double msg_rate;	/* bandwidth: the message-rate run's Mpps, NAN none */
};

/* The ends of a pair check (server a, client b), as own_fault bits. */
#define LN_END_A 1
#define LN_END_B 2

struct ln_check {
	enum ln_stage stage;
	size_t a, b;		/* node check: b == LN_NO_NODE; cluster check: a == b == LN_NO_NODE */
	int pa, pb;		/* pair check: the ends' RDMA ports (spec order), -1 none */
	char *name;		/* what was checked, e.g. "rxe0/1 state" or "allreduce" */
	enum ln_status status;
	char *reason;		/* failure or skip reason; NULL on a plain pass */
	double value;		/* the judged value, NAN when none */
	double threshold;	/* NAN when none */
	double line_rate;	/* Gb/s, NAN when unknown */
	/* bandwidth with min_msg_rate: the last attempt's message rate and
	 * the threshold, in Mpps; NAN when none */
	double msg_rate, msg_rate_min;
	const char *unit;	/* static string: "Gb/s", "MB/s", "GB/s", "s", "us", "" */
	struct ln_latency lat;	/* latency stage: the last attempt's figures, the thresholds */
	int retest;		/* a diagnosis retest against a known-good peer */
	int warning;		/* a pass that warns (reason says of what): shown
				 * with the failures, never failing the stage */
	int moot;		/* a skip because the check does not apply to its
				 * node (no GPU, no RDMA port), not because of a
				 * failure: it alone does not make the stage skipped */
	int own_fault;		/* pair: LN_END_* bits of an end whose own tool did
				 * not run in some attempt; never a known-good peer */
	/* io: the target's node and port on the rail of the connection, and
	 * the initiator's port on that rail (kept apart from pa: the check is
	 * the node's, not a port's); LN_NO_NODE and -1 when the target's
	 * address is on no declared port (storage_path.h) */
	size_t via;
	int via_port, from_port;
	struct ln_port_counters *ctr;	/* a port's error counters check; else NULL */
	struct ln_size_bw *sizes;	/* nccl: each size measured, smallest first; else NULL */
	size_t nsizes;
	struct ln_attempt *attempts;
	size_t nattempts;
};

enum ln_verdict_kind {
	LN_VERDICT_NODE = 0,	/* this node is bad */
	LN_VERDICT_LINK,	/* the path between a and b is bad, both ends are fine */
	LN_VERDICT_UNDETERMINED,/* failures that the tests cannot pin on one culprit */
	LN_VERDICT_CLUSTER,	/* a cluster-wide check (mpi, nccl) failed */
	LN_VERDICT_PORT,	/* port pa of node a is bad, its other rails pass */
	LN_VERDICT_TARGET,	/* the access control of the target on node a (its NQN
				 * in the reason) does not hold, or (warning) is weak */
};

struct ln_verdict {
	enum ln_verdict_kind kind;
	enum ln_stage stage;
	size_t a, b;
	int pa, pb;		/* ports of a and b (spec order), -1 none */
	int warning;		/* severity warning: shown, never failing the run
				 * (a target open to NQN claims); else a failure */
	char *reason;
};

/* What the Slurm action did, or would do, to one node, or why a verdict
 * drained nobody (orchestrator/validate/slurm.c). */
enum ln_slurm_act {
	LN_SLURM_ACT_DRAINED = 0,	/* drained, and read back drained with the reason */
	LN_SLURM_ACT_WOULD_DRAIN,	/* --drain=plan: nothing changed */
	LN_SLURM_ACT_LIFTED,		/* llmnet's drain lifted (UNDRAIN), read back so */
	LN_SLURM_ACT_WOULD_LIFT,	/* --drain=plan */
	LN_SLURM_ACT_NOT_DRAINED,	/* blamed, or named by a verdict, but left as it is */
	LN_SLURM_ACT_NOT_RESUMED,	/* drained, and the drain kept */
	LN_SLURM_ACT_FAILED,		/* scontrol failed, or the change did not read back */
};

struct ln_slurm_change {
	enum ln_slurm_act act;
	char *node;		/* the spec's node name; NULL: a verdict of no one node */
	char *slurm_name;	/* its Slurm name; NULL with node */
	char *reason;		/* the drain's reason (made, or read); NULL none */
	char *detail;		/* why, in words */
};

struct ln_stage_summary {
	int listed;		/* the spec (and --stages) asked for it */
	int ran;
	enum ln_status status;
	char *reason;		/* not run / skipped reason */
	size_t passed, failed, skipped, not_run;
	size_t rounds;		/* pairwise stages: rounds of disjoint pairs (incl. retests) */
	double seconds;
};

struct ln_results {
	char *cluster;
	char **nodes;
	size_t nnodes;
	struct ln_stage_summary stages[LN_STAGE_COUNT];
	struct ln_check *checks;
	size_t nchecks, alloc;
	struct ln_verdict *verdicts;
	size_t nverdicts;
	/* Port p of node i: port_dev[i * port_stride + p] ("rxe1") and its
	 * rail's name; NULL (and stride 0) when the pairwise stages named none. */
	char **port_dev, **port_rail;
	size_t port_stride;
	/* Node i's GPU x (GPU + NIC) PCIe matrix in nvidia-smi's layout, as
	 * the devices stage read it: topo[i], NULL (or topo NULL) when none. */
	char **topo;
	int64_t started;	/* unix seconds */
	double seconds;
	int node_exit;		/* the nodes' own exit code (4: one unreachable or refused) */
	struct ln_slurm_change *slurm;	/* the Slurm action's drains, lifts and refusals */
	size_t nslurm;
	int after_exit;		/* an after-validate action on the results failed: 1 */
};

/* The stage named s (a spec's stage name); -EINVAL when there is none. */
int ln_stage_parse(const char *s, enum ln_stage *out);
/* "pass", "fail", "skipped", "not run"; "?" out of range. */
const char *ln_status_name(enum ln_status s);
/* The status as a short word for markup classes: "pass", "fail", "skip",
 * "notrun"; "none" out of range. */
const char *ln_status_class(enum ln_status s);
const char *ln_verdict_kind_name(enum ln_verdict_kind k);
/* How the reports title a verdict: "bad node", "bad port", "bad link",
 * "failed" (cluster), "undetermined", "target" or "target warning". */
const char *ln_verdict_title(const struct ln_verdict *v);
/* "warning" or "fail": a verdict's severity, as the reports name it. */
const char *ln_verdict_severity(const struct ln_verdict *v);
int ln_stage_pairwise(enum ln_stage s);
/* A latency with every figure and threshold NAN. */
void ln_latency_init(struct ln_latency *l);

/* Free a port's counters and their contents (NULL-safe). */
void ln_port_counters_free(struct ln_port_counters *pc);

/* Copy the cluster name and node names. Returns 0 or -ENOMEM. */
int ln_results_init(struct ln_results *r, const char *cluster, const char *const *nodes,
		    size_t nnodes);
void ln_results_release(struct ln_results *r);

/* Room for stride ports per node; then name port p of node i. 0 or -ENOMEM. */
int ln_results_init_ports(struct ln_results *r, size_t stride);
int ln_results_set_port(struct ln_results *r, size_t node, size_t port, const char *dev,
			const char *rail);
/* Port p of node i's device name, or NULL when unknown. */
const char *ln_results_port(const struct ln_results *r, size_t node, int port);
const char *ln_results_rail(const struct ln_results *r, size_t node, int port);

/* Keep a copy of text as node's PCIe matrix. 0, -EINVAL or -ENOMEM. */
int ln_results_set_topo(struct ln_results *r, size_t node, const char *text);

/* Add a check; returns its index (>= 0) or -ENOMEM. Values start NAN,
 * status PASS until an attempt or ln_check_set says otherwise. Indices,
 * not pointers, survive later additions. */
long ln_results_add_check(struct ln_results *r, enum ln_stage stage, size_t a, size_t b,
			  const char *name);
/* Record one attempt (strings copied) and let it decide the status: the
 * last attempt's outcome is the check's. */
int ln_check_add_attempt(struct ln_check *c, const struct ln_attempt *at);

/* Keep n sizes' figures (copied) as c's sweep, replacing any it had. */
int ln_check_set_sizes(struct ln_check *c, const struct ln_size_bw *sizes, size_t n);
/* Set status and reason (copied; NULL clears). */
int ln_check_set(struct ln_check *c, enum ln_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ln_results_add_verdict(struct ln_results *r, enum ln_verdict_kind kind, enum ln_stage stage,
			   size_t a, size_t b, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* The same, naming the ports pa of a and pb of b (-1: none). */
int ln_results_add_port_verdict(struct ln_results *r, enum ln_verdict_kind kind,
				enum ln_stage stage, size_t a, int pa, size_t b, int pb,
				const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* A target verdict (LN_VERDICT_TARGET) on node a of stage st, warning or
 * failing by warning. 0 or -ENOMEM. */
int ln_results_add_target_verdict(struct ln_results *r, enum ln_stage st, size_t a, int warning,
				  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* "drained", "would drain", "lifted", "would lift", "not drained",
 * "not resumed", "failed"; "?" out of range. */
const char *ln_slurm_act_name(enum ln_slurm_act a);
/* Add a Slurm change (strings copied; node, slurm_name, reason may be
 * NULL). 0 or -ENOMEM. */
int ln_results_add_slurm(struct ln_results *r, enum ln_slurm_act act, const char *node,
			 const char *slurm_name, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Recount each stage's summary from its checks. A listed stage with a
 * failed or not-run check fails; one with none of either passes only if
 * it ran and skipped nothing but moot checks beside a pass; a listed
 * stage that did not run keeps its not-run reason. */
void ln_results_summarize(struct ln_results *r);

/* 0 when every listed stage passed and no action on the results failed,
 * else 1 (LN_EXIT_FAILED); node_exit (an unreachable or refused node: 4)
 * outranks both (docs/exit-codes.md). */
int ln_results_exit(const struct ln_results *r);

/* "node", "a-b" or "cluster" for a check or verdict, into out. */
void ln_results_subject(const struct ln_results *r, size_t a, size_t b, struct ln_buf *out);
/* The same with ports where known: "lab2/rxe1", "lab1/rxe0-lab2/rxe0". */
void ln_results_subject_ports(const struct ln_results *r, size_t a, int pa, size_t b, int pb,
			      struct ln_buf *out);

#endif
