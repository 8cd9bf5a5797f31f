/* SPDX-License-Identifier: MIT */
/*
 * vm_internal.h - declarations shared by the VM lab's host-side files
 * (vm_run.c, vm_check.c, vm_report.c).
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

/* Reads the guest's outputs, judges sc's expectations, writes result.json. */
int vm_check_run(const struct fl_scenario *sc, const struct vm_run_info *info);

#endif
