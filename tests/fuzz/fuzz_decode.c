// SPDX-License-Identifier: MIT
/*
 * fuzz_decode.c - libFuzzer target for what `faultlun send` reads from a
 * target's data-in: fl_decode (cli/decode.c) for every command it knows
 * (READ CAPACITY 10/16, REPORT LUNS, standard INQUIRY and VPD pages, REPORT
 * TARGET PORT GROUPS, MODE SENSE 6/10, REQUEST SENSE), in text and in JSON,
 * and the sense text of what the data says.
 *
 * Input: byte 0 chooses the CDB length (bits 0-1: 6, 10, 12 or 16 bytes);
 * bytes 1-16 are the CDB; the rest is the data-in, as received. Oracle,
 * besides the sanitizers: the JSON form, wrapped in an object, must parse
 * (a decoder that writes broken JSON for some data breaks `send --json`).
 */
#include "decode.h"
#include "fl_check.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes d as the data-in of cdb into a string (caller frees). */
static char *decode_to_string(bool json, const uint8_t *cdb, int cdb_len, const uint8_t *d,
			      size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	if (json)
		fputs("{\"x\": 0", f);
	fl_decode(f, json, cdb, cdb_len, d, n);
	if (json)
		fputs("}", f);
	if (fclose(f))
		abort();
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int lens[] = {6, 10, 12, 16};
	uint8_t cdb[16] = {0};
	char text[160];
	char *s;

	if (size < 17)
		return 0;
	int cdb_len = lens[data[0] & 3];
	memcpy(cdb, data + 1, 16);
	const uint8_t *d = data + 17;
	size_t n = size - 17;

	free(decode_to_string(false, cdb, cdb_len, d, n));
	s = decode_to_string(true, cdb, cdb_len, d, n);
	json_error_t err;
	/* a 64-bit field may pass INT64_MAX: valid JSON, read here as a real */
	json_t *j = json_loads(s, JSON_DECODE_INT_AS_REAL, &err);
	if (!j) {
		fprintf(stderr, "fl_decode wrote JSON that does not parse (%s): %s\n", err.text, s);
		abort();
	}
	json_decref(j);
	free(s);
	/* the sense text of the fixed-format key / ASC / ASCQ positions */
	if (n >= 14)
		fl_sense_text(d[2] & 0xf, d[12], d[13], text, sizeof(text));
	return 0;
}
