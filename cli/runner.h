/* SPDX-License-Identifier: MIT */
/*
 * runner.h - the libiscsi runner of a scenario's check (runner.c): carries
 * the typed workload out through iSCSI sessions of its own (the URL's, and
 * one per target port a step names) and records what an initiator observes
 * of each step, for scenario/judge.c.
 *
 * One run at a time per process (the runner keeps its sessions in statics).
 */
#ifndef FL_RUNNER_H
#define FL_RUNNER_H

#include "fl_check.h"

#include <stdint.h>
#include <stdio.h>

/* Most target ports a runner addresses ("port" of a step). */
#define FL_RUNNER_MAX_PORTS 16

/* One target port of the scenario, for steps that name it. */
struct fl_runner_port {
	const char *name;   /* its "id" */
	const char *portal; /* "ADDR:PORT" ("[v6]:PORT") it is served on; NULL: unknown */
	uint16_t group;	    /* its target port group: its path group in the multipath model */
};

struct fl_runner_opts {
	const char *url; /* iscsi://ADDR:PORT/IQN/LUN: the target and the LUN under test */
	/*
	 * The scenario's ports, in its order (a step's "port" is an index here):
	 * a step with a port goes through a session to that portal (the URL with
	 * its portal replaced), opened on first use.
	 */
	const struct fl_runner_port *ports;
	size_t nports;
	const char *initiator;	  /* InitiatorName; NULL: a default */
	const char *ctl_socket;	  /* the target's control socket; NULL: ctl steps cannot run */
	const char *faultlun_bin; /* the faultlun binary ctl steps run; NULL: "faultlun" on PATH */
	FILE *log;		  /* one line per step; NULL: none */
	/* the scenario file loaded through ctl_socket before the workload ("arm": "workload") */
	const char *arm_scenario;
};

/*
 * Runs check's workload: 0 with *steps (check->nsteps observations, the
 * caller frees) and *test_lun (the URL's LUN), -1 when it could not log
 * in, -2 when it could not arm the scenario (a message on stderr).
 */
int fl_runner_run(const struct fl_check *check, const struct fl_runner_opts *o,
		  struct fl_step_obs **steps, int *test_lun);

/* Reads a trace file (JSON lines) into *lines (each malloc'd); returns how many. */
size_t fl_runner_read_trace(const char *path, char ***lines);

#endif
