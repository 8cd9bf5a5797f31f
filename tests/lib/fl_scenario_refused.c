// SPDX-License-Identifier: MIT
/*
 * fl_scenario_refused.c - a refused scenario file, checked (fl_scenario_refused.h).
 */
#include "fl_scenario_refused.h"

#include "fl_scenario.h"

#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Line and column (1-based, characters) of the first occurrence of anchor. */
static void locate(const char *text, const char *anchor, int *line, int *col)
{
	const char *at = strstr(text, anchor);

	*line = 1;
	*col = 1;
	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	for (const char *p = text; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* See fl_scenario_refused.h. */
void fl_check_scenario_refused(const char *name, const char *text, unsigned frontends,
			       const char *anchor, const char *msg, bool check_file)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = (struct fl_scenario *)1;
	int line, col, r;
	bool found = false;

	r = fl_scenario_load_string("t.json", text, frontends, &sc, &d);
	locate(text, anchor, &line, &col);
	for (size_t k = 0; k < d.n; k++)
		if (strstr(d.v[k].msg, msg) && d.v[k].line == line && d.v[k].col == col &&
		    (!check_file || !strcmp(d.v[k].file, "t.json")))
			found = true;
	if (r != -EINVAL || sc != NULL || !found) {
		fprintf(stderr, "\ncase %s: r=%d, want %d:%d: ...%s...; got:\n", name, r, line, col,
			msg);
		fl_diags_print(&d, stderr);
	}
	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT_PTR_NULL(sc);
	CU_ASSERT_TRUE(found);
	fl_diags_free(&d);
}

/* See fl_scenario_refused.h. */
void fl_check_scenarios_refused(const struct fl_refused_case *cases, size_t n, bool check_file)
{
	for (size_t i = 0; i < n; i++)
		fl_check_scenario_refused(cases[i].name, cases[i].text, cases[i].frontends,
					  cases[i].anchor, cases[i].msg, check_file);
}

/* See fl_scenario_refused.h. */
struct fl_scenario *fl_scenario_loads(const char *file, const char *text, unsigned frontends,
				      struct fl_diags *d)
{
	struct fl_scenario *sc = NULL;

	CU_ASSERT_EQUAL_FATAL(fl_scenario_load_string(file, text, frontends, &sc, d), 0);
	return sc;
}
