/* SPDX-License-Identifier: MIT */
/*
 * iscsi_runner.c - the libiscsi runner of a scenario's "check" section.
 *
 * Usage: iscsi_runner [--ctl SOCKET] [--faultlun PATH] URL SCENARIO.json
 * (under `faultlun serve [--ctl SOCKET] SCENARIO --run`). Runs the check's
 * workload against the target with libiscsi's asynchronous API: read, write,
 * tur, inquiry, sync/fsync, discard, sleep, sg_raw (a CDB in hex with "size"
 * bytes of data-in or "data" bytes of data-out filled with "pattern", as the
 * VM lab's agent sends it) and ctl (`faultlun ctl SOCKET ARGS...` on the
 * target's control socket, docs/control-protocol.md: exit status 0 is GOOD;
 * a check with a ctl step needs --ctl). It checks the expectations that an
 * iSCSI initiator can observe (docs/scenario-format.md "check"): `status`
 * and `sense` of a step (SAM-5 5.3, SPC-4 4.5), `errno` "OK" (the step ended
 * GOOD) and a few errno names mapped from status and sense the way Linux sd
 * does (ENOSPC from DATA PROTECT 27/07, ENODATA from MEDIUM ERROR, EBADE from
 * RESERVATION CONFLICT, ETIMEDOUT from a step that never completed, EIO from
 * any other failure), `within_ms` / `max_stall_ms`, `min_ms`.
 * Kernel-only expectations (eh, kernel_log, device_state, trace counts) and
 * entries scoped to another runner ("runner": "vm") are listed as not
 * applicable. A step that does not complete within its
 * timeout goes through an error handling of its own: ABORT TASK, LUN RESET,
 * LUN RESET again, then a reconnect; after a completed reset the command is
 * retried once, as the SCSI midlayer does; a UNIT ATTENTION answer is resent
 * up to 30 times within the step's timeout. Exit 0 when every applicable
 * expectation holds, 1 otherwise, 77 when none applies.
 */
#include "faults_internal.h"
#include "fl_faults.h"
#include "iscsi_common.h"

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>
#include <jansson.h>

#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static struct iscsi_context *ctx;
static int url_lun; /* the LUN of the URL: a step's default */
static uint32_t block_size = 512;
static struct scsi_task *stale[64]; /* timed-out tasks, freed at the end */
static struct op *stale_op[64];
static size_t nstale;

/* Most UNIT ATTENTION answers one command is resent after (within its timeout). */
#define UA_RETRIES 30

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

/* Services the context until op is done or ms pass; false on timeout. */
static bool wait_op(struct op *op, int64_t ms)
{
	return itest_wait(ctx, op ? &op->done : NULL, ms);
}

/* What one step produced. */
struct result {
	bool run, done;
	int status;
	uint8_t key, asc, ascq;
	int64_t ms;
	char eh[128];	  /* error handling performed, for the log */
	bool ctl;	  /* a ctl step: */
	int exit_code;	  /* faultlun ctl's exit status (-1: killed at the timeout) */
	char answer[256]; /* and the first line of its answer */
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
	else if (nstale < sizeof(stale) / sizeof(stale[0]))
		stale_op[nstale++] = op; /* its task slot stays NULL */
	return resp;
}

/* Runs one CDB with the runner's error handling; fills r. */
static void run_task(struct scsi_task *(*make)(void *), void *arg, int lun, struct iscsi_data *out,
		     int timeout_ms, struct result *r)
{
	int64_t t0 = itest_now_ms();
	int ua_retries = 0;
	int64_t t_send = t0; /* when the command was (re)sent after a recovery */

	r->run = true;
	for (int attempt = 0; attempt < 2; attempt++) {
		struct scsi_task *t = make(arg);
		/* On the heap: libiscsi may call back late for a timed-out task. */
		struct op *opp = calloc(1, sizeof(*opp));
		if (!t || iscsi_scsi_command_async(ctx, lun, t, op_cb, out, opp)) {
			free(opp);
			r->done = false;
			break;
		}
		if (wait_op(opp, timeout_ms) && opp->status != SCSI_STATUS_CANCELLED &&
		    opp->status != SCSI_STATUS_ERROR) {
			r->done = true;
			r->status = t->status;
			r->key = r->asc = r->ascq = 0;
			if (t->status == SCSI_STATUS_CHECK_CONDITION) {
				r->key = (uint8_t)t->sense.key;
				r->asc = (uint8_t)(t->sense.ascq >> 8);
				r->ascq = (uint8_t)(t->sense.ascq & 0xff);
			}
			scsi_free_scsi_task(t);
			free(opp);
			/*
			 * A UNIT ATTENTION is resent, as Linux does for block I/O: not
			 * counted against sd's five retries but bounded by the command's
			 * time (Linux 6.1 resent a read through eight in a row). Here:
			 * up to UA_RETRIES times while one timeout has not passed since the
			 * command was sent (or resent after a recovery).
			 */
			if (r->status == SCSI_STATUS_CHECK_CONDITION &&
			    r->key == SCSI_SENSE_UNIT_ATTENTION && ua_retries < UA_RETRIES &&
			    itest_now_ms() - t_send < timeout_ms) {
				ua_retries++;
				attempt--;
				continue;
			}
			break;
		}
		/* Error handling: abort, LUN reset twice, then a new session. */
		bool recovered = false;
		strncat(r->eh, "abort ", sizeof(r->eh) - strlen(r->eh) - 1);
		int a = tmf(ISCSI_TM_ABORT_TASK, lun, t, 5000);
		for (int i = 0; i < 2 && !recovered; i++) {
			strncat(r->eh, "lun_reset ", sizeof(r->eh) - strlen(r->eh) - 1);
			recovered = tmf(ISCSI_TM_LUN_RESET, lun, NULL, 5000) == 0;
		}
		if (!recovered) {
			strncat(r->eh, "reconnect ", sizeof(r->eh) - strlen(r->eh) - 1);
			recovered = iscsi_reconnect_sync(ctx) == 0;
		}
		(void)a;
		/* libiscsi may still hold the task: free it after the context. */
		if (nstale < sizeof(stale) / sizeof(stale[0])) {
			stale_op[nstale] = opp;
			stale[nstale++] = t;
		}
		if (!recovered)
			break;
		t_send = itest_now_ms();
	}
	if (ua_retries)
		snprintf(r->eh + strlen(r->eh), sizeof(r->eh) - strlen(r->eh),
			 "unit attention resent %d time%s ", ua_retries,
			 ua_retries == 1 ? "" : "s");
	r->ms = itest_now_ms() - t0;
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
	return scsi_cdb_inquiry(0, 0, 255);
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
 * A CDB in hex: bytes of one or two hex digits, separated by spaces or
 * colons or not at all ("28 00 ...", "2800..."). Its length, or -1.
 */
static int parse_cdb(const char *hex, uint8_t *cdb, int max)
{
	int n = 0;
	for (const char *p = hex; *p;) {
		if (*p == ' ' || *p == ':') {
			p++;
			continue;
		}
		int digits = 0;
		unsigned v = 0;
		while (digits < 2 && isxdigit((unsigned char)*p)) {
			int d = isdigit((unsigned char)*p) ? *p - '0' : (*p | 0x20) - 'a' + 10;
			v = v * 16 + (unsigned)d;
			digits++;
			p++;
		}
		if (!digits || n == max)
			return -1;
		cdb[n++] = (uint8_t)v;
	}
	return n;
}

/* Integer member with a default. */
static int64_t jint(json_t *o, const char *k, int64_t def)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? json_integer_value(v)
	       : json_is_real(v)  ? (int64_t)json_real_value(v)
				  : def;
}

/*
 * sg_raw step: the CDB "cdb" as given, with "size" bytes of data-in, or else
 * "data" bytes of data-out filled with "pattern" (default 0xa5), as the VM
 * lab's agent sends it with SG_IO. False when the step cannot be sent.
 */
static bool run_sg_raw(json_t *step, int lun, int tmo, struct result *r)
{
	struct raw_arg a = {.in = (uint32_t)jint(step, "size", 0)};
	const char *hex = json_string_value(json_object_get(step, "cdb"));
	json_t *data = json_object_get(step, "data");

	a.len = hex ? parse_cdb(hex, a.cdb, (int)sizeof(a.cdb)) : -1;
	if (a.len < 6) {
		fprintf(stderr, "sg_raw: cdb \"%s\" is not 6 to 16 bytes in hex\n", hex ? hex : "");
		return false;
	}
	if (data && (!json_is_integer(data) || json_integer_value(data) < 0 ||
		     json_integer_value(data) > (1 << 24))) {
		fprintf(stderr, "sg_raw: data must be a byte count (0 to 16 MiB)\n");
		return false;
	}
	a.out = a.in ? 0 : (uint32_t)jint(step, "data", 0);
	unsigned char *buf = malloc(a.out ? a.out : 1);
	memset(buf, (int)jint(step, "pattern", 0xa5), a.out);
	struct iscsi_data d = {.size = a.out, .data = buf};
	run_task(make_raw, &a, lun, a.out ? &d : NULL, tmo, r);
	free(buf);
	return true;
}

/*
 * ctl step: `faultlun ctl SOCKET ARGS...` on the target's control socket, as
 * the VM lab's agent runs it (docs/control-protocol.md); exit status 0 is
 * success (status GOOD, errno OK), anything else a failure. The session is
 * serviced while it runs; it is killed at the step's timeout. False when the
 * step cannot be run.
 */
static bool run_ctl(json_t *step, int tmo, struct result *r)
{
	json_t *args = json_object_get(step, "args"), *v;
	char *argv[40];
	int n = 0, fds[2];
	size_t i;

	if (!ctl_socket || !json_is_array(args) || !json_array_size(args) ||
	    json_array_size(args) > 32)
		return false;
	argv[n++] = (char *)faultlun_bin;
	argv[n++] = (char *)"ctl";
	argv[n++] = (char *)ctl_socket;
	json_array_foreach(args, i, v)
	{
		if (!json_is_string(v))
			return false;
		argv[n++] = (char *)json_string_value(v);
	}
	argv[n] = NULL;
	if (pipe2(fds, O_CLOEXEC))
		return false;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	pid_t pid;
	int err = posix_spawnp(&pid, faultlun_bin, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (err) {
		fprintf(stderr, "ctl: cannot run %s: %s\n", faultlun_bin, strerror(err));
		close(fds[0]);
		return false;
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	int64_t t0 = itest_now_ms();
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
		if (itest_now_ms() - t0 > tmo) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			st = -1;
			break;
		}
		itest_wait(ctx, NULL, 20); /* the session lives on meanwhile */
	}
	for (ssize_t got; len < sizeof(r->answer) - 1 &&
			  (got = read(fds[0], r->answer + len, sizeof(r->answer) - 1 - len)) > 0;)
		len += (size_t)got;
	close(fds[0]);
	r->answer[len] = 0;
	r->answer[strcspn(r->answer, "\n")] = 0;
	r->ms = itest_now_ms() - t0;
	r->done = st != -1;
	if (r->done && WIFEXITED(st))
		r->exit_code = WEXITSTATUS(st);
	/* Not a SCSI status: only exit status 0 counts as GOOD. */
	r->status = r->exit_code == 0 ? SCSI_STATUS_GOOD : 0x100;
	return true;
}

/* Runs one workload step; false when the runner cannot perform it. */
static bool run_step(json_t *step, int default_timeout_ms, struct result *r)
{
	const char *op = json_string_value(json_object_get(step, "op"));
	int lun = (int)jint(step, "lun", url_lun);
	int tmo = (int)(jint(step, "timeout_s", 0) * 1000);
	struct rw_arg rw = {.lba = (uint64_t)jint(step, "lba", 0),
			    .blocks = (uint32_t)jint(step, "blocks", 1)};
	int repeat = (int)jint(step, "repeat", jint(step, "count", 1));

	if (!tmo)
		tmo = default_timeout_ms;
	if (!op)
		return false;
	if (json_is_true(json_object_get(step, "background")))
		return false;
	if (!strcmp(op, "sleep")) {
		int64_t t0 = itest_now_ms();
		wait_op(NULL, jint(step, "ms", 0));
		r->ms = itest_now_ms() - t0;
		r->run = r->done = true;
		return true;
	}
	for (int i = 0; i < (repeat > 0 ? repeat : 1); i++) {
		struct result one = {0};
		if (!strcmp(op, "read")) {
			run_task(make_rw, &rw, lun, NULL, tmo, &one);
		} else if (!strcmp(op, "write")) {
			size_t len = (size_t)rw.blocks * block_size;
			unsigned char *buf = malloc(len ? len : 1);
			memset(buf, (int)jint(step, "pattern", 0xa5), len);
			struct iscsi_data d = {.size = len, .data = buf};
			rw.write = true;
			run_task(make_rw, &rw, lun, &d, tmo, &one);
			free(buf);
		} else if (!strcmp(op, "tur")) {
			run_task(make_tur, NULL, lun, NULL, tmo, &one);
		} else if (!strcmp(op, "inquiry")) {
			run_task(make_inquiry, NULL, lun, NULL, tmo, &one);
		} else if (!strcmp(op, "sync") || !strcmp(op, "fsync")) {
			run_task(make_sync, NULL, lun, NULL, tmo, &one);
		} else if (!strcmp(op, "discard")) {
			size_t len = block_size;
			unsigned char *buf = calloc(1, len);
			struct iscsi_data d = {.size = len, .data = buf};
			run_task(make_discard, &rw, lun, &d, tmo, &one);
			free(buf);
		} else if (!strcmp(op, "sg_raw")) {
			if (!run_sg_raw(step, lun, tmo, &one))
				return false;
		} else if (!strcmp(op, "ctl")) {
			if (!run_ctl(step, tmo, &one))
				return false;
		} else {
			return false; /* filesystem and kernel operations: the VM lab's */
		}
		/* Report the first failure of a repeated step, else the last result. */
		if (i == 0 || (r->done && r->status == SCSI_STATUS_GOOD))
			*r = one;
	}
	return true;
}

/* Status names of the scenario language. */
static int status_by_name(const char *s)
{
	static const struct {
		const char *n;
		int v;
	} t[] = {{"GOOD", 0x00},       {"CHECK_CONDITION", 0x02},      {"CONDITION_MET", 0x04},
		 {"BUSY", 0x08},       {"RESERVATION_CONFLICT", 0x18}, {"TASK_SET_FULL", 0x28},
		 {"ACA_ACTIVE", 0x30}, {"TASK_ABORTED", 0x40}};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcasecmp(s, t[i].n))
			return t[i].v;
	return -1;
}

/* Parses "KEY", "KEY/ASC_NAME" or "KEY/AA/QQ"; -1 on error. */
static int parse_sense(const char *s, uint8_t *key, int *asc, int *ascq)
{
	char buf[128], *a, *b;
	snprintf(buf, sizeof(buf), "%s", s);
	*asc = *ascq = -1;
	a = strchr(buf, '/');
	if (a)
		*a++ = 0;
	if (sense_key_by_name(buf, key)) {
		char *end;
		unsigned long k = strtoul(buf, &end, 16);
		if (*end || k > 15)
			return -1;
		*key = (uint8_t)k;
	}
	if (!a)
		return 0;
	b = strchr(a, '/');
	if (b) {
		*b++ = 0;
		*asc = (int)strtoul(a, NULL, 16);
		*ascq = (int)strtoul(b, NULL, 16);
		return 0;
	}
	uint8_t x, y;
	if (sense_asc_by_name(a, &x, &y))
		return -1;
	*asc = x;
	*ascq = y;
	return 0;
}

/* Checks an errno expectation against what the initiator saw. */
static bool errno_matches(const char *e, const struct result *r)
{
	bool good = r->done && (r->status == 0x00 || r->status == 0x04);
	if (!strcmp(e, "OK"))
		return good;
	if (!strcmp(e, "ETIMEDOUT"))
		return !r->done;
	if (!strcmp(e, "ENOSPC"))
		return r->done && r->key == 0x7 && r->asc == 0x27 && r->ascq == 0x07;
	if (!strcmp(e, "ENODATA"))
		return r->done && r->key == 0x3;
	if (!strcmp(e, "EBADE"))
		return r->done && r->status == 0x18; /* RESERVATION CONFLICT */
	if (!strcmp(e, "EREMOTEIO") || !strcmp(e, "EILSEQ"))
		return r->done && r->status == 0x02;
	return !good; /* EIO and the rest: the step failed */
}

/* Runs a command name on the command line. */
int main(int argc, char **argv)
{
	while (argc >= 3 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--ctl"))
			ctl_socket = argv[2];
		else if (!strcmp(argv[1], "--faultlun"))
			faultlun_bin = argv[2];
		else
			break;
		argc -= 2;
		argv += 2;
	}
	if (argc < 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: iscsi_runner [--ctl SOCKET] [--faultlun PATH] URL "
				"SCENARIO.json\n");
		return 2;
	}
	struct fl_scenario *sc;
	struct fl_diags d = {0};
	if (fl_scenario_load_file(argv[2], FL_FE_ANY, &sc, &d)) {
		fl_diags_print(&d, stderr);
		return 2;
	}
	fl_diags_free(&d);
	const char *cj = fl_scenario_check_json(sc);
	json_t *check = cj ? json_loads(cj, 0, NULL) : NULL;
	if (!check) {
		printf("%s: no check section: skipped\n", argv[2]);
		fl_scenario_free(sc);
		return 77;
	}
	json_t *paths = json_object_get(check, "paths");
	if (json_is_array(paths)) {
		bool iscsi = false;
		size_t i;
		json_t *v;
		json_array_foreach(paths, i, v) iscsi |=
		    json_is_string(v) && !strcmp(json_string_value(v), "iscsi");
		if (!iscsi) {
			printf("%s: check is not for the iscsi path: skipped\n", argv[2]);
			return 77;
		}
	}
	int timeout_ms = (int)(jint(json_object_get(check, "knobs"), "timeout_s", 30) * 1000);
	json_t *work = json_object_get(check, "workload");
	size_t nsteps = json_array_size(work);
	for (size_t i = 0; i < nsteps && !ctl_socket; i++) {
		const char *op = json_string_value(json_object_get(json_array_get(work, i), "op"));
		if (op && !strcmp(op, "ctl")) {
			fprintf(stderr,
				"%s: step %zu is a ctl step: give the target's control socket "
				"(iscsi_runner --ctl SOCKET, faultlun serve --ctl SOCKET)\n",
				argv[2], i);
			return 2;
		}
	}

	ctx = itest_login(argv[1], "iqn.2026-12.org.faultlun:runner", &url_lun, 15000);
	if (!ctx)
		return 1;
	/* Block size, and the power-on unit attention out of the way. */
	for (int i = 0; i < 3; i++) {
		struct op op = {0};
		struct scsi_task *t = scsi_cdb_readcapacity10(0, 0);
		if (iscsi_scsi_command_async(ctx, url_lun, t, op_cb, NULL, &op) ||
		    !wait_op(&op, 5000))
			break;
		if (t->status == SCSI_STATUS_GOOD && t->datain.size >= 8) {
			block_size = (uint32_t)t->datain.data[4] << 24 |
				     (uint32_t)t->datain.data[5] << 16 |
				     (uint32_t)t->datain.data[6] << 8 | t->datain.data[7];
			scsi_free_scsi_task(t);
			break;
		}
		scsi_free_scsi_task(t);
	}

	struct result *res = calloc(nsteps ? nsteps : 1, sizeof(*res));
	bool *runnable = calloc(nsteps ? nsteps : 1, sizeof(*runnable));
	for (size_t i = 0; i < nsteps; i++) {
		runnable[i] = run_step(json_array_get(work, i), timeout_ms, &res[i]);
		struct result *r = &res[i];
		if (!runnable[i])
			printf("step %zu (%s): not run by the libiscsi runner\n", i,
			       json_string_value(json_object_get(json_array_get(work, i), "op")));
		else if (r->ctl)
			printf("step %zu (ctl): %s exit %d in %lld ms: %s\n", i,
			       r->done ? "completed" : "NOT completed", r->exit_code,
			       (long long)r->ms, r->answer);
		else
			printf(
			    "step %zu (%s): %s status 0x%02x sense %x/%02x/%02x in %lld ms%s%s\n",
			    i, json_string_value(json_object_get(json_array_get(work, i), "op")),
			    r->done ? "completed" : "NOT completed", r->status, r->key, r->asc,
			    r->ascq, (long long)r->ms, r->eh[0] ? ", error handling: " : "", r->eh);
	}

	int applicable = 0, failed = 0;
	json_t *expect = json_object_get(check, "expect"), *e;
	size_t k;
	json_array_foreach(expect, k, e)
	{
		json_t *st = json_object_get(e, "step");
		if (!json_is_integer(st) || json_integer_value(st) < 0 ||
		    (size_t)json_integer_value(st) >= nsteps) {
			printf("expect %zu: not applicable to an initiator (kernel or trace)\n", k);
			continue;
		}
		size_t s = (size_t)json_integer_value(st);
		const char *runner = json_string_value(json_object_get(e, "runner"));
		if (runner && strcmp(runner, "libiscsi")) {
			printf("expect %zu: only the %s runner checks it: not applicable\n", k,
			       runner);
			continue;
		}
		if (!runnable[s]) {
			printf("expect %zu: step %zu was not run: not applicable\n", k, s);
			continue;
		}
		struct result *r = &res[s];
		const char *v;
		bool any = false;
		if ((v = json_string_value(json_object_get(e, "status")))) {
			int want = status_by_name(v);
			bool ok = r->done && want == r->status;
			printf("expect %zu: step %zu status %s: %s\n", k, s, v, ok ? "ok" : "FAIL");
			failed += !ok;
			any = true;
		}
		if ((v = json_string_value(json_object_get(e, "sense")))) {
			uint8_t key;
			int asc, ascq;
			bool ok = !parse_sense(v, &key, &asc, &ascq) && r->done &&
				  r->status == 0x02 && r->key == key &&
				  (asc < 0 || (r->asc == asc && r->ascq == ascq));
			printf("expect %zu: step %zu sense %s: %s\n", k, s, v, ok ? "ok" : "FAIL");
			failed += !ok;
			any = true;
		}
		if ((v = json_string_value(json_object_get(e, "errno")))) {
			bool ok = errno_matches(v, r);
			printf("expect %zu: step %zu errno %s: %s\n", k, s, v, ok ? "ok" : "FAIL");
			failed += !ok;
			any = true;
		}
		int64_t lim = jint(e, "within_ms", jint(e, "max_stall_ms", -1));
		if (lim >= 0) {
			bool ok = r->done && r->ms <= lim;
			printf("expect %zu: step %zu within %lld ms: %s\n", k, s, (long long)lim,
			       ok ? "ok" : "FAIL");
			failed += !ok;
			any = true;
		}
		int64_t least = jint(e, "min_ms", -1);
		if (least >= 0) {
			bool ok = r->run && r->ms >= least;
			printf("expect %zu: step %zu takes at least %lld ms: %s\n", k, s,
			       (long long)least, ok ? "ok" : "FAIL");
			failed += !ok;
			any = true;
		}
		if (!any)
			printf("expect %zu: nothing an initiator can check\n", k);
		applicable += any;
	}
	iscsi_logout_sync(ctx);
	iscsi_destroy_context(ctx);
	for (size_t i = 0; i < nstale; i++) {
		if (stale[i])
			scsi_free_scsi_task(stale[i]);
		free(stale_op[i]);
	}
	json_decref(check);
	fl_scenario_free(sc);
	free(res);
	free(runnable);
	if (failed) {
		printf("%s: %d expectation(s) failed\n", argv[2], failed);
		return 1;
	}
	if (!applicable) {
		printf("%s: no expectation applies to an iSCSI initiator: skipped\n", argv[2]);
		return 77;
	}
	printf("%s: %d expectation(s) hold\n", argv[2], applicable);
	return 0;
}
