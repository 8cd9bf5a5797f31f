// SPDX-License-Identifier: MIT
/*
 * import_scsi_debug.c - `faultlun import --scsi-debug RULES`: a scenario from
 * the error injections of Linux's scsi_debug (docs/import.md, "From
 * scsi_debug's rules").
 *
 * RULES holds lines of a device's debugfs `error` file, as written to it
 * ("TYPE COUNT OPCODE ...": 0 timeout, 1 queuecommand return, 2 status and
 * sense, 3 abort fails, 4 LUN reset fails) or as read back from it (its
 * "Type Count Command" header is skipped), and module options as modprobe
 * takes them ("every_nth=100 opts=4", "options scsi_debug ..." lines).
 * scsi_debug applies, per command, the first error rule of each type whose
 * opcode is the command's or 0xff, timeouts before queuecommand returns
 * before status rules; COUNT 0 never injects, N > 0 always, N < 0 |N| times.
 * Each line becomes a rule or TMF behaviour of the same effect over a
 * fabric, and the scenario's references say, line by line, what maps
 * exactly, approximately, or not at all. Everything read is bounded: the
 * file (1 MiB), a line (512 bytes), the rules (256).
 */
#include "fl_action.h"
#include "import.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SD_MAX_FILE (1u << 20)
#define SD_MAX_LINE 512
#define SD_MAX_RULES 256
#define SD_HZ 250 /* Debian's CONFIG_HZ: scsi_debug's delay is in jiffies */

/* What the conversion holds while it reads. */
struct sd {
	int lun;
	json_t *rules[5];   /* per error type, in the order scsi_debug checks them */
	json_t *tmf, *refs; /* TMF behaviours; the line-by-line references */
	unsigned nrules, nlines;
	/* module options */
	long every_nth, opts, delay, ndelay, dev_size_mb, sector_size;
	long me_start, me_count;
	bool have_opts;
	char err[256];
};

/* Adds a reference line. */
static void sd_ref(struct sd *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sd_ref(struct sd *s, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(s->refs, json_string(buf));
}

/* Records an error for line n; returns -1. */
static int sd_fail(struct sd *s, unsigned n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int sd_fail(struct sd *s, unsigned n, const char *fmt, ...)
{
	char buf[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(s->err, sizeof(s->err), "line %u: %s", n, buf);
	return -1;
}

/* Reads a decimal int (scsi_debug's %d) into *v; false when it is not one. */
static bool sd_dec(const char *t, long *v)
{
	char *end;

	errno = 0;
	long x = strtol(t, &end, 10);
	if (errno || end == t || *end || x < INT_MIN || x > INT_MAX)
		return false;
	*v = x;
	return true;
}

/* Reads a hexadecimal number (scsi_debug's %x, 0x optional) up to max. */
static bool sd_hex(const char *t, unsigned long max, unsigned long *v)
{
	char *end;

	if (*t == '-' || *t == '+')
		return false;
	errno = 0;
	unsigned long x = strtoul(t, &end, 16);
	if (errno || end == t || *end || x > max)
		return false;
	*v = x;
	return true;
}

/* The rule's match: the LUN, the opcode unless 0xff, the count. */
static json_t *sd_match(const struct sd *s, unsigned long op, long cnt)
{
	json_t *m = json_pack("{s:i}", "lun", s->lun);
	char hex[8];

	if (op != 0xff) {
		snprintf(hex, sizeof(hex), "0x%02lx", op);
		json_object_set_new(m, "opcode", json_string(hex));
	}
	if (cnt < 0)
		json_object_set_new(m, "times", json_integer(-cnt));
	return m;
}

/*
 * Drops the earlier rule of error type t for the same opcode (m's), as
 * scsi_debug replaces it when a new one is written; says so for line n.
 */
static void sd_replace(struct sd *s, int t, unsigned n, const json_t *m)
{
	const char *op = json_string_value(json_object_get(m, "opcode"));
	size_t i;
	json_t *r;

	json_array_foreach(s->rules[t], i, r)
	{
		const char *o =
		    json_string_value(json_object_get(json_object_get(r, "match"), "opcode"));
		if ((!o && !op) || (o && op && !strcmp(o, op))) {
			sd_ref(s,
			       "line %u replaces rule %s (same type and opcode, as in scsi_debug)",
			       n, json_string_value(json_object_get(r, "id")));
			json_array_remove(s->rules[t], i);
			s->nrules--;
			return;
		}
	}
}

/* Adds rule (match, action) of error type t, from line n. */
static int sd_add(struct sd *s, int t, unsigned n, json_t *m, json_t *a)
{
	char id[32];

	sd_replace(s, t, n, m);
	if (s->nrules >= SD_MAX_RULES) {
		json_decref(m);
		json_decref(a);
		return sd_fail(s, n, "more than %d rules", SD_MAX_RULES);
	}
	snprintf(id, sizeof(id), "sd-line-%u", n);
	json_array_append_new(s->rules[t],
			      json_pack("{s:s,s:o,s:o}", "id", id, "match", m, "action", a));
	s->nrules++;
	return 0;
}

/* The scenario's name of a status byte, or NULL (GOOD and the rest). */
static const char *sd_status(unsigned long st)
{
	return st <= 0xff ? fl_action_status_name((uint8_t)st) : NULL;
}

/* Type 2: status byte and sense (host byte, driver byte). */
static int sd_fail_cmd(struct sd *s, unsigned n, const char *line, unsigned long op, long cnt,
		       const unsigned long *b)
{
	unsigned long host = b[0], drv = b[1], st = b[2];
	char sense[16];

	if (host) {
		sd_ref(s,
		       "not reproduced: line %u '%s': host byte 0x%02lx is the host adapter's "
		       "own error, which no target can send",
		       n, line, host);
		return 0;
	}
	if (st == 0x02 && b[3] > 0xf) {
		sd_ref(s,
		       "not reproduced: line %u '%s': sense key 0x%02lx is past the four bits a "
		       "sense key has",
		       n, line, b[3]);
		return 0;
	}
	if (st == 0x02) {
		/* a numeric key starts with a digit in a scenario: "3/11/00", "0e/1d/00" */
		snprintf(sense, sizeof(sense), "%s%lx/%02lx/%02lx", b[3] > 9 ? "0" : "", b[3], b[4],
			 b[5]);
		sd_ref(s, "line %u '%s': CHECK CONDITION %s -> rule sd-line-%u (sense): exact%s", n,
		       line, sense, n, drv ? " (the driver byte is not sent over a fabric)" : "");
		return sd_add(s, 2, n, sd_match(s, op, cnt), json_pack("{s:s}", "sense", sense));
	}
	if (!sd_status(st)) {
		sd_ref(s, "not reproduced: line %u '%s': status 0x%02lx%s", n, line, st,
		       st ? " has no rule action"
			  : " (GOOD) completes the command without "
			    "executing it, which a scenario cannot say");
		return 0;
	}
	sd_ref(s, "line %u '%s': status %s -> rule sd-line-%u: exact", n, line, sd_status(st), n);
	return sd_add(s, 2, n, sd_match(s, op, cnt), json_pack("{s:s}", "status", sd_status(st)));
}

/* Type 3 or 4: the abort or the LUN reset fails (every one: approximate). */
static int sd_tmf_fails(struct sd *s, unsigned n, const char *line, int t, unsigned long op)
{
	const char *key = t == 3 ? "abort_task" : "lun_reset";

	if (json_object_get(s->tmf, key)) {
		sd_ref(s, "line %u '%s': %s already rejected by an earlier line", n, line, key);
		return 0;
	}
	json_object_set_new(s->tmf, key, json_pack("{s:s}", "respond", "rejected"));
	sd_ref(s,
	       "line %u '%s': the driver's %s handler returns FAILED -> tmf %s answered "
	       "rejected: approximate (every %s, whatever the command's opcode (0x%02lx in the "
	       "line) and the count; the kernel's iSCSI initiator takes a rejected TMF as "
	       "FAILED)",
	       n, line, t == 3 ? "abort" : "device reset", key, key, op);
	return 0;
}

/* One error-file line: TYPE COUNT OPCODE [...]; its tokens in tok[0..nt). */
static int sd_error_line(struct sd *s, unsigned n, const char *line, char **tok, int nt)
{
	static const int want[5] = {3, 4, 9, 3, 3};
	long type, cnt;
	unsigned long op, b[6] = {0}, qret = 0;

	if (!sd_dec(tok[0], &type) || type < 0 || type > 4)
		return sd_fail(s, n,
			       "'%s' is not an error type (0 timeout, 1 queuecommand return, "
			       "2 status and sense, 3 abort fails, 4 LUN reset fails)",
			       tok[0]);
	if (nt != want[type])
		return sd_fail(s, n, "type %ld takes %d fields, not %d", type, want[type], nt);
	if (!sd_dec(tok[1], &cnt))
		return sd_fail(s, n, "count '%s' is not a number", tok[1]);
	if (!sd_hex(tok[2], 0xff, &op))
		return sd_fail(s, n, "opcode '%s' is not a hexadecimal byte", tok[2]);
	for (int i = 3; i < nt; i++)
		if (!sd_hex(tok[i], type == 1 ? 0xffffffffUL : 0xff, type == 1 ? &qret : &b[i - 3]))
			return sd_fail(s, n, "field %d '%s' is not a hexadecimal %s", i + 1, tok[i],
				       type == 1 ? "number" : "byte");
	if (!cnt) {
		sd_ref(s, "not reproduced: line %u '%s': count 0 never injects", n, line);
		if (type <= 2) {
			json_t *m = sd_match(s, op, 1);
			sd_replace(s, (int)type, n, m);
			json_decref(m);
		}
		return 0;
	}
	if (type == 0) {
		sd_ref(s,
		       "line %u '%s': the command is never completed -> rule sd-line-%u (drop): "
		       "exact",
		       n, line, n);
		return sd_add(s, 0, n, sd_match(s, op, cnt), json_pack("{s:b}", "drop", 1));
	}
	if (type == 1) {
		if (!qret) {
			sd_ref(s, "not reproduced: line %u '%s': return value 0 has no effect", n,
			       line);
			return 0;
		}
		sd_ref(s,
		       "line %u '%s': queuecommand returns 0x%lx (the midlayer requeues the "
		       "command) -> rule sd-line-%u (status busy): approximate (BUSY is requeued "
		       "too, after the command was sent)",
		       n, line, qret, n);
		return sd_add(s, 1, n, sd_match(s, op, cnt), json_pack("{s:s}", "status", "busy"));
	}
	if (type == 2)
		return sd_fail_cmd(s, n, line, op, cnt, b);
	return sd_tmf_fails(s, n, line, (int)type, op);
}

/* One module option KEY=VALUE. */
static int sd_option(struct sd *s, unsigned n, const char *tok)
{
	static const struct {
		const char *key;
		size_t off;
		long min, max;
	} known[] = {
	    {"every_nth", offsetof(struct sd, every_nth), INT_MIN, INT_MAX},
	    {"opts", offsetof(struct sd, opts), 0, INT_MAX},
	    {"delay", offsetof(struct sd, delay), -2, 1000000},
	    {"ndelay", offsetof(struct sd, ndelay), 0, 999999999},
	    {"dev_size_mb", offsetof(struct sd, dev_size_mb), 1, 1 << 20},
	    {"sector_size", offsetof(struct sd, sector_size), 512, 65536},
	    {"medium_error_start", offsetof(struct sd, me_start), 0, INT_MAX},
	    {"medium_error_count", offsetof(struct sd, me_count), 0, INT_MAX},
	};
	const char *eq = strchr(tok, '=');
	long v;

	if (!eq || eq == tok)
		return sd_fail(s, n, "'%s' is neither an error rule nor a module option KEY=VALUE",
			       tok);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strlen(known[i].key) != (size_t)(eq - tok) ||
		    strncmp(tok, known[i].key, eq - tok))
			continue;
		/* the kernel reads an int parameter with base 0: 0x hex, 0 octal */
		char *end;
		errno = 0;
		v = strtol(eq + 1, &end, 0);
		if (errno || end == eq + 1 || *end || v < known[i].min || v > known[i].max)
			return sd_fail(s, n, "%.*s: '%s' is not in %ld..%ld", (int)(eq - tok), tok,
				       eq + 1, known[i].min, known[i].max);
		/* scsi_debug refuses to load with another (blk_validate_block_size) */
		if (known[i].off == offsetof(struct sd, sector_size) && (v & (v - 1)))
			return sd_fail(s, n, "sector_size: '%s' is not a power of two", eq + 1);
		*(long *)((char *)s + known[i].off) = v;
		s->have_opts = true;
		return 0;
	}
	sd_ref(s,
	       "not reproduced: module option %s (not converted: docs/import.md lists those "
	       "that are)",
	       tok);
	return 0;
}

/* Splits line into at most max whitespace-separated tokens; returns the count, -1 past max. */
static int sd_split(char *line, char **tok, int max)
{
	int nt = 0;

	for (char *p = strtok(line, " \t"); p; p = strtok(NULL, " \t")) {
		if (nt == max)
			return -1;
		tok[nt++] = p;
	}
	return nt;
}

/* One line of RULES (comment and whitespace already stripped). */
static int sd_line(struct sd *s, unsigned n, char *line)
{
	char copy[SD_MAX_LINE + 1], *tok[16];
	int nt, i = 0;

	nt = sd_split(line, tok, 16);
	if (nt < 0)
		return sd_fail(s, n, "more than 16 fields");
	if (!nt || !strcmp(tok[0], "Type"))
		return 0;
	/* the line as the references show it: its fields, one space apart */
	copy[0] = 0;
	for (int k = 0; k < nt; k++)
		snprintf(copy + strlen(copy), sizeof(copy) - strlen(copy), "%s%s", k ? " " : "",
			 tok[k]);
	if (isdigit((unsigned char)tok[0][0]) || tok[0][0] == '-')
		if (!strchr(tok[0], '='))
			return sd_error_line(s, n, copy, tok, nt);
	if (!strcmp(tok[0], "options") || !strcmp(tok[0], "modprobe"))
		i = 1;
	if (i < nt && !strcmp(tok[i], "scsi_debug"))
		i++;
	for (; i < nt; i++)
		if (sd_option(s, n, tok[i]))
			return -1;
	return 0;
}

/* Reads in into s, line by line; 0 or -1 with s->err set. */
static int sd_read(struct sd *s, FILE *in)
{
	char buf[SD_MAX_LINE + 2];
	size_t total = 0;
	unsigned n = 0;

	while (fgets(buf, sizeof(buf), in)) {
		size_t len = strlen(buf);
		n++;
		total += len;
		if (total > SD_MAX_FILE)
			return sd_fail(s, n, "the file is larger than %u bytes", SD_MAX_FILE);
		if (len && buf[len - 1] != '\n' && !feof(in))
			return sd_fail(s, n, "longer than %d bytes, or a NUL byte", SD_MAX_LINE);
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		buf[strcspn(buf, "\r\n")] = 0;
		if (sd_line(s, n, buf))
			return -1;
	}
	if (ferror(in))
		return sd_fail(s, n + 1, "read error");
	s->nlines = n;
	return 0;
}

/* The module options' rules: medium errors, every_nth injections, the delay. */
static void sd_options(struct sd *s, json_t *rules)
{
	if (s->opts & 2) {
		long first = s->me_start, count = s->me_count;
		long blocks = (s->dev_size_mb > 0 ? s->dev_size_mb : 8) * (1L << 20) /
			      (s->sector_size ? s->sector_size : 512);

		if (count > 0 && first >= blocks) {
			sd_ref(s,
			       "not reproduced: opts 0x2 (medium error), LBAs %ld..%ld: past the "
			       "LUN's last LBA %ld, no read reaches them",
			       first, first + count - 1, blocks - 1);
			count = 0;
		} else if (count > blocks - first) {
			count = blocks - first; /* scsi_debug's reads stop at the end too */
		}
		if (count > 0) {
			json_array_append_new(
			    rules, json_pack("{s:s,s:{s:i,s:s,s:{s:I,s:I}},s:{s:s,s:s}}", "id",
					     "sd-medium-error", "match", "lun", s->lun, "class",
					     "read", "lba", "first", (json_int_t)first, "last",
					     (json_int_t)(first + count - 1), "action", "sense",
					     "3/11/00", "info", "lba"));
			sd_ref(s,
			       "opts 0x2 (medium error), LBAs %ld..%ld: reads that touch them get "
			       "MEDIUM ERROR 11/00 with INFORMATION the first of them -> rule "
			       "sd-medium-error: exact",
			       first, first + count - 1);
		}
	}
	if (s->every_nth > 0 && (s->opts & (4 | 128))) {
		json_t *m =
		    json_pack("{s:i,s:I}", "lun", s->lun, "every", (json_int_t)s->every_nth);
		if (!(s->opts & 4))
			json_object_set_new(m, "class", json_pack("[s,s]", "read", "write"));
		json_array_append_new(rules, json_pack("{s:s,s:o,s:{s:b}}", "id", "sd-every-nth",
						       "match", m, "action", "drop", 1));
		sd_ref(s,
		       "every_nth %ld with opts 0x%lx (%s timeout) -> rule sd-every-nth (drop "
		       "every %ldth): approximate (scsi_debug counts every command of all its "
		       "devices; the rule counts the LUN's own)",
		       s->every_nth, s->opts, s->opts & 4 ? "command" : "medium access",
		       s->every_nth);
	} else if (s->every_nth || (s->opts & ~(long)(1 | 2 | 4 | 128))) {
		sd_ref(s,
		       "not reproduced: every_nth %ld with opts 0x%lx: only timeouts (0x4, 0x80) "
		       "every Nth command with N > 0 are converted",
		       s->every_nth, s->opts);
	}
	if (s->ndelay > 0 || s->delay > 0) {
		double ms = s->ndelay > 0 ? s->ndelay / 1e6 : s->delay * 1000.0 / SD_HZ;
		json_array_append_new(rules,
				      json_pack("{s:s,s:{s:i},s:{s:f}}", "id", "sd-delay", "match",
						"lun", s->lun, "action", "delay_ms", ms));
		sd_ref(s,
		       "%s -> rule sd-delay (%.3f ms on every command the rules above do not "
		       "take): %s",
		       s->ndelay > 0 ? "ndelay" : "delay", ms,
		       s->ndelay > 0 ? "exact" : "approximate (jiffies at HZ 250, Debian's)");
	}
}

/* The scenario's LUN. */
static json_t *sd_lun(const struct sd *s)
{
	char size[32];

	snprintf(size, sizeof(size), "%ldMiB", s->dev_size_mb > 0 ? s->dev_size_mb : 8);
	return json_pack("{s:i,s:s,s:i,s:s,s:s}", "lun", s->lun, "size", size, "block_size",
			 (int)(s->sector_size ? s->sector_size : 512), "vendor", "Linux", "product",
			 "scsi_debug");
}

/* See import_sd.h. */
json_t *fl_import_scsi_debug(FILE *in, const char *src, int lun, const char *name, char *err,
			     size_t errlen)
{
	struct sd s = {.lun = lun, .me_start = 0x1234, .me_count = 10};
	json_t *out = NULL, *rules = json_array();
	char desc[512];

	s.tmf = json_object();
	s.refs = json_array();
	for (int t = 0; t < 5; t++)
		s.rules[t] = json_array();
	if (sd_read(&s, in)) {
		snprintf(err, errlen, "%s: %s", src, s.err);
		goto out;
	}
	for (int t = 0; t < 3; t++)
		json_array_extend(rules, s.rules[t]);
	sd_options(&s, rules);
	snprintf(desc, sizeof(desc),
		 "Converted by faultlun import --scsi-debug from %.200s (%u lines): %zu rule(s), "
		 "%zu TMF behaviour(s) for LUN %d; the references say how each line maps "
		 "(docs/import.md).",
		 src, s.nlines, json_array_size(rules), json_object_size(s.tmf), lun);
	out = json_pack("{s:i,s:s,s:s,s:{s:s,s:O},s:[s],s:[o]}", "faultlun", 1, "name", name,
			"description", desc, "emulates", "behaviour",
			"The error injections of Linux's scsi_debug, on a LUN of a real target.",
			"references", s.refs, "frontends", "iscsi", "luns", sd_lun(&s));
	if (json_array_size(rules))
		json_object_set(out, "rules", rules);
	if (json_object_size(s.tmf))
		json_object_set(out, "tmf", s.tmf);
out:
	json_decref(rules);
	json_decref(s.tmf);
	json_decref(s.refs);
	for (int t = 0; t < 5; t++)
		json_decref(s.rules[t]);
	return out;
}
