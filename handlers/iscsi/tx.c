/* SPDX-License-Identifier: MIT */
/*
 * tx.c - what a PDU handler may do to its connection: queue a PDU, through
 * the scenario's transport rules, and mark the connection closing.
 *
 * Nothing here writes to a socket or frees a connection. A PDU queued here is
 * framed at once (sequence numbers, padding and digests: RFC 7143 11.2,
 * 4.2.2.1) and waits in the connection's transmit queue; conn.c writes it when
 * control comes back to it (after the PDU in hand, after the loop's timers and
 * completions: conns_settle). conn_close only records the first reason and
 * logs it; conn.c sends what was queued before the close and tears the
 * connection down at a safe point of the loop. A delay fault holds PDUs back
 * in a list of their own, in order, as a slow wire would. This file calls
 * nothing above it: the handlers (login.c, session.c, scsi.c, tmf.c, nop.c)
 * call it, and conn.c drains what it records.
 */
#include "iscsi_internal.h"

#include <string.h>

/* Bytes queued for a connection: its command buffers and its unsent PDUs. */
uint64_t conn_queued(const struct conn *c)
{
	return c->task_bytes + c->tx_bytes + c->held_bytes;
}

/*
 * Puts c on its portal's to-settle list, once until conns_settle takes it:
 * the loop so visits only the connections a handler touched, not all.
 */
void conn_mark(struct conn *c)
{
	if (c->to_settle)
		return;
	c->to_settle = true;
	c->settle_next = c->portal->to_settle;
	c->portal->to_settle = c;
}

/*
 * Marks a connection closing, once: the first reason is the one logged. The
 * loop tears it down later (conns_settle), so callers deep in a handler may
 * go on using c until they return; nothing queued after this is sent.
 */
void conn_close(struct conn *c, const char *why)
{
	if (c->dead)
		return;
	c->dead = true;
	conn_mark(c);
	iscsi_log(c->portal, why && !c->quiet_close ? LOG_ERR : LOG_INFO, c,
		  "closing connection: %s", why ? why : "done");
}

/* Stops or resumes the reading of c; the loop re-registers its events. */
void conn_pause_reading(struct conn *c, bool paused)
{
	c->rx_paused = paused;
	c->events_stale = true;
	conn_mark(c);
}

/*
 * Stamps the sequence numbers and digests and appends to the transmit queue;
 * conn.c writes it when control returns to it (a connection marked closing
 * takes nothing more).
 */
void conn_queue(struct conn *c, struct txpdu *t)
{
	if (c->dead) {
		txpdu_free(t);
		return;
	}
	fl_put_be24(t->hdr + BHS_DSL, t->dlen);
	fl_put_be32(t->hdr + BHS_EXPCMDSN, c->exp_cmd_sn);
	fl_put_be32(t->hdr + BHS_MAXCMDSN, conn_max_cmd_sn(c));
	memset(t->trailer, 0, sizeof(t->trailer));
	t->trailer_len = iscsi_pad4(t->dlen);
	t->has_hdig = c->tx_hdigest;
	if (t->has_hdig)
		iscsi_put_digest(t->hdig, iscsi_crc32c(t->hdr, ISCSI_BHS_LEN));
	if (c->tx_ddigest && t->dlen) {
		uint32_t crc = iscsi_crc32c_update(0xffffffffu, t->data, t->dlen);
		crc = ~iscsi_crc32c_update(crc, t->trailer, t->trailer_len);
		iscsi_put_digest(t->trailer + t->trailer_len, crc);
		t->trailer_len += ISCSI_DIGEST_LEN;
	}
	t->total = ISCSI_BHS_LEN + (t->has_hdig ? ISCSI_DIGEST_LEN : 0) + t->dlen + t->trailer_len;
	t->framed = true;
	if (c->portal->opts.verbose >= LOG_DEBUG)
		pdu_log(c, "tx", t->hdr, t->dlen);
	if (c->tx_tail)
		c->tx_tail->next = t;
	else
		c->tx_head = t;
	c->tx_tail = t;
	conn_mem(c, &c->tx_bytes, (int64_t)t->total);
	c->tx_fresh = true;
	conn_mark(c);
}

/* Timer: the hold on outbound PDUs ends; they go out in their order. */
static void tx_hold_fire(struct portal *p, struct conn *c, void *arg)
{
	(void)p;
	(void)arg;
	c->tx_hold_until = 0;
	while (c->held_head && !c->dead) {
		struct txpdu *t = c->held_head;
		c->held_head = t->next;
		if (!c->held_head)
			c->held_tail = NULL;
		t->next = NULL;
		conn_mem(c, &c->held_bytes, -(int64_t)(ISCSI_BHS_LEN + t->dlen));
		conn_queue(c, t);
	}
}

/* Appends a PDU to the held-back list (kept in order, like a slow wire). */
static void tx_hold(struct conn *c, struct txpdu *t)
{
	t->next = NULL;
	if (c->held_tail)
		c->held_tail->next = t;
	else
		c->held_head = t;
	c->held_tail = t;
	conn_mem(c, &c->held_bytes, (int64_t)(ISCSI_BHS_LEN + t->dlen));
}

/*
 * Holds t back behind a delay fault: it and every later PDU (TCP keeps order)
 * go out when the hold ends, at until_ns or later if already held longer.
 */
static void conn_hold(struct conn *c, struct txpdu *t, uint64_t until_ns)
{
	tx_hold(c, t);
	if (until_ns > c->tx_hold_until) {
		uint64_t now = fl_mono_ns();

		c->tx_hold_until = until_ns;
		timer_add(c->portal, &c->tx_hold_timer, c, until_ns > now ? until_ns - now : 0,
			  tx_hold_fire, NULL, NULL);
	}
}

/*
 * Sends a target PDU through the scenario's transport rules: it may be
 * dropped, delayed or replaced by closing the connection. A discovery
 * session's PDUs pass untouched; a normal session's from its first Login
 * Response on.
 */
void conn_send(struct conn *c, struct txpdu *t, enum fl_pdu_kind kind, const struct task *task,
	       uint32_t data_sn, uint32_t offset)
{
	struct fl_xport_verdict v = {0};
	struct fl_pdu_info info;

	if ((c->logged_in || kind == FL_PDU_LOGIN_RESP) && !c->discovery) {
		pdu_info(c, kind, task, &info);
		info.data_sn = data_sn;
		info.buffer_offset = offset;
		be_pdu(c->portal, &info, &v);
	}
	switch (v.action) {
	case FL_XPORT_DROP:
		iscsi_log(c->portal, LOG_INFO, c, "fault%s%s: dropping outbound opcode 0x%02x",
			  v.rule ? " " : "", v.rule ? v.rule : "", t->hdr[0]);
		txpdu_free(t);
		return;
	case FL_XPORT_DELAY:
		/*
		 * A delay holds this PDU and every later one (TCP keeps order):
		 * the hold ends delay_us from now, or later if already longer.
		 */
		conn_hold(c, t, fl_mono_ns() + (uint64_t)v.delay_us * 1000);
		return;
	case FL_XPORT_CLOSE:
		txpdu_free(t);
		conn_close(c, "fault: connection closed by the scenario");
		return;
	default:
		if (c->held_head)
			tx_hold(c, t); /* behind a delayed PDU */
		else
			conn_queue(c, t);
	}
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
	fl_put_be32(t->hdr + BHS_ITT, ISCSI_RSVD_TAG);
	fl_put_be32(t->hdr + BHS_STATSN, c->stat_sn++);
	txpdu_set_data(t, bhs, ISCSI_BHS_LEN, true);
	conn_queue(c, t);
}
