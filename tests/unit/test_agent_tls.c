// SPDX-License-Identifier: MIT
/*
 * NVMe/TCP TLS on fixture trees: the PSK interchange format, the TLS PSK
 * derived as nvme-cli inserts it (the lab's vector: the key read back from
 * a 6.12 guest's .nvme keyring after `nvme gen-tls-key -i`), a target's
 * port made TLS-only (addr_tsas, addr_treq) with each host's key in the
 * keyring, an initiator's connect string with tls and its key, what a node
 * without the keyring or tlshd gets, the request's refusals, and no PSK in
 * any answer or state.
 */
#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include <errno.h>
#include <sys/stat.h>

#include "agents/agent/kernel/tlspsk.h"
#include "common/dhchap.h"

/* the lab's by-hand run (docs/operating.md, TLS) */
#define LAB_PSK "NVMeTLSkey-1:01:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyN:"
#define LAB_H "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555"
#define LAB_S "nqn.2026-12.io.llmnet:tlstest"
#define LAB_KEY "3261e87d6e0e80d935b40bac545aeb5d5253888187191363c54b76ea2a4642a0"
#define LAB_ID "NVMe0R01 " LAB_H " " LAB_S
#define PSK_FRAG "tSY3VcFaqJU"
#define K1 "DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGt:"
#define KEYRING "292bb69c I------     2 perm 1f1f0000     0     0 keyring   .nvme: empty\n"

static int run(const char *root, const char *verb, const char *in, struct ln_buf *out)
{
	const char *args[] = { verb, NULL };
	struct ln_buf err = LN_BUF_INIT;
	int rc = fx_agent(root, args, in, out, &err, "LLMNET_NS_WAIT=2");

	assert_null(strstr(err.buf, PSK_FRAG));
	assert_null(strstr(out->buf, PSK_FRAG));
	ln_buf_release(&err);
	return rc;
}

/* The kernel's .nvme keyring and a running tlshd, as 6.12 with ktls-utils. */
static void tls_node(const char *root, int keyring, int tlshd)
{
	char p[4096];

	if (keyring)
		assert_int_equal(fx_put(root, "/proc/keys", KEYRING), 0);
	if (tlshd) {
		snprintf(p, sizeof(p), "%s/proc/4242", root);
		assert_int_equal(mkdir(p, 0755), 0);
		assert_int_equal(fx_put(root, "/proc/4242/comm", "tlshd\n"), 0);
	}
}

static const char *tls_target(const char *psk, const char *transport)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":3,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"" LAB_S "\","
		 "\"transport\":\"%s\",\"address\":\"10.77.0.11\",\"service\":4430,\"tls\":"
		 "\"required\",\"hosts\":[\"" LAB_H "\"],\"namespaces\":[{\"nsid\":1,\"file\":"
		 "\"/var/lib/nvmet/t.img\",\"size\":4096}],\"dhchap\":{\"hash\":\"sha256\","
		 "\"dhgroup\":\"null\",\"keys\":[{\"host\":\"" LAB_H "\",\"key\":\"" K1 "\","
		 "\"psk\":\"%s\"}]}}]}", transport, psk);
	return buf;
}

static void test_agent_tls__psk_format(void **st)
{
	struct ln_buf why = LN_BUF_INIT;
	char gen[LN_DHCHAP_MAX];

	(void)st;
	assert_int_equal(ln_tls_psk_check(LAB_PSK, &why), 0);
	/* a broken CRC, a DHHC-1 secret, a bad hash: refused, never echoed */
	assert_int_equal(ln_tls_psk_check("NVMeTLSkey-1:01:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyM:", &why), -EINVAL);
	assert_non_null(strstr(why.buf, "CRC-32"));
	assert_int_equal(ln_tls_psk_check(K1, &why), -EINVAL);
	assert_int_equal(ln_tls_psk_check("NVMeTLSkey-1:03:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyN:", &why), -EINVAL);
	assert_null(strstr(why.buf, PSK_FRAG));
	/* made as gen-tls-key makes them: hash 01, 32 bytes, CRC */
	assert_int_equal(ln_tls_psk_generate(gen, sizeof(gen)), 0);
	assert_int_equal(strncmp(gen, "NVMeTLSkey-1:01:", 16), 0);
	assert_int_equal(strlen(gen), strlen(LAB_PSK));
	assert_int_equal(ln_tls_psk_check(gen, &why), 0);
	ln_buf_release(&why);
}

static void test_agent_tls__derived_key_is_the_kernels(void **st)
{
	unsigned char key[LN_TLS_KEY_MAX];
	char id[LN_TLS_IDENTITY_MAX], hex[2 * LN_TLS_KEY_MAX + 1];
	struct ln_buf err = LN_BUF_INIT;
	size_t len = 0, i;

	(void)st;
	assert_int_equal(ln_tls_psk_derive(LAB_PSK, LAB_H, LAB_S, id, sizeof(id), key, &len, &err),
			 0);
	assert_string_equal(id, LAB_ID);
	assert_int_equal(len, 32);
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	assert_string_equal(hex, LAB_KEY);
	/* another host gets another key */
	assert_int_equal(ln_tls_psk_derive(LAB_PSK, "nqn.2014-08.org.example:h2", LAB_S, id,
					   sizeof(id), key, &len, &err), 0);
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	assert_string_not_equal(hex, LAB_KEY);
	ln_buf_release(&err);
}

/* A TLS target: its port requires TLS 1.3, the host's key is in .nvme
 * under the identity the kernel looks up; converged, nothing is written
 * again; teardown takes the key out; no PSK in any answer or the state. */
static void test_agent_tls__target_port_and_keyring(void **st)
{
	char *root = fx_build("node-target-6.12");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT, m1 = LN_BUF_INIT, m2 = LN_BUF_INIT;
	const char *port = "/sys/kernel/config/nvmet/ports/1";
	char p[4096], line[600];

	(void)st;
	tls_node(root, 1, 1);
	assert_int_equal(run(root, "apply", tls_target(LAB_PSK, "tcp"), &out), 0);
	assert_true(fx_has_change(&out, "create", "tls_psk"));
	assert_non_null(strstr(out.buf, "tls1.3 required"));
	/* the port the agent made */
	snprintf(p, sizeof(p), "%s/addr_tsas", port);
	fx_read(root, p, &v);
	assert_string_equal(v.buf, "tls1.3\n");
	snprintf(p, sizeof(p), "%s/addr_treq", port);
	fx_read(root, p, &v);
	assert_string_equal(v.buf, "required\n");
	snprintf(p, sizeof(p), "%s/subsystems/" LAB_S, port);
	{
		char q[4096];
		struct stat sb;

		snprintf(q, sizeof(q), "%s%s", root, p);
		assert_int_equal(lstat(q, &sb), 0);
	}
	fx_read(root, "/proc/keys", &v);
	snprintf(line, sizeof(line), " psk       %s: 32\n", LAB_ID);
	assert_non_null(strstr(v.buf, line));
	/* the key the fixture kernel holds is the one nvme-cli inserts */
	{
		const char *l = strstr(v.buf, line);
		char rel[64];

		while (l > v.buf && l[-1] != '\n')
			l--;
		snprintf(rel, sizeof(rel), "/etc/llmnet-fixture/psk/%.8s", l);
		fx_read(root, rel, &v);
		assert_string_equal(v.buf, LAB_KEY "\n");
	}
	fx_read(root, "/var/lib/llmnet/state.json", &v);
	assert_null(strstr(v.buf, PSK_FRAG));
	assert_null(strstr(v.buf, LAB_KEY));
	fx_read(root, "/etc/llmnet/keys/c/host-" LAB_H ".psk", &v);
	assert_string_equal(v.buf, LAB_PSK "\n");
	/* converged */
	fx_list_mtimes(root, &m1);
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", tls_target(LAB_PSK, "tcp"), &out), 0);
	fx_list_mtimes(root, &m2);
	assert_string_equal(m1.buf, m2.buf);
	assert_false(fx_has_change(&out, "create", "tls_psk"));
	assert_false(fx_has_change(&out, "change", "tls_psk"));
	/* teardown: the port, the subsystem and the key go */
	ln_buf_reset(&out);
	assert_int_equal(run(root, "teardown", NULL, &out), 0);
	assert_true(fx_has_change(&out, "remove", "tls_psk"));
	fx_read(root, "/proc/keys", &v);
	assert_null(strstr(v.buf, LAB_ID));
	assert_string_equal(v.buf, KEYRING);
	ln_test_release(&out, &v, &m1, &m2);
	fx_remove(root);
}

/* Without the .nvme keyring (no NVMe TLS in the kernel) or without tlshd
 * the target fails with the reason and nothing of it is exported. */
static void test_agent_tls__node_without_tls_exports_nothing(void **st)
{
	int variant;

	(void)st;
	for (variant = 0; variant < 2; variant++) {
		char *root = fx_build("node-target-6.12"), p[4096];
		struct ln_buf out = LN_BUF_INIT;

		tls_node(root, variant == 1, 0);
		assert_int_equal(run(root, "apply", tls_target(LAB_PSK, "tcp"), &out), 1);
		assert_non_null(strstr(out.buf, variant ? "tlshd" : "'.nvme'"));
		snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/" LAB_S, root);
		assert_int_equal(access(p, F_OK), -1);
		snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/ports/1", root);
		assert_int_equal(access(p, F_OK), -1);
		ln_buf_release(&out);
		fx_remove(root);
	}
}

static void test_agent_tls__request_refusals(void **st)
{
	char *root = fx_build("node-target-6.12");
	struct ln_buf out = LN_BUF_INIT;
	char req[4096];

	(void)st;
	tls_node(root, 1, 1);
	assert_int_equal(run(root, "apply", tls_target(LAB_PSK, "rdma"), &out), 2);
	assert_non_null(strstr(out.buf, "tls needs transport tcp"));
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", tls_target("NVMeTLSkey-1:01:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyM:", "tcp"), &out), 2);
	assert_non_null(strstr(out.buf, "not a valid NVMe TLS PSK"));
	/* a tls target without its hosts' psk */
	ln_buf_reset(&out);
	snprintf(req, sizeof(req), "%s", tls_target(LAB_PSK, "tcp"));
	memcpy(strstr(req, ",\"psk\""), "}]}}]}", 7);
	assert_int_equal(run(root, "apply", req, &out), 2);
	assert_non_null(strstr(out.buf, "psk"));
	ln_buf_release(&out);
	fx_remove(root);
}

static const char *tls_init(int tls)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":3,\"cluster\":\"c\",\"initiators\":[{\"target\":\"" LAB_S "\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4420%s,"
		 "\"dhchap\":{\"secret\":\"" K1 "\"%s}}]}",
		 tls ? ",\"tls\":\"required\"" : "", tls ? ",\"psk\":\"" LAB_PSK "\"" : "");
	return buf;
}

/* The host's key goes in its .nvme keyring, then the connect asks for TLS
 * (the kernel's "tls" option; libnvme 1.3 cannot write it); without tlshd
 * the connect is refused with the reason. */
/* An initiator's host NQN and id, TLS support in the kernel, and tlshd
 * running or not. */
static void initiator_node(const char *root, int tlshd)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/etc/nvme", root);
	mkdir(p, 0755);
	assert_int_equal(fx_put(root, "/etc/nvme/hostnqn", LAB_H "\n"), 0);
	assert_int_equal(fx_put(root, "/etc/nvme/hostid", "11111111-2222-3333-4444-555555555555\n"),
			 0);
	tls_node(root, 1, tlshd);
}

static void test_agent_tls__initiator_connects_with_tls(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	/* no tlshd: refused before any key or connect */
	initiator_node(root, 0);
	assert_int_equal(run(root, "apply", tls_init(1), &out), 1);
	assert_non_null(strstr(out.buf, "tlshd"));
	fx_read(root, "/proc/keys", &v);
	assert_string_equal(v.buf, KEYRING);
	tls_node(root, 0, 1);
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", tls_init(1), &out), 0);
	assert_true(fx_has_change(&out, "create", "tls_psk"));
	fx_read(root, "/dev/nvme-fabrics", &v);
	assert_non_null(strstr(v.buf, "nqn=" LAB_S ",transport=tcp,traddr=10.77.0.11,"
				       "trsvcid=4420,hostnqn=" LAB_H));
	assert_non_null(strstr(v.buf, ",dhchap_secret=(secret),tls\n"));
	assert_null(strstr(v.buf, "DHHC-1"));
	fx_read(root, "/sys/class/nvme/nvme1/tls_key", &v);
	assert_int_equal(strlen(v.buf), 9);
	fx_read(root, "/proc/keys", &v);
	assert_non_null(strstr(v.buf, LAB_ID));
	fx_read(root, "/var/lib/llmnet/state.json", &v);
	assert_null(strstr(v.buf, PSK_FRAG));
	/* teardown disconnects and takes the key out */
	ln_buf_reset(&out);
	assert_int_equal(run(root, "teardown", NULL, &out), 0);
	fx_read(root, "/proc/keys", &v);
	assert_null(strstr(v.buf, LAB_ID));
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* The host's key is named with its host NQN as apply reads it (trimmed,
 * checked): a hostnqn file with trailing blanks keeps its key, and one that
 * is no longer valid (apply refuses it) removes no key of a wanted connect. */
static void test_agent_tls__initiator_key_and_host_identity(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	initiator_node(root, 1);
	assert_int_equal(fx_put(root, "/etc/nvme/hostnqn", LAB_H " \t\n"), 0);
	assert_int_equal(run(root, "apply", tls_init(1), &out), 0);
	assert_true(fx_has_change(&out, "create", "tls_psk"));
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", tls_init(1), &out), 0);
	assert_false(fx_has_change(&out, "remove", "tls_psk"));
	assert_false(fx_has_change(&out, "create", "tls_psk"));
	fx_read(root, "/proc/keys", &v);
	assert_non_null(strstr(v.buf, LAB_ID));
	/* not valid now: refused, the key stays */
	assert_int_equal(fx_put(root, "/etc/nvme/hostnqn", LAB_H ",x=y\n"), 0);
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", tls_init(1), &out), 1);
	assert_false(fx_has_change(&out, "remove", "tls_psk"));
	fx_read(root, "/proc/keys", &v);
	assert_non_null(strstr(v.buf, LAB_ID));
	/* teardown takes it out all the same */
	ln_buf_reset(&out);
	assert_int_equal(run(root, "teardown", NULL, &out), 0);
	fx_read(root, "/proc/keys", &v);
	assert_null(strstr(v.buf, LAB_ID));
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* Another cluster's plain port at the target's address and service: a tls
 * target is never linked to it (it would be exported in clear). The other
 * cluster allows another host: one host entry under two clusters' unlike
 * settings is refused before any port is looked at (nvmet_hosts.c). */
#define OTHER_H "nqn.2014-08.org.nvmexpress:uuid:66666666-2222-3333-4444-555555555555"
static void test_agent_tls__foreign_plain_port_is_not_used(void **st)
{
	char *root = fx_build("node-target-6.12"), p[4096];
	struct ln_buf out = LN_BUF_INIT;
	struct stat sb;
	static const char plain[] =
		"{\"protocol\":3,\"cluster\":\"other\",\"targets\":[{\"nqn\":"
		"\"nqn.2026-12.io.llmnet:plain\",\"transport\":\"tcp\",\"address\":\"10.77.0.11\","
		"\"service\":4430,\"hosts\":[\"" OTHER_H "\"],\"namespaces\":[{\"nsid\":1,"
		"\"file\":\"/var/lib/nvmet/p.img\",\"size\":4096}]}]}";

	(void)st;
	tls_node(root, 1, 1);
	assert_int_equal(run(root, "apply", plain, &out), 0);
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", tls_target(LAB_PSK, "tcp"), &out), 1);
	assert_non_null(strstr(out.buf, "is not this cluster's and does not require TLS"));
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/ports/1/subsystems/" LAB_S, root);
	assert_int_not_equal(lstat(p, &sb), 0);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/ports/1/addr_tsas", root);
	{
		struct ln_buf v = LN_BUF_INIT;

		fx_read(root, "/sys/kernel/config/nvmet/ports/1/addr_tsas", &v);
		assert_null(strstr(v.buf, "tls"));
		ln_buf_release(&v);
	}
	ln_buf_release(&out);
	fx_remove(root);
}

/* A foreign port with TLS optional (addr_tsas tls1.3, addr_treq "not
 * required") also takes plain connects: a tls target is never linked to
 * it, and the error names the port and what it reads. */
static void test_agent_tls__foreign_optional_tls_port_is_not_used(void **st)
{
	char *root = fx_build("node-target-6.12"), p[4096], *req, *at;
	struct ln_buf out = LN_BUF_INIT;
	struct stat sb;

	(void)st;
	tls_node(root, 1, 1);
	assert_int_equal(fx_put(root, "/sys/kernel/config/nvmet/ports/7/addr_tsas", "tls1.3\n"), 0);
	assert_int_equal(fx_put(root, "/sys/kernel/config/nvmet/ports/7/addr_treq",
				"not required\n"), 0);
	req = strdup(tls_target(LAB_PSK, "tcp"));
	at = strstr(req, "4430");
	assert_non_null(at);
	memcpy(at, "4421", 4);
	assert_int_equal(run(root, "apply", req, &out), 1);
	assert_non_null(strstr(out.buf, "port 7 for tcp/10.77.0.11/4421 is not this cluster's"));
	assert_non_null(strstr(out.buf, "addr_treq 'not required'"));
	assert_false(fx_has_change(&out, "ok", "nvmet_port"));
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/ports/7/subsystems/" LAB_S, root);
	assert_int_not_equal(lstat(p, &sb), 0);
	free(req);
	ln_buf_release(&out);
	fx_remove(root);
}

/* Cluster cl's target nqn on 10.77.0.11:4430, with TLS or plain. */
static const char *shared_target(const char *cl, const char *nqn, int tls)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":3,\"cluster\":\"%s\",\"targets\":[{\"nqn\":\"%s\","
		 "\"transport\":\"tcp\",\"address\":\"10.77.0.11\",\"service\":4430,%s"
		 "\"hosts\":[\"" LAB_H "\"],\"namespaces\":[{\"nsid\":1,\"file\":"
		 "\"/var/lib/nvmet/%s.img\",\"size\":4096}],\"dhchap\":{\"hash\":\"sha256\","
		 "\"dhgroup\":\"null\",\"keys\":[{\"host\":\"" LAB_H "\",\"key\":\"" K1 "\""
		 "%s}]}}]}", cl, nqn, tls ? "\"tls\":\"required\"," : "", cl,
		 tls ? ",\"psk\":\"" LAB_PSK "\"" : "");
	return buf;
}

/* Two clusters' subsystems allow one host entry, keyed alike (nvmet keeps
 * one entry per host and node): b's teardown removes b's objects and its
 * link only, and keeps the entry with a's key for a's subsystem (exit 0);
 * a's teardown then, with no other user left, removes the entry and its
 * key (the control: the entry is not kept for ever). */
static void test_agent_tls__teardown_keeps_a_shared_host_key(void **st)
{
	const char *tda[] = { "teardown", "--cluster", "a", NULL };
	const char *tdb[] = { "teardown", "--cluster", "b", NULL };
	const char *sa = shared_target("a", "nqn.2026-12.io.llmnet:a", 0);
	char *root = fx_build("node-target-6.12"), p[4096], *ra = strdup(sa);
	struct ln_buf out = LN_BUF_INIT, err = LN_BUF_INIT, v = LN_BUF_INIT;
	struct stat sb;
	int order;

	(void)st;
	/* a makes the entry first, then b does (b's teardown hands it over) */
	for (order = 0; order < 2; order++) {
		const char *rb = shared_target("b", "nqn.2026-12.io.llmnet:b", 0);

		ln_buf_reset(&out);
		assert_int_equal(run(root, "apply", order ? rb : ra, &out), 0);
		ln_buf_reset(&out);
		assert_int_equal(run(root, "apply", order ? ra : shared_target("b",
				     "nqn.2026-12.io.llmnet:b", 0), &out), 0);
		ln_buf_reset(&out);
		if (fx_agent(root, tdb, NULL, &out, &err, NULL) != 0)
			fail_msg("b's teardown failed:\n%s\n%s", out.buf, err.buf);
		assert_non_null(strstr(out.buf, "' kept for cluster 'a' ('nqn.2026-12.io.llmnet:a')"));
		assert_null(strstr(out.buf, "QUFBQUFB"));
		fx_read(root, "/sys/kernel/config/nvmet/hosts/" LAB_H "/dhchap_key", &v);
		assert_string_equal(v.buf, K1 "\n");
		snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/"
			 "nqn.2026-12.io.llmnet:a/allowed_hosts/" LAB_H, root);
		assert_int_equal(lstat(p, &sb), 0);
		snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/subsystems/"
			 "nqn.2026-12.io.llmnet:b", root);
		assert_int_not_equal(lstat(p, &sb), 0);
		/* b owns neither the entry nor its key now (its records
		 * follow a's; a shared port it made stays its own) */
		fx_read(root, "/var/lib/llmnet/state.json", &v);
		assert_non_null(strstr(v.buf, "\"b\""));
		if (strstr(strstr(v.buf, "\"b\""), "nvmet_host"))
			fail_msg("b still owns the host entry:\n%s", strstr(v.buf, "\"b\""));
		/* control: a is the last user: its teardown takes the entry
		 * and its key */
		ln_buf_reset(&out);
		if (fx_agent(root, tda, NULL, &out, &err, NULL) != 0)
			fail_msg("a's teardown failed:\n%s\n%s", out.buf, err.buf);
		snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/hosts/" LAB_H, root);
		assert_int_not_equal(lstat(p, &sb), 0);
	}
	free(ra);
	ln_test_release(&out, &err, &v);
	fx_remove(root);
}

/* Cluster c owns the TLS port another cluster's tls subsystem joined: c
 * turning its target plain would export the other one in clear, so it is
 * refused with the subsystem and its owner, and nothing changes. */
static void test_agent_tls__owned_port_keeps_others_tls(void **st)
{
	char *root = fx_build("node-target-6.12"), p[4096];
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;
	struct stat sb;

	(void)st;
	tls_node(root, 1, 1);
	assert_int_equal(run(root, "apply", shared_target("c", LAB_S, 1), &out), 0);
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", shared_target("d", LAB_S "d", 1), &out), 0);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/ports/1/subsystems/" LAB_S "d", root);
	assert_int_equal(lstat(p, &sb), 0);
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", shared_target("c", LAB_S, 0), &out), 1);
	assert_non_null(strstr(out.buf, "subsystems this cluster does not own are linked to it: '"
				       LAB_S "d' (cluster 'd')"));
	fx_read(root, "/sys/kernel/config/nvmet/ports/1/addr_tsas", &v);
	assert_string_equal(v.buf, "tls1.3\n");
	fx_read(root, "/sys/kernel/config/nvmet/ports/1/addr_treq", &v);
	assert_string_equal(v.buf, "required\n");
	assert_int_equal(lstat(p, &sb), 0);
	snprintf(p, sizeof(p), "%s/sys/kernel/config/nvmet/ports/1/subsystems/" LAB_S, root);
	assert_int_equal(lstat(p, &sb), 0);
	/* d's own apply still finds its port as it asked */
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", shared_target("d", LAB_S "d", 1), &out), 0);
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* A live plain connection is never "ok" for a request that asks tls: plan
 * and apply show the change, apply fails it with what to do, and the
 * connection stays as it is. */
static void test_agent_tls__plain_connection_is_not_ok(void **st)
{
	char *root = fx_build("node-initiator");
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	initiator_node(root, 1);
	assert_int_equal(run(root, "apply", tls_init(0), &out), 0);
	fx_read(root, "/sys/class/nvme/nvme1/subsysnqn", &v);
	assert_string_equal(v.buf, LAB_S "\n");
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", tls_init(1), &out), 1);
	assert_true(fx_has_change(&out, "change", "nvme_connection"));
	assert_false(fx_has_change(&out, "ok", "nvme_connection"));
	assert_non_null(strstr(out.buf, "is connected without TLS"));
	fx_read(root, "/sys/class/nvme/nvme1/subsysnqn", &v);
	assert_string_equal(v.buf, LAB_S "\n");
	ln_test_release(&out, &v);
	fx_remove(root);
}

/* The kernel keeps one key per identity: a second cluster asking the same
 * (host, subsystem) key is refused, and the first one's key stays. */
static void test_agent_tls__identity_of_another_cluster(void **st)
{
	char *root = fx_build("node-initiator"), *other, *at;
	struct ln_buf out = LN_BUF_INIT, v = LN_BUF_INIT;

	(void)st;
	initiator_node(root, 1);
	assert_int_equal(run(root, "apply", tls_init(1), &out), 0);
	other = strdup(tls_init(1));
	at = strstr(other, "\"cluster\":\"c\"");
	assert_non_null(at);
	at[11] = 'd';
	ln_buf_reset(&out);
	assert_int_equal(run(root, "apply", other, &out), 1);
	assert_non_null(strstr(out.buf, "belongs to cluster 'c'"));
	fx_read(root, "/proc/keys", &v);
	assert_non_null(strstr(v.buf, LAB_ID));
	free(other);
	ln_test_release(&out, &v);
	fx_remove(root);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_tls__psk_format),
	cmocka_unit_test(test_agent_tls__derived_key_is_the_kernels),
	cmocka_unit_test(test_agent_tls__target_port_and_keyring),
	cmocka_unit_test(test_agent_tls__node_without_tls_exports_nothing),
	cmocka_unit_test(test_agent_tls__request_refusals),
	cmocka_unit_test(test_agent_tls__initiator_connects_with_tls),
	cmocka_unit_test(test_agent_tls__initiator_key_and_host_identity),
	cmocka_unit_test(test_agent_tls__foreign_plain_port_is_not_used),
	cmocka_unit_test(test_agent_tls__foreign_optional_tls_port_is_not_used),
	cmocka_unit_test(test_agent_tls__owned_port_keeps_others_tls),
	cmocka_unit_test(test_agent_tls__teardown_keeps_a_shared_host_key),
	cmocka_unit_test(test_agent_tls__plain_connection_is_not_ok),
	cmocka_unit_test(test_agent_tls__identity_of_another_cluster),
)
