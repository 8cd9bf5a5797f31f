/* SPDX-License-Identifier: MIT */
/*
 * spc.c - SPC-4 commands of the logical unit that describe it rather than
 * change its medium: TEST UNIT READY (SPC-4 r37 6.47), INQUIRY standard data
 * (6.6.2; the VPD pages are in vpd.c), REQUEST SENSE (6.29), REPORT LUNS
 * (6.33, formatted by target.c), REPORT SUPPORTED OPERATION CODES (6.35,
 * generated from the opcode table of cdb.c), REPORT TARGET PORT GROUPS
 * (6.36) and PREVENT ALLOW MEDIUM REMOVAL (6.13). MODE SENSE / SELECT live in
 * mode.c, reservations in pr.c.
 *
 * Every handler runs with the LUN locked and returns a sense reason; only
 * REQUEST SENSE produces sense bytes, because they are its parameter data.
 */
#include "spc_internal.h"
#include "vendor.h"

#include <stdlib.h>
#include <string.h>

/* Length of the standard INQUIRY data we return (with version descriptors). */
#define INQ_STD_LEN 74

/* TEST UNIT READY (SPC-4 r37 6.47): lun.c has already refused it when stopped. */
enum sense_reason spc_test_unit_ready(struct exec_ctx *x)
{
	(void)x;
	return SENSE_OK;
}

/* Standard INQUIRY data (SPC-4 r37 6.6.2, Table 142). */
static enum sense_reason inquiry_standard(struct exec_ctx *x, uint32_t alloc)
{
	const struct fl_lun_config *cfg = &x->lun->cfg;
	uint8_t buf[255]; /* ADDITIONAL LENGTH is one byte */
	uint32_t len = INQ_STD_LEN;

	memset(buf, 0, sizeof(buf));
	buf[0] = 0x00; /* peripheral qualifier 0, direct-access block device */
	buf[1] = cfg->removable ? 0x80 : 0x00; /* RMB */
	buf[2] = 0x06;			       /* VERSION: SPC-4 */
	/* HISUP (hierarchical LUNs) and RESPONSE DATA FORMAT 2 */
	buf[3] = 0x10 | 0x02;
	buf[4] = INQ_STD_LEN - 5; /* ADDITIONAL LENGTH */
	/* SPC-4 r37 6.6.2: TPGS 01b implicit, 10b explicit, 11b both */
	buf[5] = (uint8_t)((cfg->alua_implicit ? 0x10 : 0) | (cfg->alua_explicit ? 0x20 : 0));
	buf[6] = 0x00;
	buf[7] = 0x02; /* CMDQUE: full task management model */
	spc_put_ascii(buf + 8, cfg->vendor, 8);
	spc_put_ascii(buf + 16, cfg->product, 16);
	spc_put_ascii(buf + 32, cfg->revision, 4);
	/* VERSION DESCRIPTORS (SPC-4 r37 Table 144): SAM-5, SPC-4, SBC-3 */
	fl_put_be16(buf + 58, 0x00a0);
	fl_put_be16(buf + 60, 0x0460);
	fl_put_be16(buf + 62, 0x04c0);
	/* a personality's vendor-specific bytes after these (vendor.h) */
	if (x->lun->vops && x->lun->vops->inquiry) {
		uint32_t n = x->lun->vops->inquiry(x, buf, sizeof(buf));

		if (n > len) {
			len = n;
			buf[4] = (uint8_t)(len - 5);
		}
	}
	exec_data_in(x, buf, len, alloc);
	return SENSE_OK;
}

/*
 * INQUIRY (SPC-4 r37 6.6). CMDDT (byte 1 bit 1) is obsolete and refused;
 * "If the EVPD bit is set to zero and the PAGE CODE field is not set to
 * zero, then the device server shall terminate the command with CHECK
 * CONDITION status ... INVALID FIELD IN CDB."
 */
enum sense_reason spc_inquiry(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	uint32_t alloc = fl_get_be16(cdb + 3);

	if (cdb[1] & 0xfe)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1,
					  spc_top_bit(cdb[1] & 0xfe));
	if (cdb[1] & 0x01)
		return vpd_inquiry(x, cdb[2], alloc);
	if (cdb[2])
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, 7);
	return inquiry_standard(x, alloc);
}

/* NOT READY condition of a LUN that REQUEST SENSE reports, or false. */
static bool not_ready_condition(const struct fl_lun *lun, uint16_t rel_port, uint8_t *asc,
				uint8_t *ascq)
{
	*asc = ASC_NOT_READY;
	switch (lun_port_state(lun, rel_port)) {
	case FL_ALUA_STANDBY:
		*ascq = ASCQ_NOT_READY_ALUA_STANDBY;
		return true;
	case FL_ALUA_UNAVAILABLE:
		*ascq = ASCQ_NOT_READY_ALUA_UNAVAILABLE;
		return true;
	case FL_ALUA_TRANSITIONING:
		*ascq = ASCQ_NOT_READY_ALUA_TRANSITION;
		return true;
	case FL_ALUA_OFFLINE:
		*ascq = ASCQ_NOT_READY_OFFLINE;
		return true;
	default:
		break;
	}
	if (lun->medium_ejected) {
		*asc = ASC_MEDIUM_NOT_PRESENT;
		*ascq = ASCQ_MEDIUM_NOT_PRESENT;
		return true;
	}
	if (lun->stopped) {
		*ascq = ASCQ_NOT_READY_INIT_CMD_REQUIRED;
		return true;
	}
	return false;
}

/*
 * REQUEST SENSE (SPC-4 r37 6.29). Autosense is the only way errors are
 * reported, so nothing is kept for later; what remains is: "If a unit
 * attention condition exists ... the device server shall return the sense
 * data for that unit attention condition" and clear it (SAM-5 r21 5.14);
 * else the NOT READY condition of a stopped or inaccessible LUN; else NO
 * SENSE / NO ADDITIONAL SENSE INFORMATION. DESC selects descriptor format.
 */
enum sense_reason spc_request_sense(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	bool desc = cdb[1] & 0x01;
	uint8_t buf[FL_SENSE_MAX], len, asc, ascq;
	struct ua_entry ua;

	if (cdb[1] & 0xfe)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1,
					  spc_top_bit(cdb[1] & 0xfe));
	if (ua_pop(x->ns, &ua))
		len =
		    sense_encode(buf, desc, FL_KEY_UNIT_ATTENTION, ua.asc, ua.ascq, false, 0, NULL);
	else if (not_ready_condition(x->lun, x->cmd->nexus.rel_port_id, &asc, &ascq))
		len = sense_encode(buf, desc, FL_KEY_NOT_READY, asc, ascq, false, 0, NULL);
	else
		len = sense_encode(buf, desc, FL_KEY_NO_SENSE, 0, 0, false, 0, NULL);
	exec_data_in(x, buf, len, cdb[4]);
	return SENSE_OK;
}

/* REPORT LUNS (SPC-4 r37 6.33): the list of the target the LUN belongs to. */
enum sense_reason spc_report_luns(struct exec_ctx *x)
{
	return target_report_luns(x);
}

/* Command timeouts descriptor (SPC-4 r37 6.35.4); returns its length. */
static uint32_t rsoc_timeouts(uint8_t *p, const struct fl_opcode_desc *d)
{
	fl_put_be16(p, 0x000a); /* DESCRIPTOR LENGTH */
	p[2] = 0;
	p[3] = 0; /* COMMAND SPECIFIC */
	/* NOMINAL: not specified; RECOMMENDED: media commands may wait on the store */
	fl_put_be32(p + 4, 0);
	fl_put_be32(p + 8, d->flags & OPF_MEDIA ? 60 : 30);
	return 12;
}

/* The all_commands parameter data (SPC-4 r37 6.35.2, Table 245). */
static enum sense_reason rsoc_all(struct exec_ctx *x, bool rctd, uint32_t alloc)
{
	const struct fl_opcode_desc *d;
	size_t rows = 0, len = 4;
	uint8_t *buf, *p;

	while (cdb_table_row(rows))
		rows++;
	buf = calloc(1, 4 + rows * 20);
	if (!buf)
		return SENSE_BUSY;
	for (size_t i = 0; (d = cdb_table_row(i)) != NULL; i++) {
		p = buf + len;
		p[0] = d->opcode;
		fl_put_be16(p + 2, d->has_sa ? d->service_action : 0);
		p[5] = (uint8_t)((rctd ? 0x02 : 0) | (d->has_sa ? 0x01 : 0)); /* CTDP, SERVACTV */
		fl_put_be16(p + 6, d->cdb_len);
		len += 8;
		if (rctd)
			len += rsoc_timeouts(buf + len, d);
	}
	fl_put_be32(buf, (uint32_t)(len - 4)); /* COMMAND DATA LENGTH */
	exec_data_in(x, buf, (uint32_t)len, alloc);
	free(buf);
	return SENSE_OK;
}

/* The one_command parameter data (SPC-4 r37 6.35.3, Table 247). */
static enum sense_reason rsoc_one(struct exec_ctx *x, const struct fl_opcode_desc *d, bool rctd,
				  uint32_t alloc)
{
	uint8_t buf[4 + FL_CDB_MAX + 12];
	uint32_t len = 4;

	memset(buf, 0, sizeof(buf));
	if (!d) {
		buf[1] = 0x01; /* SUPPORT 001b: not supported */
		exec_data_in(x, buf, 4, alloc);
		return SENSE_OK;
	}
	buf[1] = (uint8_t)((rctd ? 0x80 : 0) | 0x03); /* CTDP, SUPPORT 011b: per standard */
	fl_put_be16(buf + 2, d->cdb_len);
	memcpy(buf + 4, d->usage, d->cdb_len);
	len += d->cdb_len;
	if (rctd)
		len += rsoc_timeouts(buf + len, d);
	exec_data_in(x, buf, len, alloc);
	return SENSE_OK;
}

/* The table row for (opcode, service action), or NULL. */
static const struct fl_opcode_desc *rsoc_find(uint8_t opcode, uint16_t sa, bool match_sa)
{
	const struct fl_opcode_desc *d;

	for (size_t i = 0; (d = cdb_table_row(i)) != NULL; i++)
		if (d->opcode == opcode && (!match_sa || (d->has_sa && d->service_action == sa)))
			return d;
	return NULL;
}

/*
 * REPORT SUPPORTED OPERATION CODES (SPC-4 r37 6.35), generated from the
 * opcode table that drives dispatch. REPORTING OPTIONS (Table 244):
 * 000b all commands; 001b one opcode, "if the REQUESTED OPERATION CODE field
 * specifies an operation code that has service actions ... INVALID FIELD IN
 * CDB"; 010b opcode + service action, an opcode without service actions is
 * likewise invalid; 011b opcode, plus the service action when it has them.
 */
enum sense_reason spc_report_supported_opcodes(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	bool rctd = cdb[2] & 0x80;
	uint8_t opts = cdb[2] & 0x07, op = cdb[3];
	uint16_t sa = (uint16_t)fl_get_be16(cdb + 4);
	uint32_t alloc = fl_get_be32(cdb + 6);
	bool known = rsoc_find(op, 0, false) != NULL;

	if (cdb[2] & 0x78)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2,
					  spc_top_bit(cdb[2] & 0x78));
	switch (opts) {
	case 0:
		return rsoc_all(x, rctd, alloc);
	case 1:
		if (known && cdb_opcode_has_sa(op))
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 3, 7);
		return rsoc_one(x, rsoc_find(op, 0, false), rctd, alloc);
	case 2:
		if (known && !cdb_opcode_has_sa(op))
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 3, 7);
		return rsoc_one(x, rsoc_find(op, sa, true), rctd, alloc);
	case 3:
		return rsoc_one(x, rsoc_find(op, sa, cdb_opcode_has_sa(op)), rctd, alloc);
	default:
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, 2);
	}
}

/*
 * REPORT TARGET PORT GROUPS (SPC-4 r37 6.36): every target port group of
 * the LUN (cfg.tpgs) in its current asymmetric access state, with the
 * relative target ports that belong to it. A target without a port table
 * (cfg.nports == 0) has one port: the one the command came through.
 * PARAMETER DATA FORMAT 000b: length-only header; 001b: extended header.
 */
enum sense_reason spc_report_target_port_groups(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	const struct fl_lun_config *cfg = &x->lun->cfg;
	uint8_t format = cdb[1] >> 5;
	uint32_t alloc = fl_get_be32(cdb + 6);
	uint8_t buf[8 + FL_MAX_PORTS * 8 + FL_MAX_PORTS * 4];
	uint8_t *d;
	uint32_t len;

	if (format > 1)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 7);
	memset(buf, 0, sizeof(buf));
	d = buf + (format ? 8 : 4);
	if (format) {
		buf[4] = 0x10;			 /* FORMAT TYPE 001b */
		buf[5] = cfg->alua_transition_s; /* IMPLICIT TRANSITION TIME (0: not specified) */
	}
	for (unsigned g = 0; g < cfg->ntpgs; g++) {
		uint8_t count = 0;

		/* Table 253: PREF 0, ASYMMETRIC ACCESS STATE */
		d[0] = (uint8_t)(x->lun->tpg_state[g] & 0x0f);
		/* T_SUP, O_SUP, U_SUP, S_SUP, AN_SUP, AO_SUP (no LBA dependent) */
		d[1] = 0x80 | 0x40 | 0x08 | 0x04 | 0x02 | 0x01;
		fl_put_be16(d + 2, cfg->tpgs[g].id);
		d[5] = 0; /* STATUS CODE: no status available */
		if (cfg->nports == 0) {
			fl_put_be16(d + 8 + 2, spc_rel_port(x));
			count = 1;
		}
		for (unsigned i = 0; i < cfg->nports; i++)
			if (lun_tpg_index(x->lun, cfg->ports[i].rel_port_id) == g)
				fl_put_be16(d + 8 + 4 * count++ + 2, cfg->ports[i].rel_port_id);
		d[7] = count; /* TARGET PORT COUNT */
		d += 8 + 4 * count;
	}
	len = (uint32_t)(d - buf);
	fl_put_be32(buf, len - 4); /* RETURN DATA LENGTH */
	exec_data_in(x, buf, len, alloc);
	return SENSE_OK;
}

/*
 * SET TARGET PORT GROUPS (SPC-4 r37 6.46): explicit ALUA. Only when the LUN
 * reports explicit support (TPGS 10b or 11b), else the opcode is not
 * supported. Each 4-byte descriptor after the 4-byte header names a target
 * port group and the state it is to enter: active/optimized,
 * active/non-optimized, standby or unavailable (Table 293); anything else,
 * or a group the LUN does not know, is INVALID FIELD IN PARAMETER LIST and
 * changes nothing. 5.15.2.5: the I_T nexus that sent the command gets no
 * unit attention, every other one gets 2A/06.
 */
enum sense_reason spc_set_target_port_groups(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	const uint8_t *p = x->cmd->data_out;
	uint32_t plen = fl_get_be32(cdb + 6);
	unsigned idx[FL_MAX_PORTS * 4];
	enum fl_alua_state st[FL_MAX_PORTS * 4];
	unsigned n = 0;

	if (!x->lun->cfg.alua_explicit)
		return SENSE_INVALID_OPCODE;
	if (plen == 0)
		return SENSE_OK;
	if (plen < 4 || (plen - 4) % 4 || !p || x->cmd->data_out_len < plen ||
	    (plen - 4) / 4 > FL_MAX_PORTS * 4)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	for (uint32_t off = 4; off < plen; off += 4) {
		uint8_t state = p[off] & 0x0f;
		uint16_t id = fl_get_be16(p + off + 2);
		unsigned g;

		if (state > FL_ALUA_UNAVAILABLE)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)off,
						  3);
		for (g = 0; g < x->lun->cfg.ntpgs; g++)
			if (x->lun->cfg.tpgs[g].id == id)
				break;
		if (g == x->lun->cfg.ntpgs)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM,
						  (uint16_t)(off + 2), 7);
		idx[n] = g;
		st[n++] = (enum fl_alua_state)state;
	}
	for (unsigned i = 0; i < n; i++)
		lun_set_tpg_state(x->lun, idx[i], st[i], x->ns->id);
	return SENSE_OK;
}

/*
 * PREVENT ALLOW MEDIUM REMOVAL (SPC-4 r37 6.13, SBC-3 r36 5.6): PREVENT
 * 00b allows, 01b prevents removal (START STOP UNIT with LOEJ then gets
 * 53/02); 10b and 11b are obsolete and refused. "The prevention of medium
 * removal shall begin when any application client issues a PREVENT ALLOW
 * MEDIUM REMOVAL command with a PREVENT field set to 01b" and ends when
 * every I_T nexus that prevented it allowed it again (or went away).
 */
enum sense_reason spc_prevent_allow(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	struct fl_lun *lun = x->lun;

	if (cdb[4] & 0xfe)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 4,
					  spc_top_bit(cdb[4] & 0xfe));
	x->ns->prevent_removal = cdb[4] & 0x01;
	lun->removal_prevented = false;
	for (const struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
		lun->removal_prevented |= ns->prevent_removal;
	return SENSE_OK;
}

/* Name of an ALUA asymmetric access state (SPC-4 r37 6.36), as scenarios write it. */
const char *fl_alua_state_text(unsigned s)
{
	static const char *const names[16] = {
	    "active_optimized",	  "active_non_optimized", "standby",
	    "unavailable",	  [0xe] = "offline",	  [0xf] = "transitioning",
	    [4] = "lba_dependent"};
	return names[s & 15] ? names[s & 15] : "reserved";
}
