/* SPDX-License-Identifier: MIT */
/*
 * perftest on the run verb's allow-list for GPUDirect RDMA (issue 26,
 * point 4): the bandwidth tools take --use_cuda_bus_id with a PCI bus id
 * in sysfs's form only and --use_cuda_dmabuf; the latency tools neither
 * (--help, for the binding, both: issue 27). A stage's perftest_dir runs the tools by their absolute
 * path, only from a file root owns with every directory above it, none
 * writable by others, no link on the way, from the file checked. Each
 * refusal runs nothing and changes nothing; the controls run.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#define PT_DIR "/opt/perftest/bin"
#define PT_BW PT_DIR "/ib_write_bw"

struct pt {
	char *root;		/* the node's fixture tree */
	char mark[128];		/* what the planted perftest leaves when it runs */
	char dir[64];
	struct ln_buf before, out;
};

static void sh(const struct pt *x, const char *cmd)
{
	setenv("R", x->root, 1);
	assert_int_equal(system(cmd), 0);
}

/* The planted perftest: a script that records its arguments in the mark. */
static int setup(void **state)
{
	struct pt *x = calloc(1, sizeof(*x));
	struct ln_buf e = LN_BUF_INIT;
	char p[4096], script[256];

	assert_non_null(x);
	ln_buf_init(&x->before, 0);
	ln_buf_init(&x->out, 0);
	x->root = fx_build("node-target");
	assert_non_null(x->root);
	strcpy(x->dir, "/tmp/ln-pt-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->mark, sizeof(x->mark), "%s/ran", x->dir);
	snprintf(script, sizeof(script), "#!/bin/sh\necho \"$@\" > %s\n", x->mark);
	sh(x, "mkdir -p $R" PT_DIR " && chmod 0755 $R/opt $R/opt/perftest $R" PT_DIR);
	snprintf(p, sizeof(p), "%s" PT_BW, x->root);
	assert_int_equal(ln_file_write_atomic(p, script, strlen(script), 0755, &e), 0);
	fx_list_mtimes(x->root, &x->before);
	ln_buf_release(&e);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct pt *x = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->dir);
	assert_int_equal(system(cmd), 0);
	fx_remove(x->root);
	ln_test_release(&x->before, &x->out);
	free(x);
	return 0;
}

static void refused_argv(struct pt *x, const char *want, const char *const *rest)
{
	const char *args[40] = { "run", "--timeout", "5", "--" };
	struct ln_buf after = LN_BUF_INIT;
	int n = 4;

	while (n < 39 && (args[n] = *rest++))
		n++;
	args[n] = NULL;
	assert_int_equal(fx_agent(x->root, args, NULL, &x->out, NULL, NULL), 2);
	if (!strstr(x->out.buf, want))
		fail_msg("want '%s' in: %s", want, x->out.buf);
	assert_null(strstr(x->out.buf, "exit_status"));
	assert_int_equal(access(x->mark, F_OK), -1);
	fx_list_mtimes(x->root, &after);
	assert_string_equal(x->before.buf, after.buf);
	ln_buf_release(&after);
}

#define refused(x, want, ...) refused_argv(x, want, (const char *const[]){ __VA_ARGS__ })

/* The run with args (after "--") exits 0, and the planted perftest saw want. */
static void ran(struct pt *x, const char *want, const char *const *args)
{
	const char *full[40] = { "run", "--timeout", "10", "--" };
	struct ln_buf seen = LN_BUF_INIT, e = LN_BUF_INIT;
	int n = 4;

	while (n < 39 && (full[n] = *args++))
		n++;
	full[n] = NULL;
	assert_int_equal(fx_agent(x->root, full, NULL, &x->out, NULL, NULL), 0);
	assert_non_null(strstr(x->out.buf, "\"path\": \"" PT_BW "\""));
	assert_int_equal(ln_file_read(x->mark, &seen, &e), 0);
	assert_string_equal(seen.buf, want);
	unlink(x->mark);
	ln_test_release(&seen, &e);
}

static void test_agent_perftest__cuda_options_typed(void **state)
{
	struct pt *x = *state;

	refused(x, "ib_write_bw option '--use_cuda_bus_id' takes a PCI bus id (0000:1b:00.0), "
		"not '1b:00.0'", "ib_write_bw", "--use_cuda_bus_id", "1b:00.0", NULL);
	refused(x, "not '0000:1B:00.0'", "ib_write_bw", "--use_cuda_bus_id", "0000:1B:00.0", NULL);
	refused(x, "not '0000:1b:00.00'", "ib_send_bw", "--use_cuda_bus_id", "0000:1b:00.00",
		NULL);
	refused(x, "not '0000-1b:00.0'", "ib_send_bw", "--use_cuda_bus_id", "0000-1b:00.0", NULL);
	/* the CUDA index is not NVML's order: never passed */
	refused(x, "ib_write_bw option '--use_cuda' is not allowed", "ib_write_bw", "--use_cuda",
		"0", NULL);
	/* latency runs from host memory */
	refused(x, "ib_write_lat option '--use_cuda_bus_id' is not allowed", "ib_write_lat",
		"--use_cuda_bus_id", "0000:1b:00.0", NULL);
	refused(x, "ib_send_lat option '--use_cuda_dmabuf' is not allowed", "ib_send_lat",
		"--use_cuda_dmabuf", NULL);
}

/* From perftest_dir: by its clean absolute path, the four tools only, the
 * file and every directory above it root's and writable by no one else. */
static void test_agent_perftest__dir_only_root_owned(void **state)
{
	struct pt *x = *state;

	refused(x, "probe '" PT_DIR "/ib_read_bw' is not on the allow-list", PT_DIR "/ib_read_bw",
		NULL);
	refused(x, "probe '" PT_DIR "/sh' is not on the allow-list", PT_DIR "/sh", NULL);
	refused(x, "is not on the allow-list", "opt/perftest/bin/ib_write_bw", NULL);
	refused(x, "is not on the allow-list", "/opt/perftest/../perftest/bin/ib_write_bw", NULL);
	refused(x, PT_BW " option '--foo' is not allowed", PT_BW, "--foo", NULL);
	refused(x, "'/var/lib/llmnet/bin' is in llmnet's own directory", "/var/lib/llmnet/bin/"
		"ib_write_bw", NULL);
	sh(x, "chown 4321 $R/opt/perftest");
	refused(x, "'/opt/perftest' is owned by uid 4321, not root", PT_BW, "--help", NULL);
	sh(x, "chown 0 $R/opt/perftest && chmod 0775 $R" PT_DIR);
	refused(x, "'" PT_DIR "' (owner uid 0) is writable by group or others (mode 0775)", PT_BW,
		"--help", NULL);
	sh(x, "chmod 0755 $R" PT_DIR " && chmod 0757 $R" PT_BW);
	refused(x, "'" PT_BW "' (owner uid 0) is writable by group or others (mode 0757)", PT_BW,
		"--help", NULL);
	sh(x, "chmod 0755 $R" PT_BW " && mkdir $R/opt/linked && ln -s ../perftest/bin/ib_write_bw "
	      "$R/opt/linked/ib_write_bw");
	fx_list_mtimes(x->root, &x->before);
	refused(x, "'/opt/linked/ib_write_bw' is a symbolic link", "/opt/linked/ib_write_bw",
		"--help", NULL);
}

/* The controls: --help, and a GPU run with dma-buf, from perftest_dir;
 * the system tool by name takes the same options. */
static void test_agent_perftest__cuda_run_from_dir(void **state)
{
	struct pt *x = *state;

	ran(x, "--help\n", (const char *const[]){ PT_BW, "--help", NULL });
	ran(x, "-d mlx5_0 -i 1 -s 1048576 -R -F --use_cuda_bus_id 0000:1b:00.0 --use_cuda_dmabuf "
	       "--report_gbits 10.0.0.1\n",
	    (const char *const[]){ PT_BW, "-d", "mlx5_0", "-i", "1", "-s", "1048576", "-R", "-F",
				   "--use_cuda_bus_id", "0000:1b:00.0", "--use_cuda_dmabuf",
				   "--report_gbits", "10.0.0.1", NULL });
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test_setup_teardown(test_agent_perftest__cuda_options_typed, setup, teardown),
	cmocka_unit_test_setup_teardown(test_agent_perftest__dir_only_root_owned, setup, teardown),
	cmocka_unit_test_setup_teardown(test_agent_perftest__cuda_run_from_dir, setup, teardown),
)
