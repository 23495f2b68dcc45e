/* SPDX-License-Identifier: MIT */
/*
 * The io probe's write targets (io_target.h). The probe writes a file in
 * its --mount, and, with --write, the whole of its --device. Either must
 * be a namespace a cluster on this node connected: a mount llmnet made (a
 * "mount" record, the device it recorded still the one mounted there), or
 * a whole namespace device whose subsystem a cluster's "nvme_connection"
 * record names (and --nqn, when given, names too). Anything else (/boot,
 * /var, the root disk, another node's namespace llmnet did not connect)
 * is refused before the probe starts; with `run --cluster NAME` it must
 * be that cluster's own (another cluster's mount or connection is refused,
 * naming the owner). A read of a device (no --write) is the probe's own
 * check (--nqn, sysfs).
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

/* Cluster c's record of (kind, id), or, with id NULL, its first record of
 * kind whose id ends in "/" suffix. Borrowed; NULL when none. */
static struct json_object *record_in(struct ln_state *st, const char *c, const char *kind,
				     const char *id, const char *suffix)
{
	struct json_object *objs = ln_state_objects(st, c);
	size_t j, m = objs ? json_object_array_length(objs) : 0, ls;

	if (id)
		return ln_state_find(st, c, kind, id);
	ls = strlen(suffix);
	for (j = 0; j < m; j++) {
		struct json_object *o = json_object_array_get_idx(objs, j);
		const char *k = ln_json_str_at(o, "kind"), *oid = ln_json_str_at(o, "id");
		size_t lo = oid ? strlen(oid) : 0;

		if (k && oid && !strcmp(k, kind) && lo > ls && oid[lo - ls - 1] == '/' &&
		    !strcmp(oid + lo - ls, suffix))
			return o;
	}
	return NULL;
}

/* The requesting cluster's record (record_in), else the first other
 * cluster's, its name in owner (size 65); with cluster NULL (a request
 * that names none), any cluster's. Borrowed; NULL when none. */
static struct json_object *record_of(struct ln_state *st, const char *cluster, const char *kind,
				     const char *id, const char *suffix, char *owner)
{
	struct json_object *cl = ln_state_clusters(st), *found = NULL, *o;
	size_t i, n = cl ? json_object_array_length(cl) : 0;

	owner[0] = '\0';
	if (cluster && (found = record_in(st, cluster, kind, id, suffix)))
		snprintf(owner, 65, "%s", cluster);
	for (i = 0; !found && i < n; i++) {
		const char *c = json_object_get_string(json_object_array_get_idx(cl, i));

		if (c && (o = record_in(st, c, kind, id, suffix))) {
			found = o;
			snprintf(owner, 65, "%s", c);
		}
	}
	json_object_put(cl);
	return found;
}

/* The record is another cluster's than the requesting one (cluster set):
 * refused, naming the object and its owner. */
static int others(const char *cluster, const char *owner, const char *what, struct ln_buf *err)
{
	if (!cluster || !strcmp(cluster, owner))
		return 0;
	ln_buf_addf(err, "the io probe writes only to what the requesting cluster connected: "
		    "%s belongs to cluster '%s', not to cluster '%s'", what, owner, cluster);
	return -LN_EREQUEST;
}

static int mount_ok(const struct ln_agent *a, struct ln_state *st, const char *cluster,
		    const char *mp, struct ln_buf *err)
{
	char owner[65], what[PATH_MAX + 16];
	struct json_object *rec = record_of(st, cluster, "mount", mp, NULL, owner);
	const char *want = rec ? ln_json_str_at(rec, "device") : NULL;
	struct ln_blockdev here;
	char id[PATH_MAX] = "";

	if (!rec) {
		ln_buf_addf(err, "the io probe writes only in a mount llmnet made of a connected "
			    "namespace: no cluster on this node mounted '%s'", mp);
		return -LN_EREQUEST;
	}
	snprintf(what, sizeof(what), "the mount '%s'", mp);
	if (others(cluster, owner, what, err) < 0)
		return -LN_EREQUEST;
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

static int device_ok(const struct ln_agent *a, struct ln_state *st, const char *cluster,
		     const char *dev, const char *nqn, struct ln_buf *err)
{
	struct ln_buf scratch = LN_BUF_INIT, sub = LN_BUF_INIT, what = LN_BUF_INIT;
	struct ln_blockdev bd;
	char p[PATH_MAX], owner[65];
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
	if (!record_of(st, cluster, "nvme_connection", NULL, sub.buf, owner)) {
		ln_buf_addf(err, "the io probe writes only to a namespace a cluster connected: "
			    "'%s' is a namespace of '%s', which no cluster on this node connected",
			    dev, sub.buf);
		goto out;
	}
	ln_buf_addf(&what, "'%s' (a namespace of the connection to '%s')", dev, sub.buf);
	r = others(cluster, owner, what.buf, err);
out:
	ln_buf_release_all(&scratch, &sub, &what);
	return r;
}

int ln_io_target_check(const struct ln_agent *a, const char *cluster, int argc, char **argv,
		       struct ln_buf *err)
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
		r = mount_ok(a, &st, cluster, mount, err);
	if (r == 0 && dev && wr)
		r = device_ok(a, &st, cluster, dev, nqn, err);
	ln_state_release(&st);
	return r;
}
