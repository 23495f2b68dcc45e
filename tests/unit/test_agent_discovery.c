// SPDX-License-Identifier: MIT
/*
 * Discovery (`discovery: true` on an initiator): the discovery log parser
 * on bytes (entries, padding, a truncated page, a non-NVMe subtype, a
 * generation counter that moves while the log is read), and the agent on
 * fixture trees: the log made from a target node's fake nvmet (the agent
 * itself applies the target there), a connect from its entry, no discovery
 * controller left behind, and a subsystem the log does not list at the
 * declared place failing with what it lists and nothing connected; and
 * `facts --discovery`, the read validation's devices stage judges.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <errno.h>
#include <sys/stat.h>

#include "agents/agent/initiator/discovery.h"
#include "common/fileio.h"
#include "common/proto.h"
#include "common/util.h"

#define NQN1 "nqn.2024-04.com.example:te1.target1"
#define NQN3 "nqn.2024-04.com.example:te1.target3"

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Entry i of page: padded as nvmet pads (trsvcid and traddr with spaces). */
static void entry(unsigned char *page, size_t i, unsigned trtype, unsigned subtype,
		  unsigned portid, const char *svc, const char *nqn, const char *addr)
{
	unsigned char *e = page + LN_DISC_HDR + i * LN_DISC_REC;

	e[0] = (unsigned char)trtype;
	e[1] = strchr(addr, ':') ? 2 : 1;
	e[2] = (unsigned char)subtype;
	put_le(e + 4, portid, 2);
	put_le(e + 6, 0xffff, 2);
	memset(e + 32, ' ', 32);
	memcpy(e + 32, svc, strlen(svc));
	memcpy(e + 256, nqn, strlen(nqn));
	memset(e + 512, ' ', 256);
	memcpy(e + 512, addr, strlen(addr));
}

static unsigned char *page3(size_t *len, uint64_t gen)
{
	unsigned char *p = calloc(1, LN_DISC_HDR + 3 * LN_DISC_REC);

	put_le(p, gen, 8);
	put_le(p + 8, 3, 8);
	entry(p, 0, 3, LN_DISC_SUB_CURRENT, 1, "4420", LN_DISC_NQN, "10.77.0.11");
	entry(p, 1, 3, LN_DISC_SUB_REFERRAL, 2, "4420", NQN3, "10.77.0.12");
	entry(p, 2, 3, LN_DISC_SUB_NVME, 1, "4420", NQN1, "fd00:0:0::11");
	*len = LN_DISC_HDR + 3 * LN_DISC_REC;
	return p;
}

static void test_agent_discovery__parse_and_match(void **st)
{
	struct ln_buf err = LN_BUF_INIT, what = LN_BUF_INIT;
	struct ln_disc_log l;
	size_t len;
	unsigned char *p = page3(&len, 7);

	(void)st;
	assert_int_equal(ln_disc_parse(p, len, &l, &err), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.genctr, 7);
	assert_string_equal(l.v[2].transport, "tcp");
	assert_string_equal(l.v[2].trsvcid, "4420");
	assert_string_equal(l.v[2].traddr, "fd00:0:0::11");
	assert_string_equal(l.v[2].subnqn, NQN1);
	assert_int_equal(l.v[2].portid, 1);
	assert_int_equal(l.v[2].cntlid, 0xffff);
	/* the address compared parsed, the service as a number */
	assert_int_equal(ln_disc_match(&l, NQN1, "tcp", "fd00::11", "04420"), 2);
	assert_int_equal(ln_disc_match(&l, NQN1, "rdma", "fd00::11", "4420"), -ENOENT);
	assert_int_equal(ln_disc_match(&l, NQN1, "tcp", "fd00::12", "4420"), -ENOENT);
	assert_int_equal(ln_disc_match(&l, NQN1, "tcp", "fd00::11", "4421"), -ENOENT);
	/* a referral (subtype 1) and the discovery subsystem (3) never match */
	assert_int_equal(ln_disc_match(&l, NQN3, "tcp", "10.77.0.12", "4420"), -ENOENT);
	assert_int_equal(ln_disc_match(&l, LN_DISC_NQN, "tcp", "10.77.0.11", "4420"), -ENOENT);
	ln_disc_describe(&l, &what);
	assert_string_equal(what.buf, "'" NQN1 "' at tcp fd00:0:0::11:4420");
	ln_disc_log_release(&l);
	/* no NVM subsystem: said so */
	put_le(p + 8, 1, 8);
	assert_int_equal(ln_disc_parse(p, LN_DISC_HDR + LN_DISC_REC, &l, &err), 0);
	ln_buf_reset(&what);
	ln_disc_describe(&l, &what);
	assert_string_equal(what.buf, "no subsystem for this host");
	ln_disc_log_release(&l);
	free(p);
	ln_test_release(&err, &what);
}

static void test_agent_discovery__truncated_log_refused(void **st)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_disc_log l;
	size_t len;
	unsigned char *p = page3(&len, 1);

	(void)st;
	assert_int_equal(ln_disc_parse(p, len - 1, &l, &err), -EPROTO);
	assert_string_equal(err.buf, "discovery log truncated: 3 records need 4096 bytes, 4095 read");
	ln_buf_reset(&err);
	assert_int_equal(ln_disc_parse(p, 100, &l, &err), -EPROTO);
	assert_non_null(strstr(err.buf, "its header alone is 1024"));
	ln_buf_reset(&err);
	put_le(p + 8, LN_DISC_MAX_RECS + 1, 8);
	assert_int_equal(ln_disc_parse(p, len, &l, &err), -EPROTO);
	assert_non_null(strstr(err.buf, "1025 records"));
	free(p);
	ln_buf_release(&err);
}

/* A log whose generation moves on each of the first `moves` page reads. */
struct moving {
	unsigned char *page;
	size_t len;
	int reads, moves;
};

static int read_moving(void *ctx, uint64_t off, void *buf, size_t len, struct ln_buf *err)
{
	struct moving *m = ctx;

	(void)err;
	memset(buf, 0, len);
	if (off < m->len)
		memcpy(buf, m->page + off, len < m->len - off ? len : m->len - off);
	if (len > 16 && m->reads++ < m->moves)	/* the target changed meanwhile */
		put_le(m->page, m->page[0] + 100u, 1);
	return 0;
}

static void test_agent_discovery__generation_change_reads_again(void **st)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_disc_log l;
	struct moving m = { 0 };

	(void)st;
	m.page = page3(&m.len, 1);
	m.moves = 1;
	assert_int_equal(ln_disc_read(read_moving, &m, &l, &err), 0);
	assert_int_equal(m.reads, 2);	/* read again once, then it held still */
	assert_int_equal(l.genctr, 101);
	assert_int_equal(l.n, 3);
	ln_disc_log_release(&l);
	/* never still: given up after 3 tries, said so */
	m.reads = 0;
	m.moves = 100;
	assert_int_equal(ln_disc_read(read_moving, &m, &l, &err), -EAGAIN);
	assert_non_null(strstr(err.buf, "discovery log changed while it was read, 3 times"));
	free(m.page);
	ln_buf_release(&err);
}

/* An initiator request with discovery; extra goes before "initiators". */
static const char *disc_req_with(const char *nqn, int service, const char *extra)
{
	static char buf[512];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"cluster\":\"te-lab\",%s\"initiators\":[{\"target\":\"%s\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":%d,"
		 "\"discovery\":true}]}", extra, nqn, service);
	return buf;
}

static const char *disc_req(const char *nqn, int service)
{
	return disc_req_with(nqn, service, "");
}

/* Count the controllers under ROOT/sys/class/nvme whose subsysnqn is nqn. */
static int ctrls_of(const char *root, const char *nqn)
{
	char p[4096];
	int i, n = 0;

	for (i = 0; i < 16; i++) {
		struct ln_buf v = LN_BUF_INIT, e = LN_BUF_INIT;

		snprintf(p, sizeof(p), "%s/sys/class/nvme/nvme%d/subsysnqn", root, i);
		if (ln_file_read(p, &v, &e) == 0 && !strncmp(v.buf, nqn, strlen(nqn)))
			n++;
		ln_test_release(&v, &e);
	}
	return n;
}

/* A target node (the agent applies request-target.json there) and an
 * initiator node whose fabric maps the target's address to it. */
static void two_nodes(char **target, char **init)
{
	const char *apply[] = { "apply", NULL };
	struct ln_buf out = LN_BUF_INIT, e = LN_BUF_INIT, req = LN_BUF_INIT;
	char map[4200];

	*target = fx_build("node-target");
	*init = fx_build("node-initiator");
	assert_int_equal(ln_file_read(FIXTURES_DIR "/agent/request-target.json", &req, &e), 0);
	assert_int_equal(fx_run_ini(*target, apply, req.buf, &out), 0);
	snprintf(map, sizeof(map), "10.77.0.11 %s\n", *target);
	assert_int_equal(fx_put(*init, "/etc/llmnet-fixture/fabric", map), 0);
	ln_test_release(&out, &e, &req);
}

static void test_agent_discovery__connect_from_the_log(void **st)
{
	const char *apply[] = { "apply", NULL }, *plan[] = { "plan", NULL };
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	char *target, *init;

	(void)st;
	two_nodes(&target, &init);
	assert_int_equal(fx_run_ini(init, plan, disc_req(NQN1, 4420), &out), 0);
	assert_non_null(strstr(out.buf, "through the discovery log"));
	assert_int_equal(ctrls_of(init, LN_DISC_NQN), 0);
	ln_buf_reset(&out);
	assert_int_equal(fx_run_ini(init, apply, disc_req(NQN1, 4420), &out), 0);
	assert_non_null(strstr(out.buf, "(discovery log: port 1)"));
	assert_int_equal(ctrls_of(init, NQN1), 1);
	/* the discovery controller was deleted again */
	assert_int_equal(ctrls_of(init, LN_DISC_NQN), 0);
	fx_read(init, "/sys/class/nvme/nvme1/address", &v);
	assert_string_equal(v.buf, "traddr=10.77.0.11,trsvcid=4420\n");
	/* a live matching connection is ok without asking the log again:
	 * with the target's tree out of reach, apply still converges */
	assert_int_equal(fx_put(init, "/etc/llmnet-fixture/fabric", "10.77.0.11 /nonexistent\n"), 0);
	ln_buf_reset(&out);
	assert_int_equal(fx_run_ini(init, apply, disc_req(NQN1, 4420), &out), 0);
	assert_non_null(strstr(out.buf, "\"action\": \"ok\""));
	assert_null(strstr(out.buf, "\"action\": \"create\", \"kind\": \"nvme_connection\""));
	ln_test_release(&out, &v);
	fx_remove(target);
	fx_remove(init);
}

static int skip_none(const char *rel)
{
	/* the generated host identity and the agent's own state and lock */
	return !strncmp(rel, "/var/lib/llmnet", 15) || !strcmp(rel, "/run/llmnet.lock") ||
	       !strncmp(rel, "/etc/nvme", 9);
}

static void test_agent_discovery__not_listed_fails_and_connects_nothing(void **st)
{
	char *target, *init, p[4200];
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	const char *apply[] = { "apply", NULL };

	(void)st;
	two_nodes(&target, &init);
	/* the host taken off target1's allowed hosts: the log lists target3 only */
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/" NQN1 "/allowed_hosts/"
		 "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002", target);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(fx_apply_refused(init, disc_req(NQN1, 4420), 1,
					  "'" NQN1 "' is not in the discovery log at tcp "
					  "10.77.0.11:4420 for host 'nqn.2014-08.org.nvmexpress:uuid:"
					  "1f0f7b8a-0000-4000-8000-000000000002': the log lists '" NQN3
					  "' at tcp 10.77.0.11:4420; not connecting", skip_none), 0);
	assert_int_equal(ctrls_of(init, NQN1), 0);
	assert_int_equal(ctrls_of(init, LN_DISC_NQN), 0);
	/* a port that does not export it (4421: a foreign subsystem only) */
	assert_int_equal(fx_agent(init, apply, disc_req(NQN1, 4421), &out, &err, NULL), 1);
	assert_non_null(strstr(out.buf, "'" NQN1 "' is not in the discovery log at tcp "
					"10.77.0.11:4421 for host 'nqn.2014-08.org.nvmexpress:"
					"uuid:1f0f7b8a-0000-4000-8000-000000000002': the log lists "
					"no subsystem for this host; not connecting"));
	/* a service the target has no port on: no discovery controller there */
	ln_buf_reset(&out);
	assert_int_equal(fx_agent(init, apply, disc_req(NQN1, 4430), &out, &err, NULL), 1);
	assert_non_null(strstr(out.buf, "cannot connect to the discovery controller at tcp "
					"10.77.0.11:4430: Connection refused"));
	assert_int_equal(ctrls_of(init, NQN1), 0);
	assert_int_equal(ctrls_of(init, LN_DISC_NQN), 0);
	/* a log read that fails: the discovery controller is deleted all the same */
	assert_int_equal(fx_put(init, "/etc/llmnet-fixture/disc-log-fails", ""), 0);
	ln_buf_reset(&out);
	assert_int_equal(fx_agent(init, apply, disc_req(NQN1, 4420), &out, &err, NULL), 1);
	assert_non_null(strstr(out.buf, "the controller refused Get Log Page"));
	assert_int_equal(ctrls_of(init, NQN1), 0);
	assert_int_equal(ctrls_of(init, LN_DISC_NQN), 0);
	/* discovery with tls or dhchap is refused before anything is read */
	assert_int_equal(fx_apply_refused(init,
		"{\"protocol\":1,\"cluster\":\"te-lab\",\"initiators\":[{\"target\":\"" NQN1 "\","
		"\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4420,\"discovery\":"
		"true,\"dhchap\":{\"secret\":\"DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"
		"QUEebzGt:\"}}]}", 2, "discovery is not supported with dhchap", NULL), 0);
	ln_test_release(&out, &err);
	fx_remove(target);
	fx_remove(init);
}

/* Boot-time restore runs the same connect: after a "reboot" (a fresh
 * initiator tree with the stored request, unit and state), restore finds
 * the target through its discovery log again. */
static void test_agent_discovery__restore_discovers(void **st)
{
	const char *apply[] = { "apply", NULL }, *restore[] = { "restore", "--cluster", "te-lab",
							      NULL };
	struct ln_buf out = LN_BUF_INIT;
	char *target, *init, *boot = fx_build("node-initiator"), cmd[16384], map[4200];
	(void)st;
	two_nodes(&target, &init);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/var/lib/llmnet/bin %s/run/systemd/system "
		 "%s/etc/systemd/system %s/run/systemd/system %s/etc/systemd/system && "
		 "echo '#!pushed agent' > %s/var/lib/llmnet/bin/llmnet-agent",
		 init, init, init, boot, boot, init);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(fx_run_ini(init, apply, disc_req_with(NQN1, 4420, "\"persist\":true,"), &out), 0);
	fx_copy_boot(init, boot);
	snprintf(map, sizeof(map), "10.77.0.11 %s\n", target);
	assert_int_equal(fx_put(boot, "/etc/llmnet-fixture/fabric", map), 0);
	assert_int_equal(ctrls_of(boot, NQN1), 0);
	ln_buf_reset(&out);
	assert_int_equal(fx_run_ini(boot, restore, NULL, &out), 0);
	assert_non_null(strstr(out.buf, "(discovery log: port 1)"));
	assert_int_equal(ctrls_of(boot, NQN1), 1);
	assert_int_equal(ctrls_of(boot, LN_DISC_NQN), 0);
	ln_buf_release(&out);
	fx_remove(target);
	fx_remove(init);
	fx_remove(boot);
}

/* `facts --discovery PLACE` on the initiator node: the answer's one place. */
static struct json_object *disc_facts(const char *root, const char *place, int want_rc)
{
	const char *args[] = { "facts", "--discovery", place, NULL };
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;
	struct json_object *o, *d, *x;

	assert_int_equal(fx_agent(root, args, NULL, &out, &err, NULL), want_rc);
	o = json_tokener_parse(out.buf);
	assert_non_null(o);
	if (want_rc) {
		ln_test_release(&out, &err);
		return o;
	}
	assert_true(json_object_object_get_ex(o, "discovery", &d));
	assert_int_equal(json_object_array_length(d), 1);
	x = json_object_get(json_object_array_get_idx(d, 0));
	json_object_put(o);
	ln_test_release(&out, &err);
	return x;
}

/* The log's entries of a place's answer, one "SUBTYPE NQN TRANSPORT ADDR:SVC"
 * line each; "error: ..." when none was read. */
static char *disc_lines(struct json_object *x)
{
	struct ln_buf b = LN_BUF_INIT;
	struct json_object *l, *e;
	size_t i;

	if (!json_object_object_get_ex(x, "log", &l)) {
		assert_true(json_object_object_get_ex(x, "error", &e));
		ln_buf_addf(&b, "error: %s", json_object_get_string(e));
		return ln_buf_detach(&b, NULL);
	}
	assert_false(json_object_object_get_ex(x, "error", &e));
	for (i = 0; i < json_object_array_length(l); i++) {
		struct json_object *en = json_object_array_get_idx(l, i);

		ln_buf_addf(&b, "%d %s %s %s:%s\n", json_object_get_int(json_object_object_get(en, "subtype")),
			    json_object_get_string(json_object_object_get(en, "nqn")),
			    json_object_get_string(json_object_object_get(en, "transport")),
			    json_object_get_string(json_object_object_get(en, "address")),
			    json_object_get_string(json_object_object_get(en, "service")));
	}
	return ln_buf_detach(&b, NULL);
}

/* facts --discovery reads what apply would read, with the node's host NQN,
 * judges nothing, and leaves the node's tree as it was: the discovery
 * controller deleted again whatever happened. */
static void test_agent_discovery__facts_reads_the_log(void **st)
{
	const char *place = "tcp,10.77.0.11,4420," NQN1;
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT;
	struct json_object *x;
	char *target, *init, *l, p[4200];

	(void)st;
	two_nodes(&target, &init);
	/* without a time budget: refused, nothing connected */
	{
		const char *args[] = { "facts", "--discovery", place, NULL };
		struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT;

		fx_list(init, &before, NULL);
		assert_int_equal(fx_agent_nobudget(init, args, NULL, &out, &err, NULL),
				 LN_AGENT_EXIT_USAGE);
		assert_non_null(strstr(out.buf, "needs a time budget: --budget-ms MS"));
		fx_list(init, &after, NULL);
		assert_string_equal(before.buf, after.buf);
		ln_test_release(&out, &err);
	}
	/* no host NQN yet: nothing read, said why */
	x = disc_facts(init, place, 0);
	l = disc_lines(x);
	assert_string_equal(l, "error: no host NQN on this node (/etc/nvme/hostnqn): apply makes it");
	free(l);
	json_object_put(x);
	snprintf(p, sizeof(p), "%s/etc/nvme", init);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(fx_put(init, "/etc/nvme/hostnqn",
				"nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002\n"), 0);
	fx_list(init, &before, NULL);
	x = disc_facts(init, place, 0);
	l = disc_lines(x);
	assert_string_equal(l, "3 " LN_DISC_NQN " tcp 10.77.0.11:4420\n"
			       "2 " NQN1 " tcp 10.77.0.11:4420\n"
			       "2 " NQN3 " tcp 10.77.0.11:4420\n");
	assert_string_equal(json_object_get_string(json_object_object_get(x, "host_nqn")),
			    "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002");
	fx_list(init, &after, NULL);
	assert_string_equal(before.buf, after.buf);
	free(l);
	json_object_put(x);
	/* the host taken off target1's allowed hosts: the log omits it */
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/" NQN1 "/allowed_hosts/"
		 "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002", target);
	assert_int_equal(unlink(p), 0);
	x = disc_facts(init, place, 0);
	l = disc_lines(x);
	assert_string_equal(l, "3 " LN_DISC_NQN " tcp 10.77.0.11:4420\n"
			       "2 " NQN3 " tcp 10.77.0.11:4420\n");
	free(l);
	json_object_put(x);
	/* no port there, and a log read that fails: the error, nothing left */
	x = disc_facts(init, "tcp,10.77.0.11,4430," NQN1, 0);
	l = disc_lines(x);
	assert_non_null(strstr(l, "error: cannot connect to the discovery controller at tcp "
				  "10.77.0.11:4430: Connection refused"));
	free(l);
	json_object_put(x);
	assert_int_equal(fx_put(init, "/etc/llmnet-fixture/disc-log-fails", ""), 0);
	fx_list(init, &before, NULL);
	x = disc_facts(init, place, 0);
	l = disc_lines(x);
	assert_non_null(strstr(l, "the controller refused Get Log Page"));
	fx_list(init, &after, NULL);
	assert_string_equal(before.buf, after.buf);
	assert_int_equal(ctrls_of(init, LN_DISC_NQN), 0);
	free(l);
	json_object_put(x);
	/* places that reach no path or option string: usage, nothing read */
	json_object_put(disc_facts(init, "udp,10.77.0.11,4420," NQN1, 64));
	json_object_put(disc_facts(init, "tcp,10.77.0.11,0," NQN1, 64));
	json_object_put(disc_facts(init, "tcp,host.example,4420," NQN1, 64));
	json_object_put(disc_facts(init, "tcp,10.77.0.11,4420," LN_DISC_NQN, 64));
	json_object_put(disc_facts(init, "tcp,10.77.0.11,4420," NQN1 ",x", 64));
	ln_test_release(&before, &after);
	fx_remove(target);
	fx_remove(init);
}

/* facts --discovery with a host identity file that is not valid: the
 * answer says which file and what is wrong, no discovery controller is
 * connected, the node's tree (its files too) as it was. */
static void test_agent_discovery__facts_refuses_a_bad_host_identity(void **st)
{
	const char *place = "tcp,10.77.0.11,4420," NQN1;
	static const char *const files[][3] = {
		{ "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002,"
		  "hostid=1f0f7b8a-0000-4000-8000-000000000009\n",
		  "1f0f7b8a-0000-4000-8000-000000000002\n",
		  "error: /etc/nvme/hostnqn is not a valid host NQN: ',' at offset 68" },
		{ "nqn.2014-08.org.nvmexpress:uuid:1f0f7b8a-0000-4000-8000-000000000002\n",
		  "1f0f7b8a-0000-4000-8000-00000000000z\n",
		  "error: /etc/nvme/hostid is not a host ID (a UUID: 8-4-4-4-12 hex digits): "
		  "'z' at offset 35" },
	};
	struct ln_buf before = LN_BUF_INIT, after = LN_BUF_INIT;
	char *target, *init, *l, p[4200];
	size_t i;

	(void)st;
	two_nodes(&target, &init);
	snprintf(p, sizeof(p), "%s/etc/nvme", init);
	assert_int_equal(mkdir(p, 0755), 0);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		struct json_object *x;

		assert_int_equal(fx_put(init, "/etc/nvme/hostnqn", files[i][0]), 0);
		assert_int_equal(fx_put(init, "/etc/nvme/hostid", files[i][1]), 0);
		fx_list(init, &before, NULL);
		x = disc_facts(init, place, 0);
		l = disc_lines(x);
		if (strncmp(l, files[i][2], strlen(files[i][2])))
			fail_msg("want '%s...', got '%s'", files[i][2], l);
		assert_null(json_object_object_get(x, "host_nqn"));
		fx_list(init, &after, NULL);
		assert_string_equal(before.buf, after.buf);
		assert_int_equal(ctrls_of(init, LN_DISC_NQN), 0);
		free(l);
		json_object_put(x);
	}
	ln_test_release(&before, &after);
	fx_remove(target);
	fx_remove(init);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agent_discovery__parse_and_match),
		cmocka_unit_test(test_agent_discovery__truncated_log_refused),
		cmocka_unit_test(test_agent_discovery__generation_change_reads_again),
		cmocka_unit_test(test_agent_discovery__connect_from_the_log),
		cmocka_unit_test(test_agent_discovery__not_listed_fails_and_connects_nothing),
		cmocka_unit_test(test_agent_discovery__restore_discovers),
		cmocka_unit_test(test_agent_discovery__facts_reads_the_log),
		cmocka_unit_test(test_agent_discovery__facts_refuses_a_bad_host_identity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
