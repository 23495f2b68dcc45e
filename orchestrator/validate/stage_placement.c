/* SPDX-License-Identifier: MIT */
/*
 * The devices stage's GPU placement and GPUDirect RDMA readiness, from
 * a node's topology facts (docs/validation.md, "GPU placement"). For
 * every GPU-port pair the spec declares (rdma[].gpus): the PCIe distance
 * against max_gpu_distance, no ACS redirect between the pair's meeting
 * point and either end, and the IOMMU passing both through; once per
 * node, a peer-memory path (dma-buf, else nvidia_peermem). A port that
 * declares no GPUs gets its nearest GPUs reported (a warning when every
 * GPU is SYS-distant) and, where no port declares any, the readiness is
 * reported, not judged. A node without GPUs or RDMA ports has these
 * checks skipped, with the reason.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "orchestrator/validate/pcidist.h"
#include "orchestrator/validate/stage_common.h"

#define DEBIAN_PEERMEM "with Debian's in-kernel RDMA drivers nvidia_peermem is not available " \
	"(it needs MOFED's peer-memory interface), so dma-buf is the only path there"

struct place {
	struct vctx *c;
	size_t i;			/* the node */
	const struct ln_node *node;
	struct json_object *topo, *gpus, *nics;
	struct json_object *nvml;	/* facts.gpus.devices, NULL without NVML */
	enum ln_pci_distance max;
};

static struct json_object *array_at(struct json_object *o, const char *key)
{
	struct json_object *a = ln_json_at(o, key);

	return a && json_object_is_type(a, json_type_array) ? a : NULL;
}

/* 1 true, 0 false, -1 absent or not a boolean. */
static int bool_at(struct json_object *o, const char *key)
{
	struct json_object *v = ln_json_at(o, key);

	if (!v || !json_object_is_type(v, json_type_boolean))
		return -1;
	return json_object_get_boolean(v) ? 1 : 0;
}

/* The entry of arr whose key is the string want. */
static struct json_object *find_str(struct json_object *arr, const char *key, const char *want)
{
	size_t j;

	for (j = 0; arr && want && j < json_object_array_length(arr); j++) {
		struct json_object *e = json_object_array_get_idx(arr, j);
		const char *v = ln_json_str_at(e, key);

		if (v && !strcmp(v, want))
			return e;
	}
	return NULL;
}

static struct json_object *find_index(struct json_object *arr, unsigned g)
{
	size_t j;

	for (j = 0; arr && j < json_object_array_length(arr); j++) {
		struct json_object *e = json_object_array_get_idx(arr, j);
		int64_t v;

		if (!ln_json_i64_at(e, "index", &v) && v == (int64_t)g)
			return e;
	}
	return NULL;
}

/* GPU g (an NVML index) in the topology: by bus id through NVML's facts
 * when the node has them, else the topology's own index (PCI bus order,
 * NVML's default), also for a GPU NVML gave no bus id where the two
 * count alike. NULL with why. */
static struct json_object *find_gpu(const struct place *pl, unsigned g, struct ln_buf *why)
{
	struct json_object *e;

	if (pl->nvml) {
		const char *bus;

		e = find_index(pl->nvml, g);
		if (!e) {
			ln_buf_addf(why, "GPU %u is not on the node: NVML lists %zu GPU(s)", g,
				    json_object_array_length(pl->nvml));
			return NULL;
		}
		bus = ln_json_str_at(e, "bus_id");
		/* NVML gave no bus id for it (null: its call failed): the
		 * topology's index stands in, where both count the same GPUs */
		if (!bus && pl->gpus &&
		    json_object_array_length(pl->gpus) == json_object_array_length(pl->nvml))
			goto by_index;
		if (!bus) {
			ln_buf_addf(why, "GPU %u has no bus id from NVML, and NVML lists %zu GPU(s) "
				    "where the PCIe topology lists %zu", g,
				    json_object_array_length(pl->nvml),
				    pl->gpus ? json_object_array_length(pl->gpus) : 0);
			return NULL;
		}
		e = find_str(pl->gpus, "bus_id", bus);
		if (!e)
			ln_buf_addf(why, "GPU %u (NVML's bus id %s) is not in the node's PCIe "
				    "topology", g, bus);
		return e;
	}
by_index:
	e = find_index(pl->gpus, g);
	if (!e)
		ln_buf_addf(why, "GPU %u is not on the node: its PCIe topology lists %zu GPU(s)",
			    g, pl->gpus ? json_object_array_length(pl->gpus) : 0);
	return e;
}

static struct json_object *find_nic(const struct place *pl, const char *dev, struct ln_buf *why)
{
	struct json_object *e = find_str(pl->nics, "device", dev);

	if (!e)
		ln_buf_addf(why, "'%s' is not among the node's RDMA devices in its PCIe topology",
			    dev);
	return e;
}

/* "meet at 0000:49:00.0" and the like, for m. */
static void where_they_meet(const struct ln_pci_meet *m, struct ln_buf *b)
{
	switch (m->dist) {
	case LN_DIST_PIX:
	case LN_DIST_PXB:
		ln_buf_addf(b, "their paths meet at bridge %s (%u switch%s between them)", m->bridge,
			    m->switches, m->switches == 1 ? "" : "es");
		break;
	case LN_DIST_PHB:
		ln_buf_addf(b, "their paths meet at host bridge %s", m->bridge);
		break;
	case LN_DIST_NODE:
		ln_buf_addf(b, "their paths meet only past host bridges %s and %s (NUMA node %s)",
			    m->ha, m->hb, m->numa_a >= 0 ? "shared" : "unknown");
		break;
	case LN_DIST_SYS:
		ln_buf_addf(b, "their paths meet only across NUMA nodes %d and %d (host bridges %s "
			    "and %s)", m->numa_a, m->numa_b, m->ha, m->hb);
		break;
	}
}

static long add(struct place *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static long add(struct place *pl, const char *fmt, ...)
{
	struct ln_buf name = LN_BUF_INIT;
	va_list ap;
	long idx = -ENOMEM;

	va_start(ap, fmt);
	if (ln_buf_vaddf(&name, fmt, ap) == 0)
		idx = vs_add_check(pl->c, LN_STAGE_DEVICES, pl->i, LN_NO_NODE, name.buf);
	va_end(ap);
	ln_buf_release(&name);
	return idx;
}

static struct ln_check *chk(struct place *pl, long idx)
{
	return &pl->c->res->checks[idx];
}

/* The IOMMU's hold on one end: 0 when it passes DMA through or the end
 * is in no group, 1 when its group translates (said into bad), -1 when
 * its group's type is unknown (said into unknown: kernels before 5.11
 * have no `type` file). */
static int iommu_bad(struct json_object *d, const char *what, struct ln_buf *bad,
		     struct ln_buf *unknown)
{
	const char *type = ln_json_str_at(d, "iommu_type");
	int64_t grp;
	int in_group = !ln_json_i64_at(d, "iommu_group", &grp) && grp >= 0;

	if (!type && in_group) {
		ln_buf_addf(unknown, "%s%s is in IOMMU group %lld of unknown type",
			    unknown->len ? "; " : "", what, (long long)grp);
		return -1;
	}
	if (!type || !strcmp(type, "identity"))
		return 0;
	ln_buf_addf(bad, "%s%s is in IOMMU group %lld of type %s", bad->len ? "; " : "", what,
		    in_group ? (long long)grp : -1ll, type);
	return 1;
}

/* The ACS and IOMMU checks of one pair whose distance is m (NULL: none
 * could be told, so both are skipped with why). */
static int pair_gdr(struct place *pl, const char *pair, struct json_object *g,
		    struct json_object *n, const char *gname, const char *nname,
		    const struct ln_pci_meet *m, const char *why)
{
	struct ln_buf bad = LN_BUF_INIT, cmd = LN_BUF_INIT, unknown = LN_BUF_INIT;
	const char *cmdline = ln_json_str_at(ln_json_at(pl->topo, "iommu"), "cmdline");
	long a = add(pl, "%s ACS", pair), b = a < 0 ? a : add(pl, "%s IOMMU", pair);
	size_t ports, no_acs;
	int r;

	if (b < 0)
		return -ENOMEM;
	if (!m) {
		r = ln_check_set(chk(pl, a), LN_ST_SKIPPED, "no PCIe path to judge: %s", why);
		if (r == 0)
			r = ln_check_set(chk(pl, b), LN_ST_SKIPPED, "no PCIe path to judge: %s", why);
		return r;
	}
	if (ln_pci_acs_redirects(g, n, m, &bad, &ports, &no_acs))
		r = ln_check_set(chk(pl, a), LN_ST_FAIL, "ACS redirects peer-to-peer traffic between "
				 "%s and %s up to the root complex at %s: turn ACS redirect off on "
				 "that port (BIOS setting or the kernel's pci=disable_acs_redir=)",
				 gname, nname, bad.buf);
	else if (m->common == 0)
		r = ln_check_set(chk(pl, a), LN_ST_PASS, "no port to look at: %s and %s meet at or "
				 "past the host bridge, so their traffic crosses the root complex "
				 "whatever ACS says", gname, nname);
	else
		r = ln_check_set(chk(pl, a), LN_ST_PASS, "no ACS redirect on the %zu root and "
				 "downstream port(s) where %s and %s meet (%zu without ACS)", ports,
				 gname, nname, no_acs);
	ln_buf_reset(&bad);
	if (cmdline)
		ln_buf_addf(&cmd, "; kernel command line: %s", cmdline);
	if (r == 0) {
		int ig = iommu_bad(g, gname, &bad, &unknown), in = iommu_bad(n, nname, &bad, &unknown);

		if (ig > 0 || in > 0)
			r = ln_check_set(chk(pl, b), LN_ST_FAIL, "the IOMMU translates peer-to-peer "
					 "DMA: %s, want identity (passthrough, iommu=pt) or no IOMMU%s",
					 bad.buf, cmd.buf);
		else if (ig < 0 || in < 0)
			r = ln_check_set(chk(pl, b), LN_ST_SKIPPED, "cannot tell whether the IOMMU "
					 "passes peer-to-peer DMA through: %s%s", unknown.buf, cmd.buf);
		else
			r = 1;	/* passes, below */
	}
	if (r == 1)
		r = ln_check_set(chk(pl, b), LN_ST_PASS, "%s%s",
				 bool_at(ln_json_at(pl->topo, "iommu"), "present") == 1 ?
				 "both ends in passthrough (identity) IOMMU groups or in none" :
				 "no IOMMU", cmd.buf);
	ln_buf_release_all(&bad, &cmd, &unknown);
	return r;
}

/* GPU g and port p of the node: distance, then ACS and IOMMU. */
static int judge_pair(struct place *pl, size_t p, unsigned g)
{
	const struct ln_rdma_port *rp = &pl->node->rdma[p];
	struct ln_buf why = LN_BUF_INIT, pair = LN_BUF_INIT, gname = LN_BUF_INIT,
		      nname = LN_BUF_INIT, meet = LN_BUF_INIT;
	struct json_object *ge = find_gpu(pl, g, &why);
	struct json_object *ne = ge ? find_nic(pl, rp->device, &why) : NULL;
	struct ln_pci_meet m;
	struct ln_check *k;
	long idx;
	int r = -ENOMEM, known = 0;

	ln_buf_addf(&pair, "GPU%u-%s/%u", g, rp->device, rp->port);
	idx = add(pl, "%s distance", pair.buf);
	if (idx < 0)
		goto out;
	k = chk(pl, idx);
	k->threshold = pl->max;
	if (ne && ln_pci_distance(ge, ne, &m, &why) == 0)
		known = 1;
	ln_buf_addf(&gname, "GPU %u (%s)", g, ge ? ln_json_str_at(ge, "bus_id") : "?");
	ln_buf_addf(&nname, "%s/%u (%s)", rp->device, rp->port,
		    ne && ln_json_str_at(ne, "bus_id") ? ln_json_str_at(ne, "bus_id") : "virtual");
	if (!known) {
		r = ln_check_set(k, LN_ST_FAIL, "%s", why.buf);
	} else if (m.numa_unknown && (pl->max == LN_DIST_NODE || pl->max >= LN_DIST_SYS)) {
		/* NODE or SYS: within a SYS limit either way, past NODE's if SYS */
		r = ln_check_set(k, pl->max >= LN_DIST_SYS ? LN_ST_PASS : LN_ST_NOT_RUN, "%s and %s "
				 "on node '%s' are NODE or SYS apart (host bridges %s and %s; the "
				 "NUMA node of %s is unknown)%s", gname.buf, nname.buf,
				 pl->node->name, m.ha, m.hb, m.numa_a < 0 ? "the GPU" : "the NIC",
				 pl->max >= LN_DIST_SYS ? "" : ": cannot tell against "
				 "max_gpu_distance NODE");
	} else {
		where_they_meet(&m, &meet);
		k->value = m.dist;
		if (m.dist > pl->max)
			r = ln_check_set(k, LN_ST_FAIL, "%s and %s on node '%s' are %s apart, farther "
					 "than max_gpu_distance %s: %s", gname.buf, nname.buf,
					 pl->node->name, m.numa_unknown ? "NODE or SYS (a NUMA "
					 "node unknown)" : ln_pci_distance_name(m.dist),
					 ln_pci_distance_name(pl->max), meet.buf);
		else
			r = ln_check_set(k, LN_ST_PASS, "%s: %s", ln_pci_distance_name(m.dist),
					 meet.buf);
	}
	if (r == 0)
		r = pair_gdr(pl, pair.buf, ge, ne, gname.buf, nname.buf, known ? &m : NULL,
			     why.buf);
out:
	ln_buf_release_all(&why, &pair, &gname, &nname, &meet);
	return r;
}

/* The node's peer-memory path (one check: it serves every pair). */
static int peer_memory(struct place *pl, int judged)
{
	struct json_object *pm = ln_json_at(pl->topo, "peer_memory");
	struct json_object *db = ln_json_at(pm, "dmabuf");
	const char *dwhy = ln_json_str_at(db, "why");
	int kern = bool_at(db, "kernel"), open = bool_at(db, "gpu_open_modules");
	int verbs = bool_at(db, "verbs");
	int peermem = bool_at(pm, "nvidia_peermem") == 1, legacy = bool_at(pm, "nv_peer_mem") == 1;
	long idx = add(pl, judged ? "peer memory" : "peer memory (reported)");
	struct ln_buf no = LN_BUF_INIT;
	int r;

	if (idx < 0)
		return -ENOMEM;
	if (!pm || !json_object_is_type(pm, json_type_object))
		return ln_check_set(chk(pl, idx), judged ? LN_ST_NOT_RUN : LN_ST_PASS,
				    "the agent's topology facts say nothing of peer memory");
	if (kern != 1)
		ln_buf_addstr(&no, "the kernel");
	if (open != 1)
		ln_buf_addf(&no, "%sthe GPU driver (open kernel modules)", no.len ? ", " : "");
	if (verbs != 1)
		ln_buf_addf(&no, "%srdma-core (ibv_reg_dmabuf_mr)", no.len ? ", " : "");
	if (!no.len)
		r = ln_check_set(chk(pl, idx), LN_ST_PASS, "dma-buf: the kernel, the GPU driver's "
				 "open kernel modules and rdma-core's ibv_reg_dmabuf_mr support it "
				 "(NVIDIA's recommended path)%s", peermem ? "; nvidia_peermem is "
				 "loaded too" : "");
	else if (peermem || legacy)
		r = ln_check_set(chk(pl, idx), LN_ST_PASS, "%s is loaded; dma-buf is not usable "
				 "(no support in %s%s%s)", peermem ? "nvidia_peermem" : "nv_peer_mem",
				 no.buf, dwhy ? ": " : "", dwhy ? dwhy : "");
	else
		r = ln_check_set(chk(pl, idx), judged ? LN_ST_FAIL : LN_ST_PASS,
				 "%sno peer-memory path: dma-buf is not usable (no support in %s%s%s) "
				 "and neither nvidia_peermem nor nv_peer_mem is loaded, so GPUDirect "
				 "RDMA stages through host memory; " DEBIAN_PEERMEM,
				 judged ? "" : "warning: ", no.buf, dwhy ? ": " : "",
				 dwhy ? dwhy : "");
	if (r == 0 && !judged && no.len && !peermem && !legacy)
		chk(pl, idx)->warning = 1;
	ln_buf_release(&no);
	return r;
}

/* A port that declares no GPUs: its nearest GPUs, reported; a warning
 * when every GPU is SYS-distant from it. */
static int report_port(struct place *pl, size_t p)
{
	const struct ln_rdma_port *rp = &pl->node->rdma[p];
	struct ln_buf why = LN_BUF_INIT, near = LN_BUF_INIT;
	struct json_object *ne = find_nic(pl, rp->device, &why);
	size_t j, n = pl->gpus ? json_object_array_length(pl->gpus) : 0;
	enum ln_pci_distance best = LN_DIST_SYS;
	long idx = add(pl, "%s/%u nearest GPUs", rp->device, rp->port);
	int r, pass, known = 0;

	if (idx < 0)
		return -ENOMEM;
	for (pass = 0; ne && pass < 2; pass++)
		for (j = 0; j < n; j++) {
			struct json_object *g = json_object_array_get_idx(pl->gpus, j);
			struct ln_pci_meet m;
			int64_t gi;

			ln_buf_reset(&why);
			if (ln_pci_distance(g, ne, &m, &why) < 0)
				continue;
			known = 1;
			if (!pass && m.dist < best)
				best = m.dist;
			if (pass && m.dist == best)
				ln_buf_addf(&near, "%sGPU %lld", near.len ? ", " : "",
					    ln_json_i64_at(g, "index", &gi) ? (long long)j :
					    (long long)gi);
		}
	if (!known) {
		r = ln_check_set(chk(pl, idx), LN_ST_PASS, "no distance to any GPU: %s",
				 why.len ? why.buf : "no GPU in the topology");
	} else {
		chk(pl, idx)->value = best;
		if (best == LN_DIST_SYS)
			chk(pl, idx)->warning = 1;
		r = ln_check_set(chk(pl, idx), LN_ST_PASS, "%s%s (%s)%s",
				 best == LN_DIST_SYS ? "warning: SYS-distant from every GPU, so its "
				 "traffic to any GPU crosses the CPU interconnect; nearest: " :
				 "nearest: ", near.buf, ln_pci_distance_name(best),
				 best == LN_DIST_SYS ? "" : "; declare rdma[].gpus to judge them");
	}
	ln_buf_release_all(&why, &near);
	return r;
}

/* Where no port declares GPUs: ACS and IOMMU for each port and its
 * nearest GPU, reported (a pass that warns on what would fail). */
static int report_gdr(struct place *pl)
{
	struct ln_buf bad = LN_BUF_INIT, io = LN_BUF_INIT;
	size_t j, ports, no_acs, n = pl->nics ? json_object_array_length(pl->nics) : 0;
	size_t ng = pl->gpus ? json_object_array_length(pl->gpus) : 0;
	long idx = add(pl, "gpudirect rdma (reported)");
	int r;

	if (idx < 0)
		return -ENOMEM;
	for (j = 0; j < ng; j++)
		iommu_bad(json_object_array_get_idx(pl->gpus, j),
			  ln_json_str_at(json_object_array_get_idx(pl->gpus, j), "bus_id"), &io, &io);
	for (j = 0; j < n; j++) {
		struct json_object *nic = json_object_array_get_idx(pl->nics, j);
		size_t k;

		iommu_bad(nic, ln_json_str_at(nic, "device"), &io, &io);
		for (k = 0; k < ng; k++) {
			struct ln_pci_meet m;
			struct ln_buf why = LN_BUF_INIT;

			if (ln_pci_distance(json_object_array_get_idx(pl->gpus, k), nic, &m, &why) == 0 &&
			    m.dist <= LN_DIST_PXB)
				ln_pci_acs_redirects(json_object_array_get_idx(pl->gpus, k), nic, &m,
						     &bad, &ports, &no_acs);
			ln_buf_release(&why);
		}
	}
	chk(pl, idx)->warning = bad.len || io.len;
	r = ln_check_set(chk(pl, idx), LN_ST_PASS, "%s%s%s%s%s%s; no rdma[].gpus declared, so "
			 "not judged", bad.len || io.len ? "warning: " : "",
			 bad.len ? "ACS redirect between a GPU and a nearby NIC at " : "no ACS "
			 "redirect between a GPU and a nearby NIC", bad.buf, io.len ? "; " : "",
			 io.len ? io.buf : "; the IOMMU passes every GPU and NIC through",
			 io.len ? " (want identity)" : "");
	ln_buf_release_all(&bad, &io);
	return r;
}

/* Both placement checks skipped on the node, with why. */
static int skip_all(struct place *pl, const char *why)
{
	long a = add(pl, "gpu placement"), b = a < 0 ? a : add(pl, "gpudirect rdma");

	if (b < 0)
		return -ENOMEM;
	chk(pl, a)->moot = chk(pl, b)->moot = 1;
	if (ln_check_set(chk(pl, a), LN_ST_SKIPPED, "%s", why) < 0)
		return -ENOMEM;
	return ln_check_set(chk(pl, b), LN_ST_SKIPPED, "%s", why);
}

/* The node's matrix, for the reports (the HTML shows it). */
static int keep_matrix(struct place *pl)
{
	struct json_object *m = ln_pci_matrix(pl->topo);
	struct ln_buf text = LN_BUF_INIT;
	int r;

	if (!m)
		return -ENOMEM;
	ln_pci_matrix_text(m, &text);
	r = ln_results_set_topo(pl->c->res, pl->i, text.buf);
	json_object_put(m);
	ln_buf_release(&text);
	return r;
}

int vs_placement(struct vctx *c, size_t i)
{
	struct place pl = { .c = c, .i = i, .node = &c->spec->nodes[i] };
	size_t p, k, ng;
	int r = 0, declared = 0;

	pl.max = c->spec->validation.devices.max_gpu_distance;
	pl.topo = ln_json_at(c->ni[i].facts, "topology");
	pl.gpus = array_at(pl.topo, "gpus");
	pl.nics = array_at(pl.topo, "nics");
	pl.nvml = array_at(ln_json_at(c->ni[i].facts, "gpus"), "devices");
	for (p = 0; p < pl.node->n_rdma; p++)
		declared |= pl.node->rdma[p].n_gpus > 0;
	if (!pl.topo || !json_object_is_type(pl.topo, json_type_object))
		return declared ? vs_not_run_check(c, LN_STAGE_DEVICES, i, "gpu placement",
						   "the agent's facts have no PCIe topology (an "
						   "agent older than protocol 3)") : 0;
	ng = pl.gpus ? json_object_array_length(pl.gpus) : 0;
	if (ng && keep_matrix(&pl) < 0)
		return -ENOMEM;
	if (!pl.node->n_rdma)
		return skip_all(&pl, ng ? "the node declares no RDMA port: no GPU-NIC pair to "
				"place" : "the node declares no RDMA port and has no GPU");
	if (!ng && !declared)
		return skip_all(&pl, "no GPU on the node (its PCIe topology lists none)");
	for (p = 0; p < pl.node->n_rdma && r == 0; p++) {
		const struct ln_rdma_port *rp = &pl.node->rdma[p];

		if (!rp->n_gpus)
			r = report_port(&pl, p);
		for (k = 0; k < rp->n_gpus && r == 0; k++)
			r = judge_pair(&pl, p, rp->gpus[k]);
	}
	if (r == 0)
		r = peer_memory(&pl, declared);
	if (r == 0 && !declared)
		r = report_gdr(&pl);
	return r;
}
