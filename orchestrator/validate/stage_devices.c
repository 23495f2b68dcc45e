/* SPDX-License-Identifier: MIT */
/*
 * The devices stage: from each node's facts (no probe runs), every
 * declared RDMA port (present, active, link up, rate, link layer, MTU,
 * RoCE v2 GID on the declared ip), the GPU count and a live namespace for
 * every initiator; and, for every initiator with `discovery: true`, the
 * target's discovery log as that node reads it (the agent's `facts
 * --discovery`, one request per node): the subsystem listed at the
 * declared transport, address and service. Its findings gate the
 * pairwise stages: a node whose port failed here is skipped there with
 * this stage's reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/addr.h"
#include "common/json.h"
#include "common/proto.h"
#include "orchestrator/validate/stage_common.h"
#include "orchestrator/validate/stage_gpu.h"

static struct json_object *find_port(struct json_object *facts, const char *dev, unsigned port)
{
	struct json_object *rdma = ln_json_at(facts, "rdma");
	size_t i, j;

	if (!rdma || !json_object_is_type(rdma, json_type_array))
		return NULL;
	for (i = 0; i < json_object_array_length(rdma); i++) {
		struct json_object *d = json_object_array_get_idx(rdma, i), *ports;
		const char *name = ln_json_str_at(d, "device");

		if (!name || strcmp(name, dev))
			continue;
		ports = ln_json_at(d, "ports");
		for (j = 0; ports && j < json_object_array_length(ports); j++) {
			struct json_object *p = json_object_array_get_idx(ports, j);
			int64_t num;

			if (!ln_json_i64_at(p, "port", &num) && num == (int64_t)port)
				return p;
		}
	}
	return NULL;
}

/* The GID index holding ip as a RoCE v2 GID, or -1. An IPv4 address sits
 * in the GID table as ::ffff:a.b.c.d. */
static int roce_gid_index(struct json_object *port, const char *ip)
{
	struct json_object *gids = ln_json_at(port, "gids");
	unsigned char want[16], have[16];
	struct in_addr v4;
	size_t i;

	if (inet_pton(AF_INET, ip, &v4) == 1) {
		memset(want, 0, 10);
		want[10] = want[11] = 0xff;
		memcpy(want + 12, &v4, 4);
	} else if (inet_pton(AF_INET6, ip, want) != 1) {
		return -1;
	}
	for (i = 0; gids && i < json_object_array_length(gids); i++) {
		struct json_object *g = json_object_array_get_idx(gids, i);
		const char *gid = ln_json_str_at(g, "gid"), *type = ln_json_str_at(g, "type");
		int64_t idx;

		if (!gid || !type || strcmp(type, "RoCE v2") || ln_json_i64_at(g, "index", &idx))
			continue;
		if (inet_pton(AF_INET6, gid, have) == 1 && !memcmp(want, have, 16))
			return (int)idx;
	}
	return -1;
}

/* Everything wrong with a present port, "; "-separated into why; its
 * line rate into *rate and its RoCE v2 GID index into *gid. */
static void port_problems(const struct ln_rdma_port *rp, struct json_object *port,
			  struct ln_buf *why, double *rate, int *gid)
{
	const char *state = ln_json_str_at(port, "state");
	const char *phys = ln_json_str_at(port, "phys_state");
	const char *ll = ln_json_str_at(port, "link_layer");
	int64_t v;

	if (!ln_json_i64_at(port, "rate_gbps", &v))
		*rate = (double)v;
	if (!state || strcmp(state, "ACTIVE"))
		ln_buf_addf(why, "%sstate %s, want ACTIVE", why->len ? "; " : "",
			    state ? state : "unknown");
	if (!phys || strcmp(phys, "LINK_UP"))
		ln_buf_addf(why, "%sphysical state %s, want LINK_UP", why->len ? "; " : "",
			    phys ? phys : "unknown");
	if (rp->min_rate_bps && (isnan(*rate) || *rate * 1e9 < (double)rp->min_rate_bps))
		ln_buf_addf(why, "%srate %g Gb/s is below %g Gb/s", why->len ? "; " : "", *rate,
			    (double)rp->min_rate_bps / 1e9);
	if (rp->link_layer != LN_LINK_ANY &&
	    (!ll || strcmp(ll, rp->link_layer == LN_LINK_ETHERNET ? "Ethernet" : "InfiniBand")))
		ln_buf_addf(why, "%slink layer %s, want %s", why->len ? "; " : "",
			    ll ? ll : "unknown", ln_link_layer_name(rp->link_layer));
	if (rp->mtu && (ln_json_i64_at(port, "active_mtu", &v) || v != (int64_t)rp->mtu))
		ln_buf_addf(why, "%sactive MTU %lld, want %u", why->len ? "; " : "",
			    (long long)(ln_json_i64_at(port, "active_mtu", &v) ? -1 : v), rp->mtu);
	if (ll && !strcmp(ll, "Ethernet") && rp->ip) {
		*gid = roce_gid_index(port, rp->ip);
		if (*gid < 0)
			ln_buf_addf(why, "%sno RoCE v2 GID on %s", why->len ? "; " : "", rp->ip);
		else if (rp->gid_index >= 0 && *gid != rp->gid_index)
			ln_buf_addf(why, "%sRoCE v2 GID for %s is at index %d, want %d",
				    why->len ? "; " : "", rp->ip, *gid, rp->gid_index);
	}
}

/* One check per declared RDMA port of node i. */
static int devices_port(struct vctx *c, size_t i, size_t p)
{
	const struct ln_rdma_port *rp = &c->spec->nodes[i].rdma[p];
	struct node_info *ni = &c->ni[i];
	struct ln_buf why = LN_BUF_INIT, name = LN_BUF_INIT;
	struct json_object *port = find_port(ni->facts, rp->device, rp->port);
	struct ln_check *k;
	double rate = NAN;
	int gid = -1, r = -ENOMEM;
	long idx;

	ln_buf_addf(&name, "%s/%u", rp->device, rp->port);
	idx = vs_add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, name.buf);
	if (idx < 0)
		goto out;
	if (!port)
		ln_buf_addf(&why, "port '%s' is not present", name.buf);
	else
		port_problems(rp, port, &why, &rate, &gid);
	k = &c->res->checks[idx];
	k->value = rate;
	k->line_rate = rate;
	k->unit = "Gb/s";
	if (rp->min_rate_bps)
		k->threshold = (double)rp->min_rate_bps / 1e9;
	if (why.len) {
		ni->rdma_ok = 0;
		ni->ports[p].ok = 0;
		free(ni->ports[p].reason);
		ni->ports[p].reason = strdup(why.buf);
		if (!ni->devices_reason)
			ni->devices_reason = strdup(why.buf);
		if (ln_check_set(k, LN_ST_FAIL, "%s", why.buf) < 0)
			goto out;
	} else if (gid >= 0) {
		if (ln_check_set(k, LN_ST_PASS, "RoCE v2 GID index %d on %s", gid, rp->ip) < 0)
			goto out;
	}
	ni->ports[p].gid_index = gid >= 0 ? gid : rp->gid_index;
	ni->ports[p].rate_gbps = rate;
	r = 0;
out:
	ln_buf_release(&why);
	ln_buf_release(&name);
	return r;
}

/* The GPU count, when the node declares GPUs or its facts show some:
 * NVML's where the GPU facts program ran, else /proc's or /dev's; the
 * reason says which, and why NVML was not used. */
static int devices_gpus(struct vctx *c, size_t i)
{
	const struct ln_node *node = &c->spec->nodes[i];
	struct json_object *gpus = ln_json_at(c->ni[i].facts, "gpus");
	const char *source = ln_json_str_at(gpus, "source"), *nvml = ln_json_str_at(gpus, "nvml");
	struct ln_buf from = LN_BUF_INIT;
	int64_t v;
	long idx;
	int r;

	if (!node->gpus && !(gpus && !ln_json_i64_at(gpus, "count", &v) && v))
		return 0;
	idx = vs_add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, "gpus");
	if (idx < 0)
		return -ENOMEM;
	if (!gpus || ln_json_i64_at(gpus, "count", &v))
		v = -1;
	c->res->checks[idx].value = (double)v;
	c->res->checks[idx].threshold = node->gpus;
	if (source && !strcmp(source, "nvml"))
		ln_buf_addstr(&from, "counted by NVML");
	else
		ln_buf_addf(&from, "counted in %s%s%.300s", source && !strcmp(source, "dev") ?
			    "/dev" : "/proc/driver/nvidia/gpus", nvml ? "; NVML not used: " : "",
			    nvml ? nvml : "");
	if (v != (int64_t)node->gpus)
		r = ln_check_set(&c->res->checks[idx], LN_ST_FAIL, "%lld GPUs found, %u declared "
				 "(%s)", (long long)v, node->gpus, from.buf);
	else
		r = ln_check_set(&c->res->checks[idx], LN_ST_PASS, "%s", from.buf);
	ln_buf_release(&from);
	if (r < 0)
		return -ENOMEM;
	return vs_devices_gpu_health(c, i);
}

/* Namespace nsid of subsystem nqn as node's facts show it: its block
 * device (NULL when absent), whether a controller of nqn is live, and the
 * nsids its live controllers do show (into seen, for the message). */
static const char *live_namespace(struct json_object *facts, const char *nqn, uint32_t nsid,
				  int *live, struct ln_buf *seen)
{
	struct json_object *nvme = ln_json_at(facts, "nvme");
	const char *block = NULL;
	size_t j, k;

	*live = 0;
	for (j = 0; nvme && j < json_object_array_length(nvme); j++) {
		struct json_object *ctrl = json_object_array_get_idx(nvme, j), *nss;
		const char *sub = ln_json_str_at(ctrl, "subsysnqn");
		const char *st = ln_json_str_at(ctrl, "state");

		if (!sub || strcmp(sub, nqn) || !st || strcmp(st, "live"))
			continue;
		*live = 1;
		nss = ln_json_at(ctrl, "namespaces");
		for (k = 0; nss && k < json_object_array_length(nss); k++) {
			struct json_object *ns = json_object_array_get_idx(nss, k);
			int64_t id;

			if (ln_json_i64_at(ns, "nsid", &id))
				continue;
			ln_buf_addf(seen, "%s%lld", seen->len ? ", " : "", (long long)id);
			if (id == (int64_t)nsid && !block)
				block = ln_json_str_at(ns, "block");
		}
	}
	return block;
}

/* One check per declared namespace of the target of every initiator on
 * node i: a live controller of the subsystem shows that nsid, with a
 * block device. */
static int devices_namespaces(struct vctx *c, size_t i)
{
	struct ln_buf name = LN_BUF_INIT, seen = LN_BUF_INIT;
	size_t k, j;
	int r = 0;

	for (k = 0; k < c->spec->n_initiators && r == 0; k++) {
		const struct ln_initiator *in = &c->spec->initiators[k];
		const struct ln_target *t = &c->spec->targets[in->target];

		if (in->node != i)
			continue;
		for (j = 0; j < t->n_namespaces && r == 0; j++) {
			uint32_t nsid = t->namespaces[j].nsid;
			const char *block;
			long idx;
			int live;

			ln_buf_reset(&seen);
			block = live_namespace(c->ni[i].facts, t->nqn, nsid, &live, &seen);
			ln_buf_reset(&name);
			ln_buf_addf(&name, "namespace %u of %s", nsid, t->nqn);
			idx = vs_add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, name.buf);
			if (idx < 0)
				r = -ENOMEM;
			else if (block)
				r = ln_check_set(&c->res->checks[idx], LN_ST_PASS, "block device /dev/%s",
						 block);
			else if (!live)
				r = ln_check_set(&c->res->checks[idx], LN_ST_FAIL,
						 "no live controller with a namespace for '%s'", t->nqn);
			else
				r = ln_check_set(&c->res->checks[idx], LN_ST_FAIL,
						 "namespace %u of '%s' is missing: its live controller "
						 "shows %s%s", nsid, t->nqn, seen.len ? "nsid " : "",
						 seen.len ? seen.buf : "no namespace");
		}
	}
	ln_buf_release(&name);
	ln_buf_release(&seen);
	return r;
}

/* "ADDR:SERVICE", an IPv6 address in brackets. */
static void add_hostport(struct ln_buf *b, const char *addr, const char *svc)
{
	ln_buf_addf(b, strchr(addr, ':') ? "[%s]:%s" : "%s:%s", addr, svc);
}

/* Whether the agent's "log" lists nqn as an NVM subsystem (subtype 2) at
 * transport, address and service; the NVM subsystems it does list, for
 * the message, into what. */
static int log_lists(struct json_object *log, const char *nqn, const char *transport,
		     const char *address, const char *service, struct ln_buf *what)
{
	size_t j, n = json_object_array_length(log);
	int found = 0;

	for (j = 0; j < n; j++) {
		struct json_object *e = json_object_array_get_idx(log, j);
		const char *enqn = ln_json_str_at(e, "nqn"), *tr = ln_json_str_at(e, "transport");
		const char *addr = ln_json_str_at(e, "address"), *svc = ln_json_str_at(e, "service");
		int64_t sub;

		if (ln_json_i64_at(e, "subtype", &sub) || sub != 2 || !enqn || !tr || !addr || !svc)
			continue;
		if (!strcmp(enqn, nqn) && !strcmp(tr, transport) && ln_same_addr(addr, address) &&
		    ln_same_service(svc, service))
			found = 1;
		ln_buf_addf(what, "%s'%s' at %s ", what->len ? ", " : "", enqn, tr);
		add_hostport(what, addr, svc);
	}
	if (!what->len)
		ln_buf_addstr(what, "no subsystem for this host");
	return found;
}

/* The verdict on one place from the agent's answer for it (x; NULL when
 * none came back, why then says what went wrong): pass only when a log
 * was read there and lists the subsystem there. */
static int judge_place(struct ln_check *k, struct json_object *x, const char *nqn,
		       const char *transport, const char *address, const char *service,
		       const char *why)
{
	struct json_object *log = ln_json_at(x, "log");
	struct ln_buf what = LN_BUF_INIT, at = LN_BUF_INIT;
	const char *host = ln_json_str_at(x, "host_nqn"), *error = ln_json_str_at(x, "error");
	int r;

	add_hostport(&at, address, service);
	if (!x)
		r = ln_check_set(k, LN_ST_FAIL, "no discovery log was read: %s", why);
	else if (error)
		r = ln_check_set(k, LN_ST_FAIL, "%s", error);
	else if (!log || !json_object_is_type(log, json_type_array))
		r = ln_check_set(k, LN_ST_FAIL, "no discovery log was read: the agent's answer "
				 "has none for %s %s", transport, at.buf);
	else if (log_lists(log, nqn, transport, address, service, &what))
		r = ln_check_set(k, LN_ST_PASS, "listed in the discovery log at %s %s for host '%s'",
				 transport, at.buf, host ? host : "");
	else
		r = ln_check_set(k, LN_ST_FAIL, "'%s' is not in the discovery log at %s %s for host "
				 "'%s': the log lists %s", nqn, transport, at.buf, host ? host : "",
				 what.buf);
	ln_buf_release_all(&what, &at);
	return r;
}

/* The agent's answer for place j, when it is the place asked. */
static struct json_object *answer_for(struct json_object *ans, size_t j, const char *nqn,
				      const char *transport, const char *address,
				      const char *service)
{
	struct json_object *arr = ln_json_at(ans, "discovery"), *x;
	const char *v;

	if (!arr || !json_object_is_type(arr, json_type_array) ||
	    j >= json_object_array_length(arr))
		return NULL;
	x = json_object_array_get_idx(arr, j);
	v = ln_json_str_at(x, "nqn");
	if (!v || strcmp(v, nqn) || !(v = ln_json_str_at(x, "transport")) || strcmp(v, transport) ||
	    !(v = ln_json_str_at(x, "address")) || strcmp(v, address) ||
	    !(v = ln_json_str_at(x, "service")) || strcmp(v, service))
		return NULL;
	return x;
}

/* One check per initiator of node i with discovery: true from *from on,
 * at most LN_FACTS_DISCOVERY_MAX of them, from the discovery logs node i
 * reads (one `facts --discovery`); *from moves past them. */
static int devices_discovery(struct vctx *c, size_t i, size_t *from)
{
	const char *places[LN_FACTS_DISCOVERY_MAX];
	size_t ks[LN_FACTS_DISCOVERY_MAX], n = 0, k, j;
	struct ln_buf err = LN_BUF_INIT, name = LN_BUF_INIT, *pl = NULL;
	struct json_object *ans = NULL;
	int r = 0;

	for (k = *from; k < c->spec->n_initiators && n < LN_FACTS_DISCOVERY_MAX; k++)
		if (c->spec->initiators[k].node == i && c->spec->initiators[k].discovery)
			ks[n++] = k;
	*from = k;
	if (!n)
		return 0;
	pl = calloc(n, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	for (j = 0; j < n; j++) {
		const struct ln_target *t = &c->spec->targets[c->spec->initiators[ks[j]].target];

		ln_buf_init(&pl[j], 0);
		ln_buf_addf(&pl[j], "%s,%s,%u,%s", ln_transport_name(t->transport), t->address,
			    t->service, t->nqn);
		places[j] = pl[j].buf;
	}
	if (!c->ops->discovery)
		ln_buf_addstr(&err, "this transport reads no discovery log");
	else if (c->ops->discovery(c->octx, i, places, n, &ans, &err) < 0 || !ans)
		ans = NULL;
	for (j = 0; j < n && r == 0; j++) {
		const struct ln_target *t = &c->spec->targets[c->spec->initiators[ks[j]].target];
		const char *tr = ln_transport_name(t->transport);
		char svc[8];
		long idx;

		snprintf(svc, sizeof(svc), "%u", t->service);
		ln_buf_reset(&name);
		ln_buf_addf(&name, "discoverable %s at ", t->nqn);
		add_hostport(&name, t->address, svc);
		ln_buf_addf(&name, "/%s from %s", tr, c->spec->nodes[i].name);
		idx = vs_add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, name.buf);
		if (idx < 0)
			r = -ENOMEM;
		else
			r = judge_place(&c->res->checks[idx],
					answer_for(ans, j, t->nqn, tr, t->address, svc), t->nqn, tr,
					t->address, svc, ans ? "the agent answered for other places" :
					err.len ? err.buf : "no answer");
	}
	for (j = 0; j < n; j++)
		ln_buf_release(&pl[j]);
	free(pl);
	json_object_put(ans);
	ln_buf_release_all(&err, &name);
	return r;
}

static int devices_node(struct vctx *c, size_t i)
{
	struct node_info *ni = &c->ni[i];
	size_t p, k;
	long idx;
	int r = 0;

	if (!ni->facts) {
		idx = vs_add_check(c, LN_STAGE_DEVICES, i, LN_NO_NODE, "facts");
		if (idx < 0)
			return -ENOMEM;
		ni->rdma_ok = 0;
		return ln_check_set(&c->res->checks[idx], LN_ST_FAIL, "%s",
				    ni->devices_reason ? ni->devices_reason : "no facts");
	}
	for (p = 0; p < c->spec->nodes[i].n_rdma && r == 0; p++)
		r = devices_port(c, i, p);
	if (r == 0)
		r = devices_gpus(c, i);
	if (r == 0)
		r = vs_placement(c, i);
	if (r == 0)
		r = devices_namespaces(c, i);
	if (r == 0)
		r = vs_devices_gds(c, i);
	for (k = 0; k < c->spec->n_initiators && r == 0;)
		r = devices_discovery(c, i, &k);
	return r;
}

int vs_devices_stage(struct vctx *c)
{
	size_t i;
	int r = 0;

	c->res->stages[LN_STAGE_DEVICES].ran = 1;
	for (i = 0; i < c->n && r == 0; i++)
		if (vs_under_test(c, i) || c->o->limit)
			r = devices_node(c, i);
	return r;
}
