// SPDX-License-Identifier: MIT
/*
 * fuzz_scsidebug.c - libFuzzer target for `faultlun import --scsi-debug`'s
 * reader (cli/import_scsi_debug.c): lines of scsi_debug's debugfs `error`
 * file and its module options, as written or read back, become a scenario.
 *
 * Input: the rules file's text; byte 0's low bits choose the LUN (0-3). Oracle,
 * besides the sanitizers: a scenario the reader builds loads as `faultlun
 * lint` loads it (docs/import.md: "0 when written (and loads)"), and a refusal
 * says why.
 */
#include "fl_scenario.h"
#include "import.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	FILE *in;
	json_t *s;
	char *text;

	if (!size)
		return 0;
	in = fmemopen((void *)(data + 1), size - 1 ? size - 1 : 1, "r");
	if (!in)
		return 0;
	if (size == 1)
		fgetc(in); /* an empty file: fmemopen wants a size of 1 at least */
	s = fl_import_scsi_debug(in, "fuzz", data[0] & 3, "fuzz", err, sizeof(err));
	fclose(in);
	if (!s) {
		if (!err[0])
			abort(); /* refused without a reason */
		return 0;
	}
	text = json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text || fl_scenario_load_string("(imported)", text, 0, &sc, &d)) {
		fl_diags_print(&d, stderr);
		fprintf(stderr, "the imported scenario does not load:\n%s\n", text ? text : "");
		abort();
	}
	fl_scenario_free(sc);
	fl_diags_free(&d);
	free(text);
	json_decref(s);
	return 0;
}
