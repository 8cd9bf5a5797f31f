/* SPDX-License-Identifier: MIT */
/*
 * thin.c - provisioning map of a thin LUN (SBC-3 r36 4.7).
 *
 * One bit per logical block: 1 = mapped (anchored/allocated from the pool),
 * 0 = deallocated. Leaves of THIN_LEAF_BLOCKS bits are allocated when a block
 * in them is first mapped and kept in a sparse table (sparse.c), so an empty
 * LUN costs nothing whatever its size, and walks over ranges (unmap, counts,
 * extents, a shrink) skip the leaves that are not there. The map counts
 * mapped blocks; sbc.c compares that count with the pool size (27/07) and the
 * soft threshold (UA 38/07).
 */
#include "target_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define THIN_LEAF_SHIFT 15
#define THIN_LEAF_BLOCKS (1u << THIN_LEAF_SHIFT)
#define THIN_LEAF_WORDS (THIN_LEAF_BLOCKS / 64)

struct thin_leaf {
	uint32_t count; /* mapped blocks in this leaf */
	uint64_t bits[THIN_LEAF_WORDS];
};

struct thin_map {
	uint64_t nblocks;
	uint64_t mapped;
	struct sparse_tab leaves; /* leaf number -> struct thin_leaf */
};

/* Frees one leaf (a sparse_clear callback). */
static void leaf_free(void *leaf, void *arg)
{
	(void)arg;
	free(leaf);
}

/* Creates an all-deallocated map. */
int thin_create(uint64_t nblocks, struct thin_map **out)
{
	struct thin_map *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->nblocks = nblocks;
	*out = t;
	return 0;
}

/* Frees the map. */
void thin_destroy(struct thin_map *t)
{
	if (!t)
		return;
	sparse_clear(&t->leaves, 0, UINT64_MAX, leaf_free, NULL);
	free(t);
}

/* Changes the number of blocks; blocks cut off are deallocated (only held leaves are visited). */
int thin_resize(struct thin_map *t, uint64_t nblocks)
{
	if (nblocks < t->nblocks)
		thin_unmap_range(t, nblocks, t->nblocks - nblocks);
	t->nblocks = nblocks;
	return 0;
}

/* True when the block is mapped. */
bool thin_is_mapped(const struct thin_map *t, uint64_t lba)
{
	const struct thin_leaf *l;

	if (lba >= t->nblocks)
		return false;
	l = sparse_get(&t->leaves, lba >> THIN_LEAF_SHIFT);
	if (!l)
		return false;
	lba &= THIN_LEAF_BLOCKS - 1;
	return (l->bits[lba / 64] >> (lba % 64)) & 1;
}

/* Counts mapped blocks in [lba, lba+n) (clipped to the map). */
static uint64_t count_mapped(const struct thin_map *t, uint64_t lba, uint64_t n)
{
	uint64_t end, cnt = 0;

	if (lba >= t->nblocks)
		return 0;
	end = n > t->nblocks - lba ? t->nblocks : lba + n;
	while (lba < end) {
		uint64_t li = lba >> THIN_LEAF_SHIFT, from = li;
		const struct thin_leaf *l =
		    sparse_next(&t->leaves, &li, ((end - 1) >> THIN_LEAF_SHIFT) + 1);
		uint64_t leaf_end, stop;

		if (!l)
			break; /* no mapped block in the rest */
		if (li != from)
			lba = li << THIN_LEAF_SHIFT;
		leaf_end = (li + 1) << THIN_LEAF_SHIFT;
		stop = leaf_end < end ? leaf_end : end;
		if ((lba & (THIN_LEAF_BLOCKS - 1)) == 0 && stop == leaf_end) {
			cnt += l->count;
			lba = stop;
			continue;
		}
		for (; lba < stop; lba++) {
			uint64_t b = lba & (THIN_LEAF_BLOCKS - 1);

			cnt += (l->bits[b / 64] >> (b % 64)) & 1;
		}
	}
	return cnt;
}

/* Number of unmapped blocks in [lba, lba+n). */
uint64_t thin_count_unmapped(const struct thin_map *t, uint64_t lba, uint64_t n)
{
	uint64_t span;

	if (lba >= t->nblocks)
		return 0;
	span = n > t->nblocks - lba ? t->nblocks - lba : n;
	return span - count_mapped(t, lba, span);
}

/* Sets or clears bits of [lba, lba+n); returns how many changed. */
static uint64_t set_range(struct thin_map *t, uint64_t lba, uint64_t n, bool map)
{
	uint64_t end, changed = 0;

	if (lba >= t->nblocks)
		return 0;
	end = n > t->nblocks - lba ? t->nblocks : lba + n;
	while (lba < end) {
		uint64_t li = lba >> THIN_LEAF_SHIFT;
		uint64_t leaf_end, stop;
		struct thin_leaf *l;

		if (!map) {
			/* clearing: jump to the next leaf held */
			uint64_t from = li;

			l = sparse_next(&t->leaves, &li, ((end - 1) >> THIN_LEAF_SHIFT) + 1);
			if (!l)
				break;
			if (li != from)
				lba = li << THIN_LEAF_SHIFT;
		} else if (!(l = sparse_get(&t->leaves, li))) {
			l = calloc(1, sizeof(*l));
			if (!l || sparse_set(&t->leaves, li, l)) {
				free(l);
				break; /* accounting stays exact */
			}
		}
		leaf_end = (li + 1) << THIN_LEAF_SHIFT;
		stop = leaf_end < end ? leaf_end : end;
		for (; lba < stop; lba++) {
			uint64_t b = lba & (THIN_LEAF_BLOCKS - 1);
			uint64_t bit = 1ull << (b % 64);
			bool is = l->bits[b / 64] & bit;

			if (is == map)
				continue;
			l->bits[b / 64] ^= bit;
			changed++;
			if (map)
				l->count++;
			else
				l->count--;
		}
		if (l->count == 0)
			sparse_clear(&t->leaves, li, li + 1, leaf_free, NULL);
	}
	if (map)
		t->mapped += changed;
	else
		t->mapped -= changed;
	return changed;
}

/* Maps a range; returns blocks newly mapped. */
uint64_t thin_map_range(struct thin_map *t, uint64_t lba, uint64_t n)
{
	return set_range(t, lba, n, true);
}

/* Deallocates a range; returns blocks freed. */
uint64_t thin_unmap_range(struct thin_map *t, uint64_t lba, uint64_t n)
{
	return set_range(t, lba, n, false);
}

/* Length (up to max) of the run of blocks from lba with lba's state. */
uint64_t thin_extent(const struct thin_map *t, uint64_t lba, uint64_t max, bool *mapped)
{
	uint64_t end, cur = lba;
	bool state;

	if (lba >= t->nblocks) {
		*mapped = false;
		return 0;
	}
	end = max > t->nblocks - lba ? t->nblocks : lba + max;
	state = thin_is_mapped(t, lba);
	*mapped = state;
	while (cur < end) {
		uint64_t li = cur >> THIN_LEAF_SHIFT;
		const struct thin_leaf *l;
		uint64_t leaf_end, stop;

		if (!state) {
			/* a run of deallocated blocks: the leaves not held are skipped at once */
			uint64_t from = li;

			l = sparse_next(&t->leaves, &li, ((end - 1) >> THIN_LEAF_SHIFT) + 1);
			if (!l) {
				cur = end;
				break;
			}
			if (li != from)
				cur = li << THIN_LEAF_SHIFT;
		} else {
			l = sparse_get(&t->leaves, li);
		}
		leaf_end = (li + 1) << THIN_LEAF_SHIFT;
		stop = leaf_end < end ? leaf_end : end;

		/* whole empty (or full) leaves are skipped in one step */
		if ((!l && !state) || (l && state && l->count == THIN_LEAF_BLOCKS &&
				       (cur & (THIN_LEAF_BLOCKS - 1)) == 0)) {
			cur = stop;
			continue;
		}
		if (!l)
			break;
		for (; cur < stop; cur++) {
			uint64_t b = cur & (THIN_LEAF_BLOCKS - 1);

			if ((bool)((l->bits[b / 64] >> (b % 64)) & 1) != state)
				return cur - lba;
		}
	}
	return cur - lba;
}

/* Blocks currently mapped. */
uint64_t thin_mapped_count(const struct thin_map *t)
{
	return t->mapped;
}
