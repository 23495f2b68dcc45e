/* SPDX-License-Identifier: MIT */
/*
 * plan / apply / teardown: converge the node to a desired state by delta.
 * request.c parses and validates the request; nvmet.c, initiator.c and
 * hostfile.c each reconcile their part through struct ln_rc, which carries
 * the state, the change list and whether this is a dry run.
 */
#ifndef LN_AGENT_RECONCILE_H
#define LN_AGENT_RECONCILE_H

#include <stdint.h>

#include "agents/agent/agent.h"
#include "agents/agent/state.h"

struct ln_req_ns {
	uint32_t nsid;
	const char *file;	/* or NULL */
	uint64_t size;
	const char *device;	/* or NULL */
};

struct ln_req_target {
	const char *nqn, *transport, *address, *family;
	char service[8];
	int any;
	const char **hosts;
	size_t nhosts;
	struct ln_req_ns *ns;
	size_t nns;
	const char *key_file, *ctrl_key_file;
	int failed;		/* set when this target must not be exported */
	char port_id[16];	/* the nvmet port serving it (after the port phase) */
};

struct ln_req_init {
	const char *target, *transport, *address;
	char service[8];
	int nr_io_queues, queue_size, ctrl_loss_tmo, reconnect_delay;
	const char *mount_path, *mount_fs;
	int format_if_blank;
};

struct ln_req_line {
	const char *name;
	int slots;
};

struct ln_request {
	struct json_object *json;	/* owns every string above */
	const char *cluster;
	struct ln_req_target *targets;
	size_t ntargets;
	struct ln_req_init *inits;
	size_t ninits;
	const char *hostfile_path;	/* NULL: no hostfile wanted */
	int hostfile_mpich;
	struct ln_req_line *lines;
	size_t nlines;
};

/* Parse and validate a request; nothing on the node is read. */
int ln_request_parse(const char *text, size_t len, struct ln_request *rq, struct ln_buf *err);
void ln_request_release(struct ln_request *rq);

struct ln_rc {
	struct ln_agent *a;
	struct ln_request *rq;	/* NULL for teardown */
	const char *cluster;
	struct ln_state st;
	struct ln_changes ch;
	int plan;
	int purge;
	int teardown;
};

/* Record ownership before a create (saved at once, so a stop after the
 * create forgets nothing); 0 or negative. */
int ln_rc_own(struct ln_rc *r, const char *kind, const char *id);
int ln_rc_owned(struct ln_rc *r, const char *kind, const char *id);
void ln_rc_disown(struct ln_rc *r, const char *kind, const char *id);
/* Report a change; err non-NULL marks it failed. */
void ln_rc_report(struct ln_rc *r, const char *action, const char *kind, const char *id,
		  const char *detail, const char *err);
/* Create the missing directories of path (a node path), each owned as a
 * "directory" object; 0 or negative. */
int ln_rc_mkdirs(struct ln_rc *r, const char *dir, struct ln_buf *err);

/* Load a module the run needs (owned when the agent loaded it); 0 or negative. */
int ln_rc_module(struct ln_rc *r, const char *module);
/* Mount configfs when it is not (owned when the agent mounted it). */
int ln_rc_configfs(struct ln_rc *r);
/* Unload owned modules and unmount an owned configfs the run no longer
 * needs; in use means kept, with a warning. */
void ln_modules_remove(struct ln_rc *r);

void ln_nvmet_remove(struct ln_rc *r);
void ln_nvmet_apply(struct ln_rc *r);
void ln_initiator_remove(struct ln_rc *r);
void ln_initiator_apply(struct ln_rc *r);
void ln_hostfile_reconcile(struct ln_rc *r);
/* teardown --purge: owned backing files and directories. */
void ln_purge_files(struct ln_rc *r);

/* Build the hostfile text for the request's lines. */
int ln_hostfile_render(const struct ln_request *rq, struct ln_buf *out);

int ln_reconcile_plan_verb(struct ln_agent *a, int argc, char **argv);
int ln_reconcile_apply_verb(struct ln_agent *a, int argc, char **argv);
int ln_reconcile_teardown_verb(struct ln_agent *a, int argc, char **argv);

#endif
