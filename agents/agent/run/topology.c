/* SPDX-License-Identifier: MIT */
/*
 * facts.topology (topology.h): each GPU (vendor 0x10de, class 0x0300xx or
 * 0x0302xx, in bus order) and each RDMA device, with the PCIe bridges above
 * it. A device's sysfs directory is where /sys/bus/pci/devices/BDF (or
 * /sys/class/infiniband/DEV/device) resolves to, under the root:
 * /sys/devices/pciDDDD:BB/ROOT_PORT/.../BDF, so its path components are
 * the host bridge and then the bridges from the root port down. Each
 * bridge's kind and ACS control come from its own config space
 * (kernel/pciconf.c), read as root: no setpci.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/kernel/pciconf.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/run/topology.h"
#include "common/json.h"
#include "common/util.h"

/* deeper than any PCIe hierarchy (8-bit bus numbers, a few switches) */
#define MAX_HOPS 32
#define MAX_CMDLINE 4096

struct pci_dev {
	char dir[PATH_MAX];		/* its sysfs directory, a node path */
	char bus_id[32];
	char host_bridge[32];
	size_t hop_end[MAX_HOPS];	/* dir[0..hop_end[i]) is bridge i's directory */
	size_t nhops;
};

static int hex_run(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && isxdigit((unsigned char)s[i]))
		i++;
	return (int)i;
}

/* "0000:1b:00.0"; a domain has 4 hex digits, 5 or more behind Intel VMD */
static int is_bdf(const char *s, size_t n)
{
	size_t d = (size_t)hex_run(s, n);

	if (d < 4 || d > 8 || n != d + 8)
		return 0;
	s += d;
	return s[0] == ':' && hex_run(s + 1, 2) == 2 && s[3] == ':' && hex_run(s + 4, 2) == 2 &&
	       s[6] == '.' && s[7] >= '0' && s[7] <= '7';
}

/* "pci0000:00" */
static int is_host_bridge(const char *s, size_t n)
{
	size_t d;

	if (n < 3 || strncmp(s, "pci", 3))
		return 0;
	d = (size_t)hex_run(s + 3, n - 3);
	return d >= 4 && d <= 8 && n == 3 + d + 3 && s[3 + d] == ':' &&
	       hex_run(s + 4 + d, 2) == 2;
}

/* The node path that path resolves to (its links followed under the
 * root) into out; -ENOENT when it does not resolve, -EXDEV when it leaves
 * the root. rootreal: the root's own real path ("" on the node). */
static int node_realpath(const struct ln_agent *a, const char *rootreal, const char *path,
			 char *out)
{
	char p[PATH_MAX], real[PATH_MAX];
	size_t rl = strlen(rootreal);

	if (ln_agent_path(a, path, p) < 0 || !realpath(p, real))
		return -ENOENT;
	if (strncmp(real, rootreal, rl) || real[rl] != '/')
		return -EXDEV;
	snprintf(out, PATH_MAX, "%s", real + rl);
	return 0;
}

/* Where the PCI function that link names sits: 0, or -ENODEV when link
 * does not resolve to a PCI function under a host bridge (a virtual RDMA
 * device), -E2BIG for a path deeper than MAX_HOPS. */
static int pci_locate(const struct ln_agent *a, const char *rootreal, const char *link,
		      struct pci_dev *d)
{
	size_t ends[MAX_HOPS + 1], nb = 0, n;
	const char *s, *c;
	int in_pci = 0, r;

	memset(d, 0, sizeof(*d));
	r = node_realpath(a, rootreal, link, d->dir);
	if (r < 0)
		return -ENODEV;
	if (strncmp(d->dir, "/sys/devices/", 13))
		return -ENODEV;
	for (s = d->dir + 12; *s == '/'; s = c + n) {
		c = s + 1;
		n = strcspn(c, "/");
		if (!in_pci && is_host_bridge(c, n)) {
			snprintf(d->host_bridge, sizeof(d->host_bridge), "%.*s", (int)n, c);
			in_pci = 1;
		} else if (in_pci && is_bdf(c, n)) {
			if (nb == MAX_HOPS + 1)
				return -E2BIG;
			ends[nb++] = (size_t)(c + n - d->dir);
		}
	}
	/* the device itself is the last component */
	if (!in_pci || !nb || ends[nb - 1] != strlen(d->dir))
		return -ENODEV;
	s = strrchr(d->dir, '/') + 1;
	snprintf(d->bus_id, sizeof(d->bus_id), "%s", s);
	d->nhops = nb - 1;
	memcpy(d->hop_end, ends, d->nhops * sizeof(ends[0]));
	return 0;
}

/* A hex attribute ("0x10de") as a number; -1 when unreadable. */
static long hex_attr(const struct ln_agent *a, const char *dir, const char *name)
{
	struct ln_buf b = LN_BUF_INIT;
	char p[PATH_MAX], *end;
	long v = -1;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (ln_read_attr(a, p, &b) == 0 && b.len) {
		v = strtol(b.buf, &end, 16);
		if (*end || v < 0 || v > 0xffffff)
			v = -1;
	}
	ln_buf_release(&b);
	return v;
}

static struct json_object *hex16(long v)
{
	char s[8];

	if (v < 0 || v > 0xffff)
		return NULL;
	snprintf(s, sizeof(s), "0x%04lx", v);
	return json_object_new_string(s);
}

static int numa_node(const struct ln_agent *a, const char *dir)
{
	struct ln_buf b = LN_BUF_INIT;
	char p[PATH_MAX], *end;
	long v = -1;

	snprintf(p, sizeof(p), "%s/numa_node", dir);
	if (ln_read_attr(a, p, &b) == 0 && b.len) {
		v = strtol(b.buf, &end, 10);
		if (*end || v < -1 || v > 4095)
			v = -1;
	}
	ln_buf_release(&b);
	return (int)v;
}

/* One bridge on the path: its bus id, kind and ACS control. */
static struct json_object *hop_json(const struct ln_agent *a, const struct pci_dev *d, size_t i,
				    struct json_object *w)
{
	struct json_object *h = json_object_new_object(), *acs = NULL;
	unsigned char cfg[LN_PCICONF_SIZE];
	char p[PATH_MAX];
	const char *bus = d->dir + d->hop_end[i];
	struct ln_pciconf c;
	size_t len = 0;
	int r, blen;

	while (bus > d->dir && bus[-1] != '/')
		bus--;
	blen = (int)(d->dir + d->hop_end[i] - bus);
	snprintf(p, sizeof(p), "%.*s/config", (int)d->hop_end[i], d->dir);
	r = ln_pciconf_read(a, p, cfg, &len);
	if (r < 0 || len < 256) {
		char msg[256];

		if (r < 0)
			snprintf(msg, sizeof(msg), "cannot read the config space of PCI bridge "
				 "'%.*s': %s; its kind and ACS are unknown", blen, bus, strerror(-r));
		else
			snprintf(msg, sizeof(msg), "the config space of PCI bridge '%.*s' reads "
				 "%zu bytes, not 256 or 4096 (not read as root?); its kind and ACS "
				 "are unknown", blen, bus, len);
		json_object_array_add(w, json_object_new_string(msg));
		len = 0;
	}
	ln_pciconf_parse(cfg, len, &c);
	json_object_object_add(h, "bus_id", json_object_new_string_len(bus, blen));
	ln_json_add_str(h, "type", ln_pciconf_kind(&c));
	if (c.acs) {
		acs = json_object_new_object();
		ln_json_add_i64(acs, "ctrl", c.acs_ctrl);
		ln_json_add_bool(acs, "req_redir", !!(c.acs_ctrl & LN_ACS_REQ_REDIR));
		ln_json_add_bool(acs, "cmplt_redir", !!(c.acs_ctrl & LN_ACS_CMPLT_REDIR));
		ln_json_add_bool(acs, "egress_ctrl", !!(c.acs_ctrl & LN_ACS_EGRESS_CTRL));
	}
	ln_json_add(h, "acs", acs);
	return h;
}

/* The IOMMU group number from dir/iommu_group (a link to
 * /sys/kernel/iommu_groups/N); -1 without one. */
static long iommu_group(const struct ln_agent *a, const char *dir)
{
	char p[PATH_MAX], full[PATH_MAX], link[PATH_MAX], *end;
	const char *base;
	ssize_t n;
	long g;

	snprintf(p, sizeof(p), "%s/iommu_group", dir);
	if (ln_agent_path(a, p, full) < 0)
		return -1;
	n = readlink(full, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	if (!isdigit((unsigned char)*base))
		return -1;
	g = strtol(base, &end, 10);
	return *end || g > 1000000 ? -1 : g;
}

/* bus_id through iommu_type of a device entry; devkey names its PCI device
 * id ("device" for a GPU, "device_id" for an RDMA device). A link that
 * does not resolve to a PCI function gives the virtual shape: nulls, -1
 * and an empty path. */
static void pci_fields(const struct ln_agent *a, const char *rootreal, const char *link,
		       const char *devkey, struct json_object *o, struct json_object *w)
{
	struct json_object *path = json_object_new_array();
	struct pci_dev *d = malloc(sizeof(*d));
	char p[PATH_MAX];
	long group = -1;
	size_t i;
	int r = d ? pci_locate(a, rootreal, link, d) : -ENOMEM;

	if (r == -E2BIG) {
		snprintf(p, sizeof(p), "'%s' resolves deeper than %d PCI bridges; its path is "
			 "not reported", link, MAX_HOPS);
		json_object_array_add(w, json_object_new_string(p));
	}
	ln_json_add_str(o, "bus_id", r == 0 ? d->bus_id : NULL);
	ln_json_add(o, "vendor", r == 0 ? hex16(hex_attr(a, d->dir, "vendor")) : NULL);
	ln_json_add(o, devkey, r == 0 ? hex16(hex_attr(a, d->dir, "device")) : NULL);
	ln_json_add_i64(o, "numa_node", r == 0 ? numa_node(a, d->dir) : -1);
	ln_json_add_str(o, "host_bridge", r == 0 ? d->host_bridge : NULL);
	for (i = 0; r == 0 && i < d->nhops; i++)
		json_object_array_add(path, hop_json(a, d, i, w));
	ln_json_add(o, "path", path);
	if (r == 0)
		group = iommu_group(a, d->dir);
	if (group < 0) {
		ln_json_add(o, "iommu_group", NULL);
		ln_json_add(o, "iommu_type", NULL);
	} else {
		struct ln_buf b = LN_BUF_INIT;

		ln_json_add_i64(o, "iommu_group", group);
		snprintf(p, sizeof(p), "/sys/kernel/iommu_groups/%ld/type", group);
		ln_json_add_str(o, "iommu_type", ln_read_attr(a, p, &b) == 0 && b.len &&
							 ln_valid_name(b.buf, 32) ? b.buf : NULL);
		ln_buf_release(&b);
	}
	free(d);
}

static void too_many(struct json_object *w, const char *what)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "more than %d %s: topology lists the first %d",
		 LN_TOPO_MAX_DEVICES, what, LN_TOPO_MAX_DEVICES);
	json_object_array_add(w, json_object_new_string(msg));
}

/* A GPU: vendor 0x10de, class 0x0300xx (VGA) or 0x0302xx (3D). */
static int is_gpu(const struct ln_agent *a, const char *dir, const char *name)
{
	char p[PATH_MAX];
	long cls;

	if (!is_bdf(name, strlen(name)))
		return 0;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	cls = hex_attr(a, p, "class") >> 8;
	return hex_attr(a, p, "vendor") == 0x10de && (cls == 0x0300 || cls == 0x0302);
}

/* The GPUs in bus order (gpu), or the RDMA devices in name order. */
static struct json_object *devices_json(const struct ln_agent *a, const char *rootreal, int gpu,
					struct json_object *w)
{
	const char *dir = gpu ? "/sys/bus/pci/devices" : "/sys/class/infiniband";
	struct json_object *arr = json_object_new_array();
	char **names = NULL, p[PATH_MAX];
	size_t n = 0, i, k = 0;

	ln_list_dir(a, dir, &names, &n);
	for (i = 0; i < n; i++) {
		struct json_object *x;

		if (gpu ? !is_gpu(a, dir, names[i]) : !ln_valid_name(names[i], 64))
			continue;
		if (k == LN_TOPO_MAX_DEVICES) {
			too_many(w, gpu ? "GPUs" : "RDMA devices");
			break;
		}
		x = json_object_new_object();
		if (gpu)
			ln_json_add_i64(x, "index", (int64_t)k);
		else
			ln_json_add_str(x, "device", names[i]);
		k++;
		snprintf(p, sizeof(p), "%s/%s%s", dir, names[i], gpu ? "" : "/device");
		pci_fields(a, rootreal, p, gpu ? "device" : "device_id", x, w);
		json_object_array_add(arr, x);
	}
	ln_names_free(names, n);
	return arr;
}

/* The IOMMU and PCI parameters of a kernel command line, space-separated
 * into out: only these are reported, since a command line can carry a
 * credential (an iSCSI or NFS root's password, a cloud token). */
static void iommu_params(const char *cmdline, struct ln_buf *out)
{
	static const char *const keep[] = { "iommu", "intel_iommu", "amd_iommu", "pci" };
	const char *p = cmdline;

	while (*p) {
		size_t n = strcspn(p, " \t\n"), k;

		for (k = 0; n && k < sizeof(keep) / sizeof(keep[0]); k++) {
			size_t l = strlen(keep[k]);

			if (n >= l && !strncmp(p, keep[k], l) && (n == l || p[l] == '=' ||
								   p[l] == '.')) {
				ln_buf_addf(out, "%s%.*s", out->len ? " " : "", (int)n, p);
				break;
			}
		}
		p += n;
		p += strspn(p, " \t\n");
	}
}

static struct json_object *iommu_json(const struct ln_agent *a)
{
	struct json_object *o = json_object_new_object();
	struct ln_buf b = LN_BUF_INIT;
	char **names = NULL;
	size_t n = 0;

	ln_list_dir(a, "/sys/kernel/iommu_groups", &names, &n);
	ln_names_free(names, n);
	ln_json_add_bool(o, "present", n > 0);
	if (ln_read_attr(a, "/proc/cmdline", &b) == 0) {
		struct ln_buf kept = LN_BUF_INIT;

		ln_buf_rtrim(&b);
		if (b.len > MAX_CMDLINE)
			ln_buf_setlen(&b, MAX_CMDLINE);
		iommu_params(b.buf, &kept);
		ln_json_add_str(o, "cmdline", kept.buf ? kept.buf : "");
		ln_buf_release(&kept);
	} else {
		ln_json_add_str(o, "cmdline", NULL);
	}
	ln_buf_release(&b);
	return o;
}

struct json_object *ln_topology_facts(const struct ln_agent *a, struct json_object *warnings)
{
	struct json_object *o = json_object_new_object();
	char rootreal[PATH_MAX] = "";

	/* a root that does not resolve: every device then looks outside it */
	if (a->root[0] && !realpath(a->root, rootreal))
		snprintf(rootreal, sizeof(rootreal), "%s", a->root);
	ln_json_add(o, "gpus", devices_json(a, rootreal, 1, warnings));
	ln_json_add(o, "nics", devices_json(a, rootreal, 0, warnings));
	ln_json_add(o, "iommu", iommu_json(a));
	ln_json_add(o, "peer_memory", ln_peermem_facts(a));
	return o;
}
