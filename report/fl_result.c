// SPDX-License-Identifier: MIT
/*
 * fl_result.c - the one reader of a VM-lab result (fl_result.h): loads
 * result.json, checks its kind and version, keeps every bound of the file
 * (docs/robustness.md: the guest writes part of it and is not trusted) and
 * fills the typed result. This is the only file of report/ that reads
 * result.json by key.
 */
#include "fl_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

	if (depth > FL_RESULT_MAX_DEPTH) {
		snprintf(why, len, "nested deeper than %d levels", FL_RESULT_MAX_DEPTH);
		return -1;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (json_object_size(v) > FL_RESULT_MAX_ITEMS)
			goto too_many;
		json_object_foreach(v, k, c)
		{
			if (strlen(k) > FL_RESULT_MAX_STRING) {
				snprintf(why, len, "a key longer than %d bytes",
					 FL_RESULT_MAX_STRING);
				return -1;
			}
			if (check_value(c, k, depth + 1, why, len) < 0)
				return -1;
		}
		return 0;
	case JSON_ARRAY:
		if (json_array_size(v) > FL_RESULT_MAX_ITEMS)
			goto too_many;
		json_array_foreach(v, i, c)
		{
			if (check_value(c, NULL, depth + 1, why, len) < 0)
				return -1;
		}
		return 0;
	case JSON_STRING:
		if (json_string_length(v) > FL_RESULT_MAX_STRING) {
			snprintf(why, len, "\"%s\": a string longer than %d bytes", key ? key : "",
				 FL_RESULT_MAX_STRING);
			return -1;
		}
		return 0;
	case JSON_INTEGER:
	case JSON_REAL: {
		double x = json_number_value(v);
		if (key && key_is_time(key) && !(x >= 0 && x <= FL_RESULT_MAX_TIME_S)) {
			snprintf(why, len, "\"%s\": time %g s outside [0, %g]", key, x,
				 FL_RESULT_MAX_TIME_S);
			return -1;
		}
		if (key && key_is_ms(key) && !(x >= 0 && x <= FL_RESULT_MAX_TIME_S * 1000)) {
			snprintf(why, len, "\"%s\": duration %g ms outside [0, %g]", key, x,
				 FL_RESULT_MAX_TIME_S * 1000);
			return -1;
		}
		/* An integer is exact at any size (a drawn seed, an LBA off the
		 * wire: the typed fields bound what they take); a real must be
		 * finite and within bounds. */
		if (json_is_real(v) && (!isfinite(x) || fabs(x) > FL_RESULT_MAX_NUMBER)) {
			snprintf(why, len, "\"%s\": %g is not a number within +-%g", key ? key : "",
				 x, FL_RESULT_MAX_NUMBER);
			return -1;
		}
		return 0;
	}
	default:
		return 0;
	}
too_many:
	snprintf(why, len, "\"%s\": more than %d members", key ? key : "", FL_RESULT_MAX_ITEMS);
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

/* The version of r: 1 without the key; -1 (why set) when it is not a positive integer. */
static int check_version(json_t *r, char *why, size_t len)
{
	json_t *v = json_object_get(r, "version");

	if (!v)
		return 1;
	if (!json_is_integer(v) || json_integer_value(v) < 1) {
		snprintf(why, len, "\"version\" is not a positive integer");
		return -1;
	}
	if (json_integer_value(v) > FL_RESULT_VERSION) {
		snprintf(why, len,
			 "result version %lld is newer than this faultlun reads (%d): "
			 "read it with the faultlun that wrote it",
			 (long long)json_integer_value(v), FL_RESULT_VERSION);
		return -1;
	}
	return (int)json_integer_value(v);
}

/* See fl_result.h. */
double fl_result_num(json_t *o, const char *key, double def)
{
	json_t *v = json_object_get(o, key);
	double x = def;

	if (json_is_number(v))
		x = json_number_value(v);
	else if (json_is_string(v) && *json_string_value(v))
		x = strtod(json_string_value(v), NULL);
	/* a numeric string escapes the bounds check: bound it here */
	return isfinite(x) && fabs(x) <= FL_RESULT_MAX_NUMBER ? x : def;
}

/* The string at key in o, NULL when absent or not a string. */
static const char *str_at(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The JSON number at key in o (0 when absent or not a number: within bounds by then). */
static double number_at(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* calloc of n items of size (one when n is 0); NULL on ENOMEM. */
static void *items(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* The verdict of one expectation: "verdict", else the older "ok" / "not_applicable". */
static enum fl_result_verdict expect_verdict(json_t *v)
{
	const char *w = str_at(v, "verdict");

	if (w)
		return !strcmp(w, "pass")   ? FL_RESULT_PASS
		       : !strcmp(w, "fail") ? FL_RESULT_FAIL
					    : FL_RESULT_NA;
	if (json_is_true(json_object_get(v, "not_applicable")))
		return FL_RESULT_NA;
	return json_is_true(json_object_get(v, "ok")) ? FL_RESULT_PASS : FL_RESULT_FAIL;
}

/* Fills the metadata, the wall-time split and the knobs of res from res->doc. */
static void fill_meta(struct fl_result *res)
{
	json_t *r = res->doc;

	res->scenario = str_at(r, "scenario");
	res->name = str_at(r, "name");
	res->path = str_at(r, "path");
	res->accel = str_at(r, "accel");
	res->verdict = str_at(r, "verdict");
	res->error = str_at(r, "error");
	res->run_dir = str_at(r, "run_dir");
	res->kernel = str_at(json_object_get(r, "guest_info"), "kernel");
	res->max_stall_ms = fl_result_num(r, "max_stall_ms", -1);
	json_t *w = json_object_get(r, "wall"), *ph = json_object_get(w, "guest_phases");
	res->wall = (struct fl_result_wall){
	    .total_s = number_at(w, "total_s"),
	    .guest_assembly_s = number_at(w, "guest_assembly_s"),
	    .qemu_s = number_at(w, "qemu_s"),
	    .agent_up = fl_result_num(ph, "agent_up", -1),
	    .workload_start = fl_result_num(ph, "workload_start", -1),
	    .workload_end = fl_result_num(ph, "workload_end", -1),
	    .finish = fl_result_num(ph, "finish", -1),
	};

	json_t *gk = json_object_get(json_object_get(r, "guest_info"), "knobs");
	json_t *sk = json_object_get(r, "knobs");
	res->guest_knobs = (struct fl_result_knobs){
	    .timeout = fl_result_num(gk, "timeout", -1),
	    .abort_tmo = fl_result_num(gk, "abort_tmo", -1),
	    .lu_reset_tmo = fl_result_num(gk, "lu_reset_tmo", -1),
	    .tgt_reset_tmo = fl_result_num(gk, "tgt_reset_tmo", -1),
	    .recovery_tmo = fl_result_num(gk, "recovery_tmo", -1),
	    .cmd_time_out = fl_result_num(gk, "cmd_time_out", -1),
	};
	res->scenario_knobs = (struct fl_result_knobs){
	    .timeout = fl_result_num(sk, "timeout_s", -1),
	    .abort_tmo = fl_result_num(sk, "abort_tmo_s", -1),
	    .lu_reset_tmo = fl_result_num(sk, "lu_reset_tmo_s", -1),
	    .tgt_reset_tmo = fl_result_num(sk, "tgt_reset_tmo_s", -1),
	    .recovery_tmo = fl_result_num(sk, "recovery_tmo_s", -1),
	    .cmd_time_out = fl_result_num(sk, "cmd_time_out_s", -1),
	};
	res->multipath = fl_result_num(sk, "multipath", 0) == 1;
}

/* One trace event of the target's, typed. */
static struct fl_result_trace trace_event(json_t *o)
{
	return (struct fl_result_trace){
	    .t = fl_result_num(o, "t", 0),
	    .event = str_at(o, "event"),
	    .action = str_at(o, "action"),
	    .rule = str_at(o, "rule"),
	    .op = str_at(o, "op"),
	    .opcode = str_at(o, "opcode"),
	    .status = str_at(o, "status"),
	    .hold = str_at(o, "hold"),
	    .has_op = json_object_get(o, "op") != NULL,
	    .tmf = str_at(o, "tmf"),
	    .respond = str_at(o, "respond"),
	    .ua = str_at(o, "ua"),
	    .has_ua = json_object_get(o, "ua") != NULL,
	    .what = str_at(o, "what"),
	    .lun = fl_result_num(o, "lun", 0),
	    .lba = fl_result_num(o, "lba", NAN),
	    .tag = fl_result_num(o, "tag", 0),
	    .ref_tag = fl_result_num(o, "ref_tag", 0),
	    .delay_ms = fl_result_num(o, "delay_ms", 0),
	    .response = fl_result_num(o, "response", -1),
	    .aborted = fl_result_num(o, "aborted", 0),
	};
}

/* Fills res from res->doc: its metadata, then its typed arrays; 0 or -1 (ENOMEM, why set). */
static int fill(struct fl_result *res, char *why, size_t len)
{
	json_t *r = res->doc, *o, *a;
	size_t i;

	fill_meta(res);

	/* Each array: json_array_size is 0 for a missing key or another type. */
	a = json_object_get(r, "timeline");
	if (!(res->timeline = items(json_array_size(a), sizeof(*res->timeline))))
		goto enomem;
	json_array_foreach(a, i, o) /* shape checked by check_timeline */
	    res->timeline[res->ntimeline++] = (struct fl_result_event){
	    .t = number_at(o, "t"), .src = str_at(o, "src"), .text = str_at(o, "text")};

	a = json_object_get(r, "steps");
	if (!(res->steps = items(json_array_size(a), sizeof(*res->steps))))
		goto enomem;
	json_array_foreach(a, i, o)
	{
		struct fl_result_step *s = &res->steps[res->nsteps++];
		s->step = json_integer_value(json_object_get(o, "step"));
		s->op = str_at(o, "op");
		s->errno_name = str_at(o, "errno");
		s->t0 = fl_result_num(o, "t0", 0);
		s->t1 = fl_result_num(o, "t1", 0);
		s->elapsed_ms = fl_result_num(o, "elapsed_ms", 0);
		s->params = json_object_get(o, "params");
		s->integrity = str_at(o, "integrity");
	}

	a = json_object_get(r, "expectations");
	res->has_expectations = json_is_array(a);
	if (!(res->expectations = items(json_array_size(a), sizeof(*res->expectations))))
		goto enomem;
	json_array_foreach(a, i, o)
	{
		struct fl_result_expect *x = &res->expectations[res->nexpectations++];
		json_t *st = json_object_get(o, "step");
		x->verdict = expect_verdict(o);
		x->has_verdict = json_object_get(o, "verdict") != NULL;
		x->verdict_text = str_at(o, "verdict");
		x->what = str_at(o, "what");
		x->observed = str_at(o, "observed");
		x->has_step = json_is_integer(st);
		x->step = json_integer_value(st);
		x->expect = json_integer_value(json_object_get(o, "expect"));
	}

	a = json_object_get(r, "eh_sequence");
	if (!(res->eh_sequence = items(json_array_size(a), sizeof(*res->eh_sequence))))
		goto enomem;
	json_array_foreach(a, i, o) res->eh_sequence[res->neh_sequence++] = json_string_value(o);

	a = json_object_get(r, "probes");
	if (!(res->probes = items(json_array_size(a), sizeof(*res->probes))))
		goto enomem;
	json_array_foreach(a, i, o) res->probes[res->nprobes++] = (struct fl_result_probe){
	    .t = fl_result_num(o, "t", 0), .ms = fl_result_num(o, "ms", 0)};

	a = json_object_get(r, "trace_events");
	if (!(res->trace = items(json_array_size(a), sizeof(*res->trace))))
		goto enomem;
	json_array_foreach(a, i, o) res->trace[res->ntrace++] = trace_event(o);
	return 0;
enomem:
	snprintf(why, len, "out of memory");
	return -1;
}

/* See fl_result.h. */
int fl_result_from_json(json_t *doc, const char *name, struct fl_result *out, char *err,
			size_t errlen)
{
	char why[200];
	int version;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(doc) || !json_object_get(doc, "faultlun_vm_result")) {
		snprintf(err, errlen, "%s: not a faultlun vm result", name);
		return -1;
	}
	if ((version = check_version(doc, why, sizeof(why))) < 0 ||
	    check_value(doc, NULL, 0, why, sizeof(why)) < 0 ||
	    check_timeline(doc, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: not a result the report reads: %s", name, why);
		return -1;
	}
	out->version = version;
	out->doc = json_incref(doc);
	if (fill(out, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", name, why);
		fl_result_free(out);
		return -1;
	}
	return 0;
}

/* See fl_result.h. */
int fl_result_read(const char *path, struct fl_result *out, char *err, size_t errlen)
{
	struct stat sb;
	json_error_t jerr;

	memset(out, 0, sizeof(*out));
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > FL_RESULT_MAX_FILE_BYTES) {
		snprintf(err, errlen, "%s: %lld bytes, more than a result file may have (%d)", path,
			 (long long)sb.st_size, FL_RESULT_MAX_FILE_BYTES);
		return -1;
	}
	json_t *doc = json_load_file(path, 0, &jerr);
	if (!doc) {
		snprintf(err, errlen, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	int rc = fl_result_from_json(doc, path, out, err, errlen);
	json_decref(doc);
	return rc;
}

/* See fl_result.h. */
void fl_result_free(struct fl_result *res)
{
	free(res->timeline);
	free(res->steps);
	free(res->expectations);
	free(res->eh_sequence);
	free(res->probes);
	free(res->trace);
	json_decref(res->doc);
	memset(res, 0, sizeof(*res));
}

/* See fl_result.h. */
const char *fl_result_verdict_word(enum fl_result_verdict v)
{
	return v == FL_RESULT_PASS ? "PASS" : v == FL_RESULT_NA ? "N/A" : "FAIL";
}
