/* SPDX-License-Identifier: MIT */
/*
 * Agent push (compare by SHA-256, upload only on difference, install by
 * rename) and the one function every agent call goes through, which checks
 * that the answer is the protocol's JSON before anyone reads it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/error.h"
#include "common/fileio.h"
#include "common/frame.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/transport/push.h"

/* Where the agent lives, relative to the node's root; quoted for the shell. */
#define AGENT_DIR_EXPR "\"${LLMNET_AGENT_ROOT%/}" LN_PROTO_REMOTE_DIR "\""
#define AGENT_PATH_EXPR "\"${LLMNET_AGENT_ROOT%/}" LN_PROTO_REMOTE_DIR "/" LN_PROTO_AGENT_NAME "\""
/* The same, for use inside printf formats. */
#define AGENT_DIR_FMT "\"${LLMNET_AGENT_ROOT%%/}" LN_PROTO_REMOTE_DIR "\""
#define AGENT_PATH_FMT "\"${LLMNET_AGENT_ROOT%%/}" LN_PROTO_REMOTE_DIR "/" LN_PROTO_AGENT_NAME "\""

void ln_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
	for (i = 0; i < mdlen && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
}

static int try_load(struct ln_agent_image *img, const char *path, struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r;

	if (access(path, R_OK) < 0)
		return -ENOENT;
	r = ln_file_read(path, &img->data, &e);
	if (r < 0) {
		ln_buf_addf(err, "%s", e.buf);
		ln_buf_release(&e);
		return r;
	}
	img->path = strdup(path);
	if (!img->path)
		return -ENOMEM;
	ln_sha256_hex(img->data.buf, img->data.len, img->sha256);
	return 0;
}

int ln_agent_image_load(struct ln_agent_image *img, struct ln_buf *err)
{
	char self[PATH_MAX], cand[PATH_MAX + 64];
	const char *env = getenv("LLMNET_AGENT");
	ssize_t n;
	char *slash;
	int r;

	memset(img, 0, sizeof(*img));
	ln_buf_init(&img->data, 0);
	if (env && *env) {
		r = try_load(img, env, err);
		if (r == -ENOENT)
			ln_buf_addf(err, "cannot read the agent named by LLMNET_AGENT: '%s'", env);
		return r;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		n = 0;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(cand, sizeof(cand), "%s/llmnet-agent", self);
	r = try_load(img, cand, err);
	if (r != -ENOENT)
		return r;
	snprintf(cand, sizeof(cand), "%s/../lib/llmnet/llmnet-agent", self);
	r = try_load(img, cand, err);
	if (r != -ENOENT)
		return r;
	ln_buf_addf(err, "cannot find llmnet-agent next to '%s' or in ../lib/llmnet (set LLMNET_AGENT)",
		    self);
	return -ENOENT;
}

void ln_agent_image_release(struct ln_agent_image *img)
{
	free(img->path);
	img->path = NULL;
	ln_buf_release(&img->data);
}

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
	ln_buf_addstr(cmd, AGENT_PATH_EXPR);
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

/* One request on the node's agent session (opened on first use): the
 * envelope's frame out, the answer's frame back. *payload gets the
 * answer envelope; the stream is closed on any failure, so the next call
 * starts a fresh agent. */
static int exchange(struct ln_session *s, const char *const *args, struct json_object *in,
		    int timeout_ms, struct ln_buf *payload, struct ln_buf *err)
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
		r = ln_frame_read(read_stream, &rd, LN_FRAME_ANSWER_MAX, payload, &e);
	if (r == 0)
		goto out;
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
	struct json_object *env = NULL, *ans = NULL;
	const char *msg, *code;
	int64_t proto = 0, status = -1;
	int r;

	*answer = NULL;
	if (exit_status)
		*exit_status = -1;
	ln_buf_init(&payload, LN_FRAME_ANSWER_MAX);
	r = exchange(s, args, in, timeout_ms, &payload, err);
	if (r < 0)
		goto out;
	if (ln_json_parse(payload.buf, payload.len, &env, &e) < 0 ||
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

/* 1 when the node's agent is img's build and speaks our protocol. */
static int agent_matches(struct ln_session *s, const struct ln_agent_image *img,
			 struct ln_buf *why)
{
	static const char *const args[] = { LN_VERB_VERSION, NULL };
	struct json_object *ans = NULL;
	struct ln_buf e = LN_BUF_INIT;
	const char *sha = NULL;
	int r, status;

	r = ln_agent_call(s, args, NULL, 0, &ans, &status, &e);
	if (r == -LN_ETIMEOUT || r == -LN_EUNREACH) {
		ln_buf_addf(why, "%s", e.buf);
		ln_buf_release(&e);
		return r;
	}
	if (r < 0) {
		/* absent, older protocol, or unreadable answer: upgrade it */
		ln_buf_addf(why, "%s", e.buf);
		r = 0;
		goto out;
	}
	if (ln_json_get_str(ans, "sha256", 0, &sha, &e) < 0 || !sha) {
		ln_buf_addstr(why, "the node's agent does not report its sha256");
		r = 0;
		goto out;
	}
	if (strcmp(sha, img->sha256)) {
		ln_buf_addf(why, "the node's agent is %.12s, ours is %.12s", sha, img->sha256);
		r = 0;
		goto out;
	}
	r = 1;
out:
	json_object_put(ans);
	ln_buf_release(&e);
	return r;
}

static int install(struct ln_session *s, const struct ln_agent_image *img, struct ln_buf *err)
{
	struct ln_buf cmd = LN_BUF_INIT, out = LN_BUF_INIT, errout = LN_BUF_INIT;
	char stage[160];
	int r, status = -1;

	/* A relative SFTP path lands in the login user's home, which is
	 * private to that user; the name is unique per run and node. */
	snprintf(stage, sizeof(stage), ".llmnet-agent.upload.%ld.%s.%08lx", (long)getpid(),
		 ln_ssh_node(s), (unsigned long)random());
	if (!ln_ssh_safe_word(stage)) {
		ln_buf_addf(err, "cannot name a staging file for '%s'", ln_ssh_node(s));
		return -EINVAL;
	}
	r = ln_ssh_put(s, stage, img->data.buf, img->data.len, 0600, err);
	if (r < 0)
		return r;
	/* Copy into the root-only directory under a temporary name, then
	 * rename over the old agent: a half-written agent is never run. */
	/* The new agent then seals itself: it checks its own SHA-256 against
	 * ours (a corrupt upload fails here) and writes the sidecar that
	 * spares `version` hashing it again. */
	ln_buf_addf(&cmd,
		    "%sumask 077 && mkdir -p " AGENT_DIR_FMT " && chmod 0700 " AGENT_DIR_FMT
		    " && cp -- \"$HOME/%s\" " AGENT_DIR_FMT "/.%s.new && chmod 0700 " AGENT_DIR_FMT
		    "/.%s.new && mv -f -- " AGENT_DIR_FMT "/.%s.new " AGENT_PATH_FMT " && "
		    AGENT_PATH_FMT " " LN_VERB_SEAL " %s; r=$?; rm -f -- \"$HOME/%s\"; exit $r%s",
		    ln_ssh_is_sudo(s) ? "sudo -n env ${LLMNET_AGENT_ROOT:+LLMNET_AGENT_ROOT=\"$LLMNET_AGENT_ROOT\"} HOME=\"$HOME\" sh -c '" : "",
		    stage, LN_PROTO_AGENT_NAME, LN_PROTO_AGENT_NAME, LN_PROTO_AGENT_NAME, img->sha256,
		    stage, ln_ssh_is_sudo(s) ? "'" : "");
	r = ln_ssh_exec(s, cmd.buf, NULL, 0, 0, &out, &errout, &status, err);
	if (r < 0)
		goto out;
	if (status != 0) {
		ln_buf_rtrim(&errout);
		ln_buf_addf(err, "cannot install the agent on '%s' (exit %d): %s", ln_ssh_node(s),
			    status, errout.buf);
		r = -EIO;
		goto out;
	}
	r = 0;
out:
	ln_buf_release_all(&cmd, &out, &errout);
	return r;
}

int ln_agent_ensure(struct ln_session *s, const struct ln_agent_image *img, int *pushed,
		    struct ln_buf *err)
{
	struct ln_buf why = LN_BUF_INIT;
	int r;

	*pushed = 0;
	r = agent_matches(s, img, &why);
	if (r < 0) {
		ln_buf_addf(err, "%s", why.buf);
		goto out;
	}
	if (r == 1) {
		r = 0;
		goto out;
	}
	ln_verbose("pushing agent to '%s': %s", ln_ssh_node(s), why.buf);
	/* the old agent's session ends before its binary is replaced */
	ln_ssh_stream_close(s, 0, NULL);
	r = install(s, img, err);
	if (r < 0)
		goto out;
	*pushed = 1;
	ln_buf_reset(&why);
	r = agent_matches(s, img, &why);
	if (r < 0) {
		ln_buf_addf(err, "%s", why.buf);
		goto out;
	}
	if (r == 0) {
		ln_buf_addf(err, "agent pushed to '%s' does not answer as expected: %s",
			    ln_ssh_node(s), why.buf);
		r = -LN_EPROTO;
		goto out;
	}
	r = 0;
out:
	ln_buf_release(&why);
	return r;
}
