/* SPDX-License-Identifier: MIT */
/*
 * The sliding window. A fixed set of min(parallel, n) worker threads pulls
 * the next item from a shared cursor, so at most `parallel` items are in
 * flight and a slow node never holds back the ones behind it. A signal
 * sets a flag; workers check it before taking the next item; a second
 * signal ends the process at once. Progress goes
 * to the callback the command installed, under the pool's lock.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/signals.h"
#include "orchestrator/transport/fanout.h"

static volatile sig_atomic_t stop_flag;
static ln_fanout_progress_fn progress_fn;
static void *progress_ctx;

/* The first signal only stops new work; a second one ends the run at
 * once. _exit closes every socket, so each node's sshd sees its connection
 * end and closes the channels, and an agent in a request stops (its input
 * ends, its output loses its reader); a jump host's `ssh -W` sees its input
 * end the same way. Only async-signal-safe calls here. */
static void on_signal(int sig)
{
	static const char msg[] = "llmnet: interrupted again: ending now, connections closed\n";

	if (stop_flag) {
		if (write(2, msg, sizeof(msg) - 1) < 0) {
			/* nothing more can be said */
		}
		_exit(LN_EXIT_FAILED);
	}
	stop_flag = sig;
}

void ln_fanout_signals(void)
{
	/* No SA_RESTART matters little: libssh retries its own polls. A node
	 * closing its end must not kill the controller (SIGPIPE ignored). */
	ln_signals_catch(on_signal, SIGINT, SIGTERM);
}

int ln_fanout_interrupted(void)
{
	return stop_flag != 0;
}

void ln_fanout_set_stop(int stop)
{
	stop_flag = stop;
}

void ln_fanout_set_progress(ln_fanout_progress_fn fn, void *ctx)
{
	progress_fn = fn;
	progress_ctx = ctx;
}

struct pool {
	const struct ln_fanout *f;
	struct ln_fanout_result *res;
	pthread_mutex_t lock;
	size_t next, done, in_flight, total;
};

/* Tell the callback, if any, where the pool stands (under p->lock, or
 * after the workers are gone). */
static void report(const struct pool *p, const char *line, int end)
{
	struct ln_fanout_event ev = { p->f->phase, p->done, p->total, p->in_flight, line, end };

	if (progress_fn)
		progress_fn(progress_ctx, &ev);
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	const struct ln_fanout *f = p->f;
	struct ln_buf line = LN_BUF_INIT;

	for (;;) {
		size_t i;
		int rc;

		pthread_mutex_lock(&p->lock);
		while (p->next < f->n && f->select && !f->select[p->next])
			p->next++;
		if (p->next >= f->n || stop_flag) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		i = p->next++;
		p->res->started[i] = 1;
		p->res->n_started++;
		p->in_flight++;
		pthread_mutex_unlock(&p->lock);

		ln_buf_reset(&line);
		rc = f->fn(f->ctx, i, &line);

		pthread_mutex_lock(&p->lock);
		p->res->rc[i] = rc;
		p->in_flight--;
		p->done++;
		report(p, !f->quiet && line.len ? line.buf : NULL, 0);
		pthread_mutex_unlock(&p->lock);
	}
	ln_buf_release(&line);
	return NULL;
}

int ln_fanout_run(const struct ln_fanout *f, struct ln_fanout_result *res)
{
	struct pool p;
	pthread_t *th = NULL;
	pthread_attr_t attr;
	size_t i, nthreads, created = 0;
	unsigned parallel = f->parallel ? f->parallel : 64;
	int r = 0;

	memset(res, 0, sizeof(*res));
	res->started = calloc(f->n ? f->n : 1, 1);
	res->rc = calloc(f->n ? f->n : 1, sizeof(int));
	if (!res->started || !res->rc) {
		ln_fanout_result_release(res);
		return -ENOMEM;
	}
	memset(&p, 0, sizeof(p));
	p.f = f;
	p.res = res;
	pthread_mutex_init(&p.lock, NULL);
	for (i = 0; i < f->n; i++)
		if (!f->select || f->select[i])
			p.total++;
	nthreads = p.total < parallel ? p.total : parallel;
	if (!nthreads)
		goto out;
	th = calloc(nthreads, sizeof(*th));
	if (!th) {
		r = -ENOMEM;
		goto out;
	}
	pthread_attr_init(&attr);
	/* libssh's deepest paths stay far below this; thousands of nodes
	 * with a wide window should not reserve 8 MiB of stack each. */
	pthread_attr_setstacksize(&attr, 1u << 20);
	for (i = 0; i < nthreads; i++) {
		if (pthread_create(&th[i], &attr, worker, &p) != 0)
			break;
		created++;
	}
	pthread_attr_destroy(&attr);
	if (!created) {
		r = -EAGAIN;
		goto out;
	}
	for (i = 0; i < created; i++)
		pthread_join(th[i], NULL);
	report(&p, NULL, 1);
out:
	for (i = 0; i < f->n; i++)
		if ((!f->select || f->select[i]) && !res->started[i])
			res->n_skipped_by_signal++;
	free(th);
	pthread_mutex_destroy(&p.lock);
	/* Callers read res only on success; on failure nothing is theirs to free. */
	if (r < 0)
		ln_fanout_result_release(res);
	return r;
}

void ln_fanout_result_release(struct ln_fanout_result *res)
{
	free(res->started);
	free(res->rc);
	memset(res, 0, sizeof(*res));
}
