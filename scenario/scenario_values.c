/* SPDX-License-Identifier: MIT */
/*
 * scenario_values.c - the value parsers of the scenario loader: diagnostics at
 * a JSON path (FILE:LINE:COL: message, quoting the bad value), unknown keys,
 * numbers, sizes, booleans, state names, sense (SPC-4 r37 4.5.6 keys, Annex D
 * ASC/ASCQ) and ALUA states (SPC-4 r37 5.15.2.4).
 */
#include "fl_size.h"
#include "scenario_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Reports a problem at path (its key when at_key). */
void perr(struct pctx *c, const char *path, bool at_key, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int line, col;

	c->nerr++;
	if (c->d->n >= FL_DIAGS_MAX) {
		c->d->more++; /* counted, not shown: no need to find where */
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	jpos_find(&c->pos, path, at_key, &line, &col);
	diag_add(c->d, c->file, line, col, "%s", msg ? msg : "out of memory");
	free(msg);
}

/*
 * Reports a warning at path: a line "warning: ..." among the diagnostics that
 * does not make the scenario invalid (lint prints it; the load succeeds).
 */
void pwarn(struct pctx *c, const char *path, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;
	int line, col;

	if (c->d->n >= FL_DIAGS_MAX)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	jpos_find(&c->pos, path, false, &line, &col);
	diag_add(c->d, c->file, line, col, "warning: %s", msg ? msg : "out of memory");
	free(msg);
}

/* Collects the start of a JSON dump and stops it (returns -1) once it has enough. */
static int quote_chunk(const char *buf, size_t n, void *data)
{
	char *q = data;
	size_t have = strlen(q), room = 64 - have;

	memcpy(q + have, buf, n < room ? n : room);
	q[have + (n < room ? n : room)] = 0;
	return have + n >= 64 ? -1 : 0;
}

/*
 * Compact JSON of v, cut at ~60 characters, for quoting in messages. The
 * dump stops there, so quoting a large value costs no more than a small one.
 */
const char *pquote(const json_t *v, char *buf, size_t size)
{
	char q[65] = "";

	if (!v) {
		snprintf(buf, size, "?");
		return buf;
	}
	json_dump_callback(v, quote_chunk, q, JSON_ENCODE_ANY | JSON_COMPACT);
	if (strlen(q) > 60)
		snprintf(buf, size, "%.57s...", q);
	else
		snprintf(buf, size, "%s", q[0] ? q : "?");
	return buf;
}

/* The last component of a path, for naming a key in a message. */
static const char *pname(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Levenshtein distance of two short words (case-insensitive), capped at 99. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64], prev, tmp;

	if (la > 62 || lb > 62)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);

			tmp = row[j];
			row[j] = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
			if (prev + cost < row[j])
				row[j] = prev + cost;
			prev = tmp;
		}
	}
	return row[lb];
}

/* The candidate closest to word, if close enough to be a likely typo; else NULL. */
const char *closest_word(const char *word, const char *const *cands, size_t n, size_t stride)
{
	const char *best = NULL;
	size_t bestd = 99, limit = strlen(word) < 6 ? 2 : 3;

	for (size_t i = 0; i < n; i++) {
		const char *cand = *(const char *const *)((const char *)cands + i * stride);
		size_t d;

		if (!cand)
			break;
		d = edit_distance(word, cand);
		if (d < bestd) {
			bestd = d;
			best = cand;
		}
	}
	return bestd <= limit ? best : NULL;
}

/* Reports every key of obj not in allowed (NULL-terminated); returns their count. */
int pkeys(struct pctx *c, const char *path, json_t *obj, const char *what,
	  const char *const *allowed)
{
	const char *key;
	json_t *v;
	int bad = 0;

	json_object_foreach(obj, key, v)
	{
		size_t i;
		char sub[512], list[512] = "";
		const char *near;

		for (i = 0; allowed[i]; i++)
			if (!strcmp(allowed[i], key))
				break;
		if (allowed[i])
			continue;
		bad++;
		if (c->d->n >= FL_DIAGS_MAX) { /* not shown: spare the suggestions */
			perr(c, path, true, "unknown key");
			continue;
		}
		for (i = 0; allowed[i]; i++) {
			if (i)
				strncat(list, ", ", sizeof(list) - strlen(list) - 1);
			strncat(list, allowed[i], sizeof(list) - strlen(list) - 1);
		}
		snprintf(sub, sizeof(sub), "%s/%s", path, key);
		near = closest_word(key, allowed, SIZE_MAX, sizeof(allowed[0]));
		if (near)
			perr(c, sub, true, "unknown key \"%s\" in %s (did you mean \"%s\"?)", key,
			     what, near);
		else
			perr(c, sub, true, "unknown key \"%s\" in %s (expected one of: %s)", key,
			     what, list);
	}
	return bad;
}

/* Parses a non-negative integer: JSON integer or "0x.." / decimal string. */
bool pnum(struct pctx *c, const char *path, json_t *v, uint64_t max, uint64_t *out)
{
	char q[80];
	uint64_t n;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		n = (uint64_t)json_integer_value(v);
	} else if (json_is_string(v) && json_string_value(v)[0] && json_string_value(v)[0] != '-') {
		const char *s = json_string_value(v);
		char *end;

		/* "0x.." is hex, anything else decimal: "010" is ten, as in a size */
		bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

		errno = 0;
		n = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
		if (errno || *end || end == s + (hex ? 2 : 0) ||
		    isspace((unsigned char)s[hex ? 2 : 0])) {
			perr(c, path, false, "\"%s\": expected a non-negative integer, got %s",
			     pname(path), pquote(v, q, sizeof(q)));
			return false;
		}
	} else {
		perr(c, path, false, "\"%s\": expected a non-negative integer, got %s", pname(path),
		     pquote(v, q, sizeof(q)));
		return false;
	}
	if (n > max) {
		perr(c, path, false, "\"%s\": %s is out of range (at most %" PRIu64 ")",
		     pname(path), pquote(v, q, sizeof(q)), max);
		return false;
	}
	*out = n;
	return true;
}

/* Parses true / false. */
bool pbool(struct pctx *c, const char *path, json_t *v, bool *out)
{
	char q[80];

	if (!json_is_boolean(v)) {
		perr(c, path, false, "\"%s\": expected true or false, got %s", pname(path),
		     pquote(v, q, sizeof(q)));
		return false;
	}
	*out = json_is_true(v);
	return true;
}

/* Parses a number in [lo, hi]. */
bool pdouble(struct pctx *c, const char *path, json_t *v, double lo, double hi, double *out)
{
	char q[80];

	if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi) {
		perr(c, path, false, "\"%s\": expected a number from %g to %g, got %s", pname(path),
		     lo, hi, pquote(v, q, sizeof(q)));
		return false;
	}
	*out = json_number_value(v);
	return true;
}

/* Parses a size: bytes, or a string with B/KiB/MiB/GiB/TiB/KB/MB/GB/TB/blocks. */
bool psize(struct pctx *c, const char *path, json_t *v, uint64_t *out, bool *in_blocks)
{
	char q[80];

	*in_blocks = false;
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	/* "blocks" stays a count: the caller knows the block size */
	if (json_is_string(v) && fl_parse_size(json_string_value(v), 0, out, in_blocks) == 0)
		return true;
	perr(c, path, false,
	     "\"%s\": invalid size %s (expected bytes, or a string such as \"64MiB\", "
	     "\"1GiB\", \"4096\" or \"8blocks\")",
	     pname(path), pquote(v, q, sizeof(q)));
	return false;
}

/* Parses a state name (reports unknown names); returns the index or -1. */
int pstate(struct pctx *c, const char *path, json_t *v)
{
	char q[80];

	if (json_is_string(v)) {
		for (size_t i = 0; i < c->sc->nstates; i++)
			if (!strcmp(c->sc->states[i], json_string_value(v)))
				return (int)i;
		perr(c, path, false, "unknown state %s (not in \"states\")",
		     pquote(v, q, sizeof(q)));
		return -1;
	}
	perr(c, path, false, "\"%s\": expected a state name, got %s", pname(path),
	     pquote(v, q, sizeof(q)));
	return -1;
}

/* Parses "states": a list of state names -> mask (0 when absent or bad). */
uint64_t pstates(struct pctx *c, const char *path, json_t *v)
{
	uint64_t mask = 0;
	size_t i;
	json_t *e;
	char q[80];

	if (!json_is_array(v) || json_array_size(v) == 0) {
		perr(c, path, false, "\"states\": expected a non-empty list of state names, got %s",
		     pquote(v, q, sizeof(q)));
		return 0;
	}
	json_array_foreach(v, i, e)
	{
		char sub[512];
		int s;

		snprintf(sub, sizeof(sub), "%s/%zu", path, i);
		s = pstate(c, sub, e);
		if (s >= 0)
			mask |= 1ull << s;
	}
	return mask;
}

/* Parses a hex byte ("0A" or "0x0A"), or a decimal/0x integer. */
static bool hexbyte(const char *s, uint8_t *out)
{
	char *end;
	unsigned long n;

	if (!*s)
		return false;
	errno = 0;
	n = strtoul(s, &end, 16);
	if (errno || *end || n > 0xff)
		return false;
	*out = (uint8_t)n;
	return true;
}

/* Parses "AA/QQ" (hex) or an ASC/ASCQ name. */
bool pascq(struct pctx *c, const char *path, json_t *v, uint8_t *asc, uint8_t *ascq)
{
	char q[80], buf[64], *slash;

	if (!json_is_string(v)) {
		perr(c, path, false, "\"%s\": expected \"AA/QQ\" (hex) or an ASC/ASCQ name, got %s",
		     pname(path), pquote(v, q, sizeof(q)));
		return false;
	}
	if (!sense_asc_by_name(json_string_value(v), asc, ascq))
		return true;
	snprintf(buf, sizeof(buf), "%s", json_string_value(v));
	slash = strchr(buf, '/');
	if (slash) {
		*slash = 0;
		if (hexbyte(buf, asc) && hexbyte(slash + 1, ascq))
			return true;
	}
	perr(c, path, false,
	     "unknown additional sense code %s (expected \"AA/QQ\" in hex or a name from "
	     "`faultlun lint --sense-names`)",
	     pquote(v, q, sizeof(q)));
	return false;
}

/* Parses a sense object {key, asc, ascq}: key by name or number, ascq 0 when absent. */
static bool psense_object(struct pctx *c, const char *path, json_t *v, uint8_t *key, uint8_t *asc,
			  uint8_t *ascq)
{
	static const char *const keys[] = {"key", "asc", "ascq", NULL};
	json_t *k = json_object_get(v, "key"), *a = json_object_get(v, "asc"),
	       *aq = json_object_get(v, "ascq");
	uint64_t n;
	bool ok = !pkeys(c, path, v, "sense", keys);
	char sub[512], q[80];

	if (!k || !a) {
		perr(c, path, false, "sense object needs \"key\" and \"asc\", got %s",
		     pquote(v, q, sizeof(q)));
		return false;
	}
	snprintf(sub, sizeof(sub), "%s/key", path);
	if (json_is_string(k) && !sense_key_by_name(json_string_value(k), key))
		;
	else if (pnum(c, sub, k, 0xf, &n))
		*key = (uint8_t)n;
	else
		ok = false;
	snprintf(sub, sizeof(sub), "%s/asc", path);
	if (pnum(c, sub, a, 0xff, &n))
		*asc = (uint8_t)n;
	else
		ok = false;
	*ascq = 0;
	snprintf(sub, sizeof(sub), "%s/ascq", path);
	if (aq && pnum(c, sub, aq, 0xff, &n))
		*ascq = (uint8_t)n;
	else if (aq)
		ok = false;
	return ok;
}

/* Parses a sense "KEY/ASC_NAME", "KEY/0xAA/0xQQ" or {key, asc, ascq}. */
bool psense(struct pctx *c, const char *path, json_t *v, uint8_t *key, uint8_t *asc, uint8_t *ascq)
{
	char q[80], buf[128], *rest, *p2;

	if (json_is_object(v))
		return psense_object(c, path, v, key, asc, ascq);
	if (!json_is_string(v)) {
		perr(c, path, false,
		     "\"%s\": expected \"KEY/ASC_NAME\", \"KEY/0xAA/0xQQ\" or {key, asc, ascq}, "
		     "got %s",
		     pname(path), pquote(v, q, sizeof(q)));
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", json_string_value(v));
	rest = strchr(buf, '/');
	if (!rest) {
		perr(c, path, false, "sense %s: expected \"KEY/ASC_NAME\" or \"KEY/0xAA/0xQQ\"",
		     pquote(v, q, sizeof(q)));
		return false;
	}
	*rest++ = 0;
	if (hexbyte(buf, key) && *key <= 0xf && (isdigit((unsigned char)buf[0]))) {
		/* a numeric key: "3/11/00", "0x3/0x11/0x00" */
	} else if (sense_key_by_name(buf, key)) {
		const char *near = closest_word(buf, &sense_key_names[0].name, sense_key_count,
						sizeof(sense_key_names[0]));

		if (near) {
			perr(c, path, false,
			     "unknown sense key \"%s\" in %s (did you mean \"%s\"?)", buf,
			     pquote(v, q, sizeof(q)), near);
			return false;
		}
		perr(c, path, false,
		     "unknown sense key \"%s\" in %s (see `faultlun lint "
		     "--sense-names`)",
		     buf, pquote(v, q, sizeof(q)));
		return false;
	}
	p2 = strchr(rest, '/');
	if (p2) {
		*p2++ = 0;
		if (hexbyte(rest, asc) && hexbyte(p2, ascq))
			return true;
		perr(c, path, false, "invalid ASC/ASCQ numbers in sense %s (expected hex bytes)",
		     pquote(v, q, sizeof(q)));
		return false;
	}
	if (sense_asc_by_name(rest, asc, ascq)) {
		const char *near = closest_word(rest, &sense_asc_names[0].name, sense_asc_count,
						sizeof(sense_asc_names[0]));

		if (near) {
			perr(c, path, false,
			     "unknown sense name \"%s\" in %s (did you mean \"%s\"?)", rest,
			     pquote(v, q, sizeof(q)), near);
			return false;
		}
		perr(c, path, false,
		     "unknown sense name \"%s\" in %s (see `faultlun lint "
		     "--sense-names`)",
		     rest, pquote(v, q, sizeof(q)));
		return false;
	}
	return true;
}

/* Copies a string value of at most max characters into *out. */
bool pstr(struct pctx *c, const char *path, json_t *v, size_t max, char **out)
{
	char q[80];

	if (!json_is_string(v) || (max && strlen(json_string_value(v)) > max)) {
		if (max)
			perr(c, path, false,
			     "\"%s\": expected a string of at most %zu characters, "
			     "got %s",
			     pname(path), max, pquote(v, q, sizeof(q)));
		else
			perr(c, path, false, "\"%s\": expected a string, got %s", pname(path),
			     pquote(v, q, sizeof(q)));
		return false;
	}
	free(*out);
	*out = xstrdup(json_string_value(v));
	return true;
}

static const char *const alua_names[] = {
    [FL_ALUA_ACTIVE_OPTIMIZED] = "active_optimized",
    [FL_ALUA_ACTIVE_NON_OPTIMIZED] = "active_non_optimized",
    [FL_ALUA_STANDBY] = "standby",
    [FL_ALUA_UNAVAILABLE] = "unavailable",
    [FL_ALUA_LBA_DEPENDENT] = "lba_dependent",
    [FL_ALUA_OFFLINE] = "offline",
    [FL_ALUA_TRANSITIONING] = "transitioning",
};

/* Parses an ALUA state name. */
bool palua(struct pctx *c, const char *path, json_t *v, enum fl_alua_state *out)
{
	char q[80];

	if (json_is_string(v))
		for (size_t i = 0; i < sizeof(alua_names) / sizeof(alua_names[0]); i++)
			if (alua_names[i] && !strcmp(alua_names[i], json_string_value(v))) {
				*out = (enum fl_alua_state)i;
				return true;
			}
	perr(c, path, false,
	     "unknown ALUA state %s (expected active_optimized, active_non_optimized, "
	     "standby, unavailable, lba_dependent, offline or transitioning)",
	     pquote(v, q, sizeof(q)));
	return false;
}
