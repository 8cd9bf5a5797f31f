/* SPDX-License-Identifier: MIT */
/*
 * vm_internal.h - declarations shared by the VM lab's host-side files
 * (vm_run.c, vm_check.c, vm_kernel.c).
 */
#ifndef FL_VM_INTERNAL_H
#define FL_VM_INTERNAL_H

#include "fl_check.h"
#include "fl_scenario.h"

#include <jansson.h>
#include <stdbool.h>

/* What vm_run.c knows about a finished (or killed) guest. */
struct vm_run_info {
	const char *scenario, *path, *accel, *guest, *run_dir, *results;
	bool timed_out;
	int qemu_status, timeout_s;
	double wall_guest_build_s, wall_qemu_s, wall_total_s, t_start;
	int batch_job, batch_jobs; /* the job's index in its boot's batch; 0 jobs: no batch */
};

double vm_now(void);
int vm_mkdirs(const char *path);

/* The LUN under test: step 0's LUN, else the scenario's first LUN. */
int vm_test_lun(const struct fl_scenario *sc);
/* The healthy LUN: the last LUN that no step names and is not under test; -1: none. */
int vm_healthy_lun(const struct fl_scenario *sc);

/*
 * After one boot of a batch of nj jobs, in order: which are judged now
 * (judge[k] true) and which wait for the next boot. done[k]: the job ended
 * ("done" in its folder); began[k]: the guest began it (its kmsg.txt). A
 * job the guest never began waits, once an earlier job of this boot was
 * judged: it is judged now only when it is the first one left, so that a
 * guest that breaks before its first job cannot loop for ever (that job is
 * judged as it is, ERROR). Returns how many are judged now (at least 1
 * when nj > 0).
 */
size_t vm_batch_settle(const bool *done, const bool *began, size_t nj, bool *judge);

struct fl_vm_opts;
/* TCG's host threads for a boot with opts: "single" or "multi" (vm_run.c). */
const char *vm_tcg_thread(const struct fl_vm_opts *opts);

/*
 * The upstream version ("6.1.192") of the kernel whose log starts with
 * `banner` ("Linux version 6.1.0-57-amd64 ... Debian 6.1.192-3 ..."): the
 * distribution's own version when the line gives one, else the release's
 * first numbers. 0, or -1 when the line says no version (vm_kernel.c).
 */
int vm_kernel_version(const char *banner, char *out, size_t cap);
/*
 * The known fixes a kernel of `version` lacks (docs/vm-lab.md "Which
 * kernels"): up to max descriptions into what; returns how many it lacks.
 */
size_t vm_kernel_missing_fixes(const char *version, const char **what, size_t max);
/*
 * Sets result's "kernel_version" from the guest's kernel log (kmsg: an
 * array of {t, text}) and, for a kernel that lacks a known fix,
 * "kernel_missing_fixes" and a warning on stderr naming the scenario.
 */
void vm_kernel_record(json_t *kmsg, json_t *result, const char *scenario);

/* Reads the guest's outputs, judges sc's expectations, writes result.json. */
int vm_check_run(const struct fl_scenario *sc, const struct vm_run_info *info);

#endif
