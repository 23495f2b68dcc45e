// SPDX-License-Identifier: MIT
/*
 * The fixture initiator: the same ln_iniops as nvme_shim.c, working on the
 * sysfs shapes under --root. A connect makes what the kernel makes for a
 * fabric controller with multipath: ROOT/sys/class/nvme/nvmeN with its
 * transport, address ("traddr=A,trsvcid=S"), subsysnqn, hostnqn and state
 * attributes, the namespace head ROOT/sys/block/nvmeNn1 (device linking
 * back to the controller, nsid, size) and the block device ROOT/dev/nvmeNn1
 * as a sparse 64 MiB file, so libblkid, mkfs and mount can work on it.
 * Like the kernel, it needs the transport module loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "agents/agent.h"
#include "common/fileio.h"

#define FX_NS_BYTES (64ull << 20)

static void attr(const struct ln_agent *a, const char *path, char *out, size_t size)
{
	struct ln_buf b = LN_BUF_INIT;

	out[0] = '\0';
	if (ln_read_attr(a, path, &b) == 0)
		snprintf(out, size, "%s", b.buf);
	ln_buf_release(&b);
}

/* Split the kernel's "traddr=A,trsvcid=S,src_addr=B" address attribute. */
void ln_parse_ctrl_address(const char *addr, char *traddr, size_t tlen, char *trsvcid,
			   size_t slen)
{
	const char *p = addr;

	traddr[0] = trsvcid[0] = '\0';
	while (*p) {
		size_t n = strcspn(p, ",");

		if (!strncmp(p, "traddr=", 7))
			snprintf(traddr, tlen, "%.*s", (int)(n - 7), p + 7);
		else if (!strncmp(p, "trsvcid=", 8))
			snprintf(trsvcid, slen, "%.*s", (int)(n - 8), p + 8);
		p += n;
		if (*p == ',')
			p++;
	}
	if (!traddr[0] && !strchr(addr, '='))
		snprintf(traddr, tlen, "%s", addr);	/* pcie: the PCI address */
}

static int fx_scan(struct ln_agent *a, struct ln_ctrl_list *out, struct ln_buf *err)
{
	char **names, p[PATH_MAX], address[256];
	size_t n, i;

	(void)err;
	out->v = NULL;
	out->n = 0;
	if (ln_list_dir(a, "/sys/class/nvme", &names, &n) < 0)
		return 0;
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (!out->v) {
		ln_names_free(names, n);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct ln_ctrl *c = &out->v[out->n];

		if (strncmp(names[i], "nvme", 4))
			continue;
		snprintf(c->name, sizeof(c->name), "%s", names[i]);
#define A(field, file) \
	snprintf(p, sizeof(p), "/sys/class/nvme/%s/" file, names[i]); \
	attr(a, p, c->field, sizeof(c->field))
		A(transport, "transport");
		A(subsysnqn, "subsysnqn");
		A(hostnqn, "hostnqn");
		A(state, "state");
#undef A
		snprintf(p, sizeof(p), "/sys/class/nvme/%s/address", names[i]);
		attr(a, p, address, sizeof(address));
		ln_parse_ctrl_address(address, c->traddr, sizeof(c->traddr), c->trsvcid,
				      sizeof(c->trsvcid));
		out->n++;
	}
	ln_names_free(names, n);
	return 0;
}

static int put(const struct ln_agent *a, const char *path, const char *val, struct ln_buf *err)
{
	char p[PATH_MAX];
	struct ln_buf data = LN_BUF_INIT;
	int r;

	if (ln_agent_path(a, path, p) < 0)
		return -ENAMETOOLONG;
	ln_buf_addf(&data, "%s\n", val);
	r = ln_file_write_atomic(p, data.buf, data.len, 0644, err);
	ln_buf_release(&data);
	return r;
}

static int fx_connect(struct ln_agent *a, const struct ln_conn *cn, char *name,
		      struct ln_buf *err)
{
	char p[PATH_MAX], q[PATH_MAX], v[512], mod[32];
	unsigned i;
	int r, fd;

	snprintf(mod, sizeof(mod), "nvme_%s", cn->transport);
	if (!ln_module_loaded(a, mod) || !ln_path_exists(a, "/dev/nvme-fabrics")) {
		ln_buf_addf(err, "cannot connect to '%s': /dev/nvme-fabrics or %s missing",
			    cn->subsysnqn, mod);
		return -ENODEV;
	}
	for (i = 0; i < 1024; i++) {
		snprintf(p, sizeof(p), "/sys/class/nvme/nvme%u", i);
		if (!ln_path_exists(a, p))
			break;
	}
	snprintf(name, 32, "nvme%u", i);
	snprintf(q, sizeof(q), "%s%s", a->root, p);
	r = ln_mkdir_p(q, 0755, err);
	if (r < 0)
		return r;
	snprintf(v, sizeof(v), "%s/transport", p);
	r = put(a, v, cn->transport, err);
	if (!r) {
		char addr[256];

		snprintf(addr, sizeof(addr), "traddr=%s,trsvcid=%s", cn->traddr, cn->trsvcid);
		snprintf(v, sizeof(v), "%s/address", p);
		r = put(a, v, addr, err);
	}
	if (!r) {
		snprintf(v, sizeof(v), "%s/subsysnqn", p);
		r = put(a, v, cn->subsysnqn, err);
	}
	if (!r) {
		snprintf(v, sizeof(v), "%s/hostnqn", p);
		r = put(a, v, cn->hostnqn, err);
	}
	if (!r) {
		snprintf(v, sizeof(v), "%s/state", p);
		r = put(a, v, "live", err);
	}
	if (r < 0)
		return r;
	/* The namespace head and its block device. */
	snprintf(q, sizeof(q), "%s/sys/block/%sn1", a->root, name);
	r = ln_mkdir_p(q, 0755, err);
	if (r < 0)
		return r;
	snprintf(v, sizeof(v), "/sys/block/%sn1/nsid", name);
	r = put(a, v, "1", err);
	if (!r) {
		char sz[32];

		snprintf(sz, sizeof(sz), "%llu", FX_NS_BYTES / 512);
		snprintf(v, sizeof(v), "/sys/block/%sn1/size", name);
		r = put(a, v, sz, err);
	}
	if (r < 0)
		return r;
	snprintf(q, sizeof(q), "%s/sys/block/%sn1/device", a->root, name);
	snprintf(v, sizeof(v), "../../class/nvme/%s", name);
	if (symlink(v, q) < 0)
		return -errno;
	snprintf(q, sizeof(q), "%s/dev", a->root);
	r = ln_mkdir_p(q, 0755, err);
	if (r < 0)
		return r;
	snprintf(q, sizeof(q), "%s/dev/%sn1", a->root, name);
	fd = open(q, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)FX_NS_BYTES) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		ln_buf_addf(err, "cannot create '%s': %s", q, strerror(-r));
		return r;
	}
	close(fd);
	return 0;
}

static int rm_tree(const char *p)
{
	char cmd_path[PATH_MAX];
	struct stat st;
	DIR *d;

	if (lstat(p, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(p) < 0 ? -errno : 0;
	d = opendir(p);
	if (d) {
		struct dirent *de;

		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(cmd_path, sizeof(cmd_path), "%s/%s", p, de->d_name);
			rm_tree(cmd_path);
		}
		closedir(d);
	}
	return rmdir(p) < 0 ? -errno : 0;
}

static int fx_disconnect(struct ln_agent *a, const char *name, struct ln_buf *err)
{
	char p[PATH_MAX], **blocks;
	size_t n, i;
	int r;

	snprintf(p, sizeof(p), "%s/sys/class/nvme/%s", a->root, name);
	if (access(p, F_OK) < 0)
		return -ENOENT;
	if (ln_list_dir(a, "/sys/block", &blocks, &n) == 0) {
		size_t len = strlen(name);

		for (i = 0; i < n; i++) {
			if (strncmp(blocks[i], name, len) || blocks[i][len] != 'n')
				continue;
			snprintf(p, sizeof(p), "%s/sys/block/%s", a->root, blocks[i]);
			rm_tree(p);
			snprintf(p, sizeof(p), "%s/dev/%s", a->root, blocks[i]);
			unlink(p);
		}
		ln_names_free(blocks, n);
	}
	snprintf(p, sizeof(p), "%s/sys/class/nvme/%s", a->root, name);
	r = rm_tree(p);
	if (r < 0)
		ln_buf_addf(err, "cannot disconnect '%s': %s", name, strerror(-r));
	return r;
}

/* Like nvme-cli: the DMI product UUID, else a random one. */
static int fx_hostnqn_generate(struct ln_agent *a, char **out, struct ln_buf *err)
{
	char uuid[64];
	unsigned char b[16];

	attr(a, "/sys/class/dmi/id/product_uuid", uuid, sizeof(uuid));
	if (strlen(uuid) != 36) {
		if (getrandom(b, sizeof(b), 0) != sizeof(b)) {
			ln_buf_addf(err, "cannot generate a host NQN: %s", strerror(errno));
			return -EIO;
		}
		b[6] = (b[6] & 0x0f) | 0x40;
		b[8] = (b[8] & 0x3f) | 0x80;
		snprintf(uuid, sizeof(uuid),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
			 b[12], b[13], b[14], b[15]);
	}
	if (asprintf(out, "nqn.2014-08.org.nvmexpress:uuid:%s", uuid) < 0)
		return -ENOMEM;
	return 0;
}

const struct ln_iniops ln_iniops_fixture = {
	.name = "fixture",
	.scan = fx_scan,
	.connect = fx_connect,
	.disconnect = fx_disconnect,
	.hostnqn_generate = fx_hostnqn_generate,
};
