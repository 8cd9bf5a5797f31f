/* SPDX-License-Identifier: MIT */
/*
 * test_vendor_emc.c - the EMC CLARiiON / VNX personality (target/vendor_emc.c)
 * on a LUN with two storage processors: port 1 on SP A (group 1, the owner),
 * port 2 on SP B (group 2). What Linux's scsi_dh_emc and multipath-tools'
 * emc_clariion checker read: the identity, the extended standard INQUIRY
 * with the SP model, VPD C0h per port; the NOT READY 04/03 of the SP that
 * does not own the LUN; the trespass mode page 22h in MODE SELECT(10) and
 * MODE SELECT(6) moving the LUN to the SP of the port it came through.
 */
#include "runner.h"
#include "tharness.h"

#include <string.h>

/* INQUIRY through a port: standard data (page < 0) or VPD page `page`. */
static struct fl_cmd inquiry(struct fl_lun *lun, uint16_t port, int page, uint8_t *buf,
			     uint16_t cap)
{
	uint8_t cdb[6] = {
	    0x12, page >= 0, (uint8_t)(page >= 0 ? page : 0), (uint8_t)(cap >> 8), (uint8_t)cap, 0};

	memset(buf, 0, cap);
	return th_via(lun, port, port, cdb, 6, NULL, 0, buf, cap);
}

/*
 * The long trespass as Linux 6.1 sends it: MODE SELECT(10) with PF zero,
 * 8-byte header, page 22h of length 9 and six bytes after the target.
 */
static struct fl_cmd trespass_long(struct fl_lun *lun, uint16_t port)
{
	static const uint8_t cdb[10] = {0x55, 0, 0, 0, 0, 0, 0, 0, 19, 0};
	static const uint8_t data[19] = {0, 0, 0, 0, 0, 0, 0, 0, 0x22, 0x09, 0x81, 0xff, 0xff};

	return th_via(lun, port, port, cdb, 10, data, sizeof(data), NULL, 0);
}

/* The short trespass: MODE SELECT(6), 4-byte header, page 22h of length 2. */
static struct fl_cmd trespass_short(struct fl_lun *lun, uint16_t port)
{
	static const uint8_t cdb[6] = {0x15, 0x10, 0, 0, 8, 0};
	static const uint8_t data[8] = {0, 0, 0, 0, 0x22, 0x02, 0x81, 0xff};

	return th_via(lun, port, port, cdb, 6, data, sizeof(data), NULL, 0);
}

/* The identity scsi_dh.c and multipath-tools match, without TPGS (no ALUA). */
static void test_identity(void)
{
	struct fl_lun *lun = th_personality_lun("emc");
	uint8_t buf[255];

	TH_EXPECT_CMD_GOOD(inquiry(lun, 1, -1, buf, sizeof(buf)), "standard INQUIRY");
	CU_ASSERT_NSTRING_EQUAL(buf + 8, "DGC     ", 8);
	CU_ASSERT_NSTRING_EQUAL(buf + 16, "VRAID", 5);
	CU_ASSERT_EQUAL(buf[5] & 0x30, 0); /* TPGS 00b, or scsi_dh_alua would take the LUN */
	fl_lun_destroy(lun);
}

/* The extended standard INQUIRY: model name after the array serial number. */
static void test_extended_inquiry(void)
{
	struct fl_lun *lun = th_personality_lun("emc");
	uint8_t buf[255];
	struct fl_cmd res;
	unsigned len, slen, mlen;

	res = inquiry(lun, 1, -1, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "standard INQUIRY, 255 bytes");
	len = buf[4] + 5u;
	TH_CHECK(len >= 160, "additional length %u makes %u bytes, want >= 160", buf[4], len);
	TH_CHECK(res.data_in_len == len, "data-in %u, want %u", res.data_in_len, len);
	slen = buf[160];
	mlen = buf[99];
	TH_CHECK(slen > 0 && mlen > 0 && 161 + slen + mlen <= len,
		 "serial length %u, model length %u in %u bytes", slen, mlen, len);
	CU_ASSERT_NSTRING_EQUAL(buf + 161 + slen, "VNX5300", mlen);
	/* a 36-byte INQUIRY gets the first 36 bytes only */
	res = inquiry(lun, 1, -1, buf, 36);
	TH_EXPECT_GOOD(&res, "standard INQUIRY, 36 bytes");
	CU_ASSERT_EQUAL(res.data_in_len, 36);
	fl_lun_destroy(lun);
}

/* VPD 00h lists C0h; C0h through each SP says owned / bound, current and default SP. */
static void test_vpd_c0(void)
{
	struct fl_lun *lun = th_personality_lun("emc");
	uint8_t a[252], b[252];
	bool listed = false;

	TH_EXPECT_CMD_GOOD(inquiry(lun, 1, 0x00, a, sizeof(a)), "VPD 00h");
	for (unsigned i = 4; i < 4u + a[3]; i++)
		listed |= a[i] == 0xc0;
	TH_CHECK(listed, "VPD 00h lists C0h");
	TH_EXPECT_CMD_GOOD(inquiry(lun, 1, 0xc0, a, sizeof(a)), "VPD C0h through SP A");
	TH_EXPECT_CMD_GOOD(inquiry(lun, 2, 0xc0, b, sizeof(b)), "VPD C0h through SP B");
	CU_ASSERT_EQUAL(a[1], 0xc0);
	CU_ASSERT_EQUAL(a[9], 0);	     /* page revision the checker wants */
	CU_ASSERT_EQUAL(a[27], 0x03);	     /* effective initiator type */
	CU_ASSERT_EQUAL(a[28] & 0x0f, 0x04); /* failover mode 4 */
	CU_ASSERT_EQUAL(a[30] & 0x04, 0x04); /* ARRAYCOMMPATH */
	CU_ASSERT_EQUAL(a[48], 0);	     /* normal operation (no NDU) */
	CU_ASSERT_EQUAL(a[4], 2);	     /* owned through SP A */
	CU_ASSERT_EQUAL(b[4], 1);	     /* bound through SP B */
	CU_ASSERT_EQUAL(a[5], 0);	     /* default SP A */
	CU_ASSERT_EQUAL(b[5], 0);
	CU_ASSERT_EQUAL(a[8], 0); /* current SP A, through either */
	CU_ASSERT_EQUAL(b[8], 0);
	CU_ASSERT(memcmp(a + 10, b + 10, 16) == 0); /* same LUN WWN on both paths */
	fl_lun_destroy(lun);
}

/* The SP that does not own the LUN answers TUR and reads with 04/03; the owner serves. */
static void test_not_owned_sense(void)
{
	static const uint8_t tur[6] = {0};
	static const uint8_t rcap[10] = {0x25};
	struct fl_lun *lun = th_personality_lun("emc");
	uint8_t buf[8];

	th_settle(lun, 1, 1);
	th_settle(lun, 2, 2);
	TH_EXPECT_CMD_GOOD(th_read1(lun, 1, 1), "READ through the owning SP");
	TH_EXPECT_CMD(th_read1(lun, 2, 2), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x03,
		      "READ through the peer SP");
	TH_EXPECT_CMD(th_via(lun, 2, 2, tur, 6, NULL, 0, NULL, 0), FL_STATUS_CHECK_CONDITION,
		      FL_KEY_NOT_READY, 0x04, 0x03, "TEST UNIT READY through the peer SP");
	TH_EXPECT_CMD_GOOD(th_via(lun, 2, 2, rcap, 10, NULL, 0, buf, sizeof(buf)),
			   "READ CAPACITY(10) through the peer SP");
	fl_lun_destroy(lun);
}

/* MODE SELECT(10) page 22h through SP B moves the LUN there; C0h follows it. */
static void test_long_trespass(void)
{
	struct fl_lun *lun = th_personality_lun("emc");
	uint8_t c0[252];

	th_settle(lun, 1, 1);
	th_settle(lun, 2, 2);
	TH_EXPECT_CMD_GOOD(trespass_long(lun, 2), "long trespass through SP B");
	TH_EXPECT_OWNER(lun, 2);
	th_settle(lun, 2, 2);
	TH_EXPECT_CMD_GOOD(th_read1(lun, 2, 2), "READ through SP B after the trespass");
	th_settle(lun, 1, 1);
	TH_EXPECT_CMD(th_read1(lun, 1, 1), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x03,
		      "READ through SP A after the trespass");
	inquiry(lun, 2, 0xc0, c0, sizeof(c0));
	CU_ASSERT_EQUAL(c0[4], 2); /* owned through SP B */
	CU_ASSERT_EQUAL(c0[8], 1); /* current SP B */
	CU_ASSERT_EQUAL(c0[5], 0); /* default SP still A */
	inquiry(lun, 1, 0xc0, c0, sizeof(c0));
	CU_ASSERT_EQUAL(c0[4], 1); /* bound through SP A */
	/* a trespass through the owner changes nothing */
	TH_EXPECT_CMD_GOOD(trespass_long(lun, 2), "long trespass through the owner");
	TH_EXPECT_OWNER(lun, 2);
	fl_lun_destroy(lun);
}

/* MODE SELECT(6) with the short page moves the LUN back to SP A. */
static void test_short_trespass(void)
{
	struct fl_lun *lun = th_personality_lun("emc");

	CU_ASSERT_EQUAL(fl_lun_set_owner(lun, 2), 0);
	th_settle(lun, 1, 1);
	TH_EXPECT_CMD(th_read1(lun, 1, 1), FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x03,
		      "READ through SP A once the array moved the LUN to SP B");
	TH_EXPECT_CMD_GOOD(trespass_short(lun, 1), "short trespass through SP A");
	TH_EXPECT_OWNER(lun, 1);
	th_settle(lun, 1, 1);
	TH_EXPECT_CMD_GOOD(th_read1(lun, 1, 1), "READ through SP A after the short trespass");
	fl_lun_destroy(lun);
}

/* A page 22h with a bad length, trespass code or target is refused (26/00); no move. */
static void test_bad_trespass_page(void)
{
	static const uint8_t cdb[10] = {0x55, 0x10, 0, 0, 0, 0, 0, 0, 19, 0};
	static const struct {
		const char *what;
		uint8_t b9, b10, b11;
	} rows[] = {
	    {"page length 8", 0x08, 0x81, 0xff},
	    {"trespass code 2", 0x09, 0x82, 0xff},
	    {"trespass target 1234h", 0x09, 0x81, 0x12},
	};
	struct fl_lun *lun = th_personality_lun("emc");
	uint16_t owner = 0;

	th_settle(lun, 2, 2);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t data[19] = {0, 0, 0, 0, 0, 0, 0, 0, 0x22};

		data[9] = rows[i].b9;
		data[10] = rows[i].b10;
		data[11] = rows[i].b11;
		data[12] = rows[i].b11 == 0xff ? 0xff : 0x34;
		TH_EXPECT_CMD(th_via(lun, 2, 2, cdb, 10, data, sizeof(data), NULL, 0),
			      FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x26, 0x00,
			      rows[i].what);
		CU_ASSERT_EQUAL(fl_lun_owner(lun, &owner), 0);
		TH_CHECK(owner == 1, "%s: owner %u, want 1", rows[i].what, owner);
	}
	fl_lun_destroy(lun);
}

FL_TESTS(emc_tests,
	 FL_TEST(test_identity),
	 FL_TEST(test_extended_inquiry),
	 FL_TEST(test_vpd_c0),
	 FL_TEST(test_not_owned_sense),
	 FL_TEST(test_long_trespass),
	 FL_TEST(test_short_trespass),
	 FL_TEST(test_bad_trespass_page));

FL_SUITES(FL_SUITE("vendor_emc", NULL, NULL, emc_tests));
