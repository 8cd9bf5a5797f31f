/* SPDX-License-Identifier: MIT */
/*
 * runner.h - the CUnit runner shared by every unit-test executable.
 *
 * A test file defines `CU_SuiteInfo fl_suites[]` (terminated by
 * CU_SUITE_INFO_NULL), usually through the FL_TESTS / FL_SUITES macros
 * below, and links runner.c, which provides main():
 *   unit_X            runs every test, exit 1 if any failed
 *   unit_X NAME...    runs only the tests (or suites) called NAME
 *   unit_X --list     prints SUITE.TEST for each test
 */
#ifndef FL_UNIT_RUNNER_H
#define FL_UNIT_RUNNER_H

#include <CUnit/CUnit.h>
#include <stddef.h>
#include <stdint.h>

extern CU_SuiteInfo fl_suites[];

/* One test table entry, the test named after its function. */
#define FL_TEST(fn)                                                                                \
	{                                                                                          \
#fn, fn                                                                            \
	}

/* A static test table VAR of FL_TEST (or {"name", fn}) entries, terminated. */
#define FL_TESTS(var, ...) static CU_TestInfo var[] = {__VA_ARGS__, CU_TEST_INFO_NULL}

/* One suite: its name, set-up and tear-down (NULL for none) and test table. */
#define FL_SUITE(name, init, clean, tests)                                                         \
	{                                                                                          \
		name, init, clean, NULL, NULL, tests                                               \
	}

/* The file's fl_suites of FL_SUITE entries, terminated. */
#define FL_SUITES(...) CU_SuiteInfo fl_suites[] = {__VA_ARGS__, CU_SUITE_INFO_NULL}

/* Numbers a callback hands a test, in order: the first FL_COLLECT_MAX kept, all counted. */
#define FL_COLLECT_MAX 4096
struct fl_collect {
	uint64_t v[FL_COLLECT_MAX];
	size_t n;
};

static inline void fl_collect_add(struct fl_collect *c, uint64_t x)
{
	if (c->n < FL_COLLECT_MAX)
		c->v[c->n] = x;
	c->n++;
}

#endif
