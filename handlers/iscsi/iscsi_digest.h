/* SPDX-License-Identifier: MIT */
/*
 * iscsi_digest.h - CRC32C, the iSCSI header and data digest (RFC 7143 13.1,
 * Appendix B), implemented in crc32c.c.
 *
 * Pure functions of their input, shared by the embedded target and by the
 * tools that read iSCSI traffic (`faultlun import`). Call iscsi_crc32c_init()
 * once before the others; any thread may call them afterwards.
 */
#ifndef ISCSI_DIGEST_H
#define ISCSI_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* Builds the tables (once; later calls return at once). */
void iscsi_crc32c_init(void);
/* Continues a CRC32C over len bytes; start with crc = 0xffffffff, finish with ~. */
uint32_t iscsi_crc32c_update(uint32_t crc, const void *buf, size_t len);
/* The CRC32C of len bytes. */
uint32_t iscsi_crc32c(const void *buf, size_t len);
/* Stores a digest as it goes on the wire (least significant byte first). */
void iscsi_put_digest(uint8_t *p, uint32_t crc);
/* Reads a digest as it comes off the wire. */
uint32_t iscsi_get_digest(const uint8_t *p);

#endif
