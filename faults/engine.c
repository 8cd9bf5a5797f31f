/* SPDX-License-Identifier: MIT */
/*
 * engine.c - the fault engine's pass-through path for SCSI commands: engine
 * life cycle, the compiled rule program and its index, fl_engine_submit and
 * the phases it carries an action out in (before execution, held, delayed, a
 * LUN-wide effect, after execution), "until": "written" healing, the state
 * machine, and the seeded generator. What an action does in each phase, what
 * it counts and how the trace names it are the action's own: its file in
 * scenario/actions/, reached through the registry (scenario/fl_action.h) by
 * one array index per command.
 *
 * Unit attentions first (SAM-5 r21 5.14): a rule that would answer a command
 * with a status stands back when the core has a UA to report for it, unless
 * the action says "overtake_ua"; the rule then does not count the command.
 *
 * Matching: a command's candidates come from its LUN's index (per command
 * class, or per opcode for opcode rules): every rule without an LBA condition,
 * the rules whose LBA interval overlaps the command (stabbing query in
 * lba_index.c), and crosses_end rules when the command reaches past the end.
 * Candidates are evaluated in scenario order; the first that holds acts, so a
 * command gets at most one injection. Counters (nth / every / after / times)
 * count the commands a rule saw after everything else about it matched. The
 * command's CDB is decoded once (fl_cmd_decode); the core reuses the decode.
 *
 * Determinism: each rule draws from its own xoshiro256** stream seeded from
 * (seed, rule number), always at the same point of its evaluation, so the
 * same seed and the same command sequence give the same injections.
 */
#include "engine_internal.h"
#include "fl_log.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* ---- seeded generator ---- */

/* Standard normal deviate (Box-Muller). */
static double prng_normal(struct fl_prng *p)
{
	double u = fl_prng_unit(p), v = fl_prng_unit(p);

	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* Draws a delay in nanoseconds. */
uint64_t delay_draw(const struct sc_delay *d, struct fl_prng *p)
{
	double ms = 0;

	switch (d->dist) {
	case DIST_FIXED:
		ms = d->a;
		break;
	case DIST_UNIFORM:
		ms = d->a + (d->b - d->a) * fl_prng_unit(p);
		break;
	case DIST_LOGNORMAL:
		ms = exp(d->a + d->b * prng_normal(p));
		break;
	case DIST_EXPONENTIAL:
		ms = -d->a * log(1.0 - fl_prng_unit(p));
		break;
	}
	if (!(ms >= 0))
		ms = 0;
	if (ms > 86400000.0)
		ms = 86400000.0;
	return (uint64_t)(ms * 1e6);
}

/* ---- matching ---- */

/* Candidate rule numbers of one command. */
struct cands {
	uint32_t *v;
	size_t n, cap;
	uint32_t small[32];
	bool oom;
};

/* Adds a candidate (lba_tree_query callback). */
static void cand_add(uint32_t rule, void *ctx)
{
	struct cands *c = ctx;

	if (c->n == c->cap) {
		size_t cap = c->cap * 2;
		uint32_t *v =
		    c->v == c->small ? malloc(cap * sizeof(*v)) : realloc(c->v, cap * sizeof(*v));

		if (!v) {
			c->oom = true;
			return;
		}
		if (c->v == c->small)
			memcpy(v, c->small, sizeof(c->small));
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = rule;
}

/* Collects a bucket's candidates for the command's range [lo, hi]. */
static void bucket_collect(const struct bucket *b, const struct fl_cdb_info *ci, uint64_t lo,
			   uint64_t hi, uint64_t num_blocks, struct cands *c)
{
	for (size_t i = 0; i < b->nalways; i++)
		cand_add(b->always[i], c);
	if (!ci->has_lba)
		return;
	lba_tree_query(&b->tree, lo, hi, cand_add, c);
	if (b->ncrosses && (ci->nblocks ? hi : lo) >= num_blocks)
		for (size_t i = 0; i < b->ncrosses; i++)
			cand_add(b->crosses[i], c);
}

/* Sorts candidates in scenario order and drops duplicates. */
static void cands_sort(struct cands *c)
{
	size_t k = 0;

	for (size_t i = 1; i < c->n; i++) {
		uint32_t x = c->v[i];
		size_t j = i;

		while (j > 0 && c->v[j - 1] > x) {
			c->v[j] = c->v[j - 1];
			j--;
		}
		c->v[j] = x;
	}
	for (size_t i = 0; i < c->n; i++)
		if (!k || c->v[k - 1] != c->v[i])
			c->v[k++] = c->v[i];
	c->n = k;
}

/* First LBA in [a, b] that no write has healed for rule rt on lun; false if none. */
static bool first_unhealed(const struct rt_rule *rt, uint16_t lun, uint64_t a, uint64_t b,
			   uint64_t *out)
{
	uint64_t x = a;

	for (;;) {
		bool moved = false;

		for (size_t i = 0; i < rt->nhealed; i++) {
			const struct heal_ival *h = &rt->healed[i];

			if (h->lun != lun || h->lo > x || h->hi < x)
				continue;
			if (h->hi >= b)
				return false;
			x = h->hi + 1;
			moved = true;
		}
		if (!moved) {
			*out = x;
			return true;
		}
	}
}

/* Whether rule rt acts on the command (e->lock held); sets *info (the failing LBA). */
static bool rule_hits(struct fl_engine *e, struct rt_rule *rt, const struct eng_lun *L,
		      const struct fl_cmd *cmd, const struct fl_cdb_info *ci, uint64_t now,
		      uint64_t *info)
{
	const struct sc_rule *r = rt->r;
	const struct sc_count *k = &r->m.count;
	uint64_t lo = ci->lba, hi = ci->lba + (ci->nblocks ? ci->nblocks - 1 : 0), n;

	if (!rt->armed)
		return false;
	if (r->states && !(r->states & (1ull << e->state)))
		return false;
	if (r->m.has_window) {
		uint64_t ms = (now - e->armed_ns) / 1000000;

		if (ms < r->m.win_from_ms || ms >= r->m.win_to_ms)
			return false;
	}
	if (r->m.initiator &&
	    fnmatch(r->m.initiator, cmd->nexus.initiator ? cmd->nexus.initiator : "", 0))
		return false;
	if (r->m.has_sa && fl_cdb_service_action(cmd->cdb, cmd->cdb_len) != r->m.sa)
		return false;
	/* the port the command came in on, and its target port group (SPC-4 r37 5.15.2.3) */
	if (r->m.port && r->m.port != (cmd->nexus.rel_port_id ? cmd->nexus.rel_port_id : 1))
		return false;
	if (r->m.port_group &&
	    r->m.port_group != fl_scenario_port_group(e->prog->sc, L->id, cmd->nexus.rel_port_id))
		return false;
	*info = ci->has_lba ? lo : 0;
	if (r->m.lba == LBA_RANGE) {
		uint64_t a = lo > r->m.first ? lo : r->m.first, b = hi < r->m.last ? hi : r->m.last;

		if (!ci->has_lba || a > b)
			return false;
		*info = a;
		if (r->until_written && !first_unhealed(rt, L->id, a, b, info))
			return false;
	} else if (r->m.lba == LBA_CROSSES_END) {
		if (!ci->has_lba || (ci->nblocks ? hi : lo) < L->num_blocks)
			return false;
		*info = lo > L->num_blocks ? lo : L->num_blocks;
	} else if (r->until_written && ci->has_lba) {
		if (!first_unhealed(rt, L->id, lo, hi, info))
			return false;
	}
	n = ++rt->seen;
	if (k->after && n <= k->after)
		return false;
	n -= k->after;
	if (k->nth && n != k->nth)
		return false;
	if (k->every && n % k->every)
		return false;
	if (k->times && rt->fired >= k->times)
		return false;
	if (k->has_prob && !(fl_prng_unit(&rt->rng) < k->prob))
		return false;
	rt->fired++;
	return true;
}

/* Whether a bucket can hold a candidate for [lo, hi] at all (O(1) reject). */
static inline bool bucket_may_hit(const struct bucket *b, const struct fl_cdb_info *ci, uint64_t lo,
				  uint64_t hi, uint64_t num_blocks)
{
	const struct lba_tree *t = &b->tree;

	if (b->nalways)
		return true;
	if (!ci->has_lba)
		return false;
	if (b->ncrosses && (ci->nblocks ? hi : lo) >= num_blocks)
		return true;
	/* the root of the implicit tree is the middle element; it holds the overall max */
	return t->n && hi >= t->v[0].lo && lo <= t->maxhi[t->n / 2];
}

/*
 * Whether an action answers the command in place of the LUN, before it
 * executes (a CHECK CONDITION or a status): a pending unit attention comes
 * before such an answer. RECOVERED ERROR and COMPLETED sense execute first
 * and the core reports the UA itself.
 */
static bool answers_before(const struct sc_action *a)
{
	return fl_action_by_verb(a->verb)->answers && fl_action_phase(a) == FL_PHASE_BEFORE;
}

/*
 * Finds the rule acting on the command (e->lock held); returns its number or
 * -1. When that rule would answer the command but the LUN has a unit
 * attention to report first (SAM-5 r21 5.14), returns -1 with *ua_first set
 * to the rule's number, and the rule does not count the command (its seen /
 * fired counters and random stream are as before): the initiator's retry is
 * the first command it sees.
 */
static long match_rules(struct fl_engine *e, const struct eng_lun *L, const struct fl_cmd *cmd,
			const struct fl_cdb_info *ci, uint64_t *info, long *ua_first)
{
	struct program *p = e->prog;
	struct lun_rules *lr = p->lun[L->id];
	const struct bucket *cb, *ob;
	struct cands c;
	uint64_t lo = ci->lba, hi = ci->lba + (ci->nblocks ? ci->nblocks - 1 : 0), now = 0;
	long hit = -1;

	if (!lr)
		return -1;
	if (hi < lo)
		hi = UINT64_MAX;
	cb = &lr->cls[ci->cls < FL_CLASS_NR ? ci->cls : FL_CLASS_OTHER];
	ob = lr->any_op ? lr->op[ci->opcode] : NULL;
	if (!bucket_may_hit(cb, ci, lo, hi, L->num_blocks) &&
	    !(ob && bucket_may_hit(ob, ci, lo, hi, L->num_blocks)))
		return -1; /* the common case: nothing indexed near this command */
	c.v = c.small;
	c.n = 0;
	c.cap = sizeof(c.small) / sizeof(c.small[0]);
	c.oom = false;
	bucket_collect(cb, ci, lo, hi, L->num_blocks, &c);
	if (ob)
		bucket_collect(ob, ci, lo, hi, L->num_blocks, &c);
	if (c.n > 1)
		cands_sort(&c);
	for (size_t i = 0; i < c.n; i++) {
		struct rt_rule *rt = &p->rules[c.v[i]];
		uint64_t seen = rt->seen, fired = rt->fired;
		struct fl_prng rng = rt->rng;

		if (!now)
			now = fl_mono_ns();
		if (!rule_hits(e, rt, L, cmd, ci, now, info))
			continue;
		if (answers_before(&rt->r->a) && !rt->r->a.overtake_ua &&
		    fl_lun_ua_pending(L->lun, cmd)) {
			rt->seen = seen;
			rt->fired = fired;
			rt->rng = rng;
			*ua_first = (long)c.v[i];
			break;
		}
		hit = (long)c.v[i];
		break;
	}
	if (c.v != c.small)
		free(c.v);
	return hit;
}

/* ---- state machine ---- */

/* Calls the transport notifier, if any (no lock held). */
void engine_notify(struct fl_engine *e)
{
	void (*fn)(void *);
	void *ctx;

	pthread_mutex_lock(&e->lock);
	fn = e->xport_notify;
	ctx = e->xport_ctx;
	pthread_mutex_unlock(&e->lock);
	if (fn)
		fn(ctx);
}

/* Fires when the current state has lasted long enough for an after_ms transition. */
static void state_timer_fired(struct fl_timer *tn)
{
	struct fl_engine *e =
	    (struct fl_engine *)((char *)tn - offsetof(struct fl_engine, state_timer));
	bool moved = false;

	pthread_mutex_lock(&e->lock);
	if (!e->closing) {
		uint64_t elapsed_ms = (fl_mono_ns() - e->state_since_ns) / 1000000;
		const struct fl_scenario *sc = e->prog->sc;

		for (size_t i = 0; i < sc->ntransitions && !moved; i++) {
			const struct sc_transition *t = &sc->transitions[i];

			if (t->on != ON_AFTER_MS || (t->from >= 0 && t->from != e->state) ||
			    t->to == e->state || elapsed_ms < t->n)
				continue;
			engine_set_state(e, t->to, "after_ms");
			moved = true;
		}
		if (!moved)
			engine_arm_state_timers(e);
	}
	pthread_mutex_unlock(&e->lock);
	if (moved)
		engine_notify(e);
}

/* Fires when a pending logout request becomes due. */
static void logout_timer_fired(struct fl_timer *tn)
{
	struct fl_engine *e =
	    (struct fl_engine *)((char *)tn - offsetof(struct fl_engine, logout_timer));

	engine_notify(e);
}

/* Arms the timers of the current state (e->lock held). */
void engine_arm_state_timers(struct fl_engine *e)
{
	const struct fl_scenario *sc = e->prog->sc;
	uint64_t best = UINT64_MAX;
	const struct sc_session *ss = &sc->state_session[e->state];
	const struct sc_session *s = (ss->set & SESS_LOGOUT) ? ss : &sc->session;

	timers_cancel(e->timers, &e->state_timer);
	for (size_t i = 0; i < sc->ntransitions; i++) {
		const struct sc_transition *t = &sc->transitions[i];

		if (t->on == ON_AFTER_MS && (t->from < 0 || t->from == e->state) &&
		    t->to != e->state && t->n < best)
			best = t->n;
	}
	e->state_timer.fn = state_timer_fired;
	if (best != UINT64_MAX)
		timers_add(e->timers, &e->state_timer, e->state_since_ns + best * 1000000);
	timers_cancel(e->timers, &e->logout_timer);
	e->logout_timer.fn = logout_timer_fired;
	if ((s->set & SESS_LOGOUT) && s->request_logout && s->logout_after_ms)
		timers_add(e->timers, &e->logout_timer,
			   (s == ss ? e->state_since_ns : e->armed_ns) +
			       (uint64_t)s->logout_after_ms * 1000000);
}

/* Moves the state machine to state s (e->lock held). */
void engine_set_state(struct fl_engine *e, int s, const char *why)
{
	const struct fl_scenario *sc = e->prog->sc;
	json_t *o;

	if (s < 0 || (size_t)s >= sc->nstates || s == e->state)
		return;
	o = trace_event(&e->trace, "state");
	json_object_set_new(o, "from", json_string(sc->states[e->state]));
	json_object_set_new(o, "to", json_string(sc->states[s]));
	json_object_set_new(o, "why", json_string(why));
	trace_emit(&e->trace, o);
	e->state = s;
	e->state_since_ns = fl_mono_ns();
	e->state_cmds = 0;
	e->state_gen++;
	engine_arm_state_timers(e);
}

/* Runs the first transition that event `on` triggers (e->lock held). */
bool engine_event(struct fl_engine *e, enum sc_on on, int tmf_fn, uint64_t value)
{
	static const char *const why[] = {
	    [ON_COMMANDS] = "commands", [ON_AFTER_MS] = "after_ms",	    [ON_TMF] = "tmf",
	    [ON_RESET] = "reset",	[ON_WRITE_BEYOND] = "write_beyond", [ON_LOGIN] = "login",
	    [ON_LOGOUT] = "logout"};
	const struct fl_scenario *sc = e->prog->sc;

	for (size_t i = 0; i < sc->ntransitions; i++) {
		const struct sc_transition *t = &sc->transitions[i];

		if (t->on != on || (t->from >= 0 && t->from != e->state) || t->to == e->state)
			continue;
		if ((on == ON_COMMANDS || on == ON_WRITE_BEYOND) && value < t->n)
			continue;
		if (on == ON_TMF && t->tmf_fn != tmf_fn)
			continue;
		engine_set_state(e, t->to, why[on]);
		return true;
	}
	return false;
}

/* ---- actions ---- */

/* Hands the command back to its submitter and frees p. */
static void pend_finish(struct pend *p)
{
	struct fl_cmd *cmd = p->cmd;
	fl_cmd_done_fn done = p->done;

	cmd->done = done;
	cmd->engine_priv = NULL;
	cmd->decoded = false; /* as the core does when it completes a command */
	free(p);
	done(cmd);
}

/* Completes a pending command as aborted (no lock held). */
void pend_complete_aborted(struct pend *p)
{
	struct fl_cmd *cmd = p->cmd;

	cmd->aborted = true;
	cmd->no_response = true;
	cmd->status = FL_STATUS_TASK_ABORTED;
	cmd->sense_len = 0;
	cmd->data_in_len = 0;
	pend_finish(p);
}

/* Records the LBAs heal-able rules lose their fault on (a good write [lo, hi]). */
static void heal_write(struct fl_engine *e, uint16_t lun, const struct fl_cdb_info *ci)
{
	struct program *p;
	uint64_t lo = ci->lba, hi = ci->lba + (ci->nblocks ? ci->nblocks - 1 : 0);

	pthread_mutex_lock(&e->lock);
	p = e->prog;
	for (size_t i = 0; i < p->nrules; i++) {
		struct rt_rule *rt = &p->rules[i];
		const struct sc_rule *r = rt->r;
		uint64_t a = lo, b = hi, x;
		json_t *o;

		if (!r->until_written || r->m.lba == LBA_CROSSES_END)
			continue;
		if (!r->m.lun_any && !(r->m.lun_map[lun / 8] & (1u << (lun % 8))))
			continue;
		if (r->m.lba == LBA_RANGE) {
			a = lo > r->m.first ? lo : r->m.first;
			b = hi < r->m.last ? hi : r->m.last;
			if (a > b)
				continue;
		}
		if (!first_unhealed(rt, lun, a, b, &x))
			continue;
		if (rt->nhealed == rt->healcap) {
			size_t c = rt->healcap ? rt->healcap * 2 : 8;
			struct heal_ival *v = realloc(rt->healed, c * sizeof(*v));

			if (!v)
				continue;
			rt->healed = v;
			rt->healcap = c;
		}
		rt->healed[rt->nhealed++] = (struct heal_ival){.lun = lun, .lo = a, .hi = b};
		o = trace_event(&e->trace, "heal");
		json_object_set_new(o, "lun", json_integer(lun));
		json_object_set_new(o, "rule", json_string(r->id));
		json_object_set_new(o, "lba", json_integer((json_int_t)a));
		json_object_set_new(o, "blocks", json_integer((json_int_t)(b - a + 1)));
		trace_emit(&e->trace, o);
	}
	pthread_mutex_unlock(&e->lock);
}

/* fl_action_env.event: a trace line of the engine's. */
static json_t *env_event(void *engine, const char *event)
{
	return trace_event(&((struct fl_engine *)engine)->trace, event);
}

/* fl_action_env.emit: writes a trace line of the engine's. */
static void env_emit(void *engine, json_t *o)
{
	trace_emit(&((struct fl_engine *)engine)->trace, o);
}

/* fl_action_env.next: the next number of an injection's own stream. */
static uint64_t env_next(void *rng)
{
	return fl_prng_next(rng);
}

/* fl_action_env.resize: resizes the LUN as the action asks, logging a size it cannot take. */
static int env_resize(void *engine, const struct fl_action_env *x)
{
	struct fl_engine *e = engine;
	struct eng_lun *L = x->lun_id < FL_MAX_LUNS ? e->by_id[x->lun_id] : NULL;
	char msg[256];
	uint64_t blocks;
	int r;

	if (!L)
		return -ENOENT;
	blocks = engine_resize_blocks(L, x->a, msg, sizeof(msg));
	r = blocks ? engine_resize(e, L, blocks, x->why) : -EINVAL;
	if (!blocks)
		fl_log(FL_LOG_ERR, "%s: %s; the size is unchanged\n", x->why, msg);
	else if (r)
		fl_log(FL_LOG_ERR, "%s: resize of LUN %u to %" PRIu64 " blocks: %s\n", x->why,
		       L->id, blocks, strerror(-r));
	return r;
}

/* What the engine lends an action's hooks for action a on LUN L (cmd may be NULL). */
static void env_init(struct fl_action_env *x, struct fl_engine *e, struct eng_lun *L,
		     const struct sc_action *a, struct fl_cmd *cmd, const char *why)
{
	*x = (struct fl_action_env){.a = a,
				    .lun = L->lun,
				    .lun_id = L->id,
				    .block_size = L->block_size,
				    .cmd = cmd,
				    .why = why,
				    .engine = e,
				    .event = env_event,
				    .emit = env_emit,
				    .next = env_next,
				    .resize = env_resize,
				    .write_later = engine_write_later};
}

/* The core completed an intercepted command: the action's after-hook, healing, then done. */
static void after_done(struct fl_cmd *cmd)
{
	struct pend *p = cmd->engine_priv;
	const struct sc_action *a = p->rule ? &p->rule->a : NULL;
	const struct fl_action *act = a ? fl_action_by_verb(a->verb) : NULL;
	bool good = cmd->status == FL_STATUS_GOOD;

	if (act && act->after && fl_action_phase(a) == FL_PHASE_AFTER) {
		struct fl_action_env x;
		struct fl_prng g;

		/* the injection's own stream: seeded at match time from the rule's */
		fl_prng_seed(&g, p->corrupt_seed, 0);
		env_init(&x, p->e, p->L, a, cmd, p->rule->id);
		x.info = p->info;
		x.rng = &g;
		act->after(&x);
	}
	if (p->heal && good)
		heal_write(p->e, p->L->id, &p->ci);
	pend_finish(p);
}

/* Submits to the core, intercepting the completion when p has work after it. */
static void pend_exec(struct pend *p)
{
	const struct sc_action *a = p->rule ? &p->rule->a : NULL;
	struct fl_cmd *cmd = p->cmd;
	struct fl_lun *lun = p->L->lun;

	if (p->heal || (a && fl_action_phase(a) == FL_PHASE_AFTER)) {
		p->stage = PEND_EXEC;
		cmd->engine_priv = p;
		cmd->done = after_done;
		fl_lun_submit(lun, cmd);
		return;
	}
	cmd->done = p->done;
	free(p);
	fl_lun_submit(lun, cmd);
}

/* Carries out a LUN-wide effect (ua, power_loss, resize, alua, owner); no lock held. */
void engine_lun_effect(struct fl_engine *e, struct eng_lun *L, const struct sc_action *a,
		       const char *why)
{
	const struct fl_action *act = fl_action_by_verb(a->verb);
	struct fl_action_env x;

	if (!act || !act->effect)
		return;
	env_init(&x, e, L, a, NULL, why);
	act->effect(&x);
}

/* Carries out the rule's verb (no lock held); p is consumed. */
static void run_action(struct pend *p)
{
	const struct sc_action *a = &p->rule->a;
	struct fl_cmd *cmd = p->cmd;

	const struct fl_action *act = fl_action_by_verb(a->verb);
	struct fl_action_env x;

	switch (fl_action_phase(a)) {
	case FL_PHASE_BEFORE:
		/* the action answers in place of the LUN: no data, no sense but its own */
		cmd->data_in_len = 0;
		cmd->sense_len = 0;
		env_init(&x, p->e, p->L, a, cmd, p->rule->id);
		x.info = p->info;
		act->before(&x);
		pend_finish(p);
		return;
	case FL_PHASE_EFFECT:
		engine_lun_effect(p->e, p->L, a, p->rule->id);
		break;
	default:
		break; /* after-actions: pend_exec intercepts the completion */
	}
	pend_exec(p);
}

/* A delayed command's timer fired: carry on, unless a TMF aborted it meanwhile. */
static void delay_fired(struct fl_timer *tn)
{
	struct pend *p = (struct pend *)tn;
	struct fl_engine *e = p->e;
	bool abort;

	pthread_mutex_lock(&e->lock);
	if (p->in_list)
		pend_unlink(e, p);
	abort = p->abort_requested;
	pthread_mutex_unlock(&e->lock);
	if (abort)
		pend_complete_aborted(p);
	else
		run_action(p);
}

/* Links p into the pending list (e->lock held). */
static void pend_link(struct fl_engine *e, struct pend *p)
{
	p->prev = NULL;
	p->next = e->pending;
	if (e->pending)
		e->pending->prev = p;
	e->pending = p;
	p->in_list = true;
	e->npending++;
}

/* Unlinks p from the pending list (e->lock held). */
void pend_unlink(struct fl_engine *e, struct pend *p)
{
	if (!p->in_list)
		return;
	if (p->prev)
		p->prev->next = p->next;
	else
		e->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->in_list = false;
	e->npending--;
}

/* Ends a hold early and executes the command normally (no lock held). */
void pend_release_execute(struct pend *p)
{
	pend_exec(p);
}

/* Traces one injection (e->lock held). */
static void trace_inject(struct fl_engine *e, const struct eng_lun *L, const struct fl_cmd *cmd,
			 const struct fl_cdb_info *ci, const struct sc_rule *r, uint64_t info,
			 uint64_t delay_ns)
{
	json_t *o = trace_event(&e->trace, "inject");
	const struct sc_action *a = &r->a;
	const struct fl_action *act = fl_action_by_verb(a->verb);

	if (!o)
		return;
	engine_cmd_fields(e, o, L->id, cmd, ci);
	json_object_set_new(o, "rule", json_string(r->id));
	json_object_set_new(o, "action", json_string(act->trace_action));
	if (act->trace)
		act->trace(o, a, info);
	if (a->has_delay)
		json_object_set_new(o, "delay_us", json_integer((json_int_t)(delay_ns / 1000)));
	if (a->set_state >= 0)
		json_object_set_new(o, "set_state", json_string(e->prog->sc->states[a->set_state]));
	trace_emit(&e->trace, o);
}

/* Traces a rule standing back for a pending unit attention (e->lock held). */
static void trace_ua_first(struct fl_engine *e, const struct eng_lun *L, const struct fl_cmd *cmd,
			   const struct fl_cdb_info *ci, const struct sc_rule *r)
{
	json_t *o = trace_event(&e->trace, "ua_first");

	if (!o)
		return;
	engine_cmd_fields(e, o, L->id, cmd, ci);
	json_object_set_new(o, "rule", json_string(r->id));
	trace_emit(&e->trace, o);
}

/* A held command's action sees it before it is linked (a TMF may end it once it is). */
static void held_hook(struct fl_engine *e, struct eng_lun *L, const struct sc_rule *r,
		      const struct fl_action *desc, struct fl_cmd *cmd, uint64_t info)
{
	struct fl_action_env x;

	env_init(&x, e, L, &r->a, cmd, r->id);
	x.info = info;
	desc->held(&x);
}

/* A pending command of cmd on L (zeroed but for its command, LUN and decode); NULL: ENOMEM. */
static struct pend *pend_new(struct fl_engine *e, struct eng_lun *L, struct fl_cmd *cmd,
			     const struct fl_cdb_info *ci)
{
	struct pend *p = calloc(1, sizeof(*p));

	if (p) {
		p->e = e;
		p->cmd = cmd;
		p->done = cmd->done;
		p->L = L;
		p->ci = *ci;
	}
	return p;
}

/*
 * Applies rule rt to cmd, under e->lock: counts it, draws its delay (*delay_ns), traces it,
 * sets the state it names, and holds or delays the command. Returns the pending command
 * (NULL when it could not be allocated); heal says whether a write would heal what it
 * overwrites.
 */
static struct pend *inject(struct fl_engine *e, struct eng_lun *L, struct fl_cmd *cmd,
			   const struct fl_cdb_info *ci, struct rt_rule *rt, uint64_t info,
			   bool heal, uint64_t *delay_ns)
{
	const struct sc_rule *r = rt->r;
	const struct fl_action *desc = fl_action_by_verb(r->a.verb);
	struct pend *p;

	e->counters.injected++;
	if (r->a.has_delay) {
		*delay_ns = delay_draw(&r->a.delay, &rt->rng);
		e->counters.delayed++;
	}
	if (desc->counter == FL_COUNT_HELD)
		e->counters.held++;
	else if (desc->counter == FL_COUNT_DROPPED)
		e->counters.dropped++;
	p = pend_new(e, L, cmd, ci);
	if (p) {
		p->rule = r;
		p->rt = rt;
		/* a write the rule ends before the LUN sees it heals nothing */
		p->heal = heal && desc->phase != FL_PHASE_BEFORE;
		fl_timer_init(&p->tn, delay_fired);
		p->info = info;
		p->since_ns = fl_mono_ns();
		if (desc->draws_seed)
			p->corrupt_seed = fl_prng_next(&rt->rng);
		if (desc->phase == FL_PHASE_HOLD) {
			if (desc->held)
				held_hook(e, L, r, desc, cmd, info);
			p->stage = PEND_HELD;
			pend_link(e, p);
		} else if (r->a.has_delay) {
			p->stage = PEND_DELAYED;
			pend_link(e, p);
		}
	}
	trace_inject(e, L, cmd, ci, r, info, *delay_ns);
	if (r->a.set_state >= 0)
		engine_set_state(e, r->a.set_state, r->id);
	return p;
}

/* The pass-through: submits cmd to LUN lun_id through the rules. */
void fl_engine_submit(struct fl_engine *e, uint16_t lun_id, struct fl_cmd *cmd)
{
	struct eng_lun *L = lun_id < FL_MAX_LUNS ? e->by_id[lun_id] : NULL;
	struct fl_cdb_info ci;
	struct pend *p = NULL;
	const struct sc_rule *r = NULL;
	uint64_t info = 0, delay_ns = 0;
	long hit, ua_first = -1;
	bool heal, notify = false;
	int old_state;
	enum pend_stage stage;

	cmd->no_response = false;
	cmd->aborted = false;
	cmd->engine_priv = NULL;
	if (!L) {
		pthread_mutex_lock(&e->lock);
		e->counters.commands++;
		pthread_mutex_unlock(&e->lock);
		fl_target_submit(e->tgt, lun_id, cmd);
		return;
	}
	ci = *fl_cmd_decode(cmd); /* the core reuses it: one decode per command */
	pthread_mutex_lock(&e->lock);
	old_state = e->state;
	e->counters.commands++;
	if (e->prog->has_write_beyond && ci.cls == FL_CLASS_WRITE && ci.has_lba)
		engine_event(e, ON_WRITE_BEYOND, 0, ci.lba + (ci.nblocks ? ci.nblocks - 1 : 0));
	hit = match_rules(e, L, cmd, &ci, &info, &ua_first);
	if (ua_first >= 0)
		trace_ua_first(e, L, cmd, &ci, e->prog->rules[ua_first].r);
	heal = e->prog->has_until_written && ci.cls == FL_CLASS_WRITE && ci.has_lba;
	if (hit >= 0) {
		r = e->prog->rules[hit].r;
		p = inject(e, L, cmd, &ci, &e->prog->rules[hit], info, heal, &delay_ns);
	} else if (heal) {
		p = pend_new(e, L, cmd, &ci);
		if (p)
			p->heal = true;
	}
	e->state_cmds++;
	engine_event(e, ON_COMMANDS, 0, e->state_cmds);
	notify = e->state != old_state && e->xport_notify;
	/* once linked, p belongs to whoever unlinks it: do not touch it after unlock */
	stage = p ? p->stage : 0;
	if ((stage == PEND_HELD || stage == PEND_DELAYED) && e->closing) {
		/* the engine is going away: nothing would ever end this hold or delay */
		pend_unlink(e, p);
		pthread_mutex_unlock(&e->lock);
		pend_complete_aborted(p);
		return;
	}
	if (stage == PEND_DELAYED)
		timers_add(e->timers, &p->tn, fl_mono_ns() + (e->delays_now ? 0 : delay_ns));
	pthread_mutex_unlock(&e->lock);
	if (notify)
		engine_notify(e);
	if (stage == PEND_HELD || stage == PEND_DELAYED)
		return;
	if (!p) {
		if (r && fl_action_by_verb(r->a.verb)->phase == FL_PHASE_HOLD)
			return; /* could not allocate: the command stays unanswered, as a hold */
		fl_lun_submit(L->lun, cmd);
		return;
	}
	if (!p->rule)
		pend_exec(p);
	else
		run_action(p);
}
