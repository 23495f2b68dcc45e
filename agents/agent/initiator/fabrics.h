/* SPDX-License-Identifier: MIT */
/*
 * fabrics.c: the kernel's connect option string for struct ln_conn, and
 * the discovery controller's connect and log page.
 */
#ifndef LN_AGENT_FABRICS_H
#define LN_AGENT_FABRICS_H

#include <stddef.h>
#include <stdint.h>

struct ln_buf;
struct ln_conn;

/* "nqn=..,transport=..,traddr=..,trsvcid=..[,hostnqn=..]..[,tls]" into out;
 * the DH-HMAC-CHAP secrets as "(secret)" when redact is set. 0 or
 * -ENOSPC. Clear out (explicit_bzero) after use when not redacted. */
int ln_fabrics_options(const struct ln_conn *cn, int redact, struct ln_buf *out);

/* Where ln_fabrics_connect stopped. */
enum { LN_FABRICS_OPEN, LN_FABRICS_WRITE, LN_FABRICS_ANSWER };

/* Connect what cn names: its option string (secrets and all) written to
 * /dev/nvme-fabrics, the kernel's "instance=N" read back into name
 * ("nvmeN", size 32); the string is wiped (explicit_bzero) whatever
 * happens. 0, or a negative errno and *step: LN_FABRICS_OPEN (the string
 * or the device: err says why), LN_FABRICS_WRITE (the kernel refused the
 * connect) or LN_FABRICS_ANSWER (connected, no instance read: -EIO); for
 * the last two the caller says what it connected to. */
int ln_fabrics_connect(const struct ln_conn *cn, char *name, int *step, struct ln_buf *err);

/* Connect the discovery controller cn names by a write to /dev/nvme-fabrics;
 * the kernel's "instance=N" gives name ("nvmeN", size 32). 0 or -errno. */
int ln_fabrics_disc_connect(const struct ln_conn *cn, char *name, struct ln_buf *err);

/* Delete controller name: "1" into its sysfs delete_controller (the
 * kernel tears it down before the write returns). 0 or -errno. */
int ln_fabrics_delete(const char *name, struct ln_buf *err);

/* Get Log Page (the discovery log) of controller name: len bytes (a
 * multiple of 4) at offset off into buf, through its character device
 * with a 10 s command timeout. 0 or -errno. */
int ln_fabrics_disc_log(const char *name, uint64_t off, void *buf, size_t len,
			struct ln_buf *err);

#endif
