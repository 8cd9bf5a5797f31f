#!/bin/sh
# SPDX-License-Identifier: MIT
# test-send-exit.sh FAULTLUN SCENARIOS_DIR - `faultlun send`'s exit status
# (docs/send.md): 0 when every item got GOOD, 1 when one ended in CHECK
# CONDITION (0 with --ignore-status, given after the URL), 3 when one got no
# answer (scenario hold-forever), 2 for a bad item and for a refused
# connection, which says so in plain words (as does a target that closes
# the connection at the login); options after the URL work.
set -u
fl=$1 dir=$2
. "$(dirname "$0")/../lib/common.sh"
fl_tmpdir

"$fl" serve -q --listen 127.0.0.1:0 "$dir/demo.json" --run "
	\"$fl\" send -u \$FAULTLUN_URL tur inquiry read; echo rc=\$? > $tmp/good
	\"$fl\" send \$FAULTLUN_URL read:lba=4096 tur; echo rc=\$? > $tmp/check
	\"$fl\" send \$FAULTLUN_URL read:lba=4096 tur --ignore-status; echo rc=\$? > $tmp/ignore
	\"$fl\" send \$FAULTLUN_URL inquiry --json > $tmp/json; echo rc=\$? > $tmp/json.rc
	\"$fl\" send \$FAULTLUN_URL lun-reset abort-task; echo rc=\$? > $tmp/tmf" \
	> "$tmp/serve" 2>&1 || fail "serve: $(cat "$tmp/serve")"
cat "$tmp/serve"
[ "$(cat "$tmp/check")" = rc=1 ] || fail "CHECK CONDITION: $(cat "$tmp/check"), not 1"
[ "$(cat "$tmp/good")" = rc=0 ] || fail "all GOOD: $(cat "$tmp/good")"
[ "$(cat "$tmp/ignore")" = rc=0 ] || fail "--ignore-status after the URL: $(cat "$tmp/ignore")"
[ "$(cat "$tmp/json.rc")" = rc=0 ] || fail "--json after the items: $(cat "$tmp/json.rc")"
python3 -c 'import json, sys; json.loads(open(sys.argv[1]).readline())' "$tmp/json" ||
	fail "--json after the items did not give JSON: $(cat "$tmp/json")"
[ "$(cat "$tmp/tmf")" = rc=0 ] || fail "TMFs answered: $(cat "$tmp/tmf")"

"$fl" serve -q --listen 127.0.0.1:0 "$(dirname "$0")/scenarios/hold-forever.json" --run "
	\"$fl\" send -t 1 \$FAULTLUN_URL read; echo rc=\$? > $tmp/held" > "$tmp/serve" 2>&1 ||
	fail "serve: $(cat "$tmp/serve")"
cat "$tmp/serve"
[ "$(cat "$tmp/held")" = rc=3 ] || fail "no answer: $(cat "$tmp/held"), not 3"
grep -q '^#1 read: no answer' "$tmp/serve" || fail "no answer: not printed"

# A port nothing listens on: a free one, closed again.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$fl" send "iscsi://127.0.0.1:$port/iqn.x/0" tur > "$tmp/refused" 2>&1
rc=$?
cat "$tmp/refused"
[ $rc = 2 ] || fail "refused connection: exit $rc, not 2"
[ "$(cat "$tmp/refused")" = "connection refused: 127.0.0.1:$port" ] ||
	fail "refused connection: '$(cat "$tmp/refused")'"

# A target that closes the connection at the login: said so, at once.
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(20)
c, _ = s.accept(); c.recv(48); c.close()
' "$tmp/cport" &
n=0
while [ ! -s "$tmp/cport" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
port=$(cat "$tmp/cport")
"$fl" send -t 20 "iscsi://127.0.0.1:$port/iqn.x/0" tur > "$tmp/closed" 2>&1
rc=$?
wait
cat "$tmp/closed"
[ $rc = 2 ] || fail "closed at login: exit $rc, not 2"
[ "$(cat "$tmp/closed")" = "the target closed the connection during the login: 127.0.0.1:$port" ] ||
	fail "closed at login: '$(cat "$tmp/closed")'"
echo ok
