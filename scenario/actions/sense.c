/* SPDX-License-Identifier: MIT */
/*
 * sense.c - the action "sense": answer CHECK CONDITION with the given sense
 * (docs/faults/sense.md). SPC-4 r37 4.5.6: a RECOVERED ERROR or COMPLETED
 * sense reports on a command that did complete, so with those keys the
 * command executes, transfers all its data, and its GOOD status becomes
 * CHECK CONDITION; any other key ends the command before the LUN sees it.
 */
#include "../scenario_internal.h"

#include <string.h>

static const char *const sense_keys[] = {"info", "format", "overtake_ua", NULL};
static const char *const info_values[] = {"lba", NULL};
static const char *const formats[] = {"fixed", "descriptor", NULL};

static const struct fl_action_param sense_params[] = {
    {"sense", FL_PARAM_SENSE, NULL, 0, 15, NULL, NULL,
     "KEY/AA/QQ in hex, or KEY/ASC_NAME, or {key, asc, ascq}", 0},
    {"info", FL_PARAM_CHOICE, NULL, 0, 0, info_values, NULL,
     "the first failing LBA goes in the INFORMATION field", 0},
    {"format", FL_PARAM_CHOICE, NULL, 0, 0, formats, "the LUN's D_SENSE",
     "the sense data format, overriding the LUN's", 0},
    {"overtake_ua", FL_PARAM_BOOL, NULL, 0, 1, NULL, "false",
     "answer even when a unit attention is pending for the nexus", 0},
};

/* The parameters of a sense action. */
struct sense_args {
	uint8_t key, asc, ascq;
	bool info_lba;
	enum sc_sense_format format;
};
FL_ACTION_ARGS(sense_args)

/* Parses "sense", "info", "format" and "overtake_ua". */
static void sense_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	struct sense_args s = sense_args_of(a);
	char sub[512], q[80];
	json_t *e;

	if ((e = json_object_get(v, "sense")))
		psense(c, SUBP(sub, path, "sense"), e, &s.key, &s.asc, &s.ascq);
	if ((e = json_object_get(v, "info"))) {
		SUBP(sub, path, "info");
		if (!json_is_string(e) || strcmp(json_string_value(e), "lba"))
			perr(c, sub, false, "\"info\": expected \"lba\", got %s",
			     pquote(e, q, sizeof(q)));
		s.info_lba = true;
	}
	if ((e = json_object_get(v, "format"))) {
		const char *f = json_is_string(e) ? json_string_value(e) : "";

		SUBP(sub, path, "format");
		if (!strcmp(f, "fixed"))
			s.format = FORMAT_FIXED;
		else if (!strcmp(f, "descriptor"))
			s.format = FORMAT_DESCRIPTOR;
		else
			perr(c, sub, false,
			     "\"format\": expected \"fixed\" or \"descriptor\", got %s",
			     pquote(e, q, sizeof(q)));
	}
	sense_args_set(a, &s);
	action_overtake_ua(c, path, v, a);
}

/* RECOVERED ERROR and COMPLETED report after execution (SPC-4 r37 4.5.6). */
static enum fl_action_phase sense_phase(const struct sc_action *a)
{
	uint8_t key = sense_args_of(a).key;

	return key == FL_KEY_RECOVERED_ERROR || key == FL_KEY_COMPLETED ? FL_PHASE_AFTER
									: FL_PHASE_BEFORE;
}

/* Fills the command's sense as the action says. */
static void sense_put(const struct fl_action_env *x)
{
	const struct sense_args s = sense_args_of(x->a);

	if (s.format == FORMAT_LUN)
		fl_lun_set_sense(x->lun, x->cmd, s.key, s.asc, s.ascq, s.info_lba, x->info);
	else
		fl_cmd_set_sense(x->cmd, s.format == FORMAT_DESCRIPTOR, s.key, s.asc, s.ascq,
				 s.info_lba, x->info);
}

/* A sense that completes: GOOD becomes CHECK CONDITION, the data stays. */
static void sense_after(const struct fl_action_env *x)
{
	if (x->cmd->status == FL_STATUS_GOOD)
		sense_put(x);
}

/* Trace: "sense": "K/AA/QQ", and "info" when the action puts the LBA there. */
static void sense_trace(json_t *o, const struct sc_action *a, uint64_t info)
{
	const struct sense_args s = sense_args_of(a);
	char buf[32];

	snprintf(buf, sizeof(buf), "%x/%02x/%02x", s.key, s.asc, s.ascq);
	json_object_set_new(o, "sense", json_string(buf));
	if (s.info_lba)
		json_object_set_new(o, "info", json_integer((json_int_t)info));
}

const struct fl_action fl_action_sense = {
    .name = "sense",
    .verb = VERB_SENSE,
    .trace_action = "sense",
    .doc = "sense",
    .keys = sense_keys,
    .params = sense_params,
    .nparams = sizeof(sense_params) / sizeof(sense_params[0]),
    .phase = FL_PHASE_BEFORE,
    .observed = FL_OBS_ANSWERS,
    .observed_as = "answered CHECK CONDITION",
    .frontends = FL_FE_ALL,
    .answers = true,
    .with_delay = true,
    .parse = sense_parse,
    .phase_of = sense_phase,
    .before = sense_put,
    .after = sense_after,
    .trace = sense_trace,
};
