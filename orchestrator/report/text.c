/* SPDX-License-Identifier: MIT */
/*
 * The terminal recap: one line per listed stage, then each failing check
 * with what was measured against what was wanted, then the verdicts. An
 * operator reads this first, so the culprits come last, nearest the prompt.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/escape.h"
#include "common/fileio.h"
#include "orchestrator/report/report.h"
#include "orchestrator/spec/units.h"

static const char *paint(int color, enum ln_status st)
{
	if (!color)
		return "";
	return st == LN_ST_PASS ? "\033[32m" : st == LN_ST_SKIPPED ? "\033[33m" : "\033[31m";
}

void ln_report_latency_text(const struct ln_check *c, struct ln_buf *out)
{
	const struct ln_latency *l = &c->lat;
	const char *sep = "";

	if (c->stage != LN_STAGE_LATENCY || c->ctr)
		return;
	if (!isnan(l->typical))
		ln_buf_addf(out, "typical %.2f us, avg %.2f us, p99 %.2f us", l->typical, l->avg,
			    l->p99);
	if (isnan(l->max_typical) && isnan(l->max_p99))
		return;
	ln_buf_addstr(out, isnan(l->typical) ? "(" : " (");
	if (!isnan(l->max_typical)) {
		ln_buf_addf(out, "max typical %.0f us", l->max_typical);
		sep = ", ";
	}
	if (!isnan(l->max_p99))
		ln_buf_addf(out, "%smax p99 %.0f us", sep, l->max_p99);
	ln_buf_addch(out, ')');
}

void ln_report_counters_text(const struct ln_check *c, struct ln_buf *out)
{
	const struct ln_port_counters *pc = c->ctr;
	struct ln_buf rose = LN_BUF_INIT, na = LN_BUF_INIT;
	size_t i;

	if (!pc)
		return;
	for (i = 0; i < pc->n; i++) {
		struct ln_buf *to = !pc->v[i].error ? NULL : pc->v[i].delta > 0 ? &rose :
				    pc->v[i].delta < 0 ? &na : NULL;

		if (to)
			ln_buf_addf(to, "%s%s", to->len ? ", " : "", pc->v[i].name);
		if (to == &rose)
			ln_buf_addf(to, " +%lld", pc->v[i].delta);
	}
	if (pc->errors < 0)
		ln_buf_addstr(out, "no error counter read");
	else
		ln_buf_addf(out, "%lld errors", pc->errors);
	if (rose.len || na.len)
		ln_buf_addf(out, " (%s%s%s%s)", rose.buf, rose.len && na.len ? "; " : "",
			    na.len ? "not available: " : "", na.buf);
	if (pc->max_errors < 0)
		ln_buf_addf(out, ", not judged, %zu partners", pc->partners);
	else
		ln_buf_addf(out, ", max_errors %lld, over it with %zu of %zu partners",
			    pc->max_errors, pc->partners_over, pc->partners);
	ln_buf_release(&rose);
	ln_buf_release(&na);
}

void ln_report_sizes_text(const struct ln_check *c, struct ln_buf *out)
{
	char sz[32];
	size_t k;

	if (!c->nsizes)
		return;
	ln_buf_addstr(out, "busbw by size");
	for (k = 0; k < c->nsizes; k++) {
		ln_units_format_size(c->sizes[k].bytes, sz);
		ln_buf_addf(out, "%s %s %.3g", k ? "," : "", sz, c->sizes[k].busbw);
		if (c->sizes[k].wrong > 0)
			ln_buf_addf(out, " (%ld wrong)", c->sizes[k].wrong);
	}
	ln_buf_addf(out, " GB/s (judged at %s)", sz);
}

/* Each check of stage st that measured a size sweep, its figures. */
static void sizes_lines(const struct ln_results *r, enum ln_stage st, struct ln_buf *out)
{
	struct ln_buf subj = LN_BUF_INIT;
	size_t i;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (c->stage != st || c->nsizes < 2)
			continue;
		ln_buf_reset(&subj);
		ln_results_subject_ports(r, c->a, c->pa, c->b, c->pb, &subj);
		ln_buf_addf(out, "  %-10s %s: ", "", subj.buf);
		ln_report_sizes_text(c, out);
		ln_buf_addch(out, '\n');
	}
	ln_buf_release(&subj);
}

/* Per pairwise stage with counters: ports read, errors in all, the ports
 * that gained any, and those whose counters could not be read. */
static void counters_line(const struct ln_results *r, enum ln_stage st, struct ln_buf *out)
{
	struct ln_buf gained = LN_BUF_INIT, unread = LN_BUF_INIT, subj = LN_BUF_INIT;
	long long sum = 0, max = -1;
	size_t i, n = 0;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];
		struct ln_buf *to;

		if (c->stage != st || !c->ctr)
			continue;
		n++;
		max = c->ctr->max_errors;
		ln_buf_reset(&subj);
		ln_results_subject_ports(r, c->a, c->pa, LN_NO_NODE, -1, &subj);
		to = c->ctr->unread ? &unread : c->ctr->errors > 0 ? &gained : NULL;
		if (to)
			ln_buf_addf(to, "%s%s", to->len ? ", " : "", subj.buf);
		if (to == &gained)
			ln_buf_addf(to, " %lld", c->ctr->errors);
		if (c->ctr->errors > 0)
			sum += c->ctr->errors;
	}
	if (n) {
		ln_buf_addf(out, "  %-10s %zu ports, %lld errors", "", n, sum);
		if (gained.len)
			ln_buf_addf(out, " (%s)", gained.buf);
		if (unread.len)
			ln_buf_addf(out, "; not read: %s", unread.buf);
		if (max < 0)
			ln_buf_addstr(out, "; not judged (no max_errors)\n");
		else
			ln_buf_addf(out, "; max_errors %lld\n", max);
	}
	ln_buf_release(&gained);
	ln_buf_release(&unread);
	ln_buf_release(&subj);
}

static void add_value(struct ln_buf *out, const struct ln_check *c)
{
	/* a port's counters: the reason has the figures already */
	if (c->status == LN_ST_SKIPPED || (c->ctr && c->reason))
		return;
	ln_report_figures(out, c, " ", ", ", "", 3);
}

void ln_report_figures(struct ln_buf *out, const struct ln_check *c, const char *lead,
		       const char *sep, const char *end, int prec)
{
	if (c->ctr) {
		ln_buf_addstr(out, lead);
		ln_report_counters_text(c, out);
		ln_buf_addstr(out, end);
		return;
	}
	if (c->stage == LN_STAGE_LATENCY) {
		/* its figures have names of their own */
		ln_buf_addstr(out, lead);
		ln_report_latency_text(c, out);
		ln_buf_addstr(out, end);
		return;
	}
	if (!isnan(c->value))
		ln_buf_addf(out, "%smeasured %.*g %s%s", lead, prec, c->value, c->unit, end);
	if (!isnan(c->threshold))
		ln_buf_addf(out, "%sthreshold %.*g %s%s", sep, prec, c->threshold, c->unit, end);
	if (!isnan(c->line_rate))
		ln_buf_addf(out, "%sline rate %.*g Gb/s%s", sep, prec, c->line_rate, end);
}

int ln_report_text(const struct ln_results *r, int color, struct ln_buf *out)
{
	const char *off = color ? "\033[0m" : "";
	struct ln_buf subj = LN_BUF_INIT;
	size_t i, shown = 0;
	int s, code = ln_results_exit(r);

	ln_buf_addf(out, "validation of '%s': %zu nodes, %.1fs\n", r->cluster, r->nnodes,
		    r->seconds);
	for (s = 0; s < LN_STAGE_COUNT; s++) {
		const struct ln_stage_summary *st = &r->stages[s];

		if (!st->listed)
			continue;
		ln_buf_addf(out, "  %-10s %s%-8s%s", ln_stage_name(s), paint(color, st->status),
			    st->status == LN_ST_PASS ? "pass" : st->status == LN_ST_SKIPPED ?
			    "skipped" : st->status == LN_ST_NOT_RUN ? "NOT RUN" : "FAIL", off);
		if (!st->ran && st->reason) {
			ln_buf_addch(out, ' ');
			ln_escape_str(out, st->reason);
		} else
			ln_buf_addf(out, " %zu passed, %zu failed, %zu skipped, %zu not run",
				    st->passed, st->failed, st->skipped, st->not_run);
		if (st->rounds)
			ln_buf_addf(out, " (%zu rounds)", st->rounds);
		ln_buf_addch(out, '\n');
		counters_line(r, (enum ln_stage)s, out);
		sizes_lines(r, (enum ln_stage)s, out);
	}
	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (c->status == LN_ST_PASS && c->nattempts < 2 && !c->warning)
			continue;
		if (!shown++)
			ln_buf_addstr(out, "details:\n");
		ln_buf_reset(&subj);
		ln_results_subject_ports(r, c->a, c->pa, c->b, c->pb, &subj);
		ln_buf_addf(out, "  %-9s %s %s%s%s%s: ", ln_stage_name(c->stage), subj.buf,
			    paint(color, c->status),
			    c->warning && c->status == LN_ST_PASS ? "warning" : ln_status_name(c->status),
			    off,
			    c->retest ? " (retest)" : "");
		/* a reason may quote a node's output: escaped (escape.h) */
		ln_escape_str(out, c->reason ? c->reason : c->name);
		add_value(out, c);
		if (c->nattempts > 1)
			ln_buf_addf(out, " [%zu attempts]", c->nattempts);
		ln_buf_addch(out, '\n');
	}
	if (r->nverdicts)
		ln_buf_addstr(out, "verdicts:\n");
	for (i = 0; i < r->nverdicts; i++) {
		const struct ln_verdict *v = &r->verdicts[i];

		ln_buf_reset(&subj);
		ln_results_subject_ports(r, v->a, v->pa, v->b, v->pb, &subj);
		ln_buf_addf(out, "  %s%s%s %s (%s): ",
			    color ? (v->warning ? "\033[33;1m" : "\033[31;1m") : "",
			    ln_verdict_title(v), off, subj.buf, ln_stage_name(v->stage));
		ln_escape_str(out, v->reason);
		ln_buf_addch(out, '\n');
	}
	if (r->nslurm)
		ln_buf_addstr(out, "slurm:\n");
	for (i = 0; i < r->nslurm; i++) {
		const struct ln_slurm_change *c = &r->slurm[i];

		ln_buf_addf(out, "  %s%s%s", ln_slurm_act_name(c->act), c->node ? " " : "",
			    c->node ? c->node : "");
		if (c->node && c->slurm_name && strcmp(c->node, c->slurm_name))
			ln_buf_addf(out, " (Slurm %s)", c->slurm_name);
		ln_buf_addstr(out, ": ");
		/* a reason read from Slurm is anyone's text: escaped */
		ln_escape_str(out, c->detail);
		if (c->reason) {
			ln_buf_addstr(out, " [");
			ln_escape_str(out, c->reason);
			ln_buf_addch(out, ']');
		}
		ln_buf_addch(out, '\n');
	}
	ln_buf_addf(out, "result: %s%s%s (exit %d)\n", paint(color, code ? LN_ST_FAIL : LN_ST_PASS),
		    code ? "FAIL" : "PASS", off, code);
	ln_buf_release(&subj);
	return 0;
}

int ln_report_save(const char *path, const struct ln_buf *buf, struct ln_buf *err)
{
	return ln_file_write_atomic(path, buf->buf, buf->len, 0644, err);
}
