/* SPDX-License-Identifier: MIT */
/*
 * Fabric addresses as NVMe-oF compares them, for both binaries: the agent
 * matches a discovery log entry (and the fixture a port) against the
 * declared place, and validation's devices stage judges the log an agent
 * read against the spec.
 */
#ifndef LN_ADDR_H
#define LN_ADDR_H

/* 1 when a and b are one address: parsed as IPv4 or IPv6 (10.0.0.1 is
 * 10.0.0.1 however written), anything else byte for byte. */
int ln_same_addr(const char *a, const char *b);

/* 1 when a and b are one service: compared as numbers when both are
 * decimal ("04420" is 4420), else byte for byte. */
int ln_same_service(const char *a, const char *b);

#endif
