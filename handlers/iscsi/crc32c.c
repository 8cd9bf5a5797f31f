/* SPDX-License-Identifier: MIT */
/*
 * crc32c.c - CRC32C (Castagnoli) for iSCSI header and data digests.
 *
 * RFC 7143 13.1 names CRC32C as the digest; RFC 7143 Appendix B gives the
 * generator polynomial 0x1EDC6F41 (0x82F63B78 bit-reversed) and test vectors.
 * The digest goes on the wire least significant byte first. Slice-by-8 tables
 * built once; safe to call from any thread after iscsi_crc32c_init().
 */
#include "iscsi_internal.h"

#include <pthread.h>

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Builds the slice-by-8 tables for the reflected Castagnoli polynomial. */
static void crc_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] =
			    (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

/* Makes sure the tables exist. */
void iscsi_crc32c_init(void)
{
	pthread_once(&crc_once, crc_build);
}

/* Continues a CRC32C over len bytes; start with crc = 0xffffffff, finish with ~. */
uint32_t iscsi_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len && ((uintptr_t)p & 7)) {
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			      (uint32_t)p[7] << 24;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* CRC32C of one buffer. */
uint32_t iscsi_crc32c(const void *buf, size_t len)
{
	iscsi_crc32c_init();
	return ~iscsi_crc32c_update(0xffffffffu, buf, len);
}

/* Stores a digest in wire order (RFC 7143 Appendix B: LSB first). */
void iscsi_put_digest(uint8_t *p, uint32_t crc)
{
	p[0] = crc;
	p[1] = crc >> 8;
	p[2] = crc >> 16;
	p[3] = crc >> 24;
}

/* Reads a digest in wire order. */
uint32_t iscsi_get_digest(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
