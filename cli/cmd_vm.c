/* SPDX-License-Identifier: MIT */
/* cmd_vm.c - `faultlun vm`: not built yet in this tree. */
#include "cli.h"

#include <stdio.h>

int cmd_vm(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "faultlun vm: not available in this build\n");
	return 2;
}
