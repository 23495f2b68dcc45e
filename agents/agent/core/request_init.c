/* SPDX-License-Identifier: MIT */
/*
 * An initiator of the request (initiators[i]): the subsystem it connects
 * to and where, its queue settings, its mount, its DH-HMAC-CHAP secrets
 * and TLS PSK (the fields of common/secret_fields.h), tls and discovery.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/request_impl.h"
#include "agents/agent/core/valid.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/secret_fields.h"

/* "discovery": true; not (yet) through a port that asks TLS or a subsystem
 * with DH-HMAC-CHAP: lint refuses both, and so does the agent. */
static int parse_discovery(struct json_object *o, struct ln_req_init *in, const char *where,
			   struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r = ln_json_get_bool(o, "discovery", 0, &in->discovery, &e);

	if (r < 0 && r != -ENOENT)
		r = rq_bad(err, where, "%s", e.buf);
	ln_buf_release(&e);
	if (r < 0 && r != -ENOENT)
		return r;
	if (in->discovery && (in->tls || in->secret))
		return rq_bad(err, where, "discovery is not supported with %s",
			      in->tls ? "tls" : "dhchap");
	return 0;
}

/* "host_traddr": the source address the connection is bound to, of the
 * target address's family (an IPv4 source cannot reach an IPv6 target). */
static int parse_source(struct json_object *o, struct ln_req_init *in, const char *family,
			const char *where, struct ln_buf *err)
{
	const char *fam = NULL;
	int r = rq_get_str(o, "host_traddr", 0, &in->host_traddr, where, err);

	if (r == -ENOENT) {
		in->host_traddr = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	if (!ln_valid_addr(in->host_traddr, &fam) || strcmp(fam, family))
		return rq_bad(err, where, "host_traddr '%s' must be a numeric %s address, as "
			      "address is", in->host_traddr, family);
	return 0;
}

/* "exec": true in a mount: programs may run from it; the default is noexec. */
static int parse_exec(struct json_object *m, struct ln_req_init *in, const char *where,
		      struct ln_buf *err)
{
	struct ln_buf e = LN_BUF_INIT;
	int r = ln_json_get_bool(m, "exec", 0, &in->mount_exec, &e);

	if (r < 0 && r != -ENOENT)
		r = rq_bad(err, where, "%s", e.buf);
	ln_buf_release(&e);
	return r == -ENOENT ? 0 : r;
}

int rq_parse_init(struct json_object *o, struct ln_req_init *in, const char *where,
		  struct ln_buf *err)
{
	static const char *const keys[] = { "target", "transport", "address", "service", "queues",
					    "mount", "dhchap", "tls", "discovery", "host_traddr",
					    NULL };
	const struct ln_secret_holder *h = &ln_secret_holders[LN_SECRET_CONNECT];
	const char *const dkeys[] = { h->field[LN_SECRET_KEY], h->field[LN_SECRET_CTRL_KEY],
				      h->field[LN_SECRET_PSK], NULL };
	static const char *const qkeys[] = { "nr_io_queues", "queue_size", "ctrl_loss_tmo",
					     "reconnect_delay", NULL };
	static const char *const mkeys[] = { "path", "fs", "format", "exec", NULL };
	struct json_object *q, *m, *d;
	const char *family, *format = "never";
	char w[128];
	int64_t v;
	int r;

	r = rq_parse_head(o, keys, "target", "target ", &in->target, &in->transport, &in->address,
			  &family, in->service, where, err);
	if (r < 0)
		return r;
	if ((r = rq_get_tls(o, in->transport, &in->tls, where, err)) < 0 ||
	    (r = parse_source(o, in, family, where, err)) < 0)
		return r;
	r = rq_section(o, "queues", qkeys, where, w, sizeof(w), &q, err);
	if (r < 0)
		return r;
	if (r) {
#define Q(key, lo, hi) \
	r = rq_get_int(q, #key, 0, lo, hi, &v, w, err); \
	if (r < 0 && r != -ENOENT) \
		return r; \
	in->key = r == 0 ? (int)v : 0
		Q(nr_io_queues, 1, 1024);
		Q(queue_size, 16, 1024);
		Q(ctrl_loss_tmo, -1, 86400);
		Q(reconnect_delay, 1, 3600);
#undef Q
	}
	r = rq_section(o, "mount", mkeys, where, w, sizeof(w), &m, err);
	if (r < 0)
		return r;
	if (r) {
		if ((r = rq_get_path(m, "path", 1, &in->mount_path, w, err)) < 0 ||
		    (r = rq_own_place("path", in->mount_path, w, err)) < 0)
			return r;
		if ((r = rq_get_str(m, "fs", 1, &in->mount_fs, w, err)) < 0)
			return r;
		if (strcmp(in->mount_fs, "ext4") && strcmp(in->mount_fs, "xfs"))
			return rq_bad(err, w, "fs '%s' must be ext4 or xfs", in->mount_fs);
		r = rq_get_str(m, "format", 0, &format, w, err);
		if (r < 0 && r != -ENOENT)
			return r;
		if (strcmp(format, "never") && strcmp(format, "if-blank"))
			return rq_bad(err, w, "format '%s' must be never or if-blank", format);
		in->format_if_blank = !strcmp(format, "if-blank");
		if ((r = parse_exec(m, in, w, err)) < 0)
			return r;
	}
	r = rq_section(o, "dhchap", dkeys, where, w, sizeof(w), &d, err);
	if (r < 0)
		return r;
	if (r) {
		r = rq_get_secrets(d, h, in->tls, "connect", in->secrets, w, err);
		if (r < 0)
			return r;
	}
	if (in->tls && !in->psk)
		return rq_bad(err, where, "tls needs dhchap.psk%s", "");
	return parse_discovery(o, in, where, err);
}
