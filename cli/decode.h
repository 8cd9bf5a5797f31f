/* SPDX-License-Identifier: MIT */
/*
 * decode.h - the data-in decoder of `faultlun send`: what a command's
 * data-in says, field by field, as text lines or as one JSON member. It
 * knows READ CAPACITY(10) and (16) (SBC-3 r36 5.15, 5.16), REPORT LUNS
 * (SPC-4 r37 6.33), standard INQUIRY data and the VPD pages 00h, 80h, 83h,
 * 86h, B0h, B1h, B2h (SPC-4 6.6, 7.8; SBC-3 6.6), vendor VPD pages C0h-FFh
 * (as hex: no public layout), REPORT TARGET PORT GROUPS (SPC-4 6.36), MODE
 * SENSE(6) and (10) (SPC-4 7.5) and REQUEST SENSE (SPC-4 6.39, 4.5).
 *
 * Every decoder reads only the n bytes given (what was received), never
 * past them because of a length inside the data: a field that did not
 * arrive is left out, and a list cut short says so ("truncated": true).
 */
#ifndef FL_DECODE_H
#define FL_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* True when the data-in of cdb has a decoder. */
bool fl_decode_known(const uint8_t *cdb, int cdb_len);

/*
 * Writes the decoded data-in d[0..n) of cdb to out: with json false as
 * lines indented by two spaces, with json true as `, "decoded": {...}`
 * (nothing when cdb has no decoder).
 */
void fl_decode(FILE *out, bool json, const uint8_t *cdb, int cdb_len, const uint8_t *d, size_t n);

#endif
