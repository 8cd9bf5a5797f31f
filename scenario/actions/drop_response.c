/* SPDX-License-Identifier: MIT */
/*
 * drop_response.c - the action "drop_response": the command executes (a
 * write reaches the medium) but its answer is lost
 * (docs/faults/drop_response.md).
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param drop_response_params[] = {
    {"drop_response", FL_PARAM_TRUE, NULL, 1, 1, NULL, NULL,
     "true: execute the command, lose its answer", 0},
};

/* Parses "drop_response" (true only). */
static void drop_response_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	(void)a;
	action_flag(c, path, v, "drop_response");
}

/* Whatever the LUN answered is not sent. */
static void drop_response_after(const struct fl_action_env *x)
{
	x->cmd->no_response = true;
}

const struct fl_action fl_action_drop_response = {
    .name = "drop_response",
    .verb = VERB_DROP_RESPONSE,
    .trace_action = "drop_response",
    .doc = "drop_response",
    .keys = no_keys,
    .params = drop_response_params,
    .nparams = sizeof(drop_response_params) / sizeof(drop_response_params[0]),
    .phase = FL_PHASE_AFTER,
    .counter = FL_COUNT_DROPPED,
    .observed = FL_OBS_NEVER_ANSWERS,
    .observed_as = "executed, answer dropped",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .parse = drop_response_parse,
    .after = drop_response_after,
};
