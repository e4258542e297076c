#!/usr/bin/env bash
# tagwire-run's contract, checked from outside:
#   exit status of the first failing rank, 124 on timeout, 130 on SIGINT,
#   no rank outlives the launcher, rank prefixes with --tag-output, and a
#   process without the job key is refused by the bootstrap.
#   and an MPI error under MPI_ERRORS_ARE_FATAL stops the job loudly.
#   MPI_Abort's code is the job's status, every time.
#   A deadlocked job says what each rank waits for: on --timeout, and on
#   SIGUSR1 at any time.
#   A rank that leaves without MPI_Finalize, or before MPI_Init, ends the
#   job at once with its status; no barrier completes without it.
# Usage: launcher_test.sh TAGWIRE_RUN WIRE_BENCH MPI_FATAL_ERROR MPI_ABORT MPI_DEADLOCK
#        MPI_NO_FINALIZE MPI_PEER_KILL SURVIVORS_BARRIER
set -uo pipefail
run=$1
bench=$2
fatal=$3
abort=$4
deadlock=$5
no_finalize=$6
peer_kill=$7
survivors_barrier=$8
source "$(dirname "$0")/check.sh"

"$run" -n 3 -- sh -c 'exit 0'; check "all ranks exit 0" 0 $?
"$run" -n 3 -- sh -c '[ "$TAGWIRE_BOOT_RANK" = 2 ] && exit 7; sleep 30'; check "first failure's status" 7 $?
"$run" -n 2 -- sh -c 'kill -SEGV $$'; check "signal death is 128+signal" 139 $?
"$run" -n 2 --timeout 0.5 -- sleep 30; check "timeout" 124 $?
MPIEXEC_TIMEOUT=0.5 "$run" -n 2 -- sleep 30 2>/dev/null; check "MPIEXEC_TIMEOUT" 124 $?
MPIEXEC_TIMEOUT=0.5 "$run" -n 1 --timeout 30 -- sleep 1; check "--timeout over MPIEXEC_TIMEOUT" 0 $?
MPIEXEC_TIMEOUT=soon "$run" -n 1 -- true 2>/dev/null; check "MPIEXEC_TIMEOUT not seconds" 2 $?
"$run" -n 1 -- /nonexistent/program 2>/dev/null; check "missing program" 127 $?
"$run" 2>/dev/null; check "usage error" 2 $?

out=$("$run" -n 2 --tag-output -- sh -c 'echo "hi $TAGWIRE_BOOT_RANK of $TAGWIRE_BOOT_SIZE"' | sort)
check "tagged output" "[0] hi 0 of 2
[1] hi 1 of 2" "$out"

# A line far longer than any buffer: passed through in linear time and
# bounded memory (it was held whole and searched from its start on every
# read: 300 MB took 528 MB and 73 s).
peak_kib=$( { /usr/bin/time -f '%M' "$run" -n 1 --tag-output -- \
  sh -c 'head -c 100000000 /dev/zero | tr "\0" x; echo; echo after' | wc -c >/tmp/tw-longline.$$; } 2>&1)
check "a 100 MB line: every byte, one prefix per line" 100000015 "$(cat /tmp/tw-longline.$$)"
rm -f /tmp/tw-longline.$$
check "a 100 MB line: the launcher stays under 32 MB" yes "$( ((peak_kib < 32768)) && echo yes || echo "no ($peak_kib KiB)")"

marker="tagwire-launcher-test-$$"
"$run" -n 3 -- bash -c "exec -a $marker sleep 60" &
launcher=$!
sleep 1
check "ranks running" 3 "$(pgrep -fc "^$marker" || true)"
kill -INT $launcher
wait $launcher
check "SIGINT status" 130 $?
sleep 0.5
check "no orphans after SIGINT" 0 "$(pgrep -fc "^$marker" || true)"

"$run" -n 2 -- bash -c "exec -a $marker sleep 60" &
launcher=$!
sleep 1
kill -KILL $launcher
wait $launcher 2>/dev/null
sleep 0.5
check "no orphans after the launcher is killed" 0 "$(pgrep -fc "^$marker" || true)"

# A rank that presents another job's key is refused and cannot start.
err=$("$run" -n 1 -- env TAGWIRE_BOOT_KEY=00000000000000000000000000000000 "$bench" 2>&1)
status=$?
check "wrong job key fails the rank" 1 $status
[[ $err == *"refused a bootstrap connection without this job's key"* ]]
check "launcher says why" 0 $?
# Two processes with the key that both say they are rank 0: the second is
# refused for what it is (it used to be told it had no key).
err=$("$run" -n 2 --timeout 20 -- sh -c 'TAGWIRE_BOOT_RANK=0 exec "$0"' "$bench" 2>&1)
check "a rank that joins twice is refused as such" 1 \
  "$(grep -c "refused a bootstrap connection for a rank that has joined already" <<<"$err")"

# Six connections that stall mid-frame beside a job's bootstrap cost the job
# nothing: the launcher reads every connection as its bytes come (it used
# to wait up to 5 s for each stalled frame in turn: 31 s here).
start=$(date +%s%N)
"$run" -n 2 --timeout 60 -- sh -c '
  if [ "$TAGWIRE_BOOT_RANK" = 0 ]; then
    python3 -c "
import os, socket, time
held = []
for _ in range(6):
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ[\"TAGWIRE_BOOT_SOCKET\"])
    s.send(b\"\\x10\\x00\")  # half a frame length: the rest never comes
    held.append(s)
time.sleep(40)
" >/dev/null 2>&1 &
    sleep 0.3
  fi
  exec "$0" --max 64' "$bench" >/dev/null 2>&1
check "a job beside six stalled bootstrap connections runs" 0 $?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
check "six stalled bootstrap connections delay nobody (under 10 s)" yes \
  "$( ((elapsed_ms < 10000)) && echo yes || echo "no: $elapsed_ms ms")"
pkill -f 'socket.AF_UNIX' 2>/dev/null

# MPI_ERRORS_ARE_FATAL: exit status is the error class (MPI_ERR_RANK = 6),
# the message says which call and why, and earlier output is kept.
out=$(UCX_TLS=sm,self "$run" -n 2 -- "$fatal" 2>&1)
check "fatal MPI error stops the job with its class" 6 $?
[[ $out == *"MPI_Send failed: invalid-rank: destination rank 99"* ]]
check "fatal error message names the call and the reason" 0 $?
[[ $out == *"before the error on rank 0"* && $out == *"before the error on rank 1"* ]]
check "output printed before the error is not lost" 0 $?

# A setting of a transport the job does not run on acts on nothing: the
# ranks refuse to start and say which (without verbs in the build the name
# is unknown, refused too). The compiler wrapper's TAGWIRE_CC is not ours.
out=$(env TAGWIRE_TRANSPORT=shm TAGWIRE_TM=on "$run" -n 2 -- "$fatal" 2>&1)
status=$?
check "another transport's setting refuses the job" 1 $((status != 0))
[[ $out == *"TAGWIRE_TM is a setting of the verbs transport, and this job runs on shm"* ||
  $out == *"TAGWIRE_TM is not a Tagwire setting"* ]]
check "the refusal names the setting and the transport" 0 $?
[[ $out != *"before the error on rank"* ]]
check "nothing ran under the refused setting" 0 $?
# A UCX device that is not there fails MPI_Init, naming it and what UCX
# has (it used to start, then fail the first message as "rank -1").
out=$(env TAGWIRE_TRANSPORT=ucx UCX_TLS=tcp,self UCX_NET_DEVICES=lo,bogus0 "$run" -n 2 -- "$fatal" 2>&1)
status=$?
check "a UCX device that is not there refuses the job" 1 $((status != 0))
[[ $out == *"MPI_Init failed: config: UCX_NET_DEVICES=lo,bogus0 names bogus0, which UCX does not have on this host; it has: "*lo* ]]
check "the refusal names the missing device and the ones there are" 0 $?
[[ $out != *"before the error on rank"* ]]
check "nothing ran on a missing device" 0 $?
# Ranks that disagree on connecting everyone in MPI_Init refuse the job
# (the eager start-up ends in a barrier every rank must enter).
out=$(env TAGWIRE_TRANSPORT=ucx UCX_TLS=sm,self "$run" -n 2 -- \
  sh -c '[ "$TAGWIRE_BOOT_RANK" = 1 ] && export TAGWIRE_UCX_CONNECT=lazy; exec "$0"' "$fatal" 2>&1)
check "TAGWIRE_UCX_CONNECT differing between ranks refuses the job" 1 $(($? != 0))
[[ $out == *"rank 0 connects to every rank in MPI_Init and rank 1 on first use (TAGWIRE_UCX_CONNECT must agree)"* ]]
check "the refusal names both ranks and the setting" 0 $?
# A job over UCX's shared memory says nothing about UCX's transport
# choice: its refusal of the peer error mode, which the first endpoint
# probes, used to print one "UCX  ERROR" line per rank on stdout.
out=$(TAGWIRE_TRANSPORT=ucx UCX_TLS=sm,self "$run" -n 3 -- "$bench" --max 8 2>&1)
check "a job over UCX sm runs" 0 $?
check "a job over UCX sm prints no UCX error" 0 "$(grep -c 'UCX  *ERROR' <<<"$out")"
out=$(env TAGWIRE_CC=gcc UCX_TLS=sm,self "$run" -n 2 -- "$fatal" 2>&1)
[[ $out == *"before the error on rank 0"* ]]
check "TAGWIRE_CC is left to the compiler wrapper" 0 $?

# The habits of mpirun users: -np, --oversubscribe, -x, --version; --host
# refused in one line; standard input for rank 0 only.
out=$(printf 'line one\n' | FROM_HERE=here "$run" -np 2 --oversubscribe -x SET_BY_X=given -x FROM_HERE -- \
  sh -c 'read l || l=EOF; echo "$TAGWIRE_BOOT_RANK $SET_BY_X $FROM_HERE $l"' | sort)
check "-np, --oversubscribe and -x; stdin to rank 0 only" "0 given here line one
1 given here EOF" "$out"
out=$("$run" --version); check "--version" 0 $?
[[ $out =~ ^tagwire-run\ \(Tagwire\)\ [0-9]+\.[0-9]+ ]]; check "--version names the version" 0 $?
out=$("$run" --host a,b -n 2 true 2>&1); check "--host refused" 2 $?
check "--host refused in one line that names mpirun and srun" 1 "$(grep -c 'mpirun.*srun' <<<"$out")"
out=$("$run" -n 2 --no-such-option true 2>&1); check "an unknown option" 2 $?
check "an unknown option gets one line, not the usage" 1 "$(wc -l <<<"$out")"

# MPI_Abort(7) on rank 1 while the others wait on it: status 7 in every
# run (the launcher used to see the socket close first, and said 1).
for i in 1 2 3 4 5; do
  "$run" -n 4 --timeout 60 "$abort" >/dev/null 2>&1; check "MPI_Abort's code, run $i" 7 $?
done
"$run" -n 2 --timeout 60 "$abort" 0 >/dev/null 2>&1; check "MPI_Abort with 0 still fails the job" 1 $?

# Leaving without MPI_Finalize: rank 1 returns from main (or exits 3)
# while the others are in a barrier. The job ends with its status (1 for a
# return of 0), at once; the barrier never completes; no exit handler runs
# a collective (it used to: the barrier completed and the job hung).
for transport in shm ucx; do
  start=$SECONDS
  out=$(TAGWIRE_TRANSPORT=$transport UCX_TLS=sm,self "$run" -n 3 --timeout 60 "$no_finalize" 2>&1)
  check "return without MPI_Finalize ($transport): status 1" 1 $?
  check "... the barrier never completed ($transport)" 0 "$(grep -c 'passed a barrier' <<<"$out")"
  check "... rank 1 says why ($transport)" 1 "$(grep -c '\[tagwire 1\] exited with status 0 without calling MPI_Finalize' <<<"$out")"
  check "... the launcher names rank 1 ($transport)" 1 "$(grep -c 'tagwire-run: rank 1 ended the job with status 1' <<<"$out")"
  check "... within 10 s ($transport)" 1 "$(((SECONDS - start) < 10))"
done
out=$("$run" -n 3 --timeout 60 "$no_finalize" 3 2>&1)
check "exit(3) without MPI_Finalize: status 3" 3 $?
check "... the barrier never completed" 0 "$(grep -c 'passed a barrier' <<<"$out")"
# _exit(0): no exit handler runs, so the launcher must see it (the rank
# never said MPI_Finalize was done).
start=$SECONDS
out=$("$run" -n 3 --timeout 60 "$no_finalize" _exit 2>&1)
check "_exit(0) without MPI_Finalize: status 1" 1 $?
check "... the launcher says which rank and why" 1 \
  "$(grep -c 'rank 1 (pid [0-9]*) exited (status 0) without MPI_Finalize' <<<"$out")"
check "... the barrier never completed (_exit)" 0 "$(grep -c 'passed a barrier' <<<"$out")"
check "... within 10 s (_exit)" 1 "$(((SECONDS - start) < 10))"
# Leaving before MPI_Init (status 0): the others would wait in MPI_Init.
start=$SECONDS
out=$("$run" -n 3 --timeout 60 sh -c '[ "$TAGWIRE_BOOT_RANK" = 1 ] && exit 0; exec "$0"' "$no_finalize" 2>&1)
check "exit before MPI_Init: status 1" 1 $?
check "... the launcher says which rank" 1 "$(grep -c 'rank 1 exited (status 0) before MPI_Init' <<<"$out")"
check "... within 10 s" 1 "$(((SECONDS - start) < 10))"

# A rank killed mid-transfer: a rendezvous read from it, eager sends queued
# to it, a rendezvous send to it (0, 1); or while the others wait for it in
# MPI_Finalize (2). Every survivor's operation returns (UCX never completes
# operations to a dead peer: the engine completes them itself), nobody
# hangs in MPI_Finalize, and the status is the dead rank's, also when the
# survivors saw the death (UCX finds the rank's memory gone) and entered
# the launcher's exchange before the launcher reaped it.
# Over UCX's TCP too: UCX 1.13 aborted a survivor that first connected to
# the rank as it died (2 runs in 450 at moment 0), until every endpoint was
# made in MPI_Init (TAGWIRE_UCX_CONNECT=auto; docs/using-tagwire.md).
for transport in shm ucx ucx-tcp; do
  lanes=(UCX_TLS=sm,self)
  [ $transport = ucx-tcp ] && lanes=(UCX_TLS=tcp,self UCX_NET_DEVICES=lo)
  for when in 0 1 2; do
    start=$SECONDS
    out=$(env TAGWIRE_TRANSPORT=${transport%-tcp} "${lanes[@]}" "$run" -n 4 --grace 30 --timeout 60 "$peer_kill" $when 2>&1)
    check "rank killed mid-transfer ($transport, $when): the dead rank's status" 137 $?
    check "... every survivor's operation failed in time ($transport, $when)" 3 "$(grep -c 'peer-kill: rank [013] ok' <<<"$out")"
    check "... no survivor died or failed after it ($transport, $when)" 1 "$(ranks_failed "$out")"
    check "... the job ended within 20 s ($transport, $when)" 1 "$(((SECONDS - start) < 20))"
    (((SECONDS - start) < 20)) || echo "$out" | grep -v 'UCX  \(ERROR\|WARN\)' | tail -30
    # (What each survivor said, when one did not say ok.)
    [ "$(grep -c 'peer-kill: rank [013] ok' <<<"$out")" = 3 ] || grep -a 'peer-kill\|tagwire-run' <<<"$out"
  done
done

# After a death the launcher's barrier (MPI_Finalize's last step) still
# waits for every survivor, and says the exchange was incomplete.
out=$("$run" -n 4 --grace 30 --timeout 10 "$survivors_barrier" 2>&1)
check "survivors' barrier: the dead rank's status" 137 $?
check "... every barrier was answered (no timeout)" 0 "$(grep -c 'tagwire-run: timeout after' <<<"$out")"
check "... every survivor came out peer-failed" 3 "$(grep -c 'survivors-barrier: rank [012] ok' <<<"$out")"
entered=$(sed -n 's/^survivors-barrier: rank 1 enters at //p' <<<"$out")
left=$(sed -n 's/^survivors-barrier: rank 0 leaves at //p' <<<"$out")
check "... rank 0 left no sooner than rank 1 entered ($left >= $entered)" 1 \
  "$(awk -v l="${left:-0}" -v e="${entered:-1}" 'BEGIN { print (l >= e) ? 1 : 0 }')"
[ -n "$entered" ] && [ -n "$left" ] || echo "$out"

# A deadlock: --timeout makes every rank list its pending operations first.
for transport in shm ucx; do
  out=$(TAGWIRE_TRANSPORT=$transport UCX_TLS=sm,self "$run" -n 2 --timeout 2 "$deadlock" 2>&1)
  check "deadlock under --timeout ($transport): 124" 124 $?
  check "rank 0 lists its two operations ($transport)" 1 "$(grep -c '\[tagwire 0 .*\] warn pending: 2 operations pending:' <<<"$out")"
  check "the receive: peer, tag, bytes, age ($transport)" 1 \
    "$(grep -cE '^  receive from rank 1 \(world 1\), tag 42, context [0-9]+, 16 B, for [0-9.]+ s: posted' <<<"$out")"
  check "the synchronous send waits for its match ($transport)" 1 \
    "$(grep -cE '^  ssend to rank 1 \(world 1\), tag 7, .*4 B, .*waiting for the receiver to match it' <<<"$out")"
  check "rank 1's blocking receive ($transport)" 1 "$(grep -cE '^  blocking receive from rank 0, tag 99' <<<"$out")"
done
# SIGUSR1 at any time, the job running on.
report=$(mktemp)
TAGWIRE_TRANSPORT=shm "$run" -n 2 --timeout 60 "$deadlock" >"$report" 2>&1 &
launcher=$!
sleep 1.5
pkill -USR1 -f "^$deadlock\$" || true
sleep 1
check "SIGUSR1: both ranks report" 2 "$(grep -c 'warn pending: [0-9]* operations\? pending' "$report")"
kill -0 $launcher 2>/dev/null; check "SIGUSR1: the job runs on" 0 $?
kill -INT $launcher; wait $launcher 2>/dev/null
rm -f "$report"

echo "launcher: $passes passed, $failures failed"
exit $((failures > 0))
