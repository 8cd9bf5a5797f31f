/* SPDX-License-Identifier: MIT */
/*
 * pr.c - reservations of the logical unit: SPC-2 RESERVE / RELEASE (6, 10)
 * and SPC-4 persistent reservations (SPC-4 r37 5.12, 6.15, 6.16).
 *
 * SPC-2 reservations belong to one I_T nexus; while one is held every
 * command of another nexus that lun.c marks OPF_CONFLICT gets RESERVATION
 * CONFLICT, except RELEASE, which "shall return GOOD status without
 * altering any other reservation" (SPC-2 r20 7.21 / 7.24).
 *
 * Persistent reservations: registrations are kept per I_T nexus (the nexus
 * id of struct fl_nexus); types Write Exclusive (1h), Exclusive Access
 * (3h), their Registrants Only (5h, 6h) and All Registrants (7h, 8h)
 * variants; PERSISTENT RESERVE IN READ KEYS, READ RESERVATION, REPORT
 * CAPABILITIES, READ FULL STATUS (with the initiator port name of struct
 * fl_nexus as an iSCSI TransportID, or a SAS one for a "naa." + 16 hex
 * digits name as tcm_loop uses); PERSISTENT RESERVE OUT REGISTER, REGISTER AND IGNORE
 * EXISTING KEY, RESERVE, RELEASE, CLEAR, PREEMPT. Not supported (and said so
 * in REPORT CAPABILITIES): SPEC_I_PT, ALL_TG_PT, APTPL (registrations do not
 * survive a power loss), compatible reservation handling (CRH=0: while any
 * registration exists RESERVE and RELEASE (6, 10) conflict, SPC-4 r37
 * 5.12.3). pr_check_conflict() implements the command tables of SPC-4 r37
 * 5.12.1 (Table 60) and SBC-3 r36 4.17 for the commands of the opcode
 * table. Unit attentions: 2A/03 RESERVATIONS PREEMPTED (CLEAR), 2A/04
 * RESERVATIONS RELEASED (release of a registrants-only or all-registrants
 * reservation, or a PREEMPT that changes the type), 2A/05 REGISTRATIONS
 * PREEMPTED (registrations removed by PREEMPT).
 */
#include "spc_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* PERSISTENT RESERVE OUT service actions (SPC-4 r37 Table 170). */
#define PRO_REGISTER 0x00
#define PRO_RESERVE 0x01
#define PRO_RELEASE 0x02
#define PRO_CLEAR 0x03
#define PRO_PREEMPT 0x04
#define PRO_REGISTER_IGNORE 0x06
/* PERSISTENT RESERVE IN service actions (SPC-4 r37 Table 163). */
#define PRI_READ_KEYS 0x00
#define PRI_READ_RESERVATION 0x01
#define PRI_REPORT_CAPABILITIES 0x02
#define PRI_READ_FULL_STATUS 0x03
/* Longest initiator port name put in a TransportID (SPC-4 r37 7.6.4.6: 223 + NUL) */
#define PR_NAME_MAX 224
/* Persistent reservation types (SPC-4 r37 Table 169). */
#define PR_WE 0x1
#define PR_EA 0x3
#define PR_WE_RO 0x5
#define PR_EA_RO 0x6
#define PR_WE_AR 0x7
#define PR_EA_AR 0x8
/* PERSISTENT RESERVE OUT parameter list (SPC-4 r37 6.16.3, Table 172). */
#define PRO_PLIST_LEN 24
#define PRO_SPEC_I_PT 0x08
#define PRO_ALL_TG_PT 0x04
#define PRO_APTPL 0x01

/* True for the types this device server implements. */
static bool type_valid(uint8_t type)
{
	return type == PR_WE || type == PR_EA || type == PR_WE_RO || type == PR_EA_RO ||
	       type == PR_WE_AR || type == PR_EA_AR;
}

/* Registrants-only types: every registrant may access as the holder does. */
static bool type_ro(uint8_t type)
{
	return type == PR_WE_RO || type == PR_EA_RO;
}

/* All-registrants types: every registrant is a reservation holder. */
static bool type_ar(uint8_t type)
{
	return type == PR_WE_AR || type == PR_EA_AR;
}

/* Write Exclusive family: others may still read. */
static bool type_we(uint8_t type)
{
	return type == PR_WE || type == PR_WE_RO || type == PR_WE_AR;
}

/* Index of the registration of a nexus, or -1. */
static int reg_find(const struct pr_state *pr, uint64_t nexus_id)
{
	for (unsigned i = 0; i < pr->nreg; i++)
		if (pr->reg[i].nexus_id == nexus_id)
			return (int)i;
	return -1;
}

/* True when the nexus holds the persistent reservation (SPC-4 r37 5.12.10). */
static bool pr_is_holder(const struct pr_state *pr, uint64_t nexus_id)
{
	if (!pr->reserved)
		return false;
	if (type_ar(pr->type))
		return reg_find(pr, nexus_id) >= 0;
	return pr->holder_nexus == nexus_id;
}

/* Queues a UA on the nexus with that id, when it still exists. */
static void ua_nexus(struct fl_lun *lun, uint64_t nexus_id, uint8_t asc, uint8_t ascq)
{
	for (struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
		if (ns->id == nexus_id)
			ua_push(ns, asc, ascq);
}

/* Queues a UA for every registered nexus but `except`. */
static void ua_registrants(struct fl_lun *lun, uint64_t except, uint8_t asc, uint8_t ascq)
{
	for (unsigned i = 0; i < lun->pr.nreg; i++)
		if (lun->pr.reg[i].nexus_id != except)
			ua_nexus(lun, lun->pr.reg[i].nexus_id, asc, ascq);
}

/* Drops registration i, keeping the order of the others. */
static void reg_remove(struct pr_state *pr, unsigned i)
{
	free(pr->reg[i].initiator);
	pr->nreg--;
	memmove(&pr->reg[i], &pr->reg[i + 1], (pr->nreg - i) * sizeof(pr->reg[0]));
}

/*
 * Unregisters the nexus of registration i (SPC-4 r37 5.12.11.2.3): a holder
 * of a non all-registrants reservation loses it, and "if the persistent
 * reservation is of a registrants only type, the device server shall
 * establish a unit attention condition ... RESERVATIONS RELEASED" for the
 * other registrants. The last registrant of an all-registrants reservation
 * takes the reservation with it.
 */
static void reg_unregister(struct fl_lun *lun, unsigned i)
{
	struct pr_state *pr = &lun->pr;
	uint64_t id = pr->reg[i].nexus_id;

	if (pr->reserved && !type_ar(pr->type) && pr->holder_nexus == id) {
		pr->reserved = false;
		if (type_ro(pr->type))
			ua_registrants(lun, id, ASC_PARAMETERS_CHANGED, ASCQ_RESERVATIONS_RELEASED);
	}
	reg_remove(pr, i);
	if (pr->reserved && type_ar(pr->type) && pr->nreg == 0)
		pr->reserved = false;
}

/* True for RESERVE(6), RESERVE(10), RELEASE(6), RELEASE(10). */
static bool is_spc2_reservation_cmd(uint8_t op)
{
	return op == SPC_OP_RESERVE_6 || op == SPC_OP_RELEASE_6 || op == SPC_OP_RESERVE_10 ||
	       op == SPC_OP_RELEASE_10;
}

/*
 * Checks the reservation state for a command marked OPF_CONFLICT.
 *
 * SPC-2 reservation held by another nexus: everything conflicts but
 * RELEASE. Persistent reservations, SPC-4 r37 5.12.1 Table 60 and SBC-3 r36
 * Table 13: the holder may do anything; a registrant may do anything under
 * a registrants-only or all-registrants type; any other nexus may read
 * (OPF_PR_READ_OK) under the Write Exclusive types and do nothing else, save
 * PREVENT ALLOW MEDIUM REMOVAL with PREVENT=0, START STOP UNIT with START=1
 * and POWER CONDITION 0, and READ CAPACITY, which are allowed in every case.
 */
enum sense_reason pr_check_conflict(struct exec_ctx *x)
{
	const struct pr_state *pr = &x->lun->pr;
	const uint8_t *cdb = x->cmd->cdb;
	uint64_t id = x->ns->id;
	uint8_t op = cdb[0];

	if (pr->legacy_reserved) {
		if (pr->legacy_holder == id || op == SPC_OP_RELEASE_6 || op == SPC_OP_RELEASE_10)
			return SENSE_OK;
		return SENSE_RESERVATION_CONFLICT;
	}
	/* SPC-4 r37 5.12.3 (CRH=0): RESERVE and RELEASE conflict while registered */
	if (is_spc2_reservation_cmd(op))
		return pr->nreg ? SENSE_RESERVATION_CONFLICT : SENSE_OK;
	if (!pr->reserved || pr_is_holder(pr, id))
		return SENSE_OK;
	if ((type_ro(pr->type) || type_ar(pr->type)) && reg_find(pr, id) >= 0)
		return SENSE_OK;
	if (op == 0x1e && !(cdb[4] & 0x03))
		return SENSE_OK;
	if (op == 0x1b && (cdb[4] & 0x01) && !(cdb[4] & 0xf0))
		return SENSE_OK;
	if (op == 0x25 || (op == 0x9e && (cdb[1] & 0x1f) == 0x10))
		return SENSE_OK;
	if (type_we(pr->type) && (x->desc->flags & OPF_PR_READ_OK))
		return SENSE_OK;
	return SENSE_RESERVATION_CONFLICT;
}

/*
 * RESERVE (6) / (10) (SPC-2 r20 7.21, 7.22): a logical-unit reservation for
 * the nexus; again from the holder is GOOD. Third-party and extent
 * reservations are not supported. pr_check_conflict() has already refused
 * it while another nexus holds one or any PR registration exists.
 */
enum sense_reason pr_reserve(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	struct pr_state *pr = &x->lun->pr;

	/* RESERVE(10): 3RDPTY, LONGID; RESERVE(6): the obsolete extent bits */
	if (cdb[1])
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, spc_top_bit(cdb[1]));
	pr->legacy_reserved = true;
	pr->legacy_holder = x->ns->id;
	return SENSE_OK;
}

/*
 * RELEASE (6) / (10) (SPC-2 r20 7.23, 7.24): releases the nexus's own
 * reservation; "It is not an error for an application client to attempt to
 * release a reservation that is not currently valid, or is held by another
 * initiator. In this case, the device server shall return GOOD status
 * without altering any other reservation."
 */
enum sense_reason pr_release(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	struct pr_state *pr = &x->lun->pr;

	if (cdb[1])
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, spc_top_bit(cdb[1]));
	if (pr->legacy_reserved && pr->legacy_holder == x->ns->id)
		pr->legacy_reserved = false;
	return SENSE_OK;
}

/* READ KEYS parameter data (SPC-4 r37 6.15.2, Table 165). */
static uint32_t pri_read_keys(const struct pr_state *pr, uint8_t *buf)
{
	fl_put_be32(buf, pr->generation);
	fl_put_be32(buf + 4, 8 * pr->nreg);
	for (unsigned i = 0; i < pr->nreg; i++)
		fl_put_be64(buf + 8 + 8 * i, pr->reg[i].key);
	return 8 + 8 * pr->nreg;
}

/*
 * READ RESERVATION parameter data (SPC-4 r37 6.15.3, Table 167). Under an
 * all-registrants type "the RESERVATION KEY field shall be set to zero".
 */
static uint32_t pri_read_reservation(const struct pr_state *pr, uint8_t *buf)
{
	int i;

	fl_put_be32(buf, pr->generation);
	if (!pr->reserved)
		return 8;
	fl_put_be32(buf + 4, 16);
	i = reg_find(pr, pr->holder_nexus);
	if (!type_ar(pr->type) && i >= 0)
		fl_put_be64(buf + 8, pr->reg[i].key);
	buf[21] = pr->type & 0x0f; /* SCOPE 0h: logical unit */
	return 24;
}

/* REPORT CAPABILITIES parameter data (SPC-4 r37 6.15.4, Table 168). */
static uint32_t pri_report_capabilities(uint8_t *buf)
{
	fl_put_be16(buf, 8);
	buf[2] = 0x00; /* RLR_C, CRH, SIP_C, ATP_C, PTPL_C: none */
	/* TMV, ALLOW COMMANDS 001b: TEST UNIT READY passes WE and EA reservations */
	buf[3] = 0x80 | 0x10;
	/* PERSISTENT RESERVATION TYPE MASK: WR_EX_AR, EX_AC_RO, WR_EX_RO, EX_AC, WR_EX */
	buf[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02;
	buf[5] = 0x01; /* EX_AC_AR */
	return 8;
}

/* True when `name` is "naa." and 16 hex digits (a SAS address). */
static bool name_is_sas(const char *name)
{
	if (strncmp(name, "naa.", 4) != 0 || strlen(name) != 20)
		return false;
	for (int i = 4; i < 20; i++)
		if (!isxdigit((unsigned char)name[i]))
			return false;
	return true;
}

/*
 * TransportID of an initiator port (SPC-4 r37 7.6.4): SAS (7.6.4.8, 24
 * bytes) for a SAS address, else iSCSI (7.6.4.6): FORMAT CODE 01b when the
 * name carries ",i,0x<ISID>", 00b otherwise, the name NUL-terminated and
 * padded to a multiple of four. Returns its length.
 */
static uint32_t transport_id(const char *name, uint8_t *p)
{
	size_t n;

	if (!name)
		name = "";
	if (name_is_sas(name)) {
		memset(p, 0, 24);
		p[0] = 0x06; /* FORMAT CODE 00b, PROTOCOL IDENTIFIER 6h: SAS */
		for (int i = 0; i < 8; i++) {
			char hex[3] = {name[4 + 2 * i], name[5 + 2 * i], 0};

			p[4 + i] = (uint8_t)strtoul(hex, NULL, 16);
		}
		return 24;
	}
	n = strnlen(name, PR_NAME_MAX - 1);
	memset(p, 0, 4 + ((n + 1 + 3) & ~(size_t)3));
	p[0] = (uint8_t)((strstr(name, ",i,0x") ? 0x40 : 0x00) | 0x05);
	fl_put_be16(p + 2, (uint32_t)((n + 1 + 3) & ~(size_t)3));
	memcpy(p + 4, name, n);
	return 4 + (uint32_t)((n + 1 + 3) & ~(size_t)3);
}

/*
 * READ FULL STATUS parameter data (SPC-4 r37 6.15.5, Tables 169-170): one
 * full status descriptor per registration, R_HOLDER set for the holders,
 * the relative target port the registering nexus came through.
 */
static enum sense_reason pri_read_full_status(struct exec_ctx *x, uint32_t alloc)
{
	const struct fl_lun *lun = x->lun;
	const struct pr_state *pr = &lun->pr;
	uint32_t len = 8;
	uint8_t *buf;

	buf = calloc(1, 8 + (size_t)pr->nreg * (24 + 4 + PR_NAME_MAX));
	if (!buf)
		return SENSE_BUSY;
	for (unsigned i = 0; i < pr->nreg; i++) {
		const struct pr_registrant *r = &pr->reg[i];
		uint8_t *d = buf + len;
		uint16_t port = 0;
		uint32_t tlen;

		for (const struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
			if (ns->id == r->nexus_id)
				port = ns->rel_port_id;
		fl_put_be64(d, r->key);
		if (pr_is_holder(pr, r->nexus_id)) {
			d[12] = 0x01;		 /* R_HOLDER */
			d[13] = pr->type & 0x0f; /* SCOPE 0h: logical unit */
		}
		fl_put_be16(d + 18, port);
		tlen = transport_id(r->initiator, d + 24);
		fl_put_be32(d + 20, tlen);
		len += 24 + tlen;
	}
	fl_put_be32(buf, pr->generation);
	fl_put_be32(buf + 4, len - 8);
	exec_data_in(x, buf, len, alloc);
	free(buf);
	return SENSE_OK;
}

/*
 * PERSISTENT RESERVE IN (SPC-4 r37 6.15). SPC-2 r20 5.5.1: "If a logical
 * unit has been reserved by any RESERVE command and is still reserved by
 * any initiator, all PERSISTENT RESERVE IN and all PERSISTENT RESERVE OUT
 * commands shall conflict regardless of initiator or service action".
 */
enum sense_reason pr_in(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	const struct pr_state *pr = &x->lun->pr;
	uint8_t buf[8 + 8 * PR_MAX_REGISTRANTS];
	uint32_t alloc = fl_get_be16(cdb + 7), len;

	if (pr->legacy_reserved)
		return SENSE_RESERVATION_CONFLICT;
	if (cdb[1] & 0xe0)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1,
					  spc_top_bit(cdb[1] & 0xe0));
	memset(buf, 0, sizeof(buf));
	switch (cdb[1] & 0x1f) {
	case PRI_READ_KEYS:
		len = pri_read_keys(pr, buf);
		break;
	case PRI_READ_RESERVATION:
		len = pri_read_reservation(pr, buf);
		break;
	case PRI_READ_FULL_STATUS:
		return pri_read_full_status(x, alloc);
	default:
		len = pri_report_capabilities(buf);
		break;
	}
	exec_data_in(x, buf, len, alloc);
	return SENSE_OK;
}

/* Checks SCOPE and TYPE of a RESERVE, RELEASE or PREEMPT CDB. */
static enum sense_reason pro_check_scope_type(struct exec_ctx *x)
{
	uint8_t b2 = x->cmd->cdb[2];

	if (b2 >> 4)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, 7);
	if (!type_valid(b2 & 0x0f))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, 3);
	return SENSE_OK;
}

/*
 * REGISTER and REGISTER AND IGNORE EXISTING KEY (SPC-4 r37 5.12.7,
 * Tables 61 and 62): an unregistered nexus registers SARK (a non-zero
 * RESERVATION KEY is a conflict for REGISTER); a registered one whose key
 * matches (or is ignored) changes it to SARK, or unregisters with SARK 0.
 */
static enum sense_reason pro_register(struct exec_ctx *x, bool ignore, uint64_t key, uint64_t sark)
{
	struct pr_state *pr = &x->lun->pr;
	int i = reg_find(pr, x->ns->id);

	if (i < 0) {
		if (!ignore && key != 0)
			return SENSE_RESERVATION_CONFLICT;
		if (sark != 0) {
			struct pr_registrant *r;

			if (pr->nreg == PR_MAX_REGISTRANTS)
				return SENSE_INSUFFICIENT_REG_RESOURCES;
			r = &pr->reg[pr->nreg];
			r->initiator = NULL;
			if (x->ns->initiator) {
				r->initiator = strdup(x->ns->initiator);
				if (!r->initiator)
					return SENSE_BUSY;
			}
			r->nexus_id = x->ns->id;
			r->key = sark;
			pr->nreg++;
		}
	} else {
		if (!ignore && key != pr->reg[i].key)
			return SENSE_RESERVATION_CONFLICT;
		if (sark == 0) {
			reg_unregister(x->lun, (unsigned)i);
		} else {
			pr->reg[i].key = sark;
			if (pr->reserved && pr->holder_nexus == x->ns->id)
				pr->holder_key = sark;
		}
	}
	pr->generation++;
	return SENSE_OK;
}

/*
 * RESERVE (SPC-4 r37 5.12.9): "If the I_T nexus ... is the persistent
 * reservation holder and the scope and type match, GOOD; a different type
 * or scope, or a reservation held by another nexus, RESERVATION CONFLICT".
 */
static enum sense_reason pro_reserve(struct exec_ctx *x)
{
	struct pr_state *pr = &x->lun->pr;
	uint8_t type = x->cmd->cdb[2] & 0x0f;
	enum sense_reason r = pro_check_scope_type(x);

	if (r != SENSE_OK)
		return r;
	if (pr->reserved) {
		if (pr_is_holder(pr, x->ns->id) && pr->type == type)
			return SENSE_OK;
		return SENSE_RESERVATION_CONFLICT;
	}
	pr->reserved = true;
	pr->type = type;
	pr->holder_nexus = x->ns->id;
	pr->holder_key = pr->reg[reg_find(pr, x->ns->id)].key;
	return SENSE_OK;
}

/*
 * RELEASE (SPC-4 r37 5.12.11.2): no reservation, or a registrant that does
 * not hold it: GOOD, nothing changes. The holder with another scope or type:
 * "ILLEGAL REQUEST ... INVALID RELEASE OF PERSISTENT RESERVATION". Releasing
 * a registrants-only or all-registrants reservation raises RESERVATIONS
 * RELEASED for the other registrants.
 */
static enum sense_reason pro_release(struct exec_ctx *x)
{
	struct pr_state *pr = &x->lun->pr;
	uint8_t type = x->cmd->cdb[2] & 0x0f;

	if (!pr->reserved || !pr_is_holder(pr, x->ns->id))
		return SENSE_OK;
	if ((x->cmd->cdb[2] >> 4) || type != pr->type)
		return SENSE_INVALID_RELEASE;
	pr->reserved = false;
	if (type_ro(type) || type_ar(type))
		ua_registrants(x->lun, x->ns->id, ASC_PARAMETERS_CHANGED,
			       ASCQ_RESERVATIONS_RELEASED);
	return SENSE_OK;
}

/*
 * CLEAR (SPC-4 r37 5.12.11.6): every registration and the reservation go;
 * the other registrants hear RESERVATIONS PREEMPTED.
 */
static enum sense_reason pro_clear(struct exec_ctx *x)
{
	struct pr_state *pr = &x->lun->pr;

	ua_registrants(x->lun, x->ns->id, ASC_PARAMETERS_CHANGED, ASCQ_RESERVATIONS_PREEMPTED);
	while (pr->nreg)
		reg_remove(pr, pr->nreg - 1);
	pr->reserved = false;
	pr->generation++;
	return SENSE_OK;
}

/* Removes the registrations with key `sark` but the caller's; returns how many. */
static unsigned preempt_remove(struct fl_lun *lun, uint64_t self, bool any_key, uint64_t sark)
{
	struct pr_state *pr = &lun->pr;
	unsigned removed = 0;

	for (unsigned i = 0; i < pr->nreg;) {
		if (pr->reg[i].nexus_id != self && (any_key || pr->reg[i].key == sark)) {
			/* SPC-4 r37 5.12.11.4: REGISTRATIONS PREEMPTED for each */
			ua_nexus(lun, pr->reg[i].nexus_id, ASC_PARAMETERS_CHANGED,
				 ASCQ_REGISTRATIONS_PREEMPTED);
			reg_remove(pr, i);
			removed++;
		} else {
			i++;
		}
	}
	return removed;
}

/*
 * PREEMPT (SPC-4 r37 5.12.11.4). All-registrants reservation and SARK 0:
 * every other registration goes and the caller reserves with the CDB's
 * type. SARK = the holder's key: the holder's (and same-key) registrations
 * go, the caller takes the reservation with the CDB's type, and "if the
 * type or scope has changed" the remaining registrants hear RESERVATIONS
 * RELEASED. Otherwise only registrations with key SARK go (none: conflict);
 * SARK 0 there is "INVALID FIELD IN PARAMETER LIST".
 */
static enum sense_reason pro_preempt(struct exec_ctx *x, uint64_t sark)
{
	struct fl_lun *lun = x->lun;
	struct pr_state *pr = &lun->pr;
	uint64_t self = x->ns->id;
	uint8_t type = x->cmd->cdb[2] & 0x0f, old_type = pr->type;
	enum sense_reason r = pro_check_scope_type(x);
	bool take;
	int me;

	if (r != SENSE_OK)
		return r;
	if (pr->reserved && type_ar(pr->type) && sark == 0) {
		preempt_remove(lun, self, true, 0);
		take = true;
	} else if (sark == 0) {
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, 8, -1);
	} else if (pr->reserved && !type_ar(pr->type) && sark == pr->holder_key) {
		preempt_remove(lun, self, false, sark);
		take = true;
	} else {
		if (preempt_remove(lun, self, false, sark) == 0)
			return SENSE_RESERVATION_CONFLICT;
		take = false;
	}
	if (take) {
		me = reg_find(pr, self);
		pr->reserved = true;
		pr->type = type;
		pr->holder_nexus = self;
		pr->holder_key = pr->reg[me].key;
		if (type != old_type)
			ua_registrants(lun, self, ASC_PARAMETERS_CHANGED,
				       ASCQ_RESERVATIONS_RELEASED);
	}
	pr->generation++;
	return SENSE_OK;
}

/*
 * PERSISTENT RESERVE OUT (SPC-4 r37 6.16). The parameter list is 24 bytes
 * ("If the parameter list length is not 24 ... PARAMETER LIST LENGTH
 * ERROR" with SPEC_I_PT zero, which is the only value accepted). Except for
 * REGISTER AND IGNORE EXISTING KEY and a first REGISTER, the nexus must be
 * registered with RESERVATION KEY or the command conflicts (5.12.7).
 */
enum sense_reason pr_out(struct exec_ctx *x)
{
	struct fl_cmd *cmd = x->cmd;
	const uint8_t *cdb = cmd->cdb, *p = cmd->data_out;
	struct pr_state *pr = &x->lun->pr;
	uint8_t sa = cdb[1] & 0x1f;
	uint32_t plen = fl_get_be32(cdb + 5);
	uint64_t key, sark;
	int i;

	if (pr->legacy_reserved)
		return SENSE_RESERVATION_CONFLICT;
	if (cdb[1] & 0xe0)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1,
					  spc_top_bit(cdb[1] & 0xe0));
	if (plen != PRO_PLIST_LEN)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	if (!p || cmd->data_out_len < PRO_PLIST_LEN)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 5, -1);
	key = fl_get_be64(p);
	sark = fl_get_be64(p + 8);
	/* SIP_C = ATP_C = PTPL_C = 0 in REPORT CAPABILITIES */
	if (p[20] & PRO_SPEC_I_PT)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, 20, 3);
	if (sa == PRO_REGISTER || sa == PRO_REGISTER_IGNORE) {
		if (p[20] & PRO_ALL_TG_PT)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, 20, 2);
		if (p[20] & PRO_APTPL)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, 20, 0);
		return pro_register(x, sa == PRO_REGISTER_IGNORE, key, sark);
	}
	i = reg_find(pr, x->ns->id);
	if (i < 0 || pr->reg[i].key != key)
		return SENSE_RESERVATION_CONFLICT;
	switch (sa) {
	case PRO_RESERVE:
		return pro_reserve(x);
	case PRO_RELEASE:
		return pro_release(x);
	case PRO_CLEAR:
		return pro_clear(x);
	default:
		return pro_preempt(x, sark);
	}
}
