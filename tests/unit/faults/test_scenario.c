/* SPDX-License-Identifier: MIT */
/*
 * test_scenario.c - the scenario loader (docs/scenario-format.md): every
 * error message with its FILE:LINE:COL, that a bad scenario is never half
 * loaded, that all problems of a file are reported, and that a good scenario
 * comes out with the values it says.
 */
#include "fl_scenario_refused.h"
#include "runner.h"

#include "faults_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HDR "{\"faultlun\": 1, "

static const struct fl_refused_case bad_cases[] = {
    {"syntax", "{\"faultlun\": 1,\n \"name\": }", "}", "unexpected token"},
    {"not_object", "[1, 2]", "[", "must be a JSON object"},
    {"duplicate_key", "{\"faultlun\": 1, \"name\": \"a\", \"name\": \"b\"}", "\"name\": \"b",
     "duplicate key \"name\" (also at 1:17)"},
    {"duplicate_key_escaped", "{\"faultlun\": 1, \"name\": \"a\", \"n\\u0061me\": \"b\"}",
     "\"n\\u0061me\"", "duplicate key \"name\" (also at 1:17)"},
    {"duplicate_key_nested", HDR "\"emulates\": {\"references\": [], \"references\": []}}",
     "\"references\": []}", "duplicate key \"references\" (also at 1:30)"},
    {"duplicate_empty_key", "{\"\": 1, \"\": 2}", "\"\": 2", "duplicate key \"\" (also at 1:2)"},
    {"key_with_slash", HDR "\"a/b\": 1}", "\"a/b\"", "unknown key \"a/b\" in the scenario"},
    {"too_deep",
     HDR "\"emulates\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[" /* 64 levels: one too many */
	 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
	 "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
     "[]", "nested deeper than 64 levels"},
    {"lun_too_big", HDR "\"luns\": [{\"size\": \"140737488355328blocks\"}]}",
     "\"140737488355328blocks\"", "LUN 0 cannot be built: more blocks than a LUN can have"},
    {"no_version", "{\"name\": \"x\"}", "{", "missing \"faultlun\""},
    {"bad_version", "{\"faultlun\": 2}", "2", "unsupported format version 2"},
    {"unknown_top_key", HDR "\"rulez\": []}", "\"rulez\"", "unknown key \"rulez\" in the scenario"},
    {"empty_name", HDR "\"name\": \"\"}", "\"\"", "\"name\" is empty"},
    {"name_type", HDR "\"name\": 5}", "5}", "\"name\": expected a string, got 5"},
    {"frontend", HDR "\"frontends\": [\"fc\"]}", "\"fc\"", "unknown front end \"fc\""},
    {"seed", HDR "\"seed\": -1}", "-1", "\"seed\": expected a non-negative integer, got -1"},
    {"iqn", HDR "\"target\": {\"iqn\": \"foo\"}}", "\"foo\"", "is not an iSCSI name"},
    {"lun_key", HDR "\"luns\": [{\"sise\": 1}]}", "\"sise\"", "unknown key \"sise\" in lun"},
    {"lun_size", HDR "\"luns\": [{\"size\": \"12XB\"}]}", "\"12XB\"", "invalid size \"12XB\""},
    {"lun_size_multiple", HDR "\"luns\": [{\"size\": 1000}]}", "1000",
     "not a multiple of the block size (512)"},
    {"lun_block_size", HDR "\"luns\": [{\"block_size\": 1000}]}", "1000", "not a power of two"},
    {"lun_vendor_len", HDR "\"luns\": [{\"vendor\": \"TOOLONGVENDOR\"}]}", "\"TOOLONG",
     "at most 8 characters"},
    {"lun_twice", HDR "\"luns\": [{\"lun\": 1}, {\"lun\": 1}]}", "1}]", "LUN 1 is defined twice"},
    {"lun_range", HDR "\"luns\": [{\"lun\": 300}]}", "300", "out of range (at most 255)"},
    {"lun_store", HDR "\"luns\": [{\"store\": {\"kind\": \"nvme\"}}]}", "\"nvme\"",
     "unknown store kind \"nvme\""},
    {"lun_store_path", HDR "\"luns\": [{\"store\": {\"kind\": \"file\"}}]}", "{\"kind\"",
     "a file store needs \"path\""},
    {"lun_store_abs",
     HDR "\"luns\": [{\"store\": {\"kind\": \"file\", \"path\": \"/etc/passwd\"}}]}",
     "\"/etc/passwd\"", "file store path \"/etc/passwd\" must be relative"},
    {"lun_store_dotdot",
     HDR "\"luns\": [{\"store\": {\"kind\": \"file\", \"path\": \"a/../../x\"}}]}", "\"a/../../x\"",
     "must be relative and stay below"},
    {"lun_alua", HDR "\"luns\": [{\"alua\": {\"state\": \"sleepy\"}}]}", "\"sleepy\"",
     "unknown ALUA state \"sleepy\""},
    {"lun_alua_group", HDR "\"luns\": [{\"alua\": {\"group\": 0}}]}", "0}", "numbered from 1"},
    {"lun_thin", HDR "\"luns\": [{\"thin\": {\"pool\": \"1MiB\", \"soft_threshold\": \"2MiB\"}}]}",
     "\"2MiB\"", "larger than the pool"},
    {"lun_bool", HDR "\"luns\": [{\"write_cache\": \"yes\"}]}", "\"yes\"",
     "expected true or false, got \"yes\""},
    {"lun_read_only", HDR "\"luns\": [{\"lun\": 3,\n \"read_only\": 1}]}", "1}]",
     "\"read_only\": expected true or false, got 1"},
    {"states_dup", HDR "\"states\": [\"a\", \"a\"]}", "\"a\"]", "state \"a\" is listed twice"},
    {"states_star", HDR "\"states\": [\"*\"]}", "\"*\"", "other than \"*\""},
    {"unreachable", HDR "\"states\": [\"a\", \"b\"]}", "\"b\"",
     "state \"b\" is unreachable from the initial state \"a\""},
    {"rules_type", HDR "\"rules\": {}}", "{}", "\"rules\": expected a list"},
    {"rule_key", HDR "\"rules\": [{\"actoin\": {}}]}", "\"actoin\"",
     "unknown key \"actoin\" in rule"},
    {"rule_no_action", HDR "\"rules\": [{\"id\": \"x\"}]}", "{\"id\"",
     "rule \"x\" has no \"action\""},
    {"rule_id_twice",
     HDR "\"rules\": [{\"id\": \"x\", \"action\": {\"drop\": true}}, "
	 "{\"id\": \"x\", \"action\": {\"drop\": true}}]}",
     "\"x\", \"action\": {\"drop\": true}}]", "rule id \"x\" is used twice"},
    {"rule_state", HDR "\"rules\": [{\"states\": [\"nope\"], \"action\": {\"drop\": true}}]}",
     "\"nope\"", "unknown state \"nope\""},
    {"match_key",
     HDR "\"rules\": [{\"match\": {\"klass\": \"read\"}, \"action\": {\"drop\": true}}]}",
     "\"klass\"", "unknown key \"klass\" in match"},
    {"match_class",
     HDR "\"rules\": [{\"match\": {\"class\": \"reed\"}, \"action\": {\"drop\": true}}]}",
     "\"reed\"", "unknown command class \"reed\""},
    {"match_class_opcode",
     HDR "\"rules\": [{\"match\": {\"class\": \"read\", \"opcode\": 40}, "
	 "\"action\": {\"drop\": true}}]}",
     "\"opcode\"", "\"class\" and \"opcode\" exclude each other"},
    {"match_opcode",
     HDR "\"rules\": [{\"match\": {\"opcode\": \"0x1FF\"}, \"action\": {\"drop\": true}}]}",
     "\"0x1FF\"", "out of range (at most 255)"},
    {"match_sa_no_opcode",
     HDR "\"rules\": [{\"match\": {\"service_action\": 18}, \"action\": {\"drop\": true}}]}",
     "18}", "\"service_action\" needs \"opcode\""},
    {"match_sa_opcode_without",
     HDR "\"rules\": [{\"match\": {\"opcode\": \"0x28\", \"service_action\": 1}, "
	 "\"action\": {\"drop\": true}}]}",
     "1}", "opcode 0x28 has no service actions"},
    {"match_sa_range",
     HDR "\"rules\": [{\"match\": {\"opcode\": \"0x9e\", \"service_action\": 32}, "
	 "\"action\": {\"drop\": true}}]}",
     "32}", "expected 0..31, got 32"},
    {"match_lun", HDR "\"rules\": [{\"match\": {\"lun\": 3}, \"action\": {\"drop\": true}}]}", "3}",
     "LUN 3 is not defined in \"luns\""},
    {"match_lba_last",
     HDR "\"rules\": [{\"match\": {\"lba\": {\"first\": 9, \"last\": 2}}, "
	 "\"action\": {\"drop\": true}}]}",
     "2}", "\"last\" 2 is below \"first\""},
    {"match_lba_forms",
     HDR "\"rules\": [{\"match\": {\"lba\": {\"first\": 9, \"beyond\": 2}}, "
	 "\"action\": {\"drop\": true}}]}",
     "{\"first\": 9", "exactly one of"},
    {"match_lba_beyond_lun",
     HDR "\"luns\": [{\"size\": \"1MiB\"}], \"rules\": [{\"match\": "
	 "{\"lba\": {\"first\": 4096}}, \"action\": {\"drop\": true}}]}",
     "{\"first\": 4096}", "LBA range [4096, 4096] lies beyond the end of LUN 0 (2048 blocks"},
    {"match_lba_tur",
     HDR "\"rules\": [{\"match\": {\"class\": \"tur\", \"lba\": {\"first\": 1}}, "
	 "\"action\": {\"drop\": true}}]}",
     "\"lba\"", "never matches TEST UNIT READY"},
    {"match_nth0", HDR "\"rules\": [{\"match\": {\"nth\": 0}, \"action\": {\"drop\": true}}]}",
     "0}", "\"nth\" counts from 1"},
    {"match_nth_every",
     HDR "\"rules\": [{\"match\": {\"nth\": 2, \"every\": 3}, \"action\": "
	 "{\"drop\": true}}]}",
     "\"every\"", "\"nth\" and \"every\" exclude each other"},
    {"match_prob",
     HDR "\"rules\": [{\"match\": {\"probability\": 1.5}, \"action\": {\"drop\": true}}]}", "1.5",
     "expected a number from 0 to 1, got 1.5"},
    {"match_window",
     HDR "\"rules\": [{\"match\": {\"window_ms\": [5]}, \"action\": {\"drop\": true}}]}", "[5]",
     "expected [from, to]"},
    {"match_window_order",
     HDR "\"rules\": [{\"match\": {\"window_ms\": [5, 1]}, \"action\": "
	 "{\"drop\": true}}]}",
     "1]", "window end 1 is before its start"},
    {"action_none", HDR "\"rules\": [{\"action\": {}}]}", "{}", "the action has no verb"},
    {"action_two_verbs", HDR "\"rules\": [{\"action\": {\"status\": \"busy\", \"drop\": true}}]}",
     "\"drop\"", "an action has one verb: \"drop\" cannot join \"status\""},
    {"action_key", HDR "\"rules\": [{\"action\": {\"sens\": \"x\"}}]}", "\"sens\"",
     "unknown key \"sens\" in action"},
    {"sense_key",
     HDR "\"rules\": [{\"action\": {\"sense\": \"MEDIUM_EROR/UNRECOVERED_READ_ERROR\"}}]}",
     "\"MEDIUM_EROR", "unknown sense key \"MEDIUM_EROR\""},
    {"sense_asc", HDR "\"rules\": [{\"action\": {\"sense\": \"MEDIUM_ERROR/UNRECOVERED\"}}]}",
     "\"MEDIUM_ERROR/UNRECOVERED\"", "unknown sense name \"UNRECOVERED\""},
    {"sense_noslash", HDR "\"rules\": [{\"action\": {\"sense\": \"MEDIUM_ERROR\"}}]}",
     "\"MEDIUM_ERROR\"", "expected \"KEY/ASC_NAME\""},
    {"sense_hex", HDR "\"rules\": [{\"action\": {\"sense\": \"MEDIUM_ERROR/0x1G/00\"}}]}",
     "\"MEDIUM_ERROR/0x1G/00\"", "invalid ASC/ASCQ numbers"},
    {"sense_obj", HDR "\"rules\": [{\"action\": {\"sense\": {\"key\": 3}}}]}", "{\"key\": 3}",
     "needs \"key\" and \"asc\""},
    {"sense_obj_key", HDR "\"rules\": [{\"action\": {\"sense\": {\"key\": 16, \"asc\": 17}}}]}",
     "16", "out of range (at most 15)"},
    {"info", HDR "\"rules\": [{\"action\": {\"status\": \"busy\", \"info\": \"lba\"}}]}",
     "\"info\"", "\"info\" only goes with \"sense\""},
    {"overtake_ua_hold",
     HDR "\"rules\": [{\"action\": {\"hold\": \"forever\", \"overtake_ua\": true}}]}",
     "\"overtake_ua\"", "\"overtake_ua\" only goes with \"sense\" or \"status\""},
    {"overtake_ua_value",
     HDR "\"rules\": [{\"action\": {\"status\": \"busy\", \"overtake_ua\": 1}}]}", "1}",
     "expected true or false"},
    {"action_key_suggest",
     HDR "\"rules\": [{\"action\": {\"status\": \"busy\", \"overtake_au\": true}}]}",
     "\"overtake_au\"", "(did you mean \"overtake_ua\"?)"},
    {"info_value",
     HDR "\"rules\": [{\"action\": {\"sense\": \"MEDIUM_ERROR/11/00\", \"info\": 1}}]}", "1}",
     "\"info\": expected \"lba\", got 1"},
    {"format",
     HDR "\"rules\": [{\"action\": {\"sense\": \"MEDIUM_ERROR/11/00\", \"format\": \"long\"}}]}",
     "\"long\"", "expected \"fixed\" or \"descriptor\""},
    {"status", HDR "\"rules\": [{\"action\": {\"status\": \"bizzy\"}}]}", "\"bizzy\"",
     "unknown status \"bizzy\""},
    {"hold", HDR "\"rules\": [{\"action\": {\"hold\": \"until_done\"}}]}", "\"until_done\"",
     "unknown hold \"until_done\""},
    {"delay_hold", HDR "\"rules\": [{\"action\": {\"hold\": \"forever\", \"delay_ms\": 3}}]}",
     "\"delay_ms\"", "\"delay_ms\" cannot be combined with \"hold\""},
    {"delay_dist", HDR "\"rules\": [{\"action\": {\"delay_ms\": {\"dist\": \"pareto\"}}}]}",
     "\"pareto\"", "unknown delay distribution \"pareto\""},
    {"delay_dist_param",
     HDR "\"rules\": [{\"action\": {\"delay_ms\": {\"dist\": \"uniform\", \"min\": 1}}}]}",
     "{\"dist\"", "distribution \"uniform\" needs \"max\""},
    {"delay_lognormal",
     HDR "\"rules\": [{\"action\": {\"delay_ms\": {\"dist\": \"lognormal\", "
	 "\"median\": 10, \"p99\": 5}}}]}",
     "{\"dist\"", "lognormal needs 0 < median <= p99"},
    {"drop_false", HDR "\"rules\": [{\"action\": {\"drop\": false}}]}", "false",
     "\"drop\" can only be true"},
    {"short", HDR "\"rules\": [{\"action\": {\"short\": 3}}]}", "3}", "expected {\"blocks\": N}"},
    {"corrupt", HDR "\"rules\": [{\"action\": {\"corrupt\": {\"bytes\": 0}}}]}", "0}",
     "corrupting 0 bytes does nothing"},
    {"ua", HDR "\"rules\": [{\"action\": {\"ua\": \"29\"}}]}", "\"29\"",
     "unknown additional sense code \"29\""},
    {"resize", HDR "\"rules\": [{\"action\": {\"resize\": \"big\"}}]}", "\"big\"",
     "invalid size \"big\""},
    {"resize_zero", HDR "\"rules\": [{\"action\": {\"resize\": 0}}]}", "0}",
     "\"resize\": 0 bytes: a LUN has at least one block"},
    {"resize_0blocks", HDR "\"rules\": [{\"action\": {\"resize\": \"0blocks\"}}]}", "\"0blocks\"",
     "\"resize\": 0 blocks: a LUN has at least one block"},
    {"resize_huge", HDR "\"rules\": [{\"action\": {\"resize\": \"140737488355328blocks\"}}]}",
     "\"140737488355328blocks\"", "blocks: more than the largest LUN, 140737488355327 blocks"},
    {"alua_action", HDR "\"rules\": [{\"action\": {\"alua\": \"up\"}}]}", "\"up\"",
     "unknown ALUA state \"up\""},
    {"set_state", HDR "\"rules\": [{\"action\": {\"set_state\": \"gone\"}}]}", "\"gone\"",
     "unknown state \"gone\""},
    {"until", HDR "\"rules\": [{\"action\": {\"drop\": true}, \"until\": \"read\"}]}", "\"read\"",
     "\"until\": expected \"written\""},
    {"tmf_key", HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_rest\": {}}}", "\"lun_rest\"",
     "unknown key \"lun_rest\" in tmf"},
    {"tmf_respond",
     HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_reset\": {\"respond\": \"later\"}}}",
     "\"later\"", "unknown TMF response \"later\""},
    {"tmf_then_key",
     HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_reset\": {\"then\": {\"uaa\": 1}}}}",
     "\"uaa\"", "unknown key \"uaa\" in then"},
    {"tmf_then_never",
     HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_reset\": {\"respond\": "
	 "\"never\", \"then\": {}}}}",
     "\"then\"", "\"then\" applies only to a TMF that completes"},
    {"tmf_disarm",
     HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_reset\": {\"then\": "
	 "{\"disarm\": [\"ghost\"]}}}}",
     "\"ghost\"", "\"disarm\" names rule \"ghost\", which does not exist"},
    {"tmf_tcmu",
     HDR "\"frontends\": [\"tcmu\"], \"tmf\": {\"lun_reset\": {\"respond\": \"never\"}}}",
     "\"lun_reset\"", "cannot be carried out under the tcmu front end"},
    {"transport_tcmu",
     HDR "\"frontends\": [\"tcmu\"], \"transport\": {\"rules\": [{\"match\": "
	 "{\"pdu\": \"nop_out\"}, \"action\": \"drop\"}]}}",
     "\"rules\": [{", "transport rules cannot be carried out under the tcmu front end"},
    {"session_tcmu",
     HDR "\"frontends\": [\"tcmu\"], \"transport\": {\"session\": "
	 "{\"ignore_nop_out\": true}}}",
     "\"session\"", "session conditions cannot be carried out under the tcmu"},
    {"frontend_option", HDR "\"frontends\": [\"iscsi\"]}", "[\"iscsi\"]",
     "the scenario does not name front end \"tcmu\"", FL_FE_TCMU},
    {"xrule_pdu",
     HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"rules\": [{\"match\": {\"pdu\": "
	 "\"ping\"}, \"action\": \"drop\"}]}}",
     "\"ping\"", "unknown PDU kind \"ping\""},
    {"xrule_action",
     HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"rules\": [{\"match\": "
	 "{\"pdu\": \"nop_out\"}, \"action\": \"explode\"}]}}",
     "\"explode\"", "transport action: expected \"drop\", \"close\""},
    {"xrule_nomatch",
     HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"rules\": [{\"action\": "
	 "\"drop\"}]}}",
     "{\"action\": \"drop\"}", "needs \"match\" with \"pdu\""},
    {"session_key", HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"session\": {\"nop\": 1}}}",
     "\"nop\"", "unknown key \"nop\" in session"},
    {"session_state",
     HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"session\": {\"states\": "
	 "{\"zz\": {}}}}}",
     "{}}}}", "unknown state \"zz\""},
    {"transition_on",
     HDR "\"states\": [\"a\", \"b\"], \"transitions\": [{\"to\": \"b\", \"on\": "
	 "{\"commands\": 1, \"after_ms\": 2}}]}",
     "{\"commands\"", "\"on\": expected one event"},
    {"transition_on_key",
     HDR "\"states\": [\"a\", \"b\"], \"transitions\": [{\"to\": \"b\", "
	 "\"on\": {\"reboot\": true}}]}",
     "\"reboot\"", "unknown key \"reboot\" in on"},
    {"transition_to",
     HDR "\"states\": [\"a\", \"b\"], \"transitions\": [{\"from\": \"a\", "
	 "\"on\": {\"commands\": 1}}]}",
     "{\"from\"", "a transition needs \"to\""},
    {"transition_tmf",
     HDR "\"frontends\": [\"iscsi\"], \"states\": [\"a\", \"b\"], \"transitions\": "
	 "[{\"to\": \"b\", \"on\": {\"tmf\": \"reboot\"}}]}",
     "\"reboot\"", "unknown TMF \"reboot\""},
    {"transition_tcmu",
     HDR "\"frontends\": [\"tcmu\"], \"states\": [\"a\", \"b\"], "
	 "\"transitions\": [{\"to\": \"b\", \"on\": {\"reset\": true}}]}",
     "{\"reset\"", "never fires under the tcmu front end"},
    {"check_key", HDR "\"check\": {\"workloads\": []}}", "\"workloads\"",
     "unknown key \"workloads\" in check"},
    {"check_path", HDR "\"check\": {\"paths\": [\"fc\"]}}", "\"fc\"", "unknown path \"fc\""},
    {"check_op", HDR "\"check\": {\"workload\": [{\"op\": \"dance\"}]}}", "\"dance\"",
     "workload step needs \"op\""},
    {"check_knob", HDR "\"check\": {\"knobs\": {\"timeout\": 5}}}", "\"timeout\"",
     "unknown key \"timeout\" in knobs"},
    {"thin_type", HDR "\"luns\": [{\"thin\": 3}]}", "3}",
     "\"thin\": expected an object or true/false, got 3"},
    {"alua_type", HDR "\"luns\": [{\"alua\": 1}]}", "1}", "\"alua\": expected an object, got 1"},
    {"store_type", HDR "\"luns\": [{\"store\": \"mem\"}]}", "\"mem\"",
     "\"store\": expected an object, got \"mem\""},
    {"lun_type", HDR "\"luns\": [7]}", "7]", "a LUN must be an object, got 7"},
    {"lun_no_block", HDR "\"luns\": [{\"size\": 0}]}", "0}", "\"size\": 0 holds no block"},
    {"luns_type", HDR "\"luns\": []}", "[]", "\"luns\": expected a list of 1 to 256 LUNs, got []"},
    {"states_type", HDR "\"states\": \"a\"}", "\"a\"",
     "\"states\": expected a list of 1 to 64 state names"},
    {"workload_type", HDR "\"check\": {\"workload\": {}}}", "{}}",
     "\"workload\": expected a list, got {}"},
    {"expect_entry", HDR "\"check\": {\"expect\": [3]}}", "3]",
     "each expectation must be an object, got 3"},
    {"expect_runner", HDR "\"check\": {\"expect\": [{\"step\": 0, \"runner\": \"kernel\"}]}}",
     "\"kernel\"", "unknown runner \"kernel\" (expected \"vm\" or \"libiscsi\")"},
    {"expect_runner_type", HDR "\"check\": {\"expect\": [{\"runner\": [\"vm\"]}]}}", "[\"vm\"]",
     "unknown runner [\"vm\"]"},
    {"check_type", HDR "\"check\": []}", "[]", "\"check\": expected an object, got []"},
    {"paths_type", HDR "\"check\": {\"paths\": \"iscsi\"}}", "\"iscsi\"",
     "\"paths\": expected a list, got \"iscsi\""},
    {"knobs_type", HDR "\"check\": {\"knobs\": 5}}", "5}", "\"knobs\": expected an object, got 5"},
    {"arm_value", HDR "\"check\": {\"arm\": \"login\"}}", "\"login\"",
     "\"arm\": expected \"serve\" or \"workload\", got \"login\""},
    {"knob_value", HDR "\"check\": {\"knobs\": {\"timeout_s\": [1]}}}", "[1]",
     "\"timeout_s\": expected a non-negative integer, got [1]"},
    {"frontends_type", HDR "\"frontends\": []}", "[]", "\"frontends\": expected a non-empty list"},
    {"emulates_type", HDR "\"emulates\": \"x\"}", "\"x\"",
     "\"emulates\": expected an object, got \"x\""},
    {"behaviour_type", HDR "\"emulates\": {\"behaviour\": 1}}", "1}",
     "\"behaviour\": expected a string, got 1"},
    {"references_type", HDR "\"emulates\": {\"references\": \"r\"}}", "\"r\"",
     "\"references\": expected a list of strings"},
    {"reference_type", HDR "\"emulates\": {\"references\": [1]}}", "1]",
     "a reference must be a string, got 1"},
    {"target_type", HDR "\"target\": \"iqn.x\"}", "\"iqn.x\"",
     "\"target\": expected an object, got \"iqn.x\""},
    {"number_type", HDR "\"seed\": true}", "true",
     "\"seed\": expected a non-negative integer, got true"},
    {"state_type", HDR "\"rules\": [{\"action\": {\"set_state\": 4}}]}", "4}",
     "\"set_state\": expected a state name, got 4"},
    {"states_empty", HDR "\"rules\": [{\"states\": [], \"action\": {\"drop\": true}}]}", "[]",
     "\"states\": expected a non-empty list of state names"},
    {"ua_type", HDR "\"rules\": [{\"action\": {\"ua\": 41}}]}", "41",
     "\"ua\": expected \"AA/QQ\" (hex) or an ASC/ASCQ name, got 41"},
    {"sense_type", HDR "\"rules\": [{\"action\": {\"sense\": 3}}]}", "3}",
     "\"sense\": expected \"KEY/ASC_NAME\""},
    {"every0", HDR "\"rules\": [{\"match\": {\"every\": 0}, \"action\": {\"drop\": true}}]}", "0}",
     "\"every\" must be at least 1, got 0"},
    {"times0", HDR "\"rules\": [{\"match\": {\"times\": 0}, \"action\": {\"drop\": true}}]}", "0}",
     "\"times\" must be at least 1, got 0"},
    {"class_empty", HDR "\"rules\": [{\"match\": {\"class\": []}, \"action\": {\"drop\": true}}]}",
     "[]", "\"class\": the list is empty"},
    {"lba_type", HDR "\"rules\": [{\"match\": {\"lba\": 5}, \"action\": {\"drop\": true}}]}", "5}",
     "\"lba\": expected {first, last}"},
    {"crosses_false",
     HDR
     "\"rules\": [{\"match\": {\"lba\": {\"crosses_end\": false}}, \"action\": {\"drop\": true}}]}",
     "false", "\"crosses_end\" can only be true"},
    {"lba_no_first",
     HDR "\"rules\": [{\"match\": {\"lba\": {\"last\": 5}}, \"action\": {\"drop\": true}}]}",
     "{\"last\"", "\"lba\" needs \"first\""},
    {"match_type", HDR "\"rules\": [{\"match\": [], \"action\": {\"drop\": true}}]}", "[]",
     "\"match\": expected an object, got []"},
    {"initiator_type",
     HDR "\"rules\": [{\"match\": {\"initiator\": 1}, \"action\": {\"drop\": true}}]}", "1}",
     "\"initiator\": expected a glob string, got 1"},
    {"delay_type", HDR "\"rules\": [{\"action\": {\"delay_ms\": \"x\"}}]}", "\"x\"",
     "\"delay_ms\": expected milliseconds or {dist, ...}, got \"x\""},
    {"uniform_order",
     HDR
     "\"rules\": [{\"action\": {\"delay_ms\": {\"dist\": \"uniform\", \"min\": 5, \"max\": 1}}}]}",
     "1}}}", "\"max\" is below \"min\""},
    {"action_type", HDR "\"rules\": [{\"action\": 1}]}", "1}",
     "\"action\": expected an object, got 1"},
    {"format_verb", HDR "\"rules\": [{\"action\": {\"status\": \"busy\", \"format\": \"fixed\"}}]}",
     "\"format\"", "\"format\" only goes with \"sense\""},
    {"corrupt_type", HDR "\"rules\": [{\"action\": {\"corrupt\": 3}}]}", "3}",
     "\"corrupt\": expected {\"bytes\": N}, got 3"},
    {"rule_type", HDR "\"rules\": [3]}", "3]", "a rule must be an object, got 3"},
    {"rule_id_type", HDR "\"rules\": [{\"id\": \"\", \"action\": {\"drop\": true}}]}", "\"\"",
     "\"id\": expected a non-empty string, got \"\""},
    {"lba_beyond_open",
     HDR "\"luns\": [{\"size\": \"1MiB\"}], \"rules\": [{\"match\": {\"lba\": {\"beyond\": 5000}}, "
	 "\"action\": {\"drop\": true}}]}",
     "{\"beyond\"", "LBA range from 5000 lies beyond the end of LUN 0"},
    {"tmf_case_type", HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_reset\": 5}}", "5}",
     "\"lun_reset\": expected an object {respond, delay_ms, states, then}, got 5"},
    {"tmf_then_type", HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_reset\": {\"then\": 1}}}",
     "1}", "\"then\": expected an object, got 1"},
    {"tmf_disarm_type",
     HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_reset\": {\"then\": {\"disarm\": \"r\"}}}}",
     "\"r\"", "\"disarm\": expected a list of rule ids, got \"r\""},
    {"tmf_disarm_item",
     HDR "\"frontends\": [\"iscsi\"], \"tmf\": {\"lun_reset\": {\"then\": {\"disarm\": [1]}}}}",
     "1]", "a rule id must be a string, got 1"},
    {"tmf_type", HDR "\"frontends\": [\"iscsi\"], \"tmf\": []}", "[]",
     "\"tmf\": expected an object, got []"},
    {"xrule_type", HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"rules\": [1]}}", "1]",
     "a transport rule must be an object, got 1"},
    {"xrule_id",
     HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"rules\": [{\"id\": 1, \"match\": {\"pdu\": "
	 "\"nop_out\"}, \"action\": \"drop\"}]}}",
     "1, \"match", "\"id\": expected a non-empty string, got 1"},
    {"session_type", HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"session\": 1}}", "1}",
     "\"session\": expected an object, got 1"},
    {"logout_type",
     HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"session\": {\"request_logout\": 5}}}", "5}",
     "\"request_logout\": expected {after_ms, wait_s} or true/false"},
    {"session_states_type",
     HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"session\": {\"states\": []}}}", "[]",
     "\"states\": expected {STATE: {...}}, got []"},
    {"transport_type", HDR "\"frontends\": [\"iscsi\"], \"transport\": 1}", "1}",
     "\"transport\": expected an object, got 1"},
    {"transport_rules_type", HDR "\"frontends\": [\"iscsi\"], \"transport\": {\"rules\": {}}}",
     "{}", "\"rules\": expected a list, got {}"},
    {"transitions_type", HDR "\"transitions\": {}}", "{}",
     "\"transitions\": expected a list, got {}"},
    {"transition_type", HDR "\"transitions\": [1]}", "1]", "a transition must be an object, got 1"},
    {"transition_commands0",
     HDR
     "\"states\": [\"a\", \"b\"], \"transitions\": [{\"to\": \"b\", \"on\": {\"commands\": 0}}]}",
     "0}", "\"commands\" must be at least 1, got 0"},
    {"transition_login_false",
     HDR
     "\"states\": [\"a\", \"b\"], \"transitions\": [{\"to\": \"b\", \"on\": {\"login\": false}}]}",
     "false", "\"login\" can only be true"},
    {"number_string", HDR "\"seed\": \"12ab\"}", "\"12ab\"",
     "\"seed\": expected a non-negative integer, got \"12ab\""},
    {"suggest_key", HDR "\"rules\": [{\"actoin\": {}}]}", "\"actoin\"",
     "unknown key \"actoin\" in rule (did you mean \"action\"?)"},
    {"suggest_sense",
     HDR "\"rules\": [{\"action\": {\"sense\": \"MEDUIM_ERROR/UNRECOVERED_READ_EROR\"}}]}",
     "\"MEDUIM",
     "unknown sense key \"MEDUIM_ERROR\" in \"MEDUIM_ERROR/UNRECOVERED_READ_EROR\" (did you mean "
     "\"MEDIUM_ERROR\"?)"},
    {"suggest_asc",
     HDR "\"rules\": [{\"action\": {\"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_EROR\"}}]}",
     "\"MEDIUM", "(did you mean \"UNRECOVERED_READ_ERROR\"?)"},
    {"emulates_key", HDR "\"emulates\": {\"behavior\": \"x\"}}", "\"behavior\"",
     "unknown key \"behavior\" in emulates"},
    {"vpd_own_page", HDR "\"luns\": [{\"vpd\": {\"0x83\": \"00 01\"}}]}", "{\"0x83",
     "\"vpd\": page 0x83 is one the LUN builds itself"},
    {"vpd_hex", HDR "\"luns\": [{\"vpd\": {\"0x86\": \"00 0g\"}}]}", "{\"0x86",
     "\"vpd\": page 0x86: expected at most 508 bytes in hex, got \"00 0g\""},
    {"vpd_code", HDR "\"luns\": [{\"vpd\": {\"86\": \"00\"}}]}", "{\"86",
     "\"vpd\": \"86\": a page code is written 0x01 to 0xff"},
    {"prefetch", HDR "\"luns\": [{\"prefetch\": \"met\"}]}", "\"met\"",
     "\"prefetch\": expected \"condition_met\" or \"good\", got \"met\""},
    {"naa16_not_6", HDR "\"luns\": [{\"naa\": \"0x5001405a5e1f0c277d44b1e9c3afa017\"}]}",
     "\"0x5001405a", "a 16-byte \"naa\" is \"0x\" and 32 hex digits starting with 6"},
    {"vpd_not_object", HDR "\"luns\": [{\"vpd\": [1]}]}", "[1]",
     "\"vpd\": expected an object of at most 16 pages"},
};

/* Every bad case yields -EINVAL, no scenario, and the expected first message. */
static void test_every_error_message(void)
{
	fl_check_scenarios_refused(bad_cases, sizeof(bad_cases) / sizeof(bad_cases[0]), true);
}

/* A file with several problems reports them all, in position order. */
static void test_all_errors_reported(void)
{
	const char *text =
	    "{\n"
	    "  \"faultlun\": 1,\n"
	    "  \"luns\": [{\"vendr\": \"X\"}],\n"
	    "  \"rules\": [\n"
	    "    {\"match\": {\"class\": \"wrte\"}, \"action\": {\"sense\": \"X/Y\"}},\n"
	    "    {\"action\": {\"hold\": \"soon\"}}\n"
	    "  ]\n"
	    "}\n";
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;

	CU_ASSERT_EQUAL(fl_scenario_load_string("m.json", text, 0, &sc, &d), -EINVAL);
	CU_ASSERT_PTR_NULL(sc);
	CU_ASSERT_EQUAL(d.n, 4);
	if (d.n == 4) {
		CU_ASSERT_EQUAL(d.v[0].line, 3);
		CU_ASSERT_EQUAL(d.v[1].line, 5);
		CU_ASSERT_EQUAL(d.v[2].line, 5);
		CU_ASSERT_TRUE(d.v[1].col < d.v[2].col);
		CU_ASSERT_EQUAL(d.v[3].line, 6);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.v[3].msg, "\"soon\""));
	}
	fl_diags_free(&d);
}

/* A good scenario comes back with the values it gives. */
/* Whether a sense action's trace fields say sense, and the INFORMATION LBA when info. */
static bool traced_sense(const struct sc_action *a, const char *sense, bool info)
{
	json_t *o = json_object();
	const char *got;
	bool ok;

	fl_actions[VERB_SENSE]->trace(o, a, 42);
	got = json_string_value(json_object_get(o, "sense"));
	ok = a->verb == VERB_SENSE && got && !strcmp(got, sense) &&
	     (json_integer_value(json_object_get(o, "info")) == 42) == info;
	json_decref(o);
	return ok;
}

static void test_good_scenario_values(void)
{
	const char *text =
	    "{\"faultlun\": 1, \"name\": \"good\", \"description\": \"d\", \"seed\": \"0x10\","
	    " \"frontends\": [\"iscsi\"], \"target\": {\"iqn\": \"iqn.2026-12.org.x:y\"},"
	    " \"luns\": [{\"lun\": 2, \"size\": \"8MiB\", \"block_size\": 4096, \"vendor\": "
	    "\"ACME\", \"naa\": \"0x6001405A5E1F0C277D44B1E9C3AFA017\","
	    "  \"write_cache\": false, \"read_only\": true, \"thin\": {\"pool\": \"4MiB\", "
	    "\"soft_threshold\": "
	    "\"1MiB\"},"
	    "  \"alua\": {\"group\": 3, \"state\": \"standby\"}}],"
	    " \"states\": [\"ok\", \"bad\"],"
	    " \"transitions\": [{\"from\": \"ok\", \"to\": \"bad\", \"on\": {\"commands\": 5}}],"
	    " \"rules\": [{\"id\": \"r\", \"states\": [\"bad\"], \"match\": {\"lun\": 2, \"class\":"
	    "   [\"read\"], \"lba\": {\"first\": 10, \"last\": 20}, \"every\": 2, \"probability\": "
	    "0.5},"
	    "   \"action\": {\"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\", \"info\": "
	    "\"lba\"},"
	    "   \"until\": \"written\"},"
	    "   {\"action\": {\"sense\": {\"key\": \"DATA_PROTECT\", \"asc\": \"0x27\", \"ascq\": "
	    "7}}},"
	    "   {\"action\": {\"delay_ms\": {\"dist\": \"lognormal\", \"median\": 2, \"p99\": "
	    "50}}},"
	    "   {\"action\": {\"sense\": \"0x4/0x44/0x71\"}}],"
	    " \"tmf\": {\"lun_reset\": [{\"states\": [\"bad\"], \"respond\": \"never\"},"
	    "   {\"then\": {\"ua\": null, \"state\": \"ok\", \"disarm\": [\"r\"]}}]},"
	    " \"check\": {\"paths\": [\"iscsi\"], \"workload\": [{\"op\": \"read\", \"lba\": 0}]}}";
	struct fl_diags d = {0};
	struct fl_scenario *sc = fl_scenario_loads("g.json", text, 0, &d);
	struct fl_lun_config cfg;
	uint16_t id;

	fl_diags_print(&d, stderr);
	CU_ASSERT_EQUAL(d.n, 0);
	CU_ASSERT_STRING_EQUAL(fl_scenario_name(sc), "good");
	CU_ASSERT_STRING_EQUAL(fl_scenario_description(sc), "d");
	CU_ASSERT_EQUAL(fl_scenario_frontends(sc), FL_FE_ISCSI);
	CU_ASSERT_STRING_EQUAL(fl_scenario_target_iqn(sc), "iqn.2026-12.org.x:y");
	CU_ASSERT_TRUE(sc->seed_set);
	CU_ASSERT_EQUAL(sc->seed, 16);
	CU_ASSERT_EQUAL(fl_scenario_lun_count(sc), 1);
	CU_ASSERT_EQUAL(fl_scenario_lun(sc, 0, &id, &cfg), 0);
	CU_ASSERT_EQUAL(id, 2);
	CU_ASSERT_EQUAL(cfg.num_blocks, 2048);
	CU_ASSERT_EQUAL(cfg.block_size, 4096);
	CU_ASSERT_STRING_EQUAL(cfg.vendor, "ACME");
	CU_ASSERT_STRING_EQUAL(cfg.product, "VIRTUAL-DISK");
	CU_ASSERT_TRUE(cfg.naa16);
	CU_ASSERT_EQUAL(cfg.naa, 0x6001405a5e1f0c27ull);
	CU_ASSERT_EQUAL(cfg.naa_ext, 0x7d44b1e9c3afa017ull);
	CU_ASSERT_FALSE(cfg.write_cache);
	CU_ASSERT_TRUE(cfg.read_only);
	CU_ASSERT_TRUE(cfg.thin);
	CU_ASSERT_EQUAL(cfg.pool_blocks, 1024);
	CU_ASSERT_EQUAL(cfg.soft_threshold, 256);
	CU_ASSERT_EQUAL(cfg.tpg_id, 3);
	CU_ASSERT_EQUAL(cfg.alua_state, FL_ALUA_STANDBY);
	CU_ASSERT_EQUAL(fl_scenario_lun(sc, 1, &id, &cfg), -ENOENT);
	CU_ASSERT_EQUAL(sc->nstates, 2);
	CU_ASSERT_EQUAL(sc->ntransitions, 1);
	CU_ASSERT_EQUAL(sc->transitions[0].on, ON_COMMANDS);
	CU_ASSERT_EQUAL(sc->transitions[0].n, 5);
	CU_ASSERT_EQUAL_FATAL(sc->nrules, 4);
	CU_ASSERT_STRING_EQUAL(sc->rules[0].id, "r");
	CU_ASSERT_EQUAL(sc->rules[0].states, 2);
	CU_ASSERT_EQUAL(sc->rules[0].m.class_mask, 1u << FL_CLASS_READ);
	CU_ASSERT_EQUAL(sc->rules[0].m.lba, LBA_RANGE);
	CU_ASSERT_EQUAL(sc->rules[0].m.first, 10);
	CU_ASSERT_EQUAL(sc->rules[0].m.last, 20);
	CU_ASSERT_EQUAL(sc->rules[0].m.count.every, 2);
	CU_ASSERT_DOUBLE_EQUAL(sc->rules[0].m.count.prob, 0.5, 1e-9);
	CU_ASSERT_EQUAL(sc->rules[0].a.verb, VERB_SENSE);
	CU_ASSERT_TRUE(traced_sense(&sc->rules[0].a, "3/11/00", true));
	CU_ASSERT_TRUE(sc->rules[0].until_written);
	CU_ASSERT_STRING_EQUAL(sc->rules[1].id, "rule-1");
	CU_ASSERT_TRUE(traced_sense(&sc->rules[1].a, "7/27/07", false));
	CU_ASSERT_EQUAL(sc->rules[2].a.verb, VERB_DELAY);
	CU_ASSERT_TRUE(traced_sense(&sc->rules[3].a, "4/44/71", false));
	CU_ASSERT_EQUAL(sc->rules[2].a.delay.dist, DIST_LOGNORMAL);
	CU_ASSERT_EQUAL(sc->tmf[FL_TMF_LUN_RESET].n, 2);
	CU_ASSERT_EQUAL(sc->tmf[FL_TMF_LUN_RESET].cases[0].respond, FL_TMF_RESP_NONE);
	CU_ASSERT_FALSE(sc->tmf[FL_TMF_LUN_RESET].cases[1].ua);
	CU_ASSERT_EQUAL(sc->tmf[FL_TMF_LUN_RESET].cases[1].then_state, 0);
	CU_ASSERT_EQUAL(sc->tmf[FL_TMF_LUN_RESET].cases[1].ndisarm, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fl_scenario_check(sc));
	CU_ASSERT_TRUE(fl_scenario_check(sc)->nsteps > 0);
	fl_scenario_free(sc);
	fl_diags_free(&d);
}

/* Defaults: one 1 GiB LUN 0, one state, every front end. */
static void test_defaults(void)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	struct fl_lun_config cfg;
	uint16_t id;

	CU_ASSERT_EQUAL_FATAL(fl_scenario_load_string("m.json", "{\"faultlun\": 1}", 0, &sc, &d),
			      0);
	CU_ASSERT_EQUAL(fl_scenario_lun_count(sc), 1);
	fl_scenario_lun(sc, 0, &id, &cfg);
	CU_ASSERT_EQUAL(id, 0);
	CU_ASSERT_EQUAL(cfg.num_blocks, (1u << 30) / 512);
	CU_ASSERT_TRUE(cfg.write_cache);
	CU_ASSERT_FALSE(cfg.read_only);
	CU_ASSERT_EQUAL(cfg.store, FL_STORE_MEMORY);
	fl_scenario_set_read_only(sc); /* serve --read-only */
	fl_scenario_lun(sc, 0, &id, &cfg);
	CU_ASSERT_TRUE(cfg.read_only);
	CU_ASSERT_EQUAL(sc->nstates, 1);
	CU_ASSERT_STRING_EQUAL(sc->states[0], "default");
	CU_ASSERT_EQUAL(fl_scenario_frontends(sc), FL_FE_ISCSI | FL_FE_TCMU | FL_FE_VM);
	CU_ASSERT_PTR_NULL(fl_scenario_check(sc));
	fl_scenario_free(sc);
	fl_diags_free(&d);
}

/*
 * A check's "arm": "workload", and the scenario without its faults a runner
 * serves until then: the LUNs and the check stay, the rules, tmf, transport,
 * transitions and states go.
 */
static void test_unarmed(void)
{
	static const char text[] =
	    "{\"faultlun\": 1, \"name\": \"u\", \"frontends\": [\"iscsi\"], \"luns\": [{\"lun\": "
	    "3, \"size\": \"8MiB\"}],"
	    " \"states\": [\"a\", \"b\"],"
	    " \"transitions\": [{\"from\": \"a\", \"to\": \"b\", \"on\": {\"commands\": 1}}],"
	    " \"rules\": [{\"match\": {\"class\": \"read\"}, \"action\": {\"status\": \"busy\"}}],"
	    " \"tmf\": {\"lun_reset\": {\"respond\": \"never\"}},"
	    " \"transport\": {\"rules\": [{\"match\": {\"pdu\": \"data_in\"}, \"action\": "
	    "\"drop\"}]},"
	    " \"check\": {\"arm\": \"workload\", \"workload\": [{\"op\": \"tur\"}]}}";
	char path[] = "/tmp/fl-unarmed-XXXXXX", *u;
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	struct fl_lun_config cfg;
	uint16_t id;
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	CU_ASSERT_EQUAL_FATAL(fl_scenario_load_file(path, 0, &sc, &d), 0);
	CU_ASSERT_TRUE(fl_scenario_check(sc)->arm_at_workload);
	CU_ASSERT_EQUAL(sc->nrules, 1);
	fl_scenario_free(sc);
	u = fl_scenario_unarmed_text(path);
	unlink(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_EQUAL_FATAL(fl_scenario_load_string("u", u, 0, &sc, &d), 0);
	free(u);
	CU_ASSERT_EQUAL(sc->nrules, 0);
	CU_ASSERT_EQUAL(sc->nxrules, 0);
	CU_ASSERT_EQUAL(sc->ntransitions, 0);
	CU_ASSERT_EQUAL(sc->nstates, 1);
	for (size_t i = 0; i < SC_TMF_NR; i++)
		CU_ASSERT_EQUAL(sc->tmf[i].n, 0);
	fl_scenario_lun(sc, 0, &id, &cfg);
	CU_ASSERT_EQUAL(id, 3);
	CU_ASSERT_TRUE(fl_scenario_check(sc)->arm_at_workload);
	fl_scenario_free(sc);
	CU_ASSERT_PTR_NULL(fl_scenario_unarmed_text("/nonexistent/fl-unarmed.json"));
	CU_ASSERT_EQUAL(errno, ENOENT);
	fl_diags_free(&d);
}

/* Files: a missing file is -ENOENT with no diagnostic; the test data all lint clean. */
static void test_files(void)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;

	CU_ASSERT_EQUAL(fl_scenario_load_file("/nonexistent/x.json", 0, &sc, &d), -ENOENT);
	CU_ASSERT_EQUAL(d.n, 0);
	CU_ASSERT_EQUAL(fl_scenario_load_file(FL_TEST_DATA "/doc-example.json", 0, &sc, &d), 0);
	fl_diags_print(&d, stderr);
	CU_ASSERT_PTR_NOT_NULL(sc);
	fl_scenario_free(sc);
	fl_diags_free(&d);
}

/* Sense names resolve both ways. */
static void test_sense_names(void)
{
	uint8_t k, a, q;

	CU_ASSERT_EQUAL(sense_key_by_name("DATA_PROTECT", &k), 0);
	CU_ASSERT_EQUAL(k, 7);
	CU_ASSERT_EQUAL(sense_asc_by_name("SPACE_ALLOCATION_FAILED_WRITE_PROTECT", &a, &q), 0);
	CU_ASSERT_EQUAL(a, 0x27);
	CU_ASSERT_EQUAL(q, 0x07);
	CU_ASSERT_EQUAL(sense_asc_by_name("LBA_OUT_OF_RANGE", &a, &q), 0);
	CU_ASSERT_EQUAL(a, 0x21);
	CU_ASSERT_EQUAL(sense_asc_by_name("NO_SUCH_THING", &a, &q), -ENOENT);
	CU_ASSERT_STRING_EQUAL(sense_key_name_of(3), "MEDIUM_ERROR");
	CU_ASSERT_STRING_EQUAL(sense_asc_name_of(0x04, 0x0a), "ASYMMETRIC_ACCESS_STATE_TRANSITION");
	/* every name is unique */
	for (size_t i = 0; i < sense_asc_count; i++)
		for (size_t j = 0; j < i; j++)
			CU_ASSERT_NOT_EQUAL(
			    strcmp(sense_asc_names[i].name, sense_asc_names[j].name), 0);
}

FL_TESTS(scenario_tests, FL_TEST(test_every_error_message), FL_TEST(test_all_errors_reported),
	 FL_TEST(test_good_scenario_values), FL_TEST(test_defaults), FL_TEST(test_unarmed),
	 FL_TEST(test_files), FL_TEST(test_sense_names));

FL_SUITES(FL_SUITE("scenario", NULL, NULL, scenario_tests));
