// SPDX-License-Identifier: MIT
/*
 * loop.c - the embedded target's event loop on a thread of its own, for the
 * subcommands that serve (`serve`, `check`), and its ordered stop.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the loop thread needs. */
struct loop_arg {
	struct fl_iscsi *t;
	const char *cmd;
};

/* The loop thread's body. */
static void *loop_main(void *p)
{
	struct loop_arg *a = p;
	int err = fl_iscsi_run(a->t);

	if (err)
		fprintf(stderr, "faultlun %s: event loop failed: %s\n", a->cmd, strerror(-err));
	free(a);
	return NULL;
}

/* Starts t's event loop on a new thread; 0, or -1 with a message naming cmd. */
int cli_loop_start(struct fl_iscsi *t, const char *cmd, pthread_t *th)
{
	struct loop_arg *a = malloc(sizeof(*a));

	if (a) {
		a->t = t;
		a->cmd = cmd;
		if (!pthread_create(th, NULL, loop_main, a))
			return 0;
		free(a);
	}
	fprintf(stderr, "faultlun %s: cannot start the event loop\n", cmd);
	return -1;
}

/*
 * Stops the loop and joins it, then closes the connections: before the
 * engine goes (its held commands complete into the portal's queue), and
 * before the portal itself is destroyed.
 */
void cli_loop_stop(struct fl_iscsi *t, pthread_t th)
{
	fl_iscsi_stop(t);
	pthread_join(th, NULL);
	fl_iscsi_disconnect(t);
}
