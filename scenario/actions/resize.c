/* SPDX-License-Identifier: MIT */
/*
 * resize.c - the action "resize": the LUN's capacity changes and a CAPACITY
 * DATA HAS CHANGED unit attention follows (SBC-3 r36 4.11, SPC-4 r37 6.1;
 * docs/faults/resize.md). The engine does the resize (the core and its own
 * LBA bookkeeping under one lock), so the hook asks it.
 */
#include "../scenario_internal.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const no_keys[] = {NULL};

static const struct fl_action_param resize_params[] = {
    {"resize", FL_PARAM_SIZE, "blocks", 1, 1u << 20, NULL, NULL,
     "the new capacity: bytes, a unit string (\"2GiB\") or \"Nblocks\"", 0},
};

/* The parameter of a resize action: the new size, in blocks or in bytes. */
struct resize_args {
	uint64_t size;
	bool in_blocks;
};
FL_ACTION_ARGS(resize_args)

/* Parses "resize". */
static void resize_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512];
	json_t *e = json_object_get(v, "resize");
	struct resize_args r = {0};
	const char *unit;

	if (!e || !psize(c, SUBP(sub, path, "resize"), e, &r.size, &r.in_blocks))
		return;
	resize_args_set(a, &r);
	unit = r.in_blocks ? "blocks" : "bytes";
	/* what every LUN refuses (fl_lun_resize): no block, or past the largest LUN */
	if (r.in_blocks ? r.size == 0 : r.size < 512)
		perr(c, sub, false, "\"resize\": %llu %s: a LUN has at least one block",
		     (unsigned long long)r.size, unit);
	else if (r.in_blocks ? r.size > FL_LUN_MAX_BLOCKS : r.size / 65536 > FL_LUN_MAX_BLOCKS)
		perr(c, sub, false, "\"resize\": %llu %s: more than the largest LUN, %llu blocks",
		     (unsigned long long)r.size, unit, (unsigned long long)FL_LUN_MAX_BLOCKS);
}

/*
 * The capacity in blocks the resize gives LUN lun of block_size, or 0 with
 * the reason in msg: a size of 0, a byte size not a multiple of the block
 * size, or more than FL_LUN_MAX_BLOCKS blocks.
 */
static uint64_t resize_capacity(const struct sc_action *a, uint32_t block_size, unsigned lun,
				char *msg, size_t len)
{
	const struct resize_args r = resize_args_of(a);
	const char *unit = r.in_blocks ? "blocks" : "bytes";
	uint64_t blocks = r.in_blocks ? r.size : r.size / block_size;

	if (r.size == 0) {
		snprintf(msg, len, "resize to 0 %s: a LUN needs at least one block", unit);
		return 0;
	}
	if (blocks > FL_LUN_MAX_BLOCKS) {
		snprintf(msg, len,
			 "resize to %" PRIu64 " %s: more than the largest LUN, %" PRIu64
			 " blocks (%" PRIu64 " bytes at LUN %u's block size of %u)",
			 r.size, unit, (uint64_t)FL_LUN_MAX_BLOCKS,
			 (uint64_t)FL_LUN_MAX_BLOCKS * block_size, lun, block_size);
		return 0;
	}
	if (!r.in_blocks && r.size % block_size) {
		snprintf(msg, len,
			 "resize to %" PRIu64 " bytes: not a multiple of LUN %u's block size (%u "
			 "bytes)",
			 r.size, lun, block_size);
		return 0;
	}
	return blocks;
}

/* Resizes the LUN through the engine (which logs a size it cannot take). */
static void resize_effect(const struct fl_action_env *x)
{
	x->resize(x->engine, x);
}

/* The capacity the resize gives a LUN of block_size, if larger than *blocks. */
static void resize_reach(const struct sc_action *a, uint32_t block_size, uint64_t *blocks)
{
	const struct resize_args r = resize_args_of(a);
	uint64_t n = r.in_blocks ? r.size : r.size / block_size;

	if (n > *blocks)
		*blocks = n;
}

const struct fl_action fl_action_resize = {
    .name = "resize",
    .verb = VERB_RESIZE,
    .trace_action = "resize",
    .doc = "resize",
    .keys = no_keys,
    .params = resize_params,
    .nparams = sizeof(resize_params) / sizeof(resize_params[0]),
    .phase = FL_PHASE_EFFECT,
    .observed = FL_OBS_CHANGES_LUN,
    .observed_as = "the LUN changed size",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .parse = resize_parse,
    .effect = resize_effect,
    .reach = resize_reach,
    .capacity = resize_capacity,
};
