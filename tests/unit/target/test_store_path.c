/* SPDX-License-Identifier: MIT */
/*
 * test_store_path.c - where a file store may be opened. A scenario's path is
 * opened beneath the scenario's directory: a symbolic link in any component,
 * "..", an absolute path, and anything but a regular file (FIFO, character
 * or block device) are refused with a message naming the path, and nothing
 * outside the directory is created or changed. The operator's path (serve
 * --store) may be any file or a block device, but not a FIFO or a character
 * device. Each case runs with openat2 and with the openat(O_NOFOLLOW) walk
 * taken where the kernel has no openat2.
 */
#include "fl_log.h"
#include "log_capture.h"
#include "runner.h"
#include "target_internal.h"
#include "tharness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The log lines of the last open. */
static struct log_capture log_lines;

/* Two fresh directories: the scenario's, and one outside it. */
struct dirs {
	char in[64], out[64];
};

/* Makes the directories (under /tmp) for a run with openat2 (mode 0) or the walk (mode 1). */
static void dirs_make(struct dirs *d, int mode)
{
	store_file_no_openat2 = mode;
	snprintf(d->in, sizeof(d->in), "/tmp/fl-store-in-XXXXXX");
	snprintf(d->out, sizeof(d->out), "/tmp/fl-store-out-XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(d->in));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(d->out));
}

/* Removes the directories and what the tests put in them; openat2 is back in use. */
static void dirs_remove(struct dirs *d)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", d->in, d->out);
	CU_ASSERT_EQUAL(system(cmd), 0);
	store_file_no_openat2 = false;
}

/* Opens path beneath dir (NULL: as the operator's path); returns 0 or -errno, log kept. */
static int try_open(const char *path, const char *dir)
{
	struct store *s = NULL;
	int rc;

	log_capture_start(&log_lines);
	rc = store_file_open(path, dir, 1 << 20, &s);
	fl_log_set_sink(NULL, NULL);
	if (s)
		s->ops->close(s);
	return rc;
}

/* The number of entries of a directory, "." and ".." aside. */
static int entries(const char *dir)
{
	char cmd[128];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

/* Joins a and b into buf. */
static const char *join(char *buf, size_t len, const char *a, const char *b)
{
	snprintf(buf, len, "%s/%s", a, b);
	return buf;
}

/* A refusal: the code, and the log naming the path and saying why. */
static void expect_refused(const char *path, const char *dir, int code, const char *why, int mode)
{
	int rc = try_open(path, dir);

	TH_CHECK(rc == code, "%s (%s): %d, expected %d; log: %s", path, mode ? "walk" : "openat2",
		 rc, code, log_lines.text);
	TH_CHECK(strstr(log_lines.text, path) != NULL, "%s: the log does not name it: %s", path,
		 log_lines.text);
	TH_CHECK(strstr(log_lines.text, why) != NULL, "%s: the log does not say \"%s\": %s", path,
		 why, log_lines.text);
}

/* A regular file beneath the directory, at the top or in a subdirectory, works. */
static void test_scenario_store_regular_file(void)
{
	for (int mode = 0; mode < 2; mode++) {
		struct dirs d;
		char buf[256];
		struct stat st;

		dirs_make(&d, mode);
		CU_ASSERT_EQUAL(try_open("disk.img", d.in), 0);
		CU_ASSERT(stat(join(buf, sizeof(buf), d.in, "disk.img"), &st) == 0 &&
			  S_ISREG(st.st_mode) && st.st_size == 1 << 20);
		CU_ASSERT_EQUAL(mkdir(join(buf, sizeof(buf), d.in, "sub"), 0700), 0);
		CU_ASSERT_EQUAL(try_open("./sub//disk.img", d.in), 0);
		CU_ASSERT(stat(join(buf, sizeof(buf), d.in, "sub/disk.img"), &st) == 0 &&
			  st.st_size == 1 << 20);
		/* and again, now that it exists */
		CU_ASSERT_EQUAL(try_open("sub/disk.img", d.in), 0);
		CU_ASSERT_EQUAL(try_open("sub", d.in), -EISDIR);
		CU_ASSERT_EQUAL(try_open("new.img/", d.in), -EISDIR);
		CU_ASSERT_EQUAL(try_open("sub/.", d.in), -EISDIR);
		dirs_remove(&d);
	}
}

/* A symbolic link inside the directory that points out of it is refused. */
static void test_scenario_store_symlink_out(void)
{
	for (int mode = 0; mode < 2; mode++) {
		struct dirs d;
		char buf[256], target[256];
		struct stat st;

		dirs_make(&d, mode);
		/* to a file that does not exist yet: it must not be created */
		join(target, sizeof(target), d.out, "victim.img");
		CU_ASSERT_EQUAL(symlink(target, join(buf, sizeof(buf), d.in, "link.img")), 0);
		expect_refused("link.img", d.in, -ELOOP, "symbolic link", mode);
		CU_ASSERT_EQUAL(entries(d.out), 0);
		/* to a file that exists: it must not be grown */
		close(open(target, O_CREAT | O_WRONLY, 0600));
		expect_refused("link.img", d.in, -ELOOP, "symbolic link", mode);
		CU_ASSERT(stat(target, &st) == 0 && st.st_size == 0);
		/* a link to a file inside the directory is refused too: no link is followed */
		CU_ASSERT_EQUAL(symlink("disk.img", join(buf, sizeof(buf), d.in, "inner.img")), 0);
		expect_refused("inner.img", d.in, -ELOOP, "symbolic link", mode);
		/* the operator's path follows links */
		CU_ASSERT_EQUAL(try_open(join(buf, sizeof(buf), d.in, "link.img"), NULL), 0);
		CU_ASSERT(stat(target, &st) == 0 && st.st_size == 1 << 20);
		dirs_remove(&d);
	}
}

/* A symbolic link to a directory, as an intermediate component, is refused. */
static void test_scenario_store_symlinked_dir(void)
{
	for (int mode = 0; mode < 2; mode++) {
		struct dirs d;
		char buf[256];

		dirs_make(&d, mode);
		CU_ASSERT_EQUAL(symlink(d.out, join(buf, sizeof(buf), d.in, "sub")), 0);
		expect_refused("sub/disk.img", d.in, -ELOOP, "symbolic link", mode);
		CU_ASSERT_EQUAL(mkdir(join(buf, sizeof(buf), d.in, "real"), 0700), 0);
		CU_ASSERT_EQUAL(symlink("/", join(buf, sizeof(buf), d.in, "real/root")), 0);
		expect_refused("real/root/tmp/x.img", d.in, -ELOOP, "symbolic link", mode);
		CU_ASSERT_EQUAL(entries(d.out), 0);
		dirs_remove(&d);
	}
}

/* ".." that leaves the directory, and an absolute path, are refused. */
static void test_scenario_store_dotdot(void)
{
	for (int mode = 0; mode < 2; mode++) {
		struct dirs d;
		char buf[256], up[256];

		dirs_make(&d, mode);
		snprintf(up, sizeof(up), "../%s/x.img", strrchr(d.out, '/') + 1);
		expect_refused(up, d.in, -EXDEV, "leads out of", mode);
		CU_ASSERT_EQUAL(mkdir(join(buf, sizeof(buf), d.in, "a"), 0700), 0);
		snprintf(up, sizeof(up), "a/../../%s/x.img", strrchr(d.out, '/') + 1);
		expect_refused(up, d.in, -EXDEV, "leads out of", mode);
		expect_refused(join(buf, sizeof(buf), d.out, "x.img"), d.in, -EXDEV, "leads out of",
			       mode);
		CU_ASSERT_EQUAL(entries(d.out), 0);
		dirs_remove(&d);
	}
}

/*
 * A FIFO, a character device and a block device in the directory are refused
 * (and never opened); the operator may name a block device, not the others.
 */
static void test_scenario_store_special_files(void)
{
	bool root = geteuid() == 0;

	for (int mode = 0; mode < 2; mode++) {
		struct dirs d;
		char buf[256];
		bool nodes;

		dirs_make(&d, mode);
		CU_ASSERT_EQUAL(mkfifo(join(buf, sizeof(buf), d.in, "fifo"), 0600), 0);
		expect_refused("fifo", d.in, -EINVAL, "is a FIFO", mode);
		expect_refused(join(buf, sizeof(buf), d.in, "fifo"), NULL, -EINVAL, "a FIFO", mode);
		/* device nodes: /dev/null's numbers, and the first loop device's */
		nodes = root;
		if (nodes &&
		    mknod(join(buf, sizeof(buf), d.in, "chr"), S_IFCHR | 0600, makedev(1, 3)))
			nodes = false;
		if (nodes &&
		    mknod(join(buf, sizeof(buf), d.in, "blk"), S_IFBLK | 0600, makedev(7, 0)))
			nodes = false;
		if (!nodes) {
			if (mode == 0)
				printf("\n  SKIP: device nodes (needs root and mknod): %s\n",
				       strerror(errno));
		} else {
			expect_refused("chr", d.in, -EINVAL, "is a character device", mode);
			expect_refused("blk", d.in, -EINVAL, "is a block device", mode);
			expect_refused(join(buf, sizeof(buf), d.in, "chr"), NULL, -EINVAL,
				       "a character device", mode);
			if (access("/dev/loop0", F_OK) == 0)
				CU_ASSERT_EQUAL(try_open(join(buf, sizeof(buf), d.in, "blk"), NULL),
						0);
		}
		dirs_remove(&d);
	}
}

FL_TESTS(store_path_tests,
	 FL_TEST(test_scenario_store_regular_file),
	 FL_TEST(test_scenario_store_symlink_out),
	 FL_TEST(test_scenario_store_symlinked_dir),
	 FL_TEST(test_scenario_store_dotdot),
	 FL_TEST(test_scenario_store_special_files));

FL_SUITES(FL_SUITE("store_path", NULL, NULL, store_path_tests));
