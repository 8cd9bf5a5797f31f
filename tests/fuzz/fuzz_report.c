// SPDX-License-Identifier: MIT
/*
 * fuzz_report.c - libFuzzer target for `faultlun report` on a result file:
 * part of a VM-lab result.json comes from the guest, whose kernel is the one
 * under test, so the file is hostile input. Each input is written as
 * result.json in a private directory under /dev/shm (or $TMPDIR), then read
 * as `faultlun report --html --ktap` reads it: the bounds check and loader
 * (report/report_bounds.c), the text report with its timeline, the HTML report
 * with its drawings and trace.json (report/report_*.c), and the KTAP writer
 * (cli/ktap.c). Everything written goes to files that are overwritten by
 * the next input.
 */
#include "check_report.h"
#include "fl_vm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256], result[300], html[300], ktap[300];
static FILE *devnull;

/* The private directory, made once. */
static void setup(void)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/fl-fuzz-report-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(result, sizeof(result), "%s/result.json", dir);
	snprintf(html, sizeof(html), "%s/report.html", dir);
	snprintf(ktap, sizeof(ktap), "%s/result.ktap", dir);
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		setup();
	FILE *f = fopen(result, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	int rc = fl_vm_report_text(result, devnull, true);
	if (rc == FL_VM_ERROR)
		return 0; /* refused: nothing past the bounds reaches the rest */
	(void)fl_vm_report_html(result, html);
	struct cli_vm_run kr = {.rc = rc};
	snprintf(kr.result, sizeof(kr.result), "%s", result);
	(void)cli_ktap_vm_write(ktap, &kr, 1);
	return 0;
}
