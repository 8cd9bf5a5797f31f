/* SPDX-License-Identifier: MIT */
/*
 * cli_opts.h - strict readers of option values shared by the subcommands of
 * `faultlun`, and the version line.
 *
 * Every reader takes the subcommand's name and the option's name and, on a
 * bad value, prints one line to stderr that names all three and the values
 * that would have been accepted:
 *
 *   faultlun serve: --lun: 'abc' is not a number (0..255)
 *
 * then returns -1; the caller exits with status 2 (usage error). Nothing is
 * ever silently read as 0.
 */
#ifndef FL_CLI_OPTS_H
#define FL_CLI_OPTS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

/*
 * getopt_long with faultlun's messages: an unknown option or a missing value
 * prints "faultlun CMD: ..." and returns '?'. shortopts should start with
 * '+' where operands may look like options (ctl's "release --all").
 */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/*
 * Reads an unsigned number in min..max: decimal or 0x hexadecimal, no sign,
 * no octal ("010" is ten), nothing after it.
 */
int cli_opt_uint(const char *cmd, const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out);

/* Reads a size as scenario files spell it (fl_size.h): 4096, 64MiB, 1GiB; never 0. */
int cli_opt_size(const char *cmd, const char *opt, const char *s, uint64_t *out);

/* Reads a logical block size: a power of two in 512..65536. */
int cli_opt_block_size(const char *cmd, const char *opt, const char *s, uint32_t *out);

/*
 * Checks an iSCSI name (RFC 7143 4.2.7): "iqn." yyyy-mm "." naming authority
 * [":" anything], "eui." and 16 hex digits, or "naa." and 16 or 32 hex digits;
 * lower case (RFC 3722 stringprep folds case), at most 223 bytes.
 */
int cli_opt_iqn(const char *cmd, const char *opt, const char *s);

/* Checks that s is one of the NULL-terminated words; the message lists them. */
int cli_opt_word(const char *cmd, const char *opt, const char *s, const char *const *words);

/* Prints "faultlun VERSION (git COMMIT)" to out. */
void cli_print_version(FILE *out);

/* Prints "Try 'faultlun help CMD'." after a usage error. */
void cli_try_help(const char *cmd);

#endif
