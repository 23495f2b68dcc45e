/* SPDX-License-Identifier: MIT */
/*
 * perftest's command line, one builder for the bandwidth and latency
 * stages (stage_pair.c) and every later use of perftest: each end on its
 * own device, port and GID (see stage_common.h).
 */
#include "orchestrator/validate/stage_common.h"

/* GPUDirect RDMA (bandwidth memory cuda or dmabuf): the buffers on the
 * GPU the port serves, named by its PCI bus id (perftest_mem.c says why
 * not a CUDA index); dma-buf after it, as perftest takes it only once
 * the memory is CUDA's. */
static void memory_args(const struct port_info *ni, struct argv *a)
{
	if (!ni->mem.bus[0])
		return;
	vs_arg(a, "--use_cuda_bus_id");
	vs_arg(a, "%s", ni->mem.bus);
	if (ni->mem.dmabuf)
		vs_arg(a, "--use_cuda_dmabuf");
}

void vs_perftest_argv(const struct port_info *srv, const struct port_info *cli, const char *tool,
		      uint64_t size, unsigned iters, unsigned tcp_port, const char *extra,
		      struct argv *sv, struct argv *cv)
{
	const struct port_info *ends[2] = { srv, cli };
	struct argv *both[2] = { sv, cv };
	int k;

	for (k = 0; k < 2; k++) {
		const struct port_info *ni = ends[k];

		vs_arg(both[k], "%s", tool);
		vs_arg(both[k], "-d");
		vs_arg(both[k], "%s", ni->dev);
		vs_arg(both[k], "-i");
		vs_arg(both[k], "%u", ni->port);
		if (ni->gid_index >= 0) {
			vs_arg(both[k], "-x");
			vs_arg(both[k], "%d", ni->gid_index);
		}
		vs_arg(both[k], "-s");
		vs_arg(both[k], "%llu", (unsigned long long)size);
		vs_arg(both[k], "-n");
		vs_arg(both[k], "%u", iters);
		vs_arg(both[k], "-p");
		vs_arg(both[k], "%u", tcp_port);
		vs_arg(both[k], "-R");
		vs_arg(both[k], "-F");
		memory_args(ni, both[k]);
		if (extra)
			vs_arg(both[k], "%s", extra);
	}
	vs_arg(cv, "%s", srv->ip);
}
