/* SPDX-License-Identifier: MIT */
/*
 * session.c - what reaches a session: its inbound PDUs (login-phase
 * routing, full feature phase dispatch and sequencing) and the completions of
 * its commands and TMFs (session_drain).
 *
 * RFC 7143 4.2.2.1 (CmdSN / ExpCmdSN / MaxCmdSN: non-immediate commands are
 * numbered; a command outside the window is silently ignored; immediate
 * commands do not advance ExpCmdSN), 11.10 / 11.11 and Appendix C (Text
 * Request / Response, SendTargets), 11.14 / 11.15 (Logout Request /
 * Response), 11.17 (Reject of what we do not support: SNACK at
 * ErrorRecoveryLevel 0, unknown opcodes, non-text PDUs in a discovery
 * session). Transport faults of the scenario on inbound PDUs (drop / delay /
 * close) are applied here through fl_engine_pdu, so every handler sees only
 * what survives; those on outbound PDUs in tx.c (conn_send). conn.c calls in;
 * the handlers (login.c, scsi.c, tmf.c, nop.c) and nexus.c are below.
 */
#include "iscsi_internal.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

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

/* The scenario's transport rules on a Login Request: pass, drop or close. */
static void session_login_verdict(struct conn *c, struct fl_xport_verdict *v)
{
	struct fl_pdu_info info;

	memset(v, 0, sizeof(*v));
	pdu_info(c, FL_PDU_LOGIN_REQ, NULL, &info);
	be_pdu(c->portal, &info, v);
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
	conn_pause_reading(c, false);
	session_handle(c, d->bhs, d->buf, d->ahs_len, d->buf + d->ahs_len, d->dlen);
	free(d);
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
	else if (reason == ISCSI_LOGOUT_CLOSE_CONNECTION && fl_get_be16(bhs + 20) != c->cid)
		resp = ISCSI_LOGOUT_RSP_CID_NOT_FOUND;
	else if (reason > ISCSI_LOGOUT_REMOVE_FOR_RECOVERY) {
		txpdu_free(t);
		conn_send_reject(c, bhs, ISCSI_REJECT_INVALID_PDU_FIELD);
		return 0;
	}
	t->hdr[1] = ISCSI_FLAG_FINAL;
	t->hdr[2] = resp;
	memcpy(t->hdr + BHS_ITT, bhs + BHS_ITT, 4);
	fl_put_be32(t->hdr + BHS_STATSN, c->stat_sn++);
	fl_put_be16(t->hdr + 40, 0); /* Time2Wait */
	fl_put_be16(t->hdr + 42, 0); /* Time2Retain */
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
	fl_put_be32(t->hdr + BHS_STATSN, c->stat_sn++);
	if (cont) {
		/* More text follows: an empty answer with a TTT asks for it. */
		fl_put_be32(t->hdr + BHS_TTT, ++c->portal->next_ttt & 0x7fffffff);
		conn_send(c, t, FL_PDU_TEXT_RESP, NULL, 0, 0);
		return 0;
	}
	t->hdr[1] = ISCSI_FLAG_FINAL;
	fl_put_be32(t->hdr + BHS_TTT, ISCSI_RSVD_TAG);
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

/*
 * Hands the completion queue to the sessions until it is empty (the loop,
 * and a TMF before it is carried out): handling a completion may
 * queue another on this thread (a command released in CmdSN order), and the
 * loop's own thread does not kick the eventfd (need_kick in backend.c).
 */
void session_drain(struct portal *p)
{
	for (;;) {
		pthread_mutex_lock(&p->lock);
		struct task *tasks = p->done_head;
		struct tmf_req *tmfs = p->tmf_head;
		bool xport = p->xport_dirty;
		p->done_head = p->done_tail = NULL;
		p->tmf_head = p->tmf_tail = NULL;
		p->xport_dirty = false;
		p->kicked = false;
		pthread_mutex_unlock(&p->lock);
		if (!tasks && !tmfs && !xport)
			return;

		while (tasks) {
			struct task *t = tasks;
			tasks = t->done_next;
			t->done_next = NULL;
			scsi_task_completed(p, t);
		}
		while (tmfs) {
			struct tmf_req *r = tmfs;
			tmfs = r->done_next;
			r->done_next = NULL;
			tmf_completed(p, r);
		}
		if (xport)
			for (struct conn *c = p->conns, *n; c; c = n) {
				n = c->next;
				session_xport_refresh(c);
			}
	}
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
		/*
		 * Completions already queued happened before this TMF: deliver them
		 * first, so a task that has finished is not reported as aborted.
		 */
		if (tmf_function_supported(bhs)) {
			session_drain(c->portal);
			if (c->dead)
				return -1;
		}
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
			!(op == ISCSI_OP_NOP_OUT && fl_get_be32(bhs + BHS_ITT) == ISCSI_RSVD_TAG);

	if (numbered && !immediate) {
		uint32_t sn = fl_get_be32(bhs + BHS_CMDSN);
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
		t = task_find(c, fl_get_be32(bhs + BHS_ITT));
	pdu_info(c, pdu_kind(op), t, &info);
	if (op == ISCSI_OP_SCSI_CMD) {
		lun_decode(bhs + BHS_LUN, &info.lun_id);
		/* decoded by the engine only if a transport rule needs it */
		info.raw_cdb = bhs + BHS_CDB;
		info.raw_cdb_len = 16;
	} else if (op == ISCSI_OP_TMF_REQ) {
		lun_decode(bhs + BHS_LUN, &info.lun_id);
	} else if (op == ISCSI_OP_DATA_OUT) {
		info.data_sn = fl_get_be32(bhs + BHS_DATASN);
		info.buffer_offset = fl_get_be32(bhs + BHS_OFFSET);
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
	conn_pause_reading(c, true);
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
