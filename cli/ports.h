/* SPDX-License-Identifier: MIT */
/*
 * ports.h - the iSCSI portals of a scenario's target ports, for `faultlun
 * serve` and `faultlun check` (docs/multipath.md).
 */
#ifndef FL_CLI_PORTS_H
#define FL_CLI_PORTS_H

#include "fl_iscsi.h"
#include "fl_scenario.h"

#include <stdbool.h>

/* Room for the portal strings cli_ports writes. */
struct cli_ports {
	struct fl_iscsi_port v[FL_ISCSI_MAX_PORTS];
	char listen[FL_ISCSI_MAX_PORTS][256];
	unsigned n;
};

/*
 * Fills *out with the portals of sc's "ports": listen[i] (`--listen`
 * repeated) replaces port i's address; with ephemeral, every port number
 * becomes 0 (any free one). A scenario without "ports" gets one portal per
 * --listen past the first (relative ports 1, 2, ...), else none (out->n 0:
 * the single default portal). Returns 0, or -1 with a message on stderr
 * (more --listen than ports).
 */
int cli_ports(const char *cmd, const struct fl_scenario *sc, const char *const *listen,
	      unsigned nlisten, bool ephemeral, struct cli_ports *out);

#endif
