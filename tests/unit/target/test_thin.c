/* SPDX-License-Identifier: MIT */
/*
 * test_thin.c - thin provisioning: the map (thin.c), pool accounting and
 * exhaustion (27/07, nothing written), the soft threshold UA 38/07 (once,
 * for every nexus), UNMAP and WRITE SAME with UNMAP returning space, GET LBA
 * STATUS extents, READ CAPACITY (16) LBPME / LBPRZ, power loss on a thin LUN.
 */
#include "runner.h"
#include "target_internal.h"
#include "tharness.h"

#include <stdlib.h>
#include <string.h>

#define CC FL_STATUS_CHECK_CONDITION
#define IR FL_KEY_ILLEGAL_REQUEST

/* A thin test LUN: pool `pool` blocks, soft threshold `soft`. */
static struct fl_lun *thin_lun(uint64_t pool, uint64_t soft)
{
	struct fl_lun_config cfg;

	th_config(&cfg);
	cfg.thin = true;
	cfg.pool_blocks = pool;
	cfg.soft_threshold = soft;
	cfg.lbprz = true;
	return th_lun(&cfg);
}

/* Mapped blocks of a LUN. */
static uint64_t mapped(struct fl_lun *lun)
{
	struct fl_lun_info info;

	fl_lun_get_info(lun, &info);
	return info.mapped_blocks;
}

/* The map: ranges across leaves, counts, extents, resize. */
static void test_thin_map_ranges(void)
{
	struct thin_map *t;
	bool m;

	CU_ASSERT_EQUAL(thin_create(100000, &t), 0);
	CU_ASSERT_EQUAL(thin_map_range(t, 32000, 1000), 1000); /* crosses a leaf */
	CU_ASSERT_EQUAL(thin_map_range(t, 32500, 1000), 500);
	CU_ASSERT_EQUAL(thin_mapped_count(t), 1500);
	CU_ASSERT(thin_is_mapped(t, 32000) && thin_is_mapped(t, 33499) &&
		  !thin_is_mapped(t, 33500));
	CU_ASSERT_EQUAL(thin_count_unmapped(t, 31990, 20), 10);
	CU_ASSERT_EQUAL(thin_extent(t, 0, 100000, &m), 32000);
	CU_ASSERT(!m);
	CU_ASSERT_EQUAL(thin_extent(t, 32000, 100000, &m), 1500);
	CU_ASSERT(m);
	CU_ASSERT_EQUAL(thin_extent(t, 33500, 100000, &m), 100000 - 33500);
	CU_ASSERT(!m);
	CU_ASSERT_EQUAL(thin_extent(t, 32000, 10, &m), 10);
	CU_ASSERT_EQUAL(thin_unmap_range(t, 32768, 100), 100);
	CU_ASSERT_EQUAL(thin_mapped_count(t), 1400);
	CU_ASSERT_EQUAL(thin_extent(t, 32000, 100000, &m), 768);
	CU_ASSERT_EQUAL(thin_map_range(t, 0, 100000), 100000 - 1400);
	CU_ASSERT_EQUAL(thin_extent(t, 0, 200000, &m), 100000);
	CU_ASSERT_EQUAL(thin_resize(t, 50000), 0);
	CU_ASSERT_EQUAL(thin_mapped_count(t), 50000);
	CU_ASSERT_EQUAL(thin_resize(t, 200000), 0);
	CU_ASSERT_EQUAL(thin_mapped_count(t), 50000);
	CU_ASSERT(!thin_is_mapped(t, 60000));
	CU_ASSERT_EQUAL(thin_unmap_range(t, 0, 200000), 50000);
	CU_ASSERT_EQUAL(thin_mapped_count(t), 0);
	CU_ASSERT_EQUAL(thin_map_range(t, 300000, 5), 0); /* beyond: ignored */
	thin_destroy(t);
}

/* The map against a plain bool array under random operations. */
static void test_thin_map_model(void)
{
	enum { N = 200000 };
	bool *model = calloc(N, 1);
	struct thin_map *t;
	uint64_t mapped = 0;
	uint32_t x = 99;

#define RND() (x ^= x << 13, x ^= x >> 17, x ^= x << 5, x)
	CU_ASSERT_EQUAL(thin_create(N, &t), 0);
	for (int op = 0; op < 3000; op++) {
		uint64_t lba = RND() % N, n = (RND() & 1) ? RND() % 70000 : RND() % 40;
		uint64_t changed = 0, want, m;
		bool st;

		if (RND() % 3) {
			for (uint64_t b = lba; b < lba + n && b < N; b++)
				if (!model[b]) {
					model[b] = true;
					changed++;
				}
			want = changed;
			mapped += changed;
			TH_CHECK(thin_map_range(t, lba, n) == want, "op %d: map count", op);
		} else {
			for (uint64_t b = lba; b < lba + n && b < N; b++)
				if (model[b]) {
					model[b] = false;
					changed++;
				}
			mapped -= changed;
			TH_CHECK(thin_unmap_range(t, lba, n) == changed, "op %d: unmap count", op);
		}
		TH_CHECK(thin_mapped_count(t) == mapped, "op %d: mapped %llu, model %llu", op,
			 (unsigned long long)thin_mapped_count(t), (unsigned long long)mapped);
		lba = RND() % N;
		n = RND() % 100000;
		want = 0;
		for (uint64_t b = lba; b < lba + n && b < N; b++)
			want += !model[b];
		TH_CHECK(thin_count_unmapped(t, lba, n) == want, "op %d: unmapped count", op);
		m = 0;
		while (lba + m < N && m < n && model[lba + m] == model[lba])
			m++;
		TH_CHECK(thin_extent(t, lba, n, &st) == m && (m == 0 || st == model[lba]),
			 "op %d: extent at %llu", op, (unsigned long long)lba);
		TH_CHECK(thin_is_mapped(t, lba) == model[lba], "op %d: is_mapped", op);
	}
	thin_destroy(t);
	free(model);
}

/* A write that needs more than the pool fails with 27/07 and writes nothing. */
static void test_thin_pool_exhausted_writes_nothing(void)
{
	struct fl_lun *lun = thin_lun(100, 0);
	uint8_t *buf = malloc(64 * 512), *r = malloc(64 * 512), cdb[16];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(buf, 64 * 512, 4);
	CU_ASSERT_EQUAL(th_write(lun, 1, 0, 60, buf), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(mapped(lun), 60);
	th_cdb16(cdb, 0x8a, 0, 1000, 41);
	th_run(lun, 1, cdb, 16, buf, 41 * 512, NULL, 0, &res);
	TH_EXPECT(&res, CC, FL_KEY_DATA_PROTECT, 0x27, 0x07, "WRITE(16) beyond the pool");
	CU_ASSERT_EQUAL(mapped(lun), 60);
	CU_ASSERT_EQUAL(th_read(lun, 1, 1000, 41, r), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(r[0] | r[512 * 40] | r[512 * 41 - 1], 0);
	/* rewriting mapped blocks needs no space */
	CU_ASSERT_EQUAL(th_write(lun, 1, 0, 60, buf), FL_STATUS_GOOD);
	/* a write partly over mapped blocks only needs the unmapped part */
	CU_ASSERT_EQUAL(th_write(lun, 1, 30, 64, buf), FL_STATUS_GOOD); /* needs 34 */
	CU_ASSERT_EQUAL(mapped(lun), 94);
	CU_ASSERT_EQUAL(th_write(lun, 1, 94, 6, buf), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(mapped(lun), 100);
	th_cdb10(cdb, 0x2a, 0, 500, 1);
	th_run(lun, 1, cdb, 10, buf, 512, NULL, 0, &res);
	TH_EXPECT(&res, CC, FL_KEY_DATA_PROTECT, 0x27, 0x07, "WRITE(10) into a full pool");
	/* WRITE SAME and COMPARE AND WRITE are subject to the pool too */
	th_cdb16(cdb, 0x93, 0, 600, 8);
	th_run(lun, 1, cdb, 16, buf, 512, NULL, 0, &res);
	TH_EXPECT(&res, CC, FL_KEY_DATA_PROTECT, 0x27, 0x07, "WRITE SAME(16) into a full pool");
	CU_ASSERT_EQUAL(mapped(lun), 100);
	free(buf);
	free(r);
	fl_lun_destroy(lun);
}

/* Crossing the soft threshold raises 38/07 once, on every nexus. */
static void test_thin_soft_threshold_once(void)
{
	struct fl_lun *lun = thin_lun(1000, 50);
	uint8_t buf[8 * 512] = {1}, tur[6] = {0}, unmap[10], param[24];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_clear_ua(lun, 2);
	CU_ASSERT_EQUAL(th_write(lun, 1, 0, 8, buf), FL_STATUS_GOOD);
	for (int i = 1; i < 6; i++)
		CU_ASSERT_EQUAL(th_write(lun, 1, 8 * i, 8, buf), FL_STATUS_GOOD); /* 48 */
	th_run(lun, 2, tur, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "below the threshold");
	CU_ASSERT_EQUAL(th_write(lun, 1, 48, 2, buf), FL_STATUS_GOOD); /* 50: reached */
	th_run(lun, 1, tur, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x38, 0x07, "nexus 1 hears the threshold");
	th_run(lun, 2, tur, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x38, 0x07, "nexus 2 hears the threshold");
	CU_ASSERT_EQUAL(th_write(lun, 1, 100, 8, buf), FL_STATUS_GOOD);
	th_run(lun, 1, tur, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "only once");
	th_run(lun, 2, tur, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "only once on nexus 2");
	/* below again (UNMAP 20 blocks), then crossing again reports again */
	memset(param, 0, sizeof(param));
	param[1] = 22;
	param[3] = 16;
	param[8 + 7] = 0;
	param[8 + 11] = 20;
	th_cdb10(unmap, 0x42, 0, 0, 24);
	th_run(lun, 1, unmap, 10, param, 24, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "UNMAP 20 blocks");
	CU_ASSERT_EQUAL(mapped(lun), 38);
	CU_ASSERT_EQUAL(th_write(lun, 1, 0, 8, buf), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(th_write(lun, 1, 8, 8, buf), FL_STATUS_GOOD); /* 54 */
	th_run(lun, 2, tur, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x38, 0x07, "re-armed after falling below");
	fl_lun_destroy(lun);
}

/* Builds an UNMAP parameter list of n descriptors; returns its length. */
static uint16_t unmap_param(uint8_t *p, const uint64_t *lba, const uint32_t *cnt, unsigned n)
{
	uint16_t len = (uint16_t)(8 + 16 * n);

	memset(p, 0, len);
	p[0] = (uint8_t)((len - 2) >> 8);
	p[1] = (uint8_t)(len - 2);
	p[2] = (uint8_t)((16 * n) >> 8);
	p[3] = (uint8_t)(16 * n);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *d = p + 8 + 16 * i;

		for (int k = 0; k < 8; k++)
			d[k] = (uint8_t)(lba[i] >> (56 - 8 * k));
		d[8] = (uint8_t)(cnt[i] >> 24);
		d[9] = (uint8_t)(cnt[i] >> 16);
		d[10] = (uint8_t)(cnt[i] >> 8);
		d[11] = (uint8_t)cnt[i];
	}
	return len;
}

/* UNMAP returns space; GET LBA STATUS shows mapped / deallocated extents. */
static void test_unmap_and_get_lba_status(void)
{
	struct fl_lun *lun = thin_lun(0, 0);
	uint8_t *buf = calloc(64, 512), param[64], cdb[16], st[8 + 16 * 8];
	uint64_t lba[2] = {10, 40};
	uint32_t cnt[2] = {5, 8};
	struct fl_cmd res;
	uint16_t plen;

	th_clear_ua(lun, 1);
	memset(buf, 0x77, 64 * 512);
	CU_ASSERT_EQUAL(th_write(lun, 1, 0, 64, buf), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(mapped(lun), 64);
	plen = unmap_param(param, lba, cnt, 2);
	th_cdb10(cdb, 0x42, 0, 0, plen);
	th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "UNMAP two ranges");
	CU_ASSERT_EQUAL(mapped(lun), 64 - 13);
	CU_ASSERT_EQUAL(th_read(lun, 1, 9, 7, buf), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(buf[0], 0x77);
	CU_ASSERT_EQUAL(buf[512] | buf[5 * 512 + 511], 0); /* LBPRZ: zeroes */
	CU_ASSERT_EQUAL(buf[6 * 512], 0x77);

	th_cdb16(cdb, 0x9e, 0x12, 0, sizeof(st));
	th_run(lun, 1, cdb, 16, NULL, 0, st, sizeof(st), &res);
	TH_EXPECT_GOOD(&res, "GET LBA STATUS");
	CU_ASSERT_EQUAL(fl_get_be32(st), 4 + 16 * 6); /* 6 extents, room for 8 */
	CU_ASSERT(fl_get_be64(st + 8) == 0 && fl_get_be32(st + 16) == 10 && st[20] == 0);
	CU_ASSERT(fl_get_be64(st + 24) == 10 && fl_get_be32(st + 32) == 5 && st[36] == 1);
	CU_ASSERT(fl_get_be64(st + 40) == 15 && fl_get_be32(st + 48) == 25 && st[52] == 0);
	CU_ASSERT(fl_get_be64(st + 56) == 40 && fl_get_be32(st + 64) == 8 && st[68] == 1);
	CU_ASSERT(fl_get_be64(st + 72) == 48 && fl_get_be32(st + 80) == 16 && st[84] == 0);
	/* a small allocation length still reports the first extent */
	th_cdb16(cdb, 0x9e, 0x12, 12, 24);
	th_run(lun, 1, cdb, 16, NULL, 0, st, sizeof(st), &res);
	CU_ASSERT_EQUAL(res.data_in_len, 24);
	CU_ASSERT(fl_get_be64(st + 8) == 12 && fl_get_be32(st + 16) == 3 && st[20] == 1);
	th_cdb16(cdb, 0x9e, 0x12, TH_BLOCKS, 24);
	th_run(lun, 1, cdb, 16, NULL, 0, st, sizeof(st), &res);
	TH_EXPECT(&res, CC, IR, 0x21, 0, "GET LBA STATUS past the end");
	th_cdb16(cdb, 0x9e, 0x12, TH_BLOCKS - 1, 24);
	th_run(lun, 1, cdb, 16, NULL, 0, st, sizeof(st), &res);
	TH_EXPECT_GOOD(&res, "GET LBA STATUS of the last block");
	CU_ASSERT(fl_get_be32(st + 16) == 1 && st[20] == 1);
	free(buf);
	fl_lun_destroy(lun);
}

/* UNMAP parameter list and CDB errors. */
static void test_unmap_errors(void)
{
	struct fl_lun *lun = thin_lun(0, 0);
	uint8_t param[8 + 16 * 300], cdb[10];
	uint64_t lba[300];
	uint32_t cnt[300];
	struct th_sense s;
	struct fl_cmd res;
	uint16_t plen;

	th_clear_ua(lun, 1);
	for (int i = 0; i < 300; i++) {
		lba[i] = (uint64_t)i * 2;
		cnt[i] = 1;
	}
	th_cdb10(cdb, 0x42, 0, 0, 0);
	th_run(lun, 1, cdb, 10, NULL, 0, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "test_unmap_empty_list");
	th_cdb10(cdb, 0x42, 0, 0, 4);
	th_run(lun, 1, cdb, 10, param, 4, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x1a, 0, "test_unmap_param_list_too_short");
	plen = unmap_param(param, lba, cnt, 1);
	param[3] = 32; /* block descriptor data length beyond the list */
	th_cdb10(cdb, 0x42, 0, 0, plen);
	th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x26, 0, "test_unmap_bd_length_beyond_list");
	th_parse_sense(res.sense, res.sense_len, &s);
	CU_ASSERT(s.sks_valid && !s.sks_cd && s.sks_field == 2);
	lba[0] = TH_BLOCKS - 1;
	cnt[0] = 2;
	plen = unmap_param(param, lba, cnt, 1);
	th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x21, 0, "test_unmap_beyond_end");
	lba[0] = UINT64_MAX;
	cnt[0] = 2;
	plen = unmap_param(param, lba, cnt, 1);
	th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x21, 0, "test_unmap_lba_overflow");
	lba[0] = 0;
	cnt[0] = 1;
	plen = unmap_param(param, lba, cnt, SBC_MAX_UNMAP_DESCRIPTORS + 1);
	th_cdb10(cdb, 0x42, 0, 0, plen);
	th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x26, 0, "test_unmap_too_many_descriptors");
	cnt[0] = SBC_MAX_UNMAP_LBA_COUNT + 1;
	lba[0] = 0;
	plen = unmap_param(param, lba, cnt, 1);
	th_cdb10(cdb, 0x42, 0, 0, plen);
	th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x21, 0, "test_unmap_count_beyond_end");
	cnt[0] = 1;
	plen = unmap_param(param, lba, cnt, 1);
	th_cdb10(cdb, 0x42, 0x01, 0, plen);
	th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x24, 0, "test_unmap_anchor");
	th_cdb10(cdb, 0x42, 0, 0, plen);
	th_run(lun, 1, cdb, 10, param, plen - 4, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x24, 0, "test_unmap_short_data_out");
	fl_lun_destroy(lun);

	/* a LUN large enough for the MAXIMUM UNMAP LBA COUNT to be the limit */
	{
		struct fl_lun_config cfg;

		th_config(&cfg);
		cfg.thin = true;
		cfg.num_blocks = 4ull * SBC_MAX_UNMAP_LBA_COUNT;
		lun = th_lun(&cfg);
		th_clear_ua(lun, 1);
		lba[0] = 0;
		cnt[0] = SBC_MAX_UNMAP_LBA_COUNT + 1;
		plen = unmap_param(param, lba, cnt, 1);
		th_cdb10(cdb, 0x42, 0, 0, plen);
		th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
		TH_EXPECT(&res, CC, IR, 0x26, 0, "test_unmap_lba_count_above_maximum");
		lba[1] = SBC_MAX_UNMAP_LBA_COUNT;
		cnt[0] = cnt[1] = SBC_MAX_UNMAP_LBA_COUNT / 2 + 1;
		plen = unmap_param(param, lba, cnt, 2);
		th_cdb10(cdb, 0x42, 0, 0, plen);
		th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
		TH_EXPECT(&res, CC, IR, 0x26, 0, "test_unmap_total_lba_count_above_maximum");
		cnt[0] = cnt[1] = SBC_MAX_UNMAP_LBA_COUNT / 2;
		plen = unmap_param(param, lba, cnt, 2);
		th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
		TH_EXPECT_GOOD(&res, "test_unmap_total_lba_count_at_maximum");
		fl_lun_destroy(lun);
	}

	lun = th_lun(NULL); /* not thin: no UNMAP */
	th_clear_ua(lun, 1);
	th_cdb10(cdb, 0x42, 0, 0, plen);
	th_run(lun, 1, cdb, 10, param, plen, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x20, 0, "test_unmap_not_thin");
	fl_lun_destroy(lun);
}

/* WRITE SAME requests refused (SBC-3 r36 5.42, 5.43): no blocks, ANCHOR, PBDATA, past the
 * end, data-out shorter than a block, WRPROTECT. */
/* clang-format off */
static const struct th_case write_same_errors[] = {
    {"test_write_same10_zero_blocks", {0x41, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, 512, 0,
     CC, IR, 0x24, 0},
    {"test_write_same10_anchor", {0x41, 0x10, 0, 0, 0, 0, 0, 0, 1, 0}, 10, 512, 0,
     CC, IR, 0x24, 0},
    {"test_write_same10_pbdata", {0x41, 0x04, 0, 0, 0, 0, 0, 0, 1, 0}, 10, 512, 0,
     CC, IR, 0x24, 0},
    {"test_write_same16_beyond_end",
     {0x93, 0, 0, 0, 0, 0, 0, 0, (TH_BLOCKS - 1) >> 8, (TH_BLOCKS - 1) & 0xff, 0, 0, 0, 2}, 16,
     512, 0, CC, IR, 0x21, 0},
    {"test_write_same16_short_data_out", {0x93, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, 16,
     100, 0, CC, IR, 0x24, 0},
    {"test_write_same16_wrprotect", {0x93, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}, 16,
     512, 0, CC, IR, 0x24, 0},
};
/* clang-format on */

/* WRITE SAME: pattern, UNMAP bit, NDOB, and its errors. */
static void test_write_same(void)
{
	struct fl_lun *lun = thin_lun(0, 0);
	uint8_t blk[512], zero[512] = {0}, r[16 * 512], cdb[16];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(blk, 512, 42);
	th_cdb10(cdb, 0x41, 0, 100, 16);
	th_run(lun, 1, cdb, 10, blk, 512, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "WRITE SAME(10) of 16 blocks");
	CU_ASSERT_EQUAL(mapped(lun), 16);
	CU_ASSERT_EQUAL(th_read(lun, 1, 100, 16, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, blk, 512) == 0 && memcmp(r + 15 * 512, blk, 512) == 0);
	th_cdb16(cdb, 0x93, 0x08, 104, 8); /* UNMAP bit, zero block */
	th_run(lun, 1, cdb, 16, zero, 512, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "WRITE SAME(16) UNMAP");
	CU_ASSERT_EQUAL(mapped(lun), 8);
	CU_ASSERT_EQUAL(th_read(lun, 1, 100, 16, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r + 4 * 512, zero, 512) == 0 && memcmp(r + 12 * 512, blk, 512) == 0);
	th_cdb16(cdb, 0x93, 0x09, 100, 4); /* UNMAP + NDOB */
	th_run(lun, 1, cdb, 16, NULL, 0, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "WRITE SAME(16) UNMAP NDOB");
	CU_ASSERT_EQUAL(mapped(lun), 4);
	th_cdb16(cdb, 0x93, 0x08, 200, 4); /* UNMAP bit with non-zero data: written */
	th_run(lun, 1, cdb, 16, blk, 512, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "WRITE SAME(16) UNMAP with data");
	CU_ASSERT_EQUAL(mapped(lun), 8);
	th_cdb16(cdb, 0x93, 0x00, 300, 4); /* zeroes without UNMAP: mapped */
	th_run(lun, 1, cdb, 16, zero, 512, NULL, 0, &res);
	CU_ASSERT_EQUAL(mapped(lun), 12);

	th_run_cases(lun, 1, write_same_errors,
		     sizeof(write_same_errors) / sizeof(write_same_errors[0]));
	fl_lun_destroy(lun);
}

/* READ CAPACITY (16) reports LBPME and LBPRZ on a thin LUN. */
static void test_read_capacity16_thin_bits(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun = thin_lun(0, 0);
	uint8_t cdb[16], buf[32];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_cdb16(cdb, 0x9e, 0x10, 0, 32);
	th_run(lun, 1, cdb, 16, NULL, 0, buf, 32, &res);
	TH_EXPECT_GOOD(&res, "READ CAPACITY(16) thin");
	CU_ASSERT_EQUAL(buf[14] & 0xc0, 0xc0);
	fl_lun_destroy(lun);
	th_config(&cfg);
	cfg.thin = true;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	th_run(lun, 1, cdb, 16, NULL, 0, buf, 32, &res);
	CU_ASSERT_EQUAL(buf[14] & 0xc0, 0x80);
	fl_lun_destroy(lun);
}

/* Power loss on a thin LUN gives back the blocks the lost writes mapped. */
static void test_thin_power_loss_unmaps(void)
{
	struct fl_lun *lun = thin_lun(0, 0);
	uint8_t buf[4 * 512], cdb[16];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(buf, sizeof(buf), 5);
	th_cdb16(cdb, 0x8a, 0x08, 0, 2); /* durable */
	th_run(lun, 1, cdb, 16, buf, 1024, NULL, 0, &res);
	CU_ASSERT_EQUAL(th_write(lun, 1, 1, 4, buf), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(mapped(lun), 5);
	CU_ASSERT_EQUAL(fl_lun_power_loss(lun, NULL, NULL), 4);
	CU_ASSERT_EQUAL(mapped(lun), 2);
	fl_lun_destroy(lun);
}

FL_TESTS(thin_tests,
	 FL_TEST(test_thin_map_ranges),
	 FL_TEST(test_thin_map_model),
	 FL_TEST(test_thin_pool_exhausted_writes_nothing),
	 FL_TEST(test_thin_soft_threshold_once),
	 FL_TEST(test_unmap_and_get_lba_status),
	 FL_TEST(test_unmap_errors),
	 FL_TEST(test_write_same),
	 FL_TEST(test_read_capacity16_thin_bits),
	 FL_TEST(test_thin_power_loss_unmaps));

FL_SUITES(FL_SUITE("thin", NULL, NULL, thin_tests));
