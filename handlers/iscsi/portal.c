/* SPDX-License-Identifier: MIT */
/*
 * portal.c - the embedded target's event loop and its listeners: one
 * listening socket per target port (docs/multipath.md), one epoll set, the
 * admission of connections and the periodic sweep. A connection itself lives
 * in conn.c: the loop hands it its socket events, and once per pass lets it
 * write what was queued and tear down what was marked closing (conns_settle).
 * Sessions are admitted in nexus.c.
 *
 * Completions of SCSI commands and TMFs may arrive on any thread (engine
 * timers, file-store workers); backend.c appends them to a locked list and
 * wakes the loop through an eventfd, and the loop hands them to the sessions
 * (session_drain). Nothing else crosses threads. A
 * connection that misbehaves is closed alone with a log line saying why; a
 * slow reader stops being read (bounded transmit queue), never stalls others.
 * RFC 7143 has no clause for this file; it carries section 4.1 (TCP
 * transport) with conn.c.
 */
#include "iscsi_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct fl_iscsi {
	struct portal p;
};

/* epoll user data tags for the two non-connection fds. */
static char tag_event;

/* Waits for socket events until due_ns (CLOCK_MONOTONIC), to the nanosecond. */
static int loop_wait(struct portal *p, struct epoll_event *evs, int max, uint64_t due_ns)
{
	uint64_t now = fl_mono_ns(), d = due_ns > now ? due_ns - now : 0;
	struct timespec ts = {.tv_sec = (time_t)(d / 1000000000u),
			      .tv_nsec = (long)(d % 1000000000u)};
	int n;

	if (!p->no_pwait2) {
		n = epoll_pwait2(p->epfd, evs, max, &ts, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		p->no_pwait2 = true; /* kernel older than 5.11: millisecond waits */
	}
	return epoll_wait(p->epfd, evs, max, (int)((d + 999999) / 1000000));
}

/* Starts or stops polling the listening socket. */
static void listener_set(struct portal *p, bool on)
{
	if (p->listen_on == on)
		return;
	for (unsigned i = 0; i < p->nls; i++) {
		struct epoll_event e = {.events = on ? EPOLLIN : 0, .data.ptr = &p->ls[i]};
		epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->ls[i].fd, &e);
	}
	p->listen_on = on;
}

/* Timer: the listener's back-off is over. */
static void listener_resume(struct portal *p, struct conn *c, void *arg)
{
	(void)c;
	(void)arg;
	listener_set(p, true);
}

/*
 * accept failed for want of descriptors (EMFILE, ENFILE) or memory: take the
 * waiting peer off the queue with the reserve descriptor and close it (it
 * sees a close, not a hang), then stop polling the listener for a while
 * instead of spinning on a socket that stays readable.
 */
static void accept_exhausted(struct portal *p, const struct listener *lsn, int err)
{
	if (p->reserve_fd >= 0 && (err == EMFILE || err == ENFILE)) {
		close(p->reserve_fd);
		int fd = accept4(lsn->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			close(fd);
		p->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	accept_log(p, "accept: %s (%u connections): refusing new ones for %u ms", strerror(err),
		   p->nconns, ISCSI_ACCEPT_BACKOFF_MS);
	listener_set(p, false);
	if (!p->listen_timer)
		timer_add(p, &p->listen_timer, NULL, ISCSI_ACCEPT_BACKOFF_MS * 1000000ull,
			  listener_resume, NULL, NULL);
	if (!p->listen_timer)
		listener_set(p, true);
}

/* Accepts every pending connection of one portal (a target port). */
static void portal_accept(struct portal *p, const struct listener *lsn)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd =
		    accept4(lsn->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			int err = errno;
			if (err == EAGAIN || err == EWOULDBLOCK)
				return;
			if (err == EINTR || err == ECONNABORTED)
				continue;
			if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
				accept_exhausted(p, lsn, err);
				return;
			}
			accept_log(p, "accept: %s", strerror(err));
			return;
		}
		if (p->nconns >= p->max_conns) {
			accept_log(p, "too many connections (%u): refusing new ones", p->nconns);
			close(fd);
			continue;
		}
		conn_accept(p, lsn, fd, &ss, sl);
	}
}

/* Timer: closes PDUs stuck half-received and sessions that do not answer our pings. */
static void portal_sweep(struct portal *p, struct conn *unused, void *arg);

/* Arms the sweep, a quarter of the shortest timeout ahead (50 ms to 1 s). */
static void sweep_arm(struct portal *p)
{
	uint64_t d = 1000000000u;
	uint64_t t[3] = {p->pdu_timeout_ns, p->nopin_interval_ns, p->nopin_timeout_ns};

	for (int i = 0; i < 3; i++)
		if (t[i] && t[i] / 4 < d)
			d = t[i] / 4;
	if (d < 50000000u)
		d = 50000000u;
	timer_add(p, &p->sweep_timer, NULL, d, portal_sweep, NULL, NULL);
}

static void portal_sweep(struct portal *p, struct conn *unused, void *arg)
{
	uint64_t now = fl_mono_ns();
	char why[128];

	(void)unused;
	(void)arg;
	for (struct conn *c = p->conns; c; c = c->next) {
		if (c->dead || c->state != CONN_FULL)
			continue;
		/* RFC 7143 leaves it to the target: a PDU begun is finished, or the conn. goes */
		if (p->pdu_timeout_ns && c->rx_start_ns && (c->ep_events & EPOLLIN) &&
		    now - c->rx_start_ns > p->pdu_timeout_ns) {
			snprintf(why, sizeof(why), "a PDU not completed within %llu ms",
				 (unsigned long long)(p->pdu_timeout_ns / 1000000));
			conn_close(c, why);
			continue;
		}
		/* RFC 7143 leaves it to the target: the Data-Out an R2T asked for comes in time */
		uint64_t r2t = p->pdu_timeout_ns && c->ntasks ? conn_oldest_r2t(c) : 0;
		if (r2t && now - r2t > p->pdu_timeout_ns) {
			snprintf(why, sizeof(why), "no Data-Out for an R2T within %llu ms",
				 (unsigned long long)(p->pdu_timeout_ns / 1000000));
			conn_close(c, why);
			continue;
		}
		if (!p->nopin_interval_ns || !c->logged_in || c->discovery)
			continue;
		if (c->ping_sent_ns) {
			/* RFC 7143 11.19: our NOP-In asked for a NOP-Out; none came */
			if (p->nopin_timeout_ns && now - c->ping_sent_ns > p->nopin_timeout_ns) {
				snprintf(why, sizeof(why),
					 "no answer to a NOP-In ping within %llu ms",
					 (unsigned long long)(p->nopin_timeout_ns / 1000000));
				conn_close(c, why);
			}
		} else if (now - c->last_rx_ns >= p->nopin_interval_ns) {
			iscsi_log(p, LOG_DEBUG, c, "idle: NOP-In ping");
			nop_send_unsolicited(c, true);
			c->ping_sent_ns = now;
		}
	}
	sweep_arm(p);
}

/* Reads again from connections stopped by the process-wide budget once under it. */
static void budget_resume(struct portal *p)
{
	if (!p->budget_over || p->queued_bytes >= p->budget)
		return;
	p->budget_over = false;
	for (struct conn *c = p->conns; c; c = c->next)
		if (!c->dead)
			conn_update_events(c);
}

/* Sets the limits from the options and RLIMIT_NOFILE. */
static void portal_limits(struct portal *p)
{
	const struct fl_iscsi_opts *o = &p->opts;
	struct rlimit rl;
	unsigned cap = o->max_connections ? o->max_connections : ISCSI_MAX_CONNS;

	/* a margin of descriptors for store files, the trace, control clients */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		rlim_t margin = rl.rlim_cur / 4 < 64 ? rl.rlim_cur / 4 : 64;
		rlim_t fit = rl.rlim_cur > margin + 8 ? rl.rlim_cur - margin - 8 : 1;
		if (cap > fit) {
			iscsi_log(p, LOG_INFO, NULL,
				  "at most %llu connections: the limit of open files is %llu",
				  (unsigned long long)fit, (unsigned long long)rl.rlim_cur);
			cap = (unsigned)fit;
		}
	}
	p->max_conns = cap;
	p->max_sessions = cap - cap / 8;
	if (!p->max_sessions)
		p->max_sessions = 1;
	p->max_per_initiator =
	    o->max_sessions_per_initiator ? o->max_sessions_per_initiator : (cap / 4 ? cap / 4 : 1);
	p->max_per_address =
	    o->max_sessions_per_address ? o->max_sessions_per_address : (cap / 2 ? cap / 2 : 1);
	p->budget = o->max_queued_bytes ? o->max_queued_bytes : ISCSI_QUEUED_DEFAULT;
	unsigned ms[3] = {o->pdu_timeout_ms ? o->pdu_timeout_ms : ISCSI_PDU_TIMEOUT_MS,
			  o->nopin_interval_ms ? o->nopin_interval_ms : ISCSI_NOPIN_INTERVAL_MS,
			  o->nopin_timeout_ms ? o->nopin_timeout_ms : ISCSI_NOPIN_TIMEOUT_MS};
	uint64_t *ns[3] = {&p->pdu_timeout_ns, &p->nopin_interval_ns, &p->nopin_timeout_ns};
	for (int i = 0; i < 3; i++)
		*ns[i] = ms[i] == FL_ISCSI_OFF ? 0 : (uint64_t)ms[i] * 1000000u;
}

/* True when s is a TCP port number: 1 to 5 decimal digits, at most 65535. */
static bool port_number_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n >= 1 && n <= 5 && !s[n] && strtoul(s, NULL, 10) <= 65535;
}

/*
 * Splits "ADDR:PORT" / "[V6]:PORT" into host and port strings; -EINVAL when
 * the port is not a number in 0..65535 (getaddrinfo would take 99999 modulo
 * 65536) or a part does not fit.
 */
static int split_listen(const char *s, char *host, size_t hl, char *port, size_t pl)
{
	const char *colon, *h = s, *pt = "3260";
	size_t hlen;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		h = s + 1;
		hlen = (size_t)(end - s - 1);
		pt = end + 2;
	} else if ((colon = strrchr(s, ':'))) {
		hlen = (size_t)(colon - s);
		pt = colon + 1;
	} else {
		hlen = strlen(s);
	}
	if (hlen >= hl || strlen(pt) >= pl || !port_number_ok(pt))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = 0;
	memcpy(port, pt, strlen(pt) + 1);
	return 0;
}

/* Creates, binds and listens on one portal socket. */
static int portal_listen(struct portal *p, struct listener *l, const char *listen_s)
{
	char host[256], port[32];
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	int err;

	if (split_listen(listen_s, host, sizeof(host), port, sizeof(port))) {
		iscsi_log(
		    p, LOG_ERR, NULL,
		    "bad listen address '%s': expected ADDR:PORT, [IPV6]:PORT or ADDR, the port "
		    "a number from 0 to 65535",
		    listen_s);
		return -EINVAL;
	}
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (err) {
		iscsi_log(p, LOG_ERR, NULL, "listen address '%s': %s", listen_s, gai_strerror(err));
		return -EINVAL;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128)) {
		err = -errno;
		iscsi_log(p, LOG_ERR, NULL, "cannot listen on %s: %s", listen_s, strerror(errno));
		close(fd);
		goto out;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	char h[INET6_ADDRSTRLEN], sv[16];
	getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), sv, sizeof(sv),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	l->port = (uint16_t)atoi(sv);
	if (ss.ss_family == AF_INET6)
		snprintf(l->addr, sizeof(l->addr), "[%s]", h);
	else
		snprintf(l->addr, sizeof(l->addr), "%s", h);
	l->fd = fd;
	err = 0;
out:
	freeaddrinfo(ai);
	return err;
}

/* Duplicates an optional string; *ok cleared on allocation failure. */
static const char *dup_opt(const char *s, bool *ok)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*ok = false;
	return d;
}

/* Copies the caller's options, strings included, with their defaults; false if out of memory. */
static bool portal_copy_opts(struct portal *p, const struct fl_iscsi_opts *opts)
{
	bool ok = true;

	p->opts = *opts;
	p->opts.listen = dup_opt(opts->listen ? opts->listen : FL_ISCSI_DEFAULT_LISTEN, &ok);
	p->opts.iqn = dup_opt(opts->iqn ? opts->iqn : FL_ISCSI_DEFAULT_IQN, &ok);
	p->opts.alias = dup_opt(opts->alias ? opts->alias : "faultlun", &ok);
	p->opts.chap_user = dup_opt(opts->chap_user, &ok);
	p->opts.chap_secret = dup_opt(opts->chap_secret, &ok);
	p->opts.mutual_user = dup_opt(opts->mutual_user, &ok);
	p->opts.mutual_secret = dup_opt(opts->mutual_secret, &ok);
	p->opts.ports = NULL; /* copied into p->ls by portal_bind_ports */
	return ok;
}

/* Warns of CHAP secrets too short or shared by both directions; they are still used. */
static void portal_warn_secrets(struct portal *p)
{
	/*
	 * RFC 7143 9.2.1: a CHAP secret needs at least 96 bits to resist
	 * offline guessing; 12.1.3: the two directions must use two secrets.
	 */
	if (p->opts.chap_secret && strlen(p->opts.chap_secret) < 12)
		iscsi_log(
		    p, LOG_ERR, NULL,
		    "warning: the CHAP secret is shorter than 12 bytes (RFC 7143 9.2.1 asks for "
		    "96 bits at least)");
	if (p->opts.mutual_secret && strlen(p->opts.mutual_secret) < 12)
		iscsi_log(
		    p, LOG_ERR, NULL,
		    "warning: the mutual CHAP secret is shorter than 12 bytes (RFC 7143 9.2.1 "
		    "asks for 96 bits at least)");
	if (p->opts.chap_secret && p->opts.mutual_secret &&
	    !strcmp(p->opts.chap_secret, p->opts.mutual_secret))
		iscsi_log(p, LOG_ERR, NULL,
			  "warning: mutual CHAP uses the same secret in both directions (RFC 7143 "
			  "12.1.3 forbids it)");
}

/* Opens one listening socket per target port of opts; returns 0 or -errno. */
static int portal_bind_ports(struct portal *p, const struct fl_iscsi_opts *opts)
{
	if (opts->nports > FL_ISCSI_MAX_PORTS) {
		iscsi_log(p, LOG_ERR, NULL, "too many portals (%u, at most %u)", opts->nports,
			  FL_ISCSI_MAX_PORTS);
		return -EINVAL;
	}
	/* one listening socket per target port; without ports, one: relative port 1, tag 1 */
	p->nls = opts->nports ? opts->nports : 1;
	for (unsigned i = 0; i < p->nls; i++) {
		const struct fl_iscsi_port *tp = opts->nports ? &opts->ports[i] : NULL;

		p->ls[i].rel_port_id = tp && tp->rel_port_id ? tp->rel_port_id : (uint16_t)(i + 1);
		p->ls[i].tpgt = tp && tp->tpgt ? tp->tpgt : p->ls[i].rel_port_id;
		const char *listen_s = tp && tp->listen ? tp->listen : p->opts.listen;
		int err = portal_listen(p, &p->ls[i], listen_s);
		if (err)
			return err;
	}
	return 0;
}

/* Sets up epoll and the eventfd, and registers the listeners and the sweep; 0 or -errno. */
static int portal_events_init(struct portal *p)
{
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->epfd < 0 || p->efd < 0)
		return -errno;
	portal_limits(p);
	p->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	struct epoll_event e = {.events = EPOLLIN};
	for (unsigned i = 0; i < p->nls; i++) {
		e.data.ptr = &p->ls[i];
		epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->ls[i].fd, &e);
	}
	p->listen_on = true;
	sweep_arm(p);
	e.data.ptr = &tag_event;
	epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->efd, &e);
	return 0;
}

/* Copies the options, binds the portal, sets up epoll and the eventfd. */
int fl_iscsi_create(const struct fl_iscsi_opts *opts, struct fl_engine *engine,
		    struct fl_target *target, struct fl_iscsi **out)
{
	struct fl_iscsi *t = calloc(1, sizeof(*t));
	struct portal *p;
	bool ok;
	int err;

	if (!t)
		return -ENOMEM;
	p = &t->p;
	ok = portal_copy_opts(p, opts);
	p->engine = engine;
	p->target = target;
	p->epfd = p->efd = p->reserve_fd = -1;
	for (unsigned i = 0; i < FL_ISCSI_MAX_PORTS; i++)
		p->ls[i].fd = -1;
	p->next_tsih = 1;
	pthread_mutex_init(&p->lock, NULL);
	iscsi_crc32c_init();
	if (!ok) {
		err = -ENOMEM;
		goto fail;
	}
	portal_warn_secrets(p);
	if (!engine && !target) {
		iscsi_log(p, LOG_ERR, NULL, "no engine and no target to serve");
		err = -EINVAL;
		goto fail;
	}
	err = portal_bind_ports(p, opts);
	if (err)
		goto fail;
	err = portal_events_init(p);
	if (err)
		goto fail;
	be_init(p);
	*out = t;
	return 0;
fail:
	fl_iscsi_destroy(t);
	return err;
}

/* The bound port of the first portal. */
uint16_t fl_iscsi_port(const struct fl_iscsi *t)
{
	return t->p.ls[0].port;
}

/* The bound address of the first portal (IPv6 in brackets). */
const char *fl_iscsi_address(const struct fl_iscsi *t)
{
	return t->p.ls[0].addr;
}

/* How many portals the target listens on. */
unsigned fl_iscsi_portal_count(const struct fl_iscsi *t)
{
	return t->p.nls;
}

/* Portal i: bound address, port, relative target port. */
int fl_iscsi_portal(const struct fl_iscsi *t, unsigned i, const char **addr, uint16_t *port,
		    uint16_t *rel_port_id)
{
	if (i >= t->p.nls)
		return -ENOENT;
	if (addr)
		*addr = t->p.ls[i].addr;
	if (port)
		*port = t->p.ls[i].port;
	if (rel_port_id)
		*rel_port_id = t->p.ls[i].rel_port_id;
	return 0;
}

/* The target name served. */
const char *fl_iscsi_iqn(const struct fl_iscsi *t)
{
	return t->p.opts.iqn;
}

/*
 * The event loop: timers, socket events, the completion queue, reaping. While
 * it runs it also drives the engine's timers, so a delayed command is answered
 * by the wake-up that ends its delay, without a hand-off between threads.
 */
int fl_iscsi_run(struct fl_iscsi *t)
{
	struct portal *p = &t->p;
	struct epoll_event evs[64];
	bool engine_timers = be_timers_adopt(p);
	int err = 0;

	/* wake at the deadline, not up to 50 us after it (the default slack) */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	pthread_mutex_lock(&p->lock);
	p->loop_thread = pthread_self();
	p->loop_running = true;
	pthread_mutex_unlock(&p->lock);

	while (!p->stop) {
		uint64_t due = timers_run(p);
		if (engine_timers) {
			uint64_t next = be_timers_run(p);
			if (next < due)
				due = next;
		}
		/* what the timers completed on this thread, before waiting */
		session_drain(p);
		/* PDUs read ahead and taken now may have set timers (delays): due again */
		if (conns_settle(p))
			continue;
		int n = loop_wait(p, evs, 64, due);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			iscsi_log(p, LOG_ERR, NULL, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *ptr = evs[i].data.ptr;
			if (ptr >= (void *)p->ls && ptr < (void *)(p->ls + p->nls)) {
				portal_accept(p, ptr);
				continue;
			}
			if (ptr == &tag_event) {
				/* another thread queued work: drained below, after the sockets */
				uint64_t v;
				ssize_t r = read(p->efd, &v, sizeof(v));
				(void)r;
				continue;
			}
			struct conn *c = ptr;
			/* Connections are only freed by conns_settle, after the batch. */
			if (c->dead)
				continue;
			if (evs[i].events & (EPOLLERR | EPOLLHUP) && !(evs[i].events & EPOLLIN)) {
				conn_close(c, c->state == CONN_CLOSING ? NULL : "peer hung up");
				continue;
			}
			if (evs[i].events & EPOLLOUT)
				conn_on_writable(c);
			if (!c->dead && (evs[i].events & EPOLLIN))
				conn_on_readable(c);
		}
		session_drain(p);
		conns_settle(p);
		budget_resume(p);
	}
	pthread_mutex_lock(&p->lock);
	p->loop_running = false;
	pthread_mutex_unlock(&p->lock);
	if (engine_timers && be_timers_release(p))
		iscsi_log(p, LOG_ERR, NULL, "cannot restart the engine's timer thread");
	return err;
}

/* Asks the loop to return (any thread, signal-safe). */
void fl_iscsi_stop(struct fl_iscsi *t)
{
	t->p.stop = 1;
	be_wake(&t->p);
}

/* Closes every connection and stops calling the engine. */
void fl_iscsi_disconnect(struct fl_iscsi *t)
{
	struct portal *p = &t->p;

	for (struct conn *c = p->conns; c; c = c->next) {
		c->quiet_close = true;
		conn_close(c, "target shutting down");
	}
	conns_settle(p);
	p->engine_gone = true;
}

/* Frees the portal after draining completions of orphaned tasks. */
void fl_iscsi_destroy(struct fl_iscsi *t)
{
	if (!t)
		return;
	struct portal *p = &t->p;
	fl_iscsi_disconnect(t);
	/* Completions still queued belong to orphaned tasks: release them. */
	if (p->efd >= 0) {
		pthread_mutex_lock(&p->lock);
		struct task *tasks = p->done_head;
		struct tmf_req *tmfs = p->tmf_head;
		p->done_head = p->done_tail = NULL;
		p->tmf_head = p->tmf_tail = NULL;
		pthread_mutex_unlock(&p->lock);
		while (tasks) {
			struct task *x = tasks;
			tasks = x->done_next;
			scsi_task_completed(p, x);
		}
		while (tmfs) {
			struct tmf_req *r = tmfs;
			tmfs = r->done_next;
			tmf_completed(p, r);
		}
	}
	timers_free(p);
	for (unsigned i = 0; i < FL_ISCSI_MAX_PORTS; i++)
		if (p->ls[i].fd >= 0)
			close(p->ls[i].fd);
	if (p->reserve_fd >= 0)
		close(p->reserve_fd);
	if (p->efd >= 0)
		close(p->efd);
	if (p->epfd >= 0)
		close(p->epfd);
	nexus_free(p);
	chap_fails_free(p);
	free((char *)p->opts.listen);
	free((char *)p->opts.iqn);
	free((char *)p->opts.alias);
	free((char *)p->opts.chap_user);
	free((char *)p->opts.chap_secret);
	free((char *)p->opts.mutual_user);
	free((char *)p->opts.mutual_secret);
	pthread_mutex_destroy(&p->lock);
	free(t);
}
