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

/*
 * Connects and logs in within ms, then sends one TEST UNIT READY. The
 * connection and the login are two steps, not libiscsi's full connect, which
 * leaks its own state when the target closes the connection during the login.
 */
bool ini_connect(struct iscsi_context *ctx, const struct iscsi_url *u, int ms)
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
	/*
	 * A TEST UNIT READY, as an initiator's scan begins: it takes the
	 * power-on unit attention. Any answer will do (a path in ALUA standby
	 * answers NOT READY 04/0B and is still a path); none is a dead session.
	 */
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

/* A logged-in context for url, or NULL. */
struct iscsi_context *ini_login(const char *url, const char *iname, int *lun, int ms)
{
	struct iscsi_url *u;
	struct iscsi_context *ctx = ini_context(url, iname, &u);
	if (!ctx)
		return NULL;
	if (lun)
		*lun = u->lun;
	bool ok = ini_connect(ctx, u, ms);
	iscsi_destroy_url(u);
	if (!ok) {
		fprintf(stderr, "login of %s failed: %s\n", iname, iscsi_get_error(ctx));
		iscsi_destroy_context(ctx);
		return NULL;
	}
	return ctx;
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
