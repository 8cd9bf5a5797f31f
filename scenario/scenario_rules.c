/* SPDX-License-Identifier: MIT */
/*
 * scenario_rules.c - loading the SCSI command rules of a scenario (match and
 * action, docs/scenario-format.md "rules"), with the name tables and the
 * match parsers that transport rules share. Sense data per SPC-4 r37 4.5,
 * statuses per SAM-5 r21 5.3.
 */
#include "scenario_internal.h"

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

/* Parses nth / every / after / times / probability of a match object. */
void parse_count(struct pctx *c, const char *path, json_t *m, struct sc_count *k)
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
bool parse_opcodes(struct pctx *c, const char *path, json_t *v, uint8_t map[32])
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
unsigned parse_classes(struct pctx *c, const char *path, json_t *v)
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

/* A match's "window_ms": [from, to], to null for no end (path: the match's). */
static void parse_window(struct pctx *c, const char *path, json_t *e, struct sc_match *m)
{
	char sub[512], q[80];
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

/*
 * "service_action": 0..31, the CDB's service action field; every opcode of
 * the match's "opcode" must have service actions (fl_opcode_has_sa).
 */
static void parse_service_action(struct pctx *c, const char *path, json_t *e, struct sc_match *m)
{
	char q[80];

	if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 31) {
		perr(c, path, false, "\"service_action\": expected 0..31, got %s",
		     pquote(e, q, sizeof(q)));
		return;
	}
	if (!m->has_opcode) {
		perr(c, path, false, "\"service_action\" needs \"opcode\"");
		return;
	}
	for (unsigned op = 0; op < 256; op++)
		if ((m->opcode_map[op / 8] & (1u << (op % 8))) && !fl_opcode_has_sa((uint8_t)op)) {
			perr(c, path, false,
			     "\"service_action\": opcode 0x%02x has no service actions", op);
			return;
		}
	m->has_sa = true;
	m->sa = (uint8_t)json_integer_value(e);
}

/* Parses a rule's match object. */
static void parse_match(struct pctx *c, const char *path, json_t *v, struct sc_match *m)
{
	static const char *const keys[] = {"lun",   "class",	   "opcode",	"service_action",
					   "lba",   "nth",	   "every",	"after",
					   "times", "probability", "window_ms", "initiator",
					   "port",  "port_group",  NULL};
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
	if ((e = json_object_get(v, "service_action")))
		parse_service_action(c, SUBP(sub, path, "service_action"), e, m);
	if ((e = json_object_get(v, "lba"))) {
		parse_lba(c, SUBP(sub, path, "lba"), e, m);
		if (m->class_mask &&
		    !(m->class_mask & ~((1u << FL_CLASS_TUR) | (1u << FL_CLASS_INQUIRY))))
			perr(c, sub, true,
			     "an \"lba\" condition never matches TEST UNIT READY or "
			     "INQUIRY (they carry no LBA)");
	}
	parse_count(c, path, v, &m->count);
	if ((e = json_object_get(v, "window_ms")))
		parse_window(c, path, e, m);
	if ((e = json_object_get(v, "initiator"))) {
		if (!json_is_string(e))
			perr(c, SUBP(sub, path, "initiator"), false,
			     "\"initiator\": expected a glob string, got %s",
			     pquote(e, q, sizeof(q)));
		else
			m->initiator = xstrdup(json_string_value(e));
	}
	if ((e = json_object_get(v, "port")))
		parse_match_port(c, SUBP(sub, path, "port"), e, false, &m->port);
	if ((e = json_object_get(v, "port_group")))
		parse_match_port(c, SUBP(sub, path, "port_group"), e, true, &m->port_group);
}

/* Appends "X", "X or Y", "X, Y or Z" (quoted) to buf for the n names. */
static void list_names(char *buf, size_t size, const char *const *names, size_t n)
{
	size_t len = strlen(buf);

	for (size_t i = 0; i < n && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 < n ? ", " : " or ";

		snprintf(buf + len, size - len, "%s\"%s\"", sep, names[i]);
		len = strlen(buf);
	}
}

/* Whether key is among the row's own modifiers. */
static bool desc_has_key(const struct fl_action *d, const char *key)
{
	for (const char *const *k = d->keys; *k; k++)
		if (!strcmp(*k, key))
			return true;
	return false;
}

/*
 * Has each verb named in v parse its values, then, for a modifier present
 * that none of those takes (already reported), the first row taking it.
 */
static void parse_values(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	bool called[VERB_NR] = {false};

	for (size_t i = 0; i < VERB_NR; i++) {
		const struct fl_action *d = fl_action_at(i);

		if (!d->joins && json_object_get(v, d->name)) {
			d->parse(c, path, v, a);
			called[i] = true;
		}
	}
	for (size_t i = 0; i < VERB_NR; i++)
		for (const char *const *k = fl_action_at(i)->keys; *k; k++) {
			bool taken = false;

			for (size_t j = 0; j < VERB_NR && !taken; j++)
				taken = called[j] && desc_has_key(fl_action_at(j), *k);
			if (!taken && json_object_get(v, *k)) {
				fl_action_at(i)->parse(c, path, v, a);
				called[i] = true;
			}
		}
}

/* Every key an action may have (names and modifiers of the registry), NULL-terminated. */
static size_t action_keys(const char **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < VERB_NR && n + 1 < max; i++)
		out[n++] = fl_action_at(i)->name;
	for (size_t i = 0; i < VERB_NR; i++)
		for (const char *const *k = fl_action_at(i)->keys; *k && n + 1 < max; k++) {
			size_t j = 0;

			while (j < n && strcmp(out[j], *k))
				j++;
			if (j == n)
				out[n++] = *k;
		}
	out[n] = NULL;
	return n;
}

/* Reports the modifiers of the action that its verb does not take. */
static void check_modifiers(struct pctx *c, const char *path, json_t *v,
			    const struct fl_action *verb)
{
	char sub[512], with[256];

	for (size_t i = 0; i < VERB_NR; i++)
		for (const char *const *k = fl_action_at(i)->keys; *k; k++) {
			const char *rows[32];
			size_t n = 0;
			bool first = true;

			for (size_t j = 0; j < i && first; j++)
				first = !desc_has_key(fl_action_at(j), *k);
			if (!first || !json_object_get(v, *k) || (verb && desc_has_key(verb, *k)))
				continue;
			for (size_t j = 0; j < VERB_NR && n < 32; j++)
				if (desc_has_key(fl_action_at(j), *k))
					rows[n++] = fl_action_at(j)->name;
			with[0] = 0;
			list_names(with, sizeof(with), rows, n);
			perr(c, SUBP(sub, path, *k), true, "\"%s\" only goes with %s", *k, with);
		}
}

/* The verb of the action object v (reporting a second one), or NULL. */
static const struct fl_action *action_verb(struct pctx *c, const char *path, json_t *v)
{
	const struct fl_action *verb = NULL;
	char sub[512];

	for (size_t i = 0; i < VERB_NR; i++) {
		const struct fl_action *d = fl_action_at(i);

		if (d->joins || !json_object_get(v, d->name))
			continue;
		if (verb)
			perr(c, SUBP(sub, path, d->name), true,
			     "an action has one verb: \"%s\" cannot join \"%s\"", d->name,
			     verb->name);
		else
			verb = d;
	}
	return verb;
}

/* Reports an action object without a verb, listing the registry's names. */
static void report_no_verb(struct pctx *c, const char *path)
{
	const char *names[32];
	char list[512] = "";
	size_t n = 0;

	for (size_t i = 0; i < VERB_NR && n < 32; i++)
		names[n++] = fl_action_at(i)->name;
	list_names(list, sizeof(list), names, n);
	perr(c, path, false, "the action has no verb (%s)", list);
}

/*
 * Parses a rule's action object. The verb is resolved here, once, into
 * a->verb; each action's own file parses its values (fl_action.parse).
 */
static void parse_action(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	const struct fl_action *verb, *delay = fl_actions[VERB_DELAY];
	const char *keys[64];
	char q[80];

	a->set_state = -1;
	if (!json_is_object(v)) {
		perr(c, path, false, "\"action\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	action_keys(keys, sizeof(keys) / sizeof(keys[0]));
	pkeys(c, path, v, "action", keys);
	verb = action_verb(c, path, v);
	if (verb)
		a->verb = verb->verb;
	delay->parse(c, path, v, a);
	if (a->has_delay && !verb) {
		a->verb = VERB_DELAY;
	} else if (a->has_delay && !verb->with_delay) {
		char sub[512];

		perr(c, SUBP(sub, path, delay->name), true,
		     "\"delay_ms\" cannot be combined with \"%s\"", verb->name);
	}
	fl_actions[VERB_NONE]->parse(c, path, v, a);
	if (!verb && !a->has_delay && !json_object_get(v, fl_actions[VERB_NONE]->name)) {
		report_no_verb(c, path);
		return;
	}
	check_modifiers(c, path, v, verb);
	parse_values(c, path, v, a);
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
	if (json_array_size(rules) > FL_SCENARIO_MAX_RULES) {
		perr(c, "/rules", false, "\"rules\": %zu rules, more than the limit of %d",
		     json_array_size(rules), FL_SCENARIO_MAX_RULES);
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
