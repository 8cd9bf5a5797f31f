/* SPDX-License-Identifier: MIT */
/*
 * faults_internal.h - private declarations shared by the files of faults/.
 *
 * Layering inside the fault engine:
 *   lba_index.c    per-class interval index of rules (stabbing query)
 *   engine_program.c   a scenario compiled for an engine (rule index)
 *   engine.c       fl_engine_submit, matching, actions, state machine, PRNG
 *   engine_life.c  engine life cycle, replace, release, counters
 *   engine_tmf.c   task management, connection events, transport verdicts
 *   timer.c        the timer thread (CLOCK_MONOTONIC heap + condition variable)
 *   trace.c        JSON-lines trace and its subscribers
 *   ctl.c          the control socket
 *
 * The engine runs the typed scenario model of scenario/ (fl_scenario.h); it
 * takes a reference, so a caller may free its own as soon as it is handed over.
 */
#ifndef FL_FAULTS_INTERNAL_H
#define FL_FAULTS_INTERNAL_H

#include "fl_faults.h"
#include "fl_timer.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

/* ---- LBA index (lba_index.c) ---- */

/* An interval [lo, hi] tagged with a rule number. */
struct lba_ival {
	uint64_t lo, hi;
	uint32_t rule;
};
/* A static interval tree over a sorted array (augmented with subtree max). */
struct lba_tree {
	struct lba_ival *v;
	uint64_t *maxhi;
	size_t n;
};
/* Builds from n intervals (copied); returns 0 or -ENOMEM. */
int lba_tree_build(struct lba_tree *t, const struct lba_ival *v, size_t n);
void lba_tree_free(struct lba_tree *t);
/* Calls fn(rule, ctx) for every interval overlapping [lo, hi]. */
void lba_tree_query(const struct lba_tree *t, uint64_t lo, uint64_t hi,
		    void (*fn)(uint32_t rule, void *ctx), void *ctx);

/* ---- timers (timer.c) ---- */

struct timers;
int timers_start(struct timers **out);
/* Stops and joins the thread (after timers_drain: queued nodes never fire). */
void timers_stop(struct timers *t);
void timers_add(struct timers *t, struct fl_timer *n, uint64_t due_ns);
/* Returns true when n was queued and is now removed (it will not fire). */
bool timers_cancel(struct timers *t, struct fl_timer *n);
/* Removes and returns every queued node (used at shutdown). */
size_t timers_drain(struct timers *t, struct fl_timer ***out);
/* A front end's loop takes the heap over / hands it back (see timer.c). */
int timers_adopt(struct timers *t, void (*kick)(void *arg), void *arg);
int timers_release(struct timers *t);
uint64_t timers_run_due(struct timers *t, unsigned *fired);

/* ---- PRNG: fl_rand.h's xoshiro256**, one stream per rule ---- */
#include "fl_rand.h"

#endif
