/* SPDX-License-Identifier: MIT */
/*
 * cfgstring.c - the configuration string of a faultlun TCMU device.
 *
 * LIO hands the handler what was written as `dev_config=` into the device's
 * configfs control file (at most 255 bytes), e.g.
 *
 *   faultlun/scenario=/etc/faultlun/x.json;store=file:/var/lib/x.img;lun=0
 *
 * Grammar (docs/tcmu.md is the user-facing copy):
 *
 *   cfgstring := [ "faultlun/" ] options
 *   options   := PATH | option *( ";" option )     a bare PATH means scenario=PATH
 *   option    := key "=" value                     value: non-empty, no ';'
 *   key       := scenario | store | lun | seed | trace | ctl | read_only
 *              | tcmur_cmd_time_out
 *   store     := "memory" | "memory:" SIZE | "file:" PATH
 *   SIZE      := a size as fl_size.h reads it: DIGITS [ B | KiB | MiB | GiB | TiB
 *                | KB | MB | GB | TB ]; no "blocks" (the block size is the device's)
 *   lun       := 0..255          seed := decimal or 0x-hex, 64 bits
 *   trace/ctl := PATH | "none"   PATH := absolute, no ';'
 *   read_only := "1" | "true" | "0" | "false"
 *
 * tcmur_cmd_time_out=N belongs to tcmu-runner (it strips it after
 * check_config); it is accepted here and otherwise ignored. Each key may
 * appear once. Nothing here touches the file system: check_config does that.
 */
#include "fl_list.h"
#include "fl_size.h"
#include "tcmu_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets *reason to a formatted, malloc'ed message and returns -EINVAL. */
static int cfg_fail(char **reason, const char *fmt, ...)
{
	va_list ap;

	if (reason) {
		va_start(ap, fmt);
		if (vasprintf(reason, fmt, ap) < 0)
			*reason = NULL;
		va_end(ap);
	}
	return -EINVAL;
}

/* Parses an unsigned decimal or 0x-hex number that must fill the whole string. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	int base = 10;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return -EINVAL;
	}
	errno = 0;
	*out = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

/* Copies an absolute path value, refusing relative or empty ones. */
static int take_path(const char *key, const char *val, char *dst, char **reason)
{
	if (val[0] != '/')
		return cfg_fail(reason, "%s: '%s' is not an absolute path", key, val);
	strcpy(dst, val); /* val is shorter than the whole string, which fits dst */
	return 0;
}

/* Applies store=memory, store=memory:SIZE or store=file:PATH to *out. */
static int apply_store(const char *val, struct cfgstr *out, char **reason)
{
	out->store_set = true;
	if (!strcmp(val, "memory")) {
		out->store = FL_STORE_MEMORY;
		return 0;
	}
	if (!strncmp(val, "memory:", 7)) {
		out->store = FL_STORE_MEMORY;
		if (fl_parse_size(val + 7, 0, &out->store_size, NULL) || out->store_size == 0)
			return cfg_fail(reason,
					"store: bad size '%s' (bytes, or a number with B, "
					"KiB, MiB, GiB, TiB, KB, MB, GB or TB)",
					val + 7);
		return 0;
	}
	if (!strncmp(val, "file:", 5)) {
		out->store = FL_STORE_FILE;
		return take_path("store=file", val + 5, out->store_path, reason);
	}
	return cfg_fail(reason, "store: '%s' is not memory, memory:SIZE or file:PATH", val);
}

/* Applies read_only=1|true|0|false to *out. */
static int apply_read_only(const char *val, struct cfgstr *out, char **reason)
{
	/* the values of a JSON boolean, and configfs's 1/0 */
	if (!strcmp(val, "1") || !strcmp(val, "true")) {
		out->read_only = true;
		return 0;
	}
	if (!strcmp(val, "0") || !strcmp(val, "false")) {
		out->read_only = false;
		return 0;
	}
	return cfg_fail(reason, "read_only: '%s' is not 1, true, 0 or false", val);
}

/* Applies one key=value option to *out. */
static int apply_option(const char *key, const char *val, struct cfgstr *out, char **reason,
			unsigned *seen)
{
	static const char *const keys[] = {
	    "scenario",		  "store", "lun", "seed", "trace", "ctl", "read_only",
	    "tcmur_cmd_time_out", NULL, /* end of the list for fl_list_index */
	};
	int found = fl_list_index(keys, key);
	unsigned idx = (unsigned)found;
	uint64_t v;

	if (found < 0)
		return cfg_fail(
		    reason,
		    "unknown option '%s' (known: scenario, store, lun, seed, trace, ctl, "
		    "read_only)",
		    key);
	if (*seen & (1u << idx))
		return cfg_fail(reason, "option '%s' given twice", key);
	*seen |= 1u << idx;
	if (!*val)
		return cfg_fail(reason, "option '%s' has an empty value", key);

	switch (idx) {
	case 0:
		return take_path("scenario", val, out->scenario, reason);
	case 1:
		return apply_store(val, out, reason);
	case 2:
		if (parse_u64(val, &v) || v > 255)
			return cfg_fail(reason, "lun: '%s' is not a LUN number 0..255", val);
		out->lun_set = true;
		out->lun = (uint16_t)v;
		return 0;
	case 3:
		if (parse_u64(val, &out->seed))
			return cfg_fail(reason, "seed: '%s' is not a 64-bit number", val);
		out->seed_set = true;
		return 0;
	case 4:
		if (!strcmp(val, "none")) {
			out->trace_off = true;
			return 0;
		}
		return take_path("trace", val, out->trace, reason);
	case 5:
		if (!strcmp(val, "none")) {
			out->ctl_off = true;
			return 0;
		}
		return take_path("ctl", val, out->ctl, reason);
	case 6:
		return apply_read_only(val, out, reason);
	default:
		if (parse_u64(val, &v))
			return cfg_fail(reason, "tcmur_cmd_time_out: '%s' is not a number", val);
		return 0;
	}
}

int cfgstr_parse(const char *text, struct cfgstr *out, char **reason)
{
	char buf[CFGSTR_MAX + 1];
	const char *opts = text;
	unsigned seen = 0;
	size_t len;
	char *p, *next;
	int rc;

	if (reason)
		*reason = NULL;
	memset(out, 0, sizeof(*out));
	if (!text)
		return cfg_fail(reason, "no configuration string");
	len = strlen(text);
	if (len > CFGSTR_MAX)
		return cfg_fail(reason, "configuration string is %zu bytes; at most %d fit", len,
				CFGSTR_MAX);
	if (!strncmp(text, CFGSTR_SUBTYPE "/", sizeof(CFGSTR_SUBTYPE)))
		opts = text + sizeof(CFGSTR_SUBTYPE);
	else if (text[0] != '/' && strchr(text, '/') &&
		 strcspn(text, "=;") > (size_t)(strchr(text, '/') - text))
		return cfg_fail(reason, "configuration string must start with '%s/'",
				CFGSTR_SUBTYPE);
	if (!*opts)
		return cfg_fail(reason, "empty options: expected scenario=/path/to/scenario.json");

	strcpy(buf, opts);
	/* A bare absolute path is the scenario. */
	if (buf[0] == '/' && !strchr(buf, '=')) {
		if (strchr(buf, ';'))
			return cfg_fail(reason, "'%s': options are key=value separated by ';'",
					buf);
		strcpy(out->scenario, buf);
		return 0;
	}
	for (p = buf; p; p = next) {
		char *eq;

		next = strchr(p, ';');
		if (next)
			*next++ = '\0';
		if (!*p) {
			if (!next)
				break; /* one trailing ';' is tolerated */
			return cfg_fail(reason, "empty option between ';'");
		}
		eq = strchr(p, '=');
		if (!eq)
			return cfg_fail(reason, "option '%s' is not key=value", p);
		*eq = '\0';
		rc = apply_option(p, eq + 1, out, reason, &seen);
		if (rc)
			return rc;
	}
	if (!out->scenario[0])
		return cfg_fail(reason, "missing scenario=/path/to/scenario.json");
	return 0;
}
