/* SPDX-License-Identifier: MIT */
/*
 * tharness.h - shared helpers of the logical-unit core's unit tests.
 *
 * Builds LUNs, runs one CDB synchronously (submit, then wait for done(),
 * which may come from a store worker thread), parses the sense data of
 * either format and checks status / sense / data with CUnit assertions that
 * name the failing case. Table-driven tests use struct th_case.
 */
#ifndef FL_THARNESS_H
#define FL_THARNESS_H

#include "fl_byteorder.h"
#include "fl_target.h"

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Default test LUN: 16 MiB of 512-byte blocks in memory, write cache on. */
#define TH_BLOCKS 32768u
#define TH_BS 512u

/* Fills cfg with the default test LUN. */
void th_config(struct fl_lun_config *cfg);
/* Fills cfg with the default test LUN's 16 MiB in blocks of bs (0: TH_BS), kept in file path. */
void th_file_config(struct fl_lun_config *cfg, const char *path, uint32_t bs);
/*
 * Gives cfg two target ports in two port groups, as a dual-controller array:
 * port 1 in group 1 (in state1, the LUN's own group), port 2 in group 2.
 */
void th_two_ports(struct fl_lun_config *cfg, enum fl_alua_state state1,
		  enum fl_alua_state state2);
/* Creates a LUN from cfg (NULL: th_config); a failure fails the test. */
struct fl_lun *th_lun(const struct fl_lun_config *cfg);

/*
 * Runs one command on `lun` from nexus `nexus` (initiator "iqn.test:<id>",
 * relative port 1) and waits up to 10 s for done(). `res` receives the
 * completed command (status, sense, data_in_len, residual). Returns 0, or
 * -1 when done() never came or came more than once (the test fails).
 */
int th_run(struct fl_lun *lun, uint64_t nexus, const uint8_t *cdb, size_t cdb_len, const void *out,
	   uint32_t out_len, void *in, uint32_t in_cap, struct fl_cmd *res);
/*
 * Runs one command on a LUN with the memory store (it completes inline) from
 * nexus `nexus` through relative target port `port`; asserts that done() came
 * once and returns the completed command.
 */
struct fl_cmd th_via(struct fl_lun *lun, uint64_t nexus, uint16_t port, const uint8_t *cdb,
		     size_t len, const void *out, uint32_t out_len, uint8_t *in, uint32_t cap);
/* The same through a target and LUN number. */
int th_run_target(struct fl_target *tgt, uint16_t lun_id, uint64_t nexus, const uint8_t *cdb,
		  size_t cdb_len, const void *out, uint32_t out_len, void *in, uint32_t in_cap,
		  struct fl_cmd *res);
/* Thread id of the last done() call seen by th_run (async checks). */
unsigned long th_last_done_thread(void);

/* Sense data parsed from either format (SPC-4 4.5). */
struct th_sense {
	bool valid;	 /* sense_len > 0 and a known response code */
	bool descriptor; /* 72h/73h */
	uint8_t key, asc, ascq;
	bool info_valid;
	uint64_t info;
	bool sks_valid; /* sense-key-specific field pointer */
	bool sks_cd;	/* 1 = CDB, 0 = parameter data */
	uint16_t sks_field;
	int sks_bit; /* -1 when no bit pointer */
};
void th_parse_sense(const uint8_t *sense, size_t len, struct th_sense *s);

/* Checks status and (for CHECK CONDITION) key/asc/ascq; `what` names the case. */
void th_expect_at(const struct fl_cmd *res, uint8_t status, uint8_t key, uint8_t asc, uint8_t ascq,
		  const char *what, const char *file, unsigned line);
#define TH_EXPECT(res, status, key, asc, ascq, what)                                               \
	th_expect_at(res, status, key, asc, ascq, what, __FILE__, __LINE__)
#define TH_EXPECT_GOOD(res, what)                                                                  \
	th_expect_at(res, FL_STATUS_GOOD, 0, 0, 0, what, __FILE__, __LINE__)
/* TH_EXPECT / TH_EXPECT_GOOD of the command `cmd` evaluates to (a struct fl_cmd). */
#define TH_EXPECT_CMD(cmd, status, key, asc, ascq, what)                                           \
	do {                                                                                       \
		const struct fl_cmd th_res_ = (cmd);                                               \
		TH_EXPECT(&th_res_, status, key, asc, ascq, what);                                 \
	} while (0)
#define TH_EXPECT_CMD_GOOD(cmd, what) TH_EXPECT_CMD(cmd, FL_STATUS_GOOD, 0, 0, 0, what)
/* A formatted CUnit assertion. */
void th_check_at(bool ok, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define TH_CHECK(ok, ...) th_check_at((ok), __FILE__, __LINE__, __VA_ARGS__)

/* SYNCHRONIZE CACHE(10) of n blocks at lba through nexus; checks it ends GOOD. */
void th_sync_cache_at(struct fl_lun *lun, uint64_t nexus, uint32_t lba, uint16_t n,
		      const char *what, const char *file, unsigned line);
#define TH_SYNC_CACHE(lun, nexus, lba, n, what)                                                    \
	th_sync_cache_at(lun, nexus, lba, n, what, __FILE__, __LINE__)
/* th_lun of th_config with descriptor-format sense (d_sense true) or fixed. */
struct fl_lun *th_lun_sense(bool d_sense);
/* TUR through port (nexus as given) until no unit attention is left; returns the last
 * answer. */
struct fl_cmd th_settle(struct fl_lun *lun, uint64_t nexus, uint16_t port);
/* READ(10) of block 0 through port. */
struct fl_cmd th_read1(struct fl_lun *lun, uint64_t nexus, uint16_t port);
/* A LUN of a failover personality (emc, hp_sw): the personality's identity, ports 1 and 2
 * in groups 1 and 2, both active/optimized, no ALUA reported, group 1 the owner. */
struct fl_lun *th_personality_lun(const char *personality);
/* Checks that fl_lun_owner succeeds and names port `want`. */
void th_expect_owner_at(struct fl_lun *lun, uint16_t want, const char *file, unsigned line);
#define TH_EXPECT_OWNER(lun, want) th_expect_owner_at(lun, want, __FILE__, __LINE__)

/* Sends TEST UNIT READY until GOOD (consumes pending UAs); fails after 32. */
void th_clear_ua(struct fl_lun *lun, uint64_t nexus);

/* One row of a table-driven test. */
struct th_case {
	const char *what;
	uint8_t cdb[FL_CDB_MAX];
	uint8_t cdb_len;
	uint32_t out_len; /* data-out bytes (pattern 0xA5) */
	uint32_t in_cap;  /* data-in buffer size */
	uint8_t status, key, asc, ascq;
};
/* Runs every case on lun from nexus, checking each. */
void th_run_cases(struct fl_lun *lun, uint64_t nexus, const struct th_case *cases, size_t n);

/* CDB builders: opcode, byte 1, LBA, transfer length; control byte 0. */
size_t th_cdb6(uint8_t *cdb, uint8_t op, uint32_t lba, uint8_t len);
size_t th_cdb10(uint8_t *cdb, uint8_t op, uint8_t b1, uint32_t lba, uint16_t len);
size_t th_cdb12(uint8_t *cdb, uint8_t op, uint8_t b1, uint32_t lba, uint32_t len);
size_t th_cdb16(uint8_t *cdb, uint8_t op, uint8_t b1, uint64_t lba, uint32_t len);

/* Convenience: WRITE(16) / READ(16) of n blocks; return the status. */
uint8_t th_write(struct fl_lun *lun, uint64_t nexus, uint64_t lba, uint32_t n, const void *buf);
uint8_t th_read(struct fl_lun *lun, uint64_t nexus, uint64_t lba, uint32_t n, void *buf);

/* Fills buf with a pattern derived from seed (distinct per block). */
void th_pattern(void *buf, size_t len, uint32_t seed);

/* A fresh temporary file path (unlinked at exit of the test program). */
const char *th_tmpfile(void);

#endif
