/* SPDX-License-Identifier: MIT */
/*
 * fl_scenario_refused.h - the CUnit checks the scenario reader's unit tests
 * share: a file that must load, and a file it must refuse: -EINVAL, no scenario, and a diagnostic
 * holding the expected message at the line and column of an anchor in the
 * text (FILE:LINE:COL, as `faultlun lint` prints it).
 */
#ifndef FL_SCENARIO_REFUSED_H
#define FL_SCENARIO_REFUSED_H

#include <stdbool.h>
#include <stddef.h>

struct fl_diags;
struct fl_scenario;

/* Loads text as file for frontends, its diagnostics in *d; the test ends here unless it
 * loads. Returns the scenario (the caller frees it). */
struct fl_scenario *fl_scenario_loads(const char *file, const char *text, unsigned frontends,
				      struct fl_diags *d);

/* One file the reader must refuse: the first diagnostic sits at anchor and holds msg. */
struct fl_refused_case {
	const char *name;
	const char *text;
	const char *anchor; /* first occurrence in text = expected position */
	const char *msg;
	unsigned frontends;
};

/*
 * Loads text as "t.json" for frontends and asserts it is refused with a message holding msg
 * at the line and column (1-based, characters) of anchor's first occurrence, in file
 * "t.json" when check_file; prints the diagnostics of a case (name) that is not.
 */
void fl_check_scenario_refused(const char *name, const char *text, unsigned frontends,
			       const char *anchor, const char *msg, bool check_file);

/* fl_check_scenario_refused of each of the n cases. */
void fl_check_scenarios_refused(const struct fl_refused_case *cases, size_t n, bool check_file);

#endif
