/* SPDX-License-Identifier: MIT */
/*
 * kmod_shim.c - LD_PRELOAD helper for runner_load.sh only.
 *
 * tcmu-runner 1.5.4 looks target_core_user up with libkmod before it loads
 * any handler. On a host without /lib/modules for the running kernel (a
 * container) the lookup finds nothing and the runner stops there. This shim
 * answers the lookup with ENOENT, which makes the runner fall back to
 * checking /sys/module/target_core_user (provided by the test inside a private
 * mount namespace), so that the real binary goes on to dlopen the handlers.
 */
#include <errno.h>
#include <stddef.h>

struct kmod_ctx;
struct kmod_list;

/* Reports "no module index" the way libkmod does when /lib/modules is missing. */
int kmod_module_new_from_lookup(struct kmod_ctx *ctx, const char *alias, struct kmod_list **list)
{
	(void)ctx;
	(void)alias;
	if (list)
		*list = NULL;
	errno = ENOENT;
	return -ENOENT;
}
