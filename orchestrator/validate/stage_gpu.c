/* SPDX-License-Identifier: MIT */
/*
 * GPU health in the devices stage (stage_gpu.h): what NVML reports of each
 * GPU (the agent's facts.gpus.devices, read by the GPU facts program,
 * docs/agent-protocol.md) judged as operators judge a node before a
 * training job: a row remap pending (the GPU needs a reset to apply it) or
 * failed (it ran out of spare rows), any volatile uncorrected ECC error
 * since the driver loaded, or an NVLink down, fails that GPU, which the
 * check names by NVML index and PCI bus id. NVML answers NOT_SUPPORTED for
 * what a GPU does not have (no ECC on some boards, no NVLink on a PCIe
 * card, no row remapping before Ampere): null there is said, not failed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "orchestrator/validate/stage_common.h"
#include "orchestrator/validate/stage_gpu.h"

/* 1 true, 0 false, -1 null or absent */
static int tristate(struct json_object *d, const char *key)
{
	struct json_object *v = ln_json_at(d, key);

	return json_object_is_type(v, json_type_boolean) ? json_object_get_boolean(v) : -1;
}

static void sep(struct ln_buf *b)
{
	if (b->len)
		ln_buf_addstr(b, "; ");
}

/* The faults of one GPU into bad, what NVML does not report into unknown. */
static void judge(struct json_object *d, struct ln_buf *bad, struct ln_buf *unknown)
{
	struct json_object *errs = ln_json_at(d, "errors");
	int64_t ecc, up, total;
	size_t k;

	for (k = 0; errs && k < json_object_array_length(errs); k++) {
		sep(bad);
		ln_buf_addf(bad, "NVML: %s",
			    json_object_get_string(json_object_array_get_idx(errs, k)));
	}
	if (tristate(d, "row_remap_pending") == 1) {
		sep(bad);
		ln_buf_addstr(bad, "a row remap is pending (the GPU needs a reset to apply it)");
	}
	if (tristate(d, "row_remap_failed") == 1) {
		sep(bad);
		ln_buf_addstr(bad, "row remapping failed (no spare row left: replace the GPU)");
	}
	if (tristate(d, "row_remap_pending") < 0 || tristate(d, "row_remap_failed") < 0)
		ln_buf_addf(unknown, "%srow remapping", unknown->len ? ", " : "");
	if (ln_json_i64_at(d, "ecc_volatile_uncorrected", &ecc))
		ln_buf_addf(unknown, "%suncorrected ECC count", unknown->len ? ", " : "");
	else if (ecc > 0) {
		sep(bad);
		ln_buf_addf(bad, "%lld volatile uncorrected ECC error%s since the driver loaded",
			    (long long)ecc, ecc == 1 ? "" : "s");
	}
	if (ln_json_i64_at(d, "nvlink_up", &up) || ln_json_i64_at(d, "nvlink_total", &total))
		ln_buf_addf(unknown, "%sNVLink", unknown->len ? ", " : "");
	else if (up == 0 && total > 0)
		/* a PCIe card without an NVLink bridge reports every link, none
		 * active: no NVLink to judge, not a broken one */
		ln_buf_addf(unknown, "%sNVLink (none of %lld links active: no bridge, or the "
			    "fabric manager is down)", unknown->len ? ", " : "", (long long)total);
	else if (up < total) {
		sep(bad);
		ln_buf_addf(bad, "%lld of %lld NVLinks up", (long long)up, (long long)total);
	}
}

int vs_devices_gpu_health(struct vctx *c, size_t i)
{
	struct json_object *gpus = ln_json_at(c->ni[i].facts, "gpus"), *devs;
	const char *source = ln_json_str_at(gpus, "source");
	size_t k;
	int r = 0;

	devs = ln_json_at(gpus, "devices");
	if (!source || strcmp(source, "nvml") || !json_object_is_type(devs, json_type_array))
		return 0;
	for (k = 0; k < json_object_array_length(devs) && r == 0; k++) {
		struct json_object *d = json_object_array_get_idx(devs, k);
		struct ln_buf name = LN_BUF_INIT, bad = LN_BUF_INIT, unknown = LN_BUF_INIT;
		const char *bus = ln_json_str_at(d, "bus_id");
		int64_t index;
		long idx;

		if (ln_json_i64_at(d, "index", &index))
			index = (int64_t)k;
		ln_buf_addf(&name, "gpu %lld (%s)", (long long)index, bus ? bus : "bus id unknown");
		idx = vs_add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, name.buf);
		if (idx < 0) {
			r = -ENOMEM;
		} else {
			judge(d, &bad, &unknown);
			if (bad.len)
				r = ln_check_set(&c->res->checks[idx], LN_ST_FAIL, "%s%s%s%s", bad.buf,
						 unknown.len ? " (NVML does not report its " : "",
						 unknown.buf, unknown.len ? ")" : "");
			else if (unknown.len)
				r = ln_check_set(&c->res->checks[idx], LN_ST_PASS, "not judged, NVML "
						 "does not report it for this GPU: %s", unknown.buf);
		}
		ln_buf_release_all(&name, &bad, &unknown);
	}
	return r < 0 ? -ENOMEM : 0;
}
