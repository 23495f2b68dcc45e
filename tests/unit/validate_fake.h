/* SPDX-License-Identifier: MIT */
/*
 * The stage runner's fake cluster, for the test_validate_*.c that run
 * stages (an ops table, not the network): facts are generated per node,
 * and rping, perftest, ssh, mpicc, mpirun and the probes answer as the
 * real tools do, from injected faults; files put on a node are kept per
 * node, so the MPI probe built on the launcher can be followed to every
 * other node. A test's world (struct world) holds the fake, the options,
 * the spec and the results; the group's set-up and each test's set-up and
 * tear-down are here. Header-only: each test binary is one file.
 */
#ifndef LN_TEST_VALIDATE_FAKE_H
#define LN_TEST_VALIDATE_FAKE_H

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/cmocka.h"
#include "common/error.h"
#include "common/util.h"
#include "orchestrator/report/report.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/transport/push.h"
#include "orchestrator/validate/stages.h"

#define MAXN 16

struct fake {
	size_t n;
	struct json_object *facts[MAXN];
	int bad_node[MAXN], no_mpicc[MAXN], no_facts[MAXN];
	int bad_link[MAXN][MAXN], race_once[MAXN][MAXN], hang[MAXN][MAXN], no_ssh[MAXN][MAXN];
	double gbps[MAXN][MAXN];	/* 0: 95 */
	/* the Gb/s of a pair's runs below 4 KiB (the message-rate run); 0: as
	 * gbps. A link that moves large messages at line rate and small ones
	 * slowly is what min_msg_rate is for. */
	double small_gbps[MAXN][MAXN];
	/* latency: a node slow with every partner, a slow pair (typical 80 us
	 * instead of 3 us) */
	int slow_node[MAXN], slow_link[MAXN][MAXN];
	int slow_port[MAXN][2];		/* rxe0 or rxe1 of a node (fake_two_rails) */
	/* rping and perftest fail through a dead port, or between two nodes
	 * on one rail only (bad_rail_link: the rail + 1) */
	int dead_port[MAXN][2], bad_rail_link[MAXN][MAXN];
	pthread_mutex_t lock;
	/* perftest's server prints its client's row, as the real tools do:
	 * the client leaves its figure (-1: it failed) by the server's node
	 * and TCP port (-p, mod 64) and the server waits for it; srv_fail: a
	 * node whose server end cannot run (exit 1, no report); srv_mute: one
	 * whose server exits 0 with no report; srv_skew: one whose server
	 * reports this factor of its client's figure; cli_fail: a node whose
	 * client end cannot run (exit 1, no report, its server left waiting) */
	pthread_cond_t served_cv;
	int served[MAXN][64];
	double served_val[MAXN][64];
	int srv_fail[MAXN], srv_mute[MAXN], cli_fail[MAXN];
	int srv_mute_once[MAXN];	/* srv_mute for the next this many serves */
	double srv_skew[MAXN];
	/* a node never serves two probes at once on one session lane; lane
	 * k > 0 only for its port k (concurrent rails); peak: the most
	 * probes a node ran at once */
	int busy[MAXN][2], inflight[MAXN], peak[MAXN];
	int overlap, lanes_used;
	char problem[256];		/* set from worker threads, checked after the run */
	size_t runs, puts;
	/* the MPI probe binary at its path on each node, mpicc runs per node,
	 * source uploads per node */
	struct ln_buf mpi_bin[MAXN];
	int has_mpi_bin[MAXN], mpicc_runs[MAXN], src_puts[MAXN];
	int odd_build[MAXN];	/* that node's mpicc writes its own binary */
	int bin_puts;		/* probe binaries the controller wrote to any node */
	/* io probe copies per node, and nodes whose copies fail */
	int io_puts[MAXN], put_fails[MAXN];
	/* the same for the NCCL probe */
	struct ln_buf nccl_bin[MAXN];
	int has_nccl_bin[MAXN], nccl_mpicc_runs[MAXN], nccl_src_puts[MAXN];
	char nccl_result[1024];	/* what the NCCL probe prints after its ranks; "" pass */
	char nccl_op[32];	/* the --op the NCCL probe was given */
	char nccl_argv[2048];	/* the last mpirun of the NCCL probe, joined */
	long nccl_np;		/* ranks expected by slot (uneven GPU counts); 0: 8 per node */
	const char *nccl_hosts;	/* the --host list expected instead of the hostfile */
	/* nccl-tests' all_reduce_perf per node: its command line (joined),
	 * what it prints (NULL: the agent answers it is not installed) */
	char nccl_tests_argv[MAXN][256];
	char nccl_tests_env[MAXN][512];	/* run_env's NAME=VALUE list, space-joined */
	const char *nccl_tests_out[MAXN];
	/* nccl-tests by mpirun (scope cluster): every such mpirun, joined, a
	 * line each; the busbw it reports with N nodes' ranks (0: 10 GB/s);
	 * the wrong elements it reports at its largest size */
	char nccl_mpirun_tests[4096];
	double tests_busbw[MAXN + 1];
	long tests_wrong;
	int tests_one_host;	/* every rank on n1 (mpirun placed them wrongly) */
	/* what the io probe prints per node (NULL: a passing run) */
	const char *io_out[MAXN];
	/* port error counters (rxe0, rxe1 of each node): read by the counters
	 * op when with_counters; a pair through a lossy port raises both
	 * ends' rcvd_seq_err by 40 (loss is seen at both ends) */
	int with_counters, lossy[MAXN][2], no_counters[MAXN];
	long long seq_err[MAXN][2];
	size_t counter_reads;
	/* `facts --discovery`: each node's answer (JSON text; NULL: the node
	 * cannot be reached), the places it was asked, space-separated, and
	 * how often */
	const char *disc_answer[MAXN];
	char disc_asked[MAXN][1024];
	int disc_calls[MAXN];
	/* binding (issue 27): bind_source: the node's perftest lists
	 * --bind_source_ip in its --help (trixie's; else bookworm's 4.5-0.17,
	 * which has none); help_runs: how often its --help was read;
	 * shared_subnet: the rails share one subnet, so an rping client
	 * without -I leaves by the route's pick, rxe0, whatever its port */
	int bind_source[MAXN], help_runs[MAXN], shared_subnet;
	int help_refused[MAXN];	/* the agent refuses --help, as an old agent */
};

static inline int is_mpi_bin(const char *path)
{
	return !strcmp(path, LN_PROTO_REMOTE_DIR "/" LN_PROBE_MPI);
}

static inline int is_nccl_bin(const char *path)
{
	return !strcmp(path, LN_PROTO_REMOTE_DIR "/" LN_PROBE_NCCL);
}

static inline size_t node_of_ip(const char *ip)
{
	return (size_t)atoi(strrchr(ip, '.') + 1) - 1;
}

static inline int last_arg(const char *const *argv)
{
	int i;

	for (i = 0; argv[i + 1]; i++)
		;
	return i;
}

static inline int last_is_ip(const char *const *argv, size_t *node)
{
	int i;

	for (i = 0; argv[i + 1]; i++)
		;
	if (strncmp(argv[i], "10.0.0.", 7) && strncmp(argv[i], "10.0.1.", 7))
		return 0;
	*node = node_of_ip(argv[i]);
	return 1;
}

static inline int link_ok(struct fake *f, size_t a, size_t b)
{
	return !f->bad_node[a] && !f->bad_node[b] && !f->bad_link[a][b] && !f->bad_link[b][a];
}

/* The same on one rail: server a's port on it and client b's. */
static inline int rail_ok(struct fake *f, size_t a, size_t b, int rail, int client_rail)
{
	return link_ok(f, a, b) && !f->dead_port[a][rail] && !f->dead_port[b][client_rail] &&
	       f->bad_rail_link[a][b] != rail + 1 && f->bad_rail_link[b][a] != rail + 1;
}

static inline int fake_facts(void *ctx, size_t node, struct json_object **out, struct ln_buf *err)
{
	struct fake *f = ctx;

	if (f->no_facts[node]) {
		ln_buf_addstr(err, "connection refused");
		return -LN_EUNREACH;
	}
	*out = f->facts[node];
	return 0;
}

static inline int fake_put(void *ctx, size_t node, const char *path, const void *data, size_t len,
		    struct ln_buf *err)
{
	struct fake *f = ctx;

	pthread_mutex_lock(&f->lock);
	if (!len || path[0] != '/')
		snprintf(f->problem, sizeof(f->problem), "bad put of '%s'", path);
	f->puts++;
	if (!strcmp(path, LN_PROTO_REMOTE_DIR "/" LN_PROBE_IO))
		f->io_puts[node]++;
	if (f->put_fails[node]) {
		ln_buf_addstr(err, "sftp error 4");
		pthread_mutex_unlock(&f->lock);
		return -EIO;
	}
	if (!strcmp(path, LN_PROBE_SRC_DIR "/mpi_probe.c"))
		f->src_puts[node]++;
	if (!strcmp(path, LN_PROBE_SRC_DIR "/nccl_mpi_probe.c"))
		f->nccl_src_puts[node]++;
	if (is_mpi_bin(path) || is_nccl_bin(path)) {
		struct ln_buf *b = is_mpi_bin(path) ? &f->mpi_bin[node] : &f->nccl_bin[node];

		f->bin_puts++;
		ln_buf_reset(b);
		ln_buf_add(b, data, len);
		*(is_mpi_bin(path) ? &f->has_mpi_bin[node] : &f->has_nccl_bin[node]) = 1;
	}
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static inline int fake_get(void *ctx, size_t node, const char *path, struct ln_buf *data,
		    struct ln_buf *err)
{
	struct fake *f = ctx;
	int r = 0;

	pthread_mutex_lock(&f->lock);
	if (is_mpi_bin(path) && f->has_mpi_bin[node]) {
		ln_buf_reset(data);
		ln_buf_add(data, f->mpi_bin[node].buf, f->mpi_bin[node].len);
	} else if (is_nccl_bin(path) && f->has_nccl_bin[node]) {
		ln_buf_reset(data);
		ln_buf_add(data, f->nccl_bin[node].buf, f->nccl_bin[node].len);
	} else {
		ln_buf_addf(err, "cat: %s: No such file or directory", path);
		r = -ENOENT;
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

/* Does every node hold the launcher's MPI (nccl 0) or NCCL probe, byte for byte? */
static inline int same_bin_everywhere(struct fake *f, int nccl, size_t launcher)
{
	const struct ln_buf *bin = nccl ? f->nccl_bin : f->mpi_bin;
	const int *has = nccl ? f->has_nccl_bin : f->has_mpi_bin;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!has[i] || bin[i].len != bin[launcher].len ||
		    memcmp(bin[i].buf, bin[launcher].buf, bin[i].len))
			return 0;
	return 1;
}

static const char perf_head[] =
	"---------------------------------------------------------------------------------------\n"
	" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n";

static inline void problem(struct fake *f, const char *what, const char *const *argv)
{
	pthread_mutex_lock(&f->lock);
	if (!f->problem[0])
		snprintf(f->problem, sizeof(f->problem), "%s: %s %s", what, argv[0],
			 argv[1] ? argv[1] : "");
	pthread_mutex_unlock(&f->lock);
}

#include "tests/unit/validate_fake_bind.h"

/* rping: the server is fine unless its own fabric is dead; the client
 * fails on a bad link, hangs where told, and races its server once where
 * told. */
static inline void fake_rping(struct fake *f, size_t node, const char *const *argv,
		       struct ln_probe_result *out)
{
	int client = !strcmp(argv[1], "-c");
	size_t peer = node_of_ip(ln_test_arg_after(argv, "-a"));
	int rail = !strncmp(ln_test_arg_after(argv, "-a"), "10.0.1.", 7);
	int crail = rping_client_rail(f, node, argv, rail);

	if (!client) {
		/* the server: fine unless its own fabric is dead */
		if (f->bad_node[node])
			out->timed_out = 1;
	} else if (f->hang[peer][node]) {
		out->timed_out = 1;
	} else if (!rail_ok(f, peer, node, rail, crail)) {
		out->exit_status = 1;
		ln_buf_addstr(&out->output, "cma event RDMA_CM_EVENT_UNREACHABLE, error -110\n"
					    "waiting for addr/route resolution state 1\n");
	} else {
		pthread_mutex_lock(&f->lock);
		if (f->race_once[peer][node]) {
			f->race_once[peer][node] = 0;
			out->exit_status = 1;
			ln_buf_addstr(&out->output, "cma event RDMA_CM_EVENT_REJECTED, error 8\n");
		}
		pthread_mutex_unlock(&f->lock);
	}
}

static inline unsigned perf_slot(const char *const *argv)
{
	const char *p = ln_test_arg_after(argv, "-p");

	return p ? (unsigned)strtoul(p, NULL, 10) % 64 : 0;
}

/* A client leaves its figure v (-1: failed) for the server on node srv. */
static inline void perf_publish(struct fake *f, size_t srv, const char *const *argv, double v)
{
	pthread_mutex_lock(&f->lock);
	f->served[srv][perf_slot(argv)] = 1;
	f->served_val[srv][perf_slot(argv)] = v;
	pthread_cond_broadcast(&f->served_cv);
	pthread_mutex_unlock(&f->lock);
}

/* The server on node waits for its client's figure (a client that never
 * comes: -1 after 5 s, the server's own bound in spirit); srv_fail and
 * srv_skew apply. Returns the figure to print, -1 none. */
static inline double perf_serve(struct fake *f, size_t node, const char *const *argv,
				struct ln_probe_result *out)
{
	struct timespec until;
	unsigned k = perf_slot(argv);
	double v = -1;
	int mute;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&f->lock);
	while (!f->served[node][k] &&
	       pthread_cond_timedwait(&f->served_cv, &f->lock, &until) == 0)
		;
	if (f->served[node][k])
		v = f->served_val[node][k];
	f->served[node][k] = 0;
	mute = f->srv_mute[node] || (f->srv_mute_once[node] > 0 && f->srv_mute_once[node]--);
	pthread_mutex_unlock(&f->lock);
	if (f->srv_fail[node]) {
		out->exit_status = 1;
		ln_buf_addstr(&out->output, " Couldn't allocate MR\n");
		return -1;
	}
	if (mute)
		return -1;
	return v >= 0 && f->srv_skew[node] ? v * f->srv_skew[node] : v;
}

/* The message rate follows from the size and the rate, as perftest's
 * does: g Gb/s of -s byte messages (95 Gb/s of 1 MiB: 0.011 Mpps). */
static inline void perf_row(struct ln_buf *o, const char *const *argv, double g)
{
	unsigned long bytes = strtoul(ln_test_arg_after(argv, "-s"), NULL, 10);

	ln_buf_addf(o, " %-7lu    %d           %-7.2f            %-7.2f\t\t   %-7.6f\n", bytes,
		    1000, g + 1, g, bytes ? g * 1e3 / 8.0 / (double)bytes : 0.0);
}

/* perftest: the server prints its header and its client's row; the
 * client its result row, or an error on a bad link. */
static inline void fake_perftest(struct fake *f, size_t node, const char *const *argv,
			  struct ln_probe_result *out)
{
	size_t peer;

	if (!ln_test_arg_after(argv, "-p"))
		problem(f, "no port", argv);
	perf_bound_ok(f, node, argv);
	if (!last_is_ip(argv, &peer)) {
		double v = perf_serve(f, node, argv, out);

		if (!out->exit_status)
			ln_buf_addstr(&out->output, perf_head);
		if (v >= 0)
			perf_row(&out->output, argv, v);
	} else if (f->cli_fail[node]) {
		perf_publish(f, peer, argv, -1);
		out->exit_status = 1;
		ln_buf_addstr(&out->output, " Couldn't allocate MR\n");
	} else if (!rail_ok(f, peer, node, !strncmp(argv[last_arg(argv)], "10.0.1.", 7),
			    !strcmp(ln_test_arg_after(argv, "-d"), "rxe1"))) {
		perf_publish(f, peer, argv, -1);
		out->exit_status = 1;
		ln_buf_addstr(&out->output, " Unable to perform rdma_client function\n");
	} else {
		double g = f->gbps[peer][node] ? f->gbps[peer][node] : 95.0;

		if (f->small_gbps[peer][node] &&
		    strtoul(ln_test_arg_after(argv, "-s"), NULL, 10) < 4096)
			g = f->small_gbps[peer][node];

		perf_publish(f, peer, argv, g);
		ln_buf_addstr(&out->output, perf_head);
		perf_row(&out->output, argv, g);
	}
}

/* perftest 4.5's latency header and row format (RESULT_FMT_LAT), as the
 * lab captures show them (tests/fixtures/probes/ib_write_lat.client.txt) */
static const char lat_head[] =
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
	"t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";

static inline void lat_row(struct ln_buf *o, const char *const *argv, double t)
{
	ln_buf_addf(o, " %-7lu %-10lu %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     "
		    "\t%-7.2f\t\t%-7.2f \t\t%-7.2f\n", strtoul(ln_test_arg_after(argv, "-s"), NULL, 10),
		    strtoul(ln_test_arg_after(argv, "-n"), NULL, 10), t * 0.8, t * 3, t, t * 1.25,
		    t * 0.2, t * 2, t * 2.5);
}

/* ib_write_lat / ib_send_lat: both ends print the round trips' figures,
 * the typical 3 us, or 80 us through a slow node or link; the 99th
 * percentile is twice the typical. */
static inline void fake_perftest_lat(struct fake *f, size_t node, const char *const *argv,
			      struct ln_probe_result *out)
{
	size_t peer;
	double t = 3.0;

	if (!ln_test_arg_after(argv, "-p") || !ln_test_arg_after(argv, "-n") || ln_test_arg_after(argv, "--report_gbits"))
		problem(f, "latency argv", argv);
	perf_bound_ok(f, node, argv);
	if (!last_is_ip(argv, &peer)) {
		t = perf_serve(f, node, argv, out);
		if (!out->exit_status)
			ln_buf_addstr(&out->output, lat_head);
		if (t >= 0)
			lat_row(&out->output, argv, t);
		return;
	}
	if (f->cli_fail[node]) {
		perf_publish(f, peer, argv, -1);
		out->exit_status = 1;
		ln_buf_addstr(&out->output, " Couldn't allocate MR\n");
		return;
	}
	if (!rail_ok(f, peer, node, !strncmp(argv[last_arg(argv)], "10.0.1.", 7),
		     !strcmp(ln_test_arg_after(argv, "-d"), "rxe1"))) {
		perf_publish(f, peer, argv, -1);
		out->exit_status = 1;
		ln_buf_addstr(&out->output, " Unable to perform rdma_client function\n");
		return;
	}
	if (f->slow_node[peer] || f->slow_node[node] || f->slow_link[peer][node] ||
	    f->slow_link[node][peer])
		t = 80.0;
	/* a slow port: this end's device, or the peer's rail by its address */
	if (f->slow_port[node][!strcmp(ln_test_arg_after(argv, "-d"), "rxe1")] ||
	    f->slow_port[peer][!strncmp(argv[last_arg(argv)], "10.0.1.", 7)])
		t = 80.0;
	perf_publish(f, peer, argv, t);
	ln_buf_addstr(&out->output, lat_head);
	lat_row(&out->output, argv, t);
}

#include "tests/unit/validate_fake_mpi.h"

static inline void fake_loss(struct fake *f, size_t node, const char *const *argv);

/* The port a pair probe uses on its node: perftest's -d, rping's rail
 * by the server's address; -1 for other probes. */
static inline int probe_port(const char *const *argv)
{
	const char *d = ln_test_arg_after(argv, "-d");

	if (!strcmp(argv[0], "rping"))
		return !strncmp(ln_test_arg_after(argv, ln_test_arg_after(argv, "-I") ? "-I" : "-a"),
				"10.0.1.", 7);
	if (!strncmp(argv[0], "ib_", 3) && d)
		return !strcmp(d, "rxe1");
	return -1;
}

/* nccl-tests' all_reduce_perf on node: its line kept, its output given,
 * or absent as the agent says (code "missing"). */
static inline int fake_nccl_tests(struct fake *f, size_t node, const char *const *argv,
				  struct ln_probe_result *out, struct ln_buf *err)
{
	char *s = f->nccl_tests_argv[node];
	int i;

	s[0] = '\0';
	for (i = 0; argv[i]; i++)
		snprintf(s + strlen(s), sizeof(f->nccl_tests_argv[node]) - strlen(s), "%s%s",
			 i ? " " : "", argv[i]);
	if (!f->nccl_tests_out[node]) {
		ln_buf_addf(err, "agent on 'n%zu' refused 'run': run: '%s' is not installed",
			    node + 1, argv[0]);
		return -LN_EMISSING;
	}
	ln_buf_addstr(&out->output, f->nccl_tests_out[node]);
	return 0;
}

static inline int fake_run(void *ctx, size_t node, unsigned lane, const char *const *argv,
			   const char *sha256, int timeout_s, struct ln_probe_result *out,
			   struct ln_buf *err)
{
	struct fake *f = ctx;
	const char *p = argv[0];
	int r = 0;

	pthread_mutex_lock(&f->lock);
	if (lane > 1 || f->busy[node][lane])
		f->overlap = 1;
	if (lane && !is_help(argv) && (int)lane != probe_port(argv))
		snprintf(f->problem, sizeof(f->problem), "%s on lane %u of n%zu", p, lane,
			 node + 1);
	f->lanes_used |= lane != 0;
	f->busy[node][lane & 1]++;
	if (++f->inflight[node] > f->peak[node])
		f->peak[node] = f->inflight[node];
	f->runs++;
	pthread_mutex_unlock(&f->lock);
	out->exit_status = 0;
	out->timed_out = 0;
	out->seconds = 0.01;
	if (timeout_s < 1)
		problem(f, "no bound", argv);
	check_sha256(f, node, argv, sha256);
	if (is_help(argv))
		r = fake_perftest_help(f, node, argv, out, err);
	else if (!strcmp(p, "rping"))
		fake_rping(f, node, argv, out);
	else if (!strcmp(p, "ib_write_bw") || !strcmp(p, "ib_send_bw"))
		fake_perftest(f, node, argv, out);
	else if (!strcmp(p, "ib_write_lat") || !strcmp(p, "ib_send_lat"))
		fake_perftest_lat(f, node, argv, out);
	else if (!strcmp(p, "mpicc"))
		fake_mpicc(f, node, is_nccl_bin(argv[3]), argv, out);
	else if (!strcmp(p, "mpirun") && starts_tests(argv))
		fake_mpirun_tests(f, argv, out);
	else if (!strcmp(p, "mpirun"))
		fake_mpirun(f, node, argv, out);
	else if (!strcmp(p, LN_PROTO_REMOTE_DIR "/" LN_PROBE_IO))
		ln_buf_addstr(&out->output, f->io_out[node] ? f->io_out[node] :
					    "llmnet-io-probe 1\nwrite_mbps 900.0\nread_mbps 1200.0\n"
					    "result pass\n");
	else if (p[0] == '/' && starts_tests(argv))
		r = fake_nccl_tests(f, node, argv, out, err);
	else
		problem(f, "unexpected probe", argv);
	if (f->with_counters && !is_help(argv) && (!strcmp(p, "rping") || !strncmp(p, "ib_", 3)))
		fake_loss(f, node, argv);
	pthread_mutex_lock(&f->lock);
	f->busy[node][lane & 1]--;
	f->inflight[node]--;
	pthread_mutex_unlock(&f->lock);
	return r;
}

/* `facts --counters rxeN/1`: rdma_rxe's answer, send_err not available. */
static inline int fake_counters(void *ctx, size_t node, unsigned lane, const char *const *ports,
				size_t n, struct json_object **out, struct ln_buf *err)
{
	struct fake *f = ctx;
	char js[512];
	int port;

	pthread_mutex_lock(&f->lock);
	if (lane > 1 || f->busy[node][lane])
		f->overlap = 1;
	f->counter_reads++;
	if (n != 1 || (strcmp(ports[0], "rxe0/1") && strcmp(ports[0], "rxe1/1")))
		snprintf(f->problem, sizeof(f->problem), "counters of '%s'", ports[0]);
	port = !strcmp(ports[0], "rxe1/1");
	if (lane && (int)lane != port)
		snprintf(f->problem, sizeof(f->problem), "counters of '%s' on lane %u", ports[0],
			 lane);
	if (f->no_counters[node])
		snprintf(js, sizeof(js), "{\"protocol\":3,\"counters\":[{\"port\":\"%s\","
			 "\"driver\":\"hfi1\",\"reason\":\"no counter table for this driver\"}]}",
			 ports[0]);
	else
		snprintf(js, sizeof(js), "{\"protocol\":3,\"counters\":[{\"port\":\"%s\","
			 "\"driver\":\"rdma_rxe\",\"errors\":{\"rcvd_seq_err\":%lld,"
			 "\"out_of_seq_request\":0,\"send_err\":null},"
			 "\"other\":{\"sent_pkts\":%zu}}]}", ports[0], f->seq_err[node][port],
			 f->counter_reads * 100);
	pthread_mutex_unlock(&f->lock);
	(void)err;
	*out = json_tokener_parse(js);
	return *out ? 0 : -ENOMEM;
}

/* A client's run through a lossy port raises both ends' counters. The
 * server's port is its address's rail, the client's its -d (rping: the
 * client's -I). */
static inline void fake_loss(struct fake *f, size_t node, const char *const *argv)
{
	int rping = !strcmp(argv[0], "rping");
	const char *ip = rping ? ln_test_arg_after(argv, "-a") : argv[last_arg(argv)];
	size_t peer;
	int sp, cp;

	if ((rping && strcmp(argv[1], "-c")) || (!rping && !last_is_ip(argv, &peer)))
		return;
	peer = node_of_ip(ip);
	sp = !strncmp(ip, "10.0.1.", 7);
	cp = rping ? rping_client_rail(f, node, argv, sp) :
		     !strcmp(ln_test_arg_after(argv, "-d"), "rxe1");
	pthread_mutex_lock(&f->lock);
	if (f->lossy[peer][sp] || f->lossy[node][cp]) {
		f->seq_err[peer][sp] += 40;
		f->seq_err[node][cp] += 40;
	}
	pthread_mutex_unlock(&f->lock);
}

/* `facts --discovery PLACE...`: disc_answer[node] as the agent's answer. */
static inline int fake_discovery(void *ctx, size_t node, const char *const *places, size_t n,
				 struct json_object **out, struct ln_buf *err)
{
	struct fake *f = ctx;
	size_t i, len = 0;

	f->disc_calls[node]++;
	f->disc_asked[node][0] = '\0';
	for (i = 0; i < n && len < sizeof(f->disc_asked[node]); i++)
		len += (size_t)snprintf(f->disc_asked[node] + len, sizeof(f->disc_asked[node]) - len,
					"%s%s", i ? " " : "", places[i]);
	if (!f->disc_answer[node]) {
		ln_buf_addstr(err, "connection refused");
		return -LN_EUNREACH;
	}
	*out = json_tokener_parse(f->disc_answer[node]);
	return *out ? 0 : -EPROTO;
}

/* run with an environment (nccl-tests by launcher none): kept, then run. */
static inline int fake_run_env(void *ctx, size_t node, const char *const *argv,
			       const char *const *env, int timeout_s, struct ln_probe_result *out,
			       struct ln_buf *err)
{
	struct fake *f = ctx;
	char *s = f->nccl_tests_env[node];
	int i;

	pthread_mutex_lock(&f->lock);
	s[0] = '\0';
	for (i = 0; env[i]; i++)
		snprintf(s + strlen(s), sizeof(f->nccl_tests_env[node]) - strlen(s), "%s%s",
			 i ? " " : "", env[i]);
	pthread_mutex_unlock(&f->lock);
	return fake_run(ctx, node, 0, argv, NULL, timeout_s, out, err);
}

static const struct ln_probe_ops fake_ops = { fake_facts, fake_run, fake_put, fake_get, NULL,
					      fake_discovery, NULL, fake_run_env };
static const struct ln_probe_ops fake_ops_counters = { fake_facts, fake_run, fake_put, fake_get,
						       fake_counters, fake_discovery, NULL,
						       fake_run_env };

static inline void fake_init(struct fake *f, size_t n)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->served_cv, NULL);
	f->n = n;
	for (i = 0; i < n; i++) {
		char js[1024];

		ln_buf_init(&f->mpi_bin[i], 1u << 20);
		ln_buf_init(&f->nccl_bin[i], 1u << 20);
		snprintf(js, sizeof(js),
			 "{\"hostname\":\"n%zu\",\"rdma\":[{\"device\":\"rxe0\",\"ports\":[{\"port\":1,"
			 "\"state\":\"%s\",\"phys_state\":\"LINK_UP\",\"rate_gbps\":100,"
			 "\"active_mtu\":1024,\"link_layer\":\"Ethernet\",\"gids\":["
			 "{\"index\":0,\"gid\":\"fe80:0000:0000:0000:5054:00ff:fe12:34%02zx\",\"type\":\"RoCE v2\"},"
			 "{\"index\":1,\"gid\":\"0000:0000:0000:0000:0000:ffff:0a00:00%02zx\",\"type\":\"RoCE v2\"}]}]}],"
			 "\"gpus\":{\"count\":8},\"nvme\":[]}",
			 i + 1, "ACTIVE", i + 1, i + 1);
		f->facts[i] = json_tokener_parse(js);
		assert_non_null(f->facts[i]);
	}
}

/* Every node with two rails: rxe0 on 10.0.0.x and rxe1 on 10.0.1.x (for
 * make_spec_two_rails). */
static inline void fake_two_rails(struct fake *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		char js[2048];

		json_object_put(f->facts[i]);
		snprintf(js, sizeof(js),
			 "{\"hostname\":\"n%zu\",\"rdma\":["
			 "{\"device\":\"rxe0\",\"ports\":[{\"port\":1,\"state\":\"ACTIVE\","
			 "\"phys_state\":\"LINK_UP\",\"rate_gbps\":100,\"active_mtu\":1024,"
			 "\"link_layer\":\"Ethernet\",\"gids\":[{\"index\":1,\"gid\":"
			 "\"0000:0000:0000:0000:0000:ffff:0a00:00%02zx\",\"type\":\"RoCE v2\"}]}]},"
			 "{\"device\":\"rxe1\",\"ports\":[{\"port\":1,\"state\":\"ACTIVE\","
			 "\"phys_state\":\"LINK_UP\",\"rate_gbps\":100,\"active_mtu\":1024,"
			 "\"link_layer\":\"Ethernet\",\"gids\":[{\"index\":1,\"gid\":"
			 "\"0000:0000:0000:0000:0000:ffff:0a00:01%02zx\",\"type\":\"RoCE v2\"}]}]}],"
			 "\"gpus\":{\"count\":8},\"nvme\":[]}",
			 i + 1, i + 1, i + 1);
		f->facts[i] = json_tokener_parse(js);
		assert_non_null(f->facts[i]);
	}
}

/* The spec of the nodes in y (released) with validation's stages. */
static inline struct ln_spec *spec_from(struct ln_buf *y, const char *validation)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;

	ln_buf_addf(y, "validation:\n%s", validation);
	if (ln_spec_load_buf("fake.yaml", y->buf, y->len, &spec, &err) < 0)
		fail_msg("%s", err.buf);
	ln_test_release(y, &err);
	return spec;
}

/* "version: 1" and n nodes n1.. at 127.0.1.i with 8 GPUs, each with rails
 * ports rxe<r> at 10.0.<r>.i; one rail states its port, rate and MTU. */
static inline void fake_nodes(struct ln_buf *y, size_t n, int rails)
{
	size_t i;
	int r;

	ln_buf_addstr(y, "version: 1\ncluster: fake\nnodes:\n");
	for (i = 0; i < n; i++) {
		ln_buf_addf(y, "  - name: n%zu\n    address: 127.0.1.%zu\n    gpus: 8\n    rdma:\n",
			    i + 1, i + 1);
		for (r = 0; r < rails; r++)
			ln_buf_addf(y, "      - { device: rxe%d, %sip: 10.0.%d.%zu, %slink_layer: "
				    "ethernet%s }\n", r, rails == 1 ? "port: 1, " : "", r, i + 1,
				    rails == 1 ? "min_rate: 100Gb/s, " : "",
				    rails == 1 ? ", mtu: 1024" : "");
	}
}

static inline struct ln_spec *make_spec_two_rails(size_t n, const char *validation)
{
	struct ln_buf y = LN_BUF_INIT;

	fake_nodes(&y, n, 2);
	return spec_from(&y, validation);
}

static inline void fake_release(struct fake *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		json_object_put(f->facts[i]);
		ln_test_release(&f->mpi_bin[i], &f->nccl_bin[i]);
	}
}

static inline struct ln_spec *make_spec(size_t n, const char *validation, int with_mpi)
{
	struct ln_buf y = LN_BUF_INIT;

	fake_nodes(&y, n, 1);
	if (with_mpi)
		ln_buf_addstr(&y, "mpi:\n  hostfile: /etc/llmnet/hostfile\n  mca: { pml: ob1 }\n");
	return spec_from(&y, validation);
}

static inline void opts(struct ln_validate_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->server_delay_ms = 0;
	o->retry_delay_ms = 0;
	o->mpi_probe_source = FIXTURES_DIR "/../../agents/probes/mpi_probe.c";
	o->nccl_probe_source = FIXTURES_DIR "/../../agents/probes/nccl_mpi_probe.c";
	o->io_probe_path = FIXTURES_DIR "/../../agents/probes/io_probe.c";
}

static inline void run(struct fake *f, struct ln_spec *spec, struct ln_validate_opts *o,
		struct ln_results *res)
{
	struct ln_buf err = LN_BUF_INIT;

	if (ln_validate_run(spec, f->with_counters ? &fake_ops_counters : &fake_ops, f, o, res,
			    &err) < 0)
		fail_msg("%s", err.buf);
	assert_false(f->overlap);
	if (f->problem[0])
		fail_msg("%s", f->problem);
	ln_buf_release(&err);
}

/* One test's world: the fake cluster, the options, the spec and the
 * results. The group allocates it once; each test's set-up resets it to
 * the default options, and its tear-down releases what the test made,
 * even when an assertion failed half-way. */
struct world {
	struct fake f;
	struct ln_validate_opts o;
	struct ln_spec *spec;
	struct ln_results res;
};

static inline int group_setup(void **state)
{
	*state = calloc(1, sizeof(struct world));
	return *state ? 0 : -1;
}

static inline int group_teardown(void **state)
{
	free(*state);
	return 0;
}

static inline int world_setup(void **state)
{
	struct world *w = *state;

	memset(w, 0, sizeof(*w));
	opts(&w->o);
	return 0;
}

static inline int world_teardown(void **state)
{
	struct world *w = *state;

	ln_results_release(&w->res);
	ln_spec_free(w->spec);
	fake_release(&w->f);
	memset(w, 0, sizeof(*w));
	return 0;
}

/* The test's world with n fake nodes and spec (owned by the world). */
static inline struct world *world_start(void **state, size_t n, struct ln_spec *spec)
{
	struct world *w = *state;

	w->spec = spec;
	fake_init(&w->f, n);
	return w;
}

static inline void world_run(struct world *w)
{
	run(&w->f, w->spec, &w->o, &w->res);
}

static inline char *verdicts(const struct ln_results *r)
{
	struct ln_buf b = LN_BUF_INIT;
	size_t i;

	for (i = 0; i < r->nverdicts; i++) {
		const struct ln_verdict *v = &r->verdicts[i];

		ln_buf_addf(&b, "%s:%s:", ln_stage_name(v->stage), ln_verdict_kind_name(v->kind));
		ln_results_subject(r, v->a, v->b, &b);
		ln_buf_addch(&b, ' ');
	}
	return ln_buf_detach(&b, NULL);
}

/* The run's verdicts, as verdicts() writes them, are exactly want. */
static inline void assert_verdicts(struct world *w, const char *want)
{
	char *v = verdicts(&w->res);

	assert_string_equal(v, want);
	free(v);
}

/* The "error counters" check of node's port dev in stage st; NULL none. */
static inline const struct ln_check *ctr_check(const struct ln_results *r, enum ln_stage st,
					       size_t node, const char *dev)
{
	size_t i;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (c->stage == st && c->ctr && c->a == node &&
		    !strcmp(ln_results_port(r, node, c->pa), dev))
			return c;
	}
	return NULL;
}

#define WORLD_TEST(t) cmocka_unit_test_setup_teardown(t, world_setup, world_teardown)

#endif
