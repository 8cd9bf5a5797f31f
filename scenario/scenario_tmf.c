/* SPDX-License-Identifier: MIT */
/*
 * scenario_tmf.c - loading the task-management behaviour (SAM-5 r21 7, answers
 * as in RFC 7143 11.6.1), the iSCSI transport rules and session conditions
 * (RFC 7143), and the state transitions of a scenario (docs/scenario-format.md).
 */
#include "scenario_internal.h"

#include <stdlib.h>
#include <string.h>

/* Parses a TMF case's "then": the unit attention, state, disarmed rules and clearing after it. */
static void tmf_then(struct pctx *c, const char *path, json_t *then, struct sc_tmf_case *k)
{
	static const char *const then_keys[] = {"ua", "state", "disarm", "clear_faults", NULL};
	char sub[512], q[80];
	json_t *e;

	SUBP(sub, path, "then");
	if (!json_is_object(then)) {
		perr(c, sub, false, "\"then\": expected an object, got %s",
		     pquote(then, q, sizeof(q)));
		return;
	}
	if (k->respond != FL_TMF_RESP_COMPLETE)
		perr(c, sub, true,
		     "\"then\" applies only to a TMF that completes (\"respond\": "
		     "\"complete\")");
	pkeys(c, sub, then, "then", then_keys);
	if ((e = json_object_get(then, "ua"))) {
		char s2[512];

		if (json_is_null(e)) {
			k->ua = false;
		} else if (pascq(c, SUBP(s2, sub, "ua"), e, &k->ua_asc, &k->ua_ascq)) {
			k->ua = true;
		}
	}
	if ((e = json_object_get(then, "state"))) {
		char s2[512];

		k->then_state = pstate(c, SUBP(s2, sub, "state"), e);
	}
	if ((e = json_object_get(then, "clear_faults"))) {
		char s2[512];

		pbool(c, SUBP(s2, sub, "clear_faults"), e, &k->clear_faults);
	}
	if ((e = json_object_get(then, "disarm"))) {
		char s2[512];
		size_t i;
		json_t *d;

		SUBP(s2, sub, "disarm");
		if (!json_is_array(e)) {
			perr(c, s2, false, "\"disarm\": expected a list of rule ids, got %s",
			     pquote(e, q, sizeof(q)));
			return;
		}
		k->disarm = calloc(json_array_size(e) + 1, sizeof(char *));
		json_array_foreach(e, i, d)
		{
			if (!json_is_string(d)) {
				char s3[600];

				snprintf(s3, sizeof(s3), "%s/%zu", s2, i);
				perr(c, s3, false, "a rule id must be a string, got %s",
				     pquote(d, q, sizeof(q)));
				continue;
			}
			if (k->disarm)
				k->disarm[k->ndisarm++] = xstrdup(json_string_value(d));
		}
	}
}

/* Parses one TMF behaviour object. */
static void parse_tmf_case(struct pctx *c, const char *path, json_t *v, int fn,
			   struct sc_tmf_case *k)
{
	static const char *const keys[] = {"respond", "delay_ms", "states", "then", NULL};
	static const struct {
		const char *name;
		enum fl_tmf_resp resp;
	} resps[] = {
	    {"complete", FL_TMF_RESP_COMPLETE},
	    {"never", FL_TMF_RESP_NONE},
	    {"rejected", FL_TMF_RESP_REJECTED},
	    {"not_supported", FL_TMF_RESP_NOT_SUPPORTED},
	    {"task_not_exist", FL_TMF_RESP_TASK_NOT_EXIST},
	    {"lun_not_exist", FL_TMF_RESP_LUN_NOT_EXIST},
	    {"drop_connection", FL_TMF_RESP_DROP_CONNECTION},
	};
	char sub[512], q[80];
	json_t *e, *then;
	uint64_t n;
	bool reset = fn == FL_TMF_LUN_RESET || fn == FL_TMF_TARGET_WARM_RESET ||
		     fn == FL_TMF_TARGET_COLD_RESET;

	k->respond = FL_TMF_RESP_COMPLETE;
	k->then_state = -1;
	k->ua = reset;
	k->ua_asc = ASC_POWER_ON_RESET;
	if (!json_is_object(v)) {
		perr(c, path, false,
		     "\"%s\": expected an object {respond, delay_ms, states, then}, "
		     "got %s",
		     sc_tmf_names[fn], pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, sc_tmf_names[fn], keys);
	if ((e = json_object_get(v, "respond"))) {
		size_t i;

		for (i = 0; i < sizeof(resps) / sizeof(resps[0]) && json_is_string(e); i++)
			if (!strcmp(resps[i].name, json_string_value(e)))
				break;
		if (!json_is_string(e) || i == sizeof(resps) / sizeof(resps[0]))
			perr(c, SUBP(sub, path, "respond"), false,
			     "unknown TMF response %s (expected complete, never, rejected, "
			     "not_supported, task_not_exist, lun_not_exist or drop_connection)",
			     pquote(e, q, sizeof(q)));
		else
			k->respond = resps[i].resp;
	}
	if ((e = json_object_get(v, "delay_ms")) &&
	    pnum(c, SUBP(sub, path, "delay_ms"), e, 86400000, &n))
		k->delay_ms = (uint32_t)n;
	if ((e = json_object_get(v, "states")))
		k->states = pstates(c, SUBP(sub, path, "states"), e);
	if ((then = json_object_get(v, "then")))
		tmf_then(c, path, then, k);
}

/* Parses "tmf". */
void parse_tmf(struct pctx *c, json_t *tmf)
{
	static const char *const keys[] = {
	    "abort_task", "abort_task_set",    "clear_aca",	    "clear_task_set",
	    "lun_reset",  "target_warm_reset", "target_cold_reset", NULL};
	char q[80];

	if (!json_is_object(tmf)) {
		perr(c, "/tmf", false, "\"tmf\": expected an object, got %s",
		     pquote(tmf, q, sizeof(q)));
		return;
	}
	pkeys(c, "/tmf", tmf, "tmf", keys);
	for (int fn = 1; fn < SC_TMF_NR; fn++) {
		json_t *v = json_object_get(tmf, sc_tmf_names[fn]);
		struct sc_tmf *t = &c->sc->tmf[fn];
		size_t n = json_is_array(v) ? json_array_size(v) : 1;
		char path[64];

		if (!v)
			continue;
		t->cases = calloc(n, sizeof(*t->cases));
		if (!t->cases)
			return;
		for (size_t i = 0; i < n; i++) {
			if (json_is_array(v))
				snprintf(path, sizeof(path), "/tmf/%s/%zu", sc_tmf_names[fn], i);
			else
				snprintf(path, sizeof(path), "/tmf/%s", sc_tmf_names[fn]);
			parse_tmf_case(c, path, json_is_array(v) ? json_array_get(v, i) : v, fn,
				       &t->cases[t->n++]);
		}
	}
}

/* Parses a transport match's "pdu": one PDU kind or a list of them, into x->pdu_mask. */
static void xrule_pdus(struct pctx *c, const char *sub, json_t *p, struct sc_xrule *x)
{
	size_t n = json_is_array(p) ? json_array_size(p) : 1;
	char q[80];
	json_t *one;

	for (size_t i = 0; i < n; i++) {
		char s2[600];
		int k;

		one = json_is_array(p) ? json_array_get(p, i) : p;
		if (json_is_array(p))
			snprintf(s2, sizeof(s2), "%s/pdu/%zu", sub, i);
		else
			snprintf(s2, sizeof(s2), "%s/pdu", sub);
		for (k = 1; k <= FL_PDU_REJECT && json_is_string(one); k++)
			if (!strcmp(sc_pdu_names[k], json_string_value(one)))
				break;
		if (!json_is_string(one) || k > FL_PDU_REJECT)
			perr(c, s2, false,
			     "unknown PDU kind %s (expected scsi_command, "
			     "data_out, nop_out, tmf_request, logout_request, "
			     "scsi_response, data_in, r2t, nop_in, tmf_response, ...)",
			     pquote(one, q, sizeof(q)));
		else
			x->pdu_mask |= 1u << k;
	}
}

/* Parses a transport rule's "match" (an object with "pdu"), at sub. */
static void xrule_match(struct pctx *c, const char *sub, json_t *m, struct sc_xrule *x)
{
	static const char *const mkeys[] = {"pdu",   "opcode",	   "class", "nth",
					    "every", "after",	   "times", "probability",
					    "port",  "port_group", NULL};
	char s2[600];
	json_t *e;

	pkeys(c, sub, m, "transport match", mkeys);
	xrule_pdus(c, sub, json_object_get(m, "pdu"), x);
	if ((e = json_object_get(m, "opcode"))) {
		x->has_opcode = true;
		snprintf(s2, sizeof(s2), "%s/opcode", sub);
		parse_opcodes(c, s2, e, x->opcode_map);
	}
	if ((e = json_object_get(m, "class"))) {
		snprintf(s2, sizeof(s2), "%s/class", sub);
		x->class_mask = parse_classes(c, s2, e);
	}
	parse_count(c, sub, m, &x->count);
	if ((e = json_object_get(m, "port"))) {
		snprintf(s2, sizeof(s2), "%s/port", sub);
		parse_match_port(c, s2, e, false, &x->port);
	}
	if ((e = json_object_get(m, "port_group"))) {
		snprintf(s2, sizeof(s2), "%s/port_group", sub);
		parse_match_port(c, s2, e, true, &x->port_group);
	}
}

/* Parses a transport rule's "action": "drop", "close" or {"delay_ms": N}. */
static void xrule_action(struct pctx *c, const char *path, json_t *r, struct sc_xrule *x)
{
	json_t *e = json_object_get(r, "action");
	char sub[512], q[80];

	SUBP(sub, path, "action");
	if (json_is_string(e) && !strcmp(json_string_value(e), "drop")) {
		x->action = FL_XPORT_DROP;
	} else if (json_is_string(e) && !strcmp(json_string_value(e), "close")) {
		x->action = FL_XPORT_CLOSE;
	} else if (json_is_object(e) && json_object_size(e) == 1 &&
		   json_object_get(e, "delay_ms")) {
		double ms = 0;
		char s2[600];

		snprintf(s2, sizeof(s2), "%s/delay_ms", sub);
		x->action = FL_XPORT_DELAY;
		if (pdouble(c, s2, json_object_get(e, "delay_ms"), 0, 3600000.0, &ms))
			x->delay_us = (uint32_t)(ms * 1000.0);
	} else {
		perr(c, e ? sub : path, false,
		     "transport action: expected \"drop\", \"close\" or "
		     "{\"delay_ms\": N}, got %s",
		     pquote(e, q, sizeof(q)));
	}
}

/* Parses one transport rule. */
static void parse_xrule(struct pctx *c, const char *path, json_t *r, size_t idx, struct sc_xrule *x)
{
	static const char *const keys[] = {"id", "states", "match", "action", NULL};
	char sub[512], q[80];
	json_t *e, *m;

	if (!json_is_object(r)) {
		perr(c, path, false, "a transport rule must be an object, got %s",
		     pquote(r, q, sizeof(q)));
		return;
	}
	pkeys(c, path, r, "transport rule", keys);
	if ((e = json_object_get(r, "id")) && json_is_string(e) && json_string_value(e)[0])
		x->id = xstrdup(json_string_value(e));
	else if (e)
		perr(c, SUBP(sub, path, "id"), false, "\"id\": expected a non-empty string, got %s",
		     pquote(e, q, sizeof(q)));
	if (!x->id && asprintf(&x->id, "transport-%zu", idx) < 0)
		x->id = NULL;
	if ((e = json_object_get(r, "states")))
		x->states = pstates(c, SUBP(sub, path, "states"), e);
	m = json_object_get(r, "match");
	SUBP(sub, path, "match");
	if (!json_is_object(m) || !json_object_get(m, "pdu"))
		perr(c, m ? sub : path, false,
		     "a transport rule needs \"match\" with \"pdu\", "
		     "got %s",
		     pquote(m, q, sizeof(q)));
	else
		xrule_match(c, sub, m, x);
	xrule_action(c, path, r, x);
}

/* Parses a session-condition object (without "states" when nested). */
static void parse_session(struct pctx *c, const char *path, json_t *v, struct sc_session *s,
			  bool top)
{
	static const char *const keys[] = {"ignore_nop_out", "stall_max_cmd_sn",
					   "request_logout", "nop_in_interval_ms",
					   "states",	     NULL};
	static const char *const keys_nested[] = {"ignore_nop_out", "stall_max_cmd_sn",
						  "request_logout", "nop_in_interval_ms", NULL};
	char sub[512], q[80];
	json_t *e;
	uint64_t n;

	if (!json_is_object(v)) {
		perr(c, path, false, "\"session\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "session", top ? keys : keys_nested);
	if ((e = json_object_get(v, "ignore_nop_out")) &&
	    pbool(c, SUBP(sub, path, "ignore_nop_out"), e, &s->ignore_nop_out))
		s->set |= SESS_IGNORE_NOP;
	if ((e = json_object_get(v, "stall_max_cmd_sn")) &&
	    pbool(c, SUBP(sub, path, "stall_max_cmd_sn"), e, &s->stall_max_cmd_sn))
		s->set |= SESS_STALL;
	if ((e = json_object_get(v, "nop_in_interval_ms")) &&
	    pnum(c, SUBP(sub, path, "nop_in_interval_ms"), e, UINT32_MAX, &n)) {
		s->nop_in_interval_ms = (uint32_t)n;
		s->set |= SESS_NOP_IN;
	}
	if ((e = json_object_get(v, "request_logout"))) {
		static const char *const lkeys[] = {"after_ms", "wait_s", NULL};

		SUBP(sub, path, "request_logout");
		s->set |= SESS_LOGOUT;
		if (json_is_boolean(e)) {
			s->request_logout = json_is_true(e);
		} else if (!json_is_object(e)) {
			perr(c, sub, false,
			     "\"request_logout\": expected {after_ms, wait_s} or "
			     "true/false, got %s",
			     pquote(e, q, sizeof(q)));
		} else {
			char s2[600];
			json_t *a = json_object_get(e, "after_ms"),
			       *w = json_object_get(e, "wait_s");

			s->request_logout = true;
			pkeys(c, sub, e, "request_logout", lkeys);
			snprintf(s2, sizeof(s2), "%s/after_ms", sub);
			if (a && pnum(c, s2, a, UINT32_MAX, &n))
				s->logout_after_ms = (uint32_t)n;
			snprintf(s2, sizeof(s2), "%s/wait_s", sub);
			if (w && pnum(c, s2, w, 0xffff, &n))
				s->logout_wait_s = (uint16_t)n;
		}
	}
	if (top && (e = json_object_get(v, "states"))) {
		const char *name;
		json_t *sv;

		SUBP(sub, path, "states");
		if (!json_is_object(e)) {
			perr(c, sub, false, "\"states\": expected {STATE: {...}}, got %s",
			     pquote(e, q, sizeof(q)));
			return;
		}
		json_object_foreach(e, name, sv)
		{
			char s2[600];
			json_t *nm = json_string(name);
			int st;

			snprintf(s2, sizeof(s2), "%s/%s", sub, name);
			st = nm ? pstate(c, s2, nm) : -1;
			json_decref(nm);
			if (st >= 0 && c->sc->state_session)
				parse_session(c, s2, sv, &c->sc->state_session[st], false);
		}
	}
}

/* Parses "transport". */
void parse_transport(struct pctx *c, json_t *tr)
{
	static const char *const keys[] = {"rules", "session", NULL};
	char q[80];
	json_t *e;

	if (!json_is_object(tr)) {
		perr(c, "/transport", false, "\"transport\": expected an object, got %s",
		     pquote(tr, q, sizeof(q)));
		return;
	}
	pkeys(c, "/transport", tr, "transport", keys);
	if ((e = json_object_get(tr, "rules"))) {
		size_t i;
		json_t *r;

		if (!json_is_array(e)) {
			perr(c, "/transport/rules", false, "\"rules\": expected a list, got %s",
			     pquote(e, q, sizeof(q)));
		} else if (json_array_size(e) > FL_SCENARIO_MAX_RULES) {
			perr(c, "/transport/rules", false,
			     "\"rules\": %zu transport rules, more than the limit of %d",
			     json_array_size(e), FL_SCENARIO_MAX_RULES);
		} else {
			c->sc->xrules = calloc(json_array_size(e) + 1, sizeof(*c->sc->xrules));
			json_array_foreach(e, i, r)
			{
				char path[64];

				if (!c->sc->xrules)
					break;
				snprintf(path, sizeof(path), "/transport/rules/%zu", i);
				parse_xrule(c, path, r, i, &c->sc->xrules[c->sc->nxrules++]);
			}
		}
	}
	if ((e = json_object_get(tr, "session")))
		parse_session(c, "/transport/session", e, &c->sc->session, true);
}

/* Parses the TMF that triggers a transition ({"tmf": NAME}), at s2. */
static void transition_tmf(struct pctx *c, const char *s2, json_t *e, struct sc_transition *x)
{
	char q[80];
	int fn;

	x->on = ON_TMF;
	for (fn = 1; fn < SC_TMF_NR && json_is_string(e); fn++)
		if (!strcmp(sc_tmf_names[fn], json_string_value(e)))
			break;
	if (!json_is_string(e) || fn == SC_TMF_NR)
		perr(c, s2, false,
		     "unknown TMF %s (expected abort_task, "
		     "abort_task_set, clear_aca, clear_task_set, lun_reset, "
		     "target_warm_reset or target_cold_reset)",
		     pquote(e, q, sizeof(q)));
	else
		x->tmf_fn = fn;
}

/* Parses a transition's event: member k of "on" (at sub), whose value is e. */
static void transition_event(struct pctx *c, const char *sub, const char *k, json_t *e,
			     struct sc_transition *x)
{
	char s2[600];

	snprintf(s2, sizeof(s2), "%s/%s", sub, k);
	if (!strcmp(k, "commands") || !strcmp(k, "after_ms") || !strcmp(k, "write_beyond")) {
		x->on = !strcmp(k, "commands")	 ? ON_COMMANDS
			: !strcmp(k, "after_ms") ? ON_AFTER_MS
						 : ON_WRITE_BEYOND;
		if (pnum(c, s2, e, UINT64_MAX, &x->n) && x->n == 0 && x->on == ON_COMMANDS)
			perr(c, s2, false, "\"commands\" must be at least 1, got 0");
	} else if (!strcmp(k, "tmf")) {
		transition_tmf(c, s2, e, x);
	} else {
		bool b = false;

		x->on = !strcmp(k, "reset") ? ON_RESET : !strcmp(k, "login") ? ON_LOGIN : ON_LOGOUT;
		if (pbool(c, s2, e, &b) && !b)
			perr(c, s2, false, "\"%s\" can only be true", k);
	}
}

/* Parses one entry of "transitions", at path. */
static void parse_transition(struct pctx *c, const char *path, json_t *t, struct sc_transition *x)
{
	static const char *const keys[] = {"from", "to", "on", NULL};
	static const char *const on_keys[] = {"commands",     "after_ms", "tmf",    "reset",
					      "write_beyond", "login",	  "logout", NULL};
	char sub[512], q[80];
	json_t *e, *on;
	const char *k;

	x->from = -1;
	x->to = -1;
	if (!json_is_object(t)) {
		perr(c, path, false, "a transition must be an object, got %s",
		     pquote(t, q, sizeof(q)));
		return;
	}
	pkeys(c, path, t, "transition", keys);
	e = json_object_get(t, "from");
	if (!e || (json_is_string(e) && !strcmp(json_string_value(e), "*")))
		x->from = -1;
	else
		x->from = pstate(c, SUBP(sub, path, "from"), e);
	if (!(e = json_object_get(t, "to")))
		perr(c, path, false, "a transition needs \"to\"");
	else
		x->to = pstate(c, SUBP(sub, path, "to"), e);
	on = json_object_get(t, "on");
	SUBP(sub, path, "on");
	if (!json_is_object(on) || json_object_size(on) != 1) {
		perr(c, on ? sub : path, false,
		     "\"on\": expected one event such as {\"commands\": N}, "
		     "{\"after_ms\": T}, {\"tmf\": \"lun_reset\"}, {\"reset\": true}, "
		     "{\"write_beyond\": LBA}, {\"login\": true}, {\"logout\": true}; "
		     "got %s",
		     pquote(on, q, sizeof(q)));
		return;
	}
	if (pkeys(c, sub, on, "on", on_keys))
		return;
	json_object_foreach(on, k, e)
	{
		transition_event(c, sub, k, e, x);
	}
}

/* Parses "transitions". */
void parse_transitions(struct pctx *c, json_t *tr)
{
	char q[80];
	size_t i;
	json_t *t;

	if (!json_is_array(tr)) {
		perr(c, "/transitions", false, "\"transitions\": expected a list, got %s",
		     pquote(tr, q, sizeof(q)));
		return;
	}
	if (json_array_size(tr) > FL_SCENARIO_MAX_RULES) {
		perr(c, "/transitions", false,
		     "\"transitions\": %zu transitions, more than the limit of %d",
		     json_array_size(tr), FL_SCENARIO_MAX_RULES);
		return;
	}
	c->sc->transitions = calloc(json_array_size(tr) + 1, sizeof(*c->sc->transitions));
	if (!c->sc->transitions)
		return;
	json_array_foreach(tr, i, t)
	{
		char path[64];

		snprintf(path, sizeof(path), "/transitions/%zu", i);
		parse_transition(c, path, t, &c->sc->transitions[c->sc->ntransitions++]);
	}
}
