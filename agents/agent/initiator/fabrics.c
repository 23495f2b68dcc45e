// SPDX-License-Identifier: MIT
/*
 * The option string the kernel's /dev/nvme-fabrics takes for a connect,
 * as libnvme builds it, for the connects libnvme 1.3 cannot make: it has
 * a `tls` field in struct nvme_fabrics_config but never writes the
 * kernel's "tls" option. nvme_shim.c writes this string itself for a TLS
 * connect (the secrets go only into that write, never to argv); the
 * fixture records it with the secrets redacted, so tests read what the
 * kernel would get.
 *
 * Discovery (discovery.c) also goes through the kernel directly: the
 * discovery controller is connected with the same write, and its log page
 * read with a Get Log Page admin command on the controller's character
 * device, bounded by the command's timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/nvme_ioctl.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/initiator/discovery.h"
#include "agents/agent/initiator/fabrics.h"

int ln_fabrics_options(const struct ln_conn *cn, int redact, struct ln_buf *out)
{
	const char *hide = "(secret)";
	int r = 0;

	r |= ln_buf_addf(out, "nqn=%s,transport=%s,traddr=%s,trsvcid=%s", cn->subsysnqn,
			 cn->transport, cn->traddr, cn->trsvcid);
	if (cn->host_traddr)
		r |= ln_buf_addf(out, ",host_traddr=%s", cn->host_traddr);
	if (cn->host_iface)
		r |= ln_buf_addf(out, ",host_iface=%s", cn->host_iface);
	if (cn->hostnqn && *cn->hostnqn)
		r |= ln_buf_addf(out, ",hostnqn=%s", cn->hostnqn);
	if (cn->hostid && *cn->hostid)
		r |= ln_buf_addf(out, ",hostid=%s", cn->hostid);
	if (cn->nr_io_queues)
		r |= ln_buf_addf(out, ",nr_io_queues=%d", cn->nr_io_queues);
	if (cn->queue_size)
		r |= ln_buf_addf(out, ",queue_size=%d", cn->queue_size);
	if (cn->ctrl_loss_tmo)
		r |= ln_buf_addf(out, ",ctrl_loss_tmo=%d", cn->ctrl_loss_tmo);
	if (cn->reconnect_delay)
		r |= ln_buf_addf(out, ",reconnect_delay=%d", cn->reconnect_delay);
	if (cn->dhchap_secret)
		r |= ln_buf_addf(out, ",dhchap_secret=%s", redact ? hide : cn->dhchap_secret);
	if (cn->dhchap_ctrl_secret)
		r |= ln_buf_addf(out, ",dhchap_ctrl_secret=%s",
				 redact ? hide : cn->dhchap_ctrl_secret);
	/* the PSK is found by the kernel in .nvme under the standard identity */
	if (cn->tls)
		r |= ln_buf_addstr(out, ",tls");
	return r ? -ENOSPC : 0;
}

int ln_fabrics_connect(const struct ln_conn *cn, char *name, int *step, struct ln_buf *err)
{
	/* the string may hold DH-HMAC-CHAP secrets: wiped on release */
	struct ln_buf opts = LN_BUF_INIT_SECRET;
	char answer[256];
	ssize_t n;
	int fd, r, inst;

	*step = LN_FABRICS_OPEN;
	r = ln_buf_grow(&opts, 1024) ?: ln_fabrics_options(cn, 0, &opts);
	if (r < 0)
		goto out;
	fd = open("/dev/nvme-fabrics", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot open /dev/nvme-fabrics: %s", strerror(-r));
		goto out;
	}
	/* the kernel's own connect (and handshake) timeouts bound the write */
	*step = LN_FABRICS_WRITE;
	n = write(fd, opts.buf, opts.len);
	if (n != (ssize_t)opts.len) {
		r = n < 0 ? -errno : -EIO;
		close(fd);
		goto out;
	}
	*step = LN_FABRICS_ANSWER;
	n = read(fd, answer, sizeof(answer) - 1);
	close(fd);
	answer[n > 0 ? n : 0] = '\0';
	if (n <= 0 || sscanf(answer, "instance=%d", &inst) != 1) {
		r = -EIO;
		goto out;
	}
	snprintf(name, 32, "nvme%d", inst);
	r = 0;
out:
	ln_buf_release(&opts);
	return r;
}

int ln_fabrics_disc_connect(const struct ln_conn *cn, char *name, struct ln_buf *err)
{
	int step, r = ln_fabrics_connect(cn, name, &step, err);

	if (r < 0 && step == LN_FABRICS_WRITE)
		ln_buf_addf(err, "cannot connect to the discovery controller at %s %s:%s: %s",
			    cn->transport, cn->traddr, cn->trsvcid, strerror(-r));
	else if (r < 0 && step == LN_FABRICS_ANSWER)
		ln_buf_addf(err, "connected to the discovery controller at %s:%s but the kernel did "
			    "not say which controller", cn->traddr, cn->trsvcid);
	return r;
}

int ln_fabrics_delete(const char *name, struct ln_buf *err)
{
	char p[96];
	int fd, r = 0;

	if (strncmp(name, "nvme", 4) || strchr(name, '/'))
		return -EINVAL;
	snprintf(p, sizeof(p), "/sys/class/nvme/%s/delete_controller", name);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1)
		r = -errno;
	if (fd >= 0)
		close(fd);
	if (r < 0)
		ln_buf_addf(err, "cannot delete controller '%s': %s", name, strerror(-r));
	return r;
}

int ln_fabrics_disc_log(const char *name, uint64_t off, void *buf, size_t len,
			struct ln_buf *err)
{
	struct nvme_admin_cmd cmd;
	char dev[64];
	uint32_t numd = (uint32_t)(len / 4) - 1;
	int fd, r;

	if (len < 4 || len % 4 || len > (64u << 20)) {
		ln_buf_addf(err, "cannot read %zu bytes of a log page", len);
		return -EINVAL;
	}
	snprintf(dev, sizeof(dev), "/dev/%s", name);
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		ln_buf_addf(err, "cannot open '%s': %s", dev, strerror(-r));
		return r;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = 0x02;	/* Get Log Page */
	cmd.addr = (uint64_t)(uintptr_t)buf;
	cmd.data_len = (uint32_t)len;
	/* LID, RAE (keep the async event), NUMDL; NUMDU; LPOL; LPOU */
	cmd.cdw10 = LN_DISC_LID | (1u << 15) | ((numd & 0xffff) << 16);
	cmd.cdw11 = numd >> 16;
	cmd.cdw12 = (uint32_t)off;
	cmd.cdw13 = (uint32_t)(off >> 32);
	cmd.timeout_ms = 10000;
	r = ioctl(fd, NVME_IOCTL_ADMIN_CMD, &cmd);
	close(fd);
	if (r != 0) {
		r = r < 0 ? -errno : -EIO;	/* > 0: the NVMe status */
		ln_buf_addf(err, "cannot read the discovery log from '%s': %s", name,
			    r == -EIO ? "the controller refused Get Log Page" : strerror(-r));
		return r;
	}
	return 0;
}
