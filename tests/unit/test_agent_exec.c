/* SPDX-License-Identifier: MIT */
/*
 * The run verb's allow-list, request by request (issue 12, reproduction
 * 3): each way around it is refused with a clear message, nothing runs
 * (the planted programs would leave a mark) and the node's tree is
 * unchanged. Then what must still run: llmnet's io probe by its exact
 * path, from the build the agent came with.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include "common/util.h"
#include "common/mca_policy.h"
#include "common/slurm.h"
#include "orchestrator/transport/push.h"

struct ex {
	char *root;		/* the node's fixture tree */
	char dir[64];		/* a scratch directory outside it */
	char mark[128];		/* what a planted program leaves when it runs */
	char evil[128];		/* that program */
	char sha[65];		/* its SHA-256 */
	struct ln_buf before, out;
};

static const char script_fmt[] = "#!/bin/sh\ntouch %s\n";

static void plant(const char *path, const char *data)
{
	struct ln_buf e = LN_BUF_INIT;

	assert_int_equal(ln_file_write_atomic(path, data, strlen(data), 0755, &e), 0);
	ln_buf_release(&e);
}

static int setup(void **state)
{
	struct ex *x = calloc(1, sizeof(*x));
	char p[4096], script[256];

	assert_non_null(x);
	ln_buf_init(&x->before, 0);
	ln_buf_init(&x->out, 0);
	x->root = fx_build("node-target");
	assert_non_null(x->root);
	strcpy(x->dir, "/tmp/ln-exec-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->mark, sizeof(x->mark), "%s/ran", x->dir);
	snprintf(x->evil, sizeof(x->evil), "%s/x.sh", x->dir);
	snprintf(script, sizeof(script), script_fmt, x->mark);
	plant(x->evil, script);
	ln_sha256_hex(script, strlen(script), x->sha);
	/* an impostor outside llmnet's directory, and one inside it */
	snprintf(p, sizeof(p), "%s/llmnet-probe-mpi", x->dir);
	plant(p, script);
	snprintf(p, sizeof(p), "mkdir -p %s/var/lib/llmnet/bin %s/var/lib/llmnet/src", x->root,
		 x->root);
	assert_int_equal(system(p), 0);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/bin/llmnet-probe-mpi", x->root);
	plant(p, script);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/bin/llmnet-probe-io", x->root);
	plant(p, script);
	/* the NCCL probe's source, changed */
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/src/nccl_mpi_probe.c", x->root);
	plant(p, "int main(void) { return 0; }\n");
	fx_list_mtimes(x->root, &x->before);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct ex *x = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->dir);
	assert_int_equal(system(cmd), 0);
	fx_remove(x->root);
	ln_test_release(&x->before, &x->out);
	free(x);
	return 0;
}

/* `run --timeout 5 ARGS...` (rest NULL-terminated) must be refused with
 * want in its message, nothing run and nothing in the tree changed. */
static void refused_argv(struct ex *x, const char *want, const char *const *rest)
{
	const char *args[40] = { "run", "--timeout", "5" };
	struct ln_buf after = LN_BUF_INIT;
	int n = 3;

	while (n < 39 && (args[n] = *rest++))
		n++;
	args[n] = NULL;
	assert_int_equal(fx_agent(x->root, args, NULL, &x->out, NULL, NULL), 2);
	if (!strstr(x->out.buf, want))
		fail_msg("want '%s' in: %s", want, x->out.buf);
	assert_non_null(strstr(x->out.buf, "\"code\": \"request\""));
	assert_null(strstr(x->out.buf, "exit_status"));
	assert_int_equal(access(x->mark, F_OK), -1);
	fx_list_mtimes(x->root, &after);
	assert_string_equal(x->before.buf, after.buf);
	ln_buf_release(&after);
}

#define refused(x, want, ...) refused_argv(x, want, (const char *const[]){ __VA_ARGS__ })

#define PROBE_MPI "/var/lib/llmnet/bin/llmnet-probe-mpi"

static void test_agent_exec__mca_that_launches_is_refused(void **state)
{
	struct ex *x = *state;

	/* issue 12: plm_rsh_agent: /tmp/x.sh ran the script on each node */
	refused(x, "mca 'plm_rsh_agent' is refused: it sets how the rsh launcher starts "
		   "programs on the nodes ('plm_rsh_*')",
		"--sha256", x->sha, "--", "mpirun", "--allow-run-as-root", "-np", "1", "--mca",
		"plm_rsh_agent", x->evil, PROBE_MPI, "--elements", "1", NULL);
	refused(x, "mca 'mca_base_param_files' is refused", "--sha256", x->sha, "--", "mpirun",
		"--mca", "mca_base_param_files", x->evil, "-np", "1", PROBE_MPI, NULL);
	refused(x, "mca 'btl_tcp_sndbuf' is not on llmnet's allow-list for Open MPI 4.1 or 5",
		"--sha256", x->sha, "--", "mpirun", "--mca", "btl_tcp_sndbuf", "1", "-np", "1",
		PROBE_MPI, NULL);
	refused(x, "mca value 'a b' for 'pml' may hold only", "--sha256", x->sha, "--", "mpirun",
		"--mca", "pml", "a b", "-np", "1", PROBE_MPI, NULL);
	/* other spellings of the same are unknown options */
	refused(x, "mpirun option '-mca' is not allowed", "--sha256", x->sha, "--", "mpirun",
		"-mca", "plm_rsh_agent", x->evil, "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--prtemca' is not allowed", "--sha256", x->sha, "--", "mpirun",
		"--prtemca", "plm_ssh_agent", x->evil, "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--launch-agent' is not allowed", "--sha256", x->sha, "--",
		"mpirun", "--launch-agent", x->evil, "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--prefix' is not allowed", "--sha256", x->sha, "--", "mpirun",
		"--prefix", x->dir, "-np", "1", PROBE_MPI, NULL);
}

/* A name of the other Open MPI version than this machine's: the agent
 * asks its own mpirun (read-only) and refuses, starting nothing else. */
static void test_agent_exec__mca_of_the_other_version_is_refused(void **state)
{
	struct ex *x = *state;
	char line[256] = "";
	unsigned bit;
	int major;
	FILE *f = popen("/usr/bin/mpirun --version 2>&1", "r");

	assert_non_null(f);
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	pclose(f);
	bit = ln_mca_ompi_version(line, &major);
	if (!bit)
		fail_msg("/usr/bin/mpirun is not Open MPI 4 or 5 ('%s'): run 'make deps'", line);
	if (bit == LN_OMPI_4)
		refused(x, "mca 'smsc' is an Open MPI 5 name, not on llmnet's allow-list for "
			   "Open MPI 4.1", "--sha256", x->sha, "--", "mpirun", "--mca", "pml", "ob1",
			"--mca", "smsc", "cma", "-np", "1", PROBE_MPI, NULL);
	else
		refused(x, "mca 'btl_vader_single_copy_mechanism' is an Open MPI 4.1 name, not "
			   "on llmnet's allow-list for Open MPI 5", "--sha256", x->sha, "--",
			"mpirun", "--mca", "pml", "ob1", "--mca", "btl_vader_single_copy_mechanism",
			"none", "-np", "1", PROBE_MPI, NULL);
}

static void test_agent_exec__loader_variables_are_refused(void **state)
{
	struct ex *x = *state;

	refused(x, "mpirun option '-x' takes NCCL_NAME=VALUE with a name on llmnet's NCCL "
		   "allow-list and a plain value, not 'LD_PRELOAD=/tmp/x.so' (LD_PRELOAD and other "
		   "loader variables would load code)",
		"--sha256", x->sha, "--", "mpirun", "-x", "LD_PRELOAD=/tmp/x.so", "-np", "1",
		PROBE_MPI, NULL);
	refused(x, "mpirun option '-x' takes NCCL_NAME=VALUE", "--sha256", x->sha, "--", "mpirun",
		"-np", "1", "-x", "GCONV_PATH=/tmp", PROBE_MPI, NULL);
	/* an allowed NCCL name is still for nccl-tests only */
	refused(x, "mpirun option '-x' is for nccl-tests only", "--sha256", x->sha, "--",
		"mpirun", "-np", "1", "-x", "NCCL_ALGO=Ring", PROBE_MPI, NULL);
	refused(x, "mca 'mca_base_env_list' is refused", "--sha256", x->sha, "--", "mpirun",
		"--mca", "mca_base_env_list", "LD_PRELOAD=/tmp/x.so", "-np", "1", PROBE_MPI, NULL);
}

#define PROBE_NCCL "/var/lib/llmnet/bin/llmnet-probe-nccl"
#define NCCL_ENV_KIND "NCCL_NAME=VALUE with a name on llmnet's allow-list and a plain value"

/* The NCCL probe sets NCCL_* variables on its ranks from its options: only
 * names on common/nccl_env.c's allow-list, never one that loads code or
 * writes a file, nor a loader variable; ports and interfaces typed. */
static void test_agent_exec__nccl_environment_is_allow_listed(void **state)
{
	struct ex *x = *state;

	refused(x, "llmnet-probe-nccl option '--env' takes " NCCL_ENV_KIND ", not "
		   "'NCCL_NET_PLUGIN=evil'", "--sha256", x->sha, "--", "mpirun", "-np", "1",
		PROBE_NCCL, "--env", "NCCL_NET_PLUGIN=evil", NULL);
	refused(x, "not 'NCCL_TUNER_PLUGIN=x'", "--sha256", x->sha, "--", "mpirun", "-np", "1",
		PROBE_NCCL, "--env", "NCCL_TUNER_PLUGIN=x", NULL);
	refused(x, "not 'NCCL_DEBUG_FILE=x'", "--sha256", x->sha, "--", "mpirun", "-np", "1",
		PROBE_NCCL, "--env", "NCCL_DEBUG_FILE=x", NULL);
	refused(x, "not 'LD_PRELOAD=x.so'", "--sha256", x->sha, "--", "mpirun", "-np", "1",
		PROBE_NCCL, "--env", "LD_PRELOAD=x.so", NULL);
	refused(x, "not 'NCCL_IB_HCA=mlx5_0'", "--sha256", x->sha, "--", "mpirun", "-np", "1",
		PROBE_NCCL, "--env", "NCCL_IB_HCA=mlx5_0", NULL);
	refused(x, "not 'NCCL_ALGO=/tmp/x'", "--sha256", x->sha, "--", "mpirun", "-np", "1",
		PROBE_NCCL, "--env", "NCCL_ALGO=/tmp/x", NULL);
	refused(x, "option '--hca' takes RDMA ports as DEV:PORT,..., not 'mlx5_0'", "--sha256",
		x->sha, "--", "mpirun", "-np", "1", PROBE_NCCL, "--hca", "mlx5_0", NULL);
	refused(x, "option '--hca-at' takes HOST=DEV:PORT,... (or HOST=), not '-h=rxe0:1'",
		"--sha256", x->sha, "--", "mpirun", "-np", "1", PROBE_NCCL, "--hca-at",
		"-h=rxe0:1", NULL);
	refused(x, "option '--socket-ifname' takes interface names", "--sha256", x->sha, "--",
		"mpirun", "-np", "1", PROBE_NCCL, "--socket-ifname", "eth0 lo", NULL);
	/* what the nccl stage passes is allowed: the request gets as far as
	 * the probe's own file, which this node lacks (the fixture takes
	 * some 25 arguments: the options in two requests) */
	refused(x, "'" PROBE_NCCL "' is not a regular file llmnet installed", "--sha256", x->sha,
		"--", "mpirun", "-np", "2", PROBE_NCCL, "--op", "all_gather", "--hca",
		"mlx5_0:1,mlx5_1:1", "--hca-at", "gpu002=", "--hca-at", "gpu003.example.com=rxe0:1",
		NULL);
	/* a size sweep: --min-bytes to --bytes */
	refused(x, "'" PROBE_NCCL "' is not a regular file llmnet installed", "--sha256", x->sha,
		"--", "mpirun", "-np", "2", PROBE_NCCL, "--bytes", "1073741824", "--min-bytes",
		"8", NULL);
	refused(x, "llmnet-probe-nccl option '--min-bytes' takes", "--sha256", x->sha, "--",
		"mpirun", "-np", "2", PROBE_NCCL, "--min-bytes", "8B", NULL);
	refused(x, "'" PROBE_NCCL "' is not a regular file llmnet installed", "--sha256", x->sha,
		"--", "mpirun", "-np", "2", PROBE_NCCL, "--gid-index", "3", "--socket-ifname",
		"^docker,lo", "--env", "NCCL_ALGO=Ring", "--env", "NCCL_IB_TC=106", NULL);
	/* the GPU nodes only, when some node has none: --host NAME:GPUS,... */
	refused(x, "'" PROBE_NCCL "' is not a regular file llmnet installed", "--sha256", x->sha,
		"--", "mpirun", "--host", "g1:8,g2.example.com:4", "-np", "12", PROBE_NCCL, NULL);
}

static void test_agent_exec__impostor_probes_are_refused(void **state)
{
	struct ex *x = *state;
	char impostor[128];

	/* issue 12: only the basename was compared */
	snprintf(impostor, sizeof(impostor), "%s/llmnet-probe-mpi", x->dir);
	refused(x, "mpirun may only start llmnet's probes, by their installed path "
		   "('/var/lib/llmnet/bin/llmnet-probe-mpi' or '/var/lib/llmnet/bin/"
		   "llmnet-probe-nccl'), not '",
		"--sha256", x->sha, "--", "mpirun", "-np", "1", impostor, NULL);
	refused(x, "not 'llmnet-probe-mpi'", "--sha256", x->sha, "--", "mpirun", "-np", "1",
		"llmnet-probe-mpi", NULL);
	refused(x, "not '/var/lib/llmnet/bin/../bin/llmnet-probe-mpi'", "--sha256", x->sha, "--",
		"mpirun", "-np", "1", "/var/lib/llmnet/bin/../bin/llmnet-probe-mpi", NULL);
	/* at the right path, without the hash the controller checked, or with another */
	refused(x, "mpirun starts '/var/lib/llmnet/bin/llmnet-probe-mpi' only with --sha256",
		"--", "mpirun", "-np", "1", PROBE_MPI, NULL);
	refused(x, "'/var/lib/llmnet/bin/llmnet-probe-mpi' has sha256 ", "--sha256",
		"0000000000000000000000000000000000000000000000000000000000000000", "--",
		"mpirun", "-np", "1", PROBE_MPI, NULL);
	refused(x, "llmnet-probe-mpi option '--self-test-wrong-sum' is not allowed", "--sha256",
		x->sha, "--", "mpirun", "-np", "1", PROBE_MPI, "--self-test-wrong-sum", NULL);
	/* the io probe: by its installed path only, and only the build shipped
	 * with this agent */
	refused(x, "probe 'llmnet-probe-io' is not on the allow-list", "--", "llmnet-probe-io",
		"--mount", "/mnt", "--size", "4096", NULL);
	refused(x, "probe '/tmp/llmnet-probe-io' is not on the allow-list", "--",
		"/tmp/llmnet-probe-io", "--mount", "/mnt", "--size", "4096", NULL);
	refused(x, "(the probe shipped with this agent): llmnet runs only its own probes", "--",
		"/var/lib/llmnet/bin/llmnet-probe-io", "--device", "/dev/vda", "--size", "4096",
		NULL);
	/* a write target no cluster connected is refused before the file is
	 * looked at (io_target.c) */
	refused(x, "no cluster on this node mounted '/mnt'", "--",
		"/var/lib/llmnet/bin/llmnet-probe-io", "--mount", "/mnt", "--size", "4096", NULL);
	refused(x, "--sha256 is for mpirun's probe", "--sha256", x->sha, "--",
		"/var/lib/llmnet/bin/llmnet-probe-io", "--mount", "/mnt", "--size", "4096", NULL);
}

/* scontrol in its three forms only: a node's line, an llmnet drain, an
 * UNDRAIN. The three forms pass every argument check and stop only at
 * the program's absence (this machine has no Slurm; with one they run). */
static void test_agent_exec__scontrol_in_three_forms_only(void **state)
{
	struct ex *x = *state;
	const char *absent = access(LN_SLURM_PATH, F_OK) ? "'scontrol' is not installed" : NULL;

	/* the controls, where no real scontrol would run them */
	if (absent) {
		refused(x, absent, "--", "scontrol", "-o", "show", "node", "lab1", NULL);
		refused(x, absent, "--", "scontrol", "update", "NodeName=lab1", "State=DRAIN",
			"Reason=llmnet:lab: devices,rping: rxe0/1 is DOWN", NULL);
		refused(x, absent, "--", "scontrol", "update", "NodeName=lab1", "State=UNDRAIN",
			NULL);
	}
	/* RESUME would bring a DOWN node up; a reason not in llmnet's grammar
	 * would be someone else's; other verbs and nodes are not scontrol's here */
	refused(x, "scontrol runs only as", "--", "scontrol", "update", "NodeName=lab1",
		"State=RESUME", NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "update", "NodeName=lab1",
		"State=DRAIN", "Reason=maintenance", NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "update", "NodeName=lab1",
		"State=DRAIN", "Reason=llmnet:lab: devices: a=b", NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "update", "NodeName=lab1",
		"State=DRAIN", "Reason=llmnet:lab: : why", NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "update", "NodeName=lab[1-4]",
		"State=UNDRAIN", NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "update", "NodeName=-lab1",
		"State=UNDRAIN", NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "-o", "show", "node", "ALL", "x",
		NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "delete", "NodeName=lab1", NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "reconfigure", NULL);
	refused(x, "scontrol runs only as", "--", "scontrol", "update", "PartitionName=p",
		"State=DOWN", NULL);
	refused(x, "--sha256 is for mpirun's probe, not scontrol", "--sha256", x->sha, "--",
		"scontrol", "-o", "show", "node", "lab1", NULL);
}

static void test_agent_exec__mpicc_builds_only_the_shipped_source(void **state)
{
	struct ex *x = *state;
	char src[128], p[4096];

	/* issue 12: mpicc compiled any source path given */
	snprintf(src, sizeof(src), "%s/evil.c", x->dir);
	refused(x, "mpicc may only build llmnet's MPI or NCCL probe", "--", "mpicc", "-O2", "-o",
		PROBE_MPI, src, NULL);
	refused(x, "mpicc may only build", "--", "mpicc", "-O2", "-o", x->evil,
		"/var/lib/llmnet/src/mpi_probe.c", NULL);
	refused(x, "mpicc may only build", "--", "mpicc", "-O2", "-o", PROBE_MPI,
		"/var/lib/llmnet/src/mpi_probe.c", "-ldl", NULL);
	/* the right path, another content */
	refused(x, "'/var/lib/llmnet/src/nccl_mpi_probe.c' has sha256 ", "--", "mpicc", "-O2",
		"-o", "/var/lib/llmnet/bin/llmnet-probe-nccl", "/var/lib/llmnet/src/nccl_mpi_probe.c",
		NULL);
	assert_non_null(strstr(x->out.buf, "(the source shipped with this agent)"));
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/bin/llmnet-probe-nccl", x->root);
	assert_int_equal(access(p, F_OK), -1);
	/* missing: not built */
	refused(x, "'/var/lib/llmnet/src/mpi_probe.c' is not a regular file llmnet installed",
		"--", "mpicc", "-O2", "-o", PROBE_MPI, "/var/lib/llmnet/src/mpi_probe.c", NULL);
}

static void test_agent_exec__system_tools_by_name_and_typed_arguments(void **state)
{
	struct ex *x = *state;

	refused(x, "probe '/usr/bin/rping' is not on the allow-list", "--", "/usr/bin/rping",
		"-s", NULL);
	refused(x, "probe 'sh' is not on the allow-list", "--", "sh", "-c", "true", NULL);
	refused(x, "probe 'all_reduce_perf' is not on the allow-list", "--", "all_reduce_perf",
		"-b", "8", NULL);
	refused(x, "rping option '-a' takes an IP address, not 'gpu01'", "--", "rping", "-c", "-a",
		"gpu01", NULL);
	refused(x, "rping option '-S' is not allowed", "--", "rping", "-c", "-S", "4096", NULL);
	refused(x, "ib_write_bw option '--foo' is not allowed", "--", "ib_write_bw", "-d",
		"mlx5_0", "--foo", NULL);
	refused(x, "ib_write_bw takes an IP address as its last argument, not 'evil'", "--",
		"ib_write_bw", "-d", "mlx5_0", "evil", NULL);
	refused(x, "ib_send_bw option '-d' takes a device name, not '-x'", "--", "ib_send_bw",
		"-d", "-x", NULL);
	/* the latency tools take what the latency stage passes, no unit option */
	refused(x, "ib_write_lat option '--report_gbits' is not allowed", "--", "ib_write_lat",
		"-d", "rxe0", "--report_gbits", NULL);
	refused(x, "ib_send_lat takes an IP address as its last argument, not 'evil'", "--",
		"ib_send_lat", "-d", "rxe0", "-n", "100", "evil", NULL);
	refused(x, "ib_write_lat option '-n' takes an unsigned integer", "--", "ib_write_lat",
		"-n", "many", NULL);
	/* a port past 65535 (port_base + the pair's slot) is no port */
	refused(x, "ib_write_lat option '-p' takes a TCP port (1-65535), not '65536'", "--",
		"ib_write_lat", "-p", "65536", NULL);
	refused(x, "ib_write_bw option '-p' takes a TCP port (1-65535), not '0'", "--",
		"ib_write_bw", "-p", "0", NULL);
	refused(x, "rping option '-p' takes a TCP port (1-65535), not '70000'", "--", "rping",
		"-p", "70000", NULL);
	refused(x, "argument 2 of 'rping' is not allowed", "--", "rping", "-a", "1.2.3.4;id", NULL);
	refused(x, "mpirun option '--host' takes HOST:SLOTS", "--sha256", x->sha, "--", "mpirun",
		"--host", "n1", "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--host' takes HOST:SLOTS", "--sha256", x->sha, "--", "mpirun",
		"--host", "n/1:1", "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--host' takes HOST:SLOTS", "--sha256", x->sha, "--", "mpirun",
		"--host", "g1:8,", "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--host' takes HOST:SLOTS", "--sha256", x->sha, "--", "mpirun",
		"--host", "g1:8,-g2:8", "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--host' takes HOST:SLOTS", "--sha256", x->sha, "--", "mpirun",
		"--host", "g1:8:g2:8", "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--map-by' takes ppr:N:node", "--sha256", x->sha, "--",
		"mpirun", "--map-by", "node:PE=2", "-np", "1", PROBE_MPI, NULL);
	refused(x, "mpirun option '--hostfile' takes an absolute path without . or .. parts",
		"--sha256", x->sha, "--", "mpirun", "--hostfile", "etc/hosts", "-np", "1", PROBE_MPI,
		NULL);
	refused(x, "/var/lib/llmnet/bin/llmnet-probe-io option '--mount' takes an absolute path",
		"--", "/var/lib/llmnet/bin/llmnet-probe-io", "--mount", "mnt/../etc", NULL);
}

/* `run --timeout 5 ARGS...` passes the allow-list: the agent answers
 * that the tool is not installed here (/usr/bin has none), or, where it
 * is, the tool ran and its exit status came back; never a refusal of an
 * argument. */
static void allowed_argv(struct ex *x, const char *const *rest)
{
	const char *args[40] = { "run", "--timeout", "5" };
	int n = 3;

	while (n < 39 && (args[n] = *rest++))
		n++;
	args[n] = NULL;
	fx_agent(x->root, args, NULL, &x->out, NULL, NULL);
	if (strstr(x->out.buf, "is not allowed") || strstr(x->out.buf, " takes ") ||
	    (!strstr(x->out.buf, "is not installed") && !strstr(x->out.buf, "exit_status")))
		fail_msg("want it allowed: %s", x->out.buf);
}

#define allowed(x, ...) allowed_argv(x, (const char *const[]){ __VA_ARGS__ })

/* Binding (issue 27): rping's client source -I and perftest's
 * --bind_source_ip take a numeric IPv4 or IPv6 address only, never a
 * host name (the agent resolves nothing) or anything after one; --help
 * (whether the node's perftest has the option) takes nothing. */
static void test_agent_exec__bind_addresses_are_numeric(void **state)
{
	struct ex *x = *state;

	refused(x, "rping option '-I' takes an IP address, not 'gpu01'", "--", "rping", "-c",
		"-a", "10.0.0.1", "-I", "gpu01", NULL);
	refused(x, "rping option '-I' takes an IP address, not '10.0.0.2x'", "--", "rping",
		"-c", "-a", "10.0.0.1", "-I", "10.0.0.2x", NULL);
	refused(x, "rping option '-I' takes an IP address, not '10.0.0.2/24'", "--", "rping",
		"-c", "-a", "10.0.0.1", "-I", "10.0.0.2/24", NULL);
	refused(x, "rping option '-I' takes an IP address, not 'nothing'", "--", "rping", "-c",
		"-a", "10.0.0.1", "-I", NULL);
	refused(x, "ib_write_bw option '--bind_source_ip' takes an IP address, not 'n1.lab'",
		"--", "ib_write_bw", "-d", "rxe0", "-R", "--bind_source_ip", "n1.lab", "10.0.0.1",
		NULL);
	refused(x, "ib_send_lat option '--bind_source_ip' takes an IP address, not '::1%eth0'",
		"--", "ib_send_lat", "-R", "--bind_source_ip", "::1%eth0", NULL);
	refused(x, "ib_write_lat option '--source_ip' is not allowed", "--", "ib_write_lat",
		"-R", "--source_ip", "10.0.0.1", NULL);
	/* the controls: what the stages pass */
	allowed(x, "--", "rping", "-c", "-a", "10.0.0.1", "-p", "7174", "-C", "1", "-V", "-I",
		"10.0.0.2", NULL);
	allowed(x, "--", "rping", "-c", "-a", "fd00::1", "-C", "1", "-I", "fd00::2", NULL);
	allowed(x, "--", "ib_write_bw", "-d", "rxe0", "-i", "1", "-x", "1", "-s", "65536", "-n",
		"5", "-p", "18515", "-R", "--bind_source_ip", "10.0.0.2", "-F", "--report_gbits",
		"10.0.0.1", NULL);
	allowed(x, "--", "ib_send_lat", "-d", "rxe1", "-i", "1", "-s", "2", "-n", "5", "-p",
		"18615", "-R", "--bind_source_ip", "fd00::2", "-F", NULL);
	allowed(x, "--", "ib_write_lat", "--help", NULL);
	allowed(x, "--", "ib_send_bw", "--help", NULL);
}

#define NT_DIR "/opt/nccl-tests/build"
#define NT_PROG NT_DIR "/all_reduce_perf"

/* Run a shell line, the node's root in $R and the scratch directory in
 * $D, asserting it worked. */
static void sh(const struct ex *x, const char *cmd)
{
	setenv("R", x->root, 1);
	setenv("D", x->dir, 1);
	assert_int_equal(system(cmd), 0);
}

/* nccl-tests' program in the node's NT_DIR: the planted script, which
 * leaves the mark when it runs; the tree's times taken again. */
static void plant_nccl_tests(struct ex *x)
{
	char p[4096], script[256];

	sh(x, "mkdir -p $R" NT_DIR " && chmod 0755 $R/opt $R/opt/nccl-tests $R" NT_DIR);
	snprintf(script, sizeof(script), script_fmt, x->mark);
	snprintf(p, sizeof(p), "%s" NT_PROG, x->root);
	plant(p, script);
	fx_list_mtimes(x->root, &x->before);
}

/* Refused like refused(), but as absent: code "missing", never run. */
static void missing(struct ex *x, const char *path, const char *want, const char *by_mpirun_x)
{
	const char *direct[] = { "run", "--timeout", "5", "--", path, "-b", "8", NULL };
	const char *mpi[] = { "run", "--timeout", "5", "--", "mpirun", "-np", "2", "-x",
			      by_mpirun_x, "/opt/nccl-tests/build/sendrecv_perf", "-b", "8", NULL };
	const char *const *args = by_mpirun_x ? mpi : direct;

	assert_int_equal(fx_agent(x->root, args, NULL, &x->out, NULL, NULL), 2);
	if (!strstr(x->out.buf, want))
		fail_msg("want '%s' in: %s", want, x->out.buf);
	assert_non_null(strstr(x->out.buf, "\"code\": \"missing\""));
	assert_int_equal(access(x->mark, F_OK), -1);
}

/* mpirun may start nccl-tests (scope cluster) from its directory, the
 * node's copy checked as the run verb checks it, with nccl-tests' options
 * and typed -x NCCL_NAME=VALUE: allow-listed names, and the three llmnet
 * sets with their own types. Each refusal has an accepted control beside
 * it, which gets past the -x check to the program's (absent here). */
static void test_agent_exec__mpirun_x_for_nccl_tests(void **state)
{
	struct ex *x = *state;
	static const char *const ok_x[] = { "NCCL_IB_HCA==rxe0:1,rxe1:1", "NCCL_IB_GID_INDEX=3",
					     "NCCL_SOCKET_IFNAME=eth0", "NCCL_ALGO=Ring" };
	static const char *const bad_x[] = { "NCCL_IB_HCA=rxe0:1", "NCCL_IB_GID_INDEX=a",
					     "NCCL_SOCKET_IFNAME=e/th", "NCCL_ALGO=/tmp/x",
					     "NCCL_NET_PLUGIN=x", "LD_PRELOAD=x.so", "NCCL_ALGO" };
	size_t k;

	for (k = 0; k < ARRAY_SIZE(ok_x); k++)
		missing(x, NULL, "'/opt/nccl-tests/build/sendrecv_perf'", ok_x[k]);
	for (k = 0; k < ARRAY_SIZE(bad_x); k++) {
		char want[256];

		snprintf(want, sizeof(want), "mpirun option '-x' takes NCCL_NAME=VALUE with a name "
			 "on llmnet's NCCL allow-list and a plain value, not '%s'", bad_x[k]);
		refused(x, want, "--", "mpirun", "-np", "2", "-x", bad_x[k],
			NT_DIR "/sendrecv_perf", "-b", "8", NULL);
	}
	refused(x, "--sha256 is for llmnet's probes, not nccl-tests", "--sha256", x->sha, "--",
		"mpirun", "-np", "2", NT_DIR "/sendrecv_perf", NULL);
	refused(x, NT_DIR "/sendrecv_perf option '--op' is not allowed", "--", "mpirun", "-np",
		"2", NT_DIR "/sendrecv_perf", "--op", "x", NULL);
	refused(x, "mpirun may only start llmnet's probes", "--", "mpirun", "-np", "2",
		NT_DIR "/sh", NULL);
	/* the launcher's copy is checked as the run verb checks it: a folder
	 * another uid owns refuses it (this host's mpirun is never started
	 * here; the cluster tier runs a stand-in) */
	plant_nccl_tests(x);
	sh(x, "chown 4321 $R/opt/nccl-tests");
	refused(x, "llmnet runs '" NT_PROG "' only when root owns it", "--", "mpirun", "-np", "1", "-x",
		"NCCL_ALGO=Ring", NT_PROG, NULL);
}

/* nccl-tests runs by an absolute path only, its last name all_reduce_perf,
 * with the nccl stage's options only, and only from a file that root owns
 * and that no one else could have changed: every directory from the root
 * down root's, none writable by group or others, no link on the way. */
static void test_agent_exec__nccl_tests_only_from_a_root_owned_path(void **state)
{
	struct ex *x = *state;
	const char *own = "llmnet runs '" NT_PROG "' only when root owns it and every "
			  "directory above it, and no one else may write to them";

	plant_nccl_tests(x);
	/* names: not the bare name, no other program of that directory */
	refused(x, "probe 'all_reduce_perf' is not on the allow-list", "--", "all_reduce_perf",
		NULL);
	refused(x, "probe '" NT_DIR "/hypercube_perf' is not on the allow-list", "--",
		NT_DIR "/hypercube_perf", NULL);
	refused(x, "probe '" NT_DIR "/sh' is not on the allow-list", "--", NT_DIR "/sh", NULL);
	refused(x, "is not on the allow-list", "--", "/opt/nccl-tests/../nccl-tests/build/"
		"all_reduce_perf", NULL);
	refused(x, "is not on the allow-list", "--", "opt/nccl-tests/build/all_reduce_perf",
		NULL);
	/* arguments: the stage's options, typed */
	refused(x, NT_PROG " option '-t' is not allowed", "--", NT_PROG, "-t", "4", NULL);
	refused(x, NT_PROG " option '-b' takes an unsigned integer, not '1G'", "--", NT_PROG,
		"-b", "1G", NULL);
	refused(x, NT_PROG " option '-c' takes an unsigned integer, not 'nothing'", "--",
		NT_PROG, "-c", NULL);
	refused(x, "--sha256 is for mpirun's probe, not '" NT_PROG "'", "--sha256", x->sha,
		"--", NT_PROG, NULL);
	/* never from llmnet's own directory or below it (the controller writes
	 * there), and never with a name no node path may have */
	refused(x, "'/var/lib/llmnet/bin' is in llmnet's own directory (/var/lib/llmnet)", "--",
		"/var/lib/llmnet/bin/all_reduce_perf", NULL);
	refused(x, "'/var/lib/llmnet' is llmnet's own directory (/var/lib/llmnet)", "--",
		"/var/lib/llmnet/all_reduce_perf", NULL);
	refused(x, "'/var/lib/llmnet/restore' is in llmnet's own directory", "--",
		"/var/lib/llmnet/restore/all_reduce_perf", NULL);
	{
		char longname[300] = "/opt/";

		memset(longname + 5, 'n', 256);
		strcpy(longname + 261, "/all_reduce_perf");
		refused(x, "has a name longer than 255 bytes", "--", longname, NULL);
	}
	/* ownership: a directory, the file; modes */
	sh(x, "chown 4321 $R/opt/nccl-tests");
	refused(x, "'/opt/nccl-tests' is owned by uid 4321, not root: ", "--", NT_PROG, NULL);
	assert_non_null(strstr(x->out.buf, own));
	sh(x, "chown 0 $R/opt/nccl-tests && chown 4321 $R" NT_PROG);
	refused(x, "'" NT_PROG "' is owned by uid 4321, not root", "--", NT_PROG, NULL);
	sh(x, "chown 0 $R" NT_PROG " && chmod 0775 $R" NT_DIR);
	refused(x, "'" NT_DIR "' (owner uid 0) is writable by group or others (mode 0775): ",
		"--", NT_PROG, NULL);
	sh(x, "chmod 0755 $R" NT_DIR " && chmod 0757 $R" NT_PROG);
	refused(x, "'" NT_PROG "' (owner uid 0) is writable by group or others (mode 0757)",
		"--", NT_PROG, NULL);
	sh(x, "chmod 0644 $R" NT_PROG);
	refused(x, "'" NT_PROG "' is not executable (mode 0644)", "--", NT_PROG, NULL);
	sh(x, "chmod 0755 $R" NT_PROG " && chmod 0777 $R");
	refused(x, "'/' (owner uid 0) is writable by group or others (mode 0777)", "--", NT_PROG,
		NULL);
	/* links: a directory that leads out of the root, the file itself */
	sh(x, "chmod 0700 $R && cp $R" NT_PROG " $D/all_reduce_perf && "
	      "ln -s $D $R/opt/elsewhere && mkdir $R/opt/linked && "
	      "ln -s ../nccl-tests/build/all_reduce_perf $R/opt/linked/all_reduce_perf");
	fx_list_mtimes(x->root, &x->before);
	refused(x, "'/opt/elsewhere' is a symbolic link: llmnet runs nccl-tests only by a path "
		   "without links", "--", "/opt/elsewhere/all_reduce_perf", NULL);
	refused(x, "'/opt/linked/all_reduce_perf' is a symbolic link", "--",
		"/opt/linked/all_reduce_perf", NULL);
	/* absent: its own code, so the stage reports "not run" */
	missing(x, "/opt/nccl-tests/other/all_reduce_perf", "'/opt/nccl-tests/other/"
		"all_reduce_perf' is not installed ('/opt/nccl-tests/other' is missing)", NULL);
	missing(x, NT_DIR "2/all_reduce_perf", "is not installed", NULL);
}

/* The program in a root-owned directory runs, from the file checked,
 * with the stage's arguments. */
static void test_agent_exec__nccl_tests_runs_by_its_path(void **state)
{
	struct ex *x = *state;
	const char *args[] = { "run", "--timeout", "10", "--", NT_PROG, "-b", "1024", "-e", "4096",
			       "-f", "2", "-g", "2", "-c", "1", NULL };

	plant_nccl_tests(x);
	assert_int_equal(fx_agent(x->root, args, NULL, &x->out, NULL, NULL), 0);
	assert_non_null(strstr(x->out.buf, "\"path\": \"" NT_PROG "\""));
	assert_non_null(strstr(x->out.buf, "\"exit_status\": 0"));
	assert_int_equal(access(x->mark, F_OK), 0);
}

/* run --env (the nccl stage's launcher none): nccl-tests alone gets it;
 * NCCL variables by their types and LD_LIBRARY_PATH, each of its folders
 * walked as the program's is; the program sees those and PATH, nothing of
 * the agent's own environment. Each refusal beside the accepted run. */
static void test_agent_exec__nccl_tests_typed_environment(void **state)
{
	struct ex *x = *state;
	const char *args[] = { "run", "--timeout", "10", "--env", "NCCL_ALGO=Ring", "--env",
			       "LD_LIBRARY_PATH=/opt/py/lib:/opt/cuda/lib", "--", NT_PROG, "-g", "1",
			       NULL };
	struct ln_buf seen = LN_BUF_INIT, e = LN_BUF_INIT;
	char p[4096], script[256];

	plant_nccl_tests(x);
	snprintf(script, sizeof(script), "#!/bin/sh\nenv > %s\n", x->mark);
	snprintf(p, sizeof(p), "%s" NT_PROG, x->root);
	plant(p, script);
	sh(x, "mkdir -p $R/opt/py/lib $R/opt/cuda/lib && chmod 0755 $R/opt/py $R/opt/py/lib "
	      "$R/opt/cuda $R/opt/cuda/lib");
	fx_list_mtimes(x->root, &x->before);
	refused(x, "--env is for nccl-tests' programs, not 'ib_write_bw'", "--env", "NCCL_ALGO=Ring",
		"--", "ib_write_bw", "--help", NULL);
	refused(x, "--env 'LD_PRELOAD=/opt/py/lib/x.so' is not allowed", "--env",
		"LD_PRELOAD=/opt/py/lib/x.so", "--", NT_PROG, NULL);
	refused(x, "--env 'NCCL_NET_PLUGIN=x' is not allowed", "--env", "NCCL_NET_PLUGIN=x", "--",
		NT_PROG, NULL);
	refused(x, "LD_LIBRARY_PATH '/opt/py/lib::/opt/cuda/lib' has an empty part", "--env",
		"LD_LIBRARY_PATH=/opt/py/lib::/opt/cuda/lib", "--", NT_PROG, NULL);
	refused(x, "'opt/py/lib' is not an absolute path (LD_LIBRARY_PATH)", "--env", "LD_LIBRARY_PATH=opt/py/lib", "--", NT_PROG,
		NULL);
	refused(x, "'/opt/none/lib' is not installed ('/opt/none' is missing) (LD_LIBRARY_PATH)",
		"--env", "LD_LIBRARY_PATH=/opt/none/lib", "--", NT_PROG, NULL);
	sh(x, "chown 4321 $R/opt/cuda");
	refused(x, "'/opt/cuda' is owned by uid 4321, not root: llmnet runs '/opt/cuda/lib' only "
		"when root owns it", "--env", "LD_LIBRARY_PATH=/opt/py/lib:/opt/cuda/lib", "--",
		NT_PROG, NULL);
	sh(x, "chown 0 $R/opt/cuda");
	setenv("LLMNET_TEST_AGENT_ONLY", "1", 1);
	assert_int_equal(fx_agent(x->root, args, NULL, &x->out, NULL, NULL), 0);
	unsetenv("LLMNET_TEST_AGENT_ONLY");
	assert_non_null(strstr(x->out.buf, "\"exit_status\": 0"));
	assert_int_equal(ln_file_read(x->mark, &seen, &e), 0);
	assert_non_null(strstr(seen.buf, "LD_LIBRARY_PATH=/opt/py/lib:/opt/cuda/lib\n"));
	assert_non_null(strstr(seen.buf, "NCCL_ALGO=Ring\n"));
	assert_non_null(strstr(seen.buf, "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n"));
	assert_null(strstr(seen.buf, "LLMNET_TEST_AGENT_ONLY"));
	ln_test_release(&seen, &e);
}

/* The io probe the agent shipped with runs, from its exact path: here it
 * refuses a directory that is not a mount point, which proves it ran. */
static void test_agent_exec__shipped_io_probe_runs(void **state)
{
	struct ex *x = *state;
	/* a read of a device (the probe's own checks); a --mount here would
	 * be refused by the agent: no cluster mounted x->dir (test_agent_run) */
	const char *args[] = { "run", "--timeout", "10", "--", "/var/lib/llmnet/bin/llmnet-probe-io",
			       "--device", "/dev/llmnet-test-no-such-device", "--size", "4194304",
			       NULL };
	struct ln_buf img = LN_BUF_INIT, e = LN_BUF_INIT;
	char p[4096];

	assert_int_equal(ln_file_read(BUILD_DIR "/probes/io_probe", &img, &e), 0);
	snprintf(p, sizeof(p), "%s/var/lib/llmnet/bin/llmnet-probe-io", x->root);
	assert_int_equal(ln_file_write_atomic(p, img.buf, img.len, 0755, &e), 0);
	assert_int_equal(fx_agent(x->root, args, NULL, &x->out, NULL, NULL), 0);
	assert_non_null(strstr(x->out.buf, "\"path\": \"/var/lib/llmnet/bin/llmnet-probe-io\""));
	assert_non_null(strstr(x->out.buf, "\"exit_status\": 1"));
	assert_non_null(strstr(x->out.buf, "is not a block device"));
	ln_test_release(&img, &e);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test_setup_teardown(test_agent_exec__bind_addresses_are_numeric, setup,
					teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__scontrol_in_three_forms_only, setup,
					teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__mca_that_launches_is_refused, setup,
					teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__mca_of_the_other_version_is_refused,
					setup, teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__nccl_environment_is_allow_listed, setup,
					teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__loader_variables_are_refused, setup,
					teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__impostor_probes_are_refused, setup,
					teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__mpicc_builds_only_the_shipped_source,
					setup, teardown),
	cmocka_unit_test_setup_teardown(
		test_agent_exec__system_tools_by_name_and_typed_arguments, setup, teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__shipped_io_probe_runs, setup,
					teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__mpirun_x_for_nccl_tests, setup, teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__nccl_tests_only_from_a_root_owned_path,
					setup, teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__nccl_tests_runs_by_its_path, setup,
					teardown),
	cmocka_unit_test_setup_teardown(test_agent_exec__nccl_tests_typed_environment, setup,
					teardown),
)
