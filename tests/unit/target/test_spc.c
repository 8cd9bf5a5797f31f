/* SPDX-License-Identifier: MIT */
/*
 * test_spc.c - SPC-4 commands of spc.c and vpd.c: TEST UNIT READY, INQUIRY
 * standard data and VPD pages 00h, 80h, 83h, B0h, B1h, B2h, REQUEST SENSE,
 * REPORT LUNS of a lone LUN, REPORT SUPPORTED OPERATION CODES against the
 * opcode table, REPORT TARGET PORT GROUPS, PREVENT ALLOW MEDIUM REMOVAL, and
 * every error path of those (24/00 with the field pointer).
 */
#include "runner.h"
#include "spc_cases.h"
#include "target_internal.h"

#include <stdlib.h>
#include <string.h>

/* Runs a command from nexus 1 with a data-in buffer of `cap` bytes. */
static struct fl_cmd in1(struct fl_lun *lun, const uint8_t *cdb, size_t len, void *in, uint32_t cap)
{
	return sc_run1(lun, 1, cdb, len, NULL, 0, in, cap);
}

/* Fetches a VPD page into buf (GOOD expected); returns the bytes returned. */
static uint32_t vpd(struct fl_lun *lun, uint8_t page, uint8_t *buf, uint32_t cap)
{
	uint8_t cdb[6] = {0x12, 0x01, page, (uint8_t)(cap >> 8), (uint8_t)cap, 0};
	struct fl_cmd res = in1(lun, cdb, 6, buf, cap);

	TH_EXPECT_GOOD(&res, "INQUIRY VPD");
	CU_ASSERT_EQUAL(buf[1], page);
	return res.data_in_len;
}

/* A LUN whose UAs from nexus 1 are cleared. */
static struct fl_lun *ready_lun(const struct fl_lun_config *cfg)
{
	struct fl_lun *lun = th_lun(cfg);

	th_clear_ua(lun, 1);
	return lun;
}

/* TEST UNIT READY is GOOD on a ready LUN and refused when stopped. */
static void test_tur(void)
{
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"TUR ready", {0x00}, 6, .status = GOOD},
	    {"TUR control byte NACA", {0x00, 0, 0, 0, 0, 0x04}, 6, .status = CC, .key = IR,
	     .asc = 0x24, SKS_CDB(5, 2)},
	    {"STOP", {0x1b, 0, 0, 0, 0x00, 0}, 6, .status = GOOD},
	    {"TUR stopped", {0x00}, 6, .status = CC, .key = FL_KEY_NOT_READY, .asc = 0x04,
	     .ascq = 0x02},
	    {"START", {0x1b, 0, 0, 0, 0x01, 0}, 6, .status = GOOD},
	    {"TUR started", {0x00}, 6, .status = GOOD},
	};
	/* clang-format on */
	struct fl_lun *lun = ready_lun(NULL);

	SC_RUN_CASES(lun, 1, cases);
	fl_lun_destroy(lun);
}

/* The test configuration with the identity ACME FASTDISK. */
static void acme_config(struct fl_lun_config *cfg)
{
	th_config(cfg);
	cfg->vendor = "ACME";
	cfg->product = "FASTDISK";
}

/* Standard INQUIRY data: identity, version, HISUP, CMDQUE, descriptors. */
static void test_inquiry_standard(void)
{
	struct fl_lun_config cfg;
	uint8_t cdb[6] = {0x12, 0, 0, 0, 255, 0}, buf[255];
	struct fl_lun *lun;
	struct fl_cmd res;

	acme_config(&cfg);
	cfg.revision = "1.2";
	lun = ready_lun(&cfg);
	res = in1(lun, cdb, 6, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "INQUIRY");
	CU_ASSERT_EQUAL(res.data_in_len, 74);
	CU_ASSERT_EQUAL(buf[4], 74 - 5); /* ADDITIONAL LENGTH */
	CU_ASSERT_EQUAL(buf[0], 0x00);	 /* PQ 0, direct access */
	CU_ASSERT_EQUAL(buf[1], 0x00);	 /* not removable */
	CU_ASSERT_EQUAL(buf[2], 0x06);	 /* SPC-4 */
	CU_ASSERT_EQUAL(buf[3] & 0x0f, 0x02);
	CU_ASSERT(buf[3] & 0x10); /* HISUP */
	CU_ASSERT(buf[7] & 0x02); /* CMDQUE */
	CU_ASSERT_NSTRING_EQUAL(buf + 8, "ACME    ", 8);
	CU_ASSERT_NSTRING_EQUAL(buf + 16, "FASTDISK        ", 16);
	CU_ASSERT_NSTRING_EQUAL(buf + 32, "1.2 ", 4);
	CU_ASSERT_EQUAL(buf[58] << 8 | buf[59], 0x00a0); /* SAM-5 */
	CU_ASSERT_EQUAL(buf[60] << 8 | buf[61], 0x0460); /* SPC-4 */
	CU_ASSERT_EQUAL(buf[62] << 8 | buf[63], 0x04c0); /* SBC-3 */
	fl_lun_destroy(lun);

	cfg.removable = true;
	lun = ready_lun(&cfg);
	res = in1(lun, cdb, 6, buf, sizeof(buf));
	CU_ASSERT(buf[1] & 0x80); /* RMB */
	fl_lun_destroy(lun);
}

/* TPGS follows the ALUA configuration: none, implicit, explicit, both. */
static void test_inquiry_tpgs(void)
{
	/* clang-format off */
	static const struct {
		bool implicit, explicit_;
		uint8_t tpgs;
	} rows[] = {{false, false, 0}, {true, false, 1}, {false, true, 2}, {true, true, 3}};
	uint8_t cdb[6] = {0x12, 0, 0, 0, 36, 0}, buf[36];
	struct fl_lun_config cfg;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fl_lun *lun;
		struct fl_cmd res;

		th_config(&cfg);
		cfg.alua_implicit = rows[i].implicit;
		cfg.alua_explicit = rows[i].explicit_;
		lun = ready_lun(&cfg);
		res = in1(lun, cdb, 6, buf, sizeof(buf));
		TH_EXPECT_GOOD(&res, "INQUIRY");
		TH_CHECK(((buf[5] >> 4) & 3) == rows[i].tpgs, "TPGS %u, want %u",
			 (buf[5] >> 4) & 3, rows[i].tpgs);
		fl_lun_destroy(lun);
	}
}

/* The allocation length truncates; zero transfers nothing and is no error. */
static void test_inquiry_allocation_length(void)
{
	static const struct {
		uint16_t alloc;
		uint32_t cap, want;
	} rows[] = {{0, 255, 0}, {5, 255, 5}, {36, 255, 36}, {300, 512, 74}, {74, 20, 20}};
	struct fl_lun *lun = ready_lun(NULL);
	uint8_t buf[512];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t cdb[6] = {0x12, 0, 0, (uint8_t)(rows[i].alloc >> 8),
				  (uint8_t)rows[i].alloc, 0};
		struct fl_cmd res;

		memset(buf, 0xee, sizeof(buf));
		res = in1(lun, cdb, 6, buf, rows[i].cap);
		TH_EXPECT_GOOD(&res, "INQUIRY allocation length");
		TH_CHECK(res.data_in_len == rows[i].want, "alloc %u: %u bytes, want %u",
			 rows[i].alloc, res.data_in_len, rows[i].want);
		TH_CHECK(buf[rows[i].want] == 0xee, "alloc %u: wrote past the length",
			 rows[i].alloc);
	}
	/* VPD pages obey it too: 4 bytes of page 83h give the header only */
	{
		uint8_t cdb[6] = {0x12, 1, 0x83, 0, 4, 0};
		struct fl_cmd res = in1(lun, cdb, 6, buf, sizeof(buf));

		TH_EXPECT_GOOD(&res, "VPD 83h with 4 bytes");
		CU_ASSERT_EQUAL(res.data_in_len, 4);
		CU_ASSERT(fl_get_be32(buf) & 0xffff); /* PAGE LENGTH still tells the full size */
	}
	fl_lun_destroy(lun);
}

/* INQUIRY errors: page code without EVPD, unknown page, CMDDT. */
static void test_inquiry_errors(void)
{
	static const struct sc_case cases[] = {
	    {"test_inquiry_page_without_evpd", {0x12, 0, 0x80, 0, 255, 0}, 6, .in_cap = 255,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 7)},
	    {"test_inquiry_vpd_unknown_page", {0x12, 1, 0x55, 0, 255, 0}, 6, .in_cap = 255,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 7)},
	    {"test_inquiry_vpd_c0_unsupported", {0x12, 1, 0xc0, 0, 255, 0}, 6, .in_cap = 255,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 7)},
	    {"test_inquiry_cmddt", {0x12, 2, 0, 0, 255, 0}, 6, .in_cap = 255, .status = CC,
	     .key = IR, .asc = 0x24, SKS_CDB(1, 1)},
	    {"test_inquiry_reserved_bit", {0x12, 0x20, 0, 0, 255, 0}, 6, .in_cap = 255,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 5)},
	    {"test_inquiry_good", {0x12, 0, 0, 0, 255, 0}, 6, .in_cap = 255, .status = GOOD},
	};
	/* clang-format on */
	struct fl_lun *lun = ready_lun(NULL);

	SC_RUN_CASES(lun, 1, cases);
	fl_lun_destroy(lun);
}

/* VPD 00h lists exactly the pages that answer, ascending. */
static void test_inquiry_vpd00_supported_pages(void)
{
	struct fl_lun *lun = ready_lun(NULL);
	uint8_t buf[255], page[255];
	uint32_t n = vpd(lun, 0x00, buf, sizeof(buf));

	CU_ASSERT_EQUAL(n, 4u + buf[3]);
	CU_ASSERT_EQUAL(buf[3], 6);
	for (unsigned i = 0; i < buf[3]; i++) {
		if (i)
			TH_CHECK(buf[4 + i] > buf[3 + i], "pages not ascending at %u", i);
		vpd(lun, buf[4 + i], page, sizeof(page));
	}
	fl_lun_destroy(lun);
}

/* VPD 80h: the configured serial, or one derived from the NAA. */
static void test_inquiry_vpd80_serial(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t buf[255];
	uint32_t n;

	th_config(&cfg);
	cfg.serial = "SN-42-XYZ";
	lun = ready_lun(&cfg);
	n = vpd(lun, 0x80, buf, sizeof(buf));
	CU_ASSERT_EQUAL(n, 4 + 9);
	CU_ASSERT_EQUAL(buf[3], 9);
	CU_ASSERT_NSTRING_EQUAL(buf + 4, "SN-42-XYZ", 9);
	fl_lun_destroy(lun);

	cfg.serial = NULL;
	cfg.naa = 0x5001405abcdef012ull;
	lun = ready_lun(&cfg);
	n = vpd(lun, 0x80, buf, sizeof(buf));
	CU_ASSERT_EQUAL(n, 4 + 16);
	CU_ASSERT_NSTRING_EQUAL(buf + 4, "5001405abcdef012", 16);
	fl_lun_destroy(lun);
}

/* Finds a designator of type `type` and association `assoc` in page 83h. */
static const uint8_t *find_designator(const uint8_t *buf, uint32_t n, uint8_t type, uint8_t assoc)
{
	uint32_t end = 4u + (buf[2] << 8 | buf[3]);

	if (end > n)
		end = n;
	for (uint32_t off = 4; off + 4 <= end; off += 4u + buf[off + 3])
		if ((buf[off + 1] & 0x0f) == type && ((buf[off + 1] >> 4) & 3) == assoc)
			return buf + off;
	return NULL;
}

/* VPD 83h NAA designator: configured (NAA 5, nibble added) or derived (NAA 3). */
static void test_inquiry_vpd83_naa(void)
{
	/* clang-format off */
	static const struct {
		uint64_t naa, want;
	} rows[] = {
	    {0x6001405123456789ull, 0x6001405123456789ull},
	    {0x0001405123456789ull, 0x5001405123456789ull},
	};
	/* clang-format on */
	struct fl_lun_config cfg;
	struct fl_target *tgt;
	uint8_t buf[255];
	const uint8_t *d;
	uint64_t a, b;
	uint32_t n;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fl_lun *lun;

		th_config(&cfg);
		cfg.naa = rows[i].naa;
		lun = ready_lun(&cfg);
		n = vpd(lun, 0x83, buf, sizeof(buf));
		d = find_designator(buf, n, 3, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(d);
		CU_ASSERT_EQUAL(d[0] & 0x0f, 1); /* binary */
		CU_ASSERT_EQUAL(d[3], 8);
		TH_CHECK(fl_get_be64(d + 4) == rows[i].want, "NAA %016llx, want %016llx",
			 (unsigned long long)fl_get_be64(d + 4), (unsigned long long)rows[i].want);
		fl_lun_destroy(lun);
	}
	/* 16 bytes (NAA 6, IEEE Registered Extended): naa then naa_ext */
	{
		struct fl_lun *lun;

		th_config(&cfg);
		cfg.naa = 0x6001405a5e1f0c27ull;
		cfg.naa_ext = 0x7d44b1e9c3afa017ull;
		cfg.naa16 = true;
		lun = ready_lun(&cfg);
		n = vpd(lun, 0x83, buf, sizeof(buf));
		d = find_designator(buf, n, 3, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(d);
		CU_ASSERT_EQUAL(d[3], 16);
		CU_ASSERT(fl_get_be64(d + 4) == cfg.naa && fl_get_be64(d + 12) == cfg.naa_ext);
		/* the designators after it are whole: the T10 vendor ID follows */
		CU_ASSERT_PTR_NOT_NULL(find_designator(buf, n, 1, 0));
		fl_lun_destroy(lun);
	}
	/* derived: NAA 3, distinct for two LUNs of one target with the same identity */
	th_config(&cfg);
	CU_ASSERT_EQUAL_FATAL(fl_target_create(&tgt), 0);
	CU_ASSERT_EQUAL(fl_target_add_lun(tgt, 0, th_lun(&cfg)), 0);
	CU_ASSERT_EQUAL(fl_target_add_lun(tgt, 1, th_lun(&cfg)), 0);
	th_clear_ua(fl_target_lun(tgt, 0), 1);
	th_clear_ua(fl_target_lun(tgt, 1), 1);
	n = vpd(fl_target_lun(tgt, 0), 0x83, buf, sizeof(buf));
	d = find_designator(buf, n, 3, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	a = fl_get_be64(d + 4);
	n = vpd(fl_target_lun(tgt, 1), 0x83, buf, sizeof(buf));
	d = find_designator(buf, n, 3, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	b = fl_get_be64(d + 4);
	CU_ASSERT_EQUAL(a >> 60, 3);
	CU_ASSERT_EQUAL(b >> 60, 3);
	CU_ASSERT_NOT_EQUAL(a, b);
	/* stable: asking again gives the same identifier */
	n = vpd(fl_target_lun(tgt, 1), 0x83, buf, sizeof(buf));
	CU_ASSERT_EQUAL(fl_get_be64(find_designator(buf, n, 3, 0) + 4), b);
	fl_target_destroy(tgt);
}

/* VPD 83h T10 vendor ID, relative target port and target port group. */
static void test_inquiry_vpd83_designators(void)
{
	uint8_t cdb[6] = {0x12, 1, 0x83, 0, 255, 0}, buf[255];
	struct fl_lun_config cfg;
	const uint8_t *d;
	struct fl_lun *lun;
	struct fl_cmd res;

	acme_config(&cfg);
	cfg.serial = "S123";
	cfg.tpg_id = 7;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 5);
	res = th_via(lun, 5, 3, cdb, 6, NULL, 0, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "VPD 83h");
	CU_ASSERT_EQUAL(4u + (buf[2] << 8 | buf[3]), res.data_in_len);
	d = find_designator(buf, res.data_in_len, 1, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(d[0] & 0x0f, 2); /* ASCII */
	CU_ASSERT_EQUAL(d[3], 8 + 16 + 4);
	CU_ASSERT_NSTRING_EQUAL(d + 4, "ACME    FASTDISK        S123", 28);
	d = find_designator(buf, res.data_in_len, 4, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(d[3], 4);
	CU_ASSERT_EQUAL(d[6] << 8 | d[7], 3); /* the port the command came through */
	d = find_designator(buf, res.data_in_len, 5, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(d[6] << 8 | d[7], 7);
	fl_lun_destroy(lun);
}

/* VPD B0h: the limits the SBC handlers enforce. */
static void test_inquiry_vpdb0_block_limits(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t buf[255];
	uint32_t n;

	th_config(&cfg);
	cfg.max_xfer_blocks = 1234;
	lun = ready_lun(&cfg);
	n = vpd(lun, 0xb0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(n, 64);
	CU_ASSERT_EQUAL(buf[2] << 8 | buf[3], 0x3c);
	CU_ASSERT_EQUAL(buf[4] & 1, SBC_WSNZ);
	CU_ASSERT_EQUAL(buf[5], SBC_MAX_CAW_BLOCKS);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 8), 1234);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 20), 0); /* fully provisioned: no UNMAP */
	CU_ASSERT_EQUAL(fl_get_be32(buf + 24), 0);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 36), SBC_MAX_WS_BLOCKS);
	fl_lun_destroy(lun);

	th_config(&cfg);
	cfg.thin = true;
	lun = ready_lun(&cfg);
	n = vpd(lun, 0xb0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(fl_get_be32(buf + 8), lun_max_xfer_blocks(lun));
	CU_ASSERT_EQUAL(fl_get_be32(buf + 20), SBC_MAX_UNMAP_LBA_COUNT);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 24), SBC_MAX_UNMAP_DESCRIPTORS);
	fl_lun_destroy(lun);
}

/* VPD B1h: a non-rotating medium. */
static void test_inquiry_vpdb1_non_rotating(void)
{
	struct fl_lun *lun = ready_lun(NULL);
	uint8_t buf[255];

	CU_ASSERT_EQUAL(vpd(lun, 0xb1, buf, sizeof(buf)), 64);
	CU_ASSERT_EQUAL(buf[4] << 8 | buf[5], 1);
	fl_lun_destroy(lun);
}

/* VPD B2h: LBPU, LBPWS, LBPWS10, LBPRZ and type thin only on a thin LUN. */
static void test_inquiry_vpdb2_provisioning(void)
{
	/* clang-format off */
	static const struct {
		bool thin, lbprz;
		uint8_t bits, type;
	} rows[] = {{false, false, 0x00, 0}, {true, false, 0xe0, 2}, {true, true, 0xe4, 2}};
	struct fl_lun_config cfg;
	uint8_t buf[255];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fl_lun *lun;

		th_config(&cfg);
		cfg.thin = rows[i].thin;
		cfg.lbprz = rows[i].lbprz;
		lun = ready_lun(&cfg);
		CU_ASSERT_EQUAL(vpd(lun, 0xb2, buf, sizeof(buf)), 8);
		TH_CHECK(buf[5] == rows[i].bits, "row %zu: byte 5 %02xh, want %02xh", i, buf[5],
			 rows[i].bits);
		CU_ASSERT_EQUAL(buf[6] & 7, rows[i].type);
		fl_lun_destroy(lun);
	}
}

/*
 * A LUN's VPD pages given as bytes (a scenario's "vpd"): listed in 00h in
 * ascending order among the LUN's own, answered as given with the LUN's
 * device type in byte 0; a page given nowhere stays 24/00.
 */
static void test_inquiry_vpd_raw(void)
{
	static const uint8_t raw[] = {0x7f, 0x86, 0x00, 0x04, 0x00, 0x07, 0x00, 0x01,
				      0x00, 0xc9, 0x00, 0x02, 0xab, 0xcd};
	static const uint8_t list[] = {0x00, 0x80, 0x83, 0x86, 0xb0, 0xb1, 0xb2, 0xc9};
	uint8_t buf[255], cdb[6] = {0x12, 0x01, 0xb3, 0, 255, 0};
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	struct fl_cmd res;

	th_config(&cfg);
	cfg.vpd_raw = raw;
	cfg.vpd_raw_len = sizeof(raw);
	lun = ready_lun(&cfg);
	CU_ASSERT_EQUAL(vpd(lun, 0x00, buf, sizeof(buf)), 4 + sizeof(list));
	CU_ASSERT_EQUAL(memcmp(buf + 4, list, sizeof(list)), 0);
	CU_ASSERT_EQUAL(vpd(lun, 0x86, buf, sizeof(buf)), 8);
	CU_ASSERT_EQUAL(buf[0], 0x00);
	CU_ASSERT_EQUAL(memcmp(buf + 1, raw + 1, 7), 0);
	CU_ASSERT_EQUAL(vpd(lun, 0xc9, buf, sizeof(buf)), 6);
	CU_ASSERT_EQUAL(buf[4] << 8 | buf[5], 0xabcd);
	res = in1(lun, cdb, 6, buf, sizeof(buf));
	CU_ASSERT_EQUAL(res.status, 0x02);
	fl_lun_destroy(lun);
}

/* REQUEST SENSE: NO SENSE in both formats, NOT READY when stopped, errors. */
static void test_request_sense(void)
{
	static const struct sc_case cases[] = {
	    {"test_request_sense_reserved_bit", {0x03, 0x02, 0, 0, 252, 0}, 6, .in_cap = 252,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 1)},
	};
	/* clang-format on */
	uint8_t rs[6] = {0x03, 0, 0, 0, 252, 0}, stop[6] = {0x1b, 0, 0, 0, 0, 0}, buf[252];
	struct fl_lun *lun = ready_lun(NULL);
	struct th_sense s;
	struct fl_cmd res;

	res = in1(lun, rs, 6, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REQUEST SENSE");
	CU_ASSERT_EQUAL(res.data_in_len, 18);
	CU_ASSERT_EQUAL(buf[0], 0x70);
	th_parse_sense(buf, res.data_in_len, &s);
	CU_ASSERT(s.valid && s.key == FL_KEY_NO_SENSE && s.asc == 0 && s.ascq == 0);
	rs[1] = 1; /* DESC */
	res = in1(lun, rs, 6, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REQUEST SENSE DESC");
	CU_ASSERT_EQUAL(buf[0], 0x72);
	CU_ASSERT_EQUAL(res.data_in_len, 8);
	/* allocation length 4: truncated, still GOOD */
	rs[1] = 0;
	rs[4] = 4;
	res = in1(lun, rs, 6, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REQUEST SENSE 4 bytes");
	CU_ASSERT_EQUAL(res.data_in_len, 4);
	rs[4] = 252;
	res = in1(lun, stop, 6, NULL, 0);
	TH_EXPECT_GOOD(&res, "STOP");
	res = in1(lun, rs, 6, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REQUEST SENSE stopped");
	th_parse_sense(buf, res.data_in_len, &s);
	CU_ASSERT(s.key == FL_KEY_NOT_READY && s.asc == 0x04 && s.ascq == 0x02);
	fl_lun_set_alua_state(lun, FL_ALUA_STANDBY);
	th_run(lun, 1, rs, 6, NULL, 0, buf, sizeof(buf), &res); /* the 2A/06 */
	res = in1(lun, rs, 6, buf, sizeof(buf));
	th_parse_sense(buf, res.data_in_len, &s);
	CU_ASSERT(s.key == FL_KEY_NOT_READY && s.asc == 0x04 && s.ascq == 0x0b);
	SC_RUN_CASES(lun, 1, cases);
	fl_lun_destroy(lun);
}

/* REPORT LUNS of a LUN outside any target lists LUN 0 alone. */
static void test_report_luns_lone_lun(void)
{
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"test_report_luns_alloc_too_small", {0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0}, 12,
	     .in_cap = 64, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(6, -1)},
	    {"test_report_luns_bad_select", {0xa0, 0, 0x03, 0, 0, 0, 0, 0, 0, 64, 0, 0}, 12,
	     .in_cap = 64, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, -1)},
	};
	/* clang-format on */
	uint8_t cdb[12] = {0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, buf[256];
	struct fl_lun *lun = ready_lun(NULL);
	struct fl_cmd res;

	memset(buf, 0xee, sizeof(buf));
	res = in1(lun, cdb, 12, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "REPORT LUNS");
	CU_ASSERT_EQUAL(res.data_in_len, 16);
	CU_ASSERT_EQUAL(fl_get_be32(buf), 8);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0);
	SC_RUN_CASES(lun, 1, cases);
	fl_lun_destroy(lun);
}

/* RSOC all commands: one descriptor per table row, CTDP/timeouts with RCTD. */
static void test_rsoc_all_commands(void)
{
	uint8_t cdb[12] = {0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0};
	uint8_t *buf = calloc(1, 4096);
	struct fl_lun *lun = ready_lun(NULL);
	const struct fl_opcode_desc *d;
	size_t rows = 0;
	struct fl_cmd res;

	while (cdb_table_row(rows))
		rows++;
	for (int rctd = 0; rctd < 2; rctd++) {
		size_t step = rctd ? 20 : 8;

		cdb[2] = rctd ? 0x80 : 0;
		res = in1(lun, cdb, 12, buf, 4096);
		TH_EXPECT_GOOD(&res, "RSOC all");
		TH_CHECK(fl_get_be32(buf) == rows * step, "COMMAND DATA LENGTH %u, want %zu",
			 fl_get_be32(buf), rows * step);
		CU_ASSERT_EQUAL(res.data_in_len, 4 + rows * step);
		for (size_t i = 0; (d = cdb_table_row(i)) != NULL; i++) {
			const uint8_t *p = buf + 4 + i * step;

			TH_CHECK(p[0] == d->opcode &&
				     (p[2] << 8 | p[3]) == (d->has_sa ? d->service_action : 0),
				 "descriptor %zu is %02xh/%u, want %s", i, p[0], p[2] << 8 | p[3],
				 d->name);
			CU_ASSERT_EQUAL(p[5] & 1, d->has_sa);
			CU_ASSERT_EQUAL((p[5] >> 1) & 1, rctd);
			CU_ASSERT_EQUAL(p[6] << 8 | p[7], d->cdb_len);
			if (rctd)
				CU_ASSERT_EQUAL(p[8] << 8 | p[9], 0x0a);
		}
	}
	/* truncated by the allocation length */
	cdb[2] = 0;
	cdb[8] = 0;
	cdb[9] = 12;
	res = in1(lun, cdb, 12, buf, 4096);
	TH_EXPECT_GOOD(&res, "RSOC all, 12 bytes");
	CU_ASSERT_EQUAL(res.data_in_len, 12);
	CU_ASSERT_EQUAL(fl_get_be32(buf), rows * 8);
	free(buf);
	fl_lun_destroy(lun);
}

/* RSOC one command: usage data from the table; the reporting option rules. */
static void test_rsoc_one_command(void)
{
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"test_rsoc_opt1_opcode_with_sa", {0xa3, 0x0c, 0x01, 0x9e, 0, 0, 0, 0, 1, 0, 0, 0},
	     12, .in_cap = 256, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(3, 7)},
	    {"test_rsoc_opt2_opcode_without_sa", {0xa3, 0x0c, 0x02, 0x28, 0, 0, 0, 0, 1, 0, 0, 0},
	     12, .in_cap = 256, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(3, 7)},
	    {"test_rsoc_bad_option", {0xa3, 0x0c, 0x05, 0x28, 0, 0, 0, 0, 1, 0, 0, 0}, 12,
	     .in_cap = 256, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 2)},
	    {"test_rsoc_reserved_bit", {0xa3, 0x0c, 0x40, 0x28, 0, 0, 0, 0, 1, 0, 0, 0}, 12,
	     .in_cap = 256, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 6)},
	};
	/* clang-format on */
	/* clang-format off */
	static const struct {
		uint8_t opts, op;
		uint16_t sa;
		uint8_t support;
	} rows[] = {
	    {1, 0x28, 0, 3},	{1, 0xc1, 0, 1},    {2, 0x9e, 0x10, 3}, {2, 0x9e, 0x11, 1},
	    {2, 0x5f, 0x06, 3}, {3, 0x28, 0, 3},    {3, 0x9e, 0x12, 3}, {3, 0x9e, 0x13, 1},
	    {1, 0x12, 0, 3},	{2, 0xa3, 0x0c, 3},
	};
	/* clang-format on */
	struct fl_lun *lun = ready_lun(NULL);
	uint8_t buf[256];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t cdb[12] = {0xa3,
				   0x0c,
				   rows[i].opts,
				   rows[i].op,
				   (uint8_t)(rows[i].sa >> 8),
				   (uint8_t)rows[i].sa,
				   0,
				   0,
				   1,
				   0,
				   0,
				   0};
		uint8_t raw[16] = {rows[i].op, (uint8_t)rows[i].sa};
		const struct fl_opcode_desc *d = cdb_lookup(raw, 16);
		struct fl_cmd res;

		for (int rctd = 0; rctd < 2; rctd++) {
			cdb[2] = (uint8_t)(rows[i].opts | (rctd ? 0x80 : 0));
			res = in1(lun, cdb, 12, buf, sizeof(buf));
			TH_EXPECT_GOOD(&res, "RSOC one command");
			TH_CHECK((buf[1] & 7) == rows[i].support,
				 "%02xh/%02xh: SUPPORT %u, want %u", rows[i].op, rows[i].sa,
				 buf[1] & 7, rows[i].support);
			if (rows[i].support != 3)
				continue;
			CU_ASSERT_PTR_NOT_NULL_FATAL(d);
			CU_ASSERT_EQUAL(buf[2] << 8 | buf[3], d->cdb_len);
			CU_ASSERT_EQUAL(memcmp(buf + 4, d->usage, d->cdb_len), 0);
			CU_ASSERT_EQUAL(buf[4], rows[i].op);
			CU_ASSERT_EQUAL(res.data_in_len, 4u + d->cdb_len + (rctd ? 12 : 0));
			CU_ASSERT_EQUAL(buf[1] >> 7, rctd);
		}
	}
	SC_RUN_CASES(lun, 1, cases);
	fl_lun_destroy(lun);
}

/* RTPG: one group with the LUN's state and TPG id, one port; formats. */
static void test_rtpg(void)
{
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"test_rtpg_bad_format", {0xa3, 0x4a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, 12,
	     .in_cap = 256, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 7)},
	};
	/* clang-format on */
	uint8_t cdb[12] = {0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, buf[256];
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	struct fl_cmd res;

	th_config(&cfg);
	cfg.tpg_id = 0x21;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 9);
	res = th_via(lun, 9, 2, cdb, 12, NULL, 0, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "RTPG");
	CU_ASSERT_EQUAL(res.data_in_len, 16);
	CU_ASSERT_EQUAL(fl_get_be32(buf), 12);
	CU_ASSERT_EQUAL(buf[4] & 0x0f, FL_ALUA_ACTIVE_OPTIMIZED);
	CU_ASSERT_EQUAL(buf[5], 0xcf); /* T, O, U, S, AN, AO supported */
	CU_ASSERT_EQUAL(buf[6] << 8 | buf[7], 0x21);
	CU_ASSERT_EQUAL(buf[11], 1);
	CU_ASSERT_EQUAL(buf[14] << 8 | buf[15], 2);
	/* the state follows fl_lun_set_alua_state; RTPG is served while standby */
	fl_lun_set_alua_state(lun, FL_ALUA_STANDBY);
	res = th_via(lun, 9, 2, cdb, 12, NULL, 0, buf, sizeof(buf));
	TH_EXPECT(&res, CC, UA, 0x2a, 0x06, "UA after the state change");
	res = th_via(lun, 9, 2, cdb, 12, NULL, 0, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "RTPG standby");
	CU_ASSERT_EQUAL(buf[4] & 0x0f, FL_ALUA_STANDBY);
	/* extended header */
	cdb[1] = 0x2a;
	res = th_via(lun, 9, 2, cdb, 12, NULL, 0, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "RTPG extended");
	CU_ASSERT_EQUAL(res.data_in_len, 20);
	CU_ASSERT_EQUAL(fl_get_be32(buf), 16);
	CU_ASSERT_EQUAL(buf[4], 0x10);
	CU_ASSERT_EQUAL(buf[10] << 8 | buf[11], 0x21);
	/* allocation length 4: the header alone */
	cdb[1] = 0x0a;
	cdb[8] = 0;
	cdb[9] = 4;
	res = th_via(lun, 9, 2, cdb, 12, NULL, 0, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "RTPG 4 bytes");
	CU_ASSERT_EQUAL(res.data_in_len, 4);
	SC_RUN_CASES(lun, 9, cases);
	fl_lun_destroy(lun);
}

/* PREVENT ALLOW: prevention per nexus, obsolete values refused. */
static void test_prevent_allow(void)
{
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"test_prevent_allow_obsolete_10b", {0x1e, 0, 0, 0, 0x02, 0}, 6, .status = CC,
	     .key = IR, .asc = 0x24, SKS_CDB(4, 1)},
	    {"test_prevent_allow_obsolete_11b", {0x1e, 0, 0, 0, 0x03, 0}, 6, .status = CC,
	     .key = IR, .asc = 0x24, SKS_CDB(4, 1)},
	};
	/* clang-format on */
	uint8_t prevent[6] = {0x1e, 0, 0, 0, 1, 0}, allow[6] = {0x1e, 0, 0, 0, 0, 0};
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	struct fl_cmd res;

	th_config(&cfg);
	cfg.removable = true;
	lun = ready_lun(&cfg);
	th_clear_ua(lun, 2);
	SC_RUN_CASES(lun, 1, cases);
	CU_ASSERT_FALSE(lun->removal_prevented);
	res = sc_run1(lun, 1, prevent, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "PREVENT from 1");
	res = sc_run1(lun, 2, prevent, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "PREVENT from 2");
	CU_ASSERT_TRUE(lun->removal_prevented);
	res = sc_run1(lun, 1, allow, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "ALLOW from 1");
	CU_ASSERT_TRUE(lun->removal_prevented); /* nexus 2 still prevents */
	res = sc_run1(lun, 2, allow, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "ALLOW from 2");
	CU_ASSERT_FALSE(lun->removal_prevented);
	fl_lun_destroy(lun);
}

FL_TESTS(spc_tests,
	 FL_TEST(test_tur),
	 FL_TEST(test_inquiry_standard),
	 FL_TEST(test_inquiry_tpgs),
	 FL_TEST(test_inquiry_allocation_length),
	 FL_TEST(test_inquiry_errors),
	 FL_TEST(test_inquiry_vpd00_supported_pages),
	 FL_TEST(test_inquiry_vpd80_serial),
	 FL_TEST(test_inquiry_vpd83_naa),
	 FL_TEST(test_inquiry_vpd83_designators),
	 FL_TEST(test_inquiry_vpdb0_block_limits),
	 FL_TEST(test_inquiry_vpdb1_non_rotating),
	 FL_TEST(test_inquiry_vpdb2_provisioning), FL_TEST(test_inquiry_vpd_raw),
	 FL_TEST(test_request_sense),
	 FL_TEST(test_report_luns_lone_lun),
	 FL_TEST(test_rsoc_all_commands),
	 FL_TEST(test_rsoc_one_command),
	 FL_TEST(test_rtpg),
	 FL_TEST(test_prevent_allow));

FL_SUITES(FL_SUITE("spc", NULL, NULL, spc_tests));
