/* SPDX-License-Identifier: MIT */
/*
 * fl_size.h - the one reader of sizes written by people: scenario files
 * ("size", "pool", "resize"), `faultlun serve --size`, the tcmu cfgstring's
 * store=memory:SIZE and the VM lab's LUN list all take the same spelling.
 *
 *   SIZE  = DIGITS " "* UNIT
 *   DIGITS: decimal, leading zeros allowed ("010MiB" is 10 MiB, never octal)
 *   UNIT:  "" or B (bytes), KiB MiB GiB TiB (powers of 1024),
 *          KB MB GB TB (powers of 1000), blocks (times the block size)
 *
 * Units are case-sensitive; no sign, no fraction, no hexadecimal. The same
 * grammar is the JSON Schema's size pattern (scenarios/faultlun-scenario.schema.json).
 */
#ifndef FL_SIZE_H
#define FL_SIZE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * Parses a size into *out (bytes). "blocks" multiplies by block_size; with
 * block_size 0 it is refused, unless in_blocks is given: then *out is the
 * block count, for a caller that learns the block size later. *in_blocks,
 * when given, says whether the unit was "blocks". Returns 0, -EINVAL
 * (not a size, or an unknown unit) or -ERANGE (more than 2^64 - 1 bytes).
 * *out is left alone on error.
 */
static inline int fl_parse_size(const char *s, uint32_t block_size, uint64_t *out, bool *in_blocks)
{
	static const struct {
		const char *unit;
		uint64_t mul; /* 0: blocks */
	} units[] = {
	    {"", 1},
	    {"B", 1},
	    {"KiB", 1ull << 10},
	    {"MiB", 1ull << 20},
	    {"GiB", 1ull << 30},
	    {"TiB", 1ull << 40},
	    {"KB", 1000ull},
	    {"MB", 1000000ull},
	    {"GB", 1000000000ull},
	    {"TB", 1000000000000ull},
	    {"blocks", 0},
	};
	const char *p = s;
	uint64_t n = 0;
	bool overflow = false;

	if (!s || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			n = n * 10 + d;
	}
	while (*p == ' ')
		p++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t mul = units[i].mul;
		bool blocks = mul == 0;

		if (strcmp(p, units[i].unit))
			continue;
		if (blocks && !block_size && !in_blocks)
			return -EINVAL;
		if (overflow)
			return -ERANGE;
		if (blocks && !block_size) {
			*in_blocks = true;
			*out = n;
			return 0;
		}
		if (blocks)
			mul = block_size;
		if (n > UINT64_MAX / mul)
			return -ERANGE;
		if (in_blocks)
			*in_blocks = blocks;
		*out = n * mul;
		return 0;
	}
	return -EINVAL;
}

#endif
