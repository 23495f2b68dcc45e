/* SPDX-License-Identifier: MIT */
/*
 * llmnet NCCL probe across nodes: started by mpirun over the hostfile with
 * one rank per GPU, it builds one NCCL communicator over every rank and
 * times one collective (all_reduce, all_gather, reduce_scatter, broadcast
 * or reduce) at each size from --min-bytes to --bytes, doubling, with a
 * check of every element every rank receives, reporting algbw and busbw
 * as nccl-tests defines them. MPI is used only to share the ncclUniqueId,
 * to give each rank its GPU (its rank among the ranks of its node) and to
 * agree on the outcome; libnccl and the CUDA runtime are loaded with
 * dlopen when it starts, so building it (mpicc on the launcher) needs
 * neither. A missing library, symbol or GPU on any rank is "not run",
 * never a pass.
 *
 *   mpirun ... nccl_mpi_probe [--op OP] [--bytes B] [--min-bytes A]
 *                             [--iters N] [--expect-ranks N]
 *                             [--hca LIST] [--hca-at HOST=LIST]...
 *                             [--gid-index N] [--socket-ifname IFS]
 *                             [--env NCCL_NAME=VALUE]...
 *                             [--nccl-lib PATH] [--cudart-lib PATH]
 *
 * Before it loads NCCL, every rank sets NCCL_IB_HCA to "=" and its own
 * node's LIST of RDMA ports (DEV:PORT,...): the --hca-at entry whose HOST
 * is its host (or, either being a full name, its first label), else
 * --hca; an empty LIST sets none. --gid-index sets NCCL_IB_GID_INDEX,
 * --socket-ifname NCCL_SOCKET_IFNAME, each --env its variable (the agent
 * that starts mpirun allows only the names of llmnet's allow-list;
 * this probe takes only NCCL_* names and plain values).
 *
 * Sizes are nccl-tests' "size": the whole buffer (all_gather: what each
 * rank receives; reduce_scatter: what each rank sends). Output, from rank
 * 0 only (parsed by orchestrator/validate/parse/parse_nccl.c), plus
 * "error: rank R on HOST: ..." lines from any rank that failed:
 *   llmnet-nccl-probe 2 / nccl version V / op OP ranks N bytes B /
 *   rank R host H device D (each) /
 *   size B time_us T algbw A busbw U wrong W (each size, smallest first) /
 *   wrong rank R host H device D size B elements W first E got X want Y
 *   (each rank that received a wrong element, at most 64) /
 *   result pass|fail|notrun.
 * Exit 0 pass, 1 fail, 2 not run.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* The few ABI pieces used, from NCCL's and CUDA's public headers: the
 * handles are opaque pointers, ncclUniqueId is 128 bytes passed by value,
 * and the enums are stable values. */
typedef int nccl_result;
typedef void *nccl_comm;
typedef struct {
	char internal[128];
} nccl_id;
typedef int cuda_error;
typedef void *cuda_stream;
#define NCCL_FLOAT32 7
#define NCCL_SUM 0
#define CUDA_H2D 1
#define CUDA_D2H 2
#define ROOT 0
#define MAX_WRONG_LINES 64

/* Outcomes, ordered so that the worst over all ranks (MPI_MAX) wins. */
enum { OK = 0, FAIL = 1, NOTRUN = 2 };

enum op { ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE, NOPS };

static const struct op_desc {
	const char *name, *sym;
	int sums;		/* a reduction (else a copy) */
	int per_rank;		/* each rank owns size / ranks of the buffer */
} ops[NOPS] = {
	[ALL_REDUCE] = { "all_reduce", "ncclAllReduce", 1, 0 },
	[ALL_GATHER] = { "all_gather", "ncclAllGather", 0, 1 },
	[REDUCE_SCATTER] = { "reduce_scatter", "ncclReduceScatter", 1, 1 },
	[BROADCAST] = { "broadcast", "ncclBroadcast", 0, 0 },
	[REDUCE] = { "reduce", "ncclReduce", 1, 0 },
};

struct api {
	void *nccl, *cudart;
	nccl_result (*get_version)(int *);
	nccl_result (*get_unique_id)(nccl_id *);
	nccl_result (*comm_init_rank)(nccl_comm *, int, nccl_id, int);
	void *coll;	/* the op's call, cast by run_op() */
	nccl_result (*comm_destroy)(nccl_comm);
	const char *(*nccl_error)(nccl_result);
	cuda_error (*device_count)(int *);
	cuda_error (*set_device)(int);
	cuda_error (*cmalloc)(void **, size_t);
	cuda_error (*cfree)(void *);
	cuda_error (*memcpy_)(void *, const void *, size_t, int);
	cuda_error (*stream_create)(cuda_stream *);
	cuda_error (*stream_sync)(cuda_stream);
	cuda_error (*stream_destroy)(cuda_stream);
	const char *(*cuda_error_str)(cuda_error);
};

static int g_rank;
static char g_host[MPI_MAX_PROCESSOR_NAME];

/* One whole line per call, flushed, so mpirun's forwarding keeps ranks'
 * lines apart. */
static void rank_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void rank_error(const char *fmt, ...)
{
	char line[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("error: rank %d on %s: %s\n", g_rank, g_host, line);
	fflush(stdout);
}

/* Every rank's outcome, the worst one for all. */
static int agree(int mine)
{
	int all = NOTRUN;

	if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
		return NOTRUN;
	return all;
}

static void *open_first(const char *const *names, char *tried, size_t n)
{
	void *h = NULL;
	size_t i;

	tried[0] = '\0';
	for (i = 0; names[i] && !h; i++) {
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(tried + strlen(tried), n - strlen(tried), "%s%s", i ? "; " : "",
				 dlerror());
	}
	return h;
}

/* One symbol a library must have and where its address goes. */
struct sym {
	void **slot;
	const char *name;
};

static int load_syms(void *lib, const struct sym *syms)
{
	for (; syms->slot; syms++) {
		*syms->slot = dlsym(lib, syms->name);
		if (!*syms->slot) {
			rank_error("the library lacks '%s': not an NCCL or CUDA runtime "
				   "this probe can use", syms->name);
			return NOTRUN;
		}
	}
	return OK;
}

static int load(struct api *api, enum op op, const char *nccl_path, const char *cudart_path)
{
	const char *nccl_names[] = { nccl_path ? nccl_path : "libnccl.so.2",
				     nccl_path ? NULL : "libnccl.so", NULL };
	const char *cudart_names[] = { cudart_path ? cudart_path : "libcudart.so",
				       cudart_path ? NULL : "libcudart.so.13",
				       "libcudart.so.12", "libcudart.so.11.0", NULL };
	const struct sym cudart_syms[] = {
		{ (void **)&api->device_count, "cudaGetDeviceCount" },
		{ (void **)&api->set_device, "cudaSetDevice" },
		{ (void **)&api->cmalloc, "cudaMalloc" },
		{ (void **)&api->cfree, "cudaFree" },
		{ (void **)&api->memcpy_, "cudaMemcpy" },
		{ (void **)&api->stream_create, "cudaStreamCreate" },
		{ (void **)&api->stream_sync, "cudaStreamSynchronize" },
		{ (void **)&api->stream_destroy, "cudaStreamDestroy" },
		{ (void **)&api->cuda_error_str, "cudaGetErrorString" },
		{ NULL, NULL },
	};
	const struct sym nccl_syms[] = {
		{ (void **)&api->get_version, "ncclGetVersion" },
		{ (void **)&api->get_unique_id, "ncclGetUniqueId" },
		{ (void **)&api->comm_init_rank, "ncclCommInitRank" },
		{ &api->coll, ops[op].sym },
		{ (void **)&api->comm_destroy, "ncclCommDestroy" },
		{ (void **)&api->nccl_error, "ncclGetErrorString" },
		{ NULL, NULL },
	};
	char tried[1024];

	api->cudart = open_first(cudart_names, tried, sizeof(tried));
	if (!api->cudart) {
		rank_error("cannot load the CUDA runtime: %s", tried);
		return NOTRUN;
	}
	api->nccl = open_first(nccl_names, tried, sizeof(tried));
	if (!api->nccl) {
		rank_error("cannot load NCCL: %s", tried);
		return NOTRUN;
	}
	if (load_syms(api->cudart, cudart_syms) != OK)
		return NOTRUN;
	return load_syms(api->nccl, nccl_syms);
}

/* What rank r sends at element i: small integers, exact in float32.
 * Summed (at most 7 per rank), any order of addition gives the exact
 * total up to 2^21 ranks; copied, each rank's block is told apart. */
static float send_value(enum op op, int rank, size_t i)
{
	if (ops[op].sums)
		return (float)(rank % 5 + 1) + (float)(i % 3);
	return (float)(((unsigned long long)rank * 1048573ull + i) % 16777216ull);
}

static int parse_size(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return (!*s || *end || errno || s[0] == '-') ? -1 : 0;
}

/* This rank's GPU: its rank among the ranks of its node. */
static int local_rank(void)
{
	MPI_Comm node;
	int lr = 0;

	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL,
				&node) != MPI_SUCCESS)
		return -1;
	MPI_Comm_rank(node, &lr);
	MPI_Comm_free(&node);
	return lr;
}

/* What one rank found wrong at one size, gathered by rank 0. */
struct wrong {
	double elements, first, got, want;
};

struct run {
	struct api api;
	enum op op;
	int n, dev, version;
	unsigned long long bytes, min_bytes, iters;
	size_t max_elems;	/* elements of the larger buffer at the largest size */
	size_t scount, rcount;	/* this size: elements sent and received per rank */
	unsigned long long size;	/* this size, as nccl-tests counts it */
	double sum_ranks;	/* sum over ranks of send_value(r, 0) for the sum ops */
	nccl_comm comm;
	cuda_stream stream;
	void *send, *recv;
	float *host;
	char *hosts;		/* every rank's host (rank 0 only) */
	int *devs;
	struct wrong *wrongs;	/* every rank's, at one size (rank 0 only) */
	double t_us;
	struct wrong mine;
};

/* Elements per rank sent and received at size bytes: 0 when the size
 * holds less than one float32 per rank. */
static void counts(const struct run *x, unsigned long long bytes, size_t *scount, size_t *rcount)
{
	size_t elems = (size_t)(bytes / sizeof(float));
	size_t per = elems / (size_t)x->n;

	*scount = *rcount = elems;
	if (x->op == ALL_GATHER) {
		*scount = per;
		*rcount = per * (size_t)x->n;
	} else if (x->op == REDUCE_SCATTER) {
		*scount = per * (size_t)x->n;
		*rcount = per;
	}
	if (ops[x->op].per_rank && !per)
		*scount = *rcount = 0;
}

/* Set up this rank's GPU and buffers (the largest size's); NOTRUN when it
 * has no GPU. */
static int setup(struct run *x)
{
	size_t bytes = x->max_elems * sizeof(float);
	cuda_error ce;
	int ngpu = 0;

	ce = x->api.device_count(&ngpu);
	if (ce || ngpu < 1) {
		rank_error("no CUDA device: %s", ce ? x->api.cuda_error_str(ce) : "0 devices");
		return NOTRUN;
	}
	if (x->dev < 0 || x->dev >= ngpu) {
		rank_error("this node runs more ranks than its %d GPUs", ngpu);
		return FAIL;
	}
	x->host = malloc(bytes);
	if (!x->host) {
		rank_error("cannot allocate %zu bytes of host memory", bytes);
		return FAIL;
	}
	if ((ce = x->api.set_device(x->dev)) || (ce = x->api.cmalloc(&x->send, bytes)) ||
	    (ce = x->api.cmalloc(&x->recv, bytes)) || (ce = x->api.stream_create(&x->stream))) {
		rank_error("cannot set up GPU %d: %s", x->dev, x->api.cuda_error_str(ce));
		return FAIL;
	}
	return OK;
}

/* The send buffer's values, and a receive buffer that holds none of the
 * right ones (-1), so that an element the collective leaves is caught. */
static int fill(struct run *x)
{
	cuda_error ce;
	size_t i;

	for (i = 0; i < x->scount; i++)
		x->host[i] = send_value(x->op, g_rank, i);
	ce = x->api.memcpy_(x->send, x->host, x->scount * sizeof(float), CUDA_H2D);
	for (i = 0; !ce && i < x->rcount; i++)
		x->host[i] = -1.0f;
	if (!ce)
		ce = x->api.memcpy_(x->recv, x->host, x->rcount * sizeof(float), CUDA_H2D);
	if (ce)
		rank_error("cannot copy to GPU %d: %s", x->dev, x->api.cuda_error_str(ce));
	return ce ? FAIL : OK;
}

typedef nccl_result (*coll_reduce)(const void *, void *, size_t, int, int, nccl_comm, cuda_stream);
typedef nccl_result (*coll_gather)(const void *, void *, size_t, int, nccl_comm, cuda_stream);
typedef nccl_result (*coll_root)(const void *, void *, size_t, int, int, nccl_comm, cuda_stream);
typedef nccl_result (*coll_reduce_root)(const void *, void *, size_t, int, int, int, nccl_comm,
					cuda_stream);

static nccl_result run_op(struct run *x)
{
	void *f = x->api.coll;

	switch (x->op) {
	case ALL_REDUCE:
		return ((coll_reduce)f)(x->send, x->recv, x->rcount, NCCL_FLOAT32, NCCL_SUM,
					x->comm, x->stream);
	case ALL_GATHER:
		return ((coll_gather)f)(x->send, x->recv, x->scount, NCCL_FLOAT32, x->comm,
					x->stream);
	case REDUCE_SCATTER:
		return ((coll_reduce)f)(x->send, x->recv, x->rcount, NCCL_FLOAT32, NCCL_SUM,
					x->comm, x->stream);
	case BROADCAST:
		return ((coll_root)f)(x->send, x->recv, x->rcount, NCCL_FLOAT32, ROOT, x->comm,
				      x->stream);
	default:
		return ((coll_reduce_root)f)(x->send, x->recv, x->rcount, NCCL_FLOAT32, NCCL_SUM,
					     ROOT, x->comm, x->stream);
	}
}

/* One warm-up (connection setup), then the timed iterations, between
 * barriers so rank 0's clock covers every rank's work. */
static int time_op(struct run *x)
{
	unsigned long long it;
	double t0 = 0;
	nccl_result nr;
	cuda_error ce;
	int st = OK;

	for (it = 0; it <= x->iters && st == OK; it++) {
		if (it == 1) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		nr = run_op(x);
		if (nr) {
			rank_error("%s failed: %s", ops[x->op].sym, x->api.nccl_error(nr));
			st = FAIL;
		} else if ((ce = x->api.stream_sync(x->stream))) {
			rank_error("GPU %d failed: %s", x->dev, x->api.cuda_error_str(ce));
			st = FAIL;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	x->t_us = (MPI_Wtime() - t0) * 1e6 / (double)x->iters;
	return st;
}

/* What element i of this rank's receive buffer must hold. */
static double expected(const struct run *x, size_t i)
{
	size_t per = x->scount;

	switch (x->op) {
	case ALL_GATHER:
		return send_value(x->op, (int)(i / per), i % per);
	case BROADCAST:
		return send_value(x->op, ROOT, i);
	case REDUCE_SCATTER:
		i += (size_t)g_rank * x->rcount;
		break;
	default:
		break;
	}
	return x->sum_ranks + (double)x->n * (double)(i % 3);
}

/* Every element this rank received, against what it must hold (reduce:
 * only the root receives). */
static int check(struct run *x)
{
	cuda_error ce;
	size_t i;

	memset(&x->mine, 0, sizeof(x->mine));
	if (x->op == REDUCE && g_rank != ROOT)
		return OK;
	if ((ce = x->api.memcpy_(x->host, x->recv, x->rcount * sizeof(float), CUDA_D2H))) {
		rank_error("cannot copy from GPU %d: %s", x->dev, x->api.cuda_error_str(ce));
		return FAIL;
	}
	for (i = 0; i < x->rcount; i++) {
		double want = expected(x, i);

		if ((double)x->host[i] == want)
			continue;
		if (!x->mine.elements++) {
			x->mine.first = (double)i;
			x->mine.got = (double)x->host[i];
			x->mine.want = want;
			rank_error("%s result wrong at %llu bytes: element %zu is %.9g, expected %.9g",
				   ops[x->op].name, x->size, i, (double)x->host[i], want);
		}
	}
	return OK;
}

/* Rank 0 prints the size's figures and every rank that received a wrong
 * element; the wrong elements in all. */
static long report_size(struct run *x)
{
	static const double factor_num[NOPS] = { 2, 1, 1, 0, 0 };
	struct wrong *all = x->wrongs;
	double algbw, busbw, factor;
	long total = 0, lines = 0;
	int r;

	MPI_Gather(&x->mine, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (g_rank)
		return 0;
	for (r = 0; r < x->n; r++)
		total += (long)all[r].elements;
	/* busbw as nccl-tests: all_reduce 2(n-1)/n, all_gather and
	 * reduce_scatter (n-1)/n, broadcast and reduce 1 */
	factor = factor_num[x->op] ? factor_num[x->op] * (x->n - 1) / x->n : 1.0;
	algbw = x->t_us > 0 ? (double)x->size / x->t_us / 1e3 : 0;
	busbw = algbw * factor;
	/* %g: a slow run's small figure never prints as 0 */
	printf("size %llu time_us %.2f algbw %.6g busbw %.6g wrong %ld\n", x->size, x->t_us, algbw,
	       busbw, total);
	for (r = 0; r < x->n && lines < MAX_WRONG_LINES; r++)
		if (all[r].elements > 0 && ++lines)
			printf("wrong rank %d host %s device %d size %llu elements %.0f first %.0f "
			       "got %.9g want %.9g\n", r, x->hosts + (size_t)r * sizeof(g_host),
			       x->devs[r], x->size, all[r].elements, all[r].first, all[r].got,
			       all[r].want);
	fflush(stdout);
	return total;
}

/* Every size from min_bytes to bytes, doubling: timed, checked, reported. */
static int sweep(struct run *x)
{
	unsigned long long size = x->min_bytes;
	long wrong = 0;
	int st = OK, more = 1;

	while (st == OK && more) {
		if (size >= x->bytes) {
			size = x->bytes;
			more = 0;
		}
		counts(x, size, &x->scount, &x->rcount);
		size *= 2;
		if (!x->rcount)
			continue;	/* less than a float32 per rank */
		x->size = (x->rcount > x->scount ? x->rcount : x->scount) * sizeof(float);
		st = agree(fill(x));
		if (st == OK)
			st = agree(time_op(x));
		if (st == OK)
			st = agree(check(x));
		if (st == OK)
			wrong += report_size(x);
	}
	return st == OK && !g_rank && wrong ? FAIL : st;
}

static int parse_op(const char *s, enum op *op)
{
	int k;

	for (k = 0; k < NOPS; k++)
		if (!strcmp(s, ops[k].name)) {
			*op = (enum op)k;
			return 0;
		}
	return -1;
}

/* 1 when s is 1-max of [A-Za-z0-9] and the bytes of extra. */
static int plain(const char *s, const char *extra, size_t max)
{
	size_t n = strlen(s), i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr(extra, s[i])))
			return 0;
	return n >= 1 && n <= max;
}

/* The environment options' values: lists of DEV:PORT, HOST=LIST, a GID
 * index, interface names, NCCL_NAME=VALUE. */
static int env_arg_ok(const char *opt, const char *v)
{
	const char *eq = strchr(v, '=');

	if (!strcmp(opt, "--hca"))
		return plain(v, "_.,:-", 4096);
	if (!strcmp(opt, "--hca-at"))
		return eq && eq > v && eq - v < 256 && v[0] != '-' &&
		       (!eq[1] || plain(eq + 1, "_.,:-", 4096)) &&
		       strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789._-") == (size_t)(eq - v);
	if (!strcmp(opt, "--gid-index"))
		return plain(v, "", 3) && strspn(v, "0123456789") == strlen(v);
	if (!strcmp(opt, "--socket-ifname"))
		return plain(v, "_.,:^=-", 255);
	return eq && !strncmp(v, "NCCL_", 5) && eq - v < 64 && plain(eq + 1, "_.,:^=+-", 127) &&
	       strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == (size_t)(eq - v);
}

/* host and name are the same host: equal, or equal up to the first '.'
 * when either is a full name (MPI may give either). */
static int same_host(const char *host, const char *name, size_t len)
{
	size_t h = strcspn(host, "."), n = strcspn(name, ".");

	if (strlen(host) == len && !strncmp(host, name, len))
		return 1;
	if (n > len)
		n = len;
	return h == n && !strncmp(host, name, h);
}

/* Set this rank's NCCL variables from the options (checked by args()),
 * before NCCL is loaded. */
static int set_env(int argc, char **argv)
{
	const char *mine = NULL, *dflt = NULL;
	char hca[4200];
	int a, r = 0;

	for (a = 1; a + 1 < argc; a++) {
		const char *o = argv[a], *v = argv[a + 1], *eq = strchr(v, '=');
		char name[64];

		if (!strcmp(o, "--hca")) {
			dflt = v;
		} else if (!strcmp(o, "--hca-at")) {
			if (same_host(g_host, v, (size_t)(eq - v)))
				mine = eq + 1;
		} else if (!strcmp(o, "--gid-index")) {
			r |= setenv("NCCL_IB_GID_INDEX", v, 1);
		} else if (!strcmp(o, "--socket-ifname")) {
			r |= setenv("NCCL_SOCKET_IFNAME", v, 1);
		} else if (!strcmp(o, "--env")) {
			snprintf(name, sizeof(name), "%.*s", (int)(eq - v), v);
			r |= setenv(name, eq + 1, 1);
		} else {
			continue;	/* another option: its value is no option */
		}
		a++;
	}
	if (!mine)
		mine = dflt;
	snprintf(hca, sizeof(hca), "%s%s", mine && *mine ? "=" : "", mine ? mine : "");
	if (*hca)
		r |= setenv("NCCL_IB_HCA", hca, 1);
	if (r)
		rank_error("cannot set the NCCL environment: %s", strerror(errno));
	return r ? FAIL : OK;
}

static int args(int argc, char **argv, struct run *x, unsigned long long *expect,
		const char **nccl_path, const char **cudart_path)
{
	int a;

	for (a = 1; a < argc; a++) {
		int bad = a + 1 >= argc;

		if (!bad && !strcmp(argv[a], "--bytes"))
			bad = parse_size(argv[++a], &x->bytes) || x->bytes < 4 ||
			      x->bytes > (64ull << 30);
		else if (!bad && !strcmp(argv[a], "--min-bytes"))
			bad = parse_size(argv[++a], &x->min_bytes) || x->min_bytes < 4 ||
			      x->min_bytes > (64ull << 30);
		else if (!bad && !strcmp(argv[a], "--op"))
			bad = parse_op(argv[++a], &x->op);
		else if (!bad && !strcmp(argv[a], "--iters"))
			bad = parse_size(argv[++a], &x->iters) || !x->iters || x->iters > 1000;
		else if (!bad && !strcmp(argv[a], "--expect-ranks"))
			bad = parse_size(argv[++a], expect) || !*expect || *expect > 1u << 20;
		else if (!bad && (!strcmp(argv[a], "--hca") || !strcmp(argv[a], "--hca-at") ||
				  !strcmp(argv[a], "--gid-index") ||
				  !strcmp(argv[a], "--socket-ifname") || !strcmp(argv[a], "--env")))
			bad = !env_arg_ok(argv[a], argv[a + 1]) || !++a;
		else if (!bad && !strcmp(argv[a], "--nccl-lib"))
			*nccl_path = argv[++a];
		else if (!bad && !strcmp(argv[a], "--cudart-lib"))
			*cudart_path = argv[++a];
		else
			bad = 1;
		if (bad) {
			if (!g_rank)
				printf("error: bad argument '%s'\n", argv[a]);
			return FAIL;
		}
	}
	if (!x->min_bytes || x->min_bytes > x->bytes)
		x->min_bytes = x->bytes;
	return OK;
}

/* Every rank's host and GPU, kept by rank 0 and printed in rank order;
 * agreed. */
static int print_ranks(struct run *x)
{
	int st = OK, r;

	if (!g_rank) {
		x->hosts = calloc((size_t)x->n, sizeof(g_host));
		x->devs = calloc((size_t)x->n, sizeof(int));
		x->wrongs = calloc((size_t)x->n, sizeof(struct wrong));
		if (!x->hosts || !x->devs || !x->wrongs) {
			printf("error: out of memory\n");
			st = FAIL;
		}
	}
	st = agree(st);
	if (st == OK) {
		MPI_Gather(g_host, sizeof(g_host), MPI_CHAR, x->hosts, sizeof(g_host), MPI_CHAR, 0,
			   MPI_COMM_WORLD);
		MPI_Gather(&x->dev, 1, MPI_INT, x->devs, 1, MPI_INT, 0, MPI_COMM_WORLD);
		for (r = 0; !g_rank && r < x->n; r++)
			printf("rank %d host %s device %d\n", r,
			       x->hosts + (size_t)r * sizeof(g_host), x->devs[r]);
		fflush(stdout);
	}
	return st;
}

/* Buffers sized for the largest size, the sums' constant, the libraries
 * loaded and every rank listed; agreed. */
static int prepare(struct run *x, const char *nccl_path, const char *cudart_path)
{
	size_t sc, rc;
	int r, st;

	counts(x, x->bytes, &sc, &rc);
	if (!rc) {
		if (!g_rank)
			printf("error: %llu bytes hold less than one float32 per rank (%d ranks)\n",
			       x->bytes, x->n);
		return FAIL;
	}
	x->max_elems = sc > rc ? sc : rc;
	for (r = 0; r < x->n; r++)
		x->sum_ranks += (double)send_value(x->op, r, 0);
	x->dev = local_rank();
	st = agree(load(&x->api, x->op, nccl_path, cudart_path));
	if (st != OK)
		return st;
	if (!g_rank && !x->api.get_version(&x->version))
		printf("nccl version %d\n", x->version);
	if (!g_rank)
		printf("op %s ranks %d bytes %llu\n", ops[x->op].name, x->n, x->bytes);
	st = print_ranks(x);
	if (st == OK)
		st = agree(setup(x));
	return st;
}

/* One communicator over every rank, by the id rank 0 makes; agreed. */
static int communicator(struct run *x)
{
	nccl_result nr;
	nccl_id id;
	int st = OK;

	memset(&id, 0, sizeof(id));
	if (!g_rank && (nr = x->api.get_unique_id(&id))) {
		rank_error("ncclGetUniqueId failed: %s", x->api.nccl_error(nr));
		st = FAIL;
	}
	st = agree(st);
	if (st != OK)
		return st;
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	if ((nr = x->api.comm_init_rank(&x->comm, x->n, id, g_rank))) {
		rank_error("ncclCommInitRank failed: %s", x->api.nccl_error(nr));
		x->comm = NULL;
		st = FAIL;
	}
	return agree(st);
}

static void cleanup(struct run *x)
{
	if (x->comm)
		x->api.comm_destroy(x->comm);
	if (x->api.set_device && x->dev >= 0)
		x->api.set_device(x->dev);
	if (x->send)
		x->api.cfree(x->send);
	if (x->recv)
		x->api.cfree(x->recv);
	if (x->stream)
		x->api.stream_destroy(x->stream);
	free(x->host);
	free(x->hosts);
	free(x->devs);
	free(x->wrongs);
}

int main(int argc, char **argv)
{
	static struct run x;
	unsigned long long expect = 0;
	const char *nccl_path = NULL, *cudart_path = NULL;
	int st, len = 0;

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		printf("llmnet-nccl-probe 2\nerror: MPI_Init failed\nresult fail\n");
		return 1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &x.n);
	MPI_Get_processor_name(g_host, &len);
	x.op = ALL_REDUCE;
	x.bytes = 256ull << 20;
	x.iters = 5;
	if (!g_rank)
		printf("llmnet-nccl-probe 2\n");
	st = agree(args(argc, argv, &x, &expect, &nccl_path, &cudart_path));
	if (st == OK && expect && expect != (unsigned long long)x.n) {
		if (!g_rank)
			printf("error: %d ranks started, %llu expected\n", x.n, expect);
		st = FAIL;
	}
	if (st == OK)
		st = agree(set_env(argc, argv));
	if (st == OK)
		st = agree(prepare(&x, nccl_path, cudart_path));
	if (st == OK)
		st = communicator(&x);
	if (st == OK)
		st = agree(sweep(&x));
	cleanup(&x);
	if (!g_rank) {
		printf("result %s\n", st == OK ? "pass" : st == NOTRUN ? "notrun" : "fail");
		fflush(stdout);
	}
	MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return st;
}
