/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the engine's timer thread: the timer queue of common/fl_timer.h
 * (a heap of intrusive nodes, ordered by CLOCK_MONOTONIC deadline) under a
 * mutex, and one thread that sleeps on a condition variable bound to
 * CLOCK_MONOTONIC until the earliest deadline. A node costs nothing beyond
 * itself (no allocation per timer), so thousands of delayed commands are
 * cheap. Callbacks run on the timer thread without the lock held and may add
 * or cancel timers.
 *
 * A front end with an event loop of its own may take the heap over
 * (timers_adopt): the thread ends, the loop fires due nodes itself
 * (timers_run_due) and is told through its kick callback when a node becomes
 * the earliest; timers_release hands the heap back to a new thread. A delayed
 * command then costs one wake-up of the thread that answers it instead of two.
 */
#include "faults_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

struct timers {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	struct fl_theap heap;
	bool stop;
	bool running;		 /* the timer thread exists */
	void (*kick)(void *arg); /* set while a loop drives the heap */
	void *kick_arg;
};

/* The timer thread: fires nodes whose deadline has passed. */
static void *timer_main(void *arg)
{
	struct timers *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		struct fl_timer *n = fl_theap_pop_due(&t->heap, fl_mono_ns());

		if (n) {
			pthread_mutex_unlock(&t->lock);
			n->fn(n);
			pthread_mutex_lock(&t->lock);
			continue;
		}
		n = fl_theap_first(&t->heap);
		if (n) {
			struct timespec ts = {.tv_sec = (time_t)(n->due_ns / 1000000000ull),
					      .tv_nsec = (long)(n->due_ns % 1000000000ull)};

			pthread_cond_timedwait(&t->cond, &t->lock, &ts);
		} else {
			pthread_cond_wait(&t->cond, &t->lock);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* Starts the timer thread. */
int timers_start(struct timers **out)
{
	struct timers *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;
	int r;

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	r = pthread_create(&t->thread, NULL, timer_main, t);
	if (r) {
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return -r;
	}
	t->running = true;
	*out = t;
	return 0;
}

/* Ends the timer thread, if any; queued nodes stay queued. */
static void thread_end(struct timers *t)
{
	if (!t->running)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	t->stop = false;
	t->running = false;
}

/* Stops and joins the thread; queued nodes stay queued (see timers_drain). */
void timers_stop(struct timers *t)
{
	thread_end(t);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	fl_theap_free(&t->heap);
	free(t);
}

/* Queues n to fire at due_ns (CLOCK_MONOTONIC). */
void timers_add(struct timers *t, struct fl_timer *n, uint64_t due_ns)
{
	void (*kick)(void *) = NULL;
	void *kick_arg;

	pthread_mutex_lock(&t->lock);
	if (fl_theap_push(&t->heap, n, due_ns) < 0) {
		/* out of memory: fire at once rather than lose the node */
		pthread_mutex_unlock(&t->lock);
		n->fn(n);
		return;
	}
	kick_arg = t->kick_arg;
	if (fl_theap_first(&t->heap) == n) {
		if (t->kick)
			kick = t->kick;
		else
			pthread_cond_signal(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	if (kick)
		kick(kick_arg);
}

/* Ends the thread; from now on the caller's loop fires nodes (timers_run_due). */
int timers_adopt(struct timers *t, void (*kick)(void *arg), void *arg)
{
	if (!kick)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	bool taken = t->kick != NULL;
	pthread_mutex_unlock(&t->lock);
	if (taken)
		return -EBUSY;
	thread_end(t);
	pthread_mutex_lock(&t->lock);
	t->kick = kick;
	t->kick_arg = arg;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/* Hands the heap back to a new timer thread. */
int timers_release(struct timers *t)
{
	int r;

	pthread_mutex_lock(&t->lock);
	t->kick = NULL;
	t->kick_arg = NULL;
	pthread_mutex_unlock(&t->lock);
	if (t->running)
		return 0;
	r = pthread_create(&t->thread, NULL, timer_main, t);
	if (r)
		return -r;
	t->running = true;
	return 0;
}

/*
 * Fires, on the calling thread, every node due by now; sets *fired to their
 * number and returns the next deadline (UINT64_MAX when the heap is empty).
 */
uint64_t timers_run_due(struct timers *t, unsigned *fired)
{
	struct fl_timer *n;
	unsigned k = 0;
	uint64_t next;

	pthread_mutex_lock(&t->lock);
	while ((n = fl_theap_pop_due(&t->heap, fl_mono_ns()))) {
		pthread_mutex_unlock(&t->lock);
		n->fn(n);
		k++;
		pthread_mutex_lock(&t->lock);
	}
	n = fl_theap_first(&t->heap);
	next = n ? n->due_ns : UINT64_MAX;
	pthread_mutex_unlock(&t->lock);
	if (fired)
		*fired = k;
	return next;
}

/* Returns true when n was queued and is now removed (it will not fire). */
bool timers_cancel(struct timers *t, struct fl_timer *n)
{
	bool was;

	pthread_mutex_lock(&t->lock);
	was = fl_theap_remove(&t->heap, n);
	pthread_mutex_unlock(&t->lock);
	return was;
}

/* Removes and returns every queued node (the caller frees *out). */
size_t timers_drain(struct timers *t, struct fl_timer ***out)
{
	struct fl_timer *n;
	size_t k = 0;

	pthread_mutex_lock(&t->lock);
	*out = malloc((t->heap.n ? t->heap.n : 1) * sizeof(**out));
	while (*out && (n = fl_theap_pop_due(&t->heap, UINT64_MAX)))
		(*out)[k++] = n;
	pthread_mutex_unlock(&t->lock);
	return k;
}
