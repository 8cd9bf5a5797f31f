/* SPDX-License-Identifier: MIT */
/*
 * spc_cases.h - table-driven cases for the SPC-4 unit tests (test_spc.c,
 * test_mode.c, test_pr.c, test_ua.c): a row carries the CDB, the exact
 * parameter data to send, the expected status / sense key / ASC / ASCQ and,
 * for 24/00 and 26/00, the expected sense-key-specific field pointer
 * (SPC-4 r37 4.5.2.4.2). Static helpers: each test program includes it once.
 */
#ifndef FL_SPC_CASES_H
#define FL_SPC_CASES_H

#include "tharness.h"

#include <string.h>

#define CC FL_STATUS_CHECK_CONDITION
#define GOOD FL_STATUS_GOOD
#define RC FL_STATUS_RESERVATION_CONFLICT
#define IR FL_KEY_ILLEGAL_REQUEST
#define UA FL_KEY_UNIT_ATTENTION

/* One row: CDB, data-out, data-in room, expected outcome, field pointer. */
struct sc_case {
	const char *what;
	uint8_t cdb[16];
	uint8_t cdb_len;
	uint8_t out[64];
	uint32_t out_len;
	uint32_t in_cap;
	uint8_t status, key, asc, ascq;
	bool sks;    /* check the field pointer */
	bool sks_cd; /* 1: CDB, 0: parameter data */
	uint16_t field;
	int bit; /* -1: no bit pointer */
};

/* Runs one command from a nexus and returns the completed command. */
static inline struct fl_cmd sc_run1(struct fl_lun *lun, uint64_t nexus, const uint8_t *cdb,
				    size_t len, const void *out, uint32_t out_len, void *in,
				    uint32_t in_cap)
{
	struct fl_cmd res;

	memset(&res, 0, sizeof(res));
	th_run(lun, nexus, cdb, len, out, out_len, in, in_cap, &res);
	return res;
}

/* Checks the field pointer of a completed command against a row. */
static inline void sc_check_sks(const struct fl_cmd *res, const struct sc_case *c, const char *file,
				unsigned line)
{
	struct th_sense s;

	th_parse_sense(res->sense, res->sense_len, &s);
	th_check_at(
	    s.sks_valid && s.sks_cd == c->sks_cd && s.sks_field == c->field && s.sks_bit == c->bit,
	    file, line,
	    "%s: field pointer valid=%d C/D=%d byte %u bit %d, want C/D=%d byte %u bit %d", c->what,
	    s.sks_valid, s.sks_cd, s.sks_field, s.sks_bit, c->sks_cd, c->field, c->bit);
}

/* Runs every row from one nexus, checking status, sense and field pointer. */
static inline void sc_run_cases_at(struct fl_lun *lun, uint64_t nexus, const struct sc_case *cases,
				   size_t n, const char *file, unsigned line)
{
	uint8_t in[1024];

	for (size_t i = 0; i < n; i++) {
		const struct sc_case *c = &cases[i];
		uint32_t cap = c->in_cap < sizeof(in) ? c->in_cap : sizeof(in);
		struct fl_cmd res =
		    sc_run1(lun, nexus, c->cdb, c->cdb_len, c->out_len ? c->out : NULL, c->out_len,
			    cap ? in : NULL, cap);

		th_expect_at(&res, c->status, c->key, c->asc, c->ascq, c->what, file, line);
		if (c->sks && res.status == CC)
			sc_check_sks(&res, c, file, line);
	}
}
#define SC_RUN_CASES(lun, nexus, cases)                                                            \
	sc_run_cases_at(lun, nexus, cases, sizeof(cases) / sizeof(cases[0]), __FILE__, __LINE__)

/* Field pointer of a 24/00 (CDB) or 26/00 (parameter list) row. */
#define SKS_CDB(byte, b) .sks = true, .sks_cd = true, .field = (byte), .bit = (b)
#define SKS_PARAM(byte, b) .sks = true, .sks_cd = false, .field = (byte), .bit = (b)

#endif
