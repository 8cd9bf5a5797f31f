/* SPDX-License-Identifier: MIT */
/*
 * cmd_report.c - `faultlun report RESULT.json [--html OUT.html] [--no-timeline]`:
 * prints a VM-lab result (verdict per expectation, wall time, timeline) and
 * optionally writes its HTML report (summary, error-handler ladder, sequence
 * of one cycle, state bands and latency, tables) with trace.json beside it
 * (Chrome trace events). Exits with the result's verdict: 0 pass, 1 an
 * expectation failed, 2 error.
 */
#include "cli.h"
#include "cli_opts.h"
#include "fl_vm.h"

#include <stdio.h>
#include <string.h>

/* Prints the usage text. */
static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: faultlun report RESULT.json [--html OUT.html] [--no-timeline]\n"
		"Prints a VM-lab result (`faultlun vm`): verdict per expectation, wall\n"
		"time, timeline.\n"
		"  --html FILE      also write the HTML report there, and trace.json\n"
		"                   (Chrome trace events, for Perfetto) beside it\n"
		"  --no-timeline    verdicts only\n"
		"  -h, --help       this text\n"
		"  -V, --version    print the version\n"
		"Exit status: the result's verdict: 0 pass, 1 an expectation failed, 2 error.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"html", required_argument, NULL, 'H'},
	    {"no-timeline", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *in = NULL, *html = NULL;
	bool timeline = true;
	int opt;

	optind = 0;
	while ((opt = cli_getopt("report", argc, argv, "hV", longopts)) != -1) {
		switch (opt) {
		case 'H':
			html = optarg;
			break;
		case 'n':
			timeline = false;
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		case 'V':
			cli_print_version(stdout);
			return 0;
		default:
			cli_try_help("report");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "faultlun report: %s\n",
			optind == argc ? "no RESULT.json given" : "one RESULT.json at a time");
		cli_try_help("report");
		return 2;
	}
	in = argv[optind];
	int rc = fl_vm_report_text(in, stdout, timeline);
	if (html) {
		if (fl_vm_report_html(in, html) < 0) {
			fprintf(stderr, "faultlun report: cannot write %s\n", html);
			return 2;
		}
		printf("report: %s\n", html);
	}
	return rc;
}
