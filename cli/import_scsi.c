/* SPDX-License-Identifier: MIT */
/*
 * import_scsi.c - `faultlun import`: what the target's answers say, and the
 * scenario that answers the same (docs/import.md).
 *
 * Identity per LUN: standard INQUIRY (SPC-4 r37 6.6.2: vendor, product,
 * revision, RMB), VPD 80h (serial) and 83h (an NAA designator of the LU),
 * READ CAPACITY (10) and (16) (SBC-3 r36 5.16, 5.17: block size, blocks,
 * LBPME, LBPRZ), MODE SENSE's header WP and pages 08h (WCE) and 0Ah
 * (D_SENSE), REPORT LUNS. Every non-GOOD answer becomes a rule matched by
 * LUN, opcode and, for commands with an LBA, the failing LBA (INFORMATION)
 * or the command's range; commands never answered become holds. The
 * command and answer frames go into the scenario's references.
 */
#include "import_internal.h"

#include "fl_target.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether a command's data-in tells about the target's identity. */
bool imp_scsi_wants_data(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case SPC_OP_INQUIRY:
	case SBC_OP_READ_CAPACITY_10:
	case SPC_OP_REPORT_LUNS:
	case 0x1a: /* MODE SENSE(6) */
	case SPC_OP_MODE_SENSE_10:
		return true;
	case SBC_OP_SERVICE_ACTION_IN_16:
		return (cdb[1] & 0x1f) == 0x10; /* READ CAPACITY(16) */
	case SPC_OP_MAINTENANCE_IN:
		return (cdb[1] & 0x1f) == SPC_SA_REPORT_TPGS;
	default:
		return false;
	}
}

/* Whether the connection belongs to the target imported (the first named). */
bool imp_scsi_target_is(struct fl_import *im, const struct imp_conn *c)
{
	if (!c->target_name[0])
		return true;
	if (!im->target[0]) {
		if (im->o.target && strcmp(im->o.target, c->target_name))
			return false;
		snprintf(im->target, sizeof(im->target), "%s", c->target_name);
	}
	return !strcmp(im->target, c->target_name);
}

bool imp_scsi_target_ok(struct fl_import *im, struct imp_conn *c)
{
	if (imp_scsi_target_is(im, c))
		return true;
	if (im->target[0])
		im->other_targets++;
	return false;
}

/* Adds a note (import.h). */
void fl_import_note(struct fl_import *im, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (im->nnotes >= IMP_MAX_NOTES) {
		im->notes_over++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		im->notes[im->nnotes++] = s;
	va_end(ap);
}

/* Seconds since the first frame. */
double imp_secs(const struct fl_import *im, int64_t t_us)
{
	return (double)(t_us - im->t0_us) / 1e6;
}

/* An address and port as text. */
void imp_addr_text(int family, const uint8_t *ip, uint16_t port, char *buf, size_t len)
{
	if (family == 4)
		snprintf(buf, len, "%u.%u.%u.%u:%u", ip[0], ip[1], ip[2], ip[3], port);
	else {
		size_t o = snprintf(buf, len, "[");
		for (int i = 0; i < 16 && o < len; i += 2)
			o += snprintf(buf + o, len - o, "%s%x", i ? ":" : "", fl_get_be16(ip + i));
		if (o < len)
			snprintf(buf + o, len - o, "]:%u", port);
	}
}

/* Copies an INQUIRY text field without trailing blanks; non-printable bytes become '?'. */
static void inq_text(char *dst, const uint8_t *src, size_t n)
{
	size_t l = n;

	while (l && (src[l - 1] == ' ' || src[l - 1] == 0))
		l--;
	for (size_t i = 0; i < l; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f && src[i] != '"' && src[i] != '\\')
			     ? (char)src[i]
			     : '?';
	dst[l] = 0;
}

/* Data-in of an identity command, kept up to IMP_MAX_DATA. */
void imp_scsi_data_in(struct fl_import *im, struct imp_cmd *m, uint32_t offset, const uint8_t *p,
		      size_t n)
{
	(void)im;
	if (offset >= IMP_MAX_DATA)
		return;
	if (n > IMP_MAX_DATA - offset)
		n = IMP_MAX_DATA - offset;
	if (!m->data && !(m->data = calloc(1, IMP_MAX_DATA)))
		return;
	memcpy(m->data + offset, p, n);
	if (offset + n > m->data_len)
		m->data_len = offset + (uint32_t)n;
}

/* The mode pages of MODE SENSE data (header of hl bytes, block descriptors of bdl). */
static void mode_pages(struct imp_lun *l, const uint8_t *p, uint32_t n, uint32_t hl, uint32_t bdl)
{
	for (uint32_t o = hl + bdl; o + 2 <= n;) {
		uint8_t page = p[o] & 0x3f;
		bool spf = p[o] & 0x40;
		uint32_t pl = spf ? (o + 4 <= n ? fl_get_be16(p + o + 2) + 4u : n) : p[o + 1] + 2u;
		l->mode_seen[page / 8] |= 1u << (page % 8);
		if (!spf && page == 0x08 && o + 3 <= n) {
			l->have_wce = true;
			l->wce = p[o + 2] & 0x04;
		} else if (!spf && page == 0x0a && o + 3 <= n) {
			l->have_dsense = true;
			l->dsense = p[o + 2] & 0x04;
		}
		o += pl;
	}
}

/* See import_internal.h. */
bool imp_vpd83_naa(const uint8_t *p, uint32_t n, uint64_t *naa)
{
	uint32_t end = n >= 4 ? 4 + fl_get_be16(p + 2) : 0;

	if (end > n)
		end = n;
	for (uint32_t o = 4; o + 4 <= end;) {
		uint32_t dl = p[o + 3];
		if (o + 4 + dl > end)
			break;
		if ((p[o] & 0x0f) == 1 && ((p[o + 1] >> 4) & 3) == 0 && (p[o + 1] & 0x0f) == 3 &&
		    dl == 8) {
			*naa = (uint64_t)fl_get_be32(p + o + 4) << 32 | fl_get_be32(p + o + 8);
			return true;
		}
		o += 4 + dl;
	}
	return false;
}

/*
 * The 16-byte NAA designator of the logical unit (NAA 6, IEEE Registered
 * Extended: binary, association 0, type 3) of a VPD 0x83 page: its two
 * halves. False without one.
 */
bool imp_vpd83_naa16(const uint8_t *p, uint32_t n, uint64_t *hi, uint64_t *lo)
{
	uint32_t end = n >= 4 ? 4 + fl_get_be16(p + 2) : 0;

	if (end > n)
		end = n;
	for (uint32_t o = 4; o + 4 <= end && o + 4 + p[o + 3] <= end; o += 4 + p[o + 3])
		if ((p[o] & 0x0f) == 1 && ((p[o + 1] >> 4) & 3) == 0 && (p[o + 1] & 0x0f) == 3 &&
		    p[o + 3] == 16) {
			*hi = fl_get_be64(p + o + 4);
			*lo = fl_get_be64(p + o + 12);
			return true;
		}
	return false;
}

/*
 * A designator of the target port (association 1) of a VPD 0x83 page, of
 * type 4 (relative target port, SPC-4 7.8.6.7) or 5 (target port group,
 * 7.8.6.8): its 16-bit value, the port or group the command came through.
 * False without one.
 */
static bool vpd83_port(const uint8_t *p, uint32_t n, uint8_t type, uint16_t *v)
{
	uint32_t end = 4 + fl_get_be16(p + 2), o = 4;

	if (end > n)
		end = n;
	while (o + 4 <= end) {
		uint8_t dl = p[o + 3];

		if (o + 4 + dl > end)
			break;
		if (((p[o + 1] >> 4) & 3) == 1 && (p[o + 1] & 0x0f) == type && dl == 4) {
			*v = fl_get_be16(p + o + 6);
			return true;
		}
		o += 4 + dl;
	}
	return false;
}

/*
 * A REPORT TARGET PORT GROUPS answer's groups and states, kept from the
 * first one (the scenario's port_groups when the target had several portals).
 */
static void rtpg_groups(struct fl_import *im, const uint8_t *c, const uint8_t *p, uint32_t n)
{
	uint32_t o = ((c[1] >> 5) & 7) == 1 ? 8 : 4, end;

	if (im->have_groups || n < 4)
		return;
	im->have_groups = true;
	end = 4 + fl_get_be32(p);
	if (end > n)
		end = n;
	for (; o + 8 <= end && im->ngroups < IMP_MAX_PORTALS; o += 8 + 4u * p[o + 7]) {
		im->groups[im->ngroups].id = fl_get_be16(p + o + 2);
		im->groups[im->ngroups++].state = p[o] & 0x0f;
	}
}

/*
 * A REPORT TARGET PORT GROUPS answer (SPC-4 6.36): the state of the LUN's
 * group (VPD 0x83's, else the first reported); a state unlike the last one
 * seen is a change, kept with its time (at most IMP_MAX_ALUA, the rest
 * counted).
 */
static void identity_rtpg(struct fl_import *im, struct imp_lun *l, int lun, const uint8_t *c,
			  const uint8_t *p, uint32_t n, uint64_t frame, int64_t t_us)
{
	uint32_t o = ((c[1] >> 5) & 7) == 1 ? 8 : 4, end;
	bool found = false;
	uint8_t state = 0;
	uint16_t group = 0;

	if (n < 4)
		return;
	end = 4 + fl_get_be32(p);
	if (end > n)
		end = n;
	for (; o + 8 <= end; o += 8 + 4u * p[o + 7]) {
		uint16_t id = fl_get_be16(p + o + 2);

		if (!found || (l->have_tpg && id == l->tpg)) {
			group = id;
			state = p[o] & 0x0f;
			found = true;
		}
	}
	if (!found)
		return;
	if (!l->have_rtpg) {
		l->have_rtpg = true;
		l->rtpg_group = group;
		l->alua_first = l->alua_last = state;
		l->rtpg_frame = frame;
		return;
	}
	if (group != l->rtpg_group || state == l->alua_last)
		return;
	if (im->nalua < IMP_MAX_ALUA)
		im->alua[im->nalua++] = (struct imp_alua){
		    .lun = lun, .from = l->alua_last, .to = state, .frame = frame, .t_us = t_us};
	else
		im->alua_over++;
	l->alua_last = state;
}

/*
 * Keeps the first whole answer (its page length within the n bytes
 * captured) of VPD page p[1], one the LUN does not build itself.
 */
static void keep_vpd(struct imp_lun *l, const uint8_t *p, uint32_t n, uint64_t frame)
{
	uint32_t len = fl_get_be16(p + 2);
	struct imp_vpd *v;

	if (4 + len > n)
		return; /* cut short by the allocation length: a later answer may be whole */
	if (!l->vpd && !(l->vpd = calloc(1, sizeof(*l->vpd))))
		return;
	v = l->vpd;
	for (unsigned i = 0; i < v->n; i++)
		if (v->code[i] == p[1])
			return;
	if (v->n == FL_VPD_RAW_MAX || len > FL_VPD_RAW_MAX_LEN) {
		v->over++;
		return;
	}
	v->code[v->n] = p[1];
	v->len[v->n] = (uint16_t)len;
	memcpy(v->data[v->n], p + 4, len);
	v->frame[v->n++] = frame;
}

/* Keeps a LUN's standard INQUIRY data (the first answer) and its VPD pages' identity. */
static void identity_inquiry(struct imp_lun *l, const uint8_t *c, const uint8_t *p, uint32_t n,
			     uint64_t frame)
{
	if (!(c[1] & 1)) {
		if (n < 36 || l->have_inq)
			return;
		l->have_inq = true;
		l->inq_frame = frame;
		l->pdt = p[0] & 0x1f;
		l->rmb = p[1] >> 7;
		l->tpgs = (p[5] >> 4) & 3;
		inq_text(l->vendor, p + 8, 8);
		inq_text(l->product, p + 16, 16);
		inq_text(l->revision, p + 32, 4);
		return;
	}
	if (n < 4)
		return;
	l->vpd_seen[p[1] / 8] |= 1u << (p[1] % 8);
	if (!fl_vpd_own_page(p[1]))
		keep_vpd(l, p, n, frame);
	if (p[1] == 0x80 && !l->have_serial) {
		uint32_t sl = fl_get_be16(p + 2);
		if (sl > n - 4)
			sl = n - 4;
		if (sl > 64)
			sl = 64;
		inq_text(l->serial, p + 4, sl);
		/* leading blanks too (a right-aligned serial) */
		size_t lead = strspn(l->serial, " ");
		memmove(l->serial, l->serial + lead, strlen(l->serial + lead) + 1);
		l->have_serial = l->serial[0] != 0;
	} else if (p[1] == 0x83) {
		if (!l->have_naa)
			l->have_naa = imp_vpd83_naa(p, n, &l->naa);
		if (!l->have_tpg)
			l->have_tpg = vpd83_port(p, n, 5, &l->tpg);
		if (!l->naa16)
			l->naa16 = imp_vpd83_naa16(p, n, &l->naa16_hi, &l->naa16_lo);
	}
}

/* Marks the LUNs a REPORT LUNS answer lists (numbers past 255 are counted, not kept). */
static void identity_report_luns(struct fl_import *im, const uint8_t *p, uint32_t n)
{
	if (n >= 8) {
		uint32_t ll = fl_get_be32(p);
		for (uint32_t o = 8; o + 8 <= n && o - 8 < ll; o += 8) {
			const uint8_t *e = p + o;
			int num = -1;
			if (!memcmp(e + 2, "\0\0\0\0\0\0", 6) && (e[0] >> 6) <= 1)
				num = ((e[0] & 0x3f) << 8) | e[1];
			if (num >= 0 && num <= 255)
				im->luns[num].seen = im->luns[num].in_report_luns = true;
			else
				im->big_luns++;
		}
	}
}

/* What a VPD 0x83 answer through portal i says of the port: its relative port and group. */
static void identity_portal(struct fl_import *im, int i, const uint8_t *c, const uint8_t *p,
			    uint32_t n)
{
	if (i < 0 || (unsigned)i >= im->nportals || !(c[1] & 1) || c[2] != 0x83 || n < 4 ||
	    p[1] != 0x83)
		return;
	if (!im->portals[i].have_rel)
		im->portals[i].have_rel = vpd83_port(p, n, 4, &im->portals[i].rel);
	if (!im->portals[i].have_tpg)
		im->portals[i].have_tpg = vpd83_port(p, n, 5, &im->portals[i].tpg);
}

/* Reads the identity a GOOD answer carries (t_us: when it came) through portal (-1: not known). */
static void identity(struct fl_import *im, struct imp_cmd *m, int portal, uint64_t frame,
		     int64_t t_us)
{
	const uint8_t *p = m->data, *c = m->cdb;
	uint32_t n = m->data_len;
	struct imp_lun *l;

	if (m->lun < 0 || !p)
		return;
	l = &im->luns[m->lun];
	switch (c[0]) {
	case SPC_OP_INQUIRY:
		identity_inquiry(l, c, p, n, frame);
		identity_portal(im, portal, c, p, n);
		return;
	case SBC_OP_READ_CAPACITY_10:
		if (n >= 8 && !l->have_cap && fl_get_be32(p) != 0xffffffffu) {
			l->blocks = (uint64_t)fl_get_be32(p) + 1;
			l->block_size = fl_get_be32(p + 4);
			l->have_cap = true;
			l->cap_frame = frame;
		}
		return;
	case SBC_OP_SERVICE_ACTION_IN_16:
		if (n >= 16) {
			l->blocks = ((uint64_t)fl_get_be32(p) << 32 | fl_get_be32(p + 4)) + 1;
			l->block_size = fl_get_be32(p + 8);
			l->lbpme = p[14] & 0x80;
			l->lbprz = p[14] & 0x40;
			l->have_cap = true;
			l->cap_frame = frame;
		}
		return;
	case SPC_OP_REPORT_LUNS:
		identity_report_luns(im, p, n);
		return;
	case SPC_OP_MAINTENANCE_IN:
		if ((c[1] & 0x1f) == SPC_SA_REPORT_TPGS) {
			identity_rtpg(im, l, m->lun, c, p, n, frame, t_us);
			rtpg_groups(im, c, p, n);
		}
		return;
	case 0x1a:
		if (n >= 4) {
			l->have_wp = true;
			l->wp = p[2] & 0x80;
			mode_pages(l, p, n, 4, p[3]);
		}
		return;
	case SPC_OP_MODE_SENSE_10:
		if (n >= 8) {
			l->have_wp = true;
			l->wp = p[3] & 0x80;
			mode_pages(l, p, n, 8, fl_get_be16(p + 6));
		}
		return;
	default:
		return;
	}
}

/* The hash bucket of a class's keys (a class past the end: whatever its range). */
static unsigned class_bucket(const struct imp_class *k)
{
	uint64_t v[] = {k->kind,
			(uint64_t)(k->lun + 1) << 8 | k->opcode,
			k->sa,
			(uint64_t)k->has_lba << 1 | k->crosses_end,
			k->crosses_end ? 0 : k->first,
			k->crosses_end ? 0 : k->last,
			(uint64_t)k->status << 24 | (uint64_t)k->key << 16 | k->asc << 8 | k->ascq,
			k->resv_frame,
			(uint64_t)(uintptr_t)k->hold};
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = (h ^ v[i]) * 0x100000001b3ull;
	return (unsigned)(h ^ h >> 32) % IMP_CLASS_BUCKETS;
}

/* The class an answer belongs to, added when new (NULL past the ceiling). */
static struct imp_class *class_get(struct fl_import *im, const struct imp_class *k)
{
	unsigned b = class_bucket(k);

	for (unsigned i = im->class_head[b]; i; i = im->classes[i - 1].hnext) {
		struct imp_class *x = &im->classes[i - 1];
		if (x->kind == k->kind && x->lun == k->lun && x->opcode == k->opcode &&
		    x->sa == k->sa && x->has_lba == k->has_lba &&
		    x->crosses_end == k->crosses_end &&
		    (x->crosses_end || (x->first == k->first && x->last == k->last)) &&
		    x->status == k->status && x->key == k->key && x->asc == k->asc &&
		    x->ascq == k->ascq && x->hold == k->hold && x->resv_frame == k->resv_frame) {
			/* Past the end: one class, its range all the commands' ranges. */
			if (x->crosses_end) {
				x->first = k->first < x->first ? k->first : x->first;
				x->last = k->last > x->last ? k->last : x->last;
			}
			x->portals |= k->portals;
			return x;
		}
	}
	if (im->nclasses >= IMP_MAX_CLASSES) {
		im->classes_over++;
		return NULL;
	}
	if (!(im->nclasses % 64)) {
		struct imp_class *n =
		    realloc(im->classes, (im->nclasses + 64) * sizeof(*im->classes));
		if (!n)
			return NULL;
		im->classes = n;
	}
	im->classes[im->nclasses] = *k;
	im->classes[im->nclasses].hnext = im->class_head[b];
	im->class_head[b] = ++im->nclasses;
	return &im->classes[im->nclasses - 1];
}

/* The slot of an opcode with service actions in unruled_sa, or -1. */
static int sa_slot(uint8_t op)
{
	static const uint8_t ops[8] = {0x5e, 0x5f, 0x83, 0x84, 0x9e, 0x9f, 0xa3, 0xa4};

	for (int i = 0; i < 8; i++)
		if (ops[i] == op)
			return i;
	return -1;
}

/* Counts one more command of a class. */
static void class_add(struct fl_import *im, const struct imp_class *k, uint64_t cmd_frame,
		      uint64_t answer_frame, int64_t t)
{
	struct imp_class *x = class_get(im, k);

	if (!x)
		return;
	if (x->count < 4)
		x->frames[x->count] = cmd_frame;
	if (!x->count) {
		x->answer_frame = answer_frame;
		x->t_us = t;
		int slot = sa_slot(x->opcode);

		/*
		 * the rule counts commands of its service action only
		 * ("service_action"); a hold's count is the one when it was sent
		 * (its class is made when its connection ends, after later answers)
		 */
		if (!x->has_lba && x->lun >= 0 && x->lun < 256 && x->kind != IMP_HOLD)
			x->good_before = slot >= 0 ? im->unruled_sa[x->lun][slot][x->sa & 0x1f]
						   : im->unruled_nolba[x->lun][x->opcode];
	}
	x->count++;
}

/* Commands of m's LUN and opcode no imported rule answered so far (import_internal.h). */
uint32_t imp_scsi_unruled(const struct fl_import *im, const struct imp_cmd *m)
{
	int slot = sa_slot(m->cdb[0]);

	if (m->lun < 0 || m->lun > 255)
		return 0;
	return slot >= 0 ? im->unruled_sa[m->lun][slot][m->cdb[1] & 0x1f]
			 : im->unruled_nolba[m->lun][m->cdb[0]];
}

/*
 * Counts a command without an LBA that no imported rule answers (GOOD, or
 * the power-on unit attention every new nexus gets): a replay's rules see it
 * too, so a later rule of its LUN and opcode skips as many ("after").
 */
static void count_unruled(struct fl_import *im, const struct imp_cmd *m,
			  const struct fl_cdb_info *ci)
{
	int slot = sa_slot(m->cdb[0]);

	if (ci->has_lba || m->lun < 0 || m->lun > 255)
		return;
	if (im->unruled_nolba[m->lun][m->cdb[0]] < UINT32_MAX)
		im->unruled_nolba[m->lun][m->cdb[0]]++;
	if (slot >= 0 && im->unruled_sa[m->lun][slot][m->cdb[1] & 0x1f] < UINT32_MAX)
		im->unruled_sa[m->lun][slot][m->cdb[1] & 0x1f]++;
}

/*
 * A PRE-FETCH answered GOOD or CONDITION MET, for a range faultlun's LUN
 * would answer CONDITION MET (it fits the 64 MiB cache): which the target
 * gives (the LUN's "prefetch").
 */
static void prefetch_seen(struct fl_import *im, const struct imp_cmd *m,
			  const struct fl_cdb_info *ci, uint8_t status)
{
	struct imp_lun *l;

	if ((m->cdb[0] != 0x34 && m->cdb[0] != 0x90) || m->lun < 0 || m->lun > 255)
		return;
	l = &im->luns[m->lun];
	if (!l->have_cap || (uint64_t)ci->nblocks * l->block_size > (64u << 20))
		return;
	if (status == 0x04)
		l->prefetch_met++;
	else if (!l->prefetch_good++)
		l->prefetch_frame = m->frame;
}

/*
 * A GOOD command: counted when it has no LBA (the order of a later non-GOOD
 * answer to the same opcode), a reservation taken noted, and heals (for the
 * import's purposes) the classes it overlaps.
 */
static void good_seen(struct fl_import *im, const struct imp_cmd *m, const struct fl_cdb_info *ci)
{
	count_unruled(im, m, ci);
	/* RESERVE (6) / (10), PERSISTENT RESERVE OUT: the LUN keeps reservations */
	if ((m->cdb[0] == 0x16 || m->cdb[0] == 0x56 || m->cdb[0] == 0x5f) &&
	    !im->luns[m->lun].resv_frame)
		im->luns[m->lun].resv_frame = m->frame;
	for (unsigned i = 0; i < im->nclasses; i++) {
		struct imp_class *x = &im->classes[i];
		if (x->lun != m->lun || !ci->has_lba || !x->has_lba || x->crosses_end)
			continue;
		uint64_t last = ci->lba + (ci->nblocks ? ci->nblocks - 1 : 0);
		if (ci->lba > x->last || last < x->first)
			continue;
		if (ci->cls == FL_CLASS_WRITE)
			x->written_after++;
		else if (x->opcode == m->cdb[0])
			x->good_after++;
	}
}

/* Fills a class's match keys from the command, which came through portal (-1: not known). */
static void class_match(struct fl_import *im, struct imp_class *k, const struct imp_cmd *m,
			int portal, const struct fl_cdb_info *ci)
{
	k->lun = m->lun;
	if (portal >= 0 && portal < IMP_MAX_PORTALS)
		k->portals = (uint16_t)(1u << portal);
	k->opcode = m->cdb[0];
	memcpy(k->cdb, m->cdb, sizeof(k->cdb));
	k->flags = m->flags;
	k->edtl = m->edtl;
	/* the CDB's own field: one the opcode table does not know counts too */
	int sa = fl_cdb_service_action(m->cdb, sizeof(m->cdb));
	k->sa = sa < 0 ? 0 : (uint16_t)sa;
	if (ci->has_lba) {
		struct imp_lun *l = &im->luns[m->lun];
		uint64_t last = ci->lba + (ci->nblocks ? ci->nblocks - 1 : 0);
		k->has_lba = true;
		k->first = ci->lba;
		k->last = last;
		if (l->have_cap && last >= l->blocks)
			k->crosses_end = true;
	}
}

/*
 * Fills class k from a CHECK CONDITION's sense; false when the answer makes
 * no class (unreadable sense, a power-on unit attention, a MISCOMPARE: each
 * counted or noted here).
 */
static bool sense_class(struct fl_import *im, struct imp_class *k, const struct imp_cmd *m,
			const struct fl_cdb_info *ci, const uint8_t *sense, size_t sense_len,
			uint64_t frame)
{
	struct fl_sense_data sd;

	if (fl_sense_decode(sense, sense_len, &sd) == FL_SENSE_FORMAT_UNKNOWN) {
		fl_import_note(im,
			       "frame %" PRIu64 ": CHECK CONDITION without readable sense "
			       "(command in frame %" PRIu64 "): not reproduced",
			       frame, m->frame);
		return false;
	}
	if (sd.key == 0x06 && sd.asc == 0x29) {
		if (!im->power_on_uas++)
			im->power_on_frame = frame;
		count_unruled(im, m, ci);
		return false;
	}
	/* the medium against the command's data-out, which faultlun's LUN compares itself */
	if (sd.key == 0x0e) {
		if (!im->miscompares++)
			im->miscompare_frame = m->frame;
		return false;
	}
	k->kind = IMP_SENSE;
	k->key = sd.key;
	k->asc = sd.asc;
	k->ascq = sd.ascq;
	/*
	 * RESERVATIONS PREEMPTED / RELEASED, REGISTRATIONS PREEMPTED after a
	 * PERSISTENT RESERVE OUT the capture shows: the LUN's own unit
	 * attentions (pr.c raises them for the nexuses SPC-4 names).
	 */
	if (sd.key == 0x06 && sd.asc == 0x2a && sd.ascq >= 0x03 && sd.ascq <= 0x05 &&
	    im->luns[m->lun].resv_frame && im->luns[m->lun].resv_frame < m->frame)
		k->resv_frame = im->luns[m->lun].resv_frame;
	k->descriptor = sd.format == FL_SENSE_FORMAT_DESCRIPTOR;
	/* an opcode the target does not support: whatever the LBA */
	if (sd.key == 0x05 && sd.asc == 0x20) {
		k->has_lba = k->crosses_end = false;
		k->first = k->last = 0;
	}
	if (k->has_lba && sd.info_valid && sd.info >= k->first && sd.info <= k->last &&
	    !k->crosses_end) {
		k->info_lba = true;
		k->first = k->last = sd.info; /* the LBA that failed */
	}
	return true;
}

/* Fills class k from a status other than GOOD and CHECK CONDITION; false (noted) for one the format
 * cannot give. */
static bool status_class(struct fl_import *im, struct imp_class *k, const struct imp_cmd *m,
			 uint8_t status, uint64_t frame)
{
	k->kind = IMP_STATUS;
	k->status = status;
	/* A conflict with a reservation the capture shows: the LUN's own answer. */
	if (status == 0x18 && im->luns[m->lun].resv_frame && im->luns[m->lun].resv_frame < m->frame)
		k->resv_frame = im->luns[m->lun].resv_frame;
	if (status != 0x08 && status != 0x18 && status != 0x28 && status != 0x30 &&
	    status != 0x40) {
		fl_import_note(im,
			       "frame %" PRIu64 ": status 0x%02x: not a status the scenario "
			       "format can give; not reproduced",
			       frame, status);
		return false;
	}
	return true;
}

/* A command's answer (import_internal.h). */
void imp_scsi_answer(struct fl_import *im, struct imp_conn *c, struct imp_cmd *m, uint8_t response,
		     uint8_t status, const uint8_t *sense, size_t sense_len, uint64_t frame,
		     int64_t t)
{
	struct fl_cdb_info ci;
	struct imp_class k = {0};

	if (!imp_scsi_target_ok(im, c))
		return;
	if (im->o.verify)
		imp_verify_keep(im, c, m, true, status, sense, sense_len, frame,
				m->lun < 0 ? IMP_VS_BIG_LUN
				: response ? IMP_VS_RESPONSE
					   : IMP_VS_NONE);
	if (m->lun < 0) {
		im->big_luns++;
		return;
	}
	im->luns[m->lun].seen = true;
	if (fl_cdb_decode(m->cdb, 16, &ci))
		return;
	if (!response && t >= m->t_us)
		imp_lat_add(im, ci.cls, (double)(t - m->t_us) / 1000.0, m->frame);
	if (response) {
		fl_import_note(im,
			       "frame %" PRIu64 ": iSCSI response 0x%02x (target failure) to the "
			       "command of frame %" PRIu64
			       ": the scenario format has no such answer",
			       frame, response, m->frame);
		return;
	}
	if (status == 0x00 || status == 0x04 /* CONDITION MET */) {
		if (m->want_data)
			identity(im, m, c->portal, m->frame, t);
		prefetch_seen(im, m, &ci, status);
		good_seen(im, m, &ci);
		return;
	}
	class_match(im, &k, m, c->portal, &ci);
	if (!(status == 0x02 ? sense_class(im, &k, m, &ci, sense, sense_len, frame)
			     : status_class(im, &k, m, status, frame)))
		return;
	/* an answer the LUN gives itself (a reservation's): no rule, so later rules see it too */
	if (k.resv_frame)
		count_unruled(im, m, &ci);
	class_add(im, &k, m->frame, frame, t);
}

/*
 * A command with no answer when its connection ended (or the capture did);
 * cut: the command in hand when the target cut the connection, which the
 * cut's transport rule reproduces (import_cut.c), not a hold.
 */
void imp_scsi_unanswered(struct fl_import *im, struct imp_conn *c, struct imp_cmd *m, bool cut)
{
	struct fl_cdb_info ci;
	struct imp_class k = {0};

	if (!imp_scsi_target_ok(im, c))
		return;
	bool recent = !cut && c->at_end && im->tlast_us - m->t_us < 2000000;
	bool lost = !cut && !recent && m->gap;
	if (im->o.verify)
		imp_verify_keep(im, c, m, false, 0, NULL, 0, 0,
				m->lun < 0 ? IMP_VS_BIG_LUN
				: recent   ? IMP_VS_AT_END
				: lost	   ? IMP_VS_GAP
					   : IMP_VS_NONE);
	if (cut || m->lun < 0 || fl_cdb_decode(m->cdb, 16, &ci))
		return;
	if (lost) {
		im->st.lost_answers++;
		return;
	}
	if (recent) {
		fl_import_note(im,
			       "frame %" PRIu64 ": a command still outstanding when the capture "
			       "ended %.3f s later: not reproduced",
			       m->frame, (double)(im->tlast_us - m->t_us) / 1e6);
		return;
	}
	im->luns[m->lun].seen = true;
	class_match(im, &k, m, c->portal, &ci);
	k.crosses_end = false;
	k.kind = IMP_HOLD;
	k.hold = m->aborted ? "until_abort" : m->reset ? "until_reset" : "forever";
	k.good_before = m->unruled;
	class_add(im, &k, m->frame, 0, m->t_us);
}
