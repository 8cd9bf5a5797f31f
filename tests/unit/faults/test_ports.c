/* SPDX-License-Identifier: MIT */
/*
 * test_ports.c - the fault engine on a two-port scenario (docs/multipath.md):
 * SCSI rules matching "port" and "port_group" act on the commands of that
 * port only; the alua action with a group changes that group alone, and a
 * command through the other port meets the other group's state; transport
 * rules with "port" judge only that port's PDUs; the trace names every
 * command's port, port 1 included.
 */
#include "harness.h"

#define TWO_PORTS                                                                                  \
	"{\"faultlun\": 1, \"frontends\": [\"iscsi\"],"                                            \
	" \"ports\": [{\"id\": \"A\", \"listen\": \"127.0.0.1:0\", \"group\": 1},"                 \
	"             {\"id\": \"B\", \"listen\": \"127.0.0.2:0\", \"group\": 2}],"                \
	" \"port_groups\": [{\"id\": 1}, {\"id\": 2}],"                                            \
	" \"luns\": [{\"lun\": 0, \"size\": \"1MiB\"}],"

/* Reads LBA 0 from nexus `nexus` through relative port `port`; returns the completed command. */
static struct tcmd *read_via(struct fl_engine *e, struct tcmd *t, uint64_t nexus, uint16_t port)
{
	tcmd_init(t, 0x28, 0, 1, 1, nexus);
	t->cmd.nexus.rel_port_id = port;
	tsubmit(e, t, 0);
	CU_ASSERT_TRUE(twait(t, 2000));
	return t;
}

/* TUR through a port until GOOD or a non-UA answer. */
static void settle_via(struct fl_engine *e, uint64_t nexus, uint16_t port)
{
	struct tcmd *t = calloc(1, sizeof(*t));

	for (int i = 0; i < 8; i++) {
		tcmd_init(t, 0x00, 0, 0, 9, nexus);
		t->cmd.nexus.rel_port_id = port;
		tsubmit(e, t, 0);
		twait(t, 1000);
		if (sense_key(&t->cmd) != FL_KEY_UNIT_ATTENTION)
			break;
	}
	free(t);
}

/* A rule on port B and one on port group 1 act on their own port's commands only. */
static void test_rule_matches_port(void)
{
	struct fl_engine *e = engine_ok(
	    TWO_PORTS " \"rules\": [{\"id\": \"b-busy\", \"match\": {\"port\": \"B\"}, \"action\": "
		      "{\"status\": \"busy\"}},"
		      " {\"id\": \"g1\", \"match\": {\"port_group\": 1, \"class\": \"read\"}, "
		      "\"action\": {\"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\"}}]}");
	struct tcmd *t = calloc(1, sizeof(*t));

	settle_via(e, 1, 1);
	settle_via(e, 2, 2); /* the UA 29/00 first, then BUSY */
	read_via(e, t, 1, 1);
	CU_ASSERT_EQUAL(sense_key(&t->cmd), FL_KEY_MEDIUM_ERROR); /* g1 on port A */
	read_via(e, t, 2, 2);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_BUSY); /* b-busy on port B */
	fl_engine_destroy(e);
	free(t);
}

/* {"alua": {"group": 2, ...}} changes group 2: port B's commands see it, port A's do not. */
static void test_alua_action_group(void)
{
	struct fl_engine *e = engine_ok(
	    TWO_PORTS
	    " \"rules\": [{\"id\": \"b-standby\", \"match\": {\"nth\": 1, \"class\": "
	    "\"flush\"}, \"action\": {\"alua\": {\"group\": 2, \"state\": \"standby\"}}}]}");
	struct tcmd *t = calloc(1, sizeof(*t));

	settle_via(e, 1, 1);
	settle_via(e, 2, 2);
	tcmd_init(t, 0x35, 0, 0, 1, 1); /* SYNCHRONIZE CACHE(10) fires the rule */
	tsubmit(e, t, 0);
	CU_ASSERT_TRUE(twait(t, 2000));
	settle_via(e, 1, 1);
	settle_via(e, 2, 2);
	read_via(e, t, 1, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	read_via(e, t, 2, 2);
	CU_ASSERT_EQUAL(sense_key(&t->cmd), FL_KEY_NOT_READY);
	CU_ASSERT_EQUAL(sense_asc(&t->cmd), 0x04);
	CU_ASSERT_EQUAL(t->cmd.sense[13], 0x0b);
	fl_engine_destroy(e);
	free(t);
}

/* A transport rule on port A drops A's PDUs and passes B's. */
static void test_xport_rule_port(void)
{
	struct fl_engine *e = engine_ok(
	    TWO_PORTS " \"transport\": {\"rules\": [{\"id\": \"cut-a\", \"match\": {\"pdu\": "
		      "\"scsi_command\", \"port\": \"A\"}, \"action\": \"drop\"}]}}");
	struct fl_pdu_info pdu = {.kind = FL_PDU_SCSI_CMD, .nexus_id = 1};
	struct fl_xport_verdict v;

	pdu.rel_port_id = 1;
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_DROP);
	pdu.rel_port_id = 2;
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_PASS);
	fl_engine_destroy(e);
}

/* On a scenario with ports every inject event names its port, 1 as well as 2. */
static void test_trace_names_every_port(void)
{
	char path[] = "/tmp/fl-ports-trace-XXXXXX", line[2048];
	int fd = mkstemp(path), seen[3] = {0, 0, 0};
	struct fl_engine *e;
	struct tcmd *t = calloc(1, sizeof(*t));
	FILE *f;

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	e = mk_engine(TWO_PORTS " \"rules\": [{\"id\": \"r\", \"match\": {\"class\": \"read\"},"
				" \"action\": {\"status\": \"busy\"}}]}",
		      1, path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	settle_via(e, 1, 1);
	settle_via(e, 2, 2);
	read_via(e, t, 1, 1);
	read_via(e, t, 2, 2);
	read_via(e, t, 2, 2);
	fl_engine_destroy(e);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL), *port;

		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		if (!strcmp(json_string_value(json_object_get(o, "event")), "inject")) {
			port = json_object_get(o, "port");
			CU_ASSERT_TRUE(json_is_integer(port));
			if (json_is_integer(port) && json_integer_value(port) >= 1 &&
			    json_integer_value(port) <= 2)
				seen[json_integer_value(port)]++;
		}
		json_decref(o);
	}
	fclose(f);
	unlink(path);
	free(t);
	CU_ASSERT_EQUAL(seen[1], 1);
	CU_ASSERT_EQUAL(seen[2], 2);
}

FL_TESTS(port_tests,
	 FL_TEST(test_rule_matches_port),
	 FL_TEST(test_alua_action_group),
	 FL_TEST(test_xport_rule_port),
	 FL_TEST(test_trace_names_every_port));

FL_SUITES(FL_SUITE("faults_ports", NULL, NULL, port_tests));
