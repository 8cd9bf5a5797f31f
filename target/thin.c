/* SPDX-License-Identifier: MIT */
/*
 * thin.c - provisioning map of a thin LUN (SBC-3 r36 4.7).
 *
 * One bit per logical block: 1 = mapped (anchored/allocated from the pool),
 * 0 = deallocated. Leaves of THIN_LEAF_BLOCKS bits are allocated when a block
 * in them is first mapped, so an empty multi-terabyte LUN costs one pointer
 * per leaf. The map counts mapped blocks; sbc.c compares that count with the
 * pool size (27/07) and the soft threshold (UA 38/07).
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
	struct thin_leaf **leaves;
	size_t nleaves;
};

/* Leaves needed for nblocks. */
static size_t leaves_for(uint64_t nblocks)
{
	return (size_t)((nblocks + THIN_LEAF_BLOCKS - 1) >> THIN_LEAF_SHIFT);
}

/* Creates an all-deallocated map. */
int thin_create(uint64_t nblocks, struct thin_map **out)
{
	struct thin_map *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->nblocks = nblocks;
	t->nleaves = leaves_for(nblocks);
	t->leaves = calloc(t->nleaves ? t->nleaves : 1, sizeof(*t->leaves));
	if (!t->leaves) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

/* Frees the map. */
void thin_destroy(struct thin_map *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nleaves; i++)
		free(t->leaves[i]);
	free(t->leaves);
	free(t);
}

/* Changes the number of blocks; blocks cut off are deallocated. */
int thin_resize(struct thin_map *t, uint64_t nblocks)
{
	size_t nl = leaves_for(nblocks);

	if (nblocks < t->nblocks)
		thin_unmap_range(t, nblocks, t->nblocks - nblocks);
	if (nl != t->nleaves) {
		struct thin_leaf **l;

		for (size_t i = nl; i < t->nleaves; i++) {
			free(t->leaves[i]);
			t->leaves[i] = NULL;
		}
		l = realloc(t->leaves, (nl ? nl : 1) * sizeof(*l));
		if (!l)
			return -ENOMEM;
		for (size_t i = t->nleaves; i < nl; i++)
			l[i] = NULL;
		t->leaves = l;
		t->nleaves = nl;
	}
	t->nblocks = nblocks;
	return 0;
}

/* True when the block is mapped. */
bool thin_is_mapped(const struct thin_map *t, uint64_t lba)
{
	const struct thin_leaf *l;

	if (lba >= t->nblocks)
		return false;
	l = t->leaves[lba >> THIN_LEAF_SHIFT];
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
		const struct thin_leaf *l = t->leaves[lba >> THIN_LEAF_SHIFT];
		uint64_t leaf_end = ((lba >> THIN_LEAF_SHIFT) + 1) << THIN_LEAF_SHIFT;
		uint64_t stop = leaf_end < end ? leaf_end : end;

		if (!l) {
			lba = stop;
			continue;
		}
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
		size_t li = (size_t)(lba >> THIN_LEAF_SHIFT);
		uint64_t leaf_end = ((uint64_t)li + 1) << THIN_LEAF_SHIFT;
		uint64_t stop = leaf_end < end ? leaf_end : end;
		struct thin_leaf *l = t->leaves[li];

		if (!l) {
			if (!map) {
				lba = stop;
				continue;
			}
			l = calloc(1, sizeof(*l));
			if (!l)
				return changed; /* accounting stays exact */
			t->leaves[li] = l;
		}
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
		if (l->count == 0) {
			free(l);
			t->leaves[li] = NULL;
		}
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
		const struct thin_leaf *l = t->leaves[cur >> THIN_LEAF_SHIFT];
		uint64_t leaf_end = ((cur >> THIN_LEAF_SHIFT) + 1) << THIN_LEAF_SHIFT;
		uint64_t stop = leaf_end < end ? leaf_end : end;

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
