/* SPDX-License-Identifier: MIT */
/*
 * nexus.c - sessions as I_T nexuses: their ids, admission, start,
 * reinstatement and end, and the transport conditions the engine keeps for
 * each.
 *
 * SAM-5 r21 4.6: an I_T nexus is an initiator port and a target port; its id
 * is kept per whole initiator port name (nexus_id) so that persistent
 * reservations and unit attentions follow the port across logins. RFC 7143
 * 4.4.3 (a new login with the ISID and InitiatorName of a session reinstates
 * it), 11.12.6 (TSIH). RFC 7143 leaves resource limits to the target: a new
 * session is admitted here within the portal's limits (session_admit). The
 * login phase (login.c) and the session's routing (session.c) call in; this
 * file calls only the handlers below it (nop.c, scsi.c) and tx.c, which marks
 * a connection closing.
 */
#include "iscsi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* FNV-1a of a port name. */
static uint64_t nexus_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* The entry of a port name, or NULL. */
static struct nexus_ent *nexus_find(struct portal *p, const char *name, uint64_t h)
{
	if (!p->nexus_buckets)
		return NULL;
	for (struct nexus_ent *e = p->nexus_tab[h & (p->nexus_buckets - 1)]; e; e = e->next)
		if (e->hash == h && !strcmp(e->name, name))
			return e;
	return NULL;
}

/* Doubles the table (16 buckets at first); false when out of memory. */
static bool nexus_grow(struct portal *p)
{
	size_t nb = p->nexus_buckets ? p->nexus_buckets * 2 : 16;
	struct nexus_ent **tab = calloc(nb, sizeof(*tab));
	if (!tab)
		return false;
	for (size_t i = 0; i < p->nexus_buckets; i++)
		for (struct nexus_ent *e = p->nexus_tab[i], *n; e; e = n) {
			n = e->next;
			e->next = tab[e->hash & (nb - 1)];
			tab[e->hash & (nb - 1)] = e;
		}
	free(p->nexus_tab);
	p->nexus_tab = tab;
	p->nexus_buckets = nb;
	return true;
}

/*
 * Forgets the ports that no session uses and of which the core keeps nothing
 * (no persistent-reservation registration, no pending unit attention): their
 * next login gets a new nexus id, which nothing can tell from the old one.
 */
static void nexus_forget(struct portal *p)
{
	for (struct conn *c = p->conns; c; c = c->next)
		if (c->nexus_key) {
			struct nexus_ent *e = nexus_find(p, c->nexus_key, nexus_hash(c->nexus_key));
			if (e)
				e->live = true;
		}
	size_t before = p->nnexus;
	for (size_t i = 0; i < p->nexus_buckets; i++)
		for (struct nexus_ent **pp = &p->nexus_tab[i]; *pp;) {
			struct nexus_ent *e = *pp;
			if (!e->live && !be_nexus_in_use(p, e->id)) {
				*pp = e->next;
				free(e);
				p->nnexus--;
				continue;
			}
			e->live = false;
			pp = &e->next;
		}
	iscsi_log(p, LOG_INFO, NULL, "forgot %zu of %zu initiator ports (no session, no state)",
		  before - p->nnexus, before);
}

/*
 * Stable I_T nexus id for an initiator port name (SAM-5 4.6), keyed by the
 * whole name, so that persistent reservations and unit attentions follow the
 * port across logins.
 */
uint64_t nexus_id(struct portal *p, const char *port_name)
{
	uint64_t h = nexus_hash(port_name);
	struct nexus_ent *e = nexus_find(p, port_name, h);

	if (e)
		return e->id;
	uint64_t id = ++p->next_nexus;
	if (p->nnexus >= ISCSI_NEXUS_KEEP)
		nexus_forget(p);
	if (p->nnexus >= p->nexus_buckets && !nexus_grow(p))
		return id;
	size_t len = strlen(port_name) + 1;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return id;
	memcpy(e->name, port_name, len);
	e->hash = h;
	e->id = id;
	e->live = false;
	e->next = p->nexus_tab[h & (p->nexus_buckets - 1)];
	p->nexus_tab[h & (p->nexus_buckets - 1)] = e;
	p->nnexus++;
	return id;
}

/* Frees the nexus table (the portal is being destroyed). */
void nexus_free(struct portal *p)
{
	for (size_t i = 0; i < p->nexus_buckets; i++)
		for (struct nexus_ent *e = p->nexus_tab[i], *n; e; e = n) {
			n = e->next;
			free(e);
		}
	free(p->nexus_tab);
	p->nexus_tab = NULL;
	p->nexus_buckets = 0;
}

/* A new TSIH, never 0 and not in use (RFC 7143 11.12.6). */
uint16_t session_alloc_tsih(struct portal *p)
{
	for (;;) {
		uint16_t t = p->next_tsih++;
		if (!t)
			continue;
		if (!session_find_tsih(p, t))
			return t;
	}
}

/* The live session with this TSIH, or NULL. */
struct conn *session_find_tsih(struct portal *p, uint16_t tsih)
{
	for (struct conn *c = p->conns; c; c = c->next)
		if (!c->dead && c->logged_in && c->tsih == tsih)
			return c;
	return NULL;
}

/* Closes an older session with the same initiator port (RFC 7143 4.4.3). */
void session_reinstate(struct conn *c)
{
	for (struct conn *x = c->portal->conns; x; x = x->next) {
		if (x == c || x->dead || !x->logged_in || x->discovery)
			continue;
		if (!strcasecmp(x->initiator_name, c->initiator_name) &&
		    !memcmp(x->isid, c->isid, 6)) {
			conn_close(x, "session reinstated by a new login with the same ISID");
			/* The old nexus ends now, before the new login is announced. */
			session_end(x, false);
		}
	}
}

/* Enters the full feature phase. */
void session_start(struct conn *c)
{
	c->logged_in = true;
	if (c->discovery)
		return;
	/*
	 * SAM-5 r21 4.6.4: an I_T nexus is an initiator port and a target port;
	 * one initiator port logged in through two portals makes two nexuses.
	 */
	const char *iport = c->initiator_port ? c->initiator_port : "";
	size_t len = strlen(iport) + sizeof(",t,0xffff");
	free(c->nexus_key);
	c->nexus_key = malloc(len);
	if (c->nexus_key) {
		/* the whole name: a key cut short could join two ports in one nexus */
		if (c->rel_port_id > 1)
			snprintf(c->nexus_key, len, "%s,t,0x%x", iport, c->rel_port_id);
		else
			snprintf(c->nexus_key, len, "%s", iport);
		c->nexus_id = nexus_id(c->portal, c->nexus_key);
	} else {
		c->nexus_id = ++c->portal->next_nexus; /* out of memory: a nexus of its own */
	}
	be_conn_event(c->portal, c, FL_CONN_LOGIN);
	session_xport_refresh(c);
}

/* Leaves it (logout or connection loss). */
void session_end(struct conn *c, bool logout)
{
	if (!c->logged_in || c->discovery)
		return;
	c->logged_in = false;
	be_conn_event(c->portal, c, logout ? FL_CONN_LOGOUT : FL_CONN_CLOSED);
}

/* Re-reads the standing transport conditions of this session. */
void session_xport_refresh(struct conn *c)
{
	struct fl_xport_state xs;

	if (c->dead || !c->logged_in || c->discovery)
		return;
	be_xport_state(c->portal, c, &xs);
	bool was_stalled = c->xs.stall_max_cmd_sn;
	uint32_t old_nop = c->xs.nop_in_interval_ms;
	c->xs = xs;
	if (xs.stall_max_cmd_sn && !was_stalled) {
		iscsi_log(c->portal, LOG_INFO, c, "fault: MaxCmdSN stalled");
		nop_send_unsolicited(c, false); /* tells the initiator the window closed */
	}
	if (was_stalled && !xs.stall_max_cmd_sn)
		nop_send_unsolicited(c, false); /* carries the reopened window */
	if (xs.request_logout && !c->logout_req_sent) {
		c->logout_req_sent = true;
		async_send_logout_request(c, xs.logout_wait_s);
	}
	if (old_nop != xs.nop_in_interval_ms)
		nop_timer_arm(c);
}

/*
 * The session without CHAP (of c's address when same_addr) whose R2T has
 * waited longest for its Data-Out, more than ISCSI_STALL_MS; NULL if none.
 * Run only when the table is full and no session is idle.
 */
static struct conn *stalled_session(struct conn *c, bool same_addr)
{
	uint64_t stall_before = fl_mono_ns() - (uint64_t)ISCSI_STALL_MS * 1000000u;
	uint64_t since = 0;
	struct conn *stalled = NULL;

	for (struct conn *x = c->portal->conns; x; x = x->next) {
		if (x == c || x->dead || !x->logged_in || x->authenticated || x->tmfs ||
		    !x->ntasks || (same_addr && strcmp(x->peer_host, c->peer_host)))
			continue;
		uint64_t r2t = conn_oldest_r2t(x);
		if (r2t && r2t < stall_before && (!stalled || r2t < since)) {
			stalled = x;
			since = r2t;
		}
	}
	return stalled;
}

/*
 * Admits a new session of c at the end of its login (RFC 7143 leaves
 * resource limits to the target): at most max_per_initiator sessions of one
 * InitiatorName and max_per_address of one source address; when the session
 * share of the cap is full, the session idle longest that did not
 * authenticate with CHAP and has nothing in flight is closed to make room;
 * if none is idle, the one that did not authenticate with CHAP and has
 * waited longest for a Data-Out it was sent an R2T for (more than
 * ISCSI_STALL_MS ago) is closed instead: a session that holds a WRITE open
 * and answers every NOP-In is not idle, but it holds its place for nothing.
 * A session this login reinstates (same InitiatorName and ISID) does not
 * count. Returns 0, or ISCSI_LOGIN_OUT_OF_RESOURCES with why filled in.
 */
int session_admit(struct conn *c, char *why, size_t whylen)
{
	struct portal *p = c->portal;
	unsigned same_name = 0, same_addr = 0, sessions = 0;
	struct conn *victim = NULL, *addr_victim = NULL;
	bool stalled = false;

	for (struct conn *x = p->conns; x; x = x->next) {
		if (x == c || x->dead || !x->logged_in)
			continue;
		if (!x->discovery && !c->discovery &&
		    !strcasecmp(x->initiator_name, c->initiator_name) &&
		    !memcmp(x->isid, c->isid, 6))
			continue; /* reinstated by this login */
		sessions++;
		if (!strcasecmp(x->initiator_name, c->initiator_name))
			same_name++;
		bool idle = !x->authenticated && !x->ntasks && !x->tmfs;
		if (!strcmp(x->peer_host, c->peer_host)) {
			same_addr++;
			if (idle && (!addr_victim || x->last_rx_ns < addr_victim->last_rx_ns))
				addr_victim = x;
		}
		if (idle && (!victim || x->last_rx_ns < victim->last_rx_ns))
			victim = x;
	}
	if (same_name >= p->max_per_initiator) {
		snprintf(why, whylen, "%u sessions of this initiator already (the limit)",
			 same_name);
		return ISCSI_LOGIN_OUT_OF_RESOURCES;
	}
	if (same_addr >= p->max_per_address) {
		/* the address has its share: its own idle (or stalled) session makes room */
		if (!addr_victim && (addr_victim = stalled_session(c, true)))
			stalled = true;
		if (!addr_victim) {
			snprintf(why, whylen,
				 "%u sessions from %s already (the limit), none idle without CHAP",
				 same_addr, c->peer_host);
			return ISCSI_LOGIN_OUT_OF_RESOURCES;
		}
		victim = addr_victim;
	} else if (sessions < p->max_sessions) {
		return 0;
	} else if (!victim && (victim = stalled_session(c, false))) {
		stalled = true;
	}
	if (!victim) {
		snprintf(why, whylen, "%u sessions, none idle without CHAP to make room for it",
			 sessions);
		return ISCSI_LOGIN_OUT_OF_RESOURCES;
	}
	accept_log(p,
		   "session limit reached (%u sessions, %u from %s): evicting the idle (or "
		   "stalled on a Data-Out) unauthenticated sessions of longest standing for new "
		   "logins",
		   sessions, same_addr, c->peer_host);
	victim->quiet_close = true;
	conn_close(victim, stalled ? "session evicted for a new login (waiting for a Data-Out, not "
				     "authenticated)"
				   : "session evicted for a new login (idle, not authenticated)");
	session_end(victim, false);
	return 0;
}
