/* SPDX-License-Identifier: MIT */
/*
 * import_iscsi.c - `faultlun import`: iSCSI PDUs out of one direction's
 * bytes (RFC 7143 11.2: the 48-byte BHS, TotalAHSLength words of AHS, a
 * header digest, DataSegmentLength bytes padded to 4 and a data digest),
 * with the target's own wire definitions (iscsi_proto.h, iscsi_digest.h).
 * Digests are in force from the full feature phase when the login response
 * agreed on CRC32C (RFC 7143 13.1); in a capture that starts after the
 * login they are found from the first header (its CRC32C follows it).
 * A direction that lost bytes searches for a plausible BHS: an opcode of
 * its side, reserved bits clear, a bounded length, and the next header
 * plausible too. SCSI commands are paired with their SCSI Response (or
 * Data-In with status) by Initiator Task Tag per connection.
 */
#include "import_internal.h"
#include "iscsi_digest.h"

#include "fl_target.h"

#include <stdlib.h>
#include <string.h>

/* Whether opcode byte b can start a PDU sent by the target (or the initiator). */
static bool pdu_opcode_ok(uint8_t b, bool from_target)
{
	uint8_t op = b & ISCSI_OPCODE_MASK;

	if (b & 0x80)
		return false;
	if (from_target) {
		if (b & ISCSI_FLAG_IMMEDIATE)
			return false;
		return (op >= ISCSI_OP_NOP_IN && op <= ISCSI_OP_LOGOUT_RESP) ||
		       op == ISCSI_OP_R2T || op == ISCSI_OP_ASYNC || op == ISCSI_OP_REJECT;
	}
	return op <= ISCSI_OP_LOGOUT_REQ || op == ISCSI_OP_SNACK;
}

/* Whether the sending endpoint of direction d is the target; -1 unknown. */
static int dir_is_target(const struct imp_conn *c, int d)
{
	return c->target_ep < 0 ? -1 : c->target_ep == d;
}

/* Bytes a PDU with this BHS occupies after its header (data, padding, digest). */
static uint32_t pdu_data_bytes(const struct imp_conn *c, const uint8_t *bhs)
{
	uint32_t dsl = fl_get_be24(bhs + BHS_DSL);

	if (!dsl)
		return 0;
	return ((dsl + 3) & ~3u) + (c->ffp && c->ddigest ? ISCSI_DIGEST_LEN : 0);
}

/* Whether 48 bytes at p look like a BHS from that side (resynchronisation). */
static bool pdu_plausible(const uint8_t *p, int from_target)
{
	uint8_t op = p[0] & ISCSI_OPCODE_MASK;

	if (from_target >= 0 ? !pdu_opcode_ok(p[0], from_target)
			     : !pdu_opcode_ok(p[0], true) && !pdu_opcode_ok(p[0], false))
		return false;
	if (fl_get_be24(p + BHS_DSL) > IMP_MAX_DSL || p[BHS_TOTAL_AHS] > 16)
		return false;
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		return (p[1] & 0x80) && !(p[1] & 0x18) && p[2] == 0 && p[3] == 0;
	case ISCSI_OP_SCSI_RESP:
		return (p[1] & 0x80) && !(p[1] & 0x61) && p[2] <= 1 && p[BHS_TOTAL_AHS] == 0 &&
		       !memcmp(p + 8, "\0\0\0\0\0\0\0\0", 8);
	case ISCSI_OP_DATA_IN:
		return !(p[1] & 0x38) && p[2] == 0 && p[BHS_TOTAL_AHS] == 0;
	case ISCSI_OP_DATA_OUT:
		return !(p[1] & 0x7f) && p[2] == 0 && p[3] == 0 && p[BHS_TOTAL_AHS] == 0;
	case ISCSI_OP_R2T:
		return p[1] == 0x80 && fl_get_be24(p + BHS_DSL) == 0;
	case ISCSI_OP_NOP_OUT:
	case ISCSI_OP_NOP_IN:
		return p[1] == 0x80 && p[2] == 0 && p[3] == 0;
	default:
		return (p[1] & 0x80) || op == ISCSI_OP_LOGIN_REQ || op == ISCSI_OP_LOGIN_RESP ||
		       op == ISCSI_OP_TEXT_REQ || op == ISCSI_OP_TEXT_RESP;
	}
}

/* The command with this ITT on c, unlinked when take. */
static struct imp_cmd *cmd_find(struct imp_conn *c, uint32_t itt, bool take)
{
	struct imp_cmd **pp = &c->cmds[itt % IMP_CMD_BUCKETS];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->itt == itt) {
			struct imp_cmd *m = *pp;
			if (take) {
				*pp = m->next;
				c->ncmds--;
			}
			return m;
		}
	return NULL;
}

/* Frees one command. */
static void cmd_free(struct imp_cmd *m)
{
	free(m->data);
	free(m->param);
	free(m);
}

/* Whether --verify keeps the data-out of this command PDU: a parameter list, not block data. */
static bool wants_param(const struct fl_import *im, const uint8_t *bhs)
{
	struct fl_cdb_info ci;

	return im->o.verify && (bhs[1] & 0x20) && !fl_cdb_decode(bhs + BHS_CDB, 16, &ci) &&
	       ci.cls != FL_CLASS_WRITE;
}

/* Keeps n bytes of a parameter list at offset, up to IMP_MAX_PARAM and the EDTL. */
static void param_put(struct imp_cmd *m, uint32_t offset, const uint8_t *p, uint32_t n)
{
	uint32_t cap = m->edtl < IMP_MAX_PARAM ? m->edtl : IMP_MAX_PARAM;

	if (!m->want_param || !n || offset >= cap)
		return;
	if (n > cap - offset)
		n = cap - offset;
	if (!m->param && !(m->param = calloc(1, cap)))
		return;
	memcpy(m->param + offset, p, n);
	if (offset + n > m->param_len)
		m->param_len = offset + n;
}

/* The LUN number of an 8-byte LUN field (SAM-5 4.7: peripheral or flat, one level); -1. */
int imp_lun_number(const uint8_t *l)
{
	int n;

	if (memcmp(l + 2, "\0\0\0\0\0\0", 6))
		return -1;
	switch (l[0] >> 6) {
	case 0:
		n = l[0] ? -1 : l[1];
		break;
	case 1:
		n = (l[0] & 0x3f) << 8 | l[1];
		break;
	default:
		return -1;
	}
	return n <= 255 ? n : -1;
}

/* Notes the target portal (address, port) a connection of the imported target goes to. */
static void portal_seen(struct fl_import *im, struct imp_conn *c, uint64_t frame)
{
	const uint8_t *ip = c->ip[c->target_ep];
	size_t al = c->family == 6 ? 16 : 4;
	unsigned i;

	for (i = 0; i < im->nportals; i++)
		if (im->portals[i].family == c->family && !memcmp(im->portals[i].ip, ip, al) &&
		    im->portals[i].port == c->port[c->target_ep])
			break;
	if (i == im->nportals) {
		if (i == IMP_MAX_PORTALS) {
			im->portals_over++;
			c->portal = IMP_MAX_PORTALS;
			return;
		}
		im->portals[i].family = c->family;
		memcpy(im->portals[i].ip, ip, al);
		im->portals[i].port = c->port[c->target_ep];
		im->portals[i].tpgt = c->tpgt;
		im->portals[i].frame = frame;
		im->nportals++;
	}
	c->portal = (int)i;
}

/* A SCSI Command PDU. */
static void on_command(struct fl_import *im, struct imp_conn *c, struct imp_dir *d)
{
	const uint8_t *b = d->hdr;
	uint32_t itt = fl_get_be32(b + BHS_ITT);
	struct imp_cmd *m;

	/* counted whether followed or not: the target's transport rules count it */
	uint64_t op_nth = imp_scsi_target_is(im, c) ? ++im->op_count[b[BHS_CDB]] : 0;

	if (op_nth && c->portal < 0 && c->target_ep >= 0)
		portal_seen(im, c, d->pdu_frame);

	im->st.cmds++;
	if ((m = cmd_find(c, itt, true)))
		cmd_free(m); /* the ITT came back: the old command is forgotten */
	if (c->ncmds >= IMP_MAX_CMDS) {
		im->st.cmds_over++;
		return;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->itt = itt;
	m->lun = imp_lun_number(b + BHS_LUN);
	memcpy(m->cdb, b + BHS_CDB, 16);
	m->edtl = fl_get_be32(b + BHS_TTT);
	m->flags = b[1];
	m->seq = ++im->cmd_seq;
	c->last_seq = m->seq;
	m->op_nth = op_nth;
	m->frame = d->pdu_frame;
	m->t_us = d->pdu_t;
	m->want_data = imp_scsi_wants_data(m->cdb);
	m->want_param = wants_param(im, b);
	m->unruled = imp_scsi_unruled(im, m);
	param_put(m, 0, d->data, d->data_keep); /* immediate data */
	imp_data_command(im, m);
	m->next = c->cmds[itt % IMP_CMD_BUCKETS];
	c->cmds[itt % IMP_CMD_BUCKETS] = m;
	c->ncmds++;
}

/* Reads "key=value" pairs of login/text data: the keys import cares about. */
static void on_keys(struct imp_conn *c, const uint8_t *p, uint32_t n, bool from_target)
{
	uint32_t i = 0;

	while (i < n) {
		const char *kv = (const char *)p + i;
		size_t l = strnlen(kv, n - i);
		char buf[ISCSI_KEY_MAX + ISCSI_VALUE_MAX + 2];
		if (l < sizeof(buf)) {
			memcpy(buf, kv, l);
			buf[l] = 0;
			char *eq = strchr(buf, '=');
			if (eq) {
				*eq++ = 0;
				if (!strcmp(buf, "TargetName") && !from_target && strlen(eq) < 224)
					strcpy(c->target_name, eq);
				else if (!strcmp(buf, "InitiatorName") && !from_target &&
					 strlen(eq) < sizeof(c->iname))
					strcpy(c->iname, eq);
				else if (!strcmp(buf, "SessionType") && !strcmp(eq, "Discovery"))
					c->discovery = true;
				else if (!strcmp(buf, "HeaderDigest") && from_target)
					c->login_hd = !strcmp(eq, "CRC32C");
				else if (!strcmp(buf, "DataDigest") && from_target)
					c->login_dd = !strcmp(eq, "CRC32C");
				else if (!strcmp(buf, "TargetPortalGroupTag") && from_target)
					c->tpgt = atoi(eq) & 0xffff;
			}
		}
		i += (uint32_t)l + 1;
	}
}

/* A Data-In: its command's data length (and data), and its answer when it carries status. */
static void on_data_in(struct fl_import *im, struct imp_conn *c, struct imp_dir *d)
{
	const uint8_t *b = d->hdr;
	struct imp_cmd *m = cmd_find(c, fl_get_be32(b + BHS_ITT), false);
	uint32_t offset = fl_get_be32(b + BHS_OFFSET);

	if (!m)
		return;
	if ((uint64_t)offset + d->data_len > m->datain_len)
		m->datain_len = (uint64_t)offset + d->data_len;
	if (m->want_data && d->data_keep)
		imp_scsi_data_in(im, m, offset, d->data, d->data_keep);
	if (m->keep)
		imp_data_in(im, m, offset, d->data, d->data_keep, d->data_keep == d->data_len);
	if (b[1] & ISCSI_DATAIN_STATUS) {
		cmd_find(c, m->itt, true);
		im->st.answers++;
		imp_scsi_answer(im, c, m, 0, b[3], NULL, 0, d->pdu_frame, d->pdu_t);
		cmd_free(m);
	}
}

/* A SCSI Response: its command's answer, with the sense data it carries. */
static void on_response(struct fl_import *im, struct imp_conn *c, struct imp_dir *d)
{
	const uint8_t *b = d->hdr, *sense = NULL;
	struct imp_cmd *m = cmd_find(c, fl_get_be32(b + BHS_ITT), true);
	size_t sl = 0;

	if (!m) {
		im->st.orphan_answers++;
		return;
	}
	if (d->data_keep >= 2) {
		sl = fl_get_be16(d->data);
		if (sl > d->data_keep - 2u)
			sl = d->data_keep - 2u;
		sense = d->data + 2;
	}
	im->st.answers++;
	imp_scsi_answer(im, c, m, b[2], b[3], sense, sl, d->pdu_frame, d->pdu_t);
	cmd_free(m);
}

/* A TMF Request: recorded, and the commands it aborts or resets marked. */
static void on_tmf_request(struct fl_import *im, struct imp_conn *c, struct imp_dir *d)
{
	const uint8_t *b = d->hdr;
	uint8_t fn = b[1] & ISCSI_TMF_FUNC_MASK;
	struct imp_cmd *m;

	imp_tmf_request(im, c, b, d->pdu_frame, d->pdu_t);
	if (fn == ISCSI_TMF_ABORT_TASK && (m = cmd_find(c, fl_get_be32(b + BHS_TTT), false)))
		m->aborted = true;
	else if (fn == ISCSI_TMF_LUN_RESET || fn == ISCSI_TMF_TARGET_WARM_RESET ||
		 fn == ISCSI_TMF_TARGET_COLD_RESET)
		for (unsigned i = 0; i < IMP_CMD_BUCKETS; i++)
			for (m = c->cmds[i]; m; m = m->next)
				m->reset = true;
}

/* A whole PDU has been read: its header in d->hdr, its first data bytes in d->data. */
static void on_pdu(struct fl_import *im, struct imp_conn *c, int di)
{
	struct imp_dir *d = &c->dir[di];
	const uint8_t *b = d->hdr;
	uint8_t op = b[0] & ISCSI_OPCODE_MASK;
	struct imp_cmd *m;

	im->st.pdus++;
	c->iscsi = true;
	if (c->target_ep < 0)
		c->target_ep = (op & 0x20) ? di : !di;
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		on_command(im, c, d);
		break;
	case ISCSI_OP_DATA_IN:
		on_data_in(im, c, d);
		break;
	case ISCSI_OP_DATA_OUT:
		m = cmd_find(c, fl_get_be32(b + BHS_ITT), false);
		if (m && d->data_keep)
			param_put(m, fl_get_be32(b + BHS_OFFSET), d->data, d->data_keep);
		break;
	case ISCSI_OP_SCSI_RESP:
		on_response(im, c, d);
		break;
	case ISCSI_OP_TMF_RESP:
		imp_tmf_response(im, c, b, d->pdu_t);
		break;
	case ISCSI_OP_TMF_REQ:
		on_tmf_request(im, c, d);
		break;
	case ISCSI_OP_LOGOUT_REQ:
		c->logged_out = true;
		break;
	case ISCSI_OP_LOGIN_REQ:
	case ISCSI_OP_LOGIN_RESP:
		if (op == ISCSI_OP_LOGIN_REQ)
			memcpy(c->isid, b + 8, 6); /* RFC 7143 11.12.5 */
		on_keys(c, d->data, d->data_keep, op == ISCSI_OP_LOGIN_RESP);
		if (op == ISCSI_OP_LOGIN_RESP && (b[1] & ISCSI_LOGIN_TRANSIT) &&
		    ISCSI_LOGIN_NSG(b[1]) == ISCSI_STAGE_FULL_FEATURE && b[36] == 0) {
			c->ffp = true;
			c->hdigest = c->login_hd;
			c->ddigest = c->login_dd;
			c->digests_known = true;
		}
		break;
	default:
		break;
	}
}

/* Sets up the reading of the data segment after a complete header. */
static void start_data(struct fl_import *im, struct imp_conn *c, int di)
{
	struct imp_dir *d = &c->dir[di];
	const uint8_t *b = d->hdr;
	uint8_t op = b[0] & ISCSI_OPCODE_MASK;
	uint32_t keep = 0;

	d->data_len = fl_get_be24(b + BHS_DSL);
	d->data_left = pdu_data_bytes(c, b);
	if (op == ISCSI_OP_LOGIN_REQ || op == ISCSI_OP_LOGIN_RESP || op == ISCSI_OP_SCSI_RESP)
		keep = d->data_len < IMP_MAX_TEXT ? d->data_len : IMP_MAX_TEXT;
	else if (op == ISCSI_OP_DATA_IN) {
		struct imp_cmd *m = cmd_find(c, fl_get_be32(b + BHS_ITT), false);
		if (m && m->want_data)
			keep = d->data_len < IMP_MAX_DATA ? d->data_len : IMP_MAX_DATA;
		else if (m && m->keep)
			keep = d->data_len; /* a 24-bit length: under 16 MiB */
	} else if (op == ISCSI_OP_SCSI_CMD && wants_param(im, b)) {
		keep = d->data_len < IMP_MAX_PARAM ? d->data_len : IMP_MAX_PARAM;
	} else if (op == ISCSI_OP_DATA_OUT) {
		struct imp_cmd *m = cmd_find(c, fl_get_be32(b + BHS_ITT), false);
		if (m && m->want_param)
			keep = d->data_len < IMP_MAX_PARAM ? d->data_len : IMP_MAX_PARAM;
	}
	d->data_keep = 0;
	d->data_have = 0;
	if (keep) {
		uint8_t *nd = realloc(d->data, keep);
		if (nd) {
			d->data = nd;
			d->data_keep = keep;
		}
	}
	(void)im;
	if (!d->data_left) {
		on_pdu(im, c, di);
		d->mode = IMP_HDR;
		d->hdr_have = 0;
	} else {
		d->mode = IMP_DATA;
	}
}

/* How long the header of a PDU starting with this BHS is (AHS, digest). */
static uint32_t hdr_len(const struct imp_conn *c, const uint8_t *bhs)
{
	return ISCSI_BHS_LEN + bhs[BHS_TOTAL_AHS] * 4u +
	       (c->ffp && c->hdigest ? ISCSI_DIGEST_LEN : 0);
}

/*
 * Looks in the resynchronisation window for a PDU start; returns its offset,
 * or -1 (the window is kept, less what can no longer start a PDU).
 */
static long resync_find(struct imp_conn *c, int di)
{
	struct imp_dir *d = &c->dir[di];
	int side = dir_is_target(c, di);

	for (uint32_t o = 0; o + ISCSI_BHS_LEN <= d->rs_len; o++) {
		const uint8_t *p = d->rs + o;
		if (!pdu_plausible(p, side))
			continue;
		if (!c->digests_known && !p[BHS_TOTAL_AHS] &&
		    o + ISCSI_BHS_LEN + ISCSI_DIGEST_LEN <= d->rs_len) {
			/* After the login: is the header's CRC32C behind it? */
			uint32_t crc = iscsi_crc32c(p, ISCSI_BHS_LEN);
			if (iscsi_get_digest(p + ISCSI_BHS_LEN) == crc) {
				c->ffp = c->hdigest = true;
				c->digests_known = true;
			}
		}
		uint64_t next = o + (uint64_t)hdr_len(c, p) + pdu_data_bytes(c, p);
		if (next + ISCSI_BHS_LEN > d->rs_len) {
			if (d->rs_len < IMP_MAX_RESYNC && next + ISCSI_BHS_LEN <= IMP_MAX_RESYNC)
				return -2; /* wait for the next header to judge */
			return (long)o;	   /* no room to see the next one: take it */
		}
		if (pdu_plausible(d->rs + next, side))
			return (long)o;
		if (c->ffp && !c->ddigest && fl_get_be24(p + BHS_DSL) &&
		    next + 4 + ISCSI_BHS_LEN <= d->rs_len &&
		    pdu_plausible(d->rs + next + 4, side)) {
			c->ddigest = true; /* the data digest explains the 4 bytes */
			c->digests_known = true;
			return (long)o;
		}
	}
	return -1;
}

static void feed(struct fl_import *im, struct imp_conn *c, int di, const uint8_t *p, size_t n);

/*
 * Takes bytes from *p (*n of them) into direction di's resynchronisation window and, when a
 * plausible header is found there, feeds on from it in order. Returns -1 when out of memory
 * (the rest is not read), else 0.
 */
static int feed_resync(struct fl_import *im, struct imp_conn *c, int di, const uint8_t **p,
		       size_t *n)
{
	struct imp_dir *d = &c->dir[di];
	size_t room = IMP_MAX_RESYNC - d->rs_len, take = *n < room ? *n : room;
	/* The window grows with what it holds: an idle one costs nothing. */
	uint8_t *nr = realloc(d->rs, d->rs_len + take + 1);
	if (!nr)
		return -1;
	d->rs = nr;
	memcpy(d->rs + d->rs_len, *p, take);
	d->rs_len += (uint32_t)take;
	*p += take;
	*n -= take;
	long o = resync_find(c, di);
	if (o == -2 && d->rs_len < IMP_MAX_RESYNC)
		return 0;
	if (o < 0) {
		/* Keep the tail that could still start a header. */
		uint32_t keep = d->rs_len < ISCSI_BHS_LEN ? d->rs_len : ISCSI_BHS_LEN - 1;
		if (o == -2)
			keep = d->rs_len / 2;
		im->st.skipped_bytes += d->rs_len - keep;
		memmove(d->rs, d->rs + d->rs_len - keep, keep);
		d->rs_len = keep;
		return 0;
	}
	/* Found: read on from there in order. */
	uint8_t *w = d->rs;
	uint32_t wl = d->rs_len;
	im->st.skipped_bytes += (uint64_t)o;
	im->st.resyncs++;
	d->rs = NULL;
	d->rs_len = 0;
	d->mode = IMP_HDR;
	d->hdr_have = 0;
	feed(im, c, di, w + o, wl - (uint32_t)o);
	free(w);
	return 0;
}

/* Feeds bytes to the reader of direction di. */
static void feed(struct fl_import *im, struct imp_conn *c, int di, const uint8_t *p, size_t n)
{
	struct imp_dir *d = &c->dir[di];

	while (n) {
		if (d->mode == IMP_RESYNC) {
			if (feed_resync(im, c, di, &p, &n))
				return;
			continue;
		}
		if (d->mode == IMP_HDR) {
			if (!d->hdr_have) {
				d->pdu_frame = d->cur_frame;
				d->pdu_t = d->cur_t;
				d->hdr_need = ISCSI_BHS_LEN;
			}
			size_t take = d->hdr_need - d->hdr_have;
			if (take > n)
				take = n;
			memcpy(d->hdr + d->hdr_have, p, take);
			d->hdr_have += (uint32_t)take;
			p += take;
			n -= take;
			if (d->hdr_have < d->hdr_need)
				continue;
			if (d->hdr_need == ISCSI_BHS_LEN) {
				int side = dir_is_target(c, di);
				if (side >= 0 ? !pdu_opcode_ok(d->hdr[0], side)
					      : !pdu_plausible(d->hdr, -1)) {
					/* Not iSCSI here (or not in step): search again. */
					d->mode = IMP_RESYNC;
					d->hdr_have = 0;
					feed(im, c, di, d->hdr, ISCSI_BHS_LEN);
					continue;
				}
				d->hdr_need = hdr_len(c, d->hdr);
				if (d->hdr_need > d->hdr_have)
					continue;
			}
			if (c->ffp && c->hdigest) {
				uint32_t l = d->hdr_need - ISCSI_DIGEST_LEN;
				if (iscsi_get_digest(d->hdr + l) != iscsi_crc32c(d->hdr, l))
					im->st.digest_errors++;
			}
			start_data(im, c, di);
			continue;
		}
		/* IMP_DATA */
		size_t take = d->data_left < n ? d->data_left : n;
		if (d->data_have < d->data_keep) {
			size_t k = d->data_keep - d->data_have;
			if (k > take)
				k = take;
			memcpy(d->data + d->data_have, p, k);
			d->data_have += (uint32_t)k;
		}
		d->data_left -= (uint32_t)take;
		p += take;
		n -= take;
		if (!d->data_left) {
			on_pdu(im, c, di);
			d->mode = IMP_HDR;
			d->hdr_have = 0;
		}
	}
}

/* In-order bytes (import_internal.h). */
void imp_iscsi_bytes(struct fl_import *im, struct imp_conn *c, int d, const uint8_t *p, size_t n)
{
	feed(im, c, d, p, n);
}

/* Lost bytes: the PDU being read is abandoned, the stream searched again. */
void imp_iscsi_gap(struct fl_import *im, struct imp_conn *c, int d)
{
	(void)im;
	/* An answer from the target may have been in the gap. */
	if (dir_is_target(c, d) != 0)
		for (unsigned i = 0; i < IMP_CMD_BUCKETS; i++)
			for (struct imp_cmd *m = c->cmds[i]; m; m = m->next)
				m->gap = true;
	c->dir[d].mode = IMP_RESYNC;
	c->dir[d].hdr_have = 0;
	c->dir[d].data_left = 0;
	free(c->dir[d].rs);
	c->dir[d].rs = NULL;
	c->dir[d].rs_len = 0;
}

/* The end of a connection: what is still outstanding is judged. */
void imp_iscsi_close(struct fl_import *im, struct imp_conn *c, const struct imp_end *end)
{
	const struct imp_cmd *cut = imp_cut_close(im, c, end);

	for (unsigned i = 0; i < IMP_CMD_BUCKETS; i++)
		while (c->cmds[i]) {
			struct imp_cmd *m = c->cmds[i];
			c->cmds[i] = m->next;
			c->ncmds--;
			imp_scsi_unanswered(im, c, m, m == cut);
			cmd_free(m);
		}
	imp_tmf_close(im, c);
	if (im->o.verify && imp_scsi_target_ok(im, c))
		imp_verify_event(im, c, 0, 0);
}

/* Gives back a closed connection's buffers (its counts stay for the summary). */
void imp_iscsi_release(struct imp_conn *c)
{
	for (int d = 0; d < 2; d++) {
		free(c->dir[d].data);
		free(c->dir[d].rs);
		c->dir[d].data = c->dir[d].rs = NULL;
		c->dir[d].data_keep = c->dir[d].rs_len = 0;
	}
}

/* Frees a connection's iSCSI state. */
void imp_iscsi_free(struct imp_conn *c)
{
	for (unsigned i = 0; i < IMP_CMD_BUCKETS; i++)
		while (c->cmds[i]) {
			struct imp_cmd *m = c->cmds[i];
			c->cmds[i] = m->next;
			cmd_free(m);
		}
	for (int d = 0; d < 2; d++) {
		free(c->dir[d].data);
		free(c->dir[d].rs);
	}
}
