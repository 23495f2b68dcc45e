/* SPDX-License-Identifier: MIT */
/*
 * libssh sessions for the controller: connect with a bound, verify the host
 * key against known_hosts (never silently trusting a changed key), sign in
 * with ssh-agent or an identity file, run bounded commands with stdin and
 * captured output, and upload files over SFTP in small chunks (libssh 0.10
 * misbehaves on very large single writes).
 *
 * libssh 0.10.6 notes that shape this file: ssh_channel_read_timeout()
 * returns 0 both on timeout and on EOF, so EOF is told apart with
 * ssh_channel_is_eof(); there is no ProxyJump option before 0.11, so a jump
 * host goes through a ProxyCommand running OpenSSH's `ssh -W`; blocking
 * calls (channel open, exec request, exit status) are bounded by the
 * session's SSH_OPTIONS_TIMEOUT, which is set to the step's bound before
 * each step.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/util.h"
#include "orchestrator/transport/ssh.h"

/* SFTP write size: well under the 32 KiB packets every server accepts. */
#define SFTP_CHUNK (32u * 1024)

/* stderr kept from a stream: enough for any message, the rest dropped */
#define STREAM_STDERR_CAP (64u * 1024)

struct ln_stream {
	ssh_channel ch;
	struct ln_buf errout;
	int overflow;
};

struct ln_session {
	ssh_session ssh;
	sftp_session sftp;
	struct ln_stream *stream;
	char *node;
	char *fingerprint;
	int step_timeout_ms;
	int sudo;
};

/* known_hosts edits (accept-new, accept-replaced) from parallel workers
 * are serialised so no line is lost between read and rename. */
static pthread_mutex_t known_hosts_lock = PTHREAD_MUTEX_INITIALIZER;

int ln_ssh_global_init(void)
{
	static int done;

	if (done)
		return 0;
	if (ssh_init() < 0)
		return -LN_EPROTO;
	done = 1;
	return 0;
}

int ln_ssh_safe_word(const char *s)
{
	if (!s || !*s || *s == '-')
		return 0;
	for (; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))
			continue;
		if (!strchr("._:/@%+=,-[]", *s))
			return 0;
	}
	return 1;
}

const char *ln_ssh_node(const struct ln_session *s)
{
	return s ? s->node : NULL;
}

int ln_ssh_step_timeout_ms(const struct ln_session *s)
{
	return s ? s->step_timeout_ms : 0;
}

int ln_ssh_is_sudo(const struct ln_session *s)
{
	return s ? s->sudo : 0;
}

const char *ln_ssh_fingerprint(const struct ln_session *s)
{
	return s ? s->fingerprint : NULL;
}

static int set_timeout(ssh_session ssh, int ms)
{
	long sec = ms / 1000, usec = (long)(ms % 1000) * 1000;

	if (ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT, &sec) < 0 ||
	    ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT_USEC, &usec) < 0)
		return -LN_EPROTO;
	return 0;
}

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

static char *expand_home(const char *path)
{
	const char *home = getenv("HOME");
	char *p = NULL;

	if (path && path[0] == '~' && path[1] == '/') {
		if (asprintf(&p, "%s%s", home ? home : "", path + 1) < 0)
			return NULL;
		return p;
	}
	return path ? strdup(path) : NULL;
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

/*
 * The host-key decision. Changed keys are refused with both fingerprints
 * unless this node's replacement was accepted; unknown keys are refused
 * unless accept-new (or accept-replaced) says otherwise.
 */
static int verify_host_key(struct ln_session *s, const struct ln_ssh_opts *o, const char *kh,
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

int ln_ssh_identity_check(const char *identity, struct ln_buf *err)
{
	ssh_key priv = NULL;
	char *id;
	int r = 0;

	if (!identity)
		return 0;
	id = expand_home(identity);
	if (!id)
		return -ENOMEM;
	if (access(id, R_OK) < 0) {
		ln_buf_addf(err, "ssh.identity '%s' cannot be read: %s", id, strerror(errno));
		r = -LN_EAUTH;
	} else if (ssh_pki_import_privkey_file(id, NULL, NULL, NULL, &priv) != SSH_OK) {
		ln_buf_addf(err, "ssh.identity '%s' is not a private key libssh can read "
			    "(without a passphrase)", id);
		r = -LN_EAUTH;
	}
	ssh_key_free(priv);
	free(id);
	return r;
}

static int sign_in(struct ln_session *s, const struct ln_ssh_opts *o, struct ln_buf *err)
{
	ssh_key priv = NULL;
	char *id = NULL;
	int rc;

	if (o->identity) {
		id = expand_home(o->identity);
		if (!id)
			return -ENOMEM;
		if (ssh_pki_import_privkey_file(id, NULL, NULL, NULL, &priv) != SSH_OK) {
			ln_buf_addf(err, "cannot read identity '%s' for '%s'", id, o->node);
			free(id);
			return -LN_EAUTH;
		}
		rc = ssh_userauth_publickey(s->ssh, NULL, priv);
		ssh_key_free(priv);
		/* An ssh-agent may still hold the right key. */
		if (rc != SSH_AUTH_SUCCESS && getenv("SSH_AUTH_SOCK"))
			rc = ssh_userauth_agent(s->ssh, NULL);
	} else {
		rc = ssh_userauth_publickey_auto(s->ssh, NULL, NULL);
	}
	free(id);
	if (rc == SSH_AUTH_SUCCESS)
		return 0;
	if (rc == SSH_AUTH_ERROR) {
		ln_buf_addf(err, "cannot sign in to '%s': %s", o->node, ssh_get_error(s->ssh));
		return -LN_EUNREACH;
	}
	ln_buf_addf(err, "sign-in refused by '%s' as '%s' (%s)", o->node, o->user ? o->user : "root",
		    o->identity ? "identity file" : "ssh-agent and default keys");
	return -LN_EAUTH;
}

static int set_jump(ssh_session ssh, const struct ln_ssh_opts *o, const char *kh,
		    struct ln_buf *err)
{
	char cmd[2048];
	char *id = NULL;
	const char *jport;
	char jhost[512];
	int n;

	if (!ln_ssh_safe_word(o->jump) || strlen(o->jump) >= sizeof(jhost)) {
		ln_buf_addf(err, "invalid jump host '%s' for '%s'", o->jump, o->node);
		return -EINVAL;
	}
	/* [user@]host[:port] -> ssh's -p */
	snprintf(jhost, sizeof(jhost), "%s", o->jump);
	jport = strrchr(jhost, ':');
	if (jport && !strchr(jport, ']')) {
		jhost[jport - jhost] = '\0';
		jport++;
	} else {
		jport = "22";
	}
	if (o->identity) {
		id = expand_home(o->identity);
		if (!id || !ln_ssh_safe_word(id)) {
			ln_buf_addf(err, "identity path of '%s' cannot be passed to a jump host",
				    o->node);
			free(id);
			return -EINVAL;
		}
	}
	/* The jump host is checked against the same known_hosts, strictly. */
	n = snprintf(cmd, sizeof(cmd),
		     "ssh -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s "
		     "-o ConnectTimeout=%d %s%s -p %s -W [%%h]:%%p %s",
		     kh, (o->connect_timeout_ms + 999) / 1000, id ? "-i " : "", id ? id : "", jport,
		     jhost);
	free(id);
	if (n >= (int)sizeof(cmd) || ssh_options_set(ssh, SSH_OPTIONS_PROXYCOMMAND, cmd) < 0) {
		ln_buf_addf(err, "cannot set jump host for '%s'", o->node);
		return -EINVAL;
	}
	return 0;
}

int ln_ssh_connect(const struct ln_ssh_opts *o, struct ln_session **out,
		   struct ln_buf *replaced_note, struct ln_buf *err)
{
	struct ln_session *s = NULL;
	unsigned int port = o->port ? (unsigned)o->port : 22;
	const char *user = o->user ? o->user : "root";
	char *kh = NULL;
	int yes = 1, r, conn_ms;
	bool no = false;

	*out = NULL;
	if (!ln_ssh_safe_word(o->host) || !ln_ssh_safe_word(user)) {
		ln_buf_addf(err, "invalid address or user for '%s'", o->node);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->node = strdup(o->node);
	s->step_timeout_ms = o->step_timeout_ms > 0 ? o->step_timeout_ms : 30000;
	s->sudo = o->sudo;
	if (o->known_hosts)
		kh = expand_home(o->known_hosts);
	else
		kh = expand_home("~/.ssh/known_hosts");
	s->ssh = ssh_new();
	if (!s->node || !kh || !s->ssh) {
		r = -ENOMEM;
		goto out;
	}
	conn_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
	/* Only the spec decides how we connect: ~/.ssh/config is not read. */
	if (ssh_options_set(s->ssh, SSH_OPTIONS_PROCESS_CONFIG, &no) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_HOST, o->host) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_PORT, &port) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_USER, user) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_KNOWNHOSTS, kh) < 0 ||
	    ssh_options_set(s->ssh, SSH_OPTIONS_NODELAY, &yes) < 0 ||
	    set_timeout(s->ssh, conn_ms) < 0) {
		ln_buf_addf(err, "cannot set ssh options for '%s': %s", o->node,
			    ssh_get_error(s->ssh));
		r = -EINVAL;
		goto out;
	}
	/* The system-wide file is not ours to rewrite on --accept-replaced,
	 * and a stale key there would make a replacement impossible. */
	ssh_options_set(s->ssh, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
	if (o->jump) {
		r = set_jump(s->ssh, o, kh, err);
		if (r < 0)
			goto out;
	}
	if (ln_log_trace_enabled("ssh"))
		ln_trace("ssh", "connect '%s' %s@%s:%u%s%s", o->node, user, o->host, port,
			 o->jump ? " via " : "", o->jump ? o->jump : "");
	if (ssh_connect(s->ssh) != SSH_OK) {
		ln_buf_addf(err, "cannot connect to '%s' (%s:%u): %s", o->node, o->host, port,
			    ssh_get_error(s->ssh));
		r = -LN_EUNREACH;
		goto out;
	}
	r = verify_host_key(s, o, kh, replaced_note, err);
	if (r < 0)
		goto out;
	r = sign_in(s, o, err);
	if (r < 0)
		goto out;
	if (set_timeout(s->ssh, s->step_timeout_ms) < 0) {
		r = -LN_EPROTO;
		goto out;
	}
	*out = s;
	s = NULL;
	r = 0;
out:
	free(kh);
	ln_ssh_close(s);
	return r;
}

void ln_ssh_close(struct ln_session *s)
{
	if (!s)
		return;
	/* EOF ends an idle agent session; the channel's close ends a busy one */
	ln_ssh_stream_close(s, 0, NULL);
	if (s->sftp)
		sftp_free(s->sftp);
	if (s->ssh) {
		if (ssh_is_connected(s->ssh))
			ssh_disconnect(s->ssh);
		ssh_free(s->ssh);
	}
	ssh_string_free_char(s->fingerprint);
	free(s->node);
	free(s);
}

/* Read what is buffered on one stream without waiting. */
static int drain(ssh_channel ch, int is_stderr, struct ln_buf *b, int *overflow)
{
	char tmp[16384];
	int n;

	for (;;) {
		n = ssh_channel_read_nonblocking(ch, tmp, sizeof(tmp), is_stderr);
		if (n == SSH_ERROR)
			return -LN_EUNREACH;
		if (n <= 0)
			return 0;
		if (ln_buf_add(b, tmp, (size_t)n) < 0)
			*overflow = 1;
	}
}

int ln_ssh_exec(struct ln_session *s, const char *cmd, const void *in, size_t inlen,
		int timeout_ms, struct ln_buf *out, struct ln_buf *errout, int *status,
		struct ln_buf *err)
{
	ssh_channel ch = NULL;
	long long deadline;
	const char *p = in;
	int r, n, overflow = 0;
	char tmp[16384];

	*status = -1;
	if (timeout_ms <= 0)
		timeout_ms = s->step_timeout_ms;
	deadline = ln_now_ms() + timeout_ms;
	set_timeout(s->ssh, timeout_ms);
	if (ln_log_trace_enabled("ssh"))
		ln_trace("ssh", "'%s' exec (%zu bytes in): %s", s->node, inlen, cmd);

	ch = ssh_channel_new(s->ssh);
	if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, cmd) != SSH_OK) {
		ln_buf_addf(err, "cannot run a command on '%s': %s", s->node, ssh_get_error(s->ssh));
		r = ln_now_ms() >= deadline ? -LN_ETIMEOUT : -LN_EUNREACH;
		goto out;
	}
	while (inlen) {
		n = ssh_channel_write(ch, p, inlen > 65536 ? 65536 : (uint32_t)inlen);
		if (n <= 0) {
			ln_buf_addf(err, "cannot send input to '%s': %s", s->node, ssh_get_error(s->ssh));
			r = ln_now_ms() >= deadline ? -LN_ETIMEOUT : -LN_EUNREACH;
			goto out;
		}
		p += n;
		inlen -= (size_t)n;
	}
	ssh_channel_send_eof(ch);

	for (;;) {
		long long left = deadline - ln_now_ms();

		if (left <= 0) {
			r = -LN_ETIMEOUT;
			ln_buf_addf(err, "timed out after %d.%03ds on '%s' running '%s'",
				    timeout_ms / 1000, timeout_ms % 1000, s->node, cmd);
			/* Ask the remote side to stop, then close the channel (out:).
			 * sshd drops a signal request for a root login without
			 * privilege separation; the closed channel still reaches the
			 * agent, which stops when its stdout loses its reader. */
			ssh_channel_request_send_signal(ch, "TERM");
			goto out;
		}
		n = ssh_channel_read_timeout(ch, tmp, sizeof(tmp), 0, left > 200 ? 200 : (int)left);
		if (n == SSH_ERROR) {
			ln_buf_addf(err, "connection to '%s' broke while running '%s': %s", s->node, cmd,
				    ssh_get_error(s->ssh));
			r = -LN_EUNREACH;
			goto out;
		}
		if (n > 0 && ln_buf_add(out, tmp, (size_t)n) < 0)
			overflow = 1;
		if (drain(ch, 1, errout, &overflow) < 0) {
			ln_buf_addf(err, "connection to '%s' broke while running '%s'", s->node, cmd);
			r = -LN_EUNREACH;
			goto out;
		}
		if (n <= 0 && (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch)))
			break;
	}
	/* stdout has ended; anything left on stderr comes before the status. */
	drain(ch, 1, errout, &overflow);
	*status = ssh_channel_get_exit_status(ch);
	if (overflow) {
		ln_buf_addf(err, "output of '%s' on '%s' passed its limit", cmd, s->node);
		r = -E2BIG;
		goto out;
	}
	if (ln_log_trace_enabled("ssh"))
		ln_trace("ssh", "'%s' exit %d, %zu bytes out, %zu bytes err", s->node, *status,
			 out->len, errout->len);
	r = 0;
out:
	if (ch) {
		ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	set_timeout(s->ssh, s->step_timeout_ms);
	return r;
}

int ln_ssh_stream_is_open(const struct ln_session *s)
{
	return s && s->stream;
}

int ln_ssh_stream_open(struct ln_session *s, const char *cmd, int timeout_ms, struct ln_buf *err)
{
	struct ln_stream *st;
	long long deadline;

	ln_ssh_stream_close(s, 0, NULL);
	if (timeout_ms <= 0)
		timeout_ms = s->step_timeout_ms;
	deadline = ln_now_ms() + timeout_ms;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ln_buf_init(&st->errout, STREAM_STDERR_CAP);
	set_timeout(s->ssh, timeout_ms);
	if (ln_log_trace_enabled("ssh"))
		ln_trace("ssh", "'%s' stream: %s", s->node, cmd);
	st->ch = ssh_channel_new(s->ssh);
	if (!st->ch || ssh_channel_open_session(st->ch) != SSH_OK ||
	    ssh_channel_request_exec(st->ch, cmd) != SSH_OK) {
		ln_buf_addf(err, "cannot start the agent session on '%s': %s", s->node,
			    ssh_get_error(s->ssh));
		if (st->ch)
			ssh_channel_free(st->ch);
		free(st);
		set_timeout(s->ssh, s->step_timeout_ms);
		return ln_now_ms() >= deadline ? -LN_ETIMEOUT : -LN_EUNREACH;
	}
	set_timeout(s->ssh, s->step_timeout_ms);
	s->stream = st;
	return 0;
}

static int stream_timed_out(struct ln_session *s, const char *what, struct ln_buf *err)
{
	ln_buf_addf(err, "timed out on '%s' during %s", s->node, what);
	return -LN_ETIMEOUT;
}

int ln_ssh_stream_write(struct ln_session *s, const void *p, size_t n, long long deadline_ms,
			const char *what, struct ln_buf *err)
{
	const char *q = p;
	int w;

	while (n) {
		long long left = deadline_ms - ln_now_ms();

		if (left <= 0)
			return stream_timed_out(s, what, err);
		/* a write blocks while the remote window is full: bound it */
		set_timeout(s->ssh, (int)left);
		w = ssh_channel_write(s->stream->ch, q, n > 65536 ? 65536 : (uint32_t)n);
		set_timeout(s->ssh, s->step_timeout_ms);
		if (w <= 0) {
			if (ln_now_ms() >= deadline_ms)
				return stream_timed_out(s, what, err);
			ln_buf_addf(err, "connection to '%s' broke during %s: %s", s->node, what,
				    ssh_get_error(s->ssh));
			return -LN_EUNREACH;
		}
		q += w;
		n -= (size_t)w;
	}
	return 0;
}

int ln_ssh_stream_read(struct ln_session *s, void *p, size_t n, long long deadline_ms,
		       const char *what, struct ln_buf *err)
{
	struct ln_stream *st = s->stream;
	int r;

	if (n > INT32_MAX)
		n = INT32_MAX;
	for (;;) {
		long long left = deadline_ms - ln_now_ms();

		if (left <= 0)
			return stream_timed_out(s, what, err);
		r = ssh_channel_read_timeout(st->ch, p, (uint32_t)n, 0, left > 200 ? 200 : (int)left);
		if (r == SSH_ERROR || drain(st->ch, 1, &st->errout, &st->overflow) < 0) {
			ln_buf_addf(err, "connection to '%s' broke during %s: %s", s->node, what,
				    ssh_get_error(s->ssh));
			return -LN_EUNREACH;
		}
		if (r > 0)
			return r;
		if (ssh_channel_is_eof(st->ch) || ssh_channel_is_closed(st->ch))
			return 0;
	}
}

int ln_ssh_stream_remote_ended(struct ln_session *s)
{
	return s->stream && ssh_is_connected(s->ssh) &&
	       (ssh_channel_is_eof(s->stream->ch) || ssh_channel_is_closed(s->stream->ch));
}

const char *ln_ssh_stream_stderr(struct ln_session *s)
{
	if (!s->stream)
		return "";
	drain(s->stream->ch, 1, &s->stream->errout, &s->stream->overflow);
	ln_buf_rtrim(&s->stream->errout);
	return s->stream->errout.buf;
}

void ln_ssh_stream_close(struct ln_session *s, int abort, int *status)
{
	struct ln_stream *st = s ? s->stream : NULL;

	if (status)
		*status = -1;
	if (!st)
		return;
	s->stream = NULL;
	if (abort) {
		ssh_channel_request_send_signal(st->ch, "TERM");
	} else if (ssh_channel_is_open(st->ch)) {
		ssh_channel_send_eof(st->ch);
		if (status)
			*status = ssh_channel_get_exit_status(st->ch);
	}
	ssh_channel_close(st->ch);
	ssh_channel_free(st->ch);
	ln_buf_release(&st->errout);
	free(st);
}

int ln_ssh_put(struct ln_session *s, const char *path, const void *data, size_t len,
	       mode_t mode, struct ln_buf *err)
{
	const char *p = data;
	sftp_file f = NULL;
	int r;

	if (!s->sftp) {
		s->sftp = sftp_new(s->ssh);
		if (!s->sftp || sftp_init(s->sftp) != SSH_OK) {
			ln_buf_addf(err, "cannot start sftp on '%s': %s", s->node,
				    ssh_get_error(s->ssh));
			if (s->sftp)
				sftp_free(s->sftp);
			s->sftp = NULL;
			return -LN_EUNREACH;
		}
	}
	f = sftp_open(s->sftp, path, O_WRONLY | O_CREAT | O_EXCL, mode);
	if (!f) {
		ln_buf_addf(err, "cannot create '%s' on '%s': sftp error %d", path, s->node,
			    sftp_get_error(s->sftp));
		return -EIO;
	}
	while (len) {
		size_t n = len > SFTP_CHUNK ? SFTP_CHUNK : len;
		ssize_t w = sftp_write(f, p, n);

		if (w <= 0) {
			ln_buf_addf(err, "cannot write '%s' on '%s': %s", path, s->node,
				    ssh_get_error(s->ssh));
			r = -EIO;
			goto fail;
		}
		p += w;
		len -= (size_t)w;
	}
	if (sftp_extension_supported(s->sftp, "fsync@openssh.com", "1") && sftp_fsync(f) < 0) {
		ln_buf_addf(err, "cannot sync '%s' on '%s'", path, s->node);
		r = -EIO;
		goto fail;
	}
	if (sftp_close(f) != SSH_NO_ERROR) {
		f = NULL;
		ln_buf_addf(err, "cannot close '%s' on '%s'", path, s->node);
		r = -EIO;
		goto fail;
	}
	return 0;
fail:
	if (f)
		sftp_close(f);
	sftp_unlink(s->sftp, path);
	return r;
}
