/* SPDX-License-Identifier: MIT */
/*
 * late_write.c - the action "late_write": a WRITE is held unanswered, as
 * "hold": "until_abort" holds it, but its data reaches the medium later:
 * after_ms after the command arrived, or when its connection or session goes
 * away if that comes first ("on_close"), whatever the initiator did meanwhile
 * (docs/faults/late_write.md). This is an array with a deep queue writing a
 * command the host has already given up on and rewritten through another
 * path. The engine copies the data when the command goes on hold and writes
 * the copy through the LUN later (faults/engine_late.c); a command that
 * carries no data to write is only held.
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param late_write_params[] = {
    {"late_write/after_ms", FL_PARAM_MS, "ms", 0, 3600000.0, NULL, NULL,
     "the data lands this long after the command arrived", 0},
    {"late_write/on_close", FL_PARAM_BOOL, NULL, 0, 1, NULL, "false",
     "true: or as soon as the command's connection or session goes away, if sooner", 0},
};

/* The parameters of a late_write action. */
struct late_write_args {
	double after_ms;
	bool on_close;
};
FL_ACTION_ARGS(late_write_args)

/* Parses "late_write": {"after_ms": MS, "on_close": BOOL}. */
static void late_write_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	static const char *const lkeys[] = {"after_ms", "on_close", NULL};
	json_t *e = json_object_get(v, "late_write"), *ms, *oc;
	char sub[512], s2[600], q[80];
	struct late_write_args l = {0};

	if (!e)
		return;
	SUBP(sub, path, "late_write");
	ms = json_is_object(e) ? json_object_get(e, "after_ms") : NULL;
	if (!ms) {
		perr(c, sub, false,
		     "\"late_write\": expected {\"after_ms\": MS} or {\"after_ms\": MS, "
		     "\"on_close\": true}, got %s",
		     pquote(e, q, sizeof(q)));
		return;
	}
	pkeys(c, sub, e, "late_write", lkeys);
	snprintf(s2, sizeof(s2), "%s/after_ms", sub);
	pdouble(c, s2, ms, 0, 3600000.0, &l.after_ms);
	oc = json_object_get(e, "on_close");
	snprintf(s2, sizeof(s2), "%s/on_close", sub);
	if (oc)
		pbool(c, s2, oc, &l.on_close);
	late_write_args_set(a, &l);
}

/* On hold: a command with data to write has it copied and written later. */
static void late_write_held(const struct fl_action_env *x)
{
	const struct fl_cdb_info *ci = fl_cmd_decode(x->cmd);
	const struct late_write_args l = late_write_args_of(x->a);

	if (ci->cls != FL_CLASS_WRITE || !x->cmd->data_out || !x->cmd->data_out_len)
		return; /* nothing to write: a plain hold */
	x->write_later(x->engine, x, (uint64_t)(l.after_ms * 1e6), l.on_close);
}

/* Any TMF that covers it ends the hold (the late write stays due). */
static void late_write_ends_on(const struct sc_action *a, bool *abort, bool *reset)
{
	(void)a;
	*abort = true;
	*reset = true;
}

/* Trace: "after_ms" and "on_close". */
static void late_write_trace(json_t *o, const struct sc_action *a, uint64_t info)
{
	(void)info;
	const struct late_write_args l = late_write_args_of(a);

	json_object_set_new(o, "after_ms", json_real(l.after_ms));
	json_object_set_new(o, "on_close", json_boolean(l.on_close));
}

const struct fl_action fl_action_late_write = {
    .name = "late_write",
    .verb = VERB_LATE_WRITE,
    .trace_action = "late_write",
    .doc = "late_write",
    .keys = no_keys,
    .params = late_write_params,
    .nparams = sizeof(late_write_params) / sizeof(late_write_params[0]),
    .phase = FL_PHASE_HOLD,
    .counter = FL_COUNT_HELD,
    .observed = FL_OBS_NEVER_ANSWERS,
    .observed_as = "held, never answered, written later",
    .frontends = FL_FE_ALL,
    .parse = late_write_parse,
    .held = late_write_held,
    .ends_on = late_write_ends_on,
    .trace = late_write_trace,
};
