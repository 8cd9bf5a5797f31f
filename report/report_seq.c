/* SPDX-License-Identifier: MIT */
/*
 * report_seq.c - the target's side of the error handler: each TMF rung the
 * kernel took (report_model.c) paired with the TMF the target's trace says
 * it received (ABORT TASK by task tag: the trace's ref_tag is the kernel's
 * itt as read off the wire; the others by function and time), the target's
 * decision and answer, and the sequence chart's messages of one cycle: the
 * faulted command, the TMFs, the dropped connection and the relogin.
 */
#include "report_internal.h"
#include "fl_action.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NONE (-1e9)

/* See report_internal.h. */
int rp_tmf_level(const char *tmf)
{
	if (!tmf)
		return -1;
	if (!strncmp(tmf, "abort", 5) || !strcmp(tmf, "clear_task_set"))
		return RP_ABORT;
	if (!strcmp(tmf, "lun_reset"))
		return RP_LUN_RESET;
	if (strstr(tmf, "target"))
		return RP_TARGET_RESET;
	return -1;
}

/* The first answer (tmf_done / reset) to a tmf of this name after t. */
static const struct fl_result_trace *tmf_answer(const struct rp_model *m, const char *tmf, double t,
						double *ta)
{
	for (size_t i = 0; i < m->res.ntrace; i++) {
		const struct fl_result_trace *e = &m->res.trace[i];
		const char *ev = e->event;
		const char *name = e->tmf;
		double te = e->t - m->origin;
		if (ev && name && te >= t - 1e-6 && !strcmp(name, tmf) &&
		    (!strcmp(ev, "tmf_done") || !strcmp(ev, "reset"))) {
			*ta = te;
			return e;
		}
	}
	return NULL;
}

/* See report_internal.h. */
void rp_decide(const struct rp_model *m, const struct fl_result_trace *e, double t,
	       struct rp_span *s)
{
	const char *tmf = e->tmf ?: "?";
	const char *resp = e->respond;
	double delay = e->delay_ms, ta;
	const struct fl_result_trace *a = tmf_answer(m, tmf, t, &ta);
	const char *aev = a ? a->event : NULL;
	char *d = s->decision;
	size_t n = sizeof(s->decision);

	s->t_recv = t;
	if (resp && !strcmp(resp, "never")) {
		snprintf(d, n, "never answered");
		return;
	}
	if (aev && !strcmp(aev, "reset"))
		snprintf(d, n, "completed%s%s", a->has_ua ? ", UA " : "", a->ua ?: "");
	else if (a && a->response == 1)
		snprintf(d, n, "answered: task does not exist");
	else if (a && a->response == 0)
		snprintf(d, n, "completed");
	else
		snprintf(d, n, "%s", resp ? resp : "?");
	if (delay > 0)
		snprintf(d + strlen(d), n - strlen(d), " after a delay of %.0f ms", delay);
	s->t_answer = a ? ta : t + delay / 1000;
}

/* See report_internal.h. */
void rp_ended_by_target(struct rp_span *s, bool append)
{
	char b[sizeof(s->ended_by) + 80];
	snprintf(b, sizeof(b), "%.60s%starget: %.60s", append ? s->ended_by : "",
		 append ? ", " : "", s->decision);
	snprintf(s->ended_by, sizeof(s->ended_by), "%.127s", b);
}

/* See report_internal.h. */
void rp_pair_spans(struct rp_model *m)
{
	const char *path = m->res.path;
	bool used[1024] = {false};
	for (size_t k = 0; k < m->nspans; k++) {
		struct rp_span *s = &m->spans[k];
		if (s->level < RP_ABORT || s->level > RP_TARGET_RESET || s->outcome == RP_SKIPPED)
			continue;
		if (path && strcmp(path, "iscsi")) {
			/* tcm_loop's TMFs end in LIO: the TCMU handler never sees one. */
			s->t_recv = s->t0;
			s->t_answer = s->outcome == RP_COMPLETED ? s->t1 : NONE;
			snprintf(s->decision, sizeof(s->decision),
				 "LIO handles it: the TCMU handler sees no TMF");
			continue;
		}
		const char *itt = strstr(s->detail, "itt 0x");
		uint32_t kitt = itt ? (uint32_t)strtoul(itt + 4, NULL, 16) : 0;
		for (size_t i = 0; i < m->res.ntrace; i++) {
			const struct fl_result_trace *e = &m->res.trace[i];
			const char *ev = e->event;
			double t = e->t - m->origin;
			if (i >= 1024 || used[i] || !ev || strcmp(ev, "tmf") ||
			    rp_tmf_level(e->tmf) != (int)s->level || t < s->t0 - 0.5 ||
			    t > s->t1 + 0.5)
				continue;
			/* ABORT TASK: the same task (the trace has the tag as read off the wire).
			 */
			uint32_t ref = (uint32_t)e->ref_tag;
			if (itt && ref && ref != kitt && __builtin_bswap32(ref) != kitt)
				continue;
			used[i] = true;
			rp_decide(m, e, t, s);
			break;
		}
		if (s->t_recv <= NONE / 2) {
			snprintf(s->decision, sizeof(s->decision), "never arrived");
			if (s->outcome == RP_FAILED)
				snprintf(s->ended_by, sizeof(s->ended_by),
					 "failed at once: never reached the target");
		} else {
			rp_ended_by_target(s, s->outcome == RP_TIMED_OUT ||
						  !strncmp(s->decision, "never", 5));
		}
	}
}

/* Adds a message of the sequence chart. */
static struct rp_msg *add_msg(struct rp_model *m, const char *sent)
{
	if (m->nmsgs >= RP_MAX_MSGS)
		return NULL;
	struct rp_msg *g = &m->msgs[m->nmsgs++];
	memset(g, 0, sizeof(*g));
	g->t_sent = g->t_recv = g->t_answer = NONE;
	snprintf(g->sent, sizeof(g->sent), "%s", sent);
	return g;
}

/* Compares two messages by the time they happened. */
static int cmp_msg(const void *a, const void *b)
{
	const struct rp_msg *x = a, *y = b;
	double tx = x->t_sent > NONE / 2 ? x->t_sent : x->t_recv;
	double ty = y->t_sent > NONE / 2 ? y->t_sent : y->t_recv;
	return tx < ty ? -1 : tx > ty;
}

/* The command that started the cycle [c0, c1]: the faulted command the target never answered. */
static void seq_first_command(struct rp_model *m, double c0, double c1)
{
	const struct fl_result_trace *tr = m->res.trace;
	size_t ntr = m->res.ntrace;

	for (size_t i = 0; i < ntr; i++) {
		const struct fl_result_trace *e = &tr[i];
		const char *ev = e->event;
		const char *act = e->action;
		double t = e->t - m->origin;
		if (!ev || strcmp(ev, "inject") || !act || t < c0 - 0.2 || t > c1)
			continue;
		const struct fl_action *fa = fl_action_by_trace(act);
		if (!fa || fa->observed != FL_OBS_NEVER_ANSWERS)
			continue;
		char b[64];
		snprintf(b, sizeof(b), "%s LBA %lld (tag 0x%llx)", e->op ?: "command",
			 (long long)(isnan(e->lba) ? 0 : e->lba), (unsigned long long)e->tag);
		struct rp_msg *g = add_msg(m, b);
		if (!g)
			break;
		g->t_sent = g->t_recv = t;
		snprintf(g->decision, sizeof(g->decision), "%s (rule %s)", fa->observed_as,
			 e->rule ?: "?");
		g->outcome = RP_TIMED_OUT;
		snprintf(g->result, sizeof(g->result), "command timer fired");
		break;
	}
}

/* The cycle's task management functions, each with its answer or how it ended. */
static void seq_tmfs(struct rp_model *m)
{
	static const char *const label_of_level[] = {[RP_ABORT] = "ABORT TASK",
						     [RP_LUN_RESET] = "LOGICAL UNIT RESET",
						     [RP_TARGET_RESET] = "TARGET WARM RESET"};

	for (size_t k = 0; k < m->nspans; k++) {
		const struct rp_span *s = &m->spans[k];
		if (s->cycle != m->seq_cycle || s->level < RP_ABORT || s->level > RP_TARGET_RESET)
			continue;
		char b[64];
		const char *itt = strstr(s->detail, "itt 0x");
		unsigned long kitt = itt ? strtoul(itt + 4, NULL, 16) : 0;
		if (itt)
			snprintf(b, sizeof(b), "%s (itt 0x%lx)", label_of_level[s->level], kitt);
		else
			snprintf(b, sizeof(b), "%s", label_of_level[s->level]);
		struct rp_msg *g = add_msg(m, b);
		if (!g)
			break;
		g->outcome = s->outcome;
		if (!s->from_trace)
			g->t_sent = s->t0;
		if (s->outcome == RP_SKIPPED) {
			snprintf(g->decision, sizeof(g->decision), "-");
			snprintf(g->result, sizeof(g->result), "%s", s->ended_by);
			continue;
		}
		if (s->outcome == RP_TIMED_OUT) {
			snprintf(g->result, sizeof(g->result), "timed out: %.120s", s->ended_by);
			if (strstr(g->result, ", target:"))
				*strstr(g->result, ", target:") = 0;
		} else if (s->outcome == RP_FAILED) {
			snprintf(g->result, sizeof(g->result), "%s",
				 s->t_recv <= NONE / 2 ? "failed at once: connection down"
						       : "failed on the target's answer");
		} else {
			snprintf(g->result, sizeof(g->result), "completed");
		}
		g->t_recv = s->t_recv;
		g->t_answer = strncmp(s->decision, "never", 5) ? s->t_answer : NONE;
		snprintf(g->decision, sizeof(g->decision), "%s", s->decision);
	}
}

/*
 * The connection drops in the cycle [c0, c1], each with the target's "closed" event it
 * matches (marked in used), then the other connection events (logins) not used yet.
 */
static void seq_connections(struct rp_model *m, double c0, double c1)
{
	const struct fl_result_trace *tr = m->res.trace;
	size_t ntr = m->res.ntrace;
	bool used[1024] = {false};
	size_t i;

	for (size_t k = 0; k < m->nmarks; k++) {
		if (m->marks[k].level != RP_SESSION || m->marks[k].t < c0 || m->marks[k].t > c1)
			continue;
		struct rp_msg *g = add_msg(m, "drops the connection");
		if (!g)
			break;
		g->t_sent = m->marks[k].t;
		g->outcome = RP_FAILED;
		snprintf(g->result, sizeof(g->result), "%s", m->marks[k].text);
		snprintf(g->decision, sizeof(g->decision), "never noticed");
		for (i = 0; i < ntr; i++) {
			const struct fl_result_trace *e = &tr[i];
			const char *ev = e->event;
			const char *what = e->what;
			double t = e->t - m->origin;
			if (i < 1024 && !used[i] && ev && !strcmp(ev, "conn") && what &&
			    !strcmp(what, "closed") && t >= g->t_sent - 0.5 && t <= c1 + 0.5) {
				used[i] = true;
				g->t_recv = t;
				snprintf(g->decision, sizeof(g->decision),
					 "connection closed, %lld task(s) dropped",
					 (long long)e->aborted);
				break;
			}
		}
	}
	for (i = 0; i < ntr; i++) {
		const struct fl_result_trace *e = &tr[i];
		const char *ev = e->event;
		const char *what = e->what;
		double t = e->t - m->origin;
		if (i >= 1024 || used[i] || !ev || strcmp(ev, "conn") || !what || t < c0 ||
		    t > c1 + 0.5)
			continue;
		struct rp_msg *g = add_msg(m, !strcmp(what, "login") ? "login (relogin)" : what);
		if (!g)
			break;
		g->t_recv = t;
		g->outcome = RP_COMPLETED;
		snprintf(g->decision, sizeof(g->decision), "%s",
			 !strcmp(what, "login") ? "logged in" : what);
		snprintf(g->result, sizeof(g->result), "%s",
			 !strcmp(what, "login") ? "session back: command retried" : "");
	}
}

/* See report_internal.h. */
void rp_build_sequence(struct rp_model *m)
{
	double c0 = 1e9, c1 = -1e9;

	m->seq_cycle = -1;
	for (size_t i = 0; i < m->nspans && m->seq_cycle < 0; i++)
		if (m->spans[i].level >= RP_ABORT && m->spans[i].level <= RP_TARGET_RESET &&
		    m->spans[i].outcome != RP_SKIPPED)
			m->seq_cycle = m->spans[i].cycle;
	if (m->seq_cycle < 0)
		return;
	for (size_t i = 0; i < m->nspans; i++) {
		const struct rp_span *s = &m->spans[i];
		if (s->cycle != m->seq_cycle)
			continue;
		c0 = fmin(c0, s->t0);
		c1 = fmax(c1, s->t1);
	}
	/* The command that started it, the TMFs, the connection drops and logins. */
	seq_first_command(m, c0, c1);
	seq_tmfs(m);
	seq_connections(m, c0, c1);
	qsort(m->msgs, m->nmsgs, sizeof(m->msgs[0]), cmp_msg);
}
