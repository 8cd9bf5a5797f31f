/* SPDX-License-Identifier: MIT */
/*
 * fl_action.h - the registry of fault actions (docs/faults/NAME.md).
 *
 * Each action is one file, scenario/actions/NAME.c, in the shape of an
 * nbdkit filter: its parameters as descriptors (key, type, unit, range,
 * default, one doc line), their parse, the hooks the engine calls in its
 * phases, what an observer sees, and its trace line, ending in one
 * `const struct fl_action fl_action_NAME`. fl_actions[] (actions.c) is indexed
 * by enum sc_verb: the loader resolves a scenario's verb once, and the engine
 * reaches an action's row with one array index per intercepted command.
 *
 * The actions live in the scenario module, not in faults/: the loader, lint,
 * the VM report and the guest agent read the registry without linking the
 * engine. The hooks use only the core's public API (fl_target.h) and what the
 * engine lends them in struct fl_action_env (its trace, its resize).
 */
#ifndef FL_ACTION_H
#define FL_ACTION_H

#include "fl_scenario.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FL_FE_ALL (FL_FE_ISCSI | FL_FE_TCMU | FL_FE_VM)

struct pctx;
struct json_t;

/* When the engine carries an action out, relative to the LUN executing the command. */
enum fl_action_phase {
	FL_PHASE_NONE = 0, /* the command executes normally (delay_ms alone, set_state alone) */
	FL_PHASE_BEFORE,   /* ends the command before the LUN sees it (sense, status, drop) */
	FL_PHASE_HOLD,	   /* keeps the command from the LUN until a TMF or a release */
	FL_PHASE_EFFECT,   /* changes the whole LUN, then the command executes */
	FL_PHASE_AFTER,	   /* the command executes, then the engine changes its completion */
};

/* The engine counter (struct fl_engine_counters) an action bumps besides "injected". */
enum fl_action_counter {
	FL_COUNT_NONE = 0,
	FL_COUNT_HELD,
	FL_COUNT_DROPPED,
};

/* What an initiator (and the VM report) sees of a command the action hit. */
enum fl_action_observed {
	FL_OBS_ANSWERS = 0,   /* the command is answered (maybe with an error status) */
	FL_OBS_NEVER_ANSWERS, /* no answer: the initiator's command timer fires */
	FL_OBS_CHANGES_DATA,  /* answered, with data other than the medium's */
	FL_OBS_CHANGES_LUN,   /* answered; the LUN as a whole changed (size, state, UA) */
};

/* The type of one parameter's value, as a scenario writes it. */
enum fl_param_type {
	FL_PARAM_TRUE = 1, /* the JSON value true (the action's name alone says it) */
	FL_PARAM_BOOL,	   /* true or false */
	FL_PARAM_CHOICE,   /* one of .choices */
	FL_PARAM_UINT,	   /* an integer in [min, max] */
	FL_PARAM_MS,	   /* milliseconds in [min, max] (fractions allowed) */
	FL_PARAM_DELAY,	   /* FL_PARAM_MS, or a distribution {"dist": ...} (docs/faults/delay.md) */
	FL_PARAM_SENSE,	   /* "KEY/AA/QQ" (hex), key in [min, max] */
	FL_PARAM_ASCQ,	   /* "AA/QQ" (hex) */
	FL_PARAM_SIZE,	   /* "Nblocks" with N in [min, max] */
	FL_PARAM_STATE,	   /* a state the scenario declares */
	FL_PARAM_GROUP,	   /* a target port group the scenario declares */
};

/*
 * One parameter of an action. key is its path inside the action object
 * ("hold", "short/blocks"); parameters with the same nonzero `oneof` exclude
 * each other and exactly one of them is given.
 */
struct fl_action_param {
	const char *key;
	enum fl_param_type type;
	const char *unit; /* "ms", "bytes", "blocks", or NULL */
	double min, max;
	const char *const *choices; /* FL_PARAM_CHOICE: NULL-terminated */
	const char *def;	    /* the value when left out, as text; NULL: required */
	const char *doc;	    /* one line */
	unsigned oneof;
};

/*
 * What the engine lends an action's hooks for one command (or, for an
 * effect asked through the control socket, for no command: cmd NULL).
 */
struct fl_action_env {
	const struct sc_action *a;
	struct fl_lun *lun;
	uint16_t lun_id;
	uint32_t block_size;
	struct fl_cmd *cmd;
	uint64_t info; /* the first failing LBA (INFORMATION field) */
	/* the injection's own random stream (seeded at match time when .draws_seed) */
	void *rng;
	uint64_t (*next)(void *rng);
	const char *why; /* the rule's id, or "control" */
	void *engine;
	/* a trace line of kind `event` to fill and emit, or NULL when tracing is off */
	struct json_t *(*event)(void *engine, const char *event);
	void (*emit)(void *engine, struct json_t *o);
	/* resizes the LUN in the core and the engine together; 0 or -errno, logged */
	int (*resize)(void *engine, const struct fl_action_env *x);
	/*
	 * Copies the command's data-out and writes it through the LUN after_ns
	 * from now, or when the command's nexus goes away if on_close and that
	 * comes first; traced. 0, or -ENOSPC beyond the engine's caps (traced
	 * too: the data never lands). Called with the engine's lock held.
	 */
	int (*write_later)(void *engine, const struct fl_action_env *x, uint64_t after_ns,
			   bool on_close);
};

/*
 * FL_ACTION_ARGS(NAME) in an action's file, after `struct NAME {...}` (its
 * parameters as parsed): NAME_of(a) reads them from a's args, NAME_set(a, &v)
 * writes them. Nothing outside the file sees the struct.
 */
#define FL_ACTION_ARGS(NAME)                                                                       \
	_Static_assert(sizeof(struct NAME) <= SC_ACTION_ARGS_SIZE && _Alignof(struct NAME) <= 8,   \
		       "struct " #NAME " does not fit in struct sc_action's args");                \
	static inline struct NAME NAME##_of(const struct sc_action *a)                             \
	{                                                                                          \
		struct NAME v;                                                                     \
		memcpy(&v, a->args, sizeof(v));                                                    \
		return v;                                                                          \
	}                                                                                          \
	static inline void NAME##_set(struct sc_action *a, const struct NAME *v)                   \
	{                                                                                          \
		memcpy(a->args, v, sizeof(*v));                                                    \
	}

/* One fault action: the loader, lint, the engine, ctl and the report all read it. */
struct fl_action {
	const char *name; /* its key in a scenario action: "sense", "delay_ms" */
	enum sc_verb verb;
	const char *trace_action;	      /* "action" of the trace's inject line */
	const char *doc;		      /* its page: docs/faults/DOC.md */
	const char *const *keys;	      /* modifiers that go with it only, NULL-terminated */
	const struct fl_action_param *params; /* every parameter, the name's first */
	size_t nparams;
	enum fl_action_phase phase;
	enum fl_action_counter counter;
	enum fl_action_observed observed;
	const char *observed_as; /* how a report words a hit: "held, never answered" */
	unsigned frontends;	 /* enum fl_frontend mask: who can carry it out */
	bool answers;	 /* answers with a status in place of the LUN: a pending UA comes first */
	bool with_delay; /* "delay_ms" may come with it (carried out after the delay) */
	bool joins;	 /* may accompany another verb (delay_ms, set_state) */
	bool draws_seed; /* draws its own stream from the rule's at match time */

	/* parses its name and modifiers present in the action object v into a */
	void (*parse)(struct pctx *c, const char *path, struct json_t *v, struct sc_action *a);
	/* the phase of this instance when it differs from .phase (sense that completes) */
	enum fl_action_phase (*phase_of)(const struct sc_action *a);
	/* FL_PHASE_BEFORE: fills the answer in place of the LUN's (data and sense cleared) */
	void (*before)(const struct fl_action_env *x);
	/* FL_PHASE_AFTER: changes the completion the LUN gave (status GOOD or not) */
	void (*after)(const struct fl_action_env *x);
	/* FL_PHASE_HOLD: the command goes on hold (its buffers are still the initiator's) */
	void (*held)(const struct fl_action_env *x);
	/* FL_PHASE_EFFECT: changes the whole LUN */
	void (*effect)(const struct fl_action_env *x);
	/* which TMFs end a held command: abort (ABORT TASK..CLEAR TASK SET) and reset */
	void (*ends_on)(const struct sc_action *a, bool *abort, bool *reset);
	/* lint: raises *blocks to the largest capacity it may give a LUN of block_size */
	void (*reach)(const struct sc_action *a, uint32_t block_size, uint64_t *blocks);
	/* its fields of the trace's inject line */
	void (*trace)(struct json_t *o, const struct sc_action *a, uint64_t info);
	/* the target port group a names, 0 for the LUN's default group (alua, owner) */
	uint16_t (*group)(const struct sc_action *a);
	/*
	 * The capacity in blocks a gives a LUN of block_size (resize), or 0 with
	 * the reason in msg (quoting the value and the limit, naming LUN lun).
	 */
	uint64_t (*capacity)(const struct sc_action *a, uint32_t block_size, unsigned lun,
			     char *msg, size_t len);
};

/* The registry, indexed by enum sc_verb (VERB_NONE is set_state alone). */
extern const struct fl_action *const fl_actions[VERB_NR];

/* The row of a verb (every verb has one); one array index. */
static inline const struct fl_action *fl_action_by_verb(enum sc_verb v)
{
	return (unsigned)v < VERB_NR ? fl_actions[v] : NULL;
}
/* Whether p's value is (or may be) a number of milliseconds: FL_PARAM_MS or FL_PARAM_DELAY. */
static inline bool fl_param_is_ms(const struct fl_action_param *p)
{
	return p->type == FL_PARAM_MS || p->type == FL_PARAM_DELAY;
}
/* The i-th row in listing order (verbs in order, set_state last), or NULL past VERB_NR. */
const struct fl_action *fl_action_at(size_t i);
/* The row whose scenario key is name, or NULL (a scan: for the loader only). */
const struct fl_action *fl_action_by_name(const char *name);
/* The row whose trace name is name, or NULL (a scan: for readers of a trace). */
const struct fl_action *fl_action_by_trace(const char *name);
/* The "status" action's name of a SCSI status byte ("busy", ...), or NULL when the action cannot
 * answer with it. */
const char *fl_action_status_name(uint8_t status);
/* The phase in which the engine carries out a (its row's, or phase_of's). */
enum fl_action_phase fl_action_phase(const struct sc_action *a);

#ifdef __cplusplus
}
#endif
#endif
