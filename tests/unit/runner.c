/* SPDX-License-Identifier: MIT */
/*
 * runner.c - main() for the CUnit unit tests: run all, or tests by name.
 * A run with no test selected (a misspelt name) fails rather than passing.
 */
#include "runner.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

/* True when `name` (TEST or SUITE or SUITE.TEST) selects test t of suite s. */
static int selected(const char *name, const CU_SuiteInfo *s, const CU_TestInfo *t)
{
	size_t sl = strlen(s->pName);

	if (strcmp(name, s->pName) == 0 || strcmp(name, t->pName) == 0)
		return 1;
	return strncmp(name, s->pName, sl) == 0 && name[sl] == '.' &&
	       strcmp(name + sl + 1, t->pName) == 0;
}

int main(int argc, char **argv)
{
	unsigned failed, ran = 0;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (CU_SuiteInfo *s = fl_suites; s->pName; s++)
			for (CU_TestInfo *t = s->pTests; t->pName; t++)
				printf("%s.%s\n", s->pName, t->pName);
		CU_cleanup_registry();
		return 0;
	}
	for (CU_SuiteInfo *s = fl_suites; s->pName; s++) {
		CU_pSuite suite = CU_add_suite(s->pName, s->pInitFunc, s->pCleanupFunc);

		if (!suite)
			return 2;
		for (CU_TestInfo *t = s->pTests; t->pName; t++) {
			int want = argc < 2;

			for (int i = 1; i < argc && !want; i++)
				want = selected(argv[i], s, t);
			if (!want)
				continue;
			if (!CU_add_test(suite, t->pName, t->pTestFunc))
				return 2;
			ran++;
		}
	}
	if (ran == 0) {
		fprintf(stderr, "no test matches the names given (try --list)\n");
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
