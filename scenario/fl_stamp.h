/* SPDX-License-Identifier: MIT */
/*
 * fl_stamp.h - self-describing blocks for the integrity of a workload's
 * writes: a write step with "stamp" fills each block with a stamp (magic,
 * LUN, LBA, a generation unique to that write, a checksum of the block) and
 * the book records, per block, the last write the application saw succeed
 * and the last one it sent; a read step with "stamp" checks every block it
 * read against the book and names the first that is not what the last
 * acknowledged write left there: stale (an older write's), lost (no stamp),
 * torn (the checksum does not hold), misplaced (another block's). Both
 * runners use it (the VM lab's agent, the libiscsi runner), so a verdict on
 * data means the same in both.
 */
#ifndef FL_STAMP_H
#define FL_STAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Blocks the book tracks at most (at most 12 MiB of entries); later ones are not checked. */
#define FL_STAMP_MAX_BLOCKS (1u << 18)
/* The smallest block a stamp fits (header 32 bytes). */
#define FL_STAMP_MIN_BLOCK 64

struct fl_stamp_entry {
	uint64_t key;	/* lun << 48 | lba, + 1 (0: empty) */
	uint64_t acked; /* the last write the application saw succeed (0: none) */
	uint64_t last;	/* the last write sent (acknowledged or not) */
};

struct fl_stamp_book {
	struct fl_stamp_entry *v;
	size_t cap, n;
	uint64_t next_gen;  /* generations start at 1 */
	uint64_t untracked; /* blocks written past FL_STAMP_MAX_BLOCKS */
};

/*
 * Fills buf (blocks blocks of bs bytes, bs >= FL_STAMP_MIN_BLOCK) with stamps
 * of a new generation for LUN lun from LBA lba; returns the generation.
 */
uint64_t fl_stamp_fill(struct fl_stamp_book *b, void *buf, uint32_t bs, int lun, uint64_t lba,
		       uint64_t blocks);
/* Records that write gen of the range was sent and whether it succeeded. */
void fl_stamp_written(struct fl_stamp_book *b, int lun, uint64_t lba, uint64_t blocks, uint64_t gen,
		      bool acked);
/*
 * Checks blocks read back (buf as read) against the book: 0 when each block
 * the book knows is what the last acknowledged write (or a later one that
 * failed) put there, else the number of blocks that are not, with the first
 * described in why ("LBA 8: stale: ...").
 */
uint64_t fl_stamp_check(const struct fl_stamp_book *b, const void *buf, uint32_t bs, int lun,
			uint64_t lba, uint64_t blocks, char *why, size_t whylen);
void fl_stamp_book_free(struct fl_stamp_book *b);

#endif
