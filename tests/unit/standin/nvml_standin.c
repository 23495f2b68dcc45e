/* SPDX-License-Identifier: MIT */
/*
 * STAND-IN for libnvidia-ml.so.1, built by the tests only: NOT NVML. It
 * answers the calls llmnet-gpu-facts makes, with NVML's ABI, for GPUs that
 * do not exist, so the program's dlopen path and the agent's and the
 * devices stage's handling of what it prints are tested without a GPU.
 * The agent gives the program no environment, so the variant is chosen at
 * build time (mk/40-validate.mk builds each in its own folder):
 *   STANDIN_healthy   2 H100s, every call answered, every GPU sound
 *   STANDIN_faulty    5 GPUs: 0 sound, 1 a pending row remap, 2 a failed
 *                     row remap, 3 two volatile uncorrected ECC errors,
 *                     4 one of its 18 NVLinks down
 *   STANDIN_notsup    1 GPU answering NOT_SUPPORTED for NUMA, ECC, row
 *                     remapping, NVLink and persistence (a PCIe card in a VM),
 *                     its bus id in the legacy form 0000:00:05.0
 *   STANDIN_nosym     the healthy GPUs, but the library lacks
 *                     nvmlDeviceGetRemappedRows and nvmlDeviceGetNumaNodeId
 *                     (an older driver)
 *   STANDIN_noinit    nvmlInit_v2 answers DRIVER_NOT_LOADED
 *   STANDIN_noentry   lacks nvmlInit_v2 (not NVML at all)
 *   STANDIN_odd       the healthy GPUs, but GPU 0 answers NUMA 0xFFFFFFFF
 *                     and an ECC count past any real one, and GPU 1's row
 *                     remap call fails with an error string holding a
 *                     terminal escape
 */
#include <stdio.h>
#include <string.h>

#define OK 0
#define NOT_SUPPORTED 3
#define INVALID_ARGUMENT 2
#define DRIVER_NOT_LOADED 9

struct pci {
	char legacy[16];
	unsigned domain, bus, device, devid, subsys;
	char bus_id[32];
};

struct mem {
	unsigned long long total, free, used;
};

struct gpu {
	const char *bus_id;
	int pending, failed, nvlink_down;
	unsigned long long ecc;
};

#if defined(STANDIN_faulty)
static const struct gpu gpus[] = {
	{ "00000000:1B:00.0", 0, 0, 0, 0 }, { "00000000:43:00.0", 1, 0, 0, 0 },
	{ "00000000:52:00.0", 0, 1, 0, 0 }, { "00000000:61:00.0", 0, 0, 0, 2 },
	{ "00000000:9D:00.0", 0, 0, 1, 0 },
};
#elif defined(STANDIN_notsup)
/* the legacy form, a 4-digit domain, as older drivers print it */
static const struct gpu gpus[] = { { "0000:00:05.0", 0, 0, 0, 0 } };
#else
static const struct gpu gpus[] = { { "00000000:1B:00.0", 0, 0, 0, 0 },
				   { "00000000:43:00.0", 0, 0, 0, 0 } };
#endif
#define NGPUS (sizeof(gpus) / sizeof(gpus[0]))

#ifdef STANDIN_notsup
static const int notsup = 1;
#else
static const int notsup = 0;
#endif

int nvmlShutdown(void);
const char *nvmlErrorString(int r);
int nvmlSystemGetDriverVersion(char *v, unsigned n);
int nvmlSystemGetCudaDriverVersion_v2(int *v);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, const struct gpu **d);
int nvmlDeviceGetUUID(const struct gpu *d, char *s, unsigned n);
int nvmlDeviceGetName(const struct gpu *d, char *s, unsigned n);
int nvmlDeviceGetPciInfo_v3(const struct gpu *d, struct pci *p);
int nvmlDeviceGetMemoryInfo(const struct gpu *d, struct mem *m);
int nvmlDeviceGetPersistenceMode(const struct gpu *d, int *on);
int nvmlDeviceGetNvLinkState(const struct gpu *d, unsigned link, int *on);
int nvmlDeviceGetTotalEccErrors(const struct gpu *d, int type, int counter,
				unsigned long long *n);

#ifndef STANDIN_noentry
int nvmlInit_v2(void);
int nvmlInit_v2(void)
{
#ifdef STANDIN_noinit
	return DRIVER_NOT_LOADED;
#else
	return OK;
#endif
}
#endif

int nvmlShutdown(void)
{
	return OK;
}

#define ODD_ERROR 999

const char *nvmlErrorString(int r)
{
	return r == NOT_SUPPORTED ? "Not Supported" : r == DRIVER_NOT_LOADED ?
	       "Driver Not Loaded" : r == ODD_ERROR ? "Odd\x1b[2J Error\n" : "Unknown Error";
}

int nvmlSystemGetDriverVersion(char *v, unsigned n)
{
	snprintf(v, n, "570.86.15");
	return OK;
}

int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	*v = 12080;
	return OK;
}

int nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = NGPUS;
	return OK;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, const struct gpu **d)
{
	if (i >= NGPUS)
		return INVALID_ARGUMENT;
	*d = &gpus[i];
	return OK;
}

int nvmlDeviceGetUUID(const struct gpu *d, char *s, unsigned n)
{
	snprintf(s, n, "GPU-standin-%04u-0000-0000-000000000000", (unsigned)(d - gpus));
	return OK;
}

int nvmlDeviceGetName(const struct gpu *d, char *s, unsigned n)
{
	(void)d;
	snprintf(s, n, "NVIDIA H100 80GB HBM3");
	return OK;
}

int nvmlDeviceGetPciInfo_v3(const struct gpu *d, struct pci *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->bus_id, sizeof(p->bus_id), "%s", d->bus_id);
	snprintf(p->legacy, sizeof(p->legacy), "%s", d->bus_id + 4);
	return OK;
}

#ifndef STANDIN_nosym
int nvmlDeviceGetNumaNodeId(const struct gpu *d, unsigned *node);
int nvmlDeviceGetNumaNodeId(const struct gpu *d, unsigned *node)
{
	if (notsup)
		return NOT_SUPPORTED;
	*node = d - gpus < 4 ? 0 : 1;
#ifdef STANDIN_odd
	if (d == gpus)
		*node = 0xFFFFFFFFu;
#endif
	return OK;
}

int nvmlDeviceGetRemappedRows(const struct gpu *d, unsigned *corr, unsigned *unc,
			      unsigned *pending, unsigned *failed);
int nvmlDeviceGetRemappedRows(const struct gpu *d, unsigned *corr, unsigned *unc,
			      unsigned *pending, unsigned *failed)
{
	if (notsup)
		return NOT_SUPPORTED;
#ifdef STANDIN_odd
	if (d == gpus + 1)
		return ODD_ERROR;
#endif
	*corr = 0;
	*unc = (unsigned)(d->pending + d->failed);
	*pending = (unsigned)d->pending;
	*failed = (unsigned)d->failed;
	return OK;
}
#endif

int nvmlDeviceGetMemoryInfo(const struct gpu *d, struct mem *m)
{
	(void)d;
	m->total = 85520809984ull;
	m->used = 0;
	m->free = m->total;
	return OK;
}

int nvmlDeviceGetPersistenceMode(const struct gpu *d, int *on)
{
	(void)d;
	if (notsup)
		return NOT_SUPPORTED;
	*on = 1;
	return OK;
}

/* 18 links; beyond them INVALID_ARGUMENT, as NVML answers */
int nvmlDeviceGetNvLinkState(const struct gpu *d, unsigned link, int *on)
{
	if (notsup)
		return NOT_SUPPORTED;
	if (link >= 18)
		return INVALID_ARGUMENT;
	*on = !(d->nvlink_down && link == 7);
	return OK;
}

int nvmlDeviceGetTotalEccErrors(const struct gpu *d, int type, int counter,
				unsigned long long *n)
{
	if (notsup)
		return NOT_SUPPORTED;
	*n = type == 1 && counter == 0 ? d->ecc : 0;
#ifdef STANDIN_odd
	if (d == gpus)
		*n = ~0ull;
#endif
	return OK;
}
