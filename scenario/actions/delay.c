/* SPDX-License-Identifier: MIT */
/*
 * delay.c - the action "delay_ms": hold a command for a fixed or random time,
 * then carry on (docs/faults/delay.md). It joins another verb (carried out
 * after the delay) or stands alone (the command then executes normally). The
 * engine draws the time (faults/engine.c delay_draw); an ABORT TASK or a
 * reset ends a delayed command early, as aborted.
 */
#include "../scenario_internal.h"

#include <math.h>
#include <string.h>

static const char *const no_keys[] = {NULL};

static const struct fl_action_param delay_params[] = {
    {"delay_ms", FL_PARAM_DELAY, "ms", 0, 86400000.0, NULL, NULL,
     "milliseconds, or {\"dist\": uniform|lognormal|exponential, ...}", 0},
};

/* Parses a delay: milliseconds, or a distribution object. */
static void delay_parse_value(struct pctx *c, const char *path, json_t *v, struct sc_delay *d)
{
	static const char *const keys[] = {"dist", "min", "max", "median", "p99", "mean", NULL};
	char sub[512], q[80];
	json_t *dist;
	const char *name;

	if (json_is_number(v)) {
		d->dist = DIST_FIXED;
		pdouble(c, path, v, 0, 86400000.0, &d->a);
		return;
	}
	if (!json_is_object(v)) {
		perr(c, path, false, "\"delay_ms\": expected milliseconds or {dist, ...}, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "delay_ms", keys);
	dist = json_object_get(v, "dist");
	name = json_is_string(dist) ? json_string_value(dist) : "";
#define NUMK(k, out)                                                                               \
	(json_object_get(v, k)                                                                     \
	     ? pdouble(c, SUBP(sub, path, k), json_object_get(v, k), 0, 86400000.0, out)           \
	     : (perr(c, path, false, "distribution \"%s\" needs \"%s\"", name, k), false))
	if (!strcmp(name, "uniform")) {
		d->dist = DIST_UNIFORM;
		if (NUMK("min", &d->a) && NUMK("max", &d->b) && d->b < d->a)
			perr(c, SUBP(sub, path, "max"), false, "\"max\" is below \"min\"");
	} else if (!strcmp(name, "lognormal")) {
		double med = 0, p99 = 0;

		d->dist = DIST_LOGNORMAL;
		if (NUMK("median", &med) && NUMK("p99", &p99)) {
			if (med <= 0 || p99 < med) {
				perr(c, path, false, "lognormal needs 0 < median <= p99, got %s",
				     pquote(v, q, sizeof(q)));
			} else {
				/* 2.3263: the standard normal's 99th percentile */
				d->a = log(med);
				d->b = (log(p99) - d->a) / 2.3263478740;
			}
		}
	} else if (!strcmp(name, "exponential")) {
		d->dist = DIST_EXPONENTIAL;
		NUMK("mean", &d->a);
	} else {
		perr(c, dist ? SUBP(sub, path, "dist") : path, false,
		     "unknown delay distribution %s (expected \"uniform\", \"lognormal\" or "
		     "\"exponential\")",
		     pquote(dist, q, sizeof(q)));
	}
#undef NUMK
}

/* Parses "delay_ms" of the action object. */
static void delay_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	char sub[512];
	json_t *e = json_object_get(v, "delay_ms");

	if (!e)
		return;
	a->has_delay = true;
	delay_parse_value(c, SUBP(sub, path, "delay_ms"), e, &a->delay);
}

const struct fl_action fl_action_delay = {
    .name = "delay_ms",
    .verb = VERB_DELAY,
    .trace_action = "delay",
    .doc = "delay",
    .keys = no_keys,
    .params = delay_params,
    .nparams = sizeof(delay_params) / sizeof(delay_params[0]),
    .phase = FL_PHASE_NONE,
    .observed = FL_OBS_ANSWERS,
    .observed_as = "answered late",
    .frontends = FL_FE_ALL,
    .joins = true,
    .parse = delay_parse,
};
