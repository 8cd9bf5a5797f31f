/* SPDX-License-Identifier: MIT */
/*
 * power_loss.c - the action "power_loss": the LUN loses what its volatile
 * write cache held (SBC-3 r36 4.15), as a power cut does, and reports a
 * power-on UA; the trace lists the lost LBAs as ranges
 * (docs/faults/power_loss.md).
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param power_loss_params[] = {
    {"power_loss", FL_PARAM_TRUE, NULL, 1, 1, NULL, NULL,
     "true: drop the LUN's volatile write cache", 0},
};

/* Parses "power_loss" (true only). */
static void power_loss_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	(void)a;
	action_flag(c, path, v, "power_loss");
}

/* The LBAs a power loss discarded, as ranges. */
struct lost_ctx {
	json_t *ranges;
	uint64_t first, last;
	bool open;
};

/* fl_lun_power_loss callback: merges consecutive LBAs into [first, last] ranges. */
static void lost_lba(uint64_t lba, void *ctx)
{
	struct lost_ctx *l = ctx;

	if (l->open && lba == l->last + 1) {
		l->last = lba;
		return;
	}
	if (l->open && json_array_size(l->ranges) < 100000)
		json_array_append_new(l->ranges,
				      json_pack("[II]", (json_int_t)l->first, (json_int_t)l->last));
	l->first = l->last = lba;
	l->open = true;
}

/* Drops the cache and traces what was lost. */
static void power_loss_effect(const struct fl_action_env *x)
{
	struct lost_ctx l = {.ranges = json_array()};
	uint64_t n = fl_lun_power_loss(x->lun, lost_lba, &l);
	json_t *o;

	lost_lba(UINT64_MAX - 1, &l); /* flushes the last range */
	o = x->event(x->engine, "power_loss");
	if (!o) {
		json_decref(l.ranges);
		return;
	}
	json_object_set_new(o, "lun", json_integer(x->lun_id));
	json_object_set_new(o, "rule", json_string(x->why));
	json_object_set_new(o, "lost_blocks", json_integer((json_int_t)n));
	json_object_set_new(o, "lost", l.ranges);
	x->emit(x->engine, o);
}

const struct fl_action fl_action_power_loss = {
    .name = "power_loss",
    .verb = VERB_POWER_LOSS,
    .trace_action = "power_loss",
    .doc = "power_loss",
    .keys = no_keys,
    .params = power_loss_params,
    .nparams = sizeof(power_loss_params) / sizeof(power_loss_params[0]),
    .phase = FL_PHASE_EFFECT,
    .observed = FL_OBS_CHANGES_LUN,
    .observed_as = "the LUN lost its write cache",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .parse = power_loss_parse,
    .effect = power_loss_effect,
};
