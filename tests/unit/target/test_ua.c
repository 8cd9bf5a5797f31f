/* SPDX-License-Identifier: MIT */
/*
 * test_ua.c - unit attention conditions as the SPC-4 commands see them:
 * several pending UAs on one nexus come out in the SAM-5 r21 5.14 order
 * (power on / reset first, 29/01 before 29/00; a reset supersedes what was
 * pending; the rest in the order they arose), each nexus has its own queue,
 * a new nexus first hears 29/00, INQUIRY and REPORT LUNS leave a pending UA
 * alone (SPC-4 r37 5.14), REQUEST SENSE returns it as parameter data and
 * consumes it (SPC-4 r37 6.29), and the UAs the SPC-4 commands raise
 * (2A/01 MODE PARAMETERS CHANGED, 2A/03, 2A/04, 2A/05) reach the right
 * nexuses.
 */
#include "runner.h"
#include "spc_cases.h"
#include "target_internal.h"

#include <string.h>

static const uint8_t tur[6] = {0};

/* The first n rows of a case table. */
#define SC_RUN_CASES_N(lun, nexus, cases, n)                                                       \
	sc_run_cases_at(lun, nexus, cases, n, __FILE__, __LINE__)

/* Runs TUR from a nexus and expects the UA asc/ascq (asc 0: GOOD). */
static void expect_tur_at(struct fl_lun *lun, uint64_t nexus, uint8_t asc, uint8_t ascq,
			  const char *what, unsigned line)
{
	struct fl_cmd res = sc_run1(lun, nexus, tur, 6, NULL, 0, NULL, 0);

	if (asc)
		th_expect_at(&res, CC, UA, asc, ascq, what, __FILE__, line);
	else
		th_expect_at(&res, GOOD, 0, 0, 0, what, __FILE__, line);
}
#define EXPECT_TUR(lun, n, asc, ascq, what) expect_tur_at(lun, n, asc, ascq, what, __LINE__)

/* REQUEST SENSE from a nexus: GOOD, and the sense data it returned. */
static struct th_sense request_sense(struct fl_lun *lun, uint64_t nexus, bool desc)
{
	uint8_t cdb[6] = {0x03, desc ? 1 : 0, 0, 0, 252, 0}, buf[252];
	struct fl_cmd res = sc_run1(lun, nexus, cdb, 6, NULL, 0, buf, sizeof(buf));
	struct th_sense s;

	TH_EXPECT_GOOD(&res, "REQUEST SENSE");
	th_parse_sense(buf, res.data_in_len, &s);
	CU_ASSERT_EQUAL(s.descriptor, desc);
	return s;
}

/* A new nexus hears 29/00 first, once, whatever command it sends. */
static void test_ua_new_nexus_power_on(void)
{
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"MODE SENSE(6) first", {0x1a, 0, 0x3f, 0, 255, 0}, 6, .in_cap = 255, .status = CC,
	     .key = UA, .asc = 0x29, .ascq = 0x00},
	    {"MODE SENSE(6) second", {0x1a, 0, 0x3f, 0, 255, 0}, 6, .in_cap = 255,
	     .status = GOOD},
	};
	/* clang-format on */
	struct fl_lun *lun = th_lun(NULL);

	SC_RUN_CASES(lun, 4, cases);
	EXPECT_TUR(lun, 5, 0x29, 0x00, "TUR from nexus 5");
	EXPECT_TUR(lun, 5, 0, 0, "then GOOD");
	fl_lun_destroy(lun);
}

/* Several pending UAs come out in precedence order, then in arrival order. */
static void test_ua_precedence_order(void)
{
	/* clang-format off */
	static const struct {
		uint8_t asc, ascq;
	} queued[] = {{0x2a, 0x09}, {0x3f, 0x0e}, {0x2a, 0x01}, {0x29, 0x00}, {0x29, 0x01}};
	struct fl_lun *lun = th_lun(NULL);

	th_clear_ua(lun, 1);
	/* two reset-class conditions: power on (29/01) before the reset (29/00) */
	fl_lun_queue_ua(lun, 1, 0x29, 0x01);
	fl_lun_queue_ua(lun, 1, 0x29, 0x00);
	EXPECT_TUR(lun, 1, 0x29, 0x01, "29/01 first");
	EXPECT_TUR(lun, 1, 0x29, 0x00, "then 29/00");
	EXPECT_TUR(lun, 1, 0, 0, "then nothing");
	/* other conditions in the order they arose, a duplicate only once */
	fl_lun_queue_ua(lun, 1, queued[0].asc, queued[0].ascq);
	fl_lun_queue_ua(lun, 1, queued[1].asc, queued[1].ascq);
	fl_lun_queue_ua(lun, 1, queued[2].asc, queued[2].ascq);
	fl_lun_queue_ua(lun, 1, queued[0].asc, queued[0].ascq);
	EXPECT_TUR(lun, 1, 0x2a, 0x09, "capacity changed");
	EXPECT_TUR(lun, 1, 0x3f, 0x0e, "reported LUNs changed");
	EXPECT_TUR(lun, 1, 0x2a, 0x01, "mode parameters changed");
	EXPECT_TUR(lun, 1, 0, 0, "each once");
	/* a reset arriving later still comes first, and supersedes the others */
	fl_lun_queue_ua(lun, 1, 0x2a, 0x09);
	fl_lun_queue_ua(lun, 1, 0x29, 0x00);
	EXPECT_TUR(lun, 1, 0x29, 0x00, "reset first");
	EXPECT_TUR(lun, 1, 0, 0, "capacity change superseded by the reset");
	/* and a condition arising after the reset is reported after it */
	fl_lun_queue_ua(lun, 1, 0x29, 0x00);
	fl_lun_queue_ua(lun, 1, 0x2a, 0x09);
	EXPECT_TUR(lun, 1, 0x29, 0x00, "reset");
	EXPECT_TUR(lun, 1, 0x2a, 0x09, "then the later capacity change");
	EXPECT_TUR(lun, 1, 0, 0, "then nothing");
	fl_lun_destroy(lun);
}

/* Each nexus has its own queue: consuming on one leaves the other's. */
static void test_ua_independent_per_nexus(void)
{
	struct fl_lun *lun = th_lun(NULL);

	th_clear_ua(lun, 1);
	th_clear_ua(lun, 2);
	fl_lun_queue_ua(lun, 1, 0x2a, 0x09);
	fl_lun_queue_ua(lun, FL_ALL_NEXUS, 0x3f, 0x0e);
	EXPECT_TUR(lun, 2, 0x3f, 0x0e, "nexus 2 has only 3F/0E");
	EXPECT_TUR(lun, 2, 0, 0, "nexus 2 done");
	EXPECT_TUR(lun, 1, 0x2a, 0x09, "nexus 1 still has 2A/09");
	EXPECT_TUR(lun, 1, 0x3f, 0x0e, "and 3F/0E");
	EXPECT_TUR(lun, 1, 0, 0, "nexus 1 done");
	/* a nexus that goes away and comes back starts again with 29/00 */
	fl_lun_queue_ua(lun, 2, 0x2a, 0x09);
	fl_lun_nexus_gone(lun, 2);
	EXPECT_TUR(lun, 2, 0x29, 0x00, "nexus 2 is new again");
	EXPECT_TUR(lun, 2, 0, 0, "its old UA went with it");
	fl_lun_destroy(lun);
}

/* INQUIRY and REPORT LUNS run with a UA pending and leave it pending. */
static void test_ua_inquiry_report_luns_keep_it(void)
{
	static const struct sc_case cases[] = {
	    {"INQUIRY with a UA pending", {0x12, 0, 0, 0, 96, 0}, 6, .in_cap = 96,
	     .status = GOOD},
	    {"INQUIRY VPD 83h with a UA pending", {0x12, 1, 0x83, 0, 255, 0}, 6, .in_cap = 255,
	     .status = GOOD},
	    {"REPORT LUNS with a UA pending", {0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0}, 12,
	     .in_cap = 64, .status = GOOD},
	    {"READ CAPACITY(10) reports it", {0x25}, 10, .in_cap = 8, .status = CC, .key = UA,
	     .asc = 0x2a, .ascq = 0x09},
	};
	/* clang-format on */
	struct fl_lun *lun = th_lun(NULL);

	th_clear_ua(lun, 1);
	fl_lun_queue_ua(lun, 1, 0x2a, 0x09);
	SC_RUN_CASES(lun, 1, cases);
	EXPECT_TUR(lun, 1, 0, 0, "consumed by READ CAPACITY");
	/* REPORT LUNS clears 3F/0E (SPC-4 r37 6.33) but nothing else */
	fl_lun_queue_ua(lun, 1, 0x3f, 0x0e);
	fl_lun_queue_ua(lun, 1, 0x2a, 0x01);
	SC_RUN_CASES_N(lun, 1, cases, 3);
	EXPECT_TUR(lun, 1, 0x2a, 0x01, "2A/01 survived REPORT LUNS");
	EXPECT_TUR(lun, 1, 0, 0, "3F/0E did not");
	fl_lun_destroy(lun);
}

/* REQUEST SENSE returns the pending UA as data, consumes it, in both formats. */
static void test_ua_request_sense_consumes(void)
{
	struct fl_lun *lun = th_lun(NULL);
	struct th_sense s;

	s = request_sense(lun, 1, false);
	CU_ASSERT(s.valid && s.key == UA && s.asc == 0x29 && s.ascq == 0x00);
	s = request_sense(lun, 1, false);
	CU_ASSERT(s.valid && s.key == FL_KEY_NO_SENSE && s.asc == 0);
	fl_lun_queue_ua(lun, 1, 0x2a, 0x09);
	fl_lun_queue_ua(lun, 1, 0x3f, 0x0e);
	s = request_sense(lun, 1, true);
	CU_ASSERT(s.valid && s.key == UA && s.asc == 0x2a && s.ascq == 0x09);
	EXPECT_TUR(lun, 1, 0x3f, 0x0e, "the second UA is still pending");
	EXPECT_TUR(lun, 1, 0, 0, "then nothing");
	/* a UA of another nexus is not reported here */
	fl_lun_queue_ua(lun, 2, 0x2a, 0x09);
	s = request_sense(lun, 1, false);
	CU_ASSERT(s.key == FL_KEY_NO_SENSE);
	fl_lun_destroy(lun);
}

/* The UAs SPC-4 commands raise reach the other nexuses only. */
static void test_ua_raised_by_spc_commands(void)
{
	uint8_t msel[6] = {0x15, 0x10, 0, 0, 24, 0};
	uint8_t list[24] = {0, 0, 0, 0, 0x08, 0x12, 0x00};
	uint8_t pro_cdb[10] = {0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0}, plist[24];
	struct fl_lun *lun = th_lun(NULL);
	struct fl_cmd res;

	for (uint64_t n = 1; n <= 3; n++)
		th_clear_ua(lun, n);
	res = sc_run1(lun, 1, msel, 6, list, 24, NULL, 0);
	TH_EXPECT_GOOD(&res, "MODE SELECT WCE=0");
	EXPECT_TUR(lun, 1, 0, 0, "not for the changing nexus");
	EXPECT_TUR(lun, 2, 0x2a, 0x01, "nexus 2");
	EXPECT_TUR(lun, 3, 0x2a, 0x01, "nexus 3");
	/* nexuses 1 and 2 register, 1 clears: only registrant 2 hears 2A/03 */
	for (uint64_t n = 1; n <= 2; n++) {
		memset(plist, 0, sizeof(plist));
		plist[15] = (uint8_t)n;
		res = sc_run1(lun, n, pro_cdb, 10, plist, 24, NULL, 0);
		TH_EXPECT_GOOD(&res, "REGISTER");
	}
	pro_cdb[1] = 0x03; /* CLEAR */
	memset(plist, 0, sizeof(plist));
	plist[7] = 1;
	res = sc_run1(lun, 1, pro_cdb, 10, plist, 24, NULL, 0);
	TH_EXPECT_GOOD(&res, "CLEAR");
	EXPECT_TUR(lun, 2, 0x2a, 0x03, "registrant 2 hears RESERVATIONS PREEMPTED");
	EXPECT_TUR(lun, 3, 0, 0, "non-registrant 3 hears nothing");
	EXPECT_TUR(lun, 1, 0, 0, "the clearing nexus hears nothing");
	fl_lun_destroy(lun);
}

FL_TESTS(ua_tests,
	 FL_TEST(test_ua_new_nexus_power_on),
	 FL_TEST(test_ua_precedence_order),
	 FL_TEST(test_ua_independent_per_nexus),
	 FL_TEST(test_ua_inquiry_report_luns_keep_it),
	 FL_TEST(test_ua_request_sense_consumes),
	 FL_TEST(test_ua_raised_by_spc_commands));

FL_SUITES(FL_SUITE("ua", NULL, NULL, ua_tests));
