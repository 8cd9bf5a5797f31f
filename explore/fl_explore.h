/* SPDX-License-Identifier: MIT */
/*
 * fl_explore.h - the search over fault schedules (`faultlun explore`,
 * docs/explore.md): a schedule generator drawing rules from the action
 * registry's descriptors (fl_draw.h) on a deterministic stream, the oracles
 * that judge one trial's run in the VM lab, and the delta-debugging core
 * that minimises a finding's schedule.
 *
 * A schedule is a JSON array of ordinary scenario rules (ids x1, x2, ...);
 * a trial's scenario is BASE with the schedule appended to its rules. The
 * same seed, trial number and BASE draw the same schedule.
 */
#ifndef FL_EXPLORE_H
#define FL_EXPLORE_H

#include "fl_result.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds of the search. */
#define FL_EXPLORE_MAX_FAULTS 16       /* rules in one schedule */
#define FL_EXPLORE_MAX_TRIALS 100000   /* trials of one exploration (its numbers) */
#define FL_EXPLORE_MAX_SHARDS 1024     /* --shard I/N: N at most */
#define FL_EXPLORE_MAX_KMSG (16 << 20) /* bytes of a trial's kernel log read */
#define FL_EXPLORE_EVIDENCE 512	       /* bytes of a finding's evidence line */

/* What the generator needs of BASE (taken from its document by fl_explore_base_init). */
struct fl_explore_base {
	json_t *doc;		/* BASE as parsed (a reference) */
	const char *states[64]; /* its declared states (pointers into doc) */
	size_t nstates;
	unsigned ngroups;     /* target port groups (1 without) */
	const char *ports[8]; /* its ports' ids, with two or more (a fault may take one path) */
	size_t nports;
	long long lun;	    /* the LUN under test: step 0's lun, else the first LUN */
	double timeout_ms;  /* knobs.timeout_s in ms (30 s when absent) */
	unsigned frontend;  /* FL_FE_ISCSI or FL_FE_TCMU: which actions it may draw */
	bool tmf_transport; /* over iSCSI, draw TMF answers and transport faults too */
};

/*
 * Takes what the generator needs from BASE's document doc (a reference is
 * taken) for path "iscsi" or "tcmu". 0, or -1 with a message in err.
 */
int fl_explore_base_init(struct fl_explore_base *b, json_t *doc, const char *path, char *err,
			 size_t errlen);
/* Drops the reference fl_explore_base_init took. */
void fl_explore_base_free(struct fl_explore_base *b);

/*
 * Draws trial number `trial`'s schedule for seed: 1..max_faults rules (max
 * capped at FL_EXPLORE_MAX_FAULTS), actions weighted towards the recovery
 * path, each with a bounded match (the LUN under test, an opcode class, and a
 * count window or a time window). attempt > 0 draws another schedule of the
 * same trial (after a schedule lint refused). A new JSON array.
 */
json_t *fl_explore_draw(const struct fl_explore_base *b, uint64_t seed, unsigned trial,
			unsigned attempt, unsigned max_faults);
/* The sends of one command the kernel makes at most: sd's five retries and the first. */
#define FL_EXPLORE_SD_SENDS 6
/* The calls of a repeated step the liveness bound allows for each (its allowance times these). */
#define FL_EXPLORE_MAX_REPEATS 16
/*
 * The liveness oracle's allowance, in seconds, under a base's knobs (its
 * check.knobs object, NULL: the defaults) on frontend FL_FE_ISCSI or
 * FL_FE_TCMU: the longest the kernel may take over one command, six sends,
 * each the command's timer at its longest and the whole error handler
 * (docs/explore.md "Oracles").
 */
unsigned fl_explore_allowance_s(json_t *knobs, unsigned frontend);
/*
 * The timer scsi_dh_alua sends REPORT TARGET PORT GROUPS on, seconds, at its
 * longest: 60 on 6.1 and 6.12 (ALUA_FAILOVER_TIMEOUT); 7.2 was seen waiting
 * 255 s for an answer (aborted after 2 x 255 s, and 3 x 255 s, whatever
 * transition time the LUN reported).
 */
#define FL_EXPLORE_RTPG_TIMER_S 255
/* The lost REPORT TARGET PORT GROUPS answers the liveness bound allows for at most. */
#define FL_EXPLORE_RTPG_MAX 16
/*
 * How many REPORT TARGET PORT GROUPS answers a trial's scenario doc may lose
 * (0..FL_EXPLORE_RTPG_MAX): over dm-multipath (knobs.multipath) with an ALUA
 * LUN, the times of each transport drop of a command, response or Data-In
 * PDU and of each rule that drops or holds without a class and with no
 * opcode or 0xa3 (a match without times counts the most); else 0.
 */
unsigned fl_explore_rtpg_losses(json_t *doc);
/*
 * BASE with the rules of schedule whose bits are set in keep appended to its
 * own, named name, and with the liveness bound: each workload step's
 * timeout_s (and a lowered hung_task_timeout_s) lengthened by
 * fl_explore_allowance_s. A new document.
 */
json_t *fl_explore_scenario(const struct fl_explore_base *b, json_t *schedule, uint32_t keep,
			    const char *name);
/*
 * Writes doc to file and lints it as `faultlun lint` would for the base's
 * front end. 0, or -1 (the diagnostics printed on stderr when verbose).
 */
int fl_explore_write_linted(json_t *doc, const char *file, unsigned frontend, bool verbose);

/* The oracles: asked kernel, integrity, liveness, user. */
enum fl_oracle {
	FL_ORACLE_NONE = 0,
	FL_ORACLE_KERNEL,    /* a splat in the trial's kernel log */
	FL_ORACLE_LIVENESS,  /* the run is ERROR, or the workload did not complete */
	FL_ORACLE_USER,	     /* an expectation of BASE's check failed */
	FL_ORACLE_INTEGRITY, /* a stamped read found a block not as the last acknowledged write left
				it */
};

/* What an oracle found: which one, and the line that shows it. */
struct fl_finding {
	enum fl_oracle oracle;
	char evidence[FL_EXPLORE_EVIDENCE];
	const char *splat; /* kernel: the regex of the splat that matched (static) */
};

/* "kernel", "liveness", "user", "integrity" ("none" for FL_ORACLE_NONE). */
const char *fl_oracle_name(enum fl_oracle o);

/*
 * The kernel oracle: the first line of text (a trial's kmsg.txt, len bytes)
 * that reports a kernel bug (BUG:, WARNING:, Oops, general protection fault,
 * KASAN / KFENCE / UBSAN, lockdep's circular locking, an RCU stall, a
 * refcount_t warning, list corruption, a hung task). The lab's own lines
 * ("faultlun-agent") are not looked at. Returns whether it found one.
 */
bool fl_oracle_kernel(const char *text, size_t len, struct fl_finding *f);
/*
 * The integrity oracle: the first step that read back, with "stamp", a block
 * that is not what the last acknowledged write left there (stale, lost, torn,
 * misplaced: the step's "integrity" in the run result). Whether it found one.
 */
bool fl_oracle_integrity(const struct fl_result *r, struct fl_finding *f);
/*
 * The liveness oracle: the run is ERROR (its error as evidence), or fewer
 * than want_steps workload steps were recorded, or a step ended TIMEOUT.
 */
bool fl_oracle_liveness(const struct fl_result *r, size_t want_steps, struct fl_finding *f);
/* The user's own oracle: an expectation of the run failed (its words as evidence). */
bool fl_oracle_user(const struct fl_result *r, struct fl_finding *f);
/*
 * Judges one trial: the run's status rc (fl_vm_run's), its result r (NULL when
 * it has none), its kernel log: the oracles in order, the first that fires.
 */
bool fl_explore_judge(int rc, const struct fl_result *r, const char *kmsg, size_t kmsg_len,
		      size_t want_steps, struct fl_finding *f);

/*
 * Judges a round of candidate subsets (bit i: item i kept) at once: sets
 * fails[i] when cands[i] still trips the failure. 0, or -1 to stop.
 */
typedef int (*fl_ddmin_test)(void *ctx, const uint32_t *cands, size_t n, bool *fails);

/*
 * Delta debugging over the items of all (at most 32): the smallest subset
 * found that still fails, each round's candidates (subsets and complements
 * of the current split) judged in one call. At most max_rounds rounds.
 */
uint32_t fl_ddmin(uint32_t all, fl_ddmin_test test, void *ctx, unsigned max_rounds);

#endif
