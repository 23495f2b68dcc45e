/* SPDX-License-Identifier: MIT */
/* cmocka 1.1 needs these headers before its own. */
#ifndef LN_TEST_CMOCKA_H
#define LN_TEST_CMOCKA_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#endif
