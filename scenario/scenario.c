/* SPDX-License-Identifier: MIT */
/*
 * scenario.c - loading a scenario (docs/scenario-format.md, version 1):
 * JSON text -> validated, immutable struct fl_scenario.
 *
 * This file holds the top level, the LUN personalities, the state list and
 * the "check" section; scenario_values.c the value parsers, scenario_rules.c
 * the rules, scenario_tmf.c task management, transport and transitions, and
 * scenario_check.c the checks that need the whole document.
 * Every problem is reported (FILE:LINE:COL: message, quoting the bad value)
 * and loading goes on, so one run lists all of them; a scenario with any
 * problem is freed whole and never returned.
 */
#include "scenario_internal.h"

#include "fl_byteorder.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Parses lun.thin. */
static void parse_thin(struct pctx *c, const char *path, json_t *v, struct sc_lun *l)
{
	static const char *const keys[] = {"pool", "soft_threshold", "lbprz", NULL};
	char sub[512], q[80];
	json_t *e;
	uint64_t n;
	bool blk;
	uint32_t bs = l->cfg.block_size ? l->cfg.block_size : 512;

	if (json_is_boolean(v)) {
		l->cfg.thin = json_is_true(v);
		return;
	}
	if (!json_is_object(v)) {
		perr(c, path, false, "\"thin\": expected an object or true/false, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "thin", keys);
	l->cfg.thin = true;
	snprintf(sub, sizeof(sub), "%s/pool", path);
	if ((e = json_object_get(v, "pool")) && psize(c, sub, e, &n, &blk))
		l->cfg.pool_blocks = blk ? n : n / bs;
	snprintf(sub, sizeof(sub), "%s/soft_threshold", path);
	if ((e = json_object_get(v, "soft_threshold")) && psize(c, sub, e, &n, &blk))
		l->cfg.soft_threshold = blk ? n : n / bs;
	snprintf(sub, sizeof(sub), "%s/lbprz", path);
	if ((e = json_object_get(v, "lbprz")))
		pbool(c, sub, e, &l->cfg.lbprz);
	if (l->cfg.pool_blocks && l->cfg.soft_threshold > l->cfg.pool_blocks) {
		snprintf(sub, sizeof(sub), "%s/soft_threshold", path);
		perr(c, sub, false, "\"soft_threshold\" %s is larger than the pool",
		     pquote(json_object_get(v, "soft_threshold"), q, sizeof(q)));
	}
}

/* Parses lun.alua. */
static void parse_alua(struct pctx *c, const char *path, json_t *v, struct sc_lun *l)
{
	static const char *const keys[] = {
	    "group", "state", "implicit", "explicit", "transition_time_s", NULL};
	char sub[512], q[80];
	json_t *e;
	uint64_t n;

	if (!json_is_object(v)) {
		perr(c, path, false, "\"alua\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "alua", keys);
	l->cfg.alua_implicit = true;
	snprintf(sub, sizeof(sub), "%s/group", path);
	if ((e = json_object_get(v, "group")) && pnum(c, sub, e, 0xffff, &n)) {
		bool known = !c->sc->nports;

		for (size_t i = 0; i < c->sc->ntpgs; i++)
			known |= c->sc->tpgs[i].id == n;
		if (n == 0)
			perr(c, sub, false,
			     "\"group\": target port groups are numbered from 1, "
			     "got 0");
		else if (!known)
			perr(c, sub, false, "\"group\": %s is not a group of \"ports\"",
			     pquote(e, q, sizeof(q)));
		l->cfg.tpg_id = (uint16_t)n;
	}
	snprintf(sub, sizeof(sub), "%s/state", path);
	if ((e = json_object_get(v, "state")) && c->sc->nports)
		perr(c, sub, true,
		     "\"state\": with \"ports\", each group's state is given in "
		     "\"port_groups\"");
	else if (e)
		palua(c, sub, e, &l->cfg.alua_state);
	snprintf(sub, sizeof(sub), "%s/implicit", path);
	if ((e = json_object_get(v, "implicit")))
		pbool(c, sub, e, &l->cfg.alua_implicit);
	snprintf(sub, sizeof(sub), "%s/explicit", path);
	if ((e = json_object_get(v, "explicit")))
		pbool(c, sub, e, &l->cfg.alua_explicit);
	snprintf(sub, sizeof(sub), "%s/transition_time_s", path);
	if ((e = json_object_get(v, "transition_time_s")) && pnum(c, sub, e, 255, &n))
		l->cfg.alua_transition_s = (uint8_t)n;
}

/* Parses lun.personality: a name, or {"name": NAME, options...}. */
static void parse_personality(struct pctx *c, const char *path, json_t *v, struct sc_lun *l)
{
	static const char *const keys[] = {"name",	  "owner",	  "preferred",
					   "avt",	  "rebalance_ms", "quiesce_ms",
					   "transfer_ua", "max_luns",	  NULL};
	struct fl_vendor_config *p = &l->cfg.personality;
	const char *const *names = fl_vendor_names();
	char sub[600], q[80], list[256] = "";
	json_t *name = json_is_object(v) ? json_object_get(v, "name") : v, *e;
	uint64_t n;

	if (!json_is_object(v) && !json_is_string(v)) {
		perr(c, path, false,
		     "\"personality\": expected a name or {\"name\": NAME, ...}, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	if (json_is_object(v)) {
		pkeys(c, path, v, "personality", keys);
		if (!name) {
			perr(c, path, false, "\"personality\" needs \"name\"");
			return;
		}
		snprintf(sub, sizeof(sub), "%s/name", path);
	} else {
		snprintf(sub, sizeof(sub), "%s", path);
	}
	for (size_t i = 0; json_is_string(name) && names[i]; i++)
		if (!strcmp(names[i], json_string_value(name)))
			p->name = names[i];
	if (!p->name) {
		for (size_t k = 0; names[k]; k++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"",
				 k ? ", " : "", names[k]);
		perr(c, sub, false, "unknown personality %s (known: %s)",
		     pquote(name, q, sizeof(q)), list);
		return;
	}
	if (!json_is_object(v))
		return;
	if ((e = json_object_get(v, "owner")))
		parse_match_port(c, SUBP(sub, path, "owner"), e, true, &p->owner_tpg);
	if ((e = json_object_get(v, "preferred")))
		parse_match_port(c, SUBP(sub, path, "preferred"), e, true, &p->preferred_tpg);
	if ((e = json_object_get(v, "avt")))
		pbool(c, SUBP(sub, path, "avt"), e, &p->avt);
	if ((e = json_object_get(v, "transfer_ua")))
		pbool(c, SUBP(sub, path, "transfer_ua"), e, &p->transfer_ua);
	if ((e = json_object_get(v, "rebalance_ms")) &&
	    pnum(c, SUBP(sub, path, "rebalance_ms"), e, 3600000, &n))
		p->rebalance_ms = (uint32_t)n;
	if ((e = json_object_get(v, "quiesce_ms"))) {
		SUBP(sub, path, "quiesce_ms");
		if (json_is_string(e) && !strcmp(json_string_value(e), "forever"))
			p->quiesce_ms = UINT32_MAX;
		else if (json_is_string(e))
			perr(c, sub, false, "\"quiesce_ms\": expected ms or \"forever\", got %s",
			     pquote(e, q, sizeof(q)));
		else if (pnum(c, sub, e, 3600000, &n))
			p->quiesce_ms = (uint32_t)n;
	}
	if ((e = json_object_get(v, "max_luns")) &&
	    pnum(c, SUBP(sub, path, "max_luns"), e, 256, &n))
		p->max_luns = (uint16_t)n;
}

/*
 * True when a scenario's store path cannot reach outside the scenario's
 * directory: relative, non-empty, and without a ".." component (the store
 * opens it there without following symbolic links, target/store_file.c). A
 * scenario is data that may come from anyone; which file on the host backs a
 * LUN is the operator's choice.
 */
static bool store_path_confined(const char *p)
{
	if (!p || !*p || *p == '/')
		return false;
	for (const char *s = p; *s;) {
		size_t n = strcspn(s, "/");

		if (n == 2 && s[0] == '.' && s[1] == '.')
			return false;
		s += n;
		s += strspn(s, "/");
	}
	return true;
}

/* Parses lun.store. */
static void parse_store(struct pctx *c, const char *path, json_t *v, struct sc_lun *l)
{
	static const char *const keys[] = {"kind", "path", NULL};
	char sub[512], q[80];
	json_t *k = json_is_object(v) ? json_object_get(v, "kind") : NULL;

	if (!json_is_object(v)) {
		perr(c, path, false, "\"store\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "store", keys);
	snprintf(sub, sizeof(sub), "%s/kind", path);
	if (!k || (json_is_string(k) && !strcmp(json_string_value(k), "memory"))) {
		l->cfg.store = FL_STORE_MEMORY;
	} else if (json_is_string(k) && !strcmp(json_string_value(k), "null")) {
		l->cfg.store = FL_STORE_NULL;
	} else if (json_is_string(k) && !strcmp(json_string_value(k), "file")) {
		l->cfg.store = FL_STORE_FILE;
		snprintf(sub, sizeof(sub), "%s/path", path);
		if (!json_object_get(v, "path"))
			perr(c, path, false, "a file store needs \"path\"");
		else if (pstr(c, sub, json_object_get(v, "path"), 0, &l->store_path) &&
			 !store_path_confined(l->store_path))
			perr(c, sub, false,
			     "file store path %s must be relative and stay below the scenario's "
			     "directory (no leading '/', no '..'); an operator names any "
			     "other file with `serve --store file:PATH`",
			     pquote(json_object_get(v, "path"), q, sizeof(q)));
	} else {
		perr(c, sub, false,
		     "unknown store kind %s (expected \"memory\", \"null\" or \"file\")",
		     pquote(k, q, sizeof(q)));
	}
}

/* Sets a LUN's defaults: index idx, 512-byte blocks, the first port's group, a memory store. */
static void lun_defaults(struct pctx *c, size_t idx, struct sc_lun *l)
{
	l->id = (uint16_t)idx;
	l->cfg.block_size = 512;
	l->cfg.write_cache = true;
	l->cfg.tpg_id = c->sc->nports ? c->sc->ports[0].tpg_id : 1; /* the first port's */
	l->cfg.alua_state = FL_ALUA_ACTIVE_OPTIMIZED;
	l->cfg.store = FL_STORE_MEMORY;
	l->vendor = xstrdup("FAULTLUN");
	l->product = xstrdup("VIRTUAL-DISK");
	l->revision = xstrdup("0001");
}

/* Parses a LUN's "block_size" and "size" into its block size and number of blocks. */
static void lun_geometry(struct pctx *c, const char *path, json_t *v, struct sc_lun *l)
{
	char sub[512], q[80];
	json_t *e;
	uint64_t n, size = 1ull << 30;
	bool blk = false;

	if ((e = json_object_get(v, "block_size")) &&
	    pnum(c, SUBP(sub, path, "block_size"), e, 65536, &n)) {
		if (n < 512 || (n & (n - 1)))
			perr(c, sub, false,
			     "\"block_size\": %s is not a power of two from 512 "
			     "to 65536",
			     pquote(e, q, sizeof(q)));
		else
			l->cfg.block_size = (uint32_t)n;
	}
	if ((e = json_object_get(v, "size")) && psize(c, SUBP(sub, path, "size"), e, &size, &blk)) {
		if (!blk && size % l->cfg.block_size)
			perr(c, sub, false,
			     "\"size\": %s is not a multiple of the block size "
			     "(%u)",
			     pquote(e, q, sizeof(q)), l->cfg.block_size);
		if ((blk ? size : size / l->cfg.block_size) == 0)
			perr(c, sub, false, "\"size\": %s holds no block", pquote(e, q, sizeof(q)));
	}
	l->cfg.num_blocks = blk ? size : size / l->cfg.block_size;
}

/* Takes the personality's vendor, product and revision where the LUN object v sets none. */
static void lun_personality_identity(json_t *v, struct sc_lun *l)
{
	const char *pv, *pp, *pr;

	if (!l->cfg.personality.name)
		return;
	fl_vendor_identity(l->cfg.personality.name, &pv, &pp, &pr);
	if (!json_object_get(v, "vendor")) {
		free(l->vendor);
		l->vendor = xstrdup(pv);
	}
	if (!json_object_get(v, "product")) {
		free(l->product);
		l->product = xstrdup(pp);
	}
	if (!json_object_get(v, "revision")) {
		free(l->revision);
		l->revision = xstrdup(pr);
	}
}

/* Hex digits s (blanks and colons between bytes allowed) into out; their count, or -1. */
static long hex_bytes(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (;;) {
		while (*s == ' ' || *s == ':')
			s++;
		if (!*s)
			return (long)n;
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) || n == cap)
			return -1;
		char two[3] = {s[0], s[1], 0};
		out[n++] = (uint8_t)strtoul(two, NULL, 16);
		s += 2;
	}
}

/*
 * A LUN's "naa": a number (8 bytes: NAA 5, or its nibble given), or "0x"
 * and 32 hex digits, a 16-byte IEEE Registered Extended designator (NAA 6).
 */
static void parse_naa(struct pctx *c, const char *path, json_t *e, struct fl_lun_config *cfg)
{
	const char *t = json_is_string(e) ? json_string_value(e) : NULL;
	uint8_t b[16];
	uint64_t n;

	if (t && (t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) && strlen(t) == 34) {
		if (hex_bytes(t + 2, b, sizeof(b)) != 16 || (b[0] >> 4) != 6) {
			perr(
			    c, path, false,
			    "a 16-byte \"naa\" is \"0x\" and 32 hex digits starting with 6 (NAA 6, "
			    "IEEE Registered Extended), got %s",
			    t);
			return;
		}
		cfg->naa = fl_get_be64(b);
		cfg->naa_ext = fl_get_be64(b + 8);
		cfg->naa16 = true;
	} else if (pnum(c, path, e, UINT64_MAX, &n)) {
		cfg->naa = n;
	}
}

/*
 * Parses a LUN's "vpd": {"0x86": "HEX", ...}, VPD pages the LUN answers as
 * given (HEX: the page's bytes after its 4-byte header), kept whole and in
 * ascending order in l->vpd (cfg.vpd_raw).
 */
static void parse_vpd(struct pctx *c, const char *path, json_t *v, struct sc_lun *l)
{
	uint8_t page[4 + FL_VPD_RAW_MAX_LEN];
	const char *key;
	char q[80];
	json_t *e;

	if (!json_is_object(v) || json_object_size(v) > FL_VPD_RAW_MAX) {
		perr(c, path, false,
		     "\"vpd\": expected an object of at most %d pages (\"0x86\": \"hex bytes\"), "
		     "got %s",
		     FL_VPD_RAW_MAX, pquote(v, q, sizeof(q)));
		return;
	}
	l->vpd = malloc(json_object_size(v) * sizeof(page));
	if (!l->vpd)
		return;
	for (unsigned code = 1; code < 256; code++) {
		char name[8];
		snprintf(name, sizeof(name), "0x%02x", code);
		json_object_foreach(v, key, e)
		{
			char *endp;
			unsigned long k = strtoul(key, &endp, 16);
			if (*endp || strncasecmp(key, "0x", 2) || strlen(key) != 4 || k != code)
				continue;
			long n = json_is_string(e)
				     ? hex_bytes(json_string_value(e), page + 4, FL_VPD_RAW_MAX_LEN)
				     : -1;
			if (fl_vpd_own_page((uint8_t)code))
				perr(c, path, false,
				     "\"vpd\": page %s is one the LUN builds itself (use serial, "
				     "naa, "
				     "alua, max_transfer_blocks, thin)",
				     name);
			else if (n < 0)
				perr(c, path, false,
				     "\"vpd\": page %s: expected at most %d bytes in hex, got %s",
				     name, FL_VPD_RAW_MAX_LEN, pquote(e, q, sizeof(q)));
			else {
				page[0] = 0;
				page[1] = (uint8_t)code;
				fl_put_be16(page + 2, (uint16_t)n);
				memcpy(l->vpd + l->cfg.vpd_raw_len, page, 4 + (size_t)n);
				l->cfg.vpd_raw_len += 4 + (uint32_t)n;
			}
		}
	}
	json_object_foreach(v, key, e)
	{
		char *endp;
		unsigned long k = strtoul(key, &endp, 16);
		if (*endp || strncasecmp(key, "0x", 2) || strlen(key) != 4 || k == 0 || k > 255)
			perr(
			    c, path, false,
			    "\"vpd\": \"%s\": a page code is written 0x01 to 0xff (two hex digits)",
			    key);
	}
	l->cfg.vpd_raw = l->vpd;
}

/* Parses one entry of "luns". */
static void parse_lun(struct pctx *c, const char *path, json_t *v, size_t idx, struct sc_lun *l)
{
	static const char *const keys[] = {
	    "lun",	 "size",	"block_size", "vendor",	     "product",
	    "revision",	 "serial",	"naa",	      "write_cache", "d_sense",
	    "removable", "thin",	"alua",	      "store",	     "max_transfer_blocks",
	    "read_only", "personality", "vpd",	      "prefetch",    NULL};
	char sub[512], q[80];
	json_t *e;
	uint64_t n;

	lun_defaults(c, idx, l);
	if (!json_is_object(v)) {
		perr(c, path, false, "a LUN must be an object, got %s", pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "lun", keys);
#define SUB(k) (snprintf(sub, sizeof(sub), "%s/%s", path, k), sub)
	if ((e = json_object_get(v, "lun")) && pnum(c, SUB("lun"), e, FL_MAX_LUNS - 1, &n))
		l->id = (uint16_t)n;
	lun_geometry(c, path, v, l);
	if ((e = json_object_get(v, "vendor")))
		pstr(c, SUB("vendor"), e, 8, &l->vendor);
	if ((e = json_object_get(v, "product")))
		pstr(c, SUB("product"), e, 16, &l->product);
	if ((e = json_object_get(v, "revision")))
		pstr(c, SUB("revision"), e, 4, &l->revision);
	if ((e = json_object_get(v, "serial")))
		pstr(c, SUB("serial"), e, 64, &l->serial);
	if ((e = json_object_get(v, "naa")))
		parse_naa(c, SUB("naa"), e, &l->cfg);
	if ((e = json_object_get(v, "write_cache")))
		pbool(c, SUB("write_cache"), e, &l->cfg.write_cache);
	if ((e = json_object_get(v, "d_sense")))
		pbool(c, SUB("d_sense"), e, &l->cfg.d_sense);
	if ((e = json_object_get(v, "removable")))
		pbool(c, SUB("removable"), e, &l->cfg.removable);
	if ((e = json_object_get(v, "read_only")))
		pbool(c, SUB("read_only"), e, &l->cfg.read_only);
	if ((e = json_object_get(v, "max_transfer_blocks")) &&
	    pnum(c, SUB("max_transfer_blocks"), e, UINT32_MAX, &n))
		l->cfg.max_xfer_blocks = (uint32_t)n;
	if ((e = json_object_get(v, "thin")))
		parse_thin(c, SUB("thin"), e, l);
	if ((e = json_object_get(v, "alua")))
		parse_alua(c, SUB("alua"), e, l);
	if ((e = json_object_get(v, "store")))
		parse_store(c, SUB("store"), e, l);
	if ((e = json_object_get(v, "vpd")))
		parse_vpd(c, SUB("vpd"), e, l);
	if ((e = json_object_get(v, "prefetch"))) {
		if (json_is_string(e) && !strcmp(json_string_value(e), "good"))
			l->cfg.prefetch_good = true;
		else if (!json_is_string(e) || strcmp(json_string_value(e), "condition_met"))
			perr(c, SUB("prefetch"), false,
			     "\"prefetch\": expected \"condition_met\" or \"good\", got %s",
			     pquote(e, q, sizeof(q)));
	}
	if ((e = json_object_get(v, "personality"))) {
		parse_personality(c, SUB("personality"), e, l);
		lun_personality_identity(v, l);
	}
#undef SUB
	if (l->cfg.thin && l->cfg.pool_blocks > l->cfg.num_blocks)
		l->cfg.pool_blocks = l->cfg.num_blocks;
}

/*
 * Reports a LUN the target would refuse to build (fl_lun_config_problem, the
 * check fl_lun_create makes), so that lint accepts only what serve can build.
 */
static void check_lun_buildable(struct pctx *c, size_t i)
{
	struct fl_lun_config cfg;
	const char *problem;
	char path[64], q[80];
	json_t *size;
	uint16_t id;

	if (fl_scenario_lun(c->sc, (unsigned)i, &id, &cfg) ||
	    !(problem = fl_lun_config_problem(&cfg)))
		return;
	snprintf(path, sizeof(path), "/luns/%zu/size", i);
	if (json_is_array(json_object_get(c->root, "luns")) &&
	    (size = json_object_get(json_array_get(json_object_get(c->root, "luns"), i), "size")))
		perr(c, path, false, "\"size\": %s: LUN %u cannot be built: %s",
		     pquote(size, q, sizeof(q)), id, problem);
	else
		perr(c, path, false, "LUN %u cannot be built: %s", id, problem);
}

/* Parses "luns" (default: one LUN 0 with the defaults). */
static void parse_luns(struct pctx *c, json_t *v)
{
	struct fl_scenario *sc = c->sc;
	char q[80];
	size_t i;
	json_t *e;

	if (!v) {
		json_t *empty = json_object();

		sc->luns = calloc(1, sizeof(*sc->luns));
		if (sc->luns && empty) {
			sc->nluns = 1;
			parse_lun(c, "/luns", empty, 0, &sc->luns[0]);
		}
		json_decref(empty);
		return;
	}
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > FL_MAX_LUNS) {
		perr(c, "/luns", false, "\"luns\": expected a list of 1 to %d LUNs, got %s",
		     FL_MAX_LUNS, pquote(v, q, sizeof(q)));
		return;
	}
	sc->luns = calloc(json_array_size(v), sizeof(*sc->luns));
	if (!sc->luns)
		return;
	sc->nluns = json_array_size(v);
	json_array_foreach(v, i, e)
	{
		char sub[64];

		int nerr = c->nerr;

		snprintf(sub, sizeof(sub), "/luns/%zu", i);
		parse_lun(c, sub, e, i, &sc->luns[i]);
		if (c->nerr == nerr)
			check_lun_buildable(c, i);
		for (size_t j = 0; j < i; j++)
			if (sc->luns[j].id == sc->luns[i].id) {
				snprintf(sub, sizeof(sub), "/luns/%zu/lun", i);
				perr(c, sub, false, "LUN %u is defined twice (also entry %zu)",
				     sc->luns[i].id, j);
			}
	}
}

/* Parses "states". */
static void parse_states(struct pctx *c, json_t *v)
{
	struct fl_scenario *sc = c->sc;
	char q[80];
	size_t i;
	json_t *e;

	if (!v) {
		sc->states = calloc(1, sizeof(char *));
		if (sc->states) {
			sc->states[0] = xstrdup("default");
			sc->nstates = 1;
		}
		return;
	}
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > SC_MAX_STATES) {
		perr(c, "/states", false,
		     "\"states\": expected a list of 1 to %d state names, got %s", SC_MAX_STATES,
		     pquote(v, q, sizeof(q)));
		sc->states = calloc(1, sizeof(char *));
		if (sc->states) {
			sc->states[0] = xstrdup("default");
			sc->nstates = 1;
		}
		return;
	}
	sc->states = calloc(json_array_size(v), sizeof(char *));
	if (!sc->states)
		return;
	json_array_foreach(v, i, e)
	{
		char sub[64];

		snprintf(sub, sizeof(sub), "/states/%zu", i);
		if (!json_is_string(e) || !json_string_value(e)[0] ||
		    !strcmp(json_string_value(e), "*")) {
			perr(c, sub, false,
			     "a state name must be a non-empty string other than "
			     "\"*\", got %s",
			     pquote(e, q, sizeof(q)));
			sc->states[sc->nstates++] = xstrdup("?");
			continue;
		}
		for (size_t j = 0; j < sc->nstates; j++)
			if (!strcmp(sc->states[j], json_string_value(e)))
				perr(c, sub, false, "state %s is listed twice",
				     pquote(e, q, sizeof(q)));
		sc->states[sc->nstates++] = xstrdup(json_string_value(e));
	}
}

/* Parses "frontends". */
static void parse_frontends(struct pctx *c, json_t *v)
{
	char q[80];
	size_t i;
	json_t *e;

	c->sc->frontends = 0;
	if (!json_is_array(v) || json_array_size(v) == 0) {
		perr(c, "/frontends", false,
		     "\"frontends\": expected a non-empty list of \"iscsi\", \"tcmu\", \"vm\", "
		     "got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	json_array_foreach(v, i, e)
	{
		char sub[64];
		const char *s = json_is_string(e) ? json_string_value(e) : "";

		snprintf(sub, sizeof(sub), "/frontends/%zu", i);
		if (!strcmp(s, "iscsi"))
			c->sc->frontends |= FL_FE_ISCSI;
		else if (!strcmp(s, "tcmu"))
			c->sc->frontends |= FL_FE_TCMU;
		else if (!strcmp(s, "vm"))
			c->sc->frontends |= FL_FE_VM;
		else
			perr(c, sub, false,
			     "unknown front end %s (expected \"iscsi\", \"tcmu\" "
			     "or \"vm\")",
			     pquote(e, q, sizeof(q)));
	}
}

/* Parses "emulates". */
static void parse_emulates(struct pctx *c, json_t *v)
{
	static const char *const keys[] = {"behaviour", "references", NULL};
	char q[80];

	if (!json_is_object(v)) {
		perr(c, "/emulates", false, "\"emulates\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, "/emulates", v, "emulates", keys);
	if (json_object_get(v, "behaviour") && !json_is_string(json_object_get(v, "behaviour")))
		perr(c, "/emulates/behaviour", false, "\"behaviour\": expected a string, got %s",
		     pquote(json_object_get(v, "behaviour"), q, sizeof(q)));
	if (json_object_get(v, "references")) {
		json_t *r = json_object_get(v, "references"), *e;
		size_t i;

		if (!json_is_array(r))
			perr(c, "/emulates/references", false,
			     "\"references\": expected a list of strings, got %s",
			     pquote(r, q, sizeof(q)));
		json_array_foreach(r, i, e)
		{
			char sub[64];

			snprintf(sub, sizeof(sub), "/emulates/references/%zu", i);
			if (!json_is_string(e))
				perr(c, sub, false, "a reference must be a string, got %s",
				     pquote(e, q, sizeof(q)));
		}
	}
}

/* Parses the whole document into c->sc. */
static void parse_root(struct pctx *c, json_t *root)
{
	static const char *const keys[] = {
	    "faultlun",	 "name",  "description", "emulates",	"frontends", "seed",
	    "target",	 "luns",  "states",	 "transitions", "rules",     "tmf",
	    "transport", "check", "ports",	 "port_groups", "$schema",   NULL};
	struct fl_scenario *sc = c->sc;
	char q[80];
	json_t *e;
	uint64_t n;

	pkeys(c, "", root, "the scenario", keys);
	e = json_object_get(root, "faultlun");
	if (!e)
		perr(c, "", false, "missing \"faultlun\": the format version (1)");
	else if (!json_is_integer(e) || json_integer_value(e) != 1)
		perr(c, "/faultlun", false,
		     "unsupported format version %s (this faultlun reads "
		     "version 1)",
		     pquote(e, q, sizeof(q)));
	/* "$schema": the JSON Schema an editor validates the file with; not read further */
	if ((e = json_object_get(root, "$schema")) && !json_is_string(e))
		perr(c, "/$schema", false,
		     "\"$schema\": expected the URI or path of the JSON Schema, got %s",
		     pquote(e, q, sizeof(q)));
	if ((e = json_object_get(root, "name")) && pstr(c, "/name", e, 0, &sc->name) &&
	    !sc->name[0])
		perr(c, "/name", false, "\"name\" is empty");
	if ((e = json_object_get(root, "description")))
		pstr(c, "/description", e, 0, &sc->description);
	if ((e = json_object_get(root, "emulates")))
		parse_emulates(c, e);
	sc->frontends = FL_FE_ISCSI | FL_FE_TCMU | FL_FE_VM;
	if ((e = json_object_get(root, "frontends")))
		parse_frontends(c, e);
	if ((e = json_object_get(root, "seed")) && pnum(c, "/seed", e, UINT64_MAX, &n)) {
		sc->seed_set = true;
		sc->seed = n;
	}
	if ((e = json_object_get(root, "target"))) {
		static const char *const tkeys[] = {"iqn", NULL};

		if (!json_is_object(e)) {
			perr(c, "/target", false, "\"target\": expected an object, got %s",
			     pquote(e, q, sizeof(q)));
		} else {
			pkeys(c, "/target", e, "target", tkeys);
			if (json_object_get(e, "iqn") &&
			    pstr(c, "/target/iqn", json_object_get(e, "iqn"), 223, &sc->iqn) &&
			    strncmp(sc->iqn, "iqn.", 4) && strncmp(sc->iqn, "eui.", 4) &&
			    strncmp(sc->iqn, "naa.", 4))
				perr(c, "/target/iqn", false,
				     "\"iqn\": %s is not an iSCSI name "
				     "(iqn., eui. or naa.)",
				     pquote(json_object_get(e, "iqn"), q, sizeof(q)));
		}
	}
	parse_ports(c, json_object_get(root, "ports"), json_object_get(root, "port_groups"));
	parse_luns(c, json_object_get(root, "luns"));
	parse_states(c, json_object_get(root, "states"));
	sc->state_session = calloc(sc->nstates ? sc->nstates : 1, sizeof(*sc->state_session));
	if ((e = json_object_get(root, "rules")))
		parse_rules(c, e);
	if ((e = json_object_get(root, "transitions")))
		parse_transitions(c, e);
	if ((e = json_object_get(root, "tmf")))
		parse_tmf(c, e);
	if ((e = json_object_get(root, "transport")))
		parse_transport(c, e);
	if ((e = json_object_get(root, "check")))
		parse_check(c, e);
	check_meaning(c);
}

/* Checks the requested front ends against the ones the scenario names. */
static void check_frontends(struct pctx *c)
{
	static const char *const names[] = {"iscsi", "tcmu", "vm"};

	for (int i = 0; i < 3; i++)
		if ((c->frontends & (1u << i)) && !(c->sc->frontends & (1u << i)))
			perr(c, json_object_get(c->root, "frontends") ? "/frontends" : "", false,
			     "the scenario does not name front end \"%s\" in \"frontends\"",
			     names[i]);
}

/* Orders diagnostics by position (the parser finds them in key order). */
static int diag_cmp(const void *a, const void *b)
{
	const struct fl_diag *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->col < y->col ? -1 : x->col > y->col;
}

/* Sorts diags[first..] by line and column. */
static void sort_diags(struct fl_diags *d, size_t first)
{
	if (d->n > first + 1)
		qsort(d->v + first, d->n - first, sizeof(d->v[0]), diag_cmp);
}

/*
 * Indexes the text (jpos_build) before jansson builds it into a tree, and
 * reports what the index stopped at: too many values, too deep a nesting, a
 * key given twice in one object (at its second occurrence). Returns false
 * then. Both cost time and memory in proportion to the text, so a crafted
 * file is refused before the tree is built.
 */
static bool prescan(struct pctx *c, const char *text, size_t len)
{
	struct jpos *p = &c->pos;
	int line, col;

	switch (jpos_build(p, text, len)) {
	case JPOS_TOO_MANY:
		diag_add(c->d, c->file, p->pline, p->pcol,
			 "more than %d JSON values: not a scenario (the limit keeps the cost of "
			 "a file in proportion to its size)",
			 FL_SCENARIO_MAX_VALUES);
		return false;
	case JPOS_TOO_DEEP:
		diag_add(c->d, c->file, p->pline, p->pcol,
			 "nested deeper than %d levels: not a scenario", FL_SCENARIO_MAX_DEPTH);
		return false;
	case JPOS_TOO_LONG:
		diag_add(c->d, c->file, p->pline, p->pcol,
			 "a list of more than %d entries: not a scenario", FL_SCENARIO_MAX_LIST);
		return false;
	case JPOS_DUPLICATE: {
		char q[80];
		json_t *k = json_string(p->dup_key);

		line = p->v[p->other].key_line;
		col = p->v[p->other].key_col;
		diag_add(c->d, c->file, p->pline, p->pcol, "duplicate key %s (also at %d:%d)",
			 k ? pquote(k, q, sizeof(q)) : "?", line, col);
		json_decref(k);
		return false;
	}
	default:
		return true;
	}
}

/* Parses and validates a scenario from text. */
int fl_scenario_load_string(const char *name, const char *text, unsigned frontends,
			    struct fl_scenario **out, struct fl_diags *diags)
{
	struct pctx c = {.file = name ? name : "<scenario>", .d = diags};
	size_t first = diags->n, len = strlen(text);
	json_error_t jerr;
	json_t *root;

	*out = NULL;
	if (len > FL_SCENARIO_MAX_BYTES) {
		diag_add(diags, c.file, 1, 1, "the text is larger than %u MiB: not a scenario",
			 FL_SCENARIO_MAX_BYTES >> 20);
		return -EINVAL;
	}
	if (!prescan(&c, text, len)) {
		jpos_free(&c.pos);
		return -EINVAL;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		diag_add(diags, c.file, jerr.line > 0 ? jerr.line : 1,
			 jerr.column > 0 ? jerr.column : 1, "%s", jerr.text);
		jpos_free(&c.pos);
		return -EINVAL;
	}
	if (!json_is_object(root)) {
		diag_add(diags, c.file, 1, 1, "a scenario must be a JSON object");
		json_decref(root);
		jpos_free(&c.pos);
		return -EINVAL;
	}
	c.sc = calloc(1, sizeof(*c.sc));
	if (!c.sc) {
		json_decref(root);
		jpos_free(&c.pos);
		return -ENOMEM;
	}
	atomic_init(&c.sc->refs, 1);
	c.sc->file = xstrdup(c.file);
	c.root = root;
	c.frontends = frontends;
	parse_root(&c, root);
	if (frontends)
		check_frontends(&c);
	jpos_free(&c.pos);
	json_decref(root);
	sort_diags(diags, first);
	if (c.nerr) {
		fl_scenario_free(c.sc);
		return -EINVAL;
	}
	*out = c.sc;
	return 0;
}

/* Doubles a read buffer up to FL_SCENARIO_MAX_BYTES + 1; 0, -EFBIG beyond it, or -ENOMEM. */
static int grow_read_buffer(char **buf, size_t *cap)
{
	size_t ncap = *cap ? *cap * 2 : 64 * 1024;
	char *nb;

	if (*cap >= FL_SCENARIO_MAX_BYTES + 1)
		return -EFBIG;
	if (ncap > FL_SCENARIO_MAX_BYTES + 1)
		ncap = FL_SCENARIO_MAX_BYTES + 1;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

/* Waits up to FL_SCENARIO_READ_IDLE_MS for fd to be readable; 0, -ETIMEDOUT or -errno. */
static int wait_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int k = poll(&p, 1, FL_SCENARIO_READ_IDLE_MS);

	if (k == 0)
		return -ETIMEDOUT;
	if (k < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/*
 * Reads a whole scenario file: "-" is standard input. Regular files, pipes
 * and FIFOs (`serve <(jq ...)`, `lint /dev/stdin`) are read to end of file,
 * never by their size; a pipe that stays silent for FL_SCENARIO_READ_IDLE_MS
 * is given up (-ETIMEDOUT), so a FIFO without a writer cannot hang the
 * reader. Anything else (directory, device, socket) is refused, and so is a
 * text over FL_SCENARIO_MAX_BYTES (-EFBIG).
 */
static int read_file(const char *path, char **out)
{
	bool is_stdin = !strcmp(path, "-");
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !(is_stdin && S_ISCHR(st.st_mode))) {
		err = -ESPIPE; /* a device or a socket is not a scenario */
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap && (err = grow_read_buffer(&buf, &cap)))
			goto out;
		r = read(fd, buf + n, cap - 1 - n);
		if (r > 0) {
			n += (size_t)r;
			if (n > FL_SCENARIO_MAX_BYTES) {
				err = -EFBIG;
				goto out;
			}
			continue;
		}
		if (r == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if ((err = wait_readable(fd)))
				goto out;
			continue;
		}
		err = -errno;
		goto out;
	}
	buf[n] = 0;
	*out = buf;
	buf = NULL;
out:
	free(buf);
	if (!is_stdin)
		close(fd);
	return err;
}

/* Parses and validates a scenario file. */
int fl_scenario_load_file(const char *path, unsigned frontends, struct fl_scenario **out,
			  struct fl_diags *diags)
{
	char *text = NULL;
	int r = read_file(path, &text);

	*out = NULL;
	switch (r) {
	case 0:
		break;
	case -ESPIPE:
		diag_add(diags, path, 1, 1,
			 "not a regular file or a pipe: a device or a socket is not a scenario");
		return -EINVAL;
	case -EFBIG:
		diag_add(diags, path, 1, 1, "the file is larger than %u MiB: not a scenario",
			 FL_SCENARIO_MAX_BYTES >> 20);
		return -EINVAL;
	case -ETIMEDOUT:
		diag_add(diags, path, 1, 1, "nothing to read for %d s (a FIFO without a writer?)",
			 FL_SCENARIO_READ_IDLE_MS / 1000);
		return -EINVAL;
	default:
		return r;
	}
	r = fl_scenario_load_string(strcmp(path, "-") ? path : "<stdin>", text, frontends, out,
				    diags);
	free(text);
	return r;
}

/*
 * The text of scenario file path without its faults: "rules", "tmf",
 * "transport", "transitions" and "states" taken out, the LUNs, ports and
 * target kept. Returns the text (malloc'd) or NULL with errno set.
 */
char *fl_scenario_unarmed_text(const char *path)
{
	static const char *const faults[] = {"rules", "tmf", "transport", "transitions", "states"};
	char *text = NULL, *out = NULL;
	json_t *root;
	int r = read_file(path, &text);

	if (r) {
		errno = r < 0 ? -r : EINVAL;
		return NULL;
	}
	root = json_loads(text, 0, NULL);
	free(text);
	if (!json_is_object(root)) {
		json_decref(root);
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		json_object_del(root, faults[i]);
	out = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	if (!out)
		errno = ENOMEM;
	return out;
}

/* Drops a reference; frees the scenario with the last one. */
void fl_scenario_free(struct fl_scenario *sc)
{
	if (!sc || atomic_fetch_sub(&sc->refs, 1) != 1)
		return;
	for (size_t i = 0; i < sc->nluns; i++) {
		free(sc->luns[i].vendor);
		free(sc->luns[i].product);
		free(sc->luns[i].revision);
		free(sc->luns[i].serial);
		free(sc->luns[i].store_path);
		free(sc->luns[i].vpd);
	}
	free(sc->luns);
	for (size_t i = 0; i < sc->nstates; i++)
		free(sc->states[i]);
	free(sc->states);
	free(sc->state_session);
	scenario_free_rules(sc);
	scenario_free_ports(sc);
	check_free(sc->check);
	free(sc->iqn);
	free(sc->name);
	free(sc->description);
	free(sc->file);
	free(sc);
}

/* The scenario's name, or its file name. */
const char *fl_scenario_name(const struct fl_scenario *sc)
{
	return sc->name ? sc->name : sc->file;
}

/* The description, or NULL. */
const char *fl_scenario_description(const struct fl_scenario *sc)
{
	return sc->description;
}

/* The front ends the scenario names (enum fl_frontend mask). */
unsigned fl_scenario_frontends(const struct fl_scenario *sc)
{
	return sc->frontends;
}

/* The target name, or NULL for the front end's default. */
const char *fl_scenario_target_iqn(const struct fl_scenario *sc)
{
	return sc->iqn;
}

/* How many LUNs the scenario defines. */
unsigned fl_scenario_lun_count(const struct fl_scenario *sc)
{
	return (unsigned)sc->nluns;
}

/* Write-protects every LUN (serve --read-only); before fl_engine_create. */
void fl_scenario_set_read_only(struct fl_scenario *sc)
{
	for (size_t i = 0; i < sc->nluns; i++)
		sc->luns[i].cfg.read_only = true;
}

/* LUN number and core config of the i-th LUN (strings owned by sc). */
int fl_scenario_lun(const struct fl_scenario *sc, unsigned i, uint16_t *lun_id,
		    struct fl_lun_config *cfg)
{
	const struct sc_lun *l;

	if (i >= sc->nluns)
		return -ENOENT;
	l = &sc->luns[i];
	*lun_id = l->id;
	*cfg = l->cfg;
	cfg->vendor = l->vendor;
	cfg->product = l->product;
	cfg->revision = l->revision;
	cfg->serial = l->serial;
	cfg->store_path = l->store_path;
	scenario_lun_ports(sc, cfg);
	return 0;
}

/*
 * True when path is a regular file holding a JSON Schema, not a scenario.
 * The text passes the same limits as a scenario before it is parsed.
 */
bool fl_scenario_file_is_schema(const char *path)
{
	struct jpos pos = {0};
	struct stat st;
	char *text = NULL;
	json_t *doc = NULL;
	bool yes;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > FL_SCENARIO_MAX_BYTES ||
	    read_file(path, &text))
		return false;
	if (jpos_build(&pos, text, strlen(text)) == JPOS_OK)
		doc = json_loads(text, 0, NULL);
	jpos_free(&pos);
	free(text);
	yes = json_is_object(doc) && json_object_get(doc, "$schema") &&
	      !json_object_get(doc, "faultlun");
	json_decref(doc);
	return yes;
}
