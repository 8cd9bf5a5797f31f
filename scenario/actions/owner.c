/* SPDX-License-Identifier: MIT */
/*
 * owner.c - the action "owner": a LUN with a vendor personality changes its
 * owning target port group, as an array controller failover does
 * (docs/faults/owner.md, docs/device-handlers/rdac.md).
 */
#include "../scenario_internal.h"
#include "fl_log.h"

#include <errno.h>
#include <string.h>

static const char *const no_keys[] = {NULL};

static const struct fl_action_param owner_params[] = {
    {"owner", FL_PARAM_GROUP, NULL, 1, 65535, NULL, NULL,
     "the target port group that becomes the LUN's owner", 0},
};

/* The parameter of an owner action: the target port group that becomes owner. */
struct owner_args {
	uint16_t group;
};
FL_ACTION_ARGS(owner_args)

/* Parses "owner": a target port group. */
static void owner_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512];
	json_t *e = json_object_get(v, "owner");
	struct owner_args o = {0};

	if (!e)
		return;
	parse_match_port(c, SUBP(sub, path, "owner"), e, true, &o.group);
	owner_args_set(a, &o);
}

/* The group that becomes owner. */
static uint16_t owner_group(const struct sc_action *a)
{
	return owner_args_of(a).group;
}

/* Moves the LUN to its new owner; a LUN without a personality logs why not. */
static void owner_effect(const struct fl_action_env *x)
{
	int r = fl_lun_set_owner(x->lun, owner_group(x->a));

	if (r)
		fl_log(FL_LOG_ERR, "%s: owner of LUN %u to port group %u: %s\n", x->why, x->lun_id,
		       owner_group(x->a),
		       r == -ENOTSUP ? "the LUN has no vendor personality" : strerror(-r));
}

/* Trace: "group": the new owner. */
static void owner_trace(json_t *o, const struct sc_action *a, uint64_t info)
{
	(void)info;
	json_object_set_new(o, "group", json_integer(owner_group(a)));
}

const struct fl_action fl_action_owner = {
    .name = "owner",
    .verb = VERB_OWNER,
    .trace_action = "owner",
    .doc = "owner",
    .keys = no_keys,
    .params = owner_params,
    .nparams = sizeof(owner_params) / sizeof(owner_params[0]),
    .phase = FL_PHASE_EFFECT,
    .observed = FL_OBS_CHANGES_LUN,
    .observed_as = "the LUN changed owner",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .parse = owner_parse,
    .effect = owner_effect,
    .trace = owner_trace,
    .group = owner_group,
};
