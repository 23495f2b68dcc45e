/* SPDX-License-Identifier: MIT */
/*
 * fabrics.c: the kernel's connect option string for struct ln_conn.
 */
#ifndef LN_AGENT_FABRICS_H
#define LN_AGENT_FABRICS_H

struct ln_buf;
struct ln_conn;

/* "nqn=..,transport=..,traddr=..,trsvcid=..[,hostnqn=..]..[,tls]" into out;
 * the DH-HMAC-CHAP secrets as "(secret)" when redact is set. 0 or
 * -ENOSPC. Clear out (explicit_bzero) after use when not redacted. */
int ln_fabrics_options(const struct ln_conn *cn, int redact, struct ln_buf *out);

#endif
