/* SPDX-License-Identifier: MIT */
/*
 * login.c - the iSCSI login phase of one connection.
 *
 * RFC 7143 6.3 (login phase: SecurityNegotiation, LoginOperationalNegotiation
 * and the move to FullFeaturePhase, the T and C bits, CSG/NSG), 11.12 / 11.13
 * (Login Request / Response PDUs, version 0x00, ISID and TSIH, status
 * classes: 02/01 authentication failure, 02/03 target not found, 02/05
 * unsupported version, 02/07 missing parameter, 02/0a session does not exist,
 * ...), 13.9 (TargetPortalGroupTag in the first response of a session) and
 * 4.4.3 (session reinstatement: a new session with the ISID and
 * InitiatorName of an existing one replaces it).
 */
#include "iscsi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Frees login-phase state. */
void login_free(struct login_state *l)
{
	if (!l)
		return;
	free(l->text);
	free(l);
}

/* Sends a Login Response; status != 0 ends the connection once it is sent. */
static void login_respond(struct conn *c, const uint8_t *req, uint8_t flags, uint16_t status,
			  const struct kvlist *keys)
{
	struct txpdu *t = txpdu_new(ISCSI_OP_LOGIN_RESP);

	if (!t) {
		conn_close(c, "out of memory");
		return;
	}
	t->hdr[1] = status ? 0 : flags;
	t->hdr[2] = 0x00; /* Version-max */
	t->hdr[3] = 0x00; /* Version-active */
	memcpy(t->hdr + 8, req + 8, 6);
	fl_put_be16(t->hdr + 14, status ? 0 : c->tsih);
	memcpy(t->hdr + BHS_ITT, req + BHS_ITT, 4);
	fl_put_be32(t->hdr + BHS_STATSN, c->stat_sn++);
	t->hdr[36] = status >> 8;
	t->hdr[37] = status & 0xff;
	if (keys && keys->n) {
		uint32_t len;
		uint8_t *data = kv_serialize(keys, &len);
		if (data) {
			t->owned = data;
			t->data = data;
			t->dlen = len;
		}
	}
	if (status) {
		t->close_after = true;
		c->state = CONN_CLOSING;
	}
	conn_send(c, t, FL_PDU_LOGIN_RESP, NULL, 0, 0);
}

/* Ends the login with a failure status and a log line. */
static int login_fail(struct conn *c, const uint8_t *req, uint16_t status, const char *why)
{
	iscsi_log(c->portal, LOG_ERR, c, "login failed (status %02x/%02x): %s", status >> 8,
		  status & 0xff, why);
	login_respond(c, req, 0, status, NULL);
	return 0;
}

/* True if the comma-separated list contains item. */
static bool in_list(const char *list, const char *item)
{
	size_t n = strlen(item);
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && !strncmp(p, item, n))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

/* Checks the keys only the first Login Request carries (RFC 7143 6.3, 13.4-13.6). */
static int login_first(struct conn *c, const uint8_t *req, const struct kvlist *kv)
{
	struct portal *p = c->portal;
	const char *iname = kv_get(kv, "InitiatorName");
	const char *stype = kv_get(kv, "SessionType");
	const char *tname = kv_get(kv, "TargetName");

	if (!iname || !*iname)
		return login_fail(c, req, ISCSI_LOGIN_MISSING_PARAMETER, "no InitiatorName"), -1;
	if (stype && strcmp(stype, "Normal") && strcmp(stype, "Discovery"))
		return login_fail(c, req, ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED,
				  "unknown SessionType"),
		       -1;
	c->discovery = stype && !strcmp(stype, "Discovery");
	if (!c->discovery) {
		if (!tname || !*tname)
			return login_fail(c, req, ISCSI_LOGIN_MISSING_PARAMETER,
					  "normal session without TargetName"),
			       -1;
		if (strcasecmp(tname, p->opts.iqn)) {
			char why[320];
			snprintf(why, sizeof(why), "unknown TargetName '%.256s'", tname);
			return login_fail(c, req, ISCSI_LOGIN_NOT_FOUND, why), -1;
		}
	}
	c->initiator_name = strdup(iname);
	c->target_name = strdup(tname ? tname : "");
	/* the whole name: two names alike in their first bytes are two ports */
	size_t plen = strlen(iname) + sizeof(",i,0x000000000000");
	c->initiator_port = malloc(plen);
	if (c->initiator_port)
		snprintf(c->initiator_port, plen, "%s,i,0x%02x%02x%02x%02x%02x%02x", iname,
			 c->isid[0], c->isid[1], c->isid[2], c->isid[3], c->isid[4], c->isid[5]);
	if (!c->initiator_name || !c->target_name || !c->initiator_port)
		return login_fail(c, req, ISCSI_LOGIN_OUT_OF_RESOURCES, "out of memory"), -1;
	if (c->tsih) {
		/* MaxConnections=1: there is no second connection to add. */
		if (!session_find_tsih(p, c->tsih))
			return login_fail(c, req, ISCSI_LOGIN_SESSION_NOT_EXIST,
					  "TSIH names no session"),
			       -1;
		return login_fail(c, req, ISCSI_LOGIN_TOO_MANY_CONNECTIONS, "MaxConnections is 1"),
		       -1;
	}
	return 0;
}

/* Handles AuthMethod and the CHAP keys of the security stage. */
static int login_security(struct conn *c, const uint8_t *req, const struct kvlist *kv,
			  struct kvlist *resp)
{
	struct login_state *l = c->login;
	struct portal *p = c->portal;
	bool chap_required = p->opts.chap_user != NULL;
	const char *am = kv_get(kv, "AuthMethod");

	if (am) {
		if (l->chap_step || l->auth_done)
			return login_fail(c, req, ISCSI_LOGIN_INITIATOR_ERROR,
					  "AuthMethod negotiated twice"),
			       -1;
		if (chap_required && in_list(am, "CHAP")) {
			kv_add(resp, "AuthMethod", "CHAP");
			l->chap_step = 1;
			l->chap_used = true;
		} else if (!chap_required && in_list(am, "None")) {
			kv_add(resp, "AuthMethod", "None");
			l->auth_done = true;
		} else {
			kv_add(resp, "AuthMethod", "Reject");
			return login_fail(c, req, ISCSI_LOGIN_AUTH_FAILED,
					  chap_required
					      ? "CHAP required, initiator does not offer it"
					      : "no acceptable AuthMethod offered"),
			       -1;
		}
	}
	if (l->chap_step == 1 || l->chap_step == 2) {
		bool done;
		int st = chap_step(c, kv, resp, &done);
		if (st)
			return login_fail(c, req, (uint16_t)st, "CHAP failed"), -1;
		if (done)
			l->auth_done = true;
	} else if (!am && !chap_required && !l->chap_step) {
		l->auth_done = true; /* no AuthMethod: None by default */
	}
	return 0;
}

/* Finishes the login: session parameters, TSIH, digests, full feature phase. */
static void login_complete(struct conn *c)
{
	struct login_state *l = c->login;

	c->p = l->p;
	c->authenticated = l->chap_used && l->auth_done;
	if (c->p.first_burst > c->p.max_burst)
		c->p.first_burst = c->p.max_burst;
	c->login = NULL;
	login_free(l);
	/* RFC 7143 11.13.4 / 13.1: digests start with the next PDU. */
	c->tx_hdigest = c->rx_hdigest = c->p.header_digest;
	c->tx_ddigest = c->rx_ddigest = c->p.data_digest;
	c->state = CONN_FULL;
	timer_cancel(c->portal, c->login_timer);
	session_start(c);
}

/*
 * Takes the connection's identity and sequence numbers from the first PDU of a login and
 * starts it in the security stage. Returns -1 when the login failed (answered), else 0.
 */
static int login_first_pdu(struct conn *c, const uint8_t *bhs)
{
	struct login_state *l = c->login;

	memcpy(c->isid, bhs + 8, 6);
	c->tsih = fl_get_be16(bhs + 14);
	c->cid = fl_get_be16(bhs + 20);
	c->exp_cmd_sn = fl_get_be32(bhs + BHS_CMDSN);
	c->max_cmd_sn = c->exp_cmd_sn + ISCSI_CMD_WINDOW - 1;
	c->stat_sn = fl_get_be32(bhs + BHS_EXPSTATSN);
	/* Every login starts in the security stage, even one that skips it. */
	l->stage = ISCSI_STAGE_SECURITY;
	l->itt = fl_get_be32(bhs + BHS_ITT);
	params_default(&l->p);
	/* RFC 7143 11.12.4: we speak version 0x00 only. */
	if (bhs[3] > 0x00) {
		login_fail(c, bhs, ISCSI_LOGIN_UNSUPPORTED_VERSION, "Version-min above 0");
		return -1;
	}
	return 0;
}

/*
 * Appends a PDU's login text to the text gathered so far, bounded by ISCSI_LOGIN_TEXT_MAX.
 * Returns -1 when the login failed (answered), else 0.
 */
static int login_gather(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen)
{
	struct login_state *l = c->login;

	if (l->text_len + dlen > ISCSI_LOGIN_TEXT_MAX) {
		login_fail(c, bhs, ISCSI_LOGIN_INITIATOR_ERROR, "login text too long");
		return -1;
	}
	uint8_t *b = realloc(l->text, l->text_len + dlen);
	if (!b) {
		login_fail(c, bhs, ISCSI_LOGIN_OUT_OF_RESOURCES, "out of memory");
		return -1;
	}
	memcpy(b + l->text_len, data, dlen);
	l->text = b;
	l->text_len += dlen;
	return 0;
}

/*
 * Checks the current and next stage of a Login Request (RFC 7143 11.12.3) and moves past a
 * skipped security stage when no authentication is required. Returns -1 when the login
 * failed (answered), else 0.
 */
static int login_stage(struct conn *c, const uint8_t *bhs, int csg, bool transit, int nsg)
{
	struct login_state *l = c->login;

	if (csg == 2 || csg == ISCSI_STAGE_FULL_FEATURE || csg < l->stage) {
		login_fail(c, bhs, ISCSI_LOGIN_INITIATOR_ERROR, "invalid login stage");
		return -1;
	}
	if (csg == ISCSI_STAGE_OPERATIONAL && l->stage == ISCSI_STAGE_SECURITY) {
		if (!l->auth_done && (c->portal->opts.chap_user || l->chap_step)) {
			login_fail(c, bhs, ISCSI_LOGIN_AUTH_FAILED,
				   "authentication required but skipped");
			return -1;
		}
		l->auth_done = true;
		l->stage = ISCSI_STAGE_OPERATIONAL;
	}
	if (transit && (nsg == 2 || nsg <= csg)) {
		login_fail(c, bhs, ISCSI_LOGIN_INITIATOR_ERROR, "invalid NSG");
		return -1;
	}
	return 0;
}

/*
 * Negotiates the operational keys of kv into resp (security keys are login_security's).
 * Returns -1 when the login failed (answered), else 0.
 */
static int login_keys(struct conn *c, const uint8_t *bhs, int csg, const struct kvlist *kv,
		      struct kvlist *resp)
{
	struct login_state *l = c->login;

	/* Security keys only in the security stage; the rest negotiated here. */
	for (size_t i = 0; i < kv->n; i++) {
		const char *k = kv->v[i].key;
		if (key_is_security(k)) {
			if (csg != ISCSI_STAGE_SECURITY) {
				login_fail(c, bhs, ISCSI_LOGIN_INITIATOR_ERROR,
					   "security key outside the security stage");
				return -1;
			}
			continue;
		}
		if (!strcmp(k, "InitiatorName") || !strcmp(k, "TargetName") ||
		    !strcmp(k, "SessionType"))
			continue;
		int st = negotiate_key(l, c->discovery, k, kv->v[i].value, resp);
		if (st) {
			char why[128];
			snprintf(why, sizeof(why), "key '%.63s' negotiated twice or bad", k);
			login_fail(c, bhs, (uint16_t)st, why);
			return -1;
		}
	}
	/* RFC 7143 13.14: FirstBurstLength must not exceed MaxBurstLength. */
	if (l->p.first_burst > l->p.max_burst) {
		l->p.first_burst = l->p.max_burst;
		for (size_t i = 0; i < resp->n; i++)
			if (!strcmp(resp->v[i].key, "FirstBurstLength")) {
				char v[16];
				snprintf(v, sizeof(v), "%u", l->p.first_burst);
				char *d = strdup(v);
				if (d) {
					free(resp->v[i].value);
					resp->v[i].value = d;
				}
			}
	}
	return 0;
}

/* Adds the keys the target declares once: its portal group tag and alias, its MaxRecvDSL. */
static void login_offer(struct conn *c, int csg, struct kvlist *resp)
{
	struct login_state *l = c->login;
	struct portal *p = c->portal;

	/* RFC 7143 13.9: the tag goes in the first response of a session. */
	if (!l->sent_tpgt) {
		char tag[8];

		snprintf(tag, sizeof(tag), "%u", c->tpgt ? c->tpgt : 1u);
		kv_add(resp, "TargetPortalGroupTag", tag);
		if (!c->discovery)
			kv_add(resp, "TargetAlias", p->opts.alias);
		l->sent_tpgt = true;
	}
	if (csg == ISCSI_STAGE_OPERATIONAL && !l->sent_mrdsl) {
		char v[16];
		snprintf(v, sizeof(v), "%u", ISCSI_OUR_MAX_RECV_DSL);
		kv_add(resp, "MaxRecvDataSegmentLength", v);
		l->sent_mrdsl = true;
	}
}

/* Handles one Login Request PDU (RFC 7143 11.12). */
int login_handle(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen)
{
	struct login_state *l = c->login;
	struct portal *p = c->portal;
	uint8_t flags = bhs[1];
	bool transit = flags & ISCSI_LOGIN_TRANSIT, cont = flags & ISCSI_LOGIN_CONTINUE;
	int csg = ISCSI_LOGIN_CSG(flags), nsg = ISCSI_LOGIN_NSG(flags);
	struct kvlist kv = {0}, resp = {0};
	int ret = 0;

	if (!l->first_seen && !l->text_len && login_first_pdu(c, bhs))
		return 0;
	if (transit && cont)
		return login_fail(c, bhs, ISCSI_LOGIN_INITIATOR_ERROR, "both T and C bits set");
	/* Collect continued text (C bit) before acting on it. */
	if (dlen && login_gather(c, bhs, data, dlen))
		return 0;
	if (cont) {
		login_respond(c, bhs, (uint8_t)(csg << 2 | csg), 0, NULL);
		return 0;
	}
	if (kv_parse(l->text, l->text_len, &kv)) {
		ret = login_fail(c, bhs, ISCSI_LOGIN_INITIATOR_ERROR, "malformed login text");
		goto out;
	}
	free(l->text);
	l->text = NULL;
	l->text_len = 0;

	if (!l->first_seen) {
		if (login_first(c, bhs, &kv))
			goto out;
		l->first_seen = true;
	}
	if (login_stage(c, bhs, csg, transit, nsg))
		goto out;
	if (login_keys(c, bhs, csg, &kv, &resp))
		goto out;
	if (csg == ISCSI_STAGE_SECURITY && login_security(c, bhs, &kv, &resp))
		goto out;
	login_offer(c, csg, &resp);
	bool go = transit && (csg != ISCSI_STAGE_SECURITY || l->auth_done);
	uint8_t rflags = (uint8_t)(csg << 2);
	if (go)
		rflags |= ISCSI_LOGIN_TRANSIT | (uint8_t)nsg;
	bool final = go && nsg == ISCSI_STAGE_FULL_FEATURE;
	if (final) {
		char why[160];
		int st = session_admit(c, why, sizeof(why));
		if (st) {
			ret = login_fail(c, bhs, (uint16_t)st, why);
			goto out;
		}
		c->tsih = session_alloc_tsih(p);
		if (!c->discovery)
			session_reinstate(c);
	}
	login_respond(c, bhs, rflags, 0, &resp);
	if (final) {
		iscsi_log(p, LOG_INFO, c, "login %s session of %s, TSIH %u%s%s",
			  c->discovery ? "discovery" : "normal", c->initiator_name, c->tsih,
			  l->chap_used ? ", CHAP" : "", l->p.header_digest ? ", digests" : "");
		login_complete(c);
	} else if (go) {
		l->stage = nsg;
	}
out:
	kv_free(&kv);
	kv_free(&resp);
	return ret;
}
