/* SPDX-License-Identifier: MIT */
/* cmd_lint.c - `faultlun lint`: not built yet in this tree. */
#include "cli.h"

#include <stdio.h>

int cmd_lint(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "faultlun lint: not available in this build\n");
	return 2;
}
