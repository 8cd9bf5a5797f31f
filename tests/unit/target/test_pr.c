/* SPDX-License-Identifier: MIT */
/*
 * test_pr.c - reservations of pr.c between several I_T nexuses: SPC-2
 * RESERVE / RELEASE (6, 10), PERSISTENT RESERVE IN (READ KEYS, READ
 * RESERVATION, REPORT CAPABILITIES) and OUT (REGISTER, REGISTER AND IGNORE
 * EXISTING KEY, RESERVE, RELEASE, CLEAR, PREEMPT) for the six reservation
 * types, the SPC-4 r37 5.12 command conflict table, the unit attentions PR
 * changes raise (2A/03, 2A/04, 2A/05) and every error path.
 */
#include "runner.h"
#include "spc_cases.h"
#include "target_internal.h"

#include <string.h>

#define WE 0x1
#define EA 0x3
#define WE_RO 0x5
#define EA_RO 0x6
#define WE_AR 0x7
#define EA_AR 0x8

#define REGISTER 0x00
#define RESERVE 0x01
#define RELEASE 0x02
#define CLEAR 0x03
#define PREEMPT 0x04
#define REG_IGNORE 0x06

/* Completion of a directly submitted command (memory store: inline). */
static void direct_done(struct fl_cmd *cmd)
{
	(void)cmd;
}

/* PERSISTENT RESERVE OUT from a nexus; flags is byte 20 of the parameter list. */
static struct fl_cmd pro(struct fl_lun *lun, uint64_t nexus, uint8_t sa, uint8_t type, uint64_t key,
			 uint64_t sark, uint8_t flags)
{
	uint8_t cdb[10] = {0x5f, sa, type, 0, 0, 0, 0, 0, 24, 0}, p[24];

	memset(p, 0, sizeof(p));
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(key >> (56 - 8 * i));
		p[8 + i] = (uint8_t)(sark >> (56 - 8 * i));
	}
	p[20] = flags;
	return sc_run1(lun, nexus, cdb, 10, p, 24, NULL, 0);
}

/* PERSISTENT RESERVE IN into buf (256 bytes). */
static struct fl_cmd pri(struct fl_lun *lun, uint64_t nexus, uint8_t sa, uint8_t *buf)
{
	uint8_t cdb[10] = {0x5e, sa, 0, 0, 0, 0, 0, 1, 0, 0};

	memset(buf, 0, 256);
	return sc_run1(lun, nexus, cdb, 10, NULL, 0, buf, 256);
}

/* Expects GOOD for a PR OUT. */
#define PRO_OK(lun, n, sa, type, key, sark)                                                        \
	do {                                                                                       \
		struct fl_cmd r_ = pro(lun, n, sa, type, key, sark, 0);                            \
		TH_EXPECT_GOOD(&r_, #sa " from nexus " #n);                                        \
	} while (0)

/* Runs TUR from a nexus and expects asc/ascq as a UA (0: GOOD). */
static void expect_ua(struct fl_lun *lun, uint64_t nexus, uint8_t asc, uint8_t ascq,
		      const char *what)
{
	struct fl_cmd res = sc_run1(lun, nexus, (uint8_t[6]){0}, 6, NULL, 0, NULL, 0);

	if (asc)
		TH_EXPECT(&res, CC, UA, asc, ascq, what);
	else
		TH_EXPECT_GOOD(&res, what);
}

/* A LUN on which nexuses 1, 2 and 3 have no UA pending. */
static struct fl_lun *three_nexus_lun(void)
{
	struct fl_lun *lun = th_lun(NULL);

	for (uint64_t n = 1; n <= 3; n++)
		th_clear_ua(lun, n);
	return lun;
}

/* REGISTER and READ KEYS: keys in registration order, generation counts. */
static void test_pr_register_read_keys(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	res = pri(lun, 1, 0, buf);
	TH_EXPECT_GOOD(&res, "READ KEYS empty");
	CU_ASSERT_EQUAL(fl_get_be32(buf), 0);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 0);
	CU_ASSERT_EQUAL(res.data_in_len, 8);
	PRO_OK(lun, 1, REGISTER, 0, 0, 0xaa);
	PRO_OK(lun, 2, REGISTER, 0, 0, 0xbb);
	res = pri(lun, 3, 0, buf);
	TH_EXPECT_GOOD(&res, "READ KEYS");
	CU_ASSERT_EQUAL(fl_get_be32(buf), 2);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 16);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0xaa);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 16), 0xbb);
	/* change a key, then unregister with SARK 0 */
	PRO_OK(lun, 1, REGISTER, 0, 0xaa, 0xa1);
	PRO_OK(lun, 2, REGISTER, 0, 0xbb, 0);
	res = pri(lun, 3, 0, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf), 4);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 8);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0xa1);
	/* REGISTER AND IGNORE EXISTING KEY replaces whatever key is there */
	PRO_OK(lun, 1, REG_IGNORE, 0, 0x1234, 0xa2);
	PRO_OK(lun, 3, REG_IGNORE, 0, 0x5678, 0xcc);
	res = pri(lun, 3, 0, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf), 6);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0xa2);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 16), 0xcc);
	/* allocation length 12: truncated, header still tells the full length */
	{
		uint8_t cdb[10] = {0x5e, 0, 0, 0, 0, 0, 0, 0, 12, 0};

		res = sc_run1(lun, 1, cdb, 10, NULL, 0, buf, 256);
		TH_EXPECT_GOOD(&res, "READ KEYS 12 bytes");
		CU_ASSERT_EQUAL(res.data_in_len, 12);
		CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 16);
	}
	fl_lun_destroy(lun);
}

/* REGISTER errors: keys that do not match conflict; parameter list errors. */
static void test_pr_register_errors(void)
{
#define PLIST(key, sark, b20)                                                                      \
	{                                                                                          \
		0, 0, 0, 0, 0, 0, 0, key, 0, 0, 0, 0, 0, 0, 0, sark, 0, 0, 0, 0, b20, 0, 0, 0      \
	}
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"test_pr_register_unregistered_with_key", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(5, 6, 0), 24, .status = RC},
	    {"test_pr_register_sark0_unregistered_noop", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(0, 0, 0), 24, .status = GOOD},
	    {"test_pr_register_spec_i_pt", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(0, 6, 0x08), 24, .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(20, 3)},
	    {"test_pr_register_all_tg_pt", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(0, 6, 0x04), 24, .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(20, 2)},
	    {"test_pr_register_aptpl", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(0, 6, 0x01), 24, .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(20, 0)},
	    {"test_pr_out_plen_23", {0x5f, 0, 0, 0, 0, 0, 0, 0, 23, 0}, 10, PLIST(0, 6, 0), 23,
	     .status = CC, .key = IR, .asc = 0x1a},
	    {"test_pr_out_plen_32", {0x5f, 0, 0, 0, 0, 0, 0, 0, 32, 0}, 10, PLIST(0, 6, 0), 32,
	     .status = CC, .key = IR, .asc = 0x1a},
	    {"test_pr_out_data_short", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10, PLIST(0, 6, 0), 8,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(5, -1)},
	    {"test_pr_out_unknown_sa", {0x5f, 0x07, 0, 0, 0, 0, 0, 0, 24, 0}, 10, PLIST(0, 6, 0),
	     24, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 4)},
	    {"test_pr_register", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10, PLIST(0, 6, 0), 24,
	     .status = GOOD},
	    {"test_pr_register_wrong_key", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10, PLIST(7, 8, 0),
	     24, .status = RC},
	    {"test_pr_register_zero_key_when_registered", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(0, 8, 0), 24, .status = RC},
	    {"test_pr_register_again_right_key", {0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(6, 9, 0), 24, .status = GOOD},
	    {"test_pr_reserve_wrong_key", {0x5f, RESERVE, WE, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(6, 0, 0), 24, .status = RC},
	    {"test_pr_reserve_bad_type", {0x5f, RESERVE, 0x2, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 3)},
	    {"test_pr_reserve_type_0", {0x5f, RESERVE, 0x0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 3)},
	    {"test_pr_reserve_bad_scope", {0x5f, RESERVE, 0x11, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 7)},
	    {"test_pr_reserve", {0x5f, RESERVE, WE, 0, 0, 0, 0, 0, 24, 0}, 10, PLIST(9, 0, 0), 24,
	     .status = GOOD},
	    {"test_pr_reserve_again_same_type", {0x5f, RESERVE, WE, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = GOOD},
	    {"test_pr_reserve_again_other_type", {0x5f, RESERVE, EA, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = RC},
	    {"test_pr_release_wrong_type", {0x5f, RELEASE, EA, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = CC, .key = IR, .asc = 0x26, .ascq = 0x04},
	    {"test_pr_release_wrong_scope", {0x5f, RELEASE, 0x10 | WE, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = CC, .key = IR, .asc = 0x26, .ascq = 0x04},
	    {"test_pr_release_wrong_key", {0x5f, RELEASE, WE, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(8, 0, 0), 24, .status = RC},
	    {"test_pr_preempt_sark0", {0x5f, PREEMPT, WE, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = CC, .key = IR, .asc = 0x26, SKS_PARAM(8, -1)},
	    {"test_pr_preempt_no_such_key", {0x5f, PREEMPT, WE, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0x77, 0), 24, .status = RC},
	    {"test_pr_preempt_bad_type", {0x5f, PREEMPT, 0x4, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 9, 0), 24, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(2, 3)},
	    {"test_pr_clear_wrong_key", {0x5f, CLEAR, 0, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(8, 0, 0), 24, .status = RC},
	    {"test_pr_release", {0x5f, RELEASE, WE, 0, 0, 0, 0, 0, 24, 0}, 10, PLIST(9, 0, 0), 24,
	     .status = GOOD},
	    {"test_pr_release_when_none", {0x5f, RELEASE, WE, 0, 0, 0, 0, 0, 24, 0}, 10,
	     PLIST(9, 0, 0), 24, .status = GOOD},
	    {"test_pr_in_reserved_bits", {0x5e, 0x20, 0, 0, 0, 0, 0, 1, 0, 0}, 10, .in_cap = 256,
	     .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 5)},
	    {"test_pr_in_sa_4_unsupported", {0x5e, 0x04, 0, 0, 0, 0, 0, 1, 0, 0}, 10,
	     .in_cap = 256, .status = CC, .key = IR, .asc = 0x24, SKS_CDB(1, 4)},
	};
	/* clang-format on */
#undef PLIST
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	SC_RUN_CASES(lun, 1, cases);
	/* a nexus that is not registered cannot reserve, release, clear or preempt */
	for (uint8_t sa = RESERVE; sa <= PREEMPT; sa++) {
		res = pro(lun, 2, sa, WE, 0, 9, 0);
		TH_EXPECT(&res, RC, 0, 0, 0, "unregistered nexus");
	}
	res = pri(lun, 1, 0, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 8);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 9);
	fl_lun_destroy(lun);
}

/* Registrations are limited; the one past the limit is refused. */
static void test_pr_register_limit(void)
{
	struct fl_lun *lun = th_lun(NULL);
	struct fl_cmd res;

	for (uint64_t n = 1; n <= PR_MAX_REGISTRANTS; n++) {
		th_clear_ua(lun, n);
		res = pro(lun, n, REGISTER, 0, 0, n, 0);
		TH_EXPECT_GOOD(&res, "REGISTER within the limit");
	}
	th_clear_ua(lun, 1000);
	res = pro(lun, 1000, REGISTER, 0, 0, 1000, 0);
	TH_EXPECT(&res, CC, IR, 0x55, 0x04, "REGISTER past the limit");
	fl_lun_destroy(lun);
}

/* Command classes of the conflict table. */
enum cls { CLS_READ, CLS_WRITE, CLS_ALLOWED };

/* The commands tried from every nexus, with their class. */
/* clang-format off */
static const struct {
	const char *name;
	uint8_t cdb[12];
	uint8_t len;
	uint32_t out_len;
	enum cls cls;
} probes[] = {
    {"READ(10)", {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10, 0, CLS_READ},
    {"VERIFY(10)", {0x2f, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10, 0, CLS_READ},
    {"MODE SENSE(6)", {0x1a, 0, 0x3f, 0, 255, 0}, 6, 0, CLS_READ},
    {"WRITE(10)", {0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10, 512, CLS_WRITE},
    {"SYNCHRONIZE CACHE(10)", {0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10, 0, CLS_WRITE},
    {"MODE SELECT(6)", {0x15, 0x10, 0, 0, 4, 0}, 6, 4, CLS_WRITE},
    {"PREVENT ALLOW(1)", {0x1e, 0, 0, 0, 1, 0}, 6, 0, CLS_WRITE},
    {"START STOP UNIT(stop)", {0x1b, 0, 0, 0, 0, 0}, 6, 0, CLS_WRITE},
    {"TEST UNIT READY", {0x00}, 6, 0, CLS_ALLOWED},
    {"INQUIRY", {0x12, 0, 0, 0, 36, 0}, 6, 0, CLS_ALLOWED},
    {"READ CAPACITY(10)", {0x25}, 10, 0, CLS_ALLOWED},
    {"READ CAPACITY(16)", {0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32}, 16, 0, CLS_ALLOWED},
    {"REPORT LUNS", {0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0}, 12, 0, CLS_ALLOWED},
    {"PREVENT ALLOW(0)", {0x1e, 0, 0, 0, 0, 0}, 6, 0, CLS_ALLOWED},
    {"START STOP UNIT(start)", {0x1b, 0, 0, 0, 1, 0}, 6, 0, CLS_ALLOWED},
    {"REQUEST SENSE", {0x03, 0, 0, 0, 18, 0}, 6, 0, CLS_ALLOWED},
    {"RTPG", {0xa3, 0x0a, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, 12, 0, CLS_ALLOWED},
    {"PR IN READ KEYS", {0x5e, 0, 0, 0, 0, 0, 0, 1, 0, 0}, 10, 0, CLS_ALLOWED},
};
/* clang-format on */

/*
 * SPC-4 r37 5.12.1 Table 60 / SBC-3 r36 4.17, by type: what a read and a
 * write get from the holder, a registered non-holder and a non-registrant.
 * Commands of the ALLOWED class are GOOD for everyone under every type.
 */
/* clang-format off */
static const struct {
	uint8_t type;
	uint8_t holder_r, holder_w, reg_r, reg_w, other_r, other_w;
} conflict_table[] = {
    {WE, GOOD, GOOD, GOOD, RC, GOOD, RC},     {EA, GOOD, GOOD, RC, RC, RC, RC},
    {WE_RO, GOOD, GOOD, GOOD, GOOD, GOOD, RC}, {EA_RO, GOOD, GOOD, GOOD, GOOD, RC, RC},
    {WE_AR, GOOD, GOOD, GOOD, GOOD, GOOD, RC}, {EA_AR, GOOD, GOOD, GOOD, GOOD, RC, RC},
};
/* clang-format on */

/* Every type: holder (1), registrant (2), other (3) against every probe. */
static void test_pr_conflict_table(void)
{
	uint8_t out[512], in[512];

	memset(out, 0, sizeof(out));
	for (size_t t = 0; t < sizeof(conflict_table) / sizeof(conflict_table[0]); t++) {
		struct fl_lun *lun = three_nexus_lun();
		struct fl_cmd res;

		PRO_OK(lun, 1, REGISTER, 0, 0, 0x11);
		PRO_OK(lun, 2, REGISTER, 0, 0, 0x22);
		res = pro(lun, 1, RESERVE, conflict_table[t].type, 0x11, 0, 0);
		TH_EXPECT_GOOD(&res, "RESERVE");
		for (uint64_t who = 1; who <= 3; who++) {
			for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
				uint8_t want;

				if (probes[i].cls == CLS_ALLOWED)
					want = GOOD;
				else if (who == 1)
					want = probes[i].cls == CLS_READ
						   ? conflict_table[t].holder_r
						   : conflict_table[t].holder_w;
				else if (who == 2)
					want = probes[i].cls == CLS_READ ? conflict_table[t].reg_r
									 : conflict_table[t].reg_w;
				else
					want = probes[i].cls == CLS_READ
						   ? conflict_table[t].other_r
						   : conflict_table[t].other_w;
				res = sc_run1(lun, who, probes[i].cdb, probes[i].len,
					      probes[i].out_len ? out : NULL, probes[i].out_len, in,
					      sizeof(in));
				TH_CHECK(res.status == want,
					 "type %xh, nexus %llu, %s: status %02xh, want %02xh",
					 conflict_table[t].type, (unsigned long long)who,
					 probes[i].name, res.status, want);
				if (res.status == RC)
					CU_ASSERT_EQUAL(res.sense_len, 0);
				/* a stop that got through: start again for the next probe */
				if (probes[i].cdb[0] == 0x1b && res.status == GOOD)
					sc_run1(lun, 1, probes[14].cdb, 6, NULL, 0, NULL, 0);
			}
		}
		fl_lun_destroy(lun);
	}
}

/* READ RESERVATION: none, then holder key and type; key 0 for all registrants. */
static void test_pr_read_reservation(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	res = pri(lun, 2, 1, buf);
	TH_EXPECT_GOOD(&res, "READ RESERVATION none");
	CU_ASSERT_EQUAL(res.data_in_len, 8);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 0);
	PRO_OK(lun, 1, REGISTER, 0, 0, 0x1111);
	PRO_OK(lun, 1, RESERVE, EA_RO, 0x1111, 0);
	res = pri(lun, 2, 1, buf);
	TH_EXPECT_GOOD(&res, "READ RESERVATION");
	CU_ASSERT_EQUAL(res.data_in_len, 24);
	CU_ASSERT_EQUAL(fl_get_be32(buf), 1);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 16);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0x1111);
	CU_ASSERT_EQUAL(buf[21], EA_RO);
	/* the holder's key change shows in READ RESERVATION */
	PRO_OK(lun, 1, REGISTER, 0, 0x1111, 0x1212);
	res = pri(lun, 2, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0x1212);
	PRO_OK(lun, 1, RELEASE, EA_RO, 0x1212, 0);
	PRO_OK(lun, 1, RESERVE, WE_AR, 0x1212, 0);
	res = pri(lun, 2, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0);
	CU_ASSERT_EQUAL(buf[21], WE_AR);
	fl_lun_destroy(lun);
}

/* Sends PR OUT REGISTER from a nexus with its own initiator port name. */
static void register_named(struct fl_lun *lun, uint64_t nexus, const char *name, uint16_t port,
			   uint64_t sark)
{
	uint8_t cdb[10] = {0x5f, REGISTER, 0, 0, 0, 0, 0, 0, 24, 0}, p[24];
	struct fl_cmd cmd;

	memset(p, 0, sizeof(p));
	for (int i = 0; i < 8; i++)
		p[8 + i] = (uint8_t)(sark >> (56 - 8 * i));
	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.cdb, cdb, 10);
	cmd.cdb_len = 10;
	cmd.nexus.id = nexus;
	cmd.nexus.initiator = name;
	cmd.nexus.rel_port_id = port;
	cmd.data_out = p;
	cmd.data_out_len = 24;
	cmd.done = direct_done;
	for (int tries = 0; tries < 2; tries++) { /* the first may report 29/00 */
		fl_lun_submit(lun, &cmd);
		if (cmd.status == GOOD)
			break;
	}
	TH_EXPECT_GOOD(&cmd, "REGISTER with a name");
}

/* READ FULL STATUS: key, R_HOLDER, type, port and TransportID per registrant. */
static void test_pr_read_full_status(void)
{
	static const char iscsi[] = "iqn.2026-01.org.example:host1,i,0x23d000000001";
	static const char sas[] = "naa.5001405aabbccdd0";
	struct fl_lun *lun = th_lun(NULL);
	uint8_t buf[256];
	const uint8_t *d;
	struct fl_cmd res;
	uint32_t tlen;

	register_named(lun, 11, iscsi, 2, 0xa);
	register_named(lun, 12, sas, 3, 0xb);
	res = pro(lun, 11, RESERVE, WE_RO, 0xa, 0, 0);
	TH_EXPECT_GOOD(&res, "RESERVE");
	res = pri(lun, 11, 3, buf);
	TH_EXPECT_GOOD(&res, "READ FULL STATUS");
	CU_ASSERT_EQUAL(fl_get_be32(buf), 2);
	d = buf + 8;
	CU_ASSERT_EQUAL(fl_get_be64(d), 0xa);
	CU_ASSERT_EQUAL(d[12], 0x01); /* R_HOLDER */
	CU_ASSERT_EQUAL(d[13], WE_RO);
	CU_ASSERT_EQUAL(d[18] << 8 | d[19], 2);
	tlen = fl_get_be32(d + 20);
	CU_ASSERT_EQUAL(tlen % 4, 0);
	CU_ASSERT_EQUAL(d[24], 0x45); /* FORMAT CODE 01b, iSCSI */
	CU_ASSERT_EQUAL(d[26] << 8 | d[27], tlen - 4);
	CU_ASSERT_STRING_EQUAL((const char *)d + 28, iscsi);
	d += 24 + tlen;
	CU_ASSERT_EQUAL(fl_get_be64(d), 0xb);
	CU_ASSERT_EQUAL(d[12], 0x00);
	CU_ASSERT_EQUAL(d[18] << 8 | d[19], 3);
	CU_ASSERT_EQUAL(fl_get_be32(d + 20), 24);
	CU_ASSERT_EQUAL(d[24], 0x06); /* SAS */
	CU_ASSERT_EQUAL(fl_get_be64(d + 28), 0x5001405aabbccdd0ull);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), (uint32_t)(d + 24 + 24 - buf - 8));
	CU_ASSERT_EQUAL(res.data_in_len, fl_get_be32(buf + 4) + 8);
	fl_lun_destroy(lun);
}

/* REPORT CAPABILITIES: the types supported, no SIP_C / ATP_C / PTPL_C / CRH. */
static void test_pr_report_capabilities(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res = pri(lun, 1, 2, buf);

	TH_EXPECT_GOOD(&res, "REPORT CAPABILITIES");
	CU_ASSERT_EQUAL(res.data_in_len, 8);
	CU_ASSERT_EQUAL(buf[0] << 8 | buf[1], 8);
	CU_ASSERT_EQUAL(buf[2], 0);
	CU_ASSERT(buf[3] & 0x80); /* TMV */
	CU_ASSERT_EQUAL(buf[4], 0xea);
	CU_ASSERT_EQUAL(buf[5], 0x01);
	fl_lun_destroy(lun);
}

/* RESERVE by another nexus conflicts; RELEASE by a non-holder changes nothing. */
static void test_pr_reserve_release_two_nexuses(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
	PRO_OK(lun, 2, REGISTER, 0, 0, 0xb);
	PRO_OK(lun, 1, RESERVE, WE, 0xa, 0);
	res = pro(lun, 2, RESERVE, WE, 0xb, 0, 0);
	TH_EXPECT(&res, RC, 0, 0, 0, "RESERVE while another holds it");
	res = pro(lun, 2, RELEASE, WE, 0xb, 0, 0);
	TH_EXPECT_GOOD(&res, "RELEASE by a non-holder");
	res = pri(lun, 3, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 16); /* still reserved */
	/* Write Exclusive: releasing raises no UA */
	PRO_OK(lun, 1, RELEASE, WE, 0xa, 0);
	expect_ua(lun, 2, 0, 0, "no UA for a WE release");
	res = pri(lun, 3, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 0);
	/* now nexus 2 can reserve */
	PRO_OK(lun, 2, RESERVE, EA, 0xb, 0);
	fl_lun_destroy(lun);
}

/* Releasing a registrants-only reservation: 2A/04 for the other registrants. */
static void test_pr_release_ro_raises_ua(void)
{
	static const uint8_t types[] = {WE_RO, EA_RO, WE_AR, EA_AR};

	for (size_t i = 0; i < sizeof(types); i++) {
		struct fl_lun *lun = three_nexus_lun();

		PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
		PRO_OK(lun, 2, REGISTER, 0, 0, 0xb);
		PRO_OK(lun, 1, RESERVE, types[i], 0xa, 0);
		/* under all-registrants, nexus 2 is a holder and may release it */
		if (types[i] == WE_AR || types[i] == EA_AR) {
			PRO_OK(lun, 2, RELEASE, types[i], 0xb, 0);
			expect_ua(lun, 1, 0x2a, 0x04, "AR release: registrant 1 hears 2A/04");
			expect_ua(lun, 2, 0, 0, "not the releasing nexus");
		} else {
			PRO_OK(lun, 1, RELEASE, types[i], 0xa, 0);
			expect_ua(lun, 2, 0x2a, 0x04, "RO release: registrant 2 hears 2A/04");
			expect_ua(lun, 1, 0, 0, "not the releasing nexus");
		}
		expect_ua(lun, 3, 0, 0, "a non-registrant hears nothing");
		fl_lun_destroy(lun);
	}
}

/* Unregistering the holder releases the reservation (RO: 2A/04 to the others). */
static void test_pr_unregister_holder_releases(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
	PRO_OK(lun, 2, REGISTER, 0, 0, 0xb);
	PRO_OK(lun, 1, RESERVE, WE_RO, 0xa, 0);
	PRO_OK(lun, 1, REGISTER, 0, 0xa, 0);
	res = pri(lun, 3, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 0);
	expect_ua(lun, 2, 0x2a, 0x04, "registrant hears RESERVATIONS RELEASED");
	/* all registrants: the reservation lasts until the last one leaves */
	PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
	PRO_OK(lun, 1, RESERVE, EA_AR, 0xa, 0);
	PRO_OK(lun, 1, REG_IGNORE, 0, 0, 0);
	res = pri(lun, 3, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 16);
	res = sc_run1(lun, 3, (uint8_t[10]){0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10, NULL, 0, buf,
		      sizeof(buf));
	TH_EXPECT(&res, RC, 0, 0, 0, "EA_AR still there for a non-registrant");
	PRO_OK(lun, 2, REGISTER, 0, 0xb, 0);
	res = pri(lun, 3, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 0);
	fl_lun_destroy(lun);
}

/* CLEAR: registrations and reservation gone, 2A/03 for the other registrants. */
static void test_pr_clear(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;
	uint32_t gen;

	PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
	PRO_OK(lun, 2, REGISTER, 0, 0, 0xb);
	PRO_OK(lun, 2, RESERVE, EA, 0xb, 0);
	res = pri(lun, 3, 0, buf);
	gen = fl_get_be32(buf);
	PRO_OK(lun, 1, CLEAR, 0, 0xa, 0);
	res = pri(lun, 3, 0, buf);
	TH_EXPECT_GOOD(&res, "READ KEYS after CLEAR");
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 0);
	CU_ASSERT_EQUAL(fl_get_be32(buf), gen + 1);
	res = pri(lun, 3, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 0);
	expect_ua(lun, 2, 0x2a, 0x03, "registrant hears RESERVATIONS PREEMPTED");
	expect_ua(lun, 1, 0, 0, "not the clearing nexus");
	expect_ua(lun, 3, 0, 0, "not a non-registrant");
	fl_lun_destroy(lun);
}

/* PREEMPT the holder: registration gone (2A/05), reservation moves. */
static void test_pr_preempt_holder(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
	PRO_OK(lun, 2, REGISTER, 0, 0, 0xb);
	PRO_OK(lun, 3, REGISTER, 0, 0, 0xc);
	PRO_OK(lun, 1, RESERVE, WE, 0xa, 0);
	/* nexus 2 preempts nexus 1 and changes the type to EA */
	PRO_OK(lun, 2, PREEMPT, EA, 0xb, 0xa);
	res = pri(lun, 2, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0xb);
	CU_ASSERT_EQUAL(buf[21], EA);
	res = pri(lun, 2, 0, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 16);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0xb);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 16), 0xc);
	expect_ua(lun, 1, 0x2a, 0x05, "preempted nexus hears REGISTRATIONS PREEMPTED");
	/* the type changed: the remaining registrant hears RESERVATIONS RELEASED */
	expect_ua(lun, 3, 0x2a, 0x04, "nexus 3 hears the type change");
	expect_ua(lun, 2, 0, 0, "not the preempting nexus");
	/* nexus 1 lost its registration: its PR OUT with the old key conflicts */
	res = pro(lun, 1, RESERVE, EA, 0xa, 0, 0);
	TH_EXPECT(&res, RC, 0, 0, 0, "preempted nexus cannot reserve");
	res = sc_run1(lun, 1, (uint8_t[10]){0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10, NULL, 0, buf,
		      sizeof(buf));
	TH_EXPECT(&res, RC, 0, 0, 0, "preempted nexus cannot read under EA");
	fl_lun_destroy(lun);
}

/* PREEMPT a non-holder: only its registration goes; same type, no 2A/04. */
static void test_pr_preempt_registrant(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
	PRO_OK(lun, 2, REGISTER, 0, 0, 0xb);
	PRO_OK(lun, 3, REGISTER, 0, 0, 0xc);
	PRO_OK(lun, 1, RESERVE, WE_RO, 0xa, 0);
	PRO_OK(lun, 1, PREEMPT, WE_RO, 0xa, 0xc);
	res = pri(lun, 1, 1, buf);
	TH_EXPECT_GOOD(&res, "PR IN");
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0xa);
	CU_ASSERT_EQUAL(buf[21], WE_RO);
	res = pri(lun, 1, 0, buf);
	TH_EXPECT_GOOD(&res, "PR IN");
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 16);
	expect_ua(lun, 3, 0x2a, 0x05, "nexus 3 preempted");
	expect_ua(lun, 2, 0, 0, "nexus 2 untouched");
	/* without a reservation, PREEMPT just removes registrations */
	PRO_OK(lun, 1, RELEASE, WE_RO, 0xa, 0);
	expect_ua(lun, 2, 0x2a, 0x04, "RO release");
	PRO_OK(lun, 1, PREEMPT, WE, 0xa, 0xb);
	res = pri(lun, 1, 1, buf);
	TH_EXPECT_GOOD(&res, "PR IN");
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 0);
	res = pri(lun, 1, 0, buf);
	TH_EXPECT_GOOD(&res, "PR IN");
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 8);
	expect_ua(lun, 2, 0x2a, 0x05, "nexus 2 preempted");
	fl_lun_destroy(lun);
}

/* PREEMPT an all-registrants reservation with SARK 0: everyone else goes. */
static void test_pr_preempt_all_registrants(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
	PRO_OK(lun, 2, REGISTER, 0, 0, 0xb);
	PRO_OK(lun, 3, REGISTER, 0, 0, 0xc);
	PRO_OK(lun, 2, RESERVE, WE_AR, 0xb, 0);
	PRO_OK(lun, 3, PREEMPT, EA, 0xc, 0);
	res = pri(lun, 3, 0, buf);
	TH_EXPECT_GOOD(&res, "PR IN");
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 8);
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0xc);
	res = pri(lun, 3, 1, buf);
	TH_EXPECT_GOOD(&res, "PR IN");
	CU_ASSERT_EQUAL(fl_get_be64(buf + 8), 0xc);
	CU_ASSERT_EQUAL(buf[21], EA);
	expect_ua(lun, 1, 0x2a, 0x05, "nexus 1 preempted");
	expect_ua(lun, 2, 0x2a, 0x05, "nexus 2 preempted");
	expect_ua(lun, 3, 0, 0, "the preempting nexus");
	fl_lun_destroy(lun);
}

/* Persistent reservations survive a LUN reset (SPC-2 reservations do not). */
static void test_pr_survives_lun_reset(void)
{
	struct fl_lun *lun = three_nexus_lun();
	uint8_t buf[256];
	struct fl_cmd res;

	PRO_OK(lun, 1, REGISTER, 0, 0, 0xa);
	PRO_OK(lun, 1, RESERVE, EA, 0xa, 0);
	fl_lun_reset(lun, 1, 0x29, 0x03);
	expect_ua(lun, 2, 0x29, 0x03, "reset UA");
	res = pri(lun, 2, 1, buf);
	CU_ASSERT_EQUAL(fl_get_be32(buf + 4), 16);
	res = sc_run1(lun, 2, (uint8_t[10]){0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}, 10, NULL, 0, buf,
		      sizeof(buf));
	TH_EXPECT(&res, RC, 0, 0, 0, "EA held across the reset");
	fl_lun_destroy(lun);
}

/* SPC-2 RESERVE / RELEASE (6, 10) between two nexuses. */
static void test_reserve_release_spc2(void)
{
	/* clang-format off */
	static const struct {
		uint8_t reserve[10], release[10], len;
	} forms[] = {
	    {{0x16}, {0x17}, 6},
	    {{0x56}, {0x57}, 10},
	};
	/* clang-format on */
	uint8_t rd[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}, inq[6] = {0x12, 0, 0, 0, 36, 0};
	uint8_t buf[512];

	for (size_t f = 0; f < 2; f++) {
		struct fl_lun *lun = three_nexus_lun();
		struct fl_cmd res;

		res = sc_run1(lun, 1, forms[f].reserve, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT_GOOD(&res, "RESERVE from 1");
		res = sc_run1(lun, 1, forms[f].reserve, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT_GOOD(&res, "RESERVE again from the holder");
		res = sc_run1(lun, 1, rd, 10, NULL, 0, buf, sizeof(buf));
		TH_EXPECT_GOOD(&res, "holder reads");
		res = sc_run1(lun, 2, rd, 10, NULL, 0, buf, sizeof(buf));
		TH_EXPECT(&res, RC, 0, 0, 0, "other nexus reads");
		res = sc_run1(lun, 2, forms[f].reserve, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT(&res, RC, 0, 0, 0, "other nexus reserves");
		res = sc_run1(lun, 2, inq, 6, NULL, 0, buf, sizeof(buf));
		TH_EXPECT_GOOD(&res, "INQUIRY from the other nexus");
		/* TEST UNIT READY conflicts too (as LIO and tgtd answer it) */
		res = sc_run1(lun, 2, (uint8_t[6]){0x00}, 6, NULL, 0, NULL, 0);
		TH_EXPECT(&res, RC, 0, 0, 0, "TEST UNIT READY from the other nexus");
		res = sc_run1(lun, 1, (uint8_t[6]){0x00}, 6, NULL, 0, NULL, 0);
		TH_EXPECT_GOOD(&res, "TEST UNIT READY from the holder");
		res = sc_run1(lun, 2, (uint8_t[6]){0x03, 0, 0, 0, 18, 0}, 6, NULL, 0, buf, sizeof(buf));
		TH_EXPECT_GOOD(&res, "REQUEST SENSE from the other nexus");
		/* SPC-2: RELEASE from a non-holder is GOOD and changes nothing */
		res = sc_run1(lun, 2, forms[f].release, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT_GOOD(&res, "RELEASE from the other nexus");
		res = sc_run1(lun, 2, rd, 10, NULL, 0, buf, sizeof(buf));
		TH_EXPECT(&res, RC, 0, 0, 0, "still reserved");
		/* all PR commands conflict while reserved, whoever sends them */
		res = pri(lun, 1, 0, buf);
		TH_EXPECT(&res, RC, 0, 0, 0, "PR IN under RESERVE, holder");
		res = pro(lun, 2, REGISTER, 0, 0, 5, 0);
		TH_EXPECT(&res, RC, 0, 0, 0, "PR OUT under RESERVE");
		res = sc_run1(lun, 1, forms[f].release, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT_GOOD(&res, "RELEASE from the holder");
		res = sc_run1(lun, 2, rd, 10, NULL, 0, buf, sizeof(buf));
		TH_EXPECT_GOOD(&res, "other nexus reads after RELEASE");
		res = sc_run1(lun, 2, forms[f].release, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT_GOOD(&res, "RELEASE with nothing reserved");
		/* a LUN reset releases an SPC-2 reservation */
		res = sc_run1(lun, 1, forms[f].reserve, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT_GOOD(&res, "RESERVE before reset");
		fl_lun_reset(lun, 1, 0x29, 0x03);
		th_clear_ua(lun, 2);
		th_clear_ua(lun, 3);
		res = sc_run1(lun, 2, rd, 10, NULL, 0, buf, sizeof(buf));
		TH_EXPECT_GOOD(&res, "read after reset");
		/* with a PR registration, RESERVE and RELEASE conflict for everyone */
		PRO_OK(lun, 3, REGISTER, 0, 0, 0x33);
		res = sc_run1(lun, 1, forms[f].reserve, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT(&res, RC, 0, 0, 0, "RESERVE with registrations");
		res = sc_run1(lun, 3, forms[f].release, forms[f].len, NULL, 0, NULL, 0);
		TH_EXPECT(&res, RC, 0, 0, 0, "RELEASE with registrations");
		fl_lun_destroy(lun);
	}
}

/* RESERVE(10) third-party / long id and RESERVE(6) extents are refused. */
static void test_reserve_errors(void)
{
	/* clang-format off */
	static const struct sc_case cases[] = {
	    {"test_reserve10_3rdpty", {0x56, 0x10}, 10, .status = CC, .key = IR, .asc = 0x24,
	     SKS_CDB(1, 4)},
	    {"test_reserve10_longid", {0x56, 0x02}, 10, .status = CC, .key = IR, .asc = 0x24,
	     SKS_CDB(1, 1)},
	    {"test_reserve6_extent", {0x16, 0x01}, 6, .status = CC, .key = IR, .asc = 0x24,
	     SKS_CDB(1, 0)},
	    {"test_release10_3rdpty", {0x57, 0x10}, 10, .status = CC, .key = IR, .asc = 0x24,
	     SKS_CDB(1, 4)},
	};
	/* clang-format on */
	struct fl_lun *lun = three_nexus_lun();

	SC_RUN_CASES(lun, 1, cases);
	CU_ASSERT_FALSE(lun->pr.legacy_reserved);
	fl_lun_destroy(lun);
}

FL_TESTS(pr_tests,
	 FL_TEST(test_pr_register_read_keys),
	 FL_TEST(test_pr_register_errors),
	 FL_TEST(test_pr_register_limit),
	 FL_TEST(test_pr_conflict_table),
	 FL_TEST(test_pr_read_reservation),
	 FL_TEST(test_pr_read_full_status),
	 FL_TEST(test_pr_report_capabilities),
	 FL_TEST(test_pr_reserve_release_two_nexuses),
	 FL_TEST(test_pr_release_ro_raises_ua),
	 FL_TEST(test_pr_unregister_holder_releases),
	 FL_TEST(test_pr_clear),
	 FL_TEST(test_pr_preempt_holder),
	 FL_TEST(test_pr_preempt_registrant),
	 FL_TEST(test_pr_preempt_all_registrants),
	 FL_TEST(test_pr_survives_lun_reset),
	 FL_TEST(test_reserve_release_spc2),
	 FL_TEST(test_reserve_errors));

FL_SUITES(FL_SUITE("pr", NULL, NULL, pr_tests));
