/* SPDX-License-Identifier: MIT */
/*
 * scenario_internal.h - private declarations shared by the files of scenario/.
 *
 *   diag.c             fl_diags, and the position index of a JSON text (jpos_*)
 *   sense_names.c      SPC-4 sense key and ASC/ASCQ names (SPC-4 r37 4.5.6, Annex D)
 *   scenario.c         top level, LUNs, states: JSON -> struct fl_scenario
 *   scenario_values.c  value parsers and diagnostics at a JSON path
 *   scenario_rules.c   rules and actions
 *   scenario_tmf.c     tmf, transport, transitions
 *   scenario_check.c   checks of meaning over the whole document
 *   actions.c          the registry of fault actions; actions/NAME.c one action each
 */
#ifndef FL_SCENARIO_INTERNAL_H
#define FL_SCENARIO_INTERNAL_H

#include "fl_scenario.h"

#include <jansson.h>

/* ---- diagnostics and positions (diag.c) ---- */

/*
 * Position of one JSON value (and of its key, when it is an object member).
 * Paths are not stored: an entry names its parent and its key (or index), so
 * the index takes a fixed size per value plus the keys once, whatever the
 * nesting.
 */
#define JPOS_NONE UINT32_MAX
#define JPOS_ELEM UINT32_MAX /* klen of an array element: key is its index */
struct jpos_entry {
	uint32_t parent; /* JPOS_NONE for the root */
	uint32_t key;	 /* offset of the key in jpos.keys, or the element's index */
	uint32_t klen;	 /* key length, or JPOS_ELEM */
	uint32_t next;	 /* hash chain */
	int key_line, key_col;
	int line, col;
	char kind; /* '{' object, '[' array, 0 anything else */
};
/* What jpos_build stopped at (besides a syntax error, left to jansson). */
enum { JPOS_OK, JPOS_TOO_MANY, JPOS_TOO_DEEP, JPOS_TOO_LONG, JPOS_DUPLICATE };
struct jpos {
	struct jpos_entry *v;
	size_t n, cap;
	char *keys; /* every member key, unescaped, back to back */
	size_t nkeys, kcap;
	uint32_t *heads; /* hash buckets of (parent, key or index) */
	size_t hcap;
	int problem;	 /* JPOS_* */
	int pline, pcol; /* where */
	uint32_t other;	 /* JPOS_DUPLICATE: the entry of the key's first occurrence */
	char *dup_key;
};
/*
 * Indexes every value of a JSON text in one pass; tolerant of invalid JSON.
 * Stops at FL_SCENARIO_MAX_VALUES values, at nesting deeper than
 * FL_SCENARIO_MAX_DEPTH, at a list longer than FL_SCENARIO_MAX_LIST and at a
 * key given twice in one object, and returns
 * which (JPOS_*), or JPOS_OK.
 */
int jpos_build(struct jpos *p, const char *text, size_t len);
void jpos_free(struct jpos *p);
/* Finds the position of path (at its key when at_key and it has one). */
void jpos_find(const struct jpos *p, const char *path, bool at_key, int *line, int *col);

/*
 * A set of strings (rule ids, ...) with their index, hashed: building it and
 * looking a string up cost O(length) each.
 */
struct strset {
	const char **keys;
	size_t *vals;
	size_t cap, n;
};
/* Adds s (not copied) with value val; returns the value s already had, or SIZE_MAX. */
size_t strset_add(struct strset *set, const char *s, size_t val);
/* The value of s, or SIZE_MAX. */
size_t strset_get(const struct strset *set, const char *s);
void strset_free(struct strset *set);

/* Appends FILE:LINE:COL: message to d. */
void diag_add(struct fl_diags *d, const char *file, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Parser context shared by scenario.c and scenario_rules.c. */
struct pctx {
	const char *file;
	struct fl_diags *d;
	struct jpos pos;
	int nerr;
	struct fl_scenario *sc;
	unsigned frontends; /* the front ends the scenario is checked for */
	json_t *root;
};

/* Builds BASE/KEY into the char array buf and yields buf. */
#define SUBP(buf, base, key) (snprintf(buf, sizeof(buf), "%s/%s", base, key), buf)

/* Reports a problem at path (its key when at_key). */
void perr(struct pctx *c, const char *path, bool at_key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Reports a warning at path ("warning: ..."): the scenario stays valid. */
void pwarn(struct pctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Compact JSON of v, at most ~60 characters, for quoting in messages (static buffer per call). */
const char *pquote(const json_t *v, char *buf, size_t size);
/*
 * The candidate closest to word (edit distance), if close enough to be a typo,
 * else NULL. cands: n entries (or up to a NULL) `stride` bytes apart.
 */
const char *closest_word(const char *word, const char *const *cands, size_t n, size_t stride);
/* Reports every key of obj not in allowed (NULL-terminated); returns their count. */
int pkeys(struct pctx *c, const char *path, json_t *obj, const char *what,
	  const char *const *allowed);
/* Parses a non-negative integer: JSON integer or "0x.." / decimal string. */
bool pnum(struct pctx *c, const char *path, json_t *v, uint64_t max, uint64_t *out);
bool pbool(struct pctx *c, const char *path, json_t *v, bool *out);
bool pdouble(struct pctx *c, const char *path, json_t *v, double lo, double hi, double *out);
/* Parses a size: bytes, or a string with B/KiB/MiB/GiB/TiB/KB/MB/GB/TB/blocks. */
bool psize(struct pctx *c, const char *path, json_t *v, uint64_t *out, bool *in_blocks);
/* Parses a state name (reports unknown names); returns the index or -1. */
int pstate(struct pctx *c, const char *path, json_t *v);
/* Parses "states": a list of names -> mask. */
uint64_t pstates(struct pctx *c, const char *path, json_t *v);
/* Parses a sense "KEY/ASC_NAME", "KEY/0xAA/0xQQ" or {key, asc, ascq}. */
bool psense(struct pctx *c, const char *path, json_t *v, uint8_t *key, uint8_t *asc, uint8_t *ascq);
/* Parses "AA/QQ" (hex) or an ASC/ASCQ name. */
bool pascq(struct pctx *c, const char *path, json_t *v, uint8_t *asc, uint8_t *ascq);
/* Parses an ALUA state name ("active_optimized", ...). */
bool palua(struct pctx *c, const char *path, json_t *v, enum fl_alua_state *out);
char *xstrdup(const char *s);

/* Copies a string value (at most max characters when max) into *out. */
bool pstr(struct pctx *c, const char *path, json_t *v, size_t max, char **out);
/* Parses nth / every / after / times / probability of a match object. */
void parse_count(struct pctx *c, const char *path, json_t *m, struct sc_count *k);
/* Parses an opcode or a list of opcodes into a 256-bit map. */
bool parse_opcodes(struct pctx *c, const char *path, json_t *v, uint8_t map[32]);
/* Parses a command class or a list of classes into a mask. */
unsigned parse_classes(struct pctx *c, const char *path, json_t *v);
void parse_rules(struct pctx *c, json_t *rules);
void parse_tmf(struct pctx *c, json_t *tmf);
void parse_transport(struct pctx *c, json_t *tr);
void parse_transitions(struct pctx *c, json_t *tr);
void check_meaning(struct pctx *c);
void parse_check(struct pctx *c, json_t *check);
void check_free(struct fl_check *ck);
void scenario_free_rules(struct fl_scenario *sc);
/* scenario_ports.c */
void parse_ports(struct pctx *c, json_t *ports, json_t *groups);
void scenario_free_ports(struct fl_scenario *sc);
void parse_match_port(struct pctx *c, const char *path, json_t *v, bool group, uint16_t *out);
void scenario_lun_ports(const struct fl_scenario *sc, struct fl_lun_config *cfg);
/* actions.c: parse and trace helpers of the action files (actions/NAME.c) */
void action_flag(struct pctx *c, const char *path, json_t *v, const char *key);
void action_overtake_ua(struct pctx *c, const char *path, json_t *v, struct sc_action *a);
void action_trace_ascq(json_t *o, const char *name, uint8_t asc, uint8_t ascq);

#endif
