/* SPDX-License-Identifier: MIT */
/*
 * scenario_rules.c - loading the active parts of a scenario: SCSI command
 * rules (match + action), task-management behaviour (SAM-5 7), iSCSI
 * transport rules and session conditions (RFC 7143), state transitions, and
 * the checks of meaning that need the whole document (unique ids, references,
 * LBA ranges against the LUNs, reachable states, what each front end can do).
 */
#include "faults_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sc_class_names[FL_CLASS_NR] = {
    [FL_CLASS_OTHER] = "other",	    [FL_CLASS_READ] = "read",	[FL_CLASS_WRITE] = "write",
    [FL_CLASS_FLUSH] = "flush",	    [FL_CLASS_UNMAP] = "unmap", [FL_CLASS_TUR] = "tur",
    [FL_CLASS_INQUIRY] = "inquiry",
};

const char *const sc_tmf_names[SC_TMF_NR] = {
    [FL_TMF_ABORT_TASK] = "abort_task",
    [FL_TMF_ABORT_TASK_SET] = "abort_task_set",
    [FL_TMF_CLEAR_ACA] = "clear_aca",
    [FL_TMF_CLEAR_TASK_SET] = "clear_task_set",
    [FL_TMF_LUN_RESET] = "lun_reset",
    [FL_TMF_TARGET_WARM_RESET] = "target_warm_reset",
    [FL_TMF_TARGET_COLD_RESET] = "target_cold_reset",
};

const char *const sc_pdu_names[FL_PDU_REJECT + 1] = {
    [FL_PDU_NOP_OUT] = "nop_out",
    [FL_PDU_SCSI_CMD] = "scsi_command",
    [FL_PDU_TMF_REQ] = "tmf_request",
    [FL_PDU_LOGIN_REQ] = "login_request",
    [FL_PDU_TEXT_REQ] = "text_request",
    [FL_PDU_DATA_OUT] = "data_out",
    [FL_PDU_LOGOUT_REQ] = "logout_request",
    [FL_PDU_SNACK] = "snack",
    [FL_PDU_NOP_IN] = "nop_in",
    [FL_PDU_SCSI_RESP] = "scsi_response",
    [FL_PDU_TMF_RESP] = "tmf_response",
    [FL_PDU_LOGIN_RESP] = "login_response",
    [FL_PDU_TEXT_RESP] = "text_response",
    [FL_PDU_DATA_IN] = "data_in",
    [FL_PDU_LOGOUT_RESP] = "logout_response",
    [FL_PDU_R2T] = "r2t",
    [FL_PDU_ASYNC] = "async_message",
    [FL_PDU_REJECT] = "reject",
};

/* The scenario word for an action verb (also used in traces). */
const char *sc_verb_name(enum sc_verb v)
{
	static const char *const names[] = {
	    [VERB_NONE] = "set_state",
	    [VERB_SENSE] = "sense",
	    [VERB_STATUS] = "status",
	    [VERB_DELAY] = "delay",
	    [VERB_HOLD] = "hold",
	    [VERB_DROP] = "drop",
	    [VERB_DROP_RESPONSE] = "drop_response",
	    [VERB_SHORT] = "short",
	    [VERB_CORRUPT] = "corrupt",
	    [VERB_UA] = "ua",
	    [VERB_POWER_LOSS] = "power_loss",
	    [VERB_RESIZE] = "resize",
	    [VERB_ALUA] = "alua",
	};
	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

#define SUBP(buf, base, key) (snprintf(buf, sizeof(buf), "%s/%s", base, key), buf)

/* Parses nth / every / after / times / probability of a match object. */
static void parse_count(struct pctx *c, const char *path, json_t *m, struct sc_count *k)
{
	char sub[512];
	json_t *e;
	uint64_t n;

	if ((e = json_object_get(m, "nth")) && pnum(c, SUBP(sub, path, "nth"), e, UINT64_MAX, &n)) {
		if (!n)
			perr(c, sub, false, "\"nth\" counts from 1, got 0");
		k->nth = n;
	}
	if ((e = json_object_get(m, "every")) &&
	    pnum(c, SUBP(sub, path, "every"), e, UINT64_MAX, &n)) {
		if (!n)
			perr(c, sub, false, "\"every\" must be at least 1, got 0");
		k->every = n;
	}
	if ((e = json_object_get(m, "after")) &&
	    pnum(c, SUBP(sub, path, "after"), e, UINT64_MAX, &n))
		k->after = n;
	if ((e = json_object_get(m, "times")) &&
	    pnum(c, SUBP(sub, path, "times"), e, UINT64_MAX, &n)) {
		if (!n)
			perr(c, sub, false,
			     "\"times\" must be at least 1, got 0 (disarm the rule "
			     "instead)");
		k->times = n;
	}
	if ((e = json_object_get(m, "probability")) &&
	    pdouble(c, SUBP(sub, path, "probability"), e, 0, 1, &k->prob))
		k->has_prob = true;
	if (k->nth && k->every)
		perr(c, SUBP(sub, path, "every"), true, "\"nth\" and \"every\" exclude each other");
}

/* Parses an opcode or a list of opcodes into a 256-bit map. */
static bool parse_opcodes(struct pctx *c, const char *path, json_t *v, uint8_t map[32])
{
	char sub[512];
	size_t i;
	json_t *e;
	uint64_t n;
	bool ok = true;

	if (!json_is_array(v)) {
		if (!pnum(c, path, v, 0xff, &n))
			return false;
		map[n / 8] |= (uint8_t)(1u << (n % 8));
		return true;
	}
	json_array_foreach(v, i, e)
	{
		snprintf(sub, sizeof(sub), "%s/%zu", path, i);
		if (pnum(c, sub, e, 0xff, &n))
			map[n / 8] |= (uint8_t)(1u << (n % 8));
		else
			ok = false;
	}
	return ok;
}

/* Parses a command class or a list of classes into a mask. */
static unsigned parse_classes(struct pctx *c, const char *path, json_t *v)
{
	char sub[512], q[80];
	unsigned mask = 0;
	json_t *one = v;
	size_t i = 0, n = json_is_array(v) ? json_array_size(v) : 1;

	if (json_is_array(v) && n == 0)
		perr(c, path, false, "\"class\": the list is empty");
	for (i = 0; i < n; i++) {
		unsigned k;

		if (json_is_array(v)) {
			one = json_array_get(v, i);
			snprintf(sub, sizeof(sub), "%s/%zu", path, i);
		} else {
			snprintf(sub, sizeof(sub), "%s", path);
		}
		if (json_is_string(one) && !strcmp(json_string_value(one), "any")) {
			mask |= (1u << FL_CLASS_NR) - 1;
			continue;
		}
		for (k = 0; k < FL_CLASS_NR && json_is_string(one); k++)
			if (!strcmp(sc_class_names[k], json_string_value(one)))
				break;
		if (!json_is_string(one) || k == FL_CLASS_NR) {
			perr(c, sub, false,
			     "unknown command class %s (expected read, write, flush, "
			     "unmap, tur, inquiry, other or any)",
			     pquote(one, q, sizeof(q)));
			continue;
		}
		mask |= 1u << k;
	}
	return mask;
}

/* Parses match.lba. */
static void parse_lba(struct pctx *c, const char *path, json_t *v, struct sc_match *m)
{
	static const char *const keys[] = {"first", "last", "crosses_end", "beyond", NULL};
	char sub[512], q[80];
	json_t *f = json_object_get(v, "first"), *l = json_object_get(v, "last"),
	       *x = json_object_get(v, "crosses_end"), *b = json_object_get(v, "beyond");
	int forms = !!(f || l) + !!x + !!b;

	if (!json_is_object(v)) {
		perr(c, path, false,
		     "\"lba\": expected {first, last}, {crosses_end: true} or "
		     "{beyond: N}, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "lba", keys);
	if (forms != 1) {
		perr(c, path, false,
		     "\"lba\" needs exactly one of {first, last}, crosses_end, "
		     "beyond; got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	if (x) {
		bool t = false;

		if (pbool(c, SUBP(sub, path, "crosses_end"), x, &t) && !t)
			perr(c, sub, false,
			     "\"crosses_end\" can only be true (leave \"lba\" out "
			     "to match any LBA)");
		m->lba = LBA_CROSSES_END;
		return;
	}
	m->lba = LBA_RANGE;
	m->last = UINT64_MAX;
	if (b) {
		pnum(c, SUBP(sub, path, "beyond"), b, UINT64_MAX, &m->first);
		return;
	}
	if (!f) {
		perr(c, path, false, "\"lba\" needs \"first\"");
		return;
	}
	pnum(c, SUBP(sub, path, "first"), f, UINT64_MAX, &m->first);
	m->last = m->first;
	if (l && pnum(c, SUBP(sub, path, "last"), l, UINT64_MAX, &m->last) && m->last < m->first)
		perr(c, sub, false, "\"last\" %s is below \"first\" (the range is inclusive)",
		     pquote(l, q, sizeof(q)));
}

/* Parses a rule's match object. */
static void parse_match(struct pctx *c, const char *path, json_t *v, struct sc_match *m)
{
	static const char *const keys[] = {"lun",	  "class",     "opcode",    "lba",
					   "nth",	  "every",     "after",	    "times",
					   "probability", "window_ms", "initiator", NULL};
	char sub[512], q[80];
	json_t *e;

	m->lun_any = true;
	if (!json_is_object(v)) {
		perr(c, path, false, "\"match\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "match", keys);
	if ((e = json_object_get(v, "lun"))) {
		m->lun_any = false;
		SUBP(sub, path, "lun");
		parse_opcodes(c, sub, e, m->lun_map); /* same shape: number or list, 0..255 */
		for (unsigned l = 0; l < FL_MAX_LUNS; l++) {
			bool found = false;

			if (!(m->lun_map[l / 8] & (1u << (l % 8))))
				continue;
			for (size_t i = 0; i < c->sc->nluns; i++)
				found |= c->sc->luns[i].id == l;
			if (!found)
				perr(c, sub, false, "LUN %u is not defined in \"luns\"", l);
		}
	}
	if ((e = json_object_get(v, "class")))
		m->class_mask = parse_classes(c, SUBP(sub, path, "class"), e);
	if ((e = json_object_get(v, "opcode"))) {
		m->has_opcode = true;
		parse_opcodes(c, SUBP(sub, path, "opcode"), e, m->opcode_map);
		if (json_object_get(v, "class"))
			perr(c, sub, true, "\"class\" and \"opcode\" exclude each other");
	}
	if ((e = json_object_get(v, "lba"))) {
		parse_lba(c, SUBP(sub, path, "lba"), e, m);
		if (m->class_mask &&
		    !(m->class_mask & ~((1u << FL_CLASS_TUR) | (1u << FL_CLASS_INQUIRY))))
			perr(c, sub, true,
			     "an \"lba\" condition never matches TEST UNIT READY or "
			     "INQUIRY (they carry no LBA)");
	}
	parse_count(c, path, v, &m->count);
	if ((e = json_object_get(v, "window_ms"))) {
		json_t *f = json_array_get(e, 0), *t = json_array_get(e, 1);

		SUBP(sub, path, "window_ms");
		if (!json_is_array(e) || json_array_size(e) != 2) {
			perr(c, sub, false,
			     "\"window_ms\": expected [from, to] (to may be null), "
			     "got %s",
			     pquote(e, q, sizeof(q)));
		} else {
			m->has_window = true;
			m->win_to_ms = UINT64_MAX;
			snprintf(sub, sizeof(sub), "%s/window_ms/0", path);
			pnum(c, sub, f, UINT64_MAX, &m->win_from_ms);
			snprintf(sub, sizeof(sub), "%s/window_ms/1", path);
			if (!json_is_null(t) && pnum(c, sub, t, UINT64_MAX, &m->win_to_ms) &&
			    m->win_to_ms < m->win_from_ms)
				perr(c, sub, false, "window end %s is before its start",
				     pquote(t, q, sizeof(q)));
		}
	}
	if ((e = json_object_get(v, "initiator"))) {
		if (!json_is_string(e))
			perr(c, SUBP(sub, path, "initiator"), false,
			     "\"initiator\": expected a glob string, got %s",
			     pquote(e, q, sizeof(q)));
		else
			m->initiator = xstrdup(json_string_value(e));
	}
}

/* Parses a delay: milliseconds, or a distribution object. */
static void parse_delay(struct pctx *c, const char *path, json_t *v, struct sc_delay *d)
{
	static const char *const keys[] = {"dist", "min", "max", "median", "p99", "mean", NULL};
	char sub[512], q[80];
	json_t *dist;
	const char *name;

	if (json_is_number(v)) {
		d->dist = DIST_FIXED;
		pdouble(c, path, v, 0, 86400000.0, &d->a);
		return;
	}
	if (!json_is_object(v)) {
		perr(c, path, false, "\"delay_ms\": expected milliseconds or {dist, ...}, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "delay_ms", keys);
	dist = json_object_get(v, "dist");
	name = json_is_string(dist) ? json_string_value(dist) : "";
#define NUMK(k, out)                                                                               \
	(json_object_get(v, k)                                                                     \
	     ? pdouble(c, SUBP(sub, path, k), json_object_get(v, k), 0, 86400000.0, out)           \
	     : (perr(c, path, false, "distribution \"%s\" needs \"%s\"", name, k), false))
	if (!strcmp(name, "uniform")) {
		d->dist = DIST_UNIFORM;
		if (NUMK("min", &d->a) && NUMK("max", &d->b) && d->b < d->a)
			perr(c, SUBP(sub, path, "max"), false, "\"max\" is below \"min\"");
	} else if (!strcmp(name, "lognormal")) {
		double med = 0, p99 = 0;

		d->dist = DIST_LOGNORMAL;
		if (NUMK("median", &med) && NUMK("p99", &p99)) {
			if (med <= 0 || p99 < med) {
				perr(c, path, false, "lognormal needs 0 < median <= p99, got %s",
				     pquote(v, q, sizeof(q)));
			} else {
				/* 2.3263: the standard normal's 99th percentile */
				d->a = log(med);
				d->b = (log(p99) - d->a) / 2.3263478740;
			}
		}
	} else if (!strcmp(name, "exponential")) {
		d->dist = DIST_EXPONENTIAL;
		NUMK("mean", &d->a);
	} else {
		perr(c, dist ? SUBP(sub, path, "dist") : path, false,
		     "unknown delay distribution %s (expected \"uniform\", \"lognormal\" or "
		     "\"exponential\")",
		     pquote(dist, q, sizeof(q)));
	}
#undef NUMK
}

/* Parses a rule's action object. */
static void parse_action(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	static const char *const keys[] = {"sense",    "info",	  "format",    "status",
					   "delay_ms", "hold",	  "drop",      "drop_response",
					   "short",    "corrupt", "ua",	       "power_loss",
					   "resize",   "alua",	  "set_state", NULL};
	static const char *const verbs[] = {"sense",	     "status", "hold",	  "drop",
					    "drop_response", "short",  "corrupt", "ua",
					    "power_loss",    "resize", "alua",	  NULL};
	static const enum sc_verb verb_of[] = {
	    VERB_SENSE,	  VERB_STATUS, VERB_HOLD,	VERB_DROP,   VERB_DROP_RESPONSE, VERB_SHORT,
	    VERB_CORRUPT, VERB_UA,     VERB_POWER_LOSS, VERB_RESIZE, VERB_ALUA};
	char sub[512], q[80];
	json_t *e;
	int nverbs = 0;

	a->set_state = -1;
	if (!json_is_object(v)) {
		perr(c, path, false, "\"action\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "action", keys);
	for (int i = 0; verbs[i]; i++) {
		if (!json_object_get(v, verbs[i]))
			continue;
		if (nverbs++)
			perr(c, SUBP(sub, path, verbs[i]), true,
			     "an action has one verb: \"%s\" cannot join \"%s\"", verbs[i],
			     sc_verb_name(a->verb));
		else
			a->verb = verb_of[i];
	}
	if ((e = json_object_get(v, "delay_ms"))) {
		a->has_delay = true;
		parse_delay(c, SUBP(sub, path, "delay_ms"), e, &a->delay);
		if (!nverbs)
			a->verb = VERB_DELAY;
		else if (a->verb == VERB_HOLD || a->verb == VERB_DROP)
			perr(c, sub, true, "\"delay_ms\" cannot be combined with \"%s\"",
			     sc_verb_name(a->verb));
	}
	if ((e = json_object_get(v, "set_state")))
		a->set_state = pstate(c, SUBP(sub, path, "set_state"), e);
	if (!nverbs && !a->has_delay && !json_object_get(v, "set_state")) {
		perr(c, path, false,
		     "the action has no verb (sense, status, delay_ms, hold, drop, "
		     "drop_response, short, corrupt, ua, power_loss, resize, alua or set_state)");
		return;
	}
	if ((e = json_object_get(v, "sense")))
		psense(c, SUBP(sub, path, "sense"), e, &a->key, &a->asc, &a->ascq);
	if ((e = json_object_get(v, "info"))) {
		SUBP(sub, path, "info");
		if (!json_is_string(e) || strcmp(json_string_value(e), "lba"))
			perr(c, sub, false, "\"info\": expected \"lba\", got %s",
			     pquote(e, q, sizeof(q)));
		else if (a->verb != VERB_SENSE)
			perr(c, sub, true, "\"info\" only goes with \"sense\"");
		a->info_lba = true;
	}
	if ((e = json_object_get(v, "format"))) {
		const char *f = json_is_string(e) ? json_string_value(e) : "";

		SUBP(sub, path, "format");
		if (!strcmp(f, "fixed"))
			a->format = FORMAT_FIXED;
		else if (!strcmp(f, "descriptor"))
			a->format = FORMAT_DESCRIPTOR;
		else
			perr(c, sub, false,
			     "\"format\": expected \"fixed\" or \"descriptor\", got %s",
			     pquote(e, q, sizeof(q)));
		if (a->verb != VERB_SENSE)
			perr(c, sub, true, "\"format\" only goes with \"sense\"");
	}
	if ((e = json_object_get(v, "status"))) {
		const char *s = json_is_string(e) ? json_string_value(e) : "";

		if (!strcmp(s, "busy"))
			a->status = FL_STATUS_BUSY;
		else if (!strcmp(s, "task_set_full"))
			a->status = FL_STATUS_TASK_SET_FULL;
		else if (!strcmp(s, "reservation_conflict"))
			a->status = FL_STATUS_RESERVATION_CONFLICT;
		else if (!strcmp(s, "aca_active"))
			a->status = FL_STATUS_ACA_ACTIVE;
		else if (!strcmp(s, "task_aborted"))
			a->status = FL_STATUS_TASK_ABORTED;
		else
			perr(c, SUBP(sub, path, "status"), false,
			     "unknown status %s (expected \"busy\", \"task_set_full\", "
			     "\"reservation_conflict\", \"aca_active\" or \"task_aborted\")",
			     pquote(e, q, sizeof(q)));
	}
	if ((e = json_object_get(v, "hold"))) {
		static const char *const holds[] = {NULL, "forever", "until_abort", "until_reset",
						    "until_release"};
		const char *s = json_is_string(e) ? json_string_value(e) : "";

		for (int k = 1; k < 5; k++)
			if (!strcmp(s, holds[k]))
				a->hold = (enum sc_hold_kind)k;
		if (!a->hold)
			perr(c, SUBP(sub, path, "hold"), false,
			     "unknown hold %s (expected \"forever\", \"until_abort\", "
			     "\"until_reset\" or \"until_release\")",
			     pquote(e, q, sizeof(q)));
	}
	static const char *const flags[] = {"drop", "drop_response", "power_loss"};
	for (int k = 0; k < 3; k++) {
		bool t = false;

		if ((e = json_object_get(v, flags[k])) &&
		    pbool(c, SUBP(sub, path, flags[k]), e, &t) && !t)
			perr(c, sub, false, "\"%s\" can only be true (leave it out instead)",
			     flags[k]);
	}
	if ((e = json_object_get(v, "short"))) {
		static const char *const skeys[] = {"blocks", "bytes", NULL};
		json_t *b = json_object_get(e, "blocks"), *y = json_object_get(e, "bytes");
		uint64_t n = 0;

		SUBP(sub, path, "short");
		if (!json_is_object(e) || !!b + !!y != 1) {
			perr(c, sub, false,
			     "\"short\": expected {\"blocks\": N} or {\"bytes\": N}, "
			     "got %s",
			     pquote(e, q, sizeof(q)));
		} else {
			pkeys(c, sub, e, "short", skeys);
			a->short_in_blocks = b != NULL;
			char s2[600];

			snprintf(s2, sizeof(s2), "%s/%s", sub, b ? "blocks" : "bytes");
			if (pnum(c, s2, b ? b : y, UINT32_MAX, &n))
				a->short_len = (uint32_t)n;
		}
	}
	if ((e = json_object_get(v, "corrupt"))) {
		static const char *const ckeys[] = {"bytes", NULL};
		uint64_t n = 0;

		SUBP(sub, path, "corrupt");
		if (!json_is_object(e) || !json_object_get(e, "bytes")) {
			perr(c, sub, false, "\"corrupt\": expected {\"bytes\": N}, got %s",
			     pquote(e, q, sizeof(q)));
		} else {
			pkeys(c, sub, e, "corrupt", ckeys);
			char s2[600];

			snprintf(s2, sizeof(s2), "%s/bytes", sub);
			if (pnum(c, s2, json_object_get(e, "bytes"), 1u << 24, &n)) {
				if (!n)
					perr(c, s2, false,
					     "\"bytes\": corrupting 0 bytes does nothing");
				a->corrupt_bytes = (uint32_t)n;
			}
		}
	}
	if ((e = json_object_get(v, "ua")))
		pascq(c, SUBP(sub, path, "ua"), e, &a->ua_asc, &a->ua_ascq);
	if ((e = json_object_get(v, "resize")))
		psize(c, SUBP(sub, path, "resize"), e, &a->resize, &a->resize_in_blocks);
	if ((e = json_object_get(v, "alua")))
		palua(c, SUBP(sub, path, "alua"), e, &a->alua);
}

/* Parses "rules". */
void parse_rules(struct pctx *c, json_t *rules)
{
	static const char *const keys[] = {"id", "states", "match", "action", "until", NULL};
	struct fl_scenario *sc = c->sc;
	char q[80];
	size_t i;
	json_t *r;

	if (!json_is_array(rules)) {
		perr(c, "/rules", false, "\"rules\": expected a list of rules, got %s",
		     pquote(rules, q, sizeof(q)));
		return;
	}
	sc->rules = calloc(json_array_size(rules) + 1, sizeof(*sc->rules));
	if (!sc->rules)
		return;
	json_array_foreach(rules, i, r)
	{
		struct sc_rule *rule = &sc->rules[sc->nrules++];
		char path[64], sub[512];
		json_t *e;

		snprintf(path, sizeof(path), "/rules/%zu", i);
		rule->a.set_state = -1;
		rule->m.lun_any = true;
		if (!json_is_object(r)) {
			perr(c, path, false, "a rule must be an object, got %s",
			     pquote(r, q, sizeof(q)));
			continue;
		}
		pkeys(c, path, r, "rule", keys);
		if ((e = json_object_get(r, "id"))) {
			if (!json_is_string(e) || !json_string_value(e)[0])
				perr(c, SUBP(sub, path, "id"), false,
				     "\"id\": expected a non-empty string, got %s",
				     pquote(e, q, sizeof(q)));
			else
				rule->id = xstrdup(json_string_value(e));
		}
		if (!rule->id && asprintf(&rule->id, "rule-%zu", i) < 0)
			rule->id = NULL;
		if ((e = json_object_get(r, "states")))
			rule->states = pstates(c, SUBP(sub, path, "states"), e);
		if ((e = json_object_get(r, "match")))
			parse_match(c, SUBP(sub, path, "match"), e, &rule->m);
		e = json_object_get(r, "action");
		if (!e)
			perr(c, path, false, "rule \"%s\" has no \"action\"",
			     rule->id ? rule->id : "?");
		else
			parse_action(c, SUBP(sub, path, "action"), e, &rule->a);
		if ((e = json_object_get(r, "until"))) {
			if (!json_is_string(e) || strcmp(json_string_value(e), "written"))
				perr(c, SUBP(sub, path, "until"), false,
				     "\"until\": expected \"written\", got %s",
				     pquote(e, q, sizeof(q)));
			rule->until_written = true;
		}
	}
}

/* Parses one TMF behaviour object. */
static void parse_tmf_case(struct pctx *c, const char *path, json_t *v, int fn,
			   struct sc_tmf_case *k)
{
	static const char *const keys[] = {"respond", "delay_ms", "states", "then", NULL};
	static const char *const then_keys[] = {"ua", "state", "disarm", "clear_faults", NULL};
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
	k->ua_asc = 0x29;
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
	then = json_object_get(v, "then");
	if (!then)
		return;
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

/* Parses one transport rule. */
static void parse_xrule(struct pctx *c, const char *path, json_t *r, size_t idx, struct sc_xrule *x)
{
	static const char *const keys[] = {"id", "states", "match", "action", NULL};
	static const char *const mkeys[] = {"pdu",   "opcode", "class",	      "nth", "every",
					    "after", "times",  "probability", NULL};
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
	if (!json_is_object(m) || !json_object_get(m, "pdu")) {
		perr(c, m ? sub : path, false,
		     "a transport rule needs \"match\" with \"pdu\", "
		     "got %s",
		     pquote(m, q, sizeof(q)));
	} else {
		json_t *p = json_object_get(m, "pdu"), *one;
		size_t n = json_is_array(p) ? json_array_size(p) : 1;

		pkeys(c, sub, m, "transport match", mkeys);
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
		if ((e = json_object_get(m, "opcode"))) {
			char s2[600];

			x->has_opcode = true;
			snprintf(s2, sizeof(s2), "%s/opcode", sub);
			parse_opcodes(c, s2, e, x->opcode_map);
		}
		if ((e = json_object_get(m, "class"))) {
			char s2[600];

			snprintf(s2, sizeof(s2), "%s/class", sub);
			x->class_mask = parse_classes(c, s2, e);
		}
		parse_count(c, sub, m, &x->count);
	}
	e = json_object_get(r, "action");
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

/* Parses "transitions". */
void parse_transitions(struct pctx *c, json_t *tr)
{
	static const char *const keys[] = {"from", "to", "on", NULL};
	static const char *const on_keys[] = {"commands",     "after_ms", "tmf",    "reset",
					      "write_beyond", "login",	  "logout", NULL};
	char q[80];
	size_t i;
	json_t *t;

	if (!json_is_array(tr)) {
		perr(c, "/transitions", false, "\"transitions\": expected a list, got %s",
		     pquote(tr, q, sizeof(q)));
		return;
	}
	c->sc->transitions = calloc(json_array_size(tr) + 1, sizeof(*c->sc->transitions));
	if (!c->sc->transitions)
		return;
	json_array_foreach(tr, i, t)
	{
		struct sc_transition *x = &c->sc->transitions[c->sc->ntransitions++];
		char path[64], sub[512];
		json_t *e, *on;
		const char *k;

		snprintf(path, sizeof(path), "/transitions/%zu", i);
		x->from = -1;
		x->to = -1;
		if (!json_is_object(t)) {
			perr(c, path, false, "a transition must be an object, got %s",
			     pquote(t, q, sizeof(q)));
			continue;
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
			continue;
		}
		if (pkeys(c, sub, on, "on", on_keys))
			continue;
		json_object_foreach(on, k, e)
		{
			char s2[600];

			snprintf(s2, sizeof(s2), "%s/%s", sub, k);
			if (!strcmp(k, "commands") || !strcmp(k, "after_ms") ||
			    !strcmp(k, "write_beyond")) {
				x->on = !strcmp(k, "commands")	 ? ON_COMMANDS
					: !strcmp(k, "after_ms") ? ON_AFTER_MS
								 : ON_WRITE_BEYOND;
				if (pnum(c, s2, e, UINT64_MAX, &x->n) && x->n == 0 &&
				    x->on == ON_COMMANDS)
					perr(c, s2, false,
					     "\"commands\" must be at least 1, got 0");
			} else if (!strcmp(k, "tmf")) {
				int fn;

				x->on = ON_TMF;
				for (fn = 1; fn < SC_TMF_NR && json_is_string(e); fn++)
					if (!strcmp(sc_tmf_names[fn], json_string_value(e)))
						break;
				if (!json_is_string(e) || fn == SC_TMF_NR)
					perr(
					    c, s2, false,
					    "unknown TMF %s (expected abort_task, "
					    "abort_task_set, clear_aca, clear_task_set, lun_reset, "
					    "target_warm_reset or target_cold_reset)",
					    pquote(e, q, sizeof(q)));
				else
					x->tmf_fn = fn;
			} else {
				bool b = false;

				x->on = !strcmp(k, "reset")   ? ON_RESET
					: !strcmp(k, "login") ? ON_LOGIN
							      : ON_LOGOUT;
				if (pbool(c, s2, e, &b) && !b)
					perr(c, s2, false, "\"%s\" can only be true", k);
			}
		}
	}
}

/* Index of a rule id among SCSI and transport rules, or -1. */
static bool rule_id_exists(const struct fl_scenario *sc, const char *id)
{
	for (size_t i = 0; i < sc->nrules; i++)
		if (sc->rules[i].id && !strcmp(sc->rules[i].id, id))
			return true;
	for (size_t i = 0; i < sc->nxrules; i++)
		if (sc->xrules[i].id && !strcmp(sc->xrules[i].id, id))
			return true;
	return false;
}

/* Checks that rule ids are unique and that references resolve. */
static void check_ids(struct pctx *c)
{
	struct fl_scenario *sc = c->sc;
	size_t total = sc->nrules + sc->nxrules;

	for (size_t i = 0; i < total; i++) {
		const char *a = i < sc->nrules ? sc->rules[i].id : sc->xrules[i - sc->nrules].id;

		for (size_t j = 0; j < i && a; j++) {
			const char *b =
			    j < sc->nrules ? sc->rules[j].id : sc->xrules[j - sc->nrules].id;
			char path[64];

			if (!b || strcmp(a, b))
				continue;
			if (i < sc->nrules)
				snprintf(path, sizeof(path), "/rules/%zu/id", i);
			else
				snprintf(path, sizeof(path), "/transport/rules/%zu/id",
					 i - sc->nrules);
			perr(c, path, false, "rule id \"%s\" is used twice", a);
			break;
		}
	}
	for (int fn = 1; fn < SC_TMF_NR; fn++)
		for (size_t k = 0; k < sc->tmf[fn].n; k++)
			for (size_t d = 0; d < sc->tmf[fn].cases[k].ndisarm; d++) {
				char path[128];

				if (rule_id_exists(sc, sc->tmf[fn].cases[k].disarm[d]))
					continue;
				if (json_is_array(json_object_get(json_object_get(c->root, "tmf"),
								  sc_tmf_names[fn])))
					snprintf(path, sizeof(path), "/tmf/%s/%zu/then/disarm/%zu",
						 sc_tmf_names[fn], k, d);
				else
					snprintf(path, sizeof(path), "/tmf/%s/then/disarm/%zu",
						 sc_tmf_names[fn], d);
				perr(c, path, false,
				     "\"disarm\" names rule \"%s\", which does not "
				     "exist",
				     sc->tmf[fn].cases[k].disarm[d]);
			}
}

/* Reports LBA ranges that start past the end of every LUN they can apply to. */
static void check_lba_ranges(struct pctx *c)
{
	struct fl_scenario *sc = c->sc;
	uint64_t grow = 0; /* the largest size any resize action may give, in bytes */

	for (size_t i = 0; i < sc->nrules; i++)
		if (sc->rules[i].a.verb == VERB_RESIZE && !sc->rules[i].a.resize_in_blocks &&
		    sc->rules[i].a.resize > grow)
			grow = sc->rules[i].a.resize;
	for (size_t i = 0; i < sc->nrules; i++) {
		const struct sc_match *m = &sc->rules[i].m;
		bool reachable = false;
		uint64_t end = 0;
		uint16_t lun = 0;
		char path[64];

		if (m->lba != LBA_RANGE)
			continue;
		for (size_t l = 0; l < sc->nluns; l++) {
			const struct sc_lun *L = &sc->luns[l];
			uint64_t blocks = L->cfg.num_blocks;

			if (!m->lun_any && !(m->lun_map[L->id / 8] & (1u << (L->id % 8))))
				continue;
			if (grow / L->cfg.block_size > blocks)
				blocks = grow / L->cfg.block_size;
			for (size_t r = 0; r < sc->nrules; r++)
				if (sc->rules[r].a.verb == VERB_RESIZE &&
				    sc->rules[r].a.resize_in_blocks &&
				    sc->rules[r].a.resize > blocks)
					blocks = sc->rules[r].a.resize;
			if (m->first < blocks)
				reachable = true;
			end = L->cfg.num_blocks;
			lun = L->id;
		}
		if (reachable || sc->nluns == 0)
			continue;
		snprintf(path, sizeof(path), "/rules/%zu/match/lba", i);
		if (m->last == UINT64_MAX && m->first != m->last)
			perr(c, path, false,
			     "LBA range from %" PRIu64 " lies beyond the end of LUN %u "
			     "(%" PRIu64 " blocks, last LBA %" PRIu64 "): the rule can never match",
			     m->first, lun, end, end ? end - 1 : 0);
		else
			perr(c, path, false,
			     "LBA range [%" PRIu64 ", %" PRIu64 "] lies beyond the end "
			     "of LUN %u (%" PRIu64 " blocks, last LBA %" PRIu64
			     "): the rule can never "
			     "match",
			     m->first, m->last, lun, end, end ? end - 1 : 0);
	}
}

/* Adds edges from every state in mask (0 = all) to `to`. */
static void edges(uint64_t *adj, size_t n, uint64_t mask, int to)
{
	if (to < 0)
		return;
	for (size_t s = 0; s < n; s++)
		if (!mask || (mask & (1ull << s)))
			adj[s] |= 1ull << to;
}

/* Reports states that nothing can reach from the initial state. */
static void check_reachable(struct pctx *c)
{
	struct fl_scenario *sc = c->sc;
	uint64_t adj[SC_MAX_STATES] = {0}, seen = 1, frontier = 1;

	if (sc->nstates <= 1)
		return;
	for (size_t i = 0; i < sc->ntransitions; i++)
		edges(adj, sc->nstates,
		      sc->transitions[i].from < 0 ? 0 : 1ull << sc->transitions[i].from,
		      sc->transitions[i].to);
	for (size_t i = 0; i < sc->nrules; i++)
		edges(adj, sc->nstates, sc->rules[i].states, sc->rules[i].a.set_state);
	for (int fn = 1; fn < SC_TMF_NR; fn++)
		for (size_t k = 0; k < sc->tmf[fn].n; k++)
			if (sc->tmf[fn].cases[k].respond == FL_TMF_RESP_COMPLETE)
				edges(adj, sc->nstates, sc->tmf[fn].cases[k].states,
				      sc->tmf[fn].cases[k].then_state);
	while (frontier) {
		uint64_t next = 0;

		for (size_t s = 0; s < sc->nstates; s++)
			if (frontier & (1ull << s))
				next |= adj[s];
		frontier = next & ~seen;
		seen |= next;
	}
	for (size_t s = 1; s < sc->nstates; s++) {
		char path[64];

		if (seen & (1ull << s))
			continue;
		snprintf(path, sizeof(path), "/states/%zu", s);
		perr(c, path, false,
		     "state \"%s\" is unreachable from the initial state \"%s\" (no "
		     "transition, \"set_state\" or tmf \"then\" leads to it)",
		     sc->states[s], sc->states[0]);
	}
}

/* Reports what the tcmu front end cannot carry out. */
static void check_tcmu(struct pctx *c)
{
	struct fl_scenario *sc = c->sc;
	json_t *tmf = json_object_get(c->root, "tmf");

	for (int fn = 1; fn < SC_TMF_NR; fn++)
		for (size_t k = 0; k < sc->tmf[fn].n; k++) {
			const struct sc_tmf_case *t = &sc->tmf[fn].cases[k];
			char path[64];

			if (t->respond == FL_TMF_RESP_COMPLETE && !t->delay_ms &&
			    t->then_state < 0 && !t->ndisarm && !t->clear_faults)
				continue;
			if (json_is_array(json_object_get(tmf, sc_tmf_names[fn])))
				snprintf(path, sizeof(path), "/tmf/%s/%zu", sc_tmf_names[fn], k);
			else
				snprintf(path, sizeof(path), "/tmf/%s", sc_tmf_names[fn]);
			perr(c, path, true,
			     "\"%s\" cannot be carried out under the tcmu front end: "
			     "tcmu-runner passes no task management to a handler (use a \"hold\" "
			     "rule, or leave \"tcmu\" out of \"frontends\")",
			     sc_tmf_names[fn]);
		}
	if (sc->nxrules)
		perr(c, "/transport/rules", true,
		     "transport rules cannot be carried out under the "
		     "tcmu front end (iSCSI PDUs exist only in `faultlun serve`)");
	if (sc->session.set)
		perr(c, "/transport/session", true,
		     "transport session conditions cannot be "
		     "carried out under the tcmu front end");
	for (size_t i = 0; i < sc->ntransitions; i++) {
		char path[64];

		if (sc->transitions[i].on != ON_TMF && sc->transitions[i].on != ON_RESET)
			continue;
		snprintf(path, sizeof(path), "/transitions/%zu/on", i);
		perr(c, path, false,
		     "a transition on a %s never fires under the tcmu front end "
		     "(tcmu-runner passes no task management to a handler)",
		     sc->transitions[i].on == ON_TMF ? "TMF" : "reset");
	}
}

/* The checks of meaning that need the whole document. */
void check_meaning(struct pctx *c)
{
	unsigned fe = c->frontends ? c->frontends : c->sc->frontends;

	check_ids(c);
	check_lba_ranges(c);
	check_reachable(c);
	if (fe & FL_FE_TCMU)
		check_tcmu(c);
}

/* Frees rules, tmf, transport and transitions. */
void scenario_free_rules(struct fl_scenario *sc)
{
	for (size_t i = 0; i < sc->nrules; i++) {
		free(sc->rules[i].id);
		free(sc->rules[i].m.initiator);
	}
	free(sc->rules);
	for (int fn = 0; fn < SC_TMF_NR; fn++) {
		for (size_t k = 0; k < sc->tmf[fn].n; k++) {
			for (size_t d = 0; d < sc->tmf[fn].cases[k].ndisarm; d++)
				free(sc->tmf[fn].cases[k].disarm[d]);
			free(sc->tmf[fn].cases[k].disarm);
		}
		free(sc->tmf[fn].cases);
	}
	for (size_t i = 0; i < sc->nxrules; i++)
		free(sc->xrules[i].id);
	free(sc->xrules);
	free(sc->transitions);
}
