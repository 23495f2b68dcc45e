/* SPDX-License-Identifier: MIT */
/*
 * The plan/apply request as the agent reads it (request.c parses and
 * validates it, with its parts: request_impl.h; nothing on the node is
 * read). Its strings point into the parsed JSON, which the request owns.
 */
#ifndef LN_AGENT_REQUEST_H
#define LN_AGENT_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/secret_fields.h"

struct json_object;
struct ln_buf;

struct ln_req_ns {
	uint32_t nsid;
	const char *file;	/* or NULL */
	uint64_t size;
	const char *device;	/* or NULL */
	int adopt;		/* file: use an existing one, never delete it */
	/* stable identity (device_uuid, device_nguid), 8-4-4-4-12 lower
	 * case, or NULL: the kernel's own (random) is left alone */
	const char *uuid, *nguid;
	/* device: its stable identity (blockdev.h), filled by the agent's
	 * device check, recorded at first export and compared after */
	char device_id[256];
	/* device: how the operator names it to `apply --accept-device`
	 * ("NODE:PATH", for messages; or NULL), and whether that flag named it:
	 * a disk other than the pinned one is then pinned and exported (never
	 * in a boot-time restore: restore.c clears it) */
	const char *device_ref;
	int accept_device;
	/* the pin that accept_device replaced ("" when none was), set by the
	 * device check for the namespace's change line */
	char device_was[256];
};

/* One host's DH-HMAC-CHAP secrets on a target (never printed or logged),
 * by name or by slot (v[LN_SECRET_KEY] is key: common/secret_fields.h). */
struct ln_req_key {
	union {
		struct {
			const char *key;	/* DHHC-1 host secret */
			const char *ctrl_key;	/* DHHC-1 controller secret, or NULL (one-way) */
			const char *psk;	/* NVMeTLSkey-1 configured PSK, or NULL (no tls) */
		};
		const char *v[LN_SECRET_SLOTS];
	};
};

struct ln_req_target {
	const char *nqn, *transport, *address, *family;
	const char *serial;	/* attr_serial: 16 lower-case hex digits, or NULL */
	char service[8];
	int any;
	const char **hosts;
	size_t nhosts;
	struct ln_req_ns *ns;
	size_t nns;
	/* DH-HMAC-CHAP: dh_hash NULL when the target has none; else
	 * "hmac(sha256)".., dh_group "ffdhe2048".. or "null", and keys[j]
	 * the secrets of hosts[j] */
	const char *dh_hash, *dh_group;
	struct ln_req_key *keys;
	int tls;		/* tls required: the tcp port takes TLS 1.3 only */
	int failed;		/* set when this target must not be exported */
	char port_id[16];	/* the nvmet port serving it (after the port phase) */
};

struct ln_req_init {
	const char *target, *transport, *address;
	char service[8];
	int nr_io_queues, queue_size, ctrl_loss_tmo, reconnect_delay;
	const char *mount_path, *mount_fs;
	int format_if_blank;
	int mount_exec;		/* "exec": true: mounted without noexec */
	/* DH-HMAC-CHAP secrets for the connect, or NULL, by name or by slot
	 * (common/secret_fields.h); psk: the configured PSK of a tls connect */
	union {
		struct {
			const char *secret, *ctrl_secret, *psk;
		};
		const char *secrets[LN_SECRET_SLOTS];
	};
	int tls;		/* connect with TLS 1.3, with dhchap.psk */
	int discovery;		/* connect from the target's discovery log (discovery.c) */
	/* the connection's source (issue 27): the initiator's declared port on
	 * the target's rail, numeric, of address's family; NULL: the route's */
	const char *host_traddr;
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
	int persist;		/* keep this request and a boot unit (persist.c) */
};

/* Parse and validate a request; nothing on the node is read. */
int ln_request_parse(const char *text, size_t len, struct ln_request *rq, struct ln_buf *err);
void ln_request_release(struct ln_request *rq);

#endif
