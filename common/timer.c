/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the timer queue (fl_timer.h): a binary min-heap on (deadline,
 * queue order), each node knowing its slot so that removal is O(log n).
 */
#include "fl_timer.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

uint64_t fl_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fl_timer_init(struct fl_timer *t, fl_timer_fn fn)
{
	t->due_ns = 0;
	t->seq = 0;
	t->heap_index = SIZE_MAX;
	t->fn = fn;
}

/* True when a fires before b. */
static bool before(const struct fl_timer *a, const struct fl_timer *b)
{
	return a->due_ns != b->due_ns ? a->due_ns < b->due_ns : a->seq < b->seq;
}

/* Puts node x in slot i. */
static void place(struct fl_theap *h, size_t i, struct fl_timer *x)
{
	h->v[i] = x;
	x->heap_index = i;
}

/* Restores the order upwards from slot i. */
static void sift_up(struct fl_theap *h, size_t i)
{
	struct fl_timer *x = h->v[i];

	while (i > 0 && before(x, h->v[(i - 1) / 2])) {
		place(h, i, h->v[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(h, i, x);
}

/* Restores the order downwards from slot i. */
static void sift_down(struct fl_theap *h, size_t i)
{
	struct fl_timer *x = h->v[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
			c++;
		if (!before(h->v[c], x))
			break;
		place(h, i, h->v[c]);
		i = c;
	}
	place(h, i, x);
}

/* True when t sits in h. */
static bool queued(const struct fl_theap *h, const struct fl_timer *t)
{
	return t->heap_index < h->n && h->v[t->heap_index] == t;
}

/* Takes slot i out. */
static void take(struct fl_theap *h, size_t i)
{
	struct fl_timer *t = h->v[i];

	h->n--;
	if (i != h->n) {
		struct fl_timer *last = h->v[h->n];

		place(h, i, last);
		sift_down(h, i);
		sift_up(h, last->heap_index);
	}
	t->heap_index = SIZE_MAX;
}

int fl_theap_push(struct fl_theap *h, struct fl_timer *t, uint64_t due_ns)
{
	if (queued(h, t))
		take(h, t->heap_index);
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct fl_timer **v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	t->due_ns = due_ns;
	t->seq = h->seq++;
	place(h, h->n++, t);
	sift_up(h, h->n - 1);
	return 0;
}

bool fl_theap_remove(struct fl_theap *h, struct fl_timer *t)
{
	if (!queued(h, t))
		return false;
	take(h, t->heap_index);
	return true;
}

struct fl_timer *fl_theap_first(const struct fl_theap *h)
{
	return h->n ? h->v[0] : NULL;
}

struct fl_timer *fl_theap_pop_due(struct fl_theap *h, uint64_t now_ns)
{
	struct fl_timer *t = fl_theap_first(h);

	if (!t || t->due_ns > now_ns)
		return NULL;
	take(h, 0);
	return t;
}

size_t fl_theap_remove_if(struct fl_theap *h, bool (*match)(struct fl_timer *t, void *ctx),
			  void (*gone)(struct fl_timer *t, void *ctx), void *ctx)
{
	size_t n = h->n, out;

	/* Matches go to the tail, then the rest is heap-ordered again. */
	for (size_t i = 0; i < n;) {
		struct fl_timer *t = h->v[i];

		if (match(t, ctx)) {
			h->v[i] = h->v[--n];
			h->v[n] = t;
			t->heap_index = SIZE_MAX;
		} else {
			i++;
		}
	}
	out = h->n - n;
	h->n = n;
	for (size_t i = 0; i < n; i++)
		h->v[i]->heap_index = i;
	for (size_t i = n / 2; i-- > 0;)
		sift_down(h, i);
	for (size_t i = 0; i < out; i++)
		gone(h->v[n + i], ctx);
	return out;
}

void fl_theap_free(struct fl_theap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}
