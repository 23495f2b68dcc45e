/* SPDX-License-Identifier: MIT */
/*
 * libssh sessions for the controller: connect with a bound, have the host
 * key verified (known_hosts.c), sign in with ssh-agent or an identity
 * file, close, and upload a file as a bounded command's stdin. A
 * session's bounded commands are exec.c's, its long-lived stream
 * stream.c's.
 *
 * libssh 0.10.6 has no ProxyJump option before 0.11, so a jump host goes
 * through a ProxyCommand running OpenSSH's `ssh -W`.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/log.h"
#include "orchestrator/transport/session.h"

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

int ln_ssh_jump_command(const struct ln_ssh_opts *o, const char *kh, char *cmd, size_t size,
			struct ln_buf *err)
{
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
	/* OpenSSH by absolute path (not from $PATH), with no ssh_config (-F
	 * none: no ForwardAgent or ProxyCommand of the user's), checked
	 * against the spec's known_hosts only, under the spec's policy. */
	n = snprintf(cmd, size,
		     "/usr/bin/ssh -F none -o BatchMode=yes -o StrictHostKeyChecking=%s "
		     "-o UserKnownHostsFile=%s -o GlobalKnownHostsFile=/dev/null "
		     "-o ConnectTimeout=%d %s%s%s-p %s -W [%%h]:%%p %s",
		     o->policy == LN_HOSTKEY_ACCEPT_NEW ? "accept-new" : "yes", kh,
		     (o->connect_timeout_ms + 999) / 1000, id ? "-i " : "", id ? id : "", id ? " " : "", jport,
		     jhost);
	free(id);
	if (n < 0 || (size_t)n >= size) {
		ln_buf_addf(err, "jump host command for '%s' is too long", o->node);
		return -EINVAL;
	}
	return 0;
}

static int set_jump(ssh_session ssh, const struct ln_ssh_opts *o, const char *kh,
		    struct ln_buf *err)
{
	char cmd[2048];
	int r = ln_ssh_jump_command(o, kh, cmd, sizeof(cmd), err);

	if (r < 0)
		return r;
	if (ssh_options_set(ssh, SSH_OPTIONS_PROXYCOMMAND, cmd) < 0) {
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
	    ln_ssh_set_timeout(s->ssh, conn_ms) < 0) {
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
	r = ln_ssh_verify_host_key(s, o, kh, replaced_note, err);
	if (r < 0)
		goto out;
	r = sign_in(s, o, err);
	if (r < 0)
		goto out;
	if (ln_ssh_set_timeout(s->ssh, s->step_timeout_ms) < 0) {
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
	if (s->ssh) {
		if (ssh_is_connected(s->ssh))
			ssh_disconnect(s->ssh);
		ssh_free(s->ssh);
	}
	ssh_string_free_char(s->fingerprint);
	free(s->node);
	free(s);
}

int ln_ssh_put(struct ln_session *s, const char *path, const void *data, size_t len,
	       mode_t mode, struct ln_buf *err)
{
	struct ln_buf cmd = LN_BUF_INIT, out = LN_BUF_INIT, errout = LN_BUF_INIT;
	int r, status = -1;

	if (!ln_ssh_safe_word(path) || path[0] == '/') {
		ln_buf_addf(err, "cannot upload to '%s' on '%s': not a plain relative name",
			    path ? path : "", s->node);
		return -EINVAL;
	}
	/* The data is the command's stdin, on an exec channel like any other:
	 * ln_ssh_exec bounds every write and the wait for the exit status by
	 * the step timeout, which SFTP's blocking calls were not. set -C
	 * refuses an existing file, as O_EXCL did; umask gives the mode.
	 * An upload cut short (the link or the controller gone: cat sees the
	 * end of its input early, or the shell a signal) removes the file it
	 * made, so no partial upload stays in the home: kept only when all
	 * len bytes arrived. */
	ln_buf_addf(&cmd, "umask %03o && set -C && : > \"$HOME/%s\" && "
		    "trap 'rm -f -- \"$HOME/%s\"; exit 1' HUP INT TERM PIPE && "
		    "{ cat >> \"$HOME/%s\" && [ \"$(wc -c < \"$HOME/%s\")\" -eq %zu ] || "
		    "{ rm -f -- \"$HOME/%s\"; echo 'upload cut short' >&2; exit 1; }; }",
		    (unsigned)(~mode & 0777), path, path, path, path, len, path);
	r = ln_ssh_exec(s, cmd.buf, data, len, 0, &out, &errout, &status, err);
	if (r == 0 && status != 0) {
		ln_buf_rtrim(&errout);
		ln_buf_addf(err, "cannot write '%s' on '%s' (exit %d): %s", path, s->node, status,
			    errout.buf);
		r = -EIO;
	}
	ln_buf_release_all(&cmd, &out, &errout);
	return r;
}
