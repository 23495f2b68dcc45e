// SPDX-License-Identifier: MIT
/*
 * `facts --refused` (probe_refused.h): one connect the target must refuse,
 * per place, in a bounded child. The child connects through the node's
 * initiator ops (the kernel's /dev/nvme-fabrics, or the fixture's) and,
 * should the target accept, deletes the controller before anything else:
 * its namespace is never opened. It reports one line on its pipe:
 * "refused ERRNO MESSAGE", or "accepted NAME" then "deleted" or
 * "kept MESSAGE". The agent then deletes any controller of that
 * subsystem the attempt made that is still there (a child the bound
 * killed between its connect and its delete). A wrong secret is made
 * here, from getrandom(2), lives only in this process (the child inherits
 * it by fork, never by argv or environment) and is wiped after use.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent/core/agent.h"
#include "agents/agent/core/budget.h"
#include "agents/agent/initiator/discovery.h"
#include "agents/agent/initiator/fabrics.h"
#include "agents/agent/initiator/hostid.h"
#include "agents/agent/initiator/probe_refused.h"
#include "agents/agent/run/bounded.h"
#include "common/dhchap.h"
#include "common/hostnqn.h"
#include "common/json.h"
#include "common/proto.h"

int ln_refused_parse_place(char *s, struct ln_refused_place *p)
{
	char *f[6], *save = NULL, *tok, *rest;
	struct ln_conn cn;
	int n = 0;

	/* the last two fields first: the first four are facts --discovery's */
	for (tok = strtok_r(s, ",", &save); tok && n < 6; tok = strtok_r(NULL, ",", &save))
		f[n++] = tok;
	if (n != 6 || tok)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	if (strcmp(f[4], "self") && !ln_valid_host_nqn(f[4]))
		return -EINVAL;
	if (!strcmp(f[5], "none"))
		p->key = LN_REFUSED_KEY_NONE;
	else if (!strcmp(f[5], "wrong"))
		p->key = LN_REFUSED_KEY_WRONG;
	else
		return -EINVAL;
	/* rejoin the place for the discovery parser: f[0..3] are contiguous */
	for (rest = f[0]; rest < f[3]; rest++)
		if (!*rest)
			*rest = ',';
	if (ln_disc_parse_place(f[0], &cn) < 0)
		return -EINVAL;
	/* never a wrong secret over RDMA: the host hangs in nvme_auth_wait */
	if (p->key == LN_REFUSED_KEY_WRONG && !strcmp(cn.transport, "rdma"))
		return -EINVAL;
	p->transport = cn.transport;
	p->traddr = cn.traddr;
	p->trsvcid = cn.trsvcid;
	p->subsysnqn = cn.subsysnqn;
	p->claim = strcmp(f[4], "self") ? f[4] : NULL;
	return 0;
}

struct attempt {
	struct ln_agent *a;
	struct ln_conn cn;
};

/* The connect. On a node it is written to /dev/nvme-fabrics here
 * (fabrics.c), not through libnvme, which folds the kernel's errno into
 * its own codes (1.3: EIO, EKEYREJECTED, EHOSTUNREACH all become "failed
 * to write"), so a refusal could not be told from no route; the
 * fixture's connect answers the kernel's errnos itself. *accepted: the
 * kernel connected but named no controller (the sweep finds it). */
static int connect_once(struct attempt *at, char *name, int *accepted, struct ln_buf *err)
{
	int step = LN_FABRICS_OPEN, r;

	*accepted = 0;
	if (at->a->fixture)
		return at->a->ini->connect(at->a, &at->cn, name, err);
	r = ln_fabrics_connect(&at->cn, name, &step, err);
	if (r < 0 && step == LN_FABRICS_ANSWER)
		*accepted = 1;
	else if (r < 0 && step == LN_FABRICS_WRITE && !err->len)
		ln_buf_addf(err, "cannot connect to '%s' at %s %s:%s: %s", at->cn.subsysnqn,
			    at->cn.transport, at->cn.traddr, at->cn.trsvcid, strerror(-r));
	return r;
}

/* The child: connect, and delete at once what the target accepted. */
static int attempt_child(void *ctx, int out)
{
	struct attempt *at = ctx;
	struct ln_buf err = LN_BUF_INIT;
	char name[32] = "";
	int r, nameless;

	r = connect_once(at, name, &nameless, &err);
	if (nameless) {
		dprintf(out, "accepted (the kernel named no controller)\n");
		ln_buf_release(&err);
		return 0;
	}
	if (r < 0) {
		dprintf(out, "refused %d %s\n", -r, err.len ? err.buf : strerror(-r));
		ln_buf_release(&err);
		return 1;
	}
	dprintf(out, "accepted %s\n", name);
	ln_buf_reset(&err);
	r = at->a->ini->disconnect(at->a, name, &err);
	if (r < 0)
		dprintf(out, "kept %s\n", err.len ? err.buf : strerror(-r));
	else
		dprintf(out, "deleted\n");
	ln_buf_release(&err);
	return 0;
}

/* Whether name is in the list (the controllers before the attempt). */
static int listed(const struct ln_ctrl_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return 1;
	return 0;
}

/* Delete every controller of subsysnqn that is not in before; how many
 * could not be deleted (their names into kept). */
static int sweep(struct ln_agent *a, const struct ln_ctrl_list *before, const char *subsysnqn,
		 int *swept, struct ln_buf *kept)
{
	struct ln_ctrl_list now = { 0 };
	struct ln_buf err = LN_BUF_INIT;
	size_t i;
	int left = 0;

	if (a->ini->scan(a, &now, &err) < 0) {
		ln_buf_addf(kept, "%scannot list the controllers: %s", kept->len ? "; " : "",
			    err.buf);
		ln_buf_release(&err);
		return 1;
	}
	for (i = 0; i < now.n; i++) {
		if (strcmp(now.v[i].subsysnqn, subsysnqn) || listed(before, now.v[i].name))
			continue;
		ln_buf_reset(&err);
		if (a->ini->disconnect(a, now.v[i].name, &err) < 0) {
			ln_buf_addf(kept, "%s%s: %s", kept->len ? "; " : "", now.v[i].name, err.buf);
			left++;
		} else {
			(*swept)++;
		}
	}
	free(now.v);
	ln_buf_release(&err);
	return left;
}

/* The kernel's answer as an outcome: nothing answered (not a proof of
 * refusal), this node refused the option string itself (a host ID in use
 * with another host NQN, say: no proof either), or the target refused. */
static const char *refusal_kind(int e)
{
	switch (e) {
	case ECONNREFUSED:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ENETDOWN:
	case EADDRNOTAVAIL:
		return "unreachable";
	case EINVAL:
	case EALREADY:	/* a live controller of this host and subsystem */
	case ENOMEM:
	case ENOENT:	/* no /dev/nvme-fabrics: the host modules are not loaded */
	case ENODEV:
		return "local";
	default:
		return "refused";
	}
}

/* Read the child's report into o. */
static void judge_output(const struct ln_exec_result *res, struct json_object *o)
{
	const char *out = res->output.buf ? res->output.buf : "";
	char *nl;
	int e;

	if (!strncmp(out, "refused ", 8) && sscanf(out + 8, "%d", &e) == 1) {
		const char *msg = strchr(out + 8, ' ');
		struct ln_buf m = LN_BUF_INIT;

		ln_buf_addstr(&m, msg ? msg + 1 : "");
		nl = strchr(m.buf, '\n');
		if (nl)
			*nl = '\0';
		ln_json_add_str(o, "outcome", refusal_kind(e));
		ln_json_add_i64(o, "errno", e);
		ln_json_add_str(o, "error", m.buf);
		ln_buf_release(&m);
	} else if (!strncmp(out, "accepted ", 9)) {
		ln_json_add_str(o, "outcome", "accepted");
		ln_json_add_bool(o, "deleted_at_once", strstr(out, "\ndeleted\n") != NULL);
	} else {
		ln_json_add_str(o, "outcome", res->timed_out ? "timeout" : "error");
		ln_json_add_str(o, "error", res->timed_out ? "no answer within the bound" :
				"the attempt reported nothing");
	}
}

/* One attempt at p with the node's identity (nqn, id). */
static struct json_object *one_attempt(struct ln_agent *a, const struct ln_refused_place *p,
				       const char *nqn, const char *id, unsigned timeout_s)
{
	struct json_object *o = json_object_new_object();
	struct attempt at = { a, { 0 } };
	struct ln_ctrl_list before = { 0 };
	struct ln_exec_result res;
	struct ln_buf err = LN_BUF_INIT, kept = LN_BUF_INIT;
	char key[LN_DHCHAP_MAX];
	int swept = 0, left = 0, r;

	key[0] = '\0';
	at.cn.transport = p->transport;
	at.cn.traddr = p->traddr;
	at.cn.trsvcid = p->trsvcid;
	at.cn.subsysnqn = p->subsysnqn;
	at.cn.hostnqn = p->claim ? p->claim : nqn;
	at.cn.hostid = id;
	at.cn.nr_io_queues = 1;
	ln_json_add_str(o, "nqn", p->subsysnqn);
	ln_json_add_str(o, "transport", p->transport);
	ln_json_add_str(o, "address", p->traddr);
	ln_json_add_str(o, "service", p->trsvcid);
	ln_json_add_str(o, "host_nqn", at.cn.hostnqn);
	ln_json_add_bool(o, "claimed", p->claim != NULL);
	ln_json_add_str(o, "secret", p->key == LN_REFUSED_KEY_WRONG ? "wrong" : "none");
	if (p->key == LN_REFUSED_KEY_WRONG) {
		if (ln_dhchap_generate(key, sizeof(key)) < 0) {
			ln_json_add_str(o, "outcome", "error");
			ln_json_add_str(o, "error", "cannot make a wrong secret: no random bytes");
			return o;
		}
		at.cn.dhchap_secret = key;
	}
	/* as facts --discovery: no connect once the caller is gone or the
	 * request's budget is spent */
	if (ln_agent_stopping || ln_budget_left_ms() == 0) {
		ln_buf_addf(&err, "not connecting: %s", ln_agent_stopping ?
			    "the session is closed" : ln_budget_why());
		ln_json_add_str(o, "outcome", "error");
		ln_json_add_str(o, "error", err.buf);
		goto out;
	}
	if (a->ini->scan(a, &before, &err) < 0) {
		ln_json_add_str(o, "outcome", "error");
		ln_json_add_str(o, "error", err.buf);
		goto out;
	}
	r = ln_exec_bounded_call("connect", attempt_child, &at, timeout_s, 4096, &res, &err);
	if (r < 0) {
		ln_json_add_str(o, "outcome", "error");
		ln_json_add_str(o, "error", err.buf);
		goto out;
	}
	judge_output(&res, o);
	ln_json_add_double(o, "seconds", (double)res.duration_ms / 1000.0);
	/* a child still in the kernel (SIGKILL cannot end it) is left behind */
	if (res.timed_out && !res.exited && !res.signal)
		left++;
	ln_exec_result_release(&res);
	left += sweep(a, &before, p->subsysnqn, &swept, &kept);
	ln_json_add_i64(o, "swept", swept);
	ln_json_add_i64(o, "left_behind", left);
	if (kept.len)
		ln_json_add_str(o, "kept", kept.buf);
out:
	explicit_bzero(key, sizeof(key));
	free(before.v);
	ln_buf_release(&err);
	ln_buf_release(&kept);
	return o;
}

int ln_refused_facts(struct ln_agent *a, const struct ln_refused_place *places, size_t n,
		     unsigned timeout_s, struct json_object **out)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct ln_buf nqn = LN_BUF_INIT, id = LN_BUF_INIT, bad = LN_BUF_INIT;
	size_t i;

	ln_host_identity(a, &nqn, &id, &bad);
	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(o, "root", a->fixture ? a->root : "/");
	for (i = 0; i < n; i++) {
		struct json_object *x;

		if (bad.len || !nqn.len || !id.len) {
			/* no identity to connect with: nothing tried */
			x = json_object_new_object();
			ln_json_add_str(x, "nqn", places[i].subsysnqn);
			ln_json_add_str(x, "outcome", "error");
			ln_json_add_str(x, "error", bad.len ? bad.buf :
					"no host NQN or host ID on this node (/etc/nvme): "
					"apply makes them");
		} else {
			x = one_attempt(a, &places[i], nqn.buf, id.buf, timeout_s);
		}
		json_object_array_add(arr, x);
	}
	ln_json_add(o, "refused", arr);
	ln_json_add(o, "warnings", json_object_new_array());
	ln_buf_release_all(&nqn, &id, &bad);
	*out = o;
	return 0;
}
