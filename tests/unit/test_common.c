/* SPDX-License-Identifier: MIT */
/* Unit tests for common/: buffer, JSON wrapper, atomic files, exit codes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json.h"

static void test_common__buf_append_and_format(void **state)
{
	struct ln_buf b = LN_BUF_INIT;

	(void)state;
	assert_string_equal(b.buf, "");
	assert_int_equal(ln_buf_addstr(&b, "node"), 0);
	assert_int_equal(ln_buf_addf(&b, "%03d", 7), 0);
	assert_string_equal(b.buf, "node007");
	assert_int_equal(b.len, 7);
	ln_buf_setlen(&b, 4);
	assert_string_equal(b.buf, "node");
	ln_buf_release(&b);
	assert_string_equal(b.buf, "");
}

static void test_common__buf_cap_is_all_or_nothing(void **state)
{
	struct ln_buf b;

	(void)state;
	ln_buf_init(&b, 8);
	assert_int_equal(ln_buf_addstr(&b, "12345"), 0);
	assert_int_equal(ln_buf_addstr(&b, "6789"), -E2BIG);
	assert_string_equal(b.buf, "12345");
	assert_int_equal(ln_buf_addf(&b, "%s", "abcd"), -E2BIG);
	assert_int_equal(b.len, 5);
	assert_int_equal(ln_buf_addstr(&b, "678"), 0);
	assert_string_equal(b.buf, "12345678");
	ln_buf_release(&b);
}

static void test_common__json_parse_rejects_trailing_data(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *o = NULL;
	const char *s = "{\"a\":1} x";

	(void)state;
	assert_int_equal(ln_json_parse(s, strlen(s), &o, &err), -LN_EREQUEST);
	assert_null(o);
	assert_non_null(strstr(err.buf, "trailing data"));
	ln_buf_reset(&err);
	assert_int_equal(ln_json_parse("{\"a\":", 5, &o, &err), -LN_EREQUEST);
	assert_non_null(strstr(err.buf, "end of input"));
	ln_buf_release(&err);
}

static void test_common__json_unknown_field_and_types(void **state)
{
	static const char *const allowed[] = { "nqn", "size", NULL };
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *o = NULL;
	const char *str = NULL;
	int64_t n = 0;
	const char *s = "{\"nqn\":\"x\",\"size\":\"big\",\"extra\":1}";

	(void)state;
	assert_int_equal(ln_json_parse(s, strlen(s), &o, &err), 0);
	assert_int_equal(ln_json_check_keys(o, allowed, "target", &err), -LN_EREQUEST);
	assert_string_equal(err.buf, "target: unknown field 'extra'");
	ln_buf_reset(&err);
	assert_int_equal(ln_json_get_str(o, "nqn", 1, &str, &err), 0);
	assert_string_equal(str, "x");
	assert_int_equal(ln_json_get_i64(o, "size", 1, &n, &err), -LN_EREQUEST);
	assert_string_equal(err.buf, "field 'size' must be int");
	assert_int_equal(ln_json_get_i64(o, "nope", 0, &n, &err), -ENOENT);
	json_object_put(o);
	ln_buf_release(&err);
}

static void test_common__json_lenient_lookups(void **state)
{
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *o = NULL;
	const char *s = "{\"rate\":100,\"mtu\":4096.0,\"state\":\"ACTIVE\",\"gid\":null}";
	int64_t n = -1;

	(void)state;
	assert_int_equal(ln_json_parse(s, strlen(s), &o, &err), 0);
	assert_null(ln_json_at(NULL, "rate"));
	assert_null(ln_json_at(o, "missing"));
	assert_string_equal(ln_json_str_at(o, "state"), "ACTIVE");
	assert_null(ln_json_str_at(o, "rate"));
	assert_int_equal(ln_json_i64_at(o, "rate", &n), 0);
	assert_int_equal(n, 100);
	assert_int_equal(ln_json_i64_at(o, "mtu", &n), 0);
	assert_int_equal(n, 4096);
	assert_int_equal(ln_json_i64_at(o, "state", &n), -ENOENT);
	assert_int_equal(ln_json_i64_at(o, "gid", &n), -ENOENT);
	assert_int_equal(n, 4096);
	json_object_put(o);
	ln_buf_release(&err);
}

static void test_common__atomic_write_replaces_whole_file(void **state)
{
	struct ln_buf err = LN_BUF_INIT, got = LN_BUF_INIT;
	char dir[] = "/tmp/ln-test-XXXXXX", path[256];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b/hostfile", dir);
	assert_int_equal(ln_mkdir_p(dir, 0755, &err), 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	assert_int_equal(ln_mkdir_p(path, 0700, &err), 0);
	snprintf(path, sizeof(path), "%s/a/b/hostfile", dir);
	assert_int_equal(ln_file_write_atomic(path, "old\n", 4, 0644, &err), 0);
	assert_int_equal(ln_file_write_atomic(path, "te1 slots=2\n", 12, 0600, &err), 0);
	assert_int_equal(ln_file_read(path, &got, &err), 0);
	assert_string_equal(got.buf, "te1 slots=2\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(ln_file_read("/nonexistent/x", &got, &err), -ENOENT);
	assert_non_null(strstr(err.buf, "cannot open '/nonexistent/x'"));
	unlink(path);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
	ln_test_release(&err, &got);
}

static void test_common__exit_merge_highest_wins(void **state)
{
	(void)state;
	assert_int_equal(ln_exit_merge(LN_EXIT_FAILED, LN_EXIT_AGENT), LN_EXIT_AGENT);
	assert_int_equal(ln_exit_merge(LN_EXIT_UNREACHABLE, LN_EXIT_SPEC), LN_EXIT_UNREACHABLE);
	assert_int_equal(ln_exit_merge(LN_EXIT_CHANGES, LN_EXIT_FAILED), LN_EXIT_FAILED);
	assert_int_equal(ln_exit_merge(LN_EXIT_OK, LN_EXIT_CHANGES), LN_EXIT_CHANGES);
	assert_int_equal(ln_exit_merge(LN_EXIT_OK, LN_EXIT_OK), LN_EXIT_OK);
	assert_string_equal(ln_strerror(-LN_ETIMEOUT), "timed out");
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_common__buf_append_and_format),
	cmocka_unit_test(test_common__buf_cap_is_all_or_nothing),
	cmocka_unit_test(test_common__json_parse_rejects_trailing_data),
	cmocka_unit_test(test_common__json_unknown_field_and_types),
	cmocka_unit_test(test_common__json_lenient_lookups),
	cmocka_unit_test(test_common__atomic_write_replaces_whole_file),
	cmocka_unit_test(test_common__exit_merge_highest_wins),
)
