/* SPDX-License-Identifier: MIT */
/*
 * runner.c - the libiscsi runner of a scenario's "check" section
 * (docs/scenario-format.md "check"), behind `faultlun check`.
 *
 * Runs the check's typed workload against a target with libiscsi's
 * asynchronous API, through iSCSI sessions of its own: one to the URL's
 * portal, and one more per target port a step names with "port" (opened when
 * the first such step runs; every open session is serviced while any waits,
 * so that an idle one answers the target's NOP-Ins): read, write, discard,
 * sync/fsync, tur, inquiry (SBC-3, SPC-4), sg_raw (a CDB with data-in or
 * data-out), unmap and write_same (SBC-3 5.28 UNMAP, 5.42 WRITE SAME(16)),
 * the task-management functions abort_task (of the previous step's command),
 * lun_reset and target_reset (SAM-5 7, RFC 7143 11.5), ctl (`faultlun ctl
 * SOCKET ARGS...` on the target's control socket) and sleep. It records what
 * an initiator observes of each step (struct fl_step_obs): status and sense
 * (SAM-5 5.3, SPC-4 4.5) or a TMF's response, the errno Linux's block layer
 * gives a block op for its final answer, how many times it was resent, and
 * times; scenario/judge.c gives the verdicts. The block ops (read, write,
 * discard, sync, fsync) are resent as the kernel's block path resends them
 * (scsi_decide_disposition, scsi_check_sense, alua_check_sense when the LUN
 * reports TPGS, scsi_io_completion_action): BUSY, TASK SET FULL, UNIT
 * ATTENTION and ALUA transitioning requeued, NOT READY 04/01 and the other
 * delayed 04/xx retried after a pause, counted retries (sd's five) for
 * MEDIUM ERROR and ABORTED COMMAND, all within (5 + 1) x the command timeout
 * (knobs.timeout_s). The pass-through ops (tur, inquiry, sg_raw, unmap,
 * write_same, which the VM lab's agent sends with SG_IO) keep their first
 * answer and have SG_IO's timeout (fl_step_sgio_timeout_s). A command's timer runs as the kernel's
 * does over iSCSI (wait_timer: one more command timeout after a NOP-Out when the session's pings
 * are on); the connection is pinged when silent and recovered within the replacement timeout (knobs
 * noop_interval_s, noop_timeout_s, recovery_tmo_s). A command whose timer ran out goes through the
 * kernel's error-handling ladder (scmd_eh_abort_handler, scsi_eh_ready_devs, libiscsi's eh
 * handlers): ABORT TASK, and only when a rung fails LUN RESET, TARGET WARM RESET, then a reconnect
 * (a TMF not answered within knobs.reset_wait_ms, default 5 s, fails the connection: straight to
 * the reconnect); a recovered block command is resent within the retries and the bound. Each new
 * session is first scanned as the kernel scans a new disk (READ CAPACITY until GOOD), which takes
 * its power-on unit attention. A step's deadline (timeout_s) ends it as TIMEOUT.
 */
#include "fl_scenario.h"
#include "initiator.h"
#include "mpath.h"
#include "runner.h"
#include "fl_stamp.h"

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static struct iscsi_context *ctx; /* the session of the step that runs */
static int url_lun;		  /* the LUN of the URL: a step's default */
static const char *run_url, *run_iname;
/* Sessions: [0] the URL's, [1 + i] the one to the scenario's port i (or NULL). */
#define MAX_SESSIONS (1 + FL_RUNNER_MAX_PORTS)
static struct iscsi_context *sessions[MAX_SESSIONS];
static char *session_url[MAX_SESSIONS]; /* what each session logged in to */
static bool sess_down[MAX_SESSIONS];	/* its connection failed a ping (ping) */
static uint32_t block_size = 512;
static struct scsi_task *stale[512]; /* timed-out tasks, freed at the end */
static struct op *stale_op[512];
static size_t nstale;
static int reset_wait_ms = FL_RESET_WAIT_MS; /* each error-handling TMF's answer (knobs) */
static int eh_timeout_ms = 10000; /* the error handler's own commands (knobs eh_timeout_s) */
/* The last command sent: what an abort_task step aborts. */
static struct {
	bool sent;
	struct iscsi_context *session;
	int lun;
	uint32_t itt, cmdsn;
} last_cmd;

/*
 * The dm-multipath model (mpath.h), on when the check's knobs say
 * "multipath" and the scenario has two ports or more: block steps go through
 * it, whatever their "port", as the VM lab's dm-multipath device takes them.
 */
static struct {
	bool on;
	struct fl_mp map;
	enum fl_mp_handler handler;
	bool handler_known, explicit_alua;
	int64_t checked[FL_MP_MAX_PATHS]; /* each path's last check */
	bool dead[FL_MP_MAX_PATHS];	  /* failed without an answer: its session is gone */
	int poll_ms;			  /* multipathd's checker interval */
	int no_path_retry;		  /* checks to queue for with every path down; -1: queue */
} mp;

/*
 * The kernel initiator's connection, for every session: its NOP-Out pings
 * and its replacement timeout (the VM lab's iscsid.conf defaults: a NOP-Out
 * every 5 s answered within 5 s, 120 s; under dm-multipath the map's
 * fast_io_fail_tmo, 5 s), set from the knobs by conn_setup.
 */
static struct {
	int noop_interval_ms, noop_timeout_ms; /* the NOP-Out pings; 0: off */
	int recovery_ms;		       /* the session's replacement timeout */
} conn;

/* One asynchronous call's completion. */
struct op {
	bool done;
	int status;
	uint32_t tmf_resp;
	struct scsi_task *task;
};

/* Callback of commands, TMFs and logins. */
static void op_cb(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
	struct op *op = priv;
	(void)iscsi;
	op->done = true;
	op->status = status;
	if (op->tmf_resp == 0xdead && data && status == SCSI_STATUS_GOOD)
		op->tmf_resp = *(uint32_t *)data;
	if (op->tmf_resp != 0xdead)
		op->task = data;
}

/*
 * Services every open session until op is done or ms pass (with op NULL, for
 * ms); false on timeout. A session between reconnect tries has no socket (fd
 * -1) and is serviced once per round.
 */
static bool wait_op(struct op *op, int64_t ms)
{
	int64_t end = ini_now_ms() + ms;

	while (!op || !op->done) {
		struct pollfd pfd[MAX_SESSIONS];
		struct iscsi_context *who[MAX_SESSIONS];
		int64_t left = end - ini_now_ms();
		nfds_t n = 0;

		ini_watchdog_kick();
		if (left <= 0)
			return false;
		for (size_t i = 0; i < MAX_SESSIONS; i++) {
			if (!sessions[i])
				continue;
			who[n] = sessions[i];
			pfd[n].fd = iscsi_get_fd(sessions[i]);
			pfd[n].events = (short)iscsi_which_events(sessions[i]);
			pfd[n++].revents = 0;
		}
		if (poll(pfd, n, left > 100 ? 100 : (int)left) < 0 && errno != EINTR)
			return false;
		for (nfds_t i = 0; i < n; i++)
			iscsi_service(who[i], pfd[i].revents);
	}
	return true;
}

struct result;
static const char *errno_of(const struct result *r);

/* Keeps a call that may still be answered, to free at the end of the run. */
static void keep_stale(struct op *op, struct scsi_task *t)
{
	if (nstale < sizeof(stale) / sizeof(stale[0])) {
		stale_op[nstale] = op;
		stale[nstale++] = t;
	}
}

/*
 * Sends t (made by the caller, owned from here) to lun on ctx and waits up to
 * ms for its answer: t answered, for the caller to free; NULL when t could
 * not be made or sent (freed), or was not answered in time or its connection
 * failed (kept: libiscsi may still call back for it).
 */
static struct scsi_task *send_wait(struct scsi_task *t, int lun, int64_t ms)
{
	/* On the heap: libiscsi may call back late for a task not answered in time. */
	struct op *op = calloc(1, sizeof(*op));

	if (!t || !op || iscsi_scsi_command_async(ctx, lun, t, op_cb, NULL, op)) {
		if (t)
			scsi_free_scsi_task(t);
		free(op);
		return NULL;
	}
	if (!wait_op(op, ms) || op->status == SCSI_STATUS_CANCELLED ||
	    op->status == SCSI_STATUS_ERROR) {
		keep_stale(op, t);
		return NULL;
	}
	free(op);
	return t;
}

/*
 * Pings every open session once, as each connection's transport timer does
 * when it has been silent (libiscsi.c iscsi_send_nopout): a NOP-Out each,
 * their NOP-Ins waited for up to noop_timeout (not waited for with that 0),
 * while every session is serviced. A session other than ctx whose NOP-In
 * does not come has failed (sess_down: the kernel fails that connection,
 * iscsi_check_transport_timeouts, and dm-multipath that path). 1: op is done
 * meanwhile; 0: ctx answered; -1: ctx did not, its connection failed.
 */
static int ping(struct op *op)
{
	struct op *nop[MAX_SESSIONS] = {0};
	int64_t end = ini_now_ms() + conn.noop_timeout_ms;
	int rc = 0;

	for (size_t k = 0; k < MAX_SESSIONS; k++) {
		if (!sessions[k] || sess_down[k] || !(nop[k] = calloc(1, sizeof(*nop[k]))))
			continue;
		if (iscsi_nop_out_async(sessions[k], op_cb, NULL, 0, nop[k])) {
			free(nop[k]);
			nop[k] = NULL;
			if (sessions[k] == ctx)
				rc = -1;
			else
				sess_down[k] = true;
		}
	}
	for (size_t k = 0; k < MAX_SESSIONS; k++) {
		if (!nop[k])
			continue;
		if (conn.noop_timeout_ms > 0 && !wait_op(nop[k], end - ini_now_ms())) {
			if (sessions[k] == ctx)
				rc = -1;
			else
				sess_down[k] = true;
		}
		if (!nop[k]->done)
			keep_stale(nop[k], NULL);
		else
			free(nop[k]);
	}
	return op->done ? 1 : rc;
}

/*
 * As wait_op, for a command: the session is pinged as the kernel's iSCSI
 * initiator pings a connection that has been silent (a NOP-Out after
 * noop_interval without an answer, the connection failed when its NOP-In
 * does not come within noop_timeout; libiscsi.c
 * iscsi_check_transport_timeouts). 1: op done; 0: ms passed; -1: the
 * connection failed.
 */
static int wait_pinged(struct op *op, int64_t ms)
{
	int64_t end = ini_now_ms() + ms;

	if (conn.noop_interval_ms <= 0 || conn.noop_timeout_ms <= 0)
		return wait_op(op, ms) ? 1 : 0;
	for (;;) {
		int64_t left = end - ini_now_ms();
		int p;

		if (left <= 0)
			return 0;
		if (wait_op(op, left < conn.noop_interval_ms ? left : conn.noop_interval_ms))
			return 1;
		if (ini_now_ms() >= end)
			return 0;
		p = ping(op);
		if (p)
			return p;
	}
}

/* ms, or what is left until deadline when that is less (at least 0). */
static int64_t until(int64_t ms, int64_t deadline)
{
	int64_t left = deadline - ini_now_ms();

	return left < ms ? (left > 0 ? left : 0) : ms;
}

/*
 * Waits for a command's answer as the kernel's timer of an iSCSI command
 * runs out (scsi_timeout, which asks libiscsi.c's iscsi_eh_cmd_timed_out
 * first): at the first expiry, after the command timeout, a session whose
 * pings are on (noop_interval or noop_timeout not 0) checks its connection
 * with a NOP-Out and gives the command one more command timeout (a NOP-In
 * that does not come within noop_timeout fails the connection); the error
 * handling starts at the next expiry, or at the first with the pings off.
 * Not modelled: the kernel gives one more timeout again to a command that
 * "made progress" since the last expiry (its PDU went out in a later jiffy
 * than it was queued, or its data moved), which is chance
 * (docs/scenario-format.md). 1: op done; 0: the error handling starts (or
 * the deadline passed); -1: the connection failed.
 */
static int wait_timer(struct op *op, int timeout_ms, int64_t deadline)
{
	int w = wait_pinged(op, until(timeout_ms, deadline));
	int64_t expiry = ini_now_ms();

	if (w || (conn.noop_interval_ms <= 0 && conn.noop_timeout_ms <= 0) || expiry >= deadline)
		return w;
	w = ping(op);
	if (w)
		return w;
	return wait_pinged(op, until(expiry + timeout_ms - ini_now_ms(), deadline));
}

/*
 * url with its portal ("ADDR:PORT" after "iscsi://" and any "USER%SECRET@")
 * replaced by portal; NULL when url has no portal to replace.
 */
static char *url_with_portal(const char *url, const char *portal)
{
	const char *host, *end, *at;
	char *out;

	if (strncmp(url, "iscsi://", 8))
		return NULL;
	host = url + 8;
	end = strchr(host, '/');
	if (!end)
		return NULL;
	for (at = end; at > host && at[-1] != '@'; at--)
		;
	if (at > host)
		host = at;
	if (asprintf(&out, "%.*s%s%s", (int)(host - url), url, portal, end) < 0)
		return NULL;
	return out;
}

/*
 * What the kernel's scan of a new session does before any step: READ
 * CAPACITY(10) on ctx until it is answered GOOD (at most 3 times), which
 * takes the new I_T nexus's power-on unit attention out of the way and gives
 * the block size.
 */
static void session_scan(int lun)
{
	for (int i = 0; i < 3; i++) {
		struct scsi_task *t = send_wait(scsi_cdb_readcapacity10(0, 0), lun, 5000);
		bool good;

		if (!t)
			break;
		good = t->status == SCSI_STATUS_GOOD && t->datain.size >= 8;
		if (good) {
			uint32_t bs = (uint32_t)t->datain.data[4] << 24 |
				      (uint32_t)t->datain.data[5] << 16 |
				      (uint32_t)t->datain.data[6] << 8 | t->datain.data[7];

			/* the target's word: only a block size a disk can have is taken */
			if (bs >= 512 && bs <= 65536 && !(bs & (bs - 1)))
				block_size = bs;
		}
		scsi_free_scsi_task(t);
		if (good)
			break;
	}
}

/*
 * Makes ctx the session a step with port index port (-1: the URL's) goes
 * through, logging in to that port's portal on first use. False, with why,
 * when the port has no known portal or the login fails: the step then did
 * not run.
 */
static bool use_session(const struct fl_runner_opts *o, int port, char *why, size_t whylen)
{
	const struct fl_runner_port *p;
	char *url;

	if (port < 0) {
		ctx = sessions[0];
		return true;
	}
	if ((size_t)port >= o->nports || port >= FL_RUNNER_MAX_PORTS) {
		snprintf(why, whylen, "port %d: the runner knows no such port", port);
		return false;
	}
	if (sessions[1 + port]) {
		ctx = sessions[1 + port];
		return true;
	}
	p = &o->ports[port];
	if (!p->portal) {
		snprintf(why, whylen,
			 "port %s: no portal known (with --url, its \"listen\" must give a port "
			 "number)",
			 p->name);
		return false;
	}
	url = url_with_portal(run_url, p->portal);
	if (!url) {
		snprintf(why, whylen, "port %s: cannot make a URL from %s", p->name, run_url);
		return false;
	}
	if (!strcmp(url, run_url)) {
		/* the URL's own portal: the same session */
		free(url);
		ctx = sessions[0];
		return true;
	}
	sessions[1 + port] = ini_login(url, run_iname, NULL, 15000);
	if (!sessions[1 + port]) {
		snprintf(why, whylen, "port %s: cannot log in to %s", p->name, url);
		free(url);
		return false;
	}
	session_url[1 + port] = url;
	ctx = sessions[1 + port];
	session_scan(url_lun);
	return true;
}

/*
 * Replaces ctx, whose session error handling gave up on, by a new session to
 * the same portal, as an initiator's session recovery does: logins are
 * retried about once a second until one succeeds or deadline passes. The old
 * context is destroyed only once a new one is logged in (its tasks are
 * cancelled then; their memory is freed at the end of the run).
 */
static bool renew_session(int64_t deadline)
{
	size_t k;
	unsigned tries = 0;

	for (k = 0; k < MAX_SESSIONS && sessions[k] != ctx; k++)
		;
	if (k == MAX_SESSIONS || !session_url[k])
		return false;
	do {
		tries++;
		int64_t left = deadline - ini_now_ms();
		struct iscsi_context *n =
		    ini_login_plain(session_url[k], run_iname,
				    left < 5000 ? (left > 1000 ? (int)left : 1000) : 5000);
		if (n) {
			iscsi_destroy_context(ctx);
			ctx = sessions[k] = n;
			sess_down[k] = false;
			return true;
		}
		if (ini_now_ms() + 1000 >= deadline)
			break;
		struct timespec pause = {1, 0};
		nanosleep(&pause, NULL);
	} while (ini_now_ms() < deadline);
	fprintf(stderr, "session recovery: no login in %u tries (the last: %s)\n", tries,
		ini_login_why()[0] ? ini_login_why() : "no answer");
	return false;
}

/*
 * A session recovery of ctx: new logins until deadline or until the
 * session's replacement timeout (recovery_tmo), after which the kernel fails
 * the commands it holds (DID_TRANSPORT_FAILFAST) and dm-multipath fails the
 * path.
 */
static bool recover_session(int64_t deadline)
{
	if (conn.recovery_ms >= 0 && ini_now_ms() + conn.recovery_ms < deadline)
		deadline = ini_now_ms() + conn.recovery_ms;
	return renew_session(deadline);
}

/* What one step produced. */
struct result {
	bool run, done;
	bool nocmd;	    /* the step sent no command (no_command) */
	bool past_deadline; /* the step's deadline passed before it ended */
	uint32_t repeats;
	int status;
	uint8_t key, asc, ascq;
	int64_t ms;
	char eh[160];	   /* error handling performed, for the log */
	uint32_t retries;  /* times the command was resent (block ops) */
	bool eh_failed;	   /* the error handling did not recover */
	bool conn_failed;  /* the last send ended with the connection's failure */
	bool tmf;	   /* a TMF step: */
	int tmf_resp;	   /* its response (RFC 7143 11.6.1), -1: none */
	bool ctl;	   /* a ctl step: */
	int exit_code;	   /* faultlun ctl's exit status (-1: killed at the timeout) */
	char answer[256];  /* and the first line of its answer */
	char cmdline[256]; /* the ctl command line it ran, for messages */
	unsigned char *in; /* a read's data-in is copied here (NULL: not kept) */
	size_t in_cap, in_len;
	char integrity[128]; /* a stamped read: the first block not as acknowledged */
};

/* ctl steps: the target's control socket (--ctl) and the faultlun binary. */
static const char *ctl_socket;
static const char *faultlun_bin = "faultlun";

/* Sends a TMF and waits for its answer; returns the response or -1. */
static int tmf(enum iscsi_task_mgmt_funcs fn, int lun, struct scsi_task *t, int ms)
{
	/* On the heap: an unanswered TMF may still be answered later. */
	struct op *op = calloc(1, sizeof(*op));
	int resp = -1;

	op->tmf_resp = 0xdead;
	if (iscsi_task_mgmt_async(ctx, lun, fn, t ? t->itt : 0xffffffff, t ? t->cmdsn : 0, op_cb,
				  op)) {
		free(op);
		return -1;
	}
	if (wait_op(op, ms) && op->status == SCSI_STATUS_GOOD)
		resp = (int)op->tmf_resp;
	if (op->done)
		free(op);
	else
		keep_stale(op, NULL); /* a TMF has no task of ours */
	return resp;
}

/*
 * The SCSI midlayer's budget for one block command (sd.c SD_MAX_RETRIES):
 * retries counted against it are the ones after a command timeout that the
 * error handling recovered from, and the counted retries of
 * scsi_decide_disposition (MEDIUM ERROR other than 11/13/14, ABORTED COMMAND
 * other than 10/xx, TASK ABORTED).
 */
#define SD_RETRIES 5
/* A flush's timeout in command timeouts (sd.h SD_FLUSH_TIMEOUT_MULTIPLIER). */
#define SD_FLUSH_TIMEOUT_MULTIPLIER 2
/* Most answers one command is resent after: the target's word is bounded. */
#define MAX_RESENDS 2000
/* Pause before a requeue (BUSY, TASK SET FULL, ALUA transition) and before a delayed retry. */
#define REQUEUE_PAUSE_MS 10
#define DELAYED_RETRY_PAUSE_MS 100

/* What the kernel's block path does with one answer (scsi_decide_disposition,
 * scsi_io_completion_action). */
enum disposition {
	DISP_DONE,	    /* the answer is final */
	DISP_REQUEUE,	    /* resent, not counted (ADD_TO_MLQUEUE, ACTION_RETRY) */
	DISP_DELAYED,	    /* resent after a pause, not counted (ACTION_DELAYED_RETRY) */
	DISP_COUNTED_RETRY, /* resent while SD_RETRIES allows (NEEDS_RETRY) */
};

/*
 * One bit of a LUN the kernel's scan reads once (a field of an INQUIRY or a
 * mode page): cache[lun] bit 0 known, bit 1 set. Asks lun with the command
 * make gives, on first need; has judges a GOOD answer (the target's word:
 * it reads only what came). No answer: not set, as the kernel assumes.
 */
static bool lun_scan_bit(uint8_t cache[256], int lun, struct scsi_task *(*make)(void),
			 bool (*has)(const uint8_t *d, size_t n))
{
	uint8_t *k;
	struct scsi_task *t;

	if (lun < 0 || lun > 255)
		return false;
	k = &cache[lun];
	if (*k & 1)
		return *k & 2;
	*k = 1;
	t = send_wait(make(), lun, reset_wait_ms > 1000 ? reset_wait_ms : 1000);
	if (!t)
		return false;
	if (t->status == SCSI_STATUS_GOOD && t->datain.size > 0 &&
	    has(t->datain.data, (size_t)t->datain.size))
		*k |= 2;
	scsi_free_scsi_task(t);
	return *k & 2;
}

/* LUNs whose standard INQUIRY was read for its TPGS field. */
static uint8_t lun_tpgs[256];

static struct scsi_task *make_std_inquiry(void)
{
	return scsi_cdb_inquiry(0, 0, 36);
}

/* TPGS (SPC-4 6.6.2, byte 5 bits 5:4) nonzero. */
static bool tpgs_set(const uint8_t *d, size_t n)
{
	return n >= 6 && (d[5] & 0x30);
}

/*
 * True when lun reports TPGS, so that the kernel's scsi_dh_alua handler
 * attaches to it. Asked only when an answer's handling depends on it.
 */
static bool lun_has_tpgs(int lun)
{
	return lun_scan_bit(lun_tpgs, lun, make_std_inquiry, tpgs_set);
}

/* LUNs whose caching mode page was read for WCE. */
static uint8_t lun_wce[256];

static struct scsi_task *make_caching_sense(void)
{
	return scsi_cdb_modesense6(0, SCSI_MODESENSE_PC_CURRENT, SCSI_MODEPAGE_CACHING, 0, 255);
}

/* WCE (SBC-3 6.4.5: caching mode page 08h, byte 2 bit 2) in a MODE SENSE(6) answer. */
static bool wce_set(const uint8_t *d, size_t n)
{
	size_t at = n >= 4 ? 4 + (size_t)d[3] : n; /* past the block descriptors */

	return at + 3 <= n && (d[at] & 0x3f) == 0x08 && d[at + 1] >= 1 && (d[at + 2] & 0x04);
}

/*
 * True when lun reports a volatile write cache, as the kernel's scan reads
 * it (sd_read_cache_type); without the page, write through, as sd assumes
 * ("Assuming drive cache: write through").
 */
static bool lun_wce_on(int lun)
{
	return lun_scan_bit(lun_wce, lun, make_caching_sense, wce_set);
}

/*
 * The kernel's block-path handling of an answer to a block command on lun
 * (Linux 6.1): scsi_decide_disposition with scsi_check_sense and, when the
 * LUN reports TPGS, scsi_dh_alua's alua_check_sense (in the multipath model,
 * the handler's own check_sense: fl_mp_sense_requeue); then
 * scsi_io_completion_action for what they pass up.
 */
static enum disposition block_disposition(const struct result *r, int lun)
{
	if (r->status == 0x02 && mp.on && fl_mp_sense_requeue(mp.handler, r->key, r->asc, r->ascq))
		return DISP_REQUEUE;
	switch (r->status) {
	case 0x08: /* BUSY */
	case 0x28: /* TASK SET FULL */
		return DISP_REQUEUE;
	case 0x40: /* TASK ABORTED */
		return DISP_COUNTED_RETRY;
	case 0x02:
		break;
	default:
		return DISP_DONE;
	}
	switch (r->key) {
	case SCSI_SENSE_UNIT_ATTENTION:
		/*
		 * alua_check_sense requeues 29/xx, 2A/01, 2A/06, 2A/07, 3F/03 and
		 * 3F/0E; scsi_io_completion_action retries any other UNIT ATTENTION
		 * of a fixed disk: both resend until the command's time is up.
		 */
		return DISP_REQUEUE;
	case SCSI_SENSE_NOT_READY:
		if (r->asc != 0x04)
			return DISP_DONE;
		if (r->ascq == 0x0a)
			/* ALUA transitioning: alua_check_sense requeues it, else a delayed reprep
			 */
			return lun_has_tpgs(lun) ? DISP_REQUEUE : DISP_DELAYED;
		switch (r->ascq) {
		case 0x01:
		case 0x04:
		case 0x05:
		case 0x06:
		case 0x07:
		case 0x08:
		case 0x09:
		case 0x11:
		case 0x14:
		case 0x1a:
		case 0x1b:
		case 0x1d:
			return DISP_DELAYED;
		default:
			return DISP_DONE;
		}
	case SCSI_SENSE_MEDIUM_ERROR:
		if (r->asc == 0x11 || r->asc == 0x13 || r->asc == 0x14)
			return DISP_DONE; /* unrecoverable read error: no retry */
		return DISP_COUNTED_RETRY;
	case 0x0b: /* ABORTED COMMAND */
		return r->asc == 0x10 ? DISP_DONE : DISP_COUNTED_RETRY;
	default:
		return DISP_DONE;
	}
}

/*
 * Sends one error-handling TMF on lun and records it in r->eh; 0 when it was
 * answered FUNCTION COMPLETE, 1 when it was answered otherwise, -1 when its
 * answer did not come within reset_wait_ms.
 */
static int eh_tmf(enum iscsi_task_mgmt_funcs fn, int lun, struct scsi_task *t, struct result *r)
{
	const char *name = fn == ISCSI_TM_ABORT_TASK  ? "abort"
			   : fn == ISCSI_TM_LUN_RESET ? "lun_reset"
						      : "target_reset";
	int resp;

	strncat(r->eh, name, sizeof(r->eh) - strlen(r->eh) - 1);
	resp = tmf(fn, lun, t, reset_wait_ms);
	strncat(r->eh,
		resp == 0  ? " "
		: resp < 0 ? "(no answer) "
			   : "(failed) ",
		sizeof(r->eh) - strlen(r->eh) - 1);
	return resp == 0 ? 0 : resp < 0 ? -1 : 1;
}

/*
 * The error handler's TEST UNIT READY after a reset (scsi_eh_tur, sent twice
 * at most while answered UNIT ATTENTION; each waited for the knobs'
 * eh_timeout_s): it takes the reset's unit attention 29/00 before the command
 * is resent. True when the LUN answered otherwise (the reset worked), false
 * when it did not answer or kept answering UNIT ATTENTION (the error handler
 * goes on to the next rung). Recorded in r->eh.
 */
static bool eh_tur(int lun, struct result *r)
{
	for (int i = 0; i < 2; i++) {
		struct scsi_task *t = send_wait(scsi_cdb_testunitready(), lun, eh_timeout_ms);
		bool ua;

		if (!t)
			break;
		ua = t->status == SCSI_STATUS_CHECK_CONDITION &&
		     t->sense.key == SCSI_SENSE_UNIT_ATTENTION;
		scsi_free_scsi_task(t);
		strncat(r->eh, ua ? "tur(ua) " : "tur ", sizeof(r->eh) - strlen(r->eh) - 1);
		if (!ua)
			return true;
	}
	strncat(r->eh, "tur(failed) ", sizeof(r->eh) - strlen(r->eh) - 1);
	return false;
}

/*
 * The error handling of a command t that timed out, as Linux with iscsi_tcp
 * does it: ABORT TASK (scmd_eh_abort_handler, iscsi_eh_abort); when the
 * abort fails, LOGICAL UNIT RESET (scsi_eh_bus_device_reset,
 * iscsi_eh_device_reset), then TARGET WARM RESET (scsi_eh_target_reset,
 * iscsi_eh_recover_target), each reset followed by the error handler's TEST
 * UNIT READY (eh_tur; a reset whose TEST UNIT READY fails does not count),
 * then a new session (iscsi_eh_session_reset). A
 * TMF whose answer does not come fails the connection (libiscsi's TMF
 * timeout), which leaves session recovery as the only way on. A command is
 * aborted once (aborted: it was): when it times out again after its abort,
 * the error handler starts at the LUN RESET (scsi_abort_command refuses a
 * second abort, SCSI_EH_ABORT_SCHEDULED). True when one rung recovered.
 */
static bool eh_ladder(int lun, struct scsi_task *t, bool aborted, int64_t deadline,
		      struct result *r)
{
	int a = aborted ? 1 : eh_tmf(ISCSI_TM_ABORT_TASK, lun, t, r);

	if (a == 0)
		return true;
	if (a > 0) {
		a = eh_tmf(ISCSI_TM_LUN_RESET, lun, NULL, r);
		if (a == 0 && eh_tur(lun, r))
			return true;
	}
	if (a >= 0) {
		a = eh_tmf(ISCSI_TM_TARGET_WARM_RESET, lun, NULL, r);
		if (a == 0 && eh_tur(lun, r))
			return true;
	}
	strncat(r->eh, "reconnect ", sizeof(r->eh) - strlen(r->eh) - 1);
	return recover_session(deadline);
}

/* How far one command of run_task has got in its resends. */
struct task_retry {
	int64_t bound;	  /* (SD_RETRIES + 1) x the command timeout since first sent */
	int64_t deadline; /* the step's deadline */
	int counted;	  /* resends counted against SD_RETRIES */
	int resends;	  /* every resend, bounded by MAX_RESENDS */
	bool aborted;	  /* its error handling sent its ABORT TASK */
};

/* Records t as the last command sent, the one an abort_task step aborts. */
static void note_sent(const struct scsi_task *t, int lun)
{
	last_cmd.sent = true;
	last_cmd.session = ctx;
	last_cmd.lun = lun;
	last_cmd.itt = t->itt;
	last_cmd.cmdsn = t->cmdsn;
}

/* Copies the answer of t (status and sense) into r and frees t and its op. */
static void take_answer(struct scsi_task *t, struct op *opp, struct result *r)
{
	r->done = true;
	r->status = t->status;
	r->key = r->asc = r->ascq = 0;
	if (t->status == SCSI_STATUS_CHECK_CONDITION) {
		r->key = (uint8_t)t->sense.key;
		r->asc = (uint8_t)(t->sense.ascq >> 8);
		r->ascq = (uint8_t)(t->sense.ascq & 0xff);
	}
	r->in_len = 0;
	if (r->in && t->datain.size > 0) {
		r->in_len = (size_t)t->datain.size < r->in_cap ? (size_t)t->datain.size : r->in_cap;
		memcpy(r->in, t->datain.data, r->in_len);
	}
	scsi_free_scsi_task(t);
	free(opp);
}

/*
 * After an answer to a block command: true when the kernel's block path
 * resends it (after the pause a requeue or a delayed retry takes), false
 * when the answer in r is final.
 */
static bool resend_answered(int lun, struct task_retry *tr, struct result *r)
{
	enum disposition d = block_disposition(r, lun);
	int64_t now;

	if (d == DISP_DONE || tr->resends >= MAX_RESENDS)
		return false;
	if (d == DISP_COUNTED_RETRY && tr->counted >= SD_RETRIES)
		return false;
	now = ini_now_ms();
	if (now >= tr->bound || now >= tr->deadline)
		return false; /* the kernel fails it with its last answer */
	if (d == DISP_COUNTED_RETRY)
		tr->counted++;
	tr->resends++;
	r->retries++;
	if (d != DISP_COUNTED_RETRY) {
		int64_t p = d == DISP_DELAYED ? DELAYED_RETRY_PAUSE_MS : REQUEUE_PAUSE_MS;
		if (now + p > tr->deadline)
			p = tr->deadline - now;
		wait_op(NULL, p);
	}
	return true;
}

/*
 * After a recovery (r->eh_failed set by it): true when the command is resent,
 * counted, while the retries allow (scmd_eh_abort_handler and
 * scsi_eh_flush_done_q ask scsi_cmd_retry_allowed; the overall bound,
 * scsi_cmd_runtime_exceeded, is asked only of an answered command, in
 * scsi_complete); only a block command is.
 */
static bool resend_recovered(bool block, struct task_retry *tr, struct result *r)
{
	if (r->eh_failed || !block || tr->counted >= SD_RETRIES || ini_now_ms() >= tr->deadline)
		return false;
	tr->counted++;
	tr->resends++;
	r->retries++;
	return true;
}

/* A step that sends no command: it ends at once, OK, as the system call
 * does; why says so in the step's line. */
static void no_command(struct result *r, struct fl_step_obs *o, const char *why)
{
	r->run = r->done = r->nocmd = true;
	snprintf(o->why, sizeof(o->why), "%s", why);
}

/*
 * Runs one CDB with the kernel's error handling and, for a block op (block
 * true), the kernel's block-path retries; fills r. A pass-through op's answer
 * is its first one, as SG_IO gives it; a pass-through command that timed out
 * is not resent after the recovery. Everything ends when the overall bound of
 * the command, (SD_RETRIES + 1) x the command timeout since it was first sent
 * (scsi_cmd_runtime_exceeded), or the step's deadline is passed.
 */
static void run_task(struct scsi_task *(*make)(void *), void *arg, int lun, struct iscsi_data *out,
		     int timeout_ms, int64_t deadline, bool block, struct result *r)
{
	int64_t t0 = ini_now_ms();
	struct task_retry tr = {.bound = t0 + (int64_t)(SD_RETRIES + 1) * timeout_ms,
				.deadline = deadline};

	r->run = true;
	for (;;) {
		struct scsi_task *t = make(arg);
		/* On the heap: libiscsi may call back late for a timed-out task. */
		struct op *opp = calloc(1, sizeof(*opp));
		if (!t || !opp || iscsi_scsi_command_async(ctx, lun, t, op_cb, out, opp)) {
			free(opp);
			if (t)
				scsi_free_scsi_task(t);
			r->done = false;
			break;
		}
		note_sent(t, lun);
		int w = wait_timer(opp, timeout_ms, deadline);
		bool answered = w == 1;
		if (w < 0) {
			/*
			 * The connection failed under the command: no error
			 * handling, a session recovery; the command is resent
			 * when it succeeds within the replacement timeout
			 * (DID_TRANSPORT_DISRUPTED, counted), else it fails
			 * (DID_TRANSPORT_FAILFAST).
			 */
			keep_stale(opp, t);
			strncat(r->eh, "conn_error ", sizeof(r->eh) - strlen(r->eh) - 1);
			r->done = false;
			r->conn_failed = true;
			r->eh_failed = !recover_session(deadline);
			if (!resend_recovered(block, &tr, r))
				break;
			continue;
		}
		if (answered && opp->status != SCSI_STATUS_CANCELLED &&
		    opp->status != SCSI_STATUS_ERROR) {
			take_answer(t, opp, r);
			if (!block || !resend_answered(lun, &tr, r))
				break;
			continue;
		}
		if (!answered && ini_now_ms() >= deadline) {
			/* The step's deadline, not the command timeout: no error handling. */
			r->past_deadline = true;
			keep_stale(opp, t);
			break;
		}
		r->conn_failed = false;
		bool recovered = eh_ladder(lun, t, tr.aborted, deadline, r);
		tr.aborted = true;
		/* libiscsi may still hold the task: free it after the context. */
		keep_stale(opp, t);
		r->done = false;
		r->eh_failed = !recovered;
		/* Recovered: resent while the retries and the overall bound allow
		 * (scsi_eh_flush_done_q). */
		if (!resend_recovered(block, &tr, r))
			break;
	}
	if (r->retries)
		snprintf(r->eh + strlen(r->eh), sizeof(r->eh) - strlen(r->eh), "%u resend%s ",
			 r->retries, r->retries == 1 ? "" : "s");
	r->ms = ini_now_ms() - t0;
}

/*
 * Sends one command of the device handler through ctx and waits up to ms for
 * its answer (no error handling: the handler's own commands are failed by
 * their timeout); copies its data-in into buf. False when no answer came.
 * With a deadline (>= 0) ms is the command's timer, run as the kernel's over
 * iSCSI (wait_timer: one more ms after a NOP-Out with the pings on; a
 * connection the pings find failed fails the command at once).
 */
static bool mp_send(const struct fl_mp_cmd *c, int lun, int ms, int64_t deadline,
		    struct fl_mp_answer *a, uint8_t *buf, size_t cap)
{
	struct scsi_task *t = calloc(1, sizeof(*t));
	struct op *op = calloc(1, sizeof(*op));
	struct iscsi_data out = {.size = c->data_len, .data = (unsigned char *)c->data};

	memset(a, 0, sizeof(*a));
	if (!t || !op) {
		free(t);
		free(op);
		return false;
	}
	memcpy(t->cdb, c->cdb, c->cdb_len);
	t->cdb_size = (int)c->cdb_len;
	t->xfer_dir = c->alloc ? SCSI_XFER_READ : c->data_len ? SCSI_XFER_WRITE : SCSI_XFER_NONE;
	t->expxferlen = (int)(c->alloc ? c->alloc : c->data_len);
	if (iscsi_scsi_command_async(ctx, lun, t, op_cb, c->data_len ? &out : NULL, op)) {
		scsi_free_scsi_task(t);
		free(op);
		return false;
	}
	bool answered = deadline < 0 ? wait_op(op, ms) : wait_timer(op, ms, deadline) == 1;
	if (!answered || op->status == SCSI_STATUS_CANCELLED || op->status == SCSI_STATUS_ERROR) {
		keep_stale(op, t);
		return false;
	}
	a->status = t->status;
	if (t->status == SCSI_STATUS_CHECK_CONDITION) {
		a->key = (uint8_t)t->sense.key;
		a->asc = (uint8_t)(t->sense.ascq >> 8);
		a->ascq = (uint8_t)(t->sense.ascq & 0xff);
	}
	a->len = t->datain.size > 0 ? (size_t)t->datain.size : 0;
	if (a->len > cap)
		a->len = cap;
	if (a->len)
		memcpy(buf, t->datain.data, a->len);
	a->data = buf;
	scsi_free_scsi_task(t);
	free(op);
	return true;
}

/* Reads the LUN's standard INQUIRY once: which handler the kernel attaches. */
static void mp_find_handler(int lun)
{
	struct fl_mp_cmd c = {.cdb = {0x12, 0, 0, 0, 96, 0}, .cdb_len = 6, .alloc = 96};
	struct fl_mp_answer a;
	uint8_t inq[96];

	if (mp.handler_known)
		return;
	mp.handler_known = true;
	if (mp_send(&c, lun, 5000, -1, &a, inq, sizeof(inq)) && a.status == 0) {
		mp.handler = fl_mp_handler_of(inq, a.len);
		mp.explicit_alua = a.len > 5 && (inq[5] & 0x20);
	}
}

/* Most tries of a handler's activate command answered busy, NOT READY or UNIT ATTENTION. */
#define MP_ACTIVATE_TRIES 5
/* dm-multipath's pause before a pg_init again after a busy one (DM_PG_INIT_DELAY_MSECS). */
#define MP_PG_INIT_DELAY_MS 2000
/*
 * The timeout of a device handler's own commands (scsi_dh_alua.c
 * ALUA_FAILOVER_TIMEOUT, scsi_dh_emc.c CLARIION_TIMEOUT, scsi_dh_rdac.c
 * RDAC_TIMEOUT, scsi_dh_hp_sw.c HP_SW_TIMEOUT: 60 s each), not the device's.
 */
#define MP_HANDLER_TIMEOUT_MS 60000

/*
 * pg_init of the path group of path i, through it (ctx): the handler's query
 * and, when it says so, its activate command, resent while the answer says
 * so (fl_mp_activate_result), at most MP_ACTIVATE_TRIES times, each with
 * the handler's timeout (MP_HANDLER_TIMEOUT_MS), within deadline. False
 * when a command got no answer or the activation was refused: the path
 * fails (SCSI_DH_IO, SCSI_DH_NOSYS).
 */
static bool mp_pg_init(int i, int lun, int64_t deadline, struct result *r)
{
	const int ms = MP_HANDLER_TIMEOUT_MS;
	static uint8_t buf[4096];
	struct fl_mp_cmd c;
	struct fl_mp_answer a;
	uint16_t tpg = mp.map.path[i].group;

	if (!fl_mp_query(mp.handler, &c))
		return true;
	if (!mp_send(&c, lun, ms, deadline, &a, buf, sizeof(buf)))
		return false;
	if (!fl_mp_needs_activate(mp.handler, &a, tpg, mp.explicit_alua))
		return true;
	fl_mp_activate(mp.handler, (unsigned)lun, tpg, &c);
	for (int k = 0; k < MP_ACTIVATE_TRIES; k++) {
		snprintf(r->eh + strlen(r->eh), sizeof(r->eh) - strlen(r->eh), "activate(%s) ",
			 fl_mp_handler_name(mp.handler));
		if (!mp_send(&c, lun, ms, deadline, &a, buf, sizeof(buf)))
			return false;
		switch (fl_mp_activate_result(mp.handler, &a)) {
		case FL_MP_ACT_DONE:
			return true;
		case FL_MP_ACT_RETRY:
			wait_op(NULL, DELAYED_RETRY_PAUSE_MS);
			break;
		case FL_MP_ACT_BUSY:
			wait_op(NULL, MP_PG_INIT_DELAY_MS);
			break;
		default:
			return false;
		}
	}
	return false;
}

/*
 * multipathd's path checker, over the paths whose check is due (every
 * failed path when force): every polling interval each path gets the
 * checker's command (fl_mp_checker), so an array that reacts to it sees it.
 * A failed path that answers within a second, or takes a new login, is
 * reinstated; a path in use that does not answer is left to its I/O to
 * fail (the checker's own timeout, the disk's, is not modelled).
 */
static void mp_check_paths(const struct fl_runner_opts *o, int lun, bool force)
{
	static uint8_t buf[256];
	struct fl_mp_cmd c;
	struct fl_mp_answer a;
	char why[160];

	fl_mp_checker(mp.handler, &c);
	for (size_t i = 0; i < mp.map.n; i++) {
		int64_t now = ini_now_ms();
		bool failed = mp.map.path[i].failed;

		if (now - mp.checked[i] < mp.poll_ms && !(force && failed))
			continue;
		mp.checked[i] = now;
		if (!use_session(o, mp.map.path[i].port, why, sizeof(why)))
			continue;
		if (failed && mp.dead[i] ? renew_session(ini_now_ms() + 1000)
					 : mp_send(&c, lun, 1000, -1, &a, buf, sizeof(buf)) ||
					       (failed && renew_session(ini_now_ms() + 1000))) {
			if (failed) {
				fl_mp_reinstate(&mp.map, (int)i);
				mp.dead[i] = false;
			}
		}
	}
}

/*
 * True when port's session failed a ping (a port without a session of its
 * own after mp_setup shares the URL's: its portal is the URL's).
 */
static bool port_down(int port)
{
	return sessions[1 + port] ? sess_down[1 + port] : sess_down[0];
}

/* Fails path i (dead: it gave no answer), as dm-multipath's fail_path. */
static void mp_fail(int i, bool dead, const struct fl_runner_opts *o, struct result *r)
{
	snprintf(r->eh + strlen(r->eh), sizeof(r->eh) - strlen(r->eh), "fail_path(%s) ",
		 o->ports[mp.map.path[i].port].name);
	fl_mp_fail(&mp.map, i);
	mp.dead[i] = dead;
	mp.checked[i] = ini_now_ms();
}

/*
 * A block command through the multipath model: sent on the path dm-multipath
 * would choose (after pg_init when its group changed), with the kernel's
 * retries and error handling on that path; a path error fails the path and
 * the command goes to the next one. With every path failed, it is queued:
 * the checker runs every polling interval and the command fails (EIO) after
 * no_path_retry intervals, at once with "fail", never with "queue" (the
 * step's deadline ends it).
 */
static void mp_run_task(struct scsi_task *(*make)(void *), void *arg, int lun,
			struct iscsi_data *out, int timeout_ms, int64_t deadline,
			const struct fl_runner_opts *o, struct result *r)
{
	int64_t t0 = ini_now_ms(), down_since = -1;
	char why[160];

	mp_find_handler(lun);
	for (int tries = 0; tries < MAX_RESENDS; tries++) {
		int64_t now = ini_now_ms();
		int i;

		mp_check_paths(o, lun, false);
		i = fl_mp_select(&mp.map);
		if (i < 0) {
			if (down_since < 0)
				down_since = now;
			if (mp.no_path_retry >= 0 &&
			    now - down_since >= (int64_t)mp.no_path_retry * mp.poll_ms) {
				strncat(r->eh, "no_path ", sizeof(r->eh) - strlen(r->eh) - 1);
				r->run = true;
				r->done = false;
				r->eh_failed = true;
				break;
			}
			if (now >= deadline) {
				r->run = true;
				r->past_deadline = true;
				break;
			}
			wait_op(NULL, deadline - now < mp.poll_ms ? deadline - now : mp.poll_ms);
			mp_check_paths(o, lun, true);
			continue;
		}
		down_since = -1;
		if (port_down(mp.map.path[i].port) ||
		    !use_session(o, mp.map.path[i].port, why, sizeof(why)) ||
		    (mp.map.pg_init && !mp_pg_init(i, lun, deadline, r))) {
			mp_fail(i, true, o, r);
			continue;
		}
		struct result one = {0};
		run_task(make, arg, lun, out, timeout_ms, deadline, true, &one);
		snprintf(r->eh + strlen(r->eh), sizeof(r->eh) - strlen(r->eh), "%s", one.eh);
		r->run = true;
		r->done = one.done;
		r->past_deadline = one.past_deadline;
		r->eh_failed = one.eh_failed;
		r->status = one.status;
		r->key = one.key;
		r->asc = one.asc;
		r->ascq = one.ascq;
		r->retries += one.retries;
		if (one.past_deadline || !fl_mp_path_error(errno_of(&one)))
			break;
		mp_fail(i, !one.done, o, r);
		r->retries++;
	}
	r->ms = ini_now_ms() - t0;
}

/* The block ops, which the kernel's block layer (and dm-multipath) carries. */
static bool is_block_op(enum fl_step_op op)
{
	return op == FL_OP_READ || op == FL_OP_WRITE || op == FL_OP_SYNC || op == FL_OP_FSYNC ||
	       op == FL_OP_DISCARD;
}

/* A block op's command: through the multipath model when it is on, else through ctx. */
static void block_task(struct scsi_task *(*make)(void *), void *arg, int lun,
		       struct iscsi_data *out, int timeout_ms, int64_t deadline,
		       const struct fl_runner_opts *o, struct result *r)
{
	if (mp.on)
		mp_run_task(make, arg, lun, out, timeout_ms, deadline, o, r);
	else
		run_task(make, arg, lun, out, timeout_ms, deadline, true, r);
}

/* Task makers for the workload operations. */
struct rw_arg {
	uint64_t lba;
	uint32_t blocks;
	bool write, fua;
};
static struct scsi_task *make_rw(void *p)
{
	struct rw_arg *a = p;
	return a->write ? scsi_cdb_write16(a->lba, a->blocks * block_size, block_size, 0, 0, a->fua,
					   0, 0)
			: scsi_cdb_read16(a->lba, a->blocks * block_size, block_size, 0, 0, a->fua,
					  0, 0);
}
static struct scsi_task *make_tur(void *p)
{
	(void)p;
	return scsi_cdb_testunitready();
}
static struct scsi_task *make_inquiry(void *p)
{
	(void)p;
	return scsi_cdb_inquiry(0, 0, FL_INQUIRY_ALLOC);
}
static struct scsi_task *make_sync(void *p)
{
	(void)p;
	return scsi_cdb_synchronizecache10(0, 0, 0, 0);
}
static struct scsi_task *make_discard(void *p)
{
	struct rw_arg *a = p;
	return scsi_cdb_writesame16(0, 0, 1, a->lba, 0, a->blocks, block_size);
}
/* SBC-3 5.42 WRITE SAME(16) of the range, one block of data, UNMAP bit as the step says. */
struct same_arg {
	uint64_t lba;
	uint32_t blocks;
	bool unmap;
};
static struct scsi_task *make_write_same(void *p)
{
	struct same_arg *a = p;
	return scsi_cdb_writesame16(0, 0, a->unmap, a->lba, 0, a->blocks, block_size);
}
/* SBC-3 5.28 UNMAP with a parameter list of one block descriptor (24 bytes). */
#define UNMAP_LIST_LEN 24
static struct scsi_task *make_unmap(void *p)
{
	(void)p;
	return scsi_cdb_unmap(0, 0, UNMAP_LIST_LEN);
}
struct raw_arg {
	uint8_t cdb[16];
	int len;
	uint32_t in, out; /* bytes of data-in ("size") or data-out ("data") */
};
static struct scsi_task *make_raw(void *p)
{
	struct raw_arg *a = p;
	struct scsi_task *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	memcpy(t->cdb, a->cdb, (size_t)a->len);
	t->cdb_size = a->len;
	t->xfer_dir = a->in ? SCSI_XFER_READ : a->out ? SCSI_XFER_WRITE : SCSI_XFER_NONE;
	t->expxferlen = (int)(a->in ? a->in : a->out);
	return t;
}

/*
 * sg_raw step: the step's CDB with data_in bytes of data-in, or data_out
 * bytes of data-out filled with the step's pattern, as the VM lab's agent
 * sends it with SG_IO.
 */
static void run_sg_raw(const struct fl_step *s, int lun, int tmo, int64_t deadline,
		       struct result *r)
{
	struct raw_arg a = {.len = s->cdb_len, .in = s->data_in, .out = s->data_out};
	unsigned char *buf = malloc(a.out ? a.out : 1);
	struct iscsi_data d = {.size = a.out, .data = buf};

	memcpy(a.cdb, s->cdb, s->cdb_len);
	memset(buf, s->pattern, a.out);
	run_task(make_raw, &a, lun, a.out ? &d : NULL, tmo, deadline, false, r);
	free(buf);
}

/*
 * unmap step: UNMAP of lba..lba+blocks-1, one block descriptor (SBC-3 5.28.2:
 * UNMAP DATA LENGTH, BLOCK DESCRIPTOR DATA LENGTH, then LBA and NUMBER OF
 * LOGICAL BLOCKS), as sg_unmap sends it with SG_IO.
 */
static void run_unmap(const struct fl_step *s, int lun, int tmo, int64_t deadline, struct result *r)
{
	unsigned char list[UNMAP_LIST_LEN] = {0};
	struct iscsi_data d = {.size = sizeof(list), .data = list};
	uint32_t n = (uint32_t)s->blocks;

	list[1] = UNMAP_LIST_LEN - 2;
	list[3] = 16;
	for (int i = 0; i < 8; i++)
		list[8 + i] = (unsigned char)(s->lba >> (56 - 8 * i));
	for (int i = 0; i < 4; i++)
		list[16 + i] = (unsigned char)(n >> (24 - 8 * i));
	run_task(make_unmap, NULL, lun, &d, tmo, deadline, false, r);
}

/* write_same step: WRITE SAME(16) with one block of the step's pattern, as sg_write_same. */
static void run_write_same(const struct fl_step *s, int lun, int tmo, int64_t deadline,
			   struct result *r)
{
	struct same_arg a = {.lba = s->lba, .blocks = (uint32_t)s->blocks, .unmap = s->unmap};
	unsigned char *buf = malloc(block_size);
	struct iscsi_data d = {.size = block_size, .data = buf};

	if (!buf)
		return;
	memset(buf, s->pattern, block_size);
	run_task(make_write_same, &a, lun, &d, tmo, deadline, false, r);
	free(buf);
}

/*
 * TMF steps (SAM-5 7, RFC 7143 11.5): ABORT TASK of the last command sent
 * (over that command's session), LOGICAL UNIT RESET, TARGET WARM RESET; the
 * answer is waited for until the step's deadline. False (with why) when there
 * is nothing to abort.
 */
static bool run_tmf_step(const struct fl_step *s, int lun, int64_t deadline, struct result *r,
			 char *why, size_t whylen)
{
	enum iscsi_task_mgmt_funcs fn = s->op == FL_OP_ABORT_TASK  ? ISCSI_TM_ABORT_TASK
					: s->op == FL_OP_LUN_RESET ? ISCSI_TM_LUN_RESET
								   : ISCSI_TM_TARGET_WARM_RESET;
	struct scsi_task ref = {0};
	int64_t t0 = ini_now_ms(), left;

	if (fn == ISCSI_TM_ABORT_TASK) {
		bool open = false;

		for (size_t k = 0; k < MAX_SESSIONS; k++)
			open |= last_cmd.session && sessions[k] == last_cmd.session;
		if (!last_cmd.sent || !open) {
			snprintf(why, whylen, "abort_task: %s",
				 last_cmd.sent ? "the session of the command to abort is gone"
					       : "no command was sent before it");
			return false;
		}
		ctx = last_cmd.session;
		lun = last_cmd.lun;
		ref.itt = last_cmd.itt;
		ref.cmdsn = last_cmd.cmdsn;
	}
	r->run = r->tmf = true;
	left = deadline - t0;
	r->tmf_resp = tmf(fn, lun, fn == ISCSI_TM_ABORT_TASK ? &ref : NULL,
			  left > INT32_MAX ? INT32_MAX : (int)(left > 0 ? left : 0));
	r->ms = ini_now_ms() - t0;
	r->done = r->tmf_resp >= 0;
	r->past_deadline = !r->done && ini_now_ms() >= deadline;
	return true;
}

/*
 * ctl step: `faultlun ctl SOCKET ARGS...` on the target's control socket, as
 * the VM lab's agent runs it (docs/control-protocol.md); exit status 0 is
 * success (errno OK), anything else EIO. The session is serviced while it
 * runs; it is killed at the step's deadline. False (with why) when it cannot
 * be started: the step then did not run, and its expectations fail.
 */
static bool run_ctl(const struct fl_step *s, int64_t deadline, struct result *r, char *why,
		    size_t whylen)
{
	char *argv[FL_CTL_ARGS_MAX + 4];
	int n = 0, fds[2];

	if (!ctl_socket) {
		snprintf(why, whylen, "no control socket (faultlun check --url URL --ctl SOCKET)");
		return false;
	}
	argv[n++] = (char *)faultlun_bin;
	argv[n++] = (char *)"ctl";
	argv[n++] = (char *)ctl_socket;
	for (size_t i = 0; i < s->nargs; i++)
		argv[n++] = s->args[i];
	argv[n] = NULL;
	for (int i = 0, len = 0; i < n && len < (int)sizeof(r->cmdline); i++)
		len += snprintf(r->cmdline + len, sizeof(r->cmdline) - (size_t)len, "%s%s",
				i ? " " : "", argv[i]);
	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return false;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	pid_t pid;
	int err = posix_spawnp(&pid, faultlun_bin, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (err) {
		snprintf(why, whylen, "cannot run %s ctl %s: %s", faultlun_bin, ctl_socket,
			 strerror(err));
		close(fds[0]);
		return false;
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	int64_t t0 = ini_now_ms();
	size_t len = 0;
	int st = 0;
	r->run = r->ctl = true;
	r->exit_code = -1;
	for (;;) {
		ssize_t got = read(fds[0], r->answer + len, sizeof(r->answer) - 1 - len);
		if (got > 0)
			len += (size_t)got;
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (ini_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			st = -1;
			break;
		}
		wait_op(NULL, 20); /* the sessions live on meanwhile */
	}
	for (ssize_t got; len < sizeof(r->answer) - 1 &&
			  (got = read(fds[0], r->answer + len, sizeof(r->answer) - 1 - len)) > 0;)
		len += (size_t)got;
	close(fds[0]);
	r->answer[len] = 0;
	r->answer[strcspn(r->answer, "\n")] = 0;
	r->ms = ini_now_ms() - t0;
	r->done = st != -1;
	r->past_deadline = !r->done;
	if (r->done && WIFEXITED(st))
		r->exit_code = WEXITSTATUS(st);
	return true;
}

/*
 * The errno Linux gives a block read or write for the final answer of a
 * command (scsi_check_sense's host bytes, scsi_io_completion_action,
 * scsi_result_to_blk_status, then blk_status_to_errno; Linux 6.1): the
 * libiscsi runner's errno of read, write, discard, sync and fsync steps.
 */
static const char *errno_of(const struct result *r)
{
	if (r->integrity[0])
		return "EBADMSG"; /* a stamped read: the data is not what was acknowledged */
	if (!r->done)
		/* DID_TIME_OUT after the error handling, or an offlined device: BLK_STS_IOERR */
		return "EIO";
	switch (r->status) {
	case 0x00: /* GOOD */
	case 0x04: /* CONDITION MET */
		return "OK";
	case 0x18: /* RESERVATION CONFLICT: DID_NEXUS_FAILURE */
		return "EBADE";
	case 0x02:
		break;
	default: /* BUSY, TASK SET FULL, ... past the command's bound: BLK_STS_IOERR */
		return "EIO";
	}
	switch (r->key) {
	case SCSI_SENSE_RECOVERED_ERROR:
		return "OK";
	case SCSI_SENSE_HARDWARE_ERROR:
		return "EREMOTEIO"; /* DID_TARGET_FAILURE */
	case SCSI_SENSE_ILLEGAL_REQUEST:
		if (r->asc == 0x20 || r->asc == 0x21 || r->asc == 0x22 || r->asc == 0x24 ||
		    r->asc == 0x26 || r->asc == 0x27)
			return "EREMOTEIO"; /* DID_TARGET_FAILURE */
		return "EIO";
	case SCSI_SENSE_DATA_PROTECTION:
		if (r->asc == 0x27 && r->ascq == 0x07)
			return "ENOSPC"; /* DID_ALLOC_FAILURE: thin pool exhausted */
		return "EREMOTEIO";
	case 0x0a: /* COPY ABORTED */
	case 0x0d: /* VOLUME OVERFLOW */
	case SCSI_SENSE_MISCOMPARE:
	case SCSI_SENSE_BLANK_CHECK:
		return "EREMOTEIO";
	case SCSI_SENSE_MEDIUM_ERROR:
		if (r->asc == 0x11 || r->asc == 0x13 || r->asc == 0x14)
			return "ENODATA"; /* DID_MEDIUM_ERROR */
		return "EIO";
	case 0x0b: /* ABORTED COMMAND */
		if (r->asc == 0x10)
			return "EILSEQ"; /* BLK_STS_PROTECTION */
		return "EIO";
	default:
		return "EIO";
	}
}

/* Turns what one step produced into the checker's observation. */
static void observe(const struct fl_step *s, const struct result *r, struct fl_step_obs *o)
{
	o->elapsed_ms = (double)r->ms;
	o->repeats_done = r->repeats;
	o->retries = r->retries;
	if (r->past_deadline) {
		o->end = FL_END_TIMEOUT;
		return;
	}
	o->end = FL_END_DONE;
	if (r->ctl) {
		snprintf(o->errno_name, sizeof(o->errno_name), "%s",
			 r->exit_code == 0 ? "OK" : "EIO");
		return;
	}
	if (s->op == FL_OP_SLEEP || r->nocmd) {
		snprintf(o->errno_name, sizeof(o->errno_name), "OK");
		return;
	}
	if (r->tmf) {
		/* as sg_reset's ioctl: 0 for a function complete, EIO for any other answer */
		o->has_tmf_response = r->done;
		o->tmf_response = (uint8_t)(r->done ? r->tmf_resp : 0);
		snprintf(o->errno_name, sizeof(o->errno_name), "%s",
			 !r->done || r->tmf_resp != 0 ? "EIO" : "OK");
		return;
	}
	if (r->done) {
		o->has_status = true;
		o->status = (uint8_t)r->status;
		o->has_sense = r->status == SCSI_STATUS_CHECK_CONDITION;
		o->key = r->key;
		o->asc = r->asc;
		o->ascq = r->ascq;
	}
	/* A pass-through command's errno: OK when a status came back, else what
	 * the host byte the kernel gives it says (the VM lab's agent): timed
	 * out (DID_TIME_OUT) or the connection failed under it
	 * (DID_TRANSPORT_DISRUPTED). */
	if (fl_step_op_is_passthrough(s->op))
		snprintf(o->errno_name, sizeof(o->errno_name), "%s",
			 r->done	  ? "OK"
			 : r->conn_failed ? "EIO"
					  : "ETIMEDOUT");
	else if (s->op == FL_OP_READ && !s->direct && strcmp(errno_of(r), "OK"))
		/* a buffered read: the page cache turns any failed read into EIO
		 * (filemap_read_folio) */
		snprintf(o->errno_name, sizeof(o->errno_name), "EIO");
	else
		snprintf(o->errno_name, sizeof(o->errno_name), "%s", errno_of(r));
	if (r->integrity[0])
		snprintf(o->why, sizeof(o->why), "%s", r->integrity);
}

/* True when one run of a step failed (a repeated step stops there). */
static bool run_failed(const struct fl_step *s, const struct result *r)
{
	if (r->past_deadline || !r->done)
		return true;
	if (r->ctl)
		return r->exit_code != 0;
	if (r->tmf)
		return r->tmf_resp != 0;
	if (fl_step_op_is_passthrough(s->op))
		return false;
	return strcmp(errno_of(r), "OK") != 0;
}

/*
 * True when step s is one the runner does not run (a file system or kernel
 * operation, or a background step); says why in o.
 */
static bool step_unsupported(const struct fl_step *s, struct fl_step_obs *o)
{
	switch (s->op) {
	case FL_OP_MKFS:
	case FL_OP_MOUNT:
	case FL_OP_UMOUNT:
	case FL_OP_WRITE_FILE:
	case FL_OP_READ_FILE:
	case FL_OP_RESCAN:
	case FL_OP_SHELL:
		o->end = FL_END_UNSUPPORTED;
		snprintf(o->why, sizeof(o->why), "a file system or kernel operation");
		return true;
	default:
		break;
	}
	if (s->background) {
		o->end = FL_END_UNSUPPORTED;
		snprintf(o->why, sizeof(o->why), "it runs steps one at a time");
		return true;
	}
	return false;
}

/* What the stamped writes of this run left where (fl_stamp.h). */
static struct fl_stamp_book book;

/*
 * Runs a block write of rw's range into one: every byte s's pattern, or with
 * stamp self-describing blocks, recorded in the book as acknowledged or not.
 */
static void run_write(const struct fl_step *s, struct rw_arg *rw, int lun, int cmd_tmo_ms,
		      int64_t deadline, const struct fl_runner_opts *ro, struct result *one)
{
	size_t len = (size_t)rw->blocks * block_size;
	unsigned char *buf = malloc(len ? len : 1);
	bool stamp = s->stamp && block_size >= FL_STAMP_MIN_BLOCK;
	uint64_t gen = 0;

	if (!buf) {
		one->run = true;
		return;
	}
	if (stamp)
		gen = fl_stamp_fill(&book, buf, block_size, lun, rw->lba, rw->blocks);
	else
		memset(buf, s->pattern, len);
	struct iscsi_data d = {.size = len, .data = buf};
	rw->write = true;
	block_task(make_rw, rw, lun, &d, cmd_tmo_ms, deadline, ro, one);
	if (stamp)
		fl_stamp_written(&book, lun, rw->lba, rw->blocks, gen,
				 !one->past_deadline && !strcmp(errno_of(one), "OK"));
	free(buf);
}

/*
 * Runs a block read of rw's range into one; with stamp, the data read is
 * checked against the book (one->integrity names the first wrong block).
 */
static void run_read(const struct fl_step *s, struct rw_arg *rw, int lun, int cmd_tmo_ms,
		     int64_t deadline, const struct fl_runner_opts *ro, struct result *one)
{
	size_t len = (size_t)rw->blocks * block_size;
	bool stamp = s->stamp && block_size >= FL_STAMP_MIN_BLOCK;

	rw->write = false;
	one->in = stamp ? malloc(len ? len : 1) : NULL;
	one->in_cap = one->in ? len : 0;
	block_task(make_rw, rw, lun, NULL, cmd_tmo_ms, deadline, ro, one);
	if (one->in && !one->past_deadline && !strcmp(errno_of(one), "OK"))
		fl_stamp_check(&book, one->in, block_size, lun, rw->lba, one->in_len / block_size,
			       one->integrity, sizeof(one->integrity));
	free(one->in);
	one->in = NULL;
}

/* Runs a block discard of rw's range into one (its parameter list zeroed). */
static void run_discard(struct rw_arg *rw, int lun, int cmd_tmo_ms, int64_t deadline,
			const struct fl_runner_opts *ro, struct result *one)
{
	unsigned char *buf = calloc(1, block_size);
	struct iscsi_data d = {.size = block_size, .data = buf};
	block_task(make_discard, rw, lun, &d, cmd_tmo_ms, deadline, ro, one);
	free(buf);
}

/*
 * Runs one repeat of step s into one; false (o->end FL_END_NOT_RUN, the
 * reason in o->why) when a TMF or ctl step could not be run at all.
 */
static bool run_repeat(const struct fl_step *s, const struct fl_runner_opts *ro, int lun,
		       int cmd_tmo_ms, int64_t deadline, struct rw_arg *rw, struct result *one,
		       struct fl_step_obs *o)
{
	/* A pass-through command's timer is SG_IO's timeout, not the device's. */
	int sgio_tmo_ms = (int)fl_step_sgio_timeout_s(s) * 1000;

	switch (s->op) {
	case FL_OP_READ:
		run_read(s, rw, lun, cmd_tmo_ms, deadline, ro, one);
		break;
	case FL_OP_WRITE:
		run_write(s, rw, lun, cmd_tmo_ms, deadline, ro, one);
		break;
	case FL_OP_TUR:
		run_task(make_tur, NULL, lun, NULL, sgio_tmo_ms, deadline, false, one);
		break;
	case FL_OP_INQUIRY:
		run_task(make_inquiry, NULL, lun, NULL, sgio_tmo_ms, deadline, false, one);
		break;
	case FL_OP_SYNC:
		/* sync(2) writes back no SYNCHRONIZE CACHE for a disk without a
		 * file system, and returns nothing. */
		no_command(one, o, "no command: sync(2) flushes no disk without a file system");
		break;
	case FL_OP_FSYNC:
		/* An empty flush on a queue without a volatile write cache ends
		 * at once (submit_bio_noacct); sd gives a flush twice the
		 * command timeout (SD_FLUSH_TIMEOUT_MULTIPLIER). */
		if (!lun_wce_on(lun))
			no_command(one, o, "no command: the LUN's write cache is off");
		else
			block_task(make_sync, NULL, lun, NULL,
				   cmd_tmo_ms * SD_FLUSH_TIMEOUT_MULTIPLIER, deadline, ro, one);
		break;
	case FL_OP_DISCARD:
		run_discard(rw, lun, cmd_tmo_ms, deadline, ro, one);
		break;
	case FL_OP_SG_RAW:
		run_sg_raw(s, lun, sgio_tmo_ms, deadline, one);
		break;
	case FL_OP_UNMAP:
		run_unmap(s, lun, sgio_tmo_ms, deadline, one);
		break;
	case FL_OP_WRITE_SAME:
		run_write_same(s, lun, sgio_tmo_ms, deadline, one);
		break;
	case FL_OP_ABORT_TASK:
	case FL_OP_LUN_RESET:
	case FL_OP_TARGET_RESET:
		if (!run_tmf_step(s, lun, deadline, one, o->why, sizeof(o->why))) {
			o->end = FL_END_NOT_RUN;
			return false;
		}
		break;
	case FL_OP_CTL:
		if (!run_ctl(s, deadline, one, o->why, sizeof(o->why))) {
			o->end = FL_END_NOT_RUN;
			return false;
		}
		break;
	default:
		break;
	}
	return true;
}

/*
 * Runs one workload step (every repeat until one fails, within the step's
 * deadline) through the session of its port; fills o. cmd_tmo_ms is the
 * command timeout before the runner's error handling (knobs.timeout_s).
 */
static void run_step(const struct fl_step *s, const struct fl_runner_opts *ro, int cmd_tmo_ms,
		     struct fl_step_obs *o, struct result *r)
{
	int lun = s->lun >= 0 ? s->lun : url_lun;
	int64_t t0 = ini_now_ms(), deadline = t0 + (int64_t)s->timeout_s * 1000;
	struct rw_arg rw = {.lba = s->lba, .blocks = (uint32_t)s->blocks};

	if (step_unsupported(s, o))
		return;
	if (s->op != FL_OP_SLEEP && s->op != FL_OP_CTL && !(mp.on && is_block_op(s->op)) &&
	    !use_session(ro, s->port, o->why, sizeof(o->why))) {
		o->end = FL_END_NOT_RUN;
		return;
	}
	if (s->op == FL_OP_SLEEP) {
		wait_op(NULL, s->ms);
		r->ms = ini_now_ms() - t0;
		r->run = r->done = true;
		r->repeats = 1;
		observe(s, r, o);
		return;
	}
	for (uint32_t i = 0; i < s->repeat; i++) {
		struct result one = {0};
		if (!run_repeat(s, ro, lun, cmd_tmo_ms, deadline, &rw, &one, o))
			return;
		one.repeats = i + 1;
		*r = one;
		if (run_failed(s, &one))
			break;
	}
	r->ms = ini_now_ms() - t0; /* every repeat */
	observe(s, r, o);
}

/* Reads the target's trace (JSON lines) into lines; returns how many. */
size_t fl_runner_read_trace(const char *path, char ***lines)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0, room = 0;
	ssize_t len;

	*lines = NULL;
	if (!f)
		return 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (n == room) {
			char **nl = realloc(*lines, (room = room ? room * 2 : 256) * sizeof(*nl));
			if (!nl)
				break;
			*lines = nl;
		}
		line[strcspn(line, "\n")] = 0;
		if (((*lines)[n] = strdup(line)))
			n++;
	}
	free(line);
	fclose(f);
	return n;
}

/* Prints one step's outcome. */
static void log_step(FILE *log, size_t i, const struct fl_step *s, const struct fl_step_obs *o,
		     const struct result *r, const struct fl_runner_opts *ro)
{
	char t[160], op[96];

	if (!log)
		return;
	if (s->port >= 0 && (size_t)s->port < ro->nports)
		snprintf(op, sizeof(op), "%s, port %s", fl_step_op_name(s->op),
			 ro->ports[s->port].name);
	else
		snprintf(op, sizeof(op), "%s", fl_step_op_name(s->op));
	if (o->end == FL_END_UNSUPPORTED || o->end == FL_END_NOT_RUN) {
		fprintf(log, "step %zu (%s): %s: %s\n", i, op,
			o->end == FL_END_NOT_RUN ? "NOT RUN" : "not run by the libiscsi runner",
			o->why);
		return;
	}
	if (o->has_sense)
		fl_sense_text(o->key, o->asc, o->ascq, t, sizeof(t));
	fprintf(log, "step %zu (%s): %s", i, op,
		o->end == FL_END_TIMEOUT ? "TIMEOUT" : o->errno_name);
	if (r->ctl)
		fprintf(log, ", exit %d: %s%s%s%s", r->exit_code, r->answer,
			r->exit_code ? " (ran: " : "", r->exit_code ? r->cmdline : "",
			r->exit_code ? ")" : "");
	else if (o->has_tmf_response)
		fprintf(log, ", response %s (%u)", fl_tmf_response_name(o->tmf_response) ?: "?",
			o->tmf_response);
	else if (o->has_status)
		fprintf(log, ", status %s%s%s", fl_status_name(o->status) ?: "?",
			o->has_sense ? ", sense " : "", o->has_sense ? t : "");
	fprintf(log, " in %.0f ms", o->elapsed_ms);
	if (o->why[0])
		fprintf(log, " (%s)", o->why);
	if (s->repeat > 1)
		fprintf(log, ", %u of %u runs", o->repeats_done, s->repeat);
	fprintf(log, "%s%s\n", r->eh[0] ? ", error handling: " : "", r->eh);
	fflush(log); /* a line a step, as it ends (the watchdog may end the process) */
}

/* Runs the check's workload against o->url; see runner.h. */
/* The connection model's knobs (conn), before mp_setup. */
static void conn_setup(const struct fl_knobs *k)
{
	conn.noop_interval_ms = (k->noop_interval_s >= 0 ? k->noop_interval_s : 5) * 1000;
	conn.noop_timeout_ms = (k->noop_timeout_s >= 0 ? k->noop_timeout_s : 5) * 1000;
	conn.recovery_ms = (k->recovery_tmo_s >= 0 ? k->recovery_tmo_s : 120) * 1000;
}

/*
 * Turns the multipath model on for a check with the multipath knob over two
 * ports or more, with the knobs the VM lab gives dm-multipath and the iSCSI
 * initiator (their defaults there: polling_interval 5 s, no_path_retry fail,
 * recovery_tmo 5 s, NOP-Out every 5 s answered within 5 s), and logs in
 * through every port, as the lab's initiator does before the workload.
 */
static void mp_setup(const struct fl_check *check, const struct fl_runner_opts *o)
{
	const struct fl_knobs *k = &check->knobs;
	uint16_t groups[FL_MP_MAX_PATHS];
	char why[160];

	memset(&mp, 0, sizeof(mp));
	if (k->multipath != 1 || o->nports < 2)
		return;
	mp.on = true;
	for (size_t i = 0; i < o->nports && i < FL_MP_MAX_PATHS; i++)
		groups[i] = o->ports[i].group;
	fl_mp_init(&mp.map, groups, o->nports);
	mp.poll_ms = (k->polling_interval_s > 0 ? k->polling_interval_s : 5) * 1000;
	mp.no_path_retry = k->no_path_retry >= 0		 ? k->no_path_retry
			   : k->no_path_retry == FL_KNOB_WORD(0) ? -1 /* queue */
								 : 0;
	conn.recovery_ms = (k->recovery_tmo_s >= 0 ? k->recovery_tmo_s : 5) * 1000;
	for (size_t i = 0; i < mp.map.n; i++)
		if (!use_session(o, (int)i, why, sizeof(why))) {
			fl_mp_fail(&mp.map, (int)i);
			mp.dead[i] = true;
		}
	ctx = sessions[0];
}

/*
 * "arm": "workload": the whole scenario loaded into the target once the login
 * and the scan are done (`faultlun ctl SOCKET load FILE`, as the VM lab's
 * agent does); false with a message on stderr when that fails, since the
 * workload would then run without the faults.
 */
#define ARM_WAIT_MS 10000 /* for the control socket to load the scenario */
static bool arm_scenario(const struct fl_runner_opts *o)
{
	char *args[] = {(char *)"load", (char *)o->arm_scenario};
	struct fl_step s = {.op = FL_OP_CTL, .args = args, .nargs = 2};
	struct result r = {0};
	char why[256] = "";

	if (!o->arm_scenario) {
		fprintf(stderr, "faultlun check: \"arm\": \"workload\" needs the scenario file\n");
		return false;
	}
	if (!run_ctl(&s, ini_now_ms() + ARM_WAIT_MS, &r, why, sizeof(why))) {
		fprintf(stderr, "faultlun check: cannot arm the scenario: %s\n", why);
		return false;
	}
	if (!r.done || r.exit_code) {
		fprintf(stderr, "faultlun check: cannot arm the scenario: %s: %s\n", r.cmdline,
			r.done ? r.answer : "no answer in time");
		return false;
	}
	return true;
}

/*
 * How long libiscsi may keep the runner without returning to it: longer
 * than any one call of it takes (a login is bounded by 15 s, a name lookup
 * by the resolver's own timeouts), far shorter than a hang.
 */
#define RUNNER_STUCK_MS 30000

int fl_runner_run(const struct fl_check *check, const struct fl_runner_opts *o,
		  struct fl_step_obs **steps, int *test_lun)
{
	int cmd_tmo_ms = (check->knobs.timeout_s > 0 ? check->knobs.timeout_s : 30) * 1000;
	size_t nsteps = check->nsteps;
	struct fl_step_obs *obs;
	char stuck[192];
	bool armed;

	ctl_socket = o->ctl_socket;
	faultlun_bin = o->faultlun_bin ? o->faultlun_bin : "faultlun";
	block_size = 512;
	nstale = 0;
	memset(lun_tpgs, 0, sizeof(lun_tpgs));
	memset(lun_wce, 0, sizeof(lun_wce));
	reset_wait_ms =
	    check->knobs.reset_wait_ms >= 0 ? check->knobs.reset_wait_ms : FL_RESET_WAIT_MS;
	eh_timeout_ms = (check->knobs.eh_timeout_s > 0 ? check->knobs.eh_timeout_s : 10) * 1000;
	memset(&last_cmd, 0, sizeof(last_cmd));
	fl_stamp_book_free(&book);
	run_url = o->url;
	run_iname = o->initiator ? o->initiator : "iqn.2026-12.org.faultlun:check";
	memset(sessions, 0, sizeof(sessions));
	memset(sess_down, 0, sizeof(sess_down));
	snprintf(
	    stuck, sizeof(stuck),
	    "faultlun check: no progress for %d s: libiscsi does not return to the runner, the "
	    "session is stuck (e.g. a target's MaxRecvDataSegmentLength=0)",
	    RUNNER_STUCK_MS / 1000);
	ini_watchdog(RUNNER_STUCK_MS, stuck, 2, true);
	ctx = sessions[0] = ini_login(o->url, run_iname, &url_lun, 15000);
	if (!ctx) {
		ini_watchdog(0, NULL, 0, false);
		return -1;
	}
	session_url[0] = strdup(o->url);
	*test_lun = url_lun;
	session_scan(url_lun);
	conn_setup(&check->knobs);
	mp_setup(check, o);
	/* The scan reads each disk's cache mode before the workload. */
	for (size_t i = 0; i < nsteps; i++)
		if (check->steps[i].op == FL_OP_FSYNC)
			(void)lun_wce_on(check->steps[i].lun >= 0 ? check->steps[i].lun : url_lun);
	armed = !check->arm_at_workload || arm_scenario(o);
	obs = armed ? calloc(nsteps ? nsteps : 1, sizeof(*obs)) : NULL;
	for (size_t i = 0; obs && i < nsteps; i++) {
		struct result r = {0};
		run_step(&check->steps[i], o, cmd_tmo_ms, &obs[i], &r);
		log_step(o->log, i, &check->steps[i], &obs[i], &r, o);
	}
	for (size_t i = 0; i < MAX_SESSIONS; i++) {
		if (!sessions[i])
			continue;
		ini_logout(sessions[i], 2000); /* a dead path's target never answers */
		iscsi_destroy_context(sessions[i]);
		sessions[i] = NULL;
	}
	ini_watchdog(0, NULL, 0, false);
	for (size_t i = 0; i < MAX_SESSIONS; i++) {
		free(session_url[i]);
		session_url[i] = NULL;
	}
	ctx = NULL;
	for (size_t i = 0; i < nstale; i++) {
		if (stale[i])
			scsi_free_scsi_task(stale[i]);
		free(stale_op[i]);
		stale[i] = NULL;
		stale_op[i] = NULL;
	}
	nstale = 0;
	fl_stamp_book_free(&book);
	if (!obs)
		return armed ? -1 : -2;
	*steps = obs;
	return 0;
}
