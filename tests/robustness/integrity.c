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
 */
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BS 512
#define NBLK 32
#define MAXMAYBE 64

static const char *url_s;
static int lun;
static int timeout_s = 1; /* short while faults drop answers; long to verify */

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
	lun = u->lun;
	int r = iscsi_full_connect_sync(ctx, u->portal, u->lun);
	iscsi_destroy_url(u);
	if (r != 0) {
		iscsi_destroy_context(ctx);
		return NULL;
	}
	return ctx;
}

/* Connects, retrying for a while (the target may be closing the old session). */
static struct iscsi_context *reconnect(void)
{
	for (int i = 0; i < 50; i++) {
		struct iscsi_context *ctx = connect_ctx();
		if (ctx)
			return ctx;
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* The write phase. */
static int do_write(const char *journal, unsigned count, unsigned seed)
{
	FILE *j = fopen(journal, "w");
	struct iscsi_context *ctx = reconnect();
	if (!j || !ctx) {
		fprintf(stderr, "cannot open the journal or log in\n");
		return 1;
	}
	struct scsi_task *t = iscsi_readcapacity16_sync(ctx, lun);
	struct scsi_readcapacity16 *rc = t ? scsi_datain_unmarshall(t) : NULL;
	if (!rc || rc->block_length != BS) {
		fprintf(stderr, "READ CAPACITY(16) failed or not 512-byte blocks\n");
		return 1;
	}
	uint32_t nblocks = (uint32_t)(rc->returned_lba + 1);
	scsi_free_scsi_task(t);
	static uint8_t buf[NBLK * BS];
	unsigned good = 0, maybe = 0, resets = 0;
	srand(seed);
	for (uint32_t gen = 1; gen <= count; gen++) {
		uint32_t lba = (uint32_t)rand() % (nblocks - NBLK + 1);
		for (int k = 0; k < NBLK; k++)
			pattern(buf + k * BS, lba + (uint32_t)k, gen);
		t = iscsi_write10_sync(ctx, lun, lba, buf, sizeof(buf), BS, 0, 0, 0, 0, 0);
		bool ok = t && t->status == SCSI_STATUS_GOOD;
		if (t)
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
		ctx = reconnect();
		if (!ctx) {
			fprintf(stderr, "cannot log in again after write %u\n", gen);
			return 1;
		}
		if (iscsi_task_mgmt_lun_reset_sync(ctx, (uint32_t)lun) == 0) {
			fprintf(j, "R\n");
			fflush(j);
			resets++;
		}
		/* Clear the reset's unit attention. */
		t = iscsi_testunitready_sync(ctx, lun);
		if (t)
			scsi_free_scsi_task(t);
	}
	iscsi_logout_sync(ctx);
	iscsi_destroy_context(ctx);
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
	FILE *j = fopen(journal, "r");
	struct iscsi_context *ctx = reconnect();
	if (!j || !ctx) {
		fprintf(stderr, "cannot open the journal or log in\n");
		return 1;
	}
	struct scsi_task *t = iscsi_readcapacity16_sync(ctx, lun);
	struct scsi_readcapacity16 *rc = t ? scsi_datain_unmarshall(t) : NULL;
	if (!rc) {
		fprintf(stderr, "READ CAPACITY(16) failed\n");
		return 1;
	}
	uint32_t nblocks = (uint32_t)(rc->returned_lba + 1);
	scsi_free_scsi_task(t);
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
	for (uint32_t i = 0; i < nblocks; i++) {
		if (!b[i].good && !b[i].nmaybe)
			continue;
		t = iscsi_read10_sync(ctx, lun, i, BS, BS, 0, 0, 0, 0, 0);
		if (!t || t->status != SCSI_STATUS_GOOD || t->datain.size != BS) {
			fprintf(stderr, "FAIL: READ(10) of LBA %u: status %d sense %x/%04x: %s\n",
				i, t ? t->status : -1, t ? t->sense.key : 0, t ? t->sense.ascq : 0,
				iscsi_get_error(ctx));
			bad++;
			if (t)
				scsi_free_scsi_task(t);
			continue;
		}
		const uint8_t *got = t->datain.data;
		bool ok = false;
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
	iscsi_logout_sync(ctx);
	iscsi_destroy_context(ctx);
	free(b);
	fprintf(stderr, "%u journal lines, %u blocks checked, %u bad\n", lines, checked, bad);
	return bad || checked == 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && !strcmp(argv[1], "write")) {
		url_s = argv[3];
		return do_write(argv[2], (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]));
	}
	if (argc >= 4 && !strcmp(argv[1], "verify")) {
		url_s = argv[3];
		timeout_s = 15;
		return do_verify(argv[2]);
	}
	fprintf(stderr, "usage: integrity write JOURNAL URL COUNT SEED | verify JOURNAL URL\n");
	return 2;
}
