/* SPDX-License-Identifier: MIT */
/*
 * Run a command N times and print the median CPU time (user + system,
 * microsecond resolution) and the largest peak RSS, from wait4()'s
 * rusage of each child. A small C parent keeps the figure honest: a child
 * forked from a big process (Python) would count the parent's pages in
 * its peak until it execs.
 *   runstat N CMD ARGS...   ->  "cpu_s=0.1234 maxrss_kib=4567"
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	double cpu[101];
	long maxrss = 0;
	int n, i;

	if (argc < 3 || (n = atoi(argv[1])) < 1 || n > 101) {
		fprintf(stderr, "usage: runstat N(1-101) CMD ARGS...\n");
		return 64;
	}
	for (i = 0; i < n; i++) {
		struct rusage ru;
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			if (null >= 0)
				dup2(null, STDOUT_FILENO);
			execvp(argv[2], argv + 2);
			perror(argv[2]);
			_exit(127);
		}
		if (wait4(pid, &status, 0, &ru) < 0) {
			perror("wait4");
			return 1;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "runstat: %s failed (status %d)\n", argv[2], status);
			return 1;
		}
		cpu[i] = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss;
	}
	qsort(cpu, (size_t)n, sizeof(cpu[0]), cmp);
	printf("cpu_s=%.4f maxrss_kib=%ld\n", cpu[n / 2], maxrss);
	return 0;
}
