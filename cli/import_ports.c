// SPDX-License-Identifier: MIT
/*
 * import_ports.c - a target reached through several portals: one scenario
 * port per portal (docs/import.md, "Ports"). Each port's relative port and
 * target port group are what VPD 0x83 answered through that portal; the
 * groups' states are the first REPORT TARGET PORT GROUPS answer's. Then a
 * standby or unavailable path answers as it did, on its port only.
 */
#include "import_internal.h"

#include "fl_target.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Whether the scenario gets ports: the target was reached through more than one portal. */
bool imp_ports(const struct fl_import *im)
{
	return im->nportals > 1;
}

/*
 * The scenario's number for group g as the target numbered it: the same,
 * but for group 0 (LIO's default group; faultlun numbers groups from 1),
 * which becomes the lowest number no portal's group and no reported group has.
 */
uint16_t imp_group_id(const struct fl_import *im, uint16_t g)
{
	uint16_t id = 1;

	if (g)
		return g;
	for (bool taken = true; taken; id++) {
		taken = false;
		for (unsigned i = 0; i < im->nportals; i++)
			taken |= im->portals[i].have_tpg && im->portals[i].tpg == id;
		for (unsigned i = 0; i < im->ngroups; i++)
			taken |= im->groups[i].id == id;
		if (!taken)
			return id;
	}
	return id;
}

/* True when every portal has a relative port of its own (VPD 0x83), none the same. */
static bool rel_ports_known(const struct fl_import *im)
{
	for (unsigned i = 0; i < im->nportals; i++) {
		if (!im->portals[i].have_rel || !im->portals[i].rel)
			return false;
		for (unsigned j = 0; j < i; j++)
			if (im->portals[j].rel == im->portals[i].rel)
				return false;
	}
	return true;
}

/* The scenario's relative port of portal i (its own when every portal's is known, else i + 1). */
uint16_t imp_port_rel(const struct fl_import *im, unsigned i)
{
	return rel_ports_known(im) ? im->portals[i].rel : (uint16_t)(i + 1);
}

/* The state the first REPORT TARGET PORT GROUPS answer gave group g (as the target numbers it); -1
 * none. */
static int group_state(const struct fl_import *im, uint16_t g)
{
	for (unsigned i = 0; i < im->ngroups; i++)
		if (im->groups[i].id == g)
			return strcmp(fl_alua_state_text(im->groups[i].state), "reserved")
				   ? im->groups[i].state
				   : -1;
	return -1;
}

/* The ALUA state of portal i's group when the capture began (-1: not known). */
static int portal_state(const struct fl_import *im, unsigned i)
{
	return im->portals[i].have_tpg ? group_state(im, im->portals[i].tpg) : -1;
}

/* Whether the scenario's ports name group g (the target's number). */
bool imp_ports_have_group(const struct fl_import *im, uint16_t g)
{
	for (unsigned i = 0; i < im->nportals; i++)
		if (im->portals[i].have_tpg ? im->portals[i].tpg == g : g == 1)
			return true;
	return false;
}

/* The NOT READY ASCQ (ASC 04) a group in ALUA state st answers media access with; 0: none. */
uint8_t imp_alua_not_ready(int st)
{
	switch (st) {
	case 0x2: /* standby */
		return 0x0B;
	case 0x3: /* unavailable */
		return 0x0C;
	case 0xE: /* offline */
		return 0x12;
	case 0xF: /* transitioning */
		return 0x0A;
	default:
		return 0;
	}
}

/*
 * True when class x, NOT READY 04/xx, came only through portals whose
 * groups were in the state that answers so when the capture began: the
 * scenario's port groups give that answer on those ports themselves.
 */
bool imp_ports_implied(const struct fl_import *im, const struct imp_class *x)
{
	if (!imp_ports(im) || !x->portals || x->kind != IMP_SENSE || x->key != 0x02 ||
	    x->asc != 0x04)
		return false;
	for (unsigned i = 0; i < IMP_MAX_PORTALS; i++)
		if ((x->portals >> i & 1) &&
		    (i >= im->nportals || imp_alua_not_ready(portal_state(im, i)) != x->ascq))
			return false;
	return true;
}

/*
 * Writes the scenario's "ports" (one per portal, in the order the capture
 * first used them, listening on 127.0.0.N:3260) and "port_groups", with a
 * reference line per port naming the portal it stands for.
 */
void imp_ports_json(struct fl_import *im, json_t *s, json_t *refs)
{
	json_t *ports = json_array(), *groups = json_array();
	char a[64], buf[512];

	if (!rel_ports_known(im))
		fl_import_note(im, "the portals' relative port identifiers (VPD 83h) are not all "
				   "known and distinct: the ports are numbered 1, 2, ...");
	for (unsigned i = 0; i < im->nportals; i++) {
		uint16_t g = im->portals[i].have_tpg ? imp_group_id(im, im->portals[i].tpg) : 1;
		int st = portal_state(im, i);
		char id[8], listen[32];
		bool listed = false;

		snprintf(id, sizeof(id), "p%u", i + 1);
		snprintf(listen, sizeof(listen), "127.0.0.%u:3260", i + 1);
		json_array_append_new(ports, json_pack("{s:s,s:s,s:i,s:i}", "id", id, "listen",
						       listen, "relative_port",
						       (int)imp_port_rel(im, i), "group", (int)g));
		for (size_t k = 0; k < json_array_size(groups); k++)
			listed |= json_integer_value(
				      json_object_get(json_array_get(groups, k), "id")) == g;
		if (!listed && st >= 0)
			json_array_append_new(groups, json_pack("{s:i,s:s}", "id", (int)g, "state",
								fl_alua_state_text((uint8_t)st)));
		imp_addr_text(im->portals[i].family, im->portals[i].ip, im->portals[i].port, a,
			      sizeof(a));
		snprintf(buf, sizeof(buf),
			 "port %s: the portal %s (TargetPortalGroupTag %d, first command frame "
			 "%" PRIu64 "), relative port %u, group %u%s%s",
			 id, a, im->portals[i].tpgt, im->portals[i].frame, imp_port_rel(im, i), g,
			 st >= 0 ? " " : " (its state not reported: active_optimized)",
			 st >= 0 ? fl_alua_state_text((uint8_t)st) : "");
		json_array_append_new(refs, json_string(buf));
		if (!im->portals[i].have_tpg)
			fl_import_note(
			    im,
			    "port %s: no VPD 83h answer through %s named its target port "
			    "group: group 1",
			    id, a);
	}
	if (im->portals_over)
		fl_import_note(im,
			       "%u portals past the first %u: their commands go through no port",
			       im->portals_over, IMP_MAX_PORTALS);
	json_object_set_new(s, "ports", ports);
	if (json_array_size(groups))
		json_object_set_new(s, "port_groups", groups);
	else
		json_decref(groups);
}
