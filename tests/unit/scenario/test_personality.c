/* SPDX-License-Identifier: MIT */
/*
 * test_personality.c - the LUN key "personality" (docs/scenario-format.md
 * "personality (vendor arrays)") and the "owner" action: the typed model a
 * good scenario gives (the LUN's core config: name, owner, preferred,
 * options; the personality's INQUIRY identity where the LUN gives none), and
 * one FILE:LINE:COL message per mistake.
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
	"           {\"id\": \"B\", \"listen\": \"127.0.0.2:3260\", \"group\": 2}],\n"             \
	" \"port_groups\": [{\"id\": 1, \"state\": \"active_optimized\"}, {\"id\": 2, \"state\": " \
	"\"active_optimized\"}],\n"

/* Options, identity defaults and the owner action come through typed. */
static void test_personality_model(void)
{
	const char *text =
	    PORTS " \"luns\": [{\"lun\": 0, \"personality\": {\"name\": \"rdac\", \"owner\": 2,\n"
		  "   \"preferred\": 1, \"rebalance_ms\": 3000, \"quiesce_ms\": \"forever\", "
		  "\"avt\": true,\n"
		  "   \"transfer_ua\": true, \"max_luns\": 16}},\n"
		  "  {\"lun\": 1, \"product\": \"MD32xxi\", \"vendor\": \"DELL\", \"personality\": "
		  "\"rdac\"}],\n"
		  " \"rules\": [{\"id\": \"move\", \"action\": {\"owner\": 2}}]}";
	struct fl_diags d = {0};
	struct fl_scenario *sc = fl_scenario_loads("p.json", text, FL_FE_ISCSI, &d);
	struct fl_lun_config cfg;
	uint16_t id;

	CU_ASSERT_EQUAL(fl_scenario_lun(sc, 0, &id, &cfg), 0);
	CU_ASSERT_STRING_EQUAL(cfg.personality.name, "rdac");
	CU_ASSERT_EQUAL(cfg.personality.owner_tpg, 2);
	CU_ASSERT_EQUAL(cfg.personality.preferred_tpg, 1);
	CU_ASSERT_EQUAL(cfg.personality.rebalance_ms, 3000);
	CU_ASSERT_EQUAL(cfg.personality.quiesce_ms, UINT32_MAX);
	CU_ASSERT_TRUE(cfg.personality.avt);
	CU_ASSERT_TRUE(cfg.personality.transfer_ua);
	CU_ASSERT_EQUAL(cfg.personality.max_luns, 16);
	CU_ASSERT_STRING_EQUAL(cfg.vendor, "NETAPP");
	CU_ASSERT_STRING_EQUAL(cfg.product, "INF-01-00");
	CU_ASSERT_EQUAL(cfg.nports, 2);
	CU_ASSERT_EQUAL(fl_scenario_lun(sc, 1, &id, &cfg), 0);
	CU_ASSERT_STRING_EQUAL(cfg.personality.name, "rdac");
	CU_ASSERT_EQUAL(cfg.personality.owner_tpg, 0); /* the core takes the LUN's group */
	CU_ASSERT_STRING_EQUAL(cfg.vendor, "DELL");
	CU_ASSERT_STRING_EQUAL(cfg.product, "MD32xxi");
	CU_ASSERT_STRING_EQUAL(cfg.revision, "0820");
	CU_ASSERT_EQUAL(sc->rules[0].a.verb, VERB_OWNER);
	CU_ASSERT_EQUAL(fl_actions[VERB_OWNER]->group(&sc->rules[0].a), 2);
	fl_scenario_free(sc);
	fl_diags_free(&d);
}

#define LUN(P) " \"luns\": [{\"personality\": " P "}]}"

static const struct fl_refused_case bad_cases[] = {
    {"unknown_name", PORTS LUN("\"netapp\""), "\"netapp\"", "unknown personality \"netapp\"", 0},
    {"no_name", PORTS LUN("{\"owner\": 1}"), "{\"owner\"", "\"personality\" needs \"name\"", 0},
    {"not_a_name", PORTS LUN("7"), "7}", "expected a name or", 0},
    {"owner_unknown_group", PORTS LUN("{\"name\": \"rdac\", \"owner\": 5}"), "5}",
     "group 5 is not a group of \"ports\"", 0},
    {"quiesce_word", PORTS LUN("{\"name\": \"rdac\", \"quiesce_ms\": \"long\"}"), "\"long\"",
     "expected ms or \"forever\"", 0},
    {"unknown_option", PORTS LUN("{\"name\": \"rdac\", \"ownr\": 1}"), "\"ownr\"", "ownr", 0},
    {"owner_action_group", PORTS " \"rules\": [{\"action\": {\"owner\": 9}}]}", "9}",
     "group 9 is not a group of \"ports\"", 0},
};

/* Every bad case: -EINVAL, no scenario, the message at FILE:LINE:COL. */
static void test_personality_errors(void)
{
	fl_check_scenarios_refused(bad_cases, sizeof(bad_cases) / sizeof(bad_cases[0]), false);
}

FL_TESTS(personality_tests,
	 FL_TEST(test_personality_model),
	 FL_TEST(test_personality_errors));

FL_SUITES(FL_SUITE("scenario_personality", NULL, NULL, personality_tests));
