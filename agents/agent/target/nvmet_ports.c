// SPDX-License-Identifier: MIT
/*
 * nvmet ports: one per transport, address and service the targets use
 * (owned, an existing matching one shared, or a new id), their addr_*
 * attributes brought back when they drift, and the port links that
 * export each subsystem.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent/target/nvmet.h"
#include "agents/agent/kernel/paths.h"
#include "agents/agent/kernel/tlspsk.h"
#include "agents/agent/kernel/read.h"
#include "agents/agent/kernel/fs.h"
#include "common/json.h"
#include "common/log.h"

struct port_want {
	const char *transport, *address, *family, *service;
	int tls;	/* addr_tsas tls1.3, addr_treq required */
	char id[16];
	int used;	/* some target that is not failed uses it */
};

static int read_prefix(struct ln_agent *a, const char *path, const char *prefix)
{
	struct ln_buf b = LN_BUF_INIT;
	int eq = ln_read_attr(a, path, &b) == 0 && !strncmp(b.buf, prefix, strlen(prefix));

	ln_buf_release(&b);
	return eq;
}

static int port_matches(struct ln_agent *a, const char *id, const struct port_want *w)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), P_PORT "%s/addr_trtype", id);
	if (!ln_nvmet_read_eq(a, p, w->transport))
		return 0;
	snprintf(p, sizeof(p), P_PORT "%s/addr_traddr", id);
	if (!ln_nvmet_read_eq(a, p, w->address))
		return 0;
	snprintf(p, sizeof(p), P_PORT "%s/addr_trsvcid", id);
	return ln_nvmet_read_eq(a, p, w->service);
}

/* Choose the port for w: owned, else a matching existing one, else a new id. */
static void choose_port(struct ln_converge *cv, struct port_want *w, struct port_want *all, size_t nall,
			int *is_new)
{
	char tup[128], **ports;
	struct json_object *rec;
	size_t n, i;
	unsigned id;

	*is_new = 0;
	ln_nvmet_tuple(tup, sizeof(tup), w->transport, w->address, w->service);
	rec = ln_state_find(&cv->st, cv->cluster, "nvmet_port", tup);
	if (rec && ln_json_str_at(rec, "port")) {
		snprintf(w->id, sizeof(w->id), "%s", ln_json_str_at(rec, "port"));
		return;
	}
	if (ln_list_dir(cv->a, LN_NVMET "/ports", &ports, &n) == 0) {
		for (i = 0; i < n; i++) {
			if (port_matches(cv->a, ports[i], w)) {
				snprintf(w->id, sizeof(w->id), "%s", ports[i]);
				ln_names_free(ports, n);
				return;
			}
		}
		ln_names_free(ports, n);
	}
	for (id = 1; id < 65535; id++) {
		char p[PATH_MAX], s[16];
		size_t k;
		int taken;

		snprintf(s, sizeof(s), "%u", id);
		snprintf(p, sizeof(p), P_PORT "%s", s);
		taken = ln_path_exists(cv->a, p);
		for (k = 0; k < nall && !taken; k++)
			taken = !strcmp(all[k].id, s);
		if (!taken) {
			snprintf(w->id, sizeof(w->id), "%s", s);
			*is_new = 1;
			return;
		}
	}
}

/*
 * A port this cluster did not make is used as it is: it must already ask
 * for TLS exactly when its targets do, or a tls target would be exported
 * in clear (and a plain one behind TLS). On a mismatch no target is
 * linked to it.
 */
static void use_foreign_port(struct ln_converge *cv, struct port_want *w, const char *tup,
			     const char *dir)
{
	struct ln_buf err = LN_BUF_INIT, tsas = LN_BUF_INIT, treq = LN_BUF_INIT;
	char p[PATH_MAX];
	int tls, req;

	snprintf(p, sizeof(p), "%s/addr_tsas", dir);
	tls = read_prefix(cv->a, p, "tls");
	if (ln_read_attr(cv->a, p, &tsas) != 0)
		ln_buf_addf(&tsas, "?");
	snprintf(p, sizeof(p), "%s/addr_treq", dir);
	req = ln_nvmet_read_eq(cv->a, p, "required");
	if (ln_read_attr(cv->a, p, &treq) != 0)
		ln_buf_addf(&treq, "?");
	ln_buf_rtrim(&tsas);
	ln_buf_rtrim(&treq);
	/* a tls target needs addr_treq "required": with "not required" the
	 * kernel also takes a plain connect; a plain target never goes
	 * behind TLS */
	if (!strcmp(w->transport, "tcp") && (w->tls ? !(tls && req) : tls)) {
		ln_buf_addf(&err, "port %s for %s is not this cluster's and %s TLS (addr_tsas "
			    "'%s', addr_treq '%s') while the targets on it %s: give them another "
			    "address or service", w->id, tup,
			    w->tls ? "does not require" : "requires", tsas.buf, treq.buf,
			    w->tls ? "ask tls: required" : "do not");
		ln_cv_report(cv, "create", "nvmet_port", tup, NULL, err.buf);
		w->id[0] = '\0';
	} else {
		snprintf(p, sizeof(p), "port %s", w->id);
		ln_cv_report(cv, "ok", "nvmet_port", tup, p, NULL);
	}
	ln_buf_release(&err);
	ln_buf_release(&tsas);
	ln_buf_release(&treq);
}

/*
 * The links on port w (tuple tup) this cluster does not own: another
 * cluster's or the operator's subsystem. Its address attributes are not
 * changed under them (a tls subsystem would end up exported in clear):
 * -EBUSY with err naming each and its owner, else 0.
 */
static int foreign_links(struct ln_converge *cv, const struct port_want *w, const char *tup,
			 char **links, size_t nl, struct ln_buf *err)
{
	char id[1024];
	size_t i, n = 0;

	for (i = 0; i < nl; i++) {
		const char *other;

		snprintf(id, sizeof(id), "%s/%s", tup, links[i]);
		if (ln_cv_owned(cv, "nvmet_port_subsystem", id))
			continue;
		other = ln_state_other_owner(&cv->st, cv->cluster, "nvmet_port_subsystem", id);
		if (!n++)
			ln_buf_addf(err, "port %s for %s has to change its address attributes, but "
				    "subsystems this cluster does not own are linked to it: ", w->id,
				    tup);
		else
			ln_buf_addf(err, ", ");
		if (other)
			ln_buf_addf(err, "'%s' (cluster '%s')", links[i], other);
		else
			ln_buf_addf(err, "'%s' (not llmnet's)", links[i]);
	}
	if (!n)
		return 0;
	ln_buf_addf(err, "; nothing changed: give the targets another address or service");
	return -EBUSY;
}

/*
 * The kernel refuses addr_* while a subsystem is linked: unlink this
 * cluster's links, set the attributes, link them back. On a failure the
 * attributes changed are set back and the links made again (only when
 * every attribute is back: a tls subsystem never goes on a port half
 * changed). 0 or negative with err.
 */
static int rewrite_port(struct ln_converge *cv, const char *dir, const char *const *attrs,
			const char *const *vals, size_t nattrs, char **links, size_t nl,
			struct ln_buf *err)
{
	struct ln_buf old[6] = { LN_BUF_INIT, LN_BUF_INIT, LN_BUF_INIT,
				 LN_BUF_INIT, LN_BUF_INIT, LN_BUF_INIT };
	struct ln_buf e2 = LN_BUF_INIT;
	char q[PATH_MAX], t[PATH_MAX];
	size_t i, unlinked = 0, set = 0;
	unsigned unread = 0;
	int rc = 0, back = 0;

	for (i = 0; i < nattrs; i++) {
		snprintf(q, sizeof(q), "%s/%s", dir, attrs[i]);
		if (ln_read_attr(cv->a, q, &old[i]) < 0)
			unread |= 1u << i;
	}
	for (; rc == 0 && unlinked < nl; unlinked++) {
		snprintf(q, sizeof(q), "%s/subsystems/%s", dir, links[unlinked]);
		rc = ln_fs_unlink(cv->a, q, err);
		if (rc < 0)
			break;
	}
	for (; rc == 0 && set < nattrs; set++) {
		snprintf(q, sizeof(q), "%s/%s", dir, attrs[set]);
		if (!ln_nvmet_read_eq(cv->a, q, vals[set]))
			rc = ln_fs_write_attr(cv->a, q, vals[set], err);
	}
	if (rc < 0) {
		/* set back what was written (the one that failed too) */
		for (i = 0; i < nattrs; i++) {
			snprintf(q, sizeof(q), "%s/%s", dir, attrs[i]);
			if (ln_nvmet_read_eq(cv->a, q, old[i].buf))
				continue;
			if (unread & (1u << i)) {
				ln_buf_addf(&e2, "%s%s unread", e2.len ? ", " : "", attrs[i]);
				back = -1;
			} else if (ln_fs_write_attr(cv->a, q, old[i].buf, &e2) < 0) {
				back = -1;
			}
		}
		if (back < 0)
			ln_buf_addf(err, "; the port's attributes could not be set back (%s), so "
				    "its %zu link(s) stay removed", e2.buf, unlinked);
	}
	for (i = 0; back == 0 && i < unlinked; i++) {
		int r;

		snprintf(q, sizeof(q), "%s/subsystems/%s", dir, links[i]);
		snprintf(t, sizeof(t), P_SUB "%s", links[i]);
		ln_buf_reset(&e2);
		r = ln_fs_symlink(cv->a, t, q, &e2);
		if (r < 0 && rc == 0)
			rc = r;
		if (r < 0)
			ln_buf_addf(err, "%s%s", err->len ? "; " : "", e2.buf);
	}
	for (i = 0; i < 6; i++)
		ln_buf_release(&old[i]);
	ln_buf_release(&e2);
	return rc;
}

static void apply_port(struct ln_converge *cv, struct port_want *w, struct port_want *all, size_t nall)
{
	static const char *const attrs[] = { "addr_trtype", "addr_adrfam", "addr_traddr",
					     "addr_trsvcid", "addr_tsas", "addr_treq" };
	struct ln_buf err = LN_BUF_INIT, det = LN_BUF_INIT;
	char tup[128], dir[PATH_MAX], p[PATH_MAX], **links = NULL;
	const char *vals[6];
	size_t nl = 0, i, nattrs = 4;
	int rc = 0, is_new, owned, differs = 0;
	struct json_object *rec;

	ln_nvmet_tuple(tup, sizeof(tup), w->transport, w->address, w->service);
	choose_port(cv, w, all, nall, &is_new);
	snprintf(dir, sizeof(dir), P_PORT "%s", w->id);
	owned = ln_cv_owned(cv, "nvmet_port", tup);
	vals[0] = w->transport;
	vals[1] = w->family;
	vals[2] = w->address;
	vals[3] = w->service;
	/* TLS: set after addr_trtype (the kernel takes addr_tsas on a tcp
	 * port only) and while no subsystem is linked; a port that had TLS
	 * and no longer should is set back to none / not specified */
	vals[4] = w->tls ? "tls1.3" : "none";
	vals[5] = w->tls ? "required" : "not specified";
	snprintf(p, sizeof(p), "%s/addr_tsas", dir);
	if (w->tls || (!strcmp(w->transport, "tcp") && read_prefix(cv->a, p, "tls")))
		nattrs = 6;
	snprintf(p, sizeof(p), "port %s", w->id);
	if (!ln_is_dir(cv->a, dir)) {
		if (!cv->plan) {
			rc = ln_cv_own(cv, "nvmet_port", tup);
			rec = ln_state_find(&cv->st, cv->cluster, "nvmet_port", tup);
			if (rc == 0 && !ln_json_str_at(rec, "port")) {
				ln_json_add_str(rec, "port", w->id);
				cv->st.dirty = 1;
				rc = ln_state_save(cv->a, &cv->st, &err);
			}
			if (rc == 0)
				rc = ln_fs_mkdir(cv->a, dir, &err);
			for (i = 0; rc == 0 && i < nattrs; i++) {
				char q[PATH_MAX];

				snprintf(q, sizeof(q), "%s/%s", dir, attrs[i]);
				rc = ln_fs_write_attr(cv->a, q, vals[i], &err);
			}
		}
		if (w->tls)
			snprintf(p, sizeof(p), "port %s, tls1.3 required", w->id);
		ln_cv_report(cv, "create", "nvmet_port", tup, p, rc < 0 ? err.buf : NULL);
		goto out;
	}
	if (!owned) {
		use_foreign_port(cv, w, tup, dir);
		goto out;
	}
	for (i = 0; i < nattrs; i++) {
		char q[PATH_MAX];

		snprintf(q, sizeof(q), "%s/%s", dir, attrs[i]);
		if (!ln_nvmet_read_eq(cv->a, q, vals[i])) {
			differs = 1;
			ln_buf_addf(&det, "%s%s -> %s", det.len ? ", " : "", attrs[i], vals[i]);
		}
	}
	if (!differs) {
		ln_cv_report(cv, "ok", "nvmet_port", tup, p, NULL);
		goto out;
	}
	snprintf(p, sizeof(p), "%s/subsystems", dir);
	ln_list_dir(cv->a, p, &links, &nl);
	rc = foreign_links(cv, w, tup, links, nl, &err);
	if (rc == 0 && !cv->plan)
		rc = rewrite_port(cv, dir, attrs, vals, nattrs, links, nl, &err);
	ln_cv_report(cv, "change", "nvmet_port", tup, det.buf, rc < 0 ? err.buf : NULL);
out:
	ln_names_free(links, nl);
	ln_buf_release(&err);
	ln_buf_release(&det);
}

/* The index of the port serving t's transport, address and service, or np. */
static size_t find_port(const struct port_want *ports, size_t np, const struct ln_req_target *t)
{
	size_t k;

	for (k = 0; k < np; k++)
		if (!strcmp(ports[k].transport, t->transport) &&
		    !strcmp(ports[k].address, t->address) && !strcmp(ports[k].service, t->service))
			break;
	return k;
}


/* The ports the targets that are not failed use, then their links to the
 * subsystems, last: a link is what exports a subsystem. */
void ln_nvmet_apply_ports(struct ln_converge *cv)
{
	struct ln_request *rq = cv->rq;
	struct port_want *ports = NULL;
	size_t np = 0, i, k;
	char p[PATH_MAX], t2[PATH_MAX], id[1024];

	ports = calloc(rq->ntargets + 1, sizeof(*ports));
	if (!ports)
		return;
	for (i = 0; i < rq->ntargets; i++) {
		struct ln_req_target *t = &rq->targets[i];

		k = find_port(ports, np, t);
		if (k == np) {
			ports[np].transport = t->transport;
			ports[np].address = t->address;
			ports[np].family = t->family;
			ports[np].service = t->service;
			ports[np].tls = t->tls;
			np++;
		}
		if (!t->failed)
			ports[k].used = 1;
	}
	for (k = 0; k < np; k++)
		if (ports[k].used)
			apply_port(cv, &ports[k], ports, np);
	/* port links, last: this is what exports a subsystem */
	for (i = 0; i < rq->ntargets; i++) {
		struct ln_req_target *t = &rq->targets[i];
		char tup[128];

		if (t->failed)
			continue;
		k = find_port(ports, np, t);
		if (k == np || !ports[k].id[0])
			continue;
		ln_nvmet_tuple(tup, sizeof(tup), t->transport, t->address, t->service);
		snprintf(id, sizeof(id), "%s/%s", tup, t->nqn);
		snprintf(p, sizeof(p), P_PORT "%s/subsystems/%s", ports[k].id, t->nqn);
		snprintf(t2, sizeof(t2), P_SUB "%s", t->nqn);
		if (ln_is_link(cv->a, p))
			ln_cv_report(cv, "ok", "nvmet_port_subsystem", id, NULL, NULL);
		else
			ln_nvmet_create_link(cv, "nvmet_port_subsystem", id, t2, p, ports[k].id);
	}
	free(ports);
}
