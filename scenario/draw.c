/* SPDX-License-Identifier: MIT */
/*
 * draw.c - random fault actions from the registry's parameter descriptors
 * (fl_draw.h). Nothing here names an action: a new action's descriptors are
 * drawn from as they are written.
 */
#include "fl_draw.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The most `oneof` groups an action has (groups are numbered from 1). */
#define DRAW_MAX_ONEOF 8

uint64_t fl_draw_uint(const struct fl_draw_rng *g, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	if (hi - lo == UINT64_MAX)
		return g->next(g->state);
	return lo + g->next(g->state) % (hi - lo + 1);
}

double fl_draw_unit(const struct fl_draw_rng *g)
{
	return (double)(g->next(g->state) >> 11) * 0x1.0p-53;
}

json_t *fl_draw_value(const struct fl_draw_ctx *c, const struct fl_action_param *p)
{
	const struct fl_draw_rng *g = &c->rng;
	char buf[64];
	size_t n = 0;

	switch (p->type) {
	case FL_PARAM_TRUE:
		return json_true();
	case FL_PARAM_BOOL:
		return json_boolean(g->next(g->state) & 1);
	case FL_PARAM_CHOICE:
		while (p->choices && p->choices[n])
			n++;
		return n ? json_string(p->choices[fl_draw_uint(g, 0, n - 1)]) : json_null();
	case FL_PARAM_UINT:
		return json_integer(
		    (json_int_t)fl_draw_uint(g, (uint64_t)p->min, (uint64_t)p->max));
	case FL_PARAM_MS:
	case FL_PARAM_DELAY: /* drawn as a fixed delay */
		return json_real(p->min + fl_draw_unit(g) * (p->max - p->min));
	case FL_PARAM_SENSE:
		return json_pack("{s:I, s:I, s:I}", "key",
				 (json_int_t)fl_draw_uint(g, (uint64_t)p->min, (uint64_t)p->max),
				 "asc", (json_int_t)fl_draw_uint(g, 0, 255), "ascq",
				 (json_int_t)fl_draw_uint(g, 0, 255));
	case FL_PARAM_ASCQ:
		snprintf(buf, sizeof(buf), "%02x/%02x", (unsigned)fl_draw_uint(g, 0, 255),
			 (unsigned)fl_draw_uint(g, 0, 255));
		return json_string(buf);
	case FL_PARAM_SIZE:
		snprintf(buf, sizeof(buf), "%" PRIu64 "blocks",
			 fl_draw_uint(g, (uint64_t)p->min, (uint64_t)p->max));
		return json_string(buf);
	case FL_PARAM_STATE:
		return c->nstates ? json_string(c->states[fl_draw_uint(g, 0, c->nstates - 1)])
				  : json_null();
	case FL_PARAM_GROUP:
		return json_integer((json_int_t)fl_draw_uint(g, 1, c->ngroups ? c->ngroups : 1));
	}
	return json_null();
}

void fl_draw_put(json_t *obj, const struct fl_action_param *p, json_t *val)
{
	const char *slash = strchr(p->key, '/');
	char head[64];
	json_t *inner;

	if (!slash) {
		json_object_set_new(obj, p->key, val);
		return;
	}
	snprintf(head, sizeof(head), "%.*s", (int)(slash - p->key), p->key);
	inner = json_object_get(obj, head);
	if (!inner) {
		inner = json_object();
		json_object_set_new(obj, head, inner);
	}
	if (json_is_object(inner))
		json_object_set_new(inner, slash + 1, val);
	else
		json_decref(val);
}

bool fl_draw_required(const struct fl_action *d, const struct fl_action_param *p)
{
	size_t n = strlen(d->name);

	return !p->def && !strncmp(p->key, d->name, n) && (!p->key[n] || p->key[n] == '/');
}

void fl_draw_action(const struct fl_draw_ctx *c, const struct fl_action *d, json_t *obj)
{
	const struct fl_draw_rng *g = &c->rng;
	unsigned pick[DRAW_MAX_ONEOF] = {0}; /* per oneof group: which member, 1-based */
	size_t seen[DRAW_MAX_ONEOF] = {0};

	for (size_t k = 0; k < d->nparams; k++) {
		unsigned grp = d->params[k].oneof;
		size_t members = 0;

		if (!grp || grp >= DRAW_MAX_ONEOF || pick[grp])
			continue;
		for (size_t j = 0; j < d->nparams; j++)
			members += d->params[j].oneof == grp;
		pick[grp] = (unsigned)fl_draw_uint(g, 1, members);
	}
	for (size_t k = 0; k < d->nparams; k++) {
		const struct fl_action_param *p = &d->params[k];

		if (p->oneof && p->oneof < DRAW_MAX_ONEOF) {
			if (++seen[p->oneof] != pick[p->oneof])
				continue;
		} else if (!fl_draw_required(d, p) && (g->next(g->state) & 1)) {
			continue;
		}
		fl_draw_put(obj, p, fl_draw_value(c, p));
	}
}
