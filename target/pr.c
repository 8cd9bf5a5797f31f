/* SPDX-License-Identifier: MIT */
/*
 * pr.c - reservations: RESERVE / RELEASE (6, 10) and PERSISTENT RESERVE
 * IN / OUT (placeholder).
 *
 * No reservation can be taken yet, so no command ever conflicts; the
 * commands answer INVALID COMMAND OPERATION CODE until implemented.
 */
#include "target_internal.h"

/* RESERVE (6, 10): not implemented yet. */
enum sense_reason pr_reserve(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* RELEASE (6, 10): not implemented yet. */
enum sense_reason pr_release(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* PERSISTENT RESERVE IN: not implemented yet. */
enum sense_reason pr_in(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* PERSISTENT RESERVE OUT: not implemented yet. */
enum sense_reason pr_out(struct exec_ctx *x)
{
	(void)x;
	return SENSE_INVALID_OPCODE;
}

/* Nothing is ever reserved yet: no conflict. */
enum sense_reason pr_check_conflict(struct exec_ctx *x)
{
	(void)x;
	return SENSE_OK;
}
