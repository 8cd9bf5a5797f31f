/* SPDX-License-Identifier: MIT */
/* cmd_ctl.c - `faultlun ctl`: not built yet in this tree. */
#include "cli.h"

#include <stdio.h>

int cmd_ctl(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "faultlun ctl: not available in this build\n");
	return 2;
}
