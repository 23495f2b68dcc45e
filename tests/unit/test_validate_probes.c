/* SPDX-License-Identifier: MIT */
/*
 * The probes, run for real. The MPI probe, and the NCCL probe
 * (nccl_mpi_probe.c, one rank per GPU, against STAND-IN libnccl/libcudart
 * built by these tests: tests/unit/standin/, NOT NCCL or CUDA, whose
 * ranks sum on the host through a shared file), are built with this
 * machine's mpicc and run under mpirun, as the stages do on the launcher
 * node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"
#include "common/error.h"
#include "common/util.h"
#include "orchestrator/validate/parse/parse.h"

#define SRC_DIR FIXTURES_DIR "/../.."

/* Run cmd through the shell, capture stdout, return the exit status. */
static int capture(const char *cmd, struct ln_buf *out)
{
	char chunk[4096];
	size_t n;
	FILE *f;
	int st;

	ln_buf_reset(out);
	f = popen(cmd, "r");
	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(ln_buf_add(out, chunk, n), 0);
	st = pclose(f);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* dir/mpi_probe with args on 3 ranks, its output parsed into m; the
 * probe's exit code. */
static int mpi_probe(const char *dir, const char *args, struct ln_buf *out,
		     struct ln_mpi_probe *m, struct ln_buf *err)
{
	char cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "mpirun --allow-run-as-root --oversubscribe -np 3 %s/mpi_probe %s 2>&1", dir, args);
	rc = capture(cmd, out);
	assert_int_equal(ln_parse_mpi(out->buf, out->len, m, err), 0);
	return rc;
}

static void test_validate_probes__mpi_probe_under_mpirun(void **state)
{
	char dir[] = "/tmp/ln-mpi-XXXXXX", cmd[1024], host[256];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_mpi_probe m;
	long i;

	(void)state;
	if (access("/usr/bin/mpicc", X_OK))
		fail_msg("mpicc is not installed: run 'make deps' (deps/validate.list)");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mpicc -O2 -o %s/mpi_probe %s/agents/probes/mpi_probe.c 2>&1",
		 dir, SRC_DIR);
	assert_int_equal(capture(cmd, &out), 0);
	assert_int_equal(gethostname(host, sizeof(host)), 0);

	assert_int_equal(mpi_probe(dir, "--expect-ranks 3", &out, &m, &err), 0);
	assert_int_equal(m.ranks, 3);
	for (i = 0; i < m.ranks; i++)
		assert_string_equal(m.hosts[i], host);
	assert_true(m.allreduce_ok);
	assert_true(m.pass);
	assert_true(m.seconds > 0);
	ln_mpi_probe_release(&m);

	/* the hostfile says 4 ranks, 3 started */
	assert_int_not_equal(mpi_probe(dir, "--expect-ranks 4", &out, &m, &err), 0);
	assert_true(m.allreduce_ok);
	assert_false(m.pass);
	assert_non_null(strstr(out.buf, "error: 4 ranks expected from the hostfile, 3 started"));
	ln_mpi_probe_release(&m);

	assert_int_not_equal(mpi_probe(dir, "--self-test-wrong-sum", &out, &m, &err), 0);
	assert_false(m.allreduce_ok);
	assert_false(m.pass);
	ln_mpi_probe_release(&m);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_test_release(&out, &err);
}

/* The NCCL probe across processes, under mpirun on this machine against
 * the STAND-IN libraries (not NCCL, not CUDA): one rank per "GPU", the
 * ncclUniqueId shared by MPI. */
static int nccl_mpi(const char *dir, const char *env, int np, const char *nccl_lib,
		    const char *args, struct ln_buf *out)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "env %s mpirun --allow-run-as-root --oversubscribe -np %d %s/nccl_mpi_probe "
		 "--nccl-lib %s/standin/%s --cudart-lib %s/standin/libcudart.so %s 2>&1",
		 env, np, dir, BUILD_DIR, nccl_lib, BUILD_DIR, args);
	return capture(cmd, out);
}

/* nccl_mpi_probe over 2 ranks that does not run (exit 2): parsed as not
 * run, its reason holding want. */
static void nccl_not_run(const char *dir, const char *env, const char *nccl_lib,
			 const char *want)
{
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_nccl n;

	assert_int_equal(nccl_mpi(dir, env, 2, nccl_lib, "", &out), 2);
	assert_int_equal(ln_parse_nccl(out.buf, out.len, &n, &err), 0);
	assert_true(n.not_run);
	assert_non_null(strstr(n.reason, want));
	ln_test_release(&out, &err);
}

/* Build the NCCL probe into a new dir (mkdtemp template), like on the
 * launcher: neither NCCL nor CUDA needed. */
static void build_nccl_probe(char *dir, struct ln_buf *out)
{
	char cmd[1024];

	if (access("/usr/bin/mpicc", X_OK))
		fail_msg("mpicc is not installed: run 'make deps' (deps/validate.list)");
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mpicc -O2 -o %s/nccl_mpi_probe "
		 "%s/agents/probes/nccl_mpi_probe.c 2>&1", dir, SRC_DIR);
	assert_int_equal(capture(cmd, out), 0);
}

static void test_validate_probes__nccl_mpi_probe_with_standins(void **state)
{
	char dir[] = "/tmp/ln-ncclmpi-XXXXXX", cmd[1024], host[256], line[700];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct ln_nccl n;

	(void)state;
	build_nccl_probe(dir, &out);
	assert_int_equal(gethostname(host, sizeof(host)), 0);

	/* a correct sum over 2 ranks, each on its own "GPU" */
	assert_int_equal(nccl_mpi(dir, "STANDIN_GPUS=2", 2, "libnccl.so.2",
				  "--bytes 1048576 --iters 3 --expect-ranks 2", &out), 0);
	assert_int_equal(ln_parse_nccl(out.buf, out.len, &n, &err), 0);
	assert_int_equal(n.ranks, 2);
	assert_int_equal(n.bytes, 1048576);
	assert_true(n.correct);
	assert_true(n.algbw > 0);
	assert_float_equal(n.busbw, ln_nccl_busbw("all_reduce", n.algbw, 2), 1e-3);
	snprintf(line, sizeof(line), "rank 0 host %s device 0\nrank 1 host %s device 1\n", host,
		 host);
	assert_non_null(strstr(out.buf, line));
	assert_non_null(strstr(out.buf, "result pass\n"));

	/* one rank: busbw is 0 by definition, the sum and algbw still count */
	assert_int_equal(nccl_mpi(dir, "", 1, "libnccl.so.2", "--bytes 4096", &out), 0);
	assert_int_equal(ln_parse_nccl(out.buf, out.len, &n, &err), 0);
	assert_int_equal(n.ranks, 1);
	assert_true(n.correct);
	assert_true(n.algbw > 0);
	assert_float_equal(n.busbw, 0.0, 0);

	/* a wrong sum on the last rank: caught, and that rank is named */
	assert_int_equal(nccl_mpi(dir, "STANDIN_NCCL=wrong", 2, "libnccl.so.2", "--bytes 4096",
				  &out), 1);
	assert_int_equal(ln_parse_nccl(out.buf, out.len, &n, &err), 0);
	assert_false(n.correct);
	assert_int_equal(n.wrong, 1);
	snprintf(line, sizeof(line), "rank 1 on %s: all_reduce result wrong at 4096 bytes: "
		 "element 1023 is 4, expected 3", host);
	assert_string_equal(n.reason, line);
	assert_int_equal(n.nwrong, 1);
	assert_int_equal(n.wrongs[0].rank, 1);
	assert_string_equal(n.wrongs[0].host, host);

	/* an NCCL error: no figure, the error quoted */
	assert_int_equal(nccl_mpi(dir, "STANDIN_NCCL=error", 2, "libnccl.so.2", "--bytes 4096",
				  &out), 1);
	assert_int_equal(ln_parse_nccl(out.buf, out.len, &n, &err), -LN_EPROTO);
	assert_non_null(strstr(err.buf, "ncclAllReduce failed: unhandled cuda error (stand-in)"));

	/* a library without ncclAllReduce: not run, naming the symbol */
	nccl_not_run(dir, "", "nosym/libnccl.so.2", "lacks 'ncclAllReduce'");

	/* no library at that path: not run, the loader's reason quoted */
	nccl_not_run(dir, "", "absent/libnccl.so.2", "cannot load NCCL: ");

	/* a node without GPUs: not run (not a failure of the fabric) */
	nccl_not_run(dir, "STANDIN_GPUS=0", "libnccl.so.2", "no CUDA device: 0 devices");

	/* bad arguments never reach the libraries */
	assert_int_equal(nccl_mpi(dir, "", 1, "libnccl.so.2", "--bytes -5", &out), 1);
	assert_non_null(strstr(out.buf, "error: bad argument '-5'"));
	assert_null(strstr(out.buf, "nccl version"));

	/* more ranks on the node than GPUs, and fewer ranks than the hostfile */
	assert_int_equal(nccl_mpi(dir, "STANDIN_GPUS=2", 3, "libnccl.so.2", "--bytes 4096", &out),
			 1);
	assert_non_null(strstr(out.buf, "this node runs more ranks than its 2 GPUs"));
	assert_int_equal(nccl_mpi(dir, "", 2, "libnccl.so.2", "--expect-ranks 4", &out), 1);
	assert_non_null(strstr(out.buf, "error: 2 ranks started, 4 expected\nresult fail\n"));

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_test_release(&out, &err);
}

/* Every collective over 3 ranks, each rank on its own "node" (its own UTS
 * namespace, so MPI_Get_processor_name differs per rank as across real
 * nodes): every size of a sweep checked, busbw by nccl-tests' factor; a
 * wrong result on one rank names that rank, its host and its GPU. */
static const char *const nccl_ops[] = { "all_reduce", "all_gather", "reduce_scatter",
					"broadcast", "reduce" };

static void nccl_op_runs(const char *dir, const char *op)
{
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	char args[256];
	struct ln_nccl n;
	size_t k;

	snprintf(args, sizeof(args), "--op %s --min-bytes 1024 --bytes 8192 --iters 2 "
		 "--expect-ranks 3", op);
	assert_int_equal(nccl_mpi(dir, "STANDIN_GPUS=3", 3, "libnccl.so.2", args, &out), 0);
	assert_int_equal(ln_parse_nccl(out.buf, out.len, &n, &err), 0);
	assert_string_equal(n.op, op);
	assert_int_equal(n.ranks, 3);
	assert_true(n.correct);
	assert_int_equal(n.wrong, 0);
	/* 1, 2, 4, 8 KiB (all_gather and reduce_scatter: whole float32s per rank) */
	assert_int_equal(n.nsizes, 4);
	for (k = 0; k < n.nsizes; k++) {
		uint64_t want = (1024ull << k) / 4 * 4;

		if (strcmp(op, "all_gather") == 0 || strcmp(op, "reduce_scatter") == 0)
			want = (1024ull << k) / 12 * 12;
		assert_int_equal(n.sizes[k].bytes, want);
		assert_int_equal(n.sizes[k].wrong, 0);
		assert_true(n.sizes[k].algbw > 0);
		assert_float_equal(n.sizes[k].busbw, ln_nccl_busbw(op, n.sizes[k].algbw, 3), 1e-3);
	}
	assert_int_equal(n.bytes, n.sizes[3].bytes);

	/* rank 1 receives one wrong element (reduce: only the root receives) */
	assert_int_equal(nccl_mpi(dir, "STANDIN_GPUS=3 STANDIN_NCCL=wrong STANDIN_WRONG_RANK=1", 3,
				  "libnccl.so.2", args, &out), 1);
	assert_int_equal(ln_parse_nccl(out.buf, out.len, &n, &err), 0);
	assert_false(n.correct);
	assert_int_equal(n.wrong, 4);	/* one per size */
	assert_int_equal(n.nwrong, 4);
	for (k = 0; k < n.nwrong; k++) {
		long rank = strcmp(op, "reduce") ? 1 : 0;
		char host[32];

		snprintf(host, sizeof(host), "node%ld", rank);
		assert_int_equal(n.wrongs[k].rank, rank);
		assert_string_equal(n.wrongs[k].host, host);
		assert_int_equal(n.wrongs[k].device, rank);
		assert_int_equal(n.wrongs[k].size, n.sizes[k].bytes);
		assert_int_equal(n.wrongs[k].elements, 1);
		assert_float_equal(n.wrongs[k].got, n.wrongs[k].want + 1, 0);
	}
	ln_test_release(&out, &err);
}

/* What each rank's NCCL reads (the stand-in echoes its NCCL_* variables):
 * NCCL_IB_HCA from its own node's entry, by host name (node1's short name
 * matches its full one), the default elsewhere, none where the list is
 * empty; the other variables on every rank. */
static void nccl_env_per_node(const char *dir)
{
	static const char *const every[] = { "NCCL_IB_GID_INDEX=3", "NCCL_SOCKET_IFNAME=^docker,lo",
					     "NCCL_ALGO=Ring", "NCCL_IB_TC=106" };
	struct ln_buf out = LN_BUF_INIT;
	char line[256];
	size_t k;
	int r;

	assert_int_equal(nccl_mpi(dir, "STANDIN_GPUS=3", 3, "libnccl.so.2",
				  "--bytes 4096 --hca rxe0:1,rxe1:1 --hca-at node1.example.com=mlx5_3:1 "
				  "--hca-at node2= --gid-index 3 --socket-ifname ^docker,lo --env "
				  "NCCL_ALGO=Ring --env NCCL_IB_TC=106", &out), 0);
	assert_non_null(strstr(out.buf, "standin-nccl: rank 0 host node0 saw "
				"NCCL_IB_HCA==rxe0:1,rxe1:1\n"));
	assert_non_null(strstr(out.buf, "standin-nccl: rank 1 host node1 saw "
				"NCCL_IB_HCA==mlx5_3:1\n"));
	assert_null(strstr(out.buf, "standin-nccl: rank 2 host node2 saw NCCL_IB_HCA"));
	for (r = 0; r < 3; r++)
		for (k = 0; k < ARRAY_SIZE(every); k++) {
			snprintf(line, sizeof(line), "standin-nccl: rank %d host node%d saw %s\n", r, r,
				 every[k]);
			assert_non_null(strstr(out.buf, line));
		}
	/* the probe sets NCCL_* names and plain values only */
	assert_int_equal(nccl_mpi(dir, "", 1, "libnccl.so.2", "--env LD_PRELOAD=x.so", &out), 1);
	assert_non_null(strstr(out.buf, "error: bad argument '--env'"));
	assert_null(strstr(out.buf, "standin-nccl:"));
	assert_int_equal(nccl_mpi(dir, "", 1, "libnccl.so.2", "--env NCCL_ALGO=/tmp/x", &out), 1);
	assert_int_equal(nccl_mpi(dir, "", 1, "libnccl.so.2", "--hca-at -x=rxe0:1", &out), 1);
	ln_buf_release(&out);
}

static void test_validate_probes__nccl_every_op(void **state)
{
	char dir[] = "/tmp/ln-ncclops-XXXXXX", cmd[1024];
	struct ln_buf out = LN_BUF_INIT;
	FILE *f;
	size_t k;

	(void)state;
	build_nccl_probe(dir, &out);
	/* the probe started in a UTS namespace named after its rank */
	snprintf(cmd, sizeof(cmd), "%s/node-of-rank", dir);
	f = fopen(cmd, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nexec unshare %s--uts sh -c 'hostname node$OMPI_COMM_WORLD_RANK && "
		"exec \"$@\"' sh %s/nccl_mpi_probe.real \"$@\"\n", geteuid() ? "-r " : "", dir);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "cd %s && mv nccl_mpi_probe nccl_mpi_probe.real && "
		 "mv node-of-rank nccl_mpi_probe && chmod 755 nccl_mpi_probe", dir);
	assert_int_equal(system(cmd), 0);
	for (k = 0; k < ARRAY_SIZE(nccl_ops); k++)
		nccl_op_runs(dir, nccl_ops[k]);
	nccl_env_per_node(dir);

	/* a size too small for one float32 per rank */
	assert_int_equal(nccl_mpi(dir, "STANDIN_GPUS=3", 3, "libnccl.so.2",
				  "--op all_gather --bytes 8", &out), 1);
	assert_non_null(strstr(out.buf, "error: 8 bytes hold less than one float32 per rank "
				"(3 ranks)"));
	/* an op the probe does not know never reaches the libraries */
	assert_int_equal(nccl_mpi(dir, "", 1, "libnccl.so.2", "--op all_to_all", &out), 1);
	assert_non_null(strstr(out.buf, "error: bad argument 'all_to_all'"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_buf_release(&out);
}

/* The agent builds the MPI and NCCL probes with the launcher's mpicc, and
 * nothing else: mpicc is allow-listed for exactly "-O2 -o BIN SRC" with
 * the probes' installed paths (below --root here) and sources that hash
 * to the ones shipped with the agent; mpirun then starts the build only
 * by its exact path and with its SHA-256, and passes MCA names by the
 * policy for this machine's Open MPI. */
static void test_validate_probes__agent_mpicc_only_builds_the_probe(void **state)
{
	char dir[] = "/tmp/ln-mpicc-XXXXXX", cmd[2048], sha[65];
	struct ln_buf out = LN_BUF_INIT;
	const char *agent = BUILD_DIR "/llmnet-agent-dyn";

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/var/lib/llmnet/bin %s/var/lib/llmnet/src && "
		 "cp %s/agents/probes/mpi_probe.c %s/agents/probes/nccl_mpi_probe.c "
		 "%s/var/lib/llmnet/src/", dir, dir, SRC_DIR, SRC_DIR, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s --root %s --budget-ms 150000 run --timeout 120 -- mpicc -O2 -o "
		 "/var/lib/llmnet/bin/llmnet-probe-mpi /var/lib/llmnet/src/mpi_probe.c", agent, dir);
	assert_int_equal(capture(cmd, &out), 0);
	assert_non_null(strstr(out.buf, "\"exit_status\": 0"));
	assert_non_null(strstr(out.buf, "\"path\": \"/usr/bin/mpicc\""));
	snprintf(cmd, sizeof(cmd), "%s/var/lib/llmnet/bin/llmnet-probe-mpi", dir);
	assert_int_equal(access(cmd, X_OK), 0);
	{
		/* the build's hash, as the controller reads it back */
		FILE *f;

		snprintf(cmd, sizeof(cmd), "sha256sum < %s/var/lib/llmnet/bin/llmnet-probe-mpi",
			 dir);
		f = popen(cmd, "r");
		assert_non_null(f);
		assert_int_equal(fscanf(f, "%64s", sha), 1);
		pclose(f);
	}
	/* mpirun starts it by its path and hash, with 4.1's MCA names */
	snprintf(cmd, sizeof(cmd), "%s --root %s --budget-ms 150000 run --timeout 60 --sha256 %s -- mpirun "
		 "--allow-run-as-root -np 1 --mca pml ob1 --mca btl self,tcp "
		 "/var/lib/llmnet/bin/llmnet-probe-mpi --elements 1", agent, dir, sha);
	assert_int_equal(capture(cmd, &out), 0);
	assert_non_null(strstr(out.buf, "ranks 1"));
	assert_non_null(strstr(out.buf, "result pass"));

	/* another source, a changed source, another output: refused */
	snprintf(cmd, sizeof(cmd), "%s --root %s --budget-ms 150000 run --timeout 5 -- mpicc -O2 -o "
		 "/var/lib/llmnet/bin/llmnet-probe-mpi /etc/passwd", agent, dir);
	assert_int_equal(capture(cmd, &out), 2);
	assert_non_null(strstr(out.buf, "mpicc may only build llmnet's MPI or NCCL probe"));
	snprintf(cmd, sizeof(cmd), "%s --root %s --budget-ms 150000 run --timeout 5 -- mpicc -O2 -o "
		 "/var/lib/llmnet/bin/../x/llmnet-probe-mpi /var/lib/llmnet/src/mpi_probe.c",
		 agent, dir);
	assert_int_equal(capture(cmd, &out), 2);
	snprintf(cmd, sizeof(cmd), "%s --root %s --budget-ms 150000 run --timeout 5 -- mpicc -O2 -o "
		 "/var/lib/llmnet/bin/llmnet-probe-mpi /var/lib/llmnet/src/mpi_probe.c -lfoo",
		 agent, dir);
	assert_int_equal(capture(cmd, &out), 2);
	snprintf(cmd, sizeof(cmd), "%s --root %s --budget-ms 150000 run --timeout 5 -- mpicc -O2 -o "
		 "/var/lib/llmnet/bin/llmnet-probe-nccl /var/lib/llmnet/src/mpi_probe.c", agent, dir);
	assert_int_equal(capture(cmd, &out), 2);
	/* the NCCL probe, from its own source only */
	snprintf(cmd, sizeof(cmd), "%s --root %s --budget-ms 150000 run --timeout 120 -- mpicc -O2 -o "
		 "/var/lib/llmnet/bin/llmnet-probe-nccl /var/lib/llmnet/src/nccl_mpi_probe.c",
		 agent, dir);
	assert_int_equal(capture(cmd, &out), 0);
	assert_non_null(strstr(out.buf, "\"exit_status\": 0"));
	snprintf(cmd, sizeof(cmd), "%s/var/lib/llmnet/bin/llmnet-probe-nccl", dir);
	assert_int_equal(access(cmd, X_OK), 0);
	snprintf(cmd, sizeof(cmd), "%s --root %s --budget-ms 150000 run --timeout 5 -- mpirun -np 1 mpicc", agent,
		 dir);
	assert_int_equal(capture(cmd, &out), 2);
	assert_non_null(strstr(out.buf, "mpirun may only start llmnet's probes, by their "
					"installed path"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_buf_release(&out);
}

/* The io probe on a real filesystem: a bind mount in a private mount
 * namespace stands for the namespace's mount point. */
static void test_validate_probes__io_probe(void **state)
{
	char dir[] = "/tmp/ln-io-XXXXXX", cmd[1024];
	struct ln_buf out = LN_BUF_INIT;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "%s/keep.bin", dir);
	f = fopen(cmd, "w");
	assert_non_null(f);
	fputs("checkpoint shard\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "unshare -m sh -c 'mount --bind %s %s && %s/probes/io_probe "
		 "--mount %s --size 4194304'", dir, dir, BUILD_DIR, dir);
	assert_int_equal(capture(cmd, &out), 0);
	assert_non_null(strstr(out.buf, "write_mbps "));
	assert_non_null(strstr(out.buf, "read_mbps "));
	assert_non_null(strstr(out.buf, "/keep.bin kept\nresult pass\n"));

	/* not a mount point: the test would measure the wrong disk */
	snprintf(cmd, sizeof(cmd), "%s/probes/io_probe --mount %s --size 4194304", BUILD_DIR, dir);
	assert_int_equal(capture(cmd, &out), 1);
	assert_non_null(strstr(out.buf, "is not a mount point"));
	snprintf(cmd, sizeof(cmd), "%s/probes/io_probe --device %s --size 4194304", BUILD_DIR, dir);
	assert_int_equal(capture(cmd, &out), 1);
	assert_non_null(strstr(out.buf, "is not a block device"));
	{
		/* a block device that is no namespace of the NQN is never opened for
		 * writing (issue 12, reproduction 3: it was /dev/loop0) */
		struct stat bst;

		if (stat("/dev/loop0", &bst) == 0 && S_ISBLK(bst.st_mode)) {
			snprintf(cmd, sizeof(cmd),
				 "%s/probes/io_probe --device /dev/loop0 --size 4194304 --write",
				 BUILD_DIR);
			assert_int_equal(capture(cmd, &out), 1);
			assert_non_null(strstr(out.buf, "--write needs --nqn NQN"));
			assert_null(strstr(out.buf, "write_mbps"));
			snprintf(cmd, sizeof(cmd),
				 "%s/probes/io_probe --device /dev/loop0 --size 4194304 --write "
				 "--nqn nqn.2024-04.com.example:t",
				 BUILD_DIR);
			assert_int_equal(capture(cmd, &out), 1);
			assert_non_null(strstr(out.buf, "'/dev/loop0' is not a namespace of "
							"'nqn.2024-04.com.example:t'"));
			assert_null(strstr(out.buf, "write_mbps"));
		}
	}
	snprintf(cmd, sizeof(cmd), "%s/probes/io_probe --mount %s --size 4194304 --nqn "
		 "nqn.2024-04.com.example:t", BUILD_DIR, dir);
	assert_int_equal(capture(cmd, &out), 1);
	assert_non_null(strstr(out.buf, "--nqn is for a raw device only"));
	snprintf(cmd, sizeof(cmd), "%s/probes/io_probe --mount %s --size 4194304 --write", BUILD_DIR,
		 dir);
	assert_int_equal(capture(cmd, &out), 1);
	assert_non_null(strstr(out.buf, "--write is for a raw device only"));
	snprintf(cmd, sizeof(cmd), "%s/probes/io_probe --mount %s --size 12", BUILD_DIR, dir);
	assert_int_equal(capture(cmd, &out), 1);
	/* nothing left behind */
	snprintf(cmd, sizeof(cmd), "ls -A %s", dir);
	assert_int_equal(capture(cmd, &out), 0);
	assert_string_equal(out.buf, "keep.bin\n");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	ln_buf_release(&out);
}

/*
 * The io probe trusts a device only as sysfs shows that device itself: a
 * private mount namespace puts a made-up sysfs on /sys and a device node
 * 240:0 (a major for local use, no driver: it never opens) on /dev. layout
 * is shell that links /sys/dev/block/240:0/device to a controller or a
 * multipath subsystem; controllers: nvme0 over pcie, nvme1 over tcp, nvme2
 * over tcp but not live, all of subsystem NQN (issue 12 point 4).
 */
#define IO_NQN "nqn.2024-04.com.example:t"

static int io_probe_on_fake_sysfs(const char *layout, struct ln_buf *out)
{
	char path[] = "/tmp/ln-io-sysfs-XXXXXX", cmd[4096];
	int fd = mkstemp(path), rc;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	assert_non_null(f);
	fprintf(f,
		"set -e\n"
		"mount -t tmpfs none /sys\n"
		"c() { mkdir -p /sys/class/nvme/$1; echo $2 > /sys/class/nvme/$1/transport;\n"
		"      echo $3 > /sys/class/nvme/$1/state; echo " IO_NQN " > /sys/class/nvme/$1/subsysnqn; }\n"
		"c nvme0 pcie live; c nvme1 tcp live; c nvme2 tcp connecting\n"
		"S=/sys/class/nvme-subsystem/nvme-subsys0; mkdir -p $S /sys/dev/block/240:0\n"
		"echo " IO_NQN " > $S/subsysnqn\n"
		"%s\n"
		"mount -t tmpfs none /dev\n"
		"mknod /dev/ln-ns b 240 0\n"
		"exec %s/probes/io_probe --device /dev/ln-ns --size 4194304 --nqn " IO_NQN "\n",
		layout, BUILD_DIR);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "unshare -m sh %s", path);
	rc = capture(cmd, out);
	unlink(path);
	return rc;
}

static void test_validate_probes__io_probe_trusts_only_the_namespace_sysfs(void **state)
{
	struct ln_buf out = LN_BUF_INIT;

	(void)state;
	/* its own controller is PCIe: another live tcp controller of the same
	 * NQN (nvme1) proves nothing */
	assert_int_equal(io_probe_on_fake_sysfs("ln -s /sys/class/nvme/nvme0 "
						"/sys/dev/block/240:0/device", &out), 1);
	if (!strstr(out.buf, "error: '/dev/ln-ns' is a namespace of controller nvme0 over pcie, "
			     "not of an NVMe-oF controller of '" IO_NQN "'"))
		fail_msg("%s", out.buf);
	assert_null(strstr(out.buf, "cannot open"));
	/* its own controller over tcp, live: trusted (the node then does not
	 * open: no driver has major 240) */
	assert_int_equal(io_probe_on_fake_sysfs("ln -s /sys/class/nvme/nvme1 "
						"/sys/dev/block/240:0/device", &out), 1);
	if (!strstr(out.buf, "error: cannot open '/dev/ln-ns' with O_DIRECT"))
		fail_msg("%s", out.buf);
	/* multipath: a subsystem reached over pcie and tcp is refused */
	assert_int_equal(io_probe_on_fake_sysfs("ln -s $S /sys/dev/block/240:0/device; "
						"ln -s /sys/class/nvme/nvme0 $S/nvme0; "
						"ln -s /sys/class/nvme/nvme1 $S/nvme1", &out), 1);
	if (!strstr(out.buf, "is a namespace of controller nvme0 over pcie"))
		fail_msg("%s", out.buf);
	assert_null(strstr(out.buf, "cannot open"));
	/* multipath over tcp only, one path live: trusted */
	assert_int_equal(io_probe_on_fake_sysfs("ln -s $S /sys/dev/block/240:0/device; "
						"ln -s /sys/class/nvme/nvme1 $S/nvme1; "
						"ln -s /sys/class/nvme/nvme2 $S/nvme2", &out), 1);
	if (!strstr(out.buf, "error: cannot open '/dev/ln-ns' with O_DIRECT"))
		fail_msg("%s", out.buf);
	/* no live path */
	assert_int_equal(io_probe_on_fake_sysfs("ln -s $S /sys/dev/block/240:0/device; "
						"ln -s /sys/class/nvme/nvme2 $S/nvme2", &out), 1);
	if (!strstr(out.buf, "error: '/dev/ln-ns' has no live NVMe-oF controller of '" IO_NQN "'"))
		fail_msg("%s", out.buf);
	assert_null(strstr(out.buf, "cannot open"));
	ln_buf_release(&out);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_validate_probes__mpi_probe_under_mpirun),
	cmocka_unit_test(test_validate_probes__nccl_mpi_probe_with_standins),
	cmocka_unit_test(test_validate_probes__nccl_every_op),
	cmocka_unit_test(test_validate_probes__agent_mpicc_only_builds_the_probe),
	cmocka_unit_test(test_validate_probes__io_probe),
	cmocka_unit_test(test_validate_probes__io_probe_trusts_only_the_namespace_sysfs),
)
