/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the engine's event trace: one JSON object per line, each with a
 * CLOCK_MONOTONIC timestamp in microseconds since the engine started
 * ("t_us") and an "event" name; the first line ("start") records the seed.
 * Lines go to the trace file and to every subscriber (control-socket clients
 * streaming the trace). A subscriber that cannot keep up loses lines (sent
 * with MSG_DONTWAIT) rather than stall the I/O path; the count is kept.
 */
#include "engine_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Starts a trace on fd (-1: none); own: close it at the end. */
void trace_init(struct trace *t, int fd, bool own)
{
	pthread_mutex_init(&t->lock, NULL);
	t->fd = fd;
	t->own_fd = own;
	t->subs = NULL;
	t->t0_ns = fl_mono_ns();
}

/* Closes the trace file and forgets subscribers (their fds belong to ctl). */
void trace_close(struct trace *t)
{
	pthread_mutex_lock(&t->lock);
	if (t->own_fd && t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	while (t->subs) {
		struct trace_sub *s = t->subs;

		t->subs = s->next;
		free(s);
	}
	pthread_mutex_unlock(&t->lock);
	pthread_mutex_destroy(&t->lock);
}

/* Writes all of buf to fd (a file: blocking is fine). */
static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		len -= (size_t)w;
	}
}

/* Writes one JSON object (a line) to the trace file and subscribers; takes obj. */
void trace_emit(struct trace *t, json_t *obj)
{
	char *line;
	size_t len;

	if (!obj)
		return;
	line = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	if (!line)
		return;
	len = strlen(line);
	line[len++] = '\n'; /* overwrites the NUL; we never print line as a string again */
	pthread_mutex_lock(&t->lock);
	if (t->fd >= 0)
		write_all(t->fd, line, len);
	for (struct trace_sub *s = t->subs; s; s = s->next) {
		ssize_t w = send(s->fd, line, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w != (ssize_t)len)
			s->dropped++;
	}
	pthread_mutex_unlock(&t->lock);
	free(line);
}

/* An unsigned 64-bit value as JSON: a number, or a decimal string above 2^63-1. */
json_t *json_u64(uint64_t v)
{
	char buf[24];

	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_string(buf);
}

/* A trace object with t_us and event filled in. */
json_t *trace_event(struct trace *t, const char *event)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "t_us",
			    json_integer((json_int_t)((fl_mono_ns() - t->t0_ns) / 1000)));
	json_object_set_new(o, "event", json_string(event));
	return o;
}

/*
 * Adds the command's fields (lun, initiator, nexus, port, tag, opcode, lba,
 * blocks); ports: the scenario declares target ports, and every event names
 * its port (otherwise only a relative port past 1 is written).
 */
void trace_cmd_fields(json_t *o, uint16_t lun, const struct fl_cmd *cmd, bool ports,
		      const struct fl_cdb_info *ci)
{
	char op[8];
	const char *name = fl_opcode_name(ci->opcode, ci->service_action);

	json_object_set_new(o, "lun", json_integer(lun));
	if (cmd->nexus.initiator)
		json_object_set_new(o, "initiator", json_string(cmd->nexus.initiator));
	json_object_set_new(o, "nexus", json_integer((json_int_t)cmd->nexus.id));
	/* the relative target port (0 is the one port, 1) */
	if (ports || cmd->nexus.rel_port_id > 1)
		json_object_set_new(
		    o, "port", json_integer(cmd->nexus.rel_port_id ? cmd->nexus.rel_port_id : 1));
	json_object_set_new(o, "tag", json_integer((json_int_t)cmd->tag));
	snprintf(op, sizeof(op), "0x%02x", ci->opcode);
	json_object_set_new(o, "opcode", json_string(op));
	if (name)
		json_object_set_new(o, "op", json_string(name));
	if (ci->has_lba) {
		json_object_set_new(o, "lba", json_integer((json_int_t)ci->lba));
		json_object_set_new(o, "blocks", json_integer(ci->nblocks));
	}
}

/* Adds fd as a subscriber; returns 0 or -ENOMEM. */
int trace_subscribe(struct trace *t, int fd)
{
	struct trace_sub *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->fd = fd;
	pthread_mutex_lock(&t->lock);
	s->next = t->subs;
	t->subs = s;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/* Removes the subscriber on fd. */
void trace_unsubscribe(struct trace *t, int fd)
{
	pthread_mutex_lock(&t->lock);
	for (struct trace_sub **pp = &t->subs; *pp; pp = &(*pp)->next) {
		if ((*pp)->fd == fd) {
			struct trace_sub *s = *pp;

			*pp = s->next;
			free(s);
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
}
