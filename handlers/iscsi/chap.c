/* SPDX-License-Identifier: MIT */
/*
 * chap.c - CHAP authentication for the login security stage.
 *
 * RFC 7143 12.1.3 (CHAP keys CHAP_A, CHAP_I, CHAP_C, CHAP_N, CHAP_R; only
 * algorithm 5, MD5; one-way and mutual; a target must refuse a challenge
 * equal to the one it sent), RFC 1994 (response = MD5(id || secret ||
 * challenge)) and RFC 1321 (MD5, implemented here so the target has no
 * crypto library dependency). Secrets are never logged or echoed.
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
 * One step of the CHAP exchange after AuthMethod=CHAP was agreed. Sets *done
 * when the initiator has authenticated (and, if asked, we have answered).
 * Returns 0 or a login status (ISCSI_LOGIN_AUTH_FAILED).
 */
int chap_step(struct conn *c, const struct kvlist *req, struct kvlist *resp, bool *done)
{
	struct login_state *l = c->login;
	struct portal *p = c->portal;
	char hex[2 + 2 * 1024 + 1];

	*done = false;
	if (l->chap_step == 1) {
		const char *a = kv_get(req, "CHAP_A");
		if (!a)
			return 0; /* nothing yet: wait for CHAP_A */
		if (!list_has(a, "5")) {
			kv_add(resp, "CHAP_A", "Reject");
			iscsi_log(p, LOG_ERR, c, "CHAP: initiator offers no MD5 (CHAP_A=%s)", a);
			return ISCSI_LOGIN_AUTH_FAILED;
		}
		uint8_t id;
		if (getrandom(&id, 1, 0) != 1 ||
		    getrandom(l->chap_challenge, sizeof(l->chap_challenge), 0) !=
			(ssize_t)sizeof(l->chap_challenge))
			return ISCSI_LOGIN_TARGET_ERROR;
		l->chap_id = id;
		char idbuf[8];
		snprintf(idbuf, sizeof(idbuf), "%u", id);
		hex_encode(l->chap_challenge, sizeof(l->chap_challenge), hex);
		if (kv_add(resp, "CHAP_A", "5") || kv_add(resp, "CHAP_I", idbuf) ||
		    kv_add(resp, "CHAP_C", hex))
			return ISCSI_LOGIN_OUT_OF_RESOURCES;
		l->chap_step = 2;
		return 0;
	}
	if (l->chap_step != 2)
		return ISCSI_LOGIN_AUTH_FAILED;
	const char *name = kv_get(req, "CHAP_N"), *r = kv_get(req, "CHAP_R");
	if (!name || !r) {
		iscsi_log(p, LOG_ERR, c, "CHAP: CHAP_N or CHAP_R missing");
		return ISCSI_LOGIN_AUTH_FAILED;
	}
	uint8_t got[64], want[16];
	size_t glen;
	chap_response(l->chap_id, p->opts.chap_secret ? p->opts.chap_secret : "", l->chap_challenge,
		      sizeof(l->chap_challenge), want);
	if (!p->opts.chap_user || strcmp(name, p->opts.chap_user) ||
	    chap_hex_decode(r, got, sizeof(got), &glen) || glen != 16 || memcmp(got, want, 16)) {
		iscsi_log(p, LOG_ERR, c, "CHAP: authentication failed for user '%s'", name);
		return ISCSI_LOGIN_AUTH_FAILED;
	}
	const char *mi = kv_get(req, "CHAP_I"), *mc = kv_get(req, "CHAP_C");
	if (mi || mc) {
		/* Mutual CHAP: the initiator challenges us. */
		uint8_t chal[1024];
		size_t clen;
		char *end;
		unsigned long id = mi ? strtoul(mi, &end, 0) : 256;
		if (!mi || !mc || *end || id > 255 ||
		    chap_hex_decode(mc, chal, sizeof(chal), &clen)) {
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
	}
	l->chap_step = 3;
	*done = true;
	iscsi_log(p, LOG_INFO, c, "CHAP: user '%s' authenticated%s", name, mi ? " (mutual)" : "");
	return 0;
}
