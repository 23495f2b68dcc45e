/* SPDX-License-Identifier: MIT */
/*
 * The nvmet target part's pieces (nvmet.c runs them in the kernel's order;
 * parts.h declares the part itself): configfs paths, what the pieces share
 * (nvmet_util.c), and each piece's entry.
 */
#ifndef LN_AGENT_NVMET_H
#define LN_AGENT_NVMET_H

#include "agents/agent/converge/parts.h"

#define P_SUB LN_NVMET "/subsystems/"
#define P_PORT LN_NVMET "/ports/"
#define P_HOST LN_NVMET "/hosts/"

/* nvmet_util.c */
/* "T/A/S": a port's ownership id. */
void ln_nvmet_tuple(char *out, size_t size, const char *t, const char *a, const char *s);
/* 1 when the attribute at path reads want. */
int ln_nvmet_read_eq(struct ln_agent *a, const char *path, const char *want);
/* 1 when some subsystem's allowed_hosts (or port's subsystems) links name. */
int ln_nvmet_still_linked(struct ln_agent *a, const char *parent, const char *sub,
			  const char *name);
/* mkdir an owned configfs object; reports create (or the error). */
int ln_nvmet_create_dir(struct ln_converge *cv, const char *kind, const char *id,
			const char *path, const char *detail);
/* symlink an owned configfs object (with its port id when port is set);
 * reports create (or the error). */
int ln_nvmet_create_link(struct ln_converge *cv, const char *kind, const char *id,
			 const char *target, const char *link, const char *port);
/* Record key: value on this cluster's record of (kind, id) when it differs. */
int ln_nvmet_record_field(struct ln_converge *cv, const char *kind, const char *id,
			  const char *key, const char *val, struct ln_buf *err);
/* 1 when the identity key of (kind, id) may be set (nvmet_util.c says when). */
int ln_nvmet_ident_settable(struct ln_converge *cv, const char *kind, const char *id,
			    const char *key, int in_use);

/* nvmet_hosts.c: the host entries the targets allow; target t's
 * DH-HMAC-CHAP keys (t failed when impossible); the allowed_hosts links. */
void ln_nvmet_check_hosts(struct ln_converge *cv);
void ln_nvmet_apply_hosts(struct ln_converge *cv);
void ln_nvmet_apply_dhchap(struct ln_converge *cv, struct ln_req_target *t);
void ln_nvmet_apply_allowed_hosts(struct ln_converge *cv);

/* nvmet_subsystems.c: target t's subsystem (t failed when refused). */
void ln_nvmet_apply_subsystem(struct ln_converge *cv, struct ln_req_target *t);

/* nvmet_namespaces.c: refuse (fail) targets whose devices or backing files
 * cannot serve, before anything is made; warn when backing files may not
 * fit; bring one namespace of t to what ns asks. */
void ln_nvmet_check_devices(struct ln_converge *cv);
void ln_nvmet_warn_free_space(struct ln_converge *cv);
void ln_nvmet_apply_namespace(struct ln_converge *cv, struct ln_req_target *t,
			      const struct ln_req_ns *ns);

/* nvmet_ports.c: the ports the live targets use, then the port links. */
void ln_nvmet_apply_ports(struct ln_converge *cv);

#endif
