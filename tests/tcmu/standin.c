/* SPDX-License-Identifier: MIT */
/*
 * standin.c - the tcmu-runner and libtcmu exports handler_faultlun.so calls
 * (registration, the per-device slot, configuration and size, configfs
 * attributes, the runner's log, whose lines are also kept for the tests to
 * look at), kept in a struct tcmu_device of ours. Shared by the dlopen
 * harness and the handler benchmark.
 */
#include "standin.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct tcmur_handler *standin_handler;
int standin_log_level;

/* tcmu-runner keeps the handler's (static) struct; one handler per process here. */
int tcmur_register_handler(struct tcmur_handler *h)
{
	if (standin_handler)
		return -1;
	standin_handler = h;
	return 0;
}

/* The runner calls the command's done callback (its handle_generic_cbk). */
void tcmur_cmd_complete(struct tcmu_device *dev, void *data, int rc)
{
	struct tcmur_cmd *tc = data;

	tc->done(dev, tc, rc);
}

/* The runner's per-device slot for the handler. */
void tcmur_dev_set_private(struct tcmu_device *dev, void *priv)
{
	dev->runner_private = priv;
}

/* Reads the runner's per-device slot. */
void *tcmur_dev_get_private(struct tcmu_device *dev)
{
	return dev->runner_private;
}

/* The device's configuration string (libtcmu). */
char *tcmu_dev_get_cfgstring(struct tcmu_device *dev)
{
	return dev->cfgstring;
}

/* The device's UIO name (libtcmu). */
const char *tcmu_dev_get_uio_name(struct tcmu_device *dev)
{
	return dev->uio;
}

/* The runner's idea of the capacity. */
uint64_t tcmu_dev_get_num_lbas(struct tcmu_device *dev)
{
	return dev->num_lbas;
}

/* Sets the runner's idea of the capacity. */
void tcmu_dev_set_num_lbas(struct tcmu_device *dev, uint64_t num_lbas)
{
	dev->num_lbas = num_lbas;
}

/* The kernel's hw_block_size. */
uint32_t tcmu_dev_get_block_size(struct tcmu_device *dev)
{
	return dev->block_size;
}

/* Integer configfs attributes: only cmd_time_out exists here. */
int tcmu_cfgfs_dev_get_attr_int(struct tcmu_device *dev, const char *name)
{
	if (!strcmp(name, "cmd_time_out"))
		return dev->cmd_time_out;
	return -ENOENT;
}

/* Writes to the device's configfs control file: only dev_size is known. */
int tcmu_cfgfs_dev_set_ctrl_u64(struct tcmu_device *dev, const char *key, uint64_t val)
{
	if (strcmp(key, "dev_size"))
		return -EINVAL;
	dev->dev_size_written = val;
	return 0;
}

/* The kept log lines: a ring of the last STANDIN_LOG_KEEP. */
static struct {
	int level;
	char text[512];
} kept[STANDIN_LOG_KEEP];
static unsigned nkept; /* lines kept so far, in all */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* True when a kept line of that level contains text. */
bool standin_log_has(int level, const char *text)
{
	bool found = false;

	pthread_mutex_lock(&kept_lock);
	for (unsigned i = 0; i < nkept && i < STANDIN_LOG_KEEP && !found; i++)
		found = kept[i].level == level && strstr(kept[i].text, text);
	pthread_mutex_unlock(&kept_lock);
	return found;
}

/* Forgets the kept lines. */
void standin_log_clear(void)
{
	pthread_mutex_lock(&kept_lock);
	nkept = 0;
	pthread_mutex_unlock(&kept_lock);
}

/* Keeps one runner log line at level lvl (1 error .. 4 debug) and prints it if enabled. */
static void log_line(int lvl, const char *fn, int line, const char *fmt, va_list ap)
{
	static const char *const names[] = {"", "ERROR", "WARN", "INFO", "DEBUG"};
	char text[512];

	vsnprintf(text, sizeof(text), fmt, ap);
	pthread_mutex_lock(&kept_lock);
	kept[nkept % STANDIN_LOG_KEEP].level = lvl;
	memcpy(kept[nkept % STANDIN_LOG_KEEP].text, text, sizeof(text));
	nkept++;
	pthread_mutex_unlock(&kept_lock);
	if (lvl <= standin_log_level)
		fprintf(stderr, "[%s] %s:%d: %s", names[lvl], fn, line, text);
}

#define LOG_STANDIN(name, lvl)                                                                     \
	void name(struct tcmu_device *dev, const char *fn, int line, const char *fmt, ...)         \
	{                                                                                          \
		va_list ap;                                                                        \
		(void)dev;                                                                         \
		va_start(ap, fmt);                                                                 \
		log_line(lvl, fn, line, fmt, ap);                                                  \
		va_end(ap);                                                                        \
	}
LOG_STANDIN(tcmu_err_message, 1)
LOG_STANDIN(tcmu_warn_message, 2)
LOG_STANDIN(tcmu_info_message, 3)
LOG_STANDIN(tcmu_dbg_message, 4)
