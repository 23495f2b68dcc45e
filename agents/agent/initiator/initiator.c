// SPDX-License-Identifier: MIT
/*
 * Initiator reconcile: the host identity first (hostid.c: /etc/nvme/hostnqn
 * and hostid, generated when missing, never overwritten), then idempotent
 * connections (an existing controller with the same host NQN, subsystem
 * NQN, transport, address and service is "connected"; its queue settings,
 * TLS and DH-HMAC-CHAP secrets brought to the request's where the kernel
 * can change them live), a bounded wait for the namespace's block device
 * (found by subsystem NQN, hidden multipath paths skipped), and an
 * optional mount (mount.c). Only controllers and mounts the agent created
 * are ever disconnected or unmounted.
 *
 * Ownership id: nvme_connection T/A/S/NQN (mount.h has the mount's).
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agents/agent/converge/parts.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/initiator/discovery.h"
#include "agents/agent/initiator/hostid.h"
#include "agents/agent/initiator/mount.h"
#include "agents/agent/kernel/fs.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/kernel/tlspsk.h"
#include "agents/agent/run/facts.h"
#include "common/json.h"
#include "common/log.h"
#include "common/util.h"

static void conn_id(char *out, size_t size, const struct ln_req_init *in)
{
	snprintf(out, size, "%s/%s/%s/%s", in->transport, in->address, in->service, in->target);
}

/* The controller serving (transport, address, service, nqn) for hostnqn. */
static const struct ln_ctrl *find_ctrl(const struct ln_ctrl_list *l, const char *transport,
				       const char *address, const char *service, const char *nqn,
				       const char *hostnqn)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		const struct ln_ctrl *c = &l->v[i];

		if (!strcmp(c->transport, transport) && !strcmp(c->traddr, address) &&
		    !strcmp(c->trsvcid, service) && !strcmp(c->subsysnqn, nqn) &&
		    (!c->hostnqn[0] || !hostnqn || !strcmp(c->hostnqn, hostnqn)) &&
		    strcmp(c->state, "deleting") && strcmp(c->state, "dead"))
			return c;
	}
	return NULL;
}

static int split_conn_id(const char *id, char *t, char *a, char *s, char *nqn)
{
	/* T/A/S/NQN: NQNs and addresses hold no '/' */
	return sscanf(id, "%15[^/]/%63[^/]/%15[^/]/%255s", t, a, s, nqn) == 4 ? 0 : -1;
}

static int wanted_conn(struct ln_converge *cv, const char *id)
{
	size_t i;
	char buf[512];

	for (i = 0; cv->rq && i < cv->rq->ninits; i++) {
		conn_id(buf, sizeof(buf), &cv->rq->inits[i]);
		if (!strcmp(buf, id))
			return 1;
	}
	return 0;
}

void ln_initiator_remove(struct ln_converge *cv)
{
	struct json_object *l;
	struct ln_ctrl_list ctrls = { 0 };
	struct ln_buf err = LN_BUF_INIT;
	size_t i, n;

	ln_mount_remove(cv);
	l = ln_cv_owned_of(cv, "nvme_connection");
	n = json_object_array_length(l);
	if (n && cv->a->ini->scan(cv->a, &ctrls, &err) < 0) {
		ln_cv_report(cv, "remove", "nvme_connection", "*", NULL, err.buf);
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(l, i);
		const char *id = ln_json_str_at(o, "id"), *host = ln_json_str_at(o, "hostnqn");
		char t[16], a[64], s[16], nqn[256];
		const struct ln_ctrl *c;
		int rc = 0;

		if (wanted_conn(cv, id))
			continue;
		ln_buf_reset(&err);
		if (split_conn_id(id, t, a, s, nqn) < 0 ||
		    !(c = find_ctrl(&ctrls, t, a, s, nqn, host))) {
			if (!cv->plan)
				ln_cv_disown(cv, "nvme_connection", id);
			continue;
		}
		if (!cv->plan)
			rc = ln_agent_change(cv->a, "disconnect") ?:
				cv->a->ini->disconnect(cv->a, c->name, &err);
		if (rc == 0 && !cv->plan)
			ln_cv_disown(cv, "nvme_connection", id);
		ln_cv_report(cv, "remove", "nvme_connection", id, c->name, rc < 0 ? err.buf : NULL);
	}
out:
	free(ctrls.v);
	json_object_put(l);
	ln_buf_release(&err);
}

/* Wait, bounded, for the namespace head of nqn; dev gets "/dev/nvme1n1". */
static int wait_block(struct ln_converge *cv, const char *nqn, char *dev, size_t size)
{
	const char *w = getenv("LLMNET_NS_WAIT");
	long limit_ms = (w && atoi(w) > 0 ? atoi(w) : 30) * 1000L, waited = 0;

	for (;;) {
		char **names;
		size_t n;

		if (ln_nvme_blocks(cv->a, nqn, &names, &n) == 0 && n) {
			snprintf(dev, size, "/dev/%s", names[0]);
			ln_names_free(names, n);
			return 0;
		}
		ln_names_free(names, n);
		if (waited >= limit_ms || ln_budget_left_ms() == 0)
			return -ETIMEDOUT;
		poll(NULL, 0, 100);
		waited += 100;
	}
}

/* Set one secret attribute of the live controller name when it differs;
 * *changed set. The kernel shows "none" for a secret it was not given. */
static int rekey_attr(struct ln_converge *cv, const char *name, const char *attr,
		      const char *want, int *changed, struct ln_buf *err)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "/sys/class/nvme/%s/%s", name, attr);
	if (!want)
		return 0;
	if (!ln_path_exists(cv->a, p)) {
		ln_buf_addf(err, "controller '%s' has no '%s': this kernel's host has no "
			    "DH-HMAC-CHAP (NVME_HOST_AUTH)", name, attr);
		return -EOPNOTSUPP;
	}
	{
		struct ln_buf cur = LN_BUF_INIT_SECRET;
		int same = ln_read_attr(cv->a, p, &cur) == 0 && !strcmp(cur.buf, want);
		int none = !strcmp(cur.buf, "none") || !cur.len;

		ln_buf_release(&cur);	/* wiped: the kernel's secret */
		if (same)
			return 0;
		if (none) {
			ln_buf_addf(err, "controller '%s' was connected without DH-HMAC-CHAP; the "
				    "kernel re-keys only an authenticated one: disconnect it "
				    "(teardown) and apply again", name);
			return -EINVAL;
		}
	}
	*changed = 1;
	return cv->plan ? 0 : ln_fs_write_attr(cv->a, p, want, err);
}

/*
 * Rotation in place: a live controller whose secrets differ from the
 * request's gets the new ones written to its sysfs attributes, which makes
 * the kernel re-authenticate it; the mount stays. Reported as a change of
 * nvme_dhchap_secret (never the secret).
 */
static void rekey(struct ln_converge *cv, const struct ln_req_init *in, const char *name,
		  const char *id)
{
	struct ln_buf err = LN_BUF_INIT;
	int changed = 0, rc;

	if (!in->secret)
		return;
	rc = rekey_attr(cv, name, "dhchap_secret", in->secret, &changed, &err);
	if (rc == 0)
		rc = rekey_attr(cv, name, "dhchap_ctrl_secret", in->ctrl_secret, &changed, &err);
	if (changed || rc < 0)
		ln_cv_report(cv, "change", "nvme_dhchap_secret", id,
			     changed ? "re-authenticate the live controller" : NULL,
			     rc < 0 ? err.buf : NULL);
	ln_buf_release(&err);
}

/*
 * The connection's queue settings. The ones asked for are recorded with
 * the connection, because the kernel may give fewer queues than asked (one
 * per CPU at most, the target's limit), so the live values cannot tell
 * whether the request changed. A changed nr_io_queues or queue_size only
 * a new connection takes: plan shows the change, and apply fails it,
 * saying how (a connection under a mount is never dropped on its own).
 * ctrl_loss_tmo and reconnect_delay the kernel changes live (sysfs).
 */
static const struct {
	const char *key;
	size_t off;
	int live;	/* 1: a sysfs attribute of the live controller */
	int dflt;	/* the kernel's value when not asked (nvme-fabrics) */
} queue_keys[] = {
	{ "nr_io_queues", offsetof(struct ln_req_init, nr_io_queues), 0, 0 },
	{ "queue_size", offsetof(struct ln_req_init, queue_size), 0, 0 },
	{ "ctrl_loss_tmo", offsetof(struct ln_req_init, ctrl_loss_tmo), 1, 600 },
	{ "reconnect_delay", offsetof(struct ln_req_init, reconnect_delay), 1, 10 },
};

static int queue_want(const struct ln_req_init *in, size_t k)
{
	return *(const int *)((const char *)in + queue_keys[k].off);
}

static void record_queues(struct json_object *rec, const struct ln_req_init *in)
{
	struct json_object *q = json_object_new_object();
	size_t k;

	for (k = 0; k < ARRAY_SIZE(queue_keys); k++)
		ln_json_add_i64(q, queue_keys[k].key, queue_want(in, k));
	json_object_object_del(rec, "queues");
	json_object_object_add(rec, "queues", q);
}

/* Write a live setting of controller name; "off" is how the kernel shows
 * a ctrl_loss_tmo of -1 (never give up). */
static int set_live(struct ln_converge *cv, const char *name, size_t k, int want,
		    struct ln_buf *err)
{
	char p[PATH_MAX], v[32];
	struct ln_buf cur = LN_BUF_INIT;
	int same;

	if (!want)
		want = queue_keys[k].dflt;
	snprintf(p, sizeof(p), "/sys/class/nvme/%s/%s", name, queue_keys[k].key);
	snprintf(v, sizeof(v), "%d", want);
	if (ln_read_attr(cv->a, p, &cur) < 0) {
		ln_buf_release(&cur);
		ln_buf_addf(err, "controller '%s' has no '%s': this kernel cannot change it on a "
			    "live connection; disconnect it (teardown) and apply again", name,
			    queue_keys[k].key);
		return -EOPNOTSUPP;
	}
	same = !strcmp(cur.buf, v) || (want == -1 && !strcmp(cur.buf, "off"));
	ln_buf_release(&cur);
	if (same || cv->plan)
		return 0;
	return ln_agent_change(cv->a, queue_keys[k].key) ?: ln_fs_write_attr(cv->a, p, v, err);
}

/*
 * Bring an owned live connection's settings to the request's; 1 when it
 * reported the connection (a change), 0 when it is as asked. A connection
 * llmnet did not make is left as it is; one recorded without settings
 * (by an older agent) gets the request's recorded.
 */
static int queues_converge(struct ln_converge *cv, const struct ln_req_init *in,
			   const char *name, const char *id)
{
	struct json_object *rec = ln_state_find(&cv->st, cv->cluster, "nvme_connection", id);
	struct json_object *had = ln_json_at(rec, "queues");
	struct ln_buf det = LN_BUF_INIT, err = LN_BUF_INIT;
	int rc = 0, reconnect = 0;
	size_t k;

	if (!rec || !ln_cv_owned(cv, "nvme_connection", id))
		return 0;
	for (k = 0; k < ARRAY_SIZE(queue_keys); k++) {
		int want = queue_want(in, k), old;
		struct json_object *v;

		if (!had || !json_object_object_get_ex(had, queue_keys[k].key, &v))
			continue;
		old = json_object_get_int(v);
		if (old == want)
			continue;
		ln_buf_addf(&det, "%s%s %d -> %d", det.len ? ", " : "", queue_keys[k].key, old,
			    want);
		if (!queue_keys[k].live)
			reconnect = 1;
		else if (rc == 0)
			rc = set_live(cv, name, k, want, &err);
	}
	if (!det.len && had) {
		ln_buf_release(&det);
		return 0;
	}
	if (reconnect && rc == 0) {
		ln_buf_addstr(&det, ": only a new connection takes it");
		if (!cv->plan) {
			ln_buf_addf(&err, "'%s' (%s) keeps the queues it was connected with; a new "
				    "nr_io_queues or queue_size needs a new connection: disconnect it "
				    "(llmnet teardown) and apply again", in->target, name);
			rc = -EBUSY;
		}
	}
	if (rc == 0 && !cv->plan) {
		record_queues(rec, in);
		cv->st.dirty = 1;
		rc = ln_state_save(cv->a, &cv->st, &err);
	}
	if (!det.len) {	/* recorded now, nothing to show */
		ln_buf_release(&det);
		ln_buf_release(&err);
		return 0;
	}
	ln_cv_report(cv, "change", "nvme_connection", id, det.buf, rc < 0 ? err.buf : NULL);
	ln_buf_release(&det);
	ln_buf_release(&err);
	return 1;
}

/* A connect with tls: tlshd must run here and the host's PSK for the
 * target be in the .nvme keyring (inserted now when it is not). A plan
 * before the host has its NQN can only say the key will be made. */
static int tls_key(struct ln_converge *cv, const struct ln_req_init *in, const char *hostnqn,
		   const char *id)
{
	struct ln_buf err = LN_BUF_INIT;
	int rc = ln_tls_ready(cv->a, !cv->plan || ln_module_loaded(cv->a, "nvme_tcp"), &err);

	if (rc < 0) {
		ln_cv_report(cv, "create", "nvme_connection", id, "tls", err.buf);
	} else if (!hostnqn[0]) {
		ln_cv_report(cv, "create", "tls_psk", in->target, "the host NQN's key", NULL);
	} else {
		rc = ln_tls_psk_apply(cv, hostnqn, in->target, in->psk);
		if (rc < 0)
			ln_cv_report(cv, "create", "nvme_connection", id, "tls",
				     "no TLS PSK in the .nvme keyring for this connect");
	}
	ln_buf_release(&err);
	return rc;
}

/* 1 when controller name runs over TLS: the kernel's tls_key attribute
 * names the PSK it negotiated (6.12; absent or empty without TLS). */
static int ctrl_uses_tls(struct ln_agent *a, const char *name)
{
	char p[PATH_MAX];
	struct ln_buf b = LN_BUF_INIT;
	int tls;

	snprintf(p, sizeof(p), "/sys/class/nvme/%s/tls_key", name);
	tls = ln_read_attr(a, p, &b) == 0 && b.len && strcmp(b.buf, "0");
	ln_buf_release(&b);
	return tls;
}

/*
 * A live connection whose TLS is not what the request asks is never "ok":
 * TLS is chosen at connect, so only a new connection changes it. Plan
 * shows the change; apply fails it with what to do, and leaves the
 * connection and its mount as they are. 1 when it reported.
 */
static int tls_differs(struct ln_converge *cv, const struct ln_req_init *in, const char *name,
		       const char *id)
{
	char det[96];
	struct ln_buf err = LN_BUF_INIT;

	if (ctrl_uses_tls(cv->a, name) == !!in->tls)
		return 0;
	snprintf(det, sizeof(det), "%s: tls %s -> %s: only a new connection takes it", name,
		 in->tls ? "none" : "required", in->tls ? "required" : "none");
	if (!cv->plan)
		ln_buf_addf(&err, "'%s' (%s) is connected %s TLS, and the request asks %s: "
			    "disconnect it (llmnet teardown) and apply again", in->target, name,
			    in->tls ? "without" : "with", in->tls ? "tls: required" : "none");
	ln_cv_report(cv, "change", "nvme_connection", id, det, err.len ? err.buf : NULL);
	ln_buf_release(&err);
	return 1;
}

/*
 * The connection's source (issue 27): the request's host_traddr (the
 * initiator's declared port on the target's rail) and, for tcp, the
 * netdev holding it here (host_iface), into iface; *src NULL when the
 * request names none (the route's). -ENOENT, with why in err, when no
 * netdev here holds the address: the connection would leave by another.
 */
static int conn_source(struct ln_converge *cv, const struct ln_req_init *in, const char **src,
		       char *iface, size_t size, struct ln_buf *err)
{
	*src = in->host_traddr;
	iface[0] = '\0';
	if (!in->host_traddr || strcmp(in->transport, "tcp"))
		return 0;
	if (ln_facts_addr_iface(cv->a, in->host_traddr, iface, size) == 0)
		return 0;
	ln_buf_addf(err, "no interface here holds the source address '%s' (this node's port on "
		    "the target's rail): the connection would leave by another port",
		    in->host_traddr);
	return -ENOENT;
}

/* "from ADDR (IFACE)" for reports; "" when the route picks. */
static void source_text(const char *src, const char *iface, char *out, size_t size)
{
	if (!src)
		out[0] = '\0';
	else if (iface[0])
		snprintf(out, size, " from %s (%s)", src, iface);
	else
		snprintf(out, size, " from %s", src);
}

/* One "KEY=VALUE" of the kernel's address attribute into out, "" none. */
static void address_field(const char *addr, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);
	const char *p = addr;

	out[0] = '\0';
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n > klen && !strncmp(p, key, klen) && p[klen] == '=')
			snprintf(out, size, "%.*s", (int)(n - klen - 1), p + klen + 1);
		p += n;
		if (*p == ',')
			p++;
	}
}

/*
 * A live connection bound elsewhere than the request asks is never "ok":
 * the source is chosen at connect, so only a new connection changes it.
 * The live source is the kernel's host_traddr= (and host_iface=) in the
 * controller's address attribute, else its src_addr= (tcp: where the
 * route sent it); neither: unbound. Plan shows the change; apply fails it
 * with what to do and leaves the connection as it is. 1 when it reported.
 */
static int source_differs(struct ln_converge *cv, const struct ln_req_init *in,
			  const char *name, const char *id)
{
	char p[PATH_MAX], have[64], have_if[32], want_if[32] = "", det[256];
	struct ln_buf addr = LN_BUF_INIT, err = LN_BUF_INIT;
	const char *src;

	if (!in->host_traddr)
		return 0;
	snprintf(p, sizeof(p), "/sys/class/nvme/%s/address", name);
	ln_read_attr(cv->a, p, &addr);
	address_field(addr.buf ? addr.buf : "", "host_traddr", have, sizeof(have));
	if (!have[0])
		address_field(addr.buf ? addr.buf : "", "src_addr", have, sizeof(have));
	address_field(addr.buf ? addr.buf : "", "host_iface", have_if, sizeof(have_if));
	ln_buf_release(&addr);
	(void)conn_source(cv, in, &src, want_if, sizeof(want_if), &err);
	ln_buf_reset(&err);
	if (!strcmp(have, src) && (!have_if[0] || !want_if[0] || !strcmp(have_if, want_if)))
		return 0;
	snprintf(det, sizeof(det), "%s: source %s%s%s%s -> %s: only a new connection takes it",
		 name, have[0] ? have : "the route's", have_if[0] ? " (" : "", have_if,
		 have_if[0] ? ")" : "", src);
	if (!cv->plan)
		ln_buf_addf(&err, "'%s' (%s) is not bound to %s, this node's port on the target's "
			    "rail: disconnect it (llmnet teardown) and apply again", in->target,
			    name, src);
	ln_cv_report(cv, "change", "nvme_connection", id, det, err.len ? err.buf : NULL);
	ln_buf_release(&err);
	return 1;
}

/*
 * A new connection: recorded as this cluster's first, then made. With
 * discovery, the target's discovery log is read first and the connect made
 * from its entry for the subsystem; a log that does not list it at the
 * declared transport, address and service fails the connection, and
 * nothing is recorded or connected (never a direct connect instead).
 */
static int connect_new(struct ln_converge *cv, const struct ln_req_init *in, const char *id,
		       const char *hostnqn, const char *hostid, char *name)
{
	struct ln_conn cn = {
		.subsysnqn = in->target, .transport = in->transport,
		.traddr = in->address, .trsvcid = in->service, .hostnqn = hostnqn,
		.hostid = hostid, .nr_io_queues = in->nr_io_queues,
		.queue_size = in->queue_size, .ctrl_loss_tmo = in->ctrl_loss_tmo,
		.reconnect_delay = in->reconnect_delay,
		.dhchap_secret = in->secret, .dhchap_ctrl_secret = in->ctrl_secret,
		.tls = in->tls,
	};
	struct ln_buf err = LN_BUF_INIT, det = LN_BUF_INIT, shown = LN_BUF_INIT;
	struct ln_disc_entry hit;
	struct json_object *rec;
	char iface[32], from[128];
	int rc = conn_source(cv, in, &cn.host_traddr, iface, sizeof(iface), &err);

	cn.host_iface = iface[0] ? iface : NULL;
	source_text(cn.host_traddr, iface, from, sizeof(from));
	if (rc == 0 && in->discovery) {
		rc = ln_disc_find(cv->a, &cn, &hit, &err);
		if (rc == 0) {
			/* the entry matched the declared place: connect from it */
			cn.transport = hit.transport;
			cn.traddr = hit.traddr;
			cn.trsvcid = hit.trsvcid;
			ln_buf_addf(&det, " (discovery log: port %u)", hit.portid);
		}
	}
	if (rc == 0)
		rc = ln_cv_own(cv, "nvme_connection", id);
	if (rc == 0) {
		rec = ln_state_find(&cv->st, cv->cluster, "nvme_connection", id);
		json_object_object_del(rec, "hostnqn");
		ln_json_add_str(rec, "hostnqn", hostnqn);
		record_queues(rec, in);
		cv->st.dirty = 1;
		rc = ln_state_save(cv->a, &cv->st, &err);
	}
	if (rc == 0)
		rc = ln_agent_change(cv->a, "connect") ?: cv->a->ini->connect(cv->a, &cn, name, &err);
	ln_buf_addf(&shown, "%s%s%s", name, from, det.buf);
	ln_cv_report(cv, "create", "nvme_connection", id, shown.buf, rc < 0 ? err.buf : NULL);
	ln_buf_release_all(&det, &err, &shown);
	return rc;
}

/* Plan's line for a connection to make: its source (or why it has none
 * here) and whether it goes through the discovery log. */
static void plan_create(struct ln_converge *cv, const struct ln_req_init *in, const char *id)
{
	struct ln_buf err = LN_BUF_INIT, det = LN_BUF_INIT;
	const char *src;
	char iface[32], from[128];

	if (conn_source(cv, in, &src, iface, sizeof(iface), &err) == 0) {
		source_text(src, iface, from, sizeof(from));
		ln_buf_addf(&det, "%s%s", from[0] ? from + 1 : "",
			    in->discovery ? (from[0] ? ", through the discovery log" :
					     "through the discovery log") : "");
	}
	ln_cv_report(cv, "create", "nvme_connection", id, det.len ? det.buf : NULL,
		     err.len ? err.buf : NULL);
	ln_buf_release_all(&det, &err);
}

/*
 * Before anything changes (modules, the host identity, a connect): the
 * mount point of every initiator not yet connected, by the checks that need
 * no device (ln_mount_precheck). One refused refuses the whole request's
 * initiators, each reported (one already connected as connected and left
 * as it is), so a bad mount point leaves the node as it was. A connected
 * one's mount is judged with its device later. 0 or -1.
 */
static int mounts_precheck(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	struct ln_ctrl_list ctrls = { 0 };
	struct ln_buf err = LN_BUF_INIT;
	size_t i;
	int bad = 0;

	if (cv->plan)
		return 0;	/* plan runs every check in ln_mount_apply, changing nothing */
	if (cv->a->ini->scan(cv->a, &ctrls, &err) < 0)
		ctrls.n = 0;	/* a failed scan is the main pass's to report */
	for (i = 0; i < rq->ninits; i++) {
		const struct ln_req_init *in = &rq->inits[i];

		if (in->mount_path && !find_ctrl(&ctrls, in->transport, in->address, in->service,
						 in->target, NULL) &&
		    ln_mount_precheck(cv, in) < 0)
			bad = 1;
	}
	for (i = 0; bad && i < rq->ninits; i++) {
		const struct ln_req_init *in = &rq->inits[i];
		const struct ln_ctrl *c = find_ctrl(&ctrls, in->transport, in->address,
						    in->service, in->target, NULL);
		char id[512];

		conn_id(id, sizeof(id), in);
		if (c)	/* already connected: said as it is, never "not connected" */
			ln_cv_report(cv, "ok", "nvme_connection", id, c->name,
				     "connected, left as it is: a mount point of this request is "
				     "refused, and llmnet changes no connection before every mount "
				     "point is known good");
		else
			ln_cv_report(cv, "create", "nvme_connection", id, NULL,
				     "not connected: a mount point of this request is refused, and "
				     "llmnet connects nothing before its mount point is known good");
	}
	free(ctrls.v);
	ln_buf_release(&err);
	return bad ? -1 : 0;
}

void ln_initiator_apply(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	struct ln_ctrl_list ctrls = { 0 };
	struct ln_buf err = LN_BUF_INIT;
	char hostnqn[256], hostid[64];
	size_t i;

	if (!rq->ninits || mounts_precheck(cv) < 0)
		return;
	for (i = 0; i < rq->ninits; i++) {
		const char *m = !strcmp(rq->inits[i].transport, "tcp") ? "nvme_tcp" : "nvme_rdma";

		ln_cv_module(cv, m);
	}
	if (ln_host_identity_ensure(cv, hostnqn, sizeof(hostnqn), hostid, sizeof(hostid)) < 0)
		goto out;
	ln_buf_reset(&err);
	if (cv->a->ini->scan(cv->a, &ctrls, &err) < 0) {
		ln_cv_report(cv, "create", "nvme_connection", "*", NULL, err.buf);
		goto out;
	}
	for (i = 0; i < rq->ninits; i++) {
		const struct ln_req_init *in = &rq->inits[i];
		const struct ln_ctrl *c;
		char id[512], name[32] = "", dev[64];
		int rc = 0;

		conn_id(id, sizeof(id), in);
		ln_buf_reset(&err);
		if (in->tls && tls_key(cv, in, hostnqn, id) < 0)
			continue;
		c = find_ctrl(&ctrls, in->transport, in->address, in->service, in->target,
			      hostnqn[0] ? hostnqn : NULL);
		if (c) {
			if (!tls_differs(cv, in, c->name, id) &&
			    !source_differs(cv, in, c->name, id) &&
			    !queues_converge(cv, in, c->name, id))
				ln_cv_report(cv, "ok", "nvme_connection", id, c->name, NULL);
			rekey(cv, in, c->name, id);
		} else if (!cv->plan) {
			rc = connect_new(cv, in, id, hostnqn, hostid, name);
		} else {
			plan_create(cv, in, id);
			if (in->mount_path)
				ln_mount_apply(cv, in, NULL);
			continue;
		}
		if (rc < 0)
			continue;
		if (wait_block(cv, in->target, dev, sizeof(dev)) < 0) {
			ln_buf_reset(&err);
			ln_buf_addf(&err, "no namespace block device for '%s' appeared in time "
				    "(LLMNET_NS_WAIT)", in->target);
			ln_cv_report(cv, "create", "nvme_namespace", id, NULL, err.buf);
			continue;
		}
		if (in->mount_path)
			ln_mount_apply(cv, in, dev);
	}
out:
	free(ctrls.v);
	ln_buf_release(&err);
}
