/* SPDX-License-Identifier: MIT */
/*
 * lba_index.c - the LBA interval index of the rule matcher.
 *
 * Rules with an LBA range are kept per command class in a static interval
 * tree: the intervals sorted by their first LBA form an implicit balanced
 * binary search tree (the middle element of every sub-array is its root), and
 * each root also records the largest last LBA of its sub-array. A stabbing
 * query for a command's range [lo, hi] visits O(log n + k) nodes for k hits,
 * so rules that cannot match cost next to nothing however many there are.
 * The index is built once per scenario and only read afterwards.
 */
#include "faults_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Orders intervals by first LBA, then by rule number. */
static int ival_cmp(const void *a, const void *b)
{
	const struct lba_ival *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/* Fills maxhi for the sub-array [l, r); returns its largest hi. */
static uint64_t build_max(struct lba_tree *t, size_t l, size_t r)
{
	size_t mid;
	uint64_t m;

	if (l >= r)
		return 0;
	mid = l + (r - l) / 2;
	m = t->v[mid].hi;
	uint64_t a = build_max(t, l, mid), b = build_max(t, mid + 1, r);

	if (a > m)
		m = a;
	if (b > m)
		m = b;
	t->maxhi[mid] = m;
	return m;
}

/* Builds from n intervals (copied); returns 0 or -ENOMEM. */
int lba_tree_build(struct lba_tree *t, const struct lba_ival *v, size_t n)
{
	memset(t, 0, sizeof(*t));
	if (!n)
		return 0;
	t->v = malloc(n * sizeof(*t->v));
	t->maxhi = malloc(n * sizeof(*t->maxhi));
	if (!t->v || !t->maxhi) {
		lba_tree_free(t);
		return -ENOMEM;
	}
	memcpy(t->v, v, n * sizeof(*v));
	t->n = n;
	qsort(t->v, n, sizeof(*t->v), ival_cmp);
	build_max(t, 0, n);
	return 0;
}

/* Frees the tree's arrays. */
void lba_tree_free(struct lba_tree *t)
{
	free(t->v);
	free(t->maxhi);
	memset(t, 0, sizeof(*t));
}

/* Visits the sub-array [l, r) for intervals overlapping [lo, hi]. */
static void query(const struct lba_tree *t, size_t l, size_t r, uint64_t lo, uint64_t hi,
		  void (*fn)(uint32_t rule, void *ctx), void *ctx)
{
	while (l < r) {
		size_t mid = l + (r - l) / 2;

		if (t->maxhi[mid] < lo)
			return; /* nothing here reaches up to lo */
		query(t, l, mid, lo, hi, fn, ctx);
		if (t->v[mid].lo > hi)
			return; /* everything to the right starts after hi */
		if (t->v[mid].hi >= lo)
			fn(t->v[mid].rule, ctx);
		l = mid + 1;
	}
}

/* Calls fn(rule, ctx) for every interval overlapping [lo, hi]. */
void lba_tree_query(const struct lba_tree *t, uint64_t lo, uint64_t hi,
		    void (*fn)(uint32_t rule, void *ctx), void *ctx)
{
	if (t->n)
		query(t, 0, t->n, lo, hi, fn, ctx);
}
