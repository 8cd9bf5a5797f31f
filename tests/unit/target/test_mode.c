/* SPDX-License-Identifier: MIT */
/*
 * test_mode.c - MODE SENSE (6, 10) and MODE SELECT (6, 10) of mode.c: the
 * caching, control and informational exceptions pages, page 3Fh, page
 * control current / changeable / default / saved, block descriptors, SP,
 * parameter list validation (1A/00, 26/00 with the field pointer), UA 2A/01
 * for the other nexuses, D_SENSE switching the sense format, and SWP
 * write-protecting the medium.
 */
#include "runner.h"
#include "spc_cases.h"
#include "target_internal.h"

#include <string.h>

/* MODE SENSE(6) of page `page` with page control `pc` into buf (GOOD expected). */
static uint32_t sense6(struct fl_lun *lun, uint64_t nexus, uint8_t pc, uint8_t page, bool dbd,
		       uint8_t *buf)
{
	uint8_t cdb[6] = {0x1a, dbd ? 0x08 : 0, (uint8_t)(pc << 6 | page), 0, 255, 0};
	struct fl_cmd res = sc_run1(lun, nexus, cdb, 6, NULL, 0, buf, 255);

	TH_EXPECT_GOOD(&res, "MODE SENSE(6)");
	return res.data_in_len;
}

/* Finds page `code` in MODE SENSE(6) data; NULL when absent. */
static const uint8_t *find_page6(const uint8_t *buf, uint32_t n, uint8_t code)
{
	uint32_t off = 4u + buf[3];

	while (off + 2 <= n) {
		if ((buf[off] & 0x3f) == code)
			return buf + off;
		off += 2u + buf[off + 1];
	}
	return NULL;
}

/* A LUN whose UAs from nexuses 1 and 2 are cleared. */
static struct fl_lun *ready_lun(const struct fl_lun_config *cfg)
{
	struct fl_lun *lun = th_lun(cfg);

	th_clear_ua(lun, 1);
	th_clear_ua(lun, 2);
	return lun;
}

/* MODE SENSE(6) 3Fh: header, block descriptor, the three pages in order. */
static void test_mode_sense6_all_pages(void)
{
	struct fl_lun *lun = ready_lun(NULL);
	static const uint8_t want[][2] = {{0x08, 0x12}, {0x0a, 0x0a}, {0x1c, 0x0a}};
	uint8_t buf[255];
	uint32_t n = sense6(lun, 1, 0, 0x3f, false, buf), off;

	CU_ASSERT_EQUAL(n, 4 + 8 + 20 + 12 + 12);
	CU_ASSERT_EQUAL(buf[0], n - 1); /* MODE DATA LENGTH */
	CU_ASSERT_EQUAL(buf[1], 0);	/* medium type */
	CU_ASSERT_EQUAL(buf[2], 0x10);	/* DPOFUA, not WP */
	CU_ASSERT_EQUAL(buf[3], 8);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), TH_BLOCKS);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 8) & 0xffffff, TH_BS);
	off = 12;
	for (size_t i = 0; i < 3; i++) {
		TH_CHECK((buf[off] & 0x3f) == want[i][0] && buf[off + 1] == want[i][1],
			 "page %zu is %02xh len %u", i, buf[off] & 0x3f, buf[off + 1]);
		CU_ASSERT(buf[off] & 0x80); /* PS: savable */
		off += 2u + buf[off + 1];
	}
	/* caching page: WCE from the configuration (the test LUN has it on) */
	CU_ASSERT(find_page6(buf, n, 0x08)[2] & 0x04);
	/* DBD: no block descriptor */
	n = sense6(lun, 1, 0, 0x3f, true, buf);
	CU_ASSERT_EQUAL(buf[3], 0);
	CU_ASSERT_EQUAL(n, 4 + 20 + 12 + 12);
	/* subpage FFh with page 3Fh is all pages too */
	{
		uint8_t cdb[6] = {0x1a, 0x08, 0x3f, 0xff, 255, 0};
		struct fl_cmd res = sc_run1(lun, 1, cdb, 6, NULL, 0, buf, 255);

		TH_EXPECT_GOOD(&res, "3Fh/FFh");
		CU_ASSERT_EQUAL(res.data_in_len, n);
	}
	/* one page, truncated by the allocation length */
	{
		uint8_t cdb[6] = {0x1a, 0, 0x0a, 0, 10, 0};
		struct fl_cmd res = sc_run1(lun, 1, cdb, 6, NULL, 0, buf, 255);

		TH_EXPECT_GOOD(&res, "control page, 10 bytes");
		CU_ASSERT_EQUAL(res.data_in_len, 10);
		CU_ASSERT_EQUAL(buf[0], 4 + 8 + 12 - 1);
	}
	fl_lun_destroy(lun);
}

/* MODE SENSE(10): short and long (LLBAA) block descriptors. */
static void test_mode_sense10_block_descriptors(void)
{
	uint8_t cdb[10] = {0x5a, 0, 0x08, 0, 0, 0, 0, 0, 255, 0}, buf[255];
	struct fl_lun *lun = ready_lun(NULL);
	struct fl_cmd res;

	res = sc_run1(lun, 1, cdb, 10, NULL, 0, buf, 255);
	TH_EXPECT_GOOD(&res, "MODE SENSE(10) caching");
	CU_ASSERT_EQUAL(res.data_in_len, 8 + 8 + 20);
	CU_ASSERT_EQUAL(buf[0] << 8 | buf[1], 8 + 8 + 20 - 2);
	CU_ASSERT_EQUAL(buf[3], 0x10);
	CU_ASSERT_EQUAL(buf[4], 0); /* LONGLBA */
	CU_ASSERT_EQUAL(buf[6] << 8 | buf[7], 8);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 8), TH_BLOCKS);
	CU_ASSERT_EQUAL(buf[16], 0x88);
	cdb[1] = 0x10; /* LLBAA */
	res = sc_run1(lun, 1, cdb, 10, NULL, 0, buf, 255);
	TH_EXPECT_GOOD(&res, "MODE SENSE(10) LLBAA");
	CU_ASSERT_EQUAL(res.data_in_len, 8 + 16 + 20);
	CU_ASSERT_EQUAL(buf[4], 1);
	CU_ASSERT_EQUAL(buf[6] << 8 | buf[7], 16);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), TH_BLOCKS);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 20), TH_BS);
	fl_lun_destroy(lun);
}

/* Page control: changeable masks, defaults from the configuration, saved. */
static void test_mode_sense_page_control(void)
{
	/* clang-format off */
	static const struct {
		uint8_t page, byte, mask;
	} masks[] = {
	    {0x08, 2, 0x05}, {0x08, 3, 0x00}, {0x0a, 2, 0x04}, {0x0a, 3, 0x00}, {0x0a, 4, 0x08},
	    {0x1c, 2, 0x8d}, {0x1c, 3, 0x0f}, {0x1c, 4, 0xff}, {0x1c, 11, 0xff},
	};
	/* clang-format on */
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t buf[255];
	uint32_t n;

	th_config(&cfg);
	cfg.write_cache = false;
	cfg.d_sense = true;
	lun = ready_lun(&cfg);
	n = sense6(lun, 1, 1, 0x3f, true, buf);
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		const uint8_t *p = find_page6(buf, n, masks[i].page);

		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		TH_CHECK(p[masks[i].byte] == masks[i].mask, "page %02xh byte %u changeable %02xh",
			 masks[i].page, masks[i].byte, p[masks[i].byte]);
	}
	n = sense6(lun, 1, 2, 0x3f, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0);	   /* WCE default off */
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x0a)[2] & 0x04, 0x04); /* D_SENSE default on */
	n = sense6(lun, 1, 3, 0x3f, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0);
	fl_lun_destroy(lun);
}

/* MODE SENSE errors: unknown page, subpage, reserved bits. */
static void test_mode_sense_errors(void)
{
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"test_mode_sense6_unknown_page", {0x1a, 0, 0x19, 0, 255, 0}, 6, .in_cap = 255,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 5)},
	    {"test_mode_sense6_page_00", {0x1a, 0, 0x00, 0, 255, 0}, 6, .in_cap = 255,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 5)},
	    {"test_mode_sense6_subpage", {0x1a, 0, 0x08, 0x01, 255, 0}, 6, .in_cap = 255,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(3, 7)},
	    {"test_mode_sense6_llbaa_reserved", {0x1a, 0x10, 0x08, 0, 255, 0}, 6, .in_cap = 255,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 4)},
	    {"test_mode_sense10_reserved_bit", {0x5a, 0x01, 0x3f, 0, 0, 0, 0, 0, 255, 0}, 10,
	     .in_cap = 255, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 0)},
	    {"test_mode_sense10_unknown_page", {0x5a, 0, 0x01, 0, 0, 0, 0, 0, 255, 0}, 10,
	     .in_cap = 255, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 5)},
	    {"test_mode_sense6_saved_ok", {0x1a, 0, 0xc8, 0, 255, 0}, 6, .in_cap = 255,
	     .status = GOOD},
	    {"test_mode_sense6_alloc_0", {0x1a, 0, 0x3f, 0, 0, 0}, 6, .in_cap = 255,
	     .status = GOOD},
	};
	/* clang-format on */
	struct fl_lun *lun = ready_lun(NULL);

	SC_RUN_CASES(lun, 1, cases);
	fl_lun_destroy(lun);
}

/* Parameter list of MODE SELECT(6): header, optional descriptor, one page. */
static uint32_t select6_list(uint8_t *p, const uint8_t *page, uint32_t page_len, bool bd)
{
	memset(p, 0, 64);
	p[3] = bd ? 8 : 0;
	if (bd) {
		p[4 + 0] = (uint8_t)(TH_BLOCKS >> 24);
		p[4 + 1] = (uint8_t)(TH_BLOCKS >> 16);
		p[4 + 2] = (uint8_t)(TH_BLOCKS >> 8);
		p[4 + 3] = (uint8_t)TH_BLOCKS;
		p[4 + 6] = (uint8_t)(TH_BS >> 8);
		p[4 + 7] = (uint8_t)TH_BS;
	}
	memcpy(p + 4 + (bd ? 8 : 0), page, page_len);
	return 4 + (bd ? 8 : 0) + page_len;
}

/* Sends a MODE SELECT(6) with PF and the given list from a nexus. */
static struct fl_cmd select6(struct fl_lun *lun, uint64_t nexus, bool sp, const uint8_t *list,
			     uint32_t len)
{
	uint8_t cdb[6] = {0x15, (uint8_t)(0x10 | (sp ? 1 : 0)), 0, 0, (uint8_t)len, 0};

	return sc_run1(lun, nexus, cdb, 6, list, len, NULL, 0);
}

/* Turning WCE off: MODE SENSE shows it, the LUN uses it, nexus 2 hears 2A/01. */
static void test_mode_select_caching_wce(void)
{
	uint8_t page[20] = {0x08, 0x12, 0x00}, list[64], buf[255], tur[6] = {0};
	struct fl_lun *lun = ready_lun(NULL);
	struct fl_lun_info info;
	struct fl_cmd res;
	uint32_t len = select6_list(list, page, sizeof(page), true), n;

	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "MODE SELECT(6) WCE=0");
	n = sense6(lun, 1, 0, 0x08, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0);
	fl_lun_get_info(lun, &info);
	CU_ASSERT_FALSE(info.write_cache);
	/* SPC-4 r37 6.9: MODE PARAMETERS CHANGED for every other I_T nexus */
	res = sc_run1(lun, 2, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, UA, 0x2a, 0x01, "nexus 2 hears 2A/01");
	res = sc_run1(lun, 2, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "once");
	res = sc_run1(lun, 1, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "not the nexus that changed it");
	/* the same values again change nothing: no new UA */
	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "MODE SELECT(6) again");
	res = sc_run1(lun, 2, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "no UA without a change");
	/* RCD is changeable too */
	page[2] = 0x05;
	len = select6_list(list, page, sizeof(page), false);
	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "WCE=1 RCD=1");
	n = sense6(lun, 1, 0, 0x08, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x05, 0x05);
	fl_lun_destroy(lun);
}

/* D_SENSE=1 switches the next sense data to descriptor format, and back. */
static void test_mode_select_d_sense_switches_format(void)
{
	uint8_t page[12] = {0x0a, 0x0a, 0x04, 0x10, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
	uint8_t list[64], bad[6] = {0xc1, 0, 0, 0, 0, 0}, rs[6] = {0x03, 0, 0, 0, 252, 0};
	uint8_t buf[252];
	struct fl_lun *lun = ready_lun(NULL);
	uint32_t len = select6_list(list, page, sizeof(page), false);
	struct fl_cmd res;

	res = sc_run1(lun, 1, bad, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x20, 0, "fixed before");
	CU_ASSERT_EQUAL(res.sense[0], 0x70);
	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "D_SENSE=1");
	res = sc_run1(lun, 1, bad, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x20, 0, "descriptor after");
	CU_ASSERT_EQUAL(res.sense[0], 0x72);
	/* the UA nexus 2 gets is in descriptor format already */
	res = sc_run1(lun, 2, (uint8_t[]){0, 0, 0, 0, 0, 0}, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, UA, 0x2a, 0x01, "nexus 2 UA");
	CU_ASSERT_EQUAL(res.sense[0], 0x72);
	/* REQUEST SENSE keeps its own DESC bit */
	res = sc_run1(lun, 2, rs, 6, NULL, 0, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REQUEST SENSE");
	CU_ASSERT_EQUAL(buf[0], 0x70);
	page[2] = 0x00;
	len = select6_list(list, page, sizeof(page), false);
	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "D_SENSE=0");
	res = sc_run1(lun, 1, bad, 6, NULL, 0, NULL, 0);
	CU_ASSERT_EQUAL(res.sense[0], 0x70);
	fl_lun_destroy(lun);
}

/*
 * SWP=1 (SPC-4 r37 7.5.8) write-protects the medium: WP in the MODE SENSE
 * header, every write refused DATA PROTECT / WRITE PROTECTED (27/00), reads
 * served; the write cache destages first; SWP=0 lifts it.
 */
static void test_mode_select_swp_write_protects(void)
{
	uint8_t page[12] = {0x0a, 0x0a, 0, 0x10, 0x08, 0, 0, 0, 0xff, 0xff, 0, 0};
	uint8_t list[64], buf[TH_BS], blk[TH_BS] = {0x5a};
	uint8_t wr[10] = {0x2a, 0, 0, 0, 0, 8, 0, 0, 1, 0}, rd[10] = {0x28, 0, 0, 0, 0, 8, 0, 0, 1, 0};
	struct fl_lun *lun = ready_lun(NULL);
	uint32_t len = select6_list(list, page, sizeof(page), false), n;
	struct fl_cmd res;

	res = sc_run1(lun, 1, wr, 10, blk, sizeof(blk), NULL, 0);
	TH_EXPECT_GOOD(&res, "cached write before SWP");
	CU_ASSERT_EQUAL(dirty_count(lun), 1);
	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "MODE SELECT(6) SWP=1");
	CU_ASSERT_EQUAL(dirty_count(lun), 0); /* destaged */
	n = sense6(lun, 1, 0, 0x0a, false, buf);
	CU_ASSERT_EQUAL(buf[2] & 0x80, 0x80); /* WP */
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x0a)[4] & 0x08, 0x08);
	res = sc_run1(lun, 1, wr, 10, blk, sizeof(blk), NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_DATA_PROTECT, 0x27, 0x00, "write under SWP");
	res = sc_run1(lun, 1, rd, 10, NULL, 0, buf, TH_BS);
	TH_EXPECT_GOOD(&res, "read under SWP");
	CU_ASSERT_EQUAL(buf[0], 0x5a);
	page[4] = 0;
	len = select6_list(list, page, sizeof(page), false);
	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "MODE SELECT(6) SWP=0");
	sense6(lun, 1, 0, 0x0a, false, buf);
	CU_ASSERT_EQUAL(buf[2] & 0x80, 0);
	res = sc_run1(lun, 1, wr, 10, blk, sizeof(blk), NULL, 0);
	TH_EXPECT_GOOD(&res, "write after SWP=0");
	fl_lun_destroy(lun);
}

/* Informational exceptions: changeable fields stick; bad values refused. */
static void test_mode_select_iec(void)
{
	uint8_t page[12] = {0x1c, 0x0a, 0x80 | 0x01, 0x04, 0, 0, 0x01, 0x00, 0, 0, 0, 3};
	uint8_t list[64], buf[255];
	struct fl_lun *lun = ready_lun(NULL);
	uint32_t len = select6_list(list, page, sizeof(page), false), n;
	const uint8_t *p;
	struct fl_cmd res;

	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "IEC page");
	n = sense6(lun, 1, 0, 0x1c, true, buf);
	p = find_page6(buf, n, 0x1c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(memcmp(p + 2, page + 2, 10), 0);
	fl_lun_destroy(lun);
}

/* MODE SELECT parameter list validation, each with its field pointer. */
static void test_mode_select_errors(void)
{
	/* the current pages of a default test LUN (WCE=1) */
#define CACHING 0x08, 0x12, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define CONTROL(b2, b3, b4) 0x0a, 0x0a, b2, b3, b4, 0, 0, 0, 0xff, 0xff, 0, 0
#define IEC(b2, b3) 0x1c, 0x0a, b2, b3, 0, 0, 0, 0, 0, 0, 0, 0
#define SEL6(n) {0x15, 0x10, 0, 0, n, 0}, 6
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"test_mode_select_len0_ok", {0x15, 0x10, 0, 0, 0, 0}, 6, .status = GOOD},
	    {"test_mode_select_pf0", {0x15, 0x00, 0, 0, 4, 0}, 6, {0, 0, 0, 0}, 4, .status = CC,
	     .key = IR, .asc = 0x24, SKS_CDB(1, 4)},
	    {"test_mode_select_reserved_cdb_bit", {0x15, 0x12, 0, 0, 4, 0}, 6, {0, 0, 0, 0}, 4,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 1)},
	    {"test_mode_select_header_only_ok", SEL6(4), {0, 0, 0, 0}, 4, .status = GOOD},
	    {"test_mode_select_short_header", SEL6(3), {0, 0, 0}, 3, .status = CC, .key = IR,
	     .asc = 0x1a},
	    {"test_mode_select_medium_type", SEL6(4), {0, 0x01, 0, 0}, 4, .status = CC, .key = IR,
	     .asc = 0x26, SKS_PARAM(1, 7)},
	    {"test_mode_select_bdl_4", SEL6(8), {0, 0, 0, 4, 0, 0, 0, 0}, 8, .status = CC,
	     .key = IR, .asc = 0x26, SKS_PARAM(3, 7)},
	    {"test_mode_select_bd_truncated", SEL6(8), {0, 0, 0, 8, 0, 0, 0, 0}, 8, .status = CC,
	     .key = IR, .asc = 0x1a},
	    {"test_mode_select_bd_block_size", SEL6(12),
	     {0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0x10, 0x00}, 12, .status = CC, .key = IR,
	     .asc = 0x26, SKS_PARAM(9, 7)},
	    {"test_mode_select_bd_num_blocks", SEL6(12),
	     {0, 0, 0, 8, 0, 0, 0, 5, 0, 0, 0x02, 0x00}, 12, .status = CC, .key = IR,
	     .asc = 0x26, SKS_PARAM(4, 7)},
	    {"test_mode_select_bd_ok", SEL6(12), {0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0x02, 0x00}, 12,
	     .status = GOOD},
	    {"test_mode_select_unknown_page", SEL6(8), {0, 0, 0, 0, 0x19, 0x02, 0, 0}, 8,
	     .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(4, 5)},
	    {"test_mode_select_subpage_format", SEL6(8), {0, 0, 0, 0, 0x48, 0x02, 0, 0}, 8,
	     .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(4, 6)},
	    {"test_mode_select_page_length", SEL6(16), {0, 0, 0, 0, CONTROL(0, 0x10, 0)}, 16,
	     .status = GOOD},
	    {"test_mode_select_wrong_page_length", SEL6(14),
	     {0, 0, 0, 0, 0x0a, 0x08, 0, 0x10, 0, 0, 0, 0, 0xff, 0xff}, 14, .status = CC,
	     .key = IR, .asc = 0x26, SKS_PARAM(5, 7)},
	    {"test_mode_select_page_truncated", SEL6(10), {0, 0, 0, 0, CONTROL(0, 0x10, 0)}, 10,
	     .status = CC, .key = IR, .asc = 0x1a},
	    {"test_mode_select_lone_page_byte", SEL6(5), {0, 0, 0, 0, 0x08}, 5, .status = CC,
	     .key = IR, .asc = 0x1a},
	    {"test_mode_select_control_qerr_not_changeable", SEL6(16),
	     {0, 0, 0, 0, CONTROL(0, 0x12, 0)}, 16, .status = CC, .key = IR, .asc = 0x26,
	     SKS_PARAM(7, 1)},
	    {"test_mode_select_control_tst_not_changeable", SEL6(16),
	     {0, 0, 0, 0, CONTROL(0x20, 0x10, 0)}, 16, .status = CC, .key = IR, .asc = 0x26,
	     SKS_PARAM(6, 5)},
	    {"test_mode_select_control_tas_not_changeable", SEL6(16),
	     {0, 0, 0, 0, CONTROL(0, 0x10, 0x40)}, 16, .status = CC, .key = IR, .asc = 0x26,
	     SKS_PARAM(8, 6)},
	    {"test_mode_select_control_busy_timeout", SEL6(16),
	     {0, 0, 0, 0, 0x0a, 0x0a, 0, 0x10, 0, 0, 0, 0, 0x00, 0x10, 0, 0}, 16, .status = CC,
	     .key = IR, .asc = 0x26, SKS_PARAM(12, 7)},
	    {"test_mode_select_caching_ic_not_changeable", SEL6(24),
	     {0, 0, 0, 0, 0x08, 0x12, 0x84}, 24, .status = CC, .key = IR, .asc = 0x26,
	     SKS_PARAM(6, 7)},
	    {"test_mode_select_iec_mrie_reserved", SEL6(16), {0, 0, 0, 0, IEC(0, 7)}, 16,
	     .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(7, 3)},
	    {"test_mode_select_iec_test_and_dexcpt", SEL6(16), {0, 0, 0, 0, IEC(0x0c, 0)}, 16,
	     .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(6, 2)},
	    {"test_mode_select_iec_ebf_not_changeable", SEL6(16), {0, 0, 0, 0, IEC(0x20, 0)}, 16,
	     .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(6, 5)},
	    {"test_mode_select_second_page_bad", SEL6(40),
	     {0, 0, 0, 0, CACHING, CONTROL(0, 0x12, 0)}, 40, .status = CC, .key = IR,
	     .asc = 0x26, SKS_PARAM(27, 1)},
	    {"test_mode_select_short_data_out", SEL6(16), {0, 0, 0, 0}, 4, .status = CC,
	     .key = IR, .asc = 0x24, SKS_CDB(4, 7)},
	    {"test_mode_select10_bdl_16_without_longlba", {0x55, 0x10, 0, 0, 0, 0, 0, 0, 24, 0},
	     10, {0, 0, 0, 0, 0, 0, 0, 16}, 24, .status = CC, .key = IR, .asc = 0x26,
	     SKS_PARAM(6, 7)},
	    {"test_mode_select10_long_bd_ok", {0x55, 0x10, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     {0, 0, 0, 0, 0x01, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x00},
	     24, .status = GOOD},
	    {"test_mode_select10_medium_type", {0x55, 0x10, 0, 0, 0, 0, 0, 0, 8, 0}, 10,
	     {0, 0, 0x01, 0, 0, 0, 0, 0}, 8, .status = CC, .key = IR, .asc = 0x26,
	     SKS_PARAM(2, 7)},
	    {"test_mode_select10_caching_page", {0x55, 0x10, 0, 0, 0, 0, 0, 0, 28, 0}, 10,
	     {0, 0, 0, 0, 0, 0, 0, 0, CACHING}, 28, .status = GOOD},
	};
	/* clang-format on */
	uint8_t buf[255];
	struct fl_lun *lun = ready_lun(NULL);
	uint32_t n;

	SC_RUN_CASES(lun, 1, cases);
	/* none of the refused lists changed anything (the second-page case included) */
	n = sense6(lun, 1, 0, 0x3f, true, buf);
	CU_ASSERT(find_page6(buf, n, 0x08)[2] == 0x04);
	CU_ASSERT(find_page6(buf, n, 0x0a)[3] == 0x10);
	CU_ASSERT(find_page6(buf, n, 0x1c)[3] == 0x00);
	fl_lun_destroy(lun);
#undef CACHING
#undef CONTROL
#undef IEC
#undef SEL6
}

/* A list whose second page is bad applies nothing, not even the first page. */
static void test_mode_select_all_or_nothing(void)
{
	uint8_t list[64] = {0, 0, 0, 0, 0x08, 0x12, 0x00}, buf[255];
	struct fl_lun *lun = ready_lun(NULL);
	struct fl_cmd res;
	uint32_t n;

	/* caching WCE=0 (valid) then a control page with QErr changed (invalid) */
	memcpy(list + 24, (uint8_t[]){0x0a, 0x0a, 0, 0x12, 0, 0, 0, 0, 0xff, 0xff, 0, 0}, 12);
	res = select6(lun, 1, false, list, 36);
	TH_EXPECT(&res, CC, IR, 0x26, 0, "second page bad");
	n = sense6(lun, 1, 0, 0x08, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0x04);
	res = sc_run1(lun, 2, (uint8_t[]){0, 0, 0, 0, 0, 0}, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "no 2A/01 for a refused MODE SELECT");
	fl_lun_destroy(lun);
}

/* SP=1 saves; a LUN reset restores saved values, not unsaved ones. */
static void test_mode_select_sp_saves(void)
{
	uint8_t page[20] = {0x08, 0x12, 0x00}, list[64], buf[255];
	struct fl_lun *lun = ready_lun(NULL);
	uint32_t len = select6_list(list, page, sizeof(page), false), n;
	struct fl_cmd res;

	/* WCE=0 without saving: a reset brings WCE=1 back */
	res = select6(lun, 1, false, list, len);
	TH_EXPECT_GOOD(&res, "WCE=0, SP=0");
	n = sense6(lun, 1, 3, 0x08, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0x04); /* saved still WCE=1 */
	fl_lun_reset(lun, 1, 0x29, 0x03);
	n = sense6(lun, 1, 0, 0x08, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0x04);
	/* with saving: the reset keeps WCE=0 */
	res = select6(lun, 1, true, list, len);
	TH_EXPECT_GOOD(&res, "WCE=0, SP=1");
	n = sense6(lun, 1, 3, 0x08, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0);
	fl_lun_reset(lun, 1, 0x29, 0x03);
	n = sense6(lun, 1, 0, 0x08, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0);
	/* defaults are still the configuration's */
	n = sense6(lun, 1, 2, 0x08, true, buf);
	CU_ASSERT_EQUAL(find_page6(buf, n, 0x08)[2] & 0x04, 0x04);
	fl_lun_destroy(lun);
}

FL_TESTS(mode_tests,
	 FL_TEST(test_mode_sense6_all_pages),
	 FL_TEST(test_mode_sense10_block_descriptors),
	 FL_TEST(test_mode_sense_page_control),
	 FL_TEST(test_mode_sense_errors),
	 FL_TEST(test_mode_select_caching_wce),
	 FL_TEST(test_mode_select_d_sense_switches_format),
	 FL_TEST(test_mode_select_swp_write_protects),
	 FL_TEST(test_mode_select_iec),
	 FL_TEST(test_mode_select_errors),
	 FL_TEST(test_mode_select_all_or_nothing),
	 FL_TEST(test_mode_select_sp_saves));

FL_SUITES(FL_SUITE("mode", NULL, NULL, mode_tests));
