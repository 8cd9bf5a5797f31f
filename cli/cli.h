/* SPDX-License-Identifier: MIT */
/*
 * cli.h - subcommands of the `faultlun` command. Each returns the process
 * exit status: 0 success, 1 a check failed (lint errors, verdict FAIL),
 * 2 usage or setup error.
 */
#ifndef FL_CLI_H
#define FL_CLI_H

#include "fl_iscsi.h"

#include <pthread.h>

int cmd_serve(int argc, char **argv);
int cmd_lint(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_vm(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_explore_merge(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_import(int argc, char **argv);

/*
 * The guest options `faultlun vm` and `faultlun explore` share: --cache,
 * --accel, --timeout, --memory, --cpus and --tcg-thread, listed for getopt_long by
 * CLI_VM_LONGOPTS. cli_vm_opt reads option opt (getopt's value) of command
 * cmd into o: 1 read, -1 a bad value (message printed), 0 not one of them.
 */
/* clang-format off */
#define CLI_VM_LONGOPTS                                                                            \
	{"cache", required_argument, NULL, 'c'}, {"accel", required_argument, NULL, 'a'},          \
	{"timeout", required_argument, NULL, 't'}, {"memory", required_argument, NULL, 'm'},       \
	{"cpus", required_argument, NULL, 'C'}, {"tcg-thread", required_argument, NULL, 'G'}
/* clang-format on */
struct fl_vm_opts;
int cli_vm_opt(const char *cmd, int opt, const char *arg, struct fl_vm_opts *o);

/* Writes the hex SHA-256 of the file at path into hex; 0 or -1 (sha256.c). */
int sha256_file(const char *path, char hex[65]);

/* The embedded target's event loop on its own thread (loop.c). */
struct fl_iscsi;
int cli_loop_start(struct fl_iscsi *t, const char *cmd, pthread_t *th);
void cli_loop_stop(struct fl_iscsi *t, pthread_t th);

#endif
