/* SPDX-License-Identifier: MIT */
/*
 * fl_iscsi.h - public contract of faultlun's embedded iSCSI target (RFC 7143).
 *
 * A userspace iSCSI target: one listening portal per target port, one epoll
 * event loop, any number of sessions (MaxConnections=1 each,
 * ErrorRecoveryLevel=0). Every SCSI command, task-management function, PDU and
 * connection event goes through the fault engine (fl_faults.h), which decides
 * what the initiator sees.
 *
 * Threading: fl_iscsi_run() runs the loop on the calling thread until
 * fl_iscsi_stop(). fl_iscsi_stop() may be called from any thread and from a
 * signal handler. Everything else belongs to the thread that owns the target.
 */
#ifndef FL_ISCSI_H
#define FL_ISCSI_H

#include "fl_faults.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Default portal and target name. */
#define FL_ISCSI_DEFAULT_LISTEN "127.0.0.1:3260"
#define FL_ISCSI_DEFAULT_IQN "iqn.2026-12.org.faultlun:target"

/* A timeout option that turns its check off. */
#define FL_ISCSI_OFF 0xffffffffu

/* Most portals (target ports) one target listens on. */
#define FL_ISCSI_MAX_PORTS 16

/*
 * One target port of a multi-port target (docs/multipath.md): its portal,
 * its relative target port identifier (SPC-4 r37 7.8.6.7), carried by every
 * command accepted on it, and its TargetPortalGroupTag (RFC 7143 13.9).
 */
struct fl_iscsi_port {
	const char *listen; /* "ADDR:PORT"; port 0 = ephemeral */
	uint16_t rel_port_id;
	uint16_t tpgt;
};

/* Options of a target; strings are copied by fl_iscsi_create. */
struct fl_iscsi_opts {
	const char *listen; /* "ADDR:PORT" ("[v6]:PORT" too); NULL = default; port 0 = ephemeral */
	/*
	 * Target ports: with nports > 0 the target listens on every port's
	 * portal instead of `listen` (one target reachable through each, like a
	 * dual-controller array); SendTargets lists every portal with its tag.
	 */
	const struct fl_iscsi_port *ports;
	unsigned nports;
	const char *iqn;   /* target name; NULL = default */
	const char *alias; /* TargetAlias; NULL = "faultlun" */
	/*
	 * CHAP (RFC 7143 12.1.3). With chap_user set, every login must
	 * authenticate with CHAP (MD5). With mutual_user set too, an initiator
	 * asking for mutual CHAP gets the target's answer. Secrets are never
	 * logged.
	 */
	const char *chap_user, *chap_secret;
	const char *mutual_user, *mutual_secret;
	unsigned login_timeout_s; /* close a connection not logged in by then; 0 = 30 */
	/*
	 * Limits against peers that hold resources. 0 means the default; for
	 * the three times FL_ISCSI_OFF turns the check off.
	 *   max_connections: connections of any kind (default 1024), lowered to
	 *     fit RLIMIT_NOFILE with a margin for store files and control
	 *     clients; an eighth of it is kept for connections still logging in
	 *   max_sessions_per_initiator / _per_address: logged-in sessions of one
	 *     InitiatorName / one source address (default a quarter / a half of
	 *     max_connections)
	 *   max_queued_bytes: command buffers and unsent responses over every
	 *     connection (default 256 MiB; each connection has its own 64 MiB)
	 *   pdu_timeout_ms: a PDU begun must be complete within it (30000)
	 *   nopin_interval_ms: ping a session idle that long with a NOP-In
	 *     (15000); nopin_timeout_ms: close it if the ping is not answered
	 *     within that (30000) (RFC 7143 11.19; LIO's defaults)
	 */
	unsigned max_connections;
	unsigned max_sessions_per_initiator, max_sessions_per_address;
	uint64_t max_queued_bytes;
	unsigned pdu_timeout_ms, nopin_interval_ms, nopin_timeout_ms;
	int verbose; /* 0 errors, 1 connections, 2 every PDU */
	FILE *log;   /* NULL = stderr */
};

struct fl_iscsi;

/*
 * Binds the portal and prepares the loop. engine may be NULL only when target
 * is given (no faults: commands go straight to the core). Returns 0 or
 * -errno, with the reason logged.
 */
int fl_iscsi_create(const struct fl_iscsi_opts *opts, struct fl_engine *engine,
		    struct fl_target *target, struct fl_iscsi **out);

/* The bound port (useful after asking for port 0) and address of the first portal. */
uint16_t fl_iscsi_port(const struct fl_iscsi *t);
const char *fl_iscsi_address(const struct fl_iscsi *t);
/* How many portals; portal i's bound address, port and relative target port (0 or -ENOENT). */
unsigned fl_iscsi_portal_count(const struct fl_iscsi *t);
int fl_iscsi_portal(const struct fl_iscsi *t, unsigned i, const char **addr, uint16_t *port,
		    uint16_t *rel_port_id);
const char *fl_iscsi_iqn(const struct fl_iscsi *t);

/* Serves until fl_iscsi_stop(); returns 0, or -errno if the loop failed. */
int fl_iscsi_run(struct fl_iscsi *t);

/* Asks the loop to return; async-signal-safe. */
void fl_iscsi_stop(struct fl_iscsi *t);

/*
 * Closes every connection (the engine hears of each) and stops calling the
 * engine. Call it after the loop has returned and before fl_engine_destroy:
 * the engine then completes its held commands into the portal's queue, which
 * fl_iscsi_destroy drains.
 */
void fl_iscsi_disconnect(struct fl_iscsi *t);

/* Closes every connection, frees orphaned tasks and the target (not the engine). */
void fl_iscsi_destroy(struct fl_iscsi *t);

#ifdef __cplusplus
}
#endif
#endif
