/* SPDX-License-Identifier: MIT */
/*
 * STAND-IN for libnccl, built by the tests only: NOT NCCL. It implements
 * the handful of calls the NCCL probe makes (the five collectives on
 * float32 with ncclSum), computing on the host, so the probe's wiring can
 * be tested without a GPU. STANDIN_NCCL selects a fault: "wrong" returns
 * a wrong value in the last element one rank receives (STANDIN_WRONG_RANK,
 * default the last rank; reduce: the root, the only rank that receives),
 * "error" makes every collective fail with ncclUnhandledCudaError.
 * Built with -DSTANDIN_NO_ALLREDUCE it lacks the ncclAllReduce symbol.
 * ncclCommInitRank prints every NCCL_* variable the rank's environment
 * holds ("standin-nccl: rank R host H saw NAME=VALUE"), so the tests see
 * what each rank's NCCL would read.
 *
 * Communicators across processes (ncclGetUniqueId, an id shared by MPI,
 * ncclCommInitRank: the MPI-launched probe) compute through a file in
 * /tmp named by the id and mapped by every rank: each rank writes its
 * send buffer to its slot, waits at a counter barrier for all the others,
 * computes what it receives from every slot, and waits again before the
 * slots are reused. Bounded: a barrier that waits 60 s fails the call.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct comm {
	int rank, nranks;
	int fd;			/* the shared file */
	char path[128];
	long barriers;		/* barriers this rank has passed */
};

/* The shared file: a barrier counter, then one slot per rank. */
struct shared_head {
	long arrived;
	char pad[56];
};

enum op { ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE };

int ncclGetVersion(int *v);
/* ncclUniqueId: 128 bytes, passed by value to ncclCommInitRank */
struct unique_id {
	char internal[128];
};

int ncclGetUniqueId(struct unique_id *id);
int ncclCommInitRank(struct comm **comm, int n, struct unique_id id, int rank);
int ncclCommDestroy(struct comm *c);
const char *ncclGetErrorString(int r);
#ifndef STANDIN_NO_ALLREDUCE
int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, struct comm *c,
		  void *stream);
#endif
int ncclAllGather(const void *send, void *recv, size_t sendcount, int type, struct comm *c,
		  void *stream);
int ncclReduceScatter(const void *send, void *recv, size_t recvcount, int type, int op,
		      struct comm *c, void *stream);
int ncclBroadcast(const void *send, void *recv, size_t count, int type, int root, struct comm *c,
		  void *stream);
int ncclReduce(const void *send, void *recv, size_t count, int type, int op, int root,
	       struct comm *c, void *stream);

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

/* What NCCL would read: every NCCL_* variable, one whole line each. */
static void echo_env(int rank)
{
	char host[256] = "?", line[4608];
	char **e;

	gethostname(host, sizeof(host) - 1);
	for (e = environ; *e; e++)
		if (!strncmp(*e, "NCCL_", 5)) {
			snprintf(line, sizeof(line), "standin-nccl: rank %d host %s saw %s\n", rank,
				 host, *e);
			fputs(line, stdout);
			fflush(stdout);
		}
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
	echo_env(rank);
	return 0;
}

int ncclCommDestroy(struct comm *c)
{
	if (c) {
		close(c->fd);
		/* every rank has passed the last barrier: nobody reads it again */
		if (c->rank == 0)
			unlink(c->path);
	}
	free(c);
	return 0;
}

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

/* What rank c->rank receives, from every rank's slot of scount floats. */
static size_t compute(enum op op, const float *slots, size_t scount, size_t rcount, int root,
		      const struct comm *c, float *recv)
{
	size_t i, from = op == REDUCE_SCATTER ? (size_t)c->rank * rcount : 0;
	int r;

	if (op == REDUCE && c->rank != root)
		return 0;
	for (i = 0; i < rcount; i++) {
		float s = 0;

		if (op == ALL_GATHER) {
			s = slots[scount * (i / scount) + i % scount];
		} else if (op == BROADCAST) {
			s = slots[scount * (size_t)root + i];
		} else {
			for (r = 0; r < c->nranks; r++)
				s += slots[scount * (size_t)r + from + i];
		}
		recv[i] = s;
	}
	return rcount;
}

/* The rank whose result "wrong" corrupts. */
static int wrong_rank(enum op op, const struct comm *c, int root)
{
	const char *e = getenv("STANDIN_WRONG_RANK");

	if (op == REDUCE)
		return root;
	return e ? atoi(e) : c->nranks - 1;
}

static int collective(enum op op, const void *send, void *recv, size_t scount, size_t rcount,
		      int type, int redop, int root, struct comm *c)
{
	size_t slot = scount * sizeof(float), len, got;
	struct shared_head *h;
	int r;

	if (mode("error"))
		return 1;	/* ncclUnhandledCudaError */
	if (type != 7 || redop != 0 || !c || root < 0 || root >= c->nranks)
		return 4;
	len = sizeof(struct shared_head) + slot * (size_t)c->nranks;
	/* every rank grows the file to the same size: never shrinks it */
	if (ftruncate(c->fd, (off_t)len) < 0)
		return 2;
	h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (h == MAP_FAILED)
		return 2;
	memcpy((char *)(h + 1) + slot * (size_t)c->rank, send, slot);
	if (barrier(c, h) < 0) {
		munmap(h, len);
		return 6;	/* ncclRemoteError */
	}
	got = compute(op, (const float *)(h + 1), scount, rcount, root, c, recv);
	if (mode("wrong") && c->rank == wrong_rank(op, c, root) && got)
		((float *)recv)[got - 1] += 1.0f;
	r = barrier(c, h);
	munmap(h, len);
	return r < 0 ? 6 : 0;
}

#ifndef STANDIN_NO_ALLREDUCE
int ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, struct comm *c,
		  void *stream)
{
	(void)stream;
	return collective(ALL_REDUCE, send, recv, count, count, type, op, 0, c);
}
#endif

int ncclAllGather(const void *send, void *recv, size_t sendcount, int type, struct comm *c,
		  void *stream)
{
	(void)stream;
	return collective(ALL_GATHER, send, recv, sendcount,
			  c ? sendcount * (size_t)c->nranks : 0, type, 0, 0, c);
}

int ncclReduceScatter(const void *send, void *recv, size_t recvcount, int type, int op,
		      struct comm *c, void *stream)
{
	(void)stream;
	return collective(REDUCE_SCATTER, send, recv, c ? recvcount * (size_t)c->nranks : 0,
			  recvcount, type, op, 0, c);
}

int ncclBroadcast(const void *send, void *recv, size_t count, int type, int root, struct comm *c,
		  void *stream)
{
	(void)stream;
	return collective(BROADCAST, send, recv, count, count, type, 0, root, c);
}

int ncclReduce(const void *send, void *recv, size_t count, int type, int op, int root,
	       struct comm *c, void *stream)
{
	(void)stream;
	return collective(REDUCE, send, recv, count, count, type, op, root, c);
}

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
