/* SPDX-License-Identifier: MIT */
/*
 * backend.c - the embedded target's one door to the SCSI layer.
 *
 * Every SCSI command, TMF, PDU verdict, transport condition and connection
 * event of handlers/iscsi/ goes through here to the fault engine
 * (fl_faults.h), which passes commands on to the logical-unit core. The
 * engine's completion callbacks may run on any thread: they only append to
 * the portal's locked queue and kick its eventfd; the loop does the rest.
 * There is no other way in: a portal always has an engine (a scenario with no
 * rules when nothing is injected).
 */
#include "iscsi_internal.h"

#include <assert.h>
#include <string.h>
#include <unistd.h>

/* Wakes the loop from any thread (or a signal handler). */
void be_wake(struct portal *p)
{
	uint64_t one = 1;
	ssize_t r = write(p->efd, &one, sizeof(one));
	(void)r;
}

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
		be_wake(p);
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
		be_wake(p);
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
		be_wake(p);
}

/* The core's target: the engine's. */
static struct fl_target *be_target(struct portal *p)
{
	return p->target;
}

/* Hooks the portal to the engine. */
void be_init(struct portal *p)
{
	assert(p->engine);
	p->target = fl_engine_target(p->engine);
	fl_engine_set_xport_notify(p->engine, xport_notify, p);
}

/* The engine's kick: a timer earlier than the loop knows of was added. */
static void timer_kick(void *arg)
{
	be_wake(arg);
}

/* The loop takes the engine's timers over; false when it cannot (engine gone, or taken). */
bool be_timers_adopt(struct portal *p)
{
	if (p->engine_gone)
		return false;
	return fl_engine_timers_adopt(p->engine, timer_kick, p) == 0;
}

/* Fires the engine's due timers; returns the next deadline (UINT64_MAX: none). */
uint64_t be_timers_run(struct portal *p)
{
	return fl_engine_timers_run(p->engine, NULL);
}

/* Hands the engine's timers back to its own thread. */
int be_timers_release(struct portal *p)
{
	return fl_engine_timers_release(p->engine);
}

/* Submits a task's command; completion comes back through cmd_done. */
void be_submit(struct portal *p, struct task *t)
{
	t->cmd.done = cmd_done;
	fl_engine_submit(p->engine, t->lun_id, &t->cmd);
}

/* Carries out a TMF; the answer comes back through tmf_done. */
void be_tmf(struct portal *p, struct tmf_req *r)
{
	r->tmf.done = tmf_done;
	fl_engine_tmf(p->engine, &r->tmf);
}

/* Asks the scenario what to do with one PDU. */
void be_pdu(struct portal *p, const struct fl_pdu_info *info, struct fl_xport_verdict *out)
{
	memset(out, 0, sizeof(*out));
	fl_engine_pdu(p->engine, info, out);
}

/* Reads the standing transport conditions of a session. */
void be_xport_state(struct portal *p, struct conn *c, struct fl_xport_state *out)
{
	memset(out, 0, sizeof(*out));
	fl_engine_xport_state(p->engine, c->nexus_id, out);
}

/* Reports a login, logout or connection loss. */
void be_conn_event(struct portal *p, struct conn *c, enum fl_conn_event ev)
{
	if (!p->engine_gone)
		fl_engine_conn_event(p->engine, ev, c->nexus_id, c->initiator_port);
}

/* True when the LUN exists. */
bool be_lun_exists(struct portal *p, uint16_t lun_id)
{
	return fl_target_lun(be_target(p), lun_id) != NULL;
}

/* Whether any LUN keeps state of this nexus (a PR registration, a pending UA). */
bool be_nexus_in_use(struct portal *p, uint64_t nexus_id)
{
	uint16_t ids[FL_MAX_LUNS];
	unsigned n = fl_target_lun_ids(be_target(p), ids, FL_MAX_LUNS);

	for (unsigned i = 0; i < n; i++) {
		struct fl_lun *lun = fl_target_lun(be_target(p), ids[i]);
		if (lun && fl_lun_nexus_in_use(lun, nexus_id))
			return true;
	}
	return false;
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
