/* SPDX-License-Identifier: MIT */
/*
 * test_target.c - a target with several LUNs: numbering, REPORT LUNS (and
 * its 3F/0E unit attention), absent LUNs (INQUIRY peripheral qualifier 3,
 * REQUEST SENSE data 25/00, anything else CHECK CONDITION 25/00), and
 * independent state per LUN.
 */
#include "runner.h"
#include "target_internal.h"
#include "tharness.h"

#include <errno.h>
#include <string.h>

#define CC FL_STATUS_CHECK_CONDITION
#define IR FL_KEY_ILLEGAL_REQUEST

/* A target with LUNs 0 and 3 (3 is 4 KiB-block, thin). */
static struct fl_target *two_lun_target(void)
{
	struct fl_lun_config cfg;
	struct fl_target *tgt;

	CU_ASSERT_EQUAL(fl_target_create(&tgt), 0);
	CU_ASSERT_EQUAL(fl_target_add_lun(tgt, 0, th_lun(NULL)), 0);
	th_config(&cfg);
	cfg.block_size = 4096;
	cfg.num_blocks = 1000;
	cfg.thin = true;
	cfg.serial = "SECOND";
	CU_ASSERT_EQUAL(fl_target_add_lun(tgt, 3, th_lun(&cfg)), 0);
	return tgt;
}

/* Runs a CDB through the target. */
static struct fl_cmd trun(struct fl_target *tgt, uint16_t lun, uint64_t nexus, const uint8_t *cdb,
			  size_t len, void *in, uint32_t in_cap)
{
	struct fl_cmd res;

	memset(&res, 0, sizeof(res));
	th_run_target(tgt, lun, nexus, cdb, len, NULL, 0, in, in_cap, &res);
	return res;
}

/* Numbering: ids in order, duplicates and out-of-range numbers refused. */
static void test_target_lun_numbering(void)
{
	struct fl_target *tgt = two_lun_target();
	struct fl_lun *extra = th_lun(NULL);
	uint16_t ids[8];

	CU_ASSERT_EQUAL(fl_target_lun_ids(tgt, ids, 8), 2);
	CU_ASSERT(ids[0] == 0 && ids[1] == 3);
	CU_ASSERT_EQUAL(fl_target_lun_ids(tgt, ids, 1), 1);
	CU_ASSERT_EQUAL(fl_target_add_lun(tgt, 3, extra), -EEXIST);
	CU_ASSERT_EQUAL(fl_target_add_lun(tgt, FL_MAX_LUNS, extra), -ERANGE);
	CU_ASSERT_PTR_NOT_NULL(fl_target_lun(tgt, 0));
	CU_ASSERT_PTR_NULL(fl_target_lun(tgt, 1));
	CU_ASSERT_PTR_NULL(fl_target_lun(tgt, 999));
	CU_ASSERT_EQUAL(fl_target_add_lun(tgt, 255, extra), 0);
	CU_ASSERT_EQUAL(fl_target_lun_ids(tgt, ids, 8), 3);
	CU_ASSERT_EQUAL(ids[2], 255);
	fl_target_destroy(tgt);
}

/* REPORT LUNS through a present and an absent LUN; SELECT REPORT; errors. */
static void test_target_report_luns(void)
{
	struct fl_target *tgt = two_lun_target();
	uint8_t rl[12] = {0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, buf[256];
	struct fl_cmd res;

	for (uint16_t via = 0; via < 6; via += 5) {
		memset(buf, 0xee, sizeof(buf));
		res = trun(tgt, via, 1, rl, 12, buf, sizeof(buf));
		TH_EXPECT_GOOD(&res, "REPORT LUNS");
		CU_ASSERT_EQUAL(res.data_in_len, 24);
		CU_ASSERT_EQUAL(fl_get_be32(buf), 16);
		CU_ASSERT(fl_get_be64(buf + 8) == 0 && buf[16] == 0 && buf[17] == 3);
	}
	rl[2] = 1; /* well-known LUNs only: none */
	res = trun(tgt, 0, 1, rl, 12, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REPORT LUNS well-known");
	CU_ASSERT_EQUAL(fl_get_be32(buf), 0);
	rl[2] = 3;
	res = trun(tgt, 0, 1, rl, 12, buf, sizeof(buf));
	TH_EXPECT(&res, CC, IR, 0x24, 0, "test_report_luns_bad_select_report");
	rl[2] = 0;
	rl[9] = 8;
	rl[8] = 0;
	res = trun(tgt, 0, 1, rl, 12, buf, sizeof(buf));
	TH_EXPECT(&res, CC, IR, 0x24, 0, "test_report_luns_allocation_below_16");
	rl[9] = 16; /* truncated list: the length still says 16 */
	res = trun(tgt, 0, 1, rl, 12, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REPORT LUNS allocation 16");
	CU_ASSERT_EQUAL(res.data_in_len, 16);
	CU_ASSERT_EQUAL(fl_get_be32(buf), 16);
	fl_target_destroy(tgt);
}

/* Absent LUN: INQUIRY PQ 3, REQUEST SENSE data 25/00, the rest 25/00. */
static void test_target_absent_lun(void)
{
	struct fl_target *tgt = two_lun_target();
	uint8_t inq[6] = {0x12, 0, 0, 0, 36, 0}, rs[6] = {0x03, 0, 0, 0, 18, 0}, cdb[16];
	uint8_t buf[64];
	struct th_sense s;
	struct fl_cmd res;

	res = trun(tgt, 7, 1, inq, 6, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "INQUIRY of an absent LUN");
	CU_ASSERT_EQUAL(res.data_in_len, 36);
	CU_ASSERT_EQUAL(buf[0], 0x7f);
	inq[1] = 1; /* EVPD */
	res = trun(tgt, 7, 1, inq, 6, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "INQUIRY EVPD of an absent LUN");
	CU_ASSERT_EQUAL(buf[0], 0x7f);
	res = trun(tgt, 7, 1, rs, 6, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REQUEST SENSE of an absent LUN");
	th_parse_sense(buf, res.data_in_len, &s);
	CU_ASSERT(s.valid && s.key == IR && s.asc == 0x25 && s.ascq == 0);
	th_cdb10(cdb, 0x28, 0, 0, 1);
	res = trun(tgt, 7, 1, cdb, 10, buf, sizeof(buf));
	TH_EXPECT(&res, CC, IR, 0x25, 0, "READ(10) of an absent LUN");
	CU_ASSERT_EQUAL(res.data_in_len, 0);
	memset(cdb, 0, 6);
	res = trun(tgt, 200, 1, cdb, 6, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x25, 0, "TUR of an absent LUN");
	res = trun(tgt, 4000, 1, cdb, 6, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x25, 0, "TUR of a LUN number past the table");
	res = trun(tgt, 7, 1, cdb, 0, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x20, 0, "empty CDB to an absent LUN");
	fl_target_destroy(tgt);
}

/* Adding a LUN raises 3F/0E on the others; REPORT LUNS clears it. */
static void test_target_add_lun_reported_luns_changed(void)
{
	struct fl_target *tgt = two_lun_target();
	uint8_t tur[6] = {0}, rl[12] = {0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, buf[256];
	struct fl_cmd res;

	th_clear_ua(fl_target_lun(tgt, 0), 1);
	th_clear_ua(fl_target_lun(tgt, 0), 2);
	CU_ASSERT_EQUAL(fl_target_add_lun(tgt, 9, th_lun(NULL)), 0);
	res = trun(tgt, 0, 1, tur, 6, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x3f, 0x0e, "nexus 1 hears the new LUN");
	res = trun(tgt, 0, 2, rl, 12, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REPORT LUNS from nexus 2");
	CU_ASSERT_EQUAL(fl_get_be32(buf), 24);
	res = trun(tgt, 0, 2, tur, 6, NULL, 0);
	TH_EXPECT_GOOD(&res, "REPORT LUNS cleared 3F/0E for nexus 2");
	res = trun(tgt, 9, 2, tur, 6, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x29, 0, "the new LUN starts with 29/00");
	fl_target_destroy(tgt);
}

/* Each LUN has its own data, capacity and state. */
static void test_target_luns_independent(void)
{
	struct fl_target *tgt = two_lun_target();
	struct fl_lun *l0 = fl_target_lun(tgt, 0), *l3 = fl_target_lun(tgt, 3);
	uint8_t w[4096], r[4096], cdb[16], stop[6] = {0x1b, 0, 0, 0, 0, 0};
	struct fl_lun_info info;
	struct fl_cmd res;

	th_clear_ua(l0, 1);
	th_clear_ua(l3, 1);
	th_pattern(w, sizeof(w), 6);
	CU_ASSERT_EQUAL(th_write(l0, 1, 0, 8, w), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(th_read(l3, 1, 0, 1, r), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(r[0] | r[4095], 0);
	fl_lun_get_info(l3, &info);
	CU_ASSERT(info.block_size == 4096 && info.num_blocks == 1000 && info.thin);
	res = trun(tgt, 3, 1, stop, 6, NULL, 0);
	TH_EXPECT_GOOD(&res, "STOP LUN 3");
	th_cdb10(cdb, 0x28, 0, 0, 1);
	res = trun(tgt, 3, 1, cdb, 10, r, 4096);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 4, 2, "LUN 3 stopped");
	res = trun(tgt, 0, 1, cdb, 10, r, 512);
	TH_EXPECT_GOOD(&res, "LUN 0 still running");
	CU_ASSERT(memcmp(r, w, 512) == 0);
	fl_target_destroy(tgt);
}

FL_TESTS(target_tests,
	 FL_TEST(test_target_lun_numbering),
	 FL_TEST(test_target_report_luns),
	 FL_TEST(test_target_absent_lun),
	 FL_TEST(test_target_add_lun_reported_luns_changed),
	 FL_TEST(test_target_luns_independent));

FL_SUITES(FL_SUITE("target", NULL, NULL, target_tests));
