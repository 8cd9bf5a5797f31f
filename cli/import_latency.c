/* SPDX-License-Identifier: MIT */
/*
 * import_latency.c - how long the captured target took to answer, per
 * command class, as a delay rule of the scenario (docs/import.md, "What the
 * scenario reproduces"). Each answered command of the imported target is
 * timed from its command PDU to its SCSI Response (both as the capture saw
 * them); a uniform sample of at most IMP_MAX_LAT times a class is kept
 * (reservoir sampling with a fixed seed: the same capture gives the same
 * scenario), so memory stays bounded however long the capture is.
 *
 * A class gets a rule when at least IMP_LAT_MIN answers were timed and their
 * median is 1 ms or more: below that, the capture point's own delays and
 * faultlun's service time are of the same order as what would be added. The
 * rule delays with a lognormal of the sample's median and 99th percentile
 * (a fixed delay when they are equal), and comes after every other rule: a
 * command another rule answers is not delayed as well.
 */
#include "import_internal.h"
#include "fl_rand.h"
#include "fl_scenario.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define IMP_LAT_MIN 10		/* answers a class needs before it gets a rule */
#define IMP_LAT_FLOOR_MS 1.0	/* a median below this adds no rule */
#define IMP_LAT_CEIL_MS 3600000 /* an answer later than an hour is not timed */

/* The classes whose answers are timed: the ones that move data. */
static const enum fl_cmd_class timed[] = {FL_CLASS_READ, FL_CLASS_WRITE, FL_CLASS_FLUSH,
					  FL_CLASS_UNMAP};

/* The reservoir's draws (splitmix64 from 0: the same capture samples the same). */
static uint64_t lat_draw(struct fl_import *im)
{
	return fl_splitmix64(&im->lat_rng);
}

void imp_lat_add(struct fl_import *im, enum fl_cmd_class cls, double ms, uint64_t frame)
{
	struct imp_lat *l;
	bool wanted = false;

	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++)
		wanted |= timed[i] == cls;
	if (!wanted || !(ms >= 0) || ms > IMP_LAT_CEIL_MS)
		return;
	l = &im->lat[cls];
	if (!l->ms && !(l->ms = malloc(IMP_MAX_LAT * sizeof(*l->ms))))
		return;
	if (!l->seen++)
		l->frame = frame;
	if (ms > l->max_ms)
		l->max_ms = ms;
	if (l->n < IMP_MAX_LAT) {
		l->ms[l->n++] = ms;
	} else {
		uint64_t j = lat_draw(im) % l->seen;

		if (j < IMP_MAX_LAT)
			l->ms[j] = ms;
	}
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The value below which a fraction q of the sorted v[0..n) lies (nearest rank). */
static double quantile(const double *v, unsigned n, double q)
{
	unsigned i = (unsigned)(q * n);

	return v[i < n ? i : n - 1];
}

/* Milliseconds rounded to the microsecond, as the scenario writes them. */
static double ms3(double ms)
{
	return (double)(int64_t)(ms * 1000 + 0.5) / 1000;
}

unsigned imp_lat_rules(struct fl_import *im, json_t *rules, json_t *refs, unsigned room)
{
	unsigned made = 0;
	char line[400], id[32];

	for (size_t i = 0; i < sizeof(timed) / sizeof(timed[0]); i++) {
		struct imp_lat *l = &im->lat[timed[i]];
		const char *cls = sc_class_names[timed[i]];
		double med, p99;
		json_t *d;

		if (!l->seen)
			continue;
		qsort(l->ms, l->n, sizeof(*l->ms), dcmp);
		med = ms3(quantile(l->ms, l->n, 0.5));
		p99 = ms3(quantile(l->ms, l->n, 0.99));
		snprintf(id, sizeof(id), "latency-%s", cls);
		snprintf(line, sizeof(line),
			 "%s: %" PRIu64 " %s answer(s) timed from frame %" PRIu64
			 ": median %.3f ms, 99th percentile %.3f ms, longest %.3f ms",
			 id, l->seen, cls, l->frame, med, p99, l->max_ms);
		if (l->seen < IMP_LAT_MIN || med < IMP_LAT_FLOOR_MS || made >= room) {
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "; no rule (%s)",
				 l->seen < IMP_LAT_MIN	  ? "fewer than 10 answers"
				 : med < IMP_LAT_FLOOR_MS ? "a median under 1 ms"
							  : "no room left for rules");
			json_array_append_new(refs, json_string(line));
			continue;
		}
		if (p99 > med)
			d = json_pack("{s:s,s:f,s:f}", "dist", "lognormal", "median", med, "p99",
				      p99);
		else
			d = json_real(med);
		json_array_append_new(rules, json_pack("{s:s,s:{s:s},s:{s:o}}", "id", id, "match",
						       "class", cls, "action", "delay_ms", d));
		json_array_append_new(refs, json_string(line));
		made++;
	}
	return made;
}

void imp_lat_free(struct fl_import *im)
{
	for (int c = 0; c < FL_CLASS_NR; c++)
		free(im->lat[c].ms);
}
