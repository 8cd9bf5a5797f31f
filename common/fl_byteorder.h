/* SPDX-License-Identifier: MIT */
/*
 * fl_byteorder.h - big-endian fields of CDBs, parameter data and iSCSI PDUs
 * (SAM-5 4.3.1 and RFC 7143 11.1: multi-byte fields are big-endian).
 *
 * Reads and writes byte by byte, so any alignment is fine; no host byte
 * order is assumed.
 */
#ifndef FL_BYTEORDER_H
#define FL_BYTEORDER_H

#include <stdint.h>

/* Reads a 16-bit big-endian field. */
static inline uint16_t fl_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Reads a 24-bit big-endian field (iSCSI DataSegmentLength). */
static inline uint32_t fl_get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* Reads a 32-bit big-endian field. */
static inline uint32_t fl_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads a 64-bit big-endian field. */
static inline uint64_t fl_get_be64(const uint8_t *p)
{
	return (uint64_t)fl_get_be32(p) << 32 | fl_get_be32(p + 4);
}

/* Writes a 16-bit big-endian field. */
static inline void fl_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Writes a 24-bit big-endian field (the top byte of v is ignored). */
static inline void fl_put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

/* Writes a 32-bit big-endian field. */
static inline void fl_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Writes a 64-bit big-endian field. */
static inline void fl_put_be64(uint8_t *p, uint64_t v)
{
	fl_put_be32(p, (uint32_t)(v >> 32));
	fl_put_be32(p + 4, (uint32_t)v);
}

#endif
