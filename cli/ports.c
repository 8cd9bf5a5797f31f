/* SPDX-License-Identifier: MIT */
/*
 * ports.c - the iSCSI portals of a scenario's target ports (ports.h): one
 * portal per target port, each carrying its relative target port identifier
 * (SPC-4 r37 7.8.6.7) and a TargetPortalGroupTag (RFC 7143 13.9) equal to it.
 */
#include "ports.h"

#include <stdio.h>
#include <string.h>

/* Copies "ADDR:PORT" into dst with the port replaced by 0. */
static void ephemeral_of(const char *listen, char *dst, size_t cap)
{
	const char *colon = strrchr(listen, ':');
	const char *bracket = strrchr(listen, ']');

	if (!colon || (bracket && colon < bracket))
		snprintf(dst, cap, "%s:0", listen);
	else
		snprintf(dst, cap, "%.*s:0", (int)(colon - listen), listen);
}

/* The portals of sc's target ports. */
int cli_ports(const char *cmd, const struct fl_scenario *sc, const char *const *listen,
	      unsigned nlisten, bool ephemeral, struct cli_ports *out)
{
	unsigned n = fl_scenario_port_count(sc);

	memset(out, 0, sizeof(*out));
	if (n == 0) {
		if (nlisten <= 1)
			return 0;
		n = nlisten;
	} else if (nlisten > n) {
		fprintf(stderr,
			"faultlun %s: %u --listen for a scenario with %u port%s (one per port, in "
			"order)\n",
			cmd, nlisten, n, n == 1 ? "" : "s");
		return -1;
	}
	if (n > FL_ISCSI_MAX_PORTS) {
		fprintf(stderr, "faultlun %s: at most %u portals\n", cmd, FL_ISCSI_MAX_PORTS);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct sc_port *p = fl_scenario_port(sc, i);
		const char *addr = i < nlisten ? listen[i] : p->listen;

		if (ephemeral)
			ephemeral_of(addr, out->listen[i], sizeof(out->listen[i]));
		else
			snprintf(out->listen[i], sizeof(out->listen[i]), "%s", addr);
		out->v[i].listen = out->listen[i];
		out->v[i].rel_port_id = p ? p->rel_port_id : (uint16_t)(i + 1);
		out->v[i].tpgt = out->v[i].rel_port_id;
	}
	out->n = n;
	return 0;
}
