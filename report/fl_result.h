/* SPDX-License-Identifier: MIT */
/*
 * fl_result.h - the typed result of one VM-lab run: what the guest agent and
 * the lab observed, as vm_check.c writes it to RUN_DIR/result.json
 * (docs/vm-lab.md "result.json"), read back in one place (fl_result.c).
 *
 * The file is hostile input: part of it comes from the guest, whose kernel is
 * the one under test. fl_result_read() refuses a file past the bounds below
 * (size, nesting, string length, member count, times outside [0, 1e6] s,
 * numbers that are not finite), a file that is not a lab result, and a
 * result of a version newer than FL_RESULT_VERSION; everything it keeps is
 * typed and bounded, and a key that is missing or of the wrong type reads as
 * the field's documented default. The report (report/) reads results only
 * through this.
 *
 * Strings point into the parsed document and live as long as the result
 * (fl_result_free); NULL means absent or not a string.
 */
#ifndef FL_RESULT_H
#define FL_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The version of result.json this tree writes and reads ("version"; results
 * written before the key are version 1). A reader refuses a newer one.
 */
#define FL_RESULT_VERSION 1

/* Bounds kept on a result file before anything reads it. */
#define FL_RESULT_MAX_FILE_BYTES (64 << 20)
#define FL_RESULT_MAX_DEPTH 32
#define FL_RESULT_MAX_STRING 65536
#define FL_RESULT_MAX_ITEMS 1000000
#define FL_RESULT_MAX_NUMBER 1e15
#define FL_RESULT_MAX_TIME_S 1e6

/* One line of the merged timeline (guest clock, seconds). */
struct fl_result_event {
	double t;
	const char *src;  /* "kernel", "agent", "uevent", "sysfs", "faultlun", ... */
	const char *text; /* never NULL: the reader refuses an entry without it */
};

/* One workload step the agent ran. */
struct fl_result_step {
	long long step;		/* its index in the scenario (0 when absent) */
	const char *op;		/* "read", "write", ... (NULL: absent) */
	const char *errno_name; /* "0", "EIO", ... (key "errno"; NULL: absent) */
	double t0, t1;		/* guest clock, seconds (0 when absent) */
	double elapsed_ms;	/* 0 when absent */
	json_t *params;		/* the step's parameters as written (borrowed; NULL: none) */
	const char
	    *integrity; /* a stamped read: the first block not as acknowledged (NULL: none) */
};

/* The verdict of one expectation. */
enum fl_result_verdict {
	FL_RESULT_FAIL = 0,
	FL_RESULT_PASS,
	FL_RESULT_NA,
};

/* One expectation as judged. */
struct fl_result_expect {
	enum fl_result_verdict verdict; /* "verdict", else the older "ok" / "not_applicable" */
	bool has_verdict;		/* the key "verdict" is there */
	const char *verdict_text;	/* "pass", "fail", "not_applicable" as written */
	const char *what;		/* the expectation in words (NULL: not recorded) */
	const char *observed;		/* what was observed (NULL: not recorded) */
	bool has_step;			/* it names a step */
	long long step;			/* the step it is about (0 without has_step) */
	long long expect;		/* its number in the scenario (0 when absent) */
};

/* One probe of the healthy LUN. */
struct fl_result_probe {
	double t;  /* guest clock, seconds */
	double ms; /* its latency */
};

/* The wall-time split of the run (seconds). */
struct fl_result_wall {
	double total_s, guest_assembly_s, qemu_s; /* 0 when absent */
	/* guest_phases: kernel clock of the agent's markers; -1: not seen */
	double agent_up, workload_start, workload_end, finish;
};

/*
 * One event of the target's trace, with the guest's time (the keys the
 * report reads; the action's own trace fields are named in scenario/actions/).
 * Strings NULL when absent or not a string.
 */
struct fl_result_trace {
	double t;	   /* guest clock, seconds (0 when absent) */
	const char *event; /* "inject", "tmf", "tmf_done", "reset", "conn", ... */
	const char *action, *rule, *op, *opcode, *status, *hold; /* inject */
	bool has_op;						 /* "op" is there, of any type */
	const char *tmf, *respond;				 /* tmf, tmf_done, reset */
	const char *ua;						 /* reset: the unit attention */
	bool has_ua;
	const char *what;    /* conn: "closed", "login", ... */
	double lun;	     /* 0 when absent */
	double lba;	     /* NAN when absent */
	double tag, ref_tag; /* 0 when absent */
	double delay_ms;     /* 0 when absent */
	double response;     /* tmf_done: the TMF response; -1 when absent */
	double aborted;	     /* conn closed: tasks dropped; 0 when absent */
};

/*
 * Knobs in seconds (-1: absent): the values the guest really had
 * (guest_info.knobs: timeout, abort_tmo, ...) or the scenario's (knobs:
 * timeout_s, abort_tmo_s, ...).
 */
struct fl_result_knobs {
	double timeout, abort_tmo, lu_reset_tmo, tgt_reset_tmo, recovery_tmo, cmd_time_out;
};

/* A run of the VM lab, typed. */
struct fl_result {
	int version; /* of the file read (1 when it has no "version") */
	/* metadata (NULL: absent) */
	const char *scenario; /* the scenario's file as given */
	const char *name;     /* the scenario's name */
	const char *path;     /* "iscsi", "tcmu", "lio" */
	const char *accel;    /* "kvm", "tcg" */
	const char *verdict;  /* "PASS", "FAIL", "N/A", "ERROR" */
	const char *error;    /* why the run is ERROR */
	const char *run_dir;
	const char *kernel;  /* guest_info.kernel: the release ("6.1.0-57-amd64") */
	double max_stall_ms; /* the healthy LUN's longest stall; -1: not measured */
	struct fl_result_wall wall;
	struct fl_result_knobs guest_knobs, scenario_knobs;
	bool multipath; /* the scenario's knob multipath is 1 */

	struct fl_result_event *timeline;
	size_t ntimeline;
	struct fl_result_step *steps;
	size_t nsteps;
	struct fl_result_expect *expectations;
	size_t nexpectations;
	bool has_expectations;	  /* "expectations" is a list (empty or not) */
	const char **eh_sequence; /* the error handler's steps in words (NULL: not a string) */
	size_t neh_sequence;
	struct fl_result_probe *probes;
	size_t nprobes;
	struct fl_result_trace *trace; /* "trace_events" */
	size_t ntrace;

	/*
	 * The parsed document (owned). The report's model still reads the
	 * parts not typed above (the target's trace events, the knobs) from it;
	 * nothing outside report/ may.
	 */
	json_t *doc;
};

/*
 * Reads the result file at path into *out (zeroed first). Returns 0, or -1
 * with a message in err ("PATH: why", at most errlen bytes); *out is then
 * empty (fl_result_free is harmless on it).
 */
int fl_result_read(const char *path, struct fl_result *out, char *err, size_t errlen);
/*
 * As fl_result_read, on a parsed document doc (a reference is taken);
 * name stands for the file in messages.
 */
int fl_result_from_json(json_t *doc, const char *name, struct fl_result *out, char *err,
			size_t errlen);
/* Frees what *res holds and empties it. */
void fl_result_free(struct fl_result *res);

/* "PASS", "FAIL" or "N/A" of a verdict. */
const char *fl_result_verdict_word(enum fl_result_verdict v);

/*
 * The number at key in o: a JSON number, or a numeric string; def when
 * absent, not a number, not finite or past +-FL_RESULT_MAX_NUMBER.
 */
double fl_result_num(json_t *o, const char *key, double def);

#endif
