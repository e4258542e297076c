#!/usr/bin/env bash
# A rank killed while the others wait for it in a way MPI lets them notice
# (issue 31): each survivor's calls must end (MPI_ERR_PROC_FAILED where
# they wait for the dead rank or for a live one that will never come),
# every survivor says "PREFIX: rank R ok", nothing hangs (--timeout), and
# the job's status is the victim's (SIGKILL: 137).
#   survivors_test.sh TAGWIRE_RUN PROGRAM RANKS "ARGUMENT SETS" [TRANSPORTS]
# PROGRAM prints "PREFIX: rank R ok", PREFIX being its name without
# "mpi_" and with "-" for "_" (mpi_lock_holder_dies: lock-holder-dies).
# ARGUMENT SETS: one run per word ("-" for none). TRANSPORTS: "shm ucx-tcp"
# by default (the names tests/transport_env.sh knows; ci/rxe-tests runs
# verbs and ucx-rc).
set -uo pipefail
run=$1
prog=$2
ranks=$3
argument_sets=$4
transports=${5:-shm ucx-tcp}
prefix=$(basename "$prog")
prefix=${prefix#mpi_}
prefix=${prefix//_/-}
source "$(dirname "$0")/check.sh"
source "$(dirname "$0")/transport_env.sh"

for transport in $transports; do
  transport_env "$transport" || { echo "survivors_test: unknown transport $transport" >&2; exit 2; }
  for args in $argument_sets; do
    [[ $args == - ]] && args=""
    start=$SECONDS
    # shellcheck disable=SC2086 # an argument set is words
    out=$(env "${env[@]}" "$run" -n "$ranks" --grace 30 --timeout 120 "$prog" $args 2>&1)
    rc=$?
    oks=$(grep -c "^$prefix: rank [0-9]* ok" <<<"$out")
    check "$prefix${args:+ $args} ($transport): the victim's status" 137 $rc
    check "... every survivor ok ($prefix${args:+ $args}, $transport)" $((ranks - 1)) "$oks"
    if [[ $rc != 137 || $oks != $((ranks - 1)) ]]; then
      grep -v 'UCX  \(ERROR\|WARN\)' <<<"$out" | tail -20
    else
      echo "ok: $prefix${args:+ $args} over $transport in $((SECONDS - start)) s"
    fi
  done
done
echo "$(basename "$0"): $passes passed, $failures failed"
((failures == 0))
