/* SPDX-License-Identifier: MIT */
/* cmd_report.c - `faultlun report`: not built yet in this tree. */
#include "cli.h"

#include <stdio.h>

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "faultlun report: not available in this build\n");
	return 2;
}
