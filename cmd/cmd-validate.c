/* SPDX-License-Identifier: MIT */
/*
 * llmnet validate SPEC: run the spec's validation stages on the cluster
 * and report. Nodes are reached through the controller's run (one SSH
 * session per node, the agent pushed when needed, facts gathered once);
 * every probe goes through the agent's bounded `run` verb. The recap goes
 * to stdout (JSON with -o json), progress to stderr, and the reports to
 * the files and URL asked for.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cmd/cmd.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/proto.h"
#include "orchestrator/facts.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/transport/push.h"
#include "orchestrator/report/report.h"
#include "orchestrator/transport/ssh.h"
#include "orchestrator/validate/stages.h"

static const char validate_usage[] =
	"llmnet validate SPEC [--stages LIST] [--limit NODES] [--parallel N]\n"
	"       [--accept-replaced NODES] [--attempts N] [--report FILE.json] [--junit FILE.xml]\n"
	"       [--html FILE.html] [--metrics FILE.prom] [--report-url URL] [--report-timeout S]\n"
	"runs the spec's validation stages (devices, rping, bandwidth, io, mpi, nccl) and names\n"
	"the bad nodes and links; exit 0 only when every listed stage passed";

struct vopts {
	const char *stages, *json, *junit, *html, *metrics, *url;
	long url_timeout_s, attempts;
};

/* Take validate's own options out of argv, leaving the shared ones for
 * ln_cmd_ctl_parse. Returns 0, or -1 on a usage error. */
static int take_own(int *argc, char **argv, struct vopts *v)
{
	static const char *const names[] = { "--stages", "--report", "--junit", "--html",
					     "--metrics", "--report-url", "--report-timeout",
					     "--attempts", NULL };
	int i = 1, k;

	memset(v, 0, sizeof(*v));
	v->url_timeout_s = 10;
	while (i < *argc) {
		const char *a = argv[i], *val = NULL;
		size_t len;

		for (k = 0; names[k]; k++) {
			len = strlen(names[k]);
			if (!strncmp(a, names[k], len) && (a[len] == '\0' || a[len] == '='))
				break;
		}
		if (!names[k]) {
			i++;
			continue;
		}
		len = strlen(names[k]);
		if (a[len] == '=') {
			val = a + len + 1;
			memmove(&argv[i], &argv[i + 1], (size_t)(*argc - i) * sizeof(*argv));
			*argc -= 1;
		} else if (i + 1 < *argc) {
			val = argv[i + 1];
			memmove(&argv[i], &argv[i + 2], (size_t)(*argc - i - 1) * sizeof(*argv));
			*argc -= 2;
		}
		if (!val || !*val) {
			ln_error("%s needs a value", names[k]);
			return -1;
		}
		switch (k) {
		case 0: v->stages = val; break;
		case 1: v->json = val; break;
		case 2: v->junit = val; break;
		case 3: v->html = val; break;
		case 4: v->metrics = val; break;
		case 5: v->url = val; break;
		case 6:
		case 7: {
			char *end;
			long n = strtol(val, &end, 10);

			if (*end || n < 1 || n > (k == 6 ? 600 : 8)) {
				ln_error("%s takes a number from 1 to %d", names[k], k == 6 ? 600 : 8);
				return -1;
			}
			if (k == 6)
				v->url_timeout_s = n;
			else
				v->attempts = n;
			break;
		}
		}
	}
	return 0;
}

/* ---- the ops table over the controller's run ---- */

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

/* A probe argument goes on the remote command line single-quoted; the
 * agent checks it again, but nothing unsafe even reaches the shell. */
static int quotable(const char *s)
{
	if (!*s || strlen(s) > 4096)
		return 0;
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7e || strchr("'\"\\`$;&|<>", *s))
			return 0;
	return 1;
}

static int ops_run(void *ctx, size_t node, const char *const *argv, int timeout_s,
		   struct ln_probe_result *out, struct ln_buf *err)
{
	struct ln_run *run = ctx;
	struct ln_node_run *nr = node_run(ctx, node);
	struct ln_buf cmd = LN_BUF_INIT, so = LN_BUF_INIT, se = LN_BUF_INIT, e = LN_BUF_INIT;
	struct json_object *ans = NULL, *v;
	int r, status = -1, i;
	const char *s;

	if (!nr)
		return -EINVAL;
	r = ln_run_session(run, nr, err);
	if (r < 0)
		return r;
	if (ln_ssh_is_sudo(nr->s))
		ln_buf_addstr(&cmd, "sudo -n ${LLMNET_AGENT_ROOT:+env "
				    "LLMNET_AGENT_ROOT=\"$LLMNET_AGENT_ROOT\"} ");
	ln_buf_addf(&cmd, "\"${LLMNET_AGENT_ROOT%%/}%s/%s\" run --timeout %d --max-output %u --",
		    LN_PROTO_REMOTE_DIR, LN_PROTO_AGENT_NAME, timeout_s, 4u << 20);
	for (i = 0; argv[i]; i++) {
		if (!quotable(argv[i])) {
			ln_buf_addf(err, "refusing to pass the argument '%.64s' of '%s' to '%s'",
				    argv[i], argv[0], nr->spec->name);
			r = -EINVAL;
			goto out;
		}
		ln_buf_addf(&cmd, " '%s'", argv[i]);
	}
	ln_buf_init(&so, 8u << 20);
	/* the agent's own bound fires first; ours only covers a stuck link */
	r = ln_ssh_exec(nr->s, cmd.buf, NULL, 0, (timeout_s + 30) * 1000, &so, &se, &status, err);
	if (r < 0)
		goto out;
	if (ln_json_parse(so.buf, so.len, &ans, &e) < 0 || !json_object_is_type(ans, json_type_object)) {
		ln_buf_rtrim(&se);
		ln_buf_addf(err, "the agent on '%s' gave no answer to 'run %s' (exit %d)%s%s",
			    nr->spec->name, argv[0], status, se.len ? ": " : "", se.buf);
		r = -LN_EPROTO;
		goto out;
	}
	if (json_object_object_get_ex(ans, "error", &v)) {
		struct json_object *m = NULL;

		json_object_object_get_ex(v, "message", &m);
		ln_buf_addf(err, "the agent on '%s' refused '%s': %s", nr->spec->name, argv[0],
			    m ? json_object_get_string(m) : "no reason given");
		r = -LN_EREQUEST;
		goto out;
	}
	out->exit_status = json_object_object_get_ex(ans, "exit_status", &v) &&
			   json_object_is_type(v, json_type_int) ? json_object_get_int(v) : -1;
	out->timed_out = json_object_object_get_ex(ans, "timed_out", &v) &&
			 json_object_get_boolean(v);
	out->seconds = json_object_object_get_ex(ans, "duration_ms", &v) ?
		       json_object_get_double(v) / 1000.0 : 0;
	s = json_object_object_get_ex(ans, "output", &v) ? json_object_get_string(v) : NULL;
	ln_buf_reset(&out->output);
	if (s)
		ln_buf_addstr(&out->output, s);
	ln_trace("probe", "%s: %s -> exit %d%s", nr->spec->name, argv[0], out->exit_status,
		 out->timed_out ? " (timed out)" : "");
	r = 0;
out:
	json_object_put(ans);
	ln_buf_release(&cmd);
	ln_buf_release(&so);
	ln_buf_release(&se);
	ln_buf_release(&e);
	return r;
}

static int ops_put(void *ctx, size_t node, const char *path, const void *data, size_t len,
		   struct ln_buf *err)
{
	struct ln_run *run = ctx;
	struct ln_node_run *nr = node_run(ctx, node);
	struct ln_buf cmd = LN_BUF_INIT, so = LN_BUF_INIT, se = LN_BUF_INIT;
	char stage[160], dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int r, status = -1, sudo;

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
	r = ln_ssh_exec(nr->s, cmd.buf, NULL, 0, 0, &so, &se, &status, err);
	if (r == 0 && status != 0) {
		ln_buf_rtrim(&se);
		ln_buf_addf(err, "cannot install '%s' on '%s' (exit %d): %s", path, nr->spec->name,
			    status, se.buf);
		r = -EIO;
	}
	ln_buf_release(&cmd);
	ln_buf_release(&so);
	ln_buf_release(&se);
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
	struct ln_buf cmd = LN_BUF_INIT, se = LN_BUF_INIT;
	int r, status = -1;

	if (!nr || path[0] != '/' || !ln_ssh_safe_word(path + 1))
		return -EINVAL;
	r = ln_run_session(run, nr, err);
	if (r < 0)
		return r;
	ln_buf_addf(&cmd, "%scat -- \"${LLMNET_AGENT_ROOT%%/}%s\"",
		    ln_ssh_is_sudo(nr->s) ? "sudo -n " : "", path);
	ln_buf_reset(data);
	r = ln_ssh_exec(nr->s, cmd.buf, NULL, 0, 0, data, &se, &status, err);
	if (r == 0 && status != 0) {
		ln_buf_rtrim(&se);
		ln_buf_addf(err, "cannot read '%s' on '%s' (exit %d): %s", path, nr->spec->name,
			    status, se.buf);
		r = -EIO;
	}
	ln_buf_release(&cmd);
	ln_buf_release(&se);
	return r;
}

static const struct ln_probe_ops transport_ops = { ops_facts, ops_run, ops_put, ops_get };

/* llmnet's probes: $LLMNET_PROBES, else probes/ next to the llmnet binary
 * (the build tree), else ../lib/llmnet/probes from it (an install). */
static char *find_probe(const char *name)
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

static void on_progress(void *ctx, const char *line)
{
	(void)ctx;
	ln_info("validate: %s", line);
}

static int save(const char *what, const char *path, const struct ln_buf *b)
{
	struct ln_buf err = LN_BUF_INIT;
	int r = ln_report_save(path, b, &err);

	if (r < 0)
		ln_error("cannot write the %s report: %s", what, err.buf);
	else
		ln_info("wrote the %s report to '%s'", what, path);
	ln_buf_release(&err);
	return r;
}

/*
 * Run the spec's stages over a run whose facts are gathered, print the
 * report and write the requested files. Shared by validate and by
 * apply --validate, which reuses the sessions apply opened.
 */
static int validate_on_run(struct ln_ctl_opts *o, struct ln_run *run, const struct vopts *v,
			   unsigned stages)
{
	struct ln_validate_opts vo;
	struct ln_results res;
	struct ln_buf err = LN_BUF_INIT, out = LN_BUF_INIT;
	unsigned char *limit = NULL;
	char *mpi_src = NULL, *nccl = NULL, *io = NULL;
	int code, r;
	size_t i;

	memset(&res, 0, sizeof(res));
	memset(&vo, 0, sizeof(vo));
	vo.stages = stages;
	if (o->n_limit) {
		limit = calloc(run->n, 1);
		if (!limit) {
			code = LN_EXIT_FAILED;
			goto out;
		}
		for (i = 0; i < run->n; i++)
			limit[i] = (unsigned char)run->nodes[i].limited;
		vo.limit = limit;
	}
	mpi_src = find_probe(LN_PROBE_MPI_SRC);
	nccl = find_probe(LN_PROBE_NCCL_SRC);
	io = find_probe("io_probe");
	vo.io_probe_path = io;
	vo.mpi_probe_source = mpi_src;
	vo.nccl_probe_source = nccl;
	vo.parallel = run->parallel;
	vo.attempts = (int)v->attempts;
	vo.server_delay_ms = -1;
	vo.retry_delay_ms = -1;
	vo.run_as_root = !o->spec->ssh.user || !strcmp(o->spec->ssh.user, "root");
	vo.progress = on_progress;
	r = ln_validate_run(o->spec, &transport_ops, run, &vo, &res, &err);
	if (r < 0) {
		ln_error("%s", err.buf);
		code = LN_EXIT_FAILED;
		goto out;
	}
	if (ln_cli.output == LN_OUT_JSON)
		ln_report_json(&res, 1, &out);
	else
		ln_report_text(&res, ln_cli.color, &out);
	fputs(out.buf, stdout);
	fflush(stdout);
	code = ln_results_exit(&res);
	for (i = 0; i < run->n; i++)
		code = ln_exit_merge(code, ln_node_state_exit(run->nodes[i].state));
	if (v->json) {
		ln_buf_reset(&out);
		if (ln_report_json(&res, 1, &out) < 0 || save("JSON", v->json, &out) < 0)
			code = ln_exit_merge(code, LN_EXIT_FAILED);
	}
	if (v->junit) {
		ln_buf_reset(&out);
		if (ln_report_junit(&res, &out) < 0 || save("JUnit", v->junit, &out) < 0)
			code = ln_exit_merge(code, LN_EXIT_FAILED);
	}
	if (v->html) {
		ln_buf_reset(&out);
		if (ln_report_html(&res, &out) < 0 || save("HTML", v->html, &out) < 0)
			code = ln_exit_merge(code, LN_EXIT_FAILED);
	}
	if (v->metrics) {
		ln_buf_reset(&out);
		if (ln_report_metrics(&res, &out) < 0 || save("metrics", v->metrics, &out) < 0)
			code = ln_exit_merge(code, LN_EXIT_FAILED);
	}
	if (v->url) {
		ln_buf_reset(&out);
		ln_buf_reset(&err);
		curl_global_init(CURL_GLOBAL_DEFAULT);
		if (ln_report_json(&res, 0, &out) < 0 ||
		    ln_report_post(v->url, out.buf, out.len, v->url_timeout_s * 1000, &err) < 0) {
			ln_error("%s", err.buf);
			code = ln_exit_merge(code, LN_EXIT_FAILED);
		}
		curl_global_cleanup();
	}
	if (ln_fanout_interrupted())
		code = ln_exit_merge(code, LN_EXIT_FAILED);
out:
	ln_results_release(&res);
	ln_buf_release(&err);
	ln_buf_release(&out);
	free(limit);
	free(mpi_src);
	free(nccl);
	free(io);
	return code;
}

int ln_cmd_validate_after_apply(struct ln_ctl_opts *o, struct ln_run *run)
{
	struct vopts v;
	int r;

	/* The facts apply started from predate its changes (no controllers,
	 * no mounts yet): validation judges the converged node, so read them
	 * again over the sessions apply kept open. */
	r = ln_facts_gather(run);
	if (r < 0) {
		ln_error("cannot read facts again after apply: %s", ln_strerror(r));
		return LN_EXIT_FAILED;
	}
	memset(&v, 0, sizeof(v));
	v.url_timeout_s = 10;
	return validate_on_run(o, run, &v, 0);
}

int cmd_validate(int argc, char **argv)
{
	struct ln_ctl_opts o;
	struct ln_run run;
	struct vopts v;
	struct ln_buf err = LN_BUF_INIT;
	unsigned stages = 0;
	int code, r;

	memset(&run, 0, sizeof(run));
	if (take_own(&argc, argv, &v) < 0)
		return ln_cmd_usage(validate_usage);
	r = ln_cmd_ctl_parse(argc, argv, LN_CTL_PARALLEL | LN_CTL_LIMIT | LN_CTL_ACCEPT,
			     validate_usage, &o);
	if (r)
		return r > 0 ? LN_EXIT_OK : ln_cmd_usage(validate_usage);
	if (v.stages && ln_validate_parse_stages(v.stages, &stages, &err) < 0) {
		ln_error("%s", err.buf);
		ln_cmd_ctl_release(&o);
		ln_buf_release(&err);
		return ln_cmd_usage(validate_usage);
	}
	if (v.url && strncmp(v.url, "http://", 7) && strncmp(v.url, "https://", 8)) {
		ln_error("--report-url takes an http:// or https:// URL");
		ln_cmd_ctl_release(&o);
		return ln_cmd_usage(validate_usage);
	}
	code = ln_cmd_ctl_start(&o, "validate", &run);
	if (code == LN_EXIT_OK)
		code = validate_on_run(&o, &run, &v, stages);
	ln_run_release(&run);
	ln_cmd_ctl_release(&o);
	ln_buf_release(&err);
	return code;
}
