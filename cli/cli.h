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
int cmd_check(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_import(int argc, char **argv);

/* Writes the hex SHA-256 of the file at path into hex; 0 or -1 (sha256.c). */
int sha256_file(const char *path, char hex[65]);

/* The embedded target's event loop on its own thread (loop.c). */
struct fl_iscsi;
int cli_loop_start(struct fl_iscsi *t, const char *cmd, pthread_t *th);
void cli_loop_stop(struct fl_iscsi *t, pthread_t th);

#endif
