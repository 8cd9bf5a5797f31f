/* SPDX-License-Identifier: MIT */
/*
 * dirty.c - the write cache's volatile contents, and power loss.
 *
 * With WCE=1 (SBC-3 r36 6.5.? caching mode page) a write is acknowledged
 * before it is durable. The core keeps, per LUN, the previous contents of
 * every block changed since it was last made durable (SYNCHRONIZE CACHE,
 * FUA, a write with WCE=0). fl_lun_power_loss puts those contents back,
 * reports the lost LBAs in order and raises UA 29/01 POWER ON OCCURRED.
 *
 * A hash table maps LBA -> previous block (NULL when it was all zeroes). Like
 * a real cache, the record is bounded: past DIRTY_MAX_BYTES of saved data or
 * DIRTY_MAX_BLOCKS blocks the cache "destages" (the record is emptied, the
 * data counts as durable).
 */
#include "target_internal.h"
#include "fl_rand.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DIRTY_MAX_BYTES (256u << 20)
#define DIRTY_MAX_BLOCKS (1u << 20)

struct dirty_entry {
	uint64_t lba;
	uint8_t *old; /* previous contents, NULL = zeroes */
	bool used, was_mapped;
};

struct dirty_set {
	struct dirty_entry *v;
	size_t cap, count;
	uint64_t bytes;
};

/* Hash of an LBA (splitmix64 finaliser). */
static size_t slot_of(uint64_t lba, size_t cap)
{
	return (size_t)(fl_mix64(lba) & (cap - 1));
}

/* Finds the entry of lba, or the empty slot where it would go. */
static struct dirty_entry *find(struct dirty_set *d, uint64_t lba)
{
	size_t i = slot_of(lba, d->cap);

	while (d->v[i].used && d->v[i].lba != lba)
		i = (i + 1) & (d->cap - 1);
	return &d->v[i];
}

/* Doubles the table. */
static int grow(struct dirty_set *d)
{
	size_t ncap = d->cap ? d->cap * 2 : 1024;
	struct dirty_entry *old = d->v, *nv = calloc(ncap, sizeof(*nv));
	size_t ocap = d->cap;

	if (!nv)
		return -ENOMEM;
	d->v = nv;
	d->cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			*find(d, old[i].lba) = old[i];
	free(old);
	return 0;
}

/* Number of blocks currently recorded. */
uint64_t dirty_count(const struct fl_lun *lun)
{
	return lun->dirty ? lun->dirty->count : 0;
}

/* Removes entry at index i, re-placing the cluster after it (linear probing). */
static void remove_at(struct dirty_set *d, size_t i)
{
	size_t j = i;

	free(d->v[i].old);
	d->v[i].old = NULL;
	d->v[i].used = false;
	d->count--;
	for (;;) {
		struct dirty_entry e;

		j = (j + 1) & (d->cap - 1);
		if (!d->v[j].used)
			return;
		e = d->v[j];
		d->v[j].used = false;
		d->v[j].old = NULL; /* ownership moves with the entry */
		*find(d, e.lba) = e;
	}
}

/* Forgets a range (now durable). */
void dirty_clear(struct fl_lun *lun, uint64_t lba, uint64_t n)
{
	struct dirty_set *d = lun->dirty;

	if (!d || d->count == 0)
		return;
	if (n == UINT64_MAX && lba == 0) {
		for (size_t i = 0; i < d->cap; i++) {
			if (d->v[i].used)
				free(d->v[i].old);
			d->v[i].old = NULL;
			d->v[i].used = false;
		}
		d->count = 0;
		d->bytes = 0;
		return;
	}
	if (n > UINT64_MAX - lba)
		n = UINT64_MAX - lba;
	if (n < d->count) {
		for (uint64_t b = lba; b < lba + n; b++) {
			struct dirty_entry *e = find(d, b);

			if (e->used) {
				if (e->old)
					d->bytes -= lun->block_size;
				remove_at(d, (size_t)(e - d->v));
			}
		}
		return;
	}
	for (size_t i = 0; i < d->cap;) {
		struct dirty_entry *e = &d->v[i];

		if (e->used && e->lba >= lba && e->lba - lba < n) {
			if (e->old)
				d->bytes -= lun->block_size;
			remove_at(d, i); /* a moved entry may land at i: look again */
			continue;
		}
		i++;
	}
}

/* Frees the record. */
void dirty_free(struct fl_lun *lun)
{
	if (!lun->dirty)
		return;
	dirty_clear(lun, 0, UINT64_MAX);
	free(lun->dirty->v);
	free(lun->dirty);
	lun->dirty = NULL;
}

/* True when len bytes are zero. */
static bool zeroes(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Records block b (contents at blk) unless already recorded. */
static int note_one(struct fl_lun *lun, struct dirty_set *d, uint64_t b, const uint8_t *blk)
{
	struct dirty_entry *e;
	bool mapped = lun->thin ? thin_is_mapped(lun->thin, b) : true;

	if ((d->count + 1) * 2 > d->cap && grow(d))
		return -ENOMEM;
	e = find(d, b);
	if (e->used)
		return 0;
	e->used = true;
	e->lba = b;
	e->was_mapped = mapped;
	e->old = NULL;
	d->count++;
	if (mapped && !zeroes(blk, lun->block_size)) {
		e->old = malloc(lun->block_size);
		if (!e->old) {
			remove_at(d, (size_t)(e - d->v));
			return -ENOMEM;
		}
		memcpy(e->old, blk, lun->block_size);
		d->bytes += lun->block_size;
	}
	return 0;
}

/* True when every block of [lba, lba+n) is already recorded. */
static bool all_recorded(struct dirty_set *d, uint64_t lba, uint64_t n)
{
	if (d->cap == 0)
		return false;
	for (uint64_t b = lba; b < lba + n; b++)
		if (!find(d, b)->used)
			return false;
	return true;
}

/* Saves the current contents of the not-yet-recorded blocks of a range. */
int dirty_note(struct fl_lun *lun, uint64_t lba, uint64_t n)
{
	/* previous contents are read in batches of up to 1 MiB, one store call each */
	uint64_t batch = (1u << 20) >> lun->block_shift;
	struct dirty_set *d = lun->dirty;
	uint8_t *buf;
	int rc = 0;

	if (!d) {
		d = lun->dirty = calloc(1, sizeof(*d));
		if (!d)
			return -ENOMEM;
	}
	if (d->count + n > DIRTY_MAX_BLOCKS ||
	    d->bytes + (n << lun->block_shift) > DIRTY_MAX_BYTES) {
		/* the cache destages: what it held is now on the medium */
		lun->store->ops->sync(lun->store);
		dirty_clear(lun, 0, UINT64_MAX);
		if (n > DIRTY_MAX_BLOCKS || (n << lun->block_shift) > DIRTY_MAX_BYTES)
			return 1; /* larger than the whole cache: written through */
	}
	if (batch > n)
		batch = n;
	buf = malloc((size_t)batch << lun->block_shift);
	if (!buf)
		return -ENOMEM;
	for (uint64_t at = lba; at < lba + n && rc == 0; at += batch) {
		uint64_t cnt = lba + n - at < batch ? lba + n - at : batch;

		if (all_recorded(d, at, cnt))
			continue;
		rc = lun->store->ops->read(lun->store, buf, at << lun->block_shift,
					   cnt << lun->block_shift);
		for (uint64_t i = 0; i < cnt && rc == 0; i++)
			rc = note_one(lun, d, at + i, buf + (i << lun->block_shift));
	}
	free(buf);
	return rc;
}

/* Orders entries by LBA. */
static int cmp_lba(const void *a, const void *b)
{
	const struct dirty_entry *x = a, *y = b;

	return x->lba < y->lba ? -1 : x->lba > y->lba;
}

/* Power loss: discards the volatile cache, then UA 29/01 for every nexus. */
uint64_t fl_lun_power_loss(struct fl_lun *lun, void (*lost)(uint64_t lba, void *ctx), void *ctx)
{
	struct dirty_set *d;
	struct dirty_entry *list = NULL;
	uint64_t nlost = 0;
	size_t k = 0;
	uint8_t *zero;

	pthread_mutex_lock(&lun->lock);
	d = lun->dirty;
	zero = calloc(1, lun->block_size);
	if (d && d->count && zero) {
		list = malloc(d->count * sizeof(*list));
		if (list) {
			for (size_t i = 0; i < d->cap; i++)
				if (d->v[i].used)
					list[k++] = d->v[i];
			qsort(list, k, sizeof(*list), cmp_lba);
		}
	}
	for (size_t i = 0; i < k; i++) {
		struct dirty_entry *e = &list[i];
		uint64_t off = e->lba << lun->block_shift;

		if (e->lba >= lun->num_blocks)
			continue;
		if (e->was_mapped) {
			lun->store->ops->write(lun->store, e->old ? e->old : zero, off,
					       lun->block_size);
			if (lun->thin)
				thin_map_range(lun->thin, e->lba, 1);
		} else {
			lun->store->ops->discard(lun->store, off, lun->block_size);
			if (lun->thin)
				thin_unmap_range(lun->thin, e->lba, 1);
		}
		list[nlost++].lba = e->lba;
	}
	if (k)
		lun->store->ops->sync(lun->store);
	free(zero);
	dirty_clear(lun, 0, UINT64_MAX);
	/* power on: volatile state is gone (no APTPL: PR state too, SPC-4 r37 5.12.4) */
	lun->mode = lun->mode_saved;
	lun->stopped = false;
	lun->removal_prevented = false;
	for (struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
		ns->prevent_removal = false;
	lun->pr.legacy_reserved = false;
	for (unsigned i = 0; i < lun->pr.nreg; i++)
		free(lun->pr.reg[i].initiator);
	lun->pr.nreg = 0;
	lun->pr.reserved = false;
	if (lun->thin && lun->cfg.soft_threshold &&
	    thin_mapped_count(lun->thin) < lun->cfg.soft_threshold)
		lun->soft_threshold_reported = false;
	lun_ua_all(lun, FL_ALL_NEXUS, ASC_POWER_ON_RESET, ASCQ_POWER_ON_OCCURRED);
	pthread_mutex_unlock(&lun->lock);
	/* the callback runs unlocked: it may call back into the LUN */
	for (uint64_t i = 0; i < nlost && lost; i++)
		lost(list[i].lba, ctx);
	free(list);
	return nlost;
}
