/* SPDX-License-Identifier: MIT */
/*
 * The fake cluster's MPI side (validate_fake.h includes it where its
 * helpers are defined): mpicc building the probes, mpirun starting them
 * or nccl-tests, and the sha256 each probe run must carry.
 */
#ifndef LN_TEST_VALIDATE_FAKE_MPI_H
#define LN_TEST_VALIDATE_FAKE_MPI_H

/* mpicc building the MPI or the NCCL probe from its uploaded source. */
static inline void fake_mpicc(struct fake *f, size_t node, int nccl, const char *const *argv,
		       struct ln_probe_result *out)
{
	struct ln_buf *bin = nccl ? &f->nccl_bin[node] : &f->mpi_bin[node];
	int has_src;

	pthread_mutex_lock(&f->lock);
	(*(nccl ? &f->nccl_mpicc_runs[node] : &f->mpicc_runs[node]))++;
	has_src = nccl ? f->nccl_src_puts[node] &&
				 !strcmp(argv[4], LN_PROBE_SRC_DIR "/nccl_mpi_probe.c")
		       : f->src_puts[node] != 0;
	if (f->no_mpicc[node]) {
		out->exit_status = 127;
		ln_buf_addstr(&out->output, "sh: 1: mpicc: not found\n");
	} else if (!has_src) {
		out->exit_status = 1;
		ln_buf_addf(&out->output, "gcc: error: %s: No such file\n",
			    nccl ? "nccl_mpi_probe.c" : "mpi_probe.c");
	} else {
		/* the same "binary" on every node, unless that node's
		 * mpicc is faked (odd_build) */
		ln_buf_reset(bin);
		ln_buf_addf(bin, "\177ELF %s probe built by mpicc\n", nccl ? "nccl" : "mpi");
		if (f->odd_build[node])
			ln_buf_addf(bin, "and n%zu's own payload\n", node + 1);
		*(nccl ? &f->has_nccl_bin[node] : &f->has_mpi_bin[node]) = 1;
	}
	pthread_mutex_unlock(&f->lock);
}

/* mpirun starting nccl-tests: recorded, and its report from -b to -e
 * doubling, time 40 us + 1 us per rank at every size. */
static inline void fake_mpirun_tests(struct fake *f, const char *const *argv,
				     struct ln_probe_result *out)
{
	long np = atol(ln_test_arg_after(argv, "-np")), r;
	unsigned long long b = strtoull(ln_test_arg_after(argv, "-b"), NULL, 10);
	unsigned long long e = strtoull(ln_test_arg_after(argv, "-e"), NULL, 10);
	size_t nodes = (size_t)(np / 8);
	double bw = nodes <= MAXN && f->tests_busbw[nodes] > 0 ? f->tests_busbw[nodes] : 10.0;

	for (r = 0; argv[r]; r++)
		snprintf(f->nccl_mpirun_tests + strlen(f->nccl_mpirun_tests),
			 sizeof(f->nccl_mpirun_tests) - strlen(f->nccl_mpirun_tests), "%s%s",
			 r ? " " : "", argv[r]);
	snprintf(f->nccl_mpirun_tests + strlen(f->nccl_mpirun_tests),
		 sizeof(f->nccl_mpirun_tests) - strlen(f->nccl_mpirun_tests), "\n");
	ln_buf_addstr(&out->output, "# nThread 1 nGpus 1\n#\n# Using devices\n");
	for (r = 0; r < np; r++)
		ln_buf_addf(&out->output, "#  Rank %2ld Group  0 Pid 4100 on n%ld device %2ld "
			    "[0x1] H100\n", r, f->tests_one_host ? 1 : r / 8 + 1, r % 8);
	for (; b && b <= e; b *= 2)
		ln_buf_addf(&out->output, "%12llu %12llu float sum -1 %.2f 9.00 %.2f %ld %.2f 9.00 "
			    "%.2f 0\n", b, b / 4, 40.0 + (double)np, bw, b == e ? f->tests_wrong : 0,
			    41.0 + (double)np, bw);
	ln_buf_addf(&out->output, "# Out of bounds values : %s\n",
		    f->tests_wrong ? "1 FAILED" : "0 OK");
}

/* Whether argv starts nccl-tests (a program ending _perf). */
static inline int starts_tests(const char *const *argv)
{
	size_t k, n;

	for (k = 0; argv[k]; k++)
		if ((n = strlen(argv[k])) > 5 && !strcmp(argv[k] + n - 5, "_perf"))
			return 1;
	return 0;
}

/* mpirun: the NCCL probe (one rank per GPU) or the MPI probe, a
 * preflight onto one host or the full run over the hostfile. */
static inline void fake_mpirun(struct fake *f, size_t node, const char *const *argv,
			struct ln_probe_result *out)
{
	long np = atol(ln_test_arg_after(argv, "-np")), r;
	const char *host = ln_test_arg_after(argv, "--host");

	if (!ln_test_arg_after(argv, "--hostfile") && !host)
		problem(f, "no hostfile or host", argv);
	if (ln_test_arg_after(argv, "--bytes")) {
		/* the NCCL probe: one rank per GPU (8 per node here) */
		const char *ppr = ln_test_arg_after(argv, "--map-by");

		if (f->nccl_np ? (ppr || np != f->nccl_np) :
		    (!ppr || strcmp(ppr, "ppr:8:node") || np != 8 * (long)f->n) ||
		    atol(ln_test_arg_after(argv, "--expect-ranks")) != np ||
		    (f->nccl_hosts ? !host || strcmp(host, f->nccl_hosts) ||
				     ln_test_arg_after(argv, "--hostfile") :
				     !ln_test_arg_after(argv, "--hostfile")))
			problem(f, "nccl probe not one rank per GPU", argv);
		if (!same_bin_everywhere(f, 1, node))
			problem(f, "a node lacks the launcher's nccl probe", argv);
		if (!ln_test_arg_after(argv, "--op"))
			problem(f, "nccl probe without --op", argv);
		snprintf(f->nccl_op, sizeof(f->nccl_op), "%s", ln_test_arg_after(argv, "--op"));
		f->nccl_argv[0] = '\0';
		for (r = 0; argv[r]; r++)
			snprintf(f->nccl_argv + strlen(f->nccl_argv),
				 sizeof(f->nccl_argv) - strlen(f->nccl_argv), " %s", argv[r]);
		ln_buf_addf(&out->output, "llmnet-nccl-probe 2\nop %s ranks %ld bytes %s\n",
			    f->nccl_op, np, ln_test_arg_after(argv, "--bytes"));
		for (r = 0; r < np; r++)
			ln_buf_addf(&out->output, "rank %ld host n%ld device %ld\n", r,
				    r / 8 + 1, r % 8);
		if (f->nccl_result[0]) {
			out->exit_status = strstr(f->nccl_result, "result pass\n") ? 0 : 1;
			ln_buf_addstr(&out->output, f->nccl_result);
		} else {
			/* every size from --min-bytes (if given) to --bytes, doubling */
			const char *lo = ln_test_arg_after(argv, "--min-bytes");
			unsigned long long sz = strtoull(lo ? lo : ln_test_arg_after(argv, "--bytes"),
							 NULL, 10),
					   hi = strtoull(ln_test_arg_after(argv, "--bytes"), NULL, 10);

			for (; sz && sz <= hi; sz *= 2)
				ln_buf_addf(&out->output, "size %llu time_us 9800.5 algbw 109.56 "
					    "busbw %.2f wrong 0\n", sz,
					    109.56 * 2 * (double)(np - 1) / (double)np);
			ln_buf_addstr(&out->output, "result pass\n");
		}
		return;
	}
	if (!same_bin_everywhere(f, 0, node))
		problem(f, "a node lacks the launcher's mpi probe", argv);
	if (host && f->no_ssh[node][(size_t)atoi(host + 1) - 1]) {
		out->exit_status = 1;
		ln_buf_addf(&out->output, "ssh: Could not resolve hostname %.*s: Name or "
			    "service not known\nORTE was unable to reliably start one or more "
			    "daemons.\n", (int)(strchr(host, ':') - host), host);
		return;
	}
	ln_buf_addf(&out->output, "llmnet-mpi-probe 1\nranks %ld\n", np);
	for (r = 0; r < np; r++)
		ln_buf_addf(&out->output, "rank %ld host n%ld\n", r, r % (long)f->n + 1);
	ln_buf_addstr(&out->output, "allreduce elements 262144 seconds 0.004 result ok\n"
				    "result pass\n");
}

/* mpirun must name the SHA-256 of the probe it starts (the node's copy,
 * which the install checked is the launcher's build); nothing else may. */
static inline void check_sha256(struct fake *f, size_t node, const char *const *argv,
			 const char *sha256)
{
	char want[65] = "";

	pthread_mutex_lock(&f->lock);
	if (!strcmp(argv[0], "mpirun") && !starts_tests(argv)) {	/* nccl-tests: no hash */
		const struct ln_buf *b = ln_test_arg_after(argv, "--bytes") ? &f->nccl_bin[node] :
								   &f->mpi_bin[node];

		ln_sha256_hex(b->buf, b->len, want);
	}
	pthread_mutex_unlock(&f->lock);
	if (want[0] ? !sha256 || strcmp(sha256, want) : sha256 != NULL)
		problem(f, want[0] ? "mpirun without its probe's sha256" :
				     "a sha256 passed to a program mpirun does not start", argv);
}

#endif
