/* SPDX-License-Identifier: MIT */
/*
 * test_stamp.c - self-describing blocks (scenario/fl_stamp.h): a block read
 * back is judged against the last acknowledged write of it, and each way it
 * can be wrong is named: stale, lost, torn, misplaced. A write that failed
 * may or may not have landed; the book stays bounded.
 */
#include "runner.h"
#include "fl_stamp.h"

#include <stdlib.h>
#include <string.h>

#define BS 512u

/* A write of blocks blocks at lba: the data it sent (malloc'd); *gen its generation. */
static uint8_t *write_blocks(struct fl_stamp_book *b, int lun, uint64_t lba, uint64_t blocks,
			     bool acked, uint64_t *gen)
{
	uint8_t *buf = malloc(blocks * BS);

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	*gen = fl_stamp_fill(b, buf, BS, lun, lba, blocks);
	fl_stamp_written(b, lun, lba, blocks, *gen, acked);
	return buf;
}

static void test_each_wrong_named(void)
{
	struct fl_stamp_book b = {0};
	uint64_t g1, g2, g3;
	uint8_t *w1 = write_blocks(&b, 0, 8, 4, true, &g1),
		*w2 = write_blocks(&b, 0, 8, 4, true, &g2);
	uint8_t buf[4 * BS];
	char why[256];

	CU_ASSERT_TRUE(g2 > g1);
	/* what the last acknowledged write left: intact */
	CU_ASSERT_EQUAL(fl_stamp_check(&b, w2, BS, 0, 8, 4, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(why, "");
	/* the older write's data: stale, every block */
	CU_ASSERT_EQUAL(fl_stamp_check(&b, w1, BS, 0, 8, 4, why, sizeof(why)), 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "LBA 8: stale: it holds write 1, an older one than "
					   "write 2, acknowledged (4 blocks wrong)"));
	/* zeros where a write was acknowledged: lost */
	memcpy(buf, w2, sizeof(buf));
	memset(buf + BS, 0, BS);
	CU_ASSERT_EQUAL(fl_stamp_check(&b, buf, BS, 0, 8, 4, why, sizeof(why)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "LBA 9: lost"));
	/* half of a block from another write: torn */
	memcpy(buf, w2, sizeof(buf));
	memcpy(buf + 2 * BS + BS / 2, w1 + 2 * BS + BS / 2, BS / 2);
	CU_ASSERT_EQUAL(fl_stamp_check(&b, buf, BS, 0, 8, 4, why, sizeof(why)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "LBA 10: torn"));
	/* another block's data: misplaced (LBA 11 read where LBA 8 is) */
	memcpy(buf, w2 + 3 * BS, BS);
	CU_ASSERT_EQUAL(fl_stamp_check(&b, buf, BS, 0, 8, 1, why, sizeof(why)), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "LBA 8: misplaced: it holds LUN 0 LBA 11's data"));
	/* ... or another LUN's */
	CU_ASSERT_EQUAL(fl_stamp_check(&b, w2, BS, 1, 8, 1, why, sizeof(why)),
			0); /* unknown there */
	/* a block never written with a stamp is not judged */
	memset(buf, 0x5a, BS);
	CU_ASSERT_EQUAL(fl_stamp_check(&b, buf, BS, 0, 100, 1, why, sizeof(why)), 0);
	/* a failed write after the acknowledged one may have landed, or not */
	uint8_t *w3 = write_blocks(&b, 0, 8, 4, false, &g3);
	CU_ASSERT_EQUAL(fl_stamp_check(&b, w3, BS, 0, 8, 4, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(fl_stamp_check(&b, w2, BS, 0, 8, 4, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(fl_stamp_check(&b, w1, BS, 0, 8, 4, why, sizeof(why)), 4);
	free(w1);
	free(w2);
	free(w3);
	fl_stamp_book_free(&b);
}

/* Only failed writes of a block: what was there before may still be (no stamp is not lost). */
static void test_failed_only(void)
{
	struct fl_stamp_book b = {0};
	uint64_t g;
	uint8_t *w = write_blocks(&b, 2, 0, 1, false, &g), old[BS];
	char why[256];

	memset(old, 0, sizeof(old));
	CU_ASSERT_EQUAL(fl_stamp_check(&b, old, BS, 2, 0, 1, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(fl_stamp_check(&b, w, BS, 2, 0, 1, why, sizeof(why)), 0);
	free(w);
	fl_stamp_book_free(&b);
}

/* The book keeps at most FL_STAMP_MAX_BLOCKS blocks; later ones are counted, not judged. */
static void test_bounded(void)
{
	struct fl_stamp_book b = {0};
	const uint64_t n = FL_STAMP_MAX_BLOCKS + 10;

	for (uint64_t lba = 0; lba < n; lba += 1024)
		fl_stamp_written(&b, 0, lba, lba + 1024 <= n ? 1024 : n - lba, 1, true);
	CU_ASSERT_EQUAL(b.n, FL_STAMP_MAX_BLOCKS);
	CU_ASSERT_EQUAL(b.untracked, 10);
	CU_ASSERT_TRUE(b.cap <= 2 * FL_STAMP_MAX_BLOCKS);
	fl_stamp_book_free(&b);
}

FL_TESTS(tests, FL_TEST(test_each_wrong_named), FL_TEST(test_failed_only), FL_TEST(test_bounded));

FL_SUITES(FL_SUITE("stamp", NULL, NULL, tests));
