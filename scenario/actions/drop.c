/* SPDX-License-Identifier: MIT */
/*
 * drop.c - the action "drop": the command is neither executed nor answered
 * (docs/faults/drop.md), as when the request is lost on its way.
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param drop_params[] = {
    {"drop", FL_PARAM_TRUE, NULL, 1, 1, NULL, NULL, "true: lose the command, unexecuted", 0},
};

/* Parses "drop" (true only). */
static void drop_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	(void)a;
	action_flag(c, path, v, "drop");
}

/* No answer at all: the initiator's command timer fires. */
static void drop_before(const struct fl_action_env *x)
{
	x->cmd->no_response = true;
}

const struct fl_action fl_action_drop = {
    .name = "drop",
    .verb = VERB_DROP,
    .trace_action = "drop",
    .doc = "drop",
    .keys = no_keys,
    .params = drop_params,
    .nparams = sizeof(drop_params) / sizeof(drop_params[0]),
    .phase = FL_PHASE_BEFORE,
    .counter = FL_COUNT_DROPPED,
    .observed = FL_OBS_NEVER_ANSWERS,
    .observed_as = "dropped, never answered",
    .frontends = FL_FE_ALL,
    .parse = drop_parse,
    .before = drop_before,
};
