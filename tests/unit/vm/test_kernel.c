// SPDX-License-Identifier: MIT
/*
 * test_kernel.c - the guest kernel's upstream version from its first log
 * line, and the known fixes it lacks (vm/vm_kernel.c).
 */
#include "runner.h"
#include "vm_internal.h"

#include <string.h>

/* Debian's kernels: the ABI name in the release, the upstream version after "Debian". */
static void test_version_debian(void)
{
	char v[32];

	CU_ASSERT_EQUAL(vm_kernel_version("Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) "
					  "(gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU "
					  "Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian "
					  "6.1.192-3 (2026-11-26)",
					  v, sizeof(v)),
			0);
	CU_ASSERT_STRING_EQUAL(v, "6.1.192");
}

/* A kernel of one's own: the release's numbers; two numbers mean .0. */
static void test_version_own(void)
{
	char v[32];

	CU_ASSERT_EQUAL(vm_kernel_version("Linux version 6.12.68-custom (me@host) #3 SMP", v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "6.12.68");
	CU_ASSERT_EQUAL(vm_kernel_version("Linux version 7.2 (me@host) #1", v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "7.2.0");
}

/* No version line, or garbage after it: no version, never a crash. */
static void test_version_none(void)
{
	char v[32] = "";

	CU_ASSERT_EQUAL(vm_kernel_version("random text", v, sizeof(v)), -1);
	CU_ASSERT_EQUAL(vm_kernel_version("Linux version x.y", v, sizeof(v)), -1);
	CU_ASSERT_EQUAL(vm_kernel_version("Linux version 99999999999.1.1", v, sizeof(v)), -1);
	CU_ASSERT_EQUAL(vm_kernel_version(NULL, v, sizeof(v)), -1);
}

/* 6.1 before .162 and 6.12 before .68 lack the error handler wake-up fix; others do not. */
static void test_missing_fixes(void)
{
	const char *what[4];

	CU_ASSERT_EQUAL(vm_kernel_missing_fixes("6.1.161", what, 4), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(what[0], "error handler never woken"));
	CU_ASSERT_EQUAL(vm_kernel_missing_fixes("6.1.162", what, 4), 0);
	CU_ASSERT_EQUAL(vm_kernel_missing_fixes("6.1.192", what, 4), 0);
	CU_ASSERT_EQUAL(vm_kernel_missing_fixes("6.12.67", what, 4), 1);
	CU_ASSERT_EQUAL(vm_kernel_missing_fixes("6.12.68", what, 4), 0);
	CU_ASSERT_EQUAL(vm_kernel_missing_fixes("7.2.13", what, 4), 0);
	CU_ASSERT_EQUAL(vm_kernel_missing_fixes("garbage", what, 4), 0);
}

FL_TESTS(kernel_tests,
	 {"version_debian", test_version_debian},
	 {"version_own", test_version_own},
	 {"version_none", test_version_none},
	 {"missing_fixes", test_missing_fixes});

FL_SUITES(FL_SUITE("kernel", NULL, NULL, kernel_tests));
