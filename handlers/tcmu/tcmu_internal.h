/* SPDX-License-Identifier: MIT */
/*
 * tcmu_internal.h - private declarations shared by the files of handlers/tcmu/.
 *
 *   cfgstring.c  the device configuration string `faultlun/OPTIONS` (grammar in
 *                docs/tcmu.md): parse and validate, no side effects
 *   handler.c    struct tcmur_handler: check_config, open/close, command routing
 *                through the fault engine, completion, the per-device watchdog
 */
#ifndef FL_TCMU_INTERNAL_H
#define FL_TCMU_INTERNAL_H

#include "fl_target.h"

#include <stdbool.h>
#include <stdint.h>

/* configfs limits dev_config to 255 bytes; the same limit applies to the whole string. */
#define CFGSTR_MAX 255
/* The handler's subtype: the text before the first '/' of the cfgstring. */
#define CFGSTR_SUBTYPE "faultlun"

/* One parsed configuration string. Empty strings mean "not given". */
struct cfgstr {
	char scenario[CFGSTR_MAX + 1]; /* absolute path of the scenario file */
	bool store_set;
	enum fl_store_kind store;
	uint64_t store_size;		 /* memory:SIZE, bytes; 0 = the scenario's */
	char store_path[CFGSTR_MAX + 1]; /* file:PATH */
	bool lun_set;
	uint16_t lun; /* scenario LUN this device serves */
	bool seed_set;
	uint64_t seed;
	bool trace_off;
	char trace[CFGSTR_MAX + 1]; /* "" = default path */
	bool ctl_off;
	char ctl[CFGSTR_MAX + 1]; /* "" = default path */
	bool read_only;		  /* write-protect every LUN of the scenario */
};

/*
 * Parses `faultlun/OPTIONS` (the subtype prefix is optional). Returns 0, or
 * -EINVAL and sets *reason to a malloc'ed message saying what is wrong.
 */
int cfgstr_parse(const char *text, struct cfgstr *out, char **reason);

#endif
