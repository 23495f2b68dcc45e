/* SPDX-License-Identifier: MIT */
/*
 * The fake cluster's binding (issue 27), included by validate_fake.h
 * after struct fake and problem(): which port an rping client leaves by,
 * perftest's --help as two perftest releases print it, and the check
 * that each perftest end is bound to its own port.
 */
#ifndef LN_TEST_VALIDATE_FAKE_BIND_H
#define LN_TEST_VALIDATE_FAKE_BIND_H

/* The port an rping client leaves by: its -I address's (which must be
 * its own node's), else the route's pick: the server's rail, or rxe0
 * when the rails share a subnet. */
static inline int rping_client_rail(struct fake *f, size_t node, const char *const *argv,
				    int server_rail)
{
	const char *src = ln_test_arg_after(argv, "-I");

	if (src && node_of_ip(src) != node)
		problem(f, "rping -I names another node's address", argv);
	if (src)
		return !strncmp(src, "10.0.1.", 7);
	return f->shared_subnet ? 0 : server_rail;
}

/* perftest's --help, the lines about connections, as perftest 4.5-0.17
 * (Debian 12) and a later perftest with --bind_source_ip print them. */
static const char perf_help_old[] =
	" Usage:\n   ib_write_bw            start a server and wait for connection\n"
	"   ib_write_bw <host>     connect to server at <host>\n\n Options:\n"
	"  -p, --port=<port>  Listen on/connect to port <port> (default 18515)\n"
	"  -R, --rdma_cm  Connect QPs with rdma_cm and run test on those QPs\n"
	"  -x, --gid-index=<index>  Test uses GID with GID index (Default : IB - no gid . "
	"ETH - 0)\n      --source_ip  Source port for the rdma_cm connection\n";
static const char perf_help_new[] =
	"  -R, --rdma_cm  Connect QPs with rdma_cm and run test on those QPs\n"
	"      --bind_source_ip  Source IP of the interface used for connection "
	"establishment. By default taken from routing table.\n";

static inline int is_help(const char *const *argv)
{
	return !strncmp(argv[0], "ib_", 3) && argv[1] && !strcmp(argv[1], "--help") && !argv[2];
}

/* perftest's --help on node (or the agent's refusal, help_refused). */
static inline int fake_perftest_help(struct fake *f, size_t node, const char *const *argv,
				     struct ln_probe_result *out, struct ln_buf *err)
{
	pthread_mutex_lock(&f->lock);
	f->help_runs[node]++;
	pthread_mutex_unlock(&f->lock);
	if (f->help_refused[node]) {
		ln_buf_addf(err, "agent on 'n%zu' refused 'run': run: %s option '--help' is not "
			    "allowed", node + 1, argv[0]);
		return -LN_EREQUEST;
	}
	ln_buf_addstr(&out->output, perf_help_old);
	if (f->bind_source[node])
		ln_buf_addstr(&out->output, perf_help_new);
	out->exit_status = 1;	/* perftest's --help exits 1 */
	return 0;
}

/* Each end bound to its own port (issue 27): over RDMA CM only where the
 * node's perftest has --bind_source_ip, and then from the address of the
 * port -d names (without, -d binds the data path). */
static inline void perf_bound_ok(struct fake *f, size_t node, const char *const *argv)
{
	const char *src = ln_test_arg_after(argv, "--bind_source_ip");
	char own[32];
	int i, rdma_cm = 0;

	snprintf(own, sizeof(own), "10.0.%d.%zu", !strcmp(ln_test_arg_after(argv, "-d"), "rxe1"),
		 node + 1);
	for (i = 0; argv[i]; i++)
		rdma_cm |= !strcmp(argv[i], "-R");
	if (rdma_cm) {
		if (!f->bind_source[node])
			problem(f, "-R where perftest lacks --bind_source_ip", argv);
		else if (!src || strcmp(src, own))
			problem(f, "-R not bound to the port's own address", argv);
	} else if (src) {
		problem(f, "--bind_source_ip without -R", argv);
	}
}

#endif
