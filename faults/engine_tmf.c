/* SPDX-License-Identifier: MIT */
/*
 * engine_tmf.c - task management (SAM-5 r21 7: ABORT TASK, ABORT TASK SET,
 * CLEAR ACA, CLEAR TASK SET, LOGICAL UNIT RESET, TARGET WARM / COLD RESET
 * with the RFC 7143 11.6.1 response codes), connection events, and the
 * transport verdicts and standing session conditions of the iSCSI front end.
 *
 * A TMF that completes releases the held and delayed commands it covers as
 * aborted with no response (the front end answers for them as the transport
 * requires), resets the LUN(s) with the scenario's unit attention, applies
 * the "then" effects and the transitions, and only then answers, possibly
 * after the scenario's delay. "never" answers FL_TMF_RESP_NONE at once and
 * changes nothing: the held commands stay held, as on an array whose reset
 * hangs.
 */
#include "engine_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The default behaviour of a TMF the scenario does not describe. */
static void tmf_default(int fn, struct sc_tmf_case *k)
{
	memset(k, 0, sizeof(*k));
	k->respond = FL_TMF_RESP_COMPLETE;
	k->then_state = -1;
	k->ua = fn == FL_TMF_LUN_RESET || fn == FL_TMF_TARGET_WARM_RESET ||
		fn == FL_TMF_TARGET_COLD_RESET;
	k->ua_asc = ASC_POWER_ON_RESET;
	k->ua_ascq = ASCQ_POWER_ON_RESET_OCCURRED;
}

/* Whether a TMF of this function covers held command p (SAM-5 7.2 .. 7.7). */
static bool tmf_covers(const struct fl_tmf *t, const struct pend *p)
{
	bool same_lun = p->L->id == t->lun_id, same_nexus = p->cmd->nexus.id == t->nexus_id;
	const struct fl_action *act = p->rule ? fl_action_by_verb(p->rule->a.verb) : NULL;
	bool held_abort = false, held_reset = false;
	bool abortable, resettable;

	if (act && act->ends_on)
		act->ends_on(&p->rule->a, &held_abort, &held_reset);
	abortable = p->stage == PEND_DELAYED || held_abort;
	resettable = abortable || held_reset;

	switch (t->fn) {
	case FL_TMF_ABORT_TASK:
		return abortable && same_lun && same_nexus && p->cmd->tag == t->ref_tag;
	case FL_TMF_ABORT_TASK_SET:
		return abortable && same_lun && same_nexus;
	case FL_TMF_CLEAR_TASK_SET:
		return abortable && same_lun;
	case FL_TMF_LUN_RESET:
		return resettable && same_lun;
	case FL_TMF_TARGET_WARM_RESET:
	case FL_TMF_TARGET_COLD_RESET:
		return resettable;
	default:
		return false;
	}
}

/*
 * Takes p off the pending list for aborting (e->lock held). Returns true when
 * the caller now owns p; false when p's delay timer has already fired, in
 * which case delay_fired (waiting for e->lock) completes it as aborted.
 */
static bool take_for_abort(struct fl_engine *e, struct pend *p)
{
	pend_unlink(e, p);
	if (p->stage == PEND_DELAYED && !timers_cancel(e->timers, &p->tn)) {
		p->abort_requested = true;
		return false;
	}
	return true;
}

/* Takes the pending commands a TMF covers off the list (e->lock held). */
static struct pend *tmf_collect(struct fl_engine *e, const struct fl_tmf *t, size_t *n)
{
	struct pend *list = NULL, *p, *next;

	*n = 0;
	for (p = e->pending; p; p = next) {
		next = p->next;
		if (!tmf_covers(t, p))
			continue;
		(*n)++;
		if (!take_for_abort(e, p))
			continue;
		p->next = list;
		list = p;
	}
	return list;
}

/* Completes the collected commands as aborted (no lock held). */
static void tmf_abort_list(struct pend *list)
{
	while (list) {
		struct pend *next = list->next;

		pend_complete_aborted(list);
		list = next;
	}
}

/* Carries out a completing TMF and answers it (no lock held). */
static void tmf_carry_out(struct fl_engine *e, struct fl_tmf *t, const struct sc_tmf_case *k)
{
	enum fl_tmf_resp resp = FL_TMF_RESP_COMPLETE;
	bool reset = t->fn == FL_TMF_LUN_RESET || t->fn == FL_TMF_TARGET_WARM_RESET ||
		     t->fn == FL_TMF_TARGET_COLD_RESET;
	struct pend *list;
	size_t n;
	bool notify = false;
	int old;
	json_t *o;

	pthread_mutex_lock(&e->lock);
	old = e->state;
	list = tmf_collect(e, t, &n);
	if (t->fn == FL_TMF_ABORT_TASK && !n && !t->task_exists)
		resp = FL_TMF_RESP_TASK_NOT_EXIST;
	if ((t->fn == FL_TMF_LUN_RESET || t->fn == FL_TMF_ABORT_TASK ||
	     t->fn == FL_TMF_ABORT_TASK_SET || t->fn == FL_TMF_CLEAR_TASK_SET) &&
	    (t->lun_id >= FL_MAX_LUNS || !e->by_id[t->lun_id]))
		resp = FL_TMF_RESP_LUN_NOT_EXIST;
	if (reset && resp == FL_TMF_RESP_COMPLETE) {
		e->counters.resets++;
		/*
		 * SAM-5 5.14: the reset's UA goes to every I_T nexus, the requester's
		 * too (the Linux midlayer expects one after its own reset, as LIO gives).
		 * "ua": null leaves the LUN untouched (a reset that does nothing visible).
		 */
		for (size_t i = 0; i < e->nluns && k->ua; i++)
			if (t->fn != FL_TMF_LUN_RESET || e->luns[i].id == t->lun_id)
				fl_lun_reset(e->luns[i].lun, FL_ALL_NEXUS, k->ua_asc, k->ua_ascq);
		o = trace_event(&e->trace, "reset");
		json_object_set_new(o, "tmf", json_string(sc_tmf_names[t->fn]));
		if (t->fn == FL_TMF_LUN_RESET)
			json_object_set_new(o, "lun", json_integer(t->lun_id));
		json_object_set_new(o, "nexus", json_integer((json_int_t)t->nexus_id));
		if (k->ua) {
			char ua[8];

			snprintf(ua, sizeof(ua), "%02x/%02x", k->ua_asc, k->ua_ascq);
			json_object_set_new(o, "ua", json_string(ua));
		}
		json_object_set_new(o, "aborted", json_integer((json_int_t)n));
		trace_emit(&e->trace, o);
		engine_event(e, ON_RESET, 0, 0);
	} else {
		o = trace_event(&e->trace, "tmf_done");
		json_object_set_new(o, "tmf", json_string(sc_tmf_names[t->fn]));
		json_object_set_new(o, "lun", json_integer(t->lun_id));
		json_object_set_new(o, "aborted", json_integer((json_int_t)n));
		json_object_set_new(o, "response", json_integer(resp));
		trace_emit(&e->trace, o);
	}
	if (resp == FL_TMF_RESP_COMPLETE) {
		if (k->clear_faults) {
			for (size_t i = 0; i < e->prog->nrules; i++)
				e->prog->rules[i].armed = false;
			for (size_t i = 0; i < e->prog->nxrules; i++)
				e->prog->xrules[i].armed = false;
		}
		for (size_t d = 0; d < k->ndisarm; d++)
			engine_arm(e, k->disarm[d], false);
		if (k->then_state >= 0)
			engine_set_state(e, k->then_state, sc_tmf_names[t->fn]);
	}
	notify = e->state != old && e->xport_notify;
	pthread_mutex_unlock(&e->lock);
	tmf_abort_list(list);
	if (notify)
		engine_notify(e);
	t->done(t, resp);
}

/* Answers a TMF with a non-completing response (no lock held). */
static void tmf_answer(struct fl_engine *e, struct fl_tmf *t, const struct sc_tmf_case *k)
{
	if (k->respond == FL_TMF_RESP_COMPLETE) {
		tmf_carry_out(e, t, k);
		return;
	}
	t->done(t, k->respond);
}

/* A delayed TMF's timer fired. */
static void tmf_delay_fired(struct fl_timer *tn)
{
	struct tmf_pend *tp = (struct tmf_pend *)tn;
	struct fl_engine *e = tp->e;

	pthread_mutex_lock(&e->lock);
	if (tp->prev)
		tp->prev->next = tp->next;
	else
		e->tmf_pending = tp->next;
	if (tp->next)
		tp->next->prev = tp->prev;
	pthread_mutex_unlock(&e->lock);
	tmf_answer(e, tp->tmf, &tp->kase);
	free(tp);
}

/* Carries out a TMF as the scenario says. */
void fl_engine_tmf(struct fl_engine *e, struct fl_tmf *tmf)
{
	struct sc_tmf_case k;
	const struct sc_tmf *st;
	bool found = false, notify;
	int old;
	json_t *o;

	pthread_mutex_lock(&e->lock);
	old = e->state;
	e->counters.tmfs++;
	/*
	 * {"tmf": ...} transitions fire when the TMF arrives, before its behaviour
	 * is chosen: the behaviour is the one of the state the TMF leads to.
	 */
	engine_event(e, ON_TMF, tmf->fn, 0);
	tmf_default(tmf->fn, &k);
	if (tmf->fn > 0 && tmf->fn < SC_TMF_NR) {
		st = &e->prog->sc->tmf[tmf->fn];
		for (size_t i = 0; i < st->n && !found; i++)
			if (!st->cases[i].states || (st->cases[i].states & (1ull << e->state))) {
				k = st->cases[i];
				found = true;
			}
	} else {
		k.respond = FL_TMF_RESP_NOT_SUPPORTED;
	}
	o = trace_event(&e->trace, "tmf");
	json_object_set_new(
	    o, "tmf",
	    json_string(tmf->fn > 0 && tmf->fn < SC_TMF_NR ? sc_tmf_names[tmf->fn] : "unknown"));
	json_object_set_new(o, "lun", json_integer(tmf->lun_id));
	json_object_set_new(o, "nexus", json_integer((json_int_t)tmf->nexus_id));
	if (tmf->fn == FL_TMF_ABORT_TASK)
		json_object_set_new(o, "ref_tag", json_integer((json_int_t)tmf->ref_tag));
	json_object_set_new(o, "respond",
			    json_string(k.respond == FL_TMF_RESP_COMPLETE	  ? "complete"
					: k.respond == FL_TMF_RESP_NONE		  ? "never"
					: k.respond == FL_TMF_RESP_REJECTED	  ? "rejected"
					: k.respond == FL_TMF_RESP_NOT_SUPPORTED  ? "not_supported"
					: k.respond == FL_TMF_RESP_TASK_NOT_EXIST ? "task_not_exist"
					: k.respond == FL_TMF_RESP_LUN_NOT_EXIST
					    ? "lun_not_exist"
					    : "drop_connection"));
	if (k.delay_ms)
		json_object_set_new(o, "delay_ms", json_integer(k.delay_ms));
	trace_emit(&e->trace, o);
	notify = e->state != old && e->xport_notify;
	if (k.delay_ms && k.respond != FL_TMF_RESP_NONE) {
		struct tmf_pend *tp = calloc(1, sizeof(*tp));

		if (tp) {
			tp->e = e;
			tp->tmf = tmf;
			tp->kase = k;
			fl_timer_init(&tp->tn, tmf_delay_fired);
			tp->next = e->tmf_pending;
			if (tp->next)
				tp->next->prev = tp;
			e->tmf_pending = tp;
			timers_add(e->timers, &tp->tn,
				   fl_mono_ns() + (uint64_t)k.delay_ms * 1000000);
			pthread_mutex_unlock(&e->lock);
			if (notify)
				engine_notify(e);
			return;
		}
	}
	pthread_mutex_unlock(&e->lock);
	if (notify)
		engine_notify(e);
	tmf_answer(e, tmf, &k);
}

/* Connection / session events: traced, may move state; a lost nexus loses its holds. */
void fl_engine_conn_event(struct fl_engine *e, enum fl_conn_event ev, uint64_t nexus_id,
			  const char *initiator)
{
	static const char *const names[] = {[FL_CONN_LOGIN] = "login",
					    [FL_CONN_LOGOUT] = "logout",
					    [FL_CONN_CLOSED] = "closed",
					    [FL_CONN_DEVICE_OPEN] = "device_open",
					    [FL_CONN_DEVICE_CLOSE] = "device_close"};
	struct pend *list = NULL, *p, *next;
	struct late *late = NULL;
	bool gone = ev == FL_CONN_LOGOUT || ev == FL_CONN_CLOSED || ev == FL_CONN_DEVICE_CLOSE;
	size_t naborted = 0;
	bool notify;
	int old;
	json_t *o;

	pthread_mutex_lock(&e->lock);
	old = e->state;
	o = trace_event(&e->trace, "conn");
	json_object_set_new(
	    o, "what",
	    json_string(ev >= FL_CONN_LOGIN && ev <= FL_CONN_DEVICE_CLOSE ? names[ev] : "unknown"));
	json_object_set_new(o, "nexus", json_integer((json_int_t)nexus_id));
	if (initiator)
		json_object_set_new(o, "initiator", json_string(initiator));
	if (gone) {
		for (p = e->pending; p; p = next) {
			next = p->next;
			if (p->cmd->nexus.id != nexus_id)
				continue;
			naborted++;
			if (!take_for_abort(e, p))
				continue;
			p->next = list;
			list = p;
		}
		late = engine_late_nexus_gone(e, nexus_id);
	}
	json_object_set_new(o, "aborted", json_integer((json_int_t)naborted));
	trace_emit(&e->trace, o);
	if (ev == FL_CONN_LOGIN || ev == FL_CONN_DEVICE_OPEN)
		engine_event(e, ON_LOGIN, 0, 0);
	else if (gone)
		engine_event(e, ON_LOGOUT, 0, 0);
	notify = e->state != old && e->xport_notify;
	pthread_mutex_unlock(&e->lock);
	tmf_abort_list(list);
	engine_late_run(late); /* after the aborts: the data lands once the nexus is gone */
	if (gone)
		for (size_t i = 0; i < e->nluns; i++)
			fl_lun_nexus_gone(e->luns[i].lun, nexus_id);
	if (notify)
		engine_notify(e);
}

/* Traces the transport rule r acting on pdu (cdb: its command, decoded, or NULL). */
static void trace_xport(struct fl_engine *e, const struct sc_xrule *r,
			const struct fl_pdu_info *pdu, const struct fl_cdb_info *cdb)
{
	json_t *o = trace_event(&e->trace, "xport");

	json_object_set_new(o, "rule", json_string(r->id));
	json_object_set_new(o, "pdu", json_string(sc_pdu_names[pdu->kind]));
	json_object_set_new(o, "action",
			    json_string(r->action == FL_XPORT_DROP    ? "drop"
					: r->action == FL_XPORT_CLOSE ? "close"
								      : "delay"));
	if (r->action == FL_XPORT_DELAY)
		json_object_set_new(o, "delay_us", json_integer(r->delay_us));
	json_object_set_new(o, "nexus", json_integer((json_int_t)pdu->nexus_id));
	json_object_set_new(o, "lun", json_integer(pdu->lun_id));
	if (cdb) {
		char op[8];

		snprintf(op, sizeof(op), "0x%02x", cdb->opcode);
		json_object_set_new(o, "opcode", json_string(op));
		if (cdb->has_lba)
			json_object_set_new(o, "lba", json_integer((json_int_t)cdb->lba));
	}
	if (pdu->kind == FL_PDU_DATA_OUT || pdu->kind == FL_PDU_DATA_IN)
		json_object_set_new(o, "data_sn", json_integer(pdu->data_sn));
	trace_emit(&e->trace, o);
}

/* Transport verdict for one PDU: the first transport rule that holds decides. */
void fl_engine_pdu(struct fl_engine *e, const struct fl_pdu_info *pdu, struct fl_xport_verdict *out)
{
	struct program *p;
	struct fl_cdb_info raw;
	const struct fl_cdb_info *cdb = pdu->has_cdb ? &pdu->cdb : NULL;
	bool raw_tried = false;

	memset(out, 0, sizeof(*out));
	out->action = FL_XPORT_PASS;
	pthread_mutex_lock(&e->lock);
	p = e->prog;
	for (size_t i = 0; i < p->nxrules; i++) {
		struct rt_xrule *rt = &p->xrules[i];
		const struct sc_xrule *r = rt->r;
		const struct sc_count *k = &r->count;
		uint64_t n;

		if (!rt->armed || (r->states && !(r->states & (1ull << e->state))))
			continue;
		if (pdu->kind <= 0 || pdu->kind > FL_PDU_REJECT ||
		    !(r->pdu_mask & (1u << pdu->kind)))
			continue;
		if ((r->has_opcode || r->class_mask) && !cdb && pdu->raw_cdb && !raw_tried) {
			raw_tried = true; /* the only decode of a transport verdict, when needed */
			if (!fl_cdb_decode(pdu->raw_cdb, pdu->raw_cdb_len, &raw))
				cdb = &raw;
		}
		if (r->has_opcode &&
		    (!cdb || !(r->opcode_map[cdb->opcode / 8] & (1u << (cdb->opcode % 8)))))
			continue;
		if (r->class_mask && (!cdb || !(r->class_mask & (1u << cdb->cls))))
			continue;
		if (r->port && r->port != (pdu->rel_port_id ? pdu->rel_port_id : 1))
			continue;
		if (r->port_group &&
		    r->port_group != fl_scenario_port_group(p->sc, pdu->lun_id, pdu->rel_port_id))
			continue;
		n = ++rt->seen;
		if (k->after && n <= k->after)
			continue;
		n -= k->after;
		if ((k->nth && n != k->nth) || (k->every && n % k->every) ||
		    (k->times && rt->fired >= k->times))
			continue;
		if (k->has_prob && !(fl_prng_unit(&rt->rng) < k->prob))
			continue;
		rt->fired++;
		e->counters.injected++;
		out->action = r->action;
		out->delay_us = r->delay_us;
		out->rule = r->id;
		if (!cdb && pdu->raw_cdb && !raw_tried) {
			raw_tried = true;
			if (!fl_cdb_decode(pdu->raw_cdb, pdu->raw_cdb_len, &raw))
				cdb = &raw;
		}
		trace_xport(e, r, pdu, cdb);
		break;
	}
	pthread_mutex_unlock(&e->lock);
}

/* Standing transport conditions for the current state. */
void fl_engine_xport_state(struct fl_engine *e, uint64_t nexus_id, struct fl_xport_state *out)
{
	const struct fl_scenario *sc;
	const struct sc_session *g, *s;
	uint64_t now = fl_mono_ns();

	(void)nexus_id;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&e->lock);
	sc = e->prog->sc;
	g = &sc->session;
	s = &sc->state_session[e->state];
#define PICK(flag, field) ((s->set & (flag)) ? s->field : g->field)
	out->ignore_nop_out = PICK(SESS_IGNORE_NOP, ignore_nop_out);
	out->stall_max_cmd_sn = PICK(SESS_STALL, stall_max_cmd_sn);
	out->nop_in_interval_ms = PICK(SESS_NOP_IN, nop_in_interval_ms);
	if (PICK(SESS_LOGOUT, request_logout)) {
		uint64_t since = (s->set & SESS_LOGOUT) ? e->state_since_ns : e->armed_ns;
		uint32_t after = PICK(SESS_LOGOUT, logout_after_ms);

		if (now >= since + (uint64_t)after * 1000000) {
			out->request_logout = true;
			out->logout_wait_s = PICK(SESS_LOGOUT, logout_wait_s);
		}
	}
#undef PICK
	pthread_mutex_unlock(&e->lock);
}
