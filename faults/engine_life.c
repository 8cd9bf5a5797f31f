/* SPDX-License-Identifier: MIT */
/*
 * engine_life.c - the fault engine's life cycle and run-time control:
 * fl_engine_create (LUNs from the scenario, trace, timer thread, the first
 * program), fl_engine_destroy, the atomic fl_engine_replace, arming and
 * disarming rules, releasing held commands, counters and accessors.
 */
#include "engine_internal.h"
#include "fl_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* A seed for scenarios that give none (recorded in the trace's first line). */
static uint64_t fresh_seed(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != sizeof(s))
		s = fl_mono_ns() ^ ((uint64_t)getpid() << 32);
	return s & ((1ull << 53) - 1); /* exact in any JSON reader */
}

/*
 * The directory of the scenario file `file`, beneath which its own store
 * paths are opened: the directory of the file itself, links resolved (so
 * /dev/stdin redirected from a file names that file's directory). "." (the
 * working directory) for NULL or a scenario that is not in a file (a pipe).
 * Returns a string to free().
 */
static char *scenario_dir_of(const char *file)
{
	char *real = file ? realpath(file, NULL) : NULL;
	char *slash = real ? strrchr(real, '/') : NULL;
	struct stat st;

	if (!slash || stat(real, &st) || !S_ISREG(st.st_mode)) {
		free(real);
		return strdup(".");
	}
	if (slash == real)
		slash[1] = '\0';
	else
		*slash = '\0';
	return real;
}

/*
 * A personality's ownership transfer, traced as {"event": "owner_moved",
 * "lun", "from", "to", "cause"} so that a check can count transfers by cause
 * (called by the core with the LUN locked; takes only the trace's lock).
 */
static void trace_owner_moved(void *arg, uint16_t lun_id, uint16_t from, uint16_t to,
			      const char *cause)
{
	struct fl_engine *e = arg;
	json_t *o = trace_event(&e->trace, "owner_moved");

	if (!o)
		return;
	json_object_set_new(o, "lun", json_integer(lun_id));
	json_object_set_new(o, "from", json_integer(from));
	json_object_set_new(o, "to", json_integer(to));
	json_object_set_new(o, "cause", json_string(cause));
	trace_emit(&e->trace, o);
}

/* Creates the LUNs of sc into e; a scenario's own store paths are opened beneath scenario_dir. */
static int engine_make_luns_in(struct fl_engine *e, const struct fl_scenario *sc,
			       const struct fl_engine_opts *o, const char *scenario_dir)
{
	for (unsigned i = 0; i < fl_scenario_lun_count(sc); i++) {
		struct fl_lun_config cfg;
		struct fl_lun_info info;
		struct fl_lun *lun;
		char *path = NULL;
		uint16_t id;
		int r;

		fl_scenario_lun(sc, i, &id, &cfg);
		if (cfg.personality.name) {
			cfg.personality.moved = trace_owner_moved;
			cfg.personality.moved_arg = e;
		}
		if (cfg.store == FL_STORE_FILE)
			cfg.store_dir = scenario_dir;
		if (o && o->store_override) {
			cfg.store_dir = NULL;
			cfg.store = o->store;
			if (o->store == FL_STORE_FILE) {
				if (!o->store_path)
					return -EINVAL;
				if (fl_scenario_lun_count(sc) > 1) {
					if (asprintf(&path, "%s.%u", o->store_path, id) < 0)
						return -ENOMEM;
					cfg.store_path = path;
				} else {
					cfg.store_path = o->store_path;
				}
			}
		}
		if (o && o->size_override)
			cfg.num_blocks = o->size_override / cfg.block_size;
		if (cfg.thin && cfg.pool_blocks > cfg.num_blocks)
			cfg.pool_blocks = cfg.num_blocks;
		r = fl_lun_create(&cfg, &lun);
		free(path);
		if (r)
			return r;
		r = fl_target_add_lun(e->tgt, id, lun);
		if (r) {
			fl_lun_destroy(lun);
			return r;
		}
		fl_lun_get_info(lun, &info);
		e->luns[e->nluns] = (struct eng_lun){.id = id,
						     .lun = lun,
						     .num_blocks = info.num_blocks,
						     .block_size = info.block_size};
		e->by_id[id] = &e->luns[e->nluns];
		e->nluns++;
	}
	return 0;
}

/* Creates the LUNs of sc into e (with the options' overrides). */
static int engine_make_luns(struct fl_engine *e, const struct fl_scenario *sc,
			    const struct fl_engine_opts *o)
{
	char *scenario_dir = scenario_dir_of(o ? o->scenario_file : NULL);
	int r = scenario_dir ? engine_make_luns_in(e, sc, o, scenario_dir) : -ENOMEM;

	free(scenario_dir);
	return r;
}

/* Writes the trace's first line (e->lock held or not yet shared). */
static void trace_start(struct fl_engine *e, const char *event)
{
	static const char *const fe[] = {"any", "iscsi", "tcmu", "any", "vm"};
	json_t *o = trace_event(&e->trace, event);

	json_object_set_new(o, "seed", json_u64(e->seed));
	/* The trace's time origin on CLOCK_MONOTONIC, to merge it with other clocks. */
	json_object_set_new(o, "t0_mono_us", json_u64(e->trace.t0_ns / 1000));
	json_object_set_new(o, "scenario", json_string(fl_scenario_name(e->prog->sc)));
	json_object_set_new(o, "state", json_string(e->prog->sc->states[e->state]));
	json_object_set_new(o, "frontend", json_string(e->frontend < 5 ? fe[e->frontend] : "any"));
	json_object_set_new(o, "rules", json_integer((json_int_t)e->prog->nrules));
	trace_emit(&e->trace, o);
}

/* Builds the LUNs the scenario describes and arms its rules. */
int fl_engine_create(const struct fl_scenario *csc, const struct fl_engine_opts *opts,
		     struct fl_engine **out)
{
	struct fl_scenario *sc = (struct fl_scenario *)csc; /* only its refcount changes */
	struct fl_engine *e = calloc(1, sizeof(*e));
	int fd = -1, r;
	bool own = false;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	pthread_mutex_init(&e->lock, NULL);
	e->frontend = opts ? opts->frontend : 0;
	e->delays_now = opts && opts->delays_now;
	e->seed = opts && opts->seed_set ? opts->seed : sc->seed_set ? sc->seed : fresh_seed();
	fl_timer_init(&e->state_timer, NULL); /* fn set when armed */
	fl_timer_init(&e->logout_timer, NULL);
	if (opts && opts->trace_path) {
		fd = open(opts->trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
			  0644);
		if (fd < 0) {
			r = -errno;
			fl_log(FL_LOG_ERR, "cannot open trace %s: %s\n", opts->trace_path,
			       strerror(errno));
			pthread_mutex_destroy(&e->lock);
			free(e);
			return r;
		}
		own = true;
	} else if (opts && opts->trace_fd > 0) {
		fd = opts->trace_fd;
	}
	trace_init(&e->trace, fd, own);
	r = timers_start(&e->timers);
	if (r)
		goto fail_trace;
	r = fl_target_create(&e->tgt);
	if (r)
		goto fail_timers;
	r = engine_make_luns(e, sc, opts);
	if (r)
		goto fail_target;
	e->prog = program_build(e, sc);
	if (!e->prog) {
		r = -ENOMEM;
		goto fail_target;
	}
	e->state = 0;
	e->state_since_ns = e->armed_ns = fl_mono_ns();
	trace_start(e, "start");
	pthread_mutex_lock(&e->lock);
	engine_arm_state_timers(e);
	pthread_mutex_unlock(&e->lock);
	*out = e;
	return 0;
fail_target:
	fl_target_destroy(e->tgt);
fail_timers:
	timers_stop(e->timers);
fail_trace:
	trace_close(&e->trace);
	pthread_mutex_destroy(&e->lock);
	free(e);
	return r;
}

/* A front end's loop takes the engine's timers over. */
int fl_engine_timers_adopt(struct fl_engine *e, void (*kick)(void *arg), void *arg)
{
	return timers_adopt(e->timers, kick, arg);
}

/* Gives the timers back to the engine's own thread. */
int fl_engine_timers_release(struct fl_engine *e)
{
	return timers_release(e->timers);
}

/* Fires the timers that are due; returns the next deadline. */
uint64_t fl_engine_timers_run(struct fl_engine *e, unsigned *fired)
{
	return timers_run_due(e->timers, fired);
}

/* Completes every held or delayed command as aborted, stops timers, destroys the LUNs. */
void fl_engine_destroy(struct fl_engine *e)
{
	struct fl_timer **drained = NULL;
	struct pend *p;
	struct tmf_pend *t;

	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->closing = true;
	pthread_mutex_unlock(&e->lock);
	timers_drain(e->timers, &drained);
	free(drained);
	timers_stop(e->timers);
	/* the timer thread is gone: every pending entry is ours */
	pthread_mutex_lock(&e->lock);
	p = e->pending;
	e->pending = NULL;
	t = e->tmf_pending;
	e->tmf_pending = NULL;
	pthread_mutex_unlock(&e->lock);
	while (p) {
		struct pend *next = p->next;

		p->in_list = false;
		pend_complete_aborted(p);
		p = next;
	}
	engine_late_drop_all(e);
	while (t) {
		struct tmf_pend *next = t->next;

		t->tmf->done(t->tmf, FL_TMF_RESP_NONE);
		free(t);
		t = next;
	}
	fl_target_destroy(e->tgt);
	program_free(e->prog);
	while (e->retired) {
		struct program *next = e->retired->next_retired;

		program_free(e->retired);
		e->retired = next;
	}
	trace_close(&e->trace);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* The target holding the engine's LUNs. */
struct fl_target *fl_engine_target(struct fl_engine *e)
{
	return e->tgt;
}

/* Replaces the rules, TMF and transport behaviour and state machine; atomic. */
int fl_engine_replace(struct fl_engine *e, const struct fl_scenario *csc)
{
	struct program *np = program_build(e, (struct fl_scenario *)csc);

	if (!np)
		return -ENOMEM;
	pthread_mutex_lock(&e->lock);
	/* commands held under the old program keep pointers into it: retire, never free */
	e->prog->next_retired = e->retired;
	e->retired = e->prog;
	e->prog = np;
	e->state = 0;
	e->state_since_ns = e->armed_ns = fl_mono_ns();
	e->state_cmds = 0;
	e->state_gen++;
	trace_start(e, "replace");
	engine_arm_state_timers(e);
	pthread_mutex_unlock(&e->lock);
	engine_notify(e);
	return 0;
}

/*
 * The capacity in blocks a resize action asks of LUN L, or 0 with the reason
 * in msg (quoting the bad value and the limit): a size of 0, a byte size not
 * a multiple of the block size, or more than FL_LUN_MAX_BLOCKS blocks.
 */
uint64_t engine_resize_blocks(const struct eng_lun *L, const struct sc_action *a, char *msg,
			      size_t len)
{
	const struct fl_action *d = fl_action_by_verb(a->verb);

	if (!d || !d->capacity) {
		snprintf(msg, len, "the action %s does not resize", sc_verb_name(a->verb));
		return 0;
	}
	return d->capacity(a, L->block_size, L->id, msg, len);
}

/*
 * Resizes a LUN in the core and in the engine together (no lock held). The
 * engine lock is held across both, so no command is matched against one
 * capacity and executed against the other; why names the rule or front end.
 */
int engine_resize(struct fl_engine *e, struct eng_lun *L, uint64_t num_blocks, const char *why)
{
	uint64_t old;
	json_t *o;
	int r;

	pthread_mutex_lock(&e->lock);
	old = L->num_blocks;
	r = fl_lun_resize(L->lun, num_blocks);
	if (!r)
		L->num_blocks = num_blocks;
	pthread_mutex_unlock(&e->lock);
	if (r)
		return r;
	o = trace_event(&e->trace, "resize");
	json_object_set_new(o, "lun", json_integer(L->id));
	json_object_set_new(o, "from_blocks", json_u64(old));
	json_object_set_new(o, "blocks", json_u64(num_blocks));
	json_object_set_new(o, "why", json_string(why));
	trace_emit(&e->trace, o);
	return 0;
}

/* Changes the capacity of one LUN, in the core and in the engine's rules alike. */
int fl_engine_resize(struct fl_engine *e, uint16_t lun_id, uint64_t num_blocks)
{
	struct eng_lun *L = lun_id < FL_MAX_LUNS ? e->by_id[lun_id] : NULL;

	if (!L)
		return -ENOENT;
	return engine_resize(e, L, num_blocks, "frontend");
}

/* Arms or disarms a rule by id (SCSI or transport); -ENOENT. e->lock held. */
int engine_arm(struct fl_engine *e, const char *id, bool armed)
{
	struct program *p = e->prog;
	int found = -ENOENT;

	for (size_t i = 0; i < p->nrules; i++)
		if (!strcmp(p->rules[i].r->id, id)) {
			p->rules[i].armed = armed;
			found = 0;
		}
	for (size_t i = 0; i < p->nxrules; i++)
		if (!strcmp(p->xrules[i].r->id, id)) {
			p->xrules[i].armed = armed;
			found = 0;
		}
	if (!found) {
		json_t *o = trace_event(&e->trace, armed ? "arm" : "disarm");

		json_object_set_new(o, "rule", json_string(id));
		trace_emit(&e->trace, o);
	}
	return found;
}

/* Releases held commands (all, or by tag and/or LUN); they execute normally. */
size_t engine_release(struct fl_engine *e, bool all, uint64_t tag, int lun)
{
	struct pend *list = NULL, *p, *next;
	size_t n = 0;

	pthread_mutex_lock(&e->lock);
	for (p = e->pending; p; p = next) {
		next = p->next;
		if (p->stage != PEND_HELD)
			continue;
		if (!all && p->cmd->tag != tag)
			continue;
		if (lun >= 0 && p->L->id != lun)
			continue;
		pend_unlink(e, p);
		p->next = list;
		list = p;
		n++;
		e->counters.released++;
		json_t *o = trace_event(&e->trace, "release");

		engine_cmd_fields(e, o, p->L->id, p->cmd, &p->ci);
		json_object_set_new(o, "rule", json_string(p->rule->id));
		json_object_set_new(o, "why", json_string("control"));
		trace_emit(&e->trace, o);
	}
	pthread_mutex_unlock(&e->lock);
	for (p = list; p; p = next) {
		next = p->next;
		pend_release_execute(p);
	}
	return n;
}

/* A consistent snapshot of the counters. */
void fl_engine_get_counters(struct fl_engine *e, struct fl_engine_counters *c)
{
	pthread_mutex_lock(&e->lock);
	*c = e->counters;
	pthread_mutex_unlock(&e->lock);
}

/* The current state's name (owned by the engine). */
const char *fl_engine_state(struct fl_engine *e)
{
	const char *s;

	pthread_mutex_lock(&e->lock);
	s = e->prog->sc->states[e->state];
	pthread_mutex_unlock(&e->lock);
	return s;
}

/* The seed in use (the scenario's, the override, or a fresh one). */
uint64_t fl_engine_seed(struct fl_engine *e)
{
	return e->seed;
}

/* Sets the function called when transport conditions may have changed. */
void fl_engine_set_xport_notify(struct fl_engine *e, void (*fn)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&e->lock);
	e->xport_notify = fn;
	e->xport_ctx = ctx;
	pthread_mutex_unlock(&e->lock);
}
