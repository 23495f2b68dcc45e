/* SPDX-License-Identifier: MIT */
/*
 * The request's time budget. The controller gives every request a relative
 * budget in milliseconds (--budget-ms), derived from its own step timeout
 * less a margin for the transfer; the agent measures it on its own
 * monotonic clock from its start (node clocks drift, so never an absolute
 * time). Every wait (the node lock, a namespace's block device, a child
 * process) is bounded by what is left of it, and every change checks it
 * first (ln_agent_change), so nothing is committed after it ran out.
 *
 * The request is also cancelled, before its budget runs out, when its
 * caller goes away: SIGTERM, SIGHUP or SIGINT (a signal request over ssh,
 * a hang-up), SIGPIPE, or stdout's reader gone (the channel was closed).
 * A one-shot agent serves one request, so the budget is process-wide; a
 * session (session.h) restarts it for each request with ln_budget_request.
 */
#ifndef LN_AGENT_BUDGET_H
#define LN_AGENT_BUDGET_H

/* The largest budget a request may carry: one day. */
#define LN_BUDGET_MAX_MS 86400000L

/* Start the clock for a budget of ms milliseconds and watch for the
 * caller going away (signal handlers; stdout when it is a pipe or socket). */
void ln_budget_start(long ms);
/* A session's request: start the clock for ms milliseconds from now, or
 * clear the budget when ms is 0 (a read-only request without one). The
 * session watches its caller itself, so no signal handler is set here. */
void ln_budget_request(long ms);
/* 1 once a budget was started. */
int ln_budget_active(void);
/* The budget given, in milliseconds. */
long ln_budget_ms(void);
/* Milliseconds left; 0 once it ran out or the request was cancelled;
 * LN_BUDGET_MAX_MS when no budget was given (read-only verbs). */
long ln_budget_left_ms(void);
/* 1 once the request was cancelled (a signal, the caller gone), whatever
 * the budget's clock says. */
int ln_budget_cancelled(void);
/* Why nothing more may be done, once ln_budget_left_ms() is 0: "time
 * budget of N ms ran out" or "the request was cancelled (...)". */
const char *ln_budget_why(void);
/* Tests only (LLMNET_CLOCK_STEP_MS): each change moves the budget's clock
 * on by this many milliseconds, so a test can end a budget at a chosen
 * change without racing the real clock. */
void ln_budget_advance(long ms);

#endif
