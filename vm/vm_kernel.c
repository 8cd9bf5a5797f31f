// SPDX-License-Identifier: MIT
/*
 * vm_kernel.c - which kernel the guest really ran, and what it lacks.
 *
 * `uname -r` of a distribution kernel names its ABI ("6.1.0-57-amd64"), not
 * the code in it: the kernel's first log line ("Linux version ...") carries
 * the upstream version a distribution builds from ("... Debian 6.1.192-3
 * (2026-11-26)"). The lab records that version in every result and warns
 * when the kernel is older than a known fix that scenarios of the SCSI
 * error handler, the iSCSI initiator or dm-multipath rely on: an older
 * kernel may hang or fail where the expectations say it recovers.
 */
#include "vm_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Fixes an expectation may depend on, per stable series (docs/vm-lab.md
 * "Which kernels"). A kernel of the series older than `fixed` lacks it; a
 * series not listed is taken to be newer than every fix here.
 */
static const struct kernel_fix {
	unsigned major, minor, fixed_patch;
	const char *what;
} kernel_fixes[] = {
    {6, 1, 162, "a race could leave the SCSI error handler never woken: I/O hung for ever"},
    {6, 12, 68, "a race could leave the SCSI error handler never woken: I/O hung for ever"},
};

/* Reads "A.B[.C]" at s into v[3]; the number of characters read, 0 when none. */
static size_t read_version(const char *s, unsigned v[3])
{
	int n = 0;

	if (!isdigit((unsigned char)s[0]))
		return 0;
	v[2] = 0;
	if (sscanf(s, "%5u.%5u.%5u%n", &v[0], &v[1], &v[2], &n) == 3 && n > 0)
		return (size_t)n;
	n = 0;
	if (sscanf(s, "%5u.%5u%n", &v[0], &v[1], &n) == 2 && n > 0)
		return (size_t)n;
	return 0;
}

/* See vm_internal.h. */
int vm_kernel_version(const char *banner, char *out, size_t cap)
{
	unsigned v[3];
	const char *p;

	if (!banner || cap < 16)
		return -1;
	p = strstr(banner, "Linux version ");
	if (!p)
		return -1;
	/* A distribution's own version of the upstream code, when it says it. */
	const char *deb = strstr(p, " Debian ");
	if (deb && read_version(deb + 8, v)) {
		snprintf(out, cap, "%u.%u.%u", v[0], v[1], v[2]);
		return 0;
	}
	if (!read_version(p + 14, v))
		return -1;
	snprintf(out, cap, "%u.%u.%u", v[0], v[1], v[2]);
	return 0;
}

/* See vm_internal.h. */
size_t vm_kernel_missing_fixes(const char *version, const char **what, size_t max)
{
	unsigned v[3];
	size_t n = 0;

	if (!version || !read_version(version, v))
		return 0;
	for (size_t i = 0; i < sizeof(kernel_fixes) / sizeof(kernel_fixes[0]); i++) {
		const struct kernel_fix *f = &kernel_fixes[i];

		if (v[0] == f->major && v[1] == f->minor && v[2] < f->fixed_patch) {
			if (n < max)
				what[n] = f->what;
			n++;
		}
	}
	return n;
}

/* See vm_internal.h. */
void vm_kernel_record(json_t *kmsg, json_t *result, const char *scenario)
{
	const char *what[8];
	char version[32];
	size_t i, n;
	json_t *o, *missing;

	json_array_foreach(kmsg, i, o)
	{
		const char *text = json_string_value(json_object_get(o, "text"));

		if (text && !vm_kernel_version(text, version, sizeof(version)))
			break;
	}
	if (i == json_array_size(kmsg))
		return;
	json_object_set_new(result, "kernel_version", json_string(version));
	n = vm_kernel_missing_fixes(version, what, sizeof(what) / sizeof(what[0]));
	if (!n)
		return;
	missing = json_array();
	for (size_t k = 0; k < n && k < sizeof(what) / sizeof(what[0]); k++) {
		json_array_append_new(missing, json_string(what[k]));
		fprintf(stderr,
			"faultlun vm: warning: %s ran on Linux %s, which lacks a known fix (%s): "
			"expectations of recovery may fail for that reason (docs/vm-lab.md "
			"\"Which kernels\")\n",
			scenario, version, what[k]);
	}
	json_object_set_new(result, "kernel_missing_fixes", missing);
}
