/* SPDX-License-Identifier: MIT */
/*
 * engine_program.c - a scenario compiled for an engine: the run-time state of
 * every rule (armed, counters, seeded stream, healed LBAs) and, per LUN, the
 * rule index: per command class and per opcode, the rules without an LBA
 * condition, the crosses_end rules, and an interval tree of the LBA ranges
 * (lba_index.c). Built once per scenario, read-only afterwards except for
 * the run-time state, which the engine lock guards.
 */
#include "engine_internal.h"

#include <stdlib.h>
#include <string.h>

/* A growable array of intervals or rule numbers, while building. */
struct bucket_build {
	struct lba_ival *iv;
	size_t niv, civ;
	uint32_t *al, *cr;
	size_t nal, cal, ncr, ccr;
	bool used;
};

/* Appends to a growable uint32_t array; false on ENOMEM. */
static bool push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		uint32_t *nv = realloc(*v, c * sizeof(**v));

		if (!nv)
			return false;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return true;
}

/* Adds rule i to a bucket under construction. */
static bool bb_add(struct bucket_build *b, const struct sc_rule *r, uint32_t i)
{
	b->used = true;
	if (r->m.lba == LBA_ANY)
		return push_u32(&b->al, &b->nal, &b->cal, i);
	if (r->m.lba == LBA_CROSSES_END)
		return push_u32(&b->cr, &b->ncr, &b->ccr, i);
	if (b->niv == b->civ) {
		size_t c = b->civ ? b->civ * 2 : 8;
		struct lba_ival *nv = realloc(b->iv, c * sizeof(*nv));

		if (!nv)
			return false;
		b->iv = nv;
		b->civ = c;
	}
	b->iv[b->niv++] = (struct lba_ival){.lo = r->m.first, .hi = r->m.last, .rule = i};
	return true;
}

/* Turns a bucket under construction into a bucket (takes its arrays). */
static int bb_finish(struct bucket_build *b, struct bucket *out)
{
	int r;

	out->always = b->al;
	out->nalways = b->nal;
	out->crosses = b->cr;
	out->ncrosses = b->ncr;
	r = lba_tree_build(&out->tree, b->iv, b->niv);
	free(b->iv);
	memset(b, 0, sizeof(*b));
	return r;
}

/* Frees a bucket's arrays. */
static void bucket_free(struct bucket *b)
{
	free(b->always);
	free(b->crosses);
	lba_tree_free(&b->tree);
}

/* Builds the rule index of one LUN. */
static struct lun_rules *lun_rules_build(const struct fl_scenario *sc, uint16_t lun_id)
{
	struct lun_rules *lr = calloc(1, sizeof(*lr));
	struct bucket_build *bb = calloc(FL_CLASS_NR + 256, sizeof(*bb));
	bool ok = lr && bb;

	for (size_t i = 0; ok && i < sc->nrules; i++) {
		const struct sc_rule *r = &sc->rules[i];

		if (!r->m.lun_any && !(r->m.lun_map[lun_id / 8] & (1u << (lun_id % 8))))
			continue;
		if (r->m.has_opcode) {
			for (unsigned op = 0; op < 256 && ok; op++)
				if (r->m.opcode_map[op / 8] & (1u << (op % 8)))
					ok = bb_add(&bb[FL_CLASS_NR + op], r, (uint32_t)i);
			continue;
		}
		for (unsigned c = 0; c < FL_CLASS_NR && ok; c++)
			if (!r->m.class_mask || (r->m.class_mask & (1u << c)))
				ok = bb_add(&bb[c], r, (uint32_t)i);
	}
	for (unsigned k = 0; ok && k < FL_CLASS_NR + 256; k++) {
		struct bucket *dst;

		if (k < FL_CLASS_NR) {
			dst = &lr->cls[k];
		} else {
			if (!bb[k].used)
				continue;
			dst = lr->op[k - FL_CLASS_NR] = calloc(1, sizeof(*dst));
			lr->any_op = true;
			if (!dst) {
				ok = false;
				break;
			}
		}
		ok = bb_finish(&bb[k], dst) == 0;
	}
	if (bb) {
		for (unsigned k = 0; k < FL_CLASS_NR + 256; k++) {
			free(bb[k].iv);
			free(bb[k].al);
			free(bb[k].cr);
		}
		free(bb);
	}
	if (!ok && lr) {
		for (unsigned c = 0; c < FL_CLASS_NR; c++)
			bucket_free(&lr->cls[c]);
		for (unsigned op = 0; op < 256; op++)
			if (lr->op[op]) {
				bucket_free(lr->op[op]);
				free(lr->op[op]);
			}
		free(lr);
		lr = NULL;
	}
	return lr;
}

/* Compiles sc for e's LUNs; takes a reference on sc. */
struct program *program_build(struct fl_engine *e, struct fl_scenario *sc)
{
	struct program *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	atomic_fetch_add(&sc->refs, 1);
	p->sc = sc;
	p->rules = calloc(sc->nrules + 1, sizeof(*p->rules));
	p->xrules = calloc(sc->nxrules + 1, sizeof(*p->xrules));
	if (!p->rules || !p->xrules)
		goto fail;
	p->nrules = sc->nrules;
	p->nxrules = sc->nxrules;
	for (size_t i = 0; i < sc->nrules; i++) {
		p->rules[i].r = &sc->rules[i];
		p->rules[i].armed = true;
		fl_prng_seed(&p->rules[i].rng, e->seed, i + 1);
		p->has_until_written |= sc->rules[i].until_written;
	}
	for (size_t i = 0; i < sc->nxrules; i++) {
		p->xrules[i].r = &sc->xrules[i];
		p->xrules[i].armed = true;
		fl_prng_seed(&p->xrules[i].rng, e->seed, 0x100000 + i);
	}
	for (size_t i = 0; i < sc->ntransitions; i++)
		p->has_write_beyond |= sc->transitions[i].on == ON_WRITE_BEYOND;
	for (size_t l = 0; l < e->nluns; l++) {
		p->lun[e->luns[l].id] = lun_rules_build(sc, e->luns[l].id);
		if (!p->lun[e->luns[l].id])
			goto fail;
	}
	return p;
fail:
	program_free(p);
	return NULL;
}

/* Frees a program and drops its scenario reference. */
void program_free(struct program *p)
{
	if (!p)
		return;
	for (unsigned l = 0; l < FL_MAX_LUNS; l++) {
		struct lun_rules *lr = p->lun[l];

		if (!lr)
			continue;
		for (unsigned c = 0; c < FL_CLASS_NR; c++)
			bucket_free(&lr->cls[c]);
		for (unsigned op = 0; op < 256; op++)
			if (lr->op[op]) {
				bucket_free(lr->op[op]);
				free(lr->op[op]);
			}
		free(lr);
	}
	for (size_t i = 0; i < p->nrules; i++)
		free(p->rules[i].healed);
	free(p->rules);
	free(p->xrules);
	fl_scenario_free(p->sc);
	free(p);
}
