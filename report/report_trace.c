/* SPDX-License-Identifier: MIT */
/*
 * report_trace.c - one VM-lab run as Chrome trace-event JSON (the "JSON
 * Object Format": {"traceEvents": [...]}, times in microseconds), for
 * Perfetto or chrome://tracing. Every lane of the report is a track (a
 * thread of one process): the workload's steps and the error handler's
 * rungs (one track per rung) are complete slices ("X"), state bands are
 * slices on a track per device / session, the kernel log, the target's
 * trace, uevents and the agent's markers are instant events ("i"), and the
 * healthy LUN's read latency is a counter ("C"). With dm-multipath, each
 * path is a track: its states as slices, dm's events on it as instants.
 */
#include "report_internal.h"

#include <errno.h>
#include <string.h>

enum {
	TID_STEPS = 1,
	TID_EH = 10,	/* + enum rp_level */
	TID_STATE = 30, /* + band row */
	TID_KERNEL = 60,
	TID_TARGET,
	TID_UEVENT,
	TID_SYSFS,
	TID_AGENT,
	TID_HEALTHY,
	TID_PATH = 80, /* + path index */
};

/* Guest time (seconds from the origin) as trace microseconds. */
static json_int_t us(const struct rp_model *m, double t)
{
	return (json_int_t)((t - m->tmin) * 1e6);
}

/* Names a track. */
static void thread_name(json_t *ev, int tid, const char *name)
{
	json_array_append_new(ev, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name",
					    "ph", "M", "pid", 1, "tid", tid, "args", "name", name));
	json_array_append_new(ev, json_pack("{s:s,s:s,s:i,s:i,s:{s:i}}", "name",
					    "thread_sort_index", "ph", "M", "pid", 1, "tid", tid,
					    "args", "sort_index", tid));
}

/* A complete slice. */
static void slice(json_t *ev, int tid, const char *name, json_int_t ts, json_int_t dur,
		  json_t *args)
{
	json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:i,s:i}", "name", name, "ph", "X", "ts", ts, "dur",
			      dur > 0 ? dur : 1, "pid", 1, "tid", tid);
	if (args)
		json_object_set_new(o, "args", args);
	json_array_append_new(ev, o);
}

/* The process's and the fixed threads' names (steps, EH rungs, kernel log, ...). */
static void trace_names(json_t *ev, const struct rp_model *m)
{
	char name[256];

	json_array_append_new(ev, json_pack("{s:s,s:s,s:i,s:{s:s}}", "name", "process_name", "ph",
					    "M", "pid", 1, "args", "name", m->res.name ?: "run"));
	thread_name(ev, TID_STEPS, "workload steps");
	for (int l = 0; l < RP_NLEVELS; l++) {
		snprintf(name, sizeof(name), "EH: %s", rp_level_names[l]);
		thread_name(ev, TID_EH + l, name);
	}
	thread_name(ev, TID_KERNEL, "kernel log");
	thread_name(ev, TID_TARGET, "target trace");
	thread_name(ev, TID_UEVENT, "uevents");
	thread_name(ev, TID_SYSFS, "sysfs");
	thread_name(ev, TID_AGENT, "agent");
	thread_name(ev, TID_HEALTHY, "healthy LUN stalls");
}

/* The workload's steps, the error-handler spans and the device and session states. */
static void trace_slices(json_t *ev, const struct rp_model *m)
{
	char name[256];

	for (size_t i = 0; i < m->res.nsteps; i++) {
		const struct fl_result_step *o = &m->res.steps[i];
		double a = o->t0 - m->origin;
		double b = o->t1 - m->origin;
		snprintf(name, sizeof(name), "step %lld %s -> %s", o->step, o->op ?: "?",
			 o->errno_name ?: "?");
		slice(ev, TID_STEPS, name, us(m, a), us(m, b) - us(m, a),
		      json_pack("{s:O}", "params", o->params ?: json_null()));
	}
	for (size_t k = 0; k < m->nspans; k++) {
		const struct rp_span *s = &m->spans[k];
		snprintf(name, sizeof(name), "%s: %s (%s)", rp_level_names[s->level],
			 rp_outcome_names[s->outcome], s->ended_by);
		slice(ev, TID_EH + (int)s->level, name, us(m, s->t0), us(m, s->t1) - us(m, s->t0),
		      json_pack("{s:i,s:s,s:s,s:b}", "cycle", s->cycle + 1, "ended_by", s->ended_by,
				"kernel", s->detail, "from_target_trace", s->from_trace));
	}
	for (size_t k = 0; k < m->nbands; k++) {
		const struct rp_band *b = &m->bands[k];
		snprintf(name, sizeof(name), "state: %s", b->name);
		thread_name(ev, TID_STATE + b->row, name);
		slice(ev, TID_STATE + b->row, b->state, us(m, b->t0), us(m, b->t1) - us(m, b->t0),
		      NULL);
	}
}

/* The dm-multipath paths: a thread each, their states as slices, their marks. */
static void trace_paths(json_t *ev, const struct rp_model *m)
{
	char name[256];

	for (size_t k = 0; k < m->npaths; k++) {
		snprintf(name, sizeof(name), "path %s (%s)", m->paths[k].port, m->paths[k].dev);
		thread_name(ev, TID_PATH + (int)k, name);
	}
	for (size_t k = 0; k < m->npsegs; k++) {
		const struct rp_pseg *s = &m->psegs[k];
		double a = s->t0 < m->tmin ? m->tmin : s->t0;
		snprintf(name, sizeof(name), "%s%s%s%s", s->dm, *s->chk ? "/" : "", s->chk,
			 strcmp(s->group, "current") ? "" : " (current group)");
		slice(
		    ev, TID_PATH + s->path, name, us(m, a), us(m, s->t1) - us(m, a),
		    json_pack("{s:s,s:s,s:s}", "dm", s->dm, "checker", s->chk, "group", s->group));
	}
	for (size_t k = 0; k < m->npmarks; k++) {
		const struct rp_pmark *pm = &m->pmarks[k];
		if (pm->t < m->tmin)
			continue;
		json_array_append_new(ev, json_pack("{s:s,s:s,s:s,s:I,s:i,s:i}", "name",
						    rp_pmark_names[pm->kind], "ph", "i", "s", "t",
						    "ts", us(m, pm->t), "pid", 1, "tid",
						    TID_PATH + pm->path));
	}
}

/* The timeline's lines as instants, and the healthy LUN's latency and stalls. */
static void trace_instants(json_t *ev, const struct rp_model *m)
{
	char name[256];

	for (size_t i = 0; i < m->res.ntimeline; i++) {
		const struct fl_result_event *o = &m->res.timeline[i];
		const char *src = o->src;
		double t = o->t - m->origin;
		int tid = !strcmp(src, "kernel")   ? TID_KERNEL
			  : !strcmp(src, "target") ? TID_TARGET
			  : !strcmp(src, "uevent") ? TID_UEVENT
			  : !strcmp(src, "sysfs")  ? TID_SYSFS
			  : !strcmp(src, "agent")  ? TID_AGENT
						   : 0;
		if (!tid || t < m->tmin)
			continue;
		json_array_append_new(ev, json_pack("{s:s,s:s,s:s,s:I,s:i,s:i}", "name", o->text,
						    "ph", "i", "s", "t", "ts", us(m, t), "pid", 1,
						    "tid", tid));
	}
	for (size_t i = 0; i < m->res.nprobes; i++) {
		double t = m->res.probes[i].t - m->origin;
		double ms = m->res.probes[i].ms;
		if (t < m->tmin)
			continue;
		json_array_append_new(ev, json_pack("{s:s,s:s,s:I,s:i,s:i,s:{s:f}}", "name",
						    "healthy LUN read latency (ms)", "ph", "C",
						    "ts", us(m, t), "pid", 1, "tid", TID_HEALTHY,
						    "args", "ms", ms));
		if (ms >= 1000) {
			snprintf(name, sizeof(name), "stall %.1f s", ms / 1000);
			slice(ev, TID_HEALTHY, name, us(m, t), (json_int_t)(ms * 1000), NULL);
		}
	}
}

/* See report_internal.h. */
int rp_write_chrome_trace(const struct rp_model *m, const char *path)
{
	json_t *ev = json_array();

	trace_names(ev, m);
	trace_slices(ev, m);
	trace_paths(ev, m);
	trace_instants(ev, m);
	json_t *doc = json_pack("{s:o,s:s}", "traceEvents", ev, "displayTimeUnit", "ms");
	int rc = json_dump_file(doc, path, JSON_COMPACT) < 0 ? -EIO : 0;
	if (rc)
		fprintf(stderr, "faultlun report: cannot write %s\n", path);
	json_decref(doc);
	return rc;
}
