// SPDX-License-Identifier: MIT
/*
 * check_report.c - what the report writers of `faultlun check` (junit.c,
 * ktap.c) share: the words of the expectation kinds and the time a verdict
 * took, taken from the outcome's step observations.
 */
#include "check_report.h"

#include <math.h>

/* The word of an expectation kind ("errno", "sense", ... as result.json has them). */
const char *cli_expect_kind_word(enum fl_expect_kind k)
{
	switch (k) {
	case FL_EX_ERRNO:
		return "errno";
	case FL_EX_STATUS:
		return "status";
	case FL_EX_SENSE:
		return "sense";
	case FL_EX_WITHIN:
		return "within_ms";
	case FL_EX_MIN_MS:
		return "min_ms";
	case FL_EX_RAN:
		return "ran";
	case FL_EX_KERNEL_LOG:
		return "kernel_log";
	case FL_EX_EH:
		return "eh";
	case FL_EX_DEVICE_STATE:
		return "device_state";
	case FL_EX_STALL:
		return "max_stall_ms";
	case FL_EX_TRACE:
		return "trace";
	case FL_EX_PATH:
		return "path";
	case FL_EX_UA:
		return "ua";
	case FL_EX_TMF_RESPONSE:
		return "tmf_response";
	default: /* a kind newer than this table */
		return "expectation";
	}
}

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
