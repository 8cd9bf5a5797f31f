/* SPDX-License-Identifier: MIT */
/*
 * initiator.c - the iSCSI initiator side of `faultlun check` and `faultlun
 * send`, and of the integration clients (see initiator.h): URL parsing, the Normal session's login
 * (RFC 7143 6) through libiscsi's asynchronous API with a deadline, and an
 * event loop on one context.
 */
#include "initiator.h"

#include <iscsi/scsi-lowlevel.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>

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
struct iscsi_context *ini_context(const char *url, const char *iname, struct iscsi_url **u)
{
	struct iscsi_context *ctx = iscsi_create_context(iname);
	if (!ctx) {
		fprintf(stderr, "cannot create a libiscsi context\n");
		return NULL;
	}
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

/* The login's TEST UNIT READY ended: its task is freed here. */
static void tur_done(struct iscsi_context *ctx, int status, void *data, void *tag)
{
	(void)ctx;
	(void)status;
	scsi_free_scsi_task(data);
	if ((uintptr_t)tag == login_state.tag)
		login_state.done = true;
}

/* The TCP connection is up (or failed): the login follows on it. */
static void connect_done(struct iscsi_context *ctx, int status, void *data, void *tag)
{
	(void)data;
	if ((uintptr_t)tag != login_state.tag)
		return;
	if (status || iscsi_login_async(ctx, login_done, tag)) {
		login_state.done = true;
		login_state.status = -1;
	}
}

/* Connects and logs in within ms (libiscsi's full connect). */
bool ini_connect(struct iscsi_context *ctx, const struct iscsi_url *u, int ms)
{
	login_state.tag++;
	login_state.done = false;
	login_state.status = -1;
	if (iscsi_full_connect_async(ctx, u->portal, u->lun, login_done, (void *)login_state.tag))
		return false;
	if (!ini_wait(ctx, &login_state.done, ms)) {
		login_state.tag++; /* a late answer is not this login's */
		fprintf(stderr, "no login answer within %d ms\n", ms);
		return false;
	}
	/*
	 * libiscsi's full connect ends with a TEST UNIT READY and reports its
	 * failure; a session that did log in is still a session: a path in ALUA
	 * standby or unavailable answers TUR with NOT READY 04/0B, 04/0C (SPC-4
	 * r37 5.15.2.4.4) and serves INQUIRY and REPORT TARGET PORT GROUPS.
	 */
	return login_state.status == SCSI_STATUS_GOOD || iscsi_is_logged_in(ctx);
}

/*
 * ini_connect in two steps of libiscsi's, a connection and then a login,
 * followed by one TEST UNIT READY as the full connect does. libiscsi's full
 * connect leaks its own state when the target closes the connection during
 * the login, and its reconnect cannot renew a context logged in this way: the
 * caller renews it with a new login.
 */
static bool connect_plain(struct iscsi_context *ctx, const struct iscsi_url *u, int ms)
{
	login_state.tag++;
	login_state.done = false;
	login_state.status = -1;
	if (iscsi_connect_async(ctx, u->portal, connect_done, (void *)login_state.tag))
		return false;
	if (!ini_wait(ctx, &login_state.done, ms)) {
		login_state.tag++; /* a late answer is not this login's */
		fprintf(stderr, "no login answer within %d ms\n", ms);
		return false;
	}
	if (login_state.status != SCSI_STATUS_GOOD || !iscsi_is_logged_in(ctx))
		return false;
	/* Any answer will do (see ini_connect); none is a dead session. */
	login_state.done = false;
	if (!iscsi_testunitready_task(ctx, u->lun, tur_done, (void *)login_state.tag))
		return false;
	if (!ini_wait(ctx, &login_state.done, ms)) {
		login_state.tag++;
		fprintf(stderr, "logged in, but no answer to TEST UNIT READY within %d ms\n", ms);
		return false;
	}
	return true;
}

static struct iscsi_context *login_url(const char *url, const char *iname, int *lun, int ms,
				       bool plain)
{
	struct iscsi_url *u;
	struct iscsi_context *ctx = ini_context(url, iname, &u);
	if (!ctx)
		return NULL;
	if (lun)
		*lun = u->lun;
	bool ok = plain ? connect_plain(ctx, u, ms) : ini_connect(ctx, u, ms);
	iscsi_destroy_url(u);
	if (!ok) {
		fprintf(stderr, "login of %s failed: %s\n", iname, iscsi_get_error(ctx));
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

/* ini_login through connect_plain: for a session that replaces a failed one. */
struct iscsi_context *ini_login_plain(const char *url, const char *iname, int ms)
{
	return login_url(url, iname, NULL, ms, true);
}

/* Services ctx until *done or ms pass. */
bool ini_wait(struct iscsi_context *ctx, const bool *done, int64_t ms)
{
	int64_t end = ini_now_ms() + ms;
	while (!done || !*done) {
		int64_t left = end - ini_now_ms();
		if (left <= 0)
			return false;
		/* fd -1 (between reconnect tries) makes poll a plain sleep. */
		struct pollfd pfd = {.fd = iscsi_get_fd(ctx),
				     .events = (short)iscsi_which_events(ctx)};
		int n = poll(&pfd, 1, left > 100 ? 100 : (int)left);
		if (n < 0 && errno != EINTR)
			return false;
		iscsi_service(ctx, n > 0 ? pfd.revents : 0);
	}
	return true;
}
