/* SPDX-License-Identifier: MIT */
/*
 * report_bounds.c - the bounds a result file must keep before the report
 * reads it. Part of result.json comes from the guest, whose kernel is the
 * one under test: it is hostile input. vm_report_load() refuses a file that
 * breaks a bound, with a message naming the JSON path and the bound, so that
 * no number, string or count past these bounds reaches the model, the text
 * report or the drawings (docs/robustness.md, "report on a hostile result").
 *
 *   file size          <= RP_MAX_FILE_BYTES
 *   nesting depth      <= RP_MAX_DEPTH
 *   any string         <= RP_MAX_STRING bytes
 *   any array/object   <= RP_MAX_ITEMS members
 *   any number         finite, |x| <= RP_MAX_NUMBER
 *   times ("t", "t0", "t1", wall and guest-phase seconds) in [0, RP_MAX_TIME_S]
 *   durations ("ms", "elapsed_ms") in [0, RP_MAX_TIME_S * 1000]
 *   timeline entries   objects with a string "src" and "text" and a time "t"
 */
#include "report_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Is key the name of a time in seconds? */
static bool key_is_time(const char *key)
{
	static const char *const names[] = {
	    "t",      "t0",	"t1",	   "agent_up",	       "workload_start", "workload_end",
	    "finish", "qemu_s", "total_s", "guest_assembly_s",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(key, names[i]))
			return true;
	return false;
}

/* Is key the name of a duration in milliseconds? */
static bool key_is_ms(const char *key)
{
	return !strcmp(key, "ms") || !strcmp(key, "elapsed_ms");
}

/* Checks one value (named key in its parent, or NULL) and below; 0 or -1 with why. */
static int check_value(json_t *v, const char *key, int depth, char *why, size_t len)
{
	const char *k;
	json_t *c;
	size_t i;

	if (depth > RP_MAX_DEPTH) {
		snprintf(why, len, "nested deeper than %d levels", RP_MAX_DEPTH);
		return -1;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (json_object_size(v) > RP_MAX_ITEMS)
			goto too_many;
		json_object_foreach(v, k, c)
		{
			if (strlen(k) > RP_MAX_STRING) {
				snprintf(why, len, "a key longer than %d bytes", RP_MAX_STRING);
				return -1;
			}
			if (check_value(c, k, depth + 1, why, len) < 0)
				return -1;
		}
		return 0;
	case JSON_ARRAY:
		if (json_array_size(v) > RP_MAX_ITEMS)
			goto too_many;
		json_array_foreach(v, i,
				   c) if (check_value(c, NULL, depth + 1, why, len) < 0) return -1;
		return 0;
	case JSON_STRING:
		if (json_string_length(v) > RP_MAX_STRING) {
			snprintf(why, len, "\"%s\": a string longer than %d bytes", key ? key : "",
				 RP_MAX_STRING);
			return -1;
		}
		return 0;
	case JSON_INTEGER:
	case JSON_REAL: {
		double x = json_number_value(v);
		if (key && key_is_time(key) && !(x >= 0 && x <= RP_MAX_TIME_S)) {
			snprintf(why, len, "\"%s\": time %g s outside [0, %g]", key, x,
				 RP_MAX_TIME_S);
			return -1;
		}
		if (key && key_is_ms(key) && !(x >= 0 && x <= RP_MAX_TIME_S * 1000)) {
			snprintf(why, len, "\"%s\": duration %g ms outside [0, %g]", key, x,
				 RP_MAX_TIME_S * 1000);
			return -1;
		}
		if (!isfinite(x) || fabs(x) > RP_MAX_NUMBER) {
			snprintf(why, len, "\"%s\": %g is not a number within +-%g", key ? key : "",
				 x, RP_MAX_NUMBER);
			return -1;
		}
		return 0;
	}
	default:
		return 0;
	}
too_many:
	snprintf(why, len, "\"%s\": more than %d members", key ? key : "", RP_MAX_ITEMS);
	return -1;
}

/* The timeline's entries each have a source, a text and a time. */
static int check_timeline(json_t *r, char *why, size_t len)
{
	json_t *tl = json_object_get(r, "timeline"), *o;
	size_t i;

	if (tl && !json_is_array(tl)) {
		snprintf(why, len, "\"timeline\" is not an array");
		return -1;
	}
	json_array_foreach(tl, i, o)
	{
		if (!json_is_object(o) || !json_is_string(json_object_get(o, "src")) ||
		    !json_is_string(json_object_get(o, "text")) ||
		    !json_is_number(json_object_get(o, "t"))) {
			snprintf(why, len,
				 "timeline[%zu]: not an object with a string \"src\", a string "
				 "\"text\" and a number \"t\"",
				 i);
			return -1;
		}
	}
	return 0;
}

/* See report_internal.h. */
int rp_check_bounds(const char *path, json_t *r)
{
	char why[200];

	if (check_value(r, NULL, 0, why, sizeof(why)) < 0 ||
	    check_timeline(r, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: not a result the report reads: %s\n", path, why);
		return -1;
	}
	return 0;
}

/* See report_internal.h. */
int rp_check_file_size(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > RP_MAX_FILE_BYTES) {
		fprintf(stderr, "%s: %lld bytes, more than a result file may have (%d)\n", path,
			(long long)sb.st_size, RP_MAX_FILE_BYTES);
		return -1;
	}
	return 0;
}
