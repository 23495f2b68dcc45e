/* SPDX-License-Identifier: MIT */
/*
 * What lint accepts, the agent does (issue 12, point 7): the parts the
 * test_agree_*.c binaries share. Header-only: each test binary is one file.
 *
 * 1. Every example and every valid spec under tests/ is turned into the
 *    agent requests the controller would send (ln_plan_request, for every
 *    node and both apply phases), and the agent's own request validator
 *    (agents/agent/core/request.c) must accept each one
 *    (test_agree_requests.c, with the keys refused by name).
 * 2. Every key of the spec grammar (walked from the key tables, so a new
 *    key without a case fails) has a case: one spec with the key at one
 *    value and one with another, and what llmnet does with the two must
 *    differ: the agent requests, the SSH options the controller connects
 *    with and its fan-out width, or the probes' command lines, bounds and
 *    verdicts of a validation run against a fake cluster. A key whose
 *    change makes no difference fails with its name. The cases are in
 *    agree_keys.h, by spec section, and each section is a program of its
 *    own: test_agree_nodes.c, test_agree_storage.c, test_agree_validation.c
 *    (mpi and validation), and test_agree_cluster.c for every other
 *    top-level key (version, cluster, persist, ssh).
 */
#ifndef LN_TEST_AGREE_H
#define LN_TEST_AGREE_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"

#include "common/error.h"
#include "common/json.h"
#include "common/proto.h"
#include "common/util.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/run/run.h"
#include "orchestrator/secrets.h"
#include "orchestrator/spec/impl.h"
#include "orchestrator/spec/parser.h"
#include "orchestrator/validate/after.h"
#include "orchestrator/validate/results.h"
#include "orchestrator/validate/slurm.h"
#include "orchestrator/validate/stages.h"

#define ROOT FIXTURES_DIR "/../.."
#define MAXN 8

/* ---- facts a node would report ----------------------------------------- */

/* A node's PCIe topology (facts.topology): GPUs 0-3 and rxe0 below one
 * switch on NUMA node 0 (PIX), GPUs 4-7 and rxe1 below another on NUMA
 * node 1; the rxe ports are given PCI places here so that rdma[].gpus
 * and max_gpu_distance have pairs to judge. */
static inline void topology_entry(struct ln_buf *js, int bus, int hb, int slot)
{
	static const char hop[] = "{\"bus_id\":\"0000:%02x:%02x.0\",\"type\":\"%s\",\"acs\":null}";

	ln_buf_addf(js, "\"bus_id\":\"0000:%02x:00.0\",\"numa_node\":%d,\"host_bridge\":"
		    "\"pci0000:%02x\",\"path\":[", bus, hb / 0x80, hb);
	ln_buf_addf(js, hop, hb, 1, "root_port");
	ln_buf_addch(js, ',');
	ln_buf_addf(js, hop, hb + 1, 0, "upstream");
	ln_buf_addch(js, ',');
	ln_buf_addf(js, hop, hb + 2, slot, "downstream");
	ln_buf_addstr(js, "],\"iommu_group\":null,\"iommu_type\":null}");
}

static inline void topology_facts(struct ln_buf *js)
{
	int k;

	ln_buf_addstr(js, "\"topology\":{\"gpus\":[");
	for (k = 0; k < 8; k++) {
		ln_buf_addf(js, "%s{\"index\":%d,", k ? "," : "", k);
		topology_entry(js, (k / 4) * 0x80 + 0x10 + k % 4, (k / 4) * 0x80, k % 4);
	}
	ln_buf_addstr(js, "],\"nics\":[");
	for (k = 0; k < 2; k++) {
		ln_buf_addf(js, "%s{\"device\":\"rxe%d\",", k ? "," : "", k);
		topology_entry(js, k * 0x80 + 0x18, k * 0x80, 8);
	}
	ln_buf_addstr(js, "],\"iommu\":{\"present\":false,\"cmdline\":\"ro\"},"
		      "\"peer_memory\":{\"nvidia_peermem\":false,\"nv_peer_mem\":false,"
		      "\"dmabuf\":{\"kernel\":true,\"gpu_open_modules\":true,\"verbs\":true,"
		      "\"why\":null}}},");
}

/* Node i's facts: its host NQN, two Soft-RoCE ports (rails), 8 GPUs and
 * their topology, and a live controller with every declared namespace
 * for every target it initiates to. */
static inline struct json_object *node_facts(const struct ln_spec *spec, size_t i)
{
	struct ln_buf js = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *o = NULL;
	size_t k, n = 0;

	ln_buf_addf(&js,
		    "{\"protocol\":1,\"hostname\":\"h%zu\",\"host_nqn\":\"nqn.2014-08.org.nvmexpress:"
		    "uuid:00000000-0000-4000-8000-%012zx\",\"rdma\":[{\"device\":\"rxe0\",\"ports\":"
		    "[{\"port\":1,\"state\":\"ACTIVE\",\"phys_state\":\"LINK_UP\",\"rate_gbps\":100,"
		    "\"active_mtu\":1024,\"link_layer\":\"Ethernet\",\"gids\":[{\"index\":1,\"gid\":"
		    "\"0000:0000:0000:0000:0000:ffff:0a00:00%02zx\",\"type\":\"RoCE v2\"}]}]},"
		    "{\"device\":\"rxe1\",\"ports\":[{\"port\":1,\"state\":\"ACTIVE\","
		    "\"phys_state\":\"LINK_UP\",\"rate_gbps\":100,\"active_mtu\":1024,"
		    "\"link_layer\":\"Ethernet\",\"gids\":[{\"index\":1,\"gid\":"
		    "\"0000:0000:0000:0000:0000:ffff:0a00:01%02zx\",\"type\":\"RoCE v2\"}]}]}],"
		    "\"gpus\":{\"count\":8},", i + 1, i + 1, i + 1, i + 1);
	topology_facts(&js);
	ln_buf_addstr(&js, "\"nvmet\":{\"subsystems\":[]},\"nvme\":[");
	for (k = 0; k < spec->n_initiators; k++) {
		const struct ln_target *t = &spec->targets[spec->initiators[k].target];
		size_t j;

		if (spec->initiators[k].node != i)
			continue;
		ln_buf_addf(&js, "%s{\"subsysnqn\":\"%s\",\"state\":\"live\",\"namespaces\":[",
			    n++ ? "," : "", t->nqn);
		for (j = 0; j < t->n_namespaces; j++)
			ln_buf_addf(&js, "%s{\"nsid\":%u,\"block\":\"nvme%zun%u\"}", j ? "," : "",
				    t->namespaces[j].nsid, k, t->namespaces[j].nsid);
		ln_buf_addstr(&js, "]}");
	}
	ln_buf_addstr(&js, "]}");
	if (ln_json_parse(js.buf, js.len, &o, &err) < 0)
		fail_msg("facts: %s", err.buf);
	ln_test_release(&js, &err);
	return o;
}

/* A run over spec as the controller prepares it, every node reachable
 * with its facts read (ln_run_release frees them). */
static inline void run_start(struct ln_run *r, const struct ln_spec *spec)
{
	struct ln_buf err = LN_BUF_INIT, made = LN_BUF_INIT;
	size_t i;

	if (ln_run_init(r, spec, 0, NULL, 0, NULL, 0, "test", &err) < 0)
		fail_msg("%s: %s", spec->path, err.buf);
	/* the DH-HMAC-CHAP secrets, made as `llmnet keys` makes them (HOME
	 * is the test's own directory) and loaded as plan and apply do */
	if (ln_secrets_make(spec, &made, &err) < 0 || ln_secrets_load(spec, &r->secrets, &err) < 0)
		fail_msg("%s: secrets: %s", spec->path, err.buf);
	ln_buf_release(&made);
	for (i = 0; i < r->n; i++) {
		r->nodes[i].state = LN_NODE_OK;
		r->nodes[i].facts = node_facts(spec, i);
	}
	ln_buf_release(&err);
}

/* Node i's request in phase, as text (ln_buf_release it). */
static inline void request_text(const struct ln_run *r, size_t i, enum ln_plan_phase phase,
			 struct ln_buf *out)
{
	struct json_object *req = ln_plan_request(r, i, phase, NULL);

	assert_non_null(req);
	assert_int_equal(ln_json_write(req, 0, out), 0);
	json_object_put(req);
}

/* A fake cluster for ln_validate_run: tools answer as the real ones do
 * when healthy, every probe run is logged with its node and bound. */
#define MAXF 8	/* files a node holds: the io probe, two sources, two builds */

struct fake {
	pthread_mutex_t lock;
	struct json_object *facts[MAXN];
	char path[MAXN][MAXF][256];	/* "" : a free slot */
	struct ln_buf data[MAXN][MAXF];
	struct ln_buf log;
};

static inline int fake_facts(void *ctx, size_t node, struct json_object **out, struct ln_buf *err)
{
	struct fake *f = ctx;

	(void)err;
	*out = f->facts[node];
	return 0;
}

/* The file slot for path on node (a free one when create). */
static inline struct ln_buf *fake_file(struct fake *f, size_t node, const char *path, int create)
{
	size_t k;

	for (k = 0; k < MAXF; k++)
		if (!strcmp(f->path[node][k], path) || (create && !f->path[node][k][0])) {
			snprintf(f->path[node][k], sizeof(f->path[node][k]), "%s", path);
			return &f->data[node][k];
		}
	return NULL;
}

static inline int fake_put(void *ctx, size_t node, const char *path, const void *data, size_t len,
		    struct ln_buf *err)
{
	struct fake *f = ctx;
	struct ln_buf *b;

	(void)err;
	pthread_mutex_lock(&f->lock);
	b = fake_file(f, node, path, 1);
	assert_non_null(b);
	ln_buf_reset(b);
	ln_buf_add(b, data, len);
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static inline int fake_get(void *ctx, size_t node, const char *path, struct ln_buf *data,
		    struct ln_buf *err)
{
	struct fake *f = ctx;
	struct ln_buf *b;
	int r = 0;

	pthread_mutex_lock(&f->lock);
	b = fake_file(f, node, path, 0);
	if (b) {
		ln_buf_reset(data);
		ln_buf_add(data, b->buf, b->len);
	} else {
		ln_buf_addf(err, "cat: %s: No such file or directory", path);
		r = -ENOENT;
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

/* mpirun starting nccl-tests: its report, one rank a GPU, busbw falling
 * as the ranks grow (so a scaling sweep's efficiency is below 1). */
static inline void fake_mpirun_tests(long np, const char *const *argv, struct ln_buf *out)
{
	unsigned long long b = strtoull(ln_test_arg_after(argv, "-b"), NULL, 10);
	unsigned long long e = strtoull(ln_test_arg_after(argv, "-e"), NULL, 10);
	long r;

	ln_buf_addstr(out, "# nThread 1 nGpus 1\n#\n# Using devices\n");
	for (r = 0; r < np; r++)
		ln_buf_addf(out, "#  Rank %2ld Group  0 Pid 4100 on h%ld device %2ld [0x1] GPU\n",
			    r, r / 8 + 1, r % 8);
	for (; b && b <= e; b *= 2)
		ln_buf_addf(out, "%12llu %12llu float sum -1 40.00 10.00 %.2f 0 41.00 9.90 9.90 0\n",
			    b, b / 4, 800.0 / (double)(np + 72));
	ln_buf_addstr(out, "# Out of bounds values : 0 OK\n");
}

/* mpirun: nccl-tests (a program ending _perf), the NCCL probe (it takes
 * --bytes) or the MPI probe. */
static inline void fake_mpirun(const char *const *argv, struct ln_buf *out)
{
	long np = atol(ln_test_arg_after(argv, "-np")), r;
	size_t k, n;

	for (k = 0; argv[k]; k++)
		if ((n = strlen(argv[k])) > 5 && !strcmp(argv[k] + n - 5, "_perf")) {
			fake_mpirun_tests(np, argv, out);
			return;
		}
	if (ln_test_arg_after(argv, "--bytes")) {
		ln_buf_addf(out, "llmnet-nccl-probe 2\nop %s ranks %ld bytes %s\n",
			    ln_test_arg_after(argv, "--op"), np, ln_test_arg_after(argv, "--bytes"));
		for (r = 0; r < np; r++)
			ln_buf_addf(out, "rank %ld host h%ld device %ld\n", r, r / 8 + 1, r % 8);
		ln_buf_addf(out, "size %s time_us 9800.5 algbw 109.56 busbw %.2f wrong 0\n"
			    "result pass\n", ln_test_arg_after(argv, "--bytes"),
			    109.56 * 2 * (double)(np - 1) / (double)np);
		return;
	}
	ln_buf_addf(out, "llmnet-mpi-probe 1\nranks %ld\n", np);
	for (r = 0; r < np; r++)
		ln_buf_addf(out, "rank %ld host h%ld\n", r, r % 4 + 1);
	ln_buf_addstr(out, "allreduce elements 262144 seconds 0.004 result ok\nresult pass\n");
}

static inline int fake_run(void *ctx, size_t node, unsigned lane, const char *const *argv,
		    const char *sha256, int timeout_s, struct ln_probe_result *out,
		    struct ln_buf *err)
{
	struct fake *f = ctx;
	const char *p = argv[0];
	int i;

	(void)err;
	pthread_mutex_lock(&f->lock);
	ln_buf_addf(&f->log, "run on %zu lane %u, bound %ds%s%s:", node, lane, timeout_s,
		    sha256 ? ", sha256 " : "", sha256 ? sha256 : "");
	for (i = 0; argv[i]; i++)
		ln_buf_addf(&f->log, " %s", argv[i]);
	ln_buf_addch(&f->log, '\n');
	out->exit_status = 0;
	out->timed_out = 0;
	out->seconds = 0.01;
	if (argv[1] && !strcmp(argv[1], "--help")) {
		/* perftest's usage, as Debian 12's: no --bind_source_ip (issue 27) */
		ln_buf_addstr(&out->output, "  -R, --rdma_cm  Connect QPs with rdma_cm\n");
		out->exit_status = 1;
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	if (!strcmp(p, "ib_write_bw") || !strcmp(p, "ib_send_bw")) {
		ln_buf_addstr(&out->output, "------------------------------------------------------"
			      "---------------------------------\n #bytes     #iterations    BW peak"
			      "[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
		/* both ends print the row, as ib_write_bw's do */
		ln_buf_addf(&out->output, " %-7lu    1000           96.00            95.00"
			    "\t\t   0.011000\n", strtoul(ln_test_arg_after(argv, "-s"), NULL, 10));
	} else if (!strcmp(p, "mpicc")) {
		struct ln_buf *b = fake_file(f, node, argv[3], 1);

		ln_buf_reset(b);
		ln_buf_addf(b, "\177ELF probe %s\n", argv[4]);
	} else if (!strcmp(p, "mpirun")) {
		fake_mpirun(argv, &out->output);
	} else if (!strcmp(p, "scontrol") && !strcmp(argv[1], "-o")) {
		/* every node drained by this cluster's llmnet, at devices */
		ln_buf_addf(&out->output, "NodeName=%s State=IDLE+DRAIN Reason=llmnet:keys: "
			    "devices: earlier [root@2026-12-04T01:00:00]\n", argv[4]);
	} else if (!strcmp(p, LN_PROBE_IO)) {
		ln_buf_addstr(&out->output, "llmnet-io-probe 1\nwrite_mbps 900.0\nread_mbps 1200.0\n"
			      "result pass\n");
	}
	if (!strcmp(p, "ib_write_lat") || !strcmp(p, "ib_send_lat")) {
		ln_buf_addstr(&out->output, " #bytes #iterations    t_min[usec]    t_max[usec]  "
			      "t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]"
			      "   99.9% percentile[usec] \n");
		ln_buf_addf(&out->output, " %-7lu %-10lu 2.00 9.00 3.00 3.20 0.30 6.00 8.00\n",
			    strtoul(ln_test_arg_after(argv, "-s"), NULL, 10),
			    strtoul(ln_test_arg_after(argv, "-n"), NULL, 10));
	}
	/* rping: a healthy run prints nothing and exits 0 */
	pthread_mutex_unlock(&f->lock);
	return 0;
}


/* Healthy rdma_rxe counters: nothing rises. */
static inline int fake_counters(void *ctx, size_t node, unsigned lane, const char *const *ports,
			 size_t n, struct json_object **out, struct ln_buf *err)
{
	char js[256];

	(void)ctx;
	(void)node;
	(void)lane;
	(void)n;
	(void)err;
	snprintf(js, sizeof(js), "{\"protocol\":3,\"counters\":[{\"port\":\"%s\",\"driver\":"
		 "\"rdma_rxe\",\"errors\":{\"rcvd_seq_err\":0},\"other\":{}}]}", ports[0]);
	*out = json_tokener_parse(js);
	return *out ? 0 : -ENOMEM;
}

/* `facts --refused`: logged like a run (the places and the bound), every
 * attempt refused. */
static inline int fake_refused(void *ctx, size_t node, const char *const *places, size_t n,
			       int timeout_s, struct json_object **out, struct ln_buf *err)
{
	struct fake *f = ctx;
	size_t i;

	(void)err;
	pthread_mutex_lock(&f->lock);
	ln_buf_addf(&f->log, "refused on %zu, bound %ds:", node, timeout_s);
	for (i = 0; i < n; i++)
		ln_buf_addf(&f->log, " %s", places[i]);
	ln_buf_addch(&f->log, '\n');
	pthread_mutex_unlock(&f->lock);
	*out = json_tokener_parse("{\"protocol\":3,\"refused\":[{\"outcome\":\"refused\","
				  "\"errno\":5,\"error\":\"Connect Invalid Host\",\"left_behind\":0}]}");
	return *out ? 0 : -ENOMEM;
}

/* run with an environment (nccl-tests by launcher none): logged, then run. */
static inline int fake_run_env(void *ctx, size_t node, const char *const *argv,
			       const char *const *env, int timeout_s, struct ln_probe_result *out,
			       struct ln_buf *err)
{
	struct fake *f = ctx;
	int i;

	pthread_mutex_lock(&f->lock);
	ln_buf_addf(&f->log, "env on %zu:", node);
	for (i = 0; env[i]; i++)
		ln_buf_addf(&f->log, " %s", env[i]);
	ln_buf_addch(&f->log, '\n');
	pthread_mutex_unlock(&f->lock);
	return fake_run(ctx, node, 0, argv, NULL, timeout_s, out, err);
}

static const struct ln_probe_ops fake_ops = { fake_facts, fake_run, fake_put, fake_get,
					      fake_counters, NULL, fake_refused, fake_run_env };

static inline int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the lines of b in place (threads log in any order). */
static inline void sort_lines(struct ln_buf *b)
{
	char **lines, *p, *nl, *copy = strdup(b->buf);
	size_t n = 0, i;

	assert_non_null(copy);
	for (p = copy; *p; p++)
		n += *p == '\n';
	lines = calloc(n + 1, sizeof(*lines));
	assert_non_null(lines);
	for (n = 0, p = copy; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		*nl = '\0';
		lines[n++] = p;
	}
	if (n)
		qsort(lines, n, sizeof(*lines), line_cmp);
	ln_buf_reset(b);
	for (i = 0; i < n; i++)
		ln_buf_addf(b, "%s\n", lines[i]);
	free(lines);
	free(copy);
}

/* The Slurm action the spec asks for, over a run's results: its scontrol
 * calls in order, and what it drained, lifted or left. */
static inline void slurm_effects(const struct ln_spec *spec, struct fake *f,
				 struct ln_results *res, struct ln_buf *out)
{
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_after_opts ao;
	size_t i;

	memset(&ao, 0, sizeof(ao));
	ao.spec = spec;
	ao.ops = &fake_ops;
	ao.ops_ctx = f;
	if (!ln_slurm_wanted(&ao))
		return;
	ln_buf_addf(out, "slurm exit %d\n", ln_validate_after_results(res, &ao, &notes));
	ln_buf_add(out, f->log.buf, f->log.len);
	for (i = 0; i < res->nslurm; i++)
		ln_buf_addf(out, "slurm %s %s (%s): %s [%s]\n", ln_slurm_act_name(res->slurm[i].act),
			    res->slurm[i].node ? res->slurm[i].node : "-",
			    res->slurm[i].slurm_name ? res->slurm[i].slurm_name : "-",
			    res->slurm[i].detail, res->slurm[i].reason ? res->slurm[i].reason : "");
	ln_notes_release(&notes);
}

/* The probes' command lines and bounds, and every check and verdict, of
 * a validation run of spec on the fake cluster. */
static inline void validation_effects(const struct ln_spec *spec, struct ln_buf *out)
{
	struct fake f;
	struct ln_validate_opts o;
	struct ln_results res;
	struct ln_buf err = LN_BUF_INIT;
	size_t i, k;

	assert_true(spec->n_nodes <= MAXN);
	memset(&f, 0, sizeof(f));
	pthread_mutex_init(&f.lock, NULL);
	ln_buf_init(&f.log, 0);
	for (i = 0; i < spec->n_nodes; i++) {
		f.facts[i] = node_facts(spec, i);
		for (k = 0; k < MAXF; k++)
			ln_buf_init(&f.data[i][k], 0);
	}
	memset(&o, 0, sizeof(o));
	o.mpi_probe_source = ROOT "/agents/probes/mpi_probe.c";
	o.nccl_probe_source = ROOT "/agents/probes/nccl_mpi_probe.c";
	o.io_probe_path = ROOT "/agents/probes/io_probe.c";
	o.run_as_root = 1;
	memset(&res, 0, sizeof(res));
	if (ln_validate_run(spec, &fake_ops, &f, &o, &res, &err) < 0)
		fail_msg("validate: %s", err.buf);
	sort_lines(&f.log);
	ln_buf_add(out, f.log.buf, f.log.len);
	ln_buf_reset(&f.log);
	for (i = 0; i < res.nchecks; i++) {
		const struct ln_check *c = &res.checks[i];

		ln_buf_addf(&f.log, "check %s %zu/%d %zu/%d %s: %s (%s) value %g threshold %g\n",
			    ln_stage_name(c->stage), c->a, c->pa, c->b, c->pb, c->name,
			    ln_status_name(c->status),
			    c->reason ? c->reason : "", c->value, c->threshold);
	}
	for (i = 0; i < LN_STAGE_COUNT; i++)
		if (res.stages[i].rounds)
			ln_buf_addf(&f.log, "stage %s rounds %zu\n", ln_stage_name((enum ln_stage)i),
				    res.stages[i].rounds);
	for (i = 0; i < res.nverdicts; i++)
		ln_buf_addf(&f.log, "verdict %s %s %zu %zu\n", ln_stage_name(res.verdicts[i].stage),
			    ln_verdict_kind_name(res.verdicts[i].kind), res.verdicts[i].a,
			    res.verdicts[i].b);
	sort_lines(&f.log);
	ln_buf_add(out, f.log.buf, f.log.len);
	ln_buf_reset(&f.log);
	slurm_effects(spec, &f, &res, out);
	ln_buf_addf(out, "exit %d\n", ln_results_exit(&res));
	ln_results_release(&res);
	for (i = 0; i < spec->n_nodes; i++) {
		json_object_put(f.facts[i]);
		for (k = 0; k < MAXF; k++)
			ln_buf_release(&f.data[i][k]);
	}
	ln_test_release(&f.log, &err);
}

/* Everything llmnet does with a spec that a key can change: the agent
 * requests, the SSH options and fan-out width of the controller, and
 * the validation run. */
static inline void effects(const char *yaml, struct ln_buf *out)
{
	struct ln_spec *spec = NULL;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_run r;
	size_t i;
	int phase;

	if (ln_spec_load_buf("keys.yaml", yaml, strlen(yaml), &spec, &err) < 0)
		fail_msg("the spec does not lint: %s\n%s", err.buf, yaml);
	run_start(&r, spec);
	ln_buf_addf(out, "parallel %u\n", r.parallel);
	for (i = 0; i < r.n; i++) {
		struct ln_ssh_opts so;
		char jump[600];

		ln_run_ssh_opts(&r, &r.nodes[i], &so, jump, sizeof(jump));
		ln_buf_addf(out, "ssh %s %s:%d user %s id %s kh %s policy %d jump %s "
			    "connect %dms step %dms sudo %d\n", so.node, so.host, so.port,
			    so.user ? so.user : "-", so.identity ? so.identity : "-",
			    so.known_hosts ? so.known_hosts : "-", (int)so.policy,
			    so.jump ? so.jump : "-", so.connect_timeout_ms, so.step_timeout_ms,
			    so.sudo);
		for (phase = LN_PHASE_FULL; phase <= LN_PHASE_TARGETS; phase++) {
			ln_buf_addf(out, "request %zu %d ", i, phase);
			request_text(&r, i, (enum ln_plan_phase)phase, out);
		}
	}
	ln_run_release(&r);
	validation_effects(spec, out);
	ln_spec_free(spec);
	ln_buf_release(&err);
}

/* Both targets of alpha key their hosts alike (nvmet's host entries are
 * per node); t2's line is written apart so a case can drop t1's alone. */
#define DHCHAP_T1 \
	"      dhchap: { key_dir: ~/llmnet-keys, hash: sha384, dhgroup: ffdhe3072, " \
	"bidirectional: true }\n"

/* The spec every case changes one key of. Every key of the grammar is
 * set here, at a value that is not its default. */
static const char base_spec[] =
	"version: 1\n"
	"cluster: keys\n"
	"persist: true\n"
	"ssh:\n"
	"  user: root\n"
	"  port: 22\n"
	"  identity: /keys/id_ed25519\n"
	"  known_hosts: /keys/known_hosts\n"
	"  host_key_policy: strict\n"
	"  jump: bastion\n"
	"  connect_timeout: 10s\n"
	"  timeout: 100s\n"
	"  parallel: 4\n"
	"nodes:\n"
	"  - name: alpha\n"
	"    address: 127.0.1.1\n"
	"    port: 2200\n"
	"    user: root\n"
	"    gpus: 8\n"
	"    slots: 8\n"
	"    slurm_name: alpha-s\n"
	"    rdma:\n"
	"      - { device: rxe0, port: 1, ip: 10.0.0.1, gid_index: 1, min_rate: 100Gb/s, "
	"link_layer: ethernet, mtu: 1024, gpus: [0], rail: r0 }\n"
	"      - { device: rxe1, ip: 10.0.1.1, rail: r1 }\n"
	"  - name: b[2-4]\n"
	"    address: 127.0.1.[2-4]\n"
	"    gpus: 8\n"
	"    rdma:\n"
	"      - device: rxe0\n"
	"        ip: 10.0.0.[2-4]\n"
	"        rail: r0\n"
	"      - { device: rxe1, ip: \"10.0.1.[2-4]\", rail: r1 }\n"
	"storage:\n"
	"  targets:\n"
	"    - nqn: nqn.2024-04.io.llmnet:keys.t1\n"
	"      node: alpha\n"
	"      transport: tcp\n"
	"      address: 10.0.0.1\n"
	"      service: 4420\n"
	"      hosts: [b2, b3, b4]\n"
	DHCHAP_T1
	"      namespaces:\n"
	"        - { nsid: 1, file: /var/lib/nvmet/keys.img, size: 1GiB }\n"
	"    - nqn: nqn.2024-04.io.llmnet:keys.t2\n"
	"      node: alpha\n"
	"      transport: rdma\n"
	"      service: 4421\n"
	"      dhchap: { hash: sha384, key_dir: ~/llmnet-keys, dhgroup: ffdhe3072, bidirectional: true }\n"
	"      namespaces:\n"
	"        - { nsid: 1, file: /var/lib/nvmet/keys2.img, size: 64MiB }\n"
	"        - { nsid: 2, device: /dev/nvme9n1 }\n"
	"  initiators:\n"
	"    - node: b2\n"
	"      target: nqn.2024-04.io.llmnet:keys.t1\n"
	"      nr_io_queues: 4\n"
	"      queue_size: 128\n"
	"      ctrl_loss_tmo: 600s\n"
	"      reconnect_delay: 10s\n"
	"      mount: { path: /mnt/keys, fs: ext4, format: never }\n"
	"    - node: b3\n"
	"      target: nqn.2024-04.io.llmnet:keys.t1 # b3's\n"
	"mpi:\n"
	"  hostfile: /etc/llmnet/hostfile\n"
	"  format: openmpi\n"
	"  mca: { pml: ob1 }\n"
	"validation:\n"
	"  - { stage: devices, max_gpu_distance: PIX }\n"
	"  - { stage: rping, count: 10, pairs: ring, timeout: 30s, rails: aligned, max_errors: 5 }\n"
	"  - { stage: bandwidth, tool: ib_write_bw, size: 1MiB, pairs: ring, min: 50Gb/s, "
	"port_base: 18515, timeout: 60s, rails: aligned, max_errors: 5 }\n"
	"  - { stage: latency, tool: ib_write_lat, size: 2B, iterations: 1000, pairs: ring, "
	"rails: aligned, max_typical: 20us, max_p99: 50us, port_base: 18615, timeout: 45s, "
	"max_errors: 5 }\n"
	"  - { stage: io, size: 256MiB, min: 500MB/s, destructive: false, timeout: 120s }\n"
	"  - { stage: mpi, np: 4, timeout: 150s }\n"
	"  - { stage: nccl, tool: probe, op: all_reduce, bytes: 1GiB, min_busbw: 100GB/s, "
	"socket_ifname: eth0, env: { NCCL_ALGO: Ring }, max_latency: 50ms, timeout: 300s }\n"
	"  - { stage: access, timeout: 25s }\n"
	"slurm:\n"
	"  node: alpha\n"
	"  drain: true\n"
	"  resume: true\n";

enum effect {
	CHANGES,	/* replacing from by to changes what llmnet does */
	SECTION,	/* a mapping or list: its effect is its keys' */
	ONLY_VALUE,	/* one value accepted; to is refused, naming the key */
	ACCEPTS,	/* a key that lifts a refusal: the spec made by pre and
			 * both is refused, naming the key; from->to makes it lint */
};

struct key_case {
	const char *key;	/* dotted: nodes.rdma.mtu, validation.io.size */
	enum effect effect;
	const char *from, *to;	/* every occurrence of from in base_spec is replaced */
	/* a change made to both sides first (a key that another key rules
	 * out: destructive io needs an unmounted namespace) */
	const char *both_from, *both_to;
	/* more such changes, made first: pairs of from, to (a refusal that
	 * takes several edits to reach) */
	const char *pre[4];
};

#define KC(key, effect, from, to) { key, effect, from, to, NULL, NULL }

/* The key cases (agree_keys.h). */
struct agree_cases {
	const struct key_case *v;
	size_t n;
};

/* { program, top-level key }: the program (test_agree_PROGRAM.c) that
 * walks each key; every top-level key not here is test_agree_cluster.c's. */
static const char *const agree_owners[][2] = {
	{ "nodes", "nodes" }, { "storage", "storage" },
	{ "validation", "mpi" }, { "validation", "validation" },
};

static inline const struct key_case *find_case(const struct agree_cases *cs, const char *key)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (!strcmp(cs->v[i].key, key))
			return &cs->v[i];
	return NULL;
}

/* src with every from replaced by to (malloc'd). */
static inline char *edit_text(const char *src, const char *from, const char *to)
{
	struct ln_buf b = LN_BUF_INIT;
	const char *p = src, *hit;
	int n = 0;

	while ((hit = strstr(p, from))) {
		ln_buf_add(&b, p, (size_t)(hit - p));
		ln_buf_addstr(&b, to);
		p = hit + strlen(from);
		n++;
	}
	ln_buf_addstr(&b, p);
	if (!n)
		fail_msg("'%s' is not in the base spec", from);
	return ln_buf_detach(&b, NULL);
}

static inline char *edit(const char *from, const char *to)
{
	return edit_text(base_spec, from, to);
}


/* One key's case: the two specs must differ in what llmnet does (or the
 * other value must be refused, naming the key). */
static inline void check_key(const struct agree_cases *cs, const char *key,
			     const struct ln_buf *base_effects)
{
	const struct key_case *c = find_case(cs, key);
	const char *leaf = strrchr(key, '.') ? strrchr(key, '.') + 1 : key;
	struct ln_buf changed = LN_BUF_INIT, err = LN_BUF_INIT, ctx = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	char *yaml, *both = NULL;

	if (!c)
		fail_msg("spec key '%s' has no case in tests/unit/agree_keys.h: show what it "
			 "changes (a request, a probe's command line, a verdict, a controller "
			 "behaviour), or refuse it with \"not supported yet\"", key);
	if (c->effect == SECTION)
		return;
	if (c->both_from) {
		char *pre = NULL, *t;
		size_t k;

		for (k = 0; k + 1 < 4 && c->pre[k]; k += 2) {
			t = edit_text(pre ? pre : base_spec, c->pre[k], c->pre[k + 1]);
			free(pre);
			pre = t;
		}
		both = edit_text(pre ? pre : base_spec, c->both_from, c->both_to);
		free(pre);
		if (c->effect != ACCEPTS) {
			effects(both, &ctx);
			base_effects = &ctx;
		}
	}
	yaml = edit_text(both ? both : base_spec, c->from, c->to);
	if (c->effect == ACCEPTS) {
		if (ln_spec_load_buf("keys.yaml", both, strlen(both), &spec, &err) == 0)
			fail_msg("'%s': lint accepts the spec the key is for without it", key);
		if (!strstr(err.buf, leaf))
			fail_msg("'%s': the refusal does not name the key: %s", key, err.buf);
		effects(yaml, &changed);	/* fails unless it lints */
	} else if (c->effect == ONLY_VALUE) {
		if (ln_spec_load_buf("keys.yaml", yaml, strlen(yaml), &spec, &err) == 0)
			fail_msg("'%s': lint accepts '%s', which nothing honours", key, c->to);
		if (!strstr(err.buf, leaf))
			fail_msg("'%s': the refusal does not name the key: %s", key, err.buf);
	} else {
		effects(yaml, &changed);
		if (changed.len == base_effects->len &&
		    !memcmp(changed.buf, base_effects->buf, changed.len))
			fail_msg("spec key '%s' has no effect: '%s' and '%s' give the same requests, "
				 "SSH options, probe command lines and verdicts", key, c->from, c->to);
	}
	free(yaml);
	free(both);
	ln_test_release(&changed, &err, &ctx);
}


static inline void walk(const struct agree_cases *cs, const struct table *t, const char *prefix,
			const struct ln_buf *base, size_t *seen);

/* Field f of a table, named key, and every key below it. */
static inline void walk_field(const struct agree_cases *cs, const struct field *f, const char *key,
			      const struct ln_buf *base, size_t *seen)
{
	check_key(cs, key, base);
	(*seen)++;
	if (find_case(cs, key)->effect == SECTION && !f->sub)
		fail_msg("'%s' is marked a section but holds no keys", key);
	if (f->sub && !strcmp(key, "validation")) {
		size_t s;

		for (s = 0; s < LN_STAGE_COUNT; s++) {
			char sp[64];

			snprintf(sp, sizeof(sp), "validation.%s", ln_stage_name((enum ln_stage)s));
			walk(cs, &spec_stage_tables[s], sp, base, seen);
		}
	} else if (f->sub) {
		walk(cs, f->sub, key, base, seen);
	}
}

/* Every key of t (and below), named prefix.key; *seen counts them. */
static inline void walk(const struct agree_cases *cs, const struct table *t, const char *prefix,
			const struct ln_buf *base, size_t *seen)
{
	char key[256];
	size_t i;

	for (i = 0; i < t->n_fields; i++) {
		const struct field *f = &t->fields[i];

		/* a field still refused by name is the refused test's */
		if (!spec_find_field(t, f->key))
			continue;
		if (snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "", f->key) >=
		    (int)sizeof(key))
			fail_msg("key '%s.%s' is too long for the walk", prefix, f->key);
		walk_field(cs, f, key, base, seen);
	}
}

/* Whether program walks key (dotted): its top-level key is the
 * program's in agree_owners, or in none of them and program is cluster. */
static inline int agree_mine(const char *program, const char *key)
{
	size_t i, len = strcspn(key, ".");

	for (i = 0; i < ARRAY_SIZE(agree_owners); i++)
		if (strlen(agree_owners[i][1]) == len && !strncmp(agree_owners[i][1], key, len))
			return !strcmp(agree_owners[i][0], program);
	return !strcmp(program, "cluster");
}

/*
 * The test of one program: every key at or below its top-level keys has
 * its case in cs, and every case of those keys names a key the grammar
 * has (a stale case fails too).
 */
static inline void agree_every_key(const struct agree_cases *cs, const char *program)
{
	struct ln_buf base = LN_BUF_INIT, again = LN_BUF_INIT;
	size_t i, seen = 0, mine = 0;

	effects(base_spec, &base);
	if (getenv("LLMNET_AGREE_DUMP"))
		fputs(base.buf, stderr);
	/* the measure itself is stable: the same spec, the same effects */
	effects(base_spec, &again);
	assert_string_equal(base.buf, again.buf);
	for (i = 0; i < spec_top_table.n_fields; i++) {
		const struct field *f = &spec_top_table.fields[i];

		if (spec_find_field(&spec_top_table, f->key) && agree_mine(program, f->key))
			walk_field(cs, f, f->key, &base, &seen);
	}
	for (i = 0; i < cs->n; i++)
		mine += (size_t)agree_mine(program, cs->v[i].key);
	assert_int_equal(seen, mine);
	assert_true(seen > 0);	/* a program that walks nothing is misnamed */
	ln_test_release(&base, &again);
}

/*
 * A test_agree_PROGRAM.c: its one test, agree_every_key over the cases of
 * agree_keys.h for the top-level keys agree_owners gives PROGRAM.
 */
#define AGREE_KEYS_TEST(program)                                                                 \
	static void test_agree_##program##__every_key_has_an_effect(void **state)               \
	{                                                                                        \
		const struct agree_cases cs = { key_cases, ARRAY_SIZE(key_cases) };              \
                                                                                                 \
		(void)state;                                                                     \
		agree_every_key(&cs, #program);                                                  \
	}                                                                                        \
	LN_TEST_MAIN(agree_setup, agree_teardown,                                                \
		     cmocka_unit_test(test_agree_##program##__every_key_has_an_effect), )

/* The group's set-up: ln_run_init keeps a run log (one per cluster name)
 * and loads the agent image; the specs' ~/llmnet-keys are the test's. */
static char agree_dir[] = "/tmp/llmnet-agree-XXXXXX";

static inline int agree_setup(void **state)
{
	(void)state;
	if (!mkdtemp(agree_dir))
		return -1;
	setenv("LLMNET_STATE_DIR", agree_dir, 1);
	setenv("HOME", agree_dir, 1);	/* the specs' ~/llmnet-keys */
	setenv("LLMNET_AGENT", BUILD_DIR "/llmnet-agent", 1);
	return 0;
}

static inline int agree_teardown(void **state)
{
	DIR *d = opendir(agree_dir);
	struct dirent *e;
	char log[64];

	(void)state;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && snprintf(log, sizeof(log), "%s/%s", agree_dir,
						    e->d_name) < (int)sizeof(log))
			unlink(log);
	if (d)
		closedir(d);
	snprintf(log, sizeof(log), "rm -rf '%s'", agree_dir);
	return system(log) != 0 ? -1 : 0;
}

#endif
