/* SPDX-License-Identifier: MIT */
/*
 * mpath.h - the libiscsi runner's model of dm-multipath and the SCSI device
 * handlers, for block steps of a check whose knobs say "multipath"
 * (runner.c does the I/O; this is the part without any):
 *  - which handler the kernel attaches to the LUN (scsi_dh.c
 *    scsi_dh_find_driver: alua for a LUN that reports TPGS, else its
 *    vendor / product list);
 *  - what each handler's activate sends to make a path's controller serve
 *    the LUN, and what it reads first to know whether it must
 *    (scsi_dh_alua.c alua_rtpg / alua_stpg, scsi_dh_emc.c clariion_activate,
 *    scsi_dh_rdac.c rdac_activate, scsi_dh_hp_sw.c hp_sw_activate);
 *  - which errors are path errors, that dm-multipath retries on another path
 *    (blk_path_error), rather than the application's;
 *  - the path groups, one per target port group as group_by_prio makes them
 *    with the ALUA, emc, rdac and hp_sw prioritizers, and dm-mpath.c's choice
 *    of a path: the current group while one of its paths is up, else the
 *    next group with a path up, activated first (pg_init).
 */
#ifndef FL_MPATH_H
#define FL_MPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fl_mp_handler { FL_MP_NONE, FL_MP_ALUA, FL_MP_EMC, FL_MP_RDAC, FL_MP_HP_SW };

/* The handler Linux attaches to a LUN with this standard INQUIRY data (len bytes). */
enum fl_mp_handler fl_mp_handler_of(const uint8_t *inq, size_t len);
const char *fl_mp_handler_name(enum fl_mp_handler h);

/* One command of a handler: its CDB, its data-out and the data-in it asks for. */
struct fl_mp_cmd {
	uint8_t cdb[16];
	size_t cdb_len;
	uint8_t data[320];
	size_t data_len;  /* data-out */
	uint32_t alloc;	  /* data-in */
	const char *name; /* for the log */
};

/*
 * What the handler reads through a path before it activates it: RTPG
 * (alua), VPD C0h (emc), VPD C9h (rdac), TEST UNIT READY (hp_sw). False for
 * no handler.
 */
bool fl_mp_query(enum fl_mp_handler h, struct fl_mp_cmd *c);

/*
 * The command multipathd's path checker sends for this handler's arrays, as
 * multipath-tools' built-in table picks the checker: VPD C9h (rdac), VPD
 * C0h (emc_clariion), else TEST UNIT READY (tur).
 */
bool fl_mp_checker(enum fl_mp_handler h, struct fl_mp_cmd *c);

/* An answer: its SCSI status, sense and data-in. */
struct fl_mp_answer {
	int status;
	uint8_t key, asc, ascq;
	const uint8_t *data;
	size_t len;
};

/*
 * Whether the path of target port group tpg must be activated, from the
 * query's answer: alua when the LUN supports explicit ALUA (explicit) and
 * the group is standby, unavailable or transitioning; emc when the path's SP
 * does not own the LUN (C0h byte 4 not 2); rdac when its controller does not
 * (C9h byte 8 bit 0 clear); hp_sw when TEST UNIT READY says NOT READY 04/02.
 */
bool fl_mp_needs_activate(enum fl_mp_handler h, const struct fl_mp_answer *a, uint16_t tpg,
			  bool explicit_alua);

/*
 * The handler's activate command for LUN lun through a path of group tpg:
 * SET TARGET PORT GROUPS to active/optimized (alua), the long trespass
 * (emc, MODE SELECT(10) page 22h), the expanded redundant controller page
 * with this LUN to transfer (rdac, MODE SELECT(10) page 2Ch/01h), START STOP
 * UNIT with START (hp_sw). False for no handler.
 */
bool fl_mp_activate(enum fl_mp_handler h, unsigned lun, uint16_t tpg, struct fl_mp_cmd *c);

/* What becomes of a pg_init after its activate command's answer. */
enum fl_mp_act_result {
	FL_MP_ACT_DONE,	 /* GOOD: the group is active */
	FL_MP_ACT_RETRY, /* the handler resends it (UNIT ATTENTION, NOT READY 04/xx) */
	FL_MP_ACT_BUSY,	 /* SCSI_DH_DEV_TEMP_BUSY: dm-multipath retries the pg_init later */
	FL_MP_ACT_FAILED /* the path fails (SCSI_DH_DEV_FAILED, SCSI_DH_IO) */
};

/*
 * The fate of a pg_init from its activate command's answer: emc's "array
 * based copy in progress" (05/04/00) and NDU (02/04/03) are a temporary busy
 * (scsi_dh_emc.c trespass_endio); a UNIT ATTENTION or NOT READY 04/xx is
 * resent (scsi_dh_rdac.c mode_select_handle_sense, scsi_dh_alua.c
 * alua_stpg's retries); anything else fails the path.
 */
enum fl_mp_act_result fl_mp_activate_result(enum fl_mp_handler h, const struct fl_mp_answer *a);

/*
 * The access state of target port group tpg in a REPORT TARGET PORT GROUPS
 * answer (d, len bytes): 0-15 (SPC-4 6.37), -1 when the group is not there
 * or the answer is malformed.
 */
int fl_mp_rtpg_state(const uint8_t *d, size_t len, uint16_t tpg);

/*
 * True when the handler's check_sense requeues a block command with this
 * sense (ADD_TO_MLQUEUE) where the SCSI layer alone would not: rdac's
 * quiescence, NOT READY 04/A1 and A1/02 (scsi_dh_rdac.c rdac_check_sense).
 */
bool fl_mp_sense_requeue(enum fl_mp_handler h, uint8_t key, uint8_t asc, uint8_t ascq);

/* True when a block command's errno is a path error (blk_path_error): EIO. */
bool fl_mp_path_error(const char *errno_name);

/* Paths of the map, in the scenario's port order. */
#define FL_MP_MAX_PATHS 16
struct fl_mp_path {
	int port;	/* the runner's port index */
	uint16_t group; /* its target port group: its path group */
	bool failed;
};
struct fl_mp {
	struct fl_mp_path path[FL_MP_MAX_PATHS];
	size_t n;
	int current;  /* the path in use, -1: none yet */
	bool pg_init; /* the group of the chosen path must be activated first */
};

/* A map over n ports (at most FL_MP_MAX_PATHS), groups[i] the port's target port group. */
void fl_mp_init(struct fl_mp *m, const uint16_t *groups, size_t n);

/*
 * The path the next try goes through, or -1 when every path is failed: the
 * current path while it is up; else another path up in the current group;
 * else the first path up of the next group in port order, with pg_init set.
 * With no path up the map forgets its current group (choose_pgpath), so the
 * next path chosen has its group initialised again, whichever it is.
 */
int fl_mp_select(struct fl_mp *m);

/*
 * Marks path i failed (fail_path; when it was the last path up, the map
 * forgets its group, as the requeued I/O's choose_pgpath finds no path) or
 * back (reinstate_path).
 */
void fl_mp_fail(struct fl_mp *m, int i);
void fl_mp_reinstate(struct fl_mp *m, int i);

#endif
