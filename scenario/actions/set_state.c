/* SPDX-License-Identifier: MIT */
/*
 * set_state.c - the action "set_state": the scenario moves to another state
 * when the rule fires (docs/faults/set_state.md). It joins any verb; alone,
 * the command executes normally. The engine changes the state (and traces
 * it) itself, since the state is the engine's.
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param set_state_params[] = {
    {"set_state", FL_PARAM_STATE, NULL, 0, 0, NULL, NULL, "a state the scenario declares", 0},
};

/* Parses "set_state". */
static void set_state_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512];
	json_t *e = json_object_get(v, "set_state");

	if (e)
		a->set_state = pstate(c, SUBP(sub, path, "set_state"), e);
}

const struct fl_action fl_action_set_state = {
    .name = "set_state",
    .verb = VERB_NONE,
    .trace_action = "set_state",
    .doc = "set_state",
    .keys = no_keys,
    .params = set_state_params,
    .nparams = sizeof(set_state_params) / sizeof(set_state_params[0]),
    .phase = FL_PHASE_NONE,
    .observed = FL_OBS_ANSWERS,
    .observed_as = "answered; the scenario changed state",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .joins = true,
    .parse = set_state_parse,
};
