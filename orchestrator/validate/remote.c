/* SPDX-License-Identifier: MIT */
/*
 * Probe operations over the controller's run (the ln_probe_ops table the
 * validation runner calls): every probe goes through the agent's bounded
 * `run` verb, a request on the node's agent session; files are installed by upload, copy
 * and rename, and read back with cat. The controller's side of the
 * runner, kept out of cmd/ so that commands stay argv to library calls.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/proto.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/transport/answer.h"
#include "orchestrator/transport/push.h"
#include "orchestrator/transport/ssh.h"
#include "orchestrator/validate/remote.h"

static struct ln_node_run *node_run(void *ctx, size_t node)
{
	struct ln_run *run = ctx;

	return node < run->n ? &run->nodes[node] : NULL;
}

static int ops_facts(void *ctx, size_t node, struct json_object **out, struct ln_buf *err)
{
	struct ln_node_run *nr = node_run(ctx, node);

	if (!nr || nr->state != LN_NODE_OK || !nr->facts) {
		ln_buf_addf(err, "no facts from '%s': %s", nr ? nr->spec->name : "?",
			    nr && nr->reason.len ? nr->reason.buf :
			    nr ? ln_node_state_name(nr->state) : "unknown node");
		return -LN_EUNREACH;
	}
	*out = nr->facts;
	return 0;
}

/* `facts OPTION ITEM...` (one OPTION before each of the n items, at most
 * max) on node's session lane: the agent's answer, the caller's. */
static int facts_with(void *ctx, size_t node, unsigned lane, const char *option, size_t max,
		      const char *const *items, size_t n, struct json_object **out,
		      struct ln_buf *err)
{
	struct ln_node_run *nr = node_run(ctx, node);
	struct ln_session *s = NULL;
	const char **args = NULL;
	size_t i, k = 0;
	int r;

	if (!nr || n > max)
		return -EINVAL;
	r = ln_run_lane(ctx, nr, lane, &s, err);
	if (r < 0)
		return r;
	args = calloc(2 * n + 2, sizeof(*args));
	if (!args)
		return -ENOMEM;
	args[k++] = LN_VERB_FACTS;
	for (i = 0; i < n; i++) {
		args[k++] = option;
		args[k++] = items[i];
	}
	r = ln_agent_call(s, args, NULL, 0, out, NULL, err);
	free(args);
	return r;
}

static int ops_counters(void *ctx, size_t node, unsigned lane, const char *const *ports,
			size_t n, struct json_object **out, struct ln_buf *err)
{
	return facts_with(ctx, node, lane, "--counters", LN_FACTS_COUNTER_PORTS_MAX, ports, n,
			  out, err);
}

static int ops_discovery(void *ctx, size_t node, const char *const *places, size_t n,
			 struct json_object **out, struct ln_buf *err)
{
	return facts_with(ctx, node, 0, "--discovery", LN_FACTS_DISCOVERY_MAX, places, n, out,
			  err);
}

/* `facts --refused PLACE... --timeout S` on node's own session. */
static int ops_refused(void *ctx, size_t node, const char *const *places, size_t n,
		       int timeout_s, struct json_object **out, struct ln_buf *err)
{
	struct ln_node_run *nr = node_run(ctx, node);
	const char *args[2 * LN_FACTS_REFUSED_MAX + 4];
	struct ln_session *s = NULL;
	char tbuf[16];
	size_t i, k = 0;
	int r;

	if (!nr || !n || n > LN_FACTS_REFUSED_MAX)
		return -EINVAL;
	r = ln_run_lane(ctx, nr, 0, &s, err);
	if (r < 0)
		return r;
	snprintf(tbuf, sizeof(tbuf), "%d", timeout_s);
	args[k++] = LN_VERB_FACTS;
	for (i = 0; i < n; i++) {
		args[k++] = "--refused";
		args[k++] = places[i];
	}
	args[k++] = "--timeout";
	args[k++] = tbuf;
	args[k] = NULL;
	return ln_agent_call(s, args, NULL, 0, out, NULL, err);
}

/* The agent's own limits on a probe's arguments (it checks them again). */
#define MAX_PROBE_ARGS 256

/* A probe argument travels in the session's JSON, no shell between; the
 * agent refuses the same characters, but nothing unsafe leaves here. A
 * space is one argument's (scontrol's Reason=, common/slurm.h). */
static int quotable(const char *s)
{
	if (!*s || strlen(s) > 4096)
		return 0;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || strchr("'\"\\`$;&|<>", *s))
			return 0;
	return 1;
}

/* The agent's run verb; env: its --env NAME=VALUE list, or NULL. */
static int run_verb(void *ctx, size_t node, unsigned lane, const char *const *argv,
		    const char *sha256, const char *const *env, int timeout_s,
		    struct ln_probe_result *out, struct ln_buf *err)
{
	struct ln_run *run = ctx;
	struct ln_node_run *nr = node_run(ctx, node);
	struct ln_session *ls = NULL;
	struct json_object *ans = NULL, *kept = NULL, *v;
	const char *args[MAX_PROBE_ARGS + 12 + 2 * LN_RUN_ENV_MAX];
	char tbuf[16], mbuf[16];
	int r, status = -1, i, k = 0;
	const char *s;

	if (!nr)
		return -EINVAL;
	r = ln_run_lane(run, nr, lane, &ls, err);
	if (r < 0)
		return r;
	snprintf(tbuf, sizeof(tbuf), "%d", timeout_s);
	snprintf(mbuf, sizeof(mbuf), "%u", LN_ANSWER_RUN_OUTPUT_MAX);
	args[k++] = LN_VERB_RUN;
	args[k++] = "--timeout";
	args[k++] = tbuf;
	args[k++] = "--max-output";
	args[k++] = mbuf;
	/* the agent lets the io probe write only to this cluster's own */
	args[k++] = "--cluster";
	args[k++] = run->spec->cluster;
	if (sha256) {
		if (strlen(sha256) != 64 || strspn(sha256, "0123456789abcdef") != 64) {
			ln_buf_addf(err, "refusing to pass the hash '%.64s' to '%s'", sha256,
				    nr->spec->name);
			return -EINVAL;
		}
		args[k++] = "--sha256";
		args[k++] = sha256;
	}
	for (i = 0; env && env[i]; i++) {
		if (!quotable(env[i]) || i >= LN_RUN_ENV_MAX) {
			ln_buf_addf(err, "refusing to pass the variable '%.64s' to '%s'", env[i],
				    nr->spec->name);
			return -EINVAL;
		}
		args[k++] = "--env";
		args[k++] = env[i];
	}
	args[k++] = "--";
	for (i = 0; argv[i]; i++) {
		if (!quotable(argv[i]) || i >= MAX_PROBE_ARGS) {
			ln_buf_addf(err, "refusing to pass the argument '%.64s' of '%s' to '%s'",
				    argv[i], argv[0], nr->spec->name);
			return -EINVAL;
		}
		args[k++] = argv[i];
	}
	args[k] = NULL;
	/* the agent's own bound fires first; ours only covers a stuck link */
	r = ln_agent_call(ls, args, NULL, (timeout_s + 30) * 1000, &ans, &status, err);
	if (r < 0)
		goto out;
	/* untrusted: only the known fields, each of its type and range, and
	 * the output bounded and printable (answer.h), reach the verdicts */
	kept = ln_answer_known_run(ans);
	if (!kept) {
		ln_buf_addf(err, "agent on '%s' sent no run answer", nr->spec->name);
		r = -LN_EPROTO;
		goto out;
	}
	out->exit_status = json_object_object_get_ex(kept, "exit_status", &v) && v ?
			   json_object_get_int(v) : -1;
	out->timed_out = json_object_object_get_ex(kept, "timed_out", &v) &&
			 json_object_get_boolean(v);
	out->seconds = json_object_object_get_ex(kept, "duration_ms", &v) && v ?
		       (double)json_object_get_int64(v) / 1000.0 : 0;
	s = json_object_object_get_ex(kept, "output", &v) && v ? json_object_get_string(v) : NULL;
	ln_buf_reset(&out->output);
	if (s)
		ln_buf_add(&out->output, s, (size_t)json_object_get_string_len(v));
	ln_trace("probe", "%s: %s -> exit %d%s", nr->spec->name, argv[0], out->exit_status,
		 out->timed_out ? " (timed out)" : "");
	r = 0;
out:
	json_object_put(kept);
	json_object_put(ans);
	return r;
}

static int ops_run(void *ctx, size_t node, unsigned lane, const char *const *argv,
		   const char *sha256, int timeout_s, struct ln_probe_result *out,
		   struct ln_buf *err)
{
	return run_verb(ctx, node, lane, argv, sha256, NULL, timeout_s, out, err);
}

static int ops_run_env(void *ctx, size_t node, const char *const *argv, const char *const *env,
		       int timeout_s, struct ln_probe_result *out, struct ln_buf *err)
{
	return run_verb(ctx, node, 0, argv, NULL, env, timeout_s, out, err);
}

/* Run cmd, a command on the file path, over nr's session, its stdout into
 * out; a non-zero exit is -EIO: "cannot <what> 'path' on 'node'". */
static int exec_on_file(struct ln_node_run *nr, const char *cmd, const char *what,
			const char *path, struct ln_buf *out, struct ln_buf *err)
{
	struct ln_buf se = LN_BUF_INIT;
	int r, status = -1;

	r = ln_ssh_exec(nr->s, cmd, NULL, 0, 0, out, &se, &status, err);
	if (r == 0 && status != 0) {
		ln_buf_rtrim(&se);
		ln_buf_addf(err, "cannot %s '%s' on '%s' (exit %d): %s", what, path, nr->spec->name,
			    status, se.buf);
		r = -EIO;
	}
	ln_buf_release(&se);
	return r;
}

static int ops_put(void *ctx, size_t node, const char *path, const void *data, size_t len,
		   struct ln_buf *err)
{
	struct ln_run *run = ctx;
	struct ln_node_run *nr = node_run(ctx, node);
	struct ln_buf cmd = LN_BUF_INIT, so = LN_BUF_INIT;
	char stage[160], dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int r, sudo;

	if (!nr || !slash || slash == path || !ln_ssh_safe_word(path + 1) ||
	    (size_t)(slash - path) >= sizeof(dir))
		return -EINVAL;
	r = ln_run_session(run, nr, err);
	if (r < 0)
		return r;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	snprintf(stage, sizeof(stage), ".llmnet-probe.upload.%ld.%s.%08lx", (long)getpid(),
		 nr->spec->name, (unsigned long)random());
	r = ln_ssh_put(nr->s, stage, data, len, 0600, err);
	if (r < 0)
		return r;
	sudo = ln_ssh_is_sudo(nr->s);
	/* copy under a temporary name, then rename: a half-written probe is
	 * never run */
	ln_buf_addf(&cmd,
		    "%sumask 022 && mkdir -p \"${LLMNET_AGENT_ROOT%%/}%s\" && cp -- \"$HOME/%s\" "
		    "\"${LLMNET_AGENT_ROOT%%/}%s.new\" && chmod 0755 \"${LLMNET_AGENT_ROOT%%/}%s.new\""
		    " && mv -f -- \"${LLMNET_AGENT_ROOT%%/}%s.new\" \"${LLMNET_AGENT_ROOT%%/}%s\"; "
		    "r=$?; rm -f -- \"$HOME/%s\"; exit $r%s",
		    sudo ? "sudo -n env ${LLMNET_AGENT_ROOT:+LLMNET_AGENT_ROOT=\"$LLMNET_AGENT_ROOT\"} "
			   "HOME=\"$HOME\" sh -c '" : "",
		    dir, stage, path, path, path, path, stage, sudo ? "'" : "");
	r = exec_on_file(nr, cmd.buf, "install", path, &so, err);
	ln_buf_release(&cmd);
	ln_buf_release(&so);
	return r;
}

/* Read back a file llmnet installed (the MPI probe, to copy it from the
 * launcher and to check each copy): cat over the session, bounded by the
 * step timeout and by data's cap. */
static int ops_get(void *ctx, size_t node, const char *path, struct ln_buf *data,
		   struct ln_buf *err)
{
	struct ln_run *run = ctx;
	struct ln_node_run *nr = node_run(ctx, node);
	struct ln_buf cmd = LN_BUF_INIT;
	int r;

	if (!nr || path[0] != '/' || !ln_ssh_safe_word(path + 1))
		return -EINVAL;
	r = ln_run_session(run, nr, err);
	if (r < 0)
		return r;
	ln_buf_addf(&cmd, "%scat -- \"${LLMNET_AGENT_ROOT%%/}%s\"",
		    ln_ssh_is_sudo(nr->s) ? "sudo -n " : "", path);
	ln_buf_reset(data);
	r = exec_on_file(nr, cmd.buf, "read", path, data, err);
	ln_buf_release(&cmd);
	return r;
}

const struct ln_probe_ops ln_validate_remote_ops = { ops_facts, ops_run, ops_put, ops_get,
						     ops_counters, ops_discovery,
						     ops_refused, ops_run_env };

/* $LLMNET_PROBES first: a test or a packager points at its own probes. */
char *ln_validate_find_probe(const char *name)
{
	char self[PATH_MAX], *slash, *path = NULL;
	const char *env = getenv("LLMNET_PROBES");
	ssize_t n;
	int k;

	for (k = 0; k < 3; k++) {
		free(path);
		path = NULL;
		if (k == 0) {
			if (!env || asprintf(&path, "%s/%s", env, name) < 0)
				continue;
		} else {
			n = readlink("/proc/self/exe", self, sizeof(self) - 1);
			if (n <= 0)
				return NULL;
			self[n] = '\0';
			slash = strrchr(self, '/');
			if (!slash)
				return NULL;
			*slash = '\0';
			if (asprintf(&path, k == 1 ? "%s/probes/%s" : "%s/../lib/llmnet/probes/%s",
				     self, name) < 0)
				continue;
		}
		if (!access(path, R_OK))
			return path;
	}
	free(path);
	return NULL;
}
