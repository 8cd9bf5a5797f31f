/* SPDX-License-Identifier: MIT */
/*
 * check_report.h - what `faultlun check` found for each scenario, and the
 * machine-readable reports written from it: JUnit XML (junit.c, the element
 * and attribute set of tests/integration/junit-10.xsd) and KTAP version 1
 * (ktap.c, the format of the kernel's Documentation/dev-tools/ktap.rst). The
 * KTAP primitives also serve `faultlun vm --ktap`, which writes its runs'
 * result.json verdicts the same way.
 */
#ifndef FL_CLI_CHECK_REPORT_H
#define FL_CLI_CHECK_REPORT_H

#include "fl_check.h"
#include "fl_faults.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* What one scenario's check gave. */
struct check_outcome {
	const char *path;
	char name[256];
	char sha256[65];
	int rc; /* 0 held, 1 failed, 2 could not run, 77 nothing applied */
	char error[256];
	char *diags; /* the loader's messages when the scenario does not load (malloc'd), or NULL */
	char *log;   /* what the run wrote to stderr (malloc'd, bounded), or NULL */
	time_t started;
	uint64_t seed;
	bool have_counters;
	struct fl_engine_counters counters;
	struct fl_verdict *v;
	int nv;
	struct fl_step_obs *steps;
	size_t nsteps;
	const struct fl_check *check;
	double ms;
};

/*
 * Seconds a verdict took: its step's elapsed time when the expectation is
 * about one step that ran, else the scenario's whole check.
 */
double cli_verdict_seconds(const struct check_outcome *o, const struct fl_verdict *v);

/* Writes the JUnit XML report of n outcomes to file; 0 or -errno. */
int cli_junit_write(const char *file, const struct check_outcome *o, size_t n);
/* Writes the KTAP report of n outcomes to file; 0 or -errno. */
int cli_ktap_check_write(const char *file, const struct check_outcome *o, size_t n);

/* One run of `faultlun vm`, for its KTAP report. */
struct cli_vm_run {
	char name[320]; /* "STEM (PATH)", the kernel's label first under --kernels; "": the result's
			 */
	char result[4608]; /* RUN_DIR/result.json (may be missing: rc says why) */
	int rc;		   /* what fl_vm_run returned */
};
/* Writes the KTAP report of n VM runs (their result.json verdicts) to file; 0 or -errno. */
int cli_ktap_vm_write(const char *file, const struct cli_vm_run *runs, size_t n);

/* KTAP lines at a nesting depth (4 spaces a level). */
void cli_ktap_header(FILE *f, int depth, size_t n);
void cli_ktap_result(FILE *f, int depth, bool ok, size_t num, const char *name,
		     const char *skip_reason);
void cli_ktap_diag(FILE *f, int depth, const char *label, const char *text);

#endif
