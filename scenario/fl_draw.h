/* SPDX-License-Identifier: MIT */
/*
 * fl_draw.h - random fault actions drawn from the registry's parameter
 * descriptors (fl_action.h): every value inside the descriptor's range, one
 * member of each `oneof` group, required parameters always, optional ones
 * half of the time. The draws are deterministic: the caller lends the random
 * stream (struct fl_draw_rng), so the same stream draws the same actions.
 * The unit tests of the registry and `faultlun explore` draw through here.
 */
#ifndef FL_DRAW_H
#define FL_DRAW_H

#include "fl_action.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A caller's deterministic random stream: next(state) gives 64 random bits. */
struct fl_draw_rng {
	uint64_t (*next)(void *state);
	void *state;
};

/*
 * What a drawn value may name in the scenario it goes into: states for
 * FL_PARAM_STATE (nstates >= 1), groups 1..ngroups for FL_PARAM_GROUP.
 */
struct fl_draw_ctx {
	struct fl_draw_rng rng;
	const char *const *states;
	size_t nstates;
	unsigned ngroups;
};

/* A uniform draw in [lo, hi] (lo when hi <= lo). */
uint64_t fl_draw_uint(const struct fl_draw_rng *g, uint64_t lo, uint64_t hi);
/* A uniform draw in [0, 1). */
double fl_draw_unit(const struct fl_draw_rng *g);
/* A random value of parameter p, drawn from its descriptor (a new reference). */
struct json_t *fl_draw_value(const struct fl_draw_ctx *c, const struct fl_action_param *p);
/* Sets p's value at its key ("a" or "a/b") in obj (steals val). */
void fl_draw_put(struct json_t *obj, const struct fl_action_param *p, struct json_t *val);
/* Whether p is required: under the action's own name, with no default. */
bool fl_draw_required(const struct fl_action *d, const struct fl_action_param *p);
/* Adds a random instance of action d's parameters to the action object obj. */
void fl_draw_action(const struct fl_draw_ctx *c, const struct fl_action *d, struct json_t *obj);

#ifdef __cplusplus
}
#endif
#endif
