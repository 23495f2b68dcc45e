/* SPDX-License-Identifier: MIT */
/* NQN and host ID rules shared by the agent and the controller: hostnqn.h. */
#include <ctype.h>
#include <string.h>

#include "common/hostnqn.h"
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
