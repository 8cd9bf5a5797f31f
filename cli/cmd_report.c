/* SPDX-License-Identifier: MIT */
/*
 * cmd_report.c - `faultlun report RESULT.json [--html OUT.html] [--no-timeline]`:
 * prints a VM-lab result (verdict per expectation, wall time, timeline) and
 * optionally writes its HTML report. Exits with the result's verdict: 0 pass,
 * 1 an expectation failed, 2 error.
 */
#include "cli.h"
#include "fl_vm.h"

#include <stdio.h>
#include <string.h>

int cmd_report(int argc, char **argv)
{
	const char *in = NULL, *html = NULL;
	bool timeline = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--html") && i + 1 < argc) {
			html = argv[++i];
		} else if (!strcmp(argv[i], "--no-timeline")) {
			timeline = false;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: faultlun report RESULT.json [--html OUT.html] "
			       "[--no-timeline]\n");
			return 0;
		} else if (argv[i][0] != '-' && !in) {
			in = argv[i];
		} else {
			fprintf(stderr, "usage: faultlun report RESULT.json [--html OUT.html]\n");
			return 2;
		}
	}
	if (!in) {
		fprintf(stderr, "usage: faultlun report RESULT.json [--html OUT.html]\n");
		return 2;
	}
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
