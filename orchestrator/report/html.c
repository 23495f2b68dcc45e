/* SPDX-License-Identifier: MIT */
/*
 * One self-contained HTML page (inline CSS, no script, no external
 * resource, so it can be mailed or archived as a CI artefact): summary,
 * verdicts, node x node heatmaps for rping, bandwidth and latency (one per
 * rail when the pairs name several) with failing cells marked, each
 * node's GPU x (GPU + NIC) PCIe matrix, and a table of every failing,
 * warning or retried check.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orchestrator/report/report.h"

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111}"
	"h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
	"table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 7px;text-align:left}"
	".pass{background:#c8f0c8}.fail{background:#f4a6a6;font-weight:bold;outline:2px solid #b00}"
	".skip{background:#f6e3a0}.none{background:#eee}.self{background:#555}"
	".notrun{background:#f4a6a6}.retest{font-style:italic}"
	"table.heat td{width:28px;height:22px;text-align:center;padding:0;font-size:11px}"
	"table.heat th{font-size:11px;font-weight:normal;padding:1px 4px}"
	".result-pass{color:#070}.result-fail{color:#b00}";

static void esc(struct ln_buf *out, const char *s)
{
	ln_report_escape_xml(out, s ? s : "");
}

/* The matrix a pair check is drawn in: its rail's (both ends on one
 * rail), "cross-rail", or NULL when the results name no rails. */
static const char *check_rail(const struct ln_results *r, const struct ln_check *c)
{
	const char *ra = ln_results_rail(r, c->a, c->pa), *rb = ln_results_rail(r, c->b, c->pb);

	if (!ra || !rb)
		return NULL;
	return strcmp(ra, rb) ? "cross-rail" : ra;
}

static int same_rail(const char *a, const char *b)
{
	return !a || !b ? a == b : !strcmp(a, b);
}

/* One heatmap cell: check c of the pair lo-hi, seen from row i. */
static void heat_cell(const struct ln_results *r, enum ln_stage stage, const char *tag,
		      const struct ln_check *c, size_t i, size_t lo, size_t hi,
		      struct ln_buf *ends, struct ln_buf *out)
{
	/* ids stay unique: the mirror cell below the diagonal names its
	 * pair in data-pair only */
	ln_buf_addf(out, "<td %s=\"%s-", i == lo ? "id" : "data-pair", ln_stage_name(stage));
	if (tag) {
		esc(out, tag);
		ln_buf_addch(out, '-');
	}
	esc(out, r->nodes[lo]);
	ln_buf_addch(out, '-');
	esc(out, r->nodes[hi]);
	ln_buf_addf(out, "\" class=\"%s%s\" data-status=\"%s\" title=\"", ln_status_class(c->status),
		    c->retest ? " retest" : "", ln_status_name(c->status));
	ln_buf_reset(ends);
	ln_results_subject_ports(r, c->a, c->pa, c->b, c->pb, ends);
	esc(out, ends->buf);
	ln_buf_addf(out, ": %s", ln_status_name(c->status));
	if (c->reason) {
		ln_buf_addstr(out, ": ");
		esc(out, c->reason);
	}
	if (stage == LN_STAGE_LATENCY && !isnan(c->lat.typical)) {
		ln_buf_reset(ends);
		ln_report_latency_text(c, ends);
		ln_buf_addstr(out, "; ");
		esc(out, ends->buf);
	}
	ln_buf_addstr(out, "\">");
	/* bandwidth cells show Gb/s, latency cells the typical us */
	if (c->status == LN_ST_FAIL || c->status == LN_ST_NOT_RUN) {
		ln_buf_addstr(out, "&#x2717;");
		if (stage != LN_STAGE_RPING && !isnan(c->value))
			ln_buf_addf(out, "%.3g", c->value);
	} else if (c->status == LN_ST_SKIPPED) {
		ln_buf_addstr(out, "&ndash;");
	} else if (stage != LN_STAGE_RPING && !isnan(c->value)) {
		ln_buf_addf(out, "%.3g", c->value);
	} else {
		ln_buf_addstr(out, "&#x2713;");
	}
	ln_buf_addstr(out, "</td>");
}

/* The node x node matrix of stage's pair checks drawn in rail's matrix
 * (check_rail; all of them when tag is NULL: one rail, or none named).
 * The pair's own check wins over a diagnosis retest of it; of several
 * checks of a pair in one matrix (cross-rail), the first that did not
 * pass (the cell's title names its ports; the failures table lists
 * every one). */
static int heatmap(const struct ln_results *r, enum ln_stage stage, const char *tag,
		   struct ln_buf *out)
{
	struct ln_buf ends = LN_BUF_INIT;
	size_t n = r->nnodes, i, j;
	size_t *at;	/* at[lo * n + hi]: the pair's check index + 1, 0: not tested */

	at = calloc(n ? n * n : 1, sizeof(*at));
	if (!at)
		return -ENOMEM;
	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i], *o;
		size_t lo, hi, *cell;

		if (c->stage != stage || c->a >= n || c->b >= n ||
		    (tag && !same_rail(check_rail(r, c), tag)))
			continue;
		lo = c->a < c->b ? c->a : c->b;
		hi = c->a < c->b ? c->b : c->a;
		cell = &at[lo * n + hi];
		o = *cell ? &r->checks[*cell - 1] : NULL;
		if (!o || (!c->retest && o->retest) ||
		    (c->retest == o->retest && o->status == LN_ST_PASS && c->status != LN_ST_PASS))
			*cell = i + 1;
	}
	ln_buf_addf(out, "<table class=\"heat\" id=\"heat-%s", ln_stage_name(stage));
	if (tag) {
		ln_buf_addch(out, '-');
		esc(out, tag);
	}
	ln_buf_addstr(out, "\">\n<tr><th></th>");
	for (j = 0; j < n; j++) {
		ln_buf_addstr(out, "<th>");
		esc(out, r->nodes[j]);
		ln_buf_addstr(out, "</th>");
	}
	ln_buf_addstr(out, "</tr>\n");
	for (i = 0; i < n; i++) {
		ln_buf_addstr(out, "<tr><th>");
		esc(out, r->nodes[i]);
		ln_buf_addstr(out, "</th>");
		for (j = 0; j < n; j++) {
			size_t lo = i < j ? i : j, hi = i < j ? j : i;

			if (i == j)
				ln_buf_addstr(out, "<td class=\"self\"></td>");
			else if (!at[lo * n + hi])
				ln_buf_addstr(out, "<td class=\"none\" title=\"not tested\"></td>");
			else
				heat_cell(r, stage, tag, &r->checks[at[lo * n + hi] - 1], i, lo, hi,
					  &ends, out);
		}
		ln_buf_addstr(out, "</tr>\n");
	}
	ln_buf_addstr(out, "</table>\n");
	ln_buf_release(&ends);
	free(at);
	return 0;
}

/* Stage's heatmaps: one node x node matrix per rail (and one for the
 * cross-rail pairs) when its pairs name more than one, else one. */
static int heatmaps(const struct ln_results *r, enum ln_stage stage, struct ln_buf *out)
{
	const char **tags = NULL, *t;
	size_t ntags = 0, i, k;
	int ret = 0;

	if (r->nnodes > LN_REPORT_HTML_MAX_HEATMAP) {
		ln_buf_addf(out, "<h2>%s: node &times; node</h2>\n", ln_stage_name(stage));
		ln_buf_addf(out, "<p>%zu nodes: the heatmap is drawn up to %d nodes; the failing "
			    "pairs are listed below.</p>\n", r->nnodes, LN_REPORT_HTML_MAX_HEATMAP);
		return 0;
	}
	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];
		const char **more;

		if (c->stage != stage || c->b >= r->nnodes || !(t = check_rail(r, c)))
			continue;
		for (k = 0; k < ntags && strcmp(tags[k], t); k++)
			;
		if (k < ntags)
			continue;
		more = realloc(tags, (ntags + 1) * sizeof(*tags));
		if (!more) {
			free(tags);
			return -ENOMEM;
		}
		tags = more;
		tags[ntags++] = t;
	}
	if (ntags < 2) {
		ln_buf_addf(out, "<h2>%s: node &times; node</h2>\n", ln_stage_name(stage));
		ret = heatmap(r, stage, NULL, out);
	}
	for (k = 0; ntags >= 2 && k < ntags && !ret; k++) {
		ln_buf_addf(out, "<h2>%s, %s%s: node &times; node</h2>\n", ln_stage_name(stage),
			    strcmp(tags[k], "cross-rail") ? "rail " : "", tags[k]);
		ret = heatmap(r, stage, tags[k], out);
	}
	free(tags);
	return ret;
}

static void num_cell(struct ln_buf *out, double v, const char *unit)
{
	if (isnan(v))
		ln_buf_addstr(out, "<td></td>");
	else
		ln_buf_addf(out, "<td>%.4g %s</td>", v, unit);
}

/* A table: its heading, its id and its columns' names, separated by '|'. */
struct table {
	const char *title, *id, *cols;
};

static const struct table stages_tab = {
	"Stages", "stages", "stage|status|passed|failed|skipped|not run|rounds|seconds|note"
};
static const struct table counters_tab = {
	"Port error counters", "counters",
	"stage|port|status|errors|max_errors|partners over / tested|counters"
};
static const struct table sizes_tab = {
	"Bus bandwidth by size", "sizes",
	"stage|subject|check|bytes|algbw GB/s|busbw GB/s|wrong|judged"
};
static const struct table failures_tab = {
	"Failing and retried checks", "failures",
	"stage|subject|check|status|measured|threshold|line rate|attempts|reason"
};

/* The table's heading, its opening tag and its header row. */
static void table_head(struct ln_buf *out, const struct table *t)
{
	const char *col = t->cols;
	size_t len;

	ln_buf_addf(out, "<h2>%s</h2>\n<table id=\"%s\"><tr>", t->title, t->id);
	for (;; col += len + 1) {
		len = strcspn(col, "|");
		ln_buf_addf(out, "<th>%.*s</th>", (int)len, col);
		if (!col[len])
			break;
	}
	ln_buf_addstr(out, "</tr>\n");
}

/* What each table that has rows only when some check does calls for each
 * such check (*n counts them): the head goes out before the first, so a
 * table with nothing to show is not written. */
static void table_row(struct ln_buf *out, size_t *n, const struct table *t)
{
	if (!(*n)++)
		table_head(out, t);
}

/* The ports whose counters rose, could not be read or failed, per
 * pairwise stage (a healthy port is only counted: 1,024 nodes x 8 rails
 * would be 8,192 rows of zeros); each row's title is the whole phrase. */
static void counters_table(const struct ln_results *r, struct ln_buf *out)
{
	struct ln_buf subj = LN_BUF_INIT, txt = LN_BUF_INIT;
	size_t i, n = 0, quiet = 0;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (!c->ctr)
			continue;
		table_row(out, &n, &counters_tab);
		if (c->ctr->errors == 0 && !c->ctr->unread && c->status == LN_ST_PASS) {
			quiet++;
			continue;
		}
		ln_buf_reset(&subj);
		ln_buf_reset(&txt);
		ln_results_subject_ports(r, c->a, c->pa, LN_NO_NODE, -1, &subj);
		ln_report_counters_text(c, &txt);
		ln_buf_addf(out, "<tr id=\"counters-%s-", ln_stage_name(c->stage));
		esc(out, subj.buf);
		ln_buf_addf(out, "\" title=\"");
		esc(out, c->reason ? c->reason : txt.buf);
		ln_buf_addf(out, "\"><td>%s</td><td>", ln_stage_name(c->stage));
		esc(out, subj.buf);
		ln_buf_addf(out, "</td><td class=\"%s\">%s</td>", ln_status_class(c->status),
			    ln_status_name(c->status));
		if (c->ctr->errors < 0)
			ln_buf_addstr(out, "<td>not read</td>");
		else
			ln_buf_addf(out, "<td>%lld</td>", c->ctr->errors);
		if (c->ctr->max_errors < 0)
			ln_buf_addstr(out, "<td>not judged</td>");
		else
			ln_buf_addf(out, "<td>%lld</td>", c->ctr->max_errors);
		ln_buf_addf(out, "<td>%zu / %zu</td><td>", c->ctr->partners_over, c->ctr->partners);
		esc(out, txt.buf);
		ln_buf_addstr(out, "</td></tr>\n");
	}
	if (n)
		ln_buf_addf(out, "</table>\n<p>%zu of %zu ports gained no error (not listed).</p>\n",
			    quiet, n);
	ln_buf_release(&subj);
	ln_buf_release(&txt);
}

/* Each size sweep (the nccl stage): a row per size, the judged one last. */
static void sizes_table(const struct ln_results *r, struct ln_buf *out)
{
	struct ln_buf subj = LN_BUF_INIT;
	size_t i, k, n = 0;

	for (i = 0; i < r->nchecks; i++) {
		const struct ln_check *c = &r->checks[i];

		if (!c->nsizes)
			continue;
		table_row(out, &n, &sizes_tab);
		ln_buf_reset(&subj);
		ln_results_subject_ports(r, c->a, c->pa, c->b, c->pb, &subj);
		for (k = 0; k < c->nsizes; k++) {
			const struct ln_size_bw *z = &c->sizes[k];

			ln_buf_addf(out, "<tr><td>%s</td><td>", ln_stage_name(c->stage));
			esc(out, subj.buf);
			ln_buf_addstr(out, "</td><td>");
			esc(out, c->name);
			ln_buf_addf(out, "</td><td>%llu</td><td>%.4g</td><td>%.4g</td><td>",
				    (unsigned long long)z->bytes, z->algbw, z->busbw);
			if (z->wrong < 0)
				ln_buf_addstr(out, "not checked");
			else
				ln_buf_addf(out, "%ld", z->wrong);
			ln_buf_addf(out, "</td><td>%s</td></tr>\n",
				    k + 1 == c->nsizes ? ln_status_name(c->status) : "");
		}
	}
	if (n)
		ln_buf_addstr(out, "</table>\n");
	ln_buf_release(&subj);
}

/* Each node's GPU x (GPU + NIC) PCIe matrix as the devices stage read
 * it, in nvidia-smi's layout. */
static void topo_sections(const struct ln_results *r, struct ln_buf *out)
{
	size_t i, n = 0;

	for (i = 0; r->topo && i < r->nnodes; i++) {
		if (!r->topo[i])
			continue;
		if (!n++)
			ln_buf_addstr(out, "<h2>GPU placement (PCIe distances, devices stage)</h2>\n");
		ln_buf_addstr(out, "<h3>");
		esc(out, r->nodes[i]);
		ln_buf_addstr(out, "</h3>\n<pre class=\"topo\" id=\"topo-");
		esc(out, r->nodes[i]);
		ln_buf_addstr(out, "\">");
		esc(out, r->topo[i]);
		ln_buf_addstr(out, "</pre>\n");
	}
}

int ln_report_html(const struct ln_results *r, struct ln_buf *out)
{
	struct ln_buf subj = LN_BUF_INIT;
	char when[64] = "";
	time_t t = (time_t)r->started;
	struct tm tm;
	size_t i;
	int s, code = ln_results_exit(r), ret = 0;

	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	ln_buf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			   "<title>llmnet validation: ");
	esc(out, r->cluster);
	ln_buf_addf(out, "</title><style>%s</style></head><body>\n<h1>llmnet validation of '",
		    css);
	esc(out, r->cluster);
	ln_buf_addf(out, "': <span id=\"result\" class=\"result-%s\">%s</span></h1>\n"
		    "<p>%zu nodes, started %s, %.1f s, exit code %d.</p>\n",
		    code ? "fail" : "pass", code ? "FAIL" : "PASS", r->nnodes, when, r->seconds,
		    code);
	table_head(out, &stages_tab);
	for (s = 0; s < LN_STAGE_COUNT; s++) {
		const struct ln_stage_summary *st = &r->stages[s];

		if (!st->listed)
			continue;
		ln_buf_addf(out, "<tr><td>%s</td><td class=\"%s\">%s</td><td>%zu</td><td>%zu</td>"
			    "<td>%zu</td><td>%zu</td><td>%zu</td><td>%.1f</td><td>",
			    ln_stage_name(s), ln_status_class(st->status), ln_status_name(st->status),
			    st->passed, st->failed, st->skipped, st->not_run, st->rounds,
			    st->seconds);
		esc(out, st->reason);
		ln_buf_addstr(out, "</td></tr>\n");
	}
	ln_buf_addstr(out, "</table>\n<h2>Verdicts</h2>\n");
	if (!r->nverdicts)
		ln_buf_addstr(out, "<p>No node or link is blamed.</p>\n");
	else
		ln_buf_addstr(out, "<ul id=\"verdicts\">\n");
	for (i = 0; i < r->nverdicts; i++) {
		const struct ln_verdict *v = &r->verdicts[i];

		ln_buf_reset(&subj);
		ln_results_subject_ports(r, v->a, v->pa, v->b, v->pb, &subj);
		ln_buf_addf(out, "<li class=\"verdict-%s %s\"><b>%s ", ln_verdict_kind_name(v->kind),
			    ln_verdict_severity(v), ln_verdict_title(v));
		esc(out, subj.buf);
		ln_buf_addf(out, "</b> (%s): ", ln_stage_name(v->stage));
		esc(out, v->reason);
		ln_buf_addstr(out, "</li>\n");
	}
	if (r->nverdicts)
		ln_buf_addstr(out, "</ul>\n");
	for (s = 0; s < LN_STAGE_COUNT && !ret; s++)
		if (ln_stage_pairwise(s) && r->stages[s].listed)
			ret = heatmaps(r, s, out);
	topo_sections(r, out);
	counters_table(r, out);
	sizes_table(r, out);
	table_head(out, &failures_tab);
	for (i = 0; i < r->nchecks && !ret; i++) {
		const struct ln_check *c = &r->checks[i];

		if (c->status == LN_ST_PASS && c->nattempts < 2 && !c->warning)
			continue;
		ln_buf_reset(&subj);
		ln_results_subject_ports(r, c->a, c->pa, c->b, c->pb, &subj);
		ln_buf_addf(out, "<tr><td>%s</td><td>", ln_stage_name(c->stage));
		esc(out, subj.buf);
		ln_buf_addstr(out, "</td><td>");
		esc(out, c->name);
		ln_buf_addf(out, "%s</td><td class=\"%s\">%s</td>", c->retest ? " (retest)" : "",
			    ln_status_class(c->status), ln_status_name(c->status));
		num_cell(out, c->value, c->unit);
		num_cell(out, c->threshold, c->unit);
		num_cell(out, c->line_rate, "Gb/s");
		ln_buf_addf(out, "<td>%zu</td><td>", c->nattempts);
		esc(out, c->reason);
		ln_buf_addstr(out, "</td></tr>\n");
	}
	ln_buf_addstr(out, "</table>\n</body></html>\n");
	ln_buf_release(&subj);
	return ret;
}
