/* SPDX-License-Identifier: MIT */
/*
 * spc_internal.h - helpers shared by the SPC-4 files of the core (spc.c,
 * vpd.c, mode.c, pr.c): the entry points one of them calls in another
 * (big-endian fields: fl_byteorder.h). Private to target/.
 */
#ifndef FL_SPC_INTERNAL_H
#define FL_SPC_INTERNAL_H

#include "fl_byteorder.h"
#include "target_internal.h"

/* Copies an ASCII field left-aligned and space-padded (SPC-4 r37 4.4.1). */
static inline void spc_put_ascii(uint8_t *dst, const char *src, size_t width)
{
	size_t i = 0;

	for (; src && src[i] && i < width; i++)
		dst[i] = (uint8_t)src[i];
	for (; i < width; i++)
		dst[i] = ' ';
}

/* Bit number of the highest bit set in v (the bit pointer of a field), 0 for 0. */
static inline int8_t spc_top_bit(uint8_t v)
{
	int8_t b = 7;

	while (b > 0 && !(v & (1u << b)))
		b--;
	return b;
}

/* Relative target port the command came through (1 when unset). */
static inline uint16_t spc_rel_port(const struct exec_ctx *x)
{
	uint16_t id = x->cmd->nexus.rel_port_id;

	return id ? id : 1;
}

/* INQUIRY with EVPD=1: the vital product data pages (vpd.c). */
enum sense_reason vpd_inquiry(struct exec_ctx *x, uint8_t page, uint32_t alloc);

#endif
