/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the stable namespace identity (orchestrator/run/nsident.h):
 * known values (computed with Python's hashlib and uuid modules from the
 * same text), the formats nvmet takes, and that every input counts; the
 * apply --accept-device words checked against the spec before any node.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "orchestrator/run/nsident.h"
#include "orchestrator/spec/spec.h"

#define NQN "nqn.2024-04.com.example:te1.target1"

static void test_nsident__known_values(void **st)
{
	char s[LN_SERIAL_LEN + 1], u[LN_UUID_LEN + 1], g[LN_UUID_LEN + 1];

	(void)st;
	ln_nsident_serial("te-lab", NQN, s);
	assert_string_equal(s, "4ab77e6f2e6e0c3c");
	ln_nsident_ns("te-lab", NQN, 1, u, g);
	assert_string_equal(u, "5d2eb3e6-70a2-8a05-bd50-acf5a20db507");
	assert_string_equal(g, "5ebc4145-9fc2-fe91-6f81-692ccdc71166");
	ln_nsident_ns("te-lab", NQN, 4294967294u, u, g);
	assert_string_equal(u, "cd287aad-fbb3-86f0-ba3a-4efcbde37294");
	assert_string_equal(g, "5b61f10b-c9c7-e84e-91f9-86eb628d052f");
	ln_nsident_serial("llmnet-lab", "nqn.2024-04.io.llmnet.lab:lab1.tcp", s);
	assert_string_equal(s, "761c24ebf4a1adc0");
	ln_nsident_ns("llmnet-lab", "nqn.2024-04.io.llmnet.lab:lab1.tcp", 1, u, g);
	assert_string_equal(u, "2c16d43e-af5b-86c2-b151-bc39093ae620");
	assert_string_equal(g, "9791e45e-ab21-87f9-3fe9-a9f8fc002de4");
}

/* 8-4-4-4-12 lower-case hex */
static int uuid_form(const char *s)
{
	size_t i;

	if (strlen(s) != 36)
		return 0;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i])) {
			return 0;
		}
	}
	return 1;
}

static void test_nsident__formats(void **st)
{
	char s[LN_SERIAL_LEN + 1], u[LN_UUID_LEN + 1], g[LN_UUID_LEN + 1];
	uint32_t nsid;
	size_t i;

	(void)st;
	for (nsid = 1; nsid < 200; nsid++) {
		ln_nsident_ns("c", NQN, nsid, u, g);
		assert_true(uuid_form(u));
		assert_true(uuid_form(g));
		assert_int_equal(u[14], '8');	/* RFC 9562 version 8 */
		assert_non_null(strchr("89ab", u[19]));	/* variant 10 */
	}
	ln_nsident_serial("c", NQN, s);
	assert_int_equal(strlen(s), 16);
	for (i = 0; i < 16; i++)
		assert_non_null(strchr("0123456789abcdef", s[i]));
}

/* The same inputs give the same values; each input changes them. */
static void test_nsident__every_input_counts(void **st)
{
	char s1[LN_SERIAL_LEN + 1], s2[LN_SERIAL_LEN + 1];
	char u1[LN_UUID_LEN + 1], g1[LN_UUID_LEN + 1], u2[LN_UUID_LEN + 1], g2[LN_UUID_LEN + 1];

	(void)st;
	ln_nsident_serial("a", NQN, s1);
	ln_nsident_serial("a", NQN, s2);
	assert_string_equal(s1, s2);
	ln_nsident_serial("b", NQN, s2);
	assert_string_not_equal(s1, s2);
	ln_nsident_serial("a", NQN "x", s2);
	assert_string_not_equal(s1, s2);
	ln_nsident_ns("a", NQN, 1, u1, g1);
	ln_nsident_ns("a", NQN, 1, u2, g2);
	assert_string_equal(u1, u2);
	assert_string_equal(g1, g2);
	assert_string_not_equal(u1, g1);
	ln_nsident_ns("a", NQN, 2, u2, g2);
	assert_string_not_equal(u1, u2);
	assert_string_not_equal(g1, g2);
	ln_nsident_ns("b", NQN, 1, u2, g2);
	assert_string_not_equal(u1, u2);
	ln_nsident_ns("a", NQN "x", 1, u2, g2);
	assert_string_not_equal(g1, g2);
}

static const char spec_text[] =
	"version: 1\n"
	"cluster: c\n"
	"nodes:\n"
	"  - { name: n1, address: 127.0.0.1 }\n"
	"  - { name: n2, address: 127.0.0.2 }\n"
	"storage:\n"
	"  targets:\n"
	"    - nqn: nqn.2024-04.io.llmnet:n1.t1\n"
	"      node: n1\n"
	"      transport: tcp\n"
	"      address: 10.77.0.11\n"
	"      namespaces:\n"
	"        - { nsid: 1, device: /dev/nvme0n1 }\n"
	"        - { nsid: 2, file: /var/lib/nvmet/d.img, size: 1MiB }\n"
	"  initiators:\n"
	"    - { node: n2, target: nqn.2024-04.io.llmnet:n1.t1 }\n";

/* One --accept-device word against the spec: 0, or -EINVAL with want in
 * the message. */
static void accept_word(const struct ln_spec *spec, const char *word, const char *want)
{
	struct ln_buf err = LN_BUF_INIT;
	char *w[] = { (char *)word };

	assert_int_equal(ln_nsident_accept_check(spec, w, 1, &err), want ? -EINVAL : 0);
	if (want)
		assert_non_null(strstr(err.buf, want));
	else
		assert_string_equal(err.buf, "");
	ln_buf_release(&err);
}

static void test_nsident__accept_device_words(void **st)
{
	struct ln_buf err = LN_BUF_INIT;
	struct ln_spec *spec = NULL;
	char w1[] = "n1:/dev/nvme0n1", w2[] = "n9:/dev/nvme0n1";
	char *two[] = { w1, w2 };

	(void)st;
	if (ln_spec_load_buf("t.yaml", spec_text, strlen(spec_text), &spec, &err) < 0)
		fail_msg("%s", err.buf);
	accept_word(spec, "n1:/dev/nvme0n1", NULL);
	accept_word(spec, "n9:/dev/nvme0n1", "--accept-device 'n9:/dev/nvme0n1': the spec has no "
					     "node 'n9'");
	accept_word(spec, "n2:/dev/nvme0n1", "no target on node 'n2' has a namespace with device "
					     "'/dev/nvme0n1'");
	accept_word(spec, "n1:/dev/nvme1n1", "no target on node 'n1'");
	/* a file namespace is no device; the path as the spec writes it */
	accept_word(spec, "n1:/var/lib/nvmet/d.img", "no target on node 'n1'");
	accept_word(spec, "n1:/dev//nvme0n1", "no target on node 'n1'");
	accept_word(spec, "/dev/nvme0n1", "takes NODE:PATH");
	accept_word(spec, "n1:", "takes NODE:PATH");
	accept_word(spec, ":/dev/nvme0n1", "takes NODE:PATH");
	/* every word is checked */
	assert_int_equal(ln_nsident_accept_check(spec, two, 1, &err), 0);
	assert_int_equal(ln_nsident_accept_check(spec, two, 2, &err), -EINVAL);
	/* what the requests carry */
	assert_true(ln_nsident_accepted(two, 1, "n1", "/dev/nvme0n1"));
	assert_false(ln_nsident_accepted(two, 1, "n2", "/dev/nvme0n1"));
	assert_false(ln_nsident_accepted(two, 1, "n1", "/dev/nvme0n"));
	assert_false(ln_nsident_accepted(two, 1, "n", "/dev/nvme0n1"));
	assert_false(ln_nsident_accepted(two, 1, "n1", NULL));
	assert_false(ln_nsident_accepted(NULL, 0, "n1", "/dev/nvme0n1"));
	ln_spec_free(spec);
	ln_buf_release(&err);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_nsident__known_values),
	cmocka_unit_test(test_nsident__formats),
	cmocka_unit_test(test_nsident__every_input_counts),
	cmocka_unit_test(test_nsident__accept_device_words))
