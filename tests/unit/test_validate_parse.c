/* SPDX-License-Identifier: MIT */
/*
 * Probe output parsers: perftest (MB/sec and Gb/sec, sweep, empty,
 * truncated, error lines), rping, the MPI probe under mpirun, and NCCL
 * (llmnet's probe and nccl-tests' all_reduce_perf in two layouts).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "common/error.h"
#include "common/util.h"
#include "common/fileio.h"
#include "orchestrator/validate/parse/parse.h"

static void load(const char *dir, const char *name, struct ln_buf *b)
{
	struct ln_buf path = LN_BUF_INIT, err = LN_BUF_INIT;

	ln_buf_reset(b);
	ln_buf_addf(&path, "%s/%s/%s", FIXTURES_DIR, dir, name);
	if (ln_file_read(path.buf, b, &err) < 0)
		fail_msg("%s", err.buf);
	ln_test_release(&path, &err);
}

static void test_validate_parse__perftest_mbs(void **state)
{
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_perftest p = { 0 };
	const struct ln_perftest_row *row;

	(void)state;
	load("validate", "perftest_write_client.txt", &t);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	assert_int_equal(p.gbits, 0);
	assert_int_equal(p.nrows, 1);
	row = ln_perftest_large(&p);
	assert_int_equal(row->bytes, 65536);
	assert_int_equal(row->iterations, 200);
	assert_float_equal(row->bw_peak, 5.21, 1e-9);
	assert_float_equal(row->bw_avg, 5.19, 1e-9);
	/* perftest's MB is 2^20 bytes: 5.19 MiB/s = 0.04354 Gb/s */
	assert_float_equal(ln_perftest_gbps(&p, row), 5.19 * 1048576 * 8 / 1e9, 1e-12);
	ln_perftest_release(&p);
	ln_test_release(&t, &err);
}

/* The message rate (issue 27 pt 3) is the row's last column, in Mpps:
 * read from the lab's own capture, from a small-size row (a fast and a
 * slow one: the judging is the stage's), and a report without the column
 * is no result, never a rate of 0. */
static void test_validate_parse__perftest_msg_rate(void **state)
{
	static const char head[] =
		"---------------------------------------------------------------------------------------\n"
		" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n";
	static const char fast[] = " 64         5000             0.72               0.70   \t\t   1.375732\n";
	static const char slow[] = " 64         5000             0.03               0.02   \t\t   0.041015\n";
	static const char no_col[] =
		" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]\n"
		" 64         5000             0.72               0.70\n";
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_perftest p = { 0 };

	(void)state;
	load("probes", "ib_write_bw.client.txt", &t);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	assert_float_equal(ln_perftest_large(&p)->msg_rate, 0.000237, 1e-12);
	ln_buf_reset(&t);
	ln_buf_addstr(&t, head);
	ln_buf_addstr(&t, fast);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	assert_int_equal(ln_perftest_large(&p)->bytes, 64);
	assert_float_equal(ln_perftest_large(&p)->msg_rate, 1.375732, 1e-12);
	ln_buf_reset(&t);
	ln_buf_addstr(&t, head);
	ln_buf_addstr(&t, slow);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	assert_float_equal(ln_perftest_large(&p)->msg_rate, 0.041015, 1e-12);
	assert_int_equal(ln_parse_perftest(no_col, strlen(no_col), &p, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "no data line"));
	ln_perftest_release(&p);
	ln_test_release(&t, &err);
}

static void test_validate_parse__perftest_sweep_judges_large(void **state)
{
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_perftest p = { 0 };
	const struct ln_perftest_row *row;
	double avg = 0;
	size_t i;

	(void)state;
	load("validate", "perftest_send_sweep_gbits.txt", &t);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	assert_int_equal(p.gbits, 1);
	assert_int_equal(p.nrows, 5);
	for (i = 0; i < p.nrows; i++)
		avg += p.rows[i].bw_avg / (double)p.nrows;
	row = ln_perftest_large(&p);
	assert_int_equal(row->bytes, 8388608);
	assert_float_equal(ln_perftest_gbps(&p, row), 95.0, 1e-9);
	/* the sweep average would wrongly fail a 90 Gb/s threshold */
	assert_true(avg < 90.0);
	ln_perftest_release(&p);
	ln_test_release(&t, &err);
}

static void test_validate_parse__perftest_no_result(void **state)
{
	static const struct {
		const char *file, *msg;
	} cases[] = {
		{ "perftest_empty.txt", "the report is empty" },
		{ "perftest_truncated_header.txt", "header but no data line" },
		{ "perftest_truncated_row.txt", "header but no data line" },
		{ "perftest_rejected.txt", "'RDMA_CM_EVENT_REJECTED; error: 8'" },
	};
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_perftest p = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		load("validate", cases[i].file, &t);
		ln_buf_reset(&err);
		assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), -LN_EPROTO);
		assert_int_equal(p.nrows, 0);
		if (!strstr(err.buf, cases[i].msg))
			fail_msg("%s: '%s' lacks '%s'", cases[i].file, err.buf, cases[i].msg);
	}
	ln_test_release(&t, &err);
}

static void test_validate_parse__rping(void **state)
{
	struct ln_buf t = LN_BUF_INIT;
	struct ln_rping r;

	(void)state;
	load("validate", "rping_ok_quiet.txt", &t);
	ln_parse_rping(0, t.buf, t.len, &r);
	assert_true(r.ok);
	assert_int_equal(r.pings, -1);

	load("validate", "rping_ok_verbose.txt", &t);
	ln_parse_rping(0, t.buf, t.len, &r);
	assert_true(r.ok);
	assert_int_equal(r.pings, 3);

	load("validate", "rping_rejected.txt", &t);
	ln_parse_rping(1, t.buf, t.len, &r);
	assert_false(r.ok);
	assert_string_equal(r.reason, "cma event RDMA_CM_EVENT_REJECTED, error 8");

	load("validate", "rping_server_locprot.txt", &t);
	ln_parse_rping(255, t.buf, t.len, &r);
	assert_false(r.ok);
	assert_string_equal(r.reason, "cq completion failed status 4");

	/* exit 0 with a validation error is still a failure */
	load("validate", "rping_mismatch.txt", &t);
	ln_parse_rping(0, t.buf, t.len, &r);
	assert_false(r.ok);
	assert_string_equal(r.reason, "data mismatch!");

	ln_parse_rping(1, "", 0, &r);
	assert_false(r.ok);
	assert_string_equal(r.reason, "rping exited with status 1");
	ln_buf_release(&t);
}

static void test_validate_parse__mpi(void **state)
{
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_mpi_probe m;

	(void)state;
	load("validate", "mpi_ok3.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), 0);
	assert_int_equal(m.ranks, 3);
	assert_string_equal(m.hosts[0], "node1");
	assert_string_equal(m.hosts[2], "node3");
	assert_true(m.allreduce_ok);
	assert_float_equal(m.seconds, 0.00421, 1e-9);
	assert_true(m.pass);
	ln_mpi_probe_release(&m);

	load("validate", "mpi_wrong.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), 0);
	assert_false(m.allreduce_ok);
	ln_mpi_probe_release(&m);

	load("validate", "mpi_orte_fail.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "ORTE was unable to reliably start"));

	/* real mpirun output (Open MPI 4.1.4, this repository's probe) */
	load("validate", "mpirun_real_ok3.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), 0);
	assert_int_equal(m.ranks, 3);
	assert_true(m.allreduce_ok);
	assert_int_equal(m.elements, 262144);
	ln_mpi_probe_release(&m);
	load("validate", "mpirun_real_wrong.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), 0);
	assert_int_equal(m.ranks, 2);
	assert_false(m.allreduce_ok);
	assert_false(m.pass);
	ln_mpi_probe_release(&m);
	ln_buf_reset(&err);
	load("validate", "mpirun_real_slots.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "There are not enough slots available"));

	ln_buf_reset(&err);
	load("validate", "mpi_truncated.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "truncated"));
	ln_test_release(&t, &err);
}

static void test_validate_parse__nccl_tests(void **state)
{
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_nccl n;

	(void)state;
	load("nccl", "all_reduce_perf_16gpu.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), 0);
	assert_true(n.from_nccl_tests);
	assert_int_equal(n.ranks, 16);
	assert_int_equal(n.bytes, 1073741824ull);
	assert_float_equal(n.algbw, 12.80, 1e-9);
	assert_float_equal(n.busbw, 23.99, 1e-9);
	assert_int_equal(n.wrong, 0);
	assert_true(n.correct);
	/* the "# Rank" lines' hosts, each once: the run's nodes */
	assert_int_equal(n.nhosts, 2);
	assert_string_equal(n.hosts[0], "gpu001");
	assert_string_equal(n.hosts[1], "gpu002");

	load("nccl", "all_reduce_perf_2gpu_wrong.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), 0);
	assert_int_equal(n.ranks, 2);
	assert_int_equal(n.bytes, 268435456ull);
	assert_int_equal(n.wrong, 3);
	assert_false(n.correct);

	/* without -c 1 nothing was checked: never "correct" */
	load("nccl", "all_reduce_perf_nocheck.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), 0);
	assert_int_equal(n.wrong, -1);
	assert_false(n.correct);
	assert_float_equal(n.busbw, 203.95, 1e-9);

	/* the current format (a root column, "#wrong" printed with %g): a
	 * sweep right at its largest size, wrong in place at its smallest */
	load("nccl", "all_reduce_perf_sweep_wrong.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), 0);
	assert_int_equal(n.ranks, 4);
	assert_int_equal(n.nsizes, 14);
	assert_int_equal(n.sizes[0].bytes, 1024);
	assert_int_equal(n.sizes[0].wrong, 1048580);	/* %g keeps 6 digits */
	assert_int_equal(n.sizes[13].wrong, 0);
	assert_int_equal(n.bytes, 8388608ull);
	assert_float_equal(n.busbw, 57.27, 1e-9);
	assert_int_equal(n.wrong, 1048580);
	assert_false(n.correct);

	load("nccl", "all_reduce_perf_nccl_error.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "unhandled cuda error"));
	ln_buf_reset(&err);
	assert_int_equal(ln_parse_nccl("", 0, &n, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "empty"));
	ln_test_release(&t, &err);
}

/* nccl-tests' output cut short anywhere or with a byte changed: the
 * parser stays in its bounds (sizes, hosts, reason NUL-terminated), gives
 * a result or -LN_EPROTO, and a result cut before its last size row is
 * never the whole sweep. */
static void test_validate_parse__nccl_tests_mangled(void **state)
{
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT, m = LN_BUF_INIT;
	struct ln_nccl *n = calloc(1, sizeof(*n));
	unsigned seed = 27;
	size_t cut, k;
	int r;

	(void)state;
	assert_non_null(n);
	load("nccl", "all_reduce_perf_16gpu.txt", &t);
	for (cut = 0; cut <= t.len; cut++) {
		r = ln_parse_nccl(t.buf, cut, n, &err);
		assert_true(r == 0 || r == -LN_EPROTO);
		assert_true(n->nsizes <= LN_NCCL_MAX_SIZES && n->nhosts <= 2);
		if (r == 0 && cut < t.len - 120)	/* before the 1 GiB row's end */
			assert_true(n->bytes < 1073741824ull);
		ln_buf_reset(&err);
	}
	for (k = 0; k < 4000; k++) {
		ln_buf_reset(&m);
		ln_buf_add(&m, t.buf, t.len);
		seed = seed * 1103515245u + 12345u;
		m.buf[(seed >> 8) % m.len] = (char)(seed >> 20);
		r = ln_parse_nccl(m.buf, m.len, n, &err);
		assert_true(r == 0 || r == -LN_EPROTO);
		assert_true(n->nsizes <= LN_NCCL_MAX_SIZES);
		assert_true(strlen(n->reason) < sizeof(n->reason));
		ln_buf_reset(&err);
	}
	free(n);
	ln_test_release(&t, &err, &m);
}

static void test_validate_parse__nccl_probe(void **state)
{
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_nccl n;

	(void)state;
	load("nccl", "probe_ok_8.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), 0);
	assert_false(n.from_nccl_tests);
	assert_int_equal(n.ranks, 8);
	assert_string_equal(n.op, "all_reduce");
	assert_true(n.correct);
	assert_float_equal(n.busbw, 191.73, 1e-9);
	assert_int_equal(n.nsizes, 1);
	assert_int_equal(n.sizes[0].bytes, 1073741824ull);
	assert_int_equal(n.nwrong, 0);

	load("nccl", "probe_single.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), 0);
	assert_int_equal(n.ranks, 1);
	assert_float_equal(n.busbw, 0.0, 0);

	load("nccl", "probe_wrong_sum.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), 0);
	assert_false(n.correct);
	assert_string_equal(n.op, "all_gather");
	/* every size's wrong elements count; the largest is the one judged */
	assert_int_equal(n.wrong, 131072 + 262144);
	assert_int_equal(n.bytes, 1048576);
	assert_int_equal(n.nsizes, 2);
	assert_int_equal(n.sizes[0].bytes, 524288);
	assert_float_equal(n.sizes[0].time_us, 60.0, 1e-9);
	assert_int_equal(n.sizes[1].wrong, 262144);
	/* the rank that received wrong elements, with its host and GPU */
	assert_int_equal(n.nwrong, 2);
	assert_int_equal(n.wrongs[1].rank, 1);
	assert_string_equal(n.wrongs[1].host, "gpu002");
	assert_int_equal(n.wrongs[1].device, 0);
	assert_int_equal(n.wrongs[1].size, 1048576);
	assert_int_equal(n.wrongs[1].elements, 262144);
	assert_int_equal(n.wrongs[1].first, 0);
	assert_float_equal(n.wrongs[1].got, 7, 0);
	assert_float_equal(n.wrongs[1].want, 3, 0);

	load("nccl", "probe_nccl_error.txt", &t);
	assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "ncclAllReduce failed: unhandled cuda error (1)"));

	/* nccl-tests' factors: all_reduce 2(n-1)/n, all_gather and
	 * reduce_scatter (n-1)/n, broadcast and reduce 1 */
	assert_float_equal(ln_nccl_busbw("all_reduce", 100.0, 8), 175.0, 1e-9);
	assert_float_equal(ln_nccl_busbw("all_reduce", 100.0, 2), 100.0, 1e-9);
	assert_float_equal(ln_nccl_busbw("all_reduce", 100.0, 1), 0.0, 0);
	assert_float_equal(ln_nccl_busbw("all_gather", 100.0, 8), 87.5, 1e-9);
	assert_float_equal(ln_nccl_busbw("reduce_scatter", 100.0, 4), 75.0, 1e-9);
	assert_float_equal(ln_nccl_busbw("broadcast", 100.0, 8), 100.0, 1e-9);
	assert_float_equal(ln_nccl_busbw("reduce", 100.0, 1), 100.0, 1e-9);
	ln_test_release(&t, &err);
}

/* Real captures from the QEMU lab's guests, one set per image
 * (tests/fixtures/probes/ on 6.1, probes-6.12/ on 6.12; see their README
 * for each command), judged with the exit statuses recorded in
 * exit-status.txt. */
static int lab_exit(const char *dir, const char *file)
{
	struct ln_buf t = LN_BUF_INIT;
	char want[128];
	const char *p;
	int st = -1;

	load(dir, "exit-status.txt", &t);
	snprintf(want, sizeof(want), "%s: exit ", file);
	p = strstr(t.buf, want);
	if (p)
		st = atoi(p + strlen(want));
	ln_buf_release(&t);
	assert_true(st >= 0);
	return st;
}

/* One image's set: write_mbs and write_gbits are its ib_write_bw
 * averages, noserver what its perftest says without a server. */
static void lab_captures(const char *dir, double write_mbs, double write_gbits,
			 const char *noserver)
{
	static const char *const rping_ok[] = { "rping.client.txt", "rping.server.txt",
						"rping-verbose.client.txt",
						"rping-verbose.server.txt" };
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_perftest p = { 0 };
	struct ln_mpi_probe m;
	struct ln_rping r;
	size_t i;

	for (i = 0; i < 4; i++) {
		load(dir, rping_ok[i], &t);
		ln_parse_rping(lab_exit(dir, rping_ok[i]), t.buf, t.len, &r);
		if (!r.ok)
			fail_msg("%s: %s", rping_ok[i], r.reason);
	}
	load(dir, "rping-verbose.client.txt", &t);
	ln_parse_rping(0, t.buf, t.len, &r);
	assert_int_equal(r.pings, 10);
	load(dir, "rping-noserver.client.txt", &t);
	ln_parse_rping(lab_exit(dir, "rping-noserver.client.txt"), t.buf, t.len, &r);
	assert_false(r.ok);
	assert_string_equal(r.reason, "cma event RDMA_CM_EVENT_REJECTED, error 8");

	load(dir, "ib_write_bw.client.txt", &t);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	assert_int_equal(p.nrows, 1);
	assert_int_equal(p.rows[0].bytes, 65536);
	assert_float_equal(p.rows[0].bw_avg, write_mbs, 1e-9);
	assert_float_equal(ln_perftest_gbps(&p, &p.rows[0]), write_mbs * 1048576 * 8 / 1e9, 1e-12);
	load(dir, "ib_write_bw-gbits.client.txt", &t);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	assert_true(p.gbits);
	assert_float_equal(ln_perftest_gbps(&p, &p.rows[0]), write_gbits, 1e-9);
	load(dir, "ib_send_bw.client.txt", &t);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	assert_int_equal(p.rows[0].iterations, 200);
	load(dir, "ib_send_bw.server.txt", &t);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), 0);
	load(dir, "ib_write_bw-noserver.client.txt", &t);
	assert_int_equal(lab_exit(dir, "ib_write_bw-noserver.client.txt"), 1);
	assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), -LN_EPROTO);
	assert_string_equal(err.buf, noserver);
	ln_perftest_release(&p);

	load(dir, "mpirun-mpi_probe.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), 0);
	assert_int_equal(m.ranks, 3);
	assert_string_equal(m.hosts[0], "lab1");
	assert_string_equal(m.hosts[2], "lab3");
	assert_true(m.allreduce_ok && m.pass);
	ln_mpi_probe_release(&m);
	load(dir, "mpirun-mpi_probe-wrong-sum.txt", &t);
	assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), 0);
	assert_false(m.allreduce_ok);
	assert_false(m.pass);
	ln_mpi_probe_release(&m);
	ln_test_release(&t, &err);
}

/* One image's latency captures: ib_write_lat's client figures (typical,
 * average, 99th percentile, in microseconds, as perftest prints them),
 * ib_send_lat's typical, both servers' reports, and no server. */
struct lab_lat {
	double write_typical, write_avg, write_p99, send_typical;
};

static void lab_lat_captures(const char *dir, const struct lab_lat *want)
{
	static const char *const ok[] = { "ib_write_lat.client.txt", "ib_write_lat.server.txt",
					  "ib_send_lat.client.txt", "ib_send_lat.server.txt" };
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_perftest_lat l;
	size_t i;

	for (i = 0; i < 4; i++) {
		load(dir, ok[i], &t);
		assert_int_equal(lab_exit(dir, ok[i]), 0);
		if (ln_parse_perftest_lat(t.buf, t.len, &l, &err) < 0)
			fail_msg("%s/%s: %s", dir, ok[i], err.buf);
		assert_int_equal(l.bytes, 2);
		assert_int_equal(l.iterations, 500);
		/* perftest's own order: min <= typical <= p99 <= p99.9 <= max */
		assert_true(l.t_min <= l.typical && l.typical <= l.p99 && l.p99 <= l.p999 &&
			    l.p999 <= l.t_max);
	}
	load(dir, "ib_write_lat.client.txt", &t);
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), 0);
	assert_float_equal(l.typical, want->write_typical, 1e-9);
	assert_float_equal(l.avg, want->write_avg, 1e-9);
	assert_float_equal(l.p99, want->write_p99, 1e-9);
	load(dir, "ib_send_lat.client.txt", &t);
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), 0);
	assert_float_equal(l.typical, want->send_typical, 1e-9);
	load(dir, "ib_write_lat-noserver.client.txt", &t);
	assert_int_equal(lab_exit(dir, "ib_write_lat-noserver.client.txt"), 1);
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), -LN_EPROTO);
	assert_string_equal(err.buf, "no latency result: 'Unable to perform rdma_client function'");
	/* a bandwidth report is not a latency report, and the other way round */
	ln_buf_reset(&err);
	load(dir, "ib_write_bw.client.txt", &t);
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), -LN_EPROTO);
	assert_string_equal(err.buf, "no latency result: the report has no latency header");
	ln_test_release(&t, &err);
}

/* The odd cases, from the capture's own lines: a cut last row, a header
 * without the 99% column, a sweep (the largest size is reported), an
 * empty report. */
static void test_validate_parse__perftest_lat_odd(void **state)
{
	static const char head[] =
		" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
		"t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_perftest_lat l;

	(void)state;
	ln_buf_addstr(&t, head);
	ln_buf_addstr(&t, " 2       500          1965.97        41811.29      13646.03  \t       "
			  "14668.10     \t6543.34\t\t34452.18 \t\t418");
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), -LN_EPROTO);
	assert_string_equal(err.buf, "no latency result: the report's data line is not 9 numbers "
				     "of 0 or more on one whole line: '2       500          "
				     "1965.97        41811.29      13646.03          14668.10      "
				     "6543.34  34452.18   418'");
	ln_buf_reset(&err);
	ln_buf_reset(&t);
	ln_buf_addstr(&t, head);	/* whole, but a column short */
	ln_buf_addstr(&t, " 2 500 1.0 9.0 2.0 2.5 0.5 3.0\n");
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "is not 9 numbers"));
	ln_buf_reset(&t);
	ln_buf_reset(&err);
	ln_buf_addstr(&t, head);	/* the header alone: truncated before any row */
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), -LN_EPROTO);
	assert_string_equal(err.buf, "no latency result: the report has a header but no data "
				     "line (truncated)");
	ln_buf_reset(&t);
	ln_buf_reset(&err);
	ln_buf_addstr(&t, " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
			  "t_avg[usec]    t_stdev[usec]\n 2 500 1.0 9.0 2.0 2.5 0.5\n");
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), -LN_EPROTO);
	assert_string_equal(err.buf, "no latency result: the report has no 99% percentile[usec] "
				     "column");
	ln_buf_reset(&t);
	ln_buf_reset(&err);
	ln_buf_addstr(&t, head);
	ln_buf_addstr(&t, " 2 1000 1.10 9.00 1.50 1.60 0.10 2.00 3.00\n"
			  " 4096 1000 2.10 19.00 2.50 2.60 0.20 4.00 6.00\n"
			  " 8 1000 1.20 9.50 1.70 1.80 0.10 2.50 3.50\n");
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), 0);
	assert_int_equal(l.bytes, 4096);
	assert_float_equal(l.typical, 2.5, 0);
	assert_float_equal(l.avg, 2.6, 0);
	assert_float_equal(l.p99, 4.0, 0);
	assert_float_equal(l.p999, 6.0, 0);
	ln_buf_reset(&t);
	assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), -LN_EPROTO);
	assert_string_equal(err.buf, "no latency result: the report is empty");
	ln_test_release(&t, &err);
}

/* s with the first "from" replaced by "to", into t (the case's input). */
static void with(struct ln_buf *t, const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);

	assert_non_null(at);
	ln_buf_reset(t);
	ln_buf_add(t, s, (size_t)(at - s));
	ln_buf_addstr(t, to);
	ln_buf_addstr(t, at + strlen(from));
}

/* inf, -inf, nan and an overflow (strtod's inf) are no result in every
 * parser: NaN passes any threshold (its comparisons are false) and
 * neither is JSON. Each input parses with the finite control value. */
static void test_validate_parse__non_finite_refused(void **state)
{
	static const char *const bad[] = { "inf", "-inf", "nan", "1e999", "INF", "NaN" };
	static const char bw[] = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
				 "MsgRate[Mpps]\n 65536      1000             9.50               VALUE  "
				 "             0.018000\n";
	static const char lat[] = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
				  "t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile"
				  "[usec] \n 2 1000 1.10 9.00 VALUE 1.60 0.10 2.00 3.00\n";
	static const char probe[] = "llmnet-nccl-probe 2\nop all_reduce ranks 1 bytes 268435456\n"
				    "size 268435456 time_us 1200.00 algbw 223.6962 busbw VALUE wrong 0\n"
				    "result pass\n";
	static const char mpi[] = "llmnet-mpi-probe 1\nranks 1\nrank 0 host node1\n"
				  "allreduce elements 262144 seconds VALUE result ok\nresult pass\n";
	struct ln_buf t = LN_BUF_INIT, err = LN_BUF_INIT, big = LN_BUF_INIT, row = LN_BUF_INIT;
	struct ln_perftest p = { 0 };
	struct ln_perftest_lat l;
	struct ln_nccl n;
	struct ln_mpi_probe m;
	size_t i;

	(void)state;
	load("nccl", "all_reduce_perf_16gpu.txt", &big);
	for (i = 0; i <= ARRAY_SIZE(bad); i++) {
		const char *v = i < ARRAY_SIZE(bad) ? bad[i] : NULL;	/* NULL: the control */
		int want = v ? -LN_EPROTO : 0;

		with(&t, bw, "VALUE", v ? v : "9.41");
		assert_int_equal(ln_parse_perftest(t.buf, t.len, &p, &err), want);
		with(&t, lat, "VALUE", v ? v : "1.50");
		assert_int_equal(ln_parse_perftest_lat(t.buf, t.len, &l, &err), want);
		with(&t, probe, "VALUE", v ? v : "0.0000");
		assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), want);
		if (!v)
			assert_float_equal(n.busbw, 0.0, 0);
		with(&t, mpi, "VALUE", v ? v : "0.004210");
		assert_int_equal(ln_parse_mpi(t.buf, t.len, &m, &err), want);
		if (!v)
			ln_mpi_probe_release(&m);
		/* nccl-tests: the largest size's row is no result, the next is judged */
		ln_buf_reset(&row);
		ln_buf_addf(&row, "12.80 %8s", v ? v : "23.99");
		with(&t, big.buf, "12.80   23.99", row.buf);
		assert_int_equal(ln_parse_nccl(t.buf, t.len, &n, &err), 0);
		assert_true(isfinite(n.busbw));
		assert_int_equal(n.bytes, v ? 134217728ull : 1073741824ull);
	}
	ln_perftest_release(&p);
	ln_test_release(&t, &err, &big, &row);
}

static void test_validate_parse__lab_captures_6_1(void **state)
{
	(void)state;
	lab_captures("probes", 14.84, 0.21,
		     "no bandwidth result: 'Unable to perform rdma_client function'");
}

static void test_validate_parse__lab_latency_6_1(void **state)
{
	static const struct lab_lat want = { 13646.03, 14668.10, 34452.18, 37039.45 };

	(void)state;
	lab_lat_captures("probes", &want);
}

static void test_validate_parse__lab_latency_6_12(void **state)
{
	static const struct lab_lat want = { 10808.03, 11788.07, 25583.95, 20240.53 };

	(void)state;
	lab_lat_captures("probes-6.12", &want);
}

static void test_validate_parse__lab_captures_6_12(void **state)
{
	(void)state;
	lab_captures("probes-6.12", 3.73, 0.023080,
		     "no bandwidth result: 'Unable to perform rdma_client function'");
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_validate_parse__perftest_mbs),
	cmocka_unit_test(test_validate_parse__perftest_msg_rate),
	cmocka_unit_test(test_validate_parse__perftest_sweep_judges_large),
	cmocka_unit_test(test_validate_parse__perftest_no_result),
	cmocka_unit_test(test_validate_parse__rping),
	cmocka_unit_test(test_validate_parse__mpi),
	cmocka_unit_test(test_validate_parse__nccl_tests),
	cmocka_unit_test(test_validate_parse__nccl_tests_mangled),
	cmocka_unit_test(test_validate_parse__nccl_probe),
	cmocka_unit_test(test_validate_parse__perftest_lat_odd),
	cmocka_unit_test(test_validate_parse__non_finite_refused),
	cmocka_unit_test(test_validate_parse__lab_captures_6_1),
	cmocka_unit_test(test_validate_parse__lab_latency_6_1),
	cmocka_unit_test(test_validate_parse__lab_captures_6_12),
	cmocka_unit_test(test_validate_parse__lab_latency_6_12),
)
