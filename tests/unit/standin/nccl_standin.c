/* SPDX-License-Identifier: MIT */
/*
 * STAND-IN for libnccl, built by the tests only: NOT NCCL. It implements
 * the handful of calls the NCCL probe makes, summing float buffers on the
 * host, so the probe's wiring can be tested without a GPU. STANDIN_NCCL
 * selects a fault: "wrong" returns a wrong sum in one element of the last
 * rank, "error" makes ncclAllReduce fail with ncclUnhandledCudaError.
 * Built with -DSTANDIN_NO_ALLREDUCE it lacks the ncclAllReduce symbol.
 */
#include <stdlib.h>
#include <string.h>

struct comm {
	int rank, nranks;
};

struct call {
	const float *send;
	float *recv;
	size_t count;
};

#define MAXR 64
static struct call queued[MAXR];
static int nqueued, in_group;

int ncclGetVersion(int *v);
int ncclCommInitAll(struct comm **comms, int n, const int *devs);
int ncclCommDestroy(struct comm *c);
int ncclGroupStart(void);
int ncclGroupEnd(void);
const char *ncclGetErrorString(int r);
#ifndef STANDIN_NO_ALLREDUCE
int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, struct comm *c,
		  void *stream);
#endif

static int mode(const char *m)
{
	const char *e = getenv("STANDIN_NCCL");

	return e && !strcmp(e, m);
}

int ncclGetVersion(int *v)
{
	*v = 99999;	/* no real NCCL release has this number */
	return 0;
}

int ncclCommInitAll(struct comm **comms, int n, const int *devs)
{
	int i;

	(void)devs;
	if (n < 1 || n > MAXR)
		return 4;	/* ncclInvalidArgument */
	for (i = 0; i < n; i++) {
		comms[i] = calloc(1, sizeof(**comms));
		if (!comms[i])
			return 1;
		comms[i]->rank = i;
		comms[i]->nranks = n;
	}
	return 0;
}

int ncclCommDestroy(struct comm *c)
{
	free(c);
	return 0;
}

/* Sum every queued rank's send buffer into every recv buffer. */
static void flush(void)
{
	size_t i, count = nqueued ? queued[0].count : 0;
	int r;

	for (i = 0; i < count; i++) {
		float s = 0;

		for (r = 0; r < nqueued; r++)
			s += queued[r].send[i];
		for (r = 0; r < nqueued; r++)
			queued[r].recv[i] = s;
	}
	if (mode("wrong") && nqueued && count)
		queued[nqueued - 1].recv[count - 1] += 1.0f;
	nqueued = 0;
}

int ncclGroupStart(void)
{
	in_group++;
	return 0;
}

int ncclGroupEnd(void)
{
	if (in_group > 0 && --in_group == 0)
		flush();
	return 0;
}

#ifndef STANDIN_NO_ALLREDUCE
int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, struct comm *c,
		  void *stream)
{
	(void)stream;
	if (mode("error"))
		return 1;	/* ncclUnhandledCudaError */
	if (type != 7 || op != 0 || nqueued >= MAXR || !c)
		return 4;
	queued[nqueued].send = send;
	queued[nqueued].recv = recv;
	queued[nqueued].count = count;
	nqueued++;
	if (!in_group)
		flush();
	return 0;
}
#endif

const char *ncclGetErrorString(int r)
{
	switch (r) {
	case 0:
		return "no error";
	case 1:
		return "unhandled cuda error (stand-in)";
	case 4:
		return "invalid argument (stand-in)";
	}
	return "unknown result (stand-in)";
}
