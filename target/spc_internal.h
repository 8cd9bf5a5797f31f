/* SPDX-License-Identifier: MIT */
/*
 * spc_internal.h - helpers shared by the SPC-4 files of the core (spc.c,
 * vpd.c, mode.c, pr.c): big-endian field access and the entry points one of
 * them calls in another. Private to target/.
 */
#ifndef FL_SPC_INTERNAL_H
#define FL_SPC_INTERNAL_H

#include "target_internal.h"

/* Stores a 16-bit big-endian value. */
static inline void spc_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Stores a 32-bit big-endian value. */
static inline void spc_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Stores a 64-bit big-endian value. */
static inline void spc_put64(uint8_t *p, uint64_t v)
{
	spc_put32(p, (uint32_t)(v >> 32));
	spc_put32(p + 4, (uint32_t)v);
}

/* Reads a 16-bit big-endian value. */
static inline uint32_t spc_get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* Reads a 32-bit big-endian value. */
static inline uint32_t spc_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads a 64-bit big-endian value. */
static inline uint64_t spc_get64(const uint8_t *p)
{
	return (uint64_t)spc_get32(p) << 32 | spc_get32(p + 4);
}

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
