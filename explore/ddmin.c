/* SPDX-License-Identifier: MIT */
/*
 * ddmin.c - delta debugging (Zeller and Hildebrandt's ddmin) over at most 32
 * items held as a bit mask: split the failing set into n parts, try every
 * part and every complement, keep the first that still fails, refine the
 * split when none does. Each round's candidates go to the caller in one call,
 * so `faultlun explore` runs them as one batch in one boot.
 */
#include "fl_explore.h"

/* The number of bits set in m. */
static unsigned popcount(uint32_t m)
{
	unsigned n = 0;

	for (; m; m &= m - 1)
		n++;
	return n;
}

/* The k-th of n parts of set (its bits in order, split as evenly as may be). */
static uint32_t part(uint32_t set, unsigned n, unsigned k)
{
	unsigned size = popcount(set), from = k * size / n, to = (k + 1) * size / n, i = 0;
	uint32_t out = 0;

	for (unsigned b = 0; b < 32; b++)
		if (set >> b & 1) {
			if (i >= from && i < to)
				out |= UINT32_C(1) << b;
			i++;
		}
	return out;
}

uint32_t fl_ddmin(uint32_t all, fl_ddmin_test test, void *ctx, unsigned max_rounds)
{
	uint32_t cur = all, cands[64];
	bool fails[64];
	unsigned n = 2;

	for (unsigned round = 0; round < max_rounds && popcount(cur) > 1; round++) {
		size_t nc = 0;
		bool moved = false;

		if (n > popcount(cur))
			n = popcount(cur);
		for (unsigned k = 0; k < n; k++)
			cands[nc++] = part(cur, n, k);
		if (n > 2)
			for (unsigned k = 0; k < n; k++)
				cands[nc++] = cur & ~part(cur, n, k);
		for (size_t i = 0; i < nc; i++)
			fails[i] = false;
		if (test(ctx, cands, nc, fails) < 0)
			break;
		for (size_t i = 0; i < nc && !moved; i++)
			if (fails[i] && cands[i]) {
				cur = cands[i];
				/* a part: split it in two again; a complement: one part fewer */
				n = i < n ? 2 : (n - 1 > 2 ? n - 1 : 2);
				moved = true;
			}
		if (moved)
			continue;
		if (n >= popcount(cur))
			break;
		n = 2 * n < popcount(cur) ? 2 * n : popcount(cur);
	}
	return cur;
}
