/* SPDX-License-Identifier: MIT */
/*
 * test_helpers.c - the header-only helpers of common/: fl_parse_size (one
 * grammar for every size a person writes: decimal only, binary and decimal
 * units, "blocks", overflow refused), big-endian fields, list membership.
 */
#include "fl_byteorder.h"
#include "fl_list.h"
#include "fl_size.h"
#include "runner.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

/* One row of the size table: text, block size, expected result and value. */
struct size_case {
	const char *text;
	uint32_t block_size;
	int rc;
	uint64_t bytes;
};

/* Sizes in bytes: units, decimal leading zeros, spaces, "blocks" with a block size. */
static void test_parse_size_good(void)
{
	static const struct size_case cases[] = {
	    {"0", 0, 0, 0},
	    {"4096", 0, 0, 4096},
	    {"4096B", 0, 0, 4096},
	    {"64MiB", 0, 0, 64ull << 20},
	    {"010MiB", 0, 0, 10ull << 20}, /* decimal, not octal 8 MiB */
	    {"0x10", 0, -EINVAL, 0},	   /* no hexadecimal */
	    {"08", 0, 0, 8},
	    {"1KiB", 0, 0, 1024},
	    {"3GiB", 0, 0, 3ull << 30},
	    {"2TiB", 0, 0, 2ull << 40},
	    {"1KB", 0, 0, 1000},
	    {"5MB", 0, 0, 5000000},
	    {"7GB", 0, 0, 7000000000ull},
	    {"2TB", 0, 0, 2000000000000ull},
	    {"64 MiB", 0, 0, 64ull << 20}, /* the schema's pattern allows spaces */
	    {"8blocks", 512, 0, 4096},
	    {"8 blocks", 4096, 0, 32768},
	    {"18446744073709551615", 0, 0, UINT64_MAX},
	    {"16777215TiB", 0, 0, 16777215ull << 40},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int rc = fl_parse_size(cases[i].text, cases[i].block_size, &v, NULL);
		char msg[160];

		snprintf(msg, sizeof(msg), "'%s': rc %d value %llu", cases[i].text, rc,
			 (unsigned long long)v);
		CU_ASSERT_EQUAL_FATAL(rc, cases[i].rc);
		CU_ASSERT_EQUAL(v,
				cases[i].rc == 0 ? cases[i].bytes : 12345); /* untouched on error */
		if (rc != cases[i].rc || (rc == 0 && v != cases[i].bytes))
			fprintf(stderr, "  %s\n", msg);
	}
}

/* Unknown, misspelt or lower-case units, signs and fractions are refused with -EINVAL. */
static void test_parse_size_bad_units(void)
{
	static const char *const bad[] = {
	    "",	      "MiB",	"64M",	   "1G",     "16K",    "64mib", "64MIB", "64 MiB ",
	    "64KiBB", "-1",	"+1",	   " 64",    "1.5GiB", "64 iB", "1e6",	 "64\tMiB",
	    "blocks", "8block", "8Blocks", "64MiB;", "0x40",   "1,024",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 7;
		int rc = fl_parse_size(bad[i], 512, &v, NULL);

		if (rc != -EINVAL)
			fprintf(stderr, "  '%s': rc %d, want -EINVAL\n", bad[i], rc);
		CU_ASSERT_EQUAL(rc, -EINVAL);
		CU_ASSERT_EQUAL(v, 7);
	}
	CU_ASSERT_EQUAL(fl_parse_size(NULL, 512, &(uint64_t){0}, NULL), -EINVAL);
}

/* More than 2^64 - 1 bytes, in the digits or after the unit, is -ERANGE. */
static void test_parse_size_overflow(void)
{
	static const struct size_case cases[] = {
	    {"18446744073709551616", 0, -ERANGE, 0},	   /* 2^64 */
	    {"99999999999999999999999999", 0, -ERANGE, 0}, /* far past */
	    {"16777216TiB", 0, -ERANGE, 0},		   /* 2^24 TiB = 2^64 */
	    {"18446744073709552KB", 0, -ERANGE, 0},
	    {"36028797018963968blocks", 512, -ERANGE, 0}, /* 2^55 * 2^9 */
	    {"18446744073709551616blocks", 0, -ERANGE, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 7;
		bool blk;
		int rc = fl_parse_size(cases[i].text, cases[i].block_size, &v,
				       cases[i].block_size ? NULL : &blk);

		if (rc != cases[i].rc)
			fprintf(stderr, "  '%s': rc %d, want %d\n", cases[i].text, rc, cases[i].rc);
		CU_ASSERT_EQUAL(rc, cases[i].rc);
		CU_ASSERT_EQUAL(v, 7);
	}
}

/* "blocks": bytes with a block size, a count with in_blocks, refused with neither. */
static void test_parse_size_blocks(void)
{
	uint64_t v = 0;
	bool blk = true;

	CU_ASSERT_EQUAL(fl_parse_size("8blocks", 0, &v, NULL), -EINVAL);
	CU_ASSERT_EQUAL(fl_parse_size("8blocks", 0, &v, &blk), 0);
	CU_ASSERT_TRUE(blk);
	CU_ASSERT_EQUAL(v, 8);
	CU_ASSERT_EQUAL(fl_parse_size("8blocks", 4096, &v, &blk), 0);
	CU_ASSERT_TRUE(blk);
	CU_ASSERT_EQUAL(v, 32768);
	CU_ASSERT_EQUAL(fl_parse_size("8KiB", 0, &v, &blk), 0);
	CU_ASSERT_FALSE(blk); /* cleared for every other unit */
	CU_ASSERT_EQUAL(v, 8192);
}

/* Big-endian fields round-trip at any alignment and lay out most significant byte first. */
static void test_byteorder(void)
{
	uint8_t b[11] = {0};

	fl_put_be16(b + 1, 0x1234);
	CU_ASSERT(b[1] == 0x12 && b[2] == 0x34);
	CU_ASSERT_EQUAL(fl_get_be16(b + 1), 0x1234);
	fl_put_be24(b + 1, 0xab123456);
	CU_ASSERT(b[1] == 0x12 && b[2] == 0x34 && b[3] == 0x56);
	CU_ASSERT_EQUAL(fl_get_be24(b + 1), 0x123456);
	fl_put_be32(b + 3, 0xdeadbeef);
	CU_ASSERT(b[3] == 0xde && b[4] == 0xad && b[5] == 0xbe && b[6] == 0xef);
	CU_ASSERT_EQUAL(fl_get_be32(b + 3), 0xdeadbeef);
	fl_put_be64(b + 3, 0x0102030405060708ull);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(b[3 + i], i + 1);
	CU_ASSERT_EQUAL(fl_get_be64(b + 3), 0x0102030405060708ull);
	fl_put_be64(b, UINT64_MAX);
	CU_ASSERT_EQUAL(fl_get_be64(b), UINT64_MAX);
	CU_ASSERT_EQUAL(fl_get_be32(b), UINT32_MAX);
}

/* Membership and index in a NULL-terminated list; NULL and the empty list hold nothing. */
static void test_list(void)
{
	static const char *const words[] = {"read", "write", "flush", NULL};
	static const char *const none[] = {NULL};

	CU_ASSERT_TRUE(fl_in_list(words, "read"));
	CU_ASSERT_TRUE(fl_in_list(words, "flush"));
	CU_ASSERT_FALSE(fl_in_list(words, "Read"));
	CU_ASSERT_FALSE(fl_in_list(words, "rea"));
	CU_ASSERT_FALSE(fl_in_list(words, ""));
	CU_ASSERT_FALSE(fl_in_list(words, NULL));
	CU_ASSERT_FALSE(fl_in_list(none, "read"));
	CU_ASSERT_EQUAL(fl_list_index(words, "write"), 1);
	CU_ASSERT_EQUAL(fl_list_index(words, "unmap"), -1);
}

FL_TESTS(size_tests,
	 FL_TEST(test_parse_size_good),
	 FL_TEST(test_parse_size_bad_units),
	 FL_TEST(test_parse_size_overflow),
	 FL_TEST(test_parse_size_blocks));

FL_TESTS(misc_tests,
	 FL_TEST(test_byteorder),
	 FL_TEST(test_list));

FL_SUITES(FL_SUITE("size", NULL, NULL, size_tests),
	  FL_SUITE("helpers", NULL, NULL, misc_tests));
