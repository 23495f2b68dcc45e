/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for common/buf.c's secret buffers. The binary is linked with
 * --wrap for malloc, realloc and free (LDFLAGS_test_buf in the Makefile):
 * the wrappers look into every block handed back to the allocator for the
 * secret, and realloc always moves (a realloc() may), so a secret left in
 * a block the buffer gave up is seen whatever glibc would have done.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/fileio.h"
#include "common/frame.h"

void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

static const char *watch;	/* the secret looked for; NULL: none */
static int leaked;		/* blocks given back that still held it */
static int reallocs;		/* realloc() calls on a block */
static int fail_malloc;		/* the next malloc fails */

static void given_back(void *p)
{
	if (p && watch && memmem(p, malloc_usable_size(p), watch, strlen(watch)))
		leaked++;
}

void *__wrap_malloc(size_t n)
{
	if (fail_malloc) {
		fail_malloc = 0;
		return NULL;
	}
	return __real_malloc(n);
}

void *__wrap_realloc(void *p, size_t n)
{
	size_t have;
	void *q;

	if (!p)
		return __wrap_malloc(n);
	reallocs++;
	q = __wrap_malloc(n);
	if (!q)
		return NULL;
	have = malloc_usable_size(p);
	memcpy(q, p, have < n ? have : n);
	given_back(p);
	__real_free(p);
	return q;
}

void __wrap_free(void *p)
{
	given_back(p);
	__real_free(p);
}

static void watch_for(const char *s)
{
	watch = s;
	leaked = 0;
	reallocs = 0;
}

/* A secret added first, then enough more to move the block many times. */
static void fill(struct ln_buf *b, const char *secret)
{
	int i;

	assert_int_equal(ln_buf_addstr(b, secret), 0);
	for (i = 0; i < 200; i++)
		assert_int_equal(ln_buf_addf(b, ",opt%03d=%d", i, i), 0);
	assert_int_equal(strncmp(b->buf, secret, strlen(secret)), 0);
}

static void test_buf__secret_growth_leaves_no_copy(void **state)
{
	const char *secret = "DHHC-1:00:c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0Og==:";
	struct ln_buf b = LN_BUF_INIT_SECRET, c;

	(void)state;
	watch_for(secret);
	fill(&b, secret);
	assert_int_equal(reallocs, 0);
	assert_int_equal(leaked, 0);
	ln_buf_release(&b);
	assert_int_equal(leaked, 0);
	assert_int_equal(b.secret, 1);	/* still secret when reused */
	fill(&b, secret);
	ln_buf_release(&b);
	assert_int_equal(leaked, 0);

	ln_buf_init_secret(&c, 0);
	fill(&c, secret);
	ln_buf_release(&c);
	assert_int_equal(reallocs, 0);
	assert_int_equal(leaked, 0);
	watch_for(NULL);
}

/* The check sees a leak where there is one: a plain buffer grows with
 * realloc, and the moved-from block still holds what was in it. */
static void test_buf__plain_growth_still_reallocs(void **state)
{
	const char *text = "not-a-secret-but-watched-all-the-same";
	struct ln_buf b = LN_BUF_INIT;

	(void)state;
	watch_for(text);
	fill(&b, text);
	assert_true(reallocs > 0);
	assert_true(leaked > 0);
	ln_buf_release(&b);
	watch_for(NULL);
}

static void test_buf__secret_reset_and_setlen_wipe(void **state)
{
	struct ln_buf b = LN_BUF_INIT_SECRET;
	char *p;
	size_t i;

	(void)state;
	assert_int_equal(ln_buf_addstr(&b, "public,psk=SECRETPSK\n \t"), 0);
	p = b.buf;
	ln_buf_rtrim(&b);
	assert_string_equal(b.buf, "public,psk=SECRETPSK");
	for (i = b.len; i < 24; i++)
		assert_int_equal(p[i], 0);
	ln_buf_setlen(&b, 6);
	assert_string_equal(b.buf, "public");
	for (i = 6; i < 24; i++)
		assert_int_equal(p[i], 0);
	assert_int_equal(ln_buf_addstr(&b, "SECRETPSK"), 0);
	assert_ptr_equal(b.buf, p);
	ln_buf_reset(&b);
	for (i = 0; i < 24; i++)
		assert_int_equal(p[i], 0);
	ln_buf_release(&b);
}

/* All or nothing holds for a secret buffer: a failed move keeps the old
 * block and its contents, and the cap is the cap. */
static void test_buf__secret_append_all_or_nothing(void **state)
{
	struct ln_buf b;
	char *p;
	size_t alloc;

	(void)state;
	ln_buf_init_secret(&b, 100);
	assert_int_equal(ln_buf_addstr(&b, "key=SECRET"), 0);
	p = b.buf;
	alloc = b.alloc;
	fail_malloc = 1;
	assert_int_equal(ln_buf_addf(&b, "%080d", 0), -ENOMEM);
	assert_ptr_equal(b.buf, p);
	assert_int_equal(b.alloc, alloc);
	assert_string_equal(b.buf, "key=SECRET");
	assert_int_equal(ln_buf_addf(&b, "%091d", 0), -E2BIG);
	assert_string_equal(b.buf, "key=SECRET");
	assert_int_equal(ln_buf_addf(&b, "%090d", 0), 0);
	assert_int_equal(b.len, 100);
	assert_int_equal(strncmp(b.buf, "key=SECRET000", 13), 0);
	ln_buf_release(&b);
}

/* Detach hands over the block as it is; the buffer stays secret. */
static void test_buf__secret_detach(void **state)
{
	const char *secret = "NVMeTLSkey-1:01:c2VjcmV0LXBzay1zZWNyZXQtcHNrLXNlY3JldA==:";
	struct ln_buf b = LN_BUF_INIT_SECRET;
	size_t len;
	char *s;

	(void)state;
	s = ln_buf_detach(&b, &len);	/* empty: a fresh "" */
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	free(s);
	fill(&b, secret);
	len = 0;
	s = ln_buf_detach(&b, &len);
	assert_int_equal(len, strlen(s));
	assert_int_equal(strncmp(s, secret, strlen(secret)), 0);
	assert_non_null(strstr(s, ",opt199=199"));
	assert_ptr_equal(b.buf, ln_buf_empty);
	assert_int_equal(b.len + b.alloc, 0);
	assert_int_equal(b.secret, 1);
	explicit_bzero(s, len);
	free(s);
	watch_for(secret);	/* reused: still grows without realloc */
	fill(&b, secret);
	ln_buf_release(&b);
	assert_int_equal(reallocs, 0);
	assert_int_equal(leaked, 0);
	watch_for(NULL);
}

/* Reset, setlen and release on a buffer that never allocated touch only
 * the shared "" and leave it "". */
static void test_buf__secret_empty_reset_release(void **state)
{
	struct ln_buf b = LN_BUF_INIT_SECRET;

	(void)state;
	ln_buf_reset(&b);
	ln_buf_setlen(&b, 0);
	ln_buf_release(&b);
	ln_buf_reset(&b);
	assert_ptr_equal(b.buf, ln_buf_empty);
	assert_int_equal(ln_buf_empty[0], 0);
	assert_int_equal(b.len + b.alloc, 0);
	assert_int_equal(b.secret, 1);
	assert_int_equal(ln_buf_addstr(&b, "x"), 0);
	assert_string_equal(b.buf, "x");
	ln_buf_release(&b);
	assert_int_equal(ln_buf_empty[0], 0);
}

/* The stack below the caller after a read: a 64 KiB chunk a reader left
 * there is inside it. (Reading what no one initialised: the asm tells the
 * compiler it may have been.) */
static __attribute__((noinline)) int stack_holds(const char *s)
{
	char probe[96 * 1024];

	__asm__ volatile("" : : "r"(probe) : "memory");
	return memmem(probe, sizeof(probe), s, strlen(s)) != NULL;
}

static __attribute__((noinline)) void read_pipe(const char *s, struct ln_buf *out)
{
	struct ln_buf err = LN_BUF_INIT;
	int fd[2];

	assert_int_equal(pipe(fd), 0);
	assert_int_equal(write(fd[1], s, strlen(s)), (ssize_t)strlen(s));
	close(fd[1]);
	assert_int_equal(ln_fd_read(fd[0], "pipe", out, &err), 0);
	close(fd[0]);
	ln_buf_release(&err);
}

static void test_buf__fd_read_wipes_its_stack_chunk(void **state)
{
	const char *secret = "DHHC-1:00:ZmQtcmVhZC1zdGFjay1jaHVuay1zZWNyZXQtMQ==:";
	const char *text = "DHHC-1:00:ZmQtcmVhZC1zdGFjay1jaHVuay1wbGFpbi10ZXh0:";
	struct ln_buf b = LN_BUF_INIT_SECRET, p = LN_BUF_INIT;

	(void)state;
	read_pipe(secret, &b);
	assert_string_equal(b.buf, secret);
	assert_false(stack_holds(secret));
	ln_buf_release(&b);
	read_pipe(text, &p);	/* the check sees a copy where there is one */
	assert_string_equal(p.buf, text);
	assert_true(stack_holds(text));
	ln_buf_release(&p);
}

struct mem_in {
	const char *p;
	size_t len, pos;
};

static int mem_rd(void *ctx, void *p, size_t n, struct ln_buf *err)
{
	struct mem_in *in = ctx;
	size_t k = in->len - in->pos < n ? in->len - in->pos : n;

	(void)err;
	memcpy(p, in->p + in->pos, k);
	in->pos += k;
	return (int)k;
}

static __attribute__((noinline)) void read_frame(const char *s, struct ln_buf *out)
{
	struct ln_buf err = LN_BUF_INIT;
	struct mem_in in = { s, strlen(s), 0 };

	assert_int_equal(ln_frame_read(mem_rd, &in, 1 << 20, out, &err), 0);
	ln_buf_release(&err);
}

static void test_buf__frame_read_wipes_its_stack_chunk(void **state)
{
	const char *secret = "59\n{\"psk\":\"NVMeTLSkey-1:01:ZnJhbWUtc3RhY2stY2h1bmstc2VjcmV0:\"}";
	const char *text = "59\n{\"psk\":\"NVMeTLSkey-1:01:ZnJhbWUtc3RhY2stY2h1bmstcGxhaW4h:\"}";
	struct ln_buf b = LN_BUF_INIT_SECRET, p = LN_BUF_INIT;

	(void)state;
	read_frame(secret, &b);
	assert_string_equal(b.buf, strchr(secret, '{'));
	assert_false(stack_holds("ZnJhbWUtc3RhY2stY2h1bmstc2VjcmV0"));
	ln_buf_release(&b);
	read_frame(text, &p);
	assert_string_equal(p.buf, strchr(text, '{'));
	assert_true(stack_holds("ZnJhbWUtc3RhY2stY2h1bmstcGxhaW4h"));
	ln_buf_release(&p);
}

LN_TEST_MAIN(NULL, NULL,
	cmocka_unit_test(test_buf__secret_growth_leaves_no_copy),
	cmocka_unit_test(test_buf__plain_growth_still_reallocs),
	cmocka_unit_test(test_buf__secret_reset_and_setlen_wipe),
	cmocka_unit_test(test_buf__secret_append_all_or_nothing),
	cmocka_unit_test(test_buf__secret_detach),
	cmocka_unit_test(test_buf__secret_empty_reset_release),
	cmocka_unit_test(test_buf__fd_read_wipes_its_stack_chunk),
	cmocka_unit_test(test_buf__frame_read_wipes_its_stack_chunk),
)
