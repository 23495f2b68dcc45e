// SPDX-License-Identifier: MIT
/*
 * The option string the kernel's /dev/nvme-fabrics takes for a connect,
 * as libnvme builds it, for the connects libnvme 1.3 cannot make: it has
 * a `tls` field in struct nvme_fabrics_config but never writes the
 * kernel's "tls" option. nvme_shim.c writes this string itself for a TLS
 * connect (the secrets go only into that write, never to argv); the
 * fixture records it with the secrets redacted, so tests read what the
 * kernel would get.
 */
#include <errno.h>
#include <stdio.h>

#include "agents/agent/agent.h"
#include "agents/agent/fabrics.h"

int ln_fabrics_options(const struct ln_conn *cn, int redact, struct ln_buf *out)
{
	const char *hide = "(secret)";
	int r = 0;

	r |= ln_buf_addf(out, "nqn=%s,transport=%s,traddr=%s,trsvcid=%s", cn->subsysnqn,
			 cn->transport, cn->traddr, cn->trsvcid);
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
