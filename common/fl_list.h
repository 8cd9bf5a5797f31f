/* SPDX-License-Identifier: MIT */
/*
 * fl_list.h - membership in a NULL-terminated list of strings (option names,
 * keys, allowed values).
 */
#ifndef FL_LIST_H
#define FL_LIST_H

#include <stdbool.h>
#include <string.h>

/* Index of s in the NULL-terminated list, or -1 (also for a NULL s). */
static inline int fl_list_index(const char *const *list, const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return i;
	return -1;
}

/* True when s is one of the strings of the NULL-terminated list. */
static inline bool fl_in_list(const char *const *list, const char *s)
{
	return fl_list_index(list, s) >= 0;
}

#endif
