/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the loop's timers, in the timer queue of common/fl_timer.h.
 *
 * A timer fires on the loop thread (timers_run, called by fl_iscsi_run); one
 * tied to a connection is dropped with it (timers_drop_conn) and never fires
 * for a connection marked dead. A timer given a slot (a pointer that names it,
 * such as c->nop_timer) clears that slot when it fires or is dropped, so a
 * slot never names a freed timer. Equal deadlines fire in the order they were
 * set. RFC 7143 has no clause for this file.
 */
#include "iscsi_internal.h"

#include <stdlib.h>

/* The loop timer around a queue node. */
static struct timer *timer_of(struct fl_timer *n)
{
	return (struct timer *)((char *)n - offsetof(struct timer, node));
}

/* Frees a timer that left the queue unfired, its argument and its slot. */
static void timer_free(struct timer *t)
{
	if (t->slot && *t->slot == t)
		*t->slot = NULL;
	if (t->free_arg)
		t->free_arg(t->arg);
	free(t);
}

/*
 * Sets a timer firing after delay_ns on the loop thread; owned by the portal.
 * With a slot, a timer already there is cancelled first and the new one is
 * stored in it. NULL when out of memory (arg is then left to the caller).
 */
struct timer *timer_add(struct portal *p, struct timer **slot, struct conn *c, uint64_t delay_ns,
			void (*fn)(struct portal *, struct conn *, void *), void *arg,
			void (*free_arg)(void *))
{
	struct timer *t;

	if (slot && *slot)
		timer_cancel(p, *slot);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	fl_timer_init(&t->node, NULL);
	t->slot = slot;
	t->conn = c;
	t->fn = fn;
	t->arg = arg;
	t->free_arg = free_arg;
	if (fl_theap_push(&p->timers, &t->node, fl_mono_ns() + delay_ns) < 0) {
		free(t);
		return NULL;
	}
	if (slot)
		*slot = t;
	return t;
}

/* Removes a timer that has not fired and frees its argument (NULL: nothing). */
void timer_cancel(struct portal *p, struct timer *t)
{
	if (t && fl_theap_remove(&p->timers, &t->node))
		timer_free(t);
}

/* Runs due loop timers; returns the next deadline (ns), at most 1 s ahead. */
uint64_t timers_run(struct portal *p)
{
	uint64_t now = fl_mono_ns();
	struct fl_timer *n;

	while ((n = fl_theap_pop_due(&p->timers, now))) {
		struct timer *t = timer_of(n);

		if (t->slot && *t->slot == t)
			*t->slot = NULL; /* fired: the callback may set a new one */
		t->slot = NULL;
		if (!t->conn || !t->conn->dead) {
			t->fn(p, t->conn, t->arg); /* the argument is the callback's now */
			free(t);
		} else {
			timer_free(t);
		}
	}
	n = fl_theap_first(&p->timers);
	if (n && n->due_ns < now + 1000000000u)
		return n->due_ns;
	return now + 1000000000u;
}

/* True for a timer of the connection ctx. */
static bool of_conn(struct fl_timer *n, void *ctx)
{
	return timer_of(n)->conn == ctx;
}

/* Frees a timer taken out of the queue. */
static void dropped(struct fl_timer *n, void *ctx)
{
	(void)ctx;
	timer_free(timer_of(n));
}

/* Drops the timers of a connection being torn down, freeing their arguments. */
void timers_drop_conn(struct portal *p, struct conn *c)
{
	fl_theap_remove_if(&p->timers, of_conn, dropped, c);
}

/* True for every timer. */
static bool any(struct fl_timer *n, void *ctx)
{
	(void)n;
	(void)ctx;
	return true;
}

/* Frees every timer that has not fired (the portal is being destroyed). */
void timers_free(struct portal *p)
{
	fl_theap_remove_if(&p->timers, any, dropped, NULL);
	fl_theap_free(&p->timers);
}
