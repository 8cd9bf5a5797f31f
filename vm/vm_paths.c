/* SPDX-License-Identifier: MIT */
/*
 * vm_paths.c - where `faultlun vm` finds its scripts, guest programs and the
 * tcmu handler (vm_paths.h): beside a build-tree marker, else under the
 * installation prefix of the running executable (/proc/self/exe).
 */
#include "vm_paths.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef FL_INSTALL_BINDIR
#define FL_INSTALL_BINDIR "bin"
#endif
#ifndef FL_INSTALL_LIBEXECDIR
#define FL_INSTALL_LIBEXECDIR "libexec"
#endif
#ifndef FL_INSTALL_HANDLERDIR
#define FL_INSTALL_HANDLERDIR "lib/tcmu-runner"
#endif

/* The marker CMake writes beside the binary in a build tree. */
#define VM_BUILD_MARKER "faultlun-build-tree"

static char paths[3][PATH_MAX];
static int found;

/*
 * Joins prefix and dir into out, or takes dir when it is absolute. A path
 * that would not fit in PATH_MAX is left empty: the piece is then not found,
 * as when it is missing, rather than found under a truncated name.
 */
static void under(char *out, const char *prefix, const char *dir, const char *tail)
{
	int n;

	if (dir[0] == '/')
		n = snprintf(out, PATH_MAX, "%s%s", dir, tail);
	else
		n = snprintf(out, PATH_MAX, "%s/%s%s", prefix, dir, tail);
	if (n < 0 || n >= PATH_MAX)
		out[0] = 0;
}

/* Reads "scripts=", "programs=", "handler=" lines of the marker; 0 when all are there. */
static int read_marker(const char *file)
{
	static const char *const keys[] = {"scripts=", "programs=", "handler="};
	char line[PATH_MAX + 32];
	int have = 0;
	FILE *f = fopen(file, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		for (int i = 0; i < 3; i++)
			if (!strncmp(line, keys[i], strlen(keys[i]))) {
				const char *v = line + strlen(keys[i]);
				size_t len = strlen(v);

				/* line holds at most PATH_MAX + 31 bytes: a longer value is refused
				 */
				if (len >= PATH_MAX)
					continue;
				memcpy(paths[i], v, len + 1);
				have |= 1 << i;
			}
	}
	fclose(f);
	return have == 7 ? 0 : -1;
}

/* Works the three directories out once. */
static void find_paths(void)
{
	char exe[PATH_MAX], marker[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	found = 1;
	exe[n > 0 ? n : 0] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0; /* exe is now the binary's directory */
	snprintf(marker, sizeof(marker), "%s/" VM_BUILD_MARKER, exe);
	if (read_marker(marker) == 0)
		return;
	/* Installed: the prefix is the binary's directory less FL_INSTALL_BINDIR. */
	if (FL_INSTALL_BINDIR[0] != '/') {
		for (const char *c = FL_INSTALL_BINDIR; c; c = strchr(c + 1, '/')) {
			slash = strrchr(exe, '/');
			if (!slash)
				break;
			*slash = 0;
		}
	}
	under(paths[VM_SCRIPTS], exe, FL_INSTALL_LIBEXECDIR, "/faultlun");
	under(paths[VM_PROGRAMS], exe, FL_INSTALL_LIBEXECDIR, "/faultlun");
	under(paths[VM_HANDLER], exe, FL_INSTALL_HANDLERDIR, "");
}

const char *vm_path(enum vm_piece piece)
{
	if (!found)
		find_paths();
	return paths[piece];
}
