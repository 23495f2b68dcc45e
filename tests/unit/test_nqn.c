/* SPDX-License-Identifier: MIT */
/* Unit tests for orchestrator/nqn: the NVMe naming rules. */
#include <errno.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "orchestrator/spec/nqn.h"

static void good(const char *nqn)
{
	struct ln_buf err = LN_BUF_INIT;

	if (ln_nqn_check(nqn, &err))
		fail_msg("'%s' refused: %s", nqn, err.buf);
	ln_buf_release(&err);
}

static void bad(const char *nqn, const char *msg)
{
	struct ln_buf err = LN_BUF_INIT;

	assert_int_equal(ln_nqn_check(nqn, &err), -EINVAL);
	assert_string_equal(err.buf, msg);
	ln_buf_release(&err);
}

static void test_nqn__accepts_both_forms(void **state)
{
	(void)state;
	good("nqn.2024-04.com.example:te1.target1");
	good("nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6");
	good("nqn.1994-11.com.samsung:nvme:PM1725a:HHHL:S3RVNA0J000001");
	good("nqn.2024-12.io.x-y:a_b+c-d.e");
}

static void test_nqn__length_limit(void **state)
{
	char name[300];

	(void)state;
	/* exactly 223 bytes is allowed, 224 is not */
	strcpy(name, "nqn.2024-04.com.example:");
	memset(name + strlen(name), 'x', 223 - strlen(name));
	name[223] = '\0';
	good(name);
	strcat(name, "y");
	bad(name, "nqn 'nqn.2024-04.com.example:xxxxxxxxxxxxxxxx...' is 224 bytes long "
		  "(the limit is 223)");
}

static void test_nqn__rules(void **state)
{
	(void)state;
	bad("iqn.2024-04.com.example:t", "nqn 'iqn.2024-04.com.example:t' does not start with 'nqn.'");
	bad("nqn.24-04.com.example:t", "nqn 'nqn.24-04.com.example:t' lacks the 'nqn.yyyy-mm.' date");
	bad("nqn.2024-13.com.example:t", "nqn 'nqn.2024-13.com.example:t' has an impossible date '2024-13'");
	bad("nqn.2024-00.com.example:t", "nqn 'nqn.2024-00.com.example:t' has an impossible date '2024-00'");
	bad("nqn.2024-04.example:t",
	    "nqn 'nqn.2024-04.example:t' has a bad reverse domain 'example' (at least two labels)");
	bad("nqn.2024-04.com..example:t",
	    "nqn 'nqn.2024-04.com..example:t' has a bad reverse domain 'com..example'");
	bad("nqn.2024-04.com.-x:t", "nqn 'nqn.2024-04.com.-x:t' has a bad reverse domain 'com.-x'");
	bad("nqn.2024-04.com.ex_ample:t", "nqn 'nqn.2024-04.com.ex_ample:t' has '_' in its reverse domain");
	bad("nqn.2024-04.com.example", "nqn 'nqn.2024-04.com.example' has no ':' after the reverse domain");
	bad("nqn.2024-04.com.example:", "nqn 'nqn.2024-04.com.example:' has nothing after ':'");
	bad("nqn.2024-04.com.example:a/b", "nqn 'nqn.2024-04.com.example:a/b' has '/' in its name");
	bad("nqn.2024-04.com.example:a b", "nqn 'nqn.2024-04.com.example:a b' has byte 0x20 in its name");
	bad("nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765",
	    "nqn 'nqn.2014-08.org.nvmexpress:uuid:f81d4fae-7dec-11d0-a765' has a malformed uuid");
	bad("nqn.2014-08.org.nvmexpress.discovery",
	    "nqn 'nqn.2014-08.org.nvmexpress.discovery' is the discovery NQN, not a subsystem's");
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_nqn__accepts_both_forms),
	cmocka_unit_test(test_nqn__length_limit),
	cmocka_unit_test(test_nqn__rules),
)
