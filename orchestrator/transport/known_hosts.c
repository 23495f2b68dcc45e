/* SPDX-License-Identifier: MIT */
/*
 * What llmnet may rewrite as ssh.known_hosts: a regular file of the
 * running user (not a link) whose every line reads as a known_hosts
 * entry, a comment or blank. Anything else (/etc/passwd named by
 * mistake) is refused, naming the path, and left as it is.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "orchestrator/transport/ssh.h"

/* The next whitespace-separated field of *p: its length, *p at its start. */
static size_t field(const char **p)
{
	*p += strspn(*p, " \t");
	return strcspn(*p, " \t");
}

/* [@marker] hosts keytype base64 [comment]: a key type of
 * [a-z0-9@._-] and a base64 key of at least 16 characters. */
static int entry_line(const char *s)
{
	size_t n;

	s += strspn(s, " \t");
	if (!*s || *s == '#')
		return 1;
	n = field(&s);
	if (*s == '@') {
		s += n;
		n = field(&s);
	}
	if (!n)
		return 0;
	s += n;
	n = field(&s);
	if (!n || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789@._-") != n)
		return 0;
	s += n;
	n = field(&s);
	return n >= 16 &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") == n;
}

int ln_known_hosts_check(const char *file, const struct ln_buf *data, mode_t *mode,
			 struct ln_buf *err)
{
	struct stat st;
	const char *p, *nl;
	unsigned line = 1;

	if (lstat(file, &st) < 0) {
		if (errno == ENOENT)
			return 0;	/* a new file: llmnet makes it, 0600 */
		ln_buf_addf(err, "cannot update known hosts '%s': %s", file, strerror(errno));
		return -LN_EHOSTKEY;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		ln_buf_addf(err, "'%s' is not a regular file of this user (uid %u): llmnet "
			    "rewrites only a known_hosts file its user owns, so it leaves it as it "
			    "is; name another ssh.known_hosts", file, (unsigned)geteuid());
		return -LN_EHOSTKEY;
	}
	*mode = st.st_mode & 07777;
	for (p = data ? data->buf : ""; p && *p; p = nl ? nl + 1 : NULL, line++) {
		char copy[8192];
		size_t n;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		if (n >= sizeof(copy))
			n = sizeof(copy) - 1;
		memcpy(copy, p, n);
		copy[n] = '\0';
		if (n && copy[n - 1] == '\r')
			copy[n - 1] = '\0';
		if (!entry_line(copy)) {
			ln_buf_addf(err, "'%s' is not a known_hosts file (line %u is not a host key "
				    "entry or comment): llmnet leaves it as it is; name another "
				    "ssh.known_hosts", file, line);
			return -LN_EHOSTKEY;
		}
	}
	return 0;
}
