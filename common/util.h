/* SPDX-License-Identifier: MIT */
/* Small helpers both binaries use: array length, ordering, a monotonic
 * clock, freeing a list of strings. */
#ifndef LN_UTIL_H
#define LN_UTIL_H

#include <stdlib.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* -1, 0 or 1 as a is below, equal to or above b: qsort comparators' steps. */
#define LN_CMP(a, b) (((a) > (b)) - ((a) < (b)))

/* Monotonic time in milliseconds: for timeouts and durations, never dates. */
static inline long long ln_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The same clock in seconds, for reports of durations. */
static inline double ln_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Free the n strings of names, then names (NULL-safe). */
static inline void ln_names_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

/* free() every pointer named, NULL ones too: ln_free_all(a->v, a->with). */
#define ln_free_all(...) \
	ln_free_list((void *[]){ __VA_ARGS__ }, sizeof((void *[]){ __VA_ARGS__ }) / sizeof(void *))
static inline void ln_free_list(void **p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(p[i]);
}

#endif
