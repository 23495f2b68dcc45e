/* SPDX-License-Identifier: MIT */
/*
 * The bounded runner (bounded.h). Probes such as rping and perftest have no
 * connect timeout and a server with no client waits forever, so every child
 * runs in its own process group under a deadline (never past the request's
 * time budget, and cut short when the caller goes away: budget.h): SIGTERM
 * to the whole group when it passes, SIGKILL a second later. Output (stdout
 * and stderr on one pipe, so their order is kept) is captured up to a cap;
 * the rest is read and dropped so the child never blocks on a full pipe. A
 * launcher may put what it starts in groups of its own (mpirun does), out
 * of reach of the group kill; the agent is their subreaper (main.c), so
 * whatever the child leaves behind becomes the agent's and is killed when
 * the child is done: nothing a command starts outlives its request.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/run/bounded.h"
#include "common/log.h"
#include "common/util.h"

/* The agent's children once a command is reaped: its orphans,
 * reparented here (PR_SET_CHILD_SUBREAPER). The agent runs one command at
 * a time and waits for each, so any other child is a leftover. */
static int leftover_children(pid_t *out, int max)
{
	char path[64], line[512];
	pid_t self = getpid();
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc");

	if (!dir)
		return 0;
	while (n < max && (d = readdir(dir))) {
		const char *close_paren;
		long ppid;
		FILE *f;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* "pid (comm) state ppid ...": comm may hold spaces and parens */
		if (fgets(line, sizeof(line), f) && (close_paren = strrchr(line, ')')) &&
		    sscanf(close_paren + 1, " %*c %ld", &ppid) == 1 && ppid == self)
			out[n++] = (pid_t)atol(d->d_name);
		fclose(f);
	}
	closedir(dir);
	return n;
}

/* Kill and reap every leftover, and what each leaves in turn, for up to
 * 2 s; returns how many were found. */
static int stop_leftovers(void)
{
	pid_t kids[64];
	int i, n, total = 0, round;

	for (round = 0; round < 20; round++) {
		n = leftover_children(kids, (int)ARRAY_SIZE(kids));
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			if (getpgid(kids[i]) == kids[i])
				kill(-kids[i], SIGKILL);
			kill(kids[i], SIGKILL);
		}
		/* never a blocking wait: a child in uninterruptible sleep (a
		 * hung GPU driver) outlives SIGKILL; 20 rounds bound it */
		for (i = 0; i < n; i++)
			if (waitpid(kids[i], NULL, WNOHANG) == kids[i])
				total++;
		poll(NULL, 0, 100);
	}
	return total;
}

void ln_exec_result_release(struct ln_exec_result *res)
{
	ln_buf_release(&res->output);
}

int ln_exec_bounded(const char *const argv[], unsigned timeout_s, size_t max_output,
		   struct ln_exec_result *res, struct ln_buf *err)
{
	return ln_exec_bounded_fd(-1, argv, timeout_s, max_output, res, err);
}

/* The child of ln_exec_bounded_fd: its own process group, stdin from
 * /dev/null, stdout and stderr to out; runs fd (fexecve) or argv[0]. */
static void exec_child(int fd, int out, const char *const argv[], char *const envp[])
{
	int devnull = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	if (devnull >= 0)
		dup2(devnull, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	signal(SIGPIPE, SIG_DFL);
	if (fd >= 0)
		fexecve(fd, (char *const *)argv, envp);
	else
		execve(argv[0], (char *const *)argv, envp);
	dprintf(STDERR_FILENO, "cannot execute '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Keep what fits of n bytes of output; count them all. */
static void take_output(struct ln_exec_result *res, const char *chunk, size_t n,
			size_t max_output)
{
	res->output_bytes += n;
	if (res->output.len < max_output) {
		size_t room = max_output - res->output.len;

		ln_buf_add(&res->output, chunk, n < room ? n : room);
	}
	if (res->output_bytes > max_output)
		res->truncated = 1;
}

int ln_exec_bounded_fd(int fd, const char *const argv[], unsigned timeout_s, size_t max_output,
		       struct ln_exec_result *res, struct ln_buf *err)
{
	return ln_exec_bounded_env(fd, argv, environ, timeout_s, max_output, res, err);
}

static void take_status(struct ln_exec_result *res, int status)
{
	if (WIFEXITED(status)) {
		res->exited = 1;
		res->exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
	}
}

/* What the forked child does: exec a program, or call a function. */
struct child_job {
	int fd;
	const char *const *argv;
	char *const *envp;
	int (*fn)(void *ctx, int out);
	void *ctx;
};

static void start_child(const struct child_job *j, int out)
{
	int devnull;

	if (!j->fn)
		exec_child(j->fd, out, j->argv, j->envp);
	setpgid(0, 0);
	/* a function child holds none of the agent's descriptors (its
	 * session's channel above all: a child left in the kernel would keep
	 * it open), only out and /dev/null as 0, 1 and 2 */
	devnull = open("/dev/null", O_RDWR);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
	}
	if (out > 3)
		close_range(3, (unsigned)out - 1, 0);
	close_range((unsigned)out + 1, ~0U, 0);
	/* the agent's own handlers (the budget's) would turn the bound's
	 * SIGTERM into a flag: the child ends on it instead */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	_exit(j->fn(j->ctx, out) & 0xff);
}

static int run_bounded(const char *name, const struct child_job *j, unsigned timeout_s,
		       size_t max_output, struct ln_exec_result *res, struct ln_buf *err);

int ln_exec_bounded_env(int fd, const char *const argv[], char *const envp[], unsigned timeout_s,
			size_t max_output, struct ln_exec_result *res, struct ln_buf *err)
{
	struct child_job j = { fd, argv, envp, NULL, NULL };

	return run_bounded(argv[0], &j, timeout_s, max_output, res, err);
}

int ln_exec_bounded_call(const char *name, int (*fn)(void *ctx, int out), void *ctx,
			 unsigned timeout_s, size_t max_output, struct ln_exec_result *res,
			 struct ln_buf *err)
{
	struct child_job j = { -1, NULL, NULL, fn, ctx };

	return run_bounded(name, &j, timeout_s, max_output, res, err);
}

static int run_bounded(const char *name, const struct child_job *j, unsigned timeout_s,
		       size_t max_output, struct ln_exec_result *res, struct ln_buf *err)
{
	long start, deadline, kill_at = 0, grace_end = 0, killed_at = 0;
	int pfd[2], status = 0, r = 0, eof = 0, reaped = 0, killed = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	ln_buf_init(&res->output, max_output + 1);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot run '%s': %s", name, strerror(errno));
		return r;
	}
	start = ln_now_ms();
	deadline = start + (long)timeout_s * 1000L;
	/* never past the request's time budget (budget.h) */
	if (start + ln_budget_left_ms() < deadline)
		deadline = start + ln_budget_left_ms();
	pid = fork();
	if (pid < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot run '%s': %s", name, strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return r;
	}
	if (pid == 0)
		start_child(j, pfd[1]);
	setpgid(pid, pid);
	close(pfd[1]);
	for (;;) {
		long now = ln_now_ms(), wait_ms = 100;
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };

		/* a closed session stops the child as its bound would */
		if (!reaped && !res->timed_out &&
		    (now >= deadline || ln_budget_left_ms() == 0 || ln_agent_stopping)) {
			res->timed_out = 1;
			kill(-pid, SIGTERM);
			kill_at = now + 1000;
		}
		if (kill_at && now >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
			killed = 1;
			killed_at = now;
		}
		if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
			reaped = 1;
			/* A grandchild may still hold the pipe: give it a short
			 * grace, then kill the group and stop reading. */
			grace_end = now + 2000;
		}
		if (reaped && (eof || killed))
			break;
		/* SIGKILL cannot end a process in uninterruptible sleep (a GPU
		 * fallen off the bus holds nvmlInit in the driver): after 2 s
		 * it is left behind, unreaped, and the call returns timed out */
		if (killed && !reaped && now >= killed_at + 2000) {
			ln_warn("'%s' (pid %d) did not end 2 s after SIGKILL (uninterruptible "
				"sleep in the kernel?); left behind", name, (int)pid);
			break;
		}
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
			take_output(res, chunk, (size_t)n, max_output);
		}
	}
	close(pfd[0]);
	res->leftovers = stop_leftovers();
	if (res->leftovers)
		ln_warn("'%s' left %d process%s behind; killed", name, res->leftovers,
			res->leftovers == 1 ? "" : "es");
	res->duration_ms = ln_now_ms() - start;
	if (reaped)	/* else timed out, never ended: no exit status */
		take_status(res, status);
	return 0;
}
