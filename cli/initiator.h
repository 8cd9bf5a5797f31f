/* SPDX-License-Identifier: MIT */
/*
 * initiator.h - what `faultlun check`, `faultlun send` and the libiscsi
 * integration clients share: a context set up from an iscsi:// URL, the login
 * (RFC 7143 6: connect, then the Login Phase) driven through libiscsi's
 * asynchronous API with a deadline, and the single-context event loop.
 */
#ifndef FL_INITIATOR_H
#define FL_INITIATOR_H

#include <iscsi/iscsi.h>

#include <stdbool.h>
#include <stdint.h>

/* Monotonic milliseconds. */
int64_t ini_now_ms(void);

/*
 * A context for the target of url: initiator name iname, a Normal session,
 * header digest CRC32C or none offered, CHAP when the URL has a user. *u is
 * the parsed URL (the caller frees it with iscsi_destroy_url). NULL with a
 * message on stderr if the context cannot be made or the URL is bad.
 */
struct iscsi_context *ini_context(const char *url, const char *iname, struct iscsi_url **u);

/*
 * Connects ctx to u's portal and logs in, within ms: true on success. Sends
 * nothing after the login (no TEST UNIT READY: a pending unit attention and
 * the scenario rules are left to the caller's first command); u's LUN is
 * recorded for libiscsi's session renewal. On failure iscsi_get_error(ctx)
 * says why (a timeout is reported on stderr); a late answer to this login is
 * ignored, so the caller may destroy ctx at any time.
 */
bool ini_connect(struct iscsi_context *ctx, const struct iscsi_url *u, int ms);

/*
 * ini_context + ini_connect: a logged-in context, or NULL with a message
 * on stderr (the context destroyed; a failed TCP connect in plain words,
 * "connection refused: 127.0.0.1:3261"). *lun (if not NULL): the URL's LUN.
 */
struct iscsi_context *ini_login(const char *url, const char *iname, int *lun, int ms);

/*
 * The same login as ini_login, without its message on stderr, for the
 * callers that renew a failed session with new logins (a target that is
 * down refuses each of them): ini_login_why says why the last one failed.
 */
struct iscsi_context *ini_login_plain(const char *url, const char *iname, int ms);
const char *ini_login_why(void);

/*
 * Clears the unit attentions pending for lun, for a caller that asks for it
 * (the login sends nothing): TEST UNIT READY until one ends in something
 * other than UNIT ATTENTION, at most 8 times, each waited for at most ms.
 * Each unit attention cleared is printed on stderr after "who: " when who is
 * not NULL. The number cleared, or -1 when a TEST UNIT READY got no answer.
 */
int ini_clear_ua(struct iscsi_context *ctx, int lun, int ms, const char *who);

/*
 * Services ctx until *done is true or ms pass: true if *done. With done NULL,
 * services ctx for ms and returns false. Ends early (false) when the
 * connection is gone and libiscsi will not renew it.
 */
bool ini_wait(struct iscsi_context *ctx, const bool *done, int64_t ms);

/*
 * Logs ctx out, waiting ms at most for the answer (a target that never
 * answers must not hold the caller): 0 when it was answered or ctx was not
 * logged in, 1 when the connection closed first, 2 when ms passed.
 */
int ini_logout(struct iscsi_context *ctx, int ms);

/* True when an ini_wait on ctx found its connection gone for good. */
bool ini_gone(const struct iscsi_context *ctx);

/*
 * Arms (ms > 0) or disarms (0) the process's watchdog over libiscsi. The
 * waits above bound each wait, but not a loop inside libiscsi that never
 * returns to its caller: libiscsi 1.19 splits data-out into segments of the
 * target's MaxRecvDataSegmentLength and, when the target declared 0, loops
 * for ever allocating empty PDUs. When ms pass before the watchdog is
 * disarmed (or, with idle, before the next ini_watchdog_kick), msg
 * (truncated to 255 bytes) is written to stderr with a newline and the
 * process ends with status rc, or aborts when rc is negative (a fuzzer's
 * finding). Uses SIGALRM and ITIMER_REAL.
 */
void ini_watchdog(int64_t ms, const char *msg, int rc, bool idle);

/*
 * Libiscsi returned to its caller: an idle watchdog starts its ms again
 * (at most once a second; nothing when the watchdog is not idle). ini_wait
 * calls it at every turn.
 */
void ini_watchdog_kick(void);

#endif
