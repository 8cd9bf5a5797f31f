// SPDX-License-Identifier: MIT
/*
 * test_scopes.c - the shipped scenarios' runner scopes: the two runners judge
 * the same expectations, so an entry scoped to one runner ("runner") is the
 * exception. Counts the scoped entries of scenarios/NAME.json and fails when
 * they grow past the number this file allows (lower the numbers as scopes
 * go); an errno entry scoped to one runner must say why ("why"), since both
 * runners observe every errno they can run (docs/scenario-format.md,
 * "Where the runners differ").
 */
#include "runner.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Most entries scoped to one runner (of any kind) the shipped scenarios may hold. */
#define MAX_SCOPED 29
/*
 * Most errno entries scoped to one runner: none. Both runners retry as the
 * kernel does and fail over as dm-multipath and the device handlers do, so
 * both judge every errno entry.
 */
#define MAX_ERRNO_SCOPED 0
/* Most errno entries scoped to one runner without a "why". */
#define MAX_ERRNO_SCOPED_UNEXPLAINED 0

/* What the shipped scenarios hold. */
struct counts {
	int files, entries, scoped, errno_scoped, unexplained;
};

/* Counts one scenario file's scoped entries; printing the unexplained errno ones. */
static void count_file(const char *path, struct counts *c)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err), *e;
	size_t i;

	CU_ASSERT_PTR_NOT_NULL(root);
	if (!root) {
		printf("%s: %s\n", path, err.text);
		return;
	}
	c->files++;
	json_array_foreach(json_object_get(json_object_get(root, "check"), "expect"), i, e)
	{
		const char *why = json_string_value(json_object_get(e, "why"));

		c->entries++;
		if (!json_object_get(e, "runner"))
			continue;
		c->scoped++;
		if (!json_object_get(e, "errno"))
			continue;
		c->errno_scoped++;
		if (!why || !*why) {
			c->unexplained++;
			printf("%s: expect %zu: an errno entry scoped to one runner, with no \"why\"\n",
			       path, i);
		}
	}
	json_decref(root);
}

/* The scoped entries of scenarios/NAME.json stay within the allowed numbers. */
static void test_shipped_scopes(void)
{
	DIR *dir = opendir(FL_SCENARIOS);
	struct dirent *de;
	struct counts c = {0};

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	while ((de = readdir(dir))) {
		char path[1024];
		size_t n = strlen(de->d_name);

		if (n < 6 || strcmp(de->d_name + n - 5, ".json") || strstr(de->d_name, "schema"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", FL_SCENARIOS, de->d_name);
		count_file(path, &c);
	}
	closedir(dir);
	printf("\n%d scenarios, %d expectations: %d scoped to one runner, %d of them errno "
	       "entries, %d with no why\n",
	       c.files, c.entries, c.scoped, c.errno_scoped, c.unexplained);
	CU_ASSERT_TRUE(c.files >= 30);
	CU_ASSERT_TRUE(c.scoped <= MAX_SCOPED);
	CU_ASSERT_TRUE(c.errno_scoped <= MAX_ERRNO_SCOPED);
	CU_ASSERT_TRUE(c.unexplained <= MAX_ERRNO_SCOPED_UNEXPLAINED);
}

/* The counter counts: a scenario with scoped entries adds them. */
static void test_counter_counts(void)
{
	char path[] = "/tmp/fl-scopes-XXXXXX";
	int fd = mkstemp(path);
	struct counts c = {0};
	FILE *f;

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"check\": {\"expect\": [{\"step\": 0, \"errno\": \"OK\"},"
	      "{\"step\": 0, \"errno\": \"EIO\", \"runner\": \"vm\"},"
	      "{\"step\": 0, \"errno\": \"EIO\", \"runner\": \"vm\", \"why\": \"a reason\"},"
	      "{\"step\": 0, \"status\": \"BUSY\", \"runner\": \"libiscsi\"}]}}",
	      f);
	fclose(f);
	count_file(path, &c);
	unlink(path);
	CU_ASSERT_EQUAL(c.entries, 4);
	CU_ASSERT_EQUAL(c.scoped, 3);
	CU_ASSERT_EQUAL(c.errno_scoped, 2);
	CU_ASSERT_EQUAL(c.unexplained, 1);
}

FL_TESTS(tests,
	 FL_TEST(test_counter_counts),
	 FL_TEST(test_shipped_scopes));

FL_SUITES(FL_SUITE("scopes", NULL, NULL, tests));
