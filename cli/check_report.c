// SPDX-License-Identifier: MIT
/*
 * check_report.c - what the report writers of `faultlun check` (junit.c,
 * ktap.c) share: the time a verdict took, taken from the outcome's step
 * observations. The words of the expectation kinds are scenario/'s
 * (fl_expect_kind_word), as result.json has them.
 */
#include "check_report.h"

#include <math.h>

/* Seconds a verdict took: its step's time when it is about one step that ran, else the check's. */
double cli_verdict_seconds(const struct check_outcome *o, const struct fl_verdict *v)
{
	double ms = o->ms;

	if (o->check && v->expect < o->check->nexpects) {
		int step = o->check->expects[v->expect].step;

		if (step >= 0 && (size_t)step < o->nsteps && o->steps &&
		    o->steps[step].end != FL_END_NOT_RUN &&
		    o->steps[step].end != FL_END_UNSUPPORTED)
			ms = o->steps[step].elapsed_ms;
	}
	return isfinite(ms) && ms > 0 ? ms / 1e3 : 0;
}
