/* SPDX-License-Identifier: MIT */
/*
 * fl_timer.h - the one timer queue of faultlun: a binary min-heap of
 * intrusive nodes ordered by CLOCK_MONOTONIC deadline, ties in the order
 * they were queued. It allocates only its array (never per timer) and takes
 * no lock: the fault engine's timer thread wraps it in its mutex
 * (faults/timer.c), the iSCSI loop uses it from its own thread
 * (handlers/iscsi/timer.c).
 */
#ifndef FL_TIMER_H
#define FL_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fl_timer;
typedef void (*fl_timer_fn)(struct fl_timer *t);

/* A queued callback; embed it and recover the container in fn. */
struct fl_timer {
	uint64_t due_ns;   /* CLOCK_MONOTONIC */
	uint64_t seq;	   /* queue order among equal deadlines */
	size_t heap_index; /* SIZE_MAX when not queued */
	fl_timer_fn fn;
};

/* The queue; zero-initialised it is empty. */
struct fl_theap {
	struct fl_timer **v;
	size_t n, cap;
	uint64_t seq;
};

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t fl_mono_ns(void);
/* Marks t as not queued, with fn as its callback. */
void fl_timer_init(struct fl_timer *t, fl_timer_fn fn);
/* Queues t for due_ns (re-queues it when queued); 0, or -ENOMEM (t not queued). */
int fl_theap_push(struct fl_theap *h, struct fl_timer *t, uint64_t due_ns);
/* Takes t out of the queue; false when it was not queued there. */
bool fl_theap_remove(struct fl_theap *h, struct fl_timer *t);
/* The earliest node, or NULL when the queue is empty. */
struct fl_timer *fl_theap_first(const struct fl_theap *h);
/* Takes out and returns the earliest node due by now_ns, or NULL. */
struct fl_timer *fl_theap_pop_due(struct fl_theap *h, uint64_t now_ns);
/*
 * Takes out every node for which match(node, ctx) is true, calling gone(node,
 * ctx) on each after it left the queue (it may free it, but must not queue
 * a node on h); returns their number.
 */
size_t fl_theap_remove_if(struct fl_theap *h, bool (*match)(struct fl_timer *t, void *ctx),
			  void (*gone)(struct fl_timer *t, void *ctx), void *ctx);
/* Frees the array; the nodes still queued are left alone (drain them first). */
void fl_theap_free(struct fl_theap *h);

#endif
