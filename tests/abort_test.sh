#!/usr/bin/env bash
# MPI_Abort under a launcher of others (mpirun, srun): the job's exit status
# is the code MPI_Abort was given, in each of five runs.
# Usage: abort_test.sh MPI_ABORT LAUNCHER [launcher arguments...]
set -uo pipefail
program=$1
shift
failures=0
for i in 1 2 3 4 5; do
  timeout 100 "$@" "$program" 7 >/tmp/abort-test-$$.log 2>&1
  status=$?
  if [[ $status != 7 ]]; then
    echo "FAIL: run $i: status $status, not 7"
    tail -20 /tmp/abort-test-$$.log
    failures=$((failures + 1))
  fi
done
rm -f /tmp/abort-test-$$.log
echo "abort: $((5 - failures)) passed, $failures failed"
exit $((failures > 0))
