/* SPDX-License-Identifier: MIT */
/*
 * Validation covers what the cluster uses: every declared port on its
 * rail, every declared namespace, every stage asked for; a stage with no
 * result never passes. The runner against a small fake cluster (an ops
 * table) whose probes all pass and which logs every command line, so a
 * test sees what ran, on which node, and what did not.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "common/error.h"
#include "orchestrator/report/report.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/validate/stages.h"

#define MAXN 4

struct cov {
	size_t n;
	struct json_object *facts[MAXN];
	pthread_mutex_t lock;
	struct ln_buf log;	/* "nI: argv ...\n" per run */
};

static int cov_facts(void *ctx, size_t node, struct json_object **out, struct ln_buf *err)
{
	struct cov *f = ctx;

	(void)err;
	*out = f->facts[node];
	return 0;
}

/* Every probe passes: rping says nothing, the io probe its figures. */
static int cov_run(void *ctx, size_t node, unsigned lane, const char *const *argv,
		   const char *sha256, int timeout_s, struct ln_probe_result *out,
		   struct ln_buf *err)
{
	struct cov *f = ctx;
	size_t i;

	(void)lane;
	(void)sha256;
	(void)timeout_s;
	(void)err;
	pthread_mutex_lock(&f->lock);
	ln_buf_addf(&f->log, "n%zu:", node + 1);
	for (i = 0; argv[i]; i++)
		ln_buf_addf(&f->log, " %s", argv[i]);
	ln_buf_addch(&f->log, '\n');
	pthread_mutex_unlock(&f->lock);
	out->exit_status = 0;
	out->timed_out = 0;
	if (!strcmp(argv[0], LN_PROTO_REMOTE_DIR "/" LN_PROBE_IO))
		ln_buf_addstr(&out->output, "llmnet-io-probe 1\nwrite_mbps 900.0\n"
					    "read_mbps 1200.0\nresult pass\n");
	else if (strcmp(argv[0], "rping"))
		out->exit_status = 127;
	return 0;
}

static int cov_put(void *ctx, size_t node, const char *path, const void *data, size_t len,
		   struct ln_buf *err)
{
	(void)ctx;
	(void)node;
	(void)path;
	(void)data;
	(void)len;
	(void)err;
	return 0;
}

static int cov_get(void *ctx, size_t node, const char *path, struct ln_buf *data,
		   struct ln_buf *err)
{
	(void)ctx;
	(void)node;
	(void)data;
	ln_buf_addf(err, "no %s", path);
	return -ENOENT;
}

static const struct ln_probe_ops cov_ops = {
	.facts = cov_facts, .run = cov_run, .put = cov_put, .get = cov_get,
	.counters = NULL,	/* no counters: the coverage rules alone */
};

/* A port's facts: rxeK, ACTIVE, with the RoCE v2 GID of 10.0.K.node. */
static void add_port(struct ln_buf *js, size_t node, unsigned k)
{
	ln_buf_addf(js, "%s{\"device\":\"rxe%u\",\"ports\":[{\"port\":1,\"state\":\"ACTIVE\","
		    "\"phys_state\":\"LINK_UP\",\"rate_gbps\":100,\"active_mtu\":1024,"
		    "\"link_layer\":\"Ethernet\",\"gids\":[{\"index\":1,\"gid\":"
		    "\"0000:0000:0000:0000:0000:ffff:0a00:%02x%02zx\",\"type\":\"RoCE v2\"}]}]}",
		    k ? "," : "", k, k, node + 1);
}

/* n nodes, each with ports rxe0..rxe(nports-1); nvme: the nvme facts of
 * every node (NULL: none). */
static void cov_init(struct cov *f, size_t n, unsigned nports, const char *nvme)
{
	size_t i;
	unsigned k;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	ln_buf_init(&f->log, 0);
	f->n = n;
	for (i = 0; i < n; i++) {
		struct ln_buf js = LN_BUF_INIT;

		ln_buf_addf(&js, "{\"hostname\":\"n%zu\",\"rdma\":[", i + 1);
		for (k = 0; k < nports; k++)
			add_port(&js, i, k);
		ln_buf_addf(&js, "],\"gpus\":{\"count\":0},\"nvme\":%s}", nvme ? nvme : "[]");
		f->facts[i] = json_tokener_parse(js.buf);
		assert_non_null(f->facts[i]);
		ln_buf_release(&js);
	}
}

static void cov_release(struct cov *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		json_object_put(f->facts[i]);
	ln_buf_release(&f->log);
	pthread_mutex_destroy(&f->lock);
}

/* The spec: n nodes with nports ports each (rxeK on 10.0.K.node, rail
 * railK), then tail (storage, validation). */
static struct ln_spec *cov_spec(size_t n, unsigned nports, const char *tail)
{
	struct ln_buf y = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	size_t i;
	unsigned k;

	ln_buf_addstr(&y, "version: 1\ncluster: cov\nnodes:\n");
	for (i = 0; i < n; i++) {
		ln_buf_addf(&y, "  - name: n%zu\n    address: 127.0.1.%zu\n    rdma:\n", i + 1, i + 1);
		for (k = 0; k < nports; k++)
			ln_buf_addf(&y, "      - { device: rxe%u, ip: 10.0.%u.%zu, rail: rail%u, "
				    "link_layer: ethernet }\n", k, k, i + 1, k);
	}
	ln_buf_addstr(&y, tail);
	if (ln_spec_load_buf("cov.yaml", y.buf, y.len, &spec, &err) < 0)
		fail_msg("%s", err.buf);
	ln_test_release(&y, &err);
	return spec;
}

static void cov_run_spec(struct cov *f, const struct ln_spec *spec, unsigned stages,
			 struct ln_results *res)
{
	struct ln_validate_opts o;
	struct ln_buf err = LN_BUF_INIT;

	memset(&o, 0, sizeof(o));
	o.stages = stages;
	o.server_delay_ms = 0;
	o.retry_delay_ms = 0;
	o.io_probe_path = FIXTURES_DIR "/../../agents/probes/io_probe.c";
	if (ln_validate_run(spec, &cov_ops, f, &o, res, &err) < 0)
		fail_msg("%s", err.buf);
	ln_buf_release(&err);
}

/* The checks of stage st as "subject status reason" lines. */
static char *checks_of(const struct ln_results *r, enum ln_stage st)
{
	struct ln_buf b = LN_BUF_INIT;
	size_t i;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (c->stage != st)
			continue;
		ln_results_subject_ports(r, c->a, c->pa, c->b, c->pb, &b);
		ln_buf_addf(&b, " %s %s\n", ln_status_name(c->status), c->reason ? c->reason : "");
	}
	return ln_buf_detach(&b, NULL);
}

/* Three nodes with rails rail0 (n1, n2) and, after the spec was linted,
 * n3's port moved to rail 'y' alone (lint refuses that spec: this is the
 * runner's own defence): n3/rxe0 is "not run", so rping cannot pass. */
static void test_validate_coverage__lone_port_is_not_run(void **state)
{
	struct ln_spec *spec = cov_spec(3, 1, "validation:\n  - { stage: rping }\n");
	struct ln_buf out = LN_BUF_INIT;
	struct ln_results res;
	struct cov f;
	char *got;

	(void)state;
	spec->nodes[2].rdma[0].rail = "y";
	cov_init(&f, 3, 1, NULL);
	cov_run_spec(&f, spec, 0, &res);
	got = checks_of(&res, LN_STAGE_RPING);
	assert_string_equal(got, "n3/rxe0 not run no partner on rail 'y' for 'n3/rxe0'\n"
				 "n1/rxe0-n2/rxe0 pass \n");
	assert_int_equal(res.stages[LN_STAGE_RPING].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&res), LN_EXIT_FAILED);
	/* every report names the untested port and fails */
	assert_int_equal(ln_report_text(&res, 0, &out), 0);
	assert_non_null(strstr(out.buf, "n3/rxe0 not run: no partner on rail 'y' for 'n3/rxe0'"));
	assert_non_null(strstr(out.buf, "result: FAIL (exit 1)"));
	ln_buf_reset(&out);
	assert_int_equal(ln_report_json(&res, 0, &out), 0);
	assert_non_null(strstr(out.buf, "\"result\":\"fail\""));
	ln_buf_reset(&out);
	assert_int_equal(ln_report_junit(&res, &out), 0);
	assert_non_null(strstr(out.buf, "no partner on rail"));
	ln_buf_reset(&out);
	assert_int_equal(ln_report_html(&res, &out), 0);
	ln_buf_reset(&out);
	assert_int_equal(ln_report_metrics(&res, &out), 0);
	assert_non_null(strstr(out.buf, "llmnet_validation_success{cluster=\"cov\"} 0"));
	ln_buf_release(&out);
	free(got);
	ln_results_release(&res);
	ln_spec_free(spec);
	cov_release(&f);
}

/* Every port alone on its rail: zero pairs is never a pass. */
static void test_validate_coverage__zero_pairs_never_pass(void **state)
{
	struct ln_spec *spec = cov_spec(2, 1, "validation:\n  - { stage: rping }\n"
					      "  - { stage: bandwidth }\n");
	struct ln_results res;
	struct cov f;

	(void)state;
	spec->nodes[0].rdma[0].rail = "x";
	spec->nodes[1].rdma[0].rail = "y";
	cov_init(&f, 2, 1, NULL);
	cov_run_spec(&f, spec, 0, &res);
	assert_int_equal(res.stages[LN_STAGE_RPING].passed, 0);
	assert_int_equal(res.stages[LN_STAGE_RPING].not_run, 2);
	assert_int_not_equal(res.stages[LN_STAGE_RPING].status, LN_ST_PASS);
	assert_int_not_equal(res.stages[LN_STAGE_BANDWIDTH].status, LN_ST_PASS);
	assert_int_equal(ln_results_exit(&res), LN_EXIT_FAILED);
	assert_int_equal(f.log.len, 0);	/* nothing ran */
	ln_results_release(&res);
	ln_spec_free(spec);
	cov_release(&f);
}

/* A stage that ran but recorded no check at all is "not run", not pass. */
static void test_validate_coverage__stage_without_checks_is_not_run(void **state)
{
	struct ln_results res;
	const char *names[] = { "n1" };

	(void)state;
	assert_int_equal(ln_results_init(&res, "cov", names, 1), 0);
	res.stages[LN_STAGE_DEVICES].listed = 1;
	res.stages[LN_STAGE_DEVICES].ran = 1;
	ln_results_summarize(&res);
	assert_int_equal(res.stages[LN_STAGE_DEVICES].status, LN_ST_NOT_RUN);
	assert_string_equal(res.stages[LN_STAGE_DEVICES].reason, "no check ran");
	assert_int_equal(ln_results_exit(&res), LN_EXIT_FAILED);
	ln_results_release(&res);
}

/* --stages naming a stage the spec does not list, and a spec without
 * stages, are refused before the run (the command exits 64); a run with
 * no stage listed is never a pass. */
static void test_validate_coverage__nothing_to_run_is_refused(void **state)
{
	struct ln_spec *spec = cov_spec(2, 1, "validation:\n  - { stage: rping }\n");
	struct ln_spec *none = cov_spec(2, 1, "");
	struct ln_buf err = LN_BUF_INIT;
	struct ln_results res;
	struct cov f;

	(void)state;
	assert_int_equal(ln_validate_check_stages(spec, 0, &err), 0);
	assert_int_equal(ln_validate_check_stages(spec, 1u << LN_STAGE_RPING, &err), 0);
	assert_int_equal(ln_validate_check_stages(spec, 1u << LN_STAGE_DEVICES, &err), -EINVAL);
	assert_string_equal(err.buf, "--stages names 'devices', which the spec's validation does "
				     "not list (it lists: rping)");
	ln_buf_reset(&err);
	assert_int_equal(ln_validate_check_stages(none, 0, &err), -EINVAL);
	assert_string_equal(err.buf, "spec of 'cov' lists no validation stage: nothing to "
				     "validate (add a 'validation:' section)");
	/* the runner itself, asked for nothing: no stage listed, not a pass */
	cov_init(&f, 2, 1, NULL);
	cov_run_spec(&f, spec, 1u << LN_STAGE_DEVICES, &res);
	assert_int_equal(ln_results_exit(&res), LN_EXIT_FAILED);
	assert_int_equal(f.log.len, 0);
	ln_results_release(&res);
	ln_spec_free(spec);
	ln_spec_free(none);
	ln_buf_release(&err);
	cov_release(&f);
}

#define NQN "nqn.2024-04.io.llmnet:n1.t1"

/* A target with namespaces 1, 2 and 7; n2 and n3 connect raw (a mount needs
 * a target with one namespace: lint refuses this one's). */
static const char ns_spec[] =
	"storage:\n  targets:\n    - nqn: " NQN "\n      node: n1\n      transport: rdma\n"
	"      namespaces:\n        - { nsid: 1, file: /srv/a.img, size: 1GiB }\n"
	"        - { nsid: 2, file: /srv/b.img, size: 1GiB }\n"
	"        - { nsid: 7, file: /srv/c.img, size: 1GiB }\n"
	"  initiators:\n    - { node: n2, target: " NQN " }\n"
	"    - { node: n3, target: " NQN " }\n"
	"validation:\n  - { stage: devices }\n  - { stage: io, size: 16MiB }\n";

/* The nvme facts of an initiator of NQN whose live controller shows nsids. */
static const char *nvme_facts(const char *nsids)
{
	static char js[1024];
	size_t n = 0;
	const char *p;

	n += (size_t)snprintf(js + n, sizeof(js) - n, "[{\"name\":\"nvme1\",\"subsysnqn\":\""
			      NQN "\",\"state\":\"live\",\"namespaces\":[");
	for (p = nsids; *p; p++)
		n += (size_t)snprintf(js + n, sizeof(js) - n, "%s{\"nsid\":%c,\"block\":"
				      "\"nvme1n%c\"}", p == nsids ? "" : ",", *p, *p);
	snprintf(js + n, sizeof(js) - n, "]}]");
	return js;
}

/* Only nsid 1 reached the initiators: devices names 2 and 7 as missing,
 * and io probes namespace 1 only, skipping the two others. */
static void test_validate_coverage__every_namespace_is_checked(void **state)
{
	struct ln_spec *spec = cov_spec(3, 1, ns_spec);
	struct ln_results res;
	struct cov f;
	char *dev, *io;

	(void)state;
	cov_init(&f, 3, 1, nvme_facts("1"));
	cov_run_spec(&f, spec, 0, &res);
	dev = checks_of(&res, LN_STAGE_DEVICES);
	assert_non_null(strstr(dev, "n2 pass block device /dev/nvme1n1\n"
				    "n2 fail namespace 2 of '" NQN "' is missing: its live "
				    "controller shows nsid 1\n"
				    "n2 fail namespace 7 of '" NQN "' is missing: its live "
				    "controller shows nsid 1\n"));
	assert_int_equal(res.stages[LN_STAGE_DEVICES].status, LN_ST_FAIL);
	io = checks_of(&res, LN_STAGE_IO);
	assert_string_equal(io,
			    "n2 pass \n"
			    "n2 skipped devices found no namespace 2 of '" NQN "'\n"
			    "n2 skipped devices found no namespace 7 of '" NQN "'\n"
			    "n3 pass \n"
			    "n3 skipped devices found no namespace 2 of '" NQN "'\n"
			    "n3 skipped devices found no namespace 7 of '" NQN "'\n");
	assert_int_equal(ln_results_exit(&res), LN_EXIT_FAILED);
	free(dev);
	free(io);
	ln_results_release(&res);
	ln_spec_free(spec);
	cov_release(&f);
}

/* Every namespace there: one probe per declared namespace, each on its
 * own device (read-only: not destructive). */
static void test_validate_coverage__io_probes_every_namespace(void **state)
{
	struct ln_spec *spec = cov_spec(3, 1, ns_spec);
	struct ln_results res;
	struct cov f;
	size_t i, io = 0;

	(void)state;
	cov_init(&f, 3, 1, nvme_facts("127"));
	cov_run_spec(&f, spec, 0, &res);
	assert_int_equal(res.stages[LN_STAGE_DEVICES].status, LN_ST_PASS);
	assert_int_equal(res.stages[LN_STAGE_IO].status, LN_ST_PASS);
	for (i = 0; i < res.nchecks; i++)
		io += res.checks[i].stage == LN_STAGE_IO;
	assert_int_equal(io, 6);	/* n2 and n3: 3 namespaces each */
	assert_non_null(strstr(f.log.buf,
		"n2: /var/lib/llmnet/bin/llmnet-probe-io --device /dev/nvme1n1 --nqn " NQN
		" --size 16777216\n"
		"n2: /var/lib/llmnet/bin/llmnet-probe-io --device /dev/nvme1n2 --nqn " NQN
		" --size 16777216\n"
		"n2: /var/lib/llmnet/bin/llmnet-probe-io --device /dev/nvme1n7 --nqn " NQN
		" --size 16777216\n"
		"n3: /var/lib/llmnet/bin/llmnet-probe-io --device /dev/nvme1n1 --nqn " NQN));
	assert_null(strstr(f.log.buf, "--write"));
	ln_results_release(&res);
	ln_spec_free(spec);
	cov_release(&f);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_validate_coverage__every_namespace_is_checked),
	cmocka_unit_test(test_validate_coverage__io_probes_every_namespace),
	cmocka_unit_test(test_validate_coverage__nothing_to_run_is_refused),
	cmocka_unit_test(test_validate_coverage__lone_port_is_not_run),
	cmocka_unit_test(test_validate_coverage__zero_pairs_never_pass),
	cmocka_unit_test(test_validate_coverage__stage_without_checks_is_not_run));
