/* SPDX-License-Identifier: MIT */
/*
 * One logger for both binaries. Logs go to stderr only; stdout carries
 * results. Levels follow -q / -v / -vv; trace areas are switched on by
 * name (--trace=ssh,agent,plan) independently of the level.
 */
#ifndef LN_LOG_H
#define LN_LOG_H

enum ln_log_level {
	LN_LOG_ERROR = 0,
	LN_LOG_WARN,
	LN_LOG_INFO,
	LN_LOG_VERBOSE,
	LN_LOG_DEBUG,
};

extern enum ln_log_level ln_log_threshold;

/* Enable trace areas from a comma-separated list; "all" enables every one.
 * Returns 0, or -EINVAL naming no known area. */
int ln_log_set_trace(const char *areas);
int ln_log_trace_enabled(const char *area);
/* Colour only when stderr is a terminal and --no-color/NO_COLOR are absent. */
void ln_log_set_color(int enabled);
int ln_log_color(void);

void ln_log(enum ln_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ln_trace(const char *area, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ln_error(...) ln_log(LN_LOG_ERROR, __VA_ARGS__)
#define ln_warn(...) ln_log(LN_LOG_WARN, __VA_ARGS__)
#define ln_info(...) ln_log(LN_LOG_INFO, __VA_ARGS__)
#define ln_verbose(...) ln_log(LN_LOG_VERBOSE, __VA_ARGS__)
#define ln_debug(...) ln_log(LN_LOG_DEBUG, __VA_ARGS__)

#endif
