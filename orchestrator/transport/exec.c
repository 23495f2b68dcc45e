/* SPDX-License-Identifier: MIT */
/*
 * Bounded execution over a session: the step bound on every blocking
 * libssh call, draining a channel without waiting, and one remote command
 * run with its stdin, its stdout and stderr collected (each within its
 * buffer's cap) and its exit status, ended when its bound fires.
 *
 * libssh 0.10.6: ssh_channel_read_timeout() returns 0 both on timeout and
 * on EOF, so EOF is told apart with ssh_channel_is_eof(); blocking calls
 * (channel open, exec request, exit status) are bounded by the session's
 * SSH_OPTIONS_TIMEOUT, which is set to the step's bound before each step.
 */
#include <errno.h>
#include <stdint.h>

#include "common/error.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/transport/session.h"

int ln_ssh_set_timeout(ssh_session ssh, int ms)
{
	long sec = ms / 1000, usec = (long)(ms % 1000) * 1000;

	if (ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT, &sec) < 0 ||
	    ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT_USEC, &usec) < 0)
		return -LN_EPROTO;
	return 0;
}

int ln_ssh_drain(ssh_channel ch, int is_stderr, struct ln_buf *b, int *overflow)
{
	char tmp[16384];
	int n;

	for (;;) {
		n = ssh_channel_read_nonblocking(ch, tmp, sizeof(tmp), is_stderr);
		if (n == SSH_ERROR)
			return -LN_EUNREACH;
		if (n <= 0)
			return 0;
		if (ln_buf_add(b, tmp, (size_t)n) < 0)
			*overflow = 1;
	}
}

int ln_ssh_exec(struct ln_session *s, const char *cmd, const void *in, size_t inlen,
		int timeout_ms, struct ln_buf *out, struct ln_buf *errout, int *status,
		struct ln_buf *err)
{
	ssh_channel ch = NULL;
	long long deadline;
	const char *p = in;
	int r, n, overflow = 0;
	char tmp[16384];

	*status = -1;
	if (timeout_ms <= 0)
		timeout_ms = s->step_timeout_ms;
	deadline = ln_now_ms() + timeout_ms;
	ln_ssh_set_timeout(s->ssh, timeout_ms);
	if (ln_log_trace_enabled("ssh"))
		ln_trace("ssh", "'%s' exec (%zu bytes in): %s", s->node, inlen, cmd);

	ch = ssh_channel_new(s->ssh);
	if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, cmd) != SSH_OK) {
		ln_buf_addf(err, "cannot run a command on '%s': %s", s->node, ssh_get_error(s->ssh));
		r = ln_now_ms() >= deadline ? -LN_ETIMEOUT : -LN_EUNREACH;
		goto out;
	}
	while (inlen) {
		long long left = deadline - ln_now_ms();

		/* a write blocks while the remote window is full (a command that
		 * reads nothing): bound each by what is left of the step */
		if (left <= 0 || ln_ssh_set_timeout(s->ssh, (int)left) < 0) {
			ln_buf_addf(err, "timed out after %d.%03ds on '%s' sending input to '%s'",
				    timeout_ms / 1000, timeout_ms % 1000, s->node, cmd);
			r = -LN_ETIMEOUT;
			goto out;
		}
		n = ssh_channel_write(ch, p, inlen > 65536 ? 65536 : (uint32_t)inlen);
		if (n <= 0) {
			ln_buf_addf(err, "cannot send input to '%s': %s", s->node, ssh_get_error(s->ssh));
			r = ln_now_ms() >= deadline ? -LN_ETIMEOUT : -LN_EUNREACH;
			goto out;
		}
		p += n;
		inlen -= (size_t)n;
	}
	ssh_channel_send_eof(ch);

	for (;;) {
		long long left = deadline - ln_now_ms();

		if (left <= 0) {
			r = -LN_ETIMEOUT;
			ln_buf_addf(err, "timed out after %d.%03ds on '%s' running '%s'",
				    timeout_ms / 1000, timeout_ms % 1000, s->node, cmd);
			/* Ask the remote side to stop, then close the channel (out:).
			 * sshd drops a signal request for a root login without
			 * privilege separation; the closed channel still reaches the
			 * agent, which stops when its stdout loses its reader. */
			ssh_channel_request_send_signal(ch, "TERM");
			goto out;
		}
		n = ssh_channel_read_timeout(ch, tmp, sizeof(tmp), 0, left > 200 ? 200 : (int)left);
		if (n == SSH_ERROR) {
			ln_buf_addf(err, "connection to '%s' broke while running '%s': %s", s->node, cmd,
				    ssh_get_error(s->ssh));
			r = -LN_EUNREACH;
			goto out;
		}
		if (n > 0 && ln_buf_add(out, tmp, (size_t)n) < 0)
			overflow = 1;
		if (ln_ssh_drain(ch, 1, errout, &overflow) < 0) {
			ln_buf_addf(err, "connection to '%s' broke while running '%s'", s->node, cmd);
			r = -LN_EUNREACH;
			goto out;
		}
		if (n <= 0 && (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch)))
			break;
	}
	/* stdout has ended; anything left on stderr comes before the status. */
	ln_ssh_drain(ch, 1, errout, &overflow);
	*status = ssh_channel_get_exit_status(ch);
	if (overflow) {
		ln_buf_addf(err, "output of '%s' on '%s' passed its limit", cmd, s->node);
		r = -E2BIG;
		goto out;
	}
	if (ln_log_trace_enabled("ssh"))
		ln_trace("ssh", "'%s' exit %d, %zu bytes out, %zu bytes err", s->node, *status,
			 out->len, errout->len);
	r = 0;
out:
	if (ch) {
		ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	ln_ssh_set_timeout(s->ssh, s->step_timeout_ms);
	return r;
}
