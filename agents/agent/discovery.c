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

#include "agents/agent/agent.h"
#include "agents/agent/budget.h"
#include "agents/agent/discovery.h"

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
	uint64_t gen = 0, numrec, gen2 = 0, numrec2;
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

/* Addresses compared as parsed IPv4/IPv6 (10.0.0.1 is 10.0.0.1 however
 * written); anything else byte for byte. */
static int same_addr(const char *a, const char *b)
{
	unsigned char x[16], y[16];

	if (inet_pton(AF_INET, a, x) == 1)
		return inet_pton(AF_INET, b, y) == 1 && !memcmp(x, y, 4);
	if (inet_pton(AF_INET6, a, x) == 1)
		return inet_pton(AF_INET6, b, y) == 1 && !memcmp(x, y, 16);
	return !strcmp(a, b);
}

static int same_service(const char *a, const char *b)
{
	char *ea, *eb;
	unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);

	if (*a && *b && !*ea && !*eb)
		return x == y;
	return !strcmp(a, b);
}

int ln_disc_match(const struct ln_disc_log *l, const char *nqn, const char *transport,
		  const char *address, const char *service)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct ln_disc_entry *e = &l->v[i];

		if (e->subtype == LN_DISC_SUB_NVME && !strcmp(e->subnqn, nqn) &&
		    !strcmp(e->transport, transport) && same_addr(e->traddr, address) &&
		    same_service(e->trsvcid, service))
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

int ln_disc_find(struct ln_agent *a, const struct ln_conn *cn, struct ln_disc_entry *hit,
		 struct ln_buf *err)
{
	struct ln_conn dc;
	struct ln_disc_log log = { 0 };
	struct ln_buf what = LN_BUF_INIT, scratch = LN_BUF_INIT;
	struct disc_ctx ctx = { .a = a };
	char name[32] = "";
	int r, d, i;

	/* the discovery controller takes no I/O queues, secrets or TLS */
	memset(&dc, 0, sizeof(dc));
	dc.subsysnqn = LN_DISC_NQN;
	dc.transport = cn->transport;
	dc.traddr = cn->traddr;
	dc.trsvcid = cn->trsvcid;
	dc.hostnqn = cn->hostnqn;
	dc.hostid = cn->hostid;
	r = ln_agent_change(a, "discovery connect") ?: a->ini->disc_connect(a, &dc, name, err);
	if (r < 0) {
		ln_buf_addf(err, " (discovery controller of '%s' at %s %s:%s)", cn->subsysnqn,
			    cn->transport, cn->traddr, cn->trsvcid);
		goto out;
	}
	ctx.name = name;
	r = ln_disc_read(read_ops, &ctx, &log, err);
	/* always deleted, also after a failed read: never left behind */
	d = ln_agent_change(a, "discovery disconnect") ?: a->ini->disc_delete(a, name, &scratch);
	if (d < 0 && r == 0) {
		ln_buf_addf(err, "cannot delete discovery controller '%s': %s", name,
			    scratch.len ? scratch.buf : strerror(-d));
		r = d;
	}
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
	ln_buf_release(&scratch);
	return r;
}
