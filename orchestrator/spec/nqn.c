/* SPDX-License-Identifier: MIT */
/*
 * NQN checks (see nqn.h): the 223-byte limit first, then the date, the
 * reverse domain and the name part, each with a message that says which
 * rule the name breaks.
 */
#include <errno.h>
#include <string.h>

#include "orchestrator/spec/nqn.h"

static int is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int check_uuid(const char *u)
{
	static const int dash[] = { 8, 13, 18, 23 };
	size_t i, d = 0;

	if (strlen(u) != 36)
		return -1;
	for (i = 0; i < 36; i++) {
		if (d < 4 && (int)i == dash[d]) {
			if (u[i] != '-')
				return -1;
			d++;
		} else if (!is_hex(u[i])) {
			return -1;
		}
	}
	return 0;
}

static void bad_char(const char *nqn, const char *where, char c, struct ln_buf *err)
{
	if (c > 0x20 && c < 0x7f)
		ln_buf_addf(err, "nqn '%s' has '%c' %s", nqn, c, where);
	else
		ln_buf_addf(err, "nqn '%s' has byte 0x%02x %s", nqn, (unsigned char)c, where);
}

int ln_nqn_check(const char *nqn, struct ln_buf *err)
{
	size_t len = strlen(nqn);
	const char *p, *colon, *label;
	int year, month, labels = 0;

	if (len > LN_NQN_MAX) {
		ln_buf_addf(err, "nqn '%.40s...' is %zu bytes long (the limit is %d)", nqn, len,
			    LN_NQN_MAX);
		return -EINVAL;
	}
	if (!strcmp(nqn, LN_NQN_DISCOVERY)) {
		ln_buf_addf(err, "nqn '%s' is the discovery NQN, not a subsystem's", nqn);
		return -EINVAL;
	}
	if (strncmp(nqn, "nqn.", 4)) {
		ln_buf_addf(err, "nqn '%s' does not start with 'nqn.'", nqn);
		return -EINVAL;
	}
	p = nqn + 4;
	if (!(p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' &&
	      p[2] <= '9' && p[3] >= '0' && p[3] <= '9' && p[4] == '-' && p[5] >= '0' &&
	      p[5] <= '1' && p[6] >= '0' && p[6] <= '9' && p[7] == '.')) {
		ln_buf_addf(err, "nqn '%s' lacks the 'nqn.yyyy-mm.' date", nqn);
		return -EINVAL;
	}
	year = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 + (p[3] - '0');
	month = (p[5] - '0') * 10 + (p[6] - '0');
	if (year < 1970 || month < 1 || month > 12) {
		ln_buf_addf(err, "nqn '%s' has an impossible date '%.7s'", nqn, p);
		return -EINVAL;
	}
	p += 8;
	colon = strchr(p, ':');
	if (!colon) {
		ln_buf_addf(err, "nqn '%s' has no ':' after the reverse domain", nqn);
		return -EINVAL;
	}
	/* Reverse domain: labels of [A-Za-z0-9-], no edge hyphens. */
	label = p;
	for (; p <= colon; p++) {
		if (p == colon || *p == '.') {
			if (p == label || label[0] == '-' || p[-1] == '-' || p - label > 63) {
				ln_buf_addf(err, "nqn '%s' has a bad reverse domain '%.*s'", nqn,
					    (int)(colon - (nqn + 12)), nqn + 12);
				return -EINVAL;
			}
			labels++;
			label = p + 1;
		} else if (!is_alnum(*p) && *p != '-') {
			bad_char(nqn, "in its reverse domain", *p, err);
			return -EINVAL;
		}
	}
	if (labels < 2) {
		ln_buf_addf(err, "nqn '%s' has a bad reverse domain '%.*s' (at least two labels)",
			    nqn, (int)(colon - (nqn + 12)), nqn + 12);
		return -EINVAL;
	}
	p = colon + 1;
	if (!*p) {
		ln_buf_addf(err, "nqn '%s' has nothing after ':'", nqn);
		return -EINVAL;
	}
	if (!strncmp(nqn, "nqn.2014-08.org.nvmexpress:uuid:", 32)) {
		if (check_uuid(nqn + 32) < 0) {
			ln_buf_addf(err, "nqn '%s' has a malformed uuid", nqn);
			return -EINVAL;
		}
		return 0;
	}
	for (; *p; p++) {
		if (!is_alnum(*p) && !strchr("._:+-", *p)) {
			bad_char(nqn, "in its name", *p, err);
			return -EINVAL;
		}
	}
	return 0;
}
