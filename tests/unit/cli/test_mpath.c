// SPDX-License-Identifier: MIT
/*
 * test_mpath.c - the libiscsi runner's model of dm-multipath and the device
 * handlers (cli/mpath.c): which handler a LUN's INQUIRY gets, the handlers'
 * query and activate commands byte for byte as the target's personalities
 * read them, REPORT TARGET PORT GROUPS answers (hostile ones included), path
 * errors, and the choice of a path as paths fail and come back.
 */
#include "mpath.h"

#include "runner.h"

#include <string.h>

/* A standard INQUIRY: TPGS field tpgs, vendor and product space-padded. */
static void inquiry(uint8_t *d, uint8_t tpgs, const char *vendor, const char *product)
{
	memset(d, 0, 36);
	memset(d + 8, ' ', 24);
	d[4] = 31;
	d[5] = (uint8_t)(tpgs << 4);
	memcpy(d + 8, vendor, strlen(vendor));
	memcpy(d + 16, product, strlen(product));
}

static void test_handler_of(void)
{
	static const struct {
		uint8_t tpgs;
		const char *vendor, *product;
		enum fl_mp_handler want;
	} rows[] = {
	    {1, "DGC", "VRAID", FL_MP_ALUA}, /* TPGS first, as scsi_dh.c */
	    {0, "DGC", "VRAID", FL_MP_EMC},
	    {0, "COMPAQ", "MSA1000 VOLUME", FL_MP_HP_SW},
	    {0, "NETAPP", "INF-01-00", FL_MP_RDAC},
	    {0, "DELL", "MD3200i", FL_MP_RDAC}, /* a product prefix */
	    {0, "DGC", "XRAID", FL_MP_NONE},
	    {0, "FAULTLUN", "MEMDISK", FL_MP_NONE},
	};
	uint8_t d[36];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		inquiry(d, rows[i].tpgs, rows[i].vendor, rows[i].product);
		CU_ASSERT_EQUAL(fl_mp_handler_of(d, 36), rows[i].want);
	}
	/* short answers */
	inquiry(d, 0, "DGC", "VRAID");
	CU_ASSERT_EQUAL(fl_mp_handler_of(d, 20), FL_MP_NONE);
	CU_ASSERT_EQUAL(fl_mp_handler_of(d, 0), FL_MP_NONE);
	CU_ASSERT_STRING_EQUAL(fl_mp_handler_name(FL_MP_HP_SW), "hp_sw");
	CU_ASSERT_STRING_EQUAL(fl_mp_handler_name((enum fl_mp_handler)99), "none");
}

/* RTPG data: group 1 active/optimized with port 1, group 2 standby with ports 2 and 3. */
static size_t rtpg(uint8_t *d)
{
	static const uint8_t g[] = {
	    0x80, 0x0f, 0x00, 0x01, 0, 0, 0, 1, 0, 0, 0, 1,
	    0x82, 0x0f, 0x00, 0x02, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3,
	};
	memset(d, 0, 4);
	d[3] = sizeof(g);
	memcpy(d + 4, g, sizeof(g));
	return 4 + sizeof(g);
}

static void test_rtpg_state(void)
{
	uint8_t d[64];
	size_t n = rtpg(d);

	CU_ASSERT_EQUAL(fl_mp_rtpg_state(d, n, 1), 0x0);
	CU_ASSERT_EQUAL(fl_mp_rtpg_state(d, n, 2), 0x2);
	CU_ASSERT_EQUAL(fl_mp_rtpg_state(d, n, 3), -1);
	/* truncated inside the second descriptor: only the first is read */
	CU_ASSERT_EQUAL(fl_mp_rtpg_state(d, 4 + 12 + 4, 2), -1);
	CU_ASSERT_EQUAL(fl_mp_rtpg_state(d, 4 + 12 + 4, 1), 0x0);
	/* a header length past the data, a port count past the end */
	d[0] = 0xff;
	CU_ASSERT_EQUAL(fl_mp_rtpg_state(d, n, 2), 0x2);
	d[0] = 0;
	d[4 + 7] = 0xff;
	CU_ASSERT_EQUAL(fl_mp_rtpg_state(d, n, 2), -1);
	CU_ASSERT_EQUAL(fl_mp_rtpg_state(d, 3, 1), -1);
	CU_ASSERT_EQUAL(fl_mp_rtpg_state(NULL, 0, 1), -1);
}

static void test_needs_activate(void)
{
	uint8_t d[64], c0[8] = {0}, c9[16] = {0};
	struct fl_mp_answer a = {.data = d, .len = rtpg(d)};

	CU_ASSERT_TRUE(fl_mp_needs_activate(FL_MP_ALUA, &a, 2, true));
	CU_ASSERT_FALSE(fl_mp_needs_activate(FL_MP_ALUA, &a, 2, false)); /* implicit only */
	CU_ASSERT_FALSE(fl_mp_needs_activate(FL_MP_ALUA, &a, 1, true));
	a.status = 0x02;
	CU_ASSERT_FALSE(fl_mp_needs_activate(FL_MP_ALUA, &a, 2, true));
	/* emc: C0h byte 4, 2 = owned */
	a = (struct fl_mp_answer){.data = c0, .len = sizeof(c0)};
	c0[4] = 1;
	CU_ASSERT_TRUE(fl_mp_needs_activate(FL_MP_EMC, &a, 2, false));
	c0[4] = 2;
	CU_ASSERT_FALSE(fl_mp_needs_activate(FL_MP_EMC, &a, 2, false));
	a.len = 4;
	CU_ASSERT_FALSE(fl_mp_needs_activate(FL_MP_EMC, &a, 2, false));
	/* rdac: C9h byte 8 bit 0, this controller owns the volume */
	a = (struct fl_mp_answer){.data = c9, .len = sizeof(c9)};
	CU_ASSERT_TRUE(fl_mp_needs_activate(FL_MP_RDAC, &a, 2, false));
	c9[8] = 0x01;
	CU_ASSERT_FALSE(fl_mp_needs_activate(FL_MP_RDAC, &a, 2, false));
	/* hp_sw: TEST UNIT READY answered NOT READY 04/02 */
	a = (struct fl_mp_answer){.status = 0x02, .key = 0x02, .asc = 0x04, .ascq = 0x02};
	CU_ASSERT_TRUE(fl_mp_needs_activate(FL_MP_HP_SW, &a, 2, false));
	a.ascq = 0x01;
	CU_ASSERT_FALSE(fl_mp_needs_activate(FL_MP_HP_SW, &a, 2, false));
	CU_ASSERT_FALSE(fl_mp_needs_activate(FL_MP_NONE, &a, 2, false));
}

static void test_query_and_activate_commands(void)
{
	struct fl_mp_cmd c;

	CU_ASSERT_TRUE(fl_mp_query(FL_MP_ALUA, &c));
	CU_ASSERT_EQUAL(c.cdb[0], 0xa3);
	CU_ASSERT_EQUAL(c.cdb[1], 0x0a);
	CU_ASSERT_EQUAL(c.alloc, 4096);
	CU_ASSERT_TRUE(fl_mp_query(FL_MP_EMC, &c));
	CU_ASSERT_EQUAL(c.cdb[0], 0x12);
	CU_ASSERT_EQUAL(c.cdb[1], 0x01);
	CU_ASSERT_EQUAL(c.cdb[2], 0xc0);
	CU_ASSERT_TRUE(fl_mp_query(FL_MP_RDAC, &c));
	CU_ASSERT_EQUAL(c.cdb[2], 0xc9);
	CU_ASSERT_TRUE(fl_mp_query(FL_MP_HP_SW, &c));
	CU_ASSERT_EQUAL(c.cdb[0], 0x00);
	CU_ASSERT_EQUAL(c.cdb_len, 6);
	CU_ASSERT_FALSE(fl_mp_query(FL_MP_NONE, &c));

	/* alua: STPG of the path's group to active/optimized */
	CU_ASSERT_TRUE(fl_mp_activate(FL_MP_ALUA, 0, 0x0102, &c));
	CU_ASSERT_EQUAL(c.cdb[0], 0xa4);
	CU_ASSERT_EQUAL(c.cdb[1], 0x0a);
	CU_ASSERT_EQUAL(c.cdb[9], 8);
	CU_ASSERT_EQUAL(c.data_len, 8);
	CU_ASSERT_EQUAL(c.data[4] & 0x0f, 0);
	CU_ASSERT_EQUAL(c.data[6], 0x01);
	CU_ASSERT_EQUAL(c.data[7], 0x02);
	/* emc: the long trespass, page 22h length 9, trespass code 1, target FFFFh */
	CU_ASSERT_TRUE(fl_mp_activate(FL_MP_EMC, 3, 2, &c));
	CU_ASSERT_EQUAL(c.cdb[0], 0x55);
	CU_ASSERT_EQUAL(c.cdb[1], 0x10);
	CU_ASSERT_EQUAL(c.cdb[8], 19);
	CU_ASSERT_EQUAL(c.data_len, 19);
	CU_ASSERT_EQUAL(memcmp(c.data + 8, "\x22\x09\x01\xff\xff", 5), 0);
	/* rdac: the expanded page 2Ch/01h, RDAC MODE 02h, this LUN's entry 81h */
	CU_ASSERT_TRUE(fl_mp_activate(FL_MP_RDAC, 5, 2, &c));
	CU_ASSERT_EQUAL(c.cdb[0], 0x55);
	CU_ASSERT_EQUAL(c.cdb[7] << 8 | c.cdb[8], 8 + 4 + 0x128);
	CU_ASSERT_EQUAL(c.data_len, 8 + 4 + 0x128);
	CU_ASSERT_EQUAL(c.data[8], 0x6c);
	CU_ASSERT_EQUAL(c.data[9], 0x01);
	CU_ASSERT_EQUAL(c.data[10] << 8 | c.data[11], 0x128);
	CU_ASSERT_EQUAL(c.data[12 + 33], 0x02);
	CU_ASSERT_EQUAL(c.data[12 + 38 + 5], 0x81);
	CU_ASSERT_EQUAL(c.data[12 + 38 + 4], 0x00);
	CU_ASSERT_TRUE(fl_mp_activate(FL_MP_RDAC, 300, 2, &c)); /* no table entry past 255 */
	for (size_t i = 12 + 38; i < 12 + 38 + 256; i++)
		CU_ASSERT_EQUAL(c.data[i], 0);
	/* hp_sw: START STOP UNIT with START */
	CU_ASSERT_TRUE(fl_mp_activate(FL_MP_HP_SW, 0, 2, &c));
	CU_ASSERT_EQUAL(c.cdb[0], 0x1b);
	CU_ASSERT_EQUAL(c.cdb[4], 0x01);
	CU_ASSERT_EQUAL(c.data_len, 0);
	CU_ASSERT_FALSE(fl_mp_activate(FL_MP_NONE, 0, 2, &c));
}

static void test_activate_result(void)
{
	struct fl_mp_answer a = {0};

	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_EMC, &a), FL_MP_ACT_DONE);
	/* emc: an array based copy in progress, an NDU: a temporary busy */
	a = (struct fl_mp_answer){.status = 0x02, .key = 0x05, .asc = 0x04, .ascq = 0x00};
	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_EMC, &a), FL_MP_ACT_BUSY);
	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_RDAC, &a), FL_MP_ACT_FAILED);
	a = (struct fl_mp_answer){.status = 0x02, .key = 0x02, .asc = 0x04, .ascq = 0x03};
	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_EMC, &a), FL_MP_ACT_BUSY);
	/* rdac quiescence, a unit attention, BUSY: resent */
	a = (struct fl_mp_answer){.status = 0x02, .key = 0x02, .asc = 0x04, .ascq = 0xa1};
	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_RDAC, &a), FL_MP_ACT_RETRY);
	a = (struct fl_mp_answer){.status = 0x02, .key = 0x06, .asc = 0x29};
	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_ALUA, &a), FL_MP_ACT_RETRY);
	a = (struct fl_mp_answer){.status = 0x08};
	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_HP_SW, &a), FL_MP_ACT_RETRY);
	/* anything else fails the path */
	a = (struct fl_mp_answer){.status = 0x02, .key = 0x05, .asc = 0x24};
	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_ALUA, &a), FL_MP_ACT_FAILED);
	a = (struct fl_mp_answer){.status = 0x18};
	CU_ASSERT_EQUAL(fl_mp_activate_result(FL_MP_RDAC, &a), FL_MP_ACT_FAILED);
}

static void test_sense_requeue(void)
{
	CU_ASSERT_TRUE(fl_mp_sense_requeue(FL_MP_RDAC, 0x02, 0x04, 0xa1));
	CU_ASSERT_TRUE(fl_mp_sense_requeue(FL_MP_RDAC, 0x02, 0xa1, 0x02));
	CU_ASSERT_TRUE(fl_mp_sense_requeue(FL_MP_RDAC, 0x02, 0x04, 0x01));
	CU_ASSERT_FALSE(fl_mp_sense_requeue(FL_MP_RDAC, 0x02, 0x04, 0x81)); /* bypass the path */
	CU_ASSERT_FALSE(fl_mp_sense_requeue(FL_MP_RDAC, 0x05, 0x94, 0x01)); /* not owned: fails */
	CU_ASSERT_FALSE(fl_mp_sense_requeue(FL_MP_EMC, 0x02, 0x04, 0xa1));
	CU_ASSERT_FALSE(fl_mp_sense_requeue(FL_MP_NONE, 0x02, 0x04, 0xa1));
}

static void test_path_error(void)
{
	CU_ASSERT_TRUE(fl_mp_path_error("EIO"));
	/* the application's errors: blk_path_error says no retry on another path */
	CU_ASSERT_FALSE(fl_mp_path_error("OK"));
	CU_ASSERT_FALSE(fl_mp_path_error("ENOSPC"));
	CU_ASSERT_FALSE(fl_mp_path_error("ENODATA"));
	CU_ASSERT_FALSE(fl_mp_path_error("EREMOTEIO"));
	CU_ASSERT_FALSE(fl_mp_path_error("EBADE"));
	CU_ASSERT_FALSE(fl_mp_path_error("EILSEQ"));
	CU_ASSERT_FALSE(fl_mp_path_error(NULL));
}

static void test_select_two_groups(void)
{
	const uint16_t groups[] = {1, 2};
	struct fl_mp m;

	fl_mp_init(&m, groups, 2);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 0);
	CU_ASSERT_TRUE(m.pg_init); /* the first group is initialised at the first I/O */
	CU_ASSERT_EQUAL(fl_mp_select(&m), 0);
	CU_ASSERT_FALSE(m.pg_init);
	fl_mp_fail(&m, 0);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 1);
	CU_ASSERT_TRUE(m.pg_init);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 1);
	CU_ASSERT_FALSE(m.pg_init);
	/* A back: I/O stays on B's group (no failback) until B fails */
	fl_mp_reinstate(&m, 0);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 1);
	fl_mp_fail(&m, 1);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 0);
	CU_ASSERT_TRUE(m.pg_init);
	fl_mp_fail(&m, 0);
	CU_ASSERT_EQUAL(fl_mp_select(&m), -1);
	fl_mp_fail(&m, 7);     /* out of range: ignored */
	fl_mp_reinstate(&m, -1);
	CU_ASSERT_EQUAL(fl_mp_select(&m), -1);
	/* with every path down the group is forgotten: B back, B's group initialised again */
	fl_mp_reinstate(&m, 1);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 1);
	CU_ASSERT_TRUE(m.pg_init);
	/* the last path fails and comes back before any choice: initialised again too */
	fl_mp_fail(&m, 1);
	fl_mp_reinstate(&m, 1);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 1);
	CU_ASSERT_TRUE(m.pg_init);
}

static void test_select_one_group(void)
{
	const uint16_t groups[] = {1, 1, 1};
	struct fl_mp m;

	fl_mp_init(&m, groups, 3);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 0);
	fl_mp_fail(&m, 0);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 1);
	CU_ASSERT_FALSE(m.pg_init); /* the same group: no pg_init */
	fl_mp_fail(&m, 1);
	CU_ASSERT_EQUAL(fl_mp_select(&m), 2);
	CU_ASSERT_FALSE(m.pg_init);
}

static void test_init_bounds(void)
{
	uint16_t groups[FL_MP_MAX_PATHS + 4] = {0};
	struct fl_mp m;

	fl_mp_init(&m, groups, FL_MP_MAX_PATHS + 4);
	CU_ASSERT_EQUAL(m.n, FL_MP_MAX_PATHS);
	fl_mp_init(&m, groups, 0);
	CU_ASSERT_EQUAL(fl_mp_select(&m), -1);
}

FL_TESTS(tests,
	 {"handler_of", test_handler_of},
	 {"rtpg_state", test_rtpg_state},
	 {"needs_activate", test_needs_activate},
	 {"query_and_activate_commands", test_query_and_activate_commands},
	 {"activate_result", test_activate_result},
	 {"sense_requeue", test_sense_requeue},
	 {"path_error", test_path_error},
	 {"select_two_groups", test_select_two_groups},
	 {"select_one_group", test_select_one_group},
	 {"init_bounds", test_init_bounds});

FL_SUITES(FL_SUITE("cli_mpath", NULL, NULL, tests));
