/* SPDX-License-Identifier: MIT */
/*
 * vm_check.c - turns what a VM-lab guest observed into one timeline and into
 * the observations (struct fl_obs) that the one checker of scenario/
 * (fl_check_judge, scenario/fl_check.h) judges (docs/vm-lab.md,
 * "Expectations").
 *
 * Inputs (in the results share, all on the guest's CLOCK_MONOTONIC): the
 * kernel log (/dev/kmsg records "PRI,SEQ,USEC,FLAGS;TEXT"), uevents, sysfs
 * changes, workload steps, healthy-LUN probes, the faultlun trace (t_us since
 * its engine started, aligned on the agent's "engine start" marker).
 * The error-handler steps are recognised here, in the kernel log (SCSI
 * midlayer, libiscsi with debug_libiscsi_eh, LIO's TMR lines) and in the
 * target's trace (the task-management functions it received: an abort that
 * succeeds leaves no kernel-log line), one TMF counted once
 * (eh_merge_trace). The judge gives each expectation one
 * verdict per thing it asserts: pass, fail, or not applicable (scoped to
 * another runner, or not observable here), the last counted neither way.
 * result.json holds everything.
 */
#include "fl_result.h"
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
	enum fl_eh_step step;
	const char *regex;
} eh_patterns[] = {
    /* scsi_error.c with logging_level ERROR bits, libiscsi with debug_libiscsi_eh, LIO */
    {FL_EH_ABORT, "(iscsi_eh_abort aborting|aborting command|ABORT_TASK: Found)"},
    {FL_EH_LUN_RESET, "(Sending BDR|iscsi_eh_device_reset LU Reset|LUN_RESET: )"},
    {FL_EH_TARGET_RESET,
     "(Sending target reset|iscsi_eh_target_reset tgt Reset|TARGET_WARM_RESET)"},
    {FL_EH_BUS_RESET, "Sending BRST"},
    {FL_EH_HOST_RESET, "(Sending HRST|host reset)"},
    {FL_EH_CONN_ERROR, "detected conn error"},
    {FL_EH_SESSION_RESET, "iscsi_eh_session_reset"},
    {FL_EH_SESSION_RECOVERY_TIMEOUT, "session recovery timed out"},
    {FL_EH_OFFLINE, "(Device offlined|Offlining disk|rejecting I/O to offline)"},
    {FL_EH_IO_ERROR, "I/O error, dev"},
};
#define EH_PATTERNS (sizeof(eh_patterns) / sizeof(eh_patterns[0]))

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

/*
 * Reads every trace file of the run into the timeline (guest times "t") and
 * returns its events as compact JSON lines (without the guest time); the
 * events themselves, with the guest time "t", are appended to events.
 */
static json_t *load_traces(const char *dir, json_t *kmsg, json_t *tl, double off, json_t *events)
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
			char *line = json_dumps(o, JSON_COMPACT);
			if (line)
				json_array_append_new(all, json_string(line));
			free(line);
			double t = base + json_integer_value(json_object_get(o, "t_us")) / 1e6;
			json_object_set_new(o, "t", json_real(t));
			json_array_append(events, o);
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
	    {"job_begin", "faultlun-agent: job "},
	    {"job_over", " over (rc "},
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

/* The record of step idx in steps.jsonl, or NULL. */
static json_t *find_step(json_t *steps, size_t idx)
{
	size_t i;
	json_t *s;

	json_array_foreach(steps, i, s)
	{
		json_t *n = json_object_get(s, "step");
		if (json_is_integer(n) && json_integer_value(n) == (json_int_t)idx)
			return s;
	}
	return NULL;
}

/* What the agent recorded of a step, as the checker's observation. */
static void step_obs(json_t *rec, const struct fl_step *step, struct fl_step_obs *o)
{
	memset(o, 0, sizeof(*o));
	if (!rec) {
		o->end = FL_END_NOT_RUN;
		snprintf(o->why, sizeof(o->why), "the agent recorded no end of this step");
		return;
	}
	const char *e = json_string_value(json_object_get(rec, "errno"));
	if (e && !strcmp(e, "NOT_RUN")) {
		/* The agent could not start it (a ctl step without a socket). */
		o->end = FL_END_NOT_RUN;
		snprintf(o->why, sizeof(o->why), "%s",
			 json_string_value(json_object_get(rec, "not_run")) ?: "could not start");
		o->elapsed_ms = json_number_value(json_object_get(rec, "elapsed_ms"));
		return;
	}
	if (!e)
		e = "CRASHED";
	o->end = !strcmp(e, "TIMEOUT")	 ? FL_END_TIMEOUT
		 : !strcmp(e, "CRASHED") ? FL_END_CRASHED
					 : FL_END_DONE;
	snprintf(o->errno_name, sizeof(o->errno_name), "%s", e);
	/* a stamped read's finding: which block is not what was acknowledged */
	snprintf(o->why, sizeof(o->why), "%s",
		 json_string_value(json_object_get(rec, "integrity")) ?: "");
	json_t *st = json_object_get(rec, "status");
	if (json_is_integer(st)) {
		o->has_status = true;
		o->status = (uint8_t)json_integer_value(st);
	}
	if (json_is_integer(json_object_get(rec, "sense_key"))) {
		o->has_sense = true;
		o->key = (uint8_t)json_integer_value(json_object_get(rec, "sense_key"));
		o->asc = (uint8_t)json_integer_value(json_object_get(rec, "asc"));
		o->ascq = (uint8_t)json_integer_value(json_object_get(rec, "ascq"));
	}
	o->elapsed_ms = json_number_value(json_object_get(rec, "elapsed_ms"));
	/* Records of a single run before repeats_done was always written: 1 if it held. */
	json_t *rd = json_object_get(rec, "repeats_done");
	if (json_is_integer(rd))
		o->repeats_done = (uint32_t)json_integer_value(rd);
	else
		o->repeats_done = o->end == FL_END_DONE && !strcmp(e, "OK") ? step->repeat : 0;
}

/* The last sampled device/state of each LUN, for the checker. */
struct state_ctx {
	json_t *last_values;
	int test_lun;
};

/* fl_obs.device_state: the last sysfs device/state text of a LUN, or NULL. */
static const char *device_state(void *arg, int lun)
{
	const struct state_ctx *c = arg;
	char name[32];

	snprintf(name, sizeof(name), "lun%d.state", lun < 0 ? c->test_lun : lun);
	return json_string_value(json_object_get(c->last_values, name));
}

/* The kernel log's lines into lines[], the agent's own left out; returns how many. */
static size_t kmsg_lines(json_t *kmsg, const char **lines)
{
	size_t i, n = 0;
	json_t *o;

	json_array_foreach(kmsg, i, o)
	{
		const char *t = json_string_value(json_object_get(o, "text"));
		if (t && !strstr(t, "faultlun-agent:"))
			lines[n++] = t;
	}
	return n;
}

/* Writes RUN_DIR/obs.json (fl_obs_write); a failure is said, not fatal. */
static void write_obs(const struct fl_obs *obs, const char *run_dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/obs.json", run_dir);
	if (fl_obs_write(obs, p) < 0)
		fprintf(stderr, "faultlun vm: cannot write %s\n", p);
}

/* Appends the verdicts v[0..n) to out as result.json entries (see judge). */
static void verdicts_json(json_t *out, const struct fl_check *check, const struct fl_verdict *v,
			  int n)
{
	for (int k = 0; k < n; k++) {
		static const char *const word[] = {
		    [FL_VERDICT_PASS] = "pass",
		    [FL_VERDICT_FAIL] = "fail",
		    [FL_VERDICT_NA] = "not_applicable",
		};
		json_t *e = json_pack("{s:I,s:s,s:s,s:s,s:s}", "expect", (json_int_t)v[k].expect,
				      "kind", fl_expect_kind_word(v[k].kind), "verdict",
				      word[v[k].v], "what", v[k].what, "observed", v[k].observed);
		if (e && v[k].v != FL_VERDICT_NA)
			json_object_set_new(e, "ok", json_boolean(v[k].v == FL_VERDICT_PASS));
		/* The workload step the entry is about, for the report's links. */
		if (e && v[k].expect < check->nexpects && check->expects[v[k].expect].step >= 0)
			json_object_set_new(e, "step",
					    json_integer(check->expects[v[k].expect].step));
		json_array_append_new(out, e);
	}
}

/*
 * Judges the check against what the guest recorded (the observations also go
 * to RUN_DIR/obs.json, fl_obs_write); returns the verdicts as
 * result.json entries ({expect, kind, verdict, ok, what, observed}; "ok" only
 * for pass and fail) and sets *exit_code as fl_verdicts_exit (0, 1, or 77
 * when none applied).
 */
static json_t *judge(const struct fl_scenario *sc, const char *run_dir, json_t *steps, json_t *kmsg,
		     json_t *eh, json_t *last_values, double max_stall, json_t *trace,
		     json_t *paths, json_t *dh, const char *kernel_release, const char *vm_path,
		     int *exit_code)
{
	static const struct fl_check none;
	const struct fl_check *check = fl_scenario_check(sc) ? fl_scenario_check(sc) : &none;
	json_t *out = json_array();
	size_t i;
	json_t *o;

	struct fl_step_obs *so = calloc(check->nsteps ? check->nsteps : 1, sizeof(*so));
	const char **lines = calloc(json_array_size(kmsg) + 1, sizeof(*lines));
	const char **events = calloc(json_array_size(trace) + 1, sizeof(*events));
	enum fl_eh_step *seq = calloc(json_array_size(eh) + 1, sizeof(*seq));
	const char **path_lines = calloc(json_array_size(paths) + 1, sizeof(*path_lines));
	const char **dh_lines = calloc(json_array_size(dh) + 1, sizeof(*dh_lines));
	struct fl_verdict *v = NULL;
	int n = -ENOMEM;

	*exit_code = FL_VM_ERROR;
	if (!so || !lines || !events || !seq || !path_lines || !dh_lines)
		goto out;
	for (size_t k = 0; k < check->nsteps; k++)
		step_obs(find_step(steps, k), &check->steps[k], &so[k]);
	size_t nlines = kmsg_lines(kmsg, lines), nevents = 0, nseq = 0;
	json_array_foreach(trace, i, o) events[nevents++] = json_string_value(o);
	json_array_foreach(eh, i, o) seq[nseq++] = (enum fl_eh_step)json_integer_value(o);
	json_array_foreach(paths, i, o) path_lines[i] = json_string_value(o);
	json_array_foreach(dh, i, o) dh_lines[i] = json_string_value(o);
	struct state_ctx states = {.last_values = last_values, .test_lun = vm_test_lun(sc)};
	struct fl_obs obs = {
	    .runner = FL_RUNNER_VM,
	    .steps = so,
	    .nsteps = check->nsteps,
	    .can_status_all = false,
	    .has_kernel = true,
	    .kmsg = lines,
	    .nkmsg = nlines,
	    .eh = seq,
	    .neh = nseq,
	    .device_state = device_state,
	    .device_state_arg = &states,
	    .test_lun = states.test_lun,
	    .has_stall = true,
	    .max_stall_ms = max_stall,
	    .has_trace = true,
	    .trace = events,
	    .ntrace = nevents,
	    .kernel_release = kernel_release,
	    .vm_path = fl_check_path_by_name(vm_path),
	    /* the map's paths, with the multipath knob */
	    .has_paths = check->knobs.multipath == 1,
	    .paths = path_lines,
	    .npaths = json_array_size(paths),
	    /* the device-handler observer's lines (vm/agent.sh dh_watch) */
	    .has_dh = dh != NULL,
	    .dh = dh_lines,
	    .ndh = json_array_size(dh),
	};
	/* The observations as the checker saw them, to judge them again elsewhere. */
	write_obs(&obs, run_dir);
	n = fl_check_judge(check, &obs, &v);
	if (n < 0)
		goto out;
	verdicts_json(out, check, v, n);
	*exit_code = fl_verdicts_exit(v, (size_t)n);
out:
	if (n < 0)
		fprintf(stderr, "faultlun vm: cannot judge the run: %s\n", strerror(-n));
	free(v);
	free(so);
	free(lines);
	free(events);
	free(seq);
	free(path_lines);
	free(dh_lines);
	return out;
}

/* One path line ("PORT DEV DM CHK PRIO GROUP") into path_lines' output (see there). */
static void path_add(json_t *out, json_t *before, json_t *last, const char *line, double t,
		     double t_workload)
{
	char port[64];

	if (sscanf(line, "%63s", port) != 1)
		return;
	json_object_set_new(last, port, json_string(line));
	if (t < t_workload) {
		json_object_set_new(before, port, json_string(line));
		return;
	}
	if (json_object_size(before)) {
		const char *k;
		json_t *v;
		json_object_foreach(before, k, v) json_array_append(out, v);
		json_object_clear(before);
	}
	json_array_append_new(out, json_string(line));
}

/*
 * dm-multipath's own line for a path ("device-mapper: multipath: 254:0: Failing path 8:0." or
 * "Reinstating path 8:0."), as a path line: the port's last line with DM "failed" or "active";
 * NULL when the line is not one, the device number has no "pathdev" line or nothing changes.
 */
static json_t *path_from_dm(const char *text, json_t *devs, json_t *last)
{
	const char *f = strstr(text, "device-mapper: multipath: ");
	const char *p = f ? strstr(f, ": Failing path ") : NULL, *dm = "failed";
	char devno[32], port[64], dev[32], old[32], rest[160];

	if (f && !p && (p = strstr(f, ": Reinstating path ")))
		dm = "active";
	if (!p || sscanf(strchr(p + 2, ' ') + 6, "%31[0-9:]", devno) != 1)
		return NULL;
	const char *who = json_string_value(json_object_get(devs, devno));
	const char *was = who ? json_string_value(json_object_get(last, who)) : NULL;
	if (!was || sscanf(was, "%63s %31s %31s %159[^\n]", port, dev, old, rest) != 4 ||
	    !strcmp(old, dm))
		return NULL;
	return json_sprintf("%s %s %s %s", port, dev, dm, rest);
}

/*
 * The agent's dm-multipath path lines ("faultlun-agent: path PORT DEV DM CHK
 * PRIO GROUP"): of each port the last one before the workload started, then
 * every one after it, in order (fl_obs.paths). dm-multipath's own Failing path
 * and Reinstating path lines join them as the path's DM state at that moment,
 * placed on a port by the agent's "pathdev PORT DEV MAJ:MIN" line: a path
 * failed and reinstated between two of the observer's samples is still seen.
 */
static json_t *path_lines(json_t *kmsg, double t_workload)
{
	static const char tag[] = "faultlun-agent: path ", devtag[] = "faultlun-agent: pathdev ";
	json_t *before = json_object(), *out = json_array(), *o;
	json_t *devs = json_object(), *last = json_object();
	size_t i;

	json_array_foreach(kmsg, i, o)
	{
		const char *text = json_string_value(json_object_get(o, "text"));
		double t = json_real_value(json_object_get(o, "t"));
		const char *p = text ? strstr(text, tag) : NULL;
		char port[64], dev[32], devno[32];

		if (!text)
			continue;
		if ((p = strstr(text, devtag)) &&
		    sscanf(p + sizeof(devtag) - 1, "%63s %31s %31[0-9:]", port, dev, devno) == 3) {
			json_object_set_new(devs, devno, json_string(port));
			continue;
		}
		if ((p = strstr(text, tag))) {
			path_add(out, before, last, p + sizeof(tag) - 1, t, t_workload);
			continue;
		}
		json_t *line = path_from_dm(text, devs, last);
		if (line)
			path_add(out, before, last, json_string_value(line), t, t_workload);
		json_decref(line);
	}
	const char *k;
	json_t *v;
	json_object_foreach(before, k, v) json_array_append(out, v);
	json_decref(before);
	json_decref(devs);
	json_decref(last);
	return out;
}

/*
 * The agent's device-handler lines ("faultlun-agent: dh DEV HANDLER ACCESS_STATE ..."), in order
 * (fl_obs.dh); NULL when the log has no "faultlun-agent: dh-observer on" mark, i.e. the run was
 * made by an agent without the observer (a run recorded before it): then no disk is said to have
 * had none.
 */
static json_t *dh_lines_of(json_t *kmsg)
{
	static const char tag[] = "faultlun-agent: dh ", on[] = "faultlun-agent: dh-observer on";
	json_t *out = json_array(), *o;
	bool seen_on = false;
	size_t i;

	json_array_foreach(kmsg, i, o)
	{
		const char *text = json_string_value(json_object_get(o, "text"));
		const char *p = text ? strstr(text, tag) : NULL;

		if (text && strstr(text, on))
			seen_on = true;
		if (p)
			json_array_append_new(out, json_string(p + sizeof(tag) - 1));
	}
	if (!seen_on) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* See vm_internal.h. */
/* How far apart a kernel-log step and a trace TMF of one kind may be to be one TMF (s). */
#define EH_PAIR_WINDOW_S 2.0

/* The error-handler step a trace TMF name stands for; -1: none. */
static int eh_step_of_tmf(const char *tmf)
{
	if (!tmf)
		return -1;
	if (!strcmp(tmf, "abort_task"))
		return FL_EH_ABORT;
	if (!strcmp(tmf, "lun_reset"))
		return FL_EH_LUN_RESET;
	if (!strcmp(tmf, "target_warm_reset") || !strcmp(tmf, "target_cold_reset"))
		return FL_EH_TARGET_RESET;
	return -1;
}

/* Orders error-handler steps by time (then as found). */
static int cmp_eh(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double tx = json_real_value(json_object_get(x, "t")),
	       ty = json_real_value(json_object_get(y, "t"));
	json_int_t ix = json_integer_value(json_object_get(x, "n")),
		   iy = json_integer_value(json_object_get(y, "n"));

	return tx < ty ? -1 : tx > ty ? 1 : ix < iy ? -1 : ix > iy;
}

/*
 * Adds to eh (the kernel-log steps, in time order) the TMFs the target's
 * trace shows from the workload's start: ABORT TASK, LOGICAL UNIT RESET,
 * TARGET WARM/COLD RESET. A successful abort leaves no kernel-log line; the
 * trace has it. One TMF is counted once: a trace TMF is the same as a
 * kernel-log step of its kind no more than EH_PAIR_WINDOW_S away that no
 * other trace TMF was paired with (the nearest), and then adds nothing.
 * Sorts eh by time.
 */
static void eh_merge_trace(json_t *eh, json_t *trace_events, double t_workload)
{
	size_t n0 = json_array_size(eh), i;
	bool *paired = calloc(n0 + 1, sizeof(*paired));
	json_t *o;

	if (!paired)
		return;
	json_array_foreach(trace_events, i, o)
	{
		const char *ev = json_string_value(json_object_get(o, "event"));
		const char *tmf = json_string_value(json_object_get(o, "tmf"));
		double t = json_real_value(json_object_get(o, "t"));
		int step = eh_step_of_tmf(tmf);
		size_t best = n0;
		double best_d = EH_PAIR_WINDOW_S;

		if (!ev || strcmp(ev, "tmf") || step < 0 || t < t_workload)
			continue;
		for (size_t k = 0; k < n0; k++) {
			json_t *e = json_array_get(eh, k);
			double d = json_real_value(json_object_get(e, "t")) - t;

			if (d < 0)
				d = -d;
			if (!paired[k] &&
			    !strcmp(json_string_value(json_object_get(e, "step")) ?: "",
				    fl_eh_names[step]) &&
			    d <= best_d) {
				best = k;
				best_d = d;
			}
		}
		if (best < n0) {
			paired[best] = true;
			continue;
		}
		char text[96];
		snprintf(text, sizeof(text), "target trace: tmf %s", tmf);
		json_array_append_new(eh, json_pack("{s:f,s:s,s:s,s:s}", "t", t, "step",
						    fl_eh_names[step], "text", text, "source",
						    "trace"));
	}
	free(paired);
	size_t n = json_array_size(eh);
	json_t **v = calloc(n + 1, sizeof(*v));
	if (!v)
		return;
	for (size_t k = 0; k < n; k++) {
		v[k] = json_incref(json_array_get(eh, k));
		json_object_set_new(v[k], "n", json_integer((json_int_t)k));
	}
	qsort(v, n, sizeof(*v), cmp_eh);
	json_array_clear(eh);
	for (size_t k = 0; k < n; k++) {
		json_object_del(v[k], "n");
		json_array_append_new(eh, v[k]);
	}
	free(v);
}

/* The error-handler sequence of eh (in time order): repeats of one step in a row count once. */
static void eh_sequence(json_t *eh, json_t *names, json_t *ids)
{
	int last = -1;
	size_t i;
	json_t *o;

	json_array_foreach(eh, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "step"));
		int step = -1;

		for (int k = 0; k < FL_EH_NR && name; k++)
			if (!strcmp(fl_eh_names[k], name))
				step = k;
		if (step < 0 || step == last)
			continue;
		json_array_append_new(names, json_string(fl_eh_names[step]));
		json_array_append_new(ids, json_integer(step));
		last = step;
	}
}

/*
 * The error-handler steps the kernel log shows after the workload starts (t_workload), in
 * log order; every kernel and agent line also joins the timeline tl.
 */
static json_t *kmsg_eh_steps(json_t *kmsg, json_t *tl, double t_workload)
{
	regex_t res[EH_PATTERNS];
	json_t *eh = json_array();
	size_t i;
	json_t *o;

	for (size_t k = 0; k < EH_PATTERNS; k++)
		regcomp(&res[k], eh_patterns[k].regex, REG_EXTENDED | REG_NOSUB);
	json_array_foreach(kmsg, i, o)
	{
		const char *text = json_string_value(json_object_get(o, "text"));
		double t = json_real_value(json_object_get(o, "t"));
		bool agent = strstr(text, "faultlun-agent:") != NULL;
		add_event(tl, t, agent ? "agent" : "kernel", text);
		if (agent || t < t_workload)
			continue;
		for (size_t k = 0; k < EH_PATTERNS; k++) {
			enum fl_eh_step step = eh_patterns[k].step;
			if (regexec(&res[k], text, 0, NULL, 0))
				continue;
			json_array_append_new(eh, json_pack("{s:f,s:s,s:s,s:s}", "t", t, "step",
							    fl_eh_names[step], "text", text,
							    "source", "kernel"));
			break;
		}
	}
	for (size_t k = 0; k < EH_PATTERNS; k++)
		regfree(&res[k]);
	return eh;
}

/* Adds the uevents to the timeline, with the environment keys that tell a device's story. */
static void timeline_uevents(json_t *tl, json_t *uevents)
{
	char buf[1024];
	size_t i;
	json_t *o;

	json_array_foreach(uevents, i, o)
	{
		int n = snprintf(buf, sizeof(buf), "%s %s",
				 json_string_value(json_object_get(o, "action")) ?: "?",
				 json_string_value(json_object_get(o, "devpath")) ?: "?");
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(o, "env"), k, v)
		{
			if (strncmp(k, "SDEV_", 5) && strncmp(k, "DM_", 3) &&
			    strcmp(k, "DEVNAME") && strcmp(k, "DISK_RO") && strcmp(k, "RESIZE") &&
			    strncmp(k, "ISCSI", 5))
				continue;
			if (n >= 0 && (size_t)n < sizeof(buf))
				n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %s=%s", k,
					      json_string_value(v) ?: "");
		}
		add_event(tl, json_real_value(json_object_get(o, "t")), "uevent", buf);
	}
}

/* Adds the sysfs changes to the timeline; returns each attribute's last value. */
static json_t *timeline_sysfs(json_t *tl, json_t *sysfs)
{
	json_t *last_values = json_object();
	char buf[1024];
	size_t i;
	json_t *o;

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
	return last_values;
}

/* Adds each workload step's start and end to the timeline. */
static void timeline_steps(json_t *tl, json_t *steps)
{
	char buf[1024];
	size_t i;
	json_t *o;

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
}

/*
 * The healthy LUN's probes, for the report; stalls of a second or more join the timeline.
 * *max_stall is the longest read, -1 when there is no healthy LUN to probe.
 */
static json_t *stall_probes(json_t *tl, json_t *stall, double *max_stall)
{
	json_t *probes = json_array();
	char buf[1024];
	size_t i;
	json_t *o;

	*max_stall = -1;
	json_array_foreach(stall, i, o)
	{
		double ms = json_number_value(json_object_get(o, "ms"));
		if (!json_object_get(o, "ms"))
			continue;
		json_t *pr = json_pack("{s:f,s:f}", "t",
				       json_number_value(json_object_get(o, "t0")), "ms", ms);
		if (pr && json_is_true(json_object_get(o, "unfinished")))
			json_object_set_new(pr, "unfinished", json_true());
		json_array_append_new(probes, pr);
		if (ms > *max_stall)
			*max_stall = ms;
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
	return probes;
}

/*
 * Why the run could not be judged, NULL when it could: the guest timed out, stopped before
 * the agent wrote dir/done, or the agent's set-up failed (then done_text, the first line of
 * dir/done, is the reason).
 */
static const char *run_error(const struct vm_run_info *info, char *done_text, size_t size)
{
	char p[PATH_MAX];

	done_text[0] = 0;
	snprintf(p, sizeof(p), "%s/done", info->results);
	FILE *df = fopen(p, "r");
	if (df) {
		if (!fgets(done_text, (int)size, df))
			done_text[0] = 0;
		done_text[strcspn(done_text, "\n")] = 0;
		fclose(df);
	}
	if (info->timed_out)
		return "the guest did not finish in time and was killed";
	if (!*done_text)
		return "the guest stopped before the agent finished (see console.log)";
	if (!strncmp(done_text, "setup-failed", 12))
		return done_text;
	return NULL;
}

/* The scenario's knobs that are set, by name: a number, or a knob's word. */
static json_t *knobs_json(const struct fl_scenario *sc)
{
	json_t *knobs = json_object();
	const struct fl_check *check = fl_scenario_check(sc);

	for (size_t k = 0; check && k < fl_knob_count; k++) {
		int kv = *(const int *)((const char *)&check->knobs + fl_knob_descs[k].offset);
		if (kv >= 0)
			json_object_set_new(knobs, fl_knob_descs[k].name, json_integer(kv));
		else if (kv < -1 && fl_knob_descs[k].words)
			json_object_set_new(
			    knobs, fl_knob_descs[k].name,
			    json_string(fl_knob_descs[k].words[FL_KNOB_WORD_INDEX(kv)]));
	}
	return knobs;
}

/* result.json's verdict: PASS, FAIL, N/A or ERROR (error: why the run could not be judged). */
static const char *verdict_word(int rc, const char *error)
{
	return error		  ? "ERROR"
	       : rc == FL_VM_PASS ? "PASS"
	       : rc == FL_VM_FAIL ? "FAIL"
	       : rc == FL_VM_SKIP ? "N/A"
				  : "ERROR";
}

/* The run's wall-time split (whole run, guest assembly, QEMU) and the guest's phases. */
static json_t *wall_json(const struct vm_run_info *info, json_t *kmsg)
{
	double total = vm_now() - info->t_start;
	json_t *wall = json_pack("{s:f,s:f,s:f}", "total_s", total, "guest_assembly_s",
				 info->wall_guest_build_s, "qemu_s", info->wall_qemu_s);

	json_object_set_new(wall, "guest_phases", guest_phases(kmsg));
	return wall;
}

/*
 * Adds result.json's optional parts: the batch job, what the guest said of itself, the
 * healthy LUN's longest stall and every probe, the trace with guest times, the knobs and the
 * test device (probes and trace_events are taken).
 */
static void result_extras(json_t *result, const struct fl_scenario *sc,
			  const struct vm_run_info *info, json_t *guest, double max_stall,
			  json_t *probes, json_t *trace_events)
{
	const char *test_dev = json_string_value(json_object_get(guest, "test_dev"));

	if (info->batch_jobs)
		json_object_set_new(
		    result, "batch",
		    json_pack("{s:i,s:i}", "job", info->batch_job, "jobs", info->batch_jobs));
	if (guest)
		json_object_set(result, "guest_info", guest);
	if (max_stall >= 0)
		json_object_set_new(result, "max_stall_ms", json_real(max_stall));
	/* For the report: every healthy-LUN probe and the trace with guest times. */
	json_object_set_new(result, "probes", probes);
	json_object_set_new(result, "trace_events", trace_events);
	json_object_set_new(result, "knobs", knobs_json(sc));
	if (test_dev)
		json_object_set_new(result, "test_dev", json_string(test_dev));
}

int vm_check_run(const struct fl_scenario *sc, const struct vm_run_info *info)
{
	const char *dir = info->results;
	char p[PATH_MAX];
	json_t *kmsg = load_kmsg(dir);
	json_t *steps = load_jsonl(dir, "steps.jsonl");
	json_t *uevents = load_jsonl(dir, "uevents.jsonl");
	json_t *sysfs = load_jsonl(dir, "sysfs.jsonl");
	json_t *stall = load_jsonl(dir, "stall.jsonl");
	json_t *tl = json_array();
	double off = clock_offset(kmsg);
	shift_times(steps, off);
	shift_times(uevents, off);
	shift_times(sysfs, off);
	shift_times(stall, off);

	/* Kernel log, with the error-handler steps recognised after the workload starts. */
	json_t *eh_seq = json_array(), *eh_ids = json_array();
	double t_workload = kmsg_time_of(kmsg, "faultlun-agent: workload start");
	json_t *eh = kmsg_eh_steps(kmsg, tl, t_workload);
	json_t *paths = path_lines(kmsg, t_workload);
	json_t *dh = dh_lines_of(kmsg);

	/* The target's trace; its TMFs join the error-handler steps (eh_merge_trace). */
	json_t *trace_events = json_array();
	json_t *trace = load_traces(dir, kmsg, tl, off, trace_events);
	eh_merge_trace(eh, trace_events, t_workload);
	eh_sequence(eh, eh_seq, eh_ids);

	timeline_uevents(tl, uevents);
	json_t *last_values = timeline_sysfs(tl, sysfs);
	timeline_steps(tl, steps);
	double max_stall;
	json_t *probes = stall_probes(tl, stall, &max_stall);
	tl = sort_timeline(tl);

	snprintf(p, sizeof(p), "%s/guest.json", dir);
	json_t *guest = json_load_file(p, 0, NULL);

	/* Verdicts. */
	char done_text[256];
	const char *error = run_error(info, done_text, sizeof(done_text));
	int judged;
	json_t *verdicts =
	    judge(sc, info->run_dir, steps, kmsg, eh_ids, last_values, max_stall, trace, paths, dh,
		  json_string_value(json_object_get(guest, "kernel")), info->path, &judged);
	/* fl_verdicts_exit's 0, 1 and 77 are FL_VM_PASS, FL_VM_FAIL and FL_VM_SKIP. */
	int rc = error ? FL_VM_ERROR : judged;
	const char *v = verdict_word(rc, error);
	if (rc == FL_VM_SKIP)
		fprintf(stderr,
			"faultlun vm: no expectation of %s applies in the VM lab: nothing "
			"was checked\n",
			info->scenario);

	/* result.json */
	json_t *wall = wall_json(info, kmsg);
	json_t *result = json_pack(
	    "{s:i,s:i,s:s,s:s,s:s,s:s,s:s,s:s,s:O,s:O,s:O,s:O,s:O,s:O,s:o}", "faultlun_vm_result",
	    1, "version", FL_RESULT_VERSION, "scenario", info->scenario, "name",
	    fl_scenario_name(sc) ?: info->scenario, "path", info->path, "accel", info->accel,
	    "guest", info->guest, "verdict", v, "expectations", verdicts, "steps", steps, "eh", eh,
	    "eh_sequence", eh_seq, "timeline", tl, "final_sysfs", last_values, "wall", wall);
	if (error)
		json_object_set_new(result, "error", json_string(error));
	vm_kernel_record(kmsg, result, info->scenario);
	result_extras(result, sc, info, guest, max_stall, probes, trace_events);
	json_object_set_new(result, "run_dir", json_string(info->run_dir));
	snprintf(p, sizeof(p), "%s/result.json", info->run_dir);
	if (json_dump_file(result, p, JSON_INDENT(1) | JSON_PRESERVE_ORDER) < 0) {
		fprintf(stderr, "faultlun vm: cannot write %s\n", p);
		rc = FL_VM_ERROR;
	}
	json_t *held[] = {result, guest, tl,	  eh,	 eh_seq, eh_ids, verdicts, last_values,
			  kmsg,	  steps, uevents, sysfs, stall,	 trace,	 paths,	   dh};
	for (size_t k = 0; k < sizeof(held) / sizeof(held[0]); k++)
		json_decref(held[k]);
	return rc;
}
