/* SPDX-License-Identifier: MIT */
/*
 * actions.c - THE table of fault actions (docs/scenario-format.md "rules",
 * docs/faults/NAME.md): one row per action says its scenario key, its verb,
 * the modifiers that go with it, when the engine carries it out, what the
 * trace and the counters call it and which front ends can carry it out.
 *
 * The loader takes its key checks and "did you mean" from here, lint its
 * front-end checks, the engine its dispatch (phase, counters, trace name);
 * tests/unit/faults/check_actions.py holds the JSON Schema and docs/faults/
 * to it. A new action is a new row (and its value parser in scenario_rules.c,
 * its doing in faults/engine.c).
 */
#include "fl_scenario.h"

#include <string.h>

static const char *const sense_keys[] = {"info", "format", "overtake_ua", NULL};
static const char *const status_keys[] = {"overtake_ua", NULL};
static const char *const no_keys[] = {NULL};

#define FE_ALL (FL_FE_ISCSI | FL_FE_TCMU | FL_FE_VM)

/*
 * Every front end carries every action out today: under TCMU a command the
 * engine never answers (hold, drop, drop_response) stays with the handler
 * until LIO's cmd_time_out, which is what those actions mean there.
 */
const struct fl_action_desc fl_action_descs[] = {
    {.name = "sense",
     .verb = VERB_SENSE,
     .keys = sense_keys,
     .phase = FL_PHASE_BEFORE,
     .trace_action = "sense",
     .frontends = FE_ALL,
     .answers = true,
     .with_delay = true,
     .doc = "sense"},
    {.name = "status",
     .verb = VERB_STATUS,
     .keys = status_keys,
     .phase = FL_PHASE_BEFORE,
     .trace_action = "status",
     .frontends = FE_ALL,
     .answers = true,
     .with_delay = true,
     .doc = "status"},
    {.name = "delay_ms",
     .verb = VERB_DELAY,
     .keys = no_keys,
     .phase = FL_PHASE_NONE,
     .trace_action = "delay",
     .frontends = FE_ALL,
     .joins = true,
     .doc = "delay"},
    {.name = "hold",
     .verb = VERB_HOLD,
     .keys = no_keys,
     .phase = FL_PHASE_HOLD,
     .trace_action = "hold",
     .counter = FL_COUNT_HELD,
     .frontends = FE_ALL,
     .doc = "hold"},
    {.name = "drop",
     .verb = VERB_DROP,
     .keys = no_keys,
     .phase = FL_PHASE_BEFORE,
     .trace_action = "drop",
     .counter = FL_COUNT_DROPPED,
     .frontends = FE_ALL,
     .doc = "drop"},
    {.name = "drop_response",
     .verb = VERB_DROP_RESPONSE,
     .keys = no_keys,
     .phase = FL_PHASE_AFTER,
     .trace_action = "drop_response",
     .counter = FL_COUNT_DROPPED,
     .frontends = FE_ALL,
     .with_delay = true,
     .doc = "drop_response"},
    {.name = "short",
     .verb = VERB_SHORT,
     .keys = no_keys,
     .phase = FL_PHASE_AFTER,
     .trace_action = "short",
     .frontends = FE_ALL,
     .with_delay = true,
     .doc = "short"},
    {.name = "corrupt",
     .verb = VERB_CORRUPT,
     .keys = no_keys,
     .phase = FL_PHASE_AFTER,
     .trace_action = "corrupt",
     .frontends = FE_ALL,
     .with_delay = true,
     .doc = "corrupt"},
    {.name = "ua",
     .verb = VERB_UA,
     .keys = no_keys,
     .phase = FL_PHASE_EFFECT,
     .trace_action = "ua",
     .frontends = FE_ALL,
     .with_delay = true,
     .doc = "ua"},
    {.name = "power_loss",
     .verb = VERB_POWER_LOSS,
     .keys = no_keys,
     .phase = FL_PHASE_EFFECT,
     .trace_action = "power_loss",
     .frontends = FE_ALL,
     .with_delay = true,
     .doc = "power_loss"},
    {.name = "resize",
     .verb = VERB_RESIZE,
     .keys = no_keys,
     .phase = FL_PHASE_EFFECT,
     .trace_action = "resize",
     .frontends = FE_ALL,
     .with_delay = true,
     .doc = "resize"},
    {.name = "alua",
     .verb = VERB_ALUA,
     .keys = no_keys,
     .phase = FL_PHASE_EFFECT,
     .trace_action = "alua",
     .frontends = FE_ALL,
     .with_delay = true,
     .doc = "alua"},
    {.name = "owner",
     .verb = VERB_OWNER,
     .keys = no_keys,
     .phase = FL_PHASE_EFFECT,
     .trace_action = "owner",
     .frontends = FE_ALL,
     .with_delay = true,
     .doc = "owner"},
    {.name = "set_state",
     .verb = VERB_NONE,
     .keys = no_keys,
     .phase = FL_PHASE_NONE,
     .trace_action = "set_state",
     .frontends = FE_ALL,
     .with_delay = true,
     .joins = true,
     .doc = "set_state"},
};
const size_t fl_action_count = sizeof(fl_action_descs) / sizeof(fl_action_descs[0]);

/* The row of a verb (every verb has one). */
const struct fl_action_desc *fl_action_by_verb(enum sc_verb v)
{
	for (size_t i = 0; i < fl_action_count; i++)
		if (fl_action_descs[i].verb == v)
			return &fl_action_descs[i];
	return NULL;
}

/* The row whose scenario key is name, or NULL. */
const struct fl_action_desc *fl_action_by_name(const char *name)
{
	for (size_t i = 0; i < fl_action_count; i++)
		if (!strcmp(fl_action_descs[i].name, name))
			return &fl_action_descs[i];
	return NULL;
}

/* The scenario word for an action verb, as traces write it. */
const char *sc_verb_name(enum sc_verb v)
{
	const struct fl_action_desc *d = fl_action_by_verb(v);

	return d ? d->trace_action : "?";
}
