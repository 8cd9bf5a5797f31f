/* SPDX-License-Identifier: MIT */
/*
 * stack.c - what every front end opens under itself: the scenario's engine
 * (its LUNs and their stores, its rules, its trace file or pipe) and, when
 * asked, the control socket, in that order, and closed in the reverse one.
 * `faultlun serve`, `faultlun check`'s in-process target and the TCMU
 * handler all go through fl_stack_open / fl_stack_close (fl_faults.h), so
 * the three build the same thing the same way; each says what went wrong
 * in its own words, from the step that failed.
 */
#include "fl_faults.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

/* Builds the engine, lets the front end look at it, then opens the control socket. */
int fl_stack_open(const struct fl_scenario *sc, const struct fl_stack_opts *o, struct fl_stack *st)
{
	int rc;

	assert(sc && o && st);
	memset(st, 0, sizeof(*st));
	st->failed = FL_STACK_ENGINE;
	rc = fl_engine_create(sc, &o->engine, &st->engine);
	if (rc)
		goto fail;
	st->failed = FL_STACK_ACCEPT;
	if (o->accept && (rc = o->accept(st->engine, o->accept_arg)))
		goto fail;
	st->failed = FL_STACK_CTL;
	if (o->ctl_path && (rc = fl_ctl_start(st->engine, o->ctl_path, &st->ctl)))
		goto fail;
	st->failed = FL_STACK_OK;
	return 0;
fail:
	fl_stack_close(st);
	return rc < 0 ? rc : -EINVAL;
}

/* The control socket first (its clients reach the engine), then the engine. */
void fl_stack_close(struct fl_stack *st)
{
	if (st->ctl)
		fl_ctl_stop(st->ctl);
	st->ctl = NULL;
	if (st->engine)
		fl_engine_destroy(st->engine);
	st->engine = NULL;
}
