/* SPDX-License-Identifier: MIT */
/*
 * actions.c - the registry of fault actions (fl_action.h): one line per
 * action, indexed by its verb. Each action's parameters, parse, engine hooks
 * and trace line are in scenario/actions/NAME.c; its page is
 * docs/faults/DOC.md. A new action is one file there, one line here, one
 * docs page and one test row (tests/unit/faults/test_actions.c).
 *
 * Also the parse helpers the action files share.
 */
#include "scenario_internal.h"

#include <string.h>

extern const struct fl_action fl_action_set_state, fl_action_sense, fl_action_status,
    fl_action_delay, fl_action_hold, fl_action_drop, fl_action_drop_response, fl_action_short,
    fl_action_corrupt, fl_action_ua, fl_action_power_loss, fl_action_resize, fl_action_alua,
    fl_action_owner, fl_action_late_write;

/* Listing order ("did you mean", "only goes with") follows the verbs, set_state last. */
const struct fl_action *const fl_actions[VERB_NR] = {
    [VERB_NONE] = &fl_action_set_state,
    [VERB_SENSE] = &fl_action_sense,
    [VERB_STATUS] = &fl_action_status,
    [VERB_DELAY] = &fl_action_delay,
    [VERB_HOLD] = &fl_action_hold,
    [VERB_DROP] = &fl_action_drop,
    [VERB_DROP_RESPONSE] = &fl_action_drop_response,
    [VERB_SHORT] = &fl_action_short,
    [VERB_CORRUPT] = &fl_action_corrupt,
    [VERB_UA] = &fl_action_ua,
    [VERB_POWER_LOSS] = &fl_action_power_loss,
    [VERB_RESIZE] = &fl_action_resize,
    [VERB_ALUA] = &fl_action_alua,
    [VERB_OWNER] = &fl_action_owner,
    [VERB_LATE_WRITE] = &fl_action_late_write,
};

/* The i-th row in listing order (0 .. VERB_NR-1): the verbs in order, then set_state. */
const struct fl_action *fl_action_at(size_t i)
{
	return i < VERB_NR ? fl_actions[(i + 1) % VERB_NR] : NULL;
}

/* The row whose scenario key is name, or NULL. */
const struct fl_action *fl_action_by_name(const char *name)
{
	for (size_t i = 0; i < VERB_NR; i++)
		if (!strcmp(fl_actions[i]->name, name))
			return fl_actions[i];
	return NULL;
}

/* The row whose trace name is name, or NULL. */
const struct fl_action *fl_action_by_trace(const char *name)
{
	for (size_t i = 0; name && i < VERB_NR; i++)
		if (!strcmp(fl_actions[i]->trace_action, name))
			return fl_actions[i];
	return NULL;
}

/* The phase in which the engine carries out a. */
enum fl_action_phase fl_action_phase(const struct sc_action *a)
{
	const struct fl_action *d = fl_action_by_verb(a->verb);

	if (!d)
		return FL_PHASE_NONE;
	return d->phase_of ? d->phase_of(a) : d->phase;
}

/* The scenario word for an action verb, as traces write it. */
const char *sc_verb_name(enum sc_verb v)
{
	const struct fl_action *d = fl_action_by_verb(v);

	return d ? d->trace_action : "?";
}

/* Parses key of v, when present, as a flag that can only be true. */
void action_flag(struct pctx *c, const char *path, json_t *v, const char *key)
{
	char sub[512];
	bool t = false;
	json_t *e = json_object_get(v, key);

	if (e && pbool(c, SUBP(sub, path, key), e, &t) && !t)
		perr(c, sub, false, "\"%s\" can only be true (leave it out instead)", key);
}

/* Parses "overtake_ua" of v, when present. */
void action_overtake_ua(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512];
	json_t *e = json_object_get(v, "overtake_ua");

	if (e)
		pbool(c, SUBP(sub, path, "overtake_ua"), e, &a->overtake_ua);
}

/* Adds the trace field name: "AA/QQ" in hex. */
void action_trace_ascq(json_t *o, const char *name, uint8_t asc, uint8_t ascq)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%02x/%02x", asc, ascq);
	json_object_set_new(o, name, json_string(buf));
}
