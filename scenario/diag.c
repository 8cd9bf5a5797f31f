/* SPDX-License-Identifier: MIT */
/*
 * diag.c - scenario diagnostics (FILE:LINE:COL: message) and the position
 * index of a JSON text.
 *
 * jansson reports the position of a syntax error but keeps no positions for
 * the values it builds, so the validator cannot say where a bad value sits.
 * jpos_build makes one pass over the text (RFC 8259 grammar, tolerant: it
 * stops quietly at the first syntax error, which jansson reports) and records
 * the line and column of every value, and of the key of every object member,
 * under its path ("/rules/0/action/sense"). Lines and columns are 1-based;
 * columns count characters (UTF-8 continuation bytes do not advance them).
 */
#include "scenario_internal.h"
#include "fl_rand.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Appends FILE:LINE:COL: message to d. */
void diag_add(struct fl_diags *d, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	if (d->n >= FL_DIAGS_MAX) {
		d->more++;
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct fl_diag *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return;
		d->v = v;
		d->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	d->v[d->n].file = xstrdup(file ? file : "<scenario>");
	d->v[d->n].line = line;
	d->v[d->n].col = col;
	d->v[d->n].msg = msg;
	d->n++;
}

/* Prints each diagnostic as FILE:LINE:COL: message. */
void fl_diags_print(const struct fl_diags *d, FILE *out)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(out, "%s:%d:%d: %s\n", d->v[i].file, d->v[i].line, d->v[i].col,
			d->v[i].msg);
	if (d->more && d->n)
		fprintf(out, "%s: %zu more problem(s) not shown\n", d->v[d->n - 1].file, d->more);
}

/* Frees every diagnostic; d can be reused. */
void fl_diags_free(struct fl_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = d->more = 0;
}

/*
 * A seed for the hash tables, fixed per process and not known to whoever
 * wrote the text, so that a crafted file cannot aim all its keys at one chain.
 */
static uint64_t hash_seed(void)
{
	static uint64_t seed;

	if (!seed) {
		uint64_t s = 0;

		if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != sizeof(s))
			s = (uint64_t)(uintptr_t)&seed ^ (uint64_t)time(NULL) ^ (uint64_t)getpid();
		seed = s | 1;
	}
	return seed;
}

/* Hash of the member key (or element index) under parent. */
static uint64_t member_hash(uint32_t parent, const char *key, uint32_t klen, uint32_t idx)
{
	uint64_t h = fl_mix64(hash_seed() ^ ((uint64_t)parent << 32 | idx));

	for (uint32_t i = 0; key && i < klen; i++)
		h = (h ^ (unsigned char)key[i]) * 0x100000001b3ull;
	return fl_mix64(h);
}

/* Scanner state of jpos_build. */
struct scan {
	const char *s;
	size_t len, i;
	int line, col;
	bool bad;  /* a syntax error: jansson reports it */
	bool stop; /* a limit or a duplicate key: reported by jpos_build */
	char *key; /* the member key being scanned (unescaped) */
	size_t klen, kcap;
	struct jpos *p;
};

/* Advances one byte, keeping line and column. */
static void sc_adv(struct scan *s)
{
	unsigned char c = (unsigned char)s->s[s->i++];

	if (c == '\n') {
		s->line++;
		s->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		s->col++;
	}
}

/* Skips white space. */
static void sc_ws(struct scan *s)
{
	while (s->i < s->len && (s->s[s->i] == ' ' || s->s[s->i] == '\t' || s->s[s->i] == '\r' ||
				 s->s[s->i] == '\n'))
		sc_adv(s);
}

/* Grows a table of elements of size sz to hold n + 1; false when out of memory. */
static bool grow(void **v, size_t *cap, size_t n, size_t sz)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 64;
	nv = realloc(*v, ncap * sz);
	if (!nv)
		return false;
	*v = nv;
	*cap = ncap;
	return true;
}

/* The entry of the member key (or element idx when key is NULL) under parent, or JPOS_NONE. */
static uint32_t jpos_lookup(const struct jpos *p, uint32_t parent, const char *key, uint32_t klen,
			    uint32_t idx)
{
	uint32_t e;

	if (!p->hcap)
		return JPOS_NONE;
	e = p->heads[member_hash(parent, key, klen, idx) & (p->hcap - 1)];
	for (; e != JPOS_NONE; e = p->v[e].next) {
		const struct jpos_entry *x = &p->v[e];

		if (x->parent != parent)
			continue;
		if (key ? x->klen == klen && !memcmp(p->keys + x->key, key, klen)
			: x->klen == JPOS_ELEM && x->key == idx)
			return e;
	}
	return JPOS_NONE;
}

/* Links entry e into its hash chain, doubling the table as it fills. */
static bool jpos_link(struct jpos *p, uint32_t e)
{
	if (!p->hcap || p->n * 4 > p->hcap * 3) {
		size_t ncap = p->hcap ? p->hcap * 2 : 256;
		uint32_t *nh = malloc(ncap * sizeof(*nh));

		if (!nh)
			return false;
		memset(nh, 0xff, ncap * sizeof(*nh));
		free(p->heads);
		p->heads = nh;
		p->hcap = ncap;
		for (uint32_t i = 1; i < e; i++) {
			struct jpos_entry *x = &p->v[i];
			size_t b =
			    member_hash(x->parent, x->klen == JPOS_ELEM ? NULL : p->keys + x->key,
					x->klen == JPOS_ELEM ? 0 : x->klen,
					x->klen == JPOS_ELEM ? x->key : 0) &
			    (ncap - 1);

			x->next = nh[b];
			nh[b] = i;
		}
	}
	{
		struct jpos_entry *x = &p->v[e];
		size_t b = member_hash(x->parent, x->klen == JPOS_ELEM ? NULL : p->keys + x->key,
				       x->klen == JPOS_ELEM ? 0 : x->klen,
				       x->klen == JPOS_ELEM ? x->key : 0) &
			   (p->hcap - 1);

		x->next = p->heads[b];
		p->heads[b] = e;
	}
	return true;
}

/*
 * Records a value: the root, an array element (key NULL, index idx) or an
 * object member (its unescaped key). Stops the scan at a limit or at a key
 * its object already has.
 */
static uint32_t jpos_add(struct scan *s, uint32_t parent, const char *key, size_t klen,
			 uint32_t idx, int kl, int kc)
{
	struct jpos *p = s->p;
	struct jpos_entry *x;
	uint32_t e;

	if (p->n >= FL_SCENARIO_MAX_VALUES) {
		p->problem = JPOS_TOO_MANY;
		p->pline = s->line;
		p->pcol = s->col;
		s->stop = true;
		return JPOS_NONE;
	}
	if (key && parent != JPOS_NONE &&
	    (e = jpos_lookup(p, parent, key, (uint32_t)klen, 0)) != JPOS_NONE) {
		p->problem = JPOS_DUPLICATE;
		p->pline = kl;
		p->pcol = kc;
		p->other = e;
		p->dup_key = strndup(key, klen);
		s->stop = true;
		return JPOS_NONE;
	}
	if (!grow((void **)&p->v, &p->cap, p->n, sizeof(*p->v))) {
		s->bad = true;
		return JPOS_NONE;
	}
	while (key && p->kcap < p->nkeys + klen + 1)
		if (!grow((void **)&p->keys, &p->kcap, p->kcap, 1)) {
			s->bad = true;
			return JPOS_NONE;
		}
	e = (uint32_t)p->n++;
	x = &p->v[e];
	*x = (struct jpos_entry){.parent = parent,
				 .key = key ? (uint32_t)p->nkeys : idx,
				 .klen = key ? (uint32_t)klen : JPOS_ELEM,
				 .key_line = kl ? kl : s->line,
				 .key_col = kl ? kc : s->col,
				 .line = s->line,
				 .col = s->col,
				 .next = JPOS_NONE};
	if (key) {
		memcpy(p->keys + p->nkeys, key, klen);
		p->nkeys += klen;
	}
	if (parent != JPOS_NONE && !jpos_link(p, e))
		s->bad = true;
	return e;
}

/* Appends one byte to the key being scanned. */
static bool key_put(struct scan *s, char c)
{
	if (s->klen + 1 >= s->kcap) {
		size_t cap = s->kcap ? s->kcap * 2 : 64;
		char *k = realloc(s->key, cap);

		if (!k)
			return false;
		s->key = k;
		s->kcap = cap;
	}
	s->key[s->klen++] = c;
	return true;
}

/* Reads 4 hex digits at s->i (after "\u"); -1 when they are not. */
static long hex4(struct scan *s)
{
	long v = 0;

	if (s->i + 4 > s->len)
		return -1;
	for (int k = 0; k < 4; k++) {
		char c = s->s[s->i + (size_t)k];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	for (int k = 0; k < 4; k++)
		sc_adv(s);
	return v;
}

/* Appends code point cp as UTF-8 to the key. */
static bool key_utf8(struct scan *s, unsigned long cp)
{
	if (cp < 0x80)
		return key_put(s, (char)cp);
	if (cp < 0x800)
		return key_put(s, (char)(0xC0 | cp >> 6)) && key_put(s, (char)(0x80 | (cp & 0x3F)));
	if (cp < 0x10000)
		return key_put(s, (char)(0xE0 | cp >> 12)) &&
		       key_put(s, (char)(0x80 | ((cp >> 6) & 0x3F))) &&
		       key_put(s, (char)(0x80 | (cp & 0x3F)));
	return key_put(s, (char)(0xF0 | cp >> 18)) &&
	       key_put(s, (char)(0x80 | ((cp >> 12) & 0x3F))) &&
	       key_put(s, (char)(0x80 | ((cp >> 6) & 0x3F))) &&
	       key_put(s, (char)(0x80 | (cp & 0x3F)));
}

/* Reads the code point after "\u", a surrogate pair as one; -1 when malformed (RFC 8259 7). */
static long sc_code_point(struct scan *s)
{
	long cp = hex4(s), lo;

	if (cp < 0 || (cp >= 0xDC00 && cp < 0xE000))
		return -1;
	if (cp < 0xD800 || cp >= 0xDC00)
		return cp;
	if (s->i + 1 >= s->len || s->s[s->i] != '\\' || s->s[s->i + 1] != 'u')
		return -1;
	sc_adv(s);
	sc_adv(s);
	lo = hex4(s);
	if (lo < 0xDC00 || lo > 0xDFFF)
		return -1;
	return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
}

/* The character a one-letter escape (after the backslash) stands for; -1 when it is none. */
static int sc_escaped(char c)
{
	switch (c) {
	case '"':
	case '\\':
	case '/':
		return c;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	default:
		return -1;
	}
}

/*
 * Scans a string; with keep, unescapes it (RFC 8259 7: every escape, \u
 * surrogate pairs as one code point, the way jansson reads it) into s->key.
 */
static void sc_string(struct scan *s, bool keep)
{
	s->klen = 0;
	sc_adv(s); /* opening quote */
	while (s->i < s->len && s->s[s->i] != '"') {
		char c = s->s[s->i];
		int esc;

		if ((unsigned char)c < 0x20) {
			s->bad = true; /* a control character: jansson says where */
			return;
		}
		if (c != '\\') {
			if (keep && !key_put(s, c))
				goto oom;
			sc_adv(s);
			continue;
		}
		sc_adv(s);
		if (s->i >= s->len)
			break;
		c = s->s[s->i];
		sc_adv(s);
		if (c == 'u') {
			long cp = sc_code_point(s);

			if (cp < 0) {
				s->bad = true;
				return;
			}
			if (keep && !key_utf8(s, (unsigned long)cp))
				goto oom;
			continue;
		}
		esc = sc_escaped(c);
		if (esc < 0) {
			s->bad = true;
			return;
		}
		if (keep && !key_put(s, (char)esc))
			goto oom;
	}
	if (s->i >= s->len) {
		s->bad = true;
		return;
	}
	sc_adv(s); /* closing quote */
	return;
oom:
	s->bad = true;
}

static void sc_value(struct scan *s, uint32_t parent, bool member, uint32_t idx, int kl, int kc,
		     int depth);

/* Scans an object (entry self). */
static void sc_object(struct scan *s, uint32_t self, int depth)
{
	sc_adv(s);
	sc_ws(s);
	if (s->i < s->len && s->s[s->i] == '}') {
		sc_adv(s);
		return;
	}
	while (!s->bad && !s->stop && s->i < s->len) {
		int kl, kc;

		sc_ws(s);
		if (s->i >= s->len || s->s[s->i] != '"') {
			s->bad = true;
			return;
		}
		kl = s->line;
		kc = s->col;
		sc_string(s, true);
		if (s->bad)
			return;
		sc_ws(s);
		if (s->i >= s->len || s->s[s->i] != ':') {
			s->bad = true;
			return;
		}
		sc_adv(s);
		sc_value(s, self, true, 0, kl, kc, depth + 1);
		sc_ws(s);
		if (s->i < s->len && s->s[s->i] == ',') {
			sc_adv(s);
			continue;
		}
		if (s->i < s->len && s->s[s->i] == '}') {
			sc_adv(s);
			return;
		}
		s->bad = true;
	}
}

/* Scans an array (entry self). */
static void sc_array(struct scan *s, uint32_t self, int depth)
{
	uint32_t idx = 0;

	sc_adv(s);
	sc_ws(s);
	if (s->i < s->len && s->s[s->i] == ']') {
		sc_adv(s);
		return;
	}
	while (!s->bad && !s->stop && s->i < s->len) {
		if (idx == FL_SCENARIO_MAX_LIST) {
			s->p->problem = JPOS_TOO_LONG;
			s->p->pline = s->p->v[self].line;
			s->p->pcol = s->p->v[self].col;
			s->stop = true;
			return;
		}
		sc_value(s, self, false, idx++, 0, 0, depth + 1);
		sc_ws(s);
		if (s->i < s->len && s->s[s->i] == ',') {
			sc_adv(s);
			continue;
		}
		if (s->i < s->len && s->s[s->i] == ']') {
			sc_adv(s);
			return;
		}
		s->bad = true;
	}
}

/* Scans one value: an element of parent (index idx) or its member (key in s->key). */
static void sc_value(struct scan *s, uint32_t parent, bool member, uint32_t idx, int kl, int kc,
		     int depth)
{
	uint32_t self;
	char c;

	sc_ws(s);
	if (s->i >= s->len) {
		s->bad = true;
		return;
	}
	c = s->s[s->i];
	if ((c == '{' || c == '[') && depth >= FL_SCENARIO_MAX_DEPTH) {
		s->p->problem = JPOS_TOO_DEEP;
		s->p->pline = s->line;
		s->p->pcol = s->col;
		s->stop = true;
		return;
	}
	self = jpos_add(s, parent, member ? s->key : NULL, member ? s->klen : 0, idx, kl, kc);
	if (self == JPOS_NONE)
		return;
	if (c == '{') {
		s->p->v[self].kind = '{';
		sc_object(s, self, depth);
	} else if (c == '[') {
		s->p->v[self].kind = '[';
		sc_array(s, self, depth);
	} else if (c == '"') {
		sc_string(s, false);
	} else {
		while (s->i < s->len && !strchr(",]} \t\r\n", s->s[s->i]) && s->s[s->i])
			sc_adv(s);
	}
}

/*
 * Indexes every value of a JSON text; tolerant of invalid JSON (it stops at
 * the first syntax error, which jansson reports). Returns 0, or
 * JPOS_TOO_MANY / JPOS_TOO_DEEP / JPOS_TOO_LONG / JPOS_DUPLICATE with where in p->pline and
 * p->pcol (and, for a duplicate, the key and its first entry).
 */
int jpos_build(struct jpos *p, const char *text, size_t len)
{
	struct scan s = {.s = text, .len = len, .line = 1, .col = 1, .p = p};

	/* a key buffer from the start: an empty key is a key, not an element */
	s.key = malloc(s.kcap = 64);
	if (!s.key)
		return JPOS_OK; /* no index: jansson still checks the text */
	sc_value(&s, JPOS_NONE, false, 0, 0, 0, 0);
	free(s.key);
	return p->problem;
}

/* Frees the index. */
void jpos_free(struct jpos *p)
{
	free(p->v);
	free(p->keys);
	free(p->heads);
	free(p->dup_key);
	*p = (struct jpos){0};
}

/* Where entry e is (its key when at_key and it has one). */
static void jpos_at(const struct jpos *p, uint32_t e, bool at_key, int *line, int *col)
{
	*line = at_key ? p->v[e].key_line : p->v[e].line;
	*col = at_key ? p->v[e].key_col : p->v[e].col;
}

/*
 * Finds path ("/rules/0/action/sense"), or its nearest recorded ancestor; 1:1
 * when nothing matches. One hash look-up per component: a key holding '/'
 * is tried as one component with what follows when the shorter one is not there.
 */
void jpos_find(const struct jpos *p, const char *path, bool at_key, int *line, int *col)
{
	uint32_t cur = 0;
	const char *s = path;

	*line = 1;
	*col = 1;
	if (!p->n)
		return;
	while (*s == '/') {
		const char *seg = s + 1, *end = strchr(seg, '/');
		uint32_t next = JPOS_NONE;

		if (!end)
			end = seg + strlen(seg);
		if (p->v[cur].kind == '[') {
			char *e2;
			unsigned long idx = strtoul(seg, &e2, 10);

			if (e2 == end && end > seg && idx < UINT32_MAX)
				next = jpos_lookup(p, cur, NULL, 0, (uint32_t)idx);
		} else if (p->v[cur].kind == '{') {
			for (;;) {
				next = jpos_lookup(p, cur, seg, (uint32_t)(end - seg), 0);
				if (next != JPOS_NONE || !*end)
					break;
				end = strchr(end + 1, '/'); /* a key with a '/' in it */
				if (!end)
					end = seg + strlen(seg);
			}
		}
		if (next == JPOS_NONE) {
			jpos_at(p, cur, false, line, col);
			return;
		}
		cur = next;
		s = end;
	}
	jpos_at(p, cur, at_key, line, col);
}

/* Hash of a NUL-terminated string. */
static uint64_t str_hash(const char *s)
{
	uint64_t h = hash_seed();

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return fl_mix64(h);
}

/* The slot of s in set (its own, or the empty one where it would go). */
static size_t strset_slot(const struct strset *set, const char *s)
{
	size_t i = str_hash(s) & (set->cap - 1);

	while (set->keys[i] && strcmp(set->keys[i], s))
		i = (i + 1) & (set->cap - 1);
	return i;
}

/* Adds s (not copied) with value val; returns the value s already had, or SIZE_MAX. */
size_t strset_add(struct strset *set, const char *s, size_t val)
{
	size_t i;

	if ((set->n + 1) * 2 > set->cap) {
		struct strset big = {.cap = set->cap ? set->cap * 2 : 64};

		big.keys = calloc(big.cap, sizeof(*big.keys));
		big.vals = calloc(big.cap, sizeof(*big.vals));
		if (!big.keys || !big.vals) {
			free(big.keys);
			free(big.vals);
			return SIZE_MAX;
		}
		for (size_t k = 0; k < set->cap; k++)
			if (set->keys[k]) {
				size_t j = strset_slot(&big, set->keys[k]);

				big.keys[j] = set->keys[k];
				big.vals[j] = set->vals[k];
			}
		big.n = set->n;
		strset_free(set);
		*set = big;
	}
	i = strset_slot(set, s);
	if (set->keys[i])
		return set->vals[i];
	set->keys[i] = s;
	set->vals[i] = val;
	set->n++;
	return SIZE_MAX;
}

/* The value of s, or SIZE_MAX. */
size_t strset_get(const struct strset *set, const char *s)
{
	size_t i;

	if (!set->cap)
		return SIZE_MAX;
	i = strset_slot(set, s);
	return set->keys[i] ? set->vals[i] : SIZE_MAX;
}

/* Frees the set's tables (not the strings). */
void strset_free(struct strset *set)
{
	free(set->keys);
	free(set->vals);
	*set = (struct strset){0};
}

/* strdup that survives NULL. */
char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}
