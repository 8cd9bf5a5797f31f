// SPDX-License-Identifier: MIT
/*
 * import_ports.c - a target reached through several target ports: one
 * scenario port per target port (docs/import.md, "Ports"). An iSCSI target
 * portal group is a SCSI target port (RFC 7143 4.4.1), so the portals are
 * grouped by the TargetPortalGroupTag of their logins: two portals of one
 * group are one port (the scenario's listens on the first). Each port's
 * relative port and target port group are what VPD 0x83 answered through
 * its portals; the groups' states are the first REPORT TARGET PORT GROUPS
 * answer's. Then a standby or unavailable path answers as it did, on its
 * port only.
 */
#include "import_internal.h"

#include "fl_target.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Groups the portals into target ports (import_internal.h). */
void imp_ports_assign(struct fl_import *im)
{
	im->ntports = 0;
	for (unsigned i = 0; i < im->nportals; i++) {
		unsigned j;

		/* a portal whose login was not captured (no tag): a port of its own */
		for (j = 0; j < i; j++)
			if (im->portals[i].tpgt >= 0 && im->portals[j].tpgt == im->portals[i].tpgt)
				break;
		im->portals[i].tport = j < i ? im->portals[j].tport : im->ntports++;
	}
}

/* Whether the scenario gets ports: the target was reached through more than one target port. */
bool imp_ports(const struct fl_import *im)
{
	return im->ntports > 1;
}

/* The first portal of target port p. */
static unsigned first_portal(const struct fl_import *im, unsigned p)
{
	for (unsigned i = 0; i < im->nportals; i++)
		if (im->portals[i].tport == p)
			return i;
	return 0;
}

/* The first portal of target port p that VPD 0x83 named its relative port (rel) or group through;
 * -1 none. */
static int port_portal(const struct fl_import *im, unsigned p, bool rel)
{
	for (unsigned i = 0; i < im->nportals; i++)
		if (im->portals[i].tport == p &&
		    (rel ? im->portals[i].have_rel : im->portals[i].have_tpg))
			return (int)i;
	return -1;
}

/* Whether VPD 0x83 named target port p's group, and which (the target's number). */
static bool port_tpg(const struct fl_import *im, unsigned p, uint16_t *g)
{
	int i = port_portal(im, p, false);

	if (i >= 0)
		*g = im->portals[i].tpg;
	return i >= 0;
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

/* True when every target port has a relative port of its own (VPD 0x83), none the same. */
static bool rel_ports_known(const struct fl_import *im)
{
	for (unsigned p = 0; p < im->ntports; p++) {
		int i = port_portal(im, p, true);

		if (i < 0 || !im->portals[i].rel)
			return false;
		for (unsigned q = 0; q < p; q++)
			if (im->portals[port_portal(im, q, true)].rel == im->portals[i].rel)
				return false;
	}
	return true;
}

/* The scenario's relative port of target port p (its own when every port's is known, else p + 1).
 */
uint16_t imp_port_rel(const struct fl_import *im, unsigned p)
{
	return rel_ports_known(im) ? im->portals[port_portal(im, p, true)].rel : (uint16_t)(p + 1);
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

/* The ALUA state of target port p's group when the capture began (-1: not known). */
static int port_state(const struct fl_import *im, unsigned p)
{
	uint16_t g;

	return port_tpg(im, p, &g) ? group_state(im, g) : -1;
}

/* Whether the scenario's ports name group g (the target's number). */
bool imp_ports_have_group(const struct fl_import *im, uint16_t g)
{
	for (unsigned p = 0; p < im->ntports; p++) {
		uint16_t pg = 1;

		port_tpg(im, p, &pg);
		if (pg == g)
			return true;
	}
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
 * True when class x, NOT READY 04/xx, came only through ports whose groups
 * were in the state that answers so when the capture began: the scenario's
 * port groups give that answer on those ports themselves.
 */
bool imp_ports_implied(const struct fl_import *im, const struct imp_class *x)
{
	if (!imp_ports(im) || !x->portals || x->kind != IMP_SENSE || x->key != 0x02 ||
	    x->asc != 0x04)
		return false;
	for (unsigned i = 0; i < IMP_MAX_PORTALS; i++)
		if ((x->portals >> i & 1) &&
		    (i >= im->nportals ||
		     imp_alua_not_ready(port_state(im, im->portals[i].tport)) != x->ascq))
			return false;
	return true;
}

/*
 * The one target port every command of class x came through, when the
 * scenario has ports; -1 when they came through several, or it has none.
 */
int imp_ports_only(const struct fl_import *im, const struct imp_class *x)
{
	int p = -1;

	if (!imp_ports(im) || !x->portals)
		return -1;
	for (unsigned i = 0; i < IMP_MAX_PORTALS; i++) {
		if (!(x->portals >> i & 1))
			continue;
		if (i >= im->nportals || (p >= 0 && (unsigned)p != im->portals[i].tport))
			return -1;
		p = (int)im->portals[i].tport;
	}
	return p;
}

/* Lists the portals of target port p into buf: "ADDR:PORT (frame N), ...". */
static void port_portals(const struct fl_import *im, unsigned p, char *buf, size_t len)
{
	size_t used = 0;
	char a[64];

	buf[0] = 0;
	for (unsigned i = 0; i < im->nportals && used < len; i++) {
		if (im->portals[i].tport != p)
			continue;
		imp_addr_text(im->portals[i].family, im->portals[i].ip, im->portals[i].port, a,
			      sizeof(a));
		used += (size_t)snprintf(buf + used, len - used,
					 "%s%s (first command frame %" PRIu64 ")", used ? ", " : "",
					 a, im->portals[i].frame);
	}
}

/*
 * Writes the scenario's "ports" (one per target port, in the order the
 * capture first used them, listening on 127.0.0.N:3260) and "port_groups",
 * with a reference line per port naming the portals it stands for.
 */
void imp_ports_json(struct fl_import *im, json_t *s, json_t *refs)
{
	json_t *ports = json_array(), *groups = json_array();
	char list[IMP_MAX_PORTALS * 64], buf[1536];

	if (!rel_ports_known(im))
		fl_import_note(im, "the target ports' relative port identifiers (VPD 83h) are not "
				   "all known and distinct: the ports are numbered 1, 2, ...");
	for (unsigned p = 0; p < im->ntports; p++) {
		uint16_t tg = 1, g;
		bool named = port_tpg(im, p, &tg), listed = false;
		int st = port_state(im, p);
		char id[16], listen[40];

		g = named ? imp_group_id(im, tg) : 1;
		snprintf(id, sizeof(id), "p%u", p + 1);
		snprintf(listen, sizeof(listen), "127.0.0.%u:3260", p + 1);
		json_array_append_new(ports, json_pack("{s:s,s:s,s:i,s:i}", "id", id, "listen",
						       listen, "relative_port",
						       (int)imp_port_rel(im, p), "group", (int)g));
		for (size_t k = 0; k < json_array_size(groups); k++)
			listed |= json_integer_value(
				      json_object_get(json_array_get(groups, k), "id")) == g;
		if (!listed && st >= 0)
			json_array_append_new(groups, json_pack("{s:i,s:s}", "id", (int)g, "state",
								fl_alua_state_text((uint8_t)st)));
		port_portals(im, p, list, sizeof(list));
		snprintf(buf, sizeof(buf),
			 "port %s: target portal group %d: the portal(s) %s; relative port %u, "
			 "group %u%s%s",
			 id, im->portals[first_portal(im, p)].tpgt, list, imp_port_rel(im, p), g,
			 st >= 0 ? " " : " (its state not reported: active_optimized)",
			 st >= 0 ? fl_alua_state_text((uint8_t)st) : "");
		json_array_append_new(refs, json_string(buf));
		if (!named)
			fl_import_note(im,
				       "port %s: no VPD 83h answer through its portals named its "
				       "target port group: group 1",
				       id);
	}
	if (im->portals_over)
		fl_import_note(
		    im, "%u portals past the first %u: their commands go through the first port",
		    im->portals_over, IMP_MAX_PORTALS);
	json_object_set_new(s, "ports", ports);
	if (json_array_size(groups))
		json_object_set_new(s, "port_groups", groups);
	else
		json_decref(groups);
}

/*
 * Notes portals that share a target port (one TargetPortalGroupTag): one
 * port of the scenario stands for them, listening on one address.
 */
void imp_ports_note_shared(struct fl_import *im)
{
	char list[IMP_MAX_PORTALS * 64];

	for (unsigned p = 0; p < im->ntports; p++) {
		unsigned n = 0;

		for (unsigned i = 0; i < im->nportals; i++)
			n += im->portals[i].tport == p;
		if (n < 2)
			continue;
		port_portals(im, p, list, sizeof(list));
		fl_import_note(
		    im,
		    "the target was reached through %u portals of one target portal "
		    "group (one SCSI target port): %s; the scenario's port listens on one "
		    "address (faultlun serve --listen gives it)",
		    n, list);
	}
}
