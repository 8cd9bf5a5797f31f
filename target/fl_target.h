/* SPDX-License-Identifier: MIT */
/*
 * fl_target.h - public contract of faultlun's logical-unit core.
 *
 * The core emulates SBC-3 direct-access logical units behind an asynchronous,
 * transport-independent interface. A front end (or the fault engine, which is
 * a pass-through layer) fills a struct fl_cmd and submits it; the core calls
 * cmd->done exactly once, either before fl_lun_submit returns (inline
 * completion, memory store) or later from a store worker thread (file store).
 * Nothing here knows about iSCSI, TCMU or JSON.
 *
 * Threading: every fl_lun_* function may be called from any thread; a LUN
 * serialises its own state with an internal lock. Completion callbacks are
 * called without that lock held and may submit new commands.
 */
#ifndef FL_TARGET_H
#define FL_TARGET_H

#include "fl_asc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* SAM-5 status codes. */
#define FL_STATUS_GOOD 0x00
#define FL_STATUS_CHECK_CONDITION 0x02
#define FL_STATUS_CONDITION_MET 0x04
#define FL_STATUS_BUSY 0x08
#define FL_STATUS_RESERVATION_CONFLICT 0x18
#define FL_STATUS_TASK_SET_FULL 0x28
#define FL_STATUS_ACA_ACTIVE 0x30
#define FL_STATUS_TASK_ABORTED 0x40

/* SPC-4 sense keys. */
#define FL_KEY_NO_SENSE 0x0
#define FL_KEY_RECOVERED_ERROR 0x1
#define FL_KEY_NOT_READY 0x2
#define FL_KEY_MEDIUM_ERROR 0x3
#define FL_KEY_HARDWARE_ERROR 0x4
#define FL_KEY_ILLEGAL_REQUEST 0x5
#define FL_KEY_UNIT_ATTENTION 0x6
#define FL_KEY_DATA_PROTECT 0x7
#define FL_KEY_BLANK_CHECK 0x8
#define FL_KEY_VENDOR_SPECIFIC 0x9
#define FL_KEY_COPY_ABORTED 0xa
#define FL_KEY_ABORTED_COMMAND 0xb
#define FL_KEY_VOLUME_OVERFLOW 0xd
#define FL_KEY_MISCOMPARE 0xe
#define FL_KEY_COMPLETED 0xf

/*
 * Operation codes named outside the opcode table: what the core's handlers,
 * the front ends and the tools test or send (SPC-4 r37 clause 6, SBC-3 r36
 * clause 5). The table (cdb.c) names every opcode the core serves, in words
 * too; fl_opcode_name reads it.
 */
#define SPC_OP_TEST_UNIT_READY 0x00
#define SPC_OP_REQUEST_SENSE 0x03
#define SPC_OP_INQUIRY 0x12
#define SPC_OP_RESERVE_6 0x16
#define SPC_OP_RELEASE_6 0x17
#define SBC_OP_READ_CAPACITY_10 0x25
#define SBC_OP_READ_10 0x28
#define SBC_OP_WRITE_10 0x2a
#define SBC_OP_SYNC_CACHE_10 0x35
#define SPC_OP_MODE_SELECT_10 0x55
#define SPC_OP_RESERVE_10 0x56
#define SPC_OP_RELEASE_10 0x57
#define SPC_OP_MODE_SENSE_10 0x5a
#define SPC_OP_VARIABLE_LENGTH 0x7f /* its length is in byte 7 (SPC-4 r37 4.2.5) */
#define SBC_OP_READ_16 0x88
#define SBC_OP_COMPARE_AND_WRITE 0x89
#define SBC_OP_WRITE_16 0x8a
#define SBC_OP_SYNC_CACHE_16 0x91
#define SBC_OP_WRITE_ATOMIC_16 0x9c
#define SBC_OP_SERVICE_ACTION_IN_16 0x9e
#define SBC_SA_READ_CAPACITY_16 0x10 /* service action of SERVICE ACTION IN(16) */
#define SPC_OP_REPORT_LUNS 0xa0
#define SPC_OP_MAINTENANCE_IN 0xa3
#define SPC_SA_REPORT_TPGS 0x0a /* service action of MAINTENANCE IN (SPC-4 r37 6.36) */
#define SBC_OP_READ_12 0xa8
#define SBC_OP_WRITE_12 0xaa

/* How sense data is laid out: the RESPONSE CODE of byte 0 (SPC-4 r37 4.5.1). */
enum fl_sense_format {
	FL_SENSE_FORMAT_UNKNOWN,    /* a response code other than 70h..73h */
	FL_SENSE_FORMAT_FIXED,	    /* 70h current, 71h deferred (SPC-4 r37 4.5.3) */
	FL_SENSE_FORMAT_DESCRIPTOR, /* 72h current, 73h deferred (SPC-4 r37 4.5.2) */
};

/* Sense data as an application client reads it; a field whose bytes are missing is 0. */
struct fl_sense_data {
	enum fl_sense_format format;
	uint8_t response_code;	/* byte 0, bits 6..0 */
	uint8_t key, asc, ascq; /* UNKNOWN format: 0 */
	bool info_valid;	/* fixed: VALID and bytes 3..6; descriptor: an information
				 * descriptor (type 00h, SPC-4 r37 4.5.2.2) with VALID */
	uint64_t info;
};

/*
 * The one reader of sense data on the initiator side (`faultlun send`, its
 * data-in decoder, the VM lab's SG_IO agent): decodes len bytes at p (len 0
 * is no sense) without reading past them. Returns s->format.
 */
enum fl_sense_format fl_sense_decode(const uint8_t *p, size_t len, struct fl_sense_data *s);
/* "fixed", "descriptor" or "unknown". */
const char *fl_sense_format_name(enum fl_sense_format f);

/* Largest sense buffer the core produces (SPC-4 4.5.1: at most 252 bytes). */
#define FL_SENSE_MAX 252
/* Largest CDB accepted (variable-length CDBs are refused with 20/00). */
#define FL_CDB_MAX 32

/* Command class: what the fault engine matches on. One class per opcode. */
enum fl_cmd_class {
	FL_CLASS_OTHER = 0,
	FL_CLASS_READ,	  /* READ 6/10/12/16, PRE-FETCH, VERIFY */
	FL_CLASS_WRITE,	  /* WRITE 6/10/12/16, WRITE AND VERIFY, WRITE SAME, COMPARE AND WRITE */
	FL_CLASS_FLUSH,	  /* SYNCHRONIZE CACHE 10/16 */
	FL_CLASS_UNMAP,	  /* UNMAP (and WRITE SAME with the UNMAP bit) */
	FL_CLASS_TUR,	  /* TEST UNIT READY */
	FL_CLASS_INQUIRY, /* INQUIRY */
	FL_CLASS_NR
};

/* Decoded view of a CDB, from the same opcode table that drives dispatch. */
struct fl_cdb_info {
	uint8_t opcode;
	uint16_t service_action; /* 0 when the opcode has none */
	bool known;		 /* opcode is in the table */
	enum fl_cmd_class cls;
	bool has_lba; /* lba/nblocks are meaningful */
	uint64_t lba;
	uint32_t nblocks; /* transfer length in logical blocks */
	bool data_out;	  /* initiator sends data */
	bool data_in;	  /* target returns data */
};

/* Fills *info from a CDB; returns 0, or -EINVAL for an empty/oversized CDB. */
int fl_cdb_decode(const uint8_t *cdb, size_t cdb_len, struct fl_cdb_info *info);
/* How many CDBs have been decoded (fl_cdb_decode calls, all threads): tests count with it. */
uint64_t fl_cdb_decode_count(void);

/*
 * Whether opcode has service actions (SPC-4 4.2.5.2: PERSISTENT RESERVE IN /
 * OUT, SERVICE ACTION IN / OUT (16), MAINTENANCE IN / OUT, the third-party
 * copy commands, and any the opcode table gives one).
 */
bool fl_opcode_has_sa(uint8_t opcode);
/* The service action field of a CDB whose opcode has them (byte 1 bits 4:0); -1 otherwise. */
int fl_cdb_service_action(const uint8_t *cdb, size_t len);

/* Human-readable opcode name ("READ(10)"), or NULL when unknown. */
const char *fl_opcode_name(uint8_t opcode, uint16_t service_action);

/*
 * An I_T nexus as the core sees it. `id` must be unique per nexus for the
 * life of the target (front ends use a session or device counter).
 * `initiator` is the initiator port name (iSCSI: "iqn...,i,0x<isid>"), used as
 * the TransportID in PERSISTENT RESERVE IN data. Copied on first sight.
 */
struct fl_nexus {
	uint64_t id;
	const char *initiator;
	uint16_t rel_port_id; /* relative target port identifier, 1-based */
};

struct fl_cmd;
typedef void (*fl_cmd_done_fn)(struct fl_cmd *cmd);

/*
 * One SCSI command. The submitter owns the struct and both buffers; they must
 * stay valid until done() is called. The core never frees anything here.
 */
struct fl_cmd {
	/* in */
	uint8_t cdb[FL_CDB_MAX];
	uint8_t cdb_len;
	struct fl_nexus nexus;
	uint64_t tag;		 /* initiator task tag, for traces and TMFs */
	const uint8_t *data_out; /* data received from the initiator */
	uint32_t data_out_len;
	uint8_t *data_in;     /* buffer for data to the initiator */
	uint32_t data_in_cap; /* its size (the expected transfer length) */
	fl_cmd_done_fn done;
	void *priv;	   /* the submitter's */
	void *engine_priv; /* reserved for the fault engine */
	/*
	 * The decoded CDB travels with the command: whoever needs it first (front
	 * end, fault engine or core) calls fl_cmd_decode, which decodes once and
	 * sets `decoded`; the others reuse `info`. The core clears `decoded` when
	 * it completes the command (`info` keeps its contents), so an fl_cmd used
	 * again for another CDB is decoded again; a submitter that changes the
	 * CDB of a command not yet submitted clears `decoded` itself.
	 */
	struct fl_cdb_info info;
	bool decoded;

	/* out, valid in done() */
	uint8_t status;
	uint8_t sense_len;
	uint8_t sense[FL_SENSE_MAX];
	uint32_t data_in_len; /* bytes placed in data_in */
	/*
	 * Residual in bytes against the length the CDB asked for (SAM-5 5.3):
	 * > 0 underflow (less transferred), < 0 overflow. Front ends with their
	 * own expected length (iSCSI EDTL) compute theirs from data_in_len.
	 * A WRITE whose data-out is shorter than its transfer length writes the
	 * whole blocks that arrived, completes GOOD and reports the rest here.
	 */
	int64_t residual;
	/*
	 * Set by the fault engine only: no response must ever be sent for this
	 * command (dropped before or after execution, or aborted by a TMF).
	 */
	bool no_response;
	bool aborted;
};

/*
 * The command's decoded CDB (see `info` above), decoding it on first use. An
 * empty or oversized CDB decodes as an unknown opcode (cdb[0] if any).
 */
const struct fl_cdb_info *fl_cmd_decode(struct fl_cmd *cmd);

/* Backing stores. */
enum fl_store_kind {
	FL_STORE_MEMORY = 0, /* sparse in memory, zero-filled */
	FL_STORE_FILE,	     /* sparse file; pread/pwrite, fdatasync on sync/FUA */
	FL_STORE_NULL,	     /* reads zeroes, drops writes (benchmarks) */
};

/* ALUA asymmetric access states (SPC-4 5.15.2.4). */
enum fl_alua_state {
	FL_ALUA_ACTIVE_OPTIMIZED = 0x0,
	FL_ALUA_ACTIVE_NON_OPTIMIZED = 0x1,
	FL_ALUA_STANDBY = 0x2,
	FL_ALUA_UNAVAILABLE = 0x3,
	FL_ALUA_LBA_DEPENDENT = 0x4,
	FL_ALUA_OFFLINE = 0xe,
	FL_ALUA_TRANSITIONING = 0xf,
};
/* Name of an ALUA asymmetric access state as scenarios write it ("active_optimized", ...;
 * "reserved" for a code SPC-4 r37 6.36 does not name). */
const char *fl_alua_state_text(unsigned s);

/*
 * Target ports and target port groups of a multi-port target (SPC-4 r37
 * 5.15.2.3): every target port has a relative target port identifier and
 * belongs to one target port group; the asymmetric access state of a LUN is
 * the state of the group of the port a command came in on.
 */
#define FL_MAX_PORTS 16
struct fl_port_config {
	uint16_t rel_port_id; /* 1-based */
	uint16_t tpg_id;      /* its target port group */
};
struct fl_tpg_config {
	uint16_t id;		  /* target port group, 1-based */
	enum fl_alua_state state; /* initial asymmetric access state */
};

/*
 * Vendor personality of a LUN (target/vendor.c): the behaviour a particular
 * array shows beyond SPC/SBC, so that the host's vendor-specific path code
 * (a Linux device handler such as scsi_dh_rdac, chosen by INQUIRY vendor and
 * product) runs against it. `name` NULL: a plain LUN, no vendor hooks run.
 *
 * Ownership model: on an active/passive array one controller owns the LUN.
 * Controllers are target port groups (cfg.tpgs, "port_groups" of a
 * scenario); a command's controller is the group of the port it came in on.
 */
struct fl_vendor_config {
	const char *name;	/* a name fl_vendor_known accepts, or NULL */
	uint16_t owner_tpg;	/* group owning the LUN at start; 0 = the LUN's tpg_id */
	uint16_t preferred_tpg; /* the owner the array prefers; 0 = owner_tpg */
	/*
	 * After ownership moves away from the preferred group, the array moves
	 * it back this many ms later (an array's automatic load balancing);
	 * 0 = never. Carried out at the first command after that time.
	 */
	uint32_t rebalance_ms;
	/*
	 * After an ownership transfer, media commands through every port are
	 * refused with the vendor's "quiescence in progress" for this many ms;
	 * 0 = no quiescence, UINT32_MAX = a quiescence that never ends.
	 */
	uint32_t quiesce_ms;
	bool avt;	   /* auto volume transfer: I/O on a non-owner moves ownership */
	bool transfer_ua;  /* a transfer queues UA 2A/06 on every other I_T nexus */
	uint16_t max_luns; /* RDAC: MAXIMUM LUNS SUPPORTED (C2h); >= 32 = MODE SELECT(10) form */
	/*
	 * Called after every ownership transfer, with the LUN locked, on the
	 * thread that moved it: from and to are target port groups, cause one
	 * of "avt" (I/O through a non-owner), "mode_select" (the host's
	 * explicit transfer: RDAC page 2Ch, EMC trespass), "start_stop"
	 * (hp_sw's START STOP UNIT), "rebalance" (back to the preferred group)
	 * and "management" (fl_lun_set_owner). NULL: nobody listens.
	 */
	void (*moved)(void *arg, uint16_t lun_id, uint16_t from, uint16_t to, const char *cause);
	void *moved_arg;
};

/* True when `name` is a vendor personality the core implements. */
bool fl_vendor_known(const char *name);
/* The names of the personalities, NULL-terminated (for messages and docs). */
const char *const *fl_vendor_names(void);
/*
 * The INQUIRY identity a personality has when the LUN does not set one
 * (vendor, product, revision); false for an unknown name.
 */
bool fl_vendor_identity(const char *name, const char **vendor, const char **product,
			const char **revision);

/* Personality and resources of one logical unit. Strings are copied. */
struct fl_lun_config {
	uint64_t num_blocks;
	uint32_t block_size;  /* 512 or 4096 (any power of two 512..65536) */
	const char *vendor;   /* INQUIRY T10 vendor id, up to 8 chars */
	const char *product;  /* up to 16 chars */
	const char *revision; /* up to 4 chars */
	const char *serial;   /* VPD 0x80 */
	uint64_t naa;	      /* NAA IEEE registered id for VPD 0x83; 0 = derived */
	bool naa16;	      /* a 16-byte designator (NAA 6): naa, then naa_ext */
	uint64_t naa_ext;     /* with naa16: its vendor specific identifier extension */
	bool write_cache;     /* WCE in the caching mode page */
	bool d_sense;	      /* descriptor-format sense (control mode page) */
	bool removable;
	/* thin provisioning */
	bool thin;
	uint64_t pool_blocks;	 /* blocks the pool can hold; 0 = num_blocks */
	uint64_t soft_threshold; /* blocks; 0 = none. UA 38/07 once when crossed */
	bool lbprz;		 /* unmapped blocks read as zeroes */
	/* ALUA */
	uint16_t tpg_id; /* target port group of this LUN's port, 1-based */
	enum fl_alua_state alua_state;
	bool alua_implicit;	   /* TPGS field: implicit ALUA */
	bool alua_explicit;	   /* explicit (SET TARGET PORT GROUPS) */
	uint8_t alua_transition_s; /* RTPG IMPLICIT TRANSITION TIME, s; 0 = not specified */
	/*
	 * Ports and groups. ntpgs == 0: one group, tpg_id in alua_state, that
	 * holds every port (a single-port target). Otherwise tpg_id names the
	 * LUN's default group (the one fl_lun_set_alua_state changes) and a
	 * port not listed in ports[] belongs to it.
	 */
	unsigned nports, ntpgs;
	struct fl_port_config ports[FL_MAX_PORTS];
	struct fl_tpg_config tpgs[FL_MAX_PORTS];
	/* store */
	enum fl_store_kind store;
	const char *store_path; /* FL_STORE_FILE: created if missing, sized */
	/*
	 * Set when store_path comes from a scenario: the directory it is opened
	 * beneath (only a regular file there, no symbolic link, no "..", no
	 * absolute path). NULL: the operator's path, any file or a block device.
	 */
	const char *store_dir;
	uint32_t max_xfer_blocks; /* VPD B0 maximum transfer length; 0 = default */
	/*
	 * Write protected (SBC-3 r36 6.4.1, WP): WP in the MODE SENSE header, every
	 * command that changes the medium gets DATA PROTECT 27/00; reads work.
	 */
	bool read_only;
	/*
	 * PRE-FETCH (SBC-3 r36 5.9) answers GOOD, as a target without a cache
	 * does; false: CONDITION MET when the range fits the cache (64 MiB).
	 */
	bool prefetch_good;
	/* vendor personality (struct fl_vendor_config); name NULL = none */
	struct fl_vendor_config personality;
	/*
	 * VPD pages answered as given (a scenario's "vpd"): vpd_raw_len bytes of
	 * whole pages, each its 4-byte header (byte 1 the code, bytes 2-3 the
	 * length, at most FL_VPD_RAW_MAX_LEN) and its bytes, codes ascending, at
	 * most FL_VPD_RAW_MAX pages, none the LUN builds itself (00h, 80h, 83h,
	 * B0h, B1h, B2h). Copied. A personality's page of the same code wins.
	 */
	const uint8_t *vpd_raw;
	uint32_t vpd_raw_len;
};

/* Pages of fl_lun_config.vpd_raw at most, and the length of one (its bytes after the header). */
#define FL_VPD_RAW_MAX 16
#define FL_VPD_RAW_MAX_LEN 508
/* True for a VPD page the LUN builds itself, which vpd_raw cannot give. */
bool fl_vpd_own_page(uint8_t code);

/* Fills *cfg with a sane 1 GiB, 512-byte-block, memory-backed default disk. */
void fl_lun_config_default(struct fl_lun_config *cfg);

struct fl_lun;

/*
 * Why cfg cannot make a LUN (a message), or NULL. fl_lun_create refuses
 * exactly what this refuses, and the scenario loader asks it too, so that a
 * scenario lint accepts is one serve can build.
 */
const char *fl_lun_config_problem(const struct fl_lun_config *cfg);

/*
 * Creates a logical unit; returns 0 and sets *out, or -errno (-EINVAL for a
 * bad config, store errors as returned by open/ftruncate). Logs the reason.
 */
int fl_lun_create(const struct fl_lun_config *cfg, struct fl_lun **out);

/* Waits for in-flight commands, closes the store, frees the LUN. */
void fl_lun_destroy(struct fl_lun *lun);

/*
 * Submits a command. Never blocks on I/O: with the memory store it completes
 * inline, with the file store on a worker thread. Every CDB of any length gets
 * a status; this function itself never fails.
 */
void fl_lun_submit(struct fl_lun *lun, struct fl_cmd *cmd);

/*
 * Fills cmd's status/sense with CHECK CONDITION and the given sense in the
 * format the LUN currently uses (fixed, or descriptor when D_SENSE is set).
 * When info_valid, the INFORMATION field carries `info` (e.g. the bad LBA).
 * Used by the fault engine; handlers inside the core use sense reasons.
 */
void fl_lun_set_sense(struct fl_lun *lun, struct fl_cmd *cmd, uint8_t key, uint8_t asc,
		      uint8_t ascq, bool info_valid, uint64_t info);

/*
 * Fills cmd's status/sense with CHECK CONDITION and the given sense in the
 * format asked for (descriptor or fixed), whatever the LUN's D_SENSE: the
 * same encoder as fl_lun_set_sense and every sense the core builds.
 */
void fl_cmd_set_sense(struct fl_cmd *cmd, bool descriptor, uint8_t key, uint8_t asc, uint8_t ascq,
		      bool info_valid, uint64_t info);

/* Unit attentions (SPC-4 6.1 / SAM-5 5.14). nexus_id == FL_ALL_NEXUS: all. */
#define FL_ALL_NEXUS UINT64_MAX
void fl_lun_queue_ua(struct fl_lun *lun, uint64_t nexus_id, uint8_t asc, uint8_t ascq);
/*
 * Whether the LUN would answer cmd with a pending unit attention (SAM-5 r21
 * 5.14): the command's nexus has one pending (a nexus never seen has 29/00)
 * and the command is not INQUIRY, REPORT LUNS or REQUEST SENSE. Consumes
 * nothing. The fault engine asks before it injects a CHECK CONDITION, which a
 * real LUN reports only after the UA.
 */
bool fl_lun_ua_pending(struct fl_lun *lun, const struct fl_cmd *cmd);

/*
 * Task management as seen by the logical unit (the front end and engine deal
 * with the tasks themselves): LUN RESET clears reservations (not PR), resets
 * mode pages to saved values and queues UA asc/ascq (29/00 by convention) for
 * every nexus but `from`. from_nexus == FL_ALL_NEXUS queues it for every
 * nexus, the resetting one included (what LIO does, and what libiscsi's
 * MultipathIO.Reset test expects).
 */
void fl_lun_reset(struct fl_lun *lun, uint64_t from_nexus, uint8_t asc, uint8_t ascq);

/* A nexus went away (logout, device close): drop its UA queue. */
void fl_lun_nexus_gone(struct fl_lun *lun, uint64_t nexus_id);
/*
 * True while the LU holds state of this nexus that must follow its initiator
 * port: a persistent-reservation registration or reservation, or a pending
 * unit attention. A transport may forget the port's nexus id otherwise.
 */
bool fl_lun_nexus_in_use(struct fl_lun *lun, uint64_t nexus_id);

/*
 * The most blocks a LUN may have, at creation and after a resize: 2^47 - 1,
 * so that its size in bytes fits in 63 bits at any block size (64 PiB at 512).
 */
#define FL_LUN_MAX_BLOCKS (UINT64_MAX >> 17)

/*
 * Changes the capacity; queues UA 2A/09 CAPACITY DATA HAS CHANGED for all.
 * -EINVAL for 0 or more than FL_LUN_MAX_BLOCKS blocks, or the store's error
 * (a file system that cannot hold the file: -EFBIG); the size is unchanged
 * on error. Costs what the blocks cut off hold, not the capacity.
 */
int fl_lun_resize(struct fl_lun *lun, uint64_t num_blocks);

/*
 * Sets the ALUA state of the LUN's default target port group (cfg.tpg_id);
 * queues UA 2A/06 ASYMMETRIC ACCESS STATE CHANGED for every nexus.
 */
void fl_lun_set_alua_state(struct fl_lun *lun, enum fl_alua_state state);
/*
 * Sets the state of target port group tpg_id (SPC-4 r37 5.15.2.5): when it
 * changes, UA 2A/06 for every I_T nexus of the LUN. Returns 0 or -ENOENT.
 */
int fl_lun_set_tpg_state(struct fl_lun *lun, uint16_t tpg_id, enum fl_alua_state state);
/* The current state of group tpg_id; 0 or -ENOENT. */
int fl_lun_tpg_state(struct fl_lun *lun, uint16_t tpg_id, enum fl_alua_state *state);

/*
 * Moves ownership of a LUN with a vendor personality to target port group
 * tpg_id, as the array's management interface would (no host command): the
 * personality's own effects of a transfer apply (unit attention, quiescence).
 * 0, -ENOENT for an unknown group, -ENOTSUP for a LUN without ownership.
 */
int fl_lun_set_owner(struct fl_lun *lun, uint16_t tpg_id);
/* The group owning the LUN now: 0, or -ENOTSUP without ownership. */
int fl_lun_owner(struct fl_lun *lun, uint16_t *tpg_id);

/*
 * Power loss: writes acknowledged while the write cache was on and not yet
 * made durable (SYNCHRONIZE CACHE, FUA, or WCE=0) are discarded. Calls
 * lost(lba, ctx) for every lost block, in LBA order, then queues UA 29/01.
 * Returns the number of blocks lost.
 */
uint64_t fl_lun_power_loss(struct fl_lun *lun, void (*lost)(uint64_t lba, void *ctx), void *ctx);

/* Read-only facts about a LUN, for front ends, traces and lint. */
struct fl_lun_info {
	uint64_t num_blocks;
	uint32_t block_size;
	bool thin;
	uint64_t pool_blocks;
	uint64_t mapped_blocks;
	bool write_cache;
	enum fl_alua_state alua_state;
	bool read_only;
};
void fl_lun_get_info(struct fl_lun *lun, struct fl_lun_info *info);
/*
 * The identity a host reads: the 8-byte NAA designator of VPD page 83h (what
 * Linux names /dev/disk/by-id/wwn-0x<naa>) and the unit serial number of
 * VPD page 80h, NUL-terminated in serial (cap bytes). Either may be NULL.
 */
void fl_lun_identity(const struct fl_lun *lun, uint64_t *naa, char *serial, size_t cap);

/* A target: an ordered set of LUNs addressed by LUN number (0..255). */
#define FL_MAX_LUNS 256
struct fl_target;
int fl_target_create(struct fl_target **out);
/* Adds lun under number `lun_id`; takes ownership. -EEXIST, -ERANGE. */
int fl_target_add_lun(struct fl_target *tgt, uint16_t lun_id, struct fl_lun *lun);
struct fl_lun *fl_target_lun(struct fl_target *tgt, uint16_t lun_id);
/* Fills ids (up to max) with LUN numbers in ascending order; returns count. */
unsigned fl_target_lun_ids(struct fl_target *tgt, uint16_t *ids, unsigned max);
/*
 * Submits to LUN `lun_id`; a LUN that does not exist answers INQUIRY with
 * peripheral qualifier 3, REPORT LUNS and REQUEST SENSE normally, and anything
 * else with ILLEGAL REQUEST 25/00 LOGICAL UNIT NOT SUPPORTED (SPC-4 4.8).
 */
void fl_target_submit(struct fl_target *tgt, uint16_t lun_id, struct fl_cmd *cmd);
void fl_target_destroy(struct fl_target *tgt);

#ifdef __cplusplus
}
#endif
#endif
