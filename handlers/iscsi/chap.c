/* SPDX-License-Identifier: MIT */
/*
 * chap.c - CHAP authentication for the login security stage.
 *
 * RFC 7143 12.1.3 (CHAP keys CHAP_A, CHAP_I, CHAP_C, CHAP_N, CHAP_R; only
 * algorithm 5, MD5; one-way and mutual; a target must refuse a challenge
 * equal to the one it sent), RFC 1994 (response = MD5(id || secret ||
 * challenge)) and RFC 1321 (MD5, implemented here so the target has no
 * crypto library dependency). Binary values are hex (0x) or base64 (0b)
 * constants (RFC 7143 5.1). Failed authentications are throttled per
 * source address and by a target-wide budget of checked failures per second;
 * an initiator name's failures never refuse its right secret (anyone may send
 * a victim's name). Secrets are never logged or echoed.
 */
#include "iscsi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* MD5 state (RFC 1321 3.3). */
struct md5 {
	uint32_t s[4];
	uint64_t len;
	uint8_t buf[64];
};

/* Per-round shift amounts (RFC 1321 3.4). */
static const uint8_t md5_r[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
				  5, 9,	 14, 20, 5, 9,	14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
				  4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
				  6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

/* K[i] = floor(abs(sin(i + 1)) * 2^32), computed once. */
static uint32_t md5_k[64];

/* Rotates left. */
static inline uint32_t rol(uint32_t x, unsigned c)
{
	return (x << c) | (x >> (32 - c));
}

/* Processes one 64-byte block. */
static void md5_block(struct md5 *m, const uint8_t *b)
{
	uint32_t w[16], a = m->s[0], bb = m->s[1], c = m->s[2], d = m->s[3];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)b[i * 4] | (uint32_t)b[i * 4 + 1] << 8 |
		       (uint32_t)b[i * 4 + 2] << 16 | (uint32_t)b[i * 4 + 3] << 24;
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int g;
		if (i < 16) {
			f = (bb & c) | (~bb & d);
			g = i;
		} else if (i < 32) {
			f = (d & bb) | (~d & c);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = bb ^ c ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (bb | ~d);
			g = (7 * i) % 16;
		}
		uint32_t tmp = d;
		d = c;
		c = bb;
		bb = bb + rol(a + f + md5_k[i] + w[g], md5_r[i]);
		a = tmp;
	}
	m->s[0] += a;
	m->s[1] += bb;
	m->s[2] += c;
	m->s[3] += d;
}

/* Builds the sine table. */
static void md5_init_k(void)
{
	static const uint32_t k[64] = {
	    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
	    0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
	    0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
	    0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	    0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
	    0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
	    0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
	    0xeb86d391};
	memcpy(md5_k, k, sizeof(k));
}

/* MD5 of one buffer (RFC 1321). */
void md5_digest(const uint8_t *data, size_t len, uint8_t out[16])
{
	struct md5 m = {.s = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}};
	size_t i;

	if (!md5_k[0])
		md5_init_k();
	for (i = 0; i + 64 <= len; i += 64)
		md5_block(&m, data + i);
	size_t rest = len - i;
	memcpy(m.buf, data + i, rest);
	m.buf[rest++] = 0x80;
	if (rest > 56) {
		memset(m.buf + rest, 0, 64 - rest);
		md5_block(&m, m.buf);
		rest = 0;
	}
	memset(m.buf + rest, 0, 56 - rest);
	uint64_t bits = (uint64_t)len * 8;
	for (int j = 0; j < 8; j++)
		m.buf[56 + j] = (uint8_t)(bits >> (8 * j));
	md5_block(&m, m.buf);
	for (int j = 0; j < 4; j++)
		for (int k = 0; k < 4; k++)
			out[j * 4 + k] = (uint8_t)(m.s[j] >> (8 * k));
}

/* Decodes a CHAP binary value "0x..." (RFC 7143 5.1 hex-constant). */
int chap_hex_decode(const char *s, uint8_t *out, size_t cap, size_t *len)
{
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	s += 2;
	size_t n = strlen(s), o = 0;
	if (n == 0)
		return -1;
	size_t i = 0;
	if (n & 1) { /* odd digit count: leading nibble */
		char b[2] = {s[0], 0};
		char *end;
		unsigned long v = strtoul(b, &end, 16);
		if (*end || o >= cap)
			return -1;
		out[o++] = (uint8_t)v;
		i = 1;
	}
	for (; i < n; i += 2) {
		char b[3] = {s[i], s[i + 1], 0};
		char *end;
		unsigned long v = strtoul(b, &end, 16);
		if (*end || o >= cap)
			return -1;
		out[o++] = (uint8_t)v;
	}
	*len = o;
	return 0;
}

/* Value of a base64 digit (RFC 4648 4), or -1. */
static int b64_digit(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

/* Decodes a base64-constant "0b..." (RFC 7143 5.1, RFC 4648 4 with padding). */
static int chap_b64_decode(const char *s, uint8_t *out, size_t cap, size_t *len)
{
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0, n = strlen(s), pad = 0;

	while (n && s[n - 1] == '=' && pad < 2) {
		n--;
		pad++;
	}
	if (n == 0 || (n + pad) % 4)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = b64_digit(s[i]);
		if (d < 0)
			return -1;
		acc = acc << 6 | (uint32_t)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o >= cap)
				return -1;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	*len = o;
	return 0;
}

/*
 * Decodes a CHAP binary value (RFC 7143 5.1, 12.1.3): a hex-constant "0x..."
 * or a base64-constant "0b..." (either prefix in either case).
 */
int chap_value_decode(const char *s, uint8_t *out, size_t cap, size_t *len)
{
	if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
		return chap_b64_decode(s + 2, out, cap, len);
	return chap_hex_decode(s, out, cap, len);
}

/* Formats bytes as a CHAP hex value. */
static void hex_encode(const uint8_t *b, size_t n, char *out)
{
	out += sprintf(out, "0x");
	for (size_t i = 0; i < n; i++)
		out += sprintf(out, "%02x", b[i]);
}

/* CHAP response: MD5(id || secret || challenge) (RFC 1994 4.1). */
static void chap_response(uint8_t id, const char *secret, const uint8_t *chal, size_t clen,
			  uint8_t out[16])
{
	size_t sl = strlen(secret);
	uint8_t *buf = malloc(1 + sl + clen);
	if (!buf) {
		memset(out, 0, 16);
		return;
	}
	buf[0] = id;
	memcpy(buf + 1, secret, sl);
	memcpy(buf + 1 + sl, chal, clen);
	md5_digest(buf, 1 + sl + clen, out);
	free(buf);
}

/* True if the comma list contains item. */
static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && !strncmp(p, item, n))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

/*
 * Failed authentications (docs/robustness.md, "CHAP"):
 * - per source address: the first CHAP_FREE_PER_ADDR are free, then each try
 *   waits twice as long as the last (from 1 s up to CHAP_DELAY_MAX_S) after
 *   the latest failure; a try within that time is refused without a check;
 * - target-wide: at most CHAP_CHECKS_PER_S checked failures in a second,
 *   whatever the names and addresses; past it, a response is refused without
 *   a check, except the first of an address with no failure on record (a
 *   newcomer), so that rotating names and addresses gains nothing;
 * - per initiator name: counted and logged only. Anyone who knows a name
 *   can fail in its name, so a name's failures never refuse a right answer.
 * Records are forgotten CHAP_FORGET_S after their latest failure; names and
 * addresses are kept in two tables of CHAP_RECORDS_MAX each (a flood of fresh
 * names cannot push the address records out); a success clears the name's.
 */
#define CHAP_FREE_PER_ADDR 20 /* many initiators may share an address (NAT) */
#define CHAP_CHECKS_PER_S 20
#define CHAP_DELAY_MAX_S 300
#define CHAP_FORGET_S 900
#define CHAP_RECORDS_MAX 4096

struct chap_fail {
	struct chap_fail *next;
	uint64_t last_ns;
	unsigned count;
	bool is_addr;
	char key[];
};

/* The record of a name or address, or NULL; drops expired records on the way. */
static struct chap_fail *fail_find(struct portal *p, const char *key, bool is_addr)
{
	uint64_t now = fl_mono_ns();

	for (struct chap_fail **pp = &p->chap_fails; *pp;) {
		struct chap_fail *f = *pp;
		if (now - f->last_ns > (uint64_t)CHAP_FORGET_S * 1000000000u) {
			*pp = f->next;
			free(f);
			p->nchap_fails--;
			continue;
		}
		if (f->is_addr == is_addr && !strcmp(f->key, key))
			return f;
		pp = &f->next;
	}
	return NULL;
}

/* Seconds a new try of this record must still wait (0: it may go ahead). */
static unsigned fail_wait_s(const struct chap_fail *f, unsigned free_tries)
{
	if (!f || f->count < free_tries)
		return 0;
	unsigned shift = f->count - free_tries;
	uint64_t delay = shift >= 9 ? CHAP_DELAY_MAX_S : 1u << shift;
	if (delay > CHAP_DELAY_MAX_S)
		delay = CHAP_DELAY_MAX_S;
	uint64_t until = f->last_ns + delay * 1000000000u, now = fl_mono_ns();
	return until > now ? (unsigned)((until - now + 999999999u) / 1000000000u) : 0;
}

/* Counts one failure of a name or address. */
static void fail_note(struct portal *p, const char *key, bool is_addr)
{
	struct chap_fail *f = fail_find(p, key, is_addr);

	if (!f) {
		unsigned n = 0;
		struct chap_fail **oldest = NULL;

		/* a full table of this kind: its record of oldest failure goes (newest first) */
		for (struct chap_fail **pp = &p->chap_fails; *pp; pp = &(*pp)->next)
			if ((*pp)->is_addr == is_addr) {
				n++;
				oldest = pp;
			}
		if (n >= CHAP_RECORDS_MAX && oldest) {
			struct chap_fail *o = *oldest;
			*oldest = o->next;
			free(o);
			p->nchap_fails--;
		}
		size_t len = strlen(key) + 1;
		f = calloc(1, sizeof(*f) + len);
		if (!f)
			return;
		memcpy(f->key, key, len);
		f->is_addr = is_addr;
		f->next = p->chap_fails;
		p->chap_fails = f;
		p->nchap_fails++;
	}
	f->count++;
	f->last_ns = fl_mono_ns();
}

/* Forgets the failures of an initiator name that has now authenticated. */
static void fail_clear(struct portal *p, const char *key)
{
	for (struct chap_fail **pp = &p->chap_fails; *pp; pp = &(*pp)->next)
		if (!(*pp)->is_addr && !strcmp((*pp)->key, key)) {
			struct chap_fail *f = *pp;
			*pp = f->next;
			free(f);
			p->nchap_fails--;
			return;
		}
}

/* Frees every failure record (portal teardown). */
void chap_fails_free(struct portal *p)
{
	while (p->chap_fails) {
		struct chap_fail *f = p->chap_fails;
		p->chap_fails = f->next;
		free(f);
	}
	p->nchap_fails = 0;
}

/* CHAP step 1: checks the initiator's CHAP_A and sends CHAP_A, CHAP_I and our challenge. */
static int chap_send_challenge(struct conn *c, const struct kvlist *req, struct kvlist *resp)
{
	struct login_state *l = c->login;
	char hex[2 + 2 * 1024 + 1];
	const char *a = kv_get(req, "CHAP_A");

	if (!a)
		return 0; /* nothing yet: wait for CHAP_A */
	if (!list_has(a, "5")) {
		kv_add(resp, "CHAP_A", "Reject");
		iscsi_log(c->portal, LOG_ERR, c, "CHAP: initiator offers no MD5 (CHAP_A=%s)", a);
		return ISCSI_LOGIN_AUTH_FAILED;
	}
	uint8_t id;
	size_t clen = sizeof(l->chap_challenge);
	if (getrandom(&id, 1, 0) != 1 || getrandom(l->chap_challenge, clen, 0) != (ssize_t)clen)
		return ISCSI_LOGIN_TARGET_ERROR;
	l->chap_id = id;
	char idbuf[8];
	snprintf(idbuf, sizeof(idbuf), "%u", id);
	hex_encode(l->chap_challenge, clen, hex);
	if (kv_add(resp, "CHAP_A", "5") || kv_add(resp, "CHAP_I", idbuf) ||
	    kv_add(resp, "CHAP_C", hex))
		return ISCSI_LOGIN_OUT_OF_RESOURCES;
	l->chap_step = 2;
	return 0;
}

/* True if a response must be refused unchecked (address delay or target-wide budget). */
static bool chap_throttled(struct conn *c)
{
	struct portal *p = c->portal;
	const struct chap_fail *fa = fail_find(p, c->peer_host, true);
	unsigned wait_a = fail_wait_s(fa, CHAP_FREE_PER_ADDR);

	if (wait_a) {
		iscsi_log(p, LOG_ERR, c,
			  "CHAP: too many failed authentications of address '%s': refused without "
			  "a check for %u s more",
			  c->peer_host, wait_a);
		return true;
	}
	uint64_t now_s = fl_mono_ns() / 1000000000u;
	if (p->chap_budget_s != now_s) {
		p->chap_budget_s = now_s;
		p->chap_budget_used = 0;
	}
	if (p->chap_budget_used >= CHAP_CHECKS_PER_S && fa) {
		iscsi_log(p, LOG_ERR, c,
			  "CHAP: %d failed authentications target-wide in this second: refused "
			  "without a check",
			  CHAP_CHECKS_PER_S);
		return true;
	}
	return false;
}

/* Checks CHAP_N and CHAP_R; a failure is counted and logged, a success clears the name's. */
static bool chap_verify(struct conn *c, const char *name, const char *r)
{
	struct login_state *l = c->login;
	struct portal *p = c->portal;
	const char *iname = c->initiator_name ? c->initiator_name : "";
	uint8_t got[64], want[16];
	size_t glen;

	chap_response(l->chap_id, p->opts.chap_secret ? p->opts.chap_secret : "", l->chap_challenge,
		      sizeof(l->chap_challenge), want);
	if (!p->opts.chap_user || strcmp(name, p->opts.chap_user) ||
	    chap_value_decode(r, got, sizeof(got), &glen) || glen != 16 || memcmp(got, want, 16)) {
		p->chap_budget_used++;
		fail_note(p, iname, false);
		fail_note(p, c->peer_host, true);
		const struct chap_fail *fn = fail_find(p, iname, false);
		iscsi_log(
		    p, LOG_ERR, c,
		    "CHAP: authentication failed for user '%s' (failure %u of initiator '%s')",
		    name, fn ? fn->count : 0, iname);
		return false;
	}
	fail_clear(p, iname);
	return true;
}

/* Mutual CHAP: answers the initiator's challenge (CHAP_I mi, CHAP_C mc) with CHAP_N, CHAP_R. */
static int chap_answer_mutual(struct conn *c, const char *mi, const char *mc, struct kvlist *resp)
{
	struct login_state *l = c->login;
	struct portal *p = c->portal;
	char hex[2 + 2 * 1024 + 1];
	uint8_t chal[1024];
	size_t clen;
	char *end;
	unsigned long id = mi ? strtoul(mi, &end, 0) : 256;

	if (!mi || !mc || *end || id > 255 || chap_value_decode(mc, chal, sizeof(chal), &clen)) {
		iscsi_log(p, LOG_ERR, c, "CHAP: malformed mutual challenge");
		return ISCSI_LOGIN_AUTH_FAILED;
	}
	if (!p->opts.mutual_user || !p->opts.mutual_secret) {
		iscsi_log(p, LOG_ERR, c, "CHAP: mutual CHAP asked but not configured");
		return ISCSI_LOGIN_AUTH_FAILED;
	}
	/* RFC 7143 12.1.3: refuse our own challenge reflected back. */
	if (clen == sizeof(l->chap_challenge) && !memcmp(chal, l->chap_challenge, clen)) {
		iscsi_log(p, LOG_ERR, c, "CHAP: initiator reflected our challenge");
		return ISCSI_LOGIN_AUTH_FAILED;
	}
	uint8_t ans[16];
	chap_response((uint8_t)id, p->opts.mutual_secret, chal, clen, ans);
	hex_encode(ans, 16, hex);
	if (kv_add(resp, "CHAP_N", p->opts.mutual_user) || kv_add(resp, "CHAP_R", hex))
		return ISCSI_LOGIN_OUT_OF_RESOURCES;
	return 0;
}

/*
 * One step of the CHAP exchange after AuthMethod=CHAP was agreed. Sets *done
 * when the initiator has authenticated (and, if asked, we have answered).
 * Returns 0 or a login status (ISCSI_LOGIN_AUTH_FAILED).
 */
int chap_step(struct conn *c, const struct kvlist *req, struct kvlist *resp, bool *done)
{
	struct login_state *l = c->login;
	struct portal *p = c->portal;

	*done = false;
	if (l->chap_step == 1)
		return chap_send_challenge(c, req, resp);
	if (l->chap_step != 2)
		return ISCSI_LOGIN_AUTH_FAILED;
	const char *name = kv_get(req, "CHAP_N"), *r = kv_get(req, "CHAP_R");
	if (!name || !r) {
		iscsi_log(p, LOG_ERR, c, "CHAP: CHAP_N or CHAP_R missing");
		return ISCSI_LOGIN_AUTH_FAILED;
	}
	if (chap_throttled(c) || !chap_verify(c, name, r))
		return ISCSI_LOGIN_AUTH_FAILED;
	const char *mi = kv_get(req, "CHAP_I"), *mc = kv_get(req, "CHAP_C");
	if (mi || mc) {
		/* Mutual CHAP: the initiator challenges us. */
		int err = chap_answer_mutual(c, mi, mc, resp);
		if (err)
			return err;
	}
	l->chap_step = 3;
	*done = true;
	iscsi_log(p, LOG_INFO, c, "CHAP: user '%s' authenticated%s", name, mi ? " (mutual)" : "");
	return 0;
}
