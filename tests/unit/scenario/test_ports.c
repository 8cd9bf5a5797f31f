/* SPDX-License-Identifier: MIT */
/*
 * test_ports.c - the "ports" and "port_groups" sections of a scenario and
 * what refers to them (docs/scenario-format.md, docs/multipath.md): the typed
 * model a good scenario gives (ports, groups, each LUN's core config, the
 * match keys "port" / "port_group", the alua action's group), and one
 * FILE:LINE:COL message per mistake.
 */
#include "fl_action.h"
#include "fl_scenario_refused.h"
#include "runner.h"

#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PORTS                                                                                      \
	"{\"faultlun\": 1,\n"                                                                      \
	" \"ports\": [{\"id\": \"A\", \"listen\": \"127.0.0.1:3260\", \"group\": 1},\n"            \
	"           {\"id\": \"B\", \"listen\": \"127.0.0.2:3260\", \"relative_port\": 5, "        \
	"\"group\": 2}],\n"                                                                        \
	" \"port_groups\": [{\"id\": 1, \"state\": \"active_optimized\"}, {\"id\": 2, \"state\": " \
	"\"standby\"}],\n"

/* A good two-port scenario comes back with its ports, groups and references. */
static void test_ports_model(void)
{
	const char *text = PORTS
	    " \"frontends\": [\"iscsi\"],\n \"luns\": [{\"lun\": 0, \"size\": \"1MiB\", \"alua\": "
	    "{\"explicit\": true}}],\n"
	    " \"rules\": [{\"match\": {\"port\": \"B\"}, \"action\": {\"alua\": {\"group\": 2, "
	    "\"state\": \"active_optimized\"}}},\n"
	    "           {\"match\": {\"port_group\": 1, \"port\": 1}, \"action\": {\"alua\": "
	    "\"standby\"}}],\n"
	    " \"transport\": {\"rules\": [{\"match\": {\"pdu\": \"scsi_command\", \"port\": "
	    "\"A\"}, \"action\": \"drop\"}]}}\n";
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	struct fl_lun_config cfg;
	uint16_t id;

	int r = fl_scenario_load_string("p.json", text, FL_FE_ISCSI, &sc, &d);

	fl_diags_print(&d, stderr);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT_EQUAL(fl_scenario_port_count(sc), 2);
	CU_ASSERT_STRING_EQUAL(fl_scenario_port(sc, 0)->name, "A");
	CU_ASSERT_STRING_EQUAL(fl_scenario_port(sc, 1)->listen, "127.0.0.2:3260");
	CU_ASSERT_EQUAL(fl_scenario_port(sc, 0)->rel_port_id, 1);
	CU_ASSERT_EQUAL(fl_scenario_port(sc, 1)->rel_port_id, 5);
	CU_ASSERT_EQUAL(fl_scenario_port(sc, 1)->tpg_id, 2);
	CU_ASSERT_EQUAL(fl_scenario_port_group(sc, 0, 5), 2);
	CU_ASSERT_EQUAL(fl_scenario_port_group(sc, 0, 1), 1);
	CU_ASSERT_EQUAL(fl_scenario_lun(sc, 0, &id, &cfg), 0);
	CU_ASSERT_EQUAL(cfg.nports, 2);
	CU_ASSERT_EQUAL(cfg.ports[1].rel_port_id, 5);
	CU_ASSERT_EQUAL(cfg.ports[1].tpg_id, 2);
	CU_ASSERT_EQUAL(cfg.ntpgs, 2);
	CU_ASSERT_EQUAL(cfg.tpgs[1].id, 2);
	CU_ASSERT_EQUAL(cfg.tpgs[1].state, FL_ALUA_STANDBY);
	CU_ASSERT_EQUAL(cfg.tpg_id, 1); /* the first port's group */
	CU_ASSERT_TRUE(cfg.alua_explicit);
	CU_ASSERT_EQUAL_FATAL(sc->nrules, 2);
	CU_ASSERT_EQUAL(sc->rules[0].m.port, 5);
	CU_ASSERT_EQUAL(fl_actions[VERB_ALUA]->group(&sc->rules[0].a), 2);
	CU_ASSERT_EQUAL(sc->rules[1].m.port, 1);
	CU_ASSERT_EQUAL(sc->rules[1].m.port_group, 1);
	CU_ASSERT_EQUAL(fl_actions[VERB_ALUA]->group(&sc->rules[1].a), 0);
	CU_ASSERT_EQUAL_FATAL(sc->nxrules, 1);
	CU_ASSERT_EQUAL(sc->xrules[0].port, 1);
	fl_scenario_free(sc);
	fl_diags_free(&d);
}

/* Without "ports": no port, one group per LUN as its "alua" says (as before). */
static void test_no_ports_unchanged(void)
{
	const char *text = "{\"faultlun\": 1, \"luns\": [{\"alua\": {\"group\": 3, \"state\": "
			   "\"standby\"}}]}";
	struct fl_diags d = {0};
	struct fl_scenario *sc = fl_scenario_loads("n.json", text, 0, &d);
	struct fl_lun_config cfg;
	uint16_t id;

	CU_ASSERT_EQUAL(fl_scenario_port_count(sc), 0);
	CU_ASSERT_EQUAL(fl_scenario_lun(sc, 0, &id, &cfg), 0);
	CU_ASSERT_EQUAL(cfg.nports, 0);
	CU_ASSERT_EQUAL(cfg.ntpgs, 0);
	CU_ASSERT_EQUAL(cfg.tpg_id, 3);
	CU_ASSERT_EQUAL(cfg.alua_state, FL_ALUA_STANDBY);
	CU_ASSERT_EQUAL(fl_scenario_port_group(sc, 0, 1), 3);
	fl_scenario_free(sc);
	fl_diags_free(&d);
}

#define LUNS " \"luns\": [{\"lun\": 0}]"

static const struct fl_refused_case bad_cases[] = {
    {"ports_type", "{\"faultlun\": 1, \"ports\": {}}", "{}", "\"ports\": expected a list", 0},
    {"port_no_listen", "{\"faultlun\": 1, \"ports\": [{\"id\": \"A\"}]}", "{\"id\"",
     "a port needs \"listen\"", 0},
    {"port_bad_listen", "{\"faultlun\": 1, \"ports\": [{\"listen\": \"localhost\"}]}",
     "\"localhost\"", "\"listen\": expected \"ADDR:PORT\", got \"localhost\"", 0},
    {"port_numeric_id", "{\"faultlun\": 1, \"ports\": [{\"id\": \"7\", \"listen\": \"a:1\"}]}",
     "\"7\"", "a port name must not be empty or a number", 0},
    {"port_same_relative",
     "{\"faultlun\": 1, \"ports\": [{\"listen\": \"a:1\"}, {\"listen\": \"b:1\", "
     "\"relative_port\": 1}]}",
     "1}]", "relative port 1 is also port 0's", 0},
    {"port_group_unlisted",
     "{\"faultlun\": 1, \"port_groups\": [{\"id\": 1}], \"ports\": [{\"listen\": \"a:1\", "
     "\"group\": 4}]}",
     "4}", "\"group\": 4 is not listed in \"port_groups\"", 0},
    {"port_group_state", "{\"faultlun\": 1, \"port_groups\": [{\"id\": 1, \"state\": \"idle\"}]}",
     "\"idle\"", "idle", 0},
    {"groups_without_ports", "{\"faultlun\": 1, \"port_groups\": [{\"id\": 1}]}", "\"port_groups\"",
     "\"port_groups\" goes with \"ports\"", 0},
    {"lun_state_with_ports", PORTS " \"luns\": [{\"alua\": {\"state\": \"standby\"}}]}",
     "\"state\": \"standby\"}}", "each group's state is given in \"port_groups\"", 0},
    {"lun_group_unknown", PORTS " \"luns\": [{\"alua\": {\"group\": 9}}]}", "9}",
     "\"group\": 9 is not a group of \"ports\"", 0},
    {"match_port_unknown",
     PORTS LUNS ", \"rules\": [{\"match\": {\"port\": \"C\"}, \"action\": {\"status\": "
		"\"BUSY\"}}]}",
     "\"C\"", "\"port\": \"C\" is not the \"id\" of a port", 0},
    {"match_port_number_unknown",
     PORTS LUNS ", \"rules\": [{\"match\": {\"port\": 2}, \"action\": {\"status\": \"BUSY\"}}]}",
     "2}, \"action\": {\"status\"", "\"port\": 2 is not the relative port of a port", 0},
    {"match_port_group_unknown",
     PORTS LUNS ", \"rules\": [{\"match\": {\"port_group\": 3}, \"action\": {\"status\": "
		"\"BUSY\"}}]}",
     "3}", "\"port_group\": group 3 is not a group of \"ports\"", 0},
    {"xport_port_unknown",
     PORTS LUNS ", \"transport\": {\"rules\": [{\"match\": {\"pdu\": \"nop_out\", \"port\": "
		"\"Z\"}, \"action\": \"drop\"}]}}",
     "\"Z\"", "\"port\": \"Z\" is not the \"id\" of a port", 0},
    {"alua_group_unknown",
     PORTS LUNS ", \"rules\": [{\"action\": {\"alua\": {\"group\": 7, \"state\": "
		"\"standby\"}}}]}",
     "7,", "\"group\": group 7 is not a group of \"ports\"", 0},
    /* each key is named as the file writes it (not "port_group") */
    {"personality_owner_unknown",
     PORTS " \"luns\": [{\"lun\": 0, \"personality\": {\"name\": \"rdac\", \"owner\": 9}}]}",
     "9}", "\"owner\": group 9 is not a group of \"ports\"", 0},
    {"personality_preferred_zero",
     PORTS " \"luns\": [{\"lun\": 0, \"personality\": {\"name\": \"rdac\", \"preferred\": 0}}]}",
     "0}", "\"preferred\": numbered from 1, got 0", 0},
    {"owner_action_unknown",
     PORTS LUNS ", \"rules\": [{\"action\": {\"owner\": 8}}]}", "8}",
     "\"owner\": group 8 is not a group of \"ports\"", 0},
    {"match_port_group_unknown",
     PORTS LUNS ", \"rules\": [{\"match\": {\"port_group\": 6}, \"action\": {\"status\": "
     "\"BUSY\"}}]}",
     "6}", "\"port_group\": group 6 is not a group of \"ports\"", 0},
    {"alua_object_no_state", PORTS LUNS ", \"rules\": [{\"action\": {\"alua\": {\"group\": 2}}}]}",
     "{\"group\": 2}}}", "needs \"state\"", 0},
    {"match_port_without_ports",
     "{\"faultlun\": 1, \"rules\": [{\"match\": {\"port\": 2}, \"action\": {\"status\": "
     "\"BUSY\"}}]}",
     "2}", "without \"ports\" the one port is 1", 0},
};

/* Every bad case: -EINVAL, no scenario, the message at FILE:LINE:COL. */
static void test_port_errors(void)
{
	fl_check_scenarios_refused(bad_cases, sizeof(bad_cases) / sizeof(bad_cases[0]), true);
}

FL_TESTS(port_tests,
	 FL_TEST(test_ports_model),
	 FL_TEST(test_no_ports_unchanged),
	 FL_TEST(test_port_errors));

FL_SUITES(FL_SUITE("scenario_ports", NULL, NULL, port_tests));
