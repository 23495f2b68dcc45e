/* SPDX-License-Identifier: MIT */
/*
 * What the stage runner (runner.c) hands every stage family, and what the
 * families share: the run's context, argv building, one bounded probe run
 * with its timeout message, recording an attempt as a check, installing a
 * file on a node, the common opening of a stage (attempt, timeout,
 * threshold) and the rounds of disjoint pairs run in parallel. Internal
 * to orchestrator/validate/: the public entry is stages.h.
 *
 * The runner calls the families; the families call only the helpers here
 * (stage_common.c), never the runner, so no file calls back into its
 * caller. Names here carry vs_ (validation stage): they link into the
 * controller library beside every other module.
 */
#ifndef LN_VALIDATE_STAGE_COMMON_H
#define LN_VALIDATE_STAGE_COMMON_H

#include <pthread.h>
#include <stdint.h>

#include "orchestrator/validate/pairing.h"
#include "orchestrator/validate/rails.h"
#include "orchestrator/validate/stages.h"

#define MAX_ARGS 250	/* the agent takes 257 */

/* A declared RDMA port of a node, as the pairwise stages use it. */
struct port_info {
	const char *ip;			/* the declared ip, NULL none */
	const char *dev;		/* device and port */
	unsigned port;
	int gid_index;			/* found on the declared ip, -1 unknown */
	double rate_gbps;		/* the port's line rate, NAN unknown */
	int ok;				/* the devices stage found no problem on it */
	char *reason;			/* why not, for skips */
	struct {			/* perftest's buffers (perftest_mem.c) */
		char bus[16];		/* the GPU's PCI bus id; "": host memory */
		int dmabuf;		/* through a dma-buf */
		char *reason;		/* why the GPU run cannot be: "not run" */
	} mem;
};

struct node_info {
	struct json_object *facts;	/* borrowed from ops */
	int rdma_ok;			/* the devices stage found no port problem */
	char *devices_reason;		/* why not, for skips */
	struct port_info *ports;	/* the node's declared RDMA ports, spec order */
	size_t nports;
	char *hostname;			/* from facts, for matching MPI ranks */
	/* perftest's --help, read once per node and tool (perftest_argv.c):
	 * the tool it was read for (NULL: not yet), whether it lists
	 * --bind_source_ip, why it could not be read (NULL: it was); the
	 * lock, since a node's ports run in one round with concurrent rails */
	char *perftest_tool;
	int perftest_binds;
	char *perftest_why;
	pthread_mutex_t perftest_lock;
};

struct vctx {
	const struct ln_spec *spec;
	struct ln_railmap rails;	/* which port of each node is on which rail */
	const struct ln_probe_ops *ops;
	void *octx;
	const struct ln_validate_opts *o;
	struct ln_results *res;
	struct node_info *ni;
	size_t n;
	unsigned parallel, iters;
	int attempts, server_delay_ms, retry_delay_ms;
	struct vs_ctr *ctr;		/* the pairwise stage's port counters; NULL none */
	int lanes;			/* a pairwise stage with concurrent rails: each
					 * port's probes and counter reads on the node's
					 * session lane of the port's index (stages.h) */
	char perftest[4096];		/* a pairwise stage's perftest program by its
					 * path in perftest_dir; "": by name */
};

/* The session lane of a node's port in the current stage: its index with
 * concurrent rails (a round holds one test per port), else 0 (one test
 * per node). */
static inline unsigned vs_lane(const struct vctx *c, unsigned port)
{
	return c->lanes ? port : 0;
}

/* An argv under construction: at most MAX_ARGS strings, NULL-terminated. */
struct argv {
	char *v[MAX_ARGS + 1];
	int n;
	char sha256[65];	/* mpirun: its probe's SHA-256; "": none */
	char *env[LN_RUN_ENV_MAX + 1];	/* NAME=VALUE the agent gives the program */
	int n_env;
};

void vs_arg(struct argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vs_argv_free(struct argv *a);
/* One NAME=VALUE for the program's environment (the agent's run --env). */
void vs_env(struct argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The argv as one space-separated string (malloc'd), for reports. */
char *vs_argv_join(const struct argv *a);
/* "--mca KEY VALUE" for each MCA parameter of the spec's mpi section. */
void vs_arg_mca(struct argv *a, const struct ln_spec *sp);

void vs_sleep_ms(int ms);
void vs_progress(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *vs_nname(struct vctx *c, size_t i);
int vs_under_test(struct vctx *c, size_t i);
/* A per-probe bound in whole seconds, rounded up. */
int vs_timeout_s(uint64_t timeout_ms);

long vs_add_check(struct vctx *c, enum ln_stage st, size_t a, size_t b, const char *name);
/* A check of pair p, naming its ports. */
long vs_add_pair_check(struct vctx *c, enum ln_stage st, const struct ln_pair *p,
		       const char *name);
/* Run argv on node; a probe that could not run at all is reported in
 * why and returns < 0; a timeout is named with node, stage and command
 * and returns -LN_ETIMEOUT. */
int vs_run_probe(struct vctx *c, enum ln_stage st, size_t node, struct argv *av, int timeout_s,
		 struct ln_probe_result *pr, struct ln_attempt *at, struct ln_buf *why);
/* Record at (why as its detail when it failed without one) as a new
 * check, then reset at and why for the next one. */
int vs_record(struct vctx *c, enum ln_stage st, size_t a, size_t b, const char *name,
	      struct ln_attempt *at, struct ln_buf *why, const char *unit, double threshold);
int vs_not_run_check(struct vctx *c, enum ln_stage st, size_t a, const char *name,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Install the local file on node at remote; a failure is told in why. */
int vs_push_file(struct vctx *c, size_t node, const char *local, const char *remote,
		 struct ln_buf *why);

/* The opening every probe stage shares: one attempt (no value yet), the
 * probe's output buffer, the reason buffer, the bound and the threshold. */
struct stage_run {
	struct ln_probe_result pr;
	struct ln_attempt at;
	struct ln_buf why;
	int timeout_s;
	double want;		/* the threshold, NAN when none */
};

void vs_stage_open(struct stage_run *sr, uint64_t timeout_ms, size_t output_cap, double want);
/* Forget a judged attempt that is reported as "not run" instead. */
void vs_stage_drop_attempt(struct stage_run *sr);
/* Release sr; r is the stage's result: a timeout is a result, not a
 * failure of the run, so only other negative codes pass through. */
int vs_stage_close(struct stage_run *sr, int r);
/* A per-node stage that found nothing under test is not run with
 * reason; else it ran. */
void vs_stage_ran(struct vctx *c, enum ln_stage st, int any, int r, const char *reason);

/* One pair of a round: fill po for pair p (its nodes and RDMA ports),
 * using port slot. */
struct pair_outcome {
	struct ln_attempt at[8];
	int n;
};

typedef void (*pair_fn)(struct vctx *c, enum ln_stage st, const struct ln_pair *p,
			unsigned slot, struct pair_outcome *po);

/* All pairs of one round at once (at most c->parallel in flight). */
int vs_run_round_all(struct vctx *c, enum ln_stage st, pair_fn fn, const struct ln_pair *pairs,
		     size_t n, struct pair_outcome *po);

/* The stage families, one file each; 0 or a negative code that stops
 * the run (results of the stage itself are in c->res). */
int vs_devices_stage(struct vctx *c);		/* stage_devices.c */
/* The devices stage's GPU placement and GPUDirect RDMA checks of node i
 * (stage_placement.c). */
int vs_placement(struct vctx *c, size_t i);
int vs_pairwise_stage(struct vctx *c, enum ln_stage st);	/* stage_pair.c: rping, bandwidth */
int vs_io_stage(struct vctx *c);			/* stage_io.c */
int vs_mpi_stage(struct vctx *c);			/* stage_mpi.c */
int vs_nccl_stage(struct vctx *c);			/* stage_nccl_tests.c */
int vs_access_stage(struct vctx *c);			/* stage_access.c */
/* stage_nccl.c, for stage_nccl_tests.c: the stage's check name ("nccl
 * all_reduce"); llmnet's probe across the GPU nodes; a run of av on node
 * judged and recorded as subject's check (*busbw: its judged busbw, NAN
 * when none; a max_latency check beside it; ex, when not NULL: the ranks
 * and hosts an mpirun of nccl-tests must report, else the run failed); node's RDMA ports as
 * NCCL_IB_HCA lists them; the GID index every GPU node's port has, or -1. */
const char *vs_nccl_check_name(const struct vctx *c);
int vs_nccl_mpi_stage(struct vctx *c, struct stage_run *sr);
struct vs_nccl_expect {
	long ranks;		/* nccl-tests' "# Rank" lines: one a GPU */
	size_t hosts;		/* the hosts they name: the run's nodes */
};
int vs_nccl_run(struct vctx *c, struct stage_run *sr, size_t node, size_t subject,
		struct argv *av, double *busbw, const struct vs_nccl_expect *ex);
void vs_nccl_hca_list(const struct ln_node *node, struct ln_buf *out);
int vs_nccl_gid_index(struct vctx *c);
/* The command line nccl-tests' OP_perf gets on node i (scope node): its
 * absolute path in tests_dir first. The stage and
 * validate --dry-run's schedule both use it. */
/* perftest's argv (perftest_argv.c), the same for its bandwidth and
 * latency tools: server srv and client cli each name their own device,
 * port and GID; the message size, the iterations and the TCP port,
 * without the cpufreq check; extra (may be NULL) ends both; the client
 * adds the server's address. Every end is bound to its declared port
 * (issue 27): with bind_source, over RDMA CM (-R) from its own address
 * (--bind_source_ip); without, not over RDMA CM, where -d/-i/-x bind the
 * data path and only the TCP exchange of QP numbers follows the route. */
void vs_perftest_argv(const struct port_info *srv, const struct port_info *cli, const char *tool,
		      uint64_t size, unsigned iters, unsigned tcp_port, const char *extra,
		      int bind_source, struct argv *sv, struct argv *cv);
/* Whether both ends' tool lists --bind_source_ip in its --help: read on
 * each node once per tool and run (bounded), on the lane of the port. */
int vs_perftest_binds(struct vctx *c, const char *tool, size_t a, unsigned pa, size_t b,
		      unsigned pb);
/* The binding a passing pair check k of tool used, as its reason (a
 * failure keeps its own; its attempts' commands show the binding). */
void vs_perftest_note(struct vctx *c, const char *tool, struct ln_check *k);
/* Release what vs_perftest_binds kept of node info. */
void vs_perftest_release(struct node_info *ni);
/* perftest_mem.c: tool by its path in stage st's perftest_dir (into
 * buf of n bytes; tool itself without one). */
const char *vs_perftest_path(const struct vctx *c, enum ln_stage st, const char *tool, char *buf,
			     size_t n);
/* The perftest program of stage st (tool, by name) into c->perftest, and
 * each port's perftest memory: host, or (bandwidth, memory cuda or dmabuf) the GPU it serves
 * once the node's perftest shows it was built with CUDA, else the
 * reason its pairs are not run. 0 or -ENOMEM. */
int vs_perftest_memory(struct vctx *c, enum ln_stage st, const char *tool);
void vs_nccl_tests_argv(const struct ln_spec *sp, size_t i, struct argv *av);
/* launcher none: nccl_lib then cuda_lib as the program's LD_LIBRARY_PATH,
 * when either is set (its libnccl.so.2 wins). */
void vs_nccl_lib_env(const struct ln_validation *v, struct argv *av);

/* Whether node (port: any port, -1) is blamed in stage st: a bad node,
 * or that bad port. */
int vs_bad_in(struct vctx *c, enum ln_stage st, size_t node, int port);

/* Port error counters around each pair of a pairwise stage (counters.c):
 * open before the stage's first round (nothing when ops has no
 * counters), read both ends before and after each pair, judge after the
 * diagnosis (a check per tested port, a verdict per culprit or suspect),
 * close at the end. */
struct vs_ctr_snap {
	struct json_object *ans[2], *before[2];	/* server's and client's reads */
	char *why[2];				/* why a read failed */
};

int vs_ctr_open(struct vctx *c, enum ln_stage st);
void vs_ctr_before(struct vctx *c, const struct ln_pair *p, struct vs_ctr_snap *s);
void vs_ctr_after(struct vctx *c, const struct ln_pair *p, struct vs_ctr_snap *s);
int vs_ctr_judge(struct vctx *c, enum ln_stage st);
void vs_ctr_close(struct vctx *c);

/* The MPI launch both MPI-launched probes share (stage_mpi.c). */
size_t vs_pick_launcher(struct vctx *c);
/* Build the probe from local's source at bin on every node that answered
 * (and on l, the launcher), each with its own mpicc, and compare the
 * builds' sha256: the majority's goes to sha256 (every mpirun that starts
 * the probe names it to the agent); no build is copied between nodes. A
 * build that fails is "not run", one that differs (or no majority) fails,
 * on its node, and counts in *blocked; returns < 0 only when results
 * cannot be recorded. */
int vs_mpi_install(struct vctx *c, enum ln_stage st, size_t l, const char *local,
		   const char *src, const char *bin, char sha256[65], int *blocked);

#endif
