/* SPDX-License-Identifier: MIT */
/*
 * SSH transport: one libssh session per node, opened once per run and used
 * for every phase (facts, plan, apply) of that run. A session verifies the
 * node's host key against known_hosts before it signs in: an unknown key is
 * refused unless the policy is accept-new, a changed key is always refused
 * unless the operator accepted that node's replacement for this run. Every
 * remote step is bounded: the connect by the connect timeout, each command
 * by its own step timeout, which fires with the node and command named.
 *
 * Sessions are not shared between threads; one thread drives one session.
 * ln_ssh_global_init() must run once before any thread opens a session.
 */
#ifndef LN_TRANSPORT_H
#define LN_TRANSPORT_H

#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"

enum ln_hostkey_policy {
	LN_HOSTKEY_STRICT = 0,	/* the key must be in known_hosts */
	LN_HOSTKEY_ACCEPT_NEW,	/* an unknown key is recorded; a changed one is refused */
};

struct ln_ssh_opts {
	const char *node;		/* node name, for messages */
	const char *host;		/* numeric address or name */
	int port;			/* 0: 22 */
	const char *user;		/* NULL: root */
	const char *identity;		/* private key file; NULL: ssh-agent, then defaults */
	const char *known_hosts;	/* NULL: ~/.ssh/known_hosts */
	enum ln_hostkey_policy policy;
	int accept_replaced;		/* operator accepted a new key for this node */
	const char *jump;		/* [user@]host[:port] of a jump host, or NULL */
	int connect_timeout_ms;		/* TCP connect + key exchange + sign-in */
	int step_timeout_ms;		/* default bound of one remote command */
	int sudo;			/* run agent commands with sudo -n (user is not root) */
};

struct ln_session;

/* Once per process, before threads; idempotent. */
int ln_ssh_global_init(void);

/*
 * Connect, verify the host key and sign in. On success *out owns a session
 * (free with ln_ssh_close). Errors: -LN_EUNREACH (connect or key exchange),
 * -LN_EHOSTKEY (unknown or changed key), -LN_EAUTH (sign-in refused), with
 * the node named in err. When a replaced key was accepted, *replaced_note
 * (if not NULL) receives the old and new fingerprints for the run log.
 */
int ln_ssh_connect(const struct ln_ssh_opts *o, struct ln_session **out,
		   struct ln_buf *replaced_note, struct ln_buf *err);

void ln_ssh_close(struct ln_session *s);

/* The ProxyCommand for o->jump into cmd[0..size): /usr/bin/ssh -F none,
 * known_hosts kh only (GlobalKnownHostsFile=/dev/null), host keys under
 * o->policy. 0, or -EINVAL with the reason in err. */
int ln_ssh_jump_command(const struct ln_ssh_opts *o, const char *kh, char *cmd, size_t size,
			struct ln_buf *err);

const char *ln_ssh_node(const struct ln_session *s);
/* The session's default bound of one remote command, in milliseconds. */
int ln_ssh_step_timeout_ms(const struct ln_session *s);
int ln_ssh_is_sudo(const struct ln_session *s);

/*
 * Run cmd (through the login shell) with in[0..inlen) on its stdin, collect
 * stdout and stderr (each bounded by its buffer's cap) and the exit status.
 * timeout_ms <= 0 uses the session's step timeout. Returns 0 when the
 * command ran (whatever its status), -LN_ETIMEOUT when the bound fired,
 * -LN_EUNREACH when the connection broke, -E2BIG when output passed the cap.
 * *status is the exit status, or -1 when the remote gave none (killed).
 * When the bound fires the remote command is ended: a TERM signal request,
 * then the channel is closed (its stdout pipe with it), which the agent
 * watches for (sshd refuses signal requests in some sessions).
 */
int ln_ssh_exec(struct ln_session *s, const char *cmd, const void *in, size_t inlen,
		int timeout_ms, struct ln_buf *out, struct ln_buf *errout, int *status,
		struct ln_buf *err);

/*
 * The session's stream: one long-lived remote command (the agent's
 * `session`) on one channel, held until closed or until the session is.
 * At most one per session. stdin and stdout are byte streams for the
 * caller's framing; stderr is kept, bounded, for messages.
 *
 * ln_ssh_stream_open runs cmd (timeout_ms <= 0: the step timeout bounds
 * the channel's opening). ln_ssh_stream_write sends all of p, and
 * ln_ssh_stream_read returns what arrives first (> 0 bytes) or 0 at the
 * end of the remote output; both stop at deadline_ms (ln_now_ms() time)
 * with -LN_ETIMEOUT and on a broken connection with -LN_EUNREACH, the
 * node and the stream's purpose (what) named in err.
 */
int ln_ssh_stream_open(struct ln_session *s, const char *cmd, int timeout_ms, struct ln_buf *err);
int ln_ssh_stream_is_open(const struct ln_session *s);
int ln_ssh_stream_write(struct ln_session *s, const void *p, size_t n, long long deadline_ms,
			const char *what, struct ln_buf *err);
int ln_ssh_stream_read(struct ln_session *s, void *p, size_t n, long long deadline_ms,
		       const char *what, struct ln_buf *err);
/* 1 when the remote command ended its side (EOF or close) on a session
 * that is still connected: it exited, the connection did not break. */
int ln_ssh_stream_remote_ended(struct ln_session *s);
/* The stream's stderr so far (trailing whitespace removed); "" if none. */
const char *ln_ssh_stream_stderr(struct ln_session *s);
/*
 * End the stream. Gently (abort 0): send EOF, and when status is not NULL
 * wait (within the step timeout) for the exit status, -1 if none came.
 * Abort (1): ask the remote command to stop (SIGTERM) and close the
 * channel at once; the remote side then sees its input end and its output
 * closed. NULL-safe; a session without a stream is left as is.
 */
void ln_ssh_stream_close(struct ln_session *s, int abort, int *status);


/*
 * Upload data to path (a safe word, relative to the login user's home) as
 * a new file of the given mode: the data is the stdin of `cat` on an exec
 * channel, so the whole upload is bounded by the step timeout like any
 * command (ln_ssh_exec). The file must not exist (set -C); callers pass a
 * temporary name and rename it into place with ln_ssh_exec. An upload cut
 * short is removed by the node's shell (fewer than len bytes, or a signal).
 */
int ln_ssh_put(struct ln_session *s, const char *path, const void *data, size_t len,
	       mode_t mode, struct ln_buf *err);

/* The SHA-256 fingerprint ("SHA256:...") of the server's key; NULL-safe. */
const char *ln_ssh_fingerprint(const struct ln_session *s);

/*
 * Replace every known_hosts entry for host:port by the line given (the
 * format of ssh's known_hosts). Atomic (temp + fsync + rename) and
 * serialised within the process. Exposed for tests.
 */
int ln_known_hosts_replace(const char *file, const char *host, int port, const char *line,
			   struct ln_buf *err);

/*
 * Whether llmnet may rewrite file as known_hosts, given its contents
 * (data; NULL: not read): a regular file of this user (not a link), each
 * line a host key entry, a comment or blank. 0 (also when it does not
 * exist; *mode then untouched, else its permission bits), or
 * -LN_EHOSTKEY with a message naming the path (known_hosts.c).
 */
int ln_known_hosts_check(const char *file, const struct ln_buf *data, mode_t *mode,
			 struct ln_buf *err);

/* ssh.identity (NULL: none named) is a private key this user can read,
 * checked once before any node is contacted: 0, or -LN_EAUTH with a
 * message naming the path. Needs ln_ssh_global_init(). */
int ln_ssh_identity_check(const char *identity, struct ln_buf *err);

/* Is c a character allowed in a host, user or path we put on a command line? */
int ln_ssh_safe_word(const char *s);

#endif
