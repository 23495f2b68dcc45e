// SPDX-License-Identifier: MIT
/*
 * Fabric addresses compared as NVMe-oF compares them (addr.h): a
 * discovery log pads and writes an address as its target wrote it, a spec
 * as its author did.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "common/addr.h"

int ln_same_addr(const char *a, const char *b)
{
	unsigned char x[16], y[16];

	if (inet_pton(AF_INET, a, x) == 1)
		return inet_pton(AF_INET, b, y) == 1 && !memcmp(x, y, 4);
	if (inet_pton(AF_INET6, a, x) == 1)
		return inet_pton(AF_INET6, b, y) == 1 && !memcmp(x, y, 16);
	return !strcmp(a, b);
}

int ln_same_service(const char *a, const char *b)
{
	char *ea, *eb;
	unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);

	if (*a && *b && !*ea && !*eb)
		return x == y;
	return !strcmp(a, b);
}
