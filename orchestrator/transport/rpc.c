/* SPDX-License-Identifier: MIT */
/*
 * The one function every agent call goes through: the request's envelope
 * framed out on the node's agent session (started on first use), the
 * answer's frame read back within the call's bound, and the answer
 * checked to be the protocol's JSON (its version, its error code) before
 * anyone reads it; and the agent's command line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "common/frame.h"
#include "common/json.h"
#include "common/util.h"
#include "orchestrator/transport/answer.h"
#include "orchestrator/transport/rpc.h"

int ln_agent_budget_ms(int step_ms)
{
	int margin = step_ms / 5;

	if (margin < 250)
		margin = 250;
	if (margin > 5000)
		margin = 5000;
	return step_ms - margin > 1 ? step_ms - margin : 1;
}

int ln_agent_command(int sudo, const char *const *args, struct ln_buf *cmd)
{
	size_t i;

	if (sudo)
		/* sudo resets the environment; hand the root on explicitly. */
		ln_buf_addstr(cmd, "sudo -n ${LLMNET_AGENT_ROOT:+env LLMNET_AGENT_ROOT=\"$LLMNET_AGENT_ROOT\"} ");
	ln_buf_addstr(cmd, LN_AGENT_PATH_EXPR);
	for (i = 0; args[i]; i++) {
		if (!ln_ssh_safe_word(args[i]) && !(args[i][0] == '-' && args[i][1] == '-' &&
						   ln_ssh_safe_word(args[i] + 2)))
			return -EINVAL;
		ln_buf_addch(cmd, ' ');
		ln_buf_addstr(cmd, args[i]);
	}
	return 0;
}

static const char *agent_error_message(struct json_object *answer, const char **code)
{
	struct json_object *e = NULL, *v = NULL;

	*code = NULL;
	if (!json_object_object_get_ex(answer, "error", &e) || !json_object_is_type(e, json_type_object))
		return NULL;
	if (json_object_object_get_ex(e, "code", &v))
		*code = json_object_get_string(v);
	if (json_object_object_get_ex(e, "message", &v))
		return json_object_get_string(v);
	return "error without a message";
}

struct reader {
	struct ln_session *s;
	long long deadline;
	const char *what;
};

static int read_stream(void *ctx, void *p, size_t n, struct ln_buf *err)
{
	struct reader *rd = ctx;

	return ln_ssh_stream_read(rd->s, p, n, rd->deadline, rd->what, err);
}

/* An answer frame over the verb's own limit, far below the frame cap:
 * its payload is not read, so the stream is out of step and closed. */
static int oversized(struct ln_session *s, const struct ln_answer_limits *lim, const char *why,
		     struct ln_buf *err)
{
	unsigned long long len;

	if (sscanf(why, "oversized frame: %llu", &len) != 1)
		len = 0;
	ln_buf_addf(err, "agent on '%s' sent an answer of %llu bytes over the %s limit of %zu",
		    ln_ssh_node(s), len, lim->name, lim->bytes);
	ln_ssh_stream_close(s, 1, NULL);
	return -LN_EPROTO;
}

/* One request on the node's agent session (opened on first use): the
 * envelope's frame out, the answer's frame back. *payload gets the
 * answer envelope; the stream is closed on any failure, so the next call
 * starts a fresh agent. */
static int exchange(struct ln_session *s, const char *const *args, struct json_object *in,
		    int timeout_ms, const struct ln_answer_limits *lim, struct ln_buf *payload,
		    struct ln_buf *err)
{
	static const char *const session_args[] = { LN_VERB_SESSION, NULL };
	static long long next_id;
	/* the request may carry DH-HMAC-CHAP secrets and TLS PSKs: body and
	 * frame are secret buffers, wiped as they grow and when released;
	 * json-c's printbuf (ln_json_write) and libssh's channel buffers keep
	 * copies that are freed unwiped, a known limit (docs/hacking.md) */
	struct ln_buf cmd = LN_BUF_INIT, body = LN_BUF_INIT_SECRET, frame = LN_BUF_INIT_SECRET,
		      e = LN_BUF_INIT;
	struct json_object *env = json_object_new_object(), *av = json_object_new_array();
	struct reader rd = { s, 0, NULL };
	char what[96];
	size_t i;
	int r, status;

	if (timeout_ms <= 0)
		timeout_ms = ln_ssh_step_timeout_ms(s);
	rd.deadline = ln_now_ms() + timeout_ms;
	snprintf(what, sizeof(what), "agent '%s'", args[0]);
	rd.what = what;
	ln_json_add_i64(env, "protocol", LN_PROTO_VERSION);
	ln_json_add_i64(env, "id", __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED));
	ln_json_add_str(env, "verb", args[0]);
	/* the agent measures it from reading the request (agent-protocol.md) */
	ln_json_add_i64(env, "budget_ms", ln_agent_budget_ms(timeout_ms));
	for (i = 1; args[i]; i++)
		json_object_array_add(av, json_object_new_string(args[i]));
	ln_json_add(env, "args", av);
	if (in)
		ln_json_add(env, "request", json_object_get(in));
	r = ln_json_write(env, 0, &body);
	if (r == 0)	/* the header's digits and newline: one allocation */
		r = ln_buf_grow(&frame, body.len + 24);
	if (r == 0)
		r = ln_frame_put(&frame, body.buf, body.len);
	if (r < 0)
		goto out;
	if (!ln_ssh_stream_is_open(s)) {
		r = ln_agent_command(ln_ssh_is_sudo(s), session_args, &cmd);
		if (r == 0)
			r = ln_ssh_stream_open(s, cmd.buf, timeout_ms, err);
		if (r < 0)
			goto out;
	}
	r = ln_ssh_stream_write(s, frame.buf, frame.len, rd.deadline, what, &e);
	/* a command that exits at once (no agent there) may close the channel
	 * before the request is written: that is its answer, not a broken link */
	if (r == -LN_EUNREACH && ln_ssh_stream_remote_ended(s)) {
		ln_buf_reset(&e);
		r = 1;
	}
	if (r == 0)
		r = ln_frame_read(read_stream, &rd, lim->bytes, payload, &e);
	if (r == 0)
		goto out;
	if (r == -EMSGSIZE) {
		r = oversized(s, lim, e.buf, err);
		goto out;
	}
	if (r == -LN_ETIMEOUT || r == -LN_EUNREACH) {
		/* the agent is signalled and its session closed: it stops */
		if (r == -LN_ETIMEOUT)
			ln_buf_addf(err, "timed out after %d.%03ds on '%s' running agent '%s'",
				    timeout_ms / 1000, timeout_ms % 1000, ln_ssh_node(s), args[0]);
		else
			ln_buf_addf(err, "%s", e.buf);
		ln_ssh_stream_close(s, 1, NULL);
		goto out;
	}
	if (r == 1 || r == -ENODATA) {
		/* the agent ended the session: gone, crashed, or not there */
		ln_buf_addf(&e, "%s", ln_ssh_stream_stderr(s));
		ln_ssh_stream_close(s, 0, &status);
		if (status == 127 || status == 126) {
			ln_buf_addf(err, "no runnable agent on '%s'", ln_ssh_node(s));
			r = -ENOENT;
		} else {
			ln_buf_addf(err, "agent on '%s' ended its session during '%s' (exit %d)%s%s",
				    ln_ssh_node(s), args[0], status, e.len ? ": " : "", e.buf);
			r = -LN_EPROTO;
		}
		goto out;
	}
	/* not a frame: an agent from before the session, or a broken one */
	ln_buf_addf(err, "agent on '%s' does not speak the session protocol (%s)%s%s",
		    ln_ssh_node(s), e.buf, *ln_ssh_stream_stderr(s) ? ": " : "",
		    ln_ssh_stream_stderr(s));
	ln_ssh_stream_close(s, 1, NULL);
	r = -LN_EPROTO;
out:
	json_object_put(env);
	ln_buf_release(&cmd);
	ln_buf_release_all(&body, &frame, &e);	/* body and frame wiped */
	return r;
}

int ln_agent_call(struct ln_session *s, const char *const *args, struct json_object *in,
		  int timeout_ms, struct json_object **answer, int *exit_status,
		  struct ln_buf *err)
{
	struct ln_buf payload = LN_BUF_INIT, e = LN_BUF_INIT;
	const struct ln_answer_limits *lim = ln_answer_limits_for(args);
	struct json_object *env = NULL, *ans = NULL;
	const char *msg, *code;
	int64_t proto = 0, status = -1;
	int r;

	*answer = NULL;
	if (exit_status)
		*exit_status = -1;
	ln_buf_init(&payload, lim->bytes);
	r = exchange(s, args, in, timeout_ms, lim, &payload, err);
	if (r < 0)
		goto out;
	/* bounded before json-c builds it: a node over a limit fails alone */
	r = ln_answer_parse(lim, payload.buf, payload.len, &env, &e);
	if (r == -EMSGSIZE) {
		ln_buf_addf(err, "agent on '%s' sent an %s", ln_ssh_node(s), e.buf);
		r = -LN_EPROTO;
		goto out;
	}
	if (r < 0 ||
	    ln_json_get_i64(env, "exit", 1, &status, &e) < 0 ||
	    !json_object_object_get_ex(env, "answer", &ans) ||
	    !json_object_is_type(ans, json_type_object)) {
		ln_buf_addf(err, "agent on '%s' answered '%s' with no JSON answer: %s",
			    ln_ssh_node(s), args[0], e.len ? e.buf : "no 'answer' object");
		ln_ssh_stream_close(s, 1, NULL);
		r = -LN_EPROTO;
		goto out;
	}
	if (exit_status)
		*exit_status = (int)status;
	if (ln_json_get_i64(ans, "protocol", 1, &proto, &e) < 0) {
		ln_buf_addf(err, "agent on '%s' answered without a protocol version", ln_ssh_node(s));
		r = -LN_EPROTO;
		goto out;
	}
	msg = agent_error_message(ans, &code);
	if (msg) {
		ln_buf_addf(err, "agent on '%s' refused '%s': %s", ln_ssh_node(s), args[0], msg);
		r = code && !strcmp(code, "locked") ? -LN_ELOCKED :
		    code && !strcmp(code, "timeout") ? -LN_ETIMEOUT :
		    code && (!strcmp(code, "protocol") || !strcmp(code, "frame")) ? -LN_EPROTO :
		    code && !strcmp(code, LN_PROTO_CODE_MISSING) ? -LN_EMISSING :
		    -LN_EREQUEST;
		/* after a frame error, or a budget that ran out before a change,
		 * the agent has ended the session */
		if (code && (!strcmp(code, "frame") ||
			     (!strcmp(code, "timeout") && status == LN_AGENT_EXIT_TIMEOUT)))
			ln_ssh_stream_close(s, 1, NULL);
		goto out;
	}
	if (proto != LN_PROTO_VERSION) {
		ln_buf_addf(err, "agent on '%s' speaks protocol %lld, this llmnet speaks %d",
			    ln_ssh_node(s), (long long)proto, LN_PROTO_VERSION);
		r = -LN_EPROTO;
		goto out;
	}
	if (status != 0 && status != 1) {
		ln_buf_addf(err, "agent on '%s' exited %lld on '%s'%s%s", ln_ssh_node(s),
			    (long long)status, args[0], *ln_ssh_stream_stderr(s) ? ": " : "",
			    ln_ssh_stream_stderr(s));
		r = -LN_EPROTO;
		goto out;
	}
	*answer = json_object_get(ans);
	r = 0;
out:
	json_object_put(env);
	ln_buf_release_all(&payload, &e);
	return r;
}
