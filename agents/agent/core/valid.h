/* SPDX-License-Identifier: MIT */
/*
 * Validation of values that reach paths, configfs names or command lines
 * (valid.c): the request parser checks every field with these before any of
 * it reaches the node, and the verbs check again what they read back. Each
 * returns 1 for a valid value, 0 otherwise, and prints nothing.
 */
#ifndef LN_AGENT_VALID_H
#define LN_AGENT_VALID_H

#include <stddef.h>
#include <json-c/json.h>

#include "common/hostnqn.h"

/* Element i of a JSON array when it is a string holding a valid NQN, else
 * NULL (owned by the array). */
const char *ln_nqn_at(struct json_object *arr, size_t i);
/* An absolute, normalized path: no empty, "." or ".." part, no trailing
 * '/', no control byte, 2-4095 bytes. */
int ln_valid_abs_path(const char *s);
/* 1-max bytes of [A-Za-z0-9._-], starting with a letter or digit. */
int ln_valid_name(const char *s, size_t max);
/* Numeric IPv4/IPv6; family gets "ipv4" or "ipv6". */
int ln_valid_addr(const char *s, const char **family);

#endif
