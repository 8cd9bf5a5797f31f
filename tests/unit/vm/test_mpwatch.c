// SPDX-License-Identifier: MIT
/*
 * test_mpwatch.c - fl-vm-mpwatch's reading of what it samples
 * (vm/agent/mpwatch.c): a multipath map's status line as dm-mpath.c
 * multipath_status writes it, joined with multipathd's "show paths raw
 * format %d|%D|%t|%T|%p" into the path lines the lab's checker judges
 * ("DEV DM_STATE CHECKER_STATE PRIO GROUP"). The status lines are the ones
 * Linux 6.1 wrote in the lab's runs; the hostile ones (negative, huge and
 * truncated counts) must end with the paths they name, and no more.
 */
#define main mpwatch_main
#include "agent/mpwatch.c"
#undef main

#include "runner.h"

/* Two groups, A's current, as 6.1 wrote it after the first read through A. */
static const char two_groups[] =
    "mpatha: 0 131072 multipath 2 0 1 0 2 1 A 0 1 2 8:16 A 0 4096 1 E 0 1 2 8:0 A 0 0 1";
/* One group of both paths, A failed, B's group current. */
static const char one_group_failed[] =
    "mpatha: 0 131072 multipath 2 0 1 0 1 1 A 0 2 2 8:16 F 1 0 1 8:0 A 0 0 1";

/* Checks one parsed path: its device (unless devt is NULL), group and state letters. */
static void expect_path(const struct dm_path *p, const char *devt, char group, char state)
{
	if (devt)
		CU_ASSERT_STRING_EQUAL(p->devt, devt);
	CU_ASSERT_EQUAL(p->group, group);
	CU_ASSERT_EQUAL(p->state, state);
}

static void test_parse_two_groups(void)
{
	struct dm_path p[8];

	CU_ASSERT_EQUAL_FATAL(parse_dm(two_groups, p, 8), 2);
	expect_path(&p[0], "8:16", 'A', 'A');
	expect_path(&p[1], "8:0", 'E', 'A');
}

static void test_parse_failed_path_in_one_group(void)
{
	struct dm_path p[8];

	CU_ASSERT_EQUAL_FATAL(parse_dm(one_group_failed, p, 8), 2);
	expect_path(&p[0], NULL, 'A', 'F');
	expect_path(&p[1], NULL, 'A', 'A');
}

/* Two maps, one line each: the paths of both. */
static void test_parse_two_maps(void)
{
	char dm[512];
	struct dm_path p[8];

	snprintf(dm, sizeof(dm), "%s\nmpathb: 0 8 multipath 2 0 0 0 1 1 E 0 1 2 8:32 A 0 0 1\n",
		 two_groups);
	CU_ASSERT_EQUAL_FATAL(parse_dm(dm, p, 8), 3);
	CU_ASSERT_STRING_EQUAL(p[2].devt, "8:32");
	CU_ASSERT_EQUAL(p[2].group, 'E');
}

/* No more paths than out holds, whatever the map lists. */
static void test_parse_bounded_by_max(void)
{
	struct dm_path p[1];

	CU_ASSERT_EQUAL(parse_dm(two_groups, p, 1), 1);
	CU_ASSERT_STRING_EQUAL(p[0].devt, "8:16");
}

/* Counts that are negative, huge or past the line walk nothing backwards. */
static void test_parse_hostile_counts(void)
{
	struct dm_path p[8];
	static const char *const bad[] = {
	    "m: 0 8 multipath -5 0 1 0 2 1 A 0 1 2 8:16 A 0 0 1",
	    "m: 0 8 multipath 2 0 1 0 2147483647 1 A 0 1 2 8:16 A 0 0 1",
	    "m: 0 8 multipath 2 0 1 0 2 1 A -3 -1 -2 8:16 A 0 0 1",
	    "m: 0 8 multipath 2 0 1 0 2 1 A 0 99999999 99999999 8:16 A",
	    "m: 0 8 multipath 999 0 1",
	    "m: 0 8 multipath",
	    "",
	};

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		CU_ASSERT(parse_dm(bad[k], p, 8) <= 1);
}

/* multipathd's view joined by dev_t with the map's: dm state and group from the map. */
static void test_path_lines_join(void)
{
	char cur[1024];

	path_lines(two_groups, "sdb|8:16|active|ready|50\nsda|8:0|active|ghost|1\n", cur,
		   sizeof(cur));
	CU_ASSERT_STRING_EQUAL(cur, "sdb active ready 50 current\nsda active ghost 1 enabled\n");
	path_lines(one_group_failed, "sdb|8:16|active|faulty|50\nsda|8:0|active|ready|10\n", cur,
		   sizeof(cur));
	CU_ASSERT_STRING_EQUAL(cur, "sdb failed faulty 50 current\nsda active ready 10 current\n");
}

/* A path the map does not hold keeps multipathd's state and has no group. */
static void test_path_lines_path_not_in_map(void)
{
	char cur[256];

	path_lines(two_groups, " sdc | 8:32 | undef | i/o pending | 0 \n", cur, sizeof(cur));
	CU_ASSERT_STRING_EQUAL(cur, "sdc undef i/o_pending 0 none\n");
}

/* Lines with fewer than five fields are skipped; the text never overflows cur. */
static void test_path_lines_short_and_bounded(void)
{
	char cur[24];

	path_lines(two_groups, "garbage\nsdb|8:16\nsdb|8:16|active|ready|50\n", cur, sizeof(cur));
	CU_ASSERT_STRING_EQUAL(cur, "sdb active ready 50 cur");
	CU_ASSERT_EQUAL(strlen(cur), sizeof(cur) - 1);
}

FL_TESTS(tests,
	 {"parse_two_groups", test_parse_two_groups},
	 {"parse_failed_path_in_one_group", test_parse_failed_path_in_one_group},
	 {"parse_two_maps", test_parse_two_maps},
	 {"parse_bounded_by_max", test_parse_bounded_by_max},
	 {"parse_hostile_counts", test_parse_hostile_counts},
	 {"path_lines_join", test_path_lines_join},
	 {"path_lines_path_not_in_map", test_path_lines_path_not_in_map},
	 {"path_lines_short_and_bounded", test_path_lines_short_and_bounded});

FL_SUITES(FL_SUITE("vm_mpwatch", NULL, NULL, tests));
