/* SPDX-License-Identifier: MIT */
/*
 * llmnet MPI probe: pushed to the launcher node as source, built there
 * with that node's mpicc (so it matches the installed Open MPI), copied
 * to every node at the same path and started by mpirun over the installed
 * hostfile. It proves that every rank starts where the hostfile says,
 * that an allreduce gives the exact sum, and how long it takes.
 *
 *   mpi_probe [--elements N] [--expect-ranks N] [--self-test-wrong-sum]
 *
 * Rank 0 prints, for llmnet's parser (orchestrator/validate/parse/parse_mpi.c):
 *   llmnet-mpi-probe 1 / ranks N / rank R host H (each) /
 *   allreduce elements E seconds S result ok|wrong / result pass|fail
 * and "error: ..." lines saying what is wrong. Exit 0 on pass, 1 on fail.
 * --self-test-wrong-sum makes rank 0 add 1 to one element of its result,
 * so that the check itself can be shown to catch a wrong sum.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long parse_long(const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > max)
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	long elements = 1 << 18, expect = 0, i, wrong = 0, total_wrong = 0, first_bad = -1;
	int rank, size, len, inject = 0, ok = 1, a;
	char host[MPI_MAX_PROCESSOR_NAME];
	char *hosts = NULL;
	long long *buf, *res;
	double t0, dt, worst;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--elements") && a + 1 < argc) {
			elements = parse_long(argv[++a], 1, 1L << 28);
		} else if (!strcmp(argv[a], "--expect-ranks") && a + 1 < argc) {
			expect = parse_long(argv[++a], 1, 1L << 24);
		} else if (!strcmp(argv[a], "--self-test-wrong-sum")) {
			inject = 1;
		} else {
			if (!rank)
				printf("llmnet-mpi-probe 1\nerror: unknown argument '%s'\nresult fail\n",
				       argv[a]);
			MPI_Finalize();
			return 1;
		}
		if (elements < 0 || expect < 0) {
			if (!rank)
				printf("llmnet-mpi-probe 1\nerror: bad value for '%s'\nresult fail\n",
				       argv[a - 1]);
			MPI_Finalize();
			return 1;
		}
	}
	memset(host, 0, sizeof(host));
	MPI_Get_processor_name(host, &len);
	if (!rank) {
		hosts = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
		if (!hosts)
			MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
		   0, MPI_COMM_WORLD);

	buf = malloc((size_t)elements * sizeof(*buf));
	res = malloc((size_t)elements * sizeof(*res));
	if (!buf || !res)
		MPI_Abort(MPI_COMM_WORLD, 2);
	/* Integers, so the expected sum is exact: rank r contributes
	 * (r + 1) * (i % 7 + 1), which sums to n(n+1)/2 * (i % 7 + 1). */
	for (i = 0; i < elements; i++)
		buf[i] = (long long)(rank + 1) * (i % 7 + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	MPI_Allreduce(buf, res, (int)elements, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	dt = MPI_Wtime() - t0;
	if (inject && !rank)
		res[elements / 2] += 1;
	for (i = 0; i < elements; i++) {
		long long want = (long long)size * (size + 1) / 2 * (i % 7 + 1);

		if (res[i] != want) {
			if (first_bad < 0)
				first_bad = i;
			wrong++;
		}
	}
	MPI_Reduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (wrong)
		fprintf(stderr, "error: rank %d element %ld is %lld, expected %lld\n", rank,
			first_bad, res[first_bad],
			(long long)size * (size + 1) / 2 * (first_bad % 7 + 1));
	if (!rank) {
		printf("llmnet-mpi-probe 1\nranks %d\n", size);
		for (a = 0; a < size; a++)
			printf("rank %d host %s\n", a, hosts + (size_t)a * MPI_MAX_PROCESSOR_NAME);
		printf("allreduce elements %ld seconds %.6f result %s\n", elements, worst,
		       total_wrong ? "wrong" : "ok");
		if (total_wrong) {
			printf("error: %ld wrong elements in the allreduce result\n", total_wrong);
			ok = 0;
		}
		if (expect && expect != size) {
			printf("error: %ld ranks expected from the hostfile, %d started\n", expect,
			       size);
			ok = 0;
		}
		printf("result %s\n", ok ? "pass" : "fail");
		fflush(stdout);
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(buf);
	free(res);
	free(hosts);
	MPI_Finalize();
	return ok ? 0 : 1;
}
