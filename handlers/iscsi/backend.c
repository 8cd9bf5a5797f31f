/* SPDX-License-Identifier: MIT */
/*
 * backend.c - the embedded target's one door to the SCSI layer.
 *
 * Every SCSI command, TMF, PDU verdict, transport condition and connection
 * event of handlers/iscsi/ goes through here to the fault engine
 * (fl_faults.h), which passes commands on to the logical-unit core. The
 * engine's completion callbacks may run on any thread: they only append to
 * the portal's locked queue and kick its eventfd; the loop does the rest.
 * A portal created with a bare fl_target (no engine: plain target, no
 * faults) submits to the core directly with the same contract.
 */
#include "iscsi_internal.h"

#include <string.h>

/*
 * After queuing (p->lock held): whether the caller must wake the loop. Not
 * from the loop's own thread, which drains the queue before it waits
 * (fl_iscsi_run), and not twice before the loop has drained.
 */
static bool need_kick(struct portal *p)
{
	if (p->loop_running && pthread_equal(p->loop_thread, pthread_self()))
		return false;
	bool kick = !p->kicked;
	p->kicked = true;
	return kick;
}

/* Appends a completed task to the portal's queue and wakes the loop. */
static void cmd_done(struct fl_cmd *cmd)
{
	struct task *t = cmd->priv;
	struct portal *p = t->portal;
	bool kick;

	pthread_mutex_lock(&p->lock);
	t->done_next = NULL;
	if (p->done_tail)
		p->done_tail->done_next = t;
	else
		p->done_head = t;
	p->done_tail = t;
	kick = need_kick(p);
	pthread_mutex_unlock(&p->lock);
	if (kick)
		portal_kick(p);
}

/* Appends an answered TMF to the portal's queue and wakes the loop. */
static void tmf_done(struct fl_tmf *tmf, enum fl_tmf_resp resp)
{
	struct tmf_req *r = tmf->priv;
	struct portal *p = r->portal;
	bool kick;

	pthread_mutex_lock(&p->lock);
	r->resp = resp;
	r->done_next = NULL;
	if (p->tmf_tail)
		p->tmf_tail->done_next = r;
	else
		p->tmf_head = r;
	p->tmf_tail = r;
	kick = need_kick(p);
	pthread_mutex_unlock(&p->lock);
	if (kick)
		portal_kick(p);
}

/* The engine tells us transport conditions may have changed. */
static void xport_notify(void *ctx)
{
	struct portal *p = ctx;
	bool kick;

	pthread_mutex_lock(&p->lock);
	p->xport_dirty = true;
	kick = need_kick(p);
	pthread_mutex_unlock(&p->lock);
	if (kick)
		portal_kick(p);
}

/* The core's target: the engine's, or the bare one. */
static struct fl_target *be_target(struct portal *p)
{
	return p->target;
}

/* Hooks the portal to the engine. */
void be_init(struct portal *p)
{
#ifdef FL_ISCSI_HAVE_ENGINE
	if (p->engine) {
		p->target = fl_engine_target(p->engine);
		fl_engine_set_xport_notify(p->engine, xport_notify, p);
	}
#else
	(void)p;
	(void)xport_notify;
#endif
}

/* The engine's kick: a timer earlier than the loop knows of was added. */
static void timer_kick(void *arg)
{
	portal_kick(arg);
}

/* The loop takes the engine's timers over; false when it cannot (no engine). */
bool be_timers_adopt(struct portal *p)
{
#ifdef FL_ISCSI_HAVE_ENGINE
	if (p->engine && !p->engine_gone)
		return fl_engine_timers_adopt(p->engine, timer_kick, p) == 0;
#endif
	(void)timer_kick;
	(void)p;
	return false;
}

/* Fires the engine's due timers; returns the next deadline (UINT64_MAX: none). */
uint64_t be_timers_run(struct portal *p)
{
#ifdef FL_ISCSI_HAVE_ENGINE
	return fl_engine_timers_run(p->engine, NULL);
#else
	(void)p;
	return UINT64_MAX;
#endif
}

/* Hands the engine's timers back to its own thread. */
int be_timers_release(struct portal *p)
{
#ifdef FL_ISCSI_HAVE_ENGINE
	return fl_engine_timers_release(p->engine);
#else
	(void)p;
	return 0;
#endif
}

/* Submits a task's command; completion comes back through cmd_done. */
void be_submit(struct portal *p, struct task *t)
{
	t->cmd.done = cmd_done;
#ifdef FL_ISCSI_HAVE_ENGINE
	if (p->engine) {
		fl_engine_submit(p->engine, t->lun_id, &t->cmd);
		return;
	}
#endif
	fl_target_submit(be_target(p), t->lun_id, &t->cmd);
}

/* Carries out a TMF; the answer comes back through tmf_done. */
void be_tmf(struct portal *p, struct tmf_req *r)
{
	r->tmf.done = tmf_done;
#ifdef FL_ISCSI_HAVE_ENGINE
	if (p->engine) {
		fl_engine_tmf(p->engine, &r->tmf);
		return;
	}
#endif
	/* No engine: the plain SAM-5 behaviour. */
	struct fl_target *tgt = be_target(p);
	enum fl_tmf_resp resp = FL_TMF_RESP_COMPLETE;
	struct fl_lun *lun = fl_target_lun(tgt, r->tmf.lun_id);
	uint16_t ids[FL_MAX_LUNS];
	unsigned n;

	switch (r->tmf.fn) {
	case FL_TMF_ABORT_TASK:
		if (!r->tmf.task_exists)
			resp = FL_TMF_RESP_TASK_NOT_EXIST;
		break;
	case FL_TMF_ABORT_TASK_SET:
	case FL_TMF_CLEAR_TASK_SET:
		if (!lun)
			resp = FL_TMF_RESP_LUN_NOT_EXIST;
		break;
	case FL_TMF_LUN_RESET:
		if (!lun)
			resp = FL_TMF_RESP_LUN_NOT_EXIST;
		else
			fl_lun_reset(lun, r->tmf.nexus_id, 0x29, 0x00);
		break;
	case FL_TMF_TARGET_WARM_RESET:
	case FL_TMF_TARGET_COLD_RESET:
		n = fl_target_lun_ids(tgt, ids, FL_MAX_LUNS);
		for (unsigned i = 0; i < n; i++)
			fl_lun_reset(fl_target_lun(tgt, ids[i]), r->tmf.nexus_id, 0x29,
				     r->tmf.fn == FL_TMF_TARGET_COLD_RESET ? 0x01 : 0x00);
		break;
	default:
		resp = FL_TMF_RESP_NOT_SUPPORTED;
	}
	tmf_done(&r->tmf, resp);
}

/* Asks the scenario what to do with one PDU. */
void be_pdu(struct portal *p, const struct fl_pdu_info *info, struct fl_xport_verdict *out)
{
	memset(out, 0, sizeof(*out));
#ifdef FL_ISCSI_HAVE_ENGINE
	if (p->engine)
		fl_engine_pdu(p->engine, info, out);
#else
	(void)p;
	(void)info;
#endif
}

/* Reads the standing transport conditions of a session. */
void be_xport_state(struct portal *p, struct conn *c, struct fl_xport_state *out)
{
	memset(out, 0, sizeof(*out));
#ifdef FL_ISCSI_HAVE_ENGINE
	if (p->engine)
		fl_engine_xport_state(p->engine, c->nexus_id, out);
#else
	(void)p;
	(void)c;
#endif
}

/* Reports a login, logout or connection loss. */
void be_conn_event(struct portal *p, struct conn *c, enum fl_conn_event ev)
{
#ifdef FL_ISCSI_HAVE_ENGINE
	if (p->engine && !p->engine_gone)
		fl_engine_conn_event(p->engine, ev, c->nexus_id, c->initiator_port);
#else
	(void)p;
	(void)c;
	(void)ev;
#endif
}

/* True when the LUN exists. */
bool be_lun_exists(struct portal *p, uint16_t lun_id)
{
	return fl_target_lun(be_target(p), lun_id) != NULL;
}

/* Logical block size of a LUN (512 when it does not exist). */
uint32_t be_block_size(struct portal *p, uint16_t lun_id)
{
	struct fl_lun *lun = fl_target_lun(be_target(p), lun_id);
	struct fl_lun_info info;

	if (!lun)
		return 512;
	fl_lun_get_info(lun, &info);
	return info.block_size ? info.block_size : 512;
}
