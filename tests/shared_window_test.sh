#!/usr/bin/env bash
# MPI_Win_allocate_shared over ranks that cannot share memory: rank 1 runs
# in a PID namespace of its own (unshare), which host_identity() counts as
# another host, and the program (tests/mpi/shared_window.c, "other-host")
# checks that every rank gets MPI_ERR_RMA_SHARED rather than a window some
# rank cannot reach. Needs unshare(1) with the right to make a PID
# namespace (root, as in CI); skipped, saying so, without it.
# Usage: shared_window_test.sh TAGWIRE_RUN SHARED_WINDOW
set -uo pipefail
run=$1
prog=$2
if ! unshare --pid --fork true 2>/dev/null; then
  echo "skipped: unshare --pid is not allowed here (needs root or user namespaces)"
  exit 77
fi
# shellcheck disable=SC2016 # expanded by each rank's shell
exec "$run" -n 3 --timeout 100 sh -c \
  'if [ "$TAGWIRE_BOOT_RANK" = 1 ]; then exec unshare --pid --fork "$0" other-host 1; else exec "$0" other-host 1; fi' \
  "$prog"
