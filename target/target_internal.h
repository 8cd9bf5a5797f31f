/* SPDX-License-Identifier: MIT */
/*
 * target_internal.h - private declarations shared by the files of target/.
 *
 * Layering inside the core:
 *   lun.c      LUN life cycle, locking, submit path, UA delivery, dispatch
 *   cdb.c      THE opcode table (fl_opcode_desc): decode, dispatch, RSOC
 *   sense.c    THE sense table: enum sense_reason -> key/ASC/ASCQ, formats
 *   spc.c      SPC-4 commands: INQUIRY + VPD, MODE SENSE/SELECT, REQUEST SENSE,
 *              REPORT LUNS, REPORT SUPPORTED OPCODES, TUR, REPORT TPGS
 *   pr.c       RESERVE/RELEASE(6,10), PERSISTENT RESERVE IN/OUT
 *   sbc.c      SBC-3 media commands: READ/WRITE/VERIFY/CAW/WRITE SAME/UNMAP/
 *              GET LBA STATUS/SYNC CACHE/PRE-FETCH/READ CAPACITY/START STOP
 *   thin.c     provisioning map and pool accounting
 *   store_mem.c, store_file.c  backing stores behind struct store_ops
 *   target.c   struct fl_target: LUN numbering, REPORT LUNS, absent LUNs
 *
 * A command handler gets the LUN locked and returns a sense reason; it never
 * builds sense bytes itself. SENSE_OK means GOOD (data_in_len set by handler).
 */
#ifndef FL_TARGET_INTERNAL_H
#define FL_TARGET_INTERNAL_H

#include "fl_target.h"

#include <pthread.h>

/* Reasons a command fails; sense.c maps each to status + key/ASC/ASCQ. */
enum sense_reason {
	SENSE_OK = 0,
	SENSE_INVALID_OPCODE,	       /* ILLEGAL REQUEST 20/00 */
	SENSE_INVALID_FIELD_IN_CDB,    /* ILLEGAL REQUEST 24/00 + field pointer */
	SENSE_LBA_OUT_OF_RANGE,	       /* ILLEGAL REQUEST 21/00 */
	SENSE_PARAM_LIST_LENGTH_ERROR, /* ILLEGAL REQUEST 1A/00 */
	SENSE_INVALID_FIELD_IN_PARAM,  /* ILLEGAL REQUEST 26/00 + field pointer */
	SENSE_LUN_NOT_SUPPORTED,       /* ILLEGAL REQUEST 25/00 */
	SENSE_SAVING_NOT_SUPPORTED,    /* ILLEGAL REQUEST 39/00 */
	SENSE_MISCOMPARE,	       /* MISCOMPARE 1D/00, INFORMATION = offset */
	SENSE_SPACE_ALLOC_FAILED,      /* DATA PROTECT 27/07 */
	SENSE_WRITE_PROTECTED,	       /* DATA PROTECT 27/00 */
	SENSE_NOT_READY_STOPPED,       /* NOT READY 04/02 initializing cmd required */
	SENSE_ALUA_TRANSITIONING,      /* NOT READY 04/0A */
	SENSE_ALUA_STANDBY,	       /* NOT READY 04/0B */
	SENSE_ALUA_UNAVAILABLE,	       /* NOT READY 04/0C */
	SENSE_MEDIUM_REMOVAL_PREVENTED,/* ILLEGAL REQUEST 53/02 */
	SENSE_WRITE_ERROR,	       /* MEDIUM ERROR 0C/00 (store write failed) */
	SENSE_READ_ERROR,	       /* MEDIUM ERROR 11/00 (store read failed) */
	SENSE_INTERNAL_FAILURE,	       /* HARDWARE ERROR 44/00 */
	SENSE_INSUFFICIENT_RESOURCES,  /* ILLEGAL REQUEST 55/03 (PR registrations) */
	SENSE_RESERVATION_CONFLICT,    /* status RESERVATION CONFLICT, no sense */
	SENSE_UNIT_ATTENTION,	       /* pending UA delivered (lun.c only) */
	SENSE_REASON_NR
};

/* Context of one execution: the handler fills field/bit for 24/00, 26/00. */
struct exec_ctx {
	struct fl_lun *lun;
	struct fl_cmd *cmd;
	const struct fl_opcode_desc *desc;
	struct fl_cdb_info info;
	/* sense-key-specific field pointer (SPC-4 4.5.2.4.2) */
	bool sks_valid;
	bool sks_cdb;		/* C/D bit: 1 = CDB, 0 = parameter data */
	uint16_t sks_field;	/* byte */
	int8_t sks_bit;		/* -1 when no bit pointer */
	/* INFORMATION field (e.g. MISCOMPARE offset) */
	bool info_valid;
	uint64_t info;
};

/* Sets the field pointer for a 24/00 or 26/00 and returns `reason`. */
enum sense_reason exec_invalid_field(struct exec_ctx *x, enum sense_reason reason,
				     uint16_t byte, int8_t bit);

typedef enum sense_reason (*exec_fn)(struct exec_ctx *x);

/* Flags of an opcode descriptor. */
#define OPF_MEDIA 0x01	    /* accesses the medium: blocked by NOT READY / ALUA */
#define OPF_NO_UA 0x02	    /* runs without reporting a pending UA (INQUIRY, REPORT LUNS, REQUEST SENSE) */
#define OPF_CONFLICT 0x04   /* refused with RESERVATION CONFLICT when another nexus holds a reservation */
#define OPF_PR_READ_OK 0x08 /* allowed for non-holders under Write Exclusive */

/* One row of the opcode table in cdb.c. */
struct fl_opcode_desc {
	uint8_t opcode;
	uint16_t service_action; /* matched when has_sa */
	bool has_sa;
	uint8_t cdb_len;
	enum fl_cmd_class cls;
	uint8_t flags;
	const char *name;
	exec_fn exec;
	/* decodes LBA / length into info; NULL when the CDB has none */
	void (*decode)(const uint8_t *cdb, struct fl_cdb_info *info);
	/* CDB usage data for REPORT SUPPORTED OPERATION CODES (SPC-4 6.35) */
	uint8_t usage[16];
};

/* Looks up the descriptor for a CDB; NULL when unsupported. */
const struct fl_opcode_desc *cdb_lookup(const uint8_t *cdb, size_t len);
/* Iterates the table (for RSOC): returns the i-th row or NULL past the end. */
const struct fl_opcode_desc *cdb_table_row(size_t i);

/* Fills the command's status and sense for `reason` in the LUN's format. */
void sense_complete(struct exec_ctx *x, enum sense_reason reason);
/* Encodes key/asc/ascq (+info, +sks) in fixed or descriptor format. */
uint8_t sense_encode(uint8_t *buf, bool descriptor, uint8_t key, uint8_t asc, uint8_t ascq,
		     bool info_valid, uint64_t info, const uint8_t *sks3);

/* Backing store contract: byte addressed, whole blocks only. */
struct store;
struct store_ops {
	int (*read)(struct store *s, void *buf, uint64_t off, uint64_t len);
	int (*write)(struct store *s, const void *buf, uint64_t off, uint64_t len);
	/* discard: subsequent reads return zeroes */
	int (*discard)(struct store *s, uint64_t off, uint64_t len);
	int (*sync)(struct store *s);
	int (*resize)(struct store *s, uint64_t bytes);
	void (*close)(struct store *s);
};
struct store {
	const struct store_ops *ops;
	uint64_t size;
	bool async; /* true: execute on a worker thread (file store) */
};
int store_mem_open(uint64_t bytes, struct store **out);
int store_file_open(const char *path, uint64_t bytes, struct store **out);

/* Pending unit attention conditions, one queue per I_T nexus. */
#define UA_QUEUE_MAX 16
struct ua_entry {
	uint8_t asc, ascq;
};
struct nexus_state {
	uint64_t id;
	char *initiator;
	uint16_t rel_port_id;
	struct ua_entry ua[UA_QUEUE_MAX];
	unsigned ua_count;
	/* last sense for REQUEST SENSE (SPC-4 6.29: deferred / current) */
	uint8_t last_sense[FL_SENSE_MAX];
	uint8_t last_sense_len;
	struct nexus_state *next;
};

/* Persistent reservations (SPC-4 5.12). */
#define PR_MAX_REGISTRANTS 64
struct pr_registrant {
	uint64_t nexus_id;
	char *initiator;
	uint64_t key;
};
struct pr_state {
	uint32_t generation;
	struct pr_registrant reg[PR_MAX_REGISTRANTS];
	unsigned nreg;
	bool reserved;
	uint8_t type; /* SPC-4 Table 169 */
	uint64_t holder_nexus;
	uint64_t holder_key;
	/* SPC-2 RESERVE(6/10) */
	bool legacy_reserved;
	uint64_t legacy_holder;
};

/* Mode page values (current, saved); defaults and changeable are constants. */
struct mode_state {
	bool wce, rcd;		/* caching page 0x08 */
	bool d_sense, swp;	/* control page 0x0A */
	uint8_t qerr;
	uint8_t tst;
	uint8_t mrie;		/* informational exceptions 0x1C */
	bool dexcpt, perf, test, logerr;
	uint32_t interval_timer, report_count;
};

struct thin_map; /* thin.c */

struct fl_lun {
	pthread_mutex_t lock;
	struct fl_lun_config cfg; /* strings owned (strdup'd) */
	uint64_t num_blocks;
	uint32_t block_size;
	unsigned block_shift;
	struct store *store;
	struct mode_state mode, mode_saved;
	struct nexus_state *nexuses;
	struct pr_state pr;
	struct thin_map *thin;
	bool soft_threshold_reported;
	bool stopped;		  /* START STOP UNIT with START=0 */
	bool removal_prevented;
	enum fl_alua_state alua_state;
	/* unsynced writes, for power loss: sorted LBA set of dirty blocks */
	struct dirty_set *dirty;
	/* async execution (file store) */
	pthread_t *workers;
	unsigned nworkers;
	struct work_queue *wq;
	unsigned inflight;
	pthread_cond_t idle;
};

/* Finds or creates the state of a nexus (LUN locked). NULL on ENOMEM. */
struct nexus_state *lun_nexus(struct fl_lun *lun, const struct fl_nexus *n);
/* Queues a UA on one nexus state, keeping SAM-5 precedence (LUN locked). */
void ua_push(struct nexus_state *ns, uint8_t asc, uint8_t ascq);

/* Handlers of spc.c / pr.c / sbc.c (referenced by the table in cdb.c). */
enum sense_reason spc_test_unit_ready(struct exec_ctx *x);
enum sense_reason spc_inquiry(struct exec_ctx *x);
enum sense_reason spc_mode_sense(struct exec_ctx *x);
enum sense_reason spc_mode_select(struct exec_ctx *x);
enum sense_reason spc_request_sense(struct exec_ctx *x);
enum sense_reason spc_report_luns(struct exec_ctx *x);
enum sense_reason spc_report_supported_opcodes(struct exec_ctx *x);
enum sense_reason spc_report_target_port_groups(struct exec_ctx *x);
enum sense_reason spc_prevent_allow(struct exec_ctx *x);
enum sense_reason pr_reserve(struct exec_ctx *x);
enum sense_reason pr_release(struct exec_ctx *x);
enum sense_reason pr_in(struct exec_ctx *x);
enum sense_reason pr_out(struct exec_ctx *x);
/* Checks the PR/reservation state for a command (LUN locked). */
enum sense_reason pr_check_conflict(struct exec_ctx *x);
enum sense_reason sbc_read(struct exec_ctx *x);
enum sense_reason sbc_write(struct exec_ctx *x);
enum sense_reason sbc_write_verify(struct exec_ctx *x);
enum sense_reason sbc_verify(struct exec_ctx *x);
enum sense_reason sbc_sync_cache(struct exec_ctx *x);
enum sense_reason sbc_write_same(struct exec_ctx *x);
enum sense_reason sbc_unmap(struct exec_ctx *x);
enum sense_reason sbc_get_lba_status(struct exec_ctx *x);
enum sense_reason sbc_compare_and_write(struct exec_ctx *x);
enum sense_reason sbc_prefetch(struct exec_ctx *x);
enum sense_reason sbc_read_capacity10(struct exec_ctx *x);
enum sense_reason sbc_read_capacity16(struct exec_ctx *x);
enum sense_reason sbc_start_stop(struct exec_ctx *x);

#endif
