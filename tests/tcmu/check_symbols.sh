#!/bin/sh
# SPDX-License-Identifier: MIT
# check_symbols.sh - handler_faultlun.so exports handler_init only, leaves no
# faultlun symbol unresolved, and every tcmu_* / tcmur_* symbol it imports is
# exported by the installed /usr/bin/tcmu-runner or libtcmu.so.2.
# Usage: check_symbols.sh HANDLER.so     (exit 77 when nm or tcmu-runner is missing)
set -u
so=$1
command -v nm >/dev/null || { echo "SKIP: nm (binutils) not installed"; exit 77; }
status=0

defined=$(nm -D --defined-only "$so" | awk '{print $3}' | sort -u)
if [ "$defined" != "handler_init" ]; then
	echo "FAIL: exported symbols are not just handler_init:"; echo "$defined"; status=1
fi

undef=$(nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u)
# Every strong import must be defined by a library the module needs (libc,
# jansson, sanitizer runtimes) or by the runner process (checked below).
libs=$(ldd "$so" 2>/dev/null | awk '$3 ~ /^\// {print $3}')
from_libs=$(for l in $libs; do nm -D --defined-only "$l"; done | awk '{print $3}' |
	sed 's/@.*//' | sort -u)
missing=$(nm -D --undefined-only "$so" | awk '$1 == "U" {print $2}' | sed 's/@.*//' |
	grep -vE '^(tcmu_|tcmur_)' | sort -u | comm -23 - "$(printf '%s\n' "$from_libs" >"${TMPDIR:-/tmp}/fl-syms.$$"; echo "${TMPDIR:-/tmp}/fl-syms.$$")")
rm -f "${TMPDIR:-/tmp}/fl-syms.$$"
if [ -n "$missing" ]; then
	echo "FAIL: symbols no needed library defines (engine or core not completely linked in):"
	echo "$missing"
	status=1
fi

runner=/usr/bin/tcmu-runner
lib=$(ls /usr/lib/*/libtcmu.so.2 /usr/lib/libtcmu.so.2 2>/dev/null | head -1)
if [ ! -x "$runner" ] || [ -z "$lib" ]; then
	echo "SKIP: tcmu-runner / libtcmu.so.2 not installed; import check not done"
	[ $status = 0 ] && exit 77
	exit $status
fi
provided=$( (nm -D --defined-only "$runner"; nm -D --defined-only "$lib") | awk '{print $3}' |
	sed 's/@.*//' | sort -u)
for s in $(echo "$undef" | grep -E '^tcmu' || true); do
	if ! echo "$provided" | grep -qx "$s"; then
		echo "FAIL: $s is imported but neither tcmu-runner nor $lib exports it"; status=1
	else
		echo "ok: $s"
	fi
done
exit $status
