/* SPDX-License-Identifier: MIT */
/*
 * llmnet and Slurm: the drain reason's grammar (common/slurm.c), made and
 * read back; scontrol's node line parsed; the ownership rules (only this
 * cluster's llmnet drains lifted, never a drain over someone's, never a
 * DOWN node); the verdict table, a row for every verdict kind; and the
 * after-validate action (orchestrator/validate/slurm.c) against a fake
 * Slurm behind the agents' run verb, which keeps each node's state and
 * logs every scontrol call and progress line in order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cmocka.h"
#include "common/error.h"
#include "common/json.h"
#include "common/slurm.h"
#include "orchestrator/report/report.h"
#include "orchestrator/spec/spec.h"
#include "orchestrator/validate/after.h"
#include "orchestrator/validate/slurm.h"
#include "orchestrator/validate/stages.h"

/* ---- the reason grammar ------------------------------------------------ */

static void test_slurm__reason_made_and_read_back(void **state)
{
	const char *stages[] = { "devices", "rping" };
	struct ln_buf b = LN_BUF_INIT;
	struct ln_slurm_owned o;
	char longwhy[400];

	(void)state;
	assert_int_equal(ln_slurm_reason_make(&b, "lab", stages, 2, "rxe0/1 is DOWN"), 0);
	assert_string_equal(b.buf, "llmnet:lab: devices,rping: rxe0/1 is DOWN");
	assert_true(ln_slurm_reason_ok(b.buf));
	ln_slurm_reason_parse(b.buf, "lab", &o);
	assert_true(o.ours);
	assert_int_equal(o.nstages, 2);
	assert_string_equal(o.stages[0], "devices");
	assert_string_equal(o.stages[1], "rping");
	/* a prefix is a whole cluster name: lab's reason is not lab2's, nor lab2's lab's */
	ln_slurm_reason_parse(b.buf, "lab2", &o);
	assert_false(o.ours);
	ln_slurm_reason_parse("llmnet:lab2: devices: x", "lab", &o);
	assert_false(o.ours);
	ln_slurm_reason_parse("llmnet:lab: devices: x", "la", &o);
	assert_false(o.ours);
	/* a person's reason, and llmnet's grammar broken, are no one's llmnet drain */
	ln_slurm_reason_parse("maintenance: new DIMMs", "lab", &o);
	assert_false(o.ours);
	ln_slurm_reason_parse("llmnet:lab: : x", "lab", &o);
	assert_false(o.ours);
	ln_slurm_reason_parse("llmnet:lab: devices x", "lab", &o);
	assert_false(o.ours);
	ln_slurm_reason_parse("llmnet:lab: DEVICES: x", "lab", &o);
	assert_false(o.ours);
	ln_slurm_reason_parse(NULL, "lab", &o);
	assert_false(o.ours);
	/* Slurm-unsafe bytes become '_' (no '=', quotes, brackets, newlines) */
	assert_int_equal(ln_slurm_reason_make(&b, "lab", stages, 1, "a=b \"c\" [d]\nx;y"), 0);
	assert_string_equal(b.buf, "llmnet:lab: devices: a_b _c_ _d__x_y");
	assert_true(ln_slurm_reason_ok(b.buf));
	/* bounded */
	memset(longwhy, 'w', sizeof(longwhy) - 1);
	longwhy[sizeof(longwhy) - 1] = '\0';
	assert_int_equal(ln_slurm_reason_make(&b, "lab", stages, 2, longwhy), 0);
	assert_int_equal(b.len, LN_SLURM_REASON_MAX);
	assert_true(ln_slurm_reason_ok(b.buf));
	ln_slurm_reason_parse(b.buf, "lab", &o);
	assert_true(o.ours);
	/* no stage, a stage word outside the grammar, a bad cluster: refused */
	assert_int_equal(ln_slurm_reason_make(&b, "lab", stages, 0, "x"), -EINVAL);
	stages[1] = "rp:ing";
	assert_int_equal(ln_slurm_reason_make(&b, "lab", stages, 2, "x"), -EINVAL);
	assert_int_equal(ln_slurm_reason_make(&b, "l b", stages, 1, "x"), -EINVAL);
	assert_false(ln_slurm_reason_ok("llmnet:lab: devices: a=b"));
	ln_buf_release(&b);
}

/* What scontrol 24.11 prints with -o (OS= holds spaces; the reason runs
 * to the end, Slurm's " [user@time]" after it). */
#define LINE(name, st, rest)                                                                      \
	"NodeName=" name " Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 CPUEfctv=1 CPUTot=1 "          \
	"CPULoad=0.01 AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=" name  \
	" NodeHostName=" name " Version=24.11.1 OS=Linux 6.12.12-amd64 #1 SMP PREEMPT_DYNAMIC "   \
	"Debian 6.12.12-1 (2025-02-02) RealMemory=1 AllocMem=0 FreeMem=400 Sockets=1 Boards=1 "  \
	"State=" st " ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "              \
	"Partitions=debug BootTime=2026-12-04T00:10:00 SlurmdStartTime=2026-12-04T00:10:05 "     \
	"LastBusyTime=2026-12-04T00:10:05 ResumeAfterTime=None CfgTRES=cpu=1,mem=1M,billing=1 "   \
	"AllocTRES= CurrentWatts=0 AveWatts=0" rest "\n"

static void test_slurm__scontrol_line_parsed(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_slurm_node n;

	(void)state;
	assert_int_equal(ln_slurm_show_parse(LINE("lab1", "IDLE", ""), "lab1", &n, &err), 0);
	assert_string_equal(n.state, "IDLE");
	assert_string_equal(n.reason, "");
	assert_false(n.drained);
	assert_false(n.down);
	assert_int_equal(ln_slurm_show_parse(LINE("lab2", "IDLE+DRAIN",
		" Reason=llmnet:lab: devices: rxe0 is DOWN [root@2026-12-04T01:00:00]"), "lab2",
		&n, &err), 0);
	assert_string_equal(n.state, "IDLE+DRAIN");
	assert_string_equal(n.reason, "llmnet:lab: devices: rxe0 is DOWN");
	assert_true(n.drained);
	assert_int_equal(ln_slurm_show_parse(LINE("lab3", "DOWN+NOT_RESPONDING",
		" Reason=Not responding [slurm@2026-12-04T01:00:00]"), "lab3", &n, &err), 0);
	assert_true(n.down);
	assert_false(n.drained);
	assert_string_equal(n.reason, "Not responding");
	assert_int_equal(ln_slurm_show_parse(LINE("lab4", "MIXED+DRAIN", " Reason=a [b] c"),
					     "lab4", &n, &err), 0);
	assert_string_equal(n.reason, "a [b] c");
	/* another node's line, none, no State=: refused */
	assert_int_equal(ln_slurm_show_parse(LINE("lab1", "IDLE", ""), "lab", &n, &err), -EINVAL);
	assert_int_equal(ln_slurm_show_parse("Node lab9 not found\n", "lab9", &n, &err), -EINVAL);
	assert_int_equal(ln_slurm_show_parse("NodeName=lab1 Arch=x\n", "lab1", &n, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "no State="));
	ln_buf_release(&err);
}

static int yes(void *ctx, const char *stage)
{
	(void)ctx;
	(void)stage;
	return 1;
}

/* ran: every stage but "rping"; passed: every stage but "io" */
static int ran_but_rping(void *ctx, const char *stage)
{
	(void)ctx;
	return strcmp(stage, "rping") != 0;
}

static int passed_but_io(void *ctx, const char *stage)
{
	(void)ctx;
	return strcmp(stage, "io") != 0;
}

static void node_at(struct ln_slurm_node *n, const char *st, const char *reason)
{
	struct ln_buf err = LN_BUF_INIT;
	char line[2048];

	snprintf(line, sizeof(line), "NodeName=x State=%s Reason=%s\n", st, reason);
	assert_int_equal(ln_slurm_show_parse(line, "x", n, &err), 0);
	ln_buf_release(&err);
}

static void test_slurm__ownership_rules(void **state)
{
	const struct ln_slurm_lift_judge all = { yes, yes, NULL };
	const struct ln_slurm_lift_judge part = { ran_but_rping, passed_but_io, NULL };
	struct ln_slurm_owned o;
	struct ln_slurm_node n;
	const char *stage;

	(void)state;
	node_at(&n, "IDLE", "");
	assert_int_equal(ln_slurm_may_drain(&n, "lab"), LN_SLURM_MAY_DRAIN);
	assert_int_equal(ln_slurm_may_lift(&n, "lab", &all, &o, &stage), LN_SLURM_NOT_DRAINED);
	node_at(&n, "IDLE+DRAIN", "maintenance");
	assert_int_equal(ln_slurm_may_drain(&n, "lab"), LN_SLURM_DRAINED_BY_OTHER);
	assert_int_equal(ln_slurm_may_lift(&n, "lab", &all, &o, &stage), LN_SLURM_NOT_OURS);
	/* another cluster's llmnet drain is someone else's */
	node_at(&n, "IDLE+DRAIN", "llmnet:other: devices: x");
	assert_int_equal(ln_slurm_may_drain(&n, "lab"), LN_SLURM_DRAINED_BY_OTHER);
	assert_int_equal(ln_slurm_may_lift(&n, "lab", &all, &o, &stage), LN_SLURM_NOT_OURS);
	assert_int_equal(ln_slurm_may_lift(&n, "other", &all, &o, &stage), LN_SLURM_LIFT);
	node_at(&n, "DOWN+DRAIN", "llmnet:lab: devices: x");
	assert_int_equal(ln_slurm_may_drain(&n, "lab"), LN_SLURM_IS_DOWN);
	node_at(&n, "DOWN", "");
	assert_int_equal(ln_slurm_may_drain(&n, "lab"), LN_SLURM_IS_DOWN);
	node_at(&n, "IDLE+FAIL", "llmnet:lab: devices: x");
	assert_int_equal(ln_slurm_may_drain(&n, "lab"), LN_SLURM_DRAINED_BY_US);
	node_at(&n, "ALLOCATED+DRAIN", "llmnet:lab: devices,rping,io: x");
	assert_int_equal(ln_slurm_may_lift(&n, "lab", &all, &o, &stage), LN_SLURM_LIFT);
	assert_int_equal(ln_slurm_may_lift(&n, "lab", &part, &o, &stage), LN_SLURM_STAGE_NOT_RUN);
	assert_string_equal(stage, "rping");
	node_at(&n, "ALLOCATED+DRAIN", "llmnet:lab: devices,io: x");
	assert_int_equal(ln_slurm_may_lift(&n, "lab", &part, &o, &stage), LN_SLURM_STAGE_FAILED);
	assert_string_equal(stage, "io");
	/* the health check's own drain: validate never ran "health" */
	node_at(&n, "IDLE+DRAIN", "llmnet:lab: health: /mnt/x not mounted");
	assert_int_equal(ln_slurm_may_lift(&n, "lab", &part, &o, &stage), LN_SLURM_LIFT);
}

/* ---- the verdict table ------------------------------------------------- */

/* Every kind results.c names has its row; when a kind is added (as
 * "target" will be), this fails until the table says what it drains. */
static void test_slurm__verdict_table_has_every_kind(void **state)
{
	int k, kinds = 0;

	(void)state;
	for (k = 0; k < 64; k++) {
		const char *name = ln_verdict_kind_name((enum ln_verdict_kind)k);

		if (!strcmp(name, "?"))
			continue;
		kinds++;
		if (!ln_slurm_verdict_row((enum ln_verdict_kind)k))
			fail_msg("verdict kind '%s' has no row in the Slurm table "
				 "(orchestrator/validate/slurm.c)", name);
	}
	assert_true(kinds >= 5);
	assert_true(ln_slurm_verdict_row(LN_VERDICT_NODE)->drains);
	assert_true(ln_slurm_verdict_row(LN_VERDICT_PORT)->drains);
	assert_false(ln_slurm_verdict_row(LN_VERDICT_LINK)->drains);
	assert_string_equal(ln_slurm_verdict_row(LN_VERDICT_LINK)->not_a_node,
			    "the link, not a node");
	assert_false(ln_slurm_verdict_row(LN_VERDICT_UNDETERMINED)->drains);
	assert_false(ln_slurm_verdict_row(LN_VERDICT_CLUSTER)->drains);
	assert_null(ln_slurm_verdict_row((enum ln_verdict_kind)99));
}

/* ---- the action, against a fake Slurm ------------------------------------ */

#define NN 3

/* Slurm as scontrol on slurm.node sees it, and the log of every call. */
struct fslurm {
	const char *names[NN];
	char state[NN][32];
	char reason[NN][200];
	int ignore_updates;	/* an update Slurm takes and does not apply */
	struct ln_buf log;
};

static struct fslurm fs;

static int fake_index(const char *name)
{
	int i;

	for (i = 0; i < NN; i++)
		if (!strcmp(fs.names[i], name))
			return i;
	return -1;
}

static int fake_run(void *ctx, size_t node, unsigned lane, const char *const *argv,
		    const char *sha256, int timeout_s, struct ln_probe_result *out,
		    struct ln_buf *err)
{
	int i, k;

	(void)ctx;
	(void)err;
	assert_int_equal(node, 0);	/* slurm.node is n1 */
	assert_int_equal(lane, 0);
	assert_null(sha256);
	assert_int_equal(timeout_s, LN_SLURM_TIMEOUT_S);
	assert_string_equal(argv[0], "scontrol");
	ln_buf_addstr(&fs.log, "scontrol");
	for (k = 1; argv[k]; k++)
		ln_buf_addf(&fs.log, " %s", argv[k]);
	ln_buf_addch(&fs.log, '\n');
	out->exit_status = 0;
	if (!strcmp(argv[1], "-o")) {
		i = fake_index(argv[4]);
		if (i < 0) {
			ln_buf_addf(&out->output, "Node %s not found\n", argv[4]);
			out->exit_status = 1;
			return 0;
		}
		ln_buf_addf(&out->output, "NodeName=%s Arch=x86_64 OS=Linux 6.12 #1 SMP State=%s "
			    "Partitions=debug%s%s%s\n", fs.names[i], fs.state[i],
			    fs.reason[i][0] ? " Reason=" : "", fs.reason[i],
			    fs.reason[i][0] ? " [root@2026-12-04T01:00:00]" : "");
		return 0;
	}
	i = fake_index(argv[2] + strlen("NodeName="));
	assert_true(i >= 0);
	if (fs.ignore_updates)
		return 0;
	if (!strcmp(argv[3], "State=DRAIN")) {
		snprintf(fs.state[i], sizeof(fs.state[i]), "IDLE+DRAIN");
		snprintf(fs.reason[i], sizeof(fs.reason[i]), "%s", argv[4] + strlen("Reason="));
	} else {
		assert_string_equal(argv[3], "State=UNDRAIN");
		snprintf(fs.state[i], sizeof(fs.state[i]), "IDLE");
		fs.reason[i][0] = '\0';
	}
	return 0;
}

static const struct ln_probe_ops fake_ops = { .run = fake_run };

static void fake_progress(void *ctx, const char *line)
{
	(void)ctx;
	ln_buf_addf(&fs.log, "progress %s\n", line);
}

static void fake_at(int i, const char *st, const char *reason)
{
	snprintf(fs.state[i], sizeof(fs.state[i]), "%s", st);
	snprintf(fs.reason[i], sizeof(fs.reason[i]), "%s", reason);
}

static const char spec_yaml[] =
	"version: 1\n"
	"cluster: lab\n"
	"nodes:\n"
	"  - { name: n1, address: 127.0.0.1 }\n"
	"  - { name: n2, address: 127.0.0.2, slurm_name: gpu-n2 }\n"
	"  - { name: n3, address: 127.0.0.3 }\n"
	"slurm: { node: n1 }\n";

static struct ln_spec *spec;

static int setup(void **state)
{
	struct ln_buf err = LN_BUF_INIT;

	(void)state;
	if (ln_spec_load_buf("slurm.yaml", spec_yaml, strlen(spec_yaml), &spec, &err) < 0) {
		fprintf(stderr, "%s\n", err.buf);
		return -1;
	}
	ln_buf_release(&err);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ln_spec_free(spec);
	return 0;
}

static int each(void **state)
{
	(void)state;
	memset(&fs, 0, sizeof(fs));
	fs.names[0] = "n1";
	fs.names[1] = "gpu-n2";
	fs.names[2] = "n3";
	fake_at(0, "IDLE", "");
	fake_at(1, "IDLE", "");
	fake_at(2, "IDLE", "");
	ln_buf_init(&fs.log, 0);
	return 0;
}

static int each_done(void **state)
{
	(void)state;
	ln_buf_release(&fs.log);
	return 0;
}

/* A run of devices and rping: each node's devices check, the pairs
 * n1-n2, n2-n3, n1-n3; with bad, n2's devices check fails (a node
 * verdict) and the pair n1-n3 fails (a link verdict). */
static void results(struct ln_results *r, int bad)
{
	const char *names[NN] = { "n1", "n2", "n3" };
	size_t i;
	long c;

	assert_int_equal(ln_results_init(r, "lab", names, NN), 0);
	r->stages[LN_STAGE_DEVICES].listed = r->stages[LN_STAGE_DEVICES].ran = 1;
	r->stages[LN_STAGE_RPING].listed = r->stages[LN_STAGE_RPING].ran = 1;
	for (i = 0; i < NN; i++) {
		c = ln_results_add_check(r, LN_STAGE_DEVICES, i, LN_NO_NODE, "rxe0/1 state");
		assert_true(c >= 0);
		if (bad && i == 1)
			ln_check_set(&r->checks[c], LN_ST_FAIL, "rxe0/1 state DOWN");
	}
	assert_true(ln_results_add_check(r, LN_STAGE_RPING, 0, 1, "rping") >= 0);
	assert_true(ln_results_add_check(r, LN_STAGE_RPING, 1, 2, "rping") >= 0);
	c = ln_results_add_check(r, LN_STAGE_RPING, 0, 2, "rping");
	if (bad) {
		ln_check_set(&r->checks[c], LN_ST_FAIL, "no answer");
		assert_int_equal(ln_results_add_verdict(r, LN_VERDICT_NODE, LN_STAGE_DEVICES, 1,
							LN_NO_NODE, "rxe0/1 state DOWN"), 0);
		assert_int_equal(ln_results_add_verdict(r, LN_VERDICT_LINK, LN_STAGE_RPING, 0, 2,
							"n1 and n3 pass with others"), 0);
	}
}

static struct ln_after_opts opts(enum ln_drain_mode drain, int resume)
{
	struct ln_after_opts o;

	memset(&o, 0, sizeof(o));
	o.drain = drain;
	o.resume = resume;
	o.spec = spec;
	o.ops = &fake_ops;
	o.progress = fake_progress;
	return o;
}

#define REASON_N2 "llmnet:lab: devices: rxe0/1 state DOWN"

/* The blamed node, and only it, is drained: its state read, the plan
 * printed, the drain made, read back; the bad link drains nobody and
 * says so; the recap and the JSON report list both. */
static void test_slurm__drains_exactly_the_culprit(void **state)
{
	struct ln_after_opts o = opts(LN_DRAIN_DO, 0);
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_buf text = LN_BUF_INIT, json = LN_BUF_INIT;
	struct ln_results r;

	(void)state;
	results(&r, 1);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	assert_int_equal(notes.n, 0);
	assert_string_equal(fs.log.buf,
		"scontrol -o show node gpu-n2\n"
		"progress slurm: will drain n2 (Slurm node gpu-n2): " REASON_N2 "\n"
		"scontrol update NodeName=gpu-n2 State=DRAIN Reason=" REASON_N2 "\n"
		"scontrol -o show node gpu-n2\n");
	assert_string_equal(fs.state[1], "IDLE+DRAIN");
	assert_string_equal(fs.state[0], "IDLE");
	assert_string_equal(fs.state[2], "IDLE");
	assert_int_equal(r.nslurm, 2);
	assert_int_equal(r.slurm[0].act, LN_SLURM_ACT_NOT_DRAINED);
	assert_null(r.slurm[0].node);
	assert_string_equal(r.slurm[0].detail, "n1-n3 (rping): the link, not a node");
	assert_int_equal(r.slurm[1].act, LN_SLURM_ACT_DRAINED);
	assert_string_equal(r.slurm[1].node, "n2");
	assert_string_equal(r.slurm[1].slurm_name, "gpu-n2");
	assert_string_equal(r.slurm[1].reason, REASON_N2);
	assert_int_equal(ln_report_text(&r, 0, &text), 0);
	assert_non_null(strstr(text.buf, "slurm:\n  not drained: n1-n3 (rping): the link, not a "
				"node\n  drained n2 (Slurm gpu-n2): drained: State=IDLE+DRAIN ["
				REASON_N2 "]\n"));
	assert_int_equal(ln_report_json(&r, 0, &json), 0);
	assert_non_null(strstr(json.buf, "\"slurm\":[{\"action\":\"not drained\",\"node\":null"));
	assert_non_null(strstr(json.buf, "{\"action\":\"drained\",\"node\":\"n2\","
				"\"slurm_name\":\"gpu-n2\",\"reason\":\"" REASON_N2 "\""));
	ln_results_release(&r);
	ln_buf_release(&text);
	ln_buf_release(&json);
}

/* A node someone drained, or Slurm has down, is left exactly as it is. */
static void test_slurm__never_over_someone_s_drain(void **state)
{
	struct ln_after_opts o = opts(LN_DRAIN_DO, 0);
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_results r;

	(void)state;
	fake_at(1, "IDLE+DRAIN", "maintenance: new DIMMs");
	results(&r, 1);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	assert_null(strstr(fs.log.buf, "update"));
	assert_string_equal(fs.reason[1], "maintenance: new DIMMs");
	assert_int_equal(r.slurm[1].act, LN_SLURM_ACT_NOT_DRAINED);
	assert_string_equal(r.slurm[1].reason, "maintenance: new DIMMs");
	assert_non_null(strstr(r.slurm[1].detail, "already drained by someone else"));
	ln_results_release(&r);

	ln_buf_reset(&fs.log);
	fake_at(1, "DOWN+NOT_RESPONDING", "Not responding");
	results(&r, 1);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	assert_null(strstr(fs.log.buf, "update"));
	assert_string_equal(fs.state[1], "DOWN+NOT_RESPONDING");
	assert_non_null(strstr(r.slurm[1].detail, "Slurm has it down"));
	ln_results_release(&r);

	/* its own drain already on: not made twice */
	ln_buf_reset(&fs.log);
	fake_at(1, "IDLE+DRAIN", "llmnet:lab: devices: earlier");
	results(&r, 1);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	assert_null(strstr(fs.log.buf, "update"));
	assert_string_equal(fs.reason[1], "llmnet:lab: devices: earlier");
	ln_results_release(&r);
	assert_int_equal(notes.n, 0);
}

/* --drain=plan reads Slurm, prints, changes nothing. */
static void test_slurm__plan_changes_nothing(void **state)
{
	struct ln_after_opts o = opts(LN_DRAIN_PLAN, 0);
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_results r;

	(void)state;
	results(&r, 1);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	assert_string_equal(fs.log.buf,
		"scontrol -o show node gpu-n2\n"
		"progress slurm: would drain n2 (Slurm node gpu-n2): " REASON_N2 "\n");
	assert_string_equal(fs.state[1], "IDLE");
	assert_int_equal(r.slurm[1].act, LN_SLURM_ACT_WOULD_DRAIN);
	ln_results_release(&r);
}

/* --resume lifts this cluster's drains whose stages all ran and passed,
 * with UNDRAIN; keeps a person's, another cluster's, and one whose
 * stage this run did not run or the node did not pass. */
static void test_slurm__resume_lifts_only_its_own(void **state)
{
	struct ln_after_opts o = opts(LN_DRAIN_NONE, 1);
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_results r;

	(void)state;
	fake_at(0, "IDLE+DRAIN", "llmnet:lab: devices,rping: rxe0 was down");
	fake_at(1, "IDLE+DRAIN", "llmnet:lab: devices,io: io below 500MB/s");
	fake_at(2, "IDLE+DRAIN", "maintenance");
	results(&r, 0);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	assert_string_equal(fs.log.buf,
		"scontrol -o show node n1\n"
		"scontrol -o show node gpu-n2\n"
		"scontrol -o show node n3\n"
		"progress slurm: will lift the drain of n1 (Slurm node n1): llmnet:lab: "
		"devices,rping: rxe0 was down\n"
		"scontrol update NodeName=n1 State=UNDRAIN\n"
		"scontrol -o show node n1\n");
	assert_string_equal(fs.state[0], "IDLE");
	assert_string_equal(fs.state[1], "IDLE+DRAIN");
	assert_string_equal(fs.reason[2], "maintenance");
	assert_int_equal(r.nslurm, 3);
	assert_int_equal(r.slurm[0].act, LN_SLURM_ACT_NOT_RESUMED);
	assert_string_equal(r.slurm[0].node, "n2");
	assert_string_equal(r.slurm[0].detail, "io not run");
	assert_int_equal(r.slurm[1].act, LN_SLURM_ACT_NOT_RESUMED);
	assert_string_equal(r.slurm[1].node, "n3");
	assert_string_equal(r.slurm[1].reason, "maintenance");
	assert_int_equal(r.slurm[2].act, LN_SLURM_ACT_LIFTED);
	assert_string_equal(r.slurm[2].node, "n1");
	ln_results_release(&r);

	/* another cluster's drain; and a listed stage the node failed */
	ln_buf_reset(&fs.log);
	fake_at(0, "IDLE+DRAIN", "llmnet:other: devices: x");
	fake_at(1, "IDLE+DRAIN", "llmnet:lab: devices: x");
	fake_at(2, "IDLE", "");
	results(&r, 0);
	ln_check_set(&r.checks[1], LN_ST_FAIL, "rxe0/1 state DOWN");
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	assert_null(strstr(fs.log.buf, "update"));
	assert_string_equal(r.slurm[0].node, "n1");
	assert_non_null(strstr(r.slurm[0].detail, "not this cluster's"));
	assert_string_equal(r.slurm[1].node, "n2");
	assert_string_equal(r.slurm[1].detail, "devices did not pass");
	assert_int_equal(r.nslurm, 2);
	ln_results_release(&r);
	assert_int_equal(notes.n, 0);
}

/* A drain Slurm does not show after the update fails the action. */
static void test_slurm__unconfirmed_drain_fails(void **state)
{
	struct ln_after_opts o = opts(LN_DRAIN_DO, 0);
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_results r;

	(void)state;
	fs.ignore_updates = 1;
	results(&r, 1);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_FAILED);
	assert_int_equal(notes.n, 1);
	assert_non_null(strstr(notes.v[0].text, "slurm: a drain or lift failed"));
	assert_int_equal(r.slurm[1].act, LN_SLURM_ACT_FAILED);
	assert_non_null(strstr(r.slurm[1].detail, "DRAIN not confirmed: Slurm reads State=IDLE"));
	ln_notes_release(&notes);
	ln_results_release(&r);

	/* a lift that does not take fails a run whose stages all passed: the
	 * report's exit code says so; the same run with the lift taken is 0 */
	o = opts(LN_DRAIN_NONE, 1);
	fake_at(0, "IDLE+DRAIN", "llmnet:lab: devices: x");
	results(&r, 0);
	r.stages[LN_STAGE_DEVICES].status = r.stages[LN_STAGE_RPING].status = LN_ST_PASS;
	assert_int_equal(ln_results_exit(&r), LN_EXIT_OK);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_FAILED);
	assert_int_equal(r.slurm[0].act, LN_SLURM_ACT_FAILED);
	assert_int_equal(ln_results_exit(&r), LN_EXIT_FAILED);
	ln_notes_release(&notes);
	ln_results_release(&r);
	fs.ignore_updates = 0;
	results(&r, 0);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	assert_int_equal(r.slurm[0].act, LN_SLURM_ACT_LIFTED);
	assert_int_equal(ln_results_exit(&r), LN_EXIT_OK);
	ln_results_release(&r);
}

/* A verdict kind the table has no row for drains nobody, and says so;
 * the spec's keys ask as the options do; no slurm section, no action. */
static void test_slurm__unknown_kind_and_spec_keys(void **state)
{
	struct ln_after_opts o = opts(LN_DRAIN_NONE, 0);
	struct ln_notes notes = LN_NOTES_INIT;
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *bare = NULL;
	struct json_object *js = NULL;
	struct ln_results r;

	(void)state;
	assert_false(ln_slurm_wanted(&o));
	spec->slurm.drain = 1;
	assert_true(ln_slurm_wanted(&o));
	results(&r, 0);
	assert_int_equal(ln_results_add_verdict(&r, (enum ln_verdict_kind)99, LN_STAGE_DEVICES,
						1, LN_NO_NODE, "a kind from the future"), 0);
	assert_int_equal(ln_validate_after_results(&r, &o, &notes), LN_EXIT_OK);
	spec->slurm.drain = 0;
	assert_string_equal(fs.log.buf, "progress slurm: nothing to drain or lift\n");
	assert_int_equal(r.nslurm, 1);
	assert_int_equal(r.slurm[0].act, LN_SLURM_ACT_NOT_DRAINED);
	assert_non_null(strstr(r.slurm[0].detail, "llmnet's Slurm table has no row for a '?' "
				"verdict, so it drains nobody"));
	ln_results_release(&r);
	spec->slurm.resume = 1;
	assert_true(ln_slurm_wanted(&o));
	spec->slurm.resume = 0;
	/* --drain on a spec without a slurm section: a usage error */
	assert_int_equal(ln_spec_load_buf("bare.yaml", spec_yaml, strlen(spec_yaml) - 20, &bare,
					  &err), 0);
	o = opts(LN_DRAIN_DO, 0);
	assert_int_equal(ln_slurm_opts_check(spec, &o, &err), 0);
	assert_int_equal(ln_slurm_opts_check(bare, &o, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "need the spec's slurm section"));
	/* lint -o json: the section and each node's Slurm name */
	assert_int_equal(ln_spec_to_json(spec, &js), 0);
	assert_int_equal(ln_json_write(js, 0, &err), 0);
	assert_non_null(strstr(err.buf, "\"slurm\":{\"node\":\"n1\",\"drain\":false,"
				"\"resume\":false}"));
	assert_non_null(strstr(err.buf, "\"slurm_name\":\"gpu-n2\""));
	assert_non_null(strstr(err.buf, "\"slurm_name\":\"n3\""));
	json_object_put(js);
	assert_int_equal(ln_spec_to_json(bare, &js), 0);
	assert_null(json_object_object_get(js, "slurm"));
	json_object_put(js);
	ln_spec_free(bare);
	ln_buf_release(&err);
}

LN_TEST_MAIN(setup, teardown,
	cmocka_unit_test(test_slurm__reason_made_and_read_back),
	cmocka_unit_test(test_slurm__scontrol_line_parsed),
	cmocka_unit_test(test_slurm__ownership_rules),
	cmocka_unit_test(test_slurm__verdict_table_has_every_kind),
	cmocka_unit_test_setup_teardown(test_slurm__drains_exactly_the_culprit, each, each_done),
	cmocka_unit_test_setup_teardown(test_slurm__never_over_someone_s_drain, each, each_done),
	cmocka_unit_test_setup_teardown(test_slurm__plan_changes_nothing, each, each_done),
	cmocka_unit_test_setup_teardown(test_slurm__resume_lifts_only_its_own, each, each_done),
	cmocka_unit_test_setup_teardown(test_slurm__unconfirmed_drain_fails, each, each_done),
	cmocka_unit_test_setup_teardown(test_slurm__unknown_kind_and_spec_keys, each, each_done),
)
