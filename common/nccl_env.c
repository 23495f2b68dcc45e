/* SPDX-License-Identifier: MIT */
/*
 * The NCCL environment policy (nccl_env.h): an allow-list of tuning and
 * diagnostic variables, the ones llmnet sets itself, and the ones refused
 * by name for what they make NCCL do.
 */
#include <stdio.h>
#include <string.h>

#include "common/nccl_env.h"
#include "common/util.h"

/* Transport and algorithm tuning, and NCCL_DEBUG (to the ranks' stdout:
 * NCCL_DEBUG_FILE is refused). */
static const char *const allowed[] = {
	"NCCL_ALGO", "NCCL_BUFFSIZE", "NCCL_CHECK_POINTERS", "NCCL_COLLNET_ENABLE",
	"NCCL_CROSS_NIC", "NCCL_CUMEM_ENABLE", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS",
	"NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE",
	"NCCL_IB_AR_THRESHOLD", "NCCL_IB_DISABLE", "NCCL_IB_MERGE_NICS",
	"NCCL_IB_PCI_RELAXED_ORDERING", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_RETRY_CNT",
	"NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_SL", "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_TC",
	"NCCL_IB_TIMEOUT", "NCCL_IGNORE_CPU_AFFINITY", "NCCL_LAUNCH_MODE", "NCCL_MAX_CTAS",
	"NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MIN_NCHANNELS", "NCCL_NET_GDR_LEVEL",
	"NCCL_NET_GDR_READ", "NCCL_NET_SHARED_BUFFERS", "NCCL_NSOCKS_PERTHREAD", "NCCL_NTHREADS",
	"NCCL_NVLS_ENABLE", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_P2P_NET_CHUNKSIZE",
	"NCCL_PROTO", "NCCL_PXN_DISABLE", "NCCL_SHM_DISABLE", "NCCL_SOCKET_FAMILY",
	"NCCL_SOCKET_NTHREADS",
};

static const struct {
	const char *name, *why;
} refused[] = {
	{ "NCCL_IB_HCA", "is set by llmnet on each node from its declared RDMA ports" },
	{ "NCCL_IB_GID_INDEX", "is set by llmnet from the ports' GID index when every port "
			       "agrees" },
	{ "NCCL_SOCKET_IFNAME", "is set by llmnet from the stage's 'socket_ifname'" },
	{ "NCCL_DEBUG_FILE", "makes NCCL write a file" },
	{ "NCCL_TOPO_DUMP_FILE", "makes NCCL write a file" },
	{ "NCCL_GRAPH_DUMP_FILE", "makes NCCL write a file" },
	{ "NCCL_TOPO_FILE", "makes NCCL read a file" },
	{ "NCCL_GRAPH_FILE", "makes NCCL read a file" },
	{ "NCCL_CONF_FILE", "makes NCCL read a file" },
	{ "NCCL_NET_PLUGIN", "makes NCCL load code" },
	{ "NCCL_TUNER_PLUGIN", "makes NCCL load code" },
	{ "NCCL_PROFILER_PLUGIN", "makes NCCL load code" },
	{ "NCCL_ENV_PLUGIN", "makes NCCL load code" },
	{ "NCCL_NET", "selects a network plugin, which NCCL loads" },
};

int ln_nccl_env_check(const char *name, struct ln_buf *why)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(allowed); k++)
		if (!strcmp(name, allowed[k]))
			return 0;
	for (k = 0; k < ARRAY_SIZE(refused); k++)
		if (!strcmp(name, refused[k].name)) {
			ln_buf_addf(why, "NCCL variable '%s' is refused: it %s", name,
				    refused[k].why);
			return -1;
		}
	ln_buf_addf(why, "NCCL variable '%.100s' is not on llmnet's allow-list (docs/spec.md, "
		    "'nccl.env'): only NCCL tuning variables that write, read and load nothing",
		    name);
	return -1;
}

static int only(const char *s, const char *extra, size_t max)
{
	size_t n = strlen(s), i;

	if (!n || n > max)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr(extra, s[i])))
			return 0;
	return 1;
}

int ln_nccl_value_ok(const char *v)
{
	return only(v, "_.,:^=+-", 127);
}

int ln_nccl_ifname_ok(const char *v)
{
	return only(v, "_.,:^=-", 255);
}

int ln_nccl_hca_ok(const char *v, int empty_ok)
{
	char dev[65];
	const char *p = v, *colon, *end;
	size_t d;

	if (!*v)
		return empty_ok;
	for (;;) {
		colon = strchr(p, ':');
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (!colon || colon > end || colon == p || (size_t)(colon - p) >= sizeof(dev) ||
		    *p == '-')
			return 0;
		d = (size_t)(colon - p);
		memcpy(dev, p, d);
		dev[d] = '\0';
		if (!only(dev, "_.-", 64) || end - colon < 2 || end - colon > 4 ||
		    strspn(colon + 1, "0123456789") != (size_t)(end - colon - 1) ||
		    colon[1] == '0')
			return 0;
		if (!*end)
			return 1;
		p = end + 1;
	}
}

const char *ln_nccl_env_allowed(size_t i)
{
	return i < ARRAY_SIZE(allowed) ? allowed[i] : NULL;
}

static const char *const tests_programs[] = {
	"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "broadcast_perf",
	"reduce_perf", "alltoall_perf", "sendrecv_perf",
};

const char *ln_nccl_tests_program(unsigned op)
{
	return op < ARRAY_SIZE(tests_programs) ? tests_programs[op] : NULL;
}

int ln_nccl_tests_named(const char *name)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(tests_programs); k++)
		if (!strcmp(name, tests_programs[k]))
			return 1;
	return 0;
}

int ln_nccl_env_pair_ok(const char *v)
{
	struct ln_buf why = LN_BUF_INIT;
	const char *eq = strchr(v, '=');
	char name[64];
	int ok;

	if (!eq || eq == v || (size_t)(eq - v) >= sizeof(name))
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)(eq - v), v);
	ok = ln_nccl_env_check(name, &why) == 0 && ln_nccl_value_ok(eq + 1);
	ln_buf_release(&why);
	return ok;
}

int ln_nccl_x_ok(const char *v)
{
	const char *eq = strchr(v, '=');
	char name[64];

	if (!eq || eq == v || (size_t)(eq - v) >= sizeof(name))
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)(eq - v), v);
	if (!strcmp(name, "NCCL_IB_HCA"))	/* '=': exact names */
		return eq[1] == '=' && ln_nccl_hca_ok(eq + 2, 0);
	if (!strcmp(name, "NCCL_IB_GID_INDEX"))
		return only(eq + 1, "", 3) && strspn(eq + 1, "0123456789") == strlen(eq + 1);
	if (!strcmp(name, "NCCL_SOCKET_IFNAME"))
		return ln_nccl_ifname_ok(eq + 1);
	return ln_nccl_env_pair_ok(v);
}
