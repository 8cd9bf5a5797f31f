/* SPDX-License-Identifier: MIT */
/*
 * test_cdb.c - the opcode table (cdb.c), CDB decoding and the sense
 * encoders (sense.c): table invariants, fl_cdb_decode for every LBA-bearing
 * layout, fl_opcode_name, fixed and descriptor sense with INFORMATION and
 * field pointers; fl_sense_decode, the reader on the initiator side.
 */
#include "runner.h"
#include "target_internal.h"
#include "tharness.h"

#include <errno.h>
#include <string.h>

/* CDB length implied by the opcode's group (SPC-4 r37 4.2.5.1). */
static unsigned group_len(uint8_t op)
{
	switch (op >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 4:
		return 16;
	case 5:
		return 12;
	default:
		return 0;
	}
}

/* Every row: group length, usage[0] = opcode, a name, a handler, sorted. */
static void test_table_rows_consistent(void)
{
	const struct fl_opcode_desc *d, *prev = NULL;

	for (size_t i = 0; (d = cdb_table_row(i)); i++) {
		TH_CHECK(d->cdb_len == group_len(d->opcode), "%s: length %u", d->name, d->cdb_len);
		TH_CHECK(d->usage[0] == d->opcode, "%s: usage[0]", d->name);
		TH_CHECK(d->name && d->exec, "row %zu incomplete", i);
		TH_CHECK(d->has_sa == cdb_opcode_has_sa(d->opcode), "%s: has_sa", d->name);
		if (d->has_sa)
			TH_CHECK((d->usage[1] & 0x1f) == d->service_action, "%s: usage[1]",
				 d->name);
		if (prev)
			TH_CHECK(prev->opcode < d->opcode ||
				     (prev->opcode == d->opcode &&
				      prev->service_action < d->service_action),
				 "%s after %s: not sorted", d->name, prev->name);
		TH_CHECK(cdb_lookup(d->usage, d->cdb_len) == d, "%s: lookup by its usage CDB",
			 d->name);
		if (d->decode)
			TH_CHECK(d->flags & OPF_MEDIA, "%s: has an LBA but is not a media command",
				 d->name);
		prev = d;
	}
	CU_ASSERT_PTR_NULL(cdb_table_row(1000));
}

/* The commands the core promises are all in the table. */
static void test_table_has_required_opcodes(void)
{
	static const struct {
		uint8_t op;
		uint16_t sa;
	} need[] = {
	    {0x00, 0},	  {0x03, 0}, {0x08, 0},	   {0x0a, 0},	 {0x12, 0},    {0x15, 0},
	    {0x16, 0},	  {0x17, 0}, {0x1a, 0},	   {0x1b, 0},	 {0x1e, 0},    {0x25, 0},
	    {0x28, 0},	  {0x2a, 0}, {0x2e, 0},	   {0x2f, 0},	 {0x34, 0},    {0x35, 0},
	    {0x41, 0},	  {0x42, 0}, {0x55, 0},	   {0x56, 0},	 {0x57, 0},    {0x5a, 0},
	    {0x5e, 0},	  {0x5e, 1}, {0x5e, 2},	   {0x5f, 0},	 {0x5f, 1},    {0x5f, 2},
	    {0x5f, 3},	  {0x5f, 4}, {0x5f, 6},	   {0x88, 0},	 {0x89, 0},    {0x8a, 0},
	    {0x8e, 0},	  {0x8f, 0}, {0x90, 0},	   {0x91, 0},	 {0x93, 0},    {0x9e, 0x10},
	    {0x9e, 0x12}, {0xa0, 0}, {0xa3, 0x0a}, {0xa3, 0x0c}, {0xa4, 0x0a}, {0xa8, 0},
	    {0xaa, 0},	  {0xae, 0}, {0xaf, 0},	   {0x37, 0},	 {0xb7, 0},    {0x8b, 0},
	    {0x9c, 0},
	};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		TH_CHECK(fl_opcode_name(need[i].op, need[i].sa) != NULL,
			 "opcode %02xh/%02xh missing", need[i].op, need[i].sa);
	CU_ASSERT_STRING_EQUAL(fl_opcode_name(0x28, 0), "READ(10)");
	CU_ASSERT_STRING_EQUAL(fl_opcode_name(0x9e, 0x10), "READ CAPACITY(16)");
	CU_ASSERT_PTR_NULL(fl_opcode_name(0x9e, 0x11));
	CU_ASSERT_PTR_NULL(fl_opcode_name(0xff, 0));
	CU_ASSERT_PTR_NULL(fl_opcode_name(0x7f, 0));
}

/* fl_cdb_decode: LBA and length of each layout. */
static void test_decode_lba_layouts(void)
{
	struct fl_cdb_info info;
	uint8_t cdb[32];

	th_cdb6(cdb, 0x08, 0x1abcde, 0);
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 6, &info), 0);
	CU_ASSERT(info.known && info.has_lba && info.data_in && !info.data_out);
	CU_ASSERT_EQUAL(info.cls, FL_CLASS_READ);
	CU_ASSERT_EQUAL(info.lba, 0x1abcde);
	CU_ASSERT_EQUAL(info.nblocks, 256); /* READ(6) length 0 = 256 */

	th_cdb10(cdb, 0x2a, 0, 0xfedcba98, 0x1234);
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 10, &info), 0);
	CU_ASSERT(info.data_out && !info.data_in);
	CU_ASSERT_EQUAL(info.cls, FL_CLASS_WRITE);
	CU_ASSERT_EQUAL(info.lba, 0xfedcba98u);
	CU_ASSERT_EQUAL(info.nblocks, 0x1234);

	th_cdb12(cdb, 0xa8, 0, 7, 0x01020304);
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 12, &info), 0);
	CU_ASSERT_EQUAL(info.lba, 7);
	CU_ASSERT_EQUAL(info.nblocks, 0x01020304);

	th_cdb16(cdb, 0x88, 0, 0x0102030405060708ull, 0xa0b0c0d0);
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 16, &info), 0);
	CU_ASSERT_EQUAL(info.lba, 0x0102030405060708ull);
	CU_ASSERT_EQUAL(info.nblocks, 0xa0b0c0d0u);

	th_cdb16(cdb, 0x89, 0, 99, 0);
	cdb[13] = 3;
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 16, &info), 0);
	CU_ASSERT_EQUAL(info.lba, 99);
	CU_ASSERT_EQUAL(info.nblocks, 3);
	CU_ASSERT_EQUAL(info.cls, FL_CLASS_WRITE);
}

/* Decodes the cdb of len bytes into *info; returns its command class. */
static enum fl_cmd_class class_of(const uint8_t *cdb, size_t len, struct fl_cdb_info *info)
{
	fl_cdb_decode(cdb, len, info);
	return info->cls;
}

/* Classes: WRITE SAME with UNMAP is an unmap, SYNC CACHE a flush, etc. */
static void test_decode_classes(void)
{
	struct fl_cdb_info info;
	uint8_t cdb[16];

	CU_ASSERT_EQUAL(class_of(cdb, th_cdb16(cdb, 0x93, 0x08, 0, 8), &info), FL_CLASS_UNMAP);
	CU_ASSERT_EQUAL(class_of(cdb, th_cdb16(cdb, 0x93, 0x00, 0, 8), &info), FL_CLASS_WRITE);
	CU_ASSERT_EQUAL(class_of(cdb, th_cdb10(cdb, 0x35, 0, 0, 0), &info), FL_CLASS_FLUSH);
	CU_ASSERT_EQUAL(class_of(cdb, th_cdb10(cdb, 0x42, 0, 0, 24), &info), FL_CLASS_UNMAP);
	CU_ASSERT(!info.has_lba);
	memset(cdb, 0, 6);
	fl_cdb_decode(cdb, 6, &info);
	CU_ASSERT_EQUAL(info.cls, FL_CLASS_TUR);
	cdb[0] = 0x12;
	fl_cdb_decode(cdb, 6, &info);
	CU_ASSERT_EQUAL(info.cls, FL_CLASS_INQUIRY);
	th_cdb10(cdb, 0x2f, 0, 0, 1); /* VERIFY BYTCHK=0 moves no data */
	fl_cdb_decode(cdb, 10, &info);
	CU_ASSERT(!info.data_out);
	CU_ASSERT_EQUAL(info.cls, FL_CLASS_READ);
	th_cdb10(cdb, 0x2f, 0x02, 0, 1);
	fl_cdb_decode(cdb, 10, &info);
	CU_ASSERT(info.data_out);
	th_cdb12(cdb, 0xaf, 0, 5, 9); /* VERIFY(12) too */
	fl_cdb_decode(cdb, 12, &info);
	CU_ASSERT(!info.data_out && info.has_lba && info.lba == 5 && info.nblocks == 9);
	th_cdb12(cdb, 0xaf, 0x02, 5, 9);
	fl_cdb_decode(cdb, 12, &info);
	CU_ASSERT(info.data_out);
	th_cdb12(cdb, 0xae, 0, 5, 9);
	fl_cdb_decode(cdb, 12, &info);
	CU_ASSERT(info.data_out && info.cls == FL_CLASS_WRITE && info.nblocks == 9);
	th_cdb16(cdb, 0x9c, 0, 0x0102030405060708ull, 0); /* WRITE ATOMIC(16): 16-bit length */
	cdb[10] = 0xaa;
	cdb[12] = 0x12;
	cdb[13] = 0x34;
	fl_cdb_decode(cdb, 16, &info);
	CU_ASSERT(info.cls == FL_CLASS_WRITE && info.lba == 0x0102030405060708ull &&
		  info.nblocks == 0x1234);
	th_cdb16(cdb, 0x8b, 0, 7, 3); /* ORWRITE(16) */
	fl_cdb_decode(cdb, 16, &info);
	CU_ASSERT(info.cls == FL_CLASS_WRITE && info.data_out && info.lba == 7 && info.nblocks == 3);
	th_cdb16(cdb, 0x9e, 0x10, 0, 32);
	fl_cdb_decode(cdb, 16, &info);
	CU_ASSERT(info.known && info.service_action == 0x10 && !info.has_lba);
}

/* Empty, oversized, too short and unknown CDBs. */
static void test_decode_bad_cdbs(void)
{
	struct fl_cdb_info info;
	uint8_t cdb[40] = {0x28};

	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 0, &info), -EINVAL);
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 33, &info), -EINVAL);
	CU_ASSERT_EQUAL(fl_cdb_decode(NULL, 6, &info), -EINVAL);
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 6, &info), 0); /* READ(10) cut to 6 bytes */
	CU_ASSERT(!info.known && !info.has_lba);
	CU_ASSERT_EQUAL(info.opcode, 0x28);
	cdb[0] = 0xc0;
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 16, &info), 0);
	CU_ASSERT(!info.known);
	cdb[0] = 0x9e;
	cdb[1] = 0x1f; /* unknown service action */
	CU_ASSERT_EQUAL(fl_cdb_decode(cdb, 16, &info), 0);
	CU_ASSERT(!info.known);
}

/* Fixed format: VALID + INFORMATION, field pointer in bytes 15-17. */
static void test_sense_fixed_format(void)
{
	uint8_t buf[FL_SENSE_MAX], sks[3] = {0xc8 | 3, 0x00, 0x07};
	struct th_sense s;
	uint8_t len;

	len = sense_encode(buf, false, FL_KEY_MISCOMPARE, 0x1d, 0x00, true, 0x1234, NULL);
	CU_ASSERT_EQUAL(len, 18);
	CU_ASSERT_EQUAL(buf[0], 0xf0);
	CU_ASSERT_EQUAL(buf[7], 10);
	th_parse_sense(buf, len, &s);
	CU_ASSERT(s.valid && !s.descriptor && s.info_valid && s.info == 0x1234);
	CU_ASSERT(s.key == FL_KEY_MISCOMPARE && s.asc == 0x1d && s.ascq == 0);
	/* INFORMATION that needs more than 32 bits cannot be VALID in fixed format */
	len = sense_encode(buf, false, FL_KEY_MEDIUM_ERROR, 0x11, 0, true, 1ull << 33, NULL);
	CU_ASSERT_EQUAL(buf[0], 0x70);
	len = sense_encode(buf, false, FL_KEY_ILLEGAL_REQUEST, 0x24, 0, false, 0, sks);
	th_parse_sense(buf, len, &s);
	CU_ASSERT(s.sks_valid && s.sks_cd && s.sks_field == 7 && s.sks_bit == 3);
}

/* Descriptor format: information and sense-key-specific descriptors. */
static void test_sense_descriptor_format(void)
{
	uint8_t buf[FL_SENSE_MAX], sks[3] = {0x80, 0x00, 0x02};
	struct th_sense s;
	uint8_t len;

	len = sense_encode(buf, true, FL_KEY_MEDIUM_ERROR, 0x11, 0x00, true, 1ull << 40, sks);
	CU_ASSERT_EQUAL(len, 8 + 12 + 8);
	CU_ASSERT_EQUAL(buf[0], 0x72);
	CU_ASSERT_EQUAL(buf[7], 20);
	th_parse_sense(buf, len, &s);
	CU_ASSERT(s.valid && s.descriptor && s.key == FL_KEY_MEDIUM_ERROR && s.asc == 0x11);
	CU_ASSERT(s.info_valid && s.info == 1ull << 40);
	CU_ASSERT(s.sks_valid && !s.sks_cd && s.sks_field == 2 && s.sks_bit == -1);
	len = sense_encode(buf, true, FL_KEY_UNIT_ATTENTION, 0x29, 0x00, false, 0, NULL);
	CU_ASSERT_EQUAL(len, 8);
	CU_ASSERT_EQUAL(buf[7], 0);
}

/* fl_cmd_set_sense (the fault engine's way in) is the same encoder, in the format asked for. */
static void test_cmd_set_sense(void)
{
	uint8_t buf[FL_SENSE_MAX];
	struct fl_cmd cmd;
	uint8_t len;

	for (int descriptor = 0; descriptor < 2; descriptor++) {
		memset(&cmd, 0, sizeof(cmd));
		fl_cmd_set_sense(&cmd, descriptor, FL_KEY_MEDIUM_ERROR, 0x11, 0x00, true, 2048);
		len = sense_encode(buf, descriptor, FL_KEY_MEDIUM_ERROR, 0x11, 0x00, true, 2048,
				   NULL);
		CU_ASSERT_EQUAL(cmd.status, FL_STATUS_CHECK_CONDITION);
		CU_ASSERT_EQUAL(cmd.sense_len, len);
		CU_ASSERT_EQUAL(memcmp(cmd.sense, buf, len), 0);
		CU_ASSERT_EQUAL(cmd.sense[0], descriptor ? 0x72 : 0xf0);
	}
}

/* Every sense reason maps to something sane through sense_complete. */
static void test_sense_table_complete(void)
{
	for (int r = 0; r < SENSE_REASON_NR; r++) {
		struct fl_cmd cmd;
		struct exec_ctx x;
		struct th_sense s;

		memset(&cmd, 0, sizeof(cmd));
		memset(&x, 0, sizeof(x));
		x.cmd = &cmd;
		x.sks_bit = -1;
		x.ua_asc = 0x29;
		sense_complete(&x, (enum sense_reason)r);
		if (cmd.status == FL_STATUS_CHECK_CONDITION) {
			th_parse_sense(cmd.sense, cmd.sense_len, &s);
			TH_CHECK(s.valid && s.key != 0 && s.asc != 0, "reason %d: sense %x/%02x", r,
				 s.key, s.asc);
		} else {
			TH_CHECK(cmd.sense_len == 0, "reason %d: sense without CHECK CONDITION", r);
		}
		if (r == SENSE_OK)
			CU_ASSERT_EQUAL(cmd.status, FL_STATUS_GOOD);
	}
}

/* fl_sense_decode, the initiator side's reader: what the encoder writes, and short or odd data. */
static void test_sense_decode(void)
{
	static const struct {
		const char *what;
		uint8_t bytes[32];
		size_t len;
		enum fl_sense_format format;
		uint8_t key, asc, ascq;
		bool info_valid;
		uint64_t info;
	} cases[] = {
	    /* clang-format off */
	    {"fixed, VALID", {0xf0, 0, 0x03, 0, 0, 0x10, 0, 10, 0, 0, 0, 0, 0x11, 0x00}, 18,
	     FL_SENSE_FORMAT_FIXED, 3, 0x11, 0, true, 0x1000},
	    {"fixed, deferred", {0x71, 0, 0x06, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x29, 0x01}, 14,
	     FL_SENSE_FORMAT_FIXED, 6, 0x29, 1, false, 0},
	    {"fixed, cut after ASC", {0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x24, 0x07}, 13,
	     FL_SENSE_FORMAT_FIXED, 5, 0x24, 0, false, 0},
	    {"fixed, key only", {0x70, 0, 0x02}, 3, FL_SENSE_FORMAT_FIXED, 2, 0, 0, false, 0},
	    {"descriptor, information", {0x72, 0x03, 0x11, 0x00, 0, 0, 0, 12, 0x00, 0x0a, 0x80, 0,
					 0, 0, 0, 0, 0, 0, 0x08, 0x00}, 20,
	     FL_SENSE_FORMAT_DESCRIPTOR, 3, 0x11, 0, true, 0x0800},
	    {"descriptor, information cut short", {0x72, 0x03, 0x11, 0x00, 0, 0, 0, 12, 0x00, 0x0a,
						   0x80, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00}, 19,
	     FL_SENSE_FORMAT_DESCRIPTOR, 3, 0x11, 0, false, 0},
	    {"descriptor, deferred, header only", {0x73, 0x04, 0x44, 0x00}, 4,
	     FL_SENSE_FORMAT_DESCRIPTOR, 4, 0x44, 0, false, 0},
	    {"descriptor, three bytes", {0x72, 0x04, 0x44}, 3, FL_SENSE_FORMAT_DESCRIPTOR, 0, 0, 0,
	     false, 0},
	    {"vendor response code", {0x7f, 0x05, 0x24, 0x00, 0, 0, 0, 0}, 8,
	     FL_SENSE_FORMAT_UNKNOWN, 0, 0, 0, false, 0},
	    {"no sense", {0}, 0, FL_SENSE_FORMAT_UNKNOWN, 0, 0, 0, false, 0},
	    /* clang-format on */
	};
	struct fl_sense_data s;
	uint8_t buf[FL_SENSE_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		TH_CHECK(fl_sense_decode(cases[i].bytes, cases[i].len, &s) == cases[i].format,
			 "%s: format %s", cases[i].what, fl_sense_format_name(s.format));
		TH_CHECK(s.key == cases[i].key && s.asc == cases[i].asc && s.ascq == cases[i].ascq,
			 "%s: %x/%02x/%02x", cases[i].what, s.key, s.asc, s.ascq);
		TH_CHECK(s.info_valid == cases[i].info_valid && s.info == cases[i].info,
			 "%s: information %d %llu", cases[i].what, s.info_valid,
			 (unsigned long long)s.info);
	}
	/* both of the encoder's formats read back */
	for (int descriptor = 0; descriptor < 2; descriptor++) {
		uint8_t len = sense_encode(buf, descriptor, FL_KEY_MEDIUM_ERROR, 0x11, 0x00, true,
					   4096, NULL);

		fl_sense_decode(buf, len, &s);
		CU_ASSERT_STRING_EQUAL(fl_sense_format_name(s.format),
				       descriptor ? "descriptor" : "fixed");
		CU_ASSERT(s.key == FL_KEY_MEDIUM_ERROR && s.asc == 0x11 && s.ascq == 0);
		CU_ASSERT(s.info_valid && s.info == 4096);
	}
}

/* The opcode constants of fl_target.h are the table's rows (0x7f, variable length, is not one). */
static void test_opcode_constants_named(void)
{
	static const struct {
		uint8_t op;
		uint16_t sa;
		const char *name;
	} named[] = {
	    {SPC_OP_TEST_UNIT_READY, 0, "TEST UNIT READY"},
	    {SPC_OP_REQUEST_SENSE, 0, "REQUEST SENSE"},
	    {SPC_OP_INQUIRY, 0, "INQUIRY"},
	    {SPC_OP_RESERVE_6, 0, "RESERVE(6)"},
	    {SPC_OP_RELEASE_6, 0, "RELEASE(6)"},
	    {SBC_OP_READ_CAPACITY_10, 0, "READ CAPACITY(10)"},
	    {SBC_OP_READ_10, 0, "READ(10)"},
	    {SBC_OP_WRITE_10, 0, "WRITE(10)"},
	    {SBC_OP_SYNC_CACHE_10, 0, "SYNCHRONIZE CACHE(10)"},
	    {SPC_OP_MODE_SELECT_10, 0, "MODE SELECT(10)"},
	    {SPC_OP_RESERVE_10, 0, "RESERVE(10)"},
	    {SPC_OP_RELEASE_10, 0, "RELEASE(10)"},
	    {SPC_OP_MODE_SENSE_10, 0, "MODE SENSE(10)"},
	    {SBC_OP_READ_16, 0, "READ(16)"},
	    {SBC_OP_COMPARE_AND_WRITE, 0, "COMPARE AND WRITE"},
	    {SBC_OP_WRITE_16, 0, "WRITE(16)"},
	    {SBC_OP_SYNC_CACHE_16, 0, "SYNCHRONIZE CACHE(16)"},
	    {SBC_OP_WRITE_ATOMIC_16, 0, "WRITE ATOMIC(16)"},
	    {SBC_OP_SERVICE_ACTION_IN_16, SBC_SA_READ_CAPACITY_16, "READ CAPACITY(16)"},
	    {SPC_OP_REPORT_LUNS, 0, "REPORT LUNS"},
	    {SBC_OP_READ_12, 0, "READ(12)"},
	    {SBC_OP_WRITE_12, 0, "WRITE(12)"},
	};

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		const char *got = fl_opcode_name(named[i].op, named[i].sa);

		TH_CHECK(got && !strcmp(got, named[i].name), "opcode 0x%02x: %s, not %s",
			 named[i].op, got ? got : "(none)", named[i].name);
	}
	CU_ASSERT_PTR_NULL(fl_opcode_name(SPC_OP_VARIABLE_LENGTH, 0));
}

FL_TESTS(cdb_tests,
	 FL_TEST(test_table_rows_consistent),
	 FL_TEST(test_table_has_required_opcodes),
	 FL_TEST(test_decode_lba_layouts),
	 FL_TEST(test_decode_classes),
	 FL_TEST(test_decode_bad_cdbs),
	 FL_TEST(test_opcode_constants_named));

FL_TESTS(sense_tests,
	 FL_TEST(test_sense_fixed_format),
	 FL_TEST(test_sense_descriptor_format),
	 FL_TEST(test_cmd_set_sense),
	 FL_TEST(test_sense_table_complete),
	 FL_TEST(test_sense_decode));

FL_SUITES(FL_SUITE("cdb", NULL, NULL, cdb_tests),
	  FL_SUITE("sense", NULL, NULL, sense_tests));
