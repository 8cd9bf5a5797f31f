/* SPDX-License-Identifier: MIT */
/*
 * fl_vm.h - public contract of faultlun's VM lab (docs/vm-lab.md).
 *
 * fl_vm_run() runs one scenario on one path inside a QEMU guest booted from
 * Debian's stock kernel: it assembles (or reuses) the guest in a cache,
 * writes the job into a results folder shared with the guest, boots, waits a
 * bounded time, then merges what the guest observed (kernel log, uevents,
 * sysfs, faultlun trace, workload steps, healthy-LUN stall) into one timeline,
 * has the scenario's expectations judged by the one checker of scenario/
 * (fl_check_judge) and writes result.json. The scenario is read only through
 * scenario/ (fl_scenario_load_file), validated for the path's front end. fl_vm_report_text() / fl_vm_report_html() render a result.
 *
 * Return values of fl_vm_run: FL_VM_PASS (every applicable expectation held,
 * at least one applied), FL_VM_FAIL (an expectation did not hold),
 * FL_VM_ERROR (a scenario the loader refuses, diagnostics printed; setup or
 * guest failure, message printed), FL_VM_SKIP (qemu or the kernel package
 * cannot be had, or no expectation applies in the VM lab).
 */
#ifndef FL_VM_H
#define FL_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { FL_VM_PASS = 0, FL_VM_FAIL = 1, FL_VM_ERROR = 2, FL_VM_SKIP = 77 };

struct fl_vm_opts {
	const char *path;      /* "iscsi", "tcmu" or "lio" (plumbing only) */
	const char *cache_dir; /* NULL: $XDG_CACHE_HOME/faultlun or ~/.cache/faultlun */
	const char *accel;     /* "auto" (KVM if it boots, else TCG), "kvm", "tcg" */
	int guest_timeout_s;   /* 0: 300 */
	int memory_mb;	       /* 0: 2048 */
	bool quiet;	       /* no timeline on stdout */
	/* NULL: Debian 12's stock kernel; "debian:SUITE"; or a kernel image's path */
	const char *kernel;
	const char *modules; /* the image's module tree (build tree or /lib/modules/VER) */
};

/* Runs scenario on opts->path; results go to run_dir (created). */
int fl_vm_run(const char *scenario, const struct fl_vm_opts *opts, const char *run_dir);

/*
 * Runs the scenarios files[0..n) on opts->path in one boot of the guest (a
 * batch): each is a job of its own in the guest (a fresh target and fresh
 * sessions or tcm_loop host, torn down after it, the kernel's SCSI, iSCSI,
 * dm and LIO state checked clean before the next) and gets run_dirs[i] as
 * fl_vm_run would write it; share is the boot's results share (created,
 * emptied first). A job that breaks its boot (stuck, or leaving state behind)
 * is checked as it is and the jobs after it boot again. rcs[i] gets each
 * run's status as fl_vm_run returns it; returns the worst of them, skips
 * aside.
 */
int fl_vm_run_batch(const char *const *files, size_t n, const struct fl_vm_opts *opts,
		    const char *const *run_dirs, const char *share, int *rcs);

/*
 * Checks a finished run again without booting: the observations already in
 * run_dir/guest against scenario's (possibly edited) expectations; rewrites
 * run_dir/result.json. Returns as fl_vm_run.
 */
int fl_vm_recheck(const char *scenario, const char *path, const char *run_dir);

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
int fl_vm_matrix_write(const struct fl_vm_matrix_cell *cells, size_t n,
		       const char *const *kernels, size_t nkernels, const char *out_dir,
		       FILE *text);

/*
 * The matrix report of runs already done (`faultlun report --matrix`): each
 * spec is LABEL=RUN_DIR (or LABEL=RUN_DIR/result.json); the kernels are the
 * labels in order of first appearance, a row is the result's scenario (file
 * stem) and path. A run without report.html gets one first. Writes as
 * fl_vm_matrix_write; returns the worst verdict (FL_VM_PASS, FL_VM_FAIL,
 * FL_VM_ERROR: a spec or result that cannot be read, message printed).
 */
int fl_vm_matrix_from_runs(const char *const *specs, size_t n, const char *out_dir, FILE *text);

/* The cache directory the lab uses (static storage). */
const char *fl_vm_cache_dir(const char *override);

#endif
