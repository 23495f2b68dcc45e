/* SPDX-License-Identifier: MIT */
/* Unit tests for common/frame.c: the agent session's framing, both ends. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/frame.h"
#include "common/proto.h"

/* An input held in memory, handed out at most `step` bytes per read. */
struct input {
	const char *p;
	size_t len, pos, step;
	int fail_at;	/* >= 0: the read at this position fails */
};

static int rd(void *ctx, void *p, size_t n, struct ln_buf *err)
{
	struct input *in = ctx;
	size_t k = in->len - in->pos;

	if (in->fail_at >= 0 && in->pos >= (size_t)in->fail_at) {
		ln_buf_addstr(err, "connection broke");
		return -EPIPE;
	}
	if (k > n)
		k = n;
	if (in->step && k > in->step)
		k = in->step;
	memcpy(p, in->p + in->pos, k);
	in->pos += k;
	return (int)k;
}

static struct input input_of(const char *s, size_t step)
{
	struct input in = { s, strlen(s), 0, step, -1 };

	return in;
}

static void test_frame__round_trip(void **state)
{
	struct ln_buf out = LN_BUF_INIT, got = LN_BUF_INIT, err = LN_BUF_INIT;
	struct input in;

	(void)state;
	assert_int_equal(ln_frame_put(&out, "{\"verb\":\"version\"}", 18), 0);
	assert_int_equal(ln_frame_put(&out, "{}", 2), 0);
	assert_string_equal(out.buf, "18\n{\"verb\":\"version\"}2\n{}");
	in = input_of(out.buf, 0);
	assert_int_equal(ln_frame_read(rd, &in, 1024, &got, &err), 0);
	assert_string_equal(got.buf, "{\"verb\":\"version\"}");
	assert_int_equal(ln_frame_read(rd, &in, 1024, &got, &err), 0);
	assert_string_equal(got.buf, "{}");
	/* the input ends between frames: a clean end, no error */
	assert_int_equal(ln_frame_read(rd, &in, 1024, &got, &err), 1);
	assert_int_equal(got.len, 0);
	assert_string_equal(err.buf, "");
	ln_test_release(&out, &got, &err);
}

static void test_frame__byte_by_byte_reads_stop_at_the_frame(void **state)
{
	struct ln_buf got = LN_BUF_INIT, err = LN_BUF_INIT;
	struct input in = input_of("5\nhello7\n", 1);

	(void)state;
	assert_int_equal(ln_frame_read(rd, &in, 1024, &got, &err), 0);
	assert_string_equal(got.buf, "hello");
	/* nothing of the next frame was consumed */
	assert_int_equal(in.pos, 7);
	ln_test_release(&got, &err);
}

/* One read of text (step bytes a call, 0: all) with at most max bytes is
 * refused with rc, and the message holds has (NULL: any message). */
static void refused(const char *text, size_t step, size_t max, int rc, const char *has)
{
	struct ln_buf got = LN_BUF_INIT, err = LN_BUF_INIT;
	struct input in = input_of(text, step);

	assert_int_equal(ln_frame_read(rd, &in, max, &got, &err), rc);
	if (has && !strstr(err.buf, has))
		fail_msg("'%s' not in '%s'", has, err.buf);
	ln_test_release(&got, &err);
}

static void test_frame__garbage_is_refused(void **state)
{
	(void)state;
	refused("{\"verb\":\"version\"}", 0, 1024, -EBADMSG,
		"malformed frame header: byte 0x7b after 0 digits");
	refused("12x\n", 0, 1024, -EBADMSG, "byte 0x78 after 2 digits");
	refused("\n{}", 0, 1024, -EBADMSG, NULL);
	refused("-2\n{}", 0, 1024, -EBADMSG, NULL);
	refused("00000000001\nx", 0, 1024, -EBADMSG, "more than 10 digits");
}

static void test_frame__oversized_is_refused_unread(void **state)
{
	struct ln_buf got = LN_BUF_INIT, err = LN_BUF_INIT;
	struct input in = input_of("1025\n{\"a\":1}", 0);

	(void)state;
	assert_int_equal(ln_frame_read(rd, &in, 1024, &got, &err), -EMSGSIZE);
	assert_string_equal(err.buf, "oversized frame: 1025 bytes, at most 1024 allowed");
	/* only the header was read */
	assert_int_equal(in.pos, 5);
	assert_int_equal(got.len, 0);
	refused("9999999999\n", 0, LN_FRAME_REQUEST_MAX, -EMSGSIZE, NULL);
	/* exactly max is allowed */
	in = input_of("4\nabcd", 0);
	assert_int_equal(ln_frame_read(rd, &in, 4, &got, &err), 0);
	assert_string_equal(got.buf, "abcd");
	ln_test_release(&got, &err);
}

static void test_frame__truncated_is_refused(void **state)
{
	(void)state;
	refused("100\n{\"verb\":", 3, 1024, -ENODATA,
		"truncated frame: the input ended after 8 of 100 bytes");
	refused("12", 0, 1024, -ENODATA, "inside the header");
}

static void test_frame__reader_errors_pass_through(void **state)
{
	struct ln_buf got = LN_BUF_INIT, err = LN_BUF_INIT;
	struct input in = input_of("10\n0123456789", 1);

	(void)state;
	in.fail_at = 5;
	assert_int_equal(ln_frame_read(rd, &in, 1024, &got, &err), -EPIPE);
	assert_string_equal(err.buf, "connection broke");
	ln_test_release(&got, &err);
}

static void test_frame__put_fails_whole(void **state)
{
	struct ln_buf out;

	(void)state;
	ln_buf_init(&out, 8);
	assert_int_equal(ln_frame_put(&out, "abc", 3), 0);
	assert_string_equal(out.buf, "3\nabc");
	/* "3\nabc" fits, "3\nabc" again does not: nothing of it is kept */
	assert_int_equal(ln_frame_put(&out, "abc", 3), -E2BIG);
	assert_string_equal(out.buf, "3\nabc");
	ln_buf_release(&out);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_frame__round_trip),
	cmocka_unit_test(test_frame__byte_by_byte_reads_stop_at_the_frame),
	cmocka_unit_test(test_frame__garbage_is_refused),
	cmocka_unit_test(test_frame__oversized_is_refused_unread),
	cmocka_unit_test(test_frame__truncated_is_refused),
	cmocka_unit_test(test_frame__reader_errors_pass_through),
	cmocka_unit_test(test_frame__put_fails_whole),
)
