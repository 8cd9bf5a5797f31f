/* SPDX-License-Identifier: MIT */
/*
 * pdu.c - iSCSI PDUs as the target builds and names them.
 *
 * RFC 7143 11.2: a PDU is a 48-byte BHS, optional AHS, optional header digest,
 * a data segment padded to 4 bytes, optional data digest. A PDU to send is
 * built here (txpdu_new, txpdu_set_data), framed and queued by tx.c and
 * written by conn.c. MaxCmdSN (4.2.2.1) is what every PDU sent advertises; a
 * LUN field is decoded here (SAM-5 4.6.4), and the engine's view of a PDU
 * (pdu_info) filled for the scenario's transport rules. At verbosity 2
 * (`faultlun serve -vv`) every PDU received and sent is logged, decoded
 * (pdu_log). Nothing here calls a file above it.
 */
#include "iscsi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Current MaxCmdSN to advertise (RFC 7143 4.2.2.1), honouring a stalled window. */
uint32_t conn_max_cmd_sn(struct conn *c)
{
	if (c->xs.stall_max_cmd_sn)
		return c->exp_cmd_sn - 1;
	uint32_t free_slots = c->ntasks < ISCSI_CMD_WINDOW ? ISCSI_CMD_WINDOW - c->ntasks : 0;
	uint32_t cand = c->exp_cmd_sn + free_slots - 1;
	/* The window never shrinks: the initiator may already use it. */
	if (sn_cmp(cand, c->max_cmd_sn) > 0 || sn_cmp(c->max_cmd_sn, c->exp_cmd_sn - 1) < 0)
		c->max_cmd_sn = cand;
	return c->max_cmd_sn;
}

/* Allocates a PDU with opcode set and the rest of the header zeroed. */
struct txpdu *txpdu_new(uint8_t opcode)
{
	struct txpdu *t = calloc(1, sizeof(*t));

	if (t)
		t->hdr[0] = opcode;
	return t;
}

/* Attaches a data segment, copied or borrowed (borrowed data must outlive the PDU). */
void txpdu_set_data(struct txpdu *t, const uint8_t *data, uint32_t len, bool copy)
{
	if (copy && len) {
		t->owned = malloc(len);
		if (!t->owned) {
			len = 0;
		} else {
			memcpy(t->owned, data, len);
			data = t->owned;
		}
	}
	t->data = len ? data : NULL;
	t->dlen = len;
}

/*
 * Drops one reference to a task; the last frees it. A Data-In PDU holds one
 * (it borrows the task's buffer), so a task may outlive its connection here.
 */
void task_put(struct task *t)
{
	if (--t->refs > 0)
		return;
	free(t->buf);
	free(t->initiator);
	free(t);
}

/* Frees a PDU and drops its task reference. */
void txpdu_free(struct txpdu *t)
{
	if (t->task)
		task_put(t->task);
	free(t->owned);
	free(t);
}

/* Decodes an 8-byte LUN field (SAM-5 4.6.4); 0xffff when not addressable. */
void lun_decode(const uint8_t *raw, uint16_t *lun_id)
{
	for (int i = 2; i < 8; i++)
		if (raw[i]) {
			*lun_id = 0xffff;
			return;
		}
	switch (raw[0] >> 6) {
	case 0: /* peripheral device addressing, bus 0 */
		*lun_id = (raw[0] & 0x3f) ? 0xffff : raw[1];
		break;
	case 1: /* flat space addressing */
		*lun_id = (uint16_t)((raw[0] & 0x3f) << 8 | raw[1]);
		break;
	default:
		*lun_id = 0xffff;
	}
}

/* Fills the engine's view of a PDU of c (the scenario's transport rules read it). */
void pdu_info(struct conn *c, enum fl_pdu_kind kind, const struct task *t, struct fl_pdu_info *info)
{
	memset(info, 0, sizeof(*info));
	info->kind = kind;
	info->nexus_id = c->nexus_id;
	info->rel_port_id = c->rel_port_id;
	if (t) {
		info->lun_id = t->lun_id;
		info->has_cdb = true;
		info->cdb = t->cmd.info; /* kept after completion (only `decoded` is cleared) */
	}
}

/* Names of the PDU opcodes (RFC 7143 11.1.1), for the -vv log. */
static const char *const pdu_names[ISCSI_OPCODE_MASK + 1] = {
    [ISCSI_OP_NOP_OUT] = "NOP-Out",
    [ISCSI_OP_SCSI_CMD] = "SCSI Command",
    [ISCSI_OP_TMF_REQ] = "Task Management Request",
    [ISCSI_OP_LOGIN_REQ] = "Login Request",
    [ISCSI_OP_TEXT_REQ] = "Text Request",
    [ISCSI_OP_DATA_OUT] = "Data-Out",
    [ISCSI_OP_LOGOUT_REQ] = "Logout Request",
    [ISCSI_OP_SNACK] = "SNACK",
    [ISCSI_OP_NOP_IN] = "NOP-In",
    [ISCSI_OP_SCSI_RESP] = "SCSI Response",
    [ISCSI_OP_TMF_RESP] = "Task Management Response",
    [ISCSI_OP_LOGIN_RESP] = "Login Response",
    [ISCSI_OP_TEXT_RESP] = "Text Response",
    [ISCSI_OP_DATA_IN] = "Data-In",
    [ISCSI_OP_LOGOUT_RESP] = "Logout Response",
    [ISCSI_OP_R2T] = "R2T",
    [ISCSI_OP_ASYNC] = "Async Message",
    [ISCSI_OP_REJECT] = "Reject",
};

/*
 * Logs one PDU decoded (RFC 7143 11): its name, ITT, the sequence numbers of
 * its direction, and per opcode what matters: the LUN, CDB and expected
 * length of a command, the offset of data, status and residual of a response,
 * the function of a TMF.
 */
void pdu_log(struct conn *c, const char *dir, const uint8_t *bhs, uint32_t dlen)
{
	uint8_t op = bhs[0] & ISCSI_OPCODE_MASK, flags = bhs[BHS_FLAGS];
	bool initiator = op < ISCSI_OP_NOP_IN;
	char extra[160] = "";

	switch (op) {
	case ISCSI_OP_SCSI_CMD: {
		const uint8_t *cdb = bhs + BHS_CDB;
		const char *name = fl_opcode_name(cdb[0], cdb[1] & 0x1f);

		snprintf(extra, sizeof(extra), " lun %u cdb 0x%02x %s%s%s edtl %u",
			 ((bhs[BHS_LUN] & 0x3f) << 8) | bhs[BHS_LUN + 1], cdb[0], name ? name : "?",
			 flags & 0x40 ? " R" : "", flags & 0x20 ? " W" : "",
			 fl_get_be32(bhs + BHS_TTT));
		break;
	}
	case ISCSI_OP_DATA_OUT:
	case ISCSI_OP_DATA_IN:
		snprintf(extra, sizeof(extra), " ttt 0x%08x datasn %u offset %u%s",
			 fl_get_be32(bhs + BHS_TTT), fl_get_be32(bhs + BHS_DATASN),
			 fl_get_be32(bhs + BHS_OFFSET), flags & 0x80 ? " F" : "");
		if (op == ISCSI_OP_DATA_IN && (flags & 0x01))
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
				 " status 0x%02x", bhs[3]);
		break;
	case ISCSI_OP_SCSI_RESP:
		snprintf(extra, sizeof(extra), " response 0x%02x status 0x%02x residual %u", bhs[2],
			 bhs[3], fl_get_be32(bhs + BHS_RESIDUAL));
		break;
	case ISCSI_OP_TMF_REQ:
		snprintf(extra, sizeof(extra), " function %u lun %u rtt 0x%08x", flags & 0x7f,
			 ((bhs[BHS_LUN] & 0x3f) << 8) | bhs[BHS_LUN + 1],
			 fl_get_be32(bhs + BHS_TTT));
		break;
	case ISCSI_OP_TMF_RESP:
	case ISCSI_OP_LOGIN_RESP:
	case ISCSI_OP_LOGOUT_RESP:
		snprintf(extra, sizeof(extra), " response 0x%02x%02x", bhs[2], bhs[3]);
		break;
	case ISCSI_OP_R2T:
		snprintf(extra, sizeof(extra), " ttt 0x%08x offset %u length %u",
			 fl_get_be32(bhs + BHS_TTT), fl_get_be32(bhs + BHS_OFFSET),
			 fl_get_be32(bhs + BHS_RESIDUAL));
		break;
	case ISCSI_OP_LOGOUT_REQ:
		snprintf(extra, sizeof(extra), " reason %u", flags & 0x7f);
		break;
	default:
		break;
	}
	iscsi_log(c->portal, LOG_DEBUG, c, "%s %s itt 0x%08x %s %u %s %u dsl %u%s", dir,
		  pdu_names[op] ? pdu_names[op] : "unknown opcode", fl_get_be32(bhs + BHS_ITT),
		  initiator ? "cmdsn" : "statsn", fl_get_be32(bhs + BHS_CMDSN),
		  initiator ? "expstatsn" : "expcmdsn", fl_get_be32(bhs + BHS_EXPSTATSN), dlen,
		  extra);
}
