/* SPDX-License-Identifier: MIT */
/*
 * fl_check.h - the check section of a scenario, typed, and the one checker.
 *
 * A scenario's "check" (docs/scenario-format.md "check") is a workload (steps
 * a runner carries out) and expectations. The loader parses and validates it
 * once into struct fl_check; the runners (the VM lab's guest agent and host,
 * the libiscsi runner) read only this model. Each runner turns what it saw
 * into observations (struct fl_obs) and fl_check_judge() decides every
 * verdict, so that a key means the same thing in every runner. What a runner
 * cannot observe gives the verdict "not applicable", never a pass.
 */
#ifndef FL_CHECK_H
#define FL_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Workload operations. */
enum fl_step_op {
	FL_OP_READ = 0,
	FL_OP_WRITE,
	FL_OP_DISCARD,
	FL_OP_FSYNC,
	FL_OP_SYNC,
	FL_OP_TUR,
	FL_OP_INQUIRY,
	FL_OP_SG_RAW,
	FL_OP_CTL,
	FL_OP_SLEEP,
	FL_OP_MKFS,
	FL_OP_MOUNT,
	FL_OP_UMOUNT,
	FL_OP_WRITE_FILE,
	FL_OP_READ_FILE,
	FL_OP_RESCAN,
	FL_OP_SHELL,
	FL_OP_UNMAP,	    /* UNMAP of one LBA range (SBC-3 5.28), through SG_IO in the lab */
	FL_OP_WRITE_SAME,   /* WRITE SAME(16) (SBC-3 5.42), UNMAP bit by default */
	FL_OP_ABORT_TASK,   /* TMF ABORT TASK of the previous step's command (SAM-5 7.2) */
	FL_OP_LUN_RESET,    /* TMF LOGICAL UNIT RESET (SAM-5 7.7) */
	FL_OP_TARGET_RESET, /* TMF TARGET WARM RESET (RFC 7143 11.5.1) */
	FL_OP_NR,
};

/* Runners; a bit each (an expectation's "runner" scope, what a runner can do). */
enum fl_runner {
	FL_RUNNER_VM = 1 << 0,
	FL_RUNNER_LIBISCSI = 1 << 1,
	FL_RUNNER_ALL = FL_RUNNER_VM | FL_RUNNER_LIBISCSI,
};

/* Defaults of the step keys (docs/scenario-format.md "Workload steps"). */
#define FL_STEP_TIMEOUT_S 180 /* a step's deadline, over all its repeats */
#define FL_STEP_SLEEP_MS 1000 /* sleep without ms */
#define FL_STEP_PATTERN 0xa5  /* byte value of data sent */
#define FL_STEP_FILE_SIZE (1u << 20)
#define FL_INQUIRY_ALLOC 96 /* allocation length of the inquiry op */
#define FL_STEP_CDB_MAX 16
#define FL_CTL_ARGS_MAX 32

/* One workload step, with every default applied. */
struct fl_step {
	enum fl_step_op op;
	int lun;  /* the scenario LUN it addresses; -1: the LUN under test */
	int port; /* libiscsi runner: index in the scenario's ports; -1: the URL's portal */
	uint32_t timeout_s;   /* deadline of the whole step (default FL_STEP_TIMEOUT_S) */
	uint32_t repeat;      /* >= 1; stops at the first run that fails */
	bool background;      /* the next steps start at once (VM lab) */
	uint64_t lba, blocks; /* read, write, discard (blocks >= 1) */
	bool direct;	      /* read, write: O_DIRECT in the VM lab (default true) */
	bool stamp;	      /* write: self-describing blocks; read: checked (fl_stamp.h) */
	uint8_t pattern;      /* write, sg_raw data-out, write_same's block */
	bool unmap;	      /* write_same: the UNMAP bit (default true) */
	uint8_t cdb[FL_STEP_CDB_MAX];
	uint8_t cdb_len;   /* sg_raw: 6..16 */
	uint32_t data_in;  /* sg_raw: bytes of data-in ("size") */
	uint32_t data_out; /* sg_raw: bytes of data-out ("data") */
	uint64_t size;	   /* write_file: bytes */
	char *path;	   /* fsync, write_file, read_file: relative to the mount point; or NULL */
	char *fs;	   /* mkfs, mount: "ext4" (default), "ext3", "ext2" */
	char *command;	   /* shell */
	char **args;	   /* ctl: the words after the socket */
	size_t nargs;
	uint32_t ms; /* sleep */
};

/* What an expectation asserts (a bit each; several may be set on a step entry). */
enum fl_expect_kind {
	FL_EX_ERRNO = 1 << 0,
	FL_EX_STATUS = 1 << 1,
	FL_EX_SENSE = 1 << 2,
	FL_EX_WITHIN = 1 << 3,
	FL_EX_MIN_MS = 1 << 4,
	FL_EX_RAN = 1 << 5, /* a step entry with nothing else: the step ran */
	FL_EX_KERNEL_LOG = 1 << 6,
	FL_EX_EH = 1 << 7,
	FL_EX_DEVICE_STATE = 1 << 8,
	FL_EX_STALL = 1 << 9,
	FL_EX_TRACE = 1 << 10,
	FL_EX_PATH = 1 << 11,	      /* a dm-multipath path entered a state (VM lab) */
	FL_EX_UA = 1 << 12,	      /* the step's answer is this UNIT ATTENTION */
	FL_EX_TMF_RESPONSE = 1 << 13, /* a TMF step's answer (RFC 7143 11.6.1) */
	FL_EX_DH_STATE = 1 << 14,     /* a disk's device handler entered a state (VM lab) */
};
/* The last kind (judge's loop bound). */
#define FL_EX_LAST FL_EX_DH_STATE

/* One member of a trace expectation: key and its value as compact JSON. */
struct fl_trace_member {
	char *key;
	char *json;
};

/* Error-handler steps the VM lab recognises in the kernel log, in ladder order. */
enum fl_eh_step {
	FL_EH_ABORT = 0,
	FL_EH_LUN_RESET,
	FL_EH_TARGET_RESET,
	FL_EH_BUS_RESET,
	FL_EH_HOST_RESET,
	FL_EH_CONN_ERROR,
	FL_EH_SESSION_RESET,
	FL_EH_SESSION_RECOVERY_TIMEOUT,
	FL_EH_OFFLINE,
	FL_EH_IO_ERROR,
	FL_EH_NR,
};
extern const char *const fl_eh_names[FL_EH_NR];

/* One expectation. */
struct fl_expect {
	unsigned kinds;	  /* enum fl_expect_kind */
	unsigned runners; /* enum fl_runner: which runners check it */
	int step;	  /* index into the workload; -1: about the whole run */
	char **errnos;	  /* FL_EX_ERRNO: one of these names */
	size_t nerrnos;
	uint8_t status;		    /* FL_EX_STATUS: SAM status byte */
	uint8_t key, asc, ascq;	    /* FL_EX_SENSE */
	uint8_t ua_asc, ua_ascq;    /* FL_EX_UA: UNIT ATTENTION with this ASC/ASCQ */
	uint8_t tmf_response;	    /* FL_EX_TMF_RESPONSE: the TMF response code */
	bool sense_any_asc;	    /* "KEY" alone: any ASC/ASCQ */
	uint64_t within_ms, min_ms; /* FL_EX_WITHIN, FL_EX_MIN_MS */
	char *kernel_log;	    /* FL_EX_KERNEL_LOG: POSIX ERE */
	bool has_count_min, has_count_max;
	uint64_t count_min, count_max; /* kernel_log and trace bounds (default: at least 1) */
	enum fl_eh_step *eh;	       /* FL_EX_EH: in this order, others allowed between */
	size_t neh;
	char *device_state;		     /* FL_EX_DEVICE_STATE */
	int lun;			     /* device_state: the LUN; -1: the LUN under test */
	uint64_t stall_max_ms, stall_min_ms; /* FL_EX_STALL */
	struct fl_trace_member *trace;	     /* FL_EX_TRACE: members every counted event has */
	size_t ntrace;
	char *kernel;	   /* kernels it holds for (fl_kernel_in_range); NULL: every kernel */
	unsigned vm_paths; /* enum fl_check_path: the VM-lab paths it holds on; 0: every path */
	char *path_port;   /* FL_EX_PATH: the path's target port (its id) */
	char *path_state;  /* FL_EX_PATH: dm state (active, failed), checker state (ready,
			      ghost, faulty, ...) or group state (current, enabled, bypassed) */
	char *dh_handler;  /* FL_EX_DH_STATE: the device handler (alua, emc, rdac, hp_sw) */
	char *dh_access;   /* FL_EX_DH_STATE: its sysfs access_state; NULL: any */
};

/* Kernel settings of the VM lab ("knobs"); -1 (or NULL): not given. */
struct fl_knobs {
	int timeout_s; /* the initiator's command timeout (sd's; the libiscsi runner's own) */
	int eh_timeout_s, abort_tmo_s, lu_reset_tmo_s, tgt_reset_tmo_s, recovery_tmo_s;
	int noop_interval_s, noop_timeout_s, scsi_logging_level, debug_libiscsi_eh;
	int cmd_time_out_s, queue_depth;
	int reset_wait_ms; /* libiscsi runner: how long its error handling waits for each
			      TMF's answer (ABORT TASK, LUN RESET) before the next step */
	int multipath;	   /* 0/1 */
	/* dm-multipath (with multipath): multipathd's checker interval, the
	 * checker (a word), no_path_retry (a number, or a word: queue, fail) */
	int polling_interval_s, path_checker, no_path_retry;
	int hung_task_timeout_s; /* the guest's hung-task detector, s (0: off) */
};
/* A knob given as one of its words is stored as FL_KNOB_WORD(index) (< -1). */
#define FL_KNOB_WORD(i) (-2 - (int)(i))
#define FL_KNOB_WORD_INDEX(v) (-2 - (v))
/* Knob names, in struct order, for the VM lab's job file. */
struct fl_knob_desc {
	const char *name;
	size_t offset;		  /* of the int in struct fl_knobs */
	const char *const *words; /* the words it takes besides numbers, or NULL */
	bool words_only;	  /* no number */
};
extern const struct fl_knob_desc fl_knob_descs[];
extern const size_t fl_knob_count;
/* A knob's value as the job file gives it (its number or word) into buf; false: not given. */
bool fl_knob_text(const struct fl_knob_desc *d, const struct fl_knobs *k, char *buf, size_t len);

/* VM-lab paths. */
enum fl_check_path {
	FL_PATH_ISCSI = 1 << 0,
	FL_PATH_TCMU = 1 << 1,
	FL_PATH_LIO = 1 << 2, /* LIO's own backstores, the lab's plumbing test */
};
/* A path's name ("iscsi", "tcmu", "lio") or NULL; a name's path or 0. */
const char *fl_check_path_name(enum fl_check_path p);
enum fl_check_path fl_check_path_by_name(const char *name);

/* The check section. */
struct fl_check {
	unsigned paths; /* enum fl_check_path; 0: not given (every path) */
	struct fl_knobs knobs;
	/*
	 * "arm": "workload": the scenario's faults (rules, tmf, transport,
	 * transitions) are armed when the workload starts, after the runner's
	 * login, scan and knobs; until then the target serves without them.
	 */
	bool arm_at_workload;
	struct fl_step *steps;
	size_t nsteps;
	struct fl_expect *expects;
	size_t nexpects;
};

struct fl_scenario;
/* The scenario's check section, or NULL when it has none. */
const struct fl_check *fl_scenario_check(const struct fl_scenario *sc);

/* Names. */
const char *fl_step_op_name(enum fl_step_op op);
/* SAM-5 status byte name ("GOOD", "CHECK_CONDITION", ...), or NULL. */
const char *fl_status_name(uint8_t status);
/* Parses a status name (any case); 0 or -ENOENT. */
int fl_status_by_name(const char *name, uint8_t *status);
/* Sense key / ASC names of the one table (NULL when unnamed). */
const char *fl_sense_key_name(uint8_t key);
const char *fl_sense_asc_name(uint8_t asc, uint8_t ascq);
/*
 * True when the op is a SCSI pass-through (SG_IO in the VM lab): tur, inquiry,
 * sg_raw, unmap, write_same. Its answer, a UNIT ATTENTION included, is the
 * step's; block ops (read, write, discard, sync, fsync) resend a UNIT ATTENTION.
 */
bool fl_step_op_is_passthrough(enum fl_step_op op);
/*
 * The timeout of a pass-through step's command, in seconds: SG_IO's, as the
 * VM lab's agent gives it (the step's timeout_s, at most
 * FL_SGIO_TIMEOUT_MAX_S, sg3_utils' default), and the libiscsi runner's timer
 * of that command. Not the device's command timeout (knobs.timeout_s).
 */
#define FL_SGIO_TIMEOUT_MAX_S 60
unsigned fl_step_sgio_timeout_s(const struct fl_step *s);
/* True when the op is a task-management function (abort_task, lun_reset, target_reset). */
bool fl_step_op_is_tmf(enum fl_step_op op);
/* True when the VM lab's agent can carry the op out (not: the TMF ops, unmap, write_same). */
bool fl_step_op_in_vm(enum fl_step_op op);
/* TMF response names (RFC 7143 11.6.1): "function_complete", ...; NULL when unnamed. */
const char *fl_tmf_response_name(uint8_t resp);
/* Default of knobs.reset_wait_ms: the libiscsi runner's wait for each TMF's answer. */
#define FL_RESET_WAIT_MS 5000

/* ---- observations ---- */

/* How a step ended. */
enum fl_step_end {
	FL_END_NOT_RUN = 0, /* it should have run and did not (see why): its expectations fail */
	FL_END_UNSUPPORTED, /* the runner cannot carry this op out: its expectations are N/A */
	FL_END_DONE,	    /* it ended: errno says how */
	FL_END_TIMEOUT,	    /* past its deadline (errno "TIMEOUT") */
	FL_END_CRASHED,	    /* the VM lab's child died without a report (errno "CRASHED") */
};

/* What a runner saw of one step. */
struct fl_step_obs {
	enum fl_step_end end;
	char why[128];	     /* FL_END_NOT_RUN, FL_END_UNSUPPORTED: why */
	char errno_name[24]; /* "OK", "EIO", ... as the application saw it */
	bool has_status; /* a SCSI status came back (SG_IO in the VM lab, every command in libiscsi)
			  */
	uint8_t status;
	bool has_sense;
	uint8_t key, asc, ascq;
	double elapsed_ms; /* start to end, every repeat */
	uint32_t repeats_done;
	bool has_tmf_response; /* a TMF step got an answer (libiscsi runner) */
	uint8_t tmf_response;  /* RFC 7143 11.6.1 */
	uint32_t retries; /* times a block command was resent (libiscsi runner; 0: none seen) */
};

/* What a runner saw of a run. Pointers may be NULL when a runner cannot see that. */
struct fl_obs {
	enum fl_runner runner;
	const struct fl_step_obs *steps; /* one per workload step */
	size_t nsteps;
	bool can_status_all; /* status/sense observable on every op (libiscsi), else SG_IO ops only
			      */
	/* VM lab only: the kernel log (without the agent's own lines), EH steps in order */
	bool has_kernel;
	const char *const *kmsg;
	size_t nkmsg;
	const enum fl_eh_step *eh;
	size_t neh;
	/* device state per LUN at the end (lun -> text); NULL: not observed */
	const char *(*device_state)(void *arg, int lun);
	void *device_state_arg;
	int test_lun; /* the LUN under test */
	bool has_stall;
	double max_stall_ms; /* < 0: no healthy LUN */
	/* trace events (JSON lines), when the runner has the target's trace */
	bool has_trace;
	const char *const *trace;
	size_t ntrace;
	/* the kernel's release (uname -r) when the runner runs on one; NULL: none (libiscsi) */
	const char *kernel_release;
	/* the VM lab's path to the LUN (one enum fl_check_path); 0: none (libiscsi) */
	unsigned vm_path;
	/* dm-multipath paths (VM lab with the multipath knob): "PORT DEV DM_STATE
	 * CHECKER_STATE PRIO GROUP" for each change, in time order; a port's first line
	 * is its state when the workload started */
	bool has_paths;
	const char *const *paths;
	size_t npaths;
	/* device handlers (VM lab): "DEV HANDLER ACCESS_STATE ..." for each change of
	 * a disk with a handler attached, in time order */
	bool has_dh;
	const char *const *dh;
	size_t ndh;
};

enum fl_verdict_kind {
	FL_VERDICT_PASS = 0,
	FL_VERDICT_FAIL,
	FL_VERDICT_NA, /* the runner cannot observe it, or the entry is scoped to another runner */
};

/* One verdict: an expectation gives one per kind it asserts. */
struct fl_verdict {
	size_t expect; /* index into fl_check.expects */
	enum fl_expect_kind kind;
	enum fl_verdict_kind v;
	char what[320];	    /* what was expected, always filled (also for N/A) */
	char observed[512]; /* what was seen, or why it is not applicable */
};

/*
 * Judges every expectation of check against obs. Returns the number of
 * verdicts in *out (malloc'd; the caller frees), or -ENOMEM.
 */
int fl_check_judge(const struct fl_check *check, const struct fl_obs *obs, struct fl_verdict **out);
const char *fl_verdict_name(enum fl_verdict_kind v); /* "PASS", "FAIL", "N/A" */
/* The word of an expectation kind, its key in a scenario and in result.json ("errno", "ua", ...).
 */
const char *fl_expect_kind_word(enum fl_expect_kind k);
/* Sums verdicts: returns 0 when none failed and one passed, 1 when one failed, 77 when none
 * applied. */
int fl_verdicts_exit(const struct fl_verdict *v, size_t n);

/*
 * Observations as JSON: what a runner saw, written beside its verdicts (the
 * libiscsi runner's --obs FILE, the VM lab's obs.json) and read back to judge
 * a recorded run again. fl_obs_write returns 0 or -errno; fl_obs_read 0 or
 * -errno (-EINVAL: not an observations document).
 */
struct fl_obs_doc;
int fl_obs_write(const struct fl_obs *obs, const char *path);
int fl_obs_read(const char *path, struct fl_obs_doc **out);
const struct fl_obs *fl_obs_of(const struct fl_obs_doc *doc);
void fl_obs_free(struct fl_obs_doc *doc);

/*
 * Is kernel release (e.g. "6.12.117+deb13-amd64", "6.1.0-57-amd64") in range
 * spec: comma-separated terms that must all hold, each an optional operator
 * (>=, <=, >, <, =) and a version of one to three numbers, compared on the
 * version's numbers only: ">=6.12", "<6.12", "6.1" (any 6.1.x), ">=6.1,<6.12".
 * Returns 1 in range, 0 not, -EINVAL for a malformed spec.
 */
int fl_kernel_in_range(const char *spec, const char *release);

/* Prints a sense as "KEY/NAME (AA/QQ)" into buf. */
void fl_sense_text(uint8_t key, uint8_t asc, uint8_t ascq, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
