/* SPDX-License-Identifier: MIT */
/*
 * fl_scenario.h - the scenario model: the one reader of scenario files.
 *
 * A scenario (JSON, docs/scenario-format.md) is parsed and validated here
 * once, into the typed model below: LUNs, rules and their actions, task
 * management and transport behaviour, states and transitions, and the check
 * section (workload steps and expectations). The fault engine (faults/), the
 * front ends, the VM lab and the libiscsi runner all take this model; nothing
 * else in the tree reads scenario content.
 *
 * A loaded scenario is immutable and reference-counted.
 */
#ifndef FL_SCENARIO_H
#define FL_SCENARIO_H

#include "fl_check.h"
#include "fl_target.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Front ends a scenario may name; lint checks that each action fits them. */
enum fl_frontend {
	FL_FE_ANY = 0,
	FL_FE_ISCSI = 1 << 0, /* faultlun serve */
	FL_FE_TCMU = 1 << 1,  /* handler_faultlun.so under tcmu-runner */
	FL_FE_VM = 1 << 2,    /* faultlun vm (runs one of the above in a guest) */
};

/* One problem found in a scenario: FILE:LINE:COL: message. */
struct fl_diag {
	char *file;
	int line, col;
	char *msg;
};
/*
 * The problems of one load. At most FL_DIAGS_MAX are kept (the first found);
 * `more` counts the others, which fl_diags_print sums up in one line.
 */
#define FL_DIAGS_MAX 100
struct fl_diags {
	struct fl_diag *v;
	size_t n, cap;
	size_t more;
};
void fl_diags_print(const struct fl_diags *d, FILE *out);
void fl_diags_free(struct fl_diags *d);

/* Prints the sense key and ASC/ASCQ names a scenario may use, one per line. */
void fl_sense_names_print(FILE *out);

/*
 * Limits on a scenario text (docs/scenario-format.md, "Limits"): its size in
 * bytes, its JSON values, their nesting, the entries of one list, its rules
 * (and transport rules, and transitions, each), checked before the text is built into a tree, so
 * that a crafted file costs time and memory in proportion to its size; and how long a silent pipe
 * is waited for.
 */
#define FL_SCENARIO_MAX_BYTES (4u << 20)
#define FL_SCENARIO_MAX_VALUES 131072
#define FL_SCENARIO_MAX_DEPTH 64
#define FL_SCENARIO_MAX_LIST 4096
#define FL_SCENARIO_MAX_RULES 1024
#define FL_SCENARIO_READ_IDLE_MS 10000

/* A parsed, validated scenario. Immutable once loaded; never half-loaded. */
struct fl_scenario;

/*
 * Parses and validates (schema and meaning) a scenario for the given front
 * ends (a mask of enum fl_frontend; FL_FE_ANY checks against the ones the
 * scenario itself names). Returns 0 and *out, or -EINVAL with every problem
 * appended to diags (nothing allocated in *out), or -errno for I/O errors.
 */
int fl_scenario_load_file(const char *path, unsigned frontends, struct fl_scenario **out,
			  struct fl_diags *diags);
int fl_scenario_load_string(const char *name, const char *text, unsigned frontends,
			    struct fl_scenario **out, struct fl_diags *diags);
void fl_scenario_free(struct fl_scenario *sc);
/*
 * The text of the scenario file path without its faults (rules, tmf,
 * transport, transitions, states): what a runner serves until a check with
 * "arm": "workload" arms the whole scenario. malloc'd; NULL and errno on
 * failure (stdin cannot be read twice: a file is needed).
 */
char *fl_scenario_unarmed_text(const char *path);
/*
 * True when path is a regular file holding a JSON Schema document ("$schema"
 * and no "faultlun") rather than a scenario: scenarios/ ships the scenario
 * schema beside the scenarios, where a shell glob of them meets it.
 */
bool fl_scenario_file_is_schema(const char *path);

/* Accessors used by front ends and the CLI. */
const char *fl_scenario_name(const struct fl_scenario *sc);
const char *fl_scenario_description(const struct fl_scenario *sc);
unsigned fl_scenario_frontends(const struct fl_scenario *sc);
const char *fl_scenario_target_iqn(const struct fl_scenario *sc); /* NULL: default */
unsigned fl_scenario_lun_count(const struct fl_scenario *sc);
/* LUN number and core config of the i-th LUN (strings owned by sc). */
int fl_scenario_lun(const struct fl_scenario *sc, unsigned i, uint16_t *lun_id,
		    struct fl_lun_config *cfg);

/*
 * Target ports of the scenario ("ports"); 0 when it has none (one port,
 * relative target port 1, on the front end's own portal).
 */
unsigned fl_scenario_port_count(const struct fl_scenario *sc);
const struct sc_port *fl_scenario_port(const struct fl_scenario *sc, unsigned i);
/*
 * Target port group of relative target port rel_port (0 counts as 1); LUN
 * lun_id's default group (its "alua" "group", else 1) when the scenario has
 * no "ports" or does not list that port.
 */
uint16_t fl_scenario_port_group(const struct fl_scenario *sc, uint16_t lun_id, uint16_t rel_port);

/* Task management functions (SAM-5 7). */
enum fl_tmf_fn {
	FL_TMF_ABORT_TASK = 1,
	FL_TMF_ABORT_TASK_SET = 2,
	FL_TMF_CLEAR_ACA = 3,
	FL_TMF_CLEAR_TASK_SET = 4,
	FL_TMF_LUN_RESET = 5,
	FL_TMF_TARGET_WARM_RESET = 6,
	FL_TMF_TARGET_COLD_RESET = 7,
};
/* Answers; values below 256 are RFC 7143 11.6.1 response codes. */
enum fl_tmf_resp {
	FL_TMF_RESP_COMPLETE = 0,
	FL_TMF_RESP_TASK_NOT_EXIST = 1,
	FL_TMF_RESP_LUN_NOT_EXIST = 2,
	FL_TMF_RESP_NOT_SUPPORTED = 5,
	FL_TMF_RESP_REJECTED = 255,
	FL_TMF_RESP_NONE = 256,		   /* never answer: send nothing */
	FL_TMF_RESP_DROP_CONNECTION = 257, /* close the connection instead */
};
/* Transport (iSCSI) behaviour: asked for each PDU received or to be sent. */
enum fl_pdu_kind {
	FL_PDU_NOP_OUT = 1,
	FL_PDU_SCSI_CMD,
	FL_PDU_TMF_REQ,
	FL_PDU_LOGIN_REQ,
	FL_PDU_TEXT_REQ,
	FL_PDU_DATA_OUT,
	FL_PDU_LOGOUT_REQ,
	FL_PDU_SNACK,
	FL_PDU_NOP_IN,
	FL_PDU_SCSI_RESP,
	FL_PDU_TMF_RESP,
	FL_PDU_LOGIN_RESP,
	FL_PDU_TEXT_RESP,
	FL_PDU_DATA_IN,
	FL_PDU_LOGOUT_RESP,
	FL_PDU_R2T,
	FL_PDU_ASYNC,
	FL_PDU_REJECT,
};
struct fl_pdu_info {
	enum fl_pdu_kind kind;
	uint64_t nexus_id;
	uint16_t lun_id;
	bool has_cdb;		/* SCSI_CMD / DATA_OUT / DATA_IN / SCSI_RESP of a command */
	struct fl_cdb_info cdb; /* its decoded CDB when has_cdb */
	/*
	 * Without has_cdb: the CDB bytes of a command not yet decoded (an inbound
	 * SCSI Command PDU), decoded only if a transport rule asks for its opcode
	 * or class, so that the command itself is decoded once (struct fl_cmd).
	 */
	const uint8_t *raw_cdb;
	uint8_t raw_cdb_len;
	uint32_t data_sn; /* DATA_OUT / DATA_IN: DataSN; else 0 */
	uint32_t buffer_offset;
	uint16_t rel_port_id; /* the target port of the connection (0: the one port, 1) */
};
enum fl_xport_action {
	FL_XPORT_PASS = 0,
	FL_XPORT_DROP,	/* do not process (inbound) / do not send (outbound) */
	FL_XPORT_DELAY, /* process / send after delay_us */
	FL_XPORT_CLOSE, /* close the connection now (no logout) */
};
/* At most this many states (a rule's scope is a 64-bit mask). */
#define SC_MAX_STATES 64
/* tmf table index: enum fl_tmf_fn values 1..7. */
#define SC_TMF_NR 8

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
	bool has_sa; /* "service_action": the CDB's must be sa */
	uint8_t sa;
	enum sc_lba_kind lba;
	uint64_t first, last;
	struct sc_count count;
	bool has_window;
	uint64_t win_from_ms, win_to_ms; /* win_to_ms UINT64_MAX = open */
	char *initiator;		 /* fnmatch glob, or NULL */
	uint16_t port, port_group;	 /* relative target port / its group; 0 = any */
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
	VERB_OWNER,	 /* a vendor personality's LUN changes owner (target port group) */
	VERB_LATE_WRITE, /* held unanswered; the data lands later (docs/faults/late_write.md) */
	VERB_NR,	 /* the size of the registry (fl_action.h) */
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

/* The bytes an action's own parameters take in struct sc_action (fl_action.h FL_ACTION_ARGS). */
#define SC_ACTION_ARGS_SIZE 32

struct sc_action {
	enum sc_verb verb;
	bool has_delay; /* "delay_ms", which may come with another verb */
	struct sc_delay delay;
	int set_state; /* -1: none ("set_state" may come with any verb) */
	/*
	 * sense / status only: answer even when a unit attention is pending for
	 * the command's nexus (by default the UA comes first, SAM-5 r21 5.14).
	 */
	bool overtake_ua;
	/*
	 * The verb's own parameters, which only its file (scenario/actions/NAME.c)
	 * reads and writes, as its struct (FL_ACTION_ARGS).
	 */
	_Alignas(8) unsigned char args[SC_ACTION_ARGS_SIZE];
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
	uint16_t port, port_group; /* relative target port / its group; 0 = any */
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

/*
 * One target port ("ports"): a portal of the iSCSI front end, with its
 * relative target port identifier and target port group (SPC-4 r37 5.15.2.3).
 */
struct sc_port {
	char *name;   /* "id": what rules, the banner and the CLI call it */
	char *listen; /* "ADDR:PORT" */
	uint16_t rel_port_id;
	uint16_t tpg_id;
};
/* One target port group ("port_groups") and its initial state. */
struct sc_tpg {
	uint16_t id;
	enum fl_alua_state state;
};

struct sc_lun {
	uint16_t id;
	struct fl_lun_config cfg;
	char *vendor, *product, *revision, *serial, *store_path;
	uint8_t *vpd; /* cfg.vpd_raw */
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
	/* target ports and groups; nports == 0: one port (relative 1), as each LUN says */
	struct sc_port *ports;
	size_t nports;
	struct sc_tpg *tpgs;
	size_t ntpgs;
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
	struct fl_check *check;		  /* NULL: no check section */
};

/* ---- the registry of fault actions: fl_action.h, scenario/actions/ ---- */
#include "fl_action.h"

/* Class names ("read", ...) as used by scenarios, indexed by enum fl_cmd_class. */
extern const char *const sc_class_names[FL_CLASS_NR];
extern const char *const sc_tmf_names[SC_TMF_NR];
extern const char *const sc_pdu_names[FL_PDU_REJECT + 1];
const char *sc_verb_name(enum sc_verb v);

/*
 * Write-protects every LUN of a loaded scenario (`faultlun serve --read-only`),
 * as `"read_only": true` on each would. Call before fl_engine_create.
 */
void fl_scenario_set_read_only(struct fl_scenario *sc);

#ifdef __cplusplus
}
#endif
#endif
