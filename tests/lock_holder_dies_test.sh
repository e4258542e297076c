#!/usr/bin/env bash
# A passive-target lock holder that dies (tests/mpi/lock_holder_dies.c,
# issue 31), shared and exclusive, 3 ranks: the survivors' lock requests
# end (MPI_ERR_PROC_FAILED where they wait for the dead holder), both say
# "ok", nothing hangs (--timeout), and the job's status is the victim's
# (SIGKILL: 137).
#   lock_holder_dies_test.sh TAGWIRE_RUN MPI_LOCK_HOLDER_DIES [TRANSPORTS]
# TRANSPORTS: "shm ucx-tcp" by default (also: verbs, ucx-rc, as in
# kill_random_test.sh); ci/rxe-tests runs verbs and ucx-rc.
set -uo pipefail
run=$1
prog=$2
transports=${3:-shm ucx-tcp}
source "$(dirname "$0")/check.sh"

for transport in $transports; do
  case $transport in
    shm) env=(TAGWIRE_TRANSPORT=shm) ;;
    ucx-tcp) env=(TAGWIRE_TRANSPORT=ucx UCX_TLS=tcp,self UCX_NET_DEVICES=lo) ;;
    verbs) env=(TAGWIRE_TRANSPORT=verbs TAGWIRE_DEVICE=rxe0) ;;
    ucx-rc) env=(TAGWIRE_TRANSPORT=ucx UCX_TLS=rc_verbs,ud_verbs,self UCX_NET_DEVICES=rxe0:1
                 UCX_UD_VERBS_ETH_DGID_CHECK=n) ;;
    *) echo "lock_holder_dies_test: unknown transport $transport" >&2; exit 2 ;;
  esac
  for mode in shared exclusive; do
    start=$SECONDS
    out=$(env "${env[@]}" "$run" -n 3 --grace 30 --timeout 120 "$prog" "$mode" 2>&1)
    rc=$?
    oks=$(grep -c '^lock-holder-dies: rank [01] ok' <<<"$out")
    check "a $mode lock holder dies ($transport): the victim's status" 137 $rc
    check "... both survivors ok ($transport, $mode)" 2 "$oks"
    if [[ $rc != 137 || $oks != 2 ]]; then
      grep -v 'UCX  \(ERROR\|WARN\)' <<<"$out" | tail -20
    else
      echo "ok: $transport $mode in $((SECONDS - start)) s"
    fi
  done
done
echo "lock-holder-dies: $passes passed, $failures failed"
((failures == 0))
