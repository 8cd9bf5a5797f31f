/* SPDX-License-Identifier: MIT */
/*
 * bench_rules.c - what armed rules that do not match cost the pass-through
 * path. Submits READ(10)s of 8 blocks through fl_engine_submit to a memory
 * LUN with 0, 10, 100 and 1,000 rules armed (a scenario holds at most
 * 1024), none of which matches the workload (LBA ranges elsewhere on the
 * disk, and rules for other command classes), and prints commands per second
 * and the ratio to 0 rules.
 * Goal: 1,000 rules cost under 2% of throughput.
 *
 *   bench_rules [COMMANDS] [ROUNDS]   (defaults 200000 and 9; rounds interleave the
 *                                     configurations and the best round of each counts)
 */
#include "fl_faults.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Completion: nothing to do (the memory store completes inline). */
static void bench_done(struct fl_cmd *cmd)
{
	(void)cmd;
}

/* Monotonic seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A scenario with n rules that the benchmark's commands never match. */
static char *scenario_text(unsigned n)
{
	json_t *root = json_pack("{s:i, s:s, s:[s], s:[{s:s}]}", "faultlun", 1, "name", "bench",
				 "frontends", "iscsi", "luns", "size", "1GiB");
	json_t *rules = json_array();
	char *text;

	for (unsigned i = 0; i < n; i++) {
		json_t *m;

		if (i % 10 == 9) {
			/* another class, no LBA condition */
			m = json_pack("{s:[s], s:I}", "class", i % 20 == 9 ? "tur" : "unmap",
				      "every", (json_int_t)(i + 2));
		} else {
			/* reads and writes of LBAs the workload never touches */
			json_int_t first = 1000000 + (json_int_t)i * 64;

			m = json_pack("{s:[s, s], s:{s:I, s:I}}", "class", "read", "write", "lba",
				      "first", first, "last", first + 31);
		}
		json_array_append_new(rules,
				      json_pack("{s:o, s:{s:s}}", "match", m, "action", "sense",
						"MEDIUM_ERROR/UNRECOVERED_READ_ERROR"));
	}
	json_object_set_new(root, "rules", rules);
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text;
}

/* Builds an engine with n non-matching rules. */
static struct fl_engine *make_engine(unsigned n)
{
	char *text = scenario_text(n);
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	struct fl_engine_opts o = {.frontend = FL_FE_ISCSI, .seed_set = true, .seed = 1};
	struct fl_engine *e = NULL;

	if (fl_scenario_load_string("bench.json", text, 0, &sc, &d) ||
	    fl_engine_create(sc, &o, &e)) {
		fl_diags_print(&d, stderr);
		exit(1);
	}
	fl_scenario_free(sc);
	fl_diags_free(&d);
	free(text);
	return e;
}

/* Commands per second of one batch through e. */
static double batch(struct fl_engine *e, unsigned long cmds)
{
	static uint8_t buf[4096];
	struct fl_cmd cmd;
	double t0 = now_s();

	memset(&cmd, 0, sizeof(cmd));
	for (unsigned long i = 0; i < cmds; i++) {
		uint32_t lba = (uint32_t)((i * 8) % 65536);

		memset(&cmd, 0, offsetof(struct fl_cmd, status));
		cmd.cdb[0] = 0x28;
		cmd.cdb[2] = (uint8_t)(lba >> 24);
		cmd.cdb[3] = (uint8_t)(lba >> 16);
		cmd.cdb[4] = (uint8_t)(lba >> 8);
		cmd.cdb[5] = (uint8_t)lba;
		cmd.cdb[8] = 8;
		cmd.cdb_len = 10;
		cmd.nexus.id = 1;
		cmd.nexus.initiator = "iqn.2026-12.org.faultlun:bench";
		cmd.nexus.rel_port_id = 1;
		cmd.tag = i;
		cmd.data_in = buf;
		cmd.data_in_cap = sizeof(buf);
		cmd.done = bench_done;
		fl_engine_submit(e, 0, &cmd);
	}
	return (double)cmds / (now_s() - t0);
}

/* Runs the configurations interleaved and prints the table. */
int main(int argc, char **argv)
{
	enum { NCONF = 4 };
	static const unsigned counts[NCONF] = {0, 10, 100, 1000};
	unsigned long cmds = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;
	unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 9;
	struct fl_engine *e[NCONF];
	double best[NCONF] = {0};
	int rc = 0;

	for (int i = 0; i < NCONF; i++) {
		e[i] = make_engine(counts[i]);
		batch(e[i], cmds / 10); /* warm up: UA of the new nexus, caches */
	}
	/* interleaved rounds, best per configuration: drift and noise hit all alike */
	for (unsigned r = 0; r < rounds; r++)
		for (int i = 0; i < NCONF; i++) {
			double x = batch(e[i], cmds);

			if (x > best[i])
				best[i] = x;
		}
	printf("%-8s %14s %10s\n", "rules", "commands/s", "vs 0");
	for (int i = 0; i < NCONF; i++) {
		printf("%-8u %14.0f %9.2f%%\n", counts[i], best[i], 100.0 * best[i] / best[0]);
		if (counts[i] == 1000 && best[i] < 0.98 * best[0])
			rc = 1;
		fl_engine_destroy(e[i]);
	}
	printf("goal: 1000 rules within 2%% of 0 rules: %s\n", rc ? "MISSED" : "met");
	return rc;
}
