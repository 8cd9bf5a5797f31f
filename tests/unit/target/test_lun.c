/* SPDX-License-Identifier: MIT */
/*
 * test_lun.c - the LUN life cycle and state of the core: unit attentions per
 * I_T nexus and their order, LUN reset, nexus loss, resize, power loss with
 * the write cache, fl_lun_set_sense, and random CDBs from random nexuses.
 */
#include "runner.h"
#include "target_internal.h"
#include "tharness.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CC FL_STATUS_CHECK_CONDITION
#define UA FL_KEY_UNIT_ATTENTION

static const uint8_t tur[6] = {0};

/* xorshift32 on a local `x`: deterministic pseudo-random numbers. */
#define RND() (x ^= x << 13, x ^= x >> 17, x ^= x << 5, x)

/* Runs TUR from `nexus` and checks the expected UA (asc 0: GOOD). */
static void expect_tur(struct fl_lun *lun, uint64_t nexus, uint8_t asc, uint8_t ascq,
		       const char *what)
{
	struct fl_cmd res;

	if (th_run(lun, nexus, tur, 6, NULL, 0, NULL, 0, &res))
		return;
	if (asc)
		TH_EXPECT(&res, CC, UA, asc, ascq, what);
	else
		TH_EXPECT_GOOD(&res, what);
}

/* The first command of every new nexus reports 29/00, once. */
static void test_new_nexus_sees_power_on(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t cdb[10], buf[512];
	struct fl_cmd res;

	th_cdb10(cdb, 0x28, 0, 0, 1);
	th_run(lun, 7, cdb, 10, NULL, 0, buf, 512, &res);
	TH_EXPECT(&res, CC, UA, 0x29, 0x00, "first READ(10) of nexus 7");
	CU_ASSERT_EQUAL(res.data_in_len, 0);
	th_run(lun, 7, cdb, 10, NULL, 0, buf, 512, &res);
	TH_EXPECT_GOOD(&res, "second READ(10) of nexus 7");
	expect_tur(lun, 8, 0x29, 0x00, "first TUR of nexus 8");
	expect_tur(lun, 8, 0, 0, "second TUR of nexus 8");
	/* an unsupported opcode reports the pending UA first too */
	cdb[0] = 0xc1;
	th_run(lun, 9, cdb, 10, NULL, 0, NULL, 0, &res);
	TH_EXPECT(&res, CC, UA, 0x29, 0x00, "unknown opcode from a new nexus");
	th_run(lun, 9, cdb, 10, NULL, 0, NULL, 0, &res);
	TH_EXPECT(&res, CC, FL_KEY_ILLEGAL_REQUEST, 0x20, 0x00, "unknown opcode after the UA");
	fl_lun_destroy(lun);
}

/* INQUIRY, REPORT LUNS and REQUEST SENSE leave a pending UA in place. */
static void test_no_ua_commands_do_not_consume(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	uint8_t rl[12] = {0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
	uint8_t buf[256];
	struct th_sense s;
	struct fl_cmd res;

	th_run(lun, 1, inq, 6, NULL, 0, buf, sizeof(buf), &res);
	th_parse_sense(res.sense, res.sense_len, &s);
	TH_CHECK(s.key != UA, "INQUIRY reported a UA");
	th_run(lun, 1, rl, 12, NULL, 0, buf, sizeof(buf), &res);
	TH_EXPECT_GOOD(&res, "REPORT LUNS with a UA pending");
	CU_ASSERT_EQUAL(fl_get_be32(buf), 8);
	expect_tur(lun, 1, 0x29, 0x00, "UA still pending after INQUIRY and REPORT LUNS");
	expect_tur(lun, 1, 0, 0, "then GOOD");
	fl_lun_destroy(lun);
}

/* One step of a unit attention script (nexus as given): clear its UAs, queue asc/ascq for it,
 * reset the LUN from it with asc/ascq, or TUR from it expecting asc/ascq (asc 0: GOOD). */
struct ua_step {
	enum { UA_CLEAR, UA_QUEUE, UA_RESET, UA_TUR } op;
	uint64_t nexus;
	uint8_t asc, ascq;
	const char *what;
};

/* Runs the steps in order on a new LUN, then destroys it. */
static void run_ua_script(const struct ua_step *steps, size_t n)
{
	struct fl_lun *lun = th_lun(NULL);

	for (size_t i = 0; i < n; i++) {
		const struct ua_step *st = &steps[i];

		if (st->op == UA_CLEAR)
			th_clear_ua(lun, st->nexus);
		else if (st->op == UA_QUEUE)
			fl_lun_queue_ua(lun, st->nexus, st->asc, st->ascq);
		else if (st->op == UA_RESET)
			fl_lun_reset(lun, st->nexus, st->asc, st->ascq);
		else
			expect_tur(lun, st->nexus, st->asc, st->ascq, st->what);
	}
	fl_lun_destroy(lun);
}

/* Order: 29/01 before 29/00 before the rest (FIFO); a reset supersedes. */
static void test_ua_precedence_order(void)
{
	static const struct ua_step steps[] = {
	    {UA_CLEAR, 1, 0, 0, NULL},
	    {UA_QUEUE, 1, 0x2a, 0x09, NULL},
	    {UA_QUEUE, 1, 0x3f, 0x0e, NULL},
	    {UA_QUEUE, 1, 0x2a, 0x09, NULL}, /* duplicate: reported once */
	    {UA_QUEUE, 1, 0x2a, 0x01, NULL},
	    {UA_TUR, 1, 0x2a, 0x09, "first queued"},
	    {UA_TUR, 1, 0x3f, 0x0e, "second queued"},
	    {UA_TUR, 1, 0x2a, 0x01, "third queued"},
	    {UA_TUR, 1, 0, 0, "all delivered"},
	    /* a reset condition supersedes lower-precedence ones */
	    {UA_QUEUE, 1, 0x2a, 0x09, NULL},
	    {UA_RESET, 99, 0x29, 0x00, NULL},
	    {UA_TUR, 1, 0x29, 0x00, "reset first"},
	    {UA_TUR, 1, 0, 0, "capacity change superseded by the reset"},
	    /* power on (29/01) outranks 29/00 and is reported before it */
	    {UA_QUEUE, 1, 0x29, 0x00, NULL},
	    {UA_QUEUE, 1, 0x29, 0x01, NULL},
	    {UA_TUR, 1, 0x29, 0x01, "29/01 first"},
	    {UA_TUR, 1, 0, 0, "29/00 superseded by 29/01"},
	    /* a later lower-precedence UA queues behind a pending reset */
	    {UA_QUEUE, 1, 0x29, 0x00, NULL},
	    {UA_QUEUE, 1, 0x2a, 0x06, NULL},
	    {UA_TUR, 1, 0x29, 0x00, "reset before ALUA change"},
	    {UA_TUR, 1, 0x2a, 0x06, "ALUA change after"},
	    {UA_TUR, 1, 0, 0, "empty"},
	};

	run_ua_script(steps, sizeof(steps) / sizeof(steps[0]));
}

/* More UAs than the queue holds: the most important ones survive. */
static void test_ua_queue_overflow(void)
{
	struct fl_lun *lun = th_lun(NULL);

	th_clear_ua(lun, 1);
	for (unsigned i = 0; i < 40; i++)
		fl_lun_queue_ua(lun, 1, 0x3f, (uint8_t)(0x10 + i));
	fl_lun_queue_ua(lun, 1, 0x29, 0x01);
	expect_tur(lun, 1, 0x29, 0x01, "power on survives a full queue");
	expect_tur(lun, 1, 0, 0, "and superseded the rest");
	for (unsigned i = 0; i < 40; i++)
		fl_lun_queue_ua(lun, 1, 0x3f, (uint8_t)(0x10 + i));
	for (unsigned i = 0; i < UA_QUEUE_MAX; i++)
		expect_tur(lun, 1, 0x3f, (uint8_t)(0x10 + i), "queued in order");
	expect_tur(lun, 1, 0, 0, "the overflow was dropped");
	fl_lun_destroy(lun);
}

/* UAs are per nexus; a LUN reset spares the nexus that asked for it. */
static void test_ua_per_nexus_and_reset(void)
{
	static const struct ua_step steps[] = {
	    {UA_CLEAR, 1, 0, 0, NULL},
	    {UA_CLEAR, 2, 0, 0, NULL},
	    {UA_CLEAR, 3, 0, 0, NULL},
	    {UA_QUEUE, 2, 0x2a, 0x01, NULL},
	    {UA_TUR, 1, 0, 0, "nexus 1 has nothing"},
	    {UA_TUR, 3, 0, 0, "nexus 3 has nothing"},
	    {UA_TUR, 2, 0x2a, 0x01, "nexus 2 has its own"},
	    {UA_RESET, 1, 0x29, 0x00, NULL},
	    {UA_TUR, 1, 0, 0, "the resetting nexus gets no UA"},
	    {UA_TUR, 2, 0x29, 0x00, "nexus 2 hears the reset"},
	    {UA_TUR, 3, 0x29, 0x00, "nexus 3 hears the reset"},
	    {UA_RESET, FL_ALL_NEXUS, 0x29, 0x00, NULL},
	    {UA_TUR, 1, 0x29, 0x00, "FL_ALL_NEXUS: the resetting nexus hears it too"},
	    {UA_TUR, 2, 0x29, 0x00, "FL_ALL_NEXUS: nexus 2"},
	    {UA_CLEAR, 3, 0, 0, NULL},
	    {UA_QUEUE, FL_ALL_NEXUS, 0x3f, 0x03, NULL},
	    {UA_TUR, 1, 0x3f, 0x03, "queued for all: nexus 1"},
	    {UA_TUR, 3, 0x3f, 0x03, "queued for all: nexus 3"},
	};

	run_ua_script(steps, sizeof(steps) / sizeof(steps[0]));
}

/* A nexus that went away starts over with 29/00. */
static void test_nexus_gone(void)
{
	struct fl_lun *lun = th_lun(NULL);

	th_clear_ua(lun, 4);
	fl_lun_queue_ua(lun, 4, 0x2a, 0x09);
	fl_lun_nexus_gone(lun, 4);
	expect_tur(lun, 4, 0x29, 0x00, "back as a new nexus");
	expect_tur(lun, 4, 0, 0, "the old queue is gone");
	fl_lun_nexus_gone(lun, 12345); /* unknown: harmless */
	/* an SPC-2 reservation goes with the nexus that held it */
	lun->pr.legacy_reserved = true;
	lun->pr.legacy_holder = 5;
	fl_lun_nexus_gone(lun, 6);
	CU_ASSERT_TRUE(lun->pr.legacy_reserved);
	fl_lun_nexus_gone(lun, 5);
	CU_ASSERT_FALSE(lun->pr.legacy_reserved);
	fl_lun_destroy(lun);
}

/* Resize: UA 2A/09, the new capacity applies to reads and READ CAPACITY. */
static void test_resize_capacity_changed(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t cdb[16], buf[512], w[512];
	struct fl_lun_info info;
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(w, sizeof(w), 3);
	CU_ASSERT_EQUAL(th_write(lun, 1, 100, 1, w), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(fl_lun_resize(lun, 2 * TH_BLOCKS), 0);
	fl_lun_get_info(lun, &info);
	CU_ASSERT_EQUAL(info.num_blocks, 2 * TH_BLOCKS);
	th_cdb16(cdb, 0x88, 0, 2 * TH_BLOCKS - 1, 1);
	th_run(lun, 1, cdb, 16, NULL, 0, buf, 512, &res);
	TH_EXPECT(&res, CC, UA, 0x2a, 0x09, "UA after resize");
	th_run(lun, 1, cdb, 16, NULL, 0, buf, 512, &res);
	TH_EXPECT_GOOD(&res, "READ(16) of the new last block");
	th_cdb16(cdb, 0x9e, 0x10, 0, 32);
	th_run(lun, 1, cdb, 16, NULL, 0, buf, 32, &res);
	CU_ASSERT_EQUAL(fl_get_be64(buf), 2 * TH_BLOCKS - 1);
	CU_ASSERT_EQUAL(fl_lun_resize(lun, 50), 0);
	expect_tur(lun, 1, 0x2a, 0x09, "UA after shrinking");
	th_cdb16(cdb, 0x88, 0, 50, 1);
	th_run(lun, 1, cdb, 16, NULL, 0, buf, 512, &res);
	TH_EXPECT(&res, CC, FL_KEY_ILLEGAL_REQUEST, 0x21, 0, "READ(16) past the shrunk end");
	CU_ASSERT_EQUAL(fl_lun_resize(lun, TH_BLOCKS), 0);
	th_clear_ua(lun, 1);
	CU_ASSERT_EQUAL(th_read(lun, 1, 100, 1, buf), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(buf[0] | buf[1] | buf[511], 0); /* cut off, reads zero again */
	CU_ASSERT_EQUAL(fl_lun_resize(lun, 0), -EINVAL);
	fl_lun_destroy(lun);
}

/* Collects lost LBAs. */
static void on_lost(uint64_t lba, void *ctx)
{
	fl_collect_add(ctx, lba);
}

/* Power loss with WCE=1: unsynced writes vanish, synced and FUA ones stay. */
static void test_power_loss_discards_unsynced(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t a[4 * 512], b[4 * 512], r[4 * 512], cdb[16];
	struct fl_collect lost = {0};
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_clear_ua(lun, 2);
	th_pattern(a, sizeof(a), 31);
	th_pattern(b, sizeof(b), 32);
	CU_ASSERT_EQUAL(th_write(lun, 1, 20, 4, a), FL_STATUS_GOOD);
	TH_SYNC_CACHE(lun, 1, 0, 0, "SYNCHRONIZE CACHE");
	CU_ASSERT_EQUAL(th_write(lun, 1, 22, 4, b), FL_STATUS_GOOD); /* 22..25, cached */
	CU_ASSERT_EQUAL(th_write(lun, 2, 9, 1, b), FL_STATUS_GOOD);  /* 9, cached */
	th_cdb16(cdb, 0x8a, 0x08, 40, 1);			     /* 40, FUA */
	th_run(lun, 1, cdb, 16, b, 512, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "WRITE(16) FUA");
	CU_ASSERT_EQUAL(fl_lun_power_loss(lun, on_lost, &lost), 5);
	CU_ASSERT_EQUAL(lost.n, 5);
	CU_ASSERT(lost.v[0] == 9 && lost.v[1] == 22 && lost.v[2] == 23 && lost.v[3] == 24 &&
		  lost.v[4] == 25);
	expect_tur(lun, 1, 0x29, 0x01, "POWER ON OCCURRED for nexus 1");
	expect_tur(lun, 2, 0x29, 0x01, "POWER ON OCCURRED for nexus 2");
	CU_ASSERT_EQUAL(th_read(lun, 1, 20, 4, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, a, sizeof(a)) == 0); /* previous contents are back */
	CU_ASSERT_EQUAL(th_read(lun, 1, 9, 1, r), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(r[0] | r[1] | r[511], 0);
	CU_ASSERT_EQUAL(th_read(lun, 1, 40, 1, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, b, 512) == 0); /* FUA data survived */
	/* nothing left to lose */
	CU_ASSERT_EQUAL(fl_lun_power_loss(lun, NULL, NULL), 0);
	fl_lun_destroy(lun);
}

/* Overwriting a block twice before power loss restores the first contents. */
static void test_power_loss_restores_oldest(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t a[512], b[512], c[512], r[512], cdb[10];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(a, 512, 1);
	th_pattern(b, 512, 2);
	th_pattern(c, 512, 3);
	th_cdb10(cdb, 0x2a, 0x08, 5, 1);
	th_run(lun, 1, cdb, 10, a, 512, NULL, 0, &res);
	CU_ASSERT_EQUAL(th_write(lun, 1, 5, 1, b), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(th_write(lun, 1, 5, 1, c), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(fl_lun_power_loss(lun, NULL, NULL), 1);
	th_clear_ua(lun, 1);
	CU_ASSERT_EQUAL(th_read(lun, 1, 5, 1, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, a, 512) == 0);
	fl_lun_destroy(lun);
}

struct loss_model {
	uint8_t cur[256], durable[256];
	bool dirty[256];
	unsigned lost_wrong;
};

/* Checks that every lost LBA was dirty in the model. */
static void model_lost(uint64_t lba, void *ctx)
{
	struct loss_model *m = ctx;

	if (lba >= 256 || !m->dirty[lba])
		m->lost_wrong++;
}

/* Random writes, FUA writes, UNMAPs and syncs against a model of the cache. */
static void test_power_loss_model(void)
{
	struct fl_lun_config cfg;
	struct loss_model m;
	struct fl_lun *lun;
	uint8_t buf[16 * 512], cdb[16], param[24];
	uint32_t x = 4242;
	struct fl_cmd res;

	memset(&m, 0, sizeof(m));
	th_config(&cfg);
	cfg.num_blocks = 256;
	cfg.thin = true;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	for (int op = 0; op < 4000; op++) {
		uint32_t lba = RND() % 256, n = 1 + RND() % 16, kind = RND() % 10;
		uint8_t val = (uint8_t)(1 + RND() % 250);

		if (lba + n > 256)
			n = 256 - lba;
		if (kind < 5) { /* write, FUA one time in three */
			bool fua = kind < 2;

			memset(buf, val, n * 512);
			th_cdb16(cdb, 0x8a, fua ? 0x08 : 0, lba, n);
			th_run(lun, 1, cdb, 16, buf, n * 512, NULL, 0, &res);
			for (uint32_t b = lba; b < lba + n; b++) {
				m.cur[b] = val;
				if (fua)
					m.durable[b] = val;
				m.dirty[b] = !fua;
			}
		} else if (kind < 7) { /* UNMAP (cached like a write) */
			memset(param, 0, sizeof(param));
			param[1] = 22;
			param[3] = 16;
			param[8 + 6] = (uint8_t)(lba >> 8);
			param[8 + 7] = (uint8_t)lba;
			param[8 + 11] = (uint8_t)n;
			th_cdb10(cdb, 0x42, 0, 0, 24);
			th_run(lun, 1, cdb, 10, param, 24, NULL, 0, &res);
			for (uint32_t b = lba; b < lba + n; b++) {
				m.cur[b] = 0;
				m.dirty[b] = true;
			}
		} else if (kind < 9) { /* SYNCHRONIZE CACHE of a range */
			th_cdb16(cdb, 0x91, 0, lba, n);
			th_run(lun, 1, cdb, 16, NULL, 0, NULL, 0, &res);
			for (uint32_t b = lba; b < lba + n; b++) {
				m.durable[b] = m.cur[b];
				m.dirty[b] = false;
			}
		} else { /* power loss */
			unsigned want = 0;
			uint64_t got;

			for (int b = 0; b < 256; b++)
				want += m.dirty[b];
			got = fl_lun_power_loss(lun, model_lost, &m);
			TH_CHECK(got == want, "op %d: %llu blocks lost, model says %u", op,
				 (unsigned long long)got, want);
			memcpy(m.cur, m.durable, sizeof(m.cur));
			memset(m.dirty, 0, sizeof(m.dirty));
			th_clear_ua(lun, 1);
		}
		if (res.status != FL_STATUS_GOOD) {
			TH_CHECK(false, "op %d kind %u: status %02x", op, kind, res.status);
			break;
		}
		res.status = FL_STATUS_GOOD;
	}
	CU_ASSERT_EQUAL(m.lost_wrong, 0);
	for (uint32_t b = 0; b < 256; b += 16) {
		CU_ASSERT_EQUAL(th_read(lun, 1, b, 16, buf), FL_STATUS_GOOD);
		for (uint32_t i = 0; i < 16; i++)
			TH_CHECK(buf[i * 512] == m.cur[b + i] && buf[i * 512 + 511] == m.cur[b + i],
				 "block %u holds %u, model %u", b + i, buf[i * 512], m.cur[b + i]);
	}
	fl_lun_destroy(lun);
}

/* With WCE=0 a power loss loses nothing. */
static void test_power_loss_write_through(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t b[512], r[512];

	th_config(&cfg);
	cfg.write_cache = false;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	th_pattern(b, 512, 8);
	CU_ASSERT_EQUAL(th_write(lun, 1, 3, 1, b), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(fl_lun_power_loss(lun, NULL, NULL), 0);
	th_clear_ua(lun, 1);
	CU_ASSERT_EQUAL(th_read(lun, 1, 3, 1, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, b, 512) == 0);
	fl_lun_destroy(lun);
}

/* Every supported block size: write, read back, lose the unsynced block. */
static void test_block_sizes(void)
{
	static const uint32_t sizes[] = {512, 1024, 4096, 65536};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t bs = sizes[i];
		uint8_t *a = malloc(2 * bs), *b = malloc(2 * bs), *r = malloc(2 * bs), cdb[16];
		struct fl_lun_config cfg;
		struct fl_lun_info info;
		struct fl_lun *lun;
		struct fl_cmd res;

		th_config(&cfg);
		cfg.block_size = bs;
		cfg.num_blocks = 64;
		cfg.thin = true;
		lun = th_lun(&cfg);
		th_clear_ua(lun, 1);
		th_pattern(a, 2 * bs, bs);
		th_pattern(b, 2 * bs, bs + 1);
		th_cdb16(cdb, 0x8a, 0x08, 62, 2);
		th_run(lun, 1, cdb, 16, a, 2 * bs, NULL, 0, &res);
		TH_EXPECT_GOOD(&res, "WRITE(16) FUA of the last two blocks");
		CU_ASSERT_EQUAL(th_write(lun, 1, 63, 1, b), FL_STATUS_GOOD);
		CU_ASSERT_EQUAL(th_read(lun, 1, 62, 2, r), FL_STATUS_GOOD);
		CU_ASSERT(memcmp(r, a, bs) == 0 && memcmp(r + bs, b, bs) == 0);
		th_cdb16(cdb, 0x88, 0, 63, 2);
		th_run(lun, 1, cdb, 16, NULL, 0, r, 2 * bs, &res);
		TH_EXPECT(&res, CC, FL_KEY_ILLEGAL_REQUEST, 0x21, 0, "READ(16) past the end");
		CU_ASSERT_EQUAL(fl_lun_power_loss(lun, NULL, NULL), 1);
		th_clear_ua(lun, 1);
		CU_ASSERT_EQUAL(th_read(lun, 1, 62, 2, r), FL_STATUS_GOOD);
		TH_CHECK(memcmp(r, a, 2 * bs) == 0, "block size %u: FUA data after power loss", bs);
		fl_lun_get_info(lun, &info);
		CU_ASSERT(info.block_size == bs && info.mapped_blocks == 2);
		fl_lun_destroy(lun);
		free(a);
		free(b);
		free(r);
	}
}

/* fl_lun_set_sense uses the LUN's sense format and INFORMATION. */
static void test_set_sense_formats(void)
{
	struct fl_lun *lun;
	struct fl_cmd cmd;
	struct th_sense s;

	for (int d = 0; d < 2; d++) {
		lun = th_lun_sense(d);
		memset(&cmd, 0, sizeof(cmd));
		fl_lun_set_sense(lun, &cmd, FL_KEY_MEDIUM_ERROR, 0x11, 0x00, true, 0x1234567);
		CU_ASSERT_EQUAL(cmd.status, FL_STATUS_CHECK_CONDITION);
		th_parse_sense(cmd.sense, cmd.sense_len, &s);
		CU_ASSERT(s.valid && s.descriptor == d && s.key == FL_KEY_MEDIUM_ERROR &&
			  s.asc == 0x11 && s.info_valid && s.info == 0x1234567);
		fl_lun_set_sense(lun, &cmd, FL_KEY_DATA_PROTECT, 0x27, 0x07, false, 0);
		th_parse_sense(cmd.sense, cmd.sense_len, &s);
		CU_ASSERT(s.key == FL_KEY_DATA_PROTECT && s.asc == 0x27 && s.ascq == 7 &&
			  !s.info_valid);
		/* core-built sense follows the same format */
		expect_tur(lun, 1, 0x29, 0x00, "UA in the LUN's format");
		fl_lun_destroy(lun);
	}
}

/* Bad configurations are refused with -EINVAL. */
static void test_create_bad_config(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun = (struct fl_lun *)1;

	th_config(&cfg);
	cfg.block_size = 520;
	CU_ASSERT_EQUAL(fl_lun_create(&cfg, &lun), -EINVAL);
	CU_ASSERT_PTR_NULL(lun);
	th_config(&cfg);
	cfg.num_blocks = 0;
	CU_ASSERT_EQUAL(fl_lun_create(&cfg, &lun), -EINVAL);
	th_config(&cfg);
	cfg.store = FL_STORE_FILE;
	cfg.store_path = NULL;
	CU_ASSERT_EQUAL(fl_lun_create(&cfg, &lun), -EINVAL);
	th_config(&cfg);
	cfg.store = FL_STORE_FILE;
	cfg.store_path = "/nonexistent-dir/x/y";
	CU_ASSERT(fl_lun_create(&cfg, &lun) < 0);
}

/* Any CDB of any length from any nexus gets exactly one sane completion. */
static void random_cdbs(struct fl_lun *lun, unsigned count, uint32_t seed)
{
	uint8_t *out = malloc(8192), *in = malloc(8192);
	uint32_t x = seed;

	th_pattern(out, 8192, seed);
	for (unsigned i = 0; i < count; i++) {
		uint8_t cdb[FL_CDB_MAX + 8];
		struct fl_cmd res;
		size_t len;
		uint32_t out_len, in_cap, nexus;
		bool no_out, no_in;

		len = RND() % (FL_CDB_MAX + 9); /* some longer than any CDB */
		for (size_t k = 0; k < sizeof(cdb); k++)
			cdb[k] = (uint8_t)RND();
		/* half the time, a real opcode from the table */
		if (RND() & 1) {
			const struct fl_opcode_desc *d;
			size_t n = 0;

			while (cdb_table_row(n))
				n++;
			d = cdb_table_row(RND() % n);
			cdb[0] = d->opcode;
			if (d->has_sa)
				cdb[1] = (uint8_t)((cdb[1] & 0xe0) | d->service_action);
			if (RND() & 1)
				len = d->cdb_len;
			if (RND() & 1) /* small LBAs and lengths so that some succeed */
				for (size_t k = 2; k < 14; k++)
					cdb[k] &= (k == 5 || k == 9 || k == 13) ? 0x0f : 0;
			if (RND() & 3) { /* mostly no protection bits, no NACA / LINK */
				cdb[d->cdb_len - 1] = 0;
				if (!d->has_sa)
					cdb[1] &= 0x1f;
			}
		}
		out_len = (RND() & 1) ? RND() % 8192 : 0;
		in_cap = RND() % 8192;
		/* now and then a length without a buffer, which must not be trusted */
		no_out = RND() % 16 == 0;
		no_in = RND() % 16 == 0;
		nexus = RND() % 6;
		if (th_run(lun, nexus, cdb, len, (out_len && !no_out) ? out : NULL, out_len,
			   no_in ? NULL : in, in_cap, &res))
			break;
		TH_CHECK(res.status == FL_STATUS_GOOD || res.status == FL_STATUS_CHECK_CONDITION ||
			     res.status == FL_STATUS_CONDITION_MET ||
			     res.status == FL_STATUS_RESERVATION_CONFLICT ||
			     res.status == FL_STATUS_BUSY,
			 "cdb %02x len %zu: status %02x", cdb[0], len, res.status);
		TH_CHECK((res.status == FL_STATUS_CHECK_CONDITION) == (res.sense_len >= 8),
			 "cdb %02x len %zu: status %02x with %u sense bytes", cdb[0], len,
			 res.status, res.sense_len);
		TH_CHECK(res.data_in_len <= in_cap, "cdb %02x: %u bytes into %u", cdb[0],
			 res.data_in_len, in_cap);
		if (i % 64 == 0) { /* keep the LUN started and active */
			static const uint8_t start[6] = {0x1b, 0, 0, 0, 0x01, 0};

			fl_lun_set_alua_state(lun, FL_ALUA_ACTIVE_OPTIMIZED);
			th_run(lun, 0, start, 6, NULL, 0, NULL, 0, &res);
		}
	}
	free(out);
	free(in);
}

/* Random CDBs against a memory LUN. */
static void test_random_cdbs_memory(void)
{
	struct fl_lun *lun = th_lun(NULL);

	random_cdbs(lun, 20000, 12345);
	fl_lun_destroy(lun);
}

/* Random CDBs against a thin file-backed LUN (worker completion path). */
static void test_random_cdbs_file_thin(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;

	th_config(&cfg);
	cfg.num_blocks = 4096;
	cfg.store = FL_STORE_FILE;
	cfg.store_path = th_tmpfile();
	cfg.thin = true;
	cfg.pool_blocks = 1024;
	cfg.soft_threshold = 512;
	cfg.d_sense = true;
	lun = th_lun(&cfg);
	random_cdbs(lun, 4000, 777);
	fl_lun_destroy(lun);
}

struct hammer {
	struct fl_lun *lun;
	uint32_t seed;
	unsigned count;
	unsigned bad; /* completions that broke the contract */
};

struct hammer_cmd {
	struct fl_cmd cmd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int calls;
};

/* Completion of a hammer command. */
static void hammer_done(struct fl_cmd *cmd)
{
	struct hammer_cmd *h = (struct hammer_cmd *)cmd;

	pthread_mutex_lock(&h->lock);
	h->calls++;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* One submitter thread: random CDBs, no CUnit calls (not thread-safe). */
static void *hammer_thread(void *arg)
{
	struct hammer *hm = arg;
	uint8_t *out = malloc(4096), *in = malloc(4096);
	uint32_t x = hm->seed;

	memset(out, 0x3c, 4096);
	for (unsigned i = 0; i < hm->count; i++) {
		struct hammer_cmd h;
		const struct fl_opcode_desc *d;
		size_t rows = 0;

		memset(&h, 0, sizeof(h));
		pthread_mutex_init(&h.lock, NULL);
		pthread_cond_init(&h.cond, NULL);
		while (cdb_table_row(rows))
			rows++;
		d = cdb_table_row(RND() % rows);
		for (int k = 0; k < FL_CDB_MAX; k++)
			h.cmd.cdb[k] = (k >= 2 && k < 14) ? 0 : (uint8_t)RND();
		h.cmd.cdb[0] = d->opcode;
		if (d->has_sa)
			h.cmd.cdb[1] = d->service_action;
		h.cmd.cdb[5] = (uint8_t)(RND() % 64);
		h.cmd.cdb[8] = (uint8_t)(RND() % 8);
		h.cmd.cdb[13] = (uint8_t)(RND() % 8);
		h.cmd.cdb[d->cdb_len - 1] = 0;
		h.cmd.cdb_len = d->cdb_len;
		h.cmd.nexus.id = RND() % 4;
		h.cmd.data_out = out;
		h.cmd.data_out_len = RND() % 4096;
		h.cmd.data_in = in;
		h.cmd.data_in_cap = 4096;
		h.cmd.done = hammer_done;
		fl_lun_submit(hm->lun, &h.cmd);
		pthread_mutex_lock(&h.lock);
		while (h.calls == 0)
			pthread_cond_wait(&h.cond, &h.lock);
		pthread_mutex_unlock(&h.lock);
		if (h.calls != 1 || h.cmd.data_in_len > 4096 ||
		    (h.cmd.status == FL_STATUS_CHECK_CONDITION) != (h.cmd.sense_len >= 8))
			hm->bad++;
		pthread_mutex_destroy(&h.lock);
		pthread_cond_destroy(&h.cond);
	}
	free(out);
	free(in);
	return NULL;
}

/* Several threads submitting at once to one LUN, memory and file stores. */
static void test_concurrent_submitters(void)
{
	for (int file = 0; file < 2; file++) {
		struct fl_lun_config cfg;
		struct hammer hm[4];
		pthread_t th[4];
		struct fl_lun *lun;

		th_config(&cfg);
		cfg.thin = file;
		cfg.pool_blocks = 2000;
		cfg.soft_threshold = 100;
		if (file) {
			cfg.store = FL_STORE_FILE;
			cfg.store_path = th_tmpfile();
		}
		lun = th_lun(&cfg);
		for (int i = 0; i < 4; i++) {
			hm[i] = (struct hammer){lun, 1000u + (uint32_t)i, 1500, 0};
			pthread_create(&th[i], NULL, hammer_thread, &hm[i]);
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			TH_CHECK(hm[i].bad == 0, "thread %d: %u bad completions", i, hm[i].bad);
		}
		fl_lun_power_loss(lun, NULL, NULL);
		fl_lun_destroy(lun);
	}
}

FL_TESTS(lun_tests,
	 FL_TEST(test_new_nexus_sees_power_on),
	 FL_TEST(test_no_ua_commands_do_not_consume),
	 FL_TEST(test_ua_precedence_order),
	 FL_TEST(test_ua_queue_overflow),
	 FL_TEST(test_ua_per_nexus_and_reset),
	 FL_TEST(test_nexus_gone),
	 FL_TEST(test_resize_capacity_changed),
	 FL_TEST(test_power_loss_discards_unsynced),
	 FL_TEST(test_power_loss_restores_oldest),
	 FL_TEST(test_power_loss_write_through),
	 FL_TEST(test_power_loss_model),
	 FL_TEST(test_block_sizes),
	 FL_TEST(test_set_sense_formats),
	 FL_TEST(test_create_bad_config),
	 FL_TEST(test_random_cdbs_memory),
	 FL_TEST(test_random_cdbs_file_thin),
	 FL_TEST(test_concurrent_submitters));

FL_SUITES(FL_SUITE("lun", NULL, NULL, lun_tests));
