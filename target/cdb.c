/* SPDX-License-Identifier: MIT */
/*
 * cdb.c - THE opcode table of the logical unit, and CDB decoding.
 *
 * One row per supported (opcode, service action): CDB length, command class,
 * flags, handler, LBA/length decoder and the CDB usage data that REPORT
 * SUPPORTED OPERATION CODES returns (SPC-4 r37 6.35.3, Table 243). lun.c
 * dispatches from this table, spc.c formats RSOC from it, the fault engine
 * classifies commands with fl_cdb_decode and the tests walk it. Adding an
 * opcode means adding a row here and a handler; nothing else switches on
 * opcodes.
 *
 * CDB layouts: SPC-4 r37 4.2 (groups), SBC-3 r36 5.x (each command).
 */
#include "fl_byteorder.h"
#include "target_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/* READ(6)/WRITE(6): 21-bit LBA, length 0 means 256 blocks (SBC-3 r36 5.15). */
static void dec_rw6(const uint8_t *cdb, struct fl_cdb_info *i)
{
	i->lba = (uint64_t)(cdb[1] & 0x1f) << 16 | fl_get_be16(cdb + 2);
	i->nblocks = cdb[4] ? cdb[4] : 256;
}

/* 10-byte CDBs: LBA in bytes 2-5, length in bytes 7-8. */
static void dec_10(const uint8_t *cdb, struct fl_cdb_info *i)
{
	i->lba = fl_get_be32(cdb + 2);
	i->nblocks = fl_get_be16(cdb + 7);
}

/* 12-byte CDBs: LBA in bytes 2-5, length in bytes 6-9. */
static void dec_12(const uint8_t *cdb, struct fl_cdb_info *i)
{
	i->lba = fl_get_be32(cdb + 2);
	i->nblocks = fl_get_be32(cdb + 6);
}

/* 16-byte CDBs: LBA in bytes 2-9, length in bytes 10-13. */
static void dec_16(const uint8_t *cdb, struct fl_cdb_info *i)
{
	i->lba = fl_get_be64(cdb + 2);
	i->nblocks = fl_get_be32(cdb + 10);
}

/* COMPARE AND WRITE: LBA in bytes 2-9, NUMBER OF LOGICAL BLOCKS in byte 13. */
static void dec_caw(const uint8_t *cdb, struct fl_cdb_info *i)
{
	i->lba = fl_get_be64(cdb + 2);
	i->nblocks = cdb[13];
}

/* WRITE ATOMIC(16): LBA in bytes 2-9, TRANSFER LENGTH in bytes 12-13 (SBC-4). */
static void dec_atomic16(const uint8_t *cdb, struct fl_cdb_info *i)
{
	i->lba = fl_get_be64(cdb + 2);
	i->nblocks = fl_get_be16(cdb + 12);
}

/* GET LBA STATUS: starting LBA only. */
static void dec_gls(const uint8_t *cdb, struct fl_cdb_info *i)
{
	i->lba = fl_get_be64(cdb + 2);
	i->nblocks = 0;
}

#define C6 0x07 /* control byte usage: NACA, (obsolete) FLAG, LINK */
#define RW_MEDIA (OPF_MEDIA | OPF_CONFLICT)
#define RD (RW_MEDIA | OPF_PR_READ_OK | OPF_DATA_IN)
#define WR (RW_MEDIA | OPF_DATA_OUT | OPF_MODIFIES)
/* SPC-4 r37 5.14 / 5.15.2.4: no UA, any ALUA state, any reservation */
#define EXEMPT (OPF_NO_UA | OPF_ALUA_ANY | OPF_PR_READ_OK)

/* The table, ordered by opcode then service action (RSOC reports in order). */
/* clang-format off */
static const struct fl_opcode_desc table[] = {
	{0x00, 0, false, 6, FL_CLASS_TUR, OPF_MEDIA | OPF_PR_READ_OK, "TEST UNIT READY",
	 spc_test_unit_ready, NULL, {0x00, 0, 0, 0, 0, C6}},
	{0x03, 0, false, 6, FL_CLASS_OTHER, EXEMPT | OPF_DATA_IN,
	 "REQUEST SENSE", spc_request_sense, NULL, {0x03, 0x01, 0, 0, 0xff, C6}},
	{0x08, 0, false, 6, FL_CLASS_READ, RD, "READ(6)", sbc_read, dec_rw6,
	 {0x08, 0x1f, 0xff, 0xff, 0xff, C6}},
	{0x0a, 0, false, 6, FL_CLASS_WRITE, WR, "WRITE(6)", sbc_write, dec_rw6,
	 {0x0a, 0x1f, 0xff, 0xff, 0xff, C6}},
	{0x12, 0, false, 6, FL_CLASS_INQUIRY, EXEMPT | OPF_DATA_IN,
	 "INQUIRY", spc_inquiry, NULL, {0x12, 0x01, 0xff, 0xff, 0xff, C6}},
	{0x15, 0, false, 6, FL_CLASS_OTHER, OPF_CONFLICT | OPF_DATA_OUT, "MODE SELECT(6)",
	 spc_mode_select, NULL, {0x15, 0x11, 0, 0, 0xff, C6}},
	{0x16, 0, false, 6, FL_CLASS_OTHER, OPF_CONFLICT, "RESERVE(6)", pr_reserve, NULL,
	 {0x16, 0, 0, 0, 0, C6}},
	{0x17, 0, false, 6, FL_CLASS_OTHER, OPF_CONFLICT, "RELEASE(6)", pr_release, NULL,
	 {0x17, 0, 0, 0, 0, C6}},
	{0x1a, 0, false, 6, FL_CLASS_OTHER, OPF_CONFLICT | OPF_DATA_IN | OPF_PR_READ_OK,
	 "MODE SENSE(6)", spc_mode_sense, NULL, {0x1a, 0x08, 0xff, 0xff, 0xff, C6}},
	{0x1b, 0, false, 6, FL_CLASS_OTHER, OPF_CONFLICT, "START STOP UNIT", sbc_start_stop,
	 NULL, {0x1b, 0x01, 0, 0x0f, 0xf7, C6}},
	{0x1e, 0, false, 6, FL_CLASS_OTHER, OPF_CONFLICT, "PREVENT ALLOW MEDIUM REMOVAL",
	 spc_prevent_allow, NULL, {0x1e, 0, 0, 0, 0x03, C6}},
	{0x25, 0, false, 10, FL_CLASS_OTHER, OPF_MEDIA | OPF_CONFLICT | OPF_PR_READ_OK |
	 OPF_DATA_IN, "READ CAPACITY(10)", sbc_read_capacity10, NULL,
	 {0x25, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, C6}},
	{0x28, 0, false, 10, FL_CLASS_READ, RD, "READ(10)", sbc_read, dec_10,
	 {0x28, 0xfa, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, C6}},
	{0x2a, 0, false, 10, FL_CLASS_WRITE, WR, "WRITE(10)", sbc_write, dec_10,
	 {0x2a, 0xfa, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, C6}},
	{0x2e, 0, false, 10, FL_CLASS_WRITE, WR, "WRITE AND VERIFY(10)", sbc_write_verify,
	 dec_10, {0x2e, 0xf2, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, C6}},
	{0x2f, 0, false, 10, FL_CLASS_READ, RW_MEDIA | OPF_PR_READ_OK | OPF_DATA_OUT,
	 "VERIFY(10)", sbc_verify, dec_10,
	 {0x2f, 0xf6, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, C6}},
	{0x34, 0, false, 10, FL_CLASS_READ, RW_MEDIA | OPF_PR_READ_OK | OPF_ZERO_TO_END,
	 "PRE-FETCH(10)", sbc_prefetch, dec_10,
	 {0x34, 0x02, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, C6}},
	{0x35, 0, false, 10, FL_CLASS_FLUSH, RW_MEDIA | OPF_ZERO_TO_END,
	 "SYNCHRONIZE CACHE(10)", sbc_sync_cache, dec_10,
	 {0x35, 0x02, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, C6}},
	{0x37, 0, false, 10, FL_CLASS_OTHER, OPF_MEDIA | OPF_CONFLICT | OPF_PR_READ_OK |
	 OPF_DATA_IN, "READ DEFECT DATA(10)", sbc_read_defect_data, NULL,
	 {0x37, 0, 0x1f, 0, 0, 0, 0, 0xff, 0xff, C6}},
	{0x41, 0, false, 10, FL_CLASS_WRITE, WR, "WRITE SAME(10)", sbc_write_same, dec_10,
	 {0x41, 0xe8, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, C6}},
	{0x42, 0, false, 10, FL_CLASS_UNMAP, WR, "UNMAP", sbc_unmap, NULL,
	 {0x42, 0x00, 0, 0, 0, 0, 0x1f, 0xff, 0xff, C6}},
	{0x55, 0, false, 10, FL_CLASS_OTHER, OPF_CONFLICT | OPF_DATA_OUT, "MODE SELECT(10)",
	 spc_mode_select, NULL, {0x55, 0x11, 0, 0, 0, 0, 0, 0xff, 0xff, C6}},
	{0x56, 0, false, 10, FL_CLASS_OTHER, OPF_CONFLICT, "RESERVE(10)", pr_reserve, NULL,
	 {0x56, 0, 0, 0, 0, 0, 0, 0, 0, C6}},
	{0x57, 0, false, 10, FL_CLASS_OTHER, OPF_CONFLICT, "RELEASE(10)", pr_release, NULL,
	 {0x57, 0, 0, 0, 0, 0, 0, 0, 0, C6}},
	{0x5a, 0, false, 10, FL_CLASS_OTHER, OPF_CONFLICT | OPF_DATA_IN | OPF_PR_READ_OK,
	 "MODE SENSE(10)", spc_mode_sense, NULL,
	 {0x5a, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, C6}},
	{0x5e, 0x00, true, 10, FL_CLASS_OTHER, OPF_DATA_IN | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE IN(READ KEYS)", pr_in, NULL,
	 {0x5e, 0x00, 0, 0, 0, 0, 0, 0xff, 0xff, C6}},
	{0x5e, 0x01, true, 10, FL_CLASS_OTHER, OPF_DATA_IN | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE IN(READ RESERVATION)", pr_in, NULL,
	 {0x5e, 0x01, 0, 0, 0, 0, 0, 0xff, 0xff, C6}},
	{0x5e, 0x02, true, 10, FL_CLASS_OTHER, OPF_DATA_IN | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE IN(REPORT CAPABILITIES)", pr_in, NULL,
	 {0x5e, 0x02, 0, 0, 0, 0, 0, 0xff, 0xff, C6}},
	{0x5e, 0x03, true, 10, FL_CLASS_OTHER, OPF_DATA_IN | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE IN(READ FULL STATUS)", pr_in, NULL,
	 {0x5e, 0x03, 0, 0, 0, 0, 0, 0xff, 0xff, C6}},
	{0x5f, 0x00, true, 10, FL_CLASS_OTHER, OPF_DATA_OUT | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE OUT(REGISTER)", pr_out, NULL,
	 {0x5f, 0x00, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, C6}},
	{0x5f, 0x01, true, 10, FL_CLASS_OTHER, OPF_DATA_OUT | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE OUT(RESERVE)", pr_out, NULL,
	 {0x5f, 0x01, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, C6}},
	{0x5f, 0x02, true, 10, FL_CLASS_OTHER, OPF_DATA_OUT | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE OUT(RELEASE)", pr_out, NULL,
	 {0x5f, 0x02, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, C6}},
	{0x5f, 0x03, true, 10, FL_CLASS_OTHER, OPF_DATA_OUT | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE OUT(CLEAR)", pr_out, NULL,
	 {0x5f, 0x03, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, C6}},
	{0x5f, 0x04, true, 10, FL_CLASS_OTHER, OPF_DATA_OUT | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE OUT(PREEMPT)", pr_out, NULL,
	 {0x5f, 0x04, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, C6}},
	{0x5f, 0x06, true, 10, FL_CLASS_OTHER, OPF_DATA_OUT | OPF_PR_READ_OK,
	 "PERSISTENT RESERVE OUT(REGISTER AND IGNORE EXISTING KEY)", pr_out, NULL,
	 {0x5f, 0x06, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, C6}},
	{0x88, 0, false, 16, FL_CLASS_READ, RD, "READ(16)", sbc_read, dec_16,
	 {0x88, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0x1f, C6}},
	{0x89, 0, false, 16, FL_CLASS_WRITE, WR, "COMPARE AND WRITE",
	 sbc_compare_and_write, dec_caw,
	 {0x89, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0xff, 0x1f, C6}},
	{0x8a, 0, false, 16, FL_CLASS_WRITE, WR, "WRITE(16)", sbc_write, dec_16,
	 {0x8a, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0x1f, C6}},
	{0x8b, 0, false, 16, FL_CLASS_WRITE, WR, "ORWRITE(16)", sbc_orwrite, dec_16,
	 {0x8b, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0x1f, C6}},
	{0x8e, 0, false, 16, FL_CLASS_WRITE, WR, "WRITE AND VERIFY(16)", sbc_write_verify,
	 dec_16, {0x8e, 0xf2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		  0xff, 0x1f, C6}},
	{0x8f, 0, false, 16, FL_CLASS_READ, RW_MEDIA | OPF_PR_READ_OK | OPF_DATA_OUT,
	 "VERIFY(16)", sbc_verify, dec_16,
	 {0x8f, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0x1f, C6}},
	{0x90, 0, false, 16, FL_CLASS_READ, RW_MEDIA | OPF_PR_READ_OK | OPF_ZERO_TO_END,
	 "PRE-FETCH(16)", sbc_prefetch, dec_16,
	 {0x90, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0x1f, C6}},
	{0x91, 0, false, 16, FL_CLASS_FLUSH, RW_MEDIA | OPF_ZERO_TO_END,
	 "SYNCHRONIZE CACHE(16)", sbc_sync_cache, dec_16,
	 {0x91, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0x1f, C6}},
	{0x93, 0, false, 16, FL_CLASS_WRITE, WR, "WRITE SAME(16)", sbc_write_same, dec_16,
	 {0x93, 0xe9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0x1f, C6}},
	{0x9c, 0, false, 16, FL_CLASS_WRITE, WR, "WRITE ATOMIC(16)", sbc_write_atomic,
	 dec_atomic16, {0x9c, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0xff, 0xff, 0x1f, C6}},
	{0x9e, 0x10, true, 16, FL_CLASS_OTHER, OPF_MEDIA | OPF_CONFLICT | OPF_PR_READ_OK |
	 OPF_DATA_IN, "READ CAPACITY(16)", sbc_read_capacity16, NULL,
	 {0x9e, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	  0x01, C6}},
	{0x9e, 0x12, true, 16, FL_CLASS_OTHER, RW_MEDIA | OPF_PR_READ_OK | OPF_DATA_IN |
	 OPF_LBA_EXISTS, "GET LBA STATUS", sbc_get_lba_status, dec_gls,
	 {0x9e, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,
	  C6}},
	{0xa0, 0, false, 12, FL_CLASS_OTHER, EXEMPT | OPF_DATA_IN,
	 "REPORT LUNS", spc_report_luns, NULL,
	 {0xa0, 0, 0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, C6}},
	{0xa3, 0x0a, true, 12, FL_CLASS_OTHER, OPF_DATA_IN | OPF_PR_READ_OK | OPF_ALUA_ANY,
	 "REPORT TARGET PORT GROUPS", spc_report_target_port_groups, NULL,
	 {0xa3, 0xea, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, C6}},
	{0xa3, 0x0c, true, 12, FL_CLASS_OTHER, OPF_DATA_IN | OPF_PR_READ_OK,
	 "REPORT SUPPORTED OPERATION CODES", spc_report_supported_opcodes, NULL,
	 {0xa3, 0x0c, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, C6}},
	/* SPC-4 r37 5.15.2.4: served in every state, like REPORT TARGET PORT GROUPS */
	{0xa4, 0x0a, true, 12, FL_CLASS_OTHER, OPF_DATA_OUT | OPF_CONFLICT | OPF_ALUA_ANY,
	 "SET TARGET PORT GROUPS", spc_set_target_port_groups, NULL,
	 {0xa4, 0x0a, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, C6}},
	{0xa8, 0, false, 12, FL_CLASS_READ, RD, "READ(12)", sbc_read, dec_12,
	 {0xa8, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, C6}},
	{0xaa, 0, false, 12, FL_CLASS_WRITE, WR, "WRITE(12)", sbc_write, dec_12,
	 {0xaa, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, C6}},
	{0xae, 0, false, 12, FL_CLASS_WRITE, WR, "WRITE AND VERIFY(12)", sbc_write_verify,
	 dec_12, {0xae, 0xf2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, C6}},
	{0xaf, 0, false, 12, FL_CLASS_READ, RW_MEDIA | OPF_PR_READ_OK | OPF_DATA_OUT,
	 "VERIFY(12)", sbc_verify, dec_12,
	 {0xaf, 0xf6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, C6}},
	{0xb7, 0, false, 12, FL_CLASS_OTHER, OPF_MEDIA | OPF_CONFLICT | OPF_PR_READ_OK |
	 OPF_DATA_IN, "READ DEFECT DATA(12)", sbc_read_defect_data, NULL,
	 {0xb7, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, C6}},
};
/* clang-format on */

#define TABLE_ROWS (sizeof(table) / sizeof(table[0]))

/* True when the opcode's service action lives in byte 1, bits 4..0. */
bool cdb_opcode_has_sa(uint8_t opcode)
{
	for (size_t i = 0; i < TABLE_ROWS; i++)
		if (table[i].opcode == opcode)
			return table[i].has_sa;
	return false;
}

/* Finds the row for opcode + service action, ignoring the CDB length. */
static const struct fl_opcode_desc *lookup(uint8_t opcode, const uint8_t *cdb, size_t len)
{
	for (size_t i = 0; i < TABLE_ROWS; i++) {
		const struct fl_opcode_desc *d = &table[i];

		if (d->opcode != opcode)
			continue;
		if (!d->has_sa)
			return d;
		if (len >= 2 && (cdb[1] & 0x1f) == d->service_action)
			return d;
	}
	return NULL;
}

/* Looks up the descriptor for a CDB; NULL when unsupported. */
const struct fl_opcode_desc *cdb_lookup(const uint8_t *cdb, size_t len)
{
	if (!cdb || len == 0)
		return NULL;
	return lookup(cdb[0], cdb, len);
}

/* Iterates the table (for RSOC). */
const struct fl_opcode_desc *cdb_table_row(size_t i)
{
	return i < TABLE_ROWS ? &table[i] : NULL;
}

/*
 * Decodes done so far (fl_cdb_decode_count). A relaxed atomic rather than a
 * thread-local: the tcmu handler is a dlopen'ed module and must not need the
 * loader's TLS entry point.
 */
static atomic_uint_fast64_t decodes;

/* How many CDBs have been decoded. */
uint64_t fl_cdb_decode_count(void)
{
	return atomic_load_explicit(&decodes, memory_order_relaxed);
}

/* Fills *info from a CDB; a CDB too short for its opcode decodes as unknown. */
int fl_cdb_decode(const uint8_t *cdb, size_t cdb_len, struct fl_cdb_info *info)
{
	const struct fl_opcode_desc *d;

	atomic_fetch_add_explicit(&decodes, 1, memory_order_relaxed);
	memset(info, 0, sizeof(*info));
	if (!cdb || cdb_len == 0 || cdb_len > FL_CDB_MAX)
		return -EINVAL;
	info->opcode = cdb[0];
	d = cdb_lookup(cdb, cdb_len);
	if (!d || cdb_len < d->cdb_len)
		return 0;
	info->known = true;
	info->service_action = d->has_sa ? d->service_action : 0;
	info->cls = d->cls;
	info->data_in = d->flags & OPF_DATA_IN;
	info->data_out = d->flags & OPF_DATA_OUT;
	if (d->decode) {
		info->has_lba = true;
		d->decode(cdb, info);
	}
	/* WRITE SAME with the UNMAP bit deallocates: the unmap class (SBC-3 r36 5.42) */
	if ((d->opcode == 0x41 || d->opcode == 0x93) && (cdb[1] & 0x08))
		info->cls = FL_CLASS_UNMAP;
	/* VERIFY with BYTCHK 0 transfers nothing */
	if ((d->opcode == 0x2f || d->opcode == 0x8f || d->opcode == 0xaf) && !(cdb[1] & 0x06))
		info->data_out = false;
	return 0;
}

/* Whether opcode has service actions (the table's, or SPC-4's in byte 1 bits 4:0). */
bool fl_opcode_has_sa(uint8_t opcode)
{
	switch (opcode) {
	case 0x5e: /* PERSISTENT RESERVE IN */
	case 0x5f: /* PERSISTENT RESERVE OUT */
	case 0x83: /* EXTENDED COPY / third-party copy out */
	case 0x84: /* RECEIVE COPY RESULTS / third-party copy in */
	case 0x9e: /* SERVICE ACTION IN (16) */
	case 0x9f: /* SERVICE ACTION OUT (16) */
	case 0xa3: /* MAINTENANCE IN */
	case 0xa4: /* MAINTENANCE OUT */
		return true;
	default:
		break;
	}
	for (size_t i = 0; i < TABLE_ROWS; i++)
		if (table[i].opcode == opcode && table[i].has_sa)
			return true;
	return false;
}

/* The CDB's service action field (byte 1 bits 4:0), or -1 (fl_target.h). */
int fl_cdb_service_action(const uint8_t *cdb, size_t len)
{
	if (!cdb || len < 2 || !fl_opcode_has_sa(cdb[0]))
		return -1;
	return cdb[1] & 0x1f;
}

/* Human-readable opcode name, or NULL when the opcode is not in the table. */
const char *fl_opcode_name(uint8_t opcode, uint16_t service_action)
{
	for (size_t i = 0; i < TABLE_ROWS; i++) {
		const struct fl_opcode_desc *d = &table[i];

		if (d->opcode == opcode && (!d->has_sa || d->service_action == service_action))
			return d->name;
	}
	return NULL;
}

/* The command's decoded CDB, decoded once per submission (fl_target.h). */
const struct fl_cdb_info *fl_cmd_decode(struct fl_cmd *cmd)
{
	if (!cmd->decoded) {
		if (fl_cdb_decode(cmd->cdb, cmd->cdb_len, &cmd->info) && cmd->cdb_len)
			cmd->info.opcode = cmd->cdb[0];
		cmd->decoded = true;
	}
	return &cmd->info;
}
