/* SPDX-License-Identifier: MIT */
/*
 * target_internal.h - private declarations shared by the files of target/.
 *
 * Layering inside the core:
 *   lun.c      LUN life cycle, locking, submit path (inline or worker pool),
 *              UA queues and delivery, the one LBA range check, dispatch
 *   dirty.c    the write cache's volatile contents and fl_lun_power_loss
 *   cdb.c      THE opcode table (fl_opcode_desc): decode, dispatch, RSOC
 *   sense.c    THE sense table: enum sense_reason -> key/ASC/ASCQ, formats
 *   spc.c      SPC-4 commands: INQUIRY + VPD, MODE SENSE/SELECT, REQUEST SENSE,
 *              REPORT LUNS, REPORT SUPPORTED OPCODES, TUR, REPORT TPGS
 *   pr.c       RESERVE/RELEASE(6,10), PERSISTENT RESERVE IN/OUT
 *   sbc.c      SBC-3 media commands: READ/WRITE/VERIFY/CAW/SYNC CACHE/
 *              PRE-FETCH/READ CAPACITY/READ DEFECT DATA/START STOP, SBC-4
 *              ORWRITE and WRITE ATOMIC, and the shared write path
 *   sbc_prov.c WRITE SAME, UNMAP, GET LBA STATUS
 *   thin.c     provisioning map (pool accounting is in the write path)
 *   store_mem.c, store_file.c, store_null.c  backing stores behind struct store_ops
 *   target.c   struct fl_target: LUN numbering, REPORT LUNS, absent LUNs
 *   vendor.c   vendor personalities: the hook table and ownership (vendor.h);
 *              vendor_NAME.c one personality each
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
	SENSE_INVALID_OPCODE,		  /* ILLEGAL REQUEST 20/00 */
	SENSE_INVALID_FIELD_IN_CDB,	  /* ILLEGAL REQUEST 24/00 + field pointer */
	SENSE_LBA_OUT_OF_RANGE,		  /* ILLEGAL REQUEST 21/00 */
	SENSE_PARAM_LIST_LENGTH_ERROR,	  /* ILLEGAL REQUEST 1A/00 */
	SENSE_INVALID_FIELD_IN_PARAM,	  /* ILLEGAL REQUEST 26/00 + field pointer */
	SENSE_LUN_NOT_SUPPORTED,	  /* ILLEGAL REQUEST 25/00 */
	SENSE_SAVING_NOT_SUPPORTED,	  /* ILLEGAL REQUEST 39/00 */
	SENSE_MISCOMPARE,		  /* MISCOMPARE 1D/00, INFORMATION = offset */
	SENSE_SPACE_ALLOC_FAILED,	  /* DATA PROTECT 27/07 */
	SENSE_WRITE_PROTECTED,		  /* DATA PROTECT 27/00 */
	SENSE_NOT_READY_STOPPED,	  /* NOT READY 04/02 initializing cmd required */
	SENSE_ALUA_TRANSITIONING,	  /* NOT READY 04/0A */
	SENSE_ALUA_STANDBY,		  /* NOT READY 04/0B */
	SENSE_ALUA_UNAVAILABLE,		  /* NOT READY 04/0C */
	SENSE_MEDIUM_REMOVAL_PREVENTED,	  /* ILLEGAL REQUEST 53/02 */
	SENSE_WRITE_ERROR,		  /* MEDIUM ERROR 0C/00 (store write failed) */
	SENSE_READ_ERROR,		  /* MEDIUM ERROR 11/00 (store read failed) */
	SENSE_INTERNAL_FAILURE,		  /* HARDWARE ERROR 44/00 */
	SENSE_INSUFFICIENT_RESOURCES,	  /* ILLEGAL REQUEST 55/03 (PR registrations) */
	SENSE_RESERVATION_CONFLICT,	  /* status RESERVATION CONFLICT, no sense */
	SENSE_UNIT_ATTENTION,		  /* pending UA delivered (lun.c only) */
	SENSE_CONDITION_MET,		  /* status CONDITION MET, no sense (PRE-FETCH) */
	SENSE_BUSY,			  /* status BUSY, no sense (out of memory) */
	SENSE_ALUA_OFFLINE,		  /* NOT READY 04/12 (ALUA offline) */
	SENSE_PARAM_NOT_SUPPORTED,	  /* ILLEGAL REQUEST 26/01 */
	SENSE_INVALID_RELEASE,		  /* ILLEGAL REQUEST 26/04 invalid release of PR */
	SENSE_MEDIUM_NOT_PRESENT,	  /* NOT READY 3A/00 (removable medium ejected) */
	SENSE_INSUFFICIENT_REG_RESOURCES, /* ILLEGAL REQUEST 55/04 (PR OUT REGISTER, SPC-4 6.16) */
	SENSE_VENDOR,			  /* a personality's sense: x->vkey/vasc/vascq (vendor.h) */
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
	bool sks_cdb;	    /* C/D bit: 1 = CDB, 0 = parameter data */
	uint16_t sks_field; /* byte */
	int8_t sks_bit;	    /* -1 when no bit pointer */
	/* INFORMATION field (e.g. MISCOMPARE offset); `info` is the decoded CDB */
	bool info_valid;
	uint64_t information;
	/* state of the nexus the command came from (never NULL in a handler) */
	struct nexus_state *ns;
	struct fl_target *tgt; /* the target the command came through, or NULL */
	/* SENSE_UNIT_ATTENTION: the condition being reported */
	uint8_t ua_asc, ua_ascq;
	/* SENSE_VENDOR: the personality's sense (vendor_sense in vendor.h) */
	uint8_t vkey, vasc, vascq;
	/*
	 * LBA range after the one range check in lun.c (has_lba only): for
	 * opcodes with OPF_ZERO_TO_END a length of 0 is widened to the end.
	 */
	uint64_t lba;
	uint64_t nblk;
};

/*
 * Copies `avail` bytes of parameter data to the data-in buffer, truncated to
 * the CDB's allocation length and the buffer; sets data_in_len and residual.
 */
void exec_data_in(struct exec_ctx *x, const void *buf, uint32_t avail, uint32_t alloc_len);

/* Sets the field pointer for a 24/00 or 26/00 and returns `reason`. */
enum sense_reason exec_invalid_field(struct exec_ctx *x, enum sense_reason reason, uint16_t byte,
				     int8_t bit);

typedef enum sense_reason (*exec_fn)(struct exec_ctx *x);

/* Flags of an opcode descriptor. */
#define OPF_MEDIA 0x01 /* accesses the medium: blocked by NOT READY / ALUA */
#define OPF_NO_UA                                                                                  \
	0x02 /* runs without reporting a pending UA (INQUIRY, REPORT LUNS, REQUEST SENSE) */
#define OPF_CONFLICT                                                                               \
	0x04 /* refused with RESERVATION CONFLICT when another nexus holds a reservation */
#define OPF_PR_READ_OK 0x08  /* allowed for non-holders under Write Exclusive */
#define OPF_LBA_EXISTS 0x10  /* the LBA itself must be below capacity even with length 0 */
#define OPF_ZERO_TO_END 0x20 /* length 0 means "from LBA to the last block" */
#define OPF_DATA_IN 0x40     /* returns data to the initiator */
#define OPF_DATA_OUT 0x80    /* takes data from the initiator */
/* served in every ALUA state, even TRANSITIONING (SPC-4 r37 5.15.2.4.6) */
#define OPF_ALUA_ANY 0x100
/* changes the medium: refused with DATA PROTECT 27/00 on a write-protected LUN */
#define OPF_MODIFIES 0x200

/*
 * Block limits the SBC handlers enforce; spc.c reports the same values in
 * VPD page B0h (SBC-3 r36 6.5.3). Maximum transfer length is per LUN
 * (cfg.max_xfer_blocks, 0 = SBC_DEFAULT_MAX_XFER_BYTES / block size).
 */
#define SBC_DEFAULT_MAX_XFER_BYTES (32u << 20) /* 65536 blocks of 512 bytes */
#define SBC_MAX_CAW_BLOCKS 255u		       /* MAXIMUM COMPARE AND WRITE LENGTH */
#define SBC_MAX_UNMAP_LBA_COUNT 0x100000u      /* MAXIMUM UNMAP LBA COUNT */
#define SBC_MAX_UNMAP_DESCRIPTORS 256u	       /* MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
#define SBC_MAX_WS_BLOCKS 0x400000u	       /* MAXIMUM WRITE SAME LENGTH */
/*
 * WRITE ATOMIC(16) (SBC-4): MAXIMUM ATOMIC TRANSFER LENGTH is the LUN's
 * maximum transfer length (capped to the 16-bit TRANSFER LENGTH field);
 * ATOMIC ALIGNMENT and ATOMIC TRANSFER LENGTH GRANULARITY are 0 (none);
 * atomic boundaries are not supported (MAXIMUM ATOMIC BOUNDARY SIZE 0).
 */
#define SBC_MAX_ATOMIC_BLOCKS 0xffffu
#define SBC_WSNZ 1		    /* WRITE SAME with 0 blocks is refused */
#define SBC_CACHE_BYTES (64u << 20) /* PRE-FETCH fits when its range is smaller */
/* Maximum transfer length of a LUN in blocks (lun.c). */
uint32_t lun_max_xfer_blocks(const struct fl_lun *lun);
/* One row of the opcode table in cdb.c. */
struct fl_opcode_desc {
	uint8_t opcode;
	uint16_t service_action; /* matched when has_sa */
	bool has_sa;
	uint8_t cdb_len;
	enum fl_cmd_class cls;
	uint16_t flags;
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
/* True when the opcode has rows with service actions (unknown SA -> 24/00). */
bool cdb_opcode_has_sa(uint8_t opcode);

/* Fills the command's status and sense for `reason` in the LUN's format. */
void sense_complete(struct exec_ctx *x, enum sense_reason reason);
/* Encodes key/asc/ascq (+info, +sks) in fixed or descriptor format. */
uint8_t sense_encode(uint8_t *buf, bool descriptor, uint8_t key, uint8_t asc, uint8_t ascq,
		     bool info_valid, uint64_t info, const uint8_t *sks3);

/*
 * Sparse table (sparse.c): pointers by a 64-bit index in a radix tree that
 * holds only the nodes above present entries. Zero-initialised = empty. Not
 * thread-safe (the LUN lock covers the stores and the thin map).
 */
#define SPARSE_MAX_INDEX ((1ull << 54) - 1)
struct sparse_node;
struct sparse_tab {
	struct sparse_node *root;
	unsigned height; /* levels of 512 slots; indexes below 2^(9 * height) */
};
void *sparse_get(const struct sparse_tab *t, uint64_t i);
/* Stores a non-NULL item at i: 0, -ENOMEM or -ERANGE (i > SPARSE_MAX_INDEX). */
int sparse_set(struct sparse_tab *t, uint64_t i, void *item);
/* Removes the entries of [from, to), calling drop (when not NULL) on each item. */
void sparse_clear(struct sparse_tab *t, uint64_t from, uint64_t to,
		  void (*drop)(void *item, void *arg), void *arg);
/* The first item at an index in [*i, end), with its index in *i; NULL if none. */
void *sparse_next(const struct sparse_tab *t, uint64_t *i, uint64_t end);
/* Number of tree nodes allocated (about 4 KiB each). */
size_t sparse_nodes(const struct sparse_tab *t);

/* Backing store contract: byte addressed, whole blocks only. */
struct thin_map;
struct store;
struct store_ops {
	int (*read)(struct store *s, void *buf, uint64_t off, uint64_t len);
	int (*write)(struct store *s, const void *buf, uint64_t off, uint64_t len);
	/* discard: subsequent reads return zeroes */
	int (*discard)(struct store *s, uint64_t off, uint64_t len);
	int (*sync)(struct store *s);
	int (*resize)(struct store *s, uint64_t bytes);
	void (*close)(struct store *s);
	/* optional: marks the blocks the store holds data for (thin LUN reopen) */
	int (*mapped)(struct store *s, struct thin_map *t, unsigned block_shift);
};
struct store {
	const struct store_ops *ops;
	uint64_t size;
	bool async; /* true: execute on a worker thread (file store) */
};
int store_mem_open(uint64_t bytes, struct store **out);
/* Reads zeroes, drops writes; for measuring everything but the store. */
int store_null_open(uint64_t bytes, struct store **out);
/*
 * dir NULL: path is the operator's (any file, a regular file or a block
 * device). Otherwise path is a scenario's, opened beneath dir: regular
 * files only, no symbolic link, no absolute path, no "..".
 */
int store_file_open(const char *path, const char *dir, uint64_t bytes, struct store **out);
/* Tests set it to take the openat(O_NOFOLLOW) walk instead of openat2. */
extern bool store_file_no_openat2;

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
	/*
	 * PREVENT ALLOW MEDIUM REMOVAL from this nexus (SPC-4 r37 6.13): the
	 * LU's removal_prevented is the OR over nexuses; a nexus that goes away
	 * takes its prevention with it.
	 */
	bool prevent_removal;
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
	bool wce, rcd;	   /* caching page 0x08 */
	bool d_sense, swp; /* control page 0x0A */
	uint8_t qerr;
	uint8_t tst;
	uint8_t mrie; /* informational exceptions 0x1C */
	bool dexcpt, perf, test, logerr;
	uint32_t interval_timer, report_count;
};

/*
 * Provisioning map (thin.c): one bit per logical block, allocated lazily in
 * leaves of THIN_LEAF_BLOCKS so that a sparse multi-terabyte LUN costs little.
 */
struct thin_map;
int thin_create(uint64_t nblocks, struct thin_map **out);
void thin_destroy(struct thin_map *t);
int thin_resize(struct thin_map *t, uint64_t nblocks);
bool thin_is_mapped(const struct thin_map *t, uint64_t lba);
/* Number of unmapped blocks in [lba, lba+n). */
uint64_t thin_count_unmapped(const struct thin_map *t, uint64_t lba, uint64_t n);
/* Maps / unmaps a range; return the number of blocks whose state changed. */
uint64_t thin_map_range(struct thin_map *t, uint64_t lba, uint64_t n);
uint64_t thin_unmap_range(struct thin_map *t, uint64_t lba, uint64_t n);
/* Blocks from lba (at most max) sharing lba's mapped state. */
uint64_t thin_extent(const struct thin_map *t, uint64_t lba, uint64_t max, bool *mapped);
uint64_t thin_mapped_count(const struct thin_map *t);

/*
 * SBC write path shared by every command that changes the medium (sbc.c):
 * checks the pool, records previous contents for power loss when the write
 * cache holds the data, writes, maps, raises the soft-threshold UA, and makes
 * the range durable when `fua` or the write cache is off. buf holds n blocks.
 */
enum sense_reason sbc_write_blocks(struct exec_ctx *x, uint64_t lba, uint64_t n, const uint8_t *buf,
				   bool fua);
/* Deallocates a range (UNMAP, WRITE SAME with UNMAP) with the same rules. */
enum sense_reason sbc_unmap_blocks(struct exec_ctx *x, uint64_t lba, uint64_t n);

/*
 * Dirty-block record for power loss (lun.c): previous contents of blocks
 * written while the write cache was on and not yet made durable.
 */
struct dirty_set;
/*
 * Saves the current contents of not-yet-recorded blocks of a range. Returns
 * 0, 1 when the range is larger than the cache (write it through), -errno.
 */
int dirty_note(struct fl_lun *lun, uint64_t lba, uint64_t n);
/* Forgets a range (now durable); n == UINT64_MAX: everything. */
void dirty_clear(struct fl_lun *lun, uint64_t lba, uint64_t n);
/* Frees the record itself (LUN destroy). */
void dirty_free(struct fl_lun *lun);
/* Number of blocks currently recorded. */
uint64_t dirty_count(const struct fl_lun *lun);

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
	bool stopped;	     /* START STOP UNIT with START=0 */
	bool medium_ejected; /* removable: START STOP UNIT with LOEJ=1, START=0 */
	bool removal_prevented;
	/* asymmetric access state of each target port group, indexed as cfg.tpgs */
	enum fl_alua_state tpg_state[FL_MAX_PORTS];
	/* unsynced writes, for power loss: sorted LBA set of dirty blocks */
	struct dirty_set *dirty;
	/* async execution (file store) */
	pthread_t *workers;
	unsigned nworkers;
	struct work_queue *wq;
	unsigned inflight;
	pthread_cond_t idle;
	bool stopping;
	/*
	 * READs of a blocking store in progress without the LUN lock (sbc.c);
	 * WRITE ATOMIC waits for them so that no read sees half of it.
	 */
	unsigned unlocked_reads;
	pthread_cond_t reads_done;
	/* vendor personality (vendor.h): NULL for a plain LUN */
	const struct vendor_ops *vops;
	struct vendor_state *vstate;
	/* the target holding this LUN (set by fl_target_add_lun), or NULL */
	struct fl_target *target;
	uint16_t lun_id;
};

/* Finds or creates the state of a nexus (LUN locked). NULL on ENOMEM. */
struct nexus_state *lun_nexus(struct fl_lun *lun, const struct fl_nexus *n);
/* Queues a UA on one nexus state, keeping SAM-5 precedence (LUN locked). */
void ua_push(struct nexus_state *ns, uint8_t asc, uint8_t ascq);
/* Removes and returns the first pending UA; false when none (LUN locked). */
bool ua_pop(struct nexus_state *ns, struct ua_entry *out);
/* Drops every pending UA asc/ascq of one nexus (e.g. 3F/0E on REPORT LUNS). */
void ua_clear(struct nexus_state *ns, uint8_t asc, uint8_t ascq);
/* Queues a UA on every nexus (except `except`, FL_ALL_NEXUS for none). */
void lun_ua_all(struct fl_lun *lun, uint64_t except, uint8_t asc, uint8_t ascq);

/*
 * REPORT LUNS parameter data (SPC-4 6.33) of the target the LUN belongs to
 * (only LUN 0 when the LUN is not in a target). x->lun may be NULL for an
 * absent LUN addressed through a target (then x->tgt is set). spc_report_luns
 * can simply return this.
 */
enum sense_reason target_report_luns(struct exec_ctx *x);

/* Handlers of spc.c / pr.c / sbc.c (referenced by the table in cdb.c). */
enum sense_reason spc_test_unit_ready(struct exec_ctx *x);
enum sense_reason spc_inquiry(struct exec_ctx *x);
enum sense_reason spc_mode_sense(struct exec_ctx *x);
enum sense_reason spc_mode_select(struct exec_ctx *x);
enum sense_reason spc_request_sense(struct exec_ctx *x);
enum sense_reason spc_report_luns(struct exec_ctx *x);
enum sense_reason spc_report_supported_opcodes(struct exec_ctx *x);
enum sense_reason spc_report_target_port_groups(struct exec_ctx *x);
enum sense_reason spc_set_target_port_groups(struct exec_ctx *x);
/* Index in cfg.tpgs of the group of relative target port rel_port (LUN locked). */
unsigned lun_tpg_index(const struct fl_lun *lun, uint16_t rel_port);
/* The asymmetric access state a command through rel_port meets (LUN locked). */
enum fl_alua_state lun_port_state(const struct fl_lun *lun, uint16_t rel_port);
/* Sets group idx's state; UA 2A/06 for every nexus but `except` (LUN locked). */
void lun_set_tpg_state(struct fl_lun *lun, unsigned idx, enum fl_alua_state state, uint64_t except);
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
enum sense_reason sbc_read_defect_data(struct exec_ctx *x);
enum sense_reason sbc_orwrite(struct exec_ctx *x);
enum sense_reason sbc_write_atomic(struct exec_ctx *x);

#endif
