#!/bin/sh
# SPDX-License-Identifier: MIT
# record-libiscsi.sh BUILD_DIR - records what the libiscsi runner observes of
# every shipped scenario (`faultlun check --obs`) into recorded/NAME.libiscsi.json,
# for test_judge. Run by hand after a change to a scenario or to the runner.
# The VM lab's recordings (recorded/NAME.vm-PATH.json) are the obs.json that
# `faultlun vm SCENARIO --path PATH --out DIR` writes beside result.json.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
for scen in "$top"/scenarios/*.json; do
	name=$(basename "$scen" .json)
	case $name in *schema*) continue ;; esac
	grep -q '"iscsi"' "$scen" || continue
	"$build/cli/faultlun" check -q --obs "$here/recorded/$name.libiscsi.json" "$scen" >/dev/null || true
	echo "$name: $(ls -l "$here/recorded/$name.libiscsi.json" | awk '{print $5}') bytes"
done
