/* SPDX-License-Identifier: MIT */
/*
 * report_internal.h - the VM lab's report model (report_model.c) and its
 * renderers: the error-handler ladder, the sequence chart of one cycle, the
 * state bands with the healthy LUN's latency (report_svg.c), the page
 * (report_html.c) and the Chrome trace-event file (report_trace.c); with
 * dm-multipath, the paths band and the failover rows (report_paths.c).
 *
 * The model is derived from one result (vm_check.c writes it, fl_result.c
 * reads it; the model owns it): the kernel-log
 * lines of the error handler (scsi_error.c with scsi_logging_level, libiscsi
 * with debug_libiscsi_eh, LIO's TMR lines), the guest's knob values, and the
 * target's trace (tmf, tmf_done, reset, conn, inject events). Where the
 * kernel printed nothing of its error handler, the TMFs the target received
 * stand in for it (spans marked from_trace).
 */
#ifndef FL_VM_REPORT_INTERNAL_H
#define FL_VM_REPORT_INTERNAL_H

#include "fl_result.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Rungs of the escalation ladder, bottom (first) to top. */
enum rp_level {
	RP_TIMEOUT = 0, /* the command's timer (device/timeout) */
	RP_ABORT,	/* ABORT TASK */
	RP_LUN_RESET,	/* LOGICAL UNIT RESET (sd's "BDR") */
	RP_TARGET_RESET,
	RP_SESSION, /* session reset and relogin (iSCSI) */
	RP_END,	    /* offline or I/O error */
	RP_NLEVELS,
};

/* How a span ended. */
enum rp_outcome {
	RP_COMPLETED = 0,
	RP_FAILED,
	RP_TIMED_OUT, /* a timer ended it: the TMF's, the command's, the session's */
	RP_SKIPPED,   /* not sent (e.g. "previous abort failed") */
	RP_NOUTCOMES,
};

#define RP_MAX_SPANS 256
#define RP_MAX_MSGS 64
#define RP_MAX_MARKS 64
#define RP_MAX_BANDS 128

/* One rung taken by the error handler. */
struct rp_span {
	enum rp_level level;
	enum rp_outcome outcome;
	double t0, t1; /* seconds from the origin */
	int cycle;
	bool from_trace;    /* seen only in the target's trace */
	char ended_by[128]; /* the timer or answer that ended it */
	/* TMF rungs: the target's side, from its trace (t < -1e8: none) */
	double t_recv, t_answer;
	char decision[96]; /* "rejected", "never answered", "never arrived", ... */
	char detail[120];  /* a tooltip: the kernel's own words */
};

/* One message of the sequence chart (kernel -> target, and the target's decision). */
struct rp_msg {
	double t_sent;	   /* kernel side; < -1e8: not seen in the kernel log */
	double t_recv;	   /* target side; < -1e8: never arrived */
	double t_answer;   /* the target's answer; < -1e8: none */
	char sent[64];	   /* "ABORT TASK itt 0x13", "LUN RESET", "login", ... */
	char decision[96]; /* "rejected", "never answered", "completed (UA 29/00)", ... */
	char result[160];  /* what the kernel made of it */
	enum rp_outcome outcome;
};

/* A point mark on the ladder (a connection error, a command retried). */
struct rp_mark {
	enum rp_level level;
	double t;
	char text[64];
};

/* A segment of a state band. */
struct rp_band {
	int row; /* in order of first appearance */
	double t0, t1;
	char name[24];	/* "lun0", "session1" */
	char state[24]; /* "running", "blocked", "LOGGED_IN", ... */
};

/*
 * dm-multipath paths (report_paths.c): one band per port (A, B, ...). The
 * dm state is the kernel's (its "Failing path" / "Reinstating path" lines,
 * else the PATH_FAILED / PATH_REINSTATED uevents) once it said anything of
 * the path, the path observer's before that; the checker state, priority
 * and group state are the observer's ("faultlun-agent: path A sda active
 * ready 50 current").
 */
#define RP_MAX_PATHS 8
#define RP_MAX_PSEGS 192
#define RP_MAX_PMARKS 64
struct rp_path {
	char port[16];		     /* "A" */
	char dev[16];		     /* "sda" */
	char devno[16];		     /* "8:0" */
	int nfail, nreinstate;	     /* the kernel's lines (the uevents where it printed none) */
	int nfail_ev, nreinstate_ev; /* dm uevents */
	bool kernel_said;	     /* the kernel's dm state is known */
};
struct rp_pseg {
	int path; /* index in paths */
	double t0, t1;
	char dm[16];	/* "active", "failed" */
	char chk[24];	/* "ready", "ghost", "faulty", ... ("" unknown) */
	char group[16]; /* "current", "enabled", "bypassed", "none", "" */
};
enum rp_pmark_kind {
	RP_PM_UEV_FAILED = 0, /* uevent DM_ACTION=PATH_FAILED */
	RP_PM_UEV_REINSTATED,
	RP_PM_KERN_FAILING, /* "device-mapper: multipath: 254:0: Failing path 8:0." */
	RP_PM_KERN_REINSTATING,
	RP_PM_NKINDS,
};
extern const char *const rp_pmark_names[RP_PM_NKINDS];
struct rp_pmark {
	int path;
	enum rp_pmark_kind kind;
	double t;
};

/* Everything the drawings need, times in seconds from the origin. */
struct rp_model {
	struct fl_result res; /* the result (owned) */
	double origin;	      /* guest time of the first workload step */
	double tmin, tmax;    /* the drawn window */
	struct rp_span spans[RP_MAX_SPANS];
	size_t nspans;
	struct rp_mark marks[RP_MAX_MARKS];
	size_t nmarks;
	struct rp_band bands[RP_MAX_BANDS];
	size_t nbands;
	int ncycles;
	int seq_cycle; /* the cycle of the sequence chart; -1: none */
	struct rp_msg msgs[RP_MAX_MSGS];
	size_t nmsgs;
	bool eh_from_trace; /* the kernel printed no error-handler step */
	/* summary */
	double first_eh; /* < 0: none */
	int result_step; /* the step whose result the summary names; -1: none */
	double stall_total_ms, stall_max_ms;
	int nstalls;
	bool has_healthy;
	int retries;
	char rules[512]; /* "hang-read (hold) x6, ..." */
	/* dm-multipath paths (npaths 0: no multipath in this run) */
	struct rp_path paths[RP_MAX_PATHS];
	size_t npaths;
	struct rp_pseg psegs[RP_MAX_PSEGS];
	size_t npsegs;
	struct rp_pmark pmarks[RP_MAX_PMARKS];
	size_t npmarks;
	double first_path_fail; /* < -1e8: no path failed */
	int failover_step;	/* the step running at the first failure; -1: none */
	/* knobs the guest really had (seconds; -1: unknown) */
	double k_timeout, k_abort, k_lu, k_tgt, k_recovery, k_cmd_time_out;
};

/*
 * One row of the summary header, the same for the page and the text: the
 * page shows text with its em part in bold (class em_class) and the note as
 * an aside; the text prints "label: text (note)". sub lists what each rung
 * came to, under the cycles.
 */
#define RP_SUM_ROWS 10
struct rp_sum_row {
	const char *id;	   /* the page's element id: "verdict", "sum-cycles", ... */
	const char *label; /* "first error-handler action" */
	char text[512];
	size_t em_at, em_len; /* the part in bold; em_len 0: none */
	const char *em_class; /* NULL: none */
	char note[320];	      /* "": none */
	int nsub;
	struct {
		const char *label; /* a rung's name */
		char text[256];	   /* "6 timed out (lu_reset_tmo 2 s, ...)" */
	} sub[RP_NLEVELS > RP_MAX_PATHS ? RP_NLEVELS : RP_MAX_PATHS];
};

/* Fills rows with the summary of m (verdict first); returns how many. */
size_t rp_summary(const struct rp_model *m, struct rp_sum_row rows[RP_SUM_ROWS]);

/* Appends printf-style text to row's text; with em, the appended part becomes
 * the row's bold part. Text past the row's size is cut. */
void rp_sum_put(struct rp_sum_row *row, bool em, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The multipath rows (failover, path events) at *w and on; none without paths. */
void rp_summary_paths(const struct rp_model *m, struct rp_sum_row **w);
/* The dm-multipath path bands, marks and counts of m (report_paths.c). */
void rp_build_paths(struct rp_model *m);
/* The "paths" band: one row per path with its marks (a self-contained <svg>). */
void rp_svg_paths(FILE *f, const struct rp_model *m, int w);

/*
 * Builds the model of a result, taking *res over (emptied). Returns NULL on
 * ENOMEM, *res left to the caller then.
 */
struct rp_model *rp_model_new(struct fl_result *res);
/* Reads the result file at path and builds its model; NULL (message printed) when it cannot. */
struct rp_model *rp_model_read(const char *path);
void rp_model_free(struct rp_model *m);

/* The ladder rung of a trace TMF name ("lun_reset"), or -1. */
int rp_tmf_level(const char *tmf);
/* The target's decision on the TMF trace event e (arrived at t): s->decision, t_recv, t_answer. */
void rp_decide(const struct rp_model *m, const struct fl_result_trace *e, double t,
	       struct rp_span *s);
/* s->ended_by = "target: DECISION" (append: after the text it has). */
void rp_ended_by_target(struct rp_span *s, bool append);
/* Pairs each TMF rung the kernel took with the TMF the target received (report_seq.c). */
void rp_pair_spans(struct rp_model *m);
/* The messages of the sequence chart (the first cycle with task management). */
void rp_build_sequence(struct rp_model *m);

/* Names for the drawings and the trace file. */
extern const char *const rp_level_names[RP_NLEVELS];
extern const char *const rp_outcome_names[RP_NOUTCOMES];
extern const char *const rp_outcome_colors[RP_NOUTCOMES];

/* Time-axis ticks drawn, whatever the window. */
#define RP_MAX_TICKS 64

/* Writes s HTML/XML-escaped. */
void rp_esc(FILE *f, const char *s);

/*
 * Draws one run's escalation ladder into an SVG group at (x, y), width w,
 * on the time window [tmin, tmax] (seconds from the run's origin: pass the
 * same window for runs drawn side by side, as the kernel matrix does);
 * id names the group, which carries the window as data-tmin / data-tmax.
 * Returns the height used.
 */
int vm_report_ladder_svg(FILE *f, const struct rp_model *m, const char *id, int x, int y, int w,
			 double tmin, double tmax);
/* Time ticks from y0 (their labels) down to y1 on the ladder's x scale of [tmin, tmax]. */
void rp_svg_axis(FILE *f, int x, int y0, int y1, int w, double tmin, double tmax);
/* The workload's steps as bars on the ladder's x scale; returns the height used. */
int rp_svg_steps(FILE *f, const struct rp_model *m, int x, int y, int w, double tmin, double tmax);
/* The sequence chart of m->seq_cycle (a self-contained <svg>). */
void rp_svg_sequence(FILE *f, const struct rp_model *m);
/* Device and session state bands with the healthy LUN's latency (log scale). */
void rp_svg_states(FILE *f, const struct rp_model *m, int w);

/* The verdict code (FL_VM_PASS, _FAIL, _SKIP) of a result's "PASS", "FAIL", "N/A"; FL_VM_ERROR
 * for anything else or NULL. */
int rp_verdict_code(const char *verdict);

/* Writes the Chrome trace-event JSON of the run; 0 or -errno. */
int rp_write_chrome_trace(const struct rp_model *m, const char *path);

#endif
