/* SPDX-License-Identifier: MIT */
/*
 * llmnet NCCL probe across nodes: started by mpirun over the hostfile with
 * one rank per GPU, it builds one NCCL communicator over every rank and
 * times one all_reduce at one size, with a check of every element of the
 * result, reporting algbw and busbw (busbw = algbw * 2(n-1)/n, 0 for a
 * single rank by definition). MPI is used only to share the
 * ncclUniqueId, to give each rank its GPU (its rank among the ranks of its
 * node) and to agree on the outcome; libnccl and the CUDA runtime are
 * loaded with dlopen when it starts, so building it (mpicc on the
 * launcher) needs neither. A missing library, symbol or GPU on any rank
 * is "not run", never a pass.
 *
 *   mpirun ... nccl_mpi_probe [--bytes B] [--iters N] [--expect-ranks N]
 *                             [--nccl-lib PATH] [--cudart-lib PATH]
 *
 * Output, from rank 0 only (parsed by
 * orchestrator/validate/parse/parse_nccl.c), plus "error: rank R on HOST: ..."
 * lines from any rank that failed:
 *   llmnet-nccl-probe 1 / nccl version V / ranks N bytes B /
 *   rank R host H device D (each) / allreduce time_us T algbw A busbw U
 *   wrong W / result pass|fail|notrun.
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

/* Outcomes, ordered so that the worst over all ranks (MPI_MAX) wins. */
enum { OK = 0, FAIL = 1, NOTRUN = 2 };

struct api {
	void *nccl, *cudart;
	nccl_result (*get_version)(int *);
	nccl_result (*get_unique_id)(nccl_id *);
	nccl_result (*comm_init_rank)(nccl_comm *, int, nccl_id, int);
	nccl_result (*all_reduce)(const void *, void *, size_t, int, int, nccl_comm, cuda_stream);
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

#define SYM(lib, field, name) \
	do { \
		*(void **)&api->field = dlsym(api->lib, name); \
		if (!api->field) { \
			rank_error("the library lacks '%s': not an NCCL or CUDA runtime " \
				   "this probe can use", name); \
			return NOTRUN; \
		} \
	} while (0)

static int load(struct api *api, const char *nccl_path, const char *cudart_path)
{
	const char *nccl_names[] = { nccl_path ? nccl_path : "libnccl.so.2",
				     nccl_path ? NULL : "libnccl.so", NULL };
	const char *cudart_names[] = { cudart_path ? cudart_path : "libcudart.so",
				       cudart_path ? NULL : "libcudart.so.13",
				       "libcudart.so.12", "libcudart.so.11.0", NULL };
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
	SYM(cudart, device_count, "cudaGetDeviceCount");
	SYM(cudart, set_device, "cudaSetDevice");
	SYM(cudart, cmalloc, "cudaMalloc");
	SYM(cudart, cfree, "cudaFree");
	SYM(cudart, memcpy_, "cudaMemcpy");
	SYM(cudart, stream_create, "cudaStreamCreate");
	SYM(cudart, stream_sync, "cudaStreamSynchronize");
	SYM(cudart, stream_destroy, "cudaStreamDestroy");
	SYM(cudart, cuda_error_str, "cudaGetErrorString");
	SYM(nccl, get_version, "ncclGetVersion");
	SYM(nccl, get_unique_id, "ncclGetUniqueId");
	SYM(nccl, comm_init_rank, "ncclCommInitRank");
	SYM(nccl, all_reduce, "ncclAllReduce");
	SYM(nccl, comm_destroy, "ncclCommDestroy");
	SYM(nccl, nccl_error, "ncclGetErrorString");
	return OK;
}

/* Rank r holds (r + 1) + (i % 3): small integers, exact in float32, so
 * the sum n(n+1)/2 + n * (i % 3) is checked with ==. */
static float value(int rank, size_t i)
{
	return (float)(rank + 1) + (float)(i % 3);
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

struct run {
	struct api api;
	int n, dev, version;
	unsigned long long bytes, iters;
	size_t count;
	nccl_comm comm;
	cuda_stream stream;
	void *send, *recv;
	float *host;
	double t_us;
	long wrong;
};

/* Set up this rank's GPU and buffers; NOTRUN when it has no GPU. */
static int setup(struct run *x)
{
	cuda_error ce;
	int ngpu = 0;
	size_t i;

	ce = x->api.device_count(&ngpu);
	if (ce || ngpu < 1) {
		rank_error("no CUDA device: %s", ce ? x->api.cuda_error_str(ce) : "0 devices");
		return NOTRUN;
	}
	if (x->dev < 0 || x->dev >= ngpu) {
		rank_error("this node runs more ranks than its %d GPUs", ngpu);
		return FAIL;
	}
	x->host = malloc(x->count * sizeof(float));
	if (!x->host) {
		rank_error("cannot allocate %llu bytes of host memory", x->bytes);
		return FAIL;
	}
	if ((ce = x->api.set_device(x->dev)) || (ce = x->api.cmalloc(&x->send, x->bytes)) ||
	    (ce = x->api.cmalloc(&x->recv, x->bytes)) || (ce = x->api.stream_create(&x->stream))) {
		rank_error("cannot set up GPU %d: %s", x->dev, x->api.cuda_error_str(ce));
		return FAIL;
	}
	for (i = 0; i < x->count; i++)
		x->host[i] = value(g_rank, i);
	if ((ce = x->api.memcpy_(x->send, x->host, x->bytes, CUDA_H2D))) {
		rank_error("cannot copy to GPU %d: %s", x->dev, x->api.cuda_error_str(ce));
		return FAIL;
	}
	return OK;
}

/* One warm-up (connection setup), then the timed iterations, between
 * barriers so rank 0's clock covers every rank's work. */
static int reduce(struct run *x)
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
		nr = x->api.all_reduce(x->send, x->recv, x->count, NCCL_FLOAT32, NCCL_SUM, x->comm,
				       x->stream);
		if (nr) {
			rank_error("ncclAllReduce failed: %s", x->api.nccl_error(nr));
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

static int check(struct run *x)
{
	cuda_error ce;
	size_t i;
	long mine = 0;

	if ((ce = x->api.memcpy_(x->host, x->recv, x->bytes, CUDA_D2H))) {
		rank_error("cannot copy from GPU %d: %s", x->dev, x->api.cuda_error_str(ce));
		return FAIL;
	}
	for (i = 0; i < x->count; i++) {
		float want = (float)x->n * (float)(x->n + 1) / 2.0f + (float)x->n * (float)(i % 3);

		if (x->host[i] != want && !mine++)
			rank_error("allreduce result wrong: element %zu is %g, expected %g", i,
				   (double)x->host[i], (double)want);
	}
	MPI_Reduce(&mine, &x->wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	return OK;
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
		else if (!bad && !strcmp(argv[a], "--iters"))
			bad = parse_size(argv[++a], &x->iters) || !x->iters || x->iters > 1000;
		else if (!bad && !strcmp(argv[a], "--expect-ranks"))
			bad = parse_size(argv[++a], expect) || !*expect || *expect > 1u << 20;
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
	return OK;
}

/* Every rank's host and GPU, printed by rank 0 in rank order; agreed. */
static int print_ranks(struct run *x)
{
	char *hosts = calloc((size_t)x->n, sizeof(g_host));
	int *devs = calloc((size_t)x->n, sizeof(int));
	int st = OK, r;

	if (!hosts || !devs) {
		rank_error("out of memory");
		st = FAIL;
	}
	st = agree(st);
	if (st == OK) {
		MPI_Gather(g_host, sizeof(g_host), MPI_CHAR, hosts, sizeof(g_host), MPI_CHAR, 0,
			   MPI_COMM_WORLD);
		MPI_Gather(&x->dev, 1, MPI_INT, devs, 1, MPI_INT, 0, MPI_COMM_WORLD);
		for (r = 0; !g_rank && r < x->n; r++)
			printf("rank %d host %s device %d\n", r,
			       hosts + (size_t)r * sizeof(g_host), devs[r]);
		fflush(stdout);
	}
	free(hosts);
	free(devs);
	return st;
}

int main(int argc, char **argv)
{
	static struct run x;
	unsigned long long expect = 0;
	const char *nccl_path = NULL, *cudart_path = NULL;
	int st, len = 0;
	nccl_id id;
	nccl_result nr;

	if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
		printf("llmnet-nccl-probe 1\nerror: MPI_Init failed\nresult fail\n");
		return 1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &x.n);
	MPI_Get_processor_name(g_host, &len);
	x.bytes = 256ull << 20;
	x.iters = 5;
	if (!g_rank)
		printf("llmnet-nccl-probe 1\n");
	st = agree(args(argc, argv, &x, &expect, &nccl_path, &cudart_path));
	if (st == OK && expect && expect != (unsigned long long)x.n) {
		if (!g_rank)
			printf("error: %d ranks started, %llu expected\n", x.n, expect);
		st = FAIL;
	}
	if (st != OK)
		goto out;
	x.count = (size_t)(x.bytes / sizeof(float));
	x.bytes = x.count * sizeof(float);
	x.dev = local_rank();
	st = agree(load(&x.api, nccl_path, cudart_path));
	if (st != OK)
		goto out;
	if (!g_rank && !x.api.get_version(&x.version))
		printf("nccl version %d\nranks %d bytes %llu\n", x.version, x.n, x.bytes);
	else if (!g_rank)
		printf("ranks %d bytes %llu\n", x.n, x.bytes);
	st = print_ranks(&x);
	if (st != OK)
		goto out;
	st = agree(setup(&x));
	if (st != OK)
		goto out;
	memset(&id, 0, sizeof(id));
	if (!g_rank && (nr = x.api.get_unique_id(&id))) {
		rank_error("ncclGetUniqueId failed: %s", x.api.nccl_error(nr));
		st = FAIL;
	}
	st = agree(st);
	if (st != OK)
		goto out;
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	if ((nr = x.api.comm_init_rank(&x.comm, x.n, id, g_rank))) {
		rank_error("ncclCommInitRank failed: %s", x.api.nccl_error(nr));
		x.comm = NULL;
		st = FAIL;
	}
	st = agree(st);
	if (st == OK)
		st = agree(reduce(&x));
	if (st == OK)
		st = agree(check(&x));
	if (st == OK && !g_rank) {
		double algbw = x.t_us > 0 ? (double)x.bytes / x.t_us / 1e3 : 0;
		double busbw = x.n > 1 ? algbw * 2.0 * (x.n - 1) / x.n : 0.0;

		printf("allreduce time_us %.2f algbw %.4f busbw %.4f wrong %ld\n", x.t_us, algbw,
		       busbw, x.wrong);
	}
	if (st == OK && !g_rank && x.wrong)
		st = FAIL;
out:
	if (x.comm)
		x.api.comm_destroy(x.comm);
	if (x.api.set_device && x.dev >= 0)
		x.api.set_device(x.dev);
	if (x.send)
		x.api.cfree(x.send);
	if (x.recv)
		x.api.cfree(x.recv);
	if (x.stream)
		x.api.stream_destroy(x.stream);
	free(x.host);
	if (!g_rank) {
		printf("result %s\n", st == OK ? "pass" : st == NOTRUN ? "notrun" : "fail");
		fflush(stdout);
	}
	MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return st;
}
