/* SPDX-License-Identifier: MIT */
/*
 * ctl.c - the control socket of a running engine (docs/control-protocol.md):
 * a UNIX stream socket, mode 0600, that accepts only clients of the same uid
 * (SO_PEERCRED), served by one thread with poll(2). Each request is one JSON
 * object on one line; each answer is one JSON object on one line, {"ok":
 * true, ...} or {"ok": false, "error": "..."}. The "trace" request turns the
 * connection into a stream of trace lines until the client closes it.
 *
 * The thread never blocks on a client: sockets are non-blocking, answers
 * wait in the client's own buffer and go out when poll says the socket takes
 * them. A client that lets more than CTL_MAX_OUT of answers pile up unread
 * is dropped (and logged), so one that never reads cannot stall the others
 * or grow the server. A client that sends nothing and has nothing pending
 * for CTL_IDLE_S seconds is closed (trace subscribers excepted), and when the
 * table is full a newcomer takes the place of the client idle longest, so
 * that idle clients cannot shut the owner out.
 */
#include "engine_internal.h"
#include "fl_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Largest request line (a scenario sent inline fits easily). */
#define CTL_MAX_LINE (16u << 20)
#define CTL_MAX_CLIENTS 32
/*
 * Answers a client may leave unread before it is dropped; one answer larger
 * than this is still sent to a client with nothing else pending.
 */
#define CTL_MAX_OUT (1u << 20)
/* Requests of one client answered before the others get their turn. */
#define CTL_BATCH 32
/* A client silent this long with nothing pending is closed (docs/control-protocol.md). */
#define CTL_IDLE_S 30

struct ctl_client {
	int fd;
	char *buf; /* request bytes not yet answered */
	size_t len, cap;
	char *out; /* answers not yet sent: out[off, len) */
	size_t out_off, out_len, out_cap;
	bool streaming;	  /* subscribed to the trace */
	bool want_stream; /* asked for the trace: subscribed once its answers are out */
	bool backlog;	  /* complete request lines wait for the next turn */
	bool eof;	  /* the client sent all it will: closed once its answers are out */
	bool dead;	  /* to be dropped */
	uint64_t last_ns; /* monotonic time of its latest request bytes (or its accept) */
};

struct fl_ctl {
	struct fl_engine *e;
	int lfd;
	int wake[2];
	char *path;
	pthread_t thread;
	struct ctl_client clients[CTL_MAX_CLIENTS];
	size_t nclients;
};

/* Sends one JSON object as a line to a client about to be closed, without waiting; takes obj. */
static void ctl_send_now(int fd, json_t *obj)
{
	char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t len;

	json_decref(obj);
	if (!s)
		return;
	len = strlen(s);
	s[len++] = '\n';
	(void)send(fd, s, len, MSG_DONTWAIT | MSG_NOSIGNAL); /* best effort: closed next */
	free(s);
}

/* Sends what the socket takes of c's pending answers; marks c dead on an error. */
static void ctl_flush(struct fl_ctl *ctl, struct ctl_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			c->dead = true;
			return;
		}
		c->out_off += (size_t)w;
	}
	c->out_off = c->out_len = 0;
	if (c->eof && !c->backlog)
		c->dead = true;
	if (c->want_stream && !c->streaming && !c->dead) {
		/* the trace starts after the answer that says so */
		c->streaming = true;
		trace_subscribe(&ctl->e->trace, c->fd);
	}
}

/*
 * Queues one JSON object as a line for client c and sends what the socket
 * takes; takes obj. Past CTL_MAX_OUT of unread answers the client is marked
 * dead (it is dropped by the loop) and the answer discarded.
 */
static void ctl_send(struct fl_ctl *ctl, struct ctl_client *c, json_t *obj)
{
	char *s;
	size_t len, pending = c->out_len - c->out_off;

	if (c->dead) {
		json_decref(obj);
		return;
	}
	s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	if (!s)
		return;
	len = strlen(s);
	if (pending && pending + len + 1 > CTL_MAX_OUT) {
		fl_log(FL_LOG_WARN,
		       "control socket: dropping a client that leaves its answers unread "
		       "(%zu bytes pending)\n",
		       pending);
		c->dead = true;
		free(s);
		return;
	}
	if (c->out_off && c->out_len + len + 1 > c->out_cap) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_len = pending;
		c->out_off = 0;
	}
	if (c->out_len + len + 1 > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *b;

		while (cap < c->out_len + len + 1)
			cap *= 2;
		b = realloc(c->out, cap);
		if (!b) {
			c->dead = true;
			free(s);
			return;
		}
		c->out = b;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, s, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
	free(s);
	ctl_flush(ctl, c);
}

/* An error answer. */
static json_t *ctl_error(const char *msg)
{
	return json_pack("{s:b, s:s}", "ok", 0, "error", msg);
}

/* The per-rule counters as a JSON array (e->lock held). */
static json_t *rules_json(struct fl_engine *e)
{
	json_t *a = json_array();
	struct program *p = e->prog;

	for (size_t i = 0; i < p->nrules; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:I, s:I}", "id",
						   p->rules[i].r->id, "kind", "scsi", "armed",
						   p->rules[i].armed, "seen",
						   (json_int_t)p->rules[i].seen, "fired",
						   (json_int_t)p->rules[i].fired));
	for (size_t i = 0; i < p->nxrules; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:I, s:I}", "id",
						   p->xrules[i].r->id, "kind", "transport", "armed",
						   p->xrules[i].armed, "seen",
						   (json_int_t)p->xrules[i].seen, "fired",
						   (json_int_t)p->xrules[i].fired));
	return a;
}

/* "counters": engine counters and per-rule counters. */
static json_t *do_counters(struct fl_engine *e)
{
	json_t *r;
	struct fl_engine_counters c;

	pthread_mutex_lock(&e->lock);
	c = e->counters;
	r = json_pack("{s:b, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:I, s:o}", "ok", 1,
		      "counters", "commands", (json_int_t)c.commands, "injected",
		      (json_int_t)c.injected, "held", (json_int_t)c.held, "released",
		      (json_int_t)c.released, "dropped", (json_int_t)c.dropped, "delayed",
		      (json_int_t)c.delayed, "tmfs", (json_int_t)c.tmfs, "resets",
		      (json_int_t)c.resets, "pending", (json_int_t)e->npending, "rules",
		      rules_json(e));
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* "status": scenario, state, seed, LUNs. */
static json_t *do_status(struct fl_engine *e)
{
	json_t *r, *luns = json_array();

	pthread_mutex_lock(&e->lock);
	for (size_t i = 0; i < e->nluns; i++)
		json_array_append_new(luns, json_pack("{s:i, s:I, s:i}", "lun", e->luns[i].id,
						      "blocks", (json_int_t)e->luns[i].num_blocks,
						      "block_size", (int)e->luns[i].block_size));
	r = json_pack("{s:b, s:s, s:s, s:o, s:o, s:I}", "ok", 1, "scenario",
		      fl_scenario_name(e->prog->sc), "state", e->prog->sc->states[e->state], "seed",
		      json_u64(e->seed), "luns", luns, "pending", (json_int_t)e->npending);
	pthread_mutex_unlock(&e->lock);
	return r;
}

/* "held": the held and delayed commands. */
static json_t *do_held(struct fl_engine *e)
{
	json_t *a = json_array();
	uint64_t now = fl_mono_ns();

	pthread_mutex_lock(&e->lock);
	for (struct pend *p = e->pending; p; p = p->next) {
		json_t *o = json_object();

		engine_cmd_fields(e, o, p->L->id, p->cmd, &p->ci);
		json_object_set_new(o, "rule", json_string(p->rule ? p->rule->id : ""));
		json_object_set_new(o, "stage",
				    json_string(p->stage == PEND_HELD ? "held" : "delayed"));
		json_object_set_new(o, "age_ms",
				    json_integer((json_int_t)((now - p->since_ns) / 1000000)));
		json_array_append_new(a, o);
	}
	pthread_mutex_unlock(&e->lock);
	return json_pack("{s:b, s:o}", "ok", 1, "held", a);
}

/* "load": parse a scenario (text or path) and replace the engine's. */
static json_t *do_load(struct fl_engine *e, json_t *req)
{
	const char *text = json_string_value(json_object_get(req, "text"));
	const char *path = json_string_value(json_object_get(req, "path"));
	const char *name = json_string_value(json_object_get(req, "name"));
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	int r;

	if (!text && !path)
		return ctl_error("load needs \"text\" (the scenario) or \"path\"");
	if (text)
		r = fl_scenario_load_string(name ? name : "<ctl>", text, e->frontend, &sc, &d);
	else
		r = fl_scenario_load_file(path, e->frontend, &sc, &d);
	if (r) {
		json_t *diags = json_array(), *out;
		char *msg = NULL;

		for (size_t i = 0; i < d.n; i++) {
			char *s = NULL;

			if (asprintf(&s, "%s:%d:%d: %s", d.v[i].file, d.v[i].line, d.v[i].col,
				     d.v[i].msg) >= 0) {
				json_array_append_new(diags, json_string(s));
				free(s);
			}
		}
		if (r == -EINVAL)
			r = asprintf(&msg, "the scenario has %zu problem(s); nothing was loaded",
				     d.n + d.more);
		else
			r = asprintf(&msg, "cannot read %s: %s", path ? path : "scenario",
				     strerror(-r));
		out = json_pack("{s:b, s:s, s:o}", "ok", 0, "error", r >= 0 ? msg : "load failed",
				"diagnostics", diags);
		free(msg);
		fl_diags_free(&d);
		return out;
	}
	r = fl_engine_replace(e, sc);
	fl_scenario_free(sc);
	fl_diags_free(&d);
	if (r)
		return ctl_error("out of memory replacing the scenario");
	return json_pack("{s:b, s:s, s:s}", "ok", 1, "scenario", fl_scenario_name(e->prog->sc),
			 "state", fl_engine_state(e));
}

/* "state": read, or set with "set": NAME. */
static json_t *do_state(struct fl_engine *e, json_t *req)
{
	const char *want = json_string_value(json_object_get(req, "set"));
	bool moved = false;
	json_t *r;

	pthread_mutex_lock(&e->lock);
	if (want) {
		const struct fl_scenario *sc = e->prog->sc;
		size_t i;

		for (i = 0; i < sc->nstates; i++)
			if (!strcmp(sc->states[i], want))
				break;
		if (i == sc->nstates) {
			char msg[1024];
			int n = snprintf(msg, sizeof(msg), "no such state '%s' (states:", want);

			for (i = 0; i < sc->nstates && n > 0 && (size_t)n < sizeof(msg); i++)
				n += snprintf(msg + n, sizeof(msg) - (size_t)n, " %s",
					      sc->states[i]);
			if (n > 0 && (size_t)n < sizeof(msg))
				snprintf(msg + n, sizeof(msg) - (size_t)n, ")");
			pthread_mutex_unlock(&e->lock);
			return ctl_error(msg);
		}
		moved = (int)i != e->state;
		engine_set_state(e, (int)i, "control");
	}
	r = json_pack("{s:b, s:s}", "ok", 1, "state", e->prog->sc->states[e->state]);
	pthread_mutex_unlock(&e->lock);
	if (moved)
		engine_notify(e);
	return r;
}

/* "arm" / "disarm": a rule by id. */
static json_t *do_arm(struct fl_engine *e, json_t *req, bool armed)
{
	const char *id = json_string_value(json_object_get(req, "rule"));
	int r;

	if (!id)
		return ctl_error("needs \"rule\": the rule id");
	pthread_mutex_lock(&e->lock);
	r = engine_arm(e, id, armed);
	if (r) {
		const struct program *p = e->prog;
		char msg[1024];
		int n = snprintf(msg, sizeof(msg), "no rule '%s' (rules:", id);

		for (size_t i = 0; i < p->nrules + p->nxrules && n > 0 && (size_t)n < sizeof(msg);
		     i++)
			n += snprintf(msg + n, sizeof(msg) - (size_t)n, " %s",
				      i < p->nrules ? p->rules[i].r->id
						    : p->xrules[i - p->nrules].r->id);
		if (n > 0 && (size_t)n < sizeof(msg))
			snprintf(msg + n, sizeof(msg) - (size_t)n, "%s)",
				 p->nrules + p->nxrules ? "" : " none");
		pthread_mutex_unlock(&e->lock);
		return ctl_error(msg);
	}
	pthread_mutex_unlock(&e->lock);
	return json_pack("{s:b, s:s, s:b}", "ok", 1, "rule", id, "armed", armed);
}

/* "release": held commands, all or by tag (and LUN). */
static json_t *do_release(struct fl_engine *e, json_t *req)
{
	json_t *tag = json_object_get(req, "tag"), *lun = json_object_get(req, "lun");
	bool all = json_is_true(json_object_get(req, "all"));
	size_t n;

	if (!all && !json_is_integer(tag))
		return ctl_error(
		    "release needs \"all\": true or \"tag\": N (and optionally \"lun\")");
	n = engine_release(e, all, json_is_integer(tag) ? (uint64_t)json_integer_value(tag) : 0,
			   json_is_integer(lun) ? (int)json_integer_value(lun) : -1);
	return json_pack("{s:b, s:I}", "ok", 1, "released", (json_int_t)n);
}

/* Reads an act's action through the scenario loader, as part of a one-rule scenario, into *sc.
 * Returns NULL, or the error answer (with the loader's diagnostics) when it is refused. */
static json_t *act_parse(json_t *action, struct fl_scenario **sc)
{
	json_t *doc = json_pack("{s:i, s:[{s:s, s:O}]}", "faultlun", 1, "rules", "id", "control",
				"action", action);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	struct fl_diags d = {0};
	char why[320];

	json_decref(doc);
	int r = text ? fl_scenario_load_string("<act>", text, 0, sc, &d) : -ENOMEM;
	free(text);
	if (!r)
		return NULL;
	/* the first reason in the error itself, as a refused resize names its bound */
	snprintf(why, sizeof(why), "bad action%s%.300s", d.n ? ": " : "", d.n ? d.v[0].msg : "");
	json_t *out = ctl_error(why);
	json_t *diags = json_array();

	for (size_t i = 0; i < d.n; i++)
		json_array_append_new(diags, json_string(d.v[i].msg));
	json_object_set_new(out, "diagnostics", diags);
	fl_diags_free(&d);
	return out;
}

/* Traces an act carried out on LUN L. */
static void trace_act(struct fl_engine *e, const struct eng_lun *L, enum sc_verb verb)
{
	json_t *o = trace_event(&e->trace, "act");

	json_object_set_new(o, "lun", json_integer(L->id));
	json_object_set_new(o, "action", json_string(sc_verb_name(verb)));
	trace_emit(&e->trace, o);
}

/* An act moving LUN L to port group group: answered, and a LUN without the personality or the
 * group says why. */
static json_t *act_owner(struct fl_engine *e, struct eng_lun *L, uint16_t group)
{
	char msg[160];
	int r = fl_lun_set_owner(L->lun, group);

	if (r) {
		snprintf(msg, sizeof(msg), "owner of LUN %u to port group %u: %s", L->id, group,
			 r == -ENOTSUP	? "the LUN has no vendor personality"
			 : r == -ENOENT ? "the LUN has no such port group"
					: strerror(-r));
		return ctl_error(msg);
	}
	trace_act(e, L, VERB_OWNER);
	return json_pack("{s:b, s:s}", "ok", 1, "action", sc_verb_name(VERB_OWNER));
}

/* The target port group an alua or owner action names (0: the LUN's default). */
static uint16_t group_of(const struct sc_action *a)
{
	const struct fl_action *d = fl_action_by_verb(a->verb);

	return d && d->group ? d->group(a) : 0;
}

/* "act": a LUN-wide effect now (ua, power_loss, resize, alua), as a rule would. */
static json_t *do_act(struct fl_engine *e, json_t *req)
{
	json_t *lun = json_object_get(req, "lun"), *action = json_object_get(req, "action");
	struct fl_scenario *sc = NULL;
	struct eng_lun *L;
	uint64_t blocks = 0;
	json_t *o;
	int r;

	if (!json_is_integer(lun) || json_integer_value(lun) < 0 ||
	    json_integer_value(lun) >= FL_MAX_LUNS || !json_is_object(action))
		return ctl_error("act needs \"lun\": N and \"action\": {...}");
	L = e->by_id[json_integer_value(lun)];
	if (!L)
		return ctl_error("no such LUN");
	if ((o = act_parse(action, &sc)))
		return o;
	/* the LUN-wide effects of the table of actions: there is no command to act on */
	if (fl_action_by_verb(sc->rules[0].a.verb)->phase != FL_PHASE_EFFECT) {
		fl_scenario_free(sc);
		return ctl_error("act carries out ua, power_loss, resize, alua or owner");
	}
	if (sc->rules[0].a.verb == VERB_RESIZE) {
		/* a size the LUN cannot take is answered, and changes nothing */
		char msg[256];

		blocks = engine_resize_blocks(L, &sc->rules[0].a, msg, sizeof(msg));
		if (!blocks) {
			fl_scenario_free(sc);
			return ctl_error(msg);
		}
	}
	if (sc->rules[0].a.verb == VERB_OWNER) {
		uint16_t group = group_of(&sc->rules[0].a);

		fl_scenario_free(sc);
		return act_owner(e, L, group);
	}
	trace_act(e, L, sc->rules[0].a.verb);
	if (blocks) {
		char msg[160];

		r = engine_resize(e, L, blocks, "control");
		if (r) {
			fl_scenario_free(sc);
			snprintf(msg, sizeof(msg),
				 "resize of LUN %u to %" PRIu64 " blocks failed: %s; the size is "
				 "unchanged",
				 L->id, blocks, strerror(-r));
			return ctl_error(msg);
		}
	} else {
		engine_lun_effect(e, L, &sc->rules[0].a, "control");
	}
	o = json_pack("{s:b, s:s}", "ok", 1, "action", sc_verb_name(sc->rules[0].a.verb));
	fl_scenario_free(sc);
	return o;
}

/*
 * "alua": target port group "group" enters "state" on every LUN that has the
 * group (SPC-4 r37 5.15.2.5: UA 2A/06 for every I_T nexus), as the alua
 * action {"group": G, "state": S} would.
 */
static json_t *do_alua(struct fl_engine *e, json_t *req)
{
	json_t *group = json_object_get(req, "group"), *state = json_object_get(req, "state");
	json_t *doc, *o;
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	unsigned changed = 0;
	char *text;
	int r;

	if (!json_is_integer(group) || json_integer_value(group) < 1 ||
	    json_integer_value(group) > 0xffff || !json_is_string(state))
		return ctl_error("alua needs \"group\": 1..65535 and \"state\": NAME");
	doc = json_pack("{s:i, s:[{s:s, s:{s:{s:O, s:O}}}]}", "faultlun", 1, "rules", "id",
			"control", "action", "alua", "group", group, "state", state);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	r = text ? fl_scenario_load_string("<alua>", text, 0, &sc, &d) : -ENOMEM;
	free(text);
	if (r) {
		fl_diags_free(&d);
		return ctl_error("bad alua state (active_optimized, active_non_optimized, standby, "
				 "unavailable, lba_dependent, offline, transitioning)");
	}
	for (size_t i = 0; i < FL_MAX_LUNS; i++) {
		struct eng_lun *L = e->by_id[i];
		enum fl_alua_state old;

		if (!L || fl_lun_tpg_state(L->lun, group_of(&sc->rules[0].a), &old))
			continue;
		o = trace_event(&e->trace, "act");
		json_object_set_new(o, "lun", json_integer(L->id));
		json_object_set_new(o, "action", json_string("alua"));
		json_object_set_new(o, "group", json_integer(group_of(&sc->rules[0].a)));
		trace_emit(&e->trace, o);
		engine_lun_effect(e, L, &sc->rules[0].a, "control");
		changed++;
	}
	fl_scenario_free(sc);
	if (!changed)
		return ctl_error("no LUN has that target port group");
	return json_pack("{s:b, s:I}", "ok", 1, "luns", (json_int_t)changed);
}

/* Answers one request line; returns false when the connection turns into a trace stream. */
static bool ctl_request(struct fl_ctl *ctl, struct ctl_client *c, const char *line)
{
	json_error_t err;
	json_t *req = json_loads(line, 0, &err), *resp, *id;
	const char *cmd;

	if (!req || !json_is_object(req)) {
		char msg[256];

		snprintf(msg, sizeof(msg), "bad request: %s", req ? "not a JSON object" : err.text);
		json_decref(req);
		ctl_send(ctl, c, ctl_error(msg));
		return true;
	}
	cmd = json_string_value(json_object_get(req, "cmd"));
	if (!cmd)
		resp = ctl_error("a request needs \"cmd\"");
	else if (!strcmp(cmd, "ping"))
		resp = json_pack("{s:b, s:i}", "ok", 1, "protocol", 1);
	else if (!strcmp(cmd, "status"))
		resp = do_status(ctl->e);
	else if (!strcmp(cmd, "counters"))
		resp = do_counters(ctl->e);
	else if (!strcmp(cmd, "held"))
		resp = do_held(ctl->e);
	else if (!strcmp(cmd, "load"))
		resp = do_load(ctl->e, req);
	else if (!strcmp(cmd, "state"))
		resp = do_state(ctl->e, req);
	else if (!strcmp(cmd, "arm"))
		resp = do_arm(ctl->e, req, true);
	else if (!strcmp(cmd, "disarm"))
		resp = do_arm(ctl->e, req, false);
	else if (!strcmp(cmd, "release"))
		resp = do_release(ctl->e, req);
	else if (!strcmp(cmd, "act"))
		resp = do_act(ctl->e, req);
	else if (!strcmp(cmd, "alua"))
		resp = do_alua(ctl->e, req);
	else if (!strcmp(cmd, "trace"))
		resp = json_pack("{s:b, s:b}", "ok", 1, "streaming", 1);
	else
		resp = ctl_error("unknown command (ping, status, counters, held, load, state, arm, "
				 "disarm, release, act, trace)");
	if ((id = json_object_get(req, "id")))
		json_object_set(resp, "id", id);
	if (cmd && !strcmp(cmd, "trace"))
		c->want_stream = true; /* subscribed once this answer is out (ctl_flush) */
	ctl_send(ctl, c, resp);
	if (c->want_stream) {
		json_decref(req);
		return false;
	}
	json_decref(req);
	return true;
}

/* Monotonic nanoseconds. */
static uint64_t ctl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Is c idle: no trace stream, no request or answer pending? */
static bool ctl_idle(const struct ctl_client *c)
{
	return !c->streaming && !c->want_stream && !c->backlog && !c->len &&
	       c->out_off == c->out_len;
}

/* Closes and forgets client i. */
static void ctl_drop(struct fl_ctl *ctl, size_t i)
{
	struct ctl_client *c = &ctl->clients[i];

	if (c->streaming)
		trace_unsubscribe(&ctl->e->trace, c->fd);
	close(c->fd);
	free(c->buf);
	free(c->out);
	ctl->clients[i] = ctl->clients[--ctl->nclients];
}

/* Accepts a client if it runs as our uid. */
static void ctl_accept(struct fl_ctl *ctl)
{
	int fd = accept4(ctl->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != geteuid()) {
		ctl_send_now(
		    fd, ctl_error("permission denied: the control socket serves its owner only"));
		close(fd);
		return;
	}
	if (ctl->nclients == CTL_MAX_CLIENTS) {
		/* the client idle longest makes room; none idle: the newcomer is refused */
		size_t victim = CTL_MAX_CLIENTS;

		for (size_t i = 0; i < ctl->nclients; i++)
			if (ctl_idle(&ctl->clients[i]) &&
			    (victim == CTL_MAX_CLIENTS ||
			     ctl->clients[i].last_ns < ctl->clients[victim].last_ns))
				victim = i;
		if (victim == CTL_MAX_CLIENTS) {
			ctl_send_now(fd, ctl_error("too many control clients"));
			close(fd);
			return;
		}
		fl_log(FL_LOG_WARN,
		       "control socket: %d clients: closing the one idle longest "
		       "for a new one\n",
		       CTL_MAX_CLIENTS);
		ctl_send_now(ctl->clients[victim].fd,
			     ctl_error("closed: idle while the control socket is full"));
		ctl_drop(ctl, victim);
	}
	ctl->clients[ctl->nclients++] = (struct ctl_client){.fd = fd, .last_ns = ctl_now_ns()};
}

/*
 * Answers up to CTL_BATCH complete request lines of c, so that a client
 * sending many cannot hold the others; sets c->backlog when more wait.
 */
static void ctl_process(struct fl_ctl *ctl, struct ctl_client *c)
{
	size_t done = 0;
	unsigned k = 0;
	char *nl;

	c->backlog = false;
	while (c->len && !c->dead && !c->want_stream &&
	       (nl = memchr(c->buf + done, '\n', c->len - done))) {
		char *line = c->buf + done;

		if (k++ == CTL_BATCH) {
			c->backlog = true;
			break;
		}
		*nl = 0;
		done = (size_t)(nl - c->buf) + 1;
		if (line[0])
			ctl_request(ctl, c, line);
	}
	/* one move of what is left per turn: linear in the input */
	if (done) {
		memmove(c->buf, c->buf + done, c->len - done);
		c->len -= done;
		c->buf[c->len] = 0;
	}
	if (c->eof && !c->backlog && c->out_off == c->out_len)
		c->dead = true;
}

/* Reads from client i and answers its first lines; false when it is gone. */
static bool ctl_read(struct fl_ctl *ctl, size_t i)
{
	struct ctl_client *c = &ctl->clients[i];
	char tmp[65536];
	ssize_t n = recv(c->fd, tmp, sizeof(tmp), 0);

	if (n == 0 && !c->streaming && (c->out_off < c->out_len || c->backlog)) {
		c->eof = true; /* answer what it asked, then close */
		return true;
	}
	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN);
	c->last_ns = ctl_now_ns();
	if (c->streaming || c->want_stream)
		return true; /* a streaming client's input is ignored */
	if (c->len + (size_t)n + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		char *b;

		while (cap < c->len + (size_t)n + 1)
			cap *= 2;
		if (cap > CTL_MAX_LINE) {
			ctl_send_now(c->fd, ctl_error("request line too long"));
			return false;
		}
		b = realloc(c->buf, cap);
		if (!b)
			return false;
		c->buf = b;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, tmp, (size_t)n);
	c->len += (size_t)n;
	c->buf[c->len] = 0;
	ctl_process(ctl, c);
	return !c->dead;
}

/* The control thread. */
static void *ctl_main(void *arg)
{
	struct fl_ctl *ctl = arg;

	for (;;) {
		struct pollfd pfd[CTL_MAX_CLIENTS + 2];
		bool backlog = false;
		size_t n = 0;
		uint64_t now = ctl_now_ns(), idle_ns = (uint64_t)CTL_IDLE_S * 1000000000u;
		int wait_ms = -1;

		/* clients idle for CTL_IDLE_S go; the poll wakes for the next one due */
		for (size_t i = ctl->nclients; i-- > 0;) {
			const struct ctl_client *c = &ctl->clients[i];

			if (!ctl_idle(c))
				continue;
			if (now - c->last_ns >= idle_ns) {
				ctl_send_now(c->fd, ctl_error("closed: idle for 30 s"));
				ctl_drop(ctl, i);
				continue;
			}
			int ms = (int)((c->last_ns + idle_ns - now) / 1000000u) + 1;
			if (wait_ms < 0 || ms < wait_ms)
				wait_ms = ms;
		}

		pfd[n++] = (struct pollfd){.fd = ctl->wake[0], .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = ctl->lfd, .events = POLLIN};
		for (size_t i = 0; i < ctl->nclients; i++) {
			const struct ctl_client *c = &ctl->clients[i];

			pfd[n++] = (struct pollfd){
			    .fd = c->fd,
			    .events = (short)((c->eof || c->backlog ? 0 : POLLIN) |
					      (c->out_off < c->out_len ? POLLOUT : 0))};
			backlog |= c->backlog;
		}
		if (poll(pfd, n, backlog ? 0 : wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents)
			break;
		/* clients first, from the end, so that dropping one keeps the others' slots */
		for (size_t i = ctl->nclients; i-- > 0;) {
			struct ctl_client *c = &ctl->clients[i];
			short re = pfd[2 + i].revents;

			if (re & POLLOUT)
				ctl_flush(ctl, c);
			if (((re & (POLLERR | POLLHUP | POLLNVAL)) && !(re & POLLIN)) || c->dead)
				ctl_drop(ctl, i);
			else if (re & POLLIN) {
				if (!ctl_read(ctl, i))
					ctl_drop(ctl, i);
			} else if (c->backlog) {
				ctl_process(ctl, c); /* its next turn */
				if (c->dead)
					ctl_drop(ctl, i);
			}
		}
		if (pfd[1].revents & POLLIN)
			ctl_accept(ctl);
	}
	return NULL;
}

/* Starts the control socket at path (a stale socket there is replaced). */
int fl_ctl_start(struct fl_engine *e, const char *path, struct fl_ctl **out)
{
	struct fl_ctl *ctl;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int r;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fl_log(FL_LOG_ERR, "control socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->e = e;
	ctl->wake[0] = ctl->wake[1] = -1;
	ctl->path = strdup(path);
	ctl->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!ctl->path || ctl->lfd < 0 || pipe2(ctl->wake, O_CLOEXEC)) {
		r = -errno;
		goto fail;
	}
	strcpy(sa.sun_path, path);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if (bind(ctl->lfd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0600) ||
	    listen(ctl->lfd, 8)) {
		r = -errno;
		fl_log(FL_LOG_ERR, "control socket %s: %s\n", path, strerror(errno));
		goto fail;
	}
	r = -pthread_create(&ctl->thread, NULL, ctl_main, ctl);
	if (r)
		goto fail;
	*out = ctl;
	return 0;
fail:
	if (ctl->lfd >= 0)
		close(ctl->lfd);
	if (ctl->wake[0] >= 0) {
		close(ctl->wake[0]);
		close(ctl->wake[1]);
	}
	free(ctl->path);
	free(ctl);
	return r ? r : -EIO;
}

/* Stops the thread, closes every client, removes the socket file. */
void fl_ctl_stop(struct fl_ctl *ctl)
{
	if (!ctl)
		return;
	if (write(ctl->wake[1], "x", 1) < 0)
		fl_log(FL_LOG_ERR, "control socket: cannot wake the thread\n");
	pthread_join(ctl->thread, NULL);
	while (ctl->nclients)
		ctl_drop(ctl, ctl->nclients - 1);
	close(ctl->lfd);
	close(ctl->wake[0]);
	close(ctl->wake[1]);
	unlink(ctl->path);
	free(ctl->path);
	free(ctl);
}
