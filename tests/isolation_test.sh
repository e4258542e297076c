#!/usr/bin/env bash
# Two jobs on one machine (tests/mp/isolation.cc): a process of the second
# knows a rank of the first by its transport address and sends it messages;
# the first drops and counts them all, matches none, and carries on. The
# bootstrap half (a process without the job key is refused by tagwire-run)
# is in launcher_test.sh.
# Usage: isolation_test.sh TAGWIRE_RUN ISOLATION
set -uo pipefail
run=$1
prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$run" -n 2 --timeout 120 "$prog" victim "$dir/address" "$dir/done" >"$dir/victim.out" 2>&1 &
victim=$!
"$run" -n 1 --timeout 120 "$prog" intruder "$dir/address" "$dir/done" >"$dir/intruder.out" 2>&1
intruder_status=$?
wait $victim
victim_status=$?
cat "$dir/victim.out" "$dir/intruder.out"
passes=0
failures=0
check() { if [[ $2 == 0 ]]; then passes=$((passes + 1)); else echo "FAIL: $1"; failures=$((failures + 1)); fi; }
check "the intruder's job ran (status $intruder_status)" $((intruder_status != 0))
check "the victim job survived and finished (status $victim_status)" $((victim_status != 0))
grep -q "victim rank 0 ok" "$dir/victim.out"
check "rank 0 dropped every foreign message and matched none" $?
grep -q "victim rank 1 ok" "$dir/victim.out"
check "rank 1 still talked to rank 0" $?
echo "isolation: $passes passed, $failures failed"
exit $((failures > 0))
