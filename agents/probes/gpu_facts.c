/* SPDX-License-Identifier: MIT */
/*
 * llmnet-gpu-facts: the GPU facts NVML knows, as one JSON object on
 * stdout. The agent is static, and a static glibc that dlopens is not
 * reliable, so this small dynamically linked program does it: it opens
 * libnvidia-ml.so.1 (the loader's search; the agent runs it with no
 * environment, so no LD_LIBRARY_PATH) or the library --lib names, resolves
 * every call by dlsym (no link-time dependency on NVML: its prototypes and
 * constants are declared below, from NVML's documented ABI), and prints
 * per GPU: the NVML index, UUID, model, PCI bus id (in sysfs's form,
 * 0000:1b:00.0), NUMA node, memory, persistence mode, NVLink links up and
 * total, the volatile uncorrected ECC count and the row-remap state; and
 * the driver and CUDA versions. A call the library lacks, or one NVML
 * answers NOT_SUPPORTED, gives null for its field, never a guess; any
 * other error gives null too and is named in the GPU's "errors".
 * Bounded: at most GPU_MAX GPUs, every string cut to its NVML buffer.
 * Exit codes (docs/agent-protocol.md, "The GPU facts program"): 0 facts
 * printed; 1 usage; 2 NVML not usable (not found, a required call missing,
 * or init failed: the JSON's "error" says which); 3 internal.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPU_MAX 64
#define NVLINK_MAX 18	/* NVML_NVLINK_MAX_LINKS */
#define ERRORS_MAX 8	/* per GPU */

/* NVML's ABI, as its header defines it. */
typedef int nvml_ret;
typedef struct nvml_device *nvml_dev;
#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_FEATURE_ENABLED 1
#define NVML_BUF 96	/* NVML_DEVICE_NAME_V2_BUFFER_SIZE, _UUID_V2_ */
#define NVML_VERSION_BUF 80	/* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */

struct nvml_pci {	/* nvmlPciInfo_t, as nvmlDeviceGetPciInfo_v3 fills it */
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

struct nvml_memory {	/* nvmlMemory_t */
	unsigned long long total, free, used;
};

/* The calls, each resolved by name; NULL when the library lacks it. */
static struct {
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*driver_version)(char *, unsigned);
	nvml_ret (*cuda_version)(int *);
	nvml_ret (*count)(unsigned *);
	nvml_ret (*handle)(unsigned, nvml_dev *);
	nvml_ret (*uuid)(nvml_dev, char *, unsigned);
	nvml_ret (*name)(nvml_dev, char *, unsigned);
	nvml_ret (*pci)(nvml_dev, struct nvml_pci *);
	nvml_ret (*numa)(nvml_dev, unsigned *);
	nvml_ret (*memory)(nvml_dev, struct nvml_memory *);
	nvml_ret (*persistence)(nvml_dev, int *);
	nvml_ret (*nvlink_state)(nvml_dev, unsigned, int *);
	nvml_ret (*ecc)(nvml_dev, int, int, unsigned long long *);
	nvml_ret (*remap)(nvml_dev, unsigned *, unsigned *, unsigned *, unsigned *);
} nv;

static const struct sym {
	const char *name;
	void **slot;
	int required;
} syms[] = {
	{ "nvmlInit_v2", (void **)&nv.init, 1 },
	{ "nvmlShutdown", (void **)&nv.shutdown, 1 },
	{ "nvmlDeviceGetCount_v2", (void **)&nv.count, 1 },
	{ "nvmlDeviceGetHandleByIndex_v2", (void **)&nv.handle, 1 },
	{ "nvmlErrorString", (void **)&nv.error_string, 0 },
	{ "nvmlSystemGetDriverVersion", (void **)&nv.driver_version, 0 },
	{ "nvmlSystemGetCudaDriverVersion_v2", (void **)&nv.cuda_version, 0 },
	{ "nvmlDeviceGetUUID", (void **)&nv.uuid, 0 },
	{ "nvmlDeviceGetName", (void **)&nv.name, 0 },
	{ "nvmlDeviceGetPciInfo_v3", (void **)&nv.pci, 0 },
	{ "nvmlDeviceGetNumaNodeId", (void **)&nv.numa, 0 },
	{ "nvmlDeviceGetMemoryInfo", (void **)&nv.memory, 0 },
	{ "nvmlDeviceGetPersistenceMode", (void **)&nv.persistence, 0 },
	{ "nvmlDeviceGetNvLinkState", (void **)&nv.nvlink_state, 0 },
	{ "nvmlDeviceGetTotalEccErrors", (void **)&nv.ecc, 0 },
	{ "nvmlDeviceGetRemappedRows", (void **)&nv.remap, 0 },
};

/* A string as JSON, control bytes and non-ASCII escaped or dropped. */
static void put_str(const char *s)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c > 0x7e)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static const char *errstr(nvml_ret r)
{
	const char *s = nv.error_string ? nv.error_string(r) : NULL;

	return s ? s : "error";
}

/* One GPU's errors: what NVML answered other than success or NOT_SUPPORTED. */
struct errs {
	char v[ERRORS_MAX][160];
	int n;
};

/* 1 when the call answered; 0 (the field is null) when it is missing,
 * not supported, or failed (then named in e). */
static int answered(nvml_ret r, const char *call, struct errs *e)
{
	if (r == NVML_SUCCESS)
		return 1;
	if (r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_FUNCTION_NOT_FOUND &&
	    e->n < ERRORS_MAX)
		snprintf(e->v[e->n++], sizeof(e->v[0]), "%s: %.100s (%d)", call, errstr(r), r);
	return 0;
}

/* NVML's "00000000:1B:00.0" in sysfs's form, "0000:1b:00.0"; 0 when it
 * is not a bus id. */
static int sysfs_bus_id(const char *nvml, char *out, size_t size)
{
	unsigned dom, bus, dev, fn;
	int used = 0;

	if (sscanf(nvml, "%8x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &used) != 4 ||
	    nvml[used] || dev > 0x1f || fn > 7)
		return 0;
	snprintf(out, size, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 1;
}

static void put_u64_or_null(int ok, unsigned long long v)
{
	if (ok)
		printf("%llu", v);
	else
		fputs("null", stdout);
}

static void put_bool_or_null(int ok, int v)
{
	fputs(!ok ? "null" : v ? "true" : "false", stdout);
}

/* NVLink: every link NVML answers for is one the GPU has; none answering
 * (NOT_SUPPORTED: no NVLink) is null, not zero. */
static void put_nvlink(nvml_dev d, struct errs *e)
{
	unsigned link, up = 0, total = 0;
	int ok = 0;

	for (link = 0; nv.nvlink_state && link < NVLINK_MAX; link++) {
		int active = 0;
		nvml_ret r = nv.nvlink_state(d, link, &active);

		/* INVALID_ARGUMENT: past the GPU's last link */
		if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT)
			continue;
		if (!answered(r, "nvmlDeviceGetNvLinkState", e))
			continue;
		ok = 1;
		total++;
		up += active == NVML_FEATURE_ENABLED;
	}
	fputs(", \"nvlink_up\": ", stdout);
	put_u64_or_null(ok, up);
	fputs(", \"nvlink_total\": ", stdout);
	put_u64_or_null(ok, total);
}

static void put_device(unsigned index, nvml_dev d)
{
	char uuid[NVML_BUF] = "", name[NVML_BUF] = "", bus[40] = "";
	struct nvml_pci pci;
	struct nvml_memory mem;
	unsigned numa = 0, corr = 0, unc = 0, pending = 0, failed = 0;
	unsigned long long ecc = 0;
	int pers = 0, ok, k, remap;
	struct errs e = { .n = 0 };

	printf("{\"index\": %u, \"uuid\": ", index);
	ok = nv.uuid && answered(nv.uuid(d, uuid, sizeof(uuid)), "nvmlDeviceGetUUID", &e);
	uuid[sizeof(uuid) - 1] = '\0';
	put_str(ok ? uuid : NULL);
	fputs(", \"model\": ", stdout);
	ok = nv.name && answered(nv.name(d, name, sizeof(name)), "nvmlDeviceGetName", &e);
	name[sizeof(name) - 1] = '\0';
	put_str(ok ? name : NULL);
	fputs(", \"bus_id\": ", stdout);
	memset(&pci, 0, sizeof(pci));
	ok = nv.pci && answered(nv.pci(d, &pci), "nvmlDeviceGetPciInfo_v3", &e);
	pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
	if (ok && !sysfs_bus_id(pci.bus_id, bus, sizeof(bus))) {
		if (e.n < ERRORS_MAX)
			snprintf(e.v[e.n++], sizeof(e.v[0]), "nvmlDeviceGetPciInfo_v3: bus id "
				 "'%.32s' is not DOMAIN:BUS:DEVICE.FUNCTION", pci.bus_id);
		ok = 0;
	}
	put_str(ok ? bus : NULL);
	fputs(", \"numa_node\": ", stdout);
	ok = nv.numa && answered(nv.numa(d, &numa), "nvmlDeviceGetNumaNodeId", &e);
	put_u64_or_null(ok, numa);
	fputs(", \"memory_bytes\": ", stdout);
	memset(&mem, 0, sizeof(mem));
	ok = nv.memory && answered(nv.memory(d, &mem), "nvmlDeviceGetMemoryInfo", &e);
	put_u64_or_null(ok, mem.total);
	fputs(", \"persistence\": ", stdout);
	ok = nv.persistence &&
	     answered(nv.persistence(d, &pers), "nvmlDeviceGetPersistenceMode", &e);
	put_bool_or_null(ok, pers == NVML_FEATURE_ENABLED);
	put_nvlink(d, &e);
	fputs(", \"ecc_volatile_uncorrected\": ", stdout);
	ok = nv.ecc && answered(nv.ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
				       &ecc), "nvmlDeviceGetTotalEccErrors", &e);
	put_u64_or_null(ok, ecc);
	remap = nv.remap &&
		answered(nv.remap(d, &corr, &unc, &pending, &failed), "nvmlDeviceGetRemappedRows",
			 &e);
	fputs(", \"row_remap_pending\": ", stdout);
	put_bool_or_null(remap, pending != 0);
	fputs(", \"row_remap_failed\": ", stdout);
	put_bool_or_null(remap, failed != 0);
	fputs(", \"errors\": [", stdout);
	for (k = 0; k < e.n; k++) {
		if (k)
			fputs(", ", stdout);
		put_str(e.v[k]);
	}
	fputs("]}", stdout);
}

/* What a failure prints: the reason, and exit 2. */
__attribute__((format(printf, 1, 2))) static int unusable(const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fputs("{\"program\": \"llmnet-gpu-facts\", \"nvml\": false, \"error\": ", stdout);
	put_str(why);
	fputs("}\n", stdout);
	return fflush(stdout) ? 3 : 2;
}

static void put_versions(void)
{
	char drv[NVML_VERSION_BUF] = "", cuda[32];
	int v = 0, ok;

	fputs(", \"driver_version\": ", stdout);
	ok = nv.driver_version && nv.driver_version(drv, sizeof(drv)) == NVML_SUCCESS;
	drv[sizeof(drv) - 1] = '\0';
	put_str(ok ? drv : NULL);
	fputs(", \"cuda_version\": ", stdout);
	ok = nv.cuda_version && nv.cuda_version(&v) == NVML_SUCCESS && v > 0;
	/* 12040 is CUDA 12.4 */
	snprintf(cuda, sizeof(cuda), "%d.%d", v / 1000, v % 1000 / 10);
	put_str(ok ? cuda : NULL);
}

int main(int argc, char **argv)
{
	const char *lib = "libnvidia-ml.so.1";
	unsigned count = 0, i;
	nvml_ret r;
	void *h;
	size_t k;
	int null;

	if (argc == 3 && !strcmp(argv[1], "--lib") && argv[2][0] == '/') {
		lib = argv[2];
	} else if (argc != 1) {
		fputs("usage: llmnet-gpu-facts [--lib /ABSOLUTE/libnvidia-ml.so.1]\n", stderr);
		return 1;
	}
	/* stdout is the answer: whatever the library says on stderr would
	 * land in the same pipe (the agent reads both as one) */
	null = open("/dev/null", O_WRONLY);
	if (null >= 0 && dup2(null, STDERR_FILENO) >= 0 && null != STDERR_FILENO)
		close(null);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return unusable("cannot load %s: %.300s", lib, dlerror());
	for (k = 0; k < sizeof(syms) / sizeof(syms[0]); k++) {
		*syms[k].slot = dlsym(h, syms[k].name);
		if (!*syms[k].slot && syms[k].required)
			return unusable("%s has no %s", lib, syms[k].name);
	}
	r = nv.init();
	if (r != NVML_SUCCESS)
		return unusable("nvmlInit_v2 failed: %s (%d)", errstr(r), r);
	r = nv.count(&count);
	if (r != NVML_SUCCESS) {
		nv.shutdown();
		return unusable("nvmlDeviceGetCount_v2 failed: %s (%d)", errstr(r), r);
	}
	fputs("{\"program\": \"llmnet-gpu-facts\", \"nvml\": true", stdout);
	put_versions();
	printf(", \"count\": %u, \"devices\": [", count);
	for (i = 0; i < count && i < GPU_MAX; i++) {
		nvml_dev d = NULL;

		if (i)
			fputs(", ", stdout);
		r = nv.handle(i, &d);
		if (r != NVML_SUCCESS) {
			char why[160];

			snprintf(why, sizeof(why), "nvmlDeviceGetHandleByIndex_v2: %.100s (%d)",
				 errstr(r), r);
			printf("{\"index\": %u, \"errors\": [", i);
			put_str(why);
			fputs("]}", stdout);
			continue;
		}
		put_device(i, d);
	}
	fputs("]}\n", stdout);
	nv.shutdown();
	return fflush(stdout) ? 3 : 0;
}
