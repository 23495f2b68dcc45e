// SPDX-License-Identifier: MIT
/*
 * The session loop (see session.h). A reader thread owns stdin, so the end
 * of the session is seen while a request runs: the input ending alone is
 * the controller's half-close and the request finishes, but the input
 * ending with stdout's reader gone (the channel closed, the controller or
 * its connection dead) raises ln_agent_stopping, as SIGTERM does, and the
 * request stops before its next change. A malformed frame gets an error
 * frame and ends the session: after it the stream is out of step.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/answer.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/core/session.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/frame.h"
#include "common/json.h"
#include "common/log.h"
#include "common/signals.h"

#define MAX_ARGS 300

struct inbox {
	pthread_mutex_t m;
	pthread_cond_t cv;
	struct ln_buf frame;	/* the next request */
	int full;		/* frame holds a request not taken yet */
	int end;		/* 0: open; 1: the input ended; < 0: a framing error */
	struct ln_buf why;	/* the framing error */
	int busy;		/* a request runs */
};

static void on_term(int sig)
{
	(void)sig;
	ln_agent_stopping = 1;
}

static int read_stdin(void *ctx, void *p, size_t n, struct ln_buf *err)
{
	ssize_t r;

	(void)ctx;
	do
		r = read(STDIN_FILENO, p, n);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		ln_buf_addf(err, "cannot read the session: %s", strerror(errno));
		return -errno;
	}
	return (int)r;
}

/* 1 when nobody reads the answers any more (a pipe without its reader
 * polls POLLERR, a socket POLLHUP). */
static int peer_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL));
}

static void *reader(void *arg)
{
	struct inbox *ib = arg;
	struct ln_buf f, why = LN_BUF_INIT, tmp;
	int r;

	/* a request may carry secrets: every ln_buf a request frame passes
	 * through (f, ib->frame, the server's req and input) is secret; the
	 * copies json-c makes parsing it are freed unwiped (docs/hacking.md) */
	ln_buf_init_secret(&f, LN_FRAME_REQUEST_MAX);
	for (;;) {
		r = ln_frame_read(read_stdin, NULL, LN_FRAME_REQUEST_MAX, &f, &why);
		pthread_mutex_lock(&ib->m);
		if (r != 0)
			break;
		while (ib->full)
			pthread_cond_wait(&ib->cv, &ib->m);
		tmp = ib->frame;
		ib->frame = f;
		f = tmp;
		ib->full = 1;
		pthread_cond_broadcast(&ib->cv);
		pthread_mutex_unlock(&ib->m);
	}
	ib->end = r;
	ln_buf_addstr(&ib->why, why.buf);
	/* garbage in the middle of a request: the controller is not one */
	if (r < 0 && ib->busy)
		ln_agent_stopping = 1;
	pthread_cond_broadcast(&ib->cv);
	while (ib->busy && !ln_agent_stopping) {
		pthread_mutex_unlock(&ib->m);
		if (peer_gone())
			ln_agent_stopping = 1;
		else
			poll(NULL, 0, 100);
		pthread_mutex_lock(&ib->m);
	}
	pthread_mutex_unlock(&ib->m);
	ln_buf_release(&f);
	ln_buf_release(&why);
	return NULL;
}

/* The request's envelope into argv (argv[0] the verb) and a's input.
 * Returns 0, or the exit code of the error answer it captured. */
static int unpack(struct ln_agent *a, struct json_object *req, char **argv, int *argc,
		  struct ln_buf *input)
{
	static const char *const fields[] = { "protocol", "id", "verb", "args", "request",
					      "budget_ms", NULL };
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *args = NULL, *in = NULL;
	const char *verb = NULL;
	int64_t proto = LN_PROTO_VERSION, budget = 0;
	size_t i, n;
	int r;

	r = ln_json_check_keys(req, fields, "request envelope", &err);
	if (r == 0 && (r = ln_json_get_i64(req, "protocol", 0, &proto, &err)) == -ENOENT)
		r = 0;
	if (r == 0 && proto > LN_PROTO_VERSION) {
		ln_buf_addf(&err, "request speaks protocol %lld, this agent speaks %d",
			    (long long)proto, LN_PROTO_VERSION);
		r = ln_agent_fail("protocol", err.buf, LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	if (r == 0 && (r = ln_json_get_i64(req, "budget_ms", 0, &budget, &err)) == -ENOENT)
		r = 0;
	if (r == 0 && (budget < 0 || budget > LN_BUDGET_MAX_MS ||
		       (budget == 0 && json_object_object_get_ex(req, "budget_ms", NULL)))) {
		ln_buf_addf(&err, "request envelope: budget_ms must be 1-%ld milliseconds",
			    LN_BUDGET_MAX_MS);
		r = -LN_EREQUEST;
	}
	/* the budget counts from the request's reading; none: read-only only */
	if (r == 0 && budget > 0)
		ln_budget_request((long)budget);
	if (r == 0)
		r = ln_json_get_str(req, "verb", 1, &verb, &err);
	if (r == 0 && (r = ln_json_get_arr(req, "args", 0, &args, &err)) == -ENOENT)
		r = 0;
	if (r == 0 && (r = ln_json_get_obj(req, "request", 0, &in, &err)) == -ENOENT)
		r = 0;
	n = args ? json_object_array_length(args) : 0;
	if (r == 0 && n >= MAX_ARGS) {
		ln_buf_addf(&err, "request envelope: more than %d args", MAX_ARGS - 1);
		r = -LN_EREQUEST;
	}
	for (i = 0; r == 0 && i < n; i++) {
		struct json_object *v = json_object_array_get_idx(args, i);

		if (!json_object_is_type(v, json_type_string)) {
			ln_buf_addf(&err, "request envelope: args[%zu] is not a string", i);
			r = -LN_EREQUEST;
		}
		argv[i + 1] = (char *)json_object_get_string(v);
	}
	if (r) {
		r = ln_agent_fail("request", err.buf, LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	/* restore is the boot unit's alone: it may outlive any request */
	if (!strcmp(verb, LN_VERB_SESSION) || !strcmp(verb, LN_VERB_SEAL) ||
	    !strcmp(verb, LN_VERB_RESTORE)) {
		ln_buf_addf(&err, "'%s' is not a request verb", verb);
		r = ln_agent_fail("usage", err.buf, LN_AGENT_EXIT_USAGE);
		goto out;
	}
	argv[0] = (char *)verb;
	argv[n + 1] = NULL;
	*argc = (int)n + 1;
	a->has_input = in != NULL;
	if (in && ln_json_write(in, 0, input) < 0) {
		r = ln_agent_fail("request", "request: too large", LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	a->input = input->buf;
	a->input_len = input->len;
	r = 0;
out:
	ln_buf_release(&err);
	return r;
}

/* The request being served, for session_abort. */
static struct json_object *cur_id;
static struct ln_buf *cur_answer;
static int serving;

static int send_frame(const struct ln_buf *payload);

static void add_reply(struct ln_buf *reply, struct json_object *id, int rc,
		      const struct ln_buf *answer)
{
	ln_buf_addf(reply, "{\"protocol\":%d,\"id\":%s,\"exit\":%d,\"answer\":%s}\n",
		    LN_PROTO_VERSION,
		    id && json_object_is_type(id, json_type_int) ? json_object_get_string(id)
								   : "null",
		    rc, answer->len ? answer->buf : "null");
}

/* The failpoint's abort hook (ln_agent_on_abort): a request that must end
 * the process (its time budget ran out before a change) sends the answer
 * captured so far with exit code rc, so the controller reads why. Nothing
 * when no session request is being served. */
static void session_abort(int rc)
{
	struct ln_buf reply = LN_BUF_INIT;

	if (!serving)
		return;
	ln_agent_capture(NULL);
	add_reply(&reply, cur_id, rc, cur_answer);
	send_frame(&reply);
	ln_buf_release(&reply);
}

/* Run one request; reply receives the answer frame's payload. */
static void serve_one(struct ln_agent *a, ln_session_verb_fn run, const struct ln_buf *frame,
		      struct ln_buf *reply)
{
	struct ln_buf answer = LN_BUF_INIT, input = LN_BUF_INIT_SECRET, err = LN_BUF_INIT;
	struct json_object *req = NULL, *id = NULL;
	char *argv[MAX_ARGS + 1];
	int argc = 0, rc;

	a->has_input = 0;
	a->input = NULL;
	a->input_len = 0;
	a->changes = 0;	/* the failpoint counts per request, as per process before */
	ln_budget_request(0);	/* no budget but the request's own */
	ln_agent_capture(&answer);
	if (ln_json_parse(frame->buf, frame->len, &req, &err) < 0 ||
	    !json_object_is_type(req, json_type_object)) {
		struct ln_buf msg = LN_BUF_INIT;

		ln_buf_addf(&msg, "request: the frame is not a JSON object%s%s",
			    err.len ? ": " : "", err.buf);
		rc = ln_agent_fail("request", msg.buf, LN_AGENT_EXIT_REQUEST);
		ln_buf_release(&msg);
	} else {
		json_object_object_get_ex(req, "id", &id);
		rc = unpack(a, req, argv, &argc, &input);
		if (argc) {
			cur_id = id;
			cur_answer = &answer;
			serving = 1;
			rc = run(a, argc, argv);
			serving = 0;
		}
	}
	ln_agent_capture(NULL);
	add_reply(reply, id, rc, &answer);
	json_object_put(req);
	ln_buf_release_all(&answer, &input, &err);
}

/* The reader watches the peer only while a request runs. */
static void request_done(struct inbox *ib)
{
	pthread_mutex_lock(&ib->m);
	ib->busy = 0;
	pthread_mutex_unlock(&ib->m);
}

static int send_frame(const struct ln_buf *payload)
{
	struct ln_buf out = LN_BUF_INIT;
	int r;

	ln_buf_init(&out, 0);
	r = ln_frame_put(&out, payload->buf, payload->len);
	if (r == 0)
		r = ln_write_all(STDOUT_FILENO, out.buf, out.len);
	ln_buf_release(&out);
	return r;
}

int ln_session_serve(struct ln_agent *a, ln_session_verb_fn run)
{
	struct inbox ib = { .frame = LN_BUF_INIT_SECRET, .why = LN_BUF_INIT };
	struct ln_buf req = LN_BUF_INIT_SECRET, reply = LN_BUF_INIT, tmp;
	pthread_t th;
	int rc = LN_AGENT_EXIT_OK;

	ln_signals_catch(on_term, SIGTERM, SIGHUP);
	ln_agent_on_abort(session_abort);
	pthread_mutex_init(&ib.m, NULL);
	pthread_cond_init(&ib.cv, NULL);
	if (pthread_create(&th, NULL, reader, &ib) != 0)
		return ln_agent_fail("internal", "cannot start the session reader",
				     LN_AGENT_EXIT_INTERNAL);
	pthread_detach(th);
	for (;;) {
		pthread_mutex_lock(&ib.m);
		while (!ib.full && !ib.end && !ln_agent_stopping) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 200000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&ib.cv, &ib.m, &ts);
		}
		if (!ib.full || ln_agent_stopping) {
			if (ib.end < 0 && !ln_agent_stopping) {
				/* the framing error, answered once; the session ends */
				ln_buf_reset(&reply);
				ln_agent_capture(&req);
				rc = ln_agent_fail("frame", ib.why.buf, LN_AGENT_EXIT_REQUEST);
				ln_agent_capture(NULL);
				ln_buf_addf(&reply, "{\"protocol\":%d,\"id\":null,\"exit\":%d,\"answer\":%s}\n",
					    LN_PROTO_VERSION, rc, req.buf);
				send_frame(&reply);
			}
			/* a request not taken (the session stops) is wiped, under
			 * the mutex, as the reader swaps frames; full stays set, so
			 * the reader puts no other one there */
			ln_buf_release(&ib.frame);
			pthread_mutex_unlock(&ib.m);
			break;
		}
		tmp = req;
		req = ib.frame;
		ib.frame = tmp;
		ib.full = 0;
		ib.busy = 1;
		pthread_cond_broadcast(&ib.cv);
		pthread_mutex_unlock(&ib.m);

		ln_buf_reset(&reply);
		serve_one(a, run, &req, &reply);
		ln_buf_reset(&req);	/* wiped now, not when the reader next reuses it */
		request_done(&ib);
		if (ln_agent_stopping || send_frame(&reply) < 0)
			break;
	}
	if (ln_agent_stopping)
		ln_warn("session closed by its peer; stopping");
	/* the reader may still block on stdin: the process exit ends it */
	ln_buf_release(&req);
	ln_buf_release(&reply);
	return rc;
}
