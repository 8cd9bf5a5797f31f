/* SPDX-License-Identifier: MIT */
/*
 * scenario_check.c - the checks of a scenario's meaning that need the whole
 * document: unique rule ids and resolvable references, LBA ranges against the
 * LUNs, states reachable from the initial one, and what each front end can
 * carry out (tcmu-runner passes no task management and has no iSCSI PDUs).
 */
#include "scenario_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/*
 * Checks that rule ids are unique and that references resolve; the ids are
 * hashed, so this is linear in the number of rules and references.
 */
static void check_ids(struct pctx *c)
{
	struct fl_scenario *sc = c->sc;
	size_t total = sc->nrules + sc->nxrules;
	struct strset ids = {0};

	for (size_t i = 0; i < total; i++) {
		const char *a = i < sc->nrules ? sc->rules[i].id : sc->xrules[i - sc->nrules].id;
		char path[64];

		if (!a || strset_add(&ids, a, i) == SIZE_MAX)
			continue;
		if (i < sc->nrules)
			snprintf(path, sizeof(path), "/rules/%zu/id", i);
		else
			snprintf(path, sizeof(path), "/transport/rules/%zu/id", i - sc->nrules);
		perr(c, path, false, "rule id \"%s\" is used twice", a);
	}
	for (int fn = 1; fn < SC_TMF_NR; fn++)
		for (size_t k = 0; k < sc->tmf[fn].n; k++)
			for (size_t d = 0; d < sc->tmf[fn].cases[k].ndisarm; d++) {
				char path[128];

				if (strset_get(&ids, sc->tmf[fn].cases[k].disarm[d]) != SIZE_MAX)
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
	strset_free(&ids);
}

/* Reports LBA ranges that start past the end of every LUN they can apply to. */
static void check_lba_ranges(struct pctx *c)
{
	struct fl_scenario *sc = c->sc;
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
			/* the largest capacity any action may give the LUN (resize) */
			for (size_t r = 0; r < sc->nrules; r++) {
				const struct fl_action *act =
				    fl_action_by_verb(sc->rules[r].a.verb);

				if (act && act->reach)
					act->reach(&sc->rules[r].a, L->cfg.block_size, &blocks);
			}
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

/* Reports rule actions that one of the front ends fe cannot carry out (fl_actions). */
static void check_action_frontends(struct pctx *c, unsigned fe)
{
	static const struct {
		unsigned fe;
		const char *name;
	} fes[] = {{FL_FE_ISCSI, "iscsi"}, {FL_FE_TCMU, "tcmu"}, {FL_FE_VM, "vm"}};

	for (size_t i = 0; i < c->sc->nrules; i++) {
		const struct sc_action *a = &c->sc->rules[i].a;
		const struct fl_action *d[3] = {fl_action_by_verb(a->verb),
						a->has_delay ? fl_actions[VERB_DELAY] : NULL,
						a->set_state >= 0 ? fl_actions[VERB_NONE] : NULL};

		for (size_t k = 0; k < 3; k++)
			for (size_t f = 0; f < 3 && d[k]; f++) {
				char path[96];

				if (!(fe & fes[f].fe) || (d[k]->frontends & fes[f].fe))
					continue;
				snprintf(path, sizeof(path), "/rules/%zu/action/%s", i, d[k]->name);
				perr(c, path, true,
				     "\"%s\" cannot be carried out under the %s front end (leave "
				     "\"%s\" out of \"frontends\")",
				     d[k]->name, fes[f].name, fes[f].name);
			}
	}
}

/* The checks of meaning that need the whole document. */
void check_meaning(struct pctx *c)
{
	unsigned fe = c->frontends ? c->frontends : c->sc->frontends;

	check_ids(c);
	check_lba_ranges(c);
	check_reachable(c);
	check_action_frontends(c, fe);
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
