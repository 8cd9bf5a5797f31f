/* SPDX-License-Identifier: MIT */
/*
 * test_alua.c - asymmetric logical unit access on a LUN with two target
 * ports in two target port groups (SPC-4 r37 5.15.2): the state a command
 * meets is its port's group's; INQUIRY VPD 83h names the port and group a
 * command came through (7.8.6.7, 7.8.6.8); REPORT TARGET PORT GROUPS lists
 * every group with its ports (6.36); SET TARGET PORT GROUPS (6.46) changes
 * groups and queues 2A/06 for every other I_T nexus; fl_lun_set_tpg_state
 * changes one group and queues 2A/06 for every nexus.
 */
#include "runner.h"
#include "tharness.h"

#include <errno.h>
#include <string.h>

/* A LUN with port 1 in group 1 (active/optimized), port 2 in group 2 (standby). */
static struct fl_lun *two_port_lun(bool explicit_)
{
	struct fl_lun_config cfg;

	th_config(&cfg);
	cfg.alua_implicit = true;
	cfg.alua_explicit = explicit_;
	th_two_ports(&cfg, FL_ALUA_ACTIVE_OPTIMIZED, FL_ALUA_STANDBY);
	return th_lun(&cfg);
}

/* Each group's state applies to the commands of its ports only. */
static void test_state_per_port_group(void)
{
	static const struct {
		enum fl_alua_state st;
		uint8_t ascq;
	} rows[] = {
	    {FL_ALUA_STANDBY, 0x0b},
	    {FL_ALUA_TRANSITIONING, 0x0a},
	    {FL_ALUA_UNAVAILABLE, 0x0c},
	};
	struct fl_lun *lun = two_port_lun(false);

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		CU_ASSERT_EQUAL(fl_lun_set_tpg_state(lun, 2, rows[i].st), 0);
		th_settle(lun, 1, 1);
		th_settle(lun, 2, 2);
		TH_EXPECT_CMD_GOOD(th_read1(lun, 1, 1),
				   "READ through the active/optimized group's port");
		TH_EXPECT_CMD(th_read1(lun, 2, 2), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY,
			      0x04, rows[i].ascq, "READ through the other group's port");
	}
	/* the default group (tpg_id 1) is what fl_lun_set_alua_state changes */
	fl_lun_set_tpg_state(lun, 2, FL_ALUA_ACTIVE_OPTIMIZED);
	fl_lun_set_alua_state(lun, FL_ALUA_STANDBY);
	th_settle(lun, 1, 1);
	th_settle(lun, 2, 2);
	TH_EXPECT_CMD(th_read1(lun, 1, 1), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x0b,
		      "READ through group 1 after fl_lun_set_alua_state");
	TH_EXPECT_CMD_GOOD(th_read1(lun, 2, 2), "READ through group 2 (now active/optimized)");
	CU_ASSERT_EQUAL(fl_lun_set_tpg_state(lun, 9, FL_ALUA_STANDBY), -ENOENT);
	fl_lun_destroy(lun);
}

/* A group's change queues 2A/06 for every nexus, on either port. */
static void test_state_change_ua_every_nexus(void)
{
	struct fl_lun *lun = two_port_lun(false);
	enum fl_alua_state st;

	th_settle(lun, 1, 1);
	th_settle(lun, 2, 2);
	CU_ASSERT_EQUAL(fl_lun_set_tpg_state(lun, 1, FL_ALUA_STANDBY), 0);
	CU_ASSERT_EQUAL(fl_lun_set_tpg_state(lun, 2, FL_ALUA_ACTIVE_OPTIMIZED), 0);
	CU_ASSERT_EQUAL(fl_lun_tpg_state(lun, 1, &st), 0);
	CU_ASSERT_EQUAL(st, FL_ALUA_STANDBY);
	TH_EXPECT_CMD(th_read1(lun, 1, 1), FL_STATUS_CHECK_CONDITION, FL_KEY_UNIT_ATTENTION, 0x2a,
		      0x06, "nexus 1 after the change");
	TH_EXPECT_CMD(th_read1(lun, 2, 2), FL_STATUS_CHECK_CONDITION, FL_KEY_UNIT_ATTENTION, 0x2a,
		      0x06, "nexus 2 after the change");
	th_settle(lun, 1, 1);
	th_settle(lun, 2, 2);
	TH_EXPECT_CMD_GOOD(th_read1(lun, 2, 2), "READ through port 2 once group 2 is active");
	fl_lun_destroy(lun);
}

/* Fetches VPD 83h through a port; returns (relative port, group) designators. */
static void vpd83_via(struct fl_lun *lun, uint64_t nexus, uint16_t port, int *rel, int *tpg)
{
	uint8_t cdb[6] = {0x12, 0x01, 0x83, 0x01, 0x00, 0};
	uint8_t buf[256];
	struct fl_cmd res = th_via(lun, nexus, port, cdb, 6, NULL, 0, buf, sizeof(buf));
	uint32_t len, off;

	*rel = *tpg = -1;
	TH_EXPECT_GOOD(&res, "INQUIRY VPD 83h");
	len = 4u + fl_get_be16(buf + 2);
	for (off = 4; off + 4 <= len && off + 4 + buf[off + 3] <= res.data_in_len;
	     off += 4 + buf[off + 3]) {
		uint8_t assoc = (buf[off + 1] >> 4) & 3, type = buf[off + 1] & 0x0f;

		if (assoc == 1 && type == 4)
			*rel = fl_get_be16(buf + off + 6);
		if (assoc == 1 && type == 5)
			*tpg = fl_get_be16(buf + off + 6);
	}
}

/* VPD 83h names the port and the group a command came through (SPC-4 r37 7.8.6.7/8). */
static void test_vpd83_per_port(void)
{
	struct fl_lun *lun = two_port_lun(false);
	int rel, tpg;

	vpd83_via(lun, 1, 1, &rel, &tpg);
	CU_ASSERT_EQUAL(rel, 1);
	CU_ASSERT_EQUAL(tpg, 1);
	vpd83_via(lun, 2, 2, &rel, &tpg);
	CU_ASSERT_EQUAL(rel, 2);
	CU_ASSERT_EQUAL(tpg, 2);
	fl_lun_destroy(lun);
}

/* REPORT TARGET PORT GROUPS: both groups, their states and ports, through either port. */
static void test_rtpg_lists_every_group(void)
{
	static const uint8_t cdb[12] = {0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
	struct fl_lun *lun = two_port_lun(false);

	for (uint16_t port = 1; port <= 2; port++) {
		uint8_t buf[256];
		struct fl_cmd res;

		th_settle(lun, port, port); /* RTPG reports a pending UA first */
		res = th_via(lun, port, port, cdb, 12, NULL, 0, buf, sizeof(buf));
		TH_EXPECT_GOOD(&res, "RTPG");
		CU_ASSERT_EQUAL(fl_get_be32(buf), 2 * 12);
		CU_ASSERT_EQUAL(res.data_in_len, 4 + 2 * 12);
		/* group 1: active/optimized, relative port 1 */
		CU_ASSERT_EQUAL(buf[4] & 0x0f, FL_ALUA_ACTIVE_OPTIMIZED);
		CU_ASSERT_EQUAL(fl_get_be16(buf + 6), 1);
		CU_ASSERT_EQUAL(buf[11], 1);
		CU_ASSERT_EQUAL(fl_get_be16(buf + 14), 1);
		/* group 2: standby, relative port 2 */
		CU_ASSERT_EQUAL(buf[16] & 0x0f, FL_ALUA_STANDBY);
		CU_ASSERT_EQUAL(fl_get_be16(buf + 18), 2);
		CU_ASSERT_EQUAL(buf[23], 1);
		CU_ASSERT_EQUAL(fl_get_be16(buf + 26), 2);
	}
	fl_lun_destroy(lun);
}

/* RTPG's extended header (PARAMETER DATA FORMAT 001b) carries the implicit transition time. */
static void test_rtpg_extended_header_transition_time(void)
{
	static const uint8_t cdb[12] = {0xa3, 0x2a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
	static const uint8_t times[] = {0, 4, 255};

	for (size_t i = 0; i < sizeof(times); i++) {
		struct fl_lun_config cfg;
		uint8_t buf[256];

		th_config(&cfg);
		cfg.alua_implicit = true;
		cfg.alua_transition_s = times[i];
		cfg.tpg_id = 1;
		cfg.nports = 2;
		cfg.ports[0] = (struct fl_port_config){1, 1};
		cfg.ports[1] = (struct fl_port_config){2, 2};
		cfg.ntpgs = 2;
		cfg.tpgs[0] = (struct fl_tpg_config){1, FL_ALUA_ACTIVE_OPTIMIZED};
		cfg.tpgs[1] = (struct fl_tpg_config){2, FL_ALUA_STANDBY};
		struct fl_lun *lun = th_lun(&cfg);
		th_settle(lun, 1, 1);
		TH_EXPECT_CMD_GOOD(th_via(lun, 1, 1, cdb, 12, NULL, 0, buf, sizeof(buf)),
				   "RTPG extended header");
		CU_ASSERT_EQUAL(buf[4], 0x10); /* FORMAT TYPE 001b */
		CU_ASSERT_EQUAL(buf[5], times[i]);
		CU_ASSERT_EQUAL(fl_get_be32(buf), 4 + 2 * 12);
		fl_lun_destroy(lun);
	}
}

/* SET TARGET PORT GROUPS: explicit ALUA only; swaps the groups; 2A/06 for the others. */
static void test_stpg(void)
{
	static const uint8_t cdb[12] = {0xa4, 0x0a, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0};
	/* group 1 -> standby, group 2 -> active/optimized */
	static const uint8_t swap[12] = {0, 0, 0, 0, 0x02, 0, 0, 1, 0x00, 0, 0, 2};
	static const uint8_t bad_state[12] = {0, 0, 0, 0, 0x0e, 0, 0, 1, 0x00, 0, 0, 2};
	static const uint8_t bad_group[12] = {0, 0, 0, 0, 0x02, 0, 0, 1, 0x00, 0, 0, 7};
	struct fl_lun *lun = two_port_lun(false);
	enum fl_alua_state st;

	th_settle(lun, 1, 1);
	TH_EXPECT_CMD(th_via(lun, 1, 1, cdb, 12, swap, 12, NULL, 0), FL_STATUS_CHECK_CONDITION,
		      FL_KEY_ILLEGAL_REQUEST, 0x20, 0x00, "STPG without explicit ALUA");
	fl_lun_destroy(lun);

	lun = two_port_lun(true);
	th_settle(lun, 1, 1);
	th_settle(lun, 2, 2);
	TH_EXPECT_CMD(th_via(lun, 1, 1, cdb, 12, bad_state, 12, NULL, 0), FL_STATUS_CHECK_CONDITION,
		      FL_KEY_ILLEGAL_REQUEST, 0x26, 0x00, "STPG to offline");
	TH_EXPECT_CMD(th_via(lun, 1, 1, cdb, 12, bad_group, 12, NULL, 0), FL_STATUS_CHECK_CONDITION,
		      FL_KEY_ILLEGAL_REQUEST, 0x26, 0x00, "STPG of an unknown group");
	fl_lun_tpg_state(lun, 1, &st);
	CU_ASSERT_EQUAL(st, FL_ALUA_ACTIVE_OPTIMIZED); /* a refused list changes nothing */
	TH_EXPECT_CMD_GOOD(th_via(lun, 1, 1, cdb, 12, swap, 12, NULL, 0),
			   "STPG swapping the groups");
	fl_lun_tpg_state(lun, 1, &st);
	CU_ASSERT_EQUAL(st, FL_ALUA_STANDBY);
	fl_lun_tpg_state(lun, 2, &st);
	CU_ASSERT_EQUAL(st, FL_ALUA_ACTIVE_OPTIMIZED);
	/* SPC-4 r37 5.15.2.5: no UA for the nexus that asked, 2A/06 for the other */
	TH_EXPECT_CMD(th_read1(lun, 1, 1), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x0b,
		      "READ through port 1 now in standby (no UA first)");
	TH_EXPECT_CMD(th_read1(lun, 2, 2), FL_STATUS_CHECK_CONDITION, FL_KEY_UNIT_ATTENTION, 0x2a,
		      0x06, "the other nexus sees 2A/06");
	TH_EXPECT_CMD_GOOD(th_read1(lun, 2, 2), "READ through port 2 now active/optimized");
	fl_lun_destroy(lun);
}

/* Without a port table: one group, every port in it (a single-port target as before). */
static void test_single_port_default(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	int rel, tpg;

	th_config(&cfg);
	cfg.tpg_id = 5;
	lun = th_lun(&cfg);
	vpd83_via(lun, 1, 3, &rel, &tpg);
	CU_ASSERT_EQUAL(rel, 3);
	CU_ASSERT_EQUAL(tpg, 5);
	CU_ASSERT_EQUAL(fl_lun_set_tpg_state(lun, 5, FL_ALUA_STANDBY), 0);
	th_settle(lun, 1, 3);
	TH_EXPECT_CMD(th_read1(lun, 1, 3), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x0b,
		      "READ on the one group in standby");
	fl_lun_destroy(lun);
}

/*
 * A standby port answers READ CAPACITY (10) and (16), as LIO does, so that a
 * passive path's disk has its size; TEST UNIT READY and media access get
 * 04/0B; an unavailable port answers neither (04/0C).
 */
static void test_standby_read_capacity(void)
{
	static const uint8_t rc10[10] = {0x25}, tur[6] = {0},
			     rc16[16] = {0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0};
	struct fl_lun *lun = two_port_lun(false);
	uint8_t buf[32];
	struct fl_cmd c;

	th_settle(lun, 2, 2);
	c = th_via(lun, 2, 2, rc10, 10, NULL, 0, buf, 8);
	TH_EXPECT_CMD_GOOD(c, "READ CAPACITY (10) through the standby port");
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), TH_BS);
	c = th_via(lun, 2, 2, rc16, 16, NULL, 0, buf, 32);
	TH_EXPECT_CMD_GOOD(c, "READ CAPACITY (16) through the standby port");
	CU_ASSERT_EQUAL(fl_get_be32(buf + 8), TH_BS);
	TH_EXPECT_CMD(th_via(lun, 2, 2, tur, 6, NULL, 0, NULL, 0), FL_STATUS_CHECK_CONDITION,
		      FL_KEY_NOT_READY, 0x04, 0x0b, "TEST UNIT READY through the standby port");
	TH_EXPECT_CMD(th_read1(lun, 2, 2), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04,
		      0x0b, "READ through the standby port");
	CU_ASSERT_EQUAL(fl_lun_set_tpg_state(lun, 2, FL_ALUA_UNAVAILABLE), 0);
	th_settle(lun, 2, 2);
	TH_EXPECT_CMD(th_via(lun, 2, 2, rc10, 10, NULL, 0, buf, 8), FL_STATUS_CHECK_CONDITION,
		      FL_KEY_NOT_READY, 0x04, 0x0c, "READ CAPACITY (10) through the unavailable port");
	fl_lun_destroy(lun);
}

FL_TESTS(alua_tests,
	 FL_TEST(test_state_per_port_group),
	 FL_TEST(test_standby_read_capacity),
	 FL_TEST(test_state_change_ua_every_nexus),
	 FL_TEST(test_vpd83_per_port),
	 FL_TEST(test_rtpg_lists_every_group),
	 FL_TEST(test_rtpg_extended_header_transition_time),
	 FL_TEST(test_stpg),
	 FL_TEST(test_single_port_default));

FL_SUITES(FL_SUITE("alua", NULL, NULL, alua_tests));
