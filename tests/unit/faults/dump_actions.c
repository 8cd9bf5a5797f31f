/* SPDX-License-Identifier: MIT */
/*
 * dump_actions.c - prints the registry of fault actions (scenario/actions.c)
 * as one JSON object: every row with its parameter descriptors. Read by
 * check_actions.py (docs/faults/ held to the registry), check_verbs.py and
 * scripts/gen-actions.py, which writes the JSON Schema's $defs.action, the
 * action table of docs/scenario-format.md and the fuzz dictionary's action
 * words from it.
 *
 * dump_actions --draw N prints N actions drawn from the descriptors
 * (fl_draw.h), one JSON object a line, for check_drawn_actions.py, which
 * holds the JSON Schema to them: states "normal", "moving", "degraded" and
 * target port groups 1 and 2 are what a drawn value may name.
 */
#include "fl_draw.h"
#include "fl_rand.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A NULL-terminated list of names as a JSON array. */
static json_t *list(const char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* One parameter descriptor. */
static json_t *param(const struct fl_action_param *p)
{
	static const char *const types[] = {
	    [FL_PARAM_TRUE] = "true",	[FL_PARAM_BOOL] = "bool",   [FL_PARAM_CHOICE] = "choice",
	    [FL_PARAM_UINT] = "uint",	[FL_PARAM_MS] = "ms",	    [FL_PARAM_DELAY] = "delay",
	    [FL_PARAM_SENSE] = "sense", [FL_PARAM_ASCQ] = "ascq",   [FL_PARAM_SIZE] = "size",
	    [FL_PARAM_STATE] = "state", [FL_PARAM_GROUP] = "group",
	};
	json_t *o =
	    json_pack("{s:s, s:s, s:f, s:f, s:s, s:I}", "key", p->key, "type", types[p->type],
		      "min", p->min, "max", p->max, "doc", p->doc, "oneof", (json_int_t)p->oneof);

	json_object_set_new(o, "unit", p->unit ? json_string(p->unit) : json_null());
	json_object_set_new(o, "default", p->def ? json_string(p->def) : json_null());
	if (p->choices)
		json_object_set_new(o, "choices", list(p->choices));
	return o;
}

/* splitmix64: the draws' stream, fixed seed. */
static uint64_t next(void *state)
{
	return fl_splitmix64(state);
}

/* Prints n drawn actions, each alone and with a delay or a set_state half of the time. */
static int draw(unsigned long n)
{
	static const char *const states[] = {"normal", "moving", "degraded"};
	uint64_t seed = 1;
	const struct fl_draw_ctx c = {
	    .rng = {next, &seed}, .states = states, .nstates = 3, .ngroups = 2};

	for (unsigned long i = 0; i < n; i++) {
		const struct fl_action *d = fl_action_at(fl_draw_uint(&c.rng, 0, VERB_NR - 1));
		json_t *o = json_object();

		fl_draw_action(&c, d, o);
		if (!d->joins && d->with_delay && fl_draw_uint(&c.rng, 0, 1))
			fl_draw_action(&c, fl_action_by_verb(VERB_DELAY), o);
		if (!d->joins && fl_draw_uint(&c.rng, 0, 1))
			fl_draw_action(&c, fl_action_by_verb(VERB_NONE), o);
		bool bad = json_dumpf(o, stdout, JSON_COMPACT) || fputc('\n', stdout) < 0;

		json_decref(o);
		if (bad)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const phases[] = {[FL_PHASE_NONE] = "none",
					     [FL_PHASE_BEFORE] = "before",
					     [FL_PHASE_HOLD] = "hold",
					     [FL_PHASE_EFFECT] = "effect",
					     [FL_PHASE_AFTER] = "after"};
	static const char *const counters[] = {
	    [FL_COUNT_NONE] = "none", [FL_COUNT_HELD] = "held", [FL_COUNT_DROPPED] = "dropped"};
	json_t *rows, *all;

	if (argc == 3 && !strcmp(argv[1], "--draw"))
		return draw(strtoul(argv[2], NULL, 10));
	rows = json_array();
	for (size_t i = 0; i < VERB_NR; i++) {
		const struct fl_action *d = fl_action_at(i);
		json_t *fes = json_array(), *params = json_array();

		if (d->frontends & FL_FE_ISCSI)
			json_array_append_new(fes, json_string("iscsi"));
		if (d->frontends & FL_FE_TCMU)
			json_array_append_new(fes, json_string("tcmu"));
		if (d->frontends & FL_FE_VM)
			json_array_append_new(fes, json_string("vm"));
		for (size_t k = 0; k < d->nparams; k++)
			json_array_append_new(params, param(&d->params[k]));
		json_array_append_new(
		    rows, json_pack("{s:s, s:i, s:o, s:s, s:s, s:s, s:o, s:b, s:b, s:b, s:s, s:o}",
				    "name", d->name, "verb", (int)d->verb, "keys", list(d->keys),
				    "phase", phases[d->phase], "trace_action", d->trace_action,
				    "counter", counters[d->counter], "frontends", fes, "answers",
				    d->answers, "with_delay", d->with_delay, "joins", d->joins,
				    "doc", d->doc, "params", params));
	}
	all = json_pack("{s:o}", "actions", rows);
	if (json_dumpf(all, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER) ||
	    fputc('\n', stdout) < 0)
		return 1;
	json_decref(all);
	return 0;
}
