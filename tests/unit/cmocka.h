/* SPDX-License-Identifier: MIT */
/* cmocka 1.1 needs these headers before its own; and what every test uses. */
#ifndef LN_TEST_CMOCKA_H
#define LN_TEST_CMOCKA_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"

/* Release every buffer named: ln_test_release(&out, &err, &before), the
 * tests' name for ln_buf_release_all (common/buf.h). */
#define ln_test_release ln_buf_release_all

/* The word after opt in a NULL-terminated argv (a fake tool's), or NULL. */
static inline const char *ln_test_arg_after(const char *const *argv, const char *opt)
{
	int i;

	for (i = 0; argv[i]; i++)
		if (!strcmp(argv[i], opt) && argv[i + 1])
			return argv[i + 1];
	return NULL;
}

/*
 * A test program's main(): its tests (each entry with its comma), run as
 * one group between setup and teardown (NULL: none).
 *   LN_TEST_MAIN(NULL, NULL,
 *	cmocka_unit_test(test_x__does_y),
 *   )
 */
#define LN_TEST_MAIN(setup, teardown, ...)                                                      \
	int main(void)                                                                           \
	{                                                                                        \
		const struct CMUnitTest tests[] = { __VA_ARGS__ };                               \
                                                                                                 \
		return cmocka_run_group_tests(tests, setup, teardown);                           \
	}
#endif
