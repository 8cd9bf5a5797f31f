/* SPDX-License-Identifier: MIT */
/*
 * schedule.c - the schedule generator of `faultlun explore`: draws a trial's
 * fault rules from the action registry's descriptors (fl_draw.h) on a
 * stream seeded by (seed, trial, attempt), and composes BASE + schedule into
 * a trial scenario that passes lint before it runs.
 *
 * Weights follow what the registry says of an action, not its name: actions
 * the initiator never sees answered (held, dropped, a dropped response) and
 * delays weigh most, since they drive the error handler; errors answered in
 * place of the LUN (sense, status: BUSY, TASK SET FULL, ...) next; changes
 * to the whole LUN (unit attentions, ALUA, ...) least; actions that change
 * data are left to a search that checks data, and set_state alone does
 * nothing a trial could see.
 *
 * Over iSCSI (unless rules only are asked for) a schedule also holds
 * task-management answers (the error handler's ABORT TASK, LUN RESET and
 * target reset answered never, rejected or late: {"id", "tmf": {FUNCTION:
 * BEHAVIOUR}}) and transport faults (a response or a ping dropped, a
 * response delayed, the connection cut on a command: {"id", "transport":
 * {"match", "action"}}); fl_explore_scenario puts each where the scenario
 * format has it. With two or more target ports (dm-multipath), a rule or a
 * transport fault takes one port, one path, two times in three.
 */
#include "fl_explore.h"
#include "fl_draw.h"
#include "fl_rand.h"
#include "fl_scenario.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Of ten schedule entries over iSCSI, how many are TMF answers and transport faults. */
#define DRAW_TMF_IN_10 2
#define DRAW_XPORT_IN_10 2

/* The bounded match of a drawn rule. */
#define MATCH_MAX_AFTER 10     /* matching commands skipped before the first hit */
#define MATCH_MAX_TIMES 8      /* hits at most */
#define MATCH_MAX_FROM_MS 8000 /* a time window opens at most this late */
#define MATCH_MIN_SPAN_MS 200  /* and lasts at least this long */

/* splitmix64: the generator's stream (a 64-bit state). */
static uint64_t sm_next(void *state)
{
	return fl_splitmix64(state);
}

/* How often action d is drawn (0: never) for the base's front end. */
static unsigned action_weight(const struct fl_action *d, unsigned frontend)
{
	if (!(d->frontends & frontend) || d->verb == VERB_NONE)
		return 0;
	if (d->observed == FL_OBS_NEVER_ANSWERS)
		return 4;
	if (d->joins) /* delay_ms alone */
		return 3;
	if (d->phase == FL_PHASE_BEFORE && d->observed == FL_OBS_ANSWERS)
		return 3;
	if (d->observed == FL_OBS_CHANGES_LUN)
		return 1;
	return 0;
}

/* One action picked by weight. */
static const struct fl_action *pick_action(const struct fl_draw_rng *g, unsigned frontend)
{
	unsigned total = 0, x;

	for (size_t i = 0; i < VERB_NR; i++)
		total += action_weight(fl_actions[i], frontend);
	x = (unsigned)fl_draw_uint(g, 0, total - 1);
	for (size_t i = 0; i < VERB_NR; i++) {
		unsigned w = action_weight(fl_actions[i], frontend);

		if (x < w)
			return fl_actions[i];
		x -= w;
	}
	return fl_actions[VERB_DELAY];
}

/* The value at key ("a" or "a/b") in the action object, or NULL. */
static json_t *value_at(json_t *action, const char *key, json_t **parent, const char **leaf)
{
	const char *slash = strchr(key, '/');
	char head[64];

	*parent = action;
	*leaf = key;
	if (slash) {
		snprintf(head, sizeof(head), "%.*s", (int)(slash - key), key);
		*parent = json_object_get(action, head);
		*leaf = slash + 1;
	}
	return json_is_object(*parent) ? json_object_get(*parent, *leaf) : NULL;
}

/*
 * Every time in milliseconds of action (d's parameters, and a delay's)
 * brought around the initiator's command timeout, between half and one and
 * a half of it (within the descriptor's range): where the command timer and
 * the error handler race.
 */
static void times_near_timeout(const struct fl_explore_base *b, const struct fl_draw_rng *g,
			       const struct fl_action *d, json_t *action)
{
	const struct fl_action *const rows[] = {d, fl_actions[VERB_DELAY]};

	for (size_t r = 0; r < 2; r++)
		for (size_t k = 0; k < rows[r]->nparams; k++) {
			const struct fl_action_param *p = &rows[r]->params[k];
			const char *leaf;
			json_t *parent, *v = value_at(action, p->key, &parent, &leaf);
			double ms = b->timeout_ms * (0.5 + fl_draw_unit(g));

			if (!fl_param_is_ms(p) || !json_is_number(v))
				continue;
			ms = ms < p->min ? p->min : ms > p->max ? p->max : ms;
			json_object_set_new(parent, leaf, json_real((double)(long long)ms));
		}
}

/*
 * With two or more ports, a match takes one of them two times in three (one
 * path faulted, the others serving), else every path. Draws nothing with one
 * port, so a single-path base's schedules do not depend on this.
 */
static void draw_port(const struct fl_explore_base *b, const struct fl_draw_rng *g, json_t *m)
{
	uint64_t k;

	if (b->nports < 2)
		return;
	k = fl_draw_uint(g, 0, 3 * b->nports / 2);
	if (k < b->nports)
		json_object_set_new(m, "port", json_string(b->ports[k]));
}

/* The match of a drawn rule: the LUN under test, a class, a count or a time window. */
static json_t *draw_match(const struct fl_explore_base *b, const struct fl_draw_rng *g)
{
	static const char *const classes[] = {"read", "write", "read", "write", "flush", "tur"};
	json_t *m = json_pack("{s:I, s:s}", "lun", (json_int_t)b->lun, "class",
			      classes[fl_draw_uint(g, 0, 5)]);

	if (fl_draw_uint(g, 0, 1)) {
		json_object_set_new(m, "after",
				    json_integer((json_int_t)fl_draw_uint(g, 0, MATCH_MAX_AFTER)));
	} else {
		uint64_t from = fl_draw_uint(g, 0, MATCH_MAX_FROM_MS);
		uint64_t span = fl_draw_uint(g, MATCH_MIN_SPAN_MS,
					     MATCH_MIN_SPAN_MS + (uint64_t)(4 * b->timeout_ms));

		json_object_set_new(
		    m, "window_ms",
		    json_pack("[I, I]", (json_int_t)from, (json_int_t)(from + span)));
	}
	json_object_set_new(m, "times",
			    json_integer((json_int_t)fl_draw_uint(g, 1, MATCH_MAX_TIMES)));
	draw_port(b, g, m);
	return m;
}

/*
 * A task-management answer: the function the error handler sends first,
 * next or last, answered never, rejected, or complete late (up to twice the
 * command timeout: the TMF timeouts are of that order).
 */
static json_t *draw_tmf(const struct fl_explore_base *b, const struct fl_draw_rng *g)
{
	static const char *const fns[] = {"abort_task", "lun_reset", "target_warm_reset"};
	static const char *const resps[] = {"never", "rejected", "complete"};
	const char *resp = resps[fl_draw_uint(g, 0, 2)];
	json_t *o = json_pack("{s:s}", "respond", resp);

	if (strcmp(resp, "never"))
		json_object_set_new(
		    o, "delay_ms",
		    json_integer((json_int_t)fl_draw_uint(g, 0, (uint64_t)(2 * b->timeout_ms))));
	return json_pack("{s:{s:o}}", "tmf", fns[fl_draw_uint(g, 0, 2)], o);
}

/* A transport fault: which PDU, after how many, how many times, and what. */
static json_t *draw_transport(const struct fl_explore_base *b, const struct fl_draw_rng *g)
{
	static const struct {
		const char *pdu, *action; /* action NULL: a delay */
	} kinds[] = {
	    {"scsi_response", "drop"}, /* a lost response */
	    {"data_in", "drop"},       /* a lost piece of read data */
	    {"scsi_response", NULL},   /* a late response */
	    {"nop_out", "drop"},       /* pings unanswered: the initiator's NOP timeout */
	    {"scsi_command", "close"}, /* the connection cut on a command */
	    {"tmf_response", "drop"},  /* a TMF's answer lost */
	};
	unsigned k = (unsigned)fl_draw_uint(g, 0, sizeof(kinds) / sizeof(kinds[0]) - 1);
	json_t *m =
	    json_pack("{s:s, s:I, s:I}", "pdu", kinds[k].pdu, "after",
		      (json_int_t)fl_draw_uint(g, 0, MATCH_MAX_AFTER), "times",
		      (json_int_t)fl_draw_uint(
			  g, 1, kinds[k].action && !strcmp(kinds[k].action, "close") ? 1 : 3));
	json_t *a = kinds[k].action
			? json_string(kinds[k].action)
			: json_pack("{s:I}", "delay_ms",
				    (json_int_t)(b->timeout_ms * (0.5 + fl_draw_unit(g))));

	draw_port(b, g, m);
	return json_pack("{s:{s:o, s:o}}", "transport", "match", m, "action", a);
}

json_t *fl_explore_draw(const struct fl_explore_base *b, uint64_t seed, unsigned trial,
			unsigned attempt, unsigned max_faults)
{
	uint64_t state = seed;
	const struct fl_draw_ctx c = {.rng = {sm_next, &state},
				      .states = b->states,
				      .nstates = b->nstates,
				      .ngroups = b->ngroups};
	const struct fl_draw_rng *g = &c.rng;
	json_t *rules = json_array();
	unsigned n;

	/* one stream per (seed, trial, attempt), whatever was drawn before */
	state = sm_next(&state) ^ ((uint64_t)trial << 20) ^ attempt;
	state = sm_next(&state);
	if (max_faults < 1)
		max_faults = 1;
	if (max_faults > FL_EXPLORE_MAX_FAULTS)
		max_faults = FL_EXPLORE_MAX_FAULTS;
	n = (unsigned)fl_draw_uint(g, 1, max_faults);
	for (unsigned i = 0; i < n; i++) {
		unsigned kind = b->frontend == FL_FE_ISCSI && b->tmf_transport
				    ? (unsigned)fl_draw_uint(g, 0, 9)
				    : 9;
		char id[16];

		snprintf(id, sizeof(id), "x%u", i + 1);
		if (kind < DRAW_TMF_IN_10 + DRAW_XPORT_IN_10) {
			json_t *e = kind < DRAW_TMF_IN_10 ? draw_tmf(b, g) : draw_transport(b, g);
			json_object_set_new(e, "id", json_string(id));
			json_array_append_new(rules, e);
			continue;
		}
		const struct fl_action *d = pick_action(g, b->frontend);
		json_t *action = json_object();

		fl_draw_action(&c, d, action);
		if (!d->joins && d->with_delay && fl_draw_uint(g, 0, 3) == 0)
			fl_draw_action(&c, fl_actions[VERB_DELAY], action);
		times_near_timeout(b, g, d, action);
		json_array_append_new(rules, json_pack("{s:s, s:o, s:o}", "id", id, "match",
						       draw_match(b, g), "action", action));
	}
	return rules;
}

int fl_explore_base_init(struct fl_explore_base *b, json_t *doc, const char *path, char *err,
			 size_t errlen)
{
	json_t *states = json_object_get(doc, "states"),
	       *groups = json_object_get(doc, "port_groups");
	json_t *check = json_object_get(doc, "check"), *knobs = json_object_get(check, "knobs");
	json_t *wl = json_object_get(check, "workload"), *luns = json_object_get(doc, "luns");
	json_t *lun = json_object_get(json_array_get(wl, 0), "lun"), *v;
	size_t i;

	memset(b, 0, sizeof(*b));
	if (!json_is_array(wl) || !json_array_size(wl)) {
		snprintf(err, errlen, "BASE has no check.workload: a trial needs I/O to fault");
		return -1;
	}
	if (!lun)
		lun = json_object_get(json_array_get(luns, 0), "lun");
	b->lun = json_is_integer(lun) ? json_integer_value(lun) : 0;
	json_array_foreach(states, i, v) if (json_is_string(v) &&
					     b->nstates < sizeof(b->states) / sizeof(b->states[0]))
	    b->states[b->nstates++] = json_string_value(v);
	b->ngroups = json_is_array(groups) && json_array_size(groups)
			 ? (unsigned)json_array_size(groups)
			 : 1;
	json_array_foreach(json_object_get(doc, "ports"), i, v)
	{
		const char *id = json_string_value(json_object_get(v, "id"));

		if (id && b->nports < sizeof(b->ports) / sizeof(b->ports[0]))
			b->ports[b->nports++] = id;
	}
	v = json_object_get(knobs, "timeout_s");
	b->timeout_ms =
	    json_is_number(v) && json_number_value(v) > 0 && json_number_value(v) <= 3600
		? json_number_value(v) * 1000
		: 30000;
	b->frontend = !strcmp(path, "tcmu") ? FL_FE_TCMU : FL_FE_ISCSI;
	b->doc = json_incref(doc);
	return 0;
}

void fl_explore_base_free(struct fl_explore_base *b)
{
	json_decref(b->doc);
	b->doc = NULL;
}

/* The object (array: an array) at doc[key], made when absent or of another type. */
static json_t *member_at(json_t *doc, const char *key, bool array)
{
	json_t *v = json_object_get(doc, key);

	if (array ? !json_is_array(v) : !json_is_object(v)) {
		v = array ? json_array() : json_object();
		json_object_set_new(doc, key, v);
	}
	return v;
}

/*
 * Puts one schedule entry where the scenario has it: a TMF answer into
 * "tmf" (a later one for the same function replaces it), a transport fault
 * into "transport.rules", a rule into "rules".
 */
static void place_entry(json_t *doc, json_t *e)
{
	json_t *tmf = json_object_get(e, "tmf"), *xp = json_object_get(e, "transport");

	if (json_is_object(tmf)) {
		json_object_update(member_at(doc, "tmf", false), tmf);
	} else if (json_is_object(xp)) {
		json_t *r = json_deep_copy(xp);
		json_object_set(r, "id", json_object_get(e, "id"));
		json_array_append_new(member_at(member_at(doc, "transport", false), "rules", true),
				      r);
	} else {
		json_array_append_new(member_at(doc, "rules", true), json_deep_copy(e));
	}
}

/* knobs[name] in whole seconds when it is a number in 0..3600, else def. */
static double knob_s(json_t *knobs, const char *name, double def)
{
	json_t *v = json_object_get(knobs, name);

	return json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) <= 3600
		   ? json_number_value(v)
		   : def;
}

/*
 * One send of a command with a timer of t seconds over iSCSI at its longest:
 * three expiries (the NOP-Out check, the progress check), each rounded up a
 * second; the three TMFs' timeouts; two TEST UNIT READYs after each of the
 * two resets (scsi_eh_tur); a session recovery and its login.
 */
static double iscsi_send_s(json_t *knobs, double t)
{
	return 3 * (t + 1) + knob_s(knobs, "abort_tmo_s", 15) +
	       knob_s(knobs, "lu_reset_tmo_s", 30) + knob_s(knobs, "tgt_reset_tmo_s", 30) +
	       4 * knob_s(knobs, "eh_timeout_s", 10) + knob_s(knobs, "recovery_tmo_s", 120) + 2;
}

unsigned fl_explore_allowance_s(json_t *knobs, unsigned frontend)
{
	double t = knob_s(knobs, "timeout_s", 30), send;

	if (frontend == FL_FE_TCMU) {
		/* one expiry; LIO answers the abort and the LUN reset after cmd_time_out;
		 * the four TEST UNIT READYs */
		send = (t + 1) + 2 * knob_s(knobs, "cmd_time_out_s", 30) +
		       4 * knob_s(knobs, "eh_timeout_s", 10);
	} else {
		send = iscsi_send_s(knobs, t);
	}
	/* dm-multipath queueing with no path left: no_path_retry checker intervals */
	if (json_is_true(json_object_get(knobs, "multipath")))
		send += knob_s(knobs, "no_path_retry", 0) * knob_s(knobs, "polling_interval_s", 5) /
			FL_EXPLORE_SD_SENDS;
	return (unsigned)(FL_EXPLORE_SD_SENDS * send + 0.5);
}

/* A match's times as a count of hits: 1..FL_EXPLORE_RTPG_MAX, that at most when absent. */
static unsigned match_times(json_t *m)
{
	json_t *v = json_object_get(m, "times");

	return json_is_integer(v) && json_integer_value(v) >= 1 &&
		       json_integer_value(v) < FL_EXPLORE_RTPG_MAX
		   ? (unsigned)json_integer_value(v)
		   : FL_EXPLORE_RTPG_MAX;
}

unsigned fl_explore_rtpg_losses(json_t *doc)
{
	json_t *knobs = json_object_get(json_object_get(doc, "check"), "knobs"), *e, *m, *a;
	unsigned n = 0;
	size_t i;
	bool alua = false;

	json_array_foreach(json_object_get(doc, "luns"), i, e) alua |=
	    json_object_get(e, "alua") != NULL;
	if (!alua || !json_is_true(json_object_get(knobs, "multipath")))
		return 0;
	/* a lost command, response or piece of read data, whatever its opcode */
	json_array_foreach(json_object_get(json_object_get(doc, "transport"), "rules"), i, e)
	{
		const char *pdu =
		    json_string_value(json_object_get(m = json_object_get(e, "match"), "pdu"));
		if (json_is_string(a = json_object_get(e, "action")) &&
		    !strcmp(json_string_value(a), "drop") &&
		    (!pdu || !strcmp(pdu, "scsi_command") || !strcmp(pdu, "scsi_response") ||
		     !strcmp(pdu, "data_in")))
			n += match_times(m);
	}
	/* a rule that drops or holds REPORT TARGET PORT GROUPS: no class, no other opcode */
	json_array_foreach(json_object_get(doc, "rules"), i, e)
	{
		json_t *op = json_object_get(m = json_object_get(e, "match"), "opcode");
		a = json_object_get(e, "action");
		if (!json_object_get(m, "class") &&
		    (!op || (json_is_string(op) && !strcasecmp(json_string_value(op), "0xa3")) ||
		     (json_is_integer(op) && json_integer_value(op) == 0xa3)) &&
		    (json_is_true(json_object_get(a, "drop")) || json_object_get(a, "hold")))
			n += match_times(m);
	}
	return n < FL_EXPLORE_RTPG_MAX ? n : FL_EXPLORE_RTPG_MAX;
}

/*
 * The liveness bound in doc (a trial's scenario): every workload step's
 * deadline (timeout_s, 180 s when absent) gets the allowance
 * (fl_explore_allowance_s) once per call it makes (repeat, at most
 * FL_EXPLORE_MAX_REPEATS: each call may meet a fault of its own), and the
 * hung-task detector's timeout (knobs.hung_task_timeout_s, when BASE lowers
 * it; one call blocked) once. Over dm-multipath with ALUA, both also get one
 * REPORT TARGET PORT GROUPS send at its longest (on scsi_dh_alua's own
 * timer, FL_EXPLORE_RTPG_TIMER_S) for each answer the schedule may lose
 * (fl_explore_rtpg_losses): a path group's activation holds every I/O of
 * the map while it runs.
 */
static void liveness_bound(json_t *doc, unsigned frontend)
{
	json_t *check = json_object_get(doc, "check"), *knobs = json_object_get(check, "knobs");
	json_t *step, *v;
	unsigned extra = fl_explore_allowance_s(knobs, frontend);
	json_int_t rtpg = frontend == FL_FE_ISCSI
			      ? (json_int_t)(fl_explore_rtpg_losses(doc) *
						 iscsi_send_s(knobs, FL_EXPLORE_RTPG_TIMER_S) +
					     0.5)
			      : 0;
	size_t i;

	json_array_foreach(json_object_get(check, "workload"), i, step)
	{
		v = json_object_get(step, "timeout_s");
		json_int_t own = json_is_integer(v) ? json_integer_value(v) : FL_STEP_TIMEOUT_S;
		json_int_t calls = json_integer_value(json_object_get(step, "repeat"));
		calls = calls < 1			 ? 1
			: calls > FL_EXPLORE_MAX_REPEATS ? FL_EXPLORE_MAX_REPEATS
							 : calls;
		if (json_is_object(step))
			json_object_set_new(step, "timeout_s",
					    json_integer(own + calls * (json_int_t)extra + rtpg));
	}
	v = json_object_get(knobs, "hung_task_timeout_s");
	if (json_is_integer(v) && json_integer_value(v) > 0)
		json_object_set_new(knobs, "hung_task_timeout_s",
				    json_integer(json_integer_value(v) + (json_int_t)extra + rtpg));
}

json_t *fl_explore_scenario(const struct fl_explore_base *b, json_t *schedule, uint32_t keep,
			    const char *name)
{
	json_t *doc = json_deep_copy(b->doc), *r;
	size_t i;

	if (!doc)
		return NULL;
	member_at(doc, "rules", true);
	json_array_foreach(schedule, i, r) if (i < 32 && (keep >> i & 1)) place_entry(doc, r);
	json_object_set_new(doc, "name", json_string(name));
	liveness_bound(doc, b->frontend);
	return doc;
}

int fl_explore_write_linted(json_t *doc, const char *file, unsigned frontend, bool verbose)
{
	struct fl_scenario *sc = NULL;
	struct fl_diags d = {0};
	int rc;

	if (json_dump_file(doc, file, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0) {
		fprintf(stderr, "faultlun explore: cannot write %s\n", file);
		return -1;
	}
	rc = fl_scenario_load_file(file, frontend, &sc, &d);
	if (rc < 0 && verbose)
		fl_diags_print(&d, stderr);
	fl_diags_free(&d);
	fl_scenario_free(sc);
	return rc < 0 ? -1 : 0;
}
