/* SPDX-License-Identifier: MIT */
/*
 * ua.c - the action "ua": queue a unit attention with the given ASC/ASCQ for
 * every nexus of the LUN (SAM-5 r21 5.14, SPC-4 r37 6.1), then execute the
 * command (docs/faults/ua.md).
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param ua_params[] = {
    {"ua", FL_PARAM_ASCQ, NULL, 0, 255, NULL, NULL, "AA/QQ in hex, or an ASC/ASCQ name", 0},
};

/* The parameter of a ua action: the unit attention's ASC and ASCQ. */
struct ua_args {
	uint8_t asc, ascq;
};
FL_ACTION_ARGS(ua_args)

/* Parses "ua". */
static void ua_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512];
	json_t *e = json_object_get(v, "ua");
	struct ua_args u = {0};

	if (!e)
		return;
	pascq(c, SUBP(sub, path, "ua"), e, &u.asc, &u.ascq);
	ua_args_set(a, &u);
}

/* Queues the unit attention for every nexus. */
static void ua_effect(const struct fl_action_env *x)
{
	const struct ua_args u = ua_args_of(x->a);

	fl_lun_queue_ua(x->lun, FL_ALL_NEXUS, u.asc, u.ascq);
}

/* Trace: "ua": "AA/QQ". */
static void ua_trace(json_t *o, const struct sc_action *a, uint64_t info)
{
	(void)info;
	const struct ua_args u = ua_args_of(a);

	action_trace_ascq(o, "ua", u.asc, u.ascq);
}

const struct fl_action fl_action_ua = {
    .name = "ua",
    .verb = VERB_UA,
    .trace_action = "ua",
    .doc = "ua",
    .keys = no_keys,
    .params = ua_params,
    .nparams = sizeof(ua_params) / sizeof(ua_params[0]),
    .phase = FL_PHASE_EFFECT,
    .observed = FL_OBS_CHANGES_LUN,
    .observed_as = "a unit attention queued",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .parse = ua_parse,
    .effect = ua_effect,
    .trace = ua_trace,
};
