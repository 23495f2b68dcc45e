/* SPDX-License-Identifier: MIT */
/* Error code texts and the exit-code merge rule (docs/exit-codes.md). */
#include <string.h>

#include "error.h"

static int exit_rank(int code)
{
	switch (code) {
	case LN_EXIT_STOPPED:
		return 7;
	case LN_EXIT_AGENT:
		return 6;
	case LN_EXIT_UNREACHABLE:
		return 5;
	case LN_EXIT_SPEC:
		return 4;
	case LN_EXIT_USAGE:
		return 3;
	case LN_EXIT_FAILED:
		return 2;
	case LN_EXIT_CHANGES:
		return 1;
	default:
		return 0;
	}
}

int ln_exit_merge(int a, int b)
{
	return exit_rank(a) >= exit_rank(b) ? a : b;
}

const char *ln_strerror(int code)
{
	if (code < 0)
		code = -code;
	switch (code) {
	case LN_ESPEC:
		return "invalid spec";
	case LN_EUNREACH:
		return "unreachable";
	case LN_EHOSTKEY:
		return "host key not trusted";
	case LN_EAUTH:
		return "authentication refused";
	case LN_ETIMEOUT:
		return "timed out";
	case LN_EPROTO:
		return "protocol error";
	case LN_EREQUEST:
		return "bad request";
	case LN_ECONFLICT:
		return "conflict";
	case LN_ELOCKED:
		return "locked by another run";
	case LN_EFAILPOINT:
		return "stopped at failpoint";
	case LN_EMISSING:
		return "not on the node";
	default:
		return strerror(code);
	}
}
