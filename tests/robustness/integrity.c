// SPDX-License-Identifier: MIT
/*
 * integrity.c - data integrity through the real iSCSI path (libiscsi) while
 * faults are armed: every write acknowledged with GOOD status must read back
 * exactly after the target is restarted on the same file store (SAM-5 5.1:
 * GOOD means the command completed; SBC-3 4.15 with the write cache off means
 * the data is on the medium).
 *
 *   integrity write JOURNAL URL COUNT SEED   WRITE(10)s of 32 blocks at random
 *       LBAs; each 512-byte block holds its LBA, a generation (the write's
 *       number) and a checksum pattern. Every outcome goes to JOURNAL as it
 *       happens: "G lba n gen" (GOOD), "M lba n gen" (no GOOD: may or may not
 *       have been executed), "R" (a LUN RESET completed: every earlier
 *       unacknowledged write is aborted or done, SAM-5 7.7). After any write
 *       without GOOD the client reconnects and resets the LUN, as an
 *       initiator's error handler does.
 *   integrity verify JOURNAL URL   reads every journalled block: it must hold
 *       the last GOOD generation, or a later one that may have landed (an "M"
 *       after that GOOD, or before it with no completed reset in between).
 *
 * The client bounds its own time: it drives libiscsi's asynchronous API from
 * its own poll loop, with a deadline per command, per login and per phase,
 * because libiscsi's automatic reconnect retries a dead portal forever. Run it
 * as the target's direct child (`exec` in `faultlun serve --run`): when its
 * parent changes, the target is gone, and it stops at once and says so
 * (exit 3). A deadline passed while the target still runs is exit 4.
 */
#include <errno.h>
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BS 512
#define NBLK 32
#define MAXMAYBE 64
/* libiscsi's own reconnect: a few tries (backoff 1, 2, 3 s), not forever. */
#define LIB_RECONNECT_TRIES 3
/* Longest wait for one login attempt, and for a new session in all. */
#define LOGIN_S 5
#define RECONNECT_S 15

static const char *url_s;
static int lun;
static int timeout_s = 1;  /* short while faults drop answers; long to verify */
static int command_s = 20; /* one command, libiscsi's reconnects included */
static int phase_s = 150;  /* the whole phase */
static pid_t target_pid;   /* our parent at start: the target */
static struct timespec phase_end;
static const char *doing = "starting"; /* for the messages */
static unsigned doing_n;

/*
 * The operation being waited for. Callbacks of abandoned operations (a
 * context destroyed after a deadline cancels them) carry an older tag and
 * are ignored.
 */
static struct {
	uintptr_t tag;
	bool done;
	int status;
	uint32_t tmf_response;
} cur;

/* Per block: the last GOOD generation and the generations that may have landed since. */
struct blk {
	uint32_t good;
	uint32_t nmaybe;
	uint32_t maybe[MAXMAYBE];
	uint32_t mepoch[MAXMAYBE]; /* completed resets when each was issued */
};

/* Fills one block with the pattern of (lba, gen). */
static void pattern(uint8_t *b, uint32_t lba, uint32_t gen)
{
	uint64_t x = ((uint64_t)lba << 32) | gen;
	for (int i = 0; i < BS / 8; i++) {
		uint64_t v = i == 0 ? lba : i == 1 ? gen : x * 0x9e3779b97f4a7c15ull + (uint64_t)i;
		memcpy(b + 8 * i, &v, 8);
	}
}

/* Seconds from now on the monotonic clock. */
static struct timespec after(int seconds)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += seconds;
	return t;
}

/* True once the monotonic clock has reached t. */
static bool passed(struct timespec t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t.tv_sec || (now.tv_sec == t.tv_sec && now.tv_nsec >= t.tv_nsec);
}

/* Stops the test because the target process has gone away. */
static void target_gone(void)
{
	fprintf(stderr,
		"FAIL: the target (faultlun serve, pid %ld) is gone: it exited or was killed "
		"during %s %u; its exit status and stderr follow\n",
		(long)target_pid, doing, doing_n);
	_exit(3); /* no leak report of the abandoned session */
}

/* Stops the test because the target runs but does not answer in time. */
static void too_long(const char *what, int seconds, struct iscsi_context *ctx)
{
	fprintf(stderr,
		"FAIL: %s: no result within %d s during %s %u while the target (pid %ld) still "
		"runs: %s\n",
		what, seconds, doing, doing_n, (long)target_pid, ctx ? iscsi_get_error(ctx) : "");
	_exit(4);
}

/* Callback of every operation: records the outcome if it is the current one. */
static void op_done(struct iscsi_context *ctx, int status, void *data, void *tag)
{
	(void)ctx;
	(void)data;
	if ((uintptr_t)tag != cur.tag)
		return;
	cur.done = true;
	cur.status = status;
}

/* Callback of a task management function: also records the target's response. */
static void tmf_done(struct iscsi_context *ctx, int status, void *data, void *tag)
{
	op_done(ctx, status, data, tag);
	if ((uintptr_t)tag == cur.tag && data)
		memcpy(&cur.tmf_response, data, sizeof(cur.tmf_response));
}

/* Starts tracking a new operation; its tag goes to libiscsi as private data. */
static void *op_begin(void)
{
	cur.tag++;
	cur.done = false;
	cur.status = -1;
	cur.tmf_response = UINT32_MAX;
	return (void *)cur.tag;
}

/*
 * Services ctx until the current operation completes: true if it did, false
 * if libiscsi gave up (the operation failed). Never returns if the target is
 * gone or the deadline of the operation or of the phase passes.
 */
static bool op_wait(struct iscsi_context *ctx, const char *what, int seconds)
{
	struct timespec end = after(seconds);
	while (!cur.done) {
		if (getppid() != target_pid)
			target_gone();
		if (passed(end))
			too_long(what, seconds, ctx);
		if (passed(phase_end))
			too_long("the phase", phase_s, ctx);
		/* fd -1 (between reconnect tries) makes poll a 100 ms sleep. */
		struct pollfd p = {iscsi_get_fd(ctx), (short)iscsi_which_events(ctx), 0};
		int n = poll(&p, 1, 100);
		if (n < 0 && errno != EINTR) {
			perror("poll");
			exit(1);
		}
		if (iscsi_service(ctx, n > 0 ? p.revents : 0) < 0)
			return false;
	}
	return true;
}

/*
 * Waits for the SCSI command t (started with op_begin()'s tag): true if it
 * completed with GOOD. *owned: libiscsi gave up without completing it, so ctx
 * still refers to t, which may be freed only after ctx is destroyed.
 */
static bool run_task(struct iscsi_context *ctx, struct scsi_task *t, bool *owned)
{
	*owned = false;
	if (!t)
		return false;
	if (!op_wait(ctx, "a SCSI command", command_s)) {
		*owned = true;
		return false;
	}
	return cur.status == SCSI_STATUS_GOOD && t->status == SCSI_STATUS_GOOD;
}

/* A logged-in context, or NULL. */
static struct iscsi_context *connect_ctx(void)
{
	struct iscsi_context *ctx = iscsi_create_context("iqn.2026-12.org.faultlun:integrity");
	if (!ctx)
		return NULL;
	struct iscsi_url *u = iscsi_parse_full_url(ctx, url_s);
	if (!u) {
		iscsi_destroy_context(ctx);
		return NULL;
	}
	iscsi_set_targetname(ctx, u->target);
	iscsi_set_session_type(ctx, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(ctx, ISCSI_HEADER_DIGEST_NONE);
	iscsi_set_timeout(ctx, timeout_s);
	iscsi_set_reconnect_max_retries(ctx, LIB_RECONNECT_TRIES);
	lun = u->lun;
	bool ok = iscsi_full_connect_async(ctx, u->portal, u->lun, op_done, op_begin()) == 0 &&
		  op_wait(ctx, "login", LOGIN_S) && cur.status == SCSI_STATUS_GOOD;
	iscsi_destroy_url(u);
	if (!ok) {
		iscsi_destroy_context(ctx);
		return NULL;
	}
	return ctx;
}

/* Connects, retrying for a while (the target may be closing the old session). */
static struct iscsi_context *reconnect(void)
{
	struct timespec end = after(RECONNECT_S);
	while (!passed(end)) {
		struct iscsi_context *ctx = connect_ctx();
		if (ctx)
			return ctx;
		if (getppid() != target_pid)
			target_gone();
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "no session within %d s\n", RECONNECT_S);
	return NULL;
}

/* Logs out (bounded) and frees the context. */
static void hang_up(struct iscsi_context *ctx)
{
	if (iscsi_logout_async(ctx, op_done, op_begin()) == 0)
		op_wait(ctx, "logout", LOGIN_S);
	iscsi_destroy_context(ctx);
}

/* READ CAPACITY(16): the number of blocks and the block length, or -1. */
static int capacity(struct iscsi_context *ctx, uint32_t *nblocks, uint32_t *blen)
{
	bool owned;
	struct scsi_task *t = iscsi_readcapacity16_task(ctx, lun, op_done, op_begin());
	bool ok = run_task(ctx, t, &owned);
	struct scsi_readcapacity16 *rc = ok ? scsi_datain_unmarshall(t) : NULL;
	if (rc) {
		*nblocks = (uint32_t)(rc->returned_lba + 1);
		*blen = rc->block_length;
	}
	if (t && !owned)
		scsi_free_scsi_task(t);
	return rc ? 0 : -1;
}

/* Opens the journal (fopen mode) and logs in; NULL, said on stderr, when either fails. */
static struct iscsi_context *begin_phase(const char *journal, const char *mode, FILE **j)
{
	struct iscsi_context *ctx;

	*j = fopen(journal, mode);
	ctx = reconnect();
	if (!*j || !ctx) {
		fprintf(stderr, "cannot open the journal or log in\n");
		return NULL;
	}
	return ctx;
}

/* The write phase. */
static int do_write(const char *journal, unsigned count, unsigned seed)
{
	FILE *j;
	struct iscsi_context *ctx = begin_phase(journal, "w", &j);
	if (!ctx)
		return 1;
	uint32_t nblocks, blen;
	if (capacity(ctx, &nblocks, &blen) || blen != BS) {
		fprintf(stderr, "READ CAPACITY(16) failed or not 512-byte blocks\n");
		return 1;
	}
	static uint8_t buf[NBLK * BS];
	unsigned good = 0, maybe = 0, resets = 0;
	srand(seed);
	for (uint32_t gen = 1; gen <= count; gen++) {
		uint32_t lba = (uint32_t)rand() % (nblocks - NBLK + 1);
		for (int k = 0; k < NBLK; k++)
			pattern(buf + k * BS, lba + (uint32_t)k, gen);
		doing = "write";
		doing_n = gen;
		bool owned;
		struct scsi_task *t = iscsi_write10_task(ctx, lun, lba, buf, sizeof(buf), BS, 0, 0,
							 0, 0, 0, op_done, op_begin());
		bool ok = run_task(ctx, t, &owned);
		if (t && !owned)
			scsi_free_scsi_task(t);
		fprintf(j, "%c %u %u %u\n", ok ? 'G' : 'M', lba, NBLK, gen);
		fflush(j);
		if (ok) {
			good++;
			continue;
		}
		maybe++;
		/* The error handler: a new session, then LUN RESET. */
		iscsi_destroy_context(ctx);
		if (t && owned)
			scsi_free_scsi_task(t);
		doing = "new session after write";
		ctx = reconnect();
		if (!ctx) {
			fprintf(stderr, "cannot log in again after write %u\n", gen);
			return 1;
		}
		/* Only a reset the target reports complete (response 0) settles the past. */
		doing = "LUN RESET after write";
		void *tag = op_begin();
		bool done = !iscsi_task_mgmt_lun_reset_async(ctx, (uint32_t)lun, tmf_done, tag) &&
			    op_wait(ctx, "LUN RESET", command_s);
		if (done && cur.status == SCSI_STATUS_GOOD && cur.tmf_response == 0) {
			fprintf(j, "R\n");
			fflush(j);
			resets++;
		}
		/* Clear the reset's unit attention. */
		doing = "TEST UNIT READY after write";
		t = iscsi_testunitready_task(ctx, lun, op_done, op_begin());
		run_task(ctx, t, &owned);
		if (owned) {
			iscsi_destroy_context(ctx);
			scsi_free_scsi_task(t);
			ctx = reconnect();
			if (!ctx) {
				fprintf(stderr, "cannot log in again after write %u\n", gen);
				return 1;
			}
		} else if (t) {
			scsi_free_scsi_task(t);
		}
	}
	doing = "logout after write";
	hang_up(ctx);
	fclose(j);
	fprintf(stderr, "%u writes: %u GOOD, %u without GOOD, %u LUN resets\n", count, good, maybe,
		resets);
	/* The faults must actually have been hit, or this proves nothing. */
	if (maybe == 0 || good < count / 2) {
		fprintf(stderr, "FAIL: expected some faulted writes and mostly GOOD ones\n");
		return 1;
	}
	return 0;
}

/* The verify phase. */
static int do_verify(const char *journal)
{
	FILE *j;
	struct iscsi_context *ctx = begin_phase(journal, "r", &j);
	if (!ctx)
		return 1;
	uint32_t nblocks, blen;
	if (capacity(ctx, &nblocks, &blen)) {
		fprintf(stderr, "READ CAPACITY(16) failed\n");
		return 1;
	}
	struct blk *b = calloc(nblocks, sizeof(*b));
	/*
	 * A write without GOOD may land at any time until a LUN RESET completes
	 * after it (epoch: the number of completed resets when it was issued).
	 * A GOOD write supersedes only the candidates a reset has settled.
	 */
	uint32_t epoch = 0;
	char line[128], kind;
	unsigned lba, n, gen, lines = 0;
	while (fgets(line, sizeof(line), j)) {
		lines++;
		if (line[0] == 'R') {
			epoch++;
			continue;
		}
		if (sscanf(line, "%c %u %u %u", &kind, &lba, &n, &gen) != 4 || lba + n > nblocks)
			continue;
		for (unsigned k = lba; k < lba + n; k++) {
			struct blk *x = &b[k];
			if (kind == 'G') {
				uint32_t keep = 0;
				for (uint32_t m = 0; m < x->nmaybe; m++)
					if (x->mepoch[m] == epoch) {
						x->maybe[keep] = x->maybe[m];
						x->mepoch[keep++] = x->mepoch[m];
					}
				x->nmaybe = keep;
				x->good = gen;
			} else if (x->nmaybe < MAXMAYBE) {
				x->maybe[x->nmaybe] = gen;
				x->mepoch[x->nmaybe++] = epoch;
			}
		}
	}
	fclose(j);
	unsigned checked = 0, bad = 0;
	uint8_t want[BS];
	doing = "verify read of LBA";
	for (uint32_t i = 0; i < nblocks; i++) {
		if (!b[i].good && !b[i].nmaybe)
			continue;
		doing_n = i;
		bool owned;
		struct scsi_task *t =
		    iscsi_read10_task(ctx, lun, i, BS, BS, 0, 0, 0, 0, 0, op_done, op_begin());
		bool ok = run_task(ctx, t, &owned);
		if (!ok || t->datain.size != BS) {
			fprintf(stderr, "FAIL: READ(10) of LBA %u: status %d sense %x/%04x: %s\n",
				i, t ? t->status : -1, t ? t->sense.key : 0, t ? t->sense.ascq : 0,
				iscsi_get_error(ctx));
			bad++;
			if (owned) {
				iscsi_destroy_context(ctx);
				scsi_free_scsi_task(t);
				if (!(ctx = reconnect()))
					return 1;
			} else if (t) {
				scsi_free_scsi_task(t);
			}
			continue;
		}
		const uint8_t *got = t->datain.data;
		ok = false;
		if (b[i].good) {
			pattern(want, i, b[i].good);
			ok = !memcmp(got, want, BS);
		} else {
			static const uint8_t zero[BS];
			ok = !memcmp(got, zero, BS);
		}
		for (uint32_t m = 0; !ok && m < b[i].nmaybe; m++) {
			pattern(want, i, b[i].maybe[m]);
			ok = !memcmp(got, want, BS);
		}
		if (!ok) {
			uint64_t glba, ggen;
			memcpy(&glba, got, 8);
			memcpy(&ggen, got + 8, 8);
			fprintf(
			    stderr,
			    "FAIL: LBA %u: want generation %u (or %u later candidates), block says "
			    "lba %llu gen %llu\n",
			    i, b[i].good, b[i].nmaybe, (unsigned long long)glba,
			    (unsigned long long)ggen);
			bad++;
		}
		checked++;
		scsi_free_scsi_task(t);
	}
	doing = "logout after verify";
	hang_up(ctx);
	free(b);
	fprintf(stderr, "%u journal lines, %u blocks checked, %u bad\n", lines, checked, bad);
	return bad || checked == 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	target_pid = getppid();
	if (argc >= 6 && !strcmp(argv[1], "write")) {
		url_s = argv[3];
		phase_end = after(phase_s);
		return do_write(argv[2], (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]));
	}
	if (argc >= 4 && !strcmp(argv[1], "verify")) {
		url_s = argv[3];
		timeout_s = 15;
		command_s = 25;
		phase_end = after(phase_s);
		return do_verify(argv[2]);
	}
	fprintf(stderr, "usage: integrity write JOURNAL URL COUNT SEED | verify JOURNAL URL\n");
	return 2;
}
