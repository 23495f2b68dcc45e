/* SPDX-License-Identifier: MIT */
/*
 * The stage runner against a fake cluster (an ops table, not the
 * network): facts are generated per node, and rping, perftest, ssh,
 * mpicc, mpirun and the probes answer as the real tools do, from injected
 * faults; files put on a node are kept per node, so the MPI probe built
 * on the launcher can be followed to every other node. Checks the stage order, skips with reasons, retries per
 * attempt, timeouts naming node/pair/stage/command, "not run" counting
 * as failure, --stages, --limit, and that the verdicts name exactly the
 * injected bad node and bad link.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	/* latency: a node slow with every partner, a slow pair (typical 80 us
	 * instead of 3 us) */
	int slow_node[MAXN], slow_link[MAXN][MAXN];
	int slow_port[MAXN][2];		/* rxe0 or rxe1 of a node (fake_two_rails) */
	pthread_mutex_t lock;
	int busy[MAXN];			/* a node never serves two probes at once */
	int overlap;
	char problem[256];		/* set from worker threads, checked after the run */
	size_t runs, puts;
	/* the MPI probe binary at its path on each node, mpicc runs per node,
	 * source uploads per node, and a transfer that flips a byte */
	struct ln_buf mpi_bin[MAXN];
	int has_mpi_bin[MAXN], mpicc_runs[MAXN], src_puts[MAXN], corrupt_copy[MAXN];
	/* io probe copies per node, and nodes whose copies fail */
	int io_puts[MAXN], put_fails[MAXN];
	/* the same for the NCCL probe */
	struct ln_buf nccl_bin[MAXN];
	int has_nccl_bin[MAXN], nccl_mpicc_runs[MAXN], nccl_src_puts[MAXN];
	char nccl_result[256];	/* what the NCCL probe prints after its ranks; "" pass */
	char nccl_op[32];	/* the --op the NCCL probe was given */
	char nccl_argv[2048];	/* the last mpirun of the NCCL probe, joined */
	long nccl_np;		/* ranks expected by slot (uneven GPU counts); 0: 8 per node */
	const char *nccl_hosts;	/* the --host list expected instead of the hostfile */
	/* port error counters (rxe0, rxe1 of each node): read by the counters
	 * op when with_counters; a pair through a lossy port raises both
	 * ends' rcvd_seq_err by 40 (loss is seen at both ends) */
	int with_counters, lossy[MAXN][2], no_counters[MAXN];
	long long seq_err[MAXN][2];
	size_t counter_reads;
};

static int is_mpi_bin(const char *path)
{
	return !strcmp(path, LN_PROTO_REMOTE_DIR "/" LN_PROBE_MPI);
}

static int is_nccl_bin(const char *path)
{
	return !strcmp(path, LN_PROTO_REMOTE_DIR "/" LN_PROBE_NCCL);
}

static size_t node_of_ip(const char *ip)
{
	return (size_t)atoi(strrchr(ip, '.') + 1) - 1;
}

static int last_arg(const char *const *argv)
{
	int i;

	for (i = 0; argv[i + 1]; i++)
		;
	return i;
}

static int last_is_ip(const char *const *argv, size_t *node)
{
	int i;

	for (i = 0; argv[i + 1]; i++)
		;
	if (strncmp(argv[i], "10.0.0.", 7) && strncmp(argv[i], "10.0.1.", 7))
		return 0;
	*node = node_of_ip(argv[i]);
	return 1;
}

static int link_ok(struct fake *f, size_t a, size_t b)
{
	return !f->bad_node[a] && !f->bad_node[b] && !f->bad_link[a][b] && !f->bad_link[b][a];
}

static int fake_facts(void *ctx, size_t node, struct json_object **out, struct ln_buf *err)
{
	struct fake *f = ctx;

	if (f->no_facts[node]) {
		ln_buf_addstr(err, "connection refused");
		return -LN_EUNREACH;
	}
	*out = f->facts[node];
	return 0;
}

static int fake_put(void *ctx, size_t node, const char *path, const void *data, size_t len,
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

		ln_buf_reset(b);
		ln_buf_add(b, data, len);
		if (f->corrupt_copy[node])
			b->buf[len / 2] ^= 0x20;
		*(is_mpi_bin(path) ? &f->has_mpi_bin[node] : &f->has_nccl_bin[node]) = 1;
	}
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static int fake_get(void *ctx, size_t node, const char *path, struct ln_buf *data,
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
static int same_bin_everywhere(struct fake *f, int nccl, size_t launcher)
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

static void problem(struct fake *f, const char *what, const char *const *argv)
{
	pthread_mutex_lock(&f->lock);
	if (!f->problem[0])
		snprintf(f->problem, sizeof(f->problem), "%s: %s %s", what, argv[0],
			 argv[1] ? argv[1] : "");
	pthread_mutex_unlock(&f->lock);
}

/* rping: the server is fine unless its own fabric is dead; the client
 * fails on a bad link, hangs where told, and races its server once where
 * told. */
static void fake_rping(struct fake *f, size_t node, const char *const *argv,
		       struct ln_probe_result *out)
{
	int client = !strcmp(argv[1], "-c");
	size_t peer = node_of_ip(ln_test_arg_after(argv, "-a"));

	if (!client) {
		/* the server: fine unless its own fabric is dead */
		if (f->bad_node[node])
			out->timed_out = 1;
	} else if (f->hang[peer][node]) {
		out->timed_out = 1;
	} else if (!link_ok(f, peer, node)) {
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

/* perftest: the server prints only its header; the client its result
 * row, or an error on a bad link. */
static void fake_perftest(struct fake *f, size_t node, const char *const *argv,
			  struct ln_probe_result *out)
{
	size_t peer;

	if (!ln_test_arg_after(argv, "-p"))
		problem(f, "no port", argv);
	if (!last_is_ip(argv, &peer)) {
		ln_buf_addstr(&out->output, perf_head);
	} else if (!link_ok(f, peer, node)) {
		out->exit_status = 1;
		ln_buf_addstr(&out->output, " Unable to perform rdma_client function\n");
	} else {
		double g = f->gbps[peer][node] ? f->gbps[peer][node] : 95.0;

		ln_buf_addstr(&out->output, perf_head);
		ln_buf_addf(&out->output, " %-7lu    %d           %-7.2f            %-7.2f\t\t   "
			    "%-7.6f\n", strtoul(ln_test_arg_after(argv, "-s"), NULL, 10), 1000, g + 1, g,
			    0.011);
	}
}

/* perftest 4.5's latency header and row format (RESULT_FMT_LAT), as the
 * lab captures show them (tests/fixtures/probes/ib_write_lat.client.txt) */
static const char lat_head[] =
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
	"t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";

/* ib_write_lat / ib_send_lat: both ends print the round trips' figures,
 * the typical 3 us, or 80 us through a slow node or link; the 99th
 * percentile is twice the typical. */
static void fake_perftest_lat(struct fake *f, size_t node, const char *const *argv,
			      struct ln_probe_result *out)
{
	size_t peer;
	double t = 3.0;

	if (!ln_test_arg_after(argv, "-p") || !ln_test_arg_after(argv, "-n") || ln_test_arg_after(argv, "--report_gbits"))
		problem(f, "latency argv", argv);
	if (!last_is_ip(argv, &peer)) {
		ln_buf_addstr(&out->output, lat_head);
		return;
	}
	if (!link_ok(f, peer, node)) {
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
	ln_buf_addstr(&out->output, lat_head);
	ln_buf_addf(&out->output, " %-7lu %-10lu %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     "
		    "\t%-7.2f\t\t%-7.2f \t\t%-7.2f\n", strtoul(ln_test_arg_after(argv, "-s"), NULL, 10),
		    strtoul(ln_test_arg_after(argv, "-n"), NULL, 10), t * 0.8, t * 3, t, t * 1.25, t * 0.2,
		    t * 2, t * 2.5);
}

/* mpicc building the MPI or the NCCL probe from its uploaded source. */
static void fake_mpicc(struct fake *f, size_t node, int nccl, const char *const *argv,
		       struct ln_probe_result *out)
{
	struct ln_buf *bin = nccl ? &f->nccl_bin[node] : &f->mpi_bin[node];
	int has_src;

	pthread_mutex_lock(&f->lock);
	(*(nccl ? &f->nccl_mpicc_runs[node] : &f->mpicc_runs[node]))++;
	has_src = nccl ? f->nccl_src_puts[node] &&
				 !strcmp(argv[4], LN_PROBE_SRC_DIR "/nccl_mpi_probe.c")
		       : f->src_puts[node] != 0;
	if (f->no_mpicc[node]) {
		out->exit_status = 127;
		ln_buf_addstr(&out->output, "sh: 1: mpicc: not found\n");
	} else if (!has_src) {
		out->exit_status = 1;
		ln_buf_addf(&out->output, "gcc: error: %s: No such file\n",
			    nccl ? "nccl_mpi_probe.c" : "mpi_probe.c");
	} else {
		/* a "binary" that differs per node, as builds against
		 * different MPI installs do */
		ln_buf_reset(bin);
		ln_buf_addf(bin, "\177ELF %s probe built by mpicc on n%zu\n", nccl ? "nccl" : "mpi",
			    node + 1);
		*(nccl ? &f->has_nccl_bin[node] : &f->has_mpi_bin[node]) = 1;
	}
	pthread_mutex_unlock(&f->lock);
}

/* mpirun: the NCCL probe (one rank per GPU) or the MPI probe, a
 * preflight onto one host or the full run over the hostfile. */
static void fake_mpirun(struct fake *f, size_t node, const char *const *argv,
			struct ln_probe_result *out)
{
	long np = atol(ln_test_arg_after(argv, "-np")), r;
	const char *host = ln_test_arg_after(argv, "--host");

	if (!ln_test_arg_after(argv, "--hostfile") && !host)
		problem(f, "no hostfile or host", argv);
	if (ln_test_arg_after(argv, "--bytes")) {
		/* the NCCL probe: one rank per GPU (8 per node here) */
		const char *ppr = ln_test_arg_after(argv, "--map-by");

		if (f->nccl_np ? (ppr || np != f->nccl_np) :
		    (!ppr || strcmp(ppr, "ppr:8:node") || np != 8 * (long)f->n) ||
		    atol(ln_test_arg_after(argv, "--expect-ranks")) != np ||
		    (f->nccl_hosts ? !host || strcmp(host, f->nccl_hosts) ||
				     ln_test_arg_after(argv, "--hostfile") :
				     !ln_test_arg_after(argv, "--hostfile")))
			problem(f, "nccl probe not one rank per GPU", argv);
		if (!same_bin_everywhere(f, 1, node))
			problem(f, "a node lacks the launcher's nccl probe", argv);
		if (!ln_test_arg_after(argv, "--op"))
			problem(f, "nccl probe without --op", argv);
		snprintf(f->nccl_op, sizeof(f->nccl_op), "%s", ln_test_arg_after(argv, "--op"));
		f->nccl_argv[0] = '\0';
		for (r = 0; argv[r]; r++)
			snprintf(f->nccl_argv + strlen(f->nccl_argv),
				 sizeof(f->nccl_argv) - strlen(f->nccl_argv), " %s", argv[r]);
		ln_buf_addf(&out->output, "llmnet-nccl-probe 2\nop %s ranks %ld bytes %s\n",
			    f->nccl_op, np, ln_test_arg_after(argv, "--bytes"));
		for (r = 0; r < np; r++)
			ln_buf_addf(&out->output, "rank %ld host n%ld device %ld\n", r,
				    r / 8 + 1, r % 8);
		if (f->nccl_result[0]) {
			out->exit_status = 1;
			ln_buf_addstr(&out->output, f->nccl_result);
		} else {
			ln_buf_addf(&out->output, "size %s time_us 9800.5 algbw 109.56 "
				    "busbw %.2f wrong 0\nresult pass\n", ln_test_arg_after(argv, "--bytes"),
				    109.56 * 2 * (double)(np - 1) / (double)np);
		}
		return;
	}
	if (!same_bin_everywhere(f, 0, node))
		problem(f, "a node lacks the launcher's mpi probe", argv);
	if (host && f->no_ssh[node][(size_t)atoi(host + 1) - 1]) {
		out->exit_status = 1;
		ln_buf_addf(&out->output, "ssh: Could not resolve hostname %.*s: Name or "
			    "service not known\nORTE was unable to reliably start one or more "
			    "daemons.\n", (int)(strchr(host, ':') - host), host);
		return;
	}
	ln_buf_addf(&out->output, "llmnet-mpi-probe 1\nranks %ld\n", np);
	for (r = 0; r < np; r++)
		ln_buf_addf(&out->output, "rank %ld host n%ld\n", r, r % (long)f->n + 1);
	ln_buf_addstr(&out->output, "allreduce elements 262144 seconds 0.004 result ok\n"
				    "result pass\n");
}

/* mpirun must name the SHA-256 of the probe it starts (the node's copy,
 * which the install checked is the launcher's build); nothing else may. */
static void check_sha256(struct fake *f, size_t node, const char *const *argv,
			 const char *sha256)
{
	char want[65] = "";

	pthread_mutex_lock(&f->lock);
	if (!strcmp(argv[0], "mpirun")) {
		const struct ln_buf *b = ln_test_arg_after(argv, "--bytes") ? &f->nccl_bin[node] :
								   &f->mpi_bin[node];

		ln_sha256_hex(b->buf, b->len, want);
	}
	pthread_mutex_unlock(&f->lock);
	if (want[0] ? !sha256 || strcmp(sha256, want) : sha256 != NULL)
		problem(f, want[0] ? "mpirun without its probe's sha256" :
				     "a sha256 passed to a program mpirun does not start", argv);
}

static void fake_loss(struct fake *f, size_t node, const char *const *argv);

static int fake_run(void *ctx, size_t node, const char *const *argv, const char *sha256,
		    int timeout_s, struct ln_probe_result *out, struct ln_buf *err)
{
	struct fake *f = ctx;
	const char *p = argv[0];

	(void)err;
	pthread_mutex_lock(&f->lock);
	if (f->busy[node])
		f->overlap = 1;
	f->busy[node]++;
	f->runs++;
	pthread_mutex_unlock(&f->lock);
	out->exit_status = 0;
	out->timed_out = 0;
	out->seconds = 0.01;
	if (timeout_s < 1)
		problem(f, "no bound", argv);
	check_sha256(f, node, argv, sha256);
	if (!strcmp(p, "rping"))
		fake_rping(f, node, argv, out);
	else if (!strcmp(p, "ib_write_bw") || !strcmp(p, "ib_send_bw"))
		fake_perftest(f, node, argv, out);
	else if (!strcmp(p, "ib_write_lat") || !strcmp(p, "ib_send_lat"))
		fake_perftest_lat(f, node, argv, out);
	else if (!strcmp(p, "mpicc"))
		fake_mpicc(f, node, is_nccl_bin(argv[3]), argv, out);
	else if (!strcmp(p, "mpirun"))
		fake_mpirun(f, node, argv, out);
	else if (!strcmp(p, LN_PROTO_REMOTE_DIR "/" LN_PROBE_IO))
		ln_buf_addstr(&out->output, "llmnet-io-probe 1\nwrite_mbps 900.0\nread_mbps 1200.0\n"
					    "result pass\n");
	else
		problem(f, "unexpected probe", argv);
	if (f->with_counters && (!strcmp(p, "rping") || !strncmp(p, "ib_", 3)))
		fake_loss(f, node, argv);
	pthread_mutex_lock(&f->lock);
	f->busy[node]--;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* `facts --counters rxeN/1`: rdma_rxe's answer, send_err not available. */
static int fake_counters(void *ctx, size_t node, const char *const *ports, size_t n,
			 struct json_object **out, struct ln_buf *err)
{
	struct fake *f = ctx;
	char js[512];
	int port;

	pthread_mutex_lock(&f->lock);
	if (f->busy[node])
		f->overlap = 1;
	f->counter_reads++;
	if (n != 1 || (strcmp(ports[0], "rxe0/1") && strcmp(ports[0], "rxe1/1")))
		snprintf(f->problem, sizeof(f->problem), "counters of '%s'", ports[0]);
	port = !strcmp(ports[0], "rxe1/1");
	if (f->no_counters[node])
		snprintf(js, sizeof(js), "{\"protocol\":2,\"counters\":[{\"port\":\"%s\","
			 "\"driver\":\"hfi1\",\"reason\":\"no counter table for this driver\"}]}",
			 ports[0]);
	else
		snprintf(js, sizeof(js), "{\"protocol\":2,\"counters\":[{\"port\":\"%s\","
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
 * server's rail). */
static void fake_loss(struct fake *f, size_t node, const char *const *argv)
{
	int rping = !strcmp(argv[0], "rping");
	const char *ip = rping ? ln_test_arg_after(argv, "-a") : argv[last_arg(argv)];
	size_t peer;
	int sp, cp;

	if ((rping && strcmp(argv[1], "-c")) || (!rping && !last_is_ip(argv, &peer)))
		return;
	peer = node_of_ip(ip);
	sp = !strncmp(ip, "10.0.1.", 7);
	cp = rping ? sp : !strcmp(ln_test_arg_after(argv, "-d"), "rxe1");
	pthread_mutex_lock(&f->lock);
	if (f->lossy[peer][sp] || f->lossy[node][cp]) {
		f->seq_err[peer][sp] += 40;
		f->seq_err[node][cp] += 40;
	}
	pthread_mutex_unlock(&f->lock);
}

static const struct ln_probe_ops fake_ops = { fake_facts, fake_run, fake_put, fake_get, NULL };
static const struct ln_probe_ops fake_ops_counters = { fake_facts, fake_run, fake_put, fake_get,
						       fake_counters };

static void fake_init(struct fake *f, size_t n)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
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
static void fake_two_rails(struct fake *f)
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

static struct ln_spec *make_spec_two_rails(size_t n, const char *validation)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	size_t i;

	ln_buf_addstr(&y, "version: 1\ncluster: fake\nnodes:\n");
	for (i = 0; i < n; i++)
		ln_buf_addf(&y, "  - name: n%zu\n    address: 127.0.1.%zu\n    gpus: 8\n    rdma:\n"
			    "      - { device: rxe0, ip: 10.0.0.%zu, link_layer: ethernet }\n"
			    "      - { device: rxe1, ip: 10.0.1.%zu, link_layer: ethernet }\n",
			    i + 1, i + 1, i + 1, i + 1);
	ln_buf_addf(&y, "validation:\n%s", validation);
	if (ln_spec_load_buf("fake.yaml", y.buf, y.len, &spec, &err) < 0)
		fail_msg("%s", err.buf);
	ln_test_release(&y, &err);
	return spec;
}

static void fake_release(struct fake *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		json_object_put(f->facts[i]);
		ln_test_release(&f->mpi_bin[i], &f->nccl_bin[i]);
	}
}

static struct ln_spec *make_spec(size_t n, const char *validation, int with_mpi)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	size_t i;

	ln_buf_addstr(&y, "version: 1\ncluster: fake\nnodes:\n");
	for (i = 0; i < n; i++)
		ln_buf_addf(&y, "  - name: n%zu\n    address: 127.0.1.%zu\n    gpus: 8\n"
			    "    rdma:\n      - { device: rxe0, port: 1, ip: 10.0.0.%zu, "
			    "min_rate: 100Gb/s, link_layer: ethernet, mtu: 1024 }\n",
			    i + 1, i + 1, i + 1);
	if (with_mpi)
		ln_buf_addstr(&y, "mpi:\n  hostfile: /etc/llmnet/hostfile\n  mca: { pml: ob1 }\n");
	ln_buf_addf(&y, "validation:\n%s", validation);
	if (ln_spec_load_buf("fake.yaml", y.buf, y.len, &spec, &err) < 0)
		fail_msg("%s", err.buf);
	ln_test_release(&y, &err);
	return spec;
}

static const char all_stages[] =
	"  - { stage: devices }\n  - { stage: rping, count: 5 }\n"
	"  - { stage: bandwidth, tool: ib_write_bw, pairs: ring, min: 0.9 of rate }\n"
	"  - { stage: mpi }\n  - { stage: nccl, bytes: 1GiB, min_busbw: 100GB/s }\n";

static void opts(struct ln_validate_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->server_delay_ms = 0;
	o->retry_delay_ms = 0;
	o->mpi_probe_source = FIXTURES_DIR "/../../agents/probes/mpi_probe.c";
	o->nccl_probe_source = FIXTURES_DIR "/../../agents/probes/nccl_mpi_probe.c";
	o->io_probe_path = FIXTURES_DIR "/../../agents/probes/io_probe.c";
}

static void run(struct fake *f, struct ln_spec *spec, struct ln_validate_opts *o,
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

static int group_setup(void **state)
{
	*state = calloc(1, sizeof(struct world));
	return *state ? 0 : -1;
}

static int group_teardown(void **state)
{
	free(*state);
	return 0;
}

static int world_setup(void **state)
{
	struct world *w = *state;

	memset(w, 0, sizeof(*w));
	opts(&w->o);
	return 0;
}

static int world_teardown(void **state)
{
	struct world *w = *state;

	ln_results_release(&w->res);
	ln_spec_free(w->spec);
	fake_release(&w->f);
	memset(w, 0, sizeof(*w));
	return 0;
}

/* The test's world with n fake nodes and spec (owned by the world). */
static struct world *world_start(void **state, size_t n, struct ln_spec *spec)
{
	struct world *w = *state;

	w->spec = spec;
	fake_init(&w->f, n);
	return w;
}

static void world_run(struct world *w)
{
	run(&w->f, w->spec, &w->o, &w->res);
}

static char *verdicts(const struct ln_results *r)
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

static void test_validate_stages__healthy(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, all_stages, 1));
	size_t i, bw = 0;

	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_int_equal(w->res.nverdicts, 0);
	assert_int_equal(w->res.stages[LN_STAGE_RPING].rounds, 2);
	assert_int_equal(w->res.stages[LN_STAGE_RPING].passed, 6);
	assert_int_equal(w->res.stages[LN_STAGE_DEVICES].passed, 12);	/* port + gpus per node */
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
	/* one mpirun, 48 ranks: busbw 109.56 * 2 * 47/48 GB/s */
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].passed, 1);
	assert_int_equal(w->f.nccl_mpicc_runs[0], 1);
	assert_true(same_bin_everywhere(&w->f, 1, 0));
	assert_false(w->res.stages[LN_STAGE_IO].listed);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage == LN_STAGE_DEVICES && !strcmp(c->name, "rxe0/1")) {
			char want[96];

			snprintf(want, sizeof(want), "RoCE v2 GID index 1 on 10.0.0.%zu", c->a + 1);
			assert_string_equal(c->reason, want);
		}
		if (c->stage != LN_STAGE_BANDWIDTH)
			continue;
		bw++;
		assert_float_equal(c->value, 95.0, 1e-9);
		assert_float_equal(c->threshold, 90.0, 1e-9);
		assert_float_equal(c->line_rate, 100.0, 1e-9);
		assert_non_null(strstr(c->attempts[0].command, "ib_write_bw -d rxe0 -i 1 -x 1 -s "
								"1048576"));
	}
	assert_int_equal(bw, 6);
	/* each probe's source to the launcher, its build to the 5 others */
	assert_int_equal(w->f.puts, 2 * (1 + 5));
}

static void test_validate_stages__bad_node_and_bad_link(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, all_stages, 1));
	char *v;
	size_t i;

	w->f.bad_node[3] = 1;
	w->f.bad_link[0][1] = 1;
	world_run(w);
	v = verdicts(&w->res);
	assert_string_equal(v, "rping:node:n4 rping:link:n1-n2 ");
	free(v);
	assert_int_equal(ln_results_exit(&w->res), 1);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_BANDWIDTH)
			continue;
		if ((c->a == 0 && c->b == 1) || c->a == 3 || c->b == 3) {
			assert_int_equal(c->status, LN_ST_SKIPPED);
			assert_true(strstr(c->reason, "cannot rping") ||
				    strstr(c->reason, "'n4' is a bad node in rping"));
		} else {
			assert_int_equal(c->status, LN_ST_PASS);
		}
	}
}

static const char lat_stages[] =
	"  - { stage: devices }\n  - { stage: rping }\n"
	"  - { stage: latency, tool: ib_send_lat, iterations: 200, size: 64B, "
	"max_typical: 20us, max_p99: 0.05ms }\n";

/* Healthy: every pair passes with the client's figures, the argv is the
 * stage's (device, port, GID, size, iterations, its own TCP ports), and
 * every report format carries the figures. */
static void test_validate_stages__latency_healthy(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, lat_stages, 0));
	struct ln_buf json = LN_BUF_INIT, text = LN_BUF_INIT, junit = LN_BUF_INIT,
		      prom = LN_BUF_INIT, html = LN_BUF_INIT;
	size_t i, n = 0;

	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_int_equal(w->res.stages[LN_STAGE_LATENCY].passed, 4);
	assert_int_equal(w->res.stages[LN_STAGE_LATENCY].rounds, 2);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_LATENCY)
			continue;
		n++;
		assert_string_equal(c->name, "ib_send_lat");
		assert_string_equal(c->unit, "us");
		assert_float_equal(c->value, 3.0, 1e-9);
		assert_float_equal(c->lat.typical, 3.0, 1e-9);
		assert_float_equal(c->lat.avg, 3.75, 1e-9);
		assert_float_equal(c->lat.p99, 6.0, 1e-9);
		assert_float_equal(c->lat.max_typical, 20.0, 0);
		assert_float_equal(c->lat.max_p99, 50.0, 0);
		assert_float_equal(c->threshold, 20.0, 0);
		if (!strstr(c->attempts[0].command, "ib_send_lat -d rxe0 -i 1 -x 1 -s 64 "
								"-n 200 -p 1861"))
			fail_msg("%s", c->attempts[0].command);
		assert_null(strstr(c->attempts[0].command, "report_gbits"));
	}
	assert_int_equal(n, 4);
	assert_int_equal(ln_report_json(&w->res, 0, &json), 0);
	if (!strstr(json.buf, "\"latency\":{\"typical_us\":3.0,\"avg_us\":3.75,\"p99_us\":6.0,"))
		fail_msg("%s", strstr(json.buf, "\"unit\":\"us\""));
	assert_non_null(strstr(json.buf, "\"max_typical_us\":20.0,\"max_p99_us\":50.0"));
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	assert_non_null(strstr(text.buf, "  latency    pass     4 passed, 0 failed"));
	assert_int_equal(ln_report_junit(&w->res, &junit), 0);
	assert_non_null(strstr(junit.buf, "<system-out>typical 3.00 us, avg 3.75 us, p99 6.00 us "
					  "(max typical 20 us, max p99 50 us)"));
	assert_int_equal(ln_report_metrics(&w->res, &prom), 0);
	assert_non_null(strstr(prom.buf, "llmnet_validation_pair_latency_us{cluster=\"fake\","
					 "stage=\"latency\",a=\"n1\",a_port=\"rxe0\","
					 "b_port=\"rxe0\",b=\"n2\",stat=\"p99\"} 6\n"));
	assert_int_equal(ln_report_html(&w->res, &html), 0);
	assert_non_null(strstr(html.buf, "id=\"latency-n1-n2\" class=\"pass\""));
	ln_test_release(&json, &text, &junit, &prom, &html);
}

/* A slow node and a slow link: the latency failures go through the same
 * diagnosis as bandwidth's and name exactly those, in every format. */
static void test_validate_stages__latency_bad_node_and_link(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, "  - { stage: rping }\n"
							  "  - { stage: latency, pairs: all, "
							  "max_typical: 20us }\n", 0));
	struct ln_buf text = LN_BUF_INIT, json = LN_BUF_INIT, prom = LN_BUF_INIT;
	char *v;
	size_t i;

	w->f.slow_node[3] = 1;
	w->f.slow_link[0][1] = 1;
	world_run(w);
	v = verdicts(&w->res);
	assert_string_equal(v, "latency:node:n4 latency:link:n1-n2 ");
	free(v);
	assert_int_equal(ln_results_exit(&w->res), 1);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_LATENCY || c->retest || c->status == LN_ST_PASS)
			continue;
		assert_true(c->a == 3 || c->b == 3 || (c->a + c->b == 1));
		assert_string_equal(c->reason, "typical latency 80.00 us is above 20 us");
		assert_float_equal(c->lat.p99, 160.0, 1e-9);
	}
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	assert_non_null(strstr(text.buf, "bad node n4 (latency)"));
	assert_non_null(strstr(text.buf, "bad link n1/rxe0-n2/rxe0 (latency)"));
	assert_non_null(strstr(text.buf, "fail: typical latency 80.00 us is above 20 us typical "
					 "80.00 us, avg 100.00 us, p99 160.00 us (max typical 20 us)"));
	assert_int_equal(ln_report_json(&w->res, 0, &json), 0);
	if (!strstr(json.buf, "\"culprits\":{\"nodes\":[\"n4\"],\"ports\":[],\"links\":"
			      "[[\"n1\",\"n2\"]],\"link_ports\":[[\"n1/rxe0\",\"n2/rxe0\"]]}"))
		fail_msg("%s", strstr(json.buf, "\"culprits\""));
	assert_int_equal(ln_report_metrics(&w->res, &prom), 0);
	assert_non_null(strstr(prom.buf, "llmnet_validation_bad_node{cluster=\"fake\","
					 "stage=\"latency\",node=\"n4\"} 1"));
	ln_test_release(&text, &json, &prom);
}

/* Two rails, n2's rxe1 slow with every partner: a bad port, exactly
 * n2/rxe1, while n2's rxe0 passes every pair; named so in every format. */
static void test_validate_stages__latency_bad_port(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4, "  - { stage: devices }\n"
								      "  - { stage: latency, "
								      "max_p99: 100us }\n"));
	struct ln_buf text = LN_BUF_INIT, json = LN_BUF_INIT, prom = LN_BUF_INIT,
		      junit = LN_BUF_INIT, html = LN_BUF_INIT;
	size_t i, rxe0 = 0;

	fake_two_rails(&w->f);
	w->f.slow_port[1][1] = 1;
	world_run(w);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	if (w->res.nverdicts != 1)
		fail_msg("%s", text.buf);
	assert_int_equal(w->res.verdicts[0].kind, LN_VERDICT_PORT);
	assert_int_equal(w->res.verdicts[0].stage, LN_STAGE_LATENCY);
	assert_int_equal(w->res.verdicts[0].a, 1);
	assert_string_equal(ln_results_port(&w->res, 1, w->res.verdicts[0].pa), "rxe1");
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_LATENCY || c->retest || (c->a != 1 && c->b != 1) ||
		    strcmp(ln_results_port(&w->res, c->a, c->pa), "rxe0"))
			continue;
		rxe0++;
		assert_int_equal(c->status, LN_ST_PASS);
	}
	assert_int_equal(rxe0, 2);
	if (!strstr(text.buf, "bad port n2/rxe1 (latency)"))
		fail_msg("%s", text.buf);
	assert_non_null(strstr(text.buf, "99th percentile 160.00 us is above 100 us"));
	assert_int_equal(ln_report_json(&w->res, 0, &json), 0);
	assert_non_null(strstr(json.buf, "\"culprits\":{\"nodes\":[],\"ports\":[\"n2/rxe1\"],"
					 "\"links\":[]"));
	assert_int_equal(ln_report_metrics(&w->res, &prom), 0);
	assert_non_null(strstr(prom.buf, "llmnet_validation_bad_port{cluster=\"fake\","
					 "stage=\"latency\",node=\"n2\",port=\"rxe1\"} 1"));
	assert_int_equal(ln_report_junit(&w->res, &junit), 0);
	assert_non_null(strstr(junit.buf, "classname=\"llmnet.latency\" name=\"n1/rxe1-n2/rxe1"));
	assert_int_equal(ln_report_html(&w->res, &html), 0);
	assert_non_null(strstr(html.buf, "bad port n2/rxe1</b> (latency)"));
	ln_test_release(&text, &json, &prom, &junit, &html);
}

/* The "error counters" check of node's port dev in stage st; NULL none. */
static const struct ln_check *ctr_check(const struct ln_results *r, enum ln_stage st,
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

/* Healthy, two rails: every tested port's counters read before and after
 * each of its pairs; rping's rises reported, not judged (no max_errors),
 * bandwidth's judged against max_errors: 10 and passing. A counter the
 * driver lacks stays not available (-1), never 0. */
static void test_validate_stages__counters_healthy(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4,
		"  - { stage: rping }\n  - { stage: bandwidth, max_errors: 10 }\n"));
	const struct ln_check *c;
	struct ln_buf text = LN_BUF_INIT, html = LN_BUF_INIT;
	size_t i, k, n = 0;

	fake_two_rails(&w->f);
	w->f.with_counters = 1;
	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_int_equal(w->res.nverdicts, 0);
	/* 8 pairs per stage, 2 ends, before and after */
	assert_int_equal(w->f.counter_reads, 2 * 8 * 2 * 2);
	for (i = 0; i < 4; i++)
		for (k = 0; k < 2; k++) {
			c = ctr_check(&w->res, LN_STAGE_RPING, i, k ? "rxe1" : "rxe0");
			assert_non_null(c);
			assert_int_equal(c->status, LN_ST_PASS);
			assert_true(isnan(c->threshold));
			assert_float_equal(c->value, 0, 0);
			assert_int_equal(c->ctr->partners, 2);
			assert_int_equal(c->ctr->max_errors, -1);
			c = ctr_check(&w->res, LN_STAGE_BANDWIDTH, i, k ? "rxe1" : "rxe0");
			assert_non_null(c);
			assert_int_equal(c->status, LN_ST_PASS);
			assert_null(c->reason);
			assert_float_equal(c->threshold, 10, 0);
			assert_string_equal(c->unit, "errors");
			assert_string_equal(c->ctr->driver, "rdma_rxe");
			assert_int_equal(c->ctr->errors, 0);
			assert_int_equal(c->ctr->n, 4);
			assert_string_equal(c->ctr->v[2].name, "send_err");
			assert_int_equal(c->ctr->v[2].delta, -1);
			assert_string_equal(c->ctr->v[3].name, "sent_pkts");
			assert_false(c->ctr->v[3].error);
			assert_true(c->ctr->v[3].delta > 0);
			n++;
		}
	assert_int_equal(n, 8);
	/* the pairs plus a check per port */
	assert_int_equal(w->res.stages[LN_STAGE_BANDWIDTH].passed, 8 + 8);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	assert_non_null(strstr(text.buf, "  rping      pass     16 passed, 0 failed, 0 skipped, "
					 "0 not run (4 rounds)\n             8 ports, 0 errors; "
					 "not judged (no max_errors)\n"));
	assert_non_null(strstr(text.buf, "8 ports, 0 errors; max_errors 10\n"));
	assert_int_equal(ln_report_html(&w->res, &html), 0);
	assert_non_null(strstr(html.buf, "16 of 16 ports gained no error (not listed)"));
	ln_test_release(&text, &html);
}

/* Loss on n2's rxe1: its counters rise with both its partners (n1, n3),
 * theirs with n2 only. Exactly n2/rxe1 is blamed; its partners pass with
 * a note, n2/rxe0 passes; the pairs themselves passed. */
static void test_validate_stages__counters_bad_port(void **state)
{
	struct world *w = world_start(state, 4, make_spec_two_rails(4,
		"  - { stage: bandwidth, max_errors: 10 }\n"));
	const struct ln_check *c;
	struct ln_buf text = LN_BUF_INIT, json = LN_BUF_INIT, prom = LN_BUF_INIT,
		      junit = LN_BUF_INIT, html = LN_BUF_INIT;
	char *v;

	fake_two_rails(&w->f);
	w->f.with_counters = 1;
	w->f.lossy[1][1] = 1;
	world_run(w);
	v = verdicts(&w->res);
	assert_string_equal(v, "bandwidth:port:n2 ");
	free(v);
	assert_string_equal(ln_results_port(&w->res, 1, w->res.verdicts[0].pa), "rxe1");
	assert_non_null(strstr(w->res.verdicts[0].reason, "'n2/rxe1' gained more than 10 errors "
				 "with 2 partners (n1/rxe1, n3/rxe1): rcvd_seq_err +80"));
	assert_int_equal(ln_results_exit(&w->res), 1);
	c = ctr_check(&w->res, LN_STAGE_BANDWIDTH, 1, "rxe1");
	assert_int_equal(c->status, LN_ST_FAIL);
	assert_int_equal(c->ctr->errors, 80);
	assert_int_equal(c->ctr->partners_over, 2);
	c = ctr_check(&w->res, LN_STAGE_BANDWIDTH, 0, "rxe1");
	assert_int_equal(c->status, LN_ST_PASS);
	assert_string_equal(c->reason, "40 errors (rcvd_seq_err +40), over 10 only with "
				       "'n2/rxe1', which is blamed");
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 1, "rxe0")->status, LN_ST_PASS);
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 1, "rxe0")->ctr->errors, 0);
	assert_int_equal(ctr_check(&w->res, LN_STAGE_BANDWIDTH, 3, "rxe1")->status, LN_ST_PASS);
	assert_int_equal(w->res.stages[LN_STAGE_BANDWIDTH].failed, 1);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	if (!strstr(text.buf, "bad port n2/rxe1 (bandwidth)"))
		fail_msg("%s", text.buf);
	assert_non_null(strstr(text.buf, "  bandwidth  FAIL     15 passed, 1 failed"));
	assert_non_null(strstr(text.buf, "8 ports, 160 errors (n1/rxe1 40, n2/rxe1 80, n3/rxe1 40); "
					 "max_errors 10\n"));
	assert_non_null(strstr(text.buf, "  bandwidth n2/rxe1 fail: 80 errors (rcvd_seq_err +80); "
					 "over 10 with 2 of its 2 partners (n1/rxe1, n3/rxe1)\n"));
	assert_int_equal(ln_report_json(&w->res, 0, &json), 0);
	assert_non_null(strstr(json.buf, "\"culprits\":{\"nodes\":[],\"ports\":[\"n2/rxe1\"],"
					 "\"links\":[]"));
	assert_non_null(strstr(json.buf, "\"node\":\"n2\",\"port\":\"rxe1\",\"rail\":\"rail1\","
					 "\"stage\":\"bandwidth\",\"name\":\"error counters\","
					 "\"status\":\"fail\""));
	assert_non_null(strstr(json.buf, "\"counters\":{\"driver\":\"rdma_rxe\",\"errors\":80,"
					 "\"max_errors\":10,\"partners\":2,\"partners_over\":2,"
					 "\"deltas\":{\"errors\":{\"rcvd_seq_err\":80,"
					 "\"out_of_seq_request\":0,\"send_err\":null}"));
	assert_int_equal(ln_report_metrics(&w->res, &prom), 0);
	assert_non_null(strstr(prom.buf, "llmnet_validation_port_errors{cluster=\"fake\","
					 "stage=\"bandwidth\",node=\"n2\",port=\"rxe1\"} 80\n"));
	assert_non_null(strstr(prom.buf, "llmnet_validation_port_counter_delta{cluster=\"fake\","
					 "stage=\"bandwidth\",node=\"n2\",port=\"rxe1\","
					 "counter=\"rcvd_seq_err\",kind=\"error\"} 80\n"));
	assert_null(strstr(prom.buf, "counter=\"send_err\""));
	assert_non_null(strstr(prom.buf, "llmnet_validation_bad_port{cluster=\"fake\","
					 "stage=\"bandwidth\",node=\"n2\",port=\"rxe1\"} 1"));
	assert_int_equal(ln_report_junit(&w->res, &junit), 0);
	assert_non_null(strstr(junit.buf, "name=\"n2/rxe1 error counters\" time=\"0.000\">\n"
					  "      <failure type=\"fail\" message=\"80 errors"));
	assert_non_null(strstr(junit.buf, "name=\"n4/rxe0 error counters\" time=\"0.000\">\n"
					  "      <system-out>0 errors (not available: send_err), "
					  "max_errors 10, over it with 0 of 2 partners\n"));
	assert_int_equal(ln_report_html(&w->res, &html), 0);
	assert_non_null(strstr(html.buf, "<tr id=\"counters-bandwidth-n2/rxe1\" title=\"80 errors"));
	assert_non_null(strstr(html.buf, "<td class=\"fail\">fail</td><td>80</td><td>10</td>"
					 "<td>2 / 2</td>"));
	assert_non_null(strstr(html.buf, "5 of 8 ports gained no error (not listed)"));
	assert_non_null(strstr(html.buf, "bad port n2/rxe1</b> (bandwidth)"));
	ln_test_release(&json, &prom, &junit, &html);
	ln_buf_release(&text);
}

/* Two nodes: each port has one partner, so loss on one names no culprit:
 * both ends are suspects (undetermined), nothing is blamed, the stage
 * fails. */
static void test_validate_stages__counters_one_partner_is_suspect(void **state)
{
	struct world *w = world_start(state, 2, make_spec(2, "  - { stage: rping, max_errors: 0 }\n",
							  0));
	char *v;

	w->f.with_counters = 1;
	w->f.lossy[0][0] = 1;
	world_run(w);
	v = verdicts(&w->res);
	assert_string_equal(v, "rping:undetermined:n1 rping:undetermined:n2 ");
	free(v);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_non_null(strstr(ctr_check(&w->res, LN_STAGE_RPING, 0, "rxe0")->reason,
			       "suspect: 40 errors (rcvd_seq_err +40), over 0 with its one partner "
			       "'n2/rxe0' only"));
}

/* Counters that cannot be read never pass on them: "not run" (the stage
 * fails) with max_errors; without it they are not judged, and say so. */
static void test_validate_stages__counters_unreadable(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: rping }\n"
							  "  - { stage: latency, max_errors: 5 }\n", 0));
	const struct ln_check *c;
	struct ln_buf text = LN_BUF_INIT;

	w->f.with_counters = 1;
	w->f.no_counters[2] = 1;
	world_run(w);
	c = ctr_check(&w->res, LN_STAGE_RPING, 2, "rxe0");
	assert_int_equal(c->status, LN_ST_PASS);
	assert_string_equal(c->reason, "not judged (no max_errors); counters of 'n3/rxe0' could "
				       "not be read: no counter table for this driver");
	assert_true(isnan(c->value));
	assert_int_equal(w->res.stages[LN_STAGE_RPING].status, LN_ST_PASS);
	c = ctr_check(&w->res, LN_STAGE_LATENCY, 2, "rxe0");
	assert_int_equal(c->status, LN_ST_NOT_RUN);
	assert_int_equal(ctr_check(&w->res, LN_STAGE_LATENCY, 0, "rxe0")->status, LN_ST_PASS);
	assert_int_equal(w->res.stages[LN_STAGE_LATENCY].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_int_equal(w->res.nverdicts, 0);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	assert_non_null(strstr(text.buf, "3 ports, 0 errors; not read: n3/rxe0; not judged "
					 "(no max_errors)\n"));
	assert_non_null(strstr(text.buf, "  latency   n3/rxe0 not run: counters of 'n3/rxe0' could "
					 "not be read: no counter table for this driver\n"));
	ln_buf_release(&text);
}

/* --dry-run: the latency stage's pairs and rounds, from the same
 * schedule the run uses, without a probe run. */
static void test_validate_stages__latency_dry_run(void **state)
{
	struct ln_spec *spec = make_spec(4, "  - { stage: latency, pairs: all, max_p99: 30us }\n", 0);
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;

	(void)state;
	assert_int_equal(ln_validate_schedule(spec, 0, &out, &err), 0);
	assert_string_equal(out.buf, "schedule of 'fake': 4 nodes, 1 rails: rail0 (4 nodes)\n"
				     "latency: pairs all, rails aligned: 6 pairs in 3 rounds\n"
				     "  round 1: n1/rxe0-n4/rxe0 (rail0) n2/rxe0-n3/rxe0 (rail0)\n"
				     "  round 2: n2/rxe0-n4/rxe0 (rail0) n1/rxe0-n3/rxe0 (rail0)\n"
				     "  round 3: n3/rxe0-n4/rxe0 (rail0) n1/rxe0-n2/rxe0 (rail0)\n");
	ln_test_release(&out, &err);
	ln_spec_free(spec);
}

static void test_validate_stages__twin_run_fails_every_pair(void **state)
{
	struct world *w = world_start(state, 5, make_spec(5, "  - { stage: rping }\n"
							  "  - { stage: bandwidth, min: 950Gb/s }\n",
							  0));
	struct ln_buf text = LN_BUF_INIT;
	size_t i, failed = 0;

	world_run(w);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_int_equal(ln_report_text(&w->res, 0, &text), 0);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];
		char want[64];

		if (c->stage != LN_STAGE_BANDWIDTH || c->retest)
			continue;
		failed++;
		assert_int_equal(c->status, LN_ST_FAIL);
		assert_string_equal(c->reason, "95 Gb/s is below 950 Gb/s");
		/* a low result is not retried (the second pass retests it) */
		assert_int_equal(c->nattempts, 1);
		/* the pair's nodes and the ports of its rail */
		snprintf(want, sizeof(want), "bandwidth n%zu/%s-n%zu/%s fail: 95 Gb/s is below",
			 c->a + 1, ln_results_port(&w->res, c->a, c->pa), c->b + 1,
			 ln_results_port(&w->res, c->b, c->pb));
		assert_non_null(strstr(text.buf, want));
	}
	assert_int_equal(failed, 5);
	ln_buf_release(&text);
}

static void test_validate_stages__port_down_skips_with_reason(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, all_stages, 1));
	size_t i, skipped = 0;
	char *v;

	/* node 3's port goes DOWN in its facts */
	json_object_object_add(json_object_array_get_idx(
		json_object_object_get(json_object_array_get_idx(
			json_object_object_get(w->f.facts[2], "rdma"), 0), "ports"), 0),
		"state", json_object_new_string("DOWN"));
	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage == LN_STAGE_DEVICES && c->a == 2 && !strcmp(c->name, "rxe0/1")) {
			assert_int_equal(c->status, LN_ST_FAIL);
			assert_string_equal(c->reason, "state DOWN, want ACTIVE");
		}
		if (c->stage == LN_STAGE_RPING && (c->a == 2 || c->b == 2)) {
			skipped++;
			assert_int_equal(c->status, LN_ST_SKIPPED);
			assert_string_equal(c->reason, "'n3' failed devices: state DOWN, want ACTIVE");
		}
	}
	assert_int_equal(skipped, 2);
	v = verdicts(&w->res);
	assert_string_equal(v, "devices:node:n3 ");
	free(v);
}

static void test_validate_stages__retry_and_timeout(void **state)
{
	struct world *w = world_start(state, 4,
				      make_spec(4, "  - { stage: rping, timeout: 7s }\n", 0));
	size_t i, seen = 0;

	w->f.race_once[0][1] = 1;
	w->f.hang[2][3] = 1;
	w->o.attempts = 2;
	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->a == 0 && c->b == 1 && !c->retest) {
			seen++;
			assert_int_equal(c->status, LN_ST_PASS);
			assert_int_equal(c->nattempts, 2);
			assert_false(c->attempts[0].ok);
			assert_string_equal(c->attempts[0].detail, "client on 'n2': cma event "
								   "RDMA_CM_EVENT_REJECTED, error 8");
			assert_true(c->attempts[1].ok);
		}
		if (c->a == 2 && c->b == 3 && !c->retest) {
			seen++;
			assert_int_equal(c->status, LN_ST_FAIL);
			assert_true(c->attempts[0].timed_out);
			assert_string_equal(c->attempts[0].detail,
					    "rping client on 'n4' (stage rping, pair n3-n4) timed out "
					    "after 7s: rping -c -a 10.0.0.3 -p 7175 -C 10 -V");
		}
	}
	assert_int_equal(seen, 2);
}

static void test_validate_stages__not_run_counts_as_failure(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, all_stages, 1));
	size_t i, nr = 0;

	w->f.no_mpicc[0] = 1;
	w->o.nccl_probe_source = NULL;
	world_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_FAIL);
	for (i = 0; i < w->res.nchecks; i++)
		if (w->res.checks[i].status == LN_ST_NOT_RUN) {
			nr++;
			assert_true(!strcmp(w->res.checks[i].reason, "no mpicc on 'n1'") ||
				    !strcmp(w->res.checks[i].reason, "the NCCL probe's source was not found"));
		}
	assert_int_equal(nr, 1 + 1);
	assert_int_equal(ln_results_exit(&w->res), 1);
}

static void test_validate_stages__stages_and_limit(void **state)
{
	struct world *w = world_start(state, 6, make_spec(6, all_stages, 1));
	struct ln_buf err = LN_BUF_INIT;
	unsigned char limit[6] = { 0, 0, 0, 0, 1, 0 };
	size_t i, pairs = 0;
	int s;

	assert_int_equal(ln_validate_parse_stages("devices,rping", &w->o.stages, &err), 0);
	assert_int_equal(ln_validate_parse_stages("devices,ping", &w->o.stages, &err), -EINVAL);
	assert_string_equal(err.buf, "unknown stage 'ping' (stages: devices, rping, bandwidth, "
				     "latency, io, mpi, nccl)");
	assert_int_equal(ln_validate_parse_stages("rping", &w->o.stages, &err), 0);
	w->o.limit = limit;
	world_run(w);
	for (s = 0; s < LN_STAGE_COUNT; s++)
		assert_int_equal(w->res.stages[s].listed, s == LN_STAGE_RPING);
	for (i = 0; i < w->res.nchecks; i++) {
		assert_int_equal(w->res.checks[i].stage, LN_STAGE_RPING);
		/* the new node only, against known-good peers */
		assert_int_equal(w->res.checks[i].b, 4);
		assert_true(w->res.checks[i].a != 4);
		pairs++;
	}
	assert_int_equal(pairs, 2);
	assert_int_equal(ln_results_exit(&w->res), 0);
	ln_buf_release(&err);
}

static void test_validate_stages__mpi_preflight_names_the_pair(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: mpi }\n", 1));
	char *v;

	w->f.no_ssh[1][2] = 1;
	world_run(w);
	v = verdicts(&w->res);
	assert_string_equal(v, "mpi:link:n2-n3 ");
	free(v);
	assert_non_null(strstr(w->res.verdicts[0].reason, "'n2' cannot start a rank on 'n3' (by SSH "
							"and name): no mpi probe result: 'ssh: Could "
							"not resolve hostname n3"));
	/* the full mpirun never started */
	assert_int_equal(w->res.stages[LN_STAGE_MPI].passed, 5);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].failed, 1);
	assert_int_equal(ln_results_exit(&w->res), 1);
}

static void test_validate_stages__mpi_probe_built_once_and_copied(void **state)
{
	struct world *w = world_start(state, 4, make_spec(4, "  - { stage: mpi }\n", 1));
	size_t i;

	world_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
	/* source and mpicc on the launcher (n1) only ... */
	assert_int_equal(w->f.src_puts[0], 1);
	assert_int_equal(w->f.mpicc_runs[0], 1);
	for (i = 1; i < 4; i++) {
		assert_int_equal(w->f.src_puts[i], 0);
		assert_int_equal(w->f.mpicc_runs[i], 0);
	}
	/* ... and its build, byte for byte, on every other node */
	assert_non_null(strstr(w->f.mpi_bin[0].buf, "built by mpicc on n1"));
	assert_true(same_bin_everywhere(&w->f, 0, 0));
	assert_int_equal(ln_results_exit(&w->res), 0);
}

/* No mpi section: apply wrote the hostfile at its default path all the
 * same, so mpi and nccl run over it (they said "not run" before). */
static void test_validate_stages__mpi_and_nccl_without_mpi_section(void **state)
{
	struct world *w = world_start(state, 2, make_spec(2, "  - { stage: mpi }\n"
							  "  - { stage: nccl }\n", 0));

	assert_false(w->spec->mpi.present);
	assert_string_equal(w->spec->mpi.hostfile, "/etc/llmnet/hostfile");
	world_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_PASS);
	assert_int_equal(w->f.mpicc_runs[0] + w->f.mpicc_runs[1], 1);
	assert_int_equal(ln_results_exit(&w->res), 0);
}

static void test_validate_stages__mpi_launcher_skips_failed_devices(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: devices }\n"
							  "  - { stage: mpi }\n", 1));

	/* n1's port is down: the launcher is n2 */
	json_object_put(w->f.facts[0]);
	w->f.facts[0] = json_tokener_parse("{\"hostname\":\"n1\",\"rdma\":[],\"gpus\":"
					"{\"count\":8},\"nvme\":[]}");
	assert_non_null(w->f.facts[0]);
	world_run(w);
	assert_int_equal(w->f.mpicc_runs[0], 0);
	assert_int_equal(w->f.mpicc_runs[1], 1);
	assert_int_equal(w->f.mpicc_runs[2], 0);
	assert_true(same_bin_everywhere(&w->f, 0, 1));
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_PASS);
}

static void test_validate_stages__mpi_no_mpicc_on_launcher(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: mpi }\n", 1));
	size_t i, nr = 0;

	w->f.no_mpicc[0] = 1;
	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		assert_int_equal(w->res.checks[i].status, LN_ST_NOT_RUN);
		assert_string_equal(w->res.checks[i].name, "build the mpi probe");
		assert_string_equal(w->res.checks[i].reason, "no mpicc on 'n1'");
		nr++;
	}
	assert_int_equal(nr, 1);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	/* mpicc was tried once, nothing was copied, mpirun never ran */
	assert_int_equal(w->f.mpicc_runs[0] + w->f.mpicc_runs[1] + w->f.mpicc_runs[2], 1);
	assert_false(w->f.has_mpi_bin[1] || w->f.has_mpi_bin[2]);
	assert_int_equal(w->f.runs, 1);
}

static void test_validate_stages__mpi_corrupt_copy_fails_that_node(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: mpi }\n", 1));
	size_t i, failed = 0;

	w->f.corrupt_copy[2] = 1;
	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		assert_int_equal(c->status, LN_ST_FAIL);
		assert_string_equal(c->name, "copy the mpi probe");
		assert_int_equal(c->a, 2);
		assert_non_null(strstr(c->reason, "the mpi probe copied to 'n3' has sha256 "));
		assert_non_null(strstr(c->reason, "the one built on 'n1' "));
		failed++;
	}
	assert_int_equal(failed, 1);
	assert_int_equal(w->res.stages[LN_STAGE_MPI].status, LN_ST_FAIL);
	assert_int_equal(w->f.mpicc_runs[0], 1);
	assert_int_equal(w->f.runs, 1);	/* no preflight, no mpirun on a bad copy */
}

/* The NCCL stage: built once on the launcher, copied, one mpirun with a
 * rank per GPU; each way the probe can end is judged as such. */
static void test_validate_stages__nccl_under_mpirun(void **state)
{
	static const struct {
		const char *printed, *status, *reason;
		size_t blamed;
	} cases[] = {
		/* a wrong result on one node's rank: that node is named and blamed */
		{ "error: rank 13 on n2: all_reduce result wrong at 1073741824 bytes: element "
		  "1023 is 7, expected 6\n"
		  "size 1073741824 time_us 9800.5 algbw 109.56 busbw 201.1 wrong 1\n"
		  "wrong rank 13 host n2 device 5 size 1073741824 elements 1 first 1023 got 7 "
		  "want 6\nresult fail\n", "fail",
		  "the all_reduce result is wrong: rank 13 on 'n2' (GPU 5) received 1 wrong "
		  "elements at 1073741824 bytes, the first (1023) 7 instead of 6", 1 },
		/* on two nodes: both named, the cluster's check */
		{ "size 1073741824 time_us 9800.5 algbw 109.56 busbw 201.1 wrong 3\n"
		  "wrong rank 2 host n1 device 2 size 1073741824 elements 1 first 0 got 7 want 6\n"
		  "wrong rank 9 host n2 device 1 size 1073741824 elements 2 first 5 got 0 want 6\n"
		  "result fail\n", "fail",
		  "the all_reduce result is wrong: rank 2 on 'n1' (GPU 2) received 1 wrong elements "
		  "at 1073741824 bytes, the first (0) 7 instead of 6; rank 9 on 'n2' (GPU 1) "
		  "received 2 wrong elements", LN_NO_NODE },
		{ "error: rank 0 on n1: ncclAllReduce failed: unhandled cuda error\nresult fail\n",
		  "fail", "ncclAllReduce failed", LN_NO_NODE },
		{ "error: rank 3 on n1: the library lacks 'ncclAllReduce': not an NCCL or CUDA "
		  "runtime this probe can use\nresult notrun\n", "not run", "lacks 'ncclAllReduce'",
		  LN_NO_NODE },
		{ "size 1073741824 time_us 9800.5 algbw 50.0 busbw 93.75 wrong 0\nresult pass\n",
		  "fail", "busbw 93.75 GB/s is below 100.00 GB/s", LN_NO_NODE },
	};
	size_t k, i;

	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		struct world *w = world_start(state, 2, make_spec(2, "  - { stage: nccl, bytes: "
								  "1GiB, min_busbw: 100GB/s }\n",
								  1));
		size_t seen = 0;

		snprintf(w->f.nccl_result, sizeof(w->f.nccl_result), "%s", cases[k].printed);
		world_run(w);
		for (i = 0; i < w->res.nchecks; i++) {
			const struct ln_check *c = &w->res.checks[i];

			assert_string_equal(c->name, "nccl all_reduce");
			assert_string_equal(ln_status_name(c->status), cases[k].status);
			assert_int_equal(c->a, cases[k].blamed);
			if (!strstr(c->reason, cases[k].reason))
				fail_msg("case %zu: '%s' lacks '%s'", k, c->reason, cases[k].reason);
			seen++;
		}
		assert_int_equal(seen, 1);
		assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_FAIL);
		assert_int_equal(w->f.nccl_mpicc_runs[0] + w->f.nccl_mpicc_runs[1], 1);
		world_teardown(state);
		world_setup(state);
	}
}

/* nccl.op reaches the probe's --op and names the check, for every op. */
static void test_validate_stages__nccl_every_op(void **state)
{
	static const char *const ops[] = { "all_reduce", "all_gather", "reduce_scatter",
					    "broadcast", "reduce" };
	char stage[128], name[64];
	size_t k;

	for (k = 0; k < ARRAY_SIZE(ops); k++) {
		struct world *w;

		snprintf(stage, sizeof(stage), "  - { stage: nccl, op: %s }\n", ops[k]);
		w = world_start(state, 2, make_spec(2, stage, 1));
		world_run(w);
		snprintf(name, sizeof(name), "nccl %s", ops[k]);
		assert_int_equal(w->res.nchecks, 1);
		assert_string_equal(w->res.checks[0].name, name);
		assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
		assert_string_equal(w->f.nccl_op, ops[k]);
		world_teardown(state);
		world_setup(state);
	}
}

/* The NCCL environment on the probe's command line: NCCL_IB_HCA from each
 * node's declared ports (the list most nodes share, and the node that
 * differs by its host), NCCL_IB_GID_INDEX only while every port agrees,
 * socket_ifname and nccl.env in the spec's order. */
static void test_validate_stages__nccl_environment(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl, socket_ifname: "
							 "\"^docker\", env: { NCCL_ALGO: Ring, "
							 "NCCL_IB_TC: 106 } }\n", 1));
	struct ln_node *nodes = w->spec->nodes;
	size_t i;

	for (i = 0; i < 3; i++)
		nodes[i].rdma[0].gid_index = 3;
	nodes[2].rdma[0].device = "mlx5_0";
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	if (!strstr(w->f.nccl_argv, " --expect-ranks 24 --hca rxe0:1 --hca-at n3=mlx5_0:1 "
			"--gid-index 3 --socket-ifname ^docker --env NCCL_ALGO=Ring --env "
			"NCCL_IB_TC=106"))
		fail_msg("argv: %s", w->f.nccl_argv);
	ln_results_release(&w->res);

	/* one port on another GID index: NCCL chooses its own */
	nodes[1].rdma[0].gid_index = 2;
	fake_release(&w->f);
	fake_init(&w->f, 3);
	world_run(w);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	assert_non_null(strstr(w->f.nccl_argv, " --hca-at n3=mlx5_0:1 --socket-ifname ^docker "));
	assert_null(strstr(w->f.nccl_argv, "--gid-index"));
}

/* A node without GPUs (a storage node, slots 1): the ranks go to the GPU
 * nodes only, by --host NAME:GPUS, one per GPU; the hostfile is not used. */
static void test_validate_stages__nccl_gpuless_node(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl }\n", 1));

	w->spec->nodes[1].gpus = 0;
	w->spec->nodes[1].slots = 1;
	w->f.nccl_np = 16;
	w->f.nccl_hosts = "n1:8,n3:8";
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	assert_non_null(strstr(w->f.nccl_argv, " --host n1:8,n3:8 -np 16 "));
	assert_null(strstr(w->f.nccl_argv, "--hostfile"));
}

/* Uneven GPU counts: the hostfile's slots (= gpus) place the ranks; a
 * node whose slots differ from its GPUs makes the stage "not run". */
static void test_validate_stages__nccl_uneven_gpus(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl }\n", 1));

	w->spec->nodes[1].gpus = 4;
	w->spec->nodes[1].slots = 4;
	w->f.nccl_np = 8 + 4 + 8;
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_PASS);
	ln_results_release(&w->res);

	w->spec->nodes[1].slots = 1;
	fake_release(&w->f);
	fake_init(&w->f, 3);
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_NOT_RUN);
	assert_string_equal(w->res.checks[0].reason, "one rank per GPU: the nodes declare different "
				"GPU counts and 'n2' has 1 MPI slots for 4 GPUs (make its slots "
				"equal its gpus)");
	assert_int_equal(w->f.runs, 0);
}

static void test_validate_stages__nccl_no_mpicc_on_launcher(void **state)
{
	struct world *w = world_start(state, 3, make_spec(3, "  - { stage: nccl }\n", 1));

	w->f.no_mpicc[0] = 1;
	world_run(w);
	assert_int_equal(w->res.nchecks, 1);
	assert_int_equal(w->res.checks[0].status, LN_ST_NOT_RUN);
	assert_string_equal(w->res.checks[0].name, "build the nccl probe");
	assert_string_equal(w->res.checks[0].reason, "no mpicc on 'n1'");
	assert_int_equal(w->res.stages[LN_STAGE_NCCL].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	assert_int_equal(w->f.runs, 1);	/* mpicc once, no mpirun */
}

/* The io stage's world: n1 exports, n2 (mounted) and n4 (raw) hold a live
 * controller with its namespace, n3 has none. */
static struct world *io_world(void **state, struct ln_buf *y)
{
	static const char io_spec[] =
		"storage:\n  targets:\n    - nqn: nqn.2024-04.io.llmnet:n1.t1\n      node: n1\n"
		"      transport: rdma\n      namespaces:\n        - { nsid: 1, file: /srv/a.img, "
		"size: 1GiB }\n  initiators:\n    - node: n2\n      target: nqn.2024-04.io.llmnet:n1.t1\n"
		"      mount: { path: /mnt/ckpt, fs: ext4 }\n    - node: n3\n"
		"      target: nqn.2024-04.io.llmnet:n1.t1\n    - node: n4\n"
		"      target: nqn.2024-04.io.llmnet:n1.t1\n"
		"validation:\n  - { stage: devices }\n  - { stage: io, size: 16MiB, min: 500MB/s }\n";
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	struct world *w;
	size_t i;

	ln_buf_addstr(y, "version: 1\ncluster: fake\nnodes:\n");
	for (i = 0; i < 4; i++)
		ln_buf_addf(y, "  - name: n%zu\n    address: 127.0.1.%zu\n    gpus: 8\n    rdma:\n"
			    "      - { device: rxe0, port: 1, ip: 10.0.0.%zu }\n", i + 1, i + 1, i + 1);
	ln_buf_addstr(y, io_spec);
	if (ln_spec_load_buf("io.yaml", y->buf, y->len, &spec, &err) < 0)
		fail_msg("%s", err.buf);
	w = world_start(state, 4, spec);
	for (i = 1; i < 4; i += 2)
		json_object_object_add(w->f.facts[i], "nvme", json_tokener_parse(
			"[{\"name\":\"nvme1\",\"transport\":\"rdma\",\"subsysnqn\":"
			"\"nqn.2024-04.io.llmnet:n1.t1\",\"state\":\"live\",\"namespaces\":"
			"[{\"nsid\":1,\"block\":\"nvme1n1\",\"size_bytes\":1073741824}]}]"));
	ln_buf_release(&err);
	return w;
}

/* The io probe is copied once to each node that runs it (not to n3,
 * which has no namespace); a failed copy makes that node's check "not
 * run" with the node named, and the other nodes still probe. */
static void test_validate_stages__io_probe_copies(void **state)
{
	struct ln_buf y = LN_BUF_INIT;
	struct world *w = io_world(state, &y);
	size_t i, seen = 0;

	w->f.put_fails[3] = 1;
	world_run(w);
	assert_int_equal(w->f.io_puts[0], 0);
	assert_int_equal(w->f.io_puts[1], 1);
	assert_int_equal(w->f.io_puts[2], 0);
	assert_int_equal(w->f.io_puts[3], 1);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_IO)
			continue;
		seen++;
		if (c->a == 1)
			assert_int_equal(c->status, LN_ST_PASS);
		if (c->a == 3) {
			assert_int_equal(c->status, LN_ST_NOT_RUN);
			assert_string_equal(c->reason, "cannot install '/var/lib/llmnet/bin/"
						       "llmnet-probe-io' on 'n4': sftp error 4");
		}
	}
	assert_int_equal(seen, 3);
	ln_buf_release(&y);
}

static void test_validate_stages__io(void **state)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct world *w = io_world(state, &y);
	size_t i, seen = 0;

	world_run(w);
	for (i = 0; i < w->res.nchecks; i++) {
		const struct ln_check *c = &w->res.checks[i];

		if (c->stage != LN_STAGE_IO)
			continue;
		seen++;
		if (c->a == 1) {
			assert_int_equal(c->status, LN_ST_PASS);
			assert_float_equal(c->value, 900.0, 1e-9);	/* the lower of write and read */
			assert_float_equal(c->threshold, 500.0, 1e-9);
			assert_string_equal(c->unit, "MB/s");
			assert_string_equal(c->attempts[0].command, "/var/lib/llmnet/bin/llmnet-probe-io --mount /mnt/ckpt "
								    "--size 16777216");
		} else if (c->a == 3) {	/* a raw device is named with its subsystem */
			assert_string_equal(c->attempts[0].command, "/var/lib/llmnet/bin/llmnet-probe-io --device /dev/"
				"nvme1n1 --nqn nqn.2024-04.io.llmnet:n1.t1 --size 16777216");
		} else {
			assert_int_equal(c->a, 2);
			assert_int_equal(c->status, LN_ST_SKIPPED);
			assert_string_equal(c->reason, "devices found no namespace 1 of "
						       "'nqn.2024-04.io.llmnet:n1.t1'");
		}
	}
	assert_int_equal(seen, 3);
	assert_int_equal(w->res.stages[LN_STAGE_DEVICES].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	ln_test_release(&y, &err);
}

#define WORLD_TEST(t) cmocka_unit_test_setup_teardown(t, world_setup, world_teardown)

LN_TEST_MAIN(group_setup, group_teardown,
	WORLD_TEST(test_validate_stages__healthy),
	WORLD_TEST(test_validate_stages__bad_node_and_bad_link),
	WORLD_TEST(test_validate_stages__latency_healthy),
	WORLD_TEST(test_validate_stages__latency_bad_node_and_link),
	cmocka_unit_test(test_validate_stages__latency_dry_run),
	WORLD_TEST(test_validate_stages__latency_bad_port),
	WORLD_TEST(test_validate_stages__counters_healthy),
	WORLD_TEST(test_validate_stages__counters_bad_port),
	WORLD_TEST(test_validate_stages__counters_one_partner_is_suspect),
	WORLD_TEST(test_validate_stages__counters_unreadable),
	WORLD_TEST(test_validate_stages__twin_run_fails_every_pair),
	WORLD_TEST(test_validate_stages__port_down_skips_with_reason),
	WORLD_TEST(test_validate_stages__retry_and_timeout),
	WORLD_TEST(test_validate_stages__not_run_counts_as_failure),
	WORLD_TEST(test_validate_stages__stages_and_limit),
	WORLD_TEST(test_validate_stages__mpi_preflight_names_the_pair),
	WORLD_TEST(test_validate_stages__mpi_probe_built_once_and_copied),
	WORLD_TEST(test_validate_stages__mpi_and_nccl_without_mpi_section),
	WORLD_TEST(test_validate_stages__mpi_launcher_skips_failed_devices),
	WORLD_TEST(test_validate_stages__mpi_no_mpicc_on_launcher),
	WORLD_TEST(test_validate_stages__mpi_corrupt_copy_fails_that_node),
	WORLD_TEST(test_validate_stages__nccl_under_mpirun),
	WORLD_TEST(test_validate_stages__nccl_every_op),
	WORLD_TEST(test_validate_stages__nccl_environment),
	WORLD_TEST(test_validate_stages__nccl_uneven_gpus),
	WORLD_TEST(test_validate_stages__nccl_gpuless_node),
	WORLD_TEST(test_validate_stages__nccl_no_mpicc_on_launcher),
	WORLD_TEST(test_validate_stages__io),
	WORLD_TEST(test_validate_stages__io_probe_copies),
)
