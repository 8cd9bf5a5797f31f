/* SPDX-License-Identifier: MIT */
/*
 * stamp.c - self-describing blocks and the book of what was written
 * (fl_stamp.h). A stamp: bytes 0-7 "FLSTAMP1", 8-15 the LBA, 16-23 the
 * generation, 24-27 the LUN (all little-endian), 28-31 an FNV-1a hash of the
 * rest of the block; bytes 32 on are a pattern of the LBA and generation, so
 * that a block made of two writes fails its hash.
 */
#include "fl_stamp.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char magic[8] = {'F', 'L', 'S', 'T', 'A', 'M', 'P', '1'};

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* FNV-1a over the block but its hash field. */
static uint32_t block_hash(const uint8_t *p, uint32_t bs)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < bs; i++)
		if (i < 28 || i >= 32)
			h = (h ^ p[i]) * 16777619u;
	return h;
}

static uint64_t key_of(int lun, uint64_t lba)
{
	return ((uint64_t)(uint16_t)lun << 48 | (lba & ((1ull << 48) - 1))) + 1;
}

/* The entry of key, or where it goes (NULL when the table is full or absent). */
static struct fl_stamp_entry *slot(const struct fl_stamp_book *b, uint64_t key)
{
	if (!b->cap)
		return NULL;
	for (size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull) & (b->cap - 1), n = 0; n < b->cap;
	     i = (i + 1) & (b->cap - 1), n++)
		if (b->v[i].key == key || !b->v[i].key)
			return &b->v[i];
	return NULL;
}

/* Room for one more entry (the table at most half full); false at the bound. */
static bool grow(struct fl_stamp_book *b)
{
	struct fl_stamp_book nb = *b;

	if (b->n + 1 <= b->cap / 2)
		return true;
	if (b->n >= FL_STAMP_MAX_BLOCKS)
		return false;
	nb.cap = b->cap ? b->cap * 2 : 1024;
	nb.v = calloc(nb.cap, sizeof(*nb.v));
	if (!nb.v)
		return false;
	for (size_t i = 0; i < b->cap; i++)
		if (b->v[i].key)
			*slot(&nb, b->v[i].key) = b->v[i];
	free(b->v);
	*b = nb;
	return true;
}

uint64_t fl_stamp_fill(struct fl_stamp_book *b, void *buf, uint32_t bs, int lun, uint64_t lba,
		       uint64_t blocks)
{
	uint64_t gen = ++b->next_gen;

	for (uint64_t k = 0; k < blocks; k++) {
		uint8_t *p = (uint8_t *)buf + k * bs;

		memcpy(p, magic, 8);
		put64(p + 8, lba + k);
		put64(p + 16, gen);
		p[24] = (uint8_t)lun;
		p[25] = (uint8_t)(lun >> 8);
		p[26] = p[27] = 0;
		for (uint32_t i = 32; i < bs; i++)
			p[i] = (uint8_t)((lba + k) * 131 + gen * 31 + i);
		uint32_t h = block_hash(p, bs);
		for (int i = 0; i < 4; i++)
			p[28 + i] = (uint8_t)(h >> (8 * i));
	}
	return gen;
}

void fl_stamp_written(struct fl_stamp_book *b, int lun, uint64_t lba, uint64_t blocks, uint64_t gen,
		      bool acked)
{
	for (uint64_t k = 0; k < blocks; k++) {
		uint64_t key = key_of(lun, lba + k);
		struct fl_stamp_entry *e = slot(b, key);

		if (!e || !e->key) {
			if (!grow(b)) {
				b->untracked++;
				continue;
			}
			e = slot(b, key);
			e->key = key;
			b->n++;
		}
		e->last = gen;
		if (acked)
			e->acked = gen;
	}
}

/* Describes what block p (read at lba) holds that e does not allow; false when it is allowed. */
static bool block_wrong(const struct fl_stamp_entry *e, const uint8_t *p, uint32_t bs, int lun,
			uint64_t lba, char *why, size_t whylen)
{
	uint64_t gen = get64(p + 16), at = get64(p + 8);
	int their_lun = p[24] | p[25] << 8;
	uint32_t h =
	    (uint32_t)p[28] | (uint32_t)p[29] << 8 | (uint32_t)p[30] << 16 | (uint32_t)p[31] << 24;

	if (memcmp(p, magic, 8)) {
		if (!e->acked)
			return false; /* only failed writes: what was there before may be */
		snprintf(why, whylen,
			 "LBA %" PRIu64 ": lost: no stamp, where write %" PRIu64
			 " was acknowledged",
			 lba, e->acked);
		return true;
	}
	if (h != block_hash(p, bs)) {
		snprintf(why, whylen, "LBA %" PRIu64 ": torn: the block's checksum does not hold",
			 lba);
		return true;
	}
	if (at != lba || their_lun != lun) {
		snprintf(why, whylen,
			 "LBA %" PRIu64 ": misplaced: it holds LUN %d LBA %" PRIu64
			 "'s data (write %" PRIu64 ")",
			 lba, their_lun, at, gen);
		return true;
	}
	if (gen == e->acked || (gen > e->acked && gen <= e->last))
		return false;
	if (gen < e->acked)
		snprintf(why, whylen,
			 "LBA %" PRIu64 ": stale: it holds write %" PRIu64
			 ", an older one than write %" PRIu64 ", acknowledged",
			 lba, gen, e->acked);
	else
		snprintf(why, whylen,
			 "LBA %" PRIu64 ": write %" PRIu64 " was never sent (the last was %" PRIu64
			 ")",
			 lba, gen, e->last);
	return true;
}

uint64_t fl_stamp_check(const struct fl_stamp_book *b, const void *buf, uint32_t bs, int lun,
			uint64_t lba, uint64_t blocks, char *why, size_t whylen)
{
	uint64_t bad = 0;
	char first[192];

	if (whylen)
		why[0] = 0;
	for (uint64_t k = 0; k < blocks; k++) {
		const struct fl_stamp_entry *e = slot(b, key_of(lun, lba + k));

		if (!e || !e->key)
			continue; /* never written with a stamp */
		if (block_wrong(e, (const uint8_t *)buf + k * bs, bs, lun, lba + k, first,
				sizeof(first)) &&
		    !bad++ && whylen)
			snprintf(why, whylen, "%s", first);
	}
	if (bad > 1 && whylen)
		snprintf(why + strlen(why), whylen - strlen(why), " (%" PRIu64 " blocks wrong)",
			 bad);
	return bad;
}

void fl_stamp_book_free(struct fl_stamp_book *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}
