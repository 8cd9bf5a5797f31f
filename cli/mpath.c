/* SPDX-License-Identifier: MIT */
/*
 * mpath.c - the libiscsi runner's model of dm-multipath and the SCSI device
 * handlers: the handler of a LUN, its query and activate commands, path
 * errors and the choice of a path (mpath.h says which kernel functions each
 * follows).
 */
#include "mpath.h"
#include "fl_byteorder.h"

#include <string.h>

/* scsi_dh.c scsi_dh_blist: vendor and product prefixes, for a LUN without TPGS. */
static const struct {
	const char *vendor, *product;
	enum fl_mp_handler h;
} dh_list[] = {
    {"DGC", "RAID", FL_MP_EMC},		 {"DGC", "DISK", FL_MP_EMC},
    {"DGC", "VRAID", FL_MP_EMC},	 {"COMPAQ", "MSA1000 VOLUME", FL_MP_HP_SW},
    {"COMPAQ", "HSV110", FL_MP_HP_SW},	 {"HP", "HSV100", FL_MP_HP_SW},
    {"DEC", "HSG80", FL_MP_HP_SW},	 {"IBM", "1722", FL_MP_RDAC},
    {"IBM", "1724", FL_MP_RDAC},	 {"IBM", "1726", FL_MP_RDAC},
    {"IBM", "1742", FL_MP_RDAC},	 {"IBM", "1745", FL_MP_RDAC},
    {"IBM", "1746", FL_MP_RDAC},	 {"IBM", "1813", FL_MP_RDAC},
    {"IBM", "1814", FL_MP_RDAC},	 {"IBM", "1815", FL_MP_RDAC},
    {"IBM", "1818", FL_MP_RDAC},	 {"IBM", "3526", FL_MP_RDAC},
    {"IBM", "3542", FL_MP_RDAC},	 {"IBM", "3552", FL_MP_RDAC},
    {"SGI", "TP9", FL_MP_RDAC},		 {"SGI", "IS", FL_MP_RDAC},
    {"STK", "OPENstorage", FL_MP_RDAC},	 {"STK", "FLEXLINE 380", FL_MP_RDAC},
    {"STK", "BladeCtlr", FL_MP_RDAC},	 {"SUN", "CSM", FL_MP_RDAC},
    {"SUN", "LCSM100", FL_MP_RDAC},	 {"SUN", "STK6580_6780", FL_MP_RDAC},
    {"SUN", "SUN_6180", FL_MP_RDAC},	 {"SUN", "ArrayStorage", FL_MP_RDAC},
    {"DELL", "MD3", FL_MP_RDAC},	 {"NETAPP", "INF-01-00", FL_MP_RDAC},
    {"LSI", "INF-01-00", FL_MP_RDAC},	 {"ENGENIO", "INF-01-00", FL_MP_RDAC},
    {"LENOVO", "DE_Series", FL_MP_RDAC},
};

/* True when the space-padded field f (n bytes) starts with s. */
static bool field_starts(const uint8_t *f, size_t n, const char *s)
{
	size_t l = strlen(s);
	return l <= n && !memcmp(f, s, l);
}

enum fl_mp_handler fl_mp_handler_of(const uint8_t *inq, size_t len)
{
	if (len < 6)
		return FL_MP_NONE;
	if (inq[5] & 0x30)
		return FL_MP_ALUA;
	if (len < 32)
		return FL_MP_NONE;
	for (size_t i = 0; i < sizeof(dh_list) / sizeof(dh_list[0]); i++)
		if (field_starts(inq + 8, 8, dh_list[i].vendor) &&
		    field_starts(inq + 16, 16, dh_list[i].product))
			return dh_list[i].h;
	return FL_MP_NONE;
}

const char *fl_mp_handler_name(enum fl_mp_handler h)
{
	static const char *const names[] = {"none", "alua", "emc", "rdac", "hp_sw"};
	return (unsigned)h < sizeof(names) / sizeof(names[0]) ? names[h] : "none";
}

/* INQUIRY of VPD page pg, alloc bytes. */
static void vpd_inquiry(struct fl_mp_cmd *c, uint8_t pg, uint16_t alloc, const char *name)
{
	c->cdb[0] = 0x12;
	c->cdb[1] = 0x01;
	c->cdb[2] = pg;
	fl_put_be16(c->cdb + 3, alloc);
	c->cdb_len = 6;
	c->alloc = alloc;
	c->name = name;
}

bool fl_mp_query(enum fl_mp_handler h, struct fl_mp_cmd *c)
{
	memset(c, 0, sizeof(*c));
	switch (h) {
	case FL_MP_ALUA:
		c->cdb[0] = 0xa3; /* MAINTENANCE IN */
		c->cdb[1] = 0x0a; /* REPORT TARGET PORT GROUPS */
		fl_put_be32(c->cdb + 6, 4096);
		c->cdb_len = 12;
		c->alloc = 4096;
		c->name = "REPORT TARGET PORT GROUPS";
		return true;
	case FL_MP_EMC:
		vpd_inquiry(c, 0xc0, 252, "INQUIRY VPD C0h");
		return true;
	case FL_MP_RDAC:
		vpd_inquiry(c, 0xc9, 255, "INQUIRY VPD C9h");
		return true;
	case FL_MP_HP_SW:
		c->cdb_len = 6; /* TEST UNIT READY */
		c->name = "TEST UNIT READY";
		return true;
	default:
		return false;
	}
}

bool fl_mp_checker(enum fl_mp_handler h, struct fl_mp_cmd *c)
{
	if (h == FL_MP_EMC || h == FL_MP_RDAC)
		return fl_mp_query(h, c);
	memset(c, 0, sizeof(*c));
	c->cdb_len = 6; /* TEST UNIT READY */
	c->name = "TEST UNIT READY";
	return true;
}

bool fl_mp_needs_activate(enum fl_mp_handler h, const struct fl_mp_answer *a, uint16_t tpg,
			  bool explicit_alua)
{
	int st;

	switch (h) {
	case FL_MP_ALUA:
		if (!explicit_alua || a->status != 0)
			return false;
		st = fl_mp_rtpg_state(a->data, a->len, tpg);
		return st == 0x2 || st == 0x3 ||
		       st == 0xf; /* standby, unavailable, transitioning */
	case FL_MP_EMC:
		return a->status == 0 && a->len > 4 && a->data[4] != 2;
	case FL_MP_RDAC:
		return a->status == 0 && a->len > 8 && !(a->data[8] & 0x01);
	case FL_MP_HP_SW:
		return a->status == 0x02 && a->key == 0x02 && a->asc == 0x04 && a->ascq == 0x02;
	default:
		return false;
	}
}

/* MODE SELECT(10) with PF of a parameter list of len bytes. */
static void mode_select10(struct fl_mp_cmd *c, size_t len, const char *name)
{
	c->cdb[0] = 0x55;
	c->cdb[1] = 0x10;
	fl_put_be16(c->cdb + 7, (unsigned)len);
	c->cdb_len = 10;
	c->data_len = len;
	c->name = name;
}

bool fl_mp_activate(enum fl_mp_handler h, unsigned lun, uint16_t tpg, struct fl_mp_cmd *c)
{
	memset(c, 0, sizeof(*c));
	switch (h) {
	case FL_MP_ALUA:
		c->cdb[0] = 0xa4; /* MAINTENANCE OUT */
		c->cdb[1] = 0x0a; /* SET TARGET PORT GROUPS */
		fl_put_be32(c->cdb + 6, 8);
		c->cdb_len = 12;
		c->data[4] = 0x00; /* active/optimized */
		fl_put_be16(c->data + 6, tpg);
		c->data_len = 8;
		c->name = "SET TARGET PORT GROUPS";
		return true;
	case FL_MP_EMC:
		/* mode parameter header(10), then page 22h, long form: trespass the addressed LUN
		 */
		c->data[8] = 0x22;
		c->data[9] = 0x09;
		c->data[10] = 0x01;
		c->data[11] = 0xff;
		c->data[12] = 0xff;
		mode_select10(c, 19, "MODE SELECT(10) trespass");
		return true;
	case FL_MP_RDAC: {
		/* mode parameter header(10), then page 2Ch subpage 01h (296 bytes) */
		uint8_t *p = c->data + 8;

		p[0] = 0x40 | 0x2c;
		p[1] = 0x01;
		fl_put_be16(p + 2, 0x128);
		p[4 + 33] = 0x02; /* RDAC MODE: transfer the LUNs of the table */
		p[4 + 36] = 20;	  /* quiescence timeout */
		p[4 + 37] = 0x02; /* forced quiescence */
		if (lun < 256)
			p[4 + 38 + lun] = 0x81; /* this LUN: to the receiving controller */
		mode_select10(c, 8 + 4 + 0x128, "MODE SELECT(10) page 2Ch");
		return true;
	}
	case FL_MP_HP_SW:
		c->cdb[0] = 0x1b;
		c->cdb[4] = 0x01; /* START */
		c->cdb_len = 6;
		c->name = "START STOP UNIT";
		return true;
	default:
		return false;
	}
}

enum fl_mp_act_result fl_mp_activate_result(enum fl_mp_handler h, const struct fl_mp_answer *a)
{
	if (a->status == 0)
		return FL_MP_ACT_DONE;
	if (a->status != 0x02)
		return a->status == 0x08 ? FL_MP_ACT_RETRY : FL_MP_ACT_FAILED; /* BUSY */
	if (h == FL_MP_EMC && ((a->key == 0x05 && a->asc == 0x04 && a->ascq == 0x00) ||
			       (a->key == 0x02 && a->asc == 0x04 && a->ascq == 0x03)))
		return FL_MP_ACT_BUSY;
	if (a->key == 0x06 || (a->key == 0x02 && a->asc == 0x04))
		return FL_MP_ACT_RETRY;
	return FL_MP_ACT_FAILED;
}

int fl_mp_rtpg_state(const uint8_t *d, size_t len, uint16_t tpg)
{
	size_t end, off = 4;

	if (!d || len < 4)
		return -1;
	end = 4 + (((size_t)d[0] << 24) | ((size_t)d[1] << 16) | ((size_t)d[2] << 8) | d[3]);
	if (end > len)
		end = len;
	while (off + 8 <= end) {
		const uint8_t *g = d + off;
		uint16_t id = (uint16_t)(g[2] << 8 | g[3]);

		if (id == tpg)
			return g[0] & 0x0f;
		off += 8 + 4 * (size_t)g[7];
	}
	return -1;
}

bool fl_mp_sense_requeue(enum fl_mp_handler h, uint8_t key, uint8_t asc, uint8_t ascq)
{
	return h == FL_MP_RDAC && key == 0x02 &&
	       ((asc == 0x04 && (ascq == 0x01 || ascq == 0xa1)) || (asc == 0xa1 && ascq == 0x02));
}

bool fl_mp_path_error(const char *errno_name)
{
	return errno_name && !strcmp(errno_name, "EIO");
}

void fl_mp_init(struct fl_mp *m, const uint16_t *groups, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->n = n < FL_MP_MAX_PATHS ? n : FL_MP_MAX_PATHS;
	for (size_t i = 0; i < m->n; i++) {
		m->path[i].port = (int)i;
		m->path[i].group = groups[i];
	}
	m->current = -1;
}

int fl_mp_select(struct fl_mp *m)
{
	int cur = m->current;

	m->pg_init = false;
	if (cur >= 0 && !m->path[cur].failed)
		return cur;
	if (cur >= 0)
		for (size_t i = 0; i < m->n; i++)
			if (!m->path[i].failed && m->path[i].group == m->path[cur].group)
				return m->current = (int)i;
	/* the next group after the current one, in port order */
	for (size_t k = 1; k <= m->n; k++) {
		size_t i = ((size_t)(cur >= 0 ? cur : -1) + k) % m->n;

		if (m->path[i].failed)
			continue;
		m->pg_init = cur < 0 || m->path[i].group != m->path[cur].group;
		m->current = (int)i;
		return m->current;
	}
	/* no path: dm-multipath forgets its group, the next path's is initialised again */
	m->current = -1;
	return -1;
}

void fl_mp_fail(struct fl_mp *m, int i)
{
	bool any = false;

	if (i < 0 || (size_t)i >= m->n)
		return;
	m->path[i].failed = true;
	for (size_t k = 0; k < m->n; k++)
		any |= !m->path[k].failed;
	/* the last path: the requeued I/O finds none and the map forgets its group */
	if (!any)
		m->current = -1;
}

void fl_mp_reinstate(struct fl_mp *m, int i)
{
	if (i >= 0 && (size_t)i < m->n)
		m->path[i].failed = false;
}
