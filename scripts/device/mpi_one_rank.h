/* SPDX-License-Identifier: MIT */
/*
 * One rank, no MPI: just enough of mpi.h for agents/probes/nccl_mpi_probe.c
 * to build with cc and run as the only rank on a machine without MPI
 * (scripts/device/gpu-proof.sh, issue 26 point 6). Every collective of one
 * rank copies its own buffer; nothing here is used by llmnet itself or by
 * a test.
 */
#ifndef LN_MPI_ONE_RANK_H
#define LN_MPI_ONE_RANK_H

#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Info;

#define MPI_SUCCESS 0
#define MPI_COMM_WORLD 0
#define MPI_COMM_TYPE_SHARED 1
#define MPI_INFO_NULL 0
#define MPI_MAX 0
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_BYTE 1
#define MPI_CHAR 1
#define MPI_INT ((int)sizeof(int))
#define MPI_DOUBLE ((int)sizeof(double))

static inline int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }
static inline int MPI_Finalize(void) { return 0; }
static inline int MPI_Comm_rank(MPI_Comm c, int *r) { (void)c; *r = 0; return 0; }
static inline int MPI_Comm_size(MPI_Comm c, int *n) { (void)c; *n = 1; return 0; }
static inline int MPI_Comm_free(MPI_Comm *c) { (void)c; return 0; }
static inline int MPI_Barrier(MPI_Comm c) { (void)c; return 0; }
static inline int MPI_Comm_split_type(MPI_Comm c, int t, int k, MPI_Info i, MPI_Comm *out)
{
	(void)c; (void)t; (void)k; (void)i;
	*out = 0;
	return 0;
}
static inline int MPI_Get_processor_name(char *name, int *len)
{
	if (gethostname(name, MPI_MAX_PROCESSOR_NAME) < 0)
		strcpy(name, "localhost");
	name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
	*len = (int)strlen(name);
	return 0;
}
static inline double MPI_Wtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
static inline int MPI_Allreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op,
				MPI_Comm c)
{
	(void)op; (void)c;
	if (in != out)
		memmove(out, in, (size_t)n * (size_t)t);
	return 0;
}
static inline int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm c)
{
	(void)buf; (void)n; (void)t; (void)root; (void)c;
	return 0;
}
static inline int MPI_Gather(const void *in, int n, MPI_Datatype t, void *out, int m,
			     MPI_Datatype u, int root, MPI_Comm c)
{
	(void)m; (void)u; (void)root; (void)c;
	if (in != out)
		memmove(out, in, (size_t)n * (size_t)t);
	return 0;
}

#endif
