/* SPDX-License-Identifier: MIT */
/*
 * llmnet NCCL probe: one all_reduce at one size across every GPU of the
 * node (one NCCL rank per GPU, driven from this process with a group
 * call), with a check of every element of the result, and the timing as
 * algbw and busbw (busbw = algbw * 2(n-1)/n, 0 for a single rank by
 * definition). libnccl and the CUDA runtime are loaded with dlopen when
 * it starts, so building it needs neither; their absence is reported as
 * "not run", never as a pass.
 *
 *   nccl_probe [--bytes B] [--iters N] [--gpus N] [--nccl-lib PATH] [--cudart-lib PATH]
 *
 * Output (parsed by orchestrator/validate/parse/parse_nccl.c):
 *   llmnet-nccl-probe 1 / nccl version V / ranks N bytes B /
 *   rank R device D (each) / allreduce time_us T algbw A busbw U wrong W /
 *   result pass|fail|notrun, with "error: ..." lines saying why.
 * Exit 0 pass, 1 fail, 2 not run.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The few ABI pieces used, from NCCL's and CUDA's public headers: the
 * handles are opaque pointers and the enums are stable values. */
typedef int nccl_result;
typedef void *nccl_comm;
typedef int cuda_error;
typedef void *cuda_stream;
#define NCCL_FLOAT32 7
#define NCCL_SUM 0
#define CUDA_H2D 1
#define CUDA_D2H 2
#define MAX_GPUS 64

struct api {
	void *nccl, *cudart;
	nccl_result (*get_version)(int *);
	nccl_result (*comm_init_all)(nccl_comm *, int, const int *);
	nccl_result (*all_reduce)(const void *, void *, size_t, int, int, nccl_comm, cuda_stream);
	nccl_result (*group_start)(void);
	nccl_result (*group_end)(void);
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

static int not_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int not_run(const char *fmt, ...)
{
	va_list ap;

	printf("error: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\nresult notrun\n");
	return 2;
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
		if (!api->field) \
			return not_run("the library lacks '%s': not an NCCL or CUDA " \
				       "runtime this probe can use", name); \
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
	if (!api->cudart)
		return not_run("cannot load the CUDA runtime: %s", tried);
	api->nccl = open_first(nccl_names, tried, sizeof(tried));
	if (!api->nccl)
		return not_run("cannot load NCCL: %s", tried);
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
	SYM(nccl, comm_init_all, "ncclCommInitAll");
	SYM(nccl, all_reduce, "ncclAllReduce");
	SYM(nccl, group_start, "ncclGroupStart");
	SYM(nccl, group_end, "ncclGroupEnd");
	SYM(nccl, comm_destroy, "ncclCommDestroy");
	SYM(nccl, nccl_error, "ncclGetErrorString");
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
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

int main(int argc, char **argv)
{
	unsigned long long bytes = 256ull << 20, iters = 5, gpus = 0;
	const char *nccl_path = NULL, *cudart_path = NULL;
	struct api api;
	nccl_comm comms[MAX_GPUS];
	cuda_stream streams[MAX_GPUS];
	void *send[MAX_GPUS], *recv[MAX_GPUS];
	int devs[MAX_GPUS], n = 0, r, a, version = 0, rc = 1;
	size_t count, i;
	float *host = NULL;
	double t0, t_us, algbw, busbw;
	long wrong = 0;
	cuda_error ce;
	nccl_result nr;
	unsigned long long it;

	memset(&api, 0, sizeof(api));
	memset(send, 0, sizeof(send));
	memset(recv, 0, sizeof(recv));
	memset(comms, 0, sizeof(comms));
	memset(streams, 0, sizeof(streams));
	printf("llmnet-nccl-probe 1\n");
	for (a = 1; a < argc; a++) {
		int bad = a + 1 >= argc;

		if (!bad && !strcmp(argv[a], "--bytes"))
			bad = parse_size(argv[++a], &bytes) || bytes < 4 || bytes > (64ull << 30);
		else if (!bad && !strcmp(argv[a], "--iters"))
			bad = parse_size(argv[++a], &iters) || !iters || iters > 1000;
		else if (!bad && !strcmp(argv[a], "--gpus"))
			bad = parse_size(argv[++a], &gpus) || gpus > MAX_GPUS;
		else if (!bad && !strcmp(argv[a], "--nccl-lib"))
			nccl_path = argv[++a];
		else if (!bad && !strcmp(argv[a], "--cudart-lib"))
			cudart_path = argv[++a];
		else
			bad = 1;
		if (bad) {
			printf("error: bad argument '%s'\nresult fail\n", argv[a]);
			return 1;
		}
	}
	count = (size_t)(bytes / sizeof(float));
	bytes = count * sizeof(float);
	r = load(&api, nccl_path, cudart_path);
	if (r)
		return r;
	if (!api.get_version(&version))
		printf("nccl version %d\n", version);
	ce = api.device_count(&n);
	if (ce || n < 1)
		return not_run("no CUDA device: %s", ce ? api.cuda_error_str(ce) : "0 devices");
	if (n > MAX_GPUS)
		n = MAX_GPUS;
	if (gpus && (int)gpus != n) {
		printf("error: %llu GPUs expected, %d found\n", gpus, n);
		printf("result fail\n");
		return 1;
	}
	for (r = 0; r < n; r++)
		devs[r] = r;
	printf("ranks %d bytes %llu\n", n, bytes);
	host = malloc(bytes);
	if (!host) {
		printf("error: cannot allocate %llu bytes of host memory\nresult fail\n", bytes);
		return 1;
	}
	for (r = 0; r < n; r++) {
		printf("rank %d device %d\n", r, devs[r]);
		if ((ce = api.set_device(devs[r])) || (ce = api.cmalloc(&send[r], bytes)) ||
		    (ce = api.cmalloc(&recv[r], bytes)) || (ce = api.stream_create(&streams[r]))) {
			printf("error: cannot set up GPU %d: %s\n", devs[r], api.cuda_error_str(ce));
			goto out;
		}
		for (i = 0; i < count; i++)
			host[i] = value(r, i);
		if ((ce = api.memcpy_(send[r], host, bytes, CUDA_H2D))) {
			printf("error: cannot copy to GPU %d: %s\n", devs[r], api.cuda_error_str(ce));
			goto out;
		}
	}
	if ((nr = api.comm_init_all(comms, n, devs))) {
		printf("error: ncclCommInitAll failed: %s\n", api.nccl_error(nr));
		goto out;
	}
	/* one warm-up (connection setup), then the timed iterations */
	t0 = 0;
	for (it = 0; it <= iters; it++) {
		if (it == 1)
			t0 = now_us();
		api.group_start();
		for (r = 0; r < n; r++) {
			nr = api.all_reduce(send[r], recv[r], count, NCCL_FLOAT32, NCCL_SUM, comms[r],
					    streams[r]);
			if (nr) {
				api.group_end();
				printf("error: ncclAllReduce failed: %s\n", api.nccl_error(nr));
				goto out;
			}
		}
		if ((nr = api.group_end())) {
			printf("error: ncclGroupEnd failed: %s\n", api.nccl_error(nr));
			goto out;
		}
		for (r = 0; r < n; r++) {
			api.set_device(devs[r]);
			if ((ce = api.stream_sync(streams[r]))) {
				printf("error: GPU %d failed: %s\n", devs[r], api.cuda_error_str(ce));
				goto out;
			}
		}
	}
	t_us = (now_us() - t0) / (double)iters;
	algbw = t_us > 0 ? (double)bytes / t_us / 1e3 : 0;
	busbw = n > 1 ? algbw * 2.0 * (n - 1) / n : 0.0;
	for (r = 0; r < n; r++) {
		long first = -1;

		api.set_device(devs[r]);
		if ((ce = api.memcpy_(host, recv[r], bytes, CUDA_D2H))) {
			printf("error: cannot copy from GPU %d: %s\n", devs[r], api.cuda_error_str(ce));
			goto out;
		}
		for (i = 0; i < count; i++) {
			float want = (float)n * (float)(n + 1) / 2.0f + (float)n * (float)(i % 3);

			if (host[i] != want) {
				if (first < 0) {
					first = (long)i;
					printf("error: allreduce result wrong: rank %d element %zu is "
					       "%g, expected %g\n", r, i, (double)host[i], (double)want);
				}
				wrong++;
			}
		}
	}
	printf("allreduce time_us %.2f algbw %.4f busbw %.4f wrong %ld\n", t_us, algbw, busbw,
	       wrong);
	rc = wrong ? 1 : 0;
out:
	for (r = 0; r < n; r++) {
		if (comms[r])
			api.comm_destroy(comms[r]);
		api.set_device(devs[r]);
		if (send[r])
			api.cfree(send[r]);
		if (recv[r])
			api.cfree(recv[r]);
		if (streams[r])
			api.stream_destroy(streams[r]);
	}
	free(host);
	printf("result %s\n", rc ? "fail" : "pass");
	return rc;
}
