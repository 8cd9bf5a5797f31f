/* SPDX-License-Identifier: MIT */
/* cmd_serve.c - `faultlun serve`: not built yet in this tree. */
#include "cli.h"

#include <stdio.h>

int cmd_serve(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "faultlun serve: not available in this build\n");
	return 2;
}
