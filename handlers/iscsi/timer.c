/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the loop's clock and timers.
 *
 * A timer fires on the loop thread (timers_run, called by fl_iscsi_run); one
 * tied to a connection is dropped with it (timers_drop_conn) and never fires
 * for a connection marked dead. The list is kept in deadline order. RFC 7143
 * has no clause for this file.
 */
#include "iscsi_internal.h"

#include <stdlib.h>
#include <time.h>

/* Monotonic clock in nanoseconds. */
uint64_t iscsi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Adds a timer firing after delay_ns on the loop thread; owned by the portal. */
struct timer *timer_add(struct portal *p, struct conn *c, uint64_t delay_ns,
			void (*fn)(struct portal *, struct conn *, void *), void *arg,
			void (*free_arg)(void *))
{
	struct timer *t = calloc(1, sizeof(*t)), **pp;

	if (!t)
		return NULL;
	t->when_ns = iscsi_now_ns() + delay_ns;
	t->conn = c;
	t->fn = fn;
	t->arg = arg;
	t->free_arg = free_arg;
	for (pp = &p->timers; *pp && (*pp)->when_ns <= t->when_ns; pp = &(*pp)->next)
		;
	t->next = *pp;
	*pp = t;
	return t;
}

/* Removes a timer that has not fired and frees its argument. */
void timer_cancel(struct portal *p, struct timer *t)
{
	for (struct timer **pp = &p->timers; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			if (t->free_arg)
				t->free_arg(t->arg);
			free(t);
			return;
		}
	}
}

/* Runs due loop timers; returns the next deadline (ns), at most 1 s ahead. */
uint64_t timers_run(struct portal *p)
{
	uint64_t now = iscsi_now_ns();

	while (p->timers && p->timers->when_ns <= now) {
		struct timer *t = p->timers;
		p->timers = t->next;
		if (t->conn && t->conn->dead) {
			if (t->free_arg)
				t->free_arg(t->arg);
		} else {
			t->fn(p, t->conn, t->arg);
		}
		free(t);
	}
	if (p->timers && p->timers->when_ns < now + 1000000000u)
		return p->timers->when_ns;
	return now + 1000000000u;
}

/* Drops the timers of a connection being torn down, freeing their arguments. */
void timers_drop_conn(struct portal *p, struct conn *c)
{
	for (struct timer **pp = &p->timers; *pp;) {
		struct timer *t = *pp;
		if (t->conn == c) {
			*pp = t->next;
			if (t->free_arg)
				t->free_arg(t->arg);
			free(t);
		} else {
			pp = &t->next;
		}
	}
}

/* Frees every timer that has not fired (the portal is being destroyed). */
void timers_free(struct portal *p)
{
	while (p->timers) {
		struct timer *x = p->timers;
		p->timers = x->next;
		if (x->free_arg)
			x->free_arg(x->arg);
		free(x);
	}
}
