/* SPDX-License-Identifier: MIT */
/*
 * nop.c - NOP-Out / NOP-In pings and Async Messages.
 *
 * RFC 7143 11.18 (NOP-Out: a ping with ITT != 0xffffffff is answered with a
 * NOP-In echoing its data; ITT 0xffffffff is the initiator's answer to our
 * ping and gets nothing), 11.19 (NOP-In: target pings carry ITT 0xffffffff,
 * do not advance StatSN, and carry a TTT when an answer is wanted; with TTT
 * 0xffffffff a NOP-In only announces a new ExpCmdSN / MaxCmdSN), 11.9 (Async
 * Message, AsyncEvent 1: the target asks the initiator to log out, with
 * Parameter3 the seconds it has to do so). The scenario may make the target
 * stop answering NOP-Out and start periodic pings.
 */
#include "iscsi_internal.h"

#include <stdlib.h>
#include <string.h>

/* Handles a NOP-Out (RFC 7143 11.18). */
int nop_out(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen)
{
	uint32_t itt = fl_get_be32(bhs + BHS_ITT), ttt = fl_get_be32(bhs + BHS_TTT);

	if (itt == ISCSI_RSVD_TAG) {
		/* an answer to one of our pings (the latest or an earlier one) */
		if (ttt != ISCSI_RSVD_TAG) {
			c->nop_ttt = 0;
			c->ping_sent_ns = 0;
		}
		return 0;
	}
	if (c->xs.ignore_nop_out) {
		iscsi_log(c->portal, LOG_INFO, c, "fault: NOP-Out 0x%08x not answered", itt);
		return 0;
	}
	struct txpdu *pdu = txpdu_new(ISCSI_OP_NOP_IN);
	if (!pdu) {
		conn_close(c, "out of memory");
		return -1;
	}
	pdu->hdr[1] = ISCSI_FLAG_FINAL;
	memcpy(pdu->hdr + BHS_LUN, bhs + BHS_LUN, 8);
	fl_put_be32(pdu->hdr + BHS_ITT, itt);
	fl_put_be32(pdu->hdr + BHS_TTT, ISCSI_RSVD_TAG);
	fl_put_be32(pdu->hdr + BHS_STATSN, c->stat_sn++);
	if (dlen > c->p.max_recv_dsl)
		dlen = c->p.max_recv_dsl;
	txpdu_set_data(pdu, data, dlen, true);
	conn_send(c, pdu, FL_PDU_NOP_IN, NULL, 0, 0);
	return 0;
}

/* Sends a target NOP-In: a ping (want_reply) or a window update. */
void nop_send_unsolicited(struct conn *c, bool want_reply)
{
	struct txpdu *pdu = txpdu_new(ISCSI_OP_NOP_IN);

	if (!pdu)
		return;
	pdu->hdr[1] = ISCSI_FLAG_FINAL;
	fl_put_be32(pdu->hdr + BHS_ITT, ISCSI_RSVD_TAG);
	if (want_reply) {
		c->nop_ttt = ++c->portal->next_ttt;
		if (c->nop_ttt == ISCSI_RSVD_TAG)
			c->nop_ttt = ++c->portal->next_ttt;
		fl_put_be32(pdu->hdr + BHS_TTT, c->nop_ttt);
	} else {
		fl_put_be32(pdu->hdr + BHS_TTT, ISCSI_RSVD_TAG);
	}
	fl_put_be32(pdu->hdr + BHS_STATSN, c->stat_sn); /* not advanced */
	conn_send(c, pdu, FL_PDU_NOP_IN, NULL, 0, 0);
}

/* Timer: the periodic target ping. */
static void nop_timer_fire(struct portal *p, struct conn *c, void *arg)
{
	(void)p;
	(void)arg;
	nop_send_unsolicited(c, true);
	nop_timer_arm(c);
}

/* (Re)arms the periodic ping from the session's nop_in_interval_ms. */
void nop_timer_arm(struct conn *c)
{
	timer_cancel(c->portal, c->nop_timer);
	if (c->xs.nop_in_interval_ms && !c->dead)
		timer_add(c->portal, &c->nop_timer, c, (uint64_t)c->xs.nop_in_interval_ms * 1000000,
			  nop_timer_fire, NULL, NULL);
}

/* Timer: the initiator did not log out within Parameter3 seconds. */
static void logout_deadline(struct portal *p, struct conn *c, void *arg)
{
	(void)p;
	(void)arg;
	if (!c->logged_out)
		conn_close(c, "initiator did not log out as the Async Message asked");
}

/*
 * Sends Async Message AsyncEvent 1: please log out (RFC 7143 11.9.1); the
 * initiator must do so within Parameter3 seconds, after which the target
 * drops the connection.
 */
void async_send_logout_request(struct conn *c, uint16_t wait_s)
{
	struct txpdu *pdu = txpdu_new(ISCSI_OP_ASYNC);

	if (!pdu)
		return;
	iscsi_log(c->portal, LOG_INFO, c, "fault: asking the initiator to log out within %us",
		  wait_s);
	pdu->hdr[1] = ISCSI_FLAG_FINAL;
	fl_put_be32(pdu->hdr + BHS_ITT, ISCSI_RSVD_TAG);
	fl_put_be32(pdu->hdr + BHS_STATSN, c->stat_sn++);
	pdu->hdr[36] = ISCSI_ASYNC_LOGOUT_REQUEST;
	pdu->hdr[37] = 0;
	fl_put_be16(pdu->hdr + 38, 0);
	fl_put_be16(pdu->hdr + 40, 0);
	fl_put_be16(pdu->hdr + 42, wait_s);
	conn_send(c, pdu, FL_PDU_ASYNC, NULL, 0, 0);
	if (wait_s)
		timer_add(c->portal, NULL, c, (uint64_t)wait_s * 1000000000u, logout_deadline, NULL,
			  NULL);
}
