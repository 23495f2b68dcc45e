/* SPDX-License-Identifier: MIT */
/*
 * Desired state per node and the read-only plan. The controller owns every
 * cross-node fact (who may connect to whom, who is in the hostfile); each
 * agent gets only its own node's slice and works out the delta itself.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/json.h"
#include "common/log.h"
#include "orchestrator/run/facts.h"
#include "orchestrator/run/nsident.h"
#include "orchestrator/run/plan.h"
#include "orchestrator/transport/answer.h"
#include "orchestrator/transport/fanout.h"
#include "orchestrator/validate/rails.h"

int ln_plan_check_duplicates(const struct ln_run *r, struct ln_buf *err)
{
	size_t i, j;
	int found = 0;

	for (i = 0; i < r->n; i++) {
		const char *a = r->nodes[i].state == LN_NODE_OK ? ln_facts_host_nqn(&r->nodes[i]) : NULL;

		if (!a)
			continue;
		for (j = i + 1; j < r->n; j++) {
			const char *b = r->nodes[j].state == LN_NODE_OK ? ln_facts_host_nqn(&r->nodes[j]) : NULL;

			if (b && !strcmp(a, b)) {
				ln_buf_addf(err, "%snodes '%s' and '%s' report the same host NQN '%s' "
					    "(a cloned image?); give one a new /etc/nvme/hostnqn and hostid",
					    found ? "\n" : "", r->nodes[i].spec->name,
					    r->nodes[j].spec->name, a);
				found = 1;
			}
		}
	}
	return found ? -LN_ECONFLICT : 0;
}

unsigned ln_plan_roles(const struct ln_spec *spec, size_t i)
{
	unsigned roles = 0;
	size_t k;

	for (k = 0; k < spec->n_targets && !(roles & LN_ROLE_TARGET); k++)
		if (spec->targets[k].node == i)
			roles |= LN_ROLE_TARGET;
	for (k = 0; k < spec->n_initiators && !(roles & LN_ROLE_INITIATOR); k++)
		if (spec->initiators[k].node == i)
			roles |= LN_ROLE_INITIATOR;
	return roles;
}

/* Host NQNs of nodes that answered this run: these speak for themselves. */
static int claimed_by_reachable(const struct ln_run *r, const char *nqn)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		const char *h = r->nodes[i].state == LN_NODE_OK ? ln_facts_host_nqn(&r->nodes[i]) : NULL;

		if (h && !strcmp(h, nqn))
			return 1;
	}
	return 0;
}

/* The subsystem entry for nqn in a target node's facts. */
static struct json_object *facts_subsystem(const struct ln_node_run *nr, const char *nqn)
{
	struct json_object *subs = ln_json_at(ln_json_at(nr->facts, "nvmet"), "subsystems");
	size_t i;

	for (i = 0; subs && json_object_is_type(subs, json_type_array) &&
		    i < json_object_array_length(subs); i++) {
		struct json_object *s = json_object_array_get_idx(subs, i);
		const char *n = ln_json_str_at(s, "nqn");

		if (n && !strcmp(n, nqn))
			return s;
	}
	return NULL;
}

static int array_has_str(struct json_object *arr, const char *s)
{
	size_t i;

	for (i = 0; i < json_object_array_length(arr); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s))
			return 1;
	return 0;
}

static struct json_object *target_hosts(const struct ln_run *r, const struct ln_target *t,
					struct ln_buf *notes)
{
	const struct ln_node_run *tn = &r->nodes[t->node];
	struct json_object *hosts = json_object_new_array(), *sub, *allowed;
	size_t h, k;

	for (h = 0; h < t->n_hosts; h++) {
		const struct ln_node_run *hn = &r->nodes[t->hosts[h]];
		const char *nqn;

		if (hn->state == LN_NODE_OK) {
			nqn = ln_facts_host_nqn(hn);
			if (nqn && !array_has_str(hosts, nqn))
				json_object_array_add(hosts, json_object_new_string(nqn));
			continue;
		}
		/* Unreachable: keep what the target has on record for it. We
		 * cannot tell which recorded NQN was this node's, so every
		 * allowed NQN no reachable node claims is kept: access is
		 * never revoked on the word of a silent node. */
		sub = facts_subsystem(tn, t->nqn);
		allowed = ln_json_at(sub, "allowed_hosts");
		for (k = 0; allowed && json_object_is_type(allowed, json_type_array) &&
			    k < json_object_array_length(allowed); k++) {
			const char *a = json_object_get_string(json_object_array_get_idx(allowed, k));

			if (claimed_by_reachable(r, a) || array_has_str(hosts, a))
				continue;
			json_object_array_add(hosts, json_object_new_string(a));
			if (notes)
				ln_buf_addf(notes, "= nvmet_allowed_host %s/%s  blocked: unreachable ('%s' kept)\n",
					    t->nqn, a, hn->spec->name);
		}
	}
	return hosts;
}

/* The host node whose secret keys host NQN nqn of target t: the node that
 * reports it (live, or in its last-known facts when silent), else the one
 * silent host of t if there is exactly one; -1 when no node can be told. */
static long key_owner(const struct ln_run *r, const struct ln_target *t, const char *nqn)
{
	long silent = -1;
	size_t h, n_silent = 0;

	for (h = 0; h < t->n_hosts; h++) {
		const struct ln_node_run *hn = &r->nodes[t->hosts[h]];
		const char *q = ln_facts_host_nqn(hn);

		if (q && !strcmp(q, nqn))
			return (long)t->hosts[h];
		if (hn->state != LN_NODE_OK && !q) {	/* known NQN: not this one's */
			silent = (long)t->hosts[h];
			n_silent++;
		}
	}
	return n_silent == 1 ? silent : -1;
}

/*
 * The target's dhchap entry: hash, group and one key per allowed host.
 * An allowed NQN kept for a silent host that no node can be told to own
 * is dropped from *hosts (a host entry without its secret would be open
 * or refused at random), with a note. NULL when a needed secret was not
 * loaded (a caller that skipped ln_secrets_load()) or on -ENOMEM.
 */
static struct json_object *target_dhchap(const struct ln_run *r, const struct ln_target *t,
					 struct json_object **hosts, struct ln_buf *notes)
{
	struct json_object *d = json_object_new_object(), *keys = json_object_new_array(),
			   *kept = json_object_new_array();
	size_t k;

	if (!d || !keys || !kept)
		goto fail;
	for (k = 0; k < json_object_array_length(*hosts); k++) {
		const char *nqn = json_object_get_string(json_object_array_get_idx(*hosts, k));
		long owner = key_owner(r, t, nqn);
		const struct ln_secret *s;
		struct json_object *e;

		if (owner < 0) {
			if (notes)
				ln_buf_addf(notes, "= nvmet_host_key %s/%s  blocked: unreachable "
					    "(no node can be told to own it, so no secret)\n", t->nqn, nqn);
			continue;
		}
		s = ln_secrets_find(r->secrets, t->node, (size_t)owner);
		if (!s || (t->dhchap.bidirectional && !s->ctrl_key[0]) || (t->tls && !s->psk[0]))
			goto fail;
		e = json_object_new_object();
		ln_json_add_str(e, "host", nqn);
		ln_json_add_str(e, "key", s->key);
		if (t->dhchap.bidirectional)
			ln_json_add_str(e, "ctrl_key", s->ctrl_key);
		if (t->tls)
			ln_json_add_str(e, "psk", s->psk);
		json_object_array_add(keys, e);
		json_object_array_add(kept, json_object_new_string(nqn));
	}
	ln_json_add_str(d, "hash", ln_dhchap_hash_names[t->dhchap.hash]);
	ln_json_add_str(d, "dhgroup", ln_dhchap_group_names[t->dhchap.dhgroup]);
	ln_json_add(d, "keys", keys);
	json_object_put(*hosts);
	*hosts = kept;
	return d;
fail:
	json_object_put(d);
	json_object_put(keys);
	json_object_put(kept);
	return NULL;
}

/* The initiator's dhchap entry: its host secret for the target's node
 * (and the controller's when bidirectional); NULL as above. */
static struct json_object *initiator_dhchap(const struct ln_run *r, const struct ln_initiator *in,
					    const struct ln_target *tg)
{
	const struct ln_secret *s = ln_secrets_find(r->secrets, tg->node, in->node);
	struct json_object *d;

	if (!s || (tg->dhchap.bidirectional && !s->ctrl_key[0]) || (tg->tls && !s->psk[0]))
		return NULL;
	d = json_object_new_object();
	ln_json_add_str(d, "secret", s->key);
	if (tg->dhchap.bidirectional)
		ln_json_add_str(d, "ctrl_secret", s->ctrl_key);
	if (tg->tls)
		ln_json_add_str(d, "psk", s->psk);
	return d;
}

/* Is node i connected to target t right now (per its facts)? */
static int connected_now(const struct ln_node_run *nr, const struct ln_target *t)
{
	struct json_object *nvme = ln_json_at(nr->facts, "nvme");
	size_t i;

	for (i = 0; nvme && json_object_is_type(nvme, json_type_array) &&
		    i < json_object_array_length(nvme); i++) {
		const char *s = ln_json_str_at(json_object_array_get_idx(nvme, i), "subsysnqn");

		if (s && !strcmp(s, t->nqn))
			return 1;
	}
	return 0;
}

/* The request's entry for a target the node exports. */
static struct json_object *target_request(const struct ln_run *r, const struct ln_target *tg,
					  struct ln_buf *notes)
{
	struct json_object *o = json_object_new_object(), *nss = json_object_new_array();
	char serial[LN_SERIAL_LEN + 1], uuid[LN_UUID_LEN + 1], nguid[LN_UUID_LEN + 1];
	size_t k;

	ln_json_add_str(o, "nqn", tg->nqn);
	ln_json_add_str(o, "transport", ln_transport_name(tg->transport));
	ln_json_add_str(o, "address", tg->address);
	ln_json_add_i64(o, "service", tg->service);
	/* stable identity: the same on every apply and after a reboot */
	ln_nsident_serial(r->spec->cluster, tg->nqn, serial);
	ln_json_add_str(o, "serial", serial);
	if (tg->tls)
		ln_json_add_str(o, "tls", "required");
	if (tg->hosts_any) {
		ln_json_add_str(o, "hosts", "any");
	} else {
		struct json_object *hosts = target_hosts(r, tg, notes), *d = NULL;

		if (tg->dhchap.present) {
			d = target_dhchap(r, tg, &hosts, notes);
			if (!d) {
				json_object_put(hosts);
				json_object_put(o);
				json_object_put(nss);
				return NULL;
			}
		}
		ln_json_add(o, "hosts", hosts);
		if (d)
			ln_json_add(o, "dhchap", d);
	}
	for (k = 0; k < tg->n_namespaces; k++) {
		const struct ln_namespace *ns = &tg->namespaces[k];
		struct json_object *n = json_object_new_object();

		ln_json_add_i64(n, "nsid", ns->nsid);
		ln_nsident_ns(r->spec->cluster, tg->nqn, ns->nsid, uuid, nguid);
		ln_json_add_str(n, "uuid", uuid);
		ln_json_add_str(n, "nguid", nguid);
		if (ns->file) {
			ln_json_add_str(n, "file", ns->file);
			ln_json_add_i64(n, "size", (int64_t)ns->size);
			if (ns->adopt)
				ln_json_add_bool(n, "adopt", 1);
		} else {
			const char *node = r->spec->nodes[tg->node].name;
			struct ln_buf ref = LN_BUF_INIT;

			ln_json_add_str(n, "device", ns->device);
			/* how --accept-device names it, for the agent's refusal */
			if (ln_buf_addf(&ref, "%s:%s", node, ns->device) == 0)
				ln_json_add_str(n, "device_ref", ref.buf);
			ln_buf_release(&ref);
			if (ln_nsident_accepted(r->accept_device, r->n_accept_device, node,
						ns->device))
				ln_json_add_bool(n, "accept_device", 1);
		}
		json_object_array_add(nss, n);
	}
	ln_json_add(o, "namespaces", nss);
	return o;
}

/* Whether numeric addresses a and b are one address of one family. */
static int same_addr(const char *a, const char *b)
{
	unsigned char x[16], y[16];
	int fam = strchr(a, ':') ? AF_INET6 : AF_INET;

	return (strchr(b, ':') ? AF_INET6 : AF_INET) == fam && inet_pton(fam, a, x) == 1 &&
	       inet_pton(fam, b, y) == 1 && !memcmp(x, y, fam == AF_INET ? 4 : 16);
}

/*
 * The source in's connection to tg is bound to (issue 27): the initiator
 * node's declared port on the rail of the target's address (the target
 * node's port holding it), its ip when of the address's family. NULL
 * (the route's, as before) when the address is on no declared port or
 * the initiator's node has no port on that rail.
 */
const char *ln_plan_initiator_source(const struct ln_spec *sp, const struct ln_initiator *in,
				     const struct ln_target *tg)
{
	const struct ln_node *tn = &sp->nodes[tg->node], *hn = &sp->nodes[in->node];
	struct ln_railmap m = LN_RAILMAP_INIT;
	struct ln_buf err = LN_BUF_INIT;
	const char *src = NULL;
	int rail = -1, p;
	size_t k;

	if (!tg->address || ln_railmap_from_spec(sp, &m, &err) < 0)
		goto out;
	for (k = 0; k < tn->n_rdma && rail < 0; k++)
		if (tn->rdma[k].ip && same_addr(tn->rdma[k].ip, tg->address))
			rail = ln_railmap_rail_of(&m, tg->node, (unsigned)k);
	p = rail >= 0 ? m.port[in->node * m.nrails + (size_t)rail] : -1;
	if (p >= 0 && hn->rdma[p].ip && (strchr(hn->rdma[p].ip, ':') != NULL) ==
					    (strchr(tg->address, ':') != NULL))
		src = hn->rdma[p].ip;
out:
	ln_railmap_release(&m);
	ln_buf_release(&err);
	return src;
}

/* The request's entry for initiator in, which connects to tg. */
static struct json_object *initiator_request(const struct ln_run *r, const struct ln_initiator *in,
					     const struct ln_target *tg)
{
	struct json_object *o = json_object_new_object();
	const char *src;

	if (tg->dhchap.present) {
		struct json_object *d = initiator_dhchap(r, in, tg);

		if (!d) {
			json_object_put(o);
			return NULL;
		}
		ln_json_add(o, "dhchap", d);
	}

	ln_json_add_str(o, "target", tg->nqn);
	ln_json_add_str(o, "transport", ln_transport_name(tg->transport));
	ln_json_add_str(o, "address", tg->address);
	ln_json_add_i64(o, "service", tg->service);
	src = ln_plan_initiator_source(r->spec, in, tg);
	if (src)	/* absent: the route's, as an older agent connects */
		ln_json_add_str(o, "host_traddr", src);
	if (tg->tls)
		ln_json_add_str(o, "tls", "required");
	if (in->discovery)
		ln_json_add_bool(o, "discovery", 1);
	if (in->nr_io_queues || in->queue_size || in->ctrl_loss_tmo_ms >= 0 ||
	    in->reconnect_delay_ms >= 0) {
		struct json_object *q = json_object_new_object();

		if (in->nr_io_queues)
			ln_json_add_i64(q, "nr_io_queues", in->nr_io_queues);
		if (in->queue_size)
			ln_json_add_i64(q, "queue_size", in->queue_size);
		if (in->ctrl_loss_tmo_ms >= 0)
			ln_json_add_i64(q, "ctrl_loss_tmo", in->ctrl_loss_tmo_ms / 1000);
		if (in->reconnect_delay_ms >= 0)
			ln_json_add_i64(q, "reconnect_delay", in->reconnect_delay_ms / 1000);
		ln_json_add(o, "queues", q);
	}
	if (in->mount.present) {
		struct json_object *m = json_object_new_object();

		ln_json_add_str(m, "path", in->mount.path);
		ln_json_add_str(m, "fs", in->mount.fs);
		ln_json_add_str(m, "format",
				in->mount.format == LN_FORMAT_IF_BLANK ? "if-blank" : "never");
		/* sent only when asked: an older agent refuses the key */
		if (in->mount.exec)
			ln_json_add_bool(m, "exec", 1);
		ln_json_add(o, "mount", m);
	}
	return o;
}

/* Every node gets the hostfile, listing every node of the spec. */
static void hostfile_request(const struct ln_spec *spec, struct json_object *hf,
			     struct json_object *lines)
{
	size_t k;

	ln_json_add_str(hf, "path", spec->mpi.hostfile ? spec->mpi.hostfile : "/etc/llmnet/hostfile");
	ln_json_add_str(hf, "format", spec->mpi.format == LN_MPI_MPICH ? "mpich" : "openmpi");
	for (k = 0; k < spec->n_nodes; k++) {
		struct json_object *l = json_object_new_object();

		ln_json_add_str(l, "name", spec->nodes[k].name);
		ln_json_add_i64(l, "slots", spec->nodes[k].slots ? spec->nodes[k].slots : 1);
		json_object_array_add(lines, l);
	}
	ln_json_add(hf, "lines", lines);
}

struct json_object *ln_plan_request(const struct ln_run *r, size_t i, enum ln_plan_phase phase,
				    struct ln_buf *notes)
{
	const struct ln_spec *spec = r->spec;
	struct json_object *req = json_object_new_object(), *targets = json_object_new_array(),
			   *inits = json_object_new_array(), *hf = json_object_new_object(),
			   *lines = json_object_new_array();
	size_t t, k;

	if (!req || !targets || !inits || !hf || !lines)
		goto nomem;
	ln_json_add_i64(req, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(req, "cluster", spec->cluster);
	/* missing is false to the agent: a request without it reads as before */
	if (spec->persist)
		ln_json_add_bool(req, "persist", 1);
	for (t = 0; t < spec->n_targets; t++) {
		struct json_object *o;

		if (spec->targets[t].node != i)
			continue;
		o = target_request(r, &spec->targets[t], notes);
		if (!o)
			goto nomem;
		json_object_array_add(targets, o);
	}
	for (k = 0; k < spec->n_initiators; k++) {
		const struct ln_initiator *in = &spec->initiators[k];
		const struct ln_target *tg = &spec->targets[in->target];
		struct json_object *o;

		if (in->node != i)
			continue;
		/* In the targets phase, an initiator of another node's target
		 * is only carried along when it already exists: leaving it out
		 * would disconnect it, adding it would race that target. */
		if (phase == LN_PHASE_TARGETS && tg->node != i && !connected_now(&r->nodes[i], tg))
			continue;
		o = initiator_request(r, in, tg);
		if (!o)
			goto nomem;
		json_object_array_add(inits, o);
	}
	ln_json_add(req, "targets", targets);
	ln_json_add(req, "initiators", inits);
	hostfile_request(spec, hf, lines);
	ln_json_add(req, "hostfile", hf);
	return req;
nomem:
	json_object_put(req);
	json_object_put(targets);
	json_object_put(inits);
	json_object_put(hf);
	json_object_put(lines);
	return NULL;
}

void ln_plan_count(struct json_object *answer, int *create, int *change, int *remove, int *ok,
		   int *error)
{
	struct json_object *ch = ln_json_at(answer, "changes");
	size_t i;

	*create = *change = *remove = *ok = *error = 0;
	for (i = 0; ch && json_object_is_type(ch, json_type_array) && i < json_object_array_length(ch); i++) {
		struct json_object *c = json_object_array_get_idx(ch, i);
		const char *a = ln_json_str_at(c, "action");

		if (ln_json_at(c, "error"))
			(*error)++;
		else if (!a)
			continue;
		else if (!strcmp(a, "create"))
			(*create)++;
		else if (!strcmp(a, "change"))
			(*change)++;
		else if (!strcmp(a, "remove"))
			(*remove)++;
		else if (!strcmp(a, "ok"))
			(*ok)++;
	}
}

int ln_plan_pending(const struct ln_node_run *nr)
{
	int c, ch, rm, ok, e;

	ln_plan_count(nr->answer, &c, &ch, &rm, &ok, &e);
	return c + ch + rm + e > 0;
}

void ln_plan_agent_warnings(const struct ln_node_run *nr, struct ln_buf *w)
{
	struct json_object *ws = ln_json_at(nr->answer, "warnings");
	size_t i;

	for (i = 0; ws && json_object_is_type(ws, json_type_array) && i < json_object_array_length(ws); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(ws, i));

		if (s && *s)
			ln_buf_addf(w, "%s: %s\n", nr->spec->name, s);
	}
}

static int plan_one(void *ctx, size_t i, struct ln_buf *line)
{
	static const char *const args[] = { LN_VERB_PLAN, NULL };
	struct ln_run *r = ctx;
	struct ln_node_run *nr = &r->nodes[i];
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *ans = NULL;
	int rc, status, c, ch, rm, ok, e;

	rc = ln_run_session(r, nr, &err);
	if (rc == 0) {
		json_object_put(nr->answer);
		nr->answer = NULL;
		rc = ln_agent_call(nr->s, args, nr->request, 0, &ans, &status, &err);
		/* only the known fields of the untrusted answer go on (answer.h) */
		nr->answer = rc < 0 ? NULL : ln_answer_known_changes(ans);
		json_object_put(ans);
	}
	if (rc < 0) {
		ln_run_node_failed(nr, ln_node_state_of(rc), rc, err.buf, "plan", line);
	} else {
		ln_plan_count(nr->answer, &c, &ch, &rm, &ok, &e);
		ln_buf_addf(line, "%-12s %s: +%d ~%d -%d", "planned", nr->spec->name, c, ch, rm);
	}
	ln_buf_release(&err);
	return rc;
}

int ln_plan_run(struct ln_run *r)
{
	struct ln_fanout f = { "plan", r->n, NULL, r->parallel, plan_one, r, 0 };
	struct ln_fanout_result res;
	unsigned char *sel = calloc(r->n ? r->n : 1, 1);
	size_t i;
	int rc;

	if (!sel)
		return -ENOMEM;
	r->phase = "plan";
	for (i = 0; i < r->n; i++) {
		struct ln_node_run *nr = &r->nodes[i];

		if (nr->state != LN_NODE_OK)
			continue;
		json_object_put(nr->request);
		nr->request = ln_plan_request(r, i, LN_PHASE_FULL, NULL);
		if (!nr->request) {
			free(sel);
			return -ENOMEM;
		}
		sel[i] = 1;
	}
	f.select = sel;
	f.quiet = ln_log_threshold < LN_LOG_VERBOSE;
	rc = ln_fanout_run(&f, &res);
	if (rc == 0) {
		for (i = 0; i < r->n; i++)
			if (sel[i] && !res.started[i]) {
				r->nodes[i].state = LN_NODE_INTERRUPTED;
				ln_buf_reset(&r->nodes[i].reason);
				ln_buf_addstr(&r->nodes[i].reason, "not planned: interrupted");
			}
		ln_fanout_result_release(&res);
	}
	free(sel);
	ln_run_phase_done(r);
	return rc;
}
