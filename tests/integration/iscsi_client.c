/* SPDX-License-Identifier: MIT */
/*
 * iscsi_client.c - integration checks of `faultlun serve` on libiscsi's
 * asynchronous API.
 *
 * Usage: iscsi_client URL CHECK [ARG]. Each CHECK logs in (RFC 7143 6),
 * drives the target through the event loop below with a deadline, and checks
 * what an initiator must see: SCSI status and sense (SAM-5 5.3, SPC-4 4.5),
 * residuals against the Expected Data Transfer Length (RFC 7143 11.4.5),
 * TMF response codes (11.6.1), NOP-In echoes (11.19), login status classes
 * (11.13.5), reconnects and session reinstatement (4.4.3), many sessions at
 * once, and (with a scenario) the faults the target injects. It exits 0 when
 * every assertion holds, 1 with a message otherwise, 77 when a check needs
 * something this build does not have.
 */
#include "initiator.h"

#include "fl_test.h"

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *url_s;

/* Completion state of one asynchronous call. */
struct op {
	bool done;
	int status;
	uint32_t tmf_resp;
	struct scsi_task *task;
	unsigned char nop_data[64];
	int nop_len;
};

/* Generic callback: records status and, for TMFs and NOPs, the answer. */
static void op_cb(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
	struct op *op = priv;
	(void)iscsi;
	op->done = true;
	op->status = status;
	if (op->tmf_resp == 0xdead && command_data && status == SCSI_STATUS_GOOD)
		op->tmf_resp = *(uint32_t *)command_data;
	if (op->nop_len == -1 && command_data && status == SCSI_STATUS_GOOD) {
		struct iscsi_data *d = command_data;
		op->nop_len = (int)(d->size < 64 ? d->size : 64);
		memcpy(op->nop_data, d->data, (size_t)op->nop_len);
	}
}

/* SCSI task callback. */
static void task_cb(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
	struct op *op = priv;
	(void)iscsi;
	op->done = true;
	op->status = status;
	op->task = command_data;
}

/* Runs the event loops of n contexts until every op is done or ms passes. */
static bool wait_all(struct iscsi_context **ctx, int n, struct op **ops, int nops, int ms)
{
	int64_t end = ini_now_ms() + ms;

	for (;;) {
		bool all = true;
		for (int i = 0; i < nops; i++)
			if (!ops[i]->done)
				all = false;
		if (all)
			return true;
		int64_t left = end - ini_now_ms();
		if (left <= 0)
			return false;
		struct pollfd pfd[256];
		for (int i = 0; i < n; i++) {
			pfd[i].fd = iscsi_get_fd(ctx[i]);
			pfd[i].events = (short)iscsi_which_events(ctx[i]);
			pfd[i].revents = 0;
		}
		int r = poll(pfd, (nfds_t)n, left > 100 ? 100 : (int)left);
		if (r < 0 && errno != EINTR)
			return false;
		for (int i = 0; i < n; i++)
			if (iscsi_service(ctx[i], pfd[i].revents) < 0)
				fprintf(stderr, "iscsi_service: %s\n", iscsi_get_error(ctx[i]));
	}
}

/* Waits for one op on one context. */
static bool wait_one(struct iscsi_context *ctx, struct op *op, int ms)
{
	return ini_wait(ctx, &op->done, ms);
}

/* A context for the URL's target with an initiator name (see ini_context). */
static struct iscsi_context *make_ctx(const char *iname, struct iscsi_url **url_out)
{
	return ini_context(url_s, iname, url_out);
}

/* Connects and logs in; returns the context or NULL. */
static struct iscsi_context *login(const char *iname, int *lun)
{
	return ini_login(url_s, iname, lun, 10000);
}

/* Sends a CDB and waits for its completion; returns the task (caller frees). */
static struct scsi_task *run_cdb(struct iscsi_context *ctx, int lun, struct scsi_task *task,
				 struct iscsi_data *out, int ms)
{
	struct op op = {0};

	if (iscsi_scsi_command_async(ctx, lun, task, task_cb, out, &op)) {
		fprintf(stderr, "submit failed: %s\n", iscsi_get_error(ctx));
		scsi_free_scsi_task(task);
		return NULL;
	}
	if (!wait_one(ctx, &op, ms)) {
		fprintf(stderr, "command timed out after %d ms\n", ms);
		return NULL; /* still owned by libiscsi */
	}
	return task;
}

/* Logs out and frees a context. */
static void bye(struct iscsi_context *ctx)
{
	struct op op = {0};
	if (iscsi_is_logged_in(ctx) && !iscsi_logout_async(ctx, op_cb, &op))
		wait_one(ctx, &op, 5000);
	iscsi_destroy_context(ctx);
}

/* Standard INQUIRY; status GOOD, underflow residual for a large allocation length. */
static void check_inquiry(void)
{
	int lun;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-inquiry", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	struct scsi_task *t = run_cdb(ctx, lun, scsi_cdb_inquiry(0, 0, 255), NULL, 5000);
	CHECK(t && t->status == SCSI_STATUS_GOOD, "INQUIRY status %d", t ? t->status : -1);
	if (t && t->status == SCSI_STATUS_GOOD) {
		CHECK(t->datain.size >= 36, "INQUIRY returned %d bytes", t->datain.size);
		CHECK((t->datain.data[0] & 0x1f) == 0, "peripheral device type %d",
		      t->datain.data[0] & 0x1f);
		CHECK(t->residual_status == SCSI_RESIDUAL_UNDERFLOW &&
			  t->residual == (size_t)(255 - t->datain.size),
		      "residual %d/%zu for %d bytes", t->residual_status, t->residual,
		      t->datain.size);
	}
	if (t)
		scsi_free_scsi_task(t);
	/* A LUN that does not exist: INQUIRY answers peripheral qualifier 3. */
	t = run_cdb(ctx, 200, scsi_cdb_inquiry(0, 0, 96), NULL, 5000);
	CHECK(t && t->status == SCSI_STATUS_GOOD && t->datain.size > 0 &&
		  (t->datain.data[0] >> 5) == 3,
	      "INQUIRY of an absent LUN");
	if (t)
		scsi_free_scsi_task(t);
	t = run_cdb(ctx, 200, scsi_cdb_testunitready(), NULL, 5000);
	CHECK(t && t->status == SCSI_STATUS_CHECK_CONDITION &&
		  t->sense.key == SCSI_SENSE_ILLEGAL_REQUEST && t->sense.ascq == 0x2500,
	      "TUR of an absent LUN: status %d key %d ascq 0x%x", t ? t->status : -1,
	      t ? (int)t->sense.key : -1, t ? (unsigned)t->sense.ascq : 0);
	if (t)
		scsi_free_scsi_task(t);
	bye(ctx);
}

/* Fills a pattern that differs per LBA and per run. */
static void pattern(unsigned char *buf, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)((i * 131 + seed * 7 + (i >> 9)) & 0xff);
}

/* Writes and reads back large transfers under every ImmediateData / InitialR2T pair. */
static void check_readwrite(void)
{
	for (int combo = 0; combo < 4; combo++) {
		struct iscsi_url *u;
		struct iscsi_context *ctx = make_ctx("iqn.2026-12.org.faultlun:test-rw", &u);
		CHECK(ctx, "context");
		if (!ctx)
			return;
		iscsi_set_immediate_data(ctx, combo & 1 ? ISCSI_IMMEDIATE_DATA_YES
							: ISCSI_IMMEDIATE_DATA_NO);
		iscsi_set_initial_r2t(ctx,
				      combo & 2 ? ISCSI_INITIAL_R2T_YES : ISCSI_INITIAL_R2T_NO);
		if (combo == 3)
			iscsi_set_header_digest(ctx, ISCSI_HEADER_DIGEST_CRC32C);
		int lun = u->lun;
		bool ok = ini_connect(ctx, u, 10000);
		iscsi_destroy_url(u);
		CHECK(ok, "login combo %d: %s", combo, iscsi_get_error(ctx));
		if (!ok) {
			iscsi_destroy_context(ctx);
			return;
		}
		ini_clear_ua(ctx, lun, 10000, NULL); /* the login sends nothing */
		/* 1 MiB + 1 block: several R2Ts, several Data-In sequences. */
		const uint32_t blocks = 2049;
		size_t len = (size_t)blocks * 512;
		unsigned char *w = malloc(len), *r;
		pattern(w, len, (uint32_t)combo);
		struct iscsi_data d = {.size = len, .data = w};
		uint64_t lba = 4096 + (uint64_t)combo * 4096;
		struct scsi_task *t = run_cdb(
		    ctx, lun, scsi_cdb_write16(lba, (uint32_t)len, 512, 0, 0, 0, 0, 0), &d, 10000);
		CHECK(t && t->status == SCSI_STATUS_GOOD, "WRITE16 combo %d status %d", combo,
		      t ? t->status : -1);
		if (t)
			scsi_free_scsi_task(t);
		t = run_cdb(ctx, lun, scsi_cdb_read16(lba, (uint32_t)len, 512, 0, 0, 0, 0, 0), NULL,
			    10000);
		CHECK(t && t->status == SCSI_STATUS_GOOD && t->datain.size == (int)len,
		      "READ16 combo %d", combo);
		if (t && t->datain.size == (int)len) {
			r = t->datain.data;
			CHECK(!memcmp(r, w, len), "data read back differs (combo %d)", combo);
		}
		if (t)
			scsi_free_scsi_task(t);
		/* Beyond the end of the disk: ILLEGAL REQUEST, LBA OUT OF RANGE. */
		t = run_cdb(ctx, lun, scsi_cdb_read16(UINT64_C(1) << 40, 512, 512, 0, 0, 0, 0, 0),
			    NULL, 5000);
		CHECK(t && t->status == SCSI_STATUS_CHECK_CONDITION &&
			  t->sense.key == SCSI_SENSE_ILLEGAL_REQUEST && t->sense.ascq == 0x2100,
		      "READ16 beyond the end");
		if (t)
			scsi_free_scsi_task(t);
		free(w);
		bye(ctx);
	}
}

/* NOP-Out with data is echoed by a NOP-In. */
static void check_nop(void)
{
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-nop", NULL);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	unsigned char ping[] = "faultlun-ping";
	struct op op = {.nop_len = -1};
	CHECK(!iscsi_nop_out_async(ctx, op_cb, ping, sizeof(ping), &op), "nop submit");
	CHECK(wait_one(ctx, &op, 5000) && op.status == SCSI_STATUS_GOOD, "NOP-In arrives");
	CHECK(op.nop_len >= (int)sizeof(ping) && !memcmp(op.nop_data, ping, sizeof(ping)),
	      "NOP-In echoes the ping data (%d bytes)", op.nop_len);
	bye(ctx);
}

/* Expects a TMF answer code. */
static void tmf_expect(struct iscsi_context *ctx, int lun, enum iscsi_task_mgmt_funcs fn,
		       uint32_t ritt, uint32_t want, const char *what)
{
	struct op op = {.tmf_resp = 0xdead};
	CHECK(!iscsi_task_mgmt_async(ctx, lun, fn, ritt, 0, op_cb, &op), "%s submit", what);
	CHECK(wait_one(ctx, &op, 5000) && op.status == SCSI_STATUS_GOOD, "%s answered", what);
	CHECK(op.tmf_resp == want, "%s: response %u, expected %u", what, op.tmf_resp, want);
}

/* TMF response codes, and the unit attention a LUN reset leaves for others. */
static void check_tmf(void)
{
	int lun;
	struct iscsi_context *a = login("iqn.2026-12.org.faultlun:test-tmf-a", &lun);
	struct iscsi_context *b = login("iqn.2026-12.org.faultlun:test-tmf-b", NULL);
	CHECK(a && b, "login");
	if (!a || !b)
		return;
	/* Clear the power-on UA of both sessions. */
	for (int i = 0; i < 3; i++) {
		struct scsi_task *t = run_cdb(a, lun, scsi_cdb_testunitready(), NULL, 5000);
		if (t)
			scsi_free_scsi_task(t);
		t = run_cdb(b, lun, scsi_cdb_testunitready(), NULL, 5000);
		if (t)
			scsi_free_scsi_task(t);
	}
	tmf_expect(a, lun, ISCSI_TM_ABORT_TASK, 0x12345, ISCSI_TMR_TASK_DOES_NOT_EXIST,
		   "ABORT TASK of an unknown tag");
	tmf_expect(a, lun, ISCSI_TM_ABORT_TASK_SET, 0xffffffff, ISCSI_TMR_FUNC_COMPLETE,
		   "ABORT TASK SET");
	tmf_expect(a, lun, ISCSI_TM_TASK_REASSIGN, 0x1,
		   ISCSI_TMR_TASK_ALLEGIANCE_REASS_NOT_SUPPORTED, "TASK REASSIGN at ERL 0");
	tmf_expect(a, 77, ISCSI_TM_LUN_RESET, 0xffffffff, ISCSI_TMR_LUN_DOES_NOT_EXIST,
		   "LUN RESET of an absent LUN");
	tmf_expect(a, lun, ISCSI_TM_LUN_RESET, 0xffffffff, ISCSI_TMR_FUNC_COMPLETE, "LUN RESET");
	struct scsi_task *t = run_cdb(b, lun, scsi_cdb_testunitready(), NULL, 5000);
	CHECK(t && t->status == SCSI_STATUS_CHECK_CONDITION &&
		  t->sense.key == SCSI_SENSE_UNIT_ATTENTION && (t->sense.ascq >> 8) == 0x29,
	      "other session sees UA 29/xx after LUN RESET (status %d key %d ascq 0x%x)",
	      t ? t->status : -1, t ? (int)t->sense.key : -1, t ? (unsigned)t->sense.ascq : 0);
	if (t)
		scsi_free_scsi_task(t);
	t = run_cdb(a, lun, scsi_cdb_testunitready(), NULL, 5000);
	CHECK(t && t->status == SCSI_STATUS_CHECK_CONDITION &&
		  t->sense.key == SCSI_SENSE_UNIT_ATTENTION && (t->sense.ascq >> 8) == 0x29,
	      "the resetting session sees UA 29/xx too (SAM-5 5.14)");
	if (t)
		scsi_free_scsi_task(t);
	t = run_cdb(a, lun, scsi_cdb_testunitready(), NULL, 5000);
	CHECK(t && t->status == SCSI_STATUS_GOOD, "the UA is reported once");
	if (t)
		scsi_free_scsi_task(t);
	bye(a);
	bye(b);
}

/* A wrong target name fails the login with 02/03, and nothing else breaks. */
static void check_bad_target(void)
{
	struct iscsi_url *u;
	struct iscsi_context *ctx = make_ctx("iqn.2026-12.org.faultlun:test-bad", &u);
	CHECK(ctx, "context");
	if (!ctx)
		return;
	iscsi_set_targetname(ctx, "iqn.2026-12.org.faultlun:no-such-target");
	CHECK(!ini_connect(ctx, u, 10000), "login to a wrong name must fail");
	const char *err = iscsi_get_error(ctx);
	CHECK(strstr(err, "not found") || strstr(err, "Not Found") || strstr(err, "0203") ||
		  strstr(err, "515"),
	      "error names target-not-found: %s", err);
	iscsi_destroy_url(u);
	iscsi_destroy_context(ctx);
	struct iscsi_context *ok = login("iqn.2026-12.org.faultlun:test-bad-after", NULL);
	CHECK(ok, "a correct login still works");
	if (ok)
		bye(ok);
}

/* Login with CHAP; ARG "bad" expects failure with the wrong secret. */
static void check_chap(const char *arg)
{
	struct iscsi_url *u;
	struct iscsi_context *ctx = make_ctx("iqn.2026-12.org.faultlun:test-chap", &u);
	CHECK(ctx, "context");
	if (!ctx)
		return;
	if (arg && !strcmp(arg, "mutual"))
		iscsi_set_target_username_pwd(ctx, getenv("FL_MUTUAL_USER"),
					      getenv("FL_MUTUAL_SECRET"));
	if (arg && !strcmp(arg, "bad"))
		iscsi_set_initiator_username_pwd(ctx, u->user, "definitely-wrong");
	bool ok = ini_connect(ctx, u, 10000);
	if (arg && !strcmp(arg, "bad")) {
		CHECK(!ok, "login with a wrong secret must fail");
		const char *err = iscsi_get_error(ctx);
		CHECK(strstr(err, "uthentication") || strstr(err, "513"),
		      "error names an authentication failure: %s", err);
	} else {
		CHECK(ok, "CHAP login (%s): %s", arg ? arg : "one-way", iscsi_get_error(ctx));
		if (ok) {
			struct scsi_task *t =
			    run_cdb(ctx, u->lun, scsi_cdb_readcapacity10(0, 0), NULL, 5000);
			CHECK(t && (t->status == SCSI_STATUS_GOOD ||
				    t->status == SCSI_STATUS_CHECK_CONDITION),
			      "I/O after CHAP");
			if (t)
				scsi_free_scsi_task(t);
		}
	}
	iscsi_destroy_url(u);
	if (ok)
		bye(ctx);
	else
		iscsi_destroy_context(ctx);
}

/* Many sessions at once, all doing I/O in parallel. */
static void check_many(void)
{
	enum { N = 40 };
	struct iscsi_context *ctx[N];
	struct op op[N], *ops[N];
	int lun = 0, n = 0;
	char name[96];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "iqn.2026-12.org.faultlun:test-many-%d", i);
		ctx[i] = login(name, &lun);
		CHECK(ctx[i], "login %d", i);
		if (!ctx[i])
			break;
		n++;
	}
	for (int i = 0; i < n; i++) {
		memset(&op[i], 0, sizeof(op[i]));
		ops[i] = &op[i];
		struct scsi_task *t =
		    scsi_cdb_read10((uint32_t)i * 64, 64 * 512, 512, 0, 0, 0, 0, 0);
		CHECK(!iscsi_scsi_command_async(ctx[i], lun, t, task_cb, NULL, &op[i]), "submit %d",
		      i);
	}
	CHECK(wait_all(ctx, n, ops, n, 20000), "all sessions answered");
	for (int i = 0; i < n; i++) {
		CHECK(op[i].done && op[i].task &&
			  (op[i].task->status == SCSI_STATUS_GOOD ||
			   op[i].task->status == SCSI_STATUS_CHECK_CONDITION),
		      "session %d status", i);
		if (op[i].done && op[i].task)
			scsi_free_scsi_task(op[i].task);
	}
	for (int i = 0; i < n; i++)
		bye(ctx[i]);
}

/* Reconnect (new connection, same ISID: session reinstatement) keeps I/O working. */
static void check_reconnect(void)
{
	int lun;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-reconnect", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	for (int i = 0; i < 3; i++) {
		CHECK(iscsi_reconnect_sync(ctx) == 0, "reconnect %d: %s", i, iscsi_get_error(ctx));
		struct scsi_task *t = run_cdb(ctx, lun, scsi_cdb_testunitready(), NULL, 5000);
		CHECK(t != NULL, "TUR after reconnect %d", i);
		if (t)
			scsi_free_scsi_task(t);
	}
	bye(ctx);
}

/*
 * Hostile and hung peers: one connection sends a malformed PDU (oversized
 * DataSegmentLength), another connects and says nothing; a healthy session
 * keeps working and the malformed one is closed by the target.
 */
static void check_hostile(void)
{
	int lun;
	struct iscsi_url *u;
	struct iscsi_context *tmp = make_ctx("iqn.2026-12.org.faultlun:test-hostile-url", &u);
	CHECK(tmp, "context");
	if (!tmp)
		return;
	char host[300];
	int port = 3260;
	snprintf(host, sizeof(host), "%s", u->portal);
	char *colon = strrchr(host, ':');
	if (colon) {
		port = atoi(colon + 1);
		*colon = 0;
	}
	iscsi_destroy_url(u);
	iscsi_destroy_context(tmp);

	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, host, &sa.sin_addr);
	int hung = socket(AF_INET, SOCK_STREAM, 0), bad = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(!connect(hung, (struct sockaddr *)&sa, sizeof(sa)), "hung connect");
	CHECK(!connect(bad, (struct sockaddr *)&sa, sizeof(sa)), "bad connect");
	unsigned char bhs[48] = {0x43, 0x87}; /* Login Request */
	bhs[5] = 0xff; /* DataSegmentLength 16 MiB - far above what the target accepts */
	bhs[6] = 0xff;
	bhs[7] = 0xff;
	CHECK(write(bad, bhs, sizeof(bhs)) == sizeof(bhs), "write bad PDU");
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-hostile", &lun);
	CHECK(ctx, "a healthy login while a peer hangs");
	if (ctx) {
		struct scsi_task *t =
		    run_cdb(ctx, lun, scsi_cdb_read10(0, 4096, 512, 0, 0, 0, 0, 0), NULL, 5000);
		CHECK(t && t->status != SCSI_STATUS_CANCELLED, "healthy I/O");
		if (t)
			scsi_free_scsi_task(t);
	}
	/* The malformed connection must be closed by the target. */
	struct pollfd pfd = {.fd = bad, .events = POLLIN};
	char buf[64];
	CHECK(poll(&pfd, 1, 5000) == 1 && read(bad, buf, sizeof(buf)) <= 0,
	      "target closes the malformed connection");
	close(bad);
	/* The silent peer is closed once the login timeout (2 s here) passes. */
	struct pollfd hp = {.fd = hung, .events = POLLIN};
	CHECK(poll(&hp, 1, 6000) == 1 && read(hung, buf, sizeof(buf)) <= 0,
	      "target closes a connection that never logs in");
	close(hung);
	if (ctx)
		bye(ctx);
}

/* Discovery: SendTargets lists this target with its portal. */
static void check_discovery(void)
{
	struct iscsi_url *u;
	struct iscsi_context *ctx = make_ctx("iqn.2026-12.org.faultlun:test-discovery", &u);
	CHECK(ctx, "context");
	if (!ctx)
		return;
	iscsi_set_session_type(ctx, ISCSI_SESSION_DISCOVERY);
	iscsi_set_targetname(ctx, "");
	int r = iscsi_connect_sync(ctx, u->portal);
	CHECK(r == 0, "connect");
	r = r ? r : iscsi_login_sync(ctx);
	CHECK(r == 0, "discovery login: %s", iscsi_get_error(ctx));
	if (r == 0) {
		struct iscsi_discovery_address *da = iscsi_discovery_sync(ctx);
		CHECK(da && !strcmp(da->target_name, u->target), "SendTargets names %s", u->target);
		if (da)
			iscsi_free_discovery_data(ctx, da);
		iscsi_logout_sync(ctx);
	}
	iscsi_destroy_url(u);
	iscsi_destroy_context(ctx);
}

/*
 * Scenario checks. "silent": a command gets no answer within ARG ms (the
 * scenario drops it or its response); then an ABORT TASK is answered and the
 * aborted command never completes.
 */
static void check_silent(const char *arg)
{
	int lun, ms = arg ? atoi(arg) : 1500;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-silent", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	struct op op = {0};
	struct scsi_task *t = scsi_cdb_read10(0, 512, 512, 0, 0, 0, 0, 0);
	CHECK(!iscsi_scsi_command_async(ctx, lun, t, task_cb, NULL, &op), "submit");
	CHECK(!wait_one(ctx, &op, ms), "no response within %d ms", ms);
	if (!op.done) {
		struct op ab = {.tmf_resp = 0xdead};
		CHECK(!iscsi_task_mgmt_async(ctx, lun, ISCSI_TM_ABORT_TASK, t->itt, t->cmdsn, op_cb,
					     &ab),
		      "abort submit");
		CHECK(wait_one(ctx, &ab, 5000) && ab.status == SCSI_STATUS_GOOD,
		      "ABORT TASK answered");
		fprintf(stderr, "ABORT TASK response %u\n", ab.tmf_resp);
	}
	bye(ctx);
	scsi_free_scsi_task(t); /* ours whether or not it completed */
}

/* "hold-abort": a held read is released by ABORT TASK (complete) and never answered. */
static void check_hold_abort(void)
{
	int lun;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-hold-abort", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	struct op op = {0};
	struct scsi_task *t = scsi_cdb_read10(8, 4096, 512, 0, 0, 0, 0, 0);
	CHECK(!iscsi_scsi_command_async(ctx, lun, t, task_cb, NULL, &op), "submit");
	CHECK(!wait_one(ctx, &op, 1000), "the held read is not answered");
	struct op ab = {.tmf_resp = 0xdead};
	CHECK(!iscsi_task_mgmt_async(ctx, lun, ISCSI_TM_ABORT_TASK, t->itt, t->cmdsn, op_cb, &ab),
	      "abort submit");
	/* libiscsi cancels the task locally when the abort completes. */
	CHECK(wait_one(ctx, &ab, 5000) && ab.status == SCSI_STATUS_GOOD, "ABORT TASK answered");
	CHECK(ab.tmf_resp == ISCSI_TMR_FUNC_COMPLETE, "ABORT TASK response %u", ab.tmf_resp);
	CHECK(!op.done || op.status == SCSI_STATUS_CANCELLED,
	      "the aborted read got no SCSI response (status %d)", op.status);
	/* The session is still usable: a TEST UNIT READY is answered. */
	struct scsi_task *tur = run_cdb(ctx, lun, scsi_cdb_testunitready(), NULL, 5000);
	CHECK(tur != NULL, "TUR after the abort");
	if (tur)
		scsi_free_scsi_task(tur);
	bye(ctx);
	scsi_free_scsi_task(t);
}

/* "closed-on-write": the target closes the connection during Data-Out. */
static void check_closed_on_write(void)
{
	int lun;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-closed", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	iscsi_set_noautoreconnect(ctx, 1);
	size_t len = 512 * 1024;
	unsigned char *buf = calloc(1, len);
	struct iscsi_data d = {.size = len, .data = buf};
	struct op op = {0};
	struct scsi_task *t = scsi_cdb_write10(0, (uint32_t)len, 512, 0, 0, 0, 0, 0);
	CHECK(!iscsi_scsi_command_async(ctx, lun, t, task_cb, &d, &op), "submit");
	bool done = wait_one(ctx, &op, 5000);
	CHECK(done && op.status != SCSI_STATUS_GOOD, "the write fails (status %d)", op.status);
	CHECK(!iscsi_is_logged_in(ctx) || op.status != SCSI_STATUS_GOOD, "session lost");
	free(buf);
	iscsi_destroy_context(ctx);
	scsi_free_scsi_task(t);
}

/* "slow-read MS": a read takes at least MS ms (delayed Data-In). */
static void check_slow_read(const char *arg)
{
	int lun, ms = arg ? atoi(arg) : 400;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-slow", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	/* The first command reports the power-on unit attention (no data). */
	struct scsi_task *t = run_cdb(ctx, lun, scsi_cdb_testunitready(), NULL, 5000);
	if (t)
		scsi_free_scsi_task(t);
	int64_t t0 = ini_now_ms();
	t = run_cdb(ctx, lun, scsi_cdb_read10(0, 4096, 512, 0, 0, 0, 0, 0), NULL, ms + 5000);
	int64_t took = ini_now_ms() - t0;
	CHECK(t && t->status == SCSI_STATUS_GOOD && t->datain.size == 4096, "read answered");
	CHECK(took >= ms, "read took %lld ms, expected at least %d", (long long)took, ms);
	if (t)
		scsi_free_scsi_task(t);
	bye(ctx);
}

/* "stall MS": after MS ms the window closes; a command then gets no answer. */
static void check_stall(const char *arg)
{
	int lun, ms = arg ? atoi(arg) : 1500;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-stall", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	struct op idle = {0};
	wait_one(ctx, &idle, ms); /* keep servicing: the window update arrives */
	struct op op = {0};
	struct scsi_task *t = scsi_cdb_testunitready();
	CHECK(!iscsi_scsi_command_async(ctx, lun, t, task_cb, NULL, &op), "submit");
	CHECK(!wait_one(ctx, &op, 1500), "no answer while MaxCmdSN is stalled");
	iscsi_destroy_context(ctx);
	scsi_free_scsi_task(t);
}

/* "tmf-late FN MS": a TMF is answered no earlier than MS ms (or never when MS < 0). */
static void check_tmf_answer(const char *arg)
{
	int lun;
	char fn_s[32] = "lun_reset";
	int ms = 0;
	uint32_t want = 0;
	if (arg)
		sscanf(arg, "%31[^:]:%d:%u", fn_s, &ms, &want);
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-tmf-answer", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	enum iscsi_task_mgmt_funcs fn = !strcmp(fn_s, "abort_task_set") ? ISCSI_TM_ABORT_TASK_SET
					: !strcmp(fn_s, "target_warm_reset")
					    ? ISCSI_TM_TARGET_WARM_RESET
					    : ISCSI_TM_LUN_RESET;
	struct op op = {.tmf_resp = 0xdead};
	int64_t t0 = ini_now_ms();
	CHECK(!iscsi_task_mgmt_async(ctx, lun, fn, 0xffffffff, 0, op_cb, &op), "submit");
	if (ms < 0) {
		CHECK(!wait_one(ctx, &op, -ms), "%s never answered within %d ms", fn_s, -ms);
	} else {
		CHECK(wait_one(ctx, &op, ms + 5000), "%s answered", fn_s);
		int64_t took = ini_now_ms() - t0;
		CHECK(took >= ms, "%s answered after %lld ms, not before %d", fn_s, (long long)took,
		      ms);
		CHECK(op.tmf_resp == want, "%s response %u, expected %u", fn_s, op.tmf_resp, want);
	}
	iscsi_destroy_context(ctx);
}

/* "tmf-drop": the target answers a LUN RESET by dropping the connection. */
static void check_tmf_drop(void)
{
	int lun;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-tmf-drop", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	iscsi_set_noautoreconnect(ctx, 1);
	struct op op = {.tmf_resp = 0xdead};
	CHECK(!iscsi_task_mgmt_async(ctx, lun, ISCSI_TM_LUN_RESET, 0xffffffff, 0, op_cb, &op),
	      "submit");
	wait_one(ctx, &op, 3000);
	CHECK(op.tmf_resp == 0xdead, "no TMF response (got %u)", op.tmf_resp);
	/* The socket is gone: servicing reports the loss (or logs us out). */
	struct pollfd pfd = {.fd = iscsi_get_fd(ctx), .events = POLLIN};
	int r = poll(&pfd, 1, 100);
	CHECK(r == 1 || !iscsi_is_logged_in(ctx), "connection dropped");
	iscsi_destroy_context(ctx);
}

/* "short-read": an 8-block read delivers 2 blocks with an underflow residual of 6. */
static void check_short_read(void)
{
	int lun;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-short", &lun);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	struct scsi_task *t = run_cdb(ctx, lun, scsi_cdb_testunitready(), NULL, 5000);
	if (t)
		scsi_free_scsi_task(t);
	t = run_cdb(ctx, lun, scsi_cdb_read10(0, 4096, 512, 0, 0, 0, 0, 0), NULL, 5000);
	CHECK(t && t->status == SCSI_STATUS_GOOD, "short read status %d", t ? t->status : -1);
	if (t) {
		CHECK(t->datain.size == 1024, "delivered %d bytes, expected 1024", t->datain.size);
		CHECK(t->residual_status == SCSI_RESIDUAL_UNDERFLOW && t->residual == 3072,
		      "residual %d/%zu, expected underflow 3072", t->residual_status, t->residual);
		scsi_free_scsi_task(t);
	}
	bye(ctx);
}

/* "nop-ignored MS": pings go unanswered. */
static void check_nop_ignored(const char *arg)
{
	int ms = arg ? atoi(arg) : 1500;
	struct iscsi_context *ctx = login("iqn.2026-12.org.faultlun:test-nop-ignored", NULL);
	CHECK(ctx, "login");
	if (!ctx)
		return;
	struct op op = {.nop_len = -1};
	CHECK(!iscsi_nop_out_async(ctx, op_cb, (unsigned char *)"x", 1, &op), "nop submit");
	CHECK(!wait_one(ctx, &op, ms), "NOP-Out not answered within %d ms", ms);
	iscsi_destroy_context(ctx);
}

/* Runs the CHECK named on the command line. */
int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s URL CHECK [ARG]\n", argv[0]);
		return 2;
	}
	url_s = argv[1];
	const char *check = argv[2], *arg = argc > 3 ? argv[3] : NULL;
	static const struct {
		const char *name;
		void (*fn)(void);
		void (*fn_arg)(const char *arg); /* a check that takes ARG */
	} checks[] = {
	    {"inquiry", check_inquiry, NULL},
	    {"readwrite", check_readwrite, NULL},
	    {"nop", check_nop, NULL},
	    {"tmf", check_tmf, NULL},
	    {"bad-target", check_bad_target, NULL},
	    {"many", check_many, NULL},
	    {"reconnect", check_reconnect, NULL},
	    {"hostile", check_hostile, NULL},
	    {"discovery", check_discovery, NULL},
	    {"hold-abort", check_hold_abort, NULL},
	    {"closed-on-write", check_closed_on_write, NULL},
	    {"tmf-drop", check_tmf_drop, NULL},
	    {"short-read", check_short_read, NULL},
	    {"chap", NULL, check_chap},
	    {"silent", NULL, check_silent},
	    {"tmf-answer", NULL, check_tmf_answer},
	    {"stall", NULL, check_stall},
	    {"slow-read", NULL, check_slow_read},
	    {"nop-ignored", NULL, check_nop_ignored},
	};
	bool found = false;
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (!strcmp(check, checks[i].name)) {
			if (checks[i].fn)
				checks[i].fn();
			else
				checks[i].fn_arg(arg);
			found = true;
		}
	if (!found) {
		fprintf(stderr, "unknown check %s\n", check);
		return 2;
	}
	if (!fl_failures)
		printf("%s: ok\n", check);
	return fl_test_exit(check);
}
