/* SPDX-License-Identifier: MIT */
/*
 * conn.c - one TCP connection of the embedded target, from accept to close.
 *
 * A connection is made here from an accepted socket (the listener in
 * portal.c admits it), read here, written here and torn down here; the loop
 * and the listeners only call in. Receive is a small state machine (header,
 * then body) that never blocks and caps the data segment at the
 * MaxRecvDataSegmentLength we declared (RFC 7143 13.12), so a hostile peer
 * cannot make us allocate more; a whole PDU has its digests checked (13.1,
 * Appendix B) and goes to the session (session_receive). The handlers below
 * only record: tx.c frames and queues their PDUs and marks a connection
 * closing (conn_close); the transmit queue is written here with writev when
 * control is back here: at the end of a batch of PDUs read, and once per
 * pass of the loop for the connections a handler touched (conns_settle, which
 * walks only those), which also tears down the connections marked closing. Bytes queued count
 * against the connection's budget and the portal's: a peer that does not read its socket stops
 * being read. RFC 7143 4.1 (TCP transport), 11.2 (PDU framing), 7.1.1 (a connection's failure ends
 * only its session at ERL 0).
 */
#include "iscsi_internal.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/*
 * True if the connection must not be read now: the responses it has not
 * read (unsent PDUs) are over its budget, or it has unread responses while
 * the portal is over the process-wide budget. A peer that never reads its
 * socket so stops being read. Command buffers are bounded by TASK SET FULL
 * instead (scsi_cmd), and PDUs held back by a delay fault do not count here:
 * a connection whose commands the engine holds must still be read, or its
 * task-management requests would never be seen.
 */
bool conn_read_blocked(struct conn *c)
{
	struct portal *p = c->portal;

	if (c->tx_bytes >= ISCSI_CONN_BUDGET)
		return true;
	if (c->tx_bytes && p->queued_bytes >= p->budget) {
		p->budget_over = true;
		return true;
	}
	return false;
}

/* Bytes read ahead and not yet taken by a PDU. */
static bool rx_read_ahead(const struct conn *c)
{
	return c->rb_off < c->rb_len;
}

/*
 * Re-registers the connection's epoll interest from its state. Bytes read
 * ahead while reading was off raise no event: conns_settle reads them.
 */
void conn_update_events(struct conn *c)
{
	uint32_t ev = 0;

	c->events_stale = false;
	if (c->state != CONN_CLOSING && !c->rx_paused && !conn_read_blocked(c))
		ev |= EPOLLIN;
	if ((ev & EPOLLIN) && rx_read_ahead(c) && !c->rx_kick) {
		c->rx_kick = true;
		conn_mark(c);
	}
	if (c->tx_head)
		ev |= EPOLLOUT;
	if (ev == c->ep_events)
		return;
	/* a PDU cut by a pause in reading gets its receive time afresh */
	if ((ev & EPOLLIN) && !(c->ep_events & EPOLLIN) && c->rx_start_ns)
		c->rx_start_ns = fl_mono_ns();
	struct epoll_event e = {.events = ev, .data.ptr = c};
	epoll_ctl(c->portal->epfd, EPOLL_CTL_MOD, c->fd, &e);
	c->ep_events = ev;
}

/* Frees the PDUs still queued or held back when a connection goes away. */
static void conn_free_queues(struct conn *c)
{
	while (c->tx_head) {
		struct txpdu *t = c->tx_head;
		c->tx_head = t->next;
		txpdu_free(t);
	}
	conn_mem(c, &c->tx_bytes, -(int64_t)c->tx_bytes);
	while (c->held_head) {
		struct txpdu *t = c->held_head;
		c->held_head = t->next;
		txpdu_free(t);
	}
	c->held_tail = NULL;
	conn_mem(c, &c->held_bytes, -(int64_t)c->held_bytes);
}

/* Tears a connection down: ends its session, orphans in-flight tasks. */
static void conn_destroy(struct conn *c)
{
	struct portal *p = c->portal;

	session_end(c, c->logged_out);
	timers_drop_conn(p, c);
	session_release(c);
	conn_free_queues(c);
	/* the teardown may have marked it again: it must not stay listed */
	for (struct conn **pp = &p->to_settle; c->to_settle && *pp; pp = &(*pp)->settle_next) {
		if (*pp == c) {
			*pp = c->settle_next;
			c->to_settle = false;
		}
	}
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->nconns--;
	free(c->rx_buf);
	free(c->rb);
	free(c->initiator_name);
	free(c->initiator_port);
	free(c->nexus_key);
	free(c->target_name);
	free(c->text);
	free(c);
}

/* Timer: a connection still in the login phase after ISCSI_LOGIN_TIMEOUT_S. */
static void login_timeout(struct portal *p, struct conn *c, void *arg)
{
	(void)p;
	(void)arg;
	if (c->state == CONN_LOGIN)
		conn_close(c, "login not completed in time");
}

/*
 * Makes a connection of a socket that lsn accepted from the peer at ss: it
 * starts in the login phase, read by the loop, with ISCSI_LOGIN_TIMEOUT_S
 * (or opts.login_timeout_s) to finish its login. Closes fd when out of memory.
 */
void conn_accept(struct portal *p, const struct listener *lsn, int fd,
		 const struct sockaddr_storage *ss, socklen_t sl)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->portal = p;
	c->fd = fd;
	c->lsn = lsn;
	c->rel_port_id = lsn->rel_port_id;
	c->tpgt = lsn->tpgt;
	c->id = ++p->next_conn_id;
	c->last_rx_ns = fl_mono_ns();
	char host[INET6_ADDRSTRLEN] = "?", serv[16] = "?";
	getnameinfo((const struct sockaddr *)ss, sl, host, sizeof(host), serv, sizeof(serv),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(c->peer, sizeof(c->peer), "%s:%s", host, serv);
	snprintf(c->peer_host, sizeof(c->peer_host), "%s", host);
	params_default(&c->p);
	c->login = calloc(1, sizeof(*c->login));
	if (!c->login) {
		close(fd);
		free(c);
		return;
	}
	c->next = p->conns;
	if (p->conns)
		p->conns->prev = c;
	p->conns = c;
	p->nconns++;
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
	c->ep_events = EPOLLIN;
	epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &e);
	unsigned tmo = p->opts.login_timeout_s ? p->opts.login_timeout_s : ISCSI_LOGIN_TIMEOUT_S;
	timer_add(p, &c->login_timer, c, (uint64_t)tmo * 1000000000u, login_timeout, NULL, NULL);
	iscsi_log(p, LOG_INFO, c, "connected");
}

/* Builds up to max iovecs for the unsent part of t; returns the count. */
static int pdu_iov(struct txpdu *t, struct iovec *iov, int max)
{
	struct iovec parts[4];
	int np = 0, n = 0;
	size_t skip = t->sent;

	parts[np++] = (struct iovec){t->hdr, ISCSI_BHS_LEN};
	if (t->has_hdig)
		parts[np++] = (struct iovec){t->hdig, ISCSI_DIGEST_LEN};
	if (t->dlen)
		parts[np++] = (struct iovec){(void *)t->data, t->dlen};
	if (t->trailer_len)
		parts[np++] = (struct iovec){t->trailer, t->trailer_len};
	for (int i = 0; i < np && n < max; i++) {
		if (skip >= parts[i].iov_len) {
			skip -= parts[i].iov_len;
			continue;
		}
		iov[n].iov_base = (uint8_t *)parts[i].iov_base + skip;
		iov[n].iov_len = parts[i].iov_len - skip;
		skip = 0;
		n++;
	}
	return n;
}

/*
 * Writes as much of the transmit queue as the socket takes; -1 once the write
 * failed or a close-after PDU went out (the connection is then marked closing
 * and what was queued behind that PDU is dropped), else 0.
 */
static int tx_write(struct conn *c)
{
	c->tx_fresh = false;
	while (c->tx_head) {
		struct iovec iov[64];
		int n = 0;
		for (struct txpdu *t = c->tx_head; t && n < 60; t = t->next)
			n += pdu_iov(t, iov + n, 64 - n);
		ssize_t w = writev(c->fd, iov, n);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			conn_close(c, errno == EPIPE || errno == ECONNRESET ? "peer went away"
									    : "write failed");
			return -1;
		}
		size_t left = (size_t)w;
		while (left && c->tx_head) {
			struct txpdu *t = c->tx_head;
			size_t rem = t->total - t->sent;
			if (left < rem) {
				t->sent += left;
				conn_mem(c, &c->tx_bytes, -(int64_t)left);
				left = 0;
				break;
			}
			left -= rem;
			conn_mem(c, &c->tx_bytes, -(int64_t)rem);
			c->tx_head = t->next;
			if (!c->tx_head)
				c->tx_tail = NULL;
			bool close_after = t->close_after;
			txpdu_free(t);
			if (close_after) {
				c->quiet_close = true;
				conn_close(c, NULL);
				conn_free_queues(c); /* nothing goes out after it */
				return -1;
			}
		}
	}
	return 0;
}

/* Writes what the socket takes of a live connection, then re-registers its events. */
int conn_on_writable(struct conn *c)
{
	if (c->dead || tx_write(c) || c->dead)
		return -1;
	conn_update_events(c);
	return 0;
}

/*
 * Brings the connections a handler touched up to date once control is back
 * in the loop (after the timers, the completions and the socket events of a
 * pass): writes what was queued for them, re-registers their events, and
 * tears down those marked closing, after sending what was queued before the
 * close, and takes the PDUs read ahead of a connection whose reading
 * resumed (no socket event will come for them); true when it took any, as
 * they may have set timers. Only the to-settle list is walked (tx.c fills
 * it), so an idle connection costs the loop nothing; a connection settled
 * here may be put back on the list (a failed write marks it closing) and is
 * taken again.
 */
bool conns_settle(struct portal *p)
{
	bool took = false;

	while (p->to_settle) {
		struct conn *c = p->to_settle;
		p->to_settle = c->settle_next;
		c->to_settle = false;
		c->settle_next = NULL;
		if (c->dead) {
			if (c->tx_fresh)
				tx_write(c);
			conn_destroy(c);
			continue;
		}
		if (c->tx_fresh) {
			conn_on_writable(c);
		} else if (c->events_stale) {
			conn_update_events(c);
		}
		if (!c->dead && c->rx_kick) {
			c->rx_kick = false;
			took = true;
			conn_on_readable(c);
		}
	}
	return took;
}

/* What one read of the receive state machine came to. */
enum rx_read_result {
	RX_GOT,	    /* bytes read */
	RX_BLOCKED, /* the socket would block */
	RX_AGAIN,   /* interrupted: read again */
	RX_CLOSED,  /* the connection is closed */
};

/*
 * Reads what the header or the body still lacks: from the bytes read ahead,
 * else from the socket, where a small want reads up to ISCSI_RX_AHEAD bytes
 * at once (a 4 KiB write's header and data, or several small PDUs, in one
 * read) and a large one reads into its place directly. A short read says
 * the socket is empty: no read is tried again until epoll says otherwise
 * (conn_on_readable), and none at all past the batch's budget (sock false).
 */
static enum rx_read_result rx_read(struct conn *c, bool sock)
{
	uint8_t *dst = c->rx_in_body ? c->rx_buf + c->rx_have : c->bhs + c->rx_have;
	size_t want = (c->rx_in_body ? c->rx_need : ISCSI_BHS_LEN) - c->rx_have;
	ssize_t n;

	if (rx_read_ahead(c)) {
		n = (ssize_t)(want < c->rb_len - c->rb_off ? want : c->rb_len - c->rb_off);
		memcpy(dst, c->rb + c->rb_off, (size_t)n);
		c->rb_off += (uint32_t)n;
		goto got;
	}
	if (!sock || c->rb_drained)
		return RX_BLOCKED;
	if (want >= ISCSI_RX_AHEAD) {
		n = read(c->fd, dst, want);
		c->rb_drained = n >= 0 && (size_t)n < want;
	} else {
		if (!c->rb && !(c->rb = malloc(ISCSI_RX_AHEAD))) {
			conn_close(c, "out of memory");
			return RX_CLOSED;
		}
		n = read(c->fd, c->rb, ISCSI_RX_AHEAD);
		c->rb_drained = n >= 0 && n < ISCSI_RX_AHEAD;
		if (n > 0) {
			c->rb_len = (uint32_t)n;
			c->rb_off = (uint32_t)((size_t)n < want ? (size_t)n : want);
			memcpy(dst, c->rb, c->rb_off);
			n = (ssize_t)c->rb_off;
		}
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return RX_BLOCKED;
		if (errno == EINTR)
			return RX_AGAIN;
		conn_close(c, "read failed");
		return RX_CLOSED;
	}
	if (n == 0) {
		if (c->rx_have || c->rx_in_body) {
			conn_close(c, "peer closed in the middle of a PDU");
		} else {
			c->quiet_close = true;
			conn_close(c, c->logged_out ? NULL : "peer closed the connection");
		}
		return RX_CLOSED;
	}
got:
	if (!c->rx_start_ns)
		c->rx_start_ns = fl_mono_ns();
	c->rx_have += (size_t)n;
	return RX_GOT;
}

/* A whole BHS: sizes the body (AHS, digests, data, padding); -1 once closed. */
static int rx_begin_body(struct conn *c)
{
	c->rx_ahs = (uint32_t)c->bhs[BHS_TOTAL_AHS] * 4;
	c->rx_dsl = fl_get_be24(c->bhs + BHS_DSL);
	if (c->rx_dsl > ISCSI_OUR_MAX_RECV_DSL) {
		char why[96];
		snprintf(why, sizeof(why), "malformed PDU: DataSegmentLength %u above our limit %u",
			 c->rx_dsl, ISCSI_OUR_MAX_RECV_DSL);
		conn_close(c, why);
		return -1;
	}
	c->rx_need = c->rx_ahs + (c->rx_hdigest ? ISCSI_DIGEST_LEN : 0) + c->rx_dsl +
		     iscsi_pad4(c->rx_dsl) + (c->rx_ddigest && c->rx_dsl ? ISCSI_DIGEST_LEN : 0);
	if (c->rx_need > c->rx_cap) {
		uint8_t *b = realloc(c->rx_buf, c->rx_need);
		if (!b) {
			conn_close(c, "out of memory");
			return -1;
		}
		c->rx_buf = b;
		c->rx_cap = c->rx_need;
	}
	c->rx_in_body = true;
	c->rx_have = 0;
	return 0;
}

/* Checks the digests of a whole PDU; false once the connection is closed. */
static bool rx_digests_ok(struct conn *c)
{
	if (c->rx_hdigest) {
		uint32_t crc = iscsi_crc32c_update(0xffffffffu, c->bhs, ISCSI_BHS_LEN);
		crc = ~iscsi_crc32c_update(crc, c->rx_buf, c->rx_ahs);
		if (crc != iscsi_get_digest(c->rx_buf + c->rx_ahs)) {
			conn_close(c, "header digest error");
			return false;
		}
	}
	if (c->rx_ddigest && c->rx_dsl) {
		size_t off = c->rx_ahs + (c->rx_hdigest ? ISCSI_DIGEST_LEN : 0);
		size_t len = c->rx_dsl + iscsi_pad4(c->rx_dsl);
		if (iscsi_crc32c(c->rx_buf + off, len) != iscsi_get_digest(c->rx_buf + off + len)) {
			/* ERL 0: a lost data segment cannot be recovered (RFC 7143 7.8). */
			conn_send_reject(c, c->bhs, ISCSI_REJECT_DATA_DIGEST);
			conn_close(c, "data digest error");
			return false;
		}
	}
	return true;
}

/* Hands one complete PDU to the session. */
static int conn_dispatch(struct conn *c)
{
	uint32_t dlen = c->rx_dsl;
	const uint8_t *ahs = c->rx_buf;
	/* rx_buf is NULL for a PDU with no AHS and no data: no offset from it then. */
	const uint8_t *data =
	    c->rx_buf ? c->rx_buf + c->rx_ahs + (c->rx_hdigest ? ISCSI_DIGEST_LEN : 0) : NULL;

	if (c->portal->opts.verbose >= LOG_DEBUG)
		pdu_log(c, "rx", c->bhs, dlen);
	return session_receive(c, c->bhs, ahs, c->rx_ahs, data, dlen);
}

/*
 * Reads PDUs until the socket would block (or a fairness budget runs out:
 * then only what was read ahead is taken, so nothing is left waiting for an
 * event that will not come).
 */
int conn_on_readable(struct conn *c)
{
	int budget = 64;

	c->rb_drained = false;
	while (!c->dead && c->state != CONN_CLOSING && !c->rx_paused) {
		/* between PDUs: over its memory budget, the connection is not read on */
		if (!c->rx_in_body && !c->rx_have && conn_read_blocked(c))
			break;
		enum rx_read_result r = rx_read(c, budget > 0);
		if (r == RX_BLOCKED)
			break;
		if (r == RX_AGAIN)
			continue;
		if (r == RX_CLOSED)
			goto out;
		if (!c->rx_in_body) {
			if (c->rx_have < ISCSI_BHS_LEN)
				continue;
			if (rx_begin_body(c))
				goto out;
			if (c->rx_need)
				continue;
		} else if (c->rx_have < c->rx_need) {
			continue;
		}
		/* A whole PDU: check digests, then dispatch. */
		if (!rx_digests_ok(c))
			goto out;
		c->rx_in_body = false;
		c->rx_have = 0;
		c->rx_start_ns = 0;
		c->last_rx_ns = fl_mono_ns();
		budget--;
		if (conn_dispatch(c) < 0 || c->dead)
			break;
	}
out:
	/* the batch's answers, in one writev when the socket takes them */
	if (!c->dead && c->tx_head)
		conn_on_writable(c);
	if (!c->dead)
		conn_update_events(c);
	return c->dead ? -1 : 0;
}
