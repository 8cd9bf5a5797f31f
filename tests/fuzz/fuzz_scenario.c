// SPDX-License-Identifier: MIT
/*
 * fuzz_scenario.c - libFuzzer target for the scenario parser and lint
 * (fl_scenario_load_string, docs/scenario-format.md version 1). An input that
 * loads is also turned into an engine with a small memory store (never a file:
 * a fuzzed scenario must not write anywhere) and torn down again.
 */
#include "fl_faults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: the bytes as scenario text, loaded for every front-end mask. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	unsigned fe = size ? (data[0] & 7) : 0;

	struct fl_scenario *sc = NULL;
	struct fl_diags diags = {0};
	int rc = fl_scenario_load_string("fuzz.json", text, fe, &sc, &diags);
	if (devnull)
		fl_diags_print(&diags, devnull);
	if (rc == 0) {
		if (!sc || diags.n != 0)
			abort();
		(void)fl_scenario_name(sc);
		(void)fl_scenario_description(sc);
		(void)fl_scenario_frontends(sc);
		(void)fl_scenario_target_iqn(sc);
		(void)fl_scenario_check(sc);
		for (unsigned i = 0; i < fl_scenario_lun_count(sc); i++) {
			uint16_t id;
			struct fl_lun_config cfg;
			(void)fl_scenario_lun(sc, i, &id, &cfg);
		}
		struct fl_engine_opts o = {0};
		o.frontend = FL_FE_ISCSI;
		o.store_override = true;
		o.store = FL_STORE_MEMORY;
		o.size_override = 1 << 20;
		struct fl_engine *e = NULL;
		if (fl_engine_create(sc, &o, &e) == 0)
			fl_engine_destroy(e);
		fl_scenario_free(sc);
	} else if (sc) {
		abort(); /* never half-loaded */
	}
	fl_diags_free(&diags);
	free(text);
	return 0;
}
