/* SPDX-License-Identifier: MIT */
/*
 * test_vendor_rdac.c - the RDAC personality (target/vendor_rdac.c) on a LUN
 * with two controllers: port 1 in group 1 (controller A, the owner and
 * preferred), port 2 in group 2 (B). What Linux's scsi_dh_rdac and
 * multipath-tools' rdac checker / prioritizer read and send: the identity,
 * VPD 00h listing C2h C4h C8h C9h, C9h's owner (CVP) and preferred-path
 * bits per controller, C4h's slot id per controller, C8h's LUN number; ILLEGAL
 * REQUEST 94/01 for media commands through the non-owner; MODE SELECT(6)
 * legacy and MODE SELECT(10) expanded page 2Ch moving ownership to the
 * controller receiving it; quiescence; the ownership API; a plain LUN untouched.
 */
#include "runner.h"
#include "tharness.h"

#include <errno.h>
#include <string.h>

/* INQUIRY VPD page through a port. */
static struct fl_cmd vpd(struct fl_lun *lun, uint16_t port, uint8_t page, uint8_t *buf)
{
	uint8_t cdb[6] = {0x12, 1, page, 0, 255, 0};

	memset(buf, 0xee, 255);
	return th_via(lun, port, port, cdb, 6, NULL, 0, buf, 255);
}

/* READ(10) of block 0 through a port. */
static struct fl_cmd read0(struct fl_lun *lun, uint16_t port)
{
	static uint8_t buf[512];
	uint8_t cdb[10];

	th_cdb10(cdb, 0x28, 0, 0, 1);
	return th_via(lun, port, port, cdb, 10, NULL, 0, buf, sizeof(buf));
}

/* An RDAC LUN 0 with two controllers; `quiesce_ms` as given. */
static struct fl_lun *rdac_lun(uint32_t quiesce_ms, uint16_t max_luns)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;

	th_config(&cfg);
	cfg.vendor = cfg.product = cfg.revision = NULL; /* the personality's */
	th_two_ports(&cfg, FL_ALUA_ACTIVE_OPTIMIZED, FL_ALUA_ACTIVE_OPTIMIZED);
	cfg.personality.name = "rdac";
	cfg.personality.quiesce_ms = quiesce_ms;
	cfg.personality.max_luns = max_luns;
	lun = th_lun(&cfg);
	th_settle(lun, 1, 1);
	th_settle(lun, 2, 2);
	return lun;
}

/* The legacy page 2Ch in a MODE SELECT(6) list: transfer LUN 0 here. */
static size_t legacy_transfer(uint8_t *p)
{
	memset(p, 0, 110);
	p[4] = 0x2c;
	p[5] = 0x68;
	p[6 + 33] = 0x02; /* RDAC MODE: transfer specified LUNs */
	p[6 + 36] = 20;	  /* quiescence timeout */
	p[6 + 37] = 0x02; /* forced quiescence */
	p[6 + 38 + 0] = 0x81;
	return 110;
}

/* The expanded page 2Ch/01h in a MODE SELECT(10) list: transfer LUN 0 here. */
static size_t expanded_transfer(uint8_t *p)
{
	memset(p, 0, 308);
	p[8] = 0x6c;
	p[9] = 0x01;
	p[10] = 0x01;
	p[11] = 0x28;
	p[12 + 33] = 0x02;
	p[12 + 38 + 0] = 0x81;
	return 308;
}

/* Identity, TPGS 0 and the vendor pages in VPD 00h. */
static void test_rdac_identity(void)
{
	struct fl_lun *lun = rdac_lun(0, 0);
	uint8_t cdb[6] = {0x12, 0, 0, 0, 96, 0}, buf[255];
	struct fl_cmd r = th_via(lun, 1, 1, cdb, 6, NULL, 0, buf, 96);

	TH_EXPECT_GOOD(&r, "standard INQUIRY");
	CU_ASSERT_EQUAL(memcmp(buf + 8, "NETAPP  INF-01-00       0820", 28), 0);
	CU_ASSERT_EQUAL(buf[5] & 0x30, 0); /* RDAC mode: no ALUA reported */
	r = vpd(lun, 1, 0x00, buf);
	TH_EXPECT_GOOD(&r, "VPD 00h");
	CU_ASSERT_EQUAL(buf[3], 10);
	CU_ASSERT_EQUAL(memcmp(buf + 4 + 6, "\xc2\xc4\xc8\xc9", 4), 0);
	fl_lun_destroy(lun);
}

/* C9h, C4h, C8h, C2h per controller. */
static void test_rdac_vpd_pages(void)
{
	struct fl_lun *lun = rdac_lun(0, 0);
	uint8_t buf[255];
	struct fl_cmd r;

	r = vpd(lun, 1, 0xc9, buf);
	TH_EXPECT_GOOD(&r, "C9h via A");
	CU_ASSERT_EQUAL(r.data_in_len, 48);
	CU_ASSERT_EQUAL(buf[3], 0x2c);
	CU_ASSERT_EQUAL(memcmp(buf + 4, "vace", 4), 0);
	CU_ASSERT_EQUAL(buf[8] & 0x81, 0x01); /* CVP, no AVT */
	CU_ASSERT_EQUAL(buf[9] & 0x0f, 0x01); /* preferred */
	r = vpd(lun, 2, 0xc9, buf);
	CU_ASSERT_EQUAL(buf[8] & 0x01, 0x00);
	CU_ASSERT_EQUAL(buf[9] & 0x0f, 0x02); /* secondary */
	r = vpd(lun, 1, 0xc4, buf);
	TH_EXPECT_GOOD(&r, "C4h via A");
	CU_ASSERT_EQUAL(memcmp(buf + 4, "subs", 4), 0);
	CU_ASSERT_EQUAL(buf[29], '1');
	vpd(lun, 2, 0xc4, buf);
	CU_ASSERT_EQUAL(buf[29], '2');
	r = vpd(lun, 1, 0xc8, buf);
	TH_EXPECT_GOOD(&r, "C8h");
	CU_ASSERT_EQUAL(r.data_in_len, 175);
	CU_ASSERT_EQUAL(memcmp(buf + 4, "edid", 4), 0);
	CU_ASSERT_EQUAL(buf[174], 0);
	CU_ASSERT_EQUAL(buf[108], 'f'); /* array label "faultlun" in UTF-16 */
	r = vpd(lun, 1, 0xc2, buf);
	TH_EXPECT_GOOD(&r, "C2h");
	CU_ASSERT_EQUAL(memcmp(buf + 4, "swr4", 4), 0);
	CU_ASSERT_EQUAL(buf[15], 255);
	fl_lun_destroy(lun);
}

/* I/O through the non-owner: 94/01; TUR, READ CAPACITY are served there. */
static void test_rdac_not_owned(void)
{
	struct fl_lun *lun = rdac_lun(0, 0);
	static const uint8_t tur[6] = {0};
	uint8_t cap[10] = {0x25}, buf[255];
	struct fl_cmd r;

	r = read0(lun, 2);
	TH_EXPECT(&r, FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x94, 0x01, "READ via B");
	r = read0(lun, 1);
	TH_EXPECT_GOOD(&r, "READ via A");
	r = th_via(lun, 2, 2, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&r, "TUR via B");
	memset(cap, 0, sizeof(cap));
	cap[0] = 0x25;
	r = th_via(lun, 2, 2, cap, 10, NULL, 0, buf, 8);
	TH_EXPECT_GOOD(&r, "READ CAPACITY via B");
	fl_lun_destroy(lun);
}

/* MODE SELECT(6) legacy through B moves the LUN to B; (10) expanded back to A. */
static void test_rdac_mode_select_transfer(void)
{
	struct fl_lun *lun = rdac_lun(0, 0);
	/* as scsi_dh_rdac sends them: PF is zero */
	uint8_t list[308], buf[255], cdb6[6] = {0x15, 0x00, 0, 0, 0, 0};
	uint8_t cdb10[10] = {0x55, 0x00, 0, 0, 0, 0, 0, 0, 0, 0};
	uint16_t owner = 0;
	size_t n = legacy_transfer(list);
	struct fl_cmd r;

	cdb6[4] = (uint8_t)n;
	r = th_via(lun, 2, 2, cdb6, 6, list, (uint32_t)n, NULL, 0);
	TH_EXPECT_GOOD(&r, "MODE SELECT(6) 2Ch via B");
	TH_EXPECT_OWNER(lun, 2);
	r = read0(lun, 2);
	TH_EXPECT_GOOD(&r, "READ via B after the transfer");
	r = read0(lun, 1);
	TH_EXPECT(&r, FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x94, 0x01, "READ via A");
	vpd(lun, 2, 0xc9, buf);
	CU_ASSERT_EQUAL(buf[8] & 0x01, 0x01);
	CU_ASSERT_EQUAL(buf[9] & 0x0f, 0x02); /* B owns it but is still not preferred */
	n = expanded_transfer(list);
	cdb10[8] = (uint8_t)n;
	cdb10[7] = (uint8_t)(n >> 8);
	r = th_via(lun, 1, 1, cdb10, 10, list, (uint32_t)n, NULL, 0);
	TH_EXPECT_GOOD(&r, "MODE SELECT(10) 2Ch/01h via A");
	fl_lun_owner(lun, &owner);
	CU_ASSERT_EQUAL(owner, 1);
	/* a wrong page length is refused, and moves nothing */
	n = legacy_transfer(list);
	list[5] = 0x60;
	r = th_via(lun, 2, 2, cdb6, 6, list, (uint32_t)n, NULL, 0);
	TH_EXPECT(&r, FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x26, 0x00, "bad length");
	fl_lun_owner(lun, &owner);
	CU_ASSERT_EQUAL(owner, 1);
	/* MODE SENSE shows the page; the owner's LUN table has 81h for LUN 0 */
	{
		uint8_t ms[6] = {0x1a, 0x08, 0x2c, 0, 255, 0};

		r = th_via(lun, 1, 1, ms, 6, NULL, 0, buf, 255);
		TH_EXPECT_GOOD(&r, "MODE SENSE 2Ch");
		CU_ASSERT_EQUAL(buf[4], 0x2c);
		CU_ASSERT_EQUAL(buf[5], 0x68);
		CU_ASSERT_EQUAL(buf[4 + 2 + 38], 0x81);
	}
	fl_lun_destroy(lun);
}

/* A quiescence that never ends: media commands get 04/A1 on both controllers. */
static void test_rdac_quiescence_forever(void)
{
	struct fl_lun *lun = rdac_lun(UINT32_MAX, 16);
	uint8_t buf[255];
	struct fl_cmd r;

	vpd(lun, 1, 0xc2, buf);
	CU_ASSERT_EQUAL(buf[15], 16); /* fewer than 32 LUNs: the legacy form */
	CU_ASSERT_EQUAL(fl_lun_set_owner(lun, 2), 0);
	r = read0(lun, 2);
	TH_EXPECT(&r, FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0xa1, "READ via B");
	r = read0(lun, 1);
	TH_EXPECT(&r, FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0xa1, "READ via A");
	vpd(lun, 1, 0xc9, buf);
	CU_ASSERT_EQUAL(buf[10], FL_ALUA_TRANSITIONING);
	CU_ASSERT_EQUAL(buf[12], FL_ALUA_TRANSITIONING);
	CU_ASSERT_EQUAL(fl_lun_set_owner(lun, 7), -ENOENT);
	fl_lun_destroy(lun);
}

/* A LUN without a personality has none of it. */
static void test_plain_lun_untouched(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t buf[255];
	uint16_t owner;
	struct fl_cmd r;

	th_config(&cfg);
	lun = th_lun(&cfg);
	th_settle(lun, 1, 1);
	r = vpd(lun, 1, 0x00, buf);
	CU_ASSERT_EQUAL(buf[3], 6);
	r = vpd(lun, 1, 0xc9, buf);
	TH_EXPECT(&r, FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x24, 0x00, "C9h");
	CU_ASSERT_EQUAL(fl_lun_owner(lun, &owner), -ENOTSUP);
	CU_ASSERT_EQUAL(fl_lun_set_owner(lun, 1), -ENOTSUP);
	fl_lun_destroy(lun);
}

FL_TESTS(rdac_tests,
	 FL_TEST(test_rdac_identity),
	 FL_TEST(test_rdac_vpd_pages),
	 FL_TEST(test_rdac_not_owned),
	 FL_TEST(test_rdac_mode_select_transfer),
	 FL_TEST(test_rdac_quiescence_forever),
	 FL_TEST(test_plain_lun_untouched));

FL_SUITES(FL_SUITE("vendor_rdac", NULL, NULL, rdac_tests));
