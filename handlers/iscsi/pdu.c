/* SPDX-License-Identifier: MIT */
/*
 * pdu.c - iSCSI PDUs as the target builds and names them.
 *
 * RFC 7143 11.2: a PDU is a 48-byte BHS, optional AHS, optional header digest,
 * a data segment padded to 4 bytes, optional data digest. A PDU to send is
 * built here (txpdu_new, txpdu_set_data) and framed by the connection that
 * queues it (conn.c). Reject PDUs (11.17) carry the offending BHS; MaxCmdSN
 * (4.2.2.1) is what every PDU sent advertises. At verbosity 2 (`faultlun serve
 * -vv`) every PDU received and sent is logged, decoded (pdu_log).
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

/* Frees a PDU and drops its task reference. */
void txpdu_free(struct txpdu *t)
{
	if (t->task)
		task_put(t->task);
	free(t->owned);
	free(t);
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
			 get_be32(bhs + BHS_TTT));
		break;
	}
	case ISCSI_OP_DATA_OUT:
	case ISCSI_OP_DATA_IN:
		snprintf(extra, sizeof(extra), " ttt 0x%08x datasn %u offset %u%s",
			 get_be32(bhs + BHS_TTT), get_be32(bhs + BHS_DATASN),
			 get_be32(bhs + BHS_OFFSET), flags & 0x80 ? " F" : "");
		if (op == ISCSI_OP_DATA_IN && (flags & 0x01))
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
				 " status 0x%02x", bhs[3]);
		break;
	case ISCSI_OP_SCSI_RESP:
		snprintf(extra, sizeof(extra), " response 0x%02x status 0x%02x residual %u", bhs[2],
			 bhs[3], get_be32(bhs + BHS_RESIDUAL));
		break;
	case ISCSI_OP_TMF_REQ:
		snprintf(extra, sizeof(extra), " function %u lun %u rtt 0x%08x", flags & 0x7f,
			 ((bhs[BHS_LUN] & 0x3f) << 8) | bhs[BHS_LUN + 1], get_be32(bhs + BHS_TTT));
		break;
	case ISCSI_OP_TMF_RESP:
	case ISCSI_OP_LOGIN_RESP:
	case ISCSI_OP_LOGOUT_RESP:
		snprintf(extra, sizeof(extra), " response 0x%02x%02x", bhs[2], bhs[3]);
		break;
	case ISCSI_OP_R2T:
		snprintf(extra, sizeof(extra), " ttt 0x%08x offset %u length %u",
			 get_be32(bhs + BHS_TTT), get_be32(bhs + BHS_OFFSET),
			 get_be32(bhs + BHS_RESIDUAL));
		break;
	case ISCSI_OP_LOGOUT_REQ:
		snprintf(extra, sizeof(extra), " reason %u", flags & 0x7f);
		break;
	default:
		break;
	}
	iscsi_log(c->portal, LOG_DEBUG, c, "%s %s itt 0x%08x %s %u %s %u dsl %u%s", dir,
		  pdu_names[op] ? pdu_names[op] : "unknown opcode", get_be32(bhs + BHS_ITT),
		  initiator ? "cmdsn" : "statsn", get_be32(bhs + BHS_CMDSN),
		  initiator ? "expstatsn" : "expcmdsn", get_be32(bhs + BHS_EXPSTATSN), dlen, extra);
}

/* Sends a Reject (RFC 7143 11.17) quoting the rejected PDU's header. */
void conn_send_reject(struct conn *c, const uint8_t *bhs, uint8_t reason)
{
	struct txpdu *t = txpdu_new(ISCSI_OP_REJECT);

	if (!t) {
		conn_close(c, "out of memory");
		return;
	}
	iscsi_log(c->portal, LOG_INFO, c, "reject opcode 0x%02x reason 0x%02x",
		  bhs[0] & ISCSI_OPCODE_MASK, reason);
	t->hdr[1] = ISCSI_FLAG_FINAL;
	t->hdr[2] = reason;
	put_be32(t->hdr + BHS_ITT, ISCSI_RSVD_TAG);
	put_be32(t->hdr + BHS_STATSN, c->stat_sn++);
	txpdu_set_data(t, bhs, ISCSI_BHS_LEN, true);
	conn_queue(c, t);
}
