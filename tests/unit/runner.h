/* SPDX-License-Identifier: MIT */
/*
 * runner.h - the CUnit runner shared by every unit-test executable.
 *
 * A test file defines `CU_SuiteInfo fl_suites[]` (terminated by
 * CU_SUITE_INFO_NULL) and links runner.c, which provides main():
 *   unit_X            runs every test, exit 1 if any failed
 *   unit_X NAME...    runs only the tests (or suites) called NAME
 *   unit_X --list     prints SUITE.TEST for each test
 */
#ifndef FL_UNIT_RUNNER_H
#define FL_UNIT_RUNNER_H

#include <CUnit/CUnit.h>

extern CU_SuiteInfo fl_suites[];

#endif
