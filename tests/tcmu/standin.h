/* SPDX-License-Identifier: MIT */
/*
 * standin.h - tcmu-runner 1.5.4 and libtcmu as a handler module sees them,
 * stood in for the programs that dlopen handler_faultlun.so without a runner
 * (tests/tcmu/harness.c, bench/tcmu/bench_tcmu.c). The handler imports these
 * symbols from the executable that loads it (ENABLE_EXPORTS), as it would
 * from the runner and libtcmu.so.2; see handlers/tcmu/tcmu_abi.h.
 */
#ifndef FL_TCMU_STANDIN_H
#define FL_TCMU_STANDIN_H

#include "tcmu_abi.h"

#include <stdbool.h>
#include <stdint.h>

/* A device as libtcmu and the runner keep it. */
struct tcmu_device {
	char cfgstring[4096];
	char uio[16];
	uint64_t num_lbas;
	uint32_t block_size;
	int cmd_time_out;	   /* configfs cmd_time_out (s) */
	void *runner_private;	   /* tcmur_dev_set_private */
	uint64_t dev_size_written; /* last "dev_size" written to the control file */
};

/* The handler's struct once its handler_init has registered it, else NULL. */
extern struct tcmur_handler *standin_handler;

/* Runner log lines printed: 0 none, 1 errors, 2 + warnings, 3 + info, 4 + debug. */
extern int standin_log_level;

/*
 * Every runner log line is also kept (the last STANDIN_LOG_KEEP of them,
 * whatever standin_log_level says), with its level 1 error .. 4 debug.
 */
#define STANDIN_LOG_KEEP 256

/* True when a kept line of that level contains text. */
bool standin_log_has(int level, const char *text);
/* Forgets the kept lines. */
void standin_log_clear(void);

#endif
