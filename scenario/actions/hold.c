/* SPDX-License-Identifier: MIT */
/*
 * hold.c - the action "hold": keep a command from the LUN, unanswered, until
 * a TMF, a release through the control socket, or never
 * (docs/faults/hold.md). This is how a hung array looks to an initiator.
 */
#include "../scenario_internal.h"

#include <string.h>

static const char *const no_keys[] = {NULL};
/* indexed by enum sc_hold_kind */
static const char *const holds[] = {"",	 "forever", "until_abort", "until_reset", "until_release",
				    NULL};

static const struct fl_action_param hold_params[] = {
    {"hold", FL_PARAM_CHOICE, NULL, 0, 0, holds + 1, NULL,
     "what ends the hold: nothing, an abort or reset, a reset, a release", 0},
};

/* The parameter of a hold action. */
struct hold_args {
	enum sc_hold_kind hold;
};
FL_ACTION_ARGS(hold_args)

/* Parses "hold". */
static void hold_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512], q[80];
	json_t *e = json_object_get(v, "hold");
	struct hold_args h = {0};
	const char *s;

	if (!e)
		return;
	s = json_is_string(e) ? json_string_value(e) : "";
	for (int k = 1; k < 5; k++)
		if (!strcmp(s, holds[k]))
			h.hold = (enum sc_hold_kind)k;
	hold_args_set(a, &h);
	if (!h.hold)
		perr(c, SUBP(sub, path, "hold"), false,
		     "unknown hold %s (expected \"forever\", \"until_abort\", "
		     "\"until_reset\" or \"until_release\")",
		     pquote(e, q, sizeof(q)));
}

/* until_abort: any TMF covering it; until_reset: only a reset; the others: none. */
static void hold_ends_on(const struct sc_action *a, bool *abort, bool *reset)
{
	enum sc_hold_kind h = hold_args_of(a).hold;

	*abort = h == HOLD_UNTIL_ABORT;
	*reset = *abort || h == HOLD_UNTIL_RESET;
}

/* Trace: "hold": what ends it. */
static void hold_trace(json_t *o, const struct sc_action *a, uint64_t info)
{
	enum sc_hold_kind h = hold_args_of(a).hold;

	(void)info;
	json_object_set_new(o, "hold", json_string(holds[h <= HOLD_UNTIL_RELEASE ? h : 0]));
}

const struct fl_action fl_action_hold = {
    .name = "hold",
    .verb = VERB_HOLD,
    .trace_action = "hold",
    .doc = "hold",
    .keys = no_keys,
    .params = hold_params,
    .nparams = sizeof(hold_params) / sizeof(hold_params[0]),
    .phase = FL_PHASE_HOLD,
    .counter = FL_COUNT_HELD,
    .observed = FL_OBS_NEVER_ANSWERS,
    .observed_as = "held, never answered",
    .frontends = FL_FE_ALL,
    .parse = hold_parse,
    .ends_on = hold_ends_on,
    .trace = hold_trace,
};
