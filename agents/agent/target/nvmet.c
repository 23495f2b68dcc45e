// SPDX-License-Identifier: MIT
/*
 * nvmet target reconcile, by delta, in the kernel's order: this file runs
 * the steps; nvmet_remove.c, nvmet_hosts.c, nvmet_subsystems.c,
 * nvmet_namespaces.c and nvmet_ports.c do them (nvmet.h; nvmet_util.c
 * what they share).
 *
 * Removals of what this cluster owns and no longer wants go first, in
 * reverse: port links, ports, namespaces, allowed-host links, subsystems,
 * hosts. Then creates and changes: hosts (and their DH-HMAC-CHAP keys),
 * subsystems, allowed-host links, backing files, namespaces, ports, port
 * links. A subsystem is linked to a port last, so a target that failed
 * anything before (a missing auth attribute above all) is never exported.
 *
 * Ownership ids: nvmet_host H, nvmet_subsystem N, nvmet_allowed_host N/H,
 * nvmet_namespace N/NSID, backing_file PATH, directory PATH, nvmet_port
 * T/A/S (with "port"), nvmet_port_subsystem T/A/S/N (with "port").
 * Objects that exist and are not owned are used where sharing is safe
 * (hosts, ports) and never removed; a foreign subsystem with a wanted NQN
 * is a conflict.
 */
#include <string.h>

#include "agents/agent/target/nvmet.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/tlspsk.h"
#include "agents/agent/kernel/read.h"

/*
 * A target with tls needs the .nvme keyring (a kernel with NVMe/TCP TLS)
 * and tlshd on this node: without them the port would refuse every host
 * or, worse, be set up without TLS. Such a target fails here, before any
 * of its objects is made, and nothing of it is exported. A plan on a node
 * where nvmet_tcp is not loaded yet cannot see the keyring: it checks
 * tlshd only.
 */
static void check_tls(struct ln_converge *cv)
{
	struct ln_buf err = LN_BUF_INIT;
	size_t i;
	int rc = 1;

	for (i = 0; i < cv->rq->ntargets; i++) {
		struct ln_req_target *t = &cv->rq->targets[i];

		if (!t->tls || t->failed)
			continue;
		if (rc > 0)
			rc = ln_tls_ready(cv->a, !cv->plan || ln_module_loaded(cv->a, "nvmet_tcp"),
					  &err);
		if (rc < 0) {
			t->failed = 1;
			ln_cv_report(cv, "create", "nvmet_subsystem", t->nqn, "tls", err.buf);
		}
	}
	ln_buf_release(&err);
}

void ln_nvmet_apply(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	size_t i, j;

	if (!rq->ntargets)
		return;
	/* first, so that a node whose every target is refused is left as it
	 * was: no module loaded, no configfs mounted for nothing */
	ln_nvmet_check_devices(cv);
	for (i = 0; i < rq->ntargets && rq->targets[i].failed; i++)
		;
	if (i == rq->ntargets)
		return;
	if (ln_cv_module(cv, "configfs") < 0 || ln_cv_configfs(cv) < 0)
		return;
	ln_cv_module(cv, "nvmet");
	for (i = 0; i < rq->ntargets; i++) {
		const char *m = !strcmp(rq->targets[i].transport, "tcp") ? "nvmet_tcp" : "nvmet_rdma";

		ln_cv_module(cv, m);
	}
	if (!cv->plan && !ln_is_dir(cv->a, LN_NVMET)) {
		ln_cv_report(cv, "create", "nvmet_subsystem", "*", NULL,
			     "nvmet configfs is missing after loading nvmet");
		return;
	}
	check_tls(cv);
	ln_nvmet_check_hosts(cv);
	ln_nvmet_apply_hosts(cv);
	for (i = 0; i < rq->ntargets; i++)
		ln_nvmet_apply_dhchap(cv, &rq->targets[i]);
	for (i = 0; i < rq->ntargets; i++)
		if (!rq->targets[i].failed)
			ln_nvmet_apply_subsystem(cv, &rq->targets[i]);
	ln_nvmet_apply_allowed_hosts(cv);
	/* backing files and namespaces */
	ln_nvmet_warn_free_space(cv);
	for (i = 0; i < rq->ntargets; i++)
		for (j = 0; !rq->targets[i].failed && j < rq->targets[i].nns; j++)
			ln_nvmet_apply_namespace(cv, &rq->targets[i], &rq->targets[i].ns[j]);
	/* TLS PSKs before the port: a host must find its key at its first connect */
	for (i = 0; i < rq->ntargets; i++)
		for (j = 0; rq->targets[i].tls && !rq->targets[i].failed && j < rq->targets[i].nhosts;
		     j++)
			if (ln_tls_psk_apply(cv, rq->targets[i].hosts[j], rq->targets[i].nqn,
					     rq->targets[i].keys[j].psk) < 0)
				rq->targets[i].failed = 1;
	ln_nvmet_apply_ports(cv);
}
