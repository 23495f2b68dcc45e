// SPDX-License-Identifier: MIT
/*
 * The bounded runner. Probes such as rping and perftest have no connect
 * timeout and a server with no client waits forever, so every child runs
 * in its own process group under a deadline: SIGTERM to the whole group
 * when it passes, SIGKILL a second later. Output (stdout and stderr on one
 * pipe, so their order is kept) is captured up to a cap; the rest is read
 * and dropped so the child never blocks on a full pipe.
 *
 * The `run` verb adds the allow-list: a bare probe name, resolved only in
 * fixed system directories and the agent's own directory, never $PATH,
 * with every argument checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agents/agent/agent.h"
#include "agents/agent/exec.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"

void ln_exec_result_release(struct ln_exec_result *res)
{
	ln_buf_release(&res->output);
}

int ln_exec_bounded(const char *const argv[], unsigned timeout_s, size_t max_output,
		   struct ln_exec_result *res, struct ln_buf *err)
{
	long start, deadline, kill_at = 0, grace_end = 0;
	int pfd[2], status = 0, r = 0, eof = 0, reaped = 0, killed = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	ln_buf_init(&res->output, max_output + 1);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot run '%s': %s", argv[0], strerror(errno));
		return r;
	}
	start = ln_now_ms();
	deadline = start + (long)timeout_s * 1000L;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot run '%s': %s", argv[0], strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return r;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(pfd[1], STDOUT_FILENO);
		dup2(pfd[1], STDERR_FILENO);
		signal(SIGPIPE, SIG_DFL);
		execv(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "cannot execute '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	for (;;) {
		long now = ln_now_ms(), wait_ms = 100;
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };

		/* a closed session stops the child as its bound would */
		if (!reaped && !res->timed_out && (now >= deadline || ln_agent_stopping)) {
			res->timed_out = 1;
			kill(-pid, SIGTERM);
			kill_at = now + 1000;
		}
		if (kill_at && now >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
			killed = 1;
		}
		if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
			reaped = 1;
			/* A grandchild may still hold the pipe: give it a short
			 * grace, then kill the group and stop reading. */
			grace_end = now + 2000;
		}
		if (reaped && (eof || killed))
			break;
		if (reaped && now >= grace_end) {
			kill(-pid, SIGKILL);
			break;
		}
		if (eof) {
			poll(NULL, 0, 20);
			continue;
		}
		if (poll(&p, 1, (int)wait_ms) > 0) {
			char chunk[8192];
			ssize_t n = read(pfd[0], chunk, sizeof(chunk));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				eof = 1;
				continue;
			}
			res->output_bytes += (size_t)n;
			if (res->output.len < max_output) {
				size_t room = max_output - res->output.len;

				ln_buf_add(&res->output, chunk, (size_t)n < room ? (size_t)n : room);
			}
			if (res->output_bytes > max_output)
				res->truncated = 1;
		}
	}
	close(pfd[0]);
	res->duration_ms = ln_now_ms() - start;
	if (WIFEXITED(status)) {
		res->exited = 1;
		res->exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
	}
	return 0;
}

/* ---- the `run` verb ---- */

static const char *const probes[] = {
	"rping", "ib_send_bw", "ib_write_bw", "ib_read_bw", "ib_atomic_bw",
	"ib_send_lat", "ib_write_lat", "ib_read_lat", "ib_atomic_lat", "mpirun",
	LN_PROBE_MPI, LN_PROBE_NCCL, LN_PROBE_IO, "mpicc", NULL
};

const char *const *ln_exec_probes(void)
{
	return probes;
}

static int allowed(const char *name)
{
	const char *const *p;

	for (p = probes; *p; p++)
		if (!strcmp(*p, name))
			return 1;
	return 0;
}

int ln_exec_check_arg(const char *s)
{
	size_t n = strlen(s);
	const char *p;

	if (n > 4096)
		return 0;
	for (p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < ' ' || c >= 0x7f || strchr(";&|`$<>\\\"'", c))
			return 0;
	}
	return 1;
}

/* Find name in the fixed directories or beside the agent; out gets the path. */
static int resolve(const char *name, char *out, size_t size)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin", "/usr/sbin", "/bin",
					    "/sbin", NULL };
	const char *const *d;
	char self[PATH_MAX];
	ssize_t n;
	struct stat st;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(out, size, "%s/%s", self, name) < (int)size &&
			    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
				return 0;
		}
	}
	for (d = dirs; *d; d++) {
		snprintf(out, size, "%s/%s", *d, name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/* mpirun options that take a value; anything else starting with '-' is a flag. */
static const char *const mpirun_valued[] = {
	"-np", "-n", "-N", "--np", "--hostfile", "-hostfile", "--host", "-H", "--mca", "-mca",
	"-x", "--map-by", "--bind-to", "--rank-by", "--timeout", "--report-bindings", NULL
};
static const char *const mpirun_flags[] = {
	"--allow-run-as-root", "--oversubscribe", "--tag-output", "--timestamp-output",
	"--display-map", "-q", "--quiet", "--report-bindings", "--merge-stderr-to-stdout", NULL
};

static int in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return 1;
	return 0;
}

/* mpirun may only start an allow-listed program: its first non-option argument. */
static int check_mpirun(int argc, char **argv, struct ln_buf *err)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *base;

		if (!strcmp(argv[i], "--mca") || !strcmp(argv[i], "-mca")) {
			i += 2;
			continue;
		}
		if (in_list(mpirun_flags, argv[i]))
			continue;
		if (in_list(mpirun_valued, argv[i])) {
			i++;
			continue;
		}
		if (argv[i][0] == '-') {
			ln_buf_addf(err, "mpirun option '%s' is not allowed", argv[i]);
			return -LN_EREQUEST;
		}
		base = strrchr(argv[i], '/');
		base = base ? base + 1 : argv[i];
		if (!allowed(base) || !strcmp(base, "mpirun") || !strcmp(base, "mpicc")) {
			ln_buf_addf(err, "mpirun may only start llmnet's probes, not '%s'", argv[i]);
			return -LN_EREQUEST;
		}
		return 0;
	}
	ln_buf_addf(err, "mpirun needs a program to start");
	return -LN_EREQUEST;
}

/* An absolute path without ".." parts whose last part is base. */
static int probe_path(const char *p, const char *base)
{
	const char *slash = strrchr(p, '/');

	return p[0] == '/' && !strstr(p, "/../") && !strstr(p, "/./") && slash &&
	       !strcmp(slash + 1, base);
}

/* mpicc only builds llmnet's MPI and NCCL probes (the validate mpi and
 * nccl stages build them with the launcher's mpicc and copy them to the
 * other nodes): exactly "-O2 -o .../llmnet-probe-mpi .../mpi_probe.c" or
 * "-O2 -o .../llmnet-probe-nccl .../nccl_mpi_probe.c", nothing that could
 * compile or link anything else. */
static int check_mpicc(int argc, char **argv, struct ln_buf *err)
{
	if (argc != 5 || strcmp(argv[1], "-O2") || strcmp(argv[2], "-o") ||
	    !((probe_path(argv[3], LN_PROBE_MPI) && probe_path(argv[4], LN_PROBE_MPI_SRC)) ||
	      (probe_path(argv[3], LN_PROBE_NCCL) &&
	       probe_path(argv[4], LN_PROBE_NCCL_SRC)))) {
		ln_buf_addstr(err, "mpicc may only build llmnet's MPI or NCCL probe: "
				   "mpicc -O2 -o DIR/llmnet-probe-mpi DIR/mpi_probe.c, or "
				   "mpicc -O2 -o DIR/llmnet-probe-nccl DIR/nccl_mpi_probe.c");
		return -LN_EREQUEST;
	}
	return 0;
}

/* The run verb's answer: the probe, its argv and what became of it. */
static struct json_object *answer(int pargc, char **pargv, const struct ln_exec_result *res)
{
	struct json_object *o, *av;
	int i;

	o = json_object_new_object();
	av = json_object_new_array();
	for (i = 0; i < pargc; i++)
		json_object_array_add(av, json_object_new_string(pargv[i]));
	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "probe", pargv[0]);
	ln_json_add(o, "argv", av);
	if (res->exited)
		ln_json_add_i64(o, "exit_status", res->exit_status);
	else
		ln_json_add(o, "exit_status", NULL);
	if (res->signal) {
		char sig[32];

		snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(res->signal));
		ln_json_add_str(o, "signal", sig);
	} else {
		ln_json_add(o, "signal", NULL);
	}
	ln_json_add_bool(o, "timed_out", res->timed_out);
	ln_json_add_i64(o, "duration_ms", res->duration_ms);
	ln_json_add(o, "output", json_object_new_string_len(res->output.buf, (int)res->output.len));
	ln_json_add_i64(o, "output_bytes", (int64_t)res->output_bytes);
	ln_json_add_bool(o, "truncated", res->truncated);
	return o;
}

int ln_exec_verb(struct ln_agent *a, int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_exec_result res;
	struct json_object *o = NULL;
	char path[PATH_MAX];
	unsigned long timeout = 0, max_output = 1u << 20;
	char **pargv = NULL;
	int i, pargc, rc;

	(void)a;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		char *end;

		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			errno = 0;
			timeout = strtoul(argv[++i], &end, 10);
			if (errno || *end || timeout < 1 || timeout > 3600)
				return ln_agent_fail("usage", "run: --timeout must be 1-3600 seconds",
						     LN_AGENT_EXIT_USAGE);
		} else if (!strcmp(argv[i], "--max-output") && i + 1 < argc) {
			errno = 0;
			max_output = strtoul(argv[++i], &end, 10);
			if (errno || *end || max_output < 1 || max_output > (16ul << 20))
				return ln_agent_fail("usage",
						     "run: --max-output must be 1-16777216 bytes",
						     LN_AGENT_EXIT_USAGE);
		} else {
			ln_buf_addf(&err, "run: unknown option '%s'", argv[i]);
			rc = ln_agent_fail("usage", err.buf, LN_AGENT_EXIT_USAGE);
			goto out;
		}
	}
	if (!timeout || i + 1 >= argc) {
		rc = ln_agent_fail("usage",
				   "usage: llmnet-agent run --timeout S [--max-output N] -- PROBE ARGS...",
				   LN_AGENT_EXIT_USAGE);
		goto out;
	}
	pargc = argc - i - 1;
	pargv = argv + i + 1;
	if (strchr(pargv[0], '/') || !allowed(pargv[0])) {
		ln_buf_addf(&err, "run: probe '%s' is not on the allow-list", pargv[0]);
		rc = ln_agent_fail("request", err.buf, LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	if (pargc > 257) {
		rc = ln_agent_fail("request", "run: more than 256 arguments", LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	for (i = 1; i < pargc; i++) {
		if (!ln_exec_check_arg(pargv[i])) {
			ln_buf_addf(&err, "run: argument %d of '%s' is not allowed "
				    "(printable ASCII without shell metacharacters, at most 4096 bytes)",
				    i, pargv[0]);
			rc = ln_agent_fail("request", err.buf, LN_AGENT_EXIT_REQUEST);
			goto out;
		}
	}
	if ((!strcmp(pargv[0], "mpirun") && check_mpirun(pargc, pargv, &err) < 0) ||
	    (!strcmp(pargv[0], "mpicc") && check_mpicc(pargc, pargv, &err) < 0)) {
		rc = ln_agent_fail("request", err.buf, LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	if (resolve(pargv[0], path, sizeof(path)) < 0) {
		ln_buf_addf(&err, "run: probe '%s' is not installed", pargv[0]);
		rc = ln_agent_fail("request", err.buf, LN_AGENT_EXIT_REQUEST);
		goto out;
	}
	{
		char *saved = pargv[0];

		pargv[0] = path;
		rc = ln_exec_bounded((const char *const *)pargv, (unsigned)timeout, max_output, &res, &err);
		pargv[0] = saved;
	}
	if (rc < 0) {
		rc = ln_agent_fail("internal", err.buf, LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	o = answer(pargc, pargv, &res);
	ln_exec_result_release(&res);
	rc = ln_agent_emit(o) < 0 ? LN_AGENT_EXIT_INTERNAL : LN_AGENT_EXIT_OK;
out:
	json_object_put(o);
	ln_buf_release(&err);
	return rc;
}
