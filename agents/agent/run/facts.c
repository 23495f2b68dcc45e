// SPDX-License-Identifier: MIT
/*
 * `facts`: what the node is and holds, read from sysfs, procfs and
 * configfs under the root, never written. A section that cannot be read is
 * null with a warning, never a guess: the controller decides on these
 * (host NQNs for allowed_hosts, RDMA port state for validation).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/converge/parts.h"
#include "agents/agent/converge/state.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/initiator/hostid.h"
#include "agents/agent/run/facts.h"
#include "agents/agent/run/gpu_nvml.h"
#include "agents/agent/run/gds.h"
#include "agents/agent/run/topology.h"
#include "common/json.h"
#include "common/util.h"

static struct json_object *str_or_null(const struct ln_agent *a, const char *path)
{
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *o = NULL;

	if (ln_read_attr(a, path, &b) == 0) {
		ln_buf_rtrim(&b);
		if (b.len)
			o = json_object_new_string(b.buf);
	}
	ln_buf_release(&b);
	return o;
}

static long long attr_ll(const struct ln_agent *a, const char *path, long long dflt)
{
	struct ln_buf b = LN_BUF_INIT;
	long long v = dflt;
	char *end;

	if (ln_read_attr(a, path, &b) == 0 && b.len) {
		v = strtoll(b.buf, &end, 0);
		if (*end && *end != ' ')
			v = dflt;
	}
	ln_buf_release(&b);
	return v;
}

/* "4: ACTIVE" -> "ACTIVE"; "5: LinkUp" -> "LINK_UP" */
static struct json_object *port_state(const struct ln_agent *a, const char *path, int phys)
{
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *o = NULL;
	const char *s;

	if (ln_read_attr(a, path, &b) == 0) {
		s = strchr(b.buf, ':');
		s = s ? s + 1 : b.buf;
		while (*s == ' ')
			s++;
		if (phys) {
			static const char *const map[][2] = {
				{ "Sleep", "SLEEP" }, { "Polling", "POLLING" }, { "Disabled", "DISABLED" },
				{ "PortConfigurationTraining", "PORT_CONFIGURATION_TRAINING" },
				{ "LinkUp", "LINK_UP" }, { "LinkErrorRecovery", "LINK_ERROR_RECOVERY" },
				{ "Phy Test", "PHY_TEST" },
			};
			size_t i;

			for (i = 0; i < ARRAY_SIZE(map); i++)
				if (!strcmp(s, map[i][0]))
					s = map[i][1];
		}
		o = json_object_new_string(s);
	}
	ln_buf_release(&b);
	return o;
}

/* The RoCE path MTU a netdev MTU allows: the largest IB MTU that fits
 * after the RoCE headers, as rdma_rxe and mlx5 compute it. */
static int roce_mtu(long long netdev_mtu)
{
	static const int mtus[] = { 4096, 2048, 1024, 512, 256 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mtus); i++)
		if (netdev_mtu - 80 >= mtus[i])
			return mtus[i];
	return 0;
}

static struct json_object *rdma_facts(const struct ln_agent *a)
{
	struct json_object *arr = json_object_new_array();
	char **devs = NULL, **ports = NULL, **gids = NULL, p[PATH_MAX];
	size_t nd = 0, np, ng, i, j, k;

	ln_list_dir(a, "/sys/class/infiniband", &devs, &nd);
	for (i = 0; i < nd; i++) {
		struct json_object *dev = json_object_new_object(), *parr = json_object_new_array();

		ln_json_add_str(dev, "device", devs[i]);
		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/node_guid", devs[i]);
		ln_json_add(dev, "node_guid", str_or_null(a, p));
		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports", devs[i]);
		ln_list_dir(a, p, &ports, &np);
		for (j = 0; j < np; j++) {
			struct json_object *port = json_object_new_object(), *garr;
			struct ln_buf b = LN_BUF_INIT;
			char base[PATH_MAX], netdev0[64] = "";
			int ethernet;

			snprintf(base, sizeof(base), "/sys/class/infiniband/%s/ports/%s", devs[i],
				 ports[j]);
			ln_json_add_i64(port, "port", atoi(ports[j]));
			snprintf(p, sizeof(p), "%s/state", base);
			ln_json_add(port, "state", port_state(a, p, 0));
			snprintf(p, sizeof(p), "%s/phys_state", base);
			ln_json_add(port, "phys_state", port_state(a, p, 1));
			snprintf(p, sizeof(p), "%s/rate", base);
			ln_json_add(port, "rate", str_or_null(a, p));
			if (ln_read_attr(a, p, &b) == 0)
				ln_json_add_double(port, "rate_gbps", strtod(b.buf, NULL));
			else
				ln_json_add(port, "rate_gbps", NULL);
			ln_buf_release(&b);
			snprintf(p, sizeof(p), "%s/link_layer", base);
			ln_json_add(port, "link_layer", str_or_null(a, p));
			ln_read_attr(a, p, &b);
			ethernet = !strcmp(b.buf, "Ethernet");
			ln_buf_release(&b);
			garr = json_object_new_array();
			snprintf(p, sizeof(p), "%s/gids", base);
			ln_list_dir(a, p, &gids, &ng);
			for (k = 0; k < ng; k++) {
				struct json_object *g;
				struct ln_buf gid = LN_BUF_INIT;

				snprintf(p, sizeof(p), "%s/gids/%s", base, gids[k]);
				if (ln_read_attr(a, p, &gid) < 0 || !gid.len ||
				    !strcmp(gid.buf, "0000:0000:0000:0000:0000:0000:0000:0000")) {
					ln_buf_release(&gid);
					continue;
				}
				g = json_object_new_object();
				ln_json_add_i64(g, "index", atoi(gids[k]));
				ln_json_add_str(g, "gid", gid.buf);
				snprintf(p, sizeof(p), "%s/gid_attrs/types/%s", base, gids[k]);
				ln_json_add(g, "type", str_or_null(a, p));
				snprintf(p, sizeof(p), "%s/gid_attrs/ndevs/%s", base, gids[k]);
				ln_json_add(g, "netdev", str_or_null(a, p));
				if (!netdev0[0]) {
					struct ln_buf nd0 = LN_BUF_INIT;

					if (ln_read_attr(a, p, &nd0) == 0)
						snprintf(netdev0, sizeof(netdev0), "%s", nd0.buf);
					ln_buf_release(&nd0);
				}
				json_object_array_add(garr, g);
				ln_buf_release(&gid);
			}
			ln_names_free(gids, ng);
			if (ethernet && netdev0[0] && ln_valid_name(netdev0, 15)) {
				long long mtu;

				snprintf(p, sizeof(p), "/sys/class/net/%s/mtu", netdev0);
				mtu = attr_ll(a, p, 0);
				if (mtu > 0 && roce_mtu(mtu))
					ln_json_add_i64(port, "active_mtu", roce_mtu(mtu));
				else
					ln_json_add(port, "active_mtu", NULL);
			} else {
				ln_json_add(port, "active_mtu", NULL);
			}
			ln_json_add(port, "gids", garr);
			json_object_array_add(parr, port);
		}
		ln_names_free(ports, np);
		ln_json_add(dev, "ports", parr);
		json_object_array_add(arr, dev);
	}
	ln_names_free(devs, nd);
	return arr;
}

/* Append addr to the "addresses" of the netdev named dev, if listed. */
static void add_address(struct json_object *netdevs, const char *dev, const char *addr)
{
	size_t i, n = json_object_array_length(netdevs);

	for (i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(netdevs, i), *v, *l;

		json_object_object_get_ex(d, "name", &v);
		if (!strcmp(json_object_get_string(v), dev) &&
		    json_object_object_get_ex(d, "addresses", &l))
			json_object_array_add(l, json_object_new_string(addr));
	}
}

/* An interface address as "ADDR/PREFIX" in out; -1 for a family other
 * than IPv4 and IPv6. */
static int format_ifaddr(const struct ifaddrs *x, char *out, size_t size)
{
	char addr[INET6_ADDRSTRLEN];
	const void *ip, *mask = NULL;
	int fam = x->ifa_addr->sa_family, prefix = 0;
	size_t len, b;

	if (fam == AF_INET) {
		ip = &((const struct sockaddr_in *)x->ifa_addr)->sin_addr;
		if (x->ifa_netmask)
			mask = &((const struct sockaddr_in *)x->ifa_netmask)->sin_addr;
		len = 4;
	} else if (fam == AF_INET6) {
		ip = &((const struct sockaddr_in6 *)x->ifa_addr)->sin6_addr;
		if (x->ifa_netmask)
			mask = &((const struct sockaddr_in6 *)x->ifa_netmask)->sin6_addr;
		len = 16;
	} else {
		return -1;
	}
	inet_ntop(fam, ip, addr, sizeof(addr));
	for (b = 0; mask && b < len; b++)
		prefix += __builtin_popcount(((const unsigned char *)mask)[b]);
	snprintf(out, size, "%s/%d", addr, prefix);
	return 0;
}

/* Each interface address, as (netdev, "ADDR/PREFIX"), to fn: netlink
 * (getifaddrs) on the real node; a recorded list under a fixture root,
 * since netlink cannot be redirected. */
static void each_address(const struct ln_agent *a,
			 void (*fn)(void *ctx, const char *dev, const char *addr), void *ctx)
{
	struct ifaddrs *ifa = NULL, *x;

	if (a->fixture) {
		struct ln_buf b = LN_BUF_INIT;
		char *line, *save = NULL;

		ln_read_attr(a, "/etc/llmnet-fixture/addresses", &b);
		for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char dev[64], addr[128];

			if (sscanf(line, "%63s %127s", dev, addr) == 2)
				fn(ctx, dev, addr);
		}
		ln_buf_release(&b);
		return;
	}
	if (getifaddrs(&ifa) < 0)
		return;
	for (x = ifa; x; x = x->ifa_next) {
		char out[INET6_ADDRSTRLEN + 8];

		if (x->ifa_addr && format_ifaddr(x, out, sizeof(out)) == 0)
			fn(ctx, x->ifa_name, out);
	}
	freeifaddrs(ifa);
}

static void add_address_cb(void *ctx, const char *dev, const char *addr)
{
	add_address(ctx, dev, addr);
}

static void add_addresses(const struct ln_agent *a, struct json_object *netdevs)
{
	each_address(a, add_address_cb, netdevs);
}

struct iface_find {
	unsigned char want[16];
	int family;
	char *ifname;
	size_t size;
	int found;
};

/* The netdev whose address (before its /PREFIX) is the one sought. */
static void iface_cb(void *ctx, const char *dev, const char *addr)
{
	struct iface_find *f = ctx;
	unsigned char have[16];
	char ip[INET6_ADDRSTRLEN];

	snprintf(ip, sizeof(ip), "%.*s", (int)strcspn(addr, "/"), addr);
	if (f->found || inet_pton(f->family, ip, have) != 1 ||
	    memcmp(have, f->want, f->family == AF_INET ? 4 : 16))
		return;
	snprintf(f->ifname, f->size, "%s", dev);
	f->found = 1;
}

int ln_facts_addr_iface(const struct ln_agent *a, const char *addr, char *ifname, size_t size)
{
	struct iface_find f = { .ifname = ifname, .size = size };

	f.family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(f.family, addr, f.want) != 1)
		return -EINVAL;
	each_address(a, iface_cb, &f);
	return f.found ? 0 : -ENOENT;
}

static struct json_object *netdev_facts(const struct ln_agent *a)
{
	struct json_object *arr = json_object_new_array();
	char **devs = NULL, p[PATH_MAX];
	size_t n = 0, i;

	ln_list_dir(a, "/sys/class/net", &devs, &n);
	for (i = 0; i < n; i++) {
		struct json_object *d = json_object_new_object();

		ln_json_add_str(d, "name", devs[i]);
		snprintf(p, sizeof(p), "/sys/class/net/%s/address", devs[i]);
		ln_json_add(d, "mac", str_or_null(a, p));
		snprintf(p, sizeof(p), "/sys/class/net/%s/mtu", devs[i]);
		ln_json_add_i64(d, "mtu", attr_ll(a, p, 0));
		snprintf(p, sizeof(p), "/sys/class/net/%s/operstate", devs[i]);
		ln_json_add(d, "operstate", str_or_null(a, p));
		ln_json_add(d, "addresses", json_object_new_array());
		json_object_array_add(arr, d);
	}
	ln_names_free(devs, n);
	add_addresses(a, arr);
	return arr;
}

/* Hidden multipath paths are nvmeXcYnZ: a 'c' after the controller number. */
static int hidden_path(const char *name)
{
	const char *p = name + 4;

	while (*p >= '0' && *p <= '9')
		p++;
	return *p == 'c';
}

int ln_nvme_blocks(const struct ln_agent *a, const char *nqn, char ***names, size_t *n)
{
	char **blocks = NULL, p[PATH_MAX];
	size_t nb = 0, i, k = 0;
	int r;

	*names = NULL;
	*n = 0;
	r = ln_list_dir(a, "/sys/block", &blocks, &nb);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	for (i = 0; i < nb; i++) {
		struct ln_buf b = LN_BUF_INIT;
		int match;

		if (strncmp(blocks[i], "nvme", 4) || hidden_path(blocks[i]))
			goto drop;
		snprintf(p, sizeof(p), "/sys/block/%s/device/subsysnqn", blocks[i]);
		match = ln_read_attr(a, p, &b) == 0 && !strcmp(b.buf, nqn);
		ln_buf_release(&b);
		if (match) {
			blocks[k++] = blocks[i];
			continue;
		}
drop:
		free(blocks[i]);
	}
	if (blocks)
		blocks[k] = NULL;
	*names = blocks;
	*n = k;
	return 0;
}

static struct json_object *nvme_facts(struct ln_agent *a, struct json_object *warnings)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_ctrl_list l = { 0 };
	struct json_object *arr;
	size_t i, j;

	if (a->ini->scan(a, &l, &err) < 0) {
		json_object_array_add(warnings, json_object_new_string(err.buf));
		ln_buf_release(&err);
		return NULL;
	}
	arr = json_object_new_array();
	for (i = 0; i < l.n; i++) {
		struct json_object *c = json_object_new_object(), *ns = json_object_new_array();
		char **blocks;
		size_t nb;

		ln_json_add_str(c, "name", l.v[i].name);
		ln_json_add_str(c, "transport", l.v[i].transport);
		ln_json_add_str(c, "address", l.v[i].traddr);
		ln_json_add_str(c, "service", l.v[i].trsvcid[0] ? l.v[i].trsvcid : NULL);
		ln_json_add_str(c, "subsysnqn", l.v[i].subsysnqn);
		ln_json_add_str(c, "host_nqn", l.v[i].hostnqn[0] ? l.v[i].hostnqn : NULL);
		ln_json_add_str(c, "state", l.v[i].state);
		if (ln_nvme_blocks(a, l.v[i].subsysnqn, &blocks, &nb) == 0) {
			for (j = 0; j < nb; j++) {
				struct json_object *x = json_object_new_object();
				char p[PATH_MAX];

				snprintf(p, sizeof(p), "/sys/block/%s/nsid", blocks[j]);
				ln_json_add_i64(x, "nsid", attr_ll(a, p, 0));
				ln_json_add_str(x, "block", blocks[j]);
				snprintf(p, sizeof(p), "/sys/block/%s/size", blocks[j]);
				ln_json_add_i64(x, "size_bytes", attr_ll(a, p, 0) * 512);
				json_object_array_add(ns, x);
			}
			ln_names_free(blocks, nb);
		}
		ln_json_add(c, "namespaces", ns);
		json_object_array_add(arr, c);
	}
	free(l.v);
	ln_buf_release(&err);
	return arr;
}

static struct json_object *gpu_facts(const struct ln_agent *a)
{
	struct json_object *o = json_object_new_object(), *models = json_object_new_array();
	char **names = NULL, p[PATH_MAX];
	size_t n = 0, i;
	int count = 0;
	const char *source = NULL;

	if (ln_list_dir(a, "/proc/driver/nvidia/gpus", &names, &n) == 0 && n) {
		source = "proc";
		for (i = 0; i < n; i++) {
			struct ln_buf b = LN_BUF_INIT;
			char *line, *save = NULL;

			snprintf(p, sizeof(p), "/proc/driver/nvidia/gpus/%s/information", names[i]);
			if (ln_read_attr(a, p, &b) < 0) {
				ln_buf_release(&b);
				continue;
			}
			count++;
			for (line = strtok_r(b.buf, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save)) {
				if (!strncmp(line, "Model:", 6)) {
					line += 6;
					while (*line == ' ' || *line == '\t')
						line++;
					json_object_array_add(models, json_object_new_string(line));
				}
			}
			ln_buf_release(&b);
		}
	} else {
		ln_names_free(names, n);
		names = NULL;
		n = 0;
		if (ln_list_dir(a, "/dev", &names, &n) == 0) {
			for (i = 0; i < n; i++) {
				const char *s = names[i] + 6;

				if (strncmp(names[i], "nvidia", 6) || !*s)
					continue;
				while (*s >= '0' && *s <= '9')
					s++;
				if (!*s)
					count++;
			}
			if (count)
				source = "dev";
		}
	}
	ln_names_free(names, n);
	ln_json_add_i64(o, "count", count);
	ln_json_add(o, "models", models);
	ln_json_add_str(o, "source", source);
	/* NVML's facts replace these where the GPU facts program runs */
	ln_gpu_nvml_facts(a, count, o);
	return o;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(json_object_get_string(*(struct json_object *const *)x),
		      json_object_get_string(*(struct json_object *const *)y));
}

static struct json_object *module_facts(const struct ln_agent *a)
{
	struct json_object *arr = json_object_new_array();
	struct ln_buf b = LN_BUF_INIT;
	char *line, *save = NULL;

	if (ln_read_attr(a, "/proc/modules", &b) < 0) {
		ln_buf_release(&b);
		json_object_put(arr);
		return NULL;
	}
	for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " ")] = '\0';
		json_object_array_add(arr, json_object_new_string(line));
	}
	ln_buf_release(&b);
	json_object_array_sort(arr, cmp_str);
	return arr;
}


static struct json_object *names_array(const struct ln_agent *a, const char *dir)
{
	struct json_object *arr = json_object_new_array();
	char **names;
	size_t n, i;

	if (ln_list_dir(a, dir, &names, &n) == 0) {
		for (i = 0; i < n; i++)
			json_object_array_add(arr, json_object_new_string(names[i]));
		ln_names_free(names, n);
	}
	return arr;
}

static int attr_true(const struct ln_agent *a, const char *path)
{
	return attr_ll(a, path, 0) == 1;
}

static struct json_object *nvmet_facts(const struct ln_agent *a)
{
	struct json_object *o = json_object_new_object(), *subs, *ports, *hosts;
	char **names, **nss, p[PATH_MAX];
	size_t n, nn, i, j;
	int auth = -1;

	ln_json_add_bool(o, "configfs", ln_is_dir(a, LN_NVMET));
	if (!ln_is_dir(a, LN_NVMET)) {
		ln_json_add(o, "auth", NULL);
		ln_json_add(o, "subsystems", json_object_new_array());
		ln_json_add(o, "ports", json_object_new_array());
		ln_json_add(o, "hosts", json_object_new_array());
		return o;
	}
	hosts = names_array(a, LN_NVMET "/hosts");
	if (json_object_array_length(hosts)) {
		snprintf(p, sizeof(p), LN_NVMET "/hosts/%s/dhchap_key",
			 json_object_get_string(json_object_array_get_idx(hosts, 0)));
		auth = ln_path_exists(a, p);
	}
	if (auth < 0)
		ln_json_add(o, "auth", NULL);
	else
		ln_json_add_bool(o, "auth", auth);
	subs = json_object_new_array();
	if (ln_list_dir(a, LN_NVMET "/subsystems", &names, &n) == 0) {
		for (i = 0; i < n; i++) {
			struct json_object *s = json_object_new_object(), *nsa;

			ln_json_add_str(s, "nqn", names[i]);
			snprintf(p, sizeof(p), LN_NVMET "/subsystems/%s/attr_allow_any_host", names[i]);
			ln_json_add_bool(s, "allow_any_host", attr_true(a, p));
			snprintf(p, sizeof(p), LN_NVMET "/subsystems/%s/allowed_hosts", names[i]);
			ln_json_add(s, "allowed_hosts", names_array(a, p));
			nsa = json_object_new_array();
			snprintf(p, sizeof(p), LN_NVMET "/subsystems/%s/namespaces", names[i]);
			if (ln_list_dir(a, p, &nss, &nn) == 0) {
				for (j = 0; j < nn; j++) {
					struct json_object *x = json_object_new_object();
					char q[PATH_MAX];

					ln_json_add_i64(x, "nsid", atoll(nss[j]));
					snprintf(q, sizeof(q), "%s/%s/device_path", p, nss[j]);
					ln_json_add(x, "device_path", str_or_null(a, q));
					snprintf(q, sizeof(q), "%s/%s/enable", p, nss[j]);
					ln_json_add_bool(x, "enable", attr_true(a, q));
					snprintf(q, sizeof(q), "%s/%s/buffered_io", p, nss[j]);
					ln_json_add_bool(x, "buffered_io", attr_true(a, q));
					json_object_array_add(nsa, x);
				}
				ln_names_free(nss, nn);
			}
			ln_json_add(s, "namespaces", nsa);
			json_object_array_add(subs, s);
		}
		ln_names_free(names, n);
	}
	ln_json_add(o, "subsystems", subs);
	ports = json_object_new_array();
	if (ln_list_dir(a, LN_NVMET "/ports", &names, &n) == 0) {
		for (i = 0; i < n; i++) {
			struct json_object *x = json_object_new_object();

			ln_json_add_i64(x, "id", atoll(names[i]));
#define PA(key, file) \
	snprintf(p, sizeof(p), LN_NVMET "/ports/%s/" file, names[i]); \
	ln_json_add(x, key, str_or_null(a, p))
			PA("transport", "addr_trtype");
			PA("address", "addr_traddr");
			PA("service", "addr_trsvcid");
			PA("family", "addr_adrfam");
#undef PA
			snprintf(p, sizeof(p), LN_NVMET "/ports/%s/subsystems", names[i]);
			ln_json_add(x, "subsystems", names_array(a, p));
			json_object_array_add(ports, x);
		}
		ln_names_free(names, n);
	}
	ln_json_add(o, "ports", ports);
	ln_json_add(o, "hosts", hosts);
	return o;
}

/* Each owned cluster's "persistent" (persist.c), and "systemd" for the
 * node when no cluster is owned yet. */
static void persistent_facts(struct ln_agent *a, struct json_object *owned)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_state st;

	if (!owned || ln_state_load(a, &st, &err) < 0) {
		ln_buf_release(&err);
		return;
	}
	json_object_object_foreach(owned, name, val) {
		ln_json_add_str(val, "persistent", ln_persist_status(a, &st, name));
	}
	ln_state_release(&st);
	ln_buf_release(&err);
}

/* host_nqn and host_id, null when absent; both null, and a warning that
 * says why, when either file is not valid (ln_host_identity): what the
 * controller would take for this host's NQN is never an invalid one. */
static void identity_facts(struct ln_agent *a, struct json_object *o, struct json_object *w)
{
	struct ln_buf nqn = LN_BUF_INIT, id = LN_BUF_INIT, bad = LN_BUF_INIT;

	if (ln_host_identity(a, &nqn, &id, &bad) < 0)
		json_object_array_add(w, json_object_new_string(bad.buf));
	ln_json_add(o, "host_nqn", nqn.len ? json_object_new_string(nqn.buf) : NULL);
	ln_json_add(o, "host_id", id.len ? json_object_new_string(id.buf) : NULL);
	ln_buf_release_all(&nqn, &id, &bad);
}

int ln_facts_collect(struct ln_agent *a, struct json_object **out, struct ln_buf *err)
{
	struct json_object *o = json_object_new_object(), *w = json_object_new_array(), *x;
	struct json_object *owned = NULL;

	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "root", a->fixture ? a->root : "/");
	ln_json_add(o, "hostname", str_or_null(a, "/proc/sys/kernel/hostname"));
	ln_json_add(o, "machine_id", str_or_null(a, "/etc/machine-id"));
	ln_json_add(o, "product_uuid", str_or_null(a, "/sys/class/dmi/id/product_uuid"));
	ln_json_add(o, "kernel", str_or_null(a, "/proc/sys/kernel/osrelease"));
	identity_facts(a, o, w);
	ln_json_add(o, "rdma", rdma_facts(a));
	ln_json_add(o, "netdevs", netdev_facts(a));
	ln_json_add(o, "nvme", nvme_facts(a, w));
	ln_json_add(o, "gpus", gpu_facts(a));
	ln_json_add(o, "topology", ln_topology_facts(a, w));
	ln_json_add(o, "gds", ln_gds_facts(a));
	x = module_facts(a);
	if (!x)
		json_object_array_add(w, json_object_new_string("cannot read /proc/modules"));
	ln_json_add(o, "modules", x);
	ln_json_add(o, "nvmet", nvmet_facts(a));
	if (ln_state_owned_summary(a, &owned, err) < 0) {
		json_object_array_add(w, json_object_new_string(err->buf));
		ln_buf_reset(err);
		owned = NULL;
	}
	persistent_facts(a, owned);
	ln_json_add_bool(o, "systemd", ln_persist_supported(a));
	ln_json_add(o, "owned", owned);
	ln_json_add(o, "warnings", w);
	*out = o;
	return 0;
}
