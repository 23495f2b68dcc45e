/* SPDX-License-Identifier: MIT */
/*
 * The access stage: its plan of attempts per target kind (no hosts, hosts
 * without dhchap, hosts with dhchap, TLS, RDMA: never a wrong secret over
 * rdma), and its checks and target verdicts on the fake cluster
 * (validate_fake.h) whose `facts --refused` answers as nvmet would for
 * the spec's targets, or as a target that lets everyone in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/validate_fake.h"
#include "orchestrator/report/report.h"
#include "orchestrator/validate/stage_access.h"

#define NQN(n) "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-00000000000" #n

static const char *const host_nqn[5] = { NQN(1), NQN(2), NQN(3), NQN(4), NULL };

/* Four nodes n1..n4 and the targets of storage (YAML under "storage:"). */
static struct ln_spec *access_spec(const char *storage)
{
	struct ln_buf y = LN_BUF_INIT;

	fake_nodes(&y, 4, 1);
	ln_buf_addf(&y, "storage:\n%s", storage);
	return spec_from(&y, "  - { stage: access, timeout: 7s }\n");
}

/* Target name on node (n1 unless T4: n4, since a host has one entry per
 * target node, keyed or not). */
#define TN(node, name, extra) "    - { nqn: \"nqn.2024-04.io.llmnet:" node "." name "\", node: " \
	node ", " extra ", namespaces: [ { nsid: 1, file: /srv/" name ".img, size: 1GiB } ] }\n"
#define T(name, extra) TN("n1", name, extra)
#define T4(name, extra) TN("n4", name, extra)
#define KEYS "dhchap: { key_dir: /etc/llmnet/keys }"

static const char storage_all[] =
	"  targets:\n"
	T4("open", "transport: tcp, hosts: [n2]")
	T("keyed", "transport: tcp, hosts: [n2], " KEYS)
	T("tls", "transport: tcp, service: 4421, hosts: [n2], tls: required, " KEYS)
	T("rdma", "transport: rdma, hosts: [n2], " KEYS)
	T("any", "transport: tcp, hosts: any")
	T("nobody", "transport: tcp")
	"  initiators:\n"
	"    - { node: n2, target: \"nqn.2024-04.io.llmnet:n4.open\" }\n";

static size_t target_index(const struct ln_spec *sp, const char *name)
{
	char nqn[128];
	size_t t;

	snprintf(nqn, sizeof(nqn), "nqn.2024-04.io.llmnet:%s.%s", strcmp(name, "open") ? "n1" : "n4",
		 name);
	for (t = 0; t < sp->n_targets; t++)
		if (!strcmp(sp->targets[t].nqn, nqn))
			return t;
	fail_msg("no target %s", nqn);
	return 0;
}

/* The plan of one target as "KIND prober claimed key must_refuse moot" lines. */
static char *plan_text(const struct ln_spec *sp, const char *name, const unsigned char *under)
{
	static const char *const kinds[] = { "other", "claim", "wrong", "plain" };
	struct vs_access_attempt at[VS_ACCESS_MAX];
	struct ln_buf b = LN_BUF_INIT;
	size_t n = vs_access_plan(sp, target_index(sp, name), host_nqn, under, at), k;

	for (k = 0; k < n; k++)
		ln_buf_addf(&b, "%s %s %s%s%s%s\n", kinds[at[k].kind],
			    at[k].prober == LN_NO_NODE ? "-" : sp->nodes[at[k].prober].name,
			    at[k].claimed == LN_NO_NODE ? "self" : sp->nodes[at[k].claimed].name,
			    at[k].wrong_key ? " wrong" : "", at[k].must_refuse ? "" : " may-accept",
			    at[k].moot ? " moot" : "");
	return ln_buf_detach(&b, NULL);
}

#define ASSERT_PLAN(sp, name, under, want)                    \
	do {                                                  \
		char *p_ = plan_text(sp, name, under);        \
		assert_string_equal(p_, want);                \
		free(p_);                                     \
	} while (0)

/* Per target kind: a node not in hosts (n3: no connection, not the
 * target's node) as itself; the claim of n2's NQN from n3; a wrong
 * secret only with dhchap over tcp; plain TCP from n2 (an allowed host)
 * on the TLS target. hosts any: nobody to refuse, nothing claimed. */
static void test_validate_access__plan_per_target_kind(void **state)
{
	struct ln_spec *sp = access_spec(storage_all);

	(void)state;
	ASSERT_PLAN(sp, "open", NULL, "other n1 self\nclaim n1 n2 may-accept\n");
	ASSERT_PLAN(sp, "keyed", NULL, "other n3 self\nclaim n3 n2\nwrong n3 n2 wrong\n");
	ASSERT_PLAN(sp, "tls", NULL, "other n3 self\nclaim n3 n2\nwrong n3 n2 wrong\n"
				      "plain n2 self\n");
	/* the control of the line above: rdma, the same keys, no wrong secret */
	ASSERT_PLAN(sp, "rdma", NULL, "other n3 self\nclaim n3 n2\nwrong n3 n2 moot\n");
	ASSERT_PLAN(sp, "any", NULL, "other - self\n");
	/* no hosts given and no initiator: nobody is let in, nothing to claim */
	ASSERT_PLAN(sp, "nobody", NULL, "other n3 self\n");
	ln_spec_free(sp);
}

/* Who probes: every node but n2 out of the test leaves no one outside
 * hosts (not run), and n2 is never its own claimer; with n1 alone left
 * the target's node probes, and the claim comes from the allowed host
 * side only when no other node is left. */
static void test_validate_access__plan_probers(void **state)
{
	struct ln_spec *sp = access_spec(storage_all);
	const unsigned char only_n2[4] = { 0, 1, 0, 0 }, n1_n2[4] = { 1, 1, 0, 0 };
	const char *const no_n2[5] = { NQN(1), NULL, NQN(3), NQN(4), NULL };
	struct vs_access_attempt at[VS_ACCESS_MAX];
	size_t n;

	(void)state;
	ASSERT_PLAN(sp, "keyed", only_n2, "other - self\nclaim - n2\nwrong - n2 wrong\n");
	ASSERT_PLAN(sp, "keyed", n1_n2, "other n1 self\nclaim n1 n2\nwrong n1 n2 wrong\n");
	n = vs_access_plan(sp, target_index(sp, "keyed"), no_n2, NULL, at);
	assert_int_equal(n, 3);
	assert_int_equal(at[1].prober, LN_NO_NODE);
	assert_string_equal(at[1].why, "no allowed host's NQN is known (no facts)");
	assert_int_equal(at[0].prober, 2);	/* the control: the other check still runs */
	ln_spec_free(sp);
}

/* No attempt with a wrong secret is ever planned over rdma, whatever the
 * nodes under test; the place string of one cannot even be made. The
 * control: over tcp the same spec plans one. */
static void test_validate_access__never_a_wrong_secret_over_rdma(void **state)
{
	struct ln_spec *sp = access_spec(storage_all);
	struct vs_access_attempt at[VS_ACCESS_MAX], fake = { 0 };
	unsigned char under[4];
	size_t t, k, n, wrong_tcp = 0;
	unsigned m;
	char *place;

	(void)state;
	for (m = 0; m < 16; m++) {
		for (k = 0; k < 4; k++)
			under[k] = (unsigned char)((m >> k) & 1);
		for (t = 0; t < sp->n_targets; t++) {
			n = vs_access_plan(sp, t, host_nqn, under, at);
			for (k = 0; k < n; k++) {
				if (sp->targets[t].transport == LN_TRANSPORT_RDMA)
					assert_false(at[k].wrong_key);
				else
					wrong_tcp += at[k].wrong_key;
				place = at[k].prober == LN_NO_NODE || at[k].moot ? NULL :
					vs_access_place(sp, t, &at[k], host_nqn);
				assert_true(!place || !strstr(place, "rdma") || !strstr(place, "wrong"));
				free(place);
			}
		}
	}
	assert_true(wrong_tcp > 0);
	fake.wrong_key = 1;
	fake.claimed = 1;
	assert_null(vs_access_place(sp, target_index(sp, "rdma"), &fake, host_nqn));
	place = vs_access_place(sp, target_index(sp, "keyed"), &fake, host_nqn);
	assert_string_equal(place, "tcp,10.0.0.1,4420,nqn.2024-04.io.llmnet:n1.keyed," NQN(2)
				   ",wrong");
	free(place);
	ln_spec_free(sp);
}

/* ---- the stage on the fake cluster ---- */

/* How the fake targets answer: as nvmet does for the spec (broken: lets
 * everyone in), from nodes that reach them (unreachable[i]: nothing
 * answers node i). Every place asked is kept, one per line. */
static struct {
	const struct ln_spec *spec;
	int broken, unreachable[MAXN], wrong_rdma;
	const char *every;	/* this answer to every attempt; NULL: as nvmet */
	struct ln_buf asked;
} model;

static int allowed(const struct ln_target *t, const char *host)
{
	size_t k;

	if (t->hosts_any)
		return 1;
	for (k = 0; k < t->n_hosts; k++)
		if (!strcmp(host_nqn[t->hosts[k]], host))
			return 1;
	return 0;
}

/* nvmet's answer to one place from node. */
static const char *answer(size_t node, const char *place)
{
	char tr[8], addr[64], svc[8], nqn[256], host[256], key[8];
	const struct ln_target *t = NULL;
	size_t k;

	if (sscanf(place, "%7[^,],%63[^,],%7[^,],%255[^,],%255[^,],%7s", tr, addr, svc, nqn,
		   host, key) != 6)
		fail_msg("bad place '%s'", place);
	if (!strcmp(tr, "rdma") && !strcmp(key, "wrong"))
		model.wrong_rdma++;
	for (k = 0; k < model.spec->n_targets; k++)
		if (!strcmp(model.spec->targets[k].nqn, nqn))
			t = &model.spec->targets[k];
	assert_non_null(t);
	if (!strcmp(host, "self"))
		snprintf(host, sizeof(host), "%s", host_nqn[node]);
	if (model.every)
		return model.every;
	if (model.unreachable[node])
		return "{\"outcome\":\"unreachable\",\"errno\":111,\"error\":\"Connection refused\","
		       "\"left_behind\":0}";
	if (model.broken)
		return "{\"outcome\":\"accepted\",\"deleted_at_once\":true,\"left_behind\":0}";
	if (t->tls)
		return "{\"outcome\":\"refused\",\"errno\":104,\"error\":\"Connection reset by "
		       "peer\",\"left_behind\":0}";
	if (!allowed(t, host))
		return "{\"outcome\":\"refused\",\"errno\":5,\"error\":\"Connect Invalid Host\","
		       "\"left_behind\":0}";
	if (t->dhchap.present)
		return "{\"outcome\":\"refused\",\"errno\":128,\"error\":\"Key was rejected by "
		       "service\",\"left_behind\":0}";
	return "{\"outcome\":\"accepted\",\"deleted_at_once\":true,\"left_behind\":0}";
}

static int model_refused(void *ctx, size_t node, const char *const *places, size_t n,
			 int timeout_s, struct json_object **out, struct ln_buf *err)
{
	struct ln_buf js = LN_BUF_INIT;
	size_t i;

	(void)ctx;
	(void)err;
	assert_int_equal(timeout_s, 7);
	ln_buf_addstr(&js, "{\"protocol\":3,\"refused\":[");
	for (i = 0; i < n; i++) {
		ln_buf_addf(&model.asked, "n%zu %s\n", node + 1, places[i]);
		ln_buf_addf(&js, "%s%s", i ? "," : "", answer(node, places[i]));
	}
	ln_buf_addstr(&js, "]}");
	*out = json_tokener_parse(js.buf);
	ln_buf_release(&js);
	return *out ? 0 : -ENOMEM;
}

static const struct ln_probe_ops access_ops = { fake_facts, fake_run, fake_put, fake_get, NULL,
						fake_discovery, model_refused, NULL };

static struct world *access_world(void **state, const char *storage)
{
	struct world *w = world_start(state, 4, access_spec(storage));
	struct ln_buf err = LN_BUF_INIT;
	size_t i;

	memset(&model, 0, sizeof(model));
	model.spec = w->spec;
	for (i = 0; i < 4; i++)
		json_object_object_add(w->f.facts[i], "host_nqn",
				       json_object_new_string(host_nqn[i]));
	(void)err;
	return w;
}

static void access_run(struct world *w)
{
	struct ln_buf err = LN_BUF_INIT;

	if (ln_validate_run(w->spec, &access_ops, &w->f, &w->o, &w->res, &err) < 0)
		fail_msg("%s", err.buf);
	ln_buf_release(&err);
}

/* The stage's checks as "status name: reason" lines. */
static char *checks_text(const struct ln_results *r)
{
	struct ln_buf b = LN_BUF_INIT;
	size_t i;

	for (i = 0; i < r->nchecks; i++)
		if (r->checks[i].stage == LN_STAGE_ACCESS)
			ln_buf_addf(&b, "%s%s %s: %s\n", r->checks[i].warning ? "warning " : "",
				    ln_status_name(r->checks[i].status), r->checks[i].name,
				    r->checks[i].reason ? r->checks[i].reason : "");
	return ln_buf_detach(&b, NULL);
}

static const char storage_open_keyed[] =
	"  targets:\n"
	T4("open", "transport: tcp, hosts: [n2]")
	T("keyed", "transport: tcp, hosts: [n2], " KEYS)
	"  initiators:\n"
	"    - { node: n2, target: \"nqn.2024-04.io.llmnet:n1.keyed\" }\n";

/* Targets that hold: every refusal passes, named exactly; the target
 * without dhchap is open to NQN claims, a warning check and a target
 * verdict of severity warning, and the run passes (exit 0). */
static void test_validate_access__refusals_hold(void **state)
{
	struct world *w = access_world(state, storage_open_keyed);
	char *c;

	access_run(w);
	c = checks_text(&w->res);
	assert_string_equal(c,
		"pass nqn.2024-04.io.llmnet:n4.open: n1 as itself (not in hosts): refused: "
		"Connect Invalid Host\n"
		"warning pass nqn.2024-04.io.llmnet:n4.open: n1 claiming n2's host NQN: warning: "
		"open to NQN claims: 'nqn.2024-04.io.llmnet:n4.open' let 'n1' in as 'n2' (deleted "
		"at once); give it dhchap\n"
		"pass nqn.2024-04.io.llmnet:n1.keyed: n3 as itself (not in hosts): refused: "
		"Connect Invalid Host\n"
		"pass nqn.2024-04.io.llmnet:n1.keyed: n3 claiming n2's host NQN: refused: Key was "
		"rejected by service\n"
		"pass nqn.2024-04.io.llmnet:n1.keyed: n3 claiming n2's host NQN with a wrong "
		"secret: refused: Key was rejected by service\n");
	free(c);
	assert_verdicts(w, "access:target:n4 ");
	assert_int_equal(w->res.verdicts[0].warning, 1);
	assert_string_equal(w->res.verdicts[0].reason, "'nqn.2024-04.io.llmnet:n4.open' is open "
			    "to NQN claims: 'n1' connected as 'n2' without a secret");
	assert_int_equal(w->res.stages[LN_STAGE_ACCESS].status, LN_ST_PASS);
	assert_int_equal(ln_results_exit(&w->res), 0);
	assert_string_equal(model.asked.buf,
		"n1 tcp,10.0.0.4,4420,nqn.2024-04.io.llmnet:n4.open,self,none\n"
		"n1 tcp,10.0.0.4,4420,nqn.2024-04.io.llmnet:n4.open," NQN(2) ",none\n"
		"n3 tcp,10.0.0.1,4420,nqn.2024-04.io.llmnet:n1.keyed,self,none\n"
		"n3 tcp,10.0.0.1,4420,nqn.2024-04.io.llmnet:n1.keyed," NQN(2) ",none\n"
		"n3 tcp,10.0.0.1,4420,nqn.2024-04.io.llmnet:n1.keyed," NQN(2) ",wrong\n");
	ln_buf_release(&model.asked);
}

/* A target that lets everyone in (its access control broken): every check
 * that must be refused fails, with one target verdict each of severity
 * fail, on the target's node only (the prober n3 is not blamed); the
 * run fails. The control is the test above: the same spec, refusals. */
static void test_validate_access__accepted_fails_the_target(void **state)
{
	struct world *w = access_world(state, storage_open_keyed);
	size_t i, fails = 0;

	model.broken = 1;
	access_run(w);
	assert_verdicts(w, "access:target:n4 access:target:n4 access:target:n1 access:target:n1 "
			   "access:target:n1 ");
	for (i = 0; i < w->res.nverdicts; i++)
		fails += !w->res.verdicts[i].warning;
	assert_int_equal(fails, 4);	/* the open target's claim only warns */
	assert_string_equal(w->res.verdicts[0].reason, "'nqn.2024-04.io.llmnet:n4.open' accepted "
			    "what it must refuse: nqn.2024-04.io.llmnet:n4.open: n1 as itself (not "
			    "in hosts)");
	assert_int_equal(w->res.stages[LN_STAGE_ACCESS].status, LN_ST_FAIL);
	assert_int_equal(ln_results_exit(&w->res), 1);
	ln_buf_release(&model.asked);
}

/* Probers that nothing answers prove nothing: "not run", no verdict,
 * the run fails; with n1 and n3 out of the test n4 probes both targets
 * (the open one from its own node), and passes (the control). */
static void test_validate_access__unreachable_is_not_run(void **state)
{
	struct world *w = access_world(state, storage_open_keyed);
	unsigned char limit[4] = { 0, 1, 0, 1 };
	size_t i;

	model.unreachable[0] = model.unreachable[2] = 1;
	access_run(w);
	for (i = 0; i < w->res.nchecks; i++)
		if (w->res.checks[i].stage == LN_STAGE_ACCESS) {
			assert_int_equal(w->res.checks[i].status, LN_ST_NOT_RUN);
			assert_string_equal(w->res.checks[i].reason, "proves nothing (unreachable): "
					    "Connection refused");
		}
	assert_verdicts(w, "");
	assert_int_equal(ln_results_exit(&w->res), 1);
	ln_results_release(&w->res);
	ln_buf_release(&model.asked);
	w->o.limit = limit;
	access_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_ACCESS].status, LN_ST_PASS);
	assert_non_null(strstr(model.asked.buf, "n4 tcp,10.0.0.1,4420,nqn.2024-04.io.llmnet:n1."
					       "keyed,self,none\n"));
	ln_buf_release(&model.asked);
}

/* Every node under test in hosts: the other-host check is "not run" with
 * the reason, and the stage fails; rdma asks no wrong secret and says
 * why; TLS: a plain connect from the allowed host, refused. */
static void test_validate_access__not_run_rdma_and_tls(void **state)
{
	static const char storage[] =
		"  targets:\n"
		T("rdma", "transport: rdma, hosts: [n1, n2, n3, n4], " KEYS)
		T("tls", "transport: tcp, service: 4421, hosts: [n2], tls: required, " KEYS);
	struct world *w = access_world(state, storage);
	char *c;

	access_run(w);
	c = checks_text(&w->res);
	assert_string_equal(c,
		"not run nqn.2024-04.io.llmnet:n1.rdma: no node as itself (not in hosts): every "
		"node under test is in its hosts\n"
		"pass nqn.2024-04.io.llmnet:n1.rdma: n2 claiming n1's host NQN: refused: Key was "
		"rejected by service\n"
		"skipped nqn.2024-04.io.llmnet:n1.rdma: n2 claiming n1's host NQN with a wrong "
		"secret: not tried over rdma: a wrong DH-HMAC-CHAP secret blocks an NVMe/RDMA host "
		"in nvme_auth_wait (Linux 6.12), so only the attempt without a secret is made\n"
		"pass nqn.2024-04.io.llmnet:n1.tls: n3 as itself (not in hosts): refused: "
		"Connection reset by peer\n"
		"pass nqn.2024-04.io.llmnet:n1.tls: n3 claiming n2's host NQN: refused: Connection "
		"reset by peer\n"
		"pass nqn.2024-04.io.llmnet:n1.tls: n3 claiming n2's host NQN with a wrong secret: "
		"refused: Connection reset by peer\n"
		"pass nqn.2024-04.io.llmnet:n1.tls: n2 over plain TCP (no TLS): refused: Connection "
		"reset by peer\n");
	free(c);
	assert_int_equal(model.wrong_rdma, 0);
	assert_non_null(strstr(model.asked.buf, "n2 tcp,10.0.0.1,4421,nqn.2024-04.io.llmnet:n1."
					       "tls,self,none\n"));
	assert_verdicts(w, "");
	assert_int_equal(w->res.stages[LN_STAGE_ACCESS].status, LN_ST_FAIL);
	ln_buf_release(&model.asked);
}

/* What proves nothing is not run, never a pass: this node's own kernel
 * refusing (local), no answer in time; and a connect left behind fails
 * even when refused. The control: the same spec passes in
 * refusals_hold. */
static void test_validate_access__no_proof_and_leftovers(void **state)
{
	struct world *w = access_world(state, storage_open_keyed);
	const struct ln_check *c = NULL;
	size_t i;

	model.every = "{\"outcome\":\"local\",\"errno\":22,\"error\":\"found same hostid but "
		      "different hostnqn\",\"left_behind\":0}";
	access_run(w);
	for (i = 0; i < w->res.nchecks; i++)
		if (w->res.checks[i].stage == LN_STAGE_ACCESS) {
			c = &w->res.checks[i];
			assert_int_equal(c->status, LN_ST_NOT_RUN);
			assert_string_equal(c->reason, "proves nothing (local): found same hostid "
					    "but different hostnqn");
		}
	assert_non_null(c);
	assert_verdicts(w, "");
	ln_results_release(&w->res);
	model.every = "{\"outcome\":\"timeout\",\"error\":\"no answer within the bound\","
		      "\"left_behind\":0}";
	access_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_ACCESS].status, LN_ST_FAIL);
	assert_int_equal(w->res.stages[LN_STAGE_ACCESS].not_run, 5);
	ln_results_release(&w->res);
	model.every = "{\"outcome\":\"refused\",\"errno\":5,\"error\":\"x\",\"left_behind\":1,"
		      "\"kept\":\"nvme3: Device or resource busy\"}";
	access_run(w);
	assert_int_equal(w->res.stages[LN_STAGE_ACCESS].failed, 5);
	for (i = 0; i < w->res.nchecks; i++)
		if (w->res.checks[i].stage == LN_STAGE_ACCESS)
			c = &w->res.checks[i];
	assert_string_equal(c->reason, "1 controller(s) or connect(s) left behind on 'n3': nvme3: "
			    "Device or resource busy");
	assert_verdicts(w, "");
	/* accepted and left behind: the target is blamed all the same */
	ln_results_release(&w->res);
	model.every = "{\"outcome\":\"accepted\",\"deleted_at_once\":false,\"swept\":0,"
		      "\"left_behind\":1,\"kept\":\"nvme3: busy\"}";
	access_run(w);
	assert_verdicts(w, "access:target:n4 access:target:n4 access:target:n1 access:target:n1 "
			   "access:target:n1 ");
	for (i = 0; i < w->res.nchecks; i++)
		if (w->res.checks[i].stage == LN_STAGE_ACCESS) {
			c = &w->res.checks[i];
			break;
		}
	assert_string_equal(c->reason, "accepted (deleted after the attempt): the connect must be "
			    "refused; 1 controller(s) or connect(s) left behind on 'n1': nvme3: busy");
	ln_buf_release(&model.asked);
}

/* Every report shows a target verdict with its severity. */
static void test_validate_access__reports_name_the_target(void **state)
{
	struct world *w = access_world(state, storage_open_keyed);
	struct ln_buf out = LN_BUF_INIT;

	access_run(w);
	assert_int_equal(ln_report_text(&w->res, 0, &out), 0);
	assert_non_null(strstr(out.buf, "verdicts:\n  target warning n4 (access): "
					"'nqn.2024-04.io.llmnet:n4.open' is open to NQN claims"));
	assert_non_null(strstr(out.buf, "  access    n4 warning: warning: open to NQN claims"));
	ln_buf_reset(&out);
	assert_int_equal(ln_report_json(&w->res, 0, &out), 0);
	assert_non_null(strstr(out.buf, "\"kind\":\"target\",\"severity\":\"warning\""));
	ln_buf_reset(&out);
	assert_int_equal(ln_report_junit(&w->res, &out), 0);
	assert_non_null(strstr(out.buf, "<system-out>warning: warning: open to NQN claims"));
	ln_buf_reset(&out);
	assert_int_equal(ln_report_html(&w->res, &out), 0);
	assert_non_null(strstr(out.buf, "<li class=\"verdict-target warning\"><b>target warning "));
	ln_buf_reset(&out);
	assert_int_equal(ln_report_metrics(&w->res, &out), 0);
	assert_non_null(strstr(out.buf, "llmnet_validation_target{cluster=\"fake\",stage=\"access\","
					"node=\"n4\",severity=\"warning\",reason=\""));
	assert_non_null(strstr(out.buf, "without a secret\"} 0.5\n"));
	ln_buf_release(&out);
	ln_buf_release(&model.asked);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_access__plan_per_target_kind),
		cmocka_unit_test(test_validate_access__plan_probers),
		cmocka_unit_test(test_validate_access__never_a_wrong_secret_over_rdma),
		WORLD_TEST(test_validate_access__refusals_hold),
		WORLD_TEST(test_validate_access__accepted_fails_the_target),
		WORLD_TEST(test_validate_access__unreachable_is_not_run),
		WORLD_TEST(test_validate_access__not_run_rdma_and_tls),
		WORLD_TEST(test_validate_access__no_proof_and_leftovers),
		WORLD_TEST(test_validate_access__reports_name_the_target),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
