/* SPDX-License-Identifier: MIT */
/*
 * scenario_ports.c - the "ports" and "port_groups" sections of a scenario
 * (docs/scenario-format.md, docs/multipath.md): the target ports a front end
 * serves (one iSCSI portal each), their relative target port identifiers and
 * target port groups, and the initial asymmetric access state of each group
 * (SPC-4 r37 5.15.2). Also the "port" / "port_group" match keys that rules
 * and transport rules share, and the alua action's target group.
 */
#include "scenario_internal.h"

#include <stdlib.h>
#include <string.h>

/* Index of the port called name, or -1. */
static int port_by_name(const struct fl_scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->nports; i++)
		if (sc->ports[i].name && !strcmp(sc->ports[i].name, name))
			return (int)i;
	return -1;
}

/* Whether group id is one of the scenario's groups. */
static bool tpg_known(const struct fl_scenario *sc, uint64_t id)
{
	for (size_t i = 0; i < sc->ntpgs; i++)
		if (sc->tpgs[i].id == id)
			return true;
	return false;
}

/* Adds group id (state active/optimized) unless known. */
static void tpg_add(struct fl_scenario *sc, uint16_t id)
{
	if (tpg_known(sc, id) || sc->ntpgs >= FL_MAX_PORTS)
		return;
	sc->tpgs[sc->ntpgs].id = id;
	sc->tpgs[sc->ntpgs++].state = FL_ALUA_ACTIVE_OPTIMIZED;
}

/* Parses "port_groups": [{"id": N, "state": STATE}, ...]. */
static void parse_port_groups(struct pctx *c, json_t *v)
{
	static const char *const keys[] = {"id", "state", NULL};
	struct fl_scenario *sc = c->sc;
	char sub[128], q[80];
	size_t i;
	json_t *e;

	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > FL_MAX_PORTS) {
		perr(c, "/port_groups", false,
		     "\"port_groups\": expected a list of 1 to %d groups, got %s", FL_MAX_PORTS,
		     pquote(v, q, sizeof(q)));
		return;
	}
	json_array_foreach(v, i, e)
	{
		uint64_t n = 0;

		snprintf(sub, sizeof(sub), "/port_groups/%zu", i);
		if (!json_is_object(e)) {
			perr(c, sub, false, "a port group must be an object, got %s",
			     pquote(e, q, sizeof(q)));
			continue;
		}
		pkeys(c, sub, e, "port group", keys);
		snprintf(sub, sizeof(sub), "/port_groups/%zu/id", i);
		if (!json_object_get(e, "id")) {
			snprintf(sub, sizeof(sub), "/port_groups/%zu", i);
			perr(c, sub, false, "a port group needs \"id\" (1 to 65535)");
			continue;
		}
		if (!pnum(c, sub, json_object_get(e, "id"), 0xffff, &n))
			continue;
		if (n == 0) {
			perr(c, sub, false,
			     "\"id\": target port groups are numbered from 1, got 0");
			continue;
		}
		if (tpg_known(sc, n)) {
			perr(c, sub, false, "port group %s is listed twice",
			     pquote(json_object_get(e, "id"), q, sizeof(q)));
			continue;
		}
		sc->tpgs[sc->ntpgs].id = (uint16_t)n;
		sc->tpgs[sc->ntpgs].state = FL_ALUA_ACTIVE_OPTIMIZED;
		snprintf(sub, sizeof(sub), "/port_groups/%zu/state", i);
		if (json_object_get(e, "state"))
			palua(c, sub, json_object_get(e, "state"), &sc->tpgs[sc->ntpgs].state);
		sc->ntpgs++;
	}
}

/* Parses one entry of "ports". */
static void parse_port(struct pctx *c, size_t i, json_t *e, struct sc_port *p)
{
	static const char *const keys[] = {"id", "listen", "relative_port", "group", NULL};
	struct fl_scenario *sc = c->sc;
	char sub[128], q[80];
	json_t *x;
	uint64_t n;

	p->rel_port_id = (uint16_t)(i + 1);
	p->tpg_id = 1;
	snprintf(sub, sizeof(sub), "/ports/%zu", i);
	if (!json_is_object(e)) {
		perr(c, sub, false, "a port must be an object, got %s", pquote(e, q, sizeof(q)));
		return;
	}
	pkeys(c, sub, e, "port", keys);
	snprintf(sub, sizeof(sub), "/ports/%zu/id", i);
	if ((x = json_object_get(e, "id")) && pstr(c, sub, x, 64, &p->name)) {
		if (!p->name[0] || strspn(p->name, "0123456789") == strlen(p->name))
			perr(c, sub, false,
			     "\"id\": a port name must not be empty or a number, got %s",
			     pquote(x, q, sizeof(q)));
		else if (port_by_name(sc, p->name) >= 0 && port_by_name(sc, p->name) < (int)i)
			perr(c, sub, false, "port %s is defined twice", pquote(x, q, sizeof(q)));
	}
	if (!p->name && asprintf(&p->name, "port%zu", i + 1) < 0)
		p->name = NULL;
	snprintf(sub, sizeof(sub), "/ports/%zu/listen", i);
	if (!(x = json_object_get(e, "listen"))) {
		snprintf(sub, sizeof(sub), "/ports/%zu", i);
		perr(c, sub, false,
		     "a port needs \"listen\": its portal, \"ADDR:PORT\" (port 0: any free one)");
	} else if (pstr(c, sub, x, 200, &p->listen)) {
		const char *colon = strrchr(p->listen, ':');

		if (!colon || colon == p->listen || !colon[1] ||
		    strspn(colon + 1, "0123456789") != strlen(colon + 1) || atol(colon + 1) > 65535)
			perr(c, sub, false, "\"listen\": expected \"ADDR:PORT\", got %s",
			     pquote(x, q, sizeof(q)));
		for (size_t j = 0; j < i; j++)
			if (sc->ports[j].listen && !strcmp(sc->ports[j].listen, p->listen) &&
			    colon && strcmp(colon, ":0"))
				perr(c, sub, false, "portal %s is also port %zu's",
				     pquote(x, q, sizeof(q)), j);
	}
	snprintf(sub, sizeof(sub), "/ports/%zu/relative_port", i);
	if ((x = json_object_get(e, "relative_port")) && pnum(c, sub, x, 0xffff, &n)) {
		if (n == 0)
			perr(c, sub, false,
			     "\"relative_port\": relative target port identifiers start at 1, "
			     "got 0");
		p->rel_port_id = (uint16_t)n;
	}
	for (size_t j = 0; j < i; j++)
		if (sc->ports[j].rel_port_id == p->rel_port_id)
			perr(c, x ? sub : (snprintf(sub, sizeof(sub), "/ports/%zu", i), sub), false,
			     "relative port %u is also port %zu's", p->rel_port_id, j);
	snprintf(sub, sizeof(sub), "/ports/%zu/group", i);
	if ((x = json_object_get(e, "group")) && pnum(c, sub, x, 0xffff, &n)) {
		if (n == 0)
			perr(c, sub, false,
			     "\"group\": target port groups are numbered from 1, got 0");
		else if (json_object_get(c->root, "port_groups") && !tpg_known(sc, n))
			perr(c, sub, false, "\"group\": %s is not listed in \"port_groups\"",
			     pquote(x, q, sizeof(q)));
		p->tpg_id = (uint16_t)n;
	}
}

/* Parses "ports" and "port_groups" (before the LUNs, which refer to them). */
void parse_ports(struct pctx *c, json_t *ports, json_t *groups)
{
	struct fl_scenario *sc = c->sc;
	char q[80];
	size_t i;
	json_t *e;

	if (!ports && !groups)
		return;
	sc->tpgs = calloc(FL_MAX_PORTS, sizeof(*sc->tpgs));
	if (!sc->tpgs)
		return;
	if (groups)
		parse_port_groups(c, groups);
	if (!ports) {
		perr(c, "/port_groups", true, "\"port_groups\" goes with \"ports\"");
		return;
	}
	if (!json_is_array(ports) || json_array_size(ports) == 0 ||
	    json_array_size(ports) > FL_MAX_PORTS) {
		perr(c, "/ports", false, "\"ports\": expected a list of 1 to %d ports, got %s",
		     FL_MAX_PORTS, pquote(ports, q, sizeof(q)));
		return;
	}
	sc->ports = calloc(json_array_size(ports), sizeof(*sc->ports));
	if (!sc->ports)
		return;
	json_array_foreach(ports, i, e)
	{
		parse_port(c, i, e, &sc->ports[i]);
		sc->nports++;
		if (sc->ports[i].tpg_id)
			tpg_add(sc, sc->ports[i].tpg_id);
	}
}

/* Frees the ports. */
void scenario_free_ports(struct fl_scenario *sc)
{
	for (size_t i = 0; i < sc->nports; i++) {
		free(sc->ports[i].name);
		free(sc->ports[i].listen);
	}
	free(sc->ports);
	free(sc->tpgs);
	sc->ports = NULL;
	sc->tpgs = NULL;
	sc->nports = sc->ntpgs = 0;
}

/*
 * Parses a match key "port" (a port's "id" or its relative target port
 * number) or "port_group" (a group number) into *out.
 */
void parse_match_port(struct pctx *c, const char *path, json_t *v, bool group, uint16_t *out)
{
	const struct fl_scenario *sc = c->sc;
	/* the key as the file writes it ("port_group", "owner", "preferred", "group", "port") */
	const char *key = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char q[80];
	uint64_t n;

	if (!group && json_is_string(v)) {
		int i = port_by_name(sc, json_string_value(v));

		if (i < 0)
			perr(c, path, false,
			     "\"port\": %s is not the \"id\" of a port in \"ports\"",
			     pquote(v, q, sizeof(q)));
		else
			*out = sc->ports[i].rel_port_id;
		return;
	}
	if (!pnum(c, path, v, 0xffff, &n))
		return;
	if (n == 0) {
		perr(c, path, false, "\"%s\": numbered from 1, got 0", key);
		return;
	}
	*out = (uint16_t)n;
	if (group && sc->nports && !tpg_known(sc, n))
		perr(c, path, false, "\"%s\": group %s is not a group of \"ports\"", key,
		     pquote(v, q, sizeof(q)));
	if (!group) {
		bool found = sc->nports == 0 && n == 1;

		for (size_t i = 0; i < sc->nports; i++)
			found |= sc->ports[i].rel_port_id == n;
		if (!found)
			perr(c, path, false,
			     "\"port\": %s is not the relative port of a port in \"ports\"%s",
			     pquote(v, q, sizeof(q)),
			     sc->nports ? "" : " (without \"ports\" the one port is 1)");
	}
}

/* Accessors. */
unsigned fl_scenario_port_count(const struct fl_scenario *sc)
{
	return (unsigned)sc->nports;
}

const struct sc_port *fl_scenario_port(const struct fl_scenario *sc, unsigned i)
{
	return i < sc->nports ? &sc->ports[i] : NULL;
}

uint16_t fl_scenario_port_group(const struct fl_scenario *sc, uint16_t lun_id, uint16_t rel_port)
{
	if (rel_port == 0)
		rel_port = 1;
	for (size_t i = 0; i < sc->nports; i++)
		if (sc->ports[i].rel_port_id == rel_port)
			return sc->ports[i].tpg_id;
	for (size_t i = 0; i < sc->nluns; i++)
		if (sc->luns[i].id == lun_id)
			return sc->luns[i].cfg.tpg_id;
	return 1;
}

/* Copies the ports and groups into a LUN's core config (fl_scenario_lun). */
void scenario_lun_ports(const struct fl_scenario *sc, struct fl_lun_config *cfg)
{
	if (!sc->nports)
		return;
	cfg->nports = (unsigned)sc->nports;
	for (size_t i = 0; i < sc->nports; i++) {
		cfg->ports[i].rel_port_id = sc->ports[i].rel_port_id;
		cfg->ports[i].tpg_id = sc->ports[i].tpg_id;
	}
	cfg->ntpgs = (unsigned)sc->ntpgs;
	for (size_t i = 0; i < sc->ntpgs; i++)
		cfg->tpgs[i] = (struct fl_tpg_config){sc->tpgs[i].id, sc->tpgs[i].state};
}
