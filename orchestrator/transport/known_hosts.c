/* SPDX-License-Identifier: MIT */
/*
 * Host keys: a node's key checked against known_hosts before the session
 * signs in (never silently trusting a changed key), an accepted key
 * recorded, the entries of a host replaced; and what llmnet may rewrite
 * as ssh.known_hosts: a regular file of the running user (not a link)
 * whose every line reads as a known_hosts entry, a comment or blank.
 * Anything else (/etc/passwd named by mistake) is refused, naming the
 * path, and left as it is.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fileio.h"
#include "orchestrator/transport/session.h"

/* known_hosts edits (accept-new, accept-replaced) from parallel workers
 * are serialised so no line is lost between read and rename. */
static pthread_mutex_t known_hosts_lock = PTHREAD_MUTEX_INITIALIZER;

static char *key_fingerprint(ssh_key key)
{
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *fp = NULL;

	if (!key || ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) < 0)
		return NULL;
	fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	ssh_clean_pubkey_hash(&hash);
	return fp;
}

/* "host" for port 22, "[host]:port" otherwise: known_hosts' own spelling. */
static void host_key_name(char *out, size_t n, const char *host, int port)
{
	if (port == 0 || port == 22)
		snprintf(out, n, "%s", host);
	else
		snprintf(out, n, "[%s]:%d", host, port);
}

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

int ln_known_hosts_replace(const char *file, const char *host, int port, const char *line,
			   struct ln_buf *err)
{
	struct ln_buf cur = LN_BUF_INIT, next = LN_BUF_INIT, e = LN_BUF_INIT;
	char name[512];
	char *p, *nl;
	mode_t mode = 0600;
	size_t n;
	int r;

	host_key_name(name, sizeof(name), host, port);
	pthread_mutex_lock(&known_hosts_lock);
	r = ln_file_read(file, &cur, &e);
	if (r < 0 && r != -ENOENT) {
		ln_buf_addf(err, "cannot update known hosts: %s", e.buf);
		goto out;
	}
	r = ln_known_hosts_check(file, r < 0 ? NULL : &cur, &mode, err);
	if (r < 0)
		goto out;
	for (p = cur.buf; *p; p = nl) {
		struct ssh_knownhosts_entry *entry = NULL;
		char *copy;
		int rc;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		nl = nl ? nl + 1 : p + n;
		copy = strndup(p, n);
		if (!copy) {
			r = -ENOMEM;
			goto out;
		}
		rc = (n && copy[0] != '#') ? ssh_known_hosts_parse_line(name, copy, &entry) : SSH_AGAIN;
		free(copy);
		if (rc == SSH_OK) {
			ssh_knownhosts_entry_free(entry);
			continue;	/* an old entry for this host: dropped */
		}
		if (ln_buf_add(&next, p, n) < 0 || ln_buf_addch(&next, '\n') < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	/* libssh's exported entry already ends in a newline: write one, not two */
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	if (ln_buf_add(&next, line, n) < 0 || ln_buf_addch(&next, '\n') < 0) {
		r = -ENOMEM;
		goto out;
	}
	r = ln_file_write_atomic(file, next.buf, next.len, mode, err);
out:
	pthread_mutex_unlock(&known_hosts_lock);
	ln_buf_release_all(&cur, &next, &e);
	return r;
}

/* Fingerprint of the key known_hosts records for host:port (libssh does
 * not hand back the mismatching entry), or NULL. */
static char *recorded_fingerprint(const char *file, const char *host, int port)
{
	struct ln_buf cur = LN_BUF_INIT, e = LN_BUF_INIT;
	char name[512], *fp = NULL, *p, *nl;

	host_key_name(name, sizeof(name), host, port);
	if (ln_file_read(file, &cur, &e) < 0)
		goto out;
	for (p = cur.buf; *p && !fp; p = nl) {
		struct ssh_knownhosts_entry *entry = NULL;
		size_t n;
		char *copy;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		nl = nl ? nl + 1 : p + n;
		if (!n || *p == '#')
			continue;
		copy = strndup(p, n);
		if (copy && ssh_known_hosts_parse_line(name, copy, &entry) == SSH_OK && entry) {
			fp = key_fingerprint(entry->publickey);
			ssh_knownhosts_entry_free(entry);
		}
		free(copy);
	}
out:
	ln_buf_release(&cur);
	ln_buf_release(&e);
	return fp;
}

int ln_ssh_verify_host_key(struct ln_session *s, const struct ln_ssh_opts *o, const char *kh,
			   struct ln_buf *note, struct ln_buf *err)
{
	struct ssh_knownhosts_entry *old = NULL;
	enum ssh_known_hosts_e state;
	ssh_key key = NULL;
	char *old_fp = NULL, *line = NULL;
	int r;

	if (ssh_get_server_publickey(s->ssh, &key) < 0) {
		ln_buf_addf(err, "cannot read host key of '%s': %s", o->node,
			    ssh_get_error(s->ssh));
		return -LN_EHOSTKEY;
	}
	s->fingerprint = key_fingerprint(key);
	ssh_key_free(key);
	if (!s->fingerprint)
		return -ENOMEM;

	state = ssh_session_is_known_server(s->ssh);
	switch (state) {
	case SSH_KNOWN_HOSTS_OK:
		return 0;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		ssh_session_get_known_hosts_entry(s->ssh, &old);
		old_fp = old && old->publickey ? key_fingerprint(old->publickey) : NULL;
		ssh_knownhosts_entry_free(old);
		if (!old_fp)
			old_fp = recorded_fingerprint(kh, o->host, o->port);
		if (!o->accept_replaced) {
			ln_buf_addf(err,
				    "refusing '%s': host key changed (known_hosts has %s, server "
				    "offers %s); if the node was reinstalled, run again with "
				    "--accept-replaced %s",
				    o->node, old_fp ? old_fp : "a key of another type",
				    s->fingerprint, o->node);
			r = -LN_EHOSTKEY;
			goto out;
		}
		break;
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		if (!o->accept_replaced && o->policy != LN_HOSTKEY_ACCEPT_NEW) {
			ln_buf_addf(err,
				    "refusing '%s': host key %s is not in '%s' (add it, or set "
				    "ssh.host_key_policy: accept-new)",
				    o->node, s->fingerprint, kh);
			r = -LN_EHOSTKEY;
			goto out;
		}
		break;
	case SSH_KNOWN_HOSTS_ERROR:
	default:
		ln_buf_addf(err, "cannot check host key of '%s' against '%s': %s", o->node, kh,
			    ssh_get_error(s->ssh));
		r = -LN_EHOSTKEY;
		goto out;
	}

	if (ssh_session_export_known_hosts_entry(s->ssh, &line) < 0) {
		ln_buf_addf(err, "cannot record host key of '%s': %s", o->node,
			    ssh_get_error(s->ssh));
		r = -LN_EHOSTKEY;
		goto out;
	}
	r = ln_known_hosts_replace(kh, o->host, o->port, line, err);
	if (r < 0)
		goto out;
	if (note) {
		if (old_fp || o->accept_replaced)
			ln_buf_addf(note, "accepted replaced host key of '%s' (%s): old %s, new %s",
				    o->node, o->host, old_fp ? old_fp : "none", s->fingerprint);
		else
			ln_buf_addf(note, "recorded new host key of '%s' (%s): %s", o->node,
				    o->host, s->fingerprint);
	}
	r = 0;
out:
	ssh_string_free_char(old_fp);
	ssh_string_free_char(line);
	return r;
}
