/* SPDX-License-Identifier: MIT */
/*
 * STAND-IN for the CUDA runtime, built by the tests only: NOT CUDA. It
 * lets the NCCL probe's wiring (library loading, rank setup, error paths,
 * busbw arithmetic) run on a machine without a GPU. "Device memory" is
 * host memory; STANDIN_GPUS sets the device count (default 2).
 */
#include <stdlib.h>
#include <string.h>

int cudaGetDeviceCount(int *n);
int cudaSetDevice(int d);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMemcpy(void *dst, const void *src, size_t n, int kind);
int cudaStreamCreate(void **s);
int cudaStreamSynchronize(void *s);
int cudaStreamDestroy(void *s);
const char *cudaGetErrorString(int e);

static int current;

int cudaGetDeviceCount(int *n)
{
	const char *e = getenv("STANDIN_GPUS");

	*n = e ? atoi(e) : 2;
	return 0;
}

int cudaSetDevice(int d)
{
	int n;

	cudaGetDeviceCount(&n);
	if (d < 0 || d >= n)
		return 101;	/* cudaErrorInvalidDevice */
	current = d;
	return 0;
}

int cudaMalloc(void **p, size_t n)
{
	*p = malloc(n);
	return *p ? 0 : 2;	/* cudaErrorMemoryAllocation */
}

int cudaFree(void *p)
{
	free(p);
	return 0;
}

int cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
	(void)kind;
	memcpy(dst, src, n);
	return 0;
}

int cudaStreamCreate(void **s)
{
	*s = malloc(1);
	return *s ? 0 : 2;
}

int cudaStreamSynchronize(void *s)
{
	(void)s;
	return 0;
}

int cudaStreamDestroy(void *s)
{
	free(s);
	return 0;
}

const char *cudaGetErrorString(int e)
{
	return e == 101 ? "invalid device ordinal (stand-in)" :
	       e == 2 ? "out of memory (stand-in)" : "unknown error (stand-in)";
}
