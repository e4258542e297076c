#!/usr/bin/env bash
# A rank killed by SIGKILL mid-exchange (tests/mp/peer_death.cc): the
# survivors' pending operations with it fail within a bound and they go on
# with each other; tagwire-run names the dead rank, lets the survivors
# finish, and exits with 128+SIGKILL = 137.
# Usage: peer_death_test.sh TAGWIRE_RUN PEER_DEATH
set -uo pipefail
run=$1
prog=$2
passes=0
failures=0
check() {  # check NAME CONDITION-STATUS
  if [[ $2 == 0 ]]; then passes=$((passes + 1)); else echo "FAIL: $1"; failures=$((failures + 1)); fi
}
start=$SECONDS
out=$(TAGWIRE_CANCEL_AGENT=0 "$run" -n 3 --grace 20 --timeout 120 "$prog" 2>&1)
status=$?
elapsed=$((SECONDS - start))
echo "$out"
check "launcher exits with the dead rank's status (137), got $status" $((status != 137))
[[ $out == *"rank 2 (pid "*"was killed by Killed"* ]]
check "launcher names the dead rank" $?
[[ $out == *"peer-death: rank 0 ok"* ]]
check "rank 0 saw every operation with rank 2 fail and kept working" $?
[[ $out == *"peer-death: rank 1 ok"* ]]
check "rank 1 saw its wildcard receive fail and kept working" $?
[[ $out != *"rank 0 (pid"* && $out != *"rank 1 (pid"* ]]
check "no survivor died or failed (sanitizer reports included)" $?
[[ $out != *"ranks still running"* ]]
check "survivors finished by themselves, before the grace period ended" $?
((elapsed < 20))
check "the whole job took ${elapsed} s (bound 20)" $?
echo "peer-death: $passes passed, $failures failed"
exit $((failures > 0))
