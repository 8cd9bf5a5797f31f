/* SPDX-License-Identifier: MIT */
/*
 * opts.c - strict readers of option values (cli_opts.h): numbers, sizes,
 * block sizes, iSCSI names (RFC 7143 4.2.7, RFC 3720 3.2.6.3) and words from
 * a list. Each error names the subcommand, the option, the bad value and what
 * would be accepted.
 */
#include "cli_opts.h"
#include "fl_size.h"
#include "fl_commit.h" /* FAULTLUN_GIT: the commit of the build (cli/commit.cmake) */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAULTLUN_VERSION
#define FAULTLUN_VERSION "unknown"
#endif
#ifndef FAULTLUN_GIT
#define FAULTLUN_GIT ""
#endif

/* Reads decimal or 0x hexadecimal digits only; returns -EINVAL or -ERANGE. */
static int read_uint(const char *s, uint64_t *out)
{
	int base = 10;
	uint64_t v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		unsigned d;

		if (isdigit((unsigned char)*s))
			d = (unsigned)(*s - '0');
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / (unsigned)base)
			return -ERANGE;
		v = v * (unsigned)base + d;
	}
	*out = v;
	return 0;
}

int cli_opt_uint(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	uint64_t v;
	int r = read_uint(s, &v);

	if (r == -EINVAL) {
		fprintf(stderr,
			"faultlun %s: %s: '%s' is not a number (%" PRIu64 "..%" PRIu64 ")\n", cmd,
			opt, s, min, max);
		return -1;
	}
	if (r || v < min || v > max) {
		fprintf(stderr,
			"faultlun %s: %s: '%s' is out of range (%" PRIu64 "..%" PRIu64 ")\n", cmd,
			opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_opt_size(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
	uint64_t v;
	int r = fl_parse_size(s, 0, &v, NULL);

	if (r == -ERANGE) {
		fprintf(stderr, "faultlun %s: %s: '%s' is too large (at most 2^64 - 1 bytes)\n",
			cmd, opt, s);
		return -1;
	}
	if (r || !v) {
		fprintf(stderr,
			"faultlun %s: %s: '%s' is not a size (a positive number of bytes, or with "
			"a unit: B KiB MiB GiB TiB KB MB GB TB, e.g. 64MiB)\n",
			cmd, opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_opt_block_size(const char *cmd, const char *opt, const char *s, uint32_t *out)
{
	uint64_t v;
	int r = read_uint(s, &v);

	if (r || v < 512 || v > 65536 || (v & (v - 1))) {
		fprintf(stderr,
			"faultlun %s: %s: '%s' is not a block size (a power of two: 512, 1024, "
			"2048, 4096, ... 65536)\n",
			cmd, opt, s);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

/* True when s is n hexadecimal digits and nothing else. */
static bool all_hex(const char *s, size_t n)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* Why s is not an iSCSI name, or NULL when it is one. */
static const char *iqn_problem(const char *s)
{
	size_t len = strlen(s);

	if (len > 223)
		return "longer than 223 bytes";
	for (const char *p = s; *p; p++) {
		if (isupper((unsigned char)*p))
			return "iSCSI names are lower case";
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '-' &&
		    *p != '.' && *p != ':')
			return "only a-z, 0-9, '-', '.' and ':' are allowed";
	}
	if (!strncmp(s, "eui.", 4))
		return all_hex(s + 4, 16) ? NULL : "eui. takes 16 hex digits";
	if (!strncmp(s, "naa.", 4))
		return all_hex(s + 4, 16) || all_hex(s + 4, 32) ? NULL
								: "naa. takes 16 or 32 hex digits";
	if (strncmp(s, "iqn.", 4))
		return "not iqn.YYYY-MM.DOMAIN[:NAME], eui.HEX16 or naa.HEX16/HEX32";
	/* iqn.yyyy-mm.reversed.domain[:unique] (RFC 3720 3.2.6.3.1) */
	const char *d = s + 4;

	if (!(isdigit((unsigned char)d[0]) && isdigit((unsigned char)d[1]) &&
	      isdigit((unsigned char)d[2]) && isdigit((unsigned char)d[3]) && d[4] == '-' &&
	      (d[5] == '0' || d[5] == '1') && isdigit((unsigned char)d[6]) && d[7] == '.'))
		return "iqn. is followed by a date YYYY-MM and a dot";
	int month = (d[5] - '0') * 10 + (d[6] - '0');

	if (month < 1 || month > 12)
		return "the month of iqn.YYYY-MM is 01..12";
	if (!d[8] || d[8] == ':' || d[8] == '.')
		return "iqn.YYYY-MM. is followed by a reversed domain name";
	return NULL;
}

int cli_opt_iqn(const char *cmd, const char *opt, const char *s)
{
	const char *why = iqn_problem(s);

	if (!why)
		return 0;
	fprintf(stderr,
		"faultlun %s: %s: '%s' is not an iSCSI name (%s; e.g. "
		"iqn.2026-12.org.example:disk1)\n",
		cmd, opt, s, why);
	return -1;
}

int cli_opt_word(const char *cmd, const char *opt, const char *s, const char *const *words)
{
	for (size_t i = 0; words[i]; i++)
		if (!strcmp(s, words[i]))
			return 0;
	fprintf(stderr, "faultlun %s: %s: '%s' is not one of ", cmd, opt, s);
	for (size_t i = 0; words[i]; i++)
		fprintf(stderr, "%s%s", i ? (words[i + 1] ? ", " : " or ") : "", words[i]);
	fprintf(stderr, "\n");
	return -1;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	char spec[64];
	const char *rest = shortopts;
	int opt;

	/* Leading ':' (after any '+') makes a missing value return ':'. */
	if (*rest == '+')
		rest++;
	snprintf(spec, sizeof(spec), "%s:%s", shortopts[0] == '+' ? "+" : "", rest);
	opterr = 0;
	opt = getopt_long(argc, argv, spec, longopts, NULL);
	if (opt == ':') {
		fprintf(stderr, "faultlun %s: %s needs a value\n", cmd, argv[optind - 1]);
		return '?';
	}
	if (opt == '?') {
		if (optopt && optopt < 128 && !(optind > 0 && !strncmp(argv[optind - 1], "--", 2)))
			fprintf(stderr, "faultlun %s: unknown option '-%c'\n", cmd, optopt);
		else
			fprintf(stderr, "faultlun %s: unknown option '%s'\n", cmd,
				argv[optind - 1]);
	}
	return opt;
}

void cli_print_version(FILE *out)
{
	if (FAULTLUN_GIT[0])
		fprintf(out, "faultlun %s (git %s)\n", FAULTLUN_VERSION, FAULTLUN_GIT);
	else
		fprintf(out, "faultlun %s\n", FAULTLUN_VERSION);
}

void cli_try_help(const char *cmd)
{
	fprintf(stderr, "Try 'faultlun help %s'.\n", cmd);
}
