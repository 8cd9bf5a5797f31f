/* SPDX-License-Identifier: MIT */
/*
 * pdu.c - iSCSI PDU framing on a non-blocking TCP connection.
 *
 * RFC 7143 11.2: a PDU is a 48-byte BHS, optional AHS, optional header digest,
 * a data segment padded to 4 bytes, optional data digest. Receive is a small
 * state machine (header, then body) that never blocks and caps the data
 * segment at the MaxRecvDataSegmentLength we declared (13.12), so a hostile
 * peer cannot make us allocate more. Transmit is a queue of framed PDUs
 * written with writev; digests (13.1, Appendix B) are computed when a PDU is
 * queued. Reject PDUs (11.17) carry the offending BHS. At verbosity 2
 * (`faultlun serve -vv`) every PDU received and sent is logged, decoded.
 */
#include "iscsi_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Bytes of padding after a data segment of len bytes. */
static inline uint32_t pad4(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

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
static void pdu_log(struct conn *c, const char *dir, const uint8_t *bhs, uint32_t dlen)
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

/* Stamps the sequence numbers and digests and appends to the transmit queue. */
void conn_queue(struct conn *c, struct txpdu *t)
{
	if (c->dead) {
		txpdu_free(t);
		return;
	}
	put_be24(t->hdr + BHS_DSL, t->dlen);
	put_be32(t->hdr + BHS_EXPCMDSN, c->exp_cmd_sn);
	put_be32(t->hdr + BHS_MAXCMDSN, conn_max_cmd_sn(c));
	memset(t->trailer, 0, sizeof(t->trailer));
	t->trailer_len = pad4(t->dlen);
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
	/* Try at once: most responses fit the socket buffer. */
	conn_on_writable(c);
}

/* Builds up to max iovecs for the unsent part of t; returns the count. */
static int pdu_iov(struct txpdu *t, struct iovec *iov, int max)
{
	struct iovec parts[4];
	int np = 0, n = 0;
	size_t skip = t->sent;

	parts[np++] = (struct iovec){t->hdr, ISCSI_BHS_LEN};
	if (t->has_hdig)
		parts[np++] = (struct iovec){t->hdig, ISCSI_DIGEST_LEN};
	if (t->dlen)
		parts[np++] = (struct iovec){(void *)t->data, t->dlen};
	if (t->trailer_len)
		parts[np++] = (struct iovec){t->trailer, t->trailer_len};
	for (int i = 0; i < np && n < max; i++) {
		if (skip >= parts[i].iov_len) {
			skip -= parts[i].iov_len;
			continue;
		}
		iov[n].iov_base = (uint8_t *)parts[i].iov_base + skip;
		iov[n].iov_len = parts[i].iov_len - skip;
		skip = 0;
		n++;
	}
	return n;
}

/* Writes as much of the transmit queue as the socket takes. */
int conn_on_writable(struct conn *c)
{
	while (c->tx_head && !c->dead) {
		struct iovec iov[64];
		int n = 0;
		for (struct txpdu *t = c->tx_head; t && n < 60; t = t->next)
			n += pdu_iov(t, iov + n, 64 - n);
		ssize_t w = writev(c->fd, iov, n);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			conn_close(c, errno == EPIPE || errno == ECONNRESET ? "peer went away"
									    : "write failed");
			return -1;
		}
		size_t left = (size_t)w;
		while (left && c->tx_head) {
			struct txpdu *t = c->tx_head;
			size_t rem = t->total - t->sent;
			if (left < rem) {
				t->sent += left;
				conn_mem(c, &c->tx_bytes, -(int64_t)left);
				left = 0;
				break;
			}
			left -= rem;
			conn_mem(c, &c->tx_bytes, -(int64_t)rem);
			c->tx_head = t->next;
			if (!c->tx_head)
				c->tx_tail = NULL;
			bool close_after = t->close_after;
			txpdu_free(t);
			if (close_after) {
				c->quiet_close = true;
				conn_close(c, NULL);
				return -1;
			}
		}
	}
	if (!c->dead)
		conn_update_events(c);
	return c->dead ? -1 : 0;
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

/* Routes one complete PDU. */
static int pdu_dispatch(struct conn *c)
{
	uint32_t dlen = c->rx_dsl;
	const uint8_t *ahs = c->rx_buf;
	/* rx_buf is NULL for a PDU with no AHS and no data: no offset from it then. */
	const uint8_t *data =
		c->rx_buf ? c->rx_buf + c->rx_ahs + (c->rx_hdigest ? ISCSI_DIGEST_LEN : 0) : NULL;
	uint8_t op = c->bhs[0] & ISCSI_OPCODE_MASK;

	if (c->portal->opts.verbose >= LOG_DEBUG)
		pdu_log(c, "rx", c->bhs, dlen);
	if (c->state == CONN_CLOSING)
		return 0;
	if (c->state == CONN_LOGIN) {
		if (op != ISCSI_OP_LOGIN_REQ) {
			conn_close(c, "non-login PDU during login phase");
			return -1;
		}
		/*
		 * A port that answers nothing answers no login either: a
		 * login_request rule drops it (the initiator's login times
		 * out) or closes the connection (delay is not applied here).
		 */
		struct fl_xport_verdict v;
		session_login_verdict(c, &v);
		if (v.action == FL_XPORT_DROP) {
			iscsi_log(c->portal, LOG_INFO, c, "fault%s%s: dropping a login request",
				  v.rule ? " " : "", v.rule ? v.rule : "");
			return 0;
		}
		if (v.action == FL_XPORT_CLOSE) {
			conn_close(c, "fault: login refused by the scenario");
			return -1;
		}
		return login_handle(c, c->bhs, data, dlen);
	}
	return session_dispatch(c, c->bhs, ahs, c->rx_ahs, data, dlen);
}

/* Reads PDUs until the socket would block (or a fairness budget runs out). */
int conn_on_readable(struct conn *c)
{
	int budget = 64;

	while (!c->dead && budget > 0 && c->state != CONN_CLOSING && !c->rx_paused) {
		ssize_t n;
		/* between PDUs: over its memory budget, the connection is not read on */
		if (!c->rx_in_body && !c->rx_have && conn_read_blocked(c))
			break;
		if (!c->rx_in_body) {
			n = read(c->fd, c->bhs + c->rx_have, ISCSI_BHS_LEN - c->rx_have);
		} else {
			n = read(c->fd, c->rx_buf + c->rx_have, c->rx_need - c->rx_have);
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			conn_close(c, "read failed");
			return -1;
		}
		if (n == 0) {
			if (c->rx_have || c->rx_in_body) {
				conn_close(c, "peer closed in the middle of a PDU");
			} else {
				c->quiet_close = true;
				conn_close(c, c->logged_out ? NULL : "peer closed the connection");
			}
			return -1;
		}
		if (!c->rx_start_ns)
			c->rx_start_ns = iscsi_now_ns();
		c->rx_have += (size_t)n;
		if (!c->rx_in_body) {
			if (c->rx_have < ISCSI_BHS_LEN)
				continue;
			c->rx_ahs = (uint32_t)c->bhs[BHS_TOTAL_AHS] * 4;
			c->rx_dsl = get_be24(c->bhs + BHS_DSL);
			if (c->rx_dsl > ISCSI_OUR_MAX_RECV_DSL) {
				char why[96];
				snprintf(why, sizeof(why),
					 "malformed PDU: DataSegmentLength %u above our limit %u",
					 c->rx_dsl, ISCSI_OUR_MAX_RECV_DSL);
				conn_close(c, why);
				return -1;
			}
			c->rx_need = c->rx_ahs + (c->rx_hdigest ? ISCSI_DIGEST_LEN : 0) +
				     c->rx_dsl + pad4(c->rx_dsl) +
				     (c->rx_ddigest && c->rx_dsl ? ISCSI_DIGEST_LEN : 0);
			if (c->rx_need > c->rx_cap) {
				uint8_t *b = realloc(c->rx_buf, c->rx_need);
				if (!b) {
					conn_close(c, "out of memory");
					return -1;
				}
				c->rx_buf = b;
				c->rx_cap = c->rx_need;
			}
			c->rx_in_body = true;
			c->rx_have = 0;
			if (c->rx_need)
				continue;
		} else if (c->rx_have < c->rx_need) {
			continue;
		}
		/* A whole PDU: check digests, then dispatch. */
		if (c->rx_hdigest) {
			uint32_t crc = iscsi_crc32c_update(0xffffffffu, c->bhs, ISCSI_BHS_LEN);
			crc = ~iscsi_crc32c_update(crc, c->rx_buf, c->rx_ahs);
			if (crc != iscsi_get_digest(c->rx_buf + c->rx_ahs)) {
				conn_close(c, "header digest error");
				return -1;
			}
		}
		if (c->rx_ddigest && c->rx_dsl) {
			size_t off = c->rx_ahs + (c->rx_hdigest ? ISCSI_DIGEST_LEN : 0);
			size_t len = c->rx_dsl + pad4(c->rx_dsl);
			if (iscsi_crc32c(c->rx_buf + off, len) !=
			    iscsi_get_digest(c->rx_buf + off + len)) {
				/* ERL 0: a lost data segment cannot be recovered (RFC 7143 7.8). */
				conn_send_reject(c, c->bhs, ISCSI_REJECT_DATA_DIGEST);
				conn_close(c, "data digest error");
				return -1;
			}
		}
		c->rx_in_body = false;
		c->rx_have = 0;
		c->rx_start_ns = 0;
		c->last_rx_ns = iscsi_now_ns();
		budget--;
		if (pdu_dispatch(c) < 0 || c->dead)
			return -1;
	}
	if (!c->dead)
		conn_update_events(c);
	return c->dead ? -1 : 0;
}
