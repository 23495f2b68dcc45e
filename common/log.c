/* SPDX-License-Identifier: MIT */
/*
 * stderr logger. Each message is formatted into one buffer and written with
 * a single write(2), so lines from parallel workers never interleave.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"

enum ln_log_level ln_log_threshold = LN_LOG_INFO;

static const char *const trace_areas[] = { "ssh", "agent", "plan", "spec", "probe", "fanout", NULL };
static unsigned trace_mask;
static int use_color = -1;

int ln_log_set_trace(const char *areas)
{
	const char *p = areas;
	unsigned mask = 0;

	while (*p) {
		size_t n = strcspn(p, ",");
		int i, found = 0;

		if (n == 3 && !strncmp(p, "all", 3)) {
			mask = ~0u;
			found = 1;
		}
		for (i = 0; trace_areas[i]; i++) {
			if (strlen(trace_areas[i]) == n && !strncmp(p, trace_areas[i], n)) {
				mask |= 1u << i;
				found = 1;
			}
		}
		if (!found)
			return -EINVAL;
		p += n;
		if (*p == ',')
			p++;
	}
	trace_mask = mask;
	return 0;
}

int ln_log_trace_enabled(const char *area)
{
	int i;

	for (i = 0; trace_areas[i]; i++)
		if (!strcmp(area, trace_areas[i]))
			return !!(trace_mask & (1u << i));
	return 0;
}

void ln_log_set_color(int enabled)
{
	use_color = enabled;
}

int ln_log_color(void)
{
	if (use_color < 0)
		use_color = isatty(STDERR_FILENO) && !getenv("NO_COLOR");
	return use_color;
}

/* The format attribute lets -Wformat=2 check callers instead of this
 * pass-through (clang reports the non-literal otherwise). */
__attribute__((format(printf, 3, 0)))
static void emit(const char *prefix, const char *color, const char *fmt, va_list ap)
{
	struct ln_buf b = LN_BUF_INIT;
	int saved = errno;

	if (prefix) {
		if (ln_log_color() && color)
			ln_buf_addf(&b, "\033[%sm%s\033[0m", color, prefix);
		else
			ln_buf_addstr(&b, prefix);
	}
	ln_buf_vaddf(&b, fmt, ap);
	if (!b.len || b.buf[b.len - 1] != '\n')
		ln_buf_addch(&b, '\n');
	if (write(STDERR_FILENO, b.buf, b.len) < 0) {
		/* nowhere left to report it */
	}
	ln_buf_release(&b);
	errno = saved;
}

void ln_log(enum ln_log_level lvl, const char *fmt, ...)
{
	static const char *const prefix[] = { "error: ", "warning: ", NULL, NULL, "debug: " };
	static const char *const color[] = { "1;31", "1;33", NULL, NULL, "2" };
	va_list ap;

	if (lvl > ln_log_threshold)
		return;
	va_start(ap, fmt);
	emit(prefix[lvl], color[lvl], fmt, ap);
	va_end(ap);
}

void ln_trace(const char *area, const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	if (!ln_log_trace_enabled(area))
		return;
	snprintf(prefix, sizeof(prefix), "trace %s: ", area);
	va_start(ap, fmt);
	emit(prefix, "2", fmt, ap);
	va_end(ap);
}
