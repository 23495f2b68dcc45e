/* SPDX-License-Identifier: MIT */
/*
 * The session's stream: one long-lived remote command (the agent's
 * `session`) on one channel, held until closed or until the session is.
 * Its stdin and stdout are byte streams for the caller's framing, each
 * read and write bounded by the caller's deadline; its stderr is kept,
 * bounded, for messages.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/error.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/transport/session.h"

/* stderr kept from a stream: enough for any message, the rest dropped */
#define STREAM_STDERR_CAP (64u * 1024)

int ln_ssh_stream_is_open(const struct ln_session *s)
{
	return s && s->stream;
}

int ln_ssh_stream_open(struct ln_session *s, const char *cmd, int timeout_ms, struct ln_buf *err)
{
	struct ln_stream *st;
	long long deadline;

	ln_ssh_stream_close(s, 0, NULL);
	if (timeout_ms <= 0)
		timeout_ms = s->step_timeout_ms;
	deadline = ln_now_ms() + timeout_ms;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ln_buf_init(&st->errout, STREAM_STDERR_CAP);
	ln_ssh_set_timeout(s->ssh, timeout_ms);
	if (ln_log_trace_enabled("ssh"))
		ln_trace("ssh", "'%s' stream: %s", s->node, cmd);
	st->ch = ssh_channel_new(s->ssh);
	if (!st->ch || ssh_channel_open_session(st->ch) != SSH_OK ||
	    ssh_channel_request_exec(st->ch, cmd) != SSH_OK) {
		ln_buf_addf(err, "cannot start the agent session on '%s': %s", s->node,
			    ssh_get_error(s->ssh));
		if (st->ch)
			ssh_channel_free(st->ch);
		free(st);
		ln_ssh_set_timeout(s->ssh, s->step_timeout_ms);
		return ln_now_ms() >= deadline ? -LN_ETIMEOUT : -LN_EUNREACH;
	}
	ln_ssh_set_timeout(s->ssh, s->step_timeout_ms);
	s->stream = st;
	return 0;
}

static int stream_timed_out(struct ln_session *s, const char *what, struct ln_buf *err)
{
	ln_buf_addf(err, "timed out on '%s' during %s", s->node, what);
	return -LN_ETIMEOUT;
}

int ln_ssh_stream_write(struct ln_session *s, const void *p, size_t n, long long deadline_ms,
			const char *what, struct ln_buf *err)
{
	const char *q = p;
	int w;

	while (n) {
		long long left = deadline_ms - ln_now_ms();

		if (left <= 0)
			return stream_timed_out(s, what, err);
		/* a write blocks while the remote window is full: bound it */
		ln_ssh_set_timeout(s->ssh, (int)left);
		w = ssh_channel_write(s->stream->ch, q, n > 65536 ? 65536 : (uint32_t)n);
		ln_ssh_set_timeout(s->ssh, s->step_timeout_ms);
		if (w <= 0) {
			if (ln_now_ms() >= deadline_ms)
				return stream_timed_out(s, what, err);
			ln_buf_addf(err, "connection to '%s' broke during %s: %s", s->node, what,
				    ssh_get_error(s->ssh));
			return -LN_EUNREACH;
		}
		q += w;
		n -= (size_t)w;
	}
	return 0;
}

int ln_ssh_stream_read(struct ln_session *s, void *p, size_t n, long long deadline_ms,
		       const char *what, struct ln_buf *err)
{
	struct ln_stream *st = s->stream;
	int r;

	if (n > INT32_MAX)
		n = INT32_MAX;
	for (;;) {
		long long left = deadline_ms - ln_now_ms();

		if (left <= 0)
			return stream_timed_out(s, what, err);
		r = ssh_channel_read_timeout(st->ch, p, (uint32_t)n, 0, left > 200 ? 200 : (int)left);
		if (r == SSH_ERROR || ln_ssh_drain(st->ch, 1, &st->errout, &st->overflow) < 0) {
			ln_buf_addf(err, "connection to '%s' broke during %s: %s", s->node, what,
				    ssh_get_error(s->ssh));
			return -LN_EUNREACH;
		}
		if (r > 0)
			return r;
		if (ssh_channel_is_eof(st->ch) || ssh_channel_is_closed(st->ch))
			return 0;
	}
}

int ln_ssh_stream_remote_ended(struct ln_session *s)
{
	return s->stream && ssh_is_connected(s->ssh) &&
	       (ssh_channel_is_eof(s->stream->ch) || ssh_channel_is_closed(s->stream->ch));
}

const char *ln_ssh_stream_stderr(struct ln_session *s)
{
	if (!s->stream)
		return "";
	ln_ssh_drain(s->stream->ch, 1, &s->stream->errout, &s->stream->overflow);
	ln_buf_rtrim(&s->stream->errout);
	return s->stream->errout.buf;
}

void ln_ssh_stream_close(struct ln_session *s, int abort, int *status)
{
	struct ln_stream *st = s ? s->stream : NULL;

	if (status)
		*status = -1;
	if (!st)
		return;
	s->stream = NULL;
	if (abort) {
		ssh_channel_request_send_signal(st->ch, "TERM");
	} else if (ssh_channel_is_open(st->ch)) {
		ssh_channel_send_eof(st->ch);
		if (status)
			*status = ssh_channel_get_exit_status(st->ch);
	}
	ssh_channel_close(st->ch);
	ssh_channel_free(st->ch);
	ln_buf_release(&st->errout);
	free(st);
}
