/* SPDX-License-Identifier: MIT */
/*
 * test_sbc.c - SBC-3 media commands of the core: READ / WRITE (6, 10, 12,
 * 16), WRITE AND VERIFY, VERIFY, COMPARE AND WRITE, SYNCHRONIZE CACHE,
 * PRE-FETCH, READ CAPACITY, START STOP UNIT; the one LBA range check, DPO /
 * FUA, protection fields, transfer limits and data-out length mismatches.
 */
#include "runner.h"
#include "target_internal.h"
#include "tharness.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CC FL_STATUS_CHECK_CONDITION
#define IR FL_KEY_ILLEGAL_REQUEST
#define B TH_BLOCKS

/* Table-driven status / sense checks of CDBs on a fresh default LUN. */
static void run_table(const struct th_case *cases, size_t n)
{
	struct fl_lun *lun = th_lun(NULL);

	th_clear_ua(lun, 1);
	th_run_cases(lun, 1, cases, n);
	fl_lun_destroy(lun);
}

#define BE16(v) (uint8_t)((v) >> 8), (uint8_t)(v)
#define BE32(v)                                                                                    \
	(uint8_t)((uint32_t)(v) >> 24), (uint8_t)((uint32_t)(v) >> 16), BE16((uint32_t)(v)&0xffff)
#define BE64(v) BE32((uint64_t)(v) >> 32), BE32((uint64_t)(v)&0xffffffffu)

/*
 * X(name, cdb length, data-out bytes, data-in bytes, status, key, asc, ascq,
 *   CDB bytes...) on a default LUN (TH_BLOCKS blocks of 512 bytes).
 */
#define READ_CASES(X)                                                                              \
	X(test_read10_first_block, 10, 0, 512, 0, 0, 0, 0, 0x28, 0, BE32(0), 0, BE16(1), 0)        \
	X(test_read10_last_block, 10, 0, 512, 0, 0, 0, 0, 0x28, 0, BE32(B - 1), 0, BE16(1), 0)     \
	X(test_read10_beyond_end, 10, 0, 1024, CC, IR, 0x21, 0, 0x28, 0, BE32(B - 1), 0, BE16(2),  \
	  0)                                                                                       \
	X(test_read10_lba_past_end, 10, 0, 512, CC, IR, 0x21, 0, 0x28, 0, BE32(B), 0, BE16(1), 0)  \
	X(test_read10_zero_blocks_at_end, 10, 0, 0, 0, 0, 0, 0, 0x28, 0, BE32(B), 0, BE16(0), 0)   \
	X(test_read10_zero_blocks_past_end, 10, 0, 0, CC, IR, 0x21, 0, 0x28, 0, BE32(B + 1), 0,    \
	  BE16(0), 0)                                                                              \
	X(test_read10_lba_max, 10, 0, 512, CC, IR, 0x21, 0, 0x28, 0, BE32(0xffffffffu), 0,         \
	  BE16(1), 0)                                                                              \
	X(test_read16_lba_overflow, 16, 0, 1024, CC, IR, 0x21, 0, 0x88, 0, BE64(UINT64_MAX),       \
	  BE32(2), 0, 0)                                                                           \
	X(test_read16_len_overflow, 16, 0, 0, CC, IR, 0x21, 0, 0x88, 0, BE64(1),                   \
	  BE32(0xffffffffu), 0, 0)                                                                 \
	X(test_read16_beyond_end, 16, 0, 2048, CC, IR, 0x21, 0, 0x88, 0, BE64(B - 3), BE32(4), 0,  \
	  0)                                                                                       \
	X(test_read12_beyond_end, 12, 0, 1024, CC, IR, 0x21, 0, 0xa8, 0, BE32(B - 1), BE32(2), 0,  \
	  0)                                                                                       \
	X(test_read12_good, 12, 0, 1024, 0, 0, 0, 0, 0xa8, 0, BE32(10), BE32(2), 0, 0)             \
	X(test_read6_256_blocks_fit, 6, 0, 256 * 512, 0, 0, 0, 0, 0x08, 0, BE16(B - 256), 0, 0)    \
	X(test_read6_256_blocks_beyond_end, 6, 0, 256 * 512, CC, IR, 0x21, 0, 0x08, 0,             \
	  BE16(B - 255), 0, 0)                                                                     \
	X(test_read10_dpo_fua, 10, 0, 512, 0, 0, 0, 0, 0x28, 0x18, BE32(0), 0, BE16(1), 0)         \
	X(test_read10_rdprotect, 10, 0, 512, CC, IR, 0x24, 0, 0x28, 0x20, BE32(0), 0, BE16(1), 0)  \
	X(test_read16_rdprotect, 16, 0, 512, CC, IR, 0x24, 0, 0x88, 0xe0, BE64(0), BE32(1), 0, 0)  \
	X(test_read10_naca, 10, 0, 512, CC, IR, 0x24, 0, 0x28, 0, BE32(0), 0, BE16(1), 0x04)       \
	X(test_read10_link, 10, 0, 512, CC, IR, 0x24, 0, 0x28, 0, BE32(0), 0, BE16(1), 0x01)       \
	X(test_read10_short_cdb, 6, 0, 512, CC, IR, 0x20, 0, 0x28, 0, BE32(0), 0)

#define WRITE_CASES(X)                                                                             \
	X(test_write10_good, 10, 512, 0, 0, 0, 0, 0, 0x2a, 0, BE32(0), 0, BE16(1), 0)              \
	X(test_write10_beyond_end, 10, 1024, 0, CC, IR, 0x21, 0, 0x2a, 0, BE32(B - 1), 0, BE16(2), \
	  0)                                                                                       \
	X(test_write16_lba_overflow, 16, 2048, 0, CC, IR, 0x21, 0, 0x8a, 0, BE64(UINT64_MAX - 1),  \
	  BE32(4), 0, 0)                                                                           \
	X(test_write12_beyond_end, 12, 512, 0, CC, IR, 0x21, 0, 0xaa, 0, BE32(B), BE32(1), 0, 0)   \
	X(test_write6_beyond_end, 6, 1024, 0, CC, IR, 0x21, 0, 0x0a, 0, BE16(B - 1), 2, 0)         \
	X(test_write6_good, 6, 1024, 0, 0, 0, 0, 0, 0x0a, 0, BE16(5), 2, 0)                        \
	X(test_write10_fua_dpo, 10, 512, 0, 0, 0, 0, 0, 0x2a, 0x18, BE32(3), 0, BE16(1), 0)        \
	X(test_write10_wrprotect, 10, 512, 0, CC, IR, 0x24, 0, 0x2a, 0x40, BE32(0), 0, BE16(1), 0) \
	X(test_write10_zero_blocks, 10, 0, 0, 0, 0, 0, 0, 0x2a, 0, BE32(0), 0, BE16(0), 0)         \
	X(test_write10_extra_data_out, 10, 4096, 0, 0, 0, 0, 0, 0x2a, 0, BE32(0), 0, BE16(1), 0)   \
	X(test_write_verify10_good, 10, 512, 0, 0, 0, 0, 0, 0x2e, 0, BE32(7), 0, BE16(1), 0)       \
	X(test_write_verify16_beyond_end, 16, 512, 0, CC, IR, 0x21, 0, 0x8e, 0, BE64(B), BE32(1),  \
	  0, 0)                                                                                    \
	X(test_verify10_bytchk0, 10, 0, 0, 0, 0, 0, 0, 0x2f, 0, BE32(0), 0, BE16(8), 0)            \
	X(test_verify10_bytchk_reserved, 10, 512, 0, CC, IR, 0x24, 0, 0x2f, 0x04, BE32(0), 0,      \
	  BE16(1), 0)                                                                              \
	X(test_verify16_beyond_end, 16, 0, 0, CC, IR, 0x21, 0, 0x8f, 0, BE64(B - 1), BE32(2), 0,   \
	  0)                                                                                       \
	X(test_verify10_vrprotect, 10, 0, 0, CC, IR, 0x24, 0, 0x2f, 0x20, BE32(0), 0, BE16(1), 0)  \
	X(test_write_verify12_good, 12, 1024, 0, 0, 0, 0, 0, 0xae, 0, BE32(7), BE32(2), 0, 0)       \
	X(test_write_verify12_beyond_end, 12, 1024, 0, CC, IR, 0x21, 0, 0xae, 0, BE32(B - 1),      \
	  BE32(2), 0, 0)                                                                           \
	X(test_write_verify12_wrprotect, 12, 512, 0, CC, IR, 0x24, 0, 0xae, 0x20, BE32(0), BE32(1), \
	  0, 0)                                                                                    \
	X(test_verify12_bytchk0, 12, 0, 0, 0, 0, 0, 0, 0xaf, 0, BE32(0), BE32(8), 0, 0)            \
	X(test_verify12_bytchk_reserved, 12, 512, 0, CC, IR, 0x24, 0, 0xaf, 0x04, BE32(0), BE32(1), \
	  0, 0)                                                                                    \
	X(test_verify12_beyond_end, 12, 0, 0, CC, IR, 0x21, 0, 0xaf, 0, BE32(B), BE32(1), 0, 0)    \
	X(test_verify12_vrprotect, 12, 0, 0, CC, IR, 0x24, 0, 0xaf, 0x40, BE32(0), BE32(1), 0, 0)  \
	X(test_orwrite_good, 16, 1024, 0, 0, 0, 0, 0, 0x8b, 0, BE64(5), BE32(2), 0, 0)            \
	X(test_orwrite_dpo_fua, 16, 512, 0, 0, 0, 0, 0, 0x8b, 0x18, BE64(5), BE32(1), 0, 0)       \
	X(test_orwrite_zero_blocks, 16, 0, 0, 0, 0, 0, 0, 0x8b, 0, BE64(B), BE32(0), 0, 0)        \
	X(test_orwrite_zero_blocks_past_end, 16, 0, 0, CC, IR, 0x21, 0, 0x8b, 0, BE64(B + 1),     \
	  BE32(0), 0, 0)                                                                           \
	X(test_orwrite_beyond_end, 16, 1024, 0, CC, IR, 0x21, 0, 0x8b, 0, BE64(B - 1), BE32(2), 0, \
	  0)                                                                                       \
	X(test_orwrite_orprotect, 16, 512, 0, CC, IR, 0x24, 0, 0x8b, 0x60, BE64(0), BE32(1), 0, 0) \
	X(test_write_atomic16_good, 16, 2048, 0, 0, 0, 0, 0, 0x9c, 0x18, BE64(0), 0, 0, BE16(4),  \
	  0, 0)                                                                                    \
	X(test_write_atomic16_zero_blocks, 16, 0, 0, 0, 0, 0, 0, 0x9c, 0, BE64(B), 0, 0, BE16(0), \
	  0, 0)                                                                                    \
	X(test_write_atomic16_beyond_end, 16, 2048, 0, CC, IR, 0x21, 0, 0x9c, 0, BE64(B - 2), 0,   \
	  0, BE16(4), 0, 0)                                                                        \
	X(test_write_atomic16_lba_overflow, 16, 512, 0, CC, IR, 0x21, 0, 0x9c, 0,                  \
	  BE64(UINT64_MAX), 0, 0, BE16(1), 0, 0)                                                   \
	X(test_write_atomic16_wrprotect, 16, 512, 0, CC, IR, 0x24, 0, 0x9c, 0x20, BE64(0), 0, 0,   \
	  BE16(1), 0, 0)                                                                           \
	X(test_write_atomic16_boundary, 16, 512, 0, CC, IR, 0x24, 0, 0x9c, 0, BE64(0), BE16(1),    \
	  BE16(1), 0, 0)                                                                           \
	X(test_write_atomic16_short_data, 16, 1536, 0, CC, IR, 0x24, 0, 0x9c, 0, BE64(0), 0, 0,    \
	  BE16(4), 0, 0)                                                                           \
	X(test_sync_cache10_all, 10, 0, 0, 0, 0, 0, 0, 0x35, 0, BE32(0), 0, BE16(0), 0)            \
	X(test_sync_cache10_beyond_end, 10, 0, 0, CC, IR, 0x21, 0, 0x35, 0, BE32(B), 0, BE16(0),   \
	  0)                                                                                       \
	X(test_sync_cache16_range, 16, 0, 0, 0, 0, 0, 0, 0x91, 0x02, BE64(B - 8), BE32(8), 0, 0)   \
	X(test_sync_cache16_beyond_end, 16, 0, 0, CC, IR, 0x21, 0, 0x91, 0, BE64(B - 8), BE32(9),  \
	  0, 0)                                                                                    \
	X(test_prefetch10_fits, 10, 0, 0, FL_STATUS_CONDITION_MET, 0, 0, 0, 0x34, 0, BE32(0), 0,   \
	  BE16(8), 0)                                                                              \
	X(test_prefetch16_immed_fits, 16, 0, 0, FL_STATUS_CONDITION_MET, 0, 0, 0, 0x90, 0x02,      \
	  BE64(0), BE32(0), 0, 0)                                                                  \
	X(test_prefetch10_beyond_end, 10, 0, 0, CC, IR, 0x21, 0, 0x34, 0, BE32(B - 1), 0, BE16(2), \
	  0)                                                                                       \
	X(test_caw_beyond_end, 16, 1024, 0, CC, IR, 0x21, 0, 0x89, 0, BE64(B), 0, 0, 0, 1, 0, 0)   \
	X(test_caw_zero_blocks, 16, 0, 0, 0, 0, 0, 0, 0x89, 0, BE64(0), 0, 0, 0, 0, 0, 0)          \
	X(test_caw_zero_blocks_with_data, 16, 512, 0, CC, IR, 0x24, 0, 0x89, 0, BE64(0), 0, 0, 0,  \
	  0, 0, 0)                                                                                 \
	X(test_caw_long_data_out, 16, 2048, 0, CC, IR, 0x24, 0, 0x89, 0, BE64(0), 0, 0, 0, 1, 0,   \
	  0)                                                                                       \
	X(test_write_same16_unmap_not_thin, 16, 512, 0, CC, IR, 0x24, 0, 0x93, 0x08, BE64(0),      \
	  BE32(8), 0, 0)                                                                           \
	X(test_write_same10_good, 10, 512, 0, 0, 0, 0, 0, 0x41, 0, BE32(0), 0, BE16(8), 0)         \
	X(test_write_same16_ndob, 16, 0, 0, 0, 0, 0, 0, 0x93, 0x01, BE64(0), BE32(8), 0, 0)        \
	X(test_write_same10_no_data_out, 10, 0, 0, CC, IR, 0x24, 0, 0x41, 0, BE32(0), 0, BE16(8),  \
	  0)                                                                                       \
	X(test_caw_short_data_out, 16, 512, 0, CC, IR, 0x24, 0, 0x89, 0, BE64(0), 0, 0, 0, 1, 0,   \
	  0)                                                                                       \
	X(test_unsupported_opcode, 16, 0, 0, CC, IR, 0x20, 0, 0xc0)                                \
	X(test_variable_length_cdb, 32, 0, 0, CC, IR, 0x20, 0, 0x7f, 0, 0, 0, 0, 0, 0, 0x18)       \
	X(test_format_unit_unsupported, 6, 0, 0, CC, IR, 0x20, 0, 0x04)                            \
	X(test_unknown_service_action, 16, 0, 32, CC, IR, 0x24, 0, 0x9e, 0x1f)                     \
	X(test_read_capacity10_lba_without_pmi, 10, 0, 8, CC, IR, 0x24, 0, 0x25, 0, BE32(5), 0, 0, \
	  0, 0)                                                                                    \
	X(test_read_capacity10_pmi, 10, 0, 8, 0, 0, 0, 0, 0x25, 0, BE32(5), 0, 0, 1, 0)            \
	X(test_start_stop_power_condition_ignores_start, 6, 0, 0, 0, 0, 0, 0, 0x1b, 0, 0, 0, 0x30, \
	  0)

/* One table row as a test of its own: a fresh LUN, the CDB, the expected result. */
static void run_case(const char *name, const uint8_t *cdb, uint8_t len, uint32_t out, uint32_t in,
		     uint8_t st, uint8_t key, uint8_t asc, uint8_t ascq)
{
	struct th_case c = {.what = name,
			    .cdb_len = len,
			    .out_len = out,
			    .in_cap = in,
			    .status = st,
			    .key = key,
			    .asc = asc,
			    .ascq = ascq};

	memcpy(c.cdb, cdb, FL_CDB_MAX);
	run_table(&c, 1);
}

/* Each row of READ_CASES / WRITE_CASES becomes test function `name`. */
#define CASE_FN(name, len, out, in, st, key, asc, ascq, ...)                                       \
	static void name(void)                                                                     \
	{                                                                                          \
		static const uint8_t cdb[FL_CDB_MAX] = {__VA_ARGS__};                              \
		run_case(#name, cdb, len, out, in, st, key, asc, ascq);                            \
	}
#define CASE_INFO(name, ...) {#name, name},
READ_CASES(CASE_FN)
WRITE_CASES(CASE_FN)

/* Runs cdb with data and returns the result (nexus 1). */
static struct fl_cmd run(struct fl_lun *lun, const uint8_t *cdb, size_t len, const void *out,
			 uint32_t out_len, void *in, uint32_t in_cap)
{
	struct fl_cmd res;

	memset(&res, 0, sizeof(res));
	th_run(lun, 1, cdb, len, out, out_len, in, in_cap, &res);
	return res;
}

/* Data written with each WRITE size reads back with each READ size. */
static void test_write_read_all_sizes(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t w[4 * 512], r[4 * 512], cdb[16];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(w, sizeof(w), 1);
	th_cdb6(cdb, 0x0a, 100, 4);
	res = run(lun, cdb, 6, w, sizeof(w), NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE(6)");
	memset(r, 0, sizeof(r));
	th_cdb10(cdb, 0x28, 0, 100, 4);
	res = run(lun, cdb, 10, NULL, 0, r, sizeof(r));
	TH_EXPECT_GOOD(&res, "READ(10)");
	CU_ASSERT_EQUAL(res.data_in_len, sizeof(r));
	CU_ASSERT_EQUAL(res.residual, 0);
	CU_ASSERT(memcmp(w, r, sizeof(w)) == 0);

	th_pattern(w, sizeof(w), 2);
	th_cdb12(cdb, 0xaa, 0, 200, 4);
	res = run(lun, cdb, 12, w, sizeof(w), NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE(12)");
	th_cdb16(cdb, 0x88, 0, 200, 4);
	res = run(lun, cdb, 16, NULL, 0, r, sizeof(r));
	CU_ASSERT(memcmp(w, r, sizeof(w)) == 0);

	th_pattern(w, sizeof(w), 3);
	th_cdb16(cdb, 0x8a, 0, B - 4, 4);
	res = run(lun, cdb, 16, w, sizeof(w), NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE(16) at the end");
	th_cdb6(cdb, 0x08, B - 4, 4);
	res = run(lun, cdb, 6, NULL, 0, r, sizeof(r));
	TH_EXPECT_GOOD(&res, "READ(6) at the end");
	CU_ASSERT(memcmp(w, r, sizeof(w)) == 0);

	th_pattern(w, sizeof(w), 4);
	th_cdb10(cdb, 0x2a, 0, 300, 4);
	res = run(lun, cdb, 10, w, sizeof(w), NULL, 0);
	th_cdb12(cdb, 0xa8, 0, 300, 4);
	res = run(lun, cdb, 12, NULL, 0, r, sizeof(r));
	CU_ASSERT(memcmp(w, r, sizeof(w)) == 0);
	/* never-written blocks read as zeroes */
	th_cdb10(cdb, 0x28, 0, 5000, 1);
	res = run(lun, cdb, 10, NULL, 0, r, 512);
	CU_ASSERT_EQUAL(r[0] | r[100] | r[511], 0);
	fl_lun_destroy(lun);
}

/* A data-in buffer smaller than the transfer: truncated, positive residual. */
static void test_read10_short_buffer_residual(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t w[2 * 512], r[700], cdb[10];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(w, sizeof(w), 9);
	CU_ASSERT_EQUAL(th_write(lun, 1, 40, 2, w), FL_STATUS_GOOD);
	th_cdb10(cdb, 0x28, 0, 40, 2);
	res = run(lun, cdb, 10, NULL, 0, r, sizeof(r));
	TH_EXPECT_GOOD(&res, "READ(10) into 700 bytes");
	CU_ASSERT_EQUAL(res.data_in_len, 700);
	CU_ASSERT_EQUAL(res.residual, 1024 - 700);
	CU_ASSERT(memcmp(r, w, 700) == 0);
	res = run(lun, cdb, 10, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "READ(10) without a buffer");
	CU_ASSERT_EQUAL(res.data_in_len, 0);
	CU_ASSERT_EQUAL(res.residual, 1024);
	fl_lun_destroy(lun);
}

/* Field pointers of 24/00: C/D, byte and bit, in both sense formats. */
static void test_invalid_field_pointer(void)
{
	struct fl_lun *lun;
	uint8_t cdb[16], w[512] = {0};
	struct th_sense s;
	struct fl_cmd res;

	for (int d_sense = 0; d_sense < 2; d_sense++) {
		lun = th_lun_sense(d_sense);
		th_clear_ua(lun, 1);
		th_cdb10(cdb, 0x28, 0x20, 0, 1);
		res = run(lun, cdb, 10, NULL, 0, w, 512);
		th_parse_sense(res.sense, res.sense_len, &s);
		CU_ASSERT_EQUAL(s.descriptor, d_sense);
		CU_ASSERT(s.asc == 0x24 && s.sks_valid && s.sks_cd && s.sks_field == 1 &&
			  s.sks_bit == 7);
		th_cdb16(cdb, 0x8f, 0x02, 0, 2); /* VERIFY(16) BYTCHK=1, one block of data */
		res = run(lun, cdb, 16, w, 512, NULL, 0);
		th_parse_sense(res.sense, res.sense_len, &s);
		CU_ASSERT(s.asc == 0x24 && s.sks_valid && s.sks_field == 10 && s.sks_bit == -1);
		th_cdb10(cdb, 0x28, 0, 0, 1);
		cdb[9] = 0x04;
		res = run(lun, cdb, 10, NULL, 0, w, 512);
		th_parse_sense(res.sense, res.sense_len, &s);
		CU_ASSERT(s.asc == 0x24 && s.sks_field == 9 && s.sks_bit == 2);
		fl_lun_destroy(lun);
	}
}

/* Data-out shorter or longer than the transfer length: whole blocks that came are written. */
static void test_write_data_out_mismatch(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t a[2 * 512], b[2 * 512], r[2 * 512], cdb[10];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	CU_ASSERT_EQUAL(th_write(lun, 1, 0, 2, a), FL_STATUS_GOOD);
	th_cdb10(cdb, 0x2a, 0, 0, 2);
	res = run(lun, cdb, 10, b, 512, NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE(10) of 2 blocks with 1 block of data");
	CU_ASSERT_EQUAL(res.residual, 512);
	CU_ASSERT_EQUAL(th_read(lun, 1, 0, 2, r), FL_STATUS_GOOD);
	CU_ASSERT(r[0] == 'b' && r[511] == 'b' && r[512] == 'a' && r[1023] == 'a');
	res = run(lun, cdb, 10, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE(10) of 2 blocks without data");
	CU_ASSERT_EQUAL(res.residual, 1024);
	res = run(lun, cdb, 10, b, 200, NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE(10) of 2 blocks with 200 bytes");
	CU_ASSERT_EQUAL(res.residual, 1024 - 200);
	CU_ASSERT_EQUAL(th_read(lun, 1, 0, 2, r), FL_STATUS_GOOD);
	CU_ASSERT(r[0] == 'b' && r[512] == 'a'); /* a partial block is not written */
	memset(b, 'c', sizeof(b));
	th_cdb10(cdb, 0x2e, 0, 1, 1); /* WRITE AND VERIFY(10), 1 block, 2 blocks of data */
	res = run(lun, cdb, 10, b, 1024, NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE AND VERIFY(10) with extra data");
	CU_ASSERT_EQUAL(res.residual, -512);
	CU_ASSERT_EQUAL(th_read(lun, 1, 0, 2, r), FL_STATUS_GOOD);
	CU_ASSERT(r[0] == 'b' && r[512] == 'c');
	CU_ASSERT_EQUAL(th_read(lun, 1, 2, 1, r), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(r[0], 0); /* the extra block went nowhere */
	fl_lun_destroy(lun);
}

/* FUA makes the data durable at once; a cached write stays dirty until sync. */
static void test_write10_fua_is_durable(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t w[8 * 512], cdb[16];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(w, sizeof(w), 5);
	th_cdb10(cdb, 0x2a, 0x00, 10, 8);
	res = run(lun, cdb, 10, w, sizeof(w), NULL, 0);
	TH_EXPECT_GOOD(&res, "cached WRITE(10)");
	CU_ASSERT_EQUAL(dirty_count(lun), 8);
	th_cdb10(cdb, 0x2a, 0x08, 14, 8);
	res = run(lun, cdb, 10, w, sizeof(w), NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE(10) FUA");
	CU_ASSERT_EQUAL(dirty_count(lun), 4); /* 10..13 still cached */
	th_cdb16(cdb, 0x91, 0, 10, 2);
	res = run(lun, cdb, 16, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "SYNCHRONIZE CACHE(16) of 2 blocks");
	CU_ASSERT_EQUAL(dirty_count(lun), 2);
	th_cdb10(cdb, 0x35, 0, 0, 0);
	res = run(lun, cdb, 10, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "SYNCHRONIZE CACHE(10) of everything");
	CU_ASSERT_EQUAL(dirty_count(lun), 0);
	th_cdb16(cdb, 0x8e, 0, 100, 1); /* WRITE AND VERIFY reaches the medium */
	res = run(lun, cdb, 16, w, 512, NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE AND VERIFY(16)");
	CU_ASSERT_EQUAL(dirty_count(lun), 0);
	th_cdb12(cdb, 0xae, 0, 101, 2);
	res = run(lun, cdb, 12, w, 1024, NULL, 0);
	TH_EXPECT_GOOD(&res, "WRITE AND VERIFY(12)");
	CU_ASSERT_EQUAL(dirty_count(lun), 0);
	{
		uint8_t r[1024];

		CU_ASSERT_EQUAL(th_read(lun, 1, 101, 2, r), FL_STATUS_GOOD);
		CU_ASSERT(memcmp(r, w, sizeof(r)) == 0);
	}
	fl_lun_destroy(lun);
}

/* With the write cache off every write is durable. */
static void test_write10_wce_off_is_durable(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t w[512] = {1};

	th_config(&cfg);
	cfg.write_cache = false;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	CU_ASSERT_EQUAL(th_write(lun, 1, 0, 1, w), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(dirty_count(lun), 0);
	fl_lun_destroy(lun);
}

/* VERIFY with BYTCHK 1 and 3: match, and miscompare with the offset. */
static void test_verify_bytchk_compare(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t w[3 * 512], v[3 * 512], cdb[16];
	struct th_sense s;
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(w, sizeof(w), 11);
	CU_ASSERT_EQUAL(th_write(lun, 1, 50, 3, w), FL_STATUS_GOOD);
	memcpy(v, w, sizeof(v));
	th_cdb10(cdb, 0x2f, 0x02, 50, 3);
	res = run(lun, cdb, 10, v, sizeof(v), NULL, 0);
	TH_EXPECT_GOOD(&res, "VERIFY(10) BYTCHK=1 equal");
	v[512 + 77] ^= 1;
	th_cdb16(cdb, 0x8f, 0x02, 50, 3);
	res = run(lun, cdb, 16, v, sizeof(v), NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_MISCOMPARE, 0x1d, 0, "VERIFY(16) BYTCHK=1 differs");
	th_parse_sense(res.sense, res.sense_len, &s);
	CU_ASSERT(s.info_valid && s.info == 512 + 77);
	/* BYTCHK=3: one block compared with every block of the range */
	memset(w, 0x5a, 512);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(th_write(lun, 1, 60 + i, 1, w), FL_STATUS_GOOD);
	th_cdb10(cdb, 0x2f, 0x06, 60, 3);
	res = run(lun, cdb, 10, w, 512, NULL, 0);
	TH_EXPECT_GOOD(&res, "VERIFY(10) BYTCHK=3 equal");
	th_cdb10(cdb, 0x2f, 0x06, 61, 3);
	res = run(lun, cdb, 10, w, 512, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_MISCOMPARE, 0x1d, 0, "VERIFY(10) BYTCHK=3 differs");
	th_parse_sense(res.sense, res.sense_len, &s);
	CU_ASSERT(s.info_valid && s.info == 2 * 512);
	/* VERIFY(12) runs the same body: match, then a miscompare in block 2 */
	th_cdb12(cdb, 0xaf, 0x06, 60, 3);
	res = run(lun, cdb, 12, w, 512, NULL, 0);
	TH_EXPECT_GOOD(&res, "VERIFY(12) BYTCHK=3 equal");
	memcpy(v, w, 512);
	memcpy(v + 512, w, 512);
	memset(v + 1024, 0x5a, 512);
	v[1024 + 9] = 0;
	th_cdb12(cdb, 0xaf, 0x02, 60, 3);
	res = run(lun, cdb, 12, v, sizeof(v), NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_MISCOMPARE, 0x1d, 0, "VERIFY(12) BYTCHK=1 differs");
	th_parse_sense(res.sense, res.sense_len, &s);
	CU_ASSERT(s.info_valid && s.info == 1024 + 9);
	/* too little data for BYTCHK=1: 24/00 pointing at the 12-byte CDB's length */
	res = run(lun, cdb, 12, v, 512, NULL, 0);
	th_parse_sense(res.sense, res.sense_len, &s);
	CU_ASSERT(s.asc == 0x24 && s.sks_valid && s.sks_field == 6 && s.sks_bit == -1);
	fl_lun_destroy(lun);
}

/* COMPARE AND WRITE: writes on a match, MISCOMPARE + offset and no write otherwise. */
static void test_compare_and_write(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t old[2 * 512], buf[4 * 512], r[2 * 512], cdb[16];
	struct th_sense s;
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(old, sizeof(old), 21);
	CU_ASSERT_EQUAL(th_write(lun, 1, 70, 2, old), FL_STATUS_GOOD);
	memcpy(buf, old, sizeof(old));
	th_pattern(buf + sizeof(old), sizeof(old), 22);
	th_cdb16(cdb, 0x89, 0, 70, 0);
	cdb[13] = 2;
	res = run(lun, cdb, 16, buf, sizeof(buf), NULL, 0);
	TH_EXPECT_GOOD(&res, "COMPARE AND WRITE match");
	CU_ASSERT_EQUAL(th_read(lun, 1, 70, 2, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, buf + sizeof(old), sizeof(r)) == 0);
	/* now the medium holds the new data: comparing with `old` fails at byte 0? */
	res = run(lun, cdb, 16, buf, sizeof(buf), NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_MISCOMPARE, 0x1d, 0, "COMPARE AND WRITE miscompare");
	th_parse_sense(res.sense, res.sense_len, &s);
	{
		size_t first = 0;

		while (first < sizeof(r) && r[first] == buf[first])
			first++;
		CU_ASSERT(s.info_valid && s.info == first);
	}
	CU_ASSERT_EQUAL(th_read(lun, 1, 70, 2, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, buf + sizeof(old), sizeof(r)) == 0); /* nothing written */
	/* a difference in the second block only */
	memcpy(buf, r, sizeof(r));
	buf[512 + 300] ^= 0xff;
	res = run(lun, cdb, 16, buf, sizeof(buf), NULL, 0);
	th_parse_sense(res.sense, res.sense_len, &s);
	CU_ASSERT(s.key == FL_KEY_MISCOMPARE && s.info == 512 + 300);
	fl_lun_destroy(lun);
}

/* READ CAPACITY (10) and (16) data; 0xFFFFFFFF for a > 2 TiB LUN. */
static void test_read_capacity(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun = th_lun(NULL);
	uint8_t cdb[16], buf[64];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x25;
	res = run(lun, cdb, 10, NULL, 0, buf, 8);
	TH_EXPECT_GOOD(&res, "READ CAPACITY(10)");
	CU_ASSERT_EQUAL(res.data_in_len, 8);
	CU_ASSERT_EQUAL(fl_get_be32(buf), B - 1);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 512);
	th_cdb16(cdb, 0x9e, 0x10, 0, 32);
	memset(buf, 0xee, sizeof(buf));
	res = run(lun, cdb, 16, NULL, 0, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "READ CAPACITY(16)");
	CU_ASSERT_EQUAL(res.data_in_len, 32);
	CU_ASSERT_EQUAL(fl_get_be64(buf), B - 1);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 8), 512);
	CU_ASSERT_EQUAL(buf[14] & 0xc0, 0); /* not thin: no LBPME */
	th_cdb16(cdb, 0x9e, 0x10, 0, 12);   /* allocation length truncates */
	res = run(lun, cdb, 16, NULL, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(res.data_in_len, 12);
	fl_lun_destroy(lun);

	th_config(&cfg);
	cfg.num_blocks = 1ull << 33;
	cfg.block_size = 4096;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x25;
	res = run(lun, cdb, 10, NULL, 0, buf, 8);
	CU_ASSERT_EQUAL(fl_get_be32(buf), 0xffffffffu);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 4096);
	th_cdb16(cdb, 0x9e, 0x10, 0, 32);
	res = run(lun, cdb, 16, NULL, 0, buf, 32);
	CU_ASSERT_EQUAL(fl_get_be64(buf), (1ull << 33) - 1);
	/* a 4 KiB-block LUN: the last block is readable, the one after is not */
	th_cdb16(cdb, 0x88, 0, (1ull << 33) - 1, 1);
	res = run(lun, cdb, 16, NULL, 0, buf, 0);
	TH_EXPECT_GOOD(&res, "READ(16) of the last 4 KiB block");
	th_cdb16(cdb, 0x88, 0, 1ull << 33, 1);
	res = run(lun, cdb, 16, NULL, 0, buf, 0);
	TH_EXPECT(&res, CC, IR, 0x21, 0, "READ(16) past a 32 TiB LUN");
	fl_lun_destroy(lun);
}

/* PRE-FETCH of more than the cache holds completes with GOOD. */
static void test_prefetch_larger_than_cache(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t cdb[16];
	struct fl_cmd res;

	fl_lun_config_default(&cfg); /* 1 GiB > SBC_CACHE_BYTES */
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	th_cdb16(cdb, 0x90, 0, 0, 0);
	res = run(lun, cdb, 16, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "PRE-FETCH(16) of the whole LUN");
	th_cdb10(cdb, 0x34, 0x02, 0, 16);
	res = run(lun, cdb, 10, NULL, 0, NULL, 0);
	CU_ASSERT_EQUAL(res.status, FL_STATUS_CONDITION_MET);
	fl_lun_destroy(lun);
	/* "prefetch": "good": a LUN without a cache answers GOOD whatever the range */
	cfg.prefetch_good = true;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	res = run(lun, cdb, 10, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "PRE-FETCH(10) of 16 blocks, prefetch good");
	fl_lun_destroy(lun);
}

/* START STOP UNIT: stopped -> media commands NOT READY 04/02; start again. */
static void test_start_stop_unit(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t stop[6] = {0x1b, 0, 0, 0, 0x00, 0}, start[6] = {0x1b, 0, 0, 0, 0x01, 0};
	uint8_t tur[6] = {0}, cdb[16], buf[512];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	res = run(lun, stop, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "STOP");
	res = run(lun, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, 0x02, "TUR while stopped");
	th_cdb10(cdb, 0x28, 0, 0, 1);
	res = run(lun, cdb, 10, NULL, 0, buf, 512);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, 0x02, "READ(10) while stopped");
	th_cdb10(cdb, 0x2a, 0, 0, 1);
	res = run(lun, cdb, 10, buf, 512, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, 0x02, "WRITE(10) while stopped");
	th_cdb10(cdb, 0x35, 0, 0, 0);
	res = run(lun, cdb, 10, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, 0x02, "SYNCHRONIZE CACHE while stopped");
	/* the stopped check comes before the range check */
	th_cdb10(cdb, 0x28, 0, B + 5, 1);
	res = run(lun, cdb, 10, NULL, 0, buf, 512);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, 0x02, "READ(10) past the end while stopped");
	res = run(lun, start, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "START");
	res = run(lun, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "TUR after START");
	fl_lun_destroy(lun);
}

/* Marks nexus `id` as preventing removal, as PREVENT ALLOW does. */
static void x_nexus_prevents(struct fl_lun *lun, uint64_t id)
{
	for (struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
		if (ns->id == id)
			ns->prevent_removal = true;
	lun->removal_prevented = true;
}

/* Removable medium: eject (3A/00), load, PREVENT; a fixed one cannot be ejected. */
static void test_start_stop_eject_load(void)
{
	uint8_t eject[6] = {0x1b, 0, 0, 0, 0x02, 0}, load[6] = {0x1b, 0, 0, 0, 0x03, 0};
	uint8_t start[6] = {0x1b, 0, 0, 0, 0x01, 0}, tur[6] = {0}, cdb[16], buf[512];
	struct fl_lun_config cfg;
	struct fl_lun *lun = th_lun(NULL);
	struct th_sense s;
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	res = run(lun, eject, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x24, 0, "test_start_stop_eject_fixed_medium");
	th_parse_sense(res.sense, res.sense_len, &s);
	CU_ASSERT(s.sks_valid && s.sks_field == 4 && s.sks_bit == 1);
	fl_lun_destroy(lun);

	th_config(&cfg);
	cfg.removable = true;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	res = run(lun, eject, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "eject");
	res = run(lun, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x3a, 0, "TUR without a medium");
	th_cdb10(cdb, 0x28, 0, 0, 1);
	res = run(lun, cdb, 10, NULL, 0, buf, 512);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x3a, 0, "READ(10) without a medium");
	res = run(lun, start, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x3a, 0, "START without a medium");
	res = run(lun, load, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "load");
	res = run(lun, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "TUR after load");
	lun->removal_prevented = true; /* what PREVENT ALLOW MEDIUM REMOVAL sets */
	res = run(lun, eject, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x53, 0x02, "eject while prevented");
	res = run(lun, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "medium still there");
	lun->removal_prevented = false;
	res = run(lun, eject, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "eject once allowed");
	lun->removal_prevented = true;
	res = run(lun, load, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x53, 0x02, "load while prevented");
	/* the preventing nexus goes away: its prevention goes with it */
	x_nexus_prevents(lun, 1);
	th_run(lun, 2, load, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x29, 0, "nexus 2 first hears power on");
	th_run(lun, 2, load, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT(&res, CC, IR, 0x53, 0x02, "nexus 1 prevents for everyone");
	fl_lun_nexus_gone(lun, 1);
	th_run(lun, 2, load, 6, NULL, 0, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "load after the preventing nexus left");
	/* a power condition other than 0 ignores LOEJ and START */
	eject[4] = 0x12;
	res = run(lun, eject, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x29, 0, "nexus 1 is new again");
	res = run(lun, eject, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "PC=1 with LOEJ");
	res = run(lun, tur, 6, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "medium not ejected by PC=1");
	fl_lun_destroy(lun);
}

/* Each ALUA state refuses media commands with its own ASCQ. */
static void test_alua_states_refuse_media(void)
{
	static const struct {
		enum fl_alua_state st;
		uint8_t ascq;
	} refuse[] = {
	    {FL_ALUA_STANDBY, 0x0b},
	    {FL_ALUA_UNAVAILABLE, 0x0c},
	    {FL_ALUA_TRANSITIONING, 0x0a},
	    {FL_ALUA_OFFLINE, 0x12},
	};
	struct fl_lun *lun = th_lun(NULL);
	uint8_t cdb[16], buf[512];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		fl_lun_set_alua_state(lun, refuse[i].st);
		th_cdb10(cdb, 0x28, 0, 0, 1);
		res = run(lun, cdb, 10, NULL, 0, buf, 512);
		TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x2a, 0x06, "UA after ALUA change");
		res = run(lun, cdb, 10, NULL, 0, buf, 512);
		TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, refuse[i].ascq, "READ(10) refused");
		th_cdb16(cdb, 0x8a, 0, 0, 1);
		res = run(lun, cdb, 16, buf, 512, NULL, 0);
		TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, refuse[i].ascq, "WRITE(16) refused");
		memset(cdb, 0, 6);
		res = run(lun, cdb, 6, NULL, 0, NULL, 0);
		TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, refuse[i].ascq, "TUR refused");
		cdb[0] = 0x1b;
		cdb[4] = 1;
		res = run(lun, cdb, 6, NULL, 0, NULL, 0);
		if (refuse[i].st == FL_ALUA_TRANSITIONING)
			TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, 0x0a,
				  "START STOP transitioning");
		else
			TH_EXPECT_GOOD(&res, "START STOP UNIT is not a media command");
	}
	/* transitioning: only INQUIRY, REPORT LUNS, RTPG and REQUEST SENSE are served */
	fl_lun_set_alua_state(lun, FL_ALUA_TRANSITIONING);
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x1a; /* MODE SENSE(6) */
	cdb[4] = 255;
	res = run(lun, cdb, 6, NULL, 0, buf, 255);
	TH_EXPECT(&res, CC, FL_KEY_UNIT_ATTENTION, 0x2a, 0x06, "UA first");
	res = run(lun, cdb, 6, NULL, 0, buf, 255);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, 0x0a, "MODE SENSE(6) while transitioning");
	th_cdb12(cdb, 0xa0, 0, 0, 256); /* REPORT LUNS */
	res = run(lun, cdb, 12, NULL, 0, buf, 256);
	TH_EXPECT_GOOD(&res, "REPORT LUNS while transitioning");
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x1b; /* START STOP UNIT */
	cdb[4] = 1;
	res = run(lun, cdb, 6, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, FL_KEY_NOT_READY, 0x04, 0x0a, "START STOP while transitioning");
	fl_lun_set_alua_state(lun, FL_ALUA_ACTIVE_NON_OPTIMIZED);
	th_clear_ua(lun, 1);
	th_cdb10(cdb, 0x28, 0, 0, 1);
	res = run(lun, cdb, 10, NULL, 0, buf, 512);
	TH_EXPECT_GOOD(&res, "READ(10) active/non-optimized");
	fl_lun_destroy(lun);
}

/* A configured maximum transfer length is enforced. */
static void test_max_transfer_length(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t cdb[16], *buf = calloc(9, 512);
	struct fl_cmd res;

	th_config(&cfg);
	cfg.max_xfer_blocks = 8;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	th_cdb10(cdb, 0x28, 0, 0, 8);
	res = run(lun, cdb, 10, NULL, 0, buf, 8 * 512);
	TH_EXPECT_GOOD(&res, "READ(10) of 8 blocks");
	th_cdb10(cdb, 0x28, 0, 0, 9);
	res = run(lun, cdb, 10, NULL, 0, buf, 9 * 512);
	TH_EXPECT(&res, CC, IR, 0x24, 0, "READ(10) of 9 blocks");
	th_cdb16(cdb, 0x8a, 0, 0, 9);
	res = run(lun, cdb, 16, buf, 9 * 512, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x24, 0, "WRITE(16) of 9 blocks");
	free(buf);
	fl_lun_destroy(lun);

	/* the default: SBC_DEFAULT_MAX_XFER_BYTES, here 65536 blocks of 512 */
	th_config(&cfg);
	cfg.num_blocks = 1 << 20;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	CU_ASSERT_EQUAL(lun_max_xfer_blocks(lun), SBC_DEFAULT_MAX_XFER_BYTES / 512);
	th_cdb16(cdb, 0x88, 0, 0, SBC_DEFAULT_MAX_XFER_BYTES / 512 + 1);
	res = run(lun, cdb, 16, NULL, 0, NULL, 0);
	TH_EXPECT(&res, CC, IR, 0x24, 0, "test_read16_too_long");
	th_cdb16(cdb, 0x88, 0, 0, SBC_DEFAULT_MAX_XFER_BYTES / 512);
	res = run(lun, cdb, 16, NULL, 0, NULL, 0);
	TH_EXPECT_GOOD(&res, "READ(16) of the maximum transfer length");
	fl_lun_destroy(lun);
}

/* READ DEFECT DATA (10, 12): an empty list in the requested format, allocation length honoured. */
static void test_read_defect_data(void)
{
	static const struct {
		const char *what;
		uint8_t cdb[12];
		uint8_t cdb_len;
		uint32_t in_cap;
		uint8_t status;
		uint32_t len;	  /* data-in bytes */
		uint8_t byte1;	  /* PLISTV, GLISTV, DEFECT LIST FORMAT */
		int32_t residual; /* against the allocation length */
	} cases[] = {
	    {"test_read_defect_data10_plist_glist_short", {0x37, 0, 0x18, 0, 0, 0, 0, 0, 32, 0}, 10,
	     64, 0, 4, 0x18, 28},
	    {"test_read_defect_data10_glist_long_block", {0x37, 0, 0x0b, 0, 0, 0, 0, 0, 4, 0}, 10,
	     64, 0, 4, 0x0b, 0},
	    {"test_read_defect_data10_physical_sector", {0x37, 0, 0x15, 0, 0, 0, 0, 0, 255, 0}, 10,
	     255, 0, 4, 0x15, 251},
	    {"test_read_defect_data10_alloc_2", {0x37, 0, 0x10, 0, 0, 0, 0, 0, 2, 0}, 10, 64, 0, 2,
	     0x10, 0},
	    {"test_read_defect_data10_alloc_0", {0x37, 0, 0x10, 0, 0, 0, 0, 0, 0, 0}, 10, 64, 0, 0, 0,
	     0},
	    {"test_read_defect_data10_vendor_format", {0x37, 0, 0x06, 0, 0, 0, 0, 0, 32, 0}, 10, 64,
	     CC, 0, 0, 0},
	    {"test_read_defect_data10_reserved_format", {0x37, 0, 0x1f, 0, 0, 0, 0, 0, 32, 0}, 10,
	     64, CC, 0, 0, 0},
	    {"test_read_defect_data12_none", {0xb7, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0}, 12, 64, 0, 8,
	     0, 24},
	    {"test_read_defect_data12_both_bytes_from_index",
	     {0xb7, 0x1c, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, 12, 512, 0, 8, 0x1c, 248},
	    {"test_read_defect_data12_alloc_6", {0xb7, 0x09, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0}, 12, 64, 0,
	     6, 0x09, 0},
	    {"test_read_defect_data12_index_past_empty_list",
	     {0xb7, 0x08, 0, 0, 0, 9, 0, 0, 0, 8, 0, 0}, 12, 64, 0, 8, 0x08, 0},
	    {"test_read_defect_data12_reserved_format", {0xb7, 0x07, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0},
	     12, 64, CC, 0, 0, 0},
	};
	struct fl_lun *lun = th_lun(NULL);
	uint8_t buf[512];
	struct th_sense s;
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 0xee, sizeof(buf));
		res = run(lun, cases[i].cdb, cases[i].cdb_len, NULL, 0, buf, cases[i].in_cap);
		if (cases[i].status == CC) {
			TH_EXPECT(&res, CC, IR, 0x24, 0, cases[i].what);
			th_parse_sense(res.sense, res.sense_len, &s);
			TH_CHECK(s.sks_valid && s.sks_field == (cases[i].cdb_len == 12 ? 1 : 2) &&
				     s.sks_bit == 2,
				 "%s: field pointer", cases[i].what);
			continue;
		}
		TH_EXPECT_GOOD(&res, cases[i].what);
		TH_CHECK(res.data_in_len == cases[i].len, "%s: %u bytes", cases[i].what,
			 res.data_in_len);
		TH_CHECK(res.residual == cases[i].residual, "%s: residual %lld", cases[i].what,
			 (long long)res.residual);
		if (cases[i].len > 1)
			TH_CHECK(buf[0] == 0 && buf[1] == cases[i].byte1, "%s: header %02x %02x",
				 cases[i].what, buf[0], buf[1]);
		for (uint32_t b = 2; b < cases[i].len; b++)
			TH_CHECK(buf[b] == 0, "%s: byte %u is %02x", cases[i].what, b, buf[b]);
		TH_CHECK(buf[cases[i].len] == 0xee, "%s: wrote past its length", cases[i].what);
	}
	fl_lun_destroy(lun);
}

/*
 * A write-protected LUN: every command that changes the medium gets DATA
 * PROTECT 27/00 and changes nothing; reads, VERIFY and SYNCHRONIZE CACHE
 * work; MODE SENSE (6, 10) report WP. Thin, so WRITE SAME with UNMAP and
 * UNMAP would otherwise succeed.
 */
static void test_write_protected(void)
{
	static const struct th_case cases[] = {
	    {"test_wp_write6", {0x0a, 0, 0, 1, 1, 0}, 6, 512, 0, CC, FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write10", {0x2a, 0, 0, 0, 0, 1, 0, 0, 1, 0}, 10, 512, 0, CC,
	     FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write12", {0xaa, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 12, 512, 0, CC,
	     FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write16", {0x8a, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 16, 512, 0, CC,
	     FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write_verify10", {0x2e, 0, 0, 0, 0, 1, 0, 0, 1, 0}, 10, 512, 0, CC,
	     FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write_verify12", {0xae, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 12, 512, 0, CC,
	     FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write_verify16", {0x8e, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 16, 512,
	     0, CC, FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_compare_and_write", {0x89, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 16,
	     1024, 0, CC, FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write_same10", {0x41, 0, 0, 0, 0, 1, 0, 0, 8, 0}, 10, 512, 0, CC,
	     FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write_same16_unmap", {0x93, 0x08, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0}, 16,
	     512, 0, CC, FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_orwrite", {0x8b, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 16, 512, 0, CC,
	     FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_write_atomic16", {0x9c, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 16, 512,
	     0, CC, FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_unmap", {0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10, 24, 0, CC, FL_KEY_DATA_PROTECT,
	     0x27, 0},
	    {"test_wp_write10_beyond_end_still_protected", {0x2a, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 1,
	     0}, 10, 512, 0, CC, FL_KEY_DATA_PROTECT, 0x27, 0},
	    {"test_wp_read10", {0x28, 0, 0, 0, 0, 1, 0, 0, 1, 0}, 10, 0, 512, 0, 0, 0, 0},
	    {"test_wp_verify16", {0x8f, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}, 16, 0, 0, 0, 0, 0,
	     0},
	    {"test_wp_sync_cache10", {0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, 0, 0, 0, 0, 0, 0},
	    {"test_wp_read_capacity10", {0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, 0, 8, 0, 0, 0, 0},
	    {"test_wp_tur", {0}, 6, 0, 0, 0, 0, 0, 0},
	};
	struct fl_lun_config cfg;
	struct fl_lun_info info;
	struct fl_lun *lun;
	uint8_t cdb[16], buf[512];
	struct fl_cmd res;

	for (int ro = 0; ro < 2; ro++) {
		th_config(&cfg);
		cfg.thin = true;
		cfg.read_only = ro;
		lun = th_lun(&cfg);
		th_clear_ua(lun, 1);
		fl_lun_get_info(lun, &info);
		CU_ASSERT_EQUAL(info.read_only, ro);
		if (ro)
			th_run_cases(lun, 1, cases, sizeof(cases) / sizeof(cases[0]));
		/* MODE SENSE(6) and (10): WP in the device-specific parameter, DPOFUA always */
		memset(cdb, 0, sizeof(cdb));
		cdb[0] = 0x1a;
		cdb[2] = 0x3f;
		cdb[4] = 255;
		res = run(lun, cdb, 6, NULL, 0, buf, 255);
		TH_EXPECT_GOOD(&res, "MODE SENSE(6)");
		TH_CHECK(buf[2] == (ro ? 0x90 : 0x10), "MODE SENSE(6) ro=%d: %02x", ro, buf[2]);
		memset(cdb, 0, sizeof(cdb));
		cdb[0] = 0x5a;
		cdb[2] = 0x3f;
		cdb[8] = 255;
		res = run(lun, cdb, 10, NULL, 0, buf, 255);
		TH_EXPECT_GOOD(&res, "MODE SENSE(10)");
		TH_CHECK(buf[3] == (ro ? 0x90 : 0x10), "MODE SENSE(10) ro=%d: %02x", ro, buf[3]);
		/* a refused write changed nothing; a writable LUN takes it */
		memset(buf, 0x77, sizeof(buf));
		CU_ASSERT_EQUAL(th_write(lun, 1, 1, 1, buf),
				ro ? FL_STATUS_CHECK_CONDITION : FL_STATUS_GOOD);
		memset(buf, 0, sizeof(buf));
		CU_ASSERT_EQUAL(th_read(lun, 1, 1, 1, buf), FL_STATUS_GOOD);
		CU_ASSERT_EQUAL(buf[0], ro ? 0 : 0x77);
		fl_lun_get_info(lun, &info);
		CU_ASSERT_EQUAL(info.mapped_blocks, ro ? 0 : 1);
		fl_lun_destroy(lun);
	}
}

/* ORWRITE: the medium becomes medium | data, whole blocks that arrived only, FUA durable. */
static void test_orwrite_ors_into_medium(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t a[3 * 512], b[3 * 512], r[3 * 512], cdb[16];
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(a, sizeof(a), 31);
	th_pattern(b, sizeof(b), 32);
	CU_ASSERT_EQUAL(th_write(lun, 1, 90, 3, a), FL_STATUS_GOOD);
	th_cdb16(cdb, 0x8b, 0, 90, 3);
	res = run(lun, cdb, 16, b, 2 * 512 + 100, NULL, 0); /* 2 whole blocks and a piece */
	TH_EXPECT_GOOD(&res, "ORWRITE of 3 blocks with 2.2 blocks of data");
	CU_ASSERT_EQUAL(res.residual, 512 - 100);
	CU_ASSERT_EQUAL(th_read(lun, 1, 90, 3, r), FL_STATUS_GOOD);
	for (size_t i = 0; i < sizeof(r); i++)
		if (r[i] != (i < 1024 ? (uint8_t)(a[i] | b[i]) : a[i])) {
			TH_CHECK(false, "ORWRITE byte %zu: %02x", i, r[i]);
			break;
		}
	/* a never-written block ORed with data is the data; FUA makes it durable */
	CU_ASSERT_EQUAL(dirty_count(lun), 3);
	th_cdb16(cdb, 0x8b, 0x08, 400, 1);
	res = run(lun, cdb, 16, b, 512, NULL, 0);
	TH_EXPECT_GOOD(&res, "ORWRITE FUA");
	CU_ASSERT_EQUAL(dirty_count(lun), 3);
	CU_ASSERT_EQUAL(th_read(lun, 1, 400, 1, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, b, 512) == 0);
	/* ORing all-ones, then anything: stays all-ones */
	memset(a, 0xff, 512);
	th_cdb16(cdb, 0x8b, 0, 400, 1);
	res = run(lun, cdb, 16, a, 512, NULL, 0);
	res = run(lun, cdb, 16, b, 512, NULL, 0);
	CU_ASSERT_EQUAL(th_read(lun, 1, 400, 1, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, a, 512) == 0);
	fl_lun_destroy(lun);
}

/* Block limits VPD: MAXIMUM ATOMIC TRANSFER LENGTH set, no alignment / granularity / boundary. */
static void test_write_atomic16_vpd(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	uint8_t cdb[6] = {0x12, 0x01, 0xb0, 0, 64, 0}, buf[64];
	struct fl_cmd res;

	th_config(&cfg);
	cfg.max_xfer_blocks = 300;
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	res = run(lun, cdb, 6, NULL, 0, buf, sizeof(buf));
	TH_EXPECT_GOOD(&res, "INQUIRY VPD B0h");
	CU_ASSERT_EQUAL(res.data_in_len, 64);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 44), 300); /* MAXIMUM ATOMIC TRANSFER LENGTH */
	CU_ASSERT(fl_get_be32(buf + 44) <= fl_get_be32(buf + 8));
	for (int i = 48; i < 64; i++)
		TH_CHECK(buf[i] == 0, "VPD B0h byte %d is %02x", i, buf[i]);
	fl_lun_destroy(lun);
	th_config(&cfg); /* the default maximum transfer is larger than the 16-bit field */
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	res = run(lun, cdb, 6, NULL, 0, buf, sizeof(buf));
	CU_ASSERT_EQUAL(fl_get_be32(buf + 44), 0xffff);
	fl_lun_destroy(lun);
}

/*
 * WRITE ATOMIC(16) never shows a reader half of it: READs of the file store
 * run without the LUN lock, so the write must wait for those in progress.
 * ATOMIC_BLOCKS (1 MiB) is large enough that, without that wait, most runs
 * see torn reads.
 */
#define ATOMIC_BLOCKS 2048u

/* One reader thread of test_write_atomic16_not_torn. */
struct atomic_reader {
	struct fl_lun *lun;
	uint64_t nexus;
	volatile bool *stop;
	unsigned reads, torn;
};

/* Reads the range over and over and counts reads that mix two writes. */
static void *atomic_reader_thread(void *arg)
{
	struct atomic_reader *ar = arg;
	uint8_t *r = malloc(ATOMIC_BLOCKS * 512);
	uint8_t cdb[16];
	struct fl_cmd res;

	th_cdb16(cdb, 0x88, 0, 1000, ATOMIC_BLOCKS);
	while (r && !*ar->stop) {
		memset(&res, 0, sizeof(res));
		th_run(ar->lun, ar->nexus, cdb, 16, NULL, 0, r, ATOMIC_BLOCKS * 512, &res);
		if (res.status != FL_STATUS_GOOD)
			continue; /* the first command of a nexus reports the power-on UA */
		ar->reads++;
		for (size_t i = 1; i < ATOMIC_BLOCKS * 512; i++)
			if (r[i] != r[0]) {
				ar->torn++;
				break;
			}
	}
	free(r);
	return NULL;
}

/* Two readers against 2000 alternating atomic writes of ATOMIC_BLOCKS blocks. */
static void test_write_atomic16_not_torn(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun;
	struct atomic_reader ar[2];
	pthread_t th[2];
	volatile bool stop = false;
	uint8_t *w = malloc(ATOMIC_BLOCKS * 512), cdb[16];
	struct fl_cmd res;

	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	th_file_config(&cfg, th_tmpfile(), 0);
	lun = th_lun(&cfg);
	th_clear_ua(lun, 1);
	th_cdb16(cdb, 0x9c, 0, 1000, 0);
	cdb[12] = (uint8_t)(ATOMIC_BLOCKS >> 8); /* TRANSFER LENGTH, bytes 12-13 */
	cdb[13] = (uint8_t)ATOMIC_BLOCKS;
	for (int i = 0; i < 2; i++) {
		ar[i] = (struct atomic_reader){.lun = lun, .nexus = 10 + i, .stop = &stop};
		pthread_create(&th[i], NULL, atomic_reader_thread, &ar[i]);
	}
	for (int k = 0; k < 2000; k++) {
		memset(w, k & 1 ? 0xa5 : 0x5a, ATOMIC_BLOCKS * 512);
		res = run(lun, cdb, 16, w, ATOMIC_BLOCKS * 512, NULL, 0);
		if (res.status != FL_STATUS_GOOD) {
			TH_EXPECT_GOOD(&res, "WRITE ATOMIC(16) of 1 MiB");
			break;
		}
	}
	stop = true;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	TH_CHECK(ar[0].reads + ar[1].reads > 0, "no read completed");
	TH_CHECK(ar[0].torn + ar[1].torn == 0, "%u of %u reads saw half an atomic write",
		 ar[0].torn + ar[1].torn, ar[0].reads + ar[1].reads);
	CU_ASSERT_EQUAL(th_read(lun, 1, 1000, ATOMIC_BLOCKS, w), FL_STATUS_GOOD);
	CU_ASSERT(w[0] == 0xa5 && w[ATOMIC_BLOCKS * 512 - 1] == 0xa5);
	free(w);
	fl_lun_destroy(lun);
}

FL_TESTS(sbc_tests,
	 READ_CASES(CASE_INFO) WRITE_CASES(CASE_INFO)
	 FL_TEST(test_write_read_all_sizes),
	 FL_TEST(test_read10_short_buffer_residual),
	 FL_TEST(test_invalid_field_pointer),
	 FL_TEST(test_write_data_out_mismatch),
	 FL_TEST(test_write10_fua_is_durable),
	 FL_TEST(test_write10_wce_off_is_durable),
	 FL_TEST(test_verify_bytchk_compare),
	 FL_TEST(test_compare_and_write),
	 FL_TEST(test_read_capacity),
	 FL_TEST(test_prefetch_larger_than_cache),
	 FL_TEST(test_start_stop_unit),
	 FL_TEST(test_start_stop_eject_load),
	 FL_TEST(test_alua_states_refuse_media),
	 FL_TEST(test_max_transfer_length),
	 FL_TEST(test_read_defect_data),
	 FL_TEST(test_write_protected),
	 FL_TEST(test_orwrite_ors_into_medium),
	 FL_TEST(test_write_atomic16_vpd),
	 FL_TEST(test_write_atomic16_not_torn));

FL_SUITES(FL_SUITE("sbc", NULL, NULL, sbc_tests));
