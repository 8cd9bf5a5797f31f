/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `faultlun` command: a thin dispatcher to its subcommands.
 * Each subcommand lives in cmd_NAME.c and owns its own option parsing.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{"serve", cmd_serve, "serve LUNs over iSCSI (embedded target) on a scenario"},
	{"lint", cmd_lint, "check scenario files: FILE:LINE:COL: message for each problem"},
	{"ctl", cmd_ctl, "talk to a running target's control socket"},
	{"vm", cmd_vm, "run scenarios against a real Linux kernel under QEMU"},
	{"report", cmd_report, "render a VM-lab result (JSON) as text or HTML"},
};

/* Prints the list of subcommands. */
static void usage(FILE *out)
{
	fprintf(out, "usage: faultlun COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n`faultlun COMMAND --help` describes a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("faultlun %s\n", FAULTLUN_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "faultlun: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
