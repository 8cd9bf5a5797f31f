/* SPDX-License-Identifier: MIT */
/*
 * fl_scenario_refused.h - the CUnit check the scenario reader's unit tests
 * share for a file it must refuse: -EINVAL, no scenario, and a diagnostic
 * holding the expected message at the line and column of an anchor in the
 * text (FILE:LINE:COL, as `faultlun lint` prints it).
 */
#ifndef FL_SCENARIO_REFUSED_H
#define FL_SCENARIO_REFUSED_H

#include <stdbool.h>

/*
 * Loads text as "t.json" for frontends and asserts it is refused with a message holding msg
 * at the line and column (1-based, characters) of anchor's first occurrence, in file
 * "t.json" when check_file; prints the diagnostics of a case (name) that is not.
 */
void fl_check_scenario_refused(const char *name, const char *text, unsigned frontends,
			       const char *anchor, const char *msg, bool check_file);

#endif
