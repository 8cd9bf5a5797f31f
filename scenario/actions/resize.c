/* SPDX-License-Identifier: MIT */
/*
 * resize.c - the action "resize": the LUN's capacity changes and a CAPACITY
 * DATA HAS CHANGED unit attention follows (SBC-3 r36 4.11, SPC-4 r37 6.1;
 * docs/faults/resize.md). The engine does the resize (the core and its own
 * LBA bookkeeping under one lock), so the hook asks it.
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param resize_params[] = {
    {"resize", FL_PARAM_SIZE, "blocks", 1, 1u << 20, NULL, NULL,
     "the new capacity: bytes, a unit string (\"2GiB\") or \"Nblocks\"", 0},
};

/* Parses "resize". */
static void resize_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512];
	json_t *e = json_object_get(v, "resize");

	if (!e || !psize(c, SUBP(sub, path, "resize"), e, &a->resize, &a->resize_in_blocks))
		return;
	/* what every LUN refuses (fl_lun_resize): no block, or past the largest LUN */
	if (a->resize_in_blocks ? a->resize == 0 : a->resize < 512)
		perr(c, sub, false, "\"resize\": %llu %s: a LUN has at least one block",
		     (unsigned long long)a->resize, a->resize_in_blocks ? "blocks" : "bytes");
	else if (a->resize_in_blocks ? a->resize > FL_LUN_MAX_BLOCKS
				     : a->resize / 65536 > FL_LUN_MAX_BLOCKS)
		perr(c, sub, false, "\"resize\": %llu %s: more than the largest LUN, %llu blocks",
		     (unsigned long long)a->resize, a->resize_in_blocks ? "blocks" : "bytes",
		     (unsigned long long)FL_LUN_MAX_BLOCKS);
}

/* Resizes the LUN through the engine (which logs a size it cannot take). */
static void resize_effect(const struct fl_action_env *x)
{
	x->resize(x->engine, x);
}

/* The capacity the resize gives a LUN of block_size, if larger than *blocks. */
static void resize_reach(const struct sc_action *a, uint32_t block_size, uint64_t *blocks)
{
	uint64_t n = a->resize_in_blocks ? a->resize : a->resize / block_size;

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
};
