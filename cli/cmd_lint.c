/* SPDX-License-Identifier: MIT */
/*
 * cmd_lint.c - `faultlun lint [--frontend NAME]... [--sense-names] FILE...`:
 * loads each scenario as the engine would (schema and meaning, see
 * docs/scenario-format.md) and prints FILE:LINE:COL: message for every
 * problem. Exit status 0 when every file is clean, 1 when any has a problem,
 * 2 on usage errors.
 */
#include "cli.h"

#include "fl_faults.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
		"Exit status: 0 all clean, 1 problems found, 2 usage error.\n");
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
	unsigned frontends = 0;
	bool quiet = false;
	int nfiles = 0, bad = 0, unreadable = 0, i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			lint_usage(stdout);
			return 0;
		} else if (!strcmp(a, "--sense-names")) {
			fl_sense_names_print(stdout);
			return 0;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			quiet = true;
		} else if (!strcmp(a, "--frontend") || !strncmp(a, "--frontend=", 11)) {
			const char *v = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v || parse_frontends(v, &frontends)) {
				fprintf(stderr,
					"faultlun lint: --frontend takes iscsi, tcmu or vm\n");
				return 2;
			}
		} else if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "faultlun lint: unknown option '%s'\n", a);
			lint_usage(stderr);
			return 2;
		} else {
			break;
		}
	}
	for (; i < argc; i++) {
		struct fl_diags d = {0};
		struct fl_scenario *sc = NULL;
		int r;

		nfiles++;
		r = fl_scenario_load_file(argv[i], frontends, &sc, &d);
		if (r == -EINVAL) {
			fl_diags_print(&d, stdout);
			bad++;
		} else if (r < 0) {
			printf("%s:1:1: cannot read the file: %s\n", argv[i], strerror(-r));
			unreadable++;
		} else if (!quiet) {
			fprintf(stderr, "%s: ok\n", argv[i]);
		}
		fl_diags_free(&d);
		fl_scenario_free(sc);
	}
	if (!nfiles) {
		lint_usage(stderr);
		return 2;
	}
	fflush(stdout);
	return unreadable ? 2 : bad ? 1 : 0;
}
