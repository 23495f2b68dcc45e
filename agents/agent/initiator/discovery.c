// SPDX-License-Identifier: MIT
/*
 * Discovery: the log page of a target's discovery controller, parsed from
 * its bytes (NVMe over Fabrics, Discovery Log Page: a 1024-byte header with
 * the generation counter at 0 and the record count at 8, then 1024-byte
 * entries: TRTYPE 0, ADRFAM 1, SUBTYPE 2, TREQ 3, PORTID 4-5, CNTLID 6-7,
 * TRSVCID 32-63, SUBNQN 256-511, TRADDR 512-767, little endian, the text
 * fields padded with spaces or NULs), read as nvme-cli reads it (header,
 * entries, header again until the generation counter holds still), and
 * matched against the declared subsystem. Only an NVM subsystem entry
 * (subtype 2) is ever connected from; a referral or the discovery
 * subsystem itself is listed in messages but never matched.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/initiator/discovery.h"
#include "agents/agent/initiator/hostid.h"
#include "common/addr.h"
#include "common/json.h"

static uint64_t le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = (v << 8) | p[n];
	return v;
}

/* A fixed text field: up to the first NUL, trailing spaces dropped. */
static void text(char *dst, size_t size, const unsigned char *src, size_t n)
{
	size_t len = strnlen((const char *)src, n);

	while (len && (src[len - 1] == ' ' || src[len - 1] == '\0'))
		len--;
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static void trtype_name(struct ln_disc_entry *e)
{
	switch (e->trtype) {
	case 1: snprintf(e->transport, sizeof(e->transport), "rdma"); break;
	case 2: snprintf(e->transport, sizeof(e->transport), "fc"); break;
	case 3: snprintf(e->transport, sizeof(e->transport), "tcp"); break;
	case 254: snprintf(e->transport, sizeof(e->transport), "loop"); break;
	default: snprintf(e->transport, sizeof(e->transport), "trtype %u", e->trtype); break;
	}
}

static void parse_entry(const unsigned char *p, struct ln_disc_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->trtype = p[0];
	e->adrfam = p[1];
	e->subtype = p[2];
	e->treq = p[3];
	e->portid = (unsigned)le(p + 4, 2);
	e->cntlid = (unsigned)le(p + 6, 2);
	text(e->trsvcid, sizeof(e->trsvcid), p + 32, 32);
	text(e->subnqn, sizeof(e->subnqn), p + 256, 256);
	text(e->traddr, sizeof(e->traddr), p + 512, 256);
	trtype_name(e);
}

int ln_disc_parse(const unsigned char *buf, size_t len, struct ln_disc_log *out,
		  struct ln_buf *err)
{
	uint64_t numrec;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (len < LN_DISC_HDR) {
		ln_buf_addf(err, "discovery log truncated: %zu bytes, its header alone is %d", len,
			    LN_DISC_HDR);
		return -EPROTO;
	}
	out->genctr = le(buf, 8);
	numrec = le(buf + 8, 8);
	if (numrec > LN_DISC_MAX_RECS) {
		ln_buf_addf(err, "discovery log lists %llu records, more than the %d llmnet reads",
			    (unsigned long long)numrec, LN_DISC_MAX_RECS);
		return -EPROTO;
	}
	if (len < LN_DISC_HDR + numrec * LN_DISC_REC) {
		ln_buf_addf(err, "discovery log truncated: %llu records need %llu bytes, %zu read",
			    (unsigned long long)numrec,
			    (unsigned long long)(LN_DISC_HDR + numrec * LN_DISC_REC), len);
		return -EPROTO;
	}
	out->v = calloc(numrec ? numrec : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (i = 0; i < numrec; i++)
		parse_entry(buf + LN_DISC_HDR + i * LN_DISC_REC, &out->v[i]);
	out->n = (size_t)numrec;
	return 0;
}

void ln_disc_log_release(struct ln_disc_log *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int read_header(ln_disc_read_fn fn, void *ctx, uint64_t *genctr, uint64_t *numrec,
		       struct ln_buf *err)
{
	unsigned char h[16];
	int r = fn(ctx, 0, h, sizeof(h), err);

	if (r < 0)
		return r;
	*genctr = le(h, 8);
	*numrec = le(h + 8, 8);
	return 0;
}

int ln_disc_read(ln_disc_read_fn fn, void *ctx, struct ln_disc_log *out, struct ln_buf *err)
{
	unsigned char *page = NULL;
	uint64_t gen = 0, numrec = 0, gen2 = 0, numrec2 = 0;
	size_t len;
	int r, tries;

	memset(out, 0, sizeof(*out));
	for (tries = 0; tries < 3; tries++) {
		r = read_header(fn, ctx, &gen, &numrec, err);
		if (r < 0)
			goto out;
		if (numrec > LN_DISC_MAX_RECS) {
			ln_buf_addf(err, "discovery log lists %llu records, more than the %d llmnet "
				    "reads", (unsigned long long)numrec, LN_DISC_MAX_RECS);
			r = -EPROTO;
			goto out;
		}
		len = LN_DISC_HDR + (size_t)numrec * LN_DISC_REC;
		free(page);
		page = calloc(1, len);
		if (!page) {
			r = -ENOMEM;
			goto out;
		}
		r = fn(ctx, 0, page, len, err);
		if (r == 0)
			r = read_header(fn, ctx, &gen2, &numrec2, err);
		if (r < 0)
			goto out;
		/* the page must be the one the header described, start to end */
		if (gen2 == gen && numrec2 == numrec && le(page, 8) == gen &&
		    le(page + 8, 8) == numrec) {
			r = ln_disc_parse(page, len, out, err);
			goto out;
		}
	}
	ln_buf_addf(err, "discovery log changed while it was read, %d times (generation %llu "
		    "-> %llu)", tries, (unsigned long long)gen, (unsigned long long)gen2);
	r = -EAGAIN;
out:
	free(page);
	return r;
}

int ln_disc_match(const struct ln_disc_log *l, const char *nqn, const char *transport,
		  const char *address, const char *service)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct ln_disc_entry *e = &l->v[i];

		if (e->subtype == LN_DISC_SUB_NVME && !strcmp(e->subnqn, nqn) &&
		    !strcmp(e->transport, transport) && ln_same_addr(e->traddr, address) &&
		    ln_same_service(e->trsvcid, service))
			return (int)i;
	}
	return -ENOENT;
}

void ln_disc_describe(const struct ln_disc_log *l, struct ln_buf *out)
{
	size_t i, shown = 0;

	for (i = 0; i < l->n && shown < 8; i++) {
		const struct ln_disc_entry *e = &l->v[i];

		if (e->subtype != LN_DISC_SUB_NVME)
			continue;
		ln_buf_addf(out, "%s'%s' at %s %s:%s", shown ? ", " : "", e->subnqn, e->transport,
			    e->traddr, e->trsvcid);
		shown++;
	}
	if (!shown)
		ln_buf_addstr(out, "no subsystem for this host");
	else if (i < l->n)
		ln_buf_addstr(out, ", ...");
}

struct disc_ctx {
	struct ln_agent *a;
	const char *name;
};

static int read_ops(void *ctx, uint64_t off, void *buf, size_t len, struct ln_buf *err)
{
	struct disc_ctx *c = ctx;

	if (ln_budget_left_ms() == 0) {
		ln_buf_addf(err, "no time left to read the discovery log (%s)", ln_budget_why());
		return -ETIMEDOUT;
	}
	return c->a->ini->disc_log(c->a, c->name, off, buf, len, err);
}

/*
 * The log of the discovery controller at cn's transport, address and
 * service, read with cn's host NQN and ID: connect, read, and delete the
 * controller again, also after a failed read (never left behind). gated:
 * the connect and the delete pass ln_agent_change (apply: the budget, the
 * failpoint, the read-only refusal); otherwise (facts --discovery) the
 * controller is a transient read, not a change of the node, and only a
 * closed session or a spent budget stops it before the connect.
 */
static int read_log(struct ln_agent *a, const struct ln_conn *cn, int gated,
		    struct ln_disc_log *log, struct ln_buf *err)
{
	struct ln_conn dc;
	struct ln_buf scratch = LN_BUF_INIT;
	struct disc_ctx ctx = { .a = a };
	char name[32] = "";
	int r, d;

	/* the discovery controller takes no I/O queues, secrets or TLS */
	memset(&dc, 0, sizeof(dc));
	dc.subsysnqn = LN_DISC_NQN;
	dc.transport = cn->transport;
	dc.traddr = cn->traddr;
	dc.trsvcid = cn->trsvcid;
	dc.hostnqn = cn->hostnqn;
	dc.hostid = cn->hostid;
	if (gated)
		r = ln_agent_change(a, "discovery connect");
	else if (ln_agent_stopping)
		r = -ECANCELED;
	else
		r = ln_budget_left_ms() == 0 ? -ETIMEDOUT : 0;
	if (r < 0 && !gated)
		ln_buf_addf(err, "not connecting: %s", r == -ECANCELED ? "the session is closed" :
			    ln_budget_why());
	if (r == 0)
		r = a->ini->disc_connect(a, &dc, name, err);
	if (r < 0) {
		ln_buf_addf(err, " (discovery controller of '%s' at %s %s:%s)", cn->subsysnqn,
			    cn->transport, cn->traddr, cn->trsvcid);
		return r;
	}
	ctx.name = name;
	r = ln_disc_read(read_ops, &ctx, log, err);
	d = gated ? ln_agent_change(a, "discovery disconnect") : 0;
	if (d == 0)
		d = a->ini->disc_delete(a, name, &scratch);
	if (d < 0 && r == 0) {
		ln_buf_addf(err, "cannot delete discovery controller '%s': %s", name,
			    scratch.len ? scratch.buf : strerror(-d));
		r = d;
	}
	ln_buf_release(&scratch);
	return r;
}

int ln_disc_find(struct ln_agent *a, const struct ln_conn *cn, struct ln_disc_entry *hit,
		 struct ln_buf *err)
{
	struct ln_disc_log log = { 0 };
	struct ln_buf what = LN_BUF_INIT;
	int r, i;

	r = read_log(a, cn, 1, &log, err);
	if (r < 0)
		goto out;
	i = ln_disc_match(&log, cn->subsysnqn, cn->transport, cn->traddr, cn->trsvcid);
	if (i < 0) {
		ln_disc_describe(&log, &what);
		ln_buf_addf(err, "'%s' is not in the discovery log at %s %s:%s for host '%s': the "
			    "log lists %s; not connecting (discovery: true never falls back to a "
			    "direct connect)", cn->subsysnqn, cn->transport, cn->traddr, cn->trsvcid,
			    cn->hostnqn ? cn->hostnqn : "", what.buf);
		r = -ENOENT;
		goto out;
	}
	*hit = log.v[i];
	r = 0;
out:
	ln_disc_log_release(&log);
	ln_buf_release(&what);
	return r;
}

int ln_disc_parse_place(char *s, struct ln_conn *cn)
{
	char *f[4], *save = NULL, *tok;
	unsigned char ip[16];
	unsigned long svc;
	char *end;
	int n = 0;

	for (tok = strtok_r(s, ",", &save); tok && n < 4; tok = strtok_r(NULL, ",", &save))
		f[n++] = tok;
	if (n != 4 || tok)
		return -EINVAL;
	svc = strtoul(f[2], &end, 10);
	if ((strcmp(f[0], "tcp") && strcmp(f[0], "rdma")) ||
	    (inet_pton(AF_INET, f[1], ip) != 1 && inet_pton(AF_INET6, f[1], ip) != 1) ||
	    !*f[2] || *end || f[2][0] == '0' || svc < 1 || svc > 65535 || !ln_valid_nqn(f[3]) ||
	    !strcmp(f[3], LN_DISC_NQN))
		return -EINVAL;
	memset(cn, 0, sizeof(*cn));
	cn->transport = f[0];
	cn->traddr = f[1];
	cn->trsvcid = f[2];
	cn->subsysnqn = f[3];
	return 0;
}

/* The log's entries, as the agent read them (every subtype). */
static struct json_object *log_json(const struct ln_disc_log *log)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct ln_disc_entry *e = &log->v[i];
		struct json_object *x = json_object_new_object();

		ln_json_add_i64(x, "subtype", e->subtype);
		ln_json_add_str(x, "nqn", e->subnqn);
		ln_json_add_str(x, "transport", e->transport);
		ln_json_add_str(x, "address", e->traddr);
		ln_json_add_str(x, "service", e->trsvcid);
		ln_json_add_i64(x, "port", e->portid);
		json_object_array_add(arr, x);
	}
	return arr;
}

/* One place's answer: the log read there for this host, or why none was
 * (why: the host identity's error, nothing read). */
static struct json_object *place_facts(struct ln_agent *a, const struct ln_conn *cn,
				       const char *why)
{
	struct json_object *o = json_object_new_object();
	struct ln_disc_log log = { 0 };
	struct ln_buf err = LN_BUF_INIT;
	int r = -ENOENT;

	ln_json_add_str(o, "nqn", cn->subsysnqn);
	ln_json_add_str(o, "transport", cn->transport);
	ln_json_add_str(o, "address", cn->traddr);
	ln_json_add_str(o, "service", cn->trsvcid);
	ln_json_add_str(o, "host_nqn", cn->hostnqn);
	if (why)
		ln_buf_addstr(&err, why);
	else if (cn->hostnqn)
		r = read_log(a, cn, 0, &log, &err);
	else
		ln_buf_addstr(&err, "no host NQN on this node (/etc/nvme/hostnqn): apply makes it");
	if (r == 0)
		ln_json_add(o, "log", log_json(&log));
	else
		ln_json_add_str(o, "error", err.buf);
	ln_disc_log_release(&log);
	ln_buf_release(&err);
	return o;
}

int ln_disc_facts(struct ln_agent *a, const struct ln_conn *places, size_t n,
		  struct json_object **out)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct ln_buf nqn = LN_BUF_INIT, id = LN_BUF_INIT, bad = LN_BUF_INIT;
	size_t i;

	/* the places were checked and split once, by the verb */
	ln_host_identity(a, &nqn, &id, &bad);
	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "root", a->fixture ? a->root : "/");
	for (i = 0; i < n; i++) {
		struct ln_conn cn = places[i];

		cn.hostnqn = nqn.len ? nqn.buf : NULL;
		cn.hostid = id.len ? id.buf : NULL;
		json_object_array_add(arr, place_facts(a, &cn, bad.len ? bad.buf : NULL));
	}
	ln_json_add(o, "discovery", arr);
	ln_json_add(o, "warnings", json_object_new_array());
	ln_buf_release_all(&nqn, &id, &bad);
	*out = o;
	return 0;
}
