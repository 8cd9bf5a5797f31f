/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `faultlun` command: a thin dispatcher to its subcommands.
 * Each subcommand lives in cmd_NAME.c and owns its own option parsing
 * (getopt_long; --help and --version in every one). `faultlun help CMD` is
 * `faultlun CMD --help`.
 */
#include "cli.h"
#include "cli_opts.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
    {"check", cmd_check, "serve each scenario and run its check: one verdict per expectation"},
    {"send", cmd_send, "send SCSI commands and TMFs over one iSCSI session, print the answers"},
    {"serve", cmd_serve, "serve LUNs over iSCSI (embedded target) on a scenario"},
    {"lint", cmd_lint, "check scenario files: FILE:LINE:COL: message for each problem"},
    {"ctl", cmd_ctl, "talk to a running target's control socket"},
    {"vm", cmd_vm, "run scenarios against a real Linux kernel under QEMU"},
    {"report", cmd_report, "render a VM-lab result (JSON) as text or HTML"},
    {"explore", cmd_explore, "search fault schedules on a base scenario against a real kernel"},
    {"import", cmd_import, "build a scenario from an iSCSI packet capture (pcap, pcapng)"},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Prints the list of subcommands. */
static void usage(FILE *out)
{
	fprintf(out, "usage: faultlun [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "  %-8s %s\n", "help", "describe a command: faultlun help COMMAND");
	fprintf(out, "\n`faultlun help COMMAND` or `faultlun COMMAND --help` describes a "
		     "command; man faultlun.\n");
}

/* The command named name, or -1 (after a message listing them). */
static int find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return (int)i;
	fprintf(stderr, "faultlun: unknown command '%s' (commands:", name);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(stderr, " %s", commands[i].name);
	fprintf(stderr, " help)\n");
	return -1;
}

/* `faultlun help [COMMAND]`. */
static int help(int argc, char **argv)
{
	char help_opt[] = "--help";
	char *args[3] = {NULL, help_opt, NULL};
	int i;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	if (argc > 2) {
		fprintf(stderr, "faultlun help: one command at a time\n");
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	i = find_command(argv[1]);
	if (i < 0)
		return 2;
	args[0] = argv[1];
	return commands[i].fn(2, args);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int opt, i;

	/* "+": options up to the command only; the rest belongs to the command. */
	while ((opt = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			cli_print_version(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	argc -= optind;
	argv += optind;
	if (!strcmp(argv[0], "help"))
		return help(argc, argv);
	i = find_command(argv[0]);
	if (i < 0)
		return 2;
	optind = 0; /* a fresh getopt_long for the subcommand */
	return commands[i].fn(argc, argv);
}
