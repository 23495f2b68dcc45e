/* SPDX-License-Identifier: MIT */
/*
 * Value validation (valid.h): NQNs, host IDs, paths, names and addresses,
 * checked before they reach a path, a configfs name or a command line.
 */
#include <arpa/inet.h>
#include <string.h>

#include "agents/agent/core/valid.h"

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
