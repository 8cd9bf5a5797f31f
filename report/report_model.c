/* SPDX-License-Identifier: MIT */
/*
 * report_model.c - turns a VM-lab result into the report's model: the rungs
 * of the error handler's escalation ladder with their outcome and the timer
 * or answer that ended each, the cycles, the messages of one cycle paired
 * with what the target received and decided, state bands and the summary.
 *
 * The kernel's side comes from the kernel-log lines vm_check.c keeps in the
 * timeline (Linux 6.1 wording: scsi_error.c with scsi_logging_level 7,
 * libiscsi with debug_libiscsi_eh 1, LIO's TMR lines); the timers from the
 * knobs the guest really had (guest_info.knobs), else the scenario's. The
 * target's side comes from its trace (tmf: arrived and decided; tmf_done /
 * reset: answered; conn: closed, login; inject: the faulted command).
 */
#include "report_internal.h"
#include "fl_action.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NONE (-1e9)

const char *const rp_level_names[RP_NLEVELS] = {
    [RP_TIMEOUT] = "command timeout",
    [RP_ABORT] = "abort",
    [RP_LUN_RESET] = "LUN reset",
    [RP_TARGET_RESET] = "target reset",
    [RP_SESSION] = "session reset + relogin",
    [RP_END] = "offline / I/O error",
};
const char *const rp_outcome_names[RP_NOUTCOMES] = {
    [RP_COMPLETED] = "completed",
    [RP_FAILED] = "failed",
    [RP_TIMED_OUT] = "timed out",
    [RP_SKIPPED] = "not sent",
};
const char *const rp_outcome_colors[RP_NOUTCOMES] = {
    [RP_COMPLETED] = "#2a9d5c",
    [RP_FAILED] = "#d03b2f",
    [RP_TIMED_OUT] = "#e69a1c",
    [RP_SKIPPED] = "#9aa0a6",
};

/* Parser state over the kernel log. */
struct parse {
	struct rp_model *m;
	int open[RP_NLEVELS]; /* index of the open span per level, -1 */
	bool in_cycle, tmf_timedout, finish, recovery_timedout;
	double cmd_start; /* when the command of the next cycle was (re)sent */
	int ntimeouts;	  /* command timer firings since cmd_start */
	char hostbyte[40];
};

/* A knob in seconds: the guest's value, else the scenario's, else -1. */
static double knob(double guest, double scenario)
{
	return guest >= 0 ? guest : scenario;
}

/* "2 s" / "0.5 s" into buf. */
static const char *secs(char *buf, size_t len, double s)
{
	snprintf(buf, len, s == floor(s) ? "%.0f s" : "%.1f s", s);
	return buf;
}

/* Opens a span of level at t; returns its index or -1 when full. */
static int span_open(struct parse *p, enum rp_level level, double t, const char *detail)
{
	struct rp_model *m = p->m;
	if (m->nspans >= RP_MAX_SPANS)
		return -1;
	struct rp_span *s = &m->spans[m->nspans];
	memset(s, 0, sizeof(*s));
	s->level = level;
	s->t0 = s->t1 = t;
	s->t_recv = s->t_answer = NONE;
	s->cycle = m->ncycles - 1;
	s->outcome = RP_FAILED;
	snprintf(s->detail, sizeof(s->detail), "%s", detail ? detail : "");
	if (level != RP_END && level != RP_TIMEOUT)
		p->open[level] = (int)m->nspans;
	return (int)m->nspans++;
}

/* Fills in why a span ended, from its level, outcome and the knobs. */
static void span_ended_by(const struct rp_model *m, struct rp_span *s)
{
	char b[24];
	if (s->outcome == RP_TIMED_OUT) {
		double k = s->level == RP_ABORT		 ? m->k_abort
			   : s->level == RP_LUN_RESET	 ? m->k_lu
			   : s->level == RP_TARGET_RESET ? m->k_tgt
			   : s->level == RP_SESSION	 ? m->k_recovery
							 : -1;
		const char *name = s->level == RP_ABORT		 ? "abort_tmo"
				   : s->level == RP_LUN_RESET	 ? "lu_reset_tmo"
				   : s->level == RP_TARGET_RESET ? "tgt_reset_tmo"
								 : "recovery_tmo";
		if (k >= 0)
			snprintf(s->ended_by, sizeof(s->ended_by), "%s %s", name,
				 secs(b, sizeof(b), k));
		else
			snprintf(s->ended_by, sizeof(s->ended_by), "%s", name);
	} else if (s->outcome == RP_COMPLETED) {
		const char *path = m->res.path;
		if (s->level == RP_SESSION)
			snprintf(s->ended_by, sizeof(s->ended_by), "relogin");
		else if (path && !strcmp(path, "tcmu") && m->k_cmd_time_out > 0 &&
			 s->t1 - s->t0 > m->k_cmd_time_out * 0.5)
			snprintf(s->ended_by, sizeof(s->ended_by), "cmd_time_out %s",
				 secs(b, sizeof(b), m->k_cmd_time_out));
		else
			snprintf(s->ended_by, sizeof(s->ended_by), "answered");
	} else if (!*s->ended_by) {
		snprintf(s->ended_by, sizeof(s->ended_by),
			 s->t1 - s->t0 < 0.2 ? "failed at once" : "failed");
	}
}

/* Closes the open span of level at t. */
static void span_close(struct parse *p, enum rp_level level, double t, enum rp_outcome out)
{
	int i = p->open[level];
	if (i < 0)
		return;
	struct rp_span *s = &p->m->spans[i];
	s->t1 = t;
	s->outcome = out;
	if (out == RP_FAILED && p->tmf_timedout && level != RP_SESSION)
		s->outcome = RP_TIMED_OUT;
	if (level != RP_SESSION)
		p->tmf_timedout = false;
	span_ended_by(p->m, s);
	p->open[level] = -1;
}

/* Guest time (from the origin) of the latest faulted command at or before t, else NONE. */
static double last_fault_before(const struct rp_model *m, double t)
{
	double best = NONE;
	for (size_t i = 0; i < m->res.ntrace; i++) {
		const struct fl_result_trace *e = &m->res.trace[i];
		const char *ev = e->event;
		const char *act = e->action;
		double te = e->t - m->origin;
		if (ev && !strcmp(ev, "inject") && act && fl_action_by_trace(act) &&
		    fl_action_by_trace(act)->observed == FL_OBS_NEVER_ANSWERS && te <= t &&
		    te > best)
			best = te;
	}
	return best;
}

/* A cycle starts at t (the error handler's first action): the command-timeout span. */
static void cycle_begin(struct parse *p, double t)
{
	struct rp_model *m = p->m;
	if (p->in_cycle)
		return;
	p->in_cycle = true;
	m->ncycles++;
	double start = last_fault_before(m, t);
	if (start < p->cmd_start)
		start = p->cmd_start;
	if (start <= NONE / 2 || start > t) {
		/* The step running at t, else the command timer before t. */
		start = m->k_timeout > 0 ? t - m->k_timeout : t;
		for (size_t i = 0; i < m->res.nsteps; i++) {
			double a = m->res.steps[i].t0 - m->origin,
			       b = m->res.steps[i].t1 - m->origin;
			if (a <= t && t <= b + 0.5 && a > p->cmd_start)
				start = a;
		}
	}
	int k = span_open(p, RP_TIMEOUT, start, "the command's timer");
	if (k >= 0) {
		struct rp_span *s = &m->spans[k];
		char b[24];
		s->t1 = t;
		s->outcome = RP_TIMED_OUT;
		if (m->k_timeout > 0 && p->ntimeouts > 1)
			snprintf(s->ended_by, sizeof(s->ended_by), "device timeout %s x%d",
				 secs(b, sizeof(b), m->k_timeout), p->ntimeouts);
		else if (m->k_timeout > 0 && t - start > 1.5 * m->k_timeout)
			snprintf(s->ended_by, sizeof(s->ended_by), "device timeout %s, extended",
				 secs(b, sizeof(b), m->k_timeout));
		else if (m->k_timeout > 0)
			snprintf(s->ended_by, sizeof(s->ended_by), "device timeout %s",
				 secs(b, sizeof(b), m->k_timeout));
		else
			snprintf(s->ended_by, sizeof(s->ended_by), "device timeout");
		if (p->ntimeouts > 1)
			snprintf(s->detail, sizeof(s->detail),
				 "the timer fired %d times; libiscsi asked for more time %d "
				 "times (NOP-Out answered: \"making progress\")",
				 p->ntimeouts, p->ntimeouts - 1);
	}
	p->ntimeouts = 0;
}

/* The cycle ends at t: spans left open end with it. */
static void cycle_end(struct parse *p, double t)
{
	if (!p->in_cycle)
		return;
	for (int l = RP_ABORT; l < RP_END; l++)
		span_close(p, (enum rp_level)l, t, RP_FAILED);
	p->in_cycle = false;
	p->cmd_start = t;
}

/* Adds a mark. */
static void add_mark(struct rp_model *m, enum rp_level level, double t, const char *text)
{
	if (m->nmarks >= RP_MAX_MARKS)
		return;
	m->marks[m->nmarks].level = level;
	m->marks[m->nmarks].t = t;
	snprintf(m->marks[m->nmarks].text, sizeof(m->marks[0].text), "%s", text);
	m->nmarks++;
}

/*
 * A line of the error handler's abort, LUN reset, target reset and session recovery: opens or
 * closes their spans. False when x is none of them.
 */
static bool eh_line(struct parse *p, double t, const char *x)
{
	struct rp_model *m = p->m;
	const char *c;

	if (strstr(x, "iscsi_eh_cmd_timed_out") && strstr(x, "timedout")) {
		p->ntimeouts++;
	} else if (strstr(x, "timing out command")) {
		p->ntimeouts++;
	} else if (strstr(x, "previous abort failed")) {
		cycle_begin(p, t);
		int k = span_open(p, RP_ABORT, t, x);
		if (k >= 0) {
			m->spans[k].outcome = RP_SKIPPED;
			snprintf(m->spans[k].ended_by, sizeof(m->spans[k].ended_by),
				 "not sent: previous abort failed");
		}
		p->open[RP_ABORT] = -1;
	} else if (strstr(x, "abort scheduled") || strstr(x, "aborting command") ||
		   strstr(x, "iscsi_eh_abort aborting") || strstr(x, "ABORT_TASK: Found")) {
		cycle_begin(p, t);
		if (p->open[RP_ABORT] < 0)
			span_open(p, RP_ABORT, t, x);
		if ((c = strstr(x, "itt 0x")) && p->open[RP_ABORT] >= 0)
			snprintf(m->spans[p->open[RP_ABORT]].detail, sizeof(m->spans[0].detail),
				 "%s", x);
	} else if (strstr(x, "abort failed")) {
		span_close(p, RP_ABORT, t, RP_FAILED);
	} else if (strstr(x, "abort success") ||
		   strstr(x, "ABORT_TASK: Sending TMR_FUNCTION_COMPLETE") ||
		   strstr(x, "cmd abort success")) {
		span_close(p, RP_ABORT, t, RP_COMPLETED);
	} else if (strstr(x, "Waking error handler thread") ||
		   (strstr(x, ": waking up ") && !strstr(x, "waking up host to restart"))) {
		cycle_begin(p, t);
	} else if (strstr(x, "Sending BDR") || strstr(x, "iscsi_eh_device_reset LU Reset") ||
		   (strstr(x, "LUN_RESET:") && strstr(x, "starting"))) {
		cycle_begin(p, t);
		span_close(p, RP_ABORT, t, RP_FAILED);
		if (p->open[RP_LUN_RESET] < 0)
			span_open(p, RP_LUN_RESET, t, x);
	} else if (strstr(x, "dev reset result = FAILED") || strstr(x, "BDR failed")) {
		span_close(p, RP_LUN_RESET, t, RP_FAILED);
	} else if (strstr(x, "dev reset result = SUCCESS") ||
		   (strstr(x, "LUN_RESET:") && strstr(x, "Complete"))) {
		span_close(p, RP_LUN_RESET, t, RP_COMPLETED);
	} else if (strstr(x, "iscsi_tmf_timedout")) {
		p->tmf_timedout = true;
	} else if (strstr(x, "Sending target reset") ||
		   strstr(x, "iscsi_eh_target_reset tgt Reset")) {
		cycle_begin(p, t);
		span_close(p, RP_LUN_RESET, t, RP_FAILED);
		if (p->open[RP_TARGET_RESET] < 0)
			span_open(p, RP_TARGET_RESET, t, x);
	} else if (strstr(x, "iscsi_eh_target_reset") && strstr(x, "reset result = FAILED")) {
		span_close(p, RP_TARGET_RESET, t, RP_FAILED);
	} else if (strstr(x, "iscsi_eh_target_reset") && strstr(x, "reset result = SUCCESS")) {
		span_close(p, RP_TARGET_RESET, t, RP_COMPLETED);
	} else if (strstr(x, "iscsi_eh_session_reset") && !strstr(x, "succeeded")) {
		cycle_begin(p, t);
		span_close(p, RP_TARGET_RESET, t, RP_FAILED);
		if (p->open[RP_SESSION] < 0)
			span_open(p, RP_SESSION, t, x);
	} else if (strstr(x, "session reset succeeded")) {
		span_close(p, RP_SESSION, t, RP_COMPLETED);
	} else if (strstr(x, "session recovery timed out")) {
		if (p->open[RP_SESSION] < 0) {
			double t0 = t - (m->k_recovery > 0 ? m->k_recovery : 0);
			span_open(p, RP_SESSION, t0, x);
		}
		span_close(p, RP_SESSION, t, RP_TIMED_OUT);
		p->recovery_timedout = true;
	} else {
		return false;
	}
	return true;
}

/* An offlined disk or an I/O error: the run's end span, once a second, with why it came. */
static void end_line(struct parse *p, double t, const char *x)
{
	struct rp_model *m = p->m;
	bool off = !strstr(x, "I/O error");

	/* One mark per second: an offlined disk fails every queued command. */
	for (size_t i = 0; i < m->nspans; i++)
		if (m->spans[i].level == RP_END && fabs(m->spans[i].t0 - t) < 1.0 &&
		    !strcmp(m->spans[i].detail, off ? "offline" : "I/O error"))
			return;
	int k = span_open(p, RP_END, t, off ? "offline" : "I/O error");
	if (k < 0)
		return;
	struct rp_span *s = &m->spans[k];
	s->outcome = RP_FAILED;
	snprintf(s->ended_by, sizeof(s->ended_by), "%s%s%s%s", off ? "disk offlined" : "I/O error",
		 p->recovery_timedout		      ? " after recovery_tmo"
		 : strstr(x, "Medium access timeout") ? " (medium access timeouts)"
		 : p->finish			      ? " (retries used up)"
						      : "",
		 *p->hostbyte ? " " : "", p->hostbyte);
}

/* One kernel-log line of the workload. */
static void parse_line(struct parse *p, double t, const char *x)
{
	struct rp_model *m = p->m;
	const char *c;

	if (eh_line(p, t, x))
		return;
	if ((c = strstr(x, "detected conn error ("))) {
		int code = atoi(c + strlen("detected conn error ("));
		char b[64];
		snprintf(b, sizeof(b), "conn error %d%s", code,
			 code == 1021	? " (TMF timed out)"
			 : code == 1022 ? " (NOP-Out ping timed out)"
					: "");
		add_mark(m, RP_SESSION, t, b);
	} else if (strstr(x, "Power-on or device reset occurred")) {
		/* The reset's unit attention: scsi_error.c logs no success of its own. */
		span_close(p, RP_LUN_RESET, t, RP_COMPLETED);
		span_close(p, RP_TARGET_RESET, t, RP_COMPLETED);
	} else if (strstr(x, "retry aborted command")) {
		add_mark(m, RP_TIMEOUT, t, "command retried");
		cycle_end(p, t);
	} else if (strstr(x, "flush retry cmd")) {
		add_mark(m, RP_TIMEOUT, t, "command retried");
		cycle_end(p, t);
	} else if (strstr(x, "flush finish cmd")) {
		p->finish = true;
		cycle_end(p, t);
	} else if (strstr(x, "waking up host to restart")) {
		cycle_end(p, t);
	} else if ((c = strstr(x, "FAILED Result: hostbyte="))) {
		snprintf(p->hostbyte, sizeof(p->hostbyte), "%.*s", (int)strcspn(c + 24, " "),
			 c + 24);
	} else if (strstr(x, "Device offlined") || strstr(x, "Offlining disk") ||
		   strstr(x, "I/O error, dev")) {
		end_line(p, t, x);
	}
}

/* Without error-handler lines in the kernel log: the ladder from the TMFs the target got. */
static void spans_from_trace(struct parse *p)
{
	struct rp_model *m = p->m;
	for (size_t i = 0; i < m->res.ntrace; i++) {
		const struct fl_result_trace *e = &m->res.trace[i];
		const char *ev = e->event;
		double t = e->t - m->origin;
		if (!ev)
			continue;
		if (!strcmp(ev, "tmf")) {
			const char *tmf = e->tmf;
			const char *resp = e->respond;
			int l = rp_tmf_level(tmf);
			if (l < 0)
				continue;
			cycle_begin(p, t);
			for (int k = RP_ABORT; k < l; k++)
				span_close(p, (enum rp_level)k, t, RP_FAILED);
			int k = span_open(p, (enum rp_level)l, t, tmf);
			if (k < 0)
				continue;
			struct rp_span *s = &m->spans[k];
			s->from_trace = true;
			rp_decide(m, e, t, s);
			if (resp && !strcmp(resp, "never")) {
				p->tmf_timedout = true;
				continue; /* closed by what comes next */
			}
			bool done = !strncmp(s->decision, "completed", 9);
			span_close(p, (enum rp_level)l, s->t_answer,
				   done ? RP_COMPLETED : RP_FAILED);
			rp_ended_by_target(s, false);
		} else if (!strcmp(ev, "conn") && p->in_cycle) {
			const char *what = e->what;
			if (what && !strcmp(what, "closed")) {
				for (int k = RP_ABORT; k < RP_SESSION; k++)
					span_close(p, (enum rp_level)k, t, RP_FAILED);
				if (p->open[RP_SESSION] < 0)
					m->spans[span_open(p, RP_SESSION, t, "connection closed")]
					    .from_trace = true;
			} else if (what && !strcmp(what, "login")) {
				span_close(p, RP_SESSION, t, RP_COMPLETED);
			}
		} else if (!strcmp(ev, "inject") && p->in_cycle) {
			bool busy = false;
			for (int k = RP_ABORT; k < RP_END; k++)
				busy |= p->open[k] >= 0;
			if (!busy)
				cycle_end(p, t);
		}
	}
	cycle_end(p, m->tmax);
}

/* Device and session state bands from the sysfs changes in the timeline. */
static void build_bands(struct rp_model *m)
{
	for (size_t i = 0; i < m->res.ntimeline; i++) {
		const struct fl_result_event *e = &m->res.timeline[i];
		const char *src = e->src, *text = e->text;
		if (strcmp(src, "sysfs"))
			continue;
		const char *eq = strstr(text, " = ");
		if (!eq || !(strstr(text, ".state =")))
			continue;
		bool session = !strncmp(text, "session", 7);
		if (!session && strncmp(text, "lun", 3))
			continue;
		char name[24];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - text - 6), text);
		double t = e->t - m->origin;
		/* The previous segment of this row ends here. */
		int row = -1;
		for (size_t k = m->nbands; k-- > 0;) {
			if (!strcmp(m->bands[k].name, name)) {
				m->bands[k].t1 = t;
				row = m->bands[k].row;
				break;
			}
		}
		if (m->nbands >= RP_MAX_BANDS)
			break;
		struct rp_band *b = &m->bands[m->nbands++];
		if (row < 0) {
			row = 0;
			for (size_t k = 0; k + 1 < m->nbands; k++)
				if (m->bands[k].row >= row)
					row = m->bands[k].row + 1;
		}
		b->row = row;
		b->t0 = t;
		b->t1 = m->tmax;
		snprintf(b->name, sizeof(b->name), "%s", name);
		snprintf(b->state, sizeof(b->state), "%s", eq + 3);
	}
}

/* The summary: stalls, retries, rules fired. */
static void build_summary(struct rp_model *m)
{
	size_t i;
	for (i = 0; i < m->res.nprobes; i++) {
		double ms = m->res.probes[i].ms;
		m->has_healthy = true;
		if (ms >= 1000) {
			m->nstalls++;
			m->stall_total_ms += ms;
		}
		if (ms > m->stall_max_ms)
			m->stall_max_ms = ms;
	}
	/* Rules fired, and commands the target saw again (same LUN, opcode, LBA). */
	json_t *rules = json_object(), *cmds = json_object();
	for (i = 0; i < m->res.ntrace; i++) {
		const struct fl_result_trace *e = &m->res.trace[i];
		if (!e->event || strcmp(e->event, "inject"))
			continue;
		char key[160];
		snprintf(key, sizeof(key), "%s (%s)", e->rule ?: "?", e->action ?: "?");
		json_object_set_new(
		    rules, key, json_integer(json_integer_value(json_object_get(rules, key)) + 1));
		snprintf(key, sizeof(key), "%lld/%s/%lld", (long long)e->lun, e->opcode ?: "?",
			 (long long)(isnan(e->lba) ? -1 : e->lba));
		if (json_object_get(cmds, key))
			m->retries++;
		json_object_set_new(cmds, key, json_true());
	}
	const char *k;
	json_t *v;
	size_t n = 0;
	json_object_foreach(rules, k, v)
	{
		n += (size_t)snprintf(m->rules + n, n < sizeof(m->rules) ? sizeof(m->rules) - n : 0,
				      "%s%s x%lld", n ? ", " : "", k,
				      (long long)json_integer_value(v));
		if (n >= sizeof(m->rules))
			break;
	}
	json_decref(rules);
	json_decref(cmds);
	m->first_eh = -1;
	for (i = 0; i < m->nspans; i++)
		if (m->spans[i].level > RP_TIMEOUT && m->spans[i].level < RP_END &&
		    (m->first_eh < 0 || m->spans[i].t0 < m->first_eh))
			m->first_eh = m->spans[i].t0;
	/* The step the application was in when recovery began; else the longest. */
	m->result_step = -1;
	double best = -1;
	for (i = 0; i < m->res.nsteps; i++) {
		const struct fl_result_step *e = &m->res.steps[i];
		double a = e->t0 - m->origin, b = e->t1 - m->origin;
		if (m->first_eh >= 0 && a <= m->first_eh && m->first_eh <= b) {
			m->result_step = (int)i;
			break;
		}
		/* Without recovery: the step that met the most faults, then the longest. */
		int faults = 0;
		for (size_t k = 0; k < m->res.ntrace; k++) {
			double tt = m->res.trace[k].t - m->origin;
			const char *ev = m->res.trace[k].event;
			faults += ev && !strcmp(ev, "inject") && tt >= a && tt <= b;
		}
		const char *op = e->op;
		double score = faults * 1e6 + (op && !strcmp(op, "sleep") ? 0 : b - a);
		/* With dm-multipath: the step that met the first path failure. */
		if (m->first_eh < 0 && m->failover_step >= 0)
			score = (int)i == m->failover_step ? 1e12 : -1;
		if (m->first_eh < 0 && score > best) {
			best = score;
			m->result_step = (int)i;
		}
	}
}

/* See report_internal.h. */
void rp_sum_put(struct rp_sum_row *row, bool em, const char *fmt, ...)
{
	size_t n = strlen(row->text);
	va_list ap;

	if (n + 1 >= sizeof(row->text))
		return;
	va_start(ap, fmt);
	vsnprintf(row->text + n, sizeof(row->text) - n, fmt, ap);
	va_end(ap);
	if (em) {
		row->em_at = n;
		row->em_len = strlen(row->text) - n;
	}
}

/* The summary's "the application's result" row: the step that decided it. */
static void sum_result(const struct rp_model *m, struct rp_sum_row *w)
{
	const struct fl_result *r = &m->res;
	size_t si = m->result_step < 0 ? 0 : (size_t)m->result_step;
	if (si < r->nsteps) {
		const struct fl_result_step *st = &r->steps[si];
		const char *e = st->errno_name ?: "?";
		size_t n = r->nsteps;
		rp_sum_put(w, false, "step %lld %s: ", st->step, st->op ?: "?");
		rp_sum_put(w, true, "%s", e);
		w->em_class = strcmp(e, "OK") ? "FAIL" : "PASS";
		rp_sum_put(w, false, " after %.1f s", st->elapsed_ms / 1000);
		if (n > 1)
			snprintf(w->note, sizeof(w->note), "%zu steps, all %.1f s", n,
				 r->steps[n - 1].t1 - m->origin);
	} else {
		rp_sum_put(w, false, "no step ran");
	}
}

/* The sub-rows of the error-handler cycles' row: what each rung came to, counted over the
 * cycles. */
static void sum_rungs(const struct rp_model *m, struct rp_sum_row *w)
{
	for (int l = RP_ABORT; l < RP_END; l++) {
		int cnt[RP_NOUTCOMES] = {0};
		const char *why[RP_NOUTCOMES] = {0};
		for (size_t i = 0; i < m->nspans; i++)
			if ((int)m->spans[i].level == l) {
				cnt[m->spans[i].outcome]++;
				why[m->spans[i].outcome] = m->spans[i].ended_by;
			}
		char *t = w->sub[w->nsub].text;
		size_t o = 0, len = sizeof(w->sub[0].text);
		for (int k = 0; k < RP_NOUTCOMES; k++) {
			const char *y = why[k];
			if (!cnt[k] || o >= len)
				continue;
			if (!strncmp(y, "not sent: ", 10))
				y += 10;
			o += (size_t)snprintf(t + o, len - o, "%s%d %s", o ? ", " : "", cnt[k],
					      rp_outcome_names[k]);
			if (k != RP_COMPLETED && o < len)
				o += (size_t)snprintf(t + o, len - o, " (%s)", y);
		}
		if (o)
			w->sub[w->nsub++].label = rp_level_names[l];
	}
}

/* See report_internal.h. */
size_t rp_summary(const struct rp_model *m, struct rp_sum_row rows[RP_SUM_ROWS])
{
	const struct fl_result *r = &m->res;
	struct rp_sum_row *w = rows;
	const char *v = r->verdict ?: "?";

	memset(rows, 0, sizeof(*rows) * RP_SUM_ROWS);
	*w = (struct rp_sum_row){.id = "verdict", .label = "verdict"};
	w->em_class = !strcmp(v, "N/A") ? "NA" : v;
	rp_sum_put(w, true, "%s", v);
	snprintf(w->note, sizeof(w->note), "%s", r->error ?: "");
	*++w = (struct rp_sum_row){.id = "sum-kernel", .label = "kernel, path, accelerator"};
	rp_sum_put(w, false, "%s, %s, %s", r->kernel ?: "?", r->path ?: "?", r->accel ?: "?");
	*++w = (struct rp_sum_row){.id = "sum-first-eh", .label = "first error-handler action"};
	if (m->first_eh >= 0)
		rp_sum_put(w, false, "%.1f s after the workload started", m->first_eh);
	else
		rp_sum_put(w, false, "none");
	*++w = (struct rp_sum_row){.id = "sum-result", .label = "the application's result"};
	sum_result(m, w);
	rp_summary_paths(m, &w);
	*++w = (struct rp_sum_row){.id = "sum-cycles", .label = "error-handler cycles"};
	rp_sum_put(w, false, "%d", m->ncycles);
	if (m->eh_from_trace)
		snprintf(w->note, sizeof(w->note),
			 "the kernel printed no error-handler step: scsi_logging_level / "
			 "debug_libiscsi_eh were off; the cycles are the TMFs the target received");
	sum_rungs(m, w);
	*++w = (struct rp_sum_row){.id = "sum-stall", .label = "healthy LUN stalled"};
	if (!m->has_healthy) {
		rp_sum_put(w, false, "no healthy LUN in this scenario (nothing probed)");
	} else if (!m->nstalls) {
		rp_sum_put(w, false, "never (longest read %.0f ms)", m->stall_max_ms);
	} else {
		rp_sum_put(w, true, "%.1f s", m->stall_total_ms / 1000);
		rp_sum_put(w, false, " in all: %d stall%s of 1 s or more, the longest %.1f s",
			   m->nstalls, m->nstalls > 1 ? "s" : "", m->stall_max_ms / 1000);
	}
	*++w = (struct rp_sum_row){.id = "sum-retries", .label = "retries"};
	rp_sum_put(w, false, "%d", m->retries);
	snprintf(w->note, sizeof(w->note),
		 "commands the target received again: same LUN, opcode and LBA");
	*++w = (struct rp_sum_row){.id = "sum-rules", .label = "rules fired (trace)"};
	rp_sum_put(w, false, "%s", *m->rules ? m->rules : "none");
	return (size_t)(w - rows) + 1;
}

/* See report_internal.h. */
struct rp_model *rp_model_new(struct fl_result *res)
{
	struct rp_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->res = *res;
	memset(res, 0, sizeof(*res));
	const struct fl_result *rs = &m->res;
	m->origin = rs->nsteps ? rs->steps[0].t0 : rs->ntimeline ? rs->timeline[0].t : 0;
	const struct fl_result_knobs *g = &rs->guest_knobs, *sk = &rs->scenario_knobs;
	m->k_timeout = knob(g->timeout, sk->timeout);
	m->k_abort = knob(g->abort_tmo, sk->abort_tmo);
	m->k_lu = knob(g->lu_reset_tmo, sk->lu_reset_tmo);
	m->k_tgt = knob(g->tgt_reset_tmo, sk->tgt_reset_tmo);
	m->k_recovery = knob(g->recovery_tmo, sk->recovery_tmo);
	m->k_cmd_time_out = knob(g->cmd_time_out, sk->cmd_time_out);

	/* The window: the workload, with a little context before it. */
	double ws =
	    (rs->wall.workload_start >= 0 ? rs->wall.workload_start : m->origin) - m->origin;
	double we = rs->wall.workload_end;
	m->tmax = 1;
	size_t i;
	for (i = 0; i < rs->nsteps; i++)
		m->tmax = fmax(m->tmax, rs->steps[i].t1 - m->origin);
	if (we > 0)
		m->tmax = fmax(m->tmax, we - m->origin);
	m->tmin = fmin(ws, 0) - 0.02 * m->tmax;

	struct parse p = {.m = m, .cmd_start = NONE};
	for (int l = 0; l < RP_NLEVELS; l++)
		p.open[l] = -1;
	for (i = 0; i < rs->ntimeline; i++) {
		const char *src = rs->timeline[i].src;
		double t = rs->timeline[i].t - m->origin;
		const char *text = rs->timeline[i].text;
		if (!strcmp(src, "kernel") && t >= ws)
			parse_line(&p, t, text);
		/* The faulted command arriving again with no rung open: a retry. */
		if (!strcmp(src, "target") && !strncmp(text, "inject", 6) && p.in_cycle) {
			bool busy = false;
			for (int l = RP_ABORT; l < RP_END; l++)
				busy |= p.open[l] >= 0;
			if (!busy)
				cycle_end(&p, t);
		}
	}
	cycle_end(&p, m->tmax);
	bool kernel_eh = false;
	for (i = 0; i < m->nspans; i++)
		kernel_eh |= m->spans[i].level > RP_TIMEOUT && m->spans[i].level < RP_END;
	if (kernel_eh)
		rp_pair_spans(m);
	if (!kernel_eh) {
		/* Keep what the kernel said about the end (I/O error, offline). */
		size_t kept = 0;
		for (i = 0; i < m->nspans; i++)
			if (m->spans[i].level == RP_END)
				m->spans[kept++] = m->spans[i];
		m->nspans = kept;
		m->ncycles = 0;
		memset(&p, 0, sizeof(p));
		p.m = m;
		p.cmd_start = NONE;
		for (int l = 0; l < RP_NLEVELS; l++)
			p.open[l] = -1;
		spans_from_trace(&p);
		m->eh_from_trace = m->ncycles > 0;
	}
	rp_build_sequence(m);
	build_bands(m);
	rp_build_paths(m);
	build_summary(m);
	return m;
}

/* See report_internal.h. */
void rp_model_free(struct rp_model *m)
{
	if (!m)
		return;
	fl_result_free(&m->res);
	free(m);
}

/* See report_internal.h. */
struct rp_model *rp_model_read(const char *path)
{
	struct fl_result res;
	char err[512];

	if (fl_result_read(path, &res, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	struct rp_model *m = rp_model_new(&res);
	if (!m) {
		fprintf(stderr, "%s: out of memory\n", path);
		fl_result_free(&res);
	}
	return m;
}
