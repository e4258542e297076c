#!/usr/bin/env bash
# A rank killed at a random moment of mixed traffic (tests/mpi/kill_random.c,
# issue 31): eager, rendezvous both ways, synchronous, cancelled sends and
# a collective, 4 ranks. For each transport and seed: every survivor's
# operations end (success or MPI_ERR_PROC_FAILED, live ranks' ones
# succeed), every survivor says "ok" and then exits 0 (MPI_Finalize
# included), nothing hangs (--timeout), and the job's status is the
# victim's (SIGKILL: 137).
#   kill_random_test.sh TAGWIRE_RUN MPI_KILL_RANDOM [TRANSPORTS] [SEEDS]
# TRANSPORTS: "shm" by default (also: verbs, ucx-rc, ucx-sm, ucx-tcp);
# SEEDS: how many (default 16; TAGWIRE_TEST_KILL_SEEDS overrides).
# ci/rxe-tests runs it over verbs and UCX rc_verbs on soft-RoCE.
#
# CI runs it over Tagwire's shared memory and UCX's TCP (tests/meson.build).
# Not over UCX's shared memory, where it fails for a reason inside UCX 1.13
# (docs/using-tagwire.md, "A rank that dies"): a rank killed while it
# writes into a survivor's UCX shared-memory FIFO, which every sender
# shares, leaves a slot the survivor waits on for ever (it then hears from
# nobody: 3 runs in 48 hung until the launcher's grace ended them).
# Tagwire's own shared memory gives each pair its own ring, so a dead
# writer stalls only its own. Over TCP, UCX itself used to abort a survivor
# that answered the dead rank's emulated READ or PUT (ucp_get_req_handler,
# ucp_put_handler); one-sided operations there are now our own messages
# (src/ucx/message_rma.h). KILL_RANDOM_RMA=1 (the environment) adds
# one-sided traffic to every round (CI sets it, and ci/rxe-tests runs
# both).
set -uo pipefail
run=$1
prog=$2
transports=${3:-shm}
seeds=${TAGWIRE_TEST_KILL_SEEDS:-${4:-16}}
source "$(dirname "$0")/check.sh"
source "$(dirname "$0")/transport_env.sh"

for transport in $transports; do
  transport_env "$transport" || { echo "kill_random_test: unknown transport $transport" >&2; exit 2; }
  for seed in $(seq 1 "$seeds"); do
    start=$SECONDS
    out=$(env "${env[@]}" "$run" -n 4 --grace 30 --timeout 300 "$prog" "$seed" 2>&1)
    rc=$?
    oks=$(grep -c '^kill-random: rank [0-9]* ok' <<<"$out")
    check "kill at a random moment ($transport, seed $seed): the victim's status" 137 $rc
    check "... every survivor ok ($transport, seed $seed)" 3 "$oks"
    failed=$(ranks_failed "$out")
    check "... no survivor died or failed after it ($transport, seed $seed)" 1 "$failed"
    if [[ $rc != 137 || $oks != 3 || $failed != 1 ]]; then
      grep -v 'UCX  \(ERROR\|WARN\)' <<<"$out" | tail -25
    else
      echo "ok: $transport seed $seed in $((SECONDS - start)) s: $(grep -o 'victim [0-9]* after [0-9]* us' <<<"$out" | head -1)"
    fi
  done
done
echo "kill-random: $passes passed, $failures failed"
((failures == 0))
