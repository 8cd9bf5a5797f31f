/* SPDX-License-Identifier: MIT */
/*
 * test_actions.c - tests that walk the registry of fault actions
 * (scenario/fl_action.h) instead of naming actions: every action's docs
 * example is parsed, linted, run through the engine and traced; and 10,000
 * actions drawn at random from the parameter descriptors all pass lint and
 * run in the engine. A new action is covered by its registry line, its docs
 * page and nothing else here.
 */
#include "harness.h"
#include "fl_draw.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <unistd.h>

/* Two ports in two groups, three states, one LUN with an ownership model. */
static const char *const base_fmt =
    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"],\n"
    " \"ports\": [{\"id\": \"A\", \"listen\": \"127.0.0.1:3260\", \"group\": 1},\n"
    "           {\"id\": \"B\", \"listen\": \"127.0.0.2:3260\", \"group\": 2}],\n"
    " \"port_groups\": [{\"id\": 1, \"state\": \"active_optimized\"}, {\"id\": 2, \"state\": "
    "\"active_optimized\"}],\n"
    " \"states\": [\"normal\", \"moving\", \"degraded\"],\n"
    " \"transitions\": [{\"from\": \"normal\", \"to\": \"moving\", \"on\": {\"commands\": "
    "1000000}},\n"
    "   {\"from\": \"moving\", \"to\": \"degraded\", \"on\": {\"commands\": 1000000}}],\n"
    " \"luns\": [{\"lun\": 0, \"size\": \"1MiB\", \"personality\": \"rdac\"}],\n"
    " \"rules\": [{\"id\": \"r\", \"match\": {\"class\": \"read\"}, \"action\": %s}]}";
static const char *const base_states[] = {"normal", "moving", "degraded"};

/* The scenario text with the one rule's action; free() it. */
static char *scenario_with(json_t *action)
{
	char *a = json_dumps(action, JSON_COMPACT), *text = NULL;

	if (a && asprintf(&text, base_fmt, a) < 0)
		text = NULL;
	free(a);
	return text;
}

/* Loads text (linted for iSCSI); prints the diagnostics when it fails. */
static struct fl_scenario *load_linted(const char *text)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;

	if (fl_scenario_load_string("action.json", text, FL_FE_ISCSI, &sc, &d)) {
		fprintf(stderr, "%s\n", text);
		fl_diags_print(&d, stderr);
		fl_diags_free(&d);
		return NULL;
	}
	return sc;
}

/*
 * Runs one READ(10) through an engine on sc (tracing to trace when not
 * NULL) once its nexus has no unit attention left, then tears the engine
 * down, which ends a hold or a delay.
 */
static bool run_one(struct fl_scenario *sc, const char *trace)
{
	struct fl_engine_opts o = {
	    .frontend = FL_FE_ISCSI, .seed_set = true, .seed = 1, .trace_path = trace};
	struct fl_engine *e = NULL;
	static struct tcmd t;

	if (fl_engine_create(sc, &o, &e))
		return false;
	clear_ua(e, 1); /* the power-on UA would come before an answer (SAM-5 5.14) */
	tcmd_init(&t, 0x28, 0, 8, 1, 1);
	tsubmit(e, &t, 0);
	fl_engine_destroy(e);
	return true;
}

/* The action object of the first rule of the "## Example" block of docs/faults/DOC.md. */
static json_t *doc_example(const char *doc)
{
	char path[512], *text = NULL, *start, *end, *wrapped = NULL;
	json_t *rules, *action = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.md", FL_DOCS_FAULTS, doc);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (getdelim(&text, &len, '\0', f) < 0) {
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	start = strstr(text, "\n## Example");
	start = start ? strstr(start, "```json\n") : NULL;
	end = start ? strstr(start + 8, "```") : NULL;
	if (end && asprintf(&wrapped, "[%.*s]", (int)(end - start - 8), start + 8) >= 0) {
		rules = json_loads(wrapped, 0, NULL);
		action = json_incref(json_object_get(json_array_get(rules, 0), "action"));
		json_decref(rules);
	}
	free(wrapped);
	free(text);
	return action;
}

/* Whether the trace file holds an inject line whose action is name. */
static bool traced(const char *trace, const char *name)
{
	char line[4096], want[128];
	bool found = false;
	FILE *f = fopen(trace, "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "\"action\":\"%s\"", name);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "\"event\":\"inject\"") && strstr(line, want);
	fclose(f);
	return found;
}

/* Every action: its docs example parses, lints, runs in the engine and is traced. */
static void test_every_action_from_its_docs(void)
{
	char trace[] = "/tmp/fl-actions-trace-XXXXXX";
	int fd = mkstemp(trace);

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	for (size_t i = 0; i < VERB_NR; i++) {
		const struct fl_action *d = fl_action_at(i);
		json_t *action = doc_example(d->doc);
		struct fl_scenario *sc;
		char *text;

		CU_ASSERT_PTR_NOT_NULL(action);
		if (!action) {
			fprintf(stderr, "docs/faults/%s.md: no \"## Example\" rule\n", d->doc);
			continue;
		}
		/* the action's own name must be what the example shows */
		CU_ASSERT_PTR_NOT_NULL(json_object_get(action, d->name));
		text = scenario_with(action);
		sc = text ? load_linted(text) : NULL;
		CU_ASSERT_PTR_NOT_NULL(sc);
		if (sc) {
			const char *name = sc_verb_name(sc->rules[0].a.verb);

			/* a joining action (set_state) is traced under the verb it joins */
			CU_ASSERT_TRUE(d->joins || sc->rules[0].a.verb == d->verb);
			CU_ASSERT_TRUE(run_one(sc, trace));
			CU_ASSERT_TRUE(traced(trace, name));
			if (!traced(trace, name))
				fprintf(stderr, "%s: no inject line with action \"%s\"\n", d->name,
					name);
			fl_scenario_free(sc);
		}
		free(text);
		json_decref(action);
	}
	unlink(trace);
}

/* The test's seeded stream, as the drawing module takes it. */
static uint64_t draw_next(void *state)
{
	return fl_prng_next(state);
}

/* A uniform draw in [lo, hi]. */
static uint64_t draw(struct fl_prng *g, uint64_t lo, uint64_t hi)
{
	const struct fl_draw_rng r = {draw_next, g};

	return fl_draw_uint(&r, lo, hi);
}

/* Adds a random instance of action d's parameters to obj (fl_draw.h). */
static void draw_action(struct fl_prng *g, const struct fl_action *d, json_t *obj)
{
	const struct fl_draw_ctx c = {
	    .rng = {draw_next, g}, .states = base_states, .nstates = 3, .ngroups = 2};

	fl_draw_action(&c, d, obj);
}

/* 10,000 actions drawn from the descriptors: every one passes lint and runs. */
static void test_random_actions_from_descriptors(void)
{
	struct fl_prng g;
	int bad = 0;

	fl_prng_seed(&g, 2026, 0);
	for (int n = 0; n < 10000 && bad < 5; n++) {
		const struct fl_action *d = fl_action_at((size_t)draw(&g, 0, VERB_NR - 1));
		json_t *action = json_object();
		struct fl_scenario *sc;
		char *text;

		draw_action(&g, d, action);
		if (!d->joins && d->with_delay && draw(&g, 0, 2) == 0)
			draw_action(&g, fl_actions[VERB_DELAY], action);
		if (!d->joins && draw(&g, 0, 2) == 0)
			draw_action(&g, fl_actions[VERB_NONE], action);
		text = scenario_with(action);
		sc = text ? load_linted(text) : NULL;
		if (!sc || !run_one(sc, NULL))
			bad++;
		if (sc)
			fl_scenario_free(sc);
		free(text);
		json_decref(action);
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* Every row is reachable by its verb and its name, and its parameters say what they are. */
static void test_registry_complete(void)
{
	for (size_t i = 0; i < VERB_NR; i++) {
		const struct fl_action *d = fl_actions[i];

		CU_ASSERT_PTR_NOT_NULL_FATAL(d);
		CU_ASSERT_EQUAL(d->verb, (enum sc_verb)i);
		CU_ASSERT_PTR_EQUAL(fl_action_by_name(d->name), d);
		CU_ASSERT_PTR_EQUAL(fl_action_by_trace(d->trace_action), d);
		CU_ASSERT_PTR_NOT_NULL(d->parse);
		CU_ASSERT_TRUE(d->nparams > 0);
		CU_ASSERT_EQUAL(strncmp(d->params[0].key, d->name, strlen(d->name)), 0);
		for (size_t k = 0; k < d->nparams; k++) {
			CU_ASSERT_PTR_NOT_NULL(d->params[k].doc);
			CU_ASSERT_TRUE(d->params[k].type != FL_PARAM_CHOICE ||
				       d->params[k].choices);
		}
		/* a hook for each phase the engine calls one in */
		CU_ASSERT_TRUE(d->phase != FL_PHASE_BEFORE || d->before);
		CU_ASSERT_TRUE(d->phase != FL_PHASE_AFTER || d->after);
		CU_ASSERT_TRUE(d->phase != FL_PHASE_EFFECT || d->effect);
		CU_ASSERT_TRUE(d->phase != FL_PHASE_HOLD || d->ends_on);
		CU_ASSERT_PTR_NOT_NULL(d->observed_as);
	}
}

FL_TESTS(actions_tests,
	 FL_TEST(test_registry_complete),
	 FL_TEST(test_every_action_from_its_docs),
	 FL_TEST(test_random_actions_from_descriptors));

FL_SUITES(FL_SUITE("actions", NULL, NULL, actions_tests));
