/* SPDX-License-Identifier: MIT */
/*
 * dump_actions.c - prints the registry of fault actions (scenario/actions.c) as
 * one JSON object, for check_actions.py, which holds the JSON Schema and
 * docs/faults/ to it.
 */
#include "fl_scenario.h"

#include <stdio.h>

/* Prints a NULL-terminated list of names as a JSON array. */
static void print_list(const char *const *v)
{
	printf("[");
	for (size_t i = 0; v[i]; i++)
		printf("%s\"%s\"", i ? ", " : "", v[i]);
	printf("]");
}

int main(void)
{
	static const char *const phases[] = {[FL_PHASE_NONE] = "none",
					     [FL_PHASE_BEFORE] = "before",
					     [FL_PHASE_HOLD] = "hold",
					     [FL_PHASE_EFFECT] = "effect",
					     [FL_PHASE_AFTER] = "after"};
	static const char *const counters[] = {
	    [FL_COUNT_NONE] = "none", [FL_COUNT_HELD] = "held", [FL_COUNT_DROPPED] = "dropped"};

	printf("{\"actions\": [\n");
	for (size_t i = 0; i < VERB_NR; i++) {
		const struct fl_action *d = fl_action_at(i);
		const char *fes[4];
		size_t n = 0;

		if (d->frontends & FL_FE_ISCSI)
			fes[n++] = "iscsi";
		if (d->frontends & FL_FE_TCMU)
			fes[n++] = "tcmu";
		if (d->frontends & FL_FE_VM)
			fes[n++] = "vm";
		fes[n] = NULL;
		printf("  {\"name\": \"%s\", \"verb\": %d, \"keys\": ", d->name, (int)d->verb);
		print_list(d->keys);
		printf(", \"phase\": \"%s\", \"trace_action\": \"%s\", \"counter\": \"%s\", "
		       "\"frontends\": ",
		       phases[d->phase], d->trace_action, counters[d->counter]);
		print_list(fes);
		printf(", \"answers\": %s, \"with_delay\": %s, \"joins\": %s, \"doc\": \"%s\"}%s\n",
		       d->answers ? "true" : "false", d->with_delay ? "true" : "false",
		       d->joins ? "true" : "false", d->doc, i + 1 < VERB_NR ? "," : "");
	}
	printf("]}\n");
	return 0;
}
