/* SPDX-License-Identifier: MIT */
/*
 * alua.c - the action "alua": a target port group's asymmetric access state
 * changes (SPC-4 r37 5.15.2), the LUN's default group or a named one
 * (docs/faults/alua.md).
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};
static const char *const alua_states[] = {
    "active_optimized", "active_non_optimized", "standby", "unavailable", "lba_dependent",
    "offline",		"transitioning",	NULL};

static const struct fl_action_param alua_params[] = {
    {"alua", FL_PARAM_CHOICE, NULL, 0, 0, alua_states, NULL,
     "the new state of the LUN's default group", 1},
    {"alua/state", FL_PARAM_CHOICE, NULL, 0, 0, alua_states, NULL,
     "the new state of group \"group\"", 1},
    {"alua/group", FL_PARAM_GROUP, NULL, 1, 65535, NULL, "the LUN's default group",
     "the target port group whose state changes", 0},
};

/* The parameters of an alua action. */
struct alua_args {
	enum fl_alua_state state;
	uint16_t group; /* 0: the LUN's default group */
};
FL_ACTION_ARGS(alua_args)

/* Parses "alua": STATE (the LUN's default group) or {"group": N, "state": STATE}. */
static void alua_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	static const char *const keys[] = {"group", "state", NULL};
	char sub[512], s2[600];
	json_t *e = json_object_get(v, "alua"), *f;
	struct alua_args l = {0};

	if (!e)
		return;
	SUBP(sub, path, "alua");
	if (!json_is_object(e)) {
		palua(c, sub, e, &l.state);
	} else {
		pkeys(c, sub, e, "alua", keys);
		if (!(f = json_object_get(e, "state")))
			perr(c, sub, false,
			     "\"alua\": {\"group\": N, \"state\": STATE} needs \"state\"");
		else
			palua(c, SUBP(s2, sub, "state"), f, &l.state);
		if ((f = json_object_get(e, "group")))
			parse_match_port(c, SUBP(s2, sub, "group"), f, true, &l.group);
	}
	alua_args_set(a, &l);
}

/* Sets the group's state. */
static void alua_effect(const struct fl_action_env *x)
{
	const struct alua_args l = alua_args_of(x->a);

	if (l.group)
		fl_lun_set_tpg_state(x->lun, l.group, l.state);
	else
		fl_lun_set_alua_state(x->lun, l.state);
}

/* The group the action names (0: the LUN's default). */
static uint16_t alua_group(const struct sc_action *a)
{
	return alua_args_of(a).group;
}

/* Trace: "group" when the action names one. */
static void alua_trace(json_t *o, const struct sc_action *a, uint64_t info)
{
	(void)info;
	if (alua_group(a))
		json_object_set_new(o, "group", json_integer(alua_group(a)));
}

const struct fl_action fl_action_alua = {
    .name = "alua",
    .verb = VERB_ALUA,
    .trace_action = "alua",
    .doc = "alua",
    .keys = no_keys,
    .params = alua_params,
    .nparams = sizeof(alua_params) / sizeof(alua_params[0]),
    .phase = FL_PHASE_EFFECT,
    .observed = FL_OBS_CHANGES_LUN,
    .observed_as = "a port group changed state",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .parse = alua_parse,
    .effect = alua_effect,
    .trace = alua_trace,
    .group = alua_group,
};
