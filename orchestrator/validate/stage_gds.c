/* SPDX-License-Identifier: MIT */
/*
 * The devices stage's GPUDirect Storage readiness check, one per
 * initiator that declares `gds: true` (docs/validation.md, "GPUDirect
 * Storage"), on its node's facts: nvidia_fs loaded (facts.gds), the GPU
 * driver's open kernel modules (facts.topology.peer_memory), the live
 * connection's transport rdma (facts.nvme; lint already refuses a tcp
 * target and a file system other than ext4 or xfs), and cufile.json's
 * flags reported. A failure names everything missing at once.
 */
#include <errno.h>
#include <string.h>

#include "common/json.h"
#include "orchestrator/validate/stage_common.h"
#include "orchestrator/validate/stage_gpu.h"

/* The transport of the node's live controller of nqn, NULL when none. */
static const char *live_transport(struct json_object *facts, const char *nqn)
{
	struct json_object *nvme = ln_json_at(facts, "nvme");
	size_t j;

	for (j = 0; nvme && json_object_is_type(nvme, json_type_array) &&
		    j < json_object_array_length(nvme); j++) {
		struct json_object *ctrl = json_object_array_get_idx(nvme, j);
		const char *sub = ln_json_str_at(ctrl, "subsysnqn");
		const char *st = ln_json_str_at(ctrl, "state");

		if (sub && !strcmp(sub, nqn) && st && !strcmp(st, "live"))
			return ln_json_str_at(ctrl, "transport");
	}
	return NULL;
}

/* 1 true, 0 false, -1 absent or not a boolean. */
static int tri(struct json_object *o, const char *key)
{
	struct json_object *v = ln_json_at(o, key);

	return v && json_object_is_type(v, json_type_boolean) ? json_object_get_boolean(v) : -1;
}

static void sep(struct ln_buf *b)
{
	if (b->len)
		ln_buf_addstr(b, "; ");
}

/* What the node lacks for GDS on initiator in into bad. */
static void missing(struct json_object *facts, const struct ln_initiator *in, const char *nqn,
		    struct ln_buf *bad)
{
	struct json_object *gds = ln_json_at(facts, "gds");
	int open = tri(ln_json_at(ln_json_at(ln_json_at(facts, "topology"), "peer_memory"),
				  "dmabuf"), "gpu_open_modules");
	const char *tr = live_transport(facts, nqn);

	(void)in;
	if (!gds || !json_object_is_type(gds, json_type_object)) {
		ln_buf_addstr(bad, "the agent's facts have no 'gds' (an older agent)");
		return;
	}
	if (tri(gds, "nvidia_fs") != 1) {
		sep(bad);
		ln_buf_addstr(bad, "nvidia_fs is not loaded (no /sys/module/nvidia_fs or "
			      "/proc/driver/nvidia-fs): modprobe nvidia-fs");
	}
	if (open != 1) {
		sep(bad);
		ln_buf_addstr(bad, open == 0 ? "the NVIDIA driver is not the open kernel modules, "
			      "which GDS needs" : "no NVIDIA driver is loaded, so whether it is the "
			      "open kernel modules GDS needs is unknown");
	}
	if (!tr) {
		sep(bad);
		ln_buf_addf(bad, "no live controller of '%s'", nqn);
	} else if (strcmp(tr, "rdma")) {
		sep(bad);
		ln_buf_addf(bad, "the live connection to '%s' is %.16s, and GDS reads NVMe-oF over "
			    "RDMA only", nqn, tr);
	}
}

/* cufile.json as the node has it: reported, not judged. */
static void cufile_note(struct json_object *facts, struct ln_buf *note)
{
	struct json_object *cf = ln_json_at(ln_json_at(facts, "gds"), "cufile");
	struct json_object *addrs = ln_json_at(cf, "rdma_dev_addr_list");
	const char *err = ln_json_str_at(cf, "error");
	size_t j;

	if (!ln_json_at(facts, "gds")) {
		ln_buf_addstr(note, "cufile.json not known");
		return;
	}
	if (!cf || !json_object_is_type(cf, json_type_object)) {
		ln_buf_addstr(note, "no /etc/cufile.json (libcufile's defaults, unless "
			      "CUFILE_ENV_PATH_JSON names another)");
		return;
	}
	if (err) {
		ln_buf_addf(note, "/etc/cufile.json %.128s", err);
		return;
	}
	ln_buf_addstr(note, "/etc/cufile.json: rdma_dev_addr_list ");
	if (addrs && json_object_is_type(addrs, json_type_array) &&
	    json_object_array_length(addrs)) {
		for (j = 0; j < json_object_array_length(addrs); j++)
			ln_buf_addf(note, "%s%s", j ? "," : "[",
				    json_object_get_string(json_object_array_get_idx(addrs, j)));
		ln_buf_addch(note, ']');
	} else {
		ln_buf_addstr(note, "none");
	}
	if (tri(cf, "allow_compat_mode") == 1)
		ln_buf_addstr(note, ", allow_compat_mode true (cuFile falls back to reads "
			      "through host memory, silently, where GDS cannot be used)");
}

int vs_devices_gds(struct vctx *c, size_t i)
{
	struct ln_buf name = LN_BUF_INIT, bad = LN_BUF_INIT, note = LN_BUF_INIT;
	size_t k;
	int r = 0;

	for (k = 0; k < c->spec->n_initiators && r == 0; k++) {
		const struct ln_initiator *in = &c->spec->initiators[k];
		const char *nqn = c->spec->targets[in->target].nqn;
		long idx;

		if (in->node != i || !in->gds)
			continue;
		ln_buf_reset(&name);
		ln_buf_reset(&bad);
		ln_buf_reset(&note);
		ln_buf_addf(&name, "gds %s", nqn);
		idx = vs_add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, name.buf);
		if (idx < 0) {
			r = -ENOMEM;
			break;
		}
		missing(c->ni[i].facts, in, nqn, &bad);
		cufile_note(c->ni[i].facts, &note);
		if (bad.len)
			r = ln_check_set(&c->res->checks[idx], LN_ST_FAIL, "GPUDirect Storage cannot "
					 "read '%s' on '%s': %s (%s)", nqn, vs_nname(c, i), bad.buf,
					 note.buf);
		else
			r = ln_check_set(&c->res->checks[idx], LN_ST_PASS, "nvidia_fs loaded, open "
					 "kernel modules, rdma; %s", note.buf);
	}
	ln_buf_release_all(&name, &bad, &note);
	return r;
}
