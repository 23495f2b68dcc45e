/* SPDX-License-Identifier: MIT */
/*
 * The validation stage runner: devices, rping, bandwidth, latency, io, mpi,
 * nccl, access, always in that order, only those the spec lists (and --stages keeps).
 * It talks to nodes only through a small ops table (facts, a bounded run
 * of an allow-listed probe, a file upload and its read-back), so the
 * whole runner is tested with a fake; `llmnet validate` plugs in the SSH
 * transport and the agent's `run` verb. Pairwise stages run in rounds of
 * disjoint pairs, the pairs of a round in parallel; client/server probes
 * start a fresh server for every attempt and retry the client. Results,
 * diagnosis included, land in a struct ln_results for the reports.
 */
#ifndef LN_VALIDATE_STAGES_H
#define LN_VALIDATE_STAGES_H

#include <json-c/json.h>

#include "common/buf.h"
#include "common/proto.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/validate/results.h"

struct ln_probe_result {
	int exit_status;	/* -1 when the probe died of a signal */
	int timed_out;		/* the agent's bound fired */
	double seconds;
	struct ln_buf output;	/* stdout and stderr together */
};

struct ln_probe_ops {
	/* The node's facts (the agent's `facts` answer); *out is borrowed
	 * and must stay valid for the whole run. NULL with a message when
	 * the node could not be read. */
	int (*facts)(void *ctx, size_t node, struct json_object **out, struct ln_buf *err);
	/* `llmnet-agent run --timeout S [--sha256 HEX] -- argv...` on node,
	 * over the node's session `lane`: lane 0 is the node's own session;
	 * lane k (k < the node's RDMA ports) a session of its own, so that
	 * a node runs one probe per lane at once (concurrent rails: a
	 * pair's end runs on the lane of its port's index). sha256: for
	 * mpirun, the SHA-256 of the llmnet probe it starts (the agent
	 * refuses to start a file without it); NULL otherwise. 0 when the
	 * probe ran (whatever its exit status), else a negative code with a
	 * message (node unreachable, probe refused by the agent's
	 * allow-list). Called from several threads at once, never twice at
	 * once for one node and lane. */
	int (*run)(void *ctx, size_t node, unsigned lane, const char *const *argv,
		   const char *sha256, int timeout_s, struct ln_probe_result *out,
		   struct ln_buf *err);
	/* Install data on node at the absolute path, mode 0755 (a probe in
	 * the agent's probe directory, or a source file). */
	int (*put)(void *ctx, size_t node, const char *path, const void *data, size_t len,
		   struct ln_buf *err);
	/* Read back a file llmnet installed on node (an absolute path under
	 * LN_PROTO_REMOTE_DIR) into data, bounded by data's cap and the transport's
	 * step bound: the MPI probe built on the launcher is read back this
	 * way to be copied to the other nodes, and every copy is read back
	 * to check its sha256. */
	int (*get)(void *ctx, size_t node, const char *path, struct ln_buf *data,
		   struct ln_buf *err);
	/* The error counters of n ports of node ("rxe0/1", at most
	 * LN_FACTS_COUNTER_PORTS_MAX): the agent's `facts --counters` answer into
	 * *out, owned by the caller. Called like run (from several threads,
	 * never twice at once for one node and lane). NULL in a transport
	 * that has no counters (some unit tests): the pairwise stages then
	 * read none. */
	int (*counters)(void *ctx, size_t node, unsigned lane, const char *const *ports, size_t n,
			struct json_object **out, struct ln_buf *err);
	/* The discovery logs of n places ("TRANSPORT,ADDRESS,SERVICE,NQN", at
	 * most LN_FACTS_DISCOVERY_MAX) as node reads them with its host NQN:
	 * the agent's `facts --discovery` answer into *out, the caller's. On
	 * the node's own session; the devices stage calls it one node at a
	 * time. NULL in a transport without it (some unit tests): the stage's
	 * discovery checks then fail, never pass, for want of a read. */
	int (*discovery)(void *ctx, size_t node, const char *const *places, size_t n,
			 struct json_object **out, struct ln_buf *err);
	/* Connects that the targets must refuse, n places
	 * ("TRANSPORT,ADDRESS,SERVICE,NQN,self|HOSTNQN,none|wrong", at most
	 * LN_FACTS_REFUSED_MAX), each bounded by timeout_s on the node: the
	 * agent's `facts --refused` answer into *out, the caller's. On the
	 * node's own session, one node at a time. NULL in a transport without
	 * it: the access stage is then "not run". */
	int (*refused)(void *ctx, size_t node, const char *const *places, size_t n,
		       int timeout_s, struct json_object **out, struct ln_buf *err);
	/* run on the node's own session with env (NAME=VALUE..., NULL-ended,
	 * at most LN_RUN_ENV_MAX) as the program's environment: the agent's
	 * `run --env`, for nccl-tests started without mpirun. NULL in a
	 * transport without it: such a run then fails with that reason. */
	int (*run_env)(void *ctx, size_t node, const char *const *argv, const char *const *env,
		       int timeout_s, struct ln_probe_result *out, struct ln_buf *err);
};

struct ln_validate_opts {
	unsigned stages;		/* bit per enum ln_stage kept by --stages; 0: all */
	const unsigned char *limit;	/* per node: 1 = under test; NULL: every node */
	unsigned parallel;		/* pairs (or nodes) in flight; 0: 32 */
	int attempts;			/* client attempts per pair; 0: 3 */
	int server_delay_ms;		/* wait between server and client start; -1: 1000 */
	int retry_delay_ms;		/* first wait between attempts, doubled each time; -1: 1000 */
	unsigned perftest_iters;	/* 0: 1000 */
	const char *mpi_probe_source;	/* local path of mpi_probe.c; NULL: mpi stage not run */
	const char *nccl_probe_source;	/* local nccl_mpi_probe.c; NULL: nccl stage not run */
	const char *io_probe_path;	/* local io_probe binary; NULL: io stage not run */
	int run_as_root;		/* mpirun needs --allow-run-as-root */
	/* Progress: one line per finished round or node check. */
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
};

/* Run the listed stages on spec's nodes through ops. res is initialized
 * here (release with ln_results_release). Returns 0 when validation ran
 * (pass or fail is in res: ln_results_exit), or a negative code for a
 * failure of the run itself (out of memory). */
int ln_validate_run(const struct ln_spec *spec, const struct ln_probe_ops *ops, void *ctx,
		    const struct ln_validate_opts *o, struct ln_results *res, struct ln_buf *err);

/* Whether a validation of spec restricted to mask (0: every listed
 * stage) would run anything: -EINVAL with a message when the spec lists
 * no stage, or when mask names a stage the spec does not list (a usage
 * error, found before any node is contacted); else 0. */
int ln_validate_check_stages(const struct ln_spec *spec, unsigned mask, struct ln_buf *err);

/* Parse "--stages devices,rping" into a bit mask. -EINVAL names the bad word. */
int ln_validate_parse_stages(const char *list, unsigned *mask, struct ln_buf *err);

/* --dry-run: the schedule a run of spec's listed stages (those in mask
 * too, when mask is not 0) would follow, as text into out: per stage its
 * rails, pairs and rounds, the pairs of every round. Contacts no node.
 * 0 or -ENOMEM / -EINVAL with err set. */
int ln_validate_schedule(const struct ln_spec *spec, unsigned mask, struct ln_buf *out,
			 struct ln_buf *err);

#endif
