/* SPDX-License-Identifier: MIT */
/*
 * The parts of a converge, which reconcile.c runs in order: each
 * reconciles one kind of object through struct ln_converge (converge.h).
 */
#ifndef LN_AGENT_PARTS_H
#define LN_AGENT_PARTS_H

#include "agents/agent/converge/converge.h"

/* Load a module the run needs (owned when the agent loaded it); 0 or negative. */
int ln_cv_module(struct ln_converge *cv, const char *module);
/* Mount configfs when it is not (owned when the agent mounted it). */
int ln_cv_configfs(struct ln_converge *cv);
/* Unload owned modules and unmount an owned configfs the run no longer
 * needs; in use means kept, with a warning. */
void ln_modules_remove(struct ln_converge *cv);

/* holders.c. Teardown: fill cv->kept with the subsystems of the cluster
 * that stay: named in keep (the controller's --keep), still connected from
 * this node after its own initiators' removal, or still held by a host as
 * far as the kernel shows (skipped for those named in force). keep and
 * force are sets (objects keyed by NQN); what the kernel cannot show is
 * said in a warning. */
void ln_nvmet_keep(struct ln_converge *cv, struct json_object *keep, struct json_object *force);
/* Remove what this cluster owns and no longer wants (in a teardown: all
 * but the objects of the subsystems in cv->kept). */
void ln_nvmet_remove(struct ln_converge *cv);
void ln_nvmet_apply(struct ln_converge *cv);
void ln_initiator_remove(struct ln_converge *cv);
void ln_initiator_apply(struct ln_converge *cv);
void ln_hostfile_reconcile(struct ln_converge *cv);
#define LN_KEYS_DIR "/etc/llmnet/keys"

/* keystore.c. The node key store /etc/llmnet/keys/<cluster>/: the secrets
 * the request needs on this node, written (0600, atomically) when they
 * differ, the others removed (not when may_remove is 0: a restore, whose
 * failed try must leave the next one its secrets); reports name files,
 * never secrets. */
void ln_keystore_apply(struct ln_converge *cv, int may_remove);
/* Teardown: remove the cluster's key store folder and all in it. */
void ln_keystore_wipe(struct ln_converge *cv);
/* backing.c. Make sure ns's backing file is there at the right size,
 * used only when this cluster made it or the spec adopts it; 0, or
 * negative (-EALREADY: already reported). */
int ln_backing_file_apply(struct ln_converge *cv, const struct ln_req_ns *ns,
			  struct ln_buf *err);
/* The refusals of ln_backing_file_apply that need no change, checked
 * before any object of the target is made; 0 or negative with err. */
int ln_backing_file_usable(struct ln_converge *cv, const struct ln_req_ns *ns,
			   struct ln_buf *err);
/* 1 when a backing_file record is an adopted file (never deleted). */
int ln_nvmet_adopted(struct json_object *rec);
/* teardown --purge: owned backing files and directories; an adopted file
 * is kept and forgotten. */
void ln_purge_files(struct ln_converge *cv);

/* persist.c (request `persist`): keep the request (without secrets), a
 * copy of the pushed agent and the cluster's enabled boot unit where
 * systemd runs; remove them when not wanted. ln_persist_remove (teardown
 * first of all): 0, or negative when one of them could not be removed
 * (reported; the ones after it are kept). */
void ln_persist_apply(struct ln_converge *cv);
int ln_persist_remove(struct ln_converge *cv);
/* What the unit copies and runs: the agent the controller pushed. */
#define LN_RESTORE_SOURCE LN_PROTO_REMOTE_DIR "/" LN_PROTO_AGENT_NAME
/* The boot bound (the unit's --budget-ms: how long boot may wait) and
 * each background try's budget (restore.c). */
#define LN_RESTORE_BOOT_MS 30000
#define LN_RESTORE_TRY_MS 30000
/* 1 when systemd runs on the node (/run/systemd/system). */
int ln_persist_supported(const struct ln_agent *a);
/* facts: "yes", "no", "disabled", "broken" (a file is missing) or
 * "unsupported" (no systemd) for cluster. */
const char *ln_persist_status(struct ln_agent *a, struct ln_state *st, const char *cluster);
/* restore: the stored request of cluster with its secrets from the key
 * store, as request text in out (clear it after use); -ENOENT when the
 * cluster stores none, else 0 or negative with err. */
int ln_persist_load(struct ln_agent *a, const char *cluster, struct ln_buf *out,
		    struct ln_buf *err);

/* tlskeys.c. Put the TLS PSK of (hostnqn, subnqn) derived from the
 * configured PSK psk in the kernel's .nvme keyring unless the state says
 * it is there already; reported as tls_psk IDENTITY (never the key).
 * 0 or negative (reported). */
int ln_tls_psk_apply(struct ln_converge *cv, const char *hostnqn, const char *subnqn,
		     const char *psk);
/* Remove the keyring's PSKs this cluster inserted that the request no
 * longer wants (all but a kept subsystem's in a teardown). */
void ln_tls_psk_remove(struct ln_converge *cv);

/* Build the hostfile text for the request's lines. */
int ln_hostfile_render(const struct ln_request *rq, struct ln_buf *out);

#endif
