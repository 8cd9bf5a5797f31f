/* SPDX-License-Identifier: MIT */
/*
 * initiator.c - the iSCSI initiator side of `faultlun check` and `faultlun
 * send`, and of the integration clients (see initiator.h): URL parsing, the Normal session's login
 * (RFC 7143 6) through libiscsi's asynchronous API with a deadline, and an
 * event loop on one context.
 */
#include "initiator.h"

#include "fl_check.h"

#include <iscsi/scsi-lowlevel.h>

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/*
 * The login being waited for. A login abandoned at its deadline may still
 * be answered (or cancelled when its context is destroyed): its callback
 * carries an older tag and changes nothing.
 */
static struct {
	uintptr_t tag;
	bool done;
	int status;
} login_state;

/* Monotonic milliseconds. */
int64_t ini_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A context for url's target, set up as every client wants it. */
/* The last context whose connection ini_wait found gone (see ini_gone). */
static const struct iscsi_context *gone_ctx;

struct iscsi_context *ini_context(const char *url, const char *iname, struct iscsi_url **u)
{
	struct iscsi_context *ctx = iscsi_create_context(iname);
	if (!ctx) {
		fprintf(stderr, "cannot create a libiscsi context\n");
		return NULL;
	}
	if (ctx == gone_ctx) /* a new context where a gone one was */
		gone_ctx = NULL;
	*u = iscsi_parse_full_url(ctx, url);
	if (!*u) {
		fprintf(stderr, "bad URL %s: %s\n", url, iscsi_get_error(ctx));
		iscsi_destroy_context(ctx);
		return NULL;
	}
	iscsi_set_targetname(ctx, (*u)->target);
	iscsi_set_session_type(ctx, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(ctx, ISCSI_HEADER_DIGEST_NONE_CRC32C);
	if ((*u)->user[0])
		iscsi_set_initiator_username_pwd(ctx, (*u)->user, (*u)->passwd);
	return ctx;
}

/* Completion of a login: recorded only if it is the current one. */
static void login_done(struct iscsi_context *ctx, int status, void *data, void *tag)
{
	(void)ctx;
	(void)data;
	if ((uintptr_t)tag != login_state.tag)
		return;
	login_state.done = true;
	login_state.status = status;
}

/*
 * Why the TCP connection failed, in plain words ("connection refused"):
 * libiscsi reports it as "socket error Connection refused(111) while
 * connecting" and then overwrites that with its reconnect's complaint.
 */
static char connect_why[128];

/* Keeps the reason of a failed TCP connect from libiscsi's message. */
static void note_connect_error(struct iscsi_context *ctx)
{
	const char *e = iscsi_get_error(ctx);
	const char *p = e ? strrchr(e, '(') : NULL;
	long err = p ? strtol(p + 1, NULL, 10) : 0;

	if (err > 0 && err < 4096) {
		snprintf(connect_why, sizeof(connect_why), "%s", strerror((int)err));
		connect_why[0] = (char)tolower((unsigned char)connect_why[0]);
	} else {
		snprintf(connect_why, sizeof(connect_why), "%s", e ? e : "cannot connect");
	}
}

/* The TCP connection is up (or failed): the login follows on it. */
static void connect_done(struct iscsi_context *ctx, int status, void *data, void *tag)
{
	(void)data;
	if ((uintptr_t)tag != login_state.tag)
		return;
	if (status) {
		note_connect_error(ctx);
		login_state.done = true;
		login_state.status = -1;
		return;
	}
	if (iscsi_login_async(ctx, login_done, tag)) {
		login_state.done = true;
		login_state.status = -1;
	}
}

/*
 * ini_wait for the login: also ends when libiscsi gives up on the connection
 * (the target closed it during the login: no callback comes then).
 */
static bool login_wait(struct iscsi_context *ctx, int ms)
{
	int64_t end = ini_now_ms() + ms;

	while (!login_state.done) {
		int64_t left = end - ini_now_ms();
		if (left <= 0)
			return false;
		struct pollfd pfd = {.fd = iscsi_get_fd(ctx),
				     .events = (short)iscsi_which_events(ctx)};
		int n = poll(&pfd, 1, left > 100 ? 100 : (int)left);
		if (n < 0 && errno != EINTR)
			return false;
		if (iscsi_service(ctx, n > 0 ? pfd.revents : 0) < 0 && !iscsi_is_logged_in(ctx) &&
		    !login_state.done) {
			if (!connect_why[0])
				snprintf(connect_why, sizeof(connect_why),
					 "the target closed the connection during the login");
			return false;
		}
	}
	return true;
}

/*
 * Connects and logs in within ms: a connection, then the Login Phase, and
 * nothing else (libiscsi's full connect would send a TEST UNIT READY after
 * the login, firing scenario rules and taking a pending unit attention that
 * the caller never sees).
 *
 * libiscsi renews a failed session with the portal and LUN that its full
 * connect records; a plain connect records neither. So, once the
 * connection is under way, iscsi_full_connect_async is called too: it records
 * them and then gives up at once, as a context that is already connecting
 * refuses a second connect (libiscsi 1.19 lib/connect.c, lib/socket.c), and
 * sends nothing.
 */
bool ini_connect(struct iscsi_context *ctx, const struct iscsi_url *u, int ms)
{
	login_state.tag++;
	login_state.done = false;
	login_state.status = -1;
	connect_why[0] = 0;
	if (iscsi_connect_async(ctx, u->portal, connect_done, (void *)login_state.tag)) {
		note_connect_error(ctx);
		return false;
	}
	(void)iscsi_full_connect_async(ctx, u->portal, u->lun, login_done, NULL);
	if (!login_wait(ctx, ms)) {
		login_state.tag++; /* a late answer is not this login's */
		if (!connect_why[0])
			fprintf(stderr, "no login answer within %d ms\n", ms);
		return false;
	}
	return login_state.status == SCSI_STATUS_GOOD && iscsi_is_logged_in(ctx);
}

/* Why the last login of ini_login_plain failed. */
static char login_why[512];

/*
 * A logged-in context for url (no command sent), or NULL with a message on
 * stderr (in login_why when quiet).
 */
static struct iscsi_context *login_url(const char *url, const char *iname, int *lun, int ms,
				       bool quiet)
{
	struct iscsi_url *u;
	struct iscsi_context *ctx = ini_context(url, iname, &u);
	if (!ctx)
		return NULL;
	if (lun)
		*lun = u->lun;
	bool ok = ini_connect(ctx, u, ms);
	if (!ok) {
		if (connect_why[0])
			snprintf(login_why, sizeof(login_why), "%.160s: %.160s", connect_why,
				 u->portal);
		else
			snprintf(login_why, sizeof(login_why),
				 "login of %.160s to %.160s failed: %.160s", iname, u->portal,
				 iscsi_get_error(ctx));
		if (!quiet)
			fprintf(stderr, "%s\n", login_why);
	}
	iscsi_destroy_url(u);
	if (!ok) {
		iscsi_destroy_context(ctx);
		return NULL;
	}
	return ctx;
}

/* A logged-in context for url, or NULL. */
struct iscsi_context *ini_login(const char *url, const char *iname, int *lun, int ms)
{
	return login_url(url, iname, lun, ms, false);
}

/* ini_login without the message, for the callers that replace a failed session. */
struct iscsi_context *ini_login_plain(const char *url, const char *iname, int ms)
{
	login_why[0] = 0;
	return login_url(url, iname, NULL, ms, true);
}

const char *ini_login_why(void)
{
	return login_why;
}

/* One TEST UNIT READY of ini_clear_ua: its answer (the task stays with the caller). */
struct tur_wait {
	bool done;
	int status;
};

/* Completion of ini_clear_ua's TEST UNIT READY. */
static void tur_done(struct iscsi_context *ctx, int status, void *data, void *priv)
{
	struct tur_wait *w = priv;

	(void)ctx;
	(void)data;
	w->done = true;
	w->status = status;
}

/* TEST UNIT READY until no unit attention is left (at most 8). */
int ini_clear_ua(struct iscsi_context *ctx, int lun, int ms, const char *who)
{
	int cleared = 0;

	for (int i = 0; i < 8; i++) {
		/* on the heap: a late answer after a timeout still writes to it */
		struct tur_wait *w = calloc(1, sizeof(*w));
		struct scsi_task *t = w ? iscsi_testunitready_task(ctx, lun, tur_done, w) : NULL;
		if (!t) {
			free(w);
			return -1;
		}
		if (!ini_wait(ctx, &w->done, ms)) {
			iscsi_scsi_cancel_task(ctx, t); /* libiscsi lets go of t and w */
			scsi_free_scsi_task(t);
			free(w);
			return -1;
		}
		bool ua = t->status == SCSI_STATUS_CHECK_CONDITION &&
			  t->sense.key == SCSI_SENSE_UNIT_ATTENTION;
		if (ua && who) {
			char text[128];
			fl_sense_text((uint8_t)t->sense.key, (uint8_t)(t->sense.ascq >> 8),
				      (uint8_t)(t->sense.ascq & 0xff), text, sizeof(text));
			fprintf(stderr, "%s: LUN %d: unit attention cleared: %s\n", who, lun, text);
		}
		bool answered =
		    w->status != SCSI_STATUS_CANCELLED && w->status != SCSI_STATUS_ERROR;
		scsi_free_scsi_task(t);
		free(w);
		if (!ua)
			return answered ? cleared : -1;
		cleared++;
	}
	return cleared;
}

/*
 * Services ctx until *done or ms pass. libiscsi's service call fails when the
 * connection is gone and will not be renewed (a context without session
 * renewal, or a renewal that cannot start): nothing more can come then, and
 * polling on would spin on the closed socket, so the wait ends (or, with done
 * NULL, sleeps out its time without the socket).
 */
bool ini_gone(const struct iscsi_context *ctx)
{
	return ctx && ctx == gone_ctx;
}

bool ini_wait(struct iscsi_context *ctx, const bool *done, int64_t ms)
{
	int64_t end = ini_now_ms() + ms;
	bool gone = ini_gone(ctx);

	if (gone && done)
		return *done;

	while (!done || !*done) {
		int64_t left = end - ini_now_ms();
		ini_watchdog_kick();
		if (left <= 0)
			return false;
		/* fd -1 (between reconnect tries) makes poll a plain sleep. */
		struct pollfd pfd = {.fd = gone ? -1 : iscsi_get_fd(ctx),
				     .events = (short)iscsi_which_events(ctx)};
		int n = poll(&pfd, 1, left > 100 ? 100 : (int)left);
		if (n < 0 && errno != EINTR)
			return false;
		if (!gone && iscsi_service(ctx, n > 0 ? pfd.revents : 0) < 0) {
			gone_ctx = ctx;
			if (done)
				return *done;
			gone = true;
		}
	}
	return true;
}

/* The logout has ended (static: libiscsi may call back from iscsi_destroy_context). */
static bool logout_done;

/* Completion of a logout. */
static void logout_cb(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
	(void)iscsi;
	(void)status;
	(void)data;
	(void)priv;
	logout_done = true;
}

int ini_logout(struct iscsi_context *ctx, int ms)
{
	int64_t t0 = ini_now_ms();

	logout_done = false;
	if (!iscsi_is_logged_in(ctx) || iscsi_logout_async(ctx, logout_cb, NULL))
		return 0;
	if (ini_wait(ctx, &logout_done, ms))
		return 0;
	return ini_now_ms() - t0 < ms ? 1 : 2;
}

static char watchdog_msg[256];
static size_t watchdog_len;
static int watchdog_rc;
static int64_t watchdog_ms;   /* an idle watchdog's period, else 0 */
static int64_t watchdog_kick; /* when it was last started */

/* The watchdog fired: libiscsi made no progress within the deadline. */
static void watchdog_fired(int sig)
{
	(void)sig;
	(void)!write(STDERR_FILENO, watchdog_msg, watchdog_len);
	if (watchdog_rc < 0)
		abort();
	_exit(watchdog_rc);
}

/* Starts the timer for ms (0: stops it). */
static void watchdog_timer(int64_t ms)
{
	struct itimerval t = {{0, 0}, {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000}};

	setitimer(ITIMER_REAL, &t, NULL);
}

void ini_watchdog(int64_t ms, const char *msg, int rc, bool idle)
{
	watchdog_ms = 0;
	if (ms > 0) {
		size_t n = strnlen(msg ? msg : "", sizeof(watchdog_msg) - 1);

		memcpy(watchdog_msg, msg ? msg : "", n);
		watchdog_msg[n] = '\n';
		watchdog_len = n + 1;
		watchdog_rc = rc;
		signal(SIGALRM, watchdog_fired);
		watchdog_ms = idle ? ms : 0;
		watchdog_kick = ini_now_ms();
	}
	watchdog_timer(ms > 0 ? ms : 0);
}

void ini_watchdog_kick(void)
{
	int64_t now;

	if (!watchdog_ms || (now = ini_now_ms()) - watchdog_kick < 1000)
		return;
	watchdog_kick = now;
	watchdog_timer(watchdog_ms);
}
