/* SPDX-License-Identifier: MIT */
/*
 * vm_check.c - turns what a VM-lab guest observed into one timeline and a
 * verdict (docs/vm-lab.md, "Expectations").
 *
 * Inputs (in the results share, all on the guest's CLOCK_MONOTONIC): the
 * kernel log (/dev/kmsg records "PRI,SEQ,USEC,FLAGS;TEXT"), uevents, sysfs
 * changes, workload steps, healthy-LUN probes, the faultlun trace (t_us since
 * its engine started, aligned on the agent's "engine start" marker).
 * The error-handler steps are read from the kernel log (SCSI midlayer,
 * libiscsi with debug_libiscsi_eh, LIO's TMR lines) only; the task-management
 * functions the target received are in the timeline and in the trace (for
 * "trace" expectations), not in the "eh" sequence. Each check.expect entry
 * gets one or more verdicts with what was observed (every failing verdict
 * fails the run); an entry scoped to another runner ("runner": "libiscsi")
 * gets one verdict marked "not_applicable", counted neither way.
 * result.json holds everything.
 */
#include "fl_vm.h"
#include "vm_internal.h"

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernel-log patterns of the error handler's steps, in escalation order. */
static const struct {
	const char *step, *regex;
} eh_patterns[] = {
    /* scsi_error.c with logging_level ERROR bits, libiscsi with debug_libiscsi_eh, LIO */
    {"abort", "(iscsi_eh_abort aborting|aborting command|ABORT_TASK: Found)"},
    {"lun_reset", "(Sending BDR|iscsi_eh_device_reset LU Reset|LUN_RESET: )"},
    {"target_reset", "(Sending target reset|iscsi_eh_target_reset tgt Reset|TARGET_WARM_RESET)"},
    {"bus_reset", "Sending BRST"},
    {"host_reset", "(Sending HRST|host reset)"},
    {"conn_error", "detected conn error"},
    {"session_reset", "iscsi_eh_session_reset"},
    {"session_recovery_timeout", "session recovery timed out"},
    {"offline", "(Device offlined|Offlining disk|rejecting I/O to offline)"},
    {"io_error", "I/O error, dev"},
};

/* Reads a JSON-lines file into an array (missing file: empty array). */
static json_t *load_jsonl(const char *dir, const char *name)
{
	char p[PATH_MAX], *line = NULL;
	size_t cap = 0;
	json_t *arr = json_array();
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "r");
	if (!f)
		return arr;
	while (getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		if (o)
			json_array_append_new(arr, o);
	}
	free(line);
	fclose(f);
	return arr;
}

/* Adds an event to the timeline. */
static void add_event(json_t *tl, double t, const char *src, const char *text)
{
	json_array_append_new(tl, json_pack("{s:f,s:s,s:s}", "t", t, "src", src, "text", text));
}

/* Orders timeline events by time. */
static int cmp_event(const void *a, const void *b)
{
	double ta = json_real_value(json_object_get(*(json_t *const *)a, "t"));
	double tb = json_real_value(json_object_get(*(json_t *const *)b, "t"));
	return ta < tb ? -1 : ta > tb;
}

/* Sorts a timeline array in place (stable enough for equal times). */
static json_t *sort_timeline(json_t *tl)
{
	size_t n = json_array_size(tl);
	json_t **v = calloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(tl, i));
	qsort(v, n, sizeof(*v), cmp_event);
	json_t *out = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(out, v[i]);
	free(v);
	json_decref(tl);
	return out;
}

/* Loads /dev/kmsg records; returns an array of {t, text}. */
static json_t *load_kmsg(const char *dir)
{
	char p[PATH_MAX], *line = NULL;
	size_t cap = 0;
	json_t *arr = json_array();
	snprintf(p, sizeof(p), "%s/kmsg.txt", dir);
	FILE *f = fopen(p, "r");
	if (!f)
		return arr;
	while (getline(&line, &cap, f) > 0) {
		unsigned pri;
		unsigned long long seq, usec;
		int off = 0;
		if (line[0] == ' ')
			continue; /* a continuation (KEY=VALUE dictionary) */
		if (sscanf(line, "%u,%llu,%llu,%*[^;];%n", &pri, &seq, &usec, &off) < 3 || !off)
			continue;
		char *text = line + off;
		text[strcspn(text, "\n")] = 0;
		json_array_append_new(arr, json_pack("{s:f,s:s,s:i}", "t", usec / 1e6, "text", text,
						     "level", (int)(pri & 7)));
	}
	free(line);
	fclose(f);
	return arr;
}

/* Time of the first kernel-log record containing needle (or -1). */
static double kmsg_time_of(json_t *kmsg, const char *needle)
{
	size_t i;
	json_t *k;
	json_array_foreach(kmsg, i, k)
	{
		if (strstr(json_string_value(json_object_get(k, "text")), needle))
			return json_real_value(json_object_get(k, "t"));
	}
	return -1;
}

/*
 * Offset from CLOCK_MONOTONIC (steps, probes, sysfs, uevents, trace) to the
 * kernel log's clock, from the agent's "clock mono_us=" record.
 */
static double clock_offset(json_t *kmsg)
{
	size_t i;
	json_t *k;
	json_array_foreach(kmsg, i, k)
	{
		const char *t = strstr(json_string_value(json_object_get(k, "text")),
				       "faultlun-agent: clock mono_us=");
		if (t)
			return json_real_value(json_object_get(k, "t")) -
			       strtoll(t + strlen("faultlun-agent: clock mono_us="), NULL, 10) /
				   1e6;
	}
	return 0;
}

/* Shifts the time keys of every object of arr by off seconds. */
static void shift_times(json_t *arr, double off)
{
	static const char *const keys[] = {"t", "t0", "t1"};
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) for (size_t k = 0; k < 3; k++)
	{
		json_t *v = json_object_get(o, keys[k]);
		if (json_is_number(v))
			json_object_set_new(o, keys[k], json_real(json_number_value(v) + off));
	}
}

/* Errno name of a step in steps.jsonl (or NULL if the step did not run). */
static json_t *find_step(json_t *steps, json_int_t idx)
{
	size_t i;
	json_t *s;
	json_array_foreach(steps, i,
			   s) if (json_integer_value(json_object_get(s, "step")) == idx) return s;
	return NULL;
}

/* SPC-4 sense key names. */
static const char *const sense_keys[16] = {
    "NO_SENSE",	      "RECOVERED_ERROR", "NOT_READY",	   "MEDIUM_ERROR",
    "HARDWARE_ERROR", "ILLEGAL_REQUEST", "UNIT_ATTENTION", "DATA_PROTECT",
    "BLANK_CHECK",    "VENDOR_SPECIFIC", "COPY_ABORTED",   "ABORTED_COMMAND",
    "RESERVED_C",     "VOLUME_OVERFLOW", "MISCOMPARE",	   "COMPLETED"};

/* A few ASC/ASCQ names (SPC-4 Annex D) the lab's scenarios use. */
static const struct {
	const char *name;
	unsigned asc, ascq;
} asc_names[] = {
    {"UNRECOVERED_READ_ERROR", 0x11, 0x00},
    {"LBA_OUT_OF_RANGE", 0x21, 0x00},
    {"SPACE_ALLOCATION_FAILED_WRITE_PROTECT", 0x27, 0x07},
    {"WRITE_PROTECTED", 0x27, 0x00},
    {"INVALID_FIELD_IN_CDB", 0x24, 0x00},
    {"INVALID_COMMAND_OPERATION_CODE", 0x20, 0x00},
    {"ASYMMETRIC_ACCESS_STATE_TRANSITION", 0x04, 0x0a},
    {"BECOMING_READY", 0x04, 0x01},
    {"POWER_ON_RESET", 0x29, 0x00},
    {"CAPACITY_DATA_HAS_CHANGED", 0x2a, 0x09},
    {"THIN_PROVISIONING_SOFT_THRESHOLD_REACHED", 0x38, 0x07},
    {"LOGICAL_UNIT_COMMUNICATION_FAILURE", 0x08, 0x00},
    {"WRITE_ERROR", 0x0c, 0x00},
    {"NO_ADDITIONAL_SENSE", 0x00, 0x00},
};

/* Parses "KEY/ASC_NAME", "KEY/0xAA/0xQQ", "7/27/07"; returns 0 or -1. */
static int parse_sense(const char *s, unsigned *key, unsigned *asc, unsigned *ascq)
{
	char buf[128], *parts[3] = {0};
	int n = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, "/", &save); t && n < 3;
	     t = strtok_r(NULL, "/", &save))
		parts[n++] = t;
	if (n < 2)
		return -1;
	*key = 16;
	for (unsigned i = 0; i < 16; i++)
		if (!strcmp(parts[0], sense_keys[i]))
			*key = i;
	if (*key == 16) {
		char *end;
		*key = (unsigned)strtoul(parts[0], &end, 16);
		if (*end || *key > 15)
			return -1;
	}
	if (n == 3) {
		*asc = (unsigned)strtoul(parts[1], NULL, 16);
		*ascq = (unsigned)strtoul(parts[2], NULL, 16);
		return 0;
	}
	for (size_t i = 0; i < sizeof(asc_names) / sizeof(asc_names[0]); i++)
		if (!strcmp(parts[1], asc_names[i].name)) {
			*asc = asc_names[i].asc;
			*ascq = asc_names[i].ascq;
			return 0;
		}
	return -1;
}

/* SAM-5 status names. */
static const char *status_name(int st)
{
	switch (st) {
	case 0x00:
		return "GOOD";
	case 0x02:
		return "CHECK_CONDITION";
	case 0x08:
		return "BUSY";
	case 0x18:
		return "RESERVATION_CONFLICT";
	case 0x28:
		return "TASK_SET_FULL";
	case 0x40:
		return "TASK_ABORTED";
	default:
		return "OTHER";
	}
}

/* Records one verdict. */
static void verdict(json_t *out, json_t *expect, bool ok, const char *what, const char *observed)
{
	json_array_append_new(out, json_pack("{s:O,s:b,s:s,s:s}", "expect", expect, "ok", ok,
					     "what", what, "observed", observed));
}

/* Does observed (a list of step names) contain want as an ordered subsequence? */
static bool subsequence(json_t *want, json_t *observed)
{
	size_t j = 0, n = json_array_size(observed);
	size_t i;
	json_t *w;
	json_array_foreach(want, i, w)
	{
		while (j < n &&
		       strcmp(json_string_value(json_array_get(observed, j)), json_string_value(w)))
			j++;
		if (j == n)
			return false;
		j++;
	}
	return true;
}

/* Joins a JSON array of strings. */
static void join(json_t *arr, char *buf, size_t len)
{
	buf[0] = 0;
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		if (i)
			strncat(buf, " -> ", len - strlen(buf) - 1);
		strncat(buf, json_is_string(v) ? json_string_value(v) : "?", len - strlen(buf) - 1);
	}
}

/* Does trace line o match every string/number key of want (but min/max)? */
static bool trace_matches(json_t *o, json_t *want)
{
	const char *k;
	json_t *v;
	json_object_foreach(want, k, v)
	{
		if (!strcmp(k, "min") || !strcmp(k, "max"))
			continue;
		json_t *have = json_object_get(o, k);
		if (!have || !json_equal(have, v))
			return false;
	}
	return true;
}

/* Checks one expectation; appends its verdict. */
static void check_one(json_t *e, json_t *ctx, json_t *verdicts)
{
	char what[512], obs[2048];
	json_t *steps = json_object_get(ctx, "steps");
	if (json_object_get(e, "step")) {
		json_int_t idx = json_integer_value(json_object_get(e, "step"));
		json_t *s = find_step(steps, idx);
		json_t *want_errno = json_object_get(e, "errno");
		if (want_errno) {
			const char *got = s ? json_string_value(json_object_get(s, "errno")) : NULL;
			bool ok = false;
			if (json_is_string(want_errno)) {
				ok = got && !strcmp(got, json_string_value(want_errno));
				snprintf(what, sizeof(what), "step %lld errno %s", (long long)idx,
					 json_string_value(want_errno));
			} else {
				size_t i;
				json_t *w;
				json_array_foreach(want_errno, i, w) ok |=
				    got && json_is_string(w) && !strcmp(got, json_string_value(w));
				char alts[256];
				join(want_errno, alts, sizeof(alts));
				snprintf(what, sizeof(what), "step %lld errno one of %s",
					 (long long)idx, alts);
			}
			snprintf(obs, sizeof(obs), "%s%s", got ? got : "step did not run",
				 s ? "" : "");
			if (s)
				snprintf(obs + strlen(obs), sizeof(obs) - strlen(obs),
					 " after %.0f ms",
					 json_number_value(json_object_get(s, "elapsed_ms")));
			verdict(verdicts, e, ok, what, obs);
		}
		json_t *within = json_object_get(e, "within_ms");
		if (within) {
			double ms = s ? json_number_value(json_object_get(s, "elapsed_ms")) : -1;
			snprintf(what, sizeof(what), "step %lld ends within %.0f ms",
				 (long long)idx, json_number_value(within));
			snprintf(obs, sizeof(obs), s ? "%.0f ms" : "step did not run", ms);
			verdict(verdicts, e, s && ms <= json_number_value(within), what, obs);
		}
		json_t *at_least = json_object_get(e, "min_ms");
		if (at_least) {
			double ms = s ? json_number_value(json_object_get(s, "elapsed_ms")) : -1;
			snprintf(what, sizeof(what), "step %lld takes at least %.0f ms",
				 (long long)idx, json_number_value(at_least));
			snprintf(obs, sizeof(obs), s ? "%.0f ms" : "step did not run", ms);
			verdict(verdicts, e, s && ms >= json_number_value(at_least), what, obs);
		}
		json_t *want_status = json_object_get(e, "status"),
		       *want_sense = json_object_get(e, "sense");
		if (want_status || want_sense) {
			bool ok = s && json_object_get(s, "status");
			snprintf(what, sizeof(what), "step %lld status %s sense %s", (long long)idx,
				 want_status ? json_string_value(want_status) : "*",
				 want_sense ? json_string_value(want_sense) : "*");
			if (!ok) {
				snprintf(obs, sizeof(obs), "no SG_IO status (step %s)",
					 s ? json_string_value(json_object_get(s, "errno"))
					   : "did not run");
			} else {
				int st = (int)json_integer_value(json_object_get(s, "status"));
				json_t *k = json_object_get(s, "sense_key");
				unsigned key = (unsigned)json_integer_value(k);
				unsigned asc =
				    (unsigned)json_integer_value(json_object_get(s, "asc"));
				unsigned ascq =
				    (unsigned)json_integer_value(json_object_get(s, "ascq"));
				if (want_status &&
				    strcmp(status_name(st), json_string_value(want_status)))
					ok = false;
				if (want_sense) {
					unsigned wk, wa, wq;
					if (parse_sense(json_string_value(want_sense), &wk, &wa,
							&wq) < 0)
						ok = false;
					else if (!k || wk != key || wa != asc || wq != ascq)
						ok = false;
				}
				if (k)
					snprintf(
					    obs, sizeof(obs),
					    "status %s (0x%02x) sense %s/0x%02x/0x%02x, host 0x%x",
					    status_name(st), st, sense_keys[key & 15], asc, ascq,
					    (unsigned)json_integer_value(
						json_object_get(s, "host_status")));
				else
					snprintf(obs, sizeof(obs),
						 "status %s (0x%02x), no sense, host 0x%x",
						 status_name(st), st,
						 (unsigned)json_integer_value(
						     json_object_get(s, "host_status")));
			}
			verdict(verdicts, e, ok, what, obs);
		}
		if (!want_errno && !within && !at_least && !want_status && !want_sense) {
			/* Nothing else to compare: the entry holds when the step ran. */
			snprintf(what, sizeof(what), "step %lld ran", (long long)idx);
			snprintf(obs, sizeof(obs), "%s",
				 s ? json_string_value(json_object_get(s, "errno")) ?: "?"
				   : "step did not run");
			verdict(verdicts, e, s != NULL, what, obs);
		}
		return;
	}
	if (json_object_get(e, "kernel_log")) {
		const char *re_s = json_string_value(json_object_get(e, "kernel_log"));
		regex_t re;
		if (!re_s || regcomp(&re, re_s, REG_EXTENDED | REG_NOSUB)) {
			verdict(verdicts, e, false, "kernel_log", "invalid regular expression");
			return;
		}
		size_t i, count = 0;
		json_t *k;
		const char *first = NULL;
		json_array_foreach(json_object_get(ctx, "kmsg"), i, k)
		{
			const char *t = json_string_value(json_object_get(k, "text"));
			if (!regexec(&re, t, 0, NULL, 0) && !strstr(t, "faultlun-agent:")) {
				if (!first)
					first = t;
				count++;
			}
		}
		regfree(&re);
		json_t *c = json_object_get(e, "count"), *mn = json_object_get(e, "min"),
		       *mx = json_object_get(e, "max");
		bool ok = count >= 1;
		if (c)
			ok = count == (size_t)json_integer_value(c);
		if (mn)
			ok = count >= (size_t)json_integer_value(mn);
		if (mx)
			ok = ok && count <= (size_t)json_integer_value(mx);
		if (c || mn || mx)
			snprintf(what, sizeof(what), "kernel log /%s/ %s%lld", re_s,
				 c    ? "count "
				 : mn ? "at least "
				      : "at most ",
				 (long long)json_integer_value(c    ? c
							       : mn ? mn
								    : mx));
		else
			snprintf(what, sizeof(what), "kernel log /%s/", re_s);
		snprintf(obs, sizeof(obs), "%zu matching line%s%s%s%s", count,
			 count == 1 ? "" : "s", first ? ", first: \"" : "", first ? first : "",
			 first ? "\"" : "");
		verdict(verdicts, e, ok, what, obs);
		return;
	}
	if (json_object_get(e, "eh")) {
		json_t *want = json_object_get(e, "eh"),
		       *seen = json_object_get(ctx, "eh_sequence");
		char w[400], s[1024];
		join(want, w, sizeof(w));
		join(seen, s, sizeof(s));
		snprintf(what, sizeof(what), "error-handler steps in order: %s", w);
		snprintf(obs, sizeof(obs), "%s", *s ? s : "(no error-handler step)");
		verdict(verdicts, e, subsequence(want, seen), what, obs);
		return;
	}
	if (json_object_get(e, "device_state")) {
		const char *want = json_string_value(json_object_get(e, "device_state"));
		const char *got = json_string_value(json_object_get(ctx, "device_state"));
		json_t *lun = json_object_get(e, "lun");
		if (json_is_integer(lun)) {
			char name[64];
			snprintf(name, sizeof(name), "lun%lld.state",
				 (long long)json_integer_value(lun));
			got =
			    json_string_value(json_object_get(json_object_get(ctx, "sysfs"), name));
		}
		snprintf(what, sizeof(what), "device state %s at the end", want ? want : "?");
		snprintf(obs, sizeof(obs), "%s", got ? got : "(unknown)");
		verdict(verdicts, e, want && got && !strcmp(want, got), what, obs);
		return;
	}
	if (json_object_get(e, "max_stall_ms")) {
		double want = json_number_value(json_object_get(e, "max_stall_ms"));
		json_t *got = json_object_get(ctx, "max_stall_ms");
		/* "min": the healthy LUN must also stall at least that long (host-wide EH). */
		json_t *mn = json_object_get(e, "min");
		double lo = mn ? json_number_value(mn) : 0;
		if (mn)
			snprintf(what, sizeof(what), "healthy LUN stalls between %.0f and %.0f ms",
				 lo, want);
		else
			snprintf(what, sizeof(what), "healthy LUN stalls at most %.0f ms", want);
		if (!got)
			snprintf(obs, sizeof(obs),
				 "no healthy-LUN probe (needs a LUN no step uses)");
		else
			snprintf(obs, sizeof(obs), "longest healthy-LUN read %.0f ms",
				 json_number_value(got));
		verdict(verdicts, e,
			got && json_number_value(got) <= want && json_number_value(got) >= lo, what,
			obs);
		return;
	}
	if (json_object_get(e, "trace")) {
		json_t *want = json_object_get(e, "trace");
		size_t i, count = 0;
		json_t *o;
		json_array_foreach(json_object_get(ctx, "trace"), i, o) count +=
		    trace_matches(o, want);
		json_t *mn = json_object_get(want, "min"), *mx = json_object_get(want, "max");
		long long lo = mn ? json_integer_value(mn) : 1,
			  hi = mx ? json_integer_value(mx) : -1;
		char *ws = json_dumps(want, JSON_COMPACT);
		snprintf(what, sizeof(what), "trace %s", ws ? ws : "?");
		free(ws);
		snprintf(obs, sizeof(obs), "%zu matching trace event%s", count,
			 count == 1 ? "" : "s");
		verdict(verdicts, e, (long long)count >= lo && (hi < 0 || (long long)count <= hi),
			what, obs);
		return;
	}
	verdict(verdicts, e, false, "unknown expectation", "the VM lab does not know this entry");
}

/* Human text for a workload step's start. */
static void step_text(json_t *s, char *buf, size_t len)
{
	json_t *p = json_object_get(s, "params");
	const char *op = json_string_value(json_object_get(s, "op"));
	int n = snprintf(buf, len, "step %lld %s",
			 (long long)json_integer_value(json_object_get(s, "step")), op ? op : "?");
	const char *k;
	json_t *v;
	json_object_foreach(p, k, v)
	{
		if (!strcmp(k, "op") || n < 0 || (size_t)n >= len)
			continue;
		char *vs = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		n += snprintf(buf + n, len - (size_t)n, " %s=%s", k, vs ? vs : "?");
		free(vs);
	}
}

/* Reads every trace file of the run into one array with guest times "t". */
static json_t *load_traces(const char *dir, json_t *kmsg, json_t *tl, double off)
{
	json_t *all = json_array();
	for (int lun = -1; lun < 256; lun++) {
		char name[64], marker[96];
		if (lun < 0) {
			snprintf(name, sizeof(name), "trace.jsonl");
			snprintf(marker, sizeof(marker), "faultlun-agent: engine start");
		} else {
			snprintf(name, sizeof(name), "trace-lun%d.jsonl", lun);
			snprintf(marker, sizeof(marker), "faultlun-agent: engine start lun %d",
				 lun);
		}
		json_t *arr = load_jsonl(dir, name);
		if (!json_array_size(arr)) {
			json_decref(arr);
			continue;
		}
		/* The start event gives the trace's origin on the guest's monotonic
		 * clock; without it, the agent's marker just before the engine started. */
		double base = kmsg_time_of(kmsg, marker);
		json_t *t0 = json_object_get(json_array_get(arr, 0), "t0_mono_us");
		if (json_is_integer(t0))
			base = json_integer_value(t0) / 1e6 + off;
		if (base < 0)
			base = 0;
		size_t i;
		json_t *o;
		json_array_foreach(arr, i, o)
		{
			double t = base + json_integer_value(json_object_get(o, "t_us")) / 1e6;
			json_object_set_new(o, "t", json_real(t));
			char text[512];
			int n = snprintf(text, sizeof(text), "%s",
					 json_string_value(json_object_get(o, "event")) ?: "?");
			static const char *const keys[] = {"tmf", "rule",   "action", "op",
							   "lba", "blocks", "state",  "from",
							   "to",  "resp",   "why",    "lun"};
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
				json_t *v = json_object_get(o, keys[k]);
				if (!v || n < 0 || (size_t)n >= sizeof(text))
					continue;
				char *vs = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
				n += snprintf(text + n, sizeof(text) - (size_t)n, " %s=%s", keys[k],
					      vs ? vs : "?");
				free(vs);
			}
			add_event(tl, t, "target", text);
			json_array_append(all, o);
		}
		json_decref(arr);
	}
	return all;
}

/* Wall-time split of the guest from the agent's markers. */
static json_t *guest_phases(json_t *kmsg)
{
	static const struct {
		const char *name, *marker;
	} marks[] = {
	    {"agent_up", "faultlun-agent: agent up"},
	    {"modules_loaded", "faultlun-agent: loading modules"},
	    {"disks_ready", "faultlun-agent: disks:"},
	    {"workload_start", "faultlun-agent: workload start"},
	    {"workload_end", "faultlun-agent: workload end"},
	    {"finish", "faultlun-agent: finish"},
	};
	json_t *o = json_object();
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		double t = kmsg_time_of(kmsg, marks[i].marker);
		if (t >= 0)
			json_object_set_new(o, marks[i].name, json_real(t));
	}
	return o;
}

/* See vm_internal.h. */
int vm_check_run(json_t *sc, const struct vm_run_info *info)
{
	const char *dir = info->results;
	char p[PATH_MAX], buf[1024];
	json_t *kmsg = load_kmsg(dir);
	json_t *steps = load_jsonl(dir, "steps.jsonl");
	json_t *uevents = load_jsonl(dir, "uevents.jsonl");
	json_t *sysfs = load_jsonl(dir, "sysfs.jsonl");
	json_t *stall = load_jsonl(dir, "stall.jsonl");
	json_t *tl = json_array();
	size_t i;
	json_t *o;
	double off = clock_offset(kmsg);
	shift_times(steps, off);
	shift_times(uevents, off);
	shift_times(sysfs, off);
	shift_times(stall, off);

	/* Kernel log, with the error-handler steps recognised. */
	regex_t res[sizeof(eh_patterns) / sizeof(eh_patterns[0])];
	for (size_t k = 0; k < sizeof(eh_patterns) / sizeof(eh_patterns[0]); k++)
		regcomp(&res[k], eh_patterns[k].regex, REG_EXTENDED | REG_NOSUB);
	json_t *eh = json_array(), *eh_seq = json_array();
	const char *last_step = "";
	double t_workload = kmsg_time_of(kmsg, "faultlun-agent: workload start");
	json_array_foreach(kmsg, i, o)
	{
		const char *text = json_string_value(json_object_get(o, "text"));
		double t = json_real_value(json_object_get(o, "t"));
		bool agent = strstr(text, "faultlun-agent:") != NULL;
		add_event(tl, t, agent ? "agent" : "kernel", text);
		if (agent || t < t_workload)
			continue;
		for (size_t k = 0; k < sizeof(eh_patterns) / sizeof(eh_patterns[0]); k++) {
			if (regexec(&res[k], text, 0, NULL, 0))
				continue;
			json_array_append_new(eh, json_pack("{s:f,s:s,s:s}", "t", t, "step",
							    eh_patterns[k].step, "text", text));
			if (strcmp(last_step, eh_patterns[k].step))
				json_array_append_new(eh_seq, json_string(eh_patterns[k].step));
			last_step = eh_patterns[k].step;
			break;
		}
	}
	for (size_t k = 0; k < sizeof(eh_patterns) / sizeof(eh_patterns[0]); k++)
		regfree(&res[k]);

	/* The target's trace (its TMF events stay out of the error-handler steps). */
	json_t *trace = load_traces(dir, kmsg, tl, off);

	json_array_foreach(uevents, i, o)
	{
		int n = snprintf(buf, sizeof(buf), "%s %s",
				 json_string_value(json_object_get(o, "action")) ?: "?",
				 json_string_value(json_object_get(o, "devpath")) ?: "?");
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(o, "env"), k, v)
		{
			if (strncmp(k, "SDEV_", 5) && strcmp(k, "DEVNAME") &&
			    strcmp(k, "DISK_RO") && strcmp(k, "RESIZE") && strncmp(k, "ISCSI", 5))
				continue;
			if (n >= 0 && (size_t)n < sizeof(buf))
				n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %s=%s", k,
					      json_string_value(v) ?: "");
		}
		add_event(tl, json_real_value(json_object_get(o, "t")), "uevent", buf);
	}
	json_t *last_values = json_object();
	json_array_foreach(sysfs, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "name"));
		const char *value = json_string_value(json_object_get(o, "value"));
		snprintf(buf, sizeof(buf), "%s = %s", name ?: "?", value ?: "?");
		/* Request / completion counters move with every I/O: kept, not drawn. */
		if (name && !strstr(name, "iorequest_cnt") && !strstr(name, "iodone_cnt"))
			add_event(tl, json_real_value(json_object_get(o, "t")), "sysfs", buf);
		if (name && value)
			json_object_set_new(last_values, name, json_string(value));
	}
	json_array_foreach(steps, i, o)
	{
		step_text(o, buf, sizeof(buf));
		add_event(tl, json_real_value(json_object_get(o, "t0")), "workload", buf);
		snprintf(buf, sizeof(buf), "step %lld %s -> %s after %.0f ms",
			 (long long)json_integer_value(json_object_get(o, "step")),
			 json_string_value(json_object_get(o, "op")) ?: "?",
			 json_string_value(json_object_get(o, "errno")) ?: "?",
			 json_number_value(json_object_get(o, "elapsed_ms")));
		add_event(tl, json_real_value(json_object_get(o, "t1")), "workload", buf);
	}
	double max_stall = -1;
	json_array_foreach(stall, i, o)
	{
		double ms = json_number_value(json_object_get(o, "ms"));
		if (!json_object_get(o, "ms"))
			continue;
		if (ms > max_stall)
			max_stall = ms;
		if (ms >= 1000) {
			snprintf(buf, sizeof(buf), "healthy LUN read stalled %.0f ms%s", ms,
				 json_is_true(json_object_get(o, "unfinished"))
				     ? " (never finished)"
				     : "");
			add_event(tl, json_real_value(json_object_get(o, "t0")), "healthy", buf);
			json_object_set_new(json_array_get(tl, json_array_size(tl) - 1), "dur",
					    json_real(ms / 1000));
		}
	}
	tl = sort_timeline(tl);

	/* The context the expectations are checked against. */
	snprintf(p, sizeof(p), "%s/guest.json", dir);
	json_t *guest = json_load_file(p, 0, NULL);
	const char *test_dev = json_string_value(json_object_get(guest, "test_dev"));
	json_t *check = json_object_get(sc, "check");
	json_t *l0 = json_object_get(json_array_get(json_object_get(check, "workload"), 0), "lun");
	json_int_t test_lun = json_is_integer(l0) ? json_integer_value(l0) : -1;
	if (test_lun < 0) {
		json_t *first = json_array_get(json_object_get(sc, "luns"), 0);
		test_lun = json_is_integer(json_object_get(first, "lun"))
			       ? json_integer_value(json_object_get(first, "lun"))
			       : 0;
	}
	snprintf(buf, sizeof(buf), "lun%lld.state", (long long)test_lun);
	json_t *ctx = json_pack("{s:O,s:O,s:O,s:O}", "steps", steps, "kmsg", kmsg, "eh_sequence",
				eh_seq, "trace", trace);
	if (json_object_get(last_values, buf))
		json_object_set(ctx, "device_state", json_object_get(last_values, buf));
	json_object_set(ctx, "sysfs", last_values);
	if (max_stall >= 0)
		json_object_set_new(ctx, "max_stall_ms", json_real(max_stall));

	/* Verdicts. */
	json_t *verdicts = json_array();
	char done_text[256] = "";
	snprintf(p, sizeof(p), "%s/done", dir);
	FILE *df = fopen(p, "r");
	if (df) {
		if (!fgets(done_text, sizeof(done_text), df))
			done_text[0] = 0;
		done_text[strcspn(done_text, "\n")] = 0;
		fclose(df);
	}
	const char *error = NULL;
	if (info->timed_out)
		error = "the guest did not finish in time and was killed";
	else if (!*done_text)
		error = "the guest stopped before the agent finished (see console.log)";
	else if (!strncmp(done_text, "setup-failed", 12))
		error = done_text;
	size_t fails = 0, n_expect = 0;
	json_array_foreach(json_object_get(check, "expect"), i, o)
	{
		size_t before = json_array_size(verdicts);
		const char *runner = json_string_value(json_object_get(o, "runner"));
		if (runner && strcmp(runner, "vm")) {
			/* Scoped to another runner: shown, counted neither way. */
			snprintf(buf, sizeof(buf), "only the %s runner checks this entry", runner);
			verdict(verdicts, o, true, "not applicable in the VM lab", buf);
			json_object_set_new(json_array_get(verdicts, before), "not_applicable",
					    json_true());
			continue;
		}
		n_expect++;
		check_one(o, ctx, verdicts);
		/* Every verdict of the entry counts, not only its last. */
		for (size_t j = before; j < json_array_size(verdicts); j++)
			if (!json_is_true(json_object_get(json_array_get(verdicts, j), "ok")))
				fails++;
	}
	const char *v = error ? "ERROR" : fails ? "FAIL" : n_expect ? "PASS" : "PASS";

	/* result.json */
	double total = vm_now() - info->t_start;
	json_t *wall = json_pack("{s:f,s:f,s:f}", "total_s", total, "guest_assembly_s",
				 info->wall_guest_build_s, "qemu_s", info->wall_qemu_s);
	json_object_set_new(wall, "guest_phases", guest_phases(kmsg));
	json_t *result =
	    json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:O,s:O,s:O,s:O,s:O,s:O,s:o}",
		      "faultlun_vm_result", 1, "scenario", info->scenario, "name",
		      json_string_value(json_object_get(sc, "name")) ?: info->scenario, "path",
		      info->path, "accel", info->accel, "guest", info->guest, "verdict", v,
		      "expectations", verdicts, "steps", steps, "eh", eh, "eh_sequence", eh_seq,
		      "timeline", tl, "final_sysfs", last_values, "wall", wall);
	if (error)
		json_object_set_new(result, "error", json_string(error));
	if (guest)
		json_object_set(result, "guest_info", guest);
	if (max_stall >= 0)
		json_object_set_new(result, "max_stall_ms", json_real(max_stall));
	if (test_dev)
		json_object_set_new(result, "test_dev", json_string(test_dev));
	json_object_set_new(result, "run_dir", json_string(info->run_dir));
	snprintf(p, sizeof(p), "%s/result.json", info->run_dir);
	int rc = error ? FL_VM_ERROR : fails ? FL_VM_FAIL : FL_VM_PASS;
	if (json_dump_file(result, p, JSON_INDENT(1) | JSON_PRESERVE_ORDER) < 0) {
		fprintf(stderr, "faultlun vm: cannot write %s\n", p);
		rc = FL_VM_ERROR;
	}
	json_decref(result);
	json_decref(ctx);
	json_decref(guest);
	json_decref(kmsg);
	json_decref(steps);
	json_decref(uevents);
	json_decref(sysfs);
	json_decref(stall);
	json_decref(trace);
	json_decref(tl);
	json_decref(eh);
	json_decref(eh_seq);
	json_decref(verdicts);
	json_decref(last_values);
	return rc;
}
