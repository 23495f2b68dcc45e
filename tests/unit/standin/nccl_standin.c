/* SPDX-License-Identifier: MIT */
/*
 * STAND-IN for libnccl, built by the tests only: NOT NCCL. It implements
 * the handful of calls the NCCL probe makes, summing float buffers on the
 * host, so the probe's wiring can be tested without a GPU. STANDIN_NCCL
 * selects a fault: "wrong" returns a wrong sum in one element of the last
 * rank, "error" makes ncclAllReduce fail with ncclUnhandledCudaError.
 * Built with -DSTANDIN_NO_ALLREDUCE it lacks the ncclAllReduce symbol.
 *
 * Communicators of one process (ncclCommInitAll) sum queued calls in
 * memory. Communicators across processes (ncclGetUniqueId, an id shared
 * by MPI, ncclCommInitRank: the MPI-launched probe) sum through a file in
 * /tmp named by the id and mapped by every rank: each rank writes its
 * buffer to its slot, waits at a counter barrier for all the others,
 * sums every slot, and waits again before the slots are reused. Bounded:
 * a barrier that waits 60 s fails the call.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct comm {
	int rank, nranks;
	int fd;			/* shared file, cross-process communicators only */
	char path[128];
	long barriers;		/* barriers this rank has passed */
};

/* The shared file: a barrier counter, then one slot per rank. */
struct shared_head {
	long arrived;
	char pad[56];
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
/* ncclUniqueId: 128 bytes, passed by value to ncclCommInitRank */
struct unique_id {
	char internal[128];
};

int ncclGetUniqueId(struct unique_id *id);
int ncclCommInitRank(struct comm **comm, int n, struct unique_id id, int rank);
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

/* The stand-in keeps the shared file's path in the unique id. */
int ncclGetUniqueId(struct unique_id *id)
{
	char path[] = "/tmp/llmnet-standin-nccl-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return 2;	/* ncclSystemError */
	close(fd);
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, path, sizeof(path));
	return 0;
}

int ncclCommInitRank(struct comm **comm, int n, struct unique_id id, int rank)
{
	struct comm *c;

	if (n < 1 || rank < 0 || rank >= n ||
	    strncmp(id.internal, "/tmp/llmnet-standin-nccl-", 25) ||
	    !memchr(id.internal, 0, sizeof(id.internal)))
		return 4;
	c = calloc(1, sizeof(*c));
	if (!c)
		return 1;
	snprintf(c->path, sizeof(c->path), "%s", id.internal);
	c->fd = open(c->path, O_RDWR);
	if (c->fd < 0) {
		free(c);
		return 2;
	}
	c->rank = rank;
	c->nranks = n;
	*comm = c;
	return 0;
}

int ncclCommDestroy(struct comm *c)
{
	if (c && c->path[0]) {
		close(c->fd);
		/* every rank has passed the last barrier: nobody reads it again */
		if (c->rank == 0)
			unlink(c->path);
	}
	free(c);
	return 0;
}

#ifndef STANDIN_NO_ALLREDUCE
static int barrier(struct comm *c, struct shared_head *h)
{
	long want = (long)c->nranks * ++c->barriers;
	struct timespec pause = { 0, 200000 };
	int waited = 0;

	__atomic_add_fetch(&h->arrived, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&h->arrived, __ATOMIC_SEQ_CST) < want) {
		if (++waited > 300000)	/* 60 s */
			return -1;
		nanosleep(&pause, NULL);
	}
	return 0;
}

static int shared_all_reduce(const float *send, float *recv, size_t count, struct comm *c)
{
	size_t slot = count * sizeof(float), i, len = sizeof(struct shared_head) +
						      slot * (size_t)c->nranks;
	struct shared_head *h;
	float *slots;
	int r;

	/* every rank grows the file to the same size: never shrinks it */
	if (ftruncate(c->fd, (off_t)len) < 0)
		return 2;
	h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (h == MAP_FAILED)
		return 2;
	slots = (float *)(h + 1);
	memcpy(slots + count * (size_t)c->rank, send, slot);
	if (barrier(c, h) < 0) {
		munmap(h, len);
		return 6;	/* ncclRemoteError */
	}
	for (i = 0; i < count; i++) {
		float s = 0;

		for (r = 0; r < c->nranks; r++)
			s += slots[count * (size_t)r + i];
		recv[i] = s;
	}
	if (mode("wrong") && c->rank == c->nranks - 1 && count)
		recv[count - 1] += 1.0f;
	r = barrier(c, h);
	munmap(h, len);
	return r < 0 ? 6 : 0;
}
#endif

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
	if (c->path[0])
		return shared_all_reduce(send, recv, count, c);
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
	case 2:
		return "system error (stand-in)";
	case 4:
		return "invalid argument (stand-in)";
	case 6:
		return "remote error: a rank never arrived (stand-in)";
	}
	return "unknown result (stand-in)";
}
