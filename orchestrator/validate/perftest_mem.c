/* SPDX-License-Identifier: MIT */
/*
 * Where perftest comes from and where its buffers live, for the pairwise
 * stages (stage_pair.c): the program by its absolute path in the stage's
 * perftest_dir, and, for a bandwidth stage with memory cuda or dmabuf
 * (GPUDirect RDMA), the GPU each declared port serves: the first of
 * nodes[].rdma[].gpus, else the GPU nearest the port in the node's PCIe
 * topology. The GPU is named to perftest by its PCI bus id, never by a
 * CUDA index: CUDA's default order is not NVML's, and the agent runs
 * programs without an environment (no CUDA_DEVICE_ORDER).
 *
 * Each node's perftest is asked first (--help, bounded) whether it was
 * built with CUDA: a perftest that lists no --use_cuda_bus_id (or, for
 * dmabuf, no --use_cuda_dmabuf) makes that node's pairs "not run" with
 * the reason. llmnet never measures host memory in place of a GPU's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "orchestrator/validate/pcidist.h"
#include "orchestrator/validate/stage_common.h"

#define HELP_TIMEOUT_S 10
#define HELP_CAP (64u << 10)

const char *vs_perftest_path(const struct vctx *c, enum ln_stage st, const char *tool, char *buf,
			     size_t n)
{
	const struct ln_validation *v = &c->spec->validation;
	const char *dir = st == LN_STAGE_BANDWIDTH ? v->bandwidth.perftest_dir :
			  st == LN_STAGE_LATENCY ? v->latency.perftest_dir : NULL;

	if (!dir)
		return tool;
	snprintf(buf, n, "%s/%s", dir, tool);
	return buf;
}

/* The entry of array arr whose integer "index" is g. */
static struct json_object *entry_of(struct json_object *arr, unsigned g)
{
	size_t j;

	for (j = 0; arr && json_object_is_type(arr, json_type_array) &&
		    j < json_object_array_length(arr); j++) {
		struct json_object *e = json_object_array_get_idx(arr, j);
		int64_t v;

		if (!ln_json_i64_at(e, "index", &v) && v == (int64_t)g)
			return e;
	}
	return NULL;
}

/* The bus id of declared GPU g (an NVML index): NVML's where the node
 * has it, else the topology's (PCI bus order, NVML's default). */
static const char *declared_gpu(struct json_object *facts, unsigned g, struct ln_buf *why)
{
	struct json_object *nvml = ln_json_at(ln_json_at(facts, "gpus"), "devices");
	struct json_object *e = nvml ? entry_of(nvml, g) :
				entry_of(ln_json_at(ln_json_at(facts, "topology"), "gpus"), g);
	const char *bus = ln_json_str_at(e, "bus_id");

	if (!bus)
		ln_buf_addf(why, "its declared GPU %u is not in the node's %s", g,
			    nvml ? "NVML facts" : "PCIe topology");
	return bus;
}

/* The bus id of the GPU nearest RDMA device dev in the topology. */
static const char *nearest_gpu(struct json_object *facts, const char *dev, struct ln_buf *why)
{
	struct json_object *topo = ln_json_at(facts, "topology"), *nic = NULL;
	struct json_object *gpus = ln_json_at(topo, "gpus"), *nics = ln_json_at(topo, "nics");
	const char *best = NULL;
	enum ln_pci_distance bd = LN_DIST_SYS;
	size_t j;

	for (j = 0; nics && json_object_is_type(nics, json_type_array) &&
		    j < json_object_array_length(nics); j++) {
		const char *d = ln_json_str_at(json_object_array_get_idx(nics, j), "device");

		if (d && !strcmp(d, dev))
			nic = json_object_array_get_idx(nics, j);
	}
	for (j = 0; nic && gpus && json_object_is_type(gpus, json_type_array) &&
		    j < json_object_array_length(gpus); j++) {
		struct json_object *g = json_object_array_get_idx(gpus, j);
		struct ln_buf ignored = LN_BUF_INIT;
		struct ln_pci_meet m;

		if (ln_pci_distance(g, nic, &m, &ignored) == 0 && ln_json_str_at(g, "bus_id") &&
		    (!best || m.dist < bd)) {
			best = ln_json_str_at(g, "bus_id");
			bd = m.dist;
		}
		ln_buf_release(&ignored);
	}
	if (!best)
		ln_buf_addf(why, "it declares no GPU (rdma[].gpus) and %s", !nic ?
			    "is not in the node's PCIe topology" : "no GPU of the node's PCIe "
			    "topology has a distance to it");
	return best;
}

/* Whether node i's perftest tool can put its buffers on a GPU: 0 yes,
 * -1 with why. */
static int cuda_capable(struct vctx *c, size_t i, const char *path, int dmabuf,
			struct ln_buf *why)
{
	const char *argv[] = { path, "--help", NULL };
	struct ln_probe_result pr = { 0 };
	struct ln_buf err = LN_BUF_INIT;
	const char *want = dmabuf ? "--use_cuda_dmabuf" : "--use_cuda_bus_id";
	int r;

	ln_buf_init(&pr.output, HELP_CAP);
	r = c->ops->run(c->octx, i, 0, argv, NULL, HELP_TIMEOUT_S, &pr, &err);
	if (r < 0 || pr.timed_out)
		ln_buf_addf(why, "cannot ask '%s' on '%s' whether it was built with CUDA: %s", path,
			    vs_nname(c, i), r < 0 ? err.buf : "'--help' timed out");
	else if (!pr.output.buf || !strstr(pr.output.buf, "--use_cuda_bus_id") ||
		 !strstr(pr.output.buf, want))
		ln_buf_addf(why, "'%s' on '%s' lists no %s in its --help: it was built without "
			    "CUDA%s, so memory: %s cannot run there (name a CUDA-built perftest "
			    "with perftest_dir); llmnet does not measure host memory instead", path,
			    vs_nname(c, i), want, dmabuf ? " dma-buf support" : "",
			    dmabuf ? "dmabuf" : "cuda");
	r = why->len ? -1 : 0;
	ln_buf_release(&pr.output);
	ln_buf_release(&err);
	return r;
}

/* The GPU of each of node i's ports into its mem, or the reason. */
static int node_memory(struct vctx *c, size_t i, const char *path, int dmabuf)
{
	struct node_info *ni = &c->ni[i];
	struct ln_buf why = LN_BUF_INIT;
	size_t k;
	int r = 0;

	if (!ni->nports || !ni->facts)
		return 0;	/* nothing to run, or devices already said why */
	if (cuda_capable(c, i, path, dmabuf, &why) < 0) {
		for (k = 0; k < ni->nports && r == 0; k++)
			if (!(ni->ports[k].mem.reason = strdup(why.buf)))
				r = -1;
		ln_buf_release(&why);
		return r;
	}
	for (k = 0; k < ni->nports && r == 0; k++) {
		const struct ln_rdma_port *rp = &c->spec->nodes[i].rdma[k];
		struct port_info *pi = &ni->ports[k];
		const char *bus;

		ln_buf_reset(&why);
		bus = rp->n_gpus ? declared_gpu(ni->facts, rp->gpus[0], &why) :
			nearest_gpu(ni->facts, pi->dev, &why);
		if (bus && strlen(bus) < sizeof(pi->mem.bus)) {
			snprintf(pi->mem.bus, sizeof(pi->mem.bus), "%s", bus);
			pi->mem.dmabuf = dmabuf;
		} else {
			struct ln_buf m = LN_BUF_INIT;

			ln_buf_addf(&m, "'%s' port %s/%u has no GPU for perftest's buffers: %s",
				    vs_nname(c, i), pi->dev, pi->port,
				    why.len ? why.buf : "its bus id is not one");
			if (!(pi->mem.reason = ln_buf_detach(&m, NULL)))
				r = -1;
			ln_buf_release(&m);
		}
	}
	ln_buf_release(&why);
	return r;
}

static void memory_clear(struct vctx *c)
{
	size_t i, k;

	for (i = 0; i < c->n; i++)
		for (k = 0; k < c->ni[i].nports; k++) {
			struct port_info *pi = &c->ni[i].ports[k];

			free(pi->mem.reason);
			memset(&pi->mem, 0, sizeof(pi->mem));
		}
}

int vs_perftest_memory(struct vctx *c, enum ln_stage st, const char *tool)
{
	const struct ln_validation *v = &c->spec->validation;
	const char *path = vs_perftest_path(c, st, tool, c->perftest, sizeof(c->perftest));
	size_t i;

	if (path == tool)
		c->perftest[0] = '\0';
	memory_clear(c);
	if (st != LN_STAGE_BANDWIDTH || v->bandwidth.memory == LN_BW_MEM_HOST)
		return 0;
	for (i = 0; i < c->n; i++)
		if (node_memory(c, i, path, v->bandwidth.memory == LN_BW_MEM_DMABUF) < 0)
			return -ENOMEM;
	return 0;
}
