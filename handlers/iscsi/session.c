/* SPDX-License-Identifier: MIT */
/*
 * session.c - a session's inbound PDUs: login-phase routing, full feature
 * phase dispatch and sequencing.
 *
 * RFC 7143 4.2.2.1 (CmdSN / ExpCmdSN / MaxCmdSN: non-immediate commands are
 * numbered; a command outside the window is silently ignored; immediate
 * commands do not advance ExpCmdSN), 4.4.3 (session reinstatement), 11.10 /
 * 11.11 and Appendix C (Text Request / Response, SendTargets), 11.14 / 11.15
 * (Logout Request / Response), 11.17 (Reject of what we do not support: SNACK
 * at ErrorRecoveryLevel 0, unknown opcodes, non-text PDUs in a discovery
 * session), SAM-5 4.6.4 (single-level LUN structure). Transport faults of the
 * scenario (drop / delay / close on an inbound or outbound PDU) are applied
 * here through fl_engine_pdu, so every handler sees only what survives.
 */
#include "iscsi_internal.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

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

/* A new TSIH, never 0 and not in use (RFC 7143 11.12.6). */
uint16_t session_alloc_tsih(struct portal *p)
{
	for (;;) {
		uint16_t t = p->next_tsih++;
		if (!t)
			continue;
		if (!session_find_tsih(p, t))
			return t;
	}
}

/* The live session with this TSIH, or NULL. */
struct conn *session_find_tsih(struct portal *p, uint16_t tsih)
{
	for (struct conn *c = p->conns; c; c = c->next)
		if (!c->dead && c->logged_in && c->tsih == tsih)
			return c;
	return NULL;
}

/* Closes an older session with the same initiator port (RFC 7143 4.4.3). */
void session_reinstate(struct conn *c)
{
	for (struct conn *x = c->portal->conns; x; x = x->next) {
		if (x == c || x->dead || !x->logged_in || x->discovery)
			continue;
		if (!strcasecmp(x->initiator_name, c->initiator_name) &&
		    !memcmp(x->isid, c->isid, 6)) {
			conn_close(x, "session reinstated by a new login with the same ISID");
			/* The old nexus ends now, before the new login is announced. */
			session_end(x, false);
		}
	}
}

/* Enters the full feature phase. */
void session_start(struct conn *c)
{
	c->logged_in = true;
	if (c->discovery)
		return;
	/*
	 * SAM-5 r21 4.6.4: an I_T nexus is an initiator port and a target port;
	 * one initiator port logged in through two portals makes two nexuses.
	 */
	const char *iport = c->initiator_port ? c->initiator_port : "";
	size_t len = strlen(iport) + sizeof(",t,0xffff");
	free(c->nexus_key);
	c->nexus_key = malloc(len);
	if (c->nexus_key) {
		/* the whole name: a key cut short could join two ports in one nexus */
		if (c->rel_port_id > 1)
			snprintf(c->nexus_key, len, "%s,t,0x%x", iport, c->rel_port_id);
		else
			snprintf(c->nexus_key, len, "%s", iport);
		c->nexus_id = portal_nexus_id(c->portal, c->nexus_key);
	} else {
		c->nexus_id = ++c->portal->next_nexus; /* out of memory: a nexus of its own */
	}
	be_conn_event(c->portal, c, FL_CONN_LOGIN);
	session_xport_refresh(c);
}

/* Leaves it (logout or connection loss). */
void session_end(struct conn *c, bool logout)
{
	if (!c->logged_in || c->discovery)
		return;
	c->logged_in = false;
	be_conn_event(c->portal, c, logout ? FL_CONN_LOGOUT : FL_CONN_CLOSED);
}

/*
 * Releases what the session of a connection being torn down holds: its tasks
 * are orphaned (the engine may still have them), its TMFs still at the engine
 * become orphans freed when answered, and its login state is freed.
 */
void session_release(struct conn *c)
{
	conn_drop_tasks(c);
	for (struct tmf_req *r = c->tmfs; r; r = r->conn_next)
		r->conn = NULL;
	c->tmfs = NULL;
	login_free(c->login);
	c->login = NULL;
}

/* Re-reads the standing transport conditions of this session. */
void session_xport_refresh(struct conn *c)
{
	struct fl_xport_state xs;

	if (c->dead || !c->logged_in || c->discovery)
		return;
	be_xport_state(c->portal, c, &xs);
	bool was_stalled = c->xs.stall_max_cmd_sn;
	uint32_t old_nop = c->xs.nop_in_interval_ms;
	c->xs = xs;
	if (xs.stall_max_cmd_sn && !was_stalled) {
		iscsi_log(c->portal, LOG_INFO, c, "fault: MaxCmdSN stalled");
		nop_send_unsolicited(c, false); /* tells the initiator the window closed */
	}
	if (was_stalled && !xs.stall_max_cmd_sn)
		nop_send_unsolicited(c, false); /* carries the reopened window */
	if (xs.request_logout && !c->logout_req_sent) {
		c->logout_req_sent = true;
		async_send_logout_request(c, xs.logout_wait_s);
	}
	if (old_nop != xs.nop_in_interval_ms)
		nop_timer_arm(c);
}

/* Fills the engine's view of a PDU. */
static void pdu_info(struct conn *c, enum fl_pdu_kind kind, const struct task *t,
		     struct fl_pdu_info *info)
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

/* The scenario's transport rules on a Login Request: pass, drop or close. */
static void session_login_verdict(struct conn *c, struct fl_xport_verdict *v)
{
	struct fl_pdu_info info;

	memset(v, 0, sizeof(*v));
	pdu_info(c, FL_PDU_LOGIN_REQ, NULL, &info);
	be_pdu(c->portal, &info, v);
}

/*
 * Sends a target PDU through the scenario's transport rules: it may be
 * dropped, delayed or replaced by closing the connection.
 */
void conn_send(struct conn *c, struct txpdu *t, enum fl_pdu_kind kind, const struct task *task,
	       uint32_t data_sn, uint32_t offset)
{
	struct fl_xport_verdict v = {0};
	struct fl_pdu_info info;

	if (c->logged_in && !c->discovery) {
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
	case FL_XPORT_DELAY: {
		/*
		 * A delay holds this PDU and every later one (TCP keeps order):
		 * the hold ends delay_us from now, or later if already longer.
		 */
		conn_hold(c, t, fl_mono_ns() + (uint64_t)v.delay_us * 1000);
		return;
	}
	case FL_XPORT_CLOSE:
		txpdu_free(t);
		conn_close(c, "fault: connection closed by the scenario");
		return;
	default:
		conn_transmit(c, t);
	}
}

/* An inbound PDU held back by a delay fault. */
struct delayed_rx {
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t ahs_len, dlen;
	uint8_t buf[]; /* ahs then data */
};

/* Runs a PDU that passed sequencing and the transport rules (defined below). */
static int session_handle(struct conn *c, const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len,
			  const uint8_t *data, uint32_t dlen);

/* Timer: processes a PDU held back by a delay fault, then reads on. */
static void delayed_rx_fire(struct portal *p, struct conn *c, void *arg)
{
	struct delayed_rx *d = arg;
	(void)p;
	c->rx_paused = false;
	session_handle(c, d->bhs, d->buf, d->ahs_len, d->buf + d->ahs_len, d->dlen);
	free(d);
	if (!c->dead)
		conn_update_events(c);
}

/* Sends a Logout Response (RFC 7143 11.15). */
static int session_logout(struct conn *c, const uint8_t *bhs)
{
	uint8_t reason = bhs[1] & 0x7f;
	uint8_t resp = ISCSI_LOGOUT_RSP_OK;
	struct txpdu *t = txpdu_new(ISCSI_OP_LOGOUT_RESP);

	if (!t) {
		conn_close(c, "out of memory");
		return -1;
	}
	if (reason == ISCSI_LOGOUT_REMOVE_FOR_RECOVERY)
		resp = ISCSI_LOGOUT_RSP_RECOVERY_UNSUPPORTED;
	else if (reason == ISCSI_LOGOUT_CLOSE_CONNECTION && get_be16(bhs + 20) != c->cid)
		resp = ISCSI_LOGOUT_RSP_CID_NOT_FOUND;
	else if (reason > ISCSI_LOGOUT_REMOVE_FOR_RECOVERY) {
		txpdu_free(t);
		conn_send_reject(c, bhs, ISCSI_REJECT_INVALID_PDU_FIELD);
		return 0;
	}
	t->hdr[1] = ISCSI_FLAG_FINAL;
	t->hdr[2] = resp;
	memcpy(t->hdr + BHS_ITT, bhs + BHS_ITT, 4);
	put_be32(t->hdr + BHS_STATSN, c->stat_sn++);
	put_be16(t->hdr + 40, 0); /* Time2Wait */
	put_be16(t->hdr + 42, 0); /* Time2Retain */
	if (resp == ISCSI_LOGOUT_RSP_OK) {
		iscsi_log(c->portal, LOG_INFO, c, "logout (reason %u)", reason);
		t->close_after = true;
		c->logged_out = true;
		session_end(c, true);
		c->state = CONN_CLOSING;
	}
	conn_send(c, t, FL_PDU_LOGOUT_RESP, NULL, 0, 0);
	return 0;
}

/*
 * Appends "TargetName" and one "TargetAddress" per portal for SendTargets
 * (RFC 7143 Appendix C: "TargetAddress=domainname[:port][,portal-group-tag]",
 * repeated for a target reachable through several portals). The portal the
 * request came through is named by the address the initiator reached; a
 * portal bound to a wildcard address likewise.
 */
static void send_targets(struct conn *c, const char *what, struct kvlist *resp)
{
	struct portal *p = c->portal;

	if (strcmp(what, "All") && strcasecmp(what, p->opts.iqn) &&
	    !(what[0] == 0 && !c->discovery))
		return;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "", addr[128];
	ss.ss_family = AF_INET;
	if (!getsockname(c->fd, (struct sockaddr *)&ss, &sl))
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), NULL, 0,
			    NI_NUMERICHOST);
	kv_add(resp, "TargetName", p->opts.iqn);
	for (unsigned i = 0; i < p->nls; i++) {
		const struct listener *l = &p->ls[i];
		bool here = l == c->lsn || !strcmp(l->addr, "0.0.0.0") || !strcmp(l->addr, "[::]");

		if (here && ss.ss_family == AF_INET6)
			snprintf(addr, sizeof(addr), "[%s]:%u,%u", host, l->port, l->tpgt);
		else if (here)
			snprintf(addr, sizeof(addr), "%s:%u,%u", host, l->port, l->tpgt);
		else
			snprintf(addr, sizeof(addr), "%s:%u,%u", l->addr, l->port, l->tpgt);
		kv_add(resp, "TargetAddress", addr);
	}
}

/* Handles a Text Request (RFC 7143 11.10): SendTargets, else NotUnderstood. */
int session_text(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen)
{
	bool cont = bhs[1] & ISCSI_TEXT_CONTINUE;
	struct kvlist kv = {0}, resp = {0};
	struct txpdu *t;

	if (c->text_len + dlen > ISCSI_LOGIN_TEXT_MAX) {
		conn_close(c, "text request too long");
		return -1;
	}
	if (dlen) {
		uint8_t *b = realloc(c->text, c->text_len + dlen);
		if (!b) {
			conn_close(c, "out of memory");
			return -1;
		}
		memcpy(b + c->text_len, data, dlen);
		c->text = b;
		c->text_len += dlen;
	}
	t = txpdu_new(ISCSI_OP_TEXT_RESP);
	if (!t) {
		conn_close(c, "out of memory");
		return -1;
	}
	memcpy(t->hdr + BHS_ITT, bhs + BHS_ITT, 4);
	memcpy(t->hdr + BHS_LUN, bhs + BHS_LUN, 8);
	put_be32(t->hdr + BHS_STATSN, c->stat_sn++);
	if (cont) {
		/* More text follows: an empty answer with a TTT asks for it. */
		put_be32(t->hdr + BHS_TTT, ++c->portal->next_ttt & 0x7fffffff);
		conn_send(c, t, FL_PDU_TEXT_RESP, NULL, 0, 0);
		return 0;
	}
	t->hdr[1] = ISCSI_FLAG_FINAL;
	put_be32(t->hdr + BHS_TTT, ISCSI_RSVD_TAG);
	if (kv_parse(c->text, c->text_len, &kv)) {
		txpdu_free(t);
		conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		goto out;
	}
	for (size_t i = 0; i < kv.n; i++) {
		if (!strcmp(kv.v[i].key, "SendTargets"))
			send_targets(c, kv.v[i].value, &resp);
		else
			kv_add(&resp, kv.v[i].key, "NotUnderstood");
	}
	uint32_t len = 0;
	uint8_t *out = kv_serialize(&resp, &len);
	if (out && len > c->p.max_recv_dsl) {
		len = 0; /* never exceeds one PDU with one target; stay safe */
	}
	t->owned = out;
	t->data = out;
	t->dlen = len;
	conn_send(c, t, FL_PDU_TEXT_RESP, NULL, 0, 0);
out:
	free(c->text);
	c->text = NULL;
	c->text_len = 0;
	kv_free(&kv);
	kv_free(&resp);
	return 0;
}

/* Runs a PDU that passed sequencing and the transport rules. */
static int session_handle(struct conn *c, const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len,
			  const uint8_t *data, uint32_t dlen)
{
	switch (bhs[0] & ISCSI_OPCODE_MASK) {
	case ISCSI_OP_SCSI_CMD:
		return scsi_cmd(c, bhs, ahs, ahs_len, data, dlen);
	case ISCSI_OP_DATA_OUT:
		return scsi_data_out(c, bhs, data, dlen);
	case ISCSI_OP_TMF_REQ:
		return tmf_request(c, bhs);
	case ISCSI_OP_NOP_OUT:
		return nop_out(c, bhs, data, dlen);
	case ISCSI_OP_TEXT_REQ:
		return session_text(c, bhs, data, dlen);
	case ISCSI_OP_LOGOUT_REQ:
		return session_logout(c, bhs);
	}
	return 0;
}

/* Maps an initiator opcode to the engine's PDU kind. */
static enum fl_pdu_kind pdu_kind(uint8_t op)
{
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		return FL_PDU_SCSI_CMD;
	case ISCSI_OP_DATA_OUT:
		return FL_PDU_DATA_OUT;
	case ISCSI_OP_TMF_REQ:
		return FL_PDU_TMF_REQ;
	case ISCSI_OP_TEXT_REQ:
		return FL_PDU_TEXT_REQ;
	case ISCSI_OP_LOGOUT_REQ:
		return FL_PDU_LOGOUT_REQ;
	case ISCSI_OP_SNACK:
		return FL_PDU_SNACK;
	default:
		return FL_PDU_NOP_OUT;
	}
}

/* Refuses what a full feature phase does not take here (sends a Reject); true to go on. */
static bool session_opcode_allowed(struct conn *c, const uint8_t *bhs)
{
	switch (bhs[0] & ISCSI_OPCODE_MASK) {
	case ISCSI_OP_SCSI_CMD:
	case ISCSI_OP_TMF_REQ:
	case ISCSI_OP_DATA_OUT:
		if (c->discovery) {
			/* RFC 7143 4.3: only text and logout in a discovery session. */
			conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
			return false;
		}
		return true;
	case ISCSI_OP_NOP_OUT:
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_LOGOUT_REQ:
		return true;
	case ISCSI_OP_SNACK:
		/* RFC 7143 11.16: no SNACK support at ErrorRecoveryLevel 0. */
		conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return false;
	case ISCSI_OP_LOGIN_REQ:
		conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return false;
	default:
		conn_send_reject(c, bhs, ISCSI_REJECT_CMD_NOT_SUPPORTED);
		return false;
	}
}

/* CmdSN sequencing (RFC 7143 4.2.2.1): false for a command outside the window (ignored). */
static bool session_cmd_sn_accept(struct conn *c, const uint8_t *bhs)
{
	uint8_t op = bhs[0] & ISCSI_OPCODE_MASK;
	bool immediate = bhs[0] & ISCSI_FLAG_IMMEDIATE;
	/* Data-Out and NOP replies carry none. */
	bool numbered = op != ISCSI_OP_DATA_OUT &&
			!(op == ISCSI_OP_NOP_OUT && get_be32(bhs + BHS_ITT) == ISCSI_RSVD_TAG);

	if (numbered && !immediate) {
		uint32_t sn = get_be32(bhs + BHS_CMDSN);
		uint32_t max = conn_max_cmd_sn(c);
		if (sn != c->exp_cmd_sn || sn_cmp(sn, max) > 0) {
			iscsi_log(c->portal, LOG_INFO, c,
				  "CmdSN %u outside the window [%u, %u]: ignored", sn,
				  c->exp_cmd_sn, max);
			return false;
		}
		c->exp_cmd_sn++;
	}
	return true;
}

/* The scenario's transport verdict on an inbound PDU (none in a discovery session). */
static void session_inbound_verdict(struct conn *c, const uint8_t *bhs, struct fl_xport_verdict *v)
{
	uint8_t op = bhs[0] & ISCSI_OPCODE_MASK;
	struct fl_pdu_info info;
	const struct task *t = NULL;

	if (c->discovery)
		return;
	if (op == ISCSI_OP_DATA_OUT)
		t = task_find(c, get_be32(bhs + BHS_ITT));
	pdu_info(c, pdu_kind(op), t, &info);
	if (op == ISCSI_OP_SCSI_CMD) {
		lun_decode(bhs + BHS_LUN, &info.lun_id);
		/* decoded by the engine only if a transport rule needs it */
		info.raw_cdb = bhs + BHS_CDB;
		info.raw_cdb_len = 16;
	} else if (op == ISCSI_OP_TMF_REQ) {
		lun_decode(bhs + BHS_LUN, &info.lun_id);
	} else if (op == ISCSI_OP_DATA_OUT) {
		info.data_sn = get_be32(bhs + BHS_DATASN);
		info.buffer_offset = get_be32(bhs + BHS_OFFSET);
	}
	be_pdu(c->portal, &info, v);
}

/* Holds an inbound PDU for delay_us and stops reading until it has run. */
static int session_delay_inbound(struct conn *c, const uint8_t *bhs, const uint8_t *ahs,
				 uint32_t ahs_len, const uint8_t *data, uint32_t dlen,
				 uint32_t delay_us)
{
	struct delayed_rx *d = malloc(sizeof(*d) + ahs_len + dlen);
	if (!d) {
		conn_close(c, "out of memory");
		return -1;
	}
	memcpy(d->bhs, bhs, ISCSI_BHS_LEN);
	memcpy(d->buf, ahs, ahs_len);
	memcpy(d->buf + ahs_len, data, dlen);
	d->ahs_len = ahs_len;
	d->dlen = dlen;
	/* Later PDUs wait behind this one: stop reading until it is processed. */
	if (!timer_add(c->portal, NULL, c, (uint64_t)delay_us * 1000, delayed_rx_fire, d, free)) {
		free(d);
		return 0;
	}
	c->rx_paused = true;
	conn_update_events(c);
	return 0;
}

/* Full feature phase entry point for every inbound PDU. */
static int session_dispatch(struct conn *c, const uint8_t *bhs, const uint8_t *ahs,
			    uint32_t ahs_len, const uint8_t *data, uint32_t dlen)
{
	uint8_t op = bhs[0] & ISCSI_OPCODE_MASK;

	if (!session_opcode_allowed(c, bhs) || !session_cmd_sn_accept(c, bhs))
		return 0;
	/* The scenario's transport rules on inbound PDUs. */
	struct fl_xport_verdict v = {0};
	session_inbound_verdict(c, bhs, &v);
	switch (v.action) {
	case FL_XPORT_DROP:
		iscsi_log(c->portal, LOG_INFO, c, "fault%s%s: dropping inbound opcode 0x%02x",
			  v.rule ? " " : "", v.rule ? v.rule : "", op);
		return 0;
	case FL_XPORT_CLOSE:
		conn_close(c, "fault: connection closed by the scenario");
		return -1;
	case FL_XPORT_DELAY:
		return session_delay_inbound(c, bhs, ahs, ahs_len, data, dlen, v.delay_us);
	default:
		return session_handle(c, bhs, ahs, ahs_len, data, dlen);
	}
}

/*
 * Routes one complete inbound PDU (conn.c): Login Requests in the login
 * phase, through the scenario's transport rules; else the full feature phase.
 */
int session_receive(struct conn *c, const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len,
		    const uint8_t *data, uint32_t dlen)
{
	uint8_t op = bhs[0] & ISCSI_OPCODE_MASK;

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
		return login_handle(c, bhs, data, dlen);
	}
	return session_dispatch(c, bhs, ahs, ahs_len, data, dlen);
}
