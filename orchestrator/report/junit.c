/* SPDX-License-Identifier: MIT */
/*
 * JUnit XML for CI systems: a testsuite per listed stage, a testcase per
 * node check and per pair (classname llmnet.<stage>, name the node or the
 * pair). A skip is <skipped/>; a not-run check or stage is a <failure>,
 * since it must never read as green in a CI dashboard.
 */
#include <math.h>

#include "common/util.h"
#include "orchestrator/report/report.h"

/* The characters XML text and attributes need escaped, and their entities. */
static const struct {
	char c;
	const char *entity;
} xml_entities[] = {
	{ '&', "&amp;" }, { '<', "&lt;" }, { '>', "&gt;" }, { '"', "&quot;" }, { '\'', "&#39;" },
};

static const char *entity_of(char c)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(xml_entities); i++)
		if (xml_entities[i].c == c)
			return xml_entities[i].entity;
	return NULL;
}

int ln_report_escape_xml(struct ln_buf *out, const char *s)
{
	int r = 0;

	for (; s && *s && r == 0; s++) {
		unsigned char c = (unsigned char)*s;
		const char *entity = entity_of(*s);

		if (entity)
			r = ln_buf_addstr(out, entity);
		else
			r = ln_buf_addch(out, (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f ?
					 '?' : (char)c);
	}
	return r;
}

static void add_attempts(struct ln_buf *out, const struct ln_check *c)
{
	size_t i;

	for (i = 0; i < c->nattempts; i++) {
		const struct ln_attempt *at = &c->attempts[i];

		ln_buf_addf(out, "attempt %zu%s: %s%s", i + 1, at->retest ? " (retest)" : "",
			    at->ok ? "ok" : "failed", at->timed_out ? " (timed out)" : "");
		if (at->detail) {
			ln_buf_addstr(out, ": ");
			ln_report_escape_xml(out, at->detail);
		}
		if (at->command) {
			ln_buf_addstr(out, "\n  command: ");
			ln_report_escape_xml(out, at->command);
		}
		ln_buf_addch(out, '\n');
	}
}

/* One check as a testcase (name: a scratch buffer). */
static void add_testcase(const struct ln_results *r, const struct ln_check *c, int s,
			 struct ln_buf *name, struct ln_buf *out)
{
	double secs = 0;
	size_t k;

	for (k = 0; k < c->nattempts; k++)
		secs += c->attempts[k].seconds;
	ln_buf_reset(name);
	ln_results_subject_ports(r, c->a, c->pa, c->b, c->pb, name);
	if (c->name[0])
		ln_buf_addf(name, " %s", c->name);
	ln_buf_addf(out, "    <testcase classname=\"llmnet.%s\" name=\"",
		    ln_stage_name(s));
	ln_report_escape_xml(out, name->buf);
	ln_buf_addf(out, "\" time=\"%.3f\">\n", secs);
	if (c->status == LN_ST_FAIL || c->status == LN_ST_NOT_RUN) {
		ln_buf_addf(out, "      <failure type=\"%s\" message=\"",
			    c->status == LN_ST_FAIL ? "fail" : "not-run");
		if (c->status == LN_ST_NOT_RUN)
			ln_buf_addstr(out, "not run: ");
		ln_report_escape_xml(out, c->reason ? c->reason : "failed");
		ln_buf_addstr(out, "\">");
		ln_report_figures(out, c, "", "", "\n", 6);
		if (c->nsizes) {
			ln_buf_reset(name);
			ln_report_sizes_text(c, name);
			ln_report_escape_xml(out, name->buf);
			ln_buf_addch(out, '\n');
		}
		add_attempts(out, c);
		ln_buf_addstr(out, "</failure>\n");
	} else if (c->status == LN_ST_SKIPPED) {
		ln_buf_addstr(out, "      <skipped message=\"");
		ln_report_escape_xml(out, c->reason ? c->reason : "skipped");
		ln_buf_addstr(out, "\"/>\n");
	} else if (c->warning && c->reason && !c->ctr) {
		/* a pass that warns (a target open to NQN claims) says so */
		ln_buf_addstr(out, "      <system-out>warning: ");
		ln_report_escape_xml(out, c->reason);
		ln_buf_addstr(out, "\n</system-out>\n");
	} else if (c->ctr) {
		/* a port's counters are reported, passing or not */
		ln_buf_addstr(out, "      <system-out>");
		ln_buf_reset(name);
		ln_report_counters_text(c, name);
		if (c->reason)
			ln_buf_addf(name, "; %s", c->reason);
		ln_report_escape_xml(out, name->buf);
		ln_buf_addstr(out, "\n</system-out>\n");
	} else if (c->nattempts > 1 || c->nsizes ||
		   (c->stage == LN_STAGE_LATENCY && !isnan(c->lat.typical))) {
		/* a passing latency pair or sweep still says what it measured */
		ln_buf_addstr(out, "      <system-out>");
		if (c->stage == LN_STAGE_LATENCY) {
			ln_report_latency_text(c, out);
			ln_buf_addch(out, '\n');
		}
		if (c->nsizes) {
			ln_buf_reset(name);
			ln_report_sizes_text(c, name);
			ln_report_escape_xml(out, name->buf);
			ln_buf_addch(out, '\n');
		}
		if (c->nattempts > 1)
			add_attempts(out, c);
		ln_buf_addstr(out, "</system-out>\n");
	}
	ln_buf_addstr(out, "    </testcase>\n");
}

int ln_report_junit(const struct ln_results *r, struct ln_buf *out)
{
	struct ln_buf name = LN_BUF_INIT;
	size_t i, tests = 0, failures = 0;
	int s;

	for (s = 0; s < LN_STAGE_COUNT; s++) {
		const struct ln_stage_summary *st = &r->stages[s];

		if (!st->listed)
			continue;
		if (!st->ran) {
			tests++;
			failures += st->status != LN_ST_SKIPPED;
			continue;
		}
		tests += st->passed + st->failed + st->skipped + st->not_run;
		failures += st->failed + st->not_run;
	}
	ln_buf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"llmnet validate ");
	ln_report_escape_xml(out, r->cluster);
	ln_buf_addf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n", tests,
		    failures, r->seconds);
	for (s = 0; s < LN_STAGE_COUNT; s++) {
		const struct ln_stage_summary *st = &r->stages[s];

		if (!st->listed)
			continue;
		if (!st->ran) {
			ln_buf_addf(out, "  <testsuite name=\"%s\" tests=\"1\" failures=\"%d\" "
				    "skipped=\"%d\" time=\"0\">\n    <testcase classname=\"llmnet.%s\" "
				    "name=\"stage\" time=\"0\">\n      <%s message=\"",
				    ln_stage_name(s), st->status != LN_ST_SKIPPED,
				    st->status == LN_ST_SKIPPED, ln_stage_name(s),
				    st->status == LN_ST_SKIPPED ? "skipped" : "failure type=\"not-run\"");
			ln_buf_addstr(out, st->status == LN_ST_SKIPPED ? "skipped: " : "not run: ");
			ln_report_escape_xml(out, st->reason ? st->reason : "no reason given");
			ln_buf_addstr(out, "\"/>\n    </testcase>\n  </testsuite>\n");
			continue;
		}
		ln_buf_addf(out, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\" "
			    "skipped=\"%zu\" time=\"%.3f\">\n", ln_stage_name(s),
			    st->passed + st->failed + st->skipped + st->not_run,
			    st->failed + st->not_run, st->skipped, st->seconds);
		for (i = 0; i < r->nchecks; i++)
			if ((int)r->checks[i].stage == s)
				add_testcase(r, &r->checks[i], s, &name, out);
		ln_buf_addstr(out, "  </testsuite>\n");
	}
	ln_buf_addstr(out, "</testsuites>\n");
	ln_buf_release(&name);
	return 0;
}
