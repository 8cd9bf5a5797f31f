// SPDX-License-Identifier: MIT
/*
 * test_nexus.c - I_T nexus ids of initiator ports (handlers/iscsi/nexus.c).
 *
 * SAM-5 4.6: an I_T nexus is an initiator port and a target port; the target
 * keys it by the whole initiator port name (InitiatorName ",i,0x" ISID), so
 * persistent reservations and unit attentions follow the port across
 * logins. Past ISCSI_NEXUS_KEEP ports, only ports without a session and of
 * which the core keeps nothing (fl_lun_nexus_in_use) are forgotten.
 */
#include "iscsi_internal.h"
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct fl_engine *engine;
static struct fl_iscsi *target;

/* The portal behind the opaque handle (struct fl_iscsi's first member). */
static struct portal *portal(void)
{
	return (struct portal *)target;
}

/* A target with one 1 MiB memory LUN on an ephemeral loopback port. */
static int setup(void)
{
	static const char text[] =
	    "{\"faultlun\": 1, \"name\": \"nexus\", \"frontends\": [\"iscsi\"], "
	    "\"luns\": [{\"lun\": 0, \"size\": 1048576, \"block_size\": 512}]}";
	struct fl_scenario *sc = NULL;
	struct fl_diags d = {0};
	struct fl_engine_opts eo = {.frontend = FL_FE_ISCSI};
	struct fl_iscsi_opts o = {.listen = "127.0.0.1:0", .log = stderr};

	if (fl_scenario_load_string("nexus", text, FL_FE_ISCSI, &sc, &d)) {
		fl_diags_print(&d, stderr);
		fl_diags_free(&d);
		return -1;
	}
	fl_diags_free(&d);
	int err = fl_engine_create(sc, &eo, &engine);
	fl_scenario_free(sc);
	if (err)
		return -1;
	return fl_iscsi_create(&o, engine, fl_engine_target(engine), &target) ? -1 : 0;
}

static int teardown(void)
{
	fl_iscsi_disconnect(target);
	fl_engine_destroy(engine);
	fl_iscsi_destroy(target);
	return 0;
}

static volatile int cmd_finished;

static void cmd_done(struct fl_cmd *cmd)
{
	(void)cmd;
	cmd_finished = 1;
}

/* Runs one command on LUN 0 from nexus id; returns its status. */
static int run(uint64_t id, const char *port, const uint8_t *cdb, const uint8_t *out, uint32_t len)
{
	struct fl_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	memcpy(cmd.cdb, cdb, 10);
	cmd.cdb_len = 10;
	cmd.nexus.id = id;
	cmd.nexus.initiator = port;
	cmd.nexus.rel_port_id = 1;
	cmd.data_out = out;
	cmd.data_out_len = len;
	cmd.done = cmd_done;
	cmd_finished = 0;
	fl_target_submit(fl_engine_target(engine), 0, &cmd);
	for (int i = 0; i < 2000 && !cmd_finished; i++)
		usleep(1000);
	CU_ASSERT_FATAL(cmd_finished);
	return cmd.status;
}

/* PERSISTENT RESERVE OUT, REGISTER key (SPC-4 r37 6.16.2), after the nexus's first UA. */
static void pr_register(uint64_t id, const char *port, uint64_t key)
{
	static const uint8_t tur[10] = {0x00};
	uint8_t cdb[10] = {0x5f, 0x00, 0x00, 0, 0, 0, 0, 0, 24, 0}, par[24] = {0};

	for (int i = 0; i < 8; i++)
		par[8 + i] = (uint8_t)(key >> (56 - 8 * i));
	run(id, port, tur, NULL, 0); /* 29/00: the nexus is new */
	CU_ASSERT_EQUAL(run(id, port, cdb, par, sizeof(par)), 0);
}

/* One port, one id, however often it logs in. */
static void test_nexus_same_port_same_id(void)
{
	struct portal *p = portal();
	uint64_t a = nexus_id(p, "iqn.2026-12.org.faultlun:a,i,0x000000000001");

	CU_ASSERT_EQUAL(nexus_id(p, "iqn.2026-12.org.faultlun:a,i,0x000000000001"), a);
	CU_ASSERT_NOT_EQUAL(nexus_id(p, "iqn.2026-12.org.faultlun:a,i,0x000000000002"), a);
}

/* Two names alike in their first 255 bytes are two ports (they were one when cut there). */
static void test_nexus_long_names_differ(void)
{
	struct portal *p = portal();
	char a[400], b[400];

	snprintf(a, sizeof(a), "iqn.2026-12.org.faultlun:%0300d-one,i,0x000000000001", 0);
	snprintf(b, sizeof(b), "iqn.2026-12.org.faultlun:%0300d-two,i,0x000000000001", 0);
	uint64_t ia = nexus_id(p, a), ib = nexus_id(p, b);
	CU_ASSERT_NOT_EQUAL(ia, ib);
	CU_ASSERT_EQUAL(nexus_id(p, a), ia);
	CU_ASSERT_EQUAL(nexus_id(p, b), ib);
}

/*
 * Past ISCSI_NEXUS_KEEP ports the table forgets the idle ones, never one with
 * a persistent-reservation registration; the table stays bounded.
 */
static void test_nexus_forget_keeps_registered(void)
{
	struct portal *p = portal();
	const char *holder = "iqn.2026-12.org.faultlun:holder,i,0x000000000007";
	const char *idle = "iqn.2026-12.org.faultlun:idle,i,0x000000000007";
	uint64_t h = nexus_id(p, holder), i = nexus_id(p, idle);
	char name[96];

	pr_register(h, holder, 0x1234);
	for (unsigned n = 0; n < ISCSI_NEXUS_KEEP + 100; n++) {
		snprintf(name, sizeof(name), "iqn.2026-12.org.faultlun:many,i,0x%012x", n);
		nexus_id(p, name);
	}
	CU_ASSERT(p->nnexus <= ISCSI_NEXUS_KEEP);
	CU_ASSERT_EQUAL(nexus_id(p, holder), h);
	CU_ASSERT_NOT_EQUAL(nexus_id(p, idle), i);
}

FL_TESTS(nexus_tests, FL_TEST(test_nexus_same_port_same_id), FL_TEST(test_nexus_long_names_differ),
	 FL_TEST(test_nexus_forget_keeps_registered));

FL_SUITES(FL_SUITE("nexus", setup, teardown, nexus_tests));
