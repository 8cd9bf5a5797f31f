/* SPDX-License-Identifier: MIT */
/*
 * fl_faults.h - public contract of faultlun's fault engine.
 *
 * The engine sits between a front end and the logical-unit core as a
 * pass-through layer: a front end submits every SCSI command, task-management
 * function, PDU event and connection event here instead of to the core. The
 * scenario (JSON, docs/scenario-format.md) decides what happens: before
 * execution (reject, delay, hold, drop), after execution (corrupt, short
 * transfer, drop the response), on TMFs, resets and connection events.
 *
 * Threading: every function may be called from any thread. Completion
 * callbacks (cmd->done, tmf->done) run either inline in the calling thread or
 * on the engine's timer thread (or the loop driving the timers, see
 * fl_engine_timers_adopt); front ends must accept both.
 */
#ifndef FL_FAULTS_H
#define FL_FAULTS_H

#include "fl_scenario.h"
#include "fl_target.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Options for an engine; zero-initialised means defaults. */
struct fl_engine_opts {
	unsigned frontend; /* the one front end running it (enum fl_frontend) */
	bool seed_set;
	uint64_t seed;		/* overrides the scenario's seed when seed_set */
	const char *trace_path; /* JSON lines; NULL = no trace file */
	int trace_fd;		/* used when trace_path is NULL and trace_fd > 0 */
	/* store overrides for every LUN (tcmu cfgstring, serve --store) */
	bool store_override;
	enum fl_store_kind store;
	const char *store_path; /* file store: path; several LUNs get ".N" */
	uint64_t size_override; /* bytes; 0 = the scenario's */
	/*
	 * The scenario's file: its own file-store paths are opened beneath the
	 * directory that holds it, links resolved (NULL, or not a file, such as
	 * a pipe: the working directory). store_path above is the operator's.
	 */
	const char *scenario_file;
	/*
	 * Delays end at once (the delay drawn is still traced): `faultlun import
	 * --verify` compares answers, not times.
	 */
	bool delays_now;
};

struct fl_engine;

/*
 * Builds the LUNs the scenario describes and arms its rules. The engine takes
 * its own reference to sc: the caller may fl_scenario_free() its copy as soon
 * as this returns (the same holds for fl_engine_replace).
 */
int fl_engine_create(const struct fl_scenario *sc, const struct fl_engine_opts *opts,
		     struct fl_engine **out);
/* Completes every held command as aborted, stops timers, destroys the LUNs. */
void fl_engine_destroy(struct fl_engine *e);
struct fl_target *fl_engine_target(struct fl_engine *e);

/*
 * Loop-driven timers. Delays, hold limits and state timers run on a thread of
 * the engine's own, unless a front end with an event loop takes them over:
 * between fl_engine_timers_adopt() and fl_engine_timers_release() that loop
 * calls fl_engine_timers_run(), which fires what is due on the calling thread
 * (completions included), sets *fired (when not NULL) to how many, and returns the next
 * deadline in CLOCK_MONOTONIC ns (UINT64_MAX: none). kick(arg) is called, from
 * any thread, when a deadline earlier than every queued one is added, so the
 * loop can shorten its wait. One loop at a time: -EBUSY otherwise.
 */
int fl_engine_timers_adopt(struct fl_engine *e, void (*kick)(void *arg), void *arg);
int fl_engine_timers_release(struct fl_engine *e);
uint64_t fl_engine_timers_run(struct fl_engine *e, unsigned *fired);

/*
 * Replaces the rules, task-management and transport behaviour and state
 * machine by those of sc (LUN personalities are kept). Atomic: on error the
 * old scenario stays. Commands held by the old scenario stay held.
 */
int fl_engine_replace(struct fl_engine *e, const struct fl_scenario *sc);

/*
 * Changes the capacity of LUN lun_id to num_blocks: the core LUN (which
 * queues UA 2A/09 CAPACITY DATA HAS CHANGED) and the engine's own view of it,
 * which crosses_end rules test, change together under the engine lock; the
 * trace gets a "resize" event. The one way to resize a LUN the engine serves
 * (front ends, the control socket and the resize action all use it).
 * Returns 0, -ENOENT (no such LUN), -EINVAL (0 blocks, or too many) or the
 * store's -errno.
 */
int fl_engine_resize(struct fl_engine *e, uint16_t lun_id, uint64_t num_blocks);

/*
 * The pass-through: submits cmd to LUN lun_id through the rules. done() is
 * called exactly once. When cmd->no_response is set on completion the front
 * end must send nothing for it (the initiator sees a lost command).
 */
void fl_engine_submit(struct fl_engine *e, uint16_t lun_id, struct fl_cmd *cmd);

struct fl_tmf;
typedef void (*fl_tmf_done_fn)(struct fl_tmf *tmf, enum fl_tmf_resp resp);
struct fl_tmf {
	enum fl_tmf_fn fn;
	uint16_t lun_id;
	uint64_t nexus_id;
	uint64_t ref_tag; /* ABORT TASK: the task's tag */
	bool task_exists; /* ABORT TASK: the front end knows the task */
	fl_tmf_done_fn done;
	void *priv;
};
/*
 * Carries out a TMF as the scenario says: releases (as aborted, no response)
 * the held commands it covers, resets the LUN(s) with the scenario's UA,
 * applies on-reset effects, then calls done() (possibly after a delay, or
 * with FL_TMF_RESP_NONE / DROP_CONNECTION).
 */
void fl_engine_tmf(struct fl_engine *e, struct fl_tmf *tmf);

/* Connection / session events from a front end (traced; may move state). */
enum fl_conn_event {
	FL_CONN_LOGIN = 1,
	FL_CONN_LOGOUT,
	FL_CONN_CLOSED,	     /* closed by either side without logout */
	FL_CONN_DEVICE_OPEN, /* TCMU device opened */
	FL_CONN_DEVICE_CLOSE,
};
void fl_engine_conn_event(struct fl_engine *e, enum fl_conn_event ev, uint64_t nexus_id,
			  const char *initiator);

struct fl_xport_verdict {
	enum fl_xport_action action;
	uint32_t delay_us;
	const char *rule; /* id of the rule that decided, for logs; NULL */
};
void fl_engine_pdu(struct fl_engine *e, const struct fl_pdu_info *pdu,
		   struct fl_xport_verdict *out);

/* Standing transport conditions of a session, re-read on notification. */
struct fl_xport_state {
	bool ignore_nop_out;	     /* stop answering NOP-Out pings */
	bool stall_max_cmd_sn;	     /* keep MaxCmdSN = ExpCmdSN - 1 (window closed) */
	bool request_logout;	     /* send Async Message, AsyncEvent 1 (logout request) */
	uint16_t logout_wait_s;	     /* Parameter3 of that Async Message */
	uint32_t nop_in_interval_ms; /* target-initiated pings; 0 = none */
};
void fl_engine_xport_state(struct fl_engine *e, uint64_t nexus_id, struct fl_xport_state *out);
/* Called (from any thread) whenever transport state may have changed. */
void fl_engine_set_xport_notify(struct fl_engine *e, void (*fn)(void *ctx), void *ctx);

/* Counters, for `faultlun ctl counters` and tests. */
struct fl_engine_counters {
	uint64_t commands, injected, held, released, dropped, delayed, tmfs, resets;
};
void fl_engine_get_counters(struct fl_engine *e, struct fl_engine_counters *c);
/* Current state name of the state machine (owned by the engine). */
const char *fl_engine_state(struct fl_engine *e);
uint64_t fl_engine_seed(struct fl_engine *e);

/*
 * Runtime control socket: a UNIX stream socket (mode 0600) speaking the
 * JSON-lines protocol of docs/control-protocol.md, served by its own thread.
 */
struct fl_ctl;
int fl_ctl_start(struct fl_engine *e, const char *path, struct fl_ctl **out);
/* Stops serving and removes the socket file; call before fl_engine_destroy. */
void fl_ctl_stop(struct fl_ctl *ctl);

/*
 * A front end's stack: the engine (LUNs, stores, rules, trace) and, when
 * ctl_path is set, the control socket. serve, check's in-process target and
 * the TCMU handler open and close theirs through this pair alone.
 */
struct fl_stack_opts {
	struct fl_engine_opts engine;
	const char *ctl_path; /* NULL: no control socket */
	/*
	 * Called once the engine is built and before the control socket opens,
	 * for the front end to read or refuse what was built (the TCMU handler
	 * checks its LUN against the device). 0, or -errno to stop the open.
	 */
	int (*accept)(struct fl_engine *e, void *arg);
	void *accept_arg;
};

/* The step fl_stack_open stopped at, for the front end's own message. */
enum fl_stack_step { FL_STACK_OK, FL_STACK_ENGINE, FL_STACK_ACCEPT, FL_STACK_CTL };

struct fl_stack {
	struct fl_engine *engine;
	struct fl_ctl *ctl;	   /* NULL without ctl_path */
	enum fl_stack_step failed; /* FL_STACK_OK after a successful open */
};

/*
 * Opens the stack of sc into *st (the engine takes its own reference to sc).
 * 0, or -errno with st->failed naming the step (the front end words the
 * message) and nothing left open.
 */
int fl_stack_open(const struct fl_scenario *sc, const struct fl_stack_opts *o, struct fl_stack *st);
/*
 * Closes the control socket, then the engine (which completes what it still
 * holds). Idempotent; a front end stops feeding the engine before calling it.
 */
void fl_stack_close(struct fl_stack *st);

#ifdef __cplusplus
}
#endif
#endif
