/* SPDX-License-Identifier: MIT */
/*
 * engine_late.c - late writes: the data of a command an action holds
 * ("late_write", scenario/actions/late_write.c) is copied when the command
 * goes on hold and written through its LUN later, after a time or when the
 * command's nexus goes away, whichever the action asked for comes first.
 * What happens to the held command itself (a TMF, a closed connection) does
 * not touch the copy.
 *
 * A late write is a command of the engine's own: the original CDB and a copy
 * of its data, on an I_T nexus of the engine's (one per target port, so the
 * port's access state applies), submitted to the LUN without passing the
 * rules. The nexus's unit attentions are the engine's to clear: a late write
 * answered UNIT ATTENTION is resubmitted, up to LATE_UA_TRIES times.
 *
 * Bounds: at most LATE_MAX late writes pending or in flight, holding at most
 * LATE_MAX_BYTES of copied data together; a command beyond either stays held
 * but its data never lands (traced "dropped": "cap"). Late writes still due
 * when the engine is destroyed never land (traced "dropped": "shutdown").
 */
#include "engine_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LATE_UA_TRIES 8
/* the engine's own nexus ids: far above any front end's session counter */
#define LATE_NEXUS_BASE (UINT64_MAX - 0xffffull)

/* One late write, from its copy to its completion in the LUN. */
struct late {
	struct fl_timer tn; /* first: the timer callback casts back */
	struct fl_engine *e;
	struct fl_cmd cmd; /* the engine's copy: CDB, data-out, its own nexus */
	uint8_t *buf;
	struct eng_lun *L;
	const char *rule;
	uint64_t nexus_id, tag, lba, blocks, since_ns;
	uint16_t rel_port;
	bool on_close, in_list;
	unsigned tries;
	struct late *prev, *next;
};

/* A late_write trace line with the command's range (e->lock or no lock; the trace has its own). */
static json_t *late_event(struct fl_engine *e, const struct late *l)
{
	json_t *o = trace_event(&e->trace, "late_write");

	if (!o)
		return NULL;
	json_object_set_new(o, "lun", json_integer(l->L->id));
	json_object_set_new(o, "rule", json_string(l->rule));
	json_object_set_new(o, "nexus", json_u64(l->nexus_id));
	json_object_set_new(o, "tag", json_u64(l->tag));
	json_object_set_new(o, "lba", json_u64(l->lba));
	json_object_set_new(o, "blocks", json_u64(l->blocks));
	return o;
}

/* Links l into the engine's list (e->lock held). */
static void late_link(struct fl_engine *e, struct late *l)
{
	l->prev = NULL;
	l->next = e->late;
	if (e->late)
		e->late->prev = l;
	e->late = l;
	l->in_list = true;
}

/* Unlinks l from the engine's list (e->lock held). */
static void late_unlink(struct fl_engine *e, struct late *l)
{
	if (!l->in_list)
		return;
	if (l->prev)
		l->prev->next = l->next;
	else
		e->late = l->next;
	if (l->next)
		l->next->prev = l->prev;
	l->in_list = false;
}

/* Frees l and gives back what it counted against the caps (no lock held). */
static void late_free(struct late *l)
{
	struct fl_engine *e = l->e;

	pthread_mutex_lock(&e->lock);
	e->nlate--;
	e->late_bytes -= l->cmd.data_out_len;
	pthread_mutex_unlock(&e->lock);
	free(l->buf);
	free(l);
}

/* The LUN completed a late write: again after a unit attention, else traced and freed. */
static void late_done(struct fl_cmd *cmd)
{
	struct late *l = (struct late *)((char *)cmd - offsetof(struct late, cmd));
	struct fl_sense_data s = {0};
	bool ua = false;
	json_t *o;

	if (cmd->status == FL_STATUS_CHECK_CONDITION && cmd->sense_len)
		ua = fl_sense_decode(cmd->sense, cmd->sense_len, &s) != FL_SENSE_FORMAT_UNKNOWN &&
		     s.key == 0x6;
	if (ua && ++l->tries < LATE_UA_TRIES) {
		cmd->decoded = false;
		fl_lun_submit(l->L->lun, cmd);
		return;
	}
	o = late_event(l->e, l);
	if (o) {
		json_object_set_new(o, "landed", json_boolean(cmd->status == FL_STATUS_GOOD));
		json_object_set_new(
		    o, "held_ms",
		    json_integer((json_int_t)((fl_mono_ns() - l->since_ns) / 1000000)));
		json_object_set_new(o, "status", json_integer(cmd->status));
		if (cmd->status == FL_STATUS_CHECK_CONDITION) {
			char k[16];

			snprintf(k, sizeof(k), "%x/%02x/%02x", s.key, s.asc, s.ascq);
			json_object_set_new(o, "sense", json_string(k));
		}
		trace_emit(&l->e->trace, o);
	}
	late_free(l);
}

/* Writes l's copy through its LUN now (no lock held); why: "after_ms" or "closed". */
static void late_exec(struct late *l, const char *why)
{
	json_t *o = late_event(l->e, l);

	if (o) {
		json_object_set_new(o, "what", json_string("due"));
		json_object_set_new(o, "why", json_string(why));
		trace_emit(&l->e->trace, o);
	}
	l->cmd.done = late_done;
	l->cmd.decoded = false;
	fl_lun_submit(l->L->lun, &l->cmd);
}

/* A late write's time came: write it, unless its nexus went first and took it. */
static void late_fired(struct fl_timer *tn)
{
	struct late *l = (struct late *)tn;
	struct fl_engine *e = l->e;

	pthread_mutex_lock(&e->lock);
	late_unlink(e, l);
	pthread_mutex_unlock(&e->lock);
	late_exec(l, "after_ms");
}

/* Traces a late write that will never land (e->lock held). */
static void late_trace_dropped(struct fl_engine *e, const struct late *l, const char *why)
{
	json_t *o = late_event(e, l);

	if (!o)
		return;
	json_object_set_new(o, "landed", json_false());
	json_object_set_new(o, "dropped", json_string(why));
	trace_emit(&e->trace, o);
}

/* fl_action_env.write_later: copies the command's data to write it later (e->lock held). */
int engine_write_later(void *engine, const struct fl_action_env *x, uint64_t after_ns,
		       bool on_close)
{
	struct fl_engine *e = engine;
	struct fl_cmd *cmd = x->cmd;
	const struct fl_cdb_info *ci = fl_cmd_decode(cmd);
	struct eng_lun *L = x->lun_id < FL_MAX_LUNS ? e->by_id[x->lun_id] : NULL;
	uint32_t len = cmd->data_out_len;
	struct late *l;

	if (!L || !cmd->data_out || !len)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->e = e;
	l->L = L;
	l->rule = x->why;
	l->nexus_id = cmd->nexus.id;
	l->tag = cmd->tag;
	l->lba = ci->has_lba ? ci->lba : 0;
	l->blocks = ci->nblocks;
	l->since_ns = fl_mono_ns();
	fl_timer_init(&l->tn, late_fired);
	if (e->closing || e->nlate >= FL_LATE_MAX || len > FL_LATE_MAX_BYTES - e->late_bytes) {
		late_trace_dropped(e, l, e->closing ? "shutdown" : "cap");
		free(l);
		return -ENOSPC;
	}
	l->buf = malloc(len);
	if (!l->buf) {
		late_trace_dropped(e, l, "memory");
		free(l);
		return -ENOMEM;
	}
	memcpy(l->buf, cmd->data_out, len);
	memcpy(l->cmd.cdb, cmd->cdb, sizeof(l->cmd.cdb));
	l->cmd.cdb_len = cmd->cdb_len;
	l->rel_port = cmd->nexus.rel_port_id;
	l->cmd.nexus.id = LATE_NEXUS_BASE + l->rel_port;
	l->cmd.nexus.initiator = "faultlun-late-write";
	l->cmd.nexus.rel_port_id = l->rel_port;
	l->cmd.tag = cmd->tag;
	l->cmd.data_out = l->buf;
	l->cmd.data_out_len = len;
	l->on_close = on_close;
	e->nlate++;
	e->late_bytes += len;
	late_link(e, l);
	timers_add(e->timers, &l->tn, l->since_ns + after_ns);
	return 0;
}

/*
 * Takes the late writes that land when nexus_id goes away off the list
 * (e->lock held); one whose timer already fired is left to its timer.
 */
struct late *engine_late_nexus_gone(struct fl_engine *e, uint64_t nexus_id)
{
	struct late *list = NULL, *l, *next;

	for (l = e->late; l; l = next) {
		next = l->next;
		if (!l->on_close || l->nexus_id != nexus_id || !timers_cancel(e->timers, &l->tn))
			continue;
		late_unlink(e, l);
		l->next = list;
		list = l;
	}
	return list;
}

/* Writes the late writes of a list from engine_late_nexus_gone (no lock held). */
void engine_late_run(struct late *list)
{
	while (list) {
		struct late *next = list->next;

		late_exec(list, "closed");
		list = next;
	}
}

/* Drops every late write still due (the timers are stopped; no lock held). */
void engine_late_drop_all(struct fl_engine *e)
{
	struct late *l, *next;

	pthread_mutex_lock(&e->lock);
	l = e->late;
	e->late = NULL;
	for (struct late *x = l; x; x = x->next)
		late_trace_dropped(e, x, "shutdown");
	pthread_mutex_unlock(&e->lock);
	for (; l; l = next) {
		next = l->next;
		l->in_list = false;
		late_free(l);
	}
}
