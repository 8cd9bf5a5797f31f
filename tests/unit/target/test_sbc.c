/* SPDX-License-Identifier: MIT */
/* test_sbc.c - unit tests of the logical-unit core (sbc). */
#include "runner.h"
#include "tharness.h"

/* A LUN can be created and answers TEST UNIT READY after its power-on UA. */
static void test_sbc_lun_comes_up(void)
{
	struct fl_lun *lun = th_lun(NULL);
	uint8_t cdb[6] = {0};
	struct fl_cmd res;

	CU_ASSERT_EQUAL(th_run(lun, 1, cdb, 6, NULL, 0, NULL, 0, &res), 0);
	TH_EXPECT(&res, FL_STATUS_CHECK_CONDITION, FL_KEY_UNIT_ATTENTION, 0x29, 0x00, "first TUR");
	CU_ASSERT_EQUAL(th_run(lun, 1, cdb, 6, NULL, 0, NULL, 0, &res), 0);
	TH_EXPECT_GOOD(&res, "second TUR");
	fl_lun_destroy(lun);
}

static CU_TestInfo tests[] = {
	{"test_sbc_lun_comes_up", test_sbc_lun_comes_up},
	CU_TEST_INFO_NULL,
};

CU_SuiteInfo fl_suites[] = {
	{"sbc", NULL, NULL, NULL, NULL, tests},
	CU_SUITE_INFO_NULL,
};
