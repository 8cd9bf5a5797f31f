// SPDX-License-Identifier: MIT
/*
 * ktap.c - `faultlun check --ktap FILE` and `faultlun vm --ktap FILE`: the
 * verdicts in KTAP version 1, the kernel's test output format
 * (Documentation/dev-tools/ktap.rst): a version line, a plan "1..N", one
 * "ok N NAME" / "not ok N NAME" per scenario (a VM run), each preceded by
 * its expectations as a subtest block indented two spaces with its own
 * version line and plan. A not-applicable expectation is "ok M NAME # SKIP
 * why"; a scenario whose every expectation is not applicable, or that is
 * not for this runner, is a SKIP too. A failing expectation makes its
 * scenario "not ok". Diagnostics ("# expected: ...", "# observed: ...", the
 * loader's messages) are "# " lines just before the result they explain.
 * Names and reasons from outside are bounded and kept on one line without
 * '#', which would start a directive.
 */
#include "check_report.h"

#include "fl_result.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

/*
 * At most this many expectations of one VM run are written (result.json is read through
 * fl_result_read, which bounds it, and still not trusted).
 */
#define KTAP_MAX_SUBTESTS 4096

/* Writes the indentation of depth. */
static void indent(FILE *f, int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", f); /* ktap.rst: one level of indentation is two spaces */
}

/*
 * Writes s on one line, at most max bytes and never half a UTF-8 sequence:
 * '#' as '_', newlines and tabs as spaces, no control characters.
 */
static void one_line(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; s && s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t seq = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;

		if (i + seq > max)
			break;
		if (c == '\n' || c == '\r' || c == '\t')
			fputc(' ', f);
		else if (c == '#')
			fputc('_', f);
		else if (c >= 0x20 && c != 0x7f)
			fputc(c, f);
	}
}

/* Writes the version line and the plan of n tests at depth. */
void cli_ktap_header(FILE *f, int depth, size_t n)
{
	indent(f, depth);
	fputs("KTAP version 1\n", f);
	indent(f, depth);
	fprintf(f, "1..%zu\n", n);
}

/* Writes a test's result line; skip_reason (not NULL) adds the SKIP directive. */
void cli_ktap_result(FILE *f, int depth, bool ok, size_t num, const char *name,
		     const char *skip_reason)
{
	indent(f, depth);
	fprintf(f, "%s %zu ", ok ? "ok" : "not ok", num);
	one_line(f, name && *name ? name : "unnamed", 320);
	if (skip_reason) {
		fputs(" # SKIP ", f);
		one_line(f, skip_reason, 512);
	}
	fputc('\n', f);
}

/* Writes each line of text as a diagnostic "# LABEL: LINE" (label may be NULL). */
void cli_ktap_diag(FILE *f, int depth, const char *label, const char *text)
{
	const char *p = text ? text : "";
	int lines = 0;

	do {
		size_t len = strcspn(p, "\n");

		if (len || !lines) {
			indent(f, depth);
			fputs("# ", f);
			if (label)
				fprintf(f, "%s: ", label);
			for (size_t i = 0; i < len && i < 1024; i++) {
				unsigned char c = (unsigned char)p[i];
				size_t seq = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;

				if (i + seq > 1024)
					break; /* never half a UTF-8 sequence */
				fputc(c == '\t' || c == '\r'   ? ' '
				      : c >= 0x20 && c != 0x7f ? c
							       : '?',
				      f);
			}
			fputc('\n', f);
		}
		p += len;
		if (*p == '\n')
			p++;
	} while (*p && ++lines < 64);
}

/* Writes expectation number expect as subtest num (with its diagnostics when it failed). */
static void verdict_line(FILE *f, size_t num, size_t expect, enum fl_verdict_kind v,
			 const char *what, const char *observed)
{
	char name[400];

	snprintf(name, sizeof(name), "expect %zu: %s", expect, what);
	if (v == FL_VERDICT_FAIL) {
		cli_ktap_diag(f, 1, "expected", what);
		cli_ktap_diag(f, 1, "observed", observed);
	}
	cli_ktap_result(f, 1, v != FL_VERDICT_FAIL, num, name,
			v == FL_VERDICT_NA ? observed : NULL);
}

/* Writes one scenario of a check: its expectations as a subtest block, then its result. */
static void check_scenario(FILE *f, const struct check_outcome *o, size_t num)
{
	if (o->nv > 0) {
		cli_ktap_header(f, 1, (size_t)o->nv);
		for (int k = 0; k < o->nv; k++)
			verdict_line(f, (size_t)k + 1, o->v[k].expect, o->v[k].v, o->v[k].what,
				     o->v[k].observed);
	}
	if (o->rc == 2) {
		cli_ktap_diag(f, 0, "error", o->error);
		if (o->diags)
			cli_ktap_diag(f, 0, NULL, o->diags);
	}
	cli_ktap_result(f, 0, o->rc == 0 || o->rc == 77, num, o->name,
			o->rc == 77 ? (o->error[0] ? o->error : "no expectation applies") : NULL);
}

/* Writes the KTAP report of a check: a test per scenario, a subtest per expectation. */
int cli_ktap_check_write(const char *file, const struct check_outcome *o, size_t n)
{
	FILE *f = fopen(file, "w");

	if (!f)
		return -errno;
	cli_ktap_header(f, 0, n);
	for (size_t i = 0; i < n; i++)
		check_scenario(f, &o[i], i + 1);
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

/* s, or def when s is NULL. */
static const char * or (const char *s, const char *def)
{
	return s ? s : def;
}

/* Writes one VM run: its result.json's expectations as a subtest block, then its result. */
static void vm_run(FILE *f, const struct cli_vm_run *r, size_t num)
{
	struct fl_result res = {0};
	json_error_t jerr;
	json_t *doc;
	char err[512];
	size_t nex;
	bool failed = false;
	const char *name = r->name;
	char own[240];

	if (r->rc == 77) {
		cli_ktap_result(f, 0, true, num, r->name,
				"qemu or the kernel package cannot be had");
		return;
	}
	/* parsed here only to tell a missing or broken file from one that is no result */
	doc = json_load_file(r->result, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc || fl_result_from_json(doc, r->result, &res, err, sizeof(err)) < 0 ||
	    !res.has_expectations) {
		cli_ktap_diag(f, 0, "error", doc ? "not a VM lab result" : "no result of the run");
		cli_ktap_diag(f, 0, "result", r->result);
		cli_ktap_result(f, 0, false, num, r->name[0] ? r->name : r->result, NULL);
		json_decref(doc);
		fl_result_free(&res);
		return;
	}
	json_decref(doc); /* res holds its own reference */
	if (!name[0]) {
		/* "SCENARIO (PATH)" from the result itself */
		snprintf(own, sizeof(own), "%.200s (%.16s)", or (res.name, "?"),
			 or (res.path, "?"));
		name = own;
	}
	nex = res.nexpectations;
	if (nex > KTAP_MAX_SUBTESTS)
		nex = KTAP_MAX_SUBTESTS;
	if (nex) {
		size_t applied = 0;

		cli_ktap_header(f, 1, nex);
		for (size_t k = 0; k < nex; k++) {
			const struct fl_result_expect *e = &res.expectations[k];
			const char *word = or (e->verdict_text, "");
			long long x = e->expect;
			/* anything but a pass or a not-applicable is no pass */
			enum fl_verdict_kind v = !strcmp(word, "pass") ? FL_VERDICT_PASS
						 : !strcmp(word, "not_applicable")
						     ? FL_VERDICT_NA
						     : FL_VERDICT_FAIL;

			failed |= v == FL_VERDICT_FAIL;
			applied += v != FL_VERDICT_NA;
			verdict_line(f, k + 1, x >= 0 && x < KTAP_MAX_SUBTESTS ? (size_t)x : k, v,
				     or (e->what, "?"), or (e->observed, ""));
		}
		if (!applied && r->rc == 0) {
			cli_ktap_result(f, 0, true, num, name, "no expectation applies");
			fl_result_free(&res);
			return;
		}
	}
	if (r->rc == 2)
		cli_ktap_diag(f, 0, "error", "setup or guest error (see the run's output)");
	cli_ktap_result(f, 0, r->rc == 0 && !failed && strcmp(or (res.verdict, ""), "FAIL"), num,
			name, NULL);
	fl_result_free(&res);
}

/* Writes the KTAP report of VM runs: a test per run, a subtest per expectation. */
int cli_ktap_vm_write(const char *file, const struct cli_vm_run *runs, size_t n)
{
	FILE *f = fopen(file, "w");

	if (!f)
		return -errno;
	cli_ktap_header(f, 0, n);
	for (size_t i = 0; i < n; i++)
		vm_run(f, &runs[i], i + 1);
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}
