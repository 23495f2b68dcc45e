// SPDX-License-Identifier: MIT
/*
 * The bounded runner. Probes such as rping and perftest have no connect
 * timeout and a server with no client waits forever, so every child runs
 * in its own process group under a deadline (never past the request's
 * time budget, and cut short when the caller goes away: budget.h):
 * SIGTERM to the whole group when it passes, SIGKILL a second later. Output (stdout and stderr on one
 * pipe, so their order is kept) is captured up to a cap; the rest is read
 * and dropped so the child never blocks on a full pipe. A launcher may put
 * what it starts in groups of its own (mpirun does), out of reach of the
 * group kill; the agent is their subreaper (main.c), so whatever the child
 * leaves behind becomes the agent's and is killed when the child is done:
 * nothing a command starts outlives its request.
 *
 * The `run` verb adds the allow-list (below): llmnet's own probes by
 * their exact installed path and SHA-256, system tools by one absolute
 * path each, never $PATH, and every argument typed by its program's
 * option table.
 */
#include <arpa/inet.h>
#include <dirent.h>
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

#include <openssl/evp.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/answer.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/run/bounded.h"
#include "agents/agent/run/exec.h"
#include "agents/agent/run/exec_tests.h"
#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "common/mca_policy.h"
#include "common/nccl_env.h"
#include "common/util.h"
#include "common/nvme.h"
#include "probe_sha256.h"

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
		for (i = 0; i < n; i++)
			if (waitpid(kids[i], NULL, 0) == kids[i])
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
static void exec_child(int fd, int out, const char *const argv[])
{
	int devnull = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	if (devnull >= 0)
		dup2(devnull, STDIN_FILENO);
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	signal(SIGPIPE, SIG_DFL);
	if (fd >= 0)
		fexecve(fd, (char *const *)argv, environ);
	else
		execv(argv[0], (char *const *)argv);
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
	/* never past the request's time budget (budget.h) */
	if (start + ln_budget_left_ms() < deadline)
		deadline = start + ln_budget_left_ms();
	pid = fork();
	if (pid < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot run '%s': %s", argv[0], strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return r;
	}
	if (pid == 0)
		exec_child(fd, pfd[1], argv);
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
			take_output(res, chunk, (size_t)n, max_output);
		}
	}
	close(pfd[0]);
	res->leftovers = stop_leftovers();
	if (res->leftovers)
		ln_warn("'%s' left %d process%s behind; killed", argv[0], res->leftovers,
			res->leftovers == 1 ? "" : "es");
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

/*
 * Two classes of programs. llmnet's own io probe is named by its exact
 * installed path, opened without following links, checked by SHA-256
 * against the hash of the build this agent came with, and run from that
 * open file. System tools are named by their bare name and run from one
 * absolute path each (root's, not writable by anyone else), never
 * through $PATH. Every argument is checked against the program's option
 * table: each option is known and its value has its option's type.
 * mpirun and mpicc, which start or build other programs, have checks of
 * their own below.
 */

enum vkind {
	V_FLAG, V_UINT, V_ADDR, V_WORD, V_PATH, V_NQN,
	V_HCA,		/* DEV:PORT[,DEV:PORT...] */
	V_HCA_AT,	/* HOST=DEV:PORT[,...], or HOST= */
	V_IFNAME,	/* NCCL_SOCKET_IFNAME */
	V_NCCL_ENV,	/* NAME=VALUE, NAME on common/nccl_env.c's allow-list */
	V_PORT,		/* a TCP port, 1-65535 */
};

struct opt {
	const char *name;
	enum vkind kind;
};

/* What will run: argv[0] the absolute path (or, for an own probe run
 * from fd, its name), and room for paths rewritten below --root. */
struct run_plan {
	char *argv[258];
	char path[PATH_MAX], bin[PATH_MAX], src[PATH_MAX];
	int fd;
};

struct program;
typedef int (*prog_check_fn)(const struct ln_agent *a, const struct program *pg, int argc,
			     char **argv, const char *sha256, struct run_plan *rp,
			     struct ln_buf *err);

struct program {
	const char *name;	/* argv[0] of a request */
	const char *path;	/* what runs: an absolute path on the node */
	const char *sha256;	/* llmnet's own probe: its hash; NULL: a system tool */
	const struct opt *opts;	/* NULL-name terminated */
	enum vkind trailing;	/* a last positional argument; V_FLAG: none */
	prog_check_fn check;	/* instead of opts */
};

static const struct opt rping_opts[] = {
	{ "-s", V_FLAG }, { "-c", V_FLAG }, { "-V", V_FLAG }, { "-a", V_ADDR },
	{ "-p", V_PORT }, { "-C", V_UINT }, { NULL, V_FLAG },
};

static const struct opt perftest_opts[] = {
	{ "-d", V_WORD }, { "-i", V_UINT }, { "-x", V_UINT }, { "-s", V_UINT },
	{ "-n", V_UINT }, { "-p", V_PORT }, { "-R", V_FLAG }, { "-F", V_FLAG },
	{ "--report_gbits", V_FLAG }, { NULL, V_FLAG },
};

/* The latency tools: what the latency stage passes, no unit option. */
static const struct opt perftest_lat_opts[] = {
	{ "-d", V_WORD }, { "-i", V_UINT }, { "-x", V_UINT }, { "-s", V_UINT },
	{ "-n", V_UINT }, { "-p", V_PORT }, { "-R", V_FLAG }, { "-F", V_FLAG },
	{ NULL, V_FLAG },
};

static const struct opt io_opts[] = {
	{ "--mount", V_PATH }, { "--device", V_PATH }, { "--nqn", V_NQN },
	{ "--write", V_FLAG }, { "--size", V_UINT }, { NULL, V_FLAG },
};

/* What mpirun's probes may be given. */
static const struct opt mpi_probe_opts[] = {
	{ "--elements", V_UINT }, { "--expect-ranks", V_UINT }, { NULL, V_FLAG },
};

static const struct opt nccl_probe_opts[] = {
	{ "--op", V_WORD }, { "--bytes", V_UINT }, { "--min-bytes", V_UINT },
	{ "--expect-ranks", V_UINT },
	{ "--hca", V_HCA }, { "--hca-at", V_HCA_AT }, { "--gid-index", V_UINT },
	{ "--socket-ifname", V_IFNAME }, { "--env", V_NCCL_ENV }, { NULL, V_FLAG },
};

/* nccl-tests' all_reduce_perf, by its path (exec_tests.c): what the nccl stage passes. */
static const struct opt nccl_tests_opts[] = {
	{ "-b", V_UINT }, { "-e", V_UINT }, { "-f", V_UINT }, { "-g", V_UINT }, { "-c", V_UINT },
	{ NULL, V_FLAG },
};

/* its row: argv[0] and the path that runs are the request's own */
static const struct program nccl_tests = { LN_NCCL_TESTS_ALL_REDUCE, NULL, NULL, nccl_tests_opts,
					   V_FLAG, NULL };

static int check_mpirun(const struct ln_agent *a, const struct program *pg, int argc,
			char **argv, const char *sha256, struct run_plan *rp, struct ln_buf *err);
static int check_mpicc(const struct ln_agent *a, const struct program *pg, int argc,
		       char **argv, const char *sha256, struct run_plan *rp, struct ln_buf *err);

#define PROBE_PATH(name) LN_PROTO_REMOTE_DIR "/" name
#define SRC_PATH(name) LN_PROBE_SRC_DIR "/" name

static const struct program programs[] = {
	{ "rping", "/usr/bin/rping", NULL, rping_opts, V_FLAG, NULL },
	{ "ib_write_bw", "/usr/bin/ib_write_bw", NULL, perftest_opts, V_ADDR, NULL },
	{ "ib_send_bw", "/usr/bin/ib_send_bw", NULL, perftest_opts, V_ADDR, NULL },
	{ "ib_write_lat", "/usr/bin/ib_write_lat", NULL, perftest_lat_opts, V_ADDR, NULL },
	{ "ib_send_lat", "/usr/bin/ib_send_lat", NULL, perftest_lat_opts, V_ADDR, NULL },
	{ "mpirun", "/usr/bin/mpirun", NULL, NULL, V_FLAG, check_mpirun },
	{ "mpicc", "/usr/bin/mpicc", NULL, NULL, V_FLAG, check_mpicc },
	{ PROBE_PATH(LN_PROBE_IO), PROBE_PATH(LN_PROBE_IO), LN_SHA256_PROBE_IO, io_opts, V_FLAG,
	  NULL },
};

/* The probes mpirun may start (by exact path; their hash comes with the
 * request, see check_mpirun) and the sources mpicc may build them from. */
static const struct mpi_probe {
	const char *bin, *src, *src_sha256;
	const struct opt *opts;
} mpi_probes[] = {
	{ PROBE_PATH(LN_PROBE_MPI), SRC_PATH(LN_PROBE_MPI_SRC), LN_SHA256_MPI_SRC, mpi_probe_opts },
	{ PROBE_PATH(LN_PROBE_NCCL), SRC_PATH(LN_PROBE_NCCL_SRC), LN_SHA256_NCCL_SRC,
	  nccl_probe_opts },
};

const char *const *ln_exec_probes(void)
{
	static const char *names[ARRAY_SIZE(programs) + 1];
	size_t k;

	for (k = 0; k < ARRAY_SIZE(programs); k++)
		names[k] = programs[k].name;
	return names;
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

static int all_of(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

#define DIGITS "0123456789"
#define ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" DIGITS

/* An absolute path with no "." or ".." part and no empty one. */
static int clean_path(const char *p)
{
	const char *c;

	if (p[0] != '/' || strlen(p) >= PATH_MAX)
		return 0;
	for (c = p; *c; c++)
		if (*c == '/' && (c[1] == '/' || c[1] == '\0' ||
				  (c[1] == '.' && (c[2] == '/' || c[2] == '\0' ||
						   (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))))
			return 0;
	return 1;
}

/* HOST=LIST: a host name (the ranks' own) and its ports, maybe none. */
static int hca_at_ok(const char *v)
{
	const char *eq = strchr(v, '=');
	char host[256];

	if (!eq || eq == v || (size_t)(eq - v) >= sizeof(host) || v[0] == '-')
		return 0;
	snprintf(host, sizeof(host), "%.*s", (int)(eq - v), v);
	return all_of(host, ALNUM "._-") && ln_nccl_hca_ok(eq + 1, 1);
}

/* NAME=VALUE for the NCCL probe's ranks: the name on the allow-list (no
 * variable that writes or reads a file or loads code), a plain value. */
static int nccl_env_ok(const char *v)
{
	struct ln_buf why = LN_BUF_INIT;
	const char *eq = strchr(v, '=');
	char name[64];
	int ok;

	if (!eq || eq == v || (size_t)(eq - v) >= sizeof(name))
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)(eq - v), v);
	ok = ln_nccl_env_check(name, &why) == 0 && ln_nccl_value_ok(eq + 1);
	ln_buf_release(&why);
	return ok;
}

static int value_ok(enum vkind k, const char *v)
{
	unsigned char bin[16];

	switch (k) {
	case V_FLAG:
		return 0;
	case V_UINT:
		return all_of(v, DIGITS) && strlen(v) <= 20;
	case V_ADDR:
		return inet_pton(AF_INET, v, bin) == 1 || inet_pton(AF_INET6, v, bin) == 1;
	case V_WORD:
		return all_of(v, ALNUM "_.-") && v[0] != '-' && strlen(v) <= 64;
	case V_PATH:
		return clean_path(v);
	case V_NQN:
		return !strncmp(v, "nqn.", 4) && all_of(v, ALNUM "_.:-") && strlen(v) <= LN_NQN_MAX;
	case V_HCA:
		return ln_nccl_hca_ok(v, 0);
	case V_HCA_AT:
		return hca_at_ok(v);
	case V_IFNAME:
		return ln_nccl_ifname_ok(v);
	case V_NCCL_ENV:
		return nccl_env_ok(v);
	case V_PORT:
		return all_of(v, DIGITS) && strlen(v) <= 5 && atol(v) >= 1 && atol(v) <= 65535;
	}
	return 0;
}

static const char *const kind_names[] = {
	[V_FLAG] = "no value", [V_UINT] = "an unsigned integer", [V_ADDR] = "an IP address",
	[V_WORD] = "a device name", [V_PATH] = "an absolute path without . or .. parts",
	[V_NQN] = "an NQN", [V_HCA] = "RDMA ports as DEV:PORT,...",
	[V_HCA_AT] = "HOST=DEV:PORT,... (or HOST=)",
	[V_IFNAME] = "interface names (1-255 of [A-Za-z0-9_.,:^=-])",
	[V_NCCL_ENV] = "NCCL_NAME=VALUE with a name on llmnet's allow-list and a plain value",
	[V_PORT] = "a TCP port (1-65535)",
};

/* argv[*i] against opts: an option it knows, with its value. */
static int check_opt(const char *prog, const struct opt *opts, int argc, char **argv, int *i,
		     struct ln_buf *err)
{
	const struct opt *o;

	for (o = opts; o->name; o++)
		if (!strcmp(o->name, argv[*i]))
			break;
	if (!o->name) {
		ln_buf_addf(err, "%s option '%.100s' is not allowed (llmnet passes only the "
			    "options docs/agent-protocol.md lists)", prog, argv[*i]);
		return -LN_EREQUEST;
	}
	if (o->kind == V_FLAG)
		return 0;
	if (*i + 1 >= argc || !value_ok(o->kind, argv[*i + 1])) {
		ln_buf_addf(err, "%s option '%s' takes %s, not '%.100s'", prog, o->name,
			    kind_names[o->kind], *i + 1 < argc ? argv[*i + 1] : "nothing");
		return -LN_EREQUEST;
	}
	(*i)++;
	return 0;
}

/* Arguments from first on: options from opts, then trailing (if any). */
static int check_opts(const char *prog, const struct opt *opts, enum vkind trailing, int first,
		      int argc, char **argv, struct ln_buf *err)
{
	int i, r;

	for (i = first; i < argc; i++) {
		if (trailing != V_FLAG && i == argc - 1 && argv[i][0] != '-') {
			if (value_ok(trailing, argv[i]))
				return 0;
			ln_buf_addf(err, "%s takes %s as its last argument, not '%.100s'", prog,
				    kind_names[trailing], argv[i]);
			return -LN_EREQUEST;
		}
		r = check_opt(prog, opts, argc, argv, &i, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* path under the agent's root into out (PATH_MAX). */
static int node_path(const struct ln_agent *a, const char *path, char *out, struct ln_buf *err)
{
	if (ln_agent_path(a, path, out) < 0) {
		ln_buf_addf(err, "path '%.100s' is too long", path);
		return -LN_EREQUEST;
	}
	return 0;
}

/* Open path (under the root) without following a link, as a regular
 * file, and hash it; the fd (O_CLOEXEC) stays open in *fdp if asked. */
static int open_hashed(const struct ln_agent *a, const char *path, char hex[65], int *fdp,
		       struct ln_buf *err)
{
	char full[PATH_MAX];
	unsigned char md[EVP_MAX_MD_SIZE], chunk[65536];
	unsigned int mdlen = 0, k;
	struct stat st;
	EVP_MD_CTX *ctx = NULL;
	ssize_t n;
	int fd = -1, r;

	r = node_path(a, path, full, err);
	if (r < 0)
		return r;
	fd = open(full, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ln_buf_addf(err, "'%s' is not a regular file llmnet installed: %s", path,
			    fd < 0 ? strerror(errno) : "not a regular file");
		r = -LN_EREQUEST;
		goto out;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		r = -ENOMEM;
		goto out;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		EVP_DigestUpdate(ctx, chunk, (size_t)n);
	if (n < 0 || EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32) {
		ln_buf_addf(err, "cannot read '%s': %s", path, strerror(errno));
		r = -EIO;
		goto out;
	}
	for (k = 0; k < mdlen; k++)
		snprintf(hex + 2 * k, 3, "%02x", md[k]);
	if (fdp) {
		*fdp = fd;
		fd = -1;
	}
	r = 0;
out:
	EVP_MD_CTX_free(ctx);
	if (fd >= 0)
		close(fd);
	return r;
}

/* path's content must hash to want ("what" names it in the message). */
static int check_hash(const struct ln_agent *a, const char *path, const char *want,
		      const char *what, int *fdp, struct ln_buf *err)
{
	char got[65];
	int r = open_hashed(a, path, got, fdp, err);

	if (r < 0)
		return r;
	if (strcmp(got, want)) {
		ln_buf_addf(err, "'%s' has sha256 %.16s, not %.16s (%s): llmnet runs only "
			    "its own probes", path, got, want, what);
		if (fdp) {
			close(*fdp);
			*fdp = -1;
		}
		return -LN_EREQUEST;
	}
	return 0;
}

/* A system tool: root's regular file, writable by nobody else. */
static int check_tool(const struct program *pg, struct ln_buf *err)
{
	struct stat st;

	if (stat(pg->path, &st) < 0) {
		ln_buf_addf(err, "'%s' is not installed ('%s': %s)", pg->name, pg->path,
			    strerror(errno));
		return -ENOENT;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) {
		ln_buf_addf(err, "'%s' is not a root-owned program only root can write", pg->path);
		return -LN_EREQUEST;
	}
	return 0;
}

/* mpirun's --host: HOST:SLOTS, or several joined by commas (the nccl
 * stage's GPU nodes); a host of [A-Za-z0-9._-], not starting with '-'. */
static int host_list_ok(const char *v)
{
	if (!v)
		return 0;
	while (v) {
		size_t h = strspn(v, ALNUM "._-"), d;

		if (!h || v[0] == '-' || v[h] != ':')
			return 0;
		d = strspn(v + h + 1, DIGITS);
		if (!d || (v[h + 1 + d] && v[h + 1 + d] != ','))
			return 0;
		v = v[h + 1 + d] ? v + h + 2 + d : NULL;
	}
	return 1;
}

/* The Open MPI major version of the node's mpirun, as LN_OMPI_* bits. */
static int ompi_version(const struct program *pg, unsigned *majors, struct ln_buf *err)
{
	const char *const argv[] = { pg->path, "--version", NULL };
	struct ln_exec_result res;
	int r, major = 0;

	r = check_tool(pg, err);
	if (r < 0)
		return r;
	r = ln_exec_bounded(argv, 10, 4096, &res, err);
	if (r < 0)
		return r;
	*majors = res.exited && !res.exit_status ? ln_mca_ompi_version(res.output.buf, &major) : 0;
	if (!*majors && major)
		ln_buf_addf(err, "'%s' is Open MPI %d: llmnet has mca allow-lists for Open MPI "
			    "4.1 and 5 only, so it passes no --mca", pg->path, major);
	else if (!*majors)
		ln_buf_addf(err, "'%s --version' names no Open MPI version: mca parameters are "
			    "for Open MPI, so no --mca is passed", pg->path);
	ln_exec_result_release(&res);
	return *majors ? 0 : -LN_EREQUEST;
}

/* mpirun's --mca names (argv before prog) again, for this node's Open
 * MPI (its major version read once, when there is one). */
static int check_mca_for_node(const struct program *pg, int prog, char **argv,
			      struct ln_buf *err)
{
	unsigned majors = 0;
	int i, r;

	for (i = 1; i < prog; i++) {
		if (strcmp(argv[i], "--mca"))
			continue;
		if (!majors && (r = ompi_version(pg, &majors, err)) < 0)
			return r;
		if (ln_mca_check(argv[i + 1], majors, err) < 0)
			return -LN_EREQUEST;
		i += 2;
	}
	return 0;
}

/* mpirun: only the options the mpi and nccl stages pass, each value
 * typed; --mca names by the MCA policy, for the node's own Open MPI
 * version; no -x (environment variables such as LD_PRELOAD would load
 * code into the ranks); it starts one of llmnet's MPI probes, by its
 * exact path, whose SHA-256 the request names (the probe is built on the
 * launcher, then copied: the controller read back every copy and checked
 * it has the launcher's hash), with that probe's own options. */
static int check_mpirun(const struct ln_agent *a, const struct program *pg, int argc,
			char **argv, const char *sha256, struct run_plan *rp, struct ln_buf *err)
{
	static const struct opt opts[] = {
		{ "--allow-run-as-root", V_FLAG }, { "-np", V_UINT }, { "--hostfile", V_PATH },
		{ NULL, V_FLAG },
	};
	const struct mpi_probe *mp = NULL;
	int i, r, prog = 0;
	size_t k;

	for (i = 1; i < argc && !prog; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "-x")) {
			ln_buf_addf(err, "mpirun option '-x' is not allowed: llmnet passes no "
				    "environment variables to the ranks ('%.100s'; LD_PRELOAD and "
				    "other loader variables would load code)", v ? v : "");
			return -LN_EREQUEST;
		} else if (!strcmp(o, "--mca")) {
			if (i + 2 >= argc) {
				ln_buf_addstr(err, "mpirun option '--mca' takes a name and a value");
				return -LN_EREQUEST;
			}
			/* lint's check first: a refused name runs nothing, not even
			 * mpirun --version */
			if (ln_mca_check(argv[i + 1], LN_OMPI_ANY, err) < 0)
				return -LN_EREQUEST;
			if (!ln_mca_value_ok(argv[i + 2])) {
				ln_buf_addf(err, "mca value '%.100s' for '%s' may hold only "
					    "[A-Za-z0-9_.,:/@+^=-] (1-255)", argv[i + 2],
					    argv[i + 1]);
				return -LN_EREQUEST;
			}
			i += 2;
		} else if (!strcmp(o, "--host")) {
			if (!host_list_ok(v)) {
				ln_buf_addf(err, "mpirun option '--host' takes HOST:SLOTS[,HOST:SLOTS...], "
					    "not '%.100s'", v ? v : "nothing");
				return -LN_EREQUEST;
			}
			i++;
		} else if (!strcmp(o, "--map-by")) {
			const char *n = v && !strncmp(v, "ppr:", 4) ? v + 4 : NULL;
			size_t d = n ? strspn(n, DIGITS) : 0;

			if (!d || strcmp(n + d, ":node")) {
				ln_buf_addf(err, "mpirun option '--map-by' takes ppr:N:node, not "
					    "'%.100s'", v ? v : "nothing");
				return -LN_EREQUEST;
			}
			i++;
		} else if (o[0] == '-') {
			r = check_opt("mpirun", opts, argc, argv, &i, err);
			if (r < 0)
				return r;
		} else {
			prog = i;
		}
	}
	if (!prog) {
		ln_buf_addstr(err, "mpirun needs a program to start");
		return -LN_EREQUEST;
	}
	for (k = 0; k < ARRAY_SIZE(mpi_probes); k++)
		if (!strcmp(argv[prog], mpi_probes[k].bin))
			mp = &mpi_probes[k];
	if (!mp) {
		ln_buf_addf(err, "mpirun may only start llmnet's probes, by their installed "
			    "path ('%s' or '%s'), not '%.100s'", mpi_probes[0].bin,
			    mpi_probes[1].bin, argv[prog]);
		return -LN_EREQUEST;
	}
	r = check_opts(mp->bin, mp->opts, V_FLAG, prog + 1, argc, argv, err);
	if (r < 0)
		return r;
	if (!sha256) {
		ln_buf_addf(err, "mpirun starts '%s' only with --sha256 (the hash the controller "
			    "checked on every node)", mp->bin);
		return -LN_EREQUEST;
	}
	r = check_hash(a, mp->bin, sha256, "the hash the request names", NULL, err);
	if (r < 0)
		return r;
	/* under --root the probe runs from below the root */
	if (node_path(a, mp->bin, rp->bin, err) < 0)
		return -LN_EREQUEST;
	rp->argv[prog] = rp->bin;
	return check_mca_for_node(pg, prog, argv, err);
}

/* mpicc builds llmnet's MPI and NCCL probes and nothing else: exactly
 * "-O2 -o BIN SRC" with BIN and SRC a probe's installed path and its
 * source's, the source checked by SHA-256 against the one shipped with
 * this agent. */
static int check_mpicc(const struct ln_agent *a, const struct program *pg, int argc,
		       char **argv, const char *sha256, struct run_plan *rp, struct ln_buf *err)
{
	const struct mpi_probe *mp = NULL;
	size_t k;
	int r;

	(void)pg;
	if (sha256) {
		ln_buf_addstr(err, "--sha256 is for mpirun's probe, not mpicc");
		return -LN_EREQUEST;
	}
	for (k = 0; k < ARRAY_SIZE(mpi_probes) && argc == 5; k++)
		if (!strcmp(argv[3], mpi_probes[k].bin) && !strcmp(argv[4], mpi_probes[k].src))
			mp = &mpi_probes[k];
	if (!mp || strcmp(argv[1], "-O2") || strcmp(argv[2], "-o")) {
		ln_buf_addf(err, "mpicc may only build llmnet's MPI or NCCL probe: mpicc -O2 -o "
			    "%s %s, or mpicc -O2 -o %s %s", mpi_probes[0].bin, mpi_probes[0].src,
			    mpi_probes[1].bin, mpi_probes[1].src);
		return -LN_EREQUEST;
	}
	r = check_hash(a, mp->src, mp->src_sha256, "the source shipped with this agent", NULL,
		       err);
	if (r < 0)
		return r;
	/* under --root the build reads and writes below the root */
	if (node_path(a, mp->bin, rp->bin, err) < 0 || node_path(a, mp->src, rp->src, err) < 0)
		return -LN_EREQUEST;
	rp->argv[3] = rp->bin;
	rp->argv[4] = rp->src;
	return 0;
}

/* The run verb's answer: the request's argv, the path that ran, and what
 * became of it. */
static struct json_object *answer(int pargc, char **pargv, const char *path,
				  const struct ln_exec_result *res)
{
	struct json_object *o, *av;
	int i;

	o = json_object_new_object();
	av = json_object_new_array();
	for (i = 0; i < pargc; i++)
		json_object_array_add(av, json_object_new_string(pargv[i]));
	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "probe", pargv[0]);
	ln_json_add_str(o, "path", path);
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

/* Check the request's program and arguments into rp (what runs). */
static int check_request(const struct ln_agent *a, const char *sha256, int pargc, char **pargv,
			 struct run_plan *rp, struct ln_buf *err)
{
	const struct program *pg = NULL;
	size_t k;
	int i, r, tests;

	for (k = 0; k < ARRAY_SIZE(programs); k++)
		if (!strcmp(programs[k].name, pargv[0]))
			pg = &programs[k];
	tests = !pg && ln_exec_tests_named(pargv[0]) && clean_path(pargv[0]);
	if (tests)
		pg = &nccl_tests;
	if (!pg) {
		ln_buf_addf(err, "probe '%.100s' is not on the allow-list (system tools by name: "
			    "rping, ib_write_bw, ib_send_bw, ib_write_lat, ib_send_lat, mpirun, mpicc; "
			    "llmnet's io probe by its installed path %s; nccl-tests' %s by an "
			    "absolute path)", pargv[0], PROBE_PATH(LN_PROBE_IO),
			    LN_NCCL_TESTS_ALL_REDUCE);
		return -LN_EREQUEST;
	}
	if (pargc > 257) {
		ln_buf_addstr(err, "more than 256 arguments");
		return -LN_EREQUEST;
	}
	for (i = 1; i < pargc; i++) {
		if (!ln_exec_check_arg(pargv[i])) {
			ln_buf_addf(err, "argument %d of '%s' is not allowed (printable ASCII "
				    "without shell metacharacters, at most 4096 bytes)", i, pargv[0]);
			return -LN_EREQUEST;
		}
		rp->argv[i] = pargv[i];
	}
	rp->argv[pargc] = NULL;
	snprintf(rp->path, sizeof(rp->path), "%s", tests ? pargv[0] : pg->path);
	rp->argv[0] = rp->path;
	if (pg->check) {
		r = pg->check(a, pg, pargc, pargv, sha256, rp, err);
	} else if (sha256) {
		ln_buf_addf(err, "--sha256 is for mpirun's probe, not '%s'", pargv[0]);
		r = -LN_EREQUEST;
	} else {
		r = check_opts(pargv[0], pg->opts, pg->trailing, 1, pargc, pargv, err);
	}
	if (r < 0)
		return r;
	if (tests)	/* run from the file that was checked */
		return (rp->fd = ln_exec_tests_open(a, pargv[0], err)) < 0 ? rp->fd : 0;
	if (!pg->sha256)
		return check_tool(pg, err);
	/* an own probe: run from the file that was checked */
	rp->argv[0] = pargv[0];
	return check_hash(a, pg->path, pg->sha256, "the probe shipped with this agent", &rp->fd,
			  err);
}

int ln_exec_verb(struct ln_agent *a, int argc, char **argv)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_exec_result res;
	struct json_object *o = NULL;
	struct run_plan *rp = NULL;
	const char *sha256 = NULL;
	unsigned long timeout = 0, max_output = 1u << 20;
	char **pargv = NULL;
	int i, pargc, rc;

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
		} else if (!strcmp(argv[i], "--sha256") && i + 1 < argc) {
			sha256 = argv[++i];
			if (strlen(sha256) != 64 || !all_of(sha256, "0123456789abcdef"))
				return ln_agent_fail("usage", "run: --sha256 takes 64 lowercase hex "
						     "digits", LN_AGENT_EXIT_USAGE);
		} else {
			ln_buf_addf(&err, "run: unknown option '%s'", argv[i]);
			rc = ln_agent_fail("usage", err.buf, LN_AGENT_EXIT_USAGE);
			goto out;
		}
	}
	if (!timeout || i + 1 >= argc) {
		rc = ln_agent_fail("usage",
				   "usage: llmnet-agent run --timeout S [--max-output N] "
				   "[--sha256 HEX] -- PROBE ARGS...", LN_AGENT_EXIT_USAGE);
		goto out;
	}
	pargc = argc - i - 1;
	pargv = argv + i + 1;
	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		rc = ln_agent_fail("internal", "run: out of memory", LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	rp->fd = -1;
	ln_buf_addstr(&err, "run: ");
	rc = check_request(a, sha256, pargc, pargv, rp, &err);
	if (rc < 0) {
		rc = ln_agent_fail(rc == -LN_EMISSING ? LN_PROTO_CODE_MISSING : "request", err.buf,
				   rc == -ENOENT || rc == -LN_EREQUEST || rc == -LN_EMISSING ?
				   LN_AGENT_EXIT_REQUEST : LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	ln_buf_reset(&err);
	rc = ln_exec_bounded_fd(rp->fd, (const char *const *)rp->argv, (unsigned)timeout,
				max_output, &res, &err);
	if (rc < 0) {
		rc = ln_agent_fail("internal", err.buf, LN_AGENT_EXIT_INTERNAL);
		goto out;
	}
	o = answer(pargc, pargv, rp->path, &res);
	ln_exec_result_release(&res);
	rc = ln_agent_emit(o) < 0 ? LN_AGENT_EXIT_INTERNAL : LN_AGENT_EXIT_OK;
out:
	if (rp && rp->fd >= 0)
		close(rp->fd);
	free(rp);
	json_object_put(o);
	ln_buf_release(&err);
	return rc;
}
