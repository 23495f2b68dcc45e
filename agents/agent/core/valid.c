/* SPDX-License-Identifier: MIT */
/*
 * Value validation (valid.h): NQNs, host IDs, paths, names and addresses,
 * checked before they reach a path, a configfs name or a command line.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <string.h>

#include "agents/agent/core/valid.h"
#include "common/nvme.h"

/* The offset of the first byte of s an NQN may not hold (strlen(s) when
 * none): white space, control and non-ASCII bytes, what a configfs name or
 * a quoted argument cannot take; strict: also the ',' and '=' of the
 * kernel's /dev/nvme-fabrics option string ("nqn=..,hostnqn=..") that
 * would add options of their own. */
size_t ln_valid_nqn_bad_at(const char *s, int strict)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= ' ' || c >= 0x7f || strchr(strict ? "/\"'\\,=" : "/\"'\\", c))
			break;
	}
	return i;
}

static int valid_nqn(const char *s, int strict)
{
	size_t n = strlen(s);

	/* the kernel's option parser takes an NQN shorter than NVMF_NQN_SIZE;
	 * configfs names and the spec allow LN_NQN_MAX */
	return n >= 12 && n <= (strict ? LN_NQN_MAX - 1u : LN_NQN_MAX) && !strncmp(s, "nqn.", 4) &&
	       ln_valid_nqn_bad_at(s, strict) == n;
}

/* An NQN as the kernel and the spec accept it, and safe as a configfs name
 * (a target's hosts[] may list one with ',' or '=': configfs takes it). */
int ln_valid_nqn(const char *s)
{
	return valid_nqn(s, 0);
}

/* This node's own host NQN, which goes into the connect's option string
 * (hostnqn=): a valid NQN without ',' or '='. */
int ln_valid_host_nqn(const char *s)
{
	return valid_nqn(s, 1);
}

/* A UUID as the kernel's hostid= takes it: 8-4-4-4-12 hex digits. */
int ln_valid_uuid(const char *s)
{
	size_t i;

	if (strlen(s) != 36)
		return 0;
	for (i = 0; i < 36; i++)
		if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-'
							     : !isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

const char *ln_nqn_at(struct json_object *arr, size_t i)
{
	struct json_object *v = json_object_array_get_idx(arr, i);

	if (!json_object_is_type(v, json_type_string) || !ln_valid_nqn(json_object_get_string(v)))
		return NULL;
	return json_object_get_string(v);
}

int ln_valid_abs_path(const char *s)
{
	size_t n = strlen(s);
	const char *p;

	if (n < 2 || n > 4095 || s[0] != '/' || s[n - 1] == '/')
		return 0;
	for (p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < ' ' || c == 0x7f)
			return 0;
	}
	for (p = s; p; p = strchr(p + 1, '/')) {
		const char *q = p + 1;
		size_t len = strcspn(q, "/");

		if (len == 0 || (len == 1 && q[0] == '.') || (len == 2 && q[0] == '.' && q[1] == '.'))
			return 0;
	}
	return 1;
}

int ln_valid_name(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return 0;
	}
	return 1;
}

int ln_valid_addr(const char *s, const char **family)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, s, buf) == 1) {
		if (family)
			*family = "ipv4";
		return 1;
	}
	if (inet_pton(AF_INET6, s, buf) == 1 && !strchr(s, '%')) {
		if (family)
			*family = "ipv6";
		return 1;
	}
	return 0;
}
