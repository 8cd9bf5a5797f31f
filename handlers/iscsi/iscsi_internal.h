/* SPDX-License-Identifier: MIT */
/*
 * iscsi_internal.h - private declarations shared by the files of handlers/iscsi/.
 *
 * Layering inside the embedded target, from the top down; a file calls only
 * the files below it:
 *   portal.c     the epoll loop, the listening sockets and accept, connection
 *                admission, the periodic sweep
 *   conn.c       one connection's life: made from an accepted socket, the
 *                receive state machine and digests (RFC 7143 11.2), the
 *                writev of its transmit queue, its memory budget, the
 *                teardown of a connection marked closing (conns_settle)
 *   session.c    inbound PDU routing (login or full feature phase), CmdSN
 *                window (4.2.2), text / SendTargets (Appendix C), logout
 *                (11.14), inbound transport faults; completions handed to
 *                the sessions (session_drain)
 *   login.c      login phase (RFC 7143 6): stages, status classes, TSIH
 *   chap.c       CHAP with MD5 (RFC 7143 12.1.3, RFC 1994), one-way and mutual
 *   negotiate.c  text keys (RFC 7143 6.2, section 13): parse, result functions
 *   nexus.c      sessions as I_T nexuses: ids, admission, start,
 *                reinstatement (4.4.3), end, the engine's transport state
 *   tmf.c        task management (11.5, 11.6)
 *   nop.c        NOP-Out / NOP-In (11.18, 11.19), Async Message (11.9)
 *   scsi.c       SCSI Command, Data-Out, R2T, Data-In, SCSI Response (11.3-11.8)
 *   tx.c         what a handler may do to its connection, and all it may:
 *                queue a PDU (framed, through outbound transport faults, held
 *                back by a delay), mark the connection closing (conn_close)
 *   pdu.c        PDUs built to send, MaxCmdSN, LUN fields, the -vv PDU log
 *   backend.c    the only place that calls into the fault engine / core, and
 *                the completion queue's producers (they wake the loop)
 *   timer.c      the loop's clock and timers
 *   log.c        log lines
 *   crc32c.c     digests (RFC 7143 Appendix B)
 *
 * Threading: everything here runs on the loop thread except the completion
 * callbacks in backend.c, which only lock the portal's queue and kick the
 * eventfd.
 */
#ifndef ISCSI_INTERNAL_H
#define ISCSI_INTERNAL_H

#include "fl_iscsi.h"
#include "iscsi_proto.h"
#include "iscsi_digest.h"
#include "fl_faults.h"
#include "fl_timer.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Limits that bound memory per connection. */
#define ISCSI_OUR_MAX_RECV_DSL (256 * 1024) /* what we declare and accept */
#define ISCSI_LOGIN_MAX_DSL 8192	    /* RFC 7143 13.12 default, during login */
#define ISCSI_LOGIN_TEXT_MAX (64 * 1024)    /* accumulated login/text key bytes */
#define ISCSI_CMD_WINDOW 128		    /* commands in flight per session */
#define ISCSI_MAX_EDTL (64u * 1024 * 1024)  /* largest data transfer per command */
/*
 * Memory queued for a connection: buffers of its commands plus every PDU
 * waiting to be sent (Data-In, echoes, held back by a delay fault), counted
 * in one budget. A command that would pass it gets TASK SET FULL; unsent
 * PDUs above it stop the reading of the connection until the peer reads.
 * The portal keeps a process-wide budget over all connections too
 * (opts.max_queued_bytes).
 */
#define ISCSI_CONN_BUDGET (64u * 1024 * 1024)
/* Bytes a connection reads ahead at once (one read for a small PDU and its data). */
#define ISCSI_RX_AHEAD 16384
#define ISCSI_QUEUED_DEFAULT (256ull * 1024 * 1024) /* process-wide default */
#define ISCSI_MIN_SHARE (1u * 1024 * 1024) /* a connection with nothing queued may always use */
#define ISCSI_MAX_R2T 8			   /* MaxOutstandingR2T we accept */
#define ISCSI_STALL_MS 500	      /* an R2T unanswered this long: its session may make room */
#define ISCSI_MAX_CONNS 1024	      /* default connection cap */
#define ISCSI_LOGIN_TIMEOUT_S 30      /* a login must finish within this */
#define ISCSI_PDU_TIMEOUT_MS 30000    /* a PDU begun must be complete within this */
#define ISCSI_NOPIN_INTERVAL_MS 15000 /* ping a session idle this long (LIO: 15 s) */
#define ISCSI_NOPIN_TIMEOUT_MS 30000  /* close if the ping is not answered (LIO: 30 s) */
#define ISCSI_ACCEPT_BACKOFF_MS 100   /* listener off after accept ran out of files */

/* Logging levels (opts.verbose): 0 errors and bad PDUs, 1 connections, 2 PDUs. */
enum { LOG_ERR = 0, LOG_INFO = 1, LOG_DEBUG = 2 };

/* Operational parameters of a session after negotiation (RFC 7143 section 13). */
struct iscsi_params {
	bool header_digest, data_digest;
	bool initial_r2t, immediate_data;
	bool data_pdu_in_order, data_seq_in_order;
	uint32_t max_recv_dsl; /* the initiator's: our PDUs carry at most this */
	uint32_t max_burst, first_burst;
	uint32_t max_outstanding_r2t;
	uint16_t time2wait, time2retain;
	uint8_t erl;
	uint16_t max_connections;
};

struct conn;
struct portal;

/* One entry of the transmit queue: a complete PDU ready to be framed. */
struct txpdu {
	struct txpdu *next;
	uint8_t hdr[ISCSI_BHS_LEN];
	uint8_t hdig[ISCSI_DIGEST_LEN];
	uint8_t trailer[3 + ISCSI_DIGEST_LEN]; /* pad + data digest */
	const uint8_t *data;
	uint32_t dlen;
	uint8_t *owned;	   /* freed with the PDU */
	struct task *task; /* a reference keeping data alive */
	size_t total, sent;
	uint32_t trailer_len;
	bool has_hdig;
	bool framed;
	bool close_after; /* close the connection once sent (logout, login failure) */
};

/* A pending R2T sequence (RFC 7143 11.8). */
struct r2t_seq {
	bool active;
	uint32_t ttt, offset, len, got, next_datasn, r2tsn;
	uint64_t sent_ns; /* when the R2T went out (admission and the Data-Out timeout) */
};

/* Ports whose nexus ids are kept before idle ones are forgotten (nexus_id). */
#define ISCSI_NEXUS_KEEP 65536

/* One initiator port name and its I_T nexus id. */
struct nexus_ent {
	struct nexus_ent *next;
	uint64_t hash, id;
	bool live; /* scratch: a session uses it (nexus_forget) */
	char name[];
};

/* One SCSI task of a session; outlives its connection while the engine has it. */
struct task {
	struct task *next, *prev; /* the connection's task list */
	struct task *done_next;	  /* completion queue link */
	struct conn *conn;	  /* NULL once orphaned */
	struct portal *portal;
	int refs;
	uint32_t itt, cmd_sn, edtl;
	uint16_t lun_id;
	uint8_t lun_raw[8];
	bool read, write, immediate;
	bool submitted, completed, aborted, answered;
	uint8_t *buf;
	uint32_t buf_len;
	/* Data-Out bookkeeping */
	uint32_t received;  /* bytes received, in order */
	uint32_t unsol_end; /* end offset of the unsolicited burst */
	uint32_t unsol_datasn;
	bool unsol_open;
	uint32_t r2t_next; /* next offset to solicit */
	uint32_t r2tsn;
	unsigned r2t_active;
	struct r2t_seq r2t[ISCSI_MAX_R2T];
	uint32_t datain_pdus;
	/*
	 * The initiator port name, copied whole: the core reads it from a store
	 * worker thread, possibly after the connection (which owns its own copy)
	 * is gone.
	 */
	char *initiator;
	struct fl_cmd cmd;
};

/* A task-management request in flight at the engine. */
struct tmf_req {
	struct tmf_req *done_next;
	struct tmf_req *conn_next; /* the connection's TMFs at the engine */
	struct conn *conn;	   /* NULL once orphaned */
	struct portal *portal;
	uint32_t itt;
	uint8_t lun_raw[8];
	enum fl_tmf_resp resp;
	bool cold_reset;
	struct fl_tmf tmf;
};

/* A timer of the loop; owned by the portal's queue. */
struct timer {
	struct fl_timer node;
	struct timer **slot; /* cleared when it fires or is dropped, or NULL */
	struct conn *conn;   /* cancelled when this connection closes */
	void (*fn)(struct portal *p, struct conn *c, void *arg);
	void (*free_arg)(void *arg);
	void *arg;
};

/* Login-phase state of a connection. */
struct login_state {
	int stage; /* current stage: CSG expected */
	bool first_seen;
	bool auth_done;
	bool chap_used;
	int chap_step; /* 0 none, 1 method agreed, 2 challenge sent */
	uint8_t chap_id;
	uint8_t chap_challenge[16];
	bool sent_tpgt, sent_mrdsl, sent_alias;
	uint32_t itt;
	uint8_t *text; /* accumulated key text (C bit) */
	size_t text_len;
	/* negotiation working copy */
	struct iscsi_params p;
	char seen_keys[64][ISCSI_KEY_MAX + 1]; /* keys already negotiated */
	unsigned nseen;
};

enum conn_state {
	CONN_LOGIN = 0,
	CONN_FULL,
	CONN_CLOSING, /* flushing a last PDU, then close */
};

/* One TCP connection; with MaxConnections=1 it is also the session. */
struct conn {
	struct conn *next, *prev;
	struct portal *portal;
	int fd;
	uint64_t id;
	const struct listener *lsn; /* the portal that accepted it: its target port */
	uint16_t rel_port_id, tpgt;
	char peer[64];
	char peer_host[64]; /* the address alone, for the per-address session limit */
	enum conn_state state;
	uint32_t ep_events;
	bool dead;	  /* marked closing by conn_close: torn down by conns_settle */
	bool quiet_close; /* an orderly close: log at info level */
	bool logged_out;
	/* receive */
	uint8_t bhs[ISCSI_BHS_LEN];
	size_t rx_have;
	uint8_t *rx_buf;
	size_t rx_cap, rx_need;
	/* bytes read ahead of the PDU in hand (conn.c: one read a small PDU) */
	uint8_t *rb;
	uint32_t rb_off, rb_len;
	bool rb_drained; /* the last read came short: the socket had no more */
	uint32_t rx_ahs, rx_dsl;
	bool rx_in_body;
	bool rx_hdigest, rx_ddigest;
	uint64_t rx_start_ns;  /* a PDU in progress began then (0: none) */
	uint64_t last_rx_ns;   /* the last complete PDU, or the connection */
	uint64_t ping_sent_ns; /* an idle ping awaits its answer since then (0: none) */
	/* transmit */
	struct txpdu *tx_head, *tx_tail;
	uint64_t tx_bytes;
	uint64_t held_bytes; /* in the held-back list below */
	/* outbound PDUs held back by a delay fault, in order */
	struct txpdu *held_head, *held_tail;
	uint64_t tx_hold_until;
	struct timer *tx_hold_timer;
	bool rx_paused;	   /* an inbound PDU is delayed: read nothing more until it ran */
	bool tx_fresh;	   /* PDUs queued since the last write: conn.c writes them */
	bool events_stale; /* reading paused or resumed: conn.c re-registers its events */
	bool to_settle;	   /* on the portal's to-settle list (tx.c: conn_mark) */
	bool rx_kick;	   /* read ahead while reading was off: conns_settle reads it */
	struct conn *settle_next;
	bool tx_hdigest, tx_ddigest;
	/* login */
	struct login_state *login;
	/* session */
	uint8_t isid[6];
	uint16_t tsih, cid;
	char *initiator_name;
	char *initiator_port; /* "iqn...,i,0x<isid>" */
	char *nexus_key;      /* initiator port, and target port past the first (nexus_id) */
	char *target_name;
	bool discovery;
	bool logged_in;	    /* full feature phase reached (normal session) */
	bool authenticated; /* CHAP succeeded: never evicted for a newcomer */
	uint64_t nexus_id;
	uint32_t stat_sn, exp_cmd_sn, max_cmd_sn;
	struct iscsi_params p;
	/* tasks */
	struct task *tasks;
	unsigned ntasks;
	uint64_t task_bytes;
	struct tmf_req *tmfs;
	/* transport conditions from the engine */
	struct fl_xport_state xs;
	bool logout_req_sent;
	bool stalled;
	uint32_t nop_ttt;
	struct timer *nop_timer;
	struct timer *login_timer;
	/* text request continuation */
	uint8_t *text;
	size_t text_len;
	uint32_t text_itt;
};

/* One listening socket: the portal of one target port. */
struct listener {
	int fd;
	char addr[64];
	uint16_t port;
	uint16_t rel_port_id, tpgt;
};

/* The portal: its listening sockets, one loop, many connections. */
struct portal {
	struct fl_iscsi_opts opts; /* strings owned */
	struct fl_engine *engine;
	struct fl_target *target;
	bool engine_gone; /* after fl_iscsi_disconnect: no more calls into it */
	int epfd, efd;
	struct listener ls[FL_ISCSI_MAX_PORTS]; /* ls[0]: the first portal */
	unsigned nls;
	struct conn *conns;
	unsigned nconns;
	/* connections with something to settle (written, re-registered, torn down) */
	struct conn *to_settle;
	/* limits, from the options and RLIMIT_NOFILE (fl_iscsi_create) */
	unsigned max_conns;    /* connections of any kind */
	unsigned max_sessions; /* logged-in sessions: max_conns less a share for logins */
	unsigned max_per_initiator, max_per_address;
	uint64_t pdu_timeout_ns, nopin_interval_ns, nopin_timeout_ns; /* 0: off */
	uint64_t budget;       /* process-wide queued bytes */
	uint64_t queued_bytes; /* sum of every connection's queued bytes */
	bool budget_over;      /* some connection stopped reading for the budget */
	int reserve_fd;	       /* closed to accept-and-close when out of files */
	bool listen_on;
	struct timer *listen_timer;
	uint64_t acclog_ns;    /* rate limit of the accept log lines */
	unsigned acclog_quiet; /* lines not written since */
	struct timer *sweep_timer;
	/* failed CHAP authentications per initiator name and address (chap.c) */
	struct chap_fail *chap_fails;
	unsigned nchap_fails;
	/* checked CHAP failures target-wide in the second chap_budget_s (chap.c) */
	uint64_t chap_budget_s;
	unsigned chap_budget_used;
	uint64_t next_conn_id;
	uint16_t next_tsih;
	uint32_t next_ttt;
	struct fl_theap timers;
	/* completion queue, filled from any thread */
	pthread_mutex_t lock;
	struct task *done_head, *done_tail;
	struct tmf_req *tmf_head, *tmf_tail;
	bool xport_dirty;
	bool kicked;
	/* the thread running fl_iscsi_run, while it runs (completions on it need no kick) */
	bool loop_running;
	pthread_t loop_thread;
	bool no_pwait2; /* epoll_pwait2 unavailable: millisecond waits */
	volatile int stop;
	/*
	 * I_T nexus ids stable per initiator port name (the whole name): a hash
	 * table; past ISCSI_NEXUS_KEEP ports, those with no session and nothing
	 * in the core (no PR registration, no pending UA) are forgotten.
	 */
	struct nexus_ent **nexus_tab;
	size_t nexus_buckets, nnexus;
	uint64_t next_nexus;
};

/* log.c */
void iscsi_log(struct portal *p, int level, struct conn *c, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An accept-path line (accept, admission), at most one a second. */
void accept_log(struct portal *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* timer.c */
struct timer *timer_add(struct portal *p, struct timer **slot, struct conn *c, uint64_t delay_ns,
			void (*fn)(struct portal *, struct conn *, void *), void *arg,
			void (*free_arg)(void *));
void timer_cancel(struct portal *p, struct timer *t);
/* Runs due loop timers; returns the next deadline (ns), at most 1 s ahead. */
uint64_t timers_run(struct portal *p);
void timers_drop_conn(struct portal *p, struct conn *c);
void timers_free(struct portal *p);

/* portal.c: the loop; fl_iscsi.h is its face */

/* conn.c: a connection's life; the loop and the listeners call in */
void conn_accept(struct portal *p, const struct listener *lsn, int fd,
		 const struct sockaddr_storage *ss, socklen_t sl);
int conn_on_readable(struct conn *c);
int conn_on_writable(struct conn *c);
/* Writes what was queued, re-registers events, tears down those marked closing,
 * takes PDUs read ahead whose reading resumed; true when it took any. */
bool conns_settle(struct portal *p);
void conn_update_events(struct conn *c);
bool conn_read_blocked(struct conn *c);

/* tx.c: what the handlers may do to a connection; records only, writes nothing */
/* Marks c closing (once: the first reason is logged); torn down by conns_settle. */
void conn_close(struct conn *c, const char *why);
void conn_queue(struct conn *c, struct txpdu *t);
void conn_send(struct conn *c, struct txpdu *t, enum fl_pdu_kind kind, const struct task *task,
	       uint32_t data_sn, uint32_t offset);
void conn_send_reject(struct conn *c, const uint8_t *bhs, uint8_t reason);
void conn_pause_reading(struct conn *c, bool paused);
/* Puts c on the portal's to-settle list (once until conns_settle takes it). */
void conn_mark(struct conn *c);
uint64_t conn_queued(const struct conn *c);
/* Adds delta (may be negative) to one of c's queued-byte counters and the portal's. */
static inline void conn_mem(struct conn *c, uint64_t *field, int64_t delta)
{
	*field += (uint64_t)delta;
	c->portal->queued_bytes += (uint64_t)delta;
}

/* pdu.c */
struct txpdu *txpdu_new(uint8_t opcode);
void txpdu_set_data(struct txpdu *t, const uint8_t *data, uint32_t len, bool copy);
void txpdu_free(struct txpdu *t);
void task_put(struct task *t);
uint32_t conn_max_cmd_sn(struct conn *c);
void pdu_log(struct conn *c, const char *dir, const uint8_t *bhs, uint32_t dlen);
void lun_decode(const uint8_t *raw, uint16_t *lun_id);
void pdu_info(struct conn *c, enum fl_pdu_kind kind, const struct task *t,
	      struct fl_pdu_info *info);

/* login.c */
int login_handle(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen);
void login_free(struct login_state *l);

/* negotiate.c */
struct kv {
	char *key, *value;
};
struct kvlist {
	struct kv *v;
	size_t n, cap;
};
int kv_parse(const uint8_t *text, size_t len, struct kvlist *out);
void kv_free(struct kvlist *l);
const char *kv_get(const struct kvlist *l, const char *key);
int kv_add(struct kvlist *l, const char *key, const char *value);
uint8_t *kv_serialize(const struct kvlist *l, uint32_t *len);
void params_default(struct iscsi_params *p);
bool key_is_security(const char *key);
/* Negotiates one operational key; appends the answer to resp. Returns a login status. */
int negotiate_key(struct login_state *l, bool discovery, const char *key, const char *value,
		  struct kvlist *resp);

/* chap.c */
void md5_digest(const uint8_t *data, size_t len, uint8_t out[16]);
int chap_step(struct conn *c, const struct kvlist *req, struct kvlist *resp, bool *done);
int chap_hex_decode(const char *s, uint8_t *out, size_t cap, size_t *len);
int chap_value_decode(const char *s, uint8_t *out, size_t cap, size_t *len);
void chap_fails_free(struct portal *p);

/* session.c */
/* One complete inbound PDU from the connection: login or full feature phase. */
int session_receive(struct conn *c, const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len,
		    const uint8_t *data, uint32_t dlen);
/* Orphans the tasks and TMFs of a connection being torn down; frees its login state. */
void session_release(struct conn *c);
void session_drain(struct portal *p);
int session_text(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen);

/* nexus.c */
uint64_t nexus_id(struct portal *p, const char *port_name);
void nexus_free(struct portal *p);
/* Whether a new session of c may log in (may evict an idle one); 0 or a login status. */
int session_admit(struct conn *c, char *why, size_t whylen);
void session_start(struct conn *c);
void session_end(struct conn *c, bool logout);
void session_xport_refresh(struct conn *c);
struct conn *session_find_tsih(struct portal *p, uint16_t tsih);
void session_reinstate(struct conn *c);
uint16_t session_alloc_tsih(struct portal *p);

/* scsi.c */
int scsi_cmd(struct conn *c, const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len,
	     const uint8_t *data, uint32_t dlen);
int scsi_data_out(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen);
void scsi_task_completed(struct portal *p, struct task *t);
uint64_t conn_oldest_r2t(const struct conn *x);
struct task *task_find(struct conn *c, uint32_t itt);
void task_abort(struct task *t);
void conn_drop_tasks(struct conn *c);

/* tmf.c */
bool tmf_function_supported(const uint8_t *bhs);
int tmf_request(struct conn *c, const uint8_t *bhs);
void tmf_completed(struct portal *p, struct tmf_req *r);

/* nop.c */
int nop_out(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen);
void nop_send_unsolicited(struct conn *c, bool want_reply);
void nop_timer_arm(struct conn *c);
void async_send_logout_request(struct conn *c, uint16_t wait_s);

/* backend.c: the one door to the SCSI layer */
void be_wake(struct portal *p);
void be_submit(struct portal *p, struct task *t);
void be_tmf(struct portal *p, struct tmf_req *r);
void be_pdu(struct portal *p, const struct fl_pdu_info *info, struct fl_xport_verdict *out);
void be_xport_state(struct portal *p, struct conn *c, struct fl_xport_state *out);
void be_conn_event(struct portal *p, struct conn *c, enum fl_conn_event ev);
bool be_lun_exists(struct portal *p, uint16_t lun_id);
bool be_nexus_in_use(struct portal *p, uint64_t nexus_id);
uint32_t be_block_size(struct portal *p, uint16_t lun_id);
void be_init(struct portal *p);
/* The loop drives the engine's timers while it runs (fl_engine_timers_adopt). */
bool be_timers_adopt(struct portal *p);
uint64_t be_timers_run(struct portal *p);
int be_timers_release(struct portal *p);

/* crc32c.c: iscsi_digest.h */

#endif
