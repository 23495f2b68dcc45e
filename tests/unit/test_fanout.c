/* SPDX-License-Identifier: MIT */
/* Unit tests for the fan-out window: bound, completeness, stop on signal,
 * the progress events the command's callback gets. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/cmocka.h"

#include "common/buf.h"
#include "common/util.h"
#include "orchestrator/transport/fanout.h"

struct probe {
	pthread_mutex_t lock;
	int in_flight, max_in_flight, calls;
	int raise_at;		/* call number that raises SIGINT, 0: never */
	int ran[200];
};

static int work(void *ctx, size_t i, struct ln_buf *line)
{
	struct probe *p = ctx;
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int call;

	pthread_mutex_lock(&p->lock);
	call = ++p->calls;
	if (++p->in_flight > p->max_in_flight)
		p->max_in_flight = p->in_flight;
	pthread_mutex_unlock(&p->lock);
	if (p->raise_at && call == p->raise_at)
		raise(SIGINT);
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&p->lock);
	p->in_flight--;
	p->ran[i]++;
	pthread_mutex_unlock(&p->lock);
	ln_buf_addf(line, "item %zu", i);
	return (int)i;
}

/* Set-up for each test: a fresh probe, the stop flag clear. */
static int probe_setup(void **state)
{
	struct probe *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	pthread_mutex_init(&p->lock, NULL);
	ln_fanout_set_stop(0);
	*state = p;
	return 0;
}

static int probe_teardown(void **state)
{
	struct probe *p = *state;

	pthread_mutex_destroy(&p->lock);
	free(p);
	ln_fanout_set_stop(0);
	return 0;
}

static void test_fanout__window_bounds_in_flight(void **state)
{
	struct probe *p = *state;
	struct ln_fanout f = { "test", 100, NULL, 7, work, p, 1 };
	struct ln_fanout_result res;
	size_t i;

	assert_int_equal(ln_fanout_run(&f, &res), 0);
	assert_int_equal(res.n_started, 100);
	assert_true(p->max_in_flight <= 7);
	assert_true(p->max_in_flight >= 2);
	for (i = 0; i < 100; i++) {
		assert_int_equal(p->ran[i], 1);
		assert_int_equal(res.rc[i], (int)i);
	}
	ln_fanout_result_release(&res);
}

static void test_fanout__select_runs_only_chosen(void **state)
{
	struct probe *p = *state;
	unsigned char sel[10] = { 0, 1, 0, 1, 0, 0, 0, 0, 0, 1 };
	struct ln_fanout f = { "test", ARRAY_SIZE(sel), sel, 4, work, p, 1 };
	struct ln_fanout_result res;

	assert_int_equal(ln_fanout_run(&f, &res), 0);
	assert_int_equal(res.n_started, 3);
	assert_int_equal(p->ran[0] + p->ran[2], 0);
	assert_int_equal(p->ran[1] + p->ran[3] + p->ran[9], 3);
	ln_fanout_result_release(&res);
}

static void test_fanout__sigint_stops_new_work(void **state)
{
	struct probe *p = *state;
	struct ln_fanout f = { "test", 200, NULL, 4, work, p, 1 };
	struct ln_fanout_result res;

	p->raise_at = 10;
	ln_fanout_signals();
	assert_int_equal(ln_fanout_run(&f, &res), 0);
	assert_true(ln_fanout_interrupted());
	/* in flight when the signal came: finished, not abandoned */
	assert_int_equal(p->in_flight, 0);
	assert_true(res.n_started >= 10 && res.n_started < 20);
	assert_int_equal(res.n_started + res.n_skipped_by_signal, 200);
	ln_fanout_set_stop(0);
	ln_fanout_result_release(&res);
}

/* What the progress callback saw. It runs in the workers, one call at a
 * time, so it only counts; the test asserts afterwards. */
struct seen {
	size_t items, lines, ends, last_done, total;
	int bad;		/* an event that was not as documented */
};

static void on_progress(void *ctx, const struct ln_fanout_event *ev)
{
	struct seen *s = ctx;

	s->bad |= strcmp(ev->phase, "test") != 0;
	s->total = ev->total;
	if (ev->end) {
		s->ends++;
		s->bad |= ev->line != NULL;
		return;
	}
	s->items++;
	s->lines += ev->line != NULL;
	s->bad |= ev->line && strncmp(ev->line, "item ", 5);
	s->bad |= ev->done != s->last_done + 1;	/* done grows by one an item */
	s->last_done = ev->done;
}

/* One event per item with its line (none when quiet), then one end; the
 * library prints nothing itself. */
static void test_fanout__progress_reaches_the_callback(void **state)
{
	struct probe *p = *state;
	unsigned char sel[12] = { 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1 };
	struct ln_fanout f = { "test", ARRAY_SIZE(sel), sel, 3, work, p, 0 };
	struct ln_fanout_result res;
	struct seen s = { 0, 0, 0, 0, 0, 0 };

	ln_fanout_set_progress(on_progress, &s);
	assert_int_equal(ln_fanout_run(&f, &res), 0);
	ln_fanout_result_release(&res);
	assert_int_equal(s.items, 10);
	assert_int_equal(s.lines, 10);
	assert_int_equal(s.ends, 1);
	assert_int_equal(s.total, 10);
	assert_false(s.bad);
	memset(&s, 0, sizeof(s));
	f.quiet = 1;
	assert_int_equal(ln_fanout_run(&f, &res), 0);
	ln_fanout_set_progress(NULL, NULL);
	ln_fanout_result_release(&res);
	assert_int_equal(s.items, 10);
	assert_int_equal(s.lines, 0);
	assert_int_equal(s.ends, 1);
	assert_false(s.bad);
}

/* A test with a fresh probe, freed even when it fails. */
#define PROBE_TEST(t) cmocka_unit_test_setup_teardown(t, probe_setup, probe_teardown)

LN_TEST_MAIN(NULL, NULL,
	PROBE_TEST(test_fanout__window_bounds_in_flight),
	PROBE_TEST(test_fanout__select_runs_only_chosen),
	PROBE_TEST(test_fanout__sigint_stops_new_work),
	PROBE_TEST(test_fanout__progress_reaches_the_callback),
)
