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
# Strong unversioned imports must all come from tcmu-runner / libtcmu (versioned
# ones are glibc's and jansson's; __asan/__ubsan only in a Sanitize build).
own=$(nm -D --undefined-only "$so" | awk '$1 == "U" {print $2}' | grep -v '@' |
	grep -vE '^(tcmu_|tcmur_|__asan|__ubsan|__sanitizer|__lsan)' || true)
if [ -n "$own" ]; then
	echo "FAIL: symbols left unresolved (engine or core not completely linked in):"
	echo "$own"
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
