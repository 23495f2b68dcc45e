/* SPDX-License-Identifier: MIT */
/* Small helpers both binaries use: array length and a monotonic clock. */
#ifndef LN_UTIL_H
#define LN_UTIL_H

#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

#endif
