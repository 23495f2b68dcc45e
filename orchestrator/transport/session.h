/* SPDX-License-Identifier: MIT */
/*
 * Private to the SSH transport's files (ssh.c: connect, sign-in, upload;
 * known_hosts.c: host keys; exec.c: the step bound and one bounded
 * command; stream.c: the session's long-lived stream): the session and
 * its stream, and the helpers more than one of them uses. Nothing outside
 * orchestrator/transport/ includes this; callers see ssh.h.
 */
#ifndef LN_TRANSPORT_SESSION_H
#define LN_TRANSPORT_SESSION_H

#include <libssh/libssh.h>

#include "common/buf.h"
#include "orchestrator/transport/ssh.h"

struct ln_stream {
	ssh_channel ch;
	struct ln_buf errout;
	int overflow;
};

struct ln_session {
	ssh_session ssh;
	struct ln_stream *stream;	/* NULL: none open */
	char *node;
	char *fingerprint;		/* the server's key, "SHA256:..." */
	int step_timeout_ms;
	int sudo;
};

/* Bound every blocking libssh call of ssh (channel open, exec request,
 * exit status, a full window's write) by ms (exec.c). 0 or -LN_EPROTO. */
int ln_ssh_set_timeout(ssh_session ssh, int ms);

/* Append what is buffered on one of ch's streams (stderr when is_stderr)
 * to b without waiting; *overflow set when b's cap dropped some (exec.c).
 * 0, or -LN_EUNREACH when the channel broke. */
int ln_ssh_drain(ssh_channel ch, int is_stderr, struct ln_buf *b, int *overflow);

/*
 * The host-key decision for s, just connected to o's node with kh as its
 * known_hosts (known_hosts.c): sets s->fingerprint. A changed key is
 * refused with both fingerprints unless this node's replacement was
 * accepted; an unknown key is refused unless accept-new (or
 * accept-replaced) says otherwise, and then recorded in kh, with a line
 * for the run log in note (may be NULL). 0, -LN_EHOSTKEY or -ENOMEM.
 */
int ln_ssh_verify_host_key(struct ln_session *s, const struct ln_ssh_opts *o, const char *kh,
			   struct ln_buf *note, struct ln_buf *err);

#endif
