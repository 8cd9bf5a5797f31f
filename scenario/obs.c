// SPDX-License-Identifier: MIT
/*
 * obs.c - observations of a run as JSON (fl_check.h): what a runner saw,
 * written next to its verdicts (the libiscsi runner's --obs FILE, the VM
 * lab's obs.json) and read back to judge a recorded run again, so that the
 * checker can be tested on what both runners really observed.
 */
#include "scenario_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const end_names[] = {
    [FL_END_NOT_RUN] = "not_run", [FL_END_UNSUPPORTED] = "unsupported", [FL_END_DONE] = "done",
    [FL_END_TIMEOUT] = "timeout", [FL_END_CRASHED] = "crashed",
};

/* A recorded run read back: the observations and the storage behind them. */
struct fl_obs_doc {
	struct fl_obs obs;
	json_t *root;
	struct fl_step_obs *steps;
	const char **kmsg, **trace, **paths, **dh;
	enum fl_eh_step *eh;
	json_t *states;
};

/* Device state of a recorded run (lun -> text). */
static const char *doc_device_state(void *arg, int lun)
{
	struct fl_obs_doc *d = arg;
	char key[16];

	snprintf(key, sizeof(key), "%d", lun);
	return json_string_value(json_object_get(d->states, key));
}

/* One step's observation as obs.json writes it. */
static json_t *step_json(const struct fl_step_obs *s)
{
	json_t *o =
	    json_pack("{s:s, s:s, s:f, s:i}", "end", end_names[s->end], "errno", s->errno_name,
		      "elapsed_ms", s->elapsed_ms, "repeats", (int)s->repeats_done);

	if (s->why[0])
		json_object_set_new(o, "why", json_string(s->why));
	if (s->has_status)
		json_object_set_new(o, "status", json_integer(s->status));
	if (s->has_sense)
		json_object_set_new(o, "sense", json_pack("[i, i, i]", s->key, s->asc, s->ascq));
	if (s->has_tmf_response)
		json_object_set_new(o, "tmf_response", json_integer(s->tmf_response));
	return o;
}

/* v[0..n) as a JSON array of strings. */
static json_t *strings_json(const char *const *v, size_t n)
{
	json_t *t = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(t, json_string(v[i]));
	return t;
}

/* Writes obs as one JSON document; 0 or -errno. */
int fl_obs_write(const struct fl_obs *obs, const char *path)
{
	json_t *root = json_object(), *steps = json_array();
	int r;

	json_object_set_new(root, "runner",
			    json_string(obs->runner == FL_RUNNER_VM ? "vm" : "libiscsi"));
	json_object_set_new(root, "test_lun", json_integer(obs->test_lun));
	json_object_set_new(root, "can_status_all", json_boolean(obs->can_status_all));
	if (obs->kernel_release)
		json_object_set_new(root, "kernel_release", json_string(obs->kernel_release));
	if (fl_check_path_name((enum fl_check_path)obs->vm_path))
		json_object_set_new(
		    root, "vm_path",
		    json_string(fl_check_path_name((enum fl_check_path)obs->vm_path)));
	for (size_t i = 0; i < obs->nsteps; i++)
		json_array_append_new(steps, step_json(&obs->steps[i]));
	json_object_set_new(root, "steps", steps);
	if (obs->has_kernel) {
		json_t *eh = json_array();

		for (size_t i = 0; i < obs->neh; i++)
			json_array_append_new(eh, json_string(fl_eh_names[obs->eh[i]]));
		json_object_set_new(root, "kmsg", strings_json(obs->kmsg, obs->nkmsg));
		json_object_set_new(root, "eh", eh);
	}
	if (obs->device_state) {
		json_t *st = json_object();

		for (int lun = 0; lun < 256; lun++) {
			const char *s = obs->device_state(obs->device_state_arg, lun);
			char key[16];

			snprintf(key, sizeof(key), "%d", lun);
			if (s)
				json_object_set_new(st, key, json_string(s));
		}
		json_object_set_new(root, "device_state", st);
	}
	if (obs->has_stall)
		json_object_set_new(root, "max_stall_ms", json_real(obs->max_stall_ms));
	if (obs->has_trace)
		json_object_set_new(root, "trace", strings_json(obs->trace, obs->ntrace));
	if (obs->has_paths)
		json_object_set_new(root, "paths", strings_json(obs->paths, obs->npaths));
	if (obs->has_dh)
		json_object_set_new(root, "dh", strings_json(obs->dh, obs->ndh));
	r = json_dump_file(root, path, JSON_INDENT(1)) ? -EIO : 0;
	json_decref(root);
	return r;
}

/* Copies the strings of a JSON array into a new array of pointers into it. */
static const char **strings_of(json_t *a, size_t *n)
{
	const char **v = calloc(json_array_size(a) + 1, sizeof(*v));
	size_t i;
	json_t *e;

	*n = 0;
	if (!v)
		return NULL;
	json_array_foreach(a, i, e) if (json_is_string(e)) v[(*n)++] = json_string_value(e);
	return v;
}

/* Reads one recorded step e into s. */
static void read_step(json_t *e, struct fl_step_obs *s)
{
	const char *end = json_string_value(json_object_get(e, "end")) ?: "";
	json_t *st = json_object_get(e, "status"), *sense = json_object_get(e, "sense");

	for (size_t k = 0; k < sizeof(end_names) / sizeof(end_names[0]); k++)
		if (!strcmp(end, end_names[k]))
			s->end = (enum fl_step_end)k;
	snprintf(s->errno_name, sizeof(s->errno_name), "%s",
		 json_string_value(json_object_get(e, "errno")) ?: "");
	snprintf(s->why, sizeof(s->why), "%s", json_string_value(json_object_get(e, "why")) ?: "");
	s->elapsed_ms = json_number_value(json_object_get(e, "elapsed_ms"));
	s->repeats_done = (uint32_t)json_integer_value(json_object_get(e, "repeats"));
	s->has_status = json_is_integer(st);
	s->status = (uint8_t)json_integer_value(st);
	s->has_sense = json_array_size(sense) == 3;
	if (s->has_sense) {
		s->key = (uint8_t)json_integer_value(json_array_get(sense, 0));
		s->asc = (uint8_t)json_integer_value(json_array_get(sense, 1));
		s->ascq = (uint8_t)json_integer_value(json_array_get(sense, 2));
	}
	/* a TMF response is one byte (RFC 7143 11.6.1): anything else is no response */
	st = json_object_get(e, "tmf_response");
	s->has_tmf_response =
	    json_is_integer(st) && json_integer_value(st) >= 0 && json_integer_value(st) <= 255;
	s->tmf_response = s->has_tmf_response ? (uint8_t)json_integer_value(st) : 0;
}

/* Reads a recorded run's kernel log (kmsg) and error-handler steps (eh). */
static void read_kernel(struct fl_obs_doc *d, json_t *kmsg)
{
	json_t *eh = json_object_get(d->root, "eh"), *w;
	size_t i;

	d->obs.has_kernel = true;
	d->kmsg = strings_of(kmsg, &d->obs.nkmsg);
	d->obs.kmsg = d->kmsg;
	d->eh = calloc(json_array_size(eh) + 1, sizeof(*d->eh));
	json_array_foreach(eh, i, w)
	{
		for (int k = 0; d->eh && k < FL_EH_NR; k++)
			if (json_is_string(w) && !strcmp(fl_eh_names[k], json_string_value(w)))
				d->eh[d->obs.neh++] = (enum fl_eh_step)k;
	}
	d->obs.eh = d->eh;
}

/* Reads a recorded run; 0 or -errno (-EINVAL: not an observations document). */
int fl_obs_read(const char *path, struct fl_obs_doc **out)
{
	struct fl_obs_doc *d = calloc(1, sizeof(*d));
	json_t *steps, *e;
	size_t i;

	if (!d)
		return -ENOMEM;
	d->root = json_load_file(path, 0, NULL);
	steps = json_object_get(d->root, "steps");
	if (!d->root || !json_is_array(steps)) {
		fl_obs_free(d);
		return -EINVAL;
	}
	d->obs.runner = !strcmp(json_string_value(json_object_get(d->root, "runner")) ?: "", "vm")
			    ? FL_RUNNER_VM
			    : FL_RUNNER_LIBISCSI;
	d->obs.test_lun = (int)json_integer_value(json_object_get(d->root, "test_lun"));
	d->obs.can_status_all = json_is_true(json_object_get(d->root, "can_status_all"));
	d->obs.kernel_release = json_string_value(json_object_get(d->root, "kernel_release"));
	d->obs.vm_path =
	    fl_check_path_by_name(json_string_value(json_object_get(d->root, "vm_path")));
	d->steps = calloc(json_array_size(steps) + 1, sizeof(*d->steps));
	if (!d->steps) {
		fl_obs_free(d);
		return -ENOMEM;
	}
	json_array_foreach(steps, i, e)
	{
		read_step(e, &d->steps[i]);
	}
	d->obs.steps = d->steps;
	d->obs.nsteps = json_array_size(steps);
	if ((e = json_object_get(d->root, "kmsg")))
		read_kernel(d, e);
	if ((d->states = json_object_get(d->root, "device_state"))) {
		d->obs.device_state = doc_device_state;
		d->obs.device_state_arg = d;
	}
	if ((e = json_object_get(d->root, "max_stall_ms"))) {
		d->obs.has_stall = true;
		d->obs.max_stall_ms = json_number_value(e);
	}
	if ((e = json_object_get(d->root, "trace"))) {
		d->obs.has_trace = true;
		d->trace = strings_of(e, &d->obs.ntrace);
		d->obs.trace = d->trace;
	}
	if ((e = json_object_get(d->root, "paths"))) {
		d->obs.has_paths = true;
		d->paths = strings_of(e, &d->obs.npaths);
		d->obs.paths = d->paths;
	}
	if ((e = json_object_get(d->root, "dh"))) {
		d->obs.has_dh = true;
		d->dh = strings_of(e, &d->obs.ndh);
		d->obs.dh = d->dh;
	}
	*out = d;
	return 0;
}

/* The observations of a recorded run. */
const struct fl_obs *fl_obs_of(const struct fl_obs_doc *d)
{
	return &d->obs;
}

/* Frees a recorded run. */
void fl_obs_free(struct fl_obs_doc *d)
{
	if (!d)
		return;
	free(d->steps);
	free(d->kmsg);
	free(d->trace);
	free(d->paths);
	free(d->dh);
	free(d->eh);
	json_decref(d->root);
	free(d);
}
