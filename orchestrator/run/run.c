/* SPDX-License-Identifier: MIT */
/*
 * The run record: its nodes, their sessions (opened on demand, kept or
 * closed between phases by the budget ln_run_init() works out) and the
 * run log every phase appends to; the notes it keeps for the user are
 * notes.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/escape.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/run/nodeset.h"
#include "orchestrator/run/run.h"
#include "orchestrator/run/state.h"
#include "orchestrator/transport/fanout.h"

/* File descriptors kept free for everything that is not a session. */
#define FD_RESERVE 128

const char *ln_node_state_name(enum ln_node_state st)
{
	switch (st) {
	case LN_NODE_PENDING: return "pending";
	case LN_NODE_OK: return "ok";
	case LN_NODE_UNREACHABLE: return "unreachable";
	case LN_NODE_REFUSED: return "refused";
	case LN_NODE_FAILED: return "failed";
	case LN_NODE_INTERRUPTED: return "interrupted";
	}
	return "?";
}

int ln_node_state_exit(enum ln_node_state st)
{
	switch (st) {
	case LN_NODE_OK: return LN_EXIT_OK;
	case LN_NODE_UNREACHABLE:
	case LN_NODE_REFUSED: return LN_EXIT_UNREACHABLE;
	case LN_NODE_FAILED: return LN_EXIT_AGENT;
	default: return LN_EXIT_FAILED;
	}
}

int ln_run_exit(const struct ln_run *r, int code)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		code = ln_exit_merge(code, ln_node_state_exit(r->nodes[i].state));
	if (ln_fanout_interrupted())
		code = ln_exit_merge(code, LN_EXIT_FAILED);
	return code;
}

enum ln_node_state ln_node_state_of(int code)
{
	if (code == -LN_EHOSTKEY || code == -LN_EAUTH)
		return LN_NODE_REFUSED;
	if (code == -LN_EUNREACH || code == -LN_ETIMEOUT)
		return LN_NODE_UNREACHABLE;
	return LN_NODE_FAILED;
}

/* Mark every node option names (names, ranges, @FILE: nodeset.h) by
 * setting the int at flag (an offset into struct ln_node_run); a name
 * that is not a node is a usage error. */
static int mark_named(struct ln_run *r, const char *option, char *const *names, size_t n,
		      size_t flag, struct ln_buf *err)
{
	unsigned char *mark = calloc(r->n ? r->n : 1, 1);
	size_t i;
	int rc;

	if (!mark)
		return -ENOMEM;
	rc = ln_nodeset_mark(r->spec, option, names, n, mark, err);
	for (i = 0; rc == 0 && i < r->n; i++)
		if (mark[i])
			*(int *)((char *)&r->nodes[i] + flag) = 1;
	free(mark);
	return rc;
}

/* Keep every session for the run, or close them after each phase. */
static int session_policy(struct ln_run *r, struct ln_buf *err)
{
	const char *pol = getenv("LLMNET_SESSIONS");
	struct rlimit rl;

	/* Each open session holds a socket (a jump host adds a pipe pair);
	 * keep them all for the run when the file limit allows. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
		r->keep_sessions = rl.rlim_cur == RLIM_INFINITY ||
				   (rlim_t)(r->n * (r->spec->ssh.jump_host ? 3 : 1) + FD_RESERVE) <=
					   rl.rlim_cur;
	}
	/* LLMNET_SESSIONS=per-phase forces the fallback policy, so both can
	 * be measured on the same cluster (bench/fanout). */
	if (pol && !strcmp(pol, "per-phase"))
		r->keep_sessions = 0;
	else if (pol && *pol && strcmp(pol, "run")) {
		ln_buf_addf(err, "LLMNET_SESSIONS must be 'run' or 'per-phase', not '%s'", pol);
		return -EINVAL;
	}
	return 0;
}

/* The run log, appended to across runs. A state folder open to others is
 * refused (the run with it); a log that cannot be opened (a planted link)
 * is a warning, and the run goes on without one. */
static int open_log(struct ln_run *r, struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	char *dir = ln_state_open_dir(err);
	int fd;

	if (!dir)
		return -EPERM;
	if (asprintf(&r->log_path, "%s/%s.log", dir, r->spec->cluster) < 0) {
		r->log_path = NULL;	/* asprintf leaves it undefined on failure */
		free(dir);
		return -ENOMEM;
	}
	fd = ln_state_open(r->log_path, O_WRONLY | O_APPEND | O_CREAT, &e);
	if (fd >= 0)
		r->log = fdopen(fd, "a");
	if (fd >= 0 && !r->log)
		close(fd);
	if (!r->log)
		ln_run_note(r, LN_LOG_WARN, "cannot open run log: %s", e.len ? e.buf : "out of memory");
	free(dir);
	ln_buf_release(&e);
	return 0;
}

int ln_run_init(struct ln_run *r, const struct ln_spec *spec, unsigned parallel,
		char *const *accept, size_t n_accept, char *const *limit, size_t n_limit,
		const char *command, struct ln_buf *err)
{
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->log_lock, NULL);
	r->spec = spec;
	r->n = spec->n_nodes;
	r->parallel = parallel ? parallel : (spec->ssh.parallel ? spec->ssh.parallel : 64);
	r->exit = LN_EXIT_OK;
	r->has_limit = n_limit > 0;
	r->nodes = calloc(r->n ? r->n : 1, sizeof(*r->nodes));
	if (!r->nodes) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < r->n; i++) {
		r->nodes[i].idx = i;
		r->nodes[i].spec = &spec->nodes[i];
		r->nodes[i].limited = n_limit ? 0 : 1;
		ln_buf_init(&r->nodes[i].reason, 4096);
		ln_buf_init(&r->nodes[i].skip, 4096);
		if (spec->nodes[i].n_rdma > 1) {
			r->nodes[i].nlanes = spec->nodes[i].n_rdma - 1;
			r->nodes[i].lanes = calloc(r->nodes[i].nlanes, sizeof(*r->nodes[i].lanes));
			if (!r->nodes[i].lanes) {
				rc = -ENOMEM;
				goto out;
			}
		}
	}
	rc = mark_named(r, "--accept-replaced", accept, n_accept,
			offsetof(struct ln_node_run, accept_replaced), err);
	if (rc == 0)
		rc = mark_named(r, "--limit", limit, n_limit, offsetof(struct ln_node_run, limited),
				err);
	if (rc == 0)
		rc = session_policy(r, err);
	if (rc == 0)
		rc = ln_agent_image_load(&r->img, err);
	if (rc == 0)
		rc = open_log(r, err);
	if (rc < 0)
		goto out;
	ln_run_log(r, "%s '%s' (%zu nodes, parallel %u, agent %.12s)", command, spec->path, r->n,
		   r->parallel, r->img.sha256);
out:
	/* A failed init leaves nothing to free; releasing again is harmless. */
	if (rc < 0)
		ln_run_release(r);
	return rc;
}

static void close_lanes(struct ln_node_run *nr)
{
	size_t k;

	for (k = 0; k < nr->nlanes; k++) {
		ln_ssh_close(nr->lanes[k]);
		nr->lanes[k] = NULL;
	}
}

void ln_run_release(struct ln_run *r)
{
	size_t i;

	for (i = 0; r->nodes && i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];

		close_lanes(nr);
		free(nr->lanes);
		ln_ssh_close(nr->s);
		json_object_put(nr->facts);
		json_object_put(nr->request);
		json_object_put(nr->answer);
		ln_buf_release_all(&nr->reason, &nr->skip);
	}
	ln_free_all(r->nodes, r->td_targets);
	ln_agent_image_release(&r->img);
	if (r->log)
		fclose(r->log);
	free(r->log_path);
	ln_secrets_free(r->secrets);
	ln_notes_release(&r->notes);
	pthread_mutex_destroy(&r->log_lock);
	memset(r, 0, sizeof(*r));
}

void ln_run_log(struct ln_run *r, const char *fmt, ...)
{
	char stamp[32];
	struct tm tm;
	time_t t = time(NULL);
	struct ln_buf e = LN_BUF_INIT;
	char *line = NULL;
	va_list ap;
	int n;

	if (!r->log)
		return;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	/* one entry, one line: what a node sent is escaped (escape.h) */
	if (n < 0 || ln_escape(&e, line, (size_t)n) < 0)
		ln_buf_addstr(&e, "(out of memory)");
	pthread_mutex_lock(&r->log_lock);
	fprintf(r->log, "%s [%ld] %s\n", stamp, (long)getpid(), e.buf);
	fflush(r->log);
	pthread_mutex_unlock(&r->log_lock);
	if (n >= 0)
		free(line);
	ln_buf_release(&e);
}

void ln_run_ssh_opts(const struct ln_run *r, const struct ln_node_run *nr, struct ln_ssh_opts *o,
		     char *jump, size_t jump_len)
{
	const struct ln_ssh_spec *ss = &r->spec->ssh;

	memset(o, 0, sizeof(*o));
	o->node = nr->spec->name;
	o->host = nr->spec->address;
	o->port = nr->spec->port;
	o->user = nr->spec->user;
	o->identity = ss->identity;
	o->known_hosts = ss->known_hosts;
	o->policy = ss->host_key_policy == LN_HOST_KEY_ACCEPT_NEW ? LN_HOSTKEY_ACCEPT_NEW :
								     LN_HOSTKEY_STRICT;
	o->accept_replaced = nr->accept_replaced;
	if (ss->jump_host) {
		snprintf(jump, jump_len, "%s@%s:%u", ss->jump_user ? ss->jump_user : o->user,
			 ss->jump_host, ss->jump_port ? (unsigned)ss->jump_port : 22u);
		o->jump = jump;
	}
	o->connect_timeout_ms = (int)ss->connect_timeout_ms;
	o->step_timeout_ms = (int)ss->timeout_ms;
	o->sudo = o->user && strcmp(o->user, "root") != 0;
}

int ln_run_session(struct ln_run *r, struct ln_node_run *nr, struct ln_buf *err)
{
	struct ln_ssh_opts o;
	struct ln_buf note = LN_BUF_INIT;
	char jump[600];
	int rc;

	if (nr->s)
		return 0;
	ln_run_ssh_opts(r, nr, &o, jump, sizeof(jump));
	rc = ln_ssh_connect(&o, &nr->s, &note, err);
	if (note.len) {
		ln_run_log(r, "%s", note.buf);
		ln_run_note(r, LN_LOG_WARN, "%s", note.buf);
	}
	ln_buf_release(&note);
	return rc;
}

int ln_run_lane(struct ln_run *r, struct ln_node_run *nr, unsigned lane, struct ln_session **s,
		struct ln_buf *err)
{
	struct ln_ssh_opts o;
	struct ln_buf note = LN_BUF_INIT;
	char jump[600];
	int rc;

	*s = NULL;
	if (lane == 0) {
		rc = ln_run_session(r, nr, err);
		*s = nr->s;
		return rc;
	}
	if (lane > nr->nlanes) {
		ln_buf_addf(err, "'%s' has no session lane %u (it has %zu RDMA ports)",
			    nr->spec->name, lane, nr->spec->n_rdma);
		return -EINVAL;
	}
	if (!nr->lanes[lane - 1]) {
		ln_run_ssh_opts(r, nr, &o, jump, sizeof(jump));
		rc = ln_ssh_connect(&o, &nr->lanes[lane - 1], &note, err);
		if (note.len)
			ln_run_log(r, "%s", note.buf);
		ln_buf_release(&note);
		if (rc < 0)
			return rc;
	}
	*s = nr->lanes[lane - 1];
	return 0;
}

void ln_run_node_failed(struct ln_node_run *nr, enum ln_node_state st, int code,
			const char *why, const char *phase, struct ln_buf *line)
{
	/* a node lost mid-run is named with the phase it was lost in */
	int timed_out = phase && (code == -LN_ETIMEOUT || code == -LN_EUNREACH);

	nr->state = st;
	nr->err_code = code;
	ln_buf_reset(&nr->reason);
	ln_buf_addf(&nr->reason, "%s%s%s%s", why, timed_out ? " (phase " : "",
		    timed_out ? phase : "", timed_out ? ")" : "");
	ln_buf_addf(line, "%-12s %s: %s", ln_node_state_name(st), nr->spec->name, nr->reason.buf);
}

void ln_run_phase_done(struct ln_run *r)
{
	size_t i;

	if (r->keep_sessions)
		return;
	for (i = 0; i < r->n; i++) {
		close_lanes(&r->nodes[i]);
		ln_ssh_close(r->nodes[i].s);
		r->nodes[i].s = NULL;
	}
}
