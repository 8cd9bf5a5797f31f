/* SPDX-License-Identifier: MIT */
/*
 * sparse.c - a sparse table of pointers indexed by a 64-bit number.
 *
 * A radix tree of 512-way nodes, as tall as the largest index stored needs
 * (at most SPARSE_MAX_HEIGHT levels); nodes are allocated on the first store
 * below them and freed when their last entry goes. A table costs what it
 * holds, whatever the range of indexes it may hold: the memory store's
 * chunks and the thin map's leaves live in one, so that a LUN's capacity
 * costs nothing until blocks are written, and walks over a range (discard,
 * shrink, counting mapped blocks) visit only the present entries.
 */
#include "target_internal.h"

#include <errno.h>
#include <stdlib.h>

#define SPARSE_BITS 9
#define SPARSE_FANOUT (1u << SPARSE_BITS)

struct sparse_node {
	unsigned used; /* non-NULL slots */
	void *slot[SPARSE_FANOUT];
};

/* Indexes a tree of `height` levels covers: [0, 2^(9 * height)). */
static uint64_t span_of(unsigned height)
{
	return height == 0 ? 0 : 1ull << (SPARSE_BITS * height);
}

/* Slot of index i in a node of level `level` (1 = the level holding items). */
static unsigned slot_of(uint64_t i, unsigned level)
{
	return (unsigned)(i >> (SPARSE_BITS * (level - 1))) & (SPARSE_FANOUT - 1);
}

/* Returns the item at index i, or NULL. */
void *sparse_get(const struct sparse_tab *t, uint64_t i)
{
	const struct sparse_node *n = t->root;

	if (i >= span_of(t->height))
		return NULL;
	for (unsigned level = t->height; n && level > 1; level--)
		n = n->slot[slot_of(i, level)];
	return n ? n->slot[slot_of(i, 1)] : NULL;
}

/* Stores item (non-NULL) at index i; -ENOMEM, or -ERANGE past SPARSE_MAX_INDEX. */
int sparse_set(struct sparse_tab *t, uint64_t i, void *item)
{
	struct sparse_node *n;

	if (i > SPARSE_MAX_INDEX)
		return -ERANGE;
	while (i >= span_of(t->height)) {
		struct sparse_node *up = calloc(1, sizeof(*up));

		if (!up)
			return -ENOMEM;
		if (t->root) {
			up->slot[0] = t->root;
			up->used = 1;
		}
		t->root = up;
		t->height++;
	}
	n = t->root;
	for (unsigned level = t->height; level > 1; level--) {
		void **s = &n->slot[slot_of(i, level)];

		if (!*s) {
			*s = calloc(1, sizeof(struct sparse_node));
			if (!*s)
				return -ENOMEM;
			n->used++;
		}
		n = *s;
	}
	if (!n->slot[slot_of(i, 1)])
		n->used++;
	n->slot[slot_of(i, 1)] = item;
	return 0;
}

/*
 * Removes the entries of [from, to) below node n (level `level`, first index
 * base), calling drop on each item when not NULL; frees the nodes it empties.
 * Returns true when n is empty afterwards.
 */
static bool clear_below(struct sparse_node *n, unsigned level, uint64_t base, uint64_t from,
			uint64_t to, void (*drop)(void *item, void *arg), void *arg)
{
	uint64_t child_span = 1ull << (SPARSE_BITS * (level - 1));

	for (unsigned k = 0; k < SPARSE_FANOUT && n->used; k++) {
		uint64_t lo = base + k * child_span, hi = lo + child_span;

		if (hi <= from)
			continue;
		if (lo >= to)
			break;
		if (!n->slot[k])
			continue;
		if (level == 1) {
			if (drop)
				drop(n->slot[k], arg);
		} else if (!clear_below(n->slot[k], level - 1, lo, from, to, drop, arg)) {
			continue;
		}
		if (level > 1)
			free(n->slot[k]);
		n->slot[k] = NULL;
		n->used--;
	}
	return n->used == 0;
}

/* Removes the entries with indexes in [from, to), calling drop on each (when not NULL). */
void sparse_clear(struct sparse_tab *t, uint64_t from, uint64_t to,
		  void (*drop)(void *item, void *arg), void *arg)
{
	if (!t->root || from >= to || from >= span_of(t->height))
		return;
	if (clear_below(t->root, t->height, 0, from, to, drop, arg)) {
		free(t->root);
		t->root = NULL;
		t->height = 0;
	}
}

/* First item at an index in [*i, end) below node n (level, first index base). */
static void *next_below(const struct sparse_node *n, unsigned level, uint64_t base, uint64_t *i,
			uint64_t end)
{
	uint64_t child_span = 1ull << (SPARSE_BITS * (level - 1));

	for (unsigned k = (unsigned)((*i - base) / child_span); k < SPARSE_FANOUT; k++) {
		uint64_t lo = base + k * child_span;
		void *r;

		if (lo >= end)
			return NULL;
		if (!n->slot[k])
			continue;
		if (lo > *i)
			*i = lo;
		if (level == 1)
			return n->slot[k];
		r = next_below(n->slot[k], level - 1, lo, i, end);
		if (r)
			return r;
	}
	return NULL;
}

/* The first item at an index in [*i, end), its index in *i; NULL when there is none. */
void *sparse_next(const struct sparse_tab *t, uint64_t *i, uint64_t end)
{
	if (!t->root || *i >= span_of(t->height) || *i >= end)
		return NULL;
	return next_below(t->root, t->height, 0, i, end);
}

/* Number of nodes the table holds (4 KiB each), for tests and limits. */
static size_t count_below(const struct sparse_node *n, unsigned level)
{
	size_t c = 1;

	if (level > 1)
		for (unsigned k = 0; k < SPARSE_FANOUT; k++)
			if (n->slot[k])
				c += count_below(n->slot[k], level - 1);
	return c;
}

/* Number of tree nodes allocated (each about 4 KiB). */
size_t sparse_nodes(const struct sparse_tab *t)
{
	return t->root ? count_below(t->root, t->height) : 0;
}
