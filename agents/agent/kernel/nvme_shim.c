// SPDX-License-Identifier: MIT
/*
 * The only file that speaks libnvme. libnvme 1.3 (Debian 12) has the
 * nvmf_* API that 3.x renames, so everything it does for the agent (scan
 * the controllers, connect, disconnect, generate a host NQN) is wrapped
 * here as the real ln_iniops; the rest of the agent never sees a libnvme
 * type. libnvme's paths (/sys, /dev/nvme-fabrics) cannot be redirected, so
 * this implementation is used on real nodes only and tested in the lab.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <syslog.h>

#include <nvme/fabrics.h>
#include <nvme/log.h>
#include <nvme/tree.h>
#include <nvme/util.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/initiator/discovery.h"
#include "agents/agent/initiator/fabrics.h"
#include "common/fileio.h"

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static nvme_root_t scan_root(struct ln_buf *err)
{
	nvme_root_t r = nvme_scan(NULL);

	if (!r)
		ln_buf_addf(err, "cannot scan nvme controllers: %s", strerror(errno));
	else	/* below debug: libnvme logs the connect string, secrets and all, there */
		nvme_init_logging(r, LOG_WARNING, false, false);
	return r;
}

static int shim_scan(struct ln_agent *a, struct ln_ctrl_list *out, struct ln_buf *err)
{
	nvme_root_t r;
	nvme_host_t h;
	nvme_subsystem_t s;
	nvme_ctrl_t c;

	(void)a;
	out->v = NULL;
	out->n = 0;
	r = scan_root(err);
	if (!r)
		return -EIO;
	nvme_for_each_host(r, h) {
		nvme_for_each_subsystem(h, s) {
			nvme_subsystem_for_each_ctrl(s, c) {
				struct ln_ctrl *v = realloc(out->v, (out->n + 1) * sizeof(*v));
				struct ln_ctrl *x;

				if (!v) {
					nvme_free_tree(r);
					return -ENOMEM;
				}
				out->v = v;
				x = &v[out->n++];
				memset(x, 0, sizeof(*x));
				copy(x->name, sizeof(x->name), nvme_ctrl_get_name(c));
				copy(x->transport, sizeof(x->transport), nvme_ctrl_get_transport(c));
				copy(x->traddr, sizeof(x->traddr), nvme_ctrl_get_traddr(c));
				copy(x->trsvcid, sizeof(x->trsvcid), nvme_ctrl_get_trsvcid(c));
				copy(x->subsysnqn, sizeof(x->subsysnqn), nvme_ctrl_get_subsysnqn(c));
				copy(x->hostnqn, sizeof(x->hostnqn), nvme_host_get_hostnqn(h));
				copy(x->state, sizeof(x->state), nvme_ctrl_get_state(c));
			}
		}
	}
	nvme_free_tree(r);
	return 0;
}

/*
 * A TLS connect, which libnvme 1.3 cannot make: the option string written
 * to /dev/nvme-fabrics as libnvme does, and the kernel's answer
 * "instance=N,cntlid=M" read back (ln_fabrics_connect, which the discovery
 * controller's connect shares). The write returns when the kernel has
 * connected or given up (its own connect and handshake timeouts bound it).
 * The string holds the DH-HMAC-CHAP secrets: wiped after the write.
 */
static int tls_connect(const struct ln_conn *cn, char *name, struct ln_buf *err)
{
	int step, r = ln_fabrics_connect(cn, name, &step, err);

	if (r < 0 && step == LN_FABRICS_WRITE)
		ln_buf_addf(err, "cannot connect to '%s' at %s %s:%s with TLS: %s (is tlshd "
			    "running on both ends with the .nvme keyring? its journal says why a "
			    "handshake failed)", cn->subsysnqn, cn->transport, cn->traddr,
			    cn->trsvcid, strerror(-r));
	else if (r < 0 && step == LN_FABRICS_ANSWER)
		ln_buf_addf(err, "connected to '%s' with TLS but the kernel did not say which "
			    "controller", cn->subsysnqn);
	return r;
}

static int shim_connect(struct ln_agent *a, const struct ln_conn *cn, char *name,
			struct ln_buf *err)
{
	struct nvme_fabrics_config cfg;
	nvme_root_t r;
	nvme_host_t h;
	nvme_ctrl_t c;
	int ret;

	(void)a;
	if (cn->tls)
		return tls_connect(cn, name, err);
	r = scan_root(err);
	if (!r)
		return -EIO;
	h = nvme_lookup_host(r, cn->hostnqn, cn->hostid);
	/* bound to its source (issue 27): host_traddr, and host_iface for tcp */
	c = h ? nvme_create_ctrl(r, cn->subsysnqn, cn->transport, cn->traddr, cn->host_traddr,
				 cn->host_iface, cn->trsvcid)
	      : NULL;
	if (!c) {
		ln_buf_addf(err, "cannot set up controller for '%s': %s", cn->subsysnqn,
			    strerror(errno));
		ret = -ENOMEM;
		goto out;
	}
	if (cn->dhchap_secret)
		nvme_ctrl_set_dhchap_host_key(c, cn->dhchap_secret);
	if (cn->dhchap_ctrl_secret)
		nvme_ctrl_set_dhchap_key(c, cn->dhchap_ctrl_secret);
	nvmf_default_config(&cfg);
	if (cn->nr_io_queues)
		cfg.nr_io_queues = cn->nr_io_queues;
	if (cn->queue_size)
		cfg.queue_size = cn->queue_size;
	if (cn->ctrl_loss_tmo)
		cfg.ctrl_loss_tmo = cn->ctrl_loss_tmo;
	if (cn->reconnect_delay)
		cfg.reconnect_delay = cn->reconnect_delay;
	ret = nvmf_add_ctrl(h, c, &cfg);
	if (ret < 0) {
		ret = errno ? -errno : -EIO;
		/* libnvme 1.3 folds the kernel's errno into its own codes */
		ln_buf_addf(err, "cannot connect to '%s' at %s %s:%s: %s%s", cn->subsysnqn,
			    cn->transport, cn->traddr, cn->trsvcid,
			    -ret >= ENVME_CONNECT_RESOLVE ? nvme_errno_to_string(-ret)
							  : strerror(-ret),
			    !cn->dhchap_secret ? ""
			    : -ret == ENVME_CONNECT_INVAL
				? " (with DH-HMAC-CHAP: does this kernel's host have NVME_HOST_AUTH?)"
				: " (with DH-HMAC-CHAP: a refused secret shows as 'authentication "
				  "failed' in the kernel log)");
		nvme_free_ctrl(c);
		goto out;
	}
	copy(name, 32, nvme_ctrl_get_name(c));
	ret = 0;
out:
	nvme_free_tree(r);
	return ret;
}

static int shim_disconnect(struct ln_agent *a, const char *name, struct ln_buf *err)
{
	nvme_root_t r = scan_root(err);
	nvme_ctrl_t c;
	int ret;

	(void)a;
	if (!r)
		return -EIO;
	c = nvme_scan_ctrl(r, name);
	if (!c) {
		ret = -ENOENT;
		goto out;
	}
	ret = nvme_disconnect_ctrl(c);
	if (ret < 0) {
		ret = errno ? -errno : -EIO;
		ln_buf_addf(err, "cannot disconnect '%s': %s", name, strerror(-ret));
		goto out;
	}
	ret = 0;
out:
	nvme_free_tree(r);
	return ret;
}

static int shim_hostnqn_generate(struct ln_agent *a, char **out, struct ln_buf *err)
{
	(void)a;
	*out = nvmf_hostnqn_generate();
	if (!*out) {
		ln_buf_addf(err, "cannot generate a host NQN: no DMI product UUID or machine id");
		return -ENOENT;
	}
	return 0;
}

static int shim_disc_connect(struct ln_agent *a, const struct ln_conn *cn, char *name,
			     struct ln_buf *err)
{
	(void)a;
	return ln_fabrics_disc_connect(cn, name, err);
}

static int shim_disc_log(struct ln_agent *a, const char *name, uint64_t off, void *buf,
			 size_t len, struct ln_buf *err)
{
	(void)a;
	return ln_fabrics_disc_log(name, off, buf, len, err);
}

/* Only while name is still a discovery controller: if it went meanwhile
 * (someone else's disconnect), its instance number may already be a new
 * controller's, which is not llmnet's to delete. */
static int shim_disc_delete(struct ln_agent *a, const char *name, struct ln_buf *err)
{
	struct ln_buf nqn = LN_BUF_INIT, e = LN_BUF_INIT;
	char p[96];
	int r;

	(void)a;
	snprintf(p, sizeof(p), "/sys/class/nvme/%.32s/subsysnqn", name);
	r = ln_file_read(p, &nqn, &e);
	ln_buf_rtrim(&nqn);
	if (r == 0 && strcmp(nqn.buf, LN_DISC_NQN))
		r = -ESTALE;
	if (r == 0)
		r = ln_fabrics_delete(name, err);
	else
		ln_buf_addf(err, "not deleting controller '%s': it is no longer the discovery "
			    "controller llmnet connected (%s)", name, r == -ESTALE ? nqn.buf : e.buf);
	ln_buf_release(&nqn);
	ln_buf_release(&e);
	return r;
}

const struct ln_iniops ln_iniops_real = LN_INIOPS("libnvme", shim);
