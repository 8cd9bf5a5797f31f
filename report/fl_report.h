/* SPDX-License-Identifier: MIT */
/*
 * fl_report.h - public contract of faultlun's report of VM-lab runs
 * (report/, docs/vm-lab.md "The report"): the text and the HTML page of one
 * result, and the kernel matrix of several. The report reads a result only
 * through its typed reader (fl_result.h).
 *
 * The verdict codes are the lab's (fl_vm.h): FL_VM_PASS (every applicable
 * expectation held), FL_VM_FAIL, FL_VM_ERROR (a result that cannot be read,
 * message printed), FL_VM_SKIP (no expectation applied).
 */
#ifndef FL_REPORT_H
#define FL_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { FL_VM_PASS = 0, FL_VM_FAIL = 1, FL_VM_ERROR = 2, FL_VM_SKIP = 77 };

/* Prints a result (result.json) as verdicts + timeline; returns its verdict. */
int fl_vm_report_text(const char *result_json, FILE *out, bool timeline);
/* Writes the HTML report of a result; returns 0 or -errno. */
int fl_vm_report_html(const char *result_json, const char *html_path);

/* One run of a kernel matrix: its kernel's label, scenario, path and result. */
struct fl_vm_matrix_cell {
	const char *kernel;	 /* the label as given to --kernels */
	const char *scenario;	 /* the scenario's file stem */
	const char *path;	 /* "iscsi", "tcmu", "lio" */
	const char *result_json; /* RUN_DIR/result.json (may be missing: rc says why) */
	int rc;			 /* what fl_vm_run returned */
};

/*
 * Writes out_dir/matrix.json and out_dir/matrix.html: scenario x path rows,
 * one column per kernel (in the order of kernels), and where kernels did
 * different things the differences side by side; prints a summary to text
 * (may be NULL). Returns 0 or -errno.
 */
int fl_vm_matrix_write(const struct fl_vm_matrix_cell *cells, size_t n, const char *const *kernels,
		       size_t nkernels, const char *out_dir, FILE *text);

/*
 * The matrix report of runs already done (`faultlun report --matrix`): each
 * spec is LABEL=RUN_DIR (or LABEL=RUN_DIR/result.json); the kernels are the
 * labels in order of first appearance, a row is the result's scenario (file
 * stem) and path. A run without report.html gets one first. Writes as
 * fl_vm_matrix_write; returns the worst verdict (FL_VM_PASS, FL_VM_FAIL,
 * FL_VM_ERROR: a spec or result that cannot be read, message printed).
 */
int fl_vm_matrix_from_runs(const char *const *specs, size_t n, const char *out_dir, FILE *text);

#endif
