/* SPDX-License-Identifier: MIT */
/*
 * cmd_lint.c - `faultlun lint [--frontend NAME]... [--sense-names] FILE...`:
 * loads each scenario as the engine would (schema and meaning, see
 * docs/scenario-format.md) and prints FILE:LINE:COL: message for every
 * problem; a JSON Schema document among the files is skipped with a note.
 * Exit status 0 when every file is clean, 1 when any has a problem, 2 on
 * usage errors and unreadable files.
 */
#include "cli.h"
#include "cli_opts.h"

#include "fl_faults.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Prints the usage text. */
static void lint_usage(FILE *out)
{
	fprintf(out,
		"usage: faultlun lint [--frontend iscsi|tcmu|vm]... [--quiet] FILE...\n"
		"       faultlun lint --sense-names\n"
		"Checks scenario files; prints FILE:LINE:COL: message for each problem.\n"
		"  --frontend NAME  check for this front end (repeatable; comma lists too)\n"
		"                   instead of the ones the scenario names\n"
		"  --sense-names    print the sense key and ASC/ASCQ names scenarios may use\n"
		"  --quiet          say nothing about clean files (else \"FILE: ok\" on stderr)\n"
		"  -h, --help       this text\n"
		"  -V, --version    print the version\n"
		"FILE - reads standard input. A JSON Schema document (\"$schema\" and no\n"
		"\"faultlun\" key) is skipped with a note.\n"
		"Exit status: 0 all clean, 1 problems found, 2 usage error or unreadable file.\n");
}

/* Adds the front ends of a comma list to *mask; returns -1 on an unknown name. */
static int parse_frontends(const char *list, unsigned *mask)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "iscsi"))
			*mask |= FL_FE_ISCSI;
		else if (!strcmp(tok, "tcmu"))
			*mask |= FL_FE_TCMU;
		else if (!strcmp(tok, "vm"))
			*mask |= FL_FE_VM;
		else
			return -1;
	}
	return 0;
}

/* `faultlun lint`: checks each file, prints every problem. */
int cmd_lint(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"frontend", required_argument, NULL, 'f'}, {"sense-names", no_argument, NULL, 'n'},
	    {"quiet", no_argument, NULL, 'q'},		{"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},	{NULL, 0, NULL, 0},
	};
	unsigned frontends = 0;
	bool quiet = false;
	int nfiles = 0, bad = 0, unreadable = 0, opt, i;

	optind = 0;
	while ((opt = cli_getopt("lint", argc, argv, "qhV", longopts)) != -1) {
		switch (opt) {
		case 'f':
			if (parse_frontends(optarg, &frontends)) {
				fprintf(stderr,
					"faultlun lint: --frontend: '%s' is not iscsi, tcmu or vm "
					"(or a comma list of them)\n",
					optarg);
				return 2;
			}
			break;
		case 'n':
			fl_sense_names_print(stdout);
			return 0;
		case 'q':
			quiet = true;
			break;
		case 'h':
			lint_usage(stdout);
			return 0;
		case 'V':
			cli_print_version(stdout);
			return 0;
		default:
			cli_try_help("lint");
			return 2;
		}
	}
	for (i = optind; i < argc; i++) {
		struct fl_diags d = {0};
		struct fl_scenario *sc = NULL;
		int r;

		nfiles++;
		if (fl_scenario_file_is_schema(argv[i])) {
			if (!quiet)
				fprintf(stderr, "%s: a JSON Schema, not a scenario: skipped\n",
					argv[i]);
			continue;
		}
		r = fl_scenario_load_file(argv[i], frontends, &sc, &d);
		if (r == -EINVAL) {
			fl_diags_print(&d, stdout);
			bad++;
		} else if (r < 0) {
			printf("%s:1:1: cannot read the file: %s\n", argv[i], strerror(-r));
			unreadable++;
		} else {
			fl_diags_print(&d, stdout); /* its warnings, if any */
			if (!quiet)
				fprintf(stderr, "%s: ok\n", argv[i]);
		}
		fl_diags_free(&d);
		fl_scenario_free(sc);
	}
	if (!nfiles) {
		fprintf(stderr, "faultlun lint: no scenario file given\n");
		lint_usage(stderr);
		return 2;
	}
	fflush(stdout);
	return unreadable ? 2 : bad ? 1 : 0;
}
