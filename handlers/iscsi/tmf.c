/* SPDX-License-Identifier: MIT */
/*
 * tmf.c - task management functions of the embedded target.
 *
 * RFC 7143 11.5 (Task Management Function Request: ABORT TASK, ABORT TASK
 * SET, CLEAR ACA, CLEAR TASK SET, LOGICAL UNIT RESET, TARGET WARM RESET,
 * TARGET COLD RESET, TASK REASSIGN), 11.6 (response codes), 4.2.3.3 / SAM-5
 * 7 (an aborted task gets no SCSI Response; CLEAR TASK SET, LUN RESET and the
 * target resets reach the tasks of every session), 11.5.1 (after a TARGET
 * COLD RESET the target drops all its connections) and 11.5.1 (TASK REASSIGN
 * at ErrorRecoveryLevel 0: "allegiance reassignment not supported").
 * What the answer is (complete, late, never, REJECTED, NOT SUPPORTED, TASK
 * DOES NOT EXIST, drop the connection) is the scenario's, via fl_engine_tmf.
 */
#include "iscsi_internal.h"

#include <stdlib.h>
#include <string.h>

/* Marks the tasks a completed TMF covers as aborted (no response). */
static void tmf_abort_tasks(struct portal *p, struct conn *c, const struct tmf_req *r)
{
	const struct fl_tmf *tmf = &r->tmf;

	for (struct conn *x = p->conns; x; x = x->next) {
		if (x->dead || !x->logged_in || x->discovery)
			continue;
		bool this_session = x == c;
		for (struct task *t = x->tasks, *n; t; t = n) {
			n = t->next;
			bool hit = false;
			switch (tmf->fn) {
			case FL_TMF_ABORT_TASK:
				hit = this_session && t->itt == tmf->ref_tag;
				break;
			case FL_TMF_ABORT_TASK_SET:
				hit = this_session && t->lun_id == tmf->lun_id;
				break;
			case FL_TMF_CLEAR_TASK_SET:
			case FL_TMF_LUN_RESET:
				hit = t->lun_id == tmf->lun_id;
				break;
			case FL_TMF_TARGET_WARM_RESET:
			case FL_TMF_TARGET_COLD_RESET:
				hit = true;
				break;
			default:
				break;
			}
			if (hit)
				task_abort(t);
		}
	}
}

/* Sends a Task Management Function Response (RFC 7143 11.6). */
static struct txpdu *tmf_response(struct conn *c, uint32_t itt, uint8_t code)
{
	struct txpdu *pdu = txpdu_new(ISCSI_OP_TMF_RESP);

	if (!pdu) {
		conn_close(c, "out of memory");
		return NULL;
	}
	pdu->hdr[1] = ISCSI_FLAG_FINAL;
	pdu->hdr[2] = code;
	fl_put_be32(pdu->hdr + BHS_ITT, itt);
	fl_put_be32(pdu->hdr + BHS_STATSN, c->stat_sn++);
	return pdu;
}

/* Name of a function, for logs. */
static const char *tmf_name(enum fl_tmf_fn fn)
{
	static const char *const names[] = {
	    "?",	 "ABORT TASK",	      "ABORT TASK SET",	  "CLEAR ACA", "CLEAR TASK SET",
	    "LUN RESET", "TARGET WARM RESET", "TARGET COLD RESET"};
	return fn >= 1 && fn <= 7 ? names[fn] : "?";
}

/* True when the request's function is carried out here (else it is answered at once). */
bool tmf_function_supported(const uint8_t *bhs)
{
	uint8_t fn = bhs[1] & ISCSI_TMF_FUNC_MASK;

	return fn != ISCSI_TMF_TASK_REASSIGN && fn >= ISCSI_TMF_ABORT_TASK &&
	       fn <= ISCSI_TMF_TARGET_COLD_RESET;
}

/*
 * Handles a Task Management Function Request (RFC 7143 11.5); the caller has
 * delivered the completions queued before it (session_drain).
 */
int tmf_request(struct conn *c, const uint8_t *bhs)
{
	uint8_t fn = bhs[1] & ISCSI_TMF_FUNC_MASK;
	uint32_t itt = fl_get_be32(bhs + BHS_ITT);

	if (!tmf_function_supported(bhs)) {
		struct txpdu *pdu =
		    tmf_response(c, itt,
				 fn == ISCSI_TMF_TASK_REASSIGN ? ISCSI_TMF_RSP_NO_REASSIGN
							       : ISCSI_TMF_RSP_REJECTED);
		if (pdu)
			conn_send(c, pdu, FL_PDU_TMF_RESP, NULL, 0, 0);
		return 0;
	}
	struct tmf_req *r = calloc(1, sizeof(*r));
	if (!r) {
		conn_close(c, "out of memory");
		return -1;
	}
	r->conn = c;
	r->portal = c->portal;
	r->itt = itt;
	memcpy(r->lun_raw, bhs + BHS_LUN, 8);
	r->tmf.fn = (enum fl_tmf_fn)fn;
	lun_decode(r->lun_raw, &r->tmf.lun_id);
	r->tmf.nexus_id = c->nexus_id;
	r->tmf.ref_tag = fl_get_be32(bhs + BHS_TTT);
	r->tmf.priv = r;
	r->cold_reset = fn == ISCSI_TMF_TARGET_COLD_RESET;
	if (fn == ISCSI_TMF_ABORT_TASK) {
		struct task *t = task_find(c, (uint32_t)r->tmf.ref_tag);
		r->tmf.task_exists = t && t->lun_id == r->tmf.lun_id;
	}
	iscsi_log(c->portal, LOG_INFO, c, "TMF %s lun %u ref 0x%08x", tmf_name(r->tmf.fn),
		  r->tmf.lun_id, (uint32_t)r->tmf.ref_tag);
	r->conn_next = c->tmfs;
	c->tmfs = r;
	be_tmf(c->portal, r);
	return 0;
}

/* Called on the loop thread when the engine has answered a TMF. */
void tmf_completed(struct portal *p, struct tmf_req *r)
{
	struct conn *c = r->conn;

	if (c) {
		for (struct tmf_req **pp = &c->tmfs; *pp; pp = &(*pp)->conn_next)
			if (*pp == r) {
				*pp = r->conn_next;
				break;
			}
	}
	if (!c || c->dead) {
		free(r);
		return;
	}
	switch (r->resp) {
	case FL_TMF_RESP_NONE:
		iscsi_log(p, LOG_INFO, c, "fault: %s never answered", tmf_name(r->tmf.fn));
		break;
	case FL_TMF_RESP_DROP_CONNECTION:
		conn_close(c, "fault: TMF answered by dropping the connection");
		break;
	default: {
		if (r->resp == FL_TMF_RESP_COMPLETE)
			tmf_abort_tasks(p, c, r);
		struct txpdu *pdu = tmf_response(c, r->itt, (uint8_t)r->resp);
		if (!pdu)
			break;
		iscsi_log(p, LOG_INFO, c, "TMF %s answered %u", tmf_name(r->tmf.fn), r->resp);
		if (r->cold_reset && r->resp == FL_TMF_RESP_COMPLETE) {
			/* RFC 7143 11.5.1: a cold reset drops every connection. */
			pdu->close_after = true;
			for (struct conn *x = p->conns; x; x = x->next)
				if (x != c && !x->discovery)
					conn_close(x, "target cold reset");
		}
		conn_send(c, pdu, FL_PDU_TMF_RESP, NULL, 0, 0);
	}
	}
	free(r);
}
