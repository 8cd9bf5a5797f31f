/* SPDX-License-Identifier: MIT */
/*
 * cmd_report.c - `faultlun report RESULT.json|RUN_DIR [--html OUT.html]
 * [--no-timeline]`: prints a VM-lab result (timeline, the summary header of
 * the HTML report, verdict per expectation, wall time) and optionally writes
 * its HTML report (summary, error-handler ladder, sequence of one cycle,
 * state bands and latency, tables) with trace.json beside it (Chrome trace
 * events). `faultlun report --matrix OUT_DIR LABEL=RUN_DIR...` writes the
 * kernel matrix report of runs already done. `--ktap FILE` writes the
 * result's verdicts as KTAP version 1 (ktap.c). Exits with the verdict: 0
 * pass, 1 an expectation failed, 2 error.
 */
#include "check_report.h"
#include "cli.h"
#include "cli_opts.h"
#include "fl_vm.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Prints the usage text. */
static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: faultlun report RESULT.json|RUN_DIR [--html OUT.html] [--no-timeline]\n"
		"                       [--ktap FILE]\n"
		"       faultlun report --matrix OUT_DIR LABEL=RUN_DIR...\n"
		"Prints a VM-lab result (`faultlun vm`): timeline, summary (the HTML\n"
		"report's header), verdict per expectation, wall time.\n"
		"  --html FILE      also write the HTML report there, and trace.json\n"
		"                   (Chrome trace events, for Perfetto) beside it\n"
		"  --no-timeline    summary and verdicts only\n"
		"  --ktap FILE      write the verdicts there in KTAP version 1\n"
		"  --matrix DIR     write DIR/matrix.json and DIR/matrix.html for the runs\n"
		"                   given as LABEL=RUN_DIR (LABEL: the kernel's column)\n"
		"  -h, --help       this text\n"
		"  -V, --version    print the version\n"
		"Exit status: the result's verdict: 0 pass, 1 an expectation failed, 2 error.\n");
}

/* `faultlun report --matrix OUT_DIR LABEL=RUN_DIR...` (argv from optind); the exit status. */
static int report_matrix(const char *matrix, const char *html, const char *ktap, int argc,
			 char **argv)
{
	if (html || ktap || optind == argc) {
		fprintf(stderr, "faultlun report: %s\n",
			html   ? "--matrix writes matrix.html itself"
			: ktap ? "--ktap goes with one RESULT.json"
			       : "--matrix needs LABEL=RUN_DIR arguments");
		cli_try_help("report");
		return 2;
	}
	return fl_vm_matrix_from_runs((const char *const *)argv + optind, (size_t)(argc - optind),
				      matrix, stdout);
}

/*
 * Prints the result in (a RESULT.json or a run directory) and writes the
 * reports asked for (html, ktap: NULL for none); the exit status.
 */
static int report_result(const char *in, const char *html, const char *ktap, bool timeline)
{
	char res[PATH_MAX + 16];
	struct stat sb;

	/* A run directory stands for its result.json. */
	if (stat(in, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		snprintf(res, sizeof(res), "%s/result.json", in);
		in = res;
	}
	int rc = fl_vm_report_text(in, stdout, timeline);
	if (html) {
		if (fl_vm_report_html(in, html) < 0) {
			fprintf(stderr, "faultlun report: cannot write %s\n", html);
			return 2;
		}
		printf("report: %s\n", html);
	}
	if (ktap) {
		struct cli_vm_run kr = {.rc = rc}; /* named after the result's scenario and path */

		snprintf(kr.result, sizeof(kr.result), "%s", in);
		if (cli_ktap_vm_write(ktap, &kr, 1)) {
			fprintf(stderr, "faultlun report: cannot write %s\n", ktap);
			return 2;
		}
	}
	return rc;
}

/* `faultlun report`: the exit status is the result's verdict (0, 1) or 2. */
int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"html", required_argument, NULL, 'H'},
	    {"no-timeline", no_argument, NULL, 'n'},
	    {"matrix", required_argument, NULL, 'M'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"ktap", required_argument, NULL, 'K'},
	    {NULL, 0, NULL, 0},
	};
	const char *html = NULL, *matrix = NULL, *ktap = NULL;
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
		case 'M':
			matrix = optarg;
			break;
		case 'K':
			ktap = optarg;
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
	if (matrix)
		return report_matrix(matrix, html, ktap, argc, argv);
	if (optind != argc - 1) {
		fprintf(stderr, "faultlun report: %s\n",
			optind == argc ? "no RESULT.json given" : "one RESULT.json at a time");
		cli_try_help("report");
		return 2;
	}
	return report_result(argv[optind], html, ktap, timeline);
}
