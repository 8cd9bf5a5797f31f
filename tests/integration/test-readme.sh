#!/bin/sh
# SPDX-License-Identifier: MIT
# test-readme.sh SOURCE_DIR FAULTLUN - runs the README's command blocks as a
# user types them, from a scratch directory laid out like a checkout
# (scenarios/, tests/vm/, and build/cli/faultlun being the program under
# test), in one shell per block, inside a network namespace of its own so
# that the README's fixed port 127.0.0.1:3260 and /tmp/fl.sock clash with
# nothing.
#
# Every command line of every ```sh block is either run here or named below
# with the test that runs it instead; a README line that is neither fails
# the test, so a new command in the README cannot go untested. A line that
# ends in `&` starts a server: the next line waits until it listens, as a
# user waits for its "listening on" line. Each line's exit status must be
# the one the README gives (0 unless the table below says otherwise).
# Exits 77 when network namespaces cannot be made (not root, no unshare).
set -u
src=$1
fl=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

command -v unshare >/dev/null 2>&1 || { echo "SKIP: unshare missing (util-linux)"; exit 77; }
unshare --net true 2>/dev/null || { echo "SKIP: cannot make a network namespace (needs root)"; exit 77; }
command -v iscsi-inq >/dev/null 2>&1 || { echo "SKIP: iscsi-inq missing (apt-get install libiscsi-bin)"; exit 77; }

# Where each line is run instead of here, by its first words.
elsewhere() {
	case "$1" in
	"sh scripts/demo.sh") echo ".ci/run runs it on a clean clone" ;;
	"sh scripts/test.sh") echo ".ci/run runs it on a clean clone" ;;
	"cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j")
		echo "the build: .ci/run builds Release through demo.sh; here the build under test is build/cli/faultlun" ;;
	"cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr"*) echo "package.install" ;;
	"cmake --install build"*) echo "package.install" ;;
	"man faultlun"*) echo "package.man (installed pages)" ;;
	"man -l build/docs/faultlun.1"*) echo "package.man" ;;
	". cli/faultlun.bash-completion"*) echo "package.completion" ;;
	"dpkg-buildpackage -b -us -uc"*) echo "package.deb" ;;
	"build/cli/faultlun vm "*) echo "the VM-lab tier (tests/vm: vm.*.iscsi boots run hung-lun-reset.json)" ;;
	*) return 1 ;;
	esac
}

# The exit status the README gives a line (0 when it says none).
expected_rc() {
	case "$1" in
	"build/cli/faultlun send iscsi://127.0.0.1:3260/iqn.2026-12.org.faultlun:demo/0 "*) echo 1 ;;
	*) echo 0 ;;
	esac
}

# The README's ```sh blocks, one logical line each (continuations joined,
# comments kept: the shell drops them), blocks separated by "@@block".
awk '
	/^```sh$/ { inb = 1; print "@@block"; next }
	/^```/ { if (inb) { if (acc != "") print acc; acc = "" } inb = 0; next }
	inb {
		line = $0
		if (line ~ /\\$/) { sub(/\\$/, "", line); acc = acc line; next }
		print acc line; acc = ""
	}
' "$src/README.md" >"$tmp/lines"
[ "$(grep -c '^@@block$' "$tmp/lines")" -ge 4 ] || fail "fewer than 4 sh blocks found in README.md"

# The scratch checkout.
mkdir -p "$tmp/work/build/cli" "$tmp/work/tests"
ln -s "$src/scenarios" "$tmp/work/scenarios"
ln -s "$src/tests/vm" "$tmp/work/tests/vm"
ln -s "$(realpath "$fl")" "$tmp/work/build/cli/faultlun"

# One script per block: a line run here is followed by its status check.
nblock=0 nrun=0 nelse=0
while IFS= read -r line; do
	if [ "$line" = "@@block" ]; then
		nblock=$((nblock + 1))
		b="$tmp/block$nblock.sh"
		cat >"$b" <<'EOF'
# Waits (10 s at most) for the server just started: 127.0.0.1:3260 listening
# and, when given, its control socket made.
fl_wait_listen() {
	i=0
	while [ $i -lt 100 ]; do
		if ss -Hltn 'sport = :3260' | grep -q LISTEN && { [ $# -eq 0 ] || [ -S "$1" ]; }; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "README-WAIT: the server does not listen after 10 s"
}
EOF
		continue
	fi
	words=$(printf '%s\n' "$line" | sed 's/[[:space:]]*#.*$//; s/[[:space:]]*$//')
	[ -z "$words" ] && continue
	if why=$(elsewhere "$words"); then
		echo "not here: $words  ->  $why"
		nelse=$((nelse + 1))
		continue
	fi
	case "$words" in
	"build/cli/faultlun "* | "kill \$!") ;;
	*) fail "README line neither run here nor named with its test: $words" ;;
	esac
	nrun=$((nrun + 1))
	{
		printf '%s\n' "$line"
		case "$words" in
		*--ctl\ /tmp/fl.sock*"&") echo 'fl_wait_listen /tmp/fl.sock' ;;
		*"&") echo 'fl_wait_listen' ;;
		*) printf 'echo "README-RC $? %s"\n' "$(expected_rc "$words")" ;;
		esac
	} >>"$b"
done <"$tmp/lines"
[ "$nrun" -ge 8 ] || fail "only $nrun README lines to run"

for i in $(seq 1 "$nblock"); do
	b="$tmp/block$i.sh"
	grep -q '^echo "README-RC\|^fl_wait_listen' "$b" || continue
	echo "== README block $i"
	rm -f /tmp/fl.sock
	(cd "$tmp/work" && timeout 600 unshare --net sh -c 'ip link set lo up && exec sh "$0"' "$b") \
		>"$tmp/out$i" 2>&1
	rc=$?
	cat "$tmp/out$i"
	[ $rc -eq 0 ] || fail "block $i exited $rc"
	! grep -q '^README-WAIT' "$tmp/out$i" || fail "block $i: a server did not start"
	grep '^README-RC ' "$tmp/out$i" | while read -r _ got want; do
		[ "$got" = "$want" ] || { echo "FAIL: block $i: a line exited $got, the README says $want"; exit 1; }
	done || exit 1
done
rm -f /tmp/fl.sock

# What the lines were for: the JUnit file, the decoded sense, the counters.
grep -q '<testsuites' "$tmp/work/check.xml" || fail "check --junit check.xml wrote no JUnit file"
cat "$tmp"/out* >"$tmp/all"
grep -q 'MEDIUM_ERROR' "$tmp/all" || fail "send did not show the demo's medium error"
grep -q '"commands"' "$tmp/all" || fail "ctl counters printed no counters"
grep -q 'Vendor:FAULTLUN' "$tmp/all" || fail "the captive iscsi-inq printed no INQUIRY data"
echo "PASS: $nrun README lines run as written, $nelse run by other tests"
