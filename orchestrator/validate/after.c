/* SPDX-License-Identifier: MIT */
/*
 * The after-validate actions' table (after.h documents its rows): the one
 * place a validation's verdicts lead to something beyond its reports.
 */
#include "common/error.h"
#include "common/util.h"
#include "orchestrator/report/report.h"
#include "orchestrator/validate/after.h"
#include "orchestrator/validate/slurm.h"

static int webhook_wanted(const struct ln_after_opts *o)
{
	return o->url != NULL;
}

/* The compact JSON report, POSTed (webhook.c). */
static int webhook_act(struct ln_results *res, const struct ln_after_opts *o,
		       struct ln_buf *err)
{
	struct ln_buf body = LN_BUF_INIT;
	int r = ln_report_json(res, 0, &body);

	if (r == 0)
		r = ln_report_post(o->url, o->auth, body.buf, body.len, o->url_timeout_s * 1000,
				   err);
	ln_buf_release(&body);
	return r;
}

/* When an action runs: on the results, before the recap and reports
 * are rendered (so they show what it did), or after the report files. */
enum after_when { ON_RESULTS, AFTER_REPORTS };

static const struct {
	const char *name;
	enum after_when when;
	int (*wanted)(const struct ln_after_opts *o);
	int (*act)(struct ln_results *res, const struct ln_after_opts *o, struct ln_buf *err);
} actions[] = {
	{ "slurm", ON_RESULTS, ln_slurm_wanted, ln_slurm_act },
	{ "webhook", AFTER_REPORTS, webhook_wanted, webhook_act },
};

static int run_actions(struct ln_results *res, const struct ln_after_opts *o,
		       enum after_when when, struct ln_notes *notes)
{
	struct ln_buf err = LN_BUF_INIT;
	int code = LN_EXIT_OK;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(actions); i++) {
		if (actions[i].when != when || !actions[i].wanted(o))
			continue;
		ln_buf_reset(&err);
		if (actions[i].act(res, o, &err) < 0) {
			/* an action says why; one that could not (out of
			 * memory) is still named */
			if (err.len)
				ln_notes_add(notes, LN_LOG_ERROR, "%s", err.buf);
			else
				ln_notes_add(notes, LN_LOG_ERROR, "the %s action failed",
					     actions[i].name);
			code = LN_EXIT_FAILED;
		}
	}
	ln_buf_release(&err);
	return code;
}

int ln_validate_after_results(struct ln_results *res, const struct ln_after_opts *o,
			      struct ln_notes *notes)
{
	/* the recap and reports come after: they state the exit code with it */
	res->after_exit = run_actions(res, o, ON_RESULTS, notes);
	return res->after_exit;
}

int ln_validate_after(struct ln_results *res, const struct ln_after_opts *o,
		      struct ln_notes *notes)
{
	return run_actions(res, o, AFTER_REPORTS, notes);
}
