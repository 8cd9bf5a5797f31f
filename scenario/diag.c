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

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Appends FILE:LINE:COL: message to d. */
void diag_add(struct fl_diags *d, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

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
	d->n = d->cap = 0;
}

/* Scanner state of jpos_build. */
struct scan {
	const char *s;
	size_t len, i;
	int line, col;
	bool bad;
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
	while (s->i < s->len && strchr(" \t\r\n", s->s[s->i]) && s->s[s->i])
		sc_adv(s);
}

/* Records a position under path. */
static void jpos_add(struct jpos *p, const char *path, int kl, int kc, int l, int c)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct jpos_entry *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n].path = xstrdup(path);
	p->v[p->n].key_line = kl;
	p->v[p->n].key_col = kc;
	p->v[p->n].line = l;
	p->v[p->n].col = c;
	p->n++;
}

/* Scans a string; returns it unescaped (simple escapes only) in a malloc'ed buffer. */
static char *sc_string(struct scan *s)
{
	size_t cap = 16, n = 0;
	char *out = malloc(cap);

	if (!out) {
		s->bad = true;
		return NULL;
	}
	sc_adv(s); /* opening quote */
	while (s->i < s->len && s->s[s->i] != '"') {
		char c = s->s[s->i];

		if (c == '\\' && s->i + 1 < s->len) {
			sc_adv(s);
			c = s->s[s->i];
			if (c == 'u') {
				for (int k = 0; k < 4 && s->i + 1 < s->len; k++)
					sc_adv(s);
				c = '?';
			} else if (c == 'n') {
				c = '\n';
			} else if (c == 't') {
				c = '\t';
			}
		}
		if (n + 2 > cap) {
			char *o = realloc(out, cap *= 2);

			if (!o) {
				free(out);
				s->bad = true;
				return NULL;
			}
			out = o;
		}
		out[n++] = c;
		sc_adv(s);
	}
	if (s->i >= s->len) {
		s->bad = true;
		free(out);
		return NULL;
	}
	sc_adv(s); /* closing quote */
	out[n] = 0;
	return out;
}

static void sc_value(struct scan *s, const char *path, int kl, int kc, int depth);

/* Scans an object whose members live under path. */
static void sc_object(struct scan *s, const char *path, int depth)
{
	sc_adv(s);
	sc_ws(s);
	if (s->i < s->len && s->s[s->i] == '}') {
		sc_adv(s);
		return;
	}
	while (!s->bad && s->i < s->len) {
		int kl, kc;
		char *key, *sub;

		sc_ws(s);
		if (s->i >= s->len || s->s[s->i] != '"') {
			s->bad = true;
			return;
		}
		kl = s->line;
		kc = s->col;
		key = sc_string(s);
		if (!key)
			return;
		if (asprintf(&sub, "%s/%s", path, key) < 0) {
			free(key);
			s->bad = true;
			return;
		}
		free(key);
		sc_ws(s);
		if (s->i >= s->len || s->s[s->i] != ':') {
			free(sub);
			s->bad = true;
			return;
		}
		sc_adv(s);
		sc_value(s, sub, kl, kc, depth + 1);
		free(sub);
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

/* Scans an array whose elements live under path/N. */
static void sc_array(struct scan *s, const char *path, int depth)
{
	size_t idx = 0;

	sc_adv(s);
	sc_ws(s);
	if (s->i < s->len && s->s[s->i] == ']') {
		sc_adv(s);
		return;
	}
	while (!s->bad && s->i < s->len) {
		char *sub;

		if (asprintf(&sub, "%s/%zu", path, idx++) < 0) {
			s->bad = true;
			return;
		}
		sc_value(s, sub, 0, 0, depth + 1);
		free(sub);
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

/* Scans one value, recording its position (and its key's) under path. */
static void sc_value(struct scan *s, const char *path, int kl, int kc, int depth)
{
	char c;

	sc_ws(s);
	if (s->i >= s->len || depth > 64) {
		s->bad = true;
		return;
	}
	jpos_add(s->p, path, kl ? kl : s->line, kl ? kc : s->col, s->line, s->col);
	c = s->s[s->i];
	if (c == '{') {
		sc_object(s, path, depth);
	} else if (c == '[') {
		sc_array(s, path, depth);
	} else if (c == '"') {
		free(sc_string(s));
	} else {
		while (s->i < s->len && !strchr(",]} \t\r\n", s->s[s->i]) && s->s[s->i])
			sc_adv(s);
	}
}

/* Indexes every value of a JSON text by path; tolerant of invalid JSON. */
void jpos_build(struct jpos *p, const char *text, size_t len)
{
	struct scan s = {.s = text, .len = len, .line = 1, .col = 1, .p = p};

	sc_value(&s, "", 0, 0, 0);
}

/* Frees the index. */
void jpos_free(struct jpos *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].path);
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
}

/* Finds path, or its nearest recorded ancestor; 1:1 when nothing matches. */
void jpos_find(const struct jpos *p, const char *path, bool at_key, int *line, int *col)
{
	size_t len = strlen(path);

	*line = 1;
	*col = 1;
	for (;;) {
		for (size_t i = 0; i < p->n; i++) {
			if (strlen(p->v[i].path) == len && !strncmp(p->v[i].path, path, len)) {
				*line = at_key ? p->v[i].key_line : p->v[i].line;
				*col = at_key ? p->v[i].key_col : p->v[i].col;
				return;
			}
		}
		while (len > 0 && path[len - 1] != '/')
			len--;
		if (len == 0)
			return;
		len--; /* drop the '/' and look the parent up */
		at_key = false;
	}
}

/* strdup that survives NULL. */
char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}
