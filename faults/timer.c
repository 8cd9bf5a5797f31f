/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the engine's timer thread: a binary min-heap of intrusive timer
 * nodes ordered by CLOCK_MONOTONIC deadline, and one thread that sleeps on a
 * condition variable bound to CLOCK_MONOTONIC until the earliest deadline.
 * A node costs nothing beyond itself (no allocation per timer), so thousands
 * of delayed commands are cheap. Callbacks run on the timer thread without
 * the heap lock held and may add or cancel timers.
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
#include <string.h>
#include <time.h>

struct timers {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	struct timer_node **heap;
	size_t n, cap;
	bool stop;
	bool running;		 /* the timer thread exists */
	void (*kick)(void *arg); /* set while a loop drives the heap */
	void *kick_arg;
};

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Swaps two heap slots, keeping the nodes' indexes. */
static void hswap(struct timers *t, size_t a, size_t b)
{
	struct timer_node *x = t->heap[a];

	t->heap[a] = t->heap[b];
	t->heap[b] = x;
	t->heap[a]->heap_index = a;
	t->heap[b]->heap_index = b;
}

/* Restores the heap order upwards from i. */
static void sift_up(struct timers *t, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (t->heap[p]->due_ns <= t->heap[i]->due_ns)
			break;
		hswap(t, p, i);
		i = p;
	}
}

/* Restores the heap order downwards from i. */
static void sift_down(struct timers *t, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < t->n && t->heap[l]->due_ns < t->heap[m]->due_ns)
			m = l;
		if (r < t->n && t->heap[r]->due_ns < t->heap[m]->due_ns)
			m = r;
		if (m == i)
			return;
		hswap(t, i, m);
		i = m;
	}
}

/* Removes slot i from the heap. Lock held. */
static void heap_remove(struct timers *t, size_t i)
{
	struct timer_node *n = t->heap[i];

	t->n--;
	if (i != t->n) {
		t->heap[i] = t->heap[t->n];
		t->heap[i]->heap_index = i;
		sift_down(t, i);
		sift_up(t, i);
	}
	n->heap_index = SIZE_MAX;
}

/* The timer thread: fires nodes whose deadline has passed. */
static void *timer_main(void *arg)
{
	struct timers *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		uint64_t now = mono_ns();

		if (t->n && t->heap[0]->due_ns <= now) {
			struct timer_node *n = t->heap[0];

			heap_remove(t, 0);
			pthread_mutex_unlock(&t->lock);
			n->fn(n);
			pthread_mutex_lock(&t->lock);
			continue;
		}
		if (t->n) {
			struct timespec ts = {
			    .tv_sec = (time_t)(t->heap[0]->due_ns / 1000000000ull),
			    .tv_nsec = (long)(t->heap[0]->due_ns % 1000000000ull)};

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
	free(t->heap);
	free(t);
}

/* Queues n to fire at due_ns (CLOCK_MONOTONIC). */
void timers_add(struct timers *t, struct timer_node *n, uint64_t due_ns)
{
	pthread_mutex_lock(&t->lock);
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct timer_node **h = realloc(t->heap, cap * sizeof(*h));

		if (!h) {
			/* out of memory: fire at once rather than lose the node */
			pthread_mutex_unlock(&t->lock);
			n->heap_index = SIZE_MAX;
			n->fn(n);
			return;
		}
		t->heap = h;
		t->cap = cap;
	}
	n->due_ns = due_ns;
	n->heap_index = t->n;
	t->heap[t->n++] = n;
	sift_up(t, n->heap_index);
	void (*kick)(void *) = NULL;
	void *kick_arg = t->kick_arg;
	if (t->heap[0] == n) {
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
	uint64_t next;
	unsigned k = 0;

	pthread_mutex_lock(&t->lock);
	for (uint64_t now = mono_ns(); t->n && t->heap[0]->due_ns <= now; now = mono_ns()) {
		struct timer_node *n = t->heap[0];

		heap_remove(t, 0);
		pthread_mutex_unlock(&t->lock);
		n->fn(n);
		k++;
		pthread_mutex_lock(&t->lock);
	}
	next = t->n ? t->heap[0]->due_ns : UINT64_MAX;
	pthread_mutex_unlock(&t->lock);
	if (fired)
		*fired = k;
	return next;
}

/* Returns true when n was queued and is now removed (it will not fire). */
bool timers_cancel(struct timers *t, struct timer_node *n)
{
	bool was = false;

	pthread_mutex_lock(&t->lock);
	if (n->heap_index != SIZE_MAX && n->heap_index < t->n && t->heap[n->heap_index] == n) {
		heap_remove(t, n->heap_index);
		was = true;
	}
	pthread_mutex_unlock(&t->lock);
	return was;
}

/* Removes and returns every queued node (the caller frees *out). */
size_t timers_drain(struct timers *t, struct timer_node ***out)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->n;
	*out = malloc((n ? n : 1) * sizeof(**out));
	if (*out) {
		for (size_t i = 0; i < n; i++) {
			(*out)[i] = t->heap[i];
			t->heap[i]->heap_index = SIZE_MAX;
		}
		t->n = 0;
	} else {
		n = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}
