/* SPDX-License-Identifier: MIT */
/*
 * facts.topology.peer_memory (topology.h): how a NIC can reach GPU memory.
 * dma-buf, the path NVIDIA recommends, needs three things: a kernel whose
 * RDMA core registers dma-buf memory (5.12, which added ib_umem_dmabuf;
 * sysfs shows no sign of it, so the release decides), the NVIDIA driver's
 * open kernel modules (only they export GPU memory as dma-buf), and an
 * rdma-core whose libibverbs has ibv_reg_dmabuf_mr (rdma-core 34): the
 * library file itself is searched for that symbol's name, since the file
 * name's version is rdma-core's only on upstream builds. The other path is
 * a peer-memory module (nvidia_peermem, or the legacy nv_peer_mem), which
 * needs MLNX_OFED's peer-memory interface: the kernel's own RDMA drivers
 * (Debian's) have none, so there dma-buf is the only path.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/run/topology.h"
#include "common/json.h"
#include "common/util.h"

/* where distributions install libibverbs, in the order looked at */
static const char *const lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	"/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64",
};
#define LIB_PREFIX "libibverbs.so.1."
/* libibverbs is some 130-200 KiB (Debian 12's 1.14: 134 KiB), read on
 * every facts call: a larger file is not looked at (unknown, with why) */
#define MAX_LIB (1u << 20)

/* 1 when /proc/modules (in mods) lists name */
static int listed(const struct ln_buf *mods, const char *name)
{
	size_t n = strlen(name);
	const char *l;

	for (l = mods->buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return 1;
	return 0;
}

static void add_tri(struct json_object *o, const char *key, int v)
{
	if (v < 0)
		ln_json_add(o, key, NULL);
	else
		ln_json_add_bool(o, key, v);
}

/* Append one reason to why, "; " between reasons. */
__attribute__((format(printf, 2, 3)))
static void why_add(struct ln_buf *why, const char *fmt, ...)
{
	va_list ap;

	if (why->len)
		ln_buf_addstr(why, "; ");
	va_start(ap, fmt);
	ln_buf_vaddf(why, fmt, ap);
	va_end(ap);
}

/* The kernel's dma-buf support: 1, 0, or -1 when its release is unknown. */
static int kernel_dmabuf(const struct ln_agent *a, struct ln_buf *why)
{
	struct ln_buf b = LN_BUF_INIT;
	unsigned maj, min;
	int r = -1;

	if (ln_read_attr(a, "/proc/sys/kernel/osrelease", &b) == 0 &&
	    sscanf(b.buf, "%u.%u", &maj, &min) == 2)
		r = maj > 5 || (maj == 5 && min >= 12);
	if (r < 0)
		why_add(why, "the kernel release cannot be read (/proc/sys/kernel/osrelease)");
	else if (!r)
		why_add(why, "kernel %.64s is older than 5.12, whose RDMA core first registers "
			"dma-buf memory", b.buf);
	ln_buf_release(&b);
	return r;
}

/* The NVIDIA driver's open kernel modules: 1, 0 (the proprietary ones),
 * -1 when no driver is loaded. */
static int gpu_open(const struct ln_agent *a, struct ln_buf *why)
{
	struct ln_buf b = LN_BUF_INIT;
	int r = -1;

	if (ln_read_attr(a, "/proc/driver/nvidia/version", &b) == 0) {
		char line[128];
		size_t i;

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(b.buf, "\n"), b.buf);
		for (i = 0; line[i]; i++)
			if ((unsigned char)line[i] < ' ' || (unsigned char)line[i] > '~')
				line[i] = '?';
		r = strstr(line, "Open Kernel Module") != NULL;
		if (!r)
			why_add(why, "the NVIDIA driver is not the open kernel modules "
				"(/proc/driver/nvidia/version: '%s'), and only those export GPU "
				"memory as dma-buf", line);
	} else {
		why_add(why, "no NVIDIA driver is loaded (no /proc/driver/nvidia/version), so "
			"whether it runs the open kernel modules is unknown");
	}
	ln_buf_release(&b);
	return r;
}

/* The newest libibverbs.so.1.* file in dir into name; 0 or -ENOENT. */
static int find_lib(const struct ln_agent *a, const char *dir, char *name, size_t size)
{
	char **names = NULL;
	size_t n = 0, i, pl = strlen(LIB_PREFIX);
	int r = -ENOENT;

	ln_list_dir(a, dir, &names, &n);
	for (i = 0; i < n; i++) {
		const char *v = names[i] + pl;

		if (strncmp(names[i], LIB_PREFIX, pl) || !*v || strspn(v, "0123456789.") != strlen(v))
			continue;
		if (r == 0 && strverscmp(names[i], name) <= 0)
			continue;
		snprintf(name, size, "%s", names[i]);
		r = 0;
	}
	ln_names_free(names, n);
	return r;
}

/* rdma-core's ibv_reg_dmabuf_mr: 1, 0, or -1 when no libibverbs is found. */
static int verbs_dmabuf(const struct ln_agent *a, struct ln_buf *why)
{
	static const char sym[] = "ibv_reg_dmabuf_mr";	/* with its NUL, as .dynstr has it */
	struct ln_buf lib, err = LN_BUF_INIT;
	char name[256], p[PATH_MAX];
	size_t i;
	int r = -1;

	for (i = 0; i < ARRAY_SIZE(lib_dirs); i++)
		if (find_lib(a, lib_dirs[i], name, sizeof(name)) == 0)
			break;
	if (i == ARRAY_SIZE(lib_dirs)) {
		why_add(why, "no libibverbs.so.1.* in /usr/lib/<arch>-linux-gnu, /usr/lib64, "
			"/usr/lib, /lib/<arch>-linux-gnu or /lib64 (rdma-core not installed?)");
		return -1;
	}
	snprintf(p, sizeof(p), "%s/%s", lib_dirs[i], name);
	ln_buf_init(&lib, MAX_LIB);
	if (ln_path_read(a, p, &lib, &err) < 0) {
		why_add(why, "%s: %s (libibverbs is not looked at past %u KiB)", p, err.buf,
			MAX_LIB >> 10);
	} else {
		r = memmem(lib.buf, lib.len, sym, sizeof(sym)) != NULL;
		if (!r)
			why_add(why, "%s has no ibv_reg_dmabuf_mr (rdma-core 34 or newer has "
				"it)", p);
	}
	ln_buf_release(&lib);
	ln_buf_release(&err);
	return r;
}

/* Why dma-buf's absence matters, or not: the peer-memory modules. */
static void why_peer(const struct ln_agent *a, const struct ln_buf *mods, int have_mods,
		     struct ln_buf *why)
{
	if (!have_mods)
		why_add(why, "/proc/modules cannot be read, so whether a peer-memory module is "
			"loaded is unknown");
	else if (listed(mods, "nvidia_peermem") || listed(mods, "nv_peer_mem"))
		why_add(why, "%s is loaded: GPUDirect RDMA goes through it instead",
			listed(mods, "nvidia_peermem") ? "nvidia_peermem" : "nv_peer_mem");
	else if (listed(mods, "mlx_compat") || ln_is_dir(a, "/sys/kernel/mm/memory_peers"))
		why_add(why, "MLNX_OFED's peer-memory interface is there, but neither "
			"nvidia_peermem nor nv_peer_mem is loaded: no peer-memory path");
	else
		why_add(why, "no MLNX_OFED (no mlx_compat module), and the kernel's own RDMA "
			"drivers have no peer-memory interface, so nvidia_peermem is not available: "
			"dma-buf is the only GPUDirect RDMA path on this node");
}

struct json_object *ln_peermem_facts(const struct ln_agent *a)
{
	struct json_object *o = json_object_new_object(), *d = json_object_new_object();
	struct ln_buf mods = LN_BUF_INIT, why = LN_BUF_INIT;
	int have_mods = ln_read_attr(a, "/proc/modules", &mods) == 0;
	int kernel, open, verbs;

	add_tri(o, "nvidia_peermem", have_mods ? listed(&mods, "nvidia_peermem") : -1);
	add_tri(o, "nv_peer_mem", have_mods ? listed(&mods, "nv_peer_mem") : -1);
	kernel = kernel_dmabuf(a, &why);
	open = gpu_open(a, &why);
	verbs = verbs_dmabuf(a, &why);
	add_tri(d, "kernel", kernel);
	add_tri(d, "gpu_open_modules", open);
	add_tri(d, "verbs", verbs);
	if (kernel != 1 || open != 1 || verbs != 1)
		why_peer(a, &mods, have_mods, &why);
	ln_json_add_str(d, "why", why.len ? why.buf : NULL);
	ln_json_add(o, "dmabuf", d);
	ln_buf_release(&mods);
	ln_buf_release(&why);
	return o;
}
