/* SPDX-License-Identifier: MIT */
/*
 * fl_test.h - the assertion macro of the test programs that are not CUnit
 * tests (tests/tcmu/, tests/integration/, tests/robustness/): a failed check
 * is printed with where it is and the program carries on, counting failures
 * in fl_failures; the program exits 1 when any check failed (fl_test_exit).
 * A missing prerequisite is exit 77 (ctest's SKIP_RETURN_CODE), never a pass.
 */
#ifndef FL_TEST_H
#define FL_TEST_H

#include <stdio.h>

/* Exit status of a test program whose prerequisite is missing. */
#define FL_TEST_SKIP 77

/* Failed checks so far (one per program: the header is included by one .c). */
static int fl_failures __attribute__((unused));

/* Checks cond; on failure prints FILE:LINE, the function, the condition and a printf message. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fl_failures++;                                                             \
			fprintf(stderr, "  FAIL %s:%d: %s: %s: ", __FILE__, __LINE__, __func__,    \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* The program's exit status: 1 when a check failed (after saying how many), else 0. */
static inline int fl_test_exit(const char *what)
{
	if (fl_failures)
		fprintf(stderr, "%s: %d failure(s)\n", what, fl_failures);
	return fl_failures ? 1 : 0;
}

#endif
