// SPDX-License-Identifier: MIT
/*
 * junit.c - `faultlun check --junit FILE`: the verdicts as JUnit XML, within
 * the element and attribute set that Jenkins validates against
 * (tests/integration/junit-10.xsd holds it; a test validates every report
 * against it). A testsuite per scenario, a testcase per expectation with the
 * seconds its step took; a failing expectation is a <failure> whose type is
 * the expectation's kind and whose text says what was expected and what was
 * observed; a not-applicable one is <skipped>; a scenario that does not load
 * or cannot run is one testcase with an <error> holding the loader's
 * messages. What the run wrote to stderr is the testsuite's system-err.
 * The counts on testsuite and testsuites are those of the elements written.
 */
#include "check_report.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* The length of a valid UTF-8 sequence at s (1 to 4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, or a UTF-16 surrogate */
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0; /* overlong, or past U+10FFFF */
	return n;
}

/*
 * Writes s into f as XML character data or an attribute value: the special
 * characters escaped, characters XML 1.0 cannot hold and bytes that are not
 * UTF-8 written as '?', newlines kept in text and escaped in attributes.
 */
static void xml_text(FILE *f, const char *s, bool attr)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		size_t n = utf8_len(p);

		if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		switch (*p) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\n':
			fputs(attr ? "&#10;" : "\n", f);
			break;
		case '\t':
			fputs(attr ? "&#9;" : "\t", f);
			break;
		default:
			fputc(n == 1 && *p >= 0x20 && *p != 0x7f ? *p : '?', f);
		}
		p++;
	}
}

/* Seconds as JUnit's time attribute wants them: finite, not negative. */
static double junit_seconds(double s)
{
	return isfinite(s) && s > 0 ? s : 0;
}

/* The counts of one scenario's testsuite, as its elements will be written. */
struct suite_counts {
	size_t tests, failures, errors, skipped;
};

/* Counts the testcases, failures, errors and skips the scenario's testsuite holds. */
static struct suite_counts suite_counts(const struct check_outcome *o)
{
	struct suite_counts c = {0};

	if (o->nv <= 0) {
		/* one testcase for the whole scenario */
		c.tests = 1;
		c.errors = o->rc == 2;
		c.failures = o->rc == 1;
		c.skipped = o->rc == 77;
		return c;
	}
	for (int k = 0; k < o->nv; k++) {
		c.tests++;
		c.failures += o->v[k].v == FL_VERDICT_FAIL;
		c.skipped += o->v[k].v == FL_VERDICT_NA;
	}
	return c;
}

/* Writes <testcase name=... classname=... time=...> (left open). */
static void testcase_open(FILE *f, const struct check_outcome *o, const char *name, double s)
{
	fputs("    <testcase name=\"", f);
	xml_text(f, name, true);
	fputs("\" classname=\"", f);
	xml_text(f, o->name, true);
	fprintf(f, "\" time=\"%.3f\">", junit_seconds(s));
}

/* Writes the one testcase of a scenario without verdicts: an error, a skip or (rarely) a pass. */
static void scenario_case(FILE *f, const struct check_outcome *o)
{
	testcase_open(f, o, o->diags ? "load" : "check", o->ms / 1e3);
	if (o->rc == 2) {
		fputs("\n      <error message=\"", f);
		xml_text(f, o->error, true);
		fprintf(f, "\" type=\"%s\">", o->diags ? "lint" : "run");
		xml_text(f, o->diags ? o->diags : o->error, false);
		fputs("</error>\n    ", f);
	} else if (o->rc == 77) {
		fputs("\n      <skipped message=\"", f);
		xml_text(f, o->error[0] ? o->error : "no expectation applies", true);
		fputs("\"/>\n    ", f);
	} else if (o->rc == 1) {
		fputs("\n      <failure message=\"", f);
		xml_text(f, o->error, true);
		fputs("\" type=\"check\"/>\n    ", f);
	}
	fputs("</testcase>\n", f);
}

/* Writes the testcase of one verdict. */
static void verdict_case(FILE *f, const struct check_outcome *o, const struct fl_verdict *v)
{
	char name[400];

	snprintf(name, sizeof(name), "expect %zu: %s", v->expect, v->what);
	testcase_open(f, o, name, cli_verdict_seconds(o, v));
	if (v->v == FL_VERDICT_FAIL) {
		fputs("\n      <failure message=\"", f);
		xml_text(f, v->observed, true);
		fputs("\" type=\"", f);
		xml_text(f, fl_expect_kind_word(v->kind), true);
		fputs("\">expected: ", f);
		xml_text(f, v->what, false);
		fputs("\nobserved: ", f);
		xml_text(f, v->observed, false);
		fputs("</failure>\n    ", f);
	} else if (v->v == FL_VERDICT_NA) {
		fputs("\n      <skipped message=\"", f);
		xml_text(f, v->observed, true);
		fputs("\"/>\n    ", f);
	}
	fputs("</testcase>\n", f);
}

/* Writes a <property>. */
static void property(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	xml_text(f, value, true);
	fputs("\"/>\n", f);
}

/* Writes one scenario's testsuite. */
static void testsuite(FILE *f, const struct check_outcome *o, size_t id)
{
	struct suite_counts c = suite_counts(o);
	char stamp[32] = "";
	struct tm tm;

	if (o->started && gmtime_r(&o->started, &tm))
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	fputs("  <testsuite name=\"", f);
	xml_text(f, o->name, true);
	fprintf(f,
		"\" id=\"%zu\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
		"time=\"%.3f\"",
		id, c.tests, c.failures, c.errors, c.skipped, junit_seconds(o->ms / 1e3));
	if (stamp[0])
		fprintf(f, " timestamp=\"%s\"", stamp);
	fputs(">\n    <properties>\n", f);
	property(f, "path", o->path);
	if (o->sha256[0])
		property(f, "sha256", o->sha256);
	if (o->have_counters) {
		char seed[32];

		snprintf(seed, sizeof(seed), "%llu", (unsigned long long)o->seed);
		property(f, "seed", seed);
	}
	fputs("    </properties>\n", f);
	if (o->nv <= 0)
		scenario_case(f, o);
	for (int k = 0; k < o->nv; k++)
		verdict_case(f, o, &o->v[k]);
	if (o->log) {
		fputs("    <system-err>", f);
		xml_text(f, o->log, false);
		fputs("</system-err>\n", f);
	}
	fputs("  </testsuite>\n", f);
}

/* Writes the JUnit XML report: a testsuite per scenario, a testcase per verdict. */
int cli_junit_write(const char *file, const struct check_outcome *o, size_t n)
{
	struct suite_counts all = {0};
	double s = 0;
	FILE *f = fopen(file, "w");

	if (!f)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		struct suite_counts c = suite_counts(&o[i]);

		all.tests += c.tests;
		all.failures += c.failures;
		all.errors += c.errors;
		all.skipped += c.skipped;
		s += junit_seconds(o[i].ms / 1e3);
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	/* testsuites has no skipped attribute in the schema: the suites carry it */
	fprintf(f,
		"<testsuites name=\"faultlun check\" tests=\"%zu\" failures=\"%zu\" "
		"errors=\"%zu\" time=\"%.3f\">\n",
		all.tests, all.failures, all.errors, s);
	for (size_t i = 0; i < n; i++)
		testsuite(f, &o[i], i);
	fputs("</testsuites>\n", f);
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}
