/* SPDX-License-Identifier: MIT */
/*
 * test_vendor_hpsw.c - the HP / Compaq active/passive personality
 * (target/vendor_hpsw.c) on a LUN with two controllers: port 1 on the active
 * one (group 1), port 2 on the passive one (group 2). What Linux's
 * scsi_dh_hp_sw and multipath-tools' hp_sw checker and prioritizer rely on:
 * the identity; TEST UNIT READY and reads through the passive controller get
 * NOT READY 04/02 while INQUIRY (VPD 80h) and READ CAPACITY work; START STOP
 * UNIT with START through the passive controller activates it.
 */
#include "runner.h"
#include "tharness.h"

#include <string.h>

/* Sends a 6-byte CDB with no data through a port. */
static struct fl_cmd cmd6(struct fl_lun *lun, uint16_t port, uint8_t op, uint8_t b4)
{
	uint8_t cdb[6] = {op, 0, 0, 0, b4, 0};

	return th_via(lun, port, port, cdb, 6, NULL, 0, NULL, 0);
}

/* The identity scsi_dh.c and multipath-tools match, without TPGS (no ALUA). */
static void test_identity(void)
{
	static const uint8_t inq[6] = {0x12, 0, 0, 0, 96, 0};
	struct fl_lun *lun = th_personality_lun("hp_sw");
	uint8_t buf[96];

	TH_EXPECT_CMD_GOOD(th_via(lun, 2, 2, inq, 6, NULL, 0, buf, sizeof(buf)),
			   "standard INQUIRY through the passive controller");
	CU_ASSERT_NSTRING_EQUAL(buf + 8, "COMPAQ  ", 8);
	CU_ASSERT_NSTRING_EQUAL(buf + 16, "MSA1000 VOLUME  ", 16);
	CU_ASSERT_EQUAL(buf[5] & 0x30, 0); /* TPGS 00b, or scsi_dh_alua would take the LUN */
	fl_lun_destroy(lun);
}

/* The passive controller: TUR and READ get 04/02; VPD 80h and READ CAPACITY work. */
static void test_passive_not_ready(void)
{
	static const uint8_t vpd80[6] = {0x12, 1, 0x80, 0, 255, 0};
	static const uint8_t rcap[10] = {0x25};
	struct fl_lun *lun = th_personality_lun("hp_sw");
	uint8_t buf[255];

	TH_EXPECT_CMD_GOOD(th_settle(lun, 1, 1), "TUR through the active controller");
	TH_EXPECT_CMD_GOOD(th_read1(lun, 1, 1), "READ through the active controller");
	TH_EXPECT_CMD(th_settle(lun, 2, 2), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x02,
		      "TUR through the passive controller");
	TH_EXPECT_CMD(th_read1(lun, 2, 2), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x02,
		      "READ through the passive controller");
	TH_EXPECT_CMD_GOOD(th_via(lun, 2, 2, vpd80, 6, NULL, 0, buf, sizeof(buf)),
			   "INQUIRY VPD 80h through the passive controller (the hp_sw checker)");
	TH_EXPECT_CMD_GOOD(th_via(lun, 2, 2, rcap, 10, NULL, 0, buf, 8),
			   "READ CAPACITY(10) through the passive controller");
	fl_lun_destroy(lun);
}

/* START STOP UNIT, START=1, through the passive controller activates it. */
static void test_start_activates(void)
{
	struct fl_lun *lun = th_personality_lun("hp_sw");

	th_settle(lun, 1, 1);
	th_settle(lun, 2, 2);
	TH_EXPECT_CMD_GOOD(cmd6(lun, 2, 0x1b, 0x01),
			   "START STOP UNIT (START) through the passive controller");
	TH_EXPECT_OWNER(lun, 2);
	TH_EXPECT_CMD_GOOD(th_settle(lun, 2, 2), "TUR through the controller just activated");
	TH_EXPECT_CMD_GOOD(th_read1(lun, 2, 2), "READ through the controller just activated");
	TH_EXPECT_CMD(th_settle(lun, 1, 1), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x02,
		      "TUR through the controller that became passive");
	/* START through the active one, and a STOP, change nothing */
	TH_EXPECT_CMD_GOOD(cmd6(lun, 2, 0x1b, 0x01), "START through the active controller");
	TH_EXPECT_CMD_GOOD(cmd6(lun, 1, 0x1b, 0x00), "STOP through the passive controller");
	TH_EXPECT_OWNER(lun, 2);
	TH_EXPECT_CMD_GOOD(th_read1(lun, 2, 2),
			   "READ through the active controller after a STOP elsewhere");
	fl_lun_destroy(lun);
}

FL_TESTS(hpsw_tests,
	 FL_TEST(test_identity),
	 FL_TEST(test_passive_not_ready),
	 FL_TEST(test_start_activates));

FL_SUITES(FL_SUITE("vendor_hpsw", NULL, NULL, hpsw_tests));
