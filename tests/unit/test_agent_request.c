// SPDX-License-Identifier: MIT
/*
 * The agent's request parser (agents/agent/core/request*.c) on its own: the
 * wording of its refusals (issue 12, point 10), values it must refuse, and
 * the cost of its duplicate checks on large requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "tests/unit/cmocka.h"
#include "tests/unit/agent_fixture.h"

#include "agents/agent/core/request.h"
#include "common/buf.h"
#include "common/dhchap.h"
#include "common/error.h"
#include "common/proto.h"

/* Parse text; the refusal's message in err. Returns the parser's code. */
static int parse(const char *text, struct ln_buf *err)
{
	struct ln_request rq;
	int r;

	ln_buf_reset(err);
	r = ln_request_parse(text, strlen(text), &rq, err);
	ln_request_release(&rq);
	return r;
}

#define K1 "DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGt:"
#define K2 "DHHC-1:00:QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkK9MX0g:"
/* K1 with its CRC's last character changed */
#define KBAD "DHHC-1:00:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUEebzGu:"
#define HA "nqn.2014-08.org.example:a"
#define HB "nqn.2014-08.org.example:b"

/* A request with one target (hosts a and b) whose dhchap is d, then more. */
static const char *dh_req(const char *d, const char *more)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.x:t\","
		 "\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,"
		 "\"hosts\":[\"" HA "\",\"" HB "\"],\"dhchap\":%s}%s]}", d, more);
	return buf;
}

/* Refused with exactly msg, which never holds a secret's characters. */
static void refused(const char *text, const char *msg)
{
	struct ln_buf err = LN_BUF_INIT;

	assert_int_equal(parse(text, &err), -LN_EREQUEST);
	assert_string_equal(err.buf, msg);
	assert_null(strstr(err.buf, "QUFBQUFB"));
	assert_null(strstr(err.buf, "QkJCQkJC"));
	ln_buf_release(&err);
}

static void test_agent_request__dhchap_fields(void **state)
{
	const char *both = "{\"hash\":\"sha384\",\"dhgroup\":\"ffdhe2048\",\"keys\":["
			   "{\"host\":\"" HB "\",\"key\":\"" K2 "\"},"
			   "{\"host\":\"" HA "\",\"key\":\"" K1 "\",\"ctrl_key\":\"" K2 "\"}]}";
	struct ln_request rq;
	struct ln_buf err = LN_BUF_INIT;
	const char *text = dh_req(both, "");

	(void)state;
	assert_int_equal(ln_request_parse(text, strlen(text), &rq, &err), 0);
	assert_string_equal(rq.targets[0].dh_hash, "hmac(sha384)");
	assert_string_equal(rq.targets[0].dh_group, "ffdhe2048");
	/* keys[j] belongs to hosts[j], whatever order the entries come in */
	assert_string_equal(rq.targets[0].keys[0].key, K1);
	assert_string_equal(rq.targets[0].keys[0].ctrl_key, K2);
	assert_string_equal(rq.targets[0].keys[1].key, K2);
	assert_null(rq.targets[0].keys[1].ctrl_key);
	ln_request_release(&rq);
	text = "{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":\"nqn.2024-04.x:t\","
	       "\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,"
	       "\"dhchap\":{\"secret\":\"" K1 "\",\"ctrl_secret\":\"" K2 "\"}}]}";
	assert_int_equal(ln_request_parse(text, strlen(text), &rq, &err), 0);
	assert_string_equal(rq.inits[0].secret, K1);
	assert_string_equal(rq.inits[0].ctrl_secret, K2);
	ln_request_release(&rq);
	ln_buf_release(&err);
}

static void test_agent_request__dhchap_refusals_name_no_secret(void **state)
{
	struct ln_buf why = LN_BUF_INIT, msg = LN_BUF_INIT;
	const char *two = "\"keys\":[{\"host\":\"" HA "\",\"key\":\"" K1 "\"},"
			  "{\"host\":\"" HB "\",\"key\":\"" K1 "\"}]}";
	char d[2048];

	(void)state;
	/* a malformed secret: the checker's reason, never the secret */
	assert_true(ln_dhchap_check(KBAD, &why) < 0);
	ln_buf_addf(&msg, "request: targets[0].dhchap.keys[0]: 'key' is not a valid DH-HMAC-CHAP "
		    "secret: %s", why.buf);
	refused(dh_req("{\"hash\":\"sha256\",\"dhgroup\":\"null\",\"keys\":[{\"host\":\"" HA "\","
		       "\"key\":\"" KBAD "\"},{\"host\":\"" HB "\",\"key\":\"" K1 "\"}]}", ""),
		msg.buf);
	/* the old fields are gone */
	refused(dh_req("{\"key_file\":\"/etc/k\"}", ""),
		"request: targets[0].dhchap: unknown field 'key_file' (allowed: hash dhgroup keys)");
	snprintf(d, sizeof(d), "{\"hash\":\"md5\",\"dhgroup\":\"null\",%s", two);
	refused(dh_req(d, ""), "request: targets[0].dhchap: hash 'md5' must be sha256, sha384 or "
			       "sha512");
	snprintf(d, sizeof(d), "{\"hash\":\"sha256\",\"dhgroup\":\"ffdhe1024\",%s", two);
	refused(dh_req(d, ""), "request: targets[0].dhchap: dhgroup 'ffdhe1024' must be null or "
			       "ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144, ffdhe8192");
	/* one entry per host, no more, no less */
	refused(dh_req("{\"hash\":\"sha256\",\"dhgroup\":\"null\",\"keys\":[{\"host\":\"" HA "\","
		       "\"key\":\"" K1 "\"}]}", ""),
		"request: targets[0].dhchap: host '" HB "' has no keys entry");
	refused(dh_req("{\"hash\":\"sha256\",\"dhgroup\":\"null\",\"keys\":[{\"host\":\"" HA "\","
		       "\"key\":\"" K1 "\"},{\"host\":\"" HA "\",\"key\":\"" K2 "\"}]}", ""),
		"request: targets[0].dhchap.keys[1]: host '" HA "' has two keys entries");
	/* a secret where the host goes is not echoed */
	refused(dh_req("{\"hash\":\"sha256\",\"dhgroup\":\"null\",\"keys\":[{\"host\":\"" K1 "\","
		       "\"key\":\"" K1 "\"}]}", ""),
		"request: targets[0].dhchap.keys[0]: host '(invalid NQN)' is not one of the "
		"target's hosts");
	/* hosts "any" cannot be keyed */
	refused("{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.x:t\","
		"\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,\"hosts\":\"any\","
		"\"dhchap\":{\"hash\":\"sha256\",\"dhgroup\":\"null\",\"keys\":[]}}]}",
		"request: targets[0].dhchap: DH-HMAC-CHAP needs a list of hosts: it cannot go with "
		"hosts \"any\"");
	/* two targets of the node, one host entry: the same settings or none */
	snprintf(d, sizeof(d), "{\"hash\":\"sha256\",\"dhgroup\":\"null\",%s", two);
	refused(dh_req(d, ",{\"nqn\":\"nqn.2024-04.x:u\",\"transport\":\"tcp\",\"address\":"
			  "\"10.0.0.1\",\"service\":4420,\"hosts\":[\"" HA "\"]}"),
		"request: targets 'nqn.2024-04.x:t' and 'nqn.2024-04.x:u' ask different "
		"DH-HMAC-CHAP settings or secrets for host '" HA "' (nvmet keeps them on the host "
		"entry, one per node)");
	/* a TLS target and a plain one may allow one host keyed alike: the
	 * PSK is the keyring's, not the host entry's (the control: a
	 * different DH-HMAC-CHAP secret beside it is still refused) */
	{
		static const char tls_pair[] =
			"{\"protocol\":3,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.x:t\","
			"\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,\"hosts\":"
			"[\"" HA "\"],\"dhchap\":{\"hash\":\"sha256\",\"dhgroup\":\"null\",\"keys\":"
			"[{\"host\":\"" HA "\",\"key\":\"" K1 "\"}]}},{\"nqn\":\"nqn.2024-04.x:u\","
			"\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4421,"
			"\"tls\":\"required\",\"hosts\":[\"" HA "\"],\"dhchap\":{\"hash\":\"sha256\","
			"\"dhgroup\":\"null\",\"keys\":[{\"host\":\"" HA "\",\"key\":\"%s\","
			"\"psk\":\"NVMeTLSkey-1:01:tSY3VcFaqJU/TsU5elbFS+ZxSUs8h9rEvPyr0dNSlqeWiDyN:\"}]}}]}";
		struct ln_buf e = LN_BUF_INIT;
		char req[2048];

		snprintf(req, sizeof(req), tls_pair, K1);
		if (parse(req, &e) != 0)
			fail_msg("%s", e.buf);
		snprintf(req, sizeof(req), tls_pair, K2);
		refused(req, "request: targets 'nqn.2024-04.x:t' and 'nqn.2024-04.x:u' ask different "
			"DH-HMAC-CHAP settings or secrets for host '" HA "' (nvmet keeps them on "
			"the host entry, one per node)");
		ln_buf_release(&e);
	}
	/* an initiator's malformed secret */
	ln_buf_reset(&msg);
	ln_buf_addf(&msg, "request: initiators[0].dhchap: 'ctrl_secret' is not a valid "
		    "DH-HMAC-CHAP secret: %s", why.buf);
	refused("{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[{\"target\":\"nqn.2024-04.x:t\","
		"\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,"
		"\"dhchap\":{\"secret\":\"" K1 "\",\"ctrl_secret\":\"" KBAD "\"}}]}", msg.buf);
	ln_test_release(&why, &msg);
}

/* Stable identity fields: their forms, checked before anything is read. */
static void test_agent_request__identity_fields(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	const char *t = "{\"protocol\":3,\"cluster\":\"c\",\"targets\":[{\"nqn\":\"nqn.2024-04.x:t\","
			"\"transport\":\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,"
			"\"hosts\":\"any\",";
	char buf[1024];

	(void)state;
	snprintf(buf, sizeof(buf), "%s\"serial\":\"4ab77e6f2e6e0c3c\",\"namespaces\":[{\"nsid\":1,"
		 "\"device\":\"/dev/sdb\",\"uuid\":\"5d2eb3e6-70a2-8a05-bd50-acf5a20db507\","
		 "\"nguid\":\"5ebc4145-9fc2-fe91-6f81-692ccdc71166\"}]}]}", t);
	assert_int_equal(parse(buf, &err), 0);
	snprintf(buf, sizeof(buf), "%s\"serial\":\"4AB77E6F2E6E0C3C\"}]}", t);
	refused(buf, "request: targets[0]: serial '4AB77E6F2E6E0C3C' must be 16 lower-case hex "
		     "digits");
	snprintf(buf, sizeof(buf), "%s\"serial\":\"4ab77e6f2e6e0c3c0\"}]}", t);
	refused(buf, "request: targets[0]: serial '4ab77e6f2e6e0c3c0' must be 16 lower-case hex "
		     "digits");
	snprintf(buf, sizeof(buf), "%s\"serial\":4}]}", t);
	assert_int_equal(parse(buf, &err), -LN_EREQUEST);
	snprintf(buf, sizeof(buf), "%s\"namespaces\":[{\"nsid\":1,\"device\":\"/dev/sdb\","
		 "\"uuid\":\"5d2eb3e670a28a05bd50acf5a20db507\"}]}]}", t);
	refused(buf, "request: targets[0].namespaces[0]: uuid '5d2eb3e670a28a05bd50acf5a20db507' "
		     "must be 8-4-4-4-12 lower-case hex digits, not all zero");
	snprintf(buf, sizeof(buf), "%s\"namespaces\":[{\"nsid\":1,\"device\":\"/dev/sdb\","
		 "\"nguid\":\"00000000-0000-0000-0000-000000000000\"}]}]}", t);
	refused(buf, "request: targets[0].namespaces[0]: nguid '00000000-0000-0000-0000-000000000000' "
		     "must be 8-4-4-4-12 lower-case hex digits, not all zero");
	snprintf(buf, sizeof(buf), "%s\"namespaces\":[{\"nsid\":1,\"device\":\"/dev/sdb\","
		 "\"nguid\":\"5ebc4145-9fc2-fe91-6f81-692ccdc7116g\"}]}]}", t);
	refused(buf, "request: targets[0].namespaces[0]: nguid '5ebc4145-9fc2-fe91-6f81-692ccdc7116g' "
		     "must be 8-4-4-4-12 lower-case hex digits, not all zero");
	ln_buf_release(&err);
}

/* A target's hosts[] may list an NQN holding ',' or '=' (one already in
 * the subsystem's allowed_hosts: configfs takes it, and the orchestrator
 * keeps what is there): only this node's own host NQN, which goes into the
 * connect's option string, may not. */
static void test_agent_request__target_host_nqn_with_comma(void **state)
{
	struct ln_buf err = LN_BUF_INIT;

	(void)state;
	assert_int_equal(parse("{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":"
			       "\"nqn.2024-04.x:t\",\"transport\":\"tcp\",\"address\":\"10.0.0.1\","
			       "\"service\":4420,\"hosts\":[\"nqn.2014-08.org.example:a,b=c\"]}]}",
			       &err), 0);
	assert_int_equal(parse("{\"protocol\":1,\"cluster\":\"c\",\"targets\":[{\"nqn\":"
			       "\"nqn.2024-04.x:t\",\"transport\":\"tcp\",\"address\":\"10.0.0.1\","
			       "\"service\":4420,\"hosts\":[\"nqn.2014-08.org.example:a b\"]}]}",
			       &err), -LN_EREQUEST);
	ln_buf_release(&err);
}

static void test_agent_request__request_is_named_once(void **state)
{
	struct ln_buf err = LN_BUF_INIT;

	(void)state;
	assert_true(parse("[]", &err) < 0);
	assert_string_equal(err.buf, "request: expected a JSON object");
	assert_true(parse("{\"protocol\":1}", &err) < 0);
	assert_string_equal(err.buf, "request: missing field 'cluster'");
	assert_true(parse("{\"protocol\":\"x\"}", &err) < 0);
	assert_string_equal(err.buf, "request: field 'protocol' must be int");
	assert_true(parse("{\"protocol\":0}", &err) < 0);
	assert_string_equal(err.buf, "request: 'protocol' must be 1-2147483647, not 0");
	assert_true(parse("{\"protocol\":1,\"cluster\":\"a b\"}", &err) < 0);
	assert_string_equal(err.buf,
			    "request: cluster 'a b' must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}");
	assert_true(parse("{\"protocol\":1,\"cluster\":\"c\",\"targets\":3}", &err) < 0);
	assert_string_equal(err.buf, "request: 'targets' must be a list");
	/* a part of the request keeps its name */
	assert_true(parse("{\"protocol\":1,\"cluster\":\"c\",\"hostfile\":{\"path\":\"x\","
			  "\"format\":\"openmpi\",\"lines\":[]}}", &err) < 0);
	assert_string_equal(err.buf,
			    "request: hostfile: path 'x' must be an absolute, normalized path");
	ln_buf_release(&err);
}

static void test_agent_request__nul_in_a_value_is_refused(void **state)
{
	struct ln_buf err = LN_BUF_INIT;

	(void)state;
	/* "a\u0000b" read as C is "a", a valid cluster name */
	assert_int_equal(parse("{\"protocol\":1,\"cluster\":\"a\\u0000b\"}", &err),
			 -LN_EREQUEST);
	assert_string_equal(err.buf, "request: value of 'cluster' holds a NUL byte");
	assert_int_equal(parse("{\"protocol\":1,\"cluster\":\"c\",\"hostfile\":{\"path\":"
			       "\"/etc/llmnet/h\\u0000x\",\"format\":\"openmpi\","
			       "\"lines\":[]}}", &err),
			 -LN_EREQUEST);
	assert_string_equal(err.buf, "request: value of 'path' holds a NUL byte");
	assert_int_equal(parse("{\"protocol\":1,\"cluster\":\"c\",\"hostfile\":{\"path\":"
			       "\"/etc/llmnet/h\",\"format\":\"openmpi\",\"lines\":[{\"name\":"
			       "\"n1\\u0000; rm\",\"slots\":1}]}}", &err),
			 -LN_EREQUEST);
	assert_string_equal(err.buf, "request: value of 'name' holds a NUL byte");
	/* without the NUL, the same request passes */
	assert_int_equal(parse("{\"protocol\":1,\"cluster\":\"ab\"}", &err), 0);
	ln_buf_release(&err);
}

/* The agent's answer to in: valid JSON, made only of well-formed UTF-8. */
static void answer_is_valid_json(const char *in, const char *want_message)
{
	char tmpl[] = "/tmp/llmnet-agent-test.XXXXXX";
	const char *args[] = { "plan", NULL };
	struct ln_buf out = LN_BUF_INIT;
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o, *e, *m;
	char *root = mkdtemp(tmpl);

	assert_non_null(root);
	assert_int_equal(fx_agent(root, args, in, &out, NULL, NULL), LN_AGENT_EXIT_REQUEST);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, out.buf, (int)out.len);
	if (!o)
		fail_msg("not valid JSON (%s): %s",
			 json_tokener_error_desc(json_tokener_get_error(tok)), out.buf);
	assert_true(json_object_object_get_ex(o, "error", &e));
	assert_true(json_object_object_get_ex(e, "message", &m));
	assert_string_equal(json_object_get_string(m), want_message);
	json_object_put(o);
	json_tokener_free(tok);
	ln_buf_release(&out);
	rmdir(root);
}

static void test_agent_request__answer_to_non_utf8_is_valid_json(void **state)
{
	(void)state;
	answer_is_valid_json("{\"protocol\":1,\"cluster\":\"\xff\xfe\"}",
			     "request: cluster '\xef\xbf\xbd\xef\xbf\xbd' must match "
			     "[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
	/* an overlong NUL, a lone continuation byte, a cut-off sequence at the end */
	answer_is_valid_json("{\"protocol\":1,\"cluster\":\"x\xc0\x80" "y\x80" "z\xe2\x82\"}",
			     "request: cluster 'x\xef\xbf\xbd\xef\xbf\xbd" "y\xef\xbf\xbd" "z"
			     "\xef\xbf\xbd\xef\xbf\xbd' must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}");
	/* well-formed UTF-8 is kept as it is */
	answer_is_valid_json("{\"protocol\":1,\"cluster\":\"gr\xc3\xbc\xc3\x9f" "e\"}",
			     "request: cluster 'gr\xc3\xbc\xc3\x9f" "e' must match "
			     "[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
}

#define TARGET_HEAD "{\"nqn\":\"nqn.2024-01.io.llmnet:t%zu\",\"transport\":\"tcp\"," \
		    "\"address\":\"10.0.0.1\",\"service\":4420,\"hosts\":"

/* n distinct hosts of one target, then host 0 again: the duplicate is found
 * and named at this size (no timing here: tests judge results, not speed). */
static void test_agent_request__duplicate_checks_scale(void **state)
{
	const size_t n = 40000;
	struct ln_buf req = LN_BUF_INIT, err = LN_BUF_INIT;
	size_t i;

	(void)state;
	ln_buf_init(&req, 16 << 20);
	ln_buf_addf(&req, "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[" TARGET_HEAD "[",
		    (size_t)0);
	for (i = 0; i < n; i++)
		ln_buf_addf(&req, "\"nqn.2024-01.io.llmnet:h%zu\",", i);
	ln_buf_addstr(&req, "\"nqn.2024-01.io.llmnet:h0\"]}]}");
	assert_int_equal(parse(req.buf, &err), -LN_EREQUEST);
	assert_string_equal(err.buf,
			    "request: targets[0]: host 'nqn.2024-01.io.llmnet:h0' is listed twice");

	/* the same for targets, namespaces and mount paths: the later one is named */
	ln_buf_reset(&req);
	ln_buf_addstr(&req, "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[");
	for (i = 0; i < n; i++)
		ln_buf_addf(&req, TARGET_HEAD "\"any\"},", i);
	ln_buf_addf(&req, TARGET_HEAD "\"any\"}]}", (size_t)7);
	assert_int_equal(parse(req.buf, &err), -LN_EREQUEST);
	assert_string_equal(err.buf,
			    "request: targets[40000]: target 'nqn.2024-01.io.llmnet:t7' is listed twice");

	ln_buf_reset(&req);
	ln_buf_addf(&req, "{\"protocol\":1,\"cluster\":\"c\",\"targets\":[" TARGET_HEAD
		    "\"any\",\"namespaces\":[{\"nsid\":1,\"device\":\"/dev/a\"},"
		    "{\"nsid\":2,\"device\":\"/dev/b\"},{\"nsid\":1,\"device\":\"/dev/c\"}]}]}",
		    (size_t)0);
	assert_int_equal(parse(req.buf, &err), -LN_EREQUEST);
	assert_string_equal(err.buf, "request: targets[0].namespaces[2]: nsid 1 is used twice");

	ln_buf_reset(&req);
	ln_buf_addstr(&req, "{\"protocol\":1,\"cluster\":\"c\",\"initiators\":[");
	for (i = 0; i < 3; i++)
		ln_buf_addf(&req, "%s{\"target\":\"nqn.2024-01.io.llmnet:t%zu\",\"transport\":"
			    "\"tcp\",\"address\":\"10.0.0.1\",\"service\":4420,\"mount\":"
			    "{\"path\":\"/mnt/%s\",\"fs\":\"xfs\"}}", i ? "," : "", i,
			    i == 1 ? "b" : "a");
	ln_buf_addstr(&req, "]}");
	assert_int_equal(parse(req.buf, &err), -LN_EREQUEST);
	assert_string_equal(err.buf, "request: initiators[2]: mount path '/mnt/a' is used twice");
	ln_test_release(&req, &err);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_agent_request__request_is_named_once),
	cmocka_unit_test(test_agent_request__dhchap_fields),
	cmocka_unit_test(test_agent_request__dhchap_refusals_name_no_secret),
	cmocka_unit_test(test_agent_request__nul_in_a_value_is_refused),
	cmocka_unit_test(test_agent_request__identity_fields),
	cmocka_unit_test(test_agent_request__target_host_nqn_with_comma),
	cmocka_unit_test(test_agent_request__answer_to_non_utf8_is_valid_json),
	cmocka_unit_test(test_agent_request__duplicate_checks_scale),
)
