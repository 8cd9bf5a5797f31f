/* SPDX-License-Identifier: MIT */
/*
 * faults_internal.h - private declarations shared by the files of faults/.
 *
 * Layering inside the fault engine:
 *   diag.c         fl_diags, and the position index of a JSON text (jpos_*)
 *   sense_names.c  SPC-4 sense key and ASC/ASCQ names (SPC-4 r37 4.5.6, Annex D)
 *   scenario.c     top level, LUNs, states, check: JSON -> struct fl_scenario
 *   scenario_values.c  value parsers and diagnostics at a JSON path
 *   scenario_rules.c   rules and actions
 *   scenario_tmf.c     tmf, transport, transitions
 *   scenario_check.c   checks of meaning over the whole document
 *   lba_index.c    per-class interval index of rules (stabbing query)
 *   engine_program.c   a scenario compiled for an engine (rule index)
 *   engine.c       fl_engine_submit, matching, actions, state machine, PRNG
 *   engine_life.c  engine life cycle, replace, release, counters
 *   engine_tmf.c   task management, connection events, transport verdicts
 *   timer.c        the timer thread (CLOCK_MONOTONIC heap + condition variable)
 *   trace.c        JSON-lines trace and its subscribers
 *   ctl.c          the control socket
 *
 * The scenario is immutable after loading and reference-counted: an engine
 * takes a reference, so a caller may free its own as soon as it is handed over.
 */
#ifndef FL_FAULTS_INTERNAL_H
#define FL_FAULTS_INTERNAL_H

#include "fl_faults.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

/* At most this many states (a rule's scope is a 64-bit mask). */
#define SC_MAX_STATES 64
/* tmf table index: enum fl_tmf_fn values 1..7. */
#define SC_TMF_NR 8

/* ---- diagnostics and positions (diag.c) ---- */

/* Position of one JSON value (and of its key, when it is an object member). */
struct jpos_entry {
	char *path; /* "/rules/0/action/sense"; "" for the root */
	int key_line, key_col;
	int line, col;
};
struct jpos {
	struct jpos_entry *v;
	size_t n, cap;
};
/* Indexes every value of a JSON text by path; tolerant of invalid JSON. */
void jpos_build(struct jpos *p, const char *text, size_t len);
void jpos_free(struct jpos *p);
/* Finds the position of path (at its key when at_key and it has one). */
void jpos_find(const struct jpos *p, const char *path, bool at_key, int *line, int *col);

/* Appends FILE:LINE:COL: message to d. */
void diag_add(struct fl_diags *d, const char *file, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- sense names (sense_names.c) ---- */

struct sense_key_name {
	const char *name;
	uint8_t key;
};
struct sense_asc_name {
	const char *name;
	uint8_t asc, ascq;
};
extern const struct sense_key_name sense_key_names[];
extern const size_t sense_key_count;
extern const struct sense_asc_name sense_asc_names[];
extern const size_t sense_asc_count;
/* Looks a name up (case-sensitive); returns 0 or -ENOENT. */
int sense_key_by_name(const char *name, uint8_t *key);
int sense_asc_by_name(const char *name, uint8_t *asc, uint8_t *ascq);
const char *sense_key_name_of(uint8_t key);
const char *sense_asc_name_of(uint8_t asc, uint8_t ascq);

/* ---- the scenario model (scenario.c, scenario_rules.c) ---- */

/* Counting and probability, shared by SCSI and transport rules. */
struct sc_count {
	uint64_t nth, every, after, times; /* 0 = not given */
	bool has_prob;
	double prob;
};

enum sc_lba_kind {
	LBA_ANY = 0,	 /* no LBA condition */
	LBA_RANGE,	 /* [first, last] overlaps the command's range */
	LBA_CROSSES_END, /* the command reaches past the last LBA */
};

struct sc_match {
	bool lun_any;
	uint8_t lun_map[FL_MAX_LUNS / 8];
	unsigned class_mask; /* bit per enum fl_cmd_class; 0 with !has_opcode = any */
	bool has_opcode;
	uint8_t opcode_map[32];
	enum sc_lba_kind lba;
	uint64_t first, last;
	struct sc_count count;
	bool has_window;
	uint64_t win_from_ms, win_to_ms; /* win_to_ms UINT64_MAX = open */
	char *initiator;		 /* fnmatch glob, or NULL */
};

enum sc_verb {
	VERB_NONE = 0, /* only set_state (the command then executes normally) */
	VERB_SENSE,
	VERB_STATUS,
	VERB_DELAY, /* delay alone: execute normally afterwards */
	VERB_HOLD,
	VERB_DROP,
	VERB_DROP_RESPONSE,
	VERB_SHORT,
	VERB_CORRUPT,
	VERB_UA,
	VERB_POWER_LOSS,
	VERB_RESIZE,
	VERB_ALUA,
};

enum sc_hold_kind {
	HOLD_FOREVER = 1,
	HOLD_UNTIL_ABORT,
	HOLD_UNTIL_RESET,
	HOLD_UNTIL_RELEASE,
};

enum sc_dist {
	DIST_FIXED = 0,
	DIST_UNIFORM,
	DIST_LOGNORMAL,
	DIST_EXPONENTIAL,
};

struct sc_delay {
	enum sc_dist dist;
	double a, b; /* fixed: a ms; uniform: [a, b]; lognormal: mu, sigma (ln ms); exp: mean */
};

enum sc_sense_format {
	FORMAT_LUN = 0, /* whatever the LUN uses (D_SENSE) */
	FORMAT_FIXED,
	FORMAT_DESCRIPTOR,
};

struct sc_action {
	enum sc_verb verb;
	uint8_t key, asc, ascq;
	bool info_lba;
	enum sc_sense_format format;
	uint8_t status;
	bool has_delay;
	struct sc_delay delay;
	enum sc_hold_kind hold;
	bool short_in_blocks;
	uint32_t short_len;
	uint32_t corrupt_bytes;
	uint8_t ua_asc, ua_ascq;
	bool resize_in_blocks;
	uint64_t resize;
	enum fl_alua_state alua;
	int set_state; /* -1: none */
};

struct sc_rule {
	char *id;
	uint64_t states; /* 0: every state */
	struct sc_match m;
	struct sc_action a;
	bool until_written;
};

/* One way of answering a TMF, for the states it names. */
struct sc_tmf_case {
	uint64_t states; /* 0: every state */
	enum fl_tmf_resp respond;
	uint32_t delay_ms;
	bool ua; /* queue a UA after a completed reset */
	uint8_t ua_asc, ua_ascq;
	int then_state; /* -1: none */
	char **disarm;
	size_t ndisarm;
	bool clear_faults;
};
struct sc_tmf {
	struct sc_tmf_case *cases; /* first case whose states hold applies */
	size_t n;
};

struct sc_xrule {
	char *id;
	uint64_t states;
	uint32_t pdu_mask; /* bit per enum fl_pdu_kind */
	bool has_opcode;
	uint8_t opcode_map[32];
	unsigned class_mask;
	struct sc_count count;
	enum fl_xport_action action;
	uint32_t delay_us;
};

/* Standing session conditions; `set` says which keys were given. */
enum {
	SESS_IGNORE_NOP = 1 << 0,
	SESS_STALL = 1 << 1,
	SESS_LOGOUT = 1 << 2,
	SESS_NOP_IN = 1 << 3,
};
struct sc_session {
	unsigned set;
	bool ignore_nop_out, stall_max_cmd_sn, request_logout;
	uint32_t logout_after_ms;
	uint16_t logout_wait_s;
	uint32_t nop_in_interval_ms;
};

enum sc_on {
	ON_COMMANDS = 1,
	ON_AFTER_MS,
	ON_TMF,
	ON_RESET,
	ON_WRITE_BEYOND,
	ON_LOGIN,
	ON_LOGOUT,
};
struct sc_transition {
	int from; /* -1: any state */
	int to;
	enum sc_on on;
	uint64_t n; /* commands, ms, LBA */
	int tmf_fn;
};

struct sc_lun {
	uint16_t id;
	struct fl_lun_config cfg;
	char *vendor, *product, *revision, *serial, *store_path;
};

struct fl_scenario {
	atomic_int refs;
	char *file;
	char *name, *description;
	unsigned frontends;
	bool seed_set;
	uint64_t seed;
	char *iqn;
	struct sc_lun *luns;
	size_t nluns;
	char **states;
	size_t nstates;
	struct sc_transition *transitions;
	size_t ntransitions;
	struct sc_rule *rules;
	size_t nrules;
	struct sc_tmf tmf[SC_TMF_NR];
	struct sc_xrule *xrules;
	size_t nxrules;
	struct sc_session session;	  /* every state */
	struct sc_session *state_session; /* per state, nstates entries */
	char *check_json;
};

/* Parser context shared by scenario.c and scenario_rules.c. */
struct pctx {
	const char *file;
	struct fl_diags *d;
	struct jpos pos;
	int nerr;
	struct fl_scenario *sc;
	unsigned frontends; /* the front ends the scenario is checked for */
	json_t *root;
};

/* Builds BASE/KEY into the char array buf and yields buf. */
#define SUBP(buf, base, key) (snprintf(buf, sizeof(buf), "%s/%s", base, key), buf)

/* Reports a problem at path (its key when at_key). */
void perr(struct pctx *c, const char *path, bool at_key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Compact JSON of v, at most ~60 characters, for quoting in messages (static buffer per call). */
const char *pquote(const json_t *v, char *buf, size_t size);
/*
 * The candidate closest to word (edit distance), if close enough to be a typo,
 * else NULL. cands: n entries (or up to a NULL) `stride` bytes apart.
 */
const char *closest_word(const char *word, const char *const *cands, size_t n, size_t stride);
/* Reports every key of obj not in allowed (NULL-terminated); returns their count. */
int pkeys(struct pctx *c, const char *path, json_t *obj, const char *what,
	  const char *const *allowed);
/* Parses a non-negative integer: JSON integer or "0x.." / decimal string. */
bool pnum(struct pctx *c, const char *path, json_t *v, uint64_t max, uint64_t *out);
bool pbool(struct pctx *c, const char *path, json_t *v, bool *out);
bool pdouble(struct pctx *c, const char *path, json_t *v, double lo, double hi, double *out);
/* Parses a size: bytes, or a string with B/KiB/MiB/GiB/TiB/KB/MB/GB/TB/blocks. */
bool psize(struct pctx *c, const char *path, json_t *v, uint64_t *out, bool *in_blocks);
/* Parses a state name (reports unknown names); returns the index or -1. */
int pstate(struct pctx *c, const char *path, json_t *v);
/* Parses "states": a list of names -> mask. */
uint64_t pstates(struct pctx *c, const char *path, json_t *v);
/* Parses a sense "KEY/ASC_NAME", "KEY/0xAA/0xQQ" or {key, asc, ascq}. */
bool psense(struct pctx *c, const char *path, json_t *v, uint8_t *key, uint8_t *asc, uint8_t *ascq);
/* Parses "AA/QQ" (hex) or an ASC/ASCQ name. */
bool pascq(struct pctx *c, const char *path, json_t *v, uint8_t *asc, uint8_t *ascq);
/* Parses an ALUA state name ("active_optimized", ...). */
bool palua(struct pctx *c, const char *path, json_t *v, enum fl_alua_state *out);
char *xstrdup(const char *s);

/* Copies a string value (at most max characters when max) into *out. */
bool pstr(struct pctx *c, const char *path, json_t *v, size_t max, char **out);
/* Parses nth / every / after / times / probability of a match object. */
void parse_count(struct pctx *c, const char *path, json_t *m, struct sc_count *k);
/* Parses an opcode or a list of opcodes into a 256-bit map. */
bool parse_opcodes(struct pctx *c, const char *path, json_t *v, uint8_t map[32]);
/* Parses a command class or a list of classes into a mask. */
unsigned parse_classes(struct pctx *c, const char *path, json_t *v);
void parse_rules(struct pctx *c, json_t *rules);
void parse_tmf(struct pctx *c, json_t *tmf);
void parse_transport(struct pctx *c, json_t *tr);
void parse_transitions(struct pctx *c, json_t *tr);
void check_meaning(struct pctx *c);
void scenario_free_rules(struct fl_scenario *sc);

/* Class names ("read", ...) as used by scenarios, indexed by enum fl_cmd_class. */
extern const char *const sc_class_names[FL_CLASS_NR];
extern const char *const sc_tmf_names[SC_TMF_NR];
extern const char *const sc_pdu_names[FL_PDU_REJECT + 1];
const char *sc_verb_name(enum sc_verb v);

/* ---- LBA index (lba_index.c) ---- */

/* An interval [lo, hi] tagged with a rule number. */
struct lba_ival {
	uint64_t lo, hi;
	uint32_t rule;
};
/* A static interval tree over a sorted array (augmented with subtree max). */
struct lba_tree {
	struct lba_ival *v;
	uint64_t *maxhi;
	size_t n;
};
/* Builds from n intervals (copied); returns 0 or -ENOMEM. */
int lba_tree_build(struct lba_tree *t, const struct lba_ival *v, size_t n);
void lba_tree_free(struct lba_tree *t);
/* Calls fn(rule, ctx) for every interval overlapping [lo, hi]. */
void lba_tree_query(const struct lba_tree *t, uint64_t lo, uint64_t hi,
		    void (*fn)(uint32_t rule, void *ctx), void *ctx);

/* ---- timers (timer.c) ---- */

struct timer_node;
typedef void (*timer_fn)(struct timer_node *t);
struct timer_node {
	uint64_t due_ns;   /* CLOCK_MONOTONIC */
	size_t heap_index; /* SIZE_MAX when not queued */
	timer_fn fn;
};
struct timers;
int timers_start(struct timers **out);
/* Stops and joins the thread (after timers_drain: queued nodes never fire). */
void timers_stop(struct timers *t);
void timers_add(struct timers *t, struct timer_node *n, uint64_t due_ns);
/* Returns true when n was queued and is now removed (it will not fire). */
bool timers_cancel(struct timers *t, struct timer_node *n);
/* Removes and returns every queued node (used at shutdown). */
size_t timers_drain(struct timers *t, struct timer_node ***out);
/* A front end's loop takes the heap over / hands it back (see timer.c). */
int timers_adopt(struct timers *t, void (*kick)(void *arg), void *arg);
int timers_release(struct timers *t);
uint64_t timers_run_due(struct timers *t, unsigned *fired);
uint64_t mono_ns(void);

/* ---- PRNG ---- */

/* xoshiro256** seeded through splitmix64; one stream per rule. */
struct prng {
	uint64_t s[4];
};
void prng_seed(struct prng *p, uint64_t seed, uint64_t stream);
uint64_t prng_next(struct prng *p);
/* Uniform double in [0, 1). */
double prng_unit(struct prng *p);

#endif
