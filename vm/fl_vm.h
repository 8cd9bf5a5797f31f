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
 * scenario/ (fl_scenario_load_file), validated for the path's front end. The report of a result is
 * report/'s (fl_report.h).
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

#include "fl_report.h" /* the report of a result, and the verdict codes */

struct fl_vm_opts {
	const char *path;	/* "iscsi", "tcmu" or "lio" (plumbing only) */
	const char *cache_dir;	/* NULL: $XDG_CACHE_HOME/faultlun or ~/.cache/faultlun */
	const char *accel;	/* "auto" (KVM if it boots, else TCG), "kvm", "tcg" */
	int guest_timeout_s;	/* 0: 300 */
	int memory_mb;		/* 0: 2048 */
	int cpus;		/* the guest's vCPUs; 0: 2 */
	const char *tcg_thread; /* TCG's host threads: "single" or "multi"; NULL:
				  $FAULTLUN_TCG_THREAD, else "multi" */
	bool quiet;		/* no timeline on stdout */
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

/* The cache directory the lab uses (static storage). */
const char *fl_vm_cache_dir(const char *override);

#endif
