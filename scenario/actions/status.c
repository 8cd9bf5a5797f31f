/* SPDX-License-Identifier: MIT */
/*
 * status.c - the action "status": answer with a SCSI status other than
 * CHECK CONDITION (SAM-5 r21 5.3.1) in place of the LUN
 * (docs/faults/status.md).
 */
#include "../scenario_internal.h"

#include <string.h>

static const char *const status_keys[] = {"overtake_ua", NULL};
static const char *const statuses[] = {"busy",	     "task_set_full", "reservation_conflict",
				       "aca_active", "task_aborted",  NULL};
static const uint8_t status_codes[] = {FL_STATUS_BUSY, FL_STATUS_TASK_SET_FULL,
				       FL_STATUS_RESERVATION_CONFLICT, FL_STATUS_ACA_ACTIVE,
				       FL_STATUS_TASK_ABORTED};

static const struct fl_action_param status_params[] = {
    {"status", FL_PARAM_CHOICE, NULL, 0, 0, statuses, NULL, "the status the command gets", 0},
    {"overtake_ua", FL_PARAM_BOOL, NULL, 0, 1, NULL, "false",
     "answer even when a unit attention is pending for the nexus", 0},
};

/* See fl_action.h. */
const char *fl_action_status_name(uint8_t status)
{
	for (size_t k = 0; statuses[k]; k++)
		if (status_codes[k] == status)
			return statuses[k];
	return NULL;
}

/* The parameter of a status action. */
struct status_args {
	uint8_t status;
};
FL_ACTION_ARGS(status_args)

/* Parses "status" and "overtake_ua". */
static void status_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512], q[80];
	json_t *e;

	if ((e = json_object_get(v, "status"))) {
		const char *s = json_is_string(e) ? json_string_value(e) : "";
		size_t k = 0;

		while (statuses[k] && strcmp(s, statuses[k]))
			k++;
		if (statuses[k])
			status_args_set(a, &(struct status_args){status_codes[k]});
		else
			perr(c, SUBP(sub, path, "status"), false,
			     "unknown status %s (expected \"busy\", \"task_set_full\", "
			     "\"reservation_conflict\", \"aca_active\" or \"task_aborted\")",
			     pquote(e, q, sizeof(q)));
	}
	action_overtake_ua(c, path, v, a);
}

/* Answers with the status, no data and no sense. */
static void status_before(const struct fl_action_env *x)
{
	x->cmd->status = status_args_of(x->a).status;
}

/* Trace: "status": "0xSS". */
static void status_trace(json_t *o, const struct sc_action *a, uint64_t info)
{
	char buf[8];

	(void)info;
	snprintf(buf, sizeof(buf), "0x%02x", status_args_of(a).status);
	json_object_set_new(o, "status", json_string(buf));
}

const struct fl_action fl_action_status = {
    .name = "status",
    .verb = VERB_STATUS,
    .trace_action = "status",
    .doc = "status",
    .keys = status_keys,
    .params = status_params,
    .nparams = sizeof(status_params) / sizeof(status_params[0]),
    .phase = FL_PHASE_BEFORE,
    .observed = FL_OBS_ANSWERS,
    .observed_as = "answered with a status",
    .frontends = FL_FE_ALL,
    .answers = true,
    .with_delay = true,
    .parse = status_parse,
    .before = status_before,
    .trace = status_trace,
};
