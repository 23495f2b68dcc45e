/* SPDX-License-Identifier: MIT */
/*
 * The io probe's write targets (io_target.h). The probe writes a file in
 * its --mount, and, with --write, the whole of its --device. Either must
 * be a namespace a cluster on this node connected: a mount llmnet made (a
 * "mount" record, the device it recorded still the one mounted there), or
 * a whole namespace device whose subsystem a cluster's "nvme_connection"
 * record names (and --nqn, when given, names too). Anything else (/boot,
 * /var, the root disk, another node's namespace llmnet did not connect)
 * is refused before the probe starts. A read of a device (no --write) is
 * the probe's own check (--nqn, sysfs).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "agents/agent/converge/state.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/run/io_target.h"
#include "agents/agent/target/blockdev.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/json.h"

/* The first cluster's record of (kind, id), or, with id NULL, the first
 * record of kind whose id ends in "/" suffix. Borrowed; NULL when none. */
static struct json_object *any_record(struct ln_state *st, const char *kind, const char *id,
				      const char *suffix)
{
	struct json_object *cl = ln_state_clusters(st), *found = NULL;
	size_t i, j, n = cl ? json_object_array_length(cl) : 0;

	for (i = 0; !found && i < n; i++) {
		const char *c = json_object_get_string(json_object_array_get_idx(cl, i));
		struct json_object *objs = ln_state_objects(st, c);
		size_t m = objs ? json_object_array_length(objs) : 0;

		if (id) {
			found = ln_state_find(st, c, kind, id);
			continue;
		}
		for (j = 0; !found && j < m; j++) {
			struct json_object *o = json_object_array_get_idx(objs, j);
			const char *k = ln_json_str_at(o, "kind"), *oid = ln_json_str_at(o, "id");
			size_t lo = oid ? strlen(oid) : 0, ls = strlen(suffix);

			if (k && oid && !strcmp(k, kind) && lo > ls && oid[lo - ls - 1] == '/' &&
			    !strcmp(oid + lo - ls, suffix))
				found = o;
		}
	}
	json_object_put(cl);
	return found;
}

static int mount_ok(const struct ln_agent *a, struct ln_state *st, const char *mp,
		    struct ln_buf *err)
{
	struct json_object *rec = any_record(st, "mount", mp, NULL);
	const char *want = rec ? ln_json_str_at(rec, "device") : NULL;
	struct ln_blockdev here;
	char id[PATH_MAX] = "";

	if (!rec) {
		ln_buf_addf(err, "the io probe writes only in a mount llmnet made of a connected "
			    "namespace: no cluster on this node mounted '%s'", mp);
		return -LN_EREQUEST;
	}
	if (ln_blockdev_mounted_at(a, mp, &here) == 1)
		ln_blockdev_id(&here, id, sizeof(id));
	if (!want || strcmp(id, want)) {
		ln_buf_addf(err, "the io probe writes only in a mount llmnet made of a connected "
			    "namespace: '%s' has %s mounted, not the device llmnet mounted there (%s)",
			    mp, id[0] ? id : "nothing", want ? want : "not recorded");
		return -LN_EREQUEST;
	}
	return 0;
}

static int device_ok(const struct ln_agent *a, struct ln_state *st, const char *dev,
		     const char *nqn, struct ln_buf *err)
{
	struct ln_buf scratch = LN_BUF_INIT, sub = LN_BUF_INIT;
	struct ln_blockdev bd;
	char p[PATH_MAX];
	int r = -LN_EREQUEST;

	if (ln_blockdev_resolve(a, dev, &bd, &scratch) < 0) {
		ln_buf_addf(err, "the io probe writes only to a namespace a cluster connected: "
			    "%s", scratch.buf);
		goto out;
	}
	/* /sys/block lists whole devices only: a partition has no entry */
	snprintf(p, sizeof(p), "/sys/block/%s/device/subsysnqn", bd.name);
	if (ln_read_attr(a, p, &sub) < 0 || !sub.len) {
		ln_buf_addf(err, "the io probe writes only to a namespace a cluster connected: "
			    "'%s' (%s) is not a whole NVMe namespace", dev, bd.name);
		goto out;
	}
	if (nqn && strcmp(nqn, sub.buf)) {
		ln_buf_addf(err, "the io probe writes only to a namespace of the subsystem it "
			    "names: '%s' is a namespace of '%s', not of '%s'", dev, sub.buf, nqn);
		goto out;
	}
	if (!any_record(st, "nvme_connection", NULL, sub.buf)) {
		ln_buf_addf(err, "the io probe writes only to a namespace a cluster connected: "
			    "'%s' is a namespace of '%s', which no cluster on this node connected",
			    dev, sub.buf);
		goto out;
	}
	r = 0;
out:
	ln_buf_release(&scratch);
	ln_buf_release(&sub);
	return r;
}

int ln_io_target_check(const struct ln_agent *a, int argc, char **argv, struct ln_buf *err)
{
	const char *mount = NULL, *dev = NULL, *nqn = NULL;
	struct ln_state st;
	int i, wr = 0, r;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--write"))
			wr = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--mount"))
			mount = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--device"))
			dev = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--nqn"))
			nqn = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--size"))
			i++;
	}
	if (!mount && !(dev && wr))
		return 0;
	memset(&st, 0, sizeof(st));
	r = ln_state_load((struct ln_agent *)a, &st, err);
	if (r < 0)
		return r;
	r = 0;
	if (mount)
		r = mount_ok(a, &st, mount, err);
	if (r == 0 && dev && wr)
		r = device_ok(a, &st, dev, nqn, err);
	ln_state_release(&st);
	return r;
}
