/* SPDX-License-Identifier: MIT */
/*
 * The `run` verb's allow-list (allow.h). Two classes of programs. llmnet's
 * own io probe is named by its exact installed path, opened without
 * following links, checked by SHA-256 against the hash of the build this
 * agent came with, and run from that open file. System tools are named by
 * their bare name and run from one absolute path each (root's, not
 * writable by anyone else), never through $PATH. Every argument is checked
 * against the program's option table (args.h): each option is known and
 * its value has its option's type. mpirun and mpicc, which start or build
 * other programs, have checks of their own below; the io probe's write
 * targets are checked in io_target.c. What passes runs from
 * the ln_run_plan it fills (exec.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/digest.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/run/allow.h"
#include "agents/agent/run/args.h"
#include "agents/agent/run/bounded.h"
#include "agents/agent/run/exec.h"
#include "agents/agent/run/exec_tests.h"
#include "agents/agent/run/io_target.h"
#include "common/error.h"
#include "common/mca_policy.h"
#include "common/slurm.h"
#include "common/nccl_env.h"
#include "common/util.h"
#include "probe_sha256.h"

struct program;
typedef int (*prog_check_fn)(const struct ln_agent *a, const struct program *pg, int argc,
			     char **argv, const char *sha256, struct ln_run_plan *rp,
			     struct ln_buf *err);

struct program {
	const char *name;	/* argv[0] of a request */
	const char *path;	/* what runs: an absolute path on the node */
	const char *sha256;	/* llmnet's own probe: its hash; NULL: a system tool */
	const struct ln_arg_opt *opts;	/* NULL-name terminated */
	enum ln_arg_kind trailing;	/* a last positional argument; LN_ARG_FLAG: none */
	prog_check_fn check;		/* instead of opts */
};

static const struct ln_arg_opt rping_opts[] = {
	{ "-s", LN_ARG_FLAG }, { "-c", LN_ARG_FLAG }, { "-V", LN_ARG_FLAG }, { "-a", LN_ARG_ADDR },
	{ "-p", LN_ARG_PORT }, { "-C", LN_ARG_UINT },
	{ "-I", LN_ARG_ADDR },	/* the client's own port's address (issue 27) */
	{ NULL, LN_ARG_FLAG },
};

static const struct ln_arg_opt perftest_opts[] = {
	{ "-d", LN_ARG_WORD }, { "-i", LN_ARG_UINT }, { "-x", LN_ARG_UINT }, { "-s", LN_ARG_UINT },
	{ "-n", LN_ARG_UINT }, { "-p", LN_ARG_PORT }, { "-R", LN_ARG_FLAG }, { "-F", LN_ARG_FLAG },
	{ "--report_gbits", LN_ARG_FLAG },
	/* RDMA CM from the end's own address; --help says whether the
	 * node's perftest has it (issue 27) */
	{ "--bind_source_ip", LN_ARG_ADDR }, { "--help", LN_ARG_FLAG },
	/* GPUDirect RDMA (bandwidth memory cuda, dmabuf) */
	{ "--use_cuda_bus_id", LN_ARG_PCI_BUS }, { "--use_cuda_dmabuf", LN_ARG_FLAG },
	{ NULL, LN_ARG_FLAG },
};

/* The latency tools: what the latency stage passes, no unit option. */
static const struct ln_arg_opt perftest_lat_opts[] = {
	{ "-d", LN_ARG_WORD }, { "-i", LN_ARG_UINT }, { "-x", LN_ARG_UINT }, { "-s", LN_ARG_UINT },
	{ "-n", LN_ARG_UINT }, { "-p", LN_ARG_PORT }, { "-R", LN_ARG_FLAG }, { "-F", LN_ARG_FLAG },
	{ "--bind_source_ip", LN_ARG_ADDR }, { "--help", LN_ARG_FLAG },
	{ NULL, LN_ARG_FLAG },
};

static const struct ln_arg_opt io_opts[] = {
	{ "--mount", LN_ARG_PATH }, { "--device", LN_ARG_PATH }, { "--nqn", LN_ARG_NQN },
	{ "--write", LN_ARG_FLAG }, { "--size", LN_ARG_UINT }, { NULL, LN_ARG_FLAG },
};

/* What mpirun's probes may be given. */
static const struct ln_arg_opt mpi_probe_opts[] = {
	{ "--elements", LN_ARG_UINT }, { "--expect-ranks", LN_ARG_UINT }, { NULL, LN_ARG_FLAG },
};

static const struct ln_arg_opt nccl_probe_opts[] = {
	{ "--op", LN_ARG_WORD }, { "--bytes", LN_ARG_UINT }, { "--min-bytes", LN_ARG_UINT },
	{ "--expect-ranks", LN_ARG_UINT },
	{ "--hca", LN_ARG_HCA }, { "--hca-at", LN_ARG_HCA_AT }, { "--gid-index", LN_ARG_UINT },
	{ "--socket-ifname", LN_ARG_IFNAME }, { "--env", LN_ARG_NCCL_ENV }, { NULL, LN_ARG_FLAG },
};

/* nccl-tests' OP_perf, by its path (exec_tests.c): what the nccl stage
 * passes (-h: the check that a node's copy may run, before mpirun). */
static const struct ln_arg_opt nccl_tests_opts[] = {
	{ "-b", LN_ARG_UINT }, { "-e", LN_ARG_UINT }, { "-f", LN_ARG_UINT }, { "-g", LN_ARG_UINT },
	{ "-c", LN_ARG_UINT }, { "-h", LN_ARG_FLAG }, { NULL, LN_ARG_FLAG },
};

/* perftest from a stage's perftest_dir, by its absolute path, run as
 * nccl-tests' programs are (exec_tests.c): argv[0] and the path that
 * runs are the request's own. */
static const struct program perftest_in_dir[] = {
	{ "ib_write_bw", NULL, NULL, perftest_opts, LN_ARG_ADDR, NULL },
	{ "ib_send_bw", NULL, NULL, perftest_opts, LN_ARG_ADDR, NULL },
	{ "ib_write_lat", NULL, NULL, perftest_lat_opts, LN_ARG_ADDR, NULL },
	{ "ib_send_lat", NULL, NULL, perftest_lat_opts, LN_ARG_ADDR, NULL },
};

static const struct program *perftest_by_path(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t k;

	for (k = 0; path[0] == '/' && base && k < ARRAY_SIZE(perftest_in_dir); k++)
		if (!strcmp(base + 1, perftest_in_dir[k].name) && ln_arg_clean_path(path))
			return &perftest_in_dir[k];
	return NULL;
}

/* its row: argv[0] and the path that runs are the request's own */
static const struct program nccl_tests = { LN_NCCL_TESTS_ALL_REDUCE, NULL, NULL, nccl_tests_opts,
					   LN_ARG_FLAG, NULL };

static int check_mpirun(const struct ln_agent *a, const struct program *pg, int argc,
			char **argv, const char *sha256, struct ln_run_plan *rp,
			struct ln_buf *err);
static int check_mpicc(const struct ln_agent *a, const struct program *pg, int argc,
		       char **argv, const char *sha256, struct ln_run_plan *rp,
		       struct ln_buf *err);
static int check_scontrol(const struct ln_agent *a, const struct program *pg, int argc,
			  char **argv, const char *sha256, struct ln_run_plan *rp,
			  struct ln_buf *err);

#define PROBE_PATH(name) LN_PROTO_REMOTE_DIR "/" name
#define SRC_PATH(name) LN_PROBE_SRC_DIR "/" name

static const struct program programs[] = {
	{ "rping", "/usr/bin/rping", NULL, rping_opts, LN_ARG_FLAG, NULL },
	{ "ib_write_bw", "/usr/bin/ib_write_bw", NULL, perftest_opts, LN_ARG_ADDR, NULL },
	{ "ib_send_bw", "/usr/bin/ib_send_bw", NULL, perftest_opts, LN_ARG_ADDR, NULL },
	{ "ib_write_lat", "/usr/bin/ib_write_lat", NULL, perftest_lat_opts, LN_ARG_ADDR, NULL },
	{ "ib_send_lat", "/usr/bin/ib_send_lat", NULL, perftest_lat_opts, LN_ARG_ADDR, NULL },
	{ "mpirun", "/usr/bin/mpirun", NULL, NULL, LN_ARG_FLAG, check_mpirun },
	{ "mpicc", "/usr/bin/mpicc", NULL, NULL, LN_ARG_FLAG, check_mpicc },
	{ "scontrol", LN_SLURM_PATH, NULL, NULL, LN_ARG_FLAG, check_scontrol },
	{ PROBE_PATH(LN_PROBE_IO), PROBE_PATH(LN_PROBE_IO), LN_SHA256_PROBE_IO, io_opts,
	  LN_ARG_FLAG, NULL },
};

/* The probes mpirun may start (by exact path; their hash comes with the
 * request, see check_mpirun) and the sources mpicc may build them from. */
static const struct mpi_probe {
	const char *bin, *src, *src_sha256;
	const struct ln_arg_opt *opts;
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
 * file, and hash it; the fd (O_CLOEXEC) stays open in *fdp if asked,
 * the file then root's and writable by no one else. */
static int open_hashed(const struct ln_agent *a, const char *path, char hex[65], int *fdp,
		       struct ln_buf *err)
{
	char full[PATH_MAX];
	struct stat st;
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
	/* run from this fd: no one but root may change it between its hash
	 * and its exec */
	if (fdp && (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
		ln_buf_addf(err, "'%s' is %s (owner uid %u, mode %04o): llmnet runs its own "
			    "programs only when root owns them and no one else may write to them",
			    path, st.st_uid ? "not root's" : "writable by group or others",
			    (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		r = -LN_EREQUEST;
		goto out;
	}
	r = ln_sha256_fd_hex(fd, hex);
	if (r < 0) {
		ln_buf_addf(err, "cannot read '%s': %s", path, strerror(-r));
		r = -EIO;
		goto out;
	}
	if (fdp) {
		*fdp = fd;
		fd = -1;
	}
	r = 0;
out:
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

int ln_allow_open_own(const struct ln_agent *a, const char *path, const char *sha256, int *fd,
		      struct ln_buf *err)
{
	*fd = -1;
	return check_hash(a, path, sha256, "the program shipped with this agent", fd, err);
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
		size_t h = strspn(v, LN_ARG_ALNUM "._-"), d;

		if (!h || v[0] == '-' || v[h] != ':')
			return 0;
		d = strspn(v + h + 1, LN_ARG_DIGITS);
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

/* mpirun's -x value: NCCL_NAME=VALUE by the NCCL policy (nccl_env.h). */
static int x_check(const char *v, struct ln_buf *err)
{
	if (v && ln_nccl_x_ok(v))
		return 0;
	ln_buf_addf(err, "mpirun option '-x' takes NCCL_NAME=VALUE with a name on llmnet's NCCL "
		    "allow-list and a plain value, not '%.100s' (LD_PRELOAD and other loader "
		    "variables would load code)", v ? v : "nothing");
	return -LN_EREQUEST;
}

/* mpirun starting nccl-tests' argv[prog] (across the nodes: the nccl
 * stage at scope cluster): its options from nccl-tests' table, no hash
 * (nccl-tests is not llmnet's: the node's own copy is trusted as the run
 * verb trusts it, exec_tests.c, here on the launcher; the controller had
 * every other node check its own copy first). */
static int mpirun_tests(const struct ln_agent *a, int prog, int argc, char **argv,
			const char *sha256, struct ln_run_plan *rp, struct ln_buf *err)
{
	int r, fd;

	if (sha256) {
		ln_buf_addstr(err, "--sha256 is for llmnet's probes, not nccl-tests");
		return -LN_EREQUEST;
	}
	r = ln_arg_check_opts(argv[prog], nccl_tests_opts, LN_ARG_FLAG, prog + 1, argc, argv,
			      err);
	if (r < 0)
		return r;
	fd = ln_exec_tests_open(a, argv[prog], err);
	if (fd < 0)
		return fd;
	close(fd);
	/* under --root the program is the one below the root */
	if (node_path(a, argv[prog], rp->bin, err) < 0)
		return -LN_EREQUEST;
	rp->argv[prog] = rp->bin;
	return 0;
}

/* mpirun: only the options the mpi and nccl stages pass, each value
 * typed; --mca names by the MCA policy, for the node's own Open MPI
 * version; -x only NCCL_NAME=VALUE by the NCCL policy and only for
 * nccl-tests (no LD_PRELOAD or other variable that loads code); it starts
 * nccl-tests from its directory (mpirun_tests), or one of llmnet's MPI probes, by its
 * exact path, whose SHA-256 the request names (the probe is built on the
 * launcher, then copied: the controller read back every copy and checked
 * it has the launcher's hash), with that probe's own options. */
static int check_mpirun(const struct ln_agent *a, const struct program *pg, int argc,
			char **argv, const char *sha256, struct ln_run_plan *rp, struct ln_buf *err)
{
	static const struct ln_arg_opt opts[] = {
		{ "--allow-run-as-root", LN_ARG_FLAG }, { "-np", LN_ARG_UINT },
		{ "--hostfile", LN_ARG_PATH }, { NULL, LN_ARG_FLAG },
	};
	const struct mpi_probe *mp = NULL;
	int i, r, prog = 0, with_x = 0;
	size_t k;

	for (i = 1; i < argc && !prog; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "-x")) {
			if (x_check(v, err) < 0)
				return -LN_EREQUEST;
			with_x = 1;
			i++;
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
			size_t d = n ? strspn(n, LN_ARG_DIGITS) : 0;

			if (!d || strcmp(n + d, ":node")) {
				ln_buf_addf(err, "mpirun option '--map-by' takes ppr:N:node, not "
					    "'%.100s'", v ? v : "nothing");
				return -LN_EREQUEST;
			}
			i++;
		} else if (o[0] == '-') {
			r = ln_arg_check_opt("mpirun", opts, argc, argv, &i, err);
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
	if (ln_arg_clean_path(argv[prog]) && ln_exec_tests_named(argv[prog])) {
		r = mpirun_tests(a, prog, argc, argv, sha256, rp, err);
		return r < 0 ? r : check_mca_for_node(pg, prog, argv, err);
	}
	if (with_x) {
		ln_buf_addf(err, "mpirun option '-x' is for nccl-tests only: llmnet's probes take "
			    "their NCCL variables as options ('%.100s')", argv[prog]);
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
	r = ln_arg_check_opts(mp->bin, mp->opts, LN_ARG_FLAG, prog + 1, argc, argv, err);
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
		       char **argv, const char *sha256, struct ln_run_plan *rp, struct ln_buf *err)
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

/* The value of argv word w after its "KEY=" (prefix), or NULL. */
static const char *keyed(const char *w, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(w, prefix, n) ? NULL : w + n;
}

/* scontrol in its three forms (common/slurm.h) and no other: one node's
 * line read, an llmnet drain (its reason in llmnet's grammar, so nothing
 * else is ever written as a reason) or an UNDRAIN, never RESUME (which
 * would bring a DOWN node up). */
static int check_scontrol(const struct ln_agent *a, const struct program *pg, int argc,
			  char **argv, const char *sha256, struct ln_run_plan *rp,
			  struct ln_buf *err)
{
	const char *name = argc > 2 ? keyed(argv[2], "NodeName=") : NULL;
	const char *reason = argc == 5 ? keyed(argv[4], "Reason=") : NULL;
	int show, drain, undrain;

	(void)a;
	(void)pg;
	(void)rp;
	if (sha256) {
		ln_buf_addstr(err, "--sha256 is for mpirun's probe, not scontrol");
		return -LN_EREQUEST;
	}
	show = argc == 5 && !strcmp(argv[1], "-o") && !strcmp(argv[2], "show") &&
	       !strcmp(argv[3], "node") && ln_slurm_name_ok(argv[4]);
	drain = argc == 5 && !strcmp(argv[1], "update") && ln_slurm_name_ok(name) &&
		!strcmp(argv[3], "State=DRAIN") && ln_slurm_reason_ok(reason);
	undrain = argc == 4 && !strcmp(argv[1], "update") && ln_slurm_name_ok(name) &&
		  !strcmp(argv[3], "State=UNDRAIN");
	if (!show && !drain && !undrain) {
		ln_buf_addstr(err, "scontrol runs only as '-o show node NAME', 'update "
			      "NodeName=NAME State=DRAIN Reason=llmnet:CLUSTER: STAGES: WHY' or "
			      "'update NodeName=NAME State=UNDRAIN' (a Slurm node name of "
			      "[A-Za-z0-9._-]; a reason in llmnet's grammar)");
		return -LN_EREQUEST;
	}
	return 0;
}

/* Check the request's program and arguments into rp (what runs). */
int ln_allow_check(const struct ln_agent *a, const char *sha256, int pargc, char **pargv,
		   struct ln_run_plan *rp, struct ln_buf *err)
{
	const struct program *pg = NULL;
	size_t k;
	int i, r, tests;

	for (k = 0; k < ARRAY_SIZE(programs); k++)
		if (!strcmp(programs[k].name, pargv[0]))
			pg = &programs[k];
	tests = !pg && ln_exec_tests_named(pargv[0]) && ln_arg_clean_path(pargv[0]);
	if (tests)
		pg = &nccl_tests;
	if (!pg && (pg = perftest_by_path(pargv[0])))
		tests = 1;
	if (!pg) {
		ln_buf_addf(err, "probe '%.100s' is not on the allow-list (system tools by name: "
			    "rping, ib_write_bw, ib_send_bw, ib_write_lat, ib_send_lat, mpirun, mpicc, "
			    "scontrol; llmnet's io probe by its installed path %s; nccl-tests' OP_perf "
			    "programs and perftest's tools by an absolute path)", pargv[0],
			    PROBE_PATH(LN_PROBE_IO));
		return -LN_EREQUEST;
	}
	if (pargc > 257) {
		ln_buf_addstr(err, "more than 256 arguments");
		return -LN_EREQUEST;
	}
	for (i = 1; i < pargc; i++) {
		if (!ln_arg_plain(pargv[i])) {
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
		r = ln_arg_check_opts(pargv[0], pg->opts, pg->trailing, 1, pargc, pargv, err);
	}
	/* the io probe writes only to what a cluster here connected: said
	 * before its file is looked at */
	if (r == 0 && pg->opts == io_opts)
		r = ln_io_target_check(a, rp->cluster, pargc, pargv, err);
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
