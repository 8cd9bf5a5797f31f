/* SPDX-License-Identifier: MIT */
/*
 * corrupt.c - the action "corrupt": a good command's data-in comes back with
 * N bytes flipped at random places (docs/faults/corrupt.md); the medium is
 * unchanged. The places come from the injection's own random stream, drawn
 * from the rule's at match time, so a seeded run corrupts the same bytes.
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param corrupt_params[] = {
    {"corrupt/bytes", FL_PARAM_UINT, "bytes", 1, 1u << 24, NULL, NULL,
     "how many bytes of the data-in to flip", 0},
};

/* The parameter of a corrupt action. */
struct corrupt_args {
	uint32_t bytes;
};
FL_ACTION_ARGS(corrupt_args)

/* Parses "corrupt": {"bytes": N}, 1 .. 16 Mi. */
static void corrupt_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	static const char *const ckeys[] = {"bytes", NULL};
	json_t *e = json_object_get(v, "corrupt");
	char sub[512], q[80];
	uint64_t n = 0;

	if (!e)
		return;
	SUBP(sub, path, "corrupt");
	if (!json_is_object(e) || !json_object_get(e, "bytes")) {
		perr(c, sub, false, "\"corrupt\": expected {\"bytes\": N}, got %s",
		     pquote(e, q, sizeof(q)));
	} else {
		pkeys(c, sub, e, "corrupt", ckeys);
		char s2[600];

		snprintf(s2, sizeof(s2), "%s/bytes", sub);
		if (pnum(c, s2, json_object_get(e, "bytes"), 1u << 24, &n)) {
			if (!n)
				perr(c, s2, false, "\"bytes\": corrupting 0 bytes does nothing");
			corrupt_args_set(a, &(struct corrupt_args){(uint32_t)n});
		}
	}
}

/* Flips that many bytes of a good command's data-in (XOR with 1..255). */
static void corrupt_after(const struct fl_action_env *x)
{
	struct fl_cmd *cmd = x->cmd;
	uint32_t bytes = corrupt_args_of(x->a).bytes;

	if (cmd->status != FL_STATUS_GOOD || !cmd->data_in_len)
		return;
	for (uint32_t i = 0; i < bytes; i++) {
		uint64_t r = x->next(x->rng);

		cmd->data_in[r % cmd->data_in_len] ^= (uint8_t)(1 + (r >> 32) % 255);
	}
}

const struct fl_action fl_action_corrupt = {
    .name = "corrupt",
    .verb = VERB_CORRUPT,
    .trace_action = "corrupt",
    .doc = "corrupt",
    .keys = no_keys,
    .params = corrupt_params,
    .nparams = sizeof(corrupt_params) / sizeof(corrupt_params[0]),
    .phase = FL_PHASE_AFTER,
    .observed = FL_OBS_CHANGES_DATA,
    .observed_as = "answered with corrupted data",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .draws_seed = true,
    .parse = corrupt_parse,
    .after = corrupt_after,
};
