// SPDX-License-Identifier: MIT
/*
 * test_batch.c - the batch runner's choice after a boot (vm/vm_run.c
 * vm_batch_settle): which jobs are judged now and which boot again.
 *
 * `faultlun vm` runs every scenario of one kernel and path in one boot. A
 * job that stops the guest (a kernel that hangs or panics, a kernel state
 * not clean after the job) ends the boot: the jobs the guest never began are
 * run in a new boot, and only those; a guest that breaks before its first
 * job still has that job judged (as ERROR), so the loop always moves on.
 */
#include "runner.h"
#include "vm_internal.h"

#include <stdbool.h>
#include <stddef.h>

/* Runs vm_batch_settle on the flags written as strings ('1'/'0') and returns the judge string. */
static const char *settle(const char *done, const char *began, size_t *judged)
{
	static char out[16];
	bool d[16] = {false}, b[16] = {false}, j[16] = {false};
	size_t n = 0;

	for (; done[n] && n < sizeof(d) / sizeof(d[0]); n++) {
		d[n] = done[n] == '1';
		b[n] = began[n] == '1';
	}
	*judged = vm_batch_settle(d, b, n, j);
	for (size_t k = 0; k < n; k++)
		out[k] = j[k] ? '1' : '0';
	out[n] = 0;
	return out;
}

/* settle(done, began) judges the jobs `judged` and says n. */
static void expect_settle(const char *done, const char *began, const char *judged, size_t n)
{
	size_t got;

	CU_ASSERT_STRING_EQUAL(settle(done, began, &got), judged);
	CU_ASSERT_EQUAL(got, n);
}

/* Every job ended: all are judged, none boots again. */
static void test_all_done(void)
{
	expect_settle("1111", "1111", "1111", 4);
}

/* Job 2 of 4 broke the guest (began, never done): 0-2 are judged, 3 boots again. */
static void test_broken_job_reboots_the_rest(void)
{
	expect_settle("1100", "1110", "1110", 3);
}

/* The guest broke before the first job: job 0 is judged (ERROR), the rest wait. */
static void test_broken_before_first_job(void)
{
	expect_settle("000", "000", "100", 1);
}

/* The guest stopped at the end of job 0 (done), before job 1 began: 1 and 2 wait. */
static void test_stopped_between_jobs(void)
{
	expect_settle("100", "100", "100", 1);
}

/* A timed-out boot: job 1 began and never ended, it is judged with 0; 2 waits. */
static void test_timed_out_job(void)
{
	expect_settle("100", "110", "110", 2);
}

/* The loop ends: re-settling what waits always judges at least one job. */
static void test_always_progresses(void)
{
	const char *waiting = "00000";
	size_t n, left = 5;

	for (int boot = 0; boot < 5 && left; boot++) {
		settle(waiting + (5 - left), waiting + (5 - left), &n);
		CU_ASSERT_TRUE_FATAL(n >= 1);
		left -= n;
	}
	CU_ASSERT_EQUAL(left, 0);
}

FL_TESTS(batch_tests,
	 {"all_done", test_all_done},
	 {"broken_job_reboots_the_rest", test_broken_job_reboots_the_rest},
	 {"broken_before_first_job", test_broken_before_first_job},
	 {"stopped_between_jobs", test_stopped_between_jobs},
	 {"timed_out_job", test_timed_out_job},
	 {"always_progresses", test_always_progresses});

FL_SUITES(FL_SUITE("batch", NULL, NULL, batch_tests));
