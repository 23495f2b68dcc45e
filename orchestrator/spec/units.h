/* SPDX-License-Identifier: MIT */
/*
 * Units of the spec language: sizes, rates and durations written the way
 * operators write them ("1GiB", "100Gb/s", "30s", "20us"), parsed into the
 * model's units (bytes, bits per second, milliseconds or, for the latency
 * thresholds, microseconds) with exact integer
 * arithmetic, so "1.5GiB" is 1610612736 bytes and never a rounding guess.
 */
#ifndef LN_UNITS_H
#define LN_UNITS_H

#include <stdint.h>

#include "common/buf.h"

/*
 * Each parser accepts a decimal number (up to 9 fractional digits), an
 * optional space and a unit. The result must be a whole number of the
 * model's unit and fit in 64 bits. They return 0, or -EINVAL with a
 * message in err that names the value and the accepted units.
 *
 * sizes:     B KiB MiB GiB TiB PiB (binary), KB MB GB TB PB (decimal);
 *            a bare integer is bytes
 * rates:     Kb/s Mb/s Gb/s Tb/s (bits), KB/s MB/s GB/s TB/s (bytes, x8),
 *            all decimal as links are rated; a unit is required
 * durations: us ms s m h; a unit is required; ln_units_parse_duration()
 *            gives milliseconds and refuses a value that is not a whole
 *            number of them ("1500us"), ln_units_parse_duration_us()
 *            gives microseconds
 */
int ln_units_parse_size(const char *s, uint64_t *bytes, struct ln_buf *err);
int ln_units_parse_rate(const char *s, uint64_t *bps, struct ln_buf *err);
int ln_units_parse_duration(const char *s, uint64_t *ms, struct ln_buf *err);
int ln_units_parse_duration_us(const char *s, uint64_t *us, struct ln_buf *err);

/* Shortest exact spelling in the same language ("1GiB", "100Gb/s", "30s"),
 * so a formatted value parses back to itself. */
void ln_units_format_size(uint64_t bytes, char out[32]);
void ln_units_format_rate(uint64_t bps, char out[32]);
void ln_units_format_duration(uint64_t ms, char out[32]);
void ln_units_format_duration_us(uint64_t us, char out[32]);

#endif
