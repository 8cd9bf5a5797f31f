/* SPDX-License-Identifier: MIT */
/*
 * engine_internal.h - the fault engine's private state, shared by engine.c,
 * engine_tmf.c, trace.c and ctl.c.
 *
 * Locking: one engine lock (e->lock) guards the program (rules and their
 * counters), the state machine and the lists of pending commands and TMFs.
 * The trace has its own lock, always taken after e->lock when both are held.
 * No completion callback (cmd->done, tmf->done) is ever called with either
 * lock held, so callbacks may resubmit.
 */
#ifndef FL_ENGINE_INTERNAL_H
#define FL_ENGINE_INTERNAL_H

#include "faults_internal.h"

/* A set of LBAs healed by writes, for one rule with "until": "written". */
struct heal_ival {
	uint16_t lun;
	uint64_t lo, hi;
};

/* Run-time state of one SCSI rule. */
struct rt_rule {
	const struct sc_rule *r;
	bool armed;
	uint64_t seen, fired;
	struct fl_prng rng;
	struct heal_ival *healed;
	size_t nhealed, healcap;
};

/* Run-time state of one transport rule. */
struct rt_xrule {
	const struct sc_xrule *r;
	bool armed;
	uint64_t seen, fired;
	struct fl_prng rng;
};

/* Candidate lists for one command class (or opcode) on one LUN. */
struct bucket {
	uint32_t *always; /* rules without an LBA condition */
	size_t nalways;
	uint32_t *crosses; /* rules with crosses_end */
	size_t ncrosses;
	struct lba_tree tree; /* rules with an LBA range */
};

/* The rule index of one LUN. */
struct lun_rules {
	struct bucket cls[FL_CLASS_NR];
	struct bucket *op[256]; /* opcode rules; NULL when none */
	bool any_op;
};

/* A scenario compiled for an engine: rules, indexes, their run-time state. */
struct program {
	struct fl_scenario *sc;
	struct rt_rule *rules;
	size_t nrules;
	struct rt_xrule *xrules;
	size_t nxrules;
	struct lun_rules *lun[FL_MAX_LUNS];
	bool has_until_written;
	bool has_write_beyond;
	struct program *next_retired;
};

/* One LUN of the engine. */
struct eng_lun {
	uint16_t id;
	struct fl_lun *lun;
	uint64_t num_blocks; /* kept current across resizes */
	uint32_t block_size;
};

enum pend_stage {
	PEND_DELAYED = 1, /* waiting on its timer */
	PEND_HELD,	  /* on hold */
	PEND_EXEC,	  /* in the core, completion intercepted */
};

/* A command the engine keeps track of (only those with an action or a heal). */
struct pend {
	struct fl_timer tn; /* first: the timer callback casts back */
	struct fl_engine *e;
	struct fl_cmd *cmd;
	fl_cmd_done_fn done; /* the submitter's */
	struct eng_lun *L;
	const struct sc_rule *rule; /* NULL: only intercepted for healing */
	struct rt_rule *rt;
	enum pend_stage stage;
	bool in_list, abort_requested, release_requested;
	bool heal;
	struct fl_cdb_info ci;
	uint64_t info;	       /* the failing LBA, for the INFORMATION field */
	uint64_t corrupt_seed; /* drawn from the rule's stream at match time */
	uint64_t since_ns;
	struct pend *prev, *next;
};

/* A TMF answered after a delay. */
struct tmf_pend {
	struct fl_timer tn;
	struct fl_engine *e;
	struct fl_tmf *tmf;
	struct sc_tmf_case kase;
	bool in_list;
	struct tmf_pend *prev, *next;
};

/* A trace subscriber (a control-socket client streaming the trace). */
struct trace_sub {
	int fd;
	uint64_t dropped;
	struct trace_sub *next;
};

struct trace {
	pthread_mutex_t lock;
	int fd; /* -1: none */
	bool own_fd;
	struct trace_sub *subs;
	uint64_t t0_ns;
};

struct fl_engine {
	pthread_mutex_t lock;
	unsigned frontend;
	bool delays_now; /* fl_engine_opts.delays_now */
	uint64_t seed;
	struct fl_target *tgt;
	struct eng_lun luns[FL_MAX_LUNS];
	struct eng_lun *by_id[FL_MAX_LUNS];
	size_t nluns;
	struct program *prog;
	struct program *retired;
	struct timers *timers;
	struct trace trace;
	/* state machine */
	int state;
	uint64_t state_since_ns, state_cmds, state_gen, armed_ns;
	struct fl_timer state_timer;
	struct fl_timer logout_timer;
	/* pending */
	struct pend *pending;
	size_t npending;
	struct tmf_pend *tmf_pending;
	/* late writes (engine_late.c): pending or in flight, bounded by FL_LATE_MAX* */
	struct late *late;
	size_t nlate;
	uint64_t late_bytes;
	struct fl_engine_counters counters;
	void (*xport_notify)(void *ctx);
	void *xport_ctx;
	bool closing;
};

/* engine.c */
/* Draws a delay (nanoseconds) from a scenario delay distribution. */
uint64_t delay_draw(const struct sc_delay *d, struct fl_prng *p);
struct program *program_build(struct fl_engine *e, struct fl_scenario *sc);
void program_free(struct program *p);
/* Moves the state machine to state s (e->lock held); why goes to the trace. */
void engine_set_state(struct fl_engine *e, int s, const char *why);
/* Completes a pending command as aborted (no lock held). */
void pend_complete_aborted(struct pend *p);
/* Ends a hold or delay early and executes the command (no lock held). */
void pend_release_execute(struct pend *p);
/* Unlinks p from the pending list (e->lock held). */
void pend_unlink(struct fl_engine *e, struct pend *p);
/* Calls the transport notifier, if any (no lock held). */
void engine_notify(struct fl_engine *e);
/* Arms the timers of the current state (e->lock held). */
void engine_arm_state_timers(struct fl_engine *e);
/* Runs the transitions of event `on` (e->lock held); returns true if the state moved. */
bool engine_event(struct fl_engine *e, enum sc_on on, int tmf_fn, uint64_t value);
/* Carries out a LUN-wide effect (ua, power_loss, resize, alua); no lock held. */
void engine_lun_effect(struct fl_engine *e, struct eng_lun *L, const struct sc_action *a,
		       const char *why);
/*
 * The capacity in blocks a resize action asks of L, or 0 with the reason in
 * msg: 0, a byte size not a multiple of the block size, over FL_LUN_MAX_BLOCKS.
 */
uint64_t engine_resize_blocks(const struct eng_lun *L, const struct sc_action *a, char *msg,
			      size_t len);
/* Resizes a LUN in the core and in the engine together and traces it (no lock held). */
int engine_resize(struct fl_engine *e, struct eng_lun *L, uint64_t num_blocks, const char *why);
/* Releases held commands (e->lock NOT held); returns the count. */
size_t engine_release(struct fl_engine *e, bool all, uint64_t tag, int lun);
/* Arms or disarms a rule by id (SCSI or transport); -ENOENT. e->lock held. */
int engine_arm(struct fl_engine *e, const char *id, bool armed);

/* engine_late.c */
#define FL_LATE_MAX 256				/* late writes pending or in flight at once */
#define FL_LATE_MAX_BYTES (64ull * 1024 * 1024) /* their copied data together */
struct late;
struct fl_action_env;
/* fl_action_env.write_later (e->lock held). */
int engine_write_later(void *engine, const struct fl_action_env *x, uint64_t after_ns,
		       bool on_close);
/* Takes the late writes that land when nexus_id goes (e->lock held); run them unlocked. */
struct late *engine_late_nexus_gone(struct fl_engine *e, uint64_t nexus_id);
/* Writes a list from engine_late_nexus_gone (no lock held). */
void engine_late_run(struct late *list);
/* Drops the late writes still due, traced (timers stopped; no lock held). */
void engine_late_drop_all(struct fl_engine *e);

/* trace.c */
void trace_init(struct trace *t, int fd, bool own);
void trace_close(struct trace *t);
/* Writes one JSON object (a line) to the trace file and subscribers. */
void trace_emit(struct trace *t, json_t *obj);
/* An unsigned 64-bit value as JSON: a number, or a decimal string above 2^63-1. */
json_t *json_u64(uint64_t v);
/* A trace object with t_us and event filled in. */
json_t *trace_event(struct trace *t, const char *event);
/* Adds the command's fields (lun, initiator, nexus, port, tag, opcode, lba, blocks). */
void trace_cmd_fields(json_t *o, uint16_t lun, const struct fl_cmd *cmd, bool ports,
		      const struct fl_cdb_info *ci);
/* trace_cmd_fields as e's scenario says: the port named when it has "ports". */
static inline void engine_cmd_fields(const struct fl_engine *e, json_t *o, uint16_t lun,
				     const struct fl_cmd *cmd, const struct fl_cdb_info *ci)
{
	trace_cmd_fields(o, lun, cmd, e->prog->sc->nports > 0, ci);
}
int trace_subscribe(struct trace *t, int fd);
void trace_unsubscribe(struct trace *t, int fd);

#endif
