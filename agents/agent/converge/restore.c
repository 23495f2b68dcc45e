// SPDX-License-Identifier: MIT
/*
 * restore --cluster NAME: the verb of the boot unit persist.c installs
 * (Type=notify). Boot waits for it at most its budget (the unit's
 * --budget-ms, 30 s): it tries every 3 s while the budget leaves room for
 * another try, then tells systemd READY either way (sd_notify's datagram on
 * $NOTIFY_SOCKET; the agent links no libsystemd), so a missing target never
 * holds multi-user.target or a login. Not restored by then, it goes on
 * trying in the background, each try under its own budget
 * (LN_RESTORE_TRY_MS), the pause between tries doubling from 5 s to at most
 * 60 s, until the cluster is restored (exit 0), its stored request is gone
 * (a teardown or `persist: false` since: exit 0), the stored request is
 * refused (exit 2) or systemd stops it (SIGTERM: exit 4).
 *
 * Each try takes the node lock for itself alone, so an `llmnet apply` or
 * teardown gets in between tries, and reads the stored request again, so
 * it converges what the last apply stored and ends after a teardown.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agents/agent/core/budget.h"
#include "agents/agent/converge/parts.h"
#include "agents/agent/converge/reconcile.h"
#include "agents/agent/core/valid.h"
#include "agents/agent/core/answer.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/log.h"

/* In the boot bound: the pause after a failed try. */
#define BOOT_PAUSE_MS 3000
/* In the background: the first pause, and the most it doubles to. */
#define RETRY_FIRST_MS 5000
#define RETRY_MAX_FACTOR 12

/* The background's first pause: 5 s, or LLMNET_RESTORE_PAUSE_MS (tests
 * only, 1-60000) so a test sees the retries without waiting minutes. */
static long first_pause_ms(void)
{
	const char *v = getenv("LLMNET_RESTORE_PAUSE_MS");
	char *end;
	long ms;

	if (!v || !*v)
		return RETRY_FIRST_MS;
	ms = strtol(v, &end, 10);
	return *end || ms < 1 || ms > 60000 ? RETRY_FIRST_MS : ms;
}

/* Send msg to systemd's notify socket (none: not started by systemd,
 * nothing to do). With fd >= 0, that descriptor goes along (BARRIER=1). */
static int notify_send(const char *msg, int fd)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)msg, strlen(msg) };
	struct msghdr mh;
	size_t n = path ? strlen(path) : 0;
	int s, r = 0;

	if (!n || (path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path))
		return -ENOENT;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';	/* an abstract socket */
	memset(&mh, 0, sizeof(mh));
	mh.msg_name = &sa;
	mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(ctl, 0, sizeof(ctl));
		mh.msg_control = ctl;
		mh.msg_controllen = sizeof(ctl);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || sendmsg(s, &mh, MSG_NOSIGNAL) < 0) {
		r = -errno;
		ln_warn("restore: cannot tell systemd '%.*s': %s", (int)strcspn(msg, "\n"), msg,
			strerror(errno));
	}
	if (s >= 0)
		close(s);
	return r;
}

/* Tell systemd (sd_notify(3)): "READY=1\nSTATUS=..." and the like. */
static void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void notify(const char *fmt, ...)
{
	struct ln_buf msg = LN_BUF_INIT;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = ln_buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (r == 0)
		notify_send(msg.buf, -1);
	ln_buf_release(&msg);
}

/* Before exiting: wait (5 s at most) until systemd has read what was sent
 * (sd_notify_barrier(3)), so a READY just sent is never lost to the exit. */
static void notify_barrier(void)
{
	struct pollfd p;
	int pipefd[2];

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return;
	if (notify_send("BARRIER=1", pipefd[1]) == 0) {
		close(pipefd[1]);
		pipefd[1] = -1;
		p.fd = pipefd[0];
		p.events = 0;
		(void)poll(&p, 1, 5000);
	}
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	close(pipefd[0]);
}

/* Sleep ms unless the request is cancelled first (then -ECANCELED). */
static int pause_ms(long ms)
{
	const struct timespec slice = { 0, 100 * 1000000L };
	long waited;

	for (waited = 0; waited < ms; waited += 100) {
		if (ln_budget_cancelled())
			return -ECANCELED;
		nanosleep(&slice, NULL);
	}
	return ln_budget_cancelled() ? -ECANCELED : 0;
}

/* A boot never accepts another disk: `apply --accept-device` was an
 * operator's word for the apply it came with, and the stored request is
 * that apply's. A disk found at a pinned path after a reboot must be the
 * one pinned (that apply pinned the new one), or the target stays down. */
static void no_accepted_devices(struct ln_request *rq)
{
	size_t i, j;

	for (i = 0; i < rq->ntargets; i++)
		for (j = 0; j < rq->targets[i].nns; j++)
			rq->targets[i].ns[j].accept_device = 0;
}

/* One try under the node lock: the stored request, read again, with its
 * secrets, converged as apply does. The agent's exit code; *nothing set
 * when the cluster stores no request (any more) on this node. */
static int one_try(struct ln_agent *a, const char *cluster, int *nothing)
{
	struct ln_buf text = LN_BUF_INIT_SECRET, err = LN_BUF_INIT;
	struct ln_request rq;
	int rc, lock;

	memset(&rq, 0, sizeof(rq));
	*nothing = 0;
	lock = ln_lock_acquire(a, &err);
	if (lock < 0) {
		ln_warn("restore: cluster '%s': %s", cluster, err.buf);
		rc = lock == -LN_ETIMEOUT ? LN_AGENT_EXIT_TIMEOUT : LN_AGENT_EXIT_LOCKED;
		goto out;
	}
	rc = ln_persist_load(a, cluster, &text, &err);
	if (rc == -ENOENT) {
		*nothing = 1;
		rc = LN_AGENT_EXIT_OK;
		goto out;
	}
	if (rc == 0)
		rc = ln_request_parse(text.buf, text.len, &rq, &err);
	if (rc == 0 && strcmp(rq.cluster, cluster)) {
		ln_buf_addf(&err, "the stored request is cluster '%s', not '%s'", rq.cluster,
			    cluster);
		rc = -LN_EREQUEST;
	}
	if (rc == 0)
		no_accepted_devices(&rq);
	/* wiped now (text is secret), not after the converge, which may be long */
	ln_buf_release(&text);
	if (rc < 0)
		rc = ln_agent_fail("request", err.buf, LN_AGENT_EXIT_REQUEST);
	else
		rc = ln_reconcile_converge(a, &rq, 0, "restore");
out:
	ln_lock_release(lock);
	ln_request_release(&rq);
	ln_buf_release(&text);
	ln_buf_release(&err);
	return rc;
}

/* After the boot bound: try again, the pause doubling up to its bound,
 * until restored, nothing is stored any more, refused or stopped. */
static int background(struct ln_agent *a, const char *cluster, int tries)
{
	long pause = first_pause_ms(), most = pause * RETRY_MAX_FACTOR;
	int rc, nothing;

	for (;;) {
		if (pause_ms(pause) < 0) {
			ln_error("restore: cluster '%s' not restored after %d tries: stopped "
				 "(the request was cancelled)", cluster, tries);
			return LN_AGENT_EXIT_TIMEOUT;
		}
		ln_budget_request(LN_RESTORE_TRY_MS);
		rc = one_try(a, cluster, &nothing);
		tries++;
		if (nothing) {
			ln_info("restore: cluster '%s' stores no request on this node any more "
				"(teardown, or persist: false): the retries end", cluster);
			notify("STATUS=nothing to restore any more");
			notify_barrier();
			return LN_AGENT_EXIT_OK;
		}
		if (rc == LN_AGENT_EXIT_OK) {
			ln_info("restore: cluster '%s' restored (try %d, in the background)",
				cluster, tries);
			notify("STATUS=cluster %s restored (try %d)", cluster, tries);
			notify_barrier();
			return rc;
		}
		if (rc == LN_AGENT_EXIT_REQUEST) {
			ln_error("restore: cluster '%s': its stored request is refused: the "
				 "retries end", cluster);
			return rc;
		}
		pause = pause * 2 > most ? most : pause * 2;
		ln_warn("restore: cluster '%s' not restored (try %d); next try in %ld ms", cluster,
			tries, pause);
		notify("STATUS=not restored after %d tries; next try in %ld s", tries,
		       (pause + 999) / 1000);
	}
}

int ln_reconcile_restore_verb(struct ln_agent *a, int argc, char **argv)
{
	const char *cluster = NULL;
	int rc, tries = 0, nothing = 0;
	long bound = ln_budget_ms();

	if (argc == 3 && !strcmp(argv[1], "--cluster"))
		cluster = argv[2];
	if (!cluster || !ln_valid_name(cluster, 64))
		return ln_agent_fail("usage", "usage: llmnet-agent restore --cluster NAME",
				     LN_AGENT_EXIT_USAGE);
	for (;;) {
		tries++;
		rc = one_try(a, cluster, &nothing);
		if (rc == LN_AGENT_EXIT_OK || rc == LN_AGENT_EXIT_REQUEST ||
		    ln_budget_left_ms() < 2 * BOOT_PAUSE_MS)
			break;
		ln_warn("restore: cluster '%s', try %d left errors; trying again in %d s",
			cluster, tries, BOOT_PAUSE_MS / 1000);
		if (pause_ms(BOOT_PAUSE_MS) < 0)
			break;
	}
	if (nothing) {
		ln_info("restore: cluster '%s' stores no request on this node: nothing to restore",
			cluster);
		notify("READY=1\nSTATUS=nothing to restore");
		notify_barrier();
		return LN_AGENT_EXIT_OK;
	}
	if (rc == LN_AGENT_EXIT_OK) {
		ln_info("restore: cluster '%s' restored (try %d)", cluster, tries);
		notify("READY=1\nSTATUS=cluster %s restored (try %d)", cluster, tries);
		notify_barrier();
		return rc;
	}
	if (rc == LN_AGENT_EXIT_REQUEST || ln_budget_cancelled()) {
		ln_error("restore: cluster '%s' not restored: %s", cluster,
			 rc == LN_AGENT_EXIT_REQUEST ? "its stored request is refused"
						     : "the request was cancelled");
		return rc == LN_AGENT_EXIT_REQUEST ? rc : LN_AGENT_EXIT_TIMEOUT;
	}
	/* the line an operator finds in the journal when a target stays down */
	ln_error("restore: cluster '%s' not restored after %d tries in the %ld s boot bound; "
		 "boot goes on, and the retries go on in the background (after %ld ms, the "
		 "pause doubling up to %ld ms)", cluster, tries, bound / 1000, first_pause_ms(),
		 first_pause_ms() * RETRY_MAX_FACTOR);
	notify("READY=1\nSTATUS=not restored after %d tries; retrying in the background", tries);
	return background(a, cluster, tries);
}
