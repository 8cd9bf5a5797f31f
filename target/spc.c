/* SPDX-License-Identifier: MIT */
/*
 * spc.c - SPC-4 commands of the logical unit (placeholder).
 *
 * TEST UNIT READY succeeds (lun.c has already refused it when stopped or in
 * a non-active ALUA state) and REPORT LUNS is the target's list; the other
 * SPC-4 commands are not implemented yet and answer INVALID COMMAND
 * OPERATION CODE.
 */
#include "target_internal.h"

/* TEST UNIT READY (SPC-4 r37 6.47). */
enum sense_reason spc_test_unit_ready(struct exec_ctx *x)
{
	(void)x;
	return SENSE_OK;
}

/* INQUIRY: not implemented yet. */
enum sense_reason spc_inquiry(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* MODE SENSE (6, 10): not implemented yet. */
enum sense_reason spc_mode_sense(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* MODE SELECT (6, 10): not implemented yet. */
enum sense_reason spc_mode_select(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* REQUEST SENSE: not implemented yet. */
enum sense_reason spc_request_sense(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* REPORT LUNS (SPC-4 r37 6.33): the target's list. */
enum sense_reason spc_report_luns(struct exec_ctx *x)
{
	return target_report_luns(x);
}

/* REPORT SUPPORTED OPERATION CODES: not implemented yet. */
enum sense_reason spc_report_supported_opcodes(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* REPORT TARGET PORT GROUPS: not implemented yet. */
enum sense_reason spc_report_target_port_groups(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* PREVENT ALLOW MEDIUM REMOVAL: not implemented yet. */
enum sense_reason spc_prevent_allow(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}
